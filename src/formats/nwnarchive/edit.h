/**
 * @file edit.h
 * Edits of an ERF-family archive (.erf .hak .mod .sav .nwm) as the mount
 * makes them: bytes of the archive in, bytes of the new archive out
 * (docs/archives.md "Writing into an archive"). No file system access, no
 * FUSE: the mount's commit (fs_commit.c) reads the archive, calls one of
 * these and replaces the file atomically.
 *
 * Names are the folder's: a resource is `resref.ext` (ext from the type,
 * restype.h), made unique as fs_archive.c lists them (lfs_archive_entry_name
 * plus names.h), so the n-th name of a listing is entry n of the key list.
 *
 * Every edit keeps what it does not touch: the header (but its counts and
 * offsets), localized strings, entry order, ResIDs, and every other payload
 * byte for byte (erf.h "Round trip"); each result is decoded again and
 * checked against that rule before it is handed back (the round-trip law
 * at the archive level): a result that breaks it is refused, LFS_ERR_PARSE.
 */
#ifndef LFS_NWNARCHIVE_EDIT_H
#define LFS_NWNARCHIVE_EDIT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../../common/error.h"
#include "registry/format.h"

/**
 * The listed name of entry @p idx (ResRef @p resref, type @p type) before
 * it is made unique: "resref.ext", or "broken-<idx>.ext" for an empty
 * ResRef or type 0 (docs/archives.md "Broken entries"). Into @p buf
 * (@p size bytes, cut to fit). Returns whether the entry is broken.
 */
bool lfs_archive_entry_name(char *buf, size_t size, const char *resref, uint16_t type,
			    uint32_t idx);

struct lfs_erf;
/**
 * Index of the entry that an archive folder lists as @p fname (the names
 * of fs_archive.c's listing, in key order, made unique as names.h does) in
 * archive @p a (decoded whole or from its tables alone); *@p broken (may be
 * NULL) tells a broken entry. UINT32_MAX when there is none, UINT32_MAX - 1
 * when memory ran out.
 */
uint32_t lfs_archive_locate(const struct lfs_erf *a, const char *fname, bool *broken);

/** What a new name at the top of an archive folder would be. */
typedef enum lfs_archive_name_kind {
	LFS_ANAME_SCRATCH = 0, /**< not a resource name (editor temp files: `.x.swp`,
				*   `x.2da~`, `4913`): kept in memory as in a model folder */
	LFS_ANAME_RESOURCE,    /**< `resref.ext`: a valid ResRef and a known type */
	LFS_ANAME_BAD,	       /**< a known type's extension after a stem that is no
				*   valid ResRef (too long, other characters): refused */
} lfs_archive_name_kind;

/**
 * Classify @p name (a base name) for an archive whose ResRefs are at most
 * @p max_len characters (16; 32 for NWN2 V1.1). Resource: @p resref gets
 * the stem (case kept; ≥ 33 bytes) and @p type the type of the extension
 * (any case). Bad: @p why (may be NULL, ≥ 160 bytes) says which rule fails.
 * A stem starting with '.', '#' or '~' or holding a '.' is a scratch name.
 */
lfs_archive_name_kind lfs_archive_name_class(const char *name, size_t max_len, char *resref,
					     uint16_t *type, char *why);

/**
 * Apply the edited text of view @p vpath of the archive @p orig (@p n
 * bytes): a resource `name` takes @p text verbatim as its payload; a view
 * `name.mdl/…` of a model inside the archive goes through the model's
 * format (lfs_view_apply_keep, its own round-trip law), its supermodel
 * looked up among the archive's `.mdl` resources first, then through
 * @p sib (may be NULL). E1 payloads are compressed again when they were.
 *
 * @param out     new archive bytes (malloc'd; caller frees); equal to
 *                @p orig when the edit changes nothing
 * @param reread  the view read back from the new bytes (malloc'd), as
 *                lfs_view_apply_keep; may be NULL
 * @return LFS_OK; LFS_ERR_PARSE (`vpath:line:col: …` of the model's
 *         parser or the law); LFS_ERR_UNSUPPORTED (no such view, a broken
 *         entry, a read-only view); LFS_ERR_CORRUPT (the archive or the
 *         payload does not decode); LFS_ERR_NOMEM.
 */
lfs_err lfs_archive_apply(const uint8_t *orig, size_t n, const char *vpath, const char *text,
			  size_t tn, const lfs_siblings *sib, uint8_t **out, size_t *outn,
			  char **reread, size_t *rn, lfs_error *err);

/**
 * lfs_archive_apply() given @p cached, the archive folder's view @p vpath
 * built from exactly @p orig (may be NULL): a view of a model inside the
 * archive is then applied to that view, not to a view set built again
 * from the payload.
 */
lfs_err lfs_archive_apply_view(const uint8_t *orig, size_t n, const char *vpath,
			       const lfs_view *cached, const char *text, size_t tn,
			       const lfs_siblings *sib, uint8_t **out, size_t *outn, char **reread,
			       size_t *rn, lfs_error *err);

/**
 * Add resource @p name (`resref.ext`, lfs_archive_name_class) with payload
 * @p data (@p dn bytes) after the last entry; E1: stored uncompressed.
 * *@p listed (≥ 256 bytes, may be NULL) receives the name the folder lists
 * it under. Errors: LFS_ERR_UNSUPPORTED (not a resource name, ResRef rules,
 * a resource of that ResRef and type exists), as lfs_archive_apply().
 */
lfs_err lfs_archive_add(const uint8_t *orig, size_t n, const char *name, const uint8_t *data,
			size_t dn, uint8_t **out, size_t *outn, char *listed, lfs_error *err);

/**
 * Remove the resource listed as @p name (a plain resource or a model's
 * folder). The other entries keep their order. Errors as lfs_archive_add
 * (LFS_ERR_UNSUPPORTED: no such resource).
 */
lfs_err lfs_archive_remove(const uint8_t *orig, size_t n, const char *name, uint8_t **out,
			   size_t *outn, lfs_error *err);

/**
 * Rename the resource listed as @p from to @p to (`resref.ext`: its type
 * may change with the extension), in place in the key list. With
 * @p replace a resource listed as @p to is removed first (rename(2) onto
 * an existing name). A broken entry may be renamed to a valid name (the
 * way to repair it). Errors as lfs_archive_add.
 */
lfs_err lfs_archive_rename(const uint8_t *orig, size_t n, const char *from, const char *to,
			   bool replace, uint8_t **out, size_t *outn, lfs_error *err);
#endif
