/**
 * @file restype.h
 * NWN resource types: the 16-bit type number an archive stores for each
 * resource, and the file extension it stands for.
 *
 * Archives (ERF family, KEY/BIF) store no extension, only the type number
 * (BioWare, "Key and BIF File Formats" §1.3). The table is the one of
 * neverwinter.nim's `restype.nim` (93 types: NWN 1 plus the EE additions
 * ktx 2073 … jui 2083, and ids 9996), which agrees with BioWare's table 1.3.1
 * where both list a type. A type outside the table is named `type<N>` with N
 * in decimal (e.g. `type3021`, a NWN2 type): a documented, reversible name so
 * that no resource is ever hidden for lack of an extension.
 */
#ifndef LFS_FORMATS_RESTYPE_H
#define LFS_FORMATS_RESTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The "invalid" type (0xFFFF) of BioWare's table. */
#define LFS_RESTYPE_INVALID 0xFFFFu
/** A few types this code names. */
#define LFS_RESTYPE_TGA 3u
#define LFS_RESTYPE_MDL 2002u
#define LFS_RESTYPE_DDS 2033u

/**
 * The extension of type @p type (lower case, no dot, static string), or NULL
 * when the type is not in the table.
 */
const char *lfs_restype_ext(uint16_t type);

/**
 * Write the extension of @p type into @p buf (@p size bytes, at least 10):
 * the table's name, or `type<N>` for a type outside it. Returns @p buf.
 */
char *lfs_restype_name(uint16_t type, char *buf, size_t size);

/**
 * The type of extension @p ext (no dot, compared case-insensitively; the
 * `type<N>` form is accepted for any N ≤ 65535). False when unknown.
 */
bool lfs_restype_from_ext(const char *ext, uint16_t *type);

#endif
