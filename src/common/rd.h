/**
 * @file rd.h
 * Bounds-checked little-endian reads from an immutable byte range.
 *
 * Every decoder reads through these helpers: each returns false instead of
 * reading past the end, so a hostile file can make a decode fail but never
 * make it read out of bounds. Offsets are size_t and additions are checked
 * for overflow.
 */
#ifndef LFS_RD_H
#define LFS_RD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/** A read-only view of @p n bytes at @p p (not owned). */
typedef struct lfs_rd {
	const uint8_t *p;
	size_t n;
} lfs_rd;

/** True when [off, off+len) lies inside the range (overflow safe). */
static inline bool lfs_rd_has(const lfs_rd *r, size_t off, size_t len)
{
	return off <= r->n && len <= r->n - off;
}

/** True when count*size fits in size_t and in the range from @p off. */
static inline bool lfs_rd_has_n(const lfs_rd *r, size_t off, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		return false;
	return lfs_rd_has(r, off, count * size);
}

static inline bool lfs_rd_u8(const lfs_rd *r, size_t off, uint8_t *v)
{
	if (!lfs_rd_has(r, off, 1))
		return false;
	*v = r->p[off];
	return true;
}

static inline bool lfs_rd_u16(const lfs_rd *r, size_t off, uint16_t *v)
{
	if (!lfs_rd_has(r, off, 2))
		return false;
	*v = (uint16_t)(r->p[off] | (r->p[off + 1] << 8));
	return true;
}

static inline bool lfs_rd_u32(const lfs_rd *r, size_t off, uint32_t *v)
{
	if (!lfs_rd_has(r, off, 4))
		return false;
	*v = (uint32_t)r->p[off] | ((uint32_t)r->p[off + 1] << 8) |
	     ((uint32_t)r->p[off + 2] << 16) | ((uint32_t)r->p[off + 3] << 24);
	return true;
}

static inline bool lfs_rd_i16(const lfs_rd *r, size_t off, int16_t *v)
{
	uint16_t u;
	if (!lfs_rd_u16(r, off, &u))
		return false;
	*v = (int16_t)u;
	return true;
}

static inline bool lfs_rd_i32(const lfs_rd *r, size_t off, int32_t *v)
{
	uint32_t u;
	if (!lfs_rd_u32(r, off, &u))
		return false;
	*v = (int32_t)u;
	return true;
}

static inline bool lfs_rd_f32(const lfs_rd *r, size_t off, float *v)
{
	uint32_t u;
	if (!lfs_rd_u32(r, off, &u))
		return false;
	memcpy(v, &u, sizeof(*v));
	return true;
}

/** Unchecked little-endian helpers for ranges already validated with lfs_rd_has(). */
static inline uint32_t lfs_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint16_t lfs_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}
static inline float lfs_lef32(const uint8_t *p)
{
	uint32_t u = lfs_le32(p);
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

#endif
