/**
 * @file fs.h
 * The virtual tree of a legacyfs mount, independent of FUSE.
 *
 * src/fuse_ll.c translates every FUSE request into one call here and turns
 * the result into exactly one fuse_reply_*. This layer owns:
 *
 *  - the inode table: FUSE node ids (uint64_t, 1 = root) -> nodes, with the
 *    kernel's lookup counts (every successful lookup/readdirplus entry takes
 *    one, lfs_fs_forget() drops them; a node is freed when its count and its
 *    children are gone). Node ids of freed nodes are reused with a new
 *    generation number. st_ino values are stable for the life of the mount:
 *    source objects report the source's st_ino, generated files and folders
 *    a 64-bit hash of (model file dev, ino, view path) with the top bit set.
 *  - the classification of source files (source.h) and the view cache
 *    (cache.h), rechecked against the source's stat on every lookup, getattr,
 *    readdir (offset 0) and read;
 *  - /.legacyfs/errors (errlog.h);
 *  - an optional inotify watcher that reports which kernel entries/inodes to
 *    invalidate when SOURCE changes (the caller sends the notifications: no
 *    FUSE code here).
 *
 * Node kinds and what they show (docs/mount.md "Layout"):
 *   root / source folder / source file / symlink / other   -> passthrough
 *   model (source file that decodes)                       -> folder of views
 *   view folder ("meshes", "anims/<anim>") / view file      -> generated
 *   /.legacyfs, /.legacyfs/errors                           -> control
 *
 * Errors are returned as positive errno values (0 = success). Thread safe:
 * one mutex protects the tables; source I/O and view building run unlocked.
 */
#ifndef LFS_FS_FS_H
#define LFS_FS_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

/** Node id of the root (equals FUSE_ROOT_ID). */
#define LFS_FS_ROOT_ID 1

/** Name of the control folder at the mount root. */
#define LFS_FS_CTL_NAME ".legacyfs"
/** Name of the failure list inside it. */
#define LFS_FS_ERRORS_NAME "errors"

/** Log levels for lfs_fs_opts.log (same order as syslog priorities). */
enum lfs_log_level { LFS_LOG_ERR = 3, LFS_LOG_WARNING = 4, LFS_LOG_INFO = 6, LFS_LOG_DEBUG = 7 };

/** Mount options of the fs layer. */
typedef struct lfs_fs_opts {
	double timeout;        /**< kernel entry/attr cache timeout, seconds (errors file: 0) */
	size_t cache_bytes;    /**< view cache bound, bytes (0 = unbounded) */
	size_t cache_entries;  /**< view cache bound, entries (0 = unbounded) */
	size_t max_model_size; /**< larger source files are never decoded, bytes */
	bool watch;            /**< watch SOURCE with inotify (lfs_fs_watch_start) */
	bool debug;            /**< also produce LFS_LOG_DEBUG messages (one per READ, ...) */
	void (*log)(int level, const char *msg); /**< NULL: stderr */
} lfs_fs_opts;

/** Answer to a lookup: node id + attributes (like struct fuse_entry_param). */
typedef struct lfs_fs_entry {
	uint64_t ino;          /**< node id; 0 = negative entry (name does not exist) */
	uint64_t generation;
	struct stat attr;
	double entry_timeout;  /**< seconds */
	double attr_timeout;   /**< seconds */
} lfs_fs_entry;

typedef struct lfs_fs lfs_fs;

/**
 * Open SOURCE and set up the tree. Returns 0 or an errno (message logged).
 * With opts->watch the inotify instance is created here (the thread starts in
 * lfs_fs_watch_start()).
 */
int lfs_fs_new(const char *source, const lfs_fs_opts *opts, lfs_fs **out);

/** Free everything (stop the watcher first). */
void lfs_fs_free(lfs_fs *fs);

/**
 * Look @p name up in folder @p parent. On success fills @p e and takes one
 * lookup count on e->ino. ENOENT also fills e (ino 0, entry_timeout for a
 * negative dentry).
 */
