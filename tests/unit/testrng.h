/**
 * @file testrng.h
 * The one seeded pseudo-random generator of the tests and benches (header
 * only, no cmocka): random cases, fuzz positions, byte mutations.
 *
 * Generator: Marsaglia's xorshift64 (shifts 13, 7, 17; "Xorshift RNGs",
 * Journal of Statistical Software 8(14), 2003). Kept because the tests' fixed
 * default seeds were chosen with it; it is fast and plenty for test cases.
 *
 * Replaying a run: every test prints the seed it used to stderr
 * ("<what>: seed 0x..."); set LFS_TEST_SEED to that value (LFS_FUZZ_SEED is
 * the older name, still read) to get the same cases again. Without either
 * variable each test uses its own fixed default seed: runs are deterministic.
 */
#ifndef LFS_TEST_RNG_H
#define LFS_TEST_RNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Generator state; never 0 once seeded. */
typedef struct lfs_rng {
	uint64_t s;
} lfs_rng;

/** Seed @p r with exactly @p seed (0 becomes 1); no environment, no print. */
static inline void lfs_rng_init(lfs_rng *r, uint64_t seed)
{
	r->s = seed ? seed : 1;
}

/**
 * Seed @p r from $LFS_TEST_SEED (else $LFS_FUZZ_SEED; strtoull base 0, so
 * "0x..." works), else @p default_seed, and print the seed used to stderr as
 * "@p what: seed 0x..." so a failing run can be replayed.
 */
static inline void lfs_rng_seed(lfs_rng *r, const char *what, uint64_t default_seed)
{
	const char *env = getenv("LFS_TEST_SEED");
	if (!env)
		env = getenv("LFS_FUZZ_SEED");
	lfs_rng_init(r, env ? strtoull(env, NULL, 0) : default_seed);
	fprintf(stderr, "%s: seed 0x%llx (replay: LFS_TEST_SEED=0x%llx)\n", what,
		(unsigned long long)r->s, (unsigned long long)r->s);
}

/** Next 64 random bits. */
static inline uint64_t lfs_rng_u64(lfs_rng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return r->s;
}

/** Next 32 random bits (the low half of lfs_rng_u64). */
static inline uint32_t lfs_rng_u32(lfs_rng *r)
{
	return (uint32_t)lfs_rng_u64(r);
}

/** A random byte (the low byte of lfs_rng_u64). */
static inline uint8_t lfs_rng_u8(lfs_rng *r)
{
	return (uint8_t)lfs_rng_u64(r);
}

/** A number in [0, @p n) (modulo reduction); 0 when @p n is 0. */
static inline uint64_t lfs_rng_below(lfs_rng *r, uint64_t n)
{
	uint64_t v = lfs_rng_u64(r);
	return n ? v % n : 0;
}

/** A float with 32 random bits: any pattern, NaN, inf and denormals included. */
static inline float lfs_rng_f32_bits(lfs_rng *r)
{
	uint32_t u = lfs_rng_u32(r);
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/** A float in [@p lo, @p hi) on a grid of 10^6 steps (finite, reproducible). */
static inline float lfs_rng_float(lfs_rng *r, float lo, float hi)
{
	return lo + (hi - lo) * (float)lfs_rng_below(r, 1000000) / 1000000.0f;
}

/**
 * Apply @p edits random byte edits to @p d[0..n) in place. Each edit picks a
 * position (when @p head > 0, half of the edits land in the first @p head
 * bytes: structure headers and counts live there) and either flips one bit
 * (@p whole_byte false) or XORs a random non-zero byte (@p whole_byte true),
 * so every edit changes the byte. Nothing happens when @p n is 0.
 */
static inline void lfs_rng_mutate(lfs_rng *r, uint8_t *d, size_t n, unsigned edits, size_t head,
				  bool whole_byte)
{
	if (!n)
		return;
	for (unsigned k = 0; k < edits; k++) {
		size_t span = n;
		if (head && (lfs_rng_u64(r) & 1))
			span = head < n ? head : n;
		size_t at = (size_t)lfs_rng_below(r, span);
		d[at] ^= whole_byte ? (uint8_t)(1 + lfs_rng_below(r, 255))
				    : (uint8_t)(1u << lfs_rng_below(r, 8));
	}
}

#endif
