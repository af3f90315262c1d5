/**
 * @file fs_scratch.c
 * The namespace of model folders and view folders (docs/editing.md): what
 * create, mknod, symlink, unlink, rmdir, rename and link do with the names
 * there. A name is a view (re-created = its text replaced; deleted = absent
 * for the grace time; renamed onto = a commit), a scratch file or symlink
 * (editors' swap, backup and temp files, in memory), or errors.txt. At the
 * top of a writable archive folder a name is a resource: created, removed
 * and renamed in the archive itself (fsi_archive_op, docs/archives.md).
 */
#define _GNU_SOURCE
#include "fs_int.h"

#include "registry/container.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Resolve @p name in model/view folder @p dir into @p m (views held: release with mloc_put). */
static int mloc_get(lfs_fs *fs, struct node *dir, const char *name, struct mloc *m)
{
	memset(m, 0, sizeof(*m));
	if (fsi_is_dot(name) || strchr(name, '/') || !name[0])
		return EINVAL;
	m->dir = dir;
	fs_lock(fs);
	m->model = model_of(dir);
	fs_unlock(fs);
	int r = fsi_model_views(fs, m->model, &m->si);
	if (r)
		return r;
	m->vpath = fsi_join_view(dir, name);
	if (!m->vpath) {
		fsi_srcinfo_release(fs, &m->si);
		return ENOMEM;
	}
	const lfs_viewset *vs = &m->si.ce->vs;
	m->v = lfs_viewset_find(vs, m->vpath);
	if (m->v && m->v->kind == LFS_VIEW_MEMBER && fsi_member_is_model(fs, m->model, name))
		m->v = NULL; /* a model inside an archive: a folder (of its own, registry/container.h) */
	m->isdir = (!m->v && fsi_view_is_dir(vs, m->vpath)) ||
		   (!m->v && lfs_viewset_find(vs, m->vpath) != NULL);
	m->writable = vs->writable;
	m->vwritable = m->v && m->v->writable;
	m->merr_name = !m->v && dir->kind == K_MODEL && strcmp(name, LFS_FS_MODEL_ERRORS_NAME) == 0;
	m->archive = dir == m->model && lfs_container_of(vs->format) && vs->writable;
	return 0;
}

/* What a new name @p name at the top of an archive folder is (archive_edit.h); @p why ≥ 160 bytes. */
static lfs_cname_kind aname(const struct mloc *m, const char *name, char *why)
{
	why[0] = '\0';
	const lfs_container *c = lfs_container_of(m->si.ce->vs.format);
	return c ? c->name_class(name, why) : LFS_CNAME_SCRATCH;
}

/* Refuse name @p vpath of an archive with @p why in its errors.txt (fs->mu held). */
static int aname_refuse(struct mstate *ms, const char *vpath, const char *why)
{
	char msg[512];
	snprintf(msg, sizeof(msg), "%s: error: not created: %s; the archive was not changed\n", vpath,
		 why);
	fsi_merr_set(ms, vpath, msg);
	return EINVAL;
}

static void mloc_put(lfs_fs *fs, struct mloc *m)
{
	fsi_srcinfo_release(fs, &m->si);
	free(m->vpath);
	m->vpath = NULL;
}

/* The node of scratch name @p sn under @p p (fs->mu held). */
struct node *fsi_scratch_node(lfs_fs *fs, struct node *p, const char *name, struct sname *sn, int *err)
{
	struct node *c = fsi_child_for(fs, p, name, K_SCRATCH, 0, sn->obj->sino, sn->vpath, err);
	if (c && !c->sobj) {
		c->sobj = sn->obj;
		sn->obj->refs++;
	}
	return c;
}

/*
 * mloc_get(), then fs->mu taken and the editing state of the model found or
 * made in *@p ms (NULL: out of memory). On an error nothing is held.
 */
static int mloc_lock(lfs_fs *fs, struct node *dir, const char *name, struct mloc *m,
		     struct mstate **ms)
{
	int r = mloc_get(fs, dir, name, m);
	if (r)
		return r;
	fs_lock(fs);
	*ms = fsi_ms_get(fs, m->model->rel);
	return 0;
}

/*
 * End of an operation that made name @p c in the folder of @p m (fs->mu
 * held): its entry (one lookup count) unless it failed with @p r; then the
 * lock and @p m are released.
 */
