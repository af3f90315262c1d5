/**
 * @file nwn_mdl_derive.c
 * Compiler computations (see nwn_mdl_derive.h).
 */
#include "nwn_mdl_derive.h"

#include "../../common/mem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RAW_NULL 0xFFFFFFFFu

typedef struct v3 {
	float x, y, z;
} v3;

static v3 v3_at(const float *p)
{
	return (v3){ p[0], p[1], p[2] };
}
static v3 v3_sub(v3 a, v3 b)
{
	return (v3){ a.x - b.x, a.y - b.y, a.z - b.z };
}
static float v3_len(v3 a)
{
	float sq = (float)((double)a.x * a.x + (double)a.y * a.y + (double)a.z * a.z);
	return (float)sqrt(sq);
}
/* Normalise in place; a zero vector stays as it is. */
static v3 v3_norm(v3 a)
{
	float l = v3_len(a);
	if (l == 0)
		return a;
	return (v3){ a.x / l, a.y / l, a.z / l };
}
/* Extended precision, as the reference's x87 code keeps temporaries. */
typedef long double xf;
typedef struct xv3 {
	xf x, y, z;
} xv3;

static xv3 xv3_cross_sub(v3 p1, v3 p2, v3 p3, bool second_from_p1)
{
	/* (p2 - p1) x (p3 - p2)  or  (p2 - p1) x (p3 - p1) */
	v3 q = second_from_p1 ? p1 : p2;
	xf ax = (xf)p2.x - p1.x, ay = (xf)p2.y - p1.y, az = (xf)p2.z - p1.z;
	xf bx = (xf)p3.x - q.x, by = (xf)p3.y - q.y, bz = (xf)p3.z - q.z;
	return (xv3){ ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx };
}

static xf xv3_len(xv3 a)
{
	return sqrtl(a.x * a.x + a.y * a.y + a.z * a.z);
}

static v3 xv3_norm_f(xv3 a)
{
	xf l = xv3_len(a);
	if (l == 0)
		return (v3){ (float)a.x, (float)a.y, (float)a.z };
	return (v3){ (float)(a.x / l), (float)(a.y / l), (float)(a.z / l) };
}

static bool v3_eq(v3 a, v3 b)
{
	return a.x == b.x && a.y == b.y && a.z == b.z;
}

void nwn_axis_angle_to_quat(const float aa[4], float q[4])
{
	v3 axis = v3_norm((v3){ aa[0], aa[1], aa[2] });
	float half = aa[3] * 0.5f;
	float s = (float)sin(half);
	q[0] = axis.x * s;
	q[1] = axis.y * s;
	q[2] = axis.z * s;
	q[3] = (float)cos(half);
}

/* ------------------------------------------------------------- quaternions */

typedef struct quat {
	float x, y, z, w;
} quat;

static quat q_mul(quat a, quat b)
{
	return (quat){
		(float)((double)a.w * b.x - (double)a.z * b.y + (double)a.y * b.z + (double)a.x * b.w),
		(float)((double)a.z * b.x + (double)a.w * b.y - (double)a.x * b.z + (double)a.y * b.w),
		(float)(-(double)a.y * b.x + (double)a.x * b.y + (double)a.w * b.z + (double)a.z * b.w),
		(float)(-(double)a.x * b.x - (double)a.y * b.y - (double)a.z * b.z + (double)a.w * b.w),
	};
}

/* The reference compiler's vector rotation (two quaternion products with
 * the vector taken as (v, 1)); reproduced formula for formula. */
static v3 q_rotate(quat q, v3 v)
{
	quat t = {
		(float)((double)q.w * v.x - (double)q.z * v.y + (double)q.y * v.z + q.x),
		(float)((double)q.z * v.x + (double)q.w * v.y - (double)q.x * v.z + q.y),
		(float)(-(double)q.y * v.x + (double)q.x * v.y + (double)q.w * v.z + q.z),
		(float)(-(double)q.x * v.x - (double)q.y * v.y - (double)q.z * v.z + q.w),
	};
	return (v3){
		(float)(-(double)t.w * q.x + (double)t.z * q.y - (double)t.y * q.z + (double)t.x * q.w),
		(float)(-(double)t.z * q.x - (double)t.w * q.y + (double)t.x * q.z + (double)t.y * q.w),
		(float)((double)t.y * q.x - (double)t.x * q.y - (double)t.w * q.z + (double)t.z * q.w),
	};
}

