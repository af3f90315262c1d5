/**
 * @file test_thumb_geom.c
 * A geometric oracle for the thumbnail renderer (src/render/thumb.c): the test
 * computes, itself, the camera and framing that docs/thumbnails.md "Axes and
 * the camera" documents, projects known points with it and checks where the
 * renderer drew them. No golden image: a picture that looks right but is
 * upside down, mirrored, fitted on one axis only or not centred on the
 * model fails.
 *
 * The camera as encoded here (docs/thumbnails.md "Axes and the camera",
 * the "Exactly" list):
 *  - c = centre of the axis-aligned bounding box of the drawn vertices,
 *    R = the largest distance from c to a drawn vertex;
 *  - eye = c + 3.5 R · (1, 1, 0.5)/1.5, forward f = −(1, 1, 0.5)/1.5,
 *    right = normalize(f × +Z), up = right × f (world +Z is up in the image);
 *  - a point p projects to (x, y) = ((p − eye)·right, (p − eye)·up) / ((p − eye)·f);
 *  - framing: the bounding box of the projected drawn vertices, its larger
 *    side scaled to size · (1 − 2 · 0.03), its centre at the image centre:
 *    pixel column sx = size/2 + (x − mx)·scale, row sy = size/2 − (y − my)·scale
 *    (rows down), pixel (i, j) covering [i, i+1) × [j, j+1).
 *
 * Texture convention: UVs are v up, (0, 0) = the bottom-left of the image
 * (src/render/thumb.h, docs/thumbnails.md "Texture sampling"); a TGA's first
 * stored row is its bottom row unless bit 5 (0x20) of the image descriptor
 * says top-left origin (Truevision TGA 2.0 specification, "Image
 * Descriptor"), which stb_image honours. Both origins are written here.
 *
 * Tests:
 *  - texture_quadrants: a 64×64 TGA of four colours (red top-left, green
 *    top-right, blue bottom-left, yellow bottom-right as the image is seen,
 *    i.e. red at u < 0.5, v > 0.5) on quads of three orientations; the pixel
 *    at the projection of each quadrant's centre, and its neighbours, must
 *    have that quadrant's colour;
 *  - silhouette_boxes: long, tall and deep boxes far from the origin; pixels
 *    well inside the projected convex hull of the 8 corners are opaque, well
 *    outside transparent, and the covered pixels' bounding box matches the
 *    projected one within TOL_PX.
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

#include "corpus.h"
#include "render/thumb.h"

#define CAM_DIST 3.5 /* docs/thumbnails.md: eye at 3.5 bounding radii */
#define MARGIN 0.03  /* docs/thumbnails.md: 3 % margin on each side */
#define TOL_PX 2.0   /* silhouette extent vs the projected bounding box */
#define BAND_PX 1.5  /* "well inside/outside": distance from the hull's edges */

/* ---- the documented camera, computed here -------------------------------- */

typedef struct cam {
	unsigned size;
	double eye[3], f[3], rt[3], up[3];
	double mx, my, scale;
} cam;

static double dot(const double *a, const double *b)
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross(const double *a, const double *b, double *o)
{
	o[0] = a[1] * b[2] - a[2] * b[1];
	o[1] = a[2] * b[0] - a[0] * b[2];
	o[2] = a[0] * b[1] - a[1] * b[0];
}

static void normalize(double *a)
{
	double l = sqrt(dot(a, a));
	for (int k = 0; k < 3; k++)
		a[k] /= l;
}

static void cam_project(const cam *k, const double p[3], double *x, double *y)
{
	double d[3] = { p[0] - k->eye[0], p[1] - k->eye[1], p[2] - k->eye[2] };
	double z = dot(d, k->f);
	*x = dot(d, k->rt) / z;
	*y = dot(d, k->up) / z;
}

