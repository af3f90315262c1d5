/**
 * @file sod_text.h
 * SOD model <-> model.txt, the MDL-style text dialect of a SOD file
 * (docs/formats/sod.md "model.txt"), plus the float helpers shared by the SOD
 * text, OBJ and CSV views.
 *
 * The text holds every field of the binary in file order (one fact per
 * line), so text -> sod_text_parse() -> sod_encode() gives the original bytes.
 */
#ifndef LFS_VIEWS_SOD_TEXT_H
#define LFS_VIEWS_SOD_TEXT_H

#include "../common/error.h"
#include "../common/strbuf.h"
#include "../formats/sod.h"
#include "mdltext.h"

/**
 * Append float @p f exactly: the shortest round-trip decimal (lfs_sb_float),
 * except NaNs, written as "nan:XXXXXXXX" (the 32 bits in hex) so their sign
 * and payload survive the text.
 */
void sod_sb_f32(lfs_sb *sb, float f);

/** Append @p n floats separated by @p sep. */
void sod_sb_f32s(lfs_sb *sb, const float *f, size_t n, char sep);

/** Parse a float as written by sod_sb_f32 (or any strtof syntax); false if not a number. */
bool sod_parse_f32(const char *s, size_t len, float *out);

/** Token @p i of @p ln as a float (sod_parse_f32); file:line:col error otherwise. */
lfs_err sod_lex_f32(lfs_lex *lx, const lfs_line *ln, uint32_t i, float *out);

/**
 * Write model.txt for @p m into @p out.
 * @return LFS_OK or LFS_ERR_NOMEM.
 */
lfs_err sod_text_write(const sod_model *m, lfs_sb *out, lfs_error *err);

/**
 * Parse model.txt text (@p n bytes; need not be NUL terminated) into a new
 * model (*out, free with sod_model_free()). Errors are LFS_ERR_PARSE with
 * "<file>:line:col: message".
 */
lfs_err sod_text_parse(const char *file, const char *text, size_t n, sod_model **out,
		       lfs_error *err);

#endif
