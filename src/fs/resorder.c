/**
 * @file resorder.c
 * Game install layouts, the module's hak order, the precedence rule
 * (resorder.h) and the "which resource wins" listing (texture.h
 * lfs_texture_resources_text()).
 */
#define _GNU_SOURCE
#include "resorder.h"
#include "texture.h"

#include "../common/mem.h"
#include "../common/strbuf.h"
#include "formats/nwnarchive/restype.h"
#include "registry/container.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* Largest module.ifo read (a real one: a few KB). */
#define IFO_MAX ((size_t)16 << 20)

/* ---- one folder walk for the scan and the listing ------------------------ */

/* An ERF-family file's name (.erf .hak .mod .sav .nwm): a container not built from other files. */
static bool archive_name(const char *name)
{
	const lfs_container *c = lfs_container_for_name(name);
	return c && !(c->uses_aux && c->uses_aux(name));
}

void lfs_tree_walk(int dfd, const char *rel, unsigned depth, lfs_tree_walk_fn fn, void *ctx)
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
			fn(ctx, dirfd(dp), rel, nm, t, depth);
			if (depth >= LFS_TEXTURE_INDEX_DEPTH)
				continue;
			int cfd = openat(dirfd(dp), nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			char *crel = NULL;
			if (cfd < 0)
				continue;
			if (asprintf(&crel, "%s%s%s", rel, *rel ? "/" : "", nm) < 0) {
				close(cfd);
				continue;
			}
			lfs_tree_walk(cfd, crel, depth + 1, fn, ctx);
			free(crel);
		} else if (t == DT_REG || t == DT_LNK) {
			fn(ctx, dirfd(dp), rel, nm, t, depth);
		}
	}
	closedir(dp);
}

/* ---- small helpers -------------------------------------------------------- */

static bool push(char ***v, size_t *n, const char *s)
{
	char *c = strdup(s);
	void *nv = *v;
	size_t cap = *n; /* grow exactly: these lists are short */
	if (!c || !lfs_grow(&nv, &cap, *n + 1, sizeof(char *))) {
		free(c);
		return false;
	}
	*v = nv;
	(*v)[(*n)++] = c;
	return true;
}

static bool push_join(char ***v, size_t *n, const char *rel, const char *name)
{
	char *p = NULL;
	if (asprintf(&p, "%s%s%s", rel, *rel && *name ? "/" : "", name) < 0)
		return false;
	bool ok = push(v, n, p);
	free(p);
	return ok;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* Last component of @p rel (length *len), or "" for the root. */
static const char *base_of(const char *rel, size_t rl, size_t *len)
{
	size_t i = rl;
	while (i > 0 && rel[i - 1] != '/')
		i--;
	*len = rl - i;
	return rel + i;
}

/* Parent folder length of @p rel (0 = the root). */
static size_t parent_len(const char *rel, size_t rl)
{
	size_t i = rl;
	while (i > 0 && rel[i - 1] != '/')
		i--;
	return i ? i - 1 : 0;
}

static bool comp_is(const char *s, size_t n, const char *name)
{
	return n == strlen(name) && strncasecmp(s, name, n) == 0;
}

/* Is @p p (@p pl bytes) inside folder @p dir (or equal to it)? */
static bool under(const char *p, size_t pl, const char *dir)
{
	size_t dl = strlen(dir);
	if (dl == 0)
		return true;
	return pl >= dl && memcmp(p, dir, dl) == 0 && (pl == dl || p[dl] == '/');
}

static bool in_list(char **v, size_t n, const char *s, size_t sl)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(v[i]) == sl && memcmp(v[i], s, sl) == 0)
			return true;
	return false;
}

/* ---- the scan ------------------------------------------------------------- */

