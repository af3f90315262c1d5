/**
 * @file law_priv.h
 * What the parts of the round-trip law share (law.c: tokenizer, MDL-style
 * and CSV comparison, entry points; law_obj.c: OBJ comparison;
 * law_model.c: the law over the whole model). Not a public interface.
 */
#ifndef LFS_VIEWS_LAW_PRIV_H
#define LFS_VIEWS_LAW_PRIV_H

#include "law.h"
#include "text/obj.h"

/** One token of a text: bytes @p s (not NUL-terminated, @p len of them),
 *  1-based column @p col. */
typedef struct ltok {
	const char *s;
	uint32_t len, col;
} ltok;

typedef struct lline {
	uint32_t line, tok0, ntok;
} lline;

typedef struct ltext {
	ltok *t;
	size_t nt, ct;
	lline *l;
	size_t nl, cl;
	uint32_t end_line, end_col; /* just past the last character of the text */
	int failed;
} ltext;

/** Token kinds of lfs_law_tok_num(). */
enum { NUM_NO = 0, NUM_FINITE, NUM_NAN, NUM_INF };

/** One comparison: the dialect, the saved (S) and read-back (R) texts
 *  tokenized, where to report. */
typedef struct lctx {
	const char *path;
	const lfs_law_dialect *d;
	uint64_t free_cols; /* CSV: columns not compared (bit = column) */
	ltext S, R; /* saved, read back */
	lfs_error *err;
	int depth;
} lctx;

/**
 * Token @p t as a number: NUM_FINITE with its value and the tolerance its
 * printed precision gives (half a unit of its last printed digit when it
 * has a '.', else 0), NUM_NAN, NUM_INF (sign in *v), NUM_NO.
 */
int lfs_law_tok_num(ltok t, double *v, double *tol);

/** Saved value @p sv (printed tolerance @p tol) against read-back value
 *  @p rv: within the tolerance plus one float32 ulp. */
bool lfs_law_val_eq(double sv, double tol, double rv);

/**
 * The OBJ comparison (docs/editing.md "The round-trip law", row "OBJ") of
 * saved text @p saved (@p sn bytes, tokenized in c->S) against @p reread
 * (@p rn bytes); @p whole: a meshes/ view (one object); @p orig (@p on
 * bytes) the view the save was made from, NULL: @p reread.
 * @return LFS_OK, or LFS_ERR_PARSE with `path:line:col: error:` in c->err.
 */
lfs_err lfs_law_compare_obj(lctx *c, bool whole, const char *saved, size_t sn, const char *reread,
			    size_t rn, const char *orig, size_t on);

#endif
