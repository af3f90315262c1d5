/**
 * @file fs_nodes.c
 * The node table of a mount: node ids and generations, the (parent, name)
 * hash, lookup counts and forget, moving nodes between names, folder
 * listings (struct dirsnap), and the small helpers the other parts share
 * (paths, hashes, clocks, logging). The classification of source objects
 * through the view cache is fs_entry.c.
 */
#define _GNU_SOURCE
#include "fs_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "source.h"
#include "../common/mem.h"

void fsi_log(lfs_fs *fs, int level, const char *fmt, ...)
{
	if (level >= LFS_LOG_DEBUG && fs && !fs->o.debug)
		return;
	char raw[1024], buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	lfs_errlog_escape_to(buf, sizeof(buf), raw); /* as /.legacyfs/errors: one line, no escapes */
	if (fs && fs->o.log)
		fs->o.log(level, buf);
	else
		fprintf(stderr, "legacyfs: %s\n", buf);
}

int64_t fsi_ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static uint64_t fnv64(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * st_ino of a generated file/folder: hash of (model file path, view path).
 * Not of the model's inode: a save through the mount replaces the model file
 * (new inode) and the views must keep their numbers.
 */
uint64_t fsi_view_ino(const struct node *model, const char *vpath)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	h = fnv64(h, model->rel, strlen(model->rel) + 1);
	h = fnv64(h, vpath, strlen(vpath));
	h |= VINO_BIT;
	while (h == CTL_INO || h == ERRORS_INO || h == STATUS_INO || h == RESOURCES_INO)
		h ^= 8;
	return h;
}

/*
 * st_ino of node @p n (fs->mu held: model_of() walks parents). A source
 * node (and the root, /.legacyfs) keeps the number it was made with; a
 * scratch file shows its object's (0 while it has none: a kind change under
 * way); a generated file or folder (and errors.txt) is fsi_view_ino() of its
 * model folder and view path, worked out when asked (not stored: struct node).
 */
uint64_t fsi_node_sino(struct node *n)
{
	if (node_has_src(n))
		return n->sino;
	if (n->kind == K_SCRATCH)
		return n->sobj ? n->sobj->sino : 0;
	return fsi_view_ino(model_of(n), n->rel);
}

/* parent_rel + "/" + name (or name under the root). NULL: too long / no memory. */
char *fsi_join_rel(const char *parent_rel, const char *name)
{
	size_t pl = strcmp(parent_rel, ".") == 0 ? 0 : strlen(parent_rel);
	size_t nl = strlen(name);
	if (pl + 1 + nl + 1 > PATH_MAX)
		return NULL;
	char *s = malloc(pl + 1 + nl + 1);
	if (!s)
		return NULL;
	if (pl) {
		memcpy(s, parent_rel, pl);
		s[pl] = '/';
		memcpy(s + pl + 1, name, nl + 1);
	} else {
		memcpy(s, name, nl + 1);
	}
	return s;
}

/* View path of a child of a model/view folder. */
char *fsi_join_view(const struct node *parent, const char *name)
{
	if (parent->kind == K_MODEL)
		return strdup(name);
	size_t pl = strlen(parent->rel), nl = strlen(name);
	char *s = malloc(pl + 1 + nl + 1);
	if (!s)
		return NULL;
	memcpy(s, parent->rel, pl);
	s[pl] = '/';
	memcpy(s + pl + 1, name, nl + 1);
	return s;
}

