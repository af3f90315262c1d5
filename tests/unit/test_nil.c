/**
 * @file test_nil.c
 * NIL v27 codec and views on files GENERATED here at run time (no NIL file
 * is public; none is committed).
 *
 * The test writer below builds NIL files straight from the layout
 * (src/formats/nil/nil.h, docs/formats/nil.md) with its own byte appends, not
 * through nil_encode(), and records where it put every structure. Checks:
 *  - decode finds every sector where the writer put it, every field equals
 *    the bytes at the recorded offsets, and encode gives the file back;
 *  - model.txt -> parse -> encode gives the file back (and -> text the text);
 *  - the OBJ views hold the vertices and the strip triangles the writer's
 *    own index lists imply;
 *  - recognition is strict: random bytes and broken headers are not NIL;
 *  - hostile input: truncation at 64 spread lengths and 1000 random byte
 *    flips per generated file decode (then re-encode identically) or fail
 *    cleanly; mutated model.txt parses or fails with model.txt:line:col;
 *  - parser error messages, exact.
 * Deterministic: the fixed-seed generator of testrng.h (LFS_TEST_SEED replays
 * another run, LFS_FUZZ_FLIPS changes the flip count).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "corpus.h"
#include "formats/nil/nil.h"
#include "formats/nil/nil_text.h"
#include "formats/nil/nil_views.h"
#include "registry/viewset.h"

/* ---- PRNG ---------------------------------------------------------------- */

static lfs_rng g_rng; /* seeded in main() */

static uint32_t rnd_below(uint32_t n)
{
	return (uint32_t)lfs_rng_below(&g_rng, n);
}

LFS_CODEC(k_nil, "nil", nil_model, nil_decode, nil_encode, nil_model_free);

/* ---- test writer --------------------------------------------------------- */

typedef struct buf {
	uint8_t *p;
	size_t n, cap;
} buf;

