/**
 * @file sod_views.h
 * SOD: format detection and view builder for the mount (viewset.c table).
 * PLACEHOLDER until the SOD codec lands: detects nothing.
 */
#ifndef LFS_SOD_VIEWS_H
#define LFS_SOD_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vlist.h"

/** Cheap header test: is this a SOD file we decode? */
bool sod_detect(const uint8_t *data, size_t n);

/** Decode and append every view of a SOD file to @p l. */
lfs_err sod_views(const uint8_t *data, size_t n, const lfs_view_opts *opts, lfs_vlist *l,
		   lfs_error *err);

#endif