bool fsi_is_dot(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

static size_t name_hash(const struct node *parent, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	uintptr_t p = (uintptr_t)parent;
	h = fnv64(h, &p, sizeof(p));
	h = fnv64(h, name, strlen(name));
	return (size_t)h;
}

static struct node *get_node(lfs_fs *fs, uint64_t id)
{
	if (id == 0 || id >= fs->nslots)
		return NULL;
	return fs->slots[id];
}

struct node *fsi_find_child(lfs_fs *fs, struct node *parent, const char *name)
{
	if (!fs->nh_size)
		return NULL;
	for (struct node *n = fs->nh[name_hash(parent, name) & (fs->nh_size - 1)]; n; n = n->hnext)
		if (n->parent == parent && strcmp(node_name(n), name) == 0)
			return n;
	return NULL;
}

void fsi_nh_remove(lfs_fs *fs, struct node *n)
{
	if (!n->hashed)
		return;
	struct node **pp = &fs->nh[name_hash(n->parent, node_name(n)) & (fs->nh_size - 1)];
	while (*pp && *pp != n)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = n->hnext;
	n->hnext = NULL;
	n->hashed = false;
	fs->nh_count--;
}

static int nh_insert(lfs_fs *fs, struct node *n)
{
	/* Up to two nodes per bucket on average: half the table of one per
	 * bucket, chains still short (the table is a share of every node). */
	if (fs->nh_count + 1 > 2 * fs->nh_size) {
		/* Double the table (a power of two) and rehash in place: a chain
		 * of bucket i moves to i or i + old size only. */
		size_t old = fs->nh_size, ns = old;
		if (!lfs_grow((void **)&fs->nh, &ns, old ? old * 2 : 1024, sizeof(*fs->nh)))
			return ENOMEM;
		memset(fs->nh + old, 0, (ns - old) * sizeof(*fs->nh));
		for (size_t i = 0; i < old; i++) {
			struct node *m = fs->nh[i];
			fs->nh[i] = NULL;
			while (m) {
				struct node *nx = m->hnext;
				size_t h = name_hash(m->parent, node_name(m)) & (ns - 1);
				m->hnext = fs->nh[h];
				fs->nh[h] = m;
				m = nx;
			}
		}
		fs->nh_size = ns;
	}
	size_t h = name_hash(n->parent, node_name(n)) & (fs->nh_size - 1);
	n->hnext = fs->nh[h];
	fs->nh[h] = n;
	n->hashed = true;
	fs->nh_count++;
	return 0;
}

void fsi_snap_unref(struct dirsnap *s)
{
	if (!s || --s->refs > 0)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->ents[i].name);
	free(s->ents);
	free(s);
}

/*
 * A free node id (fs->mu held): one given back, else the next never used
 * (the slot table doubles when full). Afterwards free_ids has room to give
 * one id back without allocating (lfs_fs_new() does). 0 or ENOMEM.
 */
int fsi_alloc_id(lfs_fs *fs, uint64_t *id)
{
	if (fs->nfree) {
		*id = fs->free_ids[--fs->nfree];
		return 0;
	}
	if (fs->free_cap == 0 && !lfs_grow((void **)&fs->free_ids, &fs->free_cap, 1, sizeof(*fs->free_ids)))
		return ENOMEM;
	if (fs->next_id < FIRST_FREE_ID)
		fs->next_id = FIRST_FREE_ID;
	if (fs->next_id >= fs->nslots) {
		/* ids are 32-bit (struct node): 2^31 slots would take 16 GiB of table alone */
		if (fs->nslots > UINT32_MAX / 2)
			return ENOMEM;
		size_t ns = fs->nslots ? fs->nslots * 2 : 1024;
		struct node **s = realloc(fs->slots, ns * sizeof(*s));
		if (!s)
			return ENOMEM;
		fs->slots = s;
		for (size_t i = fs->nslots; i < ns; i++)
			s[i] = NULL;
		fs->nslots = ns;
	}
	*id = fs->next_id++;
	return 0;
}

/* Is @p name, in a folder of kind @p dir, the control folder (/.legacyfs, shadowing SOURCE)? */
bool fsi_is_ctl_name(enum nkind dir, const char *name)
{
	return dir == K_ROOT && strcmp(name, LFS_FS_CTL_NAME) == 0;
}

