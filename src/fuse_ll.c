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
#include "fuse_ll.h"

#include "common/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static lfs_ll *ll_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static lfs_fs_ctx ctx_of(fuse_req_t req)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	lfs_fs_ctx x = { .uid = c->uid, .gid = c->gid, .pid = c->pid, .umask = c->umask };
	return x;
}

static void to_fep(const lfs_fs_entry *e, struct fuse_entry_param *fe)
{
	memset(fe, 0, sizeof(*fe));
	fe->ino = e->ino;
	fe->generation = e->generation;
	fe->attr = e->attr;
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
	 * FLUSH/FSYNC sees the whole text (shared/notes/fuse-generated-fs.md §8). */
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	/*
	 * O_TRUNC as a SETATTR(size 0): with zero-message open there is no OPEN
	 * that could carry the truncation, and with atomic_o_trunc the kernel
	 * would then truncate only its own page cache.
	 */
	conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
	ll->no_open_ok = conn->capable & FUSE_CAP_NO_OPEN_SUPPORT;
	ll->no_opendir_ok = conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT;
}

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	lfs_ll *ll = ll_of(req);
	lfs_fs_entry e;
	int r = lfs_fs_lookup(ll->fs, parent, name, &e);
	struct fuse_entry_param fe;
	to_fep(&e, &fe);
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
	(void)fi;
	struct stat st;
	double timeout;
	int r = lfs_fs_getattr(ll_of(req)->fs, ino, &st, &timeout);
	if (r)
		fuse_reply_err(req, r);
	else
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
		to_fep(e, &fe);
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
	to_fep(e, &fe);
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
	lfs_fs_ctx c = ctx_of(req);
	struct stat st;
	double timeout;
	int r = lfs_fs_setattr(ll_of(req)->fs, ino, attr, set, &c, &st, &timeout);
	if (r)
		fuse_reply_err(req, r);
	else
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
	to_fep(&e, &fe);
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
