/**
 * @file merge.h
 * Three-way merge of texts by line (docs/editing.md "Concurrent saves:
 * bases and three-way merge"). Pure: no FUSE, no file system, no locks.
 *
 * Given the text a writer started from (base), the text it saves (mine) and
 * the text current now (theirs), the changes base -> mine and base -> theirs
 * (longest common subsequence of lines, Myers' O(ND) algorithm from "An O(ND)
 * Difference Algorithm and Its Variations", E. W. Myers, 1986) are applied
 * together when they do not overlap, as diff3 does ("diff3" in the GNU
 * diffutils manual).
 *
 * Lines: a line is its bytes up to and including '\n' (the last line may
 * lack it). Two lines are equal when their bytes are equal once a trailing
 * "\r\n" or "\n" is removed, so a CRLF text merges with its LF base. The
 * output copies each line's bytes from the side it comes from (unchanged
 * lines from mine): CR bytes are kept as that side wrote them. A line
 * without '\n' that is followed by more output gets one '\n'.
 *
 * Overlap (a conflict unless both sides made the identical change): two
 * changes whose base line ranges intersect; an insertion at the same base
 * position as another change's start; an insertion strictly inside another
 * change's range. Changes that only touch (one ends where the other starts,
 * neither an insertion there) do not overlap: adjacent lines merge.
 */
#ifndef LFS_FS_MERGE_H
#define LFS_FS_MERGE_H

#include <stddef.h>

/** One conflict: where it is in the saved text (mine) and in the current one (theirs). */
typedef struct lfs_merge_conflict {
	size_t mine_first;   /**< first line (1-based) of mine in the conflict */
	size_t mine_count;   /**< lines of mine in it (0: mine deleted there; mine_first is the line after) */
	size_t theirs_first; /**< same for theirs */
	size_t theirs_count;
	size_t base_first;   /**< same for the base */
	size_t base_count;
} lfs_merge_conflict;

/** The outcome of lfs_merge3(). Free with lfs_merge_result_free(). */
typedef struct lfs_merge_result {
	char *text;          /**< merged text (malloc'd, NUL-terminated), NULL when conflicts */
	size_t len;          /**< bytes of text, without the NUL */
	lfs_merge_conflict *conflicts; /**< malloc'd, in order of position */
	size_t nconflicts;
} lfs_merge_result;

/**
 * Merge @p mine and @p theirs, both derived from @p base (byte counts @p bn,
 * @p mn, @p tn; the buffers need not be NUL-terminated; NULL allowed with
 * length 0). On success *out holds either the merged text (no conflicts) or
 * the list of conflicts (text NULL).
 *
 * @param max_d  bound of the edit distance (lines) searched per side; a diff
 *               needing more is taken as one change of everything between
 *               the common head and tail (0: no bound)
 * @return 0, or ENOMEM (*out then empty)
 */
int lfs_merge3(const char *base, size_t bn, const char *mine, size_t mn, const char *theirs,
	       size_t tn, size_t max_d, lfs_merge_result *out);

/** One candidate base text of lfs_merge3_bases() (not owned). */
typedef struct lfs_merge_text {
	const char *data;
	size_t n;
} lfs_merge_text;

/**
 * lfs_merge3() when the base is not known for sure: @p bases are the texts
 * the writer may have read, oldest first; @p bases[0] must be at or before
 * what it read (an older base is always safe: the changes since are on both
 * sides and taken once, or conflict), and every text the writer may have
 * read must be in the list (the versions of a view as served, in order).
 *
 * Candidate i passes when @p mine already holds every change from each
 * older candidate j < i to candidate i (lfs_merge3(j, mine, i) is clean and
 * gives @p mine unchanged). The newest passing candidate whose merge with
 * @p theirs is clean is used (*@p chosen = its index); when none is clean,
 * *out has the conflicts of the newest passing one. Candidate 0 always
 * passes, so with one base this is lfs_merge3().
 *
 * Why nothing another writer saved is lost (docs/editing.md "Concurrent
 * saves"): let R be the candidate the writer read, mine = R + its own
 * edits E. A candidate i <= R is an older base (safe). A candidate i > R
 * passes only if mine holds the changes R -> i (j = R is among the older
 * ones), i.e. mine = i + E with E touching no line those changes touched
 * (else the check conflicts, or gives other text); merging onto @p theirs
 * from i then gives what the merge from R gives, or a conflict.
 *
 * @return 0, ENOMEM, or EINVAL when @p nbases is 0
 */
int lfs_merge3_bases(const lfs_merge_text *bases, size_t nbases, const char *mine, size_t mn,
		     const char *theirs, size_t tn, size_t max_d, lfs_merge_result *out, size_t *chosen);

/** Free what lfs_merge3() put in @p r (a zeroed result is fine). */
void lfs_merge_result_free(lfs_merge_result *r);

#endif
