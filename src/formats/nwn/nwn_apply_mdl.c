/**
 * @file nwn_apply_mdl.c
 * model.mdl value edits, one statement at a time: controllers (key rows and
 * key count changes), node attributes (the keyword -> offset table) and lists
 * (verts, faces, tverts, normals, colors, weights, aabb, texture names).
 * Statement matching: nwn_apply_match.c.
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
#include "nwn_ascii.h"

/* ---- model.mdl: statements -------------------------------------------------- */


const char *ap_stmt_key(const mdl_stmt *s)
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
		return lfs_nomem(a->p.err, "apply view");
	lfs_err e;
	if (s->kind == MDL_ST_PLAIN) {
		if (s->head.ntok != nv + 1)
			return ap_perr(a, &s->head, s->head.ntok > nv + 1 ? nv + 1 : s->head.ntok,
				    "expected %u numbers after '%s'", nv, name);
		k->t[0] = 0.0f;
		for (unsigned j = 0; j < nv; j++)
			if ((e = ap_tok_f(a, &s->head, 1 + j, &k->v[j])))
				return e;
		return LFS_OK;
	}
	for (uint32_t r = 0; r < s->n_rows; r++) {
		const mdl_row *row = &s->rows[r];
		if (row->ntok != nv + 1)
			return ap_perr(a, row, row->ntok > nv + 1 ? nv + 1 : row->ntok,
				    "expected a time and %u value(s) in this '%s' key", nv, name);
		if ((e = ap_tok_f(a, row, 0, &k->t[r])))
			return e;
		for (unsigned j = 0; j < nv; j++)
			if ((e = ap_tok_f(a, row, 1 + j, &k->v[(size_t)r * nv + j])))
				return e;
	}
	return LFS_OK;
}

lfs_err ap_mdl_controller(ap *a, nctx *c, const mdl_stmt *gs, const mdl_stmt *es,
			      uint32_t occ, const char *key)
{
	nwn_node *n = &c->g->nodes[c->idx];
	const mdl_stmt *any = es ? es : gs;
	if (!gs || !es)
		return ap_structural(a, any->head.line, any->head.tok[0].col, "controller '%s' %s in node '%s'",
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
		return lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s:%u:%u: controller '%s' of node '%s' cannot be matched", a->p.file,
				es->head.line, es->head.tok[0].col, key, n->name);
	if ((es->kind == MDL_ST_KEYS && es->bezier) != ct->bezier)
		return ap_structural(a, es->head.line, es->head.tok[0].col,
				  "'%s' changes between key and bezierkey", key);
	bool orient = ct->type == NWN_CTRL_ORIENTATION && ct->ncols == 4;
	unsigned nv = ct->ncols;
	krows g = { 0 }, ed = { 0 };
	lfs_err e = ctrl_rows(a, gs, nv, key, &g);
	if (!e)
		e = ctrl_rows(a, es, nv, key, &ed);
	if (!e && g.n != ed.n) {
		if (!ed.n)
			e = ap_perr(a, &es->head, 0, "'%s' needs at least one key", key);
		else
			e = nwn_patch_pend_rows(&a->p, c->gi, c->idx, n, ct, g.n, g.v, ed.n, ed.t, ed.v, orient ? 4 : 0);
		g.n = 0; /* nothing to patch in place */
	} else if (!e && g.n != ct->rows)
		e = lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: controller '%s' of node '%s' does not match its text", a->p.file, key,
			     n->name);
	for (uint32_t r = 0; r < g.n && !e; r++)
		e = nwn_patch_ctrl_row(&a->p, n, ct, r, g.t[r], ed.t[r], g.v + (size_t)r * nv, ed.v + (size_t)r * nv,
			     orient ? 4 : 0);
	free(g.t);
	free(g.v);
	free(ed.t);
	free(ed.v);
	return e;
}


