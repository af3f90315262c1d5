/**
 * @file test_cache_held.c
 * The view cache's accounting against what malloc really holds
 * (src/fs/cache.c lfs_centry_held(), docs/performance.md "Memory"), on
 * entries built from real models: the project's samples and every NWN
 * binary, NOD, SOD and NAD file of the corpus.
 *
 *  - An entry accounts every allocation it owns: its bytes are at least the
 *    sum of malloc_usable_size() (plus a chunk header) of the entry, its
 *    path, its array of views and each view's path and text.
 *  - What malloc's own statistics (mallinfo2: bytes in use) grow by when an
 *    entry is built is within 1.1x of what the entry accounts, and the
 *    other way round (skipped where mallinfo2 says nothing, e.g. under
 *    AddressSanitizer, whose allocator it does not describe).
 *  - A cache bounded to a few MiB keeps its accounted total under the bound
 *    through a walk over all these models, malloc's bytes in use stay
 *    within 1.1x of it, and evicted memory is given back (malloc_trim).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <malloc.h>

#include <cmocka.h>

#include "corpus.h"
#include "fs/cache.h"

/* One allocation as the test counts it: usable size plus glibc's chunk header. */
static size_t usable(const void *p)
{
	return p ? malloc_usable_size((void *)p) + sizeof(size_t) : 0;
}

/* Sum over what entry @p e owns, walked here (not through cache.c). */
static size_t owned(const lfs_centry *e)
{
	size_t b = usable(e) + usable(e->rel_buf) + usable(e->errmsg) + usable(e->vs.views);
	for (size_t i = 0; i < e->vs.n_views; i++)
		b += usable(e->vs.views[i].path) + usable(e->vs.views[i].data);
	return b;
}

/* The model files: samples/ *.mdl, then the corpus's NWN binaries, NOD, SOD, NAD. NULL-terminated. */
static char **model_files(size_t *count)
{
	size_t cap = 64, n = 0;
	char **all = malloc(cap * sizeof(*all));
	assert_non_null(all);
	const char *src = getenv("LFS_SOURCE_ROOT");
	char dir[4096];
	char **lists[5] = { NULL };
	size_t nl = 0;
	if (src) {
		lfs_path(dir, sizeof(dir), "%s/samples", src);
		lists[nl++] = lfs_list_dir(dir, ".mdl", NULL);
	}
	lists[nl++] = lfs_corpus_list("nwn", "binary.txt", NULL);
	const char *corpus = lfs_corpus_dir_or_skip();
	const char *more[3][2] = { { "nod", ".nod" }, { "sod", ".sod" }, { "nad", ".nad" } };
	for (int i = 0; i < 3; i++) {
		lfs_path(dir, sizeof(dir), "%s/%s", corpus, more[i][0]);
		lists[nl++] = lfs_list_dir(dir, more[i][1], NULL);
	}
	for (size_t l = 0; l < nl; l++) {
		for (size_t i = 0; lists[l] && lists[l][i]; i++) {
			if (n + 2 > cap) {
				cap *= 2;
				all = realloc(all, cap * sizeof(*all));
				assert_non_null(all);
			}
			all[n++] = strdup(lists[l][i]);
		}
		if (lists[l])
			lfs_free_list(lists[l]);
	}
	all[n] = NULL;
	*count = n;
	return all;
}

/* A cache entry of model file @p path (views built now; NULL when it is no model). */
static lfs_centry *entry_of(const char *path, uint64_t ino, size_t *view_bytes)
{
	size_t len = 0;
	uint8_t *data = lfs_read_file(path, &len);
	assert_non_null(data);
	lfs_viewset vs;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = lfs_views_build(lfs_base_name(path), data, len, NULL, &vs, &err);
	free(data);
	if (r != LFS_OK)
		return NULL;
	*view_bytes = 0;
	for (size_t i = 0; i < vs.n_views; i++)
		*view_bytes += vs.views[i].size;
	lfs_cache_key k = { .dev = 1, .ino = ino, .size = (int64_t)len, .mtime_ns = 1, .rel = path };
	lfs_centry *e = lfs_centry_new(&k, LFS_SOURCE_MODEL, &vs, NULL);
	assert_non_null(e);
	return e;
}

