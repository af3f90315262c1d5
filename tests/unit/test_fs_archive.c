/**
 * @file test_fs_archive.c
 * The folder of an archive (src/fs/fs_archive.h) on the archive corpus:
 * every ERF-family archive is listed (lfs_archive_build(), from its table)
 * with exactly one view per MANIFEST entry, and its whole tree
 * (lfs_source_expand()) names the same paths with and without names_only;
 * broken entries are named broken-<index>.<ext> and reported; the listing
 * of models_v1.hak has each entry's payload size and no bytes, its binary
 * models as member folders, and lfs_container_member_read() gives each
 * payload; a KEY's table is decoded once per KEY version and shared
 * (archive_table.h); NWN:EE's root-relative BIF names (data\x.bif, any
 * case) are found; the generated HAK V1/E1 and KEY/BIF V1/E1 sets give
 * every input's bytes (gen/inputs.tsv) and each binary model as a folder
 * with model.mdl (its model.mtl naming the archive's own texture);
 * truncated and bit-flipped archives build or fail cleanly (ASan/UBSan in
 * CI), their names-only tree naming exactly what the full tree holds.
 * Deterministic (testrng.h; LFS_TEST_SEED replays).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive_corpus.h"
#include "corpus.h"
#include "formats/nwnarchive/erf.h"
#include "formats/nwnarchive/edit.h"
#include "formats/nwnarchive/table.h"
#include "formats/nwnarchive/archive.h"
#include "fs/source.h"
#include "registry/container.h"
#include "fs/texture.h"
#include "testrng.h"


/* Distinct first components of the paths of @p vs. */
static size_t top_names(const lfs_viewset *vs)
{
	size_t n = 0;
	const char *prev = NULL;
	size_t plen = 0;
	for (size_t i = 0; i < vs->n_views; i++) {
		const char *p = vs->views[i].path;
		const char *s = strchr(p, '/');
		size_t len = s ? (size_t)(s - p) : strlen(p);
		if (prev && len == plen && !strncmp(prev, p, len))
			continue;
		prev = p;
		plen = len;
		n++;
	}
	return n;
}

static const lfs_view *find(const lfs_viewset *vs, const char *path)
{
	for (size_t i = 0; i < vs->n_views; i++)
		if (!strcmp(vs->views[i].path, path))
			return &vs->views[i];
	return NULL;
}

/*
 * The whole tree of archive @p rel (relative to folder @p dfd), as the old
 * one-call build made it: the listing (lfs_archive_build()) expanded
 * (lfs_source_expand()). Problems of both go to @p probs (may be NULL).
 */
static lfs_err build_tree(int dfd, const char *rel, const lfs_view_opts *o, lfs_viewset *vs,
			  lfs_sb *probs, lfs_error *e)
{
	struct stat st;
	memset(e, 0, sizeof(*e));
	lfs_err r = lfs_archive_build(dfd, rel, SIZE_MAX, o, &st, vs, probs, e);
	if (r != LFS_OK)
		return r;
	r = lfs_source_expand(dfd, rel, o, vs, probs, e);
	if (r != LFS_OK)
		lfs_viewset_free(vs);
	return r;
}

/* Same paths, kinds, sizes and writability in @p a and @p b (listings: no bytes). */
static void same_listing(const lfs_viewset *a, const lfs_viewset *b, const char *what)
{
	assert_int_equal(a->n_views, b->n_views);
	assert_int_equal(a->writable, b->writable);
	for (size_t k = 0; k < a->n_views; k++) {
		const lfs_view *x = &a->views[k], *y = &b->views[k];
		if (strcmp(x->path, y->path) || x->kind != y->kind || x->size != y->size ||
		    x->writable != y->writable)
			fail_msg("%s: view %zu: %s (kind %d, %zu bytes) / %s (kind %d, %zu bytes)", what,
				 k, x->path, (int)x->kind, x->size, y->path, (int)y->kind, y->size);
	}
}

