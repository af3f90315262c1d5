/**
 * @file fs_edit.c
 * Editing state of model folders (docs/editing.md), per model file and view
 * path: overlays (the text of views being written), bases of edits (what
 * each process read of each view, the versions served, the texts kept for
 * three-way merges: docs/editing.md "Concurrent saves"), deleted views within their grace
 * time, messages of refused saves (errors.txt), and the scratch objects
 * (in-memory files and symlinks of editors' swap, backup and temp files)
 * with the operations of scratch nodes and of errors.txt. The bound of
 * in-memory edit data (opts.edit_bytes) is kept here.
 */
#define _GNU_SOURCE
#include "fs_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A scratch object (fs->mu held). */
static void fill_scratch(struct stat *a, const struct stat *src, const struct sobj *o)
{
	memset(a, 0, sizeof(*a));
	a->st_ino = o->sino;
	a->st_mode = o->mode;
	a->st_nlink = o->nlink ? o->nlink : 1;
	a->st_uid = o->uid;
	a->st_gid = o->gid;
	a->st_size = (off_t)o->data.len;
	a->st_blocks = (blkcnt_t)((o->data.len + 511) / 512);
	a->st_blksize = 4096;
	a->st_atim = o->atime;
	a->st_mtim = o->mtime;
	a->st_ctim = o->ctime;
	a->st_dev = src->st_dev;
}

struct mstate *fsi_ms_find(lfs_fs *fs, const char *rel)
{
	for (struct mstate *m = fs->mstates; m; m = m->next)
		if (strcmp(m->rel, rel) == 0)
			return m;
	return NULL;
}

struct mstate *fsi_ms_get(lfs_fs *fs, const char *rel)
{
	struct mstate *m = fsi_ms_find(fs, rel);
	if (m)
		return m;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->rel = strdup(rel);
	if (!m->rel) {
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->commit_mu, NULL);
	m->next = fs->mstates;
	fs->mstates = m;
	return m;
}

struct sname *fsi_sname_find(struct mstate *ms, const char *vpath)
{
	for (struct sname *s = ms ? ms->names : NULL; s; s = s->next)
		if (strcmp(s->vpath, vpath) == 0)
			return s;
	return NULL;
}

struct overlay *fsi_ovl_find(struct mstate *ms, const char *vpath)
{
	for (struct overlay *o = ms ? ms->ovl : NULL; o; o = o->next)
		if (strcmp(o->vpath, vpath) == 0)
			return o;
	return NULL;
}

void fsi_ovl_drop(lfs_fs *fs, struct mstate *ms, const char *vpath)
{
	for (struct overlay **pp = &ms->ovl; *pp; pp = &(*pp)->next) {
		struct overlay *o = *pp;
		if (strcmp(o->vpath, vpath) != 0)
			continue;
		*pp = o->next;
		fs->edit_used -= o->text.len;
		lfs_membuf_free(&o->text);
		free(o->vpath);
		free(o);
		return;
	}
}

/* Room for a buffer to go from @p oldlen to @p newlen bytes? */
static int edit_room(lfs_fs *fs, size_t oldlen, uint64_t newlen)
{
	if (newlen > oldlen && newlen - oldlen > fs->edit_max - fs->edit_used)
		return ENOSPC;
	return 0;
}

void fsi_edit_account(lfs_fs *fs, size_t oldlen, size_t newlen)
{
	fs->edit_used = fs->edit_used - oldlen + newlen;
}

bool fsi_pbase_take(struct mstate *ms, const char *vpath, uint64_t *hash)
{
	for (struct pbase **pp = &ms->pbase; *pp; pp = &(*pp)->next) {
		struct pbase *b = *pp;
		if (strcmp(b->vpath, vpath) != 0)
			continue;
		*hash = b->hash;
		*pp = b->next;
		free(b->vpath);
		free(b);
		return true;
	}
	return false;
}