/* Camera and framing for the drawn vertices @p p (n of them). */
static void cam_fit(cam *k, const double (*p)[3], size_t n, unsigned size)
{
	double lo[3] = { INFINITY, INFINITY, INFINITY },
	       hi[3] = { -INFINITY, -INFINITY, -INFINITY };
	for (size_t i = 0; i < n; i++)
		for (int a = 0; a < 3; a++) {
			lo[a] = fmin(lo[a], p[i][a]);
			hi[a] = fmax(hi[a], p[i][a]);
		}
	double c[3], R = 0;
	for (int a = 0; a < 3; a++)
		c[a] = (lo[a] + hi[a]) / 2;
	for (size_t i = 0; i < n; i++) {
		double d[3] = { p[i][0] - c[0], p[i][1] - c[1], p[i][2] - c[2] };
		R = fmax(R, sqrt(dot(d, d)));
	}
	double dir[3] = { 1, 1, 0.5 }, zup[3] = { 0, 0, 1 };
	normalize(dir);
	k->size = size;
	for (int a = 0; a < 3; a++) {
		k->eye[a] = c[a] + CAM_DIST * R * dir[a];
		k->f[a] = -dir[a];
	}
	cross(k->f, zup, k->rt);
	normalize(k->rt);
	cross(k->rt, k->f, k->up);
	double plo[2] = { INFINITY, INFINITY }, phi[2] = { -INFINITY, -INFINITY };
	for (size_t i = 0; i < n; i++) {
		double x, y;
		cam_project(k, p[i], &x, &y);
		plo[0] = fmin(plo[0], x);
		plo[1] = fmin(plo[1], y);
		phi[0] = fmax(phi[0], x);
		phi[1] = fmax(phi[1], y);
	}
	k->mx = (plo[0] + phi[0]) / 2;
	k->my = (plo[1] + phi[1]) / 2;
	k->scale = size * (1 - 2 * MARGIN) / fmax(phi[0] - plo[0], phi[1] - plo[1]);
}

/* Image position (pixels, rows down) of the scene point @p p. */
static void cam_pixel(const cam *k, const double p[3], double *sx, double *sy)
{
	double x, y;
	cam_project(k, p, &x, &y);
	*sx = k->size / 2.0 + (x - k->mx) * k->scale;
	*sy = k->size / 2.0 - (y - k->my) * k->scale;
}

/* ---- scenes ---------------------------------------------------------------- */

static uint32_t add_p(lfs_thumb_scene *s, const double p[3])
{
	float q[3] = { (float)p[0], (float)p[1], (float)p[2] };
	return lfs_thumb_add_pos(s, q, NULL);
}

static uint8_t *render(lfs_thumb_scene *s, unsigned size)
{
	assert_false(s->failed);
	uint8_t *img = NULL;
	lfs_error err;
	assert_int_equal(lfs_thumb_render(s, size, &img, &err), LFS_OK);
	assert_non_null(img);
	return img;
}

/* ---- 1. texture orientation ------------------------------------------------ */

enum { TEX = 64 };
enum { RED, GREEN, BLUE, YELLOW, OTHER };
static const char *const col_name[] = { "red", "green", "blue", "yellow", "other" };
static const uint8_t col_rgb[4][3] = {
	{ 255, 0, 0 }, { 0, 255, 0 }, { 0, 0, 255 }, { 255, 255, 0 }
};

/* Colour of texel (u, v up) of the test texture: red where u < 0.5, v > 0.5 … */
static int quadrant(double u, double v)
{
	return v >= 0.5 ? (u < 0.5 ? RED : GREEN) : (u < 0.5 ? BLUE : YELLOW);
}

/* An uncompressed 24-bit TGA (image type 2) of the test texture; @p top_left
 * sets descriptor bit 5 (rows stored top first), else rows are stored bottom
 * first (the TGA default). */
static uint8_t *make_tga(bool top_left, size_t *n)
{
	*n = 18 + (size_t)TEX * TEX * 3;
	uint8_t *t = calloc(1, *n);
	assert_non_null(t);
	t[2] = 2;
	t[12] = TEX;
	t[14] = TEX;
	t[16] = 24;
	t[17] = top_left ? 0x20 : 0x00;
	for (int row = 0; row < TEX; row++) {
		/* row from the bottom of the image */
		int from_bottom = top_left ? TEX - 1 - row : row;
		double v = (from_bottom + 0.5) / TEX;
		for (int x = 0; x < TEX; x++) {
			const uint8_t *c = col_rgb[quadrant((x + 0.5) / TEX, v)];
			uint8_t *o = t + 18 + ((size_t)row * TEX + (size_t)x) * 3;
			o[0] = c[2]; /* BGR */
			o[1] = c[1];
			o[2] = c[0];
		}
	}
	return t;
}

