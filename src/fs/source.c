/**
 * @file source.c
 * Source file classification and view building (see source.h).
 */
#include "source.h"
#include "texture.h"
#include "registry/container.h"
#include "replace.h"
#include "../common/mem.h"
#include "../common/strbuf.h"
#include "registry/vlist.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *lfs_source_basename(const char *rel)
{
	const char *s = strrchr(rel, '/');
	return s ? s + 1 : rel;
}

/* pread until @p n bytes or EOF; returns bytes read or -1 (errno set). */
static ssize_t read_full(int fd, uint8_t *buf, size_t n, off_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, buf + got, n - got, off + (off_t)got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static lfs_err io_fail(lfs_error *err, const char *rel, const char *what)
{
	int e = errno;
	lfs_fail(err, LFS_ERR_IO, SIZE_MAX, NULL, "%s: %s: %s", rel, what, strerror(e));
	if (err)
		err->sys_errno = e;
	errno = e;
	return LFS_ERR_IO;
}

/*
 * Open @p rel (under @p dirfd) as a candidate model file and fstat it into
 * @p st. *fd is the open file, or -1 with LFS_OK when it is no candidate: a
 * symlink, fifo or socket (stat'ed for the caller), not a regular file,
 * empty, or larger than @p max_size.
 */
static lfs_err open_candidate(int dirfd, const char *rel, size_t max_size, struct stat *st, int *fd,
			      lfs_error *err)
{
	*fd = openat(dirfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (*fd < 0) {
		if (fstatat(dirfd, rel, st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st->st_mode))
			return LFS_OK;
		return io_fail(err, rel, "open");
	}
	if (fstat(*fd, st) != 0) {
		lfs_err r = io_fail(err, rel, "fstat");
		close(*fd);
		*fd = -1;
		return r;
	}
	bool big_ok = lfs_container_for_name(lfs_source_basename(rel)) != NULL; /* read by its tables */
	if (!S_ISREG(st->st_mode) || st->st_size <= 0 ||
	    ((uint64_t)st->st_size > max_size && !big_ok)) {
		close(*fd);
		*fd = -1;
	}
	return LFS_OK;
}

/*
 * Is @p rel a member path "<archive>/<name>" whose archive is a regular
 * file of SOURCE (registry/container.h)? One fstatat of the archive's path.
 */
static bool is_member(int dirfd, const char *rel)
{
	char arch[PATH_MAX];
	const char *name;
	struct stat st;
	return lfs_container_member(rel, arch, sizeof(arch), &name, NULL) &&
	       fstatat(dirfd, arch, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* Files up to this size are detected in a per-thread buffer (lfs_source_detect()). */
#define DETECT_SMALL ((size_t)64 << 10)

/* Do two fstat()s of one file describe the same version (inode, size, mtime, ctime, in ns)? */
static bool same_version(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/*
 * Is open file @p fd, read as @p st says, still that version after the read:
 * nothing at offset st_size (a size cached by a network file system may be
 * older than the bytes: FUSE reads past it) and a second fstat() the same?
 * 0, EAGAIN when not, or errno.
 */
static int still_version(int fd, const struct stat *st)
{
	uint8_t probe;
	ssize_t more;
	do
		more = pread(fd, &probe, 1, st->st_size);
	while (more < 0 && errno == EINTR);
	if (more < 0)
		return errno;
	struct stat st2;
	if (fstat(fd, &st2) != 0)
		return errno;
	return more == 0 && same_version(st, &st2) ? 0 : EAGAIN;
}

/*
 * One header verdict of open regular file @p fd (base name @p name) of
 * version @p st: *fmt. 0; EAGAIN when the bytes read do not belong to @p st
 * (fewer than its size says, more past it, or another fstat()); ENOMEM; errno.
 */
static int detect_fd(int fd, const char *name, const struct stat *st, const lfs_format **fmt)
{
	*fmt = NULL;
	size_t n = (size_t)st->st_size;
	size_t head = n < LFS_SOURCE_HEADER_BYTES ? n : LFS_SOURCE_HEADER_BYTES;
	if (lfs_container_for_name(name))
		n = head; /* an archive's test reads its header alone, whatever its size */
	/* As lfs_source_load(): the header in a zero-filled buffer of the file's
	 * size, so a detector sees the real size and never reads out of bounds.
	 * Files up to DETECT_SMALL bytes (most models) use this thread's
	 * zero-filled buffer, zeroed again where the header went (no allocation
	 * and no clearing of a whole file per candidate); larger ones a calloc. */
	static _Thread_local uint8_t small[DETECT_SMALL];
	uint8_t *buf = n <= sizeof(small) ? small : calloc(n, 1);
	if (!buf)
		return ENOMEM;
	ssize_t got = read_full(fd, buf, head, 0);
	int e = got < 0 ? errno : (size_t)got != head ? EAGAIN : still_version(fd, st);
	if (e == 0)
		*fmt = lfs_source_format_for(name, buf, n);
	if (buf == small)
		memset(small, 0, head);
	else
		free(buf);
	return e;
}

lfs_err lfs_source_detect(int dirfd, const char *rel, size_t max_size, struct stat *st,
			  const lfs_format **fmt, lfs_error *err)
{
	*fmt = NULL;
	if (is_member(dirfd, rel)) {
		/* a model inside an archive: its payload (a member folder is asked
		 * for only when the archive's listing took it for a model) */
		uint8_t *d = NULL;
		size_t n = 0;
		int mr = lfs_container_member_read(dirfd, rel, max_size, &d, &n, st, NULL);
		if (mr == 0)
			*fmt = lfs_source_format_for(lfs_source_basename(rel), d, n);
		free(d);
		if (mr == 0 || mr == EFBIG)
			return LFS_OK;
		errno = mr;
		return io_fail(err, rel, "read from its archive");
	}
	int fd;
	lfs_err r0 = open_candidate(dirfd, rel, max_size, st, &fd, err);
	if (r0 != LFS_OK || fd < 0)
		return r0;
	const char *name = lfs_source_basename(rel);
	if (!lfs_source_candidate(name)) {
		close(fd);
		return LFS_OK;
	}
	lfs_err r = LFS_OK;
	for (int attempt = 0;; attempt++) {
		int e = detect_fd(fd, name, st, fmt);
		if (e == 0)
			break;
		if (e == ENOMEM) {
			r = lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, NULL, "%s: out of memory (%jd bytes)",
				     rel, (intmax_t)st->st_size);
			break;
		}
		/* EAGAIN: the size, times or bytes moved under us (a network file
		 * system's cached size, or a writer): again, from a fresh fstat */
		if (e != EAGAIN || attempt == 2 || fstat(fd, st) != 0) {
			errno = e;
			r = io_fail(err, rel, e == EAGAIN ? "file changed while reading its header" : "read");
			break;
		}
		if (!S_ISREG(st->st_mode) || st->st_size <= 0 ||
		    ((uint64_t)st->st_size > max_size && !lfs_container_for_name(name)))
			break; /* no candidate any more: plain */
	}
	close(fd);
	return r;
}

/*
 * The views of a file that looked like a model (format @p f by its header)
 * but does not decode: README.txt with the decoder's message, and the
 * original bytes, read-only, under the file's own name (docs/mount.md
 * "A file that looks like a model but does not decode").
 */
static lfs_err failed_views(const lfs_format *f, const char *name, const uint8_t *data, size_t n,
			    const char *msg, lfs_viewset *vs, lfs_error *err)
{
	lfs_sb sb = { 0 };
	lfs_sb_printf(&sb,
		      "%s: error: %s\n"
		      "%s looks like a %s model by its header but does not decode, so it has no\n"
		      "views. Its bytes are untouched: the file %s in this folder is the\n"
		      "original file, read-only. The message is also in /.legacyfs/errors.\n",
		      name, msg, name, f->name, name);
	lfs_sb orig = { 0 };
	lfs_sb_put(&orig, data, n);
	lfs_vlist l = { 0 };
	lfs_vlist_add(&l, LFS_VIEWSET_NOTICE_NAME, LFS_VIEW_NOTICE, LFS_VIEW_WHOLE, false, &sb);
	bool clash = strcmp(name, LFS_VIEWSET_NOTICE_NAME) == 0;
	if (!clash)
		lfs_vlist_add(&l, name, LFS_VIEW_NOTICE, LFS_VIEW_WHOLE, false, &orig);
	else
		lfs_sb_free(&orig);
	if (l.failed) {
		lfs_vlist_discard(&l);
		return lfs_nomem(err, "views");
	}
	lfs_vlist_finish(&l, vs);
	vs->format = f;
	return LFS_OK;
}

bool lfs_source_candidate(const char *name)
{
	return lfs_views_candidate(name) || lfs_container_for_name(name) != NULL;
}

const lfs_format *lfs_source_format_for(const char *name, const uint8_t *data, size_t n)
{
	const lfs_format *f = lfs_format_for(name, data, n);
	if (f)
		return f;
	const lfs_container *c = lfs_container_detect(name, data, n);
	return c ? c->row : NULL;
}

/*
 * The bytes of model file @p rel for lfs_source_load(): *buf (malloc'd,
 * zero-filled past what was read), *n, *f the format its header has (NULL:
 * plain, nothing to build). An archive is not read (its folder is built
 * from its tables); a model over the memory budget only to its header.
 */
static lfs_err load_file(int dirfd, const char *rel, size_t max_size, const lfs_view_opts *vopts,
			 struct stat *st, uint8_t **bufp, size_t *np, const lfs_format **fp,
			 lfs_error *err)
{
	*bufp = NULL;
	*np = 0;
	*fp = NULL;
	int fd;
	lfs_err r0 = open_candidate(dirfd, rel, max_size, st, &fd, err);
	if (r0 != LFS_OK || fd < 0)
		return r0;
	const char *name = lfs_source_basename(rel);
	size_t n = (size_t)st->st_size;
	size_t head = n < LFS_SOURCE_HEADER_BYTES ? n : LFS_SOURCE_HEADER_BYTES;
	bool arch_name = lfs_container_for_name(name) != NULL;
	uint8_t *buf = calloc(arch_name ? head : n, 1);
	if (!buf) {
		close(fd);
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, NULL, "%s: out of memory (%zu bytes)", rel, n);
	}
	ssize_t got = read_full(fd, buf, head, 0);
	if (got < 0) {
		lfs_err r = io_fail(err, rel, "read");
		free(buf);
		close(fd);
		return r;
	}
	const lfs_format *f = lfs_source_format_for(name, buf, arch_name ? head : n);
	if (f == NULL || lfs_container_of(f)) {
		close(fd);
		*bufp = buf;
		*np = (size_t)got;
		*fp = f;
		return LFS_OK;
	}
	size_t total = (size_t)got;
	bool fits = lfs_views_may_fit(n, vopts);
	if (!fits && total == head)
		total = n; /* over the memory budget: the build only names it (viewset.h) */
	else if (total == head && head < n) {
		got = read_full(fd, buf + head, n - head, (off_t)head);
		if (got >= 0)
			total += (size_t)got;
	}
	int saved = errno;
	/* The bytes read must be the version fstat() gave (the cache key): on a
	 * network file system a cached size may be older than the bytes. */
	if (got >= 0 && total == n && fits && still_version(fd, st) != 0)
		total = SIZE_MAX;
	close(fd);
	if (got < 0) {
		errno = saved;
		lfs_err r = io_fail(err, rel, "read");
		free(buf);
		return r;
	}
	if (total != n) {
		/* The file changed while we read it: classify nothing, the caller retries later. */
		free(buf);
		errno = EAGAIN;
		return io_fail(err, rel, "file changed while reading");
	}
	*bufp = buf;
	*np = n;
	*fp = f;
	return LFS_OK;
}

lfs_err lfs_source_load(int dirfd, const char *rel, const lfs_source_opts *o, struct stat *st,
			lfs_source_kind *kind, lfs_viewset *vs, lfs_error *err)
{
	size_t max_size = o ? o->max_size : SIZE_MAX;
	const lfs_view_opts *vopts = o ? o->views : NULL;
	unsigned flags = o ? o->flags : 0;
	lfs_sb *problems = o ? o->problems : NULL;
	*kind = LFS_SOURCE_PLAIN;
	memset(vs, 0, sizeof(*vs));
	const char *name = lfs_source_basename(rel);
	uint8_t *buf = NULL;
	size_t n = 0;
	const lfs_format *f = NULL;
	bool read_only = false;
	if (is_member(dirfd, rel)) {
		/* a model inside an archive: built from its payload alone */
		int mr = lfs_container_member_read(dirfd, rel, max_size, &buf, &n, st, &read_only);
		if (mr == EFBIG || (mr == 0 && !(f = lfs_source_format_for(name, buf, n)))) {
			free(buf);
			return LFS_OK;
		}
		if (mr) {
			errno = mr;
			return io_fail(err, rel, "read from its archive");
		}
	} else {
		/* a file that changed while read (EAGAIN) is read again, twice at most */
		lfs_err r0;
		for (int attempt = 0;; attempt++) {
			r0 = load_file(dirfd, rel, max_size, vopts, st, &buf, &n, &f, err);
			if (r0 != LFS_ERR_IO || !err || err->sys_errno != EAGAIN || attempt == 2)
				break;
		}
		if (r0 != LFS_OK || !f) {
			free(buf);
			return r0;
		}
	}
	const lfs_container *cont = lfs_container_of(f);
	bool archive = cont != NULL;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	lfs_err r = archive ? cont->list(dirfd, rel, max_size, st, vs, problems, &e)
			    : lfs_views_build(name, buf, n, vopts, vs, &e);
	if (r == LFS_OK && read_only) {
		vs->writable = false; /* a KEY's model: the game's own files are not edited */
		for (size_t i = 0; i < vs->n_views; i++)
			vs->views[i].writable = false;
	}
	if (r == LFS_OK) {
		free(buf);
		*kind = LFS_SOURCE_MODEL;
		return LFS_OK;
	}
	memset(vs, 0, sizeof(*vs));
	if (r == LFS_ERR_NOTFORMAT && !(flags & LFS_SOURCE_KEEP_FAILED)) {
		free(buf);
		return LFS_OK;
	}
	if (r == LFS_ERR_NOMEM) {
		free(buf);
		if (err)
			*err = e;
		return r;
	}
	if (!e.msg[0])
		lfs_fail(&e, r, SIZE_MAX, NULL, "%s", lfs_err_name(r));
	*kind = LFS_SOURCE_FAILED;
	if ((flags & LFS_SOURCE_KEEP_FAILED) && archive) {
		/* its original bytes, shown beside README.txt (within -o max_model_size) */
		struct stat ast;
		free(buf);
		buf = NULL;
		n = 0;
		if (lfs_read_source(dirfd, rel, max_size, &buf, &n, &ast) != 0) {
			buf = NULL;
			n = 0;
		}
	}
	if (flags & LFS_SOURCE_KEEP_FAILED) {
		lfs_error fe;
		memset(&fe, 0, sizeof(fe));
		lfs_err fr = failed_views(f, name, buf, n, e.msg, vs, &fe);
		if (fr != LFS_OK) {
			free(buf);
			if (err)
				*err = fe;
			return fr;
		}
	}
	free(buf);
	if (err)
		*err = e;
	return LFS_OK;
}

bool lfs_sibling_model_read(void *ctx, const char *name, uint8_t **data, size_t *n)
{
	const lfs_sibling_ctx *c = ctx;
	size_t len = strlen(name);
	if (!len || len > 255 || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (int pass = 0; pass < 2; pass++) {
		char nm[256], rel[PATH_MAX];
		for (size_t i = 0; i <= len; i++)
			nm[i] = pass && name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] + 32) : name[i];
		if (snprintf(rel, sizeof(rel), "%s%s%s.mdl", c->dir, *c->dir ? "/" : "", nm) >=
		    (int)sizeof(rel))
			return false;
		struct stat st;
		if (lfs_read_source(c->dirfd, rel, c->max, data, n, &st) == 0)
			return true;
	}
	/* not beside it: by ResRef through SOURCE's index (loose anywhere, then
	 * archives; texture.h) — in the mount, where dirfd is SOURCE's root */
	return c->dirfd != AT_FDCWD && lfs_texture_model_read(c->dirfd, c->dir, name, c->max, data, n);
}

lfs_err lfs_source_expand(int rootfd, const char *rel, const lfs_view_opts *opts, lfs_viewset *vs,
			  lfs_sb *problems, lfs_error *err)
{
	lfs_vlist l = { 0 };
	l.names_only = opts && opts->names_only;
	char mrel[PATH_MAX];
	for (size_t i = 0; i < vs->n_views && !l.failed; i++) {
		const lfs_view *v = &vs->views[i];
		if (snprintf(mrel, sizeof(mrel), "%s/%s", rel, v->path) >= (int)sizeof(mrel))
			continue;
		/* opts->only: the one view asked for, a member's views under its folder */
		lfs_view_opts mo = opts ? *opts : (lfs_view_opts){ 0 };
		if (opts && opts->only) {
			size_t pl = strlen(v->path);
			bool under = !strncmp(opts->only, v->path, pl) && opts->only[pl] == '/';
			if (v->kind == LFS_VIEW_MEMBER && !under)
				continue;
			if (v->kind != LFS_VIEW_MEMBER && strcmp(opts->only, v->path) != 0)
				continue;
			mo.only = under ? opts->only + pl + 1 : NULL;
		}
		uint8_t *d = NULL;
		size_t n = 0;
		struct stat st;
		bool ro = false;
		/* read even for names: a listing leaves out what the full tree leaves out */
		int mr = lfs_container_member_read(rootfd, mrel, SIZE_MAX, &d, &n, &st, &ro);
		if (mr) {
			if (problems)
				lfs_sb_printf(problems, "%s: cannot be read, left out: %s\n", v->path,
					      strerror(mr));
			continue;
		}
		lfs_viewset sub;
		lfs_error e;
		memset(&e, 0, sizeof(e));
		/* map_Kd as the mount writes it: textures found for "<archive>/<name>" */
		lfs_texture_ctx tc;
		lfs_texture_ctx_init(&tc, rootfd, mrel);
		if (mo.texture_lookup) {
			mo.texture_lookup = lfs_texture_lookup;
			mo.texture_ctx = &tc;
			mo.texture_read = mo.texture_read ? lfs_texture_read : NULL;
		}
		lfs_err r = v->kind == LFS_VIEW_MEMBER ? lfs_views_build(v->path, d, n, &mo, &sub, &e)
							: LFS_ERR_NOTFORMAT;
		lfs_texture_ctx_free(&tc);
		if (r == LFS_OK) {
			char path[PATH_MAX];
			for (size_t k = 0; k < sub.n_views && !l.failed; k++) {
				const lfs_view *sv = &sub.views[k];
				snprintf(path, sizeof(path), "%s/%s", v->path, sv->path);
				lfs_sb sb = { 0 };
				if (sv->size && sv->data)
					lfs_sb_put(&sb, sv->data, sv->size);
				lfs_vlist_add(&l, path, sv->kind, sv->target, sv->writable && !ro, &sb);
			}
			lfs_viewset_free(&sub);
		} else {
			if (v->kind == LFS_VIEW_MEMBER && r != LFS_ERR_NOTFORMAT && problems)
				lfs_sb_printf(problems, "%s: looks like a model but does not decode, "
					      "listed as a plain file: %s\n", v->path, e.msg);
			lfs_sb sb = { 0 };
			if (d && n && !l.names_only)
				lfs_sb_put(&sb, d, n);
			lfs_vlist_add(&l, v->path, LFS_VIEW_RESOURCE, LFS_VIEW_WHOLE, v->writable, &sb);
		}
		free(d);
	}
	if (l.failed) {
		lfs_vlist_discard(&l);
		return lfs_nomem(err, "archive folder");
	}
	bool writable = vs->writable;
	const lfs_format *f = vs->format;
	lfs_viewset_free(vs);
	lfs_vlist_finish(&l, vs);
	vs->format = f;
	vs->writable = writable;
	vs->names_only = opts && opts->names_only;
	return LFS_OK;
}
