/**
 * @file fuse_ll.c
 * FUSE low-level operations of legacyfs: the only file that calls fuse_reply_*.
 *
 * Every handler makes one call into src/fs (which returns 0 or a positive
 * errno) and sends exactly one reply on every path. Kernel behaviour the code
 * depends on is noted at the point of use. The mount is read-write
 * (docs/editing.md): writes to views are committed by FLUSH/FSYNC/RENAME in
 * src/fs; the kernel notifications that follow are sent by the fs layer's
 * notification thread, never from a handler here.
 */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#if defined(__SANITIZE_ADDRESS__)
#define LFS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LFS_ASAN 1
#endif
#endif
#ifndef LFS_ASAN
#define LFS_ASAN 0
#endif
#if LFS_ASAN
#include <sanitizer/asan_interface.h>
#endif
#include "fuse_ll.h"

#include "common/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fuse.h> /* struct fuse_in_header, FUSE_FORGET: the kernel protocol */
#include <poll.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

static lfs_ll *ll_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* ---- serving on the requester's CPU (docs/performance.md "Read-write grep") ---- */

/*
 * A round trip costs ~4 us when the thread that answers runs on the CPU of
 * the process that waits, and ~90 us on another CPU of this VM (wake-ups of
 * an idle vCPU). Each request thread therefore pins itself to the CPU the
 * last requester ran on. That CPU is field 39 of /proc/TID/stat, read by a
 * sampler thread (follow_main) every ll->follow_ns while requests come, never
 * by a request thread: reading it can block until the requester leaves
 * execve() (the kernel's exec lock), and an exec closing a file of this mount
 * waits for our FLUSH reply: a request thread reading it would deadlock.
 * Pinning stays within the thread's own mask: a daemon placed with taskset
 * is never moved out of its CPUs, and a mask changed from outside
 * (taskset -p) is taken as the new bound.
 */
struct follow {
	int cpu;            /* CPU we pinned this thread to; -1: not pinned by us */
	cpu_set_t base;     /* the mask before we pinned */
	bool sliced;        /* request_slice applied to this thread */
};
static _Thread_local struct follow follow_state = { .cpu = -1 };

/* CPU that task @p tid last ran on (/proc/TID/stat field 39), or -1. */
static int task_cpu(pid_t tid)
{
	char path[48], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* field 2 (comm) may hold spaces and ')': fields 3.. start after the last ')' */
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	int field = 2;
	for (; *p && field < 39; p++)
		if (*p == ' ')
			field++;
	if (field != 39)
		return -1;
	char *end;
	long cpu = strtol(p, &end, 10);
	return end == p || cpu < 0 || cpu >= CPU_SETSIZE ? -1 : (int)cpu;
}

/* The sampler: publishes the CPU of the latest requester; sleeps while no request comes. */
static void *follow_main(void *arg)
{
	lfs_ll *ll = arg;
	struct timespec period = { .tv_sec = (time_t)(ll->follow_ns / 1000000000u),
				   .tv_nsec = (long)(ll->follow_ns % 1000000000u) };
	for (;;) {
		pthread_mutex_lock(&ll->follow_mu);
		while (!ll->follow_stop && atomic_load_explicit(&ll->req_pid, memory_order_relaxed) == 0) {
			atomic_store(&ll->follow_idle, true);
			pthread_cond_wait(&ll->follow_cv, &ll->follow_mu);
		}
		bool stop = ll->follow_stop;
		pthread_mutex_unlock(&ll->follow_mu);
		if (stop)
			return NULL;
		int pid = atomic_exchange(&ll->req_pid, 0);
		if (pid > 0) {
			int cpu = task_cpu(pid);
			if (cpu >= 0)
				atomic_store_explicit(&ll->req_cpu, cpu, memory_order_relaxed);
		}
		nanosleep(&period, NULL);
	}
}

