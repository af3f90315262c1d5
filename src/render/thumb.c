/**
 * @file thumb.c
 * Thumbnail renderer (see thumb.h and docs/thumbnails.md): scene building,
 * a scalar multisampling z-buffer rasterizer with exact fixed-point edge
 * functions drawing in 16-row strips, and the box-filter resolve. The PNG
 * encoding is in thumb_png.c.
 */
#include "thumb.h"
#include "../common/mem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- scene building ------------------------------------------------------ */

bool lfs_thumb_size_ok(unsigned size)
{
	return size == 128 || size == 256 || size == 512 || size == 1024;
}

void lfs_thumb_scene_free(lfs_thumb_scene *s)
{
	if (!s)
		return;
	free(s->pos);
	free(s->nrm);
	free(s->uv);
	free(s->tris);
	free(s->mats);
	for (size_t i = 0; i < s->n_texs; i++)
		free(s->texs[i].rgba);
	free(s->texs);
	memset(s, 0, sizeof(*s));
}

uint32_t lfs_thumb_add_pos(lfs_thumb_scene *s, const float p[3], const float *n)
{
	if (s->failed || s->n_pos >= UINT32_MAX - 1)
		goto fail;
	if (s->n_pos == s->cap_pos) {
		/* pos and nrm grow in step: the same rule from the same capacity */
		size_t cap = s->cap_pos, ncap = s->cap_pos;
		void *pp = s->pos, *nn = s->nrm;
		if (!lfs_grow(&pp, &cap, s->n_pos + 1, 3 * sizeof(float)))
			goto fail;
		s->pos = pp;
		if (!lfs_grow(&nn, &ncap, s->n_pos + 1, 3 * sizeof(float)))
			goto fail; /* pos grew, cap_pos not yet: next call retries */
		s->nrm = nn;
		s->cap_pos = cap;
	}
	memcpy(s->pos + 3 * s->n_pos, p, 3 * sizeof(float));
	if (n)
		memcpy(s->nrm + 3 * s->n_pos, n, 3 * sizeof(float));
	else
		memset(s->nrm + 3 * s->n_pos, 0, 3 * sizeof(float));
	return (uint32_t)s->n_pos++;
fail:
	s->failed = true;
	return LFS_THUMB_NONE;
}

uint32_t lfs_thumb_add_uv(lfs_thumb_scene *s, float u, float v)
{
	void *p = s->uv;
	if (s->failed || s->n_uv >= UINT32_MAX - 1 ||
	    !lfs_grow(&p, &s->cap_uv, s->n_uv + 1, 2 * sizeof(float))) {
		s->failed = true;
		return LFS_THUMB_NONE;
	}
	s->uv = p;
	s->uv[2 * s->n_uv] = u;
	s->uv[2 * s->n_uv + 1] = v;
	return (uint32_t)s->n_uv++;
}

uint32_t lfs_thumb_add_mat(lfs_thumb_scene *s, const lfs_thumb_mat *m)
{
	void *p = s->mats;
	if (s->failed || s->n_mats >= UINT32_MAX - 1 ||
	    !lfs_grow(&p, &s->cap_mats, s->n_mats + 1, sizeof(*m))) {
		s->failed = true;
		return LFS_THUMB_NONE;
	}
	s->mats = p;
	s->mats[s->n_mats] = *m;
	return (uint32_t)s->n_mats++;
}

/* Halve a texture (box filter) until both edges are <= LFS_THUMB_TEX_MAX. */
static uint8_t *shrink_tex(uint8_t *rgba, uint32_t *w, uint32_t *h)
{
	while (*w > LFS_THUMB_TEX_MAX || *h > LFS_THUMB_TEX_MAX) {
		uint32_t sx = *w > 1 ? 2 : 1, sy = *h > 1 ? 2 : 1;
		uint32_t nw = *w / sx, nh = *h / sy;
		uint8_t *o = malloc((size_t)nw * nh * 4);
		if (!o)
			return rgba; /* keep the big one: sampling still works */
		for (uint32_t y = 0; y < nh; y++)
			for (uint32_t x = 0; x < nw; x++)
				for (int c = 0; c < 4; c++) {
					unsigned sum = 0;
					for (uint32_t dy = 0; dy < sy; dy++)
						for (uint32_t dx = 0; dx < sx; dx++)
							sum += rgba[(((size_t)(y * sy + dy)) * *w + x * sx + dx) * 4 + c];
					o[((size_t)y * nw + x) * 4 + c] = (uint8_t)((sum + sx * sy / 2) / (sx * sy));
				}
		free(rgba);
		rgba = o;
		*w = nw;
		*h = nh;
	}
	return rgba;
}

uint32_t lfs_thumb_add_tex(lfs_thumb_scene *s, uint8_t *rgba, uint32_t w, uint32_t h)
{
	void *p = s->texs;
	if (s->failed || !rgba || !w || !h || s->n_texs >= UINT32_MAX - 1 ||
	    !lfs_grow(&p, &s->cap_texs, s->n_texs + 1, sizeof(lfs_thumb_tex))) {
		free(rgba);
		if (!rgba || !w || !h)
			return LFS_THUMB_NONE;
		s->failed = true;
		return LFS_THUMB_NONE;
	}
	s->texs = p;
	rgba = shrink_tex(rgba, &w, &h);
	bool holes = false;
	for (size_t i = 0; i < (size_t)w * h && !holes; i++)
		holes = rgba[4 * i + 3] < 128;
	s->texs[s->n_texs] = (lfs_thumb_tex){ .w = w, .h = h, .rgba = rgba, .holes = holes };
	return (uint32_t)s->n_texs++;
}

