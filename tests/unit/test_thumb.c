/**
 * @file test_thumb.c
 * Thumbnails (src/render/thumb.h, thumb_models.h, lfs_views_thumbnail):
 *  - golden images: project-made models (samples/box.mdl with its texture
 *    samples/lfs_crate.tga, samples/skin2bone.mdl, and a NOD, a SOD and a
 *    NIL written here at run time through the codecs' encoders) rendered at
 *    256 px and compared with tests/golden/<name>.png, which our renderer
 *    made once (LFS_THUMB_REGEN=1 rewrites them; review before committing):
 *    premultiplied channels may differ by GOLD_TOL, at most GOLD_MAX_PIXELS
 *    pixels may differ by more;
 *  - alpha: transparent corners, opaque centre, partial alpha on silhouettes;
 *  - texture lookup: the texture found changes the image, and the mean
 *    colour moves towards the texture's own mean colour;
 *  - LOD: a SOD lodcontrol node draws only its most detailed child;
 *  - PNG: libpng decodes it as 8-bit RGBA, non-interlaced, with the tEXt keys
 *    Thumb::URI and Thumb::MTime; every standard size has its dimensions;
 *  - corpus: every NWN binary, NOD and SOD renders with visible pixels, or —
 *    only when the decoded model has no drawable mesh — says UNSUPPORTED;
 *    disputed SODs fail cleanly;
 *  - hostile geometry (NaN, 1e30, degenerate, no faces, bad indices, bad
 *    UVs) and hostile bytes (flipped model and TGA bytes) never crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conform.h"
#include "corpus.h"
#include "testrng.h"
#include "formats/nil/nil.h"
#include "formats/nod/nod.h"
#include "formats/nwn/nwn_mdl.h"
#include "formats/sod/sod.h"
#include "fs/texture.h"
#include "formats/nad/nad_views.h"
#include "formats/nil/nil_views.h"
#include "render/thumb.h"
#include "formats/sod/sod_views.h"
#include "render/thumb_models.h"
#include "registry/viewset.h"

#define GOLD_TOL 12          /* per premultiplied channel, 0..255 */
#define GOLD_MAX_PIXELS 400  /* of 65536 at 256 px (0.6 %) */

/* The corpus folder, or skip this one test (cmocka) when it is absent: the
 * golden and hostile tests still run and show in the log
 * (lfs_corpus_dir_or_skip() would end the whole program with 77 at once);
 * the program still exits 77 (SKIP) at the end, see lfs_test_exit(). */
static const char *corpus_or_skip(void)
{
	const char *d = getenv("LFS_CORPUS");
	struct stat st;
	if (!d || stat(d, &st) != 0 || !S_ISDIR(st.st_mode))
		LFS_SKIP("no corpus folder (LFS_CORPUS)");
	return d;
}

static const char *src_root(void)
{
	const char *s = getenv("LFS_SOURCE_ROOT");
	return s ? s : "..";
}

static lfs_rng g_rng; /* seeded in main() */

/* ---- PNG decoding (libpng, independent of the encoder) ------------------ */

typedef struct img {
	unsigned w, h;
	uint8_t *rgba;
	char uri[1024];
	char mtime[64];
	bool has_uri, has_mtime;
	int bit_depth, color_type, interlace;
} img;

typedef struct rd {
	const uint8_t *p;
	size_t n, at;
} rd;

static void rd_fn(png_structp ps, png_bytep out, size_t len)
{
	rd *r = png_get_io_ptr(ps);
	if (r->at + len > r->n)
		png_error(ps, "short");
	memcpy(out, r->p + r->at, len);
	r->at += len;
}

static bool png_decode(const uint8_t *data, size_t n, img *im)
{
	memset(im, 0, sizeof(*im));
	png_structp ps = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png_create_info_struct(ps);
	png_bytep *rows = NULL;
	rd r = { data, n, 0 };
	if (setjmp(png_jmpbuf(ps))) {
		png_destroy_read_struct(&ps, &info, NULL);
		free(rows);
		free(im->rgba);
		im->rgba = NULL;
		return false;
	}
	png_set_read_fn(ps, &r, rd_fn);
	png_read_info(ps, info);
	png_uint_32 w, h;
	png_get_IHDR(ps, info, &w, &h, &im->bit_depth, &im->color_type, &im->interlace, NULL, NULL);
	im->w = w;
	im->h = h;
	png_textp txt;
	int nt = 0;
	png_get_text(ps, info, &txt, &nt);
	for (int i = 0; i < nt; i++) {
		if (!strcmp(txt[i].key, "Thumb::URI")) {
			snprintf(im->uri, sizeof(im->uri), "%s", txt[i].text);
			im->has_uri = true;
		} else if (!strcmp(txt[i].key, "Thumb::MTime")) {
			snprintf(im->mtime, sizeof(im->mtime), "%s", txt[i].text);
			im->has_mtime = true;
		}
	}
	if (im->bit_depth != 8 || im->color_type != PNG_COLOR_TYPE_RGBA || w > 4096 || h > 4096)
		png_error(ps, "unexpected format");
	im->rgba = malloc((size_t)w * h * 4);
	rows = malloc(h * sizeof(*rows));
	for (png_uint_32 y = 0; y < h; y++)
		rows[y] = im->rgba + (size_t)y * w * 4;
	png_read_image(ps, rows);
	png_read_end(ps, NULL);
	png_destroy_read_struct(&ps, &info, NULL);
	free(rows);
	return true;
}

/* ---- helpers --------------------------------------------------------------- */

typedef struct texdir {
	int fd;
	lfs_texture_ctx tc;
	lfs_view_opts vo;
} texdir;

/* Texture lookup rooted at @p dir for a model named @p model in it. */
static void texdir_open(texdir *t, const char *dir, const char *model)
{
	t->fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(t->fd >= 0);
	lfs_texture_ctx_init(&t->tc, t->fd, model);
	t->vo = (lfs_view_opts){ .texture_lookup = lfs_texture_lookup, .texture_ctx = &t->tc,
				 .texture_read = lfs_texture_read };
}

static void texdir_close(texdir *t)
{
	lfs_texture_ctx_free(&t->tc);
	close(t->fd);
}

static void samples_dir(char *out, size_t n)
{
	snprintf(out, n, "%s/samples", src_root());
}

