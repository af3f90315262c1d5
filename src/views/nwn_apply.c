/**
 * @file nwn_apply.c
 * Edit-preserving re-encode of an NWN binary from an edited view (see
 * nwn_apply.h and docs/nwn-compile.md "Edits").
 *
 * Structure offsets used for patching: src/formats/nwn_mdl_decode.c (which
 * follows [T] and notes §3); the model keeps every structure's model-data
 * offset (`off`) and raw pointer, so a value edit is a write of the new bits
 * at 12 + off (model data) or 12 + model_size + ptr (raw data).
 *
 * Derived values (notes §3.3, §3.4, measured on the corpus, see
 * docs/nwn-compile.md): for a derived value D = f(inputs) the rule is
 *   f(new) == f(old) bitwise  -> keep the stored bits;
 *   otherwise, exact rules    -> write f(new)   (face plane, bbox, AABB box,
 *                                adjacency, vertex index list);
 *   approximate rules         -> write stored + (f(new) - f(old)), computed in
 *                                double (average point, radius, area), which
 *                                is f(new) whenever stored == f(old).
 */
#include "nwn_apply.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/floatfmt.h"
#include "../common/strbuf.h"
#include "../formats/nwn/nwn_mdl.h"
#include "../formats/nwn/nwn_mdl_derive.h" /* nwn_aabb_plane */
#include "../formats/nwn/nwn_mdl_encode.h"
#include "mdl_parse.h"
#include "names.h"
#include "nwn_apply_struct.h"
#include "nwn_ascii.h"
#include "nwn_csv.h"
#include "nwn_obj.h"
#include "nwn_quat.h"

#define RAW_NULL 0xFFFFFFFFu
#define FACE_SIZE 32u

/* ---- context -------------------------------------------------------------- */

/** Edit tracking of one mesh node of the model geometry. */
typedef struct mesh_track {
	bool on;
	float *vold;        /* verts before the edit (n_verts * 3), NULL when none */
	uint16_t *fold;     /* face vertex indices before the edit (n_faces * 3) */
	uint8_t *vdirty;    /* per vertex: position edited */
	uint8_t *fdirty;    /* per face: vertex indices edited */
	float *aold;        /* per aabb entry: box before the edit (6 floats) */
	uint8_t *aexplicit; /* per aabb entry: box edited explicitly in model.mdl */
} mesh_track;

/** A controller whose key count changes: applied to the re-decoded, patched
 * file, which is then re-laid by nwn_mdl_encode(). */
typedef struct pend {
	int32_t geom;   /* -1 = model geometry, else animation index */
	uint32_t node, ctrl, rows;
	float *t, *v;   /* rows times; rows * ncols stored values */
} pend;

typedef struct ap {
	nwn_model *m;
	uint8_t *img; /* the output: a copy of the input, patched */
	size_t n;
	size_t md0, raw0; /* file offsets of model data / raw data */
	const char *file; /* view path, for messages */
	const char *text; /* edited text (for column lookups) */
	size_t tn;
	lfs_error *err;
	mesh_track *trk; /* per model-geometry node */
	const mdl_row *crow; /* edited row being applied (for messages) */
	bool changed;
	bool hit_structural; /* a structural difference was found */
	pend *pend;
	uint32_t n_pend, cap_pend;
} ap;

static lfs_err nomem(ap *a)
{
	return lfs_fail(a->err, LFS_ERR_NOMEM, SIZE_MAX, "apply view", "out of memory");
}

/* ---- patch primitives ----------------------------------------------------- */

static lfs_err put_bytes(ap *a, size_t foff, const void *src, size_t len, const char *what)
{
	if (foff > a->n || a->n - foff < len)
		return lfs_fail(a->err, LFS_ERR_CORRUPT, foff, what,
				"edit target at file offset 0x%zx lies outside the file", foff);
	if (memcmp(a->img + foff, src, len)) {
		memcpy(a->img + foff, src, len);
		a->changed = true;
	}
	return LFS_OK;
}

static void le32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

static uint32_t fbits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static bool feq(float x, float y)
{
	return fbits(x) == fbits(y);
}

static lfs_err md_u32(ap *a, uint32_t off, uint32_t v)
{
	uint8_t b[4];
	le32(b, v);
	return put_bytes(a, a->md0 + off, b, 4, "model data");
}

static lfs_err md_f32(ap *a, uint32_t off, float v)
{
	return md_u32(a, off, fbits(v));
}

static lfs_err md_u16(ap *a, uint32_t off, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	return put_bytes(a, a->md0 + off, b, 2, "model data");
}

static lfs_err md_u8(ap *a, uint32_t off, uint8_t v)
{
	return put_bytes(a, a->md0 + off, &v, 1, "model data");
}

static lfs_err raw_u32(ap *a, uint32_t ptr, size_t idx, uint32_t v)
{
	uint8_t b[4];
	le32(b, v);
	return put_bytes(a, a->raw0 + ptr + 4 * idx, b, 4, "raw data");
}

static lfs_err raw_f32(ap *a, uint32_t ptr, size_t idx, float v)
{
	return raw_u32(a, ptr, idx, fbits(v));
}

static lfs_err raw_u16(ap *a, uint32_t ptr, size_t idx, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	return put_bytes(a, a->raw0 + ptr + 2 * idx, b, 2, "raw data");
}

/* Fixed-size string field of @p field bytes at model offset @p off: the new
 * text, a NUL, zeros over the rest of the old text; bytes after the old
 * string's NUL (uninitialised memory in game files, notes §3.3) are kept. */
static lfs_err md_str(ap *a, uint32_t off, size_t field, const char *s)
{
	size_t foff = a->md0 + off, len = strlen(s);
	if (foff > a->n || a->n - foff < field || len >= field || field > 256)
		return lfs_fail(a->err, LFS_ERR_CORRUPT, foff, "string field", "bad string edit");
	uint8_t buf[256];
	memcpy(buf, a->img + foff, field);
	size_t oldlen = strnlen((const char *)buf, field);
	memcpy(buf, s, len);
	for (size_t i = len; i < field && (i == len || i < oldlen); i++)
		buf[i] = 0;
	return put_bytes(a, foff, buf, field, "string field");
}

/* ---- errors --------------------------------------------------------------- */

static unsigned row_col(const mdl_row *r, uint32_t i)
{
	if (i < r->ntok)
		return r->tok[i].col;
	if (r->ntok)
		return r->tok[r->ntok - 1].col + (unsigned)strlen(r->tok[r->ntok - 1].s);
	return 1;
}

static lfs_err __attribute__((format(printf, 4, 0)))
failv(ap *a, unsigned line, unsigned col, const char *fmt, va_list va)
{
	char d[256];
	vsnprintf(d, sizeof(d), fmt, va);
	return lfs_fail_at(a->err, a->file, line, col, "%s", d);
}

static lfs_err __attribute__((format(printf, 4, 5)))
perr(ap *a, const mdl_row *r, uint32_t i, const char *fmt, ...)
{
	va_list va;
	va_start(va, fmt);
	lfs_err e = failv(a, r->line, row_col(r, i), fmt, va);
	va_end(va);
	return e;
}

static lfs_err __attribute__((format(printf, 4, 5)))
perr_at(ap *a, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list va;
	va_start(va, fmt);
	lfs_err e = failv(a, line, col, fmt, va);
	va_end(va);
	return e;
}

/* A structural edit: LFS_ERR_UNSUPPORTED with the position of the edit. */
static lfs_err __attribute__((format(printf, 4, 5)))
structural(ap *a, unsigned line, unsigned col, const char *fmt, ...)
{
	char d[220];
	va_list va;
	va_start(va, fmt);
	vsnprintf(d, sizeof(d), fmt, va);
	va_end(va);
	lfs_fail_at(a->err, a->file, line, col, "structural edit needs the encoder: %s", d);
	if (a->err)
		a->err->code = LFS_ERR_UNSUPPORTED;
	a->hit_structural = true;
	return LFS_ERR_UNSUPPORTED;
}

/* Column of token @p ti on line @p line of the edited text (mdl_parse's
 * whitespace rule: bytes <= 0x20), 1 when not found. */
static unsigned text_col(const ap *a, uint32_t line, uint32_t ti)
{
	const char *p = a->text, *end = a->text + a->tn;
	for (uint32_t l = 1; l < line && p < end; p++)
		if (*p == '\n')
			l++;
	const char *ls = p;
	uint32_t k = 0;
	while (p < end && *p != '\n') {
		while (p < end && *p != '\n' && (unsigned char)*p <= 0x20)
			p++;
		if (p >= end || *p == '\n')
			break;
		if (k == ti)
			return (unsigned)(p - ls + 1);
		k++;
		while (p < end && (unsigned char)*p > 0x20)
			p++;
	}
	return 1;
}

/* ---- token values --------------------------------------------------------- */

static lfs_err tok_f(ap *a, const mdl_row *r, uint32_t i, float *v)
{
	if (i >= r->ntok)
		return perr(a, r, i, "missing number");
	if (!mdl_tok_float(r->tok[i].s, v))
		return perr(a, r, i, "'%.40s' is not a number", r->tok[i].s);
	return LFS_OK;
}

static lfs_err tok_i(ap *a, const mdl_row *r, uint32_t i, int64_t lo, int64_t hi, int64_t *v)
{
	if (i >= r->ntok)
		return perr(a, r, i, "missing integer");
	if (!mdl_tok_int(r->tok[i].s, v))
		return perr(a, r, i, "'%.40s' is not an integer", r->tok[i].s);
	if (*v < lo || *v > hi)
		return perr(a, r, i, "%lld is out of range (%lld..%lld)", (long long)*v, (long long)lo,
			    (long long)hi);
	return LFS_OK;
}

/* Generated token (never fails: our own writer printed it). */
static float gtok_f(const mdl_row *r, uint32_t i)
{
	float v = 0;
	if (i < r->ntok)
		mdl_tok_float(r->tok[i].s, &v);
	return v;
}

static int64_t gtok_i(const mdl_row *r, uint32_t i)
{
	int64_t v = 0;
	if (i < r->ntok)
		mdl_tok_int(r->tok[i].s, &v);
	return v;
}

static bool rows_same(const mdl_row *x, const mdl_row *y)
{
	if (x->ntok != y->ntok)
		return false;
	for (uint32_t i = 0; i < x->ntok; i++)
		if (strcmp(x->tok[i].s, y->tok[i].s))
			return false;
	return true;
}

static bool stmt_same(const mdl_stmt *x, const mdl_stmt *y)
{
	if (x->kind != y->kind || !rows_same(&x->head, &y->head) || x->n_rows != y->n_rows)
		return false;
	for (uint32_t i = 0; i < x->n_rows; i++)
		if (!rows_same(&x->rows[i], &y->rows[i]))
			return false;
	return true;
}

/* Axis-angle (radians) -> quaternion (x, y, z, w) = (axis·sin(a/2), cos(a/2))
 * [notes §3.2]: axis normalised, computed in double, rounded once. Over the
 * 54 055 orientation keys of the corpus this reproduces the stored bits from
 * the printed axis-angle for 31 437 keys (float arithmetic, as
 * nwn_axis_angle_to_quat() does it: 24 079). A zero axis is the identity
 * (decompilers print the identity as 0 0 0 0). */
static void aa_to_quat(const float aa[4], float q[4])
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

/* ---- mesh tracking -------------------------------------------------------- */

static nwn_node *gnode(ap *a, uint32_t i)
{
	return &a->m->geom.nodes[i];
}

static lfs_err track(ap *a, uint32_t node)
{
	mesh_track *t = &a->trk[node];
	if (t->on)
		return LFS_OK;
	const nwn_mesh *me = gnode(a, node)->mesh;
	size_t nv = me->verts ? me->n_verts : 0, nf = me->faces ? me->n_faces : 0;
	size_t na = me->aabb ? me->aabb->n_entries : 0;
	t->vold = malloc(nv * 12 + 1);
	t->vdirty = calloc(nv + 1, 1);
	t->fold = malloc(nf * 6 + 2);
	t->fdirty = calloc(nf + 1, 1);
	t->aold = malloc(na * 24 + 4);
	t->aexplicit = calloc(na + 1, 1);
	if (!t->vold || !t->vdirty || !t->fold || !t->fdirty || !t->aold || !t->aexplicit)
		return nomem(a);
	if (nv)
		memcpy(t->vold, me->verts, nv * 12);
	for (size_t f = 0; f < nf; f++)
		for (int k = 0; k < 3; k++)
			t->fold[3 * f + k] = me->faces[f].v[k];
	for (size_t i = 0; i < na; i++) {
		memcpy(t->aold + 6 * i, me->aabb->entries[i].bmin, 12);
		memcpy(t->aold + 6 * i + 3, me->aabb->entries[i].bmax, 12);
	}
	t->on = true;
	return LFS_OK;
}

static void track_free(mesh_track *t)
{
	free(t->vold);
	free(t->vdirty);
	free(t->fold);
	free(t->fdirty);
	free(t->aold);
	free(t->aexplicit);
}

/* Vertex @p v component @p k of model-geometry node @p node. */
static lfs_err set_vert(ap *a, uint32_t node, uint32_t v, int k, float val)
{
	nwn_mesh *me = gnode(a, node)->mesh;
	lfs_err e = track(a, node);
	if (e)
		return e;
	me->verts[3 * (size_t)v + k] = val;
	a->trk[node].vdirty[v] = 1;
	return raw_f32(a, me->verts_raw, 3 * (size_t)v + k, val);
}

/* Vertex index @p k of face @p f; keeps the vertex index list (the faces'
 * indices in face order, notes §3.3) in step. */
static lfs_err set_face_v(ap *a, uint32_t node, uint32_t f, int k, uint16_t v)
{
	nwn_mesh *me = gnode(a, node)->mesh;
	lfs_err e = track(a, node);
	if (e)
		return e;
	uint16_t old = me->faces[f].v[k];
	me->faces[f].v[k] = v;
	a->trk[node].fdirty[f] = 1;
	if ((e = md_u16(a, me->faces_arr.off + FACE_SIZE * f + 26 + 2 * (uint32_t)k, v)))
		return e;
	size_t li = 3 * (size_t)f + (size_t)k;
	if (me->vindices && me->vindex_offsets && li < me->n_vindices && me->vindices[li] == old) {
		me->vindices[li] = v;
		return raw_u16(a, me->vindex_offsets[0], li, v);
	}
	return LFS_OK;
}

