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

#include "common/error.h"
#include "common/strbuf.h"
#include "sod.h"
#include "text/mdltext.h"

/* Floats: lfs_sb_float_bits(), lfs_parse_float_bits(), lfs_lex_f32() (NaN bits kept). */

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
