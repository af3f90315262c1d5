/**
 * @file test_keybif.c
 * KEY/BIF codecs (src/formats/nwnarchive/keybif.h) on the archive corpus: the real
 * KEYs (chitin, xp1, xp3; their BIFs absent) decode with every key the
 * MANIFEST counts and the table a minimal reader written here finds; every
 * read of a key whose BIF is missing fails with a message naming the BIF;
 * the truncated real 2da.bif serves its first resources and reports the
 * rest as truncated; the generated KEY+BIF sets (V1 and E1/zstd, BIFs under
 * data/ next to the key as in a game install) serve every resource equal to
 * the loose file it was built from; truncated and bit-flipped KEYs and BIFs
 * never crash (ASan in CI). The file reader (lfs_bif_read_table: table by
 * pread, payloads by pread) gives the same table, the same bytes and the
 * same errors as the decoder of the whole file, on every BIF of the corpus,
 * on truncations and bit flips of them, and refuses tables past the end of
 * the file and huge counts (of a sparse 4 GiB file) without reading them.
 * Deterministic (testrng.h).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "archive_corpus.h"
#include "corpus.h"
#include "formats/nwnarchive/keybif.h"
#include "formats/nwnarchive/restype.h"
#include "testrng.h"


static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static lfs_key *load_key(const char *path, uint8_t **d, size_t *n)
{
	*d = lfs_read_file(path, n);
	assert_non_null(*d);
	lfs_key *k;
	lfs_error err = { 0 };
	if (lfs_key_decode(*d, *n, &k, &err))
		fail_msg("%s: %s", path, err.msg);
	return k;
}

/* Every KEY of the corpus: counts, and the key table as BioWare's §2.5 lays it out. */
static void test_keys_decode(void **state)
{
	(void)state;
	size_t seen = 0;
	for (size_t r = 0; r < lfs_arch_nrows; r++) {
		if (strncmp(lfs_arch_rows[r].format, "KEY", 3))
			continue;
		uint8_t *d;
		size_t n;
		lfs_key *k = load_key(lfs_arch_rows[r].path, &d, &n);
		assert_int_equal(k->n_res, lfs_arch_rows[r].entries);
		assert_int_equal(k->n_bifs, le32(d + 8));
		uint32_t off = le32(d + 20);
		size_t stride = memcmp(d + 4, "E1  ", 4) ? 22 : 42;
		assert_int_equal(k->e1, stride == 42);
		for (uint32_t i = 0; i < k->n_res; i++) {
			const uint8_t *e = d + off + i * stride;
			char rr[17] = { 0 };
			memcpy(rr, e, 16);
			assert_string_equal(k->res[i].resref, rr);
			assert_int_equal(k->res[i].type, e[16] | e[17] << 8);
			assert_int_equal(k->res[i].res_id, le32(e + 18));
		}
		for (uint32_t b = 0; b < k->n_bifs; b++) {
			assert_null(strchr(k->bifs[b].path, '\\'));
			assert_true(strlen(k->bifs[b].path) > 4);
		}
		lfs_key_free(k);
		free(d);
		seen++;
	}
	assert_int_equal(seen, 5);
}

/* chitin.key: 15608 mdl keys, BIF 0 is data/2da.bif; with no BIF every read fails
 * cleanly naming it; with the truncated 2da.bif the first 4 resources read. */
