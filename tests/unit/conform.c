/**
 * @file conform.c
 * Conformance checks shared by the format tests (see conform.h).
 */
#define _GNU_SOURCE /* nftw */
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "corpus.h"
#include "registry/format.h"

size_t lfs_fuzz_count(size_t dflt)
{
	const char *env = getenv("LFS_FUZZ_FLIPS");
	return env ? (size_t)strtoul(env, NULL, 10) : dflt;
}

uint8_t *lfs_read_file_ok(const char *path, size_t *len)
{
	uint8_t *d = lfs_read_file(path, len);
	if (!d)
		fail_msg("cannot read %s", path);
	return d;
}

void lfs_assert_same_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn,
			   const char *what)
{
	if (an == bn && !memcmp(a, b, an))
		return;
	size_t i = 0;
	while (i < an && i < bn && a[i] == b[i])
		i++;
	fail_msg("%s: %zu vs %zu bytes, first difference at %zu (0x%zx)", what, an, bn, i, i);
}

void *lfs_assert_lossless(const lfs_codec *c, const uint8_t *d, size_t n, const char *what,
			  bool keep)
{
	void *m = NULL;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	if (c->decode(d, n, &m, &err))
		fail_msg("%s: %s decode: %s", what, c->name, err.msg);
	uint8_t *o = NULL;
	size_t on = 0;
	if (c->encode(m, &o, &on, &err))
		fail_msg("%s: %s encode: %s", what, c->name, err.msg);
	lfs_assert_same_bytes(d, n, o, on, what);
	free(o);
	if (keep)
		return m;
	c->free_model(m);
	return NULL;
}

bool lfs_hostile_try(const lfs_hostile *h, const uint8_t *d, size_t n, size_t trial, lfs_tally *t)
{
	const lfs_codec *c = h->codec;
	void *m = NULL;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = c->decode(d, n, &m, &err);
	if (r != LFS_OK) {
		assert_null(m);
		if (h->code_matches)
			assert_int_equal(err.code, r);
		assert_true(err.msg[0] != '\0');
		assert_true(err.offset == SIZE_MAX || err.offset <= n);
		if (h->check)
			h->check(h->ctx, d, n, trial, NULL, &err);
		t->failed++;
		return false;
	}
	assert_non_null(m);
	if (h->lossless) {
		uint8_t *o = NULL;
		size_t on = 0;
		if (c->encode(m, &o, &on, &err))
			fail_msg("%s: accepted mutated input does not encode: %s", c->name,
				 err.msg);
		lfs_assert_same_bytes(d, n, o, on, "accepted mutated input");
		free(o);
	}
	if (h->check)
		h->check(h->ctx, d, n, trial, m, NULL);
	c->free_model(m);
	t->ok++;
	return true;
}

void lfs_hostile_truncations(const lfs_hostile *h, const uint8_t *d, size_t n, unsigned steps,
			     bool include_whole, lfs_tally *t)
{
	for (unsigned k = 0; k < steps + (include_whole ? 1u : 0u); k++) {
		size_t len = n * (size_t)k / steps;
		uint8_t *c = malloc(len ? len : 1);
		assert_non_null(c);
		memcpy(c, d, len);
		lfs_hostile_try(h, c, len, k, t);
		free(c);
	}
}

void lfs_hostile_replacements(const lfs_hostile *h, lfs_rng *r, uint8_t *d, size_t n, size_t trials,
			      const lfs_hot_span *span, lfs_tally *t)
{
	if (!n)
		return;
	for (size_t k = 0; k < trials; k++) {
		size_t pos;
		if (span && span->every > 1 && k % span->every && span->hi > span->lo)
			pos = span->lo + (size_t)lfs_rng_below(r, span->hi - span->lo);
		else
			pos = (size_t)lfs_rng_below(r, n);
		uint8_t old = d[pos], val = lfs_rng_u8(r);
		if (val == old)
			val ^= 0xFF;
		d[pos] = val;
		lfs_hostile_try(h, d, n, k, t);
		d[pos] = old;
	}
}

void lfs_hostile_mutations(const lfs_hostile *h, lfs_rng *r, const uint8_t *d, size_t n,
			   size_t trials, unsigned max_edits, size_t head, bool whole_byte,
			   lfs_tally *t)
{
	uint8_t *c = malloc(n ? n : 1);
	assert_non_null(c);
	for (size_t k = 0; k < trials; k++) {
		memcpy(c, d, n);
		lfs_rng_mutate(r, c, n, 1 + (unsigned)lfs_rng_below(r, max_edits), head,
			       whole_byte);
		lfs_hostile_try(h, c, n, k, t);
	}
	free(c);
}

size_t lfs_conform_walk_rows(const char *root,
			     int (*fn)(const char *path, const struct stat *st, int type,
				       struct FTW *ftw),
			     const struct lfs_format **row)
{
	size_t walked = 0;
	char p[4096];
	for (const lfs_format *const *fp = lfs_formats; *fp; fp++) {
		const char *dir = (*fp)->corpus_dir;
		if (!dir || !*dir)
			continue;
		*row = *fp;
		snprintf(p, sizeof(p), "%s/%s", root, dir);
		nftw(p, fn, 16, FTW_PHYS);
		walked++;
	}
	*row = NULL;
	return walked;
}
