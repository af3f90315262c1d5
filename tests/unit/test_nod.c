/**
 * @file test_nod.c
 * NOD v7 codec and views on real data (shared/corpus/nod, 29 files written by
 * hypov8's exporter from NWN geometry) and on files generated here for the
 * flag/field combinations no corpus file has (HASLOD, INLINE/STATIC, names
 * with bytes after the NUL, NaN payloads, pad bytes, untextured groups, empty
 * groups, trailing bytes).
 *
 * Round trips: bytes -> model -> bytes; bytes -> model.txt -> bytes; every
 * OBJ view applied unedited -> bytes. Edits: one float through model.txt and
 * through an OBJ changes exactly the bytes computed from the decoded layout.
 * Hostile input: truncations and byte flips (decode, views, text parser) must
 * fail cleanly. Fixed seed (testrng.h: LFS_TEST_SEED, LFS_FUZZ_FLIPS).
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

#include "common/floatfmt.h"
#include "conform.h"
#include "corpus.h"
#include "formats/nod/nod.h"
#include "formats/nod/nod_views.h"
#include "registry/viewset.h"

typedef struct cfile {
	char name[128];
	char path[4096];
	unsigned bones, meshes, groups, materials, verts, faces;
} cfile;

static cfile g_files[64];
static size_t g_n;
static lfs_rng g_rng;

LFS_CODEC(k_nod, "nod", nod_model, nod_decode, nod_encode, nod_model_free);

static unsigned count_of(const char *counts, const char *key)
{
	char k[32];
	snprintf(k, sizeof(k), "%s=", key);
	const char *p = strstr(counts, k);
	assert_non_null(p);
	return (unsigned)strtoul(p + strlen(k), NULL, 10);
}

/* MANIFEST.tsv: file, format, version, writer, source, sha256, size, counts, ... */
static int setup(void **state)
{
	(void)state;
	const char *c = lfs_corpus_dir_or_skip();
	char mpath[4096];
	snprintf(mpath, sizeof(mpath), "%s/nod/MANIFEST.tsv", c);
	size_t n;
	char *t = (char *)lfs_read_file(mpath, &n);
	if (!t)
		return -1;
	char *save = NULL;
	for (char *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "file\t", 5))
			continue;
		char *f[9] = { 0 };
		int k = 0;
		for (char *p = line; k < 9 && p; k++) {
			f[k] = p;
			p = strchr(p, '\t');
			if (p)
				*p++ = 0;
		}
		if (k < 8 || g_n >= 64)
			continue;
		cfile *cf = &g_files[g_n++];
		snprintf(cf->name, sizeof(cf->name), "%s", f[0]);
		snprintf(cf->path, sizeof(cf->path), "%s/nod/%s", c, f[0]);
		cf->bones = count_of(f[7], "bones");
		cf->meshes = count_of(f[7], "meshes");
		cf->groups = count_of(f[7], "groups");
		cf->materials = count_of(f[7], "materials");
		cf->verts = count_of(f[7], "verts");
		cf->faces = count_of(f[7], "faces");
	}
	free(t);
	lfs_rng_seed(&g_rng, "nod", 0x2545F4914F6CDD1Dull);
	printf("%zu corpus files\n", g_n);
	return g_n ? 0 : -1;
}

/* ---- helpers ---------------------------------------------------------------- */

/* Every editable view of @p d applied unedited gives @p d back; returns the
 * number of views checked. */
static size_t check_views_identity(const uint8_t *d, size_t n, const char *what)
{
	lfs_viewset vs;
	lfs_error err;
	lfs_err r = lfs_views_build("x.nod", d, n, NULL, &vs, &err);
	if (r)
		fail_msg("%s: views: %s", what, err.msg);
	assert_ptr_equal(vs.format, &lfs_format_nod);
	size_t checked = 0;
	for (size_t i = 0; i < vs.n_views; i++) {
		const lfs_view *v = &vs.views[i];
		if (!strcmp(v->path, "model.mtl"))
			continue;
		uint8_t *out;
		size_t outn;
		r = lfs_views_apply("x.nod", d, n, v->path, v->data, v->size, &out, &outn, &err);
		if (r)
			fail_msg("%s: apply %s: %s", what, v->path, err.msg);
		char msg[256];
		snprintf(msg, sizeof(msg), "%s via %s", what, v->path);
		lfs_assert_same_bytes(d, n, out, outn, msg);
		free(out);
		checked++;
	}
	lfs_viewset_free(&vs);
	return checked;
}

static uint8_t *encode_ok(const nod_model *m, size_t *n)
{
	uint8_t *b;
	lfs_error err;
	if (nod_encode(m, &b, n, &err))
		fail_msg("encode: %s", err.msg);
	return b;
}

static size_t vert_offset(const nod_model *m, uint32_t v)
{
	return 8 + (size_t)m->n_materials * NOD_NAME_SIZE + NOD_HEADER_FIXED +
	       (size_t)m->n_bones * NOD_BONE_SIZE + (size_t)m->n_meshes * NOD_NAME_SIZE +
	       (size_t)v * NOD_VERTEX_SIZE;
}