static void put(buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		while (b->n + n > b->cap)
			b->cap = b->cap ? 2 * b->cap : 4096;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void put8(buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put16(buf *b, uint16_t v)
{
	uint8_t t[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	put(b, t, 2);
}

static void put32(buf *b, uint32_t v)
{
	uint8_t t[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	put(b, t, 4);
}

static void putbits(buf *b, uint32_t bits)
{
	put32(b, bits);
}

static void putf(buf *b, float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	put32(b, u);
}

/** Where the writer put one sector (offsets into the file). */
typedef struct exp_sector {
	size_t off, planes, surf, bsp, verts, wedges, end, tail_end;
	uint8_t np;
	uint16_t nsurf, nbsp, nv, nw;
	bool locatable;
} exp_sector;

typedef struct gcfg {
	uint32_t n_mat;
	uint32_t declared;    /* NumSectors */
	uint32_t written;     /* sectors actually written */
	int empty_at;         /* written with no wedges (cannot be located), -1 none */
	size_t tail_max;      /* each tail 0..tail_max random bytes */
	int tail_fill;        /* 0 random, 1 zero, 2 0xFF, 3 0xCD */
	size_t trailer;       /* bytes after the header when written == 0 */
	bool big;             /* 255 sector planes, hundreds of surface planes/BSP nodes */
	bool weird_floats;    /* NaN payloads, -0, inf in header ambient and sector 0 */
	bool bad_sector0;     /* sector 0 wedges with alpha != 0xFF, indices out of range */
	uint16_t max_wedges;
} gcfg;

typedef struct gfile {
	buf b;
	exp_sector *sec;
	uint32_t n_sec;
	size_t sectors_off; /* offset of sector 0 (or of the trailer) */
} gfile;

static const char *const k_names[] = {
	"London\\SBIwall1_2_L",
	"New_York\\SWfloor1_2_NY",
	"ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", /* exactly 32 bytes: no NUL */
	"",
	"with space",
	"quote\"and\\back",
	"#hash",
	"\xe9t\xe9 caf\xe9",
	"tab\there",
};
#define N_NAMES (sizeof(k_names) / sizeof(k_names[0]))

static void fill(buf *b, size_t n, int kind)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t v = kind == 1	? 0
			    : kind == 2 ? 0xFF
			    : kind == 3 ? 0xCD
					: (uint8_t)lfs_rng_u64(&g_rng);
		put8(b, v);
	}
}

static void put_planes(buf *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		float x = lfs_rng_float(&g_rng, -1, 1), y = lfs_rng_float(&g_rng, -1, 1),
		      z = lfs_rng_float(&g_rng, -1, 1);
		float l = sqrtf(x * x + y * y + z * z);
		if (l == 0)
			l = 1;
		putf(b, x / l);
		putf(b, y / l);
		putf(b, z / l);
		putf(b, lfs_rng_float(&g_rng, -500, 500));
	}
}

static const uint32_t k_weird[] = { 0x7FC00000u, 0x7FC00001u, 0xFFC00000u, 0x7F800001u,
				    0x80000000u, 0x7F800000u, 0xFF800000u, 0x00000001u };

static void gen(const gcfg *c, gfile *g)
{
	memset(g, 0, sizeof(*g));
	buf *b = &g->b;
	put(b, "NIL\x10", 4);
	put32(b, 27);
	fill(b, 72, 0); /* GlobalLight: opaque */
	if (c->weird_floats) {
		putbits(b, k_weird[1]);
		putbits(b, k_weird[2]);
		putbits(b, k_weird[4]);
	} else {
		for (int k = 0; k < 3; k++)
			putf(b, lfs_rng_float(&g_rng, 0, 1));
	}
	put32(b, c->n_mat);
	for (uint32_t i = 0; i < c->n_mat; i++) {
		uint8_t raw[32];
		memset(raw, 0, sizeof(raw));
		const char *nm = k_names[i % N_NAMES];
		size_t len = strlen(nm);
		memcpy(raw, nm, len < 32 ? len : 32);
		if (i % 3 == 2 && len < 31) /* MSVC-style garbage after the NUL */
			memset(raw + len + 1, 0xCD, 31 - len);
		put(b, raw, 32);
	}
	put32(b, c->declared);
	g->sectors_off = b->n;
	g->sec = calloc(c->written ? c->written : 1, sizeof(exp_sector));
	g->n_sec = c->written;
	for (uint32_t s = 0; s < c->written; s++) {
		exp_sector *e = &g->sec[s];
		e->off = b->n;
		put32(b, (uint32_t)lfs_rng_u64(&g_rng));
		for (int k = 0; k < 3; k++) {
			if (s == 0 && c->weird_floats)
				putbits(b, k_weird[(size_t)k + 5]);
			else
				putf(b, lfs_rng_float(&g_rng, 0, 1));
		}
		e->np = c->big && s == 0 ? 255 : (uint8_t)rnd_below(7);
		put8(b, e->np);
		e->planes = b->n;
		put_planes(b, e->np);
		e->nsurf = (uint16_t)(c->big ? 300 + rnd_below(200) : rnd_below(12));
		put16(b, e->nsurf);
		e->surf = b->n;
		put_planes(b, e->nsurf);
		e->nbsp = (uint16_t)(c->big ? 500 + rnd_below(500) : rnd_below(10));
		put16(b, e->nbsp);
		e->bsp = b->n;
		for (size_t i = 0; i < 4 * (size_t)e->nbsp; i++)
			put16(b, (uint16_t)(rnd_below(3) ? rnd_below(64) : 0xFFFF));
		bool empty = (int)s == c->empty_at;
		e->nv = (uint16_t)(empty ? rnd_below(3) : 3 + rnd_below(40));
		put16(b, e->nv);
		e->verts = b->n;
		for (size_t i = 0; i < 3 * (size_t)e->nv; i++) {
			if (s == 0 && c->weird_floats && i < 8)
				putbits(b, k_weird[i]);
			else
				putf(b, lfs_rng_float(&g_rng, -1000, 1000));
		}
		e->nw = (uint16_t)(empty ? 0 : 3 + rnd_below(c->max_wedges ? c->max_wedges : 60));
		put16(b, e->nw);
		e->wedges = b->n;
		uint16_t base = (uint16_t)rnd_below(c->n_mat + 2);
		uint16_t prev = 0;
		for (size_t i = 0; i < e->nw; i++) {
			uint16_t vi = (uint16_t)rnd_below(e->nv);
			if (i && rnd_below(8) == 0)
				vi = prev; /* strip restart */
			if (s == 0 && c->bad_sector0 && i % 5 == 1)
				vi = (uint16_t)(e->nv + rnd_below(100));
			prev = vi;
			put16(b, vi);
			put16(b, base);
			put8(b, (uint8_t)lfs_rng_u64(&g_rng));
			put8(b, (uint8_t)lfs_rng_u64(&g_rng));
			put8(b, (uint8_t)lfs_rng_u64(&g_rng));
			put8(b, s == 0 && c->bad_sector0 ? (uint8_t)rnd_below(255) : 0xFF);
			for (int k = 0; k < 2; k++)
				putf(b, lfs_rng_float(&g_rng, -50, 50));
			for (int k = 0; k < 2; k++)
				putf(b, lfs_rng_float(&g_rng, 0, 1));
		}
		e->end = b->n;
		e->locatable = s == 0 || !empty;
		fill(b, c->tail_max ? rnd_below((uint32_t)c->tail_max + 1) : 0, c->tail_fill);
		e->tail_end = b->n;
	}
	if (!c->written)
		fill(b, c->trailer, 0);
}

static void gfree(gfile *g)
{
	free(g->b.p);
	free(g->sec);
}

/* ---- independent reads of the generated bytes ----------------------------- */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t fbits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static void check_planes(const uint8_t *d, size_t off, const nil_plane *pl, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < 3; k++)
			assert_int_equal(fbits(pl[i].n[k]), le32(d + off + 16 * i + 4 * (size_t)k));
		assert_int_equal(fbits(pl[i].d), le32(d + off + 16 * i + 12));
	}
}

/* Sectors the decoder must find: every locatable one; an unlocatable one's
 * bytes join the previous sector's tail. Fills @p idx with their indices. */
static uint32_t expected_sectors(const gcfg *c, const gfile *g, uint32_t *idx)
{
	uint32_t k = 0;
	for (uint32_t s = 0; s < g->n_sec && k < c->declared; s++)
		if (g->sec[s].locatable)
			idx[k++] = s;
	return k;
}