void fsi_pbase_set(struct mstate *ms, const char *vpath, uint64_t hash)
{
	uint64_t old;
	fsi_pbase_take(ms, vpath, &old);
	struct pbase *b = calloc(1, sizeof(*b));
	if (!b || !(b->vpath = strdup(vpath))) {
		free(b);
		return;
	}
	b->hash = hash;
	b->next = ms->pbase;
	ms->pbase = b;
}

/*
 * Make the overlay of view @p vpath from its current text @p init. Base: the
 * base left by an overlay that moved away, else none; the first WRITE
 * chooses the base of the writing process (fsi_view_change). NULL when out
 * of memory / over the bound (*err set).
 */
struct overlay *fsi_ovl_new(lfs_fs *fs, struct mstate *ms, const char *vpath, const char *init,
			size_t n, int *err)
{
	*err = edit_room(fs, 0, n);
	if (*err)
		return NULL;
	struct overlay *o = calloc(1, sizeof(*o));
	if (!o || !(o->vpath = strdup(vpath)) || lfs_membuf_set(&o->text, init, n) != 0) {
		if (o)
			free(o->vpath);
		free(o);
		*err = ENOMEM;
		return NULL;
	}
	uint64_t h;
	if (fsi_pbase_take(ms, vpath, &h)) {
		o->base_valid = true;
		o->base_hash = o->base_gen = h;
	}
	o->mtime = fsi_now_real();
	fsi_edit_account(fs, 0, n);
	o->next = ms->ovl;
	ms->ovl = o;
	return o;
}

bool fsi_hidden_active(lfs_fs *fs, struct mstate *ms, const char *vpath)
{
	if (!ms)
		return false;
	struct timespec now = fsi_now_mono();
	for (struct hidden **pp = &ms->hidden; *pp; pp = &(*pp)->next) {
		struct hidden *h = *pp;
		if (strcmp(h->vpath, vpath) != 0)
			continue;
		if (fsi_ts_ns(&now) < fsi_ts_ns(&h->until))
			return true;
		*pp = h->next;
		free(h->vpath);
		free(h);
		fs->nhidden--;
		return false;
	}
	return false;
}

void fsi_hidden_clear(lfs_fs *fs, struct mstate *ms, const char *vpath)
{
	for (struct hidden **pp = &ms->hidden; *pp; pp = &(*pp)->next) {
		struct hidden *h = *pp;
		if (strcmp(h->vpath, vpath) != 0)
			continue;
		*pp = h->next;
		free(h->vpath);
		free(h);
		fs->nhidden--;
		return;
	}
}

int fsi_hidden_add(lfs_fs *fs, struct mstate *ms, const char *vpath, uint64_t dir_id)
{
	fsi_hidden_clear(fs, ms, vpath);
	struct hidden *h = calloc(1, sizeof(*h));
	if (!h || !(h->vpath = strdup(vpath))) {
		free(h);
		return ENOMEM;
	}
	struct timespec t = fsi_now_mono();
	int64_t until = fsi_ts_ns(&t) + (int64_t)(fs->o.unlink_grace * 1e9);
	h->until.tv_sec = until / 1000000000;
	h->until.tv_nsec = until % 1000000000;
	h->dir_id = dir_id;
	h->next = ms->hidden;
	ms->hidden = h;
	fs->nhidden++;
	return 0;
}

/* Views whose grace time ended: forget them and refresh their folders in the kernel. */
void fsi_hidden_expire(lfs_fs *fs, struct inval_list *l)
{
	struct timespec now = fsi_now_mono();
	for (struct mstate *ms = fs->mstates; ms; ms = ms->next)
		for (struct hidden **pp = &ms->hidden; *pp;) {
			struct hidden *h = *pp;
			if (fsi_ts_ns(&now) < fsi_ts_ns(&h->until)) {
				pp = &h->next;
				continue;
			}
			fsi_inval_add(l, h->dir_id, NULL);
			*pp = h->next;
			free(h->vpath);
			free(h);
			fs->nhidden--;
		}
}

/* Is scratch name @p s an exporter's material library (-o scratch_ttl)? */
static bool scratch_mtl(const struct sname *s)
{
	size_t n = strlen(s->vpath);
	return S_ISREG(s->obj->mode) && n > 4 && strcasecmp(s->vpath + n - 4, ".mtl") == 0;
}

