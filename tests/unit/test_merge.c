/**
 * @file test_merge.c
 * Three-way line merge (src/fs/merge.h): non-overlapping, adjacent and
 * overlapping changes, insertions at one point, deletions, empty texts,
 * CRLF lines, identical changes on both sides, a missing final newline, and
 * a property check: with changes on disjoint line sets of a random base the
 * merge equals applying both sides' changes (unique base lines: with
 * repeated lines the alignment is ambiguous, a conflict is then allowed);
 * the choice among candidate bases (lfs_merge3_bases): the version read
 * from the page cache is found, and no candidate that would undo or
 * overwrite another save is taken.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "fs/merge.h"
#include "testrng.h"

/* Merge NUL-terminated texts; returns the result (caller frees). */
static lfs_merge_result merge(const char *b, const char *m, const char *t)
{
	lfs_merge_result r;
	assert_int_equal(lfs_merge3(b, strlen(b), m, strlen(m), t, strlen(t), 0, &r), 0);
	return r;
}

static void expect_text(const char *b, const char *m, const char *t, const char *want)
{
	lfs_merge_result r = merge(b, m, t);
	assert_int_equal(r.nconflicts, 0);
	assert_non_null(r.text);
	assert_string_equal(r.text, want);
	assert_int_equal(r.len, strlen(want));
	lfs_merge_result_free(&r);
}

static void test_nonoverlapping(void **state)
{
	(void)state;
	const char *b = "a\nb\nc\nd\ne\nf\n";
	expect_text(b, "a\nB\nc\nd\ne\nf\n", "a\nb\nc\nd\nE\nf\n", "a\nB\nc\nd\nE\nf\n");
	/* the same both ways round */
	expect_text(b, "a\nb\nc\nd\nE\nf\n", "a\nB\nc\nd\ne\nf\n", "a\nB\nc\nd\nE\nf\n");
	/* only one side changed */
	expect_text(b, b, "a\nb\nX\nd\ne\nf\n", "a\nb\nX\nd\ne\nf\n");
	expect_text(b, "a\nb\nX\nd\ne\nf\n", b, "a\nb\nX\nd\ne\nf\n");
	expect_text(b, b, b, b);
}

static void test_adjacent(void **state)
{
	(void)state;
	/* lines 2 and 3 changed by different sides: they touch, they do not overlap */
	expect_text("a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nb\nC\nd\n", "a\nB\nC\nd\n");
	/* an insertion right after the other side's changed line */
	expect_text("a\nb\nc\n", "a\nB\nc\n", "a\nb\nnew\nc\n", "a\nB\nnew\nc\n");
}

static void test_overlapping(void **state)
{
	(void)state;
	lfs_merge_result r = merge("a\nb\nc\nd\n", "a\nMINE\nc\nd\n", "a\nTHEIRS\nc\nd\n");
	assert_null(r.text);
	assert_int_equal(r.nconflicts, 1);
	assert_int_equal(r.conflicts[0].mine_first, 2);
	assert_int_equal(r.conflicts[0].mine_count, 1);
	assert_int_equal(r.conflicts[0].theirs_first, 2);
	assert_int_equal(r.conflicts[0].base_first, 2);
	assert_int_equal(r.conflicts[0].base_count, 1);
	lfs_merge_result_free(&r);
	/* a range on one side covering a change of the other; plus a clean change later */
	r = merge("1\n2\n3\n4\n5\n6\n7\n", "1\nX\nY\n4\n5\n6\n7\n", "1\n2\nZ\n4\n5\n6\nSEVEN\n");
	assert_int_equal(r.nconflicts, 1);
	assert_int_equal(r.conflicts[0].mine_first, 2);
	assert_int_equal(r.conflicts[0].mine_count, 2);
	lfs_merge_result_free(&r);
	/* two separate conflicts, in order */
	r = merge("a\nb\nc\nd\ne\n", "A1\nb\nc\nd\nE1\n", "A2\nb\nc\nd\nE2\n");
	assert_int_equal(r.nconflicts, 2);
	assert_int_equal(r.conflicts[0].mine_first, 1);
	assert_int_equal(r.conflicts[1].mine_first, 5);
	lfs_merge_result_free(&r);
}

