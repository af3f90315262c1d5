/**
 * @file viewset.h
 * The set of generated files ("views") of one model file, through the format
 * registry (src/registry/format.h, registry.c). Build and find: viewset.c;
 * apply (held to the round-trip law): viewset_apply.c.
 *
 * This is the entry point the filesystem layer (src/fs/), the companion
 * command and the thumbnailer use: bytes of a source file in, a sorted list of
 * lfs_view out (path, bytes, kind, target, writable); an edited view in, new
 * model bytes out. It looks the format up in the registry and calls that
 * format's row; it never switches on a format. No FUSE code here.
 *
 * The list is sorted by path (bytewise) so directory listings and lookups
 * are deterministic.
 */
#ifndef LFS_VIEWSET_H
#define LFS_VIEWSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "format.h"

/** All views of one model, sorted by path. */
typedef struct lfs_viewset {
	const lfs_format *format; /**< the registry row that built it */
	lfs_view *views;
	size_t n_views;
	bool writable; /**< some view can be saved back (one of views[].writable) */
	/** The model's views would pass opts->view_budget: the set holds only
	 *  LFS_VIEWSET_NOTICE_NAME (kind LFS_VIEW_NOTICE, read-only), whose
	 *  text says so; nothing of it can be saved. */
	bool over_budget;
	/** Built with lfs_view_opts.thumb_lazy: "thumbnail.png" is listed but has no
	 *  bytes yet (data NULL, size 0) until lfs_viewset_thumb_set(). */
	bool thumb_pending;
	/** A caller is producing the pending thumbnail right now (set and cleared by
	 *  that caller under its own lock; the mount's fs_thumb.c): others wait. */
	bool thumb_busy;
	/** Built with lfs_view_opts.names_only: every view is listed with no
	 *  bytes (data NULL, size 0); build again without it for the bytes. */
	bool names_only;
} lfs_viewset;

/** Path of the thumbnail view in a model folder. */
#define LFS_VIEWSET_THUMB_NAME "thumbnail.png"

/** The one view of a model over its memory budget. */
#define LFS_VIEWSET_NOTICE_NAME "README.txt"

/**
 * Memory a model's build holds besides its views, per byte of the model
 * file, counted against opts->view_budget: the file's bytes (1) plus the
 * decoded model, which measured 1.0-2.5 x the file over the corpus and a
 * generated 89 MB NWN model (docs/performance.md "Memory per model").
 */
#define LFS_VIEWSET_HELD_PER_BYTE 4u

/**
 * model_memory the README of a model over budget suggests, per byte of the
 * model file: the held bytes plus views, which take 1.6-8.5 x the file over
 * the corpus.
 */
#define LFS_VIEWSET_SUGGEST_PER_BYTE 13u

/**
 * Build every view of a model file (plus thumbnail.png when
 * opts->thumb_size is set and the model has drawable triangles: rendered
 * now, or with opts->thumb_lazy listed as pending, vs->thumb_pending).
 *
 * Memory budget (opts->view_budget, bytes; 0 = none) of everything the build
 * holds: LFS_VIEWSET_HELD_PER_BYTE x @p n for the file's bytes and the
 * decoded model, the rest for the views. A file whose views would not get
 * at least @p n bytes is not even decoded. Otherwise the bytes of the views
 * are counted as each one is added and no single text buffer may grow past
 * what is left (strbuf.h lfs_sb_set_limit), so the build stops as soon as it
 * passes the budget and frees what it built: the peak stays near the budget,
 * never "build all, then measure". Such a model still builds LFS_OK, with
 * out->over_budget set and a single read-only view LFS_VIEWSET_NOTICE_NAME
 * naming the budget and the -o model_memory value to mount with.
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
 * Could a file named @p name (base name) be a model at all: does some
 * registry row claim its extension (case-insensitively)? False: the file is
 * plain whatever its bytes, and need not be read (lfs_format_for() would
 * not ask any detector). Listing a folder uses it to read no file whose
 * name rules it out.
 */