/* Take @p n out of its parent's list of children (n->parent stays). */
static void sib_unlink(struct node *n)
{
	if (n->prev_sib)
		n->prev_sib->next_sib = n->next_sib;
	else
		n->parent->first_child = n->next_sib;
	if (n->next_sib)
		n->next_sib->prev_sib = n->prev_sib;
	n->prev_sib = n->next_sib = NULL;
}

/* Make @p n the first child of @p parent. */
static void sib_link(struct node *n, struct node *parent)
{
	n->prev_sib = NULL;
	n->next_sib = parent->first_child;
	if (parent->first_child)
		parent->first_child->prev_sib = n;
	parent->first_child = n;
	n->parent = parent;
}

/*
 * Is @p name the last component of path @p rel ("a/b/name" or "name")? The
 * root ("" in ".") and the control nodes (no path) are named by their kind.
 */
static bool name_is_tail(enum nkind kind, const char *rel, const char *name)
{
	if (kind == K_ROOT || kind == K_CTLDIR || kind == K_CTLERR)
		return true;
	if (!rel)
		return false;
	size_t rl = strlen(rel), nl = strlen(name);
	if (nl == 0 || nl > rl || memcmp(rel + rl - nl, name, nl) != 0)
		return false;
	return rl == nl || rel[rl - nl - 1] == '/';
}

/* Free node @p n's path (when it is its own allocation). */
void fsi_node_free_path(struct node *n)
{
	if (!n->rel_inline)
		free(n->rel);
	n->rel = NULL;
	n->rel_inline = false;
}

/*
 * Give @p n the path @p rel (owned; may be NULL for the control nodes), whose
 * last component is @p name, the node's name (node_name()) (fs->mu held). The
 * old path is retired (fsi_retire: freed once the requests that may hold it
 * have ended). 0, or EINVAL when @p name is not rel's last component (then
 * @p rel is freed and @p n keeps its old path).
 */
int fsi_node_set_path(lfs_fs *fs, struct node *n, const char *name, char *rel)
{
	if (!name_is_tail(n->kind, rel, name)) {
		free(rel);
		return EINVAL;
	}
	/* Requests may be reading the old path without fs->mu: retired, freed
	 * when they have ended (fsi_retire). An inline path is part of the
	 * node: it stays until the node is freed. */
	if (!n->rel_inline)
		fsi_retire(fs, n->rel);
	n->rel = rel;
	n->rel_inline = false;
	return 0;
}

/*
 * Make a node in slot @p id (or a fresh id when 0) and link it under @p parent
 * (fs->mu held). @p rel_owned: its path (owned, freed here on failure; may be
 * NULL); a model-side node copies it inline (struct node) and frees it.
 */
struct node *fsi_node_new(lfs_fs *fs, uint64_t id, enum nkind kind, struct node *parent,
		      const char *name, char *rel_owned)
{
	/* model-side nodes: the common part and the path, one allocation (struct node) */
	bool src = !fsi_kind_ops(kind)->in_model;
	bool in = !src && rel_owned;
	struct node *n = calloc(1, src ? sizeof(struct node)
				       : NODE_MODEL_SIZE + (in ? strlen(rel_owned) + 1 : 0));
	if (!n) {
		free(rel_owned);
		return NULL;
	}
	n->kind = kind;
	if (src) {
		n->wd = -1;
		n->held_fd = -1;
	}
	int pr;
	if (in && name_is_tail(kind, rel_owned, name)) {
		/* the path inline, after the common part */
		char *ip = node_inline_path(n);
		memcpy(ip, rel_owned, strlen(rel_owned) + 1);
		free(rel_owned);
		n->rel = ip;
		n->rel_inline = true;
		pr = 0;
	} else {
		pr = fsi_node_set_path(fs, n, name, rel_owned);
	}
	if (pr != 0 || (!id && fsi_alloc_id(fs, &id) != 0)) {
		fsi_node_free_path(n);
		free(n);
		return NULL;
	}
	n->id = (uint32_t)id;
	n->gen = ++fs->last_gen;
	n->parent = parent;
	fs->slots[id] = n;
	fs->nnodes++;
	if (parent) {
		sib_link(n, parent);
		if (nh_insert(fs, n) != 0) {
			/* Unfindable by name but fully linked: freed by its forget. */
			fsi_log(fs, LFS_LOG_WARNING, "out of memory growing the name table");
		}
	}
	return n;
}