static void check_model(const gcfg *c, const gfile *g, const nil_model *m)
{
	const uint8_t *d = g->b.p;
	assert_memory_equal(m->magic, "NIL\x10", 4);
	assert_int_equal(m->version, 27);
	assert_memory_equal(m->light, d + 8, 72);
	for (int k = 0; k < 3; k++)
		assert_int_equal(fbits(m->ambient[k]), le32(d + 0x50 + 4 * k));
	assert_int_equal(m->n_materials, c->n_mat);
	for (uint32_t i = 0; i < c->n_mat; i++)
		assert_memory_equal(m->materials[i], d + 0x60 + 32 * (size_t)i, 32);
	assert_int_equal(m->n_sectors, c->declared);
	uint32_t *idx = calloc(g->n_sec + 1, sizeof(*idx));
	uint32_t ne = expected_sectors(c, g, idx);
	if (m->n_decoded != ne)
		fail_msg("%u sectors decoded, %u expected (declared %u, written %u); last decoded at %zu",
			 (unsigned)m->n_decoded, (unsigned)ne, (unsigned)c->declared,
			 (unsigned)c->written, m->n_decoded ? m->sectors[m->n_decoded - 1].offset : 0);
	for (uint32_t k = 0; k < ne; k++) {
		const exp_sector *e = &g->sec[idx[k]];
		const nil_sector *s = &m->sectors[k];
		assert_int_equal(s->offset, e->off);
		assert_int_equal(s->flags, le32(d + e->off));
		for (int j = 0; j < 3; j++)
			assert_int_equal(fbits(s->ambient[j]), le32(d + e->off + 4 + 4 * j));
		assert_int_equal(s->n_sector_planes, e->np);
		assert_int_equal(s->n_surface_planes, e->nsurf);
		assert_int_equal(s->n_bsp, e->nbsp);
		assert_int_equal(s->n_vertices, e->nv);
		assert_int_equal(s->n_wedges, e->nw);
		check_planes(d, e->planes, s->sector_planes, e->np);
		check_planes(d, e->surf, s->surface_planes, e->nsurf);
		for (size_t i = 0; i < e->nbsp; i++)
			for (int j = 0; j < 4; j++)
				assert_int_equal(s->bsp[i].w[j], le16(d + e->bsp + 8 * i + 2 * (size_t)j));
		for (size_t i = 0; i < 3 * (size_t)e->nv; i++)
			assert_int_equal(fbits(s->vertices[i]), le32(d + e->verts + 4 * i));
		for (size_t i = 0; i < e->nw; i++) {
			const uint8_t *w = d + e->wedges + 24 * i;
			assert_int_equal(s->wedges[i].vertex, le16(w));
			assert_int_equal(s->wedges[i].base, le16(w + 2));
			assert_memory_equal(s->wedges[i].rgba, w + 4, 4);
			assert_int_equal(fbits(s->wedges[i].uv[0]), le32(w + 8));
			assert_int_equal(fbits(s->wedges[i].uv[1]), le32(w + 12));
			assert_int_equal(fbits(s->wedges[i].lm[0]), le32(w + 16));
			assert_int_equal(fbits(s->wedges[i].lm[1]), le32(w + 20));
		}
		/* the tail runs to the next located sector, or to the end of file */
		size_t tail_end = k + 1 < ne ? g->sec[idx[k + 1]].off : g->b.n;
		if (s->n_tail != tail_end - e->end)
			fail_msg("sector %u (written %u): tail %zu, expected %zu; next decoded at %zu, written at %zu",
				 (unsigned)k, (unsigned)idx[k], s->n_tail, tail_end - e->end,
				 k + 1 < m->n_decoded ? m->sectors[k + 1].offset : 0, tail_end);
		if (s->n_tail)
			assert_memory_equal(s->tail, d + e->end, s->n_tail);
	}
	if (ne == 0) {
		assert_int_equal(m->n_trailer, g->b.n - g->sectors_off);
		if (m->n_trailer)
			assert_memory_equal(m->trailer, d + g->sectors_off, m->n_trailer);
	} else {
		assert_int_equal(m->n_trailer, 0);
	}
	free(idx);
}

/* encode(m) == bytes; text(m) -> parse -> encode == bytes; text -> parse -> text == text */
static void check_roundtrips(const nil_model *m, const uint8_t *d, size_t n)
{
	uint8_t *o = NULL;
	size_t on = 0;
	lfs_error err;
	assert_int_equal(nil_encode(m, &o, &on, &err), LFS_OK);
	assert_int_equal(on, n);
	assert_memory_equal(o, d, n);
	free(o);

	lfs_sb t = { 0 };
	assert_int_equal(nil_text_write(m, &t, &err), LFS_OK);
	nil_model *m2 = NULL;
	lfs_err r = nil_text_parse(t.data, t.len, "model.txt", &m2, &err);
	if (r)
		fail_msg("parse of written text failed: %s", err.msg);
	assert_int_equal(nil_encode(m2, &o, &on, &err), LFS_OK);
	assert_int_equal(on, n);
	assert_memory_equal(o, d, n);
	free(o);
	lfs_sb t2 = { 0 };
	assert_int_equal(nil_text_write(m2, &t2, &err), LFS_OK);
	assert_int_equal(t2.len, t.len);
	assert_memory_equal(t2.data, t.data, t.len);
	lfs_sb_free(&t2);
	lfs_sb_free(&t);
	nil_model_free(m2);
}

