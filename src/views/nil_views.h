/**
 * @file nil_views.h
 * NIL: format detection and view builder for the mount (viewset.c table).
 * PLACEHOLDER until the NIL codec lands: detects nothing.
 */
#ifndef LFS_NIL_VIEWS_H
#define LFS_NIL_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vlist.h"

/** Cheap header test: is this a NIL file we decode? */
bool nil_detect(const uint8_t *data, size_t n);

/** Decode and append every view of a NIL file to @p l. */
lfs_err nil_views(const uint8_t *data, size_t n, const lfs_view_opts *opts, lfs_vlist *l,
		   lfs_error *err);

#endif
