/**
 * @file test_views_names.c
 * Unit tests of src/registry/names.c: the safe/unique file-name rule of
 * docs/naming.md.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "registry/names.h"

static const char *safe(const char *raw)
{
	static char buf[LFS_NAME_MAX_BASE + 1];
	size_t n = lfs_name_safe(raw, buf);
	assert_int_equal(n, strlen(buf));
	return buf;
}

static void ordinary_names_unchanged(void **state)
{
	(void)state;
	const char *names[] = { "Mesh02", "rootdummy", "ca1slashl", "Dragon_Rwing", "it_torch_000",
				"a b", "x.y", "...", "caf\xc3\xa9", "~2", "a~b" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_string_equal(safe(names[i]), names[i]);
}

static void bad_bytes_escaped(void **state)
{
	(void)state;
	assert_string_equal(safe("a/b"), "a%2Fb");
	assert_string_equal(safe("50%"), "50%25");
	assert_string_equal(safe("tab\there"), "tab%09here");
	assert_string_equal(safe("nl\n"), "nl%0A");
	assert_string_equal(safe("\x01\x1f\x7f"), "%01%1F%7F");
	assert_string_equal(safe("/"), "%2F");
	/* escaping '%' keeps the mapping injective */
	assert_string_equal(safe("a%2Fb"), "a%252Fb");
	char a[LFS_NAME_MAX_BASE + 1];
	strcpy(a, safe("a/b"));
	assert_string_not_equal(a, safe("a%2Fb"));
}

static void special_names(void **state)
{
	(void)state;
	assert_string_equal(safe(""), "%00");
	assert_string_equal(safe("."), "%2E");
	assert_string_equal(safe(".."), "%2E%2E");
	assert_string_equal(safe(".a"), ".a");
}

static void long_names_truncated(void **state)
{
	(void)state;
	char raw[400];
	memset(raw, 'a', 300);
	raw[300] = '\0';
	char out1[LFS_NAME_MAX_BASE + 1];
	size_t n = lfs_name_safe(raw, out1);
	assert_true(n <= LFS_NAME_MAX_BASE);
	assert_int_equal(out1[n - 9], '~');
	char hash[16];
	snprintf(hash, sizeof(hash), "%08x", (unsigned)lfs_name_hash(raw));
	assert_string_equal(out1 + n - 8, hash);
	assert_int_equal(strncmp(out1, raw, n - 9), 0);

	/* a different long name with the same prefix maps elsewhere */
	raw[299] = 'b';
	assert_string_not_equal(safe(raw), out1);

	/* exactly LFS_NAME_MAX_BASE plain bytes fit unchanged */
	memset(raw, 'c', LFS_NAME_MAX_BASE);
	raw[LFS_NAME_MAX_BASE] = '\0';
	assert_string_equal(safe(raw), raw);

	/* the cut never splits a %XX escape */
	for (int shift = 0; shift < 3; shift++) {
		memset(raw, 'd', shift);
		for (int i = shift; i < 250; i++)
			raw[i] = '/';
		raw[250] = '\0';
		const char *s = safe(raw);
		size_t len = strlen(s);
		assert_true(len <= LFS_NAME_MAX_BASE);
		const char *tilde = strrchr(s, '~');
		assert_non_null(tilde);
		for (const char *p = s + shift; p < tilde; p += 3)
			assert_int_equal(strncmp(p, "%2F", 3), 0);
		assert_int_equal((tilde - s - shift) % 3, 0);
	}
}

static void duplicates_numbered(void **state)
{
	(void)state;
	lfs_nameset s;
	lfs_nameset_init(&s);
	assert_string_equal(lfs_nameset_add(&s, "a"), "a");
	assert_string_equal(lfs_nameset_add(&s, "a"), "a~2");
	assert_string_equal(lfs_nameset_add(&s, "a"), "a~3");
	assert_string_equal(lfs_nameset_add(&s, "A"), "A"); /* case-sensitive */
	assert_string_equal(lfs_nameset_add(&s, "b~2"), "b~2");
	assert_string_equal(lfs_nameset_add(&s, "b"), "b");
	assert_string_equal(lfs_nameset_add(&s, "b"), "b~3"); /* b~2 is taken */
	assert_string_equal(lfs_nameset_add(&s, "a~2"), "a~2~2");
	assert_string_equal(lfs_nameset_add(&s, ""), "%00");
	assert_string_equal(lfs_nameset_add(&s, ""), "%00~2");
	assert_string_equal(lfs_nameset_add(&s, "."), "%2E");
	assert_string_equal(lfs_nameset_add(&s, "%2E"), "%252E");
	assert_true(lfs_nameset_has(&s, "a~3"));
	assert_false(lfs_nameset_has(&s, "a~4"));
	lfs_nameset_free(&s);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Many copies of one name and many distinct names: all results unique,
 * never '/', never "." or "..", and in node order. */
static void many_names_unique(void **state)
{
	(void)state;
	lfs_nameset s;
	lfs_nameset_init(&s);
	enum { N = 20000 };
	char **got = calloc(N, sizeof(*got));
	assert_non_null(got);
	uint32_t rng = 12345;
	for (int i = 0; i < N; i++) {
		char raw[64];
		if (i % 2 == 0) {
			strcpy(raw, "same");
		} else {
			size_t len = (rng >> 8) % 6;
			for (size_t k = 0; k < len; k++) {
				rng = rng * 1103515245u + 12345u;
				raw[k] = (char)(1 + (rng >> 16) % 255); /* any byte but NUL */
			}
			raw[len] = '\0';
			rng = rng * 1103515245u + 12345u;
		}
		const char *r = lfs_nameset_add(&s, raw);
		assert_non_null(r);
		assert_null(strchr(r, '/'));
		assert_true(strcmp(r, ".") && strcmp(r, ".."));
		assert_true(r[0] != '\0');
		assert_true(strlen(r) <= LFS_NAME_MAX_BASE + 11);
		got[i] = strdup(r);
	}
	assert_int_equal(s.n, N);
	assert_string_equal(got[0], "same");
	assert_string_equal(got[2], "same~2");
	for (int i = 0; i < N; i++)
		assert_true(lfs_nameset_has(&s, got[i]));
	/* uniqueness: no two results are equal */
	qsort(got, N, sizeof(*got), cmp_str);
	for (int i = 1; i < N; i++)
		assert_string_not_equal(got[i - 1], got[i]);
	for (int i = 0; i < N; i++)
		free(got[i]);
	free(got);
	lfs_nameset_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ordinary_names_unchanged),
		cmocka_unit_test(bad_bytes_escaped),
		cmocka_unit_test(special_names),
		cmocka_unit_test(long_names_truncated),
		cmocka_unit_test(duplicates_numbered),
		cmocka_unit_test(many_names_unique),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
