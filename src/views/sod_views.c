/**
 * @file sod_views.c
 * PLACEHOLDER until the SOD codec lands (see sod_views.h).
 */
#include "sod_views.h"

bool sod_detect(const uint8_t *data, size_t n)
{
	(void)data;
	(void)n;
	return false;
}

lfs_err sod_views(const uint8_t *data, size_t n, const lfs_view_opts *opts, lfs_vlist *l,
		   lfs_error *err)
{
	(void)data;
	(void)n;
	(void)opts;
	(void)l;
	return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "SOD", "not implemented yet");
}
