/**
 * @file error.h
 * Error values shared by every layer below the FUSE front-end.
 *
 * Decoders and parsers never abort: they return an lfs_err code and fill an
 * lfs_error with a human readable message that names the byte offset and the
 * structure being read (binary decoders) or the file:line:col (text parsers).
 * Only src/fuse_ll.c turns these into errno values.
 */
#ifndef LFS_ERROR_H
#define LFS_ERROR_H

#include <stddef.h>
#include <stdint.h>

/** Result codes. LFS_OK is 0; everything else is a failure. */
typedef enum lfs_err {
	LFS_OK = 0,
	LFS_ERR_NOMEM,     /**< allocation failed */
	LFS_ERR_IO,        /**< read/write of a file failed (errno kept in lfs_error.sys_errno) */
	LFS_ERR_NOTFORMAT, /**< input is not of this format at all (e.g. ASCII .mdl) */
	LFS_ERR_CORRUPT,   /**< input claims to be this format but breaks its layout */
	LFS_ERR_UNSUPPORTED,/**< valid but uses a feature we do not handle */
	LFS_ERR_PARSE,     /**< text input rejected; message is file:line:col: ... */
} lfs_err;

/**
 * Detailed error. `offset` is the byte offset in the input file where the
 * failing structure starts or the failing read was attempted (SIZE_MAX when
 * not applicable); `structure` is a static string naming the structure
 * ("mesh header", "controller key", ...). `msg` is the complete message, ready
 * to print.
 */
typedef struct lfs_error {
	lfs_err code;
	size_t offset;
	const char *structure;
	int sys_errno;
	unsigned line, col; /**< 1-based position for text parsers, 0 otherwise */
	char msg[320];
} lfs_error;

/** Fill @p e (may be NULL) with a printf-style message; returns @p code. */
lfs_err lfs_fail(lfs_error *e, lfs_err code, size_t offset, const char *structure,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/** Fill @p e (may be NULL) with "file:line:col: error: message" (gcc's
 *  diagnostic form, which editors' quickfix lists read); returns LFS_ERR_PARSE. */
lfs_err lfs_fail_at(lfs_error *e, const char *file, unsigned line, unsigned col,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/**
 * Warnings of an operation that succeeds (or fails later): each one a line
 * "file:line:col: warning: message\n" in gcc's form. @p text keeps as many
 * whole lines as fit; @p count counts every warning, kept or not. Zero it
 * before use (`lfs_warnings w = {0};`). Owned by the caller; no heap.
 */
typedef struct lfs_warnings {
	char text[4096];
	size_t len;
	unsigned count;
} lfs_warnings;

/** Append one warning to @p w (NULL: discarded). */
void lfs_warn_at(lfs_warnings *w, const char *file, unsigned line, unsigned col,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/** Static name of an lfs_err code ("corrupt input", ...). */
const char *lfs_err_name(lfs_err code);

/** Return the lfs_err of @p x from the calling function unless it is LFS_OK. */
#define LFS_TRY(x)                  \
	do {                        \
		lfs_err e_ = (x);   \
		if (e_ != LFS_OK)   \
			return e_;  \
	} while (0)

#endif