void lfs_thumb_add_tri(lfs_thumb_scene *s, const lfs_thumb_tri *t)
{
	void *p = s->tris;
	if (s->failed || !lfs_grow(&p, &s->cap_tris, s->n_tris + 1, sizeof(*t))) {
		s->failed = true;
		return;
	}
	s->tris = p;
	s->tris[s->n_tris++] = *t;
}

/* ---- validity ------------------------------------------------------------ */

static bool finite3(const float *p)
{
	return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]);
}

/* Positions, UVs and material of triangle @p t all usable? */
static bool tri_ok(const lfs_thumb_scene *s, const lfs_thumb_tri *t)
{
	if (t->mat >= s->n_mats)
		return false;
	for (int k = 0; k < 3; k++) {
		if (t->v[k] >= s->n_pos || !finite3(s->pos + 3 * (size_t)t->v[k]))
			return false;
		if (t->t[k] != LFS_THUMB_NONE && t->t[k] >= s->n_uv)
			return false;
	}
	return true;
}

size_t lfs_thumb_drawable(const lfs_thumb_scene *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n_tris; i++)
		n += tri_ok(s, &s->tris[i]);
	return n;
}

/* ---- rendering ----------------------------------------------------------- */

#define PSUB 16         /* fixed-point units per pixel (vertex snapping: 1/16 px) */
#define NS 8            /* samples per pixel */
#define AMBIENT 0.28f   /* ambient share of the light */
#define KEY 0.72f       /* key light (Lambert) share, from the upper left */
#define FILL 0.22f      /* fill light (Lambert) share, from the right */
#define CAM_DIST 3.5    /* camera distance in bounding radii */
#define MARGIN 0.03     /* margin on each side, share of the image edge */

/* Sample positions inside a pixel, in PSUB units from its top-left corner:
 * the 8-sample "rooks" pattern of Direct3D 10 (every sample in its own
 * eighth-column and eighth-row, so near-horizontal and near-vertical edges
 * get 8 coverage levels, twice those of a 4×4 grid). */
static const int32_t samp[NS][2] = {
	{ 8 + 1, 8 - 3 }, { 8 - 1, 8 + 3 }, { 8 + 5, 8 + 1 }, { 8 - 3, 8 - 5 },
	{ 8 - 5, 8 + 5 }, { 8 - 7, 8 - 1 }, { 8 + 3, 8 + 7 }, { 8 + 7, 8 - 7 },
};

/* Per position, after projection. */
typedef struct pv {
	int32_t x, y; /* pixel coordinates × PSUB */
	float iz;     /* radius / view depth: larger = nearer */
	float ndl;    /* unit normal · key light direction */
	float ndf;    /* unit normal · fill light direction */
} pv;

/* The image is drawn in horizontal strips of STRIP_PX pixel rows, so the
 * sample buffers stay small (cache-resident, no page faults at 1024²). */
#define STRIP_PX 16
/* Triangles spanning more strips than this are kept in one shared list
 * (bounded binning memory whatever the input). */
#define BIG_SPAN 4
/* Largest triangle count drawn front to back (see lfs_thumb_render). */
#define SORT_MAX 32768

typedef struct rctx {
	const lfs_thumb_scene *s;
	uint32_t size;    /* pixels per edge */
	uint32_t ys, ye;  /* pixel rows of the current strip: [ys, ye) */
	uint32_t *col;    /* size * STRIP_PX * NS, pixel-major; 0 = background,
	                     else 0xAABBGGRR with A = 255 */
	float *z;         /* same shape, 0 = nothing drawn */
	float *zpix;      /* size * STRIP_PX: per pixel the farthest of its samples'
	                     depths (0 while a sample is empty): a triangle nearer
	                     nowhere in the pixel than that is hidden there */
	pv *v;
} rctx;

static inline float clamp01(float x)
{
	return x < 0 ? 0 : (x > 1 ? 1 : x);
}

/* Bilinear, wrap-around texel fetch at (u, v up). out: 0..255 floats. */
static void sample_tex(const lfs_thumb_tex *t, float u, float v, float out[4])
{
	u -= floorf(u);
	v -= floorf(v);
	if (!(u >= 0 && u < 1))
		u = 0;
	if (!(v >= 0 && v < 1))
		v = 0;
	float x = u * (float)t->w - 0.5f, y = (1.0f - v) * (float)t->h - 0.5f;
	float fx0 = floorf(x), fy0 = floorf(y);
	float fx = x - fx0, fy = y - fy0;
	int32_t x0 = (int32_t)fx0, y0 = (int32_t)fy0;
	int32_t w = (int32_t)t->w, h = (int32_t)t->h;
	if (x0 < 0)
		x0 += w;
	if (y0 < 0)
		y0 += h;
	if (x0 >= w)
		x0 -= w;
	if (y0 >= h)
		y0 -= h;
	int32_t x1 = x0 + 1 == w ? 0 : x0 + 1, y1 = y0 + 1 == h ? 0 : y0 + 1;
	const uint8_t *a = t->rgba + ((size_t)y0 * t->w + (size_t)x0) * 4;
	const uint8_t *b = t->rgba + ((size_t)y0 * t->w + (size_t)x1) * 4;
	const uint8_t *c = t->rgba + ((size_t)y1 * t->w + (size_t)x0) * 4;
	const uint8_t *d = t->rgba + ((size_t)y1 * t->w + (size_t)x1) * 4;
	for (int k = 0; k < 4; k++) {
		float top = a[k] + (b[k] - a[k]) * fx;
		float bot = c[k] + (d[k] - c[k]) * fx;
		out[k] = top + (bot - top) * fy;
	}
}

