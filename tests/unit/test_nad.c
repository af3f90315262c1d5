/**
 * @file test_nad.c
 * NAD v3 codec and views on the corpus (../shared/corpus/nad, written by
 * hypov8's Noesis exporter) and on files generated here at run time:
 *  - decode -> encode gives the identical bytes; decoded counts and writer
 *    quirks agree with MANIFEST.tsv (written by the corpus builder, not us);
 *  - bytes -> anim.txt -> parse -> encode gives the identical bytes;
 *  - applying every unedited CSV view gives the identical bytes;
 *  - value edits through anim.txt / track CSV / tags.csv change exactly the
 *    bytes computed from the decoded model; a deleted CSV row removes a key;
 *  - generated files cover what the corpus lacks (scale and unknown track
 *    types, every tag name, unknown tags, NaN payloads, odd trailing bytes,
 *    empty tracks, zero tracks, duplicate bone/type names);
 *  - hostile input: truncations, byte flips, mutated text and CSV;
 *  - exact file:line:col parser messages.
 * Fuzz seed: LFS_TEST_SEED (default fixed, testrng.h), flips per file: LFS_FUZZ_FLIPS.
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
#include "common/rd.h"
#include "formats/nad/nad.h"
#include "formats/nad/nad_views.h"
#include "registry/viewset.h"

/* ---- corpus ------------------------------------------------------------------ */

typedef struct cfile {
	char name[128];
	uint8_t *data;
	size_t n;
	/* from MANIFEST.tsv */
	size_t m_size;
	unsigned bones, tracks, keys, frames, tags;
	float duration;
	int noopt, tpose, inf_last, zero_tag_pad;
} cfile;

static cfile *g_files;
static size_t g_nfiles;
static lfs_rng g_rng;

LFS_CODEC(k_nad, "nad", nad_model, nad_decode, nad_encode, nad_model_free);

static unsigned count_of(const char *counts, const char *key)
{
	const char *p = strstr(counts, key);
	assert_non_null(p);
	return (unsigned)strtoul(p + strlen(key), NULL, 10);
}

static int setup(void **state)
{
	(void)state;
	const char *c = lfs_corpus_dir_or_skip();
	char path[4096];
	snprintf(path, sizeof(path), "%s/nad/MANIFEST.tsv", c);
	size_t len;
	char *text = (char *)lfs_read_file(path, &len);
	if (!text)
		return -1;
	size_t cap = 64;
	g_files = calloc(cap, sizeof(*g_files));
	char *save = NULL;
	int first = 1;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (first) { /* header row */
			first = 0;
			continue;
		}
		char *col[10] = { 0 };
		size_t nc = 0;
		char *s2 = NULL;
		for (char *f = strtok_r(line, "\t", &s2); f && nc < 10; f = strtok_r(NULL, "\t", &s2))
			col[nc++] = f;
		if (nc < 10 || strcmp(col[1], "NAD"))
			continue;
		if (g_nfiles == cap) {
			cap *= 2;
			g_files = realloc(g_files, cap * sizeof(*g_files));
		}
		cfile *f = &g_files[g_nfiles];
		memset(f, 0, sizeof(*f));
		snprintf(f->name, sizeof(f->name), "%s", col[0]);
		f->m_size = strtoul(col[6], NULL, 10);
		f->bones = count_of(col[7], "bones=");
		f->tracks = count_of(col[7], "tracks=");
		f->keys = count_of(col[7], "keys=");
		f->frames = count_of(col[7], "frames=");
		f->tags = count_of(col[7], "tags=");
		f->duration = strtof(strstr(col[7], "duration=") + 9, NULL);
		f->noopt = strstr(col[4], "-nadnoopt") != NULL;
		f->tpose = strstr(col[4], "-nadtpose") != NULL;
		f->inf_last = strstr(col[8], "+inf (0x7F800000) on last key") != NULL;
		f->zero_tag_pad = strstr(col[8], "4 trailing zero bytes") != NULL;
		snprintf(path, sizeof(path), "%s/nad/%s", c, f->name);
		f->data = lfs_read_file(path, &f->n);
		if (!f->data) {
			fprintf(stderr, "cannot read %s\n", path);
			free(text);
			return -1;
		}
		g_nfiles++;
	}
	free(text);
	lfs_rng_seed(&g_rng, "nad", 0xA5A5F00DCAFEBABEull);
	printf("nad corpus files: %zu\n", g_nfiles);
	return g_nfiles ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < g_nfiles; i++)
		free(g_files[i].data);
	free(g_files);
	return 0;
}

static nad_model *decode_ok(const uint8_t *d, size_t n, const char *what)
{
	nad_model *m = NULL;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = nad_decode(d, n, &m, &err);
	if (r)
		fail_msg("%s: decode failed: %s", what, err.msg);
	return m;
}

/* ---- byte round trip + MANIFEST facts --------------------------------------------------------- */

static void corpus_bytes_roundtrip(void **state)
{
	(void)state;
	for (size_t i = 0; i < g_nfiles; i++) {
		cfile *f = &g_files[i];
		assert_int_equal(f->n, f->m_size);
		assert_true(nad_is_binary(f->data, f->n));
		nad_model *m = decode_ok(f->data, f->n, f->name);
		uint8_t *out;
		size_t on;
		lfs_error err;
		assert_int_equal(nad_encode(m, &out, &on, &err), LFS_OK);
		assert_int_equal(nad_encoded_size(m), on);
		lfs_assert_same_bytes(out, on, f->data, f->n, f->name);
		free(out);
		nad_model_free(m);
	}
}

