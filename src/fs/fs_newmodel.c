/**
 * @file fs_newmodel.c
 * New models from text (docs/editing.md "New models"): `mkdir new.mdl` in
 * a source folder makes a pending model folder, in memory (nothing in
 * SOURCE yet; K_NEWDIR, its files K_NEWFILE). Saving its model.mdl (the
 * close of a changed model.mdl) compiles the text, its model name set to
 * the folder's resref (the row's name_valid and text_rename), into the binary `new.mdl` in SOURCE
 * (lfs_replace_file: atomic); a bad text is refused with the compiler's
 * `file:line:col` message in the folder's errors.txt and nothing is written.
 * Every other name in a pending folder (meshes/, anims/, thumbnail.png,
 * errors.txt copied by `cp -r`) is kept in memory and not used: the model
 * is made from model.mdl alone. `mv a.mdl b.mdl` of a model folder renames
 * the model file, its model name following (fsi_newmdl_rename_model).
 */
#define _GNU_SOURCE
#include "fs_int.h"
#include "membuf.h"
#include "replace.h"
#include "source.h"

#include "registry/format.h"
#include "registry/viewset.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* The whole-model text view a pending folder compiles. */
#define NM_TEXT "model.mdl"
/* Entry timeout of a pending model folder, seconds: after its
 * model.mdl is compiled, the kernel keeps walking into the pending folder
 * for this long, so that the rest of a `cp -r` lands there (in memory)
 * instead of in the new model folder, whose generated names would refuse it. */
#define NM_ENTRY_TIMEOUT 5.0
/* Largest file kept in a pending folder, bytes. */
#define NM_MAX (256u << 20)

/* One name inside a pending model folder. */
struct nment {
	char *path;          /* relative to the folder: "model.mdl", "meshes/a.obj" */
	bool dir;
	bool dirty;          /* written since the last compile */
	mode_t mode;         /* permission bits */
	lfs_membuf data;
	struct timespec mtime;
	uint64_t ino;
	struct nment *next;
};

/* A pending model folder (fs->newmdls). */
struct newmdl {
	char *rel;           /* "folder/new.mdl" in SOURCE */
	uint64_t ino;
	bool done;           /* compiled: SOURCE has the model, the folder is a relic */
	struct nment *ents;
	struct newmdl *next;
};

static _Atomic uint64_t nm_ino_next = 1;

/* A fresh st_ino for a pending name (high bit set: apart from SOURCE's). */
static uint64_t nm_ino(void)
{
	return (UINT64_C(1) << 62) | atomic_fetch_add(&nm_ino_next, 1);
}

/* Is @p name one a pending model folder may take: a format that compiles it
 * from text and names its models (lfs_format.name_valid, .text_rename),
 * whose extension @p name has. */
static const lfs_format *nm_format(const char *name)
{
	const lfs_format *f = lfs_format_compiler_for(name);
	return f && f->name_valid && f->text_rename && lfs_format_has_extension(f, name) ? f : NULL;
}

/* The resref of @p name ("a.mdl" -> "a", lower case) into @p out (≥ 64 bytes). */
static void resref_of(const char *name, char *out, size_t outsz)
{
	size_t n = strlen(name);
	const char *dot = strrchr(name, '.');
	if (dot)
		n = (size_t)(dot - name);
	if (n >= outsz)
		n = outsz - 1;
	for (size_t i = 0; i < n; i++)
		out[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] + 32 : name[i]);
	out[n] = '\0';
}

/* Why @p name cannot be a new model's name in format @p f (NULL: it can), for messages. */
static const char *nm_name_refusal(const lfs_format *f, const char *name)
{
	char rr[256];
	resref_of(name, rr, sizeof(rr));
	const char *why = NULL;
	return f->name_valid(rr, &why) ? NULL : why;
}

/* The pending folder holding @p rel, and *@p sub the path inside it ("" = itself). fs->mu held. */
static struct newmdl *nm_find(lfs_fs *fs, const char *rel, const char **sub)
{
	for (struct newmdl *m = fs->newmdls; m; m = m->next) {
		size_t l = strlen(m->rel);
		if (strncmp(rel, m->rel, l) == 0 && (rel[l] == '\0' || rel[l] == '/')) {
			*sub = rel[l] ? rel + l + 1 : rel + l;
			return m;
		}
	}
	return NULL;
}

