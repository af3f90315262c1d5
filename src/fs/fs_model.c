/**
 * @file fs_model.c
 * Model folders and what they show: the generated side of the tree. View
 * folders and view files (attributes, lookup, listing, READ of generated
 * text or of the text being edited, WRITE and truncation into an overlay,
 * FLUSH/FSYNC commits), the writability of views, and the control folder
 * /.legacyfs with its errors file. Model folders take their attributes
 * from SOURCE (fs_pass.c) and their names from fs_scratch.c.
 */
#define _GNU_SOURCE
#include "fs_int.h"
#include "fs_thumb.h"
#include "replace.h"

#include "registry/container.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mode_t dir_perm_from(mode_t src)
{
	mode_t p = src & 0444;
	return p | ((p >> 2) & 0111);
}

/* Index of the first view of @p vs whose path is not below @p key (binary search). */
static size_t lower_bound(const lfs_viewset *vs, const char *key)
{
	size_t lo = 0, hi = vs->n_views;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(vs->views[mid].path, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Walk the immediate children of view folder @p vpath ("" = the model folder).
 * Calls @p fn(ctx, name, namelen, is_dir, view) for each; stops when it
 * returns non-zero. Sorted, each sub-folder once.
 */
static int view_children(const lfs_viewset *vs, const char *vpath, vchild_fn fn, void *ctx)
{
	char prefix[PATH_MAX];
	size_t pl = 0;
	if (vpath[0]) {
		pl = strlen(vpath);
		if (pl + 2 > sizeof(prefix))
			return 0;
		memcpy(prefix, vpath, pl);
		prefix[pl++] = '/';
	}
	prefix[pl] = '\0';
	const char *last_dir = NULL;
	size_t last_len = 0;
	for (size_t i = pl ? lower_bound(vs, prefix) : 0; i < vs->n_views; i++) {
		const lfs_view *v = &vs->views[i];
		if (strncmp(v->path, prefix, pl) != 0)
			break;
		const char *comp = v->path + pl;
		const char *sl = strchr(comp, '/');
		if (!*comp)
			continue;
		if (sl) {
			size_t len = (size_t)(sl - comp);
			if (len == 0 || (last_dir && last_len == len && memcmp(last_dir, comp, len) == 0))
				continue;
			last_dir = comp;
			last_len = len;
			int r = fn(ctx, comp, len, true, NULL);
			if (r)
				return r;
		} else {
			/* a member of an archive: a folder or a file, told when looked up */
			int r = fn(ctx, comp, strlen(comp), false, v);
			if (r)
				return r;
		}
	}
	return 0;
}

static int count_dirs_cb(void *ctx, const char *name, size_t len, bool is_dir, const lfs_view *v)
{
	(void)name;
	(void)len;
	(void)v;
	if (is_dir)
		++*(size_t *)ctx;
	return 0;
}

/* Is @p vpath a view folder of @p vs? */
bool fsi_view_is_dir(const lfs_viewset *vs, const char *vpath)
{
	char key[PATH_MAX];
	size_t l = strlen(vpath);
	if (l + 2 > sizeof(key))
		return false;
	memcpy(key, vpath, l);
	key[l] = '/';
	key[l + 1] = '\0';
	size_t i = lower_bound(vs, key);
	return i < vs->n_views && strncmp(vs->views[i].path, key, l + 1) == 0;
}

void fsi_fill_virtual_dir(struct stat *a, const struct stat *src, const lfs_viewset *vs,
		      const char *vpath, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	size_t ndirs = 0;
	view_children(vs, vpath, count_dirs_cb, &ndirs);
	a->st_ino = ino;
	a->st_mode = S_IFDIR | dir_perm_from(src->st_mode);
	/* Folders of writable models take the model file's write bits: editors
	 * create their swap, backup and temp files there (scratch namespace). */
	if (vs->writable)
		a->st_mode |= src->st_mode & 0222;
	/* a folder with model candidates (an archive's) has sub-folders not
	 * counted yet: "unknown" (1), as btrfs says, so that find looks at
	 * every name */
	a->st_nlink = !vpath[0] && lfs_container_of(vs->format) ? 1 : 2 + ndirs;
	a->st_uid = src->st_uid;
	a->st_gid = src->st_gid;
	a->st_size = 4096;
	a->st_blksize = 4096;
	a->st_atim = src->st_atim;
	a->st_mtim = src->st_mtim;
	a->st_ctim = src->st_ctim;
	a->st_dev = src->st_dev;
}

/*
 * A generated file: @p size bytes; times of the model file unless @p mtime
 * (text being edited); the model file's read bits, plus its write bits when
 * the view can be written back.
 */
void fsi_fill_view_file(struct stat *a, const struct stat *src, size_t size,
		    const struct timespec *mtime, bool writable, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	a->st_ino = ino;
	a->st_mode = S_IFREG | (src->st_mode & (writable ? 0666 : 0444));
	a->st_nlink = 1;
	a->st_uid = src->st_uid;
	a->st_gid = src->st_gid;
	a->st_size = (off_t)size;
	a->st_blocks = (blkcnt_t)((size + 511) / 512);
	a->st_blksize = 4096;
	a->st_atim = src->st_atim;
	a->st_mtim = mtime ? *mtime : src->st_mtim;
	a->st_ctim = mtime ? *mtime : src->st_ctim;
	a->st_dev = src->st_dev;
}

/* Attributes of /.legacyfs (@p id CTL_ID) or of one of its files (fs->mu held). */
void fsi_fill_ctl(lfs_fs *fs, struct stat *a, uint32_t id)
{
	memset(a, 0, sizeof(*a));
	a->st_uid = fs->uid;
	a->st_gid = fs->gid;
	a->st_blksize = 4096;
	a->st_atim = a->st_ctim = fs->start;
	if (id == CTL_ID) {
		a->st_ino = CTL_INO;
		a->st_mode = S_IFDIR | 0555;
		a->st_nlink = 2;
		a->st_size = 4096;
		a->st_mtim = fs->start;
		return;
	}
	const lfs_sb *t = id == ERRORS_ID ? &fs->errors.text : fsi_ctl_text(fs, id);
	size_t len = t ? t->len : 0;
	a->st_ino = CTLFILE_INO(id);
	a->st_mode = S_IFREG | 0444;
	a->st_nlink = 1;
	a->st_size = (off_t)len;
	a->st_blocks = (blkcnt_t)((len + 511) / 512);
	a->st_mtim = id == ERRORS_ID && fs->errors.n ? fs->errors.mtime
		     : id == ERRORS_ID		  ? fs->start
						  : fsi_now_real();
	a->st_ctim = a->st_mtim;
}

/* What a request on a model folder needs of its entry. */
enum need { NEED_VIEWS, NEED_NAMES };

static int model_entry_once(lfs_fs *fs, const struct node *model, struct srcinfo *si,
			    enum need need)
{
	int r = fsi_classify_node(fs, model, si);
	if (r)
		return r == ENOENT ? ESTALE : r;
	if (si->kind != K_MODEL) {
		fsi_srcinfo_release(fs, si);
		return ESTALE;
	}
	/* The views are built here, on the first request inside the folder
	 * that needs them; a listing needs only their names. */
	r = need == NEED_VIEWS ? fsi_srcinfo_views(fs, si) : fsi_srcinfo_names(fs, si);
	if (r)
		fsi_srcinfo_release(fs, si);
	return r;
}

static int model_entry(lfs_fs *fs, const struct node *model, struct srcinfo *si, enum need need)
{
	/* A folder renamed (or its file replaced) between the classification
	 * and the build gives ESTALE once: the node has its new path by then,
	 * so the request is tried again, as a reader of the renamed folder
	 * expects, before the folder is called stale. */
	int r = model_entry_once(fs, model, si, need);
	for (int again = 0; r == ESTALE && again < 2; again++)
		r = model_entry_once(fs, model, si, need);
	if (r)
		return r;
	struct node *m = (struct node *)model; /* the node is ours; the views only read it */
	fs_lock(fs);
	m->src_dev = (uint64_t)si->st.st_dev;
	m->src_ino = (uint64_t)si->st.st_ino;
	fs_unlock(fs);
	return 0;
}

/*
 * The current views of model folder @p model (a K_MODEL node): stats and
 * classifies its source again and builds its views when this version has
 * none yet (listing and lookup of the folder itself never do: fs_pass.c).
 * ESTALE when the file is no longer a model.
 * A model file replaced by another model file (a save through the mount, or
 * an editor's atomic save in SOURCE: a new inode) is the same model folder:
 * the node takes the new inode. Comparing inodes instead raced with every
 * commit under -o mt (a request that stat()ed between the commit's rename
 * and its update of the node, or before the rename and compared after it,
 * got ESTALE for every view of the model).
 */
int fsi_model_views(lfs_fs *fs, const struct node *model, struct srcinfo *si)
{
	return model_entry(fs, model, si, NEED_VIEWS);
}

/*
 * The current view names of model folder @p model: as fsi_model_views(),
 * but a model whose views are not built gets only their names (once per
 * version; si->names, fsi_si_vs()): what listings and the attributes of
 * view folders need. A view file's size needs fsi_model_views().
 */
int fsi_model_names(lfs_fs *fs, const struct node *model, struct srcinfo *si)
{
	return model_entry(fs, model, si, NEED_NAMES);
}

/*
 * The entry of model folder @p model for its thumbnail.png. A model whose
 * views are not built (and that fsi_names_fit()) gets the picture alone
 * (fsi_thumb_early(): *early true, the bytes in si->ce->thumb or, once
 * built, its views); otherwise the views are built (fsi_model_views(), then
 * fsi_thumb_fill() draws it). ENOENT when the model has no thumbnail.
 */
static int thumb_entry(lfs_fs *fs, const struct node *model, struct srcinfo *si, bool *early)
{
	*early = false;
	int r = fsi_classify_node(fs, model, si);
	if (r)
		return r == ENOENT ? ESTALE : r;
	if (si->kind != K_MODEL || !si->ce) {
		fsi_srcinfo_release(fs, si);
		return ESTALE;
	}
	fs_lock(fs);
	bool built = si->ce->built;
	const lfs_viewset *nm = si->ce->names;
	fs_unlock(fs);
	if (built || !fsi_names_fit(fs, &si->ce->key)) {
		fsi_srcinfo_release(fs, si);
		return fsi_model_views(fs, model, si);
	}
	if (nm && !lfs_viewset_find(nm, LFS_VIEWSET_THUMB_NAME))
		r = ENOENT; /* listed without one */
	else
		r = fsi_thumb_early(fs, si->ce);
	if (r) {
		fsi_srcinfo_release(fs, si);
		return r;
	}
	*early = true;
	struct node *m = (struct node *)model;
	fs_lock(fs);
	m->src_dev = (uint64_t)si->st.st_dev;
	m->src_ino = (uint64_t)si->st.st_ino;
	fs_unlock(fs);
	return 0;
}

/*
 * The thumbnail of entry @p ce drawn by fsi_thumb_early() (fs->mu held):
 * ce->thumb, or the views' thumbnail once they are built (in @p tmp or in
 * the views); NULL when there is none.
 */
static const lfs_view *early_thumb(const lfs_centry *ce, lfs_view *tmp)
{
	if (ce->thumb) {
		memset(tmp, 0, sizeof(*tmp));
		tmp->path = (char *)LFS_VIEWSET_THUMB_NAME;
		tmp->data = (char *)ce->thumb;
		tmp->size = ce->thumb_n;
		tmp->kind = LFS_VIEW_THUMBNAIL;
		return tmp;
	}
	if (!ce->built)
		return NULL;
	const lfs_view *v = lfs_viewset_find(&ce->vs, LFS_VIEWSET_THUMB_NAME);
	return v && v->data ? v : NULL;
}

/* Is view path @p vpath the thumbnail of its model folder? */
static bool is_thumb(const char *vpath)
{
	return strcmp(vpath, LFS_VIEWSET_THUMB_NAME) == 0;
}

/*
 * Attributes of generated-side node @p c (fs->mu held): view (its overlay
 * when edited), view folder, scratch object, errors.txt. @p si: the model's
 * current views.
 */
int fsi_fill_gen(lfs_fs *fs, struct node *c, const struct srcinfo *si, struct stat *a)
{
	const struct node_ops *ops = node_ops_of(c);
	if (!ops->gen_attr)
		return EINVAL;
	return ops->gen_attr(fs, c, si, fsi_ms_find(fs, model_of(c)->rel), a);
}

static int lookup_view(lfs_fs *fs, const struct nodeinfo *pi, const char *name, lfs_fs_entry *e)
{
	struct node *p = pi->node;
	struct node *model = ni_model(pi);
	struct srcinfo si;
	bool early = false;
	/* a model inside an archive is found from the archive's table alone,
	 * without listing the archive's folder (a cold `cat x.key/m.mdl/…`) */
	int r = p->kind == K_MODEL ? fsi_member_lookup_direct(fs, p, name, e) : FSI_NOT_MEMBER;
	if (r != FSI_NOT_MEMBER)
		return r;
	/* thumbnail.png may be drawn without the other views; anything else is
	 * found among the names, and a view file (its size) needs the views */
	r = p->kind == K_MODEL && is_thumb(name) ? thumb_entry(fs, model, &si, &early)
						 : fsi_model_names(fs, model, &si);
	if (r)
		return r;
	char *vpath = fsi_join_view(p, name);
	if (!vpath) {
		fsi_srcinfo_release(fs, &si);
		return ENOMEM;
	}
	const lfs_viewset *vs = early ? NULL : fsi_si_vs(&si);
	const lfs_view *v = vs ? lfs_viewset_find(vs, vpath) : NULL;
	if (v && si.names) {
		fsi_srcinfo_release(fs, &si);
		if ((r = fsi_model_views(fs, model, &si)) != 0) {
			free(vpath);
			return r;
		}
		vs = &si.ce->vs;
		v = lfs_viewset_find(vs, vpath);
	}
	if (v && v->kind == LFS_VIEW_MEMBER) {
		/* a model inside an archive: a model folder of its own, or, when
		 * its header is no model's, a plain resource (below) */
		r = fsi_member_lookup(fs, p, name, vpath, e);
		if (r != FSI_NOT_MEMBER) {
			fsi_srcinfo_release(fs, &si);
			free(vpath);
			return r;
		}
		r = 0;
	}
	/* thumbnail.png is drawn when looked up (not by READDIRPLUS: listed bare) */
	if (v && (r = fsi_thumb_fill(fs, si.ce, vpath)) != 0) {
		fsi_srcinfo_release(fs, &si);
		free(vpath);
		return r == EAGAIN ? ENOENT : r;
	}
	bool isdir = vs && !v && fsi_view_is_dir(vs, vpath);
	bool isview = v || early;
	fs_lock(fs);
	struct mstate *ms = fsi_ms_find(fs, model->rel);
	struct node *c = NULL;
	struct sname *sn;
	if (isview && fsi_hidden_active(fs, ms, vpath)) {
		r = ENOENT; /* deleted, within its grace time */
	} else if (isview || isdir) {
		c = fsi_child_for(fs, p, name, isview ? K_VFILE : K_VDIR, model->src_dev, model->src_ino, vpath, &r);
	} else if ((sn = fsi_sname_find(ms, vpath)) != NULL) {
		c = fsi_scratch_node(fs, p, name, sn, &r);
	} else if (p->kind == K_MODEL && strcmp(name, LFS_FS_MODEL_ERRORS_NAME) == 0 && ms && ms->errs) {
		c = fsi_child_for(fs, p, name, K_MERR, 0, 0, vpath, &r);
	} else {
		r = ENOENT;
	}
	if (c)
		r = fsi_give_entry(fs, c, &si, e);
	lfs_cache_release(&fs->cache, si.ce);
	fs_unlock(fs);
	free(vpath);
	return r;
}

struct vlist_ctx {
	struct dirsnap *s;
	size_t cap;
	const struct node *model;
	const char *vpath;
	int err;
};

static int vlist_cb(void *ctx, const char *name, size_t len, bool is_dir, const lfs_view *v)
{
	struct vlist_ctx *c = ctx;
	char path[PATH_MAX];
	size_t pl = strlen(c->vpath);
	if (pl + 1 + len + 1 > sizeof(path))
		return 0;
	memcpy(path, c->vpath, pl);
	if (pl)
		path[pl++] = '/';
	memcpy(path + pl, name, len);
	path[pl + len] = '\0';
	/* a model candidate inside an archive: its type is known once looked up
	 * (as an unclassified model file in a source folder) */
	unsigned char t = is_dir ? DT_DIR : v && v->kind == LFS_VIEW_MEMBER ? DT_UNKNOWN
					  : v && v->kind == LFS_VIEW_LINK ? DT_LNK : DT_REG;
	c->err = fsi_snap_add(c->s, &c->cap, name, len, fsi_view_ino(c->model, path), t);
	return c->err;
}

/* The listing of a model folder or view folder (built from the cached views). */
static int snap_build_view(lfs_fs *fs, const struct nodeinfo *ni, off_t off, uint64_t parent_ino,
			   struct dirsnap **out)
{
	(void)off;
	*out = NULL;
	struct node *n = ni->node;
	struct node *model = ni_model(ni);
	struct srcinfo si;
	int r = fsi_model_names(fs, model, &si);
	if (r)
		return r;
	const lfs_viewset *vs = fsi_si_vs(&si);
	const char *vpath = n->kind == K_MODEL ? "" : n->rel;
	struct vlist_ctx c = { .model = model, .vpath = vpath };
	fs_lock(fs);
	uint64_t dot_ino = fsi_node_sino(n);
	fs_unlock(fs);
	c.s = calloc(1, sizeof(*c.s));
	if (!c.s) {
		fsi_srcinfo_release(fs, &si);
		return ENOMEM;
	}
	c.s->refs = 1;
	c.s->bare = si.names != NULL; /* no sizes yet: READDIRPLUS lists the files bare */
	if (n->kind == K_VDIR && !fsi_view_is_dir(vs, vpath))
		r = ESTALE;
	if (!r)
		r = fsi_snap_add(c.s, &c.cap, ".", 1, dot_ino, DT_DIR);
	if (!r)
		r = fsi_snap_add(c.s, &c.cap, "..", 2, parent_ino, DT_DIR);
	if (!r) {
		view_children(vs, vpath, vlist_cb, &c);
		r = c.err;
	}
	if (!r) {
		/* Editing state: deleted views are absent, scratch names and
		 * errors.txt present (docs/editing.md). */
		fs_lock(fs);
		struct mstate *ms = fsi_ms_find(fs, model->rel);
		if (ms) {
			size_t pl = strlen(vpath);
			size_t w = 2;
			for (size_t i = 2; i < c.s->n; i++) {
				struct dsent *d = &c.s->ents[i];
				bool gone = false;
				if (d->type == DT_REG && ms->hidden) {
					char *vp = fsi_join_view(n, d->name);
					gone = vp && fsi_hidden_active(fs, ms, vp);
					free(vp);
				}
				if (gone)
					free(d->name);
				else
					c.s->ents[w++] = *d;
			}
			c.s->n = w;
			char dir[PATH_MAX];
			for (struct sname *sn = ms->names; sn && !r; sn = sn->next) {
				fsi_vdir_of(sn->vpath, dir, sizeof(dir));
				if (strcmp(dir, vpath) != 0)
					continue;
				const char *nm = sn->vpath + (pl ? pl + 1 : 0);
				r = fsi_snap_add(c.s, &c.cap, nm, strlen(nm), sn->obj->sino,
					     S_ISLNK(sn->obj->mode) ? DT_LNK : DT_REG);
			}
			if (!r && n->kind == K_MODEL && ms->errs &&
			    !lfs_viewset_find(vs, LFS_FS_MODEL_ERRORS_NAME))
				r = fsi_snap_add(c.s, &c.cap, LFS_FS_MODEL_ERRORS_NAME,
					     strlen(LFS_FS_MODEL_ERRORS_NAME),
					     fsi_view_ino(model, LFS_FS_MODEL_ERRORS_NAME), DT_REG);
		}
		fs_unlock(fs);
	}
	fsi_srcinfo_release(fs, &si);
	if (r) {
		fsi_snap_unref(c.s);
		return r;
	}
	*out = c.s;
	return 0;
}

static int snap_build_ctl(lfs_fs *fs, const struct nodeinfo *ni, off_t off, uint64_t parent_ino,
			  struct dirsnap **out)
{
	(void)fs;
	(void)ni;
	(void)off;
	(void)parent_ino;
	struct dirsnap *s = calloc(1, sizeof(*s));
	size_t cap = 0;
	if (!s)
		return ENOMEM;
	s->refs = 1;
	int r = fsi_snap_add(s, &cap, ".", 1, CTL_INO, DT_DIR);
	if (!r)
		r = fsi_snap_add(s, &cap, "..", 2, 0, DT_DIR);
	if (!r)
		r = fsi_snap_add(s, &cap, LFS_FS_ERRORS_NAME, strlen(LFS_FS_ERRORS_NAME), ERRORS_INO, DT_REG);
	if (!r)
		r = fsi_snap_add(s, &cap, LFS_FS_RESOURCES_NAME, strlen(LFS_FS_RESOURCES_NAME),
				 RESOURCES_INO, DT_REG);
	if (!r)
		r = fsi_snap_add(s, &cap, LFS_FS_STATUS_NAME, strlen(LFS_FS_STATUS_NAME), STATUS_INO,
				 DT_REG);
	if (r) {
		fsi_snap_unref(s);
		return r;
	}
	*out = s;
	return 0;
}


/*
 * Attributes of a generated node: from the model's current views; a view
 * folder's from the names of the views (no build), thumbnail.png's from its
 * picture alone while the views are not built (thumb_entry()).
 */
int fsi_gen_getattr(lfs_fs *fs, const struct nodeinfo *ni, struct stat *st)
{
	struct srcinfo si;
	bool early = false;
	int r;
	if (ni->kind == K_VFILE && ni->node->parent == ni->model && is_thumb(ni->node->rel))
		r = thumb_entry(fs, ni->model, &si, &early);
	else if (ni->kind == K_VDIR)
		r = fsi_model_names(fs, ni->model, &si);
	else
		r = fsi_model_views(fs, ni->model, &si);
	if (r)
		return r == ENOENT && early == false && ni->kind == K_VFILE ? ESTALE : r;
	/* thumbnail.png: its true size needs the picture (fs_thumb.h) */
	if (early || ni->kind != K_VFILE || (r = fsi_thumb_fill(fs, si.ce, ni->node->rel)) == 0) {
		fs_lock(fs);
		r = fsi_fill_gen(fs, ni->node, &si, st);
		fs_unlock(fs);
	}
	fsi_srcinfo_release(fs, &si);
	if (r == ESTALE)
		fsi_detach(fs, ni->node);
	return r;
}

static int vfile_attr(lfs_fs *fs, struct node *c, const struct srcinfo *si, struct mstate *ms,
		      struct stat *a)
{
	(void)fs;
	lfs_view tmp;
	const lfs_view *v = si->names ? NULL : lfs_viewset_find(&si->ce->vs, c->rel);
	if ((!v || !si->ce->built) && is_thumb(c->rel) && c->parent->kind == K_MODEL)
		v = early_thumb(si->ce, &tmp); /* drawn before the views (thumb_entry()) */
	if (!v)
		return ESTALE;
	if (v->kind == LFS_VIEW_LINK) {
		/* a supermodel link (supermodel.h) */
		fsi_fill_view_file(a, &si->st, v->size, NULL, false, fsi_node_sino(c));
		a->st_mode = S_IFLNK | 0777;
		return 0;
	}
	struct overlay *o = fsi_ovl_find(ms, c->rel);
	bool w = v && v->writable;
	if (o)
		fsi_fill_view_file(a, &si->st, o->text.len, &o->mtime, w, fsi_node_sino(c));
	else
		fsi_fill_view_file(a, &si->st, v->size, NULL, w, fsi_node_sino(c));
	return 0;
}

static int vdir_attr(lfs_fs *fs, struct node *c, const struct srcinfo *si, struct mstate *ms,
		     struct stat *a)
{
	(void)fs;
	(void)ms;
	const lfs_viewset *vs = fsi_si_vs(si);
	if (!fsi_view_is_dir(vs, c->rel))
		return ESTALE;
	fsi_fill_virtual_dir(a, &si->st, vs, c->rel, fsi_node_sino(c));
	return 0;
}

/* The target of a supermodel link view (supermodel.h); EINVAL for any other view. */
static int vfile_readlink(lfs_fs *fs, const struct nodeinfo *ni, char *buf, size_t bufsz)
{
	struct srcinfo si;
	int r = fsi_model_names(fs, ni->model, &si);
	if (r)
		return r == ENOENT ? ESTALE : r;
	const lfs_viewset *vs = fsi_si_vs(&si);
	const lfs_view *v = vs ? lfs_viewset_find(vs, ni->node->rel) : NULL;
	if (!v)
		r = ESTALE;
	else if (v->kind != LFS_VIEW_LINK || !v->data)
		r = EINVAL;
	else if (v->size + 1 > bufsz)
		r = ENAMETOOLONG;
	else {
		memcpy(buf, v->data, v->size);
		buf[v->size] = '\0';
	}
	fsi_srcinfo_release(fs, &si);
	return r;
}

/* Open for writing: EROFS unless the view can be written back. */
static int vfile_open_write(lfs_fs *fs, const struct nodeinfo *ni)
{
	struct srcinfo si;
	int r = fsi_model_views(fs, ni->model, &si);
	if (r)
		return r;
	const lfs_view *wv = lfs_viewset_find(&si.ce->vs, ni->node->rel);
	if (!wv || !wv->writable)
		r = EROFS;
	fsi_srcinfo_release(fs, &si);
	return r;
}

static int vfile_read(lfs_fs *fs, const struct nodeinfo *ni, size_t size, off_t off, lfs_fs_read *r)
{
	struct srcinfo si;
	bool early = false;
	int err = ni->node->parent == ni->model && is_thumb(ni->node->rel)
			  ? thumb_entry(fs, ni->model, &si, &early)
			  : fsi_model_views(fs, ni->model, &si);
	if (err)
		return err == ENOENT ? ESTALE : err;
	if (early) {
		/* thumbnail.png drawn before the views: its bytes stay with the
		 * held entry (moved into its views when built, never freed) */
		lfs_view tmp;
		fs_lock(fs);
		const lfs_view *t = early_thumb(si.ce, &tmp);
		const char *data = t ? t->data : NULL;
		size_t n = t ? t->size : 0;
		fs_unlock(fs);
		if (!data) {
			fsi_srcinfo_release(fs, &si);
			return ESTALE;
		}
		if ((uint64_t)off < n) {
			r->data = data + off;
			r->len = n - (size_t)off < size ? n - (size_t)off : size;
		}
		r->hold = si.ce;
		r->hold_kind = HOLD_ENTRY;
		return 0;
	}
	const lfs_view *v = lfs_viewset_find(&si.ce->vs, ni->node->rel);
	if (!v) {
		fsi_srcinfo_release(fs, &si);
		return ESTALE;
	}
	if ((err = fsi_thumb_fill(fs, si.ce, ni->node->rel)) != 0) {
		fsi_srcinfo_release(fs, &si);
		return err;
	}
	fs_lock(fs);
	struct overlay *o = fsi_ovl_find(fsi_ms_find(fs, ni->model->rel), ni->node->rel);
	if (o) {
		/* The text being edited. */
		err = fsi_read_copy(r, o->text.data, o->text.len, size, off);
		fs_unlock(fs);
		fsi_srcinfo_release(fs, &si);
		return err;
	}
	fs_unlock(fs);
	if ((err = fsi_view_bytes(fs, &si, ni->node->rel, &v)) != 0)
		return err;
	/* Remember which generated text was served, and to which process (the
	 * base of its next save). Only for views that can be saved. */
	if (v->writable)
		fsi_view_served(fs, ni->model->rel, ni->node->rel, v, &si.ce->key, fsi_req_pid);
	if ((uint64_t)off < v->size) {
		r->data = v->data + off;
		r->len = v->size - (size_t)off < size ? v->size - (size_t)off : size;
	}
	r->hold = si.ce;
	r->hold_kind = HOLD_ENTRY;
	return 0;
}

static int vfile_write(lfs_fs *fs, const struct nodeinfo *ni, const char *buf, size_t size,
		       off_t off, const lfs_fs_ctx *ctx, size_t *written)
{
	int r = fsi_view_change(fs, ni, buf, size, (uint64_t)off, 0, fsi_tgid_of(ctx ? ctx->pid : 0));
	if (!r)
		*written = size;
	return r;
}

/* Truncation edits the text; mode, owner, times follow the model file: accepted, ignored. */
static int vfile_setattr(lfs_fs *fs, const struct nodeinfo *ni, const struct stat *a, int to_set)
{
	if (!(to_set & LFS_SET_SIZE))
		return 0;
	return a->st_size < 0 ? EINVAL : fsi_view_change(fs, ni, NULL, 0, 0, (uint64_t)a->st_size, 0);
}

static int vfile_flush(lfs_fs *fs, const struct nodeinfo *ni, const lfs_fs_ctx *ctx)
{
	struct node *n = ni->node;
	/* Cheap first: most closes are of views nobody wrote (grep). */
	fs_lock(fs);
	struct mstate *ms = fs->mstates ? fsi_ms_find(fs, ni->model->rel) : NULL;
	struct overlay *o = fsi_ovl_find(ms, n->rel);
	bool written = o && o->written;
	fs_unlock(fs);
	if (!written)
		return 0;
	return fsi_commit_overlay(fs, n, false, fsi_tgid_of(ctx ? ctx->pid : 0));
}

static int vfile_fsync(lfs_fs *fs, const struct nodeinfo *ni, bool datasync)
{
	(void)datasync;
	return fsi_commit_overlay(fs, ni->node, true, 0);
}

/* Model folders and view folders: times accepted and ignored, the rest belongs to the model file. */
static int vdir_setattr(lfs_fs *fs, const struct nodeinfo *ni, const struct stat *a, int to_set)
{
	(void)fs;
	(void)ni;
	(void)a;
	return to_set & (LFS_SET_MODE | LFS_SET_UID | LFS_SET_GID | LFS_SET_SIZE) ? EPERM : 0;
}

/* ---- /.legacyfs ---- */

static int ctldir_getattr(lfs_fs *fs, const struct nodeinfo *ni, struct stat *st)
{
	(void)ni;
	fs_lock(fs);
	fsi_fill_ctl(fs, st, CTL_ID);
	fs_unlock(fs);
	return 0;
}

static int ctlerr_getattr(lfs_fs *fs, const struct nodeinfo *ni, struct stat *st)
{
	uint32_t id = ni->node->id;
	int r = fsi_ctl_refresh(fs, id); /* status and resources: made when looked at */
	if (r)
		return r;
	fs_lock(fs);
	fsi_fill_ctl(fs, st, id);
	fs_unlock(fs);
	return 0;
}

static int ctl_lookup(lfs_fs *fs, const struct nodeinfo *p, const char *name, lfs_fs_entry *e)
{
	(void)p;
	uint32_t id = fsi_ctl_id_of(name);
	if (!id)
		return ENOENT;
	int r = fsi_ctl_refresh(fs, id);
	if (r)
		return r;
	fs_lock(fs);
	struct node *c = fs->slots[id];
	node_hold(c);
	e->ino = c->id;
	e->generation = c->gen;
	fsi_fill_ctl(fs, &e->attr, id);
	fsi_entry_timeouts(fs, c, e);
	fs_unlock(fs);
	return 0;
}

static int ctlerr_read(lfs_fs *fs, const struct nodeinfo *ni, size_t size, off_t off, lfs_fs_read *r)
{
	uint32_t id = ni->node->id;
	if (off == 0 && id == STATUS_ID)
		fsi_ctl_refresh(fs, id);
	fs_lock(fs);
	const lfs_sb *t = id == ERRORS_ID ? &fs->errors.text : fsi_ctl_text(fs, id);
	int err = fsi_read_copy(r, t ? t->data : NULL, t ? t->len : 0, size, off);
	fs_unlock(fs);
	return err;
}

/* Names in /.legacyfs cannot be made or removed. */
static int ctl_mknew(lfs_fs *fs, const struct nodeinfo *p, const char *name, const struct newobj *w,
		     const lfs_fs_ctx *ctx, lfs_fs_entry *e)
{
	(void)fs;
	(void)p;
	(void)name;
	(void)w;
	(void)ctx;
	(void)e;
	return EROFS;
}

static int ctl_remove(lfs_fs *fs, const struct nodeinfo *p, const char *name)
{
	(void)fs;
	(void)p;
	(void)name;
	return EROFS;
}

/* Control and message files: read-only. */
int fsi_open_write_erofs(lfs_fs *fs, const struct nodeinfo *ni)
{
	(void)fs;
	(void)ni;
	return EROFS;
}

int fsi_write_erofs(lfs_fs *fs, const struct nodeinfo *ni, const char *buf, size_t size, off_t off,
		const lfs_fs_ctx *ctx, size_t *written)
{
	(void)fs;
	(void)ni;
	(void)buf;
	(void)size;
	(void)off;
	(void)ctx;
	(void)written;
	return EROFS;
}

/* Names of model and view folders: views and scratch names (fs_scratch.c). */
#define MODEL_NS_OPS                                                                         \
	.is_dir = true, .model_ns = true, .not_file = EISDIR, .setattr = vdir_setattr,       \
	.link = fsi_link_eperm, .lookup = lookup_view, .snap = snap_build_view, .mknew = fsi_model_mknew, \
	.unlink = fsi_model_unlink, .rmdir = fsi_model_rmdir, .rename = fsi_model_rename_op

const struct node_ops fsi_model_ops = { MODEL_NS_OPS, .source = true, .getattr = fsi_pass_getattr };

const struct node_ops fsi_vdir_ops = {
	MODEL_NS_OPS,
	.generated = true,
	.in_model = true,
	.getattr = fsi_gen_getattr,
	.gen_attr = vdir_attr,
};

const struct node_ops fsi_vfile_ops = {
	.generated = true,
	.in_model = true,
	.is_view = true,
	.getattr = fsi_gen_getattr,
	.gen_attr = vfile_attr,
	.open_write = vfile_open_write,
	.readlink = vfile_readlink,
	.read = vfile_read,
	.write = vfile_write,
	.setattr = vfile_setattr,
	.flush = vfile_flush,
	.fsync = vfile_fsync,
	.link = fsi_model_link_op,
};

const struct node_ops fsi_ctldir_ops = {
	.is_dir = true,
	.not_file = EISDIR,
	.getattr = ctldir_getattr,
	.lookup = ctl_lookup,
	.snap = snap_build_ctl,
	.mknew = ctl_mknew,
	.unlink = ctl_remove,
	.rmdir = ctl_remove,
};

const struct node_ops fsi_ctlerr_ops = {
	.volatile_attr = true,
	.getattr = ctlerr_getattr,
	.open_write = fsi_open_write_erofs,
	.read = ctlerr_read,
	.write = fsi_write_erofs,
	.link = fsi_link_eperm,
};
