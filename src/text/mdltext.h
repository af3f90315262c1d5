/**
 * @file mdltext.h
 * Lexer and writer helpers shared by the MDL-style text dialects
 * (model.txt / anim.txt of NOD, NAD, SOD, NIL — docs/formats/).
 *
 * Lexical rules (the style of NWN ASCII MDL as the public parsers read it:
 * niv/nwn-tools nwnmdlcomp, jd28/rollnw MdlTextParser.cpp, xoreos
 * model_nwn.cpp; [N §2] in src/formats/nwn/nwn_mdl.h):
 *  - line oriented; tokens separated by spaces/tabs; CR before LF ignored;
 *  - a line whose first non-blank character is '#' is a comment; blank lines
 *    are skipped;
 *  - a token may be double-quoted to hold spaces, '#', '"' or bytes that are
 *    not printable ASCII: inside quotes `\\`, `\"` and `\xHH` are escapes.
 *    Writers quote only when needed (lfs_sb_name), so ordinary names stay
 *    bare and grep-able.
 * Errors are `file:line:col: message` (lfs_fail_at), column of the offending
 * token (1-based, bytes), or of the line end when a value is missing.
 */
#ifndef LFS_MDLTEXT_H
#define LFS_MDLTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "../common/strbuf.h"

/** Most tokens one line may hold. */
#define LFS_LEX_MAXTOK 64

/** A token: raw text as written (quotes included), its length and column. */
typedef struct lfs_tok {
	const char *s;
	uint32_t len;
	uint32_t col;
} lfs_tok;

/** One non-blank, non-comment line. */
typedef struct lfs_line {
	uint32_t line;     /**< 1-based */
	uint32_t end_col;  /**< column just past the last character */
	uint32_t ntok;
	lfs_tok tok[LFS_LEX_MAXTOK];
} lfs_line;

/** Lexer state over a text buffer (not owned; must outlive the lexer). */
typedef struct lfs_lex {
	const char *file;
	const char *p, *end;
	uint32_t line;
	lfs_error *err;
	bool have_peek;
	lfs_line peek;
} lfs_lex;

/** Start lexing @p n bytes of @p data; messages name @p file. */
void lfs_lex_init(lfs_lex *lx, const char *file, const char *data, size_t n, lfs_error *err);

/**
 * Next line into @p out. Returns 1 for a line, 0 at end of input, -1 on
 * error (unterminated quote, more than LFS_LEX_MAXTOK tokens, NUL byte;
 * lx->err is filled).
 */
int lfs_lex_next(lfs_lex *lx, lfs_line *out);

/** Like lfs_lex_next() but leaves the line to be returned again by the next call. */
int lfs_lex_peek(lfs_lex *lx, lfs_line *out);

/** True when token @p t is the bare word @p kw (ASCII case-insensitive). */
bool lfs_tok_is(const lfs_tok *t, const char *kw);

/**
 * Fail with `file:line:col: <printf message>` at token @p i of @p ln (or at
 * the line end when i >= ntok). Returns LFS_ERR_PARSE.
 */
lfs_err lfs_lex_fail(lfs_lex *lx, const lfs_line *ln, uint32_t i, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/**
 * Require exactly @p want tokens after the keyword (token 0): otherwise
 * "expected <want> <what> after '<keyword>'" at the first missing or extra
 * token. @p what is e.g. "numbers" or "values".
 */
lfs_err lfs_lex_arity(lfs_lex *lx, const lfs_line *ln, uint32_t want, const char *what);

/**
 * Token @p i as float32 (strtof syntax, whole token, "nan"/"inf" allowed; a
 * finite number beyond the float32 range is refused, not stored as inf),
 * or "nan:XXXXXXXX" — a NaN with exactly these bits (lfs_sb_float_bits()).
 */
lfs_err lfs_lex_f32(lfs_lex *lx, const lfs_line *ln, uint32_t i, float *out);

/** Token @p i as a decimal integer in [min, max]. */
lfs_err lfs_lex_int(lfs_lex *lx, const lfs_line *ln, uint32_t i, int64_t min, int64_t max,
		    int64_t *out);

/** Token @p i as exactly @p n bytes of hex (2n hex digits, either case). */
lfs_err lfs_lex_hex(lfs_lex *lx, const lfs_line *ln, uint32_t i, uint8_t *out, size_t n);

/**
 * Token @p i as a string (quotes and escapes removed) into @p out of
 * @p outsz bytes, NUL-terminated; the decoded length goes to @p len (may be
 * NULL). Fails when it does not fit (a name longer than its binary field).
 */
lfs_err lfs_lex_str(lfs_lex *lx, const lfs_line *ln, uint32_t i, char *out, size_t outsz,
		    size_t *len);

/** Append @p n bytes as a name token: bare when safe, else quoted with escapes. */
void lfs_sb_name(lfs_sb *sb, const char *s, size_t n);

/** Append @p n bytes as lowercase hex (2n characters, no separators). */
void lfs_sb_hex(lfs_sb *sb, const uint8_t *p, size_t n);

#endif
