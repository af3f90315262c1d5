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
 *  - fs->mu protects the node tables, the cache and the error list. It is
 *    never held during source I/O, view building or watcher notifications.
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
#include "source.h"
#include "texture.h"

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

	/* watcher */
	int ifd, stopfd;
	bool thread_running;
	pthread_t thread;
	lfs_fs_notify notify;
	struct node *wh[WATCH_BUCKETS];
	uint64_t nwatches;
	bool watch_warned;
};

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

/* st_ino of a generated file/folder: hash of (model dev, ino, view path). */
static uint64_t view_ino(const struct node *model, const char *vpath)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	h = fnv64(h, &model->src_dev, sizeof(model->src_dev));
	h = fnv64(h, &model->src_ino, sizeof(model->src_ino));
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
	lfs_view_opts vo = { .texture_lookup = lfs_texture_lookup, .texture_ctx = &tc };
	struct stat fst;
	lfs_source_kind kind;
	lfs_viewset vs;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = lfs_source_load(fs->rootfd, rel, fs->o.max_model_size, &vo, &fst, &kind, &vs, &err);
	lfs_texture_ctx_free(&tc);
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

static void fill_virtual_dir(struct stat *a, const struct stat *src, const lfs_viewset *vs,
			     const char *vpath, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	size_t ndirs = 0;
	view_children(vs, vpath, count_dirs_cb, &ndirs);
	a->st_ino = ino;
	a->st_mode = S_IFDIR | dir_perm_from(src->st_mode);
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

static void fill_view_file(struct stat *a, const struct stat *src, const lfs_view *v, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	a->st_ino = ino;
	a->st_mode = S_IFREG | (src->st_mode & 0444);
	a->st_nlink = 1;
	a->st_uid = src->st_uid;
	a->st_gid = src->st_gid;
	a->st_size = (off_t)v->size;
	a->st_blocks = (blkcnt_t)((v->size + 511) / 512);
	a->st_blksize = 4096;
	a->st_atim = src->st_atim;
	a->st_mtim = src->st_mtim;
	a->st_ctim = src->st_ctim;
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
	fs->ifd = fs->stopfd = fs->rootfd = -1;
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
	if (fs->o.watch) {
		fs->ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
		fs->stopfd = eventfd(0, EFD_CLOEXEC);
		if (fs->ifd < 0 || fs->stopfd < 0) {
			fs_log(fs, LFS_LOG_WARNING, "inotify unavailable (%s): SOURCE changes show "
			       "only after the cache timeout", strerror(errno));
			if (fs->ifd >= 0)
				close(fs->ifd);
			if (fs->stopfd >= 0)
				close(fs->stopfd);
			fs->ifd = fs->stopfd = -1;
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
		free(n->name);
		free(n->rel);
		free(n);
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
	bool volatile_node = n->kind == K_CTLERR;
	e->entry_timeout = volatile_node ? 0 : fs->o.timeout;
	e->attr_timeout = volatile_node ? 0 : fs->o.timeout;
}

/* Find the hashed child (@p parent, @p name) of @p kind showing source (dev, ino), or make it. */
static struct node *child_for(lfs_fs *fs, struct node *parent, const char *name, enum nkind kind,
			      uint64_t dev, uint64_t ino, const char *rel, int *err)
{
	struct node *c = find_child(fs, parent, name);
	if (c && (c->kind != kind || c->src_dev != dev || c->src_ino != ino)) {
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
		if (kind == K_VDIR || kind == K_VFILE) {
			c->model = parent->kind == K_MODEL ? parent : parent->model;
			c->sino = view_ino(c->model, c->rel);
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
	enum nkind kind = v ? K_VFILE : K_VDIR;
	if (!v && !view_is_dir(vs, vpath)) {
		free(vpath);
		srcinfo_release(fs, &si);
		return ENOENT;
	}
	pthread_mutex_lock(&fs->mu);
	struct node *c = child_for(fs, p, name, kind, model->src_dev, model->src_ino, vpath, &r);
	if (c) {
		c->nlookup++;
		e->ino = c->id;
		e->generation = c->gen;
		if (v)
			fill_view_file(&e->attr, &si.st, v, c->sino);
		else
			fill_virtual_dir(&e->attr, &si.st, vs, vpath, c->sino);
		entry_timeouts(fs, c, e);
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
		/* Negative dentries are safe to cache only when the watcher drops them. */
		e->entry_timeout = fs->ifd >= 0 && pk != K_CTLDIR ? fs->o.timeout : 0;
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
	case K_VFILE: {
		struct srcinfo si;
		r = model_views(fs, ni.model, &si);
		if (r)
			return r;
		const lfs_viewset *vs = &si.ce->vs;
		if (ni.kind == K_VFILE) {
			const lfs_view *v = lfs_viewset_find(vs, ni.node->rel);
			if (v)
				fill_view_file(st, &si.st, v, ni.node->sino);
			else
				r = ESTALE;
		} else if (view_is_dir(vs, ni.node->rel)) {
			fill_virtual_dir(st, &si.st, vs, ni.node->rel, ni.node->sino);
		} else {
			r = ESTALE;
		}
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
	if (ni.kind != K_LINK)
		return EINVAL;
	ssize_t n = readlinkat(fs->rootfd, ni.node->rel, buf, bufsz - 1);
	if (n < 0)
		return errno;
	buf[n] = '\0';
	return 0;
}

int lfs_fs_open_check(lfs_fs *fs, uint64_t ino, int flags, bool dir)
{
	struct nodeinfo ni;
	int r = node_info(fs, ino, &ni);
	if (r)
		return r;
	bool is_dir = ni.kind == K_ROOT || ni.kind == K_DIR || ni.kind == K_MODEL ||
		      ni.kind == K_VDIR || ni.kind == K_CTLDIR;
	if (dir && !is_dir)
		return ENOTDIR;
	if (!dir && is_dir)
		return EISDIR;
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
		return EROFS;
	return 0;
}

int lfs_fs_statfs(lfs_fs *fs, struct statvfs *sv)
{
	if (fstatvfs(fs->rootfd, sv) != 0)
		return errno;
	sv->f_flag |= ST_RDONLY;
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
/* watcher                                                             */

struct inval {
	uint64_t id;
	char *name; /* NULL: inval_inode(id); else inval_entry(id, name) */
};

struct inval_list {
	struct inval *v;
	size_t n, cap;
};

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
	inval_add(l, d->id, ev->name);
	struct node *c = find_child(fs, d, ev->name);
	if (c)
		inval_subtree(l, c);
}

static void *watch_main(void *arg)
{
	lfs_fs *fs = arg;
	/* Aligned for struct inotify_event. */
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		struct pollfd pfd[2] = { { fs->ifd, POLLIN, 0 }, { fs->stopfd, POLLIN, 0 } };
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			fs_log(fs, LFS_LOG_ERR, "watcher: poll: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents)
			break;
		struct inval_list l = { 0 };
		pthread_mutex_lock(&fs->mu);
		for (;;) {
			ssize_t n = read(fs->ifd, buf, sizeof(buf));
			if (n <= 0)
				break;
			for (char *p = buf; p < buf + n;) {
				const struct inotify_event *ev = (const struct inotify_event *)(void *)p;
				watch_event(fs, ev, &l);
				p += sizeof(*ev) + ev->len;
			}
		}
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
	if (fs->ifd < 0 || fs->thread_running)
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
	pthread_mutex_unlock(&fs->mu);
}
