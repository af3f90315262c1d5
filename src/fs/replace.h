/**
 * @file replace.h
 * Atomic replacement of a source file's bytes (the write-back of a saved
 * view, docs/editing.md "Commit"), and reading a source file whole.
 * No FUSE code.
 */
#ifndef LFS_FS_REPLACE_H
#define LFS_FS_REPLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/**
 * Writes the @p n bytes at @p buf to @p fd, retrying short writes and
 * EINTR. Returns 0, or the errno of the failed write (EIO when write()
 * makes no progress). The one write loop of the project (the atomic
 * replace, the thumbnail disk cache, legacyfs-convert).
 */
int lfs_write_all(int fd, const void *buf, size_t n);

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
 * fstat, the version the bytes are: the bytes read must be st_size of them
 * with nothing past it and a second fstat the same (inode, size, mtime in
 * ns), else the file is read again, twice at most (a writer; a network file
 * system that still reports an older size than the bytes it serves).
 * Returns 0, EFBIG when larger than @p max bytes, EAGAIN when the file kept
 * changing while read, or the errno of open/read/fstat. A resource inside an
 * archive ("<archive>/<resref.ext>", registry/container.h lfs_container_member_read())
 * is read as its payload, *st being the archive's stat.
 */
int lfs_read_source(int rootfd, const char *rel, size_t max, uint8_t **out, size_t *n,
		    struct stat *st);

/**
 * Is @p name (one path component) the name of a temporary file that
 * lfs_replace_file() writes: ".<name>.legacyfs-<pid>-<k>" with a non-empty
 * <name>, or the short form ".legacyfs-<pid>-<k>" used when the long one
 * does not fit in NAME_MAX; <pid> and <k> are decimal digits. The mount
 * never shows such names (lookup and listing of source folders skip them).
 * On true, *pid (may be NULL) receives <pid> (0 when it does not fit a
 * pid_t) and *target_len (may be NULL) the length of <name> (0 for the
 * short form, whose target is unknown).
 */
bool lfs_replace_is_temp_name(const char *name, long *pid, size_t *target_len);

/** What lfs_replace_recover() did with one stale temporary file. */
typedef enum lfs_recover_action {
	LFS_RECOVER_REMOVED, /**< its writer is dead and its target exists: unlinked */
	LFS_RECOVER_KEPT,    /**< not safe to remove (or removal failed): reported only */
} lfs_recover_action;

/**
 * Called once per temporary file lfs_replace_recover() finds whose writer
 * is not running: @p rel is its path relative to the scanned root, @p why a
 * static or short explanation ("writer 123 is not running; removed", ...).
 */
typedef void (*lfs_recover_fn)(void *ctx, const char *rel, lfs_recover_action what,
			       const char *why);

/** Seconds a temporary file on a shared file system is left alone after its
 * last write (lfs_replace_recover(), @p shared). */
#define LFS_RECOVER_SHARED_AGE 600

/** True when folder @p dfd is on a file system other machines may mount too
 * (NFS, SMB, sshfs...): a <pid> in a temporary name there may be another
 * machine's process. */
typedef bool (*lfs_recover_shared_fn)(int dfd);

/**
 * Crash recovery at mount time (docs/editing.md "After a crash"): walk the
 * folder tree below @p rootfd (symlinks not followed, at most @p max_depth
 * folder levels) and look at every name lfs_replace_is_temp_name() accepts.
 *
 * A temporary file is removed only when all of these hold: it is a regular
 * file owned by the calling user, its <pid> is not a running process
 * (kill(pid, 0) fails with ESRCH; our own pid counts as dead, since at mount
 * time this process has written nothing yet), and its target "<name>"
 * exists beside it as a regular file — so the temporary file was never
 * renamed into place and holds only the bytes of a save that was never
 * acknowledged, and no data exists only there. Files of running writers are
 * left alone and not reported (another mount may be saving right now); any
 * other stale one (no target, short form, other owner, unlink failing) is
 * kept and reported through @p fn. In a folder @p shared (may be NULL)
 * says is on a shared file system, a file written in the last
 * LFS_RECOVER_SHARED_AGE seconds is kept and reported too: its writer may
 * be running on another machine (a later mount removes it).
 *
 * @return number of temporary files of dead writers found (removed or not).
 */
size_t lfs_replace_recover(int rootfd, unsigned max_depth, lfs_recover_shared_fn shared,
			   lfs_recover_fn fn, void *ctx);

#endif