bool lfs_views_candidate(const char *name);

/**
 * Can a model file of @p n bytes be built within opts->view_budget at all
 * (always true without a budget)? When false lfs_views_build() gives the
 * over-budget README.txt without decoding: a caller may skip reading the
 * file past its header (source.c).
 */
bool lfs_views_may_fit(size_t n, const lfs_view_opts *opts);

/** The LFS_ERR_NOTFORMAT error for a file @p name (may be NULL) that no row
 *  of the registry takes: "NAME: not a binary model". */
lfs_err lfs_views_not_a_model(const char *name, lfs_error *err);

/**
 * lfs_views_build() for bytes already known to be of format @p f (no
 * detection by name): every view but the thumbnail unless opts asks for it.
 * @return as lfs_views_build().
 */
lfs_err lfs_views_build_as(const lfs_format *f, const uint8_t *data, size_t n,
			   const lfs_view_opts *opts, lfs_viewset *out, lfs_error *err);

/**
 * lfs_views_build_as() of bytes whose decoded model the caller already
 * holds: @p model (read only, not retained) must be @p f's decode of exactly
 * @p data (@p n bytes; still needed for a thumbnail); the views come from
 * @p model through f->build_views_model, or from @p data when the format
 * has none or @p model is NULL. The result equals lfs_views_build_as() of
 * @p data. @return as lfs_views_build().
 */
lfs_err lfs_views_build_model(const lfs_format *f, const void *model, const uint8_t *data,
			      size_t n, const lfs_view_opts *opts, lfs_viewset *out,
			      lfs_error *err);

/**
 * Apply an edited view to a model file: the format's apply with view @p v
 * (a view of a set built from exactly @p orig, @p n bytes, by format @p f).
 *
 * The result is held to the round-trip law (law.h, docs/editing.md "The
 * round-trip law"): reading view @p v of the new bytes must give back
 * @p text up to the documented normalisations, else the save is refused
 * (also when the format's apply returned the original bytes). A result
 * that differs from @p orig is then held to the law over the whole model
 * (lfs_law_check_whole(), docs/editing.md "The law over the whole model"):
 * the other views change only where the edit explains it.
 *
 * An empty @p text (nothing but spaces and line ends) for a view that is
 * not empty is refused here for every format, `VIEW:1:1: error: the view is
 * empty: ...` naming how to delete for real (its node in the model's text):
 * an empty save would delete the mesh, track or model (archive resources,
 * LFS_VIEW_RESOURCE, are payloads and exempt).
 *
 * @param sib    sibling-file reader (NWN supermodel), may be NULL
 * @param out    receives the new file bytes (malloc'd; caller frees)
 * @return LFS_OK; LFS_ERR_PARSE with `path:line:col: message` for a bad
 *         edit or one that would not survive (the law); LFS_ERR_UNSUPPORTED when the view is read-only;
 *         LFS_ERR_NOTFORMAT / LFS_ERR_CORRUPT when @p orig does not decode.
 */
lfs_err lfs_view_apply(const lfs_format *f, const uint8_t *orig, size_t n, const lfs_view *v,
		       const char *text, size_t tn, const lfs_siblings *sib, uint8_t **out,
		       size_t *outn, lfs_error *err);

/**
 * lfs_view_apply() that also hands back the text view @p v reads back as
 * from the new bytes, as the round-trip law built it (the mount's commit
 * serves it without building every view of the new file again):
 * *reread malloc'd (caller frees), *rn bytes, on LFS_OK; NULL when the law
 * compares no text for the view's kind (thumbnail, materials) or memory ran
 * out (the caller then builds the view itself).
 */
lfs_err lfs_view_apply_keep(const lfs_format *f, const uint8_t *orig, size_t n, const lfs_view *v,
			    const char *text, size_t tn, const lfs_siblings *sib, uint8_t **out,
			    size_t *outn, char **reread, size_t *rn, lfs_error *err);

