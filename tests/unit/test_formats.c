/**
 * @file test_formats.c
 * The format conformance test: one loop over the registry (lfs_formats[],
 * src/registry/format.h) that holds every format to the same contract, on
 * every corpus file the format claims:
 *
 *  1. registry: the format is found by name and by lfs_format_for() with
 *     each of its extensions in any letter case, and by no other row; it
 *     names its corpus folder (lfs_format.corpus_dir), and that folder holds
 *     files it claims, unless it declares it has no public files;
 *  2. lossless: encode(decode(bytes)) == bytes;
 *  3. views: the set is sorted and unique; each view's kind/target is
 *     consistent (a mesh or track view names an index, a whole-model view
 *     names none); thumbnail.png is never writable;
 *  4. every writable view re-applies unedited to the very same bytes; every
 *     read-only view is refused (LFS_ERR_UNSUPPORTED) and writes nothing;
 *  5. hostile input: truncations and single-byte flips of each file either
 *     decode (and then build views) or fail with an error value that carries
 *     a message and names the structure — never a crash (ASan/UBSan in CI).
 *
 * Corpus: ../shared/corpus (exit 77 when absent). Files are found by walking
 * the corpus folder every registry row names (lfs_format.corpus_dir: today
 * nwn/tree, nod, nad and sod; sod/disputed included: those must fail with a
 * message, or pass every check), so a new row cannot slip past. A format
 * with no public file (NIL: no real level is public) says so with
 * LFS_FORMAT_NO_CORPUS, is reported, and is covered by its own
 * generated-file tests (test_nil.c). LFS_TEST_SEED overrides the
 * hostile-input seed.
 */
#define _GNU_SOURCE /* nftw */
#include <ftw.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "conform.h"
#include "corpus.h"
#include "testrng.h"
#include "registry/format.h"
#include "registry/viewset.h"

/* Per file: hostile variants (truncations + flips) tried. */
#define N_TRUNC 8
#define N_FLIP 24

/* A corpus model, read once: its path, bytes and the row that claims it. */
typedef struct cfile {
	char *path;
	uint8_t *data;
	size_t n;
	const lfs_format *f;
} cfile;

static cfile *g_files;
static size_t g_n, g_cap;
static lfs_rng g_rng;
/* The row whose corpus folder is being walked (lfs_conform_walk_rows), and
 * per row of lfs_formats[] how many files of its own folder it claims
 * (counted before the fast tier's slice). */
static const lfs_format *g_walk_row;
static size_t g_own_files[64];

static size_t row_index(const lfs_format *f)
{
	size_t i = 0;
	for (const lfs_format *const *fp = lfs_formats; *fp && *fp != f; fp++)
		i++;
	return i;
}

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type != FTW_F)
		return 0;
	size_t n = 0;
	uint8_t *d = lfs_read_file(path, &n);
	if (!d)
		return 0;
	const lfs_format *f = lfs_format_for(lfs_base_name(path), d, n);
	if (f && f == g_walk_row && row_index(f) < 64)
		g_own_files[row_index(f)]++;
	static size_t seen;
	if (!f || !lfs_test_slice_keeps(seen++)) { /* the fast tier: a slice (docs/testing.md) */
		free(d);
		return 0;
	}
	if (g_n == g_cap) {
		g_cap = g_cap ? g_cap * 2 : 256;
		g_files = realloc(g_files, g_cap * sizeof(*g_files));
		assert_non_null(g_files);
	}
	g_files[g_n].path = strdup(path);
	g_files[g_n].data = d;
	g_files[g_n].n = n;
	g_files[g_n].f = f;
	g_n++;
	return 0;
}

static int setup(void **state)
{
	(void)state;
	const char *root = lfs_corpus_dir_or_skip();
	lfs_conform_walk_rows(root, walk_one, &g_walk_row);
	lfs_rng_seed(&g_rng, "test_formats", 0x5DEECE66Dull);
	fprintf(stderr, "test_formats: %zu corpus models\n", g_n);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < g_n; i++) {
		free(g_files[i].path);
		free(g_files[i].data);
	}
	free(g_files);
	return 0;
}

static size_t files_of(const lfs_format *f)
{
	size_t k = 0;
	for (size_t i = 0; i < g_n; i++)
		k += g_files[i].f == f;
	return k;
}