/*
 * Free node @p n, taken out of every table already (fs->mu held, or the
 * mount being freed): its watch, listing and held fd (source part), its
 * scratch object reference, its path and name.
 */
void fsi_node_free(lfs_fs *fs, struct node *n)
{
	if (node_has_src(n)) {
		if (n->wd >= 0) {
			fsi_wh_remove(fs, n);
			inotify_rm_watch(fs->ifd, n->wd);
			fs->nwatches--;
		}
		fsi_snap_unref(n->snap);
		if (n->held_fd >= 0)
			close(n->held_fd);
	}
	if (n->kind == K_SCRATCH && n->sobj)
		fsi_sobj_unref(fs, n->sobj);
	fsi_node_free_path(n);
	free(n);
}

static bool pinned(const struct node *n)
{
	return n->id < FIRST_FREE_ID;
}

/* Free @p n and then its ancestors while nothing references them. */
static void maybe_free(lfs_fs *fs, struct node *n)
{
	while (n && !pinned(n) && n->nlookup == 0 && !node_first_child(n)) {
		struct node *p = n->parent;
		fsi_nh_remove(fs, n);
		if (p)
			sib_unlink(n);
		fs->slots[n->id] = NULL;
		/* The list of free ids grows as ids come back (it holds the most
		 * ever free at once, not one entry per slot); out of memory, the id
		 * is not reused (its slot stays NULL). */
		if (fs->nfree < fs->free_cap ||
		    lfs_grow((void **)&fs->free_ids, &fs->free_cap, fs->nfree + 1, sizeof(*fs->free_ids)))
			fs->free_ids[fs->nfree++] = n->id;
		fs->nnodes--;
		fsi_node_free(fs, n);
		n = p;
	}
}

/*
 * A rename of a SOURCE name through the mount: the rename in SOURCE, then
 * (under fs->mu) the nodes' new paths. Under -o mt a request on a node
 * below the renamed name can stat the old path in between and find nothing;
 * fsi_classify_node() then waits for the rename to end and looks again.
 */
void fsi_rename_begin(lfs_fs *fs)
{
	fs_lock(fs);
	fs->rename_seq++;
	fs->renames_running++;
	fs_unlock(fs);
}

void fsi_rename_end(lfs_fs *fs)
{
	fs_lock(fs);
	fs->rename_seq++;
	fs->renames_running--;
	pthread_cond_broadcast(&fs->renamed);
	fs_unlock(fs);
}

/* Node @p n's current source path (malloc'd, NULL = ENOMEM) and the rename count it goes with. */
static char *rel_now(lfs_fs *fs, const struct node *n, uint64_t *seq)
{
	fs_lock(fs);
	*seq = fs->rename_seq;
	char *rel = strdup(n->rel);
	fs_unlock(fs);
	return rel;
}

/* After an ENOENT at a path taken with rel_now(): wait for running renames; did one run since @p seq? */
static bool renamed_since(lfs_fs *fs, uint64_t seq)
{
	fs_lock(fs);
	while (fs->renames_running)
		pthread_cond_wait(&fs->renamed, &fs->mu);
	bool raced = fs->rename_seq != seq;
	fs_unlock(fs);
	return raced;
}

/*
 * fsi_classify() of node @p n's current source path (copied under fs->mu:
 * a rename may change it meanwhile). When the path is gone (ENOENT) because
 * a rename through the mount ran since, the node's new path is classified
 * (at most a few times).
 */
