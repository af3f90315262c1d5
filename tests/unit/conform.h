/**
 * @file conform.h
 * Conformance checks every format test repeats, in one place (cmocka):
 * lossless decode -> encode, and hostile input (truncations, single-byte
 * replacements, random bit/byte mutations) through a decoder that must
 * either accept the bytes or fail cleanly: an error value with a message and
 * an offset inside the input (or SIZE_MAX, "no offset"), never a crash or an
 * out-of-bounds read (ASan/UBSan builds see those).
 *
 * A codec is described by lfs_codec, whose three functions have exactly the
 * signatures of lfs_format's decode / encode / free_model (registry/format.h),
 * so a registry-wide test can hand a registered format straight to these
 * helpers; LFS_CODEC() defines one for a codec's typed functions.
 *
 * Trial counts: lfs_fuzz_count() reads LFS_FUZZ_FLIPS.
 */
#ifndef LFS_TEST_CONFORM_H
#define LFS_TEST_CONFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "testrng.h"

/** A lossless codec, with lfs_format's decode / encode / free_model shapes. */
typedef struct lfs_codec {
	const char *name; /**< for messages: "nod", "nwn-mdl", ... */
	lfs_err (*decode)(const uint8_t *data, size_t n, void **model, lfs_error *err);
	/** NULL: no encoder (hostile checks only test the decoder) */
	lfs_err (*encode)(const void *model, uint8_t **out, size_t *n, lfs_error *err);
	void (*free_model)(void *model);
} lfs_codec;

/**
 * Define `static const lfs_codec var` (named @p label) for a codec whose
 * functions are `lfs_err dec(const uint8_t *, size_t, type **, lfs_error *)`,
 * `lfs_err enc(const type *, uint8_t **, size_t *, lfs_error *)` and
 * `void fr(type *)`. LFS_DECODER() is the same without an encoder.
 */
#define LFS_CODEC(var, label, type, dec, enc, fr)                                        \
	LFS_CODEC_THUNKS_(var, type, dec, fr)                                            \
	static lfs_err var##_encode(const void *m, uint8_t **o, size_t *n, lfs_error *e) \
	{                                                                                \
		return enc((const type *)m, o, n, e);                                    \
	}                                                                                \
	static const lfs_codec var = { label, var##_decode, var##_encode, var##_free }
#define LFS_DECODER(var, label, type, dec, fr) \
	LFS_CODEC_THUNKS_(var, type, dec, fr)  \
	static const lfs_codec var = { label, var##_decode, NULL, var##_free }
#define LFS_CODEC_THUNKS_(var, type, dec, fr)                                           \
	static lfs_err var##_decode(const uint8_t *d, size_t n, void **m, lfs_error *e) \
	{                                                                               \
		type *t = NULL;                                                         \
		lfs_err r = dec(d, n, &t, e);                                           \
		*m = t;                                                                 \
		return r;                                                               \
	}                                                                               \
	static void var##_free(void *m)                                                 \
	{                                                                               \
		fr((type *)m);                                                          \
	}

/** Trials per file: $LFS_FUZZ_FLIPS when set, else @p dflt. */
size_t lfs_fuzz_count(size_t dflt);

/** Read a whole file; fails the test (naming @p path) when it cannot. */
uint8_t *lfs_read_file_ok(const char *path, size_t *len);

/**
 * Fail unless the @p an bytes at @p a equal the @p bn bytes at @p b; the
 * message names @p what, both sizes and the first differing offset.
 */
void lfs_assert_same_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn,
			   const char *what);

/**
 * Lossless round trip: decode @p d (must succeed, message names @p what),
 * encode, and the bytes must equal @p d. Returns the model when @p keep
 * (caller frees with c->free_model), else frees it and returns NULL.
 */
void *lfs_assert_lossless(const lfs_codec *c, const uint8_t *d, size_t n, const char *what,
			  bool keep);

/** Counts of one hostile run. */
typedef struct lfs_tally {
	size_t ok;     /**< inputs the decoder accepted */
	size_t failed; /**< inputs it rejected cleanly */
} lfs_tally;

/**
 * Format-specific checks after each hostile trial: @p model is the decoded
 * model (NULL when the decoder rejected the input, then @p err is the error),
 * @p trial the trial index within the file.
 */
typedef void (*lfs_hostile_check_fn)(void *ctx, const uint8_t *d, size_t n, size_t trial,
				     const void *model, const lfs_error *err);

/** How hostile trials are judged. */
typedef struct lfs_hostile {
	const lfs_codec *codec;
	bool lossless;		    /**< an accepted input must re-encode to the same bytes */
	bool code_matches;	    /**< a rejection's err.code must equal the return value */
	lfs_hostile_check_fn check; /**< optional: more checks per trial */
	void *ctx;		    /**< for check */
} lfs_hostile;

/**
 * One trial: decode @p d[0..n). Accepted: (lossless) re-encode equality, then
 * check. Rejected: the model pointer stays NULL, err.msg is not empty,
 * err.offset is SIZE_MAX or <= @p n, (code_matches) err.code is the return
 * value; then check. Counts into @p t; returns true when accepted.
 */
bool lfs_hostile_try(const lfs_hostile *h, const uint8_t *d, size_t n, size_t trial, lfs_tally *t);

/**
 * Truncations: for k = 0..@p steps-1 (and k = @p steps when @p include_whole),
 * a trial on the first n*k/steps bytes of @p d in a buffer of exactly that
 * size (so ASan sees any read past the cut); the trial index is k.
 */
void lfs_hostile_truncations(const lfs_hostile *h, const uint8_t *d, size_t n, unsigned steps,
			     bool include_whole, lfs_tally *t);

/** Where lfs_hostile_replacements() puts its bytes. */
typedef struct lfs_hot_span {
	size_t lo, hi;	/**< the "hot" region [lo, hi) (headers, counts); hi <= n */
	unsigned every; /**< trial k with k % every == 0 goes anywhere in the file,
			 *   the others into [lo, hi); 0 or 1 = always anywhere */
} lfs_hot_span;

/**
 * @p trials single-byte replacements of @p d (in place, each undone after its
 * trial): a position from @p span, a random value different from the old
 * one, one trial each.
 */
void lfs_hostile_replacements(const lfs_hostile *h, lfs_rng *r, uint8_t *d, size_t n, size_t trials,
			      const lfs_hot_span *span, lfs_tally *t);

/**
 * @p trials mutated copies of @p d (exact size): each gets 1..@p max_edits
 * random edits by lfs_rng_mutate(@p head, @p whole_byte), one trial each.
 */
void lfs_hostile_mutations(const lfs_hostile *h, lfs_rng *r, const uint8_t *d, size_t n,
			   size_t trials, unsigned max_edits, size_t head, bool whole_byte,
			   lfs_tally *t);

/**
 * Walks, with nftw(FTW_PHYS) and callback @p fn, the corpus folder of every
 * row of the format registry (lfs_formats[], in detection order): @p root /
 * lfs_format.corpus_dir. Rows without public files (LFS_FORMAT_NO_CORPUS)
 * or without a corpus_dir are skipped (test_formats' registry test refuses
 * the latter). *@p row is set to the row being walked before each walk, for
 * @p fn to read. Returns the number of folders walked (a missing folder
 * counts: nftw finds nothing in it).
 */
struct lfs_format;
struct stat;
struct FTW;
size_t lfs_conform_walk_rows(const char *root,
			     int (*fn)(const char *path, const struct stat *st, int type,
				       struct FTW *ftw),
			     const struct lfs_format **row);

#endif