static void follow_start(lfs_ll *ll)
{
	atomic_store(&ll->req_cpu, -1);
	if (!ll->follow_ns || ll->follow_on)
		return;
	pthread_mutex_init(&ll->follow_mu, NULL);
	pthread_cond_init(&ll->follow_cv, NULL);
	ll->follow_on = pthread_create(&ll->follow_thread, NULL, follow_main, ll) == 0;
}

static void follow_stop(lfs_ll *ll)
{
	if (!ll->follow_on)
		return;
	pthread_mutex_lock(&ll->follow_mu);
	ll->follow_stop = true;
	pthread_cond_signal(&ll->follow_cv);
	pthread_mutex_unlock(&ll->follow_mu);
	pthread_join(ll->follow_thread, NULL);
	pthread_cond_destroy(&ll->follow_cv);
	pthread_mutex_destroy(&ll->follow_mu);
	ll->follow_on = false;
}

/*
 * A short EEVDF slice (Linux 6.12+, no privilege needed) gives a woken
 * request thread an early deadline: it preempts a CPU-bound task instead of
 * queueing behind it while the requester waits. Older kernels refuse or
 * ignore the runtime of a SCHED_OTHER task: nothing changes then.
 */
struct lfs_sched_attr { /* struct sched_attr of <linux/sched/types.h>, first version */
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
};

static void set_slice(uint64_t ns)
{
	struct lfs_sched_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.sched_policy = SCHED_OTHER;
	a.sched_nice = getpriority(PRIO_PROCESS, 0);
	a.sched_runtime = ns;
	(void)syscall(SYS_sched_setattr, 0, &a, 0);
}

/* Every hot request: report the requester, move to its CPU when the sampler says it moved. */
static void follow(fuse_req_t req)
{
	lfs_ll *ll = ll_of(req);
	struct follow *f = &follow_state;
	if (ll->slice_ns && !f->sliced) {
		f->sliced = true;
		set_slice(ll->slice_ns);
	}
	if (!ll->follow_on)
		return;
	int pid = fuse_req_ctx(req)->pid;
	if (pid > 0 && atomic_load_explicit(&ll->req_pid, memory_order_relaxed) != pid)
		atomic_store_explicit(&ll->req_pid, pid, memory_order_relaxed);
	if (atomic_load_explicit(&ll->follow_idle, memory_order_relaxed)) {
		pthread_mutex_lock(&ll->follow_mu);
		atomic_store(&ll->follow_idle, false);
		pthread_cond_signal(&ll->follow_cv);
		pthread_mutex_unlock(&ll->follow_mu);
	}
	int target = atomic_load_explicit(&ll->req_cpu, memory_order_relaxed);
	if (target < 0 || target == f->cpu)
		return;
	cpu_set_t cur;
	if (sched_getaffinity(0, sizeof(cur), &cur) != 0)
		return;
	if (f->cpu >= 0 && !(CPU_COUNT(&cur) == 1 && CPU_ISSET(f->cpu, &cur)))
		f->cpu = -1; /* changed from outside: that is the new bound */
	if (f->cpu < 0)
		f->base = cur;
	if (CPU_ISSET(target, &f->base)) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(target, &one);
		if (sched_setaffinity(0, sizeof(one), &one) == 0)
			f->cpu = target;
	} else if (f->cpu >= 0 && sched_setaffinity(0, sizeof(f->base), &f->base) == 0) {
		f->cpu = -1;
	}
}

static lfs_fs_ctx ctx_of(fuse_req_t req)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	lfs_fs_ctx x = { .uid = c->uid, .gid = c->gid, .pid = c->pid, .umask = c->umask };
	return x;
}

/* The owner and mode the mount shows (-o uid=, gid=, umask=; fuse_ll.h). */
static void shown(const lfs_ll *ll, struct stat *st)
{
	if (ll->force_uid)
		st->st_uid = ll->uid;
	if (ll->force_gid)
		st->st_gid = ll->gid;
	if (ll->umask && !S_ISLNK(st->st_mode))
		st->st_mode &= ~ll->umask;
}