static int name_made(lfs_fs *fs, struct node *c, int r, struct mloc *m, lfs_fs_entry *e)
{
	if (c && !r)
		r = fsi_give_entry(fs, c, &m->si, e);
	fs_unlock(fs);
	mloc_put(fs, m);
	return r;
}

/* create/mknod of view @p m->vpath: re-creating a view replaces its text (fs->mu held). */
static int view_recreate(lfs_fs *fs, struct mstate *ms, const struct mloc *m, int flags)
{
	int r = 0;
	bool hid = fsi_hidden_active(fs, ms, m->vpath);
	struct overlay *o = fsi_ovl_find(ms, m->vpath);
	if (!m->vwritable) {
		r = EROFS;
	} else if (!hid && (flags & O_EXCL)) {
		r = EEXIST;
	} else if (hid) {
		fsi_hidden_clear(fs, ms, m->vpath);
		if (o)
			fsi_ovl_drop(fs, ms, m->vpath);
		o = fsi_ovl_new(fs, ms, m->vpath, NULL, 0, &r); /* a new, empty file */
	} else if (flags & O_TRUNC) {
		if (!o)
			o = fsi_ovl_new(fs, ms, m->vpath, NULL, 0, &r);
		else if (o->text.len) {
			fsi_edit_account(fs, o->text.len, 0);
			o->text.len = 0;
		}
		if (o) {
			o->modified = true;
			o->gen++;
			o->mtime = fsi_now_real();
		}
	}
	return r;
}

/* create/mknod of an existing scratch name @p sn (fs->mu held). */
static int scratch_reopen(lfs_fs *fs, struct sname *sn, int flags)
{
	if ((flags & O_EXCL) || S_ISLNK(sn->obj->mode))
		return EEXIST;
	if ((flags & O_TRUNC) && sn->obj->data.len) {
		fsi_edit_account(fs, sn->obj->data.len, 0);
		sn->obj->data.len = 0;
		sn->obj->mtime = sn->obj->ctime = fsi_now_real();
	}
	return 0;
}

/*
 * Why a new regular file (@p file) or symlink cannot take the name of
 * @p m, or 0 (fs->mu held). Regular files may take an existing name (a view
 * or a scratch file: see fsi_model_mknew); symlinks only a free one.
 */
static int new_name_check(lfs_fs *fs, struct mstate *ms, const struct mloc *m, bool file)
{
	if (file)
		return m->isdir ? EISDIR : m->merr_name ? EPERM : !m->writable ? EROFS : 0;
	if ((m->v && !fsi_hidden_active(fs, ms, m->vpath)) || m->isdir || fsi_sname_find(ms, m->vpath) ||
	    (m->merr_name && ms->errs))
		return EEXIST;
	if (m->v || m->merr_name)
		return EPERM;
	return m->writable ? 0 : EROFS;
}

/*
 * create, mknod, symlink in a model folder (mkdir: EPERM, no folders in the
 * scratch namespace). A regular file: the name of a writable view (its text
 * is replaced) or a scratch file; a symlink: a scratch symlink.
 */
