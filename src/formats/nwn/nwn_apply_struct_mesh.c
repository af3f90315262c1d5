/**
 * @file nwn_apply_struct_mesh.c
 * Structural edits of meshes: face checks, kept face planes, the compiled
 * vertex split re-ordered to the old binary's vertex order, mesh merge, and
 * skin weights/bone tables fixed after a geometry change.
 */
#include "nwn_apply_struct_priv.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/mem.h"
#include "nwn_fields.h"
#include "nwn_ascii.h"

/* Mesh data lists of the model geometry: any change re-derives the mesh. */
static const char *const GEOM_KWS[] = {
	"verts", "tverts", "tverts1", "tverts2", "tverts3", "normals", "colors", "faces",
	"weights", "constraints", "texindices1", "texindices2", "texindices3", "mirrorlist",
	"animverts", "animtverts", "qbone_ref_inv", "tbone_ref_inv",
};
/* Animmesh data of an animation node. */
/* ---- mesh ----------------------------------------------------------------------- */

/* Faces of an edited mesh must index existing vertices and tverts (the
 * compiler silently drops every face of the node otherwise). */
lfs_err sa_check_faces(rb *r, const mdl_node *en)
{
	const mdl_stmt *f = sa_find_kw(en->stmts, en->n_stmts, "faces");
	const mdl_stmt *v = sa_find_kw(en->stmts, en->n_stmts, "verts");
	const mdl_stmt *t = sa_find_kw(en->stmts, en->n_stmts, "tverts");
	if (!f || f->kind != MDL_ST_LIST)
		return LFS_OK;
	uint32_t nv = v ? v->n_rows : 0, nt = t ? t->n_rows : 0;
	for (uint32_t i = 0; i < f->n_rows; i++) {
		const mdl_row *row = &f->rows[i];
		for (uint32_t k = 0; k < 7 && k < row->ntok; k++) {
			if (k == 3)
				continue;
			int64_t x;
			if (!mdl_tok_int(row->tok[k].s, &x))
				return lfs_fail_at(r->err, r->file, row->line, row->tok[k].col,
						   "'%.40s' is not an integer", row->tok[k].s);
			uint32_t lim = k < 3 ? nv : nt;
			if (k >= 4 && nt == 0 && x == 0)
				continue; /* no tverts: the writer's "0 0 0" */
			if (x < 0 || x >= (int64_t)lim)
				return lfs_fail_at(r->err, r->file, row->line, row->tok[k].col,
						   "%s index %lld out of range (the node has %u %s)",
						   k < 3 ? "vertex" : "tvert", (long long)x, lim,
						   k < 3 ? "verts" : "tverts");
		}
	}
	return LFS_OK;
}

/* Faces of the new mesh whose three corner positions are those of an old
 * face (same order) keep that face's stored plane (the compiler computed it
 * from the same positions; the stored bits may come from unsplit vertices). */
static void keep_planes(nwn_mesh *x, const nwn_mesh *p)
{
	if (!x->faces || !p->faces || !x->verts || !p->verts || !p->n_faces)
		return;
	uint32_t hs = 1;
	while (hs < p->n_faces * 2u && hs < (1u << 24))
		hs <<= 1;
	int32_t *h = malloc((size_t)hs * sizeof(int32_t));
	if (!h)
		return;
	memset(h, 0xFF, (size_t)hs * sizeof(int32_t));
#define FKEY(m, f, out)                                                                   \
	do {                                                                               \
		for (int k_ = 0; k_ < 3; k_++)                                              \
			memcpy((out) + 3 * k_, (m)->verts + 3 * (size_t)(m)->faces[f].v[k_], 12); \
	} while (0)
	uint32_t nfo = p->n_faces;
	for (uint32_t f = 0; f < nfo; f++) {
		bool ok = true;
		for (int k = 0; k < 3; k++)
			ok &= p->faces[f].v[k] < p->n_verts;
		if (!ok)
			continue;
		float key[9];
		FKEY(p, f, key);
		uint32_t hv = 2166136261u;
		for (size_t b = 0; b < sizeof(key); b++)
			hv = (hv ^ ((const uint8_t *)key)[b]) * 16777619u;
		uint32_t s = hv & (hs - 1), probes = 0;
		while (h[s] >= 0 && probes++ < hs)
			s = (s + 1) & (hs - 1);
		if (h[s] < 0)
			h[s] = (int32_t)f;
	}
	for (uint32_t f = 0; f < x->n_faces; f++) {
		bool ok = true;
		for (int k = 0; k < 3; k++)
			ok &= x->faces[f].v[k] < x->n_verts;
		if (!ok)
			continue;
		float key[9], ok2[9];
		FKEY(x, f, key);
		uint32_t hv = 2166136261u;
		for (size_t b = 0; b < sizeof(key); b++)
			hv = (hv ^ ((const uint8_t *)key)[b]) * 16777619u;
		uint32_t s = hv & (hs - 1), probes = 0;
		while (h[s] >= 0 && probes++ < hs) {
			FKEY(p, (uint32_t)h[s], ok2);
			if (!memcmp(key, ok2, sizeof(key))) {
				memcpy(x->faces[f].plane_normal, p->faces[h[s]].plane_normal, 12);
				x->faces[f].plane_distance = p->faces[h[s]].plane_distance;
				break;
			}
			s = (s + 1) & (hs - 1);
		}
	}
#undef FKEY
	free(h);
}

