/**
 * @file fs.c
 * The virtual tree of a mount (see fs.h for the contract).
 *
 * Invariants:
 *  - Every node has a slot (node id) and, except the root, a parent; a child
 *    keeps its parent alive (the kernel forgets parents after children, but we
 *    do not rely on it).
 *  - A node is "hashed" (findable by (parent, name)) while it is the current
 *    meaning of that name. When SOURCE changes what a name is (file <-> model
 *    folder, another inode), the old node is unhashed and a new node with a
 *    new id is made: the kernel must never see an inode change its type.
 *  - Source paths are relative to SOURCE ("." is the root) and are opened
 *    with *at() calls on the root fd, final component O_NOFOLLOW.
 *  - fs->mu protects the node tables, the cache, the error list and the
 *    editing state (struct mstate: overlays, scratch names, messages). It is
 *    never held during source I/O, view building, commits or notifications.
 *    A commit holds its model's commit_mu (taken before fs->mu, never the
 *    other way round).
 *  - Editing state is keyed by the model file's path relative to SOURCE and
 *    by view path, never by node: nodes come and go with the kernel's
 *    lookup counts, an edit must not (docs/editing.md).
 */
#define _GNU_SOURCE
#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "errlog.h"
#include "membuf.h"
#include "replace.h"
#include "source.h"
#include "texture.h"
#include "../views/thumb.h"

#define CTL_ID 2
#define ERRORS_ID 3
#define FIRST_FREE_ID 4
#define VINO_BIT (1ULL << 63)
#define CTL_INO (VINO_BIT | 1)
#define ERRORS_INO (VINO_BIT | 2)
#define WATCH_BUCKETS 1024

enum nkind {
	K_ROOT,
	K_DIR,    /* source folder */
	K_FILE,   /* source file shown as itself */
	K_LINK,   /* source symlink */
	K_OTHER,  /* fifo, socket, device */
	K_MODEL,  /* source file shown as a folder of views */
	K_VDIR,   /* folder inside a model folder */
	K_VFILE,  /* generated file */
	K_CTLDIR, /* /.legacyfs */
	K_CTLERR, /* /.legacyfs/errors */
	K_SCRATCH, /* in-memory file or symlink in a model folder's scratch namespace */
	K_MERR,   /* <model>/errors.txt: messages of refused saves */
};

/* One pending kernel notification. */
struct inval {
	uint64_t id;
	char *name; /* NULL: inval_inode(id); else inval_entry(id, name) */
};

struct inval_list {
	struct inval *v;
	size_t n, cap;
};

/* ---- editing state (docs/editing.md) ---- */

/* A scratch file or symlink: in memory, never written to SOURCE. */
struct sobj {
	unsigned refs;   /* names + nodes */
	unsigned nlink;  /* names */
	lfs_membuf data; /* file bytes, or the symlink target */
	mode_t mode;     /* S_IFREG or S_IFLNK | permission bits */
	uid_t uid;
	gid_t gid;
	struct timespec atime, mtime, ctime;
	uint64_t sino;
	bool base_valid; /* the text came from a view whose generated text hashed base_hash */
	uint64_t base_hash;
};

struct sname {
	char *vpath; /* path inside the model folder */
	struct sobj *obj;
	struct sname *next;
};

/* The text of a view being edited. */
struct overlay {
	char *vpath;
	lfs_membuf text;
	bool written;    /* WRITE since the last commit attempt: FLUSH commits */
	bool modified;   /* WRITE or truncate since then: FSYNC commits */
	bool base_valid; /* generated text the edit started from (hash) */
	uint64_t base_hash;
	uint64_t gen;    /* bumped on every change */
	pid_t writer;    /* thread group of the last WRITE (0 = unknown) */
	struct timespec mtime;
	struct overlay *next;
};

/* A deleted view: absent until re-created or until the grace time ends. */
struct hidden {
	char *vpath;
	struct timespec until; /* CLOCK_MONOTONIC */
	uint64_t dir_id;       /* folder to invalidate when the view comes back */
	struct hidden *next;
};

/* Base of a view whose node went away (rename/unlink), for its next overlay. */
struct pbase {
	char *vpath;
	uint64_t hash;
	struct pbase *next;
};

/* Message of the last refused save of one view. */
struct merr {
	char *vpath;
	char *text; /* complete lines */
	struct timespec when;
	struct merr *next;
};

/*
 * The generated text last served by READ for (model path, view path): the
 * base of the next edit of that view (stale-save check). A direct-mapped
 * table: a collision forgets an entry, and a forgotten base only means the
 * check is skipped for that save.
 */
#define SERVED_SLOTS 4096
struct served {
	char *key;      /* "<model rel>\x01<view path>" */
	uint64_t hash;  /* of the text */
	uint64_t dev, ino; /* source version it was generated from */
	int64_t size, mtime;
};

/* Editing state of one model file; kept until the fs is freed. */
struct mstate {
	char *rel;
	pthread_mutex_t commit_mu;
	struct sname *names;
	struct overlay *ovl;
	struct hidden *hidden;
	struct pbase *pbase;
	struct merr *errs;
	struct mstate *next;
};

/* One readdir listing of a folder. */
struct dsent {
	char *name;
	uint64_t ino;
	unsigned char type; /* DT_* */
};

struct dirsnap {
	unsigned refs;
	uint64_t gen;       /* node->dirty_gen when the listing was read */
	uint64_t dev, ino;
	int64_t mtime_ns, ctime_ns;
	struct dsent *ents;
	size_t n;
};

struct node {
	uint64_t id, gen;
	enum nkind kind;
	struct node *parent;
	char *name;          /* name in parent */
	char *rel;           /* source path, or the view path for K_VDIR/K_VFILE */
	struct node *model;  /* K_VDIR/K_VFILE: the model folder */
	uint64_t src_dev, src_ino; /* source object this node shows */
	uint64_t sino;       /* st_ino reported */
	uint64_t nlookup;
	struct node *first_child, *next_sib, *prev_sib;
	struct node *hnext;  /* name hash chain */
	bool hashed;
	int wd;              /* inotify watch, -1 = none */
	struct node *wnext;  /* watch hash chain */
	struct dirsnap *snap;
	uint64_t dirty_gen;  /* bumped by the watcher when the folder's content changed */
	struct sobj *sobj;   /* K_SCRATCH: the object (one reference) */
	bool self_commit;    /* K_MODEL: SOURCE was just replaced by our own commit */
};

struct lfs_fs {
	pthread_mutex_t mu;
	int rootfd;
	char *source;        /* absolute, for inotify_add_watch */
	lfs_fs_opts o;
	struct timespec start;
	uid_t uid;
	gid_t gid;

	struct node **slots; /* by id */
	uint64_t *slot_gen;
	size_t nslots;
	uint64_t *free_ids;
	size_t nfree, free_cap;
	size_t nnodes;

	struct node **nh;    /* (parent, name) hash */
	size_t nh_size, nh_count;

	lfs_cache cache;
	lfs_errlog errors;
	uint64_t builds, build_failures;

	/* editing */
	struct mstate *mstates;
	size_t edit_used, edit_max;
	uint64_t next_sino;
	size_t nhidden;
	uint64_t commits, commit_noops, commit_refused;
	struct inval_list pending; /* notifications queued by requests, sent by the thread */
	struct served *served;     /* SERVED_SLOTS entries, allocated on first use */

	/* watcher / notification thread */
	int ifd, stopfd, kickfd;
	bool thread_running;
	pthread_t thread;
	lfs_fs_notify notify;
	struct node *wh[WATCH_BUCKETS];
	uint64_t nwatches;
	bool watch_warned;
};

static void sobj_unref(lfs_fs *fs, struct sobj *o);
static void inval_add(struct inval_list *l, uint64_t id, const char *name);

/* ------------------------------------------------------------------ */
/* logging                                                             */

static void fs_log(lfs_fs *fs, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fs_log(lfs_fs *fs, int level, const char *fmt, ...)
{
	if (level >= LFS_LOG_DEBUG && fs && !fs->o.debug)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (fs && fs->o.log)
		fs->o.log(level, buf);
	else
		fprintf(stderr, "legacyfs: %s\n", buf);
}

/* ------------------------------------------------------------------ */
/* small helpers                                                       */

static int64_t ts_ns(const struct timespec *t)
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
static uint64_t view_ino(const struct node *model, const char *vpath)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	h = fnv64(h, model->rel, strlen(model->rel) + 1);
	h = fnv64(h, vpath, strlen(vpath));
	h |= VINO_BIT;
	if (h == CTL_INO || h == ERRORS_INO)
		h ^= 4;
	return h;
}

/* parent_rel + "/" + name (or name under the root). NULL: too long / no memory. */
static char *join_rel(const char *parent_rel, const char *name)
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
static char *join_view(const struct node *parent, const char *name)
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

static bool is_dot(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

/* ------------------------------------------------------------------ */
/* node tables (fs->mu held)                                           */

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

static struct node *find_child(lfs_fs *fs, struct node *parent, const char *name)
{
	if (!fs->nh_size)
		return NULL;
	for (struct node *n = fs->nh[name_hash(parent, name) & (fs->nh_size - 1)]; n; n = n->hnext)
		if (n->parent == parent && strcmp(n->name, name) == 0)
			return n;
	return NULL;
}

static void nh_remove(lfs_fs *fs, struct node *n)
{
	if (!n->hashed)
		return;
	struct node **pp = &fs->nh[name_hash(n->parent, n->name) & (fs->nh_size - 1)];
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
	if (fs->nh_count + 1 > fs->nh_size) {
		size_t ns = fs->nh_size ? fs->nh_size * 2 : 1024;
		struct node **t = calloc(ns, sizeof(*t));
		if (!t)
			return ENOMEM;
		for (size_t i = 0; i < fs->nh_size; i++) {
			struct node *m = fs->nh[i];
			while (m) {
				struct node *nx = m->hnext;
				size_t h = name_hash(m->parent, m->name) & (ns - 1);
				m->hnext = t[h];
				t[h] = m;
				m = nx;
			}
		}
		free(fs->nh);
		fs->nh = t;
		fs->nh_size = ns;
	}
	size_t h = name_hash(n->parent, n->name) & (fs->nh_size - 1);
	n->hnext = fs->nh[h];
	fs->nh[h] = n;
	n->hashed = true;
	fs->nh_count++;
	return 0;
}

static void wh_remove(lfs_fs *fs, struct node *n)
{
	if (n->wd < 0)
		return;
	struct node **pp = &fs->wh[(unsigned)n->wd % WATCH_BUCKETS];
	while (*pp && *pp != n)
		pp = &(*pp)->wnext;
	if (*pp)
		*pp = n->wnext;
	n->wnext = NULL;
}

static struct node *wh_find(lfs_fs *fs, int wd)
{
	for (struct node *n = fs->wh[(unsigned)wd % WATCH_BUCKETS]; n; n = n->wnext)
		if (n->wd == wd)
			return n;
	return NULL;
}

static void add_watch(lfs_fs *fs, struct node *n)
{
	if (fs->ifd < 0)
		return;
	char path[PATH_MAX * 2];
	if (strcmp(n->rel, ".") == 0)
		snprintf(path, sizeof(path), "%s", fs->source);
	else if ((size_t)snprintf(path, sizeof(path), "%s/%s", fs->source, n->rel) >= sizeof(path))
		return;
	uint32_t mask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE |
			IN_ATTRIB | IN_MODIFY | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW |
			IN_ONLYDIR | IN_EXCL_UNLINK;
	int wd = inotify_add_watch(fs->ifd, path, mask);
	if (wd < 0) {
		if (!fs->watch_warned)
			fs_log(fs, LFS_LOG_WARNING,
			       "cannot watch %s (%s): changes in it show only after the cache "
			       "timeout; raise fs.inotify.max_user_watches or use -o timeout=",
			       path, strerror(errno));
		fs->watch_warned = true;
		return;
	}
	/* The same folder inode may already be watched by another node: the newest wins. */
	struct node *old = wh_find(fs, wd);
	if (old) {
		wh_remove(fs, old);
		old->wd = -1;
	} else {
		fs->nwatches++;
	}
	n->wd = wd;
	n->wnext = fs->wh[(unsigned)wd % WATCH_BUCKETS];
	fs->wh[(unsigned)wd % WATCH_BUCKETS] = n;
}

static void snap_unref(struct dirsnap *s)
{
	if (!s || --s->refs > 0)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->ents[i].name);
	free(s->ents);
	free(s);
}

static int alloc_id(lfs_fs *fs, uint64_t *id)
{
	if (fs->nfree) {
		*id = fs->free_ids[--fs->nfree];
		return 0;
	}
	if (fs->nslots == SIZE_MAX / 2)
		return ENOMEM;
	size_t ns = fs->nslots ? fs->nslots * 2 : 1024;
	struct node **s = realloc(fs->slots, ns * sizeof(*s));
	if (!s)
		return ENOMEM;
	fs->slots = s;
	uint64_t *g = realloc(fs->slot_gen, ns * sizeof(*g));
	if (!g)
		return ENOMEM;
	fs->slot_gen = g;
	for (size_t i = fs->nslots; i < ns; i++) {
		s[i] = NULL;
		g[i] = 0;
	}
	size_t first = fs->nslots < FIRST_FREE_ID ? FIRST_FREE_ID : fs->nslots;
	/* Push in reverse so low ids come out first. */
	/* Room for every id to be free at once (maybe_free relies on it). */
	if (fs->free_cap < ns) {
		uint64_t *f = realloc(fs->free_ids, ns * sizeof(*f));
		if (!f)
			return ENOMEM;
		fs->free_ids = f;
		fs->free_cap = ns;
	}
	for (size_t i = ns; i-- > first;)
		fs->free_ids[fs->nfree++] = i;
	fs->nslots = ns;
	*id = fs->free_ids[--fs->nfree];
	return 0;
}

/* Make a node in slot @p id (or a fresh id when 0) and link it under @p parent. */
static struct node *node_new(lfs_fs *fs, uint64_t id, enum nkind kind, struct node *parent,
			     const char *name, char *rel_owned)
{
	struct node *n = calloc(1, sizeof(*n));
	if (!n) {
		free(rel_owned);
		return NULL;
	}
	n->name = strdup(name);
	n->rel = rel_owned;
	n->wd = -1;
	if (!n->name || (!id && alloc_id(fs, &id) != 0)) {
		free(n->name);
		free(n->rel);
		free(n);
		return NULL;
	}
	n->id = id;
	n->gen = ++fs->slot_gen[id];
	n->kind = kind;
	n->parent = parent;
	fs->slots[id] = n;
	fs->nnodes++;
	if (parent) {
		n->next_sib = parent->first_child;
		if (parent->first_child)
			parent->first_child->prev_sib = n;
		parent->first_child = n;
		if (nh_insert(fs, n) != 0) {
			/* Unfindable by name but fully linked: freed by its forget. */
			fs_log(fs, LFS_LOG_WARNING, "out of memory growing the name table");
		}
	}
	return n;
}

static bool pinned(const struct node *n)
{
	return n->id < FIRST_FREE_ID;
}

/* Free @p n and then its ancestors while nothing references them. */
static void maybe_free(lfs_fs *fs, struct node *n)
{
	while (n && !pinned(n) && n->nlookup == 0 && !n->first_child) {
		struct node *p = n->parent;
		nh_remove(fs, n);
		if (p) {
			if (n->prev_sib)
				n->prev_sib->next_sib = n->next_sib;
			else
				p->first_child = n->next_sib;
			if (n->next_sib)
				n->next_sib->prev_sib = n->prev_sib;
		}
		if (n->wd >= 0) {
			wh_remove(fs, n);
			inotify_rm_watch(fs->ifd, n->wd);
			fs->nwatches--;
		}
		snap_unref(n->snap);
		if (n->sobj)
			sobj_unref(fs, n->sobj);
		fs->slots[n->id] = NULL;
		if (fs->nfree < fs->free_cap)
			fs->free_ids[fs->nfree++] = n->id;
		/* else: the id is leaked (cannot happen: free_cap covers every id) */
		fs->nnodes--;
		free(n->name);
		free(n->rel);
		free(n);
		n = p;
	}
}

/* ------------------------------------------------------------------ */
/* classification through the cache                                    */

/* What a source object is. */
struct srcinfo {
	struct stat st;
	enum nkind kind;   /* K_DIR, K_FILE, K_LINK, K_OTHER, K_MODEL */
	lfs_centry *ce;    /* K_FILE/K_MODEL: cache entry with a reference (or NULL) */
};

static void srcinfo_release(lfs_fs *fs, struct srcinfo *si)
{
	if (si->ce) {
		pthread_mutex_lock(&fs->mu);
		lfs_cache_release(&fs->cache, si->ce);
		pthread_mutex_unlock(&fs->mu);
		si->ce = NULL;
	}
}

/*
 * The cache entry of regular file @p rel whose stat is @p st: from the cache,
 * or classified/built now (unlocked) and inserted. Failures are logged and
 * listed in /.legacyfs/errors the first time they are seen. NULL when the file
 * cannot be read (it is then treated as plain and nothing is cached).
 */
