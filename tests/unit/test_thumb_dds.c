/**
 * @file test_thumb_dds.c
 * DDS decoding for thumbnails (src/render/thumb_dds.c):
 *  - DXT blocks whose colours are computed by hand here: RGB565 endpoint
 *    widening, the 2/3–1/3 blends, DXT1's three-colour + transparent mode
 *    (and its absence in DXT3/DXT5 colour blocks), DXT3 explicit alpha,
 *    DXT5 alpha in its 8-value and 6-value modes;
 *  - whole files: BioWare's 20-byte header (DXT1, DXT5) and standard DDS
 *    (DXT1, DXT5, DX10 BC1, uncompressed BGRA / RGB / luminance), with the
 *    row order (stored bottom row first) and partial edge blocks;
 *  - sizes: truncated by one byte, zero and over-8192 edges, unknown formats;
 *  - corpus: every .dds under nwn/tree decodes; truncated and bit-flipped
 *    copies never crash (run under ASan in CI); row order: rollnw's
 *    textures exist both as TGA and as BioWare DDS, and the decoded DDS
 *    matches the TGA (top row first) better than its mirror image does.
 */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "corpus.h"
#include "testrng.h"
#include "render/thumb.h"

static lfs_rng g_rng;

static void px_eq(const uint8_t *p, unsigned r, unsigned g, unsigned b, unsigned a)
{
	assert_int_equal(p[0], r);
	assert_int_equal(p[1], g);
	assert_int_equal(p[2], b);
	assert_int_equal(p[3], a);
}

/* index i in texel i & 3: 0b11100100 per row */
static const uint8_t idx0123[4] = { 0xE4, 0xE4, 0xE4, 0xE4 };

static void block(uint8_t b[8], uint16_t c0, uint16_t c1, const uint8_t idx[4])
{
	b[0] = (uint8_t)c0;
	b[1] = (uint8_t)(c0 >> 8);
	b[2] = (uint8_t)c1;
	b[3] = (uint8_t)(c1 >> 8);
	memcpy(b + 4, idx, 4);
}

static void test_dxt1_four_colour(void **state)
{
	(void)state;
	uint8_t b[8], out[16][4];
	/* red 0xF800 > blue 0x001F: four-colour mode */
	block(b, 0xF800, 0x001F, idx0123);
	lfs_dxt_color_block(b, true, out);
	for (int row = 0; row < 4; row++) {
		px_eq(out[row * 4 + 0], 255, 0, 0, 255);
		px_eq(out[row * 4 + 1], 0, 0, 255, 255);
		px_eq(out[row * 4 + 2], 170, 0, 85, 255); /* (2·255 + 0) / 3, (0 + 255) / 3 */
		px_eq(out[row * 4 + 3], 85, 0, 170, 255);
	}
	/* r=16 g=32 b=8 widen by replication: 16<<3|16>>2 = 132, 32<<2|32>>4 = 130, 8<<3|8>>2 = 66 */
	block(b, (uint16_t)(16 << 11 | 32 << 5 | 8), 0x0000, idx0123);
	lfs_dxt_color_block(b, true, out);
	px_eq(out[0], 132, 130, 66, 255);
	px_eq(out[1], 0, 0, 0, 255);
	px_eq(out[2], 88, 86, 44, 255); /* 264/3, 260/3, 132/3 */
	px_eq(out[3], 44, 43, 22, 255); /* 132/3, 130/3, 66/3 */
	/* 31 and 63 widen to 255: white */
	block(b, 0xFFFF, 0x0000, (const uint8_t[4]){ 0, 0, 0, 0 });
	lfs_dxt_color_block(b, true, out);
	for (int i = 0; i < 16; i++)
		px_eq(out[i], 255, 255, 255, 255);
}

static void test_dxt1_three_colour(void **state)
{
	(void)state;
	uint8_t b[8], out[16][4];
	/* blue 0x001F <= red 0xF800: three colours + transparent black */
	block(b, 0x001F, 0xF800, idx0123);
	lfs_dxt_color_block(b, true, out);
	px_eq(out[0], 0, 0, 255, 255);
	px_eq(out[1], 255, 0, 0, 255);
	px_eq(out[2], 127, 0, 127, 255); /* (0 + 255) / 2 */
	px_eq(out[3], 0, 0, 0, 0);
	/* equal endpoints are the three-colour mode too */
	block(b, 0x07E0, 0x07E0, idx0123);
	lfs_dxt_color_block(b, true, out);
	px_eq(out[2], 0, 255, 0, 255);
	px_eq(out[3], 0, 0, 0, 0);
	/* DXT3/DXT5 colour blocks never use it */
	block(b, 0x001F, 0xF800, idx0123);
	lfs_dxt_color_block(b, false, out);
	px_eq(out[2], 85, 0, 170, 255); /* (2·0 + 255) / 3, (2·255 + 0) / 3 */
	px_eq(out[3], 170, 0, 85, 255);
}