static const gcfg k_cfgs[] = {
	/* n_mat decl writ empty tail fill trailer big weird bad0 maxw */
	{ 0, 0, 0, -1, 0, 0, 0, false, false, false, 0 },        /* header only */
	{ 3, 0, 0, -1, 0, 0, 97, false, false, false, 0 },       /* no sectors, trailer */
	{ 9, 1, 1, -1, 0, 0, 0, false, false, false, 0 },        /* one sector, no tail */
	{ 9, 1, 1, -1, 200, 0, 0, false, false, false, 0 },      /* one sector + tail */
	{ 12, 6, 6, -1, 300, 0, 0, false, false, false, 0 },     /* several, random tails */
	{ 4, 12, 12, -1, 0, 0, 0, false, false, false, 0 },      /* back to back sectors */
	{ 4, 8, 8, -1, 64, 1, 0, false, false, false, 0 },       /* zero-filled tails */
	{ 4, 8, 8, -1, 64, 2, 0, false, false, false, 0 },       /* 0xFF-filled tails */
	{ 4, 8, 8, -1, 64, 3, 0, false, false, false, 0 },       /* 0xCD-filled tails */
	{ 9, 10, 6, -1, 120, 0, 0, false, false, false, 0 },     /* fewer sectors than declared */
	{ 9, 3, 5, -1, 50, 0, 0, false, false, false, 0 },       /* more written than declared */
	{ 9, 6, 6, 3, 100, 0, 0, false, false, false, 0 },       /* sector 3 without geometry */
	{ 2, 3, 3, -1, 40, 0, 0, true, false, false, 0 },        /* big counts */
	{ 2, 4, 4, -1, 40, 0, 0, false, true, false, 0 },        /* NaN payloads, -0, inf */
	{ 2, 4, 4, -1, 40, 0, 0, false, false, true, 0 },        /* sector 0 not plausible */
	{ 1, 3, 3, -1, 10, 0, 0, false, false, false, 3000 },    /* long wedge strips */
	{ 300, 2, 2, -1, 10, 0, 0, false, false, false, 0 },     /* many materials */
};
#define N_CFGS (sizeof(k_cfgs) / sizeof(k_cfgs[0]))

static void test_generated_roundtrip(void **state)
{
	(void)state;
	size_t files = 0, sectors = 0;
	for (size_t ci = 0; ci < N_CFGS; ci++) {
		for (int rep = 0; rep < 4; rep++) {
			gfile g;
			gen(&k_cfgs[ci], &g);
			assert_true(nil_is_binary(g.b.p, g.b.n));
			nil_model *m = NULL;
			lfs_error err;
			lfs_err r = nil_decode(g.b.p, g.b.n, &m, &err);
			if (r)
				fail_msg("config %zu rep %d: %s", ci, rep, err.msg);
			check_model(&k_cfgs[ci], &g, m);
			check_roundtrips(m, g.b.p, g.b.n);
			sectors += m->n_decoded;
			files++;
			nil_model_free(m);
			gfree(&g);
		}
	}
	printf("generated: %zu files, %zu sectors decoded, all byte-identical from bytes and text\n",
	       files, sectors);
}

/* ---- views ------------------------------------------------------------------ */

static size_t count_prefix(const char *s, size_t n, const char *pre)
{
	size_t c = 0, pl = strlen(pre);
	for (size_t i = 0; i < n;) {
		const char *e = memchr(s + i, '\n', n - i);
		size_t len = e ? (size_t)(e - (s + i)) : n - i;
		if (len >= pl && !memcmp(s + i, pre, pl))
			c++;
		i += len + 1;
	}
	return c;
}

/* Strip triangles from the writer's bytes, computed here independently. */
static size_t expected_tris(const uint8_t *d, const exp_sector *e)
{
	size_t t = 0;
	for (size_t k = 0; k + 2 < e->nw; k++) {
		uint16_t a = le16(d + e->wedges + 24 * k), b = le16(d + e->wedges + 24 * (k + 1)),
			 c = le16(d + e->wedges + 24 * (k + 2));
		if (a != b && b != c && a != c && a < e->nv && b < e->nv && c < e->nv)
			t++;
	}
	return t;
}

static bool fake_lookup(void *ctx, const char *resref, char *out, size_t outsz)
{
	(void)ctx;
	if (strcmp(resref, "SBIwall1_2_L"))
		return false;
	snprintf(out, outsz, "../textures/sbiwall1_2_l.tga");
	return true;
}