/* Render through the public API and decode the PNG. */
static lfs_err render_file(const char *name, const uint8_t *data, size_t n, unsigned size,
			   const lfs_view_opts *vo, img *im)
{
	uint8_t *png = NULL;
	size_t pn = 0;
	lfs_error err;
	lfs_err r = lfs_views_thumbnail(name, data, n, size, vo, "file:///x/y.mdl", 1234567890, &png,
					&pn, &err);
	if (r == LFS_OK) {
		assert_true(png_decode(png, pn, im));
		assert_int_equal(im->w, size);
		assert_int_equal(im->h, size);
	} else {
		assert_null(png);
	}
	free(png);
	return r;
}

static uint8_t *sample_bytes(const char *file, size_t *n)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/samples/%s", src_root(), file);
	uint8_t *d = lfs_read_file_ok(p, n);
	return d;
}

/* Count pixels with alpha 0 < a < 255, and with a > 0. */
static void alpha_stats(const img *im, size_t *partial, size_t *visible)
{
	*partial = *visible = 0;
	for (size_t i = 0; i < (size_t)im->w * im->h; i++) {
		uint8_t a = im->rgba[4 * i + 3];
		*partial += a > 0 && a < 255;
		*visible += a > 0;
	}
}

/* Mean straight colour of the opaque pixels. */
static void mean_colour(const img *im, double m[3])
{
	double s[3] = { 0, 0, 0 };
	size_t n = 0;
	for (size_t i = 0; i < (size_t)im->w * im->h; i++) {
		if (im->rgba[4 * i + 3] != 255)
			continue;
		for (int c = 0; c < 3; c++)
			s[c] += im->rgba[4 * i + c];
		n++;
	}
	for (int c = 0; c < 3; c++)
		m[c] = n ? s[c] / (double)n : 0;
}

/* Compare with tests/golden/<name>.png (or rewrite it when LFS_THUMB_REGEN=1). */
static void golden(const char *name, const uint8_t *data, size_t n, const char *file_name,
		   const lfs_view_opts *vo)
{
	uint8_t *png = NULL;
	size_t pn = 0;
	lfs_error err;
	assert_int_equal(lfs_views_thumbnail(file_name, data, n, 256, vo, NULL, -1, &png, &pn, &err),
			 LFS_OK);
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/golden/%s.png", src_root(), name);
	const char *regen = getenv("LFS_THUMB_REGEN");
	if (regen && !strcmp(regen, "1")) {
		FILE *f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(png, 1, pn, f), pn);
		fclose(f);
		free(png);
		return;
	}
	img got, want;
	assert_true(png_decode(png, pn, &got));
	free(png);
	size_t gn = 0;
	uint8_t *gd = lfs_read_file(path, &gn);
	if (!gd)
		fail_msg("missing golden image %s (LFS_THUMB_REGEN=1 makes it)", path);
	assert_true(png_decode(gd, gn, &want));
	free(gd);
	assert_int_equal(got.w, want.w);
	assert_int_equal(got.h, want.h);
	size_t bad = 0;
	int worst = 0;
	for (size_t i = 0; i < (size_t)got.w * got.h; i++) {
		const uint8_t *a = got.rgba + 4 * i, *b = want.rgba + 4 * i;
		int d = abs(a[3] - b[3]);
		for (int c = 0; c < 3; c++) {
			int dc = abs(a[c] * a[3] / 255 - b[c] * b[3] / 255);
			d = dc > d ? dc : d;
		}
		worst = d > worst ? d : worst;
		bad += d > GOLD_TOL;
	}
	print_message("%s: %zu pixels beyond tolerance, worst channel difference %d\n", name, bad, worst);
	if (bad > GOLD_MAX_PIXELS)
		fail_msg("%s: %zu pixels differ by more than %d (worst %d), limit %d", name, bad,
			 GOLD_TOL, worst, GOLD_MAX_PIXELS);
	free(got.rgba);
	free(want.rgba);
}

/* ---- generated models ------------------------------------------------------ */

/* Boxes in the scene frame (x right, y front, z up): 24 split vertices,
 * 12 outward counter-clockwise faces, UVs 0..1 per side. */
typedef struct geo {
	float pos[512][3], nrm[512][3], uv[512][2];
	uint16_t face[512][3];
	size_t nv, nf;
} geo;

static void add_box(geo *g, const float c[3], const float h[3])
{
	static const int sides[6][4][3] = {
		{ { 1, -1, -1 }, { 1, 1, -1 }, { 1, 1, 1 }, { 1, -1, 1 } },
		{ { -1, 1, -1 }, { -1, -1, -1 }, { -1, -1, 1 }, { -1, 1, 1 } },
		{ { 1, 1, -1 }, { -1, 1, -1 }, { -1, 1, 1 }, { 1, 1, 1 } },
		{ { -1, -1, -1 }, { 1, -1, -1 }, { 1, -1, 1 }, { -1, -1, 1 } },
		{ { -1, -1, 1 }, { 1, -1, 1 }, { 1, 1, 1 }, { -1, 1, 1 } },
		{ { -1, 1, -1 }, { 1, 1, -1 }, { 1, -1, -1 }, { -1, -1, -1 } },
	};
	static const float nrm[6][3] = { { 1, 0, 0 }, { -1, 0, 0 }, { 0, 1, 0 },
					 { 0, -1, 0 }, { 0, 0, 1 }, { 0, 0, -1 } };
	static const float uv[4][2] = { { 0, 0 }, { 1, 0 }, { 1, 1 }, { 0, 1 } };
	for (int s = 0; s < 6; s++) {
		size_t b = g->nv;
		for (int k = 0; k < 4; k++) {
			for (int a = 0; a < 3; a++) {
				g->pos[g->nv][a] = c[a] + h[a] * (float)sides[s][k][a];
				g->nrm[g->nv][a] = nrm[s][a];
			}
			g->uv[g->nv][0] = uv[k][0];
			g->uv[g->nv][1] = uv[k][1];
			g->nv++;
		}
		uint16_t q[6] = { 0, 1, 2, 0, 2, 3 };
		for (int t = 0; t < 2; t++) {
			for (int k = 0; k < 3; k++)
				g->face[g->nf][k] = (uint16_t)(b + q[3 * t + k]);
			g->nf++;
		}
	}
}

/* An asymmetric "house": body, a chimney at the back right, a porch at the
 * front left — mirroring or turning it shows in the golden image. */
static void house(geo *g, int part)
{
	memset(g, 0, sizeof(*g));
	if (part == 0 || part < 0)
		add_box(g, (float[]){ 0, 0, 0.75f }, (float[]){ 1.0f, 0.8f, 0.75f });
	if (part == 1 || part < 0)
		add_box(g, (float[]){ 0.6f, -0.4f, 1.8f }, (float[]){ 0.15f, 0.15f, 0.4f });
	if (part == 2 || part < 0)
		add_box(g, (float[]){ -0.5f, 1.1f, 0.3f }, (float[]){ 0.4f, 0.3f, 0.3f });
}

