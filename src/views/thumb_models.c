/**
 * @file thumb_models.c
 * Triangle extraction per format for thumbnails (see thumb_models.h).
 */
#include "thumb_models.h"

#include "../formats/nil.h"
#include "../formats/nod.h"
#include "../formats/nwn/nwn_mdl.h"
#include "../formats/sod.h"
#include "nwn_obj.h"
#include "sod_views.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static lfs_err nomem(lfs_error *err)
{
	return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "thumbnail", "out of memory");
}

/* ---- textures ------------------------------------------------------------ */

/* resref -> scene texture index (LFS_THUMB_NONE = not found / not TGA),
 * so each texture file is read and decoded once per model. */
typedef struct texcache {
	char **names;
	uint32_t *idx;
	size_t n, cap;
} texcache;

static void texcache_free(texcache *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->names[i]);
	free(c->names);
	free(c->idx);
	memset(c, 0, sizeof(*c));
}

/* The resref part of a texture or material name: after the last '/' or
 * '\\', without an extension of up to 3 characters after the last '.'. */
static void resref_of(const char *name, size_t len, char *out, size_t outsz)
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

static uint32_t tex_get(lfs_thumb_scene *s, texcache *c, const lfs_view_opts *o, const char *resref)
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
		if (lfs_thumb_decode_tga(data, n, &rgba, &w, &h))
			idx = lfs_thumb_add_tex(s, rgba, w, h);
	}
	free(data);
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 8;
		char **nn = realloc(c->names, nc * sizeof(*nn));
		if (!nn)
			return idx;
		c->names = nn;
		uint32_t *ni = realloc(c->idx, nc * sizeof(*ni));
		if (!ni)
			return idx;
		c->idx = ni;
		c->cap = nc;
	}
	char *dup = strdup(resref);
	if (!dup)
		return idx;
	c->names[c->n] = dup;
	c->idx[c->n++] = idx;
	return idx;
}

