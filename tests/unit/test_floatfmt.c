/**
 * @file test_floatfmt.c
 * Shortest exact float32 text (src/common/floatfmt.h).
 *
 * Properties checked on every float of the corpus binaries' raw blocks and on
 * a million pseudo-random bit patterns: the text reads back to the same 32
 * bits, and no shorter "%.*g" precision would (so the text is the shortest).
 * The fast paths give the reference's text on all of these and on a dense
 * sweep of their whole exponent range (test_fast_path_sweep).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/floatfmt.h"
#include "conform.h"
#include "corpus.h"

/* Round trip + minimality for one value; returns false on failure. */
static void check_one(float f)
{
	char buf[LFS_FLOAT_BUFSZ], ref[LFS_FLOAT_BUFSZ];
	size_t n = lfs_fmt_float(buf, f);
	lfs_fmt_float_ref(ref, f);
	if (strcmp(buf, ref))
		fail_msg("0x%08x: fast path printed %s, reference %s", lfs_f32_bits(f), buf, ref);
	assert_int_equal(n, strlen(buf));
	if (isnan(f)) {
		assert_string_equal(buf, "nan");
		return;
	}
	float g;
	assert_true(lfs_parse_float(buf, n, &g));
	if (lfs_f32_bits(g) != lfs_f32_bits(f))
		fail_msg("0x%08x printed as %s reads back as 0x%08x", lfs_f32_bits(f), buf, lfs_f32_bits(g));
	/* minimality: count significant digits; one fewer must not round-trip */
	int digits = 0;
	bool leading = true; /* zeros before the first non-zero digit are not significant */
	for (const char *p = buf; *p && *p != 'e'; p++) {
		if (*p >= '1' && *p <= '9')
			leading = false;
		digits += !leading && (*p >= '0' && *p <= '9');
	}
	if (f != 0 && !isinf(f) && digits > 1 && strchr(buf, '.')) {
		char tmp[320];
		snprintf(tmp, sizeof(tmp), "%.*g", digits - 1, (double)f);
		float h = strtof(tmp, NULL);
		if (lfs_f32_bits(h) == lfs_f32_bits(f))
			fail_msg("0x%08x printed as %s but %s is shorter and exact", lfs_f32_bits(f), buf, tmp);
	}
}

static void test_known_values(void **state)
{
	(void)state;
	char buf[LFS_FLOAT_BUFSZ];
	lfs_fmt_float(buf, 1.0f);
	assert_string_equal(buf, "1");
	lfs_fmt_float(buf, 0.1f);
	assert_string_equal(buf, "0.1");
	lfs_fmt_float(buf, -0.0f);
	assert_string_equal(buf, "-0");
	lfs_fmt_float(buf, 0.0f);
	assert_string_equal(buf, "0");
	lfs_fmt_float(buf, 0.045f);
	assert_string_equal(buf, "0.045");
	lfs_fmt_float(buf, -1.5707964f);
	assert_string_equal(buf, "-1.5707964");
	lfs_fmt_float(buf, INFINITY);
	assert_string_equal(buf, "inf");
	lfs_fmt_float(buf, -INFINITY);
	assert_string_equal(buf, "-inf");
	lfs_fmt_float(buf, 16777216.0f);
	assert_string_equal(buf, "16777216");
	float g;
	assert_false(lfs_parse_float("1.0x", 4, &g));
	assert_false(lfs_parse_float("", 0, &g));
	assert_true(lfs_parse_float("-0", 2, &g));
	assert_true(signbit(g));

	/* NaN-bits form: payload and sign survive text; non-NaN bits refused */
	uint32_t payload = 0xffc12345u, back;
	float nanf_;
	memcpy(&nanf_, &payload, 4);
	size_t n = lfs_fmt_float_bits(buf, nanf_);
	assert_string_equal(buf, "nan:ffc12345");
	assert_true(lfs_parse_float_bits(buf, n, &g));
	memcpy(&back, &g, 4);
	assert_int_equal(back, payload);
	assert_false(lfs_parse_float_bits("nan:3f800000", 12, &g));
	assert_false(lfs_parse_float_bits("nan:3f80000g", 12, &g));
	lfs_fmt_float_bits(buf, 0.1f);
	assert_string_equal(buf, "0.1");
}

