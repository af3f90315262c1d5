/**
 * @file nad_views.c
 * PLACEHOLDER until the NAD codec lands (see nad_views.h).
 */
#include "nad_views.h"

bool nad_detect(const uint8_t *data, size_t n)
{
	(void)data;
	(void)n;
	return false;
}

lfs_err nad_views(const uint8_t *data, size_t n, const lfs_view_opts *opts, lfs_vlist *l,
		   lfs_error *err)
{
	(void)data;
	(void)n;
	(void)opts;
	(void)l;
	return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "NAD", "not implemented yet");
}