int fsi_model_mknew(lfs_fs *fs, const struct nodeinfo *pi, const char *name, const struct newobj *w,
		const lfs_fs_ctx *ctx, lfs_fs_entry *e)
{
	bool file = w->what == NEW_FILE || (w->what == NEW_NODE && S_ISREG(w->mode));
	if (!file && w->what != NEW_SYMLINK)
		return EPERM;
	int flags = w->what == NEW_FILE ? w->flags : O_EXCL;
	char why[160];
	struct node *p = pi->node;
	struct mloc m;
	struct mstate *ms;
	int r = mloc_lock(fs, p, name, &m, &ms);
	if (r)
		return r;
	struct node *c = NULL;
	struct sname *sn = ms ? fsi_sname_find(ms, m.vpath) : NULL;
	lfs_cname_kind ak = m.archive ? aname(&m, name, why) : LFS_CNAME_SCRATCH;
	if (!ms) {
		r = ENOMEM;
	} else if ((r = new_name_check(fs, ms, &m, file)) != 0) {
		/* refused */
	} else if (file && m.v) {
		r = view_recreate(fs, ms, &m, flags);
		if (!r)
			c = fsi_child_for(fs, p, name, K_VFILE, m.model->src_dev, m.model->src_ino, m.vpath, &r);
	} else if (file && sn) {
		r = scratch_reopen(fs, sn, flags);
		if (!r)
			c = fsi_scratch_node(fs, p, name, sn, &r);
	} else if (ak == LFS_CNAME_BAD) {
		r = aname_refuse(ms, m.vpath, why);
	} else {
		const char *data = file ? NULL : w->target;
		size_t n = file ? 0 : strlen(w->target);
		mode_t mode = file ? S_IFREG | (w->mode & 07777) : S_IFLNK | 0777;
		struct sobj *o = fsi_sobj_with(fs, mode, ctx ? ctx->uid : fs->uid, ctx ? ctx->gid : fs->gid,
					   data, n, &r);
		sn = o ? fsi_sname_add(ms, m.vpath, o) : NULL;
		if (o && !sn)
			fsi_sobj_discard(fs, o);
		else if (o && file && ak == LFS_CNAME_RESOURCE)
			o->resource = true; /* added to the archive when closed */
		if (!sn)
			r = ENOMEM;
		else
			c = fsi_scratch_node(fs, p, name, sn, &r);
	}
	bool ttl = c && !r && fs->o.scratch_ttl > 0;
	r = name_made(fs, c, r, &m, e);
	if (ttl)
		fsi_kick(fs); /* the watcher's poll timeout covers a new scratch *.mtl (-o scratch_ttl) */
	return r;
}

/*
 * Remove resource @p m (a file or a model's folder at the top of an
 * archive folder, name @p name in @p p) from the archive; then its node
 * and any unsaved text of it go. Unlocked.
 */
static int archive_remove(lfs_fs *fs, struct mstate *ms, struct mloc *m, struct node *p,
			  const char *name)
{
	struct fsi_aop op = { .what = FSI_AOP_REMOVE, .name = m->vpath };
	int r = fsi_archive_op(fs, ms, m->model, &op, NULL);
	if (r)
		return r;
	fs_lock(fs);
	struct node *x = fsi_find_child(fs, p, name);
	if (x)
		fsi_nh_remove(fs, x);
	if (fsi_ovl_find(ms, m->vpath))
		fsi_ovl_drop(fs, ms, m->vpath);
	fs_unlock(fs);
	return 0;
}

int fsi_model_unlink(lfs_fs *fs, const struct nodeinfo *pi, const char *name)
{
	bool arm = false;
	struct mloc m;
	struct mstate *ms;
	int r = mloc_lock(fs, pi->node, name, &m, &ms);
	if (r)
		return r;
	struct node *p = pi->node;
	struct sname *sn;
	if (!ms) {
		r = ENOMEM;
	} else if (m.isdir) {
		r = EISDIR;
	} else if (m.v && m.archive && !fsi_hidden_active(fs, ms, m.vpath)) {
		arm = true; /* a resource: removed from the archive (below, unlocked) */
	} else if (m.v) {
		if (fsi_hidden_active(fs, ms, m.vpath)) {
			r = ENOENT;
		} else if (!m.vwritable) {
			r = EROFS;
		} else {
			/* The model stays: the text reverts, the name is absent for the
			 * grace time so that unlink + create (mv, vim) works. */
			struct node *x = fsi_find_child(fs, p, name);
			struct overlay *o = fsi_ovl_find(ms, m.vpath);
			if (o && o->base_valid)
				fsi_pbase_set(ms, m.vpath, o->base_hash);
			if (o)
				fsi_ovl_drop(fs, ms, m.vpath);
			r = fsi_hidden_add(fs, ms, m.vpath, p->id);
			if (x)
				fsi_nh_remove(fs, x);
		}
	} else if ((sn = fsi_sname_find(ms, m.vpath)) != NULL) {
		struct node *x = fsi_find_child(fs, p, name);
		if (x)
			fsi_nh_remove(fs, x);
		fsi_sname_remove(fs, ms, sn);
	} else if (m.merr_name && ms->errs) {
		struct node *x = fsi_find_child(fs, p, name);
		if (x)
			fsi_nh_remove(fs, x);
		fsi_merr_clear_all(ms);
	} else {
		r = ENOENT;
	}
	fs_unlock(fs);
	if (arm)
		r = archive_remove(fs, ms, &m, p, name);
	mloc_put(fs, &m);
	return r;
}

