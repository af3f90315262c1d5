/**
 * @file test_views_only.c
 * Builds of one view (lfs_view_opts.only) and of names only
 * (lfs_view_opts.names_only) against the full build, on real models of
 * every format: the project's samples/ (NWN), the corpus's NWN binaries,
 * NOD, SOD and NAD files (skips, 77, without the corpus) and generated NIL
 * levels (no NIL file is public; the layout of bench/nil_bench.c).
 *
 * - names_only lists exactly the views of a full build: same paths, kinds,
 *   targets and writable flags, no bytes, the set marked names_only; also
 *   with a pending thumbnail (thumb_size + thumb_lazy), as the mount builds.
 * - only gives that view alone, byte for byte the full build's text, with
 *   the same kind, target and writable flag: every view of a model of up to
 *   40 views, else the text view, model.obj and 20 views drawn at random
 *   (fixed seed); a path the model does not have gives an empty set.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "formats/nil/nil_views.h"
#include "registry/viewset.h"
#include "corpus.h"
#include "testrng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void same_entry(const lfs_view *a, const lfs_view *b)
{
	assert_string_equal(a->path, b->path);
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->target.anim, b->target.anim);
	assert_int_equal(a->target.node, b->target.node);
	assert_int_equal(a->target.item, b->target.item);
	assert_int_equal(a->writable, b->writable);
}

/* names_only build of @p f's bytes with @p o (copied) listed as the full
 * build with @p o lists it. */
static void check_names(const lfs_cfile *f, const lfs_view_opts *o, const lfs_viewset *full)
{
	lfs_view_opts no = *o;
	no.names_only = true;
	lfs_viewset ns;
	lfs_error err;
	if (lfs_views_build(f->name, f->data, f->n, &no, &ns, &err) != LFS_OK)
		fail_msg("%s: names-only build: %s", f->path, err.msg);
	assert_true(ns.names_only);
	assert_ptr_equal(ns.format, full->format);
	assert_int_equal(ns.writable, full->writable);
	if (ns.n_views != full->n_views)
		fail_msg("%s: names only lists %zu views, a full build %zu", f->path, ns.n_views,
			 full->n_views);
	for (size_t i = 0; i < ns.n_views; i++) {
		same_entry(&ns.views[i], &full->views[i]);
		assert_null(ns.views[i].data);
		assert_int_equal(ns.views[i].size, 0);
	}
	lfs_viewset_free(&ns);
}

/* only build of view @p v: that view alone, same bytes. */
static void check_only(const lfs_cfile *f, const lfs_view *v)
{
	lfs_view_opts o = { .only = v->path };
	lfs_viewset os;
	lfs_error err;
	if (lfs_views_build(f->name, f->data, f->n, &o, &os, &err) != LFS_OK)
		fail_msg("%s: build of %s only: %s", f->path, v->path, err.msg);
	if (os.n_views != 1)
		fail_msg("%s: build of %s only holds %zu views", f->path, v->path, os.n_views);
	same_entry(&os.views[0], v);
	if (os.views[0].size != v->size || memcmp(os.views[0].data, v->data, v->size) != 0)
		fail_msg("%s: %s built alone differs from the full build (%zu vs %zu bytes)",
			 f->path, v->path, os.views[0].size, v->size);
	lfs_viewset_free(&os);
}

static size_t g_models, g_views_checked;