/* ---- derived values ------------------------------------------------------- */

/* Face plane: n = normalize((p1-p0) x (p2-p1)), d = -n·p0 [notes §3.4];
 * differences in float, cross product and length in double, distance in
 * double from the float normal (the variant that reproduces most stored
 * planes bit for bit, docs/nwn-compile.md). false for a degenerate face. */
static bool plane_of(const float *p0, const float *p1, const float *p2, float out[4])
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
static void bbox_of(const float *v, size_t nv, const nwn_animmesh *am, float mn[3], float mx[3])
{
	for (int k = 0; k < 3; k++)
		mn[k] = mx[k] = 0.0f;
	for (size_t i = 0; i < nv; i++)
		for (int k = 0; k < 3; k++) {
			float x = v[3 * i + k];
			if (x < mn[k])
				mn[k] = x;
			if (x > mx[k])
				mx[k] = x;
		}
	if (am && am->anim_verts) {
		size_t n = (size_t)am->n_vert_sets * nv;
		for (size_t i = 0; i < n; i++)
			for (int k = 0; k < 3; k++) {
				float x = am->anim_verts[3 * i + k];
				if (x < mn[k])
					mn[k] = x;
				if (x > mx[k])
					mx[k] = x;
			}
	}
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
static bool average_of(const float *v, size_t nv, double out[3])
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
static float radius_of(const float *v, size_t nv, const float avg[3])
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
static float area_of(const float *v, const uint16_t *fv, size_t nf)
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
static float delta_rule(float stored, double fold, double fnew)
{
	if (fold == fnew || (isnan(fold) && isnan(fnew)))
		return stored;
	return (float)((double)stored + (fnew - fold));
}

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
static bool adjacency_of(const uint16_t *fv, size_t nf, int16_t *adj)
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

static void face_box(const float *v, const uint16_t *fv, float box[6])
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

static int32_t find_entry(const nwn_aabb *t, uint32_t off)
{
	for (uint32_t i = 0; i < t->n_entries; i++)
		if (t->entries[i].off == off)
			return (int32_t)i;
	return -1;
}

/* AABB boxes: leaves = box of their face, inner entries = union of their
 * children, recomputed only where an input changed. */
static lfs_err derive_aabb(ap *a, uint32_t node, const uint8_t *faff)
{
	nwn_mesh *me = gnode(a, node)->mesh;
	nwn_aabb *t = me->aabb;
	mesh_track *tr = &a->trk[node];
	size_t na = t->n_entries;
	if (!na)
		return LFS_OK;
	float *nb = malloc(na * 24);
	int32_t *left = malloc(na * 4), *right = malloc(na * 4);
	if (!nb || !left || !right) {
		free(nb);
		free(left);
		free(right);
		return nomem(a);
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
			face_box(tr->vold, tr->fold + 3 * (size_t)f, ob);
			uint16_t cur[3] = { me->faces[f].v[0], me->faces[f].v[1], me->faces[f].v[2] };
			face_box(me->verts, cur, nw);
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
			if (feq(ob[k], nw[k]))
				continue;
			nb[6 * i + k] = nw[k];
			e = md_f32(a, x->off + 4 * (uint32_t)k, nw[k]);
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
				e = md_u32(a, x->off + 36, pn);
		}
	}
	free(nb);
	free(left);
	free(right);
	return e;
}

static lfs_err derive_mesh(ap *a, uint32_t node)
{
	mesh_track *tr = &a->trk[node];
	if (!tr->on)
		return LFS_OK;
	nwn_mesh *me = gnode(a, node)->mesh;
	size_t nv = me->verts ? me->n_verts : 0, nf = me->faces ? me->n_faces : 0;
	bool vany = false, fany = false;
	for (size_t i = 0; i < nv; i++)
		vany |= tr->vdirty[i] != 0;
	for (size_t f = 0; f < nf; f++)
		fany |= tr->fdirty[f] != 0;
	if (!vany && !fany)
		return LFS_OK;
	lfs_err e = LFS_OK;
	uint8_t *faff = calloc(nf + 1, 1);
	uint16_t *fnew = malloc(nf * 6 + 2);
	if (!faff || !fnew) {
		free(faff);
		free(fnew);
		return nomem(a);
	}
	for (size_t f = 0; f < nf; f++)
		for (int k = 0; k < 3; k++)
			fnew[3 * f + k] = me->faces[f].v[k];
	/* face planes */
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
		float po[4], pn[4];
		bool okn = plane_of(me->verts + 3 * (size_t)w[0], me->verts + 3 * (size_t)w[1],
				    me->verts + 3 * (size_t)w[2], pn);
		bool oko = plane_of(tr->vold + 3 * (size_t)o[0], tr->vold + 3 * (size_t)o[1],
				    tr->vold + 3 * (size_t)o[2], po);
		if (!okn)
			continue; /* degenerate now: keep the stored plane */
		uint32_t fo = me->faces_arr.off + FACE_SIZE * (uint32_t)f;
		for (int k = 0; k < 4 && !e; k++)
			if (!oko || !feq(po[k], pn[k]))
				e = md_f32(a, fo + 4 * (uint32_t)k, pn[k]);
	}
	/* adjacency */
	if (!e && fany) {
		int16_t *ao = malloc(nf * 6 + 2), *an = malloc(nf * 6 + 2);
		if (!ao || !an || !adjacency_of(tr->fold, nf, ao) || !adjacency_of(fnew, nf, an))
			e = nomem(a);
		for (size_t i = 0; i < nf * 3 && !e; i++)
			if (ao[i] != an[i])
				e = md_u16(a, me->faces_arr.off + FACE_SIZE * (uint32_t)(i / 3) + 20 +
						      2 * (uint32_t)(i % 3),
					   (uint16_t)an[i]);
		free(ao);
		free(an);
	}
	if (!e && vany && nv) {
		uint32_t o = gnode(a, node)->off;
		float mn0[3], mx0[3], mn1[3], mx1[3];
		bbox_of(tr->vold, nv, me->anim, mn0, mx0);
		bbox_of(me->verts, nv, me->anim, mn1, mx1);
		for (int k = 0; k < 3 && !e; k++) {
			if (!feq(mn0[k], mn1[k]))
				e = md_f32(a, o + 0x84 + 4 * (uint32_t)k, mn1[k]);
			if (!e && !feq(mx0[k], mx1[k]))
				e = md_f32(a, o + 0x90 + 4 * (uint32_t)k, mx1[k]);
		}
		double av0[3], av1[3];
		if (!e && (!average_of(tr->vold, nv, av0) || !average_of(me->verts, nv, av1)))
			e = nomem(a);
		float oldavg[3], newavg[3];
		memcpy(oldavg, me->average, 12);
		for (int k = 0; k < 3 && !e; k++) {
			newavg[k] = delta_rule(me->average[k], av0[k], av1[k]);
			e = md_f32(a, o + 0xA0 + 4 * (uint32_t)k, newavg[k]);
		}
		if (!e) {
			float r0 = radius_of(tr->vold, nv, oldavg), r1 = radius_of(me->verts, nv, newavg);
			e = md_f32(a, o + 0x9C, delta_rule(me->radius, r0, r1));
		}
	}
	if (!e && nv && me->area != 0.0f) {
		float a0 = area_of(tr->vold, tr->fold, nf), a1 = area_of(me->verts, fnew, nf);
		e = md_f32(a, gnode(a, node)->off + 0x268, delta_rule(me->area, a0, a1));
	}
	if (!e && me->aabb && nv)
		e = derive_aabb(a, node, faff);
	free(faff);
	free(fnew);
	return e;
}

/* ---- controllers ------------------------------------------------------------ */

/* Write one key row of controller @p c: time and values as the edited text
 * gives them, compared with what the generated text showed. @p ocols = 4 when
 * the first four values are shown as axis-angle (then the quaternion is
 * rebuilt only if one of the four changed). */
static lfs_err ctrl_row(ap *a, nwn_node *n, const nwn_controller *c, uint32_t r, float gt, float et,
			const float *gv, const float *ev, unsigned ocols)
{
	uint32_t base = n->ctrl_data_arr.off;
	lfs_err e = LFS_OK;
	if (!feq(gt, et)) {
		size_t idx = (size_t)c->key_offset + r;
		n->ctrl_data[idx] = et;
		if ((e = md_f32(a, base + 4 * (uint32_t)idx, et)))
			return e;
	}
	size_t d0 = (size_t)c->data_offset + (size_t)r * c->ncols;
	unsigned k = 0;
	if (ocols == 4) {
		bool diff = false;
		for (int j = 0; j < 4; j++)
			diff |= !feq(gv[j], ev[j]);
		if (diff) {
			float q[4];
			aa_to_quat(ev, q);
			for (int j = 0; j < 4 && !e; j++) {
				n->ctrl_data[d0 + j] = q[j];
				e = md_f32(a, base + 4 * (uint32_t)(d0 + j), q[j]);
			}
		}
		k = 4;
	}
	for (; k < c->ncols && !e; k++) {
		if (feq(gv[k], ev[k]))
			continue;
		n->ctrl_data[d0 + k] = ev[k];
		e = md_f32(a, base + 4 * (uint32_t)(d0 + k), ev[k]);
	}
	return e;
}

/* ---- key count changes ------------------------------------------------------ */

/* Record a new key list for controller @p ct (node @p ni of geometry @p gi):
 * @p en rows of edited times @p et and shown values @p ev, against the @p gn
 * generated rows @p gv. Shown orientation columns (@p ocols = 4) become
 * quaternions, keeping the stored bits of a row whose text is unchanged. */
static lfs_err pend_rows(ap *a, int32_t gi, uint32_t ni, const nwn_node *n,
			 const nwn_controller *ct, uint32_t gn, const float *gv, uint32_t en,
			 const float *et, const float *ev, unsigned ocols)
{
	unsigned nc = ct->ncols;
	if (en == 0 || en > 65535)
		return lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: a controller needs 1 to 65535 keys, the edit has %u", a->file, en);
	if (a->n_pend == a->cap_pend) {
		uint32_t nc2 = a->cap_pend ? a->cap_pend * 2 : 8;
		pend *np = realloc(a->pend, (size_t)nc2 * sizeof(*np));
		if (!np)
			return nomem(a);
		a->pend = np;
		a->cap_pend = nc2;
	}
	pend *p = &a->pend[a->n_pend];
	p->t = malloc((size_t)en * sizeof(float));
	p->v = malloc(((size_t)en * nc + 1) * sizeof(float));
	if (!p->t || !p->v) {
		free(p->t);
		free(p->v);
		return nomem(a);
	}
	a->n_pend++;
	p->geom = gi;
	p->node = ni;
	p->ctrl = (uint32_t)(ct - n->ctrls);
	p->rows = en;
	memcpy(p->t, et, (size_t)en * sizeof(float));
	for (uint32_t r = 0; r < en; r++) {
		const float *e = ev + (size_t)r * nc;
		float *o = p->v + (size_t)r * nc;
		memcpy(o, e, nc * sizeof(float));
		if (ocols != 4)
			continue;
		/* a row showing the same axis-angle as a stored key (itself, or
		 * the row it was copied from) keeps that key's quaternion bits */
		uint32_t src = UINT32_MAX;
		/* candidates: the same index, the row before, the last row
		 * (bounded work even for hostile row counts) */
		uint32_t cands[3] = { r, r - 1, gn - 1 };
		for (int g = 0; g < 3 && src == UINT32_MAX; g++) {
			uint32_t cand = cands[g];
			if (cand >= gn)
				continue;
			bool same = true;
			for (int k = 0; k < 4 && same; k++)
				same = feq(gv[(size_t)cand * nc + k], e[k]);
			if (same)
				src = cand;
		}
		if (src != UINT32_MAX)
			memcpy(o, n->ctrl_data + ct->data_offset + (size_t)src * nc, 4 * sizeof(float));
		else
			aa_to_quat(e, o);
	}
	return LFS_OK;
}

/* Rebuild a node's controller data with new keys for controller @p p->ctrl,
 * in the layout every corpus file has: per controller, its times then its
 * values, controllers in order. New arrays go to @p owned. */
static lfs_err rebuild_ctrls(ap *a, nwn_node *n, const pend *p, float **owned)
{
	if (p->ctrl >= n->n_ctrls)
		return lfs_fail(a->err, LFS_ERR_CORRUPT, SIZE_MAX, NULL, "%s: controller lost", a->file);
	size_t total = 0;
	for (uint32_t k = 0; k < n->n_ctrls; k++) {
		const nwn_controller *c = &n->ctrls[k];
		size_t rows = k == p->ctrl ? p->rows : c->rows;
		total += rows * (1 + (size_t)c->ncols);
	}
	if (total > 65535)
		return lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: node '%s' would hold %zu controller floats (16-bit offsets allow 65535)",
				a->file, n->name, total);
	float *d = malloc((total + 1) * sizeof(float));
	if (!d)
		return nomem(a);
	*owned = d;
	size_t pos = 0;
	for (uint32_t k = 0; k < n->n_ctrls; k++) {
		nwn_controller *c = &n->ctrls[k];
		bool ed = k == p->ctrl;
		size_t rows = ed ? p->rows : c->rows, nv = rows * c->ncols;
		memcpy(d + pos, ed ? p->t : n->ctrl_data + c->key_offset, rows * sizeof(float));
		c->key_offset = (uint16_t)pos;
		pos += rows;
		memcpy(d + pos, ed ? p->v : n->ctrl_data + c->data_offset, nv * sizeof(float));
		c->data_offset = (uint16_t)pos;
		pos += nv;
		c->rows = (uint16_t)rows;
	}
	n->ctrl_data = d;
	n->n_ctrl_data = (uint32_t)pos;
	n->ctrl_data_arr.count = (uint32_t)pos;
	return LFS_OK;
}

