/**
 * @file nwn_apply_obj.c
 * meshes/<node>.obj edits: the text read by the shared OBJ reader (obj.h)
 * with NWN's rules, faces split into fans of triangles; vertex positions and
 * face corners patched in place; added or removed vertices or faces become
 * an OBJ -> model.mdl rewrite compiled by the structural apply
 * (nwn_apply_struct.c).
 */

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/floatfmt.h"
#include "../common/mem.h"
#include "../common/strbuf.h"
#include "nwn_apply_priv.h"
#include "names.h"
#include "nwn_apply_struct.h"
#include "nwn_ascii.h"
#include "nwn_obj.h"
#include "obj.h"

/*
 * What NWN accepts in a mesh OBJ: v, vt (a w only when 0), vn, f (3 to 15
 * corners, indices to elements defined above), o g s usemtl mtllib (not
 * stored per mesh); any other statement is refused. Messages in model.mdl's
 * wording.
 */
static const lfs_obj_rules nwn_obj_rules = {
	.flags = LFS_OBJ_STRICT | LFS_OBJ_DEFINED_ABOVE | LFS_OBJ_VT_W0 | LFS_OBJ_MDL_MSGS,
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
	lfs_err e = lfs_obj_read(a->p.file, text, tn, &nwn_obj_rules, o, a->p.err);
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

lfs_err ap_apply_obj(ap *a, const char *text, size_t tn)
{
	nwn_model *m = a->p.m;
	lfs_nameset ns;
	lfs_nameset_init(&ns);
	uint32_t idx = a->target.node;
	const char *oname = ap_mesh_obj_name(m, idx, &ns);
	lfs_err e = LFS_OK;
	lfs_sb g = { 0 };
	objdoc dg = { 0 }, de = { 0 };
	if (!oname) {
		e = lfs_nomem(a->p.err, "apply view");
		goto out;
	}
	if ((e = nwn_obj_mesh(m, (uint32_t)idx, oname, NULL, &g, a->p.err)))
		goto out;
	if (objdoc_read(a, g.data, g.len, &dg) != LFS_OK) {
		e = lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: this mesh's OBJ does not read back", a->p.file);
		goto out;
	}
	if ((e = objdoc_read(a, text, tn, &de)))
		goto out;
	nwn_node *n = &m->geom.nodes[idx];
	nwn_mesh *me = n->mesh;
	if (dg.nf != (me->faces ? me->n_faces : 0) || dg.nv != (me->verts ? me->n_verts : 0)) {
		e = lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: this mesh's OBJ does not show every vertex and face", a->p.file);
		goto out;
	}
	if (de.nv != dg.nv || de.nvt != dg.nvt || de.nvn != dg.nvn || de.nf != dg.nf) {
		e = ap_structural(a, 1, 1,
			       "%u v / %u vt / %u vn / %u f lines, the binary has %u / %u / %u / %u",
			       de.nv, de.nvt, de.nvn, de.nf, dg.nv, dg.nvt, dg.nvn, dg.nf);
		goto out;
	}
	for (uint32_t i = 0; i < dg.nv * 3 && !e; i++)
		if (!nwn_feq(dg.v[i], de.v[i]))
			e = nwn_patch_set_vert(&a->p, (uint32_t)idx, i / 3, (int)(i % 3), de.v[i]);
	for (uint32_t i = 0; i < dg.nvt * 2 && !e; i++)
		if (!nwn_feq(dg.vt[i], de.vt[i])) {
			me->tverts[0][i] = de.vt[i];
			e = nwn_patch_raw_f32(&a->p, me->tverts_raw[0], i, de.vt[i]);
		}
	for (uint32_t i = 0; i < dg.nvn * 3 && !e; i++)
		if (!nwn_feq(dg.vn[i], de.vn[i])) {
			me->normals[i] = de.vn[i];
			e = nwn_patch_raw_f32(&a->p, me->normals_raw, i, de.vn[i]);
		}
	for (uint32_t f = 0; f < dg.nf && !e; f++) {
		for (uint32_t c = 0; c < 3 && !e; c++) {
			const int32_t *gc = dg.f + 9 * (size_t)f + 3 * c, *ec = de.f + 9 * (size_t)f + 3 * c;
			for (int k = 1; k < 3; k++)
				if ((gc[k] < 0) != (ec[k] < 0) || (ec[k] >= 0 && ec[k] != ec[0]))
					e = ap_structural(a, de.fline[f], 1,
						       "face corner with separate v/vt/vn indices or a "
						       "different form (the compiler would split vertices)");
			if (!e && ec[0] != gc[0])
				e = nwn_patch_set_face_v(&a->p, (uint32_t)idx, f, (int)c, (uint16_t)ec[0]);
		}
	}
out:
	lfs_sb_free(&g);
	objdoc_free(&dg);
	objdoc_free(&de);
	lfs_nameset_free(&ns);
	return e;
}

/* ---- OBJ: ap_structural edits ------------------------------------------------------ */

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
	lfs_err e = nwn_mdl_decode(orig, n, &m, a->p.err);
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
		e = lfs_nomem(a->p.err, "apply view");
		goto out;
	}
	if (me->anim && (me->anim->n_vert_sets || me->anim->n_tvert_sets)) {
		e = lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: adding or removing vertices or faces of an animmesh with vertex sets is not "
			     "supported (edit model.mdl)", a->p.file);
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
		e = lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: %u vertices after splitting (the binary holds at most 65535)", a->p.file, nk);
		goto out;
	}
	/* normals computed for corners without one: per position, the sum of the
	 * raw normals of the faces using it that way */
	cn = calloc((size_t)de->nv * 3 + 1, sizeof(float));
	verts = malloc(((size_t)nk * 3 + 1) * sizeof(float));
	faces = calloc((size_t)de->nf + 1, sizeof(nwn_face));
	vind = malloc((nc + 1) * sizeof(uint16_t));
	if (!cn || !verts || !faces || !vind) {
		e = lfs_nomem(a->p.err, "apply view");
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

