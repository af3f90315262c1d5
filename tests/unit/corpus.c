/**
 * @file corpus.c
 * Test and bench support: the corpus, whole files, path lists (see corpus.h).
 */
#define _DEFAULT_SOURCE
#include "corpus.h"

#include <dirent.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

const char *lfs_corpus_dir(void)
{
	const char *d = getenv("LFS_CORPUS");
	struct stat st;
	if (!d || stat(d, &st) != 0 || !S_ISDIR(st.st_mode))
		return NULL;
	return d;
}

const char *lfs_corpus_dir_or_skip(void)
{
	const char *d = lfs_corpus_dir();
	if (!d) {
		const char *env = getenv("LFS_CORPUS");
		fprintf(stderr, "corpus not found (LFS_CORPUS=%s): skipping\n",
			env ? env : "(unset)");
		exit(77);
	}
	return d;
}

static unsigned g_skipped;

void lfs_test_note_skip(const char *file, int line, const char *msg)
{
	g_skipped++;
	fprintf(stderr, "SKIP: %s:%d: %s\n", file, line, msg ? msg : "");
}

unsigned lfs_test_skipped(void)
{
	return g_skipped;
}

int lfs_test_exit(int rc)
{
	if (rc == 0 && g_skipped > 0) {
		fprintf(stderr, "%u test(s) skipped, none failed: exit 77 (SKIP)\n", g_skipped);
		return 77;
	}
	if (rc < 0)
		return 1;
	if (rc >= 77)
		return 76;
	return rc;
}

char *lfs_path(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return buf;
}

const char *lfs_base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
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
		if (!nb)
			free(buf);
		buf = nb;
	}
	fclose(f);
	if (buf) {
		buf[n] = 0;
		*len = n;
	}
	return buf;
}

/* Append a copy of "a/b" to the NULL-terminated list *v of *n entries. */
static int push_path(char ***v, size_t *n, size_t *cap, const char *a, const char *b)
{
	if (*n + 1 >= *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		char **nv = realloc(*v, nc * sizeof(**v));
		if (!nv)
			return -1;
		*v = nv;
		*cap = nc;
	}
	size_t sz = strlen(a) + strlen(b) + 2;
	char *p = malloc(sz);
	if (!p)
		return -1;
	snprintf(p, sz, "%s/%s", a, b);
	(*v)[(*n)++] = p;
	(*v)[*n] = NULL;
	return 0;
}

char **lfs_read_list(const char *list_path, const char *prefix, size_t *count)
{
	size_t len;
	char *text = (char *)lfs_read_file(list_path, &len);
	if (!text)
		return NULL;
	char **out = NULL;
	size_t n = 0, cap = 0;
	char *save = NULL;
	for (char *line = strtok_r(text, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save))
		if (*line && push_path(&out, &n, &cap, prefix, line))
			break;
	free(text);
	if (!out)
		out = calloc(1, sizeof(*out));
	if (count)
		*count = n;
	return out;
}

char **lfs_corpus_list(const char *fmt_dir, const char *list_file, size_t *count)
{
	const char *c = lfs_corpus_dir_or_skip();
	char list[4096], prefix[4096];
	lfs_path(list, sizeof(list), "%s/%s/%s", c, fmt_dir, list_file);
	lfs_path(prefix, sizeof(prefix), "%s/%s", c, fmt_dir);
	size_t n = 0;
	char **l = lfs_read_list(list, prefix, &n);
	if (!l || !n) {
		fprintf(stderr, "no corpus list %s: skipping\n", list);
		lfs_free_list(l);
		exit(77);
	}
	if (count)
		*count = n;
	return l;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **lfs_list_dir(const char *dir, const char *ext, size_t *count)
{
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	char **v = NULL;
	size_t n = 0, cap = 0, el = strlen(ext);
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l > el && !strcasecmp(e->d_name + l - el, ext) &&
		    push_path(&v, &n, &cap, dir, e->d_name))
			break;
	}
	closedir(d);
	if (!v)
		v = calloc(1, sizeof(*v));
	else
		qsort(v, n, sizeof(*v), cmp_str);
	if (count)
		*count = n;
	return v;
}