/* Edge ownership for the fill rule: an edge shared by two triangles of the
 * same orientation is walked in opposite directions, so exactly one owns
 * the samples lying on it. */
static inline int64_t edge_bias(int64_t dx, int64_t dy)
{
	return (dy > 0 || (dy == 0 && dx < 0)) ? 0 : -1;
}

/* Colour of one shaded point: barycentrics (la, lb, lc) of the screen
 * triangle; false when an alpha-tested texel makes it a hole. */
typedef struct shade_in {
	const lfs_thumb_tex *tex;
	bool alpha_test;
	float iz[3], I[3], u[3], v[3], base[3];
} shade_in;

static inline uint32_t to8(float c)
{
	return c >= 255.0f ? 255u : (c > 0 ? (uint32_t)(c + 0.5f) : 0u);
}

static bool shade(const shade_in *si, float la, float lb, float lc, uint32_t *out)
{
	float z = la * si->iz[0] + lb * si->iz[1] + lc * si->iz[2];
	if (!(z > 0))
		return false;
	float rz = 1.0f / z;
	float pa = la * si->iz[0] * rz, pb = lb * si->iz[1] * rz, pc = lc * si->iz[2] * rz;
	float li = pa * si->I[0] + pb * si->I[1] + pc * si->I[2];
	float c[3];
	if (si->tex) {
		float tc[4];
		sample_tex(si->tex, pa * si->u[0] + pb * si->u[1] + pc * si->u[2],
			   pa * si->v[0] + pb * si->v[1] + pc * si->v[2], tc);
		if (si->alpha_test && tc[3] < 127.5f)
			return false;
		for (int k = 0; k < 3; k++)
			c[k] = tc[k] * li;
	} else {
		for (int k = 0; k < 3; k++)
			c[k] = si->base[k] * 255.0f * li;
	}
	*out = to8(c[0]) | to8(c[1]) << 8 | to8(c[2]) << 16 | 0xFF000000u;
	return true;
}

/* Lighting of the three corners of t (P: their projections, area: the
 * signed screen area) into I[]: ambient + key + fill, two-sided. */
static void tri_light(const lfs_thumb_scene *s, const lfs_thumb_tri *t, const pv *const P[3],
		      int64_t area, float I[3])
{
	/* Facing: with y down, a triangle wound counter-clockwise as seen by
	 * the camera (its right-hand normal towards the camera) has area < 0. */
	float facing = area < 0 ? 1.0f : -1.0f;
	/* Geometric normal from the winding, to orient each corner's normal to
	 * the side of the face the camera sees (two-sided lighting). */
	const float *p0 = s->pos + 3 * (size_t)t->v[0], *p1 = s->pos + 3 * (size_t)t->v[1],
		    *p2 = s->pos + 3 * (size_t)t->v[2];
	float e1[3] = { p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2] };
	float e2[3] = { p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2] };
	float ng[3] = { e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
			e1[0] * e2[1] - e1[1] * e2[0] };
	for (int k = 0; k < 3; k++) {
		const float *n = s->nrm + 3 * (size_t)t->v[k];
		float d = n[0] * ng[0] + n[1] * ng[1] + n[2] * ng[2];
		float sgn = (d < 0 ? -1.0f : 1.0f) * facing;
		float l = sgn * P[k]->ndl, lf = sgn * P[k]->ndf;
		I[k] = AMBIENT + KEY * (l > 0 ? l : 0) + FILL * (lf > 0 ? lf : 0);
		if (!(I[k] >= 0))
			I[k] = AMBIENT;
	}
}

/* The shading inputs of t in screen winding order (V: the corners'
 * projections reordered by idx, I: corner light in file order). */
static void tri_shade_in(const lfs_thumb_scene *s, const lfs_thumb_tri *t, const pv *const V[3],
			 const float I[3], const int idx[3], shade_in *out)
{
	const lfs_thumb_mat *m = &s->mats[t->mat];
	shade_in si = { .alpha_test = m->alpha_test };
	for (int k = 0; k < 3; k++) {
		si.iz[k] = V[k]->iz;
		si.I[k] = I[idx[k]];
	}
	si.tex = m->tex < s->n_texs ? &s->texs[m->tex] : NULL;
	if (si.tex) {
		for (int k = 0; k < 3; k++) {
			uint32_t ti = t->t[idx[k]];
			if (ti == LFS_THUMB_NONE) {
				si.tex = NULL;
				break;
			}
			si.u[k] = s->uv[2 * (size_t)ti];
			si.v[k] = s->uv[2 * (size_t)ti + 1];
			if (!isfinite(si.u[k]) || !isfinite(si.v[k]))
				si.u[k] = si.v[k] = 0;
		}
	}
	for (int k = 0; k < 3; k++)
		si.base[k] = isfinite(m->rgb[k]) ? clamp01(m->rgb[k]) : 0.7f;
	*out = si;
}

