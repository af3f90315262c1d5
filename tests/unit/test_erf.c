/**
 * @file test_erf.c
 * ERF family codec (src/formats/nwnarchive/erf.h) on every HAK/ERF/MOD of the archive
 * corpus: every archive decodes and lists all its entries (the MANIFEST's
 * count and the header's); every payload is the bytes that BioWare's ERF
 * layout puts there, found by a minimal reader written here (not the
 * codec's); the generated archives' payloads equal the loose files they were
 * built from (gen/inputs.tsv), the E1/zstd ones after decompression;
 * encode(decode(x)) == x; edits keep every other byte; resref rules; and
 * truncated / bit-flipped archives decode or fail cleanly (run under ASan in
 * CI). Deterministic (testrng.h; LFS_TEST_SEED replays).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive_corpus.h"
#include "corpus.h"
#include "formats/nwnarchive/erf.h"
#include "formats/nwnarchive/restype.h"
#include "testrng.h"


/* --- the test's own reader: BioWare ERF header + lists, nothing shared --- */
static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

typedef struct mini_entry {
	char resref[33];
	uint32_t id, offset, size, comp, usize;
	uint16_t type;
} mini_entry;

/* entries of @p d per the ERF document (V1.0 24/8, V1.1 NWN2 40/8, E1.0 44/16) */
static mini_entry *mini_read(const uint8_t *d, size_t n, uint32_t *count)
{
	assert_true(n >= 160);
	*count = le32(d + 16);
	uint32_t ok = le32(d + 24), orr = le32(d + 28);
	bool e1 = !memcmp(d + 4, "E1.0", 4), v11 = !memcmp(d + 4, "V1.1", 4);
	size_t rl = v11 ? 32 : 16, ks = e1 ? 44 : v11 ? 40 : 24, rs = e1 ? 16 : 8;
	mini_entry *m = calloc(*count + 1, sizeof(*m));
	for (uint32_t i = 0; i < *count; i++) {
		const uint8_t *k = d + ok + i * ks, *r = d + orr + i * rs;
		assert_true(ok + (i + 1) * ks <= n && orr + (i + 1) * rs <= n);
		memcpy(m[i].resref, k, rl);
		m[i].id = le32(k + rl);
		m[i].type = (uint16_t)(k[rl + 4] | k[rl + 5] << 8);
		m[i].offset = le32(r);
		m[i].size = le32(r + 4);
		m[i].comp = e1 ? le32(r + 8) : 0;
		m[i].usize = e1 ? le32(r + 12) : m[i].size;
	}
	return m;
}

static void check_against_layout(const lfs_arch_row *row, const uint8_t *d, size_t n,
				 const lfs_erf *a)
{
	uint32_t cnt;
	mini_entry *m = mini_read(d, n, &cnt);
	assert_int_equal(a->n, cnt);
	assert_int_equal(a->n, row->entries);
	for (uint32_t i = 0; i < cnt; i++) {
		const lfs_erf_entry *e = &a->e[i];
		assert_string_equal(e->resref, m[i].resref);
		assert_int_equal(e->type, m[i].type);
		assert_int_equal(e->res_id, m[i].id);
		assert_int_equal(e->offset, m[i].offset);
		assert_int_equal(e->size, m[i].size);
		assert_true(m[i].offset + (size_t)m[i].size <= n);
		uint8_t *p;
		size_t pn;
		lfs_error err = { 0 };
		lfs_err rc = lfs_erf_read(a, i, &p, &pn, &err);
		if (rc)
			fail_msg("%s entry %u: %s", row->file, i, err.msg);
		assert_int_equal(pn, m[i].usize);
		if (!m[i].comp)
			assert_memory_equal(p, d + m[i].offset, pn ? pn : 0);
		else
			assert_memory_equal(d + m[i].offset, "XRES", 4);
		free(p);
	}
	free(m);
}

/* Every corpus archive: decodes, lists all entries, payloads at the layout's offsets,
 * round trip byte for byte. */