/*
 * rename(@p name → @p newname) at the top of an archive folder, in the
 * archive: a resource renamed (onto an existing one: that one is replaced),
 * or (@p add) the scratch file @p a added as resource @p b with its bytes
 * @p data. Then the nodes follow: the renamed file keeps its inode under
 * the new name, a renamed model folder is looked up again, a replaced name
 * goes. Unlocked.
 */
static int archive_rename(lfs_fs *fs, struct mstate *ms, struct mloc *a, struct mloc *b,
			  struct node *p, const char *name, struct node *np, const char *newname,
			  bool add, const uint8_t *data, size_t n)
{
	struct fsi_aop op = { .what = add ? FSI_AOP_ADD : FSI_AOP_RENAME,
			      .name = add ? b->vpath : a->vpath,
			      .to = b->vpath,
			      .replace = !add,
			      .data = data,
			      .dn = n };
	char listed[256];
	listed[0] = '\0';
	int r = fsi_archive_op(fs, ms, a->model, &op, add ? listed : NULL);
	if (r)
		return r;
	fs_lock(fs);
	struct node *sn = fsi_find_child(fs, p, name);
	struct node *tn = fsi_find_child(fs, np, newname);
	if (tn && tn != sn)
		fsi_nh_remove(fs, tn);
	if (fsi_ovl_find(ms, b->vpath))
		fsi_ovl_drop(fs, ms, b->vpath);
	if (add) {
		struct sname *sa = fsi_sname_find(ms, a->vpath);
		if (sa)
			fsi_sname_remove(fs, ms, sa);
	} else if (fsi_ovl_find(ms, a->vpath)) {
		fsi_ovl_drop(fs, ms, a->vpath);
	}
	if (sn && !a->isdir && (!add || strcmp(listed, b->vpath) == 0)) {
		/* The kernel moved this inode to the new name: it is that resource now. */
		if (sn->kind == K_SCRATCH) {
			fsi_sobj_unref(fs, sn->sobj);
			sn->sobj = NULL;
			sn->kind = K_VFILE;
		}
		fsi_node_move(fs, sn, np, newname, b->vpath);
	} else if (sn) {
		fsi_nh_remove(fs, sn); /* a model folder's views have new paths: looked up again */
	}
	fs_unlock(fs);
	return 0;
}

/*
 * ---- rename in a model folder: a table keyed by (source kind, target kind) ----
 *
 * What the two names of a rename are (rename_kinds) picks a handler
 * (rename_table); the handlers run under fs->mu and either answer at once
 * or leave a commit or an archive edit, done unlocked after them
 * (docs/editing.md "Renames", docs/archives.md).
 */

/* What the source name of a rename is. */
enum rsrc {
	RS_RES,     /* a resource at the top of an archive folder, to an archive name (below) */
	RS_FIXED,   /* a view folder or errors.txt */
	RS_GONE,    /* nothing there (a deleted view in its grace time included) */
	RS_SCRATCH, /* a scratch file or symlink */
	RS_VIEW,    /* a view */
	RS_N
};

/* What the target name of a rename is; the first three at the top of an archive folder only. */
enum rdst {
	RD_RES,     /* an existing resource (a file or a model's folder) */
	RD_NEWRES,  /* a resource name that is not one yet (added / renamed into the archive) */
	RD_BADNAME, /* looks like a resource but breaks the naming rules */
	RD_FIXED,   /* a view folder or errors.txt */
	RD_VIEW,    /* a view */
	RD_HIDDEN,  /* a view deleted in its grace time */
	RD_SCRATCH, /* a scratch file or symlink */
	RD_NONE,    /* a free name */
	RD_N
};

/* One rename in a model folder: its names, what they are, what is left to do unlocked. */
struct rn {
	struct mstate *ms;
	struct mloc *a, *b;
	struct node *p, *np;
	const char *name, *newname;
	unsigned flags;
	struct sname *sa, *sb; /* the scratch names of a and b, if any */
	enum rdst dst;
	char why[160];         /* RD_BADNAME: why the name is refused */
	bool commit;           /* then: fsi_rename_commit */
	bool aop;              /* then: archive_rename (of add / data / n) */
	bool add;
	uint8_t *data;
	size_t n;
};

