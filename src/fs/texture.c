/**
 * @file texture.c
 * Texture lookup for model.mtl and texture reading for thumbnails (see texture.h).
 */
#define _GNU_SOURCE
#include "texture.h"
#include "registry/container.h"
#include "resorder.h"

#include "../common/mem.h"
#include "formats/nwnarchive/restype.h"

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
	unsigned mdl;    /* 0 = a texture, 1 = a model (.mdl; supermodels) */
	lfs_resplace place; /* precedence (resorder.h: the one rule) */
	unsigned depth;  /* folders between the root and the file (0 in an archive) */
	int ext;         /* ext_rank() */
	size_t dirlen;   /* length of the folder part of path (without the '/') */
};

struct texindex {
	struct texent *v; /* sorted by key, then precedence; first per key wins */
	size_t n, cap;
	int rootfd;       /* SOURCE's root while it is walked (KEYs are read from it: their
			   * BIF names are relative to the install root, registry/container.h) */
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

/* Is @p name a model file's (".mdl", any case)? */
static bool mdl_name(const char *name)
{
	size_t n = strlen(name);
	return n > 4 && strcasecmp(name + n - 4, ".mdl") == 0;
}

static void index_add(struct texindex *x, const lfs_resorder *o, const char *prefix, const char *rel,
		      const char *name, unsigned root, unsigned depth)
{
	if (x->n >= LFS_TEXTURE_INDEX_MAX)
		return;
	bool mdl = mdl_name(name);
	int rk = mdl ? 0 : ext_rank(name);
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
	e->mdl = mdl;
	e->ext = rk;
	e->depth = depth;
	/* the place counts only folders inside the root, not the prefix; a
	 * respath folder gets the asset-folder rule (no install, no module) */
	size_t skip = prefix ? pfl + psep : 0;
	e->place = lfs_resorder_place(root ? NULL : o, LFS_RES_IN_FOLDER, full + skip,
				      e->dirlen > skip ? e->dirlen - skip : 0, depth);
	x->n++;
}

/* ---- archives (registry/container.h): their tables alone ---- */

/* A ResRef the mount names "resref.ext" as stored: printable ASCII, no '/', not "." or "..". */
static bool plain_resref(const char *r)
{
	if (!*r || !strcmp(r, ".") || !strcmp(r, ".."))
		return false;
	for (; *r; r++)
		if (*r <= ' ' || *r > '~' || *r == '/' || *r == '\\')
			return false;
	return true;
}

/* Texture rank of a resource type (tga, dds, plt), or -1. */
static int type_rank(uint16_t type)
{
	return type == LFS_RESTYPE_TGA ? 0 : type == LFS_RESTYPE_DDS ? 1 : type == 6 ? 2 : -1;
}

/* The lfs_container.each callback of index_container(). */
struct contadd {
	struct texindex *x;
	const char *crel; /* "<folder>/<name>" of the container */
	lfs_resplace place;
};

static void cont_add(void *ctx, const char *resref, uint16_t type)
{
	struct contadd *c = ctx;
	struct texindex *x = c->x;
	int rk = type_rank(type);
	bool mdl = type == LFS_RESTYPE_MDL;
	if ((rk < 0 && !mdl) || !plain_resref(resref) || x->n >= LFS_TEXTURE_INDEX_MAX)
		return;
	char ext[16];
	lfs_restype_name(type, ext, sizeof(ext));
	void *nv = x->v;
	if (!lfs_grow(&nv, &x->cap, x->n + 1, sizeof(*x->v)))
		return;
	x->v = nv;
	struct texent *e = &x->v[x->n];
	memset(e, 0, sizeof(*e));
	e->key = strdup(resref);
	if (!e->key || asprintf(&e->path, "%s/%s.%s", c->crel, resref, ext) < 0) {
		free(e->key);
		return;
	}
	for (char *k = e->key; *k; k++)
		*k = (char)(*k >= 'A' && *k <= 'Z' ? *k - 'A' + 'a' : *k);
	e->mdl = mdl;
	e->place = c->place;
	e->ext = mdl ? 0 : rk;
	e->dirlen = strlen(c->crel);
	x->n++;
}

/*
 * Add the textures and models of container @p name (of kind @p c) in folder
 * @p rel, read from SOURCE's root through the container's shared tables
 * (one table with the mount's folder of it; a KEY's BIF names are relative
 * to the install root): a container built from other files (a KEY) ranks
 * as the game's base data, any other as an archive (resorder.h).
 */
static void index_container(struct texindex *x, const lfs_resorder *o, const lfs_container *c,
			    const char *rel, const char *name)
{
	char *crel = NULL;
	if (x->rootfd < 0 || asprintf(&crel, "%s%s%s", rel, *rel ? "/" : "", name) < 0)
		return;
	bool base = c->uses_aux && c->uses_aux(name);
	struct contadd a = { x, crel,
			     base ? lfs_resorder_place(NULL, LFS_RES_IN_KEY, crel, strlen(crel), 0)
				  : lfs_resorder_place(o, LFS_RES_IN_ERF, crel, strlen(crel), 0) };
	c->each(x->rootfd, crel, cont_add, &a);
	free(crel);
}

/* An index walk: the index, the resource order (NULL: none), the root's
 * prefix (NULL for SOURCE) and number (0 = SOURCE, i + 1 = respath[i]). */
struct texwalk {
	struct texindex *x;
	const lfs_resorder *o;
	const char *prefix;
	unsigned root;
};

/* lfs_tree_walk() callback: add a texture file, or a container's textures
 * (below SOURCE only). */
static void index_entry(void *ctx, int dfd, const char *rel, const char *nm, unsigned char t,
			unsigned depth)
{
	const struct texwalk *w = ctx;
	if (t == DT_REG && w->root == 0 && lfs_container_for_name(nm))
		index_container(w->x, w->o, lfs_container_for_name(nm), rel, nm);
	else if (t == DT_REG || t == DT_LNK)
		index_add(w->x, w->o, w->prefix, rel, nm, w->root, depth);
}

static int ent_cmp(const void *a, const void *b)
{
	const struct texent *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	if (c)
		return c;
	if (x->mdl != y->mdl)
		return x->mdl < y->mdl ? -1 : 1;
	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	/* the place: resorder.h's one rule */
	c = lfs_resorder_cmp(&x->place, x->path, x->dirlen, &y->place, y->path, y->dirlen);
	if (c)
		return c;
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
	lfs_resorder ro; /* install roots, the module and its haks */
	lfs_resorder_scan(rootfd, &ro);
	int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	x->rootfd = rootfd;
	if (fd >= 0)
		lfs_tree_walk(fd, "", 0, index_entry, &(struct texwalk){ x, &ro, NULL, 0 });
	x->rootfd = -1;
	for (size_t i = 0; i < nrp; i++) {
		fd = open(rp[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			lfs_tree_walk(fd, "", 0, index_entry,
				      &(struct texwalk){ x, NULL, rp[i], (unsigned)i + 1 });
	}
	lfs_resorder_free(&ro);
	if (x->n > 1)
		qsort(x->v, x->n, sizeof(*x->v), ent_cmp);
	/* keep the first (winning) entry per key and class */
	size_t o = 0;
	for (size_t i = 0; i < x->n; i++) {
		if (o && x->v[o - 1].mdl == x->v[i].mdl && !strcmp(x->v[o - 1].key, x->v[i].key)) {
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

/* Path of @p resref (a model when @p mdl) in the index of @p rootfd into @p out (malloc'd), with its root. */
static bool index_find(int rootfd, const char *resref, bool mdl, char **out, unsigned *root)
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
		if (!c && x->v[mid].mdl != (unsigned)mdl)
			c = x->v[mid].mdl < (unsigned)mdl ? -1 : 1;
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

bool lfs_texture_archive_name(const char *name)
{
	return name && lfs_container_for_name(name) != NULL;
}

bool lfs_texture_index_name(const char *name)
{
	return name && (ext_rank(name) >= 0 || mdl_name(name) || lfs_container_for_name(name) ||
			!strcasecmp(name, "module.ifo"));
}

void lfs_texture_index_invalidate(int rootfd)
{
	pthread_mutex_lock(&g_mu);
	struct texroot *r = root_of(rootfd, false);
	if (r)
		r->gen++;
	pthread_mutex_unlock(&g_mu);
	/* archives and BIFs are read again too (a KEY's table keeps its BIFs open) */
	lfs_container_flush();
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

/*
 * The archive (ERF-family or KEY) holding model @p model_rel
 * ("<archive>/<name>", <archive> a regular file with an archive's
 * extension): the length of "<archive>", else 0.
 */
static size_t model_archive(int rootfd, const char *model_rel)
{
	const char *s = strrchr(model_rel, '/');
	if (!s || (size_t)(s - model_rel) >= PATH_MAX)
		return 0;
	char a[PATH_MAX];
	memcpy(a, model_rel, (size_t)(s - model_rel));
	a[s - model_rel] = '\0';
	struct stat st;
	const char *base = strrchr(a, '/');
	if (!lfs_container_for_name(base ? base + 1 : a) || fstatat(rootfd, a, &st, 0) != 0 ||
	    !S_ISREG(st.st_mode))
		return 0;
	return (size_t)(s - model_rel);
}

/*
 * The entry of archive @p arel (at @p dfd; an ERF or a KEY, through its
 * shared table, registry/container.h) named @p resref (ignoring case) of a
 * texture type (best rank first), or of type @p want when non-zero: its
 * stored ResRef and type. False when none.
 */
static bool arch_find(int dfd, const char *arel, const char *resref, uint16_t want, char stored[33],
		      uint16_t *type)
{
	const char *base = strrchr(arel, '/');
	const lfs_container *c = lfs_container_for_name(base ? base + 1 : arel);
	static const uint16_t tex[] = { LFS_RESTYPE_TGA, LFS_RESTYPE_DDS, 6 };
	bool ok = c && (want ? c->find(dfd, arel, resref, &want, 1, stored, type)
			     : c->find(dfd, arel, resref, tex, 3, stored, type));
	return ok && plain_resref(stored);
}

bool lfs_texture_lookup(void *ctx, const char *resref, char *out, size_t outsz)
{
	lfs_texture_ctx *c = ctx;
	if (!resref || !*resref || !c || !c->model_rel)
		return false;
	/* a model inside an archive: that archive's own textures first */
	size_t al = model_archive(c->rootfd, c->model_rel);
	if (al && al < PATH_MAX) {
		char arel[PATH_MAX], stored[33], ext[16];
		uint16_t type;
		memcpy(arel, c->model_rel, al);
		arel[al] = '\0';
		if (arch_find(c->rootfd, arel, resref, 0, stored, &type)) {
			lfs_restype_name(type, ext, sizeof(ext));
			return snprintf(out, outsz, "../%s.%s", stored, ext) < (int)outsz;
		}
	}
	if (lookup_ancestors(c, resref, out, outsz))
		return true;
	if (strchr(resref, '/') || !strcmp(resref, ".") || !strcmp(resref, ".."))
		return false;
	char *path = NULL;
	unsigned root = 0;
	if (!index_find(c->rootfd, resref, false, &path, &root))
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

/* Read regular file @p path (at @p dfd) whole, up to @p max bytes. */
static bool read_whole(int dfd, const char *path, size_t max, uint8_t **data, size_t *n)
{
	int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return false;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > max) {
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

/*
 * Read resource @p leaf ("resref.ext": ResRef ignoring case, type by the
 * extension) of archive @p arel (at @p dfd; an ERF or a KEY): through its
 * shared table (registry/container.h), that one payload (an E1 payload
 * decompressed and SHA-1-checked), at most @p max bytes.
 */
static bool arch_read(int dfd, const char *arel, const char *leaf, size_t max, uint8_t **data,
		      size_t *n)
{
	const char *dot = strrchr(leaf, '.');
	uint16_t type;
	if (!dot || dot == leaf || (size_t)(dot - leaf) > 32 || !lfs_restype_from_ext(dot + 1, &type))
		return false;
	char resref[33];
	memcpy(resref, leaf, (size_t)(dot - leaf));
	resref[dot - leaf] = '\0';
	const char *base = strrchr(arel, '/');
	const lfs_container *c = lfs_container_for_name(base ? base + 1 : arel);
	bool ok = c && c->read_resref(dfd, arel, resref, type, max, data, n);
	if (ok && *n == 0) {
		free(*data);
		*data = NULL;
		ok = false;
	}
	return ok;
}

/* Read @p path (relative to @p dfd): a file, or a resource "<archive>/<resref.ext>" of an ERF-family archive. */
static bool read_res(int dfd, const char *path, size_t max, uint8_t **data, size_t *n)
{
	if (read_whole(dfd, path, max, data, n))
		return true;
	const char *s = strrchr(path, '/');
	if (!s || (size_t)(s - path) >= PATH_MAX)
		return false;
	char arel[PATH_MAX];
	memcpy(arel, path, (size_t)(s - path));
	arel[s - path] = '\0';
	const char *base = strrchr(arel, '/');
	if (!lfs_container_for_name(base ? base + 1 : arel))
		return false;
	return arch_read(dfd, arel, s + 1, max, data, n);
}

bool lfs_texture_stat(int rootfd, const char *rel, struct stat *st)
{
	if (fstatat(rootfd, rel, st, 0) == 0)
		return true;
	const char *s = strrchr(rel, '/');
	if (!s || (size_t)(s - rel) >= PATH_MAX)
		return false;
	char arel[PATH_MAX];
	memcpy(arel, rel, (size_t)(s - rel));
	arel[s - rel] = '\0';
	const char *base = strrchr(arel, '/');
	return lfs_container_for_name(base ? base + 1 : arel) &&
	       fstatat(rootfd, arel, st, 0) == 0 && S_ISREG(st->st_mode);
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
		return read_whole(AT_FDCWD, rel, LFS_TEXTURE_READ_MAX, data, n);
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
	return read_res(c->rootfd, path, LFS_TEXTURE_READ_MAX, data, n);
}

bool lfs_texture_model_read(int rootfd, const char *dir, const char *name, size_t max,
			    uint8_t **data, size_t *n)
{
	*data = NULL;
	*n = 0;
	size_t len = strlen(name);
	if (!len || len > 32 || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	char leaf[64];
	snprintf(leaf, sizeof(leaf), "%s.mdl", name);
	/* a model inside an archive: the same archive first */
	const char *base = strrchr(dir, '/');
	struct stat st;
	if (*dir && lfs_container_for_name(base ? base + 1 : dir) && fstatat(rootfd, dir, &st, 0) == 0 &&
	    S_ISREG(st.st_mode) && arch_read(rootfd, dir, leaf, max, data, n))
		return true;
	char *path = NULL;
	unsigned root = 0;
	if (!index_find(rootfd, name, true, &path, &root))
		return false;
	bool ok = read_res(root ? AT_FDCWD : rootfd, path, max, data, n);
	free(path);
	return ok;
}

bool lfs_texture_model_path(int rootfd, const char *dir, const char *name, char **path, bool *outside)
{
	*path = NULL;
	*outside = false;
	size_t len = strlen(name);
	if (!len || len > 32 || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	struct stat st;
	const char *base = strrchr(dir, '/');
	bool in_arch = *dir && lfs_container_for_name(base ? base + 1 : dir) &&
		       fstatat(rootfd, dir, &st, 0) == 0 && S_ISREG(st.st_mode);
	if (in_arch) {
		/* a model inside an archive: the same archive's MDL resource first */
		char stored[33];
		uint16_t type;
		if (arch_find(rootfd, dir, name, LFS_RESTYPE_MDL, stored, &type))
		{
			if (asprintf(path, "%s/%s.mdl", dir, stored) < 0) {
				*path = NULL;
				return false;
			}
			return true;
		}
	} else {
		/* beside the model: as written, then lower case (lfs_sibling_model_read()) */
		for (int pass = 0; pass < 2; pass++) {
			char nm[40];
			for (size_t i = 0; i <= len; i++)
				nm[i] = pass && name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] + 32) : name[i];
			char *p = NULL;
			if (asprintf(&p, "%s%s%s.mdl", dir, *dir ? "/" : "", nm) < 0)
				return false;
			if (fstatat(rootfd, p, &st, 0) == 0 && S_ISREG(st.st_mode)) {
				*path = p;
				return true;
			}
			free(p);
		}
	}
	unsigned root = 0;
	if (!index_find(rootfd, name, true, path, &root))
		return false;
	*outside = root != 0;
	return true;
}