/* Seconds since scratch object @p o last changed (content or name). */
static double scratch_age(const struct sobj *o, const struct timespec *now)
{
	int64_t t = fsi_ts_ns(&o->mtime) > fsi_ts_ns(&o->ctime) ? fsi_ts_ns(&o->mtime)
								   : fsi_ts_ns(&o->ctime);
	return (double)(fsi_ts_ns(now) - t) / 1e9;
}

int fsi_scratch_ttl_wait(lfs_fs *fs)
{
	if (!(fs->o.scratch_ttl > 0))
		return -1;
	for (struct mstate *ms = fs->mstates; ms; ms = ms->next)
		for (struct sname *s = ms->names; s; s = s->next)
			if (scratch_mtl(s))
				return 1000;
	return -1;
}

/* The kernel's entries of scratch name @p s of @p ms go (fs->mu held): its nodes
 * unhashed, their entries and the folder listings holding the name invalidated. */
static void scratch_forget(lfs_fs *fs, struct mstate *ms, const struct sname *s, struct inval_list *l)
{
	const char *slash = strrchr(s->vpath, '/');
	const char *base = slash ? slash + 1 : s->vpath;
	size_t dl = slash ? (size_t)(slash - s->vpath) : 0;
	for (size_t i = 1; i < fs->nslots; i++) {
		struct node *n = fs->slots[i];
		if (!n)
			continue;
		if (n->kind == K_SCRATCH && n->sobj == s->obj && n->parent) {
			fsi_inval_add(l, n->parent->id, node_name(n));
			fsi_nh_remove(fs, n);
			continue;
		}
		struct node *m = (n->kind == K_MODEL || n->kind == K_VDIR) ? model_of(n) : NULL;
		if (!m || strcmp(m->rel, ms->rel) != 0)
			continue;
		bool here = n->kind == K_MODEL ? dl == 0
					       : strlen(n->rel) == dl && strncmp(n->rel, s->vpath, dl) == 0;
		if (here) {
			fsi_inval_add(l, n->id, NULL);
			fsi_inval_add(l, n->id, base);
		}
	}
}

void fsi_scratch_expire(lfs_fs *fs, struct inval_list *l)
{
	if (!(fs->o.scratch_ttl > 0))
		return;
	struct timespec now = fsi_now_real();
	for (struct mstate *ms = fs->mstates; ms; ms = ms->next)
		for (struct sname *s = ms->names, *next; s; s = next) {
			next = s->next;
			if (!scratch_mtl(s) || scratch_age(s->obj, &now) < fs->o.scratch_ttl)
				continue;
			fsi_log(fs, LFS_LOG_INFO, "%s/%s: scratch file unchanged for %g s: dropped "
				"(-o scratch_ttl)", ms->rel, s->vpath, fs->o.scratch_ttl);
			scratch_forget(fs, ms, s, l);
			fsi_sname_remove(fs, ms, s);
		}
}

void fsi_merr_clear(struct mstate *ms, const char *vpath)
{
	for (struct merr **pp = &ms->errs; *pp; pp = &(*pp)->next) {
		struct merr *e = *pp;
		if (strcmp(e->vpath, vpath) != 0)
			continue;
		*pp = e->next;
		free(e->vpath);
		free(e->text);
		free(e);
		return;
	}
}

void fsi_merr_clear_all(struct mstate *ms)
{
	while (ms->errs) {
		struct merr *e = ms->errs;
		ms->errs = e->next;
		free(e->vpath);
		free(e->text);
		free(e);
	}
}

void fsi_merr_set(struct mstate *ms, const char *vpath, const char *text)
{
	fsi_merr_clear(ms, vpath);
	struct merr *e = calloc(1, sizeof(*e));
	if (!e || !(e->vpath = strdup(vpath)) || !(e->text = strdup(text))) {
		if (e)
			free(e->vpath);
		free(e);
		return;
	}
	e->when = fsi_now_real();
	/* Append: messages in the order they happened. */
	struct merr **pp = &ms->errs;
	while (*pp)
		pp = &(*pp)->next;
	*pp = e;
}

