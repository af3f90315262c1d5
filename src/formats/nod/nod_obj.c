/**
 * @file nod_obj.c
 * OBJ/MTL views of a NOD model (docs/formats/nod.md): the MTL writer, and
 * the NOD mapping of the OBJ views onto mesh groups (the OBJ syntax itself
 * is obj.h's: writers lfs_obj_write_*, reader lfs_obj_read with NOD's rules).
 */
#include "nod_views.h"

#include "common/mem.h"
#include "text/obj.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- MTL -------------------------------------------------------------------- */

lfs_err nod_mtl_names(const nod_model *m, lfs_nameset *set, const char **mat_names,
		      const char **untextured, lfs_error *err)
{
	char raw[NOD_NAME_SIZE + 1];
	for (uint32_t i = 0; i < m->n_materials; i++) {
		size_t l = nod_name_len(&m->materials[i]);
		memcpy(raw, m->materials[i].raw, l);
		raw[l] = 0;
		if (!(mat_names[i] = lfs_nameset_add(set, raw)))
			return lfs_nomem(err, "views");
	}
	*untextured = NULL;
	for (uint32_t g = 0; g < m->n_groups; g++)
		if (m->groups[g].material < 0 || (uint32_t)m->groups[g].material >= m->n_materials) {
			if (!(*untextured = lfs_nameset_add(set, "untextured")))
				return lfs_nomem(err, "views");
			break;
		}
	return LFS_OK;
}

lfs_err nod_mtl_write(const nod_model *m, const lfs_view_opts *opts, const char **mat_names,
		      const char *untextured, lfs_sb *sb, lfs_error *err)
{
	lfs_sb_puts(sb, "# legacyfs: materials of this NOD model (see docs/formats/nod.md)\n"
			"# a NOD material name is the stem of its texture file\n");
	char raw[NOD_NAME_SIZE + 1], path[1024];
	for (uint32_t i = 0; i < m->n_materials; i++) {
		size_t l = nod_name_len(&m->materials[i]);
		memcpy(raw, m->materials[i].raw, l);
		raw[l] = 0;
		lfs_sb_printf(sb, "\nnewmtl %s\nKa 1 1 1\nKd 1 1 1\nKs 0 0 0\nd 1\nillum 1\n",
			      mat_names[i]);
		if (opts && opts->texture_lookup &&
		    opts->texture_lookup(opts->texture_ctx, raw, path, sizeof(path)))
			lfs_sb_printf(sb, "map_Kd %s\n", path);
	}
	if (untextured)
		lfs_sb_printf(sb, "\nnewmtl %s\nKa 1 1 1\nKd 0.8 0.8 0.8\nKs 0 0 0\nd 1\nillum 1\n",
			      untextured);
	return lfs_sb_ok(sb) ? LFS_OK : lfs_nomem(err, "views");
}

/* ---- OBJ writers ------------------------------------------------------------ */

static const char *group_mat(const nod_model *m, uint32_t g, const char **mat_names,
			     const char *untextured)
{
	int32_t mi = m->groups[g].material;
	if (mi >= 0 && (uint32_t)mi < m->n_materials)
		return mat_names[mi];
	return untextured;
}

/* v / vt / vn lines of group @p g, then usemtl, s and f lines; OBJ indices
 * start at @p base + 1. */