static void test_dxt3_alpha(void **state)
{
	(void)state;
	uint8_t b[8] = { 0x10, 0xF2, 0x00, 0x00, 0x00, 0x00, 0x00, 0x87 }, a[16];
	lfs_dxt3_alpha_block(b, a);
	assert_int_equal(a[0], 0);
	assert_int_equal(a[1], 17);
	assert_int_equal(a[2], 34);
	assert_int_equal(a[3], 255);
	assert_int_equal(a[4], 0);
	assert_int_equal(a[14], 7 * 17);
	assert_int_equal(a[15], 8 * 17);
}

/* 3-bit indices 0..7 for texels 0..7 and again for 8..15 */
static const uint8_t idx3[6] = { 0x88, 0xC6, 0xFA, 0x88, 0xC6, 0xFA };

static void test_dxt5_alpha(void **state)
{
	(void)state;
	uint8_t b[8], a[16];
	/* a0 > a1: eight values, (7−i)/7·a0 + i/7·a1 rounded down */
	b[0] = 255;
	b[1] = 0;
	memcpy(b + 2, idx3, 6);
	lfs_dxt5_alpha_block(b, a);
	const uint8_t e8[8] = { 255, 0, 218, 182, 145, 109, 72, 36 };
	for (int i = 0; i < 16; i++)
		assert_int_equal(a[i], e8[i & 7]);
	/* a0 <= a1: six values (fifths), then 0 and 255 */
	b[0] = 100;
	b[1] = 200;
	lfs_dxt5_alpha_block(b, a);
	const uint8_t e6[8] = { 100, 200, 120, 140, 160, 180, 0, 255 };
	for (int i = 0; i < 16; i++)
		assert_int_equal(a[i], e6[i & 7]);
	b[0] = 0;
	b[1] = 255;
	lfs_dxt5_alpha_block(b, a);
	const uint8_t e6b[8] = { 0, 255, 51, 102, 153, 204, 0, 255 };
	for (int i = 0; i < 16; i++)
		assert_int_equal(a[i], e6b[i & 7]);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* BioWare header: w, h, channels, top-level bytes, alpha mean 1.0 */
static size_t bw_header(uint8_t *d, uint32_t w, uint32_t h, uint32_t ch, uint32_t bytes)
{
	put32(d, w);
	put32(d + 4, h);
	put32(d + 8, ch);
	put32(d + 12, bytes);
	put32(d + 16, 0x3f800000u);
	return 20;
}

static void test_bioware_files(void **state)
{
	(void)state;
	uint8_t d[64] = { 0 }, *rgba;
	uint32_t w, h;
	/* 4×4 DXT1: first stored row red, the others blue */
	size_t o = bw_header(d, 4, 4, 3, 8);
	block(d + o, 0xF800, 0x001F, (const uint8_t[4]){ 0x00, 0x55, 0x55, 0x55 });
	assert_true(lfs_thumb_decode_dds(d, o + 8, &rgba, &w, &h));
	assert_int_equal(w, 4);
	assert_int_equal(h, 4);
	/* stored bottom row first: the red row is the last one out */
	for (int x = 0; x < 4; x++) {
		px_eq(rgba + (3 * 4 + x) * 4, 255, 0, 0, 255);
		px_eq(rgba + (0 * 4 + x) * 4, 0, 0, 255, 255);
	}
	free(rgba);
	/* the generic entry point takes it (not a TGA) */
	assert_true(lfs_thumb_decode_texture(d, o + 8, &rgba, &w, &h));
	free(rgba);
	/* one byte short */
	assert_false(lfs_thumb_decode_dds(d, o + 7, &rgba, &w, &h));
	assert_null(rgba);
	/* 4 channels: DXT5, 16 bytes per block: alpha 255/0 blend, white colour */
	memset(d, 0, sizeof(d));
	o = bw_header(d, 4, 4, 4, 16);
	d[o] = 255;
	d[o + 1] = 0;
	memcpy(d + o + 2, idx3, 6);
	block(d + o + 8, 0xFFFF, 0xFFFF, (const uint8_t[4]){ 0, 0, 0, 0 });
	assert_true(lfs_thumb_decode_dds(d, o + 16, &rgba, &w, &h));
	/* texel 2 of the first stored row → output row 3, column 2: alpha 218 */
	px_eq(rgba + (3 * 4 + 2) * 4, 255, 255, 255, 218);
	/* texel 9 (stored row 2, column 1) → output row 1: index 1 → alpha 0 */
	px_eq(rgba + (1 * 4 + 1) * 4, 255, 255, 255, 0);
	free(rgba);
	/* 6×2: two blocks across, partial; the texels beyond the edge are dropped */
	memset(d, 0, sizeof(d));
	o = bw_header(d, 6, 2, 3, 16);
	block(d + o, 0xF800, 0xF800, (const uint8_t[4]){ 0, 0, 0, 0 });
	block(d + o + 8, 0x07E0, 0x07E0, (const uint8_t[4]){ 0, 0, 0, 0 });
	assert_true(lfs_thumb_decode_dds(d, o + 16, &rgba, &w, &h));
	assert_int_equal(w, 6);
	assert_int_equal(h, 2);
	px_eq(rgba + 3 * 4, 255, 0, 0, 255);
	px_eq(rgba + 4 * 4, 0, 255, 0, 255);
	px_eq(rgba + (6 + 5) * 4, 0, 255, 0, 255);
	free(rgba);
	assert_false(lfs_thumb_decode_dds(d, o + 15, &rgba, &w, &h));
	/* bad channel counts and edges */
	bw_header(d, 4, 4, 5, 8);
	assert_false(lfs_thumb_decode_dds(d, 64, &rgba, &w, &h));
	bw_header(d, 0, 4, 3, 8);
	assert_false(lfs_thumb_decode_dds(d, 64, &rgba, &w, &h));
	bw_header(d, 8193, 4, 3, 8);
	assert_false(lfs_thumb_decode_dds(d, 64, &rgba, &w, &h));
	bw_header(d, 0xFFFFFFFFu, 0xFFFFFFFFu, 4, 8);
	assert_false(lfs_thumb_decode_dds(d, 64, &rgba, &w, &h));
	assert_false(lfs_thumb_decode_dds(d, 19, &rgba, &w, &h));
	/* PLT is not decoded */
	assert_false(lfs_thumb_decode_texture((const uint8_t *)"PLT V1  \0\0\0\0\0\0\0\0\0\0\0\0", 20,
					      &rgba, &w, &h));
}

/* A standard DDS header for w×h with the pixel-format flags/fourcc/bpp/masks given. */
static void std_header(uint8_t *d, uint32_t w, uint32_t h, uint32_t pfflags, const char *cc,
		       uint32_t bpp, uint32_t rm, uint32_t gm, uint32_t bm, uint32_t am)
{
	memset(d, 0, 128);
	memcpy(d, "DDS ", 4);
	put32(d + 4, 124);
	put32(d + 8, 0x1007);
	put32(d + 12, h);
	put32(d + 16, w);
	put32(d + 76, 32);
	put32(d + 80, pfflags);
	if (cc)
		memcpy(d + 84, cc, 4);
	put32(d + 88, bpp);
	put32(d + 92, rm);
	put32(d + 96, gm);
	put32(d + 100, bm);
	put32(d + 104, am);
}

static void test_standard_files(void **state)
{
	(void)state;
	uint8_t d[256], *rgba;
	uint32_t w, h;
	/* DXT1 4×4 */
	std_header(d, 4, 4, 0x4, "DXT1", 0, 0, 0, 0, 0);
	block(d + 128, 0x001F, 0xF800, idx0123);
	assert_true(lfs_thumb_decode_texture(d, 136, &rgba, &w, &h));
	px_eq(rgba + 3 * 4, 0, 0, 0, 0); /* three-colour mode: transparent */
	px_eq(rgba + 2 * 4, 127, 0, 127, 255);
	free(rgba);
	assert_false(lfs_thumb_decode_dds(d, 135, &rgba, &w, &h));
	/* DXT5 */
	std_header(d, 4, 4, 0x4, "DXT5", 0, 0, 0, 0, 0);
	d[128] = 0;
	d[129] = 255;
	memcpy(d + 130, idx3, 6);
	block(d + 136, 0xF800, 0xF800, (const uint8_t[4]){ 0, 0, 0, 0 });
	assert_true(lfs_thumb_decode_dds(d, 144, &rgba, &w, &h));
	px_eq(rgba + (3 * 4 + 2) * 4, 255, 0, 0, 51);
	free(rgba);
	/* DX10 BC1 (dxgi 71) */
	std_header(d, 4, 4, 0x4, "DX10", 0, 0, 0, 0, 0);
	memset(d + 128, 0, 20);
	put32(d + 128, 71);
	block(d + 148, 0x07E0, 0x07E0, (const uint8_t[4]){ 0, 0, 0, 0 });
	assert_true(lfs_thumb_decode_dds(d, 156, &rgba, &w, &h));
	px_eq(rgba, 0, 255, 0, 255);
	free(rgba);
	put32(d + 128, 98); /* BC7: not decoded */
	assert_false(lfs_thumb_decode_dds(d, 256, &rgba, &w, &h));
	assert_false(lfs_thumb_decode_dds(d, 147, &rgba, &w, &h));
	/* uncompressed BGRA 2×1 with alpha */
	std_header(d, 2, 1, 0x41, NULL, 32, 0xff0000u, 0xff00u, 0xffu, 0xff000000u);
	const uint8_t bgra[8] = { 10, 20, 30, 40, 50, 60, 70, 80 };
	memcpy(d + 128, bgra, 8);
	assert_true(lfs_thumb_decode_dds(d, 136, &rgba, &w, &h));
	px_eq(rgba, 30, 20, 10, 40);
	px_eq(rgba + 4, 70, 60, 50, 80);
	free(rgba);
	/* the same without DDPF_ALPHAPIXELS: opaque */
	put32(d + 80, 0x40);
	assert_true(lfs_thumb_decode_dds(d, 136, &rgba, &w, &h));
	px_eq(rgba, 30, 20, 10, 255);
	free(rgba);
	/* RGB 565 in 16 bits: 31 → 255, 63 → 255, 0 */
	std_header(d, 1, 2, 0x40, NULL, 16, 0xF800u, 0x07E0u, 0x001Fu, 0);
	d[128] = 0x1F; /* blue, stored first → bottom row */
	d[129] = 0x00;
	d[130] = 0x00;
	d[131] = 0xF8; /* red */
	assert_true(lfs_thumb_decode_dds(d, 132, &rgba, &w, &h));
	px_eq(rgba, 255, 0, 0, 255);
	px_eq(rgba + 4, 0, 0, 255, 255);
	free(rgba);
	/* 8-bit luminance */
	std_header(d, 1, 1, 0x20000, NULL, 8, 0xffu, 0, 0, 0);
	d[128] = 77;
	assert_true(lfs_thumb_decode_dds(d, 129, &rgba, &w, &h));
	px_eq(rgba, 77, 77, 77, 255);
	free(rgba);
	/* masks wider than the pixel, odd bit counts, bad header sizes */
	std_header(d, 1, 1, 0x40, NULL, 16, 0xff0000u, 0, 0, 0);
	assert_false(lfs_thumb_decode_dds(d, 256, &rgba, &w, &h));
	std_header(d, 1, 1, 0x40, NULL, 12, 0xfu, 0, 0, 0);
	assert_false(lfs_thumb_decode_dds(d, 256, &rgba, &w, &h));
	std_header(d, 4, 4, 0x4, "DXT1", 0, 0, 0, 0, 0);
	put32(d + 4, 123);
	assert_false(lfs_thumb_decode_dds(d, 256, &rgba, &w, &h));
	std_header(d, 4, 4, 0x4, "ATI2", 0, 0, 0, 0, 0);
	assert_false(lfs_thumb_decode_dds(d, 256, &rgba, &w, &h));
	std_header(d, 9000, 4, 0x4, "DXT1", 0, 0, 0, 0, 0);
	assert_false(lfs_thumb_decode_dds(d, 256, &rgba, &w, &h));
}

/* ---- corpus ---------------------------------------------------------------- */

static char **g_dds;
static size_t g_ndds, g_capdds;

static int collect(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)f;
	size_t n = strlen(p);
	if (flag == FTW_F && S_ISREG(st->st_mode) && n > 4 && !strcasecmp(p + n - 4, ".dds")) {
		if (g_ndds == g_capdds) {
			g_capdds = g_capdds ? 2 * g_capdds : 32;
			g_dds = realloc(g_dds, g_capdds * sizeof(*g_dds));
			assert_non_null(g_dds);
		}
		g_dds[g_ndds++] = strdup(p);
	}
	return 0;
}

