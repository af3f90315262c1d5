/**
 * @file supermodel.c
 * The supermodel link and inherited animations of an NWN model folder
 * (supermodel.h). No FUSE code.
 */
#define _GNU_SOURCE
#include "supermodel.h"

#include "replace.h"
#include "texture.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* File header (12 bytes) + model offset of the supermodel name (Torlack,
 * "The Model Header"): the name ends at file offset 12 + 0xA8 + 64. */
#define SUPER_NAME_OFF (12u + 0xA8u)
#define SUPER_HDR_NEED (SUPER_NAME_OFF + 64u)

static _Atomic uint64_t g_gen;

uint64_t lfs_supermodel_version(const char *rel)
{
	size_t l = rel ? strlen(rel) : 0;
	return l >= 4 && !strcasecmp(rel + l - 4, ".mdl") ? g_gen : 0;
}

void lfs_supermodel_changed(void)
{
	g_gen++;
}

bool lfs_supermodel_name(const uint8_t *data, size_t n, char out[65])
{
	out[0] = '\0';
	if (!data || n < SUPER_HDR_NEED || data[0] || data[1] || data[2] || data[3])
		return false;
	memcpy(out, data + SUPER_NAME_OFF, 64);
	out[64] = '\0';
	size_t l = strnlen(out, 64);
	while (l && (out[l - 1] == ' ' || out[l - 1] == '\t'))
		out[--l] = '\0';
	for (size_t i = 0; i < l; i++)
		if ((unsigned char)out[i] < 0x21 || out[i] == '/' || out[i] == '\\')
			return false; /* no ResRef: not looked up */
	return l && strcasecmp(out, "NULL") != 0;
}

/*
 * The supermodel of NWN ASCII model text @p data (@p n bytes): the third
 * word of the first `setsupermodel <model> <super>` line (any case; "NULL"
 * = none), looked for in the first LFS_SUPERMODEL_ASCII_SCAN bytes.
 */
#define LFS_SUPERMODEL_ASCII_SCAN ((size_t)1 << 20)
static bool ascii_super_name(const uint8_t *data, size_t n, char out[65])
{
	out[0] = '\0';
	if (n > LFS_SUPERMODEL_ASCII_SCAN)
		n = LFS_SUPERMODEL_ASCII_SCAN;
	const char *p = (const char *)data, *end = p + n;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *le = eol ? eol : end;
		while (p < le && (*p == ' ' || *p == '\t'))
			p++;
		if (le - p > 13 && !strncasecmp(p, "setsupermodel", 13) && (p[13] == ' ' || p[13] == '\t')) {
			const char *w[3];
			size_t wl[3];
			int k = 0;
			for (const char *q = p; q < le && k < 3;) {
				while (q < le && (*q == ' ' || *q == '\t' || *q == '\r'))
					q++;
				const char *b = q;
				while (q < le && *q != ' ' && *q != '\t' && *q != '\r')
					q++;
				if (q > b) {
					w[k] = b;
					wl[k++] = (size_t)(q - b);
				}
			}
			if (k < 3 || wl[2] > 64)
				return false;
			memcpy(out, w[2], wl[2]);
			out[wl[2]] = '\0';
			for (size_t i = 0; i < wl[2]; i++)
				if ((unsigned char)out[i] < 0x21 || out[i] == '/' || out[i] == '\\')
					return false;
			return strcasecmp(out, "NULL") != 0;
		}
		p = eol ? eol + 1 : end;
	}
	return false;
}

/* Names of the animations of @p vs: the folders below "anims/" (malloc'd, each strdup'd). */
static bool anim_names(const lfs_viewset *vs, char ***names, size_t *n)
{
	*names = NULL;
	*n = 0;
	size_t cap = 0;
	for (size_t i = 0; i < vs->n_views; i++) {
		const char *p = vs->views[i].path;
		if (strncmp(p, "anims/", 6) != 0 || vs->views[i].kind == LFS_VIEW_LINK)
			continue;
		const char *s = strchr(p + 6, '/');
		if (!s || s == p + 6)
			continue;
		size_t l = (size_t)(s - (p + 6));
		if (*n && strlen((*names)[*n - 1]) == l && !memcmp((*names)[*n - 1], p + 6, l))
			continue; /* sorted: one animation's files are together */
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **nv = realloc(*names, nc * sizeof(*nv));
			if (!nv)
				return false;
			*names = nv;
			cap = nc;
		}
		if (!((*names)[*n] = strndup(p + 6, l)))
			return false;
		++*n;
	}
	return true;
}