/* Re-decode the patched file, apply the key count changes, re-lay it. */
static lfs_err relayout(ap *a)
{
	nwn_model *m2 = NULL;
	lfs_error derr;
	if (nwn_mdl_decode(a->img, a->n, &m2, &derr))
		return lfs_fail(a->err, LFS_ERR_CORRUPT, derr.offset, derr.structure,
				"%s: patched file does not decode: %s", a->file, derr.msg);
	float **owned = calloc(a->n_pend + 1, sizeof(*owned));
	lfs_err e = owned ? LFS_OK : nomem(a);
	for (uint32_t i = 0; i < a->n_pend && !e; i++) {
		const pend *p = &a->pend[i];
		nwn_geometry *g = p->geom < 0 ? &m2->geom
			: (uint32_t)p->geom < m2->n_anims ? &m2->anims[p->geom].geom : NULL;
		if (!g || p->node >= g->n_nodes)
			e = lfs_fail(a->err, LFS_ERR_CORRUPT, SIZE_MAX, NULL, "%s: node lost", a->file);
		else
			e = rebuild_ctrls(a, &g->nodes[p->node], p, &owned[i]);
	}
	uint8_t *out = NULL;
	size_t on = 0;
	if (!e)
		e = nwn_mdl_encode(m2, &out, &on, a->err);
	if (!e) {
		free(a->img);
		a->img = out;
		a->n = on;
		a->changed = true;
	}
	for (uint32_t i = 0; owned && i < a->n_pend; i++)
		free(owned[i]);
	free(owned);
	nwn_model_free(m2);
	return e;
}

/* ---- model.mdl: statements -------------------------------------------------- */

typedef struct nctx {
	nwn_geometry *g;
	int32_t gi;       /* -1 = model geometry, else animation index */
	uint32_t idx;     /* node index in g */
	bool anim;        /* animation geometry */
	bool model_geom;  /* g is the model geometry (mesh tracking applies) */
	const mdl_node *en;
} nctx;

static const char *stmt_key(const mdl_stmt *s)
{
	return s->kind == MDL_ST_KEYS ? s->name : s->head.tok[0].s;
}

/* Controller statement -> rows of (time, values). PLAIN = one key at time 0. */
typedef struct krows {
	uint32_t n;
	float *t, *v;
} krows;

static lfs_err ctrl_rows(ap *a, const mdl_stmt *s, unsigned nv, const char *name, krows *k)
{
	k->n = s->kind == MDL_ST_PLAIN ? 1 : s->n_rows;
	k->t = malloc(((size_t)k->n + 1) * sizeof(float));
	k->v = malloc(((size_t)k->n * nv + 1) * sizeof(float));
	if (!k->t || !k->v)
		return nomem(a);
	lfs_err e;
	if (s->kind == MDL_ST_PLAIN) {
		if (s->head.ntok != nv + 1)
			return perr(a, &s->head, s->head.ntok > nv + 1 ? nv + 1 : s->head.ntok,
				    "expected %u numbers after '%s'", nv, name);
		k->t[0] = 0.0f;
		for (unsigned j = 0; j < nv; j++)
			if ((e = tok_f(a, &s->head, 1 + j, &k->v[j])))
				return e;
		return LFS_OK;
	}
	for (uint32_t r = 0; r < s->n_rows; r++) {
		const mdl_row *row = &s->rows[r];
		if (row->ntok != nv + 1)
			return perr(a, row, row->ntok > nv + 1 ? nv + 1 : row->ntok,
				    "expected a time and %u value(s) in this '%s' key", nv, name);
		if ((e = tok_f(a, row, 0, &k->t[r])))
			return e;
		for (unsigned j = 0; j < nv; j++)
			if ((e = tok_f(a, row, 1 + j, &k->v[(size_t)r * nv + j])))
				return e;
	}
	return LFS_OK;
}

static lfs_err mdl_controller(ap *a, nctx *c, const mdl_stmt *gs, const mdl_stmt *es,
			      uint32_t occ, const char *key)
{
	nwn_node *n = &c->g->nodes[c->idx];
	const mdl_stmt *any = es ? es : gs;
	if (!gs || !es)
		return structural(a, any->head.line, any->head.tok[0].col, "controller '%s' %s in node '%s'",
				  key, gs ? "removed" : "added", n->name);
	nwn_controller *ct = NULL;
	for (uint32_t i = 0, seen = 0; i < n->n_ctrls; i++) {
		const char *nm = nwn_controller_name(n->flags, n->ctrls[i].type);
		if (nm && !strcasecmp(nm, key) && seen++ == occ) {
			ct = &n->ctrls[i];
			break;
		}
	}
	if (!ct)
		return lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s:%u:%u: controller '%s' of node '%s' cannot be matched", a->file,
				es->head.line, es->head.tok[0].col, key, n->name);
	if ((es->kind == MDL_ST_KEYS && es->bezier) != ct->bezier)
		return structural(a, es->head.line, es->head.tok[0].col,
				  "'%s' changes between key and bezierkey", key);
	bool orient = ct->type == NWN_CTRL_ORIENTATION && ct->ncols == 4;
	unsigned nv = ct->ncols;
	krows g = { 0 }, ed = { 0 };
	lfs_err e = ctrl_rows(a, gs, nv, key, &g);
	if (!e)
		e = ctrl_rows(a, es, nv, key, &ed);
	if (!e && g.n != ed.n) {
		if (!ed.n)
			e = perr(a, &es->head, 0, "'%s' needs at least one key", key);
		else
			e = pend_rows(a, c->gi, c->idx, n, ct, g.n, g.v, ed.n, ed.t, ed.v, orient ? 4 : 0);
		g.n = 0; /* nothing to patch in place */
	} else if (!e && g.n != ct->rows)
		e = lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: controller '%s' of node '%s' does not match its text", a->file, key,
			     n->name);
	for (uint32_t r = 0; r < g.n && !e; r++)
		e = ctrl_row(a, n, ct, r, g.t[r], ed.t[r], g.v + (size_t)r * nv, ed.v + (size_t)r * nv,
			     orient ? 4 : 0);
	free(g.t);
	free(g.v);
	free(ed.t);
	free(ed.v);
	return e;
}

/* Attributes: keyword, where its value lives (offset from the node header),
 * its type; `opt` = the writer leaves it out when it is 0 / empty, so a
 * missing statement means that default. */
enum atype { AT_F, AT_F3, AT_I32, AT_U8, AT_U16, AT_STR, AT_RHINT, AT_EFLAG };
typedef struct attr {
	const char *kw;
	uint16_t off;
	uint8_t type;
	uint8_t size; /* string field size; AT_EFLAG: bit */
	bool opt;
} attr;

static const attr node_attrs[] = { { "inheritcolor", 0x18, AT_I32, 0, true } };
static const attr mesh_attrs[] = {
	{ "ambient", 0xB8, AT_F3, 0, false },      { "diffuse", 0xAC, AT_F3, 0, false },
	{ "specular", 0xC4, AT_F3, 0, false },     { "shininess", 0xD0, AT_F, 0, false },
	{ "shadow", 0xD4, AT_I32, 0, false },      { "beaming", 0xD8, AT_I32, 0, false },
	{ "render", 0xDC, AT_I32, 0, false },      { "transparencyhint", 0xE0, AT_I32, 0, false },
	{ "tilefade", 0x1E8, AT_I32, 0, false },   { "rotatetexture", 0x265, AT_U8, 0, false },
	{ "lightmapped", 0x264, AT_U8, 0, false }, { "bitmap", 0xE8, AT_STR, 64, true },
	{ "texture1", 0x128, AT_STR, 64, true },   { "texture2", 0x168, AT_STR, 64, true },
	{ "materialname", 0x1A8, AT_STR, 64, true }, { "renderhint", 0xE4, AT_RHINT, 0, true },
};
static const attr dangly_attrs[] = {
	{ "displacement", 0x27C, AT_F, 0, false },
	{ "tightness", 0x280, AT_F, 0, false },
	{ "period", 0x284, AT_F, 0, false },
};
static const attr animmesh_attrs[] = { { "sampleperiod", 0x270, AT_F, 0, false } };
static const attr light_attrs[] = {
	{ "ambientonly", 0xB4, AT_I32, 0, false },   { "nDynamicType", 0xB8, AT_I32, 0, false },
	{ "affectdynamic", 0xBC, AT_I32, 0, false }, { "shadow", 0xC0, AT_I32, 0, false },
	{ "generateflare", 0xC4, AT_I32, 0, false }, { "fadingLight", 0xC8, AT_I32, 0, false },
	{ "lightpriority", 0xB0, AT_I32, 0, false }, { "flareradius", 0x70, AT_F, 0, false },
};
static const attr emitter_attrs[] = {
	{ "p2p", 0x144, AT_EFLAG, 0, false },           { "p2p_sel", 0x144, AT_EFLAG, 1, false },
	{ "affectedByWind", 0x144, AT_EFLAG, 2, false }, { "m_isTinted", 0x144, AT_EFLAG, 3, false },
	{ "bounce", 0x144, AT_EFLAG, 4, false },        { "random", 0x144, AT_EFLAG, 5, false },
	{ "inherit", 0x144, AT_EFLAG, 6, false },       { "inheritvel", 0x144, AT_EFLAG, 7, false },
	{ "inherit_local", 0x144, AT_EFLAG, 8, false }, { "splat", 0x144, AT_EFLAG, 9, false },
	{ "inherit_part", 0x144, AT_EFLAG, 10, false }, { "renderorder", 0x140, AT_U16, 0, false },
	{ "spawntype", 0x84, AT_I32, 0, false },        { "update", 0x88, AT_STR, 32, true },
	{ "render", 0xA8, AT_STR, 32, true },           { "blend", 0xC8, AT_STR, 32, true },
	{ "texture", 0xE8, AT_STR, 64, true },          { "chunkName", 0x128, AT_STR, 16, true },
	{ "xgrid", 0x7C, AT_I32, 0, false },            { "ygrid", 0x80, AT_I32, 0, false },
	{ "loop", 0x13C, AT_I32, 0, false },            { "deadspace", 0x70, AT_F, 0, false },
	{ "twosidedtex", 0x138, AT_I32, 0, false },     { "blastRadius", 0x74, AT_F, 0, false },
	{ "blastLength", 0x78, AT_F, 0, false },
};
static const attr ref_attrs[] = {
	{ "refModel", 0x70, AT_STR, 64, true },
	{ "reattachable", 0xB0, AT_I32, 0, false },
};

#define NA(t) (sizeof(t) / sizeof((t)[0]))

static const attr *find_in_attrs(const attr *t, size_t n, const char *kw)
{
	for (size_t i = 0; i < n; i++)
		if (!strcasecmp(t[i].kw, kw))
			return &t[i];
	return NULL;
}

static const attr *find_attr(const nwn_node *n, bool anim, const char *kw)
{
	const attr *r = find_in_attrs(node_attrs, NA(node_attrs), kw);
	if (r)
		return r;
	if (n->mesh && n->mesh->anim && (r = find_in_attrs(animmesh_attrs, NA(animmesh_attrs), kw)))
		return r;
	if (anim)
		return NULL;
	if (n->mesh && (r = find_in_attrs(mesh_attrs, NA(mesh_attrs), kw)))
		return r;
	if (n->mesh && n->mesh->dangly && (r = find_in_attrs(dangly_attrs, NA(dangly_attrs), kw)))
		return r;
	if (n->light && (r = find_in_attrs(light_attrs, NA(light_attrs), kw)))
		return r;
	if (n->emitter && (r = find_in_attrs(emitter_attrs, NA(emitter_attrs), kw)))
		return r;
	if (n->ref && (r = find_in_attrs(ref_attrs, NA(ref_attrs), kw)))
		return r;
	return NULL;
}

typedef struct aval {
	float f[3];
	int64_t i;
	const char *s;
} aval;

/* Interpret an attribute statement (NULL = absent: the default). */
static lfs_err attr_value(ap *a, const attr *t, const mdl_stmt *s, aval *v)
{
	memset(v, 0, sizeof(*v));
	v->s = "";
	if (!s)
		return LFS_OK;
	const mdl_row *h = &s->head;
	uint32_t want = t->type == AT_F3 ? 3 : 1;
	if (s->kind != MDL_ST_PLAIN || h->ntok != want + 1)
		return perr(a, h, h->ntok > want + 1 ? want + 1 : h->ntok,
			    "expected %u %s after '%s'", want,
			    t->type == AT_STR ? "name" : want == 1 ? "value" : "numbers", t->kw);
	switch (t->type) {
	case AT_F:
		return tok_f(a, h, 1, &v->f[0]);
	case AT_F3:
		for (uint32_t k = 0; k < 3; k++) {
			lfs_err e = tok_f(a, h, 1 + k, &v->f[k]);
			if (e)
				return e;
		}
		return LFS_OK;
	case AT_I32:
		return tok_i(a, h, 1, INT32_MIN, UINT32_MAX, &v->i);
	case AT_U8:
		return tok_i(a, h, 1, 0, 255, &v->i);
	case AT_U16:
		return tok_i(a, h, 1, 0, 65535, &v->i);
	case AT_EFLAG:
		return tok_i(a, h, 1, 0, 1, &v->i);
	case AT_RHINT:
		if (!strcasecmp(h->tok[1].s, "NormalAndSpecMapped")) {
			v->i = 2;
			return LFS_OK;
		}
		return tok_i(a, h, 1, INT32_MIN, UINT32_MAX, &v->i);
	case AT_STR:
		v->s = h->tok[1].s;
		if (strlen(v->s) >= t->size)
			return perr(a, h, 1, "'%s' holds at most %u bytes", t->kw, (unsigned)t->size - 1);
		return LFS_OK;
	}
	return LFS_OK;
}