static void to_fep(const lfs_ll *ll, const lfs_fs_entry *e, struct fuse_entry_param *fe)
{
	memset(fe, 0, sizeof(*fe));
	fe->ino = e->ino;
	fe->generation = e->generation;
	fe->attr = e->attr;
	shown(ll, &fe->attr);
	fe->attr_timeout = e->attr_timeout;
	fe->entry_timeout = e->entry_timeout;
}

static void ll_init(void *userdata, struct fuse_conn_info *conn)
{
	lfs_ll *ll = userdata;
	if (ll->conn_opts)
		fuse_apply_conn_info_opts(ll->conn_opts, conn);
	/* Symlink targets never change behind our back without a watcher event. */
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
	/* No NFS export: node ids are reused after forget. */
	conn->want &= ~FUSE_CAP_EXPORT_SUPPORT;
	/* Write-through keeps every byte visible at write() return: a commit at
	 * FLUSH/FSYNC sees the whole text. In write-through mode "each write is
	 * immediately sent to userspace as one or more WRITE requests"; with
	 * writeback-cache they go to the page cache only (Linux kernel
	 * documentation, "FUSE I/O Modes"; libfuse fuse_common.h,
	 * FUSE_CAP_WRITEBACK_CACHE). */
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	/*
	 * O_TRUNC as a SETATTR(size 0): with zero-message open there is no OPEN
	 * that could carry the truncation, and with atomic_o_trunc the kernel
	 * would then truncate only its own page cache.
	 */
	conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
	ll->no_open_ok = conn->capable & FUSE_CAP_NO_OPEN_SUPPORT;
	ll->no_opendir_ok = conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT;
	follow_start(ll);
}

static void ll_destroy(void *userdata)
{
	follow_stop(userdata);
}

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	follow(req);
	lfs_ll *ll = ll_of(req);
	lfs_fs_entry e;
	int r = lfs_fs_lookup(ll->fs, parent, name, &e);
	struct fuse_entry_param fe;
	to_fep(ll, &e, &fe);
	if (r == 0) {
		/* The kernel counts a lookup only when it receives the reply. */
		if (fuse_reply_entry(req, &fe) != 0)
			lfs_fs_forget(ll->fs, e.ino, 1);
		return;
	}
	if (r == ENOENT && fe.entry_timeout > 0) {
		/* ino 0 + timeout = negative dentry the kernel may cache (the watcher drops it). */
		fuse_reply_entry(req, &fe);
		return;
	}
	fuse_reply_err(req, r);
}

static void ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	lfs_fs_forget(ll_of(req)->fs, ino, nlookup);
	fuse_reply_none(req);
}

static void ll_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	lfs_ll *ll = ll_of(req);
	for (size_t i = 0; i < count; i++)
		lfs_fs_forget(ll->fs, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void ll_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	follow(req);
	(void)fi;
	struct stat st;
	double timeout;
	lfs_ll *ll = ll_of(req);
	int r = lfs_fs_getattr(ll->fs, ino, &st, &timeout);
	if (r) {
		fuse_reply_err(req, r);
		return;
	}
	shown(ll, &st);
	fuse_reply_attr(req, &st, timeout);
}

static void ll_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[PATH_MAX + 1];
	int r = lfs_fs_readlink(ll_of(req)->fs, ino, buf, sizeof(buf));
	if (r)
		fuse_reply_err(req, r);
	else
		fuse_reply_readlink(req, buf);
}

