/**
 * @file gff.h
 * A small reader of BioWare's Generic File Format (GFF V3.2 / V3.3), enough
 * to take a module's hak list out of its `module.ifo`. No file system access.
 *
 * Layout: BioWare, "BioWare Aurora Engine — Generic File Format (GFF)":
 *  - "Header", 56 bytes: FileType[4] ("IFO "), FileVersion[4] ("V3.2"),
 *    then six (offset, count) u32 pairs: structs, fields, labels, field data
 *    (count in bytes), field indices (bytes), list indices (bytes);
 *  - "Struct Array", 12 bytes each {u32 Type, u32 DataOrDataOffset, u32 FieldCount}:
 *    one field → DataOrDataOffset is its field index; more → a byte offset
 *    into the field indices (FieldCount u32 field indices); none → no fields;
 *    struct 0 is the top-level struct;
 *  - "Field Array", 12 bytes each {u32 Type, u32 LabelIndex, u32 DataOrDataOffset};
 *    type 10 CExoString: a byte offset into the field data of {u32 length,
 *    chars}; type 15 List: a byte offset into the list indices of
 *    {u32 count, count × u32 struct index};
 *  - "Label Array", 16 bytes each, NUL-padded.
 * The IFO fields read: BioWare, "BioWare Aurora Engine — Module Info File Format" (IFO),
 * its top-level struct table:
 * `Mod_HakList` (List of structs of StructID 8, each with a `Mod_Hak`
 * CExoString; the first listed hak has priority) and, in modules made before
 * the list existed, one `Mod_Hak` CExoString in the top-level struct.
 *
 * Hostile input: every offset, count and index is checked against the file
 * before it is followed or anything is allocated for it; errors name the
 * byte offset and the structure.
 */
#ifndef LFS_FORMATS_GFF_H
#define LFS_FORMATS_GFF_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/** Bytes of the GFF header. */
#define LFS_GFF_HEADER 56u
/** Longest hak name kept (a ResRef: 16; longer names are refused as corrupt). */
#define LFS_GFF_HAK_MAX 16u

/**
 * The haks of the module whose `module.ifo` is @p data (@p n bytes), highest
 * priority first: the `Mod_HakList` entries in stored order, else (no list
 * field) the legacy top-level `Mod_Hak` string when it is not empty, else
 * none. Names are as stored (case kept), without extension.
 *
 * @param haks   out: *haks a malloc'd array of *nhaks malloc'd strings
 *               (NULL when none); free with lfs_gff_hak_list_free().
 * @return LFS_OK; LFS_ERR_NOTFORMAT (not "IFO " with "V3.2"/"V3.3", or
 *         shorter than the header); LFS_ERR_CORRUPT (an offset, count,
 *         field index, label index, struct index or string outside its
 *         table or the file, a hak list entry without a `Mod_Hak` string, a
 *         name over LFS_GFF_HAK_MAX bytes or holding a NUL, '/' or '\\';
 *         @p err names the offset and structure); LFS_ERR_NOMEM. Nothing is
 *         allocated on failure (*haks NULL, *nhaks 0).
 */
lfs_err lfs_gff_hak_list(const uint8_t *data, size_t n, char ***haks, size_t *nhaks,
			 lfs_error *err);

/** Free a list from lfs_gff_hak_list() (NULL is fine). */
void lfs_gff_hak_list_free(char **haks, size_t nhaks);

#endif
