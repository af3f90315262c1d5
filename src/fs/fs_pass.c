/**
 * @file fs_pass.c
 * Passthrough of SOURCE: the operations of the root, source folders, plain
 * source files, symlinks and other objects (fifos, sockets, devices), and
 * the source side of model folders (their attributes). Every call goes to
 * SOURCE through *at() calls on the root fd.
 *
 * POSIX behaviour of this part (docs/posix.md):
 *  - new objects get the caller's mode & ~umask (lfs_fs_ctx.umask);
 *  - a file, symlink or special file whose name our own unlink or rename
 *    takes away while the kernel still holds its node keeps working: an
 *    O_PATH fd of it is kept on the node (node->held_fd, closed at forget)
 *    and reads, writes, stat, chmod/chown/utimens, truncate and fsync of the
 *    node go through /proc/self/fd/N instead of the (gone) name;
 *  - hard links are separate nodes (one per name, as in libfuse's high-level
 *    API): a non-folder with more than one link is given attribute timeout 0
 *    so every stat sees the current link count and ctime; link() answers
 *    with the linked node itself, so the kernel refreshes the attributes it
 *    cached for it.
 */
#define _GNU_SOURCE
#include "fs_int.h"
#include "replace.h"
#include "source.h"


#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <errno.h>
#include <strings.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where to reach a passthrough node's source object: by path, or by its held fd. */
struct srcref {
	int fd;         /* node->held_fd, or -1: use rel */
	char *rel;      /* copy of node->rel (fd < 0) */
	char proc[40];  /* "/proc/self/fd/N" (fd >= 0) */
};

/* Fill @p r for node @p n (fs->mu taken here). 0 or ENOMEM. */
static int ref_get(lfs_fs *fs, const struct node *n, struct srcref *r)
{
	fs_lock(fs);
	r->fd = n->held_fd;
	r->rel = r->fd < 0 ? strdup(n->rel) : NULL;
	fs_unlock(fs);
	if (r->fd >= 0)
		snprintf(r->proc, sizeof(r->proc), "/proc/self/fd/%d", r->fd);
	return r->fd >= 0 || r->rel ? 0 : ENOMEM;
}

static void ref_put(struct srcref *r)
{
	free(r->rel);
	r->rel = NULL;
}

/* open(2) the object of @p r with @p flags (no O_CREAT); -1 and errno on failure. */
static int ref_open(lfs_fs *fs, const struct srcref *r, int flags)
{
	if (r->fd >= 0)
		return open(r->proc, flags | O_CLOEXEC); /* reopens even an unlinked file */
	return openat(fs->rootfd, r->rel, flags | O_NOFOLLOW | O_CLOEXEC);
}

/*
 * Before our own unlink/rename takes name @p rel away: an O_PATH fd of the
 * object (-1 when it cannot be opened). keep_held() then stores it on the
 * node the kernel holds for that name, or closes it.
 */
static int hold_open(lfs_fs *fs, const char *rel)
{
	return openat(fs->rootfd, rel, O_PATH | O_NOFOLLOW | O_CLOEXEC);
}

/* Give @p fd to node @p c (fs->mu held) when the kernel holds it and it shows that object. */
static void keep_held(struct node *c, int *fd)
{
	struct stat st;
	if (*fd < 0 || !c || c->nlookup == 0 || c->held_fd >= 0 ||
	    (c->kind != K_FILE && c->kind != K_LINK && c->kind != K_OTHER))
		return;
	if (fstat(*fd, &st) != 0 || (uint64_t)st.st_ino != c->src_ino || (uint64_t)st.st_dev != c->src_dev)
		return;
	c->held_fd = *fd;
	*fd = -1;
}

static void hold_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

/*
 * Link count of source folder @p rel (@p root: the mount root) whose SOURCE
 * count is @p src_nlink. Exact (SOURCE's, plus /.legacyfs at the root) when
 * no entry could be a model file; otherwise 1, "unknown" as on btrfs: model
 * files add folders SOURCE does not count, and a count that is too small
 * would make a walker's leaf optimisation (find) skip them. Costs one read
 * of the folder's names (no stat, no decoding, no access-time update).
 */