static void test_insert_same_point(void **state)
{
	(void)state;
	lfs_merge_result r = merge("a\nb\n", "a\nmine\nb\n", "a\ntheirs\nb\n");
	assert_int_equal(r.nconflicts, 1);
	assert_int_equal(r.conflicts[0].mine_first, 2);
	assert_int_equal(r.conflicts[0].mine_count, 1);
	assert_int_equal(r.conflicts[0].base_count, 0);
	lfs_merge_result_free(&r);
	/* the same insertion on both sides is taken once */
	expect_text("a\nb\n", "a\nsame\nb\n", "a\nsame\nb\n", "a\nsame\nb\n");
	/* insertion at the start of the other side's change: ambiguous order */
	r = merge("a\nb\nc\n", "a\nnew\nb\nc\n", "a\nB\nc\n");
	assert_int_equal(r.nconflicts, 1);
	lfs_merge_result_free(&r);
	/* insertions at different points */
	expect_text("a\nb\nc\n", "x\na\nb\nc\n", "a\nb\nc\ny\n", "x\na\nb\nc\ny\n");
}

static void test_deletions(void **state)
{
	(void)state;
	expect_text("a\nb\nc\nd\ne\n", "a\nc\nd\ne\n", "a\nb\nc\nd\n", "a\nc\nd\n");
	/* both delete the same line */
	expect_text("a\nb\nc\n", "a\nc\n", "a\nc\n", "a\nc\n");
	/* one deletes a line the other changed: conflict, at the line after the deletion */
	lfs_merge_result r = merge("a\nb\nc\n", "a\nc\n", "a\nB\nc\n");
	assert_int_equal(r.nconflicts, 1);
	assert_int_equal(r.conflicts[0].mine_first, 2);
	assert_int_equal(r.conflicts[0].mine_count, 0);
	assert_int_equal(r.conflicts[0].theirs_count, 1);
	lfs_merge_result_free(&r);
}

static void test_empty(void **state)
{
	(void)state;
	expect_text("", "", "", "");
	expect_text("", "a\n", "", "a\n");
	expect_text("", "", "b\n", "b\n");
	lfs_merge_result r = merge("", "a\n", "b\n");
	assert_int_equal(r.nconflicts, 1);
	lfs_merge_result_free(&r);
	/* one side emptied the text, the other did not touch it */
	expect_text("a\nb\n", "", "a\nb\n", "");
	/* NULL buffers with length 0 */
	assert_int_equal(lfs_merge3(NULL, 0, NULL, 0, NULL, 0, 0, &r), 0);
	assert_int_equal(r.nconflicts, 0);
	assert_string_equal(r.text, "");
	lfs_merge_result_free(&r);
}

static void test_crlf(void **state)
{
	(void)state;
	/* mine is all CRLF: its lines equal the LF base; theirs' change comes in with LF */
	expect_text("a\nb\nc\n", "a\r\nB\r\nc\r\n", "a\nb\nC\n", "a\r\nB\r\nC\n");
	/* CR bytes of theirs' lines are kept too */
	expect_text("a\r\nb\r\n", "A\r\nb\r\n", "a\r\nB\r\n", "A\r\nB\r\n");
}

static void test_final_newline(void **state)
{
	(void)state;
	/* mine has no final newline; theirs appends a line */
	expect_text("a\nb\n", "a\nb", "a\nb\nc\n", "a\nb\nc\n");
	expect_text("a\nb", "A\nb", "a\nb", "A\nb");
}

