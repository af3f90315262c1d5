/**
 * @file viewset_apply.c
 * The apply half of viewset.h: an edited view in, new model bytes out,
 * through the view's lfs_format row (apply / apply_decoded) and held to the
 * round-trip law (src/law/law.h) before anything is returned. Above both the
 * view set (viewset.c: build, find) and the law (which builds the saved view
 * again through viewset.c), so that neither includes the other's caller.
 */
#include "viewset.h"

#include "common/mem.h"
#include "law/law.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* As viewset.c: the error of a file no registry row decodes. */
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
	lfs_viewset vs;
	const lfs_view *v;
	lfs_err r = lfs_views_edited(name, orig, n, viewpath, &vs, &v, err);
	lfs_siblings s = { sib, sib_ctx, NULL };
	if (!r)
		r = lfs_view_apply(vs.format, orig, n, v, text, tn, sib ? &s : NULL, out, outn, err);
	lfs_viewset_free(&vs);
	return r;
}

lfs_err lfs_views_edited(const char *name, const uint8_t *orig, size_t n, const char *viewpath,
			 lfs_viewset *own, const lfs_view **v, lfs_error *err)
{
	*v = NULL;
	memset(own, 0, sizeof(*own));
	const lfs_format *f = lfs_format_for(name, orig, n);
	if (!f)
		return lfs_views_not_a_model(name, err);
	if (!f->apply)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: this view is read-only", viewpath);
	lfs_view_opts o = { .only = viewpath }; /* the edited view alone */
	lfs_err r = lfs_views_build(name, orig, n, &o, own, err);
	if (r)
		return r;
	*v = lfs_viewset_find(own, viewpath);
	if (!*v)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL, "%s: no such view", viewpath);
	return LFS_OK;
}
