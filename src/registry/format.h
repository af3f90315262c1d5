/**
 * @file format.h
 * The one interface every model format implements, and the registry of them.
 *
 * A format is a row: `const lfs_format lfs_format_<name>` (defined by the
 * format's own views entry file, src/formats/<fmt>/<name>_views.c, which
 * binds the format module's codec to its text views), named by the module's
 * meson.build and tabled by src/registry/registry.c from the generated
 * formats_list.h (src/formats/meson.build lists the modules). Everything above (src/fs/, src/tools/, the
 * thumbnailer, the conformance test) goes through lfs_format_for() and the
 * function pointers here; nothing above switches on a format.
 * docs/architecture.md "Adding a format" walks through a new row.
 *
 * No FUSE, no file system access: bytes in, bytes out. Every function that
 * can fail returns an lfs_err and fills an lfs_error (error.h): decoders name
 * the byte offset and the structure, text parsers `view:line:col`.
 */
#ifndef LFS_FORMATS_FORMAT_H
#define LFS_FORMATS_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"

struct lfs_vlist;       /* src/registry/vlist.h: the list a builder appends to */
struct lfs_thumb_scene; /* src/render/thumb.h: triangles handed to the renderer */
struct lfs_law_dialect; /* src/law/law.h: what the round-trip law knows of a text dialect */

/** "No index": the view has no animation / node / item of that level. */
#define LFS_VIEW_NONE UINT32_MAX

/** What a generated file shows. Fixed when the views are built. */
typedef enum lfs_view_kind {
	LFS_VIEW_TEXT = 1,  /**< the whole model or animation as MDL-style text
			     *   (NWN model.mdl, NOD/SOD/NIL model.txt, NAD anim.txt) */
	LFS_VIEW_MATERIALS, /**< model.mtl, the OBJ material library */
	LFS_VIEW_MODEL_OBJ, /**< model.obj: every mesh placed in model space */
	LFS_VIEW_MESH_OBJ,  /**< one mesh: NWN mesh node, NOD mesh group, SOD mesh
			     *   node, NIL sector (target.node) */
	LFS_VIEW_TRACK_CSV, /**< one track of keyframes: NWN controller
			     *   (target.anim, .node, .item = controller index),
			     *   NAD track (target.node), SOD channel (target.node) */
	LFS_VIEW_TABLE_CSV, /**< a table that is not a track (NAD tags.csv) */
	LFS_VIEW_THUMBNAIL, /**< thumbnail.png: rendered, never parsed back */
	LFS_VIEW_NOTICE,    /**< README.txt of a model over its memory budget
			     *   (lfs_view_opts.view_budget): the only view, read-only */
	LFS_VIEW_RESOURCE,  /**< a resource of an archive, its payload verbatim
			     *   (src/fs/fs_archive.h; saved by src/fs/archive_edit.h) */
	LFS_VIEW_MEMBER,    /**< a model candidate inside an archive (its payload's
			     *   size, no bytes): a folder of its own views when its
			     *   header is a model's, else a plain resource */
	LFS_VIEW_LINK,      /**< a symbolic link the mount adds (data = the target,
			     *   size its length): an NWN model's `supermodel` and
			     *   inherited `anims/<name>` (src/fs/supermodel.h) */
} lfs_view_kind;

/**
 * Which part of the model a view shows, as indices into the decoded model
 * (never a name to parse back). Unused levels are LFS_VIEW_NONE.
 */
typedef struct lfs_view_target {
	uint32_t anim; /**< animation index (NWN), LFS_VIEW_NONE for the geometry */
	uint32_t node; /**< node / mesh group / sector / track / channel index */
	uint32_t item; /**< controller index within the node (NWN CSV) */
} lfs_view_target;

/** The target of a view that shows the whole model. */
#define LFS_VIEW_WHOLE ((lfs_view_target){ LFS_VIEW_NONE, LFS_VIEW_NONE, LFS_VIEW_NONE })