static void test_corpus(void **state)
{
	(void)state;
	const char *c = getenv("LFS_CORPUS");
	struct stat st;
	if (!c || stat(c, &st) != 0 || !S_ISDIR(st.st_mode))
		LFS_SKIP("no corpus folder (LFS_CORPUS)");
	char root[4096];
	lfs_path(root, sizeof(root), "%s/nwn/tree", c);
	nftw(root, collect, 16, FTW_PHYS);
	if (!g_ndds)
		LFS_SKIP("no .dds file under the corpus nwn/tree");
	size_t bioware = 0, standard = 0;
	for (size_t i = 0; i < g_ndds; i++) {
		size_t n;
		uint8_t *d = lfs_read_file(g_dds[i], &n), *rgba;
		assert_non_null(d);
		uint32_t w, h;
		if (!lfs_thumb_decode_texture(d, n, &rgba, &w, &h))
			fail_msg("%s: not decoded", g_dds[i]);
		(n >= 4 && !memcmp(d, "DDS ", 4)) ? standard++ : bioware++;
		/* a real texture is not one flat colour */
		size_t differ = 0;
		for (size_t k = 1; k < (size_t)w * h; k++)
			differ += memcmp(rgba, rgba + k * 4, 3) != 0;
		if (!strstr(g_dds[i], "black.dds"))
			assert_true(differ > 0);
		free(rgba);
		/* hostile copies: truncated, then bit-flipped (header-heavy) */
		uint8_t *m = malloc(n);
		for (int it = 0; it < 40; it++) {
			memcpy(m, d, n);
			size_t len = it < 20 ? n * (size_t)it / 20 : n;
			if (it >= 20)
				lfs_rng_mutate(&g_rng, m, n, 4, 160, it & 1);
			if (lfs_thumb_decode_texture(m, len, &rgba, &w, &h)) {
				assert_true(w > 0 && h > 0 && w <= 8192 && h <= 8192);
				free(rgba);
			}
		}
		free(m);
		free(d);
		free(g_dds[i]);
	}
	free(g_dds);
	print_message("corpus: %zu DDS decoded (%zu BioWare, %zu standard)\n", g_ndds, bioware,
		      standard);
	assert_true(bioware > 0);
}