static int u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

#define PERMUTE(arr, type, per)                                                             \
	do {                                                                                \
		if (arr) {                                                                  \
			type *n_ = sa_rz(r, (size_t)nv * (per) * sizeof(type));                \
			if (!n_)                                                            \
				goto nomem;                                                 \
			for (uint32_t i_ = 0; i_ < nv; i_++)                                \
				memcpy(n_ + (size_t)ni[i_] * (per), (arr) + (size_t)i_ * (per), \
				       (per) * sizeof(type));                               \
			(arr) = n_;                                                         \
		}                                                                           \
	} while (0)

/* Order the compiled (split) vertices by the text vertex they come from
 * (stable): a text that is already split — every model.mdl this program
 * writes — keeps its vertex order. */
lfs_err sa_reorder_split(rb *r, nwn_mesh *m, const uint32_t *split)
{
	uint32_t nv = m->n_verts;
	if (!split || nv < 2 || !m->verts)
		return LFS_OK;
	uint64_t *k = malloc((size_t)nv * sizeof(uint64_t));
	uint32_t *ni = malloc((size_t)nv * sizeof(uint32_t));
	if (!k || !ni)
		goto nomem;
	for (uint32_t i = 0; i < nv; i++)
		k[i] = (uint64_t)split[i] << 32 | i;
	qsort(k, nv, sizeof(uint64_t), u64_cmp);
	bool ident = true;
	for (uint32_t i = 0; i < nv; i++) {
		ni[(uint32_t)k[i]] = i;
		ident &= (uint32_t)k[i] == i;
	}
	if (!ident) {
		PERMUTE(m->verts, float, 3);
		for (int t = 0; t < 4; t++)
			PERMUTE(m->tverts[t], float, 2);
		PERMUTE(m->normals, float, 3);
		PERMUTE(m->colors, uint32_t, 1);
		if (m->skin) {
			PERMUTE(m->skin->weights, float, 4);
			PERMUTE(m->skin->bonerefs, int16_t, 4);
		}
		if (m->dangly && m->dangly->constraints && m->dangly->constraints_arr.count == nv)
			PERMUTE(m->dangly->constraints, float, 1);
		if (m->anim) {
			uint32_t ns = m->anim->n_vert_sets, nt = m->anim->n_tvert_sets;
			if (ns)
				PERMUTE(m->anim->anim_verts, float, 3 * ns);
			if (nt)
				PERMUTE(m->anim->anim_tverts, float, 2 * nt);
		}
		uint16_t *vi = m->vindices ? sa_rz(r, (size_t)m->n_vindices * sizeof(uint16_t)) : NULL;
		nwn_face *f = m->faces ? sa_rz(r, (size_t)m->n_faces * sizeof(nwn_face)) : NULL;
		if ((m->vindices && !vi) || (m->faces && !f))
			goto nomem;
		for (uint32_t i = 0; vi && i < m->n_vindices; i++)
			vi[i] = m->vindices[i] < nv ? (uint16_t)ni[m->vindices[i]] : m->vindices[i];
		for (uint32_t i = 0; f && i < m->n_faces; i++) {
			f[i] = m->faces[i];
			for (int c = 0; c < 3; c++)
				if (f[i].v[c] < nv)
					f[i].v[c] = (uint16_t)ni[f[i].v[c]];
		}
		if (vi)
			m->vindices = vi;
		if (f)
			m->faces = f;
	}
	free(k);
	free(ni);
	return LFS_OK;
nomem:
	free(k);
	free(ni);
	return lfs_nomem(r->err, "structural edit");
}
#undef PERMUTE

