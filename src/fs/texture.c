/**
 * @file texture.c
 * Texture lookup for model.mtl and texture reading for thumbnails (see texture.h).
 */
#define _GNU_SOURCE
#include "texture.h"

#include "../common/mem.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const tex_ext[] = { ".tga", ".dds", ".plt" };
#define N_TEX_EXT (sizeof(tex_ext) / sizeof(tex_ext[0]))

/* Rank of a file name's texture extension (0 = best), or -1. */
static int ext_rank(const char *name)
{
	size_t n = strlen(name);
	if (n < 5)
		return -1;
	for (size_t i = 0; i < N_TEX_EXT; i++)
		if (strcasecmp(name + n - 4, tex_ext[i]) == 0)
			return (int)i;
	return -1;
}

void lfs_texture_ctx_init(lfs_texture_ctx *c, int rootfd, const char *model_rel)
{
	memset(c, 0, sizeof(*c));
	c->rootfd = rootfd;
	c->model_rel = model_rel;
}

void lfs_texture_ctx_free(lfs_texture_ctx *c)
{
	for (size_t i = 0; i < c->n_dirs; i++) {
		for (size_t j = 0; j < c->dirs[i].n; j++)
			free(c->dirs[i].names[j]);
		free(c->dirs[i].names);
		free(c->dirs[i].rel);
	}
	free(c->dirs);
	c->dirs = NULL;
	c->n_dirs = c->cap_dirs = 0;
}