static void test_corpus_decode_roundtrip(void **state)
{
	(void)state;
	size_t seen = 0;
	for (size_t r = 0; r < lfs_arch_nrows; r++) {
		if (!lfs_arch_is_erf(&lfs_arch_rows[r]))
			continue;
		size_t n;
		uint8_t *d = lfs_read_file(lfs_arch_rows[r].path, &n);
		assert_non_null(d);
		lfs_erf *a;
		lfs_error err = { 0 };
		if (lfs_erf_decode(d, n, &a, &err))
			fail_msg("%s: %s", lfs_arch_rows[r].file, err.msg);
		check_against_layout(&lfs_arch_rows[r], d, n, a);
		uint8_t *o;
		size_t on;
		assert_int_equal(lfs_erf_encode(a, &o, &on, &err), LFS_OK);
		assert_int_equal(on, n);
		if (memcmp(o, d, n))
			fail_msg("%s: re-encoded archive differs", lfs_arch_rows[r].file);
		free(o);
		lfs_erf_free(a);
		free(d);
		seen++;
	}
	assert_int_equal(seen, 16); /* README: 16 ERF-family files */
}

static lfs_erf *load(const char *rel, uint8_t **d, size_t *n)
{
	char path[512];
	lfs_path(path, sizeof(path), "%s/archives/%s", lfs_corpus_dir_or_skip(), rel);
	*d = lfs_read_file(path, n);
	assert_non_null(*d);
	lfs_erf *a;
	lfs_error err = { 0 };
	if (lfs_erf_decode(*d, *n, &a, &err))
		fail_msg("%s: %s", rel, err.msg);
	return a;
}

static void entry_name(const lfs_erf_entry *e, char *buf, size_t size)
{
	char ext[16];
	snprintf(buf, size, "%s.%s", e->resref, lfs_restype_name(e->type, ext, sizeof(ext)));
}

/* gen/: every payload equals the loose file it was built from; E1 after zstd. */
static void test_gen_payloads_equal_inputs(void **state)
{
	(void)state;
	static const char *const files[] = { "gen/nwn_erf/models_v1.hak",
					     "gen/nwn_erf/models_e1zstd.hak",
					     "gen/nwn_erf/small_e1.erf" };
	static const uint32_t expect[] = { 35, 35, 3 };
	for (size_t f = 0; f < 3; f++) {
		uint8_t *d;
		size_t n;
		lfs_erf *a = load(files[f], &d, &n);
		uint32_t matched = 0, mdl = 0, compared_loose = 0;
		for (uint32_t i = 0; i < a->n; i++) {
			char name[64];
			entry_name(&a->e[i], name, sizeof(name));
			uint8_t *p;
			size_t pn;
			lfs_error err = { 0 };
			if (lfs_erf_read(a, i, &p, &pn, &err))
				fail_msg("%s %s: %s", files[f], name, err.msg);
			bool loose = false;
			if (!lfs_arch_equals_input(name, p, pn, &loose))
				fail_msg("%s: %s differs from its input file", files[f], name);
			compared_loose += loose;
			matched++;
			mdl += a->e[i].type == LFS_RESTYPE_MDL;
			if (f == 1)
				assert_int_equal(a->e[i].compression, 1);
			free(p);
		}
		assert_int_equal(matched, expect[f]);
		fprintf(stderr, "%s: %u payloads equal their inputs (%u also byte-compared with the loose file)\n",
			files[f], matched, compared_loose);
		if (f < 2)
			assert_true(compared_loose >= 9); /* the models are in the corpus tree */
		if (f < 2)
			assert_int_equal(mdl, 9);
		lfs_erf_free(a);
		free(d);
	}
}