static lfs_err mdl_attr(ap *a, uint32_t base, const attr *t, const mdl_stmt *gs,
			const mdl_stmt *es)
{
	if (gs && !es && !t->opt)
		return structural(a, 1, 1, "'%s' removed (every value model.mdl shows must stay)",
				  t->kw);
	aval gv, ev;
	lfs_err e = attr_value(a, t, gs, &gv);
	if (e)
		return lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: generated '%s' does not read back", a->file, t->kw);
	if ((e = attr_value(a, t, es, &ev)))
		return e;
	uint32_t off = base + t->off;
	switch (t->type) {
	case AT_F:
	case AT_F3:
		for (unsigned k = 0; k < (t->type == AT_F3 ? 3u : 1u) && !e; k++)
			if (!feq(gv.f[k], ev.f[k]))
				e = md_f32(a, off + 4 * k, ev.f[k]);
		return e;
	case AT_I32:
	case AT_RHINT:
		return gv.i == ev.i ? LFS_OK : md_u32(a, off, (uint32_t)ev.i);
	case AT_U8:
		return gv.i == ev.i ? LFS_OK : md_u8(a, off, (uint8_t)ev.i);
	case AT_U16:
		return gv.i == ev.i ? LFS_OK : md_u16(a, off, (uint16_t)ev.i);
	case AT_EFLAG: {
		if (gv.i == ev.i)
			return LFS_OK;
		size_t fo = a->md0 + off;
		if (fo + 4 > a->n)
			return lfs_fail(a->err, LFS_ERR_CORRUPT, fo, "emitter", "flags outside the file");
		uint32_t fl = (uint32_t)a->img[fo] | (uint32_t)a->img[fo + 1] << 8 |
			      (uint32_t)a->img[fo + 2] << 16 | (uint32_t)a->img[fo + 3] << 24;
		if (ev.i)
			fl |= 1u << t->size;
		else
			fl &= ~(1u << t->size);
		return md_u32(a, off, fl);
	}
	case AT_STR:
		return strcmp(gv.s, ev.s) ? md_str(a, off, t->size, ev.s) : LFS_OK;
	}
	return LFS_OK;
}

/* ---- model.mdl: lists ------------------------------------------------------- */

static lfs_err row_arity(ap *a, const mdl_row *r, uint32_t want, const char *kw)
{
	if (r->ntok != want)
		return perr(a, r, r->ntok > want ? want : r->ntok,
			    "expected %u values in this '%s' row, found %u", want, kw, r->ntok);
	return LFS_OK;
}

/* Compare float columns [0, k) of generated row @p g and edited row @p r; for
 * each changed column call back with the new value. */
typedef lfs_err (*fset_fn)(ap *a, void *ctx, uint32_t row, uint32_t col, float v);

static lfs_err float_rows(ap *a, const mdl_stmt *gs, const mdl_stmt *es, uint32_t k,
			  uint32_t fixed_zero_col, fset_fn fn, void *ctx)
{
	const char *kw = gs->head.tok[0].s;
	for (uint32_t r = 0; r < gs->n_rows; r++) {
		const mdl_row *g = &gs->rows[r], *e = &es->rows[r];
		if (rows_same(g, e))
			continue;
		uint32_t want = fixed_zero_col ? k + 1 : k;
		lfs_err err = row_arity(a, e, want, kw);
		if (err)
			return err;
		for (uint32_t c = 0; c < want; c++) {
			float ev;
			if ((err = tok_f(a, e, c, &ev)))
				return err;
			float gv = gtok_f(g, c);
			if (feq(gv, ev))
				continue;
			a->crow = e;
			if (c == k)
				return perr(a, e, c, "the third '%s' column is not stored: it must stay %s",
					    kw, g->tok[c].s);
			if ((err = fn(a, ctx, r, c, ev)))
				return err;
		}
	}
	return LFS_OK;
}

typedef struct lctx {
	uint32_t node;
	nwn_node *n;
	int which; /* tvert channel, etc. */
	uint32_t ptr;
} lctx;

static lfs_err set_vert_cb(ap *a, void *c, uint32_t row, uint32_t col, float v)
{
	lctx *x = c;
	return set_vert(a, x->node, row, (int)col, v);
}

static lfs_err set_tvert_cb(ap *a, void *c, uint32_t row, uint32_t col, float v)
{
	lctx *x = c;
	nwn_mesh *me = x->n->mesh;
	me->tverts[x->which][2 * (size_t)row + col] = v;
	return raw_f32(a, me->tverts_raw[x->which], 2 * (size_t)row + col, v);
}

static lfs_err set_normal_cb(ap *a, void *c, uint32_t row, uint32_t col, float v)
{
	lctx *x = c;
	nwn_mesh *me = x->n->mesh;
	me->normals[3 * (size_t)row + col] = v;
	return raw_f32(a, me->normals_raw, 3 * (size_t)row + col, v);
}

/* model-data float array at x->ptr, x->which floats per row */
static lfs_err set_mdf_cb(ap *a, void *c, uint32_t row, uint32_t col, float v)
{
	lctx *x = c;
	return md_f32(a, x->ptr + 4 * ((uint32_t)x->which * row + col), v);
}

static lfs_err set_color_cb(ap *a, void *c, uint32_t row, uint32_t col, float v)
{
	lctx *x = c;
	nwn_mesh *me = x->n->mesh;
	if (!(v >= 0.0f && v <= 1.0f))
		return perr(a, a->crow, col, "colour component %g is outside 0..1", (double)v);
	uint32_t byte = (uint32_t)lrintf(v * 255.0f);
	uint32_t cv = me->colors[row];
	cv = (cv & ~(0xFFu << (8 * col))) | (byte << (8 * col));
	me->colors[row] = cv;
	return raw_u32(a, me->colors_raw, row, cv);
}

static lfs_err list_faces(ap *a, nctx *c, const mdl_stmt *gs, const mdl_stmt *es)
{
	nwn_node *n = &c->g->nodes[c->idx];
	nwn_mesh *me = n->mesh;
	for (uint32_t r = 0; r < gs->n_rows; r++) {
		const mdl_row *g = &gs->rows[r], *e = &es->rows[r];
		if (rows_same(g, e))
			continue;
		lfs_err err = row_arity(a, e, 8, "faces");
		if (err)
			return err;
		int64_t v[8];
		for (uint32_t k = 0; k < 8; k++)
			if ((err = tok_i(a, e, k, k < 3 || (k >= 4 && k < 7) ? 0 : INT32_MIN,
					 k < 3 ? (int64_t)me->n_verts - 1 : UINT32_MAX, &v[k])))
				return err;
		bool has_tv = me->tverts[0] != NULL;
		for (uint32_t k = 4; k < 7; k++) {
			int64_t want = has_tv ? v[k - 4] : gtok_i(g, k);
			if (v[k] != want)
				return structural(a, e->line, e->tok[k].col,
						  "tvert index %lld differs from the vertex index "
						  "(the compiler would split the vertex)",
						  (long long)v[k]);
		}
		if (v[3] != gtok_i(g, 3))
			return structural(a, e->line, e->tok[3].col,
					  "smoothing groups are not stored; edit the normals list "
					  "instead");
		for (uint32_t k = 0; k < 3; k++)
			if (v[k] != gtok_i(g, k) &&
			    (err = set_face_v(a, c->idx, r, (int)k, (uint16_t)v[k])))
				return err;
		if (v[7] != gtok_i(g, 7)) {
			me->faces[r].surface_id = (uint32_t)v[7];
			if ((err = md_u32(a, me->faces_arr.off + FACE_SIZE * r + 16, (uint32_t)v[7])))
				return err;
		}
	}
	return LFS_OK;
}

static int32_t bone_index(const nwn_geometry *g, const nwn_skin *sk, const char *name)
{
	int32_t node = nwn_find_node(g, name);
	if (node < 0)
		return -2;
	for (int b = 0; b < 17; b++)
		if (sk->bone_node_numbers[b] == node)
			return b;
	return -1;
}

static lfs_err list_weights(ap *a, nctx *c, const mdl_stmt *gs, const mdl_stmt *es)
{
	nwn_node *n = &c->g->nodes[c->idx];
	nwn_skin *sk = n->mesh->skin;
	for (uint32_t r = 0; r < gs->n_rows; r++) {
		const mdl_row *g = &gs->rows[r], *e = &es->rows[r];
		if (rows_same(g, e))
			continue;
		if (e->ntok == 0 || e->ntok > 8 || (e->ntok & 1))
			return perr(a, e, e->ntok > 8 ? 8 : 0,
				    "a weights row holds 1 to 4 bone/weight pairs");
		int16_t refs[4];
		float w[4];
		uint32_t np = e->ntok / 2, lanes[4], nl = 0;
		for (uint32_t l = 0; l < 4; l++)
			if (sk->bonerefs[4 * (size_t)r + l] >= 0)
				lanes[nl++] = l;
		for (uint32_t p = 0; p < np; p++) {
			const char *bn = e->tok[2 * p].s;
			int32_t b = -1;
			if (!strncmp(bn, "?bone", 5)) {
				int64_t x;
				if (mdl_tok_int(bn + 5, &x) && x >= 0 && x < 17)
					b = (int32_t)x;
			} else {
				b = bone_index(&a->m->geom, sk, bn);
				if (b == -2)
					return perr(a, e, 2 * p, "unknown node '%.64s' in weights", bn);
			}
			if (b < 0)
				return structural(a, e->line, e->tok[2 * p].col,
						  "'%.64s' is not in this skin's bone map", bn);
			refs[p] = (int16_t)b;
			lfs_err err = tok_f(a, e, 2 * p + 1, &w[p]);
			if (err)
				return err;
		}
		/* same pair count: the same lanes; otherwise lanes 0..np-1 */
		uint32_t lane[4];
		for (uint32_t p = 0; p < 4; p++)
			lane[p] = np == nl ? (p < nl ? lanes[p] : 4) : p;
		for (uint32_t l = 0; l < 4; l++) {
			int16_t ref = -1;
			float wt = 0.0f;
			bool used = false;
			for (uint32_t p = 0; p < np; p++)
				if (lane[p] == l) {
					ref = refs[p];
					wt = w[p];
					used = true;
				}
			if (!used && np == nl) {
				ref = sk->bonerefs[4 * (size_t)r + l];
				wt = sk->weights[4 * (size_t)r + l];
			}
			lfs_err err = raw_u16(a, sk->bonerefs_raw, 4 * (size_t)r + l, (uint16_t)ref);
			if (!err && (used || np != nl || ref >= 0))
				err = raw_f32(a, sk->weights_raw, 4 * (size_t)r + l, wt);
			if (err)
				return err;
		}
	}
	return LFS_OK;
}

static lfs_err list_aabb(ap *a, nctx *c, const mdl_stmt *gs, const mdl_stmt *es)
{
	nwn_mesh *me = c->g->nodes[c->idx].mesh;
	nwn_aabb *t = me->aabb;
	if (gs->n_rows != t->n_entries)
		return lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: aabb list does not match the tree", a->file);
	for (uint32_t r = 0; r < gs->n_rows; r++) {
		const mdl_row *g = &gs->rows[r], *e = &es->rows[r];
		if (rows_same(g, e))
			continue;
		lfs_err err = row_arity(a, e, 7, "aabb");
		if (err || (err = track(a, c->idx)))
			return err;
		nwn_aabb_entry *x = &t->entries[r];
		for (uint32_t k = 0; k < 6; k++) {
			float v;
			if ((err = tok_f(a, e, k, &v)))
				return err;
			if (feq(v, gtok_f(g, k)))
				continue;
			a->trk[c->idx].aexplicit[r] = 1;
			(k < 3 ? x->bmin : x->bmax)[k % 3] = v;
			if ((err = md_f32(a, x->off + 4 * k, v)))
				return err;
		}
		int64_t leaf;
		if ((err = tok_i(a, e, 6, -1, (int64_t)me->n_faces - 1, &leaf)))
			return err;
		if (leaf != gtok_i(g, 6)) {
			if ((leaf < 0) != (x->leaf_face < 0))
				return structural(a, e->line, e->tok[6].col,
						  "turns an aabb %s into a %s", x->leaf_face < 0 ? "node" : "leaf",
						  leaf < 0 ? "node" : "leaf");
			x->leaf_face = (int32_t)leaf;
			if ((err = md_u32(a, x->off + 32, (uint32_t)leaf)))
				return err;
		}
	}
	return LFS_OK;
}

static lfs_err list_texnames(ap *a, nctx *c, const mdl_stmt *gs, const mdl_stmt *es)
{
	nwn_light *l = c->g->nodes[c->idx].light;
	for (uint32_t r = 0; r < gs->n_rows; r++) {
		const mdl_row *g = &gs->rows[r], *e = &es->rows[r];
		if (rows_same(g, e))
			continue;
		lfs_err err = row_arity(a, e, 1, "texturenames");
		if (err)
			return err;
		const char *old = l->flare_textures[r] ? l->flare_textures[r] : "";
		size_t room = strlen(old) + 1;
		const char *nw = e->tok[0].s;
		if (!strcmp(nw, "NULL") && !old[0])
			continue;
		if (strlen(nw) >= room)
			return structural(a, e->line, e->tok[0].col,
					  "flare texture name longer than the stored one (%zu bytes)",
					  room - 1);
		uint32_t p = 0;
		size_t fo = a->md0 + l->texnames_arr.off + 4 * (size_t)r;
		if (fo + 4 > a->n)
			return lfs_fail(a->err, LFS_ERR_CORRUPT, fo, "light", "texture name pointer");
		p = (uint32_t)a->img[fo] | (uint32_t)a->img[fo + 1] << 8 |
		    (uint32_t)a->img[fo + 2] << 16 | (uint32_t)a->img[fo + 3] << 24;
		if ((err = md_str(a, p, room, nw)))
			return err;
	}
	return LFS_OK;
}

