/**
 * @file fs.c
 * The public entry points of fs.h (see there for the contract): setup and
 * teardown of a mount, and one thin function per request that finds the
 * node and calls through the operations of its kind (fs_int.h, struct
 * node_ops). What each kind does lives in fs_pass.c (SOURCE passthrough),
 * fs_model.c (model folders, views, /.legacyfs), fs_edit.c and
 * fs_scratch.c (editing state and the namespace of model folders).
 */
#define _GNU_SOURCE
#include "fs_int.h"
#include "fs_thumb.h"
#include "replace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/statvfs.h>
#include <unistd.h>

static const struct node_ops *const ops_by_kind[] = {
	[K_ROOT] = &fsi_root_ops,       [K_DIR] = &fsi_dir_ops,         [K_FILE] = &fsi_file_ops,
	[K_LINK] = &fsi_link_ops,       [K_OTHER] = &fsi_other_ops,     [K_MODEL] = &fsi_model_ops,
	[K_VDIR] = &fsi_vdir_ops,       [K_VFILE] = &fsi_vfile_ops,     [K_CTLDIR] = &fsi_ctldir_ops,
	[K_CTLERR] = &fsi_ctlerr_ops,   [K_SCRATCH] = &fsi_scratch_ops, [K_MERR] = &fsi_merr_ops,
	[K_NEWDIR] = &fsi_newdir_ops,   [K_NEWFILE] = &fsi_newfile_ops,
};

const struct node_ops *fsi_kind_ops(enum nkind k)
{
	return ops_by_kind[k];
}

/* ------------------------------------------------------------------ */
/* setup                                                               */

/* lfs_recover_fn: a stale temporary file of a crashed save (replace.h). */
/* Is folder @p dfd on a file system other machines may mount (fsi_fs_untrusted)? */
static bool recover_shared(int dfd)
{
	char name[32];
	return fsi_fs_untrusted(dfd, name, sizeof(name));
}

static void recovered(void *ctx, const char *rel, lfs_recover_action what, const char *why)
{
	lfs_fs *fs = ctx;
	lfs_errlog_add(&fs->errors, rel, why);
	fsi_log(fs, what == LFS_RECOVER_REMOVED ? LFS_LOG_INFO : LFS_LOG_WARNING,
		"%s: temporary file of a crashed save: %s", rel, why);
}

