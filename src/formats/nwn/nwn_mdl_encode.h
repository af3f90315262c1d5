/**
 * @file nwn_mdl_encode.h
 * NWN binary MDL: in-memory model -> bytes, laying the file out afresh.
 *
 * Layout (the order both BioWare's compiler and nwnmdlcomp use; measured on
 * every corpus binary, see docs/nwn-compile.md "Layout"):
 *
 *   file header        0, model size A, raw size B                  [T]
 *   model header       0xE8 bytes (geometry header + model fields) at model 0
 *   animation pointers u32 per animation
 *   per animation      animation header (0xC4), events (36 bytes each), its
 *                      node tree
 *   model node tree
 *
 * A node is written as: its header (0x70 .. 0x2D4 bytes by type), the type's
 * model-data arrays (light flare arrays and flare texture strings; skin
 * node-to-bone map, qbone, tbone, constant indices; dangly constraints; the
 * AABB tree depth first; animmesh vertex/tvert sets), then for meshes the
 * faces, left-over faces, vertex-index counts and vertex-index offsets, then
 * the children pointer array, every child subtree, the controller keys and the
 * controller data. Raw data follows the model node tree, per mesh in tree
 * order: skin weights, skin bone refs, vertices, tverts 0..3, normals, colours,
 * vertex index list — no padding anywhere [N §3.5; measured on every corpus binary].
 *
 * Values: every value comes from the model struct — function pointers,
 * part numbers, node-count field, controller pad bytes, raw quaternions, key
 * and data offsets, array allocation counts (kept when the used count did not
 * change, else = the used count). Pointers are recomputed. An empty array
 * gets offset 0 when the struct's offset is 0 (nwnmdlcomp style) and the
 * position it would have had otherwise (BioWare style) [N §3.3]. Node
 * geometry/parent pointers are written as 0 when the struct holds 0 (all
 * corpus files), else recomputed.
 *
 * Bytes the struct does not hold — the tails after the NUL of fixed-size
 * strings and the pad bytes after the geometry type, the triangle mode and
 * the lightmapped/rotatetexture bytes — are copied from the model's `image`
 * at the structure's recorded `off` when the model has an image and the
 * string there is unchanged (so an unedited node keeps its garbage bytes);
 * otherwise they are zero.
 *
 * Not encodable (LFS_ERR_UNSUPPORTED): data the decoder does not keep —
 * more than one vertex index list, bump-map (texture animation) raw arrays,
 * left-over face lists, animmesh compile-time arrays with entries.
 */
#ifndef LFS_NWN_MDL_ENCODE_H
#define LFS_NWN_MDL_ENCODE_H

#include "nwn_mdl.h"

/** nwn_mdl_encode_ex() flags. */
enum nwn_encode_flag {
	/** Do not copy string tails / pad bytes from the model's image: every
	 *  byte the struct does not hold is zero. */
	NWN_ENC_NO_IMAGE_BYTES = 1,
};

/**
 * Encode @p m into a new binary MDL.
 *
 * @param m    the model (e.g. from nwn_mdl_decode() or nwn_compile); node
 *             arrays must be in depth-first pre-order with consistent
 *             parent/children indices, as nwn_mdl_decode() produces
 * @param out  receives a malloc'd buffer (free()) on success
 * @param n    receives its size
 * @param err  optional: names the node/structure on failure
 * @return LFS_OK; LFS_ERR_UNSUPPORTED (see file comment); LFS_ERR_CORRUPT when
 *         the struct is inconsistent (bad child index, tree too deep, sizes
 *         beyond 32 bits, controller indexes past its data); LFS_ERR_NOMEM.
 */
lfs_err nwn_mdl_encode(const nwn_model *m, uint8_t **out, size_t *n, lfs_error *err);

/** nwn_mdl_encode() with nwn_encode_flag @p flags. */
lfs_err nwn_mdl_encode_ex(const nwn_model *m, unsigned flags, uint8_t **out, size_t *n,
			  lfs_error *err);

#endif
