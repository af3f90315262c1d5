/**
 * @file test_views_only.c
 * Builds of one view (lfs_view_opts.only) and of names only
 * (lfs_view_opts.names_only) against the full build, on real models of
 * every format with files: the project's samples/ (NWN) and the corpus's
 * NWN binaries, NOD, SOD and NAD files (skips, 77, without the corpus).
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

#include "../../src/views/viewset.h"
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
		skip();
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_corpus_nwn),
		cmocka_unit_test(test_corpus_nod),
		cmocka_unit_test(test_corpus_sod),
		cmocka_unit_test(test_corpus_nad),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	fprintf(stderr, "views_only: %zu models, %zu views built alone\n", g_models,
		g_views_checked);
	return r;
}