/* 1. Registry rows: complete, unique names, found by every extension. */
static void test_registry(void **state)
{
	(void)state;
	size_t rows = 0;
	for (const lfs_format *const *fp = lfs_formats; *fp; fp++, rows++) {
		const lfs_format *f = *fp;
		assert_non_null(f->name);
		assert_non_null(f->extensions);
		assert_non_null(f->extensions[0]);
		assert_non_null(f->detect);
		assert_non_null(f->decode);
		assert_non_null(f->encode);
		assert_non_null(f->free_model);
		assert_non_null(f->build_views);
		assert_ptr_equal(lfs_format_named(f->name), f);
		/* its corpus folder: named, present, and holding files it claims */
		if (!f->corpus_dir)
			fail_msg("%s: no corpus_dir (a folder below the corpus, or "
				 "LFS_FORMAT_NO_CORPUS)",
				 f->name);
		if (*f->corpus_dir) {
			char dir[4096];
			struct stat st;
			snprintf(dir, sizeof(dir), "%s/%s", lfs_corpus_dir(), f->corpus_dir);
			if (stat(dir, &st) || !S_ISDIR(st.st_mode))
				fail_msg("%s: corpus folder %s missing", f->name, f->corpus_dir);
			assert_true(row_index(f) < 64);
			if (!g_own_files[row_index(f)])
				fail_msg("%s: no file of its corpus folder %s is detected as %s",
					 f->name, f->corpus_dir, f->name);
		}
		for (const lfs_format *const *gp = lfs_formats; *gp != f; gp++)
			assert_string_not_equal((*gp)->name, f->name);
		for (const char *const *e = f->extensions; *e; e++) {
			assert_int_equal((*e)[0], '.');
			for (const char *c = *e; *c; c++)
				assert_false(*c >= 'A' && *c <= 'Z');
		}
		/* every corpus file of this format is found under its extension in
		 * upper case too, and nothing matches without an extension */
		for (size_t i = 0; i < g_n; i++) {
			if (g_files[i].f != f)
				continue;
			const uint8_t *d = g_files[i].data;
			size_t n = g_files[i].n;
			char up[256];
			snprintf(up, sizeof(up), "X%s", f->extensions[0]);
			for (char *c = up; *c; c++)
				if (*c >= 'a' && *c <= 'z')
					*c = (char)(*c - 'a' + 'A');
			assert_ptr_equal(lfs_format_for(up, d, n), f);
			assert_null(lfs_format_for("x.unknown-extension", d, n));
		}
		fprintf(stderr, "  %-8s %zu corpus files%s\n", f->name, files_of(f),
			files_of(f) ? "" : " (no public files: covered by its own tests)");
	}
	assert_true(rows >= 5);
	assert_null(lfs_format_named("no-such-format"));
}

/* Views of a decoded file must have consistent kinds and targets. */
static void check_view_shape(const lfs_view *v)
{
	assert_true(v->kind >= LFS_VIEW_TEXT && v->kind <= LFS_VIEW_THUMBNAIL);
	bool whole = v->target.anim == LFS_VIEW_NONE && v->target.node == LFS_VIEW_NONE &&
		     v->target.item == LFS_VIEW_NONE;
	switch (v->kind) {
	case LFS_VIEW_TEXT:
	case LFS_VIEW_MATERIALS:
	case LFS_VIEW_MODEL_OBJ:
	case LFS_VIEW_TABLE_CSV:
	case LFS_VIEW_THUMBNAIL:
		if (!whole)
			fail_msg("%s: whole-model view with a target", v->path);
		break;
	case LFS_VIEW_MESH_OBJ:
	case LFS_VIEW_TRACK_CSV:
		if (v->target.node == LFS_VIEW_NONE)
			fail_msg("%s: part view without a node index", v->path);
		break;
	case LFS_VIEW_NOTICE: /* only with a memory budget, never set here */
		fail_msg("%s: notice view without a budget", v->path);
		break;
	case LFS_VIEW_RESOURCE: /* only in archive folders (src/fs), never from a format */
	case LFS_VIEW_MEMBER:
		fail_msg("%s: archive view from a model format", v->path);
		break;
	case LFS_VIEW_LINK: /* only added by the mount (src/fs/supermodel.h) */
		fail_msg("%s: link view from a model format", v->path);
		break;
	}
	if (v->kind == LFS_VIEW_THUMBNAIL)
		assert_false(v->writable);
}

