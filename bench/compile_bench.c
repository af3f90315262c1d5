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

#include "views/nwn_compile.h"

struct file {
	char *path;
	const char *base; /* base name without folder */
	uint8_t *data;
	size_t size;
};

static struct file *g_files;
static size_t g_n;

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

static bool lookup(void *ctx, const char *name, uint8_t **data, size_t *n)
{
	(void)ctx;
	size_t len = strlen(name);
	for (size_t i = 0; i < g_n; i++)
		if (!strncasecmp(g_files[i].base, name, len) && !strcasecmp(g_files[i].base + len, ".mdl")) {
			*data = malloc(g_files[i].size ? g_files[i].size : 1);
			if (!*data)
				return false;
			memcpy(*data, g_files[i].data, g_files[i].size);
			*n = g_files[i].size;
			return true;
		}
	return false;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(getenv("LFS_BENCH_CPU") ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int runs = 5;
	const char *dir = getenv("LFS_CORPUS");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else
			dir = argv[i];
	}
	if (!dir)
		dir = "../shared/corpus";
	if (runs < 1 || runs > 1000)
		runs = 5;
	char path[4096];
	snprintf(path, sizeof(path), "%s/nwn/ascii.txt", dir);
	size_t ll;
	char *list = (char *)read_all(path, &ll);
	if (!list) {
		fprintf(stderr, "compile_bench: cannot read %s\n", path);
		return 1;
	}
	list = realloc(list, ll + 1);
	list[ll] = 0;
	size_t cap = 0, bytes = 0;
	for (char *line = strtok(list, "\r\n"); line; line = strtok(NULL, "\r\n")) {
		if (g_n == cap) {
			cap = cap ? cap * 2 : 512;
			g_files = realloc(g_files, cap * sizeof(*g_files));
			if (!g_files)
				return 1;
		}
		struct file *f = &g_files[g_n];
		snprintf(path, sizeof(path), "%s/nwn/%s", dir, line);
		f->path = strdup(path);
		f->base = strrchr(f->path, '/') ? strrchr(f->path, '/') + 1 : f->path;
		f->data = read_all(path, &f->size);
		if (!f->data) {
			fprintf(stderr, "compile_bench: cannot read %s\n", path);
			return 1;
		}
		bytes += f->size;
		g_n++;
	}
	double *t = calloc((size_t)runs, sizeof(double));
	size_t ok = 0, out_bytes = 0;
	for (int r = 0; r < runs; r++) {
		ok = 0;
		out_bytes = 0;
		double t0 = now();
		for (size_t i = 0; i < g_n; i++) {
			uint8_t *out = NULL;
			size_t on = 0;
			if (nwn_compile(g_files[i].base, g_files[i].data, g_files[i].size, lookup, NULL, &out, &on,
					NULL) == LFS_OK) {
				ok++;
				out_bytes += on;
			}
			free(out);
		}
		t[r] = now() - t0;
	}
	qsort(t, (size_t)runs, sizeof(double), cmp_d);
	double med = t[runs / 2];
	printf("compile %zu ASCII files (%.1f MB; %zu compiled, %.1f MB of binary): "
	       "min %.3f s  median %.3f s  max %.3f s  (%.1f MB/s)\n",
	       g_n, (double)bytes / 1e6, ok, (double)out_bytes / 1e6, t[0], med, t[runs - 1],
	       (double)bytes / 1e6 / med);
	printf("peer (nwnmdlcomp, corpus README): 1.32 s for the same 459 files\n");
	free(t);
	return 0;
}
