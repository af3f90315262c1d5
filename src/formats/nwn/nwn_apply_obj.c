/**
 * @file nwn_apply_obj.c
 * meshes/<node>.obj edits: the text read by the shared OBJ reader (obj.h)
 * with NWN's rules, faces split into fans of triangles; vertex positions and
 * face corners patched in place (the printed-precision rule, welding), and
 * model.obj's value edits. Added or removed vertices or faces become an
 * OBJ -> model.mdl rewrite (nwn_apply_obj_weld.c) compiled by the structural
 * apply (nwn_apply_struct.c).
 */

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

/* The model-space values of mesh me as model.obj shows them
 * (nwn_obj_model()): rotation qi, translation ti, uniform scale sc; pos and
 * wpos: 3 per vertex (float and double), nrm: 3 per vertex or NULL. */
static void world_values(const nwn_mesh *me, const double *qi, const double *ti, double sc, float *pos,
			 double *wpos, float *nrm)
{
	uint32_t nv = me->verts ? me->n_verts : 0;
	for (uint32_t v = 0; v < nv; v++) {
		double p[3] = { me->verts[3 * v], me->verts[3 * v + 1], me->verts[3 * v + 2] }, r[3];
		nwn_quat_rotate(qi, p, r);
		for (int k = 0; k < 3; k++) {
			wpos[3 * v + (uint32_t)k] = ti[k] + sc * r[k];
			pos[3 * v + (uint32_t)k] = (float)wpos[3 * v + (uint32_t)k];
		}
		if (nrm) {
			double pn[3] = { me->normals[3 * v], me->normals[3 * v + 1], me->normals[3 * v + 2] };
			nwn_quat_rotate(qi, pn, r);
			for (int k = 0; k < 3; k++)
				nrm[3 * v + (uint32_t)k] = (float)(sc < 0 ? -r[k] : r[k]);
		}
	}
}

/* The mesh node of model.obj object st (faces f0 .. f1 of o) into *idx:
 * a rendered mesh node of that name, not seen before (seen: per node the
 * line of its `o`, set here), whose faces model.obj shows as they are
 * (value edits only). names: per node its meshes/ name, NULL if not a mesh. */
static lfs_err object_node(ap *a, const lfs_obj *o, const lfs_obj_stmt *st, size_t f0, size_t f1,
			   const char *const *names, uint32_t *seen, uint32_t *idx_out)
{
	const nwn_geometry *g = &a->p.m->geom;
	lfs_err e;
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
		return e;
	}
	const nwn_node *nd = &g->nodes[idx];
	if (!in_model_obj(nd)) {
		e = lfs_fail_at(a->p.err, a->p.file, st->line, col,
				"object '%.*s' is not in model.obj (not rendered or a walkmesh): "
				"edit meshes/%s.obj", alen, an, names[idx]);
		return e;
	}
	if (seen[idx]) {
		e = lfs_fail_at(a->p.err, a->p.file, st->line, col,
				"object '%.*s' appears twice (first on line %u)", alen, an,
				seen[idx]);
		return e;
	}
	seen[idx] = st->line;
	const nwn_mesh *me = nd->mesh;
	uint32_t nf = me->faces ? me->n_faces : 0;
	bool tri = true;
	for (size_t f = f0; f < f1; f++)
		tri = tri && o->f[f].n == 3;
	if (!faces_shown(me)) {
		e = lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: mesh node %s has faces outside its vertex list", a->p.file,
			     names[idx]);
		return e;
	}
	if (f1 - f0 != nf || !tri) {
		e = lfs_fail_at(a->p.err, a->p.file, st->line, col,
				"object '%.*s' has %zu faces%s, mesh node %s has %u triangles: "
				"model.obj edits values only (add or remove faces in meshes/%s.obj)",
				alen, an, f1 - f0, tri ? "" : " (not all triangles)", names[idx], nf,
				names[idx]);
		return e;
	}
	*idx_out = idx;
	return LFS_OK;
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
		size_t f0 = st->nf, f1 = nx ? nx->nf : o.nf;
		e = object_node(a, &o, st, f0, f1, names, seen, &idx);
		if (e)
			break;
		nwn_mesh *me = g->nodes[idx].mesh;
		uint32_t nv = me->verts ? me->n_verts : 0, nf = me->faces ? me->n_faces : 0;
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
		world_values(me, qi, ti, s[idx], pos, wpos, nrm);
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