int lfs_fs_new(const char *source, const lfs_fs_opts *opts, lfs_fs **out)
{
	*out = NULL;
	lfs_fs *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return ENOMEM;
	fs->o = *opts;
	if (!fs->o.max_model_size)
		fs->o.max_model_size = (size_t)256 << 20;
	if (!fs->o.model_memory)
		fs->o.model_memory = (size_t)256 << 20;
	fs->ifd = fs->stopfd = fs->kickfd = fs->rootfd = -1;
	fs->edit_max = fs->o.edit_bytes ? fs->o.edit_bytes : (size_t)512 << 20;
	fs->save_max = fs->edit_max / LFS_SAVE_DIV;
	if (!(fs->o.unlink_grace > 0))
		fs->o.unlink_grace = 1.0;
	pthread_mutex_init(&fs->mu, NULL);
	pthread_cond_init(&fs->renamed, NULL);
	clock_gettime(CLOCK_REALTIME, &fs->start);
	fs->uid = getuid();
	fs->gid = getgid();
	lfs_cache_init(&fs->cache, fs->o.cache_bytes, fs->o.cache_entries);
	fs->source = realpath(source, NULL);
	int err = 0;
	if (!fs->source) {
		err = errno;
		fsi_log(fs, LFS_LOG_ERR, "%s: %s", source, strerror(err));
		goto fail;
	}
	fs->rootfd = open(fs->source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fs->rootfd < 0) {
		err = errno;
		fsi_log(fs, LFS_LOG_ERR, "%s: %s", source, strerror(err));
		goto fail;
	}
	fs->stopfd = eventfd(0, EFD_CLOEXEC);
	fs->kickfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fs->stopfd < 0 || fs->kickfd < 0) {
		err = errno;
		fsi_log(fs, LFS_LOG_ERR, "eventfd: %s", strerror(err));
		goto fail;
	}
	if (fs->o.watch) {
		fs->ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
		if (fs->ifd < 0) {
			fsi_log(fs, LFS_LOG_WARNING, "inotify unavailable (%s): SOURCE changes show "
			       "only after the cache timeout", strerror(errno));
			fs->o.watch = false;
		}
	}
	/* Slots 1..5: root, /.legacyfs, its errors, status, resources (pinned). */
	uint64_t id;
	if (fsi_alloc_id(fs, &id) != 0) { /* grows the tables */
		err = ENOMEM;
		goto fail;
	}
	fs->free_ids[fs->nfree++] = id;
	struct node *root = fsi_node_new(fs, LFS_FS_ROOT_ID, K_ROOT, NULL, "", strdup("."));
	struct node *ctl = root ? fsi_node_new(fs, CTL_ID, K_CTLDIR, root, LFS_FS_CTL_NAME, NULL) : NULL;
	struct node *errs = ctl ? fsi_node_new(fs, ERRORS_ID, K_CTLERR, ctl, LFS_FS_ERRORS_NAME, NULL) : NULL;
	struct node *stat_n = errs ? fsi_node_new(fs, STATUS_ID, K_CTLERR, ctl, LFS_FS_STATUS_NAME, NULL) : NULL;
	struct node *res_n = stat_n ? fsi_node_new(fs, RESOURCES_ID, K_CTLERR, ctl, LFS_FS_RESOURCES_NAME, NULL)
				    : NULL;
	if (!res_n || !root->rel) {
		err = ENOMEM;
		goto fail;
	}
	struct stat st;
	if (fstat(fs->rootfd, &st) != 0) {
		err = errno;
		goto fail;
	}
	root->src_dev = (uint64_t)st.st_dev;
	/* SOURCE on a network or FUSE file system: inotify misses far-side changes. */
	root->remote = fsi_fs_untrusted(fs->rootfd, fs->root_fs, sizeof(fs->root_fs));
	if (root->remote && fs->o.watch_trusted) {
		root->remote = false;
		fsi_log(fs, LFS_LOG_INFO,
			"SOURCE %s is on %s: inotify trusted there as -o watch asks (changes made on "
			"another machine are not seen; docs/mount.md \"Network file systems\")",
			fs->source, fs->root_fs);
	}
	if (root->remote) {
		fs->remote_devs[fs->nremote_devs++] = root->src_dev;
		fsi_log(fs, LFS_LOG_WARNING,
			"SOURCE %s is on %s: inotify does not see changes made on another machine or "
			"system; names and attributes are checked again by stat after %g s "
			"(docs/mount.md \"Network file systems\")",
			fs->source, fs->root_fs, fs->o.remote_timeout);
	}
	root->src_ino = root->sino = (uint64_t)st.st_ino;
	ctl->sino = CTL_INO;
	errs->sino = ERRORS_INO;
	stat_n->sino = STATUS_INO;
	res_n->sino = RESOURCES_INO;
	fsi_add_watch(fs, root);
	/* Crash recovery (docs/editing.md "After a crash"): before any request. */
	lfs_replace_recover(fs->rootfd, 256, recover_shared, recovered, fs);
	*out = fs;
	return 0;
fail:
	lfs_fs_free(fs);
	return err ? err : ENOMEM;
}

void lfs_fs_free(lfs_fs *fs)
{
	if (!fs)
		return;
	lfs_fs_watch_stop(fs);
	for (size_t i = 0; i < fs->nslots; i++) {
		struct node *n = fs->slots[i];
		if (n)
			fsi_node_free(fs, n);
	}
	fsi_retired_free_all(fs);
	fsi_newmdl_free_all(fs);
	while (fs->mstates) {
		struct mstate *ms = fs->mstates;
		fs->mstates = ms->next;
		fsi_ms_free(fs, ms);
	}
	for (size_t i = 0; i < fs->pending.n; i++)
		free(fs->pending.v[i].name);
	free(fs->pending.v);
	if (fs->kickfd >= 0)
		close(fs->kickfd);
	fsi_edit_tables_free(fs);
	free(fs->slots);
	free(fs->free_ids);
	free(fs->nh);
	lfs_cache_destroy(&fs->cache);
	lfs_errlog_free(&fs->errors);
	lfs_sb_free(&fs->ctl_status);
	lfs_sb_free(&fs->ctl_resources);
	if (fs->ifd >= 0)
		close(fs->ifd);
	if (fs->stopfd >= 0)
		close(fs->stopfd);
	if (fs->rootfd >= 0)
		close(fs->rootfd);
	free(fs->source);
	pthread_cond_destroy(&fs->renamed);
	pthread_mutex_destroy(&fs->mu);
	free(fs);
}

