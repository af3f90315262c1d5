/**
 * @file nwn_patch_derive.c
 * After value edits of a mesh (vertices, face vertex indices): rewrite the
 * stored derived values whose inputs changed -- face planes, adjacency,
 * bounding box, average point, radius, area, AABB boxes and split planes --
 * keeping the stored bits wherever the derivation gives the same result
 * before and after the edit (rules in nwn_patch.h). Before that, the
 * stored values of the version being replaced are recorded in the memo of
 * seen derived values (nwn_derive_memo.h), and a memo hit for the new
 * inputs gives back the bits a compiler stored for them.
 */
#include "nwn_patch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/mem.h"
#include "nwn_derive_memo.h"
#include "nwn_mdl_derive.h"

#define FACE_SIZE 32u

/* approximate-rule update (see file comment) */
static float delta_rule(float stored, double fold, double fnew)
{
	if (fold == fnew || (isnan(fold) && isnan(fnew)))
		return stored;
	return (float)((double)stored + (fnew - fold));
}
static int32_t find_entry(const nwn_aabb *t, uint32_t off)
{
	for (uint32_t i = 0; i < t->n_entries; i++)
		if (t->entries[i].off == off)
			return (int32_t)i;
	return -1;
}

/* AABB boxes: leaves = box of their face, inner entries = union of their
 * children, recomputed only where an input changed. */
static lfs_err derive_aabb(nwn_patch *a, uint32_t node, const uint8_t *faff)
{
	nwn_mesh *me = nwn_patch_node(a, node)->mesh;
	nwn_aabb *t = me->aabb;
	nwn_mesh_track *tr = &a->trk[node];
	size_t na = t->n_entries;
	if (!na)
		return LFS_OK;
	float *nb = malloc(na * 24);
	int32_t *left = malloc(na * 4), *right = malloc(na * 4);
	if (!nb || !left || !right) {
		free(nb);
		free(left);
		free(right);
		return lfs_nomem(a->err, "apply view");
	}
	lfs_err e = LFS_OK;
	for (size_t i = 0; i < na; i++) {
		nwn_aabb_entry *x = &t->entries[i];
		memcpy(nb + 6 * i, x->bmin, 12);
		memcpy(nb + 6 * i + 3, x->bmax, 12);
		/* children: the left child follows its parent in pre-order */
		left[i] = x->left_ptr ? (i + 1 < na && t->entries[i + 1].off == x->left_ptr ?
						 (int32_t)(i + 1) : find_entry(t, x->left_ptr)) : -1;
		right[i] = x->right_ptr ? find_entry(t, x->right_ptr) : -1;
	}
	for (size_t i = na; i-- > 0 && !e;) {
		nwn_aabb_entry *x = &t->entries[i];
		if (tr->aexplicit[i])
			continue;
		float ob[6], nw[6];
		bool have = false;
		if (x->leaf_face >= 0 && (uint32_t)x->leaf_face < me->n_faces) {
			uint32_t f = (uint32_t)x->leaf_face;
			if (!faff[f])
				continue;
			nwn_face_box(tr->vold, tr->fold + 3 * (size_t)f, ob);
			uint16_t cur[3] = { me->faces[f].v[0], me->faces[f].v[1], me->faces[f].v[2] };
			nwn_face_box(me->verts, cur, nw);
			have = true;
		} else {
			int32_t ch[2] = { left[i], right[i] };
			bool moved = false;
			for (int c = 0; c < 2; c++)
				if (ch[c] > (int32_t)i &&
				    memcmp(nb + 6 * (size_t)ch[c], tr->aold + 6 * (size_t)ch[c], 24))
					moved = true;
			if (!moved)
				continue;
			for (int k = 0; k < 3; k++) {
				ob[k] = nw[k] = INFINITY;
				ob[3 + k] = nw[3 + k] = -INFINITY;
			}
			for (int c = 0; c < 2; c++) {
				if (ch[c] <= (int32_t)i)
					continue;
				const float *o = tr->aold + 6 * (size_t)ch[c], *w = nb + 6 * (size_t)ch[c];
				for (int k = 0; k < 3; k++) {
					ob[k] = fminf(ob[k], o[k]);
					ob[3 + k] = fmaxf(ob[3 + k], o[3 + k]);
					nw[k] = fminf(nw[k], w[k]);
					nw[3 + k] = fmaxf(nw[3 + k], w[3 + k]);
				}
			}
			have = true;
		}
		if (!have)
			continue;
		for (int k = 0; k < 6 && !e; k++) {
			if (nwn_feq(ob[k], nw[k]))
				continue;
			nb[6 * i + k] = nw[k];
			e = nwn_patch_md_f32(a, x->off + 4 * (uint32_t)k, nw[k]);
		}
		/* plane bits of an inner entry: the axis between its children's
		 * centres (nwn_aabb_plane), rewritten only when that changes */
		if (!e && x->leaf_face < 0 && left[i] > (int32_t)i && right[i] > (int32_t)i) {
			nwn_aabb_entry lo = { 0 }, ro = { 0 }, ln = { 0 }, rn = { 0 };
			const float *src[4] = { tr->aold + 6 * (size_t)left[i], tr->aold + 6 * (size_t)right[i],
						nb + 6 * (size_t)left[i], nb + 6 * (size_t)right[i] };
			nwn_aabb_entry *dst[4] = { &lo, &ro, &ln, &rn };
			for (int q = 0; q < 4; q++) {
				memcpy(dst[q]->bmin, src[q], 12);
				memcpy(dst[q]->bmax, src[q] + 3, 12);
			}
			uint32_t po = nwn_aabb_plane(&lo, &ro), pn = nwn_aabb_plane(&ln, &rn);
			if (po != pn)
				e = nwn_patch_md_u32(a, x->off + 36, pn);
		}
	}
	free(nb);
	free(left);
	free(right);
	return e;
}