static struct nment *ent_find(struct newmdl *m, const char *sub)
{
	for (struct nment *e = m->ents; e; e = e->next)
		if (strcmp(e->path, sub) == 0)
			return e;
	return NULL;
}

static void ent_free(struct nment *e)
{
	lfs_membuf_free(&e->data);
	free(e->path);
	free(e);
}

/* Unlink entry @p en of pending folder @p m and forget the node @p name of
 * folder node @p dir the kernel may hold for it (fs->mu held). */
static void ent_remove(lfs_fs *fs, struct newmdl *m, struct nment *en, struct node *dir,
		       const char *name)
{
	struct nment **pp = &m->ents;
	while (*pp != en)
		pp = &(*pp)->next;
	*pp = en->next;
	ent_free(en);
	struct node *c = fsi_find_child(fs, dir, name);
	if (c)
		fsi_nh_remove(fs, c);
}

static void nm_free(struct newmdl *m)
{
	while (m->ents) {
		struct nment *e = m->ents;
		m->ents = e->next;
		ent_free(e);
	}
	free(m->rel);
	free(m);
}

void fsi_newmdl_free_all(lfs_fs *fs)
{
	while (fs->newmdls) {
		struct newmdl *m = fs->newmdls;
		fs->newmdls = m->next;
		nm_free(m);
	}
}

/* Attributes of pending name @p e (NULL: the folder @p m itself). */
static void nm_fill(lfs_fs *fs, const struct newmdl *m, const struct nment *e, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	bool dir = !e || e->dir;
	st->st_mode = dir ? S_IFDIR | (e ? e->mode : 0755) : S_IFREG | e->mode;
	st->st_nlink = dir ? 2 : 1;
	st->st_uid = fs->uid;
	st->st_gid = fs->gid;
	st->st_ino = e ? e->ino : m->ino;
	st->st_size = dir ? 0 : (off_t)e->data.len;
	st->st_blksize = 4096;
	st->st_blocks = (st->st_size + 511) / 512;
	st->st_mtim = st->st_ctim = st->st_atim = e ? e->mtime : fs->start;
}

/* The entry of node @p c into *@p e (fs->mu held; one lookup count). */
static int nm_entry(lfs_fs *fs, struct node *p, const char *name, const struct newmdl *m,
		    const struct nment *en, const char *rel, lfs_fs_entry *e)
{
	int r = 0;
	enum nkind k = !en || en->dir ? K_NEWDIR : K_NEWFILE;
	struct node *c = fsi_child_for(fs, p, name, k, 0, en ? en->ino : m->ino, rel, &r);
	if (!c)
		return r;
	node_hold(c);
	e->ino = c->id;
	e->generation = c->gen;
	nm_fill(fs, m, en, &e->attr);
	e->entry_timeout = e->attr_timeout = 0; /* in memory, changes without notice */
	if (!en) /* the folder: see NM_ENTRY_TIMEOUT */
		e->entry_timeout = NM_ENTRY_TIMEOUT;
	return 0;
}

int fsi_newmdl_lookup(lfs_fs *fs, struct node *p, const char *name, const char *rel, lfs_fs_entry *e)
{
	fs_lock(fs);
	const char *sub;
	struct newmdl *m = nm_find(fs, rel, &sub);
	int r = ENOENT;
	if (m && !sub[0] && !m->done)
		r = nm_entry(fs, p, name, m, NULL, rel, e);
	fs_unlock(fs);
	return r;
}

