/**
 * @file keybif.h
 * NWN KEY and BIF files (the game's own resources: chitin.key and the BIFs
 * it indexes): decoders and a bounds-checked payload reader, from memory or
 * (BIFs) from an open file by pread, table first. Read-only.
 *
 * Layout (docs/formats/keybif.md): BioWare, "BioWare Aurora Engine — Key and
 * BIF File Formats" §2 (KEY V1: header, file table, filename table, key
 * table) and §3 (BIFF V1: header, variable resource table); the E1
 * variants ("KEY E1  ", "BIFFE1  ": an OID, SHA-1 per key, compressed XRES
 * payloads) as neverwinter.nim's `key.nim` reads and writes them.
 *
 * A key's ResID is (BIF index << 20) | index in that BIF's variable table;
 * BIF entries are matched by ResID & 0xFFFFF (the engine ignores the upper
 * bits of a BIF's own IDs). A BIF that is missing or truncated makes the
 * read of each of its resources fail with a message naming the resource,
 * the BIF and the offset: never a crash.
 */
#ifndef LFS_FORMATS_KEYBIF_H
#define LFS_FORMATS_KEYBIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/** One BIF named by a KEY. */
typedef struct lfs_key_bif {
	uint32_t file_size; /**< FileSize as stored (not trustworthy: nwn_key_pack writes
			     *   the end of the BIF's table − 20) */
	uint16_t drives;    /**< Drives bit field as stored (ignored by readers) */
	char *path;	    /**< owned; trailing NUL stripped, '\\' turned into '/',
			     *   relative to the KEY's folder, e.g. "data/2da.bif" */
} lfs_key_bif;

/** One key: a named resource in one of the BIFs. */
typedef struct lfs_key_res {
	char resref[17];  /**< up to 16 characters, case kept, NUL-terminated */
	uint16_t type;	  /**< ResType (restype.h) */
	uint32_t res_id;  /**< (BIF index << 20) | index in the BIF */
	uint8_t sha1[20]; /**< E1: SHA-1 of the uncompressed payload; zero in V1 */
} lfs_key_res;

/** The BIF index of a key's ResID. */
static inline uint32_t lfs_key_bif_of(uint32_t res_id) { return res_id >> 20; }
/** The index in its BIF of a key's ResID. */
static inline uint32_t lfs_key_index_of(uint32_t res_id) { return res_id & 0xFFFFFu; }

/** A decoded KEY. Owns everything. */
typedef struct lfs_key {
	bool e1;	      /**< "KEY E1  " */
	uint32_t build_year;  /**< years since 1900 */
	uint32_t build_day;   /**< day of the year */
	char oid[25];	      /**< E1: the 24-character OID; empty in V1 */
	uint32_t n_bifs;
	lfs_key_bif *bifs;
	uint32_t n_res;
	lfs_key_res *res;
} lfs_key;

/**
 * Decode KEY @p data (@p n bytes) into *out (lfs_key_free). Errors:
 * LFS_ERR_NOTFORMAT (no "KEY " tag), LFS_ERR_UNSUPPORTED (version other than
 * "V1  " / "E1  ", e.g. The Witcher's V1.1), LFS_ERR_CORRUPT (a table or a
 * file name outside the file), LFS_ERR_NOMEM. A key naming a BIF index
 * beyond the file table is kept: reading it fails.
 */
lfs_err lfs_key_decode(const uint8_t *data, size_t n, lfs_key **out, lfs_error *err);

/** Free a KEY (NULL is fine). */
void lfs_key_free(lfs_key *k);

/** One entry of a BIF's variable resource table. */
typedef struct lfs_bif_res {
	uint32_t id;	      /**< ID as stored; matched by id & 0xFFFFF */
	uint32_t offset;      /**< absolute offset in the BIF */
	uint32_t size;	      /**< bytes on disk */
	uint32_t type;	      /**< ResType */
	uint32_t compression; /**< E1: 0 stored, 1 XRES buffer; 0 in V1 */
	uint32_t usize;	      /**< uncompressed size (= size when stored) */
} lfs_bif_res;