static lfs_err mdl_list(ap *a, nctx *c, const mdl_stmt *gs, const mdl_stmt *es, const char *kw)
{
	nwn_node *n = &c->g->nodes[c->idx];
	const mdl_stmt *any = es ? es : gs;
	if (!gs || !es)
		return structural(a, any->head.line, any->head.tok[0].col, "list '%s' %s in node '%s'", kw,
				  gs ? "removed" : "added", n->name);
	if (gs->n_rows != es->n_rows)
		return structural(a, es->head.line, es->head.tok[0].col,
				  "'%s' of node '%s' has %u rows, the binary %u", kw, n->name,
				  es->n_rows, gs->n_rows);
	nwn_mesh *me = n->mesh;
	lctx x = { c->idx, n, 0, 0 };
	if (me && !c->anim) {
		if (!strcasecmp(kw, "verts") && c->model_geom)
			return float_rows(a, gs, es, 3, 0, set_vert_cb, &x);
		static const char *const tvk[4] = { "tverts", "tverts1", "tverts2", "tverts3" };
		for (int t = 0; t < 4; t++)
			if (!strcasecmp(kw, tvk[t]) && me->tverts[t]) {
				x.which = t;
				return float_rows(a, gs, es, 2, 1, set_tvert_cb, &x);
			}
		if (!strcasecmp(kw, "normals") && me->normals)
			return float_rows(a, gs, es, 3, 0, set_normal_cb, &x);
		if (!strcasecmp(kw, "colors") && me->colors)
			return float_rows(a, gs, es, 3, 0, set_color_cb, &x);
		if (!strcasecmp(kw, "faces") && c->model_geom)
			return list_faces(a, c, gs, es);
		if (!strcasecmp(kw, "weights") && me->skin)
			return list_weights(a, c, gs, es);
		if (!strcasecmp(kw, "constraints") && me->dangly) {
			x.which = 1;
			x.ptr = me->dangly->constraints_arr.off;
			return float_rows(a, gs, es, 1, 0, set_mdf_cb, &x);
		}
		if (!strcasecmp(kw, "aabb") && me->aabb && c->model_geom)
			return list_aabb(a, c, gs, es);
	}
	if (me && me->anim && c->anim) {
		if (!strcasecmp(kw, "animverts")) {
			x.which = 3;
			x.ptr = me->anim->anim_verts_ptr;
			return float_rows(a, gs, es, 3, 0, set_mdf_cb, &x);
		}
		if (!strcasecmp(kw, "animtverts")) {
			x.which = 2;
			x.ptr = me->anim->anim_tverts_ptr;
			return float_rows(a, gs, es, 2, 1, set_mdf_cb, &x);
		}
	}
	if (n->light && !c->anim) {
		nwn_light *l = n->light;
		if (!strcasecmp(kw, "texturenames"))
			return list_texnames(a, c, gs, es);
		x.which = 1;
		if (!strcasecmp(kw, "flaresizes")) {
			x.ptr = l->sizes_arr.off;
			return float_rows(a, gs, es, 1, 0, set_mdf_cb, &x);
		}
		if (!strcasecmp(kw, "flarepositions")) {
			x.ptr = l->positions_arr.off;
			return float_rows(a, gs, es, 1, 0, set_mdf_cb, &x);
		}
		if (!strcasecmp(kw, "flarecolorshifts")) {
			x.which = 3;
			x.ptr = l->colorshifts_arr.off;
			return float_rows(a, gs, es, 3, 0, set_mdf_cb, &x);
		}
	}
	if (stmt_same(gs, es))
		return LFS_OK;
	return lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			"%s:%u:%u: list '%s' of node '%s' cannot be edited", a->file, es->head.line,
			es->head.tok[0].col, kw, n->name);
}

/* ---- model.mdl: matching statements ----------------------------------------- */

typedef struct sref {
	const char *key;
	uint32_t idx, occ;
} sref;

static int sref_cmp(const void *x, const void *y)
{
	const sref *p = x, *q = y;
	int c = strcasecmp(p->key, q->key);
	if (c)
		return c;
	return p->idx < q->idx ? -1 : p->idx > q->idx;
}

typedef lfs_err (*pair_fn)(ap *a, void *ctx, const mdl_stmt *gs, const mdl_stmt *es, uint32_t occ);

/* Pair the statements of two lists by (keyword, occurrence), then call @p fn
 * for each pair in generated order, then for each unmatched edited one. */
static lfs_err match_stmts(ap *a, const mdl_stmt *g, uint32_t ng, const mdl_stmt *e, uint32_t ne,
			   pair_fn fn, void *ctx)
{
	sref *gs = malloc(((size_t)ng + 1) * sizeof(*gs)), *es = malloc(((size_t)ne + 1) * sizeof(*es));
	int64_t *gm = malloc(((size_t)ng + 1) * sizeof(*gm));
	uint32_t *gocc = malloc(((size_t)ng + 1) * sizeof(*gocc));
	uint8_t *eused = calloc((size_t)ne + 1, 1);
	uint32_t *eocc = malloc(((size_t)ne + 1) * sizeof(*eocc));
	lfs_err err = LFS_OK;
	if (!gs || !es || !gm || !gocc || !eused || !eocc) {
		err = nomem(a);
		goto out;
	}
	for (uint32_t i = 0; i < ng; i++)
		gs[i] = (sref){ stmt_key(&g[i]), i, 0 };
	for (uint32_t i = 0; i < ne; i++)
		es[i] = (sref){ stmt_key(&e[i]), i, 0 };
	qsort(gs, ng, sizeof(*gs), sref_cmp);
	qsort(es, ne, sizeof(*es), sref_cmp);
	for (uint32_t i = 0; i < ng; i++) {
		gs[i].occ = i && !strcasecmp(gs[i].key, gs[i - 1].key) ? gs[i - 1].occ + 1 : 0;
		gocc[gs[i].idx] = gs[i].occ;
		gm[gs[i].idx] = -1;
	}
	for (uint32_t i = 0; i < ne; i++) {
		es[i].occ = i && !strcasecmp(es[i].key, es[i - 1].key) ? es[i - 1].occ + 1 : 0;
		eocc[es[i].idx] = es[i].occ;
	}
	for (uint32_t i = 0, j = 0; i < ng && j < ne;) {
		int c = strcasecmp(gs[i].key, es[j].key);
		if (!c && gs[i].occ != es[j].occ)
			c = gs[i].occ < es[j].occ ? -1 : 1;
		if (c < 0) {
			i++;
		} else if (c > 0) {
			j++;
		} else {
			gm[gs[i].idx] = es[j].idx;
			eused[es[j].idx] = 1;
			i++;
			j++;
		}
	}
	for (uint32_t i = 0; i < ng && !err; i++)
		err = fn(a, ctx, &g[i], gm[i] >= 0 ? &e[gm[i]] : NULL, gocc[i]);
	for (uint32_t i = 0; i < ne && !err; i++)
		if (!eused[i])
			err = fn(a, ctx, NULL, &e[i], eocc[i]);
out:
	free(gs);
	free(es);
	free(gm);
	free(gocc);
	free(eused);
	free(eocc);
	return err;
}

static lfs_err unknown_stmt(ap *a, const mdl_stmt *es, const char *where)
{
	return perr(a, &es->head, 0, "unknown statement '%.40s' in %s", es->head.tok[0].s, where);
}

static lfs_err node_pair(ap *a, void *ctx, const mdl_stmt *gs, const mdl_stmt *es, uint32_t occ)
{
	nctx *c = ctx;
	nwn_node *n = &c->g->nodes[c->idx];
	const mdl_stmt *any = gs ? gs : es;
	const char *key = stmt_key(any);
	if (gs && es && stmt_same(gs, es))
		return LFS_OK;
	if (any->kind == MDL_ST_KEYS || nwn_controller_id(n->flags, key)) {
		if (!nwn_controller_id(n->flags, key))
			return es ? unknown_stmt(a, es, "this node")
				  : structural(a, 1, 1, "'%s' removed", key);
		return mdl_controller(a, c, gs, es, occ, key);
	}
	if (any->kind == MDL_ST_LIST)
		return mdl_list(a, c, gs, es, key);
	const attr *t = find_attr(n, c->anim, key);
	if (!t) {
		if (es)
			return unknown_stmt(a, es, "this node");
		return structural(a, c->en->head.line, 1, "'%s' removed from node '%s'", key, n->name);
	}
	if (occ > 0 && es)
		return perr(a, &es->head, 0, "'%s' given twice in node '%s'", key, n->name);
	if (gs && !es && !t->opt)
		return structural(a, c->en->head.line, 1, "'%s' removed from node '%s'", key, n->name);
	return mdl_attr(a, n->off, t, gs, es);
}

/* Parent index of E node @p en within E nodes @p all (-1 = NULL / root). */
static lfs_err e_parent(ap *a, const mdl_node *all, uint32_t count, const mdl_node *en, int32_t *out)
{
	*out = -1;
	if (!en->parent || !strcasecmp(en->parent, "NULL"))
		return LFS_OK;
	for (uint32_t j = 0; j < count; j++)
		if (!strcasecmp(all[j].name, en->parent)) {
			*out = (int32_t)j;
			return LFS_OK;
		}
	return perr_at(a, en->parent_line, text_col(a, en->parent_line, 1),
		       "unknown node '%.64s' in parent", en->parent);
}

static lfs_err apply_nodes(ap *a, nwn_geometry *g, int32_t gi, const mdl_node *gn,
			   const mdl_node *en, uint32_t count, bool anim)
{
	lfs_err e;
	for (uint32_t i = 0; i < count; i++) {
		nwn_node *n = &g->nodes[i];
		const mdl_node *x = &gn[i], *y = &en[i];
		if (strcasecmp(x->type, y->type))
			return structural(a, y->head.line, row_col(&y->head, 1),
					  "node '%s' changes type from %s to %s", n->name, x->type, y->type);
		int32_t ep;
		if ((e = e_parent(a, en, count, y, &ep)))
			return e;
		if (ep != n->parent)
			return structural(a, y->parent_line ? y->parent_line : y->head.line,
					  y->parent_line ? text_col(a, y->parent_line, 1) : 1,
					  "node '%s' moves to another parent", y->name);
		if (strcmp(x->name, y->name)) {
			if (strlen(y->name) >= 32)
				return perr(a, &y->head, 2, "node names hold at most 31 bytes");
			if ((e = md_str(a, n->off + 0x20, 32, y->name)))
				return e;
		}
		if (y->has_part_number && y->part_number != x->part_number) {
			if (y->part_number < INT32_MIN || y->part_number > INT32_MAX)
				return perr_at(a, y->head.line + 2, 1, "part number out of range");
			if ((e = md_u32(a, n->off + 0x1C, (uint32_t)(int32_t)y->part_number)))
				return e;
		}
		nctx c = { g, gi, i, anim, g == &a->m->geom, y };
		if ((e = match_stmts(a, x->stmts, x->n_stmts, y->stmts, y->n_stmts, node_pair, &c)))
			return e;
	}
	return LFS_OK;
}

typedef struct actx {
	nwn_anim *an;
} actx;

static lfs_err anim_pair(ap *a, void *ctx, const mdl_stmt *gs, const mdl_stmt *es, uint32_t occ)
{
	nwn_anim *an = ((actx *)ctx)->an;
	const mdl_stmt *any = gs ? gs : es;
	const char *key = stmt_key(any);
	if (gs && es && stmt_same(gs, es))
		return LFS_OK;
	uint32_t base = an->geom.off;
	if (!strcasecmp(key, "event")) {
		if (!gs || !es)
			return structural(a, any->head.line, any->head.tok[0].col, "event %s",
					  gs ? "removed" : "added");
		if (es->kind != MDL_ST_PLAIN || es->head.ntok != 3)
			return perr(a, &es->head, es->head.ntok > 3 ? 3 : es->head.ntok,
				    "expected a time and a name after 'event'");
		float t;
		lfs_err e = tok_f(a, &es->head, 1, &t);
		if (e)
			return e;
		uint32_t eo = an->events_arr.off + 36 * occ;
		if (!feq(t, gtok_f(&gs->head, 1)) && (e = md_f32(a, eo, t)))
			return e;
		const char *nm = es->head.tok[2].s;
		if (strlen(nm) >= 32)
			return perr(a, &es->head, 2, "event names hold at most 31 bytes");
		if (strcmp(nm, gs->head.tok[2].s))
			return md_str(a, eo + 4, 32, nm);
		return LFS_OK;
	}
	static const attr anim_attrs[] = {
		{ "length", 0x70, AT_F, 0, false },
		{ "transtime", 0x74, AT_F, 0, false },
		{ "animroot", 0x78, AT_STR, 64, true },
	};
	const attr *t = find_in_attrs(anim_attrs, NA(anim_attrs), key);
	if (!t) {
		if (es)
			return unknown_stmt(a, es, "this animation");
		return structural(a, 1, 1, "'%s' removed from animation '%s'", key, an->geom.name);
	}
	if (occ > 0 && es)
		return perr(a, &es->head, 0, "'%s' given twice", key);
	return mdl_attr(a, base, t, gs, es);
}

