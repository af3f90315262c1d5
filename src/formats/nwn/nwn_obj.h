/**
 * @file nwn_obj.h
 * NWN model meshes -> Wavefront OBJ + MTL (docs/formats/obj-csv.md).
 *
 * Views produced (paths relative to the model directory):
 *  - meshes/<node>.obj: one per mesh node of the model geometry (trimesh,
 *    skin, danglymesh, animmesh, aabb), in node-local coordinates (metres),
 *    `v`, `vt` (texture channel 0), `vn`, faces `f v/vt/vn` (1-based), using
 *    `mtllib ../model.mtl` and the node's material.
 *  - model.obj: every rendered mesh (render != 0, aabb walkmeshes skipped)
 *    placed in model space by composing the first key of the position,
 *    orientation and scale controllers of the node and all its parents.
 *  - model.mtl: one material per distinct (bitmap, ambient, diffuse,
 *    specular, shininess, alpha) tuple, named after the bitmap; `map_Kd` when
 *    the caller's texture lookup finds the texture file.
 * Only standard OBJ/MTL statements are written (Blender's importer reads them).
 */
#ifndef LFS_VIEWS_NWN_OBJ_H
#define LFS_VIEWS_NWN_OBJ_H

#include "common/error.h"
#include "common/strbuf.h"
#include "nwn_mdl.h"
#include "registry/names.h"
#include "text/obj.h"
#include "registry/viewset.h"

/**
 * What NWN accepts in a mesh OBJ (meshes/<node>.obj and model.obj read back
 * by the apply): v, vt (a w only when 0), vn, f (3 to 15 corners, indices to
 * elements defined above), o g s usemtl mtllib (not stored per mesh); any
 * other statement is refused. Messages in model.mdl's wording; every number
 * is also kept as written (the printed-precision rule).
 */
extern const lfs_obj_rules nwn_obj_rules_nums;

/** Material assignment shared by model.mtl, model.obj and meshes/ *.obj. */
typedef struct nwn_obj_mats {
	const char **node_mat; /**< per model-geometry node: material name, NULL for non-mesh nodes */
	lfs_nameset names;     /**< owns the material names */
} nwn_obj_mats;

/**
 * Assign materials to the mesh nodes of @p m and write model.mtl into @p mtl
 * (NULL: the names only, no text and no texture lookups — a build that does
 * not want model.mtl). @p opts may be NULL (no map_Kd). Free @p mats with nwn_obj_mats_free().
 * @return LFS_OK or LFS_ERR_NOMEM.
 */
lfs_err nwn_obj_materials(const nwn_model *m, const lfs_view_opts *opts, nwn_obj_mats *mats,
			  lfs_sb *mtl, lfs_error *err);

/** Free a material table (not the struct). */
void nwn_obj_mats_free(nwn_obj_mats *mats);

/**
 * Write meshes/<name>.obj for mesh node @p idx of the model geometry.
 * @p obj_name is the safe name used for `o`/`g`. Faces whose vertex indices
 * are out of range are left out (and counted in a comment).
 * @return LFS_OK, LFS_ERR_NOMEM.
 */
lfs_err nwn_obj_mesh(const nwn_model *m, uint32_t idx, const char *obj_name,
		     const nwn_obj_mats *mats, lfs_sb *out, lfs_error *err);

/**
 * Write model.obj: rendered meshes in model space. @p obj_names gives each
 * mesh node's safe name (indexed like the geometry's nodes; NULL = skip).
 * @return LFS_OK, LFS_ERR_NOMEM.
 */
lfs_err nwn_obj_model(const nwn_model *m, const char *const *obj_names,
		      const nwn_obj_mats *mats, lfs_sb *out, lfs_error *err);

/**
 * Model-space transform of every node of geometry @p g from the first key of
 * the position/orientation/scale controllers: @p t (3 per node), @p q
 * (unit quaternion x y z w, 4 per node), @p s (1 per node), all n_nodes long,
 * computed in double. Exposed for tests.
 */
void nwn_obj_transforms(const nwn_geometry *g, double *t, double *q, double *s);

#endif
