/**
 * @file nod_obj.c
 * OBJ/MTL views of a NOD model: writers and the OBJ parser (docs/formats/nod.md).
 */
#include "nod_views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static lfs_err nomem(lfs_error *err)
{
	return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "views", "out of memory");
}

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
			return nomem(err);
	}
	*untextured = NULL;
	for (uint32_t g = 0; g < m->n_groups; g++)
		if (m->groups[g].material < 0 || (uint32_t)m->groups[g].material >= m->n_materials) {
			if (!(*untextured = lfs_nameset_add(set, "untextured")))
				return nomem(err);
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
	return lfs_sb_ok(sb) ? LFS_OK : nomem(err);
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
	for (uint32_t i = 0; i < gr->n_verts; i++) {
		lfs_sb_puts(o, "v ");
		lfs_sb_floats_bits(o, vs[i].pos, 3, ' ');
		lfs_sb_putc(o, '\n');
	}
	for (uint32_t i = 0; i < gr->n_verts; i++) {
		lfs_sb_puts(o, "vt ");
		lfs_sb_float_bits(o, vs[i].uv[0]);
		lfs_sb_putc(o, ' ');
		lfs_sb_float_bits(o, 1.0f - vs[i].uv[1]);
		lfs_sb_putc(o, '\n');
	}
	for (uint32_t i = 0; i < gr->n_verts; i++) {
		lfs_sb_puts(o, "vn ");
		lfs_sb_floats_bits(o, vs[i].normal, 3, ' ');
		lfs_sb_putc(o, '\n');
	}
	const char *mt = group_mat(m, g, mat_names, untextured);
	if (mt)
		lfs_sb_printf(o, "usemtl %s\n", mt);
	lfs_sb_puts(o, "s off\n");
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
		lfs_sb_putc(o, 'f');
		for (int k = 0; k < 3; k++) {
			size_t x = base + f[k] + 1;
			lfs_sb_printf(o, " %zu/%zu/%zu", x, x, x);
		}
		lfs_sb_putc(o, '\n');
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
	lfs_sb_puts(o, "mtllib ../model.mtl\n");
	lfs_sb_printf(o, "o %s\ng %s\n", names[g], names[g]);
	group_body(m, g, 0, mat_names, untextured, o);
	return lfs_sb_ok(o) ? LFS_OK : nomem(err);
}

lfs_err nod_obj_model_write(const nod_model *m, const char **names, const char **mat_names,
			    const char *untextured, lfs_sb *o, lfs_error *err)
{
	lfs_sb_puts(o, "# legacyfs: every mesh group of this NOD model, model space, rest pose, Z up\n");
	lfs_sb_printf(o, "# %u groups, %u vertices, %u faces; vt v = 1 - stored v\n",
		      (unsigned)m->n_groups, (unsigned)m->n_verts, (unsigned)m->n_faces);
	lfs_sb_puts(o, "mtllib model.mtl\n");
	for (uint32_t g = 0; g < m->n_groups; g++) {
		lfs_sb_printf(o, "o %s\ng %s\n", names[g], names[g]);
		group_body(m, g, m->groups[g].first_vert, mat_names, untextured, o);
	}
	return lfs_sb_ok(o) ? LFS_OK : nomem(err);
}

/* ---- OBJ parser ------------------------------------------------------------- */

typedef struct obj_corner {
	int64_t v, t, n; /* 0-based global, -1 = absent */
} obj_corner;

typedef struct obj_face {
	obj_corner c[3];
	uint32_t line, col[3];
} obj_face;

typedef struct obj_obj {
	size_t v0, v1, t0, t1, n0, n1; /* [start, end) of each list */
	size_t f0, f1;
	lfs_line oline;
} obj_obj;

typedef struct obj_data {
	float (*v)[3];
	float (*t)[2];
	float (*n)[3];
	size_t nv, nt, nn, capv, capt, capn;
	obj_face *f;
	size_t nf, capf;
	obj_obj *o;
	size_t no, capo;
} obj_data;

static void obj_free(obj_data *d)
{
	free(d->v);
	free(d->t);
	free(d->n);
	free(d->f);
	free(d->o);
}

