/**
 * @file test_nwn_hostile.c
 * The NWN decoder on hostile input: truncated files and random byte flips of
 * every corpus binary decode or fail cleanly (no crash, no out-of-bounds read
 * under ASan/UBSan, an error that names an offset inside the file and the
 * structure). Deterministic: a fixed-seed xorshift PRNG (seed printed; set
 * LFS_FUZZ_SEED to replay another run, LFS_FUZZ_FLIPS to change the count).
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
#include "formats/nwn/nwn_mdl.h"

static char **g_bins;
static size_t g_nbins;
static uint64_t g_rng;

static uint64_t next_rand(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

static int setup(void **state)
{
	(void)state;
	const char *c = lfs_corpus_dir_or_skip();
	char list[4096], prefix[4096];
	snprintf(list, sizeof(list), "%s/nwn/binary.txt", c);
	snprintf(prefix, sizeof(prefix), "%s/nwn", c);
	g_bins = lfs_read_list(list, prefix, &g_nbins);
	const char *seed = getenv("LFS_FUZZ_SEED");
	g_rng = seed ? strtoull(seed, NULL, 0) : 0x9E3779B97F4A7C15ull;
	if (!g_rng)
		g_rng = 1;
	printf("fuzz seed 0x%llx\n", (unsigned long long)g_rng);
	return g_bins && g_nbins ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	lfs_free_list(g_bins);
	return 0;
}

typedef struct tally {
	size_t ok, failed;
} tally;

/* Decode; a failure must carry a message and, when it names an offset, one
 * inside the input. */
static void try_decode(const uint8_t *d, size_t n, tally *t)
{
	nwn_model *m = NULL;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = nwn_mdl_decode(d, n, &m, &err);
	if (r == LFS_OK) {
		assert_non_null(m);
		/* walk the decoded tree so ASan sees any dangling pointer */
		for (uint32_t k = 0; k < m->geom.n_nodes; k++) {
			assert_true(strlen(m->geom.nodes[k].name) <= 32);
			for (uint32_t c = 0; c < m->geom.nodes[k].n_children; c++)
				assert_true(m->geom.nodes[k].children[c] < m->geom.n_nodes);
		}
		nwn_model_free(m);
		t->ok++;
		return;
	}
	assert_null(m);
	assert_int_equal(err.code, r);
	assert_true(err.msg[0] != '\0');
	assert_true(err.offset == SIZE_MAX || err.offset <= n);
	t->failed++;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Truncate every binary at 64 evenly spread lengths, once as is (the header
 * test rejects it) and once with the header's raw size patched so the
 * truncated file passes the header test and the tree walk meets the cut. */
static void test_truncation(void **state)
{
	(void)state;
	tally plain = { 0 }, patched = { 0 };
	for (size_t i = 0; i < g_nbins; i++) {
		size_t n;
		uint8_t *d = lfs_read_file(g_bins[i], &n);
		assert_non_null(d);
		for (int k = 0; k < 64; k++) {
			size_t len = n * (size_t)k / 64;
			uint8_t *c = malloc(len ? len : 1);
			memcpy(c, d, len);
			try_decode(c, len, &plain);
			if (len >= 12) {
				uint32_t a = (uint32_t)(d[4] | d[5] << 8 | d[6] << 16 | (uint32_t)d[7] << 24);
				if (12 + (uint64_t)a <= len)
					put32(c + 8, (uint32_t)(len - 12 - a)); /* shorter raw block */
				else {
					put32(c + 4, (uint32_t)(len - 12)); /* model data cut short */
					put32(c + 8, 0);
				}
				try_decode(c, len, &patched);
			}
			free(c);
		}
		free(d);
	}
	printf("truncation: plain %zu ok / %zu failed; header-patched %zu ok / %zu failed\n", plain.ok,
	       plain.failed, patched.ok, patched.failed);
	/* every plain truncation is shorter than the header says: all rejected */
	assert_int_equal(plain.ok, 0);
	assert_int_equal(plain.failed, 64 * g_nbins);
	assert_true(patched.failed > 0);
}

/* 1,000 single-byte random flips per binary: 90% inside the model data (where
 * offsets, counts and flags live), 10% anywhere. */
static void test_byte_flips(void **state)
{
	(void)state;
	const char *env = getenv("LFS_FUZZ_FLIPS");
	long flips = env ? strtol(env, NULL, 10) : 1000;
	tally t = { 0 };
	for (size_t i = 0; i < g_nbins; i++) {
		size_t n;
		uint8_t *d = lfs_read_file(g_bins[i], &n);
		assert_non_null(d);
		uint32_t a = (uint32_t)(d[4] | d[5] << 8 | d[6] << 16 | (uint32_t)d[7] << 24);
		for (long k = 0; k < flips; k++) {
			size_t pos = (k % 10) ? 12 + next_rand() % a : next_rand() % n;
			uint8_t old = d[pos];
			uint8_t val = (uint8_t)next_rand();
			if (val == old)
				val ^= 0xFF;
			d[pos] = val;
			try_decode(d, n, &t);
			d[pos] = old;
		}
		free(d);
	}
	printf("byte flips: %zu decoded, %zu failed cleanly\n", t.ok, t.failed);
	assert_int_equal(t.ok + t.failed, g_nbins * (size_t)flips);
	assert_true(t.failed > 0); /* the flips do reach structure the decoder validates */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_byte_flips),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
