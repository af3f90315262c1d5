/**
 * @file nwn_apply.c
 * Entry of the edit-preserving re-encode of an NWN binary from an edited
 * view (see nwn_apply.h and docs/nwn-compile.md "Edits"): which view was
 * edited, the shared error and token helpers of the apply, and the CSV
 * (one controller track) apply. Byte patching and derived values:
 * src/formats/nwn/nwn_patch.h.
 */
#include "nwn_apply.h"

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
#include "text/csv.h"
#include "nwn_csv.h"

/* ---- errors --------------------------------------------------------------- */

unsigned ap_row_col(const mdl_row *r, uint32_t i)
{
	if (i < r->ntok)
		return r->tok[i].col;
	if (r->ntok)
		return r->tok[r->ntok - 1].col + (unsigned)strlen(r->tok[r->ntok - 1].s);
	return 1;
}

lfs_err __attribute__((format(printf, 4, 0)))
ap_failv(ap *a, unsigned line, unsigned col, const char *fmt, va_list va)
{
	char d[256];
	vsnprintf(d, sizeof(d), fmt, va);
	return lfs_fail_at(a->p.err, a->p.file, line, col, "%s", d);
}

lfs_err __attribute__((format(printf, 4, 5)))
ap_perr(ap *a, const mdl_row *r, uint32_t i, const char *fmt, ...)
{
	va_list va;
	va_start(va, fmt);
	lfs_err e = ap_failv(a, r->line, ap_row_col(r, i), fmt, va);
	va_end(va);
	return e;
}

lfs_err __attribute__((format(printf, 4, 5)))
ap_perr_at(ap *a, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list va;
	va_start(va, fmt);
	lfs_err e = ap_failv(a, line, col, fmt, va);
	va_end(va);
	return e;
}

/* A ap_structural edit: LFS_ERR_UNSUPPORTED with the position of the edit. */
lfs_err __attribute__((format(printf, 4, 5)))
ap_structural(ap *a, unsigned line, unsigned col, const char *fmt, ...)
{
	char d[220];
	va_list va;
	va_start(va, fmt);
	vsnprintf(d, sizeof(d), fmt, va);
	va_end(va);
	lfs_fail_at(a->p.err, a->p.file, line, col, "ap_structural edit needs the encoder: %s", d);
	if (a->p.err)
		a->p.err->code = LFS_ERR_UNSUPPORTED;
	a->hit_structural = true;
	return LFS_ERR_UNSUPPORTED;
}

/* Column of token @p ti on line @p line of the edited text (mdl_parse's
 * whitespace rule: bytes <= 0x20), 1 when not found. */
unsigned ap_text_col(const ap *a, uint32_t line, uint32_t ti)
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

lfs_err ap_tok_f(ap *a, const mdl_row *r, uint32_t i, float *v)
{
	if (i >= r->ntok)
		return ap_perr(a, r, i, "missing number");
	if (!mdl_tok_float(r->tok[i].s, v)) {
		if (lfs_float_overflows(r->tok[i].s, strlen(r->tok[i].s)))
			return ap_perr(a, r, i, "'%.40s' " LFS_FLOAT_RANGE_MSG, r->tok[i].s);
		return ap_perr(a, r, i, "'%.40s' is not a number", r->tok[i].s);
	}
	return LFS_OK;
}

lfs_err ap_tok_i(ap *a, const mdl_row *r, uint32_t i, int64_t lo, int64_t hi, int64_t *v)
{
	if (i >= r->ntok)
		return ap_perr(a, r, i, "missing integer");
	if (!mdl_tok_int(r->tok[i].s, v))
		return ap_perr(a, r, i, "'%.40s' is not an integer", r->tok[i].s);
	if (*v < lo || *v > hi)
		return ap_perr(a, r, i, "%lld is out of range (%lld..%lld)", (long long)*v, (long long)lo,
			    (long long)hi);
	return LFS_OK;
}

/* Generated token (never fails: our own writer printed it). */
float ap_gtok_f(const mdl_row *r, uint32_t i)
{
	float v = 0;
	if (i < r->ntok)
		mdl_tok_float(r->tok[i].s, &v);
	return v;
}

int64_t ap_gtok_i(const mdl_row *r, uint32_t i)
{
	int64_t v = 0;
	if (i < r->ntok)
		mdl_tok_int(r->tok[i].s, &v);
	return v;
}

bool ap_rows_same(const mdl_row *x, const mdl_row *y)
{
	if (x->ntok != y->ntok)
		return false;
	for (uint32_t i = 0; i < x->ntok; i++)
		if (strcmp(x->tok[i].s, y->tok[i].s))
			return false;
	return true;
}