/**
 * One generated file. Owns `path` and `data`. `path` is relative to the model
 * folder, '/'-separated, already safe and unique (src/registry/names.h), e.g.
 * "model.mdl", "meshes/Mesh02.obj", "anims/equip/Flame02.birthrate.csv".
 */
typedef struct lfs_view {
	char *path;
	char *data;
	size_t size;
	lfs_view_kind kind;
	lfs_view_target target;
	bool writable; /**< saving it re-encodes the model (the format has an
			*   encoder and the view maps back exactly) */
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

/** Options for building views. Zero-initialised = defaults. */
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
	/**
	 * With thumb_size: do not render "thumbnail.png" while building; list it
	 * as a pending view (no bytes) when the model has drawable triangles, to
	 * be filled with lfs_viewset_thumb_set() (viewset.h; the mount does it
	 * when the file is looked up: docs/thumbnails.md "In the mount").
	 */
	bool thumb_lazy;
	const char *thumb_uri;  /**< Thumb::URI of the source file (may be NULL) */
	int64_t thumb_mtime;    /**< Thumb::MTime: source mtime, seconds */
	/**
	 * Bound of the memory the views of one model may take, bytes (0 = no
	 * bound): the mount's -o model_memory. A model over it gets one
	 * README.txt view saying so instead of its views (viewset.h).
	 */
	size_t view_budget;
	/**
	 * Only this view is wanted (a path as in lfs_view.path; NULL = every
	 * view): the set built holds that view alone (or nothing when the model
	 * has no such view). Builders skip writing the other views' text when
	 * they ask lfs_vlist_wants() (registry/vlist.h); the result is the same
	 * either way. Used by the round-trip law and `legacyfs-convert cat`.
	 */
	const char *only;
	/**
	 * Names only: every view is listed (path, kind, target, writable) with
	 * no bytes (data NULL, size 0) and the set is marked names_only
	 * (viewset.h). Builders skip writing text when they ask
	 * lfs_vlist_wants(); the list is the same either way. The mount lists a
	 * model folder from such a set (docs/mount.md "Listing is cheap").
	 */
	bool names_only;
} lfs_view_opts;

/**
 * Reads another file of the model's folder by name, for formats whose
 * compiler needs one (NWN: the supermodel `<name>.mdl`, for part numbers of
 * new nodes — docs/nwn-compile.md). Returns true and the file's bytes
 * (malloc'd, caller frees) or false when there is no such file.
 */
typedef bool (*lfs_sibling_read_fn)(void *ctx, const char *name, uint8_t **data, size_t *n);

/** A sibling reader and its context; `read` NULL = no sibling files. */
typedef struct lfs_siblings {
	lfs_sibling_read_fn read;
	void *ctx;
	/** Optional (NULL = discard): where apply and compile put warnings of a
	 *  save that still lands (dropped degenerate faces, a supermodel not
	 *  found, ...); the mount copies them to the model's errors.txt and the
	 *  log, legacyfs-convert to stderr. */
	lfs_warnings *warn;
} lfs_siblings;

/**
 * One model format. Every pointer but those marked optional is set.
 * "Model" is the format's own decoded type (nwn_model, nod_model, ...),
 * passed as void * through this interface and owned by the caller of decode.
 */