typedef int (*rename_fn)(lfs_fs *fs, struct rn *x);

static int rn_eperm(lfs_fs *fs, struct rn *x)
{
	(void)fs;
	(void)x;
	return EPERM; /* folders, errors.txt, one view onto another */
}

/* Nothing to rename: ENOENT, but a folder or errors.txt as target is EPERM first. */
static int rn_gone(lfs_fs *fs, struct rn *x)
{
	(void)fs;
	return x->b->isdir || x->b->merr_name ? EPERM : ENOENT;
}

/* A resource renamed in the archive (onto an existing one: that one is replaced). */
static int rn_arch_rename(lfs_fs *fs, struct rn *x)
{
	(void)fs;
	if ((x->flags & RENAME_NOREPLACE) && x->dst == RD_RES)
		return EEXIST;
	x->aop = true;
	return 0;
}

/* A name that breaks the archive's naming rules: refused, said in errors.txt. */
static int rn_badname(lfs_fs *fs, struct rn *x)
{
	(void)fs;
	return aname_refuse(x->ms, x->b->vpath, x->why);
}

/* Scratch file -> scratch name (renamed in memory), or onto a free one. */
static int rn_scratch_move(lfs_fs *fs, struct rn *x)
{
	if ((x->flags & RENAME_NOREPLACE) && x->sb)
		return EEXIST;
	if (x->sa == x->sb)
		return 0;
	char *nv = strdup(x->b->vpath);
	if (!nv)
		return ENOMEM;
	struct node *tn = fsi_find_child(fs, x->np, x->newname);
	struct node *sn = fsi_find_child(fs, x->p, x->name);
	if (x->sb) {
		if (tn && tn != sn)
			fsi_nh_remove(fs, tn);
		fsi_sname_remove(fs, x->ms, x->sb);
	}
	free(x->sa->vpath);
	x->sa->vpath = nv;
	x->sa->obj->ctime = fsi_now_real();
	if (sn)
		fsi_node_move(fs, sn, x->np, x->newname, x->b->vpath);
	return 0;
}

/* Scratch file -> a resource name that is not one yet: added to the archive with its bytes. */
static int rn_arch_add(lfs_fs *fs, struct rn *x)
{
	if (x->sb)
		return rn_scratch_move(fs, x); /* a scratch file already has that name */
	const struct sobj *o = x->sa->obj;
	if (!S_ISREG(o->mode))
		return EINVAL;
	if (!(x->data = malloc(o->data.len ? o->data.len : 1)))
		return ENOMEM;
	x->n = o->data.len;
	memcpy(x->data, o->data.data, x->n);
	x->aop = x->add = true;
	return 0;
}

/* Scratch file -> view (sed -i, os.replace, editors' save by rename): a commit. */
static int rn_commit(lfs_fs *fs, struct rn *x)
{
	(void)fs;
	if (x->b->isdir)
		return EPERM; /* a model's folder at the top of an archive */
	if ((x->flags & RENAME_NOREPLACE) && x->dst != RD_HIDDEN)
		return EEXIST;
	x->commit = true;
	return 0;
}