static void scan_fn(void *ctx, int dfd, const char *rel, const char *name, unsigned char dtype,
		    unsigned depth)
{
	(void)dfd;
	if (dtype == DT_LNK)
		return;
	bool dir = dtype == DT_DIR;
	lfs_resorder *o = ctx;
	size_t rl = strlen(rel), bl;
	const char *b = base_of(rel, rl, &bl);
	if (dir) {
		/* an EE user folder holds hak/, modules/ or override/ (nwn.wiki "Content Load Order") */
		if (depth <= 2 && (!strcasecmp(name, "hak") || !strcasecmp(name, "modules") ||
				   !strcasecmp(name, "override")) &&
		    !in_list(o->userdirs, o->nuserdirs, rel, rl))
			push(&o->userdirs, &o->nuserdirs, rel);
		if (depth <= 2 && !strcasecmp(name, "development"))
			push_join(&o->devcand, &o->ndevcand, rel, name);
		return;
	}
	if (!strcasecmp(name, "chitin.key") && depth <= 2)
		push(&o->inst, &o->ninst, rel);
	else if (!strcasecmp(name, "nwn_base.key") && depth >= 1 && depth <= 3 && comp_is(b, bl, "data")) {
		char *r = strndup(rel, parent_len(rel, rl));
		if (r)
			push(&o->inst, &o->ninst, r);
		free(r);
	} else if (!strcasecmp(name, "module.ifo"))
		push(&o->mods, &o->nmods, rel); /* an unpacked module: its folder */
	else if (archive_name(name)) {
		size_t nl = strlen(name);
		if (!strcasecmp(name + nl - 4, ".mod"))
			push_join(&o->mods, &o->nmods, rel, name);
		else if (!strcasecmp(name + nl - 4, ".hak"))
			push_join(&o->hakfiles, &o->nhakfiles, rel, name);
	}
}

/* Read the module.ifo of module @p m (a .mod file or a folder) into *data. */
static bool read_ifo(int rootfd, const char *m, bool isdir, uint8_t **data, size_t *n)
{
	*data = NULL;
	*n = 0;
	if (!isdir) {
		/* from the .mod: its one resource "module" of type ifo (registry/container.h) */
		const char *base = strrchr(m, '/');
		const lfs_container *c = lfs_container_for_name(base ? base + 1 : m);
		return c && c->read_resref(rootfd, m, "module", 2014, IFO_MAX, data, n);
	}
	int dfd = *m ? openat(rootfd, m, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : dup(rootfd);
	DIR *dp = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!dp) {
		if (dfd >= 0)
			close(dfd);
		return false;
	}
	struct dirent *de;
	bool ok = false;
	while (!ok && (de = readdir(dp)) != NULL) {
		if (strcasecmp(de->d_name, "module.ifo") != 0)
			continue;
		int fd = openat(dirfd(dp), de->d_name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		struct stat st;
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
		    (uint64_t)st.st_size <= IFO_MAX && (*data = malloc((size_t)st.st_size)) != NULL) {
			ssize_t k = pread(fd, *data, (size_t)st.st_size, 0);
			ok = k == (ssize_t)st.st_size;
			*n = ok ? (size_t)k : 0;
			if (!ok) {
				free(*data);
				*data = NULL;
			}
		}
		close(fd);
	}
	closedir(dp);
	return ok;
}

/* Rank of hak file @p path's folder: 0 `hak`, 1 `hk`, 2 elsewhere. */
static int hak_dir_rank(const char *path)
{
	size_t pl = strlen(path), bl;
	const char *b = base_of(path, parent_len(path, pl), &bl);
	if (parent_len(path, pl) == 0 && !strchr(path, '/'))
		return 2;
	return comp_is(b, bl, "hak") ? 0 : comp_is(b, bl, "hk") ? 1 : 2;
}

/* The hak file for list entry @p name: see lfs_resorder_scan(). */
static const char *find_hak(const lfs_resorder *o, const char *name)
{
	const char *best = NULL;
	int best_rank = 9;
	size_t nl = strlen(name);
	for (size_t i = 0; i < o->nhakfiles; i++) {
		const char *p = o->hakfiles[i];
		size_t bl;
		const char *b = base_of(p, strlen(p), &bl);
		if (bl != nl + 4 || strncasecmp(b, name, nl) != 0 || strcasecmp(b + nl, ".hak") != 0)
			continue;
		int rk = hak_dir_rank(p);
		if (rk < best_rank || (rk == best_rank && strcmp(p, best) < 0)) {
			best = p;
			best_rank = rk;
		}
	}
	return best;
}