static lfs_err model_pair(ap *a, void *ctx, const mdl_stmt *gs, const mdl_stmt *es, uint32_t occ)
{
	(void)ctx;
	nwn_model *m = a->m;
	const mdl_stmt *any = gs ? gs : es;
	const char *key = stmt_key(any);
	if (gs && es && stmt_same(gs, es))
		return LFS_OK;
	if (occ > 0 && es)
		return perr(a, &es->head, 0, "'%s' given twice", key);
	lfs_err e;
	if (!strcasecmp(key, "newmodel") || !strcasecmp(key, "setsupermodel")) {
		uint32_t ai = !strcasecmp(key, "newmodel") ? 0 : 1;
		if (!es)
			return structural(a, 1, 1, "'%s' removed", key);
		if (es->kind != MDL_ST_PLAIN || es->head.ntok < ai + 2)
			return perr(a, &es->head, es->head.ntok, "expected a name after '%s'", key);
		if (es->head.ntok > ai + 2)
			return perr(a, &es->head, ai + 2, "unexpected '%.40s' after '%s'",
				    es->head.tok[ai + 2].s, key);
		const char *nv = es->head.tok[ai + 1].s;
		const char *gv = gs ? mdl_stmt_arg(gs, ai) : "";
		if (gv && !strcmp(nv, gv))
			return LFS_OK;
		if (strlen(nv) >= 64)
			return perr(a, &es->head, ai + 1, "names hold at most 63 bytes");
		return md_str(a, ai == 0 ? m->geom.off + 8 : 0xA8, 64, nv);
	}
	if (!strcasecmp(key, "beginmodelgeom") || !strcasecmp(key, "endmodelgeom") ||
	    !strcasecmp(key, "donemodel"))
		return LFS_OK; /* the model name comes from newmodel */
	if (!strcasecmp(key, "setanimationscale")) {
		static const attr t = { "setanimationscale", 0xA4, AT_F, 0, false };
		return mdl_attr(a, 0, &t, gs, es);
	}
	if (!strcasecmp(key, "classification")) {
		/* the writer prints the byte as a word or number, nothing for 0 */
		int64_t ev = 0;
		if (es) {
			if (es->kind != MDL_ST_PLAIN || es->head.ntok != 2)
				return perr(a, &es->head, es->head.ntok > 2 ? 2 : es->head.ntok,
					    "expected 1 value after 'classification'");
			const char *w = es->head.tok[1].s;
			static const char *const names[] = { "unknown", "effect", "tile", "character",
							     "door" };
			static const uint8_t vals[] = { 0, NWN_CLASS_EFFECT, NWN_CLASS_TILE,
							NWN_CLASS_CHARACTER, NWN_CLASS_DOOR };
			ev = -1;
			for (int i = 0; i < 5; i++)
				if (!strcasecmp(w, names[i]))
					ev = vals[i];
			if (ev < 0 && (!mdl_tok_int(w, &ev) || ev < 0 || ev > 255))
				return perr(a, &es->head, 1,
					    "classification is effect, tile, character, door, "
					    "unknown or 0..255");
		}
		return ev == m->classification ? LFS_OK : md_u8(a, 0x72, (uint8_t)ev);
	}
	if (!strcasecmp(key, "ignorefog")) {
		int64_t gv = gs ? 1 : 0, ev = 0;
		if (es) {
			if (es->kind != MDL_ST_PLAIN || es->head.ntok != 2)
				return perr(a, &es->head, es->head.ntok > 2 ? 2 : es->head.ntok,
					    "expected 1 value after 'ignorefog'");
			if ((e = tok_i(a, &es->head, 1, 0, 1, &ev)))
				return e;
		}
		if (gv == ev)
			return LFS_OK;
		return md_u8(a, 0x73, ev ? 0 : 1);
	}
	if (es)
		return unknown_stmt(a, es, "the model header");
	return structural(a, 1, 1, "'%s' removed", key);
}

static lfs_err apply_mdl(ap *a, const char *text, size_t tn)
{
	lfs_sb g = { 0 };
	lfs_err e = nwn_ascii_write(a->m, &g, a->err);
	if (e) {
		lfs_sb_free(&g);
		return e;
	}
	if (g.len == tn && !memcmp(g.data, text, tn)) {
		lfs_sb_free(&g);
		return LFS_OK;
	}
	mdl_doc *dg = NULL, *de = NULL;
	lfs_error gerr;
	e = mdl_parse(a->file, (const uint8_t *)g.data, g.len, &dg, &gerr);
	lfs_sb_free(&g);
	if (e) {
		return lfs_fail(a->err, e == LFS_ERR_NOMEM ? e : LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: this model's text does not read back (%s)", a->file, gerr.msg);
	}
	if ((e = mdl_parse(a->file, (const uint8_t *)text, tn, &de, a->err))) {
		mdl_doc_free(dg);
		return e;
	}
	nwn_model *m = a->m;
	if (dg->n_nodes != m->geom.n_nodes || dg->n_anims != m->n_anims) {
		e = lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: this model's text does not match its nodes", a->file);
		goto out;
	}
	if ((e = match_stmts(a, dg->stmts, dg->n_stmts, de->stmts, de->n_stmts, model_pair, NULL)))
		goto out;
	if (de->n_nodes != dg->n_nodes) {
		unsigned line = de->n_nodes ? de->nodes[de->n_nodes > dg->n_nodes ? dg->n_nodes : de->n_nodes - 1].head.line : 1;
		e = structural(a, line, 1, "the model has %u nodes, the text %u", dg->n_nodes,
			       de->n_nodes);
		goto out;
	}
	if ((e = apply_nodes(a, &m->geom, -1, dg->nodes, de->nodes, dg->n_nodes, false)))
		goto out;
	if (de->n_anims != dg->n_anims) {
		unsigned line = de->n_anims ? de->anims[de->n_anims - 1].head.line : 1;
		e = structural(a, line, 1, "the model has %u animations, the text %u", dg->n_anims,
			       de->n_anims);
		goto out;
	}
	for (uint32_t i = 0; i < dg->n_anims; i++) {
		nwn_anim *an = &m->anims[i];
		const mdl_anim *x = &dg->anims[i], *y = &de->anims[i];
		if (strcmp(x->name, y->name)) {
			if (strlen(y->name) >= 64 || !y->name[0])
				e = perr(a, &y->head, 1, "animation names hold 1 to 63 bytes");
			else
				e = md_str(a, an->geom.off + 8, 64, y->name);
			if (e)
				goto out;
		}
		actx ac = { an };
		if ((e = match_stmts(a, x->stmts, x->n_stmts, y->stmts, y->n_stmts, anim_pair, &ac)))
			goto out;
		if (x->n_nodes != an->geom.n_nodes) {
			e = lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				     "%s: animation text does not match its nodes", a->file);
			goto out;
		}
		if (y->n_nodes != x->n_nodes) {
			e = structural(a, y->head.line, 1, "animation '%s' has %u nodes, the text %u",
				       an->geom.name, x->n_nodes, y->n_nodes);
			goto out;
		}
		if ((e = apply_nodes(a, &an->geom, (int32_t)i, x->nodes, y->nodes, x->n_nodes, true)))
			goto out;
	}
out:
	mdl_doc_free(dg);
	mdl_doc_free(de);
	return e;
}

/* ---- OBJ ---------------------------------------------------------------------- */

typedef struct objdoc {
	float *v, *vt, *vn;
	uint32_t nv, nvt, nvn, cv, cvt, cvn;
	int32_t *f; /* 9 per face: v vt vn per corner, 0-based, -1 absent */
	uint32_t *fline;
	uint32_t nf, cf;
	uint32_t polygons; /* faces with more than 3 corners (split into a fan) */
} objdoc;

static void obj_free(objdoc *d)
{
	free(d->v);
	free(d->vt);
	free(d->vn);
	free(d->f);
	free(d->fline);
}

static bool grow(void **p, uint32_t *cap, uint32_t n, size_t elem)
{
	if (n < *cap)
		return true;
	if (*cap > UINT32_MAX / 4)
		return false;
	uint32_t nc = *cap ? *cap * 2 : 64;
	void *q = realloc(*p, (size_t)nc * elem);
	if (!q)
		return false;
	*p = q;
	*cap = nc;
	return true;
}

/* Tokens of one text line (space/tab separated, CR dropped). */
typedef struct tline {
	uint32_t n;
	const char *s[16];
	uint32_t len[16], col[16];
} tline;

static void split_line(const char *p, size_t len, tline *t, char sep)
{
	t->n = 0;
	size_t i = 0;
	while (i < len && t->n < 16) {
		if (sep == ' ') {
			while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
				i++;
			if (i >= len)
				break;
			size_t s = i;
			while (i < len && p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
				i++;
			t->s[t->n] = p + s;
			t->len[t->n] = (uint32_t)(i - s);
			t->col[t->n] = (uint32_t)s + 1;
			t->n++;
		} else {
			size_t s = i;
			while (i < len && p[i] != sep)
				i++;
			size_t a0 = s, b0 = i;
			while (a0 < b0 && (p[a0] == ' ' || p[a0] == '\t'))
				a0++;
			while (b0 > a0 && (p[b0 - 1] == ' ' || p[b0 - 1] == '\t' || p[b0 - 1] == '\r'))
				b0--;
			t->s[t->n] = p + a0;
			t->len[t->n] = (uint32_t)(b0 - a0);
			t->col[t->n] = (uint32_t)a0 + 1;
			t->n++;
			if (i < len)
				i++; /* skip separator */
			else
				break;
			if (i == len) { /* trailing separator: one more empty field */
				if (t->n < 16) {
					t->s[t->n] = p + i;
					t->len[t->n] = 0;
					t->col[t->n] = (uint32_t)i + 1;
					t->n++;
				}
				break;
			}
		}
	}
	if (i < len && t->n == 16)
		t->n = 17; /* too many: callers report it */
}

static bool parse_f(const char *s, uint32_t len, float *v)
{
	return len && lfs_parse_float(s, len, v);
}

static bool parse_i(const char *s, uint32_t len, int64_t *v)
{
	char b[24];
	if (!len || len >= sizeof(b))
		return false;
	memcpy(b, s, len);
	b[len] = 0;
	return mdl_tok_int(b, v);
}

static lfs_err obj_parse(ap *a, const char *file, const char *p, size_t n, objdoc *d)
{
	memset(d, 0, sizeof(*d));
	uint32_t line = 0;
	size_t pos = 0;
	while (pos < n) {
		size_t s = pos;
		while (pos < n && p[pos] != '\n')
			pos++;
		size_t len = pos - s;
		if (pos < n)
			pos++;
		line++;
		tline t;
		split_line(p + s, len, &t, ' ');
		if (!t.n || t.s[0][0] == '#')
			continue;
		if (memchr(p + s, '\0', len))
			return lfs_fail_at(a->err, file, line, 1, "NUL byte in OBJ text");
		const char *kw = t.s[0];
		uint32_t kl = t.len[0];
#define KW(x) (kl == sizeof(x) - 1 && !memcmp(kw, x, kl))
		if (KW("v") || KW("vt") || KW("vn")) {
			uint32_t want = KW("vt") ? 2 : 3;
			uint32_t got = t.n - 1;
			if (KW("vt") && got == 3)
				got = 2; /* optional w, must be 0 */
			if (t.n > 16 || got != want)
				return lfs_fail_at(a->err, file, line, t.n > 16 ? 1 : t.col[t.n - 1],
						   "expected %u numbers after '%.*s'", want, (int)kl, kw);
			float v[3];
			for (uint32_t k = 0; k + 1 < t.n; k++)
				if (!parse_f(t.s[k + 1], t.len[k + 1], &v[k]))
					return lfs_fail_at(a->err, file, line, t.col[k + 1],
							   "'%.*s' is not a number",
							   (int)(t.len[k + 1] > 40 ? 40 : t.len[k + 1]),
							   t.s[k + 1]);
			if (KW("vt") && t.n == 4 && v[2] != 0.0f)
				return lfs_fail_at(a->err, file, line, t.col[3],
						   "texture w coordinates are not stored: must be 0");
			float **arr = KW("v") ? &d->v : KW("vt") ? &d->vt : &d->vn;
			uint32_t *cnt = KW("v") ? &d->nv : KW("vt") ? &d->nvt : &d->nvn;
			uint32_t *cap = KW("v") ? &d->cv : KW("vt") ? &d->cvt : &d->cvn;
			if (!grow((void **)arr, cap, *cnt, want * sizeof(float)))
				return nomem(a);
			memcpy(*arr + (size_t)*cnt * want, v, want * sizeof(float));
			(*cnt)++;
		} else if (KW("f")) {
			if (t.n < 4)
				return lfs_fail_at(a->err, file, line, t.col[t.n - 1], "a face needs 3 corners");
			if (t.n > 16)
				return lfs_fail_at(a->err, file, line, 1, "a polygon has at most 15 corners");
			/* corners first, then a fan of triangles (0, i, i+1) */
			int32_t corner[15][3];
			uint32_t nc = t.n - 1;
			for (uint32_t c = 0; c < nc; c++) {
				tline q;
				split_line(t.s[c + 1], t.len[c + 1], &q, '/');
				if (q.n > 3 || q.n == 0)
					return lfs_fail_at(a->err, file, line, t.col[c + 1],
							   "bad face corner");
				uint32_t counts[3] = { d->nv, d->nvt, d->nvn };
				for (uint32_t k = 0; k < 3; k++) {
					int32_t *slot = &corner[c][k];
					*slot = -1;
					if (k >= q.n || (q.len[k] == 0 && k > 0))
						continue;
					int64_t x;
					if (!parse_i(q.s[k], q.len[k], &x) || x == 0)
						return lfs_fail_at(a->err, file, line,
								   t.col[c + 1] + (uint32_t)(q.s[k] - t.s[c + 1]),
								   "bad index in face corner");
					if (x < 0)
						x += (int64_t)counts[k] + 1;
					if (x < 1 || x > (int64_t)counts[k])
						return lfs_fail_at(a->err, file, line,
								   t.col[c + 1] + (uint32_t)(q.s[k] - t.s[c + 1]),
								   "index %lld out of range (1..%u)",
								   (long long)x, counts[k]);
					*slot = (int32_t)(x - 1);
				}
			}
			if (nc > 3)
				d->polygons++;
			for (uint32_t tri = 0; tri + 2 < nc; tri++) {
				if (!grow((void **)&d->f, &d->cf, d->nf, 9 * sizeof(int32_t)))
					return nomem(a);
				uint32_t *fl = realloc(d->fline, (size_t)d->cf * sizeof(uint32_t));
				if (!fl)
					return nomem(a);
				d->fline = fl; /* same capacity as f */
				const uint32_t cs[3] = { 0, tri + 1, tri + 2 };
				for (uint32_t c = 0; c < 3; c++)
					memcpy(&d->f[9 * (size_t)d->nf + 3 * c], corner[cs[c]], 3 * sizeof(int32_t));
				d->fline[d->nf] = line;
				d->nf++;
			}
		} else if (KW("o") || KW("g") || KW("s") || KW("usemtl") || KW("mtllib")) {
			continue; /* names, smoothing, materials: not stored per mesh */
		} else {
			return lfs_fail_at(a->err, file, line, 1, "unknown OBJ statement '%.*s'",
					   (int)(kl > 40 ? 40 : kl), kw);
		}
#undef KW
	}
	return LFS_OK;
}

static const char *mesh_view_node(const nwn_model *m, const char *viewpath, int32_t *idx,
				  lfs_nameset *ns)
{
	*idx = -1;
	char path[1024];
	for (uint32_t i = 0; i < m->geom.n_nodes; i++) {
		if (!m->geom.nodes[i].mesh)
			continue;
		const char *nm = lfs_nameset_add(ns, m->geom.nodes[i].name);
		if (!nm)
			return NULL;
		snprintf(path, sizeof(path), "meshes/%s.obj", nm);
		if (!strcmp(path, viewpath)) {
			*idx = (int32_t)i;
			return nm;
		}
	}
	return "";
}

static lfs_err apply_obj(ap *a, const char *text, size_t tn)
{
	nwn_model *m = a->m;
	lfs_nameset ns;
	lfs_nameset_init(&ns);
	int32_t idx;
	const char *oname = mesh_view_node(m, a->file, &idx, &ns);
	lfs_err e = LFS_OK;
	lfs_sb g = { 0 };
	objdoc dg = { 0 }, de = { 0 };
	if (!oname) {
		e = nomem(a);
		goto out;
	}
	if (idx < 0) {
		e = lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL, "%s: no such view", a->file);
		goto out;
	}
	if ((e = nwn_obj_mesh(m, (uint32_t)idx, oname, NULL, &g, a->err)))
		goto out;
	if (obj_parse(a, a->file, g.data, g.len, &dg) != LFS_OK) {
		e = lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: this mesh's OBJ does not read back", a->file);
		goto out;
	}
	if ((e = obj_parse(a, a->file, text, tn, &de)))
		goto out;
	nwn_node *n = &m->geom.nodes[idx];
	nwn_mesh *me = n->mesh;
	if (dg.nf != (me->faces ? me->n_faces : 0) || dg.nv != (me->verts ? me->n_verts : 0)) {
		e = lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: this mesh's OBJ does not show every vertex and face", a->file);
		goto out;
	}
	if (de.nv != dg.nv || de.nvt != dg.nvt || de.nvn != dg.nvn || de.nf != dg.nf) {
		e = structural(a, 1, 1,
			       "%u v / %u vt / %u vn / %u f lines, the binary has %u / %u / %u / %u",
			       de.nv, de.nvt, de.nvn, de.nf, dg.nv, dg.nvt, dg.nvn, dg.nf);
		goto out;
	}
	for (uint32_t i = 0; i < dg.nv * 3 && !e; i++)
		if (!feq(dg.v[i], de.v[i]))
			e = set_vert(a, (uint32_t)idx, i / 3, (int)(i % 3), de.v[i]);
	for (uint32_t i = 0; i < dg.nvt * 2 && !e; i++)
		if (!feq(dg.vt[i], de.vt[i])) {
			me->tverts[0][i] = de.vt[i];
			e = raw_f32(a, me->tverts_raw[0], i, de.vt[i]);
		}
	for (uint32_t i = 0; i < dg.nvn * 3 && !e; i++)
		if (!feq(dg.vn[i], de.vn[i])) {
			me->normals[i] = de.vn[i];
			e = raw_f32(a, me->normals_raw, i, de.vn[i]);
		}
	for (uint32_t f = 0; f < dg.nf && !e; f++) {
		for (uint32_t c = 0; c < 3 && !e; c++) {
			const int32_t *gc = dg.f + 9 * (size_t)f + 3 * c, *ec = de.f + 9 * (size_t)f + 3 * c;
			for (int k = 1; k < 3; k++)
				if ((gc[k] < 0) != (ec[k] < 0) || (ec[k] >= 0 && ec[k] != ec[0]))
					e = structural(a, de.fline[f], 1,
						       "face corner with separate v/vt/vn indices or a "
						       "different form (the compiler would split vertices)");
			if (!e && ec[0] != gc[0])
				e = set_face_v(a, (uint32_t)idx, f, (int)c, (uint16_t)ec[0]);
		}
	}
out:
	lfs_sb_free(&g);
	obj_free(&dg);
	obj_free(&de);
	lfs_nameset_free(&ns);
	return e;
}