/* Replace token @p tok (0-based) of the 1-based line @p line of @p text. */
static char *edit_token(const char *text, size_t n, size_t line, int tok, const char *repl,
			size_t *outn)
{
	size_t ls = 0, cur = 1;
	while (cur < line) {
		const char *nl = memchr(text + ls, '\n', n - ls);
		assert_non_null(nl);
		ls = (size_t)(nl - text) + 1;
		cur++;
	}
	size_t p = ls;
	for (int k = 0;; k++) {
		while (text[p] == ' ')
			p++;
		size_t e = p;
		while (e < n && text[e] != ' ' && text[e] != '\n')
			e++;
		if (k == tok) {
			size_t rl = strlen(repl);
			char *o = malloc(n - (e - p) + rl + 1);
			memcpy(o, text, p);
			memcpy(o + p, repl, rl);
			memcpy(o + p + rl, text + e, n - e);
			*outn = n - (e - p) + rl;
			o[*outn] = 0;
			return o;
		}
		p = e;
	}
}

/* 1-based number of the first line starting (after blanks) with @p prefix,
 * counting from line @p from. */
static size_t find_line(const char *text, size_t n, const char *prefix, size_t from)
{
	size_t line = 1, ls = 0, pl = strlen(prefix);
	while (ls < n) {
		const char *nl = memchr(text + ls, '\n', n - ls);
		size_t le = nl ? (size_t)(nl - text) : n;
		size_t p = ls;
		while (p < le && text[p] == ' ')
			p++;
		if (line >= from && le - p >= pl && !memcmp(text + p, prefix, pl))
			return line;
		ls = le + 1;
		line++;
	}
	fail_msg("no line starting with '%s'", prefix);
	return 0;
}

/* ---- corpus round trips ------------------------------------------------------- */

static void test_corpus_bytes(void **state)
{
	(void)state;
	for (size_t i = 0; i < g_n; i++) {
		size_t n;
		uint8_t *d = lfs_read_file_ok(g_files[i].path, &n);
		assert_true(nod_is_binary(d, n));
		nod_model *m = lfs_assert_lossless(&k_nod, d, n, g_files[i].name, true);
		/* counts agree with the writer's own manifest */
		assert_int_equal(m->n_bones, g_files[i].bones);
		assert_int_equal(m->n_meshes, g_files[i].meshes);
		assert_int_equal(m->n_groups, g_files[i].groups);
		assert_int_equal(m->n_materials, g_files[i].materials);
		assert_int_equal(m->n_verts, g_files[i].verts);
		assert_int_equal(m->n_faces, g_files[i].faces);
		/* the writer quirks the manifest lists are kept as fields */
		for (uint32_t g = 0; g < m->n_groups; g++) {
			assert_int_equal(m->groups[g].min_verts, 0xCDCD);
			assert_int_equal(m->groups[g].flags, 0xCDCF);
			/* one group per mesh, in order (MANIFEST): the SDK's byte at
			 * offset 25 is the mesh index, 24 and 26..27 are zero */
			assert_int_equal(m->groups[g].mesh, g);
			assert_int_equal(m->groups[g].bone, 0);
			assert_int_equal(m->groups[g].pad[0] | m->groups[g].pad[1], 0);
		}
		nod_model_free(m);
		free(d);
	}
}

static void test_corpus_text(void **state)
{
	(void)state;
	for (size_t i = 0; i < g_n; i++) {
		size_t n;
		uint8_t *d = lfs_read_file(g_files[i].path, &n);
		nod_model *m, *m2;
		lfs_error err;
		assert_int_equal(nod_decode(d, n, &m, &err), LFS_OK);
		lfs_sb sb = { 0 }, sb2 = { 0 };
		assert_int_equal(nod_text_write(m, &sb, &err), LFS_OK);
		if (nod_text_parse("model.txt", sb.data, sb.len, &m2, &err))
			fail_msg("%s: %s", g_files[i].name, err.msg);
		size_t en;
		uint8_t *e = encode_ok(m2, &en);
		lfs_assert_same_bytes(d, n, e, en, g_files[i].name);
		/* writing the parsed model again gives the same text */
		assert_int_equal(nod_text_write(m2, &sb2, &err), LFS_OK);
		assert_int_equal(sb.len, sb2.len);
		assert_memory_equal(sb.data, sb2.data, sb.len);
		free(e);
		lfs_sb_free(&sb);
		lfs_sb_free(&sb2);
		nod_model_free(m);
		nod_model_free(m2);
		free(d);
	}
}

static void test_corpus_views(void **state)
{
	(void)state;
	size_t views = 0;
	for (size_t i = 0; i < g_n; i++) {
		size_t n;
		uint8_t *d = lfs_read_file(g_files[i].path, &n);
		size_t c = check_views_identity(d, n, g_files[i].name);
		/* model.txt + model.obj + one OBJ per group */
		assert_int_equal(c, 2 + g_files[i].groups);
		views += c;
		free(d);
	}
	printf("%zu views applied unedited, all byte-identical\n", views);
}