static int classify(const uint8_t *px)
{
	if (px[3] != 255)
		return OTHER;
	double m = fmax(px[0], fmax(px[1], px[2]));
	if (m < 40)
		return OTHER;
	bool h[3], l[3];
	for (int k = 0; k < 3; k++) {
		h[k] = px[k] > 0.6 * m;
		l[k] = px[k] < 0.2 * m;
	}
	if (h[0] && l[1] && l[2])
		return RED;
	if (h[1] && l[0] && l[2])
		return GREEN;
	if (h[2] && l[0] && l[1])
		return BLUE;
	if (h[0] && h[1] && l[2])
		return YELLOW;
	return OTHER;
}

/* A quad with uv (0,0) at @p o, u along @p U, v along @p V, textured by the
 * test TGA; each quadrant's centre must show that quadrant's colour. */
static void check_quad(const char *what, const double o[3], const double U[3], const double V[3],
		       bool top_left, unsigned size)
{
	size_t n;
	uint8_t *tga = make_tga(top_left, &n);
	uint8_t *rgba;
	uint32_t w, h;
	assert_true(lfs_thumb_decode_tga(tga, n, &rgba, &w, &h));
	free(tga);
	assert_int_equal(w, TEX);
	assert_int_equal(h, TEX);

	lfs_thumb_scene s = { 0 };
	uint32_t tex = lfs_thumb_add_tex(&s, rgba, w, h);
	lfs_thumb_mat m = { .rgb = { 0.5f, 0.5f, 0.5f }, .tex = tex };
	uint32_t mat = lfs_thumb_add_mat(&s, &m);
	double p[4][3];
	static const double cuv[4][2] = { { 0, 0 }, { 1, 0 }, { 1, 1 }, { 0, 1 } };
	uint32_t vi[4], ti[4];
	for (int i = 0; i < 4; i++) {
		for (int a = 0; a < 3; a++)
			p[i][a] = o[a] + cuv[i][0] * U[a] + cuv[i][1] * V[a];
		vi[i] = add_p(&s, p[i]);
		ti[i] = lfs_thumb_add_uv(&s, (float)cuv[i][0], (float)cuv[i][1]);
	}
	lfs_thumb_add_tri(
		&s, &(lfs_thumb_tri){ { vi[0], vi[1], vi[2] }, { ti[0], ti[1], ti[2] }, mat });
	lfs_thumb_add_tri(
		&s, &(lfs_thumb_tri){ { vi[0], vi[2], vi[3] }, { ti[0], ti[2], ti[3] }, mat });
	uint8_t *img = render(&s, size);
	lfs_thumb_scene_free(&s);

	cam k;
	cam_fit(&k, (const double(*)[3])p, 4, size);
	int bad = 0;
	for (int q = 0; q < 4; q++) {
		double u = q & 1 ? 0.75 : 0.25, v = q & 2 ? 0.75 : 0.25;
		double pt[3];
		for (int a = 0; a < 3; a++)
			pt[a] = o[a] + u * U[a] + v * V[a];
		double sx, sy;
		cam_pixel(&k, pt, &sx, &sy);
		int want = quadrant(u, v);
		for (int dy = -3; dy <= 3; dy += 3)
			for (int dx = -3; dx <= 3; dx += 3) {
				int x = (int)floor(sx) + dx, y = (int)floor(sy) + dy;
				assert_true(x >= 0 && y >= 0 && x < (int)size && y < (int)size);
				const uint8_t *px = img + ((size_t)y * size + (size_t)x) * 4;
				int got = classify(px);
				if (got != want && bad++ < 4)
					print_error(
						"%s (%s TGA, %u px): uv (%.2f, %.2f) projects to "
						"pixel (%d, %d): want %s, got %s (%u %u %u %u)\n",
						what, top_left ? "top-left" : "bottom-left", size,
						u, v, x, y, col_name[want], col_name[got], px[0],
						px[1], px[2], px[3]);
			}
	}
	free(img);
	assert_int_equal(bad, 0);
}