int fsi_newmdl_mkdir(lfs_fs *fs, struct node *p, const char *name, const char *rel, mode_t mode,
		     lfs_fs_entry *e)
{
	const lfs_format *f = nm_format(name);
	if (!f)
		return ENOSYS; /* not a model name: a plain folder (the caller) */
	const char *why = nm_name_refusal(f, name);
	if (why) {
		fsi_log(fs, LFS_LOG_WARNING, "mkdir %s: error: not a valid model name: %s", rel, why);
		return EINVAL;
	}
	struct stat st;
	if (fstatat(fs->rootfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return EEXIST;
	fs_lock(fs);
	const char *sub;
	struct newmdl *m = nm_find(fs, rel, &sub);
	int r = 0;
	if (m && !m->done) {
		r = EEXIST;
	} else {
		if (m) { /* a compiled one whose model file went: forget it */
			struct newmdl **pp = &fs->newmdls;
			while (*pp != m)
				pp = &(*pp)->next;
			*pp = m->next;
			nm_free(m);
		}
		m = calloc(1, sizeof(*m));
		if (!m || !(m->rel = strdup(rel))) {
			free(m);
			r = ENOMEM;
		} else {
			(void)mode;
			m->ino = nm_ino();
			m->next = fs->newmdls;
			fs->newmdls = m;
			p->dirty_gen++; /* the folder's listing shows it */
			r = nm_entry(fs, p, name, m, NULL, rel, e);
			fsi_log(fs, LFS_LOG_INFO, "%s: new model folder (in memory until its %s is saved)",
				rel, NM_TEXT);
		}
	}
	fs_unlock(fs);
	return r;
}

int fsi_newmdl_rmdir(lfs_fs *fs, struct node *p, const char *name, const char *rel)
{
	fs_lock(fs);
	const char *sub;
	struct newmdl *m = nm_find(fs, rel, &sub);
	int r = ENOENT;
	if (m && !sub[0] && !m->done) {
		r = m->ents ? ENOTEMPTY : 0;
		if (!r) {
			struct newmdl **pp = &fs->newmdls;
			while (*pp != m)
				pp = &(*pp)->next;
			*pp = m->next;
			nm_free(m);
			struct node *c = fsi_find_child(fs, p, name);
			if (c)
				fsi_nh_remove(fs, c);
			p->dirty_gen++;
		}
	}
	fs_unlock(fs);
	return r;
}

int fsi_newmdl_list(lfs_fs *fs, struct node *dir, struct dirsnap *s, size_t *cap)
{
	int err = 0;
	fs_lock(fs);
	for (struct newmdl *m = fs->newmdls; m && !err; m = m->next) {
		const char *slash = strrchr(m->rel, '/');
		size_t dl = slash ? (size_t)(slash - m->rel) : 0;
		const char *base = slash ? slash + 1 : m->rel;
		bool here = !slash ? strcmp(dir->rel, ".") == 0
				   : strlen(dir->rel) == dl && strncmp(dir->rel, m->rel, dl) == 0;
		if (here && !m->done)
			err = fsi_snap_add(s, cap, base, strlen(base), m->ino, DT_DIR);
	}
	fs_unlock(fs);
	return err;
}

/* ---- compile: model.mdl of a pending folder -> the binary in SOURCE ---- */

/* Is @p m still a pending folder of fs (not freed by an rmdir meanwhile)? fs->mu held. */
static bool nm_alive(lfs_fs *fs, const struct newmdl *m)
{
	for (const struct newmdl *x = fs->newmdls; x; x = x->next)
		if (x == m)
			return true;
	return false;
}

/* The message of a refused or renamed save: errors.txt of pending folder @p m (fs->mu held). */
static void nm_message(struct newmdl *m, const char *text)
{
	struct nment *e = ent_find(m, LFS_FS_MODEL_ERRORS_NAME);
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e || !(e->path = strdup(LFS_FS_MODEL_ERRORS_NAME))) {
			free(e);
			return;
		}
		e->mode = 0444;
		e->ino = nm_ino();
		e->next = m->ents;
		m->ents = e;
	}
	if (lfs_membuf_set(&e->data, text, strlen(text)) == 0)
		e->mtime = fsi_now_real();
}