static void test_views(void **state)
{
	(void)state;
	const gcfg c = { 9, 6, 6, 3, 100, 0, 0, false, false, true, 0 };
	gfile g;
	gen(&c, &g);
	lfs_viewset vs;
	lfs_error err;
	lfs_view_opts vo = { .texture_lookup = fake_lookup };
	assert_ptr_equal(lfs_format_for("L1_Brot.NIL", g.b.p, g.b.n), &lfs_format_nil);
	lfs_err r = lfs_views_build("L1_Brot.NIL", g.b.p, g.b.n, &vo, &vs, &err);
	if (r)
		fail_msg("%s", err.msg);
	assert_ptr_equal(vs.format, &lfs_format_nil);
	uint32_t idx[8];
	uint32_t ne = expected_sectors(&c, &g, idx);
	assert_int_equal(ne, 5);
	assert_int_equal(vs.n_views, 3 + ne);
	const lfs_view *txt = lfs_viewset_find(&vs, "model.txt");
	const lfs_view *mtl = lfs_viewset_find(&vs, "model.mtl");
	const lfs_view *obj = lfs_viewset_find(&vs, "model.obj");
	assert_non_null(txt);
	assert_non_null(mtl);
	assert_non_null(obj);
	/* model.txt is the text round trip's input */
	nil_model *m = NULL;
	assert_int_equal(nil_text_parse(txt->data, txt->size, "model.txt", &m, &err), LFS_OK);
	uint8_t *o;
	size_t on;
	assert_int_equal(nil_encode(m, &o, &on, &err), LFS_OK);
	assert_int_equal(on, g.b.n);
	assert_memory_equal(o, g.b.p, on);
	free(o);
	nil_model_free(m);
	/* every header material is in the MTL; map_Kd from the lookup */
	assert_int_equal(count_prefix(mtl->data, mtl->size, "newmtl "), c.n_mat + 1);
	assert_non_null(strstr(mtl->data, "newmtl London\\SBIwall1_2_L\n"));
	assert_non_null(strstr(mtl->data, "map_Kd ../textures/sbiwall1_2_l.tga\n"));
	assert_non_null(strstr(mtl->data, "newmtl with_space\n"));
	/* OBJ: per sector vertices, wedges as vt, strip triangles */
	size_t tv = 0, tvt = 0, tf = 0;
	for (uint32_t k = 0; k < ne; k++) {
		const exp_sector *e = &g.sec[idx[k]];
		char path[32];
		snprintf(path, sizeof(path), "sectors/%u.obj", (unsigned)k);
		const lfs_view *so = lfs_viewset_find(&vs, path);
		assert_non_null(so);
		size_t ft = expected_tris(g.b.p, e);
		assert_int_equal(count_prefix(so->data, so->size, "v "), e->nv);
		assert_int_equal(count_prefix(so->data, so->size, "vt "), e->nw);
		assert_int_equal(count_prefix(so->data, so->size, "f "), ft);
		assert_non_null(strstr(so->data, "mtllib ../model.mtl\n"));
		tv += e->nv;
		tvt += e->nw;
		tf += ft;
	}
	assert_int_equal(count_prefix(obj->data, obj->size, "v "), tv);
	assert_int_equal(count_prefix(obj->data, obj->size, "vt "), tvt);
	assert_int_equal(count_prefix(obj->data, obj->size, "f "), tf);
	assert_int_equal(count_prefix(obj->data, obj->size, "o sector"), ne);
	/* bad sector 0 (indices out of range) lost triangles but no index is out of range */
	assert_true(expected_tris(g.b.p, &g.sec[0]) < (size_t)g.sec[0].nw - 2);
	lfs_viewset_free(&vs);
	gfree(&g);
}

/* The first face of sector 1 from the view equals the writer's wedges 0..2 */
static void test_obj_face_values(void **state)
{
	(void)state;
	const gcfg c = { 2, 2, 2, -1, 0, 0, 0, false, false, false, 0 };
	for (int rep = 0; rep < 20; rep++) {
		gfile g;
		gen(&c, &g);
		lfs_viewset vs;
		lfs_error err;
		assert_int_equal(lfs_views_build("a.nil", g.b.p, g.b.n, NULL, &vs, &err), LFS_OK);
		const lfs_view *so = lfs_viewset_find(&vs, "sectors/1.obj");
		assert_non_null(so);
		const exp_sector *e = &g.sec[1];
		const uint8_t *w = g.b.p + e->wedges;
		/* the first non-restart triangle of the strip */
		for (size_t k = 0; k + 2 < e->nw; k++) {
			uint16_t a = le16(w + 24 * k), b = le16(w + 24 * (k + 1)), cc = le16(w + 24 * (k + 2));
			if (a == b || b == cc || a == cc)
				continue;
			char want[96];
			if (k & 1)
				snprintf(want, sizeof(want), "\nf %u/%zu %u/%zu %u/%zu\n", a + 1, k + 1,
					 cc + 1, k + 3, b + 1, k + 2);
			else
				snprintf(want, sizeof(want), "\nf %u/%zu %u/%zu %u/%zu\n", a + 1, k + 1,
					 b + 1, k + 2, cc + 1, k + 3);
			const char *f = strstr(so->data, "\nf ");
			assert_non_null(f);
			assert_memory_equal(f, want, strlen(want));
			break;
		}
		lfs_viewset_free(&vs);
		gfree(&g);
	}
}

/* ---- recognition ------------------------------------------------------------ */

