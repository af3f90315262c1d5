/**
 * @file nwn_apply_obj.c
 * meshes/<node>.obj edits: the text read by the shared OBJ reader (obj.h)
 * with NWN's rules, faces split into fans of triangles; vertex positions and
 * face corners patched in place; added or removed vertices or faces become
 * an OBJ -> model.mdl rewrite compiled by the structural apply
 * (nwn_apply_struct.c).
 */

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/floatfmt.h"
#include "common/mem.h"
#include "common/strbuf.h"
#include "nwn_apply_priv.h"
#include "registry/names.h"
#include "nwn_apply_struct.h"
#include "nwn_ascii.h"
#include "nwn_obj.h"
#include "nwn_quat.h"
#include "text/obj.h"

/*
 * What NWN accepts in a mesh OBJ: v, vt (a w only when 0), vn, f (3 to 15
 * corners, indices to elements defined above), o g s usemtl mtllib (not
 * stored per mesh); any other statement is refused. Messages in model.mdl's
 * wording; every number is also kept as written (the printed-precision rule).
 */
static const lfs_obj_rules nwn_obj_rules_nums = {
	.flags = LFS_OBJ_STRICT | LFS_OBJ_DEFINED_ABOVE | LFS_OBJ_VT_W0 | LFS_OBJ_MDL_MSGS |
		 LFS_OBJ_NUMS,
	.max_corners = 15,
};

/* A mesh OBJ as the apply uses it: the read lfs_obj, its faces as triangles. */
typedef struct objdoc {
	lfs_obj o;
	const float *v, *vt, *vn; /* o.v, o.vt, o.vn as flat arrays */
	uint32_t nv, nvt, nvn;
	int32_t *f;	  /* 9 per triangle: v vt vn per corner, 0-based, -1 absent */
	uint32_t *fline; /* the f line of each triangle */
	uint32_t nf;
} objdoc;

static void objdoc_free(objdoc *d)
{
	lfs_obj_free(&d->o);
	free(d->f);
	free(d->fline);
	memset(d, 0, sizeof(*d));
}

/* Read OBJ @p text into @p d (always initialised; free with objdoc_free()):
 * each face of n corners becomes the fan of triangles (0, i, i + 1). */
static lfs_err objdoc_read(ap *a, const char *text, size_t tn, objdoc *d)
{
	memset(d, 0, sizeof(*d));
	lfs_obj *o = &d->o;
	lfs_err e = lfs_obj_read(a->p.file, text, tn, &nwn_obj_rules_nums, o, a->p.err);
	if (e)
		return e;
	/* the text is at most MDL_MAX_INPUT bytes: every count fits 32 bits */
	d->v = o->v ? o->v[0] : NULL;
	d->vt = o->vt ? o->vt[0] : NULL;
	d->vn = o->vn ? o->vn[0] : NULL;
	d->nv = (uint32_t)o->nv;
	d->nvt = (uint32_t)o->nt;
	d->nvn = (uint32_t)o->nn;
	size_t ntri = 0;
	for (size_t i = 0; i < o->nf; i++)
		ntri += o->f[i].n - 2;
	d->f = malloc((ntri + 1) * 9 * sizeof(int32_t));
	d->fline = malloc((ntri + 1) * sizeof(uint32_t));
	if (!d->f || !d->fline)
		return lfs_nomem(a->p.err, "apply view");
	for (size_t i = 0; i < o->nf; i++) {
		const lfs_obj_face *fc = &o->f[i];
		for (uint32_t t = 0; t + 2 < fc->n; t++) {
			const uint32_t cs[3] = { 0, t + 1, t + 2 };
			int32_t *x = d->f + 9 * (size_t)d->nf;
			for (int c = 0; c < 3; c++) {
				const lfs_obj_corner *k = &o->c[fc->first + cs[c]];
				x[3 * c] = (int32_t)k->v;
				x[3 * c + 1] = (int32_t)k->t;
				x[3 * c + 2] = (int32_t)k->n;
			}
			d->fline[d->nf++] = fc->line;
		}
	}
	return LFS_OK;
}

const char *ap_mesh_obj_name(const nwn_model *m, uint32_t idx, lfs_nameset *ns)
{
	const char *nm = "";
	for (uint32_t i = 0; i <= idx && i < m->geom.n_nodes; i++) {
		if (!m->geom.nodes[i].mesh)
			continue;
		if (!(nm = lfs_nameset_add(ns, m->geom.nodes[i].name)))
			return NULL;
	}
	return nm;
}

/* ---- OBJ value edits: the printed-precision rule and welding ------------------ */

/*
 * One mesh node as a view shows it: the stored values as printed there
 * (node-local in meshes/<node>.obj; model space in model.obj, where `wpos` /
 * `wnrm` hold the exact double values before their float32 rounding) and the
 * transform back to the node (model.obj only).
 */
typedef struct mview {
	uint32_t node;
	nwn_mesh *me;
	uint32_t nv, nf;
	const float *pos, *uv, *nrm; /* shown: nv*3, nv*2 (NULL: no tverts), nv*3 (NULL: no normals) */
	bool world;
	const double *wpos;	     /* world only: nv*3 positions in double */
	double t[3], q[4], s;	     /* world only: model-space transform of the node */
	/* where the object's elements start in the OBJ (model.obj numbers them globally) */
	size_t vbase, tbase, nbase, vend, tend, nend;
} mview;


/* What the faces say about one attribute of one stored vertex; A_MIXED:
 * corners disagree about a normal (editors derive corner normals per face),
 * the stored normal stays. */
enum { A_UNSEEN, A_SAME, A_NEW, A_MIXED };

typedef struct vedit {
	uint8_t st[3];	 /* position, uv, normal: A_* */
	uint32_t line[3]; /* f line of the first corner that set it */
	float val[8];	 /* new local position (3), uv (2), normal (3) */
} vedit;

static const unsigned attr_dim[3] = { 3, 2, 3 };
static const unsigned attr_off[3] = { 0, 3, 5 };

/* The local value of attribute @p at of a corner that does not state the
 * shown value of vertex @p j: the components that do keep the stored
 * (exact) value, the others the written number, transformed back to the
 * node in model.obj. */
static void local_value(const mview *mv, int at, uint32_t j, const lfs_obj_num *n, unsigned mask,
			float *out)
{
	if (at == 1 || !mv->world) {
		const float *stored = at == 0 ? mv->me->verts + 3 * (size_t)j
				    : at == 1 ? mv->me->tverts[0] + 2 * (size_t)j
					      : mv->me->normals + 3 * (size_t)j;
		for (unsigned k = 0; k < attr_dim[at]; k++)
			out[k] = (mask >> k) & 1 ? stored[k] : (float)n[k].value;
		return;
	}
	double w[3], r[3];
	const double qi[4] = { -mv->q[0], -mv->q[1], -mv->q[2], mv->q[3] };
	for (int k = 0; k < 3; k++) {
		bool keep = (mask >> k) & 1;
		if (at == 0)
			w[k] = (keep ? mv->wpos[3 * (size_t)j + k] : n[k].value) - mv->t[k];
		else
			w[k] = keep ? (double)mv->nrm[3 * (size_t)j + k] : n[k].value;
	}
	nwn_quat_rotate(qi, w, r);
	for (int k = 0; k < 3; k++) {
		double x = at == 0 ? (mv->s != 0 ? r[k] / mv->s : r[k]) : (mv->s < 0 ? -r[k] : r[k]);
		out[k] = (float)x;
	}
}

