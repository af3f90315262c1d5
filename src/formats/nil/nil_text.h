/**
 * @file nil_text.h
 * model.txt of a NIL level: the MDL-style text dump of a nil_model and its
 * parser (docs/formats/nil.md has the dialect with an annotated example).
 *
 * The text is a faithful dump: every field of the binary appears, decoded
 * fields as numbers, undocumented bytes (GlobalLight, the rest of each sector,
 * the trailer) as rows of 32 bytes of hex. nil_text_parse() of the text that
 * nil_text_write() wrote gives a model that nil_encode() turns back into the
 * original bytes. NIL is read-only in the mount: there is no apply function.
 */
#ifndef LFS_NIL_TEXT_H
#define LFS_NIL_TEXT_H

#include <stddef.h>

#include "common/error.h"
#include "common/strbuf.h"
#include "nil.h"

/** Bytes of hex per row of an opaque block. */
#define NIL_HEX_ROW 32u

/**
 * Append model.txt of @p m to @p sb.
 * @return LFS_OK or LFS_ERR_NOMEM (sb failed).
 */
lfs_err nil_text_write(const nil_model *m, lfs_sb *sb, lfs_error *err);

/**
 * Parse @p n bytes of model.txt into a new model (*out; free with
 * nil_model_free()). Errors are "<file>:line:col: message" (LFS_ERR_PARSE),
 * or LFS_ERR_NOMEM. The order of keywords is fixed (as written).
 */
lfs_err nil_text_parse(const char *text, size_t n, const char *file, nil_model **out,
		       lfs_error *err);

#endif
