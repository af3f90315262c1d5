/**
 * @file membuf.c
 * Growable in-memory file contents (see membuf.h).
 */
#include "membuf.h"

#include "../common/mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int reserve(lfs_membuf *b, size_t need)
{
	if (need <= b->cap)
		return 0;
	void *d = b->data;
	/* at least 4096 bytes: the capacity stays 4096 times a power of two */
	if (!lfs_grow(&d, &b->cap, need < 4096 ? 4096 : need, 1))
		return ENOMEM;
	b->data = d;
	return 0;
}

int lfs_membuf_write(lfs_membuf *b, const void *p, size_t n, uint64_t off, size_t max)
{
	if (off > max || n > max - off)
		return EFBIG;
	size_t end = (size_t)off + n;
	if (n == 0)
		return 0;
	int r = reserve(b, end);
	if (r)
		return r;
	if ((size_t)off > b->len)
		memset(b->data + b->len, 0, (size_t)off - b->len);
	memcpy(b->data + off, p, n);
	if (end > b->len)
		b->len = end;
	return 0;
}

int lfs_membuf_truncate(lfs_membuf *b, uint64_t size, size_t max)
{
	if (size > max)
		return EFBIG;
	if (size > b->len) {
		int r = reserve(b, (size_t)size);
		if (r)
			return r;
		memset(b->data + b->len, 0, (size_t)size - b->len);
	}
	b->len = (size_t)size;
	return 0;
}

int lfs_membuf_set(lfs_membuf *b, const void *p, size_t n)
{
	if (n > b->cap) {
		char *d = malloc(n);
		if (!d)
			return ENOMEM;
		free(b->data);
		b->data = d;
		b->cap = n;
	}
	if (n)
		memcpy(b->data, p, n);
	b->len = n;
	return 0;
}

void lfs_membuf_free(lfs_membuf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
