/**
 * @file errlog.h
 * The mount's list of source files that looked like models but failed to
 * decode, shown read-only as /.legacyfs/errors (docs/errors.md).
 *
 * Format: one line per distinct (path, message) pair, in the order first
 * seen: "<path relative to SOURCE>: <decoder message>\n". The list only grows
 * during the life of a mount (a later fix of the file does not remove its
 * line; a new failure of the fixed file adds a new line), so the text read at
 * any offset is a prefix of every later version. Not thread safe (the fs
 * layer's lock protects it). No FUSE code.
 */
#ifndef LFS_FS_ERRLOG_H
#define LFS_FS_ERRLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "../common/strbuf.h"

/** The list. Zero-initialise. */
typedef struct lfs_errlog {
	lfs_sb text;            /**< the file's bytes */
	size_t n;               /**< number of lines */
	struct timespec mtime;  /**< time of the last added line (CLOCK_REALTIME) */
} lfs_errlog;

/**
 * Append @p s to @p sb with every byte that could break a line or drive a
 * terminal escaped: '\\' -> "\\\\", newline -> "\\n", CR -> "\\r", tab ->
 * "\\t", any other byte below 0x20 and DEL -> "\\xHH", and the UTF-8 C1
 * controls U+0080..U+009F (0xC2 0x80..0x9F, e.g. CSI) -> "\\xC2\\xHH".
 * Other bytes (UTF-8 text) stay. The one escaping of /.legacyfs/errors and
 * of the log (fsi_log), so a node or file name cannot forge lines or
 * terminal sequences in either.
 */
void lfs_errlog_escape(lfs_sb *sb, const char *s);

/**
 * lfs_errlog_escape() into @p dst (@p dstsz > 0 bytes, always
 * NUL-terminated; cut before an escape that would not fit). Returns @p dst.
 */
char *lfs_errlog_escape_to(char *dst, size_t dstsz, const char *s);

/**
 * Add "<rel>: <msg>" unless that exact line is already present. @p rel and
 * @p msg are escaped with lfs_errlog_escape(), so one entry stays one line.
 * Returns true when a line was added.
 */
bool lfs_errlog_add(lfs_errlog *l, const char *rel, const char *msg);

/** Free the list. */
void lfs_errlog_free(lfs_errlog *l);

#endif