/* Mean absolute RGB difference of TGA @p t and DDS @p d sampled at the TGA's size. */
static double diff(const uint8_t *t, uint32_t tw, uint32_t th, const uint8_t *d, uint32_t dw,
		   uint32_t dh, bool mirror)
{
	double sum = 0;
	for (uint32_t y = 0; y < th; y++)
		for (uint32_t x = 0; x < tw; x++) {
			uint32_t X = x * dw / tw, Y = (mirror ? th - 1 - y : y) * dh / th;
			for (int k = 0; k < 3; k++)
				sum += abs((int)t[(y * tw + x) * 4 + k] - (int)d[(Y * dw + X) * 4 + k]);
		}
	return sum / ((double)tw * th * 3);
}

static void test_corpus_row_order(void **state)
{
	(void)state;
	const char *c = getenv("LFS_CORPUS");
	struct stat st;
	if (!c || stat(c, &st) != 0 || !S_ISDIR(st.st_mode))
		LFS_SKIP("no corpus folder (LFS_CORPUS)");
	static const char *const names[] = { "c_aribeth", "c_drgshad_bod", "c_drgshad_wing",
					     "ttd01_cliff01" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char pt[4096], pd[4096];
		lfs_path(pt, sizeof(pt), "%s/nwn/tree/rollnw/tests/test_data/renderer/nwn_dump_user/"
			 "development/tga/%s.tga", c, names[i]);
		lfs_path(pd, sizeof(pd), "%s/nwn/tree/rollnw/tests/test_data/renderer/nwn_dump_user/"
			 "development/dds/%s.dds", c, names[i]);
		size_t nt, nd;
		uint8_t *t = lfs_read_file(pt, &nt), *d = lfs_read_file(pd, &nd), *rt, *rd;
		if (!t || !d) {
			free(t);
			free(d);
			LFS_SKIP(names[i]);
		}
		uint32_t tw, th, dw, dh;
		assert_true(lfs_thumb_decode_tga(t, nt, &rt, &tw, &th));
		assert_true(lfs_thumb_decode_dds(d, nd, &rd, &dw, &dh));
		double as_is = diff(rt, tw, th, rd, dw, dh, false), mirrored = diff(rt, tw, th, rd, dw, dh, true);
		print_message("%s: TGA %ux%u, DDS %ux%u: mean difference %.1f, mirrored %.1f\n", names[i],
			      tw, th, dw, dh, as_is, mirrored);
		assert_true(as_is < mirrored);
		free(rt);
		free(rd);
		free(t);
		free(d);
	}
}

int main(void)
{
	lfs_rng_seed(&g_rng, "thumb_dds", 0xD5D5D5D5ull);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dxt1_four_colour), cmocka_unit_test(test_dxt1_three_colour),
		cmocka_unit_test(test_dxt3_alpha),	 cmocka_unit_test(test_dxt5_alpha),
		cmocka_unit_test(test_bioware_files),	 cmocka_unit_test(test_standard_files),
		cmocka_unit_test(test_corpus),		 cmocka_unit_test(test_corpus_row_order),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
