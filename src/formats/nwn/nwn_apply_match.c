/**
 * @file nwn_apply_match.c
 * model.mdl: pairs the statements of the generated text with those of the
 * edited text (model, nodes, animations) and hands each pair to
 * nwn_apply_mdl.c; an added or removed statement is a structural edit.
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
		err = lfs_nomem(a->p.err, "apply view");
		goto out;
	}
	for (uint32_t i = 0; i < ng; i++)
		gs[i] = (sref){ ap_stmt_key(&g[i]), i, 0 };
	for (uint32_t i = 0; i < ne; i++)
		es[i] = (sref){ ap_stmt_key(&e[i]), i, 0 };
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
	return ap_perr(a, &es->head, 0, "unknown statement '%.40s' in %s", es->head.tok[0].s, where);
}

static lfs_err node_pair(ap *a, void *ctx, const mdl_stmt *gs, const mdl_stmt *es, uint32_t occ)
{
	nctx *c = ctx;
	nwn_node *n = &c->g->nodes[c->idx];
	const mdl_stmt *any = gs ? gs : es;
	const char *key = ap_stmt_key(any);
	if (gs && es && ap_stmt_text_equal(gs, es))
		return LFS_OK;
	if (any->kind == MDL_ST_KEYS || nwn_controller_id(n->flags, key)) {
		if (!nwn_controller_id(n->flags, key))
			return es ? unknown_stmt(a, es, "this node")
				  : ap_structural(a, 1, 1, "'%s' removed", key);
		return ap_mdl_controller(a, c, gs, es, occ, key);
	}
	if (any->kind == MDL_ST_LIST)
		return ap_mdl_list(a, c, gs, es, key);
	const nwn_field *t = ap_find_attr(n, c->anim, key);
	if (!t) {
		if (es)
			return unknown_stmt(a, es, "this node");
		return ap_structural(a, c->en->head.line, 1, "'%s' removed from node '%s'", key, n->name);
	}
	if (occ > 0 && es)
		return ap_perr(a, &es->head, 0, "'%s' given twice in node '%s'", key, n->name);
	if (gs && !es && !(t->flags & NWN_FF_OPT))
		return ap_structural(a, c->en->head.line, 1, "'%s' removed from node '%s'", key, n->name);
	return ap_mdl_attr(a, n->off, t, gs, es);
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
	return ap_perr_at(a, en->parent_line, ap_text_col(a, en->parent_line, 1),
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
			return ap_structural(a, y->head.line, ap_row_col(&y->head, 1),
					  "node '%s' changes type from %s to %s", n->name, x->type, y->type);
		int32_t ep;
		if ((e = e_parent(a, en, count, y, &ep)))
			return e;
		if (ep != n->parent)
			return ap_structural(a, y->parent_line ? y->parent_line : y->head.line,
					  y->parent_line ? ap_text_col(a, y->parent_line, 1) : 1,
					  "node '%s' moves to another parent", y->name);
		if (strcmp(x->name, y->name)) {
			if (strlen(y->name) >= 32)
				return ap_perr(a, &y->head, 2, "node names hold at most 31 bytes");
			if ((e = nwn_patch_md_str(&a->p, n->off + 0x20, 32, y->name)))
				return e;
		}
		if (y->has_part_number && y->part_number != x->part_number) {
			if (y->part_number < INT32_MIN || y->part_number > INT32_MAX)
				return ap_perr_at(a, y->head.line + 2, 1, "part number out of range");
			if ((e = nwn_patch_md_u32(&a->p, n->off + 0x1C, (uint32_t)(int32_t)y->part_number)))
				return e;
		}
		nctx c = { g, gi, i, anim, g == &a->p.m->geom, y };
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
	const char *key = ap_stmt_key(any);
	if (gs && es && ap_stmt_text_equal(gs, es))
		return LFS_OK;
	uint32_t base = an->geom.off;
	if (!strcasecmp(key, "event")) {
		if (!gs || !es)
			return ap_structural(a, any->head.line, any->head.tok[0].col, "event %s",
					  gs ? "removed" : "added");
		if (es->kind != MDL_ST_PLAIN || es->head.ntok != 3)
			return ap_perr(a, &es->head, es->head.ntok > 3 ? 3 : es->head.ntok,
				    "expected a time and a name after 'event'");
		float t;
		lfs_err e = ap_tok_f(a, &es->head, 1, &t);
		if (e)
			return e;
		uint32_t eo = an->events_arr.off + 36 * occ;
		if (!nwn_feq(t, ap_gtok_f(&gs->head, 1)) && (e = nwn_patch_md_f32(&a->p, eo, t)))
			return e;
		const char *nm = es->head.tok[2].s;
		if (strlen(nm) >= 32)
			return ap_perr(a, &es->head, 2, "event names hold at most 31 bytes");
		if (strcmp(nm, gs->head.tok[2].s))
			return nwn_patch_md_str(&a->p, eo + 4, 32, nm);
		return LFS_OK;
	}
	const nwn_field *t = nwn_field_find(NWN_FK_ANIM, key, false);
	if (!t) {
		if (es)
			return unknown_stmt(a, es, "this animation");
		return ap_structural(a, 1, 1, "'%s' removed from animation '%s'", key, an->geom.name);
	}
	if (occ > 0 && es)
		return ap_perr(a, &es->head, 0, "'%s' given twice", key);
	return ap_mdl_attr(a, base, t, gs, es);
}

static lfs_err model_pair(ap *a, void *ctx, const mdl_stmt *gs, const mdl_stmt *es, uint32_t occ)
{
	(void)ctx;
	nwn_model *m = a->p.m;
	const mdl_stmt *any = gs ? gs : es;
	const char *key = ap_stmt_key(any);
	if (gs && es && ap_stmt_text_equal(gs, es))
		return LFS_OK;
	if (occ > 0 && es)
		return ap_perr(a, &es->head, 0, "'%s' given twice", key);
	lfs_err e;
	if (!strcasecmp(key, "newmodel") || !strcasecmp(key, "setsupermodel")) {
		uint32_t ai = !strcasecmp(key, "newmodel") ? 0 : 1;
		if (!es)
			return ap_structural(a, 1, 1, "'%s' removed", key);
		if (es->kind != MDL_ST_PLAIN || es->head.ntok < ai + 2)
			return ap_perr(a, &es->head, es->head.ntok, "expected a name after '%s'", key);
		if (es->head.ntok > ai + 2)
			return ap_perr(a, &es->head, ai + 2, "unexpected '%.40s' after '%s'",
				    es->head.tok[ai + 2].s, key);
		const char *nv = es->head.tok[ai + 1].s;
		const char *gv = gs ? mdl_stmt_arg(gs, ai) : "";
		if (gv && !strcmp(nv, gv))
			return LFS_OK;
		if (strlen(nv) >= 64)
			return ap_perr(a, &es->head, ai + 1, "names hold at most 63 bytes");
		return nwn_patch_md_str(&a->p, ai == 0 ? m->geom.off + 8 : 0xA8, 64, nv);
	}
	if (!strcasecmp(key, "beginmodelgeom") || !strcasecmp(key, "endmodelgeom") ||
	    !strcasecmp(key, "donemodel"))
		return LFS_OK; /* the model name comes from newmodel */
	const nwn_field *t = nwn_field_find(NWN_FK_MODEL, key, false);
	if (t) /* the field table's model header fields (setanimationscale) */
		return ap_mdl_attr(a, 0, t, gs, es);
	if (!strcasecmp(key, "classification")) {
		/* the writer prints the byte as a word or number, nothing for 0 */
		int64_t ev = 0;
		if (es) {
			if (es->kind != MDL_ST_PLAIN || es->head.ntok != 2)
				return ap_perr(a, &es->head, es->head.ntok > 2 ? 2 : es->head.ntok,
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
				return ap_perr(a, &es->head, 1,
					    "classification is effect, tile, character, door, "
					    "unknown or 0..255");
		}
		return ev == m->classification ? LFS_OK : nwn_patch_md_u8(&a->p, 0x72, (uint8_t)ev);
	}
	if (!strcasecmp(key, "ignorefog")) {
		int64_t gv = gs ? 1 : 0, ev = 0;
		if (es) {
			if (es->kind != MDL_ST_PLAIN || es->head.ntok != 2)
				return ap_perr(a, &es->head, es->head.ntok > 2 ? 2 : es->head.ntok,
					    "expected 1 value after 'ignorefog'");
			if ((e = ap_tok_i(a, &es->head, 1, 0, 1, &ev)))
				return e;
		}
		if (gv == ev)
			return LFS_OK;
		return nwn_patch_md_u8(&a->p, 0x73, ev ? 0 : 1);
	}
	if (es)
		return unknown_stmt(a, es, "the model header");
	return ap_structural(a, 1, 1, "'%s' removed", key);
}