/*
 * Rasterize one triangle into the current strip, multisample style: the
 * coverage and depth test run per sample (NS per pixel), the colour is
 * computed once per pixel at the pixel centre (barycentrics clamped to the
 * triangle) and written to every covered sample that passes the depth test.
 * Alpha-tested materials whose texture has holes are shaded per sample, so
 * cut-out edges get partial alpha too. This is the rasterizer's inner loop:
 * it stays one function (its edge, depth and mask steps share registers),
 * the one exception to the house's 150-line limit.
 */
static void draw_tri(rctx *r, const lfs_thumb_tri *t)
{
	const lfs_thumb_scene *s = r->s;
	int idx[3] = { 0, 1, 2 };
	const pv *P[3] = { &r->v[t->v[0]], &r->v[t->v[1]], &r->v[t->v[2]] };
	int64_t area = (int64_t)(P[1]->x - P[0]->x) * (P[2]->y - P[0]->y) -
		       (int64_t)(P[1]->y - P[0]->y) * (P[2]->x - P[0]->x);
	if (area == 0)
		return;
	float I[3];
	tri_light(s, t, P, area, I);
	if (area < 0) {
		idx[1] = 2;
		idx[2] = 1;
		area = -area;
	}
	const pv *V[3] = { P[idx[0]], P[idx[1]], P[idx[2]] };
	int32_t minx = V[0]->x, maxx = V[0]->x, miny = V[0]->y, maxy = V[0]->y;
	for (int k = 1; k < 3; k++) {
		minx = V[k]->x < minx ? V[k]->x : minx;
		maxx = V[k]->x > maxx ? V[k]->x : maxx;
		miny = V[k]->y < miny ? V[k]->y : miny;
		maxy = V[k]->y > maxy ? V[k]->y : maxy;
	}
	/* pixels holding any point of the bounding box, clipped to the strip */
	int64_t px0 = minx < 0 ? 0 : minx / PSUB, px1 = maxx < 0 ? -1 : maxx / PSUB;
	int64_t py0 = miny < 0 ? 0 : miny / PSUB, py1 = maxy < 0 ? -1 : maxy / PSUB;
	if (px1 >= (int64_t)r->size)
		px1 = (int64_t)r->size - 1;
	if (py0 < (int64_t)r->ys)
		py0 = r->ys;
	if (py1 >= (int64_t)r->ye)
		py1 = (int64_t)r->ye - 1;
	if (px0 > px1 || py0 > py1)
		return;

	/* Edge k (opposite vertex k): E(p) = dx (py - ay) - dy (px - ax),
	 * inside when E + bias >= 0 for all three; E_k / area is the
	 * barycentric of vertex k. e[] holds E at the pixel's top-left corner.
	 * Coordinates lie in [-PSUB, (size + 1) * PSUB] (lfs_thumb_render
	 * clamps them), so |E| <= 2 * (1025 * 16)^2 < 2^31: int32 is exact. */
	int32_t sx[3], sy[3], bias[3], erow[3];
	int32_t off[3][NS], ctr[3];
	float inv = 1.0f / (float)area;
	for (int k = 0; k < 3; k++) {
		const pv *a = V[(k + 1) % 3], *b = V[(k + 2) % 3];
		int32_t dx = b->x - a->x, dy = b->y - a->y;
		int32_t qx = (int32_t)px0 * PSUB, qy = (int32_t)py0 * PSUB;
		erow[k] = dx * (qy - a->y) - dy * (qx - a->x);
		sx[k] = -dy; /* per PSUB unit */
		sy[k] = dx;
		bias[k] = (int32_t)edge_bias(dx, dy);
		for (int q = 0; q < NS; q++)
			off[k][q] = samp[q][0] * sx[k] + samp[q][1] * sy[k] + bias[k];
		ctr[k] = (PSUB / 2) * (sx[k] + sy[k]);
	}
	shade_in si;
	tri_shade_in(s, t, V, I, idx, &si);
	bool per_sample = si.tex && si.alpha_test && si.tex->holes;
	/* depth (radius / view depth) is linear in screen space */
	float zsx = ((float)sx[0] * si.iz[0] + (float)sx[1] * si.iz[1] + (float)sx[2] * si.iz[2]) * inv;
	float zsy = ((float)sy[0] * si.iz[0] + (float)sy[1] * si.iz[1] + (float)sy[2] * si.iz[2]) * inv;
	float zoff[NS], zoffmax = -INFINITY;
	for (int q = 0; q < NS; q++) {
		zoff[q] = (float)samp[q][0] * zsx + (float)samp[q][1] * zsy;
		zoffmax = zoff[q] > zoffmax ? zoff[q] : zoffmax;
	}
	float *zb = r->z;
	uint32_t *cb = r->col;
	int32_t omax[3];
	for (int k = 0; k < 3; k++) {
		omax[k] = off[k][0];
		for (int q = 1; q < NS; q++)
			omax[k] = off[k][q] > omax[k] ? off[k][q] : omax[k];
	}
	for (int64_t py = py0; py <= py1; py++) {
		/* the pixels of this row where some sample can be inside: for
		 * each edge, E at the pixel corner + its largest sample offset
		 * must reach 0 (E steps by sx * PSUB per pixel) */
		int64_t lo = px0, hi = px1;
		for (int k = 0; k < 3; k++) {
			int64_t e = (int64_t)erow[k] + omax[k], st = (int64_t)sx[k] * PSUB;
			if (st > 0) {
				if (e < 0) {
					int64_t n = (-e + st - 1) / st; /* ceil(-e / st) */
					lo = px0 + n > lo ? px0 + n : lo;
				}
			} else if (st < 0) {
				if (e < 0) {
					hi = -1;
					break;
				}
				int64_t n = e / -st; /* floor(e / -st) */
				hi = px0 + n < hi ? px0 + n : hi;
			} else if (e < 0) {
				hi = -1;
				break;
			}
		}
		if (lo <= hi) {
		int32_t e0 = erow[0] + sx[0] * PSUB * (int32_t)(lo - px0),
			e1_ = erow[1] + sx[1] * PSUB * (int32_t)(lo - px0),
			e2_ = erow[2] + sx[2] * PSUB * (int32_t)(lo - px0);
		float z = ((float)e0 * si.iz[0] + (float)e1_ * si.iz[1] + (float)e2_ * si.iz[2]) * inv;
		size_t rowbase = (size_t)(py - (int64_t)r->ys) * r->size;
		for (int64_t px = lo; px <= hi;
		     px++, z += zsx * PSUB, e0 += sx[0] * PSUB, e1_ += sx[1] * PSUB, e2_ += sx[2] * PSUB) {
			if (z + zoffmax <= r->zpix[rowbase + (size_t)px])
				continue; /* behind every sample already drawn */
			/* which samples are inside and nearer than what is there */
			size_t obase = (rowbase + (size_t)px) * NS;
			const float *zp = zb + obase;
			unsigned mask = 0;
			for (int q = 0; q < NS; q++) {
				int32_t c = (e0 + off[0][q]) | (e1_ + off[1][q]) | (e2_ + off[2][q]);
				mask |= (unsigned)((c >= 0) & (z + zoff[q] > zp[q])) << q;
			}
			if (!mask)
				continue;
			uint32_t colr = 0;
			if (!per_sample) {
				float la = (float)(e0 + ctr[0]) * inv, lb = (float)(e1_ + ctr[1]) * inv,
				      lc = (float)(e2_ + ctr[2]) * inv;
				/* the centre may lie outside: clamp to the triangle */
				la = la < 0 ? 0 : la;
				lb = lb < 0 ? 0 : lb;
				lc = lc < 0 ? 0 : lc;
				float sum = la + lb + lc;
				if (sum > 0) {
					la /= sum;
					lb /= sum;
					lc /= sum;
				} else {
					la = lb = lc = 1.0f / 3;
				}
				if (!shade(&si, la, lb, lc, &colr))
					continue; /* a hole of a cut-out texture */
			}
			for (int q = 0; q < NS; q++) {
				if (!(mask >> q & 1))
					continue;
				if (per_sample) {
					int32_t ea = e0 + off[0][q] - bias[0], eb = e1_ + off[1][q] - bias[1],
						ec = e2_ + off[2][q] - bias[2];
					if (!shade(&si, (float)ea * inv, (float)eb * inv, (float)ec * inv, &colr))
						continue;
				}
				cb[obase + q] = colr;
				zb[obase + q] = z + zoff[q];
			}
			float zmin = zp[0];
			for (int q = 1; q < NS; q++)
				zmin = zp[q] < zmin ? zp[q] : zmin;
			r->zpix[rowbase + (size_t)px] = zmin;
		}
		}
		for (int k = 0; k < 3; k++)
			erow[k] += sy[k] * PSUB;
	}
}