static uint8_t *make_nod(size_t *n)
{
	nod_model m;
	memset(&m, 0, sizeof(m));
	m.version = NOD_VERSION;
	m.flags = NOD_MODEL_STATIC;
	nod_name mats[2];
	memset(mats, 0, sizeof(mats));
	memcpy(mats[0].raw, "lfs_crate", 9);
	memcpy(mats[1].raw, "no_such_texture", 15);
	m.n_materials = 2;
	m.materials = mats;
	nod_bone bone;
	memset(&bone, 0, sizeof(bone));
	bone.sibling = bone.child = bone.parent = -1;
	bone.inverse[0] = bone.inverse[4] = bone.inverse[8] = 1;
	m.n_bones = 1;
	m.bones = &bone;
	nod_name mesh;
	memset(&mesh, 0, sizeof(mesh));
	memcpy(mesh.raw, "house", 5);
	m.n_meshes = 1;
	m.meshes = &mesh;
	static nod_vertex verts[512];
	static nod_face faces[512];
	nod_group groups[3];
	memset(groups, 0, sizeof(groups));
	memset(verts, 0, sizeof(verts));
	geo *g = malloc(sizeof(*g));
	for (int p = 0; p < 3; p++) {
		house(g, p);
		nod_group *gr = &groups[p];
		gr->material = p == 1 ? 1 : 0; /* chimney: texture not found -> colour */
		gr->n_verts = (uint16_t)g->nv;
		gr->n_faces = (uint16_t)g->nf;
		gr->flags = NOD_GROUP_NOSKINNING;
		for (size_t v = 0; v < g->nv; v++) {
			nod_vertex *x = &verts[m.n_verts + v];
			memcpy(x->pos, g->pos[v], sizeof(x->pos));
			memcpy(x->normal, g->nrm[v], sizeof(x->normal));
			x->uv[0] = g->uv[v][0];
			x->uv[1] = 1.0f - g->uv[v][1]; /* NOD: v down */
			x->weight = 1;
		}
		for (size_t f = 0; f < g->nf; f++)
			for (int k = 0; k < 3; k++)
				faces[m.n_faces + f].v[k] = g->face[f][k];
		m.n_verts += (uint32_t)g->nv;
		m.n_faces += (uint32_t)g->nf;
	}
	free(g);
	m.verts = verts;
	m.faces = faces;
	m.n_groups = 3;
	m.groups = groups;
	lfs_error err;
	assert_int_equal(nod_model_layout(&m, &err), LFS_OK);
	uint8_t *out = NULL;
	assert_int_equal(nod_encode(&m, &out, n, &err), LFS_OK);
	return out;
}

static void sod_set(sod_model *m, sod_str *s, const char *v)
{
	assert_true(sod_str_set(m, s, v, strlen(v)));
}

/* SOD node matrix: identity rotation, position @p p. */
static void sod_ident(float *mx, const float *p)
{
	memset(mx, 0, 12 * sizeof(float));
	mx[0] = mx[4] = mx[8] = 1;
	if (p)
		memcpy(mx + 9, p, 3 * sizeof(float));
}

/* A mesh node from boxes; scene frame (x, y front, z up) -> SOD (x, z, y). */
static void sod_mesh_from(sod_model *m, sod_node *nd, const geo *g, const char *texture,
			  const char *lmat)
{
	sod_mesh *me = sod_alloc(m, sizeof(*me));
	assert_non_null(me);
	nd->type = SOD_MESH;
	nd->mesh = me;
	sod_set(m, &me->texture_material, "default");
	sod_set(m, &me->texture, texture);
	me->n_verts = me->n_tverts = (uint16_t)g->nv;
	me->verts = sod_alloc(m, g->nv * 3 * sizeof(float));
	me->tverts = sod_alloc(m, g->nv * 2 * sizeof(float));
	for (size_t v = 0; v < g->nv; v++) {
		me->verts[3 * v] = g->pos[v][0];
		me->verts[3 * v + 1] = g->pos[v][2];
		me->verts[3 * v + 2] = g->pos[v][1];
		me->tverts[2 * v] = g->uv[v][0];
		me->tverts[2 * v + 1] = 1.0f - g->uv[v][1];
	}
	me->n_groups = 1;
	me->groups = sod_alloc(m, sizeof(sod_group));
	sod_set(m, &me->groups[0].material, lmat);
	me->groups[0].n_faces = (uint16_t)g->nf;
	me->groups[0].faces = sod_alloc(m, g->nf * sizeof(sod_face));
	for (size_t f = 0; f < g->nf; f++)
		for (int k = 0; k < 3; k++) {
			/* (x, z, y) swaps handedness: reverse the corners */
			me->groups[0].faces[f].v[k] = g->face[f][2 - k];
			me->groups[0].faces[f].t[k] = g->face[f][2 - k];
		}
}

/* root (null) -> lod (lodcontrol) -> { hi: the house, 36 faces; lo: one
 * big red box, 12 faces }. Only "hi" may be drawn. */
static uint8_t *make_sod(size_t *n)
{
	sod_model *m = sod_model_new();
	assert_non_null(m);
	m->n_materials = 2;
	m->materials = sod_alloc(m, 2 * sizeof(sod_material));
	const char *mn[2] = { "wall", "alarm" };
	const float dif[2][3] = { { 0.9f, 0.85f, 0.6f }, { 1, 0, 0 } };
	for (int i = 0; i < 2; i++) {
		sod_material *mt = &m->materials[i];
		sod_set(m, &mt->name, mn[i]);
		memcpy(mt->diffuse, dif[i], sizeof(mt->diffuse));
		memcpy(mt->ambient, dif[i], sizeof(mt->ambient));
		mt->specular_power = 1;
		mt->lighting_model = 1;
	}
	m->n_nodes = 4;
	m->nodes = sod_alloc(m, 4 * sizeof(sod_node));
	const char *names[4] = { "root", "lod", "hi", "lo" }, *parents[4] = { "", "root", "lod", "lod" };
	for (int i = 0; i < 4; i++) {
		sod_set(m, &m->nodes[i].name, names[i]);
		sod_set(m, &m->nodes[i].parent, parents[i]);
		sod_ident(m->nodes[i].m, NULL);
	}
	m->nodes[0].type = SOD_NULL;
	m->nodes[1].type = SOD_LOD;
	geo *g = malloc(sizeof(*g));
	house(g, -1);
	sod_mesh_from(m, &m->nodes[2], g, "no_such_texture", "wall");
	memset(g, 0, sizeof(*g));
	add_box(g, (float[]){ 3, 0, 0 }, (float[]){ 2, 2, 2 });
	sod_mesh_from(m, &m->nodes[3], g, "", "alarm");
	free(g);
	uint8_t *out = NULL;
	lfs_error err;
	assert_int_equal(sod_encode(m, &out, n, &err), LFS_OK);
	sod_model_free(m);
	return out;
}