/* The listing of an ERF row: one view per entry, no bytes, every name a top name. */
static void check_erf_listing(int dfd, const char *name, const lfs_arch_row *r,
			      const lfs_viewset *full)
{
	lfs_viewset ls;
	struct stat st;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	assert_int_equal(lfs_archive_build(dfd, name, SIZE_MAX, NULL, &st, &ls, NULL, &e), LFS_OK);
	if (ls.n_views != (size_t)r->entries)
		fail_msg("%s: listed %zu views, MANIFEST %ld", r->file, ls.n_views, r->entries);
	assert_true(ls.writable); /* an ERF: writable, even empty (a resource can be added) */
	assert_int_equal(top_names(full), ls.n_views);
	for (size_t k = 0; k < ls.n_views; k++) {
		const lfs_view *v = &ls.views[k];
		assert_null(v->data);
		assert_null(strchr(v->path, '/'));
		assert_true(v->kind == LFS_VIEW_RESOURCE || v->kind == LFS_VIEW_MEMBER);
		assert_int_equal(v->writable, strncmp(v->path, "broken-", 7) != 0);
		/* in the whole tree: the resource itself, or (a model candidate that
		 * is a model) the member's folder */
		char sub[600];
		snprintf(sub, sizeof(sub), "%s/model.mdl", v->path);
		if (v->kind == LFS_VIEW_MEMBER ? !find(full, sub) && !find(full, v->path)
					       : !find(full, v->path))
			fail_msg("%s: %s listed but not in the whole tree", r->file, v->path);
	}
	lfs_viewset_free(&ls);
}

static void test_erf_counts(void **state)
{
	(void)state;
	size_t checked = 0;
	for (size_t i = 0; i < lfs_arch_nrows; i++) {
		const lfs_arch_row *r = &lfs_arch_rows[i];
		if (!lfs_arch_is_erf(r))
			continue;
		size_t n;
		uint8_t *d = lfs_read_file(r->path, &n);
		assert_non_null(d);
		const char *name = lfs_base_name(r->path);
		assert_ptr_equal(lfs_archive_detect(name, d, n), &lfs_archive_format);
		int dfd = lfs_arch_dirfd(r->path);
		assert_true(dfd >= 0);
		lfs_viewset full, names;
		lfs_sb probs = { 0 };
		lfs_error e;
		assert_int_equal(build_tree(dfd, name, NULL, &full, &probs, &e), LFS_OK);
		lfs_view_opts no = { .names_only = true };
		assert_int_equal(build_tree(dfd, name, &no, &names, NULL, &e), LFS_OK);
		if (top_names(&full) != (size_t)r->entries)
			fail_msg("%s: %zu names, MANIFEST %ld", r->file, top_names(&full), r->entries);
		assert_int_equal(full.n_views, names.n_views);
		/* ERFs can be written (archive_edit.h): every resource but a broken
		 * entry, and the writable views of the models inside */
		bool any = false;
		size_t nbroken = 0;
		for (size_t k = 0; k < full.n_views; k++) {
			const lfs_view *v = &full.views[k];
			assert_string_equal(v->path, names.views[k].path);
			assert_int_equal(v->writable, names.views[k].writable);
			if (!strchr(v->path, '/'))
				assert_int_equal(v->writable, strncmp(v->path, "broken-", 7) != 0);
			nbroken += !strncmp(v->path, "broken-", 7);
			any |= v->writable;
		}
		assert_true(full.writable);
		assert_true(names.writable);
		assert_int_equal(any, (size_t)r->entries > nbroken);
		check_erf_listing(dfd, name, r, &full);
		if (strstr(r->file, "prc_recipe_scroll_temp")) {
			assert_int_equal(nbroken, 10);
			assert_non_null(probs.data);
			size_t lines = 0;
			for (const char *p = probs.data; (p = strstr(p, ": broken (empty ResRef, type 0)")); p++)
				lines++;
			assert_int_equal(lines, 10);
			assert_non_null(find(&full, "broken-309.res"));
		}
		lfs_sb_free(&probs);
		lfs_viewset_free(&full);
		lfs_viewset_free(&names);
		close(dfd);
		free(d);
		checked++;
	}
	assert_true(checked >= 16);
}

/*
 * The member model "<archive>/c_aribeth.mdl" of archive @p name (in folder
 * @p dfd) loaded as the mount loads it (lfs_source_load(), the texture
 * lookup of that model path): its model.mtl names the archive's own texture.
 */
