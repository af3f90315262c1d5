/**
 * @file nwn_mdl_derive_edit.c
 * Derived quantities as the edit-preserving apply recomputes them after a
 * value edit (src/formats/nwn/nwn_apply*.c through nwn_patch_derive.c): face plane,
 * bounding box, average point, radius, area, adjacency, face box, and the
 * double-precision axis-angle -> quaternion. Declared in nwn_mdl_derive.h
 * beside the compiler's versions (nwn_mdl_derive.c); see there which
 * arithmetic each variant reproduces.
 */
#include "nwn_mdl_derive.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* Axis-angle (radians) -> quaternion (x, y, z, w) = (axis·sin(a/2), cos(a/2))
 * [N §3.2]: axis normalised, computed in double, rounded once. Over the
 * 54 055 orientation keys of the corpus this reproduces the stored bits from
 * the printed axis-angle for 31 437 keys (float arithmetic, as
 * nwn_axis_angle_to_quat() does it: 24 079). A zero axis is the identity
 * (decompilers print the identity as 0 0 0 0). */
void nwn_axis_angle_to_quat_double(const float aa[4], float q[4])
{
	double x = aa[0], y = aa[1], z = aa[2], ang = aa[3];
	double len = sqrt(x * x + y * y + z * z);
	if (!(len > 0.0) || !isfinite(len) || !isfinite(ang)) {
		q[0] = q[1] = q[2] = 0.0f;
		q[3] = 1.0f;
		return;
	}
	double s = sin(ang / 2.0) / len;
	q[0] = (float)(x * s);
	q[1] = (float)(y * s);
	q[2] = (float)(z * s);
	q[3] = (float)cos(ang / 2.0);
}

/* ---- derived values ------------------------------------------------------- */

/* Face plane as BioWare's compiler computes it (docs/derived-values.md:
 * 10 198 of 10 198 corpus faces bit-equal, normal and distance): edge
 * vectors p1-p0 and p2-p1 rounded to float, the cross product of those in
 * extended precision rounded to float, its length in extended precision
 * (not rounded), each component divided by it and rounded; d = -n.p0 in
 * double from the float normal. long double is the x87 80-bit format with
 * gcc/clang on x86; elsewhere the last bit may differ. */
bool nwn_edit_face_plane(const float *p0, const float *p1, const float *p2, float out[4], nwn_arith ar)
{
	if (ar == NWN_ARITH_NMC) {
		/* nwnmdlcomp: everything in extended precision, d = -n.p0 from
		 * the unrounded normal; only the results are rounded (77 218 of
		 * 77 241 corpus faces) */
		long double x[3], y[3];
		for (int k = 0; k < 3; k++) {
			x[k] = (long double)p1[k] - p0[k];
			y[k] = (long double)p2[k] - p1[k];
		}
		long double c[3] = { x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0] };
		long double l = sqrtl(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
		if (!(l > 0.0L) || !isfinite(l))
			return false;
		long double n[3] = { c[0] / l, c[1] / l, c[2] / l };
		for (int k = 0; k < 3; k++)
			out[k] = (float)n[k];
		out[3] = (float)-(n[0] * p0[0] + n[1] * p0[1] + n[2] * p0[2]);
		return true;
	}
	float a[3] = { p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2] };
	float b[3] = { p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2] };
	float c[3] = { (float)((long double)a[1] * b[2] - (long double)a[2] * b[1]),
		       (float)((long double)a[2] * b[0] - (long double)a[0] * b[2]),
		       (float)((long double)a[0] * b[1] - (long double)a[1] * b[0]) };
	long double l = sqrtl((long double)c[0] * c[0] + (long double)c[1] * c[1] + (long double)c[2] * c[2]);
	if (!(l > 0.0L) || !isfinite(l))
		return false;
	for (int k = 0; k < 3; k++)
		out[k] = (float)(c[k] / l);
	out[3] = (float)-((double)out[0] * p0[0] + (double)out[1] * p0[1] + (double)out[2] * p0[2]);
	return true;
}

/* Mesh bounding box: vertices and the node origin (reproduces all 248
 * corpus meshes); animmesh vertex sets extend it [N §3.3]. */
