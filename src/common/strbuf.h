/**
 * @file strbuf.h
 * Growable byte buffer used by every text view generator.
 *
 * Memory: the buffer owns `data` (heap, NUL terminated when len > 0 or after
 * any append). On allocation failure the buffer enters a sticky failed state
 * (`failed` = 1), further appends are ignored, and callers check once at the
 * end with lfs_sb_ok(). This keeps generators free of per-line error checks.
 */
#ifndef LFS_STRBUF_H
#define LFS_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct lfs_sb {
	char *data;
	size_t len, cap;
	int failed;
} lfs_sb;

/** Append @p n bytes. */
void lfs_sb_put(lfs_sb *sb, const void *p, size_t n);
/** Append a NUL-terminated string. */
void lfs_sb_puts(lfs_sb *sb, const char *s);
/** Append one character. */
void lfs_sb_putc(lfs_sb *sb, char c);
/** Append printf-formatted text. */
void lfs_sb_printf(lfs_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Append a float32 in its shortest exact decimal form (see floatfmt.h). */
void lfs_sb_float(lfs_sb *sb, float f);
/** Append @p n floats separated by single spaces. */
void lfs_sb_floats(lfs_sb *sb, const float *f, size_t n);
/** Append a float32 as lfs_fmt_float_bits() writes it (NaN keeps its bits). */
void lfs_sb_float_bits(lfs_sb *sb, float f);
/** Append @p n floats in lfs_fmt_float_bits() form separated by @p sep. */
void lfs_sb_floats_bits(lfs_sb *sb, const float *f, size_t n, char sep);
/** True when no allocation failed so far. */
bool lfs_sb_ok(const lfs_sb *sb);
/** Hand the bytes over to the caller (caller frees); the buffer is reset. */
char *lfs_sb_take(lfs_sb *sb, size_t *len);
/** Free the buffer's memory and reset it. */
void lfs_sb_free(lfs_sb *sb);

/**
 * Per-thread bound of the capacity of any one buffer, bytes (0 = none, the
 * default): a buffer that would grow beyond it enters the failed state as on
 * allocation failure, and lfs_sb_limit_hit() turns true. The view builder
 * (viewset.c) sets it to the rest of a model's memory budget so that one
 * huge view stops growing before it takes the machine. Also clears the
 * "hit" flag. Returns the previous bound.
 */
size_t lfs_sb_set_limit(size_t max);
/** Did a buffer of this thread fail at the bound since lfs_sb_set_limit()? */
bool lfs_sb_limit_hit(void);

#endif
