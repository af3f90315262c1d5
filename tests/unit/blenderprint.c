/**
 * @file blenderprint.c
 * The OBJ text Blender 3.4's exporter writes for an OBJ view (blenderprint.h),
 * for the tests of "Saving OBJ from other programs" (docs/formats/obj-csv.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blenderprint.h"

/* Index of @p x in entries [@p from, *@p n) of list @p l of @p dim doubles
 * each, appended when new. */
static size_t dedup(double *l, size_t from, size_t *n, const double *x, unsigned dim)
{
	for (size_t i = from; i < *n; i++)
		if (!memcmp(l + dim * i, x, dim * sizeof(double)))
			return i;
	memcpy(l + dim * *n, x, dim * sizeof(double));
	return (*n)++;
}

void lfs_test_blenderize(const char *text, bool per_object, double zero_z, lfs_sb *out)
{
	size_t cap = strlen(text) / 4 + 16;
	double *vt = malloc(cap * 2 * sizeof(double)), *vn = malloc(cap * 3 * sizeof(double));
	double *ut = malloc(cap * 2 * sizeof(double)), *un = malloc(cap * 3 * sizeof(double));
	size_t nt = 0, nn = 0, nut = 0, nun = 0, obt = 0, obn = 0; /* per-object bases */
	size_t *mt = malloc(cap * sizeof(size_t)), *mn = malloc(cap * sizeof(size_t));
	assert_non_null(vt);
	assert_non_null(vn);
	assert_non_null(ut);
	assert_non_null(un);
	assert_non_null(mt);
	assert_non_null(mn);
	lfs_sb body = { 0 }, tail = { 0 };
	lfs_sb_puts(out, "# Blender 3.4.1\n# www.blender.org\nmtllib x.mtl\n");
	const char *p = text;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char line[4096];
		assert_true(len < sizeof(line));
		memcpy(line, p, len);
		line[len] = 0;
		p += len + (e ? 1 : 0);
		double a[3];
		if (!strncmp(line, "v ", 2) && sscanf(line + 2, "%lf %lf %lf", &a[0], &a[1], &a[2]) == 3) {
			/* a writer prints its float32, not our decimal text */
			lfs_sb_printf(&body, "v %.6f %.6f %.6f\n", (double)(float)a[0], (double)(float)a[1],
				      (double)(float)a[2]);
		} else if (!strncmp(line, "vt ", 3) && sscanf(line + 3, "%lf %lf", &a[0], &a[1]) == 2) {
			char b[64];
			snprintf(b, sizeof(b), "%.6f %.6f", (double)(float)a[0], (double)(float)a[1]);
			sscanf(b, "%lf %lf", &a[0], &a[1]);
			vt[2 * nt] = a[0], vt[2 * nt + 1] = a[1];
			mt[nt++] = dedup(ut, per_object ? obt : 0, &nut, a, 2);
		} else if (!strncmp(line, "vn ", 3) && sscanf(line + 3, "%lf %lf %lf", &a[0], &a[1], &a[2]) == 3) {
			double l = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
			char b[96];
			snprintf(b, sizeof(b), "%.4f %.4f %.4f", l > 0 ? a[0] / l : 0, l > 0 ? a[1] / l : 0,
				 l > 0 ? a[2] / l : zero_z);
			sscanf(b, "%lf %lf %lf", &a[0], &a[1], &a[2]);
			mn[nn++] = dedup(un, per_object ? obn : 0, &nun, a, 3);
		} else if (!strncmp(line, "o ", 2)) {
			/* flush the previous object's uvs and normals */
			for (size_t i = obt; i < nut; i++)
				lfs_sb_printf(&body, "vt %.6f %.6f\n", ut[2 * i], ut[2 * i + 1]);
			for (size_t i = obn; i < nun; i++)
				lfs_sb_printf(&body, "vn %.4f %.4f %.4f\n", un[3 * i], un[3 * i + 1], un[3 * i + 2]);
			obt = nut, obn = nun;
			lfs_sb_put(&body, tail.data ? tail.data : "", tail.len);
			tail.len = 0;
			lfs_sb_printf(&body, "%s\n", line);
		} else if (!strncmp(line, "f ", 2)) {
			lfs_sb_putc(&tail, 'f');
			char *save = NULL;
			for (char *tok = strtok_r(line + 2, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
				long v = 0, t = 0, n = 0;
				if (sscanf(tok, "%ld/%ld/%ld", &v, &t, &n) == 3)
					lfs_sb_printf(&tail, " %ld/%zu/%zu", v, mt[t - 1] + 1, mn[n - 1] + 1);
				else if (sscanf(tok, "%ld//%ld", &v, &n) == 2)
					lfs_sb_printf(&tail, " %ld//%zu", v, mn[n - 1] + 1);
				else if (sscanf(tok, "%ld/%ld", &v, &t) == 2)
					lfs_sb_printf(&tail, " %ld/%zu", v, mt[t - 1] + 1);
				else
					lfs_sb_printf(&tail, " %s", tok);
			}
			lfs_sb_putc(&tail, '\n');
		} else if (!strncmp(line, "usemtl ", 7)) {
			lfs_sb_printf(&tail, "s 0\n%s\n", line);
		}
	}
	for (size_t i = obt; i < nut; i++)
		lfs_sb_printf(&body, "vt %.6f %.6f\n", ut[2 * i], ut[2 * i + 1]);
	for (size_t i = obn; i < nun; i++)
		lfs_sb_printf(&body, "vn %.4f %.4f %.4f\n", un[3 * i], un[3 * i + 1], un[3 * i + 2]);
	lfs_sb_put(&body, tail.data ? tail.data : "", tail.len);
	lfs_sb_put(out, body.data ? body.data : "", body.len);
	lfs_sb_free(&body);
	lfs_sb_free(&tail);
	free(vt);
	free(vn);
	free(ut);
	free(un);
	free(mt);
	free(mn);
}