static nlink_t dir_nlink(lfs_fs *fs, const char *rel, bool root, nlink_t src_nlink)
{
	/* O_NOATIME: a stat must not change the folder's access time (EPERM when
	 * the daemon neither owns the folder nor is root: count unknown then). */
	int fd = openat(fs->rootfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOATIME);
	DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dp) {
		if (fd >= 0)
			close(fd);
		return 1;
	}
	nlink_t n = src_nlink;
	bool ctl_shadows = false;
	struct dirent *de;
	while ((de = readdir(dp)) != NULL) {
		if ((de->d_type == DT_REG || de->d_type == DT_UNKNOWN) && lfs_source_candidate(de->d_name)) {
			n = 1;
			break;
		}
		if (root && de->d_type == DT_DIR && fsi_is_ctl_name(K_ROOT, de->d_name))
			ctl_shadows = true; /* SOURCE's own .legacyfs is counted already */
	}
	closedir(dp);
	if (n > 1 && root && !ctl_shadows)
		n++;
	return n;
}

/*
 * The link count of folder node @p n (may be NULL: not known yet) whose
 * SOURCE stat is @p st, at @p rel: the one worked out last time while the
 * watcher saw no change in the folder and its mtime and ctime are the same
 * (our own changes drop it: nl_forget), else read now (unlocked) and kept.
 */
static nlink_t folder_nlink(lfs_fs *fs, struct node *n, const char *rel, bool root,
			    const struct stat *st)
{
	int64_t mt = fsi_ts_ns(&st->st_mtim), ct = fsi_ts_ns(&st->st_ctim);
	uint64_t gen = 0;
	nlink_t nl = 0;
	if (n) {
		fs_lock(fs);
		if (fs->ifd >= 0 && n->nl && n->nl_gen == n->dirty_gen && n->nl_mtime == mt &&
		    n->nl_ctime == ct && n->src_ino == (uint64_t)st->st_ino)
			nl = n->nl;
		gen = n->dirty_gen;
		fs_unlock(fs);
	}
	if (nl)
		return nl;
	nl = dir_nlink(fs, rel, root, st->st_nlink);
	if (n) {
		fs_lock(fs);
		n->nl = nl;
		n->nl_gen = gen;
		n->nl_mtime = mt;
		n->nl_ctime = ct;
		fs_unlock(fs);
	}
	return nl;
}

/* Our own change of folder @p d's names: its kept link count is stale (fs->mu held). */
static void nl_forget(struct node *d)
{
	d->nl = 0;
}

/*
 * Attributes of a model folder without its views (docs/mount.md "Listing is
 * cheap"): st_nlink 1 ("unknown", as btrfs and others report for folders;
 * counting its sub-folders would need the views) and the model file's write
 * bits when the model can be saved: the built views say (a model that does
 * not decode or is over -o model_memory cannot), before that its format
 * (fs->mu held: `built` changes under it).
 */
static void fill_model_dir(struct stat *a, const struct srcinfo *si)
{
	static const lfs_viewset none;
	fsi_fill_virtual_dir(a, &si->st, &none, "", si->st.st_ino);
	a->st_nlink = 1;
	const lfs_centry *ce = si->ce;
	bool w = ce && (ce->built ? ce->vs.writable
				  : si->names ? si->names->writable : ce->format && ce->format->apply);
	if (w)
		a->st_mode |= si->st.st_mode & 0222;
}

/*
 * Source-backed attributes (passthrough or model folder); @p nl: link count
 * of a folder. fs->mu held. (Also a model folder inside an archive:
 * fs_container.c.)
 */
void fsi_fill_source(struct stat *a, const struct srcinfo *si, nlink_t nl)
{
	if (si->kind == K_MODEL) {
		fill_model_dir(a, si);
		return;
	}
	*a = si->st;
	if (si->kind == K_DIR)
		a->st_nlink = nl;
}

