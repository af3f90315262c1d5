/**
 * @file nil_thumb.c
 * The thumbnail scene of a NIL level: the sector strips of model.obj (thumb_models.h).
 */
#include "render/thumb_models.h"

#include "nil.h"
#include "nil_views.h"
#include "common/mem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- NIL ----------------------------------------------------------------- */

lfs_err nil_thumb_scene(const uint8_t *data, size_t n, const lfs_view_opts *o, lfs_thumb_scene *s,
			     lfs_error *err)
{
	nil_model *m = NULL;
	lfs_err r = nil_decode(data, n, &m, err);
	if (r)
		return r;
	lfs_thumb_texcache tc = { 0 };
	uint32_t *mats = malloc(((size_t)m->n_materials + 1) * sizeof(uint32_t));
	if (!mats) {
		nil_model_free(m);
		return lfs_nomem(err, "thumbnail");
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
					lfs_thumb_resref_of((const char *)m->materials[slot], NIL_NAME_SIZE, rr, sizeof(rr));
				mats[slot] = lfs_thumb_material(s, &tc, o, slot < m->n_materials ? rr : NULL, NULL, true);
			}
			lfs_thumb_tri tr = { .mat = mats[slot] };
			for (int j = 0; j < 3; j++) {
				tr.v[j] = p0 + w[wi[j]].vertex;
				tr.t[j] = t0 + (uint32_t)wi[j];
			}
			lfs_thumb_add_tri(s, &tr);
		}
	}
	r = s->failed ? lfs_nomem(err, "thumbnail") : LFS_OK;
	free(mats);
	lfs_thumb_texcache_free(&tc);
	nil_model_free(m);
	return r;
}
