/**
 * @file test_nwn_obj_weld.c
 * The printed-precision rule of OBJ saves (docs/formats/obj-csv.md, "Saving
 * OBJ from other programs"): token precision (lfs_obj_num_decimals), the
 * keep test (lfs_obj_num_keeps), OBJ views of every corpus BioWare mesh
 * re-printed as Blender's exporter prints them (6 decimals, normals with 4,
 * normals and uvs deduplicated so corners have separate v/vt/vn indices)
 * applying as no-ops, the same views with one face deleted as Blender
 * deletes it (a structural save: welded to the stored vertices, the binary
 * of the same deletion in model.mdl), and model.obj's refusals.
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
#include "law/law.h"
#include "text/obj.h"
#include "registry/viewset.h"
#include "blenderprint.h"
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
	lfs_obj_num n = { -0.084623, 6, 6 };
	assert_true(lfs_obj_num_keeps(&n, -0.0846227f, 0.2));
	assert_false(lfs_obj_num_keeps(&n, -0.0846237f, 0.2));
	/* its float axis conversion moves -4.17 next to 6.6 to -4.170001 */
	lfs_obj_num m = { -4.170001, 6, 6 };
	assert_true(lfs_obj_num_keeps(&m, -4.17f, 6.6));
	assert_false(lfs_obj_num_keeps(&m, -4.17f, 0.0));
	/* an integer is exact: "0" sets 0 (and keeps a stored -0) */
	lfs_obj_num z = { 0.0, LFS_OBJ_NUM_EXACT, 0 };
	assert_true(lfs_obj_num_keeps(&z, -0.0f, 1.0));
	assert_false(lfs_obj_num_keeps(&z, 0.3f, 1.0));
	lfs_obj_num z1 = { 0.0, 1, 1 };
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

/* Every OBJ view of every corpus binary with meshes, Blender-printed: the
 * save is a no-op (the original bytes). */
static void test_blender_printed_noop(void **state)
{
	(void)state;
	size_t nlist = 0;
	char **list = lfs_corpus_list("nwn", "binary.txt", &nlist);
	lfs_test_slice(list, &nlist); /* the fast tier: a slice (docs/testing.md) */
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
			lfs_test_blenderize(txt, false, 1, &b);
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
	assert_true(models >= lfs_test_slice_min(10));
	lfs_free_list(list);
}

/* The values of corner @p k of OBJ @p o as bits: position, uv (0 when
 * absent), normal (0 when absent). */
static void corner_bits(const lfs_obj *o, const lfs_obj_corner *k, uint32_t out[8])
{
	memset(out, 0, 8 * sizeof(uint32_t));
	memcpy(out, o->v[k->v], 12);
	if (k->t >= 0)
		memcpy(out + 3, o->vt[k->t], 8);
	if (k->n >= 0)
		memcpy(out + 5, o->vn[k->n], 12);
}

/* Does @p x (8 words) occur among the @p n corner value tuples @p l? */
static bool bits_in(const uint32_t *l, size_t n, const uint32_t *x)
{
	for (size_t i = 0; i < n; i++)
		if (!memcmp(l + 8 * i, x, 8 * sizeof(uint32_t)))
			return true;
	return false;
}

/* Remove the @p k-th (0-based) line starting with "f " from @p t (in place). */
static bool drop_face_line(char *t, size_t k)
{
	char *p = t;
	for (;;) {
		if (!strncmp(p, "f ", 2) && k-- == 0) {
			char *e = strchr(p, '\n');
			memmove(p, e ? e + 1 : p + strlen(p), strlen(e ? e + 1 : p + strlen(p)) + 1);
			return true;
		}
		char *e = strchr(p, '\n');
		if (!e)
			return false;
		p = e + 1;
	}
}

/* With LFS_WELD_DUMP_DIR=DIR: write @p n bytes of @p d to DIR/<what> (to look
 * at a failing case with legacyfs-convert). */
static void dump(const char *what, const char *d, size_t n)
{
	const char *dir = getenv("LFS_WELD_DUMP_DIR");
	char path[1024];
	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, what);
	FILE *f = fopen(path, "w");
	if (f) {
		fwrite(d, 1, n, f);
		fclose(f);
	}
}