static int lookup_source(lfs_fs *fs, const struct nodeinfo *pi, const char *name, lfs_fs_entry *e)
{
	struct node *p = pi->node;
	if (lfs_replace_is_temp_name(name, NULL, NULL))
		return ENOENT; /* a save's temporary file is never shown (replace.h) */
	char *rel = fsi_join_rel(p->rel, name);
	if (!rel)
		return ENAMETOOLONG;
	if (lfs_source_candidate(name))
		fsi_prefetch_due(fs, p);
	struct srcinfo si;
	int r = fsi_classify(fs, rel, &si);
	if (r == ENOENT)
		r = fsi_newmdl_lookup(fs, p, name, rel, e) == 0 ? -1 : ENOENT; /* a pending new model? */
	if (r) {
		free(rel);
		return r < 0 ? 0 : r;
	}
	nlink_t nl = 0;
	if (si.kind == K_DIR) {
		/* The node the name had (its kept count), looked for without holding the lock over I/O. */
		fs_lock(fs);
		struct node *old = fsi_find_child(fs, p, name);
		bool same = old && old->kind == K_DIR && old->src_ino == (uint64_t)si.st.st_ino &&
			    old->src_dev == (uint64_t)si.st.st_dev && old->nlookup > 0;
		if (same)
			node_hold(old); /* kept alive over the unlocked count */
		fs_unlock(fs);
		nl = folder_nlink(fs, same ? old : NULL, rel, false, &si.st);
		if (same)
			lfs_fs_forget(fs, old->id, 1);
	}
	/* A folder on another file system: can inotify follow it? (I/O: unlocked) */
	bool other_fs = si.kind == K_DIR && (uint64_t)si.st.st_dev != p->src_dev;
	bool remote = other_fs && fsi_dir_untrusted(fs, rel, (uint64_t)si.st.st_dev);
	fs_lock(fs);
	struct node *c = fsi_child_for(fs, p, name, si.kind, (uint64_t)si.st.st_dev,
				   (uint64_t)si.st.st_ino, rel, &r);
	if (c && other_fs)
		c->remote = remote;
	if (c) {
		node_hold(c);
		e->ino = c->id;
		e->generation = c->gen;
		fsi_fill_source(&e->attr, &si, nl);
		fsi_entry_timeouts(fs, c, e);
		/* Another name may change its link count and ctime at any time. */
		if (si.kind != K_DIR && si.kind != K_MODEL && si.st.st_nlink > 1)
			e->attr_timeout = 0;
	}
	if (si.ce)
		lfs_cache_release(&fs->cache, si.ce);
	fs_unlock(fs);
	free(rel);
	return r;
}

/* Is the node still what SOURCE shows under its name? */
static bool source_matches(const struct node *n, const struct srcinfo *si)
{
	if (n->kind == K_ROOT)
		return si->kind == K_DIR;
	if (n->kind == K_MODEL)
		return si->kind == K_MODEL; /* a replaced model file: same folder (fsi_model_views) */
	return si->kind == n->kind && (uint64_t)si->st.st_ino == n->src_ino &&
	       (uint64_t)si->st.st_dev == n->src_dev;
}

/* As root (allow_other), new source objects belong to the caller, unless
 * the mount shows a forced owner (lfs_fs_opts.keep_owner). */
static void give_owner(lfs_fs *fs, const char *rel, const lfs_fs_ctx *ctx)
{
	if (ctx && !fs->o.keep_owner && geteuid() == 0 && (ctx->uid != 0 || ctx->gid != 0))
		if (fchownat(fs->rootfd, rel, ctx->uid, ctx->gid, AT_SYMLINK_NOFOLLOW) != 0)
			fsi_log(fs, LFS_LOG_DEBUG, "chown %s: %s", rel, strerror(errno));
}

static int name_check(struct node *p, enum nkind pk, const char *name)
{
	if (!name[0] || fsi_is_dot(name) || strchr(name, '/'))
		return EINVAL;
	if (fsi_is_ctl_name(pk, name))
		return EEXIST;
	(void)p;
	return 0;
}