/* Does the corner @p k (global indices) state every shown value of stored
 * vertex @p j? Normals are not compared when @p skip_n. */
static bool corner_is(const lfs_obj *o, const mview *mv, const lfs_obj_corner *k, uint32_t j,
		      bool skip_n)
{
	if (lfs_obj_vec_keeps(o->v_num + 3 * (size_t)k->v, mv->pos + 3 * (size_t)j, 3) != 7)
		return false;
	if (mv->uv && k->t >= 0 && lfs_obj_vec_keeps(o->vt_num + 2 * (size_t)k->t, mv->uv + 2 * (size_t)j, 2) != 3)
		return false;
	if (mv->nrm && k->n >= 0 && !skip_n &&
	    !lfs_obj_normal_keeps(o->vn_num + 3 * (size_t)k->n, mv->nrm + 3 * (size_t)j))
		return false;
	return true;
}

/* Record what corner @p k says about attribute @p at of stored vertex @p j.
 * Returns false on a conflict (two corners of one vertex disagree). */
static bool note_attr(const lfs_obj *o, const mview *mv, vedit *ve, int at, uint32_t j,
		      const lfs_obj_corner *k, uint32_t line)
{
	const lfs_obj_num *n = at == 0 ? o->v_num + 3 * (size_t)k->v
			     : at == 1 ? o->vt_num + 2 * (size_t)k->t
				       : o->vn_num + 3 * (size_t)k->n;
	const float *shown = at == 0 ? mv->pos + 3 * (size_t)j
			   : at == 1 ? mv->uv + 2 * (size_t)j
				     : mv->nrm + 3 * (size_t)j;
	unsigned dim = attr_dim[at];
	unsigned mask = lfs_obj_vec_keeps(n, shown, dim);
	bool same = mask == (1u << dim) - 1 || (at == 2 && lfs_obj_normal_keeps(n, shown));
	vedit *e = &ve[j];
	float v[3];
	if (!same)
		local_value(mv, at, j, n, mask, v);
	if (e->st[at] == A_UNSEEN) {
		e->st[at] = same ? A_SAME : A_NEW;
		e->line[at] = line;
		if (!same)
			memcpy(e->val + attr_off[at], v, dim * sizeof(float));
		return true;
	}
	bool agree = same ? e->st[at] == A_SAME : e->st[at] == A_NEW;
	for (unsigned c = 0; c < dim && agree && !same; c++)
		if (!nwn_feq(e->val[attr_off[at] + c], v[c]))
			agree = false;
	if (agree || e->st[at] == A_MIXED)
		return true;
	if (at == 2) {
		e->st[at] = A_MIXED;
		return true;
	}
	return false;
}

/*
 * Match faces [f0, f1) of @p o (triangles, one per stored face, in order)
 * against mesh @p mv and patch what changed (docs/formats/obj-csv.md,
 * "Saving OBJ from other programs"). Each corner is welded to a stored
 * vertex whose shown position, uv and normal it states at the precision
 * written — the vertex its indices name (a corner a/a/a), else the vertex
 * of the stored face at that place, else any; a corner that states no
 * stored vertex edits the values of the vertex at that place. Normals of a
 * face whose positions moved are not read (editors re-derive them). On a
 * change that needs the compiler (@p *split set: a stored vertex would take
 * two values) nothing is patched.
 */