static void set32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void test_detect_strict(void **state)
{
	(void)state;
	/* random files named .nil pass through */
	for (int i = 0; i < 2000; i++) {
		size_t n = rnd_below(4096);
		uint8_t *d = malloc(n + 1);
		for (size_t k = 0; k < n; k++)
			d[k] = (uint8_t)lfs_rng_u64(&g_rng);
		if (i % 4 == 0 && n >= 4)
			memcpy(d, "NIL\x10", 4); /* right magic, random rest */
		if (i % 8 == 0 && n >= 8)
			set32(d + 4, 27);
		bool det = lfs_format_nil.detect(d, n);
		nil_model *m = NULL;
		lfs_error err;
		lfs_err r = nil_decode(d, n, &m, &err);
		if (det) {
			/* only a consistent header gets through: then decode must work or fail cleanly */
			assert_true(n >= 0x64);
			assert_memory_equal(d, "NIL\x10", 4);
			assert_int_equal(le32(d + 4), 27);
		} else {
			assert_null(lfs_format_for("x.nil", d, n));
		}
		if (r == LFS_OK)
			nil_model_free(m);
		else
			assert_null(m);
		free(d);
	}
	gcfg c = { 3, 2, 2, -1, 10, 0, 0, false, false, false, 0 };
	gfile g;
	gen(&c, &g);
	uint8_t *d = g.b.p;
	size_t n = g.b.n;
	assert_true(lfs_format_nil.detect(d, n));
	assert_ptr_equal(lfs_format_for("x.nil", d, n), &lfs_format_nil);
	assert_false(lfs_format_for("x.nod", d, n) == &lfs_format_nil);
	lfs_error err;
	nil_model *m = NULL;
	/* each header field broken in turn */
	d[3] = 0x11;
	assert_false(lfs_format_nil.detect(d, n));
	assert_int_equal(nil_decode(d, n, &m, &err), LFS_ERR_NOTFORMAT);
	assert_string_equal(err.msg, "offset 0x0 (file header): magic 4e 49 4c 11 is not \"NIL\\x10\"");
	d[3] = 0x10;
	set32(d + 4, 35); /* StarCraft: Ghost */
	assert_false(lfs_format_nil.detect(d, n));
	assert_int_equal(nil_decode(d, n, &m, &err), LFS_ERR_UNSUPPORTED);
	assert_int_equal(err.offset, 4);
	set32(d + 4, 27);
	set32(d + 0x5C, (uint32_t)(n / 32));
	assert_false(lfs_format_nil.detect(d, n));
	assert_int_equal(nil_decode(d, n, &m, &err), LFS_ERR_CORRUPT);
	assert_int_equal(err.offset, 0x5C);
	set32(d + 0x5C, 3);
	size_t ns_off = 0x60 + 3 * 32;
	set32(d + ns_off, (uint32_t)((n - ns_off - 4) / 25 + 1));
	assert_false(lfs_format_nil.detect(d, n));
	assert_int_equal(nil_decode(d, n, &m, &err), LFS_ERR_CORRUPT);
	assert_int_equal(err.offset, ns_off);
	set32(d + ns_off, 2);
	assert_true(lfs_format_nil.detect(d, n));
	assert_false(lfs_format_nil.detect(d, 0x63));
	assert_int_equal(nil_decode(d, 0x63, &m, &err), LFS_ERR_NOTFORMAT);
	/* sector 0 cut: CORRUPT naming the structure */
	size_t cut = g.sec[0].wedges + 5;
	assert_int_equal(nil_decode(d, cut, &m, &err), LFS_ERR_CORRUPT);
	assert_string_equal(err.structure, "sector vertices");
	assert_int_equal(err.offset, g.sec[0].wedges);
	gfree(&g);
}

/* ---- hostile input ------------------------------------------------------------- */

/* Anything accepted re-encodes to the same bytes and, every 8th success,
 * round-trips through the text too; a failure is clean. */
static void nil_check(void *ctx, const uint8_t *d, size_t n, size_t trial, const void *model,
		      const lfs_error *err)
{
	(void)trial;
	size_t *accepted = ctx;
	if (!model) {
		lfs_err r = err->code;
		assert_true(r == LFS_ERR_CORRUPT || r == LFS_ERR_NOTFORMAT ||
			    r == LFS_ERR_UNSUPPORTED);
		return;
	}
	if ((*accepted)++ % 8 == 0)
		check_roundtrips(model, d, n);
}

static size_t g_accepted;
static const lfs_hostile k_hostile = { &k_nil, true, true, nil_check, &g_accepted };

static void test_truncation(void **state)
{
	(void)state;
	lfs_tally t = { 0 };
	g_accepted = 0;
	for (size_t ci = 0; ci < N_CFGS; ci++) {
		gfile g;
		gen(&k_cfgs[ci], &g);
		lfs_hostile_truncations(&k_hostile, g.b.p, g.b.n, 64, true, &t);
		gfree(&g);
	}
	printf("truncation: %zu decoded (and re-encoded identically), %zu failed cleanly\n", t.ok,
	       t.failed);
	assert_true(t.failed > 0);
	assert_true(t.ok > 0);
}

static void test_byte_flips(void **state)
{
	(void)state;
	size_t flips = lfs_fuzz_count(1000);
	lfs_tally t = { 0 };
	g_accepted = 0;
	for (size_t ci = 0; ci < N_CFGS; ci++) {
		gfile g;
		gen(&k_cfgs[ci], &g);
		size_t n = g.b.n;
		/* half in the header (counts live there), half anywhere */
		lfs_hot_span head = { 0, g.sectors_off + 32 < n ? g.sectors_off + 32 : n, 2 };
		lfs_hostile_replacements(&k_hostile, &g_rng, g.b.p, n, flips, &head, &t);
		gfree(&g);
	}
	printf("byte flips: %zu decoded (and re-encoded identically), %zu failed cleanly\n", t.ok,
	       t.failed);
	assert_true(t.failed > 0);
}

/* Hostile input built to make the sector search work hard: after a minimal
 * sector 0, 1 MiB of records that each look like a valid sector vertex
 * (vertex 0, alpha 0xFF, finite floats; fixed, not from the PRNG). Many offsets then read as sector
 * prefixes whose wedge arrays run far before failing; the work budget must
 * stop the search (search_stopped), and the file must still round-trip. An
 * all-0xFF body (every count maximal, every float NaN) must decode too. */