static bool grow(void **a, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return true;
	size_t nc = *cap ? *cap * 2 : 256;
	while (nc < need)
		nc *= 2;
	void *b = realloc(*a, nc * size);
	if (!b)
		return false;
	*a = b;
	*cap = nc;
	return true;
}

/* Parse "a", "a/b", "a//c", "a/b/c" (1-based or negative relative). */
static lfs_err corner(lfs_lex *lx, const lfs_line *ln, uint32_t i, const obj_data *d,
		      obj_corner *c)
{
	const lfs_tok *t = &ln->tok[i];
	int64_t part[3] = { 0, 0, 0 };
	bool have[3] = { false, false, false };
	size_t k = 0, p = 0;
	while (p <= t->len && k < 3) {
		size_t q = p;
		while (q < t->len && t->s[q] != '/')
			q++;
		if (q > p) {
			char buf[24];
			if (q - p >= sizeof(buf))
				return lfs_lex_fail(lx, ln, i, "face index too long");
			memcpy(buf, t->s + p, q - p);
			buf[q - p] = 0;
			char *end;
			long long x = strtoll(buf, &end, 10);
			if (*end || x == 0)
				return lfs_lex_fail(lx, ln, i, "bad face corner '%.*s'", (int)t->len, t->s);
			part[k] = x;
			have[k] = true;
		}
		k++;
		p = q + 1;
		if (q == t->len)
			break;
	}
	if (!have[0] || p <= t->len)
		return lfs_lex_fail(lx, ln, i, "bad face corner '%.*s'", (int)t->len, t->s);
	size_t cnt[3] = { d->nv, d->nt, d->nn };
	int64_t *dst[3] = { &c->v, &c->t, &c->n };
	for (int j = 0; j < 3; j++) {
		*dst[j] = -1;
		if (!have[j])
			continue;
		int64_t x = part[j] > 0 ? part[j] - 1 : (int64_t)cnt[j] + part[j];
		if (x < 0 || (uint64_t)x >= cnt[j])
			return lfs_lex_fail(lx, ln, i, "%s index %lld is not defined above",
					    j == 0 ? "vertex" : j == 1 ? "texture" : "normal",
					    (long long)part[j]);
		*dst[j] = x;
	}
	return LFS_OK;
}

static lfs_err floats(lfs_lex *lx, const lfs_line *ln, float *f, uint32_t want, uint32_t maxtok)
{
	if (ln->ntok < want + 1 || ln->ntok > maxtok + 1)
		return lfs_lex_fail(lx, ln, ln->ntok < want + 1 ? ln->ntok : maxtok + 1,
				    "expected %u numbers", want);
	for (uint32_t k = 0; k < want; k++) {
		lfs_err r = lfs_lex_f32(lx, ln, k + 1, &f[k]);
		if (r)
			return r;
	}
	return LFS_OK;
}

