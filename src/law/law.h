/**
 * @file law.h
 * The round-trip law (docs/editing.md "The round-trip law"): a save of a
 * view is accepted only if reading the same view of the new model bytes
 * gives back the saved text, up to the normalisations listed there
 * (whitespace, comments, numbers at the precision the saved text printed,
 * statement order where the format pairs statements by keyword, documented
 * defaults; for OBJ the face corners as values; for CSV fields as values).
 *
 * lfs_view_apply() (viewset.h) runs lfs_law_check() on every result of a
 * format's apply, so the mount's commit and `legacyfs-convert apply` both
 * refuse, with `view:line:col: error: ...`, the first saved statement that
 * would not survive. Nothing here knows a format: what differs between the
 * MDL-style dialects (order-free blocks, statements that are comments,
 * defaults) is the optional lfs_format.law row member.
 *
 * The law over the whole model (lfs_law_check_whole(), law_model.c) then
 * holds the other views of the new bytes to the edit: they change only
 * where the edit explains it (lfs_law_dialect.lists and .derived).
 * law.c holds the tokenizer, the MDL-style and CSV comparisons and the
 * entry points; law_obj.c the OBJ comparison.
 */
#ifndef LFS_VIEWS_LAW_H
#define LFS_VIEWS_LAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "registry/format.h"

/**
 * A documented default: a statement the re-read text may have although the
 * saved text does not (the encoder writes it when it is left out), e.g.
 * `{ "shininess", "1" }`. @p values are compared as values (numbers at their
 * printed precision), token by token, a "*" token matching any; NULL = any
 * values and any data rows after the keyword line (a list the encoder
 * derives, e.g. NWN's computed `normals`). The keyword "*" with values "0" stands for every statement whose
 * values are all numbers equal to 0 (a compiler that zeroes what the text
 * leaves out).
 */
typedef struct lfs_law_default {
	const char *keyword;
	const char *values;
} lfs_law_default;

/**
 * One list of an MDL-style text whose rows show elements of a mesh (the law
 * over the whole model, lfs_law_check_whole()): row i of list @p keyword of
 * node/object X, values @p col0 .. @p col0 + @p ncol - 1 (0 = the row's
 * first number), show element i's @p attr in X's OBJ views ('v' position,
 * 't' uv, 'n' normal, 'f' face). A list may have several entries (NOD's
 * `verts` rows hold position, normal and uv).
 */
typedef struct lfs_law_list {
	const char *keyword;
	char attr;
	uint8_t col0, ncol;
} lfs_law_list;

/**
 * What the law needs to know of an MDL-style text dialect (the LFS_VIEW_TEXT
 * view of a format). A format without one (lfs_format.law NULL) gets the
 * strict reading: '#' comment lines, statements compared in order, no
 * defaults.
 */
typedef struct lfs_law_dialect {
	/** Comment lines start with this character (after blanks). */
	char comment;
	/** Comment lines that are statements all the same, by prefix (NWN's
	 *  "#part-number"), NULL-terminated; NULL = none. */
	const char *const *kept_comments;
	/**
	 * true: the applier pairs the statements of a block by (keyword,
	 * occurrence), so their order is free: a block is compared as a
	 * multiset of statement groups (a keyword line and the data rows —
	 * lines starting with a number — after it; the rows stay ordered).
	 * false: every statement is compared in order.
	 */
	bool any_order;
	/** Words opening a block (NWN "node", "newanim"), NULL-terminated, and
	 *  the words closing them, index for index ("endnode", "doneanim").
	 *  Used when any_order is true. */
	const char *const *block_open;
	const char *const *block_close;
	/** Tokens the encoder does not store and writes itself, compared as
	 *  free: "keyword index" strings (index of the token, 0 = keyword),
	 *  NULL-terminated, e.g. NWN's "newanim 2" (the model name, always the
	 *  model's own); NULL = none. */
	const char *const *free_tokens;
	/** Keywords whose line (or data rows) end in an axis-angle rotation
	 *  `x y z angle` that the encoder stores as a quaternion: those four
	 *  values compare as rotations (quaternions within 2e-5, either sign),
	 *  NULL-terminated; NULL = none. */
	const char *const *axis_angle;
	/** CSV views: columns (by header name) the encoder derives and the
	 *  apply ignores, not compared (SOD's `time`), NULL-terminated;
	 *  NULL = none. */
	const char *const *csv_free_columns;
	/** Defaults, terminated by { NULL, NULL }; NULL = none. */
	const lfs_law_default *defaults;
	/** The law over the whole model: lists whose rows show mesh elements,
	 *  terminated by { NULL }; NULL = none (a changed row is then
	 *  explained only by an edit of its whole node). */
	const lfs_law_list *lists;
	/** The law over the whole model: keywords of statements (and lists)
	 *  the encoder derives from the positions (bounds, radius), which may
	 *  change when a position of their node (at model level: any) does;
	 *  NULL-terminated; NULL = none. */
	const char *const *derived;
} lfs_law_dialect;