static void test_bounded(void **state)
{
	(void)state;
	/* max_d too small: each side's middle is one change; still correct when apart */
	const char *b = "h\n1\n2\n3\nm\n4\n5\n6\nt\n";
	lfs_merge_result r;
	assert_int_equal(lfs_merge3(b, strlen(b), "h\nX\n2\nY\nm\n4\n5\n6\nt\n", 18, "h\n1\n2\n3\nm\n4\nZ\n6\nt\n",
				    18, 1, &r), 0);
	assert_int_equal(r.nconflicts, 0);
	assert_string_equal(r.text, "h\nX\n2\nY\nm\n4\nZ\n6\nt\n");
	lfs_merge_result_free(&r);
}

/* Random base of n lines; each side edits its own disjoint set of lines. */
static void test_property(void **state)
{
	(void)state;
	lfs_rng rng;
	lfs_rng_seed(&rng, "merge", 12345);
	for (int round = 0; round < 200; round++) {
		size_t n = 1 + lfs_rng_below(&rng, 1u << 30) % 60;
		char base[8192], mine[8192], theirs[8192], want[8192];
		size_t bl = 0, ml = 0, tl = 0, wl = 0;
		for (size_t i = 0; i < n; i++) {
			char line[32];
			/* unique lines: with repeated ones the alignment is ambiguous
			 * and a merge may (conservatively) report a conflict */
			int len = snprintf(line, sizeof(line), "v %zu %u\n", i, (unsigned)lfs_rng_below(&rng, 1000));
			memcpy(base + bl, line, (size_t)len);
			bl += (size_t)len;
			/* every third line: side by i's residue; other lines untouched */
			unsigned what = (unsigned)(lfs_rng_below(&rng, 1u << 30) % 8);
			char ml_[32], tl_[32];
			int mlen = len, tlen = len;
			memcpy(ml_, line, (size_t)len);
			memcpy(tl_, line, (size_t)len);
			if (i % 3 == 0 && what < 3)
				mlen = snprintf(ml_, sizeof(ml_), "mine %zu\n", i);
			else if (i % 3 == 2 && what < 3)
				tlen = snprintf(tl_, sizeof(tl_), "theirs %zu\n", i);
			memcpy(mine + ml, ml_, (size_t)mlen);
			ml += (size_t)mlen;
			memcpy(theirs + tl, tl_, (size_t)tlen);
			tl += (size_t)tlen;
			const char *w = i % 3 == 0 ? ml_ : tl_;
			int wlen = i % 3 == 0 ? mlen : tlen;
			memcpy(want + wl, w, (size_t)wlen);
			wl += (size_t)wlen;
		}
		lfs_merge_result r;
		assert_int_equal(lfs_merge3(base, bl, mine, ml, theirs, tl, 0, &r), 0);
		if (r.nconflicts == 0) {
			assert_int_equal(r.len, wl);
			assert_memory_equal(r.text, want, wl);
		} else {
			/* a conflict is only allowed where both sides changed (never here) */
			fail_msg("round %d: unexpected conflict at mine line %zu", round, r.conflicts[0].mine_first);
		}
		lfs_merge_result_free(&r);
	}
}

/* lfs_merge3_bases() over NUL-terminated candidate texts, oldest first. */
static lfs_merge_result merge_bases(const char *const *bases, size_t n, const char *m, const char *t,
				    size_t *chosen)
{
	lfs_merge_text b[8];
	assert_true(n <= 8);
	for (size_t i = 0; i < n; i++)
		b[i] = (lfs_merge_text){ bases[i], strlen(bases[i]) };
	lfs_merge_result r;
	assert_int_equal(lfs_merge3_bases(b, n, m, strlen(m), t, strlen(t), 0, &r, chosen), 0);
	return r;
}

/* The false conflict of issue 24: the writer's record is an old version
 * (cand0); it read a newer one (cand1) from the page cache and changed only
 * line 5; another writer changed line 2 twice (cand1, then theirs). From
 * cand0 the saves conflict on line 2; from cand1 they merge. */