void lfs_resorder_scan(int rootfd, lfs_resorder *o)
{
	memset(o, 0, sizeof(*o));
	int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		lfs_tree_walk(fd, "", 0, scan_fn, o);
	/* development/ in an install root or a user folder */
	for (size_t i = 0; i < o->ndevcand; i++) {
		const char *d = o->devcand[i];
		size_t pl = parent_len(d, strlen(d));
		if (in_list(o->inst, o->ninst, d, pl) || in_list(o->userdirs, o->nuserdirs, d, pl))
			push(&o->dev, &o->ndev, d);
	}
	/* the module: the bytewise smallest path */
	const char *m = NULL;
	for (size_t i = 0; i < o->nmods; i++)
		if (!m || strcmp(o->mods[i], m) < 0)
			m = o->mods[i];
	if (!m || !(o->module = strdup(m)))
		return;
	size_t ml = strlen(m);
	o->module_dir = !(ml > 4 && !strcasecmp(m + ml - 4, ".mod"));
	struct stat st;
	if (o->module_dir && *m && (fstatat(rootfd, m, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)))
		o->module_dir = false;
	uint8_t *ifo;
	size_t n, nh = 0;
	char **names = NULL;
	lfs_error e;
	if (!read_ifo(rootfd, o->module, o->module_dir, &ifo, &n))
		return;
	const char *mb = strrchr(o->module, '/');
	const lfs_container *mc = lfs_container_for_name(o->module_dir ? "module.mod" : mb ? mb + 1 : o->module);
	memset(&e, 0, sizeof(e));
	if (mc && mc->module_deps && mc->module_deps(ifo, n, &names, &nh, &e) == LFS_OK && nh &&
	    (o->haks = calloc(nh, sizeof(char *))) != NULL) {
		o->nhaks = nh;
		for (size_t i = 0; i < nh; i++) {
			const char *h = find_hak(o, names[i]);
			bool dup = false; /* a hak listed twice keeps its first place */
			for (size_t j = 0; h && j < i; j++)
				dup |= o->haks[j] && !strcmp(o->haks[j], h);
			o->haks[i] = h && !dup ? strdup(h) : NULL;
		}
	}
	for (size_t i = 0; names && i < nh; i++)
		free(names[i]);
	free(names);
	free(ifo);
}

void lfs_resorder_free(lfs_resorder *o)
{
	free_list(o->inst, o->ninst);
	free_list(o->dev, o->ndev);
	free(o->module);
	free_list(o->haks, o->nhaks);
	free_list(o->hakfiles, o->nhakfiles);
	free_list(o->mods, o->nmods);
	free_list(o->userdirs, o->nuserdirs);
	free_list(o->devcand, o->ndevcand);
	memset(o, 0, sizeof(*o));
}

/* ---- the rule ------------------------------------------------------------- */

unsigned lfs_resorder_key_rank(const char *name)
{
	/* later = larger: 1.69 (xoreos nwn.cpp), EE (neverwinter.nim game.nim) */
	static const char *const order[] = {
		"chitin.key",	    "patch.key",      "xp1.key",	"xp1patch.key",
		"xp2.key",	    "xp2patch.key",   "xp3.key",	"xp3patch.key",
		"nwn_base.key",	    "nwn_retail.key", "nwn_base_loc.key", "nwn_retail_loc.key",
	};
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (!strcasecmp(name, order[i]))
			return (unsigned)i + 1;
	return 0;
}

