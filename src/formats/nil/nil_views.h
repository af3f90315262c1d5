/**
 * @file nil_views.h
 * NIL (Vampire: The Masquerade – Redemption level): format detection and the
 * views of the mount's X.nil/ directory (viewset.c table). Read-only: there
 * is no apply function (docs/formats/nil.md).
 *
 * Views:
 *   model.txt          every byte of the file as MDL-style text (nil_text.h)
 *   model.mtl          one material per header material name (+ map_Kd when
 *                      the texture lookup finds the name's last path part),
 *                      plus "nil_no_material" for out-of-range indices
 *   model.obj          every decoded sector, one `o sector<k>` each
 *   sectors/<k>.obj    sector k alone (k = decimal sector index)
 * OBJ geometry: `v` = the sector's vertices as stored (no axis change), `vt`
 * = each sector vertex's texture u v as stored, faces = the sector vertices
 * read as one Direct3D triangle strip (triangle k = sector vertices k, k+1,
 * k+2, odd k reversed; a triangle that repeats a vertex index is a strip
 * restart and is left out, as is one indexing past the vertices) [N §3.2,
 * TBP]; `usemtl` = the material whose index is the first sector vertex's
 * `base` field [TBP's reading].
 */
#ifndef LFS_NIL_VIEWS_H
#define LFS_NIL_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nil.h"
#include "registry/format.h"
#include "render/thumb.h"
#include "registry/vlist.h"

/**
 * The registry row of NIL (src/registry/registry.c): lossless codec, read-only
 * views model.txt, model.mtl, model.obj and sectors/<i>.obj (target.node =
 * sector index); no apply.
 */
extern const lfs_format lfs_format_nil;

/** Thumbnail scene of a NIL level: every decoded sector's strip triangles. */
lfs_err nil_thumb_scene(const uint8_t *data, size_t n, const lfs_view_opts *o,
			lfs_thumb_scene *s, lfs_error *err);

/**
 * Append the views of an already decoded model (the list lfs_format_nil builds).
 * @return LFS_OK, LFS_ERR_NOMEM.
 */
lfs_err nil_model_views(const nil_model *m, const lfs_view_opts *opts, lfs_vlist *l,
			lfs_error *err);

/**
 * Number of triangles the strip rule above yields for sector @p s (what the
 * OBJ views write for it).
 */
size_t nil_sector_triangles(const nil_sector *s);

#endif