/* One NIL sector: a floor quad and a wall quad as one strip (with a
 * restart), material 0 = the crate texture. */
static uint8_t *make_nil(size_t *n)
{
	nil_model m;
	memset(&m, 0, sizeof(m));
	memcpy(m.magic, nil_magic, NIL_MAGIC_SIZE);
	m.version = NIL_VERSION;
	uint8_t mats[1][NIL_NAME_SIZE];
	memset(mats, 0, sizeof(mats));
	memcpy(mats[0], "Test\\lfs_crate", 14);
	m.n_materials = 1;
	m.materials = mats;
	m.n_sectors = m.n_decoded = 1;
	nil_sector s;
	memset(&s, 0, sizeof(s));
	float v[8][3] = { { 0, 0, 0 }, { 4, 0, 0 }, { 0, 4, 0 }, { 4, 4, 0 },
			  { 0, 4, 0 }, { 4, 4, 0 }, { 0, 4, 3 }, { 4, 4, 3 } };
	s.n_vertices = 8;
	s.vertices = &v[0][0];
	/* strip: 0 1 2 3 | 3 4 (restart) | 4 5 6 7 */
	uint16_t idx[10] = { 0, 1, 2, 3, 3, 4, 4, 5, 6, 7 };
	nil_wedge w[10];
	memset(w, 0, sizeof(w));
	for (int i = 0; i < 10; i++) {
		w[i].vertex = idx[i];
		w[i].rgba[3] = 0xFF;
		w[i].uv[0] = v[idx[i]][0] / 4;
		w[i].uv[1] = (v[idx[i]][1] + v[idx[i]][2]) / 4;
	}
	s.n_wedges = 10;
	s.wedges = w;
	m.sectors = &s;
	uint8_t *out = NULL;
	lfs_error err;
	assert_int_equal(nil_encode(&m, &out, n, &err), LFS_OK);
	return out;
}

/* ---- golden images ------------------------------------------------------- */

static void test_golden_box(void **state)
{
	(void)state;
	char dir[4096];
	samples_dir(dir, sizeof(dir));
	texdir t;
	texdir_open(&t, dir, "box.mdl");
	size_t n;
	uint8_t *d = sample_bytes("box.mdl", &n);
	golden("box_256", d, n, "box.mdl", &t.vo);
	free(d);
	texdir_close(&t);
}

static void test_golden_skin2bone(void **state)
{
	(void)state;
	size_t n;
	uint8_t *d = sample_bytes("skin2bone.mdl", &n);
	golden("skin2bone_256", d, n, "skin2bone.mdl", NULL);
	free(d);
}

static void test_golden_nod(void **state)
{
	(void)state;
	char dir[4096];
	samples_dir(dir, sizeof(dir));
	texdir t;
	texdir_open(&t, dir, "house.nod"); /* finds samples/lfs_crate.tga */
	size_t n;
	uint8_t *d = make_nod(&n);
	golden("house_nod_256", d, n, "house.nod", &t.vo);
	free(d);
	texdir_close(&t);
}

static void test_golden_sod(void **state)
{
	(void)state;
	size_t n;
	uint8_t *d = make_sod(&n);
	golden("house_lod_sod_256", d, n, "house.sod", NULL);
	free(d);
}

static void test_golden_nil(void **state)
{
	(void)state;
	char dir[4096];
	samples_dir(dir, sizeof(dir));
	texdir t;
	texdir_open(&t, dir, "level.nil");
	size_t n;
	uint8_t *d = make_nil(&n);
	golden("level_nil_256", d, n, "level.nil", &t.vo);
	free(d);
	texdir_close(&t);
}

/* ---- properties ----------------------------------------------------------- */

static void test_alpha_edges(void **state)
{
	(void)state;
	size_t n;
	uint8_t *d = sample_bytes("box.mdl", &n);
	unsigned sizes[] = { 128, 256, 512, 1024 };
	for (int k = 0; k < 4; k++) {
		img im;
		assert_int_equal(render_file("box.mdl", d, n, sizes[k], NULL, &im), LFS_OK);
		size_t partial, visible;
		alpha_stats(&im, &partial, &visible);
		unsigned s = sizes[k];
		/* corners transparent, centre opaque */
		assert_int_equal(im.rgba[3], 0);
		assert_int_equal(im.rgba[((size_t)s * s - 1) * 4 + 3], 0);
		assert_int_equal(im.rgba[((size_t)(s / 2) * s + s / 2) * 4 + 3], 255);
		/* a cube seen from above fills a good share and its outline is
		 * antialiased: partial alpha along at least 1.5 edge lengths */
		print_message("%u px: %zu visible, %zu partial alpha\n", s, visible, partial);
		assert_true(visible > (size_t)s * s / 4);
		assert_true(partial > 3 * (size_t)s / 2);
		/* the margin: first and last rows/columns fully transparent */
		for (unsigned i = 0; i < s; i++) {
			assert_int_equal(im.rgba[(size_t)i * 4 + 3], 0);
			assert_int_equal(im.rgba[((size_t)i * s) * 4 + 3], 0);
		}
		free(im.rgba);
	}
	free(d);
}

static void test_texture_lookup(void **state)
{
	(void)state;
	char dir[4096];
	samples_dir(dir, sizeof(dir));
	texdir t;
	texdir_open(&t, dir, "box.mdl");
	size_t n;
	uint8_t *d = sample_bytes("box.mdl", &n);
	img with, without;
	assert_int_equal(render_file("box.mdl", d, n, 256, &t.vo, &with), LFS_OK);
	assert_int_equal(render_file("box.mdl", d, n, 256, NULL, &without), LFS_OK);
	/* the texture's own mean colour */
	size_t tn;
	char tp[4200];
	snprintf(tp, sizeof(tp), "%s/lfs_crate.tga", dir);
	uint8_t *tga = lfs_read_file_ok(tp, &tn);
	uint8_t *rgba;
	uint32_t w, h;
	assert_true(lfs_thumb_decode_tga(tga, tn, &rgba, &w, &h));
	double tm[3] = { 0, 0, 0 };
	for (size_t i = 0; i < (size_t)w * h; i++)
		for (int c = 0; c < 3; c++)
			tm[c] += rgba[4 * i + c] / (double)(w * h);
	free(rgba);
	free(tga);
	double mw[3], mo[3];
	mean_colour(&with, mw);
	mean_colour(&without, mo);
	/* lighting is grey: the textured render keeps the texture's colour
	 * ratios; the untextured one is the (neutral) material colour */
	double rt = tm[0] / (tm[2] + 1), rw = mw[0] / (mw[2] + 1), ro = mo[0] / (mo[2] + 1);
	assert_true(fabs(rw - rt) < fabs(ro - rt));
	assert_true(fabs(rw - rt) / rt < 0.25);
	size_t diff = 0;
	for (size_t i = 0; i < 256 * 256 * 4; i++)
		diff += with.rgba[i] != without.rgba[i];
	assert_true(diff > 256 * 64);
	/* same silhouette either way */
	for (size_t i = 0; i < 256 * 256; i++)
		assert_int_equal(with.rgba[4 * i + 3], without.rgba[4 * i + 3]);
	free(with.rgba);
	free(without.rgba);
	free(d);
	texdir_close(&t);
}

