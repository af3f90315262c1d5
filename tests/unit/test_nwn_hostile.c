/**
 * @file test_nwn_hostile.c
 * The NWN decoder on hostile input: truncated files and random byte flips of
 * every corpus binary decode or fail cleanly (no crash, no out-of-bounds read
 * under ASan/UBSan, an error that names an offset inside the file and the
 * structure). Deterministic: the fixed-seed generator of testrng.h (seed
 * printed; LFS_TEST_SEED replays another run, LFS_FUZZ_FLIPS changes the
 * count).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "corpus.h"
#include "formats/nwn/nwn_mdl.h"

static char **g_bins;
static size_t g_nbins;
static lfs_rng g_rng;

static int setup(void **state)
{
	(void)state;
	g_bins = lfs_corpus_list("nwn", "binary.txt", &g_nbins);
	lfs_rng_seed(&g_rng, "nwn_hostile", 0x9E3779B97F4A7C15ull);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	lfs_free_list(g_bins);
	return 0;
}

/* Accepted input: walk the decoded tree so ASan sees any dangling pointer. */
static void walk_tree(void *ctx, const uint8_t *d, size_t n, size_t trial, const void *model,
		      const lfs_error *err)
{
	(void)ctx, (void)d, (void)n, (void)trial, (void)err;
	const nwn_model *m = model;
	if (!m)
		return;
	for (uint32_t k = 0; k < m->geom.n_nodes; k++) {
		assert_true(strlen(m->geom.nodes[k].name) <= 32);
		for (uint32_t c = 0; c < m->geom.nodes[k].n_children; c++)
			assert_true(m->geom.nodes[k].children[c] < m->geom.n_nodes);
	}
}

LFS_DECODER(k_nwn, "nwn-mdl", nwn_model, nwn_mdl_decode, nwn_model_free);

/* Decode; a failure must carry a message and, when it names an offset, one
 * inside the input. */
static const lfs_hostile k_hostile = { &k_nwn, false, true, walk_tree, NULL };

static void try_decode(const uint8_t *d, size_t n, lfs_tally *t)
{
	lfs_hostile_try(&k_hostile, d, n, 0, t);
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
	lfs_tally plain = { 0 }, patched = { 0 };
	for (size_t i = 0; i < g_nbins; i++) {
		size_t n;
		uint8_t *d = lfs_read_file_ok(g_bins[i], &n);
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
	size_t flips = lfs_fuzz_count(1000);
	lfs_tally t = { 0 };
	for (size_t i = 0; i < g_nbins; i++) {
		size_t n;
		uint8_t *d = lfs_read_file_ok(g_bins[i], &n);
		uint32_t a = (uint32_t)(d[4] | d[5] << 8 | d[6] << 16 | (uint32_t)d[7] << 24);
		lfs_hot_span model_data = { 12, 12 + (size_t)a, 10 };
		lfs_hostile_replacements(&k_hostile, &g_rng, d, n, flips, &model_data, &t);
		free(d);
	}
	printf("byte flips: %zu decoded, %zu failed cleanly\n", t.ok, t.failed);
	assert_int_equal(t.ok + t.failed, g_nbins * flips);
	assert_true(t.failed > 0); /* the flips do reach structure the decoder validates */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_byte_flips),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