typedef struct lfs_format {
	/** Short name, also used in messages and tests: "nwn-mdl", "nod", ... */
	const char *name;
	/** File name extensions with the dot, lower case, NULL-terminated;
	 *  compared case-insensitively with the end of the base name. */
	const char *const *extensions;
	/** Cheap header test, no full decode: does this look like our format? */
	bool (*detect)(const uint8_t *data, size_t n);

	/** Bytes -> model (*model malloc'd, free with free_model). Errors name
	 *  the byte offset and structure; never reads outside data[0..n). */
	lfs_err (*decode)(const uint8_t *data, size_t n, void **model, lfs_error *err);
	/** Model -> bytes (malloc'd, caller frees). For a model straight from
	 *  decode the bytes equal the input (lossless codecs). */
	lfs_err (*encode)(const void *model, uint8_t **out, size_t *n, lfs_error *err);
	/** Free a model from decode (NULL is allowed). */
	void (*free_model)(void *model);

	/** Decode @p data and append every view except thumbnail.png to @p l,
	 *  each with its kind, target and writability (src/registry/vlist.h). */
	lfs_err (*build_views)(const uint8_t *data, size_t n, const lfs_view_opts *opts,
			       struct lfs_vlist *l, lfs_error *err);

	/**
	 * Optional (NULL = every view is read-only): decode @p orig, replace the
	 * part that view @p v shows by the edited @p text, encode into *out
	 * (malloc'd). @p v is a view built from these very bytes; its path is
	 * used in messages only (`path:line:col: ...`). @p sib may be NULL.
	 * Returns LFS_ERR_PARSE for a bad edit, LFS_ERR_UNSUPPORTED for a view
	 * that does not map back.
	 */
	lfs_err (*apply)(const uint8_t *orig, size_t n, const lfs_view *v, const char *text,
			 size_t tn, const lfs_siblings *sib, uint8_t **out, size_t *outn,
			 lfs_error *err);

	/**
	 * Optional (NULL = apply alone): apply() that also hands back the model
	 * it decoded from its own result to check it, so that the round-trip
	 * law builds the saved view from it instead of decoding the same bytes
	 * again. *result (free with free_model; the caller owns it) is the
	 * decode of exactly *out (*outn bytes); NULL when the apply did not
	 * decode its result (no change, or a path that does not) or on error.
	 * Arguments and return values as apply().
	 */
	lfs_err (*apply_decoded)(const uint8_t *orig, size_t n, const lfs_view *v,
				 const char *text, size_t tn, const lfs_siblings *sib, uint8_t **out,
				 size_t *outn, void **result, lfs_error *err);

	/**
	 * Optional (NULL = build_views decodes the bytes): build_views() from a
	 * model already decoded (by decode or apply_decoded), read only; the
	 * views are those build_views() gives for the bytes it was decoded from.
	 */
	lfs_err (*build_views_model)(const void *model, const lfs_view_opts *opts,
				     struct lfs_vlist *l, lfs_error *err);

	/** Optional (NULL = no thumbnail): decode @p data and append its drawable
	 *  triangles, materials and textures to @p s (src/render/thumb_models.h). */
	lfs_err (*thumb_scene)(const uint8_t *data, size_t n, const lfs_view_opts *opts,
			       struct lfs_thumb_scene *s, lfs_error *err);

	/**
	 * Optional (NULL = none): compile the game's own text form of the model
	 * (NWN: ASCII MDL, a file with the same extension as the binary) into a
	 * new binary (*out malloc'd). @p file names the text in messages
	 * (`file:line:col: ...`); @p sib may be NULL. `legacyfs-convert compile`.
	 */
	lfs_err (*compile)(const char *file, const uint8_t *text, size_t n,
			   const lfs_siblings *sib, uint8_t **out, size_t *outn, lfs_error *err);

	/** Sibling files the compiler reads through lfs_siblings, for docs and
	 *  --help ("the supermodel <name>.mdl beside the model"); NULL = none. */
	const char *siblings;

	/**
	 * Optional (NULL = the format makes no new models from text): is
	 * @p name (a file name without its extension) one a new model of this
	 * format may take? When not, a reason (a static string) in *@p why.
	 * NWN: the resref rule, 1-16 of [A-Za-z0-9_] (BioWare Aurora "Key and
	 * BIF File Format", the 16-byte ResRef field). Used with text_rename by
	 * the mount's new models (`mkdir`, `cp -r`, `mv` of a model folder).
	 */
	bool (*name_valid)(const char *name, const char **why);

	/**
	 * Optional, with name_valid: the model's own text form (what `compile`
	 * reads, also its LFS_VIEW_TEXT view) with the model's internal name set
	 * to @p newname; every other byte stays. *@p out malloc'd (NULL when
	 * nothing was renamed), @p oldname gets the text's model name ("" when
	 * none). Returns the number of names replaced, -1 when out of memory.
	 */
	long (*text_rename)(const char *text, size_t n, const char *newname, char **out,
			    size_t *outn, char *oldname, size_t oldsz);

	/** Optional (NULL = '#' comment lines, statements in order, no
	 *  defaults): how the round-trip law (src/law/law.h, docs/editing.md)
	 *  reads this format's LFS_VIEW_TEXT view. */
	const struct lfs_law_dialect *law;

	/** The folder below the shared test corpus (tests/meson.build: the
	 *  project's ../shared/corpus) that holds this format's public samples,
	 *  e.g. "nod" or "nwn/tree"; the registry-driven conformance tests
	 *  (tests/unit/test_formats.c) walk it for every row. Every row of
	 *  lfs_formats[] sets it: LFS_FORMAT_NO_CORPUS when no public files
	 *  exist (the format's own unit tests cover it); NULL is refused there. */
	const char *corpus_dir;
} lfs_format;

