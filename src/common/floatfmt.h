/**
 * @file floatfmt.h
 * Shortest exact decimal text for float32 values.
 *
 * Every float the text views print goes through lfs_fmt_float(): the result is
 * the shortest "%.<p>g" string (p = 1..9) that strtof() reads back to the same
 * 32 bits. 1.0f prints "1", 0.1f prints "0.1", -0.0f prints "-0", infinities
 * "inf"/"-inf", NaNs "nan" (a NaN's payload is not kept in text). The output
 * is locale independent (the decimal point is always '.') and deterministic.
 */
#ifndef LFS_FLOATFMT_H
#define LFS_FLOATFMT_H

#include <stdbool.h>
#include <stddef.h>

/** Buffer size that always suffices for lfs_fmt_float(). */
#define LFS_FLOAT_BUFSZ 32

/** Write @p f to @p buf (LFS_FLOAT_BUFSZ bytes); returns the length. */
size_t lfs_fmt_float(char buf[LFS_FLOAT_BUFSZ], float f);

/**
 * Reference implementation of lfs_fmt_float() (binary search over snprintf
 * precisions, checked with strtof). Same output, ~10x slower; used for values
 * outside the exact integer fast path and by the tests as the oracle.
 */
size_t lfs_fmt_float_ref(char buf[LFS_FLOAT_BUFSZ], float f);

/**
 * Parse a float32 from text as the views print it (also accepts any strtof
 * syntax: exponents, "inf", "nan"). @p s must be NUL terminated at @p end or
 * the caller gives the token length in @p len. Returns false when the token
 * is not entirely a number.
 */
bool lfs_parse_float(const char *s, size_t len, float *out);

#endif
