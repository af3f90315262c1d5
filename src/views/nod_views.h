/**
 * @file nod_views.h
 * NOD: format detection and view builder for the mount (viewset.c table).
 * PLACEHOLDER until the NOD codec lands: detects nothing.
 */
#ifndef LFS_NOD_VIEWS_H
#define LFS_NOD_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vlist.h"

/** Cheap header test: is this a NOD file we decode? */
bool nod_detect(const uint8_t *data, size_t n);

/** Decode and append every view of a NOD file to @p l. */
lfs_err nod_views(const uint8_t *data, size_t n, const lfs_view_opts *opts, lfs_vlist *l,
		   lfs_error *err);

#endif
