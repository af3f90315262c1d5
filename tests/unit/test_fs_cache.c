/**
 * @file test_fs_cache.c
 * The view cache (src/fs/cache.c) and the failure list (src/fs/errlog.c):
 * LRU order, byte and entry bounds, entries in use and the newest entry are
 * never evicted, keys
 * differ by every field; builds in progress are registered per key; errlog dedupes, escapes newlines and only grows.
 * The cached views are real ones, built from corpus binaries.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conform.h"
#include "corpus.h"
#include "fs/cache.h"
#include "fs/errlog.h"

/* Views of the i-th corpus binary (i < 216). */
static lfs_viewset build_nth(size_t i, size_t *bytes)
{
	size_t n = 0;
	char **paths = lfs_corpus_list("nwn", "binary.txt", &n);
	assert_non_null(paths);
	assert_true(i < n);
	size_t len = 0;
	uint8_t *data = lfs_read_file_ok(paths[i], &len);
	lfs_viewset vs;
	lfs_error err;
	const char *name = strrchr(paths[i], '/') + 1;
	assert_int_equal(lfs_views_build(name, data, len, NULL, &vs, &err), LFS_OK);
	free(data);
	lfs_free_list(paths);
	*bytes = 0;
	for (size_t k = 0; k < vs.n_views; k++)
		*bytes += vs.views[k].size;
	return vs;
}

static lfs_cache_key key(uint64_t ino, const char *rel)
{
	lfs_cache_key k = { .dev = 1, .ino = ino, .size = 100, .mtime_ns = 5, .rel = rel };
	return k;
}

static void test_cache_keys(void **state)
{
	(void)state;
	lfs_cache c;
	lfs_cache_init(&c, 0, 0);
	lfs_cache_key k = key(7, "a/b.mdl");
	lfs_centry *e = lfs_centry_new(&k, LFS_SOURCE_PLAIN, NULL, NULL);
	assert_non_null(e);
	assert_ptr_equal(lfs_cache_put(&c, e), e);
	lfs_cache_release(&c, e);

	lfs_cache_key same = key(7, "a/b.mdl");
	lfs_centry *g = lfs_cache_get(&c, &same);
	assert_ptr_equal(g, e);
	lfs_cache_release(&c, g);

	/* every field is part of the key */
	lfs_cache_key other[5] = { key(8, "a/b.mdl"), key(7, "a/c.mdl"), key(7, "a/b.mdl"),
				   key(7, "a/b.mdl"), key(7, "a/b.mdl") };
	other[2].size = 101;
	other[3].mtime_ns = 6;
	other[4].dev = 2;
	for (int i = 0; i < 5; i++)
		assert_null(lfs_cache_get(&c, &other[i]));

	/* a second put of the same key returns the first entry, frees the new one */
	lfs_centry *dup = lfs_centry_new(&k, LFS_SOURCE_FAILED, NULL, "boom");
	assert_ptr_equal(lfs_cache_put(&c, dup), e);
	assert_int_equal(e->kind, LFS_SOURCE_PLAIN);
	lfs_cache_release(&c, e);
	assert_int_equal(c.n, 1);
	lfs_cache_destroy(&c);
}

