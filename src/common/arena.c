/**
 * @file arena.c
 * The bump arena (see arena.h).
 */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 65536

struct lfs_arena_chunk {
	struct lfs_arena_chunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

void *lfs_arena_zalloc(lfs_arena *a, size_t n)
{
	if (n > SIZE_MAX - 15 - sizeof(struct lfs_arena_chunk))
		return NULL;
	n = (n + 15) & ~(size_t)15;
	if (n == 0)
		n = 16;
	struct lfs_arena_chunk *c = a->head;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > CHUNK ? n : CHUNK;
		struct lfs_arena_chunk *nc = malloc(sizeof(*nc) + cap);
		if (!nc)
			return NULL;
		nc->used = 0;
		nc->cap = cap;
		if (c && n > CHUNK / 4) {
			/* a big block: the current chunk stays the one to fill */
			nc->next = c->next;
			c->next = nc;
		} else {
			nc->next = c;
			a->head = nc;
		}
		c = nc;
	}
	void *p = c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

void *lfs_arena_calloc(lfs_arena *a, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		return NULL;
	return lfs_arena_zalloc(a, count * size);
}

void lfs_arena_free(lfs_arena *a)
{
	struct lfs_arena_chunk *c = a->head;
	while (c) {
		struct lfs_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
}