/* Override kind of loose folder @p c: 0 `override`, 1 EE `lang/<xx>/data/ovr`, 2 EE `ovr`, -1 none. */
static int override_kind(const lfs_resorder *o, const char *c, size_t cl)
{
	for (size_t i = 0; i < cl;) {
		size_t j = i;
		while (j < cl && c[j] != '/')
			j++;
		if (comp_is(c + i, j - i, "override"))
			return 0;
		i = j + 1;
	}
	for (size_t r = 0; o && r < o->ninst; r++) {
		const char *root = o->inst[r];
		size_t rl = strlen(root);
		if (!under(c, cl, root) || cl == rl)
			continue;
		const char *rem = c + (rl ? rl + 1 : 0);
		size_t reml = cl - (size_t)(rem - c), k = 0, at[5], len[5];
		for (size_t i = 0; i < reml && k < 5;) {
			size_t j = i;
			while (j < reml && rem[j] != '/')
				j++;
			at[k] = i;
			len[k++] = j - i;
			i = j + 1;
		}
		if (k >= 1 && comp_is(rem + at[0], len[0], "ovr"))
			return 2;
		if (k >= 4 && comp_is(rem + at[0], len[0], "lang") && comp_is(rem + at[2], len[2], "data") &&
		    comp_is(rem + at[3], len[3], "ovr"))
			return 1;
	}
	return -1;
}

lfs_resplace lfs_resorder_place(const lfs_resorder *o, lfs_res_kind kind, const char *cont,
				size_t contlen, unsigned depth)
{
	lfs_resplace p = { LFS_RES_LOOSE, 0, depth };
	if (kind == LFS_RES_IN_KEY) {
		size_t bl;
		char nm[64];
		const char *b = base_of(cont, contlen, &bl);
		snprintf(nm, sizeof(nm), "%.*s", (int)(bl < 63 ? bl : 63), b);
		p.tier = LFS_RES_KEY;
		p.sub = 1000u - lfs_resorder_key_rank(nm);
		p.depth = 0;
		return p;
	}
	if (kind == LFS_RES_IN_ERF) {
		p.tier = LFS_RES_ARCHIVE;
		p.depth = 0;
		for (size_t i = 0; o && i < o->nhaks; i++)
			if (o->haks[i] && strlen(o->haks[i]) == contlen && !memcmp(o->haks[i], cont, contlen)) {
				p.tier = LFS_RES_MODULE_HAK;
				p.sub = (uint32_t)i;
				return p;
			}
		if (o && o->module && !o->module_dir && strlen(o->module) == contlen &&
		    !memcmp(o->module, cont, contlen))
			p.tier = LFS_RES_MODULE;
		return p;
	}
	for (size_t i = 0; o && i < o->ndev; i++)
		if (under(cont, contlen, o->dev[i])) {
			p.tier = LFS_RES_DEVELOPMENT;
			return p;
		}
	if (o && o->module && o->module_dir && strlen(o->module) == contlen &&
	    !memcmp(o->module, cont, contlen)) {
		p.tier = LFS_RES_MODULE;
		return p;
	}
	int ov = override_kind(o, cont, contlen);
	if (ov >= 0) {
		p.tier = LFS_RES_OVERRIDE;
		p.sub = (uint32_t)ov;
		return p;
	}
	for (size_t i = 0; o && i < o->ninst; i++)
		if (under(cont, contlen, o->inst[i]))
			p.tier = LFS_RES_INSTALL_OTHER;
	return p;
}

int lfs_resorder_cmp(const lfs_resplace *a, const char *ac, size_t al, const lfs_resplace *b,
		     const char *bc, size_t bl)
{
	if (a->tier != b->tier)
		return a->tier < b->tier ? -1 : 1;
	if (a->sub != b->sub)
		return a->sub < b->sub ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	size_t m = al < bl ? al : bl;
	int c = memcmp(ac, bc, m);
	if (c)
		return c;
	return al == bl ? 0 : al < bl ? -1 : 1;
}

/* ---- "which resource wins" (texture.h lfs_texture_resources_text) ---------- */

/*
 * Memory: one string pool (every name and container path stored once, NUL
 * terminated), one array of 12-byte entries (pool offset of the name,
 * container index, type, ResRef length) and one array of containers (pool
 * offset and length of the path, place: 20 bytes); a 100,000-resource
 * install takes ~1.2 MB of entries plus ~1.5 MB of names. No per-entry malloc.
 */
struct lent {
	uint32_t name; /* pool offset: the file name (loose) or the ResRef as stored */
	uint32_t cont; /* container index */
	uint16_t type;
	uint16_t rlen; /* ResRef length (loose: the name without its extension) */
};