static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	follow(req);
	lfs_ll *ll = ll_of(req);
	if (ll->zero_open && ll->no_open_ok) {
		/*
		 * ENOSYS makes the kernel stop sending OPEN/RELEASE for the rest of the
		 * connection and keep cached pages across opens (FUSE_CAP_NO_OPEN_SUPPORT).
		 * READ then arrives without a file handle: fs reads per inode.
		 */
		fuse_reply_err(req, ENOSYS);
		return;
	}
	bool view = false;
	int r = lfs_fs_open_check(ll->fs, ino, fi->flags, false, &view);
	if (r) {
		fuse_reply_err(req, r);
		return;
	}
	/* Content changes with SOURCE (the watcher invalidates pages then) or
	 * through this mount (the kernel's pages are the written bytes). */
	fi->keep_cache = 1;
	/* A read-only close never commits: no FLUSH for it. */
	fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY;
	fi->fh = 0;
	fuse_reply_open(req, fi);
}

static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	follow(req);
	(void)fi;
	lfs_ll *ll = ll_of(req);
	lfs_fs_read rd;
	lfs_fs_ctx c = ctx_of(req);
	int r = lfs_fs_read_begin_ctx(ll->fs, ino, size, off, &c, &rd);
	if (r) {
		fuse_reply_err(req, r);
		return;
	}
	if (rd.fd >= 0) {
		/* libfuse preads (or splices) straight from the source file. */
		struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);
		bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
		bv.buf[0].fd = rd.fd;
		bv.buf[0].pos = off;
		fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE);
	} else {
		fuse_reply_buf(req, rd.data, rd.len);
	}
	lfs_fs_read_end(ll->fs, &rd);
}

static void ll_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void ll_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	follow(req);
	(void)fi;
	/*
	 * FLUSH is sent on every close(2), even in zero-message-open mode, and
	 * its error is what close(2) returns: the commit point of a view written
	 * since its last commit (EINVAL for a bad edit). Never ENOSYS: the kernel
	 * would stop sending it for good. Costs one round trip per close of a
	 * `grep -r` (docs/performance.md) — except on a read-only mount, where
	 * nothing can be committed: ENOSYS there, and the kernel stops sending it.
	 */
	if (ll_of(req)->read_only)
		return (void)fuse_reply_err(req, ENOSYS);
	lfs_fs_ctx c = ctx_of(req);
	fuse_reply_err(req, lfs_fs_flush(ll_of(req)->fs, ino, &c));
}

static void ll_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)fi;
	/* Implemented (an ENOSYS reply is cached by the kernel and could never
	 * report a refused save later). */
	fuse_reply_err(req, lfs_fs_fsync(ll_of(req)->fs, ino, datasync != 0));
}

static void ll_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	lfs_ll *ll = ll_of(req);
	if (ll->zero_open && ll->no_opendir_ok) {
		fuse_reply_err(req, ENOSYS); /* FUSE_CAP_NO_OPENDIR_SUPPORT, as for open */
		return;
	}
	int r = lfs_fs_open_check(ll->fs, ino, fi->flags, true, NULL);
	if (r) {
		fuse_reply_err(req, r);
		return;
	}
	/* Cached listings are dropped by the watcher's inval_inode on the folder. */
	fi->cache_readdir = 1;
	fi->keep_cache = 1;
	fi->fh = 0;
	fuse_reply_open(req, fi);
}

struct dirbuf {
	fuse_req_t req;
	char *buf;
	size_t size, pos;
	bool plus;
	fuse_ino_t *taken; /* node ids whose lookup count this reply carries */
	size_t ntaken, cap;
};