static void group_body(const nod_model *m, uint32_t g, size_t base, const char **mat_names,
		       const char *untextured, lfs_sb *o)
{
	const nod_group *gr = &m->groups[g];
	const nod_vertex *vs = m->verts + gr->first_vert;
	for (uint32_t i = 0; i < gr->n_verts; i++)
		lfs_obj_write_v(o, vs[i].pos);
	for (uint32_t i = 0; i < gr->n_verts; i++)
		lfs_obj_write_vt(o, vs[i].uv[0], 1.0f - vs[i].uv[1]);
	for (uint32_t i = 0; i < gr->n_verts; i++)
		lfs_obj_write_vn(o, vs[i].normal);
	const char *mt = group_mat(m, g, mat_names, untextured);
	if (mt)
		lfs_obj_write_stmt(o, "usemtl", mt);
	lfs_obj_write_stmt(o, "s", "off");
	size_t bad = 0;
	const nod_face *fs = m->faces + gr->first_face;
	for (uint32_t i = 0; i < gr->n_faces; i++) {
		const uint16_t *f = fs[i].v;
		if (f[0] >= gr->n_verts || f[1] >= gr->n_verts || f[2] >= gr->n_verts) {
			lfs_sb_printf(o, "# face %u left out: local indices %u %u %u, group has %u vertices\n",
				      (unsigned)i, f[0], f[1], f[2], (unsigned)gr->n_verts);
			bad++;
			continue;
		}
		size_t x[3] = { base + f[0], base + f[1], base + f[2] };
		lfs_obj_write_f(o, 3, x, x, x);
	}
	if (bad)
		lfs_sb_printf(o, "# %zu faces left out: vertex index out of range (damaged file)\n", bad);
}

lfs_err nod_obj_group_write(const nod_model *m, uint32_t g, const char **names,
			    const char **mat_names, const char *untextured, lfs_sb *o,
			    lfs_error *err)
{
	const nod_group *gr = &m->groups[g];
	lfs_sb_printf(o, "# legacyfs: NOD mesh group %u (meshes/%s.obj), model space, rest pose, Z up\n",
		      (unsigned)g, names[g]);
	lfs_sb_printf(o, "# %u vertices, %u faces; vt v = 1 - stored v; weights and bones in model.txt\n",
		      (unsigned)gr->n_verts, (unsigned)gr->n_faces);
	lfs_obj_write_stmt(o, "mtllib", "../model.mtl");
	lfs_obj_write_stmt(o, "o", names[g]);
	lfs_obj_write_stmt(o, "g", names[g]);
	group_body(m, g, 0, mat_names, untextured, o);
	return lfs_sb_ok(o) ? LFS_OK : lfs_nomem(err, "views");
}

lfs_err nod_obj_model_write(const nod_model *m, const char **names, const char **mat_names,
			    const char *untextured, lfs_sb *o, lfs_error *err)
{
	lfs_sb_puts(o, "# legacyfs: every mesh group of this NOD model, model space, rest pose, Z up\n");
	lfs_sb_printf(o, "# %u groups, %u vertices, %u faces; vt v = 1 - stored v\n",
		      (unsigned)m->n_groups, (unsigned)m->n_verts, (unsigned)m->n_faces);
	lfs_obj_write_stmt(o, "mtllib", "model.mtl");
	for (uint32_t g = 0; g < m->n_groups; g++) {
		lfs_obj_write_stmt(o, "o", names[g]);
		lfs_obj_write_stmt(o, "g", names[g]);
		group_body(m, g, m->groups[g].first_vert, mat_names, untextured, o);
	}
	return lfs_sb_ok(o) ? LFS_OK : lfs_nomem(err, "views");
}

/* ---- OBJ reader: lfs_obj_read() with NOD's rules ---------------------------- */

/* One `o` object (or the whole file of a meshes/ view): [start, end) of
 * each list of the lfs_obj. */
typedef struct obj_obj {
	size_t v0, v1, t0, t1, n0, n1, f0, f1;
	const lfs_obj_stmt *o; /* its `o` line; NULL for a meshes/ view */
} obj_obj;

typedef struct obj_check {
	const char *file;
	bool split, seen_o;
} obj_check;

