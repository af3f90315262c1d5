/**
 * @file thumb_models.h
 * Per-format triangle extraction for thumbnails: a decoded model -> an
 * lfs_thumb_scene in the renderer's frame (thumb.h: right-handed, +X right,
 * +Y front, +Z up; UV v up). docs/thumbnails.md has the rules and axes.
 *
 *  - NWN binary MDL: meshes with render != 0 (trimesh, skin, danglymesh,
 *    animmesh in their stored rest pose), not aabb walkmeshes, and not meshes
 *    whose first alpha key is 0 (invisible); emitters, lights, references and
 *    dummies have no triangles. Node transforms from the first position /
 *    orientation / scale keys (nwn_obj_transforms, as model.obj). NWN is
 *    Z up and right-handed with creatures facing +Y (a quiver sits on
 *    −Y): the scene frame as is. Texture = bitmap (texture0), TGA alpha cuts holes.
 *  - NOD: every mesh group, rest-pose model-space vertices, file normals;
 *    Z up, +Y front, +X right already [SDK "Coordinate systems"]; v flipped.
 *  - SOD: mesh nodes placed by sod_model_space() (the model.obj rule: under
 *    each lodcontrol node only the most detailed child subtree); SOD axes
 *    (X right, Y up, Z front, left-handed) -> scene (x, z, y); v flipped;
 *    colour = the group's lighting material diffuse; texture alpha ignored
 *    (Armada uses it for self-illumination) unless the texture material is
 *    "alphathreshold".
 *  - NIL: every decoded sector's strip triangles (the model.obj rule of
 *    nil_views.h); stored axes taken as Z up like NOD (the SDK's engine
 *    convention; nothing in the level files settles it); v flipped.
 */
#ifndef LFS_VIEWS_THUMB_MODELS_H
#define LFS_VIEWS_THUMB_MODELS_H

#include "thumb.h"
#include "viewset.h"

/**
 * Decode @p data (format @p f) and append its drawable triangles, materials
 * and textures (read through opts->texture_read when set) to @p s.
 * @return LFS_OK (possibly with no triangles); decode errors as the format's
 *         decoder; LFS_ERR_UNSUPPORTED for formats without geometry (NAD);
 *         LFS_ERR_NOMEM.
 */
lfs_err lfs_thumb_scene_of(lfs_format f, const uint8_t *data, size_t n, const lfs_view_opts *opts,
			   lfs_thumb_scene *s, lfs_error *err);

/**
 * Whole pipeline for one model file of format @p f: scene, render at @p size,
 * PNG with the freedesktop tEXt keys (see lfs_views_thumbnail()).
 */
lfs_err lfs_thumb_model(lfs_format f, const uint8_t *data, size_t n, unsigned size,
			const lfs_view_opts *opts, const char *uri, int64_t mtime, uint8_t **png,
			size_t *pngn, lfs_error *err);

#endif