void nwn_bbox_extend(const float *v, size_t n, float mn[3], float mx[3])
{
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 3; k++) {
			float x = v[3 * i + k];
			if (x < mn[k])
				mn[k] = x;
			if (x > mx[k])
				mx[k] = x;
		}
}

void nwn_edit_bbox(const float *v, size_t nv, const nwn_animmesh *am, float mn[3], float mx[3])
{
	for (int k = 0; k < 3; k++)
		mn[k] = mx[k] = 0.0f;
	nwn_bbox_extend(v, nv, mn, mx);
	if (am && am->anim_verts)
		nwn_bbox_extend(am->anim_verts, (size_t)am->n_vert_sets * nv, mn, mx);
}

/* Average point: the distinct (bitwise) positions in first-occurrence
 * order, summed in float, divided by their count in float. BioWare's
 * compiler sums its ASCII vertices, whose order the binary does not keep:
 * this reproduces 79 of the 248 corpus meshes (docs/derived-values.md).
 * Distinctness by a hash of the bits: O(n), no shared state (the mount calls
 * this from several threads). */
/* Sums of the distinct (bitwise) positions in first-occurrence order, in
 * float (@p sf) and extended precision (@p sx); their count, or SIZE_MAX on
 * no memory. */
static size_t distinct_sums(const float *v, size_t nv, float sf[3], long double sx[3])
{
	for (int k = 0; k < 3; k++) {
		sf[k] = 0;
		sx[k] = 0;
	}
	if (!nv)
		return 0;
	size_t cap = 16;
	while (cap < 2 * nv)
		cap *= 2;
	uint32_t *slot = malloc(cap * sizeof(*slot));
	if (!slot)
		return SIZE_MAX;
	memset(slot, 0xFF, cap * sizeof(*slot));
	size_t uniq = 0;
	for (size_t i = 0; i < nv; i++) {
		uint32_t w[3];
		memcpy(w, v + 3 * i, 12);
		uint32_t h = (w[0] * 0x9E3779B1u) ^ (w[1] * 0x85EBCA77u) ^ (w[2] * 0xC2B2AE3Du);
		size_t j = (h ^ (h >> 15)) & (cap - 1);
		bool seen = false;
		while (slot[j] != UINT32_MAX) {
			if (!memcmp(v + 3 * (size_t)slot[j], v + 3 * i, 12)) {
				seen = true;
				break;
			}
			j = (j + 1) & (cap - 1);
		}
		if (seen)
			continue;
		slot[j] = (uint32_t)i;
		uniq++;
		for (int k = 0; k < 3; k++) {
			sf[k] += v[3 * i + k];
			sx[k] += v[3 * i + k];
		}
	}
	free(slot);
	return uniq;
}

bool nwn_edit_average(const float *v, size_t nv, float out[3], nwn_arith ar)
{
	float sf[3];
	long double sx[3];
	size_t uniq = distinct_sums(v, nv, sf, sx);
	out[0] = out[1] = out[2] = 0;
	if (uniq == SIZE_MAX)
		return false;
	if (!uniq)
		return true;
	for (int k = 0; k < 3; k++)
		out[k] = ar == NWN_ARITH_NMC ? (float)(sx[k] / (long double)uniq) : sf[k] / (float)uniq;
	return true;
}

/* Radius as BioWare's compiler computes it (248 of 248 corpus meshes):
 * per vertex the differences from the stored average rounded to float, the
 * length in double rounded to float; the largest. nwnmdlcomp (1 381 of
 * 1 458): differences from its unrounded extended-precision average of the
 * distinct positions, lengths in extended precision, the largest rounded. */