/* errors.txt: the messages, concatenated. */
static size_t merr_render(const struct mstate *ms, char **out, struct timespec *mtime)
{
	size_t n = 0;
	struct timespec t = { 0, 0 };
	for (const struct merr *e = ms ? ms->errs : NULL; e; e = e->next) {
		n += strlen(e->text);
		if (fsi_ts_ns(&e->when) > fsi_ts_ns(&t))
			t = e->when;
	}
	if (mtime)
		*mtime = t;
	if (!out)
		return n;
	*out = malloc(n ? n : 1);
	if (!*out)
		return 0;
	size_t k = 0;
	for (const struct merr *e = ms->errs; e; e = e->next) {
		size_t l = strlen(e->text);
		memcpy(*out + k, e->text, l);
		k += l;
	}
	return n;
}

void fsi_sobj_unref(lfs_fs *fs, struct sobj *o)
{
	if (!o || --o->refs > 0)
		return;
	fs->edit_used -= o->data.len;
	lfs_membuf_free(&o->data);
	free(o);
}

static struct sobj *sobj_new(lfs_fs *fs, mode_t mode, uid_t uid, gid_t gid)
{
	struct sobj *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->mode = mode;
	o->uid = uid;
	o->gid = gid;
	o->atime = o->mtime = o->ctime = fsi_now_real();
	o->sino = VINO_BIT | (1ULL << 62) | ++fs->next_sino;
	return o;
}

/* Give @p o the name @p vpath (a new name: the caller checked). */
struct sname *fsi_sname_add(struct mstate *ms, const char *vpath, struct sobj *o)
{
	struct sname *s = calloc(1, sizeof(*s));
	if (!s || !(s->vpath = strdup(vpath))) {
		free(s);
		return NULL;
	}
	s->obj = o;
	o->refs++;
	o->nlink++;
	o->ctime = fsi_now_real();
	s->next = ms->names;
	ms->names = s;
	return s;
}

void fsi_sname_remove(lfs_fs *fs, struct mstate *ms, struct sname *s)
{
	for (struct sname **pp = &ms->names; *pp; pp = &(*pp)->next) {
		if (*pp != s)
			continue;
		*pp = s->next;
		s->obj->nlink--;
		s->obj->ctime = fsi_now_real();
		fsi_sobj_unref(fs, s->obj);
		free(s->vpath);
		free(s);
		return;
	}
}

/* Replace (or make) scratch file @p vpath with @p n bytes (the ".rejected" copy). */
void fsi_scratch_put(lfs_fs *fs, struct mstate *ms, const char *vpath, const char *data, size_t n,
		 mode_t perm, uid_t uid, gid_t gid)
{
	struct sname *s = fsi_sname_find(ms, vpath);
	struct sobj *o = s && S_ISREG(s->obj->mode) ? s->obj : NULL;
	if (!o) {
		if (s)
			return; /* a symlink of that name: leave it */
		o = sobj_new(fs, S_IFREG | perm, uid, gid);
		if (!o)
			return;
		if (!fsi_sname_add(ms, vpath, o)) {
			free(o);
			return;
		}
	}
	if (edit_room(fs, o->data.len, n) != 0)
		return;
	size_t old = o->data.len;
	if (lfs_membuf_set(&o->data, data, n) == 0) {
		fsi_edit_account(fs, old, n);
		o->mtime = o->ctime = fsi_now_real();
	}
}

void fsi_ms_free(lfs_fs *fs, struct mstate *ms)
{
	while (ms->names)
		fsi_sname_remove(fs, ms, ms->names);
	while (ms->ovl)
		fsi_ovl_drop(fs, ms, ms->ovl->vpath);
	while (ms->hidden)
		fsi_hidden_clear(fs, ms, ms->hidden->vpath);
	uint64_t h;
	while (ms->pbase)
		fsi_pbase_take(ms, ms->pbase->vpath, &h);
	fsi_merr_clear_all(ms);
	pthread_mutex_destroy(&ms->commit_mu);
	free(ms->rel);
	free(ms);
}