/* List @p rel (texture names only) into a new cache slot; NULL on failure. */
static lfs_texdir *list_dir(lfs_texture_ctx *c, const char *rel)
{
	for (size_t i = 0; i < c->n_dirs; i++)
		if (strcmp(c->dirs[i].rel, rel) == 0)
			return &c->dirs[i];
	void *nd = c->dirs;
	if (!lfs_grow(&nd, &c->cap_dirs, c->n_dirs + 1, sizeof(lfs_texdir)))
		return NULL;
	c->dirs = nd;
	lfs_texdir *d = &c->dirs[c->n_dirs];
	memset(d, 0, sizeof(*d));
	d->rel = strdup(rel);
	if (!d->rel)
		return NULL;
	c->n_dirs++;
	int fd = openat(c->rootfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return d; /* unreadable folder: no textures there */
	DIR *dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return d;
	}
	size_t cap = 0;
	struct dirent *de;
	while ((de = readdir(dp)) != NULL) {
		if (de->d_type != DT_REG && de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
			continue;
		if (ext_rank(de->d_name) < 0)
			continue;
		void *nn = d->names;
		if (!lfs_grow(&nn, &cap, d->n + 1, sizeof(char *)))
			break;
		d->names = nn;
		char *s = strdup(de->d_name);
		if (!s)
			break;
		d->names[d->n++] = s;
	}
	closedir(dp);
	return d;
}

/* The nearest-ancestor rule (texture.h). */
static bool lookup_ancestors(lfs_texture_ctx *c, const char *resref, char *out, size_t outsz)
{
	size_t rlen = strlen(resref);
	/* Folder of the model file, then its ancestors. */
	char dir[4096];
	const char *slash = strrchr(c->model_rel, '/');
	size_t dlen = slash ? (size_t)(slash - c->model_rel) : 0;
	if (dlen >= sizeof(dir))
		return false;
	memcpy(dir, c->model_rel, dlen);
	dir[dlen] = '\0';
	unsigned up = 1; /* from the model directory to the model file's folder */
	for (;;) {
		lfs_texdir *d = list_dir(c, dlen ? dir : ".");
		const char *best = NULL;
		int best_rank = 99;
		for (size_t i = d ? d->n : 0; i-- > 0;) {
			const char *nm = d->names[i];
			if (strlen(nm) != rlen + 4 || strncasecmp(nm, resref, rlen) != 0)
				continue;
			int rk = ext_rank(nm);
			if (rk < best_rank || (rk == best_rank && strcmp(nm, best) < 0)) {
				best = nm;
				best_rank = rk;
			}
		}
		if (best) {
			size_t need = (size_t)up * 3 + strlen(best) + 1;
			if (need > outsz)
				return false;
			char *p = out;
			for (unsigned i = 0; i < up; i++, p += 3)
				memcpy(p, "../", 3);
			memcpy(p, best, strlen(best) + 1);
			return true;
		}
		if (dlen == 0)
			return false;
		char *s = strrchr(dir, '/');
		dlen = s ? (size_t)(s - dir) : 0;
		dir[dlen] = '\0';
		up++;
	}
}

/* ---- SOURCE-wide index (texture.h "Resolution over SOURCE") ------------- */

/* One texture file of the index. */
struct texent {
	char *key;       /* resref, lower-case (the name without its extension) */
	char *path;      /* relative to its root ('/'-separated), or absolute (respath) */
	unsigned root;   /* 0 = SOURCE, 1.. = respath folders in their order */
	unsigned ovr;    /* 0 when some folder of the path is named "override", else 1 */
	unsigned depth;  /* folders between the root and the file */
	int ext;         /* ext_rank() */
	size_t dirlen;   /* length of the folder part of path (without the '/') */
};

struct texindex {
	struct texent *v; /* sorted by key, then precedence; first per key wins */
	size_t n, cap;
};

/* Per SOURCE root (by device and inode), process-wide. */
struct texroot {
	dev_t dev;
	ino_t ino;
	unsigned gen, built_gen; /* invalidations seen / the one the index reflects */
	bool building;           /* a lookup is building the index (outside g_mu) */
	struct texindex *idx;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static struct texroot *g_roots;
static size_t g_nroots, g_caproots;
static char **g_respath;
static size_t g_nrespath;
static unsigned g_respath_gen;

static void index_free(struct texindex *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->n; i++) {
		free(x->v[i].key);
		free(x->v[i].path);
	}
	free(x->v);
	free(x);
}

static bool is_override(const char *path, size_t dirlen)
{
	for (size_t i = 0; i < dirlen;) {
		size_t j = i;
		while (j < dirlen && path[j] != '/')
			j++;
		if (j - i == 8 && strncasecmp(path + i, "override", 8) == 0)
			return true;
		i = j + 1;
	}
	return false;
}

static void index_add(struct texindex *x, const char *prefix, const char *rel, const char *name,
		      unsigned root, unsigned depth)
{
	if (x->n >= LFS_TEXTURE_INDEX_MAX)
		return;
	int rk = ext_rank(name);
	if (rk < 0)
		return;
	void *nv = x->v;
	if (!lfs_grow(&nv, &x->cap, x->n + 1, sizeof(*x->v)))
		return;
	x->v = nv;
	struct texent *e = &x->v[x->n];
	size_t nl = strlen(name);
	e->key = strndup(name, nl - 4);
	/* the folder: "<prefix>/<rel>", "<prefix>", "<rel>" or "" (the root) */
	char *path = NULL;
	size_t pfl = prefix ? strlen(prefix) : 0;
	bool psep = pfl && *rel && prefix[pfl - 1] != '/'; /* respath "/" */
	if (asprintf(&path, "%s%s%s", prefix ? prefix : "", psep ? "/" : "", rel) < 0) {
		free(e->key);
		return;
	}
	char *full = NULL;
	size_t fl = strlen(path);
	if (!e->key || asprintf(&full, "%s%s%s", path, fl && path[fl - 1] != '/' ? "/" : "", name) < 0) {
		free(e->key);
		free(path);
		return;
	}
	e->dirlen = strlen(path);
	free(path);
	for (char *k = e->key; *k; k++)
		*k = (char)(*k >= 'A' && *k <= 'Z' ? *k - 'A' + 'a' : *k);
	e->path = full;
	e->root = root;
	e->ext = rk;
	e->depth = depth;
	/* "override" counts only for folders inside the root, not the prefix */
	size_t skip = prefix ? pfl + psep : 0;
	e->ovr = (e->dirlen > skip && is_override(full + skip, e->dirlen - skip)) ? 0 : 1;
	x->n++;
}

/* Add the texture files below folder @p dfd (path @p rel from the root, "" = root). */
static void index_walk(struct texindex *x, int dfd, const char *prefix, const char *rel,
		       unsigned root, unsigned depth)
{
	DIR *dp = fdopendir(dfd);
	if (!dp) {
		close(dfd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(dp)) != NULL) {
		const char *nm = de->d_name;
		if (!strcmp(nm, ".") || !strcmp(nm, ".."))
			continue;
		unsigned char t = de->d_type;
		if (t == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(dirfd(dp), nm, &st, AT_SYMLINK_NOFOLLOW) != 0)
				continue;
			t = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG :
			    S_ISLNK(st.st_mode) ? DT_LNK : DT_UNKNOWN;
		}
		if (t == DT_DIR) {
			/* symbolic links to folders are not followed: no loops */
			if (depth >= LFS_TEXTURE_INDEX_DEPTH)
				continue;
			int cfd = openat(dirfd(dp), nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd < 0)
				continue;
			char *crel = NULL;
			if (asprintf(&crel, "%s%s%s", rel, *rel ? "/" : "", nm) < 0) {
				close(cfd);
				continue;
			}
			index_walk(x, cfd, prefix, crel, root, depth + 1);
			free(crel);
		} else if (t == DT_REG || t == DT_LNK) {
			index_add(x, prefix, rel, nm, root, depth);
		}
	}
	closedir(dp);
}

