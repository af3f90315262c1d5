/**
 * @file texture.h
 * Texture lookup for model.mtl (lfs_view_opts.texture_lookup).
 *
 * Rule (docs/mount.md "Textures"): a texture resref is matched
 * case-insensitively against the files "<resref>.tga", "<resref>.dds",
 * "<resref>.plt" (extension also case-insensitive) in the model's folder,
 * then in each ancestor folder up to the SOURCE root. The nearest folder
 * wins; inside one folder .tga beats .dds beats .plt, and among names that
 * differ only in case the bytewise smallest wins (deterministic). The answer
 * is relative to the *model directory* (the directory the model file turns
 * into), so a texture next to the model file is "../<name>".
 *
 * Directory listings are cached inside the context for the duration of one
 * view build. No FUSE code here.
 */
#ifndef LFS_FS_TEXTURE_H
#define LFS_FS_TEXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** One listed folder (private). */
typedef struct lfs_texdir {
	char *rel;    /**< folder relative to the root ("." = root) */
	char **names; /**< file names with a texture extension */
	size_t n;
} lfs_texdir;

/** Lookup context for one model. */
typedef struct lfs_texture_ctx {
	int rootfd;            /**< SOURCE root directory (not owned) */
	const char *model_rel; /**< model file relative to the root, '/'-separated (not owned) */
	lfs_texdir *dirs;      /**< listing cache */
	size_t n_dirs, cap_dirs;
} lfs_texture_ctx;

/** Start a context; nothing is read yet. */
void lfs_texture_ctx_init(lfs_texture_ctx *c, int rootfd, const char *model_rel);

/** Free the listing cache. */
void lfs_texture_ctx_free(lfs_texture_ctx *c);

/**
 * The lfs_texture_lookup_fn for lfs_view_opts: @p ctx is an lfs_texture_ctx.
 * Writes e.g. "../../W_metal_tex.tga" to @p out and returns true, or returns
 * false when no file matches (or the answer does not fit @p outsz).
 */
bool lfs_texture_lookup(void *ctx, const char *resref, char *out, size_t outsz);

/** Largest texture file lfs_texture_read() reads, in bytes. */
#define LFS_TEXTURE_READ_MAX ((size_t)64 << 20)

/**
 * The lfs_texture_read_fn for lfs_view_opts (thumbnails): @p ctx is an
 * lfs_texture_ctx. Finds the file as lfs_texture_lookup() does and reads it
 * whole (regular files up to LFS_TEXTURE_READ_MAX bytes) into a malloc'd
 * buffer (*data, *n; caller frees). False when there is no such file or it
 * cannot be read.
 */
bool lfs_texture_read(void *ctx, const char *resref, uint8_t **data, size_t *n);

#endif