static int dirbuf_add(void *ctx, const char *name, const lfs_fs_entry *e, off_t next_off)
{
	struct dirbuf *b = ctx;
	size_t room = b->size - b->pos, need;
	if (b->plus) {
		struct fuse_entry_param fe;
		to_fep(ll_of(b->req), e, &fe);
		/* ino 0 ("." and "..", vanished names): the kernel makes no inode for it. */
		need = fuse_add_direntry_plus(b->req, b->buf + b->pos, room, name, &fe, next_off);
	} else {
		need = fuse_add_direntry(b->req, b->buf + b->pos, room, name, &e->attr, next_off);
	}
	if (need > room)
		return 1;
	if (b->plus && e->ino) {
		void *nt = b->taken;
		if (!lfs_grow(&nt, &b->cap, b->ntaken + 1, sizeof(fuse_ino_t)))
			return 1; /* entry not consumed: fs drops its count */
		b->taken = nt;
		b->taken[b->ntaken++] = e->ino;
	}
	b->pos += need;
	return 0;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
	follow(req);
	lfs_ll *ll = ll_of(req);
	struct dirbuf b = { .req = req, .size = size, .plus = plus };
	b.buf = malloc(size ? size : 1);
	if (!b.buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	int r = lfs_fs_readdir(ll->fs, ino, off, plus, dirbuf_add, &b);
	if (r) {
		for (size_t i = 0; i < b.ntaken; i++)
			lfs_fs_forget(ll->fs, b.taken[i], 1);
		fuse_reply_err(req, r);
	} else if (fuse_reply_buf(req, b.buf, b.pos) != 0) {
		/* The kernel never saw these entries: give their lookup counts back. */
		for (size_t i = 0; i < b.ntaken; i++)
			lfs_fs_forget(ll->fs, b.taken[i], 1);
	}
	free(b.taken);
	free(b.buf);
}

static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	do_readdir(req, ino, size, off, false);
}

static void ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	(void)fi;
	do_readdir(req, ino, size, off, true);
}

static void ll_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void ll_statfs(fuse_req_t req, fuse_ino_t ino)
{
	(void)ino;
	struct statvfs sv;
	int r = lfs_fs_statfs(ll_of(req)->fs, &sv);
	if (r)
		fuse_reply_err(req, r);
	else
		fuse_reply_statfs(req, &sv);
}

/* ---- changes (docs/editing.md) ---- */

/* Reply with a new entry; the kernel counts the lookup only when it gets it. */
static void reply_new_entry(fuse_req_t req, int r, const lfs_fs_entry *e)
{
	if (r) {
		fuse_reply_err(req, r);
		return;
	}
	struct fuse_entry_param fe;
	to_fep(ll_of(req), e, &fe);
	if (fuse_reply_entry(req, &fe) != 0)
		lfs_fs_forget(ll_of(req)->fs, e->ino, 1);
}

static void ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	(void)fi;
	int set = 0;
	if (to_set & FUSE_SET_ATTR_MODE)
		set |= LFS_SET_MODE;
	if (to_set & FUSE_SET_ATTR_UID)
		set |= LFS_SET_UID;
	if (to_set & FUSE_SET_ATTR_GID)
		set |= LFS_SET_GID;
	if (to_set & FUSE_SET_ATTR_SIZE)
		set |= LFS_SET_SIZE;
	if (to_set & FUSE_SET_ATTR_ATIME)
		set |= LFS_SET_ATIME;
	if (to_set & FUSE_SET_ATTR_MTIME)
		set |= LFS_SET_MTIME;
	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		set |= LFS_SET_ATIME_NOW;
	if (to_set & FUSE_SET_ATTR_MTIME_NOW)
		set |= LFS_SET_MTIME_NOW;
	if (to_set & FUSE_SET_ATTR_CTIME)
		set |= LFS_SET_CTIME;
	/*
	 * A forced owner (-o uid=/gid=) is what the mount shows, not what SOURCE
	 * holds: chown to it changes nothing, to anything else is refused (the
	 * kernel has already let only CAP_CHOWN or the shown owner get here).
	 */
	lfs_ll *ll = ll_of(req);
	if ((set & LFS_SET_UID) && ll->force_uid) {
		if (attr->st_uid != ll->uid) {
			fuse_reply_err(req, EPERM);
			return;
		}
		set &= ~LFS_SET_UID;
	}
	if ((set & LFS_SET_GID) && ll->force_gid) {
		if (attr->st_gid != ll->gid) {
			fuse_reply_err(req, EPERM);
			return;
		}
		set &= ~LFS_SET_GID;
	}
	lfs_fs_ctx c = ctx_of(req);
	struct stat st;
	double timeout;
	/* nothing left to change (a chown to the forced owner): as GETATTR */
	int r = set ? lfs_fs_setattr(ll->fs, ino, attr, set, &c, &st, &timeout) :
		      lfs_fs_getattr(ll->fs, ino, &st, &timeout);
	if (r) {
		fuse_reply_err(req, r);
		return;
	}
	shown(ll, &st);
	fuse_reply_attr(req, &st, timeout);
}

