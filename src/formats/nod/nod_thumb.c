/**
 * @file nod_thumb.c
 * The thumbnail scene of a NOD model: every mesh group in the rest pose (thumb_models.h).
 */
#include "render/thumb_models.h"

#include "nod.h"
#include "nod_views.h"
#include "common/mem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- NOD ----------------------------------------------------------------- */

lfs_err nod_thumb_scene(const uint8_t *data, size_t n, const lfs_view_opts *o, lfs_thumb_scene *s,
			     lfs_error *err)
{
	nod_model *m = NULL;
	lfs_err r = nod_decode(data, n, &m, err);
	if (r)
		return r;
	lfs_thumb_texcache tc = { 0 };
	/* material per NOD material index, +1 slot for "untextured" (-1 / out of range) */
	uint32_t *mats = malloc(((size_t)m->n_materials + 1) * sizeof(uint32_t));
	if (!mats) {
		nod_model_free(m);
		return lfs_nomem(err, "thumbnail");
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
				lfs_thumb_resref_of((const char *)m->materials[slot].raw, NOD_NAME_SIZE, rr, sizeof(rr));
			mats[slot] = lfs_thumb_material(s, &tc, o, slot < m->n_materials ? rr : NULL, NULL, true);
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
	r = s->failed ? lfs_nomem(err, "thumbnail") : LFS_OK;
	free(mats);
	lfs_thumb_texcache_free(&tc);
	nod_model_free(m);
	return r;
}