static void test_sod_lod(void **state)
{
	(void)state;
	size_t n;
	uint8_t *d = make_sod(&n);
	lfs_thumb_scene s = { 0 };
	lfs_error err;
	assert_int_equal(lfs_thumb_scene_of(&lfs_format_sod, d, n, NULL, &s, &err), LFS_OK);
	/* only the "hi" child (three boxes) */
	assert_int_equal(lfs_thumb_drawable(&s), 36);
	for (size_t i = 0; i < s.n_mats; i++)
		assert_false(s.mats[i].rgb[1] < 0.01f); /* the red "alarm" box is not there */
	lfs_thumb_scene_free(&s);
	free(d);
}

static void test_nil_triangles(void **state)
{
	(void)state;
	size_t n;
	uint8_t *d = make_nil(&n);
	nil_model *m = NULL;
	lfs_error err;
	assert_int_equal(nil_decode(d, n, &m, &err), LFS_OK);
	size_t want = 0;
	for (uint32_t i = 0; i < m->n_decoded; i++)
		want += nil_sector_triangles(&m->sectors[i]);
	nil_model_free(m);
	lfs_thumb_scene s = { 0 };
	assert_int_equal(lfs_thumb_scene_of(&lfs_format_nil, d, n, NULL, &s, &err), LFS_OK);
	assert_int_equal(lfs_thumb_drawable(&s), want);
	assert_int_equal(want, 4);
	lfs_thumb_scene_free(&s);
	free(d);
}

static void test_png_format(void **state)
{
	(void)state;
	size_t n;
	uint8_t *d = sample_bytes("skin2bone.mdl", &n);
	uint8_t *png = NULL;
	size_t pn = 0;
	lfs_error err;
	const char *uri = "file:///home/u/models/skin%202bone.mdl";
	assert_int_equal(lfs_views_thumbnail("skin2bone.mdl", d, n, 128, NULL, uri, 1700000000, &png,
					     &pn, &err), LFS_OK);
	img im;
	assert_true(png_decode(png, pn, &im));
	assert_int_equal(im.bit_depth, 8);
	assert_int_equal(im.color_type, PNG_COLOR_TYPE_RGBA);
	assert_int_equal(im.interlace, PNG_INTERLACE_NONE);
	assert_true(im.has_uri);
	assert_string_equal(im.uri, uri);
	assert_true(im.has_mtime);
	assert_string_equal(im.mtime, "1700000000");
	free(im.rgba);
	free(png);
	/* keys left out on request */
	assert_int_equal(lfs_views_thumbnail("skin2bone.mdl", d, n, 128, NULL, NULL, -1, &png, &pn,
					     &err), LFS_OK);
	assert_true(png_decode(png, pn, &im));
	assert_false(im.has_uri);
	assert_false(im.has_mtime);
	free(im.rgba);
	free(png);
	/* sizes outside the standard set */
	unsigned bad[] = { 0, 64, 100, 255, 2048 };
	for (int k = 0; k < 5; k++) {
		png = (uint8_t *)1;
		assert_int_equal(lfs_views_thumbnail("skin2bone.mdl", d, n, bad[k], NULL, NULL, -1,
						     &png, &pn, &err), LFS_ERR_UNSUPPORTED);
		assert_null(png);
	}
	/* not a model; NAD has no geometry */
	assert_int_equal(lfs_views_thumbnail("notes.txt", (const uint8_t *)"hello", 5, 256, NULL,
					     NULL, -1, &png, &pn, &err), LFS_ERR_NOTFORMAT);
	free(d);
}

/* ---- corpus ---------------------------------------------------------------- */

/* Does the decoded NWN model have a mesh the renderer must draw? */
static bool nwn_has_drawable(const uint8_t *d, size_t n)
{
	nwn_model *m = NULL;
	lfs_error err;
	if (nwn_mdl_decode(d, n, &m, &err))
		return false;
	bool any = false;
	for (uint32_t i = 0; i < m->geom.n_nodes; i++) {
		const nwn_node *nd = &m->geom.nodes[i];
		const nwn_mesh *me = nd->mesh;
		float alpha = 1;
		for (uint32_t k = 0; me && k < nd->n_ctrls; k++)
			if (nd->ctrls[k].type == NWN_CTRL_ALPHA && nd->ctrls[k].ncols &&
			    nd->ctrls[k].data_offset < nd->n_ctrl_data) {
				alpha = nd->ctrl_data[nd->ctrls[k].data_offset];
				break;
			}
		/* alpha 0 at rest: drawn only when an animation fades it in
		 * (the largest key any animation gives the node's alpha) */
		if (me && !(alpha > 0.01f)) {
			for (uint32_t a = 0; a < m->n_anims; a++)
				for (uint32_t j = 0; j < m->anims[a].geom.n_nodes; j++) {
					const nwn_node *an = &m->anims[a].geom.nodes[j];
					if (strcasecmp(an->name, nd->name))
						continue;
					for (uint32_t k = 0; k < an->n_ctrls; k++) {
						const nwn_controller *c = &an->ctrls[k];
						for (uint32_t r = 0; c->type == NWN_CTRL_ALPHA && c->ncols &&
								     r < c->rows; r++) {
							size_t at = c->data_offset + (size_t)r * c->ncols;
							if (at < an->n_ctrl_data && an->ctrl_data[at] > alpha)
								alpha = an->ctrl_data[at];
						}
					}
				}
		}
		if (me && me->render && !me->aabb && me->verts && me->faces && me->n_faces && alpha > 0.01f)
			for (uint32_t f = 0; f < me->n_faces; f++)
				if (me->faces[f].v[0] < me->n_verts && me->faces[f].v[1] < me->n_verts &&
				    me->faces[f].v[2] < me->n_verts)
					any = true;
	}
	nwn_model_free(m);
	return any;
}