/* model.obj: v / vt / vn / f only after the first `o` line. */
static lfs_err obj_check_line(void *ctx, const lfs_obj *o, lfs_obj_kind kind,
			      const lfs_obj_where *at, lfs_error *err)
{
	(void)o;
	obj_check *ck = ctx;
	if (kind == LFS_OBJ_O)
		ck->seen_o = true;
	else if (ck->split && !ck->seen_o &&
		 (kind == LFS_OBJ_V || kind == LFS_OBJ_VT || kind == LFS_OBJ_VN || kind == LFS_OBJ_F))
		return lfs_fail_at(err, at->file, at->line, at->col, "data before the first 'o' line");
	return LFS_OK;
}

/* Read @p text and cut it into objects: one per `o` line when @p split
 * (model.obj), else one for the whole file (*objs malloc'd, *nobj of them). */
static lfs_err obj_read(const char *file, const char *text, size_t n, bool split, lfs_obj *d,
			obj_obj **objs, size_t *nobj, lfs_error *err)
{
	obj_check ck = { file, split, false };
	lfs_obj_rules rules = { .flags = LFS_OBJ_STRICT | LFS_OBJ_W | LFS_OBJ_DEFINED_ABOVE |
					  LFS_OBJ_NUMS,
				.triangles = "NOD",
				.check = obj_check_line,
				.ctx = &ck };
	*objs = NULL;
	*nobj = 0;
	lfs_err r = lfs_obj_read(file, text, n, &rules, d, err);
	if (r)
		return r;
	size_t no = 0;
	for (size_t i = 0; split && i < d->ns; i++)
		no += d->s[i].kind == LFS_OBJ_O;
	obj_obj *ob = calloc(split ? no + 1 : 1, sizeof(*ob));
	if (!ob)
		return lfs_nomem(err, "views");
	if (!split) {
		ob[0] = (obj_obj){ 0, d->nv, 0, d->nt, 0, d->nn, 0, d->nf, NULL };
		no = 1;
	} else {
		size_t k = 0;
		for (size_t i = 0; i < d->ns; i++) {
			const lfs_obj_stmt *st = &d->s[i];
			if (st->kind != LFS_OBJ_O)
				continue;
			if (k) {
				obj_obj *p = &ob[k - 1];
				p->v1 = st->nv, p->t1 = st->nt, p->n1 = st->nn, p->f1 = st->nf;
			}
			ob[k++] = (obj_obj){ st->nv, 0, st->nt, 0, st->nn, 0, st->nf, 0, st };
		}
		if (k) {
			obj_obj *p = &ob[k - 1];
			p->v1 = d->nv, p->t1 = d->nt, p->n1 = d->nn, p->f1 = d->nf;
		}
	}
	*objs = ob;
	*nobj = no;
	return LFS_OK;
}

bool nod_obj_name_ok(const char *name)
{
	size_t len = strlen(name);
	if (!len || name[0] == ' ' || name[len - 1] == ' ' || name[0] == '"')
		return false;
	return strstr(name, " \"") == NULL;
}

/* The name an `o` line gives, as written: from its first token to the end of
 * the line, trailing blanks and CR left out (a group name may hold spaces:
 * names.h); *s = "" and 0 when the line has none. */
