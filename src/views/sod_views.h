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
 */
#ifndef LFS_SOD_VIEWS_H
#define LFS_SOD_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../formats/sod.h"
#include "../formats/format.h"
#include "thumb.h"
#include "vlist.h"

/**
 * The registry row of SOD (src/views/registry.c). Views: model.txt (the
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