static void check_model(const lfs_cfile *f, lfs_rng *rng, bool thumb)
{
	lfs_viewset full;
	lfs_error err;
	const lfs_view_opts none = { 0 };
	if (lfs_views_build(f->name, f->data, f->n, NULL, &full, &err) != LFS_OK)
		fail_msg("%s: full build: %s", f->path, err.msg);
	assert_true(full.n_views > 0);
	g_models++;
	check_names(f, &none, &full);
	if (full.n_views <= 40) {
		for (size_t i = 0; i < full.n_views; i++)
			check_only(f, &full.views[i]);
		g_views_checked += full.n_views;
	} else {
		for (size_t i = 0; i < full.n_views; i++)
			if (full.views[i].kind == LFS_VIEW_TEXT ||
			    full.views[i].kind == LFS_VIEW_MODEL_OBJ) {
				check_only(f, &full.views[i]);
				g_views_checked++;
			}
		for (int k = 0; k < 20; k++) {
			check_only(f, &full.views[lfs_rng_below(rng, full.n_views)]);
			g_views_checked++;
		}
	}
	/* a path the model does not have: nothing */
	lfs_view_opts o = { .only = "meshes/no such view.obj" };
	lfs_viewset os;
	assert_int_equal(lfs_views_build(f->name, f->data, f->n, &o, &os, &err), LFS_OK);
	assert_int_equal(os.n_views, 0);
	lfs_viewset_free(&os);
	lfs_viewset_free(&full);
	if (!thumb)
		return;
	/* as the mount lists a model folder: thumbnail.png pending */
	const lfs_view_opts lazy = { .thumb_size = 128, .thumb_lazy = true };
	if (lfs_views_build(f->name, f->data, f->n, &lazy, &full, &err) != LFS_OK)
		fail_msg("%s: full build with a lazy thumbnail: %s", f->path, err.msg);
	check_names(f, &lazy, &full);
	lfs_viewset_free(&full);
}

static void check_files(char **paths, uint64_t seed, bool thumb_all)
{
	size_t n = 0;
	lfs_cfile *fs = lfs_load_files(paths, &n, NULL);
	assert_true(n > 0);
	lfs_rng rng;
	lfs_rng_init(&rng, seed);
	for (size_t i = 0; i < n; i++)
		check_model(&fs[i], &rng, thumb_all || i % 16 == 0);
	lfs_free_files(fs, n);
}

static void test_samples(void **state)
{
	(void)state;
	const char *src = getenv("LFS_SOURCE_ROOT");
	assert_non_null(src);
	char dir[4096];
	size_t n = 0;
	char **paths = lfs_list_dir(lfs_path(dir, sizeof(dir), "%s/samples", src), ".mdl", &n);
	assert_non_null(paths);
	assert_true(n >= 3);
	check_files(paths, 1, true);
	lfs_free_list(paths);
}

static void test_corpus_nwn(void **state)
{
	(void)state;
	size_t n = 0;
	char **paths = lfs_corpus_list("nwn", "binary.txt", &n);
	assert_true(n >= 200);
	check_files(paths, 2, false);
	lfs_free_list(paths);
}

/* every file of CORPUS/<fmt> named *<ext> */
static void corpus_dir(const char *fmt, const char *ext, uint64_t seed)
{
	const char *corpus = lfs_corpus_dir_or_skip();
	char dir[4096];
	size_t n = 0;
	char **paths = lfs_list_dir(lfs_path(dir, sizeof(dir), "%s/%s", corpus, fmt), ext, &n);
	if (!paths || !n) {
		lfs_free_list(paths);
		LFS_SKIP(dir);
	}
	check_files(paths, seed, false);
	lfs_free_list(paths);
}

static void test_corpus_nod(void **state)
{
	(void)state;
	corpus_dir("nod", ".nod", 3);
}

static void test_corpus_sod(void **state)
{
	(void)state;
	corpus_dir("sod", ".sod", 4);
}

static void test_corpus_nad(void **state)
{
	(void)state;
	corpus_dir("nad", ".nad", 5);
}

/* ---- a generated NIL level (docs/formats/nil.md; as bench/nil_bench.c) -- */

typedef struct gbuf {
	uint8_t *p;
	size_t n, cap;
} gbuf;