/* Fill normals left at zero: area-weighted face normals summed per position. */
static bool fill_normals(lfs_thumb_scene *s)
{
	uint8_t *need = calloc(s->n_pos ? s->n_pos : 1, 1);
	if (!need)
		return false;
	size_t n_need = 0;
	for (size_t i = 0; i < s->n_pos; i++) {
		float *n = s->nrm + 3 * i;
		double l = (double)n[0] * n[0] + (double)n[1] * n[1] + (double)n[2] * n[2];
		if (!(l > 1e-24) || !isfinite(l)) {
			need[i] = 1;
			n_need++;
		} else {
			double k = 1.0 / sqrt(l);
			for (int c = 0; c < 3; c++)
				n[c] = (float)(n[c] * k);
		}
	}
	if (!n_need) {
		free(need);
		return true;
	}
	double *acc = calloc(s->n_pos * 3, sizeof(double));
	if (!acc) {
		free(need);
		return false;
	}
	for (size_t i = 0; i < s->n_tris; i++) {
		const lfs_thumb_tri *t = &s->tris[i];
		if (!tri_ok(s, t))
			continue;
		const float *a = s->pos + 3 * (size_t)t->v[0], *b = s->pos + 3 * (size_t)t->v[1],
			    *c = s->pos + 3 * (size_t)t->v[2];
		double e1[3], e2[3];
		for (int k = 0; k < 3; k++) {
			e1[k] = (double)b[k] - a[k];
			e2[k] = (double)c[k] - a[k];
		}
		double n[3] = { e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
				e1[0] * e2[1] - e1[1] * e2[0] };
		double l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
		if (!(l > 0) || !isfinite(l))
			continue;
		/* scale down huge normals (1e30 coordinates) to keep sums finite */
		double k = l > 1e100 ? 1.0 / l : 1.0;
		for (int v = 0; v < 3; v++)
			if (need[t->v[v]])
				for (int c2 = 0; c2 < 3; c2++)
					acc[3 * (size_t)t->v[v] + c2] += n[c2] * k;
	}
	for (size_t i = 0; i < s->n_pos; i++) {
		if (!need[i])
			continue;
		double *a = acc + 3 * i;
		double l = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
		float *n = s->nrm + 3 * i;
		if (l > 0 && isfinite(l)) {
			for (int c = 0; c < 3; c++)
				n[c] = (float)(a[c] / l);
		} else {
			n[0] = n[1] = 0;
			n[2] = 1;
		}
	}
	free(acc);
	free(need);
	return true;
}