static int rename_source(lfs_fs *fs, const struct nodeinfo *pi, const char *name,
			 const struct nodeinfo *npi, const char *newname, unsigned flags)
{
	if (!fsi_kind_ops(npi->kind)->source_dir)
		return fsi_rename_elsewhere(pi, npi);
	struct node *p = pi->node, *np = npi->node;
	enum nkind pk = pi->kind, npk = npi->kind;
	if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return EINVAL;
	if (!name[0] || fsi_is_dot(name) || strchr(name, '/') || !newname[0] || fsi_is_dot(newname) ||
	    strchr(newname, '/'))
		return EINVAL;
	if (fsi_is_ctl_name(pk, name) || fsi_is_ctl_name(npk, newname))
		return EPERM;
	char *oldrel = fsi_join_rel(p->rel, name), *newrel = fsi_join_rel(np->rel, newname);
	int r = oldrel && newrel ? 0 : ENAMETOOLONG;
	struct srcinfo si;
	bool model = false; /* a model file: renamed with its model name (fs_newmodel.c) */
	if (!r) {
		r = fsi_classify(fs, oldrel, &si);
		if (!r) {
			model = si.kind == K_MODEL;
			if (model && (flags & RENAME_EXCHANGE))
				r = EPERM;
			fsi_srcinfo_release(fs, &si);
		}
	}
	if (!r && fsi_classify(fs, newrel, &si) == 0) {
		if (si.kind == K_MODEL || model)
			r = model ? EEXIST : EPERM; /* a model is never renamed over another name */
		fsi_srcinfo_release(fs, &si);
	}
	bool began = !r;
	if (began)
		fsi_rename_begin(fs); /* requests below the name wait for the nodes' new paths */
	/* The replaced object stays readable through the node the kernel may hold. */
	int held = !r && !(flags & (RENAME_EXCHANGE | RENAME_NOREPLACE)) ? hold_open(fs, newrel) : -1;
	if (!r && model)
		r = fsi_newmdl_rename_model(fs, oldrel, newrel, flags);
	else if (!r && renameat2(fs->rootfd, oldrel, fs->rootfd, newrel, flags) != 0)
		r = errno;
	if (!r) {
		fs_lock(fs);
		nl_forget(p);
		nl_forget(np);
		struct node *a = fsi_find_child(fs, p, name), *b = fsi_find_child(fs, np, newname);
		if (b && b != a)
			keep_held(b, &held);
		if (flags & RENAME_EXCHANGE) {
			if (a)
				fsi_nh_remove(fs, a);
			if (b)
				fsi_nh_remove(fs, b);
			if (a)
				fsi_node_move(fs, a, np, newname, NULL);
			if (b)
				fsi_node_move(fs, b, p, name, NULL);
		} else {
			if (b && b != a)
				fsi_nh_remove(fs, b);
			if (a)
				fsi_node_move(fs, a, np, newname, NULL);
			/* Editing state of models inside a renamed folder follows it. */
			size_t ol = strlen(oldrel);
			for (struct mstate *ms = fs->mstates; ms; ms = ms->next) {
				if (strncmp(ms->rel, oldrel, ol) != 0 || (ms->rel[ol] != '/' && ms->rel[ol]))
					continue;
				char *nr = ms->rel[ol] ? fsi_join_rel(newrel, ms->rel + ol + 1) : strdup(newrel);
				if (nr) {
					free(ms->rel);
					ms->rel = nr;
				}
			}
		}
		fs_unlock(fs);
	}
	if (began)
		fsi_rename_end(fs);
	hold_close(held);
	free(oldrel);
	free(newrel);
	return r;
}

static int pass_setattr(lfs_fs *fs, const struct nodeinfo *ni, const struct stat *a, int to_set)
{
	enum nkind k = ni->kind;
	struct srcref ref;
	int r = ref_get(fs, ni->node, &ref);
	if (r)
		return r;
	/* A held object by its fd (no name left), else by path without following. */
	int dfd = ref.fd >= 0 ? AT_FDCWD : fs->rootfd;
	const char *path = ref.fd >= 0 ? ref.proc : ref.rel;
	if ((to_set & LFS_SET_MODE) && k != K_LINK && fchmodat(dfd, path, a->st_mode & 07777, 0) != 0)
		r = errno;
	if (!r && (to_set & (LFS_SET_UID | LFS_SET_GID)) &&
	    fchownat(ref.fd >= 0 ? ref.fd : fs->rootfd, ref.fd >= 0 ? "" : ref.rel,
		     (to_set & LFS_SET_UID) ? a->st_uid : (uid_t)-1,
		     (to_set & LFS_SET_GID) ? a->st_gid : (gid_t)-1,
		     ref.fd >= 0 ? AT_EMPTY_PATH : AT_SYMLINK_NOFOLLOW) != 0)
		r = errno;
	if (!r && (to_set & LFS_SET_SIZE)) {
		if (fsi_kind_ops(k)->not_file) {
			r = fsi_kind_ops(k)->not_file;
		} else {
			int fd = ref_open(fs, &ref, O_WRONLY | O_NONBLOCK);
			if (fd < 0 || ftruncate(fd, a->st_size) != 0)
				r = errno;
			if (fd >= 0)
				close(fd);
		}
	}
	if (!r && (to_set & (LFS_SET_ATIME | LFS_SET_MTIME | LFS_SET_ATIME_NOW | LFS_SET_MTIME_NOW))) {
		struct timespec ts[2] = { { 0, UTIME_OMIT }, { 0, UTIME_OMIT } };
		if (to_set & LFS_SET_ATIME_NOW)
			ts[0].tv_nsec = UTIME_NOW;
		else if (to_set & LFS_SET_ATIME)
			ts[0] = a->st_atim;
		if (to_set & LFS_SET_MTIME_NOW)
			ts[1].tv_nsec = UTIME_NOW;
		else if (to_set & LFS_SET_MTIME)
			ts[1] = a->st_mtim;
		/* (A held symlink has no path to set its own times by: EPERM.) */
		if (ref.fd >= 0 && k == K_LINK)
			r = EPERM;
		else if (utimensat(dfd, path, ts, ref.fd >= 0 ? 0 : AT_SYMLINK_NOFOLLOW) != 0)
			r = errno;
	}
	ref_put(&ref);
	return r;
}