/* Text -> binary with the model name set to @p resref (@p msg: the rename warning and the error). */
static int nm_build(const lfs_format *f, int dirfd, const char *dir, const char *vname,
		     const char *resref, const char *text, size_t n, uint8_t **out, size_t *outn,
		     char *msg, size_t msgsz)
{
	char old[128];
	char *renamed = NULL;
	size_t rn = 0;
	msg[0] = '\0';
	long k = f->text_rename(text, n, resref, &renamed, &rn, old, sizeof(old));
	if (k < 0)
		return ENOMEM;
	if (k > 0)
		snprintf(msg, msgsz,
			 "%s: warning: model name '%s' renamed to '%s', the file's resref (%ld names: "
			 "newmodel, beginmodelgeom, donemodel, animations, the node named like the model)\n",
			 vname, old, resref, k);
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_sibling_ctx sc = { dirfd, dir, NM_MAX };
	lfs_warnings warn = { 0 };
	const lfs_siblings sib = { lfs_sibling_model_read, &sc, &warn };
	lfs_err e = f->compile(vname, (const uint8_t *)(renamed ? renamed : text), renamed ? rn : n,
			       &sib, out, outn, &err);
	free(renamed);
	if (e == LFS_OK)
		return 0;
	size_t ml = strlen(msg);
	if (e == LFS_ERR_PARSE)
		snprintf(msg + ml, msgsz - ml, "%s\n", err.msg);
	else
		snprintf(msg + ml, msgsz - ml, "%s: error: %s\n", vname, err.msg);
	return e == LFS_ERR_NOMEM ? ENOMEM : EINVAL;
}