/* ------------------------------------------------------------------ mesh */

typedef struct built {
	uint32_t flags;  /* bit k: tvert channel k present */
	int32_t vert;    /* ASCII vertex */
	int32_t tvert;   /* ASCII tvert (channel 0) or -1 */
	v3 pos, normal;
	float tv[4][2];
	v3 color;
	float constraint;
	bool mirror;
} built;

static bool built_eq(const built *a, const built *b)
{
	if (a->flags != b->flags || !v3_eq(a->pos, b->pos) || !v3_eq(a->normal, b->normal))
		return false;
	for (int k = 0; k < 4; k++)
		if (a->tv[k][0] != b->tv[k][0] || a->tv[k][1] != b->tv[k][1])
			return false;
	return v3_eq(a->color, b->color) && a->constraint == b->constraint && a->mirror == b->mirror;
}

typedef struct ctx {
	const nwn_mesh_src *s;
	const nwn_alloc *a;
	lfs_error *err;
	uint32_t flags;
	/* usable per-source lists after validation */
	bool faces_ok, colors_ok, constraints_ok, mirror_ok, tex_ok[4];
} ctx;

static void *zalloc(const nwn_alloc *a, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		return NULL;
	size_t n = count * size;
	return a->fn(a->ctx, n ? n : 1);
}

#define NOMEM(e) lfs_fail((e), LFS_ERR_NOMEM, SIZE_MAX, NULL, "out of memory")

static void warn(const nwn_mesh_src *s)
{
	if (s->warnings)
		(*s->warnings)++;
}

/* Validation as the compiler does it: lists too short for the faces are
 * dropped (faces themselves when verts or tverts are missing). */
static void validate(ctx *c)
{
	const nwn_mesh_src *s = c->s;
	int64_t max_v = -1, max_t = -1;
	bool neg = false;
	for (uint32_t i = 0; i < s->n_faces; i++)
		for (int k = 0; k < 3; k++) {
			if (s->faces[i].v[k] > max_v)
				max_v = s->faces[i].v[k];
			if (s->faces[i].t[k] > max_t)
				max_t = s->faces[i].t[k];
			neg |= s->faces[i].v[k] < 0;
		}
	c->faces_ok = s->n_faces > 0 && !neg && max_v < (int64_t)s->n_verts;
	if (c->faces_ok) {
		if (s->n_tverts[0] ? max_t >= (int64_t)s->n_tverts[0] : max_t > 0)
			c->faces_ok = false;
		else if (s->n_tverts[0])
			for (uint32_t i = 0; i < s->n_faces && c->faces_ok; i++)
				for (int k = 0; k < 3; k++)
					if (s->faces[i].t[k] < 0)
						c->faces_ok = false;
	}
	if (s->n_faces && !c->faces_ok)
		warn(s);
	c->colors_ok = s->colors && s->n_colors > 0 && max_v < (int64_t)s->n_colors;
	if (s->n_colors && !c->colors_ok)
		warn(s);
	c->constraints_ok = s->constraints && s->n_constraints > 0 && max_v < (int64_t)s->n_constraints;
	if (s->n_constraints && !c->constraints_ok)
		warn(s);
	c->mirror_ok = s->mirror && s->n_mirror >= s->n_faces;
	c->tex_ok[0] = s->n_tverts[0] > 0;
	for (int k = 1; k < 4; k++) {
		c->tex_ok[k] = false;
		if (!s->tverts[k] || !s->n_tverts[k])
			continue;
		const int32_t *ti = s->texindices[k];
		bool ok = true;
		if (ti && s->n_texindices[k] == s->n_faces) {
			for (uint32_t i = 0; i < 3 * s->n_faces && ok; i++)
				ok = ti[i] >= 0 && (uint32_t)ti[i] < s->n_tverts[k];
		} else {
			/* no (usable) texindicesK: use the tverts0 indices */
			for (uint32_t i = 0; i < s->n_faces && ok; i++)
				for (int j = 0; j < 3; j++)
					ok = ok && s->faces[i].t[j] >= 0 && (uint32_t)s->faces[i].t[j] < s->n_tverts[k];
		}
		c->tex_ok[k] = ok;
		if (!ok)
			warn(s);
	}
}

