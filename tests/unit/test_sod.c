/**
 * @file test_sod.c
 * SOD codec and views (src/formats/sod/sod.c, src/formats/sod/sod_*.c):
 *  - every corpus file: bytes -> model -> bytes, bytes -> model.txt -> bytes,
 *    every meshes/<node>.obj and anims/<node>.csv applied unedited -> same bytes;
 *  - the disputed files are rejected with offset, structure and the layout
 *    they do parse as;
 *  - value edits through model.txt, an OBJ and a CSV change exactly the
 *    bytes predicted by editing the decoded model;
 *  - generated files for the versions/flags no corpus file covers (1.4,
 *    1.5, StarTrekDB magic, legacy entries, 1.93 bump textures, cull words,
 *    trailing bytes, NaN payloads), checked against an independent byte
 *    builder written here from docs/formats/sod.md;
 *  - LOD selection and node transforms in model.obj; a name that needs
 *    quoting in model.txt;
 *  - hostile input: truncation at 64 offsets and 1000 byte flips of every
 *    corpus file (fixed seed; LFS_TEST_SEED overrides), mutated model.txt;
 *  - parser errors with exact file:line:col.
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

#include "conform.h"
#include "corpus.h"
#include "formats/sod/sod.h"
#include "formats/sod/sod_text.h"
#include "formats/sod/sod_views.h"
#include "registry/vlist.h"

/* a sod_str field outside the file's version is left NULL/0 */
#define STR(x) ((x).s ? (x).s : "")

static char **g_files;    /* accepted corpus files */
static size_t g_nfiles;
static char **g_disputed; /* sod/disputed/ */
static size_t g_ndisputed;
static lfs_rng g_rng;

LFS_CODEC(k_sod, "sod", sod_model, sod_decode, sod_encode, sod_model_free);

static int setup(void **state)
{
	(void)state;
	const char *c = lfs_corpus_dir_or_skip();
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/sod", c);
	g_files = lfs_list_dir(dir, ".sod", &g_nfiles);
	snprintf(dir, sizeof(dir), "%s/sod/disputed", c);
	g_disputed = lfs_list_dir(dir, ".sod", &g_ndisputed);
	lfs_rng_seed(&g_rng, "sod", 0x5D0F00D5EEDull);
	printf("%zu corpus files, %zu disputed\n", g_nfiles, g_ndisputed);
	return g_files && g_nfiles && g_disputed ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	lfs_free_list(g_files);
	lfs_free_list(g_disputed);
	return 0;
}

/* decode -> encode must give @p d back */
static void assert_bytes_rt(const uint8_t *d, size_t n, const char *what)
{
	lfs_assert_lossless(&k_sod, d, n, what, false);
}

/* bytes -> model.txt -> model -> bytes, and text -> model -> text fixed point */
static void assert_text_rt(const uint8_t *d, size_t n, const char *what)
{
	sod_model *m = NULL, *m2 = NULL;
	lfs_error err;
	assert_int_equal(sod_decode(d, n, &m, &err), LFS_OK);
	lfs_sb sb = { 0 }, sb2 = { 0 };
	assert_int_equal(sod_text_write(m, &sb, &err), LFS_OK);
	lfs_err r = sod_text_parse("model.txt", sb.data, sb.len, &m2, &err);
	if (r)
		fail_msg("%s: text parse: %s", what, err.msg);
	uint8_t *o;
	size_t on;
	r = sod_encode(m2, &o, &on, &err);
	if (r)
		fail_msg("%s: encode from text: %s", what, err.msg);
	if (on != n || memcmp(o, d, n))
		fail_msg("%s: bytes from text differ (%zu vs %zu bytes)", what, on, n);
	assert_int_equal(sod_text_write(m2, &sb2, &err), LFS_OK);
	assert_int_equal(sb.len, sb2.len);
	assert_memory_equal(sb.data, sb2.data, sb.len);
	free(o);
	lfs_sb_free(&sb);
	lfs_sb_free(&sb2);
	sod_model_free(m);
	sod_model_free(m2);
}

static void build_views(const uint8_t *d, size_t n, lfs_viewset *vs)
{
	lfs_vlist l = { 0 };
	lfs_error err;
	lfs_err r = lfs_format_sod.build_views(d, n, NULL, &l, &err);
	if (r)
		fail_msg("views: %s", err.msg);
	memset(vs, 0, sizeof(*vs));
	lfs_vlist_finish(&l, vs);
}

/* ---- corpus round trips ---------------------------------------------------- */