/* Parent folder path of view path @p vpath ("" = the model folder), into @p buf. */
void fsi_vdir_of(const char *vpath, char *buf, size_t bufsz)
{
	const char *sl = strrchr(vpath, '/');
	size_t l = sl ? (size_t)(sl - vpath) : 0;
	if (l >= bufsz)
		l = bufsz - 1;
	memcpy(buf, vpath, l);
	buf[l] = '\0';
}

bool fsi_pbase_peek(struct mstate *ms, const char *vpath, uint64_t *hash)
{
	for (struct pbase *b = ms->pbase; b; b = b->next)
		if (strcmp(b->vpath, vpath) == 0) {
			*hash = b->hash;
			return true;
		}
	return false;
}

/*
 * Write @p size bytes of @p buf at @p off into edit buffer @p b, or (buf
 * NULL) truncate it to @p newsize, within the bound of edit memory (fs->mu
 * held). 0, ENOSPC (bound reached) or ENOMEM.
 */
static int edit_buf_change(lfs_fs *fs, lfs_membuf *b, const char *buf, size_t size, uint64_t off,
			   uint64_t newsize)
{
	size_t old = b->len;
	int r;
	if (buf) {
		uint64_t end = off + size;
		r = edit_room(fs, old, end > old ? end : old);
		if (!r)
			r = lfs_membuf_write(b, buf, size, off, fs->edit_max);
	} else {
		r = edit_room(fs, old, newsize);
		if (!r)
			r = lfs_membuf_truncate(b, newsize, fs->edit_max);
	}
	if (r == EFBIG)
		r = ENOSPC;
	if (!r)
		fsi_edit_account(fs, old, b->len);
	return r;
}

/* Make/extend the overlay of view node @p nd: a write, or a truncation (buf == NULL). */
int fsi_view_change(lfs_fs *fs, const struct nodeinfo *ni, const char *buf, size_t size, uint64_t off,
		uint64_t newsize, pid_t writer)
{
	struct node *nd = ni->node;
	struct srcinfo si;
	int r = fsi_model_views(fs, ni->model, &si);
	if (r)
		return r;
	const lfs_view *v = lfs_viewset_find(&si.ce->vs, nd->rel);
	if (!v) {
		fsi_srcinfo_release(fs, &si);
		return ESTALE;
	}
	if (!v || !v->writable) {
		fsi_srcinfo_release(fs, &si);
		return EROFS;
	}
	if ((r = fsi_view_bytes(fs, &si, nd->rel, &v)) != 0)
		return r; /* an archive's resource: the overlay starts from its bytes */
	fs_lock(fs);
	struct mstate *ms = fsi_ms_get(fs, ni->model->rel);
	struct overlay *o = ms ? fsi_ovl_find(ms, nd->rel) : NULL;
	if (!ms)
		r = ENOMEM;
	else if (!o)
		o = fsi_ovl_new(fs, ms, nd->rel, v->data, v->size, &r);
	if (o && !buf && newsize == 0)
		o->cut = 0; /* an emptied text starts again */
	if (o && (buf ? off + size : newsize) > fs->save_max) {
		/* Past the largest text a save takes: refused here, and the
		 * text (lacking this part) is refused at its commit. */
		r = EFBIG;
		o->cut = EFBIG;
		o->written = o->modified = true;
		o->gen++;
		if (buf)
			o->writer = writer;
	} else if (o) {
		r = edit_buf_change(fs, &o->text, buf, size, off, newsize);
		if (!r) {
			o->gen++;
			o->mtime = fsi_now_real();
			o->modified = true;
			if (buf) {
				o->written = true;
				o->writer = writer;
			}
			if (buf && !o->base_by_writer) {
				/* The first WRITE: the base of this process's save
				 * (fsi_save_base; the overlay's own base is the one
				 * an editor that moved the view away left). */
				struct fsi_base moved = { o->base_valid, o->base_hash, o->base_gen };
				struct fsi_save_q q = { .rel = ms->rel, .vpath = nd->rel, .saver = writer,
							.moved = &moved };
				struct fsi_base b;
				o->base_by_writer = true;
				if (fsi_save_base(fs, ms, &q, &b) != FSI_BASE_NONE) {
					o->base_valid = true;
					o->base_hash = b.hash;
					o->base_gen = b.gen;
				}
			}
		} else if (r == ENOSPC && buf) {
			/* The edit memory is full: the text lacks this write, and
			 * its commit is refused rather than saving it cut. */
			if (!o->cut)
				o->cut = ENOSPC;
			o->written = o->modified = true;
			o->gen++;
			o->writer = writer;
		}
	}
	fs_unlock(fs);
	fsi_srcinfo_release(fs, &si);
	return r;
}