static size_t o_line_name(const lfs_obj_stmt *ol, const char *text, size_t n, const char **s)
{
	*s = "";
	if (!ol->arg)
		return 0;
	const char *e = memchr(ol->arg, '\n', (size_t)(text + n - ol->arg));
	if (!e)
		e = text + n;
	while (e > ol->arg && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	*s = ol->arg;
	return (size_t)(e - ol->arg);
}

/* Replace group @p g's vertices and faces with object @p o of @p d. The new
 * arrays are built in @p nv / @p nf (whole-model arrays under construction). */
typedef struct rebuild {
	nod_vertex *v;
	uint16_t *lod;
	nod_face *f;
	size_t nv, nf;
} rebuild;

/* Vertex skin data (weight, bone, pad, lod) for new vertex from old local
 * vertex @p i of the group (fallbacks as documented). */
static void skin_from(const nod_model *m, const nod_group *gr, size_t i, nod_vertex *v,
		      uint16_t *lod)
{
	const nod_vertex *old = m->verts + gr->first_vert;
	if (i < gr->n_verts) {
		*v = old[i];
	} else if (gr->n_verts) {
		*v = old[gr->n_verts - 1];
	} else {
		memset(v, 0, sizeof(*v));
		v->weight = 1.0f;
		v->bone = gr->bone;
	}
	if (lod)
		*lod = (m->lod && i < gr->n_verts) ? m->lod[gr->first_vert + i] : 0;
}

/* OBJ whose corners use different v / vt / vn rows (e.g. re-exported by a
 * tool that merges equal texture coordinates and normals): every distinct
 * (v, vt, vn) corner becomes one NOD vertex, in order of first use; skin
 * data comes from the old vertex with the same v row. */
static lfs_err split_group(const nod_model *m, uint32_t g, const lfs_obj *d, const obj_obj *o,
			   const char *file, rebuild *rb, uint16_t *new_nv, uint16_t *new_nf,
			   lfs_error *err)
{
	const nod_group *gr = &m->groups[g];
	size_t cf = o->f1 - o->f0, nc = 3 * cf, cap = 16;
	while (cap < 2 * nc)
		cap *= 2;
	int64_t *key = malloc(cap * 3 * sizeof(int64_t));
	uint32_t *val = malloc(cap * sizeof(uint32_t));
	if (!key || !val) {
		free(key);
		free(val);
		return lfs_nomem(err, "views");
	}
	for (size_t i = 0; i < cap; i++)
		val[i] = UINT32_MAX;
	size_t nv = 0;
	lfs_err r = LFS_OK;
	for (size_t i = 0; i < cf && !r; i++) {
		const lfs_obj_face *f = &d->f[o->f0 + i];
		for (int k = 0; k < 3; k++) {
			const lfs_obj_corner *c = &d->c[f->first + (size_t)k];
			uint64_t h = (uint64_t)c->v * 0x9E3779B97F4A7C15ull ^
				     (uint64_t)(c->t + 1) * 0xC2B2AE3D27D4EB4Full ^
				     (uint64_t)(c->n + 1) * 0x165667B19E3779F9ull;
			size_t s = (size_t)(h ^ h >> 29) & (cap - 1);
			while (val[s] != UINT32_MAX &&
			       (key[3 * s] != c->v || key[3 * s + 1] != c->t || key[3 * s + 2] != c->n))
				s = (s + 1) & (cap - 1);
			if (val[s] == UINT32_MAX) {
				if (nv == UINT16_MAX) {
					r = lfs_fail_at(err, file, f->line, c->col,
							"more than 65535 distinct corners in group %u",
							(unsigned)g);
					break;
				}
				key[3 * s] = c->v, key[3 * s + 1] = c->t, key[3 * s + 2] = c->n;
				val[s] = (uint32_t)nv;
				nod_vertex *v = &rb->v[rb->nv + nv];
				size_t li = (size_t)(c->v - (int64_t)o->v0);
				skin_from(m, gr, li, v, rb->lod ? &rb->lod[rb->nv + nv] : NULL);
				memcpy(v->pos, d->v[c->v], sizeof(v->pos));
				if (c->n >= 0)
					memcpy(v->normal, d->vn[c->n], sizeof(v->normal));
				if (c->t >= 0) {
					float back = 1.0f - v->uv[1];
					v->uv[0] = d->vt[c->t][0];
					if (!(li < gr->n_verts && !memcmp(&back, &d->vt[c->t][1], 4)))
						v->uv[1] = 1.0f - d->vt[c->t][1];
				}
				nv++;
			}
			rb->f[rb->nf + i].v[k] = (uint16_t)val[s];
		}
	}
	free(key);
	free(val);
	if (r)
		return r;
	rb->nv += nv;
	rb->nf += cf;
	*new_nv = (uint16_t)nv;
	*new_nf = (uint16_t)cf;
	return LFS_OK;
}

/* ---- the printed-precision rule and welding (docs/formats/obj-csv.md,
 * "Saving OBJ from other programs") ------------------------------------------ */

/* Do stored positions @p a, @p b, @p c span no area (a line or a point, to
 * float32 precision)? Such a face has no direction of its own: an editor
 * gives its corners a made-up normal (Blender: 0 0 ±1). */
static bool flat_face(const float *a, const float *b, const float *c)
{
	double e1[3], e2[3], x[3];
	for (int k = 0; k < 3; k++)
		e1[k] = (double)b[k] - a[k], e2[k] = (double)c[k] - a[k];
	x[0] = e1[1] * e2[2] - e1[2] * e2[1];
	x[1] = e1[2] * e2[0] - e1[0] * e2[2];
	x[2] = e1[0] * e2[1] - e1[1] * e2[0];
	double l1 = e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2];
	double l2 = e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2];
	double area = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
	return !(area > 1e-6 * (l1 > l2 ? l1 : l2));
}