/* Evidence for docs/formats/nod.md "Spaces": vertices are in model space
 * (the stored bounds are their min/max with the origin), restTranslate is the
 * bone's position in its parent's frame (recomputed from the inverse rest
 * matrices, which are rigid and column-major). */
static void test_corpus_spaces(void **state)
{
	(void)state;
	double worst = 0;
	for (size_t i = 0; i < g_n; i++) {
		size_t n;
		uint8_t *d = lfs_read_file(g_files[i].path, &n);
		nod_model *m;
		lfs_error err;
		assert_int_equal(nod_decode(d, n, &m, &err), LFS_OK);
		float lo[3] = { 0, 0, 0 }, hi[3] = { 0, 0, 0 };
		for (uint32_t v = 0; v < m->n_verts; v++)
			for (int k = 0; k < 3; k++) {
				lo[k] = fminf(lo[k], m->verts[v].pos[k]);
				hi[k] = fmaxf(hi[k], m->verts[v].pos[k]);
			}
		for (int k = 0; k < 3; k++) {
			assert_true(lo[k] == m->bounds[k]);
			assert_true(hi[k] == m->bounds[3 + k]);
		}
		/* model-space bone position p = -R^T t from the inverse (R | t) */
		double (*pos)[3] = calloc(m->n_bones + 1u, sizeof(*pos));
		for (uint32_t b = 0; b < m->n_bones; b++) {
			const float *iv = m->bones[b].inverse;
			for (int j = 0; j < 3; j++)
				pos[b][j] = -((double)iv[3 * j] * iv[9] + (double)iv[3 * j + 1] * iv[10] +
					      (double)iv[3 * j + 2] * iv[11]);
		}
		for (uint32_t b = 0; b < m->n_bones; b++) {
			int p = m->bones[b].parent;
			double loc[3];
			for (int k = 0; k < 3; k++) {
				if (p < 0)
					loc[k] = pos[b][k];
				else {
					const float *pv = m->bones[p].inverse;
					loc[k] = (double)pv[k] * pos[b][0] + (double)pv[3 + k] * pos[b][1] +
						 (double)pv[6 + k] * pos[b][2] + pv[9 + k];
				}
				double e = fabs(loc[k] - m->bones[b].translate[k]);
				if (e > worst)
					worst = e;
			}
		}
		free(pos);
		nod_model_free(m);
		free(d);
	}
	printf("restTranslate vs parent-local position from the inverse matrices: max error %g\n",
	       worst);
	assert_true(worst < 1e-4);
}

/* ---- edits ------------------------------------------------------------------ */

static void test_edit_text(void **state)
{
	(void)state;
	for (size_t i = 0; i < g_n; i += 4) {
		size_t n;
		uint8_t *d = lfs_read_file(g_files[i].path, &n);
		nod_model *m;
		lfs_error err;
		assert_int_equal(nod_decode(d, n, &m, &err), LFS_OK);
		lfs_sb sb = { 0 };
		assert_int_equal(nod_text_write(m, &sb, &err), LFS_OK);
		/* vertex k: its row is the k-th non-comment row after "verts" */
		uint32_t k = m->n_verts / 2;
		size_t line = find_line(sb.data, sb.len, "verts ", 1) + 1, seen = 0;
		for (;; line++) {
			size_t l = find_line(sb.data, sb.len, "", line);
			const char *p = sb.data;
			for (size_t c = 1; c < l; c++)
				p = strchr(p, '\n') + 1;
			while (*p == ' ')
				p++;
			if (*p == '#')
				continue;
			if (seen++ == k)
				break;
		}
		float nv = m->verts[k].pos[1] + 1.25f;
		char buf[LFS_FLOAT_BUFSZ];
		lfs_fmt_float(buf, nv);
		size_t tn;
		char *t = edit_token(sb.data, sb.len, line, 1, buf, &tn);
		uint8_t *out;
		size_t outn;
		if (lfs_views_apply("x.nod", d, n, "model.txt", t, tn, &out, &outn, &err))
			fail_msg("%s: %s", g_files[i].name, err.msg);
		size_t off = vert_offset(m, k) + 4;
		assert_int_equal(outn, n);
		uint8_t exp[4];
		memcpy(exp, &nv, 4);
		for (size_t b = 0; b < n; b++)
			if (b < off || b >= off + 4)
				assert_int_equal(out[b], d[b]);
			else
				assert_int_equal(out[b], exp[b - off]);
		free(out);
		free(t);
		lfs_sb_free(&sb);
		nod_model_free(m);
		free(d);
	}
}

