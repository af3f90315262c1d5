/**
 * @file nwn_views.h
 * Neverwinter Nights binary MDL in the format registry: the row
 * lfs_format_nwn_mdl (nwn_views.c) and its thumbnail scene (nwn_thumb.c).
 * Layout: "Neverwinter Nights binary MDL format" (BioWare/community
 * documentation); text dialect: docs/formats/nwn-ascii.md.
 */
#ifndef LFS_VIEWS_NWN_VIEWS_H
#define LFS_VIEWS_NWN_VIEWS_H

#include "../formats/format.h"
#include "thumb.h"

/** The registry row of NWN binary MDL (src/views/registry.c). */
extern const lfs_format lfs_format_nwn_mdl;

/**
 * Thumbnail scene of an NWN binary model: meshes with render != 0 in their
 * rest pose, placed by their nodes' first position/orientation keys
 * (thumb_models.h has the rules). Decode errors as nwn_mdl_decode().
 */
lfs_err nwn_thumb_scene(const uint8_t *data, size_t n, const lfs_view_opts *o,
			lfs_thumb_scene *s, lfs_error *err);

#endif