int fsi_classify_node(lfs_fs *fs, const struct node *n, struct srcinfo *si)
{
	int r = ENOENT;
	uint64_t seq;
	for (int tries = 0; tries < 4; tries++) {
		char *rel = rel_now(fs, n, &seq);
		if (!rel)
			return ENOMEM;
		r = fsi_classify(fs, rel, si);
		free(rel);
		if (r != ENOENT || !renamed_since(fs, seq))
			break;
	}
	return r;
}

/*
 * openat(@p flags) of node @p n's current source path, looked at again when
 * a rename through the mount moved it meanwhile (as fsi_classify_node()).
 * Returns the fd, or -errno.
 */
int fsi_openat_node(lfs_fs *fs, const struct node *n, int flags)
{
	int r = -ENOENT;
	uint64_t seq;
	for (int tries = 0; tries < 4; tries++) {
		char *rel = rel_now(fs, n, &seq);
		if (!rel)
			return -ENOMEM;
		r = openat(fs->rootfd, rel, flags);
		if (r < 0)
			r = -errno;
		free(rel);
		if (r != -ENOENT || !renamed_since(fs, seq))
			break;
	}
	return r;
}

struct timespec fsi_now_real(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return t;
}

struct timespec fsi_now_mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t;
}

uint64_t fsi_text_hash(const char *p, size_t n)
{
	return fnv64(0xcbf29ce484222325ULL, p, n);
}

/*
 * The kernel's cache time of node @p n's entry and attributes, seconds
 * (fs->mu held): 0 for volatile kinds, fs->o.remote_timeout below a SOURCE
 * folder on a file system inotify cannot follow (node_remote()), else
 * fs->o.timeout.
 */
double fsi_node_timeout(lfs_fs *fs, struct node *n)
{
	if (node_ops_of(n)->volatile_attr)
		return 0;
	return node_remote(n, model_of(n)) ? fs->o.remote_timeout : fs->o.timeout;
}

void fsi_entry_timeouts(lfs_fs *fs, struct node *n, lfs_fs_entry *e)
{
	e->entry_timeout = e->attr_timeout = fsi_node_timeout(fs, n);
}

/*
 * Does node @p c show object (@p dev, @p ino)? A source node: that source
 * object; a scratch node (no source part): the scratch object numbered @p ino.
 */
static bool shows(struct node *c, uint64_t dev, uint64_t ino)
{
	if (node_has_src(c))
		return c->src_dev == dev && c->src_ino == ino;
	return fsi_node_sino(c) == ino;
}

/* Find the hashed child (@p parent, @p name) of @p kind showing source (dev, ino), or make it. */
struct node *fsi_child_for(lfs_fs *fs, struct node *parent, const char *name, enum nkind kind,
		       uint64_t dev, uint64_t ino, const char *rel, int *err)
{
	struct node *c = fsi_find_child(fs, parent, name);
	/* Generated nodes belong to their model folder whatever its inode (a
	 * commit replaces the model file); scratch nodes to their object. */
	const struct node_ops *ops = fsi_kind_ops(kind);
	bool generated = ops->generated;
	/* A model folder stays the same folder when its model file is replaced
	 * by another model file (fsi_model_views()): it takes the new inode. */
	if (c && c->kind == K_MODEL && kind == K_MODEL) {
		c->src_dev = dev;
		c->src_ino = ino;
	}
	if (c && (c->kind != kind || (!generated && !shows(c, dev, ino)))) {
		/* SOURCE changed what this name is: the old node lives on, unfindable,
		 * until the kernel forgets it; requests on it get ESTALE. */
		fsi_nh_remove(fs, c);
		c = NULL;
	}
	if (!c) {
		char *r = strdup(rel);
		c = r ? fsi_node_new(fs, 0, kind, parent, name, r) : NULL;
		if (!c) {
			*err = ENOMEM;
			return NULL;
		}
		if (node_has_src(c)) {
			c->src_dev = dev;
			c->src_ino = ino;
			c->sino = ino;
			/* as its folder; a folder on another file system: fsi_dir_untrusted() */
			c->remote = node_remote(parent, model_of(parent));
		}
		/* model-side nodes: st_ino worked out when asked (fsi_node_sino) */
		if (kind == K_DIR)
			fsi_add_watch(fs, c);
	}
	return c;
}

