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
 *
 * Resolution over SOURCE (docs/mount.md "Textures"): when no ancestor folder
 * holds the texture, one index of every texture file under SOURCE (all
 * folders; symbolic links to folders not followed; at most
 * LFS_TEXTURE_INDEX_DEPTH folders deep and LFS_TEXTURE_INDEX_MAX entries),
 * of the texture and MDL resources of every ERF-family archive under
 * SOURCE (.erf .hak .mod .sav .nwm; names from the archive's key list
 * alone), then of each respath folder (lfs_texture_set_respath()), answers.
 * Key: the file name without its extension (a resource's ResRef),
 * case-insensitive (ASCII). Precedence, first wins: SOURCE before the
 * respath folders in their order; then the place, by resorder.h's one rule
 * (lfs_resorder_cmp(): an EE install's development/ folder, the module's
 * haks in its Mod_HakList order, the module, override folders, other loose
 * files — the shallowest, then the bytewise smallest folder — other
 * archives in bytewise path order, KEYs in the game's load order, other
 * loose files of an install); then .tga, .dds, .plt; then the bytewise
 * smallest name. Respath folders get the asset-folder part of the rule. Answers in SOURCE are relative to the model
 * directory ("../../B/tex.tga", "../../B/x.hak/tex.tga": the resource's
 * file inside the archive's folder in the mount); answers in a respath
 * folder are absolute paths. KEY resources are indexed (from the KEY,
 * for the BIFs lfs_archive_key_each() finds).
 *
 * A model inside an ERF-family archive (model_rel "<archive>/<resref>.mdl")
 * looks in that archive first ("../tex.tga"), then as a loose model there.
 *
 * The index is process-wide per SOURCE root (its device and inode), built
 * lazily by the first lookup that needs it, rebuilt by the first lookup
 * after lfs_texture_index_invalidate() (the mount's watcher calls it when a
 * texture, model or archive file or a folder is created, deleted or
 * renamed, or an archive written) or after
 * lfs_texture_set_respath(). Thread-safe; the build runs outside the lock.
 */
#ifndef LFS_FS_TEXTURE_H
#define LFS_FS_TEXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "../common/strbuf.h"

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
 * Writes e.g. "../../W_metal_tex.tga" (nearest ancestor or SOURCE-wide index)
 * or "/abs/respath/dir/tex.tga" to @p out and returns true, or returns
 * false when no file matches (or the answer does not fit @p outsz).
 */
bool lfs_texture_lookup(void *ctx, const char *resref, char *out, size_t outsz);

/** Most texture files the SOURCE-wide index holds (further ones are not indexed). */
#define LFS_TEXTURE_INDEX_MAX ((size_t)1 << 22)

/** Deepest folder level the SOURCE-wide index descends to below a root. */
#define LFS_TEXTURE_INDEX_DEPTH 64u

/**
 * Set the folders searched after SOURCE, process-wide: @p dirs is a
 * ':'-separated list (empty entries skipped; NULL or "" = none). Each is made
 * absolute (realpath) and must be a folder. Returns 0, or an errno (ENOTDIR,
 * ENOENT, ENOMEM, ...) and then changes nothing.
 */
int lfs_texture_set_respath(const char *dirs);

/** Does file name @p name end in a texture extension (.tga, .dds, .plt, any case)? */
bool lfs_texture_name(const char *name);

/** Is @p name an ERF-family archive's (.erf .hak .mod .sav .nwm, any case)? */
bool lfs_texture_archive_name(const char *name);

/**
 * Does a file named @p name count in the SOURCE-wide index (a texture, a
 * `.mdl` model, an ERF-family archive, a KEY, a `module.ifo`: its hak list
 * orders the haks)? The watcher invalidates the index
 * when one is created, deleted or renamed (and an archive when written).
 */
bool lfs_texture_index_name(const char *name);

/**
 * Make the next lookup under root @p rootfd rebuild the SOURCE-wide index,
 * and drop the unused shared archive tables (archive_table.h: read again,
 * BIFs included, when next asked for).
 */
void lfs_texture_index_invalidate(int rootfd);

/**
 * Identity of resource @p rel (relative to root @p rootfd) as the texture
 * lookup answers it: the file's stat, or, for a resource inside an
 * ERF-family archive ("<archive>/<resref.ext>"), the archive file's.
 * False when neither exists.
 */
bool lfs_texture_stat(int rootfd, const char *rel, struct stat *st);

/**
 * Supermodel lookup by ResRef (docs/mount.md "Textures"): read model
 * `<name>.mdl` (@p name ignoring case, at most 32 bytes) for a model whose
 * folder is @p dir (relative to SOURCE root @p rootfd). When @p dir is an
 * ERF-family archive (the model lives inside it), that archive's own MDL
 * resource first; then the SOURCE-wide index (models: loose `.mdl` files
 * and MDL resources of archives and KEYs, in resorder.h's order; then the
 * respath folders). At most @p max bytes; *data malloc'd (caller frees).
 * False when there is none or it cannot be read. (The folder beside the
 * model is the caller's first place: lfs_sibling_model_read().)
 */
bool lfs_texture_model_read(int rootfd, const char *dir, const char *name, size_t max,
			    uint8_t **data, size_t *n);

/**
 * Where lfs_texture_model_read() finds model `<name>.mdl` (the supermodel
 * rule): for a model in archive @p dir, that archive's MDL resource
 * ("<dir>/<stored resref>.mdl"); else the file beside the model in @p dir
 * (as written, then lower case); then the SOURCE-wide index. *path
 * (malloc'd, caller frees) is relative to SOURCE root @p rootfd, as the
 * mount shows the copy (a loose file, or "<archive>/<resref>.mdl"), or an
 * absolute path in a respath folder (then *outside is true). False when
 * there is none (or out of memory).
 */
bool lfs_texture_model_path(int rootfd, const char *dir, const char *name, char **path, bool *outside);

/** Largest texture file lfs_texture_read() reads, in bytes. */
#define LFS_TEXTURE_READ_MAX ((size_t)64 << 20)

/**
 * The lfs_texture_read_fn for lfs_view_opts (thumbnails): @p ctx is an
 * lfs_texture_ctx. Finds the file as lfs_texture_lookup() does and reads it
 * whole (regular files up to LFS_TEXTURE_READ_MAX bytes; a resource inside
 * an archive: the archive's tables and that one payload, decompressed for
 * E1.0, up to the same bound: erf.h lfs_erf_decode_fd) into a malloc'd
 * buffer (*data, *n; caller frees). False when there is no such file or it
 * cannot be read.
 */
bool lfs_texture_read(void *ctx, const char *resref, uint8_t **data, size_t *n);

/**
 * "Which resource wins" over SOURCE @p rootfd (docs/archives.md "Resources
 * by ResRef"): appends to @p out one line per resource, every type (loose
 * files whose extension names a resource type, except .bif; every entry of
 * the ERF-family archives; every entry of the KEYs whose BIF
 * lfs_archive_key_each() opens):
 *
 *     resref.ext<TAB>winner[<TAB>other copy]...\n
 *
 * `resref` as stored in the winning copy, `ext` the type's lower-case
 * extension (restype.h); lines sorted by ResRef ignoring case, then type
 * number; copies in precedence order (resorder.h lfs_resorder_cmp(), then
 * the name bytewise). Each copy is its path relative to SOURCE as the mount
 * shows it: `override/x.tga`, `hak/cep.hak/x.tga`, `data/nwn_base.key/x.mdl`.
 * Names with control characters or '/' are left out. Respath folders are not
 * listed. Built afresh on each call (a scan and a walk of SOURCE; archives'
 * tables and KEYs read, no payload): O(n log n) in resources, memory per
 * resource ~12 bytes plus its name once (resorder.c). At most
 * LFS_TEXTURE_INDEX_MAX resources. False when out of memory (@p out then
 * holds a partial text or is in the failed state).
 */
bool lfs_texture_resources_text(int rootfd, lfs_sb *out);

#endif