static void check_rendered(const char *path, lfs_err r, const img *im)
{
	if (r != LFS_OK)
		fail_msg("%s: thumbnail failed (%d)", path, (int)r);
	size_t partial, visible;
	alpha_stats(im, &partial, &visible);
	if (visible < 50 || !partial)
		fail_msg("%s: thumbnail nearly empty (%zu visible, %zu partial)", path, visible, partial);
}

static void test_corpus_nwn(void **state)
{
	(void)state;
	const char *dir = corpus_or_skip();
	char list[4096], prefix[4096];
	snprintf(list, sizeof(list), "%s/nwn/binary.txt", dir);
	snprintf(prefix, sizeof(prefix), "%s/nwn", dir);
	size_t count = 0;
	char **files = lfs_read_list(list, prefix, &count);
	assert_non_null(files);
	size_t drawn = 0, shields = 0;
	for (size_t i = 0; i < count; i++) {
		size_t n;
		uint8_t *d = lfs_read_file_ok(files[i], &n);
		const char *base = strrchr(files[i], '/') + 1;
		img im = { 0 };
		lfs_err r = render_file(base, d, n, 128, NULL, &im);
		if (nwn_has_drawable(d, n)) {
			check_rendered(files[i], r, &im);
			drawn++;
			/* alpha 0 at rest, faded in by the animations: drawn as in play */
			shields += !strncasecmp(base, "vdr_eleshield", 13);
		} else if (r != LFS_ERR_UNSUPPORTED) {
			fail_msg("%s: no drawable mesh, yet thumbnail returned %d", files[i], (int)r);
		}
		free(im.rgba);
		free(d);
	}
	print_message("NWN binaries: %zu of %zu have drawable meshes and render (%zu vdr_eleshield)\n",
		      drawn, count, shields);
	assert_true(drawn >= 10);
	assert_int_equal(shields, 3);
	lfs_free_list(files);
}

static void corpus_dir_models(const char *sub, const char *ext, bool expect_ok)
{
	const char *dir = corpus_or_skip();
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s/MANIFEST.tsv", dir, sub);
	size_t mn;
	char *man = (char *)lfs_read_file(path, &mn);
	assert_non_null(man);
	size_t tried = 0;
	for (char *line = strtok(man, "\n"); line; line = strtok(NULL, "\n")) {
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		size_t ln = strlen(line), el = strlen(ext);
		if (ln <= el || strcmp(line + ln - el, ext))
			continue;
		bool disputed = !strncmp(line, "disputed/", 9);
		if (disputed == expect_ok)
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, line);
		size_t n;
		uint8_t *d = lfs_read_file(path, &n);
		if (!d)
			continue; /* listed elsewhere (e.g. disputed/ rows) */
		img im = { 0 };
		lfs_err r = render_file(line, d, n, 128, NULL, &im);
		if (expect_ok)
			check_rendered(path, r, &im);
		else if (r == LFS_OK)
			fail_msg("%s: disputed file rendered", path);
		tried++;
		free(im.rgba);
		free(d);
	}
	free(man);
	print_message("%s: %zu files\n", sub, tried);
	assert_true(tried > 0);
}

static void test_corpus_nod(void **state)
{
	(void)state;
	corpus_dir_models("nod", ".nod", true);
}

static void test_corpus_sod(void **state)
{
	(void)state;
	corpus_dir_models("sod", ".sod", true);
}

static void test_corpus_sod_disputed(void **state)
{
	(void)state;
	corpus_dir_models("sod", ".sod", false);
}

/* NAD: animations only, never a thumbnail */
static void test_corpus_nad(void **state)
{
	(void)state;
	const char *dir = corpus_or_skip();
	char path[4096];
	snprintf(path, sizeof(path), "%s/nad/MANIFEST.tsv", dir);
	size_t mn;
	char *man = (char *)lfs_read_file(path, &mn);
	assert_non_null(man);
	size_t tried = 0;
	for (char *line = strtok(man, "\n"); line; line = strtok(NULL, "\n")) {
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		snprintf(path, sizeof(path), "%s/nad/%s", dir, line);
		size_t n;
		uint8_t *d = lfs_read_file(path, &n);
		if (!d)
			continue;
		assert_ptr_equal(lfs_format_for(line, d, n), &lfs_format_nad);
		uint8_t *png = NULL;
		size_t pn;
		lfs_error err;
		assert_int_equal(lfs_views_thumbnail(line, d, n, 256, NULL, NULL, -1, &png, &pn, &err),
				 LFS_ERR_UNSUPPORTED);
		assert_null(png);
		tried++;
		free(d);
	}
	free(man);
	assert_true(tried > 0);
}

/* ---- hostile --------------------------------------------------------------- */

static uint32_t plain_mat(lfs_thumb_scene *s)
{
	lfs_thumb_mat m = { .rgb = { 0.5f, 0.6f, 0.7f }, .tex = LFS_THUMB_NONE };
	return lfs_thumb_add_mat(s, &m);
}

static lfs_err render_scene(lfs_thumb_scene *s, unsigned size, size_t *visible)
{
	uint8_t *rgba = NULL;
	lfs_error err;
	lfs_err r = lfs_thumb_render(s, size, &rgba, &err);
	*visible = 0;
	if (!r)
		for (size_t i = 0; i < (size_t)size * size; i++)
			*visible += rgba[4 * i + 3] > 0;
	free(rgba);
	return r;
}

static void tri(lfs_thumb_scene *s, uint32_t a, uint32_t b, uint32_t c, uint32_t m)
{
	lfs_thumb_tri t = { { a, b, c }, { LFS_THUMB_NONE, LFS_THUMB_NONE, LFS_THUMB_NONE }, m };
	lfs_thumb_add_tri(s, &t);
}

