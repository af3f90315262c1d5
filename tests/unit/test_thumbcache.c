/*
 * The thumbnail disk cache (src/fs/thumbcache.h) and the lazy thumbnail view
 * (viewset.h thumb_lazy, thumb.h lfs_thumb_png_retext):
 *  - put/get round trip, touch on hit, keys that differ by bytes, version, edge;
 *  - corrupt, truncated, wrong-edge and non-PNG files: ignored and removed,
 *    then replaced by a put;
 *  - the bound: least recently used removed first, stale temporary files too;
 *  - an unwritable cache folder: an errno, nothing left behind, get misses;
 *  - retext gives the very bytes of a PNG written with the keys;
 *  - a lazy build lists thumbnail.png without bytes exactly when the renderer
 *    draws something (samples and every corpus NWN binary), and the filled
 *    view equals lfs_views_thumbnail()'s picture.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corpus.h"
#include "fs/thumbcache.h"
#include "render/thumb.h"
#include "registry/viewset.h"

static char g_dir[256];

/* A fresh empty folder for one test (below the build folder). */
static const char *fresh_dir(const char *name)
{
	const char *b = getenv("LFS_BUILD_ROOT");
	snprintf(g_dir, sizeof(g_dir), "%s/test-thumbcache/%s", b ? b : ".", name);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", g_dir, g_dir);
	assert_int_equal(system(cmd), 0);
	return g_dir;
}

/* A valid PNG of edge @p edge whose first pixel is @p seed (different seeds: different bytes). */
static uint8_t *make_png(unsigned edge, uint8_t seed, const char *uri, int64_t mtime, size_t *n)
{
	uint8_t *rgba = calloc((size_t)edge * edge, 4);
	assert_non_null(rgba);
	for (size_t i = 0; i < (size_t)edge * edge; i++) {
		rgba[4 * i] = (uint8_t)(seed + i * 7);
		rgba[4 * i + 1] = (uint8_t)(seed * 3 + i);
		rgba[4 * i + 3] = 255;
	}
	uint8_t *png = NULL;
	lfs_error e;
	assert_int_equal(lfs_thumb_png(rgba, edge, edge, uri, mtime, &png, n, &e), LFS_OK);
	free(rgba);
	return png;
}

static size_t count_files(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name), sl = strlen(suffix);
		if (de->d_name[0] != '.' && l >= sl && strcmp(de->d_name + l - sl, suffix) == 0)
			n++;
		if (!strcmp(suffix, "tmp") && !strncmp(de->d_name, ".tmp-", 5))
			n++;
	}
	closedir(d);
	return n;
}

static void key_n(unsigned i, lfs_thumbcache_key *k)
{
	char model[32];
	int l = snprintf(model, sizeof(model), "model %u", i);
	lfs_thumbcache_key_of((const uint8_t *)model, (size_t)l, LFS_THUMB_VERSION, 128, k);
}

static char *file_of(const char *dir, const lfs_thumbcache_key *k, char *buf, size_t bufsz)
{
	char name[LFS_THUMBCACHE_NAME_MAX];
	lfs_thumbcache_name(k, name);
	snprintf(buf, bufsz, "%s/%s", dir, name);
	return buf;
}

static void test_keys(void **state)
{
	(void)state;
	const uint8_t a[] = "model bytes", b[] = "model bytez";
	lfs_thumbcache_key k1, k2, k3, k4, k5;
	lfs_thumbcache_key_of(a, sizeof(a), 1, 256, &k1);
	lfs_thumbcache_key_of(a, sizeof(a), 1, 256, &k2);
	lfs_thumbcache_key_of(b, sizeof(b), 1, 256, &k3);
	lfs_thumbcache_key_of(a, sizeof(a), 2, 256, &k4);
	lfs_thumbcache_key_of(a, sizeof(a), 1, 512, &k5);
	assert_memory_equal(k1.b, k2.b, sizeof(k1.b));
	assert_memory_not_equal(k1.b, k3.b, sizeof(k1.b));
	assert_memory_not_equal(k1.b, k4.b, sizeof(k1.b));
	assert_memory_not_equal(k1.b, k5.b, sizeof(k1.b));
	char name[LFS_THUMBCACHE_NAME_MAX];
	lfs_thumbcache_name(&k1, name);
	assert_int_equal(strlen(name), 64 + strlen(".thumb"));
}