/* Header details the note describes survive decoding. */
static void test_header_details(void **state)
{
	(void)state;
	uint8_t *d;
	size_t n;
	lfs_erf *a = load("real/nwnprc/nwangband.hak", &d, &n);
	assert_int_equal(a->n, 0);
	assert_int_equal(a->n_loc, 1);
	assert_int_equal(a->loc[0].size, 35);
	assert_memory_equal(a->loc[0].text, "Test: Module packed with ModPacker.", 35);
	lfs_erf_free(a);
	free(d);

	a = load("real/nwn-lib-d/module.mod", &d, &n);
	assert_int_equal(a->version, LFS_ERF_V11);
	assert_int_equal(a->resref_len, 32);
	assert_int_equal(a->n_loc, 11);
	assert_int_equal(a->loc[7].lang, 128);
	uint32_t i = lfs_erf_find(a, "script1", 2009);
	assert_true(i != UINT32_MAX);
	assert_int_equal(a->e[i].size, 0);
	char ext[16];
	uint16_t t = 0;
	for (i = 0; i < a->n && a->e[i].type != 3021; i++)
		;
	assert_true(i < a->n);
	assert_string_equal(lfs_restype_name(a->e[i].type, ext, sizeof(ext)), "type3021");
	assert_true(lfs_restype_from_ext("type3021", &t) && t == 3021);
	assert_true(lfs_restype_from_ext("MTR", &t) && t == 2072);
	assert_false(lfs_restype_from_ext("type70000", &t));
	assert_false(lfs_restype_from_ext("zzz", &t));
	assert_string_equal(lfs_restype_ext(2036), "ltr");
	lfs_erf_free(a);
	free(d);

	a = load("real/rollnw/test_module.mod", &d, &n);
	assert_int_equal(a->gap_n[2], 8u * a->n); /* toolset: 8·N zero bytes */
	assert_int_equal(lfs_erf_header_u32(a, 40), 0xFFFFFFFFu);
	assert_true(lfs_erf_find(a, "repute", 2038) != UINT32_MAX); /* stored "Repute" */
	lfs_erf_free(a);
	free(d);

	/* 10 broken entries: listed, never dropped */
	a = load("real/nwnprc/prc_recipe_scroll_temp.mod", &d, &n);
	uint32_t broken = 0;
	for (i = 0; i < a->n; i++)
		broken += !a->e[i].resref[0] && a->e[i].type == 0 && a->e[i].size == 0;
	assert_int_equal(broken, 10);
	lfs_erf_free(a);
	free(d);
}

/* Resref rules: length, characters, duplicates (case-insensitive, per type). */
static void test_resref_rules(void **state)
{
	(void)state;
	lfs_error err = { 0 };
	assert_int_equal(lfs_resref_check("c_aribeth", 16, &err), LFS_OK);
	assert_int_equal(lfs_resref_check("CLS_FEAT_BARB", 16, &err), LFS_OK);
	assert_int_equal(lfs_resref_check("newtransition001", 16, &err), LFS_OK);
	assert_int_not_equal(lfs_resref_check("test_mtr_material", 16, &err), LFS_OK);
	assert_non_null(strstr(err.msg, "17 characters"));
	assert_int_equal(lfs_resref_check("test_mtr_material", 32, &err), LFS_OK);
	assert_int_not_equal(lfs_resref_check("", 16, &err), LFS_OK);
	assert_int_not_equal(lfs_resref_check("a-b", 16, &err), LFS_OK);
	assert_non_null(strstr(err.msg, "'-'") ? err.msg : strstr(err.msg, "0x2d"));
	assert_int_not_equal(lfs_resref_check("a b", 16, &err), LFS_OK);
	assert_int_not_equal(lfs_resref_check("caf\xc3\xa9", 16, &err), LFS_OK);

	uint8_t *d;
	size_t n;
	lfs_erf *a = load("real/rollnw/test_module.mod", &d, &n);
	uint32_t rep = lfs_erf_find(a, "Repute", 2038);
	assert_int_not_equal(lfs_erf_check_name(a, "REPUTE", 2038, UINT32_MAX, &err), LFS_OK);
	assert_non_null(strstr(err.msg, "already used"));
	assert_int_equal(lfs_erf_check_name(a, "REPUTE", 2038, rep, &err), LFS_OK);
	assert_int_equal(lfs_erf_check_name(a, "repute", 2017, UINT32_MAX, &err), LFS_OK);
	assert_int_not_equal(lfs_erf_add(a, "repute", 2038, (const uint8_t *)"x", 1, &err), LFS_OK);
	lfs_erf_free(a);
	free(d);
}