static void check_member_mtl(int dfd, const char *name)
{
	char rel[300];
	snprintf(rel, sizeof(rel), "%s/c_aribeth.mdl", name);
	lfs_texture_ctx tc;
	lfs_texture_ctx_init(&tc, dfd, rel);
	lfs_view_opts vo = { .texture_lookup = lfs_texture_lookup, .texture_ctx = &tc };
	lfs_viewset vs;
	struct stat st;
	lfs_source_kind kind;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	lfs_source_opts so = { .max_size = SIZE_MAX, .views = &vo };
	lfs_err r = lfs_source_load(dfd, rel, &so, &st, &kind, &vs, &e);
	lfs_texture_ctx_free(&tc);
	if (r != LFS_OK || kind != LFS_SOURCE_MODEL)
		fail_msg("%s: loaded %d, kind %d: %s", rel, (int)r, (int)kind, e.msg);
	assert_true(vs.writable == !lfs_archive_key_name(name));
	const lfs_view *mtl = find(&vs, "model.mtl");
	assert_non_null(mtl);
	if (!memmem(mtl->data, mtl->size, "map_Kd ../c_aribeth.tga\n", 24))
		fail_msg("%s: model.mtl: %.*s", rel, (int)mtl->size, mtl->data);
	lfs_viewset_free(&vs);
}

/* Every input of gen/inputs.tsv in the folder of the archive at @p path. */
static void check_generated(const char *path)
{
	int dfd = lfs_arch_dirfd(path);
	assert_true(dfd >= 0);
	lfs_viewset vs;
	lfs_sb probs = { 0 };
	lfs_error e;
	assert_int_equal(build_tree(dfd, lfs_base_name(path), NULL, &vs, &probs, &e), LFS_OK);
	if (probs.len)
		fail_msg("%s: problems: %.*s", path, (int)probs.len, probs.data);
	assert_int_equal(top_names(&vs), 35);
	size_t models = 0, plain = 0;
	for (size_t i = 0; i < vs.n_views; i++) {
		const lfs_view *v = &vs.views[i];
		const char *s = strchr(v->path, '/');
		if (s) {
			if (!strcmp(s, "/model.mdl")) {
				models++;
				assert_true(v->size > 0);
				assert_int_equal(v->kind, LFS_VIEW_TEXT);
			}
			continue;
		}
		assert_int_equal(v->kind, LFS_VIEW_RESOURCE);
		assert_int_equal(v->writable, strstr(path, ".key") == NULL); /* KEYs: read-only */
		if (!lfs_arch_equals_input(v->path, (const uint8_t *)v->data, v->size, NULL))
			fail_msg("%s: %s differs from its input", path, v->path);
		plain++;
	}
	assert_non_null(find(&vs, "c_aribeth.mdl/model.mtl"));
	check_member_mtl(dfd, lfs_base_name(path));
	assert_non_null(find(&vs, "c_aribeth.tga"));
	assert_int_equal(models, 6);    /* the 6 binary models; the 3 ASCII ones are files */
	assert_int_equal(plain, 35 - 6);
	lfs_sb_free(&probs);
	lfs_viewset_free(&vs);
	close(dfd);
}

static void test_generated(void **state)
{
	(void)state;
	size_t done = 0;
	for (size_t i = 0; i < lfs_arch_nrows; i++) {
		const lfs_arch_row *r = &lfs_arch_rows[i];
		if (strncmp(r->file, "gen/", 4) || (strncmp(r->format, "KEY", 3) && r->entries != 35))
			continue;
		check_generated(r->path);
		done++;
	}
	assert_int_equal(done, 4);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A binary model's payload (BioWare's compiled MDL: a zero u32 first), by bytes alone. */
static bool binary_mdl(const uint8_t *p, size_t n)
{
	return n >= 12 && rd32(p) == 0;
}

/*
 * models_v1.hak decoded from its bytes (lfs_erf_decode) and opened as a
 * folder's file: *a, *bytes, its folder's fd returned.
 */
