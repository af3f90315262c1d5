/**
 * @file vlist.h
 * Growing list of views used by every format's view builder (viewset.c).
 *
 * Builders append (path, kind, target, writable, text) with lfs_vlist_add(); allocation failure
 * is sticky (`failed`), checked once by the caller. lfs_vlist_finish() sorts
 * the list by path and hands it over to an lfs_viewset. Paths must already be
 * safe and unique (names.h).
 */
#ifndef LFS_VLIST_H
#define LFS_VLIST_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/strbuf.h"
#include "viewset.h"

typedef struct lfs_vlist {
	lfs_view *v;
	size_t n, cap;
	int failed;
	/** Bound of the bytes the views may take (text + path + entry), 0 = none;
	 *  set by the caller before the builder runs (viewset.c). */
	size_t budget;
	size_t bytes;    /**< bytes taken by the views so far */
	bool over;       /**< the budget was exceeded: every view was dropped and
			  *   the list marked failed (builders stop at `failed`) */
	const char *only; /**< lfs_view_opts.only (set by viewset.c): NULL = every view */
	bool names_only;  /**< lfs_view_opts.names_only (set by viewset.c) */
} lfs_vlist;

/**
 * Does the caller want the text of the view at @p path? False when the
 * list is built names only (lfs_view_opts.names_only) or for another view
 * than lfs_view_opts.only. A builder may then skip writing that view's
 * text: with names_only it still calls lfs_vlist_add() (an empty strbuf:
 * the name is listed), with `only` it may leave the view out. Skipping is an
 * optimisation: viewset.c drops unwanted bytes and views afterwards anyway.
 */
bool lfs_vlist_wants(const lfs_vlist *l, const char *path);

/**
 * Take over @p sb's bytes (sb is reset) as the view at @p path (copied) that
 * shows @p target of the model as @p kind; @p writable: saving it re-encodes
 * the model (the format's apply maps this view back exactly). On allocation
 * failure (or a failed @p sb) the list is marked failed and sb freed.
 * With a budget: when the views' bytes pass it, every view is freed at once,
 * `over` and `failed` are set; otherwise the per-thread strbuf bound
 * (lfs_sb_set_limit) is lowered to what is left of the budget.
 */
void lfs_vlist_add(lfs_vlist *l, const char *path, lfs_view_kind kind, lfs_view_target target,
		   bool writable, lfs_sb *sb);

/**
 * The view at @p path is not wanted (lfs_vlist_wants() said false): with
 * names_only it is listed all the same (lfs_vlist_add() of an empty text,
 * with the same kind, target and writable flag a full build gives it);
 * with `only` (another view wanted) nothing is added.
 */
void lfs_vlist_name(lfs_vlist *l, const char *path, lfs_view_kind kind, lfs_view_target target,
		    bool writable);

/** Sort by path and move the views into @p out (format left to the caller). */
void lfs_vlist_finish(lfs_vlist *l, lfs_viewset *out);

/** Free every view in the list (after a failed build). */
void lfs_vlist_discard(lfs_vlist *l);

#endif