/* ------------------------------------------------------------------ */
/* requests                                                            */

int lfs_fs_lookup(lfs_fs *fs, uint64_t parent, const char *name, lfs_fs_entry *e)
{
	FSI_REQUEST(fs);
	memset(e, 0, sizeof(*e));
	struct nodeinfo p;
	if (fsi_node_info(fs, parent, &p) != 0)
		return ESTALE;
	/* The kernel holds a reference to @p parent during the request: p stays valid. */
	const struct node_ops *ops = fsi_kind_ops(p.kind);
	int r;
	if (fsi_is_dot(name) || strchr(name, '/'))
		r = ENOENT;
	else
		r = ops->lookup ? ops->lookup(fs, &p, name, e) : ENOTDIR;
	if (r == ENOENT) {
		memset(e, 0, sizeof(*e));
		/* Negative dentries are safe to cache only when the watcher drops them;
		 * never in model folders (errors.txt, *.rejected and deleted views
		 * appear there without any request for the name). */
		e->entry_timeout = fs->ifd >= 0 && ops->source_dir
					   ? (node_remote(p.node, NULL) ? fs->o.remote_timeout : fs->o.timeout)
					   : 0;
	}
	return r;
}

/*
 * The dispatch of the requests below: snapshot the node's kind, call that
 * kind's operation; when it answers FSI_KIND_CHANGED (the node became
 * another kind meanwhile: fs_int.h), once more with a new snapshot.
 */
#define DISPATCH(r, ino, ni, call)                                        \
	do {                                                              \
		for (int tries_ = 0;; tries_++) {                          \
			(r) = fsi_node_info(fs, (ino), &(ni));             \
			if (r)                                             \
				break;                                     \
			(r) = (call);                                      \
			if ((r) != FSI_KIND_CHANGED || tries_ == 3)        \
				break;                                     \
		}                                                          \
		if ((r) == FSI_KIND_CHANGED)                               \
			(r) = ESTALE;                                      \
	} while (0)

static int getattr_op(lfs_fs *fs, const struct nodeinfo *ni, struct stat *st, double *timeout)
{
	const struct node_ops *ops = fsi_kind_ops(ni->kind);
	*timeout = ops->volatile_attr ? 0
		   : node_remote(ni->node, ni_model(ni)) ? fs->o.remote_timeout : fs->o.timeout;
	int r = ops->getattr(fs, ni, st);
	if (!r && ops->source_dir && node_remote(ni->node, NULL))
		fsi_snap_expire(fs, ni->node); /* far-side changes: its listing read again */
	if (!r && ops->source && !S_ISDIR(st->st_mode) && st->st_nlink > 1)
		*timeout = 0; /* other names change its link count and ctime (docs/posix.md) */
	return r;
}

int lfs_fs_getattr(lfs_fs *fs, uint64_t ino, struct stat *st, double *timeout)
{
	FSI_REQUEST(fs);
	struct nodeinfo ni;
	int r;
	DISPATCH(r, ino, ni, getattr_op(fs, &ni, st, timeout));
	return r;
}

static int readlink_op(lfs_fs *fs, const struct nodeinfo *ni, char *buf, size_t bufsz)
{
	const struct node_ops *ops = fsi_kind_ops(ni->kind);
	return ops->readlink ? ops->readlink(fs, ni, buf, bufsz) : EINVAL;
}

int lfs_fs_readlink(lfs_fs *fs, uint64_t ino, char *buf, size_t bufsz)
{
	FSI_REQUEST(fs);
	struct nodeinfo ni;
	int r;
	DISPATCH(r, ino, ni, readlink_op(fs, &ni, buf, bufsz));
	return r;
}

