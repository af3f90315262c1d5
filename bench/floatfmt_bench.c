/**
 * @file floatfmt_bench.c
 * Nanoseconds per float of lfs_fmt_float() (src/common/floatfmt.h), the
 * shortest exact float32 text every view prints, against the snprintf/strtof
 * reference lfs_fmt_float_ref().
 *
 *   build/bench/floatfmt_bench [-n RUNS] [CORPUS_DIR]
 *
 * Two sets of values, each formatted RUNS times (default 9; the median pass
 * is reported):
 * - corpus: every 4-byte word of the NWN corpus binaries ($CORPUS/nwn/
 *   binary.txt) that is a finite non-integer float with 1e-7 <= |f| < 2^24,
 *   the values model text is made of (vertices, UVs, keys);
 * - random: 1,000,000 values uniform in log scale over 1e-7 .. 1e7, either
 *   sign (a seeded generator: the same values every run).
 * Prints ns/float of lfs_fmt_float and lfs_fmt_float_ref and a checksum of
 * the output lengths (the same for both; a difference is reported).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"
#include "common/floatfmt.h"

typedef size_t (*fmt_fn)(char buf[LFS_FLOAT_BUFSZ], float f);

/* Median ns per float of @p fn over @p v[0..n), @p runs passes; *sum gets
 * the total output length of one pass. */
static double time_fmt(fmt_fn fn, const float *v, size_t n, int runs, size_t *sum)
{
	double *t = calloc((size_t)runs, sizeof(*t));
	if (!t)
		return 0;
	char buf[LFS_FLOAT_BUFSZ];
	for (int r = 0; r < runs; r++) {
		size_t s = 0;
		double a = bench_clock(CLOCK_THREAD_CPUTIME_ID);
		for (size_t i = 0; i < n; i++)
			s += fn(buf, v[i]);
		t[r] = (bench_clock(CLOCK_THREAD_CPUTIME_ID) - a) * 1e9 / (double)(n ? n : 1);
		*sum = s;
	}
	double m = bench_median(t, runs);
	free(t);
	return m;
}

static void report(const char *what, const float *v, size_t n, int runs)
{
	size_t s1 = 0, s2 = 0;
	double fast = time_fmt(lfs_fmt_float, v, n, runs, &s1);
	double ref = time_fmt(lfs_fmt_float_ref, v, n, runs < 3 ? runs : 3, &s2);
	printf("%-8s %8zu floats  lfs_fmt_float %6.1f ns  reference %6.1f ns  (%.1f x)  chars %zu%s\n",
	       what, n, fast, ref, fast > 0 ? ref / fast : 0.0, s1, s1 == s2 ? "" : "  OUTPUT DIFFERS");
}

int main(int argc, char **argv)
{
	int runs;
	const char *corpus;
	bench_args(argc, argv, 9, 1000, &runs, &corpus);

	bench_set bins;
	if (bench_load_list(&bins, corpus, "nwn", "binary.txt") == 0) {
		float *v = malloc(bins.bytes / 4 * sizeof(float) + sizeof(float));
		size_t n = 0;
		for (size_t i = 0; v && i < bins.n; i++) {
			const uint8_t *d = bins.f[i].data;
			for (size_t o = 12; o + 4 <= bins.f[i].n; o += 4) {
				uint32_t u = (uint32_t)d[o] | (uint32_t)d[o + 1] << 8 |
					     (uint32_t)d[o + 2] << 16 | (uint32_t)d[o + 3] << 24;
				float f = lfs_f32_from_bits(u);
				float a = fabsf(f);
				if (isfinite(f) && a >= 1e-7f && a < 16777216.0f && f != truncf(f))
					v[n++] = f;
			}
		}
		if (v)
			report("corpus", v, n, runs);
		free(v);
		bench_set_free(&bins);
	}

	size_t n = 1000000;
	float *v = malloc(n * sizeof(float));
	if (!v)
		return 1;
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		double e = -7.0 + (double)(x % 1000000) / 1000000.0 * 14.0;
		float f = (float)pow(10.0, e);
		v[i] = (x >> 32) & 1 ? -f : f;
	}
	report("random", v, n, runs);
	free(v);
	return 0;
}