/* ---- OBJ: structural edits ------------------------------------------------------ */

/* Corner key of an ASCII vertex built from an OBJ corner: position index,
 * uv source (-1 none) and normal source (-1 none, -2 computed). */
typedef struct ckey {
	int32_t v, t, n;
} ckey;

static int32_t nearest_vertex(const float *verts, uint32_t nv, const float p[3])
{
	int32_t best = -1;
	double bd = 0;
	for (uint32_t i = 0; i < nv; i++) {
		double dx = (double)verts[3 * i] - p[0], dy = (double)verts[3 * i + 1] - p[1],
		       dz = (double)verts[3 * i + 2] - p[2];
		double d = dx * dx + dy * dy + dz * dz;
		if (best < 0 || d < bd) {
			best = (int32_t)i;
			bd = d;
		}
	}
	return best;
}

/* The model.mdl text of the model with mesh node @p idx rebuilt from the
 * edited OBJ @p de (docs/nwn-compile.md "Structural edits through an OBJ"):
 * one ASCII vertex per distinct (v, vt, vn) corner (a corner a/a/a is vertex
 * a), faces in OBJ order, tvert index = vertex index. Vertex data the OBJ does
 * not show (colours, skin weights, dangly constraints, tverts1..3) comes
 * from the old vertex of that index, or for a new vertex from the nearest old
 * vertex; a new vertex without vn gets the normalised sum of its faces'
 * normals; a face keeps the surface id of the old face with the same three
 * vertex indices, else takes that of the first old face sharing a vertex,
 * else 0. */
static lfs_err obj_to_mdl(ap *a, const uint8_t *orig, size_t n, int32_t idx, const objdoc *de, lfs_sb *out)
{
	nwn_model *m = NULL;
	lfs_err e = nwn_mdl_decode(orig, n, &m, a->err);
	if (e)
		return e;
	nwn_node *node = &m->geom.nodes[idx];
	nwn_mesh *me = node->mesh;
	uint32_t onv = me->verts ? me->n_verts : 0, onf = me->faces ? me->n_faces : 0;
	size_t nc = (size_t)de->nf * 3;
	ckey *keys = malloc((nc + (size_t)de->nv + 1) * sizeof(ckey));
	uint32_t *cidx = malloc((nc + 1) * sizeof(uint32_t));
	uint32_t nk = de->nv;
	float *verts = NULL, *tv[4] = { 0 }, *nrm = NULL, *cn = NULL, *con = NULL, *wts = NULL;
	uint32_t *col = NULL;
	int16_t *brf = NULL;
	nwn_face *faces = NULL;
	uint16_t *vind = NULL;
	if (!keys || !cidx) {
		e = nomem(a);
		goto out;
	}
	if (me->anim && (me->anim->n_vert_sets || me->anim->n_tvert_sets)) {
		e = lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: adding or removing vertices or faces of an animmesh with vertex sets is not "
			     "supported (edit model.mdl)", a->file);
		goto out;
	}
	for (uint32_t i = 0; i < de->nv; i++)
		keys[i] = (ckey){ (int32_t)i, de->nvt ? (int32_t)i : -1, de->nvn ? (int32_t)i : -1 };
	for (size_t c = 0; c < nc; c++) {
		const int32_t *f = de->f + 3 * c;
		ckey k = { f[0], f[1], f[2] };
		if (k.t < 0)
			k.t = (uint32_t)k.v < de->nvt ? k.v : -1;
		if (k.n < 0)
			k.n = (uint32_t)k.v < de->nvn ? k.v : (de->nvn || me->normals ? -2 : -1);
		ckey id = keys[k.v];
		if (k.t == id.t && k.n == id.n && k.n != -2) {
			cidx[c] = (uint32_t)k.v;
			continue;
		}
		uint32_t j = de->nv;
		for (; j < nk; j++)
			if (keys[j].v == k.v && keys[j].t == k.t && keys[j].n == k.n)
				break;
		if (j == nk)
			keys[nk++] = k;
		cidx[c] = j;
	}
	if (nk > 65535) {
		e = lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: %u vertices after splitting (the binary holds at most 65535)", a->file, nk);
		goto out;
	}
	/* normals computed for corners without one: per position, the sum of the
	 * raw normals of the faces using it that way */
	cn = calloc((size_t)de->nv * 3 + 1, sizeof(float));
	verts = malloc(((size_t)nk * 3 + 1) * sizeof(float));
	faces = calloc((size_t)de->nf + 1, sizeof(nwn_face));
	vind = malloc((nc + 1) * sizeof(uint16_t));
	if (!cn || !verts || !faces || !vind) {
		e = nomem(a);
		goto out;
	}
	for (uint32_t f = 0; f < de->nf; f++) {
		const float *p0 = de->v + 3 * de->f[9 * f], *p1 = de->v + 3 * de->f[9 * f + 3],
			    *p2 = de->v + 3 * de->f[9 * f + 6];
		double u[3] = { (double)p1[0] - p0[0], (double)p1[1] - p0[1], (double)p1[2] - p0[2] };
		double w[3] = { (double)p2[0] - p1[0], (double)p2[1] - p1[1], (double)p2[2] - p1[2] };
		double x[3] = { u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0] };
		for (int c = 0; c < 3; c++)
			if (keys[cidx[3 * f + c]].n == -2)
				for (int k = 0; k < 3; k++)
					cn[3 * de->f[9 * f + 3 * c] + k] += (float)x[k];
	}
	for (uint32_t v = 0; v < de->nv; v++) {
		double l = sqrt((double)cn[3 * v] * cn[3 * v] + (double)cn[3 * v + 1] * cn[3 * v + 1] +
				(double)cn[3 * v + 2] * cn[3 * v + 2]);
		for (int k = 0; k < 3; k++)
			cn[3 * v + k] = l > 0 ? (float)(cn[3 * v + k] / l) : (k == 2 ? 1.0f : 0.0f);
	}
	bool has_tv = de->nvt || me->tverts[0];
	bool has_n = de->nvn || me->normals;
	if (has_tv && !(tv[0] = calloc((size_t)nk * 2 + 1, sizeof(float)))) {
		e = nomem(a);
		goto out;
	}
	for (int t = 1; t < 4; t++)
		if (me->tverts[t] && !(tv[t] = calloc((size_t)nk * 2 + 1, sizeof(float)))) {
			e = nomem(a);
			goto out;
		}
	if ((has_n && !(nrm = malloc(((size_t)nk * 3 + 1) * sizeof(float)))) ||
	    (me->colors && !(col = malloc(((size_t)nk + 1) * sizeof(uint32_t)))) ||
	    (me->dangly && me->dangly->constraints && !(con = calloc((size_t)nk + 1, sizeof(float)))) ||
	    (me->skin && me->skin->weights && me->skin->bonerefs &&
	     (!(wts = calloc((size_t)nk * 4 + 1, sizeof(float))) ||
	      !(brf = malloc(((size_t)nk * 4 + 1) * sizeof(int16_t)))))) {
		e = nomem(a);
		goto out;
	}
	for (uint32_t i = 0; i < nk; i++) {
		const ckey *k = &keys[i];
		memcpy(verts + 3 * (size_t)i, de->v + 3 * (size_t)k->v, 12);
		if (tv[0] && k->t >= 0 && (uint32_t)k->t < de->nvt)
			memcpy(tv[0] + 2 * (size_t)i, de->vt + 2 * (size_t)k->t, 8);
		if (nrm) {
			if (k->n >= 0 && (uint32_t)k->n < de->nvn)
				memcpy(nrm + 3 * (size_t)i, de->vn + 3 * (size_t)k->n, 12);
			else
				memcpy(nrm + 3 * (size_t)i, cn + 3 * (size_t)k->v, 12);
		}
		/* data the OBJ does not show: the old vertex of this index, or the
		 * nearest old vertex */
		int32_t sv = (uint32_t)k->v < onv ? k->v : nearest_vertex(me->verts, onv, de->v + 3 * (size_t)k->v);
		for (int t = 1; t < 4; t++)
			if (tv[t] && sv >= 0)
				memcpy(tv[t] + 2 * (size_t)i, me->tverts[t] + 2 * (size_t)sv, 8);
		if (col)
			col[i] = sv >= 0 ? me->colors[sv] : 0xFFFFFFFFu;
		if (con && sv >= 0 && (uint32_t)sv < me->dangly->constraints_arr.count)
			con[i] = me->dangly->constraints[sv];
		if (wts) {
			for (int l = 0; l < 4; l++)
				brf[4 * (size_t)i + l] = -1;
			if (sv >= 0) {
				memcpy(wts + 4 * (size_t)i, me->skin->weights + 4 * (size_t)sv, 16);
				memcpy(brf + 4 * (size_t)i, me->skin->bonerefs + 4 * (size_t)sv, 8);
			}
		}
	}
	for (uint32_t f = 0; f < de->nf; f++) {
		nwn_face *x = &faces[f];
		for (int c = 0; c < 3; c++) {
			x->v[c] = (uint16_t)cidx[3 * f + c];
			vind[3 * f + c] = x->v[c];
		}
		const int32_t o0 = de->f[9 * f], o1 = de->f[9 * f + 3], o2 = de->f[9 * f + 6];
		int32_t same = -1, share = -1;
		for (uint32_t g = 0; g < onf && same < 0; g++) {
			const uint16_t *w = me->faces[g].v;
			if (w[0] == o0 && w[1] == o1 && w[2] == o2)
				same = (int32_t)g;
			else if (share < 0)
				for (int c = 0; c < 3; c++)
					if (w[c] == o0 || w[c] == o1 || w[c] == o2)
						share = (int32_t)g;
		}
		x->surface_id = same >= 0 ? me->faces[same].surface_id : share >= 0 ? me->faces[share].surface_id : 0;
	}
	me->verts = verts;
	me->n_verts = (uint16_t)nk;
	me->tverts[0] = tv[0];
	for (int t = 1; t < 4; t++)
		me->tverts[t] = tv[t];
	me->normals = nrm;
	me->colors = col;
	me->faces = faces;
	me->n_faces = de->nf;
	if (me->dangly && me->dangly->constraints) {
		me->dangly->constraints = con;
		me->dangly->constraints_arr.count = nk;
	}
	if (wts) {
		me->skin->weights = wts;
		me->skin->bonerefs = brf;
	}
	e = nwn_ascii_write(m, out, a->err);
	/* the arrays are ours: detach them before the model is freed */
	me->verts = NULL;
	me->faces = NULL;
	me->normals = NULL;
	me->colors = NULL;
	for (int t = 0; t < 4; t++)
		me->tverts[t] = NULL;
	if (me->dangly && con)
		me->dangly->constraints = NULL;
	if (wts) {
		me->skin->weights = NULL;
		me->skin->bonerefs = NULL;
	}