static bool has_name(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The folder part of @p rel ("" at the root), malloc'd. */
static char *dir_of(const char *rel)
{
	const char *s = strrchr(rel, '/');
	return s ? strndup(rel, (size_t)(s - rel)) : strdup("");
}

/* The supermodel name in the header of model file @p rel (a loose file: one read of its header; else its bytes). */
static bool file_super_name(int rootfd, const char *rel, size_t max, char out[65])
{
	uint8_t hdr[SUPER_HDR_NEED];
	int fd = openat(rootfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd >= 0) {
		ssize_t r = pread(fd, hdr, sizeof(hdr), 0);
		close(fd);
		if (r >= 4 && !hdr[0] && !hdr[1] && !hdr[2] && !hdr[3])
			return r == (ssize_t)sizeof(hdr) && lfs_supermodel_name(hdr, sizeof(hdr), out);
		if (r < 1)
			return false;
	}
	/* inside an archive, or an ASCII model shown as a folder: its bytes */
	uint8_t *d = NULL;
	size_t n = 0;
	struct stat st;
	bool ok = lfs_read_source(rootfd, rel, max, &d, &n, &st) == 0 &&
		  (n >= 4 && !d[0] && !d[1] && !d[2] && !d[3] ? lfs_supermodel_name(d, n, out)
							     : ascii_super_name(d, n, out));
	free(d);
	return ok;
}

/* Add view @p path -> @p target (kind LFS_VIEW_LINK) at the end of @p vs. */
static bool add_link(lfs_viewset *vs, char *path, char *target)
{
	if (!path || !target) {
		free(path);
		free(target);
		return false;
	}
	lfs_view *nv = realloc(vs->views, (vs->n_views + 1) * sizeof(*nv));
	if (!nv) {
		free(path);
		free(target);
		return false;
	}
	vs->views = nv;
	lfs_view *v = &nv[vs->n_views++];
	memset(v, 0, sizeof(*v));
	v->path = path;
	v->data = target;
	v->size = strlen(target);
	v->kind = LFS_VIEW_LINK;
	v->target = LFS_VIEW_WHOLE;
	return true;
}

static int view_cmp(const void *a, const void *b)
{
	return strcmp(((const lfs_view *)a)->path, ((const lfs_view *)b)->path);
}

/* The link from model folder @p rel to @p path (both relative to SOURCE's root), malloc'd. */
static char *link_target(const char *rel, const char *path)
{
	size_t up = 1;
	for (const char *q = rel; *q; q++)
		up += *q == '/';
	size_t pl = strlen(path);
	char *t = malloc(up * 3 + pl + 1);
	if (!t)
		return NULL;
	for (size_t i = 0; i < up; i++)
		memcpy(t + 3 * i, "../", 3);
	memcpy(t + 3 * up, path, pl + 1);
	return t;
}

/* Animation names of supermodel @p path (a names-only build) and its own supermodel name. */
static bool super_names(int rootfd, const char *path, size_t max, char ***names, size_t *n,
			char next[65], bool *readable, bool *built)
{
	*names = NULL;
	*n = 0;
	next[0] = '\0';
	*readable = false;
	*built = false;
	uint8_t *d = NULL;
	size_t dn = 0;
	struct stat st;
	if (lfs_read_source(rootfd, path, max, &d, &dn, &st) != 0)
		return true;
	bool binary = dn >= 4 && !d[0] && !d[1] && !d[2] && !d[3];
	if (!(binary ? lfs_supermodel_name(d, dn, next) : ascii_super_name(d, dn, next)))
		next[0] = '\0';
	lfs_view_opts o = { .names_only = true };
	lfs_viewset vs;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	const char *base = strrchr(path, '/');
	bool ok = true;
	/* an ASCII model is a plain file until the mount shows it as a folder:
	 * no animations to link, nothing to report */
	*readable = !binary;
	if (lfs_views_build(base ? base + 1 : path, d, dn, &o, &vs, &err) == LFS_OK) {
		*readable = true;
		*built = true;
		ok = anim_names(&vs, names, n);
		lfs_viewset_free(&vs);
	}
	free(d);
	return ok;
}

/*
 * Follow the chain from model @p rel (its supermodel @p name): the first
 * supermodel's path into *first (NULL when none) and the inherited
 * animation names (not in @p own) appended to *inh.
 */
static bool walk_chain(int rootfd, const char *rel, size_t max, const char *name, char **own, size_t nown,
		       char **first, char ***inh, size_t *ninh, size_t *capinh, lfs_sb *problems)
{
	char *seen[LFS_SUPERMODEL_DEPTH + 1];
	size_t nseen = 0;
	bool ok = true;
	char cur[65];
	snprintf(cur, sizeof(cur), "%s", name);
	char *dir = dir_of(rel);
	if (!dir || !(seen[nseen++] = strdup(rel))) {
		free(dir);
		return false;
	}
	unsigned depth = 0;
	while (ok && cur[0]) {
		if (depth == LFS_SUPERMODEL_DEPTH) {
			lfs_sb_printf(problems, "supermodel chain longer than %u models: not followed past %s\n",
				      LFS_SUPERMODEL_DEPTH, seen[nseen - 1]);
			break;
		}
		char *path = NULL;
		bool outside = false;
		if (!lfs_texture_model_path(rootfd, dir, cur, &path, &outside)) {
			lfs_sb_printf(problems, "supermodel %s of %s not found: looked for %s.mdl %s%s, then by "
				      "ResRef in SOURCE's resources and the respath folders (docs/mount.md \"Supermodels\")\n",
				      cur, seen[nseen - 1], cur, *dir ? "in " : "beside it at the top of SOURCE", dir);
			break;
		}
		if (outside) {
			lfs_sb_printf(problems, "supermodel %s of %s is %s, outside SOURCE: no link\n", cur,
				      seen[nseen - 1], path);
			free(path);
			break;
		}
		bool again = false;
		for (size_t i = 0; i < nseen; i++)
			again |= !strcmp(seen[i], path);
		if (again) {
			lfs_sb_printf(problems, "supermodel chain of %s comes back to %s (a cycle): not followed further\n",
				      rel, path);
			free(path);
			break;
		}
		if (!depth && !(*first = strdup(path)))
			ok = false;
		char **names = NULL;
		size_t n = 0;
		char next[65];
		bool readable = false, built = false;
		ok = ok && super_names(rootfd, path, max, &names, &n, next, &readable, &built);
		/* a supermodel shown as a plain file (not a folder): links past it
		 * could not resolve, the chain ends here */
		if (!built)
			next[0] = '\0';
		if (ok && !readable)
			lfs_sb_printf(problems, "supermodel %s (%s) does not decode: its animations are not listed\n",
				      cur, path);
		for (size_t i = 0; ok && i < n; i++) {
			if (has_name(own, nown, names[i]) || has_name(*inh, *ninh, names[i]))
				continue;
			if (*ninh == *capinh) {
				size_t nc = *capinh ? *capinh * 2 : 32;
				char **nv = realloc(*inh, nc * sizeof(*nv));
				if (!nv) {
					ok = false;
					break;
				}
				*inh = nv;
				*capinh = nc;
			}
			(*inh)[(*ninh)++] = names[i];
			names[i] = NULL;
		}
		free_names(names, n);
		free(dir);
		dir = dir_of(path);
		seen[nseen++] = path;
		if (!dir)
			ok = false;
		memcpy(cur, next, sizeof(cur));
		depth++;
	}
	free(dir);
	for (size_t i = 0; i < nseen; i++)
		free(seen[i]);
	return ok;
}

bool lfs_supermodel_add(int rootfd, const char *rel, size_t max, lfs_viewset *vs, lfs_sb *problems)
{
	size_t rl = strlen(rel);
	char name[65];
	if (rl < 4 || strcasecmp(rel + rl - 4, ".mdl") != 0 || vs->over_budget ||
	    lfs_viewset_find(vs, "supermodel") || !file_super_name(rootfd, rel, max, name))
		return true;
	char **own = NULL, **inh = NULL;
	size_t nown = 0, ninh = 0, capinh = 0;
	char *first = NULL;
	bool ok = anim_names(vs, &own, &nown) &&
		  walk_chain(rootfd, rel, max, name, own, nown, &first, &inh, &ninh, &capinh, problems);
	if (ok && first)
		ok = add_link(vs, strdup("supermodel"), link_target(rel, first));
	for (size_t i = 0; ok && first && i < ninh; i++) {
		char *p = NULL, *t = NULL;
		if (asprintf(&p, "anims/%s", inh[i]) < 0)
			p = NULL;
		if (asprintf(&t, "../supermodel/anims/%s", inh[i]) < 0)
			t = NULL;
		ok = add_link(vs, p, t);
	}
	if (vs->n_views > 1)
		qsort(vs->views, vs->n_views, sizeof(*vs->views), view_cmp);
	free(first);
	free_names(own, nown);
	free_names(inh, ninh);
	return ok;
}