static lfs_err obj_read(const char *file, const char *text, size_t n, bool split, obj_data *d,
			lfs_error *err)
{
	lfs_lex lx;
	lfs_lex_init(&lx, file, text, n, err);
	lfs_line *ln = malloc(sizeof(*ln));
	if (!ln)
		return nomem(err);
	lfs_err r = LFS_OK;
	if (!split) { /* one object = the whole file */
		if (!grow((void **)&d->o, &d->capo, 1, sizeof(obj_obj)))
			goto nomem;
		memset(&d->o[0], 0, sizeof(obj_obj));
		d->no = 1;
	}
	int lr;
	while ((lr = lfs_lex_next(&lx, ln)) == 1) {
		const lfs_tok *k = &ln->tok[0];
		if (lfs_tok_is(k, "o") && split) {
			if (d->no) {
				obj_obj *p = &d->o[d->no - 1];
				p->v1 = d->nv, p->t1 = d->nt, p->n1 = d->nn, p->f1 = d->nf;
			}
			if (!grow((void **)&d->o, &d->capo, d->no + 1, sizeof(obj_obj)))
				goto nomem;
			obj_obj *o = &d->o[d->no++];
			o->v0 = d->nv, o->t0 = d->nt, o->n0 = d->nn, o->f0 = d->nf;
			o->oline = *ln;
			continue;
		}
		bool isv = lfs_tok_is(k, "v"), ist = lfs_tok_is(k, "vt"), isn = lfs_tok_is(k, "vn"),
		     isf = lfs_tok_is(k, "f");
		if (!isv && !ist && !isn && !isf)
			continue; /* o (per-group file), g, usemtl, mtllib, s, ...: no data */
		if (!d->no) {
			r = lfs_lex_fail(&lx, ln, 0, "data before the first 'o' line");
			goto out;
		}
		if (isv) {
			if (!grow((void **)&d->v, &d->capv, d->nv + 1, sizeof(*d->v)))
				goto nomem;
			if ((r = floats(&lx, ln, d->v[d->nv], 3, 4)))
				goto out;
			d->nv++;
		} else if (ist) {
			if (!grow((void **)&d->t, &d->capt, d->nt + 1, sizeof(*d->t)))
				goto nomem;
			if ((r = floats(&lx, ln, d->t[d->nt], 2, 3)))
				goto out;
			d->nt++;
		} else if (isn) {
			if (!grow((void **)&d->n, &d->capn, d->nn + 1, sizeof(*d->n)))
				goto nomem;
			if ((r = floats(&lx, ln, d->n[d->nn], 3, 3)))
				goto out;
			d->nn++;
		} else {
			if (ln->ntok != 4) {
				r = lfs_lex_fail(&lx, ln, ln->ntok < 4 ? ln->ntok : 4,
						 "NOD faces are triangles: expected 3 corners, found %u",
						 ln->ntok - 1);
				goto out;
			}
			if (!grow((void **)&d->f, &d->capf, d->nf + 1, sizeof(*d->f)))
				goto nomem;
			obj_face *f = &d->f[d->nf];
			f->line = ln->line;
			for (uint32_t c = 0; c < 3; c++) {
				if ((r = corner(&lx, ln, c + 1, d, &f->c[c])))
					goto out;
				f->col[c] = ln->tok[c + 1].col;
			}
			d->nf++;
		}
	}
	if (lr < 0) {
		r = LFS_ERR_PARSE;
		goto out;
	}
	if (d->no) {
		obj_obj *p = &d->o[d->no - 1];
		p->v1 = d->nv, p->t1 = d->nt, p->n1 = d->nn, p->f1 = d->nf;
	}
	goto out;
nomem:
	r = nomem(err);
out:
	free(ln);
	return r;
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
static lfs_err split_group(const nod_model *m, uint32_t g, const obj_data *d, const obj_obj *o,
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
		return nomem(err);
	}
	for (size_t i = 0; i < cap; i++)
		val[i] = UINT32_MAX;
	size_t nv = 0;
	lfs_err r = LFS_OK;
	for (size_t i = 0; i < cf && !r; i++) {
		const obj_face *f = &d->f[o->f0 + i];
		for (int k = 0; k < 3; k++) {
			const obj_corner *c = &f->c[k];
			uint64_t h = (uint64_t)c->v * 0x9E3779B97F4A7C15ull ^
				     (uint64_t)(c->t + 1) * 0xC2B2AE3D27D4EB4Full ^
				     (uint64_t)(c->n + 1) * 0x165667B19E3779F9ull;
			size_t s = (size_t)(h ^ h >> 29) & (cap - 1);
			while (val[s] != UINT32_MAX &&
			       (key[3 * s] != c->v || key[3 * s + 1] != c->t || key[3 * s + 2] != c->n))
				s = (s + 1) & (cap - 1);
			if (val[s] == UINT32_MAX) {
				if (nv == UINT16_MAX) {
					r = lfs_fail_at(err, file, f->line, f->col[k],
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
					memcpy(v->normal, d->n[c->n], sizeof(v->normal));
				if (c->t >= 0) {
					float back = 1.0f - v->uv[1];
					v->uv[0] = d->t[c->t][0];
					if (!(li < gr->n_verts && !memcmp(&back, &d->t[c->t][1], 4)))
						v->uv[1] = 1.0f - d->t[c->t][1];
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

static lfs_err apply_group(const nod_model *m, uint32_t g, const obj_data *d, const obj_obj *o,
			   const char *file, rebuild *rb, uint16_t *new_nv, uint16_t *new_nf,
			   lfs_error *err)
{
	const nod_group *gr = &m->groups[g];
	size_t cnt = o->v1 - o->v0, ct = o->t1 - o->t0, cn = o->n1 - o->n0, cf = o->f1 - o->f0;
	unsigned line = o->oline.line ? o->oline.line : 1;
	if (cnt > UINT16_MAX || cf > UINT16_MAX)
		return lfs_fail_at(err, file, line, 1,
				   "group %u would have %zu vertices and %zu faces; a group holds at "
				   "most 65535 of each", (unsigned)g, cnt, cf);
	/* faces: corners must use vertices of this object */
	bool diag = (!ct || ct == cnt) && (!cn || cn == cnt);
	for (size_t i = o->f0; i < o->f1; i++) {
		const obj_face *f = &d->f[i];
		for (int k = 0; k < 3; k++) {
			const obj_corner *c = &f->c[k];
			if (c->v < (int64_t)o->v0 || c->v >= (int64_t)o->v1)
				return lfs_fail_at(err, file, f->line, f->col[k],
						   "vertex %lld belongs to another group",
						   (long long)c->v + 1);
			if ((c->t >= 0 && (c->t < (int64_t)o->t0 || c->t >= (int64_t)o->t1)) ||
			    (c->n >= 0 && (c->n < (int64_t)o->n0 || c->n >= (int64_t)o->n1)))
				return lfs_fail_at(err, file, f->line, f->col[k],
						   "texture or normal row of another group");
			int64_t l = c->v - (int64_t)o->v0;
			if ((c->t >= 0 && c->t - (int64_t)o->t0 != l) ||
			    (c->n >= 0 && c->n - (int64_t)o->n0 != l))
				diag = false;
		}
	}
	if (!diag)
		return split_group(m, g, d, o, file, rb, new_nv, new_nf, err);
	for (size_t i = 0; i < cnt; i++) {
		nod_vertex *v = &rb->v[rb->nv + i];
		skin_from(m, gr, i, v, rb->lod ? &rb->lod[rb->nv + i] : NULL);
		memcpy(v->pos, d->v[o->v0 + i], sizeof(v->pos));
		if (cn)
			memcpy(v->normal, d->n[o->n0 + i], sizeof(v->normal));
		if (ct) {
			const float *t = d->t[o->t0 + i];
			v->uv[0] = t[0];
			float back = 1.0f - v->uv[1];
			if (!(i < gr->n_verts && !memcmp(&back, &t[1], 4)))
				v->uv[1] = 1.0f - t[1];
		}
	}
	for (size_t i = 0; i < cf; i++)
		for (int k = 0; k < 3; k++)
			rb->f[rb->nf + i].v[k] = (uint16_t)(d->f[o->f0 + i].c[k].v - (int64_t)o->v0);
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
	obj_data d;
	memset(&d, 0, sizeof(d));
	lfs_err r = obj_read(file, text, n, group < 0, &d, err);
	if (r)
		goto out;
	if (group < 0) {
		if (d.no != m->n_groups) {
			r = lfs_fail_at(err, file, d.no > m->n_groups ? d.o[m->n_groups].oline.line : 1, 1,
					"model.obj has %zu 'o' objects; this model has %u mesh groups "
					"(one object per group, in order)", d.no, (unsigned)m->n_groups);
			goto out;
		}
		for (uint32_t g = 0; g < m->n_groups; g++) {
			const lfs_line *ol = &d.o[g].oline;
			size_t len = strlen(names[g]);
			if (ol->ntok != 2 || ol->tok[1].len != len || memcmp(ol->tok[1].s, names[g], len)) {
				r = lfs_fail_at(err, file, ol->line, ol->ntok >= 2 ? ol->tok[1].col : ol->end_col,
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
		r = nomem(err);
		goto out;
	}
	for (uint32_t g = 0; g < m->n_groups && !r; g++) {
		gnv[2 * g] = m->groups[g].n_verts;
		gnv[2 * g + 1] = m->groups[g].n_faces;
		if (group < 0 || (uint32_t)group == g)
			r = apply_group(m, g, &d, &d.o[group < 0 ? g : 0], file, &rb, &gnv[2 * g],
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
	obj_free(&d);
	return r;
}
