/**
 * @file corpus.h
 * Test helpers: locate ../shared/corpus and read files.
 *
 * The corpus directory comes from $LFS_CORPUS (set by meson). Tests that need
 * it call lfs_corpus_dir_or_skip(), which exits 77 (meson: SKIP) when it is
 * missing. Corpus files are read in place, never copied.
 */
#ifndef LFS_TEST_CORPUS_H
#define LFS_TEST_CORPUS_H

#include <stddef.h>
#include <stdint.h>

/** Corpus root; exits 77 when absent. */
const char *lfs_corpus_dir_or_skip(void);

/** Read a whole file (malloc'd, NUL-terminated beyond @p len); NULL on error. */
uint8_t *lfs_read_file(const char *path, size_t *len);

/**
 * Read a list file of corpus-relative paths (e.g. "nwn/binary.txt" lists paths
 * relative to "nwn/"). Returns a NULL-terminated array of malloc'd absolute
 * paths (free with lfs_free_list). @p prefix is the directory the listed
 * paths are relative to.
 */
char **lfs_read_list(const char *list_path, const char *prefix, size_t *count);

/** Free a list from lfs_read_list(). */
void lfs_free_list(char **list);

#endif
