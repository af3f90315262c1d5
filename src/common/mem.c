/**
 * @file mem.c
 * Array growth and the out-of-memory error (mem.h).
 */
#include "mem.h"

#include <stdlib.h>
#include <string.h>

bool lfs_grow(void **p, size_t *cap, size_t need, size_t esz)
{
	if (need <= *cap)
		return true;
	if (esz == 0)
		return false;
	size_t nc = *cap ? *cap : 8;
	while (nc < need) {
		if (nc > SIZE_MAX / 2)
			return false;
		nc *= 2;
	}
	if (nc > SIZE_MAX / esz)
		return false;
	void *q = realloc(*p, nc * esz);
	if (!q)
		return false;
	*p = q;
	*cap = nc;
	return true;
}

bool lfs_grow32(void **p, uint32_t *cap, uint32_t need, size_t esz)
{
	if (need <= *cap)
		return true;
	if (need > UINT32_MAX / 2)
		return false;
	size_t c = *cap;
	if (!lfs_grow(p, &c, need, esz))
		return false;
	if (c > UINT32_MAX / 2)
		c = UINT32_MAX / 2; /* realloc'd to more: the extra stays unused */
	*cap = (uint32_t)c;
	return true;
}

bool lfs_memdup(void **out, const void *p, size_t n)
{
	*out = NULL;
	if (n == 0)
		return true;
	*out = malloc(n);
	if (!*out)
		return false;
	memcpy(*out, p, n);
	return true;
}

lfs_err lfs_nomem(lfs_error *e, const char *structure)
{
	return lfs_fail(e, LFS_ERR_NOMEM, SIZE_MAX, structure, "out of memory");
}