static void ll_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	(void)fi;
	size_t n = 0;
	lfs_fs_ctx c = ctx_of(req);
	int r = lfs_fs_write(ll_of(req)->fs, ino, buf, size, off, &c, &n);
	if (r)
		fuse_reply_err(req, r);
	else
		fuse_reply_write(req, n);
}

static void ll_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	lfs_ll *ll = ll_of(req);
	lfs_fs_ctx c = ctx_of(req);
	lfs_fs_entry e;
	int r = lfs_fs_create(ll->fs, parent, name, mode, fi->flags, &c, &e);
	if (r) {
		fuse_reply_err(req, r);
		return;
	}
	struct fuse_entry_param fe;
	to_fep(ll, &e, &fe);
	/* Per-inode state only (docs/mount.md "Zero-message open"): no handle. */
	fi->fh = 0;
	fi->keep_cache = 1;
	if (fuse_reply_create(req, &fe, fi) != 0)
		lfs_fs_forget(ll->fs, e.ino, 1);
}

static void ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	lfs_fs_ctx c = ctx_of(req);
	lfs_fs_entry e;
	int r = lfs_fs_mknod(ll_of(req)->fs, parent, name, mode, rdev, &c, &e);
	reply_new_entry(req, r, &e);
}

static void ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	lfs_fs_ctx c = ctx_of(req);
	lfs_fs_entry e;
	int r = lfs_fs_mkdir(ll_of(req)->fs, parent, name, mode, &c, &e);
	reply_new_entry(req, r, &e);
}

static void ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, lfs_fs_unlink(ll_of(req)->fs, parent, name));
}

static void ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, lfs_fs_rmdir(ll_of(req)->fs, parent, name));
}

static void ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	lfs_fs_ctx c = ctx_of(req);
	lfs_fs_entry e;
	int r = lfs_fs_symlink(ll_of(req)->fs, link, parent, name, &c, &e);
	reply_new_entry(req, r, &e);
}

static void ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	lfs_fs_ctx c = ctx_of(req);
	fuse_reply_err(req, lfs_fs_rename_ctx(ll_of(req)->fs, parent, name, newparent, newname, flags, &c));
}

static void ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	lfs_fs_entry e;
	int r = lfs_fs_link(ll_of(req)->fs, ino, newparent, newname, &e);
	reply_new_entry(req, r, &e);
}

static const struct fuse_lowlevel_ops ops = {
	.init = ll_init,
	.destroy = ll_destroy,
	.lookup = ll_lookup,
	.forget = ll_forget,
	.forget_multi = ll_forget_multi,
	.getattr = ll_getattr,
	.setattr = ll_setattr,
	.readlink = ll_readlink,
	.mknod = ll_mknod,
	.mkdir = ll_mkdir,
	.unlink = ll_unlink,
	.rmdir = ll_rmdir,
	.symlink = ll_symlink,
	.rename = ll_rename,
	.link = ll_link,
	.open = ll_open,
	.read = ll_read,
	.write = ll_write,
	.flush = ll_flush,
	.release = ll_release,
	.fsync = ll_fsync,
	.opendir = ll_opendir,
	.readdir = ll_readdir,
	.readdirplus = ll_readdirplus,
	.releasedir = ll_releasedir,
	.statfs = ll_statfs,
	.create = ll_create,
	/* No xattr ops: ENOSYS once, then the kernel stops asking (notes: a getxattr
	 * returning ENODATA costs one request before every write). */
};