/* View -> scratch name: the text moves, the view stays (generated text). */
static int rn_view_move(lfs_fs *fs, struct rn *x)
{
	struct mloc *a = x->a, *b = x->b;
	if (b->isdir || b->merr_name || b->v)
		return EPERM;
	if ((x->flags & RENAME_NOREPLACE) && x->sb)
		return EEXIST;
	if (!a->vwritable)
		return EROFS;
	if (fsi_view_lazy(a->v))
		return EPERM; /* an archive's resource to a scratch name: its bytes are not at hand */
	struct overlay *o = fsi_ovl_find(x->ms, a->vpath);
	const char *txt = o ? o->text.data : a->v->data;
	size_t tl = o ? o->text.len : a->v->size;
	struct node *xn = fsi_find_child(fs, x->p, x->name);
	int r = 0;
	struct sobj *obj = fsi_sobj_with(fs, S_IFREG | (a->si.st.st_mode & 0666), a->si.st.st_uid,
					 a->si.st.st_gid, txt, tl, &r);
	if (!obj)
		return r;
	obj->base_valid = !o || o->base_valid;
	obj->base_hash = o ? o->base_hash : fsi_text_hash(txt, tl);
	/* What the editor read: the base of its next text under the view's name. */
	if (o && o->base_valid)
		fsi_pbase_set(x->ms, a->vpath, o->base_hash);
	if (x->sb) {
		struct node *tn = fsi_find_child(fs, x->np, x->newname);
		if (tn && tn != xn)
			fsi_nh_remove(fs, tn);
		fsi_sname_remove(fs, x->ms, x->sb);
	}
	if (!fsi_sname_add(x->ms, b->vpath, obj)) {
		fsi_sobj_discard(fs, obj);
		return ENOMEM;
	}
	if (o)
		fsi_ovl_drop(fs, x->ms, a->vpath);
	if (xn && xn->kind == K_VFILE) {
		/* The kernel moved this inode to the new name. */
		xn->kind = K_SCRATCH;
		xn->sobj = obj;
		obj->refs++;
		fsi_node_move(fs, xn, x->np, x->newname, b->vpath);
	}
	return 0;
}

/*
 * The rename table (docs/architecture.md "Renames"): rows the source kind,
 * columns the target kind. Pairs that cannot occur (an archive target
 * kind beside a source that is not at the top of an archive folder) get
 * the handler of what the names are besides.
 */
/* clang-format off */
static const rename_fn rename_table[RS_N][RD_N] = {
	/*               RES             NEWRES          BADNAME         FIXED     VIEW          HIDDEN        SCRATCH          NONE */
	[RS_RES] =     { rn_arch_rename, rn_arch_rename, rn_badname,     rn_eperm, rn_eperm,     rn_eperm,     rn_view_move,    rn_view_move },
	[RS_FIXED] =   { rn_eperm,       rn_eperm,       rn_eperm,       rn_eperm, rn_eperm,     rn_eperm,     rn_eperm,        rn_eperm },
	[RS_GONE] =    { rn_gone,        rn_gone,        rn_gone,        rn_gone,  rn_gone,      rn_gone,      rn_gone,         rn_gone },
	[RS_SCRATCH] = { rn_commit,      rn_arch_add,    rn_badname,     rn_eperm, rn_commit,    rn_commit,    rn_scratch_move, rn_scratch_move },
	[RS_VIEW] =    { rn_eperm,       rn_view_move,   rn_view_move,   rn_eperm, rn_eperm,     rn_eperm,     rn_view_move,    rn_view_move },
};
/* clang-format on */

/* The kinds of the two names of @p x (fs->mu held; x->ms not NULL). */
static void rename_kinds(lfs_fs *fs, struct rn *x, enum rsrc *src)
{
	struct mloc *a = x->a, *b = x->b;
	bool a_hid = a->v && fsi_hidden_active(fs, x->ms, a->vpath);
	bool b_hid = b->v && fsi_hidden_active(fs, x->ms, b->vpath);
	x->sa = !a->v ? fsi_sname_find(x->ms, a->vpath) : NULL;
	x->sb = !b->v ? fsi_sname_find(x->ms, b->vpath) : NULL;
	/* At the top of an archive folder: resources renamed in the archive, a
	 * scratch file renamed to a resource name added to it (docs/archives.md). */
	bool top = a->archive && b->archive;
	lfs_cname_kind bk = top ? aname(b, x->newname, x->why) : LFS_CNAME_SCRATCH;
	bool a_res = top && ((a->v && !a_hid) || a->isdir);
	x->dst = top && ((b->v && !b_hid) || b->isdir) ? RD_RES
		 : bk == LFS_CNAME_BAD			? RD_BADNAME
		 : bk == LFS_CNAME_RESOURCE		? RD_NEWRES
		 : b->isdir || b->merr_name		? RD_FIXED
		 : b->v && !b_hid			? RD_VIEW
		 : b->v					? RD_HIDDEN
		 : x->sb				? RD_SCRATCH
							: RD_NONE;
	/* a resource to a name that is not the archive's is a view / folder besides */
	*src = a_res && x->dst <= RD_BADNAME ? RS_RES
	       : a->isdir || a->merr_name    ? RS_FIXED
	       : x->sa			     ? RS_SCRATCH
	       : a->v && !a_hid		     ? RS_VIEW
					     : RS_GONE;
}

