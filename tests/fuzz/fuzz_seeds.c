/**
 * @file fuzz_seeds.c
 * Seed corpora of the libFuzzer targets (docs/fuzzing.md), made from real
 * files at run time and never kept in the project: tests/fuzz/run.sh calls
 *
 *     fuzz_seeds OUTDIR MAXLEN APPLY_MAXLEN DIR...
 *
 * which walks every DIR (the shared corpus: nwn/tree, nod, nad, sod) and
 * writes, for every file of at most MAXLEN bytes, into OUTDIR/<target>/
 * (roundtrip and apply: seeds of at most APPLY_MAXLEN bytes, since every
 * execution of those builds all views, several times):
 *  - a model file a registry row decodes: itself for the decoder target of
 *    its format (decode-<fmt>), with the selector byte for roundtrip and,
 *    with one writable view of each kind, for apply (fuzz_apply.c's layout);
 *    its MDL-style text view for that format's text target (nwn: mdl and
 *    nwn-ascii), its OBJ views for obj (with a few rule bytes) and its CSV
 *    views for csv (with the mode byte of that kind of CSV);
 *  - an NWN ASCII model (a .mdl no row decodes): itself for mdl and
 *    nwn-ascii.
 * At most MAX_PER_TARGET seeds a target from one format's files; texts longer than MAXLEN are left
 * out. File names are an FNV-1a hash of the content (duplicates collapse).
 */
#define _GNU_SOURCE /* nftw */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "registry/format.h"
#include "registry/viewset.h"

#define MAX_PER_TARGET 200

static const char *g_out;
static size_t g_maxlen, g_apply_maxlen;

typedef struct count {
	char name[32];
	unsigned n;
} count;
static count g_count[64];
static const char *g_fmt = ""; /* the format of the file being read */

static unsigned *counter(const char *target)
{
	char key[sizeof(g_count[0].name)];
	snprintf(key, sizeof(key), "%s/%s", target, g_fmt);
	for (size_t i = 0; i < sizeof(g_count) / sizeof(g_count[0]); i++) {
		if (!g_count[i].name[0])
			snprintf(g_count[i].name, sizeof(g_count[i].name), "%s", key);
		if (!strcmp(g_count[i].name, key))
			return &g_count[i].n;
	}
	return NULL;
}

/* Write pre (pn bytes) + body (bn bytes) as a seed of @p target. */
static void seed(const char *target, const void *pre, size_t pn, const void *body, size_t bn)
{
	unsigned *c = counter(target);
	size_t max = strcmp(target, "roundtrip") && strcmp(target, "apply") ? g_maxlen : g_apply_maxlen;
	if (!c || *c >= MAX_PER_TARGET || pn + bn > max)
		return;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < pn; i++)
		h = (h ^ ((const uint8_t *)pre)[i]) * 1099511628211ull;
	for (size_t i = 0; i < bn; i++)
		h = (h ^ ((const uint8_t *)body)[i]) * 1099511628211ull;
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", g_out, target);
	if (mkdir(path, 0777) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/%016llx", g_out, target, (unsigned long long)h);
	FILE *fp = fopen(path, "wb");
	if (!fp || fwrite(pre, 1, pn, fp) != pn || fwrite(body, 1, bn, fp) != bn || fclose(fp)) {
		perror(path);
		exit(1);
	}
	(*c)++;
}

static uint8_t *read_all(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	uint8_t *d = NULL;
	size_t cap = 0, k = 0, got;
	do {
		if (k == cap) {
			cap = cap ? cap * 2 : 65536;
			uint8_t *nd = realloc(d, cap);
			if (!nd) {
				free(d);
				fclose(fp);
				return NULL;
			}
			d = nd;
		}
		got = fread(d + k, 1, cap - k, fp);
		k += got;
	} while (got > 0);
	fclose(fp);
	*n = k;
	return d;
}

static unsigned char selector(const lfs_format *f)
{
	unsigned char k = 0;
	for (const lfs_format *const *p = lfs_formats; *p; p++) {
		if (*p == f)
			return k;
		if ((*p)->apply)
			k++;
	}
	return 0;
}

static const char *text_target(const lfs_format *f)
{
	if (!strcmp(f->name, "nwn-mdl"))
		return "mdl";
	static char t[40];
	snprintf(t, sizeof(t), "text-%s", f->name);
	return t;
}

