/**
 * @file test_nwn_obj_weld.c
 * The printed-precision rule of OBJ saves (docs/formats/obj-csv.md, "Saving
 * OBJ from other programs"): token precision (lfs_obj_num_decimals), the
 * keep test (lfs_obj_num_keeps), OBJ views of every corpus BioWare mesh
 * re-printed as Blender's exporter prints them (6 decimals, normals with 4,
 * normals and uvs deduplicated so corners have separate v/vt/vn indices)
 * applying as no-ops, and model.obj's refusals.
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
#include "views/obj.h"
#include "views/viewset.h"
#include "corpus.h"

static void test_decimals(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int d;
	} cases[] = {
		{ "0.125", 3 },	   { "-0.000000", 6 },	{ "1.5e-7", 8 },	{ "2.50", 2 },
		{ "100", LFS_OBJ_NUM_EXACT }, { "-0", LFS_OBJ_NUM_EXACT }, { "1.5e3", LFS_OBJ_NUM_EXACT },
		{ "nan", LFS_OBJ_NUM_EXACT }, { "nan:7fc00000", LFS_OBJ_NUM_EXACT }, { "1e-07", 7 },
		{ ".5", 1 },	   { "5.", 0 },		{ "0x1p3", LFS_OBJ_NUM_EXACT },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(lfs_obj_num_decimals(cases[i].s, strlen(cases[i].s)), cases[i].d);
}

static void test_keeps(void **state)
{
	(void)state;
	/* Blender prints -0.0846227 as -0.084623: half a unit of 1e-6 */
	lfs_obj_num n = { -0.084623, 6 };
	assert_true(lfs_obj_num_keeps(&n, -0.0846227f, 0.2));
	assert_false(lfs_obj_num_keeps(&n, -0.0846237f, 0.2));
	/* its float axis conversion moves -4.17 next to 6.6 to -4.170001 */
	lfs_obj_num m = { -4.170001, 6 };
	assert_true(lfs_obj_num_keeps(&m, -4.17f, 6.6));
	assert_false(lfs_obj_num_keeps(&m, -4.17f, 0.0));
	/* an integer is exact: "0" sets 0 (and keeps a stored -0) */
	lfs_obj_num z = { 0.0, LFS_OBJ_NUM_EXACT };
	assert_true(lfs_obj_num_keeps(&z, -0.0f, 1.0));
	assert_false(lfs_obj_num_keeps(&z, 0.3f, 1.0));
	lfs_obj_num z1 = { 0.0, 1 };
	assert_true(lfs_obj_num_keeps(&z1, 0.03f, 0.0));
	assert_false(lfs_obj_num_keeps(&z1, 0.06f, 0.0));
}

/* The reader keeps each number's value and precision, in step with v/vt/vn. */
static void test_reader_nums(void **state)
{
	(void)state;
	const char *t = "v 1 2.5 -0.000001\nvt 0.5 0.25\nvn 0 0 1.0000\nv 3 4 5e-1\nf 1/1/1 2/1/1 1/1/1\n";
	lfs_obj_rules r = { .flags = LFS_OBJ_NUMS };
	lfs_obj o;
	lfs_error err;
	assert_int_equal(lfs_obj_read("t.obj", t, strlen(t), &r, &o, &err), LFS_OK);
	assert_int_equal(o.nv, 2);
	assert_non_null(o.v_num);
	assert_int_equal(o.v_num[0].decimals, LFS_OBJ_NUM_EXACT);
	assert_int_equal(o.v_num[1].decimals, 1);
	assert_int_equal(o.v_num[2].decimals, 6);
	assert_true(o.v_num[2].value == -0.000001);
	assert_int_equal(o.v_num[5].decimals, 1);
	assert_int_equal(o.vt_num[1].decimals, 2);
	assert_int_equal(o.vn_num[2].decimals, 4);
	lfs_obj_free(&o);
	/* without the flag: no arrays */
	assert_int_equal(lfs_obj_read("t.obj", t, strlen(t), NULL, &o, &err), LFS_OK);
	assert_null(o.v_num);
	lfs_obj_free(&o);
}

/* Index of (x, len) in list @p l of @p n entries of @p dim floats, appended when new. */
static size_t dedup(double *l, size_t *n, const double *x, unsigned dim)
{
	for (size_t i = 0; i < *n; i++)
		if (!memcmp(l + dim * i, x, dim * sizeof(double)))
			return i;
	memcpy(l + dim * *n, x, dim * sizeof(double));
	return (*n)++;
}

/*
 * @p text (an OBJ view) as Blender 3.4's exporter writes it: positions and
 * uvs with "%.6f", normals normalised with "%.4f", uvs and normals
 * deduplicated (a corner's indices then differ), a Blender header and `s 0`.
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
			mt[nt++] = dedup(ut, &nut, a, 2);
		} else if (!strncmp(line, "vn ", 3) && sscanf(line + 3, "%lf %lf %lf", &a[0], &a[1], &a[2]) == 3) {
			double l = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
			char b[96];
			snprintf(b, sizeof(b), "%.4f %.4f %.4f", l > 0 ? a[0] / l : 0, l > 0 ? a[1] / l : 0,
				 l > 0 ? a[2] / l : 1);
			sscanf(b, "%lf %lf %lf", &a[0], &a[1], &a[2]);
			mn[nn++] = dedup(un, &nun, a, 3);
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

/* Every OBJ view of every corpus binary with meshes, Blender-printed: the
 * save is a no-op (the original bytes). */