/**
 * A decoded BIF: its variable table, and where its payloads are read from:
 * the caller's bytes (@c data, from lfs_bif_decode(); they must outlive it)
 * or an open file (@c fd, from lfs_bif_read_table(); not owned, it must stay
 * open while keys are read). Payloads are only bounds-checked (against
 * @c size) when read, so the table of a truncated BIF decodes and the
 * resources still inside it can be read.
 */
typedef struct lfs_bif {
	bool e1;	/**< "BIFFE1  " */
	char oid[25];	/**< E1: the KEY's OID copied into the BIF */
	uint32_t n;	/**< variable resources */
	lfs_bif_res *res; /**< n entries, owned */
	const uint8_t *data; /**< the BIF bytes (not owned), or NULL when read from @c fd */
	int fd;		/**< the BIF file (not owned) when @c data is NULL, else -1 */
	size_t size;	/**< bytes in the BIF (the file size) */
} lfs_bif;

/**
 * Decode BIF @p data (@p n bytes, the whole file) into *out (lfs_bif_free).
 * Errors: LFS_ERR_NOTFORMAT (no "BIFF" tag), LFS_ERR_UNSUPPORTED (other
 * versions; fixed resources, which BioWare documents as not implemented),
 * LFS_ERR_CORRUPT (variable table outside the file), LFS_ERR_NOMEM.
 */
lfs_err lfs_bif_decode(const uint8_t *data, size_t n, lfs_bif **out, lfs_error *err);

/**
 * Read the table of the BIF open as @p fd (a regular file, read with pread:
 * the file offset is left alone) into *out (lfs_bif_free; keep @p fd open
 * while reading its keys, then close it yourself). Reads the header (20 or
 * 44 bytes), checks the variable table (VariableTableOffset + count ×
 * 16/24 bytes, BioWare "Key and BIF File Formats" §3) against the file's
 * size (fstat) before allocating anything, then reads exactly the table's
 * bytes, in chunks; payloads are not read (lfs_key_read() preads each).
 * So memory is the table's entries alone, whatever the file's size.
 * Errors: those of lfs_bif_decode(); LFS_ERR_IO (fstat/pread failed);
 * LFS_ERR_CORRUPT also when the file shrinks while its table is read.
 */
lfs_err lfs_bif_read_table(int fd, lfs_bif **out, lfs_error *err);

/** Free a BIF (NULL is fine; the bytes or the fd stay the caller's). */
void lfs_bif_free(lfs_bif *b);

/**
 * The BIF entry of key @p i of @p key (@p bifs as for lfs_key_read()), into
 * *out (points into that BIF's table), without reading its payload: the
 * entry is found, its type matches the key's, its bytes lie inside the BIF
 * (size) and its compression is 0 or 1. Failures are lfs_key_read()'s
 * except those of the payload itself (I/O, decompression, SHA-1): a caller
 * can check an entry's size (@c size, @c usize) before reading it.
 */
lfs_err lfs_key_locate(const lfs_key *key, uint32_t i, const lfs_bif *const *bifs,
		       const lfs_bif_res **out, lfs_error *err);

/**
 * Read key @p i of @p key from its BIF. @p bifs has key->n_bifs slots, slot
 * b holding BIF b decoded, or NULL when that file is missing or could not be
 * decoded. On success *out is malloc'd (uncompressed payload; caller frees)
 * and *n its size. The payload comes from the BIF's bytes or, for a BIF
 * from lfs_bif_read_table(), by one pread of exactly its stored bytes at
 * its offset. Every failure names the resource and the BIF:
 * LFS_ERR_IO (BIF missing, pread failed), LFS_ERR_CORRUPT (no such index in the BIF, a
 * type that disagrees with the key, payload past the end of a truncated
 * BIF or of a file that shrank, a bad compressed buffer, a SHA-1 mismatch
 * in E1),
 * LFS_ERR_UNSUPPORTED (zlib buffers), LFS_ERR_NOMEM.
 */
lfs_err lfs_key_read(const lfs_key *key, uint32_t i, const lfs_bif *const *bifs, uint8_t **out,
		     size_t *n, lfs_error *err);

#endif