static void test_search_budget(void **state)
{
	(void)state;
	for (int pat = 0; pat < 2; pat++) {
		size_t n = (size_t)1 << 20;
		uint8_t *d = calloc(n, 1);
		memcpy(d, "NIL\x10", 4);
		set32(d + 4, 27);
		set32(d + 0x60, 200); /* NumSectors */
		size_t p = 0x64 + 17 + 2 + 2;
		d[p] = 1; /* one vertex */
		p += 2 + 12;
		d[p] = 3; /* three sector vertices */
		p += 2;
		for (int i = 0; i < 3; i++, p += 24)
			d[p + 7] = 0xFF;
		size_t body = p;
		for (size_t q = p; q + 24 <= n; q += 24) {
			uint8_t *w = d + q;
			w[7] = 0xFF;
			for (int k = 0; k < 4; k++) {
				float f = (float)((q / 24 * 7 + (size_t)k * 13) % 1000);
				memcpy(w + 8 + 4 * k, &f, 4);
			}
		}
		if (pat == 1)
			memset(d + body, 0xFF, n - body);
		nil_model *m = NULL;
		lfs_error err;
		assert_int_equal(nil_decode(d, n, &m, &err), LFS_OK);
		if (pat == 0)
			assert_true(m->search_stopped);
		assert_true(m->n_decoded >= 1);
		uint8_t *o;
		size_t on;
		assert_int_equal(nil_encode(m, &o, &on, &err), LFS_OK);
		assert_int_equal(on, n);
		assert_memory_equal(o, d, n);
		printf("search pattern %d: %u sectors, search %s\n", pat, (unsigned)m->n_decoded,
		       m->search_stopped ? "stopped by the budget" : "completed");
		free(o);
		nil_model_free(m);
		free(d);
	}
}

/* A parse failure must be "model.txt:L:C: ..." with L, C >= 1. */
static void check_parse_error(const lfs_error *err)
{
	unsigned l = 0, c = 0;
	int used = 0;
	assert_int_equal(err->code, LFS_ERR_PARSE);
	assert_int_equal(sscanf(err->msg, "model.txt:%u:%u: error: %n", &l, &c, &used), 2);
	assert_true(l >= 1 && c >= 1 && used > 0);
	assert_int_equal(err->line, l);
	assert_int_equal(err->col, c);
}

static void test_text_mutations(void **state)
{
	(void)state;
	const gcfg c = { 5, 3, 3, -1, 40, 0, 0, false, true, false, 20 };
	gfile g;
	gen(&c, &g);
	nil_model *m = NULL;
	lfs_error err;
	assert_int_equal(nil_decode(g.b.p, g.b.n, &m, &err), LFS_OK);
	lfs_sb t = { 0 };
	assert_int_equal(nil_text_write(m, &t, &err), LFS_OK);
	nil_model_free(m);
	lfs_tally tl = { 0 };
	static const char alphabet[] = "0123456789abcdefxyz \n\t#\"\\-.:nodesectorendnode";
	for (int k = 0; k < 3000; k++) {
		char *x = malloc(t.len + 1);
		memcpy(x, t.data, t.len);
		size_t n = t.len;
		int kind = k % 4;
		if (kind == 3) {
			n = (size_t)lfs_rng_below(&g_rng, t.len); /* truncation */
		} else {
			int edits = 1 + (int)rnd_below(kind + 1);
			for (int e = 0; e < edits; e++)
				x[lfs_rng_below(&g_rng, n)] =
					kind == 2 ? (char)lfs_rng_u8(&g_rng)
						  : alphabet[rnd_below(sizeof(alphabet) - 1)];
		}
		x[n] = '\0';
		nil_model *m2 = NULL;
		lfs_err r = nil_text_parse(x, n, "model.txt", &m2, &err);
		if (r == LFS_OK) {
			uint8_t *o;
			size_t on;
			assert_int_equal(nil_encode(m2, &o, &on, &err), LFS_OK);
			free(o);
			nil_model_free(m2);
			tl.ok++;
		} else {
			assert_null(m2);
			check_parse_error(&err);
			tl.failed++;
		}
		free(x);
	}
	printf("text mutations: %zu parsed, %zu rejected with model.txt:line:col\n", tl.ok, tl.failed);
	assert_true(tl.failed > 0);
	lfs_sb_free(&t);
	gfree(&g);
}

/* ---- parser messages --------------------------------------------------------- */

static const char k_min[] =
	"version 27\n"                                                        /* 1 */
	"magic 4e494c10\n"                                                    /* 2 */
	"globallight 72\n"                                                    /* 3 */
	"  000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n" /* 4 */
	"  000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n" /* 5 */
	"  0001020304050607\n"                                                /* 6 */
	"ambient 0.5 0.5 1\n"                                                 /* 7 */
	"materials 1\n"                                                       /* 8 */
	"  \"London\\\\SBIwall1_2_L\"\n"                                      /* 9 */
	"sectors 1\n"                                                         /* 10 */
	"node sector 0\n"                                                     /* 11 */
	"  flags 7\n"                                                         /* 12 */
	"  ambient 0 0 0\n"                                                   /* 13 */
	"  sectorplanes 1\n"                                                  /* 14 */
	"    0 0 1 -5\n"                                                      /* 15 */
	"  surfaceplanes 0\n"                                                 /* 16 */
	"  bspnodes 1\n"                                                      /* 17 */
	"    65535 65535 1 2\n"                                               /* 18 */
	"  verts 3\n"                                                         /* 19 */
	"    0 0 0\n"                                                         /* 20 */
	"    1 0 0\n"                                                         /* 21 */
	"    0 1 nan:7fc00001\n"                                              /* 22 */
	"  wedges 3\n"                                                        /* 23 */
	"    0 0 255 255 255 255 0 0 0 0\n"                                   /* 24 */
	"    1 0 255 255 255 255 1 0 1 0\n"                                   /* 25 */
	"    2 0 255 255 255 255 0 1 0 1\n"                                   /* 26 */
	"  tail 2\n"                                                          /* 27 */
	"    abcd\n"                                                          /* 28 */
	"endnode\n"                                                           /* 29 */
	"trailer 0\n";                                                        /* 30 */