static void test_chitin_missing_and_truncated(void **state)
{
	(void)state;
	char path[512];
	const char *corpus = lfs_corpus_dir_or_skip();
	uint8_t *d;
	size_t n;
	lfs_key *k = load_key(lfs_path(path, sizeof(path), "%s/archives/real/neverwinter.nim/chitin.key",
				       corpus), &d, &n);
	assert_int_equal(k->n_bifs, 26);
	assert_string_equal(k->bifs[0].path, "data/2da.bif");
	uint32_t mdl = 0;
	for (uint32_t i = 0; i < k->n_res; i++)
		mdl += k->res[i].type == LFS_RESTYPE_MDL;
	assert_int_equal(mdl, 15608);

	const lfs_bif **bifs = calloc(k->n_bifs, sizeof(*bifs));
	uint32_t failed = 0;
	for (uint32_t i = 0; i < k->n_res; i++) {
		uint8_t *p;
		size_t pn;
		lfs_error err = { 0 };
		lfs_err rc = lfs_key_read(k, i, bifs, &p, &pn, &err);
		assert_int_equal(rc, LFS_ERR_IO);
		assert_non_null(strstr(err.msg, k->bifs[lfs_key_bif_of(k->res[i].res_id)].path));
		failed++;
	}
	assert_int_equal(failed, 43871);

	size_t bn;
	uint8_t *bd = lfs_read_file(
		lfs_path(path, sizeof(path), "%s/archives/real/neverwinter.nim/bif-header-only.bif", corpus),
		&bn);
	assert_non_null(bd);
	lfs_bif *bif;
	lfs_error err = { 0 };
	assert_int_equal(lfs_bif_decode(bd, bn, &bif, &err), LFS_OK);
	assert_int_equal(bif->n, 379);
	assert_int_equal(bif->res[0].offset, 20 + 379 * 16);
	bifs[0] = bif;
	uint32_t ok = 0, truncated = 0;
	for (uint32_t i = 0; i < k->n_res; i++) {
		if (lfs_key_bif_of(k->res[i].res_id) != 0)
			continue;
		uint8_t *p;
		size_t pn;
		lfs_err rc = lfs_key_read(k, i, bifs, &p, &pn, &err);
		if (rc == LFS_OK) {
			ok++;
			assert_memory_equal(p, "2DA", 3);
			free(p);
		} else {
			assert_int_equal(rc, LFS_ERR_CORRUPT);
			assert_non_null(strstr(err.msg, "truncated"));
			truncated++;
		}
	}
	assert_int_equal(ok, 4);
	assert_int_equal(ok + truncated, 379);
	lfs_bif_free(bif);
	free(bd);
	free(bifs);
	lfs_key_free(k);
	free(d);
}

/* gen/ KEY+BIF sets: every resource equals its loose input file. */
static void check_gen_set(const char *dir, const char *keyname, bool e1)
{
	char path[512];
	const char *corpus = lfs_corpus_dir_or_skip();
	uint8_t *d;
	size_t n;
	lfs_key *k = load_key(lfs_path(path, sizeof(path), "%s/archives/%s/%s", corpus, dir, keyname),
			      &d, &n);
	assert_int_equal(k->e1, e1);
	assert_int_equal(k->n_bifs, 2);
	assert_string_equal(k->bifs[0].path, "data/models.bif");
	assert_string_equal(k->bifs[1].path, "data/textures.bif");
	if (e1)
		assert_int_equal(strlen(k->oid), 24);
	uint8_t *bd[2];
	const lfs_bif *bifs[2];
	lfs_bif *own[2];
	for (int b = 0; b < 2; b++) {
		size_t bn;
		bd[b] = lfs_read_file(lfs_path(path, sizeof(path), "%s/archives/%s/%s", corpus, dir,
					       k->bifs[b].path), &bn);
		assert_non_null(bd[b]);
		lfs_error err = { 0 };
		if (lfs_bif_decode(bd[b], bn, &own[b], &err))
			fail_msg("%s: %s", path, err.msg);
		assert_int_equal(own[b]->e1, e1);
		if (e1)
			assert_string_equal(own[b]->oid, k->oid);
		bifs[b] = own[b];
		/* the test's own reading of BIFF V1 §3.3: entry i at 20 + 16 i */
		if (!e1)
			for (uint32_t i = 0; i < own[b]->n; i++) {
				const uint8_t *e = bd[b] + 20 + 16 * i;
				assert_int_equal(own[b]->res[i].offset, le32(e + 4));
				assert_int_equal(own[b]->res[i].size, le32(e + 8));
			}
	}
	assert_int_equal(own[0]->n + own[1]->n, 35);
	uint32_t matched = 0, compared_loose = 0;
	for (uint32_t i = 0; i < k->n_res; i++) {
		char name[64], ext[16];
		snprintf(name, sizeof(name), "%s.%s", k->res[i].resref,
			 lfs_restype_name(k->res[i].type, ext, sizeof(ext)));
		uint8_t *p;
		size_t pn;
		lfs_error err = { 0 };
		if (lfs_key_read(k, i, bifs, &p, &pn, &err))
			fail_msg("%s %s: %s", keyname, name, err.msg);
		bool loose = false;
		if (!lfs_arch_equals_input(name, p, pn, &loose))
			fail_msg("%s: %s differs from its input file", keyname, name);
		compared_loose += loose;
		if (!e1) {
			const lfs_bif *b = bifs[lfs_key_bif_of(k->res[i].res_id)];
			const uint8_t *e = b->data + 20 + 16 * lfs_key_index_of(k->res[i].res_id);
			assert_int_equal(le32(e + 8), pn);
			assert_memory_equal(b->data + le32(e + 4), p, pn);
		}
		free(p);
		matched++;
	}
	assert_int_equal(matched, 35);
	assert_true(compared_loose >= 9);
	for (int b = 0; b < 2; b++) {
		lfs_bif_free(own[b]);
		free(bd[b]);
	}
	lfs_key_free(k);
	free(d);
}