/* Mesh of matched model node @p x (old @p p, compiled @p nn). */
lfs_err sa_merge_mesh(rb *r, nwn_node *x, const nwn_node *p, const nwn_node *nn, const mdl_node *gn,
			  const mdl_node *en, const uint32_t *split, bool *geom_changed)
{
	const nwn_mesh *pm = p->mesh, *nm = nn->mesh;
	nwn_mesh *m = sa_rdup(r, pm, sizeof(*m));
	if (!m)
		return lfs_nomem(r->err, "structural edit");
	x->mesh = m;
	if (pm->skin && !(m->skin = sa_rdup(r, pm->skin, sizeof(nwn_skin))))
		return lfs_nomem(r->err, "structural edit");
	if (pm->dangly && !(m->dangly = sa_rdup(r, pm->dangly, sizeof(nwn_dangly))))
		return lfs_nomem(r->err, "structural edit");
	if (pm->aabb && !(m->aabb = sa_rdup(r, pm->aabb, sizeof(nwn_aabb))))
		return lfs_nomem(r->err, "structural edit");
	if (pm->anim && !(m->anim = sa_rdup(r, pm->anim, sizeof(nwn_animmesh))))
		return lfs_nomem(r->err, "structural edit");
	/* attributes: the text shows them exactly; compiled = old when unedited */
	nwn_fields_copy(NWN_FK_MESH, m, nm);
	if (m->dangly && nm->dangly)
		nwn_fields_copy(NWN_FK_DANGLY, m->dangly, nm->dangly);
	if (m->anim && nm->anim)
		nwn_fields_copy(NWN_FK_ANIMMESH, m->anim, nm->anim);
	*geom_changed = !sa_node_kws_same(gn, en, GEOM_KWS, sizeof(GEOM_KWS) / sizeof(GEOM_KWS[0]));
	bool aabb_changed = !sa_node_kw_same(gn, en, "aabb");
	if (!*geom_changed) {
		if (aabb_changed && m->aabb && nm->aabb) {
			m->aabb->entries = nm->aabb->entries;
			m->aabb->n_entries = nm->aabb->n_entries;
			m->aabb->root_ptr = nm->aabb->n_entries ? 1 : 0;
		}
		return LFS_OK;
	}
	lfs_err e = sa_check_faces(r, en);
	if (e)
		return e;
	/* the compiled geometry */
	m->faces = nm->faces;
	m->n_faces = nm->n_faces;
	sa_arr_set(&m->faces_arr, nm->faces ? nm->n_faces : 0);
	memcpy(m->bmin, nm->bmin, 12);
	memcpy(m->bmax, nm->bmax, 12);
	m->radius = nm->radius;
	memcpy(m->average, nm->average, 12);
	m->verts = nm->verts;
	m->n_verts = nm->n_verts;
	m->n_textures = nm->n_textures;
	memcpy(m->tverts, nm->tverts, sizeof(m->tverts));
	m->normals = nm->normals;
	m->colors = nm->colors;
	m->vindices = nm->vindices;
	m->n_vindices = nm->n_vindices;
	m->vindex_counts = nm->vindex_counts;
	m->vindex_offsets = nm->vindex_offsets;
	sa_arr_set(&m->vindex_count_arr, nm->vindex_counts ? nm->vindex_count_arr.count : 0);
	sa_arr_set(&m->vindex_offset_arr, nm->vindex_offsets ? nm->vindex_offset_arr.count : 0);
	if (nm->faces && nm->n_faces)
		m->triangle_mode = nm->triangle_mode;
	m->area = nm->area;
	if (m->skin && nm->skin) {
		nwn_skin *s = m->skin;
		const nwn_skin *t = nm->skin;
		s->weights = t->weights;
		s->bonerefs = t->bonerefs;
		memcpy(s->bone_node_numbers, t->bone_node_numbers, sizeof(s->bone_node_numbers));
		s->node_to_bone = t->node_to_bone;
		s->node_to_bone_count = t->node_to_bone_count;
	}
	if (m->dangly && nm->dangly) {
		m->dangly->constraints = nm->dangly->constraints;
		sa_arr_set(&m->dangly->constraints_arr, nm->dangly->constraints ? nm->dangly->constraints_arr.count : 0);
	}
	if (m->anim && nm->anim) {
		m->anim->n_vert_sets = nm->anim->n_vert_sets;
		m->anim->anim_verts = nm->anim->anim_verts;
		m->anim->n_tvert_sets = nm->anim->n_tvert_sets;
		m->anim->anim_tverts = nm->anim->anim_tverts;
	}
	if ((e = sa_reorder_split(r, m, split)))
		return e;
	keep_planes(m, pm);
	if (m->aabb) {
		if (aabb_changed && nm->aabb) {
			m->aabb->entries = nm->aabb->entries;
			m->aabb->n_entries = nm->aabb->n_entries;
			m->aabb->root_ptr = nm->aabb->n_entries ? 1 : 0;
		} else {
			/* the faces changed under an unchanged tree: build one */
			m->aabb->entries = NULL;
			m->aabb->n_entries = 0;
			m->aabb->root_ptr = 0;
			if (m->faces && m->n_faces && (e = nwn_derive_aabb(m, &r->alloc, r->err)))
				return e;
		}
	}
	return LFS_OK;
}