static xv3 face_normal_raw(const nwn_mesh_src *s, const nwn_src_face *f)
{
	v3 p1 = v3_at(s->verts + 3 * (size_t)f->v[0]);
	v3 p2 = v3_at(s->verts + 3 * (size_t)f->v[1]);
	v3 p3 = v3_at(s->verts + 3 * (size_t)f->v[2]);
	return xv3_cross_sub(p1, p2, p3, false);
}

/* Incidence: for each ASCII vertex the (face, corner) pairs in ascending
 * order, as a CSR table. */
typedef struct incid {
	uint32_t *start; /* n_verts + 1 */
	uint32_t *item;  /* face * 3 + corner */
} incid;

static bool build_incid(const nwn_mesh_src *s, incid *in)
{
	in->start = calloc((size_t)s->n_verts + 1, sizeof(uint32_t));
	in->item = malloc(((size_t)s->n_faces * 3 + 1) * sizeof(uint32_t));
	if (!in->start || !in->item)
		return false;
	for (uint32_t i = 0; i < s->n_faces; i++)
		for (int k = 0; k < 3; k++)
			in->start[s->faces[i].v[k] + 1]++;
	for (uint32_t v = 0; v < s->n_verts; v++)
		in->start[v + 1] += in->start[v];
	uint32_t *fill = malloc(((size_t)s->n_verts + 1) * sizeof(uint32_t));
	if (!fill)
		return false;
	memcpy(fill, in->start, ((size_t)s->n_verts + 1) * sizeof(uint32_t));
	for (uint32_t i = 0; i < s->n_faces; i++)
		for (uint32_t k = 0; k < 3; k++)
			in->item[fill[s->faces[i].v[k]]++] = i * 3 + k;
	free(fill);
	return true;
}

/* Per-corner normals from smoothing groups (compiler's order of summation):
 * for each corner not yet done, sum the raw face normals of all later
 * corners (same face or a face sharing a smoothing bit) on the same ASCII
 * vertex, mark them done with the new normal. */
static bool corner_normals(const nwn_mesh_src *s, const incid *in, v3 *cn)
{
	size_t nc = (size_t)s->n_faces * 3;
	int32_t *idx = malloc(nc * sizeof(int32_t));
	xv3 *fn = malloc(((size_t)s->n_faces + 1) * sizeof(xv3));
	if (!idx || !fn) {
		free(idx);
		free(fn);
		return false;
	}
	for (size_t i = 0; i < nc; i++)
		idx[i] = -1;
	for (uint32_t f = 0; f < s->n_faces; f++)
		fn[f] = face_normal_raw(s, &s->faces[f]);
	for (uint32_t f = 0; f < s->n_faces; f++) {
		for (uint32_t k = 0; k < 3; k++) {
			if (idx[f * 3 + k] != -1)
				continue;
			int32_t v = s->faces[f].v[k];
			xv3 sum = { 0, 0, 0 };
			/* faces f2 >= f in ascending order, corners ascending */
			for (uint32_t j = in->start[v]; j < in->start[v + 1]; j++) {
				uint32_t it = in->item[j];
				uint32_t f2 = it / 3;
				if (f2 < f)
					continue;
				if (f2 != f && (s->faces[f].smooth & s->faces[f2].smooth) == 0)
					continue;
				if (idx[it] != -1)
					continue;
				sum.x += fn[f2].x;
				sum.y += fn[f2].y;
				sum.z += fn[f2].z;
				idx[it] = (int32_t)(f * 3 + k);
			}
			v3 nrm = xv3_norm_f(sum);
			/* every corner assigned in this pass gets this normal */
			for (uint32_t j = in->start[v]; j < in->start[v + 1]; j++) {
				uint32_t it = in->item[j];
				if (idx[it] == (int32_t)(f * 3 + k))
					cn[it] = nrm;
			}
		}
	}
	free(idx);
	free(fn);
	return true;
}