static int ent_cmp(const void *a, const void *b)
{
	const struct texent *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	if (x->ovr != y->ovr)
		return x->ovr < y->ovr ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	size_t m = x->dirlen < y->dirlen ? x->dirlen : y->dirlen;
	c = memcmp(x->path, y->path, m);
	if (c)
		return c;
	if (x->dirlen != y->dirlen)
		return x->dirlen < y->dirlen ? -1 : 1;
	if (x->ext != y->ext)
		return x->ext < y->ext ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Build the index of the root @p rootfd and the respath folders @p rp (copies). */
static struct texindex *index_build(int rootfd, char **rp, size_t nrp)
{
	struct texindex *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		index_walk(x, fd, NULL, "", 0, 0);
	for (size_t i = 0; i < nrp; i++) {
		fd = open(rp[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			index_walk(x, fd, rp[i], "", (unsigned)i + 1, 0);
	}
	if (x->n > 1)
		qsort(x->v, x->n, sizeof(*x->v), ent_cmp);
	/* keep the first (winning) entry per key */
	size_t o = 0;
	for (size_t i = 0; i < x->n; i++) {
		if (o && !strcmp(x->v[o - 1].key, x->v[i].key)) {
			free(x->v[i].key);
			free(x->v[i].path);
			continue;
		}
		x->v[o++] = x->v[i];
	}
	x->n = o;
	return x;
}

static struct texroot *root_of(int rootfd, bool add)
{
	struct stat st;
	if (fstat(rootfd, &st) != 0)
		return NULL;
	for (size_t i = 0; i < g_nroots; i++)
		if (g_roots[i].dev == st.st_dev && g_roots[i].ino == st.st_ino)
			return &g_roots[i];
	if (!add)
		return NULL;
	void *nr = g_roots;
	if (!lfs_grow(&nr, &g_caproots, g_nroots + 1, sizeof(*g_roots)))
		return NULL;
	g_roots = nr;
	struct texroot *r = &g_roots[g_nroots++];
	memset(r, 0, sizeof(*r));
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	r->gen = 1; /* built_gen 0: not built */
	return r;
}

/* Path of @p resref in the index of @p rootfd into @p out (malloc'd), with its root. */
static bool index_find(int rootfd, const char *resref, char **out, unsigned *root)
{
	char key[256];
	size_t rl = strlen(resref);
	if (rl == 0 || rl >= sizeof(key) || strchr(resref, '/'))
		return false;
	for (size_t i = 0; i <= rl; i++)
		key[i] = (char)(resref[i] >= 'A' && resref[i] <= 'Z' ? resref[i] - 'A' + 'a' : resref[i]);
	pthread_mutex_lock(&g_mu);
	struct texroot *r;
	for (;;) {
		r = root_of(rootfd, true);
		if (!r) {
			pthread_mutex_unlock(&g_mu);
			return false;
		}
		if (!r->building)
			break;
		/* one build per root at a time: wait for it */
		pthread_cond_wait(&g_cv, &g_mu);
	}
	unsigned want = r->gen + g_respath_gen;
	if (!r->idx || r->built_gen != want) {
		/* build outside the lock (a big SOURCE takes a while); a concurrent
		 * invalidation makes the result stale and the next lookup rebuild */
		r->building = true;
		char **rp = NULL;
		size_t nrp = 0;
		if (g_nrespath && (rp = calloc(g_nrespath, sizeof(*rp))) != NULL)
			for (; nrp < g_nrespath; nrp++)
				if (!(rp[nrp] = strdup(g_respath[nrp])))
					break;
		dev_t dev = r->dev;
		ino_t ino = r->ino;
		pthread_mutex_unlock(&g_mu);
		struct texindex *x = index_build(rootfd, rp, nrp);
		for (size_t i = 0; i < nrp; i++)
			free(rp[i]);
		free(rp);
		pthread_mutex_lock(&g_mu);
		r = NULL; /* g_roots may have moved; roots are never removed */
		for (size_t i = 0; i < g_nroots; i++)
			if (g_roots[i].dev == dev && g_roots[i].ino == ino)
				r = &g_roots[i];
		if (r)
			r->building = false;
		pthread_cond_broadcast(&g_cv);
		if (!r || !x) {
			pthread_mutex_unlock(&g_mu);
			index_free(x);
			return false;
		}
		index_free(r->idx);
		r->idx = x;
		r->built_gen = want;
	}
	bool ok = false;
	struct texindex *x = r->idx;
	size_t lo = 0, hi = x->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(x->v[mid].key, key);
		if (c == 0) {
			*out = strdup(x->v[mid].path);
			*root = x->v[mid].root;
			ok = *out != NULL;
			break;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	pthread_mutex_unlock(&g_mu);
	return ok;
}

bool lfs_texture_name(const char *name)
{
	return name && ext_rank(name) >= 0;
}

void lfs_texture_index_invalidate(int rootfd)
{
	pthread_mutex_lock(&g_mu);
	struct texroot *r = root_of(rootfd, false);
	if (r)
		r->gen++;
	pthread_mutex_unlock(&g_mu);
}

int lfs_texture_set_respath(const char *dirs)
{
	char **v = NULL;
	size_t n = 0, cap = 0;
	int err = 0;
	for (const char *p = dirs ? dirs : ""; *p;) {
		const char *e = strchr(p, ':');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		if (l) {
			char *d = strndup(p, l), *abs = d ? realpath(d, NULL) : NULL;
			struct stat st;
			if (!d)
				err = ENOMEM;
			else if (!abs)
				err = errno;
			else if (stat(abs, &st) != 0 || !S_ISDIR(st.st_mode))
				err = ENOTDIR;
			free(d);
			void *nv = v;
			if (!err && !lfs_grow(&nv, &cap, n + 1, sizeof(*v)))
				err = ENOMEM;
			if (err) {
				free(abs);
				break;
			}
			v = nv;
			v[n++] = abs;
		}
		p += l + (e ? 1 : 0);
	}
	if (err) {
		for (size_t i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return err;
	}
	pthread_mutex_lock(&g_mu);
	for (size_t i = 0; i < g_nrespath; i++)
		free(g_respath[i]);
	free(g_respath);
	g_respath = v;
	g_nrespath = n;
	g_respath_gen++;
	pthread_mutex_unlock(&g_mu);
	return 0;
}

bool lfs_texture_lookup(void *ctx, const char *resref, char *out, size_t outsz)
{
	lfs_texture_ctx *c = ctx;
	if (!resref || !*resref || !c || !c->model_rel)
		return false;
	if (lookup_ancestors(c, resref, out, outsz))
		return true;
	if (strchr(resref, '/') || !strcmp(resref, ".") || !strcmp(resref, ".."))
		return false;
	char *path = NULL;
	unsigned root = 0;
	if (!index_find(c->rootfd, resref, &path, &root))
		return false;
	bool ok = false;
	if (root) {
		/* respath: the absolute path */
		size_t pl = strlen(path);
		if (pl < outsz) {
			memcpy(out, path, pl + 1);
			ok = true;
		}
	} else {
		/* from the model directory "<model_rel>/" up to the root */
		unsigned up = 1;
		for (const char *q = c->model_rel; *q; q++)
			up += *q == '/';
		size_t need = (size_t)up * 3 + strlen(path) + 1;
		if (need <= outsz) {
			char *p = out;
			for (unsigned i = 0; i < up; i++, p += 3)
				memcpy(p, "../", 3);
			memcpy(p, path, strlen(path) + 1);
			ok = true;
		}
	}
	free(path);
	return ok;
}

/* Read regular file @p path (at @p dfd) whole, up to LFS_TEXTURE_READ_MAX bytes. */
static bool read_whole(int dfd, const char *path, uint8_t **data, size_t *n)
{
	int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return false;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > LFS_TEXTURE_READ_MAX) {
		close(fd);
		return false;
	}
	size_t sz = (size_t)st.st_size, got = 0;
	uint8_t *buf = malloc(sz);
	while (buf && got < sz) {
		ssize_t k = read(fd, buf + got, sz - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	if (!buf || got == 0) {
		free(buf);
		return false;
	}
	*data = buf;
	*n = got;
	return true;
}

bool lfs_texture_read(void *ctx, const char *resref, uint8_t **data, size_t *n)
{
	lfs_texture_ctx *c = ctx;
	*data = NULL;
	*n = 0;
	char rel[4096];
	if (!c || !c->model_rel || !lfs_texture_lookup(ctx, resref, rel, sizeof(rel)))
		return false;
	if (rel[0] == '/') {
		/* a respath folder: an absolute path */
		return read_whole(AT_FDCWD, rel, data, n);
	}
	/* rel is relative to the model directory ("<model_rel>/"): each "../"
	 * removes one component of model_rel, the first one the file name. */
	char path[8192];
	size_t pl = strlen(c->model_rel);
	if (pl >= sizeof(path))
		return false;
	memcpy(path, c->model_rel, pl + 1);
	const char *r = rel;
	while (strncmp(r, "../", 3) == 0) {
		char *s = strrchr(path, '/');
		pl = s ? (size_t)(s - path) : 0;
		path[pl] = '\0';
		r += 3;
	}
	size_t rl = strlen(r);
	if (pl + 1 + rl + 1 > sizeof(path))
		return false;
	if (pl)
		path[pl++] = '/';
	memcpy(path + pl, r, rl + 1);
	return read_whole(c->rootfd, path, data, n);
}
