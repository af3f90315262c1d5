/**
 * @file nwn_mdl_derive.c
 * Compiler computations (see nwn_mdl_derive.h): axis-angle quaternions and
 * the trimesh (validation, vertex normals, vertex split, faces, bounds).
 * Skins and AABB trees: nwn_mdl_derive_tree.c.
 */
#include "nwn_mdl_derive_priv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	xf ax = sx / cnt, ay = sy / cnt, az = sz / cnt;
	m->average[0] = (float)ax;
	m->average[1] = (float)ay;
	m->average[2] = (float)az;
	/* the radius from the unrounded average (docs/derived-values.md) */
	for (size_t i = 0; i < n; i++) {
		xv3 d = { (xf)pts[3 * i] - ax, (xf)pts[3 * i + 1] - ay, (xf)pts[3 * i + 2] - az };
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

/* The faces of mesh @p m from the ASCII faces of @p s: planes from the
 * ASCII positions, vertices @p fv (3 per face, after the split), adjacency
 * by ASCII vertex through the incidence lists @p in. */
static void derive_faces(nwn_mesh *m, const nwn_mesh_src *s, const incid *in, const uint16_t *fv)
{
	uint32_t nf = s->n_faces;
	for (uint32_t f = 0; f < nf; f++) {
		const nwn_src_face *sf = &s->faces[f];
		nwn_face *df = &m->faces[f];
		/* d = -n.p1 from the unrounded normal, as nwnmdlcomp's x87
		 * build keeps it (docs/derived-values.md); a zero normal stays
		 * the unnormalised cross product */
		v3 p1 = v3_at(s->verts + 3 * (size_t)sf->v[0]);
		xv3 cr = face_normal_raw(s, sf);
		xf l = xv3_len(cr);
		xv3 nx = l == 0 ? cr : (xv3){ cr.x / l, cr.y / l, cr.z / l };
		df->plane_normal[0] = (float)nx.x;
		df->plane_normal[1] = (float)nx.y;
		df->plane_normal[2] = (float)nx.z;
		if (l == 0)
			df->plane_distance = (float)-((xf)df->plane_normal[0] * p1.x + (xf)df->plane_normal[1] * p1.y +
						      (xf)df->plane_normal[2] * p1.z);
		else
			df->plane_distance = (float)-(nx.x * p1.x + nx.y * p1.y + nx.z * p1.z);
		df->surface_id = sf->surface;
		for (uint32_t k = 0; k < 3; k++) {
			df->v[k] = fv[f * 3 + k];
			int32_t v1 = sf->v[k], v2 = sf->v[(k + 1) % 3];
			df->adjacent[k] = -1;
			for (uint32_t j = in->start[v1]; j < in->start[v1 + 1]; j++) {
				uint32_t f2 = in->item[j] / 3, k2 = in->item[j] % 3;
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
}

/* The vertex sets of animmesh @p am for the split vertices @p bl (a set
 * count without its source data becomes 0). False: out of memory. */
static bool derive_anim_sets(nwn_animmesh *am, const nwn_mesh_src *s, const nwn_alloc *a, const blist *bl)
{
	uint32_t nv = bl->n;
	size_t ns = am->n_vert_sets, nts = am->n_tvert_sets;
	if (ns && s->anim_verts) {
		am->anim_verts = zalloc(a, ns * nv * 3, sizeof(float));
		if (!am->anim_verts)
			return false;
		/* vertex-major, as the reference writes them */
		float *o = am->anim_verts;
		for (uint32_t i = 0; i < nv; i++)
			for (size_t k = 0; k < ns; k++) {
				const float *p = s->anim_verts + 3 * (k * s->n_verts + (size_t)bl->v[i].vert);
				*o++ = p[0];
				*o++ = p[1];
				*o++ = p[2];
			}
	} else {
		am->n_vert_sets = 0;
	}
	if (nts && s->anim_tverts) {
		am->anim_tverts = zalloc(a, nts * nv * 2, sizeof(float));
		if (!am->anim_tverts)
			return false;
		float *o = am->anim_tverts;
		for (uint32_t i = 0; i < nv; i++)
			for (size_t k = 0; k < nts; k++) {
				int32_t tv = bl->v[i].tvert < 0 ? 0 : bl->v[i].tvert;
				const float *p = s->anim_tverts + 3 * (k * s->n_tverts[0] + (size_t)tv);
				*o++ = p[0];
				*o++ = p[1];
			}
	} else {
		am->n_tvert_sets = 0;
	}
	return true;
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
	derive_faces(m, s, &in, fv);
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
	if (node->flags == NWN_ANIMMESH && m->anim && !derive_anim_sets(m->anim, s, a, &bl)) {
		e = NOMEM(err);
		goto out;
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