static lfs_centry *entry_for(lfs_fs *fs, const char *rel, const struct stat *st)
{
	lfs_cache_key k = lfs_cache_key_of(st, rel);
	pthread_mutex_lock(&fs->mu);
	lfs_centry *e = lfs_cache_get(&fs->cache, &k);
	pthread_mutex_unlock(&fs->mu);
	if (e)
		return e;

	lfs_texture_ctx tc;
	lfs_texture_ctx_init(&tc, fs->rootfd, rel);
	lfs_view_opts vo = { .texture_lookup = lfs_texture_lookup, .texture_ctx = &tc,
			     .texture_read = lfs_texture_read, .thumb_size = fs->o.thumb_size,
			     .thumb_mtime = (int64_t)st->st_mtime };
	char *abs = NULL, *uri = NULL;
	if (fs->o.thumb_size && asprintf(&abs, "%s/%s", fs->source, rel) >= 0) {
		uri = lfs_thumb_file_uri(abs);
		vo.thumb_uri = uri;
	}
	free(abs);
	struct stat fst;
	lfs_source_kind kind;
	lfs_viewset vs;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = lfs_source_load(fs->rootfd, rel, fs->o.max_model_size, &vo, &fst, &kind, &vs, &err);
	lfs_texture_ctx_free(&tc);
	free(uri);
	if (r != LFS_OK) {
		fs_log(fs, r == LFS_ERR_NOMEM ? LFS_LOG_ERR : LFS_LOG_DEBUG, "%s", err.msg);
		return NULL;
	}
	lfs_cache_key fk = lfs_cache_key_of(&fst, rel);
	e = lfs_centry_new(&fk, kind, &vs, kind == LFS_SOURCE_FAILED ? err.msg : NULL);
	if (!e) {
		fs_log(fs, LFS_LOG_ERR, "%s: out of memory caching the views", rel);
		return NULL;
	}
	pthread_mutex_lock(&fs->mu);
	lfs_centry *got = lfs_cache_put(&fs->cache, e);
	bool fresh = got == e;
	bool newline = false;
	if (fresh && kind != LFS_SOURCE_PLAIN)
		fs->builds++;
	if (fresh && kind == LFS_SOURCE_FAILED) {
		fs->build_failures++;
		newline = lfs_errlog_add(&fs->errors, rel, got->errmsg ? got->errmsg : "decode failed");
	}
	pthread_mutex_unlock(&fs->mu);
	if (newline)
		fs_log(fs, LFS_LOG_WARNING, "%s: looks like a model but does not decode, shown as "
		       "the original file: %s", rel, got->errmsg ? got->errmsg : "");
	return got;
}

