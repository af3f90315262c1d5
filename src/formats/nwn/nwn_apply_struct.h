/**
 * @file nwn_apply_struct.h
 * Structural edits of an NWN binary MDL (internal to src/formats/nwn/nwn_apply.c;
 * rules in docs/nwn-compile.md, "Edits", "Structural edits").
 *
 * The edited model.mdl text is compiled in memory (nwn_compile_doc(): the
 * game compiler's rules, src/formats/nwn/nwn_mdl_derive.h) and merged with the old
 * decoded binary, which acts as the template:
 *  - nodes are matched by name (case-insensitive) within each geometry,
 *    animations by name, then by position;
 *  - a matched node of the same type keeps the old node's bytes that the
 *    text does not show (function pointers, pad and string-tail bytes,
 *    array allocation counts, controllers the text cannot show) and every
 *    part whose text is unchanged (controllers row by row, the mesh
 *    geometry as a whole, light flare lists, events); a changed part takes
 *    the compiled values;
 *  - new nodes (and nodes whose type changed) are the compiled nodes, with
 *    the function pointers of an old node of the same type when there is one;
 *  - part numbers: the supermodel's when @p lookup finds it, else the old
 *    numbers of matched nodes (or the text's `#part-number` when edited);
 *    new nodes get the next number after the geometry's maximum when the
 *    model has no supermodel, -1 when it has one (what the compiler gives a
 *    node the supermodel lacks); new animation nodes the number of the model
 *    node of that name, else -1;
 *  - skins: bone maps and bind transforms are re-indexed for the new node
 *    list (old entries kept for old nodes, new nodes from the bind pose).
 * The result is laid out afresh by nwn_mdl_encode() (with the old image for
 * string tails and pads) and decoded once more before it is returned.
 */
#ifndef LFS_VIEWS_NWN_APPLY_STRUCT_H
#define LFS_VIEWS_NWN_APPLY_STRUCT_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "nwn_compile.h"

/**
 * Re-encode binary @p orig (@p n bytes) from the edited model.mdl text
 * @p text (@p tn bytes; errors are reported as `@p file:line:col: ...`).
 *
 * @param lookup  supermodel lookup (may be NULL), see nwn_compile.h
 * @param out     receives the new file (malloc'd) on success
 * @return LFS_OK; LFS_ERR_PARSE (bad text, unknown parent or bone, a face
 *         indexing a missing vertex, ...); LFS_ERR_UNSUPPORTED (limits of the
 *         binary layout, animmesh sets in animations); LFS_ERR_CORRUPT /
 *         LFS_ERR_NOTFORMAT when @p orig does not decode; LFS_ERR_NOMEM.
 */
lfs_err nwn_apply_structural(const uint8_t *orig, size_t n, const char *file, const char *text,
			     size_t tn, nwn_supermodel_lookup_fn lookup, void *ctx, uint8_t **out,
			     size_t *outn, lfs_error *err);

/** nwn_apply_structural() that also puts the compiler's diagnostics of an
 *  edit that lands (dropped degenerate faces, a supermodel not found, ...:
 *  nwn_compile_ex()) into @p warn (may be NULL). */
lfs_err nwn_apply_structural_ex(const uint8_t *orig, size_t n, const char *file, const char *text,
				size_t tn, nwn_supermodel_lookup_fn lookup, void *ctx, lfs_warnings *warn,
				uint8_t **out, size_t *outn, lfs_error *err);

#endif