static void corpus_matches_manifest(void **state)
{
	(void)state;
	for (size_t i = 0; i < g_nfiles; i++) {
		cfile *f = &g_files[i];
		nad_model *m = decode_ok(f->data, f->n, f->name);
		assert_int_equal(m->version, 3);
		assert_int_equal(m->flags, 0);
		assert_int_equal(m->n_tracks, f->tracks);
		assert_int_equal(m->n_tags, f->tags);
		assert_true(m->duration == f->duration);
		assert_true(m->duration == (float)(f->frames - 1));
		unsigned keys = 0, rot = 0, trans = 0, other = 0;
		for (uint32_t t = 0; t < m->n_tracks; t++) {
			const nad_track *tr = &m->tracks[t];
			keys += tr->n_keys;
			if (tr->type == NAD_TRACK_ROTATION)
				rot++;
			else if (tr->type == NAD_TRACK_TRANSLATION)
				trans++;
			else
				other++;
			assert_true(tr->n_keys >= 1);
			for (uint32_t k = 0; k < tr->n_keys; k++) {
				const float *v = tr->keys[k].v;
				/* C = A = 0 (MANIFEST) */
				for (int j = 5; j < 8; j++)
					assert_true(v[j] == 0.0f);
				for (int j = 11; j < 14; j++)
					assert_true(v[j] == 0.0f);
				if (k)
					assert_true(v[0] > tr->keys[k - 1].v[0]); /* frames ascend */
				if (f->noopt)
					assert_true(v[1] == 1.0f);
				else if (k + 1 < tr->n_keys)
					/* frameScale = 1/gap */
					assert_true(fabsf(v[1] * (tr->keys[k + 1].v[0] - v[0]) - 1.0f) < 1e-5f);
				if (f->tpose)
					for (int j = 2; j < 5; j++)
						assert_true(v[j] == 0.0f);
			}
			if (f->inf_last)
				assert_int_equal(lfs_f32_bits(tr->keys[tr->n_keys - 1].v[1]), 0x7F800000u);
		}
		assert_int_equal(keys, f->keys);
		/* a rotation track per bone, translation only for the root */
		assert_int_equal(rot, f->bones);
		assert_int_equal(trans, f->tracks - f->bones);
		assert_int_equal(other, 0);
		for (uint32_t g = 0; g < m->n_tags; g++)
			assert_non_null(nad_tag_name(m->tags[g].type));
		if (f->zero_tag_pad) {
			assert_int_equal(m->n_tags, 0);
			assert_int_equal(m->n_trailing, 4);
			assert_int_equal(lfs_le32(m->trailing), 0);
		} else {
			assert_int_equal(m->n_trailing, 0);
		}
		nad_model_free(m);
	}
}

/* ---- text and CSV round trips ------------------------------------------------------------------ */

/* bytes -> views; each view applied unedited gives the bytes back; anim.txt
 * re-parses and re-writes to the same text. */
static void check_views_roundtrip(const uint8_t *data, size_t n, const char *what)
{
	lfs_viewset vs;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = lfs_views_build("x.nad", data, n, NULL, &vs, &err);
	if (r)
		fail_msg("%s: views: %s", what, err.msg);
	assert_ptr_equal(vs.format, &lfs_format_nad);
	nad_model *m = decode_ok(data, n, what);
	assert_int_equal(vs.n_views, 2 + m->n_tracks);
	assert_non_null(lfs_viewset_find(&vs, "anim.txt"));
	assert_non_null(lfs_viewset_find(&vs, "tags.csv"));
	char **names = nad_track_names(m);
	assert_non_null(names);
	for (uint32_t t = 0; t < m->n_tracks; t++) {
		char p[300];
		snprintf(p, sizeof(p), "tracks/%s.csv", names[t]);
		if (!lfs_viewset_find(&vs, p))
			fail_msg("%s: missing view %s", what, p);
	}
	nad_track_names_free(names, m->n_tracks);
	for (size_t v = 0; v < vs.n_views; v++) {
		uint8_t *out;
		size_t on;
		r = lfs_views_apply("x.nad", data, n, vs.views[v].path, vs.views[v].data, vs.views[v].size, &out,
				   &on, &err);
		if (r)
			fail_msg("%s: apply %s: %s", what, vs.views[v].path, err.msg);
		char w[300];
		snprintf(w, sizeof(w), "%s via %s", what, vs.views[v].path);
		lfs_assert_same_bytes(out, on, data, n, w);
		free(out);
	}
	/* text -> model -> text is a fixed point */
	const lfs_view *t = lfs_viewset_find(&vs, "anim.txt");
	nad_model *m2 = NULL;
	assert_int_equal(nad_text_parse("anim.txt", t->data, t->size, &m2, &err), LFS_OK);
	lfs_sb sb = { 0 };
	assert_int_equal(nad_text_write(m2, &sb, &err), LFS_OK);
	assert_int_equal(sb.len, t->size);
	assert_memory_equal(sb.data, t->data, t->size);
	lfs_sb_free(&sb);
	nad_model_free(m2);
	nad_model_free(m);
	lfs_viewset_free(&vs);
}

