/**
 * @file obj.h
 * The one Wavefront OBJ reader and the OBJ line writers shared by the OBJ
 * views of every format (NOD, SOD, NWN, NIL).
 *
 * Owns: OBJ text <-> lfs_obj, a neutral mesh between text and formats.
 * The syntax follows the Wavefront "Object Files (.obj)" appendix of the
 * Advanced Visualizer manual: `v x y z`, `vt u v`, `vn x y z`,
 * `f v/vt/vn ...` (1-based indices, negative = relative to the end of the
 * list so far), `o`, `g`, `s`, `usemtl`, `mtllib`. Lines are lexed by the
 * MDL-style lexer (mdltext.h: blanks and `#` comment lines skipped, CR
 * before LF ignored, at most LFS_LEX_MAXTOK tokens, NUL bytes refused).
 * Numbers are float32 in any strtof() syntax or the "nan:XXXXXXXX" form of
 * lfs_fmt_float_bits().
 *
 * What differs between formats (optional w, must faces be triangles, are
 * unknown statements refused, may indices point forward, ...) is chosen by
 * lfs_obj_rules; checks against a model (index ranges of a group, required
 * groups) stay in the format's code, which may run them line by line through
 * lfs_obj_rules.check so that the first error in the file is the one
 * reported.
 *
 * Errors are "file:line:col: message" (lfs_fail_at), column of the token.
 */
#ifndef LFS_OBJ_H
#define LFS_OBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "../common/strbuf.h"

/** Kind of an OBJ statement (the keyword of a line). */
typedef enum lfs_obj_kind {
	LFS_OBJ_V,	/**< v: position */
	LFS_OBJ_VT,	/**< vt: texture coordinate (tvert) */
	LFS_OBJ_VN,	/**< vn: normal */
	LFS_OBJ_F,	/**< f: face */
	LFS_OBJ_O,	/**< o: object name */
	LFS_OBJ_G,	/**< g: group name */
	LFS_OBJ_S,	/**< s: smoothing group */
	LFS_OBJ_USEMTL, /**< usemtl: material of the following faces */
	LFS_OBJ_MTLLIB, /**< mtllib: material library */
	LFS_OBJ_OTHER,	/**< any other keyword (skipped unless LFS_OBJ_STRICT) */
} lfs_obj_kind;

/** Position of an element in the text: 1-based line and column (bytes). */
typedef struct lfs_obj_at {
	uint32_t line, col;
} lfs_obj_at;

/** One face corner: 0-based indices into v / vt / vn, -1 when absent. */
typedef struct lfs_obj_corner {
	int64_t v, t, n;
	uint32_t col; /**< column of the corner's token */
} lfs_obj_corner;

/** One face: corners [first, first + n) of lfs_obj.c. */
typedef struct lfs_obj_face {
	size_t first;
	uint32_t n;
	uint32_t line, col; /**< line and column of the `f` keyword */
} lfs_obj_face;

/**
 * An o / g / s / usemtl / mtllib line. The argument points into the text
 * given to lfs_obj_read() (not owned: the text must outlive the lfs_obj).
 * nv, nt, nn, nf are the list lengths when the line was read, so the
 * elements of an object or group are those between two such snapshots.
 */
typedef struct lfs_obj_stmt {
	lfs_obj_kind kind;
	uint32_t line, col; /**< position of the keyword */
	uint32_t end_col;   /**< column just past the line's last character */
	uint32_t narg;	    /**< tokens after the keyword */
	const char *arg;    /**< first token after the keyword as written (NULL if none) */
	uint32_t arg_len, arg_col;
	size_t nv, nt, nn, nf;
} lfs_obj_stmt;

/** lfs_obj_num.decimals of a number that is exact as written. */
#define LFS_OBJ_NUM_EXACT (-1)

/**
 * A number of a v / vt / vn line as written (with LFS_OBJ_NUMS): its value
 * in double (strtod() of the token, so a token of up to 17 significant
 * digits keeps its decimal value) and the precision it was printed at.
 */
typedef struct lfs_obj_num {
	double value;
	/**
	 * Digits after the decimal point, counting an exponent ("0.125" 3,
	 * "1.5e-7" 8, "2.50" 2), at most LFS_OBJ_NUM_MAXDEC; LFS_OBJ_NUM_EXACT
	 * for a token that states no precision: an integer without '.' or
	 * exponent ("0", "100"), a form whose last digit is left of the units
	 * ("1.5e3"), nan / inf.
	 */
	int16_t decimals;
	/**
	 * The precision of the text's writer (set by lfs_obj_read()):
	 * LFS_OBJ_NUM_EXACT when every v / vt / vn number of the text with a
	 * decimal point or exponent is the shortest text of its float32
	 * (lfs_fmt_float(), the way the views print: each number is exact, so
	 * "6.6" restored over a stored 6.56875 sets 6.6); else the most decimals
	 * any number of the same kind (v, vt or vn) is written with (0 when
	 * none has any): a writer prints one kind at one precision, dropping
	 * trailing zeros at most, so "6.6" among numbers written with 5
	 * decimals states 6.60000, not 6.6 +- 0.05.
	 */
	int16_t kind_decimals;
} lfs_obj_num;

