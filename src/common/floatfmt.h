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
#include <stdint.h>
#include <string.h>

/** Buffer size that always suffices for lfs_fmt_float(). */
#define LFS_FLOAT_BUFSZ 32

/** Write @p f to @p buf (LFS_FLOAT_BUFSZ bytes); returns the length. */
size_t lfs_fmt_float(char buf[LFS_FLOAT_BUFSZ], float f);

/**
 * Like lfs_fmt_float(), but a NaN prints as "nan:XXXXXXXX" (its 32 bits in
 * lowercase hex) so the text keeps the payload: the form every bit-exact
 * dialect (NOD, NAD, SOD, NIL text and CSV) writes.
 */
size_t lfs_fmt_float_bits(char buf[LFS_FLOAT_BUFSZ], float f);

/** True when the @p len bytes at @p s are "nan:" + 8 hex digits; *bits gets them. */
bool lfs_parse_nan_bits(const char *s, size_t len, uint32_t *bits);

/**
 * lfs_parse_float() that also reads the "nan:XXXXXXXX" form of
 * lfs_fmt_float_bits(); false when the bits given there are not a NaN.
 */
bool lfs_parse_float_bits(const char *s, size_t len, float *out);

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
 * is not entirely a number, and when a finite number (one with a digit, e.g.
 * `1e400`, `4e38`) is beyond the float32 range: it would be stored as
 * infinity and read back as `inf` (lfs_float_overflows() tells this case
 * apart for the message). `inf`/`infinity` themselves are accepted.
 */
bool lfs_parse_float(const char *s, size_t len, float *out);

/** True when the @p len bytes at @p s hold a decimal digit. */
bool lfs_float_has_digit(const char *s, size_t len);

/**
 * True when the @p len bytes at @p s are entirely a number, written with
 * digits, whose float32 value would be infinite (`1e400`, `-3.5e38`): the
 * token lfs_parse_float() refuses as out of range.
 */
bool lfs_float_overflows(const char *s, size_t len);

/** The message part every parser gives for such a token. */
#define LFS_FLOAT_RANGE_MSG "is out of the float32 range (largest 3.4028235e38; write inf for infinity)"

/** The IEEE-754 bits of @p f (what bit-exact comparisons and NaN payloads use). */
static inline uint32_t lfs_f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return u;
}

/** The float32 whose IEEE-754 bits are @p u. */
static inline float lfs_f32_from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

#endif