out:
	free(keys);
	free(cidx);
	free(verts);
	for (int t = 0; t < 4; t++)
		free(tv[t]);
	free(nrm);
	free(cn);
	free(col);
	free(con);
	free(wts);
	free(brf);
	free(faces);
	free(vind);
	nwn_model_free(m);
	return e;
}

/* Structural edit of a mesh OBJ: the model.mdl text with that node rebuilt,
 * then the model.mdl structural path. */
static lfs_err structural_obj(ap *a, const uint8_t *orig, size_t n, const char *text, size_t tn,
			      nwn_supermodel_lookup_fn lookup, void *ctx, uint8_t **out, size_t *outn)
{
	lfs_nameset ns;
	lfs_nameset_init(&ns);
	int32_t idx;
	objdoc de = { 0 };
	lfs_sb sb = { 0 };
	const char *oname = mesh_view_node(a->m, a->file, &idx, &ns);
	lfs_err e = LFS_OK;
	if (!oname)
		e = nomem(a);
	else if (idx < 0)
		e = lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL, "%s: no such view", a->file);
	if (!e)
		e = obj_parse(a, a->file, text, tn, &de);
	if (!e)
		e = obj_to_mdl(a, orig, n, idx, &de, &sb);
	if (!e) {
		char name[600];
		snprintf(name, sizeof(name), "%s (as model.mdl)", a->file);
		e = nwn_apply_structural(orig, n, name, sb.data, sb.len, lookup, ctx, out, outn, a->err);
	}
	lfs_sb_free(&sb);
	obj_free(&de);
	lfs_nameset_free(&ns);
	return e;
}

/* ---- CSV ---------------------------------------------------------------------- */

typedef struct csvdoc {
	char header[512];
	uint32_t header_line;
	uint32_t ncols;
	float *val; /* rows * ncols */
	uint32_t *line;
	uint32_t rows, cap;
} csvdoc;

static lfs_err csv_parse(ap *a, const char *file, const char *p, size_t n, uint32_t ncols,
			 csvdoc *d)
{
	memset(d, 0, sizeof(*d));
	d->ncols = ncols;
	uint32_t ln = 0;
	size_t pos = 0;
	bool have_header = false;
	while (pos < n) {
		size_t s = pos;
		while (pos < n && p[pos] != '\n')
			pos++;
		size_t len = pos - s;
		if (pos < n)
			pos++;
		ln++;
		while (len && (p[s + len - 1] == '\r' || p[s + len - 1] == ' ' || p[s + len - 1] == '\t'))
			len--;
		if (!len)
			continue;
		if (memchr(p + s, '\0', len))
			return lfs_fail_at(a->err, file, ln, 1, "NUL byte in CSV text");
		if (!have_header) {
			size_t k = 0;
			for (size_t i = 0; i < len && k + 1 < sizeof(d->header); i++)
				if (p[s + i] != ' ' && p[s + i] != '\t')
					d->header[k++] = p[s + i];
			d->header[k] = 0;
			d->header_line = ln;
			have_header = true;
			continue;
		}
		tline t;
		split_line(p + s, len, &t, ',');
		if (t.n != ncols)
			return lfs_fail_at(a->err, file, ln, t.n > ncols && t.n <= 16 ? t.col[ncols] : (unsigned)len + 1,
					   "expected %u fields, found %s%u", ncols, t.n > 16 ? "more than " : "",
					   t.n > 16 ? 16 : t.n);
		if (!grow((void **)&d->val, &d->cap, d->rows, (size_t)ncols * sizeof(float)))
			return nomem(a);
		uint32_t *nl = realloc(d->line, (size_t)d->cap * sizeof(uint32_t));
		if (!nl)
			return nomem(a);
		d->line = nl;
		for (uint32_t k = 0; k < ncols; k++)
			if (!parse_f(t.s[k], t.len[k], &d->val[(size_t)d->rows * ncols + k]))
				return lfs_fail_at(a->err, file, ln, t.col[k], "'%.*s' is not a number",
						   (int)(t.len[k] > 40 ? 40 : t.len[k]), t.s[k]);
		d->line[d->rows++] = ln;
	}
	if (!have_header)
		return lfs_fail_at(a->err, file, 1, 1, "missing header row");
	return LFS_OK;
}

static lfs_err apply_csv(ap *a, const char *text, size_t tn)
{
	nwn_model *m = a->m;
	char path[1024];
	lfs_nameset anims;
	lfs_nameset_init(&anims);
	nwn_node *hit = NULL;
	nwn_controller *hc = NULL;
	uint32_t hit_anim = 0, hit_node = 0;
	lfs_err e = LFS_OK;
	for (uint32_t ai = 0; ai < m->n_anims && !hit && !e; ai++) {
		nwn_anim *an = &m->anims[ai];
		const char *aname = lfs_nameset_add(&anims, an->geom.name);
		if (!aname) {
			e = nomem(a);
			break;
		}
		lfs_nameset nodes;
		lfs_nameset_init(&nodes);
		for (uint32_t i = 0; i < an->geom.n_nodes && !hit && !e; i++) {
			nwn_node *n = &an->geom.nodes[i];
			if (!n->n_ctrls)
				continue;
			const char *nn = lfs_nameset_add(&nodes, n->name);
			if (!nn) {
				e = nomem(a);
				break;
			}
			for (uint32_t k = 0; k < n->n_ctrls; k++) {
				unsigned dup = 1;
				for (uint32_t j = 0; j < k; j++)
					dup += n->ctrls[j].type == n->ctrls[k].type;
				char lb[48];
				const char *label = nwn_csv_controller_label(n, &n->ctrls[k], lb, sizeof(lb));
				if (dup > 1)
					snprintf(path, sizeof(path), "anims/%s/%s.%s~%u.csv", aname, nn,
						 label, dup);
				else
					snprintf(path, sizeof(path), "anims/%s/%s.%s.csv", aname, nn, label);
				if (!strcmp(path, a->file)) {
					hit = n;
					hc = &n->ctrls[k];
					hit_anim = ai;
					hit_node = i;
					break;
				}
			}
		}
		lfs_nameset_free(&nodes);
	}
	lfs_nameset_free(&anims);
	if (e)
		return e;
	if (!hit)
		return lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL, "%s: no such view", a->file);
	lfs_sb g = { 0 };
	csvdoc dg = { 0 }, de = { 0 };
	if ((e = nwn_csv_controller(hit, hc, &g, a->err)))
		goto out;
	uint32_t ncols = 1u + hc->ncols;
	if (csv_parse(a, a->file, g.data, g.len, ncols, &dg) != LFS_OK) {
		e = lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: this controller's CSV does not read back", a->file);
		goto out;
	}
	if ((e = csv_parse(a, a->file, text, tn, ncols, &de)))
		goto out;
	if (strcasecmp(dg.header, de.header)) {
		e = lfs_fail_at(a->err, a->file, de.header_line, 1, "the header row must be '%s'",
				dg.header);
		goto out;
	}
	if (dg.rows != hc->rows) {
		e = lfs_fail(a->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: this controller's CSV does not match its keys", a->file);
		goto out;
	}
	/* orientation columns as nwn_csv.c shows them */
	unsigned nc = hc->ncols;
	bool orient = hc->type == NWN_CTRL_ORIENTATION && nc >= 4 && (hc->bezier || nc == 4);
	if (de.rows != dg.rows) {
		if (!de.rows) {
			e = lfs_fail_at(a->err, a->file, de.header_line + 1, 1,
					"a controller needs at least one key row");
			goto out;
		}
		/* split time and value columns */
		float *gt = malloc(((size_t)dg.rows + 1) * sizeof(float)), *gv = malloc(((size_t)dg.rows * nc + 1) * sizeof(float));
		float *et = malloc(((size_t)de.rows + 1) * sizeof(float)), *ev = malloc(((size_t)de.rows * nc + 1) * sizeof(float));
		if (!gt || !gv || !et || !ev)
			e = nomem(a);
		for (uint32_t r = 0; !e && r < dg.rows; r++) {
			gt[r] = dg.val[(size_t)r * ncols];
			memcpy(gv + (size_t)r * nc, dg.val + (size_t)r * ncols + 1, nc * sizeof(float));
		}
		for (uint32_t r = 0; !e && r < de.rows; r++) {
			et[r] = de.val[(size_t)r * ncols];
			memcpy(ev + (size_t)r * nc, de.val + (size_t)r * ncols + 1, nc * sizeof(float));
		}
		if (!e)
			e = pend_rows(a, (int32_t)hit_anim, hit_node, hit, hc, dg.rows, gv, de.rows, et, ev,
				      orient ? 4 : 0);
		free(gt);
		free(gv);
		free(et);
		free(ev);
		goto out;
	}
	for (uint32_t r = 0; r < dg.rows && !e; r++) {
		const float *gv = dg.val + (size_t)r * ncols, *ev = de.val + (size_t)r * ncols;
		e = ctrl_row(a, hit, hc, r, gv[0], ev[0], gv + 1, ev + 1, orient ? 4 : 0);
	}
out:
	lfs_sb_free(&g);
	free(dg.val);
	free(dg.line);
	free(de.val);
	free(de.line);
	return e;
}

/* ---- entry -------------------------------------------------------------------- */

static bool has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static bool has_suffix(const char *s, const char *x)
{
	size_t a = strlen(s), b = strlen(x);
	return a >= b && !strcmp(s + a - b, x);
}

lfs_err nwn_apply_view(const uint8_t *orig, size_t n, const char *viewpath, const char *text,
		       size_t tn, uint8_t **out, size_t *outn, lfs_error *err)
{
	return nwn_apply_view_ex(orig, n, viewpath, text, tn, NULL, NULL, out, outn, err);
}

lfs_err nwn_apply_view_ex(const uint8_t *orig, size_t n, const char *viewpath, const char *text,
			  size_t tn, nwn_supermodel_lookup_fn lookup, void *lookup_ctx, uint8_t **out,
			  size_t *outn, lfs_error *err)
{
	*out = NULL;
	*outn = 0;
	if (!viewpath)
		viewpath = "";
	if (!strcmp(viewpath, "model.obj") || !strcmp(viewpath, "model.mtl"))
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: this view is read-only (edit meshes/<node>.obj or model.mdl)",
				viewpath);
	bool is_mdl = !strcmp(viewpath, "model.mdl");
	bool is_obj = has_prefix(viewpath, "meshes/") && has_suffix(viewpath, ".obj");
	bool is_csv = has_prefix(viewpath, "anims/") && has_suffix(viewpath, ".csv");
	if (!is_mdl && !is_obj && !is_csv)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL, "%s: not a writable view",
				viewpath);
	if (tn > MDL_MAX_INPUT || (tn && !text))
		return lfs_fail_at(err, viewpath, 1, 1, "edited text too large (%zu bytes)", tn);
	nwn_model *m = NULL;
	lfs_err e = nwn_mdl_decode(orig, n, &m, err);
	if (e)
		return e;
	ap a = { .m = m, .n = n, .md0 = 12, .raw0 = 12 + (size_t)m->model_size, .file = viewpath,
		 .text = text ? text : "", .tn = tn, .err = err };
	a.img = malloc(n ? n : 1);
	a.trk = calloc(m->geom.n_nodes + 1, sizeof(*a.trk));
	if (!a.img || !a.trk) {
		e = nomem(&a);
		goto out;
	}
	memcpy(a.img, orig, n);
	if (is_mdl)
		e = apply_mdl(&a, a.text, tn);
	else if (is_obj)
		e = apply_obj(&a, a.text, tn);
	else
		e = apply_csv(&a, a.text, tn);
	if (e == LFS_ERR_UNSUPPORTED && a.hit_structural && (is_mdl || is_obj)) {
		/* nodes, vertices, faces, animations ... added or removed: compile
		 * the edited text against the old binary (nwn_apply_struct.c) */
		free(a.img);
		a.img = NULL;
		a.changed = false;
		uint8_t *res = NULL;
		size_t rn = 0;
		if (is_mdl)
			e = nwn_apply_structural(orig, n, viewpath, a.text, tn, lookup, lookup_ctx, &res, &rn, err);
		else
			e = structural_obj(&a, orig, n, a.text, tn, lookup, lookup_ctx, &res, &rn);
		if (!e) {
			a.img = res;
			a.n = rn;
		}
		goto out;
	}
	for (uint32_t i = 0; i < m->geom.n_nodes && !e; i++)
		e = derive_mesh(&a, i);
	if (!e && a.n_pend)
		e = relayout(&a);
	if (!e && a.changed) {
		/* the patched file must still decode */
		nwn_model *chk = NULL;
		lfs_error cerr;
		if (nwn_mdl_decode(a.img, a.n, &chk, &cerr) != LFS_OK)
			e = lfs_fail(err, LFS_ERR_CORRUPT, cerr.offset, cerr.structure,
				     "%s: the edited binary does not decode: %s", viewpath, cerr.msg);
		nwn_model_free(chk);
	}
out:
	if (a.trk)
		for (uint32_t i = 0; i < m->geom.n_nodes; i++)
			track_free(&a.trk[i]);
	free(a.trk);
	for (uint32_t i = 0; i < a.n_pend; i++) {
		free(a.pend[i].t);
		free(a.pend[i].v);
	}
	free(a.pend);
	nwn_model_free(m);
	if (e) {
		free(a.img);
		return e;
	}
	*out = a.img;
	*outn = a.n;
	return LFS_OK;
}
