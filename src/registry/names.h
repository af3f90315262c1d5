/**
 * @file names.h
 * Node and animation names -> safe, unique file name components.
 *
 * The rule (docs/naming.md) in order:
 *  1. Every byte that is '/', '%', a control character (0x01..0x1F, 0x7F) is
 *     written as '%' + two upper-case hex digits ("a/b" -> "a%2Fb"). All other
 *     bytes, including non-ASCII bytes and spaces, are kept.
 *  2. The empty name becomes "%00" (no real name can produce it: NUL cannot
 *     occur inside a name). "." becomes "%2E", ".." becomes "%2E%2E".
 *  3. When the result of 1-2 is longer than LFS_NAME_MAX_BASE bytes it is cut
 *     (never inside a %XX escape) to LFS_NAME_MAX_BASE - 9 bytes and "~" +
 *     8 lower-case hex digits of the 32-bit FNV-1a hash of the original name
 *     are appended.
 *  4. Within one scope (one directory; see viewset.c for the scopes), a result
 *     already handed out (compared bytewise, case-sensitive) gets "~2", "~3",
 *     ... appended, the first free one, in the order names are added (node
 *     order / animation order).
 *
 * Ordinary names ("Mesh02", "rootdummy", "ca1slashl") come out unchanged.
 * The output never contains '/' or NUL, is never "." or "..", and is at most
 * LFS_NAME_MAX_BASE + 11 bytes, so "<name>.<controller>.csv" stays below the
 * 255-byte NAME_MAX of Linux filesystems.
 */
#ifndef LFS_VIEWS_NAMES_H
#define LFS_VIEWS_NAMES_H

#include <stddef.h>
#include <stdint.h>

/** Longest mapped name before a "~N" duplicate suffix (bytes). */
#define LFS_NAME_MAX_BASE 200

/**
 * Steps 1-3 of the rule (no uniqueness): write the safe form of @p raw into
 * @p out, which must hold LFS_NAME_MAX_BASE + 1 bytes. Returns its length.
 */
size_t lfs_name_safe(const char *raw, char out[LFS_NAME_MAX_BASE + 1]);

/**
 * A scope of names handed out (one directory). Open-addressing hash set: adding
 * n names costs O(n) expected time. Zero-initialise, or use lfs_nameset_init().
 */
typedef struct lfs_nameset {
	char **slots;         /**< cap entries, NULL = free; strings owned by the set */
	unsigned long *next;  /**< per slot: next "~k" to try when that name recurs */
	size_t cap, n;
} lfs_nameset;

/** Initialise an empty set. */
void lfs_nameset_init(lfs_nameset *s);

/** Free every name of the set. */
void lfs_nameset_free(lfs_nameset *s);

/**
 * Map @p raw by the whole rule (steps 1-4) and record the result in @p s.
 * Returns the unique name (owned by the set, valid until lfs_nameset_free()),
 * or NULL when memory runs out.
 */
const char *lfs_nameset_add(lfs_nameset *s, const char *raw);

/** True when @p name (an already mapped name) is in the set. */
int lfs_nameset_has(const lfs_nameset *s, const char *name);

/** 32-bit FNV-1a hash of a NUL-terminated string (used by step 3). */
uint32_t lfs_name_hash(const char *s);

#endif
