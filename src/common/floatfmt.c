/**
 * @file floatfmt.c
 * Shortest round-trip float32 formatting (see floatfmt.h).
 *
 * Method: binary search over the "%.<p>g" precision. If precision p reads
 * back exactly, every larger precision does too, so the predicate is monotonic
 * and the search finds the smallest p in at most 4 snprintf calls (p = 9 always
 * round-trips for IEEE binary32). Integers below 2^24 take a fast path.
 */
#include "floatfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t bits_of(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return u;
}

static bool reads_back(const char *buf, float f)
{
	float g = strtof(buf, NULL);
	return bits_of(g) == bits_of(f);
}

size_t lfs_fmt_float(char buf[LFS_FLOAT_BUFSZ], float f)
{
	if (isnan(f))
		return (size_t)snprintf(buf, LFS_FLOAT_BUFSZ, "nan");
	if (isinf(f))
		return (size_t)snprintf(buf, LFS_FLOAT_BUFSZ, f < 0 ? "-inf" : "inf");
	if (f == 0.0f)
		return (size_t)snprintf(buf, LFS_FLOAT_BUFSZ, signbit(f) ? "-0" : "0");
	if (fabsf(f) < 16777216.0f && f == (float)(int32_t)f)
		return (size_t)snprintf(buf, LFS_FLOAT_BUFSZ, "%d", (int)(int32_t)f);

	int lo = 1, hi = 9;
	char tmp[320]; /* %g of a float32 is at most ~16 chars; sized for -Wformat-truncation */
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		snprintf(tmp, sizeof(tmp), "%.*g", mid, (double)f);
		if (reads_back(tmp, f))
			hi = mid;
		else
			lo = mid + 1;
	}
	int len = snprintf(tmp, sizeof(tmp), "%.*g", lo, (double)f);
	if (len < 0 || len >= LFS_FLOAT_BUFSZ)
		len = 0;
	memcpy(buf, tmp, (size_t)len);
	buf[len] = '\0';
	return (size_t)len;
}

bool lfs_parse_float(const char *s, size_t len, float *out)
{
	char tmp[64];
	if (len == 0 || len >= sizeof(tmp))
		return false;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	char *end = NULL;
	float v = strtof(tmp, &end);
	if (end != tmp + len)
		return false;
	*out = v;
	return true;
}
