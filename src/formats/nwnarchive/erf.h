/**
 * @file erf.h
 * The ERF family of NWN archives (.erf .hak .mod .sav .nwm): bytes ↔ an
 * in-memory archive. No file system access.
 *
 * Layout (docs/formats/erf.md): BioWare, "BioWare Aurora Engine —
 * Encapsulated Resource File Format": a 160-byte header, the localized
 * string list, the key list (ResRef, ResID, ResType), the resource list
 * (offset, size), then the payloads. Versions:
 *  - "V1.0": 16-byte ResRef, 24-byte key entries, 8-byte resource entries;
 *  - "V1.1": NWN2's 32-byte ResRef (40-byte key entries) — or, when the key
 *    list is too short for that (xoreos' rule: (resource list − key list) /
 *    entries < 40), NWN premium modules' V1.0 layout under the V1.1 tag;
 *  - "E1.0" (neverwinter.nim / nwnrs): a 24-byte OID at header offset 44,
 *    44-byte key entries (+ SHA-1 of the uncompressed payload), 16-byte
 *    resource entries (offset, size on disk, compression, uncompressed size);
 *    compressed payloads are XRES buffers (xres.h).
 *
 * Round trip: lfs_erf_encode(lfs_erf_decode(x)) == x byte for byte when the
 * parts come in the order header, strings, keys, resources, payloads (every
 * archive seen so far). Kept: the raw 160-byte header (type, version, build
 * date, DescriptionStrRef, OID, reserved bytes), raw localized strings and
 * any bytes the LocalizedStringSize counts after them, the raw ResRef fields
 * (bytes after the NUL too), ResIDs and the unused key field, the gaps
 * between the parts (toolset .mod: 8·N zero bytes before the resource list),
 * the offset field of zero-size entries that point before the payloads
 * (0, the toolset's broken entries; other empty entries point where they
 * fall in the payload order, as writers put them), payload order, trailing
 * bytes, and
 * for E1 the stored (compressed) payload bytes and SHA-1s of untouched
 * entries. Recomputed: counts and offsets; for a replaced E1 payload its
 * XRES buffer (zstd level 19: valid, not necessarily the bytes another
 * writer makes) and its SHA-1. A replaced payload stays in its place in the
 * payload order (the later ones move). Not kept: gaps between payloads (the writer
 * packs them) — none occurs in the corpus.
 *
 * Hostile input: every table is bounds-checked against the file before
 * anything is allocated for it; errors name the offset and the structure.
 */
#ifndef LFS_FORMATS_ERF_H
#define LFS_FORMATS_ERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/** Bytes of the ERF header (every version). */
#define LFS_ERF_HEADER 160u
/** Longest ResRef of NWN 1 archives (V1.0, E1.0). */
#define LFS_RESREF_MAX 16u
/** Longest ResRef of NWN 2 archives (V1.1). */
#define LFS_RESREF_MAX_NWN2 32u

/** The version tag of an archive. */
typedef enum lfs_erf_version {
	LFS_ERF_V10 = 0, /**< "V1.0" */
	LFS_ERF_V11,	 /**< "V1.1" (NWN2 32-byte ResRef or NWN premium 16-byte) */
	LFS_ERF_E10,	 /**< "E1.0" (EE extension: OID, SHA-1, compression) */
} lfs_erf_version;

/** One localized string (the description in one language). */
typedef struct lfs_erf_locstr {
	uint32_t lang;	/**< stored LanguageID = 2 × language + gender (English 0) */
	uint32_t size;	/**< StringSize in bytes (a NUL, when stored, is counted) */
	uint8_t *text;	/**< owned, @c size bytes and one NUL beyond */
} lfs_erf_locstr;