static void corpus_text_and_csv_roundtrip(void **state)
{
	(void)state;
	for (size_t i = 0; i < g_nfiles; i++)
		check_views_roundtrip(g_files[i].data, g_files[i].n, g_files[i].name);
}

static void corpus_view_names(void **state)
{
	(void)state;
	/* Corpus tracks are unique per (bone, type): names are plain bone<N>.<type>. */
	for (size_t i = 0; i < g_nfiles; i++) {
		nad_model *m = decode_ok(g_files[i].data, g_files[i].n, g_files[i].name);
		char **names = nad_track_names(m);
		for (uint32_t t = 0; t < m->n_tracks; t++) {
			char want[64];
			snprintf(want, sizeof(want), "bone%u.%s", (unsigned)m->tracks[t].bone,
				 nad_track_type_name(m->tracks[t].type));
			assert_string_equal(names[t], want);
		}
		nad_track_names_free(names, m->n_tracks);
		nad_model_free(m);
	}
}

/* ---- edits --------------------------------------------------------------------------------------- */

/* Index of the track with the most keys (ties: first). */
static uint32_t busiest_track(const nad_model *m)
{
	uint32_t best = 0;
	for (uint32_t t = 1; t < m->n_tracks; t++)
		if (m->tracks[t].n_keys > m->tracks[best].n_keys)
			best = t;
	return best;
}

/* Start of line @p ln (0-based) in @p s, or NULL. */
static const char *nth_line(const char *s, size_t n, size_t ln)
{
	const char *p = s, *e = s + n;
	while (ln && p < e) {
		const char *q = memchr(p, '\n', (size_t)(e - p));
		if (!q)
			return NULL;
		p = q + 1;
		ln--;
	}
	return ln ? NULL : p;
}

/* Replace whitespace/comma-separated field @p fi of the line starting at
 * @p line in @p s (length n) with @p repl; returns a malloc'd text. */