/* Edits: replace, add, rename, remove; every untouched payload and the header stay. */
static void edit_and_check(const char *rel)
{
	uint8_t *d;
	size_t n;
	lfs_erf *a = load(rel, &d, &n);
	uint32_t cnt = a->n;
	assert_true(cnt >= 3);
	lfs_error err = { 0 };
	static const uint8_t repl[] = "replaced payload\n";
	assert_int_equal(lfs_erf_set(a, 1, repl, sizeof(repl), &err), LFS_OK);
	assert_int_equal(lfs_erf_add(a, "new_res", 10, (const uint8_t *)"hello", 5, &err), LFS_OK);
	char old0[33];
	snprintf(old0, sizeof(old0), "%s", a->e[0].resref);
	assert_int_equal(lfs_erf_rename(a, 0, "renamed_0", a->e[0].type, &err), LFS_OK);
	uint8_t *o;
	size_t on;
	assert_int_equal(lfs_erf_encode(a, &o, &on, &err), LFS_OK);
	lfs_erf *b;
	if (lfs_erf_decode(o, on, &b, &err))
		fail_msg("%s edited: %s", rel, err.msg);
	assert_int_equal(b->n, cnt + 1);
	assert_memory_equal(b->header + 32, d + 32, 128); /* dates, StrRef, OID, reserved */
	assert_int_equal(b->n_loc, a->n_loc);
	assert_string_equal(b->e[0].resref, "renamed_0");
	assert_string_equal(b->e[cnt].resref, "new_res");
	for (uint32_t i = 0; i < b->n; i++) {
		uint8_t *p, *q;
		size_t pn, qn;
		assert_int_equal(lfs_erf_read(b, i, &p, &pn, &err), LFS_OK);
		if (i == 1) {
			assert_int_equal(pn, sizeof(repl));
			assert_memory_equal(p, repl, pn);
		} else if (i == cnt) {
			assert_int_equal(pn, 5);
			assert_memory_equal(p, "hello", 5);
		} else {
			assert_int_equal(lfs_erf_read(a, i, &q, &qn, &err), LFS_OK);
			assert_int_equal(pn, qn);
			assert_memory_equal(p, q, pn);
			/* untouched stored bytes (compressed too) are kept byte for byte */
			assert_int_equal(b->e[i].size, a->e[i].size);
			assert_memory_equal(b->e[i].data, a->e[i].data, a->e[i].size);
			free(q);
		}
		free(p);
	}
	/* rename back, drop the added entry, restore payload 1: the original again */
	assert_int_equal(lfs_erf_rename(b, 0, old0, b->e[0].type, &err), LFS_OK);
	lfs_erf_remove(b, cnt);
	uint8_t *d2;
	size_t n2;
	lfs_erf *orig = load(rel, &d2, &n2);
	uint8_t *p1;
	size_t p1n;
	assert_int_equal(lfs_erf_read(orig, 1, &p1, &p1n, &err), LFS_OK);
	assert_int_equal(lfs_erf_set(b, 1, p1, p1n, &err), LFS_OK);
	uint8_t *o2;
	size_t o2n;
	assert_int_equal(lfs_erf_encode(b, &o2, &o2n, &err), LFS_OK);
	lfs_erf *c;
	assert_int_equal(lfs_erf_decode(o2, o2n, &c, &err), LFS_OK);
	assert_int_equal(c->n, cnt);
	if (orig->version != LFS_ERF_E10 || !orig->e[1].compression)
		assert_int_equal(o2n, n); /* payload 1 moved to the end, same size */
	for (uint32_t i = 0; i < cnt; i++) {
		uint8_t *p, *q;
		size_t pn, qn;
		assert_string_equal(c->e[i].resref, orig->e[i].resref);
		assert_int_equal(lfs_erf_read(c, i, &p, &pn, &err), LFS_OK);
		assert_int_equal(lfs_erf_read(orig, i, &q, &qn, &err), LFS_OK);
		assert_int_equal(pn, qn);
		assert_memory_equal(p, q, pn);
		free(p);
		free(q);
	}
	lfs_erf_free(c);
	free(d2);
	free(p1);
	free(o2);
	lfs_erf_free(orig);
	lfs_erf_free(b);
	free(o);
	lfs_erf_free(a);
	free(d);
}

static void test_edits_keep_the_rest(void **state)
{
	(void)state;
	edit_and_check("real/nwnprc/Precacher.mod");
	edit_and_check("real/nwnrs/acn.hak");
	edit_and_check("gen/nwn_erf/models_e1zstd.hak");
	edit_and_check("gen/nwn_erf/small_e1.erf");
}

/* E1: a stored payload with one byte changed fails its SHA-1; the decoder
 * itself still lists it (the check is on read). */
static void test_e1_sha1_mismatch(void **state)
{
	(void)state;
	uint8_t *d;
	size_t n;
	lfs_erf *a = load("gen/nwn_erf/small_e1.erf", &d, &n);
	assert_int_equal(a->e[0].compression, 0);
	uint32_t off = a->e[0].offset;
	lfs_erf_free(a);
	d[off] ^= 0x40;
	lfs_error err = { 0 };
	assert_int_equal(lfs_erf_decode(d, n, &a, &err), LFS_OK);
	uint8_t *p;
	size_t pn;
	assert_int_equal(lfs_erf_read(a, 0, &p, &pn, &err), LFS_ERR_CORRUPT);
	assert_non_null(strstr(err.msg, "SHA-1"));
	assert_int_equal(lfs_erf_read(a, 1, &p, &pn, &err), LFS_OK);
	free(p);
	lfs_erf_free(a);
	free(d);
}