/**
 * Check the law for a save that produced @p out (@p outn bytes) from the
 * text @p text (@p tn bytes) of view @p v of a model of format @p f: build
 * the view with @p v's path of @p out (lfs_views_build() with
 * lfs_view_opts.only: no other view is written) and compare
 * (lfs_law_compare()).
 * @return LFS_OK when the law holds; LFS_ERR_PARSE with `path:line:col:
 *         error: ...` at the first saved statement that does not survive
 *         (or at the end of the text when the re-read text has more);
 *         LFS_ERR_NOMEM; the decoder's error when @p out does not decode.
 */
lfs_err lfs_law_check(const lfs_format *f, const lfs_view *v, const char *text, size_t tn,
		      const uint8_t *out, size_t outn, lfs_error *err);

/**
 * lfs_law_check() that also hands back the text view @p v reads back as
 * from @p out (the bytes a fresh build of @p out gives for that view, so a
 * commit need not build the views again to know what it serves):
 * *reread (malloc'd, caller frees; *rn bytes) on LFS_OK, NULL when the law
 * does not apply to the view's kind (thumbnail, materials) or on failure.
 * @return as lfs_law_check().
 */
lfs_err lfs_law_check_keep(const lfs_format *f, const lfs_view *v, const char *text, size_t tn,
			   const uint8_t *out, size_t outn, char **reread, size_t *rn,
			   lfs_error *err);

/**
 * lfs_law_check_keep() given the model the new bytes decode to: @p model
 * (read only, not retained) must be @p f's decode of exactly @p out
 * (@p outn bytes), e.g. the one the format's apply_decoded handed back;
 * the view is then built from it (lfs_views_build_model()) instead of
 * decoding @p out again. @p model NULL: lfs_law_check_keep(). The verdict
 * and *reread are the same either way.
 * @return as lfs_law_check().
 */
lfs_err lfs_law_check_model(const lfs_format *f, const lfs_view *v, const char *text, size_t tn,
			    const uint8_t *out, size_t outn, const void *model, char **reread,
			    size_t *rn, lfs_error *err);

/**
 * Compare a saved text with the text the same view reads back as (@p kind
 * selects the comparison: MDL-style text with @p f's dialect, OBJ, CSV).
 * @p path names the view in messages.
 * @return as lfs_law_check().
 */
lfs_err lfs_law_compare(const lfs_format *f, const char *path, lfs_view_kind kind,
			const char *saved, size_t sn, const char *reread, size_t rn,
			lfs_error *err);

/**
 * lfs_law_compare() knowing the view the save was made from, @p orig
 * (@p on bytes; NULL: the re-read text itself, a save that left the model
 * as it was). OBJ views need it for the apply's normal rules
 * (docs/formats/obj-csv.md "Saving OBJ from other programs"): with as many
 * faces as @p orig, all triangles (the value path), the normals of a face
 * whose saved positions moved are not compared, and a vertex whose saved
 * corners disagree about its normal keeps the normal @p orig shows.
 * lfs_law_check() passes the view's own text.
 * @return as lfs_law_check().
 */
lfs_err lfs_law_compare_from(const lfs_format *f, const char *path, lfs_view_kind kind,
			     const char *saved, size_t sn, const char *reread, size_t rn,
			     const char *orig, size_t on, lfs_error *err);

/**
 * The law over the whole model (docs/editing.md "The law over the whole
 * model"), for a save of view @p v (a view of @p orig, @p n bytes, of format
 * @p f) that gave @p out (@p outn bytes) and passed lfs_law_check(): every
 * other text view (MDL-style text, OBJ, CSV, MTL; not the thumbnail) of
 * @p out is built and compared, line by line by key (node or object, list,
 * row), with the same view of @p orig. The lines of @p v that changed give
 * the changed entities (object, element kind, index); a changed line of
 * another view must show one of them, through @p f's lfs_law_dialect.lists
 * (or be a value it derives, lfs_law_dialect.derived). An edit of the
 * whole-model text or a CSV is held to it in the OBJ views only; an edit
 * of a whole-model statement (not a list row) frees the OBJ views (a moved
 * node moves its subtree in model space). @p model: @p f's decode of
 * @p out, or NULL.
 * @return LFS_OK; LFS_ERR_PARSE with `view:line:1: error: this save would
 *         also change this line (...)` at the first unexplained line of the
 *         first view that has one; LFS_ERR_NOMEM; a build error.
 */
lfs_err lfs_law_check_whole(const lfs_format *f, const lfs_view *v, const uint8_t *orig, size_t n,
			    const uint8_t *out, size_t outn, const void *model, lfs_error *err);

#endif
