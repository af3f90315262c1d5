/**
 * @file benchlib.c
 * Bench command line, clocks, medians and file sets (see benchlib.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "benchlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_args(int argc, char **argv, int default_runs, int max_runs, int *runs,
		const char **corpus)
{
	*runs = default_runs;
	*corpus = getenv("LFS_CORPUS");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			*runs = atoi(argv[++i]);
		else
			*corpus = argv[i];
	}
	if (!*corpus)
		*corpus = "../shared/corpus";
	if (*runs < 1 || *runs > max_runs)
		*runs = default_runs;
}

double bench_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_now(void)
{
	return bench_clock(CLOCK_MONOTONIC);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double bench_median(double *t, int n)
{
	if (n <= 0)
		return 0;
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static int load_paths(bench_set *s, char **paths, const char *what)
{
	if (!paths) {
		fprintf(stderr, "cannot read %s\n", what);
		return -1;
	}
	s->f = lfs_load_files(paths, &s->n, &s->bytes);
	lfs_free_list(paths);
	return s->f ? 0 : -1;
}

int bench_load_list(bench_set *s, const char *corpus, const char *fmt_dir, const char *list_file)
{
	char list[4096], prefix[4096];
	lfs_path(list, sizeof(list), "%s/%s/%s", corpus, fmt_dir, list_file);
	lfs_path(prefix, sizeof(prefix), "%s/%s", corpus, fmt_dir);
	return load_paths(s, lfs_read_list(list, prefix, NULL), list);
}

int bench_load_dir(bench_set *s, const char *dir, const char *ext)
{
	return load_paths(s, lfs_list_dir(dir, ext, NULL), dir);
}

void bench_set_free(bench_set *s)
{
	lfs_free_files(s->f, s->n);
	memset(s, 0, sizeof(*s));
}