struct lcont {
	uint32_t path, plen; /* pool offset and length of the folder / archive / KEY path */
	lfs_resplace place;
	bool loose;          /* a folder (entries are file names) */
};

struct listing {
	const lfs_resorder *o;
	char *pool;
	size_t plen, pcap;
	struct lent *e;
	size_t n, cap;
	struct lcont *c;
	size_t nc, ccap;
	uint32_t cur;    /* container of key_fn */
	bool failed;
	int rootfd;      /* SOURCE's root: a KEY's BIF names are relative to the install root */
};

static uint32_t pool_add(struct listing *l, const char *s, size_t n)
{
	void *p = l->pool;
	if (l->plen + n + 1 > UINT32_MAX || !lfs_grow(&p, &l->pcap, l->plen + n + 1, 1)) {
		l->failed = true;
		return 0;
	}
	l->pool = p;
	uint32_t at = (uint32_t)l->plen;
	memcpy(l->pool + at, s, n);
	l->pool[at + n] = '\0';
	l->plen += n + 1;
	return at;
}

/* A new container for path "<rel>/<name>" (name may be ""); false when out of memory. */
static bool cont_add(struct listing *l, const char *rel, const char *name, lfs_res_kind kind,
		     unsigned depth)
{
	void *p = l->c;
	if (l->nc >= UINT32_MAX || !lfs_grow(&p, &l->ccap, l->nc + 1, sizeof(*l->c))) {
		l->failed = true;
		return false;
	}
	l->c = p;
	size_t rl = strlen(rel), nl = strlen(name);
	bool sep = rl && nl;
	uint32_t at = pool_add(l, rel, rl);
	if (l->failed)
		return false;
	if (sep || nl) {
		/* extend the string just added: "<rel>/<name>" */
		l->plen--; /* drop its NUL */
		if (sep)
			pool_add(l, "/", 1), l->plen--;
		pool_add(l, name, nl);
		if (l->failed)
			return false;
	}
	struct lcont *c = &l->c[l->nc];
	c->path = at;
	c->plen = (uint32_t)(rl + sep + nl);
	c->loose = kind == LFS_RES_IN_FOLDER;
	c->place = lfs_resorder_place(l->o, kind, l->pool + at, c->plen, depth);
	l->cur = (uint32_t)l->nc++;
	return true;
}

static void ent_add(struct listing *l, const char *name, size_t rlen, uint16_t type)
{
	void *p = l->e;
	if (l->n >= LFS_TEXTURE_INDEX_MAX || rlen > UINT16_MAX)
		return;
	if (!lfs_grow(&p, &l->cap, l->n + 1, sizeof(*l->e))) {
		l->failed = true;
		return;
	}
	l->e = p;
	struct lent *e = &l->e[l->n];
	e->name = pool_add(l, name, strlen(name));
	e->cont = l->cur;
	e->type = type;
	e->rlen = (uint16_t)rlen;
	if (!l->failed)
		l->n++;
}

/* Printable, no tab/newline, no '/': a name the listing can show on one line. */
static bool plain_name(const char *r)
{
	if (!*r || !strcmp(r, ".") || !strcmp(r, ".."))
		return false;
	for (; *r; r++)
		if ((unsigned char)*r < ' ' || *r == 0x7f || *r == '/' || *r == '\\')
			return false;
	return true;
}

static void key_fn(void *ctx, const char *resref, uint16_t type)
{
	struct listing *l = ctx;
	if (plain_name(resref) && type != LFS_RESTYPE_INVALID)
		ent_add(l, resref, strlen(resref), type);
}