static void test_edit_obj(void **state)
{
	(void)state;
	for (size_t i = 1; i < g_n; i += 4) {
		size_t n;
		uint8_t *d = lfs_read_file(g_files[i].path, &n);
		nod_model *m;
		lfs_error err;
		assert_int_equal(nod_decode(d, n, &m, &err), LFS_OK);
		uint32_t g = m->n_groups - 1;
		const nod_group *gr = &m->groups[g];
		assert_true(gr->n_verts > 0);
		lfs_viewset vs;
		assert_int_equal(lfs_views_build("x.nod", d, n, NULL, &vs, &err), LFS_OK);
		const lfs_view *v = NULL;
		for (size_t k = 0; k < vs.n_views; k++)
			if (!strncmp(vs.views[k].path, "meshes/", 7)) {
				char suffix[32];
				snprintf(suffix, sizeof(suffix), ".%u.obj", (unsigned)g);
				size_t pl = strlen(vs.views[k].path), sl = strlen(suffix);
				if (pl > sl && !strcmp(vs.views[k].path + pl - sl, suffix))
					v = &vs.views[k];
			}
		assert_non_null(v);
		/* position z and texture v of local vertex j */
		uint32_t j = gr->n_verts - 1;
		size_t vl = find_line(v->data, v->size, "v ", 1) + j;
		size_t tl = find_line(v->data, v->size, "vt ", 1) + j;
		float nz = m->verts[gr->first_vert + j].pos[2] - 0.5f;
		float ntv = 0.25f; /* OBJ v; stored v = 1 - 0.25 */
		char b1[LFS_FLOAT_BUFSZ], b2[LFS_FLOAT_BUFSZ];
		lfs_fmt_float(b1, nz);
		lfs_fmt_float(b2, ntv);
		size_t t1n, t2n;
		char *t1 = edit_token(v->data, v->size, vl, 3, b1, &t1n);
		char *t2 = edit_token(t1, t1n, tl, 2, b2, &t2n);
		uint8_t *out;
		size_t outn;
		if (lfs_views_apply("x.nod", d, n, v->path, t2, t2n, &out, &outn, &err))
			fail_msg("%s: %s", v->path, err.msg);
		assert_int_equal(outn, n);
		size_t vo = vert_offset(m, gr->first_vert + j);
		float sv = 1.0f - ntv;
		uint8_t ez[4], ev[4];
		memcpy(ez, &nz, 4);
		memcpy(ev, &sv, 4);
		for (size_t b = 0; b < n; b++) {
			if (b >= vo + 8 && b < vo + 12)
				assert_int_equal(out[b], ez[b - vo - 8]);
			else if (b >= vo + 28 && b < vo + 32)
				assert_int_equal(out[b], ev[b - vo - 28]);
			else
				assert_int_equal(out[b], d[b]);
		}
		free(out);

		/* drop the last face line: the group loses one face, the file 6 bytes */
		if (gr->n_faces) {
			const char *lastf = NULL;
			for (const char *p = v->data; p && p < v->data + v->size; p = strchr(p, '\n')) {
				if (*p == '\n')
					p++;
				if (!strncmp(p, "f ", 2))
					lastf = p;
			}
			assert_non_null(lastf);
			const char *le = strchr(lastf, '\n');
			size_t cut = (size_t)(le - lastf) + 1, pre = (size_t)(lastf - v->data);
			char *t3 = malloc(v->size);
			memcpy(t3, v->data, pre);
			memcpy(t3 + pre, le + 1, v->size - pre - cut);
			assert_int_equal(lfs_views_apply("x.nod", d, n, v->path, t3, v->size - cut, &out, &outn, &err),
					 LFS_OK);
			assert_int_equal(outn, n - NOD_FACE_SIZE);
			nod_model *m2;
			assert_int_equal(nod_decode(out, outn, &m2, &err), LFS_OK);
			assert_int_equal(m2->n_faces, m->n_faces - 1);
			assert_int_equal(m2->groups[g].n_faces, gr->n_faces - 1);
			assert_memory_equal(m2->faces, m->faces, (size_t)(m->n_faces - 1) * sizeof(nod_face));
			nod_model_free(m2);
			free(out);
			free(t3);
		}
		free(t1);
		free(t2);
		lfs_viewset_free(&vs);
		nod_model_free(m);
		free(d);
	}
}

/* ---- generated files -------------------------------------------------------- */

static void set_name(nod_name *nm, const char *s)
{
	memset(nm->raw, 0, NOD_NAME_SIZE);
	memcpy(nm->raw, s, strlen(s) < NOD_NAME_SIZE ? strlen(s) : NOD_NAME_SIZE);
}