int lfs_fs_lookup(lfs_fs *fs, uint64_t parent, const char *name, lfs_fs_entry *e);

/** Drop @p nlookup lookup counts of @p ino (FUSE forget). */
void lfs_fs_forget(lfs_fs *fs, uint64_t ino, uint64_t nlookup);

/** Current attributes of @p ino; ESTALE when the node no longer matches SOURCE. */
int lfs_fs_getattr(lfs_fs *fs, uint64_t ino, struct stat *st, double *timeout);

/** Target of a passthrough symlink into @p buf (NUL-terminated). */
int lfs_fs_readlink(lfs_fs *fs, uint64_t ino, char *buf, size_t bufsz);

/**
 * Check an open(2) of @p ino with @p flags: EROFS for any write access,
 * EISDIR/ENOTDIR as appropriate, 0 otherwise. (Only used when the kernel
 * sends OPEN at all: see docs/mount.md "Zero-message open".)
 */
int lfs_fs_open_check(lfs_fs *fs, uint64_t ino, int flags, bool dir);

/** Bytes for one READ: either from @p fd at the request offset or from memory. */
typedef struct lfs_fs_read {
	int fd;           /**< >= 0: read from this file (lfs_fs_read_end closes it) */
	const char *data; /**< fd < 0: these bytes (may be NULL when len == 0) */
	size_t len;
	void *hold;       /* private: keeps data alive until lfs_fs_read_end() */
	int hold_kind;    /* private */
} lfs_fs_read;

/** Prepare a READ of up to @p size bytes at @p off. Call lfs_fs_read_end() after replying. */
int lfs_fs_read_begin(lfs_fs *fs, uint64_t ino, size_t size, off_t off, lfs_fs_read *r);

/** Release what lfs_fs_read_begin() handed out. */
void lfs_fs_read_end(lfs_fs *fs, lfs_fs_read *r);

/**
 * Directory entry callback. e->attr.st_ino and the type bits of
 * e->attr.st_mode are always set. With plus, e->ino != 0 means a lookup
 * count was taken for the entry (the full entry is valid). Return 0 when the
 * entry was taken, non-zero when the reply buffer is full: the entry is then
 * not consumed (its lookup count is dropped again) and the listing stops.
 */
typedef int (*lfs_fs_dirent_fn)(void *ctx, const char *name, const lfs_fs_entry *e, off_t next_off);

/**
 * List folder @p ino from offset @p off (0 = start; otherwise a next_off
 * handed out earlier). "." and ".." come first. A listing started at offset 0
 * reads SOURCE again unless the folder is known unchanged.
 */
int lfs_fs_readdir(lfs_fs *fs, uint64_t ino, off_t off, bool plus, lfs_fs_dirent_fn fn, void *ctx);

/** statvfs of SOURCE's filesystem. */
int lfs_fs_statfs(lfs_fs *fs, struct statvfs *sv);

/** Callbacks the watcher uses to tell the kernel what changed. */
typedef struct lfs_fs_notify {
	void *ctx;
	void (*inval_entry)(void *ctx, uint64_t parent, const char *name);
	void (*inval_inode)(void *ctx, uint64_t ino);
} lfs_fs_notify;

/**
 * Start the inotify watcher thread (no-op without opts->watch). The callbacks
 * run on that thread, never while the fs lock is held. Returns 0 or errno.
 */
int lfs_fs_watch_start(lfs_fs *fs, const lfs_fs_notify *n);

/** Stop and join the watcher thread. */
void lfs_fs_watch_stop(lfs_fs *fs);

/** Counters for debugging / benchmarks. */
typedef struct lfs_fs_stats {
	uint64_t nodes, cache_entries, cache_bytes, cache_hits, cache_misses, cache_evictions;
	uint64_t builds, build_failures, watches;
} lfs_fs_stats;

/** Snapshot of the counters. */
void lfs_fs_get_stats(lfs_fs *fs, lfs_fs_stats *s);

#endif
