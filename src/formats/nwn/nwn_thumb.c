/**
 * @file nwn_thumb.c
 * The thumbnail scene of an NWN binary MDL: its drawable meshes (thumb_models.h has the rules).
 */
#include "render/thumb_models.h"

#include "nwn_mdl.h"
#include "nwn_obj.h"
#include "nwn_quat.h"
#include "nwn_views.h"
#include "common/mem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- NWN ----------------------------------------------------------------- */


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

/*
 * Largest key value of the alpha controllers that the animations give the
 * node named like @p nd (0 when none): a mesh transparent at rest that an
 * animation fades in (an effect's shield) is drawn as it is seen in play.
 */
static float nwn_anim_alpha(const nwn_model *m, const nwn_node *nd)
{
	float best = 0;
	for (uint32_t a = 0; a < m->n_anims; a++) {
		const nwn_geometry *ag = &m->anims[a].geom;
		for (uint32_t j = 0; j < ag->n_nodes; j++) {
			const nwn_node *an = &ag->nodes[j];
			if (strcasecmp(an->name, nd->name) != 0 || !an->ctrl_data)
				continue;
			for (uint32_t i = 0; i < an->n_ctrls; i++) {
				const nwn_controller *c = &an->ctrls[i];
				if (c->type != NWN_CTRL_ALPHA || c->ncols < 1)
					continue;
				for (uint32_t r = 0; r < c->rows; r++) {
					size_t at = (size_t)c->data_offset + (size_t)r * c->ncols;
					if (at >= an->n_ctrl_data)
						break;
					float v = an->ctrl_data[at];
					if (isfinite(v) && v > best)
						best = v;
				}
			}
		}
	}
	return best > 1 ? 1 : best;
}

lfs_err nwn_thumb_scene(const uint8_t *data, size_t n, const lfs_view_opts *o, lfs_thumb_scene *s,
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
	lfs_thumb_texcache tc = { 0 };
	if (!t || !q || !sc) {
		r = lfs_nomem(err, "thumbnail");
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
			alpha = nwn_anim_alpha(m, nd);
		if (!(alpha > 0.01f))
			continue;
		uint32_t mat = lfs_thumb_material(s, &tc, o, me->textures[0], me->diffuse, true);
		uint32_t p0 = (uint32_t)s->n_pos, t0 = (uint32_t)s->n_uv;
		const double *qi = q + 4 * (size_t)i;
		for (uint32_t v = 0; v < me->n_verts; v++) {
			double p[3] = { me->verts[3 * v], me->verts[3 * v + 1], me->verts[3 * v + 2] }, w[3];
			nwn_quat_rotate(qi, p, w);
			/* NWN model space is the scene frame (Z up, +Y front) */
			float fp[3] = { (float)(t[3 * i] + sc[i] * w[0]), (float)(t[3 * i + 1] + sc[i] * w[1]),
					(float)(t[3 * i + 2] + sc[i] * w[2]) };
			float fn[3] = { 0, 0, 0 };
			if (me->normals) {
				double nv[3] = { me->normals[3 * v], me->normals[3 * v + 1],
						 me->normals[3 * v + 2] }, nw[3];
				nwn_quat_rotate(qi, nv, nw);
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
	r = s->failed ? lfs_nomem(err, "thumbnail") : LFS_OK;
out:
	lfs_thumb_texcache_free(&tc);
	free(t);
	free(q);
	free(sc);
	nwn_model_free(m);
	return r;
}