static void list_fn(void *ctx, int dfd, const char *rel, const char *name, unsigned char dtype,
		    unsigned depth)
{
	if (dtype == DT_LNK)
		return;
	bool dir = dtype == DT_DIR;
	struct listing *l = ctx;
	if (dir || l->failed || !plain_name(name))
		return;
	const lfs_container *k = lfs_container_for_name(name);
	if (k) {
		/* an archive: its tables (a KEY's from SOURCE's root: its BIF names
		 * are relative to the install root) */
		bool base = k->uses_aux && k->uses_aux(name);
		char crel[PATH_MAX];
		if (snprintf(crel, sizeof(crel), "%s%s%s", rel, *rel ? "/" : "", name) < (int)sizeof(crel) &&
		    cont_add(l, rel, name, base ? LFS_RES_IN_KEY : LFS_RES_IN_ERF, depth))
			k->each(l->rootfd, crel, key_fn, l);
		return;
	}
	const char *dot = strrchr(name, '.');
	uint16_t type;
	if (!dot || dot == name || !lfs_restype_from_ext(dot + 1, &type) || type == 9998 /* bif */)
		return;
	for (const char *q = rel; *q; q++)
		if ((unsigned char)*q < ' ')
			return;
	/* one container per folder: the last one added, when it is this folder */
	size_t rl = strlen(rel);
	struct lcont *c = l->nc ? &l->c[l->cur] : NULL;
	if (!c || !c->loose || c->plen != rl || memcmp(l->pool + c->path, rel, rl) != 0) {
		if (!cont_add(l, rel, "", LFS_RES_IN_FOLDER, depth))
			return;
	}
	ent_add(l, name, (size_t)(dot - name), type);
}

static int lent_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct listing *l = ctx;
	const struct lent *a = pa, *b = pb;
	const char *an = l->pool + a->name, *bn = l->pool + b->name;
	size_t m = a->rlen < b->rlen ? a->rlen : b->rlen;
	int c = strncasecmp(an, bn, m);
	if (c)
		return c;
	if (a->rlen != b->rlen)
		return a->rlen < b->rlen ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	const struct lcont *ca = &l->c[a->cont], *cb = &l->c[b->cont];
	c = lfs_resorder_cmp(&ca->place, l->pool + ca->path, ca->plen, &cb->place, l->pool + cb->path,
			     cb->plen);
	return c ? c : strcmp(an, bn);
}

/* Write the location of @p e as the mount shows it. */
static void put_loc(lfs_sb *out, const struct listing *l, const struct lent *e)
{
	const struct lcont *c = &l->c[e->cont];
	if (c->plen) {
		lfs_sb_put(out, l->pool + c->path, c->plen);
		lfs_sb_putc(out, '/');
	}
	if (c->loose) {
		lfs_sb_puts(out, l->pool + e->name);
	} else {
		char ext[16];
		lfs_sb_printf(out, "%s.%s", l->pool + e->name, lfs_restype_name(e->type, ext, sizeof(ext)));
	}
}

bool lfs_texture_resources_text(int rootfd, lfs_sb *out)
{
	lfs_resorder o;
	lfs_resorder_scan(rootfd, &o);
	struct listing l;
	memset(&l, 0, sizeof(l));
	l.o = &o;
	l.rootfd = rootfd;
	int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		lfs_tree_walk(fd, "", 0, list_fn, &l);
	if (!l.failed && l.n > 1)
		qsort_r(l.e, l.n, sizeof(*l.e), lent_cmp, &l);
	for (size_t i = 0; i < l.n && !l.failed;) {
		size_t j = i + 1;
		while (j < l.n && l.e[j].type == l.e[i].type && l.e[j].rlen == l.e[i].rlen &&
		       !strncasecmp(l.pool + l.e[j].name, l.pool + l.e[i].name, l.e[i].rlen))
			j++;
		char ext[16];
		lfs_sb_put(out, l.pool + l.e[i].name, l.e[i].rlen);
		lfs_sb_printf(out, ".%s", lfs_restype_name(l.e[i].type, ext, sizeof(ext)));
		for (size_t k = i; k < j; k++) {
			lfs_sb_putc(out, '\t');
			put_loc(out, &l, &l.e[k]);
		}
		lfs_sb_putc(out, '\n');
		i = j;
	}
	bool ok = !l.failed && lfs_sb_ok(out);
	free(l.pool);
	free(l.e);
	free(l.c);
	lfs_resorder_free(&o);
	return ok;
}
