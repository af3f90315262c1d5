/**
 * @file thumb_models.c
 * What every format's thumbnail scene shares (thumb_models.h): the texture
 * cache and material rule, and the pipeline scene -> render -> PNG through
 * the format's lfs_format.thumb_scene. The scenes themselves are in
 * <format>_thumb.c.
 */
#include "thumb_models.h"

#include "../common/mem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- textures ------------------------------------------------------------ */

void lfs_thumb_texcache_free(lfs_thumb_texcache *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->names[i]);
	free(c->names);
	free(c->idx);
	memset(c, 0, sizeof(*c));
}

/* The resref part of a texture or material name: after the last '/' or
 * '\\', without an extension of up to 3 characters after the last '.'. */
void lfs_thumb_resref_of(const char *name, size_t len, char *out, size_t outsz)
{
	const char *b = name, *e = name + len;
	for (const char *p = name; p < e && *p; p++)
		if (*p == '/' || *p == '\\')
			b = p + 1;
	const char *z = memchr(b, '\0', (size_t)(e - b));
	if (z)
		e = z;
	const char *dot = NULL;
	for (const char *p = b; p < e; p++)
		if (*p == '.')
			dot = p;
	if (dot && e - dot >= 2 && e - dot <= 4)
		e = dot;
	size_t n = (size_t)(e - b);
	if (n >= outsz)
		n = outsz - 1;
	memcpy(out, b, n);
	out[n] = '\0';
}

static uint32_t tex_get(lfs_thumb_scene *s, lfs_thumb_texcache *c, const lfs_view_opts *o, const char *resref)
{
	if (!resref[0] || !strcasecmp(resref, "NULL") || !o || !o->texture_read)
		return LFS_THUMB_NONE;
	for (size_t i = 0; i < c->n; i++)
		if (!strcasecmp(c->names[i], resref))
			return c->idx[i];
	uint32_t idx = LFS_THUMB_NONE;
	uint8_t *data = NULL;
	size_t n = 0;
	if (o->texture_read(o->texture_ctx, resref, &data, &n) && data) {
		uint8_t *rgba;
		uint32_t w, h;
		if (lfs_thumb_decode_texture(data, n, &rgba, &w, &h))
			idx = lfs_thumb_add_tex(s, rgba, w, h);
	}
	free(data);
	size_t cap = c->cap;
	if (!lfs_grow((void **)&c->names, &cap, c->n + 1, sizeof(*c->names)))
		return idx;
	if (!lfs_grow((void **)&c->idx, &c->cap, c->n + 1, sizeof(*c->idx)))
		return idx;
	char *dup = strdup(resref);
	if (!dup)
		return idx;
	c->names[c->n] = dup;
	c->idx[c->n++] = idx;
	return idx;
}

/* A material: texture when found, else the colour (grey when black/absent). */
uint32_t lfs_thumb_material(lfs_thumb_scene *s, lfs_thumb_texcache *c, const lfs_view_opts *o,
			     const char *resref, const float *rgb, bool alpha_test)
{
	lfs_thumb_mat m = { .rgb = { 0.75f, 0.75f, 0.75f }, .tex = LFS_THUMB_NONE,
			    .alpha_test = alpha_test };
	if (rgb && isfinite(rgb[0]) && isfinite(rgb[1]) && isfinite(rgb[2]) &&
	    (rgb[0] > 0.02f || rgb[1] > 0.02f || rgb[2] > 0.02f))
		memcpy(m.rgb, rgb, sizeof(m.rgb));
	if (resref)
		m.tex = tex_get(s, c, o, resref);
	return lfs_thumb_add_mat(s, &m);
}
/* ---- entry points -------------------------------------------------------- */

lfs_err lfs_thumb_scene_of(const lfs_format *f, const uint8_t *data, size_t n,
			   const lfs_view_opts *opts, lfs_thumb_scene *s, lfs_error *err)
{
	if (!f)
		return lfs_fail(err, LFS_ERR_NOTFORMAT, SIZE_MAX, "thumbnail", "not a model");
	if (!f->thumb_scene)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "thumbnail",
				"%s files have no geometry: no thumbnail", f->name);
	return f->thumb_scene(data, n, opts, s, err);
}

lfs_err lfs_thumb_model(const lfs_format *f, const uint8_t *data, size_t n, unsigned size,
			const lfs_view_opts *opts, const char *uri, int64_t mtime, uint8_t **png,
			size_t *pngn, lfs_error *err)
{
	*png = NULL;
	*pngn = 0;
	if (!lfs_thumb_size_ok(size))
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "thumbnail",
				"thumbnail size %u: use 128, 256, 512 or 1024", size);
	lfs_thumb_scene s = { 0 };
	lfs_err r = lfs_thumb_scene_of(f, data, n, opts, &s, err);
	uint8_t *rgba = NULL;
	if (!r)
		r = lfs_thumb_render(&s, size, &rgba, err);
	lfs_thumb_scene_free(&s);
	if (!r)
		r = lfs_thumb_png(rgba, size, size, uri, mtime, png, pngn, err);
	free(rgba);
	return r;
}
