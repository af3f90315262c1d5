/**
 * @file viewset.h
 * The set of generated files ("views") of one model file.
 *
 * This is the single entry point the filesystem layer (src/fs/) and the
 * companion command use: bytes of a source file in, a list of (relative path,
 * bytes) out. It dispatches on the format, decodes, and runs every text/OBJ/
 * CSV generator. No FUSE code here.
 *
 * Paths are relative to the model directory, '/'-separated, already mapped to
 * safe unique names (see names.h), e.g. "model.mdl", "meshes/Mesh02.obj",
 * "anims/equip/Flame02.birthrate.csv". The list is sorted by path (bytewise)
 * so directory listings and lookups are deterministic.
 */
#ifndef LFS_VIEWSET_H
#define LFS_VIEWSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"

/** Format of a source file as recognised by lfs_detect(). */
typedef enum lfs_format {
	LFS_FMT_NONE = 0, /**< not a model we decode: passes through */
	LFS_FMT_NWN_MDL,  /**< NWN binary MDL */
	LFS_FMT_NOD,      /**< Vampire: The Masquerade – Redemption model */
	LFS_FMT_NAD,      /**< Vampire: The Masquerade – Redemption animation */
	LFS_FMT_NIL,      /**< Vampire: The Masquerade – Redemption level (read-only) */
	LFS_FMT_SOD,      /**< Star Trek: Armada model */
} lfs_format;

/** One generated file. Owns `path` and `data`. */
typedef struct lfs_view {
	char *path;
	char *data;
	size_t size;
} lfs_view;

/**
 * Texture lookup used for model.mtl's map_Kd: given a texture resref (no
 * extension), write into @p out a path relative to the *model directory*
 * (e.g. "../W_metal_tex.tga") and return true, or return false when no
 * texture file with that resref exists. Called with the caller's @p ctx.
 */
typedef bool (*lfs_texture_lookup_fn)(void *ctx, const char *resref, char *out, size_t outsz);

/**
 * Texture reader used by thumbnails: given a texture resref (no extension),
 * find the texture file by the same rule as lfs_texture_lookup_fn (case-
 * insensitive, the model's folder first, then each ancestor folder up to the
 * SOURCE root; .tga before .dds before .plt in one folder), read the whole
 * file into a malloc'd buffer (*data, *n bytes; the caller frees it) and
 * return true; return false (leaving *data NULL) when there is no such file
 * or it cannot be read. The bytes are whatever the file holds: the renderer
 * decodes TGA and falls back to the material colour for anything else.
 * Called with the caller's texture_ctx.
 */
typedef bool (*lfs_texture_read_fn)(void *ctx, const char *resref, uint8_t **data, size_t *n);

/** Options for lfs_views_build() and lfs_views_thumbnail(). Zero-initialised = defaults. */
typedef struct lfs_view_opts {
	lfs_texture_lookup_fn texture_lookup; /**< may be NULL: no map_Kd lines */
	void *texture_ctx;                    /**< passed to texture_lookup and texture_read */
	lfs_texture_read_fn texture_read;     /**< may be NULL: thumbnails use material colours */
	/**
	 * When non-zero, lfs_views_build() also renders "thumbnail.png" at this
	 * edge length in pixels (128, 256, 512 or 1024) for models with drawable
	 * triangles (docs/thumbnails.md). 0 = no thumbnail view.
	 */
	unsigned thumb_size;
	const char *thumb_uri;  /**< Thumb::URI of the source file (may be NULL) */
	int64_t thumb_mtime;    /**< Thumb::MTime: source mtime, seconds */
} lfs_view_opts;

/** All views of one model, sorted by path. */
typedef struct lfs_viewset {
	lfs_format format;
	lfs_view *views;
	size_t n_views;
} lfs_viewset;

/**
 * Decide from the file name and bytes whether a file is a model we decode.
 * Cheap: header checks only, no full decode. @p name is the file's base name
 * (extension compared case-insensitively).
 */
lfs_format lfs_detect(const char *name, const uint8_t *data, size_t n);

/**
 * Build every view of a model file.
 *
 * @return LFS_OK and a filled @p out (free with lfs_viewset_free());
 *         LFS_ERR_NOTFORMAT when the file is not a model (pass it through);
 *         LFS_ERR_CORRUPT etc. when it looks like a model but fails to decode:
 *         @p err names offset and structure; the caller passes the file
 *         through as its original bytes and reports the message.
 */
