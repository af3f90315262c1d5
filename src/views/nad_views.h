/**
 * @file nad_views.h
 * NAD: format detection and view builder for the mount (viewset.c table).
 * PLACEHOLDER until the NAD codec lands: detects nothing.
 */
#ifndef LFS_NAD_VIEWS_H
#define LFS_NAD_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vlist.h"

/** Cheap header test: is this a NAD file we decode? */
bool nad_detect(const uint8_t *data, size_t n);

/** Decode and append every view of a NAD file to @p l. */
lfs_err nad_views(const uint8_t *data, size_t n, const lfs_view_opts *opts, lfs_vlist *l,
		   lfs_error *err);

#endif
