/**
 * @file thumb_dds.c
 * DDS decoding for thumbnails: standard DirectDraw Surface files and
 * BioWare's own DDS header (Neverwinter Nights), top mip level only.
 *
 * The DXT (S3TC / BC1–BC3) block decoding is our own code: Debian ships no
 * well-kept C library for it (stb_image has no DDS; DevIL is unmaintained),
 * and a block decoder is a few dozen lines. Layouts: Microsoft's
 * "Programming Guide for DDS" (DDS_HEADER, DDS_PIXELFORMAT,
 * DDS_HEADER_DXT10) and "Block Compression (Direct3D 10)" / the
 * EXT_texture_compression_s3tc OpenGL extension (block encodings).
 *
 * Hostile input: every size and offset is checked against the buffer before
 * it is read, edges are limited to 8192 (as for TGA) and the output size is
 * computed before allocating.
 */
#include "thumb.h"

#include <stdlib.h>
#include <string.h>

#define DDS_MAX_EDGE 8192u

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* 5/6-bit channel to 8 bits by bit replication (exact for 0 and the maximum). */
static void rgb565(uint16_t c, uint8_t out[3])
{
	unsigned r = (c >> 11) & 31u, g = (c >> 5) & 63u, b = c & 31u;
	out[0] = (uint8_t)(r << 3 | r >> 2);
	out[1] = (uint8_t)(g << 2 | g >> 4);
	out[2] = (uint8_t)(b << 3 | b >> 2);
}

void lfs_dxt_color_block(const uint8_t b[8], bool dxt1, uint8_t out[16][4])
{
	uint16_t c0 = (uint16_t)(b[0] | b[1] << 8), c1 = (uint16_t)(b[2] | b[3] << 8);
	uint8_t pal[4][4];
	rgb565(c0, pal[0]);
	rgb565(c1, pal[1]);
	pal[0][3] = pal[1][3] = 255;
	if (!dxt1 || c0 > c1) {
		for (int k = 0; k < 3; k++) {
			pal[2][k] = (uint8_t)((2u * pal[0][k] + pal[1][k]) / 3u);
			pal[3][k] = (uint8_t)((pal[0][k] + 2u * pal[1][k]) / 3u);
		}
		pal[2][3] = pal[3][3] = 255;
	} else {
		/* DXT1 three-colour mode: midpoint and transparent black */
		for (int k = 0; k < 3; k++)
			pal[2][k] = (uint8_t)((pal[0][k] + pal[1][k]) / 2u);
		pal[2][3] = 255;
		memset(pal[3], 0, 4);
	}
	uint32_t idx = rd32(b + 4);
	for (int i = 0; i < 16; i++)
		memcpy(out[i], pal[(idx >> (2 * i)) & 3u], 4);
}

void lfs_dxt3_alpha_block(const uint8_t b[8], uint8_t out[16])
{
	for (int i = 0; i < 16; i++) {
		unsigned a = (b[i / 2] >> (4 * (i & 1))) & 15u;
		out[i] = (uint8_t)(a * 17u);
	}
}

void lfs_dxt5_alpha_block(const uint8_t b[8], uint8_t out[16])
{
	unsigned a0 = b[0], a1 = b[1], pal[8];
	pal[0] = a0;
	pal[1] = a1;
	if (a0 > a1) {
		for (unsigned i = 1; i <= 6; i++)
			pal[1 + i] = ((7u - i) * a0 + i * a1) / 7u;
	} else {
		for (unsigned i = 1; i <= 4; i++)
			pal[1 + i] = ((5u - i) * a0 + i * a1) / 5u;
		pal[6] = 0;
		pal[7] = 255;
	}
	uint64_t bits = 0;
	for (int i = 0; i < 6; i++)
		bits |= (uint64_t)b[2 + i] << (8 * i);
	for (int i = 0; i < 16; i++)
		out[i] = (uint8_t)pal[(bits >> (3 * i)) & 7u];
}

enum dds_kind { K_DXT1, K_DXT3, K_DXT5, K_RGB };

typedef struct dds_fmt {
	enum dds_kind kind;
	unsigned bpp;            /* K_RGB: bits per pixel (8, 16, 24, 32) */
	uint32_t mask[4];        /* K_RGB: R, G, B, A masks (A may be 0) */
} dds_fmt;