const nwn_field *ap_find_attr(const nwn_node *n, bool anim, const char *kw)
{
	const nwn_field *r = nwn_field_find(NWN_FK_NODE, kw, false);
	if (r)
		return r;
	if (n->mesh && n->mesh->anim && (r = nwn_field_find(NWN_FK_ANIMMESH, kw, false)))
		return r;
	if (anim)
		return NULL;
	if (n->mesh && (r = nwn_field_find(NWN_FK_MESH, kw, false)))
		return r;
	if (n->mesh && n->mesh->dangly && (r = nwn_field_find(NWN_FK_DANGLY, kw, false)))
		return r;
	if (n->light && (r = nwn_field_find(NWN_FK_LIGHT, kw, false)))
		return r;
	if (n->emitter && (r = nwn_field_find(NWN_FK_EMITTER, kw, false)))
		return r;
	if (n->ref && (r = nwn_field_find(NWN_FK_REF, kw, false)))
		return r;
	return NULL;
}


/* Interpret an attribute statement (NULL = absent: the default). */
lfs_err ap_attr_value(ap *a, const nwn_field *t, const mdl_stmt *s, aval *v)
{
	memset(v, 0, sizeof(*v));
	v->s = "";
	if (!s)
		return LFS_OK;
	const mdl_row *h = &s->head;
	uint32_t want = t->type == NWN_FT_F32X3 ? 3 : 1;
	if (s->kind != MDL_ST_PLAIN || h->ntok != want + 1)
		return ap_perr(a, h, h->ntok > want + 1 ? want + 1 : h->ntok,
			    "expected %u %s after '%s'", want,
			    t->type == NWN_FT_STR ? "name" : want == 1 ? "value" : "numbers", t->kw);
	switch (t->type) {
	case NWN_FT_F32:
		return ap_tok_f(a, h, 1, &v->f[0]);
	case NWN_FT_F32X3:
		for (uint32_t k = 0; k < 3; k++) {
			lfs_err e = ap_tok_f(a, h, 1 + k, &v->f[k]);
			if (e)
				return e;
		}
		return LFS_OK;
	case NWN_FT_I32:
		return ap_tok_i(a, h, 1, INT32_MIN, UINT32_MAX, &v->i);
	case NWN_FT_U8:
		return ap_tok_i(a, h, 1, 0, 255, &v->i);
	case NWN_FT_U16:
		return ap_tok_i(a, h, 1, 0, 65535, &v->i);
	case NWN_FT_EFLAG:
		return ap_tok_i(a, h, 1, 0, 1, &v->i);
	case NWN_FT_RHINT:
		if (!strcasecmp(h->tok[1].s, "NormalAndSpecMapped")) {
			v->i = 2;
			return LFS_OK;
		}
		return ap_tok_i(a, h, 1, INT32_MIN, UINT32_MAX, &v->i);
	case NWN_FT_STR:
		v->s = h->tok[1].s;
		if (strlen(v->s) >= t->size)
			return ap_perr(a, h, 1, "'%s' holds at most %u bytes", t->kw, (unsigned)t->size - 1);
		return LFS_OK;
	}
	return LFS_OK;
}