static void test_gen_sets(void **state)
{
	(void)state;
	check_gen_set("gen/nwn_key_pack/v1", "gen_v1.key", false);
	check_gen_set("gen/nwn_key_pack/e1zstd", "gen_e1.key", true);
}

/* E1: a payload byte changed in the BIF is caught by the key's SHA-1. */
static void test_e1_sha1_mismatch(void **state)
{
	(void)state;
	char path[512];
	const char *corpus = lfs_corpus_dir_or_skip();
	uint8_t *kd;
	size_t kn, n;
	lfs_key *k = load_key(lfs_path(path, sizeof(path),
				       "%s/archives/gen/nwn_key_pack/e1zstd/gen_e1.key", corpus), &kd, &kn);
	uint8_t *d = lfs_read_file(lfs_path(path, sizeof(path),
					    "%s/archives/gen/nwn_key_pack/e1zstd/data/textures.bif", corpus),
				   &n);
	assert_non_null(d);
	lfs_bif *b;
	lfs_error err = { 0 };
	assert_int_equal(lfs_bif_decode(d, n, &b, &err), LFS_OK);
	/* make resource 0 of textures.bif a stored copy of a wrong payload: same
	 * size, one byte different, so only the SHA-1 can tell */
	uint32_t i;
	for (i = 0; i < k->n_res && k->res[i].res_id != (1u << 20); i++)
		;
	assert_true(i < k->n_res);
	const lfs_bif *bifs[2] = { NULL, b };
	uint8_t *p;
	size_t pn;
	assert_int_equal(lfs_key_read(k, i, bifs, &p, &pn, &err), LFS_OK);
	uint8_t *fake = malloc(n + pn);
	memcpy(fake, d, n);
	memcpy(fake + n, p, pn);
	fake[n] ^= 1;
	lfs_bif *fb = calloc(1, sizeof(*fb));
	*fb = *b;
	fb->res = malloc(b->n * sizeof(*fb->res));
	memcpy(fb->res, b->res, b->n * sizeof(*fb->res));
	fb->res[0].offset = (uint32_t)n;
	fb->res[0].size = fb->res[0].usize = (uint32_t)pn;
	fb->res[0].compression = 0;
	fb->data = fake;
	fb->size = n + pn;
	bifs[1] = fb;
	uint8_t *q;
	size_t qn;
	assert_int_equal(lfs_key_read(k, i, bifs, &q, &qn, &err), LFS_ERR_CORRUPT);
	assert_non_null(strstr(err.msg, "SHA-1"));
	fake[n] ^= 1; /* the right bytes, stored: accepted */
	assert_int_equal(lfs_key_read(k, i, bifs, &q, &qn, &err), LFS_OK);
	assert_int_equal(qn, pn);
	assert_memory_equal(q, p, pn);
	free(q);
	lfs_bif_free(fb);
	free(fake);
	free(p);
	lfs_bif_free(b);
	free(d);
	lfs_key_free(k);
	free(kd);
}

/* A file holding @p n bytes of @p d (memory-backed), open for reading; -1 when unavailable. */
static int mem_file(const uint8_t *d, size_t n)
{
	int fd = memfd_create("bif", MFD_CLOEXEC);
	if (fd < 0) {
		FILE *f = tmpfile(); /* no memfd: a temporary file (kept open by the dup) */
		assert_non_null(f);
		fd = dup(fileno(f));
		fclose(f);
	}
	assert_true(fd >= 0);
	size_t put = 0;
	while (put < n) {
		ssize_t k = pwrite(fd, d + put, n - put, (off_t)put);
		assert_true(k > 0);
		put += (size_t)k;
	}
	return fd;
}

/*
 * BIF @p d (@p n bytes) both ways, decoded whole and its table read from a
 * file by pread: same result, same message, same table; then every key of
 * @p k (BIF slot @p slot) reads the same from both, bytes or error message.
 * Returns how many keys read.
 */
