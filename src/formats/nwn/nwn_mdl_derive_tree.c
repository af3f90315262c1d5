/**
 * @file nwn_mdl_derive_tree.c
 * Compiler computations on the node tree (see nwn_mdl_derive.h): skin bone
 * tables from the bind pose, and the AABB tree of a walkmesh with its split
 * planes.
 */
#include "nwn_mdl_derive_priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ skin */

/* Position (first key of the last position controller) and orientation of a
 * node, as the compiler reads them for the bind pose. */
static void node_pose(const nwn_node *n, v3 *pos, quat *q)
{
	*pos = (v3){ 0, 0, 0 };
	*q = (quat){ 0, 0, 0, 1 };
	for (uint32_t i = 0; i < n->n_ctrls; i++) {
		const nwn_controller *c = &n->ctrls[i];
		const float *d = n->ctrl_data ? n->ctrl_data + c->data_offset : NULL;
		if (!d)
			continue;
		if (c->type == NWN_CTRL_POSITION && (size_t)c->data_offset + 3 <= n->n_ctrl_data)
			*pos = (v3){ d[0], d[1], d[2] };
		else if (c->type == NWN_CTRL_ORIENTATION && (size_t)c->data_offset + 4 <= n->n_ctrl_data)
			*q = (quat){ d[0], d[1], d[2], d[3] };
	}
}

static void reversed_pose(const nwn_node *n, v3 *pos, quat *q)
{
	node_pose(n, pos, q);
	q->w = -q->w;
	*pos = q_rotate(*q, (v3){ -pos->x, -pos->y, -pos->z });
}

lfs_err nwn_derive_skin(const nwn_geometry *g, uint32_t si, const nwn_src_weight *weights, uint32_t n_weights,
			const uint32_t *split_src, const nwn_alloc *a, lfs_error *err)
{
	nwn_node *sn = &g->nodes[si];
	nwn_mesh *m = sn->mesh;
	nwn_skin *s = m->skin;
	uint32_t nn = g->n_nodes;
	if (!s->tbone_ref_inv || s->tbone_arr.count == 0) {
		v3 rp;
		quat rq;
		reversed_pose(sn, &rp, &rq);
		for (int32_t p = sn->parent; p >= 0; p = g->nodes[p].parent) {
			v3 pp;
			quat pq;
			reversed_pose(&g->nodes[p], &pp, &pq);
			rp.x += pp.x;
			rp.y += pp.y;
			rp.z += pp.z;
			rq = q_mul(rq, pq);
		}
		float *tb = zalloc(a, (size_t)nn * 3, sizeof(float));
		float *qb = zalloc(a, (size_t)nn * 4, sizeof(float));
		v3 *tpos = malloc((size_t)nn * sizeof(v3));
		quat *tq = malloc((size_t)nn * sizeof(quat));
		if (!tb || !qb || !tpos || !tq) {
			free(tpos);
			free(tq);
			return NOMEM(err);
		}
		/* depth-first: a node's accumulated pose from its parent's */
		for (uint32_t i = 0; i < nn; i++) {
			const nwn_node *n = &g->nodes[i];
			v3 bp = rp;
			quat bq = rq;
			if (n->parent >= 0) {
				bp = tpos[n->parent];
				bq = tq[n->parent];
			}
			v3 mp;
			quat mq;
			node_pose(n, &mp, &mq);
			v3 r = q_rotate(bq, mp);
			bp.x += r.x;
			bp.y += r.y;
			bp.z += r.z;
			bq = q_mul(bq, mq);
			tpos[i] = bp;
			tq[i] = bq;
		}
		for (uint32_t i = 0; i < nn; i++) {
			quat q = tq[i];
			q.w = -q.w;
			v3 t = q_rotate(q, (v3){ -tpos[i].x, -tpos[i].y, -tpos[i].z });
			tb[3 * i] = t.x;
			tb[3 * i + 1] = t.y;
			tb[3 * i + 2] = t.z;
			qb[4 * i] = q.w;
			qb[4 * i + 1] = q.x;
			qb[4 * i + 2] = q.y;
			qb[4 * i + 3] = q.z;
		}
		free(tpos);
		free(tq);
		s->tbone_ref_inv = tb;
		s->qbone_ref_inv = qb;
		s->tbone_arr.count = s->tbone_arr.alloc = nn;
		s->qbone_arr.count = s->qbone_arr.alloc = nn;
	}
	s->const_indices = zalloc(a, nn, sizeof(uint32_t));
	s->node_to_bone = zalloc(a, nn, sizeof(int16_t));
	size_t nv = m->n_verts;
	s->weights = zalloc(a, nv * 4, sizeof(float));
	s->bonerefs = zalloc(a, nv * 4, sizeof(int16_t));
	if (!s->const_indices || !s->node_to_bone || !s->weights || !s->bonerefs)
		return NOMEM(err);
	s->const_idx_arr.count = s->const_idx_arr.alloc = nn;
	s->node_to_bone_count = nn;
	for (uint32_t i = 0; i < nn; i++)
		s->node_to_bone[i] = -1;
	int32_t total = 0;
	for (size_t i = 0; i < nv; i++) {
		uint32_t src = split_src ? split_src[i] : UINT32_MAX;
		const nwn_src_weight *w = src < n_weights ? &weights[src] : NULL;
		for (int j = 0; j < 4; j++) {
			s->weights[i * 4 + j] = 0;
			s->bonerefs[i * 4 + j] = -1;
			if (!w || (uint32_t)j >= w->count || w->w[j] == 0 || w->node[j] < 0 ||
			    (uint32_t)w->node[j] >= nn)
				continue;
			int32_t node = w->node[j];
			if (s->node_to_bone[node] == -1) {
				if (total >= NWN_SKIN_BONES)
					return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "skin",
							"skin '%s' uses more than %d bones (the bone table holds 17, the word after it one more)",
							sn->name, NWN_SKIN_BONES);
				s->node_to_bone[node] = (int16_t)total;
				s->bone_node_numbers[total++] = (int16_t)node;
			}
			s->weights[i * 4 + j] = w->w[j];
			s->bonerefs[i * 4 + j] = s->node_to_bone[node];
		}
	}
	return LFS_OK;
}