/* A model with @p flags, exercising every field the corpus leaves constant. */
static nod_model *gen_model(uint32_t flags, int variant)
{
	nod_model *m = calloc(1, sizeof(*m));
	m->version = NOD_VERSION;
	m->flags = flags;
	float b[6] = { -1, -2, -3, 4, 5, 6 };
	memcpy(m->bounds, b, sizeof(b));
	m->n_materials = 2;
	m->materials = calloc(2, sizeof(nod_name));
	set_name(&m->materials[0], "tex_body");
	/* variant 1: 32 bytes without NUL, and garbage after the NUL */
	if (variant & 1) {
		memset(m->materials[1].raw, 'a', NOD_NAME_SIZE);
	} else {
		set_name(&m->materials[1], "with space");
	}
	m->n_bones = 3;
	m->bones = calloc(3, sizeof(nod_bone));
	for (int i = 0; i < 3; i++) {
		m->bones[i].inverse[0] = m->bones[i].inverse[4] = m->bones[i].inverse[8] = 1;
		m->bones[i].translate[2] = (float)i * 1.5f;
		m->bones[i].inverse[11] = -(float)i * 1.5f;
		m->bones[i].parent = (int16_t)(i - 1);
		m->bones[i].child = (int16_t)(i < 2 ? i + 1 : -1);
		m->bones[i].sibling = -1;
	}
	m->n_meshes = 2;
	m->meshes = calloc(2, sizeof(nod_name));
	set_name(&m->meshes[0], "head");
	set_name(&m->meshes[1], (variant & 2) ? "a/b" : "torso");
	if (variant & 1)
		m->meshes[0].raw[20] = 0xCD; /* byte after the terminator */
	m->n_groups = 3;
	m->groups = calloc(3, sizeof(nod_group));
	uint16_t gv[3] = { 4, 0, 5 }, gf[3] = { 2, 0, 3 };
	for (int g = 0; g < 3; g++) {
		m->groups[g].n_verts = gv[g];
		m->groups[g].n_faces = gf[g];
		m->groups[g].material = g == 2 ? -1 : g;
		m->groups[g].mesh = (uint8_t)(g == 2 ? 1 : 0);
		m->groups[g].bone = (uint8_t)g;
		m->groups[g].flags = (uint16_t)(g == 0 ? NOD_GROUP_HASLOD : NOD_GROUP_NOSKINNING);
		m->groups[g].min_verts = (uint16_t)(g + 1);
		m->groups[g].reserved[g] = (uint8_t)(0x11 * (g + 1));
		m->groups[g].pad[1] = (uint8_t)g;
	}
	m->n_verts = 9;
	m->verts = calloc(9, sizeof(nod_vertex));
	for (int v = 0; v < 9; v++) {
		nod_vertex *x = &m->verts[v];
		x->pos[0] = (float)v * 0.1f;
		x->pos[1] = -(float)v;
		x->pos[2] = 1e-7f * (float)v;
		x->normal[2] = 1;
		x->uv[0] = (float)v / 9;
		x->uv[1] = 1.0f - (float)v / 7;
		x->weight = v % 2 ? 0.75f : 1.0f;
		x->bone = (uint8_t)(v % 3);
		x->pad[0] = (uint8_t)v;
		x->pad[2] = 0xCD;
	}
	if (variant & 4) {
		uint32_t qnan = 0x7fc01234u, neg = 0xffc00000u;
		memcpy(&m->verts[3].normal[0], &qnan, 4);
		memcpy(&m->verts[5].weight, &neg, 4);
		m->verts[6].pos[0] = -0.0f;
		m->verts[7].uv[1] = INFINITY;
	}
	if (flags & NOD_MODEL_HASLOD) {
		m->lod = calloc(9, sizeof(uint16_t));
		for (int v = 0; v < 9; v++)
			m->lod[v] = (uint16_t)(v ? v - 1 : 0xFFFF);
	}
	m->n_faces = 5;
	m->faces = calloc(5, sizeof(nod_face));
	uint16_t fs[5][3] = { { 0, 1, 2 }, { 2, 3, 0 }, { 0, 1, 2 }, { 1, 3, 4 }, { 4, 3, 2 } };
	memcpy(m->faces, fs, sizeof(fs));
	if (variant & 2) {
		m->n_trailing = 5;
		m->trailing = malloc(5);
		memcpy(m->trailing, "\x00\x01\xCD\xFF\x7F", 5);
	}
	return m;
}

static void test_generated(void **state)
{
	(void)state;
	uint32_t flagsets[] = { 0, NOD_MODEL_HASLOD, NOD_MODEL_INLINE | NOD_MODEL_STATIC,
				NOD_MODEL_HASLOD | NOD_MODEL_STATIC | 0x10 | 0x80000000u };
	for (size_t f = 0; f < sizeof(flagsets) / sizeof(flagsets[0]); f++)
		for (int variant = 0; variant < 8; variant++) {
			char what[64];
			snprintf(what, sizeof(what), "generated flags 0x%x variant %d",
				 (unsigned)flagsets[f], variant);
			nod_model *m = gen_model(flagsets[f], variant);
			size_t n;
			uint8_t *d = encode_ok(m, &n);
			nod_model *m2;
			lfs_error err;
			if (nod_decode(d, n, &m2, &err))
				fail_msg("%s: %s", what, err.msg);
			assert_int_equal(m2->flags, flagsets[f]);
			assert_int_equal(m2->lod != NULL, (flagsets[f] & 1) != 0);
			assert_int_equal(m2->n_trailing, m->n_trailing);
			assert_int_equal(m2->groups[2].first_vert, 4);
			assert_int_equal(m2->groups[2].first_face, 2);
			size_t n2;
			uint8_t *d2 = encode_ok(m2, &n2);
			lfs_assert_same_bytes(d, n, d2, n2, what);
			/* text round trip */
			lfs_sb sb = { 0 };
			assert_int_equal(nod_text_write(m2, &sb, &err), LFS_OK);
			nod_model *m3;
			if (nod_text_parse("model.txt", sb.data, sb.len, &m3, &err))
				fail_msg("%s: %s", what, err.msg);
			size_t n3;
			uint8_t *d3 = encode_ok(m3, &n3);
			lfs_assert_same_bytes(d, n, d3, n3, what);
			/* the features show up in the text */
			assert_non_null(strstr(sb.data, "node meshgroup 1\n"));
			if (flagsets[f] & 1)
				assert_non_null(strstr(sb.data, "\nlodcollapse 9\n  65535\n  0\n  1\n"));
			else
				assert_null(strstr(sb.data, "lodcollapse"));
			if (variant & 1) /* raw bytes printed for the non-canonical names */
				assert_non_null(strstr(sb.data, "  head 6865616400000000000000000000000000000000cd"));
			if (variant & 2)
				assert_non_null(strstr(sb.data, "trailing 0001cdff7f\n"));
			if (variant & 4)
				assert_non_null(strstr(sb.data, "nan:7fc01234"));
			/* OBJ views */
			size_t c = check_views_identity(d, n, what);
			assert_int_equal(c, 2 + 3);
			free(d3);
			nod_model_free(m3);
			lfs_sb_free(&sb);
			free(d2);
			nod_model_free(m2);
			free(d);
			nod_model_free(m);
		}
}