static void test_cache_lru_bytes(void **state)
{
	(void)state;
	size_t b0, b1, b2;
	lfs_viewset v0 = build_nth(0, &b0), v1 = build_nth(1, &b1), v2 = build_nth(2, &b2);
	lfs_cache_key k0 = key(0, "m0.mdl"), k1 = key(1, "m1.mdl"), k2 = key(2, "m2.mdl");
	lfs_centry *n0 = lfs_centry_new(&k0, LFS_SOURCE_MODEL, &v0, NULL);
	lfs_centry *n1 = lfs_centry_new(&k1, LFS_SOURCE_MODEL, &v1, NULL);
	lfs_centry *n2 = lfs_centry_new(&k2, LFS_SOURCE_MODEL, &v2, NULL);
	assert_true(n0->bytes > b0 && n1->bytes > b1 && n2->bytes > b2);
	/* room for any two of the three models, not for all three */
	size_t bound = n0->bytes + n1->bytes + n2->bytes - 1;
	lfs_cache c;
	lfs_cache_init(&c, bound, 0);
	lfs_centry *e0 = lfs_cache_put(&c, n0);
	lfs_cache_release(&c, e0);
	lfs_centry *e1 = lfs_cache_put(&c, n1);
	lfs_cache_release(&c, e1);
	assert_int_equal(c.evictions, 0);
	/* touch m0 so m1 is the least recently used */
	lfs_cache_release(&c, lfs_cache_get(&c, &k0));
	lfs_centry *e2 = lfs_cache_put(&c, n2);
	lfs_cache_release(&c, e2);
	assert_true(c.bytes <= bound);
	assert_true(c.evictions >= 1);
	lfs_centry *g;
	assert_non_null(g = lfs_cache_get(&c, &k2));
	lfs_cache_release(&c, g);
	assert_null(lfs_cache_get(&c, &k1));
	lfs_cache_destroy(&c);
}

static void test_cache_in_use_not_evicted(void **state)
{
	(void)state;
	size_t b0;
	lfs_viewset v0 = build_nth(3, &b0);
	lfs_cache c;
	lfs_cache_init(&c, 1, 0); /* smaller than anything */
	lfs_cache_key k0 = key(3, "m.mdl");
	lfs_centry *e = lfs_cache_put(&c, lfs_centry_new(&k0, LFS_SOURCE_MODEL, &v0, NULL));
	assert_non_null(e);
	assert_int_equal(c.n, 1); /* held by us: stays although over the bound */
	assert_true(e->vs.n_views > 0);
	/* the views are intact while held */
	assert_non_null(lfs_viewset_find(&e->vs, "model.mdl"));
	lfs_cache_release(&c, e);
	assert_int_equal(c.n, 1); /* released, but the most recent entry stays */
	/* the next entry pushes it out */
	lfs_cache_key k1 = key(4, "n.mdl");
	lfs_centry *f = lfs_cache_put(&c, lfs_centry_new(&k1, LFS_SOURCE_PLAIN, NULL, NULL));
	lfs_cache_release(&c, f);
	assert_int_equal(c.n, 1);
	assert_null(lfs_cache_get(&c, &k0));
	assert_int_equal(c.bytes, f->bytes);
	lfs_cache_destroy(&c);
}

static void test_cache_entry_bound(void **state)
{
	(void)state;
	lfs_cache c;
	lfs_cache_init(&c, 0, 10);
	char rel[32];
	for (uint64_t i = 0; i < 100; i++) {
		snprintf(rel, sizeof(rel), "f%llu", (unsigned long long)i);
		lfs_cache_key k = key(i, rel);
		lfs_cache_release(&c, lfs_cache_put(&c, lfs_centry_new(&k, LFS_SOURCE_PLAIN, NULL, NULL)));
		assert_true(c.n <= 10);
	}
	/* the newest ten survive */
	for (uint64_t i = 90; i < 100; i++) {
		snprintf(rel, sizeof(rel), "f%llu", (unsigned long long)i);
		lfs_cache_key k = key(i, rel);
		lfs_centry *g = lfs_cache_get(&c, &k);
		assert_non_null(g);
		lfs_cache_release(&c, g);
	}
	lfs_cache_destroy(&c);
}

