/**
 * @file nwn_mdl_derive_edit.c
 * Derived quantities as the edit-preserving apply recomputes them after a
 * value edit (src/views/nwn_apply*.c through nwn_patch_derive.c): face plane,
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
 * [notes §3.2]: axis normalised, computed in double, rounded once. Over the
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

/* Face plane: n = normalize((p1-p0) x (p2-p1)), d = -n·p0 [notes §3.4];
 * differences in float, cross product and length in double, distance in
 * double from the float normal (the variant that reproduces most stored
 * planes bit for bit, docs/nwn-compile.md). false for a degenerate face. */
bool nwn_edit_face_plane(const float *p0, const float *p1, const float *p2, float out[4])
{
	float a[3] = { p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2] };
	float b[3] = { p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2] };
	double c[3] = { (double)a[1] * b[2] - (double)a[2] * b[1],
			(double)a[2] * b[0] - (double)a[0] * b[2],
			(double)a[0] * b[1] - (double)a[1] * b[0] };
	double l = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
	if (!(l > 0.0) || !isfinite(l))
		return false;
	for (int k = 0; k < 3; k++)
		out[k] = (float)(c[k] / l);
	out[3] = (float)-((double)out[0] * p0[0] + (double)out[1] * p0[1] + (double)out[2] * p0[2]);
	return true;
}

/* Mesh bounding box: vertices and the node origin (reproduces all 248
 * corpus meshes); animmesh vertex sets extend it [notes §3.3]. */
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

typedef struct pos3 {
	float p[3];
} pos3;

static int pos_cmp(const void *x, const void *y)
{
	return memcmp(x, y, sizeof(pos3));
}

/* Average point: mean of the distinct positions (the ASCII vertices before
 * the compiler split them; within 1e-5 for 232 of 248 corpus meshes).
 * Distinct = different bits; sorted copies keep this O(n log n) and free of
 * shared state (the mount calls this from several threads). */
bool nwn_edit_average(const float *v, size_t nv, double out[3])
{
	out[0] = out[1] = out[2] = 0;
	if (!nv)
		return true;
	pos3 *c = malloc(nv * sizeof(*c));
	if (!c)
		return false;
	memcpy(c, v, nv * sizeof(*c));
	qsort(c, nv, sizeof(*c), pos_cmp);
	size_t uniq = 0;
	for (size_t i = 0; i < nv; i++) {
		if (i && !memcmp(&c[i], &c[i - 1], sizeof(*c)))
			continue;
		uniq++;
		for (int k = 0; k < 3; k++)
			out[k] += c[i].p[k];
	}
	for (int k = 0; k < 3; k++)
		out[k] /= (double)uniq;
	free(c);
	return true;
}

/* Radius: largest distance of a vertex from the average (float, as 212 of
 * 248 corpus meshes store it). */
float nwn_edit_radius(const float *v, size_t nv, const float avg[3])
{
	float r = 0;
	for (size_t i = 0; i < nv; i++) {
		float dx = v[3 * i] - avg[0], dy = v[3 * i + 1] - avg[1], dz = v[3 * i + 2] - avg[2];
		float d = sqrtf(dx * dx + dy * dy + dz * dz);
		if (d > r)
			r = d;
	}
	return r;
}

/* Mesh area: sum of |(p1-p0) x (p2-p0)| / 2 in float [notes §3.3]. */
float nwn_edit_area(const float *v, const uint16_t *fv, size_t nf)
{
	float s = 0;
	for (size_t f = 0; f < nf; f++) {
		const float *p0 = v + 3 * (size_t)fv[3 * f], *p1 = v + 3 * (size_t)fv[3 * f + 1],
			    *p2 = v + 3 * (size_t)fv[3 * f + 2];
		float x[3] = { p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2] };
		float y[3] = { p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2] };
		float c[3] = { x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2],
			       x[0] * y[1] - x[1] * y[0] };
		s += sqrtf(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) / 2;
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

/* Adjacency [notes §3.4]: edge k of face f = (v_k, v_k+1); adj = the first
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