/**
 * lfs_view_apply() for a view named by path (`legacyfs-convert apply`,
 * tests): detects the format from @p name, builds the views of @p orig (no
 * thumbnail) to find the view @p viewpath, and applies @p text to it.
 * @return as lfs_view_apply(); LFS_ERR_UNSUPPORTED also when the model has
 *         no view @p viewpath.
 */
lfs_err lfs_views_apply(const char *name, const uint8_t *orig, size_t n, const char *viewpath,
			const char *text, size_t tn, uint8_t **out, size_t *outn, lfs_error *err);

/** lfs_views_apply() with a sibling-file reader (@p sib may be NULL). */
lfs_err lfs_views_apply_ex(const char *name, const uint8_t *orig, size_t n, const char *viewpath,
			   const char *text, size_t tn, lfs_sibling_read_fn sib, void *sib_ctx,
			   uint8_t **out, size_t *outn, lfs_error *err);

/**
 * The view @p viewpath of file @p name (@p n bytes at @p orig) that a save
 * edits, built alone from those bytes (lfs_view_opts.only) into @p own
 * (free with lfs_viewset_free() whatever the result; own->format is the
 * row): what lfs_views_apply_ex() and the mount's commit use when no built
 * view set of these bytes is at hand. *@p v points into @p own.
 * @return LFS_OK; LFS_ERR_NOTFORMAT (no row takes the file);
 *         LFS_ERR_UNSUPPORTED (a read-only format, or no such view); the
 *         build's error.
 */
lfs_err lfs_views_edited(const char *name, const uint8_t *orig, size_t n, const char *viewpath,
			 lfs_viewset *own, const lfs_view **v, lfs_error *err);

/**
 * Thumbnail renderer version: part of every thumbnail cache key (with the
 * source content hash and the size). Bumped on any change that alters pixels.
 */
#define LFS_THUMB_VERSION 2u /* 2: DDS textures, meshes faded in by animations */

/**
 * Render the thumbnail of a model file as PNG (src/render/thumb.h,
 * docs/thumbnails.md): the format's thumbnail scene (lfs_format.thumb_scene:
 * the model's drawable triangles), seen in a 3/4 view from above, textured
 * when opts->texture_read finds a TGA.
 *
 * @param name   the model file's base name (selects the format, as lfs_format_for)
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

/**
 * The pending thumbnail view of @p vs (vs->thumb_pending: listed, no bytes
 * yet), or NULL when there is none to fill.
 */
lfs_view *lfs_viewset_thumb_pending(lfs_viewset *vs);

/**
 * Give the pending thumbnail view of @p vs its bytes: takes ownership of
 * @p png (@p n bytes, malloc'd) and clears vs->thumb_pending. Without a
 * pending thumbnail @p png is freed and nothing changes. The caller
 * serialises this with every reader of the set (the mount: under fs->mu).
 */
void lfs_viewset_thumb_set(lfs_viewset *vs, uint8_t *png, size_t n);

/**
 * Make the drawn thumbnail of @p vs pending again (its bytes freed, size 0,
 * vs->thumb_pending set): what it was drawn from (a texture) changed. False
 * when there is no drawn thumbnail (none, pending, or being drawn). The
 * caller serialises this with every reader of the set.
 */
bool lfs_viewset_thumb_reset(lfs_viewset *vs);

/**
 * Does format @p f's model @p data have a thumbnail to draw? Builds its
 * thumbnail scene without reading textures (no rasterizing, no PNG) and
 * counts drawable triangles (lfs_thumb_drawable()). This is what decides
 * whether a lazy build lists "thumbnail.png".
 */
bool lfs_views_thumb_drawable(const lfs_format *f, const uint8_t *data, size_t n);

/** Free a viewset's contents (not the struct itself). */
void lfs_viewset_free(lfs_viewset *vs);

/** The view at @p path, or NULL. Binary search: the set is sorted. */
const lfs_view *lfs_viewset_find(const lfs_viewset *vs, const char *path);

#endif
