/**
 * @file nod_views.c
 * PLACEHOLDER until the NOD codec lands (see nod_views.h).
 */
#include "nod_views.h"

bool nod_detect(const uint8_t *data, size_t n)
{
	(void)data;
	(void)n;
	return false;
}

lfs_err nod_views(const uint8_t *data, size_t n, const lfs_view_opts *opts, lfs_vlist *l,
		   lfs_error *err)
{
	(void)data;
	(void)n;
	(void)opts;
	(void)l;
	return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "NOD", "not implemented yet");
}
