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
 * Add "<rel>: <msg>" unless that exact line is already present. Newlines in
 * @p rel or @p msg are written as "\n" escapes so one failure stays one line.
 * Returns true when a line was added.
 */
bool lfs_errlog_add(lfs_errlog *l, const char *rel, const char *msg);

/** Free the list. */
void lfs_errlog_free(lfs_errlog *l);

#endif
