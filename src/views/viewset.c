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
#include "law.h"
#include "thumb_models.h"
#include "vlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

lfs_err lfs_views_build(const char *name, const uint8_t *data, size_t n,
			const lfs_view_opts *opts, lfs_viewset *out, lfs_error *err)
{
	memset(out, 0, sizeof(*out));
	const lfs_format *f = lfs_format_for(name, data, n);
	if (!f)
		return not_a_model(name, err);
	return lfs_views_build_as(f, data, n, opts, out, err);
}

lfs_err lfs_views_build_as(const lfs_format *f, const uint8_t *data, size_t n,
			   const lfs_view_opts *opts, lfs_viewset *out, lfs_error *err)
{
	memset(out, 0, sizeof(*out));
	lfs_vlist l = { 0 };
	lfs_err r = f->build_views(data, n, opts, &l, err);
	if (!r && opts && opts->thumb_size && f->thumb_scene) {
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
	return LFS_OK;
}

lfs_err lfs_view_apply(const lfs_format *f, const uint8_t *orig, size_t n, const lfs_view *v,
		       const char *text, size_t tn, const lfs_siblings *sib, uint8_t **out,
		       size_t *outn, lfs_error *err)
{
	*out = NULL;
	*outn = 0;
	if (!f->apply || !v->writable)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: this view is read-only", v->path);
	lfs_err r = f->apply(orig, n, v, text, tn, sib, out, outn, err);
	/* the round-trip law; a result equal to @p orig reads back as v itself
	 * (v was built from these very bytes), no need to build the views again */
	if (!r && *outn == n && memcmp(*out, orig, n) == 0)
		r = lfs_law_compare(f, v->path, v->kind, text, tn, v->data, v->size, err);
	else if (!r)
		r = lfs_law_check(f, v, text, tn, *out, *outn, err);
	if (r) {
		free(*out);
		*out = NULL;
		*outn = 0;
	}
	return r;
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
	lfs_viewset vs;
	lfs_err r = lfs_views_build(name, orig, n, NULL, &vs, err);
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
