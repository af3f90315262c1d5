/**
 * @file test_nodsod_blender.c
 * Blender round trips of NOD and SOD OBJ views (docs/formats/obj-csv.md,
 * "Saving OBJ from other programs"; docs/formats/nod.md, sod.md): every
 * writable OBJ view of every corpus NOD and SOD model, re-printed as Blender
 * 3.4's exporter prints it (positions and uvs with 6 decimals, normals with
 * 4, uvs and normals deduplicated so a corner's v/vt/vn indices differ, no
 * `g` lines, `s 0`), applies as a no-op (the original bytes); and a moved
 * vertex changes only that vertex.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "registry/viewset.h"
#include "blenderprint.h"
#include "corpus.h"

/* The OBJ views of model @p path, Blender-printed, applied through
 * lfs_views_apply(): each gives back the original bytes. Returns the number
 * of views applied. */
static size_t noop_model(const char *path)
{
	size_t n;
	uint8_t *data = lfs_read_file(path, &n);
	assert_non_null(data);
	lfs_viewset vs;
	lfs_error err;
	const char *name = lfs_base_name(path);
	if (lfs_views_build(name, data, n, NULL, &vs, &err) != LFS_OK) {
		fprintf(stderr, "%s: %s (not counted)\n", path, err.msg);
		free(data);
		return 0;
	}
	size_t views = 0;
	for (size_t k = 0; k < vs.n_views; k++) {
		const lfs_view *v = &vs.views[k];
		if (!v->writable || (v->kind != LFS_VIEW_MESH_OBJ && v->kind != LFS_VIEW_MODEL_OBJ))
			continue;
		char *txt = malloc(v->size + 1);
		assert_non_null(txt);
		memcpy(txt, v->data, v->size);
		txt[v->size] = 0;
		lfs_sb b = { 0 };
		/* a stored zero normal stays 0 0 0 (Blender makes one up, which the
		 * apply keeps as the stored zero) */
		lfs_test_blenderize(txt, true, 0, &b);
		free(txt);
		uint8_t *out = NULL;
		size_t on = 0;
		lfs_err r = lfs_views_apply(name, data, n, v->path, b.data, b.len, &out, &on, &err);
		if (r)
			fprintf(stderr, "%s %s: %s\n", path, v->path, err.msg);
		assert_int_equal(r, LFS_OK);
		if (on != n || memcmp(out, data, n))
			fprintf(stderr, "%s %s: not a no-op\n", path, v->path);
		assert_int_equal(on, n);
		assert_memory_equal(out, data, n);
		free(out);
		lfs_sb_free(&b);
		views++;
	}
	lfs_viewset_free(&vs);
	free(data);
	return views;
}

static void noop_dir(const char *fmt, const char *ext, size_t min_models)
{
	char dir[1024];
	lfs_path(dir, sizeof(dir), "%s/%s", lfs_corpus_dir_or_skip(), fmt);
	size_t nf = 0;
	char **files = lfs_list_dir(dir, ext, &nf);
	assert_non_null(files);
	size_t models = 0, views = 0;
	for (size_t i = 0; i < nf; i++) {
		size_t k = noop_model(files[i]);
		views += k;
		models += k > 0;
	}
	fprintf(stderr, "%s: Blender-printed OBJ views applied as no-ops: %zu views of %zu models\n",
		fmt, views, models);
	assert_true(models >= min_models);
	lfs_free_list(files);
}

static void test_nod_noop(void **state)
{
	(void)state;
	noop_dir("nod", ".nod", 20);
}

static void test_sod_noop(void **state)
{
	(void)state;
	noop_dir("sod", ".sod", 80);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nod_noop),
		cmocka_unit_test(test_sod_noop),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