static void test_generated_names(void **state)
{
	(void)state;
	nod_model *m = gen_model(0, 2); /* mesh "a/b", untextured group */
	size_t n;
	uint8_t *d = encode_ok(m, &n);
	lfs_viewset vs;
	lfs_error err;
	assert_int_equal(lfs_views_build("x.NOD", d, n, NULL, &vs, &err), LFS_OK);
	const char *want[] = { "meshes/a%2Fb.2.obj", "meshes/head.0.obj", "meshes/head.1.obj",
			       "model.mtl", "model.obj", "model.txt" };
	assert_int_equal(vs.n_views, 6);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(vs.views[i].path, want[i]);
	const lfs_view *mtl = lfs_viewset_find(&vs, "model.mtl");
	assert_non_null(strstr(mtl->data, "newmtl untextured\n"));
	assert_non_null(strstr(mtl->data, "newmtl with space\n"));
	const lfs_view *g2 = lfs_viewset_find(&vs, "meshes/a%2Fb.2.obj");
	assert_non_null(strstr(g2->data, "usemtl untextured\n"));
	lfs_viewset_free(&vs);
	free(d);
	nod_model_free(m);
}

/* OBJ with merged texture rows (as other tools write): each distinct
 * (v, vt, vn) corner becomes one NOD vertex, in order of first use. */
static void test_obj_split(void **state)
{
	(void)state;
	nod_model *m = gen_model(NOD_MODEL_HASLOD, 0);
	size_t n;
	uint8_t *d = encode_ok(m, &n);
	static const char obj[] = "o head.0\n"
				  "v 1 0 0\nv 2 0 0\nv 3 0 0\nv 4 0 0\n"
				  "vt 0.5 0.25\nvt 0.5 0.5\nvt 0.5 0.75\nvt 0.125 0.75\n"
				  "vn 0 0 1\n"
				  "f 1/1/1 2/2/1 3/3/1\n"
				  "f 3/4/1 4/4/1 1/1/1\n";
	uint8_t *out;
	size_t outn;
	lfs_error err;
	if (lfs_views_apply("x.nod", d, n, "meshes/head.0.obj", obj, strlen(obj), &out, &outn, &err))
		fail_msg("%s", err.msg);
	nod_model *m2;
	assert_int_equal(nod_decode(out, outn, &m2, &err), LFS_OK);
	assert_int_equal(m2->groups[0].n_verts, 5);
	assert_int_equal(m2->n_verts, m->n_verts + 1);
	static const uint16_t want[2][3] = { { 0, 1, 2 }, { 3, 4, 0 } };
	static const float px[5] = { 1, 2, 3, 3, 4 }, tv[5] = { 0.25f, 0.5f, 0.75f, 0.75f, 0.75f };
	static const uint8_t from[5] = { 0, 1, 2, 2, 3 };
	for (int f = 0; f < 2; f++)
		for (int k = 0; k < 3; k++)
			assert_int_equal(m2->faces[f].v[k], want[f][k]);
	for (int v = 0; v < 5; v++) {
		assert_true(m2->verts[v].pos[0] == px[v]);
		assert_true(m2->verts[v].uv[1] == 1.0f - tv[v]);
		assert_true(m2->verts[v].normal[2] == 1.0f);
		/* skin data and lod word follow the v row */
		assert_int_equal(m2->verts[v].bone, m->verts[from[v]].bone);
		assert_true(m2->verts[v].weight == m->verts[from[v]].weight);
		assert_int_equal(m2->lod[v], m->lod[from[v]]);
	}
	/* the other groups are untouched */
	assert_memory_equal(m2->verts + 5, m->verts + 4, 5 * sizeof(nod_vertex));
	assert_memory_equal(m2->faces + 2, m->faces + 2, 3 * sizeof(nod_face));
	nod_model_free(m2);
	free(out);
	free(d);
	nod_model_free(m);
}

/* ---- errors ----------------------------------------------------------------- */