static int model_rename(lfs_fs *fs, struct node *p, const char *name, struct node *np,
			const char *newname, unsigned flags)
{
	if (flags & ~(unsigned)RENAME_NOREPLACE)
		return EINVAL; /* RENAME_EXCHANGE/WHITEOUT: not in model folders */
	struct mloc a, b;
	int r = mloc_get(fs, p, name, &a);
	if (r)
		return r;
	r = mloc_get(fs, np, newname, &b);
	if (r) {
		mloc_put(fs, &a);
		return r;
	}
	struct rn x = { .a = &a, .b = &b, .p = p, .np = np, .name = name, .newname = newname,
			.flags = flags };
	fs_lock(fs);
	x.ms = fsi_ms_get(fs, a.model->rel);
	enum rsrc src = RS_GONE;
	if (x.ms)
		rename_kinds(fs, &x, &src);
	r = x.ms ? rename_table[src][x.dst](fs, &x) : ENOMEM;
	fs_unlock(fs);
	if (!r && x.commit)
		r = fsi_rename_commit(fs, x.ms, &a, &b, p, name, np, newname);
	if (!r && x.aop)
		r = archive_rename(fs, x.ms, &a, &b, p, name, np, newname, x.add, x.data, x.n);
	free(x.data);
	mloc_put(fs, &a);
	mloc_put(fs, &b);
	return r;
}

static int model_link(lfs_fs *fs, struct node *src, struct node *np, const char *newname,
		      lfs_fs_entry *e)
{
	struct mloc b;
	int r = mloc_get(fs, np, newname, &b);
	if (r)
		return r;
	fs_lock(fs);
	bool other = b.model != model_of(src);
	fs_unlock(fs);
	if (other) {
		mloc_put(fs, &b);
		return EXDEV;
	}
	fs_lock(fs);
	struct mstate *ms = fsi_ms_get(fs, b.model->rel);
	struct node *c = NULL;
	struct sname *sn = NULL;
	if (!ms)
		r = ENOMEM;
	else if ((b.v && !fsi_hidden_active(fs, ms, b.vpath)) || b.isdir || fsi_sname_find(ms, b.vpath) ||
		 (b.merr_name && ms->errs))
		r = EEXIST;
	else if (b.v || b.merr_name)
		r = EPERM;
	else if (!b.writable)
		r = EROFS;
	else if (src->kind == K_SCRATCH) {
		sn = fsi_sname_add(ms, b.vpath, src->sobj); /* a second name of the same file */
		r = sn ? 0 : ENOMEM;
	} else {
		/* link(view, backup): a scratch copy of the view's current text. */
		const lfs_view *v = lfs_viewset_find(&b.si.ce->vs, src->rel);
		struct overlay *o = fsi_ovl_find(ms, src->rel);
		if (!v) {
			r = ESTALE;
		} else if (!o && fsi_view_lazy(v)) {
			r = EPERM; /* an archive's resource: its bytes are not at hand here */
		} else {
			const char *txt = o ? o->text.data : v->data;
			size_t tl = o ? o->text.len : v->size;
			struct sobj *obj = fsi_sobj_with(fs, S_IFREG | (b.si.st.st_mode & 0666),
						     b.si.st.st_uid, b.si.st.st_gid, txt, tl, &r);
			if (obj) {
				obj->base_valid = !o || o->base_valid;
				obj->base_hash = o ? o->base_hash : fsi_text_hash(txt, tl);
				sn = fsi_sname_add(ms, b.vpath, obj);
				if (!sn) {
					fsi_sobj_discard(fs, obj);
					r = ENOMEM;
				}
			}
		}
	}
	if (sn)
		c = fsi_scratch_node(fs, np, newname, sn, &r);
	return name_made(fs, c, r, &b, e);
}

/* rmdir in a model folder: generated folders stay (but a model inside an
 * archive: its resource is removed), other names are no folders. */
