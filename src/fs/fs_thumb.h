/**
 * @file fs_thumb.h
 * Private to src/fs/: thumbnail.png of a model folder drawn when it is asked
 * for (docs/thumbnails.md "In the mount"). The views of a model are built
 * with lfs_view_opts.thumb_lazy, so thumbnail.png is listed without bytes
 * (lfs_viewset.thumb_pending); the view-file paths of fs_model.c (lookup,
 * getattr, read) call fsi_thumb_fill() before they use its size or bytes.
 */
#ifndef LFS_FS_FS_THUMB_H
#define LFS_FS_FS_THUMB_H

#include <stdbool.h>

#include "fs_int.h"

/**
 * Set by the thread serving a READDIRPLUS while it looks the listed names
 * up (fs.c): a pending thumbnail is then listed without attributes instead
 * of being drawn, so `ls` never renders. A later LOOKUP of the name draws it.
 */
extern _Thread_local bool fsi_thumb_defer;

/**
 * Make view @p vpath of cache entry @p ce (held by the caller: a reference
 * from fsi_model_views()) ready to report: a no-op unless it is the pending
 * "thumbnail.png". Runs without fs->mu (must not be held): the first caller
 * per entry (model version) reads the model file again, takes the picture
 * from the disk cache (thumbcache.h, fs->o.thumb_cache) or renders it (and
 * stores it there), and publishes the bytes under fs->mu; other callers for
 * the same entry wait on fs->cache.built. A picture the renderer cannot
 * draw after all becomes a transparent image of the same edge (logged).
 * A model file replaced since @p ce was built (a racing save) is drawn as
 * it is now.
 * @return 0; EAGAIN under fsi_thumb_defer (nothing done); ESTALE when the
 *         model file is gone or too large now; ENOMEM; the errno of reading
 *         the model file.
 */
int fsi_thumb_fill(lfs_fs *fs, lfs_centry *ce, const char *vpath);

/**
 * thumbnail.png of model entry @p ce whose views are not built (a header
 * verdict or a names-only entry, held by the caller): drawn from the model
 * file's bytes without building any other view (disk cache first, as
 * fsi_thumb_fill()), once per entry (others wait on fs->cache.built).
 * The picture is kept in ce->thumb (lfs_cache_set_thumb()), where the full
 * build of the views takes it (lfs_cache_fill(): no second render); when
 * the views were built meanwhile it goes straight into their pending
 * thumbnail. Runs without fs->mu.
 * @return 0 (the bytes: ce->thumb, or the views' thumbnail once built);
 *         ENOENT when the model has nothing to draw (no triangles, does not
 *         decode, thumbnails off, a format without thumbnails: the full
 *         build lists no thumbnail.png); EAGAIN under fsi_thumb_defer;
 *         ESTALE when the model file is gone or too large now; ENOMEM.
 */
int fsi_thumb_early(lfs_fs *fs, lfs_centry *ce);

#endif
