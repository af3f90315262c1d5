/**
 * @file erfpack.c
 * Test-only helper: write an ERF-family archive with the project's ERF
 * writer (formats/nwnarchive/erf.h: lfs_erf_new, lfs_erf_add, lfs_erf_encode).
 *
 *   lfs-test-erfpack OUT TAG VERSION FILE...
 *
 * TAG is the 4-character file type without its trailing space (HAK, ERF,
 * MOD); VERSION is V1.0, V1.1 or E1.0. Each FILE becomes one resource: its
 * base name without the extension is the ResRef, the extension gives the
 * resource type (restype.h). Exit status 0, or 1 with a message on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/nwnarchive/erf.h"
#include "formats/nwnarchive/restype.h"

static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, len = 0;
	unsigned char *b = malloc(cap);
	size_t k;
	while (b && (k = fread(b + len, 1, cap - len, f)) > 0) {
		len += k;
		if (len == cap) {
			unsigned char *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
		}
	}
	fclose(f);
	*n = len;
	return b;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s OUT TAG VERSION FILE...\n", argv[0]);
		return 1;
	}
	char tag[5];
	snprintf(tag, sizeof(tag), "%-4s", argv[2]);
	lfs_erf_version v = !strcmp(argv[3], "E1.0") ? LFS_ERF_E10
			    : !strcmp(argv[3], "V1.1") ? LFS_ERF_V11 : LFS_ERF_V10;
	lfs_erf *a = lfs_erf_new(tag, v);
	lfs_error e;
	memset(&e, 0, sizeof(e));
	for (int i = 4; a && i < argc; i++) {
		const char *base = strrchr(argv[i], '/');
		base = base ? base + 1 : argv[i];
		const char *dot = strrchr(base, '.');
		char resref[64];
		uint16_t type;
		if (!dot || (size_t)(dot - base) >= sizeof(resref) || !lfs_restype_from_ext(dot + 1, &type)) {
			fprintf(stderr, "%s: no resource type for this name\n", argv[i]);
			return 1;
		}
		memcpy(resref, base, (size_t)(dot - base));
		resref[dot - base] = '\0';
		size_t n = 0;
		unsigned char *d = slurp(argv[i], &n);
		if (!d || lfs_erf_add(a, resref, type, d, n, &e) != LFS_OK) {
			fprintf(stderr, "%s: %s\n", argv[i], d ? e.msg : "cannot read");
			return 1;
		}
		free(d);
	}
	unsigned char *out = NULL;
	size_t on = 0;
	if (!a || lfs_erf_encode(a, &out, &on, &e) != LFS_OK) {
		fprintf(stderr, "encode: %s\n", a ? e.msg : "out of memory");
		return 1;
	}
	lfs_erf_free(a);
	FILE *f = fopen(argv[1], "wb");
	if (!f || fwrite(out, 1, on, f) != on || fclose(f) != 0) {
		fprintf(stderr, "%s: cannot write\n", argv[1]);
		return 1;
	}
	free(out);
	return 0;
}
