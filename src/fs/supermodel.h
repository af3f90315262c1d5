/**
 * @file supermodel.h
 * Supermodels you can walk (docs/mount.md "Supermodels"): an NWN binary
 * model whose header names a supermodel (`setsupermodel`, 64 bytes at model
 * offset 0xA8 of the model header: Torlack's "NWN Binary MDL Format", "The
 * Model Header"; "NULL" or empty = none) gets, in its model folder,
 *
 *  - `supermodel`: a symbolic link to the supermodel's folder in the mount,
 *    found by ResRef as saves find it (texture.h lfs_texture_model_path():
 *    the model's archive, beside the model, then SOURCE's resource
 *    precedence), e.g. "../a_ba.mdl" or "../../data/x.key/a_ba.mdl";
 *  - `anims/<name>` -> `../supermodel/anims/<name>` for every animation of
 *    the supermodel chain (the supermodel's own, its supermodel's, ...)
 *    the model does not have itself: the model's own animation of a name
 *    hides the inherited one, as the game plays the model's own first.
 *
 * The chain is followed at most LFS_SUPERMODEL_DEPTH steps and never to a
 * model already in it (a cycle); a supermodel not found, outside SOURCE, a
 * cycle or a chain too long is reported as a problem line. No FUSE code.
 */
#ifndef LFS_FS_SUPERMODEL_H
#define LFS_FS_SUPERMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/strbuf.h"
#include "registry/viewset.h"

/** Most supermodels followed from one model. */
#define LFS_SUPERMODEL_DEPTH 16u

/**
 * The supermodel name in NWN binary model bytes @p data (@p n bytes):
 * copied to @p out (NUL-terminated, at most 64 bytes) and true; false when
 * the bytes are no NWN binary model, too short for the model header, or the
 * name is empty or "NULL" (any case).
 */
bool lfs_supermodel_name(const uint8_t *data, size_t n, char out[65]);

/**
 * Add the supermodel link views (kind LFS_VIEW_LINK) to @p vs, the views of
 * model file @p rel (relative to SOURCE root @p rootfd; a loose NWN binary
 * `.mdl`; anything else is left alone), and sort it again. Problems (not
 * found, a cycle, a chain too long) are appended to @p problems, one line
 * each, naming where the lookup looked. Supermodels larger than @p max
 * bytes are not read. Returns false when out of memory (@p vs then holds
 * the views it had plus possibly some links, still sorted).
 */
bool lfs_supermodel_add(int rootfd, const char *rel, size_t max, lfs_viewset *vs, lfs_sb *problems);

/**
 * Version of the supermodel links of file @p rel: for a name ending in
 * `.mdl` (any case) the count of lfs_supermodel_changed() calls, else 0.
 * Part of the cache key (cache.h), so a model's folder is listed anew once
 * a model file changed. Thread-safe.
 */
uint64_t lfs_supermodel_version(const char *rel);

/**
 * A model file (`.mdl`), an archive or a BIF was created, deleted, renamed
 * or written in SOURCE
 * (the mount's watcher): every model's supermodel links are found again
 * when next listed. Thread-safe.
 */
void lfs_supermodel_changed(void);

#endif