static int open_models_v1(lfs_erf **a, uint8_t **bytes)
{
	const lfs_arch_row *row = lfs_arch_find("gen/nwn_erf/models_v1.hak");
	if (!row)
		LFS_SKIP("no gen/nwn_erf/models_v1.hak in the archive manifest");
	size_t n;
	*bytes = lfs_read_file(row->path, &n);
	assert_non_null(*bytes);
	lfs_error e;
	memset(&e, 0, sizeof(e));
	assert_int_equal(lfs_erf_decode(*bytes, n, a, &e), LFS_OK);
	assert_int_equal((*a)->n, row->entries);
	int dfd = lfs_arch_dirfd(row->path);
	assert_true(dfd >= 0);
	return dfd;
}

/* The listing: one view per entry, payload sizes, no bytes, binary models as members. */
static void test_listing_sizes(void **state)
{
	(void)state;
	lfs_erf *a = NULL;
	uint8_t *bytes = NULL;
	int dfd = open_models_v1(&a, &bytes);
	lfs_viewset ls;
	struct stat st;
	lfs_sb probs = { 0 };
	lfs_error e;
	memset(&e, 0, sizeof(e));
	assert_int_equal(lfs_archive_build(dfd, "models_v1.hak", SIZE_MAX, NULL, &st, &ls, &probs, &e),
			 LFS_OK);
	assert_int_equal(probs.len, 0);
	assert_int_equal(ls.n_views, a->n);
	assert_true(ls.writable);
	assert_ptr_equal(ls.format, &lfs_archive_format);
	struct stat fst;
	assert_int_equal(fstatat(dfd, "models_v1.hak", &fst, 0), 0);
	assert_int_equal(st.st_ino, fst.st_ino);
	assert_int_equal(st.st_size, fst.st_size);
	size_t members = 0, mdls = 0, resources = 0;
	for (uint32_t i = 0; i < a->n; i++) {
		char name[64];
		assert_false(lfs_archive_entry_name(name, sizeof(name), a->e[i].resref, a->e[i].type, i));
		const lfs_view *v = find(&ls, name);
		if (!v)
			fail_msg("entry %u: %s not listed", i, name);
		uint8_t *p = NULL;
		size_t pn = 0;
		assert_int_equal(lfs_erf_read(a, i, &p, &pn, &e), LFS_OK);
		assert_null(v->data);
		assert_true(v->writable);
		/* every .mdl is a model candidate (no payload is read to list it);
		 * its size is the payload's, binary or ASCII */
		if (a->e[i].type == 2002) {
			if (v->kind != LFS_VIEW_MEMBER)
				fail_msg("%s: a .mdl listed as kind %d", name, (int)v->kind);
			if (v->size != pn)
				fail_msg("%s: listed %zu bytes, payload %zu", name, v->size, pn);
			members += binary_mdl(p, pn);
			mdls++;
		} else {
			if (v->kind != LFS_VIEW_RESOURCE)
				fail_msg("%s: listed as kind %d, not a resource", name, (int)v->kind);
			if (v->size != pn)
				fail_msg("%s: listed %zu bytes, payload %zu", name, v->size, pn);
			resources++;
		}
		free(p);
	}
	assert_int_equal(members, 6); /* MANIFEST mdl_binary */
	assert_true(mdls > members); /* ASCII models too */
	assert_int_equal(mdls + resources, ls.n_views);
	lfs_sb_free(&probs);
	lfs_viewset_free(&ls);
	lfs_erf_free(a);
	free(bytes);
	close(dfd);
}