static uint32_t same_both_ways(const lfs_key *k, uint32_t slot, const uint8_t *d, size_t n)
{
	lfs_bif *mb = NULL, *fb = NULL;
	lfs_error me = { 0 }, fe = { 0 };
	lfs_err mr = lfs_bif_decode(d, n, &mb, &me);
	int fd = mem_file(d, n);
	lfs_err fr = lfs_bif_read_table(fd, &fb, &fe);
	assert_int_equal(fr, mr);
	uint32_t ok = 0;
	if (mr != LFS_OK) {
		assert_null(fb);
		assert_string_equal(fe.msg, me.msg);
		assert_int_equal(fe.offset, me.offset);
		close(fd);
		return 0;
	}
	assert_null(fb->data);
	assert_int_equal(fb->fd, fd);
	assert_int_equal(fb->size, n);
	assert_int_equal(fb->e1, mb->e1);
	assert_string_equal(fb->oid, mb->oid);
	assert_int_equal(fb->n, mb->n);
	if (mb->n)
		assert_memory_equal(fb->res, mb->res, mb->n * sizeof(*mb->res));
	const lfs_bif *mbs[2] = { NULL, NULL }, *fbs[2] = { NULL, NULL };
	mbs[slot] = mb;
	fbs[slot] = fb;
	for (uint32_t i = 0; k && i < k->n_res; i++) {
		if (lfs_key_bif_of(k->res[i].res_id) != slot)
			continue;
		uint8_t *mp = NULL, *fp = NULL;
		size_t mn = 0, fn = 0;
		mr = lfs_key_read(k, i, mbs, &mp, &mn, &me);
		fr = lfs_key_read(k, i, fbs, &fp, &fn, &fe);
		assert_int_equal(fr, mr);
		if (mr == LFS_OK) {
			assert_int_equal(fn, mn);
			assert_memory_equal(fp, mp, mn);
			ok++;
		} else {
			assert_string_equal(fe.msg, me.msg);
		}
		free(mp);
		free(fp);
	}
	lfs_bif_free(mb);
	lfs_bif_free(fb);
	close(fd);
	return ok;
}

/* Every BIF of the corpus read from its file equals its whole-file decode. */
static void test_table_pread(void **state)
{
	(void)state;
	char path[512];
	const char *corpus = lfs_corpus_dir_or_skip();
	static const char *const sets[][3] = {
		{ "gen/nwn_key_pack/v1", "gen_v1.key", "data/models.bif" },
		{ "gen/nwn_key_pack/v1", "gen_v1.key", "data/textures.bif" },
		{ "gen/nwn_key_pack/e1zstd", "gen_e1.key", "data/models.bif" },
		{ "gen/nwn_key_pack/e1zstd", "gen_e1.key", "data/textures.bif" },
		{ "real/neverwinter.nim", "chitin.key", "bif-header-only.bif" },
	};
	uint32_t ok = 0;
	for (size_t s = 0; s < 5; s++) {
		uint8_t *kd;
		size_t kn, n;
		lfs_key *k = load_key(lfs_path(path, sizeof(path), "%s/archives/%s/%s", corpus,
					       sets[s][0], sets[s][1]), &kd, &kn);
		uint32_t slot = strstr(sets[s][2], "textures") ? 1 : 0;
		uint8_t *d = lfs_read_file(lfs_path(path, sizeof(path), "%s/archives/%s/%s", corpus,
						    sets[s][0], sets[s][2]), &n);
		assert_non_null(d);
		ok += same_both_ways(k, slot, d, n);
		free(d);
		lfs_key_free(k);
		free(kd);
	}
	/* 2 × 35 generated resources, and the 4 whole ones of the truncated 2da.bif */
	assert_int_equal(ok, 2 * 35 + 4);
}

/* A BIFF V1 header: @p nv variable resources, table at @p off. */
static void bif_v1_header(uint8_t *h, uint32_t nv, uint32_t nf, uint32_t off)
{
	memcpy(h, "BIFFV1  ", 8);
	for (int i = 0; i < 4; i++) {
		h[8 + i] = (uint8_t)(nv >> (8 * i));
		h[12 + i] = (uint8_t)(nf >> (8 * i));
		h[16 + i] = (uint8_t)(off >> (8 * i));
	}
}

static lfs_err table_of(const uint8_t *d, size_t n, lfs_error *err)
{
	int fd = mem_file(d, n);
	lfs_bif *b = NULL;
	lfs_err r = lfs_bif_read_table(fd, &b, err);
	if (r == LFS_OK)
		assert_int_equal(b->fd, fd);
	else
		assert_null(b);
	lfs_bif_free(b);
	close(fd);
	return r;
}

