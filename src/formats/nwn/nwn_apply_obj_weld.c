/**
 * @file nwn_apply_obj_weld.c
 * Structural edits of meshes/<node>.obj: vertices or faces added or
 * removed. The edited OBJ (faces as fans of triangles) is welded to the
 * stored mesh and rebuilt into the model.mdl text of the model, which the
 * structural apply (nwn_apply_struct.c) compiles. Value edits are in
 * nwn_apply_obj.c.
 */

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "common/strbuf.h"
#include "nwn_apply_priv.h"
#include "nwn_apply_struct.h"
#include "nwn_ascii.h"
#include "nwn_obj.h"
#include "text/obj.h"

/* A mesh OBJ as the apply uses it: the read lfs_obj, its faces as triangles. */
typedef struct objdoc {
	lfs_obj o;
	const float *v, *vt, *vn; /* o.v, o.vt, o.vn as flat arrays */
	uint32_t nv, nvt, nvn;
	int32_t *f;	  /* 9 per triangle: v vt vn per corner, 0-based, -1 absent */
	uint32_t *fline; /* the f line of each triangle */
	uint32_t nf;
} objdoc;

static void objdoc_free(objdoc *d)
{
	lfs_obj_free(&d->o);
	free(d->f);
	free(d->fline);
	memset(d, 0, sizeof(*d));
}

/* Read OBJ @p text into @p d (always initialised; free with objdoc_free()):
 * each face of n corners becomes the fan of triangles (0, i, i + 1). */
static lfs_err objdoc_read(ap *a, const char *text, size_t tn, objdoc *d)
{
	memset(d, 0, sizeof(*d));
	lfs_obj *o = &d->o;
	lfs_err e = lfs_obj_read(a->p.file, text, tn, &nwn_obj_rules_nums, o, a->p.err);
	if (e)
		return e;
	/* the text is at most MDL_MAX_INPUT bytes: every count fits 32 bits */
	d->v = o->v ? o->v[0] : NULL;
	d->vt = o->vt ? o->vt[0] : NULL;
	d->vn = o->vn ? o->vn[0] : NULL;
	d->nv = (uint32_t)o->nv;
	d->nvt = (uint32_t)o->nt;
	d->nvn = (uint32_t)o->nn;
	size_t ntri = 0;
	for (size_t i = 0; i < o->nf; i++)
		ntri += o->f[i].n - 2;
	d->f = malloc((ntri + 1) * 9 * sizeof(int32_t));
	d->fline = malloc((ntri + 1) * sizeof(uint32_t));
	if (!d->f || !d->fline)
		return lfs_nomem(a->p.err, "apply view");
	for (size_t i = 0; i < o->nf; i++) {
		const lfs_obj_face *fc = &o->f[i];
		for (uint32_t t = 0; t + 2 < fc->n; t++) {
			const uint32_t cs[3] = { 0, t + 1, t + 2 };
			int32_t *x = d->f + 9 * (size_t)d->nf;
			for (int c = 0; c < 3; c++) {
				const lfs_obj_corner *k = &o->c[fc->first + cs[c]];
				x[3 * c] = (int32_t)k->v;
				x[3 * c + 1] = (int32_t)k->t;
				x[3 * c + 2] = (int32_t)k->n;
			}
			d->fline[d->nf++] = fc->line;
		}
	}
	return LFS_OK;
}

/* ---- OBJ: structural edits --------------------------------------------------------- */

/*
 * Text vertex of the model.mdl built from an OBJ corner. Welded (j >= 0):
 * stored vertex j, its position bits; uv and normal its stored bits where
 * t / n are -1, else OBJ vt t / vn n (n == -2: computed from the faces at
 * OBJ position v). New (j == -1): OBJ position v, vt t (-1: none), vn n
 * (-1: none, -2: computed).
 */
typedef struct ckey {
	int32_t j, v, t, n;
} ckey;