static double dot3(const double *a, const double *b)
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* Marks in used[] the positions of drawable triangles and widens lo/hi to
 * their bounding box; returns the count of drawable triangles. */
static size_t scene_bounds(const lfs_thumb_scene *s, uint8_t *used, double lo[3], double hi[3])
{
	size_t drawable = 0;
	for (size_t i = 0; i < s->n_tris; i++) {
		const lfs_thumb_tri *t = &s->tris[i];
		if (!tri_ok(s, t))
			continue;
		drawable++;
		for (int k = 0; k < 3; k++) {
			if (used[t->v[k]])
				continue;
			used[t->v[k]] = 1;
			const float *p = s->pos + 3 * (size_t)t->v[k];
			for (int c = 0; c < 3; c++) {
				if (p[c] < lo[c])
					lo[c] = p[c];
				if (p[c] > hi[c])
					hi[c] = p[c];
			}
		}
	}
	return drawable;
}

/* The camera and the lights in model space: eye, forward f, right rt,
 * up, unit key (L) and fill (F) light directions, bounding radius R. */
typedef struct camera {
	double eye[3], f[3], rt[3], up[3], L[3], F[3], R;
} camera;

/* Camera: from the front-right and above, at the bounding box centre. */
static void camera_place(const lfs_thumb_scene *s, const uint8_t *used, const double lo[3],
			 const double hi[3], camera *cam)
{
	double c[3], R = 0;
	for (int k = 0; k < 3; k++)
		c[k] = lo[k] * 0.5 + hi[k] * 0.5;
	for (size_t i = 0; i < s->n_pos; i++) {
		if (!used[i])
			continue;
		const float *p = s->pos + 3 * i;
		double d[3] = { p[0] - c[0], p[1] - c[1], p[2] - c[2] };
		double l = dot3(d, d);
		if (l > R)
			R = l;
	}
	R = sqrt(R);
	if (!(R > 0) || !isfinite(R))
		R = 1;
	cam->R = R;
	const double dir[3] = { 1.0 / 1.5, 1.0 / 1.5, 0.5 / 1.5 }; /* centre -> eye, unit */
	double *f = cam->f, *rt = cam->rt, *up = cam->up;
	for (int k = 0; k < 3; k++) {
		cam->eye[k] = c[k] + dir[k] * R * CAM_DIST;
		f[k] = -dir[k];
	}
	/* right = f × Z, up = right × f */
	double rl = sqrt(f[1] * f[1] + f[0] * f[0]);
	rt[0] = f[1] / rl;
	rt[1] = -f[0] / rl;
	rt[2] = 0;
	up[0] = rt[1] * f[2] - rt[2] * f[1];
	up[1] = rt[2] * f[0] - rt[0] * f[2];
	up[2] = rt[0] * f[1] - rt[1] * f[0];
	/* key light from the upper left, in front of the model (camera space
	 * x right, y up, z away from the camera) */
	const double lc[3] = { -0.45, 0.65, -0.61 }, fc[3] = { 0.75, -0.05, -0.66 };
	double ll = sqrt(dot3(lc, lc)), fl = sqrt(dot3(fc, fc));
	for (int k = 0; k < 3; k++) {
		cam->L[k] = (lc[0] * rt[k] + lc[1] * up[k] + lc[2] * f[k]) / ll;
		cam->F[k] = (fc[0] * rt[k] + fc[1] * up[k] + fc[2] * f[k]) / fl;
	}
}

/* Projects the used positions into v[] (depth, lighting, then pixel
 * coordinates × PSUB fitting the projected bounding box with a margin).
 * proj: scratch of 2 * n_pos doubles. */
