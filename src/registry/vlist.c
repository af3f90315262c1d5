/**
 * @file vlist.c
 * Growing list of views (see vlist.h).
 *
 * Allocation: a view's text is moved out of its strbuf and shrunk to its
 * length (a strbuf doubles, so up to half of its capacity is slack), and the
 * finished array of views is shrunk to its count, so what a cached viewset
 * holds in malloc is its bytes plus malloc's own per-chunk rounding (the
 * view cache accounts that too: cache.c).
 */
#include "vlist.h"

#include "../common/mem.h"

#include <stdint.h>

#include <stdlib.h>
#include <string.h>

/* @p d (malloc'd) cut to @p n bytes when that frees something; @p d when realloc fails. */
static void *shrink(void *d, size_t n)
{
	if (!d)
		return NULL;
	void *s = realloc(d, n);
	return s ? s : d;
}

void lfs_vlist_add(lfs_vlist *l, const char *path, lfs_view_kind kind, lfs_view_target target,
		   bool writable, lfs_sb *sb)
{
	if (l->failed || !lfs_sb_ok(sb)) {
		l->failed = 1;
		lfs_sb_free(sb);
		return;
	}
	if (!lfs_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v))) {
		l->failed = 1;
		lfs_sb_free(sb);
		return;
	}
	char *p = strdup(path);
	size_t len;
	char *d = lfs_sb_take(sb, &len);
	d = shrink(d, len + 1); /* the text and its NUL, without the strbuf's slack */
	if (!p || !d) {
		free(p);
		free(d);
		l->failed = 1;
		return;
	}
	l->v[l->n].path = p;
	l->v[l->n].data = d;
	l->v[l->n].size = len;
	l->v[l->n].kind = kind;
	l->v[l->n].target = target;
	l->v[l->n].writable = writable;
	l->n++;
	if (!l->budget)
		return;
	size_t add = len + strlen(path) + 1 + sizeof(lfs_view);
	l->bytes = add > SIZE_MAX - l->bytes ? SIZE_MAX : l->bytes + add;
	if (l->bytes > l->budget) {
		/* over: give the memory back now, the builder stops at `failed` */
		size_t bytes = l->bytes, budget = l->budget;
		lfs_vlist_discard(l);
		l->bytes = bytes;
		l->budget = budget;
		l->over = true;
		l->failed = 1;
		return;
	}
	lfs_sb_set_limit(l->budget - l->bytes);
}

static int view_cmp(const void *a, const void *b)
{
	return strcmp(((const lfs_view *)a)->path, ((const lfs_view *)b)->path);
}

void lfs_vlist_finish(lfs_vlist *l, lfs_viewset *out)
{
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), view_cmp);
	if (l->n < l->cap)
		l->v = shrink(l->v, l->n ? l->n * sizeof(*l->v) : 1);
	out->views = l->v;
	out->n_views = l->n;
	memset(l, 0, sizeof(*l));
}

void lfs_vlist_discard(lfs_vlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].data);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

bool lfs_vlist_wants(const lfs_vlist *l, const char *path)
{
	if (l->names_only)
		return false;
	return !l->only || strcmp(l->only, path) == 0;
}

void lfs_vlist_name(lfs_vlist *l, const char *path, lfs_view_kind kind, lfs_view_target target,
		    bool writable)
{
	if (!l->names_only)
		return;
	lfs_sb sb = { 0 };
	lfs_vlist_add(l, path, kind, target, writable, &sb);
}