/* Face planes of the faces whose vertices or indices changed (@p faff set
 * for them): the stored plane of the old version is recorded in the memo; a
 * memo hit for the new positions is written as it is, else f(new) where it
 * differs from f(old). */
static lfs_err derive_planes(nwn_patch *a, uint32_t node, const nwn_memo_key *scope, const uint16_t *fnew,
			     uint8_t *faff, nwn_arith ar)
{
	nwn_mesh_track *tr = &a->trk[node];
	nwn_mesh *me = nwn_patch_node(a, node)->mesh;
	size_t nv = me->verts ? me->n_verts : 0, nf = me->faces ? me->n_faces : 0;
	lfs_err e = LFS_OK;
	for (size_t f = 0; f < nf && !e; f++) {
		bool aff = tr->fdirty[f];
		for (int k = 0; k < 3 && nv; k++)
			aff |= tr->vdirty[fnew[3 * f + k]] || tr->vdirty[tr->fold[3 * f + k]];
		if (!aff)
			continue;
		faff[f] = 1;
		if (!nv)
			continue;
		const uint16_t *o = tr->fold + 3 * f, *w = fnew + 3 * f;
		const float *q0 = tr->vold + 3 * (size_t)o[0], *q1 = tr->vold + 3 * (size_t)o[1],
			    *q2 = tr->vold + 3 * (size_t)o[2];
		const float *p0 = me->verts + 3 * (size_t)w[0], *p1 = me->verts + 3 * (size_t)w[1],
			    *p2 = me->verts + 3 * (size_t)w[2];
		float stored[4], po[4], pn[4];
		memcpy(stored, me->faces[f].plane_normal, 12);
		stored[3] = me->faces[f].plane_distance;
		nwn_memo_key ko = nwn_memo_face_key(scope, q0, q1, q2), kn = nwn_memo_face_key(scope, p0, p1, p2);
		nwn_memo_put(&ko, stored, sizeof(stored));
		uint32_t fo = me->faces_arr.off + FACE_SIZE * (uint32_t)f;
		if (nwn_memo_get(&kn, pn, sizeof(pn))) {
			for (int k = 0; k < 4 && !e; k++)
				e = nwn_patch_md_f32(a, fo + 4 * (uint32_t)k, pn[k]);
			continue;
		}
		bool oko = nwn_edit_face_plane(q0, q1, q2, po, ar);
		if (!nwn_edit_face_plane(p0, p1, p2, pn, ar))
			continue; /* degenerate now: keep the stored plane */
		for (int k = 0; k < 4 && !e; k++)
			if (!oko || !nwn_feq(po[k], pn[k]))
				e = nwn_patch_md_f32(a, fo + 4 * (uint32_t)k, pn[k]);
	}
	return e;
}

/* Adjacency from the new face vertex indices, written where it changed. */
static lfs_err derive_adjacency(nwn_patch *a, uint32_t node, const uint16_t *fnew)
{
	nwn_mesh *me = nwn_patch_node(a, node)->mesh;
	size_t nf = me->faces ? me->n_faces : 0;
	lfs_err e = LFS_OK;
	int16_t *ao = malloc(nf * 6 + 2), *an = malloc(nf * 6 + 2);
	if (!ao || !an || !nwn_face_adjacency(a->trk[node].fold, nf, ao) || !nwn_face_adjacency(fnew, nf, an))
		e = lfs_nomem(a->err, "apply view");
	for (size_t i = 0; i < nf * 3 && !e; i++)
		if (ao[i] != an[i])
			e = nwn_patch_md_u16(a, me->faces_arr.off + FACE_SIZE * (uint32_t)(i / 3) + 20 + 2 * (uint32_t)(i % 3),
					     (uint16_t)an[i]);
	free(ao);
	free(an);
	return e;
}