const struct fuse_lowlevel_ops *lfs_ll_ops(void)
{
	return &ops;
}

static void notify_entry(void *ctx, uint64_t parent, const char *name)
{
	lfs_ll *ll = ctx;
	/* -ENOENT: the kernel does not know the folder/name; nothing to drop. */
	(void)fuse_lowlevel_notify_inval_entry(ll->se, parent, name, strlen(name));
}

static void notify_inode(void *ctx, uint64_t ino)
{
	lfs_ll *ll = ctx;
	(void)fuse_lowlevel_notify_inval_inode(ll->se, ino, 0, 0);
}

void lfs_ll_notify(lfs_ll *ll, lfs_fs_notify *out)
{
	out->ctx = ll;
	out->inval_entry = notify_entry;
	out->inval_inode = notify_inode;
}

/* ---- the session loop with an adaptive poll (docs/performance.md "Read-write grep") ---- */

/*
 * A request that finds a thread asleep in read(2) waits for that thread to
 * be woken; on an idle VM whose other vCPU is halted that is ~90 us, against
 * ~4 us for a thread already running. So the thread that served the latest
 * request keeps polling the fd (poll(2), zero timeout: the fd's blocking
 * mode is shared by all its readers) for up to poll_us before it sleeps.
 * Only one thread spins at a time, so on a 2-CPU machine the requester
 * keeps the other CPU. Every other thread blocks in read(2) as in libfuse's
 * own loop, so a slow request (a big model's build) never holds up others.
 */
struct lfs_worker {
	struct lfs_worker *prev, *next;
	pthread_t tid;
	struct fuse_buf buf;
	struct lfs_loop *lp;
};

struct lfs_loop {
	struct fuse_session *se;
	pthread_mutex_t mu;
	struct lfs_worker head; /* circular list of running workers */
	unsigned nworker, navail, max_threads, max_idle;
	bool exit;
	int error;
	sem_t finish;
	uint64_t poll_ns;
	atomic_bool spinning;
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Poll @p fd without sleeping for up to @p ns; true when a request (or an error) waits. */
static bool spin_for(int fd, uint64_t ns)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t end = now_ns() + ns;
	do {
		int r = poll(&p, 1, 0);
		if (r > 0)
			return true;
		if (r < 0 && errno != EINTR)
			return false;
		/* anything else runnable on this CPU (the requester, other work) goes first */
		sched_yield();
	} while (now_ns() < end);
	return false;
}

static int loop_start_thread(struct lfs_loop *lp);

static void *loop_worker_body(struct lfs_worker *w);

/*
 * Workers still blocked in read(2) when the session ends are cancelled (as in
 * libfuse's own loop). Under AddressSanitizer, the cancellation's forced
 * unwind leaves the scope poisoning of the unwound frames on the stack, and
 * ASan's own thread exit then trips over it: unpoison the stack first.
 */
static void on_cancel(void *arg)
{
	(void)arg;
#if LFS_ASAN
	__asan_handle_no_return();
#endif
}

static void *loop_worker(void *arg)
{
	void *r;
	pthread_cleanup_push(on_cancel, NULL);
	r = loop_worker_body(arg);
	pthread_cleanup_pop(0);
	return r;
}