/* Is sorted list @p l (@p n entries) holding @p x? How many are below it: @p *below. */
static bool in_sorted(const size_t *l, size_t n, size_t x, size_t *below)
{
	size_t b = 0;
	while (b < n && l[b] < x)
		b++;
	if (below)
		*below = b;
	return b < n && l[b] == x;
}

/*
 * @p mdl (a model.mdl view) with face @p del of the geometry node named in
 * OBJ view text @p obj's header ("# legacyfs: <type> node <name> of model")
 * removed, and the rows of vertices @p gone (sorted, @p ngone) in every
 * per-vertex list of the node (verts, tverts*, normals, colors, weights,
 * constraints), face indices renumbered; into @p out. False when the node
 * is not found once.
 */
static bool mdl_drop_face(const char *mdl, const char *obj, size_t del, const size_t *gone, size_t ngone,
			  lfs_sb *out)
{
	char name[256];
	if (sscanf(obj, "# legacyfs: %*s node %255s of model", name) != 1)
		return false;
	const char *anim = strstr(mdl, "\nnewanim ");
	const char *end = anim ? anim : mdl + strlen(mdl), *hit = NULL;
	for (const char *p = mdl; (p = strstr(p, "\nnode ")) && p < end; p++) {
		const char *nm = strchr(p + 6, ' ');
		const char *e = nm ? strchr(nm + 1, '\n') : NULL;
		if (!e || (size_t)(e - nm - 1) != strlen(name) || strncmp(nm + 1, name, strlen(name)))
			continue;
		if (hit)
			return false;
		hit = p;
	}
	const char *ne = hit ? strstr(hit, "\nendnode") : NULL;
	const char *vl = hit ? strstr(hit, "\n  verts ") : NULL;
	if (!ne || !vl || vl > ne)
		return false;
	unsigned long nv = strtoul(vl + 9, NULL, 10);
	const char *tl = strstr(hit, "\n  tverts ");
	bool has_tv = tl && tl < ne;
	/* line by line from the node on */
	lfs_sb_put(out, mdl, (size_t)(hit + 1 - mdl));
	const char *p = hit + 1;
	while (p < ne + 1) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char kw[32];
		unsigned long cnt = 0;
		int got = sscanf(p, "  %31s %lu", kw, &cnt);
		p += len + (e ? 1 : 0);
		bool per_vertex = got == 2 && cnt == nv &&
				  (!strcmp(kw, "verts") || !strncmp(kw, "tverts", 6) || !strcmp(kw, "normals") ||
				   !strcmp(kw, "colors") || !strcmp(kw, "weights") || !strcmp(kw, "constraints"));
		bool faces = got == 2 && !strcmp(kw, "faces");
		if (!per_vertex && !faces) {
			lfs_sb_put(out, p - len - (e ? 1 : 0), len + 1);
			continue;
		}
		if (faces && del >= cnt)
			return false;
		lfs_sb_printf(out, "  %s %lu\n", kw, cnt - (faces ? 1 : ngone));
		for (unsigned long r = 0; r < cnt; r++) {
			const char *re = strchr(p, '\n');
			if (!re)
				return false;
			if (per_vertex && !in_sorted(gone, ngone, r, NULL))
				lfs_sb_put(out, p, (size_t)(re - p) + 1);
			if (faces && r != del) {
				unsigned long x[8];
				if (sscanf(p, "%lu %lu %lu %lu %lu %lu %lu %lu", &x[0], &x[1], &x[2], &x[3], &x[4], &x[5],
					   &x[6], &x[7]) != 8)
					return false;
				for (int c = 0; c < 7; c++) {
					size_t below = 0;
					if (c < 3 || (c > 3 && has_tv)) {
						in_sorted(gone, ngone, x[c], &below);
						x[c] -= below;
					}
				}
				lfs_sb_printf(out, "    %lu %lu %lu %lu %lu %lu %lu %lu\n", x[0], x[1], x[2], x[3], x[4],
					      x[5], x[6], x[7]);
			}
			p = re + 1;
		}
	}
	lfs_sb_puts(out, ne + 1);
	return true;
}