static void test_hostile_geometry(void **state)
{
	(void)state;
	size_t vis;
	/* no faces */
	lfs_thumb_scene s = { 0 };
	plain_mat(&s);
	lfs_thumb_add_pos(&s, (float[]){ 0, 0, 0 }, NULL);
	assert_int_equal(render_scene(&s, 256, &vis), LFS_ERR_UNSUPPORTED);
	lfs_thumb_scene_free(&s);
	/* nothing at all */
	assert_int_equal(render_scene(&s, 256, &vis), LFS_ERR_UNSUPPORTED);

	/* NaN / inf positions: those triangles are skipped */
	plain_mat(&s);
	lfs_thumb_add_pos(&s, (float[]){ NAN, 0, 0 }, NULL);
	lfs_thumb_add_pos(&s, (float[]){ 1, INFINITY, 0 }, NULL);
	lfs_thumb_add_pos(&s, (float[]){ 0, 1, -INFINITY }, NULL);
	lfs_thumb_add_pos(&s, (float[]){ 0, 0, 0 }, NULL);
	lfs_thumb_add_pos(&s, (float[]){ 1, 0, 0 }, NULL);
	lfs_thumb_add_pos(&s, (float[]){ 0, 0, 1 }, (float[]){ NAN, NAN, NAN });
	tri(&s, 0, 1, 2, 0);
	tri(&s, 0, 4, 5, 0);
	assert_int_equal(lfs_thumb_drawable(&s), 0);
	assert_int_equal(render_scene(&s, 256, &vis), LFS_ERR_UNSUPPORTED);
	tri(&s, 3, 4, 5, 0); /* one good triangle */
	assert_int_equal(lfs_thumb_drawable(&s), 1);
	assert_int_equal(render_scene(&s, 256, &vis), LFS_OK);
	assert_true(vis > 1000);
	/* bad indices and materials are skipped */
	tri(&s, 3, 4, 99, 0);
	tri(&s, 3, 4, 5, 7);
	lfs_thumb_tri bt = { { 3, 4, 5 }, { 0, 1, 2 }, 0 }; /* no UVs in the scene */
	lfs_thumb_add_tri(&s, &bt);
	assert_int_equal(lfs_thumb_drawable(&s), 1);
	assert_int_equal(render_scene(&s, 128, &vis), LFS_OK);
	lfs_thumb_scene_free(&s);

	/* huge coordinates, also mixed with tiny ones */
	float big[] = { 1e30f, -1e30f, 3e38f, 1e-30f };
	for (int k = 0; k < 4; k++) {
		plain_mat(&s);
		float b = big[k];
		lfs_thumb_add_pos(&s, (float[]){ 0, 0, 0 }, NULL);
		lfs_thumb_add_pos(&s, (float[]){ b, 0, 0 }, NULL);
		lfs_thumb_add_pos(&s, (float[]){ 0, b, b }, NULL);
		lfs_thumb_add_pos(&s, (float[]){ 1, 1, 1 }, NULL);
		lfs_thumb_add_pos(&s, (float[]){ 1, 2, 1 }, NULL);
		lfs_thumb_add_pos(&s, (float[]){ 2, 1, 3 }, NULL);
		tri(&s, 0, 1, 2, 0);
		tri(&s, 3, 4, 5, 0);
		unsigned sizes[] = { 128, 1024 };
		for (int z = 0; z < 2; z++) {
			assert_int_equal(render_scene(&s, sizes[z], &vis), LFS_OK);
			assert_true(vis > 0);
		}
		lfs_thumb_scene_free(&s);
	}

	/* degenerate triangles only: a point, a line, repeated indices */
	plain_mat(&s);
	lfs_thumb_add_pos(&s, (float[]){ 1, 1, 1 }, NULL);
	lfs_thumb_add_pos(&s, (float[]){ 1, 1, 1 }, NULL);
	lfs_thumb_add_pos(&s, (float[]){ 2, 2, 2 }, NULL);
	lfs_thumb_add_pos(&s, (float[]){ 3, 3, 3 }, NULL);
	for (int i = 0; i < 1000; i++) {
		tri(&s, 0, 1, 0, 0);
		tri(&s, 0, 2, 3, 0);
		tri(&s, 2, 2, 2, 0);
	}
	assert_int_equal(render_scene(&s, 256, &vis), LFS_OK);
	assert_int_equal(vis, 0);
	lfs_thumb_scene_free(&s);

	/* textured with hostile UVs and a 1x1 texture */
	lfs_thumb_mat tm = { .rgb = { 1, 1, 1 }, .alpha_test = true };
	uint8_t *px = malloc(4);
	memcpy(px, (uint8_t[]){ 10, 200, 30, 255 }, 4);
	tm.tex = lfs_thumb_add_tex(&s, px, 1, 1);
	assert_int_equal(tm.tex, 0);
	lfs_thumb_add_mat(&s, &tm);
	lfs_thumb_add_pos(&s, (float[]){ 0, 0, 0 }, NULL);
	lfs_thumb_add_pos(&s, (float[]){ 1, 0, 0 }, NULL);
	lfs_thumb_add_pos(&s, (float[]){ 0, 0, 1 }, NULL);
	lfs_thumb_add_uv(&s, NAN, 1e30f);
	lfs_thumb_add_uv(&s, -1e38f, INFINITY);
	lfs_thumb_add_uv(&s, -0.0f, -1e-45f);
	lfs_thumb_tri tt = { { 0, 1, 2 }, { 0, 1, 2 }, 0 };
	lfs_thumb_add_tri(&s, &tt);
	assert_int_equal(render_scene(&s, 512, &vis), LFS_OK);
	assert_true(vis > 1000);
	lfs_thumb_scene_free(&s);

	/* random soup with some NaNs, every size; the test counts on its own
	 * which triangles are drawable (indices in range, material 0 — the
	 * only one —, three finite corners) */
	bool fin[300];
	for (int i = 0; i < 300; i++) {
		float p[3];
		for (int c = 0; c < 3; c++) {
			p[c] = lfs_rng_f32_bits(&g_rng); /* any bit pattern, NaN and inf included */
			if (lfs_rng_below(&g_rng, 4))
				p[c] = (float)lfs_rng_below(&g_rng, 2000) / 100.0f - 10.0f;
		}
		fin[i] = isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
		lfs_thumb_add_pos(&s, p, NULL);
	}
	plain_mat(&s);
	size_t drawable = 0;
	for (int i = 0; i < 2000; i++) {
		uint32_t a = (uint32_t)lfs_rng_below(&g_rng, 310), b = (uint32_t)lfs_rng_below(&g_rng, 300),
			 c = (uint32_t)lfs_rng_below(&g_rng, 300), m = (uint32_t)lfs_rng_below(&g_rng, 2);
		drawable += a < 300 && m == 0 && fin[a] && fin[b] && fin[c];
		tri(&s, a, b, c, m);
	}
	assert_int_equal(lfs_thumb_drawable(&s), drawable);
	unsigned sizes[] = { 128, 256, 512, 1024 };
	for (int z = 0; z < 4; z++) {
		size_t again;
		assert_int_equal(render_scene(&s, sizes[z], &vis), drawable ? LFS_OK : LFS_ERR_UNSUPPORTED);
		/* the same scene draws the same pixels: no uninitialised state */
		assert_int_equal(render_scene(&s, sizes[z], &again), drawable ? LFS_OK : LFS_ERR_UNSUPPORTED);
		assert_int_equal(vis, again);
	}
	lfs_thumb_scene_free(&s);
}

