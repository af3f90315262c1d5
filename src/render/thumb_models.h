/**
 * @file thumb_models.h
 * Thumbnails of model files: the pipeline (scene, render, PNG) through the
 * format registry, the texture/material helpers the per-format scenes share,
 * and the scene builders (<format>_thumb.c): a decoded model -> an
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

#include "registry/format.h"
#include "thumb.h"

/**
 * resref -> scene texture index (LFS_THUMB_NONE = not found / not TGA), so
 * each texture file is read and decoded once per model. Zero-initialise;
 * free with lfs_thumb_texcache_free().
 */
typedef struct lfs_thumb_texcache {
	char **names;
	uint32_t *idx;
	size_t n, cap;
} lfs_thumb_texcache;

/** Free the cache's names (the scene keeps the textures). */
void lfs_thumb_texcache_free(lfs_thumb_texcache *c);

/**
 * The resref part of a texture or material name of at most @p len bytes
 * (stops at NUL): after the last '/' or '\\', without an extension of up to
 * 3 characters after the last '.'; written NUL-terminated, cut to @p outsz.
 */
void lfs_thumb_resref_of(const char *name, size_t len, char *out, size_t outsz);

/**
 * Add a material to @p s: the texture @p resref when opts->texture_read
 * finds and decodes it (TGA), else the colour @p rgb (linear 0..1; grey when
 * NULL, black or not finite). @p alpha_test: texture alpha cuts holes.
 * @return the material index (lfs_thumb_add_mat()).
 */
uint32_t lfs_thumb_material(lfs_thumb_scene *s, lfs_thumb_texcache *c, const lfs_view_opts *o,
			    const char *resref, const float *rgb, bool alpha_test);

/**
 * The drawable triangles of format @p f's model @p data, appended to @p s
 * with its materials and textures (read through opts->texture_read): calls
 * f->thumb_scene.
 * @return LFS_OK (possibly with no triangles); decode errors as the format's
 *         decoder; LFS_ERR_UNSUPPORTED for formats without geometry (NAD:
 *         thumb_scene NULL); LFS_ERR_NOTFORMAT for f NULL; LFS_ERR_NOMEM.
 */
lfs_err lfs_thumb_scene_of(const lfs_format *f, const uint8_t *data, size_t n,
			   const lfs_view_opts *opts, lfs_thumb_scene *s, lfs_error *err);

/**
 * Whole pipeline for one model file of format @p f: scene, render at @p size,
 * PNG with the freedesktop tEXt keys (see lfs_views_thumbnail()).
 */
lfs_err lfs_thumb_model(const lfs_format *f, const uint8_t *data, size_t n, unsigned size,
			const lfs_view_opts *opts, const char *uri, int64_t mtime, uint8_t **png,
			size_t *pngn, lfs_error *err);

#endif
