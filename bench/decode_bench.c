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
#include <time.h>

#include "formats/nwn/nwn_mdl.h"
#include "views/viewset.h"

struct file {
	char *name;     /* base name, for lfs_views_build */
	uint8_t *data;
	size_t size;
};

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 1 << 16;
			uint8_t *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	*len = n;
	return buf;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void report(const char *what, double *t, int runs, size_t bytes, size_t nfiles)
{
	qsort(t, (size_t)runs, sizeof *t, cmp_double);
	double med = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
	printf("%-28s %3zu files %8.3f MB  min %.4f s  median %.4f s  max %.4f s  "
	       "%8.1f MB/s  (%.0f files/s)\n",
	       what, nfiles, (double)bytes / 1e6, t[0], med, t[runs - 1],
	       (double)bytes / 1e6 / med, (double)nfiles / med);
}

int main(int argc, char **argv)
{
	int runs = 10;
	const char *corpus = getenv("LFS_CORPUS");
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			runs = atoi(argv[++i]);
		else
			corpus = argv[i];
	}
	if (!corpus)
		corpus = "../shared/corpus";
	if (runs < 1)
		runs = 1;

	char list[4096];
	snprintf(list, sizeof list, "%s/nwn/binary.txt", corpus);
	FILE *lf = fopen(list, "r");
	if (!lf) {
		fprintf(stderr, "decode_bench: cannot open %s\n", list);
		return 1;
	}
	struct file *files = NULL;
	size_t nfiles = 0, cap = 0, bytes = 0;
	char line[4096];
	while (fgets(line, sizeof line, lf)) {
		line[strcspn(line, "\r\n")] = 0;
		if (!line[0])
			continue;
		char path[8192];
		snprintf(path, sizeof path, "%s/nwn/%s", corpus, line);
		if (nfiles == cap) {
			cap = cap ? 2 * cap : 256;
			struct file *nf = realloc(files, cap * sizeof *files);
			if (!nf)
				return 1;
			files = nf;
		}
		struct file *f = &files[nfiles];
		f->data = read_all(path, &f->size);
		if (!f->data) {
			fprintf(stderr, "decode_bench: cannot read %s\n", path);
			return 1;
		}
		const char *base = strrchr(line, '/');
		f->name = strdup(base ? base + 1 : line);
		bytes += f->size;
		nfiles++;
	}
	fclose(lf);

	double *t = calloc((size_t)runs, sizeof *t);
	if (!t || !nfiles)
		return 1;

	/* (a) decode only */
	size_t failed = 0;
	for (int r = 0; r < runs; r++) {
		double t0 = now();
		for (size_t i = 0; i < nfiles; i++) {
			nwn_model *m = NULL;
			lfs_error err;
			if (nwn_mdl_decode(files[i].data, files[i].size, &m, &err) != LFS_OK) {
				if (r == 0) {
					fprintf(stderr, "decode failed: %s: %s\n", files[i].name, err.msg);
					failed++;
				}
				continue;
			}
			nwn_model_free(m);
		}
		t[r] = now() - t0;
	}
	report("nwn_mdl_decode", t, runs, bytes, nfiles);

	/* (b) decode + every view */
	size_t views = 0, view_bytes = 0;
	for (int r = 0; r < runs; r++) {
		double t0 = now();
		for (size_t i = 0; i < nfiles; i++) {
			lfs_viewset vs;
			lfs_error err;
			lfs_view_opts opts;
			memset(&opts, 0, sizeof opts);
			if (lfs_views_build(files[i].name, files[i].data, files[i].size, &opts, &vs,
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
		t[r] = now() - t0;
	}
	report("lfs_views_build (all views)", t, runs, bytes, nfiles);
	printf("views per pass: %zu files, %.3f MB of text; runs: %d; decode failures: %zu\n",
	       views, (double)view_bytes / 1e6, runs, failed);

	for (size_t i = 0; i < nfiles; i++) {
		free(files[i].data);
		free(files[i].name);
	}
	free(files);
	free(t);
	return failed ? 1 : 0;
}