static void build_vertex(const ctx *c, uint32_t f, uint32_t k, const v3 *cn, built *b)
{
	const nwn_mesh_src *s = c->s;
	const nwn_src_face *fc = &s->faces[f];
	memset(b, 0, sizeof(*b));
	b->mirror = c->mirror_ok && s->mirror[f] != 0;
	b->vert = fc->v[k];
	b->tvert = -1;
	b->pos = v3_at(s->verts + 3 * (size_t)fc->v[k]);
	b->normal = cn[f * 3 + k];
	for (int t = 0; t < 4; t++) {
		if (!c->tex_ok[t])
			continue;
		int32_t n;
		if (t == 0) {
			n = fc->t[k];
			b->tvert = n;
		} else if (s->texindices[t] && s->n_texindices[t] == s->n_faces) {
			n = s->texindices[t][f * 3 + k];
		} else {
			n = fc->t[k];
		}
		b->tv[t][0] = s->tverts[t][3 * (size_t)n];
		b->tv[t][1] = s->tverts[t][3 * (size_t)n + 1];
		b->flags |= 1u << t;
	}
	if (c->colors_ok && (c->flags == NWN_TRIMESH || c->flags == NWN_AABB || c->flags == NWN_ANIMMESH))
		b->color = v3_at(s->colors + 3 * (size_t)fc->v[k]);
	else
		b->color = (v3){ 1, 1, 1 };
	b->constraint = 0;
	if (c->flags == NWN_DANGLYMESH && c->constraints_ok)
		b->constraint = s->constraints[fc->v[k]];
}

/* Growable list of built vertices. */
typedef struct blist {
	built *v;
	uint32_t n, cap;
} blist;

