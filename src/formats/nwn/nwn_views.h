/**
 * @file nwn_views.h
 * Neverwinter Nights binary MDL in the format registry: the row
 * lfs_format_nwn_mdl (nwn_views.c) and its thumbnail scene (nwn_thumb.c).
 * Layout: "Neverwinter Nights binary MDL format" (BioWare/community
 * documentation); text dialect: docs/formats/nwn-ascii.md.
 */
#ifndef LFS_VIEWS_NWN_VIEWS_H
#define LFS_VIEWS_NWN_VIEWS_H

#include "registry/format.h"
#include "render/thumb.h"

/** The registry row of NWN binary MDL (src/registry/registry.c). */
extern const lfs_format lfs_format_nwn_mdl;

/**
 * Thumbnail scene of an NWN binary model: meshes with render != 0 in their
 * rest pose, placed by their nodes' first position/orientation keys
 * (thumb_models.h has the rules). Decode errors as nwn_mdl_decode().
 */
lfs_err nwn_thumb_scene(const uint8_t *data, size_t n, const lfs_view_opts *o,
			lfs_thumb_scene *s, lfs_error *err);

/** The registry row of ASCII NWN MDL (nwn_ascii_views.c): not in
 *  lfs_formats[]; lfs_format_for() offers it when lfs_format_ascii_views()
 *  turned it on (format.h). */
extern const lfs_format lfs_format_nwn_ascii;

struct lfs_vlist;
struct nwn_model;

/**
 * Append the views of decoded model @p m to @p l (model.mdl, model.mtl,
 * model.obj, meshes/<node>.obj, anims/<anim>/<node>.<controller>.csv).
 * @p text NULL: model.mdl is the model written as ASCII MDL and every view
 * but model.mtl is writable (the binary row). @p text non-NULL (@p tn
 * bytes, an ASCII source): model.mdl is those very bytes, the only writable
 * view; the others are derived read-only views. LFS_ERR_NOMEM.
 */
lfs_err nwn_model_views(const struct nwn_model *m, const uint8_t *text, size_t tn,
			const lfs_view_opts *opts, struct lfs_vlist *l, lfs_error *err);

#endif