static void test_put_get(void **state)
{
	(void)state;
	const char *dir = fresh_dir("putget");
	char sub[300];
	snprintf(sub, sizeof(sub), "%s/a/b/legacyfs", dir); /* parents are made */
	size_t n = 0;
	uint8_t *png = make_png(128, 1, NULL, -1, &n);
	lfs_thumbcache_key k;
	key_n(1, &k);
	char *deps = NULL;
	uint8_t *got = NULL;
	size_t gn = 0;
	assert_int_equal(lfs_thumbcache_get(sub, &k, 128, &deps, &got, &gn), ENOENT);
	assert_int_equal(lfs_thumbcache_put(sub, 1 << 20, &k, "tex\t-\n", png, n), 0);
	struct stat st;
	char path[400];
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	/* an old mtime, then a hit makes it recent */
	struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, file_of(sub, &k, path, sizeof(path)), old, 0), 0);
	assert_int_equal(lfs_thumbcache_get(sub, &k, 128, &deps, &got, &gn), 0);
	assert_string_equal(deps, "tex\t-\n");
	assert_int_equal(gn, n);
	assert_memory_equal(got, png, n);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_mtime > 1000000);
	free(deps);
	free(got);
	/* another edge of the same key is not this file */
	assert_int_equal(lfs_thumbcache_get(sub, &k, 256, &deps, &got, &gn), EBADMSG);
	assert_int_equal(count_files(sub, ".thumb"), 0);
	assert_int_equal(count_files(sub, "tmp"), 0);
	free(png);
}