/* Parse k_min with @p from replaced by @p to; expect @p msg exactly. */
static void expect_error(const char *from, const char *to, const char *msg)
{
	char text[4096];
	const char *p = strstr(k_min, from);
	assert_non_null(p);
	size_t pre = (size_t)(p - k_min);
	snprintf(text, sizeof(text), "%.*s%s%s", (int)pre, k_min, to, p + strlen(from));
	nil_model *m = NULL;
	lfs_error err;
	lfs_err r = nil_text_parse(text, strlen(text), "model.txt", &m, &err);
	assert_int_equal(r, LFS_ERR_PARSE);
	assert_null(m);
	assert_string_equal(err.msg, msg);
}

static void test_parse_minimal(void **state)
{
	(void)state;
	nil_model *m = NULL;
	lfs_error err;
	lfs_err r = nil_text_parse(k_min, strlen(k_min), "model.txt", &m, &err);
	if (r)
		fail_msg("%s", err.msg);
	uint8_t *o;
	size_t n;
	assert_int_equal(nil_encode(m, &o, &n, &err), LFS_OK);
	/* header 0x60 + 1 name + count + sector prefix (25 + 16 + 8 + 36 + 72) + tail 2 */
	assert_int_equal(n, 0x60 + 32 + 4 + 25 + 16 + 8 + 36 + 72 + 2);
	assert_memory_equal(o, "NIL\x10\x1b\0\0\0", 8);
	assert_memory_equal(o + 0x60, "London\\SBIwall1_2_L\0", 20);
	assert_int_equal(le32(o + 0x60 + 32 + 4 + 47 + 32), 0x7FC00001u);
	assert_memory_equal(o + n - 2, "\xab\xcd", 2);
	/* and it decodes back to the same model */
	nil_model *m2 = NULL;
	assert_int_equal(nil_decode(o, n, &m2, &err), LFS_OK);
	assert_int_equal(m2->n_decoded, 1);
	assert_int_equal(m2->sectors[0].n_tail, 2);
	assert_int_equal(m2->sectors[0].flags, 7);
	nil_model_free(m2);
	free(o);
	nil_model_free(m);
}

static void test_parse_errors(void **state)
{
	(void)state;
	expect_error("version 27", "version x", "model.txt:1:9: error: expected an integer, found 'x'");
	expect_error("version 27\n", "", "model.txt:1:1: error: expected 'version', found 'magic'");
	expect_error("magic 4e494c10", "magic 4e494c1",
		     "model.txt:2:7: error: expected 8 hex digits, found 7");
	expect_error("globallight 72", "globallight 71", "model.txt:3:13: error: globallight is 72 bytes, found 71");
	expect_error("  0001020304050607\n", "  00010203040506zz\n",
		     "model.txt:6:3: error: 'zz' is not a hex byte");
	expect_error("ambient 0.5 0.5 1", "ambient 0.5 0.5",
		     "model.txt:7:16: error: expected 3 values after 'ambient', found 2");
	expect_error("  \"London\\\\SBIwall1_2_L\"\n", "  ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456\n",
		     "model.txt:9:3: error: name longer than 32 bytes");
	expect_error("sectors 1", "sectors 0", "model.txt:11:1: error: more sector nodes than 'sectors 0'");
	expect_error("node sector 0", "node sector 1",
		     "model.txt:11:13: error: expected sector 0 (sectors are numbered in order)");
	expect_error("node sector 0", "node light 0", "model.txt:11:6: error: expected node type 'sector'");
	expect_error("sectorplanes 1", "sectorplanes 256", "model.txt:14:16: error: 256 is out of range 0..255");
	expect_error("    0 0 1 -5", "    0 0 1", "model.txt:15:10: error: expected 4 values in a row of sectorplanes, found 3");
	expect_error("    65535 65535 1 2", "    65536 65535 1 2", "model.txt:18:5: error: 65536 is out of range 0..65535");
	expect_error("nan:7fc00001", "nan:7f800000", "model.txt:22:9: error: nan:7f800000 is not a NaN");
	expect_error("    2 0 255 255 255 255 0 1 0 1", "    2 0 256 255 255 255 0 1 0 1",
		     "model.txt:26:9: error: 256 is out of range 0..255");
	expect_error("    1 0 255 255 255 255 1 0 1 0", "    1 0 255 255 255 255 1 0 1",
		     "model.txt:25:30: error: expected 10 values in a row of wedges, found 9");
	expect_error("    abcd\n", "    abcdef\n", "model.txt:28:5: error: expected 4 hex digits, found 6");
	expect_error("endnode\n", "", "model.txt:29:1: error: expected 'endnode', found 'trailer'");
	expect_error("trailer 0\n", "", "model.txt:30:1: error: unexpected end of text, expected 'trailer'");
	expect_error("trailer 0\n", "trailer 0\nnode sector 1\n",
		     "model.txt:31:1: error: unexpected text after the trailer");
	expect_error("  tail 2\n", "  tail 2000\n",
		     "model.txt:27:8: error: 'tail 2000' cannot fit in the 27 bytes of text left");
}

int main(void)
{
	lfs_rng_seed(&g_rng, "nil", 0x2545F4914F6CDD1Dull);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generated_roundtrip),
		cmocka_unit_test(test_views),
		cmocka_unit_test(test_obj_face_values),
		cmocka_unit_test(test_detect_strict),
		cmocka_unit_test(test_parse_minimal),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_byte_flips),
		cmocka_unit_test(test_search_budget),
		cmocka_unit_test(test_text_mutations),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
