/**
 * @file thumb.h
 * Thumbnail renderer: a triangle scene -> a square RGBA image -> PNG.
 * No FUSE and no format code here (per-format extraction: thumb_models.h;
 * the documentation of camera, light and conventions: docs/thumbnails.md).
 *
 * Scene frame
 * -----------
 * Every extractor converts its model into ONE frame before adding vertices:
 * right-handed, metres (or the format's own unit: only ratios matter),
 * +X = the model's right, +Y = the model's front, +Z = up. The camera looks
 * from the front-right and above, along direction (−1, −1, −0.5) — upstream
 * f3d's thumbnail direction (−1, −0.5, −1) with its Y-up written Z-up — at
 * the centre of the bounding box of the drawn vertices.
 *
 * Triangles index positions (`v`), texture coordinates (`t`, or
 * LFS_THUMB_NONE) and a material. Texture coordinates follow the OBJ/OpenGL
 * convention: u to the right, v UP, (0, 0) = the bottom-left of the image.
 * Extractors of v-down formats (NOD, SOD, NIL) store 1 − v.
 *
 * Hostile input: non-finite positions make every triangle using them be
 * skipped; indices out of range are skipped; zero-area triangles draw
 * nothing; coordinates up to the float range are framed in double precision.
 *
 * Memory: a scene owns all its arrays (lfs_thumb_scene_free()). Building
 * functions never fail loudly: on allocation failure they set `failed` and
 * later calls do nothing; check it before rendering.
 */
#ifndef LFS_VIEWS_THUMB_H
#define LFS_VIEWS_THUMB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"

/** "No texture coordinate" / "no texture" index. */
#define LFS_THUMB_NONE UINT32_MAX

/** Largest texture edge kept; larger decoded textures are box-halved down to it. */
#define LFS_THUMB_TEX_MAX 512u

/** A decoded texture: RGBA, 8 bits per channel, straight alpha, top row first. */
typedef struct lfs_thumb_tex {
	uint32_t w, h;
	uint8_t *rgba; /**< w * h * 4 bytes, owned by the scene */
	bool holes;    /**< some texel has alpha < 128 (alpha-tested materials cut holes) */
} lfs_thumb_tex;

/** A material: a texture, or a flat diffuse colour. */
typedef struct lfs_thumb_mat {
	float rgb[3];    /**< diffuse colour, 0..1, used when tex is LFS_THUMB_NONE */
	uint32_t tex;    /**< index into the scene's textures or LFS_THUMB_NONE */
	bool alpha_test; /**< texels with alpha < 0.5 are holes (cut-out foliage, hair) */
} lfs_thumb_mat;

/** A triangle: position, texture-coordinate and material indices. */
typedef struct lfs_thumb_tri {
	uint32_t v[3];
	uint32_t t[3]; /**< LFS_THUMB_NONE when the mesh has no UVs */
	uint32_t mat;
} lfs_thumb_tri;

/** The triangles to draw, in the scene frame (see the file comment). */
typedef struct lfs_thumb_scene {
	float *pos;   /**< 3 per position */
	float *nrm;   /**< 3 per position; (0,0,0) = compute from the faces */
	size_t n_pos, cap_pos;
	float *uv;    /**< 2 per texture coordinate, v up */
	size_t n_uv, cap_uv;
	lfs_thumb_tri *tris;
	size_t n_tris, cap_tris;
	lfs_thumb_mat *mats;
	size_t n_mats, cap_mats;
	lfs_thumb_tex *texs;
	size_t n_texs, cap_texs;
	bool failed;  /**< an allocation failed: the scene is incomplete */
} lfs_thumb_scene;

/** True for the sizes the freedesktop standard names: 128, 256, 512, 1024. */
bool lfs_thumb_size_ok(unsigned size);

/**
 * The Thumb::URI of a file: "file://" + @p abs_path percent-encoded as
 * RFC 3986 allows in a path (freedesktop thumbnail spec). Returns a malloc'd
 * string (caller frees) or NULL when out of memory.
 */