static void test_texture_quadrants(void **state)
{
	(void)state;
	/* screen right is (−1, 1, 0)/√2 and screen up mostly +Z */
	const double o1[3] = { 6, 4, 2 }, U1[3] = { -2, 2, 0 }, V1[3] = { 0, 0, 2 };
	/* the same wall with u running to the screen's left (seen from the back) */
	const double o2[3] = { -3, 9, -1 }, U2[3] = { 2, -2, 0 }, V2[3] = { 0, 0, 2 };
	/* a floor seen from above, u along +X, v along +Y (away from the camera) */
	const double o3[3] = { 10, -20, 0 }, U3[3] = { 3, 0, 0 }, V3[3] = { 0, 3, 0 };
	for (int tl = 0; tl < 2; tl++) {
		check_quad("wall", o1, U1, V1, tl, 256);
		check_quad("mirrored wall", o2, U2, V2, tl, 256);
		check_quad("floor", o3, U3, V3, tl, 256);
	}
	check_quad("wall", o1, U1, V1, false, 128);
}

/* ---- 2. silhouettes of boxes: projection and framing ------------------------- */

typedef struct pt2 {
	double x, y;
} pt2;

static int cmp_pt(const void *a, const void *b)
{
	const pt2 *p = a, *q = b;
	if (p->x != q->x)
		return p->x < q->x ? -1 : 1;
	return p->y < q->y ? -1 : (p->y > q->y ? 1 : 0);
}

static double cross2(pt2 o, pt2 a, pt2 b)
{
	return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

/* Convex hull (Andrew's monotone chain), counter-clockwise in (x, y). */
static size_t hull(pt2 *p, size_t n, pt2 *h)
{
	qsort(p, n, sizeof(*p), cmp_pt);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		while (k >= 2 && cross2(h[k - 2], h[k - 1], p[i]) <= 0)
			k--;
		h[k++] = p[i];
	}
	for (size_t i = n - 1, t = k + 1; i-- > 0;) {
		while (k >= t && cross2(h[k - 2], h[k - 1], p[i]) <= 0)
			k--;
		h[k++] = p[i];
	}
	return k - 1;
}

/* Signed distance from @p q to the boundary of the convex polygon @p h
 * (counter-clockwise): positive inside. */
static double hull_dist(const pt2 *h, size_t n, pt2 q)
{
	double d = INFINITY;
	for (size_t i = 0; i < n; i++) {
		pt2 a = h[i], b = h[(i + 1) % n];
		double len = hypot(b.x - a.x, b.y - a.y);
		d = fmin(d, cross2(a, b, q) / len);
	}
	return d;
}

