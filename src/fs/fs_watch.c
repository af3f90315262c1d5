/**
 * @file fs_watch.c
 * The notification thread: follows SOURCE with inotify (one watch per
 * source folder node, opts.watch) and sends the kernel the invalidations
 * that SOURCE changes, commits, refused saves and expired deletions of
 * views call for (lfs_fs_notify callbacks, never under fs->mu). Requests
 * queue invalidations in fs->pending and fsi_kick() the thread.
 */
#define _GNU_SOURCE
#include "fs_int.h"

#include "registry/container.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../common/mem.h"
#include "supermodel.h"
#include "texture.h"

void fsi_wh_remove(lfs_fs *fs, struct node *n)
{
	if (n->wd < 0)
		return;
	struct node **pp = &fs->wh[(unsigned)n->wd % WATCH_BUCKETS];
	while (*pp && *pp != n)
		pp = &(*pp)->wnext;
	if (*pp)
		*pp = n->wnext;
	n->wnext = NULL;
}

static struct node *wh_find(lfs_fs *fs, int wd)
{
	for (struct node *n = fs->wh[(unsigned)wd % WATCH_BUCKETS]; n; n = n->wnext)
		if (n->wd == wd)
			return n;
	return NULL;
}

void fsi_add_watch(lfs_fs *fs, struct node *n)
{
	if (fs->ifd < 0)
		return;
	char path[PATH_MAX * 2];
	if (strcmp(n->rel, ".") == 0)
		snprintf(path, sizeof(path), "%s", fs->source);
	else if ((size_t)snprintf(path, sizeof(path), "%s/%s", fs->source, n->rel) >= sizeof(path))
		return;
	uint32_t mask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE |
			IN_ATTRIB | IN_MODIFY | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW |
			IN_ONLYDIR | IN_EXCL_UNLINK;
	int wd = inotify_add_watch(fs->ifd, path, mask);
	if (wd < 0) {
		int e = errno;
		/* Only ENOSPC means the per-user watch limit (inotify_add_watch(2));
		 * EACCES etc. are about this folder alone: said for each one. */
		if (e == ENOSPC && !fs->watch_warned) {
			fsi_log(fs, LFS_LOG_WARNING,
			       "cannot watch %s: the inotify watch limit is reached: changes in "
			       "this and further folders show only after the cache timeout; raise "
			       "fs.inotify.max_user_watches or use -o timeout=", path);
			fs->watch_warned = true;
		} else if (e != ENOSPC) {
			fsi_log(fs, LFS_LOG_INFO,
			       "cannot watch %s (%s): changes in it show only after the cache timeout",
			       path, strerror(e));
		}
		return;
	}
	/* The same folder inode may already be watched by another node: the newest wins. */
	struct node *old = wh_find(fs, wd);
	if (old) {
		fsi_wh_remove(fs, old);
		old->wd = -1;
	} else {
		fs->nwatches++;
	}
	n->wd = wd;
	n->wnext = fs->wh[(unsigned)wd % WATCH_BUCKETS];
	fs->wh[(unsigned)wd % WATCH_BUCKETS] = n;
}

/*
 * File systems by statfs(2) f_type (the magic numbers of the Linux kernel's
 * include/uapi/linux/magic.h and of each file system's own source), and
 * whether inotify sees every change of their files. inotify(7) ("Limitations
 * and caveats"): "Inotify reports only events that a user-space program
 * triggered through the filesystem API. As a result, it does not catch
 * remote events that occur on network filesystems." The same holds for any
 * FUSE file system (its daemon may change files behind the kernel: sshfs,
 * rclone, s3fs, virtiofs) and for 9p (WSL2's /mnt/c: Windows-side changes).
 * overlayfs is trusted: changes to its layers behind a mounted overlay are
 * undefined behaviour (the kernel's Documentation/filesystems/overlayfs.rst,
 * "Changes to underlying filesystems"), so every change goes through it.
 */
static const struct fstype {
	unsigned long magic;
	const char *name;
	bool remote;
} fstypes[] = {
	{ 0xEF53, "ext4", false },         { 0x58465342, "xfs", false },
	{ 0x9123683E, "btrfs", false },    { 0x01021994, "tmpfs", false },
	{ 0x794C7630, "overlay", false },  { 0xF2F52010, "f2fs", false },
	{ 0x2FC12FC1, "zfs", false },      { 0x4D44, "vfat", false },
	{ 0x2011BAB0, "exfat", false },    { 0x5346544E, "ntfs", false },
	{ 0x7366746E, "ntfs3", false },    { 0x858458F6, "ramfs", false },
	{ 0x6969, "nfs", true },           { 0x517B, "smb", true },
	{ 0xFF534D42, "cifs", true },      { 0xFE534D42, "smb2", true },
	{ 0x01021997, "9p", true },        { 0x65735546, "fuse", true },
	{ 0x00C36400, "ceph", true },      { 0x5346414F, "afs", true },
	{ 0x6B414653, "afs", true },       { 0x73757245, "coda", true },
	{ 0x7461636F, "ocfs2", true },     { 0x01161970, "gfs2", true },
	{ 0x0BD00BD0, "lustre", true },    { 0x786F4256, "vboxsf", true },
	{ 0x13661366, "orangefs", true },  { 0x47504653, "gpfs", true },
	{ 0x19830326, "fhgfs", true },     { 0xAAD7AAEA, "panfs", true },
};

