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
 *  - editing (docs/editing.md): in-memory text of views being written
 *    ("overlays", per model and view path, not per open file: the mount
 *    uses zero-message open), the scratch namespace of every model folder
 *    (in-memory files and symlinks for editors' swap, backup and temp
 *    files), the commit of a written view back into SOURCE through
 *    lfs_views_apply() (atomic replace, per-model lock), the per-model
 *    errors.txt, and read-write passthrough of everything else;
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
 * one mutex protects the tables; source I/O, view building and commits run
 * unlocked (commits of one model are serialised by that model's own lock).
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
/** Name of the mount's status inside it (docs/mount.md "/.legacyfs"). */
#define LFS_FS_STATUS_NAME "status"
/** Name of the resource table inside it: which copy of each resource wins. */
#define LFS_FS_RESOURCES_NAME "resources"
/** Name of the per-model message file of refused saves (docs/editing.md). */
#define LFS_FS_MODEL_ERRORS_NAME "errors.txt"
/** Suffix of the scratch copy of a refused text ("model.txt.rejected"). */
#define LFS_FS_REJECTED_SUFFIX ".rejected"

/** Log levels for lfs_fs_opts.log (same order as syslog priorities). */
enum lfs_log_level { LFS_LOG_ERR = 3, LFS_LOG_WARNING = 4, LFS_LOG_INFO = 6, LFS_LOG_DEBUG = 7 };

/** Mount options of the fs layer. */
typedef struct lfs_fs_opts {
	double timeout;        /**< kernel entry/attr cache timeout, seconds (errors file: 0) */
	/** The same for SOURCE subtrees on a file system whose changes inotify
	 *  misses (network and FUSE file systems: docs/mount.md "Network file
	 *  systems"), seconds: each access after it checks the source by stat. */
	double remote_timeout;
	size_t cache_bytes;    /**< view cache bound, bytes (0 = unbounded) */
	size_t cache_entries;  /**< view cache bound, entries (0 = unbounded) */
	size_t max_model_size; /**< larger source files are never decoded, bytes */
	size_t model_memory;   /**< bound of the views of one model, bytes (0 = 256 MiB,
				*   SIZE_MAX = none): a model over it shows only a
				*   README.txt saying so (viewset.h, docs/mount.md) */
	/** Candidate model files (by name) a listing of a SOURCE folder classifies
	 *  by their header, at most; the others are listed untyped (DT_UNKNOWN,
	 *  no attributes) and classified when looked up. 0 = none at listing
	 *  (docs/mount.md "Listing is cheap"). */
	unsigned list_classify;
	bool watch;            /**< watch SOURCE with inotify (lfs_fs_watch_start) */
	/** -o watch given: inotify is trusted on network file systems too (no
	 *  revalidation by stat there; remote_timeout is then timeout). */
	bool watch_trusted;
	bool debug;            /**< also produce LFS_LOG_DEBUG messages (one per READ, ...) */
	double unlink_grace;   /**< seconds a deleted view stays absent (0 = default 1 s; docs/editing.md) */
	/** seconds after which an exporter's scratch material library (`*.mtl` written in a
	 *  model folder, e.g. Blender's) unchanged that long is dropped (0 = kept until
	 *  unmount; docs/editing.md "Scratch files") */
	double scratch_ttl;
	size_t edit_bytes;     /**< bound of in-memory edit data (overlays + scratch), bytes (0 = 512 MiB) */
	unsigned thumb_size;   /**< thumbnail.png edge in pixels (128/256/512/1024), 0 = none */
	/** Folder of the disk cache of thumbnails (thumbcache.h; borrowed: must outlive
	 *  the fs), NULL = no disk cache (docs/thumbnails.md "Disk cache"). */
	const char *thumb_cache;
	size_t thumb_cache_bytes; /**< its bound, bytes (0 = none) */
	/** New source objects keep the daemon's owner even when it runs as root
	 *  (-o uid= / -o gid=: the mount shows a forced owner, SOURCE keeps the
	 *  real one); false: as root, they are given to the caller. */
	bool keep_owner;
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
 * Check an open(2) of @p ino with @p flags: EROFS for write access to a
 * read-only view or control file, EISDIR/ENOTDIR as appropriate, 0
 * otherwise. (Only used when the kernel sends OPEN at all: see docs/mount.md
 * "Zero-message open".) @p *is_view (may be NULL) tells whether @p ino is a
 * generated file (page cache kept across opens).
 */
int lfs_fs_open_check(lfs_fs *fs, uint64_t ino, int flags, bool dir, bool *is_view);

/** Who asks (from the FUSE request): owner of created objects, writer of a view. */
typedef struct lfs_fs_ctx {
	uid_t uid;
	gid_t gid;
	pid_t pid; /**< thread id of the caller (0 = unknown) */
	/**
	 * The caller's umask (FUSE sends it with CREATE, MKNOD and MKDIR). New
	 * source objects get mode & ~umask; the daemon itself runs with umask 0
	 * (src/main.c), so nothing else masks them (docs/posix.md).
	 */
	mode_t umask;
} lfs_fs_ctx;

/**
 * Create and open regular file @p name in @p parent (FUSE create). In a
 * source folder: a real file (O_EXCL honoured). In a model folder: the name
 * of a writable view (re-creating a view = replacing its text, see
 * docs/editing.md) or a scratch file; EROFS for read-only views/formats.
 * Fills @p e (one lookup count taken).
 */
int lfs_fs_create(lfs_fs *fs, uint64_t parent, const char *name, mode_t mode, int flags,
		  const lfs_fs_ctx *ctx, lfs_fs_entry *e);

/** mknod: passthrough in source folders; EPERM in model folders. */
int lfs_fs_mknod(lfs_fs *fs, uint64_t parent, const char *name, mode_t mode, dev_t rdev,
		 const lfs_fs_ctx *ctx, lfs_fs_entry *e);

/** mkdir: passthrough in source folders; EPERM in model folders. */
int lfs_fs_mkdir(lfs_fs *fs, uint64_t parent, const char *name, mode_t mode,
		 const lfs_fs_ctx *ctx, lfs_fs_entry *e);

/** symlink @p name -> @p target: passthrough, or a scratch symlink in a model folder. */
int lfs_fs_symlink(lfs_fs *fs, const char *target, uint64_t parent, const char *name,
		   const lfs_fs_ctx *ctx, lfs_fs_entry *e);

/**
 * Hard link: passthrough between source folders; a second name of a scratch
 * file; a scratch *copy* of a view's current text (link(view, backup): GIO's
 * backups). EXDEV between a source folder and a model folder.
 */
int lfs_fs_link(lfs_fs *fs, uint64_t ino, uint64_t newparent, const char *newname,
		lfs_fs_entry *e);

/** unlink: passthrough; scratch name; a view: its text reverts, the name is absent for the grace time. */
int lfs_fs_unlink(lfs_fs *fs, uint64_t parent, const char *name);

/** rmdir: passthrough; EPERM for model folders and generated folders. */
int lfs_fs_rmdir(lfs_fs *fs, uint64_t parent, const char *name);

/**
 * rename(2) with renameat2 @p flags (RENAME_NOREPLACE, RENAME_EXCHANGE in
 * source folders). Model folders cannot be renamed (EPERM); a rename between
 * a source folder and a model folder is EXDEV (mv falls back to copying);
 * inside one model folder: scratch -> view replaces the view's text (commit,
 * EINVAL on a bad edit and nothing is moved), view -> scratch moves the text
 * to the scratch name and the view stays.
 */
int lfs_fs_rename(lfs_fs *fs, uint64_t parent, const char *name, uint64_t newparent,
		  const char *newname, unsigned flags);

/**
 * lfs_fs_rename() on behalf of the caller @p ctx (may be NULL): the thread
 * group of ctx->pid is the saving process of a rename onto a view, whose
 * base is what that process read (docs/editing.md "Concurrent saves").
 */
int lfs_fs_rename_ctx(lfs_fs *fs, uint64_t parent, const char *name, uint64_t newparent,
		      const char *newname, unsigned flags, const lfs_fs_ctx *ctx);

/** lfs_fs_setattr() @p to_set bits. */
enum {
	LFS_SET_MODE = 1 << 0,
	LFS_SET_UID = 1 << 1,
	LFS_SET_GID = 1 << 2,
	LFS_SET_SIZE = 1 << 3,
	LFS_SET_ATIME = 1 << 4,
	LFS_SET_MTIME = 1 << 5,
	LFS_SET_ATIME_NOW = 1 << 6,
	LFS_SET_MTIME_NOW = 1 << 7,
	LFS_SET_CTIME = 1 << 8,
};

/**
 * Change attributes (chmod, chown, truncate, utimens) and return the new
 * ones in @p out. Views: truncation edits the text (no commit by itself);
 * mode/owner/time changes are accepted and ignored (a view follows its model
 * file). Model folders: EPERM.
 */
int lfs_fs_setattr(lfs_fs *fs, uint64_t ino, const struct stat *attr, int to_set,
		   const lfs_fs_ctx *ctx, struct stat *out, double *timeout);

/**
 * WRITE @p size bytes at @p off. Source files: pwrite into SOURCE. Views:
 * into the view's in-memory text (made from the generated text at the first
 * change); EROFS for read-only views; the writing process (@p ctx->pid's
 * thread group, may be NULL) is remembered for lfs_fs_flush(). Scratch
 * files: in memory. *written = bytes taken. ENOSPC when the edit memory
 * bound is reached.
 */
int lfs_fs_write(lfs_fs *fs, uint64_t ino, const char *buf, size_t size, off_t off,
		 const lfs_fs_ctx *ctx, size_t *written);

/**
 * FLUSH (every close(2)): commits a view written since its last commit, when
 * the closing process (@p ctx->pid's thread group; NULL = any) is the one
 * that wrote last: a forked child closing an inherited descriptor (exec of
 * an O_CLOEXEC file, exit) does not commit a half-written text.
 * Returns 0, EINVAL (bad edit or stale base: message in errors.txt and the
 * log), or the errno of writing SOURCE (ENOSPC, EIO, ...).
 */
int lfs_fs_flush(lfs_fs *fs, uint64_t ino, const lfs_fs_ctx *ctx);

/** FSYNC: commits a changed view (as flush); fsyncs source files. */
int lfs_fs_fsync(lfs_fs *fs, uint64_t ino, bool datasync);

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

/**
 * lfs_fs_read_begin() on behalf of the caller @p ctx (may be NULL): a READ
 * of a writable view records which version the caller's thread group read,
 * the base of its next save (docs/editing.md "Concurrent saves").
 */
int lfs_fs_read_begin_ctx(lfs_fs *fs, uint64_t ino, size_t size, off_t off, const lfs_fs_ctx *ctx,
			  lfs_fs_read *r);

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
 * Start the notification thread: it follows SOURCE with inotify (with
 * opts->watch) and sends the invalidations that commits and other edits
 * queue (always). The callbacks run on that thread, never while the fs lock
 * is held and never inside a request. Returns 0 or errno.
 */
int lfs_fs_watch_start(lfs_fs *fs, const lfs_fs_notify *n);

/** Stop and join the notification thread. */
void lfs_fs_watch_stop(lfs_fs *fs);

/** Counters for debugging / benchmarks. */
typedef struct lfs_fs_stats {
	uint64_t nodes, cache_entries, cache_bytes, cache_hits, cache_misses, cache_evictions;
	uint64_t builds, build_failures, watches;
	uint64_t commits;        /**< saves written to SOURCE */
	uint64_t commit_noops;   /**< saves that parsed to the same bytes (SOURCE untouched) */
	uint64_t commit_refused; /**< bad edits and stale saves */
	uint64_t edit_bytes;     /**< in-memory edit data now */
} lfs_fs_stats;

/** Snapshot of the counters. */
void lfs_fs_get_stats(lfs_fs *fs, lfs_fs_stats *s);

#endif