char *lfs_thumb_file_uri(const char *abs_path);

/** Free a scene's arrays and zero it. */
void lfs_thumb_scene_free(lfs_thumb_scene *s);

/**
 * Append a position (scene frame) with an optional normal (@p n NULL or
 * (0,0,0): computed from the faces). Returns its index (LFS_THUMB_NONE on
 * allocation failure or when the scene is full: indices are 32-bit).
 */
uint32_t lfs_thumb_add_pos(lfs_thumb_scene *s, const float p[3], const float *n);

/** Append a texture coordinate (u, v up); returns its index as add_pos. */
uint32_t lfs_thumb_add_uv(lfs_thumb_scene *s, float u, float v);

/** Append a material; returns its index as add_pos. */
uint32_t lfs_thumb_add_mat(lfs_thumb_scene *s, const lfs_thumb_mat *m);

/**
 * Append a texture; the scene takes ownership of @p rgba (malloc'd, w*h*4,
 * top row first) and may shrink it to LFS_THUMB_TEX_MAX. Returns its index;
 * on failure frees @p rgba and returns LFS_THUMB_NONE.
 */
uint32_t lfs_thumb_add_tex(lfs_thumb_scene *s, uint8_t *rgba, uint32_t w, uint32_t h);

/** Append a triangle (indices are checked when drawing, not here). */
void lfs_thumb_add_tri(lfs_thumb_scene *s, const lfs_thumb_tri *t);

/**
 * Decode a TGA file (uncompressed or RLE; stb_image) into RGBA, top row
 * first, straight alpha. Files starting with the DDS or PLT magic, and
 * anything stb_image rejects, return false. Textures larger than 8192 on an
 * edge are rejected. *rgba is malloc'd (caller frees).
 */
bool lfs_thumb_decode_tga(const uint8_t *data, size_t n, uint8_t **rgba, uint32_t *w,
			  uint32_t *h);

/**
 * Decode a DDS texture, top mip level only, into RGBA (top row first, straight
 * alpha; *rgba malloc'd, caller frees). Two layouts: the standard one
 * ("DDS " magic, DDS_HEADER; FourCC DXT1/DXT2/DXT3/DXT4/DXT5, DX10 with BC1–BC3
 * or 8-bit RGBA/BGRA, or uncompressed RGB/luminance/alpha masks of 8–32 bits)
 * and BioWare's own 20-byte header (u32 width, u32 height, u32 channels:
 * 3 = DXT1, 4 = DXT5; u32 top-level bytes; f32 alpha mean; then the blocks).
 * Rows are stored bottom row first, as the game uploads them (the first
 * stored row is v = 0), and are flipped here. False on anything else,
 * on edges over 8192 or on data shorter than the top level.
 */
bool lfs_thumb_decode_dds(const uint8_t *data, size_t n, uint8_t **rgba, uint32_t *w,
			  uint32_t *h);

/**
 * Decode a texture file of any kind the thumbnails read: DDS ("DDS " magic),
 * TGA, then BioWare DDS (no magic; its first bytes, a width below 65536, make
 * a TGA of image type 0, which the TGA decoder rejects). PLT ("PLT V1") is
 * not decoded: its material keeps its colour. Same contract as above.
 */
bool lfs_thumb_decode_texture(const uint8_t *data, size_t n, uint8_t **rgba, uint32_t *w,
			      uint32_t *h);

/**
 * Decode one 8-byte DXT colour block (BC1 layout: two RGB565 endpoints, then
 * 2-bit indices, texel 0 in the lowest bits, rows top to bottom) into 16 RGBA
 * texels. @p dxt1: when endpoint 0 <= endpoint 1 the block is in the
 * three-colour mode (index 2 = midpoint, index 3 = transparent black);
 * otherwise (and always in DXT3/DXT5) indices 2 and 3 are the 2/3–1/3 and
 * 1/3–2/3 blends. Channels widen by bit replication, blends round down.
 */