/* What the corners say about the uv (0) or normal (1) of one stored vertex. */
enum { A_UNSEEN, A_SAME, A_NEW, A_MIXED };

typedef struct wvert {
	uint8_t st[2];
	float uv[2], n[3]; /* the new values (A_NEW) */
} wvert;

/* The stored uv of @p v as the view shows it: u, 1 - v (float32, as written). */
static void shown_uv(const nod_vertex *v, float out[2])
{
	out[0] = v->uv[0];
	out[1] = 1.0f - v->uv[1];
}

/* Note what one corner says about attribute @p at (0 uv, 1 normal) of stored
 * vertex @p v (@p w its record). False: a uv conflict (two corners give the
 * vertex different uvs, or one keeps it and one changes it). */
static bool weld_note(const lfs_obj *d, const lfs_obj_corner *c, const nod_vertex *v, wvert *w,
		      int at)
{
	float val[3];
	bool same;
	if (at == 0) {
		float sh[2];
		shown_uv(v, sh);
		const lfs_obj_num *n = d->vt_num + 2 * (size_t)c->t;
		unsigned m = lfs_obj_vec_keeps(n, sh, 2);
		same = m == 3;
		val[0] = m & 1 ? v->uv[0] : d->vt[c->t][0];
		val[1] = m & 2 ? v->uv[1] : 1.0f - d->vt[c->t][1];
	} else {
		const lfs_obj_num *n = d->vn_num + 3 * (size_t)c->n;
		unsigned m = lfs_obj_vec_keeps(n, v->normal, 3);
		same = lfs_obj_normal_keeps(n, v->normal);
		for (int k = 0; k < 3; k++)
			val[k] = (m >> k) & 1 ? v->normal[k] : d->vn[c->n][k];
	}
	unsigned dim = at == 0 ? 2 : 3;
	float *dst = at == 0 ? w->uv : w->n;
	uint8_t *st = &w->st[at];
	if (*st == A_UNSEEN) {
		*st = same ? A_SAME : A_NEW;
		if (!same)
			memcpy(dst, val, dim * sizeof(float));
		return true;
	}
	if (*st == A_MIXED)
		return true;
	bool agree = same ? *st == A_SAME : *st == A_NEW && !memcmp(dst, val, dim * sizeof(float));
	if (agree)
		return true;
	if (at == 1) {
		*st = A_MIXED; /* corners disagree about a normal: the stored one stays */
		return true;
	}
	return false;
}

/*
 * Object @p o lists group @p g's vertices, one `v` per stored vertex, in
 * order (its texture and normal rows may be numbered otherwise: deduplicated
 * by another program). Each `v` keeps the stored bits of the components that
 * state the stored position; each vertex's uv and normal come from the
 * corners that use it: stated values keep the stored bits, one new value
 * given by all its corners is an edit, normals of faces whose positions
 * moved or that have no area are not read, corners disagreeing about a normal leave the stored
 * one. Vertices no face uses take their rows by index when the object has
 * one per vertex. Returns false (nothing written) when corners give one
 * vertex two uvs: the caller splits vertices instead.
 */