static void test_accounted_is_held(void **state)
{
	(void)state;
	size_t n = 0;
	char **files = model_files(&n);
	assert_true(n > 200);
	/* warm up whatever a first build allocates for good (none expected) */
	size_t vb = 0;
	lfs_centry_free(entry_of(files[0], 0, &vb));

	lfs_centry **kept = calloc(n, sizeof(*kept));
	assert_non_null(kept);
	size_t sum_acc = 0, sum_views = 0, models = 0;
	size_t before = lfs_malloc_in_use();
	for (size_t i = 0; i < n; i++) {
		lfs_centry *e = entry_of(files[i], i, &vb);
		if (!e)
			continue;
		/* every allocation the entry owns is accounted, and nothing much more */
		size_t own = owned(e);
		if (e->bytes < own || e->bytes > own + 64)
			fail_msg("%s: accounted %zu, owns %zu", files[i], e->bytes, own);
		sum_acc += e->bytes;
		sum_views += vb;
		kept[models++] = e;
	}
	/* malloc's own count of every entry kept (free chunks malloc keeps for
	 * reuse, e.g. in its thread cache, come and go: a few KiB of noise) */
	size_t held = lfs_malloc_in_use() - before;
	assert_true(models > 200);
	printf("# %zu models: view bytes %zu, accounted %zu, malloc in use %zu (held/accounted %.3f)\n",
	       models, sum_views, sum_acc, held, (double)held / (double)sum_acc);
	if (lfs_malloc_counts() && (held * 10 > sum_acc * 11 || sum_acc * 10 > held * 11))
		fail_msg("accounted %zu, malloc holds %zu", sum_acc, held);
	for (size_t i = 0; i < models; i++)
		lfs_centry_free(kept[i]);
	free(kept);
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
}

static void test_eviction_keeps_bound(void **state)
{
	(void)state;
	size_t n = 0;
	char **files = model_files(&n);
	const size_t bound = (size_t)4 << 20;
	bool counts = lfs_malloc_counts();
	size_t before = lfs_malloc_in_use();
	lfs_cache c;
	lfs_cache_init(&c, bound, 0);
	size_t peak_acc = 0, peak_held = 0;
	for (size_t i = 0; i < n; i++) {
		size_t vb = 0;
		lfs_centry *e = entry_of(files[i], i, &vb);
		if (!e)
			continue;
		size_t newest = e->bytes;
		if (newest > bound)
			printf("# %s: %zu bytes\n", files[i], newest);
		lfs_cache_release(&c, lfs_cache_put(&c, e));
		/* over the bound only by the newest entry, which always stays */
		assert_true(c.bytes <= bound || c.n == 1);
		assert_true(c.bytes <= bound || c.bytes == newest);
		if (c.bytes > peak_acc)
			peak_acc = c.bytes;
		size_t held = lfs_malloc_in_use() - before;
		if (held > peak_held)
			peak_held = held;
		if (c.n > 1 && counts && held * 10 > bound * 11 + (size_t)(c.nbuckets * sizeof(void *) * 10))
			fail_msg("after %s: malloc holds %zu for a cache bounded to %zu (accounted %zu)",
				 files[i], held, bound, c.bytes);
	}
	assert_true(c.evictions > 0);
	/* what was evicted went back to the kernel, every eighth of the bound (at least 4 MiB) */
	assert_true(c.trims > 0);
	printf("# bound %zu: peak accounted %zu, peak malloc in use %zu, %llu evictions, %llu trims\n",
	       bound, peak_acc, peak_held, (unsigned long long)c.evictions,
	       (unsigned long long)c.trims);
	lfs_cache_destroy(&c);
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accounted_is_held),
		cmocka_unit_test(test_eviction_keeps_bound),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