static void *loop_worker_body(struct lfs_worker *w)
{
	struct lfs_loop *lp = w->lp;
	int fd = fuse_session_fd(lp->se);
	bool served = false;
	while (!fuse_session_exited(lp->se)) {
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		if (served && lp->poll_ns && !atomic_exchange(&lp->spinning, true)) {
			spin_for(fd, lp->poll_ns);
			atomic_store(&lp->spinning, false);
		}
		int res = fuse_session_receive_buf(lp->se, &w->buf);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (res == -EINTR)
			continue;
		if (res <= 0) {
			if (res < 0) {
				fuse_session_exit(lp->se);
				lp->error = res;
			}
			break;
		}
		bool forget = false;
		if (!(w->buf.flags & FUSE_BUF_IS_FD)) {
			/* as libfuse: a burst of FORGETs must not start a thread each */
			const struct fuse_in_header *in = w->buf.mem;
			forget = in->opcode == FUSE_FORGET || in->opcode == FUSE_BATCH_FORGET;
		}
		pthread_mutex_lock(&lp->mu);
		if (lp->exit) {
			pthread_mutex_unlock(&lp->mu);
			return NULL;
		}
		if (!forget)
			lp->navail--;
		if (lp->navail == 0 && lp->nworker < lp->max_threads)
			loop_start_thread(lp);
		pthread_mutex_unlock(&lp->mu);

		fuse_session_process_buf(lp->se, &w->buf);
		served = true;

		pthread_mutex_lock(&lp->mu);
		if (!forget)
			lp->navail++;
		if (!lp->exit && lp->navail > lp->max_idle && lp->nworker > 1) {
			/* too many idle threads: this one ends (libfuse's max_idle_threads) */
			w->prev->next = w->next;
			w->next->prev = w->prev;
			lp->nworker--;
			lp->navail--;
			pthread_mutex_unlock(&lp->mu);
			pthread_detach(w->tid);
			free(w->buf.mem);
			free(w);
			return NULL;
		}
		pthread_mutex_unlock(&lp->mu);
	}
	/* unmounted, signalled or failed: wake the main thread (it cancels the rest) */
	sem_post(&lp->finish);
	return NULL;
}

/* Called with lp->mu held. Threads start with every signal blocked (the main thread takes them). */
static int loop_start_thread(struct lfs_loop *lp)
{
	struct lfs_worker *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->lp = lp;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int r = pthread_create(&w->tid, NULL, loop_worker, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		fuse_log(FUSE_LOG_ERR, "legacyfs: cannot start a request thread: %s\n", strerror(r));
		free(w);
		return -r;
	}
	w->next = &lp->head;
	w->prev = lp->head.prev;
	lp->head.prev->next = w;
	lp->head.prev = w;
	lp->nworker++;
	lp->navail++;
	return 0;
}

int lfs_ll_loop(lfs_ll *ll, unsigned max_threads, unsigned max_idle, unsigned poll_us)
{
	struct lfs_loop lp = { .se = ll->se, .max_threads = max_threads ? max_threads : 1,
			       .max_idle = max_idle, .poll_ns = (uint64_t)poll_us * 1000 };
	lp.head.next = lp.head.prev = &lp.head;
	atomic_init(&lp.spinning, false);
	pthread_mutex_init(&lp.mu, NULL);
	sem_init(&lp.finish, 0, 0);

	pthread_mutex_lock(&lp.mu);
	int err = loop_start_thread(&lp);
	pthread_mutex_unlock(&lp.mu);
	if (!err) {
		/* A signal handler calls fuse_session_exit() and interrupts sem_wait. */
		while (!fuse_session_exited(lp.se))
			sem_wait(&lp.finish);
		pthread_mutex_lock(&lp.mu);
		lp.exit = true;
		for (struct lfs_worker *w = lp.head.next; w != &lp.head; w = w->next)
			pthread_cancel(w->tid);
		pthread_mutex_unlock(&lp.mu);
		while (lp.head.next != &lp.head) {
			struct lfs_worker *w = lp.head.next;
			pthread_join(w->tid, NULL);
			w->prev->next = w->next;
			w->next->prev = w->prev;
			free(w->buf.mem);
			free(w);
		}
		err = lp.error;
	}
	sem_destroy(&lp.finish);
	pthread_mutex_destroy(&lp.mu);
	fuse_session_reset(lp.se);
	return err;
}