/*
 * A new scratch object, not named yet, holding @p n bytes of @p data (fs->mu
 * held). NULL with *err = ENOSPC (edit bound) or ENOMEM. Free an unnamed
 * object with fsi_sobj_discard().
 */
struct sobj *fsi_sobj_with(lfs_fs *fs, mode_t mode, uid_t uid, gid_t gid, const char *data, size_t n,
		       int *err)
{
	struct sobj *o = sobj_new(fs, mode, uid, gid);
	*err = o ? edit_room(fs, 0, n) : ENOMEM;
	if (!*err && n && lfs_membuf_set(&o->data, data, n) != 0)
		*err = ENOMEM;
	if (*err) {
		if (o)
			lfs_membuf_free(&o->data);
		free(o);
		return NULL;
	}
	fsi_edit_account(fs, 0, n);
	return o;
}

/* Free scratch object @p o that never got a name (fs->mu held). */
void fsi_sobj_discard(lfs_fs *fs, struct sobj *o)
{
	fsi_edit_account(fs, o->data.len, 0);
	lfs_membuf_free(&o->data);
	free(o);
}

/* ---- scratch nodes ---- */

static int scratch_attr(lfs_fs *fs, struct node *c, const struct srcinfo *si, struct mstate *ms,
			struct stat *a)
{
	(void)fs;
	(void)ms;
	if (!c->sobj)
		return FSI_KIND_CHANGED;
	fill_scratch(a, &si->st, c->sobj);
	return 0;
}

static int scratch_readlink(lfs_fs *fs, const struct nodeinfo *ni, char *buf, size_t bufsz)
{
	int r = 0;
	fs_lock(fs);
	const struct sobj *o = ni->node->sobj;
	if (!o) {
		fs_unlock(fs);
		return FSI_KIND_CHANGED;
	}
	if (S_ISLNK(o->mode) && o->data.len < bufsz) {
		memcpy(buf, o->data.data, o->data.len);
		buf[o->data.len] = '\0';
	} else {
		r = S_ISLNK(o->mode) ? ENAMETOOLONG : EINVAL;
	}
	fs_unlock(fs);
	return r;
}

static int scratch_read(lfs_fs *fs, const struct nodeinfo *ni, size_t size, off_t off, lfs_fs_read *r)
{
	fs_lock(fs);
	const struct sobj *o = ni->node->sobj;
	if (!o) {
		fs_unlock(fs);
		return FSI_KIND_CHANGED;
	}
	int err = S_ISLNK(o->mode) ? EINVAL : fsi_read_copy(r, o->data.data, o->data.len, size, off);
	fs_unlock(fs);
	return err;
}

static int scratch_write(lfs_fs *fs, const struct nodeinfo *ni, const char *buf, size_t size,
			 off_t off, const lfs_fs_ctx *ctx, size_t *written)
{
	(void)ctx;
	fs_lock(fs);
	struct sobj *o = ni->node->sobj;
	if (!o) {
		fs_unlock(fs);
		return FSI_KIND_CHANGED;
	}
	int r = EINVAL;
	if (!S_ISLNK(o->mode)) {
		r = edit_buf_change(fs, &o->data, buf, size, (uint64_t)off, 0);
		if (!r) {
			o->mtime = o->ctime = fsi_now_real();
			*written = size;
		}
	}
	fs_unlock(fs);
	return r;
}

