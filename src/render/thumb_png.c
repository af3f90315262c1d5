/**
 * @file thumb_png.c
 * Thumbnail PNG encoding (see thumb.h and docs/thumbnails.md): the RGBA
 * image to a PNG in memory through libpng, with the freedesktop.org
 * "Thumbnail Managing Standard" text chunks (Thumb::URI, Thumb::MTime),
 * their rewrite in an existing PNG, and the file:// URI of a path.
 */
#include "thumb.h"
#include "../common/mem.h"

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- PNG ----------------------------------------------------------------- */

typedef struct pngbuf {
	uint8_t *p;
	size_t n, cap;
	bool failed;
} pngbuf;

static void png_put(png_structp png, png_bytep data, size_t len)
{
	pngbuf *b = png_get_io_ptr(png);
	if (b->failed)
		return;
	void *q = b->p;
	if (len > SIZE_MAX - b->n || !lfs_grow(&q, &b->cap, b->n + len, 1)) {
		b->failed = true;
		png_error(png, "out of memory");
	}
	b->p = q;
	memcpy(b->p + b->n, data, len);
	b->n += len;
}

static void png_flush_nop(png_structp png)
{
	(void)png;
}

static void png_warn_quiet(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

lfs_err lfs_thumb_png(const uint8_t *rgba, unsigned w, unsigned h, const char *uri, int64_t mtime,
		      uint8_t **png, size_t *pngn, lfs_error *err)
{
	*png = NULL;
	*pngn = 0;
	pngbuf b = { 0 };
	png_bytep *rows = malloc((h ? h : 1) * sizeof(png_bytep));
	png_structp ps = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, png_warn_quiet);
	png_infop info = ps ? png_create_info_struct(ps) : NULL;
	if (!rows || !ps || !info) {
		png_destroy_write_struct(&ps, &info);
		free(rows);
		return lfs_nomem(err, "PNG");
	}
	pngbuf *volatile vb = &b;
	if (setjmp(png_jmpbuf(ps))) {
		png_destroy_write_struct(&ps, &info);
		free(rows);
		free(vb->p);
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "PNG", "PNG encoding failed");
	}
	png_set_write_fn(ps, &b, png_put, png_flush_nop);
	png_set_IHDR(ps, info, w, h, 8, PNG_COLOR_TYPE_RGB_ALPHA, PNG_INTERLACE_NONE,
		     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_set_compression_level(ps, 1);
	png_set_filter(ps, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
	char mt[32];
	png_text txt[3];
	int nt = 0;
	memset(txt, 0, sizeof(txt));
	if (uri) {
		txt[nt].compression = PNG_TEXT_COMPRESSION_NONE;
		txt[nt].key = (png_charp) "Thumb::URI";
		txt[nt].text = (png_charp)uri;
		nt++;
	}
	if (mtime >= 0) {
		snprintf(mt, sizeof(mt), "%lld", (long long)mtime);
		txt[nt].compression = PNG_TEXT_COMPRESSION_NONE;
		txt[nt].key = (png_charp) "Thumb::MTime";
		txt[nt].text = mt;
		nt++;
	}
	txt[nt].compression = PNG_TEXT_COMPRESSION_NONE;
	txt[nt].key = (png_charp) "Software";
	txt[nt].text = (png_charp) "legacyfs";
	nt++;
	png_set_text(ps, info, txt, nt);
	for (unsigned y = 0; y < h; y++)
		rows[y] = (png_bytep)(rgba + (size_t)y * w * 4);
	png_set_rows(ps, info, rows);
	png_write_png(ps, info, PNG_TRANSFORM_IDENTITY, NULL);
	png_destroy_write_struct(&ps, &info);
	free(rows);
	*png = b.p;
	*pngn = b.n;
	return LFS_OK;
}

/* CRC-32 of PNG chunks (PNG specification, "CRC algorithm"): polynomial 0xEDB88320. */
static uint32_t png_crc(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Append a tEXt chunk "key\0text" at @p o; returns the bytes written. */
static size_t put_text(uint8_t *o, const char *key, const char *text)
{
	size_t kl = strlen(key), tl = strlen(text);
	put_be32(o, (uint32_t)(kl + 1 + tl));
	memcpy(o + 4, "tEXt", 4);
	memcpy(o + 8, key, kl);
	o[8 + kl] = 0;
	memcpy(o + 9 + kl, text, tl);
	put_be32(o + 9 + kl + tl, png_crc(0, o + 4, 4 + kl + 1 + tl));
	return 12 + kl + 1 + tl;
}

/* Is chunk @p c (type at c + 4, @p len data bytes) a tEXt of key Thumb::URI or Thumb::MTime? */
static bool thumb_text(const uint8_t *c, uint32_t len)
{
	if (memcmp(c + 4, "tEXt", 4) != 0)
		return false;
	static const char *const keys[] = { "Thumb::URI", "Thumb::MTime" };
	for (int i = 0; i < 2; i++) {
		size_t kl = strlen(keys[i]);
		if (len > kl && memcmp(c + 8, keys[i], kl) == 0 && c[8 + kl] == 0)
			return true;
	}
	return false;
}

lfs_err lfs_thumb_png_retext(const uint8_t *png, size_t n, const char *uri, int64_t mtime,
			     uint8_t **out, size_t *outn, lfs_error *err)
{
	static const uint8_t sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	*out = NULL;
	*outn = 0;
	/* signature, then IHDR (13 data bytes) */
	if (n < 8 + 25 || memcmp(png, sig, 8) != 0 || be32(png + 8) != 13 ||
	    memcmp(png + 12, "IHDR", 4) != 0)
		return lfs_fail(err, LFS_ERR_CORRUPT, 0, "PNG", "not a PNG starting with IHDR");
	char mt[32] = "";
	if (mtime >= 0)
		snprintf(mt, sizeof(mt), "%lld", (long long)mtime);
	size_t add = (uri ? 12 + sizeof("Thumb::URI") + strlen(uri) : 0) +
		     (mtime >= 0 ? 12 + sizeof("Thumb::MTime") + strlen(mt) : 0);
	if (add > SIZE_MAX - n)
		return lfs_nomem(err, "PNG");
	uint8_t *o = malloc(n + add);
	if (!o)
		return lfs_nomem(err, "PNG");
	size_t on = 8 + 25;
	memcpy(o, png, on);
	if (uri)
		on += put_text(o + on, "Thumb::URI", uri);
	if (mtime >= 0)
		on += put_text(o + on, "Thumb::MTime", mt);
	for (size_t i = 8 + 25; i < n;) {
		if (n - i < 12 || be32(png + i) > n - i - 12) {
			free(o);
			return lfs_fail(err, LFS_ERR_CORRUPT, i, "PNG chunk", "chunk past the end");
		}
		uint32_t len = be32(png + i);
		size_t cl = 12 + (size_t)len;
		if (!thumb_text(png + i, len)) {
			memcpy(o + on, png + i, cl);
			on += cl;
		}
		i += cl;
	}
	*out = o;
	*outn = on;
	return LFS_OK;
}

char *lfs_thumb_file_uri(const char *abs_path)
{
	char *uri = malloc(7 + 3 * strlen(abs_path) + 1);
	if (!uri)
		return NULL;
	char *u = uri + sprintf(uri, "file://");
	for (const unsigned char *p = (const unsigned char *)abs_path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("/-._~!$&'()*+,;=:@", *p))
			*u++ = (char)*p;
		else
			u += sprintf(u, "%%%02X", *p);
	}
	*u = '\0';
	return uri;
}
