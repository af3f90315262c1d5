/**
 * @file test_fs_archive.c
 * The folder of an archive (src/fs/fs_archive.h) on the archive corpus:
 * every ERF-family archive lists exactly its MANIFEST entry count of names,
 * the names-only build lists the same paths as the full build, broken
 * entries are named broken-<index>.<ext> and reported; the generated
 * HAK V1/E1 and KEY/BIF V1/E1 sets give every input's bytes (gen/inputs.tsv)
 * and each binary model as a read-only folder with model.mdl (its model.mtl
 * naming the archive's own texture); truncated and
 * bit-flipped archives build or fail cleanly (ASan/UBSan in CI), their
 * listing (names only) naming exactly what the full build holds.
 * Deterministic (testrng.h; LFS_TEST_SEED replays).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive_corpus.h"
#include "corpus.h"
#include "fs/fs_archive.h"
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
		lfs_viewset full, names;
		lfs_sb probs = { 0 };
		lfs_error e;
		memset(&e, 0, sizeof(e));
		assert_int_equal(lfs_archive_build(AT_FDCWD, "", name, d, n, SIZE_MAX, NULL, &full,
						   &probs, &e), LFS_OK);
		lfs_view_opts no = { .names_only = true };
		assert_int_equal(lfs_archive_build(AT_FDCWD, "", name, d, n, SIZE_MAX, &no, &names,
						   NULL, &e), LFS_OK);
		if (top_names(&full) != (size_t)r->entries)
			fail_msg("%s: %zu names, MANIFEST %ld", r->file, top_names(&full), r->entries);
		assert_int_equal(full.n_views, names.n_views);
		/* ERFs can be written (archive_edit.h): every resource but a broken
		 * entry, and the writable views of the models inside */
		bool any = false;
		for (size_t k = 0; k < full.n_views; k++) {
			const lfs_view *v = &full.views[k];
			assert_string_equal(v->path, names.views[k].path);
			assert_int_equal(v->writable, names.views[k].writable);
			if (!strchr(v->path, '/'))
				assert_int_equal(v->writable, strncmp(v->path, "broken-", 7) != 0);
			any |= v->writable;
		}
		assert_int_equal(full.writable, any);
		assert_true(full.writable || r->entries == 0);
		if (strstr(r->file, "prc_recipe_scroll_temp")) {
			size_t nb = 0;
			for (size_t k = 0; k < full.n_views; k++)
				nb += !strncmp(full.views[k].path, "broken-", 7);
			assert_int_equal(nb, 10);
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
		free(d);
		checked++;
	}
	assert_true(checked >= 16);
}

/* Every input of gen/inputs.tsv in the folder of the archive at @p path. */
static void check_generated(const char *path)
{
	size_t n;
	uint8_t *d = lfs_read_file(path, &n);
	assert_non_null(d);
	char dir[512];
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	lfs_viewset vs;
	lfs_sb probs = { 0 };
	lfs_error e;
	memset(&e, 0, sizeof(e));
	assert_int_equal(lfs_archive_build(AT_FDCWD, dir, lfs_base_name(path), d, n, SIZE_MAX, NULL,
					   &vs, &probs, &e), LFS_OK);
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
	const lfs_view *mtl = find(&vs, "c_aribeth.mdl/model.mtl");
	assert_non_null(mtl);
	assert_non_null(strstr(mtl->data, "map_Kd ../c_aribeth.tga\n"));
	assert_non_null(find(&vs, "c_aribeth.tga"));
	assert_int_equal(models, 6);    /* the 6 binary models; the 3 ASCII ones are files */
	assert_int_equal(plain, 35 - 6);
	lfs_sb_free(&probs);
	lfs_viewset_free(&vs);
	free(d);
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

static void test_hostile(void **state)
{
	(void)state;
	lfs_rng rng;
	lfs_rng_seed(&rng, "fs_archive", 13);
	static const char *const files[] = { "gen/nwn_erf/small_e1.erf", "real/nwn-lib-d/test.hak",
					     "real/nwnrs/erf_test.erf", "gen/nwn_erf/models_e1zstd.hak",
					     "gen/nwn_erf/models_v1.hak" };
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
			lfs_viewset vs;
			lfs_sb probs = { 0 };
			lfs_error e;
			memset(&e, 0, sizeof(e));
			lfs_err r = lfs_archive_build(AT_FDCWD, "", lfs_base_name(p), m, len, SIZE_MAX, NULL,
						      &vs, &probs, &e);
			/* A listing (names only) names exactly what the full build holds. */
			lfs_view_opts no = { .names_only = true };
			lfs_viewset nv;
			lfs_error ne;
			memset(&ne, 0, sizeof(ne));
			lfs_err nr = lfs_archive_build(AT_FDCWD, "", lfs_base_name(p), m, len, SIZE_MAX,
						       &no, &nv, NULL, &ne);
			assert_int_equal(nr, r);
			if (r == LFS_OK) {
				assert_int_equal(nv.n_views, vs.n_views);
				for (size_t v = 0; v < vs.n_views; v++)
					assert_string_equal(nv.views[v].path, vs.views[v].path);
				lfs_viewset_free(&vs);
				lfs_viewset_free(&nv);
			} else {
				assert_true(e.msg[0] != '\0');
			}
			lfs_sb_free(&probs);
			free(m);
		}
		free(d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_erf_counts),
		cmocka_unit_test(test_generated),
		cmocka_unit_test(test_hostile),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, lfs_arch_setup, lfs_arch_teardown));
}
