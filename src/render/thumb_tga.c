/**
 * @file thumb_tga.c
 * TGA decoding for thumbnails through stb_image (Debian libstb-dev, header
 * <stb/stb_image.h>). This is the ONE translation unit that compiles the
 * stb_image implementation: static functions, TGA only, no stdio, no SIMD
 * dispatch, edges limited to 8192 (a hostile header cannot ask for more).
 */
#include "thumb.h"

#include <stdlib.h>
#include <string.h>

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_TGA
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#define STBI_MAX_DIMENSIONS 8192
#define STBI_NO_FAILURE_STRINGS

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#pragma GCC diagnostic ignored "-Wtype-limits"
#pragma GCC diagnostic ignored "-Wdouble-promotion"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wcast-qual"
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
#include <stb/stb_image.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
/* STB_IMAGE_STATIC declares the unused API (zlib, gif, ...) static; the
 * "declared static but never defined" warnings come at the end of the file */
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

bool lfs_thumb_decode_tga(const uint8_t *data, size_t n, uint8_t **rgba, uint32_t *w, uint32_t *h)
{
	*rgba = NULL;
	*w = *h = 0;
	if (!data || n < 18 || n > (size_t)INT32_MAX)
		return false;
	/* textures the fs lookup may hand over that are not TGA */
	if (!memcmp(data, "DDS ", 4) || !memcmp(data, "PLT V1", n < 6 ? n : 6))
		return false;
	int x = 0, y = 0, comp = 0;
	stbi_uc *p = stbi_load_from_memory(data, (int)n, &x, &y, &comp, 4);
	if (!p)
		return false;
	if (x <= 0 || y <= 0) {
		stbi_image_free(p);
		return false;
	}
	size_t sz = (size_t)x * (size_t)y * 4;
	uint8_t *o = malloc(sz);
	if (!o) {
		stbi_image_free(p);
		return false;
	}
	memcpy(o, p, sz);
	stbi_image_free(p);
	*rgba = o;
	*w = (uint32_t)x;
	*h = (uint32_t)y;
	return true;
}