/* 2.–4. Lossless codec; views re-apply to the same bytes. */
static void test_roundtrip(void **state)
{
	(void)state;
	size_t views = 0, writable = 0;
	for (size_t i = 0; i < g_n; i++) {
		const lfs_format *f = g_files[i].f;
		const uint8_t *d = g_files[i].data;
		size_t n = g_files[i].n;
		lfs_error err;
		void *m = NULL;
		lfs_err r = f->decode(d, n, &m, &err);
		if (r) {
			/* refused (e.g. sod/disputed): a message naming the structure */
			if (!err.msg[0] || !err.structure)
				fail_msg("%s: decode failed without a message", g_files[i].path);
			lfs_viewset vs;
			assert_int_not_equal(lfs_views_build(lfs_base_name(g_files[i].path), d, n, NULL,
							     &vs, &err),
					     LFS_OK);
			f->free_model(m);
			continue;
		}
		uint8_t *e = NULL;
		size_t en = 0;
		r = f->encode(m, &e, &en, &err);
		if (r)
			fail_msg("%s: encode: %s", g_files[i].path, err.msg);
		lfs_assert_same_bytes(e, en, d, n, g_files[i].path);
		free(e);
		f->free_model(m);

		lfs_viewset vs;
		r = lfs_views_build(lfs_base_name(g_files[i].path), d, n, NULL, &vs, &err);
		if (r)
			fail_msg("%s: views: %s", g_files[i].path, err.msg);
		assert_ptr_equal(vs.format, f);
		for (size_t k = 0; k < vs.n_views; k++) {
			const lfs_view *v = &vs.views[k];
			views++;
			check_view_shape(v);
			if (k)
				assert_true(strcmp(vs.views[k - 1].path, v->path) < 0);
			uint8_t *out = NULL;
			size_t on = 0;
			r = lfs_view_apply(f, d, n, v, v->data, v->size, NULL, &out, &on, &err);
			if (!v->writable) {
				if (r != LFS_ERR_UNSUPPORTED || out)
					fail_msg("%s/%s: read-only view was not refused",
						 g_files[i].path, v->path);
				continue;
			}
			writable++;
			assert_non_null(f->apply);
			if (r)
				fail_msg("%s/%s: unedited view refused: %s", g_files[i].path,
					 v->path, err.msg);
			if (on != n || memcmp(out, d, n))
				fail_msg("%s/%s: unedited view changed the model", g_files[i].path,
					 v->path);
			free(out);
		}
		lfs_viewset_free(&vs);
	}
	fprintf(stderr, "  %zu views, %zu writable, all re-applied to the same bytes\n", views,
		writable);
	assert_true(writable > 0);
}

static void hostile_one(const lfs_format *f, const char *path, const uint8_t *d, size_t n,
			const char *what)
{
	lfs_error err;
	void *m = NULL;
	lfs_err r = f->decode(d, n, &m, &err);
	f->free_model(m);
	if (r) {
		if (!err.msg[0] || !err.structure)
			fail_msg("%s (%s): decode failed without a message/structure", path, what);
		return;
	}
	lfs_viewset vs;
	r = lfs_views_build(lfs_base_name(path), d, n, NULL, &vs, &err);
	if (r == LFS_OK)
		lfs_viewset_free(&vs);
	else if (!err.msg[0])
		fail_msg("%s (%s): views failed without a message", path, what);
}

/* 5. Hostile input through every codec. */
static void test_hostile(void **state)
{
	(void)state;
	size_t cases = 0;
	for (size_t i = 0; i < g_n; i++) {
		const lfs_format *f = g_files[i].f;
		const uint8_t *d = g_files[i].data;
		size_t n = g_files[i].n;
		if (!n)
			continue;
		uint8_t *c = malloc(n);
		assert_non_null(c);
		char what[64];
		for (int t = 0; t < N_TRUNC; t++) {
			size_t len = (size_t)lfs_rng_below(&g_rng, n);
			/* exact-size copies so ASan sees any read past the end */
			uint8_t *tr = malloc(len ? len : 1);
			assert_non_null(tr);
			memcpy(tr, d, len);
			snprintf(what, sizeof(what), "truncated to %zu", len);
			hostile_one(f, g_files[i].path, tr, len, what);
			free(tr);
			cases++;
		}
		for (int k = 0; k < N_FLIP; k++) {
			memcpy(c, d, n);
			size_t off = (size_t)lfs_rng_below(&g_rng, n);
			c[off] ^= (uint8_t)(1u + lfs_rng_below(&g_rng, 255));
			snprintf(what, sizeof(what), "byte 0x%zx flipped", off);
			hostile_one(f, g_files[i].path, c, n, what);
			cases++;
		}
		free(c);
	}
	fprintf(stderr, "  %zu hostile variants\n", cases);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_hostile),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
