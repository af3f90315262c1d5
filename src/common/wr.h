/**
 * @file wr.h
 * Little-endian writers, the counterparts of rd.h's lfs_le16/lfs_le32/
 * lfs_lef32, for the encoders of every format (all of them store integers
 * and IEEE 754 floats little-endian). Unchecked: the caller sized the
 * buffer. Each returns the position after what it wrote.
 */
#ifndef LFS_COMMON_WR_H
#define LFS_COMMON_WR_H

#include <stdint.h>
#include <string.h>

/** Write @p v as 2 little-endian bytes at @p p; returns p + 2. */
static inline uint8_t *lfs_put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	return p + 2;
}

/** Write @p v as 4 little-endian bytes at @p p; returns p + 4. */
static inline uint8_t *lfs_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
	return p + 4;
}

/** Write the bits of @p f (as stored: -0 and NaN payloads kept) as 4
 *  little-endian bytes at @p p; returns p + 4. */
static inline uint8_t *lfs_put_lef32(uint8_t *p, float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return lfs_put_le32(p, u);
}

#endif