/* What lfs_views_thumbnail() gave for hostile bytes at size 128: either a
 * 128 x 128 RGBA PNG that decodes (and no error), or a clean refusal — a
 * layout error code, no PNG, and a message; returns the visible pixels. */
static size_t check_hostile_thumb(lfs_err r, const uint8_t *png, size_t pn, const lfs_error *err)
{
	if (r != LFS_OK) {
		if (r != LFS_ERR_NOTFORMAT && r != LFS_ERR_CORRUPT && r != LFS_ERR_UNSUPPORTED)
			fail_msg("hostile bytes: error code %d (%s)", (int)r, err->msg);
		assert_null(png);
		assert_int_equal(err->code, r);
		assert_true(err->msg[0] != '\0');
		return 0;
	}
	assert_non_null(png);
	img im;
	if (!png_decode(png, pn, &im))
		fail_msg("hostile bytes: the thumbnail (%zu bytes) is not a PNG libpng reads", pn);
	assert_int_equal(im.w, 128);
	assert_int_equal(im.h, 128);
	size_t partial, visible;
	alpha_stats(&im, &partial, &visible);
	free(im.rgba);
	return visible;
}

/* Visible pixels of the generated house (make_nod / make_sod: a box with a
 * chimney and a small annex) drawn at 128 x 128 without textures. Checked by
 * looking at the picture: the main box spans about 105 x 95 of the frame
 * less its sloped corners, the annex and chimney add a little; 8,876 pixels
 * (54 %) when this was written. The range takes 40 %..67 %: an empty, a
 * misframed (too small, cut off) or an all-covered frame falls outside. */
#define HOUSE_VISIBLE_MIN 6500
#define HOUSE_VISIBLE_MAX 11000

static void test_hostile_bytes(void **state)
{
	(void)state;
	size_t n;
	uint8_t *orig = sample_bytes("box.mdl", &n);
	uint8_t *d = malloc(n);
	for (int it = 0; it < 300; it++) {
		memcpy(d, orig, n);
		lfs_rng_mutate(&g_rng, d, n, 1 + (unsigned)lfs_rng_below(&g_rng, 8), 0, false);
		uint8_t *png = NULL;
		size_t pn;
		lfs_error err;
		lfs_err r = lfs_views_thumbnail("box.mdl", d, n, 128, NULL, NULL, -1, &png, &pn, &err);
		check_hostile_thumb(r, png, pn, &err);
		free(png);
	}
	free(d);
	free(orig);
	/* generated NOD and SOD, truncated and flipped */
	for (int f = 0; f < 2; f++) {
		orig = f ? make_sod(&n) : make_nod(&n);
		/* unmutated: drawn; cut by one byte: refused */
		uint8_t *png0 = NULL;
		size_t pn0;
		lfs_error err0;
		lfs_err r0 = lfs_views_thumbnail(f ? "x.sod" : "x.nod", orig, n, 128, NULL, NULL, -1, &png0,
						&pn0, &err0);
		assert_int_equal(r0, LFS_OK);
		size_t visible = check_hostile_thumb(r0, png0, pn0, &err0);
		print_message("%s unmutated at 128: %zu visible pixels\n", f ? "SOD" : "NOD", visible);
		assert_in_range(visible, HOUSE_VISIBLE_MIN, HOUSE_VISIBLE_MAX);
		free(png0);
		png0 = NULL;
		r0 = lfs_views_thumbnail(f ? "x.sod" : "x.nod", orig, n - 1, 128, NULL, NULL, -1, &png0, &pn0,
					&err0);
		assert_int_not_equal(r0, LFS_OK);
		check_hostile_thumb(r0, png0, pn0, &err0);
		d = malloc(n);
		for (int it = 0; it < 200; it++) {
			memcpy(d, orig, n);
			size_t len = it < 40 ? n * (size_t)it / 40 : n;
			lfs_rng_mutate(&g_rng, d, n, 4, 0, false);
			uint8_t *png = NULL;
			size_t pn;
			lfs_error err;
			lfs_err r = lfs_views_thumbnail(f ? "x.sod" : "x.nod", d, len, 128, NULL, NULL, -1,
							&png, &pn, &err);
			check_hostile_thumb(r, png, pn, &err);
			free(png);
		}
		free(d);
		free(orig);
	}
	/* the TGA decoder on flipped and truncated textures */
	char p[4096];
	snprintf(p, sizeof(p), "%s/samples/lfs_crate.tga", src_root());
	orig = lfs_read_file_ok(p, &n);
	d = malloc(n);
	for (int it = 0; it < 500; it++) {
		memcpy(d, orig, n);
		lfs_rng_mutate(&g_rng, d, n, 3, 0, true);
		uint8_t *rgba;
		uint32_t w, h;
		if (lfs_thumb_decode_tga(d, it < 100 ? n * (size_t)it / 100 : n, &rgba, &w, &h)) {
			assert_true(w > 0 && h > 0 && w <= 8192 && h <= 8192);
			free(rgba);
		}
	}
	/* DDS and PLT bytes are not decoded as TGA */
	uint8_t dds[128] = "DDS ", plt[128] = "PLT V1  ";
	uint8_t *rgba;
	uint32_t w, h;
	assert_false(lfs_thumb_decode_tga(dds, sizeof(dds), &rgba, &w, &h));
	assert_false(lfs_thumb_decode_tga(plt, sizeof(plt), &rgba, &w, &h));
	free(d);
	free(orig);
}

int main(void)
{
	lfs_rng_seed(&g_rng, "thumb", 0x9E3779B97F4A7C15ull);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_box),
		cmocka_unit_test(test_golden_skin2bone),
		cmocka_unit_test(test_golden_nod),
		cmocka_unit_test(test_golden_sod),
		cmocka_unit_test(test_golden_nil),
		cmocka_unit_test(test_alpha_edges),
		cmocka_unit_test(test_texture_lookup),
		cmocka_unit_test(test_sod_lod),
		cmocka_unit_test(test_nil_triangles),
		cmocka_unit_test(test_png_format),
		cmocka_unit_test(test_corpus_nwn),
		cmocka_unit_test(test_corpus_nod),
		cmocka_unit_test(test_corpus_sod),
		cmocka_unit_test(test_corpus_sod_disputed),
		cmocka_unit_test(test_corpus_nad),
		cmocka_unit_test(test_hostile_geometry),
		cmocka_unit_test(test_hostile_bytes),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