void lfs_free_list(char **list)
{
	if (!list)
		return;
	for (char **p = list; *p; p++)
		free(*p);
	free(list);
}

lfs_cfile *lfs_load_files(char *const *paths, size_t *count, size_t *bytes)
{
	size_t n = 0, total = 0;
	while (paths && paths[n])
		n++;
	lfs_cfile *f = calloc(n ? n : 1, sizeof(*f));
	size_t k = 0;
	for (size_t i = 0; f && i < n; i++) {
		lfs_cfile *c = &f[k];
		c->data = lfs_read_file(paths[i], &c->n);
		if (!c->data) {
			fprintf(stderr, "cannot read %s\n", paths[i]);
			continue;
		}
		c->path = strdup(paths[i]);
		c->name = lfs_base_name(c->path);
		total += c->n;
		k++;
	}
	*count = k;
	if (bytes)
		*bytes = total;
	return f;
}

void lfs_free_files(lfs_cfile *files, size_t count)
{
	if (!files)
		return;
	for (size_t i = 0; i < count; i++) {
		free(files[i].path);
		free(files[i].data);
	}
	free(files);
}

static bool base_is(const char *path, const char *name)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strlen(name);
	return strncasecmp(b, name, n) == 0 && strcasecmp(b + n, ".mdl") == 0;
}

static bool same_dir(const char *a, const char *b)
{
	const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
	return sa && sb && sa - a == sb - b && strncmp(a, b, (size_t)(sa - a)) == 0;
}

bool lfs_corpus_supermodel(void *ctx, const char *name, uint8_t **data, size_t *n)
{
	const lfs_corpus_lookup *lc = ctx;
	const char *best = NULL;
	char **order[3] = { lc->bins, lc->bins, lc->ascii };
	for (int pass = 0; pass < 4 && !best; pass++) {
		char **list = pass == 0 ? lc->ascii : order[pass - 1];
		for (char **p = list; p && *p && !best; p++)
			if (base_is(*p, name) && (pass > 1 || same_dir(*p, lc->path)))
				best = *p;
	}
	if (!best)
		return false;
	*data = lfs_read_file(best, n);
	return *data != NULL;
}

size_t lfs_malloc_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

bool lfs_malloc_counts(void)
{
	size_t before = lfs_malloc_in_use();
	char *p = malloc((size_t)1 << 20);
	if (!p)
		return false;
	memset(p, 1, (size_t)1 << 20);
	bool seen = lfs_malloc_in_use() >= before + ((size_t)1 << 20);
	free(p);
	return seen;
}

bool lfs_test_slice_keeps(size_t i)
{
	const char *v = getenv("LFS_TEST_SLICE"), *sd = getenv("LFS_TEST_SEED");
	unsigned long n = v ? strtoul(v, NULL, 10) : 1;
	unsigned long seed = sd ? strtoul(sd, NULL, 10) : 0;
	return n <= 1 || i % n == seed % n;
}

void lfs_test_slice(char **list, size_t *count)
{
	size_t w = 0, i = 0;
	for (; list && list[i]; i++) {
		if (lfs_test_slice_keeps(i))
			list[w++] = list[i];
		else
			free(list[i]);
	}
	if (list)
		list[w] = NULL;
	if (count)
		*count = w;
}

size_t lfs_test_slice_min(size_t whole)
{
	const char *v = getenv("LFS_TEST_SLICE");
	unsigned long n = v ? strtoul(v, NULL, 10) : 1;
	/* a slice may hold few of a rare kind (14 of the 216 binaries have
	 * meshes): one at least, the full suite checks the whole count */
	return n <= 1 || !whole ? whole : 1;
}
