/**
 * @file fs_container.c
 * What the tree does for containers (archives: registry/container.h,
 * docs/archives.md), reached from the model folder operations when a
 * folder's views come from a container row:
 *   - a model candidate of an archive looked up: a model folder of its
 *     own, "<archive>/<name>", or a plain resource (fsi_member_lookup,
 *     fsi_member_is_model);
 *   - a resource's bytes, read one payload at a time into a cache entry of
 *     their own (fsi_resource_entry, fsi_view_bytes);
 *   - a model inside an archive saved: its new bytes replace its entry and
 *     the archive is replaced atomically (fsi_write_member).
 * Everything else of a model inside an archive is the ordinary model
 * folder's (fs_model.c, fs_edit.c, fs_commit.c); names at the top of an
 * archive folder are fs_scratch.c's and fs_commit.c's fsi_archive_op.
 */
#define _GNU_SOURCE
#include "fs_int.h"

#include "replace.h"
#include "source.h"

#include "registry/container.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Lookup of model candidate @p name of archive folder @p p (a K_MODEL whose
 * views list it as LFS_VIEW_MEMBER, @p vpath its view path): when its
 * payload's header is a model's, a model folder of its own,
 * "<archive>/<name>" (registry/container.h), whose st_ino is the one the
 * archive's listing gives it (fsi_view_ino), not the archive file's;
 * FSI_NOT_MEMBER when it is no model (the caller shows a plain resource).
 */
int fsi_member_lookup(lfs_fs *fs, struct node *p, const char *name, const char *vpath,
		      lfs_fs_entry *e)
{
	fs_lock(fs);
	char *rel = fsi_join_rel(p->rel, name);
	uint64_t ino = fsi_view_ino(p, vpath);
	fs_unlock(fs);
	if (!rel)
		return ENAMETOOLONG;
	struct srcinfo si;
	int r = fsi_classify(fs, rel, &si);
	if (r) {
		free(rel);
		return r;
	}
	if (si.kind != K_MODEL) {
		fsi_srcinfo_release(fs, &si);
		free(rel);
		return FSI_NOT_MEMBER; /* an ASCII model, or no model: a plain resource */
	}
	fs_lock(fs);
	struct node *c = fsi_child_for(fs, p, name, K_MODEL, (uint64_t)si.st.st_dev,
				       (uint64_t)si.st.st_ino, rel, &r);
	if (c) {
		c->sino = ino;
		node_hold(c);
		e->ino = c->id;
		e->generation = c->gen;
		fsi_fill_source(&e->attr, &si, 0);
		e->attr.st_ino = ino;
		fsi_entry_timeouts(fs, c, e);
	}
	if (si.ce)
		lfs_cache_release(&fs->cache, si.ce);
	fs_unlock(fs);
	free(rel);
	return r;
}

/*
 * fsi_member_lookup() of @p name in folder @p p before its views are
 * listed: when @p p is an archive's folder (its name a container's) and
 * @p name one of its resources whose header is a model's, the member folder;
 * otherwise FSI_NOT_MEMBER (the caller looks the name up among the views:
 * a resource, a scratch name, or nothing).
 */
int fsi_member_lookup_direct(lfs_fs *fs, struct node *p, const char *name, lfs_fs_entry *e)
{
	fs_lock(fs);
	const char *pname = node_name(p);
	bool cont = lfs_container_for_name(pname) != NULL && lfs_source_candidate(name);
	char *vpath = cont ? fsi_join_view(p, name) : NULL;
	fs_unlock(fs);
	if (!vpath)
		return FSI_NOT_MEMBER;
	int r = fsi_member_lookup(fs, p, name, vpath, e);
	free(vpath);
	return r == 0 ? 0 : FSI_NOT_MEMBER;
}

/*
 * The bytes of resource @p vpath of archive folder entry @p ce (a lazy view:
 * listed with its size, no bytes): a cache entry of its own, keyed by the
 * archive's version and "<archive>/<vpath>", holding one view, read with
 * one pread (lfs_read_source() of the member path) when first asked for,
 * then bounded by -o cache_size like any view. A reference is taken
 * (lfs_cache_release()). NULL with *err ESTALE when the archive changed
 * since @p ce, EIO when the resource cannot be read, ENOMEM.
 */