static bool blist_add(blist *l, const built *b)
{
	if (!lfs_grow32((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
		return false;
	l->v[l->n++] = *b;
	return true;
}

/* Hash of a built vertex by position (equal vertices have equal positions;
 * -0 and +0 hash alike). */
static uint32_t pos_hash(v3 p)
{
	float f[3] = { p.x == 0 ? 0 : p.x, p.y == 0 ? 0 : p.y, p.z == 0 ? 0 : p.z };
	uint32_t h = 2166136261u;
	const uint8_t *b = (const uint8_t *)f;
	for (int i = 0; i < 12; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* Vertex splitting [N §3.4]. Trimesh/aabb: a corner reuses a vertex only
 * from the first earlier face that shares at least two equal vertices with
 * this face (the reference's search); other mesh types: the first equal
 * vertex anywhere. */
static lfs_err split_vertices(ctx *c, const v3 *cn, blist *out, uint16_t *fv)
{
	const nwn_mesh_src *s = c->s;
	bool face_style = c->flags == NWN_TRIMESH || c->flags == NWN_AABB;
	lfs_err e = LFS_OK;
	/* hash: position -> list of (face) for face style, (vertex) otherwise */
	uint32_t hsize = 1;
	while (hsize < s->n_faces * 4u + 16)
		hsize <<= 1;
	uint32_t *head = malloc((size_t)hsize * sizeof(uint32_t));
	size_t ncap = (size_t)s->n_faces * 3 + 1;
	uint32_t *next = malloc(ncap * sizeof(uint32_t));
	uint32_t *val = malloc(ncap * sizeof(uint32_t));
	uint32_t *cand = malloc(ncap * sizeof(uint32_t));
	if (!head || !next || !val || !cand) {
		e = NOMEM(c->err);
		goto out;
	}
	memset(head, 0xFF, (size_t)hsize * sizeof(uint32_t));
	uint32_t nent = 0;
	for (uint32_t f = 0; f < s->n_faces; f++) {
		built b[3];
		for (uint32_t k = 0; k < 3; k++)
			build_vertex(c, f, k, cn, &b[k]);
		if (face_style) {
			/* earlier faces having a vertex at one of our positions, ascending */
			uint32_t nc = 0;
			for (uint32_t k = 0; k < 3; k++) {
				uint32_t h = pos_hash(b[k].pos) & (hsize - 1);
				for (uint32_t i = head[h]; i != 0xFFFFFFFFu; i = next[i])
					cand[nc++] = val[i];
			}
			/* sort + unique (small lists) */
			for (uint32_t i = 1; i < nc; i++) {
				uint32_t x = cand[i], j = i;
				while (j > 0 && cand[j - 1] > x) {
					cand[j] = cand[j - 1];
					j--;
				}
				cand[j] = x;
			}
			int32_t located[3] = { -1, -1, -1 };
			int count = 0;
			uint32_t prev = 0xFFFFFFFFu;
			for (uint32_t i = 0; i < nc; i++) {
				uint32_t f2 = cand[i];
				if (f2 == prev)
					continue;
				prev = f2;
				count = 0;
				for (uint32_t k = 0; k < 3; k++) {
					located[k] = -1;
					for (uint32_t k2 = 0; k2 < 3; k2++) {
						uint16_t vi = fv[f2 * 3 + k2];
						if (built_eq(&out->v[vi], &b[k])) {
							count++;
							located[k] = vi;
							break;
						}
					}
				}
				if (count > 1)
					break;
			}
			for (uint32_t k = 0; k < 3; k++) {
				if (located[k] == -1 || count < 2) {
					if (out->n >= 65535) {
						e = lfs_fail(c->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "mesh",
							     "more than 65535 vertices after splitting");
						goto out;
					}
					fv[f * 3 + k] = (uint16_t)out->n;
					if (!blist_add(out, &b[k])) {
						e = NOMEM(c->err);
						goto out;
					}
				} else {
					fv[f * 3 + k] = (uint16_t)located[k];
				}
			}
			/* index this face under its three positions */
			for (uint32_t k = 0; k < 3; k++) {
				uint32_t h = pos_hash(b[k].pos) & (hsize - 1);
				if (head[h] != 0xFFFFFFFFu && val[head[h]] == f)
					continue;
				val[nent] = f;
				next[nent] = head[h];
				head[h] = nent++;
			}
		} else {
			for (uint32_t k = 0; k < 3; k++) {
				uint32_t h = pos_hash(b[k].pos) & (hsize - 1);
				int32_t found = -1;
				/* lowest equal index: scan the chain (newest first) */
				for (uint32_t i = head[h]; i != 0xFFFFFFFFu; i = next[i])
					if (built_eq(&out->v[val[i]], &b[k]) && (found < 0 || (int32_t)val[i] < found))
						found = (int32_t)val[i];
				if (found < 0) {
					if (out->n >= 65535) {
						e = lfs_fail(c->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "mesh",
							     "more than 65535 vertices after splitting");
						goto out;
					}
					found = (int32_t)out->n;
					if (!blist_add(out, &b[k])) {
						e = NOMEM(c->err);
						goto out;
					}
					val[nent] = (uint32_t)found;
					next[nent] = head[h];
					head[h] = nent++;
				}
				fv[f * 3 + k] = (uint16_t)found;
			}
		}
	}
out:
	free(head);
	free(next);
	free(val);
	free(cand);
	return e;
}

static void bounds_from(nwn_mesh *m, const float *pts, size_t n)
{
	/* the reference accumulates in x87 registers: extended precision */
	long double sx = 0, sy = 0, sz = 0;
	nwn_bbox_extend(pts, n, m->bmin, m->bmax);
	for (size_t i = 0; i < n; i++) {
		const float *p = pts + 3 * i;
		sx += p[0];
		sy += p[1];
		sz += p[2];
	}
	volatile float cnt = (float)n; /* 0 verts: 0/0 = NaN at run time, as the compiler */
	m->average[0] = (float)(sx / cnt);
	m->average[1] = (float)(sy / cnt);
	m->average[2] = (float)(sz / cnt);
	for (size_t i = 0; i < n; i++) {
		xv3 d = { (xf)pts[3 * i] - m->average[0], (xf)pts[3 * i + 1] - m->average[1],
			  (xf)pts[3 * i + 2] - m->average[2] };
		float l = (float)xv3_len(d);
		if (m->radius < l)
			m->radius = l;
	}
}

static float mesh_area(const nwn_mesh *m)
{
	float r = 0;
	for (uint32_t i = 0; i < m->n_faces; i++) {
		const nwn_face *f = &m->faces[i];
		v3 p1 = v3_at(m->verts + 3 * (size_t)f->v[0]);
		v3 p2 = v3_at(m->verts + 3 * (size_t)f->v[1]);
		v3 p3 = v3_at(m->verts + 3 * (size_t)f->v[2]);
		r = (float)(r + xv3_len(xv3_cross_sub(p1, p2, p3, true)) * 0.5L);
	}
	return r;
}

lfs_err nwn_derive_mesh(nwn_node *node, const nwn_mesh_src *s, const nwn_alloc *a, uint32_t **split_src,
			lfs_error *err)
{
	nwn_mesh *m = node->mesh;
	ctx c = { .s = s, .a = a, .err = err, .flags = node->flags };
	*split_src = NULL;
	validate(&c);

	/* bounds, average, radius over the ASCII vertices */
	bounds_from(m, s->verts, s->verts ? s->n_verts : 0);

	if (node->flags == NWN_ANIMMESH && m->anim) {
		nwn_animmesh *am = m->anim;
		if (s->n_verts)
			am->n_vert_sets = s->n_anim_verts / s->n_verts;
		if (s->n_tverts[0])
			am->n_tvert_sets = s->n_anim_tverts / s->n_tverts[0];
		nwn_bbox_extend(s->anim_verts, s->n_anim_verts, m->bmin, m->bmax);
	}
	if (!c.faces_ok)
		return LFS_OK;

	lfs_err e = LFS_OK;
	incid in = { 0 };
	v3 *cn = malloc((size_t)s->n_faces * 3 * sizeof(v3));
	uint16_t *fv = malloc((size_t)s->n_faces * 3 * sizeof(uint16_t));
	blist bl = { 0 };
	if (!cn || !fv || !build_incid(s, &in)) {
		e = NOMEM(err);
		goto out;
	}
	if (s->normals && s->n_normals >= s->n_verts) {
		for (uint32_t f = 0; f < s->n_faces; f++)
			for (uint32_t k = 0; k < 3; k++)
				cn[f * 3 + k] = v3_at(s->normals + 3 * (size_t)s->faces[f].v[k]);
	} else if (!corner_normals(s, &in, cn)) {
		e = NOMEM(err);
		goto out;
	}
	if ((e = split_vertices(&c, cn, &bl, fv)))
		goto out;

	uint32_t nv = bl.n, nf = s->n_faces;
	m->n_verts = (uint16_t)nv;
	m->n_faces = nf;
	m->faces = zalloc(a, nf, sizeof(nwn_face));
	m->verts = zalloc(a, (size_t)nv * 3, sizeof(float));
	m->normals = zalloc(a, (size_t)nv * 3, sizeof(float));
	m->vindices = zalloc(a, (size_t)nf * 3, sizeof(uint16_t));
	m->vindex_counts = zalloc(a, 1, sizeof(uint32_t));
	m->vindex_offsets = zalloc(a, 1, sizeof(uint32_t));
	*split_src = zalloc(a, nv, sizeof(uint32_t));
	if (!m->faces || !m->verts || !m->normals || !m->vindices || !m->vindex_counts ||
	    !m->vindex_offsets || !*split_src) {
		e = NOMEM(err);
		goto out;
	}
	/* faces: planes from the ASCII positions, adjacency by ASCII vertex */
	for (uint32_t f = 0; f < nf; f++) {
		const nwn_src_face *sf = &s->faces[f];
		nwn_face *df = &m->faces[f];
		v3 p1 = v3_at(s->verts + 3 * (size_t)sf->v[0]);
		v3 n = xv3_norm_f(face_normal_raw(s, sf));
		df->plane_normal[0] = n.x;
		df->plane_normal[1] = n.y;
		df->plane_normal[2] = n.z;
		df->plane_distance = (float)-((xf)n.x * p1.x + (xf)n.y * p1.y + (xf)n.z * p1.z);
		df->surface_id = sf->surface;
		for (uint32_t k = 0; k < 3; k++) {
			df->v[k] = fv[f * 3 + k];
			int32_t v1 = sf->v[k], v2 = sf->v[(k + 1) % 3];
			df->adjacent[k] = -1;
			for (uint32_t j = in.start[v1]; j < in.start[v1 + 1]; j++) {
				uint32_t f2 = in.item[j] / 3, k2 = in.item[j] % 3;
				if (f2 == f)
					continue;
				const nwn_src_face *o = &s->faces[f2];
				if (o->v[(k2 + 1) % 3] == v2 || o->v[(k2 + 2) % 3] == v2) {
					df->adjacent[k] = (int16_t)f2;
					break;
				}
			}
		}
		for (uint32_t k = 0; k < 3; k++)
			m->vindices[f * 3 + k] = fv[f * 3 + k];
	}
	/* the incidence lists are sorted by (face, corner); the first match in
	 * face order is what the reference finds, except that a face listed
	 * twice under v1 (repeated vertex) is visited once per corner: same face */
	m->n_vindices = nf * 3;
	m->vindex_counts[0] = nf * 3;
	m->vindex_count_arr.count = m->vindex_count_arr.alloc = 1;
	m->vindex_offset_arr.count = m->vindex_offset_arr.alloc = 1;
	m->triangle_mode = 3;
	m->strip_raw = RAW_NULL;
	m->strip_count = 0;

	uint32_t tflags = nv ? bl.v[0].flags : 0;
	for (int t = 0; t < 4; t++)
		if (tflags & (1u << t)) {
			m->tverts[t] = zalloc(a, (size_t)nv * 2, sizeof(float));
			if (!m->tverts[t]) {
				e = NOMEM(err);
				goto out;
			}
			m->n_textures++;
		}
	bool colored = node->flags == NWN_TRIMESH || node->flags == NWN_AABB;
	if (colored && !(m->colors = zalloc(a, nv, sizeof(uint32_t)))) {
		e = NOMEM(err);
		goto out;
	}
	for (uint32_t i = 0; i < nv; i++) {
		const built *b = &bl.v[i];
		(*split_src)[i] = (uint32_t)b->vert;
		for (int t = 0; t < 4; t++)
			if (m->tverts[t]) {
				m->tverts[t][2 * i] = b->tv[t][0];
				m->tverts[t][2 * i + 1] = b->tv[t][1];
			}
		m->verts[3 * i] = b->pos.x;
		m->verts[3 * i + 1] = b->pos.y;
		m->verts[3 * i + 2] = b->pos.z;
		m->normals[3 * i] = b->normal.x;
		m->normals[3 * i + 1] = b->normal.y;
		m->normals[3 * i + 2] = b->normal.z;
		if (m->colors) {
			uint32_t rgb = 0;
			float col[3] = { b->color.x, b->color.y, b->color.z };
			for (int k = 0; k < 3; k++) {
				double d = (double)col[k] * 255.0 + 0.5;
				int32_t iv = (d > 2147483647.0 || d < -2147483648.0 || d != d) ? 0 : (int32_t)d;
				rgb |= (uint32_t)(uint8_t)iv << (8 * k);
			}
			m->colors[i] = rgb | 0xFF000000u;
		}
	}
	if (node->flags == NWN_ANIMMESH && m->anim) {
		nwn_animmesh *am = m->anim;
		size_t ns = am->n_vert_sets, nts = am->n_tvert_sets;
		if (ns && s->anim_verts) {
			am->anim_verts = zalloc(a, ns * nv * 3, sizeof(float));
			if (!am->anim_verts) {
				e = NOMEM(err);
				goto out;
			}
			/* vertex-major, as the reference writes them */
			float *o = am->anim_verts;
			for (uint32_t i = 0; i < nv; i++)
				for (size_t k = 0; k < ns; k++) {
					const float *p = s->anim_verts + 3 * (k * s->n_verts + (size_t)bl.v[i].vert);
					*o++ = p[0];
					*o++ = p[1];
					*o++ = p[2];
				}
		} else {
			am->n_vert_sets = 0;
		}
		if (nts && s->anim_tverts) {
			am->anim_tverts = zalloc(a, nts * nv * 2, sizeof(float));
			if (!am->anim_tverts) {
				e = NOMEM(err);
				goto out;
			}
			float *o = am->anim_tverts;
			for (uint32_t i = 0; i < nv; i++)
				for (size_t k = 0; k < nts; k++) {
					int32_t tv = bl.v[i].tvert < 0 ? 0 : bl.v[i].tvert;
					const float *p = s->anim_tverts + 3 * (k * s->n_tverts[0] + (size_t)tv);
					*o++ = p[0];
					*o++ = p[1];
				}
		} else {
			am->n_tvert_sets = 0;
		}
	}
	if (node->flags == NWN_DANGLYMESH && m->dangly) {
		m->dangly->constraints = zalloc(a, nv, sizeof(float));
		if (!m->dangly->constraints) {
			e = NOMEM(err);
			goto out;
		}
		for (uint32_t i = 0; i < nv; i++)
			m->dangly->constraints[i] = bl.v[i].constraint;
		m->dangly->constraints_arr.count = m->dangly->constraints_arr.alloc = nv;
	}
	m->faces_arr.count = m->faces_arr.alloc = nf;
	if (colored)
		m->area = mesh_area(m);
out:
	free(cn);
	free(fv);
	free(bl.v);
	free(in.start);
	free(in.item);
	return e;
}

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
				if (total >= 17)
					return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "skin",
							"skin '%s' uses more than 17 bones (the binary's bone table holds 17)",
							sn->name);
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