static lfs_err match_mesh(ap *a, const lfs_obj *o, size_t f0, size_t f1, const mview *mv,
			  bool *split, uint32_t *split_line)
{
	nwn_mesh *me = mv->me;
	*split = false;
	lfs_err e = LFS_OK;
	vedit *ve = calloc((size_t)mv->nv + 1, sizeof(*ve));
	uint32_t *fv = malloc(((size_t)mv->nf * 3 + 1) * sizeof(uint32_t));
	uint8_t *moved = calloc((size_t)mv->nf + 1, 1);
	if (!ve || !fv || !moved) {
		e = lfs_nomem(a->p.err, "apply view");
		goto out;
	}
	for (uint32_t i = 0; i < mv->nf && !*split; i++) {
		const lfs_obj_face *fc = &o->f[f0 + i];
		const uint16_t *sv = me->faces[i].v;
		for (int c = 0; c < 3; c++) {
			const lfs_obj_corner *k = &o->c[fc->first + (size_t)c];
			if (lfs_obj_vec_keeps(o->v_num + 3 * (size_t)k->v, mv->pos + 3 * (size_t)sv[c], 3) != 7)
				moved[i] = 1;
		}
		for (int c = 0; c < 3 && !*split; c++) {
			const lfs_obj_corner *k = &o->c[fc->first + (size_t)c];
			int64_t lv = k->v - (int64_t)mv->vbase;
			int64_t lt = k->t < 0 ? -1 : k->t - (int64_t)mv->tbase;
			int64_t ln = k->n < 0 ? -1 : k->n - (int64_t)mv->nbase;
			int64_t j = -1;
			/* indices that name one stored vertex (a/a/a, as the views
			 * write them) */
			bool named = lv >= 0 && lv < mv->nv && (lt < 0 || lt == lv) && (ln < 0 || ln == lv);
			if (named && corner_is(o, mv, k, (uint32_t)lv, moved[i]))
				j = lv;
			else if (named && lv == sv[c])
				j = -1; /* the vertex the stored face has here, named: a value edit of it */
			else if (corner_is(o, mv, k, sv[c], moved[i]))
				j = sv[c];
			else
				for (uint32_t x = 0; x < mv->nv && j < 0; x++)
					if (corner_is(o, mv, k, x, moved[i]))
						j = x;
			if (j >= 0) {
				fv[3 * i + (uint32_t)c] = (uint32_t)j;
				/* the corner states vertex j: it is seen unchanged */
				for (int at = 0; at < 3; at++) {
					if ((at == 1 && (!mv->uv || k->t < 0)) ||
					    (at == 2 && (!mv->nrm || k->n < 0 || moved[i])))
						continue;
					if (ve[j].st[at] == A_NEW && at == 2) {
						ve[j].st[at] = A_MIXED;
					} else if (ve[j].st[at] == A_NEW) {
						*split = true;
						*split_line = fc->line;
					} else if (ve[j].st[at] != A_MIXED) {
						ve[j].st[at] = A_SAME;
					}
				}
				continue;
			}
			/* a value edit of the vertex at this place */
			fv[3 * i + (uint32_t)c] = sv[c];
			for (int at = 0; at < 3 && !*split; at++) {
				if ((at == 1 && (!mv->uv || k->t < 0)) ||
				    (at == 2 && (!mv->nrm || k->n < 0 || moved[i])))
					continue;
				if (!note_attr(o, mv, ve, at, sv[c], k, fc->line)) {
					*split = true;
					*split_line = fc->line;
				}
			}
		}
	}
	if (*split)
		goto out;
	/* vertices no face uses: by index, when the object lists every vertex */
	if (mv->vend - mv->vbase == mv->nv) {
		uint8_t *used = calloc((size_t)mv->nv + 1, 1);
		if (!used) {
			e = lfs_nomem(a->p.err, "apply view");
			goto out;
		}
		for (uint32_t i = 0; i < mv->nf * 3; i++)
			used[me->faces[i / 3].v[i % 3]] = 1;
		for (uint32_t j = 0; j < mv->nv; j++) {
			if (used[j])
				continue;
			lfs_obj_corner k = { (int64_t)(mv->vbase + j), -1, -1, 0 };
			if (mv->uv && mv->tend - mv->tbase == mv->nv)
				k.t = (int64_t)(mv->tbase + j);
			if (mv->nrm && mv->nend - mv->nbase == mv->nv)
				k.n = (int64_t)(mv->nbase + j);
			for (int at = 0; at < 3; at++)
				if ((at == 0 || (at == 1 && k.t >= 0) || (at == 2 && k.n >= 0)))
					note_attr(o, mv, ve, at, j, &k, o->v_at[k.v].line);
		}
		free(used);
	}
	for (uint32_t j = 0; j < mv->nv && !e; j++) {
		const vedit *x = &ve[j];
		for (int k = 0; k < 3 && !e && x->st[0] == A_NEW; k++)
			if (!nwn_feq(me->verts[3 * j + (uint32_t)k], x->val[k]))
				e = nwn_patch_set_vert(&a->p, mv->node, j, k, x->val[k]);
		for (uint32_t k = 0; k < 2 && !e && x->st[1] == A_NEW; k++)
			if (!nwn_feq(me->tverts[0][2 * j + k], x->val[3 + k])) {
				me->tverts[0][2 * j + k] = x->val[3 + k];
				e = nwn_patch_raw_f32(&a->p, me->tverts_raw[0], 2 * (size_t)j + k, x->val[3 + k]);
			}
		for (uint32_t k = 0; k < 3 && !e && x->st[2] == A_NEW; k++)
			if (!nwn_feq(me->normals[3 * j + k], x->val[5 + k])) {
				me->normals[3 * j + k] = x->val[5 + k];
				e = nwn_patch_raw_f32(&a->p, me->normals_raw, 3 * (size_t)j + k, x->val[5 + k]);
			}
	}
	for (uint32_t i = 0; i < mv->nf && !e; i++)
		for (int c = 0; c < 3 && !e; c++)
			if (fv[3 * i + (uint32_t)c] != me->faces[i].v[c])
				e = nwn_patch_set_face_v(&a->p, mv->node, i, c, (uint16_t)fv[3 * i + (uint32_t)c]);
out:
	free(ve);
	free(fv);
	free(moved);
	return e;
}

/* Are the faces of mesh @p me all inside its vertex list (as the views show
 * them: a face outside is left out of the OBJ)? */
static bool faces_shown(const nwn_mesh *me)
{
	uint32_t nv = me->verts ? me->n_verts : 0, nf = me->faces ? me->n_faces : 0;
	for (uint32_t i = 0; i < nf; i++)
		for (int c = 0; c < 3; c++)
			if (me->faces[i].v[c] >= nv)
				return false;
	return true;
}

lfs_err ap_apply_obj(ap *a, const char *text, size_t tn)
{
	nwn_model *m = a->p.m;
	uint32_t idx = a->target.node;
	nwn_node *n = &m->geom.nodes[idx];
	nwn_mesh *me = n->mesh;
	lfs_obj o;
	lfs_err e = lfs_obj_read(a->p.file, text, tn, &nwn_obj_rules_nums, &o, a->p.err);
	if (e)
		goto out;
	if (!faces_shown(me)) {
		e = lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: this mesh's OBJ does not show every vertex and face", a->p.file);
		goto out;
	}
	uint32_t nv = me->verts ? me->n_verts : 0, nf = me->faces ? me->n_faces : 0;
	bool tri = true;
	for (size_t i = 0; i < o.nf; i++)
		tri = tri && o.f[i].n == 3;
	if (o.nf != nf || !tri) {
		size_t ntri = 0;
		for (size_t i = 0; i < o.nf; i++)
			ntri += o.f[i].n - 2;
		e = ap_structural(a, 1, 1, "%zu faces (%zu triangles), the binary has %u", o.nf, ntri, nf);
		goto out;
	}
	mview mv = { .node = idx, .me = me, .nv = nv, .nf = nf, .pos = me->verts,
		     .uv = me->tverts[0], .nrm = me->normals,
		     .vend = o.nv, .tend = o.nt, .nend = o.nn };
	bool split = false;
	uint32_t line = 1;
	e = match_mesh(a, &o, 0, o.nf, &mv, &split, &line);
	if (!e && split)
		e = ap_structural(a, line, 1,
				  "a face corner gives a vertex other values than another corner "
				  "of it (the compiler would split vertices)");
out:
	lfs_obj_free(&o);
	return e;
}

/* ---- model.obj ------------------------------------------------------------------- */

/* Is mesh node @p n in model.obj (nwn_obj_model()'s rule)? */
static bool in_model_obj(const nwn_node *n)
{
	const nwn_mesh *me = n->mesh;
	return me && me->render != 0 && !me->aabb && !(n->flags & NWN_HAS_AABB);
}