void lfs_fs_forget(lfs_fs *fs, uint64_t ino, uint64_t nlookup)
{
	fs_lock(fs);
	struct node *n = get_node(fs, ino);
	if (n) {
		/* a saturated count (node_hold) stays: the node lives until unmount */
		if (n->nlookup != UINT32_MAX)
			n->nlookup = n->nlookup > nlookup ? n->nlookup - (uint32_t)nlookup : 0;
		maybe_free(fs, n);
	}
	fs_unlock(fs);
}

/* ---- deferred frees (fs_int.h FSI_REQUEST) ---- */

struct retired {
	void *p;
	struct retired *next;
};

static void free_retired(struct retired *r)
{
	while (r) {
		struct retired *nx = r->next;
		free(r->p);
		free(r);
		r = nx;
	}
}

/*
 * fs->mu held. Free what was retired in the previous epoch once its requests
 * are gone; then, if the current epoch holds retired strings, move on to the
 * next one (whose counter is then 0: every request of two epochs ago ended).
 */
static void reclaim(lfs_fs *fs)
{
	unsigned cur = (unsigned)(fs->epoch & 1), prev = cur ^ 1;
	if (fs->active[prev] != 0)
		return;
	free_retired(fs->retired[prev]);
	fs->retired[prev] = NULL;
	if (fs->retired[cur])
		fs->epoch++;
}

struct fsi_req fsi_req_enter(lfs_fs *fs)
{
	pthread_mutex_lock(&fs->mu);
	struct fsi_req r = { fs, (unsigned)(fs->epoch & 1) };
	fs->active[r.slot]++;
	pthread_mutex_unlock(&fs->mu);
	return r;
}

void fsi_req_leave(struct fsi_req *r)
{
	lfs_fs *fs = r->fs;
	pthread_mutex_lock(&fs->mu);
	fs->active[r->slot]--;
	if (fs->retired[0] || fs->retired[1])
		reclaim(fs);
	pthread_mutex_unlock(&fs->mu);
}

void fsi_retire(lfs_fs *fs, void *p)
{
	if (!p)
		return;
	struct retired *r = malloc(sizeof(*r));
	if (!r) {
		/* Out of memory: leak the string rather than free it under a reader. */
		return;
	}
	r->p = p;
	unsigned cur = (unsigned)(fs->epoch & 1);
	r->next = fs->retired[cur];
	fs->retired[cur] = r;
	reclaim(fs);
}

/* At unmount (no requests left). */
void fsi_retired_free_all(lfs_fs *fs)
{
	free_retired(fs->retired[0]);
	free_retired(fs->retired[1]);
	fs->retired[0] = fs->retired[1] = NULL;
}

int fsi_node_info(lfs_fs *fs, uint64_t ino, struct nodeinfo *ni)
{
	fs_lock(fs);
	struct node *n = get_node(fs, ino);
	if (n) {
		ni->kind = n->kind;
		ni->node = n;
		ni->model = node_has_src(n) ? NULL : model_of(n);
	}
	fs_unlock(fs);
	return n ? 0 : ESTALE;
}

/* Unhash a node that no longer matches SOURCE so the next lookup makes a new one. */
void fsi_detach(lfs_fs *fs, struct node *n)
{
	fs_lock(fs);
	fsi_nh_remove(fs, n);
	fs_unlock(fs);
}

int fsi_dsent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dsent *)a)->name, ((const struct dsent *)b)->name);
}

int fsi_snap_add(struct dirsnap *s, size_t *cap, const char *name, size_t len, uint64_t ino,
	     unsigned char type)
{
	if (!lfs_grow((void **)&s->ents, cap, s->n + 1, sizeof(*s->ents)))
		return ENOMEM;
	char *nm = strndup(name, len);
	if (!nm)
		return ENOMEM;
	s->ents[s->n].name = nm;
	s->ents[s->n].ino = ino;
	s->ents[s->n].type = type;
	s->n++;
	return 0;
}