static bool weld_group(const nod_model *m, uint32_t g, const lfs_obj *d, const obj_obj *o,
		       rebuild *rb, bool *nomem)
{
	const nod_group *gr = &m->groups[g];
	const nod_vertex *old = m->verts + gr->first_vert;
	size_t cnt = gr->n_verts, cf = o->f1 - o->f0;
	*nomem = false;
	wvert *w = calloc(cnt + 1, sizeof(*w));
	uint8_t *used = calloc(cnt + 1, 1);
	if (!w || !used) {
		free(w);
		free(used);
		*nomem = true;
		return false;
	}
	bool ok = true;
	for (size_t i = 0; i < cf && ok; i++) {
		const lfs_obj_face *f = &d->f[o->f0 + i];
		bool moved = false; /* or without area: its normals are not read */
		size_t fj[3];
		for (int k = 0; k < 3; k++) {
			const lfs_obj_corner *c = &d->c[f->first + (size_t)k];
			size_t j = fj[k] = (size_t)(c->v - (int64_t)o->v0);
			moved |= lfs_obj_vec_keeps(d->v_num + 3 * (size_t)c->v, old[j].pos, 3) != 7;
		}
		moved = moved || flat_face(old[fj[0]].pos, old[fj[1]].pos, old[fj[2]].pos);
		for (int k = 0; k < 3 && ok; k++) {
			const lfs_obj_corner *c = &d->c[f->first + (size_t)k];
			size_t j = (size_t)(c->v - (int64_t)o->v0);
			used[j] = 1;
			if (c->t >= 0)
				ok = weld_note(d, c, &old[j], &w[j], 0);
			if (ok && c->n >= 0 && !moved)
				weld_note(d, c, &old[j], &w[j], 1);
		}
	}
	size_t ct = o->t1 - o->t0, cn = o->n1 - o->n0;
	for (size_t j = 0; j < cnt && ok; j++) {
		if (used[j])
			continue;
		lfs_obj_corner c = { (int64_t)(o->v0 + j), ct == cnt ? (int64_t)(o->t0 + j) : -1,
				     cn == cnt ? (int64_t)(o->n0 + j) : -1, 0 };
		if (c.t >= 0)
			ok = weld_note(d, &c, &old[j], &w[j], 0);
		if (ok && c.n >= 0)
			weld_note(d, &c, &old[j], &w[j], 1);
	}
	if (ok) {
		for (size_t j = 0; j < cnt; j++) {
			nod_vertex *v = &rb->v[rb->nv + j];
			skin_from(m, gr, j, v, rb->lod ? &rb->lod[rb->nv + j] : NULL);
			unsigned mk = lfs_obj_vec_keeps(d->v_num + 3 * (o->v0 + j), old[j].pos, 3);
			for (int k = 0; k < 3; k++)
				v->pos[k] = (mk >> k) & 1 ? old[j].pos[k] : d->v[o->v0 + j][k];
			if (w[j].st[0] == A_NEW)
				memcpy(v->uv, w[j].uv, sizeof(v->uv));
			if (w[j].st[1] == A_NEW)
				memcpy(v->normal, w[j].n, sizeof(v->normal));
		}
		for (size_t i = 0; i < cf; i++)
			for (int k = 0; k < 3; k++)
				rb->f[rb->nf + i].v[k] = (uint16_t)(d->c[d->f[o->f0 + i].first + (size_t)k].v -
								    (int64_t)o->v0);
		rb->nv += cnt;
		rb->nf += cf;
	}
	free(w);
	free(used);
	return ok;
}