lfs_centry *fsi_resource_entry(lfs_fs *fs, const lfs_centry *ce, const char *vpath, int *err)
{
	char rel[PATH_MAX], krel[PATH_MAX + 1];
	if (snprintf(rel, sizeof(rel), "%s/%s", ce->key.rel, vpath) >= (int)sizeof(rel)) {
		*err = ENAMETOOLONG;
		return NULL;
	}
	/* the key of the bytes: the member's path and a byte no name holds, so
	 * that it is never the member's own entry (a model candidate's verdict,
	 * a model's views: fsi_classify()) */
	snprintf(krel, sizeof(krel), "%s\x01", rel);
	lfs_cache_key k = ce->key;
	k.rel = krel;
	fs_lock(fs);
	lfs_centry *e = lfs_cache_get(&fs->cache, &k);
	fs_unlock(fs);
	if (e)
		return e;
	uint8_t *d = NULL;
	size_t n = 0;
	struct stat st;
	int r = lfs_read_source(fs->rootfd, rel, fs->o.max_model_size, &d, &n, &st);
	lfs_cache_key fk = lfs_cache_key_of(&st, rel);
	fk.rel = krel;
	if (!r && (fk.dev != k.dev || fk.ino != k.ino || fk.size != k.size || fk.mtime_ns != k.mtime_ns))
		r = ESTALE; /* the archive changed since it was listed (a KEY's BIFs: read as they are now) */
	if (r == EIO || r == EFBIG) {
		/* listed from the tables, its payload unreadable (an E1 buffer that
		 * does not decompress, a SHA-1 mismatch, a BIF cut short) */
		char msg[PATH_MAX + 64];
		snprintf(msg, sizeof(msg), "%s: cannot be read: %s", vpath, strerror(r));
		fs_lock(fs);
		bool line = lfs_errlog_add(&fs->errors, ce->key.rel, msg);
		fs_unlock(fs);
		if (line)
			fsi_log(fs, LFS_LOG_WARNING, "%s: %s", ce->key.rel, msg);
	}
	if (r) {
		fsi_log(fs, LFS_LOG_DEBUG, "%s: cannot be read from its archive: %s", rel, strerror(r));
		free(d);
		*err = r == ENOENT || r == ENOTDIR || r == ESTALE ? ESTALE : r == ENOMEM ? ENOMEM : EIO;
		return NULL;
	}
	lfs_viewset vs = { 0 };
	vs.views = calloc(1, sizeof(*vs.views));
	char *path = strdup(vpath);
	if (!vs.views || !path) {
		free(vs.views);
		free(path);
		free(d);
		*err = ENOMEM;
		return NULL;
	}
	vs.views[0] = (lfs_view){ .path = path, .data = (char *)d, .size = n,
				  .kind = LFS_VIEW_RESOURCE, .target = LFS_VIEW_WHOLE,
				  .writable = lfs_viewset_find(&ce->vs, vpath) &&
					      lfs_viewset_find(&ce->vs, vpath)->writable };
	vs.n_views = 1;
	vs.format = ce->vs.format;
	vs.writable = vs.views[0].writable;
	e = lfs_centry_new(&fk, LFS_SOURCE_MODEL, &vs, NULL);
	if (!e) {
		*err = ENOMEM;
		return NULL;
	}
	fs_lock(fs);
	lfs_centry *got = lfs_cache_put(&fs->cache, e);
	fs_unlock(fs);
	return got;
}

/*
 * View @p *v of si->ce with its bytes: a lazy view (an archive's resource,
 * fsi_view_lazy()) is replaced by the one view of its own entry
 * (fsi_resource_entry()), which si->ce then holds instead. 0, or an errno
 * (si released).
 */
int fsi_view_bytes(lfs_fs *fs, struct srcinfo *si, const char *vpath, const lfs_view **v)
{
	if (!fsi_view_lazy(*v))
		return 0;
	int err = 0;
	lfs_centry *re = fsi_resource_entry(fs, si->ce, vpath, &err);
	fsi_srcinfo_release(fs, si);
	if (!re)
		return err;
	si->ce = re;
	si->names = NULL;
	*v = &re->vs.views[0];
	return 0;
}

/* Is model candidate @p name of archive folder @p model a model (a folder), by its header? */
bool fsi_member_is_model(lfs_fs *fs, struct node *model, const char *name)
{
	fs_lock(fs);
	char *rel = fsi_join_rel(model->rel, name);
	fs_unlock(fs);
	struct srcinfo si;
	memset(&si, 0, sizeof(si));
	bool yes = false;
	if (rel && fsi_classify(fs, rel, &si) == 0) {
		yes = si.kind == K_MODEL;
		fsi_srcinfo_release(fs, &si);
	}
	free(rel);
	return yes;
}

/*
 * The new bytes @p out of the model @p name inside archive @p arch (read
 * with the archive's stat @p st): the archive read again (unchanged since,
 * or EAGAIN), that entry's payload replaced (archive_edit.h: every other
 * entry kept byte for byte, the result checked) and the archive replaced
 * atomically as a model file is (lfs_replace_file_ex). Errno as that.
 */
int fsi_write_member(lfs_fs *fs, const lfs_container *c, const char *arch, const char *name,
			const uint8_t *out,
			size_t outn, const struct stat *st, struct stat *nst, int *kept, int *dsync,
			char *what, size_t whatsz)
{
	uint8_t *a = NULL, *na = NULL;
	size_t an = 0, nn = 0;
	struct stat ast;
	int r = lfs_read_source(fs->rootfd, arch, SIZE_MAX, &a, &an, &ast);
	if (r) {
		snprintf(what, whatsz, "reading the archive");
		return r;
	}
	if (ast.st_dev != st->st_dev || ast.st_ino != st->st_ino || ast.st_size != st->st_size ||
	    ast.st_mtim.tv_sec != st->st_mtim.tv_sec || ast.st_mtim.tv_nsec != st->st_mtim.tv_nsec) {
		free(a);
		snprintf(what, whatsz, "the archive changed while the save ran");
		return EAGAIN;
	}
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err e = c->apply(a, an, name, NULL, (const char *)out, outn, NULL, &na, &nn, NULL, NULL,
			     &err);
	if (e != LFS_OK) {
		free(a);
		snprintf(what, whatsz, "%s", err.msg);
		return e == LFS_ERR_NOMEM ? ENOMEM : EIO;
	}
	r = lfs_replace_file_ex(fs->rootfd, arch, na, nn, &ast, nst, kept, dsync, what, whatsz);
	free(a);
	free(na);
	return r;
}