/* lfs_container_member_read() of every entry: lfs_erf_read()'s payload. */
static void test_member_read(void **state)
{
	(void)state;
	lfs_erf *a = NULL;
	uint8_t *bytes = NULL;
	int dfd = open_models_v1(&a, &bytes);
	struct stat fst;
	assert_int_equal(fstatat(dfd, "models_v1.hak", &fst, 0), 0);
	lfs_error e;
	memset(&e, 0, sizeof(e));
	for (uint32_t i = 0; i < a->n; i++) {
		char name[64], rel[128];
		lfs_archive_entry_name(name, sizeof(name), a->e[i].resref, a->e[i].type, i);
		snprintf(rel, sizeof(rel), "models_v1.hak/%s", name);
		uint8_t *p = NULL, *m = NULL;
		size_t pn = 0, mn = 0;
		assert_int_equal(lfs_erf_read(a, i, &p, &pn, &e), LFS_OK);
		struct stat st;
		bool ro = true;
		int r = lfs_container_member_read(dfd, rel, SIZE_MAX, &m, &mn, &st, &ro);
		if (r != 0)
			fail_msg("%s: member read: %s", rel, strerror(r));
		assert_false(ro);
		assert_int_equal(st.st_ino, fst.st_ino);
		if (mn != pn || memcmp(m, p, pn))
			fail_msg("%s: %zu bytes read, payload %zu bytes (or different)", rel, mn, pn);
		free(m);
		uint64_t sz = 0;
		assert_int_equal(lfs_container_member_stat(dfd, rel, &st, &sz), 0);
		assert_int_equal(sz, pn);
		if (pn) { /* over max: refused */
			assert_int_equal(lfs_container_member_read(dfd, rel, pn - 1, &m, &mn, &st, NULL),
					 EFBIG);
			assert_null(m);
		}
		free(p);
	}
	uint8_t *m = NULL;
	size_t mn = 0;
	struct stat st;
	assert_int_equal(lfs_container_member_read(dfd, "models_v1.hak/no_such.tga", SIZE_MAX, &m, &mn,
						 &st, NULL), ENOENT);
	lfs_erf_free(a);
	free(bytes);
	close(dfd);
}

