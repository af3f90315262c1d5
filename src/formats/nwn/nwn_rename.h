/**
 * @file nwn_rename.h
 * The model name of an NWN ASCII model follows its file's resref: the rule
 * for a new model made in a mount (mkdir, cp -r, mv: docs/editing.md "New
 * models"). Text in, text out; no FUSE code.
 *
 * ResRef rule: 1-16 characters, letters, digits and underscore, compared
 * case-insensitively (BioWare Aurora "Key and BIF File Format" and "ERF
 * File Format" key structures: a 16-byte ResRef field; neverwinter.nim
 * resref.nim compares ResRefs case-insensitively).
 */
#ifndef LFS_NWN_RENAME_H
#define LFS_NWN_RENAME_H

#include <stdbool.h>
#include <stddef.h>

/** Longest NWN resref, characters (the key tables' 16-byte field). */
#define NWN_RESREF_MAX 16

/**
 * Is @p name (no extension) a valid NWN resref: 1..16 characters of
 * [A-Za-z0-9_]? When not, a reason (a static string) in *@p why (may be NULL).
 */
bool nwn_resref_valid(const char *name, const char **why);

/**
 * Rename the model of ASCII MDL @p text (@p n bytes) to @p newname: every
 * model-name token equal (case-insensitively) to the text's `newmodel`
 * name is replaced: `newmodel X`, `setsupermodel X S` (the first operand;
 * the supermodel S stays), `beginmodelgeom X`, `endmodelgeom X`,
 * `donemodel X`, `newanim A X`, `doneanim A X`, `animroot X`, `node T X`
 * (the node named like the model, the root dummy) and `parent X`. Every
 * other byte stays as it is (line ends, spacing, comments).
 *
 * @param out      receives the malloc'd new text (free()); NULL when
 *                 nothing was renamed (the name already is @p newname, or
 *                 the text has no `newmodel` line: the compiler reports it)
 * @param outn     its size
 * @param oldname  receives the text's model name (NUL-terminated; "" when
 *                 none), @p oldsz bytes
 * @return number of tokens replaced, or -1 when out of memory
 */
long nwn_text_rename(const char *text, size_t n, const char *newname, char **out, size_t *outn,
		     char *oldname, size_t oldsz);

#endif
