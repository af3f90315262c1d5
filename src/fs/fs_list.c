/**
 * @file fs_list.c
 * Listings of SOURCE folders (the root and its folders): the snapshot a
 * readdir walks (struct dirsnap), the candidates classified by header within
 * the listing budget (-o list_classify) and the others listed untyped, and
 * the header prefetch of those the first lookup starts (docs/performance.md
 * "Listing (lazy views)"). Split from fs_pass.c, which keeps the other
 * passthrough operations.
 */
#define _GNU_SOURCE
#include "fs_int.h"

#include "replace.h"
#include "source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void prefetch_start(lfs_fs *fs, const char *rel, const struct dirsnap *s);

/*
 * The first lookup of a candidate model name in source folder @p p since
 * its listing: start the header prefetch of the listing's unclassified
 * candidates (once per listing). fs->mu not held.
 */
void fsi_prefetch_due(lfs_fs *fs, struct node *p)
{
	fs_lock(fs);
	struct dirsnap *s = p->snap;
	bool due = s && s->prefetch;
	char *rel = NULL;
	if (due) {
		s->prefetch = false;
		s->refs++;
		rel = strdup(p->rel);
	}
	fs_unlock(fs);
	if (!due)
		return;
	if (rel)
		prefetch_start(fs, rel, s);
	free(rel);
	fs_lock(fs);
	fsi_snap_unref(s);
	fs_unlock(fs);
}

/* Ask the disk for the first page of file @p name of folder @p dfd
 * (POSIX_FADV_WILLNEED; only a hint: errors are ignored). */
static void hint_header(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return;
	/* not a regular file (d_type DT_UNKNOWN): ESPIPE or nothing, harmless */
	(void)posix_fadvise(fd, 0, LFS_SOURCE_HEADER_BYTES, POSIX_FADV_WILLNEED);
	close(fd);
}

/* A header prefetch of the not yet classified files of one listing (prefetch_main). */
struct prefetch_job {
	int dfd;       /* the folder, our own fd */
	size_t n;
	char **names;
};

/* Prefetch threads running now: at most PREFETCH_MAX, later listings go without. */
#define PREFETCH_MAX 2
static atomic_int prefetch_running;

/*
 * Start reading, all at once, the headers of the files of a job:
 * POSIX_FADV_WILLNEED queues their first pages, so the lookups that
 * classify them wait for the disk about once instead of once per file (a
 * cold folder of thousands of models: docs/performance.md "Listing (lazy
 * views)"). Runs on its own detached thread, holding nothing of the fs (its
 * own folder fd and names), so it never blocks a request nor the unmount.
 * Only a hint: errors are ignored.
 */
static void *prefetch_main(void *arg)
{
	struct prefetch_job *j = arg;
	for (size_t i = 0; i < j->n; i++) {
		hint_header(j->dfd, j->names[i]);
		free(j->names[i]);
	}
	close(j->dfd);
	free(j->names);
	free(j);
	atomic_fetch_sub(&prefetch_running, 1);
	return NULL;
}

/*
 * Start the header prefetch of the entries of listing @p s that are not
 * classified yet (d_type DT_UNKNOWN, candidates by name) in source folder
 * @p rel, on a background thread (prefetch_main). Called on the first
 * lookup that classifies one of them, so a listing nothing asks the types
 * of (a plain `ls`) reads no file at all. fs->mu not held; @p s held.
 */
