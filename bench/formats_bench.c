/**
 * @file formats_bench.c
 * Codec and view throughput for every format over the corpus (not a test).
 *
 * Usage: formats_bench [-n RUNS] [CORPUS_DIR]
 *   CORPUS_DIR defaults to $LFS_CORPUS, then ../shared/corpus. For each
 *   format it loads the corpus files into memory (NWN: nwn/binary.txt; NOD,
 *   NAD: every *.nod / *.nad; SOD: every *.sod outside disputed/), then times
 *   RUNS passes (default 10) of
 *     decode   the format's decoder + free,
 *     encode   decode + encode + free (formats with an encoder),
 *     views    lfs_views_build + lfs_viewset_free (what a first open costs),
 *   and prints the median seconds per pass and MB/s of binary input
 *   (1 MB = 10^6 bytes). File reading is outside the timed region.
 *   Results: docs/performance.md.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"
#include "formats/nad/nad.h"
#include "formats/nod/nod.h"
#include "formats/nwn/nwn_mdl.h"
#include "formats/sod/sod.h"
#include "registry/viewset.h"

enum { DECODE, ENCODE, VIEWS };

/* One pass over the set; returns the number of failures. */
static int pass(const char *fmt, const bench_set *s, int mode)
{
	int fails = 0;
	for (size_t i = 0; i < s->n; i++) {
		const lfs_cfile *f = &s->f[i];
		lfs_error err;
		uint8_t *out = NULL;
		size_t on = 0;
		if (mode == VIEWS) {
			lfs_viewset vs;
			fails += lfs_views_build(f->name, f->data, f->n, NULL, &vs, &err) != LFS_OK;
			lfs_viewset_free(&vs);
		} else if (!strcmp(fmt, "nwn")) {
			nwn_model *m;
			fails += nwn_mdl_decode(f->data, f->n, &m, &err) != LFS_OK;
			nwn_model_free(m);
		} else if (!strcmp(fmt, "nod")) {
			nod_model *m = NULL;
			if (nod_decode(f->data, f->n, &m, &err) ||
			    (mode == ENCODE && nod_encode(m, &out, &on, &err)))
				fails++;
			nod_model_free(m);
		} else if (!strcmp(fmt, "nad")) {
			nad_model *m = NULL;
			if (nad_decode(f->data, f->n, &m, &err) ||
			    (mode == ENCODE && nad_encode(m, &out, &on, &err)))
				fails++;
			nad_model_free(m);
		} else if (!strcmp(fmt, "sod")) {
			sod_model *m = NULL;
			if (sod_decode(f->data, f->n, &m, &err) ||
			    (mode == ENCODE && sod_encode(m, &out, &on, &err)))
				fails++;
			sod_model_free(m);
		}
		free(out);
	}
	return fails;
}

int main(int argc, char **argv)
{
	int runs;
	const char *corpus;
	bench_args(argc, argv, 10, 1 << 30, &runs, &corpus);
	static const char *fmts[] = { "nwn", "nod", "nad", "sod" };
	static const char *modes[] = { "decode", "decode+encode", "all views" };
	printf("%-4s %-14s %6s %9s %12s %10s\n", "fmt", "work", "files", "MB", "median s", "MB/s");
	for (int fi = 0; fi < 4; fi++) {
		bench_set s = { 0 };
		if (fi == 0) {
			bench_load_list(&s, corpus, "nwn", "binary.txt");
		} else {
			char dir[4096], ext[8];
			lfs_path(dir, sizeof(dir), "%s/%s", corpus, fmts[fi]);
			lfs_path(ext, sizeof(ext), ".%s", fmts[fi]);
			bench_load_dir(&s, dir, ext);
		}
		if (!s.n) {
			printf("%-4s (no corpus files)\n", fmts[fi]);
			continue;
		}
		for (int mode = DECODE; mode <= VIEWS; mode++) {
			if (mode == ENCODE && fi == 0)
				continue; /* NWN encoder: compiler issue */
			double *t = calloc((size_t)runs, sizeof(double));
			int fails = 0;
			for (int r = 0; r < runs; r++) {
				double t0 = bench_now();
				fails = pass(fmts[fi], &s, mode);
				t[r] = bench_now() - t0;
			}
			double med = bench_median(t, runs);
			printf("%-4s %-14s %6zu %9.3f %12.5f %10.1f%s\n", fmts[fi], modes[mode], s.n,
			       (double)s.bytes / 1e6, med, (double)s.bytes / 1e6 / med,
			       fails ? "  (failures!)" : "");
			free(t);
		}
		bench_set_free(&s);
	}
	return 0;
}
