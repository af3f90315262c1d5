/**
 * @file nod_views.h
 * NOD (Vampire: The Masquerade – Redemption model): the views of an `X.nod/`
 * directory, their writers and parsers, and apply-a-view.
 *
 * Views (docs/formats/nod.md):
 *   model.txt                      every field of the binary, MDL-style text
 *   model.obj + model.mtl          every mesh group in model space, rest pose
 *   meshes/<mesh>.<group>.obj      one per mesh group: its vertices (v, vt,
 *                                  vn) and faces, model space
 * <mesh> is the name of the group's mesh (mesh names list, index = the group's
 * mesh byte; "mesh<K>" when K is out of range), <group> the group's index;
 * "<mesh>.<group>" goes through names.h (one scope: meshes/), so unsafe bytes
 * are escaped and the name is unique.
 *
 * Floats are printed in the shortest exact float32 form (floatfmt.h), except
 * NaNs, which print as "nan:" + the 8 hex digits of their bits so the payload
 * survives (same convention as the NAD views). Parsers accept that form,
 * plain "nan" and anything strtof() reads.
 *
 * OBJ texture coordinates: vt v = 1 − stored v (NOD stores Direct3D v,
 * docs/formats/nod.md). When an OBJ is applied, a vt v equal (bitwise) to
 * 1 − the stored v of the same vertex keeps the stored v, so applying an
 * unedited OBJ gives back the original bytes.
 *
 * Parse errors are `<file>:line:col: message` (lfs_fail_at), file = the view
 * path given by the caller ("model.txt", "meshes/head.0.obj").
 * Code: nod_views.c (detect, views, apply), nod_text.c (model.txt),
 * nod_obj.c (OBJ/MTL). Layout: src/formats/nod/nod.h.
 */
#ifndef LFS_NOD_VIEWS_H
#define LFS_NOD_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nod.h"
#include "text/mdltext.h"
#include "registry/names.h"
#include "render/thumb.h"
#include "registry/vlist.h"

/**
 * The registry row of NOD (src/registry/registry.c). Views: model.txt (the
 * whole model, writable), model.mtl (read-only), model.obj (every group,
 * writable), meshes/<mesh>.<group>.obj (target.node = group index, writable).
 * Saving model.txt replaces the whole model; an OBJ replaces the positions,
 * normals, uvs and faces of its group(s) (vertex and face counts may change;
 * docs/formats/nod.md says what new vertices get). Errors: LFS_ERR_PARSE
 * (`<path>:line:col: ...`), decode/encode errors as nod_decode()/nod_encode().
 */
extern const lfs_format lfs_format_nod;

/** Thumbnail scene of a NOD model: every mesh group in the rest pose. */
lfs_err nod_thumb_scene(const uint8_t *data, size_t n, const lfs_view_opts *o,
			lfs_thumb_scene *s, lfs_error *err);

/* ---- shared helpers (nod_text.c); floats: lfs_sb_float_bits / lfs_lex_f32 ---- */

/**
 * The per-group OBJ base names ("<mesh>.<group>", names.h-mapped), added to
 * @p set in group order: names[g] for every group (owned by @p set).
 * LFS_ERR_NOMEM on failure. @p names holds m->n_groups pointers.
 */
lfs_err nod_group_names(const nod_model *m, lfs_nameset *set, const char **names,
			lfs_error *err);

/* ---- model.txt (nod_text.c) ---------------------------------------------- */

/** Append the model.txt text of @p m to @p sb. LFS_ERR_NOMEM on failure. */
lfs_err nod_text_write(const nod_model *m, lfs_sb *sb, lfs_error *err);

/**
 * Parse model.txt text (@p n bytes, need not be NUL-terminated) into a new
 * model (*out, free with nod_model_free()). Messages name @p file.
 */
lfs_err nod_text_parse(const char *file, const char *text, size_t n, nod_model **out,
		       lfs_error *err);

/* ---- OBJ / MTL (nod_obj.c) ----------------------------------------------- */

/**
 * MTL material names for the model: mat_names[i] for material i, and
 * *untextured for groups whose material is -1 or out of range (all owned by
 * @p set). @p mat_names holds m->n_materials pointers.
 */
lfs_err nod_mtl_names(const nod_model *m, lfs_nameset *set, const char **mat_names,
		      const char **untextured, lfs_error *err);

/** Append model.mtl (one material per NOD material, map_Kd via opts->texture_lookup). */
lfs_err nod_mtl_write(const nod_model *m, const lfs_view_opts *opts, const char **mat_names,
		      const char *untextured, lfs_sb *sb, lfs_error *err);

/** Append meshes/<names[g]>.obj for group @p g. */
lfs_err nod_obj_group_write(const nod_model *m, uint32_t g, const char **names,
			    const char **mat_names, const char *untextured, lfs_sb *sb,
			    lfs_error *err);

/** Append model.obj (every group, `o <names[g]>`, global numbering). */
lfs_err nod_obj_model_write(const nod_model *m, const char **names, const char **mat_names,
			    const char *untextured, lfs_sb *sb, lfs_error *err);

/**
 * Does group name @p name (a name of nod_group_names()) read back from an
 * OBJ `o` line? Spaces inside are fine (the apply reads the rest of the
 * line); a leading or trailing space, or a word starting with '"' (read as
 * a quoted token) is not: such a group's OBJ views are read-only.
 */
bool nod_obj_name_ok(const char *name);

/**
 * Apply OBJ text to @p m in place: @p group = the group of a meshes/ file, or
 * -1 for model.obj (one `o` block per group, in group order, named
 * names[g]). Messages name @p file.
 */
lfs_err nod_obj_apply(nod_model *m, int32_t group, const char **names, const char *file,
		      const char *text, size_t n, lfs_error *err);

#endif