static void test_corpus_bytes(void **state)
{
	(void)state;
	unsigned seen[200] = { 0 };
	for (size_t i = 0; i < g_nfiles; i++) {
		size_t n;
		uint8_t *d = lfs_read_file_ok(g_files[i], &n);
		assert_true(sod_is_binary(d, n));
		assert_bytes_rt(d, n, lfs_base_name(g_files[i]));
		sod_model *m;
		assert_int_equal(sod_decode(d, n, &m, NULL), LFS_OK);
		seen[m->ver - 100]++;
		/* the version in the file name is the version in the header */
		char vs[16];
		const char *u = strrchr(lfs_base_name(g_files[i]), '_');
		snprintf(vs, sizeof(vs), "%s", u + 1);
		if (!strncmp(vs, "stau", 4)) {
			const char *b = lfs_base_name(g_files[i]);
			const char *e = strstr(b, "_stau");
			const char *s = e - 1;
			while (s > b && *s != '_')
				s--;
			snprintf(vs, sizeof(vs), "%.*s", (int)(e - s - 1), s + 1);
		}
		assert_float_equal(strtod(vs, NULL), m->version, 1e-6);
		sod_model_free(m);
		free(d);
	}
	/* every version the corpus has is read */
	const int corpus_versions[] = { 160, 170, 180, 190, 191, 192, 193 };
	for (size_t k = 0; k < sizeof(corpus_versions) / sizeof(int); k++)
		assert_true(seen[corpus_versions[k] - 100] > 0);
}

static void test_corpus_text(void **state)
{
	(void)state;
	for (size_t i = 0; i < g_nfiles; i++) {
		size_t n;
		uint8_t *d = lfs_read_file(g_files[i], &n);
		assert_text_rt(d, n, lfs_base_name(g_files[i]));
		free(d);
	}
}

/* Every meshes/<node>.obj, anims/<node>.csv and model.txt applied unedited gives the
 * original bytes; model.obj is read-only. */
static void test_corpus_views_apply(void **state)
{
	(void)state;
	size_t n_obj = 0, n_csv = 0;
	for (size_t i = 0; i < g_nfiles; i++) {
		size_t n;
		uint8_t *d = lfs_read_file(g_files[i], &n);
		lfs_viewset vs;
		build_views(d, n, &vs);
		sod_model *m;
		assert_int_equal(sod_decode(d, n, &m, NULL), LFS_OK);
		size_t meshes = 0;
		for (uint16_t k = 0; k < m->n_nodes; k++)
			meshes += m->nodes[k].type == SOD_MESH;
		assert_int_equal(vs.n_views, 3 + meshes + m->n_channels);
		for (size_t v = 0; v < vs.n_views; v++) {
			const lfs_view *w = &vs.views[v];
			uint8_t *o = NULL;
			size_t on;
			lfs_error err;
			lfs_err r = lfs_views_apply("x.sod", d, n, w->path, w->data, w->size, &o, &on, &err);
			if (!strcmp(w->path, "model.obj") || !strcmp(w->path, "model.mtl")) {
				assert_int_equal(r, LFS_ERR_UNSUPPORTED);
				continue;
			}
			if (r)
				fail_msg("%s %s: %s", lfs_base_name(g_files[i]), w->path, err.msg);
			if (on != n || memcmp(o, d, n))
				fail_msg("%s %s: applied view changes the bytes",
					 lfs_base_name(g_files[i]), w->path);
			n_obj += !strncmp(w->path, "meshes/", 7);
			n_csv += !strncmp(w->path, "anims/", 6);
			free(o);
		}
		sod_model_free(m);
		lfs_viewset_free(&vs);
		free(d);
	}
	printf("applied %zu OBJ and %zu CSV views unedited\n", n_obj, n_csv);
	assert_true(n_obj > 100 && n_csv > 100);
}

static void test_disputed_rejected(void **state)
{
	(void)state;
	assert_int_equal(g_ndisputed, 9);
	for (size_t i = 0; i < g_ndisputed; i++) {
		size_t n;
		uint8_t *d = lfs_read_file(g_disputed[i], &n);
		sod_model *m = NULL;
		lfs_error err;
		lfs_err r = sod_decode(d, n, &m, &err);
		assert_int_equal(r, LFS_ERR_CORRUPT);
		assert_null(m);
		assert_true(err.offset >= 14 && err.offset < n);
		assert_non_null(err.structure);
		assert_non_null(strstr(err.msg, "offset 0x"));
		assert_non_null(strstr(err.msg, "disputed layout"));
		const char *b = lfs_base_name(g_disputed[i]);
		if (strstr(b, "_1.4") || strstr(b, "_1.5"))
			assert_non_null(strstr(err.msg, "without the legacy block"));
		else if (strstr(b, "_1.8_stau"))
			assert_non_null(strstr(err.msg, "with a legacy block"));
		else
			assert_non_null(strstr(err.msg, "1.93 mesh prefix"));
		/* the mount shows no views for it */
		lfs_vlist l = { 0 };
		assert_int_equal(lfs_format_sod.build_views(d, n, NULL, &l, &err), LFS_ERR_CORRUPT);
		assert_int_equal(l.n, 0);
		free(d);
	}
}