int lfs_fs_open_check(lfs_fs *fs, uint64_t ino, int flags, bool dir, bool *is_view)
{
	FSI_REQUEST(fs);
	struct nodeinfo ni;
	int r = fsi_node_info(fs, ino, &ni);
	if (r)
		return r;
	const struct node_ops *ops = fsi_kind_ops(ni.kind);
	if (is_view)
		*is_view = ops->is_view;
	if (dir && !ops->is_dir)
		return ENOTDIR;
	if (!dir && ops->is_dir)
		return EISDIR;
	bool wr = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
	if (!wr || !ops->open_write)
		return 0;
	return ops->open_write(fs, &ni);
}

int lfs_fs_statfs(lfs_fs *fs, struct statvfs *sv)
{
	if (fstatvfs(fs->rootfd, sv) != 0)
		return errno;
	return 0;
}

_Thread_local pid_t fsi_req_pid;

static int read_begin(lfs_fs *fs, uint64_t ino, size_t size, off_t off, lfs_fs_read *r);

static int read_op(lfs_fs *fs, const struct nodeinfo *ni, size_t size, off_t off, lfs_fs_read *r)
{
	fsi_log(fs, LFS_LOG_DEBUG, "read %s%s%s off=%lld size=%zu",
	       ni->model ? ni->model->rel : "", ni->model ? "/" : "", ni->node->rel ? ni->node->rel : "(ctl)",
	       (long long)off, size);
	const struct node_ops *ops = fsi_kind_ops(ni->kind);
	return ops->read ? ops->read(fs, ni, size, off, r) : ops->not_file;
}

int lfs_fs_read_begin(lfs_fs *fs, uint64_t ino, size_t size, off_t off, lfs_fs_read *r)
{
	return lfs_fs_read_begin_ctx(fs, ino, size, off, NULL, r);
}

int lfs_fs_read_begin_ctx(lfs_fs *fs, uint64_t ino, size_t size, off_t off, const lfs_fs_ctx *ctx,
			  lfs_fs_read *r)
{
	fsi_req_pid = ctx ? ctx->pid : 0;
	int err = read_begin(fs, ino, size, off, r);
	fsi_req_pid = 0;
	return err;
}

static int read_begin(lfs_fs *fs, uint64_t ino, size_t size, off_t off, lfs_fs_read *r)
{
	FSI_REQUEST(fs);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (off < 0)
		return EINVAL;
	struct nodeinfo ni;
	int err;
	DISPATCH(err, ino, ni, read_op(fs, &ni, size, off, r));
	return err;
}