void lfs_dxt_color_block(const uint8_t b[8], bool dxt1, uint8_t out[16][4]);

/** Decode a DXT3 alpha block (16 explicit 4-bit alphas, ×17) into 16 alphas. */
void lfs_dxt3_alpha_block(const uint8_t b[8], uint8_t out[16]);

/**
 * Decode a DXT5 alpha block (two 8-bit endpoints, then 16 3-bit indices):
 * a0 > a1 gives 8 values (6 blends (7−i)/7·a0 + i/7·a1), otherwise 6 values
 * (4 blends in fifths) plus 0 and 255. Blends round down.
 */
void lfs_dxt5_alpha_block(const uint8_t b[8], uint8_t out[16]);

/** Number of triangles of @p s that would be drawn (valid indices, finite positions). */
size_t lfs_thumb_drawable(const lfs_thumb_scene *s);

/**
 * Render @p s into a new @p size × @p size RGBA image (straight alpha, top
 * row first, *rgba malloc'd: size*size*4 bytes): z-buffered perspective
 * rasterizer with 8 samples per pixel (multisampled: coverage and depth per
 * sample, colour per pixel; per sample for cut-out textures), box-filtered
 * with premultiplied alpha, transparent background, Lambert + ambient from
 * key and fill lights fixed relative to the camera, both faces of every
 * triangle lit as seen, perspective-correct bilinear texturing
 * (wrap-around). Single-threaded; memory beyond the scene: one 16-row strip
 * of samples (size × 16 × 8 × 8 bytes) plus per-position and binning arrays.
 *
 * Normals left at (0,0,0) are filled in (area-weighted face normals summed
 * per position), which is why @p s is not const.
 *
 * @return LFS_OK; LFS_ERR_UNSUPPORTED when no triangle is drawable or the
 *         size is not one of lfs_thumb_size_ok(); LFS_ERR_NOMEM.
 */
lfs_err lfs_thumb_render(lfs_thumb_scene *s, unsigned size, uint8_t **rgba, lfs_error *err);

/**
 * Encode an RGBA image as PNG through libpng: 8-bit RGBA, non-interlaced,
 * zlib level 1 with the Sub filter only, tEXt "Thumb::URI" = @p uri (left
 * out when NULL) and "Thumb::MTime" = @p mtime in decimal seconds (left out
 * when negative), as the freedesktop Thumbnail Managing Standard requires,
 * plus "Software" = "legacyfs". *png is malloc'd (caller frees).
 * @return LFS_OK, LFS_ERR_NOMEM (or any libpng failure, as LFS_ERR_NOMEM).
 */
lfs_err lfs_thumb_png(const uint8_t *rgba, unsigned w, unsigned h, const char *uri, int64_t mtime,
		      uint8_t **png, size_t *pngn, lfs_error *err);

/**
 * The PNG @p png (@p n bytes, as written by lfs_thumb_png()) with its
 * "Thumb::URI" and "Thumb::MTime" tEXt chunks replaced by @p uri (left out
 * when NULL) and @p mtime (left out when negative), inserted right after
 * IHDR where libpng writes them: lfs_thumb_png(rgba, .., NULL, -1) then this
 * gives the very bytes of lfs_thumb_png(rgba, .., uri, mtime). The disk
 * cache of the mount (src/fs/thumbcache.h) stores pictures without the two
 * keys, so a moved or touched model with the same bytes still hits.
 * Chunk layout and CRC-32: the PNG specification (W3C, "Portable Network
 * Graphics (PNG) Specification"), sections 5.3 and 11.3.4.3.
 * @return LFS_OK and *out malloc'd; LFS_ERR_CORRUPT when @p png is not a
 *         PNG starting with IHDR; LFS_ERR_NOMEM.
 */
lfs_err lfs_thumb_png_retext(const uint8_t *png, size_t n, const char *uri, int64_t mtime,
			     uint8_t **out, size_t *outn, lfs_error *err);

#endif