static void project(const lfs_thumb_scene *s, const uint8_t *used, const camera *cam,
		    unsigned size, double *proj, pv *v)
{
	double plo[2] = { INFINITY, INFINITY }, phi[2] = { -INFINITY, -INFINITY };
	for (size_t i = 0; i < s->n_pos; i++) {
		if (!used[i])
			continue;
		const float *p = s->pos + 3 * i;
		double d[3] = { p[0] - cam->eye[0], p[1] - cam->eye[1], p[2] - cam->eye[2] };
		double z = dot3(d, cam->f);
		if (!(z > cam->R * 1e-6))
			z = cam->R * 1e-6; /* cannot happen (eye outside the bounding sphere) */
		double px = dot3(d, cam->rt) / z, py = dot3(d, cam->up) / z;
		proj[2 * i] = px;
		proj[2 * i + 1] = py;
		plo[0] = px < plo[0] ? px : plo[0];
		plo[1] = py < plo[1] ? py : plo[1];
		phi[0] = px > phi[0] ? px : phi[0];
		phi[1] = py > phi[1] ? py : phi[1];
		v[i].iz = (float)(cam->R / z);
		const float *n = s->nrm + 3 * i;
		v[i].ndl = (float)(n[0] * cam->L[0] + n[1] * cam->L[1] + n[2] * cam->L[2]);
		v[i].ndf = (float)(n[0] * cam->F[0] + n[1] * cam->F[1] + n[2] * cam->F[2]);
	}
	double ext = phi[0] - plo[0] > phi[1] - plo[1] ? phi[0] - plo[0] : phi[1] - plo[1];
	double scale = (double)size * (1 - 2 * MARGIN) / ext;
	if (!(ext > 0) || !isfinite(scale))
		scale = 0;
	double mx = (plo[0] + phi[0]) * 0.5, my = (plo[1] + phi[1]) * 0.5;
	for (size_t i = 0; i < s->n_pos; i++) {
		if (!used[i])
			continue;
		double sx = size * 0.5 + (proj[2 * i] - mx) * scale;
		double sy = size * 0.5 - (proj[2 * i + 1] - my) * scale;
		if (!(sx > -1.0) || sx > size + 1.0)
			sx = size * 0.5;
		if (!(sy > -1.0) || sy > size + 1.0)
			sy = size * 0.5;
		v[i].x = (int32_t)lrint(sx * PSUB);
		v[i].y = (int32_t)lrint(sy * PSUB);
	}
}

/* Front to back (nearest vertex first, counting sort on 4096 depth
 * steps, stable): hidden surfaces then fail the per-pixel depth test
 * early instead of being shaded and overwritten. Above SORT_MAX
 * triangles the file order is kept: its memory locality is worth
 * more than the saved overdraw (measured, docs/performance.md).
 * order: drawable entries, filled with triangle indices. False: no memory. */
static bool sort_front_to_back(const lfs_thumb_scene *s, const uint8_t *used, const pv *v,
			       size_t drawable, uint32_t *order)
{
	enum { NB = 4096 };
	float gz0 = INFINITY, gz1 = -INFINITY;
	for (size_t i = 0; i < s->n_pos; i++)
		if (used[i]) {
			gz0 = v[i].iz < gz0 ? v[i].iz : gz0;
			gz1 = v[i].iz > gz1 ? v[i].iz : gz1;
		}
	float gk = gz1 > gz0 ? (float)(NB - 1) / (gz1 - gz0) : 0;
	uint32_t *bucket = calloc(NB + 1, sizeof(uint32_t));
	if (!bucket)
		return false;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < s->n_tris; i++) {
			const lfs_thumb_tri *t = &s->tris[i];
			if (!tri_ok(s, t))
				continue;
			float m = v[t->v[0]].iz;
			m = v[t->v[1]].iz > m ? v[t->v[1]].iz : m;
			m = v[t->v[2]].iz > m ? v[t->v[2]].iz : m;
			int kb = drawable > SORT_MAX ? 0 : (NB - 1) - (int)((m - gz0) * gk); /* nearest first */
			kb = kb < 0 ? 0 : (kb >= NB ? NB - 1 : kb);
			if (pass)
				order[bucket[kb]++] = (uint32_t)i;
			else
				bucket[kb + 1]++;
		}
		if (!pass)
			for (int kb = 0; kb < NB; kb++)
				bucket[kb + 1] += bucket[kb];
	}
	free(bucket);
	return true;
}

/* The triangles of each strip: strip k draws tris[at[k] .. at[k + 1]) and
 * then every one of big[0 .. n_big) (those spanning BIG_SPAN strips or more). */
typedef struct strip_bins {
	size_t *at;     /* n_strips + 2 entries */
	uint32_t *tris;
	uint32_t *big;
	size_t n_big;
} strip_bins;

/* Bins the triangles (in draw order) by the strips their pixel rows touch:
 * counts, prefix sums, then the indices (two passes over the triangles).
 * b->at must be zeroed with n_strips + 2 entries. False: no memory. */
static bool bin_strips(const lfs_thumb_scene *s, const pv *v, unsigned size, const uint32_t *order,
		       size_t drawable, strip_bins *b)
{
	uint32_t n_strips = size / STRIP_PX;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t oi = 0; oi < drawable; oi++) {
			uint32_t i = order[oi];
			const lfs_thumb_tri *t = &s->tris[i];
			int32_t y0 = v[t->v[0]].y, y1 = y0;
			for (int k = 1; k < 3; k++) {
				int32_t y = v[t->v[k]].y;
				y0 = y < y0 ? y : y0;
				y1 = y > y1 ? y : y1;
			}
			int64_t a = y0 < 0 ? 0 : y0 / PSUB, z = y1 < 0 ? -1 : y1 / PSUB;
			if (z >= (int64_t)size)
				z = (int64_t)size - 1;
			if (a > z)
				continue; /* outside the image */
			uint32_t s0 = (uint32_t)(a / STRIP_PX), s1 = (uint32_t)(z / STRIP_PX);
			if (s1 - s0 >= BIG_SPAN) {
				if (pass)
					b->big[b->n_big] = i;
				b->n_big++;
				continue;
			}
			for (uint32_t k = s0; k <= s1; k++) {
				if (pass)
					b->tris[b->at[k + 1]++] = i;
				else
					b->at[k + 2]++;
			}
		}
		if (!pass) {
			/* at[k + 1] = start of strip k after the prefix sum;
			 * the fill pass advances it to the end of strip k */
			for (uint32_t k = 0; k < n_strips; k++)
				b->at[k + 2] += b->at[k + 1];
			b->tris = malloc((b->at[n_strips + 1] ? b->at[n_strips + 1] : 1) * sizeof(uint32_t));
			b->big = malloc((b->n_big ? b->n_big : 1) * sizeof(uint32_t));
			if (!b->tris || !b->big)
				return false;
			b->n_big = 0;
		}
	}
	return true;
}

