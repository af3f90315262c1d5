/**
 * @file membuf.h
 * Growable in-memory file contents: the bytes of a scratch file or of a view
 * being edited (docs/editing.md). Writes at any offset (holes read as zero
 * bytes), truncation to any size. Sizes are bounded by the caller's @p max
 * (bytes): beyond it the operation fails with EFBIG and changes nothing.
 * Not thread safe (the fs layer's lock protects it). No FUSE code.
 */
#ifndef LFS_FS_MEMBUF_H
#define LFS_FS_MEMBUF_H

#include <stddef.h>
#include <stdint.h>

/** The bytes. Zero-initialise (an empty file). */
typedef struct lfs_membuf {
	char *data; /**< len bytes (NULL when cap == 0) */
	size_t len; /**< file size, bytes */
	size_t cap; /**< allocated bytes */
} lfs_membuf;

/**
 * Write @p n bytes at offset @p off, growing the file (zero fill between the
 * old end and @p off). Returns 0, EFBIG when off + n > @p max, ENOMEM.
 */
int lfs_membuf_write(lfs_membuf *b, const void *p, size_t n, uint64_t off, size_t max);

/** Set the size to @p size (shrink, or grow with zero bytes). 0, EFBIG, ENOMEM. */
int lfs_membuf_truncate(lfs_membuf *b, uint64_t size, size_t max);

/** Replace the whole content with @p n bytes of @p p. 0 or ENOMEM. */
int lfs_membuf_set(lfs_membuf *b, const void *p, size_t n);

/** Free the bytes (the buffer is empty afterwards). */
void lfs_membuf_free(lfs_membuf *b);

#endif
