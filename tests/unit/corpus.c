/**
 * @file corpus.c
 * Test helpers (see corpus.h).
 */
#include "corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *lfs_corpus_dir_or_skip(void)
{
	const char *d = getenv("LFS_CORPUS");
	struct stat st;
	if (!d || stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "corpus not found (LFS_CORPUS=%s): skipping\n", d ? d : "(unset)");
		exit(77);
	}
	return d;
}

uint8_t *lfs_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap + 1);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n < cap)
			break;
		cap *= 2;
		uint8_t *nb = realloc(buf, cap + 1);
		if (!nb) {
			free(buf);
			buf = NULL;
		}
		buf = nb;
	}
	fclose(f);
	if (buf) {
		buf[n] = 0;
		*len = n;
	}
	return buf;
}

char **lfs_read_list(const char *list_path, const char *prefix, size_t *count)
{
	size_t len;
	char *text = (char *)lfs_read_file(list_path, &len);
	if (!text)
		return NULL;
	size_t cap = 64, n = 0;
	char **out = calloc(cap + 1, sizeof(*out));
	for (char *line = strtok(text, "\r\n"); line && out; line = strtok(NULL, "\r\n")) {
		if (!*line)
			continue;
		if (n == cap) {
			cap *= 2;
			char **no = realloc(out, (cap + 1) * sizeof(*out));
			if (!no)
				break;
			out = no;
		}
		size_t sz = strlen(prefix) + strlen(line) + 2;
		out[n] = malloc(sz);
		snprintf(out[n], sz, "%s/%s", prefix, line);
		n++;
		out[n] = NULL;
	}
	free(text);
	if (count)
		*count = n;
	return out;
}

void lfs_free_list(char **list)
{
	if (!list)
		return;
	for (char **p = list; *p; p++)
		free(*p);
	free(list);
}
