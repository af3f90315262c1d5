/**
 * @file archive.c
 * NWN resource archives (ERF family, KEY/BIF) as folders of their
 * resources: detection by header and the build of an archive's folder
 * (archive.h, docs/archives.md), and the container row the mount uses
 * (registry/container.h). Nothing here writes: edits go through edit.c.
 */
#define _GNU_SOURCE
#include "archive.h"

#include "edit.h"
#include "table.h"

#include "../../common/mem.h"
#include "registry/container.h"
#include "erf.h"
#include "gff.h"
#include "restype.h"

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
 * The folder of an archive, from its shared table (table.h) alone: one view
 * per resource, its size from the table and no bytes (a lazy view, read
 * through lfs_archive_member_read() when asked for); a `.mdl` resource is
 * a member view (LFS_VIEW_MEMBER): a folder of its own when its header is a
 * model's, built from that payload alone, else a plain resource — decided
 * when something looks at it.
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
	if (!lfs_atable_name_all(t)) {
		lfs_atable_put(t);
		return lfs_nomem(err, "archive names");
	}
	vs->views = calloc(n ? n : 1, sizeof(*vs->views));
	if (!vs->views) {
		lfs_atable_put(t);
		return lfs_nomem(err, "archive folder");
	}
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
		v->target = LFS_VIEW_WHOLE;
		v->size = (size_t)a->size;
		v->writable = writable && !a->broken;
		/* a `.mdl` may be a binary model (a folder) or ASCII (a plain file):
		 * told by its header when something looks at it, not here (a listing
		 * reads no payload) */
		v->kind = a->type == LFS_RESTYPE_MDL && !a->broken && a->size ? LFS_VIEW_MEMBER
									    : LFS_VIEW_RESOURCE;
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

/* The shared table of archive @p name (relative to @p dfd) as it is now, or NULL (errno in *e). */
static lfs_atable *table_of(int dfd, const char *name, struct stat *st, lfs_error *e)
{
	lfs_atable *t = NULL;
	memset(e, 0, sizeof(*e));
	return lfs_atable_get(dfd, name, st, &t, e) == LFS_OK ? t : NULL;
}

int lfs_archive_member_stat(int rootfd, const char *arch, const char *name, struct stat *st,
			    uint64_t *size)
{
	lfs_error e;
	lfs_atable *t = table_of(rootfd, arch, st, &e);
	if (!t)
		return e.sys_errno ? e.sys_errno : ENOENT;
	const lfs_ares *a = lfs_atable_find(t, name);
	if (a && size)
		*size = a->size;
	lfs_atable_put(t);
	return a ? 0 : ENOENT;
}

int lfs_archive_member_read(int rootfd, const char *arch, const char *name, size_t max,
			    uint8_t **out, size_t *n, struct stat *st, bool *read_only)
{
	*out = NULL;
	*n = 0;
	lfs_error e;
	lfs_atable *t = table_of(rootfd, arch, st, &e);
	if (!t)
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

bool lfs_archive_each(int dfd, const char *name, lfs_archive_key_fn fn, void *ctx)
{
	struct stat st;
	lfs_error e;
	lfs_atable *t = table_of(dfd, name, &st, &e);
	if (!t)
		return false;
	for (size_t i = 0; i < lfs_atable_count(t); i++) {
		const lfs_ares *a = lfs_atable_res(t, i);
		if (a->resref[0] && a->type)
			fn(ctx, a->resref, a->type);
	}
	lfs_atable_put(t);
	return true;
}

bool lfs_archive_read_resref(int dfd, const char *name, const char *resref, uint16_t type,
			     size_t max, uint8_t **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	struct stat st;
	lfs_error e;
	lfs_atable *t = table_of(dfd, name, &st, &e);
	if (!t)
		return false;
	const lfs_ares *a = lfs_atable_find_resref(t, resref, &type, 1);
	bool ok = a && lfs_atable_read(t, a, max, out, n, &e) == LFS_OK;
	lfs_atable_put(t);
	return ok;
}

/* build_views of the row: archives are listed by lfs_archive_build(), never from bytes. */
static lfs_err row_build(const uint8_t *data, size_t n, const lfs_view_opts *opts,
			 struct lfs_vlist *l, lfs_error *err)
{
	(void)data;
	(void)n;
	(void)opts;
	(void)l;
	return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			"archives are listed by lfs_archive_build() (src/formats/nwnarchive/archive.c)");
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

/* apply of the row: an edited resource or view of a model inside an ERF (edit.h). */
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

/* ---- the container row (registry/container.h) ---- */

static bool c_detect(const char *name, const uint8_t *head, size_t n)
{
	return lfs_archive_detect(name, head, n) != NULL;
}

static bool c_writable(const char *name)
{
	return lfs_archive_erf_name(name);
}

static bool c_aux_name(const char *name)
{
	size_t ln = strlen(name);
	return ln > 4 && strcasecmp(name + ln - 4, ".bif") == 0;
}

static lfs_err c_list(int rootfd, const char *rel, size_t max_res, struct stat *st, lfs_viewset *vs,
		      lfs_sb *problems, lfs_error *err)
{
	return lfs_archive_build(rootfd, rel, max_res, NULL, st, vs, problems, err);
}

static bool c_each(int rootfd, const char *rel, lfs_container_each_fn fn, void *ctx)
{
	return lfs_archive_each(rootfd, rel, fn, ctx);
}

static bool c_find(int rootfd, const char *rel, const char *resref, const uint16_t *types,
		   size_t ntypes, char stored[33], uint16_t *type)
{
	struct stat st;
	lfs_error e;
	lfs_atable *t = table_of(rootfd, rel, &st, &e);
	if (!t)
		return false;
	const lfs_ares *r = lfs_atable_find_resref(t, resref, types, ntypes);
	if (r) {
		memcpy(stored, r->resref, 33);
		*type = r->type;
	}
	lfs_atable_put(t);
	return r != NULL;
}

static lfs_cname_kind c_name_class(const char *name, char *why)
{
	why[0] = '\0';
	lfs_archive_name_kind k = lfs_archive_name_class(name, LFS_RESREF_MAX, NULL, NULL, why);
	return k == LFS_ANAME_RESOURCE ? LFS_CNAME_RESOURCE
	       : k == LFS_ANAME_BAD    ? LFS_CNAME_BAD
				       : LFS_CNAME_SCRATCH;
}

/* A module's haks: module.ifo's Mod_HakList (gff.h), first listed first. */
static lfs_err c_module_deps(const uint8_t *data, size_t n, char ***names, size_t *nn,
			     lfs_error *err)
{
	return lfs_gff_hak_list(data, n, names, nn, err);
}

const lfs_container lfs_container_nwn_archive = {
	.name = "nwn-archive",
	.extensions = archive_exts,
	.row = &lfs_archive_format,
	.detect = c_detect,
	.writable = c_writable,
	.aux_name = c_aux_name,
	.uses_aux = lfs_archive_key_name,
	.list = c_list,
	.member_read = lfs_archive_member_read,
	.member_stat = lfs_archive_member_stat,
	.each = c_each,
	.find = c_find,
	.read_resref = lfs_archive_read_resref,
	.apply = lfs_archive_apply_view,
	.add = lfs_archive_add,
	.remove = lfs_archive_remove,
	.rename = lfs_archive_rename,
	.name_class = c_name_class,
	.module_deps = c_module_deps,
	.flush = lfs_atable_flush,
	.held = lfs_atable_held,
};
