/**
 * @file archive_corpus.c
 * MANIFEST.tsv and gen/inputs.tsv readers for the archive tests.
 */
#define _GNU_SOURCE
#include "archive_corpus.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "corpus.h"

/* split line into at most max tab-separated fields (in place) */
static size_t split_tabs(char *line, char **f, size_t max)
{
	size_t k = 0;
	line[strcspn(line, "\r\n")] = 0;
	while (k < max) {
		f[k++] = line;
		char *t = strchr(line, '\t');
		if (!t)
			break;
		*t = 0;
		line = t + 1;
	}
	return k;
}

lfs_arch_row *lfs_arch_manifest(size_t *n)
{
	const char *corpus = lfs_corpus_dir_or_skip();
	char path[512], line[8192];
	lfs_path(path, sizeof(path), "%s/archives/MANIFEST.tsv", corpus);
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "%s absent: skip\n", path);
		exit(77);
	}
	lfs_arch_row *rows = NULL;
	size_t cnt = 0;
	bool header = true;
	while (fgets(line, sizeof(line), f)) {
		char *col[16];
		size_t k = split_tabs(line, col, 16);
		if (header || k < 9) {
			header = false;
			continue;
		}
		rows = realloc(rows, (cnt + 1) * sizeof(*rows));
		lfs_arch_row *r = &rows[cnt++];
		snprintf(r->file, sizeof(r->file), "%s", col[0]);
		snprintf(r->path, sizeof(r->path), "%s/archives/%s", corpus, col[0]);
		snprintf(r->format, sizeof(r->format), "%s", col[7]);
		r->entries = strtol(col[8], NULL, 10);
	}
	fclose(f);
	*n = cnt;
	return rows;
}

uint8_t *lfs_arch_loose(const char *name, size_t *n)
{
	const char *corpus = lfs_corpus_dir_or_skip();
	char path[1024], line[8192];
	lfs_path(path, sizeof(path), "%s/archives/gen/inputs.tsv", corpus);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	uint8_t *data = NULL;
	while (fgets(line, sizeof(line), f)) {
		char *col[12];
		if (split_tabs(line, col, 12) < 5 || strcmp(col[1], name))
			continue;
		const char *repo = strrchr(col[2], '/');
		lfs_path(path, sizeof(path), "%s/nwn/tree/%s/%s", corpus, repo ? repo + 1 : col[2],
			 col[4]);
		data = lfs_read_file(path, n);
		break;
	}
	fclose(f);
	return data;
}

bool lfs_arch_equals_input(const char *name, const uint8_t *p, size_t n, bool *compared_loose)
{
	const char *corpus = lfs_corpus_dir_or_skip();
	char path[1024], line[8192];
	if (compared_loose)
		*compared_loose = false;
	lfs_path(path, sizeof(path), "%s/archives/gen/inputs.tsv", corpus);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool found = false, ok = false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *col[12];
		if (split_tabs(line, col, 12) < 7 || strcmp(col[1], name))
			continue;
		found = true;
		uint8_t dg[SHA256_DIGEST_SIZE];
		char hex[2 * SHA256_DIGEST_SIZE + 1];
		struct sha256_ctx c;
		sha256_init(&c);
		sha256_update(&c, n, p);
		sha256_digest(&c, sizeof(dg), dg);
		for (size_t i = 0; i < sizeof(dg); i++)
			snprintf(hex + 2 * i, 3, "%02x", dg[i]);
		ok = strtoull(col[6], NULL, 10) == n && !strcmp(hex, col[5]);
		if (!ok)
			fprintf(stderr, "%s: %zu bytes sha256 %s, inputs.tsv: %s bytes %s\n", name, n,
				hex, col[6], col[5]);
	}
	fclose(f);
	if (!found) {
		fprintf(stderr, "%s: not listed in gen/inputs.tsv\n", name);
		return false;
	}
	size_t ln;
	uint8_t *loose = ok ? lfs_arch_loose(name, &ln) : NULL;
	if (loose) {
		ok = ln == n && !memcmp(loose, p, n);
		if (compared_loose)
			*compared_loose = true;
		free(loose);
	}
	return ok;
}

lfs_arch_row *lfs_arch_rows;
size_t lfs_arch_nrows;

int lfs_arch_setup(void **state)
{
	(void)state;
	lfs_arch_rows = lfs_arch_manifest(&lfs_arch_nrows);
	return 0;
}

int lfs_arch_teardown(void **state)
{
	(void)state;
	free(lfs_arch_rows);
	lfs_arch_rows = NULL;
	return 0;
}

bool lfs_arch_is_erf(const lfs_arch_row *r)
{
	static const char *const tags[] = { "HAK ", "ERF ", "MOD ", "SAV ", "NWM " };
	for (size_t i = 0; i < sizeof(tags) / sizeof(*tags); i++)
		if (!strncmp(r->format, tags[i], 4))
			return true;
	return false;
}

const lfs_arch_row *lfs_arch_find(const char *suffix)
{
	size_t ls = strlen(suffix);
	for (size_t i = 0; i < lfs_arch_nrows; i++) {
		size_t lf = strlen(lfs_arch_rows[i].file);
		if (lf >= ls && !strcmp(lfs_arch_rows[i].file + lf - ls, suffix))
			return &lfs_arch_rows[i];
	}
	return NULL;
}

int lfs_arch_dirfd(const char *path)
{
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -1;
	char *sl = strrchr(dir, '/');
	if (!sl)
		return open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*sl = '\0';
	return open(sl == dir ? "/" : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int lfs_arch_tmpdir(char *buf, size_t size, const char *tag)
{
	const char *b = getenv("LFS_BUILD_ROOT");
	if (snprintf(buf, size, "%s/test-%s-XXXXXX", b && *b ? b : "/tmp", tag) >= (int)size ||
	    !mkdtemp(buf))
		return -1;
	return open(buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int lfs_arch_put(int dfd, const char *rel, const void *d, size_t n)
{
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof(dir), "%s", rel) >= (int)sizeof(dir))
		return -1;
	for (char *s = strchr(dir, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdirat(dfd, dir, 0755) != 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	int fd = openat(dfd, rel, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	const uint8_t *p = d;
	size_t done = 0;
	while (done < n) {
		ssize_t k = write(fd, p + done, n - done);
		if (k <= 0)
			break;
		done += (size_t)k;
	}
	return close(fd) == 0 && done == n ? 0 : -1;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

int lfs_arch_rmtree(const char *dir)
{
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