static void test_errlog(void **state)
{
	(void)state;
	lfs_errlog l = { 0 };
	assert_true(lfs_errlog_add(&l, "a/x.mdl", "offset 12: bad node"));
	size_t len1 = l.text.len;
	char *first = strndup(l.text.data, len1);
	assert_false(lfs_errlog_add(&l, "a/x.mdl", "offset 12: bad node")); /* duplicate */
	assert_int_equal(l.text.len, len1);
	assert_true(lfs_errlog_add(&l, "a/x.mdl", "offset 40: other"));      /* new message */
	assert_true(lfs_errlog_add(&l, "new\nline.mdl", "two\nlines"));
	assert_int_equal(l.n, 3);
	/* append-only: the old text is a prefix of the new */
	assert_memory_equal(l.text.data, first, len1);
	assert_string_equal(first, "a/x.mdl: offset 12: bad node\n");
	assert_non_null(strstr(l.text.data, "new\\nline.mdl: two\\nlines\n"));
	/* one line per failure */
	size_t lines = 0;
	for (size_t i = 0; i < l.text.len; i++)
		lines += l.text.data[i] == '\n';
	assert_int_equal(lines, 3);
	free(first);
	lfs_errlog_free(&l);
}

/* One escaping for /.legacyfs/errors and the log: nothing can break a line
 * or reach a terminal as a control sequence; UTF-8 text stays. */
static void test_escape(void **state)
{
	(void)state;
	const char *in = "a\nb\rc\td\\e\x1b[31mf\x7fg\x01h\xc2\x9bi\xc3\xa9j";
	const char *want = "a\\nb\\rc\\td\\\\e\\x1B[31mf\\x7Fg\\x01h\\xC2\\x9Bi\xc3\xa9j";
	lfs_sb sb = { 0 };
	lfs_errlog_escape(&sb, in);
	assert_true(lfs_sb_ok(&sb));
	assert_string_equal(sb.data, want);
	for (size_t i = 0; i < sb.len; i++) {
		unsigned char c = (unsigned char)sb.data[i];
		assert_true(c >= 0x20 && c != 0x7f);
	}
	lfs_sb_free(&sb);
	char buf[64];
	assert_string_equal(lfs_errlog_escape_to(buf, sizeof(buf), in), want);
	/* cut before an escape that does not fit, never inside one */
	assert_string_equal(lfs_errlog_escape_to(buf, 3, "a\x1b"), "a");
	assert_string_equal(lfs_errlog_escape_to(buf, 6, "a\x1b"), "a\\x1B");
	assert_string_equal(lfs_errlog_escape_to(buf, 1, "abc"), "");
	/* the list escapes the same way */
	lfs_errlog l = { 0 };
	assert_true(lfs_errlog_add(&l, "x\x1b]0;t\x07.mdl", "m"));
	assert_string_equal(l.text.data, "x\\x1B]0;t\\x07.mdl: m\n");
	lfs_errlog_free(&l);
}

/* Builds in progress: registered per key, ended one by one, waiters woken. */
static void test_cache_building(void **state)
{
	(void)state;
	lfs_cache c;
	lfs_cache_init(&c, 0, 0);
	lfs_cache_key a = key(7, "a.mdl"), b = key(8, "a.mdl"), a2 = key(7, "b.mdl");
	assert_false(lfs_cache_is_building(&c, &a));
	lfs_cbuild *ta = lfs_cache_build_begin(&c, &a);
	assert_non_null(ta);
	assert_true(lfs_cache_is_building(&c, &a));
	/* another version or another path is another build */
	assert_false(lfs_cache_is_building(&c, &b));
	assert_false(lfs_cache_is_building(&c, &a2));
	lfs_cbuild *tb = lfs_cache_build_begin(&c, &b);
	assert_true(lfs_cache_is_building(&c, &b));
	lfs_cache_build_end(&c, ta);
	assert_false(lfs_cache_is_building(&c, &a));
	assert_true(lfs_cache_is_building(&c, &b));
	lfs_cache_build_end(&c, NULL); /* an unregistered build: only wakes */
	assert_true(lfs_cache_is_building(&c, &b));
	lfs_cache_build_end(&c, tb);
	assert_false(lfs_cache_is_building(&c, &b));
	lfs_cache_destroy(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_keys),
		cmocka_unit_test(test_cache_lru_bytes),
		cmocka_unit_test(test_cache_in_use_not_evicted),
		cmocka_unit_test(test_cache_entry_bound),
		cmocka_unit_test(test_errlog),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_cache_building),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