/* ---- edits ----------------------------------------------------------------- */

static char *replace_line_after(const char *text, size_t tn, const char *marker, const char *newline,
				size_t *outn)
{
	const char *p = strstr(text, marker);
	assert_non_null(p);
	const char *ls = strchr(p, '\n') + 1; /* the line after the marker line */
	const char *le = strchr(ls, '\n');
	size_t head = (size_t)(ls - text), tail = tn - (size_t)(le - text);
	char *o = malloc(head + strlen(newline) + tail + 1);
	memcpy(o, text, head);
	memcpy(o + head, newline, strlen(newline));
	memcpy(o + head + strlen(newline), le, tail);
	*outn = head + strlen(newline) + tail;
	o[*outn] = '\0';
	return o;
}

/* Bytes of @p a and @p b (same length) differ only inside one window of @p w bytes. */
static void assert_diff_window(const uint8_t *a, const uint8_t *b, size_t n, size_t w)
{
	size_t first = SIZE_MAX, last = 0;
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i]) {
			if (first == SIZE_MAX)
				first = i;
			last = i;
		}
	assert_true(first != SIZE_MAX);
	assert_true(last - first < w);
}

static const char *corpus_file(const char *name)
{
	for (size_t i = 0; i < g_nfiles; i++)
		if (!strcmp(lfs_base_name(g_files[i]), name))
			return g_files[i];
	fail_msg("corpus file %s missing", name);
	return NULL;
}

