/**
 * @file fs_archive.c
 * NWN resource archives (ERF family, KEY/BIF) as folders of their
 * resources: detection by header and the build of an archive's folder
 * (fs_archive.h, docs/archives.md). Nothing here writes: edits go through
 * archive_edit.c.
 */
#define _GNU_SOURCE
#include "fs_archive.h"

#include "archive_edit.h"
#include "archive_table.h"
#include "replace.h"
#include "source.h"
#include "texture.h"

#include "../common/mem.h"
#include "../formats/erf.h"
#include "../formats/keybif.h"
#include "../formats/restype.h"
#include "../views/vlist.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const archive_exts[] = { ".erf", ".hak", ".mod", ".sav", ".nwm", ".key", NULL };

bool lfs_archive_candidate(const char *name)
{
	size_t ln = strlen(name);
	for (size_t i = 0; archive_exts[i]; i++) {
		size_t le = strlen(archive_exts[i]);
		if (ln > le && strcasecmp(name + ln - le, archive_exts[i]) == 0)
			return true;
	}
	return false;
}

bool lfs_archive_key_name(const char *name)
{
	size_t ln = strlen(name);
	return ln > 4 && strcasecmp(name + ln - 4, ".key") == 0;
}

bool lfs_archive_erf_name(const char *name)
{
	return lfs_archive_candidate(name) && !lfs_archive_key_name(name);
}

/* Header test (BioWare "Encapsulated Resource File Format" header; "Key and
 * BIF File Formats" §2.2; neverwinter.nim's E1 tags). */
static bool header_ok(const uint8_t *d, size_t n, bool key)
{
	if (key)
		return n >= 64 && (memcmp(d, "KEY V1  ", 8) == 0 || memcmp(d, "KEY E1  ", 8) == 0);
	if (n < LFS_ERF_HEADER)
		return false;
	static const char *const types[] = { "ERF ", "HAK ", "MOD ", "SAV ", "NWM " };
	static const char *const vers[] = { "V1.0", "V1.1", "E1.0" };
	bool t = false, v = false;
	for (size_t i = 0; i < 5; i++)
		t |= memcmp(d, types[i], 4) == 0;
	for (size_t i = 0; i < 3; i++)
		v |= memcmp(d + 4, vers[i], 4) == 0;
	return t && v;
}

static bool archive_detect_bytes(const uint8_t *data, size_t n)
{
	return header_ok(data, n, false) || header_ok(data, n, true);
}

const lfs_format *lfs_archive_detect(const char *name, const uint8_t *data, size_t n)
{
	if (!lfs_archive_candidate(name))
		return NULL;
	return header_ok(data, n, lfs_archive_key_name(name)) ? &lfs_archive_format : NULL;
}

static int view_cmp(const void *a, const void *b)
{
	return strcmp(((const lfs_view *)a)->path, ((const lfs_view *)b)->path);
}

/*
 * The folder of an archive, from its shared table (archive_table.h): one
 * view per resource, its size from the table and no bytes (a lazy view,
 * read through lfs_archive_member_read() when asked for); a `.mdl`
 * resource whose header the registry takes for a model is a member view
 * (LFS_VIEW_MEMBER): a folder of its own, built from that payload alone
 * when something looks inside it.
 */