static void test_bases_page_cache_read(void **state)
{
	(void)state;
	const char *c0 = "a\nb\nc\nd\ne\nf\n", *c1 = "a\nX1\nc\nd\ne\nf\n", *th = "a\nX2\nc\nd\ne\nf\n";
	const char *mine = "a\nX1\nc\nd\nE\nf\n";
	lfs_merge_result r = merge(c0, mine, th);
	assert_int_equal(r.nconflicts, 1); /* one base: the false conflict */
	lfs_merge_result_free(&r);
	const char *bases[] = { c0, c1, th };
	size_t chosen = 9;
	r = merge_bases(bases, 3, mine, th, &chosen);
	assert_int_equal(r.nconflicts, 0);
	assert_string_equal(r.text, "a\nX2\nc\nd\nE\nf\n");
	assert_int_equal(chosen, 1); /* not theirs: mine lacks X2, taking it would undo X2 */
	lfs_merge_result_free(&r);
}

/* Nothing lost: the writer read cand0 and changed line 5; another writer's
 * save (cand1, current) changed line 2. cand1 as base would take mine's
 * line 2 as an edit and undo it: it must not be chosen. */
static void test_bases_no_revert(void **state)
{
	(void)state;
	const char *c0 = "a\nb\nc\nd\ne\nf\n", *c1 = "a\nX\nc\nd\ne\nf\n";
	const char *mine = "a\nb\nc\nd\nE\nf\n";
	const char *bases[] = { c0, c1 };
	size_t chosen = 9;
	lfs_merge_result r = merge_bases(bases, 2, mine, c1, &chosen);
	assert_int_equal(r.nconflicts, 0);
	assert_string_equal(r.text, "a\nX\nc\nd\nE\nf\n");
	assert_int_equal(chosen, 0);
	lfs_merge_result_free(&r);
	/* also when the other change was an inserted copy of a line next to
	 * equal ones (an ambiguous alignment) */
	const char *d0 = "v 0\nv 0\nv 1\nx\n", *d1 = "v 0\nv 0\nv 0\nv 1\nx\n";
	const char *dm = "v 0\nv 0\nv 1\ny\n";
	const char *dbases[] = { d0, d1 };
	r = merge_bases(dbases, 2, dm, d1, &chosen);
	assert_int_equal(r.nconflicts, 0);
	assert_string_equal(r.text, "v 0\nv 0\nv 0\nv 1\ny\n");
	lfs_merge_result_free(&r);
}

/* Nothing overwritten: the writer read cand0 and changed line 2, which
 * another save (cand1, current) changed too: a conflict from every base
 * the writer may have read, never mine's line silently over theirs. */
static void test_bases_same_line(void **state)
{
	(void)state;
	const char *c0 = "a\nb\nc\n", *c1 = "a\nX\nc\n", *mine = "a\nE\nc\n";
	const char *bases[] = { c0, c1 };
	size_t chosen = 9;
	lfs_merge_result r = merge_bases(bases, 2, mine, c1, &chosen);
	assert_int_equal(r.nconflicts, 1);
	assert_null(r.text);
	assert_int_equal(r.conflicts[0].mine_first, 2);
	lfs_merge_result_free(&r);
	/* one base: lfs_merge3() */
	r = merge_bases(bases, 1, "a\nb\nC\n", c1, &chosen);
	assert_int_equal(r.nconflicts, 0);
	assert_string_equal(r.text, "a\nX\nC\n");
	assert_int_equal(chosen, 0);
	lfs_merge_result_free(&r);
	lfs_merge_text none = { "", 0 };
	assert_int_equal(lfs_merge3_bases(&none, 0, "", 0, "", 0, 0, &r, &chosen), EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nonoverlapping), cmocka_unit_test(test_adjacent),
		cmocka_unit_test(test_overlapping),    cmocka_unit_test(test_insert_same_point),
		cmocka_unit_test(test_deletions),      cmocka_unit_test(test_empty),
		cmocka_unit_test(test_crlf),           cmocka_unit_test(test_final_newline),
		cmocka_unit_test(test_bounded),        cmocka_unit_test(test_property),
		cmocka_unit_test(test_bases_page_cache_read), cmocka_unit_test(test_bases_no_revert),
		cmocka_unit_test(test_bases_same_line),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
