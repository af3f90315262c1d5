/**
 * @file mem.h
 * The one array-growth helper, the one byte-run copy and the one
 * out-of-memory error of the project.
 *
 * Every growable array (parsers' row lists, view lists, scene buffers, the
 * cache table) grows through lfs_grow()/lfs_grow32(); every "allocation
 * failed" error value is made by lfs_nomem(). No layer keeps a private copy.
 */
#ifndef LFS_MEM_H
#define LFS_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/**
 * Make the malloc'd array *@p p (capacity *@p cap elements of @p esz bytes)
 * hold at least @p need elements: the capacity doubles (at least 8) until it
 * does. On success *p and *cap are updated and true is returned; on size
 * overflow or allocation failure false is returned and *p, *cap are left as
 * they were (the old array stays valid and owned by the caller).
 */
bool lfs_grow(void **p, size_t *cap, size_t need, size_t esz);

/**
 * lfs_grow() for arrays whose capacity is a uint32_t (element counts stored
 * in 32-bit fields of the models). Refuses capacities above UINT32_MAX / 2.
 */
bool lfs_grow32(void **p, uint32_t *cap, uint32_t need, size_t esz);

/**
 * Copy the @p n bytes at @p p into a new malloc'd block, stored in *@p out
 * (the caller frees it). With @p n 0 nothing is allocated and *out is NULL:
 * an empty run owns no memory (the codecs keep "trailing bytes" this way).
 * Returns false, with *out NULL, when the allocation failed.
 */
bool lfs_memdup(void **out, const void *p, size_t n);

/**
 * Fill @p e (may be NULL) for a failed allocation while working on
 * @p structure (a static string such as "NAD views"; may be NULL): code
 * LFS_ERR_NOMEM, no offset, message "<structure>: out of memory".
 * Returns LFS_ERR_NOMEM.
 */
lfs_err lfs_nomem(lfs_error *e, const char *structure);

#endif
