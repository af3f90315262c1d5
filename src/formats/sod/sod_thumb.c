/**
 * @file sod_thumb.c
 * The thumbnail scene of a SOD model: mesh nodes of the highest LOD (thumb_models.h).
 */
#include "render/thumb_models.h"

#include "sod.h"
#include "sod_views.h"
#include "common/mem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- SOD ----------------------------------------------------------------- */

static const sod_material *sod_find_mat(const sod_model *m, const sod_str *name)
{
	for (uint16_t i = 0; i < m->n_materials; i++)
		if (m->materials[i].name.len == name->len &&
		    (!name->len || !memcmp(m->materials[i].name.s, name->s, name->len)))
			return &m->materials[i];
	return NULL;
}

lfs_err sod_thumb_scene(const uint8_t *data, size_t n, const lfs_view_opts *o, lfs_thumb_scene *s,
			     lfs_error *err)
{
	sod_model *m = NULL;
	lfs_err r = sod_decode(data, n, &m, err);
	if (r)
		return r;
	size_t nn = m->n_nodes ? m->n_nodes : 1;
	double *world = malloc(nn * 12 * sizeof(double));
	bool *shown = malloc(nn * sizeof(bool));
	lfs_thumb_texcache tc = { 0 };
	if (!world || !shown || !sod_model_space(m, world, shown)) {
		r = lfs_nomem(err, "thumbnail");
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
		lfs_thumb_resref_of(me->texture.s ? me->texture.s : "", me->texture.len, rr, sizeof(rr));
		bool cutout = me->texture_material.s && me->texture_material.len >= 5 &&
			      !strncasecmp(me->texture_material.s, "alpha", 5);
		for (uint16_t gi = 0; gi < me->n_groups; gi++) {
			const sod_group *gr = &me->groups[gi];
			const sod_material *sm = sod_find_mat(m, &gr->material);
			uint32_t mat = lfs_thumb_material(s, &tc, o, rr, sm ? sm->diffuse : NULL, cutout);
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
	r = s->failed ? lfs_nomem(err, "thumbnail") : LFS_OK;
out:
	lfs_thumb_texcache_free(&tc);
	free(world);
	free(shown);
	sod_model_free(m);
	return r;
}