float nwn_edit_radius(const float *v, size_t nv, const float avg[3], nwn_arith ar)
{
	if (ar == NWN_ARITH_NMC) {
		/* nwnmdlcomp: from its unrounded (extended) average */
		float sf[3];
		long double sx[3], c[3] = { 0, 0, 0 }, r = 0;
		size_t uniq = distinct_sums(v, nv, sf, sx);
		if (uniq == SIZE_MAX)
			return NAN;
		for (int k = 0; k < 3 && uniq; k++)
			c[k] = sx[k] / (long double)uniq;
		for (size_t i = 0; i < nv; i++) {
			long double d[3] = { v[3 * i] - c[0], v[3 * i + 1] - c[1], v[3 * i + 2] - c[2] };
			long double l = sqrtl(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
			if (l > r)
				r = l;
		}
		return (float)r;
	}
	float r = 0;
	for (size_t i = 0; i < nv; i++) {
		float d[3];
		for (int k = 0; k < 3; k++)
			d[k] = (float)((double)v[3 * i + k] - avg[k]);
		float l = (float)sqrt((double)d[0] * d[0] + (double)d[1] * d[1] + (double)d[2] * d[2]);
		if (l > r)
			r = l;
	}
	return r;
}

/* Mesh area as BioWare's compiler computes it (242 of 242 non-zero corpus
 * areas): edges p1-p0, p2-p0 rounded to float, the cross product in
 * extended precision rounded to float, its length in extended precision,
 * the running sum rounded to float after each face. nwnmdlcomp (1 408 of
 * 1 408): nothing rounded but the running sum. */
float nwn_edit_area(const float *v, const uint16_t *fv, size_t nf, nwn_arith ar)
{
	float s = 0;
	for (size_t f = 0; f < nf; f++) {
		const float *p0 = v + 3 * (size_t)fv[3 * f], *p1 = v + 3 * (size_t)fv[3 * f + 1],
			    *p2 = v + 3 * (size_t)fv[3 * f + 2];
		long double x[3], y[3];
		for (int k = 0; k < 3; k++) {
			x[k] = (long double)p1[k] - p0[k];
			y[k] = (long double)p2[k] - p0[k];
			if (ar == NWN_ARITH_BIOWARE) {
				x[k] = (float)x[k];
				y[k] = (float)y[k];
			}
		}
		long double c[3] = { x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0] };
		if (ar == NWN_ARITH_BIOWARE)
			for (int k = 0; k < 3; k++)
				c[k] = (float)c[k];
		s = (float)(s + sqrtl(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) * 0.5L);
	}
	return s;
}

/* approximate-rule update (see file comment) */

typedef struct edge {
	uint32_t lo, hi, face;
	uint8_t k;
} edge;

static int edge_cmp(const void *x, const void *y)
{
	const edge *p = x, *q = y;
	if (p->lo != q->lo)
		return p->lo < q->lo ? -1 : 1;
	if (p->hi != q->hi)
		return p->hi < q->hi ? -1 : 1;
	if (p->face != q->face)
		return p->face < q->face ? -1 : 1;
	return (int)p->k - (int)q->k;
}

/* Adjacency [N §3.4]: edge k of face f = (v_k, v_k+1); adj = the first
 * other face (in face order) with the same edge in either winding, or -1. */
bool nwn_face_adjacency(const uint16_t *fv, size_t nf, int16_t *adj)
{
	edge *e = malloc(nf * 3 * sizeof(*e) + 1);
	if (!e)
		return false;
	for (size_t f = 0; f < nf; f++)
		for (int k = 0; k < 3; k++) {
			uint32_t x = fv[3 * f + k], y = fv[3 * f + (k + 1) % 3];
			e[3 * f + k] = (edge){ x < y ? x : y, x < y ? y : x, (uint32_t)f, (uint8_t)k };
		}
	qsort(e, nf * 3, sizeof(*e), edge_cmp);
	for (size_t i = 0; i < nf * 3;) {
		size_t j = i;
		while (j < nf * 3 && e[j].lo == e[i].lo && e[j].hi == e[i].hi)
			j++;
		for (size_t p = i; p < j; p++) {
			int32_t other = -1;
			for (size_t q = i; q < j; q++)
				if (e[q].face != e[p].face) {
					other = (int32_t)e[q].face;
					break;
				}
			adj[3 * (size_t)e[p].face + e[p].k] = (int16_t)(other > 32767 ? -1 : other);
		}
		i = j;
	}
	free(e);
	return true;
}

void nwn_face_box(const float *v, const uint16_t *fv, float box[6])
{
	for (int k = 0; k < 3; k++) {
		box[k] = INFINITY;
		box[3 + k] = -INFINITY;
		for (int j = 0; j < 3; j++) {
			float x = v[3 * (size_t)fv[j] + k];
			if (x < box[k])
				box[k] = x;
			if (x > box[3 + k])
				box[3 + k] = x;
		}
	}
}