/**
 * The precision number @p n states, as lfs_obj_num.decimals: the larger of
 * its own decimals and its writer's (lfs_obj_num.kind_decimals);
 * LFS_OBJ_NUM_EXACT when it is exact.
 */
static inline int16_t lfs_obj_num_prec(const lfs_obj_num *n)
{
	if (n->decimals < 0 || n->kind_decimals < 0)
		return LFS_OBJ_NUM_EXACT;
	return n->kind_decimals > n->decimals ? n->kind_decimals : n->decimals;
}

/** Most decimals lfs_obj_num.decimals holds (more are counted as this many). */
#define LFS_OBJ_NUM_MAXDEC 60

/** A parsed OBJ text. Arrays are malloc'd; free with lfs_obj_free(). */
typedef struct lfs_obj {
	float (*v)[3];			  /**< positions (a w is not kept) */
	float (*vt)[2];			  /**< texture coordinates u, v as written */
	float (*vn)[3];			  /**< normals */
	lfs_obj_at *v_at, *vt_at, *vn_at; /**< where each element was read */
	size_t nv, nt, nn, cap_v, cap_t, cap_n;
	lfs_obj_face *f;
	size_t nf, cap_f;
	lfs_obj_corner *c; /**< corners of all faces, face by face */
	size_t nc, cap_c;
	lfs_obj_stmt *s; /**< o / g / s / usemtl / mtllib lines in file order */
	size_t ns, cap_s;
	uint32_t lines; /**< lines in the text (the last line's number) */
	/**
	 * With LFS_OBJ_NUMS: the numbers of v (3 per element), vt (2) and vn
	 * (3) lines as written, in step with v / vt / vn; NULL otherwise.
	 */
	lfs_obj_num *v_num, *vt_num, *vn_num;
} lfs_obj;

/* lfs_obj_rules.flags */
/** Refuse keywords other than v vt vn f o g s usemtl mtllib. */
#define LFS_OBJ_STRICT 0x1u
/** v and vt may carry one more token (OBJ's w); it is skipped unread. */
#define LFS_OBJ_W 0x2u
/** Normals are not read: vn lines and the part of a corner after its second '/' are skipped. */
#define LFS_OBJ_NO_VN 0x4u
/** Every corner needs a texture index (v/vt); checked before the indices are read. */
#define LFS_OBJ_NEED_VT 0x8u
/** An index must name an element defined on an earlier line. */
#define LFS_OBJ_DEFINED_ABOVE 0x10u
/**
 * vt may carry a third number (OBJ's w). It is read and must be 0, since
 * only u and v are kept: "texture w coordinates are not stored: must be 0".
 */
#define LFS_OBJ_VT_W0 0x20u
/**
 * Messages in the wording of NWN's model.mdl parser (mdl_parse.h), so that
 * one format speaks one wording in all its views:
 * "expected N numbers after 'v'" at the line's last token (instead of
 * "expected N numbers after 'v', found M" at the first missing or extra
 * one), "'x' is not a number" (instead of "expected a number, found 'x'")
 * and "index N out of range (1..M)" with N the 1-based index after a
 * relative one is resolved (instead of "vertex index N is not defined
 * above"; with LFS_OBJ_DEFINED_ABOVE).
 */
#define LFS_OBJ_MDL_MSGS 0x40u

/**
 * Also keep every v / vt / vn number as written (lfs_obj.v_num, vt_num,
 * vn_num): its decimal value and printed precision, for
 * lfs_obj_num_keeps().
 */
#define LFS_OBJ_NUMS 0x80u

/** Where a statement is, for lfs_obj_rules.check. */
typedef struct lfs_obj_where {
	const char *file;
	uint32_t line, col; /**< the keyword */
} lfs_obj_where;

/** What a format accepts. A zeroed struct: lenient OBJ, faces of 3+ corners. */
typedef struct lfs_obj_rules {
	unsigned flags; /**< LFS_OBJ_* */
	/**
	 * NULL: a face needs at least 3 corners. Else faces are triangles and
	 * a face of another size is refused with "<triangles> faces are
	 * triangles: expected 3 corners, found N" (e.g. "NOD").
	 */
	const char *triangles;
	/** Largest 1-based index accepted (0: no limit besides DEFINED_ABOVE). */
	uint64_t max_index;
	/**
	 * Most corners of one face (0: no limit besides the lexer's
	 * LFS_LEX_MAXTOK tokens a line): "a face has at most N corners, found
	 * M" at corner N + 1.
	 */
	uint32_t max_corners;
	/**
	 * Called for every v vt vn f o g s usemtl mtllib line before its
	 * arguments are read (@p o holds the lines above); a non-zero return
	 * stops the reader with that code (the hook fills @p err). May be NULL.
	 */
	lfs_err (*check)(void *ctx, const lfs_obj *o, lfs_obj_kind kind, const lfs_obj_where *at,
			 lfs_error *err);
	void *ctx;
} lfs_obj_rules;