lfs_err ap_mdl_attr(ap *a, uint32_t base, const nwn_field *t, const mdl_stmt *gs,
			const mdl_stmt *es)
{
	if (gs && !es && !(t->flags & NWN_FF_OPT))
		return ap_structural(a, 1, 1, "'%s' removed (every value model.mdl shows must stay)",
				  t->kw);
	aval gv, ev;
	lfs_err e = ap_attr_value(a, t, gs, &gv);
	if (e)
		return lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: generated '%s' does not read back", a->p.file, t->kw);
	if ((e = ap_attr_value(a, t, es, &ev)))
		return e;
	uint32_t off = base + t->off;
	switch (t->type) {
	case NWN_FT_F32:
	case NWN_FT_F32X3:
		for (unsigned k = 0; k < (t->type == NWN_FT_F32X3 ? 3u : 1u) && !e; k++)
			if (!nwn_feq(gv.f[k], ev.f[k]))
				e = nwn_patch_md_f32(&a->p, off + 4 * k, ev.f[k]);
		return e;
	case NWN_FT_I32:
	case NWN_FT_RHINT:
		return gv.i == ev.i ? LFS_OK : nwn_patch_md_u32(&a->p, off, (uint32_t)ev.i);
	case NWN_FT_U8:
		return gv.i == ev.i ? LFS_OK : nwn_patch_md_u8(&a->p, off, (uint8_t)ev.i);
	case NWN_FT_U16:
		return gv.i == ev.i ? LFS_OK : nwn_patch_md_u16(&a->p, off, (uint16_t)ev.i);
	case NWN_FT_EFLAG: {
		if (gv.i == ev.i)
			return LFS_OK;
		size_t fo = a->p.md0 + off;
		if (fo + 4 > a->p.n)
			return lfs_fail(a->p.err, LFS_ERR_CORRUPT, fo, "emitter", "flags outside the file");
		uint32_t fl = (uint32_t)a->p.img[fo] | (uint32_t)a->p.img[fo + 1] << 8 |
			      (uint32_t)a->p.img[fo + 2] << 16 | (uint32_t)a->p.img[fo + 3] << 24;
		if (ev.i)
			fl |= 1u << t->size;
		else
			fl &= ~(1u << t->size);
		return nwn_patch_md_u32(&a->p, off, fl);
	}
	case NWN_FT_STR:
		return strcmp(gv.s, ev.s) ? nwn_patch_md_str(&a->p, off, t->size, ev.s) : LFS_OK;
	}
	return LFS_OK;
}

/* ---- model.mdl: lists ------------------------------------------------------- */