/*
 * Hostile tables: cut headers, a table past the end of the file, counts
 * and offsets whose table would not fit (also in a sparse 4 GiB file: the
 * check is against the file's size, before any allocation or read), fixed
 * resources; and the payloads of a BIF cut right after its table.
 */
static void test_table_hostile(void **state)
{
	(void)state;
	uint8_t h[64] = { 0 };
	lfs_error err = { 0 };
	bif_v1_header(h, 0, 0, 20);
	assert_int_equal(table_of(h, 20, &err), LFS_OK); /* empty BIF */
	assert_int_equal(table_of(h, 10, &err), LFS_ERR_CORRUPT);
	assert_non_null(strstr(err.msg, "header needs 20 bytes"));
	assert_int_equal(table_of(h, 0, &err), LFS_ERR_NOTFORMAT);
	memcpy(h + 4, "E1  ", 4); /* E1 needs 44 */
	assert_int_equal(table_of(h, 30, &err), LFS_ERR_CORRUPT);
	assert_non_null(strstr(err.msg, "header needs 44 bytes"));
	bif_v1_header(h, 3, 0, 20); /* 3 × 16 bytes from 20: 68 needed, 64 there */
	assert_int_equal(table_of(h, 64, &err), LFS_ERR_CORRUPT);
	assert_non_null(strstr(err.msg, "does not fit"));
	assert_int_equal(err.offset, 20);
	bif_v1_header(h, 1, 0, 0xFFFFFFF0u); /* offset past the end */
	assert_int_equal(table_of(h, 64, &err), LFS_ERR_CORRUPT);
	assert_int_equal(err.offset, 16);
	bif_v1_header(h, 1, 2, 20);
	assert_int_equal(table_of(h, 64, &err), LFS_ERR_UNSUPPORTED);
	/* huge counts in a sparse file of 4 GiB: refused from the header alone */
	int fd = mem_file(h, 20);
	if (ftruncate(fd, (off_t)4 << 30) == 0) {
		lfs_bif *b = NULL;
		bif_v1_header(h, 0xFFFFFFFFu, 0, 20); /* 64 GiB of table */
		assert_int_equal(pwrite(fd, h, 20, 0), 20);
		assert_int_equal(lfs_bif_read_table(fd, &b, &err), LFS_ERR_CORRUPT);
		assert_null(b);
		assert_non_null(strstr(err.msg, "4294967295 entries"));
		bif_v1_header(h, 0x10000000u, 0, 20); /* 4 GiB + 20: one 16-byte entry too many */
		assert_int_equal(pwrite(fd, h, 20, 0), 20);
		assert_int_equal(lfs_bif_read_table(fd, &b, &err), LFS_ERR_CORRUPT);
		assert_null(b);
	}
	close(fd);
	/* a generated BIF cut right after its table: the table reads, every payload fails */
	char path[512];
	const char *corpus = lfs_corpus_dir_or_skip();
	uint8_t *kd;
	size_t kn, n;
	lfs_key *k = load_key(lfs_path(path, sizeof(path),
				       "%s/archives/gen/nwn_key_pack/v1/gen_v1.key", corpus), &kd, &kn);
	uint8_t *d = lfs_read_file(
		lfs_path(path, sizeof(path), "%s/archives/gen/nwn_key_pack/v1/data/models.bif", corpus), &n);
	assert_non_null(d);
	uint32_t nv = le32(d + 8);
	size_t cut = 20 + (size_t)nv * 16;
	assert_true(cut < n);
	assert_int_equal(same_both_ways(k, 0, d, cut), 0);
	assert_int_equal(same_both_ways(k, 0, d, cut - 1), 0); /* table one byte short */
	fd = mem_file(d, cut - 1);
	lfs_bif *b = NULL;
	assert_int_equal(lfs_bif_read_table(fd, &b, &err), LFS_ERR_CORRUPT);
	assert_non_null(strstr(err.msg, "does not fit"));
	close(fd);
	free(d);
	lfs_key_free(k);
	free(kd);
}

static void exercise_key(const uint8_t *d, size_t n)
{
	lfs_key *k = NULL;
	lfs_error err = { 0 };
	if (lfs_key_decode(d, n, &k, &err)) {
		assert_null(k);
		assert_true(err.msg[0]);
		assert_true(err.offset == SIZE_MAX || err.offset <= n);
		return;
	}
	for (uint32_t i = 0; i < k->n_res; i++) {
		uint8_t *p;
		size_t pn;
		assert_int_not_equal(lfs_key_read(k, i, NULL, &p, &pn, &err), LFS_OK);
	}
	lfs_key_free(k);
}