static void model_seeds(const char *path, const lfs_format *f, const uint8_t *d, size_t n)
{
	char t[48];
	snprintf(t, sizeof(t), "decode-%s", f->name);
	seed(t, "", 0, d, n);
	lfs_viewset vs;
	lfs_error err;
	if (lfs_views_build_as(f, d, n, NULL, &vs, &err)) {
		fprintf(stderr, "fuzz_seeds: %s: %s\n", path, err.msg);
		return;
	}
	unsigned char sel = selector(f);
	if (f->apply)
		seed("roundtrip", &sel, 1, d, n);
	bool applied[LFS_VIEW_THUMBNAIL + 1] = { false };
	for (size_t i = 0, wi = 0; i < vs.n_views; i++) {
		const lfs_view *v = &vs.views[i];
		switch (v->kind) {
		case LFS_VIEW_TEXT:
			seed(text_target(f), "", 0, v->data, v->size);
			if (!strcmp(f->name, "nwn-mdl"))
				seed("nwn-ascii", "", 0, v->data, v->size);
			break;
		case LFS_VIEW_MODEL_OBJ:
		case LFS_VIEW_MESH_OBJ: {
			/* lenient; strict + numbers + triangles; everything */
			static const unsigned char rules[][2] = { { 0, 0 }, { 0x91, 0x01 },
								  { 0xff, 0x00 } };
			for (size_t k = 0; k < sizeof(rules) / sizeof(rules[0]); k++)
				seed("obj", rules[k], 2, v->data, v->size);
			break;
		}
		case LFS_VIEW_TRACK_CSV:
		case LFS_VIEW_TABLE_CSV: {
			unsigned char mode = 0;
			if (!strcmp(f->name, "nad"))
				mode = v->kind == LFS_VIEW_TABLE_CSV ? 2 : 1;
			seed("csv", &mode, 1, v->data, v->size);
			mode = 3 | 4; /* header mode, lenient */
			seed("csv", &mode, 1, v->data, v->size);
			break;
		}
		default:
			break;
		}
		if (!v->writable)
			continue;
		if (!applied[v->kind] && f->apply) {
			applied[v->kind] = true;
			unsigned char pre[8] = { sel,
						 (unsigned char)n,
						 (unsigned char)(n >> 8),
						 (unsigned char)(n >> 16),
						 (unsigned char)(n >> 24) };
			size_t total = 5 + n + 2 + v->size;
			uint8_t *buf = malloc(total);
			if (!buf)
				exit(1);
			memcpy(buf, pre, 5);
			memcpy(buf + 5, d, n);
			buf[5 + n] = (uint8_t)wi;
			buf[5 + n + 1] = (uint8_t)(wi >> 8);
			memcpy(buf + 5 + n + 2, v->data, v->size);
			seed("apply", "", 0, buf, total);
			free(buf);
		}
		wi++;
	}
	lfs_viewset_free(&vs);
}

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type != FTW_F || (size_t)st->st_size > g_maxlen)
		return 0;
	size_t n = 0;
	uint8_t *d = read_all(path, &n);
	if (!d)
		return 0;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const lfs_format *f = lfs_format_for(base, d, n);
	size_t bl = strlen(base);
	g_fmt = f ? f->name : "ascii";
	if (f)
		model_seeds(path, f, d, n);
	else if (bl > 4 && !strcasecmp(base + bl - 4, ".mdl") && n && memchr(d, 0, n) == NULL) {
		seed("mdl", "", 0, d, n);
		seed("nwn-ascii", "", 0, d, n);
	}
	free(d);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: fuzz_seeds OUTDIR MAXLEN APPLY_MAXLEN DIR...\n");
		return 2;
	}
	g_out = argv[1];
	g_maxlen = strtoull(argv[2], NULL, 0);
	g_apply_maxlen = strtoull(argv[3], NULL, 0);
	if (mkdir(g_out, 0777) && errno != EEXIST) {
		perror(g_out);
		return 1;
	}
	for (int i = 4; i < argc; i++)
		nftw(argv[i], walk_one, 16, FTW_PHYS);
	for (size_t i = 0; i < sizeof(g_count) / sizeof(g_count[0]) && g_count[i].name[0]; i++)
		printf("%-22s %u seeds\n", g_count[i].name, g_count[i].n);
	return 0;
}