/* A material: texture when found, else the colour (grey when black/absent). */
static uint32_t material(lfs_thumb_scene *s, texcache *c, const lfs_view_opts *o,
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

/* ---- NWN ----------------------------------------------------------------- */

/* Quaternion (x y z w) rotation of v. */
static void qrot(const double *q, const double *v, double *o)
{
	double tx = 2 * (q[1] * v[2] - q[2] * v[1]);
	double ty = 2 * (q[2] * v[0] - q[0] * v[2]);
	double tz = 2 * (q[0] * v[1] - q[1] * v[0]);
	o[0] = v[0] + q[3] * tx + (q[1] * tz - q[2] * ty);
	o[1] = v[1] + q[3] * ty + (q[2] * tx - q[0] * tz);
	o[2] = v[2] + q[3] * tz + (q[0] * ty - q[1] * tx);
}

/* First key of the alpha controller of a mesh node, 1 when none. */
static float nwn_alpha(const nwn_node *n)
{
	for (uint32_t i = 0; i < n->n_ctrls; i++) {
		const nwn_controller *c = &n->ctrls[i];
		if (c->type == NWN_CTRL_ALPHA && c->ncols >= 1 && c->rows && n->ctrl_data &&
		    (size_t)c->data_offset < n->n_ctrl_data)
			return n->ctrl_data[c->data_offset];
	}
	return 1.0f;
}

static lfs_err nwn_scene(const uint8_t *data, size_t n, const lfs_view_opts *o, lfs_thumb_scene *s,
			 lfs_error *err)
{
	nwn_model *m = NULL;
	lfs_err r = nwn_mdl_decode(data, n, &m, err);
	if (r)
		return r;
	const nwn_geometry *g = &m->geom;
	size_t nn = g->n_nodes ? g->n_nodes : 1;
	double *t = malloc(nn * 3 * sizeof(double)), *q = malloc(nn * 4 * sizeof(double)),
	       *sc = malloc(nn * sizeof(double));
	texcache tc = { 0 };
	if (!t || !q || !sc) {
		r = nomem(err);
		goto out;
	}
	nwn_obj_transforms(g, t, q, sc);
	for (uint32_t i = 0; i < g->n_nodes && !s->failed; i++) {
		const nwn_node *nd = &g->nodes[i];
		const nwn_mesh *me = nd->mesh;
		if (!me || me->render == 0 || me->aabb || (nd->flags & NWN_HAS_AABB) ||
		    (nd->flags & (NWN_HAS_EMITTER | NWN_HAS_LIGHT)) || !me->verts || !me->faces ||
		    !me->n_faces || !me->n_verts)
			continue;
		float alpha = nwn_alpha(nd);
		if (!(alpha > 0.01f))
			continue;
		uint32_t mat = material(s, &tc, o, me->textures[0], me->diffuse, true);
		uint32_t p0 = (uint32_t)s->n_pos, t0 = (uint32_t)s->n_uv;
		const double *qi = q + 4 * (size_t)i;
		for (uint32_t v = 0; v < me->n_verts; v++) {
			double p[3] = { me->verts[3 * v], me->verts[3 * v + 1], me->verts[3 * v + 2] }, w[3];
			qrot(qi, p, w);
			/* NWN model space is the scene frame (Z up, +Y front) */
			float fp[3] = { (float)(t[3 * i] + sc[i] * w[0]), (float)(t[3 * i + 1] + sc[i] * w[1]),
					(float)(t[3 * i + 2] + sc[i] * w[2]) };
			float fn[3] = { 0, 0, 0 };
			if (me->normals) {
				double nv[3] = { me->normals[3 * v], me->normals[3 * v + 1],
						 me->normals[3 * v + 2] }, nw[3];
				qrot(qi, nv, nw);
				double k = sc[i] < 0 ? -1 : 1;
				fn[0] = (float)(nw[0] * k);
				fn[1] = (float)(nw[1] * k);
				fn[2] = (float)(nw[2] * k);
			}
			lfs_thumb_add_pos(s, fp, fn);
			if (me->tverts[0])
				lfs_thumb_add_uv(s, me->tverts[0][2 * v], me->tverts[0][2 * v + 1]);
		}
		for (uint32_t f = 0; f < me->n_faces; f++) {
			const nwn_face *fc = &me->faces[f];
			lfs_thumb_tri tr = { .mat = mat };
			bool ok = true;
			for (int k = 0; k < 3; k++) {
				ok &= fc->v[k] < me->n_verts;
				tr.v[k] = p0 + fc->v[k];
				tr.t[k] = me->tverts[0] ? t0 + fc->v[k] : LFS_THUMB_NONE;
			}
			if (ok)
				lfs_thumb_add_tri(s, &tr);
		}
	}
	r = s->failed ? nomem(err) : LFS_OK;
out:
	texcache_free(&tc);
	free(t);
	free(q);
	free(sc);
	nwn_model_free(m);
	return r;
}

/* ---- NOD ----------------------------------------------------------------- */

static lfs_err nod_scene(const uint8_t *data, size_t n, const lfs_view_opts *o, lfs_thumb_scene *s,
			 lfs_error *err)
{
	nod_model *m = NULL;
	lfs_err r = nod_decode(data, n, &m, err);
	if (r)
		return r;
	texcache tc = { 0 };
	/* material per NOD material index, +1 slot for "untextured" (-1 / out of range) */
	uint32_t *mats = malloc(((size_t)m->n_materials + 1) * sizeof(uint32_t));
	if (!mats) {
		nod_model_free(m);
		return nomem(err);
	}
	for (size_t i = 0; i <= m->n_materials; i++)
		mats[i] = LFS_THUMB_NONE;
	uint32_t p0 = (uint32_t)s->n_pos, t0 = (uint32_t)s->n_uv;
	for (uint32_t v = 0; v < m->n_verts; v++) {
		const nod_vertex *vx = &m->verts[v];
		lfs_thumb_add_pos(s, vx->pos, vx->normal);
		lfs_thumb_add_uv(s, vx->uv[0], 1.0f - vx->uv[1]);
	}
	for (uint16_t gi = 0; gi < m->n_groups && !s->failed; gi++) {
		const nod_group *g = &m->groups[gi];
		size_t slot = (g->material >= 0 && (uint32_t)g->material < m->n_materials)
				      ? (size_t)g->material : m->n_materials;
		if (mats[slot] == LFS_THUMB_NONE) {
			char rr[NOD_NAME_SIZE + 1];
			if (slot < m->n_materials)
				resref_of((const char *)m->materials[slot].raw, NOD_NAME_SIZE, rr, sizeof(rr));
			mats[slot] = material(s, &tc, o, slot < m->n_materials ? rr : NULL, NULL, true);
		}
		for (uint32_t f = 0; f < g->n_faces; f++) {
			size_t fi = (size_t)g->first_face + f;
			if (fi >= m->n_faces)
				break;
			const nod_face *fc = &m->faces[fi];
			lfs_thumb_tri tr = { .mat = mats[slot] };
			bool ok = true;
			for (int k = 0; k < 3; k++) {
				size_t vi = (size_t)g->first_vert + fc->v[k];
				ok &= fc->v[k] < g->n_verts && vi < m->n_verts;
				tr.v[k] = p0 + (uint32_t)vi;
				tr.t[k] = t0 + (uint32_t)vi;
			}
			if (ok)
				lfs_thumb_add_tri(s, &tr);
		}
	}
	r = s->failed ? nomem(err) : LFS_OK;
	free(mats);
	texcache_free(&tc);
	nod_model_free(m);
	return r;
}

/* ---- SOD ----------------------------------------------------------------- */

static const sod_material *sod_find_mat(const sod_model *m, const sod_str *name)
{
	for (uint16_t i = 0; i < m->n_materials; i++)
		if (m->materials[i].name.len == name->len &&
		    (!name->len || !memcmp(m->materials[i].name.s, name->s, name->len)))
			return &m->materials[i];
	return NULL;
}

static lfs_err sod_scene(const uint8_t *data, size_t n, const lfs_view_opts *o, lfs_thumb_scene *s,
			 lfs_error *err)
{
	sod_model *m = NULL;
	lfs_err r = sod_decode(data, n, &m, err);
	if (r)
		return r;
	size_t nn = m->n_nodes ? m->n_nodes : 1;
	double *world = malloc(nn * 12 * sizeof(double));
	bool *shown = malloc(nn * sizeof(bool));
	texcache tc = { 0 };
	if (!world || !shown || !sod_model_space(m, world, shown)) {
		r = nomem(err);
		goto out;
	}
	for (uint16_t i = 0; i < m->n_nodes && !s->failed; i++) {
		const sod_node *nd = &m->nodes[i];
		const sod_mesh *me = nd->mesh;
		if (nd->type != SOD_MESH || !me || !shown[i] || !me->n_verts)
			continue;
		const double *x = world + 12 * (size_t)i;
		uint32_t p0 = (uint32_t)s->n_pos, t0 = (uint32_t)s->n_uv;
		for (uint16_t v = 0; v < me->n_verts; v++) {
			const float *p = me->verts + 3 * v;
			double w[3];
			for (int j = 0; j < 3; j++)
				w[j] = p[0] * x[j] + p[1] * x[3 + j] + p[2] * x[6 + j] + x[9 + j];
			/* SOD (x right, y up, z front, left-handed) -> (x, z, y) */
			float fp[3] = { (float)w[0], (float)w[2], (float)w[1] };
			lfs_thumb_add_pos(s, fp, NULL);
		}
		for (uint16_t v = 0; v < me->n_tverts; v++)
			lfs_thumb_add_uv(s, me->tverts[2 * v], 1.0f - me->tverts[2 * v + 1]);
		char rr[256];
		resref_of(me->texture.s ? me->texture.s : "", me->texture.len, rr, sizeof(rr));
		bool cutout = me->texture_material.s && me->texture_material.len >= 5 &&
			      !strncasecmp(me->texture_material.s, "alpha", 5);
		for (uint16_t gi = 0; gi < me->n_groups; gi++) {
			const sod_group *gr = &me->groups[gi];
			const sod_material *sm = sod_find_mat(m, &gr->material);
			uint32_t mat = material(s, &tc, o, rr, sm ? sm->diffuse : NULL, cutout);
			for (uint16_t f = 0; f < gr->n_faces; f++) {
				const sod_face *fc = &gr->faces[f];
				lfs_thumb_tri tr = { .mat = mat };
				bool ok = true;
				for (int k = 0; k < 3; k++) {
					ok &= fc->v[k] < me->n_verts;
					tr.v[k] = p0 + fc->v[k];
					tr.t[k] = fc->t[k] < me->n_tverts ? t0 + fc->t[k] : LFS_THUMB_NONE;
				}
				if (ok)
					lfs_thumb_add_tri(s, &tr);
			}
		}
	}
	r = s->failed ? nomem(err) : LFS_OK;
out:
	texcache_free(&tc);
	free(world);
	free(shown);
	sod_model_free(m);
	return r;
}

/* ---- NIL ----------------------------------------------------------------- */

static lfs_err nil_scene(const uint8_t *data, size_t n, const lfs_view_opts *o, lfs_thumb_scene *s,
			 lfs_error *err)
{
	nil_model *m = NULL;
	lfs_err r = nil_decode(data, n, &m, err);
	if (r)
		return r;
	texcache tc = { 0 };
	uint32_t *mats = malloc(((size_t)m->n_materials + 1) * sizeof(uint32_t));
	if (!mats) {
		nil_model_free(m);
		return nomem(err);
	}
	for (size_t i = 0; i <= m->n_materials; i++)
		mats[i] = LFS_THUMB_NONE;
	for (uint32_t si = 0; si < m->n_decoded && !s->failed; si++) {
		const nil_sector *sec = &m->sectors[si];
		uint32_t p0 = (uint32_t)s->n_pos, t0 = (uint32_t)s->n_uv;
		for (uint16_t v = 0; v < sec->n_vertices; v++)
			lfs_thumb_add_pos(s, sec->vertices + 3 * v, NULL);
		for (uint16_t w = 0; w < sec->n_wedges; w++)
			lfs_thumb_add_uv(s, sec->wedges[w].uv[0], 1.0f - sec->wedges[w].uv[1]);
		/* the model.obj rule (nil_views.h): the wedges as one triangle
		 * strip, odd triangles reversed, repeats and out-of-range skipped */
		for (size_t k = 0; k + 2 < sec->n_wedges; k++) {
			const nil_wedge *w = sec->wedges;
			uint16_t a = w[k].vertex, b = w[k + 1].vertex, c = w[k + 2].vertex;
			if (a == b || b == c || a == c || a >= sec->n_vertices || b >= sec->n_vertices ||
			    c >= sec->n_vertices)
				continue;
			size_t wi[3] = { k, (k & 1) ? k + 2 : k + 1, (k & 1) ? k + 1 : k + 2 };
			uint16_t base = w[k].base;
			size_t slot = base < m->n_materials ? base : m->n_materials;
			if (mats[slot] == LFS_THUMB_NONE) {
				char rr[NIL_NAME_SIZE + 1];
				if (slot < m->n_materials)
					resref_of((const char *)m->materials[slot], NIL_NAME_SIZE, rr, sizeof(rr));
				mats[slot] = material(s, &tc, o, slot < m->n_materials ? rr : NULL, NULL, true);
			}
			lfs_thumb_tri tr = { .mat = mats[slot] };
			for (int j = 0; j < 3; j++) {
				tr.v[j] = p0 + w[wi[j]].vertex;
				tr.t[j] = t0 + (uint32_t)wi[j];
			}
			lfs_thumb_add_tri(s, &tr);
		}
	}
	r = s->failed ? nomem(err) : LFS_OK;
	free(mats);
	texcache_free(&tc);
	nil_model_free(m);
	return r;
}

/* ---- entry points -------------------------------------------------------- */

lfs_err lfs_thumb_scene_of(lfs_format f, const uint8_t *data, size_t n, const lfs_view_opts *opts,
			   lfs_thumb_scene *s, lfs_error *err)
{
	switch (f) {
	case LFS_FMT_NWN_MDL:
		return nwn_scene(data, n, opts, s, err);
	case LFS_FMT_NOD:
		return nod_scene(data, n, opts, s, err);
	case LFS_FMT_SOD:
		return sod_scene(data, n, opts, s, err);
	case LFS_FMT_NIL:
		return nil_scene(data, n, opts, s, err);
	case LFS_FMT_NAD:
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "thumbnail",
				"NAD animations have no geometry: no thumbnail");
	default:
		return lfs_fail(err, LFS_ERR_NOTFORMAT, SIZE_MAX, "thumbnail", "not a model");
	}
}

lfs_err lfs_thumb_model(lfs_format f, const uint8_t *data, size_t n, unsigned size,
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
