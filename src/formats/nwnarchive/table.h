/**
 * @file table.h
 * The decoded tables of one version of an archive (an ERF-family file, or a
 * KEY with the tables of the BIFs it names), shared process-wide: what an
 * archive folder is listed from and what its resources are read through,
 * one payload at a time (docs/archives.md "Changes and caching").
 *
 * A table holds no payload: an ERF's header, key and resource lists
 * (lfs_erf_decode_fd), or a KEY's key table plus the variable table of each
 * BIF found (lfs_bif_read_table), with the archive and BIF files kept open
 * for pread. Each resource has its listed name (`resref.ext`, made unique
 * in key order as lfs_archive_locate() names them), its type and its
 * uncompressed size. Reading a resource is one pread of its stored bytes
 * (an E1 payload decompressed and SHA-1-checked).
 *
 * Versions: a table is keyed by the archive file's (st_dev, st_ino,
 * st_size, st_mtim) and path and, for a KEY, by the count of BIF changes the
 * watcher reported (registry/container.h lfs_container_aux_changed()): a changed
 * archive or BIF gets
 * a new table, the old one is dropped once unused. At most
 * LFS_ATABLE_MAX tables are kept (least recently used dropped first), so
 * listing, reading, thumbnails and texture lookups of one KEY decode its
 * tables once, not once per request.
 *
 * BIF paths (BioWare, "Key and BIF File Formats" §2.4: relative to the
 * game's install folder, `\` as separator): tried relative to the KEY's
 * own folder (1.69's chitin.key sits in the install folder), then relative
 * to each folder above it up to SOURCE's root (NWN:EE's data/nwn_base.key
 * names `data\base_2da.bif`; lang/<xx>/data/ KEYs name
 * `lang\<xx>\data\….bif`), each component as written or else the one entry
 * whose name equals it ignoring case (the game's own file lookup is
 * case-insensitive on Windows).
 *
 * Thread-safe. No FUSE; uses the ERF and KEY/BIF codecs (formats/nwnarchive/erf.h,
 * formats/nwnarchive/keybif.h).
 */
#ifndef LFS_NWNARCHIVE_TABLE_H
#define LFS_NWNARCHIVE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "../../common/error.h"
#include "../../common/strbuf.h"

/** Most archive tables kept at once (each holds its files open). */
#define LFS_ATABLE_MAX 8

/** One resource of an archive table. */
typedef struct lfs_ares {
	const char *name; /**< listed name, unique in the folder (owned by the table);
			   *   NULL until lfs_atable_name_all() */
	char resref[33];  /**< as stored (case kept) */
	uint16_t type;    /**< ResType (formats/nwnarchive/restype.h) */
	bool broken;      /**< empty ResRef or type 0: listed as broken-<idx>.<ext> */
	uint32_t idx;     /**< index in the ERF key list / the KEY's key table */
	uint64_t size;    /**< payload bytes when read (uncompressed) */
	uint64_t stored;  /**< bytes on disk */
} lfs_ares;

/** A shared archive table (opaque; lfs_atable_get / lfs_atable_put). */
typedef struct lfs_atable lfs_atable;

/**
 * The table of archive file @p rel (relative to folder @p rootfd, the
 * SOURCE root; its last component is the archive's name) as it is now: the
 * file is opened (O_NOFOLLOW) and fstat'ed, and the table of that version
 * is taken from the shared set or decoded (tables only). *st gets the
 * archive's stat. One reference on *out: lfs_atable_put() it.
 * @return LFS_OK; LFS_ERR_IO (cannot open or read: err names the errno),
 *         LFS_ERR_NOTFORMAT / LFS_ERR_UNSUPPORTED / LFS_ERR_CORRUPT when
 *         the archive's own tables do not decode (err names offset and
 *         structure), LFS_ERR_NOMEM.
 */
lfs_err lfs_atable_get(int rootfd, const char *rel, struct stat *st, lfs_atable **out,
		       lfs_error *err);

/** Drop a reference from lfs_atable_get() (NULL is fine). */
void lfs_atable_put(lfs_atable *t);

/** Is @p t a KEY's table (read-only) rather than an ERF's? */
bool lfs_atable_is_key(const lfs_atable *t);

/** Resources of @p t that can be read (a KEY's resources in missing BIFs are left out). */
size_t lfs_atable_count(const lfs_atable *t);

/** Resource @p i (< lfs_atable_count()), in key order. */
const lfs_ares *lfs_atable_res(const lfs_atable *t, size_t i);

/**
 * Give every resource of @p t its listed name (`resref.ext`, made unique
 * in key order as lfs_archive_locate() names them): made once per table,
 * when a folder is listed or a name needs it (a lookup of a plain
 * `resref.ext` does not). False when memory ran out.
 */
bool lfs_atable_name_all(lfs_atable *t);

/**
 * The resource listed as @p name, or NULL. O(log n): a plain `resref.ext`
 * by ResRef and type, anything else (an escaped or "~N" name, a broken
 * entry's) through the listed names (lfs_atable_name_all()).
 */
const lfs_ares *lfs_atable_find(lfs_atable *t, const char *name);

/**
 * The best resource of ResRef @p resref (ignoring case) among @p types
 * (@p ntypes ResTypes, first = best), or NULL. O(log n + copies).
 */
const lfs_ares *lfs_atable_find_resref(const lfs_atable *t, const char *resref,
				       const uint16_t *types, size_t ntypes);

/**
 * Read resource @p r of @p t: *out malloc'd (*n bytes; caller frees). At
 * most @p max bytes stored or uncompressed.
 * @return LFS_OK; LFS_ERR_UNSUPPORTED (over @p max), LFS_ERR_IO (the file
 *         shrank or a read failed), LFS_ERR_CORRUPT (bad compressed buffer,
 *         SHA-1 mismatch, outside its BIF), LFS_ERR_NOMEM; err names the
 *         resource and its file.
 */
lfs_err lfs_atable_read(lfs_atable *t, const lfs_ares *r, size_t max, uint8_t **out, size_t *n,
			lfs_error *err);

/**
 * The first up to @p want bytes of resource @p r into @p buf (a stored
 * payload: one pread; a compressed one: decompressed whole, then cut).
 * Returns the bytes given, or -1 when it cannot be read.
 */
long lfs_atable_head(lfs_atable *t, const lfs_ares *r, uint8_t *buf, size_t want);

/**
 * Problems found when the table was decoded, one line each ("what\n"):
 * broken entries, missing or undecodable BIFs, keys beyond the BIF table.
 * Owned by the table.
 */
const char *lfs_atable_problems(const lfs_atable *t);

/** Bytes the shared tables hold right now (statistics, docs/performance.md). */
size_t lfs_atable_held(void);

/** Drop every unused table (tests; lfs_fs_free). */
void lfs_atable_flush(void);

#endif
