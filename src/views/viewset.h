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

/** Options for lfs_views_build(). Zero-initialised = defaults. */
typedef struct lfs_view_opts {
	lfs_texture_lookup_fn texture_lookup; /**< may be NULL: no map_Kd lines */
	void *texture_ctx;
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
 * True when view @p viewpath of a model of @p format can be written back
 * (the format has an encoder and the view maps back exactly). Cheap.
 */
bool lfs_view_writable(lfs_format format, const char *viewpath);

/** Free a viewset's contents (not the struct itself). */
void lfs_viewset_free(lfs_viewset *vs);

/** The view at @p path, or NULL. Binary search: the set is sorted. */
const lfs_view *lfs_viewset_find(const lfs_viewset *vs, const char *path);

#endif