static void check_box(const char *what, const double lo[3], const double hi[3], unsigned size)
{
	double p[8][3];
	lfs_thumb_scene s = { 0 };
	lfs_thumb_mat m = { .rgb = { 0.6f, 0.6f, 0.6f }, .tex = LFS_THUMB_NONE };
	uint32_t mat = lfs_thumb_add_mat(&s, &m);
	uint32_t vi[8];
	for (int i = 0; i < 8; i++) {
		p[i][0] = i & 1 ? hi[0] : lo[0];
		p[i][1] = i & 2 ? hi[1] : lo[1];
		p[i][2] = i & 4 ? hi[2] : lo[2];
		vi[i] = add_p(&s, p[i]);
	}
	/* 6 faces as quads of corner indices (bit 0 = x, 1 = y, 2 = z) */
	static const int face[6][4] = { { 0, 2, 6, 4 }, { 1, 5, 7, 3 }, { 0, 4, 5, 1 },
					{ 2, 3, 7, 6 }, { 0, 1, 3, 2 }, { 4, 6, 7, 5 } };
	for (int f = 0; f < 6; f++) {
		const int *q = face[f];
		lfs_thumb_add_tri(
			&s, &(lfs_thumb_tri){ { vi[q[0]], vi[q[1]], vi[q[2]] },
					      { LFS_THUMB_NONE, LFS_THUMB_NONE, LFS_THUMB_NONE },
					      mat });
		lfs_thumb_add_tri(
			&s, &(lfs_thumb_tri){ { vi[q[0]], vi[q[2]], vi[q[3]] },
					      { LFS_THUMB_NONE, LFS_THUMB_NONE, LFS_THUMB_NONE },
					      mat });
	}
	uint8_t *img = render(&s, size);
	lfs_thumb_scene_free(&s);

	cam k;
	cam_fit(&k, (const double(*)[3])p, 8, size);
	pt2 sp[8], h[9];
	double ex0 = INFINITY, ex1 = -INFINITY, ey0 = INFINITY, ey1 = -INFINITY;
	for (int i = 0; i < 8; i++) {
		cam_pixel(&k, p[i], &sp[i].x, &sp[i].y);
		ex0 = fmin(ex0, sp[i].x);
		ex1 = fmax(ex1, sp[i].x);
		ey0 = fmin(ey0, sp[i].y);
		ey1 = fmax(ey1, sp[i].y);
	}
	size_t nh = hull(sp, 8, h);
	assert_true(nh >= 4);
	/* the framing itself: the larger side spans the image minus the margins */
	assert_true(fabs(fmax(ex1 - ex0, ey1 - ey0) - size * (1 - 2 * MARGIN)) < 1e-6 * size);

	int bad_in = 0, bad_out = 0;
	int gx0 = INT32_MAX, gx1 = -1, gy0 = INT32_MAX, gy1 = -1;
	for (unsigned y = 0; y < size; y++)
		for (unsigned x = 0; x < size; x++) {
			uint8_t a = img[((size_t)y * size + x) * 4 + 3];
			double d = hull_dist(h, nh, (pt2){ x + 0.5, y + 0.5 });
			if (a) {
				gx0 = (int)x < gx0 ? (int)x : gx0;
				gx1 = (int)x > gx1 ? (int)x : gx1;
				gy0 = (int)y < gy0 ? (int)y : gy0;
				gy1 = (int)y > gy1 ? (int)y : gy1;
			}
			if (d > BAND_PX && a != 255 && bad_in++ < 3)
				print_error(
					"%s at %u px: pixel (%u, %u) %.1f px inside the projected "
					"silhouette has alpha %u, want 255\n",
					what, size, x, y, d, a);
			if (d < -BAND_PX && a != 0 && bad_out++ < 3)
				print_error(
					"%s at %u px: pixel (%u, %u) %.1f px outside the projected "
					"silhouette has alpha %u, want 0\n",
					what, size, x, y, -d, a);
		}
	free(img);
	bool ext_ok = gx1 >= 0 && fabs(gx0 - ex0) <= TOL_PX && fabs(gx1 + 1 - ex1) <= TOL_PX &&
		      fabs(gy0 - ey0) <= TOL_PX && fabs(gy1 + 1 - ey1) <= TOL_PX;
	if (!ext_ok)
		print_error("%s at %u px: covered pixels span x [%d, %d) y [%d, %d), the projected "
			    "box x [%.2f, %.2f) y [%.2f, %.2f) (tolerance %.1f px)\n",
			    what, size, gx0, gx1 + 1, gy0, gy1 + 1, ex0, ex1, ey0, ey1, TOL_PX);
	assert_int_equal(bad_in, 0);
	assert_int_equal(bad_out, 0);
	assert_true(ext_ok);
}

static void test_silhouette_boxes(void **state)
{
	(void)state;
	static const unsigned sizes[] = { 128, 256, 512 };
	/* 10 × 1 × 1 along X at x = +50: wider than tall on screen */
	const double l0[3] = { 45, -0.5, -0.5 }, l1[3] = { 55, 0.5, 0.5 };
	/* 1 × 1 × 6 standing at (−20, 30, 10): taller than wide */
	const double t0[3] = { -20.5, 29.5, 7 }, t1[3] = { -19.5, 30.5, 13 };
	/* 1.5 × 8 × 0.5 along Y, below and behind the origin */
	const double d0[3] = { -0.75, -44, -7.25 }, d1[3] = { 0.75, -36, -6.75 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		check_box("long box (10x1x1 at x=+50)", l0, l1, sizes[i]);
		check_box("tall box (1x1x6 at (-20,30,10))", t0, t1, sizes[i]);
		check_box("deep box (1.5x8x0.5 at (0,-40,-7))", d0, d1, sizes[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_texture_quadrants),
		cmocka_unit_test(test_silhouette_boxes),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