static void put(gbuf *b, const void *p, size_t n)
{
	while (b->n + n > b->cap) {
		b->cap = b->cap ? 2 * b->cap : 4096;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void u8(gbuf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void u16(gbuf *b, uint16_t v)
{
	uint8_t t[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	put(b, t, 2);
}

static void u32(gbuf *b, uint32_t v)
{
	uint8_t t[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	put(b, t, 4);
}

static void f32(gbuf *b, float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	u32(b, u);
}

static void planes(gbuf *b, lfs_rng *r, int n)
{
	for (int i = 0; i < n; i++) {
		int axis = (int)lfs_rng_below(r, 3);
		for (int k = 0; k < 3; k++)
			f32(b, k == axis ? 1.0f : 0.0f);
		f32(b, lfs_rng_float(r, -1000, 1000));
	}
}

/* A level of @p sectors sectors of 60 vertices and 90 wedges each. */
static void nil_level(gbuf *b, lfs_rng *r, int sectors)
{
	put(b, "NIL\x10", 4);
	u32(b, 27);
	for (int i = 0; i < 72; i++)
		u8(b, lfs_rng_u8(r));
	for (int k = 0; k < 3; k++)
		f32(b, 0.25f);
	u32(b, 8);
	for (int i = 0; i < 8; i++) {
		char name[32] = { 0 };
		snprintf(name, sizeof(name), "London\\SBIwall%d_L", i);
		put(b, name, 32);
	}
	u32(b, (uint32_t)sectors);
	for (int s = 0; s < sectors; s++) {
		u32(b, (uint32_t)lfs_rng_below(r, 4));
		for (int k = 0; k < 3; k++)
			f32(b, 0.2f);
		u8(b, 6);
		planes(b, r, 6);
		u16(b, 8);
		planes(b, r, 8);
		u16(b, 12);
		for (int i = 0; i < 48; i++)
			u16(b, (uint16_t)(lfs_rng_below(r, 8) ? lfs_rng_below(r, 12) : 0xFFFF));
		u16(b, 60);
		for (int i = 0; i < 180; i++)
			f32(b, lfs_rng_float(r, -2000, 2000));
		u16(b, 90);
		uint16_t base = (uint16_t)lfs_rng_below(r, 8);
		for (int i = 0; i < 90; i++) {
			u16(b, (uint16_t)lfs_rng_below(r, 60));
			u16(b, base);
			u8(b, 200);
			u8(b, 180);
			u8(b, 160);
			u8(b, 0xFF);
			for (int k = 0; k < 4; k++)
				f32(b, lfs_rng_float(r, -4, 4));
		}
	}
}

static void test_nil_generated(void **state)
{
	(void)state;
	lfs_rng r;
	lfs_rng_init(&r, 6);
	static const int sectors[] = { 1, 3, 12, 50 };
	for (size_t i = 0; i < sizeof(sectors) / sizeof(sectors[0]); i++) {
		gbuf b = { 0 };
		nil_level(&b, &r, sectors[i]);
		char path[32];
		snprintf(path, sizeof(path), "gen%d.nil", sectors[i]);
		lfs_cfile f = { .path = path, .name = path, .data = b.p, .n = b.n };
		lfs_viewset vs;
		lfs_error err;
		if (lfs_views_build(f.name, f.data, f.n, NULL, &vs, &err) != LFS_OK)
			fail_msg("%s: %s", path, err.msg);
		assert_ptr_equal(vs.format, &lfs_format_nil);
		assert_non_null(lfs_viewset_find(&vs, "sectors/0.obj"));
		lfs_viewset_free(&vs);
		check_model(&f, &r, true);
		free(b.p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_corpus_nwn),
		cmocka_unit_test(test_corpus_nod),
		cmocka_unit_test(test_corpus_sod),
		cmocka_unit_test(test_corpus_nad),
		cmocka_unit_test(test_nil_generated),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	fprintf(stderr, "views_only: %zu models, %zu views built alone\n", g_models,
		g_views_checked);
	return lfs_test_exit(r);
}