static void test_blender_printed_noop(void **state)
{
	(void)state;
	size_t nlist = 0;
	char **list = lfs_corpus_list("nwn", "binary.txt", &nlist);
	size_t models = 0, views = 0;
	for (size_t i = 0; list[i]; i++) {
		size_t n;
		uint8_t *data = lfs_read_file(list[i], &n);
		assert_non_null(data);
		lfs_viewset vs;
		lfs_error err;
		if (lfs_views_build(lfs_base_name(list[i]), data, n, NULL, &vs, &err) != LFS_OK) {
			free(data);
			continue;
		}
		bool any = false;
		for (size_t k = 0; k < vs.n_views; k++) {
			const lfs_view *v = &vs.views[k];
			if (strncmp(v->path, "meshes/", 7) && strcmp(v->path, "model.obj"))
				continue;
			if (!strncmp(v->path, "meshes/", 7))
				any = true;
			char *txt = malloc(v->size + 1);
			assert_non_null(txt);
			memcpy(txt, v->data, v->size);
			txt[v->size] = 0;
			lfs_sb b = { 0 };
			blenderize(txt, &b);
			free(txt);
			uint8_t *out = NULL;
			size_t on = 0;
			lfs_err r = lfs_view_apply(vs.format, data, n, v, b.data, b.len, NULL, &out, &on, &err);
			if (r)
				fprintf(stderr, "%s %s: %s\n", list[i], v->path, err.msg);
			assert_int_equal(r, LFS_OK);
			if (on != n || memcmp(out, data, n)) {
				fprintf(stderr, "%s %s: not a no-op\n", list[i], v->path);
				if (getenv("LFS_WELD_DUMP")) {
					FILE *df = fopen(getenv("LFS_WELD_DUMP"), "w");
					if (df) {
						fwrite(b.data, 1, b.len, df);
						fclose(df);
					}
				}
			}
			assert_int_equal(on, n);
			assert_memory_equal(out, data, n);
			free(out);
			lfs_sb_free(&b);
			views++;
		}
		models += any;
		lfs_viewset_free(&vs);
		free(data);
	}
	fprintf(stderr, "Blender-printed OBJ views applied as no-ops: %zu views of %zu models\n", views,
		models);
	assert_true(models >= 10);
	lfs_free_list(list);
}

/* model.obj refuses what cannot map back, at file:line:col. */
static void test_model_obj_refusals(void **state)
{
	(void)state;
	char path[1024];
	lfs_path(path, sizeof(path), "%s/nwn/tree/rollnw/tests/test_data/renderer/nwn_dump_user/"
				     "development/mdl/ttd01_a04_03.mdl", lfs_corpus_dir_or_skip());
	size_t n;
	uint8_t *data = lfs_read_file(path, &n);
	if (!data)
		skip();
	lfs_viewset vs;
	lfs_error err;
	assert_int_equal(lfs_views_build("ttd01_a04_03.mdl", data, n, NULL, &vs, &err), LFS_OK);
	const lfs_view *v = lfs_viewset_find(&vs, "model.obj");
	assert_non_null(v);
	assert_true(v->writable);
	char *t = malloc(v->size + 64);
	assert_non_null(t);
	uint8_t *out = NULL;
	size_t on;
	/* the view itself: no-op */
	assert_int_equal(lfs_view_apply(vs.format, data, n, v, (const char *)v->data, v->size, NULL, &out, &on, &err),
			 LFS_OK);
	assert_memory_equal(out, data, n);
	free(out);
	out = NULL;
	/* an unknown object name */
	memcpy(t, v->data, v->size);
	t[v->size] = 0;
	char *o = strstr(t, "\no rockSH07\n");
	assert_non_null(o);
	memcpy(o + 3, "rockXX07", 8);
	assert_int_equal(lfs_view_apply(vs.format, data, n, v, t, v->size, NULL, &out, &on, &err), LFS_ERR_PARSE);
	assert_non_null(strstr(err.msg, ": error: unknown object 'rockXX07'"));
	assert_non_null(strstr(err.msg, "model.obj:"));
	/* a face removed */
	memcpy(t, v->data, v->size);
	t[v->size] = 0;
	char *f = strstr(t, "\nf ");
	assert_non_null(f);
	char *fe = strchr(f + 1, '\n');
	memmove(f, fe, strlen(fe) + 1);
	assert_int_not_equal(lfs_view_apply(vs.format, data, n, v, t, strlen(t), NULL, &out, &on, &err), LFS_OK);
	assert_non_null(strstr(err.msg, "faces"));
	/* every object removed */
	assert_int_equal(lfs_view_apply(vs.format, data, n, v, "# empty\n", 8, NULL, &out, &on, &err),
			 LFS_ERR_PARSE);
	assert_non_null(strstr(err.msg, "is missing"));
	assert_null(out);
	free(t);
	lfs_viewset_free(&vs);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decimals),
		cmocka_unit_test(test_keeps),
		cmocka_unit_test(test_reader_nums),
		cmocka_unit_test(test_blender_printed_noop),
		cmocka_unit_test(test_model_obj_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
