/**
 * @file corpus.h
 * Test and bench support (no cmocka): find ../shared/corpus, read whole
 * files, read the corpus's path lists, list a folder by extension, load a
 * list of files with their bytes.
 *
 * The corpus directory comes from $LFS_CORPUS (set by meson). Tests that need
 * it call lfs_corpus_dir_or_skip() or lfs_corpus_list(), which exit 77
 * (meson: SKIP) when it is missing. Corpus files are read in place, never
 * copied. Every list returned here is a NULL-terminated array of malloc'd
 * strings, freed with lfs_free_list().
 */
#ifndef LFS_TEST_CORPUS_H
#define LFS_TEST_CORPUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Corpus root from $LFS_CORPUS, or NULL when unset or not a directory. */
const char *lfs_corpus_dir(void);

/** Corpus root; exits 77 (skip) when absent. */
const char *lfs_corpus_dir_or_skip(void);

/**
 * Skips that reach meson. cmocka's skip() ends one test as "[  SKIPPED ]"
 * but leaves the program's exit status 0, so meson would report the whole
 * binary OK with an input missing. Tests therefore skip with LFS_SKIP(msg)
 * (only in cmocka test files: it expands to cmocka's skip()), which prints
 * "SKIP: file:line: msg" on stderr and counts the skip, and main ends with
 * `return lfs_test_exit(cmocka_run_group_tests(...));`.
 *
 * Decision: a binary where some tests ran and some skipped is reported SKIP
 * (exit 77) as long as none failed — a missing input is never hidden as OK.
 * Its log still shows which tests ran ("[       OK ]") and which skipped
 * ("[  SKIPPED ]" and the SKIP: line with the reason). Failures win: any
 * failed test keeps cmocka's non-zero, non-77 status (meson: FAIL).
 */
void lfs_test_note_skip(const char *file, int line, const char *msg);

/** Skip the current cmocka test with reason @p msg (a string); see above. */
#define LFS_SKIP(msg)                                          \
	do {                                                   \
		lfs_test_note_skip(__FILE__, __LINE__, (msg)); \
		skip();                                        \
	} while (0)

/** Number of LFS_SKIP() calls so far in this process. */
unsigned lfs_test_skipped(void);

/**
 * Exit status for main from @p rc, cmocka_run_group_tests()'s result (the
 * number of failed tests): 77 (meson: SKIP) when @p rc is 0 and a test
 * skipped; otherwise @p rc (0 = OK, >0 = FAIL; never 77, capped below it).
 */
int lfs_test_exit(int rc);

/**
 * Format a path into @p buf (@p size bytes, truncated if longer) and return
 * @p buf. With lfs_corpus_dir_or_skip() as the first argument this names a
 * corpus file: lfs_path(b, sizeof(b), "%s/nwn/MANIFEST.tsv", corpus).
 */
char *lfs_path(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/** The part of @p path after its last '/'. */
const char *lfs_base_name(const char *path);

/** Read a whole file (malloc'd, NUL-terminated beyond @p len); NULL on error. */
uint8_t *lfs_read_file(const char *path, size_t *len);

/** Bytes malloc has handed out and not taken back (mallinfo2: main heap + mmapped chunks). */
size_t lfs_malloc_in_use(void);

/** Does mallinfo2 describe this process's allocator (not so under AddressSanitizer)? */
bool lfs_malloc_counts(void);

/**
 * Read a list file of paths relative to @p prefix (e.g. "nwn/binary.txt"
 * lists paths relative to "nwn/"), one a line, blank lines skipped. Returns
 * the absolute paths (free with lfs_free_list), NULL when the list cannot be
 * read; *count (may be NULL) gets the number of entries.
 */
char **lfs_read_list(const char *list_path, const char *prefix, size_t *count);

/**
 * The paths of corpus list @p list_file of format folder @p fmt_dir, e.g.
 * lfs_corpus_list("nwn", "binary.txt", &n): CORPUS/nwn/<each line>. Exits 77
 * (skip) when the corpus, or that list, is absent or empty.
 */
char **lfs_corpus_list(const char *fmt_dir, const char *list_file, size_t *count);

/**
 * The files of folder @p dir whose names end in @p ext (with the dot,
 * compared case-insensitively), as "dir/name", sorted by name; not recursive.
 * NULL when the folder cannot be opened.
 */
char **lfs_list_dir(const char *dir, const char *ext, size_t *count);

/**
 * The fast tier's slice (docs/testing.md "The fast tier"): with
 * $LFS_TEST_SLICE = N > 1 (meson test --setup fast), is item @p i one a
 * slow test keeps? Every N-th, those at i ≡ $LFS_TEST_SEED (mod N), seed 0
 * by default; without the variable every item is kept.
 */
bool lfs_test_slice_keeps(size_t i);

/**
 * Keep only the items of NULL-terminated list @p list (from lfs_read_list(),
 * lfs_corpus_list(), lfs_list_dir()) that lfs_test_slice_keeps(), freeing
 * the others; *@p count (may be NULL) gets the new length. A no-op without
 * $LFS_TEST_SLICE.
 */
void lfs_test_slice(char **list, size_t *count);

/**
 * A test's least count of items of some kind over the whole corpus, for the
 * slice being walked: @p whole, or 1 under $LFS_TEST_SLICE (a slice may
 * hold few of a rare kind; the full suite checks the whole count).
 */
size_t lfs_test_slice_min(size_t whole);

/** Free a list from lfs_read_list(), lfs_corpus_list() or lfs_list_dir(). */
void lfs_free_list(char **list);

/** One file read into memory. */
typedef struct lfs_cfile {
	char *path;	  /**< as listed (malloc'd) */
	const char *name; /**< base name, inside path */
	uint8_t *data;	  /**< whole file, malloc'd, NUL-terminated beyond n */
	size_t n;	  /**< bytes */
} lfs_cfile;

/**
 * Read every file of the NULL-terminated @p paths; *count gets how many, *bytes
 * (may be NULL) their total size. Files that cannot be read are reported on
 * stderr and left out. Free with lfs_free_files().
 */
lfs_cfile *lfs_load_files(char *const *paths, size_t *count, size_t *bytes);

/** Free what lfs_load_files() returned (@p count files). */
void lfs_free_files(lfs_cfile *files, size_t count);

/**
 * The supermodel lookup the NWN compile tests run with (an
 * lfs_sibling_read_fn / nwn_compile() lookup): `<name>.mdl` (any case) in
 * the folder of @p path first, then a corpus binary of that name, then a
 * corpus ASCII file of that name — as the peer compiler was run on the
 * corpus. @p ascii and @p bins are NULL-terminated lists of paths.
 */
typedef struct lfs_corpus_lookup {
	const char *path; /**< the file being compiled */
	char **ascii;
	char **bins;
} lfs_corpus_lookup;

/** Lookup function for an lfs_corpus_lookup @p ctx: true and the file's
 *  bytes (malloc'd) when found. */
bool lfs_corpus_supermodel(void *ctx, const char *name, uint8_t **data, size_t *n);

#endif