/* Compile model.mdl of pending folder @p m into SOURCE (unlocked; @p m stays listed). */
static int nm_commit(lfs_fs *fs, struct newmdl *m, struct node *top)
{
	fs_lock(fs);
	struct nment *t = nm_alive(fs, m) ? ent_find(m, NM_TEXT) : NULL;
	char *rel = t ? strdup(m->rel) : NULL;
	size_t n = t ? t->data.len : 0;
	char *text = t && rel ? malloc(n ? n : 1) : NULL;
	if (text)
		memcpy(text, t->data.data, n);
	if (t)
		t->dirty = false;
	fs_unlock(fs);
	if (!text) {
		free(rel);
		return t ? ENOMEM : 0;
	}
	const char *base = lfs_source_basename(rel);
	char resref[64], dir[PATH_MAX];
	resref_of(base, resref, sizeof(resref));
	size_t dl = (size_t)(base - rel);
	snprintf(dir, sizeof(dir), "%.*s", (int)(dl ? dl - 1 : 0), rel);
	char msg[2048];
	uint8_t *bin = NULL;
	size_t bn = 0;
	int r = nm_build(nm_format(base), fs->rootfd, dir, NM_TEXT, resref, text, n, &bin, &bn, msg,
			 sizeof(msg));
	free(text);
	struct stat st;
	if (!r && fstatat(fs->rootfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		snprintf(msg, sizeof(msg), "%s: error: %s appeared in the source folder meanwhile; not "
			 "replaced\n", NM_TEXT, base);
		r = EEXIST;
	}
	char what[128] = "";
	if (!r) {
		struct stat orig;
		memset(&orig, 0, sizeof(orig));
		orig.st_mode = S_IFREG | 0644;
		orig.st_uid = fs->uid;
		orig.st_gid = fs->gid;
		int kept = 0;
		r = lfs_replace_file(fs->rootfd, rel, bin, bn, &orig, &st, &kept, what, sizeof(what));
		if (r)
			snprintf(msg, sizeof(msg), "%s: error: %s: %s; nothing was written\n", NM_TEXT,
				 what, strerror(r));
	}
	free(bin);
	fs_lock(fs);
	bool alive = nm_alive(fs, m);
	if (r && alive) {
		nm_message(m, msg);
	} else if (!r) {
		if (alive)
			m->done = true;
		/* The model folder SOURCE now has takes the name: the renamed-model warning is its errors.txt. */
		if (msg[0]) {
			if (alive)
				nm_message(m, msg);
			struct mstate *ms = fsi_ms_get(fs, rel);
			if (ms)
				fsi_merr_set(ms, NM_TEXT, msg);
		}
		/* The folder's node stays (the kernel's entry with it until it expires:
		 * NM_ENTRY_TIMEOUT); the next lookup of the name finds the model. */
		(void)top;
	}
	fs_unlock(fs);
	if (r)
		fsi_log(fs, LFS_LOG_WARNING, "%s: new model refused: %.*s", rel, (int)(strlen(msg) ? strlen(msg) - 1 : 0),
			msg);
	else
		fsi_log(fs, LFS_LOG_INFO, "%s: new model compiled (%zu bytes)%s%.*s", rel, bn,
			msg[0] ? "; " : "", (int)(strlen(msg) ? strlen(msg) - 1 : 0), msg);
	free(rel);
	return r;
}

/* ---- the operations of pending folders and their files ---- */

/* The pending folder and entry of node @p n (fs->mu held); NULL when gone. */
static struct newmdl *nm_of_node(lfs_fs *fs, struct node *n, struct nment **e)
{
	const char *sub;
	struct newmdl *m = nm_find(fs, n->rel, &sub);
	*e = m && sub[0] ? ent_find(m, sub) : NULL;
	if (m && sub[0] && !*e)
		return NULL;
	return m;
}

static int nm_getattr(lfs_fs *fs, const struct nodeinfo *ni, struct stat *st)
{
	fs_lock(fs);
	struct nment *e;
	struct newmdl *m = nm_of_node(fs, ni->node, &e);
	if (m)
		nm_fill(fs, m, e, st);
	fs_unlock(fs);
	return m ? 0 : ESTALE;
}

static int nm_lookup(lfs_fs *fs, const struct nodeinfo *p, const char *name, lfs_fs_entry *e)
{
	char *rel = fsi_join_rel(p->node->rel, name);
	if (!rel)
		return ENAMETOOLONG;
	fs_lock(fs);
	const char *sub;
	struct newmdl *m = nm_find(fs, rel, &sub);
	struct nment *en = m ? ent_find(m, sub) : NULL;
	int r = en ? nm_entry(fs, p->node, name, m, en, rel, e) : ENOENT;
	fs_unlock(fs);
	free(rel);
	return r;
}

static int nm_snap(lfs_fs *fs, const struct nodeinfo *p, off_t off, uint64_t parent_ino,
		   struct dirsnap **out)
{
	(void)off;
	struct dirsnap *s = calloc(1, sizeof(*s));
	if (!s)
		return ENOMEM;
	s->refs = 1;
	size_t cap = 0;
	fs_lock(fs);
	const char *sub;
	struct newmdl *m = nm_find(fs, p->node->rel, &sub);
	size_t sl = m ? strlen(sub) : 0;
	int err = m ? fsi_snap_add(s, &cap, ".", 1, p->node->sino, DT_DIR) : ESTALE;
	if (!err)
		err = fsi_snap_add(s, &cap, "..", 2, parent_ino, DT_DIR);
	for (struct nment *e = m ? m->ents : NULL; e && !err; e = e->next) {
		const char *nm = e->path;
		if (sl && (strncmp(nm, sub, sl) != 0 || nm[sl] != '/'))
			continue;
		nm += sl ? sl + 1 : 0;
		if (!strchr(nm, '/'))
			err = fsi_snap_add(s, &cap, nm, strlen(nm), e->ino, e->dir ? DT_DIR : DT_REG);
	}
	fs_unlock(fs);
	if (err) {
		fsi_snap_unref(s);
		return err;
	}
	if (s->n > 3)
		qsort(s->ents + 2, s->n - 2, sizeof(*s->ents), fsi_dsent_cmp);
	*out = s;
	return 0;
}

static int nm_mknew(lfs_fs *fs, const struct nodeinfo *p, const char *name, const struct newobj *w,
		    const lfs_fs_ctx *ctx, lfs_fs_entry *e)
{
	bool file = w->what == NEW_FILE || (w->what == NEW_NODE && S_ISREG(w->mode));
	if (!file && w->what != NEW_DIR)
		return EPERM; /* symlinks, fifos...: not in a model */
	if (fsi_is_dot(name) || strchr(name, '/') || !name[0])
		return EINVAL;
	char *rel = fsi_join_rel(p->node->rel, name);
	if (!rel)
		return ENAMETOOLONG;
	fs_lock(fs);
	const char *sub;
	struct newmdl *m = nm_find(fs, rel, &sub);
	struct nment *en = m ? ent_find(m, sub) : NULL;
	int r = 0;
	if (!m) {
		r = ESTALE;
	} else if (en && (!file || en->dir || (w->what == NEW_FILE && (w->flags & O_EXCL)))) {
		r = EEXIST;
	} else if (en) {
		if (w->flags & O_TRUNC)
			en->data.len = 0;
	} else if (!(en = calloc(1, sizeof(*en))) || !(en->path = strdup(sub))) {
		free(en);
		en = NULL;
		r = ENOMEM;
	} else {
		en->dir = !file;
		en->mode = w->mode & 07777 & ~(ctx ? ctx->umask : 0);
		en->ino = nm_ino();
		en->mtime = fsi_now_real();
		en->next = m->ents;
		m->ents = en;
	}
	if (!r)
		r = nm_entry(fs, p->node, name, m, en, rel, e);
	fs_unlock(fs);
	free(rel);
	return r;
}

/* unlink (@p dir false) or rmdir of a name in a pending folder. */
static int nm_remove(lfs_fs *fs, const struct nodeinfo *p, const char *name, bool dir)
{
	char *rel = fsi_join_rel(p->node->rel, name);
	if (!rel)
		return ENAMETOOLONG;
	fs_lock(fs);
	const char *sub;
	struct newmdl *m = nm_find(fs, rel, &sub);
	struct nment *en = m ? ent_find(m, sub) : NULL;
	int r = !en ? ENOENT : en->dir != dir ? (dir ? ENOTDIR : EISDIR) : 0;
	size_t sl = en ? strlen(en->path) : 0;
	for (struct nment *x = m && !r && dir ? m->ents : NULL; x; x = x->next)
		if (strncmp(x->path, en->path, sl) == 0 && x->path[sl] == '/')
			r = ENOTEMPTY;
	if (!r) {
		ent_remove(fs, m, en, p->node, name);
	}
	fs_unlock(fs);
	free(rel);
	return r;
}

static int nm_unlink(lfs_fs *fs, const struct nodeinfo *p, const char *name)
{
	return nm_remove(fs, p, name, false);
}

static int nm_rmdir(lfs_fs *fs, const struct nodeinfo *p, const char *name)
{
	return nm_remove(fs, p, name, true);
}

/* rename of a file inside one pending folder (an editor's save: temp -> model.mdl). */
static int nm_rename(lfs_fs *fs, const struct nodeinfo *p, const char *name, const struct nodeinfo *np,
		     const char *newname, unsigned flags)
{
	if (np->kind != K_NEWDIR)
		return EXDEV;
	if (flags & ~(unsigned)RENAME_NOREPLACE)
		return EINVAL;
	char *a = fsi_join_rel(p->node->rel, name), *b = fsi_join_rel(np->node->rel, newname);
	int r = a && b ? 0 : ENAMETOOLONG;
	struct newmdl *m = NULL;
	bool commit = false;
	fs_lock(fs);
	const char *sa = NULL, *sb = NULL;
	m = r ? NULL : nm_find(fs, a, &sa);
	struct nment *ea = m ? ent_find(m, sa) : NULL;
	struct newmdl *mb = r ? NULL : nm_find(fs, b, &sb);
	struct nment *eb = mb ? ent_find(mb, sb) : NULL;
	char *nv = NULL;
	if (r) {
		/* too long */
	} else if (!ea) {
		r = ENOENT;
	} else if (mb != m) {
		r = EXDEV;
	} else if (ea->dir || (eb && eb->dir)) {
		r = EPERM; /* folders of a pending model are not renamed */
	} else if (eb && (flags & RENAME_NOREPLACE)) {
		r = EEXIST;
	} else if (!(nv = strdup(sb))) {
		r = ENOMEM;
	} else if (ea != eb) {
		if (eb) {
			ent_remove(fs, m, eb, np->node, newname);
		}
		free(ea->path);
		ea->path = nv;
		nv = NULL;
		struct node *sn = fsi_find_child(fs, p->node, name);
		if (sn)
			fsi_node_move(fs, sn, np->node, newname, NULL);
		commit = strcmp(sb, NM_TEXT) == 0 && !m->done;
		ea->dirty = false;
	}
	free(nv);
	struct node *top = NULL;
	if (commit) {
		top = np->node;
		while (top && top->parent && top->parent->kind == K_NEWDIR)
			top = top->parent;
	}
	fs_unlock(fs);
	if (commit)
		r = nm_commit(fs, m, top);
	free(a);
	free(b);
	return r;
}

static int nm_read(lfs_fs *fs, const struct nodeinfo *ni, size_t size, off_t off, lfs_fs_read *r)
{
	fs_lock(fs);
	struct nment *e;
	struct newmdl *m = nm_of_node(fs, ni->node, &e);
	int err = m && e ? fsi_read_copy(r, e->data.data, e->data.len, size, off) : ESTALE;
	fs_unlock(fs);
	return err;
}

static int nm_write(lfs_fs *fs, const struct nodeinfo *ni, const char *buf, size_t size, off_t off,
		    const lfs_fs_ctx *ctx, size_t *written)
{
	(void)ctx;
	fs_lock(fs);
	struct nment *e;
	struct newmdl *m = nm_of_node(fs, ni->node, &e);
	int r = m && e ? lfs_membuf_write(&e->data, buf, size, (uint64_t)off, NM_MAX) : ESTALE;
	if (!r) {
		e->dirty = true;
		e->mtime = fsi_now_real();
		*written = size;
	}
	fs_unlock(fs);
	return r;
}

static int nm_setattr(lfs_fs *fs, const struct nodeinfo *ni, const struct stat *a, int to_set)
{
	fs_lock(fs);
	struct nment *e;
	struct newmdl *m = nm_of_node(fs, ni->node, &e);
	int r = m ? 0 : ESTALE;
	if (!r && (to_set & LFS_SET_SIZE)) {
		r = !e || e->dir ? EISDIR : a->st_size < 0 ? EINVAL
			: lfs_membuf_truncate(&e->data, (uint64_t)a->st_size, NM_MAX);
		if (!r) {
			e->dirty = true;
			e->mtime = fsi_now_real();
		}
	}
	if (!r && e && (to_set & LFS_SET_MODE))
		e->mode = a->st_mode & 07777;
	if (!r && e && (to_set & LFS_SET_MTIME))
		e->mtime = a->st_mtim;
	fs_unlock(fs);
	return r; /* owner and times of the folder itself: accepted, not kept */
}

/* Close of a changed model.mdl at the top of a pending folder: the compile. */
static int nm_flush(lfs_fs *fs, const struct nodeinfo *ni, const lfs_fs_ctx *ctx)
{
	(void)ctx;
	fs_lock(fs);
	struct nment *e;
	struct newmdl *m = nm_of_node(fs, ni->node, &e);
	bool commit = m && e && !m->done && e->dirty && strcmp(e->path, NM_TEXT) == 0;
	struct node *top = ni->node->parent;
	fs_unlock(fs);
	return commit ? nm_commit(fs, m, top) : 0;
}

const struct node_ops fsi_newdir_ops = {
	.is_dir = true,
	.not_file = EISDIR,
	.getattr = nm_getattr,
	.setattr = nm_setattr,
	.link = fsi_link_eperm,
	.lookup = nm_lookup,
	.snap = nm_snap,
	.mknew = nm_mknew,
	.unlink = nm_unlink,
	.rmdir = nm_rmdir,
	.rename = nm_rename,
};

const struct node_ops fsi_newfile_ops = {
	.volatile_attr = true,
	.getattr = nm_getattr,
	.read = nm_read,
	.write = nm_write,
	.setattr = nm_setattr,
	.flush = nm_flush,
	.link = fsi_link_eperm,
};

/* ---- mv a.mdl b.mdl ---- */

/*
 * The bytes of model @p data (@p n bytes, file @p base) with its model name
 * set to @p resref: the format's apply of its own model.mdl text with the
 * names changed (the layout and every other byte stay, as any save of
 * model.mdl). *@p out NULL: the name already is @p resref. @p msg: the
 * warning, or the error. 0 or an errno.
 */
static int renamed_bytes(const lfs_format *f, int dirfd, const char *dir, const char *base,
			 const char *resref, const uint8_t *data, size_t n, uint8_t **out,
			 size_t *outn, char *msg, size_t msgsz)
{
	*out = NULL;
	msg[0] = '\0';
	lfs_viewset vs;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	if (lfs_views_build(base, data, n, NULL, &vs, &err) != LFS_OK) {
		snprintf(msg, msgsz, "%s: error: %s\n", base, err.msg);
		return EINVAL;
	}
	const lfs_view *v = lfs_viewset_find(&vs, NM_TEXT);
	char old[128], *txt = NULL;
	size_t tn = 0;
	long k = v ? f->text_rename(v->data, v->size, resref, &txt, &tn, old, sizeof(old)) : 0;
	int r = k < 0 ? ENOMEM : 0;
	if (k > 0) {
		lfs_sibling_ctx sc = { dirfd, dir, NM_MAX };
		lfs_warnings warn = { 0 };
		const lfs_siblings sib = { lfs_sibling_model_read, &sc, &warn };
		if (f->apply(data, n, v, txt, tn, &sib, out, outn, &err) != LFS_OK) {
			snprintf(msg, msgsz, "%s: error: model name not renamed: %s\n", base, err.msg);
			r = EINVAL;
		} else {
			snprintf(msg, msgsz,
				 "%s: warning: model name '%s' renamed to '%s', the file's new resref "
				 "(%ld names: newmodel, beginmodelgeom, donemodel, animations, the node "
				 "named like the model)\n",
				 NM_TEXT, old, resref, k);
		}
	}
	free(txt);
	lfs_viewset_free(&vs);
	return r;
}

int fsi_newmdl_rename_model(lfs_fs *fs, const char *oldrel, const char *newrel, unsigned flags)
{
	(void)flags; /* a model is never renamed over another name: always RENAME_NOREPLACE */
	const char *ob = lfs_source_basename(oldrel), *nb = lfs_source_basename(newrel);
	const lfs_format *f = nm_format(nb);
	if (!f || nm_format(ob) != f || !f->apply)
		return EPERM; /* only models of a format compiled from text: their name follows */
	const char *why = nm_name_refusal(f, nb);
	if (why) {
		fsi_log(fs, LFS_LOG_WARNING, "rename %s -> %s: error: not a valid model name: %s",
			oldrel, newrel, why);
		return EINVAL;
	}
	char resref[64], dir[PATH_MAX], msg[2048];
	resref_of(nb, resref, sizeof(resref));
	size_t dl = (size_t)(nb - newrel);
	snprintf(dir, sizeof(dir), "%.*s", (int)(dl ? dl - 1 : 0), newrel);
	uint8_t *data = NULL, *out = NULL;
	size_t n = 0, outn = 0;
	struct stat st;
	int r = lfs_read_source(fs->rootfd, oldrel, NM_MAX, &data, &n, &st);
	if (!r)
		r = renamed_bytes(f, fs->rootfd, dir, ob, resref, data, n, &out, &outn, msg,
				  sizeof(msg));
	free(data);
	if (!r && renameat2(fs->rootfd, oldrel, fs->rootfd, newrel, RENAME_NOREPLACE) != 0)
		r = errno;
	else if (!r && out) {
		struct stat nst;
		int kept = 0;
		char what[128] = "";
		r = lfs_replace_file(fs->rootfd, newrel, out, outn, &st, &nst, &kept, what, sizeof(what));
		if (r) {
			/* the name goes back: the model is as it was */
			if (renameat2(fs->rootfd, newrel, fs->rootfd, oldrel, RENAME_NOREPLACE) != 0)
				fsi_log(fs, LFS_LOG_ERR, "rename %s -> %s: %s failed (%s), and so did the "
					"rename back: the model is %s, its old model name kept", oldrel,
					newrel, what, strerror(r), newrel);
			snprintf(msg, sizeof(msg), "%s: error: %s: %s\n", nb, what, strerror(r));
		}
	}
	free(out);
	if (r && r != EEXIST && msg[0]) {
		fsi_log(fs, LFS_LOG_WARNING, "rename %s -> %s refused: %.*s", oldrel, newrel,
			(int)(strlen(msg) - 1), msg);
	} else if (!r && msg[0]) {
		fsi_log(fs, LFS_LOG_WARNING, "rename %s -> %s: %.*s", oldrel, newrel,
			(int)(strlen(msg) - 1), msg);
		fs_lock(fs);
		struct mstate *ms = fsi_ms_get(fs, oldrel); /* follows the name (rename_source) */
		if (ms)
			fsi_merr_set(ms, NM_TEXT, msg);
		fs_unlock(fs);
	}
	return r;
}