static int scratch_setattr(lfs_fs *fs, const struct nodeinfo *ni, const struct stat *attr, int to_set)
{
	int r = 0;
	fs_lock(fs);
	struct sobj *o = ni->node->sobj;
	if (!o) {
		fs_unlock(fs);
		return FSI_KIND_CHANGED;
	}
	struct timespec now = fsi_now_real();
	if ((to_set & LFS_SET_SIZE) && S_ISLNK(o->mode)) {
		r = EINVAL;
	} else if (to_set & LFS_SET_SIZE) {
		r = attr->st_size < 0 ? EINVAL :
		    edit_buf_change(fs, &o->data, NULL, 0, 0, (uint64_t)attr->st_size);
		if (!r)
			o->mtime = now;
	}
	if (!r) {
		if ((to_set & LFS_SET_MODE) && !S_ISLNK(o->mode))
			o->mode = (o->mode & S_IFMT) | (attr->st_mode & 07777);
		if (to_set & LFS_SET_UID)
			o->uid = attr->st_uid;
		if (to_set & LFS_SET_GID)
			o->gid = attr->st_gid;
		if (to_set & LFS_SET_ATIME_NOW)
			o->atime = now;
		else if (to_set & LFS_SET_ATIME)
			o->atime = attr->st_atim;
		if (to_set & LFS_SET_MTIME_NOW)
			o->mtime = now;
		else if (to_set & LFS_SET_MTIME)
			o->mtime = attr->st_mtim;
		o->ctime = now;
	}
	fs_unlock(fs);
	return r;
}

const struct node_ops fsi_scratch_ops = {
	.in_model = true,
	.getattr = fsi_gen_getattr,
	.gen_attr = scratch_attr,
	.readlink = scratch_readlink,
	.read = scratch_read,
	.write = scratch_write,
	.setattr = scratch_setattr,
	.flush = fsi_scratch_flush,
	.link = fsi_model_link_op,
};

/* ---- <model>/errors.txt ---- */

static int merr_attr(lfs_fs *fs, struct node *c, const struct srcinfo *si, struct mstate *ms,
		     struct stat *a)
{
	(void)fs;
	struct timespec t;
	size_t n = merr_render(ms, NULL, &t);
	fsi_fill_view_file(a, &si->st, n, &t, false, fsi_node_sino(c));
	a->st_mode = S_IFREG | 0444;
	return 0;
}

static int merr_read(lfs_fs *fs, const struct nodeinfo *ni, size_t size, off_t off, lfs_fs_read *r)
{
	fs_lock(fs);
	char *all = NULL;
	size_t total = merr_render(fsi_ms_find(fs, ni->model->rel), &all, NULL);
	int err = fsi_read_copy(r, all, total, size, off);
	fs_unlock(fs);
	free(all);
	return err;
}

/* Truncating errors.txt clears it; nothing else. */
static int merr_setattr(lfs_fs *fs, const struct nodeinfo *ni, const struct stat *attr, int to_set)
{
	if ((to_set & LFS_SET_SIZE) && attr->st_size == 0) {
		fs_lock(fs);
		struct mstate *ms = fsi_ms_find(fs, ni->model->rel);
		if (ms)
			fsi_merr_clear_all(ms);
		fs_unlock(fs);
	} else if (to_set & (LFS_SET_MODE | LFS_SET_UID | LFS_SET_GID | LFS_SET_SIZE)) {
		return EPERM;
	}
	return 0;
}

const struct node_ops fsi_merr_ops = {
	.generated = true,
	.in_model = true,
	.volatile_attr = true,
	.getattr = fsi_gen_getattr,
	.gen_attr = merr_attr,
	.open_write = fsi_open_write_erofs,
	.read = merr_read,
	.write = fsi_write_erofs,
	.setattr = merr_setattr,
	.link = fsi_link_eperm,
};