bool ap_stmt_text_equal(const mdl_stmt *x, const mdl_stmt *y)
{
	if (x->kind != y->kind || !ap_rows_same(&x->head, &y->head) || x->n_rows != y->n_rows)
		return false;
	for (uint32_t i = 0; i < x->n_rows; i++)
		if (!ap_rows_same(&x->rows[i], &y->rows[i]))
			return false;
	return true;
}

/* ---- CSV ---------------------------------------------------------------------- */

/* A controller CSV: rows of ncols numbers (time, then the values). */
typedef struct track {
	uint32_t ncols, rows, cap;
	uint32_t header_line;
	float *val; /* rows * ncols */
} track;

/*
 * Read CSV @p text of a controller (the shared reader, csv.h: lenient, so a
 * byte order mark, blank lines and blanks around fields are allowed, and
 * the header's column names are compared ignoring case) into @p t: the row
 * @p header, then rows of exactly @p ncols numbers. @p t is always
 * initialised; free t->val.
 */
static lfs_err read_track(ap *a, const char *text, size_t tn, const char *header, uint32_t ncols,
			  track *t)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	lfs_csv c;
	lfs_csv_init(&c, a->p.file, text, tn, LFS_CSV_LENIENT | LFS_CSV_MDL_MSGS, a->p.err);
	lfs_err e = lfs_csv_header(&c, header);
	if (e)
		return e;
	t->header_line = c.row_line;
	int r;
	while ((r = lfs_csv_next(&c)) == 1) {
		if ((e = lfs_csv_arity(&c, ncols, NULL)))
			return e;
		if (!lfs_grow32((void **)&t->val, &t->cap, t->rows + 1, (size_t)ncols * sizeof(float)))
			return lfs_nomem(a->p.err, "apply view");
		for (uint32_t k = 0; k < ncols; k++)
			if ((e = lfs_csv_f32(&c, k, &t->val[(size_t)t->rows * ncols + k])))
				return e;
		t->rows++;
	}
	return r < 0 ? LFS_ERR_PARSE : LFS_OK;
}

lfs_err ap_apply_csv(ap *a, const char *text, size_t tn)
{
	nwn_model *m = a->p.m;
	uint32_t hit_anim = a->target.anim, hit_node = a->target.node;
	nwn_node *hit = &m->anims[hit_anim].geom.nodes[hit_node];
	nwn_controller *hc = &hit->ctrls[a->target.item];
	lfs_err e;
	lfs_sb g = { 0 }, head = { 0 };
	track dg = { 0 }, de = { 0 };
	bool orient;
	if ((e = nwn_csv_controller(hit, hc, &g, a->p.err)))
		goto out;
	nwn_csv_header(hit, hc, &head, &orient);
	if (!lfs_sb_ok(&head)) {
		e = lfs_nomem(a->p.err, "apply view");
		goto out;
	}
	uint32_t ncols = 1u + hc->ncols;
	if (read_track(a, g.data, g.len, head.data, ncols, &dg) != LFS_OK) {
		e = lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: this controller's CSV does not read back", a->p.file);
		goto out;
	}
	if ((e = read_track(a, text, tn, head.data, ncols, &de)))
		goto out;
	if (dg.rows != hc->rows) {
		e = lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: this controller's CSV does not match its keys", a->p.file);
		goto out;
	}
	/* orientation columns as nwn_csv.c shows them */
	unsigned nc = hc->ncols;
	if (de.rows != dg.rows) {
		if (!de.rows) {
			e = lfs_fail_at(a->p.err, a->p.file, de.header_line + 1, 1,
					"a controller needs at least one key row");
			goto out;
		}
		/* split time and value columns */
		float *gt = malloc(((size_t)dg.rows + 1) * sizeof(float)), *gv = malloc(((size_t)dg.rows * nc + 1) * sizeof(float));
		float *et = malloc(((size_t)de.rows + 1) * sizeof(float)), *ev = malloc(((size_t)de.rows * nc + 1) * sizeof(float));
		if (!gt || !gv || !et || !ev)
			e = lfs_nomem(a->p.err, "apply view");
		for (uint32_t r = 0; !e && r < dg.rows; r++) {
			gt[r] = dg.val[(size_t)r * ncols];
			memcpy(gv + (size_t)r * nc, dg.val + (size_t)r * ncols + 1, nc * sizeof(float));
		}
		for (uint32_t r = 0; !e && r < de.rows; r++) {
			et[r] = de.val[(size_t)r * ncols];
			memcpy(ev + (size_t)r * nc, de.val + (size_t)r * ncols + 1, nc * sizeof(float));
		}
		if (!e)
			e = nwn_patch_pend_rows(&a->p, (int32_t)hit_anim, hit_node, hit, hc, dg.rows, gv, de.rows, et, ev,
				      orient ? 4 : 0);
		free(gt);
		free(gv);
		free(et);
		free(ev);
		goto out;
	}
	for (uint32_t r = 0; r < dg.rows && !e; r++) {
		const float *gv = dg.val + (size_t)r * ncols, *ev = de.val + (size_t)r * ncols;
		e = nwn_patch_ctrl_row(&a->p, hit, hc, r, gv[0], ev[0], gv + 1, ev + 1, orient ? 4 : 0);
	}
out:
	lfs_sb_free(&g);
	lfs_sb_free(&head);
	free(dg.val);
	free(de.val);
	return e;
}