/** One resource: its key, its resource-list entry and its payload. */
typedef struct lfs_erf_entry {
	uint8_t resref_raw[32]; /**< the ResRef field as stored (width lfs_erf.resref_len) */
	char resref[33];	/**< the field up to its first NUL, NUL-terminated, case kept */
	uint32_t res_id;	/**< ResID as stored (equals the index in every known file) */
	uint16_t type;		/**< ResType (restype.h) */
	uint16_t unused;	/**< the key's unused u16, kept */
	uint32_t offset;	/**< OffsetToResource as decoded (file offset) */
	uint32_t size;		/**< bytes on disk (for E1 compressed: the XRES buffer) */
	uint8_t sha1[20];	/**< E1: SHA-1 of the uncompressed payload; zero otherwise */
	uint32_t compression;	/**< E1: 0 stored, 1 XRES buffer; 0 otherwise */
	uint32_t usize;		/**< uncompressed size (= size unless E1 compressed) */
	const uint8_t *data;	/**< the @c size bytes on disk: into the decoded input, or @c owned */
	uint8_t *owned;		/**< payload owned by the archive (replaced or added), or NULL */
	uint64_t order;		/**< payload placement key: the decoded offset (kept when the
				 *   payload is replaced); added ones go last */
} lfs_erf_entry;

/**
 * A decoded archive. Entries that point into the decoded input (data !=
 * owned) need that input alive and unchanged until lfs_erf_free().
 */
typedef struct lfs_erf {
	lfs_erf_version version;
	uint8_t header[LFS_ERF_HEADER]; /**< raw header; counts and offsets are rewritten on encode */
	size_t resref_len;		/**< 16 or 32 */
	size_t key_stride;		/**< 24, 40 or 44 bytes */
	size_t res_stride;		/**< 8 or 16 bytes */
	uint32_t n_loc;
	lfs_erf_locstr *loc;
	uint8_t *loc_tail;  /**< bytes counted by LocalizedStringSize after the strings */
	size_t loc_tail_n;
	uint8_t *gap[4];    /**< bytes before strings, keys, resources, first payload */
	size_t gap_n[4];
	uint8_t *trailer;   /**< bytes after the last payload */
	size_t trailer_n;
	bool tables_only;   /**< from lfs_erf_decode_fd(): payloads not in memory (data NULL;
			     *   read them with lfs_erf_read_fd()); cannot be encoded */
	uint32_t n;	    /**< entries */
	size_t cap;
	lfs_erf_entry *e;
} lfs_erf;

/**
 * Decode the archive @p data (@p n bytes). On success *out owns a new
 * archive (lfs_erf_free) whose payloads point into @p data. Errors:
 * LFS_ERR_NOTFORMAT (no ERF/MOD/SAV/HAK/NWM tag), LFS_ERR_UNSUPPORTED
 * (unknown version), LFS_ERR_CORRUPT (a list or payload outside the file,
 * an E1 compression flag other than 0/1), LFS_ERR_NOMEM. Broken entries
 * (empty ResRef, type 0, duplicates) are decoded, never dropped.
 */
lfs_err lfs_erf_decode(const uint8_t *data, size_t n, lfs_erf **out, lfs_error *err);

/**
 * Decode the tables of the ERF-family file open at @p fd (header,
 * localized strings, key list, resource list: the file's first bytes up to
 * the end of the last table, read with pread) without reading a payload:
 * *out (lfs_erf_free) has tables_only set and every entry's data NULL; each
 * payload's bounds are checked against the file's size (fstat). For
 * listings and one-resource reads of large archives (the mount's texture
 * and model lookups). Errors as lfs_erf_decode(), and LFS_ERR_IO (not a
 * regular file, a failed read), LFS_ERR_UNSUPPORTED (tables over @p max
 * bytes). Layout: as lfs_erf_decode(). LocalizedStringSize is not trusted:
 * when the strings run past it the file is read from the start to its end
 * (within @p max).
 */
lfs_err lfs_erf_decode_fd(int fd, size_t max, lfs_erf **out, lfs_error *err);
/**
 * lfs_erf_read() of entry @p i of @p a, an archive lfs_erf_decode_fd() read
 * from @p fd (any archive: then as lfs_erf_read()): the stored bytes read
 * with pread, decompressed and SHA-1-checked as lfs_erf_read() does. At most
 * @p max bytes stored or uncompressed (LFS_ERR_UNSUPPORTED beyond);
 * LFS_ERR_IO when the bytes cannot be read (the file shrank).
 */