lfs_err ap_apply_model_obj(ap *a, const char *text, size_t tn)
{
	nwn_model *m = a->p.m;
	const nwn_geometry *g = &m->geom;
	size_t nn = g->n_nodes ? g->n_nodes : 1;
	lfs_obj o;
	lfs_nameset ns;
	lfs_nameset_init(&ns);
	const char **names = calloc(nn, sizeof(*names));
	uint32_t *seen = calloc(nn, sizeof(*seen)); /* line of the node's `o`, 0 = none */
	double *t = malloc(nn * 3 * sizeof(double)), *q = malloc(nn * 4 * sizeof(double)),
	       *s = malloc(nn * sizeof(double));
	float *pos = NULL, *nrm = NULL;
	double *wpos = NULL;
	lfs_err e = lfs_obj_read(a->p.file, text, tn, &nwn_obj_rules_nums, &o, a->p.err);
	if (e)
		goto out;
	if (!names || !seen || !t || !q || !s) {
		e = lfs_nomem(a->p.err, "apply view");
		goto out;
	}
	nwn_obj_transforms(g, t, q, s);
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (g->nodes[i].mesh && !(names[i] = lfs_nameset_add(&ns, g->nodes[i].name))) {
			e = lfs_nomem(a->p.err, "apply view");
			goto out;
		}
	/* objects: from one `o` line to the next */
	size_t first_o = o.ns;
	for (size_t i = 0; i < o.ns && first_o == o.ns; i++)
		if (o.s[i].kind == LFS_OBJ_O)
			first_o = i;
	size_t before = first_o < o.ns ? o.s[first_o].nf : o.nf;
	if (before) {
		e = lfs_fail_at(a->p.err, a->p.file, o.f[0].line, o.f[0].col,
				"a face before the first 'o' line: model.obj faces belong to objects "
				"named after mesh nodes");
		goto out;
	}
	for (size_t si = first_o; si < o.ns && !e; si++) {
		const lfs_obj_stmt *st = &o.s[si];
		if (st->kind != LFS_OBJ_O)
			continue;
		size_t next = si + 1;
		while (next < o.ns && o.s[next].kind != LFS_OBJ_O)
			next++;
		const lfs_obj_stmt *nx = next < o.ns ? &o.s[next] : NULL;
		uint32_t idx = UINT32_MAX;
		for (uint32_t i = 0; i < g->n_nodes && idx == UINT32_MAX; i++)
			if (names[i] && st->arg && strlen(names[i]) == st->arg_len &&
			    !memcmp(names[i], st->arg, st->arg_len))
				idx = i;
		uint32_t col = st->arg ? st->arg_col : st->col;
		int alen = st->arg ? (int)(st->arg_len > 64 ? 64 : st->arg_len) : 0;
		const char *an = st->arg ? st->arg : "";
		if (idx == UINT32_MAX) {
			e = lfs_fail_at(a->p.err, a->p.file, st->line, col,
					"unknown object '%.*s': model.obj objects are the rendered mesh "
					"nodes, named as in meshes/ (new objects cannot be added here)",
					alen, an);
			break;
		}
		const nwn_node *nd = &g->nodes[idx];
		if (!in_model_obj(nd)) {
			e = lfs_fail_at(a->p.err, a->p.file, st->line, col,
					"object '%.*s' is not in model.obj (not rendered or a walkmesh): "
					"edit meshes/%s.obj", alen, an, names[idx]);
			break;
		}
		if (seen[idx]) {
			e = lfs_fail_at(a->p.err, a->p.file, st->line, col,
					"object '%.*s' appears twice (first on line %u)", alen, an,
					seen[idx]);
			break;
		}
		seen[idx] = st->line;
		nwn_mesh *me = nd->mesh;
		uint32_t nv = me->verts ? me->n_verts : 0, nf = me->faces ? me->n_faces : 0;
		size_t f0 = st->nf, f1 = nx ? nx->nf : o.nf;
		bool tri = true;
		for (size_t f = f0; f < f1; f++)
			tri = tri && o.f[f].n == 3;
		if (!faces_shown(me)) {
			e = lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				     "%s: mesh node %s has faces outside its vertex list", a->p.file,
				     names[idx]);
			break;
		}
		if (f1 - f0 != nf || !tri) {
			e = lfs_fail_at(a->p.err, a->p.file, st->line, col,
					"object '%.*s' has %zu faces%s, mesh node %s has %u triangles: "
					"model.obj edits values only (add or remove faces in meshes/%s.obj)",
					alen, an, f1 - f0, tri ? "" : " (not all triangles)", names[idx], nf,
					names[idx]);
			break;
		}
		/* the values as model.obj shows them (nwn_obj_model()) */
		free(pos);
		free(nrm);
		free(wpos);
		pos = malloc(((size_t)nv * 3 + 1) * sizeof(float));
		wpos = malloc(((size_t)nv * 3 + 1) * sizeof(double));
		nrm = me->normals ? malloc(((size_t)nv * 3 + 1) * sizeof(float)) : NULL;
		if (!pos || !wpos || (me->normals && !nrm)) {
			e = lfs_nomem(a->p.err, "apply view");
			break;
		}
		const double *qi = q + 4 * (size_t)idx, *ti = t + 3 * (size_t)idx;
		for (uint32_t v = 0; v < nv; v++) {
			double p[3] = { me->verts[3 * v], me->verts[3 * v + 1], me->verts[3 * v + 2] }, r[3];
			nwn_quat_rotate(qi, p, r);
			for (int k = 0; k < 3; k++) {
				wpos[3 * v + (uint32_t)k] = ti[k] + s[idx] * r[k];
				pos[3 * v + (uint32_t)k] = (float)wpos[3 * v + (uint32_t)k];
			}
			if (nrm) {
				double pn[3] = { me->normals[3 * v], me->normals[3 * v + 1], me->normals[3 * v + 2] };
				nwn_quat_rotate(qi, pn, r);
				for (int k = 0; k < 3; k++)
					nrm[3 * v + (uint32_t)k] = (float)(s[idx] < 0 ? -r[k] : r[k]);
			}
		}
		mview mv = { .node = idx, .me = me, .nv = nv, .nf = nf, .pos = pos,
			     .uv = me->tverts[0], .nrm = nrm, .world = true, .wpos = wpos,
			     .s = s[idx], .vbase = st->nv, .tbase = st->nt, .nbase = st->nn,
			     .vend = nx ? nx->nv : o.nv, .tend = nx ? nx->nt : o.nt,
			     .nend = nx ? nx->nn : o.nn };
		memcpy(mv.t, ti, sizeof(mv.t));
		memcpy(mv.q, qi, sizeof(mv.q));
		bool split = false;
		uint32_t line = st->line;
		e = match_mesh(a, &o, f0, f1, &mv, &split, &line);
		if (!e && split)
			e = lfs_fail_at(a->p.err, a->p.file, line, 1,
					"a face corner gives a vertex of '%s' other values than another "
					"corner of it (that needs split vertices: edit meshes/%s.obj)",
					names[idx], names[idx]);
	}
	for (uint32_t i = 0; i < g->n_nodes && !e; i++) {
		const nwn_mesh *me = g->nodes[i].mesh;
		if (names[i] && in_model_obj(&g->nodes[i]) && !seen[i] &&
		    ((me->verts && me->n_verts) || (me->faces && me->n_faces)))
			e = lfs_fail_at(a->p.err, a->p.file, o.lines ? o.lines : 1, 1,
					"object '%s' is missing: model.obj cannot remove meshes (edit "
					"model.mdl)", names[i]);
	}
out:
	lfs_obj_free(&o);
	lfs_nameset_free(&ns);
	free(names);
	free(seen);
	free(t);
	free(q);
	free(s);
	free(pos);
	free(nrm);
	free(wpos);
	return e;
}

/* ---- OBJ: structural edits --------------------------------------------------------- */

