/**
 * @file replace.h
 * Atomic replacement of a source file's bytes (the write-back of a saved
 * view, docs/editing.md "Commit"), and reading a source file whole.
 * No FUSE code.
 */
#ifndef LFS_FS_REPLACE_H
#define LFS_FS_REPLACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/**
 * Replace file @p rel (relative to the folder @p rootfd) by @p n bytes of
 * @p data, atomically: a temporary file ".<name>.legacyfs-<pid>-<k>" in the
 * same folder is written, given @p orig's mode (07777 bits) and owner,
 * fsync'ed and renamed over @p rel; then the folder is fsync'ed. Readers see
 * either the old or the new file, never a mix; on any failure the temporary
 * file is removed and @p rel is untouched.
 *
 * Owner: fchown to @p orig's uid/gid when they differ from the new file's;
 * EPERM there (a daemon that may not give files away) is not an error: the
 * file then belongs to the daemon's user and @p *owner_kept is false.
 *
 * @param newst  out: stat of the new file (after the rename)
 * @param what   out (may be NULL, @p whatsz bytes): the failed step, e.g.
 *               "write .x.nod.legacyfs-12-1"
 * @return 0 or the errno of the failed step (ENOSPC, EIO, EACCES, EDQUOT ...);
 *         also the errno of the folder fsync after the rename, although the
 *         new file is then in place (lfs_replace_file_ex() tells them apart)
 */
int lfs_replace_file(int rootfd, const char *rel, const uint8_t *data, size_t n,
		     const struct stat *orig, struct stat *newst, int *owner_kept,
		     char *what, size_t whatsz);

/**
 * lfs_replace_file(), with the folder fsync after the rename reported apart:
 * returns 0 once the new file is in place (renamed over @p rel), and
 * *@p dirsync_err is then 0 or the errno of fsync(2) of the folder (the new
 * name may not survive a crash: "saved, but not confirmed durable"); the
 * step text in @p what says so. A non-zero return means @p rel is untouched.
 *
 * Test hook: the environment variable LFS_TEST_FAIL_DIRSYNC=<errno> (a
 * positive number) makes the folder fsync fail with that errno
 * (tests/integration/edit_merge_fsync.sh); nothing else reads it.
 */
int lfs_replace_file_ex(int rootfd, const char *rel, const uint8_t *data, size_t n,
			const struct stat *orig, struct stat *newst, int *owner_kept, int *dirsync_err,
			char *what, size_t whatsz);

/**
 * Read file @p rel (relative to @p rootfd, final component O_NOFOLLOW) whole:
 * *out (malloc'd, caller frees; non-NULL even for 0 bytes), *n bytes, *st its
 * fstat. Returns 0, EFBIG when larger than @p max bytes, EAGAIN when the size
 * changed while reading, or the errno of open/read.
 */
int lfs_read_source(int rootfd, const char *rel, size_t max, uint8_t **out, size_t *n,
		    struct stat *st);

#endif
