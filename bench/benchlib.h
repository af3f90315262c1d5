/**
 * @file benchlib.h
 * What every bench program shares (not a test): the `[-n RUNS] [CORPUS_DIR]`
 * command line, clocks, the median of timed passes, and sets of corpus files
 * read into memory once (through tests/unit/corpus.h, the tests' reader).
 */
#ifndef LFS_BENCHLIB_H
#define LFS_BENCHLIB_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "corpus.h"

/**
 * Parse `[-n RUNS] [CORPUS_DIR]`: *runs starts at @p default_runs (kept when
 * -n gives less than 1 or more than @p max_runs), *corpus defaults to
 * $LFS_CORPUS, then "../shared/corpus".
 */
void bench_args(int argc, char **argv, int default_runs, int max_runs, int *runs,
		const char **corpus);

/** Seconds on clock @p id (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, ...). */
double bench_clock(clockid_t id);

/** Wall-clock seconds (CLOCK_MONOTONIC). */
double bench_now(void);

/** Sort @p t[0..n) ascending and return its median (mean of the middle two
 *  when @p n is even); 0 for n == 0. */
double bench_median(double *t, int n);

/** Files read into memory, and their total size in bytes. */
typedef struct bench_set {
	lfs_cfile *f;
	size_t n;
	size_t bytes;
} bench_set;

/**
 * Load the files of list CORPUS/@p fmt_dir/@p list_file (paths relative to
 * CORPUS/@p fmt_dir). Returns 0, or -1 (message on stderr) when the list
 * cannot be read.
 */
int bench_load_list(bench_set *s, const char *corpus, const char *fmt_dir, const char *list_file);

/** Load every @p ext file (case-insensitive, sorted) of folder @p dir; 0 or -1. */
int bench_load_dir(bench_set *s, const char *dir, const char *ext);

/** Free the files of @p s and zero it. */
void bench_set_free(bench_set *s);

#endif
