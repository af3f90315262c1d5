/**
 * @file viewset.c
 * The set of generated views of one model, through the format registry
 * (viewset.h): build, find, apply an edited view, render the thumbnail.
 * Nothing here knows a format; every format-specific step is a call through
 * its lfs_format row (src/formats/format.h).
 */
#include "viewset.h"

#include "../common/mem.h"
#include "../common/strbuf.h"
#include "law/law.h"
#include "render/thumb_models.h"
#include "vlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void lfs_viewset_free(lfs_viewset *vs)
{
	if (!vs)
		return;
	for (size_t i = 0; i < vs->n_views; i++) {
		free(vs->views[i].path);
		free(vs->views[i].data);
	}
	free(vs->views);
	vs->views = NULL;
	vs->n_views = 0;
	vs->format = NULL;
	vs->writable = false;
	vs->over_budget = false;
	vs->thumb_pending = false;
	vs->thumb_busy = false;
}

const lfs_view *lfs_viewset_find(const lfs_viewset *vs, const char *path)
{
	size_t lo = 0, hi = vs->n_views;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(path, vs->views[mid].path);
		if (c == 0)
			return &vs->views[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static lfs_err not_a_model(const char *name, lfs_error *err)
{
	return lfs_fail(err, LFS_ERR_NOTFORMAT, SIZE_MAX, "file header", "%s: not a binary model",
			name ? name : "(unnamed)");
}

/* MiB, rounded up. */
static size_t mib_up(size_t b)
{
	return b / (1u << 20) + (b % (1u << 20) != 0);
}

/*
 * The views of a model over its budget: one read-only README.txt. @p built
 * bytes were left for the views and they passed it (0: stopped before
 * decoding). The suggested model_memory is LFS_VIEWSET_SUGGEST_PER_BYTE x
 * the file size, at least twice the budget.
 */
static lfs_err over_budget(const lfs_format *f, const char *name, size_t n, size_t budget,
			   size_t built, lfs_viewset *out, lfs_error *err)
{
	size_t sug = n > SIZE_MAX / LFS_VIEWSET_SUGGEST_PER_BYTE ? SIZE_MAX
								 : n * LFS_VIEWSET_SUGGEST_PER_BYTE;
	if (sug < budget || sug - budget < budget)
		sug = budget > SIZE_MAX / 2 ? SIZE_MAX : budget * 2;
	lfs_sb sb = { 0 };
	lfs_sb_printf(&sb,
		      "%s: the views of this %s model need more than %zu MiB of memory, the\n"
		      "mount's bound for one model (-o model_memory=%zu), so they are not shown.\n",
		      name ? name : "model", f->name, mib_up(budget), mib_up(budget));
	if (built)
		lfs_sb_printf(&sb, "Building stopped when the views passed the %zu MiB left for them.\n",
			      mib_up(built));
	else
		lfs_sb_printf(&sb, "The model file is %zu MiB; its bytes, the decoded model and the\n"
			      "views take about %u-%u times that.\n", mib_up(n),
			      LFS_VIEWSET_HELD_PER_BYTE + 1, LFS_VIEWSET_SUGGEST_PER_BYTE);
	lfs_sb_printf(&sb,
		      "To see them, mount with -o model_memory=%zu (MiB) or more. The model file\n"
		      "is untouched; this folder is read-only.\n",
		      mib_up(sug));
	lfs_vlist l = { 0 };
	lfs_vlist_add(&l, LFS_VIEWSET_NOTICE_NAME, LFS_VIEW_NOTICE, LFS_VIEW_WHOLE, false, &sb);
	if (l.failed) {
		lfs_vlist_discard(&l);
		return lfs_nomem(err, "views");
	}
	lfs_vlist_finish(&l, out);
	out->format = f;
	out->over_budget = true;
	return LFS_OK;
}

/* Bytes of the budget held besides the views for a file of @p n bytes. */
static size_t held_for(size_t n)
{
	return n > SIZE_MAX / LFS_VIEWSET_HELD_PER_BYTE ? SIZE_MAX : n * LFS_VIEWSET_HELD_PER_BYTE;
}

bool lfs_views_candidate(const char *name)
{
	size_t len = strlen(name);
	for (const lfs_format *const *f = lfs_formats; *f; f++)
		for (const char *const *e = (*f)->extensions; *e; e++) {
			size_t el = strlen(*e);
			if (len > el && !strcasecmp(name + len - el, *e))
				return true;
		}
	return false;
}

bool lfs_views_may_fit(size_t n, const lfs_view_opts *opts)
{
	size_t budget = opts ? opts->view_budget : 0, fixed = held_for(n);
	/* what is left for the views must at least fit a file's worth */
	return !budget || (fixed < budget && budget - fixed >= n);
}

/* lfs_view_opts.only: free every view of @p vs but the one at @p path. */
static void keep_only(lfs_viewset *vs, const char *path)
{
	size_t w = 0;
	for (size_t i = 0; i < vs->n_views; i++) {
		if (strcmp(vs->views[i].path, path) == 0) {
			vs->views[w++] = vs->views[i];
		} else {
			free(vs->views[i].path);
			free(vs->views[i].data);
		}
	}
	vs->n_views = w;
}

/* The views of @p data (@p n bytes) by format @p f; @p model: its decode
 * (read only) when the caller holds it and f->build_views_model exists. */
static lfs_err build_m(const lfs_format *f, const char *name, const uint8_t *data, size_t n,
		       const void *model, const lfs_view_opts *opts, lfs_viewset *out,
		       lfs_error *err)
{
	memset(out, 0, sizeof(*out));
	size_t budget = opts ? opts->view_budget : 0, fixed = held_for(n);
	if (!lfs_views_may_fit(n, opts))
		return over_budget(f, name, n, budget, 0, out, err);
	lfs_vlist l = { 0 };
	l.budget = budget ? budget - fixed : 0;
	l.only = opts ? opts->only : NULL;
	l.names_only = opts && opts->names_only;
	size_t old_limit = budget ? lfs_sb_set_limit(l.budget) : 0;
	lfs_err r = model && f->build_views_model ? f->build_views_model(model, opts, &l, err)
						  : f->build_views(data, n, opts, &l, err);
	bool pending = false;
	/* thumbnail.png not wanted (another view is): no scene, no render */
	bool want_thumb = !l.only || strcmp(l.only, LFS_VIEWSET_THUMB_NAME) == 0;
	if (!want_thumb) {
		/* nothing */
	} else if (!r && !l.failed && opts && opts->thumb_size && f->thumb_scene &&
		   (opts->thumb_lazy || l.names_only)) {
		/* listed now, drawn when asked for (lfs_viewset_thumb_set) */
		if (lfs_views_thumb_drawable(f, data, n)) {
			lfs_sb sb = { 0 };
			lfs_sb_puts(&sb, "pending");
			lfs_vlist_add(&l, LFS_VIEWSET_THUMB_NAME, LFS_VIEW_THUMBNAIL, LFS_VIEW_WHOLE,
				      false, &sb);
			/* names only without thumb_lazy: listed when drawable, as a
			 * full build lists it when the render succeeds */
			pending = opts->thumb_lazy;
		}
	} else if (!r && !l.failed && opts && opts->thumb_size && f->thumb_scene) {
		/* thumbnail.png: a model without drawable triangles (or whose render
		 * fails) simply has none; the other views stand. */
		uint8_t *png = NULL;
		size_t pngn = 0;
		lfs_error te;
		if (lfs_thumb_model(f, data, n, opts->thumb_size, opts, opts->thumb_uri,
				    opts->thumb_mtime, &png, &pngn, &te) == LFS_OK) {
			lfs_sb sb = { 0 };
			lfs_sb_put(&sb, png, pngn);
			lfs_vlist_add(&l, "thumbnail.png", LFS_VIEW_THUMBNAIL, LFS_VIEW_WHOLE, false,
				      &sb);
		}
		free(png);
	}
	bool over = budget && (l.over || lfs_sb_limit_hit());
	if (budget)
		lfs_sb_set_limit(old_limit);
	if (over) {
		size_t built = l.budget; /* what the views had; they passed it */
		lfs_vlist_discard(&l);
		return over_budget(f, name, n, budget, built, out, err);
	}
	if (!r && l.failed)
		r = lfs_nomem(err, "views");
	if (r) {
		lfs_vlist_discard(&l);
		return r;
	}
	lfs_vlist_finish(&l, out);
	out->format = f;
	for (size_t i = 0; i < out->n_views && !out->writable; i++)
		out->writable = out->views[i].writable;
	if (opts && opts->only)
		keep_only(out, opts->only);
	if (opts && opts->names_only) {
		/* what the builder wrote anyway is dropped: names only */
		for (size_t i = 0; i < out->n_views; i++) {
			free(out->views[i].data);
			out->views[i].data = NULL;
			out->views[i].size = 0;
		}
		out->names_only = true;
	}
	if (pending) {
		lfs_view *tv = (lfs_view *)lfs_viewset_find(out, LFS_VIEWSET_THUMB_NAME);
		if (tv && tv->kind == LFS_VIEW_THUMBNAIL) {
			free(tv->data);
			tv->data = NULL;
			tv->size = 0;
			out->thumb_pending = true;
		}
	}
	return LFS_OK;
}

bool lfs_views_thumb_drawable(const lfs_format *f, const uint8_t *data, size_t n)
{
	lfs_thumb_scene s = { 0 };
	lfs_error e;
	/* no texture_read: presence needs triangles, not texels */
	bool yes = lfs_thumb_scene_of(f, data, n, NULL, &s, &e) == LFS_OK && !s.failed &&
		   lfs_thumb_drawable(&s) > 0;
	lfs_thumb_scene_free(&s);
	return yes;
}

lfs_view *lfs_viewset_thumb_pending(lfs_viewset *vs)
{
	if (!vs || !vs->thumb_pending)
		return NULL;
	lfs_view *v = (lfs_view *)lfs_viewset_find(vs, LFS_VIEWSET_THUMB_NAME);
	return v && v->kind == LFS_VIEW_THUMBNAIL && !v->data ? v : NULL;
}

void lfs_viewset_thumb_set(lfs_viewset *vs, uint8_t *png, size_t n)
{
	lfs_view *v = lfs_viewset_thumb_pending(vs);
	if (!v) {
		free(png);
		return;
	}
	v->data = (char *)png;
	v->size = n;
	vs->thumb_pending = false;
}

bool lfs_viewset_thumb_reset(lfs_viewset *vs)
{
	lfs_view *v = vs ? (lfs_view *)lfs_viewset_find(vs, LFS_VIEWSET_THUMB_NAME) : NULL;
	if (!v || v->kind != LFS_VIEW_THUMBNAIL || !v->data || vs->thumb_busy)
		return false;
	free(v->data);
	v->data = NULL;
	v->size = 0;
	vs->thumb_pending = true;
	return true;
}

lfs_err lfs_views_build(const char *name, const uint8_t *data, size_t n,
			const lfs_view_opts *opts, lfs_viewset *out, lfs_error *err)
{
	memset(out, 0, sizeof(*out));
	const lfs_format *f = lfs_format_for(name, data, n);
	if (!f)
		return not_a_model(name, err);
	return build_m(f, name, data, n, NULL, opts, out, err);
}

lfs_err lfs_views_build_as(const lfs_format *f, const uint8_t *data, size_t n,
			   const lfs_view_opts *opts, lfs_viewset *out, lfs_error *err)
{
	return build_m(f, NULL, data, n, NULL, opts, out, err);
}

lfs_err lfs_views_build_model(const lfs_format *f, const void *model, const uint8_t *data,
			      size_t n, const lfs_view_opts *opts, lfs_viewset *out,
			      lfs_error *err)
{
	return build_m(f, NULL, data, n, model, opts, out, err);
}

/* Line numbers (1-based, ascending, unique) the warnings in @p w name for
 * the view @p path ("path:LINE:COL: warning: ..."); malloc'd, *cnt set. */
static unsigned *warned_lines(const lfs_warnings *w, const char *path, size_t *cnt)
{
	*cnt = 0;
	if (!w || !w->len)
		return NULL;
	size_t pl = strlen(path), cap = 0;
	unsigned *ls = NULL;
	for (const char *p = w->text; p && *p;) {
		const char *e = strchr(p, '\n');
		if (!strncmp(p, path, pl) && p[pl] == ':' && p[pl + 1] >= '0' && p[pl + 1] <= '9') {
			unsigned long ln = strtoul(p + pl + 1, NULL, 10);
			if (ln > 0 && ln < UINT32_MAX && (!*cnt || ls[*cnt - 1] < ln)) {
				if (!lfs_grow((void **)&ls, &cap, *cnt + 1, sizeof(*ls))) {
					free(ls);
					*cnt = 0;
					return NULL;
				}
				ls[(*cnt)++] = (unsigned)ln;
			}
		}
		p = e ? e + 1 : NULL;
	}
	return ls;
}

static bool is_row(const char *a, const char *e)
{
	while (a < e && (*a == ' ' || *a == '\t'))
		a++;
	return a < e && ((*a >= '0' && *a <= '9') || *a == '-' || *a == '+' || *a == '.');
}

/*
 * The round-trip law's one allowance for warnings (docs/editing.md "The
 * round-trip law"): a statement the apply dropped *with a warning naming its
 * line* (NWN: a degenerate face) is not silent, so the law compares the
 * saved text without it. Returns a malloc'd copy of @p text with each warned
 * line blanked (numbering kept) and, for a blanked data row, the count at
 * the end of the list header above it ("faces 13") lowered by one; NULL when
 * no warning names this view or on allocation failure.
 */
static char *law_excused(const char *path, const char *text, size_t tn, const lfs_warnings *w,
			 size_t *outn)
{
	size_t nw = 0;
	unsigned *wl = warned_lines(w, path, &nw);
	if (!nw)
		return NULL;
	/* line starts */
	size_t nl = 1;
	for (size_t i = 0; i < tn; i++)
		nl += text[i] == '\n';
	size_t *st = malloc((nl + 1) * sizeof(*st));
	int *drop = calloc(nl + 1, sizeof(*drop)); /* -1 blank, >0 rows dropped below */
	char *o = malloc(tn + 1);
	if (!st || !drop || !o) {
		free(st);
		free(drop);
		free(o);
		free(wl);
		return NULL;
	}
	size_t k = 0;
	st[k++] = 0;
	for (size_t i = 0; i < tn; i++)
		if (text[i] == '\n')
			st[k++] = i + 1;
	st[nl] = tn + 1;
	for (size_t j = 0; j < nw; j++) {
		size_t li = wl[j] - 1;
		if (li >= nl)
			continue;
		const char *a = text + st[li], *e = text + st[li + 1] - 1;
		drop[li] = -1;
		if (!is_row(a, e))
			continue;
		for (size_t h = li; h-- > 0;) {
			const char *ha = text + st[h], *he = text + st[h + 1] - 1;
			if (drop[h] == -1 || is_row(ha, he))
				continue;
			if (ha < he)
				drop[h]++;
			break;
		}
	}
	size_t on = 0;
	for (size_t li = 0; li < nl && st[li] <= tn; li++) {
		const char *a = text + st[li];
		size_t len = (st[li + 1] - 1 > tn ? tn : st[li + 1] - 1) - st[li];
		bool nlc = st[li] + len < tn;
		if (drop[li] > 0) {
			/* lower the trailing integer of the header by drop[li] */
			size_t end = len;
			while (end > 0 && (a[end - 1] == ' ' || a[end - 1] == '\t' || a[end - 1] == '\r'))
				end--;
			size_t b = end;
			while (b > 0 && a[b - 1] >= '0' && a[b - 1] <= '9')
				b--;
			if (b < end && b > 0) {
				unsigned long c = strtoul(a + b, NULL, 10);
				if (c >= (unsigned long)drop[li]) {
					char num[32];
					int nn = snprintf(num, sizeof(num), "%lu", c - (unsigned long)drop[li]);
					memcpy(o + on, a, b);
					on += b;
					memcpy(o + on, num, (size_t)nn); /* never longer than the digits */
					on += (size_t)nn;
					memcpy(o + on, a + end, len - end);
					on += len - end;
					if (nlc)
						o[on++] = '\n';
					continue;
				}
			}
		}
		if (drop[li] != -1) {
			memcpy(o + on, a, len);
			on += len;
		}
		if (nlc)
			o[on++] = '\n';
	}
	o[on] = 0;
	free(st);
	free(drop);
	free(wl);
	*outn = on;
	return o;
}

/* Only spaces, tabs and line ends (or nothing)? */
static bool blank_text(const char *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (t[i] != ' ' && t[i] != '\t' && t[i] != '\r' && t[i] != '\n')
			return false;
	return true;
}

/* An empty save of a view that shows something: the one rule of every
 * format (docs/editing.md "Refused saves"): an editor's truncate-then-crash,
 * a `> file`, a rename of an empty file would otherwise delete the mesh,
 * track or model the view shows. Deleting is done where the thing is named. */
static lfs_err refuse_empty(const lfs_view *v, lfs_error *err)
{
	const char *how;
	switch (v->kind) {
	case LFS_VIEW_MESH_OBJ:
		how = "an empty file does not delete the mesh: to delete it, delete its node in the model's text (model.mdl, model.txt)";
		break;
	case LFS_VIEW_MODEL_OBJ:
		how = "an empty file does not delete the meshes: to delete one, delete its node in the model's text (model.mdl, model.txt)";
		break;
	case LFS_VIEW_TRACK_CSV:
		how = "an empty file does not delete the keys: to delete a track, delete its key list in the model's text (model.mdl, model.txt, anim.txt)";
		break;
	case LFS_VIEW_TABLE_CSV:
		how = "to empty the table, keep its header row";
		break;
	default:
		how = "an empty file does not delete the model: to delete it, delete the model file in the source folder";
		break;
	}
	return lfs_fail_at(err, v->path, 1, 1, "the view is empty: nothing was saved (%s)", how);
}

lfs_err lfs_view_apply_keep(const lfs_format *f, const uint8_t *orig, size_t n, const lfs_view *v,
			    const char *text, size_t tn, const lfs_siblings *sib, uint8_t **out,
			    size_t *outn, char **reread, size_t *rn, lfs_error *err)
{
	*out = NULL;
	*outn = 0;
	char *rd = NULL;
	size_t rdn = 0;
	if (reread) {
		*reread = NULL;
		*rn = 0;
	}
	if (!f->apply || !v->writable)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: this view is read-only", v->path);
	if (blank_text(text, tn) && !blank_text((const char *)v->data, v->size) &&
	    v->kind != LFS_VIEW_RESOURCE)
		return refuse_empty(v, err);
	/* the model the apply decoded from its result, if it hands it back:
	 * the law builds the saved view from it (the bytes are decoded once) */
	void *res = NULL;
	lfs_err r = f->apply_decoded && f->free_model
			    ? f->apply_decoded(orig, n, v, text, tn, sib, out, outn, &res, err)
			    : f->apply(orig, n, v, text, tn, sib, out, outn, err);
	/* the round-trip law; a result equal to @p orig reads back as v itself
	 * (v was built from these very bytes), no need to build the views again */
	bool same = !r && *outn == n && memcmp(*out, orig, n) == 0;
	if (same)
		r = lfs_law_compare(f, v->path, v->kind, text, tn, v->data, v->size, err);
	else if (!r)
		r = lfs_law_check_model(f, v, text, tn, *out, *outn, res, reread ? &rd : NULL, &rdn,
					err);
	if (r == LFS_ERR_PARSE && *out && sib && sib->warn && sib->warn->count) {
		/* statements dropped with a warning naming their line are not silent */
		size_t xn = 0;
		char *x = law_excused(v->path, text, tn, sib->warn, &xn);
		if (x) {
			lfs_error e2;
			memset(&e2, 0, sizeof(e2));
			lfs_err r2 = same ? lfs_law_compare(f, v->path, v->kind, x, xn, v->data,
							    v->size, &e2)
					  : lfs_law_check_model(f, v, x, xn, *out, *outn, res,
								reread && !rd ? &rd : NULL, &rdn,
								&e2);
			if (r2 == LFS_OK)
				r = LFS_OK;
			free(x);
		}
	}
	/* the law over the whole model: the other views change only where the
	 * edit explains it */
	if (!r && !same)
		r = lfs_law_check_whole(f, v, orig, n, *out, *outn, res, err);
	if (res)
		f->free_model(res);
	if (r) {
		free(*out);
		*out = NULL;
		*outn = 0;
		free(rd);
		return r;
	}
	if (reread && same && (rd = malloc(v->size ? v->size : 1)) != NULL) {
		/* the model kept its bytes: it reads back as v itself */
		memcpy(rd, v->data, v->size);
		rdn = v->size;
	}
	if (reread) {
		*reread = rd;
		*rn = rd ? rdn : 0;
	} else {
		free(rd);
	}
	return r;
}

lfs_err lfs_view_apply(const lfs_format *f, const uint8_t *orig, size_t n, const lfs_view *v,
		       const char *text, size_t tn, const lfs_siblings *sib, uint8_t **out,
		       size_t *outn, lfs_error *err)
{
	return lfs_view_apply_keep(f, orig, n, v, text, tn, sib, out, outn, NULL, NULL, err);
}

lfs_err lfs_views_apply(const char *name, const uint8_t *orig, size_t n, const char *viewpath,
			const char *text, size_t tn, uint8_t **out, size_t *outn, lfs_error *err)
{
	return lfs_views_apply_ex(name, orig, n, viewpath, text, tn, NULL, NULL, out, outn, err);
}

lfs_err lfs_views_apply_ex(const char *name, const uint8_t *orig, size_t n, const char *viewpath,
			   const char *text, size_t tn, lfs_sibling_read_fn sib, void *sib_ctx,
			   uint8_t **out, size_t *outn, lfs_error *err)
{
	*out = NULL;
	*outn = 0;
	const lfs_format *f = lfs_format_for(name, orig, n);
	if (!f)
		return not_a_model(name, err);
	if (!f->apply)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: this view is read-only", viewpath);
	lfs_view_opts o = { .only = viewpath }; /* the edited view alone */
	lfs_viewset vs;
	lfs_err r = lfs_views_build(name, orig, n, &o, &vs, err);
	if (r)
		return r;
	const lfs_view *v = lfs_viewset_find(&vs, viewpath);
	lfs_siblings s = { sib, sib_ctx, NULL };
	if (!v)
		r = lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL, "%s: no such view", viewpath);
	else
		r = lfs_view_apply(f, orig, n, v, text, tn, sib ? &s : NULL, out, outn, err);
	lfs_viewset_free(&vs);
	return r;
}

lfs_err lfs_views_thumbnail(const char *name, const uint8_t *data, size_t n, unsigned size,
			    const lfs_view_opts *opts, const char *uri, int64_t mtime,
			    uint8_t **png, size_t *pngn, lfs_error *err)
{
	*png = NULL;
	*pngn = 0;
	const lfs_format *f = lfs_format_for(name, data, n);
	if (!f)
		return not_a_model(name, err);
	return lfs_thumb_model(f, data, n, size, opts, uri, mtime, png, pngn, err);
}