/* Copy file @p rel of folder @p from to folder @p to (same relative path). */
static void copy_rel(int from, int to, const char *rel)
{
	int fd = openat(from, rel, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	uint8_t *d = malloc((size_t)st.st_size + 1);
	assert_non_null(d);
	assert_int_equal(pread(fd, d, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	assert_int_equal(lfs_arch_put(to, rel, d, (size_t)st.st_size), 0);
	free(d);
}

/* A listing of @p rel in @p dfd: OK, @p want views, no problem. */
static void list_ok(int dfd, const char *rel, size_t want, lfs_viewset *vs)
{
	struct stat st;
	lfs_sb probs = { 0 };
	lfs_error e;
	memset(&e, 0, sizeof(e));
	lfs_err r = lfs_archive_build(dfd, rel, SIZE_MAX, NULL, &st, vs, &probs, &e);
	if (r != LFS_OK)
		fail_msg("%s: %s", rel, e.msg);
	if (probs.len)
		fail_msg("%s: problems: %.*s", rel, (int)probs.len, probs.data);
	assert_int_equal(vs->n_views, want);
	assert_false(vs->writable);
	lfs_sb_free(&probs);
}

/* A KEY's table: decoded once per KEY version, shared; a touched KEY gets a new one. */
static void test_key_table_shared(void **state)
{
	(void)state;
	const lfs_arch_row *row = lfs_arch_find("gen/nwn_key_pack/v1/gen_v1.key");
	if (!row)
		LFS_SKIP("no gen/nwn_key_pack/v1/gen_v1.key in the archive manifest");
	int dfd = lfs_arch_dirfd(row->path);
	assert_true(dfd >= 0);
	lfs_atable_flush();
	size_t h0 = lfs_atable_held();
	lfs_viewset a, b;
	list_ok(dfd, "gen_v1.key", (size_t)row->entries, &a);
	size_t h1 = lfs_atable_held();
	assert_true(h1 > h0);
	list_ok(dfd, "gen_v1.key", (size_t)row->entries, &b);
	assert_int_equal(lfs_atable_held(), h1); /* no second table */
	same_listing(&a, &b, "gen_v1.key twice");
	lfs_viewset_free(&b);
	lfs_atable *t1 = NULL, *t2 = NULL;
	struct stat st;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	assert_int_equal(lfs_atable_get(dfd, "gen_v1.key", &st, &t1, &e), LFS_OK);
	assert_true(lfs_atable_is_key(t1));
	assert_int_equal(lfs_atable_count(t1), row->entries);
	lfs_atable_put(t1);
	assert_int_equal(lfs_atable_get(dfd, "gen_v1.key", &st, &t2, &e), LFS_OK);
	assert_ptr_equal(t1, t2);
	lfs_atable_put(t2);
	assert_int_equal(lfs_atable_held(), h1);

	/* a copy: its own table (another file); touched: a new table */
	char tmp[600];
	int tfd = lfs_arch_tmpdir(tmp, sizeof(tmp), "fs-archive-key");
	assert_true(tfd >= 0);
	copy_rel(dfd, tfd, "gen_v1.key");
	copy_rel(dfd, tfd, "data/models.bif");
	copy_rel(dfd, tfd, "data/textures.bif");
	list_ok(tfd, "gen_v1.key", (size_t)row->entries, &b);
	same_listing(&a, &b, "gen_v1.key copied");
	lfs_viewset_free(&b);
	size_t h2 = lfs_atable_held();
	assert_true(h2 > h1);
	lfs_atable *t3 = NULL, *t4 = NULL;
	assert_int_equal(lfs_atable_get(tfd, "gen_v1.key", &st, &t3, &e), LFS_OK);
	assert_int_equal(lfs_atable_held(), h2);
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = st.st_mtim.tv_sec - 1000,
							       .tv_nsec = 123456789 } };
	assert_int_equal(utimensat(tfd, "gen_v1.key", ts, 0), 0);
	assert_int_equal(lfs_atable_get(tfd, "gen_v1.key", &st, &t4, &e), LFS_OK);
	assert_ptr_not_equal(t3, t4); /* t3 still held: two live tables */
	assert_int_equal(st.st_mtim.tv_nsec, 123456789);
	assert_true(lfs_atable_held() > h2);
	lfs_atable_put(t3);
	lfs_atable_put(t4);
	list_ok(tfd, "gen_v1.key", (size_t)row->entries, &b);
	same_listing(&a, &b, "gen_v1.key touched");
	lfs_viewset_free(&b);
	lfs_viewset_free(&a);
	lfs_atable_flush();
	close(tfd);
	assert_int_equal(lfs_arch_rmtree(tmp), 0);
	close(dfd);
}

static void le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void le32(uint8_t *p, uint32_t v)
{
	le16(p, (uint16_t)v);
	le16(p + 2, (uint16_t)(v >> 16));
}

/* The 2 resources of the hand-made KEY V1 + BIF V1 (BioWare "Key and BIF File Formats"). */
static const struct {
	const char *resref, *name, *data;
	uint16_t type;
} tiny[2] = {
	{ "alpha", "alpha.2da", "2DA V2.0\n\n   LABEL\n0  one\n", 2017 },
	{ "Beta", "Beta.txt", "hello from a BIF\n", 10 },
};

/* data/x.bif in @p dfd: "BIFFV1  ", count, 0, 20, entries {id, offset, size, type}, payloads. */
static void write_tiny_bif(int dfd)
{
	uint8_t b[256] = { 0 };
	memcpy(b, "BIFFV1  ", 8);
	le32(b + 8, 2);
	le32(b + 12, 0);
	le32(b + 16, 20);
	size_t off = 20 + 2 * 16;
	for (uint32_t i = 0; i < 2; i++) {
		size_t n = strlen(tiny[i].data);
		le32(b + 20 + 16 * i, i);
		le32(b + 24 + 16 * i, (uint32_t)off);
		le32(b + 28 + 16 * i, (uint32_t)n);
		le32(b + 32 + 16 * i, tiny[i].type);
		memcpy(b + off, tiny[i].data, n);
		off += n;
	}
	assert_int_equal(lfs_arch_put(dfd, "data/x.bif", b, off), 0);
}

/* KEY @p rel in @p dfd: one BIF named @p bif, the 2 keys of tiny[] (ResID = 0 << 20 | i). */
static void write_tiny_key(int dfd, const char *rel, const char *bif)
{
	uint8_t k[256] = { 0 };
	size_t nl = strlen(bif), names = 64 + 12, keys = names + nl;
	memcpy(k, "KEY V1  ", 8);
	le32(k + 8, 1);      /* BIFCount */
	le32(k + 12, 2);     /* KeyCount */
	le32(k + 16, 64);    /* OffsetToFileTable */
	le32(k + 20, (uint32_t)keys);
	le32(k + 24, 126);   /* BuildYear (since 1900) */
	le32(k + 28, 1);     /* BuildDay */
	le32(k + 64, 1000);  /* file size (not checked) */
	le32(k + 68, (uint32_t)names);
	le16(k + 72, (uint16_t)nl);
	le16(k + 74, 1);     /* Drives */
	memcpy(k + names, bif, nl);
	for (uint32_t i = 0; i < 2; i++) {
		uint8_t *e = k + keys + 22 * i;
		memcpy(e, tiny[i].resref, strlen(tiny[i].resref));
		le16(e + 16, tiny[i].type);
		le32(e + 18, (0u << 20) | i);
	}
	assert_int_equal(lfs_arch_put(dfd, rel, k, keys + 44), 0);
}

/* The listing of @p rel in @p tfd: both resources of tiny[], their bytes, no problem. */
static void check_tiny(int tfd, const char *rel)
{
	lfs_viewset vs;
	list_ok(tfd, rel, 2, &vs);
	for (size_t i = 0; i < 2; i++) {
		const lfs_view *v = find(&vs, tiny[i].name);
		if (!v)
			fail_msg("%s: %s not listed", rel, tiny[i].name);
		assert_int_equal(v->kind, LFS_VIEW_RESOURCE);
		assert_int_equal(v->size, strlen(tiny[i].data));
		assert_false(v->writable);
		char mrel[256];
		snprintf(mrel, sizeof(mrel), "%s/%s", rel, tiny[i].name);
		uint8_t *d = NULL;
		size_t n = 0;
		struct stat st;
		bool ro = false;
		assert_int_equal(lfs_container_member_read(tfd, mrel, SIZE_MAX, &d, &n, &st, &ro), 0);
		assert_true(ro);
		assert_int_equal(n, strlen(tiny[i].data));
		assert_memory_equal(d, tiny[i].data, n);
		free(d);
	}
	lfs_viewset_free(&vs);
}

/* NWN:EE: data/nwn_base.key names its BIFs from the install folder (data\x.bif), any case. */
static void test_key_ee_layout(void **state)
{
	(void)state;
	char tmp[600];
	int tfd = lfs_arch_tmpdir(tmp, sizeof(tmp), "fs-archive-ee");
	assert_true(tfd >= 0);
	write_tiny_bif(tfd);
	write_tiny_key(tfd, "data/nwn_base.key", "data\\x.bif");
	check_tiny(tfd, "data/nwn_base.key");
	write_tiny_key(tfd, "data/nwn_upper.key", "DATA\\X.BIF");
	check_tiny(tfd, "data/nwn_upper.key");
	/* in the KEY's own folder (1.69's chitin.key) too */
	write_tiny_key(tfd, "data/chitin.key", "x.bif");
	check_tiny(tfd, "data/chitin.key");
	/* control: a BIF that is not there is a "missing" line, its resources absent */
	write_tiny_key(tfd, "data/gone.key", "data\\y.bif");
	lfs_viewset vs;
	struct stat st;
	lfs_sb probs = { 0 };
	lfs_error e;
	memset(&e, 0, sizeof(e));
	assert_int_equal(lfs_archive_build(tfd, "data/gone.key", SIZE_MAX, NULL, &st, &vs, &probs, &e),
			 LFS_OK);
	assert_int_equal(vs.n_views, 0);
	assert_non_null(probs.data);
	assert_non_null(strstr(probs.data, "data/y.bif: missing"));
	lfs_sb_free(&probs);
	lfs_viewset_free(&vs);
	lfs_atable_flush();
	close(tfd);
	assert_int_equal(lfs_arch_rmtree(tmp), 0);
}

/*
 * One mutated archive @p m (@p len bytes) as file @p name of folder @p tfd:
 * builds or fails cleanly; its listing names exactly the top names of its
 * whole tree, and the names-only tree exactly what the full tree holds.
 */
static void hostile_one(int tfd, const char *name, const uint8_t *m, size_t len)
{
	assert_int_equal(lfs_arch_put(tfd, name, m, len), 0);
	lfs_atable_flush(); /* same inode and size, maybe the same mtime: decode anew */
	lfs_viewset ls, vs, nv;
	struct stat st;
	lfs_sb probs = { 0 };
	lfs_error e;
	memset(&e, 0, sizeof(e));
	lfs_err r = lfs_archive_build(tfd, name, SIZE_MAX, NULL, &st, &ls, &probs, &e);
	lfs_atable_flush();
	lfs_view_opts no = { .names_only = true };
	lfs_error ne;
	lfs_err nr = build_tree(tfd, name, &no, &nv, NULL, &ne);
	assert_int_equal(nr, r);
	if (r != LFS_OK) {
		assert_true(e.msg[0] != '\0');
		lfs_sb_free(&probs);
		return;
	}
	assert_int_equal(st.st_size, len);
	assert_int_equal(build_tree(tfd, name, NULL, &vs, &probs, &e), LFS_OK);
	if (nv.n_views != vs.n_views) {
		for (size_t v = 0; v < nv.n_views; v++)
			fprintf(stderr, "names-only: %s\n", nv.views[v].path);
		for (size_t v = 0; v < vs.n_views; v++)
			fprintf(stderr, "full: %s\n", vs.views[v].path);
		fail_msg("%s (%zu bytes): names-only tree %zu views, full tree %zu; problems: %.*s",
			 name, len, nv.n_views, vs.n_views, (int)probs.len, probs.data);
	}
	for (size_t v = 0; v < vs.n_views; v++)
		assert_string_equal(nv.views[v].path, vs.views[v].path);
	/* the listing comes from the tables alone: an entry whose payload cannot
	 * be read (an E1 buffer that does not decompress, a SHA-1 mismatch) is
	 * listed, and the tree leaves it out saying so */
	assert_true(top_names(&vs) <= ls.n_views);
	for (size_t v = 0; v < ls.n_views; v++) {
		char sub[600];
		snprintf(sub, sizeof(sub), "%s/", ls.views[v].path);
		bool in = find(&vs, ls.views[v].path) != NULL;
		for (size_t k = 0; k < vs.n_views && !in; k++)
			in = !strncmp(vs.views[k].path, sub, strlen(sub));
		char said[600];
		snprintf(said, sizeof(said), "%s: cannot be read, left out", ls.views[v].path);
		if (!in && !(probs.data && strstr(probs.data, said)))
			fail_msg("%s: %s listed, not in the tree, not reported", name, ls.views[v].path);
	}
	lfs_viewset_free(&ls);
	lfs_viewset_free(&vs);
	lfs_viewset_free(&nv);
	lfs_sb_free(&probs);
}

static void test_hostile(void **state)
{
	(void)state;
	lfs_rng rng;
	lfs_rng_seed(&rng, "fs_archive", 13);
	static const char *const files[] = { "gen/nwn_erf/small_e1.erf", "real/nwn-lib-d/test.hak",
					     "real/nwnrs/erf_test.erf", "gen/nwn_erf/models_e1zstd.hak",
					     "gen/nwn_erf/models_v1.hak" };
	char tmp[600];
	int tfd = lfs_arch_tmpdir(tmp, sizeof(tmp), "fs-archive-hostile");
	assert_true(tfd >= 0);
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char p[600];
		const char *c = lfs_corpus_dir_or_skip();
		lfs_path(p, sizeof(p), "%s/archives/%s", c, files[f]);
		size_t n;
		uint8_t *d = lfs_read_file(p, &n);
		assert_non_null(d);
		unsigned rounds = n > 100000 ? 24 : 300;
		for (unsigned k = 0; k < rounds; k++) {
			uint8_t *m = malloc(n);
			assert_non_null(m);
			memcpy(m, d, n);
			size_t len = n;
			if (k & 1) {
				len = (size_t)lfs_rng_below(&rng, n);
			} else {
				unsigned flips = 1 + (unsigned)lfs_rng_below(&rng, 8);
				size_t span = k & 2 ? (n < 4096 ? n : 4096) : n;
				for (unsigned j = 0; j < flips; j++)
					m[lfs_rng_below(&rng, span)] ^= (uint8_t)(1u << lfs_rng_below(&rng, 8));
			}
			hostile_one(tfd, lfs_base_name(p), m, len);
			free(m);
		}
		free(d);
	}
	lfs_atable_flush();
	close(tfd);
	assert_int_equal(lfs_arch_rmtree(tmp), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_erf_counts),
		cmocka_unit_test(test_generated),
		cmocka_unit_test(test_listing_sizes),
		cmocka_unit_test(test_member_read),
		cmocka_unit_test(test_key_table_shared),
		cmocka_unit_test(test_key_ee_layout),
		cmocka_unit_test(test_hostile),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, lfs_arch_setup, lfs_arch_teardown));
}
