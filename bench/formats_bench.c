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
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "formats/nad.h"
#include "formats/nod.h"
#include "formats/nwn/nwn_mdl.h"
#include "formats/sod.h"
#include "views/viewset.h"

typedef struct file {
	char name[256];
	uint8_t *data;
	size_t size;
} file;

typedef struct set {
	file *f;
	size_t n, cap, bytes;
} set;

static void add_file(set *s, const char *path, const char *name)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return;
	fseek(fp, 0, SEEK_END);
	long len = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	if (len < 0) {
		fclose(fp);
		return;
	}
	uint8_t *d = malloc((size_t)len + 1);
	if (!d || fread(d, 1, (size_t)len, fp) != (size_t)len) {
		free(d);
		fclose(fp);
		return;
	}
	fclose(fp);
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->f = realloc(s->f, s->cap * sizeof(*s->f));
	}
	file *f = &s->f[s->n++];
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->data = d;
	f->size = (size_t)len;
	s->bytes += (size_t)len;
}

static void load_dir(set *s, const char *dir, const char *ext)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name), el = strlen(ext);
		if (l <= el || strcasecmp(e->d_name + l - el, ext))
			continue;
		char p[8192];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		add_file(s, p, e->d_name);
	}
	closedir(d);
}

static void load_list(set *s, const char *corpus)
{
	char list[4096];
	snprintf(list, sizeof(list), "%s/nwn/binary.txt", corpus);
	FILE *fp = fopen(list, "r");
	if (!fp)
		return;
	char line[4096];
	while (fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\r\n")] = 0;
		if (!*line)
			continue;
		char p[8192];
		snprintf(p, sizeof(p), "%s/nwn/%s", corpus, line);
		const char *b = strrchr(line, '/');
		add_file(s, p, b ? b + 1 : line);
	}
	fclose(fp);
}

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

enum { DECODE, ENCODE, VIEWS };

/* One pass over the set; returns the number of failures. */
static int pass(const char *fmt, set *s, int mode)
{
	int fails = 0;
	for (size_t i = 0; i < s->n; i++) {
		file *f = &s->f[i];
		lfs_error err;
		uint8_t *out = NULL;
		size_t on = 0;
		if (mode == VIEWS) {
			lfs_viewset vs;
			fails += lfs_views_build(f->name, f->data, f->size, NULL, &vs, &err) != LFS_OK;
			lfs_viewset_free(&vs);
		} else if (!strcmp(fmt, "nwn")) {
			nwn_model *m;
			fails += nwn_mdl_decode(f->data, f->size, &m, &err) != LFS_OK;
			nwn_model_free(m);
		} else if (!strcmp(fmt, "nod")) {
			nod_model *m = NULL;
			if (nod_decode(f->data, f->size, &m, &err) || (mode == ENCODE && nod_encode(m, &out, &on, &err)))
				fails++;
			nod_model_free(m);
		} else if (!strcmp(fmt, "nad")) {
			nad_model *m = NULL;
			if (nad_decode(f->data, f->size, &m, &err) || (mode == ENCODE && nad_encode(m, &out, &on, &err)))
				fails++;
			nad_model_free(m);
		} else if (!strcmp(fmt, "sod")) {
			sod_model *m = NULL;
			if (sod_decode(f->data, f->size, &m, &err) || (mode == ENCODE && sod_encode(m, &out, &on, &err)))
				fails++;
			sod_model_free(m);
		}
		free(out);
	}
	return fails;
}

int main(int argc, char **argv)
{
	int runs = 10;
	const char *corpus = getenv("LFS_CORPUS");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else
			corpus = argv[i];
	}
	if (!corpus)
		corpus = "../shared/corpus";
	if (runs < 1)
		runs = 1;
	static const char *fmts[] = { "nwn", "nod", "nad", "sod" };
	static const char *modes[] = { "decode", "decode+encode", "all views" };
	printf("%-4s %-14s %6s %9s %12s %10s\n", "fmt", "work", "files", "MB", "median s", "MB/s");
	for (int fi = 0; fi < 4; fi++) {
		set s = { 0 };
		char dir[4096];
		if (fi == 0) {
			load_list(&s, corpus);
		} else {
			snprintf(dir, sizeof(dir), "%s/%s", corpus, fmts[fi]);
			char ext[8];
			snprintf(ext, sizeof(ext), ".%s", fmts[fi]);
			load_dir(&s, dir, ext);
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
				double t0 = now();
				fails = pass(fmts[fi], &s, mode);
				t[r] = now() - t0;
			}
			qsort(t, (size_t)runs, sizeof(double), cmpd);
			double med = t[runs / 2];
			printf("%-4s %-14s %6zu %9.3f %12.5f %10.1f%s\n", fmts[fi], modes[mode], s.n,
			       (double)s.bytes / 1e6, med, (double)s.bytes / 1e6 / med,
			       fails ? "  (failures!)" : "");
			free(t);
		}
		for (size_t i = 0; i < s.n; i++)
			free(s.f[i].data);
		free(s.f);
	}
	return 0;
}