/* Write @p n bytes of @p data as the cache file of @p k. */
static void write_raw(const char *dir, const lfs_thumbcache_key *k, const void *data, size_t n)
{
	char path[400];
	FILE *f = fopen(file_of(dir, k, path, sizeof(path)), "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	fclose(f);
}

static void test_corrupt(void **state)
{
	(void)state;
	const char *dir = fresh_dir("corrupt");
	size_t n = 0;
	uint8_t *png = make_png(128, 2, NULL, -1, &n);
	lfs_thumbcache_key k;
	key_n(2, &k);
	char *deps = NULL;
	uint8_t *got = NULL;
	size_t gn = 0;
	/* a good file, read whole, to cut and flip */
	assert_int_equal(lfs_thumbcache_put(dir, 0, &k, "", png, n), 0);
	char path[400];
	size_t fn = 0;
	uint8_t *good = lfs_read_file(file_of(dir, &k, path, sizeof(path)), &fn);
	assert_non_null(good);
	struct {
		const char *what;
		size_t len;
		int flip; /* byte to flip, -1 none */
	} cases[] = {
		{ "truncated PNG", fn - 5, -1 },
		{ "no IEND", fn - 12, -1 },
		{ "bad magic", fn, 0 },
		{ "bad PNG signature", fn, (int)(fn - n + 1) },
		{ "longer than it says", fn, -2 },
		{ "empty", 0, -1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t *b = malloc(fn + 8);
		assert_non_null(b);
		memcpy(b, good, fn);
		size_t len = cases[i].len;
		if (cases[i].flip >= 0)
			b[cases[i].flip] ^= 0x40;
		if (cases[i].flip == -2) {
			memcpy(b + fn, "garbage!", 8);
			len = fn + 8;
		}
		write_raw(dir, &k, b, len);
		free(b);
		assert_int_equal(lfs_thumbcache_get(dir, &k, 128, &deps, &got, &gn), EBADMSG);
		assert_null(got);
		assert_int_equal(count_files(dir, ".thumb"), 0); /* removed */
		/* and a put replaces it */
		assert_int_equal(lfs_thumbcache_put(dir, 0, &k, "", png, n), 0);
		assert_int_equal(lfs_thumbcache_get(dir, &k, 128, &deps, &got, &gn), 0);
		assert_memory_equal(got, png, n);
		free(deps);
		free(got);
		got = NULL;
	}
	free(good);
	free(png);
}

static void test_bound(void **state)
{
	(void)state;
	const char *dir = fresh_dir("bound");
	size_t n = 0, fsize = 0;
	lfs_thumbcache_key k[8];
	char path[400];
	for (unsigned i = 0; i < 8; i++) {
		uint8_t *png = make_png(128, (uint8_t)(10 + i), NULL, -1, &n);
		key_n(100 + i, &k[i]);
		assert_int_equal(lfs_thumbcache_put(dir, 0, &k[i], "", png, n), 0);
		free(png);
		struct stat st;
		assert_int_equal(stat(file_of(dir, &k[i], path, sizeof(path)), &st), 0);
		fsize = (size_t)st.st_size > fsize ? (size_t)st.st_size : fsize;
		/* file i last used at time 2000 + i, except 0 and 1 swapped by a "hit" below */
		struct timespec t[2] = { { 2000 + i, 0 }, { 2000 + i, 0 } };
		assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
	}
	struct timespec t[2] = { { 3000, 0 }, { 3000, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, file_of(dir, &k[0], path, sizeof(path)), t, 0), 0);
	/* a stale temporary file of a dead daemon, and a fresh one of a live one */
	char tmp[400];
	snprintf(tmp, sizeof(tmp), "%s/.tmp-1-1-1", dir);
	FILE *f = fopen(tmp, "w");
	assert_non_null(f);
	fclose(f);
	struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };
	assert_int_equal(utimensat(AT_FDCWD, tmp, old, 0), 0);
	snprintf(tmp, sizeof(tmp), "%s/.tmp-2-2-2", dir);
	f = fopen(tmp, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(count_files(dir, ".thumb"), 8);
	/* room for 5 files: 1, 2, 3 go (oldest), 0 (recently used) stays */
	long rm = lfs_thumbcache_trim(dir, 5 * fsize);
	assert_int_equal(rm, 3 + 1);
	assert_int_equal(count_files(dir, ".thumb"), 5);
	assert_int_equal(count_files(dir, "tmp"), 1);
	struct stat st;
	assert_int_equal(stat(file_of(dir, &k[0], path, sizeof(path)), &st), 0);
	for (unsigned i = 1; i <= 3; i++)
		assert_int_not_equal(stat(file_of(dir, &k[i], path, sizeof(path)), &st), 0);
	for (unsigned i = 4; i < 8; i++)
		assert_int_equal(stat(file_of(dir, &k[i], path, sizeof(path)), &st), 0);
	/* a put keeps the bound itself: the new file stays, the oldest (4) goes */
	uint8_t *png = make_png(128, 99, NULL, -1, &n);
	lfs_thumbcache_key kn;
	key_n(999, &kn);
	assert_int_equal(lfs_thumbcache_put(dir, 5 * fsize, &kn, "", png, n), 0);
	free(png);
	assert_int_equal(count_files(dir, ".thumb"), 5);
	assert_int_equal(stat(file_of(dir, &kn, path, sizeof(path)), &st), 0);
	assert_int_not_equal(stat(file_of(dir, &k[4], path, sizeof(path)), &st), 0);
	/* a folder that cannot be read */
	assert_true(lfs_thumbcache_trim("/nonexistent/legacyfs-thumbs", 1) < 0);
}

static void test_unwritable(void **state)
{
	(void)state;
	const char *dir = fresh_dir("ro");
	size_t n = 0;
	uint8_t *png = make_png(128, 3, NULL, -1, &n);
	lfs_thumbcache_key k;
	key_n(3, &k);
	char *deps = NULL;
	uint8_t *got = NULL;
	size_t gn = 0;
	/* the cache path is below a regular file: ENOTDIR, whoever runs the test */
	char file[300], under[400];
	snprintf(file, sizeof(file), "%s/plain", dir);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(under, sizeof(under), "%s/legacyfs", file);
	assert_int_equal(lfs_thumbcache_put(under, 1 << 20, &k, "", png, n), ENOTDIR);
	assert_int_not_equal(lfs_thumbcache_get(under, &k, 128, &deps, &got, &gn), 0);
	/* a read-only folder (permissions do not stop root: only when not root) */
	char ro[300];
	snprintf(ro, sizeof(ro), "%s/readonly", dir);
	assert_int_equal(mkdir(ro, 0500), 0);
	if (geteuid() != 0) {
		assert_int_equal(lfs_thumbcache_put(ro, 1 << 20, &k, "", png, n), EACCES);
		assert_int_equal(count_files(ro, "tmp"), 0);
		assert_int_equal(lfs_thumbcache_get(ro, &k, 128, &deps, &got, &gn), ENOENT);
	}
	/* too large a dependency text */
	char *big = malloc(LFS_THUMBCACHE_DEPS_MAX + 2);
	assert_non_null(big);
	memset(big, 'x', LFS_THUMBCACHE_DEPS_MAX + 1);
	big[LFS_THUMBCACHE_DEPS_MAX + 1] = 0;
	assert_int_equal(lfs_thumbcache_put(dir, 0, &k, big, png, n), EINVAL);
	free(big);
	assert_int_equal(count_files(dir, "tmp"), 0);
	free(png);
}

static void test_retext(void **state)
{
	(void)state;
	const char *uri = "file:///some/where/c_aribeth.mdl";
	int64_t mtimes[] = { 1700000000, 0, -1 };
	for (int u = 0; u < 2; u++) {
		for (size_t m = 0; m < 3; m++) {
			size_t bn = 0, wn = 0, rn = 0, an = 0;
			uint8_t *bare = make_png(128, 7, NULL, -1, &bn);
			uint8_t *with = make_png(128, 7, u ? uri : NULL, mtimes[m], &wn);
			uint8_t *re = NULL, *again = NULL;
			lfs_error e;
			assert_int_equal(lfs_thumb_png_retext(bare, bn, u ? uri : NULL, mtimes[m], &re, &rn, &e), LFS_OK);
			assert_int_equal(rn, wn);
			assert_memory_equal(re, with, wn);
			/* keys already there are replaced, not repeated */
			assert_int_equal(lfs_thumb_png_retext(with, wn, "file:///x", 5, &again, &an, &e), LFS_OK);
			uint8_t *want = NULL;
			size_t wantn = 0;
			want = make_png(128, 7, "file:///x", 5, &wantn);
			assert_int_equal(an, wantn);
			assert_memory_equal(again, want, wantn);
			free(want);
			free(again);
			free(re);
			free(bare);
			free(with);
		}
	}
	uint8_t junk[64] = { 0x89, 'P', 'N', 'G' };
	uint8_t *o = NULL;
	size_t on = 0;
	lfs_error e;
	assert_int_equal(lfs_thumb_png_retext(junk, sizeof(junk), NULL, -1, &o, &on, &e), LFS_ERR_CORRUPT);
	assert_null(o);
}

/* Lazy build of model @p path: thumbnail.png listed iff drawable, filled = lfs_views_thumbnail(). */
static void check_lazy(const char *path, unsigned edge, bool must_draw)
{
	size_t n = 0;
	uint8_t *data = lfs_read_file(path, &n);
	assert_non_null(data);
	const char *name = lfs_base_name(path);
	lfs_view_opts lazy = { .thumb_size = edge, .thumb_lazy = true };
	lfs_viewset vs;
	lfs_error e;
	if (lfs_views_build(name, data, n, &lazy, &vs, &e) != LFS_OK) {
		free(data);
		return; /* not this test's business */
	}
	uint8_t *png = NULL;
	size_t pn = 0;
	lfs_err tr = lfs_views_thumbnail(name, data, n, edge, NULL, "file:///m", 12, &png, &pn, &e);
	lfs_view *v = lfs_viewset_thumb_pending(&vs);
	if (must_draw)
		assert_int_equal(tr, LFS_OK);
	if (tr == LFS_OK) {
		if (!v)
			fail_msg("%s: drawable but thumbnail.png not listed", path);
		assert_true(vs.thumb_pending);
		assert_null(v->data);
		assert_int_equal(v->size, 0);
		lfs_viewset_thumb_set(&vs, png, pn);
		const lfs_view *f = lfs_viewset_find(&vs, "thumbnail.png");
		assert_non_null(f);
		assert_false(vs.thumb_pending);
		assert_int_equal(f->size, pn);
	} else {
		if (lfs_viewset_find(&vs, "thumbnail.png"))
			fail_msg("%s: nothing to draw (%s) but thumbnail.png listed", path, e.msg);
		assert_false(vs.thumb_pending);
		free(png);
	}
	lfs_viewset_free(&vs);
	free(data);
}

static void test_lazy_samples(void **state)
{
	(void)state;
	const char *root = getenv("LFS_SOURCE_ROOT");
	char p[512];
	snprintf(p, sizeof(p), "%s/samples/box.mdl", root ? root : "..");
	check_lazy(p, 256, true);
	snprintf(p, sizeof(p), "%s/samples/skin2bone.mdl", root ? root : "..");
	check_lazy(p, 128, true);
	/* without thumb_lazy the picture is drawn at build time, as before */
	size_t n = 0;
	snprintf(p, sizeof(p), "%s/samples/box.mdl", root ? root : "..");
	uint8_t *data = lfs_read_file(p, &n);
	lfs_view_opts eager = { .thumb_size = 128 };
	lfs_viewset vs;
	lfs_error e;
	assert_int_equal(lfs_views_build("box.mdl", data, n, &eager, &vs, &e), LFS_OK);
	const lfs_view *v = lfs_viewset_find(&vs, "thumbnail.png");
	assert_non_null(v);
	assert_non_null(v->data);
	assert_false(vs.thumb_pending);
	lfs_viewset_free(&vs);
	free(data);
}

static void test_lazy_corpus(void **state)
{
	(void)state;
	const char *c = getenv("LFS_CORPUS");
	struct stat st;
	if (!c || stat(c, &st) != 0)
		LFS_SKIP("no corpus (LFS_CORPUS)");
	size_t cnt = 0;
	char **l = lfs_corpus_list("nwn", "binary.txt", &cnt);
	for (size_t i = 0; i < cnt; i++)
		check_lazy(l[i], 128, false);
	lfs_free_list(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_put_get),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_unwritable),
		cmocka_unit_test(test_retext),
		cmocka_unit_test(test_lazy_samples),
		cmocka_unit_test(test_lazy_corpus),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
