/**
 * @file xres.h
 * NWN:EE "compressed buffer" (ExoResFile): the payload form of a compressed
 * resource in E1 archives (ERF E1.0, BIFF E1).
 *
 * Layout (neverwinter.nim `compressedbuf.nim`, `exo.nim`; all u32 little
 * endian): magic "XRES", header version 3, algorithm (0 none, 1 zlib,
 * 2 zstd), uncompressed size; for zstd then u32 version 1, u32 dictionary
 * (must be 0) and one zstd frame; for zlib u32 version 1 and a zlib stream.
 * zstd goes through libzstd; zlib payloads are refused (LFS_ERR_UNSUPPORTED:
 * no writer in the corpus produces them). SHA-1 through nettle.
 */
#ifndef LFS_FORMATS_XRES_H
#define LFS_FORMATS_XRES_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/** Bytes of the XRES header before a zstd frame (magic … dictionary). */
#define LFS_XRES_ZSTD_HEADER 24u
/** Largest uncompressed size accepted (the 32-bit size fields' limit). */
#define LFS_XRES_MAX ((size_t)UINT32_MAX)

/**
 * Decompress the XRES buffer @p p (@p n bytes) found at file offset
 * @p base (for messages). @p expect is the uncompressed size the archive's
 * table gives; the buffer's own size must agree and the frame must yield
 * exactly that many bytes. On success *out is malloc'd (caller frees; a
 * 1-byte allocation when the size is 0) and *out_n its size.
 */
lfs_err lfs_xres_decompress(const uint8_t *p, size_t n, size_t base, uint32_t expect,
			    uint8_t **out, size_t *out_n, lfs_error *err);

/**
 * Build an XRES/zstd buffer of @p n bytes at @p p (zstd level 19, one
 * frame, no dictionary). *out is malloc'd, *out_n its size. Fails
 * (LFS_ERR_UNSUPPORTED) when @p n exceeds LFS_XRES_MAX.
 */
lfs_err lfs_xres_compress(const uint8_t *p, size_t n, uint8_t **out, size_t *out_n,
			  lfs_error *err);

/** SHA-1 (20 bytes into @p digest) of @p n bytes at @p p. */
void lfs_sha1(const uint8_t *p, size_t n, uint8_t digest[20]);

#endif
