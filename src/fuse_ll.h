/**
 * @file fuse_ll.h
 * The FUSE low-level front-end: libfuse requests -> src/fs/fs.h calls ->
 * exactly one fuse_reply_* each. main.c owns the session; this file owns the
 * operation table and the conversion of results into replies.
 */
#ifndef LFS_FUSE_LL_H
#define LFS_FUSE_LL_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "fs/fs.h"

/** Per-mount state handed to fuse_session_new() as userdata. */
typedef struct lfs_ll {
	lfs_fs *fs;
	struct fuse_session *se;               /**< set after fuse_session_new() */
	struct fuse_conn_info_opts *conn_opts; /**< libfuse's -o options for the connection */
	bool zero_open;   /**< reply ENOSYS to open/opendir (docs/mount.md "Zero-message open") */
	uint64_t follow_ns; /**< 0: no CPU following; else re-read the requester's CPU this often (ns) */
	uint64_t slice_ns;  /**< 0: kernel default; else EEVDF slice of request threads (ns) */
	bool read_only;   /**< "-o ro": nothing to commit, so FLUSH gets ENOSYS (no round trip per close) */
	/**
	 * -o uid=N / -o gid=N / -o umask=OCTAL (docs/mount.md "Owner and modes"):
	 * every attribute reply shows st_uid = uid when force_uid, st_gid = gid
	 * when force_gid, and a mode with the bits of umask cleared (0 = none;
	 * symlinks keep theirs). A chown through the mount to any other owner
	 * than the forced one is refused with EPERM; one to the forced owner
	 * is a no-op. SOURCE is not changed by any of them.
	 */
	bool force_uid, force_gid;
	uid_t uid;
	gid_t gid;
	mode_t umask;
	/* the CPU-following sampler (fuse_ll.c), started in init(), stopped in destroy() */
	pthread_t follow_thread;
	pthread_mutex_t follow_mu;
	pthread_cond_t follow_cv;
	bool follow_on, follow_stop;
	atomic_int req_pid;     /**< latest requester (0: none since the last sample) */
	atomic_int req_cpu;     /**< CPU it last ran on, -1 unknown */
	atomic_bool follow_idle; /**< the sampler waits for a request */
	/* filled in init(): what the kernel supports */
	bool no_open_ok, no_opendir_ok;
} lfs_ll;

/** The operation table (points at static functions of fuse_ll.c). */
const struct fuse_lowlevel_ops *lfs_ll_ops(void);

/**
 * The multi-threaded session loop with an adaptive poll (`-o poll_us=N`,
 * docs/mount.md): like libfuse 3.14's fuse_session_loop_mt() (a thread is
 * started whenever none is left waiting for a request, up to @p max_threads;
 * a thread ends when more than @p max_idle wait, UINT_MAX = never), except
 * that after serving a request one thread at a time, the spinner, polls the
 * /dev/fuse fd without sleeping for up to @p poll_us microseconds before it
 * blocks in read(2) like the others. The fd stays blocking (its open file
 * description is shared by every thread): the spinner uses poll(2) with a
 * zero timeout. Returns 0 when the session ended normally (unmount, signal),
 * else a negative errno.
 */
int lfs_ll_loop(lfs_ll *ll, unsigned max_threads, unsigned max_idle, unsigned poll_us);

/** Notification callbacks for lfs_fs_watch_start(); @p ll must outlive the watcher. */
void lfs_ll_notify(lfs_ll *ll, lfs_fs_notify *out);

#endif