/* ---- entry -------------------------------------------------------------------- */

/*
 * Is the target of view @p v (kind and indices fixed when the views of these
 * bytes were built, src/formats/nwn/nwn_views.c) inside the decoded model? The
 * indices are checked like any other input: a view of another model's views
 * must not index past this one's arrays.
 */
static lfs_err check_target(const nwn_model *m, const lfs_view *v, lfs_error *err)
{
	const lfs_view_target *t = &v->target;
	bool ok = false;
	if (v->kind == LFS_VIEW_TEXT || v->kind == LFS_VIEW_MODEL_OBJ) {
		ok = true;
	} else if (v->kind == LFS_VIEW_MESH_OBJ) {
		ok = t->node < m->geom.n_nodes && m->geom.nodes[t->node].mesh;
	} else if (v->kind == LFS_VIEW_TRACK_CSV && t->anim < m->n_anims) {
		const nwn_geometry *g = &m->anims[t->anim].geom;
		ok = t->node < g->n_nodes && t->item < g->nodes[t->node].n_ctrls;
	}
	if (!ok)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL, "%s: not a writable view",
				v->path);
	return LFS_OK;
}

lfs_err nwn_apply_view(const uint8_t *orig, size_t n, const lfs_view *v, const char *text,
		       size_t tn, const lfs_siblings *sib, uint8_t **out, size_t *outn,
		       lfs_error *err)
{
	return nwn_apply_view_decoded(orig, n, v, text, tn, sib, out, outn, NULL, err);
}

lfs_err nwn_apply_view_decoded(const uint8_t *orig, size_t n, const lfs_view *v, const char *text,
			       size_t tn, const lfs_siblings *sib, uint8_t **out, size_t *outn,
			       nwn_model **result, lfs_error *err)
{
	*out = NULL;
	*outn = 0;
	if (result)
		*result = NULL;
	const char *viewpath = v->path ? v->path : "";
	nwn_supermodel_lookup_fn lookup = sib ? sib->read : NULL;
	void *lookup_ctx = sib ? sib->ctx : NULL;
	ap a = { .text = text ? text : "", .tn = tn, .kind = v->kind, .target = v->target };
	if (v->kind != LFS_VIEW_TEXT && v->kind != LFS_VIEW_MESH_OBJ &&
	    v->kind != LFS_VIEW_MODEL_OBJ && v->kind != LFS_VIEW_TRACK_CSV)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: this view is read-only (edit model.obj, meshes/<node>.obj or model.mdl)",
				viewpath);
	if (tn > MDL_MAX_INPUT || (tn && !text))
		return lfs_fail_at(err, viewpath, 1, 1, "edited text too large (%zu bytes)", tn);
	lfs_err e = nwn_patch_open(&a.p, orig, n, viewpath, err);
	if (!e)
		e = check_target(a.p.m, v, err);
	if (e)
		goto out;
	bool is_mdl = a.kind == LFS_VIEW_TEXT, is_obj = a.kind == LFS_VIEW_MESH_OBJ;
	if (is_mdl)
		e = ap_apply_mdl(&a, a.text, tn);
	else if (is_obj)
		e = ap_apply_obj(&a, a.text, tn);
	else if (a.kind == LFS_VIEW_MODEL_OBJ)
		e = ap_apply_model_obj(&a, a.text, tn);
	else
		e = ap_apply_csv(&a, a.text, tn);
	if (e == LFS_ERR_UNSUPPORTED && a.hit_structural && (is_mdl || is_obj)) {
		/* nodes, vertices, faces, animations ... added or removed: compile
		 * the edited text against the old binary (nwn_apply_struct.c) */
		uint8_t *res = NULL;
		size_t rn = 0;
		if (is_mdl)
			e = nwn_apply_structural_ex(orig, n, viewpath, a.text, tn, lookup, lookup_ctx,
						    sib ? sib->warn : NULL, &res, &rn, err);
		else
			e = ap_structural_obj(&a, orig, n, a.text, tn, lookup, lookup_ctx, &res, &rn);
		if (!e) {
			*out = res;
			*outn = rn;
		}
		goto out;
	}
	a.p.keep_result = result != NULL;
	if (!e)
		e = nwn_patch_finish(&a.p);
	if (!e) {
		*out = a.p.img;
		*outn = a.p.n;
		a.p.img = NULL;
		if (result) {
			*result = a.p.result; /* the decode of exactly *out */
			a.p.result = NULL;
		}
	}
out:
	nwn_patch_close(&a.p);
	return e;
}