/* A new archive from scratch round-trips through the decoder. */
static void test_new_archive(void **state)
{
	(void)state;
	lfs_erf *a = lfs_erf_new("HAK ", LFS_ERF_V10);
	lfs_error err = { 0 };
	assert_int_equal(lfs_erf_add(a, "a", 10, (const uint8_t *)"A", 1, &err), LFS_OK);
	assert_int_equal(lfs_erf_add(a, "empty", 10, NULL, 0, &err), LFS_OK);
	assert_int_equal(lfs_erf_add(a, "b", 2017, (const uint8_t *)"BB", 2, &err), LFS_OK);
	uint8_t *o;
	size_t on;
	assert_int_equal(lfs_erf_encode(a, &o, &on, &err), LFS_OK);
	assert_int_equal(on, 160 + 3 * 24 + 3 * 8 + 3);
	lfs_erf *b;
	assert_int_equal(lfs_erf_decode(o, on, &b, &err), LFS_OK);
	assert_int_equal(b->n, 3);
	assert_int_equal(b->e[2].res_id, 2);
	assert_memory_equal(o + b->e[2].offset, "BB", 2);
	lfs_erf_free(b);
	free(o);
	lfs_erf_free(a);
}

/* Decode, then walk everything a caller would touch. */
static void exercise(const uint8_t *d, size_t n)
{
	lfs_erf *a = NULL;
	lfs_error err = { 0 };
	lfs_err rc = lfs_erf_decode(d, n, &a, &err);
	if (rc) {
		assert_null(a);
		assert_true(err.msg[0] != 0);
		assert_true(err.offset == SIZE_MAX || err.offset <= n);
		return;
	}
	for (uint32_t i = 0; i < a->n; i++) {
		uint8_t *p;
		size_t pn;
		if (lfs_erf_read(a, i, &p, &pn, &err) == LFS_OK)
			free(p);
		assert_true(strlen(a->e[i].resref) <= a->resref_len);
	}
	uint8_t *o;
	size_t on;
	if (lfs_erf_encode(a, &o, &on, &err) == LFS_OK)
		free(o);
	lfs_erf_free(a);
}

static void test_hostile(void **state)
{
	(void)state;
	lfs_rng rng;
	lfs_rng_seed(&rng, "erf hostile", 0xE5F0C0DEull);
	const char *env = getenv("LFS_FUZZ_FLIPS");
	unsigned flips = env ? (unsigned)strtoul(env, NULL, 0) : 48;
	for (size_t r = 0; r < lfs_arch_nrows; r++) {
		if (!lfs_arch_is_erf(&lfs_arch_rows[r]))
			continue;
		size_t n;
		uint8_t *d = lfs_read_file(lfs_arch_rows[r].path, &n);
		assert_non_null(d);
		for (unsigned k = 0; k < 64; k++) {
			size_t cut = n * k / 64;
			uint8_t *t = malloc(cut ? cut : 1); /* exact size: ASan sees overruns */
			memcpy(t, d, cut);
			exercise(t, cut);
			free(t);
		}
		/* the tables sit at the front: half the edits land there */
		uint32_t cnt = n >= 32 ? le32(d + 16) : 0;
		size_t head = 160 + (size_t)cnt * 60 + 512;
		for (unsigned k = 0; k < flips; k++) {
			uint8_t *t = malloc(n);
			memcpy(t, d, n);
			lfs_rng_mutate(&rng, t, n, 1 + (unsigned)lfs_rng_below(&rng, 4), head, k & 1);
			exercise(t, n);
			free(t);
		}
		free(d);
	}
}

/*
 * The tables-only decoder (lfs_erf_decode_fd + lfs_erf_read_fd) against
 * the whole-file one on @p d (@p n bytes, written to a temporary file):
 * the same verdict, and on success the same entries and payloads.
 */