int fsi_model_rmdir(lfs_fs *fs, const struct nodeinfo *p, const char *name)
{
	struct mloc m;
	int r = mloc_get(fs, p->node, name, &m);
	if (r)
		return r;
	fs_lock(fs);
	struct mstate *ms = m.archive && m.isdir ? fsi_ms_get(fs, m.model->rel)
						 : fsi_ms_find(fs, m.model->rel);
	if (m.isdir && m.archive) {
		/* a model inside an archive: its resource goes (below, unlocked) */
		fs_unlock(fs);
		r = ms ? archive_remove(fs, ms, &m, p->node, name) : ENOMEM;
		mloc_put(fs, &m);
		return r;
	}
	if (m.isdir)
		r = EPERM; /* generated folders stay */
	else if ((m.v && !fsi_hidden_active(fs, ms, m.vpath)) || fsi_sname_find(ms, m.vpath) ||
		 (m.merr_name && ms && ms->errs))
		r = ENOTDIR;
	else
		r = ENOENT;
	fs_unlock(fs);
	mloc_put(fs, &m);
	return r;
}

/* rename out of a model or view folder: inside the same model folder only. */
int fsi_model_rename_op(lfs_fs *fs, const struct nodeinfo *p, const char *name,
		    const struct nodeinfo *np, const char *newname, unsigned flags)
{
	if (!fsi_kind_ops(np->kind)->model_ns)
		return fsi_rename_elsewhere(p, np);
	fs_lock(fs);
	bool same = model_of(p->node) == model_of(np->node);
	fs_unlock(fs);
	return same ? model_rename(fs, p->node, name, np->node, newname, flags) : EXDEV;
}

/* link of a view or scratch file into a model or view folder. */
int fsi_model_link_op(lfs_fs *fs, const struct nodeinfo *ni, const struct nodeinfo *np,
		  const char *newname, lfs_fs_entry *e)
{
	if (!fsi_kind_ops(np->kind)->model_ns)
		return fsi_link_elsewhere(np);
	return model_link(fs, ni->node, np->node, newname, e);
}

/*
 * FLUSH of a scratch file: one created at the top of an archive folder
 * under a resource name (sobj.resource) is added to the archive with its
 * bytes; the name then is that resource (a view), or, when the archive
 * lists it under another spelling (the extension in lower case), the
 * scratch name goes. Other scratch files stay in memory. A refusal is the
 * close's error (EINVAL), its message in the folder's errors.txt; the
 * bytes stay in the scratch file.
 */
int fsi_scratch_flush(lfs_fs *fs, const struct nodeinfo *ni, const lfs_fs_ctx *ctx)
{
	(void)ctx;
	fs_lock(fs);
	struct node *c = ni->node;
	struct sobj *o = c->kind == K_SCRATCH ? c->sobj : NULL;
	bool need = o && o->resource && S_ISREG(o->mode);
	struct node *model = need ? model_of(c) : NULL;
	struct mstate *ms = need ? fsi_ms_find(fs, model->rel) : NULL;
	char *vpath = need && ms ? strdup(c->rel) : NULL;
	size_t n = need ? o->data.len : 0;
	uint8_t *data = vpath ? malloc(n ? n : 1) : NULL;
	if (data)
		memcpy(data, o->data.data, n);
	if (o)
		o->refs++; /* kept while unlocked */
	fs_unlock(fs);
	if (!need || !ms) {
		if (o) {
			fs_lock(fs);
			fsi_sobj_unref(fs, o);
			fs_unlock(fs);
		}
		return 0;
	}
	int r = data ? 0 : ENOMEM;
	char listed[256];
	listed[0] = '\0';
	if (!r) {
		struct fsi_aop op = { .what = FSI_AOP_ADD, .name = vpath, .data = data, .dn = n };
		r = fsi_archive_op(fs, ms, model, &op, listed);
	}
	fs_lock(fs);
	if (!r) {
		o->resource = false;
		struct sname *sn = fsi_sname_find(ms, vpath);
		if (sn && sn->obj == o)
			fsi_sname_remove(fs, ms, sn);
		if (c->kind == K_SCRATCH && c->sobj == o && strcmp(listed, vpath) == 0) {
			fsi_sobj_unref(fs, c->sobj);
			c->sobj = NULL;
			c->kind = K_VFILE; /* the resource it became */
		} else if (c->kind == K_SCRATCH) {
			fsi_nh_remove(fs, c);
		}
	}
	fsi_sobj_unref(fs, o);
	fs_unlock(fs);
	free(data);
	free(vpath);
	return r;
}