static lfs_err apply_group(const nod_model *m, uint32_t g, const lfs_obj *d, const obj_obj *o,
			   const char *file, rebuild *rb, uint16_t *new_nv, uint16_t *new_nf,
			   lfs_error *err)
{
	const nod_group *gr = &m->groups[g];
	size_t cnt = o->v1 - o->v0, ct = o->t1 - o->t0, cn = o->n1 - o->n0, cf = o->f1 - o->f0;
	unsigned line = o->o ? o->o->line : 1;
	if (cnt > UINT16_MAX || cf > UINT16_MAX)
		return lfs_fail_at(err, file, line, 1,
				   "group %u would have %zu vertices and %zu faces; a group holds at "
				   "most 65535 of each", (unsigned)g, cnt, cf);
	/* faces: corners must use vertices of this object */
	bool diag = (!ct || ct == cnt) && (!cn || cn == cnt);
	for (size_t i = o->f0; i < o->f1; i++) {
		const lfs_obj_face *f = &d->f[i];
		for (int k = 0; k < 3; k++) {
			const lfs_obj_corner *c = &d->c[f->first + (size_t)k];
			if (c->v < (int64_t)o->v0 || c->v >= (int64_t)o->v1)
				return lfs_fail_at(err, file, f->line, c->col,
						   "vertex %lld belongs to another group",
						   (long long)c->v + 1);
			if ((c->t >= 0 && (c->t < (int64_t)o->t0 || c->t >= (int64_t)o->t1)) ||
			    (c->n >= 0 && (c->n < (int64_t)o->n0 || c->n >= (int64_t)o->n1)))
				return lfs_fail_at(err, file, f->line, c->col,
						   "texture or normal row of another group");
			int64_t l = c->v - (int64_t)o->v0;
			if ((c->t >= 0 && c->t - (int64_t)o->t0 != l) ||
			    (c->n >= 0 && c->n - (int64_t)o->n0 != l))
				diag = false;
		}
	}
	if (cnt == gr->n_verts && d->v_num) {
		bool nomem;
		if (weld_group(m, g, d, o, rb, &nomem)) {
			*new_nv = (uint16_t)cnt;
			*new_nf = (uint16_t)cf;
			return LFS_OK;
		}
		if (nomem)
			return lfs_nomem(err, "views");
	}
	if (!diag)
		return split_group(m, g, d, o, file, rb, new_nv, new_nf, err);
	for (size_t i = 0; i < cnt; i++) {
		nod_vertex *v = &rb->v[rb->nv + i];
		skin_from(m, gr, i, v, rb->lod ? &rb->lod[rb->nv + i] : NULL);
		memcpy(v->pos, d->v[o->v0 + i], sizeof(v->pos));
		if (cn)
			memcpy(v->normal, d->vn[o->n0 + i], sizeof(v->normal));
		if (ct) {
			const float *t = d->vt[o->t0 + i];
			v->uv[0] = t[0];
			float back = 1.0f - v->uv[1];
			if (!(i < gr->n_verts && !memcmp(&back, &t[1], 4)))
				v->uv[1] = 1.0f - t[1];
		}
	}
	for (size_t i = 0; i < cf; i++)
		for (int k = 0; k < 3; k++)
			rb->f[rb->nf + i].v[k] = (uint16_t)(d->c[d->f[o->f0 + i].first + (size_t)k].v - (int64_t)o->v0);
	rb->nv += cnt;
	rb->nf += cf;
	*new_nv = (uint16_t)cnt;
	*new_nf = (uint16_t)cf;
	return LFS_OK;
}

static void copy_group(const nod_model *m, uint32_t g, rebuild *rb)
{
	const nod_group *gr = &m->groups[g];
	memcpy(rb->v + rb->nv, m->verts + gr->first_vert, gr->n_verts * sizeof(nod_vertex));
	if (rb->lod)
		memcpy(rb->lod + rb->nv, m->lod + gr->first_vert, gr->n_verts * sizeof(uint16_t));
	memcpy(rb->f + rb->nf, m->faces + gr->first_face, gr->n_faces * sizeof(nod_face));
	rb->nv += gr->n_verts;
	rb->nf += gr->n_faces;
}