static int ckey_cmp(const ckey *x, const ckey *y)
{
	const int32_t a[4] = { x->j, x->v, x->t, x->n }, b[4] = { y->j, y->v, y->t, y->n };
	for (int i = 0; i < 4; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* A stored vertex by its x, for the sort. */
typedef struct xent {
	float x;
	uint32_t i;
} xent;

static int xent_cmp(const void *p, const void *q)
{
	const xent *a = p, *b = q;
	if (a->x != b->x)
		return a->x < b->x ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* The stored vertices of a mesh sorted by x, to find the ones whose shown
 * position an OBJ `v` states (docs/formats/obj-csv.md, "Saving OBJ from
 * other programs"). */
typedef struct welder {
	const nwn_mesh *me;
	xent *byx;     /* vertices with a finite x, by x */
	uint32_t nbyx;
	uint32_t *odd; /* vertices with a non-finite x: always tried */
	uint32_t nodd;
	double gmax;   /* largest |component| of a finite stored position */
	int32_t *claim;	  /* per stored vertex: the first OBJ position welded to it, -1 none */
	uint32_t *scratch; /* room for every stored vertex (weld_cands()) */
	int32_t *anchor;   /* per OBJ position: weld_anchor() */
} welder;

static bool welder_init(welder *w, const nwn_mesh *me, uint32_t nv)
{
	memset(w, 0, sizeof(*w));
	w->me = me;
	w->byx = malloc(((size_t)nv + 1) * sizeof(xent));
	w->odd = malloc(((size_t)nv + 1) * sizeof(uint32_t));
	w->claim = malloc(((size_t)nv + 1) * sizeof(int32_t));
	w->scratch = malloc(((size_t)nv + 1) * sizeof(uint32_t));
	if (!w->byx || !w->odd || !w->claim || !w->scratch)
		return false;
	for (uint32_t i = 0; i < nv; i++)
		w->claim[i] = -1;
	for (uint32_t i = 0; i < nv; i++) {
		const float *p = me->verts + 3 * (size_t)i;
		if (!isfinite(p[0])) {
			w->odd[w->nodd++] = i;
			continue;
		}
		w->byx[w->nbyx++] = (xent){ p[0], i };
		for (int k = 0; k < 3; k++)
			if (isfinite(p[k]) && fabs((double)p[k]) > w->gmax)
				w->gmax = fabs((double)p[k]);
	}
	qsort(w->byx, w->nbyx, sizeof(xent), xent_cmp);
	return true;
}

static void welder_free(welder *w)
{
	free(w->byx);
	free(w->odd);
	free(w->claim);
	free(w->scratch);
	free(w->anchor);
}

/* The stored vertices whose shown position OBJ position @p pn (3 numbers)
 * states, into @p out (room for every stored vertex); returns their count. */
static uint32_t weld_cands(const welder *w, const lfs_obj_num *pn, uint32_t *out)
{
	const nwn_mesh *me = w->me;
	uint32_t nc = 0;
	int16_t prec = lfs_obj_num_prec(&pn[0]);
	double half = prec < 0 ? 0.0 : 0.5 * pow(10.0, -(double)prec);
	double win = half + FLT_EPSILON * w->gmax + fabs(pn[0].value) * 1e-7 + 1e-30;
	double lo = pn[0].value - win, hi = pn[0].value + win;
	/* first vertex with x >= lo */
	uint32_t a = 0, b = w->nbyx;
	while (a < b) {
		uint32_t mid = a + (b - a) / 2;
		if ((double)w->byx[mid].x < lo)
			a = mid + 1;
		else
			b = mid;
	}
	for (uint32_t r = a; r < w->nbyx && (double)w->byx[r].x <= hi; r++)
		if (lfs_obj_vec_keeps(pn, me->verts + 3 * (size_t)w->byx[r].i, 3) == 7)
			out[nc++] = w->byx[r].i;
	for (uint32_t r = 0; r < w->nodd; r++)
		if (lfs_obj_vec_keeps(pn, me->verts + 3 * (size_t)w->odd[r], 3) == 7)
			out[nc++] = w->odd[r];
	return nc;
}

/* How well OBJ corner (t, n) states the uv and normal of stored vertex @p j
 * (whose position it states): 3 both, 2 the uv, 1 the normal, 0 neither. */
static int weld_tier(const welder *w, const lfs_obj *o, uint32_t j, int32_t t, int32_t n, bool *uv_ok, bool *n_ok)
{
	const nwn_mesh *me = w->me;
	bool u = !me->tverts[0] || t < 0 || lfs_obj_vec_keeps(o->vt_num + 2 * (size_t)t, me->tverts[0] + 2 * (size_t)j, 2) == 3;
	bool nn = !me->normals || n < 0 || lfs_obj_normal_keeps(o->vn_num + 3 * (size_t)n, me->normals + 3 * (size_t)j);
	*uv_ok = u;
	*n_ok = nn;
	return (u ? 2 : 0) + (nn ? 1 : 0);
}

/*
 * Which stored vertex each OBJ position most likely is, by order: OBJ
 * positions in index order matched to stored vertices in index order, each
 * to the first stored vertex at or after the previous match that the first
 * corner at that position states best (position, then uv and normal; a
 * position no corner uses: by position); none: a new position, the next one
 * goes on from there. An unedited list pairs v with v; an editor that
 * deleted vertices lists the rest in order, shifted.
 */
static bool weld_anchor(welder *w, const objdoc *de)
{
	const lfs_obj *o = &de->o;
	uint32_t nv = de->nv;
	int32_t *rep = malloc(((size_t)nv * 2 + 1) * sizeof(int32_t));
	w->anchor = malloc(((size_t)nv + 1) * sizeof(int32_t));
	if (!w->anchor || !rep) {
		free(rep);
		return false;
	}
	for (uint32_t p = 0; p < 2 * nv; p++)
		rep[p] = -2;
	for (size_t c = (size_t)de->nf * 3; c-- > 0;) {
		const int32_t *f = de->f + 3 * c;
		rep[2 * f[0]] = f[1];
		rep[2 * f[0] + 1] = f[2];
	}
	uint32_t s = 0;
	for (uint32_t p = 0; p < nv; p++) {
		uint32_t nc = weld_cands(w, o->v_num + 3 * (size_t)p, w->scratch);
		int32_t t = rep[2 * p] < 0 ? -1 : rep[2 * p], n = rep[2 * p + 1] < 0 ? -1 : rep[2 * p + 1];
		int top = -1;
		int32_t best = -1;
		for (uint32_t i = 0; i < nc; i++) {
			uint32_t j = w->scratch[i];
			bool u, nn;
			int tier = weld_tier(w, o, j, t, n, &u, &nn);
			if (j < s)
				continue;
			if (tier > top || (tier == top && j < (uint32_t)best)) {
				top = tier;
				best = (int32_t)j;
			}
		}
		w->anchor[p] = best;
		if (best >= 0)
			s = (uint32_t)best + 1;
	}
	free(rep);
	return true;
}

/* Between stored vertices @p j and @p best that an OBJ corner at position
 * @p v states equally well: is @p j the better? The stored vertex that
 * position pairs with by order (weld_anchor()); then one no other OBJ
 * position was welded to; then the nearer index; then the lower. */
static bool weld_better(const welder *w, int32_t v, int32_t j, int32_t best)
{
	int32_t an = w->anchor[v];
	if (best < 0 || j == an || best == an)
		return best < 0 || j == an;
	bool fj = w->claim[j] < 0 || w->claim[j] == v, fb = w->claim[best] < 0 || w->claim[best] == v;
	if (fj != fb)
		return fj;
	int64_t ref = an >= 0 ? an : v;
	int64_t dj = llabs((int64_t)j - ref), db = llabs((int64_t)best - ref);
	return dj != db ? dj < db : j < best;
}

/*
 * The stored vertex OBJ corner (v, t, n) (0-based, -1 absent) states, by
 * the printed-precision rule: among the stored vertices whose shown
 * position v states, the one whose uv and normal it also states, else the
 * one whose uv, else whose normal it states; ties as weld_better() says.
 * Returns -1 when no stored position is stated; @p *uv_ok / @p *n_ok tell
 * whether the stored uv / normal of the result stand.
 */
static int32_t weld_corner(const welder *w, const lfs_obj *o, int32_t v, int32_t t, int32_t n, bool *uv_ok,
			   bool *n_ok)
{
	int32_t best = -1;
	int best_tier = -1;
	bool bu = false, bn = false;
	uint32_t nc = weld_cands(w, o->v_num + 3 * (size_t)v, w->scratch);
	for (uint32_t i = 0; i < nc; i++) {
		uint32_t j = w->scratch[i];
		bool u, nn;
		int tier = weld_tier(w, o, j, t, n, &u, &nn);
		if (tier > best_tier || (tier == best_tier && weld_better(w, v, (int32_t)j, best))) {
			best = (int32_t)j;
			best_tier = tier;
			bu = u;
			bn = nn;
		}
	}
	*uv_ok = bu;
	*n_ok = bn;
	return best;
}

/*
 * Pair the triangles of @p de with stored faces, by order: each with the
 * first stored face at or after the previous pair whose three vertices its
 * corners state (position, uv and normal; in any rotation). Editors keep
 * the order of the faces they do not touch, so this finds the stored
 * vertex of each corner even among copies with equal values (which the
 * compiler leaves where faces do not share an edge). @p fm[i]: the stored
 * face of triangle i or -1, @p rot[i]: stored corner of its corner 0.
 */
static bool weld_faces(welder *w, const objdoc *de, int32_t *fm, uint8_t *rot)
{
	const nwn_mesh *me = w->me;
	const lfs_obj *o = &de->o;
	uint32_t nv = me->verts ? me->n_verts : 0, nf = me->verts && me->faces ? me->n_faces : 0;
	uint32_t *off = calloc((size_t)nv + 2, sizeof(uint32_t));
	uint32_t *vf = malloc(((size_t)nf * 3 + 1) * sizeof(uint32_t));
	if (!off || !vf) {
		free(off);
		free(vf);
		return false;
	}
	/* stored faces by vertex, ascending */
	for (uint32_t g = 0; g < nf; g++)
		for (int c = 0; c < 3; c++)
			off[me->faces[g].v[c] + 1]++;
	for (uint32_t j = 0; j < nv; j++)
		off[j + 1] += off[j];
	uint32_t *fill = malloc(((size_t)nv + 1) * sizeof(uint32_t));
	if (!fill) {
		free(off);
		free(vf);
		return false;
	}
	memcpy(fill, off, (size_t)nv * sizeof(uint32_t));
	for (uint32_t g = 0; g < nf; g++)
		for (int c = 0; c < 3; c++)
			if (c == 0 || me->faces[g].v[c] != me->faces[g].v[c - 1])
				vf[fill[me->faces[g].v[c]]++] = g;
	uint32_t s = 0;
	for (uint32_t i = 0; i < de->nf; i++) {
		const int32_t *f = de->f + 9 * (size_t)i;
		fm[i] = -1;
		uint32_t nc = weld_cands(w, o->v_num + 3 * (size_t)f[0], w->scratch);
		for (uint32_t x = 0; x < nc; x++) {
			uint32_t j = w->scratch[x];
			bool u, nn;
			if (weld_tier(w, o, j, f[1], f[2], &u, &nn) != 3)
				continue;
			for (uint32_t q = off[j]; q < fill[j]; q++) {
				uint32_t g = vf[q];
				if (g < s || (fm[i] >= 0 && g >= (uint32_t)fm[i]))
					continue;
				const uint16_t *sv = me->faces[g].v;
				for (int r = 0; r < 3; r++) {
					bool all = sv[r] == j;
					for (int c = 1; c < 3 && all; c++) {
						uint16_t jj = sv[(r + c) % 3];
						all = lfs_obj_vec_keeps(o->v_num + 3 * (size_t)f[3 * c], me->verts + 3 * (size_t)jj, 3) == 7 &&
						      weld_tier(w, o, jj, f[3 * c + 1], f[3 * c + 2], &u, &nn) == 3;
					}
					if (all) {
						fm[i] = (int32_t)g;
						rot[i] = (uint8_t)r;
						break;
					}
				}
			}
		}
		if (fm[i] >= 0) {
			s = (uint32_t)fm[i] + 1;
			for (int c = 0; c < 3; c++) {
				uint16_t jj = me->faces[fm[i]].v[(rot[i] + c) % 3];
				if (w->claim[jj] < 0)
					w->claim[jj] = f[3 * c];
			}
		}
	}
	free(off);
	free(vf);
	free(fill);
	return true;
}

/* The key of corner (@p v, @p t, @p n) of @p de (0-based OBJ indices, -1
 * absent), welded to the stored vertices of @p w: to stored vertex @p fj
 * when >= 0 (a corner of a face matched to a stored face, which states all
 * its values), else by weld_corner(). */
static ckey corner_key(welder *w, const objdoc *de, int32_t v, int32_t t, int32_t n, int32_t fj)
{
	const nwn_mesh *me = w->me;
	ckey k = { fj, v, t, n };
	bool uv_ok = fj >= 0, n_ok = fj >= 0;
	if (fj < 0 && w->anchor)
		k.j = weld_corner(w, &de->o, v, t, n, &uv_ok, &n_ok);
	if (k.j >= 0) {
		if (w->claim[k.j] < 0)
			w->claim[k.j] = v;
		/* stored bits where the corner states them */
		if (me->tverts[0] && uv_ok)
			k.t = -1;
		if (me->normals && n_ok)
			k.n = -1;
		else if (k.n < 0 && de->nvn)
			k.n = -2;
		if (k.n != -2)
			k.v = -1;
		return k;
	}
	if (k.t < 0)
		k.t = (uint32_t)k.v < de->nvt ? k.v : -1;
	if (k.n < 0)
		k.n = (uint32_t)k.v < de->nvn ? k.v : (de->nvn || me->normals ? -2 : -1);
	return k;
}

/* A text vertex: its key, where it sorts, the first corner using it. */
typedef struct tvx {
	ckey k;
	int64_t base; /* stored vertex, else OBJ position (after the stored ones when past them) */
	uint32_t first; /* first corner using it */
	uint32_t id;	/* index before the sort */
} tvx;

static int tvx_order(const void *x, const void *y)
{
	const tvx *a = x, *b = y;
	if (a->base != b->base)
		return a->base < b->base ? -1 : 1;
	/* the stored vertex as stored first, then variants by first use */
	bool pa = a->k.j >= 0 && a->k.t == -1 && a->k.n == -1, pb = b->k.j >= 0 && b->k.t == -1 && b->k.n == -1;
	if (pa != pb)
		return pa ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/* A corner by its key, for the dedup. */
typedef struct kent {
	ckey k;
	uint32_t c;
} kent;

static int kent_cmp(const void *p, const void *q)
{
	const kent *a = p, *b = q;
	int r = ckey_cmp(&a->k, &b->k);
	return r ? r : (a->c < b->c ? -1 : a->c > b->c);
}

static int32_t nearest_vertex(const float *verts, uint32_t nv, const float p[3])
{
	int32_t best = -1;
	double bd = 0;
	for (uint32_t i = 0; i < nv; i++) {
		double dx = (double)verts[3 * i] - p[0], dy = (double)verts[3 * i + 1] - p[1],
		       dz = (double)verts[3 * i + 2] - p[2];
		double d = dx * dx + dy * dy + dz * dz;
		if (best < 0 || d < bd) {
			best = (int32_t)i;
			bd = d;
		}
	}
	return best;
}

/* The arrays of the rebuilt mesh: nk text vertices, nf faces; NULL for what
 * the mesh does not have. Owned here until newmesh_free(). */
typedef struct newmesh {
	float *verts, *tv[4], *nrm, *cn, *con, *wts;
	uint32_t *col;
	int16_t *brf;
	nwn_face *faces;
} newmesh;

static void newmesh_free(newmesh *nm)
{
	free(nm->verts);
	for (int t = 0; t < 4; t++)
		free(nm->tv[t]);
	free(nm->nrm);
	free(nm->cn);
	free(nm->col);
	free(nm->con);
	free(nm->wts);
	free(nm->brf);
	free(nm->faces);
}

/* The corners' text vertices: one per distinct key, ordered by tvx_order;
 * an OBJ position no corner uses is one too, welded by its position (the
 * compiler's bounds, average and radius count every text vertex, as a
 * vertex line model.mdl keeps without a face). Fills fm/frot (weld_faces()),
 * tx[0 .. *nk) and cidx (per corner, its text vertex). ke, tx, rank, cidx:
 * room for 3 * nf + nv entries. False: out of memory. */
static bool text_vertices(welder *w, const objdoc *de, const nwn_mesh *me, int32_t *fm, uint8_t *frot,
			  kent *ke, tvx *tx, uint32_t *rank, uint32_t *cidx, uint32_t *nk)
{
	uint32_t onv = me->verts ? me->n_verts : 0;
	size_t nc = (size_t)de->nf * 3;
	uint8_t *vused = calloc((size_t)de->nv + 1, 1);
	if (!vused)
		return false;
	size_t ne = 0;
	if (w->anchor && !weld_faces(w, de, fm, frot)) {
		free(vused);
		return false;
	}
	for (size_t c = 0; c < nc; c++) {
		const int32_t *f = de->f + 3 * c;
		int32_t g = fm[c / 3];
		int32_t fj = g >= 0 ? me->faces[g].v[(frot[c / 3] + c % 3) % 3] : -1;
		vused[f[0]] = 1;
		ke[ne++] = (kent){ corner_key(w, de, f[0], f[1], f[2], fj), (uint32_t)c };
	}
	for (uint32_t v = 0; v < de->nv; v++)
		if (!vused[v])
			ke[ne++] = (kent){ corner_key(w, de, (int32_t)v, -1, -1, -1), (uint32_t)(nc + v) };
	free(vused);
	qsort(ke, ne, sizeof(kent), kent_cmp);
	*nk = 0;
	for (size_t c = 0; c < ne; c++) {
		if (c == 0 || ckey_cmp(&ke[c].k, &ke[c - 1].k)) {
			const ckey *k = &ke[c].k;
			int64_t base = k->j >= 0 ? k->j : (uint32_t)k->v < onv ? k->v : (int64_t)onv + k->v;
			tx[*nk] = (tvx){ *k, base, ke[c].c, *nk };
			(*nk)++;
		}
		cidx[ke[c].c] = *nk - 1;
	}
	qsort(tx, *nk, sizeof(tvx), tvx_order);
	for (uint32_t i = 0; i < *nk; i++)
		rank[tx[i].id] = i;
	for (size_t c = 0; c < nc; c++)
		cidx[c] = rank[cidx[c]];
	return true;
}

/* Normals computed for corners without one into cn (3 per OBJ position):
 * per position, the normalised sum of the raw normals of the faces using it
 * that way ((0, 0, 1) when none). */
static void computed_normals(const objdoc *de, const tvx *tx, const uint32_t *cidx, float *cn)
{
	for (uint32_t f = 0; f < de->nf; f++) {
		const float *p0 = de->v + 3 * de->f[9 * f], *p1 = de->v + 3 * de->f[9 * f + 3],
			    *p2 = de->v + 3 * de->f[9 * f + 6];
		double u[3] = { (double)p1[0] - p0[0], (double)p1[1] - p0[1], (double)p1[2] - p0[2] };
		double x[3], wv[3] = { (double)p2[0] - p1[0], (double)p2[1] - p1[1], (double)p2[2] - p1[2] };
		x[0] = u[1] * wv[2] - u[2] * wv[1];
		x[1] = u[2] * wv[0] - u[0] * wv[2];
		x[2] = u[0] * wv[1] - u[1] * wv[0];
		for (int c = 0; c < 3; c++)
			if (tx[cidx[3 * f + c]].k.n == -2)
				for (int k = 0; k < 3; k++)
					cn[3 * de->f[9 * f + 3 * c] + k] += (float)x[k];
	}
	for (uint32_t v = 0; v < de->nv; v++) {
		double l = sqrt((double)cn[3 * v] * cn[3 * v] + (double)cn[3 * v + 1] * cn[3 * v + 1] +
				(double)cn[3 * v + 2] * cn[3 * v + 2]);
		for (int k = 0; k < 3; k++)
			cn[3 * v + k] = l > 0 ? (float)(cn[3 * v + k] / l) : (k == 2 ? 1.0f : 0.0f);
	}
}

/* The optional arrays of nk text vertices: texture channels, normals,
 * colours, dangly constraints, skin weights, as the mesh or the OBJ has
 * them. False: out of memory. */
static bool newmesh_alloc_opt(newmesh *nm, const nwn_mesh *me, const objdoc *de, uint32_t nk)
{
	bool has_tv = de->nvt || me->tverts[0];
	bool has_n = de->nvn || me->normals;
	if (has_tv && !(nm->tv[0] = calloc((size_t)nk * 2 + 1, sizeof(float))))
		return false;
	for (int t = 1; t < 4; t++)
		if (me->tverts[t] && !(nm->tv[t] = calloc((size_t)nk * 2 + 1, sizeof(float))))
			return false;
	return !((has_n && !(nm->nrm = malloc(((size_t)nk * 3 + 1) * sizeof(float)))) ||
		 (me->colors && !(nm->col = malloc(((size_t)nk + 1) * sizeof(uint32_t)))) ||
		 (me->dangly && me->dangly->constraints && !(nm->con = calloc((size_t)nk + 1, sizeof(float)))) ||
		 (me->skin && me->skin->weights && me->skin->bonerefs &&
		  (!(nm->wts = calloc((size_t)nk * 4 + 1, sizeof(float))) ||
		   !(nm->brf = malloc(((size_t)nk * 4 + 1) * sizeof(int16_t))))));
}

/* Text vertex i of key k: position, uv and normal from the OBJ or the
 * welded vertex; the data the OBJ does not show from the welded vertex,
 * for a new one the stored vertex of its index while the vertex list kept
 * its length, else the nearest stored vertex. */
static void fill_vertex(newmesh *nm, uint32_t i, const ckey *k, const nwn_mesh *me, const objdoc *de)
{
	uint32_t onv = me->verts ? me->n_verts : 0;
	memcpy(nm->verts + 3 * (size_t)i, k->j >= 0 ? me->verts + 3 * (size_t)k->j : de->v + 3 * (size_t)k->v, 12);
	if (nm->tv[0]) {
		if (k->t >= 0 && (uint32_t)k->t < de->nvt)
			memcpy(nm->tv[0] + 2 * (size_t)i, de->vt + 2 * (size_t)k->t, 8);
		else if (k->j >= 0 && me->tverts[0])
			memcpy(nm->tv[0] + 2 * (size_t)i, me->tverts[0] + 2 * (size_t)k->j, 8);
	}
	if (nm->nrm) {
		static const float up[3] = { 0, 0, 1 };
		const float *src = k->n >= 0 && (uint32_t)k->n < de->nvn ? de->vn + 3 * (size_t)k->n
				 : k->n == -2 && k->v >= 0		  ? nm->cn + 3 * (size_t)k->v
				 : k->j >= 0 && me->normals		  ? me->normals + 3 * (size_t)k->j
									  : up;
		memcpy(nm->nrm + 3 * (size_t)i, src, 12);
	}
	int32_t sv = k->j >= 0			       ? k->j
		     : de->nv == onv && (uint32_t)k->v < onv ? k->v
							     : nearest_vertex(me->verts, onv, de->v + 3 * (size_t)k->v);
	for (int t = 1; t < 4; t++)
		if (nm->tv[t] && sv >= 0)
			memcpy(nm->tv[t] + 2 * (size_t)i, me->tverts[t] + 2 * (size_t)sv, 8);
	if (nm->col)
		nm->col[i] = sv >= 0 ? me->colors[sv] : 0xFFFFFFFFu;
	if (nm->con && sv >= 0 && (uint32_t)sv < me->dangly->constraints_arr.count)
		nm->con[i] = me->dangly->constraints[sv];
	if (nm->wts) {
		for (int l = 0; l < 4; l++)
			nm->brf[4 * (size_t)i + l] = -1;
		if (sv >= 0) {
			memcpy(nm->wts + 4 * (size_t)i, me->skin->weights + 4 * (size_t)sv, 16);
			memcpy(nm->brf + 4 * (size_t)i, me->skin->bonerefs + 4 * (size_t)sv, 8);
		}
	}
}

/* The faces of the rebuilt mesh: their text vertices, and the surface id
 * of the stored face paired with it (fm), else the stored face of these
 * welded vertices (any rotation), else the first sharing one, else 0. */
static void fill_faces(nwn_face *faces, const nwn_mesh *me, const objdoc *de, const tvx *tx,
		       const uint32_t *cidx, const int32_t *fm)
{
	uint32_t onf = me->faces ? me->n_faces : 0;
	for (uint32_t f = 0; f < de->nf; f++) {
		nwn_face *x = &faces[f];
		int32_t sj[3];
		for (int c = 0; c < 3; c++) {
			x->v[c] = (uint16_t)cidx[3 * f + c];
			sj[c] = tx[cidx[3 * f + c]].k.j;
		}
		int32_t same = fm[f], share = -1;
		for (uint32_t g = 0; g < onf && same < 0; g++) {
			const uint16_t *o = me->faces[g].v;
			for (int r = 0; r < 3 && same < 0; r++)
				if (sj[0] == o[r] && sj[1] == o[(r + 1) % 3] && sj[2] == o[(r + 2) % 3])
					same = (int32_t)g;
			for (int c = 0; c < 3 && share < 0; c++)
				if (sj[c] >= 0 && (sj[c] == o[0] || sj[c] == o[1] || sj[c] == o[2]))
					share = (int32_t)g;
		}
		x->surface_id = same >= 0 ? me->faces[same].surface_id : share >= 0 ? me->faces[share].surface_id : 0;
	}
}

/* The model.mdl text of m with mesh me holding nm's arrays (nk vertices,
 * nf faces) into out; the arrays stay nm's (detached again after). */
static lfs_err write_rebuilt(nwn_model *m, nwn_mesh *me, const newmesh *nm, uint32_t nk, uint32_t nf,
			     lfs_sb *out, lfs_error *err)
{
	me->verts = nm->verts;
	me->n_verts = (uint16_t)nk;
	for (int t = 0; t < 4; t++)
		me->tverts[t] = nm->tv[t];
	me->normals = nm->nrm;
	me->colors = nm->col;
	me->faces = nm->faces;
	me->n_faces = nf;
	if (me->dangly && me->dangly->constraints) {
		me->dangly->constraints = nm->con;
		me->dangly->constraints_arr.count = nk;
	}
	if (nm->wts) {
		me->skin->weights = nm->wts;
		me->skin->bonerefs = nm->brf;
	}
	lfs_err e = nwn_ascii_write(m, out, err);
	/* the arrays are ours: detach them before the model is freed */
	me->verts = NULL;
	me->faces = NULL;
	me->normals = NULL;
	me->colors = NULL;
	for (int t = 0; t < 4; t++)
		me->tverts[t] = NULL;
	if (me->dangly && nm->con)
		me->dangly->constraints = NULL;
	if (nm->wts) {
		me->skin->weights = NULL;
		me->skin->bonerefs = NULL;
	}
	return e;
}

/*
 * The model.mdl text of the model with mesh node @p idx rebuilt from the
 * edited OBJ @p de (docs/formats/obj-csv.md, "Saving OBJ from other
 * programs"; docs/nwn-compile.md "Structural edits"). Welding: a triangle
 * whose corners state (at the precision written) the position, uv and
 * normal of the three vertices of a stored face is paired with it, by order
 * (weld_faces()), and its corners are those vertices; any other corner is
 * welded to the stored vertex whose values it states best (weld_corner()).
 * A welded corner is that vertex with its stored bits (a uv or normal it
 * does not state: that value as written, a variant of the vertex). A
 * corner that states no stored position is a new vertex with the values as
 * written: one per distinct (v, vt, vn), a corner without vt taking the vt
 * of its v index (else 0, 0), without vn (when normals exist) the
 * normalised sum of the raw normals of the faces using its position that
 * way. An OBJ position no corner uses is a text vertex too (welded by
 * position; the compiler counts it in the bounds, then drops it). Text
 * vertices are ordered by stored vertex (new ones by OBJ position index),
 * so deleting faces (and the vertices only they used) in the OBJ gives the
 * text of the same deletion in model.mdl. Vertex data the OBJ does not show
 * (colours, skin weights, dangly constraints, tverts1..3) comes from the
 * welded vertex, for a new vertex from the stored vertex of its v index
 * when the OBJ lists as many vertices as the mesh, else from the nearest
 * stored vertex; a face takes the surface id of its paired stored face,
 * else of the stored face with the same welded vertices (in any rotation),
 * else of the first stored face sharing a welded vertex, else 0.
 */
static lfs_err obj_to_mdl(ap *a, const uint8_t *orig, size_t n, int32_t idx, const objdoc *de, lfs_sb *out)
{
	nwn_model *m = NULL;
	lfs_err e = nwn_mdl_decode(orig, n, &m, a->p.err);
	if (e)
		return e;
	nwn_mesh *me = m->geom.nodes[idx].mesh;
	uint32_t onv = me->verts ? me->n_verts : 0;
	size_t nce = (size_t)de->nf * 3 + de->nv; /* corners, then OBJ positions */
	kent *ke = malloc((nce + 1) * sizeof(kent));
	uint32_t *cidx = malloc((nce + 1) * sizeof(uint32_t));
	tvx *tx = malloc((nce + 1) * sizeof(tvx));
	uint32_t *rank = malloc((nce + 1) * sizeof(uint32_t));
	int32_t *fm = malloc(((size_t)de->nf + 1) * sizeof(int32_t));
	uint8_t *frot = calloc((size_t)de->nf + 1, 1);
	uint32_t nk = 0;
	newmesh nm = { 0 };
	welder w = { 0 };
	if (!ke || !cidx || !tx || !rank || !fm || !frot || !welder_init(&w, me, onv) ||
	    (de->o.v_num && !weld_anchor(&w, de)))
		goto nomem;
	if (me->anim && (me->anim->n_vert_sets || me->anim->n_tvert_sets)) {
		e = lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: adding or removing vertices or faces of an animmesh with vertex sets is not "
			     "supported (edit model.mdl)", a->p.file);
		goto out;
	}
	for (uint32_t i = 0; i < de->nf; i++)
		fm[i] = -1;
	if (!text_vertices(&w, de, me, fm, frot, ke, tx, rank, cidx, &nk))
		goto nomem;
	if (nk > 65535) {
		e = lfs_fail(a->p.err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: %u vertices after splitting (the binary holds at most 65535)", a->p.file, nk);
		goto out;
	}
	nm.cn = calloc((size_t)de->nv * 3 + 1, sizeof(float));
	nm.verts = malloc(((size_t)nk * 3 + 1) * sizeof(float));
	nm.faces = calloc((size_t)de->nf + 1, sizeof(nwn_face));
	if (!nm.cn || !nm.verts || !nm.faces)
		goto nomem;
	computed_normals(de, tx, cidx, nm.cn);
	if (!newmesh_alloc_opt(&nm, me, de, nk))
		goto nomem;
	for (uint32_t i = 0; i < nk; i++)
		fill_vertex(&nm, i, &tx[i].k, me, de);
	fill_faces(nm.faces, me, de, tx, cidx, fm);
	e = write_rebuilt(m, me, &nm, nk, de->nf, out, a->p.err);
	goto out;
nomem:
	e = lfs_nomem(a->p.err, "apply view");
out:
	welder_free(&w);
	free(fm);
	free(frot);
	free(ke);
	free(tx);
	free(rank);
	free(cidx);
	newmesh_free(&nm);
	nwn_model_free(m);
	return e;
}

/* Structural edit of a mesh OBJ: the model.mdl text with that node rebuilt,
 * then the model.mdl ap_structural path. */
lfs_err ap_structural_obj(ap *a, const uint8_t *orig, size_t n, const char *text, size_t tn,
			      nwn_supermodel_lookup_fn lookup, void *ctx, uint8_t **out, size_t *outn)
{
	int32_t idx = (int32_t)a->target.node;
	objdoc de = { 0 };
	lfs_sb sb = { 0 };
	lfs_err e = objdoc_read(a, text, tn, &de);
	if (!e)
		e = obj_to_mdl(a, orig, n, idx, &de, &sb);
	if (!e) {
		char name[600];
		snprintf(name, sizeof(name), "%s (as model.mdl)", a->p.file);
		e = nwn_apply_structural(orig, n, name, sb.data, sb.len, lookup, ctx, out, outn, a->p.err);
	}
	lfs_sb_free(&sb);
	objdoc_free(&de);
	return e;
}