/* Bytes of the top level of a w×h image in format @p f (no overflow: edges ≤ 8192). */
static size_t level_bytes(const dds_fmt *f, uint32_t w, uint32_t h)
{
	size_t bw = ((size_t)w + 3) / 4, bh = ((size_t)h + 3) / 4;
	switch (f->kind) {
	case K_DXT1:
		return bw * bh * 8;
	case K_DXT3:
	case K_DXT5:
		return bw * bh * 16;
	case K_RGB:
		return (size_t)w * h * (f->bpp / 8);
	}
	return 0;
}

/* Channel value of @p px under @p mask scaled to 0..255; @p dflt when the mask is 0. */
static uint8_t chan(uint32_t px, uint32_t mask, uint8_t dflt)
{
	if (!mask)
		return dflt;
	unsigned sh = 0;
	while (!((mask >> sh) & 1u))
		sh++;
	uint32_t m = mask >> sh, v = (px & mask) >> sh;
	return (uint8_t)(((uint64_t)v * 255u + m / 2) / m);
}

/*
 * Decode @p src (level_bytes() long, checked by the caller) into RGBA.
 * @p flip: store the last stored row first.
 */
static uint8_t *decode(const dds_fmt *f, const uint8_t *src, uint32_t w, uint32_t h, bool flip)
{
	uint8_t *o = malloc((size_t)w * h * 4);
	if (!o)
		return NULL;
	if (f->kind == K_RGB) {
		size_t pb = f->bpp / 8;
		for (uint32_t y = 0; y < h; y++) {
			const uint8_t *row = src + (size_t)y * w * pb;
			uint8_t *dst = o + (size_t)(flip ? h - 1 - y : y) * w * 4;
			for (uint32_t x = 0; x < w; x++) {
				uint32_t px = 0;
				for (size_t k = 0; k < pb; k++)
					px |= (uint32_t)row[x * pb + k] << (8 * k);
				dst[x * 4 + 0] = chan(px, f->mask[0], 0);
				dst[x * 4 + 1] = chan(px, f->mask[1], 0);
				dst[x * 4 + 2] = chan(px, f->mask[2], 0);
				dst[x * 4 + 3] = chan(px, f->mask[3], 255);
			}
		}
		return o;
	}
	size_t bw = ((size_t)w + 3) / 4, bh = ((size_t)h + 3) / 4;
	size_t bsz = f->kind == K_DXT1 ? 8 : 16;
	for (size_t by = 0; by < bh; by++)
		for (size_t bx = 0; bx < bw; bx++) {
			const uint8_t *blk = src + (by * bw + bx) * bsz;
			uint8_t px[16][4], al[16];
			if (f->kind == K_DXT1) {
				lfs_dxt_color_block(blk, true, px);
			} else {
				lfs_dxt_color_block(blk + 8, false, px);
				if (f->kind == K_DXT3)
					lfs_dxt3_alpha_block(blk, al);
				else
					lfs_dxt5_alpha_block(blk, al);
				for (int i = 0; i < 16; i++)
					px[i][3] = al[i];
			}
			for (size_t i = 0; i < 16; i++) {
				size_t x = bx * 4 + (i & 3), y = by * 4 + i / 4;
				if (x >= w || y >= h)
					continue;
				size_t oy = flip ? h - 1 - y : y;
				memcpy(o + (oy * w + x) * 4, px[i], 4);
			}
		}
	return o;
}