/** lfs_format.corpus_dir of a format without public sample files. */
#define LFS_FORMAT_NO_CORPUS ""

/**
 * Defines the codec members of a row from a format's typed functions:
 * static `<pfx>_decode_any`, `<pfx>_encode_any` and `<pfx>_free_any`, for
 * `.decode`, `.encode` and `.free_model`. @p dec is
 * `lfs_err dec(const uint8_t *, size_t, type **, lfs_error *)`, @p enc
 * `lfs_err enc(const type *, uint8_t **, size_t *, lfs_error *)`, @p fr
 * `void fr(type *)`.
 */
#define LFS_FORMAT_CODEC(pfx, type, dec, enc, fr)                                          \
	static lfs_err pfx##_decode_any(const uint8_t *data, size_t n, void **model,        \
					lfs_error *err)                                     \
	{                                                                                   \
		type *m_ = NULL;                                                            \
		lfs_err r_ = dec(data, n, &m_, err);                                        \
		*model = m_;                                                                \
		return r_;                                                                  \
	}                                                                                   \
	static lfs_err pfx##_encode_any(const void *model, uint8_t **out, size_t *n,        \
					lfs_error *err)                                     \
	{                                                                                   \
		return enc((const type *)model, out, n, err);                               \
	}                                                                                   \
	static void pfx##_free_any(void *model)                                             \
	{                                                                                   \
		fr((type *)model);                                                          \
	}

/** Every registered format, NULL-terminated, in detection order. */
extern const lfs_format *const lfs_formats[];

/**
 * The format of a file, from its base name @p name (extension; NULL = try
 * every format) and a cheap header test of its bytes; NULL when the file is
 * not a model we decode (it passes through).
 */
const lfs_format *lfs_format_for(const char *name, const uint8_t *data, size_t n);

/**
 * The format that compiles text file @p name (lfs_format.compile): the first
 * row with a compiler whose extension matches; when none matches and only
 * one row compiles at all, that row (NWN ASCII files carry any name).
 * NULL when no row fits.
 */
const lfs_format *lfs_format_compiler_for(const char *name);

/** Does file name @p name end in one of @p f's extensions (case-insensitively),
 *  with at least one character before it? */
bool lfs_format_has_extension(const lfs_format *f, const char *name);

/**
 * Offer ASCII Neverwinter Nights MDL as a model (the row "nwn-ascii",
 * src/formats/nwn/nwn_ascii_views.c: compiled in memory, model.mdl is the text
 * itself): after lfs_format_ascii_views(true), lfs_format_for() and
 * lfs_format_named() give that row for a `.mdl` text with a `newmodel`
 * line, after every row of lfs_formats[]. Off by default (ASCII files
 * pass through). Process-wide: call before any thread asks (the mount's
 * -o ascii_views, legacyfs-convert thumbnail).
 */
void lfs_format_ascii_views(bool on);

/** The format registered under @p name ("nwn-mdl", ...), or NULL. */
const lfs_format *lfs_format_named(const char *name);

#endif