lfs_err lfs_archive_build(int rootfd, const char *rel, size_t max_res, const lfs_view_opts *opts,
			  struct stat *st, lfs_viewset *vs, lfs_sb *problems, lfs_error *err)
{
	(void)opts;
	memset(vs, 0, sizeof(*vs));
	lfs_atable *t = NULL;
	lfs_err r = lfs_atable_get(rootfd, rel, st, &t, err);
	if (r != LFS_OK)
		return r;
	if (problems)
		lfs_sb_puts(problems, lfs_atable_problems(t));
	bool writable = !lfs_atable_is_key(t);
	size_t n = lfs_atable_count(t);
	vs->views = calloc(n ? n : 1, sizeof(*vs->views));
	if (!vs->views) {
		lfs_atable_put(t);
		return lfs_nomem(err, "archive folder");
	}
	static _Thread_local uint8_t head[LFS_SOURCE_HEADER_BYTES];
	for (size_t i = 0; i < n; i++) {
		const lfs_ares *a = lfs_atable_res(t, i);
		if (a->size > max_res || a->stored > max_res) {
			if (problems)
				lfs_sb_printf(problems, "%s (type %u): %llu bytes, larger than "
					      "-o max_model_size: left out\n", a->resref, a->type,
					      (unsigned long long)(a->size > a->stored ? a->size : a->stored));
			continue;
		}
		lfs_view *v = &vs->views[vs->n_views];
		v->kind = LFS_VIEW_RESOURCE;
		v->target = LFS_VIEW_WHOLE;
		v->size = (size_t)a->size;
		v->writable = writable && !a->broken;
		if (a->type == LFS_RESTYPE_MDL && !a->broken && a->size) {
			/* as a loose file is classified: its header, its real size */
			long got = lfs_atable_head(t, a, head, sizeof(head));
			uint8_t *buf = got < 0 ? NULL : a->size <= sizeof(head) ? head : calloc(a->size, 1);
			if (buf && buf != head)
				memcpy(buf, head, (size_t)got);
			if (buf && lfs_format_for("model.mdl", buf, (size_t)a->size)) {
				v->kind = LFS_VIEW_MEMBER;
				v->size = 0;
			}
			if (buf == head)
				memset(head, 0, (size_t)got);
			else
				free(buf);
		}
		v->path = strdup(a->name);
		if (!v->path) {
			lfs_viewset_free(vs);
			lfs_atable_put(t);
			return lfs_nomem(err, "archive folder");
		}
		vs->n_views++;
	}
	lfs_atable_put(t);
	qsort(vs->views, vs->n_views, sizeof(*vs->views), view_cmp);
	vs->format = &lfs_archive_format;
	vs->writable = writable;
	return LFS_OK;
}

lfs_err lfs_archive_expand(int rootfd, const char *rel, const lfs_view_opts *opts, lfs_viewset *vs,
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
		int mr = lfs_archive_member_read(rootfd, mrel, SIZE_MAX, &d, &n, &st, &ro);
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
		lfs_err r = v->kind == LFS_VIEW_MEMBER
				    ? lfs_views_build(v->path, d, n, &mo, &sub, &e)
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
			if (v->kind == LFS_VIEW_MEMBER && problems)
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
	lfs_viewset_free(vs);
	lfs_vlist_finish(&l, vs);
	vs->format = &lfs_archive_format;
	vs->writable = writable;
	vs->names_only = opts && opts->names_only;
	return LFS_OK;
}

bool lfs_archive_member_split(const char *rel, char *arch, size_t archsz, const char **name)
{
	const char *sl = strrchr(rel, '/');
	if (!sl || sl == rel || !sl[1] || (size_t)(sl - rel) >= archsz)
		return false;
	memcpy(arch, rel, (size_t)(sl - rel));
	arch[sl - rel] = '\0';
	const char *ab = strrchr(arch, '/');
	if (!lfs_archive_candidate(ab ? ab + 1 : arch))
		return false;
	*name = sl + 1;
	return true;
}

int lfs_archive_member_stat(int rootfd, const char *rel, struct stat *st, uint64_t *size)
{
	char arch[PATH_MAX];
	const char *name;
	if (!lfs_archive_member_split(rel, arch, sizeof(arch), &name))
		return ENOENT;
	lfs_atable *t = NULL;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	if (lfs_atable_get(rootfd, arch, st, &t, &e) != LFS_OK)
		return e.sys_errno ? e.sys_errno : ENOENT;
	const lfs_ares *a = lfs_atable_find(t, name);
	if (a && size)
		*size = a->size;
	lfs_atable_put(t);
	return a ? 0 : ENOENT;
}