lfs_err ap_apply_mdl(ap *a, const char *text, size_t tn)
{
	lfs_sb g = { 0 };
	lfs_err e = nwn_ascii_write(a->p.m, &g, a->p.err);
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
	e = mdl_parse(a->p.file, (const uint8_t *)g.data, g.len, &dg, &gerr);
	lfs_sb_free(&g);
	if (e) {
		return lfs_fail(a->p.err, e == LFS_ERR_NOMEM ? e : LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: this model's text does not read back (%s)", a->p.file, gerr.msg);
	}
	if ((e = mdl_parse(a->p.file, (const uint8_t *)text, tn, &de, a->p.err))) {
		mdl_doc_free(dg);
		return e;
	}
	nwn_model *m = a->p.m;
	if (dg->n_nodes != m->geom.n_nodes || dg->n_anims != m->n_anims) {
		e = lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: this model's text does not match its nodes", a->p.file);
		goto out;
	}
	if ((e = match_stmts(a, dg->stmts, dg->n_stmts, de->stmts, de->n_stmts, model_pair, NULL)))
		goto out;
	if (de->n_nodes != dg->n_nodes) {
		unsigned line = de->n_nodes ? de->nodes[de->n_nodes > dg->n_nodes ? dg->n_nodes : de->n_nodes - 1].head.line : 1;
		e = ap_structural(a, line, 1, "the model has %u nodes, the text %u", dg->n_nodes,
			       de->n_nodes);
		goto out;
	}
	if ((e = apply_nodes(a, &m->geom, -1, dg->nodes, de->nodes, dg->n_nodes, false)))
		goto out;
	if (de->n_anims != dg->n_anims) {
		unsigned line = de->n_anims ? de->anims[de->n_anims - 1].head.line : 1;
		e = ap_structural(a, line, 1, "the model has %u animations, the text %u", dg->n_anims,
			       de->n_anims);
		goto out;
	}
	for (uint32_t i = 0; i < dg->n_anims; i++) {
		nwn_anim *an = &m->anims[i];
		const mdl_anim *x = &dg->anims[i], *y = &de->anims[i];
		if (strcmp(x->name, y->name)) {
			if (strlen(y->name) >= 64 || !y->name[0])
				e = ap_perr(a, &y->head, 1, "animation names hold 1 to 63 bytes");
			else
				e = nwn_patch_md_str(&a->p, an->geom.off + 8, 64, y->name);
			if (e)
				goto out;
		}
		actx ac = { an };
		if ((e = match_stmts(a, x->stmts, x->n_stmts, y->stmts, y->n_stmts, anim_pair, &ac)))
			goto out;
		if (x->n_nodes != an->geom.n_nodes) {
			e = lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				     "%s: animation text does not match its nodes", a->p.file);
			goto out;
		}
		if (y->n_nodes != x->n_nodes) {
			e = ap_structural(a, y->head.line, 1, "animation '%s' has %u nodes, the text %u",
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