/*
 * Does inotify miss changes of the file system of open fd @p fd (a network
 * or FUSE file system: fstatfs(2) f_type)? Its type name ("nfs", "fuse",
 * "ext4", or the hexadecimal magic) into @p name. false when unknown.
 */
bool fsi_fs_untrusted(int fd, char *name, size_t namesz)
{
	struct statfs sf;
	if (fstatfs(fd, &sf) != 0) {
		snprintf(name, namesz, "unknown");
		return false;
	}
	unsigned long t = (unsigned long)sf.f_type & 0xFFFFFFFFUL;
	for (size_t i = 0; i < sizeof(fstypes) / sizeof(fstypes[0]); i++)
		if (fstypes[i].magic == t) {
			snprintf(name, namesz, "%s", fstypes[i].name);
			return fstypes[i].remote;
		}
	snprintf(name, namesz, "0x%lx", t);
	return false;
}

/*
 * fsi_fs_untrusted() of SOURCE folder @p rel (on file system @p dev, another
 * than its parent's), said once per file system in the log (fs->mu not held).
 */
bool fsi_dir_untrusted(lfs_fs *fs, const char *rel, uint64_t dev)
{
	if (fs->o.watch_trusted)
		return false; /* -o watch: the user trusts inotify everywhere */
	int fd = openat(fs->rootfd, rel, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	char name[16];
	bool remote = fsi_fs_untrusted(fd, name, sizeof(name));
	close(fd);
	if (!remote)
		return false;
	fs_lock(fs);
	bool said = false;
	for (unsigned i = 0; i < fs->nremote_devs; i++)
		said |= fs->remote_devs[i] == dev;
	if (!said && fs->nremote_devs < sizeof(fs->remote_devs) / sizeof(fs->remote_devs[0]))
		fs->remote_devs[fs->nremote_devs++] = dev;
	fs_unlock(fs);
	if (!said)
		fsi_log(fs, LFS_LOG_WARNING,
			"%s/%s is on %s: inotify does not see changes made on another machine or "
			"system; below it names and attributes are checked again by stat after "
			"%g s (docs/mount.md \"Network file systems\")",
			fs->source, rel, name, fs->o.remote_timeout);
	return true;
}

/* Wake the notification thread (any thread, lock held or not). */
void fsi_kick(lfs_fs *fs)
{
	uint64_t one = 1;
	if (fs->kickfd >= 0 && write(fs->kickfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		fsi_log(fs, LFS_LOG_WARNING, "cannot wake the notification thread: %s", strerror(errno));
}

void fsi_inval_add(struct inval_list *l, uint64_t id, const char *name)
{
	if (!lfs_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
		return;
	char *nm = name ? strdup(name) : NULL;
	if (name && !nm)
		return;
	l->v[l->n].id = id;
	l->v[l->n].name = nm;
	l->n++;
}

static int inval_cmp(const void *a, const void *b)
{
	const struct inval *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (!x->name || !y->name)
		return x->name ? 1 : y->name ? -1 : 0;
	return strcmp(x->name, y->name);
}

/* Invalidate @p n and (for model folders) everything generated below it. */
void fsi_inval_subtree(struct inval_list *l, struct node *n)
{
	struct node *stack[64];
	size_t sp = 0;
	stack[sp++] = n;
	while (sp) {
		struct node *m = stack[--sp];
		fsi_inval_add(l, m->id, NULL);
		if (!node_ops_of(m)->model_ns)
			continue;
		for (struct node *c = m->first_child; c; c = c->next_sib) {
			if (sp < sizeof(stack) / sizeof(stack[0]))
				stack[sp++] = c;
			else
				fsi_inval_add(l, c->id, NULL);
		}
	}
}

/*
 * Name @p name in folder @p d is a BIF that changed: every KEY's folder is
 * built anew when next asked (registry/container.h lfs_container_aux_changed():
 * a KEY's cache key changes), and the kernel forgets the folders of the KEYs in @p d and
 * above (a KEY names its BIFs relative to its own folder: docs/archives.md),
 * as for a changed archive file (fs->mu held).
 */
/* Every drawn thumbnail to be drawn again, and the kernel's copy of each
 * thumbnail.png node dropped (fs->mu held). */
static void thumbs_stale(lfs_fs *fs, struct inval_list *l)
{
	if (!lfs_cache_thumbs_reset(&fs->cache))
		return;
	for (size_t i = 1; i < fs->nslots; i++) {
		struct node *n = fs->slots[i];
		if (n && n->kind == K_VFILE && !strcmp(node_name(n), LFS_VIEWSET_THUMB_NAME))
			fsi_inval_add(l, n->id, NULL);
	}
}

static void bif_changed(lfs_fs *fs, const struct node *d, const char *name, struct inval_list *l)
{
	if (!lfs_container_aux_changed(name)) /* not a BIF: nothing else is built from it */
		return;
	const char *drel = d->kind == K_ROOT ? "" : d->rel;
	for (size_t i = 1; i < fs->nslots; i++) {
		struct node *n = fs->slots[i];
		if (!n || n->kind != K_MODEL)
			continue;
		const char *rel = n->rel, *base = strrchr(rel, '/');
		size_t kd = base ? (size_t)(base - rel) : 0;
		const lfs_container *c = lfs_container_for_name(base ? base + 1 : rel);
		if (!c || !c->uses_aux || !c->uses_aux(base ? base + 1 : rel) ||
		    (kd && (strncmp(drel, rel, kd) != 0 || (drel[kd] && drel[kd] != '/'))))
			continue; /* not a KEY, or not in d or above */
		n->dirty_gen++;
		fsi_inval_subtree(l, n);
		if (n->parent)
			fsi_inval_add(l, n->parent->id, node_name(n));
	}
}

/*
 * A model file (.mdl), or an archive or BIF that may hold some, came, went
 * or was written: any model's supermodel
 * links may point elsewhere now (supermodel.h). Every model folder is
 * listed anew when next asked and the kernel forgets its copy of each
 * (fs->mu held).
 */
static void supermodels_stale(lfs_fs *fs, const struct inotify_event *ev, struct inval_list *l)
{
	size_t nl = strlen(ev->name);
	bool mdl = nl >= 4 && strcasecmp(ev->name + nl - 4, ".mdl") == 0;
	if (!(ev->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE)) ||
	    (ev->mask & IN_ISDIR) ||
	    !(mdl || lfs_texture_archive_name(ev->name) || lfs_container_aux_name(ev->name)))
		return;
	lfs_supermodel_changed();
	for (size_t i = 1; i < fs->nslots; i++) {
		struct node *n = fs->slots[i];
		if (n && n->kind == K_MODEL)
			fsi_inval_subtree(l, n);
	}
}

/* One inotify event (fs->mu held). */
static void watch_event(lfs_fs *fs, const struct inotify_event *ev, struct inval_list *l)
{
	if (ev->mask & IN_Q_OVERFLOW) {
		/* Lost events: forget every listing and drop every cached entry in the kernel. */
		lfs_texture_index_invalidate(fs->rootfd);
		for (size_t i = 1; i < fs->nslots; i++) {
			struct node *n = fs->slots[i];
			if (!n)
				continue;
			if (node_has_src(n))
				n->dirty_gen++;
			fsi_inval_add(l, n->id, NULL);
			if (n->hashed && n->parent && n->kind != K_CTLDIR && n->kind != K_CTLERR)
				fsi_inval_add(l, n->parent->id, node_name(n));
		}
		return;
	}
	struct node *d = wh_find(fs, ev->wd);
	if (!d)
		return;
	if (ev->mask & IN_IGNORED) {
		fsi_wh_remove(fs, d);
		d->wd = -1;
		fs->nwatches--;
		return;
	}
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
		lfs_texture_index_invalidate(fs->rootfd);
		d->dirty_gen++;
		fsi_inval_add(l, d->id, NULL);
		if (d->parent)
			fsi_inval_add(l, d->parent->id, node_name(d));
		return;
	}
	if (!ev->len || !ev->name[0])
		return;
	/* A texture or model name, or a folder that may hold some, came or
	 * went, or an archive was written: the SOURCE-wide index (texture.h) is
	 * rebuilt when next asked. */
	if (((ev->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)) &&
	     ((ev->mask & IN_ISDIR) || lfs_texture_index_name(ev->name))) ||
	    ((ev->mask & IN_CLOSE_WRITE) && lfs_texture_archive_name(ev->name)))
		lfs_texture_index_invalidate(fs->rootfd);
	d->dirty_gen++;
	fsi_inval_add(l, d->id, NULL); /* folder attributes and cached listing */
	if (fsi_is_ctl_name(d->kind, ev->name))
		return; /* shadowed */
	/* A texture (or an archive or a BIF holding some) written, made or
	 * gone: thumbnails drawn from it are drawn again (docs/thumbnails.md). */
	if (lfs_texture_name(ev->name) || lfs_texture_archive_name(ev->name) ||
	    lfs_container_aux_name(ev->name))
		thumbs_stale(fs, l);
	bif_changed(fs, d, ev->name, l);
	supermodels_stale(fs, ev, l);
	struct node *c = fsi_find_child(fs, d, ev->name);
	if (c && c->kind == K_MODEL && c->self_commit) {
		/* Our own commit replaced the model file and already updated the
		 * node: keep the kernel's entry (an editor may sit in the folder),
		 * refresh attributes and pages only. */
		if (ev->mask & IN_MOVED_TO)
			c->self_commit = false;
		fsi_inval_subtree(l, c);
		return;
	}
	if (c && c->kind == K_NEWDIR)
		return; /* our own compile of a pending model folder: its entry stays until it
			 * expires, so the rest of a `cp -r` lands there (fs_newmodel.c) */
	fsi_inval_add(l, d->id, ev->name);
	if (c)
		fsi_inval_subtree(l, c);
}

static void *watch_main(void *arg)
{
	lfs_fs *fs = arg;
	/* Aligned for struct inotify_event. */
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		fs_lock(fs);
		/* Deleted views come back after their grace time: poll for it. */
		int tmo = fs->nhidden ? 100 : fsi_scratch_ttl_wait(fs); /* and scratch *.mtl */
		fs_unlock(fs);
		/* fd -1 (no inotify) is ignored by poll. */
		struct pollfd pfd[3] = { { fs->ifd, POLLIN, 0 }, { fs->stopfd, POLLIN, 0 },
					 { fs->kickfd, POLLIN, 0 } };
		if (poll(pfd, 3, tmo) < 0) {
			if (errno == EINTR)
				continue;
			fsi_log(fs, LFS_LOG_ERR, "watcher: poll: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents)
			break;
		if (pfd[2].revents) {
			uint64_t v;
			if (read(fs->kickfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				fsi_log(fs, LFS_LOG_WARNING, "notification thread: %s", strerror(errno));
		}
		struct inval_list l = { 0 };
		fs_lock(fs);
		for (;;) {
			ssize_t n = fs->ifd >= 0 ? read(fs->ifd, buf, sizeof(buf)) : 0;
			if (n <= 0)
				break;
			for (char *p = buf; p < buf + n;) {
				const struct inotify_event *ev = (const struct inotify_event *)(void *)p;
				watch_event(fs, ev, &l);
				p += sizeof(*ev) + ev->len;
			}
		}
		fsi_hidden_expire(fs, &l);
		fsi_scratch_expire(fs, &l);
		/* What requests queued (commits, refused saves). */
		for (size_t i = 0; i < fs->pending.n; i++) {
			fsi_inval_add(&l, fs->pending.v[i].id, fs->pending.v[i].name);
			free(fs->pending.v[i].name);
		}
		fs->pending.n = 0;
		uint64_t batch = ++fs->inval_batch;
		bool stamp = fs->served_unstamped > 0;
		fs_unlock(fs);
		/* Coalesce: an editor's save produces many events for one name. */
		if (l.n > 1)
			qsort(l.v, l.n, sizeof(*l.v), inval_cmp);
		for (size_t i = 0; i < l.n; i++) {
			if (i && inval_cmp(&l.v[i - 1], &l.v[i]) == 0)
				continue;
			if (l.v[i].name)
				fs->notify.inval_entry(fs->notify.ctx, l.v[i].id, l.v[i].name);
		}
		for (size_t i = 0; i < l.n; i++) {
			if (i && inval_cmp(&l.v[i - 1], &l.v[i]) == 0)
				continue;
			if (!l.v[i].name)
				fs->notify.inval_inode(fs->notify.ctx, l.v[i].id);
		}
		for (size_t i = 0; i < l.n; i++)
			free(l.v[i].name);
		free(l.v);
		/* The pages of older versions are gone now (docs/editing.md
		 * "Concurrent saves": the page-cache order of pids). */
		if (stamp) {
			int32_t lp = fsi_last_pid();
			fs_lock(fs);
			fsi_served_stamp(fs, batch, lp);
			fs_unlock(fs);
		}
	}
	return NULL;
}

int lfs_fs_watch_start(lfs_fs *fs, const lfs_fs_notify *n)
{
	if (fs->thread_running)
		return 0;
	fs->notify = *n;
	/* Signals belong to the FUSE loop thread. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int r = pthread_create(&fs->thread, NULL, watch_main, fs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r)
		return r;
	fs->thread_running = true;
	return 0;
}

void lfs_fs_watch_stop(lfs_fs *fs)
{
	if (!fs->thread_running)
		return;
	uint64_t one = 1;
	if (write(fs->stopfd, &one, sizeof(one)) < 0)
		fsi_log(fs, LFS_LOG_ERR, "watcher: cannot signal stop: %s", strerror(errno));
	pthread_join(fs->thread, NULL);
	fs->thread_running = false;
}