/*
 * Text vertex of the model.mdl built from an OBJ corner. Welded (j >= 0):
 * stored vertex j, its position bits; uv and normal its stored bits where
 * t / n are -1, else OBJ vt t / vn n (n == -2: computed from the faces at
 * OBJ position v). New (j == -1): OBJ position v, vt t (-1: none), vn n
 * (-1: none, -2: computed).
 */
typedef struct ckey {
	int32_t j, v, t, n;
} ckey;

static int ckey_cmp(const ckey *x, const ckey *y)
{
	const int32_t a[4] = { x->j, x->v, x->t, x->n }, b[4] = { y->j, y->v, y->t, y->n };
	for (int i = 0; i < 4; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* A stored vertex by its x, for the sort. */
typedef struct xent {
	float x;
	uint32_t i;
} xent;

static int xent_cmp(const void *p, const void *q)
{
	const xent *a = p, *b = q;
	if (a->x != b->x)
		return a->x < b->x ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* The stored vertices of a mesh sorted by x, to find the ones whose shown
 * position an OBJ `v` states (docs/formats/obj-csv.md, "Saving OBJ from
 * other programs"). */
typedef struct welder {
	const nwn_mesh *me;
	xent *byx;     /* vertices with a finite x, by x */
	uint32_t nbyx;
	uint32_t *odd; /* vertices with a non-finite x: always tried */
	uint32_t nodd;
	double gmax;   /* largest |component| of a finite stored position */
	int32_t *claim;	  /* per stored vertex: the first OBJ position welded to it, -1 none */
	uint32_t *scratch; /* room for every stored vertex (weld_cands()) */
	int32_t *anchor;   /* per OBJ position: weld_anchor() */
} welder;

static bool welder_init(welder *w, const nwn_mesh *me, uint32_t nv)
{
	memset(w, 0, sizeof(*w));
	w->me = me;
	w->byx = malloc(((size_t)nv + 1) * sizeof(xent));
	w->odd = malloc(((size_t)nv + 1) * sizeof(uint32_t));
	w->claim = malloc(((size_t)nv + 1) * sizeof(int32_t));
	w->scratch = malloc(((size_t)nv + 1) * sizeof(uint32_t));
	if (!w->byx || !w->odd || !w->claim || !w->scratch)
		return false;
	for (uint32_t i = 0; i < nv; i++)
		w->claim[i] = -1;
	for (uint32_t i = 0; i < nv; i++) {
		const float *p = me->verts + 3 * (size_t)i;
		if (!isfinite(p[0])) {
			w->odd[w->nodd++] = i;
			continue;
		}
		w->byx[w->nbyx++] = (xent){ p[0], i };
		for (int k = 0; k < 3; k++)
			if (isfinite(p[k]) && fabs((double)p[k]) > w->gmax)
				w->gmax = fabs((double)p[k]);
	}
	qsort(w->byx, w->nbyx, sizeof(xent), xent_cmp);
	return true;
}

static void welder_free(welder *w)
{
	free(w->byx);
	free(w->odd);
	free(w->claim);
	free(w->scratch);
	free(w->anchor);
}

/* The stored vertices whose shown position OBJ position @p pn (3 numbers)
 * states, into @p out (room for every stored vertex); returns their count. */
static uint32_t weld_cands(const welder *w, const lfs_obj_num *pn, uint32_t *out)
{
	const nwn_mesh *me = w->me;
	uint32_t nc = 0;
	int16_t prec = lfs_obj_num_prec(&pn[0]);
	double half = prec < 0 ? 0.0 : 0.5 * pow(10.0, -(double)prec);
	double win = half + FLT_EPSILON * w->gmax + fabs(pn[0].value) * 1e-7 + 1e-30;
	double lo = pn[0].value - win, hi = pn[0].value + win;
	/* first vertex with x >= lo */
	uint32_t a = 0, b = w->nbyx;
	while (a < b) {
		uint32_t mid = a + (b - a) / 2;
		if ((double)w->byx[mid].x < lo)
			a = mid + 1;
		else
			b = mid;
	}
	for (uint32_t r = a; r < w->nbyx && (double)w->byx[r].x <= hi; r++)
		if (lfs_obj_vec_keeps(pn, me->verts + 3 * (size_t)w->byx[r].i, 3) == 7)
			out[nc++] = w->byx[r].i;
	for (uint32_t r = 0; r < w->nodd; r++)
		if (lfs_obj_vec_keeps(pn, me->verts + 3 * (size_t)w->odd[r], 3) == 7)
			out[nc++] = w->odd[r];
	return nc;
}

/* How well OBJ corner (t, n) states the uv and normal of stored vertex @p j
 * (whose position it states): 3 both, 2 the uv, 1 the normal, 0 neither. */
static int weld_tier(const welder *w, const lfs_obj *o, uint32_t j, int32_t t, int32_t n, bool *uv_ok, bool *n_ok)
{
	const nwn_mesh *me = w->me;
	bool u = !me->tverts[0] || t < 0 || lfs_obj_vec_keeps(o->vt_num + 2 * (size_t)t, me->tverts[0] + 2 * (size_t)j, 2) == 3;
	bool nn = !me->normals || n < 0 || lfs_obj_normal_keeps(o->vn_num + 3 * (size_t)n, me->normals + 3 * (size_t)j);
	*uv_ok = u;
	*n_ok = nn;
	return (u ? 2 : 0) + (nn ? 1 : 0);
}

/*
 * Which stored vertex each OBJ position most likely is, by order: OBJ
 * positions in index order matched to stored vertices in index order, each
 * to the first stored vertex at or after the previous match that the first
 * corner at that position states best (position, then uv and normal; a
 * position no corner uses: by position); none: a new position, the next one
 * goes on from there. An unedited list pairs v with v; an editor that
 * deleted vertices lists the rest in order, shifted.
 */
static bool weld_anchor(welder *w, const objdoc *de)
{
	const lfs_obj *o = &de->o;
	uint32_t nv = de->nv;
	int32_t *rep = malloc(((size_t)nv * 2 + 1) * sizeof(int32_t));
	w->anchor = malloc(((size_t)nv + 1) * sizeof(int32_t));
	if (!w->anchor || !rep) {
		free(rep);
		return false;
	}
	for (uint32_t p = 0; p < 2 * nv; p++)
		rep[p] = -2;
	for (size_t c = (size_t)de->nf * 3; c-- > 0;) {
		const int32_t *f = de->f + 3 * c;
		rep[2 * f[0]] = f[1];
		rep[2 * f[0] + 1] = f[2];
	}
	uint32_t s = 0;
	for (uint32_t p = 0; p < nv; p++) {
		uint32_t nc = weld_cands(w, o->v_num + 3 * (size_t)p, w->scratch);
		int32_t t = rep[2 * p] < 0 ? -1 : rep[2 * p], n = rep[2 * p + 1] < 0 ? -1 : rep[2 * p + 1];
		int top = -1;
		int32_t best = -1;
		for (uint32_t i = 0; i < nc; i++) {
			uint32_t j = w->scratch[i];
			bool u, nn;
			int tier = weld_tier(w, o, j, t, n, &u, &nn);
			if (j < s)
				continue;
			if (tier > top || (tier == top && j < (uint32_t)best)) {
				top = tier;
				best = (int32_t)j;
			}
		}
		w->anchor[p] = best;
		if (best >= 0)
			s = (uint32_t)best + 1;
	}
	free(rep);
	return true;
}

/* Between stored vertices @p j and @p best that an OBJ corner at position
 * @p v states equally well: is @p j the better? The stored vertex that
 * position pairs with by order (weld_anchor()); then one no other OBJ
 * position was welded to; then the nearer index; then the lower. */
static bool weld_better(const welder *w, int32_t v, int32_t j, int32_t best)
{
	int32_t an = w->anchor[v];
	if (best < 0 || j == an || best == an)
		return best < 0 || j == an;
	bool fj = w->claim[j] < 0 || w->claim[j] == v, fb = w->claim[best] < 0 || w->claim[best] == v;
	if (fj != fb)
		return fj;
	int64_t ref = an >= 0 ? an : v;
	int64_t dj = llabs((int64_t)j - ref), db = llabs((int64_t)best - ref);
	return dj != db ? dj < db : j < best;
}

/*
 * The stored vertex OBJ corner (v, t, n) (0-based, -1 absent) states, by
 * the printed-precision rule: among the stored vertices whose shown
 * position v states, the one whose uv and normal it also states, else the
 * one whose uv, else whose normal it states; ties as weld_better() says.
 * Returns -1 when no stored position is stated; @p *uv_ok / @p *n_ok tell
 * whether the stored uv / normal of the result stand.
 */
static int32_t weld_corner(const welder *w, const lfs_obj *o, int32_t v, int32_t t, int32_t n, bool *uv_ok,
			   bool *n_ok)
{
	int32_t best = -1;
	int best_tier = -1;
	bool bu = false, bn = false;
	uint32_t nc = weld_cands(w, o->v_num + 3 * (size_t)v, w->scratch);
	for (uint32_t i = 0; i < nc; i++) {
		uint32_t j = w->scratch[i];
		bool u, nn;
		int tier = weld_tier(w, o, j, t, n, &u, &nn);
		if (tier > best_tier || (tier == best_tier && weld_better(w, v, (int32_t)j, best))) {
			best = (int32_t)j;
			best_tier = tier;
			bu = u;
			bn = nn;
		}
	}
	*uv_ok = bu;
	*n_ok = bn;
	return best;
}

/*
 * Pair the triangles of @p de with stored faces, by order: each with the
 * first stored face at or after the previous pair whose three vertices its
 * corners state (position, uv and normal; in any rotation). Editors keep
 * the order of the faces they do not touch, so this finds the stored
 * vertex of each corner even among copies with equal values (which the
 * compiler leaves where faces do not share an edge). @p fm[i]: the stored
 * face of triangle i or -1, @p rot[i]: stored corner of its corner 0.
 */
static bool weld_faces(welder *w, const objdoc *de, int32_t *fm, uint8_t *rot)
{
	const nwn_mesh *me = w->me;
	const lfs_obj *o = &de->o;
	uint32_t nv = me->verts ? me->n_verts : 0, nf = me->verts && me->faces ? me->n_faces : 0;
	uint32_t *off = calloc((size_t)nv + 2, sizeof(uint32_t));
	uint32_t *vf = malloc(((size_t)nf * 3 + 1) * sizeof(uint32_t));
	if (!off || !vf) {
		free(off);
		free(vf);
		return false;
	}
	/* stored faces by vertex, ascending */
	for (uint32_t g = 0; g < nf; g++)
		for (int c = 0; c < 3; c++)
			off[me->faces[g].v[c] + 1]++;
	for (uint32_t j = 0; j < nv; j++)
		off[j + 1] += off[j];
	uint32_t *fill = malloc(((size_t)nv + 1) * sizeof(uint32_t));
	if (!fill) {
		free(off);
		free(vf);
		return false;
	}
	memcpy(fill, off, (size_t)nv * sizeof(uint32_t));
	for (uint32_t g = 0; g < nf; g++)
		for (int c = 0; c < 3; c++)
			if (c == 0 || me->faces[g].v[c] != me->faces[g].v[c - 1])
				vf[fill[me->faces[g].v[c]]++] = g;
	uint32_t s = 0;
	for (uint32_t i = 0; i < de->nf; i++) {
		const int32_t *f = de->f + 9 * (size_t)i;
		fm[i] = -1;
		uint32_t nc = weld_cands(w, o->v_num + 3 * (size_t)f[0], w->scratch);
		for (uint32_t x = 0; x < nc; x++) {
			uint32_t j = w->scratch[x];
			bool u, nn;
			if (weld_tier(w, o, j, f[1], f[2], &u, &nn) != 3)
				continue;
			for (uint32_t q = off[j]; q < fill[j]; q++) {
				uint32_t g = vf[q];
				if (g < s || (fm[i] >= 0 && g >= (uint32_t)fm[i]))
					continue;
				const uint16_t *sv = me->faces[g].v;
				for (int r = 0; r < 3; r++) {
					bool all = sv[r] == j;
					for (int c = 1; c < 3 && all; c++) {
						uint16_t jj = sv[(r + c) % 3];
						all = lfs_obj_vec_keeps(o->v_num + 3 * (size_t)f[3 * c], me->verts + 3 * (size_t)jj, 3) == 7 &&
						      weld_tier(w, o, jj, f[3 * c + 1], f[3 * c + 2], &u, &nn) == 3;
					}
					if (all) {
						fm[i] = (int32_t)g;
						rot[i] = (uint8_t)r;
						break;
					}
				}
			}
		}
		if (fm[i] >= 0) {
			s = (uint32_t)fm[i] + 1;
			for (int c = 0; c < 3; c++) {
				uint16_t jj = me->faces[fm[i]].v[(rot[i] + c) % 3];
				if (w->claim[jj] < 0)
					w->claim[jj] = f[3 * c];
			}
		}
	}
	free(off);
	free(vf);
	free(fill);
	return true;
}

/* The key of corner (@p v, @p t, @p n) of @p de (0-based OBJ indices, -1
 * absent), welded to the stored vertices of @p w: to stored vertex @p fj
 * when >= 0 (a corner of a face matched to a stored face, which states all
 * its values), else by weld_corner(). */
static ckey corner_key(welder *w, const objdoc *de, int32_t v, int32_t t, int32_t n, int32_t fj)
{
	const nwn_mesh *me = w->me;
	ckey k = { fj, v, t, n };
	bool uv_ok = fj >= 0, n_ok = fj >= 0;
	if (fj < 0 && w->anchor)
		k.j = weld_corner(w, &de->o, v, t, n, &uv_ok, &n_ok);
	if (k.j >= 0) {
		if (w->claim[k.j] < 0)
			w->claim[k.j] = v;
		/* stored bits where the corner states them */
		if (me->tverts[0] && uv_ok)
			k.t = -1;
		if (me->normals && n_ok)
			k.n = -1;
		else if (k.n < 0 && de->nvn)
			k.n = -2;
		if (k.n != -2)
			k.v = -1;
		return k;
	}
	if (k.t < 0)
		k.t = (uint32_t)k.v < de->nvt ? k.v : -1;
	if (k.n < 0)
		k.n = (uint32_t)k.v < de->nvn ? k.v : (de->nvn || me->normals ? -2 : -1);
	return k;
}

/* A text vertex: its key, where it sorts, the first corner using it. */
typedef struct tvx {
	ckey k;
	int64_t base; /* stored vertex, else OBJ position (after the stored ones when past them) */
	uint32_t first; /* first corner using it */
	uint32_t id;	/* index before the sort */
} tvx;

static int tvx_order(const void *x, const void *y)
{
	const tvx *a = x, *b = y;
	if (a->base != b->base)
		return a->base < b->base ? -1 : 1;
	/* the stored vertex as stored first, then variants by first use */
	bool pa = a->k.j >= 0 && a->k.t == -1 && a->k.n == -1, pb = b->k.j >= 0 && b->k.t == -1 && b->k.n == -1;
	if (pa != pb)
		return pa ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/* A corner by its key, for the dedup. */
typedef struct kent {
	ckey k;
	uint32_t c;
} kent;

static int kent_cmp(const void *p, const void *q)
{
	const kent *a = p, *b = q;
	int r = ckey_cmp(&a->k, &b->k);
	return r ? r : (a->c < b->c ? -1 : a->c > b->c);
}

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

/*
 * The model.mdl text of the model with mesh node @p idx rebuilt from the
 * edited OBJ @p de (docs/formats/obj-csv.md, "Saving OBJ from other
 * programs"; docs/nwn-compile.md "Structural edits"). Welding: a triangle
 * whose corners state (at the precision written) the position, uv and
 * normal of the three vertices of a stored face is paired with it, by order
 * (weld_faces()), and its corners are those vertices; any other corner is
 * welded to the stored vertex whose values it states best (weld_corner()).
 * A welded corner is that vertex with its stored bits (a uv or normal it
 * does not state: that value as written, a variant of the vertex). A
 * corner that states no stored position is a new vertex with the values as
 * written: one per distinct (v, vt, vn), a corner without vt taking the vt
 * of its v index (else 0, 0), without vn (when normals exist) the
 * normalised sum of the raw normals of the faces using its position that
 * way. An OBJ position no corner uses is a text vertex too (welded by
 * position; the compiler counts it in the bounds, then drops it). Text
 * vertices are ordered by stored vertex (new ones by OBJ position index),
 * so deleting faces (and the vertices only they used) in the OBJ gives the
 * text of the same deletion in model.mdl. Vertex data the OBJ does not show
 * (colours, skin weights, dangly constraints, tverts1..3) comes from the
 * welded vertex, for a new vertex from the stored vertex of its v index
 * when the OBJ lists as many vertices as the mesh, else from the nearest
 * stored vertex; a face takes the surface id of its paired stored face,
 * else of the stored face with the same welded vertices (in any rotation),
 * else of the first stored face sharing a welded vertex, else 0.
 */
static lfs_err obj_to_mdl(ap *a, const uint8_t *orig, size_t n, int32_t idx, const objdoc *de, lfs_sb *out)
{
	nwn_model *m = NULL;
	lfs_err e = nwn_mdl_decode(orig, n, &m, a->p.err);
	if (e)
		return e;
	nwn_node *node = &m->geom.nodes[idx];
	nwn_mesh *me = node->mesh;
	uint32_t onv = me->verts ? me->n_verts : 0, onf = me->faces ? me->n_faces : 0;
	size_t nc = (size_t)de->nf * 3;
	size_t nce = nc + de->nv; /* corners, then OBJ positions */
	kent *ke = malloc((nce + 1) * sizeof(kent));
	uint32_t *cidx = malloc((nce + 1) * sizeof(uint32_t));
	tvx *tx = malloc((nce + 1) * sizeof(tvx));
	uint32_t *rank = malloc((nce + 1) * sizeof(uint32_t));
	int32_t *fm = malloc(((size_t)de->nf + 1) * sizeof(int32_t));
	uint8_t *frot = calloc((size_t)de->nf + 1, 1);
	uint32_t nk = 0;
	float *verts = NULL, *tv[4] = { 0 }, *nrm = NULL, *cn = NULL, *con = NULL, *wts = NULL;
	uint32_t *col = NULL;
	int16_t *brf = NULL;
	nwn_face *faces = NULL;
	welder w = { 0 };
	if (!ke || !cidx || !tx || !rank || !fm || !frot || !welder_init(&w, me, onv) ||
	    (de->o.v_num && !weld_anchor(&w, de))) {
		e = lfs_nomem(a->p.err, "apply view");
		goto out;
	}
	if (me->anim && (me->anim->n_vert_sets || me->anim->n_tvert_sets)) {
		e = lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: adding or removing vertices or faces of an animmesh with vertex sets is not "
			     "supported (edit model.mdl)", a->p.file);
		goto out;
	}
	for (uint32_t i = 0; i < de->nf; i++)
		fm[i] = -1;
	/* one text vertex per distinct key, ordered by tvx_order; an OBJ
	 * position no corner uses is one too, welded by its position (the
	 * compiler's bounds, average and radius count every text vertex, as a
	 * vertex line model.mdl keeps without a face) */
	uint8_t *vused = calloc((size_t)de->nv + 1, 1);
	if (!vused) {
		e = lfs_nomem(a->p.err, "apply view");
		goto out;
	}
	size_t ne = 0;
	if (w.anchor && !weld_faces(&w, de, fm, frot)) {
		free(vused);
		e = lfs_nomem(a->p.err, "apply view");
		goto out;
	}
	for (size_t c = 0; c < nc; c++) {
		const int32_t *f = de->f + 3 * c;
		int32_t g = fm[c / 3];
		int32_t fj = g >= 0 ? me->faces[g].v[(frot[c / 3] + c % 3) % 3] : -1;
		vused[f[0]] = 1;
		ke[ne++] = (kent){ corner_key(&w, de, f[0], f[1], f[2], fj), (uint32_t)c };
	}
	for (uint32_t v = 0; v < de->nv; v++)
		if (!vused[v])
			ke[ne++] = (kent){ corner_key(&w, de, (int32_t)v, -1, -1, -1), (uint32_t)(nc + v) };
	free(vused);
	qsort(ke, ne, sizeof(kent), kent_cmp);
	for (size_t c = 0; c < ne; c++) {
		if (c == 0 || ckey_cmp(&ke[c].k, &ke[c - 1].k)) {
			const ckey *k = &ke[c].k;
			int64_t base = k->j >= 0 ? k->j : (uint32_t)k->v < onv ? k->v : (int64_t)onv + k->v;
			tx[nk] = (tvx){ *k, base, ke[c].c, nk };
			nk++;
		}
		cidx[ke[c].c] = nk - 1;
	}
	qsort(tx, nk, sizeof(tvx), tvx_order);
	for (uint32_t i = 0; i < nk; i++)
		rank[tx[i].id] = i;
	for (size_t c = 0; c < nc; c++)
		cidx[c] = rank[cidx[c]];
	if (nk > 65535) {
		e = lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: %u vertices after splitting (the binary holds at most 65535)", a->p.file, nk);
		goto out;
	}
	/* normals computed for corners without one: per position, the sum of the
	 * raw normals of the faces using it that way */
	cn = calloc((size_t)de->nv * 3 + 1, sizeof(float));
	verts = malloc(((size_t)nk * 3 + 1) * sizeof(float));
	faces = calloc((size_t)de->nf + 1, sizeof(nwn_face));
	if (!cn || !verts || !faces) {
		e = lfs_nomem(a->p.err, "apply view");
		goto out;
	}
	for (uint32_t f = 0; f < de->nf; f++) {
		const float *p0 = de->v + 3 * de->f[9 * f], *p1 = de->v + 3 * de->f[9 * f + 3],
			    *p2 = de->v + 3 * de->f[9 * f + 6];
		double u[3] = { (double)p1[0] - p0[0], (double)p1[1] - p0[1], (double)p1[2] - p0[2] };
		double x[3], wv[3] = { (double)p2[0] - p1[0], (double)p2[1] - p1[1], (double)p2[2] - p1[2] };
		x[0] = u[1] * wv[2] - u[2] * wv[1];
		x[1] = u[2] * wv[0] - u[0] * wv[2];
		x[2] = u[0] * wv[1] - u[1] * wv[0];
		for (int c = 0; c < 3; c++)
			if (tx[cidx[3 * f + c]].k.n == -2)
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
		e = lfs_nomem(a->p.err, "apply view");
		goto out;
	}
	for (int t = 1; t < 4; t++)
		if (me->tverts[t] && !(tv[t] = calloc((size_t)nk * 2 + 1, sizeof(float)))) {
			e = lfs_nomem(a->p.err, "apply view");
			goto out;
		}
	if ((has_n && !(nrm = malloc(((size_t)nk * 3 + 1) * sizeof(float)))) ||
	    (me->colors && !(col = malloc(((size_t)nk + 1) * sizeof(uint32_t)))) ||
	    (me->dangly && me->dangly->constraints && !(con = calloc((size_t)nk + 1, sizeof(float)))) ||
	    (me->skin && me->skin->weights && me->skin->bonerefs &&
	     (!(wts = calloc((size_t)nk * 4 + 1, sizeof(float))) ||
	      !(brf = malloc(((size_t)nk * 4 + 1) * sizeof(int16_t)))))) {
		e = lfs_nomem(a->p.err, "apply view");
		goto out;
	}
	for (uint32_t i = 0; i < nk; i++) {
		const ckey *k = &tx[i].k;
		memcpy(verts + 3 * (size_t)i, k->j >= 0 ? me->verts + 3 * (size_t)k->j : de->v + 3 * (size_t)k->v, 12);
		if (tv[0]) {
			if (k->t >= 0 && (uint32_t)k->t < de->nvt)
				memcpy(tv[0] + 2 * (size_t)i, de->vt + 2 * (size_t)k->t, 8);
			else if (k->j >= 0 && me->tverts[0])
				memcpy(tv[0] + 2 * (size_t)i, me->tverts[0] + 2 * (size_t)k->j, 8);
		}
		if (nrm) {
			static const float up[3] = { 0, 0, 1 };
			const float *src = k->n >= 0 && (uint32_t)k->n < de->nvn ? de->vn + 3 * (size_t)k->n
					 : k->n == -2 && k->v >= 0		  ? cn + 3 * (size_t)k->v
					 : k->j >= 0 && me->normals		  ? me->normals + 3 * (size_t)k->j
										  : up;
			memcpy(nrm + 3 * (size_t)i, src, 12);
		}
		/* data the OBJ does not show: the welded vertex; for a new one the
		 * stored vertex of its index while the vertex list kept its length,
		 * else the nearest stored vertex */
		int32_t sv = k->j >= 0			       ? k->j
			     : de->nv == onv && (uint32_t)k->v < onv ? k->v
								     : nearest_vertex(me->verts, onv, de->v + 3 * (size_t)k->v);
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
		int32_t sj[3];
		for (int c = 0; c < 3; c++) {
			x->v[c] = (uint16_t)cidx[3 * f + c];
			sj[c] = tx[cidx[3 * f + c]].k.j;
		}
		/* the stored face paired with it, else the stored face of these
		 * welded vertices (any rotation), else the first sharing one */
		int32_t same = fm[f], share = -1;
		for (uint32_t g = 0; g < onf && same < 0; g++) {
			const uint16_t *o = me->faces[g].v;
			for (int r = 0; r < 3 && same < 0; r++)
				if (sj[0] == o[r] && sj[1] == o[(r + 1) % 3] && sj[2] == o[(r + 2) % 3])
					same = (int32_t)g;
			for (int c = 0; c < 3 && share < 0; c++)
				if (sj[c] >= 0 && (sj[c] == o[0] || sj[c] == o[1] || sj[c] == o[2]))
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
	e = nwn_ascii_write(m, out, a->p.err);
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
	welder_free(&w);
	free(fm);
	free(frot);
	free(ke);
	free(tx);
	free(rank);
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
	nwn_model_free(m);
	return e;
}

/* Structural edit of a mesh OBJ: the model.mdl text with that node rebuilt,
 * then the model.mdl ap_structural path. */
lfs_err ap_structural_obj(ap *a, const uint8_t *orig, size_t n, const char *text, size_t tn,
			      nwn_supermodel_lookup_fn lookup, void *ctx, uint8_t **out, size_t *outn)
{
	int32_t idx = (int32_t)a->target.node;
	objdoc de = { 0 };
	lfs_sb sb = { 0 };
	lfs_err e = objdoc_read(a, text, tn, &de);
	if (!e)
		e = obj_to_mdl(a, orig, n, idx, &de, &sb);
	if (!e) {
		char name[600];
		snprintf(name, sizeof(name), "%s (as model.mdl)", a->p.file);
		e = nwn_apply_structural(orig, n, name, sb.data, sb.len, lookup, ctx, out, outn, a->p.err);
	}
	lfs_sb_free(&sb);
	objdoc_free(&de);
	return e;
}

