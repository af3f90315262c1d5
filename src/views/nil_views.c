/**
 * @file nil_views.c
 * PLACEHOLDER until the NIL codec lands (see nil_views.h).
 */
#include "nil_views.h"

bool nil_detect(const uint8_t *data, size_t n)
{
	(void)data;
	(void)n;
	return false;
}

lfs_err nil_views(const uint8_t *data, size_t n, const lfs_view_opts *opts, lfs_vlist *l,
		   lfs_error *err)
{
	(void)data;
	(void)n;
	(void)opts;
	(void)l;
	return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "NIL", "not implemented yet");
}
