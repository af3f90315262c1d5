/**
 * @file test_gff.c
 * The module.ifo hak-list reader (src/formats/nwnarchive/gff.c) on GFF bytes built here
 * from the public layout (BioWare, "BioWare Aurora Engine — Generic File
 * Format (GFF)": header, struct, field, label arrays, field data, field and
 * list indices): list order kept, the legacy single Mod_Hak, no haks, the
 * tags; then hostile inputs: every truncation of a valid file, seeded random
 * byte flips, and hand-made bad offsets/indices — each an error naming an
 * offset, or a valid result, never a crash (ASan in CI).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "corpus.h"
#include "testrng.h"
#include "formats/nwnarchive/gff.h"

/* ---- a tiny GFF writer (test only) ------------------------------------ */

struct buf {
	uint8_t *d;
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	b->d = realloc(b->d, b->n + n);
	assert_non_null(b->d);
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

static void put32(struct buf *b, uint32_t v)
{
	uint8_t p[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	put(b, p, 4);
}

struct gw {
	struct buf st, fl, lab, fd, fi, li;
	uint32_t nst, nfl, nlab;
};

static uint32_t label(struct gw *w, const char *name)
{
	char l[16] = { 0 };
	memcpy(l, name, strlen(name));
	put(&w->lab, l, 16);
	return w->nlab++;
}

/* A CExoString field; returns its index. */
static uint32_t field_str(struct gw *w, uint32_t lab, const char *s)
{
	uint32_t off = (uint32_t)w->fd.n;
	put32(&w->fd, (uint32_t)strlen(s));
	put(&w->fd, s, strlen(s));
	put32(&w->fl, 10);
	put32(&w->fl, lab);
	put32(&w->fl, off);
	return w->nfl++;
}

/* A List field of @p n structs @p si; returns its index. */
static uint32_t field_list(struct gw *w, uint32_t lab, const uint32_t *si, uint32_t n)
{
	uint32_t off = (uint32_t)w->li.n;
	put32(&w->li, n);
	for (uint32_t i = 0; i < n; i++)
		put32(&w->li, si[i]);
	put32(&w->fl, 15);
	put32(&w->fl, lab);
	put32(&w->fl, off);
	return w->nfl++;
}

/* Struct @p idx (already counted) with fields @p f. */
static void set_struct(struct gw *w, uint32_t idx, uint32_t type, const uint32_t *f, uint32_t n)
{
	uint8_t *p = w->st.d + (size_t)idx * 12;
	uint32_t data = n == 1 ? f[0] : (uint32_t)w->fi.n;
	if (n > 1)
		for (uint32_t i = 0; i < n; i++)
			put32(&w->fi, f[i]);
	uint32_t v[3] = { type, n ? data : 0, n };
	for (int k = 0; k < 3; k++)
		for (int j = 0; j < 4; j++)
			p[k * 4 + j] = (uint8_t)(v[k] >> (8 * j));
}

static uint32_t new_struct(struct gw *w)
{
	uint8_t z[12] = { 0 };
	put(&w->st, z, 12);
	return w->nst++;
}

static uint8_t *finish(struct gw *w, const char *tag, size_t *n)
{
	struct buf o = { 0 };
	put(&o, tag, 8);
	uint32_t off = 56;
	struct buf *parts[6] = { &w->st, &w->fl, &w->lab, &w->fd, &w->fi, &w->li };
	uint32_t counts[6] = { w->nst, w->nfl, w->nlab, (uint32_t)w->fd.n, (uint32_t)w->fi.n,
			       (uint32_t)w->li.n };
	for (int i = 0; i < 6; i++) {
		put32(&o, off);
		put32(&o, counts[i]);
		off += (uint32_t)parts[i]->n;
	}
	for (int i = 0; i < 6; i++) {
		if (parts[i]->n)
			put(&o, parts[i]->d, parts[i]->n);
		free(parts[i]->d);
	}
	*n = o.n;
	return o.d;
}

/*
 * A module.ifo: top struct with Mod_Name, then (list) Mod_HakList of @p haks,
 * or (!list) the legacy Mod_Hak string @p haks[0] (when @p nh), as
 * BioWare's IFO document lays them out.
 */
static uint8_t *make_ifo(const char *const *haks, uint32_t nh, int list, const char *tag, size_t *n)
{
	struct gw w;
	memset(&w, 0, sizeof(w));
	uint32_t top = new_struct(&w);
	uint32_t l_name = label(&w, "Mod_Name"), l_list = label(&w, "Mod_HakList"),
		 l_hak = label(&w, "Mod_Hak");
	uint32_t tf[3], ntf = 0;
	tf[ntf++] = field_str(&w, l_name, "A module");
	if (list) {
		uint32_t si[16];
		for (uint32_t i = 0; i < nh; i++) {
			si[i] = new_struct(&w);
			uint32_t f = field_str(&w, l_hak, haks[i]);
			set_struct(&w, si[i], 8, &f, 1);
		}
		tf[ntf++] = field_list(&w, l_list, si, nh);
	} else if (nh) {
		tf[ntf++] = field_str(&w, l_hak, haks[0]);
	}
	set_struct(&w, top, 0xFFFFFFFFu, tf, ntf);
	return finish(&w, tag, n);
}

/* ---- tests --------------------------------------------------------------- */

static void test_list_order(void **state)
{
	(void)state;
	const char *h[] = { "cep2_top_v23", "CEP2_Core0", "mymod_tiles" };
	size_t n, nh;
	uint8_t *d = make_ifo(h, 3, 1, "IFO V3.2", &n);
	char **v;
	lfs_error e;
	assert_int_equal(lfs_gff_hak_list(d, n, &v, &nh, &e), LFS_OK);
	assert_int_equal(nh, 3);
	for (int i = 0; i < 3; i++)
		assert_string_equal(v[i], h[i]);
	lfs_gff_hak_list_free(v, nh);
	free(d);
	/* V3.3 accepted too */
	d = make_ifo(h, 1, 1, "IFO V3.3", &n);
	assert_int_equal(lfs_gff_hak_list(d, n, &v, &nh, &e), LFS_OK);
	assert_int_equal(nh, 1);
	assert_string_equal(v[0], "cep2_top_v23");
	lfs_gff_hak_list_free(v, nh);
	free(d);
}

static void test_legacy_and_empty(void **state)
{
	(void)state;
	const char *h[] = { "oldhak" };
	size_t n, nh = 9;
	char **v = (char **)1;
	lfs_error e;
	uint8_t *d = make_ifo(h, 1, 0, "IFO V3.2", &n);
	assert_int_equal(lfs_gff_hak_list(d, n, &v, &nh, &e), LFS_OK);
	assert_int_equal(nh, 1);
	assert_string_equal(v[0], "oldhak");
	lfs_gff_hak_list_free(v, nh);
	free(d);
	/* an empty list; no hak field at all */
	d = make_ifo(h, 0, 1, "IFO V3.2", &n);
	assert_int_equal(lfs_gff_hak_list(d, n, &v, &nh, &e), LFS_OK);
	assert_int_equal(nh, 0);
	assert_null(v);
	free(d);
	d = make_ifo(h, 0, 0, "IFO V3.2", &n);
	assert_int_equal(lfs_gff_hak_list(d, n, &v, &nh, &e), LFS_OK);
	assert_int_equal(nh, 0);
	free(d);
	/* the legacy string empty: none */
	const char *empty[] = { "" };
	d = make_ifo(empty, 1, 0, "IFO V3.2", &n);
	assert_int_equal(lfs_gff_hak_list(d, n, &v, &nh, &e), LFS_OK);
	assert_int_equal(nh, 0);
	free(d);
}

static void test_not_format(void **state)
{
	(void)state;
	const char *h[] = { "a" };
	size_t n, nh;
	char **v;
	lfs_error e;
	uint8_t *d = make_ifo(h, 1, 1, "ARE V3.2", &n);
	assert_int_equal(lfs_gff_hak_list(d, n, &v, &nh, &e), LFS_ERR_NOTFORMAT);
	memcpy(d, "IFO V4.0", 8);
	assert_int_equal(lfs_gff_hak_list(d, n, &v, &nh, &e), LFS_ERR_NOTFORMAT);
	assert_int_equal(lfs_gff_hak_list(d, 10, &v, &nh, &e), LFS_ERR_NOTFORMAT);
	assert_int_equal(lfs_gff_hak_list(NULL, 0, &v, &nh, &e), LFS_ERR_NOTFORMAT);
	free(d);
}

static void put32at(uint8_t *d, size_t off, uint32_t v)
{
	for (int j = 0; j < 4; j++)
		d[off + (size_t)j] = (uint8_t)(v >> (8 * j));
}

static uint32_t get32(const uint8_t *d, size_t off)
{
	return (uint32_t)d[off] | ((uint32_t)d[off + 1] << 8) | ((uint32_t)d[off + 2] << 16) |
	       ((uint32_t)d[off + 3] << 24);
}

/* One hand-made corruption: LFS_ERR_CORRUPT with a message naming an offset. */
static void expect_corrupt(const uint8_t *d0, size_t n, size_t off, uint32_t val)
{
	uint8_t *d = malloc(n);
	assert_non_null(d);
	memcpy(d, d0, n);
	put32at(d, off, val);
	char **v = NULL;
	size_t nh = 0;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	assert_int_equal(lfs_gff_hak_list(d, n, &v, &nh, &e), LFS_ERR_CORRUPT);
	assert_null(v);
	assert_int_not_equal(e.offset, SIZE_MAX);
	assert_true(strstr(e.msg, "GFF") != NULL);
	free(d);
}

static void test_bad_indices(void **state)
{
	(void)state;
	const char *h[] = { "one", "two" };
	size_t n;
	uint8_t *d = make_ifo(h, 2, 1, "IFO V3.2", &n);
	uint32_t so = get32(d, 8), fo = get32(d, 16), lio = get32(d, 48);
	expect_corrupt(d, n, 8, (uint32_t)n);          /* struct array past the end */
	expect_corrupt(d, n, 12, 0);                   /* no top struct */
	expect_corrupt(d, n, 20, 100000);              /* field count past the end */
	expect_corrupt(d, n, 28, 1);                   /* fewer labels than used */
	expect_corrupt(d, n, 36, 0);                   /* field data empty */
	expect_corrupt(d, n, 44, 0);                   /* field indices empty */
	expect_corrupt(d, n, 52, 3);                   /* list indices cut */
	expect_corrupt(d, n, so + 8, 1000);            /* top struct field count */
	expect_corrupt(d, n, so + 12 + 4, 999);        /* hak struct: field index */
	expect_corrupt(d, n, lio + 4, 77);             /* list: struct index */
	expect_corrupt(d, n, lio, 0x40000000u);        /* list count */
	expect_corrupt(d, n, fo + 4, 55);              /* label index */
	/* field 1 is the first list entry's Mod_Hak: bad type, length, offset */
	expect_corrupt(d, n, fo + 1 * 12, 5);
	expect_corrupt(d, n, fo + 1 * 12 + 8, 0xFFFFFFF0u);
	expect_corrupt(d, n, fo + 3 * 12, 10); /* Mod_HakList not a List */
	uint32_t fdo = get32(d, 32), soff = get32(d, fo + 1 * 12 + 8);
	expect_corrupt(d, n, fdo + soff, 17);          /* string over 16 / past the data */
	expect_corrupt(d, n, fdo + soff, 0xFFFFFFFFu);
	free(d);
	/* a hak name with '/' */
	const char *bad[] = { "a/b" };
	d = make_ifo(bad, 1, 1, "IFO V3.2", &n);
	char **v;
	size_t nh;
	lfs_error e;
	assert_int_equal(lfs_gff_hak_list(d, n, &v, &nh, &e), LFS_ERR_CORRUPT);
	free(d);
}

/* Every outcome must be LFS_OK with sane names, or an error with a message. */
static void check_any(const uint8_t *d, size_t n)
{
	char **v = NULL;
	size_t nh = 0;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	lfs_err r = lfs_gff_hak_list(d, n, &v, &nh, &e);
	if (r == LFS_OK) {
		for (size_t i = 0; i < nh; i++)
			assert_true(strlen(v[i]) >= 1 && strlen(v[i]) <= LFS_GFF_HAK_MAX);
		lfs_gff_hak_list_free(v, nh);
	} else {
		assert_null(v);
		assert_int_equal(nh, 0);
		assert_true(e.msg[0] != '\0');
	}
}

static void test_hostile(void **state)
{
	(void)state;
	const char *h[] = { "cep2_top_v23", "CEP2_Core0", "x" };
	size_t n;
	uint8_t *d = make_ifo(h, 3, 1, "IFO V3.2", &n);
	/* every truncation: a malloc'd copy of exactly that size (ASan sees overreads) */
	for (size_t k = 0; k < n; k++) {
		uint8_t *c = malloc(k ? k : 1);
		assert_non_null(c);
		memcpy(c, d, k);
		check_any(c, k);
		char **v;
		size_t nh;
		lfs_error e;
		if (k < n)
			assert_int_not_equal(lfs_gff_hak_list(c, k, &v, &nh, &e), LFS_OK);
		free(c);
	}
	/* seeded random byte flips, 1 to 4 per case */
	lfs_rng rng;
	lfs_rng_seed(&rng, "test_gff flips", 0x6ff23u);
	uint8_t *c = malloc(n);
	assert_non_null(c);
	for (int it = 0; it < 20000; it++) {
		memcpy(c, d, n);
		int k = 1 + (int)lfs_rng_below(&rng, 4);
		for (int j = 0; j < k; j++) {
			size_t at = 8 + (size_t)lfs_rng_below(&rng, n - 8); /* keep the tag: reach the tables */
			c[at] = (uint8_t)(lfs_rng_below(&rng, 4) ? lfs_rng_u8(&rng) : c[at] ^ 0x80);
		}
		check_any(c, n);
	}
	free(c);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_order),    cmocka_unit_test(test_legacy_and_empty),
		cmocka_unit_test(test_not_format),    cmocka_unit_test(test_bad_indices),
		cmocka_unit_test(test_hostile),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