static void expect_apply_error(const uint8_t *d, size_t n, const char *view, const char *text,
			       const char *msg)
{
	uint8_t *out = NULL;
	size_t outn;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = lfs_views_apply("x.nod", d, n, view, text, strlen(text), &out, &outn, &err);
	assert_int_equal(r, LFS_ERR_PARSE);
	assert_null(out);
	assert_string_equal(err.msg, msg);
}

static void test_parse_errors(void **state)
{
	(void)state;
	nod_model *m = gen_model(NOD_MODEL_HASLOD, 0);
	size_t n;
	uint8_t *d = encode_ok(m, &n);
	lfs_sb sb = { 0 };
	lfs_error err;
	assert_int_equal(nod_text_write(m, &sb, &err), LFS_OK);
	char msg[256];
	size_t tn;

	size_t l = find_line(sb.data, sb.len, "numverts", 1);
	char *t = edit_token(sb.data, sb.len, l, 1, "x", &tn);
	snprintf(msg, sizeof(msg), "model.txt:%zu:12: error: expected an integer, found 'x'", l);
	expect_apply_error(d, n, "model.txt", t, msg);
	free(t);

	l = find_line(sb.data, sb.len, "numverts", 1);
	t = edit_token(sb.data, sb.len, l, 1, "5", &tn);
	l = find_line(sb.data, sb.len, "groups ", 1);
	/* group 0 now claims 5 vertices: group 2 runs past the array */
	snprintf(msg, sizeof(msg),
		 "model.txt:%zu:1: error: mesh group 2 runs past the vertex array (groups need 10, the "
		 "header has 9)", l);
	expect_apply_error(d, n, "model.txt", t, msg);
	free(t);

	l = find_line(sb.data, sb.len, "node bone bone1", 1);
	t = edit_token(sb.data, sb.len, l, 2, "bone7", &tn);
	snprintf(msg, sizeof(msg),
		 "model.txt:%zu:6: error: expected 'node bone bone1' (bones are numbered in file order)", l);
	expect_apply_error(d, n, "model.txt", t, msg);
	free(t);

	l = find_line(sb.data, sb.len, "restinverse t", 1);
	t = edit_token(sb.data, sb.len, l, 4, "1.5q", &tn);
	snprintf(msg, sizeof(msg), "model.txt:%zu:%d: error: expected a number, found '1.5q'", l,
		 (int)(strstr(strstr(t, "restinverse t"), "1.5q") - strstr(t, "restinverse t")) + 3);
	expect_apply_error(d, n, "model.txt", t, msg);
	free(t);

	/* truncated text */
	size_t cut = (size_t)(strstr(sb.data, "faces 5") - sb.data);
	t = strndup(sb.data, cut);
	l = find_line(sb.data, sb.len, "faces 5", 1) - 1;
	snprintf(msg, sizeof(msg), "model.txt:%zu:1: error: unexpected end of text, expected faces", l);
	expect_apply_error(d, n, "model.txt", t, msg);
	free(t);

	/* OBJ */
	expect_apply_error(d, n, "meshes/head.0.obj", "v 0 0 0\nv 1 0 0\nf 1 2\n",
			   "meshes/head.0.obj:3:6: error: NOD faces are triangles: expected 3 corners, found 2");
	expect_apply_error(d, n, "meshes/head.0.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 4\n",
			   "meshes/head.0.obj:4:7: error: vertex index 4 is not defined above");
	expect_apply_error(d, n, "meshes/head.0.obj", "v 0 0 zz\n",
			   "meshes/head.0.obj:1:7: error: expected a number, found 'zz'");
	/* statements NOD cannot keep are refused, not skipped */
	expect_apply_error(d, n, "meshes/head.0.obj", "v 0 0 0\nv 1 0 0\nl 1 2\n",
			   "meshes/head.0.obj:3:1: error: unsupported OBJ statement 'l'");
	expect_apply_error(d, n, "model.obj", "o head.0\nv 0 0 0\n",
			   "model.obj:1:1: error: model.obj has 1 'o' objects; this model has 3 mesh groups "
			   "(one object per group, in order)");
	expect_apply_error(d, n, "model.obj", "o head.0\no torso.1\no head.2\n",
			   "model.obj:2:3: error: expected 'o head.1' (object 1 is mesh group 1)");
	/* not a view */
	uint8_t *out;
	size_t outn;
	assert_int_equal(lfs_views_apply("x.nod", d, n, "model.mtl", "", 0, &out, &outn, &err), LFS_ERR_UNSUPPORTED);
	assert_int_equal(lfs_views_apply("x.nod", d, n, "meshes/nope.obj", "", 0, &out, &outn, &err),
			 LFS_ERR_UNSUPPORTED);
	lfs_sb_free(&sb);
	free(d);
	nod_model_free(m);
}