/* The standard DDS pixel format at @p pf (32 bytes) into @p f; false if unsupported. */
static bool std_format(const uint8_t *data, size_t n, size_t *off, dds_fmt *f)
{
	const uint8_t *pf = data + 76;
	uint32_t flags = rd32(pf + 4);
	memset(f, 0, sizeof(*f));
	if (flags & 0x4u) { /* DDPF_FOURCC */
		const uint8_t *cc = pf + 8;
		if (!memcmp(cc, "DXT1", 4))
			f->kind = K_DXT1;
		else if (!memcmp(cc, "DXT2", 4) || !memcmp(cc, "DXT3", 4))
			f->kind = K_DXT3;
		else if (!memcmp(cc, "DXT4", 4) || !memcmp(cc, "DXT5", 4))
			f->kind = K_DXT5;
		else if (!memcmp(cc, "DX10", 4)) {
			/* DDS_HEADER_DXT10: dxgiFormat, dimension, misc, arraySize, misc2 */
			if (n < 148)
				return false;
			*off = 148;
			uint32_t dxgi = rd32(data + 128);
			switch (dxgi) {
			case 70: case 71: case 72: /* BC1 typeless/unorm/srgb */
				f->kind = K_DXT1;
				return true;
			case 73: case 74: case 75: /* BC2 */
				f->kind = K_DXT3;
				return true;
			case 76: case 77: case 78: /* BC3 */
				f->kind = K_DXT5;
				return true;
			case 27: case 28: case 29: /* R8G8B8A8 */
				*f = (dds_fmt){ K_RGB, 32, { 0xffu, 0xff00u, 0xff0000u, 0xff000000u } };
				return true;
			case 87: case 90: case 91: /* B8G8R8A8 */
				*f = (dds_fmt){ K_RGB, 32, { 0xff0000u, 0xff00u, 0xffu, 0xff000000u } };
				return true;
			default:
				return false;
			}
		} else
			return false;
		return true;
	}
	if (flags & (0x40u | 0x20000u | 0x2u)) { /* DDPF_RGB, DDPF_LUMINANCE, DDPF_ALPHA */
		uint32_t bpp = rd32(pf + 12);
		if (bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32)
			return false;
		f->kind = K_RGB;
		f->bpp = bpp;
		for (int k = 0; k < 4; k++)
			f->mask[k] = rd32(pf + 16 + 4 * k);
		if (!(flags & 0x3u)) /* no DDPF_ALPHAPIXELS / DDPF_ALPHA: ignore the A mask */
			f->mask[3] = 0;
		if (flags & 0x20000u) /* luminance: grey in R, G and B */
			f->mask[1] = f->mask[2] = f->mask[0];
		if (flags & 0x2u && !(flags & 0x40u)) /* alpha only */
			f->mask[0] = f->mask[1] = f->mask[2] = 0;
		uint64_t lim = bpp == 32 ? UINT32_MAX : (((uint64_t)1 << bpp) - 1);
		for (int k = 0; k < 4; k++)
			if (f->mask[k] > lim)
				return false;
		return true;
	}
	return false;
}

bool lfs_thumb_decode_dds(const uint8_t *data, size_t n, uint8_t **rgba, uint32_t *w, uint32_t *h)
{
	*rgba = NULL;
	*w = *h = 0;
	if (!data)
		return false;
	dds_fmt f;
	uint32_t ww, hh;
	size_t off;
	bool flip;
	if (n >= 128 && !memcmp(data, "DDS ", 4)) {
		if (rd32(data + 4) != 124 || rd32(data + 76) != 32)
			return false;
		hh = rd32(data + 12);
		ww = rd32(data + 16);
		off = 128;
		if (!std_format(data, n, &off, &f))
			return false;
		flip = true;
	} else if (n >= 20) {
		/* BioWare: u32 width, u32 height, u32 channels (3 = DXT1, 4 = DXT5),
		 * u32 bytes of the top level, f32 alpha mean; then the levels */
		ww = rd32(data);
		hh = rd32(data + 4);
		uint32_t ch = rd32(data + 8);
		if (ch == 3)
			f.kind = K_DXT1;
		else if (ch == 4)
			f.kind = K_DXT5;
		else
			return false;
		off = 20;
		flip = true;
	} else
		return false;
	if (ww == 0 || hh == 0 || ww > DDS_MAX_EDGE || hh > DDS_MAX_EDGE)
		return false;
	size_t need = level_bytes(&f, ww, hh);
	if (off > n || n - off < need)
		return false;
	uint8_t *o = decode(&f, data + off, ww, hh, flip);
	if (!o)
		return false;
	*rgba = o;
	*w = ww;
	*h = hh;
	return true;
}

bool lfs_thumb_decode_texture(const uint8_t *data, size_t n, uint8_t **rgba, uint32_t *w,
			      uint32_t *h)
{
	*rgba = NULL;
	*w = *h = 0;
	if (!data || n < 4)
		return false;
	if (!memcmp(data, "PLT V1", n < 6 ? n : 6))
		return false;
	if (!memcmp(data, "DDS ", 4))
		return lfs_thumb_decode_dds(data, n, rgba, w, h);
	if (lfs_thumb_decode_tga(data, n, rgba, w, h))
		return true;
	return lfs_thumb_decode_dds(data, n, rgba, w, h);
}