/* The memo's whole-mesh record: bbox min, max, average, radius, area (11
 * words), then per AABB entry its box and plane bits (7 words). */
#define MESH_WORDS 11u
#define AABB_WORDS 7u

/* Record the old version's whole-mesh derived values (unless an AABB box
 * was edited explicitly in this save: then the file's values are no single
 * version's) and look the new inputs up; on a hit write that version's
 * values (*@p hit = true). */
static lfs_err memo_mesh(nwn_patch *a, uint32_t node, const nwn_memo_key *scope, const uint16_t *fnew,
			 bool *hit)
{
	nwn_mesh_track *tr = &a->trk[node];
	nwn_mesh *me = nwn_patch_node(a, node)->mesh;
	size_t nv = me->n_verts, nf = me->faces ? me->n_faces : 0, na = me->aabb ? me->aabb->n_entries : 0;
	*hit = false;
	size_t words = MESH_WORDS + AABB_WORDS * na;
	float *rec = malloc(words * 4);
	if (!rec)
		return lfs_nomem(a->err, "apply view");
	bool explicit = false;
	for (size_t i = 0; i < na; i++)
		explicit |= tr->aexplicit[i] != 0;
	if (!explicit) {
		memcpy(rec, me->bmin, 12);
		memcpy(rec + 3, me->bmax, 12);
		memcpy(rec + 6, me->average, 12);
		rec[9] = me->radius;
		rec[10] = me->area;
		for (size_t i = 0; i < na; i++) {
			memcpy(rec + MESH_WORDS + AABB_WORDS * i, tr->aold + 6 * i, 24);
			memcpy(rec + MESH_WORDS + AABB_WORDS * i + 6, &me->aabb->entries[i].plane, 4);
		}
		nwn_memo_key ko = nwn_memo_mesh_key(scope, me, tr->vold, nv, tr->fold, nf);
		nwn_memo_put(&ko, rec, words * 4);
	}
	nwn_memo_key kn = nwn_memo_mesh_key(scope, me, me->verts, nv, fnew, nf);
	lfs_err e = LFS_OK;
	if (nwn_memo_get(&kn, rec, words * 4)) {
		uint32_t o = nwn_patch_node(a, node)->off;
		*hit = true;
		for (uint32_t k = 0; k < 6 && !e; k++)
			e = nwn_patch_md_f32(a, o + 0x84 + 4 * k, rec[k]);
		for (uint32_t k = 0; k < 3 && !e; k++)
			e = nwn_patch_md_f32(a, o + 0xA0 + 4 * k, rec[6 + k]);
		if (!e)
			e = nwn_patch_md_f32(a, o + 0x9C, rec[9]);
		if (!e)
			e = nwn_patch_md_f32(a, o + 0x268, rec[10]);
		for (size_t i = 0; i < na && !e; i++) {
			const nwn_aabb_entry *x = &me->aabb->entries[i];
			const float *r = rec + MESH_WORDS + AABB_WORDS * i;
			if (tr->aexplicit[i])
				continue;
			for (uint32_t k = 0; k < 6 && !e; k++)
				e = nwn_patch_md_f32(a, x->off + 4 * k, r[k]);
			uint32_t pl;
			memcpy(&pl, r + 6, 4);
			if (!e)
				e = nwn_patch_md_u32(a, x->off + 36, pl);
		}
	}
	free(rec);
	return e;
}

/* bbox, average and radius after a vertex edit, by the arithmetic's rules
 * (nwn_patch.h). */