/* ------------------------------------------------------------------ aabb */

uint32_t nwn_aabb_plane(const nwn_aabb_entry *l, const nwn_aabb_entry *r)
{
	v3 vl = { l->bmin[0] + l->bmax[0], l->bmin[1] + l->bmax[1], l->bmin[2] + l->bmax[2] };
	v3 vr = { r->bmin[0] + r->bmax[0], r->bmin[1] + r->bmax[1], r->bmin[2] + r->bmax[2] };
	v3 d = v3_sub(vr, vl);
	if (fabsf(d.x) > fabsf(d.y) && fabsf(d.x) > fabsf(d.z))
		return d.x > 0 ? 0x01 : 0x08;
	if (fabsf(d.y) > fabsf(d.z))
		return d.y > 0 ? 0x02 : 0x10;
	return d.z > 0 ? 0x04 : 0x20;
}

typedef struct aabb_build {
	const nwn_mesh *m;
	uint32_t *faces;
	float *centre;
	nwn_aabb_entry *out;
	uint32_t n;
	int axis;
} aabb_build;

static _Thread_local aabb_build *g_sort_ctx; /* qsort has no context argument in C11 */

static int cmp_centre(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	float ca = g_sort_ctx->centre[3 * a + g_sort_ctx->axis];
	float cb = g_sort_ctx->centre[3 * b + g_sort_ctx->axis];
	if (ca < cb)
		return -1;
	if (ca > cb)
		return 1;
	return a < b ? -1 : a > b;
}

static void aabb_box(const aabb_build *b, const uint32_t *f, uint32_t n, nwn_aabb_entry *e)
{
	for (int k = 0; k < 3; k++) {
		e->bmin[k] = INFINITY;
		e->bmax[k] = -INFINITY;
	}
	for (uint32_t i = 0; i < n; i++) {
		const nwn_face *fc = &b->m->faces[f[i]];
		for (int c = 0; c < 3; c++) {
			const float *p = b->m->verts + 3 * (size_t)fc->v[c];
			for (int k = 0; k < 3; k++) {
				if (p[k] < e->bmin[k])
					e->bmin[k] = p[k];
				if (p[k] > e->bmax[k])
					e->bmax[k] = p[k];
			}
		}
	}
}

static void aabb_rec(aabb_build *b, uint32_t *f, uint32_t n, uint16_t depth)
{
	nwn_aabb_entry *e = &b->out[b->n++];
	aabb_box(b, f, n, e);
	e->depth = depth;
	if (n == 1) {
		e->leaf_face = (int32_t)f[0];
		e->plane = 0;
		return;
	}
	e->leaf_face = -1;
	float ext[3] = { e->bmax[0] - e->bmin[0], e->bmax[1] - e->bmin[1], e->bmax[2] - e->bmin[2] };
	b->axis = ext[0] >= ext[1] && ext[0] >= ext[2] ? 0 : (ext[1] >= ext[2] ? 1 : 2);
	g_sort_ctx = b;
	qsort(f, n, sizeof(*f), cmp_centre);
	uint32_t half = n / 2;
	uint32_t li = b->n;
	aabb_rec(b, f, half, (uint16_t)(depth + 1));
	uint32_t ri = b->n;
	aabb_rec(b, f + half, n - half, (uint16_t)(depth + 1));
	e = &b->out[li - 1];
	e->plane = nwn_aabb_plane(&b->out[li], &b->out[ri]);
}

lfs_err nwn_derive_aabb(nwn_mesh *m, const nwn_alloc *a, lfs_error *err)
{
	if (!m->aabb)
		return LFS_OK;
	uint32_t nf = m->faces ? m->n_faces : 0;
	if (nf == 0 || !m->verts) {
		m->aabb->n_entries = 0;
		m->aabb->entries = NULL;
		return LFS_OK;
	}
	aabb_build b = { .m = m };
	b.faces = malloc((size_t)nf * sizeof(uint32_t));
	b.centre = malloc((size_t)nf * 3 * sizeof(float));
	b.out = zalloc(a, (size_t)nf * 2 - 1, sizeof(nwn_aabb_entry));
	if (!b.faces || !b.centre || !b.out) {
		free(b.faces);
		free(b.centre);
		return NOMEM(err);
	}
	for (uint32_t i = 0; i < nf; i++) {
		b.faces[i] = i;
		const nwn_face *fc = &m->faces[i];
		for (int k = 0; k < 3; k++)
			b.centre[3 * i + k] = (m->verts[3 * (size_t)fc->v[0] + k] + m->verts[3 * (size_t)fc->v[1] + k] +
					       m->verts[3 * (size_t)fc->v[2] + k]) / 3.0f;
	}
	/* depth is bounded by log2(nf) + 1 for median splits */
	aabb_rec(&b, b.faces, nf, 0);
	m->aabb->entries = b.out;
	m->aabb->n_entries = b.n;
	m->aabb->root_ptr = 1;
	free(b.faces);
	free(b.centre);
	return LFS_OK;
}

