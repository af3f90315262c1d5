/**
 * @file nil_bench.c
 * NIL codec and view throughput on SYNTHETIC levels (not a test; no NIL file
 * is public, so the level is generated here in memory, never written).
 *
 * Usage: nil_bench [-n RUNS] [-s SECTORS] [-t TAIL_BYTES]
 *   Builds one level of SECTORS sectors (default 150, about the size [SDK]
 *   gives for a level: "about 100+ sectors"), each with 6 sector planes, 40
 *   surface planes, 60 BSP nodes, 300 vertices, 900 sector vertices and
 *   TAIL_BYTES (default 4096) of random undocumented bytes after them, then
 *   times RUNS passes (default 10) of
 *     decode   nil_decode + free (includes the sector search through every tail),
 *     encode   decode + nil_encode + free,
 *     views    lfs_views_build + free (model.txt, model.mtl, model.obj, sectors/),
 *     text     nil_text_parse of model.txt + free,
 *   and prints the median seconds per pass and MB/s of binary input
 *   (1 MB = 10^6 bytes). Results: docs/performance.md.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchlib.h"
#include "formats/nil/nil.h"
#include "testrng.h"
#include "formats/nil/nil_text.h"
#include "registry/viewset.h"

static lfs_rng g_rng; /* seeded in main() */

static uint32_t rnd(void)
{
	return lfs_rng_u32(&g_rng);
}

typedef struct buf {
	uint8_t *p;
	size_t n, cap;
} buf;

static void put(buf *b, const void *p, size_t n)
{
	while (b->n + n > b->cap) {
		b->cap = b->cap ? 2 * b->cap : 1 << 20;
		b->p = realloc(b->p, b->cap);
		if (!b->p) {
			perror("realloc");
			exit(1);
		}
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void u8(buf *b, uint8_t v) { put(b, &v, 1); }
static void u16(buf *b, uint16_t v) { uint8_t t[2] = { (uint8_t)v, (uint8_t)(v >> 8) }; put(b, t, 2); }
static void u32(buf *b, uint32_t v)
{
	uint8_t t[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	put(b, t, 4);
}
static void f32(buf *b, float f) { uint32_t u; memcpy(&u, &f, 4); u32(b, u); }
static float rf(float lo, float hi)
{
	return lfs_rng_float(&g_rng, lo, hi);
}

static void planes(buf *b, int n)
{
	for (int i = 0; i < n; i++) {
		int axis = (int)(rnd() % 3);
		for (int k = 0; k < 3; k++)
			f32(b, k == axis ? 1.0f : 0.0f);
		f32(b, rf(-1000, 1000));
	}
}

static void level(buf *b, int sectors, size_t tail)
{
	put(b, "NIL\x10", 4);
	u32(b, 27);
	for (int i = 0; i < 72; i++)
		u8(b, (uint8_t)rnd());
	for (int k = 0; k < 3; k++)
		f32(b, 0.25f);
	u32(b, 40);
	for (int i = 0; i < 40; i++) {
		char name[32] = { 0 };
		snprintf(name, sizeof(name), "London\\SBIwall%d_L", i);
		put(b, name, 32);
	}
	u32(b, (uint32_t)sectors);
	for (int s = 0; s < sectors; s++) {
		u32(b, (uint32_t)(rnd() % 4));
		for (int k = 0; k < 3; k++)
			f32(b, 0.2f);
		u8(b, 6);
		planes(b, 6);
		u16(b, 40);
		planes(b, 40);
		u16(b, 60);
		for (int i = 0; i < 240; i++)
			u16(b, (uint16_t)(rnd() % 8 ? rnd() % 60 : 0xFFFF));
		u16(b, 300);
		for (int i = 0; i < 900; i++)
			f32(b, rf(-2000, 2000));
		u16(b, 900);
		uint16_t base = (uint16_t)(rnd() % 40);
		for (int i = 0; i < 900; i++) {
			u16(b, (uint16_t)(rnd() % 300));
			u16(b, base);
			u8(b, 200);
			u8(b, 180);
			u8(b, 160);
			u8(b, 0xFF);
			for (int k = 0; k < 4; k++)
				f32(b, rf(-4, 4));
		}
		for (size_t i = 0; i < tail; i++)
			u8(b, (uint8_t)rnd());
	}
}

int main(int argc, char **argv)
{
	int runs = 10, sectors = 150;
	size_t tail = 4096;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-n"))
			runs = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-s"))
			sectors = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-t"))
			tail = (size_t)atol(argv[i + 1]);
	}
	if (runs < 1 || sectors < 1)
		return 2;
	lfs_rng_seed(&g_rng, "nil_bench", 88172645463325252ull);
	buf b = { 0 };
	level(&b, sectors, tail);
	lfs_error err;
	nil_model *m;
	if (nil_decode(b.p, b.n, &m, &err)) {
		fprintf(stderr, "decode: %s\n", err.msg);
		return 1;
	}
	printf("synthetic level: %zu bytes, %d sectors written, %u located\n", b.n, sectors,
	       (unsigned)m->n_decoded);
	lfs_sb txt = { 0 };
	nil_text_write(m, &txt, &err);
	nil_model_free(m);
	const char *names[] = { "decode", "encode", "views", "text" };
	double *t = calloc((size_t)runs, sizeof(*t));
	for (int what = 0; what < 4; what++) {
		for (int r = 0; r < runs; r++) {
			double t0 = bench_now();
			if (what == 3) {
				if (nil_text_parse(txt.data, txt.len, "model.txt", &m, &err))
					return 1;
				nil_model_free(m);
			} else if (what == 2) {
				lfs_viewset vs;
				if (lfs_views_build("bench.nil", b.p, b.n, NULL, &vs, &err))
					return 1;
				lfs_viewset_free(&vs);
			} else {
				if (nil_decode(b.p, b.n, &m, &err))
					return 1;
				if (what == 1) {
					uint8_t *o;
					size_t on;
					if (nil_encode(m, &o, &on, &err) || on != b.n || memcmp(o, b.p, on))
						return 1;
					free(o);
				}
				nil_model_free(m);
			}
			t[r] = bench_now() - t0;
		}
		double med = bench_median(t, runs);
		printf("%-7s median %.4f s  %.1f MB/s%s\n", names[what], med, b.n / med / 1e6,
		       what == 3 ? " (of binary size; model.txt is larger)" : "");
	}
	printf("model.txt: %zu bytes\n", txt.len);
	lfs_sb_free(&txt);
	free(t);
	free(b.p);
	return 0;
}
