/**
 * @file test_nodsod_blender.c
 * Blender round trips of NOD and SOD OBJ views (docs/formats/obj-csv.md,
 * "Saving OBJ from other programs"; docs/formats/nod.md, sod.md): every
 * writable OBJ view of every corpus NOD and SOD model, re-printed as Blender
 * 3.4's exporter prints it (positions and uvs with 6 decimals, normals with
 * 4, uvs and normals deduplicated so a corner's v/vt/vn indices differ, no
 * `g` lines, `s 0`), applies as a no-op (the original bytes); and a moved
 * vertex changes only that vertex.
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

#include "common/strbuf.h"
#include "views/viewset.h"
#include "corpus.h"

/* Index of @p x in entries [@p from, *@p n) of list @p l of @p dim doubles
 * each, appended when new (Blender deduplicates within one object). */
static size_t dedup(double *l, size_t from, size_t *n, const double *x, unsigned dim)
{
	for (size_t i = from; i < *n; i++)
		if (!memcmp(l + dim * i, x, dim * sizeof(double)))
			return i;
	memcpy(l + dim * *n, x, dim * sizeof(double));
	return (*n)++;
}

/*
 * @p text (an OBJ view) as Blender 3.4's exporter writes it: positions and
 * uvs with "%.6f", normals normalised with "%.4f", uvs and normals
 * deduplicated within each object (a corner's indices then differ), `g` and
 * comment lines left out, a Blender header and `s 0`. Objects stay in the
 * view's order (Blender sorts them by name: docs/formats/nod.md).
 */
static void blenderize(const char *text, lfs_sb *out)
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
			mt[nt++] = dedup(ut, obt, &nut, a, 2);
		} else if (!strncmp(line, "vn ", 3) && sscanf(line + 3, "%lf %lf %lf", &a[0], &a[1], &a[2]) == 3) {
			double l = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
			char b[96];
			/* a stored zero normal stays 0 0 0 (Blender makes one up, which
			 * the apply keeps as the stored zero; the round-trip law of
			 * this tree still compares it by value) */
			snprintf(b, sizeof(b), "%.4f %.4f %.4f", l > 0 ? a[0] / l : 0, l > 0 ? a[1] / l : 0,
				 l > 0 ? a[2] / l : 0);
			sscanf(b, "%lf %lf %lf", &a[0], &a[1], &a[2]);
			mn[nn++] = dedup(un, obn, &nun, a, 3);
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

/* The OBJ views of model @p path, Blender-printed, applied through
 * lfs_views_apply(): each gives back the original bytes. Returns the number
 * of views applied. */
static size_t noop_model(const char *path)
{
	size_t n;
	uint8_t *data = lfs_read_file(path, &n);
	assert_non_null(data);
	lfs_viewset vs;
	lfs_error err;
	const char *name = lfs_base_name(path);
	if (lfs_views_build(name, data, n, NULL, &vs, &err) != LFS_OK) {
		fprintf(stderr, "%s: %s (not counted)\n", path, err.msg);
		free(data);
		return 0;
	}
	size_t views = 0;
	for (size_t k = 0; k < vs.n_views; k++) {
		const lfs_view *v = &vs.views[k];
		if (!v->writable || (v->kind != LFS_VIEW_MESH_OBJ && v->kind != LFS_VIEW_MODEL_OBJ))
			continue;
		char *txt = malloc(v->size + 1);
		assert_non_null(txt);
		memcpy(txt, v->data, v->size);
		txt[v->size] = 0;
		lfs_sb b = { 0 };
		blenderize(txt, &b);
		free(txt);
		uint8_t *out = NULL;
		size_t on = 0;
		lfs_err r = lfs_views_apply(name, data, n, v->path, b.data, b.len, &out, &on, &err);
		if (r)
			fprintf(stderr, "%s %s: %s\n", path, v->path, err.msg);
		assert_int_equal(r, LFS_OK);
		if (on != n || memcmp(out, data, n))
			fprintf(stderr, "%s %s: not a no-op\n", path, v->path);
		assert_int_equal(on, n);
		assert_memory_equal(out, data, n);
		free(out);
		lfs_sb_free(&b);
		views++;
	}
	lfs_viewset_free(&vs);
	free(data);
	return views;
}

static void noop_dir(const char *fmt, const char *ext, size_t min_models)
{
	char dir[1024];
	lfs_path(dir, sizeof(dir), "%s/%s", lfs_corpus_dir_or_skip(), fmt);
	size_t nf = 0;
	char **files = lfs_list_dir(dir, ext, &nf);
	assert_non_null(files);
	size_t models = 0, views = 0;
	for (size_t i = 0; i < nf; i++) {
		size_t k = noop_model(files[i]);
		views += k;
		models += k > 0;
	}
	fprintf(stderr, "%s: Blender-printed OBJ views applied as no-ops: %zu views of %zu models\n",
		fmt, views, models);
	assert_true(models >= min_models);
	lfs_free_list(files);
}

static void test_nod_noop(void **state)
{
	(void)state;
	noop_dir("nod", ".nod", 20);
}

static void test_sod_noop(void **state)
{
	(void)state;
	noop_dir("sod", ".sod", 80);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nod_noop),
		cmocka_unit_test(test_sod_noop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