/* read every key of @p k through the (possibly damaged) BIF @p d as BIF slot @p slot */
static void exercise_bif(const lfs_key *k, uint32_t slot, const uint8_t *d, size_t n)
{
	same_both_ways(k, slot, d, n); /* the file reader agrees with the decoder */
	lfs_bif *b = NULL;
	lfs_error err = { 0 };
	if (lfs_bif_decode(d, n, &b, &err)) {
		assert_null(b);
		assert_true(err.msg[0]);
		assert_true(err.offset == SIZE_MAX || err.offset <= n);
		return;
	}
	const lfs_bif *bifs[2] = { NULL, NULL };
	bifs[slot] = b;
	for (uint32_t i = 0; i < k->n_res; i++) {
		uint8_t *p;
		size_t pn;
		if (lfs_key_read(k, i, bifs, &p, &pn, &err) == LFS_OK) {
			free(p);
		} else {
			assert_true(err.msg[0]);
			assert_non_null(strstr(err.msg, k->res[i].resref)); /* names the resource */
		}
	}
	lfs_bif_free(b);
}

static void test_hostile(void **state)
{
	(void)state;
	lfs_rng rng;
	lfs_rng_seed(&rng, "keybif hostile", 0x4B455942ull);
	const char *env = getenv("LFS_FUZZ_FLIPS");
	unsigned flips = env ? (unsigned)strtoul(env, NULL, 0) : 48;
	const char *corpus = lfs_corpus_dir_or_skip();
	/* KEYs, alone */
	for (size_t r = 0; r < lfs_arch_nrows; r++) {
		if (strncmp(lfs_arch_rows[r].format, "KEY", 3))
			continue;
		size_t n;
		uint8_t *d = lfs_read_file(lfs_arch_rows[r].path, &n);
		assert_non_null(d);
		for (unsigned c = 0; c < 64; c++) {
			size_t cut = n * c / 64;
			uint8_t *t = malloc(cut ? cut : 1);
			memcpy(t, d, cut);
			exercise_key(t, cut);
			free(t);
		}
		for (unsigned f = 0; f < flips; f++) {
			uint8_t *t = malloc(n);
			memcpy(t, d, n);
			lfs_rng_mutate(&rng, t, n, 1 + (unsigned)lfs_rng_below(&rng, 4), 2048, f & 1);
			exercise_key(t, n);
			free(t);
		}
		free(d);
	}
	/* BIFs, read through their (intact) generated KEY */
	static const char *const sets[][3] = {
		{ "gen/nwn_key_pack/v1", "gen_v1.key", "data/models.bif" },
		{ "gen/nwn_key_pack/v1", "gen_v1.key", "data/textures.bif" },
		{ "gen/nwn_key_pack/e1zstd", "gen_e1.key", "data/models.bif" },
		{ "gen/nwn_key_pack/e1zstd", "gen_e1.key", "data/textures.bif" },
	};
	for (size_t s = 0; s < 4; s++) {
		char path[512];
		uint8_t *kd;
		size_t kn, n;
		lfs_key *k = load_key(lfs_path(path, sizeof(path), "%s/archives/%s/%s", corpus,
					       sets[s][0], sets[s][1]), &kd, &kn);
		uint32_t slot = strstr(sets[s][2], "textures") ? 1 : 0;
		uint8_t *d = lfs_read_file(lfs_path(path, sizeof(path), "%s/archives/%s/%s", corpus,
						    sets[s][0], sets[s][2]), &n);
		assert_non_null(d);
		for (unsigned c = 0; c < 64; c++) {
			size_t cut = n * c / 64;
			uint8_t *t = malloc(cut ? cut : 1);
			memcpy(t, d, cut);
			exercise_bif(k, slot, t, cut);
			free(t);
		}
		for (unsigned f = 0; f < flips; f++) {
			uint8_t *t = malloc(n);
			memcpy(t, d, n);
			lfs_rng_mutate(&rng, t, n, 1 + (unsigned)lfs_rng_below(&rng, 4), 1200, f & 1);
			exercise_bif(k, slot, t, n);
			free(t);
		}
		free(d);
		lfs_key_free(k);
		free(kd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys_decode),
		cmocka_unit_test(test_chitin_missing_and_truncated),
		cmocka_unit_test(test_gen_sets),
		cmocka_unit_test(test_e1_sha1_mismatch),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_table_pread),
		cmocka_unit_test(test_table_hostile),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, lfs_arch_setup, lfs_arch_teardown));
}
