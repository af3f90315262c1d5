/**
 * @file nwn_apply.h
 * Edit-preserving re-encode of an NWN binary MDL from one edited view
 * (docs/nwn-compile.md, section "Edits").
 *
 * Writable views (paths as lfs_views_build lists them):
 *  - model.mdl                            (src/formats/nwn/nwn_ascii.c)
 *  - meshes/<node>.obj                    (src/formats/nwn/nwn_obj.c)
 *  - model.obj (values only, objects by node name, transforms inverted)
 *  - anims/<anim>/<node>.<controller>.csv (src/formats/nwn/nwn_csv.c)
 * model.mtl is read-only (merged materials). OBJ numbers are compared at the
 * precision they were printed at (docs/formats/obj-csv.md, "Saving OBJ from
 * other programs").
 *
 * Method: the binary is decoded, the view's text is regenerated from the
 * model, and the generated and the edited text are read by the same reader
 * (mdl_parse.h for model.mdl, a small OBJ / CSV reader for the others) and
 * compared statement by statement, value by value (numbers as float32 bits,
 * so "1", "1.0" and "1e0" are the same value):
 *  - no difference: the output is the original bytes;
 *  - value differences with unchanged counts: only those values' bytes are
 *    patched into a copy of the original file, plus the values the compiler
 *    derives from them (face planes of faces that use an edited vertex, face
 *    adjacency and the vertex index list after a face's vertex indices
 *    change, the mesh bounding box, average point, radius and area, AABB
 *    tree boxes) [N §3.3, §3.4]. An edited orientation becomes
 *    q = (axis·sin(a/2), cos(a/2)) [N §3.2]; an unchanged one keeps its
 *    stored quaternion bits even though its text is derived;
 *  - key count changes: the node's controller data is rebuilt and the file
 *    re-laid by nwn_mdl_encode();
 *  - other structural differences (vertex, face, node, animation or event
 *    counts; node type or parent; controllers or lists added or removed;
 *    smoothing groups; split tvert indices; OBJ polygons): the edited text
 *    (for an OBJ: model.mdl with that mesh rebuilt from the OBJ) is compiled
 *    and merged with the old binary as template (nwn_apply_struct.h), then
 *    re-laid — docs/nwn-compile.md "Structural edits".
 */
#ifndef LFS_VIEWS_NWN_APPLY_H
#define LFS_VIEWS_NWN_APPLY_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "registry/format.h"
#include "nwn_mdl.h"
#include "nwn_compile.h"

/**
 * Apply the edited text of view @p v to the NWN binary @p orig: the apply of
 * the NWN registry row (lfs_format_nwn_mdl, src/formats/nwn/nwn_views.c).
 *
 * @param orig  the binary model file (@p n bytes); not retained
 * @param v     a view of the set built from @p orig: kind LFS_VIEW_TEXT
 *              (model.mdl), LFS_VIEW_MESH_OBJ (meshes/<node>.obj, target.node
 *              = geometry node index) or LFS_VIEW_TRACK_CSV
 *              (anims/<anim>/<node>.<controller>[~k].csv, target = animation,
 *              node within its geometry, controller index); the target is
 *              checked against the decoded model; v->path is used in messages
 * @param text  the edited view (@p tn bytes, need not be NUL-terminated)
 * @param sib   may be NULL; when it finds the model's supermodel (binary or
 *              ASCII bytes, see nwn_compile.h), part numbers and the
 *              node-count field of a re-laid file come from it; without it
 *              they are kept from the old binary and new nodes follow the
 *              rule in docs/nwn-compile.md ("Structural edits")
 * @param out   receives the new file (malloc'd; caller frees); equal to
 *              @p orig byte for byte when the text holds no change
 * @param outn  receives its size
 * @param err   optional; parse errors read `path:line:col: message`
 * @return LFS_OK; LFS_ERR_PARSE (bad edit: unknown statement, wrong number of
 *         values, non-number, unknown node, parent or bone name, value out of
 *         range, a face indexing a missing vertex); LFS_ERR_UNSUPPORTED
 *         (read-only view, a target outside the model; limits of the binary
 *         layout such as more than 65535 vertices or 17 bones per skin);
 *         LFS_ERR_NOTFORMAT / LFS_ERR_CORRUPT when @p orig does not decode;
 *         LFS_ERR_NOMEM.
 */
lfs_err nwn_apply_view(const uint8_t *orig, size_t n, const lfs_view *v, const char *text,
		       size_t tn, const lfs_siblings *sib, uint8_t **out, size_t *outn,
		       lfs_error *err);

/**
 * nwn_apply_view() that also hands back the model the apply's own check
 * decoded from the new file (the apply_decoded of the NWN registry row):
 * *result (free with nwn_model_free; may be NULL) is the decode of exactly
 * *out (its image NULL: nwn_mdl_decode_noimage) on LFS_OK when the value
 * path patched a byte; NULL when the text
 * held no change, took the structural path (compile and merge), or on error.
 * @p result NULL: nwn_apply_view().
 */
lfs_err nwn_apply_view_decoded(const uint8_t *orig, size_t n, const lfs_view *v, const char *text,
			       size_t tn, const lfs_siblings *sib, uint8_t **out, size_t *outn,
			       nwn_model **result, lfs_error *err);

#endif