/* Stat and classify source path @p rel. Returns 0 or errno. */
static int classify(lfs_fs *fs, const char *rel, struct srcinfo *si)
{
	si->ce = NULL;
	if (fstatat(fs->rootfd, rel, &si->st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno;
	switch (si->st.st_mode & S_IFMT) {
	case S_IFDIR:
		si->kind = K_DIR;
		return 0;
	case S_IFLNK:
		si->kind = K_LINK;
		return 0;
	case S_IFREG:
		break;
	default:
		si->kind = K_OTHER;
		return 0;
	}
	si->kind = K_FILE;
	if (si->st.st_size <= 0 || (uint64_t)si->st.st_size > fs->o.max_model_size)
		return 0;
	si->ce = entry_for(fs, rel, &si->st);
	if (si->ce && si->ce->kind == LFS_SOURCE_MODEL) {
		si->kind = K_MODEL;
		/* Report what was built (the file may have changed since our stat). */
		si->st.st_size = si->ce->key.size;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* attributes                                                          */

static mode_t dir_perm_from(mode_t src)
{
	mode_t p = src & 0444;
	return p | ((p >> 2) & 0111);
}

/* Sub-folder count of view folder @p vpath ("" = model folder) in @p vs. */
static size_t lower_bound(const lfs_viewset *vs, const char *key)
{
	size_t lo = 0, hi = vs->n_views;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(vs->views[mid].path, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Walk the immediate children of view folder @p vpath ("" = the model folder).
 * Calls @p fn(ctx, name, namelen, is_dir, view) for each; stops when it
 * returns non-zero. Sorted, each sub-folder once.
 */
typedef int (*vchild_fn)(void *ctx, const char *name, size_t len, bool is_dir, const lfs_view *v);

static int view_children(const lfs_viewset *vs, const char *vpath, vchild_fn fn, void *ctx)
{
	char prefix[PATH_MAX];
	size_t pl = 0;
	if (vpath[0]) {
		pl = strlen(vpath);
		if (pl + 2 > sizeof(prefix))
			return 0;
		memcpy(prefix, vpath, pl);
		prefix[pl++] = '/';
	}
	prefix[pl] = '\0';
	const char *last_dir = NULL;
	size_t last_len = 0;
	for (size_t i = pl ? lower_bound(vs, prefix) : 0; i < vs->n_views; i++) {
		const lfs_view *v = &vs->views[i];
		if (strncmp(v->path, prefix, pl) != 0)
			break;
		const char *comp = v->path + pl;
		const char *sl = strchr(comp, '/');
		if (!*comp)
			continue;
		if (sl) {
			size_t len = (size_t)(sl - comp);
			if (len == 0 || (last_dir && last_len == len && memcmp(last_dir, comp, len) == 0))
				continue;
			last_dir = comp;
			last_len = len;
			int r = fn(ctx, comp, len, true, NULL);
			if (r)
				return r;
		} else {
			int r = fn(ctx, comp, strlen(comp), false, v);
			if (r)
				return r;
		}
	}
	return 0;
}

static int count_dirs_cb(void *ctx, const char *name, size_t len, bool is_dir, const lfs_view *v)
{
	(void)name;
	(void)len;
	(void)v;
	if (is_dir)
		++*(size_t *)ctx;
	return 0;
}

/* Is @p vpath a view folder of @p vs? */
static bool view_is_dir(const lfs_viewset *vs, const char *vpath)
{
	char key[PATH_MAX];
	size_t l = strlen(vpath);
	if (l + 2 > sizeof(key))
		return false;
	memcpy(key, vpath, l);
	key[l] = '/';
	key[l + 1] = '\0';
	size_t i = lower_bound(vs, key);
	return i < vs->n_views && strncmp(vs->views[i].path, key, l + 1) == 0;
}

/* Does the model have any view that can be written back? */
static bool vs_writable(const lfs_viewset *vs)
{
	return lfs_viewset_writable(vs);
}

/* Can view @p path of @p vs be written back (fixed when the views were built)? */
static bool view_writable(const lfs_viewset *vs, const char *path)
{
	const lfs_view *v = lfs_viewset_find(vs, path);
	return v && v->writable;
}

static void fill_virtual_dir(struct stat *a, const struct stat *src, const lfs_viewset *vs,
			     const char *vpath, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	size_t ndirs = 0;
	view_children(vs, vpath, count_dirs_cb, &ndirs);
	a->st_ino = ino;
	a->st_mode = S_IFDIR | dir_perm_from(src->st_mode);
	/* Folders of writable models take the model file's write bits: editors
	 * create their swap, backup and temp files there (scratch namespace). */
	if (vs_writable(vs))
		a->st_mode |= src->st_mode & 0222;
	a->st_nlink = 2 + ndirs;
	a->st_uid = src->st_uid;
	a->st_gid = src->st_gid;
	a->st_size = 4096;
	a->st_blksize = 4096;
	a->st_atim = src->st_atim;
	a->st_mtim = src->st_mtim;
	a->st_ctim = src->st_ctim;
	a->st_dev = src->st_dev;
}

/*
 * A generated file: @p size bytes; times of the model file unless @p mtime
 * (text being edited); the model file's read bits, plus its write bits when
 * the view can be written back.
 */
static void fill_view_file(struct stat *a, const struct stat *src, size_t size,
			   const struct timespec *mtime, bool writable, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	a->st_ino = ino;
	a->st_mode = S_IFREG | (src->st_mode & (writable ? 0666 : 0444));
	a->st_nlink = 1;
	a->st_uid = src->st_uid;
	a->st_gid = src->st_gid;
	a->st_size = (off_t)size;
	a->st_blocks = (blkcnt_t)((size + 511) / 512);
	a->st_blksize = 4096;
	a->st_atim = src->st_atim;
	a->st_mtim = mtime ? *mtime : src->st_mtim;
	a->st_ctim = mtime ? *mtime : src->st_ctim;
	a->st_dev = src->st_dev;
}

/* A scratch object (fs->mu held). */
static void fill_scratch(struct stat *a, const struct stat *src, const struct sobj *o)
{
	memset(a, 0, sizeof(*a));
	a->st_ino = o->sino;
	a->st_mode = o->mode;
	a->st_nlink = o->nlink ? o->nlink : 1;
	a->st_uid = o->uid;
	a->st_gid = o->gid;
	a->st_size = (off_t)o->data.len;
	a->st_blocks = (blkcnt_t)((o->data.len + 511) / 512);
	a->st_blksize = 4096;
	a->st_atim = o->atime;
	a->st_mtim = o->mtime;
	a->st_ctim = o->ctime;
	a->st_dev = src->st_dev;
}

static void fill_ctl(lfs_fs *fs, struct stat *a, bool errors_file)
{
	memset(a, 0, sizeof(*a));
	a->st_uid = fs->uid;
	a->st_gid = fs->gid;
	a->st_blksize = 4096;
	a->st_atim = a->st_ctim = fs->start;
	if (errors_file) {
		a->st_ino = ERRORS_INO;
		a->st_mode = S_IFREG | 0444;
		a->st_nlink = 1;
		a->st_size = (off_t)fs->errors.text.len;
		a->st_blocks = (blkcnt_t)((fs->errors.text.len + 511) / 512);
		a->st_mtim = fs->errors.n ? fs->errors.mtime : fs->start;
		a->st_ctim = a->st_mtim;
	} else {
		a->st_ino = CTL_INO;
		a->st_mode = S_IFDIR | 0555;
		a->st_nlink = 2;
		a->st_size = 4096;
		a->st_mtim = fs->start;
	}
}

/* Source-backed attributes (passthrough or model folder). */
static void fill_source(struct stat *a, const struct srcinfo *si)
{
	if (si->kind == K_MODEL) {
		fill_virtual_dir(a, &si->st, &si->ce->vs, "", si->st.st_ino);
		return;
	}
	*a = si->st;
	if (si->kind == K_DIR)
		a->st_nlink = 1; /* unknown: model files add folders the source count lacks */
}

/* ------------------------------------------------------------------ */
/* model access                                                        */

/*
 * The current views of model folder @p model (a K_MODEL node): stats and
 * classifies its source again. ESTALE when the file is no longer a model (or
 * no longer the same inode).
 */
static int model_views(lfs_fs *fs, const struct node *model, struct srcinfo *si)
{
	int r = classify(fs, model->rel, si);
	if (r)
		return r == ENOENT ? ESTALE : r;
	if (si->kind != K_MODEL || (uint64_t)si->st.st_ino != model->src_ino ||
	    (uint64_t)si->st.st_dev != model->src_dev) {
		srcinfo_release(fs, si);
		return ESTALE;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* editing state (fs->mu held unless noted)                            */

static struct timespec now_real(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return t;
}

static struct timespec now_mono(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t;
}

static uint64_t text_hash(const char *p, size_t n)
{
	return fnv64(0xcbf29ce484222325ULL, p, n);
}

/* Wake the notification thread (any thread, lock held or not). */
static void kick(lfs_fs *fs)
{
	uint64_t one = 1;
	if (fs->kickfd >= 0 && write(fs->kickfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		fs_log(fs, LFS_LOG_WARNING, "cannot wake the notification thread: %s", strerror(errno));
}

static void inval_subtree(struct inval_list *l, struct node *n);

static struct mstate *ms_find(lfs_fs *fs, const char *rel)
{
	for (struct mstate *m = fs->mstates; m; m = m->next)
		if (strcmp(m->rel, rel) == 0)
			return m;
	return NULL;
}

static struct mstate *ms_get(lfs_fs *fs, const char *rel)
{
	struct mstate *m = ms_find(fs, rel);
	if (m)
		return m;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->rel = strdup(rel);
	if (!m->rel) {
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->commit_mu, NULL);
	m->next = fs->mstates;
	fs->mstates = m;
	return m;
}

static struct sname *sname_find(struct mstate *ms, const char *vpath)
{
	for (struct sname *s = ms ? ms->names : NULL; s; s = s->next)
		if (strcmp(s->vpath, vpath) == 0)
			return s;
	return NULL;
}

static struct overlay *ovl_find(struct mstate *ms, const char *vpath)
{
	for (struct overlay *o = ms ? ms->ovl : NULL; o; o = o->next)
		if (strcmp(o->vpath, vpath) == 0)
			return o;
	return NULL;
}

static void ovl_drop(lfs_fs *fs, struct mstate *ms, const char *vpath)
{
	for (struct overlay **pp = &ms->ovl; *pp; pp = &(*pp)->next) {
		struct overlay *o = *pp;
		if (strcmp(o->vpath, vpath) != 0)
			continue;
		*pp = o->next;
		fs->edit_used -= o->text.len;
		lfs_membuf_free(&o->text);
		free(o->vpath);
		free(o);
		return;
	}
}

/* Room for a buffer to go from @p oldlen to @p newlen bytes? */
static int edit_room(lfs_fs *fs, size_t oldlen, uint64_t newlen)
{
	if (newlen > oldlen && newlen - oldlen > fs->edit_max - fs->edit_used)
		return ENOSPC;
	return 0;
}

static void edit_account(lfs_fs *fs, size_t oldlen, size_t newlen)
{
	fs->edit_used = fs->edit_used - oldlen + newlen;
}

static bool pbase_take(struct mstate *ms, const char *vpath, uint64_t *hash)
{
	for (struct pbase **pp = &ms->pbase; *pp; pp = &(*pp)->next) {
		struct pbase *b = *pp;
		if (strcmp(b->vpath, vpath) != 0)
			continue;
		*hash = b->hash;
		*pp = b->next;
		free(b->vpath);
		free(b);
		return true;
	}
	return false;
}

static void pbase_set(struct mstate *ms, const char *vpath, uint64_t hash)
{
	uint64_t old;
	pbase_take(ms, vpath, &old);
	struct pbase *b = calloc(1, sizeof(*b));
	if (!b || !(b->vpath = strdup(vpath))) {
		free(b);
		return;
	}
	b->hash = hash;
	b->next = ms->pbase;
	ms->pbase = b;
}

static char *served_key(const char *rel, const char *vpath, size_t *slot)
{
	size_t rl = strlen(rel), vl = strlen(vpath);
	char *k = malloc(rl + vl + 2);
	if (!k)
		return NULL;
	memcpy(k, rel, rl);
	k[rl] = '\x01';
	memcpy(k + rl + 1, vpath, vl + 1);
	*slot = (size_t)(text_hash(k, rl + vl + 1) % SERVED_SLOTS);
	return k;
}

/* Base of the next edit of (rel, vpath) (fs->mu held). */
static bool served_get(lfs_fs *fs, const char *rel, const char *vpath, uint64_t *hash)
{
	size_t slot;
	if (!fs->served)
		return false;
	char *k = served_key(rel, vpath, &slot);
	bool ok = k && fs->served[slot].key && strcmp(fs->served[slot].key, k) == 0;
	if (ok)
		*hash = fs->served[slot].hash;
	free(k);
	return ok;
}

/* Is (rel, vpath) recorded for this source version? (fs->mu held) */
static bool served_known(lfs_fs *fs, const char *rel, const char *vpath, const lfs_cache_key *v)
{
	size_t slot;
	if (!fs->served)
		return false;
	char *k = served_key(rel, vpath, &slot);
	const struct served *e = &fs->served[slot];
	bool ok = k && e->key && strcmp(e->key, k) == 0 && e->dev == v->dev && e->ino == v->ino &&
		  e->size == v->size && e->mtime == v->mtime_ns;
	free(k);
	return ok;
}

static void served_set(lfs_fs *fs, const char *rel, const char *vpath, uint64_t hash,
		       const lfs_cache_key *v)
{
	size_t slot;
	if (!fs->served && !(fs->served = calloc(SERVED_SLOTS, sizeof(*fs->served))))
		return;
	char *k = served_key(rel, vpath, &slot);
	if (!k)
		return;
	struct served *e = &fs->served[slot];
	free(e->key);
	e->key = k;
	e->hash = hash;
	e->dev = v->dev;
	e->ino = v->ino;
	e->size = v->size;
	e->mtime = v->mtime_ns;
}

/*
 * Make the overlay of view @p vpath from its current text @p init. Base: the
 * text the mount last served for this view, else the base left by an
 * overlay that moved away, else none. NULL when out of memory / over the
 * bound (*err set).
 */
static struct overlay *ovl_new(lfs_fs *fs, struct mstate *ms, const char *vpath, const char *init,
			       size_t n, int *err)
{
	*err = edit_room(fs, 0, n);
	if (*err)
		return NULL;
	struct overlay *o = calloc(1, sizeof(*o));
	if (!o || !(o->vpath = strdup(vpath)) || lfs_membuf_set(&o->text, init, n) != 0) {
		if (o)
			free(o->vpath);
		free(o);
		*err = ENOMEM;
		return NULL;
	}
	uint64_t h;
	if (served_get(fs, ms->rel, vpath, &h)) {
		o->base_valid = true;
		o->base_hash = h;
		pbase_take(ms, vpath, &h);
	} else if (pbase_take(ms, vpath, &h)) {
		o->base_valid = true;
		o->base_hash = h;
	}
	o->mtime = now_real();
	edit_account(fs, 0, n);
	o->next = ms->ovl;
	ms->ovl = o;
	return o;
}

static bool hidden_active(lfs_fs *fs, struct mstate *ms, const char *vpath)
{
	if (!ms)
		return false;
	struct timespec now = now_mono();
	for (struct hidden **pp = &ms->hidden; *pp; pp = &(*pp)->next) {
		struct hidden *h = *pp;
		if (strcmp(h->vpath, vpath) != 0)
			continue;
		if (ts_ns(&now) < ts_ns(&h->until))
			return true;
		*pp = h->next;
		free(h->vpath);
		free(h);
		fs->nhidden--;
		return false;
	}
	return false;
}

static void hidden_clear(lfs_fs *fs, struct mstate *ms, const char *vpath)
{
	for (struct hidden **pp = &ms->hidden; *pp; pp = &(*pp)->next) {
		struct hidden *h = *pp;
		if (strcmp(h->vpath, vpath) != 0)
			continue;
		*pp = h->next;
		free(h->vpath);
		free(h);
		fs->nhidden--;
		return;
	}
}

static int hidden_add(lfs_fs *fs, struct mstate *ms, const char *vpath, uint64_t dir_id)
{
	hidden_clear(fs, ms, vpath);
	struct hidden *h = calloc(1, sizeof(*h));
	if (!h || !(h->vpath = strdup(vpath))) {
		free(h);
		return ENOMEM;
	}
	struct timespec t = now_mono();
	int64_t until = ts_ns(&t) + (int64_t)(fs->o.unlink_grace * 1e9);
	h->until.tv_sec = until / 1000000000;
	h->until.tv_nsec = until % 1000000000;
	h->dir_id = dir_id;
	h->next = ms->hidden;
	ms->hidden = h;
	fs->nhidden++;
	return 0;
}

/* Views whose grace time ended: forget them and refresh their folders in the kernel. */
static void hidden_expire(lfs_fs *fs, struct inval_list *l)
{
	struct timespec now = now_mono();
	for (struct mstate *ms = fs->mstates; ms; ms = ms->next)
		for (struct hidden **pp = &ms->hidden; *pp;) {
			struct hidden *h = *pp;
			if (ts_ns(&now) < ts_ns(&h->until)) {
				pp = &h->next;
				continue;
			}
			inval_add(l, h->dir_id, NULL);
			*pp = h->next;
			free(h->vpath);
			free(h);
			fs->nhidden--;
		}
}

static void merr_clear(struct mstate *ms, const char *vpath)
{
	for (struct merr **pp = &ms->errs; *pp; pp = &(*pp)->next) {
		struct merr *e = *pp;
		if (strcmp(e->vpath, vpath) != 0)
			continue;
		*pp = e->next;
		free(e->vpath);
		free(e->text);
		free(e);
		return;
	}
}

static void merr_clear_all(struct mstate *ms)
{
	while (ms->errs) {
		struct merr *e = ms->errs;
		ms->errs = e->next;
		free(e->vpath);
		free(e->text);
		free(e);
	}
}

static void merr_set(struct mstate *ms, const char *vpath, const char *text)
{
	merr_clear(ms, vpath);
	struct merr *e = calloc(1, sizeof(*e));
	if (!e || !(e->vpath = strdup(vpath)) || !(e->text = strdup(text))) {
		if (e)
			free(e->vpath);
		free(e);
		return;
	}
	e->when = now_real();
	/* Append: messages in the order they happened. */
	struct merr **pp = &ms->errs;
	while (*pp)
		pp = &(*pp)->next;
	*pp = e;
}

/* errors.txt: the messages, concatenated. */
static size_t merr_render(const struct mstate *ms, char **out, struct timespec *mtime)
{
	size_t n = 0;
	struct timespec t = { 0, 0 };
	for (const struct merr *e = ms ? ms->errs : NULL; e; e = e->next) {
		n += strlen(e->text);
		if (ts_ns(&e->when) > ts_ns(&t))
			t = e->when;
	}
	if (mtime)
		*mtime = t;
	if (!out)
		return n;
	*out = malloc(n ? n : 1);
	if (!*out)
		return 0;
	size_t k = 0;
	for (const struct merr *e = ms->errs; e; e = e->next) {
		size_t l = strlen(e->text);
		memcpy(*out + k, e->text, l);
		k += l;
	}
	return n;
}

static void sobj_unref(lfs_fs *fs, struct sobj *o)
{
	if (!o || --o->refs > 0)
		return;
	fs->edit_used -= o->data.len;
	lfs_membuf_free(&o->data);
	free(o);
}

static struct sobj *sobj_new(lfs_fs *fs, mode_t mode, uid_t uid, gid_t gid)
{
	struct sobj *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->mode = mode;
	o->uid = uid;
	o->gid = gid;
	o->atime = o->mtime = o->ctime = now_real();
	o->sino = VINO_BIT | (1ULL << 62) | ++fs->next_sino;
	return o;
}

/* Give @p o the name @p vpath (a new name: the caller checked). */
static struct sname *sname_add(struct mstate *ms, const char *vpath, struct sobj *o)
{
	struct sname *s = calloc(1, sizeof(*s));
	if (!s || !(s->vpath = strdup(vpath))) {
		free(s);
		return NULL;
	}
	s->obj = o;
	o->refs++;
	o->nlink++;
	o->ctime = now_real();
	s->next = ms->names;
	ms->names = s;
	return s;
}

static void sname_remove(lfs_fs *fs, struct mstate *ms, struct sname *s)
{
	for (struct sname **pp = &ms->names; *pp; pp = &(*pp)->next) {
		if (*pp != s)
			continue;
		*pp = s->next;
		s->obj->nlink--;
		s->obj->ctime = now_real();
		sobj_unref(fs, s->obj);
		free(s->vpath);
		free(s);
		return;
	}
}

/* Replace (or make) scratch file @p vpath with @p n bytes (the ".rejected" copy). */
static void scratch_put(lfs_fs *fs, struct mstate *ms, const char *vpath, const char *data, size_t n,
			mode_t perm, uid_t uid, gid_t gid)
{
	struct sname *s = sname_find(ms, vpath);
	struct sobj *o = s && S_ISREG(s->obj->mode) ? s->obj : NULL;
	if (!o) {
		if (s)
			return; /* a symlink of that name: leave it */
		o = sobj_new(fs, S_IFREG | perm, uid, gid);
		if (!o)
			return;
		if (!sname_add(ms, vpath, o)) {
			free(o);
			return;
		}
	}
	if (edit_room(fs, o->data.len, n) != 0)
		return;
	size_t old = o->data.len;
	if (lfs_membuf_set(&o->data, data, n) == 0) {
		edit_account(fs, old, n);
		o->mtime = o->ctime = now_real();
	}
}

static void ms_free(lfs_fs *fs, struct mstate *ms)
{
	while (ms->names)
		sname_remove(fs, ms, ms->names);
	while (ms->ovl)
		ovl_drop(fs, ms, ms->ovl->vpath);
	while (ms->hidden)
		hidden_clear(fs, ms, ms->hidden->vpath);
	uint64_t h;
	while (ms->pbase)
		pbase_take(ms, ms->pbase->vpath, &h);
	merr_clear_all(ms);
	pthread_mutex_destroy(&ms->commit_mu);
	free(ms->rel);
	free(ms);
}

/* Parent folder path of view path @p vpath ("" = the model folder), into @p buf. */
static void vdir_of(const char *vpath, char *buf, size_t bufsz)
{
	const char *sl = strrchr(vpath, '/');
	size_t l = sl ? (size_t)(sl - vpath) : 0;
	if (l >= bufsz)
		l = bufsz - 1;
	memcpy(buf, vpath, l);
	buf[l] = '\0';
}

/* ------------------------------------------------------------------ */
/* setup                                                               */

int lfs_fs_new(const char *source, const lfs_fs_opts *opts, lfs_fs **out)
{
	*out = NULL;
	lfs_fs *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return ENOMEM;
	fs->o = *opts;
	if (!fs->o.max_model_size)
		fs->o.max_model_size = (size_t)256 << 20;
	fs->ifd = fs->stopfd = fs->kickfd = fs->rootfd = -1;
	fs->edit_max = fs->o.edit_bytes ? fs->o.edit_bytes : (size_t)512 << 20;
	if (!(fs->o.unlink_grace > 0))
		fs->o.unlink_grace = 1.0;
	pthread_mutex_init(&fs->mu, NULL);
	clock_gettime(CLOCK_REALTIME, &fs->start);
	fs->uid = getuid();
	fs->gid = getgid();
	lfs_cache_init(&fs->cache, fs->o.cache_bytes, fs->o.cache_entries);
	fs->source = realpath(source, NULL);
	int err = 0;
	if (!fs->source) {
		err = errno;
		fs_log(fs, LFS_LOG_ERR, "%s: %s", source, strerror(err));
		goto fail;
	}
	fs->rootfd = open(fs->source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fs->rootfd < 0) {
		err = errno;
		fs_log(fs, LFS_LOG_ERR, "%s: %s", source, strerror(err));
		goto fail;
	}
	fs->stopfd = eventfd(0, EFD_CLOEXEC);
	fs->kickfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fs->stopfd < 0 || fs->kickfd < 0) {
		err = errno;
		fs_log(fs, LFS_LOG_ERR, "eventfd: %s", strerror(err));
		goto fail;
	}
	if (fs->o.watch) {
		fs->ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
		if (fs->ifd < 0) {
			fs_log(fs, LFS_LOG_WARNING, "inotify unavailable (%s): SOURCE changes show "
			       "only after the cache timeout", strerror(errno));
			fs->o.watch = false;
		}
	}
	/* Slots 1..3: root, /.legacyfs, /.legacyfs/errors (pinned). */
	uint64_t id;
	if (alloc_id(fs, &id) != 0) { /* grows the tables */
		err = ENOMEM;
		goto fail;
	}
	fs->free_ids[fs->nfree++] = id;
	struct node *root = node_new(fs, LFS_FS_ROOT_ID, K_ROOT, NULL, "", strdup("."));
	struct node *ctl = root ? node_new(fs, CTL_ID, K_CTLDIR, root, LFS_FS_CTL_NAME, NULL) : NULL;
	struct node *errs = ctl ? node_new(fs, ERRORS_ID, K_CTLERR, ctl, LFS_FS_ERRORS_NAME, NULL) : NULL;
	if (!errs || !root->rel) {
		err = ENOMEM;
		goto fail;
	}
	struct stat st;
	if (fstat(fs->rootfd, &st) != 0) {
		err = errno;
		goto fail;
	}
	root->src_dev = (uint64_t)st.st_dev;
	root->src_ino = root->sino = (uint64_t)st.st_ino;
	ctl->sino = CTL_INO;
	errs->sino = ERRORS_INO;
	add_watch(fs, root);
	*out = fs;
	return 0;
fail:
	lfs_fs_free(fs);
	return err ? err : ENOMEM;
}

void lfs_fs_free(lfs_fs *fs)
{
	if (!fs)
		return;
	lfs_fs_watch_stop(fs);
	for (size_t i = 0; i < fs->nslots; i++) {
		struct node *n = fs->slots[i];
		if (!n)
			continue;
		snap_unref(n->snap);
		if (n->sobj)
			sobj_unref(fs, n->sobj);
		free(n->name);
		free(n->rel);
		free(n);
	}
	while (fs->mstates) {
		struct mstate *ms = fs->mstates;
		fs->mstates = ms->next;
		ms_free(fs, ms);
	}
	for (size_t i = 0; i < fs->pending.n; i++)
		free(fs->pending.v[i].name);
	free(fs->pending.v);
	if (fs->kickfd >= 0)
		close(fs->kickfd);
	if (fs->served) {
		for (size_t i = 0; i < SERVED_SLOTS; i++)
			free(fs->served[i].key);
		free(fs->served);
	}
	free(fs->slots);
	free(fs->slot_gen);
	free(fs->free_ids);
	free(fs->nh);
	lfs_cache_destroy(&fs->cache);
	lfs_errlog_free(&fs->errors);
	if (fs->ifd >= 0)
		close(fs->ifd);
	if (fs->stopfd >= 0)
		close(fs->stopfd);
	if (fs->rootfd >= 0)
		close(fs->rootfd);
	free(fs->source);
	pthread_mutex_destroy(&fs->mu);
	free(fs);
}

/* ------------------------------------------------------------------ */
/* lookup / forget                                                     */

static void entry_timeouts(lfs_fs *fs, struct node *n, lfs_fs_entry *e)
{
	bool volatile_node = n->kind == K_CTLERR || n->kind == K_MERR;
	e->entry_timeout = volatile_node ? 0 : fs->o.timeout;
	e->attr_timeout = volatile_node ? 0 : fs->o.timeout;
}

/* Find the hashed child (@p parent, @p name) of @p kind showing source (dev, ino), or make it. */
static struct node *child_for(lfs_fs *fs, struct node *parent, const char *name, enum nkind kind,
			      uint64_t dev, uint64_t ino, const char *rel, int *err)
{
	struct node *c = find_child(fs, parent, name);
	/* Generated nodes belong to their model folder whatever its inode (a
	 * commit replaces the model file); scratch nodes to their object. */
	bool generated = kind == K_VDIR || kind == K_VFILE || kind == K_MERR;
	if (c && (c->kind != kind || (!generated && (c->src_dev != dev || c->src_ino != ino)))) {
		/* SOURCE changed what this name is: the old node lives on, unfindable,
		 * until the kernel forgets it; requests on it get ESTALE. */
		nh_remove(fs, c);
		c = NULL;
	}
	if (!c) {
		char *r = strdup(rel);
		c = r ? node_new(fs, 0, kind, parent, name, r) : NULL;
		if (!c) {
			*err = ENOMEM;
			return NULL;
		}
		c->src_dev = dev;
		c->src_ino = ino;
		if (kind == K_VDIR || kind == K_VFILE || kind == K_MERR || kind == K_SCRATCH) {
			c->model = parent->kind == K_MODEL ? parent : parent->model;
			c->sino = kind == K_SCRATCH ? ino : view_ino(c->model, c->rel);
		} else {
			c->sino = ino;
		}
		if (kind == K_DIR)
			add_watch(fs, c);
	}
	return c;
}

static int lookup_source(lfs_fs *fs, struct node *p, const char *name, lfs_fs_entry *e)
{
	if (p->kind == K_ROOT && strcmp(name, LFS_FS_CTL_NAME) == 0) {
		pthread_mutex_lock(&fs->mu);
		struct node *c = fs->slots[CTL_ID];
		c->nlookup++;
		e->ino = c->id;
		e->generation = c->gen;
		fill_ctl(fs, &e->attr, false);
		entry_timeouts(fs, c, e);
		pthread_mutex_unlock(&fs->mu);
		return 0;
	}
	char *rel = join_rel(p->rel, name);
	if (!rel)
		return ENAMETOOLONG;
	struct srcinfo si;
	int r = classify(fs, rel, &si);
	if (r) {
		free(rel);
		return r;
	}
	pthread_mutex_lock(&fs->mu);
	struct node *c = child_for(fs, p, name, si.kind, (uint64_t)si.st.st_dev,
				   (uint64_t)si.st.st_ino, rel, &r);
	if (c) {
		c->nlookup++;
		e->ino = c->id;
		e->generation = c->gen;
		fill_source(&e->attr, &si);
		entry_timeouts(fs, c, e);
	}
	if (si.ce)
		lfs_cache_release(&fs->cache, si.ce);
	pthread_mutex_unlock(&fs->mu);
	free(rel);
	return r;
}

/*
 * Attributes of generated-side node @p c (fs->mu held): view (its overlay
 * when edited), view folder, scratch object, errors.txt. @p si: the model's
 * current views.
 */
static int fill_gen(lfs_fs *fs, struct node *c, const struct srcinfo *si, struct stat *a)
{
	const lfs_viewset *vs = &si->ce->vs;
	struct mstate *ms = ms_find(fs, c->model->rel);
	switch (c->kind) {
	case K_VFILE: {
		const lfs_view *v = lfs_viewset_find(vs, c->rel);
		if (!v)
			return ESTALE;
		struct overlay *o = ovl_find(ms, c->rel);
		bool w = view_writable(vs, c->rel);
		if (o)
			fill_view_file(a, &si->st, o->text.len, &o->mtime, w, c->sino);
		else
			fill_view_file(a, &si->st, v->size, NULL, w, c->sino);
		return 0;
	}
	case K_VDIR:
		if (!view_is_dir(vs, c->rel))
			return ESTALE;
		fill_virtual_dir(a, &si->st, vs, c->rel, c->sino);
		return 0;
	case K_SCRATCH:
		fill_scratch(a, &si->st, c->sobj);
		return 0;
	case K_MERR: {
		struct timespec t;
		size_t n = merr_render(ms, NULL, &t);
		fill_view_file(a, &si->st, n, &t, false, c->sino);
		a->st_mode = S_IFREG | 0444;
		return 0;
	}
	default:
		return EINVAL;
	}
}

static int lookup_view(lfs_fs *fs, struct node *p, const char *name, lfs_fs_entry *e)
{
	struct node *model = p->kind == K_MODEL ? p : p->model;
	struct srcinfo si;
	int r = model_views(fs, model, &si);
	if (r)
		return r;
	char *vpath = join_view(p, name);
	if (!vpath) {
		srcinfo_release(fs, &si);
		return ENOMEM;
	}
	const lfs_viewset *vs = &si.ce->vs;
	const lfs_view *v = lfs_viewset_find(vs, vpath);
	bool isdir = !v && view_is_dir(vs, vpath);
	pthread_mutex_lock(&fs->mu);
	struct mstate *ms = ms_find(fs, model->rel);
	struct node *c = NULL;
	struct sname *sn;
	if (v && hidden_active(fs, ms, vpath)) {
		r = ENOENT; /* deleted, within its grace time */
	} else if (v || isdir) {
		c = child_for(fs, p, name, v ? K_VFILE : K_VDIR, model->src_dev, model->src_ino, vpath, &r);
	} else if ((sn = sname_find(ms, vpath)) != NULL) {
		c = child_for(fs, p, name, K_SCRATCH, 0, sn->obj->sino, vpath, &r);
		if (c && !c->sobj) {
			c->sobj = sn->obj;
			sn->obj->refs++;
		}
	} else if (p->kind == K_MODEL && strcmp(name, LFS_FS_MODEL_ERRORS_NAME) == 0 && ms && ms->errs) {
		c = child_for(fs, p, name, K_MERR, 0, 0, vpath, &r);
	} else {
		r = ENOENT;
	}
	if (c) {
		r = fill_gen(fs, c, &si, &e->attr);
		if (!r) {
			c->nlookup++;
			e->ino = c->id;
			e->generation = c->gen;
			entry_timeouts(fs, c, e);
		}
	}
	lfs_cache_release(&fs->cache, si.ce);
	pthread_mutex_unlock(&fs->mu);
	free(vpath);
	return r;
}

int lfs_fs_lookup(lfs_fs *fs, uint64_t parent, const char *name, lfs_fs_entry *e)
{
	memset(e, 0, sizeof(*e));
	pthread_mutex_lock(&fs->mu);
	struct node *p = get_node(fs, parent);
	enum nkind pk = p ? p->kind : K_OTHER;
	pthread_mutex_unlock(&fs->mu);
	if (!p)
		return ESTALE;
	/* The kernel holds a reference to @p parent during the request: p stays valid. */
	int r;
	if (is_dot(name) || strchr(name, '/'))
		r = ENOENT;
	else
		switch (pk) {
		case K_ROOT:
		case K_DIR:
			r = lookup_source(fs, p, name, e);
			break;
		case K_MODEL:
		case K_VDIR:
			r = lookup_view(fs, p, name, e);
			break;
		case K_CTLDIR:
			if (strcmp(name, LFS_FS_ERRORS_NAME) == 0) {
				pthread_mutex_lock(&fs->mu);
				struct node *c = fs->slots[ERRORS_ID];
				c->nlookup++;
				e->ino = c->id;
				e->generation = c->gen;
				fill_ctl(fs, &e->attr, true);
				entry_timeouts(fs, c, e);
				pthread_mutex_unlock(&fs->mu);
				r = 0;
			} else {
				r = ENOENT;
			}
			break;
		default:
			r = ENOTDIR;
		}
	if (r == ENOENT) {
		memset(e, 0, sizeof(*e));
		/* Negative dentries are safe to cache only when the watcher drops them;
		 * never in model folders (errors.txt, *.rejected and deleted views
		 * appear there without any request for the name). */
		e->entry_timeout = fs->ifd >= 0 && (pk == K_ROOT || pk == K_DIR) ? fs->o.timeout : 0;
	}
	return r;
}

void lfs_fs_forget(lfs_fs *fs, uint64_t ino, uint64_t nlookup)
{
	pthread_mutex_lock(&fs->mu);
	struct node *n = get_node(fs, ino);
	if (n) {
		n->nlookup = n->nlookup > nlookup ? n->nlookup - nlookup : 0;
		maybe_free(fs, n);
	}
	pthread_mutex_unlock(&fs->mu);
}

/* ------------------------------------------------------------------ */
/* getattr / readlink / open / statfs                                  */

/* Snapshot of what a node is (copied under the lock, used unlocked). */
struct nodeinfo {
	enum nkind kind;
	struct node *node;  /* valid while the kernel holds the inode (see lookup) */
	struct node *model;
};

static int node_info(lfs_fs *fs, uint64_t ino, struct nodeinfo *ni)
{
	pthread_mutex_lock(&fs->mu);
	struct node *n = get_node(fs, ino);
	if (n) {
		ni->kind = n->kind;
		ni->node = n;
		ni->model = n->model;
	}
	pthread_mutex_unlock(&fs->mu);
	return n ? 0 : ESTALE;
}

/* Is the node still what SOURCE shows under its name? */
static bool source_matches(const struct node *n, const struct srcinfo *si)
{
	if (n->kind == K_ROOT)
		return si->kind == K_DIR;
	return si->kind == n->kind && (uint64_t)si->st.st_ino == n->src_ino &&
	       (uint64_t)si->st.st_dev == n->src_dev;
}

/* Unhash a node that no longer matches SOURCE so the next lookup makes a new one. */
static void detach(lfs_fs *fs, struct node *n)
{
	pthread_mutex_lock(&fs->mu);
	nh_remove(fs, n);
	pthread_mutex_unlock(&fs->mu);
}

int lfs_fs_getattr(lfs_fs *fs, uint64_t ino, struct stat *st, double *timeout)
{
	struct nodeinfo ni;
	int r = node_info(fs, ino, &ni);
	if (r)
		return r;
	*timeout = fs->o.timeout;
	switch (ni.kind) {
	case K_CTLDIR:
	case K_CTLERR:
		pthread_mutex_lock(&fs->mu);
		fill_ctl(fs, st, ni.kind == K_CTLERR);
		pthread_mutex_unlock(&fs->mu);
		if (ni.kind == K_CTLERR)
			*timeout = 0;
		return 0;
	case K_VDIR:
	case K_VFILE:
	case K_SCRATCH:
	case K_MERR: {
		struct srcinfo si;
		r = model_views(fs, ni.model, &si);
		if (r)
			return r;
		pthread_mutex_lock(&fs->mu);
		r = fill_gen(fs, ni.node, &si, st);
		if (ni.kind == K_MERR)
			*timeout = 0;
		pthread_mutex_unlock(&fs->mu);
		srcinfo_release(fs, &si);
		if (r == ESTALE)
			detach(fs, ni.node);
		return r;
	}
	default: {
		struct srcinfo si;
		r = classify(fs, ni.node->rel, &si);
		if (r)
			return r == ENOENT ? ESTALE : r;
		if (!source_matches(ni.node, &si)) {
			r = ESTALE;
			detach(fs, ni.node);
		} else {
			fill_source(st, &si);
		}
		srcinfo_release(fs, &si);
		return r;
	}
	}
}

int lfs_fs_readlink(lfs_fs *fs, uint64_t ino, char *buf, size_t bufsz)
{
	struct nodeinfo ni;
	int r = node_info(fs, ino, &ni);
	if (r)
		return r;
	if (ni.kind == K_SCRATCH) {
		pthread_mutex_lock(&fs->mu);
		const struct sobj *o = ni.node->sobj;
		if (S_ISLNK(o->mode) && o->data.len < bufsz) {
			memcpy(buf, o->data.data, o->data.len);
			buf[o->data.len] = '\0';
		} else {
			r = S_ISLNK(o->mode) ? ENAMETOOLONG : EINVAL;
		}
		pthread_mutex_unlock(&fs->mu);
		return r;
	}
	if (ni.kind != K_LINK)
		return EINVAL;
	ssize_t n = readlinkat(fs->rootfd, ni.node->rel, buf, bufsz - 1);
	if (n < 0)
		return errno;
	buf[n] = '\0';
	return 0;
}

int lfs_fs_open_check(lfs_fs *fs, uint64_t ino, int flags, bool dir, bool *is_view)
{
	struct nodeinfo ni;
	int r = node_info(fs, ino, &ni);
	if (r)
		return r;
	if (is_view)
		*is_view = ni.kind == K_VFILE;
	bool is_dir = ni.kind == K_ROOT || ni.kind == K_DIR || ni.kind == K_MODEL ||
		      ni.kind == K_VDIR || ni.kind == K_CTLDIR;
	if (dir && !is_dir)
		return ENOTDIR;
	if (!dir && is_dir)
		return EISDIR;
	bool wr = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
	if (!wr)
		return 0;
	switch (ni.kind) {
	case K_CTLERR:
	case K_MERR:
		return EROFS;
	case K_VFILE: {
		struct srcinfo si;
		r = model_views(fs, ni.model, &si);
		if (r)
			return r;
		if (!view_writable(&si.ce->vs, ni.node->rel))
			r = EROFS;
		srcinfo_release(fs, &si);
		return r;
	}
	default:
		return 0;
	}
}

int lfs_fs_statfs(lfs_fs *fs, struct statvfs *sv)
{
	if (fstatvfs(fs->rootfd, sv) != 0)
		return errno;
	return 0;
}

/* ------------------------------------------------------------------ */
/* read                                                                */

enum { HOLD_NONE, HOLD_ENTRY, HOLD_MALLOC };

int lfs_fs_read_begin(lfs_fs *fs, uint64_t ino, size_t size, off_t off, lfs_fs_read *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	struct nodeinfo ni;
	int err = node_info(fs, ino, &ni);
	if (err)
		return err;
	if (off < 0)
		return EINVAL;
	fs_log(fs, LFS_LOG_DEBUG, "read %s%s%s off=%lld size=%zu",
	       ni.model ? ni.model->rel : "", ni.model ? "/" : "", ni.node->rel ? ni.node->rel : "(ctl)",
	       (long long)off, size);
	switch (ni.kind) {
	case K_FILE: {
		int fd = openat(fs->rootfd, ni.node->rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return errno == ENOENT ? ESTALE : errno;
		r->fd = fd;
		return 0;
	}
	case K_SCRATCH:
	case K_MERR: {
		pthread_mutex_lock(&fs->mu);
		char *all = NULL;
		const char *src = NULL;
		size_t total = 0;
		if (ni.kind == K_SCRATCH) {
			if (S_ISLNK(ni.node->sobj->mode))
				err = EINVAL;
			src = ni.node->sobj->data.data;
			total = ni.node->sobj->data.len;
		} else {
			total = merr_render(ms_find(fs, ni.model->rel), &all, NULL);
			src = all;
		}
		if (!err && (uint64_t)off < total) {
			size_t n = total - (size_t)off < size ? total - (size_t)off : size;
			char *copy = malloc(n);
			if (copy) {
				memcpy(copy, src + off, n);
				r->data = copy;
				r->len = n;
				r->hold = copy;
				r->hold_kind = HOLD_MALLOC;
			} else {
				err = ENOMEM;
			}
		}
		pthread_mutex_unlock(&fs->mu);
		free(all);
		return err;
	}
	case K_VFILE: {
		struct srcinfo si;
		err = model_views(fs, ni.model, &si);
		if (err)
			return err;
		const lfs_view *v = lfs_viewset_find(&si.ce->vs, ni.node->rel);
		if (!v) {
			srcinfo_release(fs, &si);
			return ESTALE;
		}
		pthread_mutex_lock(&fs->mu);
		struct overlay *o = ovl_find(ms_find(fs, ni.model->rel), ni.node->rel);
		if (o) {
			/* The text being edited. */
			if ((uint64_t)off < o->text.len) {
				size_t n = o->text.len - (size_t)off < size ? o->text.len - (size_t)off : size;
				char *copy = malloc(n);
				if (copy) {
					memcpy(copy, o->text.data + off, n);
					r->data = copy;
					r->len = n;
					r->hold = copy;
					r->hold_kind = HOLD_MALLOC;
				} else {
					err = ENOMEM;
				}
			}
			pthread_mutex_unlock(&fs->mu);
			srcinfo_release(fs, &si);
			return err;
		}
		/* Remember which generated text was served (stale-save check). Only
		 * for views that can be saved: nothing to remember otherwise. */
		const lfs_cache_key *k = &si.ce->key;
		bool track = view_writable(&si.ce->vs, ni.node->rel);
		bool known = !track || served_known(fs, ni.model->rel, ni.node->rel, k);
		pthread_mutex_unlock(&fs->mu);
		if (!known) {
			uint64_t h = text_hash(v->data, v->size);
			pthread_mutex_lock(&fs->mu);
			served_set(fs, ni.model->rel, ni.node->rel, h, k);
			pthread_mutex_unlock(&fs->mu);
		}
		if ((uint64_t)off < v->size) {
			r->data = v->data + off;
			r->len = v->size - (size_t)off < size ? v->size - (size_t)off : size;
		}
		r->hold = si.ce;
		r->hold_kind = HOLD_ENTRY;
		return 0;
	}
	case K_CTLERR: {
		pthread_mutex_lock(&fs->mu);
		size_t total = fs->errors.text.len;
		if ((uint64_t)off < total) {
			size_t n = total - (size_t)off < size ? total - (size_t)off : size;
			char *copy = malloc(n);
			if (copy) {
				memcpy(copy, fs->errors.text.data + off, n);
				r->data = copy;
				r->len = n;
				r->hold = copy;
				r->hold_kind = HOLD_MALLOC;
			} else {
				err = ENOMEM;
			}
		}
		pthread_mutex_unlock(&fs->mu);
		return err;
	}
	case K_LINK:
	case K_OTHER:
		return EINVAL;
	default:
		return EISDIR;
	}
}

void lfs_fs_read_end(lfs_fs *fs, lfs_fs_read *r)
{
	if (r->fd >= 0)
		close(r->fd);
	if (r->hold_kind == HOLD_ENTRY) {
		pthread_mutex_lock(&fs->mu);
		lfs_cache_release(&fs->cache, r->hold);
		pthread_mutex_unlock(&fs->mu);
	} else if (r->hold_kind == HOLD_MALLOC) {
		free(r->hold);
	}
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

/* ------------------------------------------------------------------ */
/* readdir                                                             */

static int dsent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dsent *)a)->name, ((const struct dsent *)b)->name);
}

static int snap_add(struct dirsnap *s, size_t *cap, const char *name, size_t len, uint64_t ino,
		    unsigned char type)
{
	if (s->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 32;
		struct dsent *ne = realloc(s->ents, nc * sizeof(*ne));
		if (!ne)
			return ENOMEM;
		s->ents = ne;
		*cap = nc;
	}
	char *nm = strndup(name, len);
	if (!nm)
		return ENOMEM;
	s->ents[s->n].name = nm;
	s->ents[s->n].ino = ino;
	s->ents[s->n].type = type;
	s->n++;
	return 0;
}

/* Read source folder @p n into a new listing (unlocked; models are classified and built). */
static int snap_build_source(lfs_fs *fs, struct node *n, uint64_t parent_ino, uint64_t gen,
			     struct dirsnap **out)
{
	*out = NULL;
	int fd = openat(fs->rootfd, n->rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? ESTALE : errno;
	struct stat dst;
	if (fstat(fd, &dst) != 0) {
		int e = errno;
		close(fd);
		return e;
	}
	DIR *dp = fdopendir(fd);
	if (!dp) {
		int e = errno;
		close(fd);
		return e;
	}
	struct dirsnap *s = calloc(1, sizeof(*s));
	size_t cap = 0;
	int err = s ? 0 : ENOMEM;
	if (s) {
		s->refs = 1;
		s->gen = gen;
		s->dev = (uint64_t)dst.st_dev;
		s->ino = (uint64_t)dst.st_ino;
		s->mtime_ns = ts_ns(&dst.st_mtim);
		s->ctime_ns = ts_ns(&dst.st_ctim);
		err = snap_add(s, &cap, ".", 1, n->sino, DT_DIR);
		if (!err)
			err = snap_add(s, &cap, "..", 2, parent_ino, DT_DIR);
		if (!err && n->kind == K_ROOT)
			err = snap_add(s, &cap, LFS_FS_CTL_NAME, strlen(LFS_FS_CTL_NAME), CTL_INO, DT_DIR);
	}
	size_t first_sorted = s ? s->n : 0;
	struct dirent *de;
	while (!err && (errno = 0, de = readdir(dp)) != NULL) {
		if (is_dot(de->d_name))
			continue;
		if (n->kind == K_ROOT && strcmp(de->d_name, LFS_FS_CTL_NAME) == 0)
			continue; /* shadowed by the control folder */
		unsigned char type = de->d_type;
		uint64_t ino = (uint64_t)de->d_ino;
		if (type == DT_REG || type == DT_UNKNOWN) {
			char *rel = join_rel(n->rel, de->d_name);
			if (!rel)
				continue;
			struct srcinfo si;
			if (classify(fs, rel, &si) == 0) {
				type = si.kind == K_MODEL ? DT_DIR : IFTODT(si.st.st_mode);
				ino = (uint64_t)si.st.st_ino;
				srcinfo_release(fs, &si);
			}
			free(rel);
		}
		err = snap_add(s, &cap, de->d_name, strlen(de->d_name), ino, type);
	}
	if (!err && errno)
		err = errno;
	closedir(dp);
	if (err) {
		snap_unref(s);
		return err;
	}
	if (s->n - first_sorted > 1)
		qsort(s->ents + first_sorted, s->n - first_sorted, sizeof(*s->ents), dsent_cmp);
	*out = s;
	return 0;
}

struct vlist_ctx {
	struct dirsnap *s;
	size_t cap;
	const struct node *model;
	const char *vpath;
	int err;
};

static int vlist_cb(void *ctx, const char *name, size_t len, bool is_dir, const lfs_view *v)
{
	struct vlist_ctx *c = ctx;
	(void)v;
	char path[PATH_MAX];
	size_t pl = strlen(c->vpath);
	if (pl + 1 + len + 1 > sizeof(path))
		return 0;
	memcpy(path, c->vpath, pl);
	if (pl)
		path[pl++] = '/';
	memcpy(path + pl, name, len);
	path[pl + len] = '\0';
	c->err = snap_add(c->s, &c->cap, name, len, view_ino(c->model, path), is_dir ? DT_DIR : DT_REG);
	return c->err;
}

/* The listing of a model folder or view folder (built from the cached views). */
static int snap_build_view(lfs_fs *fs, struct node *n, uint64_t parent_ino, struct dirsnap **out)
{
	*out = NULL;
	struct node *model = n->kind == K_MODEL ? n : n->model;
	struct srcinfo si;
	int r = model_views(fs, model, &si);
	if (r)
		return r;
	const char *vpath = n->kind == K_MODEL ? "" : n->rel;
	struct vlist_ctx c = { .model = model, .vpath = vpath };
	c.s = calloc(1, sizeof(*c.s));
	if (!c.s) {
		srcinfo_release(fs, &si);
		return ENOMEM;
	}
	c.s->refs = 1;
	if (n->kind == K_VDIR && !view_is_dir(&si.ce->vs, vpath))
		r = ESTALE;
	if (!r)
		r = snap_add(c.s, &c.cap, ".", 1, n->sino, DT_DIR);
	if (!r)
		r = snap_add(c.s, &c.cap, "..", 2, parent_ino, DT_DIR);
	if (!r) {
		view_children(&si.ce->vs, vpath, vlist_cb, &c);
		r = c.err;
	}
	if (!r) {
		/* Editing state: deleted views are absent, scratch names and
		 * errors.txt present (docs/editing.md). */
		pthread_mutex_lock(&fs->mu);
		struct mstate *ms = ms_find(fs, model->rel);
		if (ms) {
			size_t pl = strlen(vpath);
			size_t w = 2;
			for (size_t i = 2; i < c.s->n; i++) {
				struct dsent *d = &c.s->ents[i];
				bool gone = false;
				if (d->type == DT_REG && ms->hidden) {
					char *vp = join_view(n, d->name);
					gone = vp && hidden_active(fs, ms, vp);
					free(vp);
				}
				if (gone)
					free(d->name);
				else
					c.s->ents[w++] = *d;
			}
			c.s->n = w;
			char dir[PATH_MAX];
			for (struct sname *sn = ms->names; sn && !r; sn = sn->next) {
				vdir_of(sn->vpath, dir, sizeof(dir));
				if (strcmp(dir, vpath) != 0)
					continue;
				const char *nm = sn->vpath + (pl ? pl + 1 : 0);
				r = snap_add(c.s, &c.cap, nm, strlen(nm), sn->obj->sino,
					     S_ISLNK(sn->obj->mode) ? DT_LNK : DT_REG);
			}
			if (!r && n->kind == K_MODEL && ms->errs &&
			    !lfs_viewset_find(&si.ce->vs, LFS_FS_MODEL_ERRORS_NAME))
				r = snap_add(c.s, &c.cap, LFS_FS_MODEL_ERRORS_NAME,
					     strlen(LFS_FS_MODEL_ERRORS_NAME),
					     view_ino(model, LFS_FS_MODEL_ERRORS_NAME), DT_REG);
		}
		pthread_mutex_unlock(&fs->mu);
	}
	srcinfo_release(fs, &si);
	if (r) {
		snap_unref(c.s);
		return r;
	}
	*out = c.s;
	return 0;
}

static int snap_build_ctl(struct dirsnap **out)
{
	struct dirsnap *s = calloc(1, sizeof(*s));
	size_t cap = 0;
	if (!s)
		return ENOMEM;
	s->refs = 1;
	int r = snap_add(s, &cap, ".", 1, CTL_INO, DT_DIR);
	if (!r)
		r = snap_add(s, &cap, "..", 2, 0, DT_DIR);
	if (!r)
		r = snap_add(s, &cap, LFS_FS_ERRORS_NAME, strlen(LFS_FS_ERRORS_NAME), ERRORS_INO, DT_REG);
	if (r) {
		snap_unref(s);
		return r;
	}
	*out = s;
	return 0;
}

/* The listing of a source folder: the cached one when still valid, else read anew. */
static int source_snap(lfs_fs *fs, struct node *n, off_t off, uint64_t parent_ino, struct dirsnap **out)
{
	pthread_mutex_lock(&fs->mu);
	struct dirsnap *s = n->snap;
	uint64_t gen = n->dirty_gen;
	if (s)
		s->refs++;
	pthread_mutex_unlock(&fs->mu);
	if (s && off == 0) {
		/* Restarting a listing: reuse the snapshot only when nothing changed. */
		struct stat dst;
		bool valid = fs->ifd >= 0 && s->gen == gen &&
			     fstatat(fs->rootfd, n->rel, &dst, AT_SYMLINK_NOFOLLOW) == 0 &&
			     (uint64_t)dst.st_ino == s->ino && (uint64_t)dst.st_dev == s->dev &&
			     ts_ns(&dst.st_mtim) == s->mtime_ns && ts_ns(&dst.st_ctim) == s->ctime_ns;
		if (!valid) {
			pthread_mutex_lock(&fs->mu);
			snap_unref(s);
			pthread_mutex_unlock(&fs->mu);
			s = NULL;
		}
	}
	if (s) {
		*out = s;
		return 0;
	}
	int r = snap_build_source(fs, n, parent_ino, gen, &s);
	if (r)
		return r;
	pthread_mutex_lock(&fs->mu);
	snap_unref(n->snap);
	n->snap = s;
	s->refs++;
	pthread_mutex_unlock(&fs->mu);
	*out = s;
	return 0;
}

int lfs_fs_readdir(lfs_fs *fs, uint64_t ino, off_t off, bool plus, lfs_fs_dirent_fn fn, void *ctx)
{
	struct nodeinfo ni;
	int r = node_info(fs, ino, &ni);
	if (r)
		return r;
	if (off < 0)
		return EINVAL;
	pthread_mutex_lock(&fs->mu);
	uint64_t parent_ino = ni.node->parent ? ni.node->parent->sino : ni.node->sino;
	pthread_mutex_unlock(&fs->mu);
	struct dirsnap *s = NULL;
	switch (ni.kind) {
	case K_ROOT:
	case K_DIR:
		r = source_snap(fs, ni.node, off, parent_ino, &s);
		break;
	case K_MODEL:
	case K_VDIR:
		r = snap_build_view(fs, ni.node, parent_ino, &s);
		break;
	case K_CTLDIR:
		r = snap_build_ctl(&s);
		break;
	default:
		return ENOTDIR;
	}
	if (r)
		return r;
	for (size_t i = (size_t)off; i < s->n; i++) {
		const struct dsent *d = &s->ents[i];
		lfs_fs_entry e;
		memset(&e, 0, sizeof(e));
		if (plus && !is_dot(d->name) && lfs_fs_lookup(fs, ino, d->name, &e) != 0)
			memset(&e, 0, sizeof(e)); /* vanished meanwhile: list it without attributes */
		if (!e.ino) {
			e.attr.st_ino = d->ino;
			e.attr.st_mode = DTTOIF(d->type);
		}
		if (fn(ctx, d->name, &e, (off_t)(i + 1)) != 0) {
			if (e.ino)
				lfs_fs_forget(fs, e.ino, 1);
			break;
		}
	}
	pthread_mutex_lock(&fs->mu);
	snap_unref(s);
	pthread_mutex_unlock(&fs->mu);
	return 0;
}

/* ------------------------------------------------------------------ */
/* editing: commit (docs/editing.md "Commit")                          */

static bool is_source_dir(enum nkind k)
{
	return k == K_ROOT || k == K_DIR;
}

static bool is_model_ns(enum nkind k)
{
	return k == K_MODEL || k == K_VDIR;
}

/* A text to commit, copied out of an overlay or a scratch file. */
struct ctext {
	char *data;
	size_t n;
	bool base_valid;
	uint64_t base_hash;
	uint64_t gen;
};

static bool pbase_peek(struct mstate *ms, const char *vpath, uint64_t *hash)
{
	for (struct pbase *b = ms->pbase; b; b = b->next)
		if (strcmp(b->vpath, vpath) == 0) {
			*hash = b->hash;
			return true;
		}
	return false;
}

/*
 * After a save of @p vpath: build the views of the new file now (the next
 * access is instant) and take the new text of @p vpath as what its editor
 * is based on (the editor holds the text it wrote, which now is the model):
 * a second save from the same editor is not "stale". Unlocked.
 */
static void served_after_commit(lfs_fs *fs, const char *rel, const char *vpath, const struct stat *st)
{
	lfs_centry *ce = entry_for(fs, rel, st);
	if (!ce)
		return;
	const lfs_view *v = ce->kind == LFS_SOURCE_MODEL ? lfs_viewset_find(&ce->vs, vpath) : NULL;
	uint64_t h = v ? text_hash(v->data, v->size) : 0;
	pthread_mutex_lock(&fs->mu);
	if (v)
		served_set(fs, rel, vpath, h, &ce->key);
	lfs_cache_release(&fs->cache, ce);
	pthread_mutex_unlock(&fs->mu);
}

/*
 * Parse @p t as the new text of view @p vpath of the model file @p rel and
 * write the result into SOURCE. The caller holds the model's commit_mu, not
 * fs->mu. Returns 0 (*noop: the text encodes to the bytes already there, the
 * file is left alone), EINVAL (bad edit or stale base; @p msg holds the
 * gcc-style lines), or the errno of reading/writing SOURCE (@p msg says so).
 */


static int do_commit(lfs_fs *fs, struct node *model, const char *rel, const char *vpath,
		     const struct ctext *t, bool *noop, char *msg, size_t msgsz)
{
	*noop = false;
	msg[0] = '\0';
	uint8_t *orig = NULL;
	size_t n = 0;
	struct stat st;
	int r = lfs_read_source(fs->rootfd, rel, fs->o.max_model_size, &orig, &n, &st);
	if (r) {
		snprintf(msg, msgsz, "%s: error: not saved: cannot read the model file %s: %s\n", vpath,
			 rel, strerror(r));
		return r;
	}
	if (t->base_valid) {
		/* Refuse a text based on a generated text that is no longer current. */
		lfs_centry *ce = entry_for(fs, rel, &st);
		bool decodes = ce && ce->kind == LFS_SOURCE_MODEL;
		const lfs_view *v = decodes ? lfs_viewset_find(&ce->vs, vpath) : NULL;
		bool same = v && text_hash(v->data, v->size) == t->base_hash;
		if (ce) {
			pthread_mutex_lock(&fs->mu);
			lfs_cache_release(&fs->cache, ce);
			pthread_mutex_unlock(&fs->mu);
		}
		if (!same) {
			snprintf(msg, msgsz,
				 "%s: error: not saved: %s changed in SOURCE after this view was read%s; "
				 "read the view again and redo the edit\n",
				 vpath, rel, !decodes ? " (it no longer decodes)" :
				 !v ? " (this view no longer exists)" : " (this view's text is different now)");
			free(orig);
			return EINVAL;
		}
	}
	lfs_error err;
	memset(&err, 0, sizeof(err));
	uint8_t *out = NULL;
	size_t outn = 0;
	char *dir = strdup(rel);
	if (dir) {
		char *sl = strrchr(dir, '/');
		*(sl ? sl : dir) = '\0';
	}
	lfs_sibling_ctx sc = { fs->rootfd, dir ? dir : "", fs->o.max_model_size };
	lfs_err e = lfs_views_apply_ex(lfs_source_basename(rel), orig, n, vpath, t->data, t->n,
				       lfs_sibling_model_read, &sc, &out, &outn, &err);
	free(dir);
	if (e != LFS_OK) {
		free(orig);
		free(out);
		switch (e) {
		case LFS_ERR_PARSE:
			snprintf(msg, msgsz, "%s\n", err.msg);
			return EINVAL;
		case LFS_ERR_NOMEM:
			snprintf(msg, msgsz, "%s: error: not saved: out of memory\n", vpath);
			return ENOMEM;
		case LFS_ERR_UNSUPPORTED:
			snprintf(msg, msgsz, "%s: error: not saved: %s\n", vpath, err.msg);
			return EROFS;
		case LFS_ERR_IO:
			snprintf(msg, msgsz, "%s: error: not saved: %s\n", vpath, err.msg);
			return EIO;
		default:
			snprintf(msg, msgsz, "%s: error: not saved: %s\n", vpath, err.msg);
			return EINVAL;
		}
	}
	if (outn == n && (n == 0 || memcmp(out, orig, n) == 0)) {
		/* Same model: SOURCE keeps its bytes and its mtime. */
		*noop = true;
		free(orig);
		free(out);
		served_after_commit(fs, rel, vpath, &st);
		return 0;
	}
	struct stat nst;
	int kept = 1;
	char what[PATH_MAX + 64];
	what[0] = '\0';
	r = lfs_replace_file(fs->rootfd, rel, out, outn, &st, &nst, &kept, what, sizeof(what));
	free(orig);
	free(out);
	if (r) {
		snprintf(msg, msgsz, "%s: error: not saved: writing %s failed (%s): %s; the model file "
			 "is unchanged\n", vpath, rel, what, strerror(r));
		return r;
	}
	if (!kept)
		fs_log(fs, LFS_LOG_WARNING, "%s: saved, but the new file belongs to the daemon's user "
		       "(cannot give it back to %u:%u)", rel, (unsigned)st.st_uid, (unsigned)st.st_gid);
	pthread_mutex_lock(&fs->mu);
	/* The model folder now shows the new file (same node, new inode). */
	model->src_dev = (uint64_t)nst.st_dev;
	model->src_ino = (uint64_t)nst.st_ino;
	model->self_commit = fs->ifd >= 0;
	pthread_mutex_unlock(&fs->mu);
	served_after_commit(fs, rel, vpath, &nst);
	return 0;
}

/* After a commit attempt of view @p vpath (fs->mu held). */
static void commit_done(lfs_fs *fs, struct mstate *ms, struct node *model, const char *vpath,
			const struct ctext *t, int r, bool noop, const char *msg, bool from_overlay)
{
	char rej[PATH_MAX];
	snprintf(rej, sizeof(rej), "%s%s", vpath, LFS_FS_REJECTED_SUFFIX);
	struct overlay *o = from_overlay ? ovl_find(ms, vpath) : NULL;
	if (!r) {
		if (o && o->gen == t->gen)
			ovl_drop(fs, ms, vpath); /* the view shows the (re)generated text */
		else if (o)
			o->written = o->modified = false; /* newer writes arrived meanwhile */
		/* A real save answers the last refusal; a no-op (e.g. vim putting
		 * its backup back after a refusal) does not. */
		if (!noop)
			merr_clear(ms, vpath);
		uint64_t h;
		pbase_take(ms, vpath, &h);
		if (noop)
			fs->commit_noops++;
		else
			fs->commits++;
	} else {
		/* The view shows the generated text again; the refused text is
		 * kept in <view>.rejected (and in the editor's buffer). */
		if (o && o->gen == t->gen)
			ovl_drop(fs, ms, vpath);
		else if (o)
			o->written = o->modified = false;
		if (r == EINVAL)
			fs->commit_refused++;
		size_t need = strlen(msg) + strlen(vpath) + strlen(model->rel) + strlen(rej) + 160;
		char *full = malloc(need);
		if (full) {
			snprintf(full, need, "%s%s: note: the model file %s was not changed; the refused "
				 "text is kept in %s\n", msg, vpath, model->rel, rej);
			merr_set(ms, vpath, full);
			free(full);
		}
		scratch_put(fs, ms, rej, t->data, t->n, 0644, fs->uid, fs->gid);
	}
	/* Every view of the model (sizes, pages) and the listings (errors.txt,
	 * *.rejected): sent by the notification thread. */
	inval_subtree(&fs->pending, model);
	kick(fs);
}

/* Log the outcome of a commit (unlocked). */
static void commit_log(lfs_fs *fs, const char *rel, const char *vpath, int r, bool noop,
		       const char *msg)
{
	if (!r) {
		fs_log(fs, LFS_LOG_INFO, "%s: %s %s", rel, noop ? "unchanged by the save of" :
		       "saved from", vpath);
		return;
	}
	/* One log line per message line. */
	const char *p = msg;
	while (*p) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);
		fs_log(fs, LFS_LOG_WARNING, "%s: %.*s", rel, len, p);
		p += len + (nl ? 1 : 0);
	}
}

/*
 * Thread group (process) of thread @p tid, from /proc; @p tid itself when
 * /proc cannot say; 0 for 0.
 */
static pid_t tgid_of(pid_t tid)
{
	if (tid <= 0)
		return 0;
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tid;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return tid;
	buf[n] = '\0';
	const char *t = strstr(buf, "\nTgid:");
	long v = t ? strtol(t + 6, NULL, 10) : 0;
	return v > 0 ? (pid_t)v : tid;
}

/*
 * Commit the overlay of view node @p nd when it needs it: FSYNC (@p fsync),
 * or FLUSH by process @p closer (0 = any) when it wrote last.
 */
static int commit_overlay(lfs_fs *fs, struct node *nd, bool fsync, pid_t closer)
{
	pthread_mutex_lock(&fs->mu);
	struct node *model = nd->model;
	struct mstate *ms = ms_find(fs, model->rel);
	struct overlay *o = ovl_find(ms, nd->rel);
	bool need = o && (fsync ? (o->written || o->modified) :
			  (o->written && (!closer || !o->writer || o->writer == closer)));
	char *rel = need ? strdup(model->rel) : NULL;
	char *vpath = need ? strdup(nd->rel) : NULL;
	pthread_mutex_unlock(&fs->mu);
	if (!need)
		return 0;
	if (!rel || !vpath) {
		free(rel);
		free(vpath);
		return ENOMEM;
	}
	int r = 0;
	bool noop = false;
	char msg[1024];
	msg[0] = '\0';
	pthread_mutex_lock(&ms->commit_mu);
	pthread_mutex_lock(&fs->mu);
	o = ovl_find(ms, vpath);
	struct ctext t = { 0 };
	if (o && (o->written || (fsync && o->modified))) {
		t.data = malloc(o->text.len ? o->text.len : 1);
		if (t.data) {
			if (o->text.len)
				memcpy(t.data, o->text.data, o->text.len);
			t.n = o->text.len;
			t.base_valid = o->base_valid;
			t.base_hash = o->base_hash;
			t.gen = o->gen;
		} else {
			r = ENOMEM;
		}
	}
	pthread_mutex_unlock(&fs->mu);
	if (t.data) {
		r = do_commit(fs, model, rel, vpath, &t, &noop, msg, sizeof(msg));
		pthread_mutex_lock(&fs->mu);
		commit_done(fs, ms, model, vpath, &t, r, noop, msg, true);
		pthread_mutex_unlock(&fs->mu);
		commit_log(fs, rel, vpath, r, noop, msg);
	}
	pthread_mutex_unlock(&ms->commit_mu);
	free(t.data);
	free(rel);
	free(vpath);
	return r;
}

/* ------------------------------------------------------------------ */
/* editing: namespace of model folders                                 */

/* Where a name in a model folder points (views held: release with mloc_put). */
struct mloc {
	struct node *dir, *model;
	char *vpath;
	struct srcinfo si;
	const lfs_view *v;  /* the name is a view */
	bool isdir;         /* the name is a view folder */
	bool writable;      /* the model has writable views */
	bool vwritable;     /* v can be written back */
	bool merr_name;     /* errors.txt at the model root (no view of that name) */
};

static int mloc_get(lfs_fs *fs, struct node *dir, const char *name, struct mloc *m)
{
	memset(m, 0, sizeof(*m));
	if (is_dot(name) || strchr(name, '/') || !name[0])
		return EINVAL;
	m->dir = dir;
	m->model = dir->kind == K_MODEL ? dir : dir->model;
	int r = model_views(fs, m->model, &m->si);
	if (r)
		return r;
	m->vpath = join_view(dir, name);
	if (!m->vpath) {
		srcinfo_release(fs, &m->si);
		return ENOMEM;
	}
	const lfs_viewset *vs = &m->si.ce->vs;
	m->v = lfs_viewset_find(vs, m->vpath);
	m->isdir = !m->v && view_is_dir(vs, m->vpath);
	m->writable = vs_writable(vs);
	m->vwritable = m->v && view_writable(vs, m->vpath);
	m->merr_name = !m->v && dir->kind == K_MODEL && strcmp(name, LFS_FS_MODEL_ERRORS_NAME) == 0;
	return 0;
}

static void mloc_put(lfs_fs *fs, struct mloc *m)
{
	srcinfo_release(fs, &m->si);
	free(m->vpath);
	m->vpath = NULL;
}

/* The answer to a create/link/symlink: node @p c with one lookup count (fs->mu held). */
static int give_entry(lfs_fs *fs, struct node *c, const struct srcinfo *si, lfs_fs_entry *e)
{
	int r = fill_gen(fs, c, si, &e->attr);
	if (r)
		return r;
	c->nlookup++;
	e->ino = c->id;
	e->generation = c->gen;
	entry_timeouts(fs, c, e);
	return 0;
}

/* The node of scratch name @p sn under @p p (fs->mu held). */
static struct node *scratch_node(lfs_fs *fs, struct node *p, const char *name, struct sname *sn,
				 int *err)
{
	struct node *c = child_for(fs, p, name, K_SCRATCH, 0, sn->obj->sino, sn->vpath, err);
	if (c && !c->sobj) {
		c->sobj = sn->obj;
		sn->obj->refs++;
	}
	return c;
}

static void update_rels(struct node *n)
{
	for (struct node *c = n->first_child; c; c = c->next_sib) {
		if (c->kind != K_DIR && c->kind != K_FILE && c->kind != K_LINK && c->kind != K_OTHER &&
		    c->kind != K_MODEL)
			continue;
		char *r = join_rel(n->rel, c->name);
		if (r) {
			free(c->rel);
			c->rel = r;
		}
		update_rels(c);
	}
}

/*
 * Give node @p n the name @p newname in folder @p np (fs->mu held). @p vrel:
 * the new view path for generated-side nodes, NULL for source nodes (their
 * source path and their descendants' are recomputed).
 */
static int node_move(lfs_fs *fs, struct node *n, struct node *np, const char *newname, const char *vrel)
{
	nh_remove(fs, n);
	char *nm = strdup(newname);
	char *rel = vrel ? strdup(vrel) : join_rel(np->rel, newname);
	if (!nm || !rel) {
		/* Left unfindable: the next lookup makes a fresh node. */
		free(nm);
		free(rel);
		return ENOMEM;
	}
	struct node *op = n->parent;
	if (op != np) {
		if (n->prev_sib)
			n->prev_sib->next_sib = n->next_sib;
		else
			op->first_child = n->next_sib;
		if (n->next_sib)
			n->next_sib->prev_sib = n->prev_sib;
		n->prev_sib = NULL;
		n->next_sib = np->first_child;
		if (np->first_child)
			np->first_child->prev_sib = n;
		np->first_child = n;
		n->parent = np;
	}
	free(n->name);
	n->name = nm;
	free(n->rel);
	n->rel = rel;
	if (!vrel)
		update_rels(n);
	int r = nh_insert(fs, n);
	if (op != np)
		maybe_free(fs, op);
	return r;
}

static int model_create(lfs_fs *fs, struct node *p, const char *name, mode_t mode, int flags,
			const lfs_fs_ctx *ctx, lfs_fs_entry *e)
{
	struct mloc m;
	int r = mloc_get(fs, p, name, &m);
	if (r)
		return r;
	pthread_mutex_lock(&fs->mu);
	struct mstate *ms = ms_get(fs, m.model->rel);
	struct node *c = NULL;
	if (!ms) {
		r = ENOMEM;
	} else if (m.isdir) {
		r = EISDIR;
	} else if (m.merr_name) {
		r = EPERM;
	} else if (!m.writable) {
		r = EROFS;
	} else if (m.v) {
		/* Creating a view = replacing its text. */
		bool hid = hidden_active(fs, ms, m.vpath);
		struct overlay *o = ovl_find(ms, m.vpath);
		if (!m.vwritable) {
			r = EROFS;
		} else if (!hid && (flags & O_EXCL)) {
			r = EEXIST;
		} else if (hid) {
			hidden_clear(fs, ms, m.vpath);
			if (o)
				ovl_drop(fs, ms, m.vpath);
			o = ovl_new(fs, ms, m.vpath, NULL, 0, &r); /* a new, empty file */
		} else if (flags & O_TRUNC) {
			if (!o)
				o = ovl_new(fs, ms, m.vpath, NULL, 0, &r);
			else if (o->text.len) {
				edit_account(fs, o->text.len, 0);
				o->text.len = 0;
			}
			if (o) {
				o->modified = true;
				o->gen++;
				o->mtime = now_real();
			}
		}
		if (!r)
			c = child_for(fs, p, name, K_VFILE, m.model->src_dev, m.model->src_ino, m.vpath, &r);
	} else {
		struct sname *sn = sname_find(ms, m.vpath);
		if (sn && ((flags & O_EXCL) || S_ISLNK(sn->obj->mode))) {
			r = EEXIST;
		} else if (sn) {
			if ((flags & O_TRUNC) && sn->obj->data.len) {
				edit_account(fs, sn->obj->data.len, 0);
				sn->obj->data.len = 0;
				sn->obj->mtime = sn->obj->ctime = now_real();
			}
			c = scratch_node(fs, p, name, sn, &r);
		} else {
			struct sobj *o = sobj_new(fs, S_IFREG | (mode & 07777), ctx ? ctx->uid : fs->uid,
						  ctx ? ctx->gid : fs->gid);
			sn = o ? sname_add(ms, m.vpath, o) : NULL;
			if (!sn) {
				free(o);
				r = ENOMEM;
			} else {
				c = scratch_node(fs, p, name, sn, &r);
			}
		}
	}
	if (c && !r)
		r = give_entry(fs, c, &m.si, e);
	pthread_mutex_unlock(&fs->mu);
	mloc_put(fs, &m);
	return r;
}

static int model_symlink(lfs_fs *fs, const char *target, struct node *p, const char *name,
			 const lfs_fs_ctx *ctx, lfs_fs_entry *e)
{
	struct mloc m;
	int r = mloc_get(fs, p, name, &m);
	if (r)
		return r;
	pthread_mutex_lock(&fs->mu);
	struct mstate *ms = ms_get(fs, m.model->rel);
	struct node *c = NULL;
	if (!ms)
		r = ENOMEM;
	else if ((m.v && !hidden_active(fs, ms, m.vpath)) || m.isdir || sname_find(ms, m.vpath) ||
		 (m.merr_name && ms->errs))
		r = EEXIST;
	else if (m.v || m.merr_name)
		r = EPERM;
	else if (!m.writable)
		r = EROFS;
	else {
		struct sobj *o = sobj_new(fs, S_IFLNK | 0777, ctx ? ctx->uid : fs->uid,
					  ctx ? ctx->gid : fs->gid);
		size_t tl = strlen(target);
		struct sname *sn = NULL;
		if (o && edit_room(fs, 0, tl) == 0 && lfs_membuf_set(&o->data, target, tl) == 0) {
			edit_account(fs, 0, tl);
			sn = sname_add(ms, m.vpath, o);
		}
		if (!sn) {
			if (o) {
				edit_account(fs, o->data.len, 0);
				lfs_membuf_free(&o->data);
			}
			free(o);
			r = ENOMEM;
		} else {
			c = scratch_node(fs, p, name, sn, &r);
		}
	}
	if (c && !r)
		r = give_entry(fs, c, &m.si, e);
	pthread_mutex_unlock(&fs->mu);
	mloc_put(fs, &m);
	return r;
}

static int model_unlink(lfs_fs *fs, struct node *p, const char *name)
{
	struct mloc m;
	int r = mloc_get(fs, p, name, &m);
	if (r)
		return r;
	pthread_mutex_lock(&fs->mu);
	struct mstate *ms = ms_get(fs, m.model->rel);
	struct sname *sn;
	if (!ms) {
		r = ENOMEM;
	} else if (m.isdir) {
		r = EISDIR;
	} else if (m.v) {
		if (hidden_active(fs, ms, m.vpath)) {
			r = ENOENT;
		} else if (!m.vwritable) {
			r = EROFS;
		} else {
			/* The model stays: the text reverts, the name is absent for the
			 * grace time so that unlink + create (mv, vim) works. */
			struct node *x = find_child(fs, p, name);
			struct overlay *o = ovl_find(ms, m.vpath);
			if (o && o->base_valid)
				pbase_set(ms, m.vpath, o->base_hash);
			if (o)
				ovl_drop(fs, ms, m.vpath);
			r = hidden_add(fs, ms, m.vpath, p->id);
			if (x)
				nh_remove(fs, x);
		}
	} else if ((sn = sname_find(ms, m.vpath)) != NULL) {
		struct node *x = find_child(fs, p, name);
		if (x)
			nh_remove(fs, x);
		sname_remove(fs, ms, sn);
	} else if (m.merr_name && ms->errs) {
		struct node *x = find_child(fs, p, name);
		if (x)
			nh_remove(fs, x);
		merr_clear_all(ms);
	} else {
		r = ENOENT;
	}
	pthread_mutex_unlock(&fs->mu);
	mloc_put(fs, &m);
	return r;
}

/* rename(scratch a -> view b): the commit (unlocked), then the namespace change. */
static int rename_commit(lfs_fs *fs, struct mstate *ms, struct mloc *a, struct mloc *b,
			 struct node *p, const char *name, struct node *np, const char *newname)
{
	if (!b->vwritable)
		return EROFS;
	int r = 0;
	bool noop = false;
	char msg[1024];
	msg[0] = '\0';
	pthread_mutex_lock(&ms->commit_mu);
	pthread_mutex_lock(&fs->mu);
	struct sname *sa = sname_find(ms, a->vpath);
	struct ctext t = { 0 };
	char *rel = strdup(a->model->rel);
	if (!sa)
		r = ENOENT;
	else if (!S_ISREG(sa->obj->mode))
		r = EINVAL;
	else if (!rel || !(t.data = malloc(sa->obj->data.len ? sa->obj->data.len : 1)))
		r = ENOMEM;
	if (!r) {
		struct sobj *o = sa->obj;
		if (o->data.len)
			memcpy(t.data, o->data.data, o->data.len);
		t.n = o->data.len;
		if (o->base_valid) {
			t.base_valid = true;
			t.base_hash = o->base_hash;
		} else if (served_get(fs, a->model->rel, b->vpath, &t.base_hash)) {
			t.base_valid = true;
		} else {
			t.base_valid = pbase_peek(ms, b->vpath, &t.base_hash);
		}
	}
	pthread_mutex_unlock(&fs->mu);
	if (!r) {
		r = do_commit(fs, a->model, rel, b->vpath, &t, &noop, msg, sizeof(msg));
		pthread_mutex_lock(&fs->mu);
		commit_done(fs, ms, a->model, b->vpath, &t, r, noop, msg, false);
		if (!r) {
			/* The scratch file becomes the view (the kernel moved its inode there). */
			ovl_drop(fs, ms, b->vpath);
			hidden_clear(fs, ms, b->vpath);
			struct node *tn = find_child(fs, np, newname);
			struct node *sn = find_child(fs, p, name);
			if (tn && tn != sn)
				nh_remove(fs, tn);
			sa = sname_find(ms, a->vpath);
			if (sa)
				sname_remove(fs, ms, sa);
			if (sn && sn->kind == K_SCRATCH) {
				sobj_unref(fs, sn->sobj);
				sn->sobj = NULL;
				sn->kind = K_VFILE;
				sn->sino = view_ino(a->model, b->vpath);
				node_move(fs, sn, np, newname, b->vpath);
			}
		}
		pthread_mutex_unlock(&fs->mu);
		commit_log(fs, rel, b->vpath, r, noop, msg);
	}
	pthread_mutex_unlock(&ms->commit_mu);
	free(t.data);
	free(rel);
	return r;
}

static int model_rename(lfs_fs *fs, struct node *p, const char *name, struct node *np,
			const char *newname, unsigned flags)
{
	if (flags & ~(unsigned)RENAME_NOREPLACE)
		return EINVAL; /* RENAME_EXCHANGE/WHITEOUT: not in model folders */
	struct mloc a, b;
	int r = mloc_get(fs, p, name, &a);
	if (r)
		return r;
	r = mloc_get(fs, np, newname, &b);
	if (r) {
		mloc_put(fs, &a);
		return r;
	}
	bool commit = false;
	pthread_mutex_lock(&fs->mu);
	struct mstate *ms = ms_get(fs, a.model->rel);
	bool a_hid = ms && a.v && hidden_active(fs, ms, a.vpath);
	bool b_hid = ms && b.v && hidden_active(fs, ms, b.vpath);
	struct sname *sa = ms && !a.v ? sname_find(ms, a.vpath) : NULL;
	struct sname *sb = ms && !b.v ? sname_find(ms, b.vpath) : NULL;
	if (!ms)
		r = ENOMEM;
	else if (a.isdir || b.isdir || a.merr_name || b.merr_name)
		r = EPERM;
	else if ((a.v && a_hid) || (!a.v && !sa))
		r = ENOENT;
	else if (a.v && b.v)
		r = EPERM; /* one view onto another */
	else if ((flags & RENAME_NOREPLACE) && ((b.v && !b_hid) || sb))
		r = EEXIST;
	else if (sa && b.v)
		commit = true;
	else if (sa) {
		/* scratch -> scratch */
		if (sa != sb) {
			char *nv = strdup(b.vpath);
			if (!nv) {
				r = ENOMEM;
			} else {
				struct node *tn = find_child(fs, np, newname);
				struct node *sn = find_child(fs, p, name);
				if (sb) {
					if (tn && tn != sn)
						nh_remove(fs, tn);
					sname_remove(fs, ms, sb);
				}
				free(sa->vpath);
				sa->vpath = nv;
				sa->obj->ctime = now_real();
				if (sn)
					node_move(fs, sn, np, newname, b.vpath);
			}
		}
	} else if (!a.vwritable) {
		r = EROFS;
	} else {
		/* view -> scratch: the text moves, the view stays (generated text). */
		struct overlay *o = ovl_find(ms, a.vpath);
		const char *txt = o ? o->text.data : a.v->data;
		size_t tl = o ? o->text.len : a.v->size;
		struct node *x = find_child(fs, p, name);
		struct sobj *obj = sobj_new(fs, S_IFREG | (a.si.st.st_mode & 0666), a.si.st.st_uid,
					    a.si.st.st_gid);
		if (!obj || (r = edit_room(fs, 0, tl)) != 0 || lfs_membuf_set(&obj->data, txt, tl) != 0) {
			if (obj)
				lfs_membuf_free(&obj->data);
			free(obj);
			r = r ? r : ENOMEM;
		} else {
			edit_account(fs, 0, tl);
			obj->base_valid = true;
			obj->base_hash = o ? o->base_hash : text_hash(txt, tl);
			if (o && !o->base_valid)
				obj->base_valid = false;
			/* What the editor read: the base of its next text under the view's name. */
			if (o && o->base_valid)
				pbase_set(ms, a.vpath, o->base_hash);
			if (sb) {
				struct node *tn = find_child(fs, np, newname);
				if (tn && tn != x)
					nh_remove(fs, tn);
				sname_remove(fs, ms, sb);
			}
			if (!sname_add(ms, b.vpath, obj)) {
				edit_account(fs, tl, 0);
				lfs_membuf_free(&obj->data);
				free(obj);
				r = ENOMEM;
			} else {
				if (o)
					ovl_drop(fs, ms, a.vpath);
				if (x && x->kind == K_VFILE) {
					/* The kernel moved this inode to the new name. */
					x->kind = K_SCRATCH;
					x->sobj = obj;
					obj->refs++;
					x->sino = obj->sino;
					node_move(fs, x, np, newname, b.vpath);
				}
			}
		}
	}
	pthread_mutex_unlock(&fs->mu);
	if (commit)
		r = rename_commit(fs, ms, &a, &b, p, name, np, newname);
	mloc_put(fs, &a);
	mloc_put(fs, &b);
	return r;
}

static int model_link(lfs_fs *fs, struct node *src, struct node *np, const char *newname,
		      lfs_fs_entry *e)
{
	struct mloc b;
	int r = mloc_get(fs, np, newname, &b);
	if (r)
		return r;
	if (b.model != src->model) {
		mloc_put(fs, &b);
		return EXDEV;
	}
	pthread_mutex_lock(&fs->mu);
	struct mstate *ms = ms_get(fs, b.model->rel);
	struct node *c = NULL;
	struct sname *sn = NULL;
	if (!ms)
		r = ENOMEM;
	else if ((b.v && !hidden_active(fs, ms, b.vpath)) || b.isdir || sname_find(ms, b.vpath) ||
		 (b.merr_name && ms->errs))
		r = EEXIST;
	else if (b.v || b.merr_name)
		r = EPERM;
	else if (!b.writable)
		r = EROFS;
	else if (src->kind == K_SCRATCH) {
		sn = sname_add(ms, b.vpath, src->sobj); /* a second name of the same file */
		r = sn ? 0 : ENOMEM;
	} else {
		/* link(view, backup): a scratch copy of the view's current text. */
		const lfs_view *v = lfs_viewset_find(&b.si.ce->vs, src->rel);
		struct overlay *o = ovl_find(ms, src->rel);
		if (!v) {
			r = ESTALE;
		} else {
			const char *txt = o ? o->text.data : v->data;
			size_t tl = o ? o->text.len : v->size;
			struct sobj *obj = sobj_new(fs, S_IFREG | (b.si.st.st_mode & 0666),
						    b.si.st.st_uid, b.si.st.st_gid);
			if (!obj || (r = edit_room(fs, 0, tl)) != 0 ||
			    lfs_membuf_set(&obj->data, txt, tl) != 0) {
				if (obj)
					lfs_membuf_free(&obj->data);
				free(obj);
				r = r ? r : ENOMEM;
			} else {
				edit_account(fs, 0, tl);
				obj->base_valid = !o || o->base_valid;
				obj->base_hash = o ? o->base_hash : text_hash(txt, tl);
				sn = sname_add(ms, b.vpath, obj);
				if (!sn) {
					edit_account(fs, tl, 0);
					lfs_membuf_free(&obj->data);
					free(obj);
					r = ENOMEM;
				}
			}
		}
	}
	if (sn)
		c = scratch_node(fs, np, newname, sn, &r);
	if (c && !r)
		r = give_entry(fs, c, &b.si, e);
	pthread_mutex_unlock(&fs->mu);
	mloc_put(fs, &b);
	return r;
}

/* ------------------------------------------------------------------ */
/* editing: public operations                                          */

/* Kind of node @p id (and the node), under the lock. */
static struct node *node_kind(lfs_fs *fs, uint64_t id, enum nkind *k)
{
	pthread_mutex_lock(&fs->mu);
	struct node *n = get_node(fs, id);
	*k = n ? n->kind : K_OTHER;
	pthread_mutex_unlock(&fs->mu);
	return n;
}

/* As root (allow_other), new source objects belong to the caller. */
static void give_owner(lfs_fs *fs, const char *rel, const lfs_fs_ctx *ctx)
{
	if (ctx && geteuid() == 0 && (ctx->uid != 0 || ctx->gid != 0))
		if (fchownat(fs->rootfd, rel, ctx->uid, ctx->gid, AT_SYMLINK_NOFOLLOW) != 0)
			fs_log(fs, LFS_LOG_DEBUG, "chown %s: %s", rel, strerror(errno));
}

static int name_check(struct node *p, enum nkind pk, const char *name)
{
	if (!name[0] || is_dot(name) || strchr(name, '/'))
		return EINVAL;
	if (pk == K_ROOT && strcmp(name, LFS_FS_CTL_NAME) == 0)
		return EEXIST;
	(void)p;
	return 0;
}

int lfs_fs_create(lfs_fs *fs, uint64_t parent, const char *name, mode_t mode, int flags,
		  const lfs_fs_ctx *ctx, lfs_fs_entry *e)
{
	memset(e, 0, sizeof(*e));
	enum nkind pk;
	struct node *p = node_kind(fs, parent, &pk);
	if (!p)
		return ESTALE;
	if (is_model_ns(pk))
		return model_create(fs, p, name, mode, flags, ctx, e);
	if (!is_source_dir(pk))
		return pk == K_CTLDIR ? EROFS : ENOTDIR;
	int r = name_check(p, pk, name);
	if (r)
		return r;
	char *rel = join_rel(p->rel, name);
	if (!rel)
		return ENAMETOOLONG;
	int fd = openat(fs->rootfd, rel, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
			(flags & (O_EXCL | O_TRUNC)), mode & 07777);
	if (fd < 0) {
		r = errno;
		free(rel);
		return r;
	}
	close(fd);
	give_owner(fs, rel, ctx);
	free(rel);
	return lfs_fs_lookup(fs, parent, name, e);
}

int lfs_fs_mknod(lfs_fs *fs, uint64_t parent, const char *name, mode_t mode, dev_t rdev,
		 const lfs_fs_ctx *ctx, lfs_fs_entry *e)
{
	memset(e, 0, sizeof(*e));
	enum nkind pk;
	struct node *p = node_kind(fs, parent, &pk);
	if (!p)
		return ESTALE;
	if (is_model_ns(pk)) {
		if (S_ISREG(mode))
			return model_create(fs, p, name, mode, O_EXCL, ctx, e);
		return EPERM;
	}
	if (!is_source_dir(pk))
		return pk == K_CTLDIR ? EROFS : ENOTDIR;
	int r = name_check(p, pk, name);
	if (r)
		return r;
	char *rel = join_rel(p->rel, name);
	if (!rel)
		return ENAMETOOLONG;
	if (mknodat(fs->rootfd, rel, mode, rdev) != 0) {
		r = errno;
		free(rel);
		return r;
	}
	give_owner(fs, rel, ctx);
	free(rel);
	return lfs_fs_lookup(fs, parent, name, e);
}

int lfs_fs_mkdir(lfs_fs *fs, uint64_t parent, const char *name, mode_t mode,
		 const lfs_fs_ctx *ctx, lfs_fs_entry *e)
{
	memset(e, 0, sizeof(*e));
	enum nkind pk;
	struct node *p = node_kind(fs, parent, &pk);
	if (!p)
		return ESTALE;
	if (is_model_ns(pk))
		return EPERM; /* no folders in the scratch namespace */
	if (!is_source_dir(pk))
		return pk == K_CTLDIR ? EROFS : ENOTDIR;
	int r = name_check(p, pk, name);
	if (r)
		return r;
	char *rel = join_rel(p->rel, name);
	if (!rel)
		return ENAMETOOLONG;
	if (mkdirat(fs->rootfd, rel, mode & 07777) != 0) {
		r = errno;
		free(rel);
		return r;
	}
	give_owner(fs, rel, ctx);
	free(rel);
	return lfs_fs_lookup(fs, parent, name, e);
}

int lfs_fs_symlink(lfs_fs *fs, const char *target, uint64_t parent, const char *name,
		   const lfs_fs_ctx *ctx, lfs_fs_entry *e)
{
	memset(e, 0, sizeof(*e));
	enum nkind pk;
	struct node *p = node_kind(fs, parent, &pk);
	if (!p)
		return ESTALE;
	if (is_model_ns(pk))
		return model_symlink(fs, target, p, name, ctx, e);
	if (!is_source_dir(pk))
		return pk == K_CTLDIR ? EROFS : ENOTDIR;
	int r = name_check(p, pk, name);
	if (r)
		return r;
	char *rel = join_rel(p->rel, name);
	if (!rel)
		return ENAMETOOLONG;
	if (symlinkat(target, fs->rootfd, rel) != 0) {
		r = errno;
		free(rel);
		return r;
	}
	give_owner(fs, rel, ctx);
	free(rel);
	return lfs_fs_lookup(fs, parent, name, e);
}

int lfs_fs_link(lfs_fs *fs, uint64_t ino, uint64_t newparent, const char *newname, lfs_fs_entry *e)
{
	memset(e, 0, sizeof(*e));
	enum nkind k, pk;
	struct node *n = node_kind(fs, ino, &k);
	struct node *np = node_kind(fs, newparent, &pk);
	if (!n || !np)
		return ESTALE;
	if ((k == K_SCRATCH || k == K_VFILE) && is_model_ns(pk))
		return model_link(fs, n, np, newname, e);
	if ((k == K_FILE || k == K_LINK || k == K_OTHER) && is_source_dir(pk)) {
		int r = name_check(np, pk, newname);
		if (r)
			return r;
		char *rel = join_rel(np->rel, newname);
		pthread_mutex_lock(&fs->mu);
		char *old = strdup(n->rel);
		pthread_mutex_unlock(&fs->mu);
		if (!rel || !old)
			r = ENOMEM;
		else if (linkat(fs->rootfd, old, fs->rootfd, rel, 0) != 0)
			r = errno;
		free(rel);
		free(old);
		return r ? r : lfs_fs_lookup(fs, newparent, newname, e);
	}
	if (k == K_MODEL || k == K_VDIR || k == K_DIR || k == K_ROOT)
		return EPERM;
	if (k == K_CTLERR || k == K_MERR || pk == K_CTLDIR)
		return EPERM;
	return EXDEV;
}

int lfs_fs_unlink(lfs_fs *fs, uint64_t parent, const char *name)
{
	enum nkind pk;
	struct node *p = node_kind(fs, parent, &pk);
	if (!p)
		return ESTALE;
	if (is_model_ns(pk))
		return model_unlink(fs, p, name);
	if (!is_source_dir(pk))
		return pk == K_CTLDIR ? EROFS : ENOTDIR;
	if (!name[0] || is_dot(name) || strchr(name, '/'))
		return EINVAL;
	if (pk == K_ROOT && strcmp(name, LFS_FS_CTL_NAME) == 0)
		return EPERM;
	char *rel = join_rel(p->rel, name);
	if (!rel)
		return ENAMETOOLONG;
	/* The kernel sees model files as folders; guard against a stale view of it anyway. */
	struct srcinfo si;
	int r = classify(fs, rel, &si);
	if (!r) {
		if (si.kind == K_MODEL || si.kind == K_DIR)
			r = EISDIR;
		srcinfo_release(fs, &si);
	}
	if (!r && unlinkat(fs->rootfd, rel, 0) != 0)
		r = errno;
	free(rel);
	if (!r) {
		pthread_mutex_lock(&fs->mu);
		struct node *c = find_child(fs, p, name);
		if (c)
			nh_remove(fs, c);
		pthread_mutex_unlock(&fs->mu);
	}
	return r;
}

int lfs_fs_rmdir(lfs_fs *fs, uint64_t parent, const char *name)
{
	enum nkind pk;
	struct node *p = node_kind(fs, parent, &pk);
	if (!p)
		return ESTALE;
	if (!name[0] || is_dot(name) || strchr(name, '/'))
		return EINVAL;
	if (is_model_ns(pk)) {
		struct mloc m;
		int r = mloc_get(fs, p, name, &m);
		if (r)
			return r;
		pthread_mutex_lock(&fs->mu);
		struct mstate *ms = ms_find(fs, m.model->rel);
		if (m.isdir)
			r = EPERM; /* generated folders stay */
		else if ((m.v && !hidden_active(fs, ms, m.vpath)) || sname_find(ms, m.vpath) ||
			 (m.merr_name && ms && ms->errs))
			r = ENOTDIR;
		else
			r = ENOENT;
		pthread_mutex_unlock(&fs->mu);
		mloc_put(fs, &m);
		return r;
	}
	if (!is_source_dir(pk))
		return pk == K_CTLDIR ? EROFS : ENOTDIR;
	if (pk == K_ROOT && strcmp(name, LFS_FS_CTL_NAME) == 0)
		return EPERM;
	char *rel = join_rel(p->rel, name);
	if (!rel)
		return ENAMETOOLONG;
	struct srcinfo si;
	int r = classify(fs, rel, &si);
	if (!r) {
		if (si.kind == K_MODEL)
			r = EPERM; /* a model folder: the model file stays (docs/editing.md) */
		else if (si.kind != K_DIR)
			r = ENOTDIR;
		srcinfo_release(fs, &si);
	}
	if (!r && unlinkat(fs->rootfd, rel, AT_REMOVEDIR) != 0)
		r = errno;
	free(rel);
	if (!r) {
		pthread_mutex_lock(&fs->mu);
		struct node *c = find_child(fs, p, name);
		if (c)
			nh_remove(fs, c);
		pthread_mutex_unlock(&fs->mu);
	}
	return r;
}

static int rename_source(lfs_fs *fs, struct node *p, enum nkind pk, const char *name,
			 struct node *np, enum nkind npk, const char *newname, unsigned flags)
{
	if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return EINVAL;
	if (!name[0] || is_dot(name) || strchr(name, '/') || !newname[0] || is_dot(newname) ||
	    strchr(newname, '/'))
		return EINVAL;
	if ((pk == K_ROOT && strcmp(name, LFS_FS_CTL_NAME) == 0) ||
	    (npk == K_ROOT && strcmp(newname, LFS_FS_CTL_NAME) == 0))
		return EPERM;
	char *oldrel = join_rel(p->rel, name), *newrel = join_rel(np->rel, newname);
	int r = oldrel && newrel ? 0 : ENAMETOOLONG;
	struct srcinfo si;
	if (!r) {
		r = classify(fs, oldrel, &si);
		if (!r) {
			if (si.kind == K_MODEL)
				r = EPERM; /* model folders cannot be renamed through the mount */
			srcinfo_release(fs, &si);
		}
	}
	if (!r && classify(fs, newrel, &si) == 0) {
		if (si.kind == K_MODEL)
			r = EPERM;
		srcinfo_release(fs, &si);
	}
	if (!r && renameat2(fs->rootfd, oldrel, fs->rootfd, newrel, flags) != 0)
		r = errno;
	if (!r) {
		pthread_mutex_lock(&fs->mu);
		struct node *a = find_child(fs, p, name), *b = find_child(fs, np, newname);
		if (flags & RENAME_EXCHANGE) {
			if (a)
				nh_remove(fs, a);
			if (b)
				nh_remove(fs, b);
			if (a)
				node_move(fs, a, np, newname, NULL);
			if (b)
				node_move(fs, b, p, name, NULL);
		} else {
			if (b && b != a)
				nh_remove(fs, b);
			if (a)
				node_move(fs, a, np, newname, NULL);
			/* Editing state of models inside a renamed folder follows it. */
			size_t ol = strlen(oldrel);
			for (struct mstate *ms = fs->mstates; ms; ms = ms->next) {
				if (strncmp(ms->rel, oldrel, ol) != 0 || ms->rel[ol] != '/')
					continue;
				char *nr = join_rel(newrel, ms->rel + ol + 1);
				if (nr) {
					free(ms->rel);
					ms->rel = nr;
				}
			}
		}
		pthread_mutex_unlock(&fs->mu);
	}
	free(oldrel);
	free(newrel);
	return r;
}

int lfs_fs_rename(lfs_fs *fs, uint64_t parent, const char *name, uint64_t newparent,
		  const char *newname, unsigned flags)
{
	enum nkind pk, npk;
	struct node *p = node_kind(fs, parent, &pk);
	struct node *np = node_kind(fs, newparent, &npk);
	if (!p || !np)
		return ESTALE;
	if (is_source_dir(pk) && is_source_dir(npk))
		return rename_source(fs, p, pk, name, np, npk, newname, flags);
	if (is_model_ns(pk) && is_model_ns(npk)) {
		pthread_mutex_lock(&fs->mu);
		bool same = (pk == K_MODEL ? p : p->model) == (npk == K_MODEL ? np : np->model);
		pthread_mutex_unlock(&fs->mu);
		return same ? model_rename(fs, p, name, np, newname, flags) : EXDEV;
	}
	if (pk == K_CTLDIR || npk == K_CTLDIR)
		return EPERM;
	if (!is_source_dir(pk) && !is_model_ns(pk))
		return ENOTDIR;
	if (!is_source_dir(npk) && !is_model_ns(npk))
		return ENOTDIR;
	/* Between SOURCE and a model folder: mv copies instead. */
	return EXDEV;
}

/* Make/extend the overlay of view node @p nd: a write, or a truncation (buf == NULL). */
static int view_change(lfs_fs *fs, struct node *nd, const char *buf, size_t size, uint64_t off,
		       uint64_t newsize, pid_t writer)
{
	struct srcinfo si;
	int r = model_views(fs, nd->model, &si);
	if (r)
		return r;
	const lfs_view *v = lfs_viewset_find(&si.ce->vs, nd->rel);
	if (!v) {
		srcinfo_release(fs, &si);
		return ESTALE;
	}
	if (!view_writable(&si.ce->vs, nd->rel)) {
		srcinfo_release(fs, &si);
		return EROFS;
	}
	pthread_mutex_lock(&fs->mu);
	struct mstate *ms = ms_get(fs, nd->model->rel);
	struct overlay *o = ms ? ovl_find(ms, nd->rel) : NULL;
	if (!ms)
		r = ENOMEM;
	else if (!o)
		o = ovl_new(fs, ms, nd->rel, v->data, v->size, &r);
	if (o) {
		size_t old = o->text.len;
		if (buf) {
			uint64_t end = off + size;
			r = edit_room(fs, old, end > old ? end : old);
			if (!r)
				r = lfs_membuf_write(&o->text, buf, size, off, fs->edit_max);
		} else {
			r = edit_room(fs, old, newsize);
			if (!r)
				r = lfs_membuf_truncate(&o->text, newsize, fs->edit_max);
		}
		if (r == EFBIG)
			r = ENOSPC;
		if (!r) {
			edit_account(fs, old, o->text.len);
			o->gen++;
			o->mtime = now_real();
			o->modified = true;
			if (buf) {
				o->written = true;
				o->writer = writer;
			}
		}
	}
	pthread_mutex_unlock(&fs->mu);
	srcinfo_release(fs, &si);
	return r;
}

static int src_setattr(lfs_fs *fs, struct node *n, enum nkind k, const struct stat *a, int to_set)
{
	pthread_mutex_lock(&fs->mu);
	char *rel = strdup(n->rel);
	pthread_mutex_unlock(&fs->mu);
	if (!rel)
		return ENOMEM;
	int r = 0;
	if ((to_set & LFS_SET_MODE) && k != K_LINK &&
	    fchmodat(fs->rootfd, rel, a->st_mode & 07777, 0) != 0)
		r = errno;
	if (!r && (to_set & (LFS_SET_UID | LFS_SET_GID)) &&
	    fchownat(fs->rootfd, rel, (to_set & LFS_SET_UID) ? a->st_uid : (uid_t)-1,
		     (to_set & LFS_SET_GID) ? a->st_gid : (gid_t)-1, AT_SYMLINK_NOFOLLOW) != 0)
		r = errno;
	if (!r && (to_set & LFS_SET_SIZE)) {
		if (k != K_FILE) {
			r = k == K_LINK || k == K_OTHER ? EINVAL : EISDIR;
		} else {
			int fd = openat(fs->rootfd, rel, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
			if (fd < 0 || ftruncate(fd, a->st_size) != 0)
				r = errno;
			if (fd >= 0)
				close(fd);
		}
	}
	if (!r && (to_set & (LFS_SET_ATIME | LFS_SET_MTIME | LFS_SET_ATIME_NOW | LFS_SET_MTIME_NOW))) {
		struct timespec ts[2] = { { 0, UTIME_OMIT }, { 0, UTIME_OMIT } };
		if (to_set & LFS_SET_ATIME_NOW)
			ts[0].tv_nsec = UTIME_NOW;
		else if (to_set & LFS_SET_ATIME)
			ts[0] = a->st_atim;
		if (to_set & LFS_SET_MTIME_NOW)
			ts[1].tv_nsec = UTIME_NOW;
		else if (to_set & LFS_SET_MTIME)
			ts[1] = a->st_mtim;
		if (utimensat(fs->rootfd, rel, ts, AT_SYMLINK_NOFOLLOW) != 0)
			r = errno;
	}
	free(rel);
	return r;
}

int lfs_fs_setattr(lfs_fs *fs, uint64_t ino, const struct stat *attr, int to_set,
		   const lfs_fs_ctx *ctx, struct stat *out, double *timeout)
{
	(void)ctx;
	enum nkind k;
	struct node *n = node_kind(fs, ino, &k);
	if (!n)
		return ESTALE;
	int r = 0;
	switch (k) {
	case K_ROOT:
	case K_DIR:
	case K_FILE:
	case K_LINK:
	case K_OTHER:
		r = src_setattr(fs, n, k, attr, to_set);
		break;
	case K_MODEL:
	case K_VDIR:
		/* Times: accepted and ignored; the rest belongs to the model file. */
		if (to_set & (LFS_SET_MODE | LFS_SET_UID | LFS_SET_GID | LFS_SET_SIZE))
			r = EPERM;
		break;
	case K_VFILE:
		/* Mode, owner, times follow the model file: accepted, ignored. */
		if (to_set & LFS_SET_SIZE)
			r = attr->st_size < 0 ? EINVAL : view_change(fs, n, NULL, 0, 0, (uint64_t)attr->st_size, 0);
		break;
	case K_SCRATCH: {
		pthread_mutex_lock(&fs->mu);
		struct sobj *o = n->sobj;
		struct timespec now = now_real();
		if ((to_set & LFS_SET_SIZE) && S_ISLNK(o->mode)) {
			r = EINVAL;
		} else if (to_set & LFS_SET_SIZE) {
			size_t old = o->data.len;
			r = attr->st_size < 0 ? EINVAL : edit_room(fs, old, (uint64_t)attr->st_size);
			if (!r)
				r = lfs_membuf_truncate(&o->data, (uint64_t)attr->st_size, fs->edit_max);
			if (r == EFBIG)
				r = ENOSPC;
			if (!r) {
				edit_account(fs, old, o->data.len);
				o->mtime = now;
			}
		}
		if (!r) {
			if ((to_set & LFS_SET_MODE) && !S_ISLNK(o->mode))
				o->mode = (o->mode & S_IFMT) | (attr->st_mode & 07777);
			if (to_set & LFS_SET_UID)
				o->uid = attr->st_uid;
			if (to_set & LFS_SET_GID)
				o->gid = attr->st_gid;
			if (to_set & LFS_SET_ATIME_NOW)
				o->atime = now;
			else if (to_set & LFS_SET_ATIME)
				o->atime = attr->st_atim;
			if (to_set & LFS_SET_MTIME_NOW)
				o->mtime = now;
			else if (to_set & LFS_SET_MTIME)
				o->mtime = attr->st_mtim;
			o->ctime = now;
		}
		pthread_mutex_unlock(&fs->mu);
		break;
	}
	case K_MERR:
		/* Truncating errors.txt clears it; nothing else. */
		if ((to_set & LFS_SET_SIZE) && attr->st_size == 0) {
			pthread_mutex_lock(&fs->mu);
			struct mstate *ms = ms_find(fs, n->model->rel);
			if (ms)
				merr_clear_all(ms);
			pthread_mutex_unlock(&fs->mu);
		} else if (to_set & (LFS_SET_MODE | LFS_SET_UID | LFS_SET_GID | LFS_SET_SIZE)) {
			r = EPERM;
		}
		break;
	default:
		r = EPERM;
	}
	if (r)
		return r;
	return lfs_fs_getattr(fs, ino, out, timeout);
}

int lfs_fs_write(lfs_fs *fs, uint64_t ino, const char *buf, size_t size, off_t off,
		 const lfs_fs_ctx *ctx, size_t *written)
{
	*written = 0;
	if (off < 0)
		return EINVAL;
	enum nkind k;
	struct node *n = node_kind(fs, ino, &k);
	if (!n)
		return ESTALE;
	int r = 0;
	switch (k) {
	case K_FILE: {
		pthread_mutex_lock(&fs->mu);
		char *rel = strdup(n->rel);
		pthread_mutex_unlock(&fs->mu);
		if (!rel)
			return ENOMEM;
		int fd = openat(fs->rootfd, rel, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		free(rel);
		if (fd < 0)
			return errno == ENOENT ? ESTALE : errno;
		size_t done = 0;
		while (done < size) {
			ssize_t w = pwrite(fd, buf + done, size - done, off + (off_t)done);
			if (w < 0) {
				if (errno == EINTR)
					continue;
				r = errno;
				break;
			}
			if (w == 0)
				break;
			done += (size_t)w;
		}
		close(fd);
		*written = done;
		return done ? 0 : r;
	}
	case K_VFILE:
		r = view_change(fs, n, buf, size, (uint64_t)off, 0, tgid_of(ctx ? ctx->pid : 0));
		if (!r)
			*written = size;
		return r;
	case K_SCRATCH: {
		pthread_mutex_lock(&fs->mu);
		struct sobj *o = n->sobj;
		if (S_ISLNK(o->mode)) {
			r = EINVAL;
		} else {
			size_t old = o->data.len;
			uint64_t end = (uint64_t)off + size;
			r = edit_room(fs, old, end > old ? end : old);
			if (!r)
				r = lfs_membuf_write(&o->data, buf, size, (uint64_t)off, fs->edit_max);
			if (r == EFBIG)
				r = ENOSPC;
			if (!r) {
				edit_account(fs, old, o->data.len);
				o->mtime = o->ctime = now_real();
				*written = size;
			}
		}
		pthread_mutex_unlock(&fs->mu);
		return r;
	}
	case K_CTLERR:
	case K_MERR:
		return EROFS;
	case K_LINK:
	case K_OTHER:
		return EINVAL;
	default:
		return EISDIR;
	}
}

int lfs_fs_flush(lfs_fs *fs, uint64_t ino, const lfs_fs_ctx *ctx)
{
	enum nkind k;
	struct node *n = node_kind(fs, ino, &k);
	if (!n || k != K_VFILE)
		return 0; /* nothing to commit */
	/* Cheap first: most closes are of views nobody wrote (grep). */
	pthread_mutex_lock(&fs->mu);
	struct mstate *ms = fs->mstates ? ms_find(fs, n->model->rel) : NULL;
	struct overlay *o = ovl_find(ms, n->rel);
	bool written = o && o->written;
	pthread_mutex_unlock(&fs->mu);
	if (!written)
		return 0;
	return commit_overlay(fs, n, false, tgid_of(ctx ? ctx->pid : 0));
}

int lfs_fs_fsync(lfs_fs *fs, uint64_t ino, bool datasync)
{
	enum nkind k;
	struct node *n = node_kind(fs, ino, &k);
	if (!n)
		return ESTALE;
	if (k == K_VFILE)
		return commit_overlay(fs, n, true, 0);
	if (k != K_FILE)
		return 0;
	pthread_mutex_lock(&fs->mu);
	char *rel = strdup(n->rel);
	pthread_mutex_unlock(&fs->mu);
	if (!rel)
		return ENOMEM;
	int fd = openat(fs->rootfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	free(rel);
	if (fd < 0)
		return errno;
	int r = (datasync ? fdatasync(fd) : fsync(fd)) != 0 ? errno : 0;
	close(fd);
	return r;
}

/* ------------------------------------------------------------------ */
/* watcher                                                             */

static void inval_add(struct inval_list *l, uint64_t id, const char *name)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 64;
		struct inval *nv = realloc(l->v, nc * sizeof(*nv));
		if (!nv)
			return;
		l->v = nv;
		l->cap = nc;
	}
	char *nm = name ? strdup(name) : NULL;
	if (name && !nm)
		return;
	l->v[l->n].id = id;
	l->v[l->n].name = nm;
	l->n++;
}

static int inval_cmp(const void *a, const void *b)
{
	const struct inval *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (!x->name || !y->name)
		return x->name ? 1 : y->name ? -1 : 0;
	return strcmp(x->name, y->name);
}

/* Invalidate @p n and (for model folders) everything generated below it. */
static void inval_subtree(struct inval_list *l, struct node *n)
{
	struct node *stack[64];
	size_t sp = 0;
	stack[sp++] = n;
	while (sp) {
		struct node *m = stack[--sp];
		inval_add(l, m->id, NULL);
		if (m->kind != K_MODEL && m->kind != K_VDIR)
			continue;
		for (struct node *c = m->first_child; c; c = c->next_sib) {
			if (sp < sizeof(stack) / sizeof(stack[0]))
				stack[sp++] = c;
			else
				inval_add(l, c->id, NULL);
		}
	}
}

/* One inotify event (fs->mu held). */
static void watch_event(lfs_fs *fs, const struct inotify_event *ev, struct inval_list *l)
{
	if (ev->mask & IN_Q_OVERFLOW) {
		/* Lost events: forget every listing and drop every cached entry in the kernel. */
		for (size_t i = 1; i < fs->nslots; i++) {
			struct node *n = fs->slots[i];
			if (!n)
				continue;
			n->dirty_gen++;
			inval_add(l, n->id, NULL);
			if (n->hashed && n->parent && n->kind != K_CTLDIR && n->kind != K_CTLERR)
				inval_add(l, n->parent->id, n->name);
		}
		return;
	}
	struct node *d = wh_find(fs, ev->wd);
	if (!d)
		return;
	if (ev->mask & IN_IGNORED) {
		wh_remove(fs, d);
		d->wd = -1;
		fs->nwatches--;
		return;
	}
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
		d->dirty_gen++;
		inval_add(l, d->id, NULL);
		if (d->parent)
			inval_add(l, d->parent->id, d->name);
		return;
	}
	if (!ev->len || !ev->name[0])
		return;
	d->dirty_gen++;
	inval_add(l, d->id, NULL); /* folder attributes and cached listing */
	if (d->kind == K_ROOT && strcmp(ev->name, LFS_FS_CTL_NAME) == 0)
		return; /* shadowed */
	struct node *c = find_child(fs, d, ev->name);
	if (c && c->kind == K_MODEL && c->self_commit) {
		/* Our own commit replaced the model file and already updated the
		 * node: keep the kernel's entry (an editor may sit in the folder),
		 * refresh attributes and pages only. */
		if (ev->mask & IN_MOVED_TO)
			c->self_commit = false;
		inval_subtree(l, c);
		return;
	}
	inval_add(l, d->id, ev->name);
	if (c)
		inval_subtree(l, c);
}

static void *watch_main(void *arg)
{
	lfs_fs *fs = arg;
	/* Aligned for struct inotify_event. */
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		pthread_mutex_lock(&fs->mu);
		/* Deleted views come back after their grace time: poll for it. */
		int tmo = fs->nhidden ? 100 : -1;
		pthread_mutex_unlock(&fs->mu);
		/* fd -1 (no inotify) is ignored by poll. */
		struct pollfd pfd[3] = { { fs->ifd, POLLIN, 0 }, { fs->stopfd, POLLIN, 0 },
					 { fs->kickfd, POLLIN, 0 } };
		if (poll(pfd, 3, tmo) < 0) {
			if (errno == EINTR)
				continue;
			fs_log(fs, LFS_LOG_ERR, "watcher: poll: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents)
			break;
		if (pfd[2].revents) {
			uint64_t v;
			if (read(fs->kickfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				fs_log(fs, LFS_LOG_WARNING, "notification thread: %s", strerror(errno));
		}
		struct inval_list l = { 0 };
		pthread_mutex_lock(&fs->mu);
		for (;;) {
			ssize_t n = fs->ifd >= 0 ? read(fs->ifd, buf, sizeof(buf)) : 0;
			if (n <= 0)
				break;
			for (char *p = buf; p < buf + n;) {
				const struct inotify_event *ev = (const struct inotify_event *)(void *)p;
				watch_event(fs, ev, &l);
				p += sizeof(*ev) + ev->len;
			}
		}
		hidden_expire(fs, &l);
		/* What requests queued (commits, refused saves). */
		for (size_t i = 0; i < fs->pending.n; i++) {
			inval_add(&l, fs->pending.v[i].id, fs->pending.v[i].name);
			free(fs->pending.v[i].name);
		}
		fs->pending.n = 0;
		pthread_mutex_unlock(&fs->mu);
		/* Coalesce: an editor's save produces many events for one name. */
		if (l.n > 1)
			qsort(l.v, l.n, sizeof(*l.v), inval_cmp);
		for (size_t i = 0; i < l.n; i++) {
			if (i && inval_cmp(&l.v[i - 1], &l.v[i]) == 0)
				continue;
			if (l.v[i].name)
				fs->notify.inval_entry(fs->notify.ctx, l.v[i].id, l.v[i].name);
		}
		for (size_t i = 0; i < l.n; i++) {
			if (i && inval_cmp(&l.v[i - 1], &l.v[i]) == 0)
				continue;
			if (!l.v[i].name)
				fs->notify.inval_inode(fs->notify.ctx, l.v[i].id);
		}
		for (size_t i = 0; i < l.n; i++)
			free(l.v[i].name);
		free(l.v);
	}
	return NULL;
}

int lfs_fs_watch_start(lfs_fs *fs, const lfs_fs_notify *n)
{
	if (fs->thread_running)
		return 0;
	fs->notify = *n;
	/* Signals belong to the FUSE loop thread. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int r = pthread_create(&fs->thread, NULL, watch_main, fs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r)
		return r;
	fs->thread_running = true;
	return 0;
}

void lfs_fs_watch_stop(lfs_fs *fs)
{
	if (!fs->thread_running)
		return;
	uint64_t one = 1;
	if (write(fs->stopfd, &one, sizeof(one)) < 0)
		fs_log(fs, LFS_LOG_ERR, "watcher: cannot signal stop: %s", strerror(errno));
	pthread_join(fs->thread, NULL);
	fs->thread_running = false;
}

void lfs_fs_get_stats(lfs_fs *fs, lfs_fs_stats *s)
{
	pthread_mutex_lock(&fs->mu);
	s->nodes = fs->nnodes;
	s->cache_entries = fs->cache.n;
	s->cache_bytes = fs->cache.bytes;
	s->cache_hits = fs->cache.hits;
	s->cache_misses = fs->cache.misses;
	s->cache_evictions = fs->cache.evictions;
	s->builds = fs->builds;
	s->build_failures = fs->build_failures;
	s->watches = fs->nwatches;
	s->commits = fs->commits;
	s->commit_noops = fs->commit_noops;
	s->commit_refused = fs->commit_refused;
	s->edit_bytes = fs->edit_used;
	pthread_mutex_unlock(&fs->mu);
}
