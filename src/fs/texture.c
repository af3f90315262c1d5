/**
 * @file texture.c
 * Texture lookup for model.mtl and texture reading for thumbnails (see texture.h).
 */
#include "texture.h"

#include "../common/mem.h"

#include <dirent.h>
#include <errno.h>
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

bool lfs_texture_lookup(void *ctx, const char *resref, char *out, size_t outsz)
{
	lfs_texture_ctx *c = ctx;
	size_t rlen = strlen(resref);
	if (rlen == 0 || !c || !c->model_rel)
		return false;
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

bool lfs_texture_read(void *ctx, const char *resref, uint8_t **data, size_t *n)
{
	lfs_texture_ctx *c = ctx;
	*data = NULL;
	*n = 0;
	char rel[4096];
	if (!c || !c->model_rel || !lfs_texture_lookup(ctx, resref, rel, sizeof(rel)))
		return false;
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
	int fd = openat(c->rootfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
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