static char *replace_field(const char *s, size_t n, const char *line, int fi, char sep,
			   const char *repl, size_t *newn)
{
	const char *p = line;
	while (*p == ' ')
		p++;
	for (int f = 0; f < fi; f++) {
		while (*p != sep)
			p++;
		while (*p == sep)
			p++;
	}
	const char *q = p;
	while (*q != sep && *q != '\n' && *q != '\r')
		q++;
	size_t rl = strlen(repl);
	*newn = n - (size_t)(q - p) + rl;
	char *o = malloc(*newn + 1);
	memcpy(o, s, (size_t)(p - s));
	memcpy(o + (p - s), repl, rl);
	memcpy(o + (p - s) + rl, q, n - (size_t)(q - s));
	o[*newn] = 0;
	return o;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void corpus_value_edits(void **state)
{
	(void)state;
	for (size_t i = 0; i < g_nfiles; i++) {
		cfile *f = &g_files[i];
		nad_model *m = decode_ok(f->data, f->n, f->name);
		uint32_t t = busiest_track(m), k = m->tracks[t].n_keys / 2;
		float old = m->tracks[t].keys[k].v[2];
		float nv = old + 1.25f;
		char nvs[32];
		snprintf(nvs, sizeof(nvs), "%.9g", (double)nv);
		size_t koff = nad_key_offset(m, t, k);
		assert_true(koff != SIZE_MAX);
		uint8_t *want = malloc(f->n);
		memcpy(want, f->data, f->n);
		put_le32(want + koff + 8, lfs_f32_bits(nv));

		lfs_sb sb = { 0 };
		lfs_error err;
		uint8_t *out;
		size_t on, tn;

		/* anim.txt: find "track" line t, then key row k */
		assert_int_equal(nad_text_write(m, &sb, &err), LFS_OK);
		size_t ln = 0, seen = 0;
		const char *line;
		for (;; ln++) {
			line = nth_line(sb.data, sb.len, ln);
			assert_non_null(line);
			if (!strncmp(line, "track ", 6) && seen++ == t)
				break;
		}
		/* skip "keys", the legend comment, then k rows */
		line = nth_line(sb.data, sb.len, ln + 3 + k);
		char *txt = replace_field(sb.data, sb.len, line, 2, ' ', nvs, &tn);
		assert_int_equal(lfs_views_apply("x.nad", f->data, f->n, "anim.txt", txt, tn, &out, &on, &err),
				 LFS_OK);
		lfs_assert_same_bytes(out, on, want, f->n, "anim.txt edit");
		free(out);
		free(txt);
		lfs_sb_free(&sb);

		/* track CSV: row k + 1 (after the header), column x */
		assert_int_equal(nad_csv_track_write(&m->tracks[t], &sb, &err), LFS_OK);
		char **names = nad_track_names(m);
		char vp[300];
		snprintf(vp, sizeof(vp), "tracks/%s.csv", names[t]);
		nad_track_names_free(names, m->n_tracks);
		line = nth_line(sb.data, sb.len, k + 1);
		txt = replace_field(sb.data, sb.len, line, 2, ',', nvs, &tn);
		assert_int_equal(lfs_views_apply("x.nad", f->data, f->n, vp, txt, tn, &out, &on, &err), LFS_OK);
		lfs_assert_same_bytes(out, on, want, f->n, "csv edit");
		free(out);
		free(txt);

		/* deleting CSV row k removes exactly that key */
		const char *l2 = nth_line(sb.data, sb.len, k + 2);
		size_t cut = (size_t)(l2 - line);
		txt = malloc(sb.len);
		memcpy(txt, sb.data, (size_t)(line - sb.data));
		memcpy(txt + (line - sb.data), l2, sb.len - (size_t)(l2 - sb.data));
		assert_int_equal(lfs_views_apply("x.nad", f->data, f->n, vp, txt, sb.len - cut, &out, &on, &err),
				 LFS_OK);
		nad_track *tr = &m->tracks[t];
		memmove(&tr->keys[k], &tr->keys[k + 1], (tr->n_keys - k - 1) * sizeof(nad_key));
		tr->n_keys--;
		uint8_t *exp;
		size_t en;
		assert_int_equal(nad_encode(m, &exp, &en, &err), LFS_OK);
		assert_int_equal(en, f->n - NAD_KEY_SIZE);
		lfs_assert_same_bytes(out, on, exp, en, "csv row delete");
		free(exp);
		free(out);
		free(txt);
		lfs_sb_free(&sb);

		/* tags.csv: change the type of the first tag */
		if (m->n_tags) {
			uint32_t nt = (m->tags[0].type + 1) % NAD_TAG_NAMED;
			size_t toff = f->n - m->n_trailing - (size_t)m->n_tags * NAD_TAG_SIZE;
			memcpy(want, f->data, f->n);
			put_le32(want + toff + 4, nt);
			assert_int_equal(nad_csv_tags_write(m, &sb, &err), LFS_OK);
			line = nth_line(sb.data, sb.len, 1);
			txt = replace_field(sb.data, sb.len, line, 1, ',', nad_tag_name(nt), &tn);
			assert_int_equal(
				lfs_views_apply("x.nad", f->data, f->n, "tags.csv", txt, tn, &out, &on, &err), LFS_OK);
			lfs_assert_same_bytes(out, on, want, f->n, "tags.csv edit");
			free(out);
			free(txt);
			lfs_sb_free(&sb);
		}
		free(want);
		nad_model_free(m);
	}
}

/* ---- generated files ------------------------------------------------------------------------------ */

static nad_track *add_track(nad_model *m, uint32_t bone, uint32_t type, uint32_t n_keys)
{
	m->tracks = realloc(m->tracks, (m->n_tracks + 1) * sizeof(*m->tracks));
	nad_track *t = &m->tracks[m->n_tracks++];
	memset(t, 0, sizeof(*t));
	t->bone = bone;
	t->type = type;
	t->n_keys = n_keys;
	t->keys = n_keys ? calloc(n_keys, sizeof(nad_key)) : NULL;
	for (uint32_t k = 0; k < n_keys; k++)
		for (unsigned j = 0; j < NAD_KEY_FLOATS; j++)
			t->keys[k].v[j] = (float)k * 0.1f + (float)j * 1e-3f - (float)bone;
	return t;
}

/* Variant @p v of a generated file (see the switch). */
static nad_model *generated(int v)
{
	nad_model *m = calloc(1, sizeof(*m));
	m->version = NAD_VERSION;
	m->duration = 29;
	switch (v) {
	case 0: /* no tracks, no tags, no trailing bytes */
		m->duration = 0;
		break;
	case 1: { /* every track type incl. scale and unknown types, an empty track */
		add_track(m, 0, NAD_TRACK_ROTATION, 3);
		add_track(m, 0, NAD_TRACK_TRANSLATION, 2);
		add_track(m, 4, NAD_TRACK_SCALE, 5);
		add_track(m, 7, 3, 1);
		add_track(m, 9, 0xFFFFFFFFu, 2);
		add_track(m, 0xFFFFFFFFu, NAD_TRACK_ROTATION, 0);
		m->flags = 0x80000001u;
		break;
	}
	case 2: { /* every named tag, unknown tag types, odd trailing bytes */
		add_track(m, 1, NAD_TRACK_ROTATION, 2);
		m->n_tags = NAD_TAG_NAMED + 3;
		m->tags = calloc(m->n_tags, sizeof(*m->tags));
		for (uint32_t i = 0; i < m->n_tags; i++) {
			m->tags[i].frame = (float)i * 1.5f;
			m->tags[i].type = i < NAD_TAG_NAMED ? i : (i == NAD_TAG_NAMED ? 19u : 0xFFFFFFFFu - i);
		}
		m->n_trailing = 37; /* two hex rows */
		m->trailing = malloc(37);
		for (int i = 0; i < 37; i++)
			m->trailing[i] = (uint8_t)(i * 37 + 1);
		break;
	}
	case 3: { /* special floats: NaN payloads, ±inf, -0, denormals, extremes */
		nad_track *t = add_track(m, 2, NAD_TRACK_ROTATION, 2);
		const uint32_t sp[NAD_KEY_FLOATS] = {
			0x7FC00000u, 0x7FC00001u, 0xFFC00000u, 0x7F800001u, 0xFFBFFFFFu,
			0x7F800000u, 0xFF800000u, 0x80000000u, 0x00000001u, 0x807FFFFFu,
			0x7F7FFFFFu, 0xFF7FFFFFu, 0x00800000u, 0x3DCCCCCDu,
		};
		for (unsigned j = 0; j < NAD_KEY_FLOATS; j++)
			t->keys[1].v[j] = lfs_f32_from_bits(sp[j]);
		m->duration = lfs_f32_from_bits(0x7FA00000u); /* signalling NaN */
		m->n_tags = 1;
		m->tags = calloc(1, sizeof(*m->tags));
		m->tags[0].frame = lfs_f32_from_bits(0xFFFFFFFFu);
		m->tags[0].type = 18;
		break;
	}
	case 4: /* duplicate (bone, type) pairs: ~2, ~3 names */
		add_track(m, 3, NAD_TRACK_ROTATION, 1);
		add_track(m, 3, NAD_TRACK_ROTATION, 2);
		add_track(m, 3, NAD_TRACK_TRANSLATION, 1);
		add_track(m, 3, NAD_TRACK_ROTATION, 1);
		add_track(m, 8, 5, 1);
		add_track(m, 8, 5, 1);
		m->n_trailing = 4; /* the hypov8 zero-tag pad */
		m->trailing = calloc(1, 4);
		break;
	}
	return m;
}

static void generated_files_roundtrip(void **state)
{
	(void)state;
	for (int v = 0; v < 5; v++) {
		nad_model *m = generated(v);
		uint8_t *d;
		size_t n;
		lfs_error err;
		assert_int_equal(nad_encode(m, &d, &n, &err), LFS_OK);
		assert_int_equal(n, nad_encoded_size(m));
		assert_true(nad_is_binary(d, n));
		char what[32];
		snprintf(what, sizeof(what), "generated %d", v);
		nad_model *m2 = decode_ok(d, n, what);
		assert_int_equal(m2->n_tracks, m->n_tracks);
		assert_int_equal(m2->n_tags, m->n_tags);
		assert_int_equal(m2->n_trailing, m->n_trailing);
		assert_int_equal(lfs_f32_bits(m2->duration), lfs_f32_bits(m->duration));
		for (uint32_t t = 0; t < m->n_tracks; t++)
			for (uint32_t k = 0; k < m->tracks[t].n_keys; k++)
				for (unsigned j = 0; j < NAD_KEY_FLOATS; j++)
					assert_int_equal(lfs_f32_bits(m2->tracks[t].keys[k].v[j]),
							 lfs_f32_bits(m->tracks[t].keys[k].v[j]));
		uint8_t *d2;
		size_t n2;
		assert_int_equal(nad_encode(m2, &d2, &n2, &err), LFS_OK);
		lfs_assert_same_bytes(d2, n2, d, n, what);
		free(d2);
		check_views_roundtrip(d, n, what);
		if (v == 4) {
			char **names = nad_track_names(m2);
			assert_string_equal(names[0], "bone3.rotation");
			assert_string_equal(names[1], "bone3.rotation~2");
			assert_string_equal(names[2], "bone3.translation");
			assert_string_equal(names[3], "bone3.rotation~3");
			assert_string_equal(names[4], "bone8.type5");
			assert_string_equal(names[5], "bone8.type5~2");
			nad_track_names_free(names, m2->n_tracks);
		}
		if (v == 3) { /* the NaN payloads appear in the text as bits */
			lfs_sb sb = { 0 };
			assert_int_equal(nad_text_write(m2, &sb, &err), LFS_OK);
			assert_non_null(strstr(sb.data, "duration nan:7fa00000\n"));
			assert_non_null(strstr(sb.data, " nan:7fc00001 nan:ffc00000 nan:7f800001 "));
			assert_non_null(strstr(sb.data, " inf -inf -0 1e-45 "));
			lfs_sb_free(&sb);
		}
		free(d);
		nad_model_free(m2);
		nad_model_free(m);
	}
}

static void tag_and_type_names(void **state)
{
	(void)state;
	static const char *const want[NAD_TAG_NAMED] = {
		"lwalk", "rwalk", "lrun", "rrun", "fire", "strike", "cast", "fall", "project", "flap",
		"suck", "idle", "idle2", "codex1", "codex2", "codex3", "repeat", "repeatto", "throwdeath",
	};
	for (uint32_t i = 0; i < NAD_TAG_NAMED; i++) {
		assert_string_equal(nad_tag_name(i), want[i]);
		assert_int_equal(nad_tag_from_name(want[i], strlen(want[i])), (int)i);
	}
	assert_null(nad_tag_name(NAD_TAG_NAMED));
	assert_int_equal(nad_tag_from_name("RepeatTo", 8), 17);
	assert_int_equal(nad_tag_from_name("repeat_to", 9), 17);
	assert_int_equal(nad_tag_from_name("Throwdeath", 10), 18);
	assert_int_equal(nad_tag_from_name("lwal", 4), -1);
	assert_string_equal(nad_track_type_name(2), "scale");
	assert_null(nad_track_type_name(3));
	assert_int_equal(nad_track_type_from_name("Translation", 11), 1);
}

/* ---- hostile input ---------------------------------------------------------------------------------- */

/* Hostile trials: a clean failure with a message (offset inside the input),
 * or a model that re-encodes to exactly the input. */
static const lfs_hostile k_plain = { &k_nad, true, false, NULL, NULL };

typedef struct cut_ctx {
	const cfile *f;
	size_t end; /* bytes before the trailing ones */
} cut_ctx;

/* the counts fix the layout: a cut file decodes exactly when the cut only
 * removes trailing bytes */
static void check_cut(void *ctx, const uint8_t *d, size_t cut, size_t trial, const void *model,
		      const lfs_error *err)
{
	(void)trial, (void)err;
	const cut_ctx *c = ctx;
	if ((model != NULL) != (cut >= c->end))
		fail_msg("%s cut at %zu of %zu: decode %s", c->f->name, cut, c->f->n,
			 model ? "succeeded" : "failed");
	/* the cheap header test lets every decodable file through, and refuses
	 * one too short for the header and tag count (16 + 4 bytes) */
	if (model && !nad_is_binary(d, cut))
		fail_msg("%s cut at %zu decodes but nad_is_binary() refuses it", c->f->name, cut);
	if (cut < 20 && nad_is_binary(d, cut))
		fail_msg("%s cut at %zu: nad_is_binary() takes %zu bytes", c->f->name, cut, cut);
}

static void hostile_truncation(void **state)
{
	(void)state;
	lfs_tally t = { 0 };
	for (size_t i = 0; i < g_nfiles; i++) {
		cfile *f = &g_files[i];
		nad_model *m = decode_ok(f->data, f->n, f->name);
		cut_ctx c = { f, f->n - m->n_trailing };
		nad_model_free(m);
		lfs_hostile h = { &k_nad, true, false, check_cut, &c };
		lfs_hostile_truncations(&h, f->data, f->n, 64, false, &t);
		for (size_t cut = 1; cut < 20 && cut < f->n; cut++) /* the cuts above miss these */
			check_cut(&c, f->data, cut, 0, NULL, NULL);
		uint8_t *d = malloc(c.end ? c.end : 1); /* exact size: ASan sees overreads */
		memcpy(d, f->data, c.end);
		lfs_hostile_try(&h, d, c.end, 64, &t);
		free(d);
	}
	printf("truncations: %zu, decoded %zu\n", t.ok + t.failed, t.ok);
	assert_int_equal(t.ok, g_nfiles);
}

/* every 100th mutated file: the views build or fail cleanly */
static void views_sometimes(void *ctx, const uint8_t *d, size_t n, size_t trial, const void *model,
			    const lfs_error *e)
{
	(void)ctx, (void)model, (void)e;
	if (trial % 100 == 0 && nad_is_binary(d, n)) {
		lfs_viewset vs;
		lfs_error err;
		lfs_err r = lfs_views_build("x.nad", d, n, NULL, &vs, &err);
		if (r == LFS_OK) {
			if (!vs.n_views)
				fail_msg("trial %zu: views built, but none", trial);
			lfs_viewset_free(&vs);
		} else if ((r != LFS_ERR_CORRUPT && r != LFS_ERR_UNSUPPORTED && r != LFS_ERR_NOTFORMAT) ||
			   !err.msg[0]) {
			fail_msg("trial %zu: refused with code %d and message '%s'", trial, (int)r, err.msg);
		}
	}
}

static void hostile_flips(void **state)
{
	(void)state;
	size_t flips = lfs_fuzz_count(1000);
	lfs_tally t = { 0 };
	lfs_hostile h = { &k_nad, true, false, views_sometimes, NULL };
	for (size_t i = 0; i < g_nfiles; i++) {
		/* 1..4 bit flips; bias half the flips into the header and track headers */
		lfs_hostile_mutations(&h, &g_rng, g_files[i].data, g_files[i].n, flips, 4, 64,
				      false, &t);
	}
	printf("byte flips: %zu, decoded %zu\n", t.ok + t.failed, t.ok);
	assert_true(t.ok > 0 && t.failed > 0);
}

static const char mut_chars[] = "0123456789 \n#\".-+eEx,:nafi\t\\";

static char *mutate_text(const char *s, size_t n, size_t *on)
{
	char *o = malloc(n + 8);
	memcpy(o, s, n);
	*on = n;
	size_t nm = 1 + lfs_rng_below(&g_rng, 3);
	for (size_t j = 0; j < nm && *on; j++) {
		size_t at = (size_t)lfs_rng_below(&g_rng, *on);
		switch (lfs_rng_below(&g_rng, 4)) {
		case 0: /* replace */
			o[at] = lfs_rng_below(&g_rng, 8)
					? mut_chars[lfs_rng_below(&g_rng, sizeof(mut_chars) - 1)]
					: (char)lfs_rng_u8(&g_rng);
			break;
		case 1: /* delete */
			memmove(o + at, o + at + 1, *on - at - 1);
			(*on)--;
			break;
		case 2: /* cut the rest */
			*on = at;
			break;
		default: /* duplicate a byte */
			if (*on < n + 8) {
				memmove(o + at + 1, o + at, *on - at);
				(*on)++;
			}
			break;
		}
	}
	return o;
}

static void hostile_text(void **state)
{
	(void)state;
	size_t ok = 0, total = 0;
	/* the small files: mutating a 200 KB text 1000 times per file is slow
	 * under ASan and adds nothing the small ones do not cover */
	for (size_t i = 0; i < g_nfiles; i++) {
		cfile *f = &g_files[i];
		if (f->n > 12000)
			continue;
		lfs_viewset vs;
		lfs_error err;
		assert_int_equal(lfs_views_build("x.nad", f->data, f->n, NULL, &vs, &err), LFS_OK);
		for (size_t v = 0; v < vs.n_views; v++) {
			const lfs_view *vw = &vs.views[v];
			size_t reps = strcmp(vw->path, "anim.txt") ? 60 : 400;
			for (size_t k = 0; k < reps; k++) {
				size_t mn;
				char *mt = mutate_text(vw->data, vw->size, &mn);
				uint8_t *out = NULL;
				size_t on;
				memset(&err, 0, sizeof(err));
				lfs_err r = lfs_views_apply("x.nad", f->data, f->n, vw->path, mt, mn, &out, &on, &err);
				total++;
				if (r == LFS_OK) {
					ok++;
					/* whatever was accepted decodes again */
					lfs_tally again = { 0 };
					assert_true(lfs_hostile_try(&k_plain, out, on, 0, &again));
					free(out);
				} else {
					assert_int_equal(r, LFS_ERR_PARSE);
					size_t pl = strlen(vw->path);
					if (strncmp(err.msg, vw->path, pl) || err.msg[pl] != ':')
						fail_msg("message without file:line:col: %s", err.msg);
					assert_true(err.line >= 1 && err.col >= 1);
				}
				free(mt);
			}
		}
		lfs_viewset_free(&vs);
	}
	printf("mutated views: %zu, accepted %zu\n", total, ok);
	assert_true(total > 0 && ok < total);
}

/* ---- parser messages ---------------------------------------------------------------------------- */

static const char mini[] = "version 3\n"
			   "flags 0\n"
			   "duration 10\n"
			   "tracks 1\n"
			   "track rotation 0\n"
			   "  keys 1\n"
			   "    0 inf 1 2 3 0 0 0 0 0 0 0 0 0\n"
			   "endtrack\n"
			   "tags 1\n"
			   "  5 strike\n"
			   "trailing 0\n";

/* Replace line @p ln (1-based) of mini with @p repl ("" deletes it) and parse. */
static void text_error(int ln, const char *repl, const char *want)
{
	char buf[1024];
	const char *p = mini;
	size_t o = 0;
	for (int l = 1; *p; l++) {
		const char *e = strchr(p, '\n') + 1;
		if (l == ln) {
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s", repl);
		} else {
			memcpy(buf + o, p, (size_t)(e - p));
			o += (size_t)(e - p);
		}
		p = e;
	}
	nad_model *m = NULL;
	lfs_error err;
	lfs_err r = nad_text_parse("anim.txt", buf, o, &m, &err);
	if (!want) {
		if (r)
			fail_msg("unexpected error: %s", err.msg);
		nad_model_free(m);
		return;
	}
	assert_int_equal(r, LFS_ERR_PARSE);
	assert_null(m);
	assert_string_equal(err.msg, want);
}

static void parser_messages(void **state)
{
	(void)state;
	text_error(0, "", NULL); /* the unchanged text parses */
	text_error(1, "version 4\n", "anim.txt:1:9: error: 4 is out of range 3..3");
	text_error(2, "flag 0\n", "anim.txt:2:1: error: expected 'flags', found 'flag'");
	text_error(3, "duration ten\n", "anim.txt:3:10: error: expected a number, found 'ten'");
	text_error(5, "track spin 0\n", "anim.txt:5:7: error: unknown track type 'spin'");
	text_error(7, "    0 inf 1 2 3 0 0 0 0 0 0 0 0\n",
		   "anim.txt:7:32: error: expected 14 numbers for key 0 of 1, found 13 values");
	text_error(7, "    0 inf 1 2 3 0 0 0 0 0 0 0 0 0 9\n",
		   "anim.txt:7:35: error: expected 14 numbers for key 0 of 1, found 15 values");
	text_error(8, "", "anim.txt:8:1: error: expected 'endtrack' after 1 keys, found 'tags'");
	text_error(10, "  5 jump\n", "anim.txt:10:5: error: unknown tag 'jump'");
	text_error(10, "  5 codex2\n", NULL);
	text_error(10, "  5 4000000000\n", NULL);
	text_error(11, "trailing 2\n", "anim.txt:12:1: error: unexpected end of text, expected hex bytes (0 of 2 read)");
	text_error(11, "trailing 1\n  0g\n", "anim.txt:12:3: error: '0g' is not a hex byte");
	text_error(11, "trailing 0\nextra\n", "anim.txt:12:1: error: text after the last trailing byte: 'extra'");
	text_error(4, "tracks 0\n", "anim.txt:5:1: error: more track blocks than 'tracks 0' says");
	text_error(4, "tracks 2\n", "anim.txt:9:1: error: expected 'track' (track 1 of 2), found 'tags'");
	text_error(9, "tags 1\n  5 \"strike\n", "anim.txt:10:5: error: unterminated quoted name");

	/* CSV */
	lfs_error err;
	nad_key *k;
	nad_tag *t;
	uint32_t n;
	const char *bad_hdr = "frame,scale,x,y,z,c_x,c_y,c_z,b_x,b_y,b_z,a_x,a_y,a_z\r\n";
	assert_int_equal(nad_csv_track_parse("tracks/bone0.rotation.csv", bad_hdr, strlen(bad_hdr),
					     &k, &n, &err),
			 LFS_ERR_PARSE);
	assert_string_equal(err.msg, "tracks/bone0.rotation.csv:1:7: error: header: expected column "
				     "'frame_scale' (expected 'frame,frame_scale,x,y,z,c_x,c_y,c_z,"
				     "b_x,b_y,b_z,a_x,a_y,a_z')");
	char row[512];
	snprintf(row, sizeof(row), "%s\r\n0,1,2,3,4,5,6,7,8,9,10,11,12\r\n", nad_csv_track_header);
	assert_int_equal(nad_csv_track_parse("t.csv", row, strlen(row), &k, &n, &err), LFS_ERR_PARSE);
	assert_string_equal(err.msg, "t.csv:2:29: error: expected 14 fields (a key), found 13");
	snprintf(row, sizeof(row), "%s\n\n0,1,2,3,4,5,6,7,8,9,10,11,12,zz\n", nad_csv_track_header);
	assert_int_equal(nad_csv_track_parse("t.csv", row, strlen(row), &k, &n, &err), LFS_ERR_PARSE);
	assert_string_equal(err.msg, "t.csv:3:30: error: expected a number, found 'zz'");
	snprintf(row, sizeof(row), "%s\n 0, inf ,2,3,4,5,6,7,8,9,10,11,12, nan:7fc00002\n",
		 nad_csv_track_header);
	assert_int_equal(nad_csv_track_parse("t.csv", row, strlen(row), &k, &n, &err), LFS_OK);
	assert_int_equal(n, 1);
	assert_int_equal(lfs_f32_bits(k[0].v[1]), 0x7F800000u);
	assert_int_equal(lfs_f32_bits(k[0].v[13]), 0x7FC00002u);
	free(k);
	const char *tags = "frame,tag\r\n3,strike\r\n4.5,jump\r\n";
	assert_int_equal(nad_csv_tags_parse("tags.csv", tags, strlen(tags), &t, &n, &err),
			 LFS_ERR_PARSE);
	assert_string_equal(err.msg,
			    "tags.csv:3:5: error: unknown tag 'jump' (a name lwalk .. throwdeath or a number)");
	tags = "frame,tag\r\n3,strike,1\r\n";
	assert_int_equal(nad_csv_tags_parse("tags.csv", tags, strlen(tags), &t, &n, &err),
			 LFS_ERR_PARSE);
	assert_string_equal(err.msg, "tags.csv:2:10: error: expected 2 fields (frame,tag), found 3");
	tags = "\xEF\xBB\xBF" "frame,tag\n7,Fire\n";
	assert_int_equal(nad_csv_tags_parse("tags.csv", tags, strlen(tags), &t, &n, &err), LFS_OK);
	assert_int_equal(n, 1);
	assert_int_equal(t[0].type, 4);
	assert_true(t[0].frame == 7.0f);
	free(t);
	assert_int_equal(nad_csv_tags_parse("tags.csv", "", 0, &t, &n, &err), LFS_ERR_PARSE);
	assert_string_equal(err.msg, "tags.csv:1:1: error: expected the header row 'frame,tag'");

	/* views that do not exist */
	uint8_t *out;
	size_t on;
	const cfile *f = &g_files[0];
	assert_int_equal(lfs_views_apply("x.nad", f->data, f->n, "tracks/bone999.rotation.csv", "", 0, &out,
					&on, &err),
			 LFS_ERR_UNSUPPORTED);
	assert_int_equal(lfs_views_apply("x.nad", f->data, f->n, "model.txt", "", 0, &out, &on, &err),
			 LFS_ERR_UNSUPPORTED);
}

static void decoder_messages(void **state)
{
	(void)state;
	uint8_t h[40] = { 3, 0, 0, 0, 1, 0, 0, 0 };
	nad_model *m;
	lfs_error err;
	/* one track claiming 2 keys in a 40-byte file */
	h[16] = 2;
	assert_int_equal(nad_decode(h, sizeof(h), &m, &err), LFS_ERR_CORRUPT);
	assert_string_equal(err.msg, "offset 0x10 (track header): track 0: 2 keys of 56 bytes run "
				     "past the end (12 bytes left)");
	h[16] = 0;
	/* 0 keys, then tag count 3 with 8 bytes left */
	h[28] = 3;
	assert_int_equal(nad_decode(h, sizeof(h), &m, &err), LFS_ERR_CORRUPT);
	assert_string_equal(err.msg,
			    "offset 0x1c (tag count): 3 tags of 8 bytes run past the end (8 bytes left)");
	h[28] = 1;
	assert_int_equal(nad_decode(h, sizeof(h), &m, &err), LFS_OK);
	assert_int_equal(m->n_trailing, 0);
	nad_model_free(m);
	h[0] = 4;
	assert_int_equal(nad_decode(h, sizeof(h), &m, &err), LFS_ERR_UNSUPPORTED);
	assert_false(nad_is_binary(h, sizeof(h)));
	h[0] = 3;
	h[4] = 0xFF;
	assert_int_equal(nad_decode(h, sizeof(h), &m, &err), LFS_ERR_CORRUPT);
	assert_string_equal(err.msg, "offset 0x4 (NAD header): 255 tracks cannot fit in a file of 40 bytes");
	assert_false(nad_is_binary(h, sizeof(h)));
	assert_int_equal(nad_decode(h, 10, &m, &err), LFS_ERR_NOTFORMAT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(corpus_bytes_roundtrip),
		cmocka_unit_test(corpus_matches_manifest),
		cmocka_unit_test(corpus_text_and_csv_roundtrip),
		cmocka_unit_test(corpus_view_names),
		cmocka_unit_test(corpus_value_edits),
		cmocka_unit_test(generated_files_roundtrip),
		cmocka_unit_test(tag_and_type_names),
		cmocka_unit_test(hostile_truncation),
		cmocka_unit_test(hostile_flips),
		cmocka_unit_test(hostile_text),
		cmocka_unit_test(parser_messages),
		cmocka_unit_test(decoder_messages),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