static void prefetch_start(lfs_fs *fs, const char *rel, const struct dirsnap *s)
{
	if (atomic_fetch_add(&prefetch_running, 1) >= PREFETCH_MAX) {
		atomic_fetch_sub(&prefetch_running, 1);
		return;
	}
	struct prefetch_job *j = calloc(1, sizeof(*j));
	size_t cap = 0;
	for (size_t i = 0; j && i < s->n; i++) {
		if (s->ents[i].type != DT_UNKNOWN || !lfs_source_candidate(s->ents[i].name))
			continue;
		if (j->n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			char **nn = realloc(j->names, nc * sizeof(*nn));
			if (!nn)
				break;
			j->names = nn;
			cap = nc;
		}
		if (!(j->names[j->n] = strdup(s->ents[i].name)))
			break;
		j->n++;
	}
	if (j)
		j->dfd = j->n ? openat(fs->rootfd, *rel ? rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
			      : -1; /* nothing to read */
	size_t n = j ? j->n : 0; /* j belongs to the thread once it runs */
	pthread_attr_t at;
	pthread_t t;
	bool started = j && j->dfd >= 0 && pthread_attr_init(&at) == 0;
	if (started) {
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		started = pthread_create(&t, &at, prefetch_main, j) == 0;
		pthread_attr_destroy(&at);
	}
	if (started) {
		fsi_log(fs, LFS_LOG_DEBUG, "%s: header prefetch of %zu files started", rel, n);
		return;
	}
	if (j) {
		for (size_t i = 0; i < j->n; i++)
			free(j->names[i]);
		if (j->dfd >= 0)
			close(j->dfd);
		free(j->names);
		free(j);
	}
	atomic_fetch_sub(&prefetch_running, 1);
}

/*
 * Is candidate @p d of folder @p n one the mount has classified before: a
 * node of the same name and SOURCE inode (the kernel looked it up), so its
 * verdict is in the cache and classifying it again costs a stat, no header
 * read? fs->mu not held.
 */
static bool known_child(lfs_fs *fs, struct node *n, const struct dsent *d)
{
	fs_lock(fs);
	struct node *c = fsi_find_child(fs, n, d->name);
	bool known = c && (c->kind == K_MODEL || c->kind == K_FILE) && c->src_ino == d->ino;
	fs_unlock(fs);
	return known;
}

/*
 * How many of the candidates of listing @p s (entries from @p from, SOURCE
 * folder fd @p dfd of node @p n) the listing classifies itself: at most
 * @p max, counted in listing order (known_child() ones included). Their
 * first pages are asked of the disk all at once first (POSIX_FADV_WILLNEED),
 * so the classification that follows waits for the disk about once instead
 * of once per file; only a hint, errors are ignored. Small folders are thus
 * listed typed, as `find` and `ls --color` want, and a folder of thousands
 * costs at most @p max header reads (docs/mount.md "Listing is cheap").
 */
static unsigned classify_now(int dfd, const struct dirsnap *s, size_t from, unsigned max)
{
	unsigned k = 0;
	for (size_t i = from; i < s->n && k < max; i++) {
		const struct dsent *d = &s->ents[i];
		if ((d->type != DT_REG && d->type != DT_UNKNOWN) || !lfs_source_candidate(d->name))
			continue;
		k++;
		hint_header(dfd, d->name);
	}
	return k;
}

/*
 * Read source folder @p n into a new listing (unlocked). Nothing is read
 * per file beyond the first fs->o.list_classify candidates (docs/mount.md
 * "Listing is cheap"): a file no format claims by its name keeps SOURCE's
 * d_type; the first list_classify candidate model files are classified by
 * their header (classify_now); any further one is listed as
 * DT_UNKNOWN (and, in READDIRPLUS, without attributes: lfs_fs_readdir),
 * so the kernel looks it up, and the lookup classifies it by its header,
 * only when something asks for its type. Candidates the mount has looked
 * up before (known_child) and entries SOURCE gives no type for are
 * classified now as before (a cached verdict, or a stat). d_ino is SOURCE's
 * d_ino, which is the st_ino the later stat of the name reports.
 */
static int snap_build_source(lfs_fs *fs, struct node *n, uint64_t parent_ino, uint64_t gen,
			     struct dirsnap **out)
{
	*out = NULL;
	int fd = fsi_openat_node(fs, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fd == -ENOENT ? ESTALE : -fd;
	struct stat dst;
	if (fstat(fd, &dst) != 0) {
		int e = errno;
		close(fd);
		return e;
	}
	DIR *dp = fdopendir(fd);
	if (!dp) {
		int e = errno;
		close(fd);
		return e;
	}
	struct dirsnap *s = calloc(1, sizeof(*s));
	size_t cap = 0;
	int err = s ? 0 : ENOMEM;
	if (s) {
		s->refs = 1;
		s->gen = gen;
		s->dev = (uint64_t)dst.st_dev;
		s->ino = (uint64_t)dst.st_ino;
		s->mtime_ns = fsi_ts_ns(&dst.st_mtim);
		s->ctime_ns = fsi_ts_ns(&dst.st_ctim);
		s->made = fsi_now_mono();
		err = fsi_snap_add(s, &cap, ".", 1, n->sino, DT_DIR);
		if (!err)
			err = fsi_snap_add(s, &cap, "..", 2, parent_ino, DT_DIR);
		if (!err && n->kind == K_ROOT)
			err = fsi_snap_add(s, &cap, LFS_FS_CTL_NAME, strlen(LFS_FS_CTL_NAME), CTL_INO, DT_DIR);
	}
	size_t first_sorted = s ? s->n : 0;
	struct dirent *de;
	while (!err && (errno = 0, de = readdir(dp)) != NULL) {
		if (fsi_is_dot(de->d_name))
			continue;
		if (fsi_is_ctl_name(n->kind, de->d_name))
			continue; /* shadowed by the control folder */
		if (lfs_replace_is_temp_name(de->d_name, NULL, NULL))
			continue; /* a save's temporary file (replace.h) */
		err = fsi_snap_add(s, &cap, de->d_name, strlen(de->d_name), (uint64_t)de->d_ino, de->d_type);
	}
	if (!err && errno)
		err = errno;
	/* The first fs->o.list_classify candidates not known yet are classified
	 * now (their headers asked of the disk together first: classify_now),
	 * the rest are left to their lookup. */
	unsigned budget = fs->o.list_classify;
	if (!err && budget)
		budget = classify_now(dirfd(dp), s, first_sorted, budget);
	closedir(dp);
	for (size_t i = first_sorted; !err && i < s->n; i++) {
		struct dsent *d = &s->ents[i];
		if (d->type != DT_REG && d->type != DT_UNKNOWN)
			continue;
		if (lfs_source_candidate(d->name)) {
			if (budget) {
				budget--;
			} else if (!known_child(fs, n, d)) {
				d->type = DT_UNKNOWN; /* folder or file: the lookup tells */
				s->prefetch = true;
				continue;
			}
		} else if (d->type == DT_REG) {
			continue; /* a plain file by its name */
		}
		char *rel = fsi_join_rel(n->rel, d->name);
		if (!rel)
			continue;
		struct srcinfo si;
		if (fsi_classify(fs, rel, &si) == 0) {
			d->type = si.kind == K_MODEL ? DT_DIR : IFTODT(si.st.st_mode);
			d->ino = (uint64_t)si.st.st_ino;
			fsi_srcinfo_release(fs, &si);
		}
		free(rel);
	}
	if (err) {
		fsi_snap_unref(s);
		return err;
	}
	if (!err)
		err = fsi_newmdl_list(fs, n, s, &cap); /* pending new model folders (fs_newmodel.c) */
	if (err) {
		fsi_snap_unref(s);
		return err;
	}
	if (s->n - first_sorted > 1)
		qsort(s->ents + first_sorted, s->n - first_sorted, sizeof(*s->ents), fsi_dsent_cmp);
	*out = s;
	return 0;
}

/* Seconds since listing @p s was read. */
static double snap_age(const struct dirsnap *s)
{
	struct timespec now = fsi_now_mono();
	return (double)(now.tv_sec - s->made.tv_sec) + (double)(now.tv_nsec - s->made.tv_nsec) / 1e9;
}

/*
 * Attributes of remote source folder @p n were asked (the kernel's copy is
 * fs->o.remote_timeout old): a listing read longer ago than that is dropped,
 * and the kernel's cached listing of the folder with it (inval_inode, sent
 * by the notification thread). inotify misses far-side changes, and the
 * kernel drops a cached listing only when the folder's mtime changes, which
 * network file systems give in whole seconds (SFTP) or not at all for a file
 * rewritten in place. fs->mu not held.
 */
void fsi_snap_expire(lfs_fs *fs, struct node *n)
{
	fs_lock(fs);
	struct dirsnap *s = n->snap;
	bool drop = s && snap_age(s) >= fs->o.remote_timeout;
	if (drop) {
		n->snap = NULL;
		fsi_snap_unref(s);
		fsi_inval_add(&fs->pending, n->id, NULL);
	}
	fs_unlock(fs);
	if (drop)
		fsi_kick(fs);
}

/* The listing of a source folder: the cached one when still valid, else read anew. */
int fsi_source_snap(lfs_fs *fs, const struct nodeinfo *ni, off_t off, uint64_t parent_ino,
		       struct dirsnap **out)
{
	struct node *n = ni->node;
	fs_lock(fs);
	struct dirsnap *s = n->snap;
	uint64_t gen = n->dirty_gen;
	if (s)
		s->refs++;
	fs_unlock(fs);
	if (s && off == 0) {
		/* Restarting a listing: reuse the snapshot only when nothing changed.
		 * On a remote folder inotify misses far-side changes, and a file
		 * rewritten in place (a model <-> a plain file: the type listed) does
		 * not change the folder's times: only within fs->o.remote_timeout. */
		struct stat dst;
		bool valid = fs->ifd >= 0 && s->gen == gen &&
			     (!n->remote || snap_age(s) < fs->o.remote_timeout) &&
			     fstatat(fs->rootfd, n->rel, &dst, AT_SYMLINK_NOFOLLOW) == 0 &&
			     (uint64_t)dst.st_ino == s->ino && (uint64_t)dst.st_dev == s->dev &&
			     fsi_ts_ns(&dst.st_mtim) == s->mtime_ns && fsi_ts_ns(&dst.st_ctim) == s->ctime_ns;
		if (!valid) {
			fs_lock(fs);
			fsi_snap_unref(s);
			fs_unlock(fs);
			s = NULL;
		}
	}
	if (s) {
		*out = s;
		return 0;
	}
	int r = snap_build_source(fs, n, parent_ino, gen, &s);
	if (r)
		return r;
	fs_lock(fs);
	fsi_snap_unref(n->snap);
	n->snap = s;
	s->refs++;
	fs_unlock(fs);
	*out = s;
	return 0;
}