lfs_err nod_obj_apply(nod_model *m, int32_t group, const char **names, const char *file,
		      const char *text, size_t n, lfs_error *err)
{
	if (group >= (int32_t)m->n_groups)
		return lfs_fail(err, LFS_ERR_NOTFORMAT, SIZE_MAX, "views", "no mesh group %d", (int)group);
	lfs_obj d;
	obj_obj *ob = NULL;
	size_t no = 0;
	lfs_err r = obj_read(file, text, n, group < 0, &d, &ob, &no, err);
	if (r)
		goto out;
	if (group < 0) {
		if (no != m->n_groups) {
			r = lfs_fail_at(err, file, no > m->n_groups ? ob[m->n_groups].o->line : 1, 1,
					"model.obj has %zu 'o' objects; this model has %u mesh groups "
					"(one object per group, in order)", no, (unsigned)m->n_groups);
			goto out;
		}
		for (uint32_t g = 0; g < m->n_groups; g++) {
			const lfs_obj_stmt *ol = ob[g].o;
			const char *on;
			size_t len = strlen(names[g]);
			if (o_line_name(ol, text, n, &on) != len || memcmp(on, names[g], len)) {
				r = lfs_fail_at(err, file, ol->line, ol->narg >= 1 ? ol->arg_col : ol->end_col,
						"expected 'o %s' (object %u is mesh group %u)", names[g],
						(unsigned)g, (unsigned)g);
				goto out;
			}
		}
	}
	/* new whole-model arrays: old total - replaced + parsed */
	size_t tv = m->n_verts + d.nv + 3 * d.nf, tf = m->n_faces + d.nf;
	rebuild rb = { 0 };
	rb.v = malloc((tv ? tv : 1) * sizeof(nod_vertex));
	rb.f = malloc((tf ? tf : 1) * sizeof(nod_face));
	rb.lod = m->lod ? malloc((tv ? tv : 1) * sizeof(uint16_t)) : NULL;
	uint16_t *gnv = malloc((m->n_groups ? m->n_groups : 1) * 2 * sizeof(uint16_t));
	if (!rb.v || !rb.f || (m->lod && !rb.lod) || !gnv) {
		free(rb.v);
		free(rb.f);
		free(rb.lod);
		free(gnv);
		r = lfs_nomem(err, "views");
		goto out;
	}
	for (uint32_t g = 0; g < m->n_groups && !r; g++) {
		gnv[2 * g] = m->groups[g].n_verts;
		gnv[2 * g + 1] = m->groups[g].n_faces;
		if (group < 0 || (uint32_t)group == g)
			r = apply_group(m, g, &d, &ob[group < 0 ? g : 0], file, &rb, &gnv[2 * g],
					&gnv[2 * g + 1], err);
		else
			copy_group(m, g, &rb);
	}
	if (r || rb.nv > UINT32_MAX || rb.nf > UINT32_MAX) {
		if (!r)
			r = lfs_fail_at(err, file, 1, 1, "too many vertices or faces");
		free(rb.v);
		free(rb.f);
		free(rb.lod);
		free(gnv);
		goto out;
	}
	free(m->verts);
	free(m->faces);
	free(m->lod);
	m->verts = rb.v;
	m->faces = rb.f;
	m->lod = rb.lod;
	m->n_verts = (uint32_t)rb.nv;
	m->n_faces = (uint32_t)rb.nf;
	for (uint32_t g = 0; g < m->n_groups; g++) {
		m->groups[g].n_verts = gnv[2 * g];
		m->groups[g].n_faces = gnv[2 * g + 1];
	}
	free(gnv);
	r = nod_model_layout(m, err);
out:
	lfs_obj_free(&d);
	free(ob);
	return r;
}