static void test_decode_errors(void **state)
{
	(void)state;
	nod_model *m = gen_model(0, 0);
	size_t n;
	uint8_t *d = encode_ok(m, &n);
	nod_model *o;
	lfs_error err;
	/* version */
	d[0] = 8;
	assert_int_equal(nod_decode(d, n, &o, &err), LFS_ERR_UNSUPPORTED);
	assert_false(nod_is_binary(d, n));
	d[0] = 7;
	/* a group claiming one more vertex than the arrays hold */
	size_t goff = n - 3 * NOD_GROUP_SIZE;
	d[goff + 18]++;
	assert_int_equal(nod_decode(d, n, &o, &err), LFS_ERR_CORRUPT);
	assert_int_equal(err.offset, goff + 2 * NOD_GROUP_SIZE);
	assert_string_equal(err.structure, "mesh group");
	d[goff + 18]--;
	/* too short for the faces */
	size_t fo = goff - 5 * NOD_FACE_SIZE;
	assert_int_equal(nod_decode(d, fo + 4, &o, &err), LFS_ERR_CORRUPT);
	assert_int_equal(err.offset, fo);
	assert_string_equal(err.structure, "faces");
	free(d);
	nod_model_free(m);
}

/* ---- hostile input ---------------------------------------------------------- */

/* Accepted input: every view builds (for trial % every == 0). */
static void views_build(void *ctx, const uint8_t *d, size_t n, size_t trial, const void *model,
			const lfs_error *e)
{
	(void)e;
	size_t every = *(const size_t *)ctx;
	if (!model || trial % every)
		return;
	lfs_viewset vs;
	lfs_error err;
	assert_int_equal(lfs_views_build("x.nod", d, n, NULL, &vs, &err), LFS_OK);
	lfs_viewset_free(&vs);
}

/* decoded: it re-encodes to the same bytes and every view builds */
static size_t g_views_every = 1;
static const lfs_hostile k_hostile = { &k_nod, true, false, views_build, &g_views_every };

static void test_hostile_truncation(void **state)
{
	(void)state;
	lfs_tally t = { 0 };
	g_views_every = 1;
	for (size_t i = 0; i < g_n; i++) {
		size_t n;
		uint8_t *d = lfs_read_file_ok(g_files[i].path, &n);
		lfs_hostile_truncations(&k_hostile, d, n, 64, false, &t);
		free(d);
	}
	printf("truncation: %zu decoded, %zu failed cleanly\n", t.ok, t.failed);
	/* k = 0..63 cut before the last group: all fail */
	assert_int_equal(t.ok, 0);
}

static void test_hostile_flips(void **state)
{
	(void)state;
	size_t flips = lfs_fuzz_count(1000);
	lfs_tally t = { 0 };
	size_t text_ok = 0, text_fail = 0;
	g_views_every = 20; /* views built for every 20th */
	for (size_t i = 0; i < g_n; i++) {
		size_t n;
		uint8_t *d = lfs_read_file_ok(g_files[i].path, &n);
		/* half in the header + bones region (counts, flags), half anywhere */
		lfs_hot_span hdr = { 0, 8 + 32 * (size_t)g_files[i].materials + NOD_HEADER_FIXED,
				     2 };
		lfs_hostile_replacements(&k_hostile, &g_rng, d, n, flips, &hdr, &t);
		/* the text parser on mutated text: fails cleanly or parses */
		nod_model *m;
		lfs_error err;
		assert_int_equal(nod_decode(d, n, &m, &err), LFS_OK);
		lfs_sb sb = { 0 };
		assert_int_equal(nod_text_write(m, &sb, &err), LFS_OK);
		static const char junk[] = " \n#\"\\x-19e.nanf";
		for (size_t k = 0; k < flips / 10; k++) {
			size_t pos = (size_t)lfs_rng_below(&g_rng, sb.len);
			char old = sb.data[pos];
			sb.data[pos] = junk[lfs_rng_below(&g_rng, sizeof(junk) - 1)];
			nod_model *m2 = NULL;
			memset(&err, 0, sizeof(err));
			if (nod_text_parse("model.txt", sb.data, sb.len, &m2, &err) == LFS_OK) {
				text_ok++;
				nod_model_free(m2);
			} else {
				assert_int_equal(strncmp(err.msg, "model.txt:", 10), 0);
				text_fail++;
			}
			sb.data[pos] = old;
		}
		lfs_sb_free(&sb);
		nod_model_free(m);
		free(d);
	}
	printf("byte flips: %zu decoded (re-encoded identical; views built for every 20th), "
	       "%zu failed cleanly; "
	       "mutated text: %zu parsed, %zu failed with file:line:col\n",
	       t.ok, t.failed, text_ok, text_fail);
	assert_int_equal(t.ok + t.failed, g_n * flips);
	assert_true(t.failed > 0);
	assert_true(text_fail > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_bytes),
		cmocka_unit_test(test_corpus_text),
		cmocka_unit_test(test_corpus_views),
		cmocka_unit_test(test_corpus_spaces),
		cmocka_unit_test(test_edit_text),
		cmocka_unit_test(test_edit_obj),
		cmocka_unit_test(test_generated),
		cmocka_unit_test(test_generated_names),
		cmocka_unit_test(test_obj_split),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_decode_errors),
		cmocka_unit_test(test_hostile_truncation),
		cmocka_unit_test(test_hostile_flips),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, setup, NULL));
}
