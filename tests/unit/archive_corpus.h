/**
 * @file archive_corpus.h
 * Test support for the archive codecs (no cmocka): the rows of
 * CORPUS/archives/MANIFEST.tsv and the loose files that gen/inputs.tsv says
 * the generated archives were built from. Both exit 77 (skip) when the
 * corpus is absent.
 */
#ifndef LFS_TEST_ARCHIVE_CORPUS_H
#define LFS_TEST_ARCHIVE_CORPUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** One MANIFEST.tsv row (columns file, format, entries). */
typedef struct lfs_arch_row {
	char path[512];	 /**< absolute: CORPUS/archives/<file> */
	char file[256];	 /**< as listed, relative to archives/ */
	char format[32]; /**< e.g. "HAK V1.0", "KEY E1", "BIFF V1" */
	long entries;	 /**< the listed entry count */
} lfs_arch_row;

/** Every MANIFEST.tsv row (malloc'd array, *n rows); exits 77 without corpus. */
lfs_arch_row *lfs_arch_manifest(size_t *n);
/** The rows, loaded by lfs_arch_setup() for a test group (cmocka's group setup). */
extern lfs_arch_row *lfs_arch_rows;
extern size_t lfs_arch_nrows;
/** Group setup (cmocka signature): lfs_arch_rows from lfs_arch_manifest(). */
int lfs_arch_setup(void **state);
/** Group teardown (cmocka signature): frees lfs_arch_rows. */
int lfs_arch_teardown(void **state);
/** Is @p r an ERF-family archive (HAK, ERF, MOD, SAV, NWM)? */
bool lfs_arch_is_erf(const lfs_arch_row *r);

/**
 * The loose file that gen/inputs.tsv lists as @p name ("resref.ext" as in
 * the archives), read from CORPUS/nwn/tree/<repository name>/<original
 * path>: malloc'd bytes, *n the size; NULL when not listed or unreadable.
 */
uint8_t *lfs_arch_loose(const char *name, size_t *n);

/**
 * Does @p p (@p n bytes) equal input @p name of gen/inputs.tsv? Checks the
 * listed size and SHA-256 (the inputs are not all in the corpus tree) and,
 * when the loose file is there, its bytes too (*compared_loose is then set
 * true; may be NULL). False (with a message on stderr) otherwise, or when
 * @p name is not listed.
 */
bool lfs_arch_equals_input(const char *name, const uint8_t *p, size_t n, bool *compared_loose);

/** The row whose file ends with @p suffix, or NULL. */
const lfs_arch_row *lfs_arch_find(const char *suffix);

/**
 * The folder of the file at @p path opened (O_RDONLY | O_DIRECTORY): the
 * rootfd to give lfs_archive_build() with the base name
 * (lfs_base_name(path)). -1 when it cannot be opened.
 */
int lfs_arch_dirfd(const char *path);

/**
 * A new empty folder under $LFS_BUILD_ROOT (else /tmp) named after @p tag:
 * its path into @p buf (@p size bytes), its fd returned; -1 on failure.
 */
int lfs_arch_tmpdir(char *buf, size_t size, const char *tag);

/**
 * Write @p n bytes at @p rel in folder @p dfd (the file replaced in place:
 * O_TRUNC, same inode; missing parent folders made). 0, or -1.
 */
int lfs_arch_put(int dfd, const char *rel, const void *d, size_t n);

/** Remove folder @p dir with everything in it. 0, or -1. */
int lfs_arch_rmtree(const char *dir);

#endif