lfs_err lfs_views_build(const char *name, const uint8_t *data, size_t n,
			const lfs_view_opts *opts, lfs_viewset *out, lfs_error *err);

/**
 * Apply an edited view to a model file: decode @p orig (the model file's
 * current bytes, @p n long), replace or patch the model with the edited text
 * of view @p viewpath (a path as listed by lfs_views_build), encode.
 *
 * @param name   the model file's base name (selects the format, as lfs_detect)
 * @param out    receives the new file bytes (malloc'd; caller frees)
 * @return LFS_OK; LFS_ERR_PARSE with `viewpath:line:col: message` for a bad
 *         edit; LFS_ERR_UNSUPPORTED when the view (or the whole format) is
 *         read-only; LFS_ERR_NOTFORMAT / LFS_ERR_CORRUPT when @p orig itself
 *         does not decode.
 */
lfs_err lfs_views_apply(const char *name, const uint8_t *orig, size_t n, const char *viewpath,
			const char *text, size_t tn, uint8_t **out, size_t *outn, lfs_error *err);

/**
 * Reads another model file of the same folder by name, for formats whose
 * compiler needs it (NWN: the supermodel `<name>.mdl`, for part numbers of
 * new nodes — docs/nwn-compile.md). Returns the file's bytes (malloc'd,
 * caller frees) or false when there is no such file.
 */
typedef bool (*lfs_sibling_read_fn)(void *ctx, const char *name, uint8_t **data, size_t *n);

/**
 * lfs_views_apply() with a sibling lookup (@p sib may be NULL). The mount and
 * `legacyfs-convert apply` pass one that reads `<name>.mdl` beside the model.
 */
lfs_err lfs_views_apply_ex(const char *name, const uint8_t *orig, size_t n, const char *viewpath,
			   const char *text, size_t tn, lfs_sibling_read_fn sib, void *sib_ctx,
			   uint8_t **out, size_t *outn, lfs_error *err);

/**
 * True when view @p viewpath of a model of @p format can be written back
 * (the format has an encoder and the view maps back exactly). Cheap.
 */
bool lfs_view_writable(lfs_format format, const char *viewpath);

/**
 * Thumbnail renderer version: part of every thumbnail cache key (with the
 * source content hash and the size). Bumped on any change that alters pixels.
 */
#define LFS_THUMB_VERSION 1u

/**
 * Render the thumbnail of a model file as PNG (src/views/thumb.h,
 * docs/thumbnails.md): the model's drawable triangles (NWN: meshes with
 * render != 0 — trimesh, skin and danglymesh in rest pose — without aabb
 * walkmeshes, emitters, lights; NOD: every group in the rest pose; SOD: mesh
 * nodes, highest LOD only; NIL: the sector strips of model.obj), seen in a
 * 3/4 view from above, textured when opts->texture_read finds a TGA.
 *
 * @param name   the model file's base name (selects the format, as lfs_detect)
 * @param size   edge in pixels: 128, 256, 512 or 1024
 * @param opts   may be NULL (no textures)
 * @param uri    written as tEXt Thumb::URI (freedesktop standard); NULL = left out
 * @param mtime  the source file's modification time in seconds, written as
 *               tEXt Thumb::MTime; negative = left out
 * @param png    receives the PNG bytes (malloc'd; caller frees)
 * @return LFS_OK; LFS_ERR_UNSUPPORTED when the model has no drawable
 *         triangles (e.g. every NAD, effect-only NWN models) or @p size is
 *         not allowed; LFS_ERR_NOTFORMAT / LFS_ERR_CORRUPT as
 *         lfs_views_build(); LFS_ERR_NOMEM.
 * Cache keys should include LFS_THUMB_VERSION.
 */
lfs_err lfs_views_thumbnail(const char *name, const uint8_t *data, size_t n, unsigned size,
			    const lfs_view_opts *opts, const char *uri, int64_t mtime,
			    uint8_t **png, size_t *pngn, lfs_error *err);

/** Free a viewset's contents (not the struct itself). */
void lfs_viewset_free(lfs_viewset *vs);

/** The view at @p path, or NULL. Binary search: the set is sorted. */
const lfs_view *lfs_viewset_find(const lfs_viewset *vs, const char *path);

#endif