/* Skin of model node @p j after every node is in place: bone maps and bind
 * transforms re-indexed for the new node list. */
lfs_err sa_fix_skin(rb *r, uint32_t j, bool geom_changed, const mdl_node *en)
{
	nwn_geometry *xg = &r->X.geom;
	nwn_node *x = &xg->nodes[j];
	nwn_skin *s = x->mesh->skin;
	const nwn_skin *t = r->N->geom.nodes[j].mesh ? r->N->geom.nodes[j].mesh->skin : NULL;
	uint32_t oi = r->mn2o[j];
	const nwn_node *p = oi != NONE ? &r->O->geom.nodes[oi] : NULL;
	const nwn_skin *ps = (p && p->flags == x->flags && p->mesh) ? p->mesh->skin : NULL;
	uint32_t nx = xg->n_nodes, no = r->O->geom.n_nodes;
	if (!ps || !t)
		return LFS_OK; /* new skin: the compiled one */
	if (!geom_changed) {
		for (int b = 0; b < NWN_SKIN_BONES; b++) {
			int16_t v = ps->bone_node_numbers[b];
			if (v >= 0 && (uint32_t)v < no)
				s->bone_node_numbers[b] = r->mo2n[v] == NONE ? -1 : (int16_t)r->mo2n[v];
		}
		int16_t *ntb = sa_rz(r, (size_t)nx * sizeof(int16_t));
		if (!ntb)
			return lfs_nomem(r->err, "structural edit");
		for (uint32_t i = 0; i < nx; i++) {
			uint32_t o = r->mn2o[i];
			ntb[i] = (o != NONE && ps->node_to_bone && o < ps->node_to_bone_count) ? ps->node_to_bone[o]
											      : -1;
		}
		s->node_to_bone = ntb;
		s->node_to_bone_count = nx;
	}
	bool explicit_q = sa_find_kw(en->stmts, en->n_stmts, "qbone_ref_inv") != NULL;
	bool explicit_t = sa_find_kw(en->stmts, en->n_stmts, "tbone_ref_inv") != NULL;
	float *q = sa_rz(r, (size_t)nx * 4 * sizeof(float)), *tb = sa_rz(r, (size_t)nx * 3 * sizeof(float));
	uint32_t *ci = sa_rz(r, (size_t)nx * sizeof(uint32_t));
	if (!q || !tb || !ci)
		return lfs_nomem(r->err, "structural edit");
	for (uint32_t i = 0; i < nx; i++) {
		uint32_t o = r->mn2o[i];
		/* the old bind transform holds while the bind pose of the node and
		 * of the skin is unchanged */
		bool pose = r->chain[i] && r->chain[j];
		bool oq = pose && !explicit_q && o != NONE && ps->qbone_ref_inv && o < ps->qbone_arr.count;
		bool ot = pose && !explicit_t && o != NONE && ps->tbone_ref_inv && o < ps->tbone_arr.count;
		if (oq)
			memcpy(q + 4 * (size_t)i, ps->qbone_ref_inv + 4 * (size_t)o, 16);
		else if (t->qbone_ref_inv && i < t->qbone_arr.count)
			memcpy(q + 4 * (size_t)i, t->qbone_ref_inv + 4 * (size_t)i, 16);
		if (ot)
			memcpy(tb + 3 * (size_t)i, ps->tbone_ref_inv + 3 * (size_t)o, 12);
		else if (t->tbone_ref_inv && i < t->tbone_arr.count)
			memcpy(tb + 3 * (size_t)i, t->tbone_ref_inv + 3 * (size_t)i, 12);
		if (o != NONE && ps->const_indices && o < ps->const_idx_arr.count)
			ci[i] = ps->const_indices[o];
	}
	s->qbone_ref_inv = q;
	s->tbone_ref_inv = tb;
	s->const_indices = ci;
	sa_arr_set(&s->qbone_arr, nx);
	sa_arr_set(&s->tbone_arr, nx);
	sa_arr_set(&s->const_idx_arr, nx);
	return LFS_OK;
}