/* The root: its own names, and /.legacyfs in front of SOURCE's. */
static int lookup_root(lfs_fs *fs, const struct nodeinfo *p, const char *name, lfs_fs_entry *e)
{
	if (strcmp(name, LFS_FS_CTL_NAME) != 0)
		return lookup_source(fs, p, name, e);
	fs_lock(fs);
	struct node *c = fs->slots[CTL_ID];
	node_hold(c);
	e->ino = c->id;
	e->generation = c->gen;
	fsi_fill_ctl(fs, &e->attr, CTL_ID);
	fsi_entry_timeouts(fs, c, e);
	fs_unlock(fs);
	return 0;
}

/* Attributes of a source-backed node (passthrough or model folder); ESTALE when SOURCE moved on. */
int fsi_pass_getattr(lfs_fs *fs, const struct nodeinfo *ni, struct stat *st)
{
	fs_lock(fs);
	int held = ni->node->held_fd;
	fs_unlock(fs);
	if (held >= 0) /* its name is gone: the object itself (st_nlink may be 0) */
		return fstatat(held, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0 ? errno : 0;
	struct srcinfo si;
	int r = fsi_classify_node(fs, ni->node, &si);
	if (r)
		return r == ENOENT ? ESTALE : r;
	if (!source_matches(ni->node, &si)) {
		r = ESTALE;
		fsi_detach(fs, ni->node);
	} else {
		nlink_t nl = si.kind == K_DIR ? folder_nlink(fs, ni->node, ni->node->rel,
							     ni->kind == K_ROOT, &si.st) : 0;
		fs_lock(fs);
		fsi_fill_source(st, &si, nl);
		/* a model inside an archive: its own number, not the archive file's */
		if (ni->kind == K_MODEL && ni->node->parent && ni->node->parent->kind == K_MODEL)
			st->st_ino = ni->node->sino;
		fs_unlock(fs);
	}
	fsi_srcinfo_release(fs, &si);
	return r;
}

static int link_readlink(lfs_fs *fs, const struct nodeinfo *ni, char *buf, size_t bufsz)
{
	struct srcref ref;
	int r = ref_get(fs, ni->node, &ref);
	if (r)
		return r;
	ssize_t n = ref.fd >= 0 ? readlinkat(ref.fd, "", buf, bufsz - 1)
				: readlinkat(fs->rootfd, ref.rel, buf, bufsz - 1);
	ref_put(&ref);
	if (n < 0)
		return errno;
	buf[n] = '\0';
	return 0;
}

static int file_read(lfs_fs *fs, const struct nodeinfo *ni, size_t size, off_t off, lfs_fs_read *r)
{
	(void)size;
	(void)off;
	struct srcref ref;
	int e = ref_get(fs, ni->node, &ref);
	if (e)
		return e;
	/* a held fd (unlinked/replaced through the mount) or the node's current path */
	int fd = ref.fd >= 0 ? ref_open(fs, &ref, O_RDONLY | O_NOCTTY)
			     : fsi_openat_node(fs, ni->node, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (ref.fd >= 0 && fd < 0)
		fd = -errno;
	ref_put(&ref);
	if (fd < 0)
		return fd == -ENOENT ? ESTALE : -fd;
	r->fd = fd;
	return 0;
}

static int file_write(lfs_fs *fs, const struct nodeinfo *ni, const char *buf, size_t size,
		      off_t off, const lfs_fs_ctx *ctx, size_t *written)
{
	(void)ctx;
	struct srcref ref;
	int r = ref_get(fs, ni->node, &ref);
	if (r)
		return r;
	int fd = ref_open(fs, &ref, O_WRONLY | O_NONBLOCK);
	ref_put(&ref);
	if (fd < 0)
		return errno == ENOENT ? ESTALE : errno;
	size_t done = 0;
	while (done < size) {
		ssize_t w = pwrite(fd, buf + done, size - done, off + (off_t)done);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			r = errno;
			break;
		}
		if (w == 0)
			break;
		done += (size_t)w;
	}
	close(fd);
	*written = done;
	return done ? 0 : r;
}

static int file_fsync(lfs_fs *fs, const struct nodeinfo *ni, bool datasync)
{
	struct srcref ref;
	int r = ref_get(fs, ni->node, &ref);
	if (r)
		return r;
	int fd = ref_open(fs, &ref, O_RDONLY | O_NONBLOCK);
	ref_put(&ref);
	if (fd < 0)
		return errno;
	r = (datasync ? fdatasync(fd) : fsync(fd)) != 0 ? errno : 0;
	close(fd);
	return r;
}

/* create, mknod, mkdir, symlink in a source folder: made in SOURCE, then looked up. */
static int pass_mknew(lfs_fs *fs, const struct nodeinfo *p, const char *name,
		      const struct newobj *w, const lfs_fs_ctx *ctx, lfs_fs_entry *e)
{
	int r = name_check(p->node, p->kind, name);
	if (r)
		return r;
	char *rel = fsi_join_rel(p->node->rel, name);
	if (!rel)
		return ENAMETOOLONG;
	/* The caller's umask (the daemon's own is 0): `umask 002; touch f` gives 0664. */
	mode_t perm = w->mode & 07777 & ~(ctx ? ctx->umask : 0);
	int fd, ok;
	switch (w->what) {
	case NEW_FILE:
		fd = openat(fs->rootfd, rel, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
			    (w->flags & (O_EXCL | O_TRUNC)), perm);
		ok = fd >= 0;
		if (ok)
			close(fd);
		break;
	case NEW_NODE:
		ok = mknodat(fs->rootfd, rel, (w->mode & S_IFMT) | perm, w->rdev) == 0;
		break;
	case NEW_DIR:
		r = fsi_newmdl_mkdir(fs, p->node, name, rel, perm, e); /* `mkdir new.mdl`: a new model */
		if (r != ENOSYS) {
			free(rel);
			return r;
		}
		r = 0;
		ok = mkdirat(fs->rootfd, rel, perm) == 0;
		break;
	default:
		ok = symlinkat(w->target, fs->rootfd, rel) == 0;
		break;
	}
	if (!ok) {
		r = errno;
		free(rel);
		return r;
	}
	give_owner(fs, rel, ctx);
	free(rel);
	fs_lock(fs);
	nl_forget(p->node);
	fs_unlock(fs);
	return lfs_fs_lookup(fs, p->node->id, name, e);
}

/* A second name of a source object: in a source folder only. */
static int pass_link(lfs_fs *fs, const struct nodeinfo *ni, const struct nodeinfo *np,
		     const char *newname, lfs_fs_entry *e)
{
	if (!fsi_kind_ops(np->kind)->source_dir)
		return fsi_link_elsewhere(np);
	int r = name_check(np->node, np->kind, newname);
	if (r)
		return r;
	char *rel = fsi_join_rel(np->node->rel, newname);
	struct srcref ref;
	if (!rel)
		return ENAMETOOLONG;
	r = ref_get(fs, ni->node, &ref);
	if (!r && (ref.fd >= 0 ? linkat(AT_FDCWD, ref.proc, fs->rootfd, rel, AT_SYMLINK_FOLLOW)
			       : linkat(fs->rootfd, ref.rel, fs->rootfd, rel, 0)) != 0)
		r = errno;
	ref_put(&ref);
	struct stat st;
	if (!r && fstatat(fs->rootfd, rel, &st, AT_SYMLINK_NOFOLLOW) != 0)
		r = errno;
	free(rel);
	if (r)
		return r;
	/*
	 * The answer is the linked node itself, with its new link count and
	 * ctime: the kernel updates the inode it already holds (the attributes
	 * it cached for the old name would be stale otherwise) and gives both
	 * names that inode until the new name is looked up again, which makes a
	 * node of its own. Attribute timeout 0: st_nlink > 1.
	 */
	fs_lock(fs);
	nl_forget(np->node);
	struct node *c = ni->node;
	if ((uint64_t)st.st_ino != c->src_ino || (uint64_t)st.st_dev != c->src_dev) {
		fs_unlock(fs);
		return lfs_fs_lookup(fs, np->node->id, newname, e); /* changed under us: as it is now */
	}
	node_hold(c);
	e->ino = c->id;
	e->generation = c->gen;
	e->attr = st;
	fsi_entry_timeouts(fs, c, e);
	e->attr_timeout = 0;
	fs_unlock(fs);
	return 0;
}

/* unlink (@p dir false) or rmdir of a name in a source folder. */
static int pass_remove(lfs_fs *fs, const struct nodeinfo *p, const char *name, bool dir)
{
	if (!name[0] || fsi_is_dot(name) || strchr(name, '/'))
		return EINVAL;
	if (fsi_is_ctl_name(p->kind, name))
		return EPERM;
	char *rel = fsi_join_rel(p->node->rel, name);
	if (!rel)
		return ENAMETOOLONG;
	/* The kernel sees model files as folders; guard against a stale view of it anyway. */
	struct srcinfo si;
	int r = fsi_classify(fs, rel, &si);
	if (r == ENOENT && dir && fsi_newmdl_rmdir(fs, p->node, name, rel) == 0) {
		free(rel);
		return 0; /* a pending new model folder */
	}
	if (!r) {
		if (!dir && (si.kind == K_MODEL || si.kind == K_DIR))
			r = EISDIR;
		else if (dir && si.kind == K_MODEL)
			r = EPERM; /* a model folder: the model file stays (docs/editing.md) */
		else if (dir && si.kind != K_DIR)
			r = ENOTDIR;
		fsi_srcinfo_release(fs, &si);
	}
	/* An open file stays readable after its name is gone (node->held_fd). */
	int held = !r && !dir ? hold_open(fs, rel) : -1;
	if (!r && unlinkat(fs->rootfd, rel, dir ? AT_REMOVEDIR : 0) != 0)
		r = errno;
	free(rel);
	if (!r) {
		fs_lock(fs);
		nl_forget(p->node);
		struct node *c = fsi_find_child(fs, p->node, name);
		if (c) {
			keep_held(c, &held);
			fsi_nh_remove(fs, c);
		}
		fs_unlock(fs);
	}
	hold_close(held);
	return r;
}

static int pass_unlink(lfs_fs *fs, const struct nodeinfo *p, const char *name)
{
	return pass_remove(fs, p, name, false);
}

static int pass_rmdir(lfs_fs *fs, const struct nodeinfo *p, const char *name)
{
	return pass_remove(fs, p, name, true);
}

/* The operations of a source folder (the root adds /.legacyfs). */
#define SOURCE_DIR_OPS                                                                         \
	.is_dir = true, .source_dir = true, .not_file = EISDIR, .getattr = fsi_pass_getattr,       \
	.setattr = pass_setattr, .link = fsi_link_eperm, .snap = fsi_source_snap, .mknew = pass_mknew, \
	.unlink = pass_unlink, .rmdir = pass_rmdir, .rename = rename_source

const struct node_ops fsi_root_ops = { SOURCE_DIR_OPS, .lookup = lookup_root };

const struct node_ops fsi_dir_ops = { SOURCE_DIR_OPS, .source = true, .lookup = lookup_source };

const struct node_ops fsi_file_ops = {
	.source = true,
	.getattr = fsi_pass_getattr,
	.read = file_read,
	.write = file_write,
	.setattr = pass_setattr,
	.fsync = file_fsync,
	.link = pass_link,
};

const struct node_ops fsi_link_ops = {
	.source = true,
	.not_file = EINVAL,
	.getattr = fsi_pass_getattr,
	.readlink = link_readlink,
	.setattr = pass_setattr,
	.link = pass_link,
};

const struct node_ops fsi_other_ops = {
	.source = true,
	.not_file = EINVAL,
	.getattr = fsi_pass_getattr,
	.setattr = pass_setattr,
	.link = pass_link,
};