lfs_err lfs_erf_read_fd(const lfs_erf *a, int fd, uint32_t i, size_t max, uint8_t **out,
			size_t *n, lfs_error *err);
/** A new empty archive of type @p file_type ("HAK ", "MOD ", … 4 chars)
 *  and @p version; NULL when out of memory. */
lfs_erf *lfs_erf_new(const char file_type[4], lfs_erf_version version);

/** Free an archive (NULL is fine). */
void lfs_erf_free(lfs_erf *a);

/**
 * Encode @p a: *out malloc'd (caller frees), *n its size. Fails
 * (LFS_ERR_UNSUPPORTED) when the file would pass 4 GiB (32-bit offsets).
 */
lfs_err lfs_erf_encode(const lfs_erf *a, uint8_t **out, size_t *n, lfs_error *err);

/**
 * The payload of entry @p i, uncompressed: *out malloc'd (caller frees),
 * *n its size. E1: an XRES buffer is decompressed and the SHA-1 checked
 * when the key holds one (non-zero); a mismatch is LFS_ERR_CORRUPT.
 */
lfs_err lfs_erf_read(const lfs_erf *a, uint32_t i, uint8_t **out, size_t *n, lfs_error *err);

/**
 * Replace the payload of entry @p i with a copy of @p n bytes at @p p.
 * E1: compressed again when the entry was compressed; SHA-1 recomputed.
 */
lfs_err lfs_erf_set(lfs_erf *a, uint32_t i, const uint8_t *p, size_t n, lfs_error *err);

/**
 * Append a resource @p resref / @p type with a copy of @p n bytes at @p p
 * (E1: stored uncompressed). The name is checked first
 * (lfs_erf_check_name). ResID = its index.
 */
lfs_err lfs_erf_add(lfs_erf *a, const char *resref, uint16_t type, const uint8_t *p, size_t n,
		    lfs_error *err);

/** Remove entry @p i; the others keep their order. ResIDs that equalled
 *  their index are renumbered so they still do. */
void lfs_erf_remove(lfs_erf *a, uint32_t i);

/** Rename entry @p i to @p resref / @p type after lfs_erf_check_name(). */
lfs_err lfs_erf_rename(lfs_erf *a, uint32_t i, const char *resref, uint16_t type,
		       lfs_error *err);

/**
 * Is @p resref a name the game accepts for a new resource? 1 to @p max_len
 * characters (16 for NWN 1, 32 for NWN2 V1.1) of letters, digits and '_'
 * (BioWare's ERF document asks for lower case; upper case occurs in real
 * archives and the game compares case-insensitively, so it is accepted).
 * LFS_ERR_PARSE-free: returns LFS_ERR_UNSUPPORTED with a message naming the
 * rule broken, LFS_OK otherwise.
 */
lfs_err lfs_resref_check(const char *resref, size_t max_len, lfs_error *err);

/**
 * lfs_resref_check() with this archive's length limit, plus: no other entry
 * (index ≠ @p self; UINT32_MAX for none) has the same @p type and a ResRef
 * equal ignoring case.
 */
lfs_err lfs_erf_check_name(const lfs_erf *a, const char *resref, uint16_t type, uint32_t self,
			   lfs_error *err);

/** Index of the entry @p resref (case-insensitive) / @p type, or UINT32_MAX. */
uint32_t lfs_erf_find(const lfs_erf *a, const char *resref, uint16_t type);

/** The header's FileType, e.g. "HAK " (4 chars, not terminated). */
static inline const char *lfs_erf_file_type(const lfs_erf *a) { return (const char *)a->header; }

/** A u32 of the raw header at @p off (32 BuildYear − 1900, 36 BuildDay,
 *  40 DescriptionStrRef). */
static inline uint32_t lfs_erf_header_u32(const lfs_erf *a, size_t off)
{
	const uint8_t *p = a->header + off;
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

#endif
