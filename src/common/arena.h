/**
 * @file arena.h
 * The one bump arena of the project: zeroed, 16-byte aligned blocks from
 * 64 KiB chunks, all freed at once. A decoded or compiled model keeps every
 * allocation of its own in one arena (NWN decoder and compiler, SOD), so a
 * failed decode and the model's free release everything in one call.
 */
#ifndef LFS_ARENA_H
#define LFS_ARENA_H

#include <stddef.h>

/** One chunk of an arena (private to arena.c). */
struct lfs_arena_chunk;

/** An arena: zero-initialise (`lfs_arena a = { 0 }`) before the first use. */
typedef struct lfs_arena {
	struct lfs_arena_chunk *head; /**< the chunk being filled first */
} lfs_arena;

/**
 * @p n zeroed bytes (rounded up to 16; 0 gives 16) from @p a, 16-byte
 * aligned, valid until lfs_arena_free(). A request over a quarter of a chunk
 * gets a chunk of its own, which does not end the filling of the current
 * one. NULL when out of memory or @p n is too large.
 */
void *lfs_arena_zalloc(lfs_arena *a, size_t n);

/** lfs_arena_zalloc() of @p count × @p size bytes; NULL on overflow. */
void *lfs_arena_calloc(lfs_arena *a, size_t count, size_t size);

/** Free every block of @p a; it is empty (reusable) afterwards. */
void lfs_arena_free(lfs_arena *a);

#endif
