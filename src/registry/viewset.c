/**
 * @file viewset.c
 * The set of generated views of one model, through the format registry
 * (viewset.h): build, find, render the thumbnail (the apply of an edited
 * view: viewset_apply.c).
 * Nothing here knows a format; every format-specific step is a call through
 * its lfs_format row (src/registry/format.h).
 */
#include "viewset.h"

#include "../common/mem.h"
#include "../common/strbuf.h"
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

lfs_err lfs_views_not_a_model(const char *name, lfs_error *err)
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
		return lfs_views_not_a_model(name, err);
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

lfs_err lfs_views_thumbnail(const char *name, const uint8_t *data, size_t n, unsigned size,
			    const lfs_view_opts *opts, const char *uri, int64_t mtime,
			    uint8_t **png, size_t *pngn, lfs_error *err)
{
	*png = NULL;
	*pngn = 0;
	const lfs_format *f = lfs_format_for(name, data, n);
	if (!f)
		return lfs_views_not_a_model(name, err);
	return lfs_thumb_model(f, data, n, size, opts, uri, mtime, png, pngn, err);
}