static void test_edits(void **state)
{
	(void)state;
	size_t n;
	uint8_t *d = lfs_read_file(corpus_file("c_a_cow_1.93.sod"), &n);
	sod_model *m;
	assert_int_equal(sod_decode(d, n, &m, NULL), LFS_OK);
	uint16_t mi = 0, ci = 0;
	while (m->nodes[mi].type != SOD_MESH)
		mi++;
	while (m->channels[ci].type != SOD_CHAN_MATRIX)
		ci++;
	lfs_viewset vs;
	build_views(d, n, &vs);

	/* expected: the decoded model with vertex 0 of the first mesh moved,
	 * key 1 value 3 of the first matrix channel changed */
	sod_mesh *me = m->nodes[mi].mesh;
	me->verts[0] = 1.5f;
	me->verts[1] = -2.25f;
	me->verts[2] = 1e-3f;
	uint8_t *want_v;
	size_t wn;
	assert_int_equal(sod_encode(m, &want_v, &wn, NULL), LFS_OK);
	assert_int_equal(wn, n);
	assert_diff_window(d, want_v, n, 12);

	/* through model.txt */
	const lfs_view *t = lfs_viewset_find(&vs, "model.txt");
	char marker[512];
	snprintf(marker, sizeof(marker), "node mesh %s\n", m->nodes[mi].name.s);
	const char *node_at = strstr(t->data, marker);
	assert_non_null(node_at);
	const char *verts_at = strstr(node_at, "  verts ");
	size_t en;
	char *edited = replace_line_after(t->data, t->size, verts_at, "    1.5 -2.25 0.001", &en);
	uint8_t *o;
	size_t on;
	lfs_error err;
	if (lfs_views_apply("x.sod", d, n, "model.txt", edited, en, &o, &on, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(on, n);
	assert_memory_equal(o, want_v, n);
	free(o);
	free(edited);

	/* through meshes/<node>.obj */
	char path[512];
	snprintf(path, sizeof(path), "meshes/%s.obj", m->nodes[mi].name.s);
	const lfs_view *ov = lfs_viewset_find(&vs, path);
	assert_non_null(ov);
	const char *o_at = strstr(ov->data, "\no ");
	edited = replace_line_after(ov->data, ov->size, o_at + 1, "v 1.5 -2.25 0.001", &en);
	if (lfs_views_apply("x.sod", d, n, path, edited, en, &o, &on, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(on, n);
	assert_memory_equal(o, want_v, n);
	free(o);
	free(edited);
	free(want_v);

	/* through anims/<node>.csv: key 1, right_y (value index 1) */
	sod_model_free(m);
	assert_int_equal(sod_decode(d, n, &m, NULL), LFS_OK);
	sod_channel *c = &m->channels[ci];
	assert_true(c->n_keys >= 2);
	float *k1 = c->keys + 12;
	k1[1] = 0.125f;
	uint8_t *want_c;
	assert_int_equal(sod_encode(m, &want_c, &wn, NULL), LFS_OK);
	assert_diff_window(d, want_c, n, 4);
	lfs_sb row = { 0 };
	lfs_sb_printf(&row, "1,%s,", "0.5"); /* time is derived: any number is accepted */
	lfs_sb_floats_bits(&row, k1, 12, ',');
	lfs_sb_putc(&row, '\r');
	/* find the CSV of channel ci: the first channel of that node is "<node>.csv" */
	snprintf(path, sizeof(path), "anims/%s.csv", c->node.s);
	for (uint16_t q = 0; q < ci; q++)
		assert_true(strcmp(m->channels[q].node.s, c->node.s)); /* ci is its node's first channel */
	const lfs_view *cv = lfs_viewset_find(&vs, path);
	assert_non_null(cv);
	const char *row0 = strstr(cv->data, "\n0,");
	edited = replace_line_after(cv->data, cv->size, row0 + 1, row.data, &en);
	if (lfs_views_apply("x.sod", d, n, path, edited, en, &o, &on, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(on, n);
	assert_memory_equal(o, want_c, n);
	free(o);
	free(edited);
	free(want_c);
	lfs_sb_free(&row);

	/* removing the last key row shortens the channel by one key (48 bytes) */
	const char *lastrow = cv->data + cv->size - 2;
	while (lastrow > cv->data && lastrow[-1] != '\n')
		lastrow--;
	if (lfs_views_apply("x.sod", d, n, path, cv->data, (size_t)(lastrow - cv->data), &o, &on, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(on, n - 48);
	sod_model *m3;
	assert_int_equal(sod_decode(o, on, &m3, NULL), LFS_OK);
	assert_int_equal(m3->channels[ci].n_keys, c->n_keys - 1);
	sod_model_free(m3);
	free(o);

	lfs_viewset_free(&vs);
	sod_model_free(m);
	free(d);
}

/* ---- generated files -------------------------------------------------------- */

/* Independent byte builder following docs/formats/sod.md, used to check the
 * codec's layout per version. */
typedef struct bb {
	uint8_t b[8192];
	size_t n;
} bb;

static void b8(bb *b, unsigned v) { b->b[b->n++] = (uint8_t)v; }
static void b16(bb *b, unsigned v) { b8(b, v & 255); b8(b, v >> 8 & 255); }
static void b32(bb *b, uint32_t v) { b16(b, v & 0xFFFF); b16(b, v >> 16); }
static void bf(bb *b, float f) { uint32_t u; memcpy(&u, &f, 4); b32(b, u); }
static void bs(bb *b, const char *s) { b16(b, (unsigned)strlen(s)); memcpy(b->b + b->n, s, strlen(s)); b->n += strlen(s); }
static void bmat(bb *b, float t) { for (int i = 0; i < 12; i++) bf(b, i % 4 == 0 && i < 9 ? 1.0f : (i >= 9 ? t : 0.0f)); }

/* A model with every feature of version @p v (x100): a legacy entry when
 * the version has the block, two materials, a root null, an LOD control
 * with two mesh children (one with a bump texture in 1.93), an emitter, a
 * sprite, a matrix channel and a scale channel, a reference, @p trailing
 * extra bytes. */
static void gen(bb *b, int v, bool startrekdb, size_t trailing)
{
	b->n = 0;
	memcpy(b->b, startrekdb ? "StarTrekDB" : "Storm3D_SW", 10);
	b->n = 10;
	bf(b, (float)v / 100.0f);
	if (v <= 160) { /* legacy block */
		b16(b, 2);
		bs(b, "legacyA"); bs(b, "legacyB"); for (int i = 0; i < 7; i++) b8(b, 0xA0 + i);
		bs(b, ""); bs(b, "x"); for (int i = 0; i < 7; i++) b8(b, i);
	}
	b16(b, 2); /* materials */
	for (int k = 0; k < 2; k++) {
		bs(b, k ? "team_hull" : "glow");
		for (int i = 0; i < 9; i++) bf(b, 0.1f * (float)(i + k));
		bf(b, 8.0f);
		b8(b, (unsigned)k + 1);
		if (v >= 190) b8(b, 1);
	}
	b16(b, 6); /* nodes */
	b16(b, 0); bs(b, "root"); bs(b, ""); bmat(b, 0.0f);
	b16(b, 11); bs(b, "geometry"); bs(b, "root"); bmat(b, 0.0f);
	for (int k = 0; k < 2; k++) { /* k = 0: low detail (1 face), 1: high (2 faces) */
		b16(b, 1); bs(b, k ? "hull_hi" : "hull_lo"); bs(b, "geometry"); bmat(b, k ? 10.0f : 0.0f);
		if (v >= 170) bs(b, "alphathreshold");
		bool bump = v == 193 && k == 1;
		if (v == 193) { b32(b, bump ? 6 : 4); b32(b, bump ? 2 : 1); }
		bs(b, "hull_tex");
		if (v == 193) {
			b32(b, 0);
			if (bump) { bs(b, "hull_bump"); b32(b, 512); }
		}
		if (v == 192 || v == 193) bs(b, k ? "hull_borg" : "");
		if (v >= 191) b16(b, 0);
		b16(b, 3); b16(b, 3); b16(b, 1);
		for (int i = 0; i < 9; i++) bf(b, (float)i);
		for (int i = 0; i < 6; i++) bf(b, 0.25f * (float)i);
		b16(b, (unsigned)k + 1); bs(b, "team_hull");
		for (int f = 0; f <= k; f++) for (int c = 0; c < 3; c++) { b16(b, (unsigned)c); b16(b, (unsigned)(2 - c)); }
		b8(b, 1);
		if (k) { b16(b, 2); b16(b, 0xBEEF); b16(b, 7); } else b16(b, 0);
	}
	b16(b, 12); bs(b, "fire"); bs(b, "root"); bmat(b, 1.0f); bs(b, "fx_fire");
	b16(b, 3); bs(b, "light 01\"\xe9#"); bs(b, "root"); bmat(b, 2.0f); /* needs quoting */
	b16(b, 2); /* channels */
	bs(b, "hull_hi"); b16(b, 2); bf(b, 2.0f); b16(b, 0);
	for (int k = 0; k < 24; k++) bf(b, k == 5 ? NAN : (float)k * 0.5f);
	/* a NaN with a payload and the sign bit */
	{ uint32_t u = 0xFFC00123u; memcpy(b->b + b->n - 4, &u, 4); }
	bs(b, "hull_hi"); b16(b, 3); bf(b, 1.5f); b16(b, 5); bf(b, 1.0f); bf(b, 2.0f); bf(b, -0.0f);
	if (v >= 160) { /* references */
		b16(b, 1);
		b8(b, 4); bs(b, "hull_hi"); bs(b, "shield_anim");
		if (v >= 180) bf(b, 0.75f);
	}
	for (size_t i = 0; i < trailing; i++)
		b8(b, 0xC0 + (unsigned)i);
}

static void test_generated_versions(void **state)
{
	(void)state;
	const int versions[] = { 140, 150, 160, 170, 180, 190, 191, 192, 193 };
	bb b;
	for (size_t vi = 0; vi < sizeof(versions) / sizeof(int); vi++) {
		for (int variant = 0; variant < 2; variant++) {
			int v = versions[vi];
			gen(&b, v, variant == 1, variant == 1 ? 5 : 0);
			char what[64];
			snprintf(what, sizeof(what), "generated %d.%02d variant %d", v / 100, v % 100, variant);
			sod_model *m;
			lfs_error err;
			if (sod_decode(b.b, b.n, &m, &err))
				fail_msg("%s: %s", what, err.msg);
			assert_int_equal(m->ver, v);
			assert_int_equal(m->startrekdb, variant == 1);
			assert_int_equal(m->n_legacy, v <= 160 ? 2 : 0);
			assert_int_equal(m->n_materials, 2);
			assert_int_equal(m->materials[1].alpha_illum, v >= 190 ? 1 : 0);
			assert_int_equal(m->n_nodes, 6);
			sod_mesh *hi = m->nodes[3].mesh;
			assert_string_equal(STR(hi->texture), "hull_tex");
			assert_string_equal(STR(hi->texture_material), v >= 170 ? "alphathreshold" : "");
			assert_string_equal(STR(hi->bump_texture), v == 193 ? "hull_bump" : "");
			assert_int_equal(hi->bump_type, v == 193 ? 512 : 0);
			assert_string_equal(STR(hi->borg_texture), v >= 192 ? "hull_borg" : "");
			assert_int_equal(hi->n_trailer, 2);
			assert_int_equal(hi->trailer[0], 0xBEEF);
			assert_int_equal(hi->groups[0].n_faces, 2);
			assert_string_equal(STR(m->nodes[4].emitter), "fx_fire");
			assert_int_equal(m->n_channels, 2);
			assert_int_equal(m->channels[1].type, SOD_CHAN_SCALE);
			assert_int_equal(m->n_refs, v >= 160 ? 1 : 0);
			if (v >= 160)
				assert_float_equal(m->refs[0].offset, v >= 180 ? 0.75 : 0.0, 0);
			/* 1.4/1.5: no reference count, so whatever follows the channels
			 * is trailing (the generator writes no references there) */
			assert_int_equal(m->n_trailing, variant == 1 ? 5 : 0);
			sod_model_free(m);
			assert_bytes_rt(b.b, b.n, what);
			assert_text_rt(b.b, b.n, what);
			/* views build; OBJ and CSV apply unedited */
			lfs_viewset vs;
			build_views(b.b, b.n, &vs);
			for (size_t k = 0; k < vs.n_views; k++) {
				const lfs_view *w = &vs.views[k];
				if (!strcmp(w->path, "model.obj") || !strcmp(w->path, "model.mtl"))
					continue;
				uint8_t *o;
				size_t on;
				if (lfs_views_apply("x.sod", b.b, b.n, w->path, w->data, w->size, &o, &on, &err))
					fail_msg("%s %s: %s", what, w->path, err.msg);
				assert_int_equal(on, b.n);
				assert_memory_equal(o, b.b, b.n);
				free(o);
			}
			/* LOD: only hull_hi (2 faces) in model.obj, translated by 10 */
			const lfs_view *mo = lfs_viewset_find(&vs, "model.obj");
			assert_non_null(strstr(mo->data, "o hull_hi\n"));
			assert_null(strstr(mo->data, "o hull_lo\n"));
			assert_non_null(strstr(mo->data, "\nv 10 11 12\n"));
			/* both meshes have their own OBJ, the two channels two CSVs */
			assert_non_null(lfs_viewset_find(&vs, "meshes/hull_lo.obj"));
			assert_non_null(lfs_viewset_find(&vs, "anims/hull_hi.csv"));
			assert_non_null(lfs_viewset_find(&vs, "anims/hull_hi~2.csv"));
			const lfs_view *csv = lfs_viewset_find(&vs, "anims/hull_hi.csv");
			assert_non_null(strstr(csv->data, "nan:ffc00123"));
			lfs_viewset_free(&vs);
		}
	}
}

/* Versions outside the supported set and unknown node/channel types fail
 * with UNSUPPORTED/CORRUPT naming offset and structure. */
static void test_unsupported(void **state)
{
	(void)state;
	bb b;
	gen(&b, 180, false, 0);
	lfs_error err;
	sod_model *m;
	float bad[] = { 1.81f, 1.61f, 1.73f, 2.0f, NAN };
	for (size_t i = 0; i < sizeof(bad) / sizeof(float); i++) {
		memcpy(b.b + 10, &bad[i], 4);
		assert_int_equal(sod_decode(b.b, b.n, &m, &err), LFS_ERR_UNSUPPORTED);
		assert_int_equal(err.offset, 10);
		assert_non_null(strstr(err.msg, "not supported"));
	}
	gen(&b, 180, false, 0);
	/* the root node's type (first node after the materials) */
	size_t at = 14 + 2;
	for (int k = 0; k < 2; k++)
		at += 2 + (k ? 9 : 4) + 40 + 1;
	at += 2;
	assert_int_equal(b.b[at], 0);
	b.b[at] = 7;
	assert_int_equal(sod_decode(b.b, b.n, &m, &err), LFS_ERR_CORRUPT);
	assert_int_equal(err.offset, at);
	assert_string_equal(err.structure, "node type");
	assert_int_equal(sod_decode((const uint8_t *)"Storm3D_S", 9, &m, &err), LFS_ERR_NOTFORMAT);
}

/* ---- hostile input ---------------------------------------------------------- */

/* Accepted input (lossless on anything it accepts): its views build, for
 * every 200th trial when the ctx says so. */
static void views_build(void *ctx, const uint8_t *d, size_t n, size_t trial, const void *model,
			const lfs_error *e)
{
	(void)e;
	if (!model || !ctx || trial % 200)
		return;
	lfs_error err;
	lfs_vlist l = { 0 };
	assert_int_equal(lfs_format_sod.build_views(d, n, NULL, &l, &err), LFS_OK);
	lfs_viewset vs;
	lfs_vlist_finish(&l, &vs);
	lfs_viewset_free(&vs);
}

static void test_truncation(void **state)
{
	(void)state;
	lfs_tally t = { 0 };
	lfs_hostile h = { &k_sod, true, true, views_build, NULL };
	for (size_t i = 0; i < g_nfiles; i++) {
		size_t n;
		uint8_t *d = lfs_read_file_ok(g_files[i], &n);
		lfs_hostile_truncations(&h, d, n, 64, false, &t);
		free(d);
	}
	printf("truncation: %zu decoded, %zu rejected\n", t.ok, t.failed);
	assert_true(t.failed > 0);
}

static void test_flips(void **state)
{
	(void)state;
	lfs_tally t = { 0 };
	size_t flips = lfs_fuzz_count(1000);
	lfs_hostile h = { &k_sod, true, true, views_build, &g_rng };
	for (size_t i = 0; i < g_nfiles; i++) {
		size_t n;
		uint8_t *d = lfs_read_file_ok(g_files[i], &n);
		/* 1..4 bytes XORed with a non-zero byte */
		lfs_hostile_mutations(&h, &g_rng, d, n, flips, 4, 0, true, &t);
		free(d);
	}
	printf("flips: %zu decoded, %zu rejected\n", t.ok, t.failed);
	assert_true(t.ok > 0 && t.failed > 0);
}

static void test_text_mutations(void **state)
{
	(void)state;
	size_t n;
	uint8_t *d = lfs_read_file(corpus_file("T_Door21_1.93.sod"), &n);
	sod_model *m;
	assert_int_equal(sod_decode(d, n, &m, NULL), LFS_OK);
	lfs_sb sb = { 0 };
	assert_int_equal(sod_text_write(m, &sb, NULL), LFS_OK);
	char *c = malloc(sb.len + 1);
	size_t ok = 0, bad = 0;
	static const char pool[] = " \n\"\\#x0-9e.endnodegroupfaces";
	for (int k = 0; k < 2000; k++) {
		memcpy(c, sb.data, sb.len);
		size_t len = sb.len;
		if (k % 4 == 0)
			len = 1 + (size_t)lfs_rng_below(&g_rng, sb.len - 1);
		int nb = 1 + (int)lfs_rng_below(&g_rng, 3);
		for (int q = 0; q < nb; q++)
			c[lfs_rng_below(&g_rng, len)] =
				pool[lfs_rng_below(&g_rng, sizeof(pool) - 1)];
		sod_model *m2 = NULL;
		lfs_error err;
		if (sod_text_parse("model.txt", c, len, &m2, &err) == LFS_OK) {
			uint8_t *o;
			size_t on;
			if (sod_encode(m2, &o, &on, &err) == LFS_OK)
				free(o);
			sod_model_free(m2);
			ok++;
		} else {
			assert_int_equal(err.code, LFS_ERR_PARSE);
			assert_true(!strncmp(err.msg, "model.txt:", 10));
			bad++;
		}
	}
	printf("text mutations: %zu parsed, %zu rejected\n", ok, bad);
	assert_true(bad > 0);
	free(c);
	lfs_sb_free(&sb);
	sod_model_free(m);
	free(d);
}

/* ---- parser errors ---------------------------------------------------------- */

static void expect_text_error(const char *text, const char *msg)
{
	sod_model *m = NULL;
	lfs_error err;
	lfs_err r = sod_text_parse("model.txt", text, strlen(text), &m, &err);
	assert_int_equal(r, LFS_ERR_PARSE);
	assert_null(m);
	if (strncmp(err.msg, msg, strlen(msg)))
		fail_msg("got '%s', want '%s...'", err.msg, msg);
}

static void test_parse_errors(void **state)
{
	(void)state;
	expect_text_error("magic Storm3D_SW\nversion 1.81\n", "model.txt:2:9: error: unsupported SOD version");
	expect_text_error("version 1.8\nmaterial m\n  alphaillum 0\nendmaterial\n",
			  "model.txt:3:3: error: 'alphaillum' exists only in version 1.9 and later");
	expect_text_error("version 1.8\nnode null a\n  parent \"\"\n", "model.txt:2:1: error: missing 'endnode'");
	expect_text_error("version 1.8\nnode mesh a\n  verts 2\n    1 2 3\n    1 2\nendnode\n",
			  "model.txt:5:8: error: vertex row 2 of 2: expected 3 values, found 2");
	expect_text_error("version 1.8\nnode null a\n  texture t\nendnode\n",
			  "model.txt:3:3: error: 'texture' is a mesh field, this is a null node");
	expect_text_error("version 1.93\nnode mesh a\n  numtextures 3\nendnode\n",
			  "model.txt:3:15: error: numtextures must be 1 or 2");
	expect_text_error("material m\nendmaterial\n",
			  "model.txt:1:1: error: 'version' must come before the first block");
	expect_text_error("version 1.8\nnode spaceship a\nendnode\n", "model.txt:2:6: error: unknown node type");
	expect_text_error("version 1.8\nchannel a\n  type 2\nendchannel\n",
			  "model.txt:3:8: error: channel type must be 0 (matrix) or 5 (scale)");
	expect_text_error("version 1.8\nchannel a\n  type 5\n  keys 1\n    x\nendchannel\n",
			  "model.txt:5:5: error: expected a number, found 'x'");
	expect_text_error("version 1.5\nreference a\nendreference\n",
			  "model.txt:2:1: error: versions 1.4 and 1.5 have no animation references");
	/* a node field once, and the five every node has */
	expect_text_error("version 1.8\nnode null a\n  parent \"\"\n  parent \"\"\nendnode\n",
			  "model.txt:4:3: error: 'parent' is given twice in this node");
	expect_text_error("version 1.8\nnode null a\n  parent \"\"\n  right 1 0 0\n  up 0 1 0\n"
			  "  position 0 0 0\nendnode\n",
			  "model.txt:7:1: error: this node has no 'front' line (every node has parent, "
			  "right, up, front and position)");
	/* a number too large for a float32 is not stored as inf */
	expect_text_error("version 1.8\nnode null a\n  parent \"\"\n  right 1e39 0 0\nendnode\n",
			  "model.txt:4:9: error: '1e39' is out of the float32 range");

	/* OBJ and CSV: errors name the view path */
	bb b;
	gen(&b, 193, false, 0);
	uint8_t *o = NULL;
	size_t on;
	lfs_error err;
	const char *obj = "v 1 2 3\ng group0\nf 1/1 2/2\n";
	assert_int_equal(lfs_views_apply("x.sod", b.b, b.n, "meshes/hull_hi.obj", obj, strlen(obj), &o, &on, &err),
			 LFS_ERR_PARSE);
	assert_string_equal(err.msg,
			    "meshes/hull_hi.obj:3:10: error: SOD faces are triangles: expected 3 corners, found 2");
	obj = "v 1 2 3\nf 1/1 1/1 1/1\ng group0\n"; /* without any `g`: paired with the stored faces */
	assert_int_equal(lfs_views_apply("x.sod", b.b, b.n, "meshes/hull_hi.obj", obj, strlen(obj), &o, &on, &err),
			 LFS_ERR_PARSE);
	assert_string_equal(err.msg, "meshes/hull_hi.obj:2:1: error: face before the first 'g' line");
	obj = "v 1 2 3\nvt 0 0\ng group0\nf 1/1 1/2 1/1\n";
	assert_int_equal(lfs_views_apply("x.sod", b.b, b.n, "meshes/hull_hi.obj", obj, strlen(obj), &o, &on, &err),
			 LFS_ERR_PARSE);
	assert_string_equal(err.msg,
			    "meshes/hull_hi.obj:4:7: error: texture coordinate index 2 out of range (1..1)");
	const char *csv = "key,time,scale\r\n0,0,1\r\n2,1,2\r\n";
	assert_int_equal(lfs_views_apply("x.sod", b.b, b.n, "anims/hull_hi~2.csv", csv, strlen(csv), &o, &on, &err),
			 LFS_ERR_PARSE);
	const char *want = "anims/hull_hi~2.csv:3:1: error: key must be the row number 1 ";
	assert_true(!strncmp(err.msg, want, strlen(want)));
	csv = "key,time,scale\n0,0,abc\n";
	assert_int_equal(lfs_views_apply("x.sod", b.b, b.n, "anims/hull_hi~2.csv", csv, strlen(csv), &o, &on, &err),
			 LFS_ERR_PARSE);
	assert_string_equal(err.msg, "anims/hull_hi~2.csv:2:5: error: expected a number, found 'abc'");
	assert_int_equal(lfs_views_apply("x.sod", b.b, b.n, "model.obj", "", 0, &o, &on, &err), LFS_ERR_UNSUPPORTED);
	assert_int_equal(lfs_views_apply("x.sod", b.b, b.n, "meshes/nope.obj", "", 0, &o, &on, &err),
			 LFS_ERR_UNSUPPORTED);
	assert_null(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_bytes),
		cmocka_unit_test(test_corpus_text),
		cmocka_unit_test(test_corpus_views_apply),
		cmocka_unit_test(test_disputed_rejected),
		cmocka_unit_test(test_edits),
		cmocka_unit_test(test_generated_versions),
		cmocka_unit_test(test_unsupported),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_flips),
		cmocka_unit_test(test_text_mutations),
		cmocka_unit_test(test_parse_errors),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
