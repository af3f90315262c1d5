/**
 * @file xres.c
 * XRES compressed buffers and SHA-1 (see xres.h).
 */
#include "xres.h"

#include <nettle/sha1.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "common/rd.h"
#include "common/wr.h"

lfs_err lfs_xres_decompress(const uint8_t *p, size_t n, size_t base, uint32_t expect,
			    uint8_t **out, size_t *out_n, lfs_error *err)
{
	lfs_rd r = { p, n };
	uint32_t ver = 0, alg = 0, usize = 0, sub = 0, dict = 0;
	*out = NULL;
	*out_n = 0;
	if (!lfs_rd_has(&r, 0, 16) || memcmp(p, "XRES", 4))
		return lfs_fail(err, LFS_ERR_CORRUPT, base, "compressed buffer",
				"compressed buffer at offset %zu: no XRES header", base);
	lfs_rd_u32(&r, 4, &ver);
	lfs_rd_u32(&r, 8, &alg);
	lfs_rd_u32(&r, 12, &usize);
	if (ver != 3)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, base + 4, "compressed buffer",
				"compressed buffer at offset %zu: header version %u (only 3 is known)",
				base, ver);
	if (usize != expect)
		return lfs_fail(err, LFS_ERR_CORRUPT, base + 12, "compressed buffer",
				"compressed buffer at offset %zu: uncompressed size %u, table says %u",
				base, usize, expect);
	if (alg == 0) {
		if (!lfs_rd_has(&r, 16, usize))
			return lfs_fail(err, LFS_ERR_CORRUPT, base, "compressed buffer",
					"stored buffer at offset %zu: %u bytes do not fit in %zu",
					base, usize, n);
		*out = malloc(usize ? usize : 1);
		if (!*out)
			return lfs_fail(err, LFS_ERR_NOMEM, base, "compressed buffer", "out of memory");
		memcpy(*out, p + 16, usize);
		*out_n = usize;
		return LFS_OK;
	}
	if (alg != 2)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, base + 8, "compressed buffer",
				"compressed buffer at offset %zu: algorithm %u (%s) is not supported",
				base, alg, alg == 1 ? "zlib" : "unknown");
	if (!lfs_rd_u32(&r, 16, &sub) || !lfs_rd_u32(&r, 20, &dict))
		return lfs_fail(err, LFS_ERR_CORRUPT, base + 16, "compressed buffer",
				"compressed buffer at offset %zu: zstd header truncated", base);
	if (sub != 1 || dict != 0)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, base + 16, "compressed buffer",
				"compressed buffer at offset %zu: zstd header version %u dictionary %u "
				"(only version 1 without dictionary)", base, sub, dict);
	const uint8_t *frame = p + LFS_XRES_ZSTD_HEADER;
	size_t fn = n - LFS_XRES_ZSTD_HEADER;
	unsigned long long fsize = ZSTD_getFrameContentSize(frame, fn);
	if (fsize < ZSTD_CONTENTSIZE_ERROR && fsize != usize)
		return lfs_fail(err, LFS_ERR_CORRUPT, base + LFS_XRES_ZSTD_HEADER, "zstd frame",
				"zstd frame at offset %zu: content size %llu, buffer says %u",
				base + LFS_XRES_ZSTD_HEADER, fsize, usize);
	if (fsize == ZSTD_CONTENTSIZE_UNKNOWN || fsize == ZSTD_CONTENTSIZE_ERROR)
		return lfs_fail(err, LFS_ERR_CORRUPT, base + LFS_XRES_ZSTD_HEADER, "zstd frame",
				"zstd frame at offset %zu: no frame header with a content size",
				base + LFS_XRES_ZSTD_HEADER);
	/* a zstd block (3-byte header) expands to at most 128 KiB: bound the
	 * allocation by what the frame's bytes could possibly produce */
	if ((uint64_t)usize / 65536u > fn)
		return lfs_fail(err, LFS_ERR_CORRUPT, base + 12, "compressed buffer",
				"compressed buffer at offset %zu: %u bytes cannot come from a %zu-byte frame",
				base, usize, fn);
	uint8_t *buf = malloc(usize ? usize : 1);
	if (!buf)
		return lfs_fail(err, LFS_ERR_NOMEM, base, "compressed buffer", "out of memory");
	size_t got = ZSTD_decompress(buf, usize, frame, fn);
	if (ZSTD_isError(got) || got != usize) {
		free(buf);
		return lfs_fail(err, LFS_ERR_CORRUPT, base + LFS_XRES_ZSTD_HEADER, "zstd frame",
				"zstd frame at offset %zu: %s", base + LFS_XRES_ZSTD_HEADER,
				ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short output");
	}
	*out = buf;
	*out_n = usize;
	return LFS_OK;
}

lfs_err lfs_xres_compress(const uint8_t *p, size_t n, uint8_t **out, size_t *out_n,
			  lfs_error *err)
{
	*out = NULL;
	*out_n = 0;
	if (n > LFS_XRES_MAX)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "compressed buffer",
				"resource of %zu bytes is too large for a compressed buffer", n);
	size_t cap = ZSTD_compressBound(n);
	uint8_t *buf = malloc(LFS_XRES_ZSTD_HEADER + cap);
	if (!buf)
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "compressed buffer", "out of memory");
	size_t c = ZSTD_compress(buf + LFS_XRES_ZSTD_HEADER, cap, p, n, 19);
	if (ZSTD_isError(c)) {
		free(buf);
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "compressed buffer", "zstd: %s",
				ZSTD_getErrorName(c));
	}
	memcpy(buf, "XRES", 4);
	lfs_put_le32(buf + 4, 3);
	lfs_put_le32(buf + 8, 2);
	lfs_put_le32(buf + 12, (uint32_t)n);
	lfs_put_le32(buf + 16, 1);
	lfs_put_le32(buf + 20, 0);
	*out = buf;
	*out_n = LFS_XRES_ZSTD_HEADER + c;
	return LFS_OK;
}

void lfs_sha1(const uint8_t *p, size_t n, uint8_t digest[20])
{
	struct sha1_ctx c;
	sha1_init(&c);
	sha1_update(&c, n, p);
	sha1_digest(&c, SHA1_DIGEST_SIZE, digest);
}
