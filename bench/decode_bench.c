/**
 * @file decode_bench.c
 * Decode throughput over the corpus's NWN binary models (not a test).
 *
 * Usage: decode_bench [-n RUNS] [CORPUS_DIR]
 *   CORPUS_DIR defaults to $LFS_CORPUS, then ../shared/corpus. Reads every
 *   path listed in CORPUS_DIR/nwn/binary.txt into memory once, then times
 *   RUNS passes (default 10) of
 *     (a) nwn_mdl_decode + nwn_model_free over all files, and
 *     (b) lfs_views_build + lfs_viewset_free (decode + every text view),
 *   and prints min / median / max seconds per pass and the median throughput
 *   in MB/s of binary input (1 MB = 10^6 bytes). File reading is outside the
 *   timed region. Method and numbers: docs/performance.md.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"
#include "formats/nwn/nwn_mdl.h"
#include "registry/viewset.h"

static void report(const char *what, double *t, int runs, size_t bytes, size_t nfiles)
{
	double med = bench_median(t, runs);
	printf("%-28s %3zu files %8.3f MB  min %.4f s  median %.4f s  max %.4f s  "
	       "%8.1f MB/s  (%.0f files/s)\n",
	       what, nfiles, (double)bytes / 1e6, t[0], med, t[runs - 1],
	       (double)bytes / 1e6 / med, (double)nfiles / med);
}

int main(int argc, char **argv)
{
	int runs;
	const char *corpus;
	bench_args(argc, argv, 10, 1 << 30, &runs, &corpus);
	bench_set set = { 0 };
	if (bench_load_list(&set, corpus, "nwn", "binary.txt"))
		return 1;
	const lfs_cfile *files = set.f;
	size_t nfiles = set.n, bytes = set.bytes;

	double *t = calloc((size_t)runs, sizeof *t);
	if (!t || !nfiles)
		return 1;

	/* (a) decode only */
	size_t failed = 0;
	for (int r = 0; r < runs; r++) {
		double t0 = bench_now();
		for (size_t i = 0; i < nfiles; i++) {
			nwn_model *m = NULL;
			lfs_error err;
			if (nwn_mdl_decode(files[i].data, files[i].n, &m, &err) != LFS_OK) {
				if (r == 0) {
					fprintf(stderr, "decode failed: %s: %s\n", files[i].name, err.msg);
					failed++;
				}
				continue;
			}
			nwn_model_free(m);
		}
		t[r] = bench_now() - t0;
	}
	report("nwn_mdl_decode", t, runs, bytes, nfiles);

	/* (b) decode + every view */
	size_t views = 0, view_bytes = 0;
	for (int r = 0; r < runs; r++) {
		double t0 = bench_now();
		for (size_t i = 0; i < nfiles; i++) {
			lfs_viewset vs;
			lfs_error err;
			lfs_view_opts opts;
			memset(&opts, 0, sizeof opts);
			if (lfs_views_build(files[i].name, files[i].data, files[i].n, &opts, &vs,
					    &err) != LFS_OK) {
				if (r == 0)
					fprintf(stderr, "views failed: %s: %s\n", files[i].name, err.msg);
				continue;
			}
			if (r == 0) {
				views += vs.n_views;
				for (size_t v = 0; v < vs.n_views; v++)
					view_bytes += vs.views[v].size;
			}
			lfs_viewset_free(&vs);
		}
		t[r] = bench_now() - t0;
	}
	report("lfs_views_build (all views)", t, runs, bytes, nfiles);
	printf("views per pass: %zu files, %.3f MB of text; runs: %d; decode failures: %zu\n",
	       views, (double)view_bytes / 1e6, runs, failed);

	bench_set_free(&set);
	free(t);
	return failed ? 1 : 0;
}