/* The premultiplied box filter of the current strip into img (size²
 * RGBA): covered samples are opaque, the background is (0,0,0,0), so
 * colour = mean of the covered samples and alpha = their share. */
static void resolve_strip(const rctx *r, uint8_t *img)
{
	const uint32_t *sc = r->col;
	uint8_t *o = img + (size_t)r->ys * r->size * 4;
	for (size_t p = 0; p < (size_t)r->size * STRIP_PX; p++, sc += NS, o += 4) {
		unsigned sr = 0, sg = 0, sb = 0, cnt = 0;
		for (int q = 0; q < NS; q++) {
			uint32_t v = sc[q];
			if (!v)
				continue;
			sr += v & 0xFF;
			sg += (v >> 8) & 0xFF;
			sb += (v >> 16) & 0xFF;
			cnt++;
		}
		if (!cnt) {
			o[0] = o[1] = o[2] = o[3] = 0;
			continue;
		}
		o[0] = (uint8_t)((sr + cnt / 2) / cnt);
		o[1] = (uint8_t)((sg + cnt / 2) / cnt);
		o[2] = (uint8_t)((sb + cnt / 2) / cnt);
		o[3] = (uint8_t)((cnt * 255 + NS / 2) / NS);
	}
}

lfs_err lfs_thumb_render(lfs_thumb_scene *s, unsigned size, uint8_t **out, lfs_error *err)
{
	*out = NULL;
	if (!lfs_thumb_size_ok(size))
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "thumbnail",
				"thumbnail size %u: use 128, 256, 512 or 1024", size);
	if (s->failed)
		return lfs_nomem(err, "thumbnail");
	/* which positions are used by drawable triangles */
	uint8_t *used = calloc(s->n_pos ? s->n_pos : 1, 1);
	if (!used)
		return lfs_nomem(err, "thumbnail");
	lfs_err rc = LFS_OK;
	double lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { -INFINITY, -INFINITY, -INFINITY };
	size_t drawable = scene_bounds(s, used, lo, hi);
	if (!drawable) {
		free(used);
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "thumbnail",
				"no drawable triangles");
	}
	if (!fill_normals(s)) {
		free(used);
		return lfs_nomem(err, "thumbnail");
	}
	camera cam;
	camera_place(s, used, lo, hi, &cam);

	uint32_t n_strips = size / STRIP_PX;
	const size_t strip_n = (size_t)size * STRIP_PX * NS; /* samples per strip */
	rctx r = { .s = s, .size = size };
	r.v = malloc((s->n_pos ? s->n_pos : 1) * sizeof(pv));
	double *proj = malloc((s->n_pos ? s->n_pos : 1) * 2 * sizeof(double));
	r.col = malloc(strip_n * sizeof(uint32_t));
	r.z = malloc(strip_n * sizeof(float));
	r.zpix = malloc(strip_n / NS * sizeof(float));
	uint32_t *order = NULL;
	uint8_t *img = malloc((size_t)size * size * 4);
	strip_bins bins = { .at = calloc(n_strips + 2, sizeof(size_t)) };
	if (!r.v || !proj || !r.col || !r.z || !r.zpix || !img || !bins.at)
		goto nomem;
	project(s, used, &cam, size, proj, r.v);
	free(proj);
	proj = NULL;
	order = malloc(drawable * sizeof(uint32_t));
	if (!order || !sort_front_to_back(s, used, r.v, drawable, order))
		goto nomem;
	if (!bin_strips(s, r.v, size, order, drawable, &bins))
		goto nomem;
	free(used);
	used = NULL;

	/* each strip: clear, draw its triangles and the big ones, resolve */
	for (uint32_t k = 0; k < n_strips; k++) {
		r.ys = k * STRIP_PX;
		r.ye = r.ys + STRIP_PX;
		memset(r.col, 0, strip_n * sizeof(uint32_t));
		memset(r.z, 0, strip_n * sizeof(float));
		memset(r.zpix, 0, strip_n / NS * sizeof(float));
		for (size_t b = bins.at[k]; b < bins.at[k + 1]; b++)
			draw_tri(&r, &s->tris[bins.tris[b]]);
		for (size_t b = 0; b < bins.n_big; b++)
			draw_tri(&r, &s->tris[bins.big[b]]);
		resolve_strip(&r, img);
	}
	*out = img;
	img = NULL;
	goto done;
nomem:
	rc = lfs_nomem(err, "thumbnail");
done:
	free(used);
	free(proj);
	free(bins.at);
	free(bins.tris);
	free(bins.big);
	free(order);
	free(r.v);
	free(r.col);
	free(r.z);
	free(r.zpix);
	free(img);
	return rc;
}
