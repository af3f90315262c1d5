/**
 * @file compile_bench.c
 * NWN compile throughput over the corpus's ASCII models (not a test).
 *
 * Usage: compile_bench [-n RUNS] [CORPUS_DIR]
 *   CORPUS_DIR defaults to $LFS_CORPUS, then ../shared/corpus. Reads every
 *   path of CORPUS_DIR/nwn/ascii.txt (459 files, 26 MB) into memory once,
 *   then times RUNS passes (default 5) of nwn_compile() over all of them
 *   (parse, derive, encode; supermodels are looked up in memory by base name,
 *   the same files), and prints min / median / max seconds per pass and the
 *   median MB/s of ASCII input (1 MB = 10^6 bytes). Reading is outside the
 *   timed region. The peer figure to compare with (nwnmdlcomp, one process
 *   for the whole batch, files read from disk): 1.32 s for the same 459 files
 *   (corpus README). Method and numbers: docs/performance.md.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "benchlib.h"
#include "formats/nwn/nwn_compile.h"

static bench_set g_set;

static bool lookup(void *ctx, const char *name, uint8_t **data, size_t *n)
{
	(void)ctx;
	size_t len = strlen(name);
	for (size_t i = 0; i < g_set.n; i++) {
		const lfs_cfile *f = &g_set.f[i];
		if (!strncasecmp(f->name, name, len) && !strcasecmp(f->name + len, ".mdl")) {
			*data = malloc(f->n ? f->n : 1);
			if (!*data)
				return false;
			memcpy(*data, f->data, f->n);
			*n = f->n;
			return true;
		}
	}
	return false;
}

static double now(void)
{
	return bench_clock(getenv("LFS_BENCH_CPU") ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC);
}

int main(int argc, char **argv)
{
	int runs;
	const char *dir;
	bench_args(argc, argv, 5, 1000, &runs, &dir);
	if (bench_load_list(&g_set, dir, "nwn", "ascii.txt"))
		return 1;
	size_t bytes = g_set.bytes;
	double *t = calloc((size_t)runs, sizeof(double));
	size_t ok = 0, out_bytes = 0;
	for (int r = 0; r < runs; r++) {
		ok = 0;
		out_bytes = 0;
		double t0 = now();
		for (size_t i = 0; i < g_set.n; i++) {
			uint8_t *out = NULL;
			size_t on = 0;
			if (nwn_compile(g_set.f[i].name, g_set.f[i].data, g_set.f[i].n, lookup,
					NULL, &out, &on, NULL) == LFS_OK) {
				ok++;
				out_bytes += on;
			}
			free(out);
		}
		t[r] = now() - t0;
	}
	double med = bench_median(t, runs);
	printf("compile %zu ASCII files (%.1f MB; %zu compiled, %.1f MB of binary): "
	       "min %.3f s  median %.3f s  max %.3f s  (%.1f MB/s)\n",
	       g_set.n, (double)bytes / 1e6, ok, (double)out_bytes / 1e6, t[0], med, t[runs - 1],
	       (double)bytes / 1e6 / med);
	printf("peer (nwnmdlcomp, corpus README): 1.32 s for the same 459 files\n");
	free(t);
	bench_set_free(&g_set);
	return 0;
}
