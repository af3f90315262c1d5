/**
 * @file archive.h
 * NWN resource archives shown as folders: an ERF-family file (.erf .hak
 * .mod .sav .nwm) or a KEY (.key, with the BIFs it names) becomes a folder
 * of its resources (docs/archives.md).
 *
 * How: an archive is classified like a model file (source.c asks
 * lfs_archive_detect() after the format registry). Its folder is built from
 * its tables alone (lfs_archive_build(), archive_table.h): one file
 * `resref.ext` per resource, whose bytes are read one payload at a time
 * when asked for, and, for a `.mdl` resource whose payload is a model the
 * registry decodes, a member folder `resref.mdl/`: the model
 * "<archive>/<resref>.mdl", a model folder of its own in the mount whose
 * views are built from that payload alone, exactly as a loose model file's
 * are (source.c loads members through lfs_archive_member_read()). Each
 * member and each resource read is its own entry of the mount's view cache,
 * keyed by the archive file's stat and the member's path, so a changed
 * archive is listed and built again, and -o cache_size bounds it all. In an
 * ERF the views are writable (saved through archive_edit.h); in a KEY they
 * are read-only.
 *
 * The layer: a container module (registry/container.h): the mount reaches it
 * only through the row lfs_container_nwn_archive and the container table
 * (registry/containers.c). It uses the ERF, KEY/BIF and GFF codecs
 * (erf.h, keybif.h, gff.h, beside it) and the registry (registry/viewset.h);
 * no FUSE, no file-system layer.
 */
#ifndef LFS_NWNARCHIVE_ARCHIVE_H
#define LFS_NWNARCHIVE_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "../../common/error.h"
#include "../../common/strbuf.h"
#include "registry/container.h"
#include "registry/viewset.h"

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
 * Build the folder of archive file @p rel (relative to @p rootfd, the
 * SOURCE root) into @p vs (free with lfs_viewset_free()) from its shared
 * table alone (table.h; no payload is read): every resource a view whose
 * size is the payload's and whose bytes are not in the set (data NULL:
 * lfs_archive_member_read() gives them), of kind LFS_VIEW_RESOURCE, or,
 * for a `.mdl` resource, LFS_VIEW_MEMBER: a model candidate, shown as the
 * folder of the model "<rel>/<name>" when its payload's header is a
 * model's (its views built from that payload alone, lfs_source_load()),
 * else as a plain resource — decided when it is looked up, as a loose
 * file's header is read when it is looked up.
 * A resource over @p max_res bytes (stored or uncompressed; -o
 * max_model_size) is left out and reported.
 * Writable (an ERF's resources; archive_edit.h) unless a KEY. *st gets
 * the archive's stat. @p opts is not used (the names and sizes are the
 * same in every build).
 *
 * @param problems  out (may be NULL): one line per problem, "what\n": broken
 *                  entries (listed under a documented name), missing or
 *                  truncated BIFs (their resources left out). The mount adds
 *                  each line to /.legacyfs/errors.
 * @return LFS_OK; LFS_ERR_NOTFORMAT / LFS_ERR_UNSUPPORTED / LFS_ERR_CORRUPT
 *         when the archive's own tables do not decode (err names offset and
 *         structure); LFS_ERR_IO; LFS_ERR_NOMEM.
 */
lfs_err lfs_archive_build(int rootfd, const char *rel, size_t max_res, const lfs_view_opts *opts,
			  struct stat *st, lfs_viewset *vs, lfs_sb *problems, lfs_error *err);

/**
 * Is resource @p name (as listed) in archive @p arch (relative to @p rootfd)?
 * 0 and *st the archive file's stat (a resource has no stat of its own:
 * its version is the archive's), *@p size (may be NULL) the payload's
 * bytes; ENOENT (not an archive, no such resource) or the errno of opening
 * the archive. (lfs_container.member_stat)
 */
int lfs_archive_member_stat(int rootfd, const char *arch, const char *name, struct stat *st,
			    uint64_t *size);

/**
 * The payload of resource @p name of archive @p arch: *out malloc'd (*n
 * bytes), *st the archive's stat, *@p read_only (may be NULL) true for a
 * KEY's resource. At most @p max bytes (EFBIG beyond). Returns 0, ENOENT,
 * EFBIG, EIO (cannot be read: a truncated BIF, a bad compressed payload) or
 * ENOMEM. (lfs_container.member_read)
 */
int lfs_archive_member_read(int rootfd, const char *arch, const char *name, size_t max,
			    uint8_t **out, size_t *n, struct stat *st, bool *read_only);

/** The container row of the ERF family and KEY/BIF (registry/container.h). */
extern const lfs_container lfs_container_nwn_archive;

/** Called by lfs_archive_each() for one resource: its ResRef (as stored) and type. */
typedef void (*lfs_archive_key_fn)(void *ctx, const char *resref, uint16_t type);

/**
 * Every resource of archive file @p name (relative to @p dfd; an ERF, or a
 * KEY whose resources in missing BIFs are left out) through its shared
 * table (table.h), @p fn once for each, in key order. No payload is read.
 * False when the archive cannot be read or does not decode.
 */
bool lfs_archive_each(int dfd, const char *name, lfs_archive_key_fn fn, void *ctx);

/**
 * Resource @p resref (ignoring case) of type @p type of archive file
 * @p name (relative to @p dfd; ERF or KEY) through its shared table
 * (decoded once per version) and one pread of the payload (an E1 payload
 * decompressed and SHA-1-checked), at most @p max bytes stored or
 * uncompressed. *out malloc'd (*n bytes). False when there is no such
 * resource or it cannot be read.
 */
bool lfs_archive_read_resref(int dfd, const char *name, const char *resref, uint16_t type,
			     size_t max, uint8_t **out, size_t *n);

#endif
