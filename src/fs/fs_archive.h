/**
 * @file fs_archive.h
 * NWN resource archives shown as folders: an ERF-family file (.erf .hak
 * .mod .sav .nwm) or a KEY (.key, with the BIFs it names) becomes a folder
 * of its resources (docs/archives.md).
 *
 * How: an archive is classified like a model file (source.c asks
 * lfs_archive_detect() after the format registry), and its "views" are its
 * resources, built by lfs_archive_build(): one file `resref.ext` per
 * resource (the payload, E1 payloads decompressed and their SHA-1
 * checked), and, for a `.mdl` resource whose payload is a model the
 * registry decodes, a folder `resref.mdl/` holding that model's views,
 * built from the payload bytes exactly as a loose model file's are. In an
 * ERF these views are writable (saved through archive_edit.h); in a KEY
 * they are read-only.
 * The whole tree of one archive version is one entry of the mount's view
 * cache (keyed by the archive file's stat and path), so a changed archive
 * is listed and built again, like a changed model file.
 *
 * The layer: the archive pseudo-format lives in src/fs, not in the views
 * registry, because a KEY needs other files (its BIFs, by path relative to
 * the KEY's folder). It uses formats/ (erf.h, keybif.h, restype.h) and
 * views/ (viewset.h, vlist.h, names.h); no FUSE.
 */
#ifndef LFS_FS_FS_ARCHIVE_H
#define LFS_FS_FS_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "../common/strbuf.h"
#include "../views/viewset.h"

/**
 * The archive pseudo-format: name "nwn-archive", the archive extensions,
 * lfs_archive_detect()'s header test; decode/encode of an ERF (erf.h);
 * apply through lfs_archive_apply() (archive_edit.h); no thumbnail. Its `build_views` builds an ERF (a KEY needs
 * lfs_archive_build() for its BIFs). Never in the views registry.
 */
extern const lfs_format lfs_archive_format;

/** Is @p name (a base name) an archive's by its extension (case-insensitive)? */
bool lfs_archive_candidate(const char *name);
/** Is @p name a KEY's by its extension (".key", any case)? */
bool lfs_archive_key_name(const char *name);
/** Is @p name an ERF-family archive's by its extension (.erf .hak .mod .sav .nwm, any case)? */
bool lfs_archive_erf_name(const char *name);

/**
 * Header test of a file named @p name (@p data, @p n bytes: at least the
 * header, zero-filled beyond what was read): &lfs_archive_format when the
 * extension is an archive's and the header is an ERF one ("ERF ", "HAK ",
 * "MOD ", "SAV ", "NWM " with "V1.0", "V1.1" or "E1.0") or a KEY one
 * ("KEY V1  ", "KEY E1  "); NULL otherwise.
 */
const lfs_format *lfs_archive_detect(const char *name, const uint8_t *data, size_t n);

/**
 * Build the folder of the archive @p name, whose bytes are @p data (@p n
 * bytes), into @p vs (free with lfs_viewset_free()): every resource as a
 * read-only view (kind LFS_VIEW_NOTICE, whole payload), every `.mdl`
 * resource that is a model as a folder of its views (read-only; map_Kd
 * lines through the archive's own textures, then opts->texture_lookup; a
 * pending thumbnail.png with opts->thumb_lazy, see build_model()). Honours opts->names_only (listed, no
 * bytes; ERF payloads not read) and gives each inner model
 * opts->view_budget. A KEY reads its BIFs relative to the folder @p dir
 * (relative to @p dirfd; "" = @p dirfd itself), matching each path
 * component case-insensitively when the exact name is absent; BIFs over
 * @p max_bif bytes are not read.
 *
 * @param problems  out (may be NULL): one line per problem, "what\n": broken
 *                  entries (empty ResRef, type 0; listed under a documented
 *                  name), entries that cannot be read (left out), missing or
 *                  truncated BIFs (their resources left out), models that do
 *                  not decode (listed as plain files). The mount adds each
 *                  line to /.legacyfs/errors.
 * @return LFS_OK; LFS_ERR_NOTFORMAT / LFS_ERR_UNSUPPORTED / LFS_ERR_CORRUPT
 *         when the archive's own tables do not decode (err names offset and
 *         structure); LFS_ERR_NOMEM.
 */
lfs_err lfs_archive_build(int dirfd, const char *dir, const char *name, const uint8_t *data,
			  size_t n, size_t max_bif, const lfs_view_opts *opts, lfs_viewset *vs,
			  lfs_sb *problems, lfs_error *err);

/** A resource's payload taken from an archive (lfs_archive_model_bytes()). */
typedef struct lfs_archive_res {
	char resref[33]; /**< as stored */
	uint16_t type;   /**< ResType (formats/restype.h) */
	uint8_t *data;   /**< owned, @c n bytes */
	size_t n;
} lfs_archive_res;

/** Free @p n resources @p v (NULL is fine). */
void lfs_archive_res_free(lfs_archive_res *v, size_t n);

/**
 * The payload of the model whose folder is @p model ("resref.mdl", as
 * lfs_archive_build() names it) in archive @p name (@p data, @p n bytes;
 * @p dirfd, @p dir, @p max_bif as for lfs_archive_build()): *out malloc'd
 * (*outn bytes; caller frees). An ERF reads only its MDL payloads; a KEY
 * its BIFs, and then also gives its texture resources (TGA, DDS, PLT) in
 * *tex (*ntex; free with lfs_archive_res_free(); none for an ERF, whose
 * entries texture.h reads one by one). The mount draws an inner model's
 * thumbnail.png from them.
 * @return LFS_OK; LFS_ERR_NOTFORMAT when there is no such model; the
 *         errors of lfs_archive_build().
 */
lfs_err lfs_archive_model_bytes(int dirfd, const char *dir, const char *name, const uint8_t *data,
				size_t n, size_t max_bif, const char *model, uint8_t **out, size_t *outn,
				lfs_archive_res **tex, size_t *ntex, lfs_error *err);

/** Called by lfs_archive_key_each() for one resource: its ResRef (as stored) and type. */
typedef void (*lfs_archive_key_fn)(void *ctx, const char *resref, uint16_t type);

/**
 * The resources of KEY file @p name in folder @p dfd that its folder can
 * show: those whose BIF opens (BIF paths relative to the KEY's folder,
 * found as lfs_archive_build() finds them, ignoring case); @p fn once for
 * each, in key order. Reads the KEY (at most @p max bytes) and opens each
 * BIF named; no BIF table or payload is read. False when the KEY cannot be
 * read or does not decode. (The mount's resource index: texture.h.)
 */
bool lfs_archive_key_each(int dfd, const char *name, size_t max, lfs_archive_key_fn fn, void *ctx);

/**
 * Resource @p resref (ignoring case) of type @p type of KEY file @p name
 * in folder @p dfd, read from its BIF: the KEY, that BIF's table and the one
 * payload (pread; an E1 payload decompressed and SHA-1-checked), at most
 * @p max bytes stored or uncompressed. *out malloc'd (*n bytes). False when
 * there is no such resource or it cannot be read.
 */
bool lfs_archive_key_read(int dfd, const char *name, const char *resref, uint16_t type,
			  size_t max, uint8_t **out, size_t *n);

#endif