static void test_random_bit_patterns(void **state)
{
	(void)state;
	uint64_t x = 0x243F6A8885A308D3ull;
	for (int i = 0; i < 1000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint32_t u = (uint32_t)x;
		float f;
		memcpy(&f, &u, 4);
		check_one(f);
	}
	/* random values in the fast path's range, uniform in log scale */
	for (int i = 0; i < 1000000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		double e = -7.5 + (double)(x % 1000000) / 1000000.0 * 15.0;
		float f = (float)pow(10.0, e);
		check_one((x >> 32) & 1 ? -f : f);
		check_one(nextafterf(f, 0));
	}
	/* every power of two and its neighbours (denormals, extremes) */
	for (int e = -149; e <= 127; e++) {
		float f = ldexpf(1.0f, e);
		check_one(f);
		check_one(nextafterf(f, 0));
		check_one(nextafterf(f, INFINITY));
		check_one(-f);
	}
}

/* lfs_fmt_float() against the reference alone (the sweep below is too
 * large for check_one's extra strtof/snprintf); also negated when @p both
 * (the sign is one bit the paths copy: checked on a part). */
static void check_same(uint32_t u, bool both)
{
	char buf[LFS_FLOAT_BUFSZ], ref[LFS_FLOAT_BUFSZ];
	for (int sign = 0; sign < 1 + both; sign++) {
		float f = lfs_f32_from_bits(u | (uint32_t)sign << 31);
		size_t n = lfs_fmt_float(buf, f);
		lfs_fmt_float_ref(ref, f);
		if (strcmp(buf, ref))
			fail_msg("0x%08x: fast path printed %s, reference %s", lfs_f32_bits(f), buf, ref);
		assert_int_equal(n, strlen(buf));
	}
}

/*
 * The 64-bit fast path's whole range, densely: binary exponents 2^-26 ..
 * 2^25 (its range 2^-24 <= |f| < 2^23 and two octaves beyond each end),
 * every 97th bit pattern (97 is odd and prime: every residue of the low
 * bits is visited), and at each exponent's edges the first and last 64
 * patterns; each decimal power 10^-8 .. 10^8 and its 64 neighbours on
 * either side (where the decimal exponent X changes). ~4.5 million values.
 */
static void test_fast_path_sweep(void **state)
{
	(void)state;
	const uint32_t first = 101u << 23, last = (152u << 23) - 1;
	size_t count = 0;
	for (uint32_t u = first; u <= last; u += 97, count++)
		check_same(u, (count & 15) == 0);
	for (uint32_t e = 101; e <= 152; e++)
		for (uint32_t i = 0; i < 64; i++) {
			check_same(e << 23 | i, true);
			check_same(e << 23 | (0x7FFFFF - i), true);
			count += 2;
		}
	for (int x = -8; x <= 8; x++) {
		uint32_t c = lfs_f32_bits((float)pow(10.0, x));
		for (uint32_t i = 0; i <= 128; i++, count++)
			check_same(c - 64 + i, true);
	}
	printf("fast path sweep: %zu values\n", count);
	assert_true(count > 2000000);
}

/* Every 4-byte word of the corpus binaries' raw blocks, read as a float. */
static void test_corpus_floats(void **state)
{
	(void)state;
	size_t nb = 0;
	char **bins = lfs_corpus_list("nwn", "binary.txt", &nb);
	assert_non_null(bins);
	size_t count = 0;
	for (size_t i = 0; i < nb; i++) {
		size_t n;
		uint8_t *d = lfs_read_file_ok(bins[i], &n);
		for (size_t o = 12; o + 4 <= n; o += 4) {
			uint32_t u = (uint32_t)d[o] | (uint32_t)d[o + 1] << 8 | (uint32_t)d[o + 2] << 16 |
				     (uint32_t)d[o + 3] << 24;
			float f;
			memcpy(&f, &u, 4);
			check_one(f);
			count++;
		}
		free(d);
	}
	printf("corpus words checked: %zu\n", count);
	lfs_free_list(bins);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_values),
		cmocka_unit_test(test_random_bit_patterns),
		cmocka_unit_test(test_corpus_floats),
		cmocka_unit_test(test_fast_path_sweep),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