static lfs_err row_arity(ap *a, const mdl_row *r, uint32_t want, const char *kw)
{
	if (r->ntok != want)
		return ap_perr(a, r, r->ntok > want ? want : r->ntok,
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
		if (ap_rows_same(g, e))
			continue;
		uint32_t want = fixed_zero_col ? k + 1 : k;
		lfs_err err = row_arity(a, e, want, kw);
		if (err)
			return err;
		for (uint32_t c = 0; c < want; c++) {
			float ev;
			if ((err = ap_tok_f(a, e, c, &ev)))
				return err;
			float gv = ap_gtok_f(g, c);
			if (nwn_feq(gv, ev))
				continue;
			a->crow = e;
			if (c == k)
				return ap_perr(a, e, c, "the third '%s' column is not stored: it must stay %s",
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
	return nwn_patch_set_vert(&a->p, x->node, row, (int)col, v);
}

static lfs_err set_tvert_cb(ap *a, void *c, uint32_t row, uint32_t col, float v)
{
	lctx *x = c;
	nwn_mesh *me = x->n->mesh;
	me->tverts[x->which][2 * (size_t)row + col] = v;
	return nwn_patch_raw_f32(&a->p, me->tverts_raw[x->which], 2 * (size_t)row + col, v);
}

static lfs_err set_normal_cb(ap *a, void *c, uint32_t row, uint32_t col, float v)
{
	lctx *x = c;
	nwn_mesh *me = x->n->mesh;
	me->normals[3 * (size_t)row + col] = v;
	return nwn_patch_raw_f32(&a->p, me->normals_raw, 3 * (size_t)row + col, v);
}

/* model-data float array at x->ptr, x->which floats per row */
static lfs_err set_mdf_cb(ap *a, void *c, uint32_t row, uint32_t col, float v)
{
	lctx *x = c;
	return nwn_patch_md_f32(&a->p, x->ptr + 4 * ((uint32_t)x->which * row + col), v);
}

/* animverts/animtverts: the text prints the sets one after the other, the
 * binary stores them vertex-major (vertex i's set s at i * sets + s). */
static lfs_err set_anim_cb(ap *a, void *c, uint32_t row, uint32_t col, float v)
{
	lctx *x = c;
	nwn_mesh *me = x->n->mesh;
	uint32_t nv = me->n_verts, sets = x->which == 3 ? me->anim->n_vert_sets : me->anim->n_tvert_sets;
	if (nv == 0)
		return set_mdf_cb(a, c, row, col, v);
	return set_mdf_cb(a, c, (row % nv) * sets + row / nv, col, v);
}

static lfs_err set_color_cb(ap *a, void *c, uint32_t row, uint32_t col, float v)
{
	lctx *x = c;
	nwn_mesh *me = x->n->mesh;
	if (!(v >= 0.0f && v <= 1.0f))
		return ap_perr(a, a->crow, col, "colour component %g is outside 0..1", (double)v);
	uint32_t byte = (uint32_t)lrintf(v * 255.0f);
	uint32_t cv = me->colors[row];
	cv = (cv & ~(0xFFu << (8 * col))) | (byte << (8 * col));
	me->colors[row] = cv;
	return nwn_patch_raw_u32(&a->p, me->colors_raw, row, cv);
}

static lfs_err list_faces(ap *a, nctx *c, const mdl_stmt *gs, const mdl_stmt *es)
{
	nwn_node *n = &c->g->nodes[c->idx];
	nwn_mesh *me = n->mesh;
	for (uint32_t r = 0; r < gs->n_rows; r++) {
		const mdl_row *g = &gs->rows[r], *e = &es->rows[r];
		if (ap_rows_same(g, e))
			continue;
		lfs_err err = row_arity(a, e, 8, "faces");
		if (err)
			return err;
		int64_t v[8];
		for (uint32_t k = 0; k < 8; k++)
			if ((err = ap_tok_i(a, e, k, k < 3 || (k >= 4 && k < 7) ? 0 : INT32_MIN,
					 k < 3 ? (int64_t)me->n_verts - 1 : UINT32_MAX, &v[k])))
				return err;
		bool has_tv = me->tverts[0] != NULL;
		for (uint32_t k = 4; k < 7; k++) {
			int64_t want = has_tv ? v[k - 4] : ap_gtok_i(g, k);
			if (v[k] != want)
				return ap_structural(a, e->line, e->tok[k].col,
						  "tvert index %lld differs from the vertex index "
						  "(the compiler would split the vertex)",
						  (long long)v[k]);
		}
		if (v[3] != ap_gtok_i(g, 3))
			return ap_structural(a, e->line, e->tok[3].col,
					  "smoothing groups are not stored; edit the normals list "
					  "instead");
		for (uint32_t k = 0; k < 3; k++)
			if (v[k] != ap_gtok_i(g, k) &&
			    (err = nwn_patch_set_face_v(&a->p, c->idx, r, (int)k, (uint16_t)v[k])))
				return err;
		if (v[7] != ap_gtok_i(g, 7)) {
			me->faces[r].surface_id = (uint32_t)v[7];
			if ((err = nwn_patch_md_u32(&a->p, me->faces_arr.off + FACE_SIZE * r + 16, (uint32_t)v[7])))
				return err;
		}
	}
	return LFS_OK;
}

static int32_t bone_index(const nwn_geometry *g, const nwn_skin *sk, uint32_t n_verts, const char *name)
{
	int32_t node = nwn_find_node(g, name);
	if (node < 0)
		return -2;
	/* slot 17 (the word after the table) is a bone only when a vertex uses
	 * it; otherwise it holds the compiler's 0, not a bone */
	int slots = 17;
	for (uint32_t i = 0; sk->bonerefs && i < 4 * (size_t)n_verts; i++)
		if (sk->bonerefs[i] == 17)
			slots = NWN_SKIN_BONES;
	for (int b = 0; b < slots; b++)
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
		if (ap_rows_same(g, e))
			continue;
		if (e->ntok == 0 || e->ntok > 8 || (e->ntok & 1))
			return ap_perr(a, e, e->ntok > 8 ? 8 : 0,
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
				if (mdl_tok_int(bn + 5, &x) && x >= 0 && x < NWN_SKIN_BONES)
					b = (int32_t)x;
			} else {
				b = bone_index(&a->p.m->geom, sk, n->mesh->n_verts, bn);
				if (b == -2)
					return ap_perr(a, e, 2 * p, "unknown node '%.64s' in weights", bn);
			}
			if (b < 0)
				return ap_structural(a, e->line, e->tok[2 * p].col,
						  "'%.64s' is not in this skin's bone map", bn);
			refs[p] = (int16_t)b;
			lfs_err err = ap_tok_f(a, e, 2 * p + 1, &w[p]);
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
			lfs_err err = nwn_patch_raw_u16(&a->p, sk->bonerefs_raw, 4 * (size_t)r + l, (uint16_t)ref);
			if (!err && (used || np != nl || ref >= 0))
				err = nwn_patch_raw_f32(&a->p, sk->weights_raw, 4 * (size_t)r + l, wt);
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
		return lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: aabb list does not match the tree", a->p.file);
	for (uint32_t r = 0; r < gs->n_rows; r++) {
		const mdl_row *g = &gs->rows[r], *e = &es->rows[r];
		if (ap_rows_same(g, e))
			continue;
		lfs_err err = row_arity(a, e, 7, "aabb");
		if (err || (err = nwn_patch_track(&a->p, c->idx)))
			return err;
		nwn_aabb_entry *x = &t->entries[r];
		for (uint32_t k = 0; k < 6; k++) {
			float v;
			if ((err = ap_tok_f(a, e, k, &v)))
				return err;
			if (nwn_feq(v, ap_gtok_f(g, k)))
				continue;
			a->p.trk[c->idx].aexplicit[r] = 1;
			(k < 3 ? x->bmin : x->bmax)[k % 3] = v;
			if ((err = nwn_patch_md_f32(&a->p, x->off + 4 * k, v)))
				return err;
		}
		int64_t leaf;
		if ((err = ap_tok_i(a, e, 6, -1, (int64_t)me->n_faces - 1, &leaf)))
			return err;
		if (leaf != ap_gtok_i(g, 6)) {
			if ((leaf < 0) != (x->leaf_face < 0))
				return ap_structural(a, e->line, e->tok[6].col,
						  "turns an aabb %s into a %s", x->leaf_face < 0 ? "node" : "leaf",
						  leaf < 0 ? "node" : "leaf");
			x->leaf_face = (int32_t)leaf;
			if ((err = nwn_patch_md_u32(&a->p, x->off + 32, (uint32_t)leaf)))
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
		if (ap_rows_same(g, e))
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
			return ap_structural(a, e->line, e->tok[0].col,
					  "flare texture name longer than the stored one (%zu bytes)",
					  room - 1);
		uint32_t p = 0;
		size_t fo = a->p.md0 + l->texnames_arr.off + 4 * (size_t)r;
		if (fo + 4 > a->p.n)
			return lfs_fail(a->p.err, LFS_ERR_CORRUPT, fo, "light", "texture name pointer");
		p = (uint32_t)a->p.img[fo] | (uint32_t)a->p.img[fo + 1] << 8 |
		    (uint32_t)a->p.img[fo + 2] << 16 | (uint32_t)a->p.img[fo + 3] << 24;
		if ((err = nwn_patch_md_str(&a->p, p, room, nw)))
			return err;
	}
	return LFS_OK;
}

lfs_err ap_mdl_list(ap *a, nctx *c, const mdl_stmt *gs, const mdl_stmt *es, const char *kw)
{
	nwn_node *n = &c->g->nodes[c->idx];
	const mdl_stmt *any = es ? es : gs;
	if (!gs || !es)
		return ap_structural(a, any->head.line, any->head.tok[0].col, "list '%s' %s in node '%s'", kw,
				  gs ? "removed" : "added", n->name);
	if (gs->n_rows != es->n_rows)
		return ap_structural(a, es->head.line, es->head.tok[0].col,
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
			return float_rows(a, gs, es, 3, 0, set_anim_cb, &x);
		}
		if (!strcasecmp(kw, "animtverts")) {
			x.which = 2;
			x.ptr = me->anim->anim_tverts_ptr;
			return float_rows(a, gs, es, 2, 1, set_anim_cb, &x);
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
	if (ap_stmt_text_equal(gs, es))
		return LFS_OK;
	return lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			"%s:%u:%u: list '%s' of node '%s' cannot be edited", a->p.file, es->head.line,
			es->head.tok[0].col, kw, n->name);
}