static lfs_err derive_bounds(nwn_patch *a, uint32_t node, nwn_arith ar)
{
	nwn_mesh_track *tr = &a->trk[node];
	nwn_mesh *me = nwn_patch_node(a, node)->mesh;
	size_t nv = me->n_verts;
	uint32_t o = nwn_patch_node(a, node)->off;
	lfs_err e = LFS_OK;
	float mn0[3], mx0[3], mn1[3], mx1[3];
	nwn_edit_bbox(tr->vold, nv, me->anim, mn0, mx0);
	nwn_edit_bbox(me->verts, nv, me->anim, mn1, mx1);
	/* bbox: exact where f(old) gives the stored bound; a bound that it
	 * does not give (nwnmdlcomp's box also covers ASCII vertices no face
	 * uses, which the binary does not keep) is kept, and only pushed out
	 * when an edited vertex leaves it */
	for (int k = 0; k < 3 && !e; k++) {
		float lo = nwn_feq(mn0[k], me->bmin[k]) ? mn1[k] : fminf(me->bmin[k], mn1[k]);
		float hi = nwn_feq(mx0[k], me->bmax[k]) ? mx1[k] : fmaxf(me->bmax[k], mx1[k]);
		if (!nwn_feq(lo, me->bmin[k]))
			e = nwn_patch_md_f32(a, o + 0x84 + 4 * (uint32_t)k, lo);
		if (!e && !nwn_feq(hi, me->bmax[k]))
			e = nwn_patch_md_f32(a, o + 0x90 + 4 * (uint32_t)k, hi);
	}
	/* average: when the file's compiler's arithmetic reproduces the stored
	 * value (all three components) from the old vertices, it gives the new
	 * one; otherwise (BioWare's compiler summed its ASCII vertices in an
	 * order the binary does not keep) the stored centre is kept and the
	 * radius below is measured from it, so (average, radius) stays a
	 * bounding sphere and an edit that is undone restores both. Only the
	 * file's own arithmetic is tried: with a second one, a value that one
	 * of them reproduces only by coincidence after an edit would pick the
	 * wrong one on undo. */
	float avo[3], avn[3], oldavg[3], newavg[3];
	if (!nwn_edit_average(tr->vold, nv, avo, ar) || !nwn_edit_average(me->verts, nv, avn, ar))
		e = lfs_nomem(a->err, "apply view");
	memcpy(oldavg, me->average, 12);
	memcpy(newavg, me->average, 12);
	if (!e && nwn_feq(avo[0], oldavg[0]) && nwn_feq(avo[1], oldavg[1]) && nwn_feq(avo[2], oldavg[2]))
		memcpy(newavg, avn, 12);
	for (int k = 0; k < 3 && !e; k++)
		if (!nwn_feq(newavg[k], oldavg[k]))
			e = nwn_patch_md_f32(a, o + 0xA0 + 4 * (uint32_t)k, newavg[k]);
	/* radius: exact rule when the arithmetic reproduces the stored value,
	 * else stored + (f(new) - f(old)) */
	if (!e) {
		float r = me->radius, r0 = nwn_edit_radius(tr->vold, nv, oldavg, ar),
		      r1 = nwn_edit_radius(me->verts, nv, newavg, ar);
		float rn = nwn_feq(r0, r) ? r1 : delta_rule(r, r0, r1);
		if (!nwn_feq(rn, r))
			e = nwn_patch_md_f32(a, o + 0x9C, rn);
	}
	return e;
}

lfs_err nwn_patch_derive_mesh(nwn_patch *a, uint32_t node)
{
	nwn_mesh_track *tr = &a->trk[node];
	if (!tr->on)
		return LFS_OK;
	nwn_mesh *me = nwn_patch_node(a, node)->mesh;
	size_t nv = me->verts ? me->n_verts : 0, nf = me->faces ? me->n_faces : 0;
	bool vany = false, fany = false;
	for (size_t i = 0; i < nv; i++)
		vany |= tr->vdirty[i] != 0;
	for (size_t f = 0; f < nf; f++)
		fany |= tr->fdirty[f] != 0;
	if (!vany && !fany)
		return LFS_OK;
	/* the file's compiler: BioWare's geometry routines, else nwnmdlcomp's */
	nwn_arith ar = a->m->geom.fn[0] == 0x0040BBC0u ? NWN_ARITH_BIOWARE : NWN_ARITH_NMC;
	nwn_memo_key scope = nwn_memo_scope(a->m, node);
	uint8_t *faff = calloc(nf + 1, 1);
	uint16_t *fnew = malloc(nf * 6 + 2);
	if (!faff || !fnew) {
		free(faff);
		free(fnew);
		return lfs_nomem(a->err, "apply view");
	}
	for (size_t f = 0; f < nf; f++)
		for (int k = 0; k < 3; k++)
			fnew[3 * f + k] = me->faces[f].v[k];
	lfs_err e = derive_planes(a, node, &scope, fnew, faff, ar);
	if (!e && fany)
		e = derive_adjacency(a, node, fnew);
	bool hit = false;
	if (!e && nv)
		e = memo_mesh(a, node, &scope, fnew, &hit);
	if (!e && !hit && vany && nv)
		e = derive_bounds(a, node, ar);
	/* area: exact rule when the arithmetic reproduces the stored value,
	 * else stored + (f(new) - f(old)) */
	if (!e && !hit && nv && me->area != 0.0f) {
		float s0 = me->area, a0 = nwn_edit_area(tr->vold, tr->fold, nf, ar),
		      a1 = nwn_edit_area(me->verts, fnew, nf, ar);
		float sn = nwn_feq(a0, s0) ? a1 : delta_rule(s0, a0, a1);
		if (!nwn_feq(sn, s0))
			e = nwn_patch_md_f32(a, nwn_patch_node(a, node)->off + 0x268, sn);
	}
	if (!e && !hit && me->aabb && nv)
		e = derive_aabb(a, node, faff);
	free(faff);
	free(fnew);
	return e;
}