static void tables_vs_whole(const uint8_t *d, size_t n, const char *what)
{
	char path[] = "/tmp/lfs-test-erf-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, d, n), (ssize_t)n);
	lfs_erf *a = NULL, *b = NULL;
	lfs_error e1, e2;
	memset(&e1, 0, sizeof(e1));
	memset(&e2, 0, sizeof(e2));
	lfs_err r1 = lfs_erf_decode(d, n, &a, &e1);
	lfs_err r2 = lfs_erf_decode_fd(fd, SIZE_MAX, &b, &e2);
	if (r1 == LFS_OK && r2 != LFS_OK)
		fail_msg("%s: whole decodes, tables refused: %s", what, e2.msg);
	if (r1 != LFS_OK && r2 == LFS_OK) {
		/* only payload bytes differ in what the two read: the whole
		 * decoder refuses nothing the tables hold that the other accepts,
		 * but the localized strings past LocalizedStringSize */
		fail_msg("%s: whole refused (%s), tables decode", what, e1.msg);
	}
	if (r1 == LFS_OK) {
		assert_true(b->tables_only);
		assert_int_equal(a->n, b->n);
		assert_int_equal(a->n_loc, b->n_loc);
		for (uint32_t i = 0; i < a->n; i++) {
			const lfs_erf_entry *x = &a->e[i], *y = &b->e[i];
			assert_memory_equal(x->resref_raw, y->resref_raw, 32);
			assert_int_equal(x->type, y->type);
			assert_int_equal(x->offset, y->offset);
			assert_int_equal(x->size, y->size);
			assert_int_equal(x->usize, y->usize);
			assert_null(y->data);
			uint8_t *p = NULL, *q = NULL;
			size_t pn = 0, qn = 0;
			lfs_err ra = lfs_erf_read(a, i, &p, &pn, &e1);
			lfs_err rb = lfs_erf_read_fd(b, fd, i, SIZE_MAX, &q, &qn, &e2);
			assert_int_equal(ra, rb);
			if (ra == LFS_OK) {
				assert_int_equal(pn, qn);
				assert_memory_equal(p, q, pn ? pn : 0);
			}
			free(p);
			free(q);
			/* not from memory, and bounded */
			assert_int_equal(lfs_erf_read(b, i, &q, &qn, &e2),
					 y->size ? LFS_ERR_UNSUPPORTED : LFS_OK);
			free(q);
			if (y->size > 1) {
				assert_int_equal(lfs_erf_read_fd(b, fd, i, y->size - 1, &q, &qn, &e2),
						 LFS_ERR_UNSUPPORTED);
				assert_null(q);
			}
		}
		uint8_t *o = NULL;
		size_t on = 0;
		assert_int_equal(lfs_erf_encode(b, &o, &on, &e2), LFS_ERR_UNSUPPORTED);
		assert_null(o);
	}
	lfs_erf_free(a);
	lfs_erf_free(b);
	close(fd);
}

/* Every corpus ERF, its cuts and flips: tables-only reads agree with the whole-file decoder. */
static void test_tables_fd(void **state)
{
	(void)state;
	lfs_rng rng;
	lfs_rng_seed(&rng, "erf tables", 0x7AB1E5ull);
	size_t seen = 0;
	for (size_t r = 0; r < lfs_arch_nrows; r++) {
		if (!lfs_arch_is_erf(&lfs_arch_rows[r]))
			continue;
		size_t n;
		uint8_t *d = lfs_read_file(lfs_arch_rows[r].path, &n);
		assert_non_null(d);
		tables_vs_whole(d, n, lfs_arch_rows[r].file);
		for (unsigned k = 1; k < 16; k++)
			tables_vs_whole(d, n * k / 16, lfs_arch_rows[r].file);
		uint32_t cnt = n >= 32 ? le32(d + 16) : 0;
		size_t head = 160 + (size_t)cnt * 60 + 512;
		for (unsigned k = 0; k < 16; k++) {
			uint8_t *t = malloc(n);
			memcpy(t, d, n);
			lfs_rng_mutate(&rng, t, n, 1 + (unsigned)lfs_rng_below(&rng, 4), head, k & 1);
			tables_vs_whole(t, n, lfs_arch_rows[r].file);
			free(t);
		}
		free(d);
		seen++;
	}
	assert_true(seen >= 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_fd),
		cmocka_unit_test(test_corpus_decode_roundtrip),
		cmocka_unit_test(test_gen_payloads_equal_inputs),
		cmocka_unit_test(test_header_details),
		cmocka_unit_test(test_resref_rules),
		cmocka_unit_test(test_edits_keep_the_rest),
		cmocka_unit_test(test_new_archive),
		cmocka_unit_test(test_e1_sha1_mismatch),
		cmocka_unit_test(test_hostile),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, lfs_arch_setup, lfs_arch_teardown));
}