/* The answer to a create/link/symlink: node @p c with one lookup count (fs->mu held). */
int fsi_give_entry(lfs_fs *fs, struct node *c, const struct srcinfo *si, lfs_fs_entry *e)
{
	int r = fsi_fill_gen(fs, c, si, &e->attr);
	if (r)
		return r;
	node_hold(c);
	e->ino = c->id;
	e->generation = c->gen;
	fsi_entry_timeouts(fs, c, e);
	return 0;
}

static void update_rels(lfs_fs *fs, struct node *n)
{
	for (struct node *c = n->first_child; c; c = c->next_sib) {
		if (!node_ops_of(c)->source)
			continue;
		char *r = fsi_join_rel(n->rel, node_name(c));
		if (r)
			fsi_node_set_path(fs, c, node_name(c), r); /* its name is checked before its old path is retired */
		update_rels(fs, c);
	}
}

/*
 * Give node @p n the name @p newname in folder @p np (fs->mu held). @p vrel:
 * the new view path for generated-side nodes, NULL for source nodes (their
 * source path and their descendants' are recomputed).
 */
int fsi_node_move(lfs_fs *fs, struct node *n, struct node *np, const char *newname, const char *vrel)
{
	fsi_nh_remove(fs, n);
	char *rel = vrel ? strdup(vrel) : fsi_join_rel(np->rel, newname);
	if (!rel || fsi_node_set_path(fs, n, newname, rel) != 0) {
		/* Left unfindable: the next lookup makes a fresh node. */
		return ENOMEM;
	}
	struct node *op = n->parent;
	if (op != np) {
		sib_unlink(n);
		sib_link(n, np);
	}
	if (!vrel)
		update_rels(fs, n);
	int r = nh_insert(fs, n);
	if (op != np)
		maybe_free(fs, op);
	return r;
}


/*
 * Copy bytes [@p off, @p off + @p size) of @p src (@p total bytes) into a
 * malloc'd answer of a READ (nothing past the end). 0 or ENOMEM.
 */
int fsi_read_copy(lfs_fs_read *r, const char *src, size_t total, size_t size, off_t off)
{
	if ((uint64_t)off >= total)
		return 0;
	size_t n = total - (size_t)off < size ? total - (size_t)off : size;
	char *copy = malloc(n);
	if (!copy)
		return ENOMEM;
	memcpy(copy, src + off, n);
	r->data = copy;
	r->len = n;
	r->hold = copy;
	r->hold_kind = HOLD_MALLOC;
	return 0;
}

/* link() of a node whose kind has no link operation, into folder @p np. */
int fsi_link_elsewhere(const struct nodeinfo *np)
{
	return np->kind == K_CTLDIR ? EPERM : EXDEV;
}

/* link() of a folder or a control/message file: never. */
int fsi_link_eperm(lfs_fs *fs, const struct nodeinfo *ni, const struct nodeinfo *np,
	       const char *newname, lfs_fs_entry *e)
{
	(void)fs;
	(void)ni;
	(void)np;
	(void)newname;
	(void)e;
	return EPERM;
}

/* rename() between folders of different sorts (or out of a non-folder). */
int fsi_rename_elsewhere(const struct nodeinfo *p, const struct nodeinfo *np)
{
	if (p->kind == K_CTLDIR || np->kind == K_CTLDIR)
		return EPERM;
	const struct node_ops *a = fsi_kind_ops(p->kind), *b = fsi_kind_ops(np->kind);
	if (!a->source_dir && !a->model_ns)
		return ENOTDIR;
	if (!b->source_dir && !b->model_ns)
		return ENOTDIR;
	/* Between SOURCE and a model folder: mv copies instead. */
	return EXDEV;
}