/**
 * Read OBJ @p text (@p n bytes, need not be NUL-terminated) into @p out
 * (zeroed first; free with lfs_obj_free() whatever the result). @p rules
 * may be NULL (zeroed rules). Messages name @p file.
 * @return LFS_OK; LFS_ERR_PARSE ("file:line:col: ..."); LFS_ERR_NOMEM;
 *         or what rules->check returned.
 */
lfs_err lfs_obj_read(const char *file, const char *text, size_t n, const lfs_obj_rules *rules,
		     lfs_obj *out, lfs_error *err);

/** Free the arrays of @p o and zero it. */
void lfs_obj_free(lfs_obj *o);

/**
 * The printed-precision rule (docs/formats/obj-csv.md, "Saving OBJ from
 * other programs"): does number @p n, as written, state the value
 * @p stored? True when @p n is exact (LFS_OBJ_NUM_EXACT) and reads as a
 * float equal to @p stored (or with the same bits: NaN; a plain "nan",
 * whose bits the writers do not print, states any stored NaN), and otherwise when
 * |stored - n->value| <= 0.5 * 10^-p + FLT_EPSILON * @p scale, p =
 * lfs_obj_num_prec(@p n): half a unit of the last digit the writer
 * printed, plus the float32 rounding noise of a
 * writer's own arithmetic on a vector whose largest component is @p scale
 * (Blender's axis conversion moves a component by up to 9e-8 of it).
 * A number that reads as a float equal to @p stored states it at any
 * precision (storing it gives the same bits). A number that states the
 * stored value keeps the stored bits.
 */
bool lfs_obj_num_keeps(const lfs_obj_num *n, float stored, double scale);

/**
 * Most angle (radians) between a normal as written and the stored one that
 * still counts as the stored normal: Blender keeps custom normals as 16-bit
 * angles relative to each corner's own normal space; the corpus round trip
 * moves them by up to 0.0065 (docs/formats/obj-csv.md, "Saving OBJ from
 * other programs").
 */
#define LFS_OBJ_NORMAL_TOL 0.01

/**
 * The loose normal rule shared by the OBJ applies and the round-trip law
 * (law.h): does normal @p n (3 values as written) state the stored normal
 * @p stored by direction? True when they point the same way or exactly
 * opposite (editors turn a corner normal to the side its face faces;
 * two-sided faces share vertices) within LFS_OBJ_NORMAL_TOL, and when
 * @p stored is zero or not finite in length (no direction: an OBJ cannot
 * show it, the stored normal is kept); false when @p n is zero or not
 * finite in length and @p stored is not.
 */
bool lfs_obj_normal_same(const double n[3], const float stored[3]);

/**
 * Components of written vector @p n (@p dim numbers, 2 or 3, read with
 * LFS_OBJ_NUMS) that state the stored @p stored by lfs_obj_num_keeps(); a
 * 3-vector's slack scales with its largest finite stored component. Bit k
 * set for component k.
 */
unsigned lfs_obj_vec_keeps(const lfs_obj_num *n, const float *stored, unsigned dim);

/**
 * The whole normal rule of the OBJ applies and the round-trip law
 * (docs/formats/obj-csv.md "Saving OBJ from other programs"): written normal
 * @p n (3 numbers) states @p stored when every component does at its printed
 * precision (lfs_obj_vec_keeps()) or by direction (lfs_obj_normal_same()).
 */
bool lfs_obj_normal_keeps(const lfs_obj_num *n, const float stored[3]);

/** Precision of number token @p s (@p len bytes), as lfs_obj_num.decimals. */
int16_t lfs_obj_num_decimals(const char *s, size_t len);

/*
 * ---- writers: whole lines, ended by "\n" ----
 * Floats are in lfs_fmt_float_bits() form (a NaN as "nan:XXXXXXXX", its bits
 * kept: NOD, SOD), or with lfs_obj_write_plain() in the plain shortest form
 * of lfs_fmt_float() (a NaN as "nan": the NWN and NIL views, which have
 * always printed that form).
 */

/** "v x y z\n". */
void lfs_obj_write_v(lfs_sb *sb, const float p[3]);
/** "vt u v\n". */
void lfs_obj_write_vt(lfs_sb *sb, float u, float v);
/** "vn x y z\n". */
void lfs_obj_write_vn(lfs_sb *sb, const float n[3]);
/**
 * "v x y z\n", "vt u v\n" or "vn x y z\n" for @p kind LFS_OBJ_V, _VT or
 * _VN (3, 2, 3 floats at @p x) with the floats in plain lfs_fmt_float() form.
 */
void lfs_obj_write_plain(lfs_sb *sb, lfs_obj_kind kind, const float *x);
/**
 * "f a/b/c ...\n" for @p n corners; @p v, @p vt, @p vn are 0-based
 * (printed + 1); @p vt or @p vn NULL leaves that part out ("a/b",
 * "a//c", "a").
 */
void lfs_obj_write_f(lfs_sb *sb, unsigned n, const size_t *v, const size_t *vt, const size_t *vn);
/** "<keyword> <name>\n" (o, g, usemtl, mtllib, s). */
void lfs_obj_write_stmt(lfs_sb *sb, const char *keyword, const char *name);

#endif