/* @p t (Blender-printed OBJ) without the v lines of vertices @p gone
 * (0-based, sorted), corners renumbered, as Blender's Delete > Faces leaves
 * it; into @p out. */
static void obj_drop_verts(const char *t, const size_t *gone, size_t ngone, lfs_sb *out)
{
	size_t vi = 0;
	while (*t) {
		const char *e = strchr(t, '\n');
		size_t len = e ? (size_t)(e - t) : strlen(t);
		char line[4096];
		assert_true(len < sizeof(line));
		memcpy(line, t, len);
		line[len] = 0;
		t += len + (e ? 1 : 0);
		if (!strncmp(line, "v ", 2)) {
			if (!in_sorted(gone, ngone, vi++, NULL))
				lfs_sb_printf(out, "%s\n", line);
		} else if (!strncmp(line, "f ", 2)) {
			lfs_sb_putc(out, 'f');
			char *save = NULL;
			for (char *tok = strtok_r(line + 2, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
				char *rest = NULL;
				long v = strtol(tok, &rest, 10);
				size_t below = 0;
				in_sorted(gone, ngone, (size_t)(v - 1), &below);
				lfs_sb_printf(out, " %ld%s", v - (long)below, rest);
			}
			lfs_sb_putc(out, '\n');
		} else {
			lfs_sb_printf(out, "%s\n", line);
		}
	}
}

/*
 * Every corpus mesh OBJ view, Blender-printed, with its middle face
 * deleted as Blender's Delete > Faces does (a vertex only that face used
 * goes too, the later ones are renumbered): the save (a structural edit, compiled) lands; the new mesh's
 * OBJ view has one face less and every kept face's corners show the bits
 * they showed before (position, uv, normal: the welded stored vertices, not
 * the 6- and 4-decimal text); every vertex of the new mesh has the values
 * of an old vertex (nothing rounded, nothing new); and the binary is the
 * one that the same deletion in model.mdl gives (the face's line and the
 * rows of those vertices): same compiled vertex list, planes, adjacency,
 * bounds.
 */
static void test_blender_printed_delete_face(void **state)
{
	(void)state;
	size_t nlist = 0;
	char **list = lfs_corpus_list("nwn", "binary.txt", &nlist);
	lfs_test_slice(list, &nlist); /* the fast tier: a slice (docs/testing.md) */
	size_t views = 0, refused = 0, same_nv = 0, fewer_nv = 0, more_nv = 0, as_mdl = 0, loose = 0;
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
		for (size_t k = 0; k < vs.n_views; k++) {
			const lfs_view *v = &vs.views[k];
			if (strncmp(v->path, "meshes/", 7) || !v->writable)
				continue;
			lfs_obj a;
			assert_int_equal(lfs_obj_read(v->path, (const char *)v->data, v->size, NULL, &a, &err), LFS_OK);
			if (a.nf < 2) {
				lfs_obj_free(&a);
				continue;
			}
			size_t del = a.nf / 2;
			char *txt = malloc(v->size + 1);
			assert_non_null(txt);
			memcpy(txt, v->data, v->size);
			txt[v->size] = 0;
			lfs_sb b = { 0 };
			lfs_test_blenderize(txt, false, 1, &b);
			free(txt);
			assert_true(drop_face_line(b.data, del));
			/* the vertices only that face used, sorted */
			size_t gone[16], ngone = 0;
			for (uint32_t x = 0; x < a.f[del].n; x++) {
				size_t gv = (size_t)a.c[a.f[del].first + x].v, uses = 0;
				for (size_t y = 0; y < a.nc; y++)
					uses += (size_t)a.c[y].v == gv;
				if (uses == 1 && !in_sorted(gone, ngone, gv, NULL)) {
					size_t at = ngone++;
					while (at && gone[at - 1] > gv) {
						gone[at] = gone[at - 1];
						at--;
					}
					gone[at] = gv;
				}
			}
			lfs_sb bd = { 0 };
			obj_drop_verts(b.data, gone, ngone, &bd);
			lfs_sb_free(&b);
			loose += ngone > 0;
			uint8_t *out = NULL;
			size_t on = 0;
			lfs_err r = lfs_view_apply(vs.format, data, n, v, bd.data, bd.len, NULL, &out, &on, &err);
			char *edited = bd.data;
			if (r == LFS_ERR_UNSUPPORTED) {
				free(edited);
				/* animmesh vertex sets: documented refusal */
				assert_non_null(strstr(err.msg, "animmesh"));
				refused++;
				lfs_obj_free(&a);
				continue;
			}
			if (r)
				fprintf(stderr, "%s %s: %s\n", list[i], v->path, err.msg);
			assert_int_equal(r, LFS_OK);
			lfs_viewset vs2;
			assert_int_equal(lfs_views_build(lfs_base_name(list[i]), out, on, NULL, &vs2, &err), LFS_OK);
			const lfs_view *v2 = lfs_viewset_find(&vs2, v->path);
			assert_non_null(v2);
			lfs_obj c;
			assert_int_equal(lfs_obj_read(v->path, (const char *)v2->data, v2->size, NULL, &c, &err), LFS_OK);
			assert_int_equal(c.nf, a.nf - 1);
			/* the old corner tuples, for the vertex check */
			uint32_t *old = malloc((a.nc + 1) * 8 * sizeof(uint32_t));
			assert_non_null(old);
			for (size_t x = 0; x < a.nc; x++)
				corner_bits(&a, &a.c[x], old + 8 * x);
			for (size_t f = 0; f < c.nf; f++) {
				const lfs_obj_face *fa = &a.f[f < del ? f : f + 1], *fc = &c.f[f];
				assert_int_equal(fa->n, fc->n);
				for (uint32_t x = 0; x < fc->n; x++) {
					uint32_t wa[8], wc[8];
					corner_bits(&a, &a.c[fa->first + x], wa);
					corner_bits(&c, &c.c[fc->first + x], wc);
					if (memcmp(wa, wc, sizeof(wa)))
						fprintf(stderr, "%s %s: face %zu corner %u changed\n", list[i], v->path, f, x);
					assert_memory_equal(wa, wc, sizeof(wa));
				}
			}
			/* every new vertex is an old vertex (as its corners show it) */
			for (size_t x = 0; x < c.nc; x++) {
				uint32_t wc[8];
				corner_bits(&c, &c.c[x], wc);
				assert_true(bits_in(old, a.nc, wc));
			}
			/* vertex count: the stored vertices the kept faces use (the
			 * compiler drops unused ones), plus the compiler's splits of a
			 * vertex whose faces no longer share an edge (copies) */
			uint8_t *used = calloc(a.nv + 1, 1);
			assert_non_null(used);
			size_t nused = 0;
			for (size_t f = 0; f < a.nf; f++)
				for (uint32_t x = 0; f != del && x < a.f[f].n; x++)
					if (!used[a.c[a.f[f].first + x].v]++)
						nused++;
			free(used);
			/* the same deletion in model.mdl: the same binary */
			const lfs_view *mv = lfs_viewset_find(&vs, "model.mdl");
			lfs_sb md = { 0 };
			if (mv && mdl_drop_face((const char *)mv->data, (const char *)v->data, del, gone, ngone, &md)) {
				uint8_t *o2 = NULL;
				size_t n2 = 0;
				/* the format's own apply: the checked save of this text
				 * is refused by the round-trip law where the compiler
				 * re-splits the mesh's vertices (verts N reads back
				 * otherwise; docs/editing.md), the compiled result is
				 * the oracle all the same */
				lfs_err r2 = vs.format->apply(data, n, mv, md.data, md.len, NULL, &o2, &n2, &err);
				if (r2)
					fprintf(stderr, "%s model.mdl (deletion in %s): %s\n", list[i], v->path, err.msg);
				assert_int_equal(r2, LFS_OK);
				if (n2 != on || memcmp(o2, out, on)) {
					fprintf(stderr, "%s %s: not the model.mdl deletion\n", list[i], v->path);
					dump("obj", edited, strlen(edited));
					dump("mdl", md.data, md.len);
				}
				assert_int_equal(n2, on);
				assert_memory_equal(o2, out, on);
				free(o2);
				as_mdl++;
			}
			lfs_sb_free(&md);
			free(edited);
			same_nv += c.nv == nused;
			fewer_nv += c.nv < nused;
			more_nv += c.nv > nused;
			free(old);
			lfs_obj_free(&c);
			lfs_viewset_free(&vs2);
			free(out);
			lfs_obj_free(&a);
			views++;
		}
		lfs_viewset_free(&vs);
		free(data);
	}
	fprintf(stderr,
		"Blender-printed OBJ views with one face deleted: %zu saved (%zu also lost a vertex); vertex count = stored vertices "
		"the kept faces use: %zu, fewer %zu, more %zu (the compiler's vertex split); %zu the same "
		"binary as the deletion in model.mdl; %zu refused (animmesh)\n",
		views, loose, same_nv, fewer_nv, more_nv, as_mdl, refused);
	assert_true(views >= lfs_test_slice_min(100));
	assert_true(as_mdl >= views / 2);
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
		LFS_SKIP(path);
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

/* The round-trip law reads OBJ normals by the apply's rules
 * (lfs_law_compare_from(), docs/editing.md "The round-trip law"): within
 * 0.01 rad or reversed, a zero normal kept, not on faces whose positions
 * moved, the original normal where corners disagree; any other normal that
 * does not read back is refused. */
static lfs_err law_obj(const char *saved, const char *reread, const char *orig, lfs_error *err)
{
	return lfs_law_compare_from(NULL, "meshes/m.obj", LFS_VIEW_MESH_OBJ, saved, strlen(saved), reread,
				    strlen(reread), orig, strlen(orig), err);
}

static void test_law_obj_normals(void **state)
{
	(void)state;
	lfs_error err;
#define QUAD_V "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\n"
#define QUAD_F "f 1//1 2//2 3//3\nf 2//2 4//4 3//3\n"
	const char *orig = QUAD_V "vn 0 0 1\nvn 0 0 1\nvn 0 0 1\nvn 0 0 1\n" QUAD_F;
	/* 0.005 rad off, reversed: the stored normal */
	assert_int_equal(law_obj(QUAD_V "vn 0.005 0 1\nvn 0 0 1\nvn 0 0 1\nvn 0 0 1\n" QUAD_F, orig, orig, &err), LFS_OK);
	assert_int_equal(law_obj(QUAD_V "vn 0 0 -1\nvn 0 0 1\nvn 0 0 1\nvn 0 0 1\n" QUAD_F, orig, orig, &err), LFS_OK);
	/* 30 degrees on every corner of vertex 4: an edit that must read back */
	const char *tilt = QUAD_V "vn 0 0 1\nvn 0 0 1\nvn 0 0 1\nvn 0.5 0 0.8660254\n" QUAD_F;
	assert_int_equal(law_obj(tilt, orig, orig, &err), LFS_ERR_PARSE);
	assert_non_null(strstr(err.msg, "its normal"));
	assert_int_equal(law_obj(tilt, tilt, orig, &err), LFS_OK);
	/* the same tilt within 0.01 rad of the read-back one */
	assert_int_equal(law_obj(tilt, QUAD_V "vn 0 0 1\nvn 0 0 1\nvn 0 0 1\nvn 0.504 0 0.8637\n" QUAD_F, orig, &err),
			 LFS_OK);
	/* a stored zero normal is kept */
	const char *zero = QUAD_V "vn 0 0 1\nvn 0 0 1\nvn 0 0 1\nvn 0 0 0\n" QUAD_F;
	assert_int_equal(law_obj(tilt, zero, zero, &err), LFS_OK);
	/* the corners of vertex 2 disagree: the original normal stays, no other */
	const char *mixed = QUAD_V "vn 0 0 1\nvn 0 0 1\nvn 0 0 1\nvn 0 0 1\nvn 0.5 0 0.8660254\n"
				   "f 1//1 2//5 3//3\nf 2//2 4//4 3//3\n";
	assert_int_equal(law_obj(mixed, orig, orig, &err), LFS_OK);
	const char *other = QUAD_V "vn 0 0 1\nvn 0 1 0\nvn 0 0 1\nvn 0 0 1\n" QUAD_F;
	assert_int_equal(law_obj(mixed, other, orig, &err), LFS_ERR_PARSE);
	assert_non_null(strstr(err.msg, "its normal"));
	/* vertex 1 moved: the normals of its face are not read (editors
	 * re-derive them); the other face's still are */
	const char *moved_orig = "v 0.5 -0.5 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nvn 0 0 1\nvn 0 0 1\nvn 0 0 1\nvn 0 0 1\n" QUAD_F;
	assert_int_equal(law_obj("v 0.5 -0.5 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\n"
				 "vn 0.5 0 0.8660254\nvn 0 0 1\nvn 0 0 1\nvn 0 0 1\n" QUAD_F,
				 moved_orig, orig, &err),
			 LFS_OK);
	assert_int_equal(law_obj("v 0.5 -0.5 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\n"
				 "vn 0 0 1\nvn 0 0 1\nvn 0 0 1\nvn 0.5 0 0.8660254\n" QUAD_F,
				 moved_orig, orig, &err),
			 LFS_ERR_PARSE);
	/* without the original (a no-op save), the re-read view is the original */
	assert_int_equal(lfs_law_compare(NULL, "meshes/m.obj", LFS_VIEW_MESH_OBJ, tilt, strlen(tilt), orig,
					 strlen(orig), &err),
			 LFS_ERR_PARSE);
#undef QUAD_V
#undef QUAD_F
}

/* A text in the views' own printing is exact; another keeps its writer's
 * precision per kind. */
static void test_reader_writer_precision(void **state)
{
	(void)state;
	lfs_obj_rules r = { .flags = LFS_OBJ_NUMS };
	lfs_obj o;
	lfs_error err;
	const char *own = "v 0.0625 2.5 6.6\nv 1.2207e-06 0 -0.13125\nvn 0 0 1\n";
	assert_int_equal(lfs_obj_read("t.obj", own, strlen(own), &r, &o, &err), LFS_OK);
	assert_int_equal(lfs_obj_num_prec(&o.v_num[2]), LFS_OBJ_NUM_EXACT);
	assert_false(lfs_obj_num_keeps(&o.v_num[2], 6.56875f, 6.6));
	assert_true(lfs_obj_num_keeps(&o.v_num[2], 6.6f, 6.6));
	lfs_obj_free(&o);
	const char *blender = "v 0.062500 2.500000 6.600000\nv 0.000001 0.000000 -0.131250\nvn 0.0000 0.0000 1.0000\n";
	assert_int_equal(lfs_obj_read("t.obj", blender, strlen(blender), &r, &o, &err), LFS_OK);
	assert_int_equal(lfs_obj_num_prec(&o.v_num[2]), 6);
	assert_int_equal(lfs_obj_num_prec(&o.vn_num[2]), 4);
	assert_true(lfs_obj_num_keeps(&o.v_num[2], 6.6000004f, 6.6));
	lfs_obj_free(&o);
	/* one hand-typed "0.50": not the views' printing; "6.6" then states
	 * 6.60 (the most decimals of its kind), not 6.6 +- 0.05 */
	const char *mixed = "v 0.50 2.5 6.6\n";
	assert_int_equal(lfs_obj_read("t.obj", mixed, strlen(mixed), &r, &o, &err), LFS_OK);
	assert_int_equal(lfs_obj_num_prec(&o.v_num[2]), 2);
	assert_false(lfs_obj_num_keeps(&o.v_num[2], 6.56875f, 6.6));
	assert_true(lfs_obj_num_keeps(&o.v_num[2], 6.6049f, 6.6));
	lfs_obj_free(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decimals),
		cmocka_unit_test(test_keeps),
		cmocka_unit_test(test_reader_nums),
		cmocka_unit_test(test_reader_writer_precision),
		cmocka_unit_test(test_law_obj_normals),
		cmocka_unit_test(test_blender_printed_noop),
		cmocka_unit_test(test_blender_printed_delete_face),
		cmocka_unit_test(test_model_obj_refusals),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