void lfs_fs_read_end(lfs_fs *fs, lfs_fs_read *r)
{
	if (r->fd >= 0)
		close(r->fd);
	if (r->hold_kind == HOLD_ENTRY) {
		pthread_mutex_lock(&fs->mu);
		lfs_cache_release(&fs->cache, r->hold);
		pthread_mutex_unlock(&fs->mu);
	} else if (r->hold_kind == HOLD_MALLOC) {
		free(r->hold);
	}
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

int lfs_fs_readdir(lfs_fs *fs, uint64_t ino, off_t off, bool plus, lfs_fs_dirent_fn fn, void *ctx)
{
	FSI_REQUEST(fs);
	struct nodeinfo ni;
	int r = fsi_node_info(fs, ino, &ni);
	if (r)
		return r;
	if (off < 0)
		return EINVAL;
	const struct node_ops *ops = fsi_kind_ops(ni.kind);
	if (!ops->snap)
		return ENOTDIR;
	fs_lock(fs);
	uint64_t parent_ino = fsi_node_sino(ni.node->parent ? ni.node->parent : ni.node);
	fs_unlock(fs);
	struct dirsnap *s = NULL;
	r = ops->snap(fs, &ni, off, parent_ino, &s);
	if (r)
		return r;
	for (size_t i = (size_t)off; i < s->n; i++) {
		const struct dsent *d = &s->ents[i];
		lfs_fs_entry e;
		memset(&e, 0, sizeof(e));
		/* fsi_thumb_defer: a thumbnail not drawn yet is listed without
		 * attributes rather than drawn (fs_thumb.h) */
		fsi_thumb_defer = plus;
		/* A listing from view names only (s->bare): its files are listed
		 * without attributes, as a vanished name; their sizes would need
		 * the model's views built (docs/mount.md "Listing is cheap"). The
		 * kernel looks a name up when something asks for its attributes. */
		bool bare = s->bare && d->type != DT_DIR;
		/* A candidate model file not classified yet (d_type DT_UNKNOWN:
		 * fs_pass.c snap_build_source): listed without attributes too, so
		 * a listing reads no header; its lookup classifies it. Unless the
		 * kernel has looked it up since (a node of the name): then as any. */
		if (plus && d->type == DT_UNKNOWN && !bare) {
			fs_lock(fs);
			bare = !fsi_find_child(fs, ni.node, d->name);
			fs_unlock(fs);
		}
		if (plus && !bare && !fsi_is_dot(d->name) && lfs_fs_lookup(fs, ino, d->name, &e) != 0)
			memset(&e, 0, sizeof(e)); /* vanished meanwhile: list it without attributes */
		fsi_thumb_defer = false;
		if (!e.ino) {
			e.attr.st_ino = d->ino;
			e.attr.st_mode = DTTOIF(d->type);
		}
		if (fn(ctx, d->name, &e, (off_t)(i + 1)) != 0) {
			if (e.ino)
				lfs_fs_forget(fs, e.ino, 1);
			break;
		}
	}
	fs_lock(fs);
	fsi_snap_unref(s);
	fs_unlock(fs);
	return 0;
}

/* create, mknod, mkdir, symlink: a new name in folder @p parent, made as @p what says. */
static int make_name(lfs_fs *fs, uint64_t parent, const char *name, const struct newobj *what,
		     const lfs_fs_ctx *ctx, lfs_fs_entry *e)
{
	FSI_REQUEST(fs);
	memset(e, 0, sizeof(*e));
	struct nodeinfo p;
	if (fsi_node_info(fs, parent, &p) != 0)
		return ESTALE;
	const struct node_ops *ops = fsi_kind_ops(p.kind);
	return ops->mknew ? ops->mknew(fs, &p, name, what, ctx, e) : ENOTDIR;
}

int lfs_fs_create(lfs_fs *fs, uint64_t parent, const char *name, mode_t mode, int flags,
		  const lfs_fs_ctx *ctx, lfs_fs_entry *e)
{
	struct newobj w = { .what = NEW_FILE, .mode = mode, .flags = flags };
	return make_name(fs, parent, name, &w, ctx, e);
}

int lfs_fs_mknod(lfs_fs *fs, uint64_t parent, const char *name, mode_t mode, dev_t rdev,
		 const lfs_fs_ctx *ctx, lfs_fs_entry *e)
{
	struct newobj w = { .what = NEW_NODE, .mode = mode, .rdev = rdev };
	return make_name(fs, parent, name, &w, ctx, e);
}

int lfs_fs_mkdir(lfs_fs *fs, uint64_t parent, const char *name, mode_t mode, const lfs_fs_ctx *ctx,
		 lfs_fs_entry *e)
{
	struct newobj w = { .what = NEW_DIR, .mode = mode };
	return make_name(fs, parent, name, &w, ctx, e);
}

int lfs_fs_symlink(lfs_fs *fs, const char *target, uint64_t parent, const char *name,
		   const lfs_fs_ctx *ctx, lfs_fs_entry *e)
{
	struct newobj w = { .what = NEW_SYMLINK, .target = target };
	return make_name(fs, parent, name, &w, ctx, e);
}

int lfs_fs_link(lfs_fs *fs, uint64_t ino, uint64_t newparent, const char *newname, lfs_fs_entry *e)
{
	FSI_REQUEST(fs);
	memset(e, 0, sizeof(*e));
	struct nodeinfo n, np;
	int rn = fsi_node_info(fs, ino, &n), rp = fsi_node_info(fs, newparent, &np);
	if (rn || rp)
		return ESTALE;
	const struct node_ops *ops = fsi_kind_ops(n.kind);
	return ops->link ? ops->link(fs, &n, &np, newname, e) : fsi_link_elsewhere(&np);
}

int lfs_fs_unlink(lfs_fs *fs, uint64_t parent, const char *name)
{
	FSI_REQUEST(fs);
	struct nodeinfo p;
	if (fsi_node_info(fs, parent, &p) != 0)
		return ESTALE;
	const struct node_ops *ops = fsi_kind_ops(p.kind);
	return ops->unlink ? ops->unlink(fs, &p, name) : ENOTDIR;
}

int lfs_fs_rmdir(lfs_fs *fs, uint64_t parent, const char *name)
{
	FSI_REQUEST(fs);
	struct nodeinfo p;
	if (fsi_node_info(fs, parent, &p) != 0)
		return ESTALE;
	if (!name[0] || fsi_is_dot(name) || strchr(name, '/'))
		return EINVAL;
	const struct node_ops *ops = fsi_kind_ops(p.kind);
	return ops->rmdir ? ops->rmdir(fs, &p, name) : ENOTDIR;
}

int lfs_fs_rename(lfs_fs *fs, uint64_t parent, const char *name, uint64_t newparent,
		  const char *newname, unsigned flags)
{
	return lfs_fs_rename_ctx(fs, parent, name, newparent, newname, flags, NULL);
}

int lfs_fs_rename_ctx(lfs_fs *fs, uint64_t parent, const char *name, uint64_t newparent,
		      const char *newname, unsigned flags, const lfs_fs_ctx *ctx)
{
	FSI_REQUEST(fs);
	struct nodeinfo p, np;
	int rp = fsi_node_info(fs, parent, &p), rn = fsi_node_info(fs, newparent, &np);
	if (rp || rn)
		return ESTALE;
	const struct node_ops *ops = fsi_kind_ops(p.kind);
	fsi_req_pid = ctx ? ctx->pid : 0;
	int r = ops->rename ? ops->rename(fs, &p, name, &np, newname, flags) : fsi_rename_elsewhere(&p, &np);
	fsi_req_pid = 0;
	return r;
}

int lfs_fs_setattr(lfs_fs *fs, uint64_t ino, const struct stat *attr, int to_set,
		   const lfs_fs_ctx *ctx, struct stat *out, double *timeout)
{
	FSI_REQUEST(fs);
	(void)ctx;
	struct nodeinfo ni;
	int r;
	DISPATCH(r, ino, ni, fsi_kind_ops(ni.kind)->setattr ?
		 fsi_kind_ops(ni.kind)->setattr(fs, &ni, attr, to_set) : EPERM);
	if (r)
		return r;
	return lfs_fs_getattr(fs, ino, out, timeout);
}

int lfs_fs_write(lfs_fs *fs, uint64_t ino, const char *buf, size_t size, off_t off,
		 const lfs_fs_ctx *ctx, size_t *written)
{
	FSI_REQUEST(fs);
	*written = 0;
	if (off < 0)
		return EINVAL;
	struct nodeinfo ni;
	int r;
	DISPATCH(r, ino, ni, fsi_kind_ops(ni.kind)->write ?
		 fsi_kind_ops(ni.kind)->write(fs, &ni, buf, size, off, ctx, written) :
		 fsi_kind_ops(ni.kind)->not_file);
	return r;
}

int lfs_fs_flush(lfs_fs *fs, uint64_t ino, const lfs_fs_ctx *ctx)
{
	FSI_REQUEST(fs);
	struct nodeinfo ni;
	if (fsi_node_info(fs, ino, &ni) != 0)
		return 0; /* nothing to commit */
	const struct node_ops *ops = fsi_kind_ops(ni.kind);
	return ops->flush ? ops->flush(fs, &ni, ctx) : 0;
}

int lfs_fs_fsync(lfs_fs *fs, uint64_t ino, bool datasync)
{
	FSI_REQUEST(fs);
	struct nodeinfo ni;
	if (fsi_node_info(fs, ino, &ni) != 0)
		return ESTALE;
	const struct node_ops *ops = fsi_kind_ops(ni.kind);
	return ops->fsync ? ops->fsync(fs, &ni, datasync) : 0;
}

void lfs_fs_get_stats(lfs_fs *fs, lfs_fs_stats *s)
{
	pthread_mutex_lock(&fs->mu);
	s->nodes = fs->nnodes;
	s->cache_entries = fs->cache.n;
	s->cache_bytes = fs->cache.bytes;
	s->cache_hits = fs->cache.hits;
	s->cache_misses = fs->cache.misses;
	s->cache_evictions = fs->cache.evictions;
	s->builds = fs->builds;
	s->build_failures = fs->build_failures;
	s->watches = fs->nwatches;
	s->commits = fs->commits;
	s->commit_noops = fs->commit_noops;
	s->commit_refused = fs->commit_refused;
	s->edit_bytes = fs->edit_used;
	pthread_mutex_unlock(&fs->mu);
}
