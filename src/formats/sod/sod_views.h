/**
 * @file sod_views.h
 * SOD (Star Trek: Armada): format detection, the views of a SOD model
 * directory, and applying an edited view back onto the file
 * (docs/formats/sod.md).
 *
 * Views (paths relative to the model directory; names by names.h, one scope
 * per directory):
 *  - model.txt            every field of the file (sod_text.h)
 *  - meshes/<node>.obj    one per mesh node, node-local coordinates
 *  - model.obj, model.mtl mesh nodes in model space (node transforms applied;
 *                         under an LOD control node only the child subtree
 *                         with the most faces)
 *  - anims/<node>.csv     one per animation channel (a second channel of the
 *                         same node is "<node>~2.csv")
 * Code: sod_views.c (names, view list, apply), sod_text.c (model.txt),
 * sod_obj.c (OBJ/MTL, model space; OBJ syntax by obj.h), sod_csv.c (CSV;
 * syntax by csv.h).
 */
#ifndef LFS_SOD_VIEWS_H
#define LFS_SOD_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sod.h"
#include "registry/format.h"
#include "render/thumb.h"
#include "registry/vlist.h"

/**
 * The registry row of SOD (src/registry/registry.c). Views: model.txt (the
 * whole model, writable), model.mtl and model.obj (derived, read-only),
 * meshes/<node>.obj (target.node = node index, writable), anims/<channel>.csv
 * (target.node = channel index, writable). A save is encoded in the file's
 * version. Errors: LFS_ERR_PARSE ("<path>:line:col: message"),
 * LFS_ERR_UNSUPPORTED for read-only views, decode/encode errors as
 * sod_decode()/sod_encode().
 */
extern const lfs_format lfs_format_sod;

/** Thumbnail scene of a SOD model: mesh nodes of the most detailed LOD. */
lfs_err sod_thumb_scene(const uint8_t *data, size_t n, const lfs_view_opts *o,
			lfs_thumb_scene *s, lfs_error *err);

/** Write meshes/<node>.obj for node @p idx (a mesh node) of @p m; @p obj_name names `o`. */
lfs_err sod_obj_mesh(const sod_model *m, uint16_t idx, const char *obj_name, lfs_sb *out,
		     lfs_error *err);

/** Write anims/<node>.csv for channel @p idx of @p m. */
lfs_err sod_csv_channel(const sod_model *m, uint16_t idx, lfs_sb *out, lfs_error *err);

/**
 * Append model.mtl: one material per (texture, lighting material) pair of
 * the mesh nodes, Ka/Kd/Ks/Ns/illum from the lighting material, map_Kd via
 * opts->texture_lookup. LFS_ERR_NOMEM on failure. (sod_obj.c)
 */
lfs_err sod_mtl_write(const sod_model *m, const lfs_view_opts *opts, lfs_sb *sb, lfs_error *err);

/**
 * Append model.obj: the shown mesh nodes (sod_model_space()) in model
 * space, `o <node_obj[i]>` each; @p node_obj has m->n_nodes entries (NULL
 * for non-mesh nodes). (sod_obj.c)
 */
lfs_err sod_obj_model_write(const sod_model *m, const char *const *node_obj, lfs_sb *sb,
			    lfs_error *err);

/**
 * Replace the positions, texture coordinates and faces of mesh @p me (of
 * @p m, arena-allocated) with those of meshes/<node>.obj text @p text
 * (@p n bytes): one `g` per lighting group in order, triangles with v/vt
 * corners, at most 65535 of each list. Messages name @p file. (sod_obj.c)
 */
lfs_err sod_obj_apply(sod_model *m, sod_mesh *me, const char *file, const char *text, size_t n,
		      lfs_error *err);

/**
 * Replace the keys of channel @p c (of @p m) with those of anims/<node>.csv
 * text @p text (@p n bytes): the header row, then one row per key: key
 * (= row number), time (ignored), values. Messages name @p file. (sod_csv.c)
 */
lfs_err sod_csv_apply(sod_model *m, sod_channel *c, const char *file, const char *text, size_t n,
		      lfs_error *err);

/** Key time of key @p k of channel @p c: k * period / n_keys (seconds). */
float sod_key_time(const sod_channel *c, uint32_t k);

/**
 * Model-space placement of every node as model.obj uses it (thumbnails reuse
 * it): @p world receives 12 doubles per node — the right, up and front rows,
 * then the position, composed down from the roots (a node-local point p maps
 * to p.x*right + p.y*up + p.z*front + position, SOD axes) — and @p shown is
 * true for the nodes model.obj draws: reachable from a root, and under each
 * lodcontrol node only the child subtree with the most faces (the highest
 * detail LOD). Both arrays are m->n_nodes long; world is left untouched for
 * nodes that are not shown. Returns false on allocation failure.
 */
bool sod_model_space(const sod_model *m, double *world, bool *shown);

#endif
