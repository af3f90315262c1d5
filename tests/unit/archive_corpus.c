/**
 * @file archive_corpus.c
 * MANIFEST.tsv and gen/inputs.tsv readers for the archive tests.
 */
#include "archive_corpus.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
