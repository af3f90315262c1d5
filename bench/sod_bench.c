/**
 * @file sod_bench.c
 * SOD decode throughput over the corpus (not a test).
 *
 * Usage: sod_bench [-n RUNS] [CORPUS_DIR]
 *   CORPUS_DIR defaults to $LFS_CORPUS, then ../shared/corpus. Reads every
 *   CORPUS_DIR/sod/ *.sod (the accepted files, not disputed/) into memory
 *   once, then times RUNS passes (default 10) of
 *     (a) sod_decode + sod_model_free,
 *     (b) sod_decode + sod_encode (+ free), and
 *     (c) sod_views (decode + model.txt, OBJ/MTL, CSV views),
 *   over all files, and prints min / median / max seconds per pass and the
 *   median throughput in MB/s of binary input (1 MB = 10^6 bytes).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/sod.h"
#include "views/sod_views.h"
#include "views/vlist.h"

struct file {
	uint8_t *data;
	size_t size;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int pass(struct file *f, size_t nf, int mode)
{
	for (size_t i = 0; i < nf; i++) {
		sod_model *m;
		if (mode == 2) {
			lfs_vlist l = { 0 };
			if (sod_views(f[i].data, f[i].size, NULL, &l, NULL))
				return -1;
			lfs_viewset vs;
			lfs_vlist_finish(&l, &vs);
			lfs_viewset_free(&vs);
			continue;
		}
		if (sod_decode(f[i].data, f[i].size, &m, NULL))
			return -1;
		if (mode == 1) {
			uint8_t *o;
			size_t on;
			if (sod_encode(m, &o, &on, NULL))
				return -1;
			free(o);
		}
		sod_model_free(m);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 10;
	const char *dir = getenv("LFS_CORPUS");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else
			dir = argv[i];
	}
	if (!dir)
		dir = "../shared/corpus";
	if (runs < 1)
		runs = 1;
	char path[4096];
	snprintf(path, sizeof(path), "%s/sod", dir);
	DIR *d = opendir(path);
	if (!d) {
		fprintf(stderr, "sod_bench: cannot open %s\n", path);
		return 1;
	}
	struct file *f = NULL;
	size_t nf = 0, total = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l < 4 || strcmp(e->d_name + l - 4, ".sod"))
			continue;
		char p[8192];
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		FILE *fp = fopen(p, "rb");
		if (!fp)
			continue;
		fseek(fp, 0, SEEK_END);
		long n = ftell(fp);
		rewind(fp);
		f = realloc(f, (nf + 1) * sizeof(*f));
		f[nf].data = malloc((size_t)n);
		f[nf].size = fread(f[nf].data, 1, (size_t)n, fp);
		fclose(fp);
		total += f[nf].size;
		nf++;
	}
	closedir(d);
	const char *names[] = { "decode", "decode+encode", "views" };
	printf("%zu files, %.3f MB, %d runs\n", nf, (double)total / 1e6, runs);
	double *t = malloc((size_t)runs * sizeof(double));
	for (int mode = 0; mode < 3; mode++) {
		for (int r = 0; r < runs; r++) {
			double t0 = now();
			if (pass(f, nf, mode)) {
				fprintf(stderr, "sod_bench: a corpus file failed to decode\n");
				return 1;
			}
			t[r] = now() - t0;
		}
		qsort(t, (size_t)runs, sizeof(double), cmpd);
		double med = t[runs / 2];
		printf("%-14s min %.4f s  median %.4f s  max %.4f s  median %.1f MB/s\n", names[mode], t[0],
		       med, t[runs - 1], (double)total / 1e6 / med);
	}
	for (size_t i = 0; i < nf; i++)
		free(f[i].data);
	free(f);
	free(t);
	return 0;
}