int lfs_archive_member_read(int rootfd, const char *rel, size_t max, uint8_t **out, size_t *n,
			    struct stat *st, bool *read_only)
{
	*out = NULL;
	*n = 0;
	char arch[PATH_MAX];
	const char *name;
	if (!lfs_archive_member_split(rel, arch, sizeof(arch), &name))
		return ENOENT;
	lfs_atable *t = NULL;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	if (lfs_atable_get(rootfd, arch, st, &t, &e) != LFS_OK)
		return ENOENT;
	const lfs_ares *a = lfs_atable_find(t, name);
	int r = ENOENT;
	if (read_only)
		*read_only = lfs_atable_is_key(t);
	if (a && (a->size > max || a->stored > max))
		r = EFBIG;
	else if (a) {
		lfs_err lr = lfs_atable_read(t, a, max, out, n, &e);
		r = lr == LFS_OK ? 0 : lr == LFS_ERR_NOMEM ? ENOMEM : EIO;
	}
	lfs_atable_put(t);
	return r;
}

bool lfs_archive_key_each(int dfd, const char *name, size_t max, lfs_archive_key_fn fn, void *ctx)
{
	(void)max;
	struct stat st;
	lfs_atable *t = NULL;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	if (lfs_atable_get(dfd, name, &st, &t, &e) != LFS_OK)
		return false;
	for (size_t i = 0; i < lfs_atable_count(t); i++) {
		const lfs_ares *a = lfs_atable_res(t, i);
		if (a->resref[0] && a->type)
			fn(ctx, a->resref, a->type);
	}
	lfs_atable_put(t);
	return true;
}

bool lfs_archive_key_read(int dfd, const char *name, const char *resref, uint16_t type,
			  size_t max, uint8_t **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	struct stat st;
	lfs_atable *t = NULL;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	if (lfs_atable_get(dfd, name, &st, &t, &e) != LFS_OK)
		return false;
	const lfs_ares *a = lfs_atable_find_resref(t, resref, &type, 1);
	bool ok = a && lfs_atable_read(t, a, max, out, n, &e) == LFS_OK;
	lfs_atable_put(t);
	return ok;
}

/* build_views of the row: an ERF from its bytes (a KEY has no BIFs here). */
static lfs_err row_build(const uint8_t *data, size_t n, const lfs_view_opts *opts,
			 struct lfs_vlist *l, lfs_error *err)
{
	(void)data;
	(void)n;
	(void)opts;
	(void)l;
	return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			"archives are built by lfs_archive_build() (src/fs/fs_archive.c)");
}

static lfs_err row_decode(const uint8_t *data, size_t n, void **model, lfs_error *err)
{
	lfs_erf *a = NULL;
	lfs_err r = lfs_erf_decode(data, n, &a, err);
	*model = a;
	return r;
}

static lfs_err row_encode(const void *model, uint8_t **out, size_t *n, lfs_error *err)
{
	return lfs_erf_encode(model, out, n, err);
}

/* apply of the row: an edited resource or view of a model inside an ERF (archive_edit.h). */
static lfs_err row_apply(const uint8_t *orig, size_t n, const lfs_view *v, const char *text,
			 size_t tn, const lfs_siblings *sib, uint8_t **out, size_t *outn,
			 lfs_error *err)
{
	return lfs_archive_apply_view(orig, n, v->path, v, text, tn, sib, out, outn, NULL, NULL, err);
}

static void row_free(void *model)
{
	lfs_erf_free(model);
}

const lfs_format lfs_archive_format = {
	.name = "nwn-archive",
	.extensions = archive_exts,
	.detect = archive_detect_bytes,
	.decode = row_decode,
	.encode = row_encode,
	.free_model = row_free,
	.build_views = row_build,
	.apply = row_apply,
};
