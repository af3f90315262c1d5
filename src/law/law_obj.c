/**
 * @file law_obj.c
 * The round-trip law for OBJ views (law.h, docs/editing.md "The round-trip
 * law", row "OBJ"): the saved OBJ against the OBJ the same view of the new
 * bytes reads back as, object by object, face corners resolved to values by
 * the shared OBJ reader (obj.h) and compared by the OBJ apply's own rules.
 */
#include "law_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/mem.h"

/* ---- OBJ ------------------------------------------------------------------ */

static const char *const obj_known[] = { "v", "vt", "vn", "f", "o", "g", "s", "usemtl",
					 "mtllib", NULL };

typedef struct osec {
	const char *name;
	uint32_t name_len, line, col;
	size_t f0, f1; /* faces [f0, f1) */
} osec;

/* Objects of @p o: split at each `o` (or, when there is none, each `g`). */
static osec *obj_sections(const lfs_obj *o, size_t *n)
{
	osec *s = calloc(o->ns + 2, sizeof(*s));
	if (!s)
		return NULL;
	size_t k = 0;
	s[0] = (osec){ "", 0, 0, 0, 0, 0 };
	k = 1;
	{
		bool has_o = false;
		for (size_t i = 0; i < o->ns; i++)
			has_o |= o->s[i].kind == LFS_OBJ_O;
		lfs_obj_kind split = has_o ? LFS_OBJ_O : LFS_OBJ_G;
		for (size_t i = 0; i < o->ns; i++) {
			const lfs_obj_stmt *st = &o->s[i];
			if (st->kind != split)
				continue;
			s[k - 1].f1 = st->nf;
			s[k++] = (osec){ st->arg ? st->arg : "", st->arg ? st->arg_len : 0,
					 st->line, st->col, st->nf, 0 };
		}
	}
	s[k - 1].f1 = o->nf;
	/* objects without faces are not compared */
	size_t m = 0;
	for (size_t i = 0; i < k; i++)
		if (s[i].f1 > s[i].f0)
			s[m++] = s[i];
	*n = m;
	return s;
}

/* Number of triangles of faces [f0, f1) as fans. */
static size_t tri_count(const lfs_obj *o, size_t f0, size_t f1)
{
	size_t t = 0;
	for (size_t f = f0; f < f1; f++)
		t += o->f[f].n >= 3 ? o->f[f].n - 2 : 0;
	return t;
}

/* A walk over the fan triangles of faces [f, f1): face f, triangle k of it. */
typedef struct tcur {
	const lfs_obj *o;
	size_t f, f1;
	uint32_t k;
} tcur;

static void tcur_skip(tcur *t)
{
	while (t->f < t->f1 && t->o->f[t->f].n < 3)
		t->f++;
}

static tcur tcur_at(const lfs_obj *o, size_t f0, size_t f1)
{
	tcur t = { o, f0, f1, 0 };
	tcur_skip(&t);
	return t;
}

/* Corner @p q (0..2) of the current triangle (a fan from corner 0). */
static const lfs_obj_corner *tcur_corner(const tcur *t, unsigned q)
{
	const lfs_obj_face *fc = &t->o->f[t->f];
	return &t->o->c[fc->first + (q == 0 ? 0 : t->k + q)];
}

static void tcur_next(tcur *t)
{
	if (++t->k + 2 >= t->o->f[t->f].n) {
		t->k = 0;
		t->f++;
		tcur_skip(t);
	}
}

typedef struct octx {
	lctx *c;
	const lfs_obj *S, *R;
	const lfs_obj *O; /* the view the save was made from (the re-read one when not given) */
	uint32_t *byline; /* saved line number -> index into c->S.l + 1 */
	size_t nby;
	uint8_t *nst;	  /* per re-read normal: what the saved corners say of it (N_*) */
	float (*nval)[3]; /* its new value (N_NEW) */
} octx;

/* What the saved corners of one vertex say about its normal, as the apply
 * reads them: nothing, the normal it had, one new normal, several
 * (disagreeing: the apply keeps the normal it had). */
enum { N_UNSEEN, N_SAME, N_NEW, N_MIXED };

/* Saved numbers of element line @p line (after the keyword) vs @p n read-back values. */
static bool obj_vals_eq(octx *x, uint32_t line, const float *rv, unsigned n)
{
	if (line >= x->nby || !x->byline[line])
		return false;
	const lline *l = &x->c->S.l[x->byline[line] - 1];
	if (l->ntok < 1 + n)
		return false;
	for (unsigned k = 0; k < n; k++) {
		double sv = 0, st = 0;
		if (lfs_law_tok_num(x->c->S.t[l->tok0 + 1 + k], &sv, &st) != NUM_FINITE) {
			if (!isnan(rv[k]) && !isinf(rv[k]))
				return false;
			continue;
		}
		if (!lfs_law_val_eq(sv, st, (double)rv[k]))
			return false;
	}
	return true;
}

/* Does saved normal @p sn state normal @p shown by the apply's normal rule
 * (docs/formats/obj-csv.md "Saving OBJ from other programs"): at printed
 * precision, or by direction (lfs_obj_normal_same(): within
 * LFS_OBJ_NORMAL_TOL, or reversed; a zero @p shown is kept)? */
static bool normal_states(octx *x, const lfs_obj_corner *sc, const float *shown)
{
	const lfs_obj *S = x->S;
	const lfs_obj_num *n = S->vn_num + 3 * (size_t)sc->n;
	return lfs_obj_normal_keeps(n, shown) || obj_vals_eq(x, S->vn_at[sc->n].line, shown, 3);
}

/* What saved corner @p sc says of the normal of the vertex re-read corner
 * @p rc has (x->nst), as the apply's value path notes it: the original
 * normal (x->O) or a new one; two corners that disagree make it N_MIXED. */
static void note_normal(octx *x, const lfs_obj_corner *sc, const lfs_obj_corner *rc)
{
	if (sc->n < 0 || rc->n < 0 || !x->nst || (size_t)rc->n >= x->O->nn)
		return;
	size_t j = (size_t)rc->n;
	bool same = normal_states(x, sc, x->O->vn[j]);
	const float *v = x->S->vn[sc->n];
	uint8_t *st = &x->nst[j];
	if (*st == N_UNSEEN) {
		*st = same ? N_SAME : N_NEW;
		if (!same)
			memcpy(x->nval[j], v, sizeof(x->nval[j]));
	} else if (*st == N_SAME ? !same
		   : *st == N_NEW ? same || memcmp(x->nval[j], v, sizeof(x->nval[j])) != 0
				  : false) {
		*st = N_MIXED;
	}
}

/* What of saved corner @p sc does not survive as re-read corner @p rc,
 * NULL: nothing. @p moved: the corner is on a face whose positions the
 * save moved in the apply's value path (its normal is not read). */
static const char *corner_what(octx *x, const lfs_obj_corner *sc, const lfs_obj_corner *rc, bool moved)
{
	const lfs_obj *S = x->S, *R = x->R;
	if (!obj_vals_eq(x, S->v_at[sc->v].line, R->v[rc->v], 3) &&
	    lfs_obj_vec_keeps(S->v_num + 3 * (size_t)sc->v, R->v[rc->v], 3) != 7)
		return "its position";
	if (rc->t < 0 && sc->t >= 0)
		return "its texture coordinates (this mesh keeps none)";
	if (rc->t >= 0 && sc->t >= 0 && !obj_vals_eq(x, S->vt_at[sc->t].line, R->vt[rc->t], 2) &&
	    !(lfs_obj_num_keeps(&S->vt_num[2 * (size_t)sc->t], R->vt[rc->t][0], 0.0) &&
	      lfs_obj_num_keeps(&S->vt_num[2 * (size_t)sc->t + 1], R->vt[rc->t][1], 0.0)))
		return "its texture coordinates";
	if (rc->n < 0 || sc->n < 0 || moved || normal_states(x, sc, R->vn[rc->n]))
		return NULL;
	/* corners that disagree about a vertex's normal: the normal it had stays */
	if (x->nst && (size_t)rc->n < x->O->nn && x->nst[rc->n] == N_MIXED &&
	    !memcmp(R->vn[rc->n], x->O->vn[rc->n], sizeof(R->vn[0])))
		return NULL;
	return "its normal";
}

/* Is saved object @p a (faces of S) read by the apply's value path against
 * object @p ob of the original view: as many faces, all triangles? */
static bool value_path(const lfs_obj *S, const osec *a, const lfs_obj *O, const osec *ob)
{
	if (!ob || a->f1 - a->f0 != ob->f1 - ob->f0)
		return false;
	for (size_t f = a->f0; f < a->f1; f++)
		if (S->f[f].n != 3)
			return false;
	for (size_t f = ob->f0; f < ob->f1; f++) {
		if (O->f[f].n != 3)
			return false;
		for (uint32_t q = 0; q < 3; q++)
			if ((size_t)O->c[O->f[f].first + q].v >= O->nv)
				return false;
	}
	return true;
}

/* Saved object @p a's match among @p n objects @p l: the one of the same
 * name not taken yet (@p used) in model.obj (@p whole false: the apply finds
 * objects by name, in any order), else the one at @p k. */
static const osec *pair_sec(const osec *a, size_t k, const osec *l, size_t n, bool whole, uint8_t *used)
{
	if (!whole && a->line) {
		for (size_t i = 0; i < n; i++)
			if ((!used || !used[i]) && l[i].name_len == a->name_len &&
			    !memcmp(l[i].name, a->name, a->name_len)) {
				if (used)
					used[i] = 1;
				return &l[i];
			}
	}
	if (k < n && (!used || !used[k])) {
		if (used)
			used[k] = 1;
		return &l[k];
	}
	return NULL;
}

/* Every statement of the saved text is one the OBJ views store; else the
 * error at the first that is not. */
static lfs_err known_statements(lctx *c)
{
	for (size_t i = 0; i < c->S.nl; i++) {
		const lline *l = &c->S.l[i];
		ltok w = c->S.t[l->tok0];
		bool known = false;
		for (const char *const *k = obj_known; *k && !known; k++)
			known = w.len == strlen(*k) && memcmp(w.s, *k, w.len) == 0;
		if (!known) {
			char kw[40];
			snprintf(kw, sizeof(kw), "%.*s", (int)(w.len < 32 ? w.len : 32), w.s);
			return lfs_fail_at(c->err, c->path, l->line, w.col,
					   "'%s' statements are not stored by this view: the "
					   "model cannot keep them",
					   kw);
		}
	}
	return LFS_OK;
}

/* Every corner of the saved text S and of the re-read one R names
 * elements that exist (the reader allows forward references; a format
 * that stores them all the same breaks the view). */
static lfs_err corners_exist(lctx *c, const lfs_obj *S, const lfs_obj *R)
{
	for (int side = 0; side < 2; side++) {
		const lfs_obj *o = side ? R : S;
		for (size_t i = 0; i < o->nf; i++)
			for (uint32_t k = 0; k < o->f[i].n; k++) {
				const lfs_obj_corner *q = &o->c[o->f[i].first + k];
				if (q->v >= 0 && (size_t)q->v < o->nv &&
				    (q->t < 0 || (size_t)q->t < o->nt) &&
				    (q->n < 0 || (size_t)q->n < o->nn))
					continue;
				return side ? lfs_fail_at(c->err, c->path, 1, 1,
						       "the view of the saved model does not read "
						       "back: face %zu names an element it does not "
						       "have",
						       i + 1)
					 : lfs_fail_at(c->err, c->path, o->f[i].line, q->col,
						       "this face corner names a vertex, texture "
						       "coordinate or normal the text does not have");
			}
	}
	return LFS_OK;
}

/* The apply's value path: faces paired with the original's in order; a
 * face whose saved positions do not state the original ones moved (moved[],
 * per saved triangle; its normals are not read); what the other corners
 * say of each normal (note_normal()). sb, sob: per saved object ss[k] its
 * re-read and original object, NULL for none. */
static void note_moved(octx *x, const osec *ss, const osec **sb, const osec **sob, size_t nss,
		       uint8_t *moved)
{
	for (size_t k = 0, tbase = 0; k < nss; k++) {
		const osec *a = &ss[k], *b = sb[k], *ob = sob[k];
		size_t ta = tri_count(x->S, a->f0, a->f1);
		if (b && value_path(x->S, a, x->O, ob) && tri_count(x->R, b->f0, b->f1) == ta) {
			tcur A = tcur_at(x->S, a->f0, a->f1), B = tcur_at(x->O, ob->f0, ob->f1),
			     C = tcur_at(x->R, b->f0, b->f1);
			for (size_t t = 0; t < ta; t++, tcur_next(&A), tcur_next(&B), tcur_next(&C)) {
				for (unsigned q = 0; q < 3; q++) {
					const lfs_obj_corner *sc = tcur_corner(&A, q), *oc = tcur_corner(&B, q);
					if (lfs_obj_vec_keeps(x->S->v_num + 3 * (size_t)sc->v, x->O->v[oc->v], 3) != 7)
						moved[tbase + t] = 1;
				}
				for (unsigned q = 0; q < 3 && !moved[tbase + t]; q++)
					note_normal(x, tcur_corner(&A, q), tcur_corner(&C, q));
			}
		}
		tbase += ta;
	}
}

/* Saved object a against its re-read pair b (NULL: none; nrs re-read
 * objects): kept, of the same name, every face corner surviving
 * (corner_what()), as many triangles. moved: per triangle of a, whether
 * it moved (note_moved()). */
static lfs_err compare_object(octx *x, const osec *a, const osec *b, bool whole, size_t nrs,
			      const uint8_t *moved)
{
	lctx *c = x->c;
	const lfs_obj *S = x->S, *R = x->R;
	lfs_err e = LFS_OK;
	if (!b) {
		e = lfs_fail_at(c->err, c->path, a->line ? a->line : S->f[a->f0].line,
				a->line ? a->col : S->f[a->f0].col,
				"this object is not kept: reading the view back has %zu "
				"object(s) with faces%s",
				nrs, whole ? "" : ", none of this name");
		return e;
	}
	/* a mesh OBJ is one object: its name is compared when the saved
	 * text gives one */
	bool named = !whole || a->line;
	if (named && (a->name_len != b->name_len || memcmp(a->name, b->name, a->name_len))) {
		e = lfs_fail_at(c->err, c->path, a->line ? a->line : S->f[a->f0].line,
				a->line ? a->col : S->f[a->f0].col,
				"this object does not survive the save: reading the view "
				"back names it '%.*s'",
				(int)(b->name_len < 64 ? b->name_len : 64), b->name);
		return e;
	}
	size_t ta = tri_count(S, a->f0, a->f1), tb = tri_count(R, b->f0, b->f1);
	size_t nt = ta < tb ? ta : tb;
	tcur A = tcur_at(S, a->f0, a->f1), B = tcur_at(R, b->f0, b->f1);
	for (size_t t = 0; t < nt && !e; t++, tcur_next(&A), tcur_next(&B)) {
		for (unsigned q = 0; q < 3 && !e; q++) {
			const lfs_obj_corner *sc = tcur_corner(&A, q);
			const lfs_obj_corner *rc = tcur_corner(&B, q);
			const char *what = corner_what(x, sc, rc, moved[t]);
			if (what)
				e = lfs_fail_at(c->err, c->path, S->f[A.f].line, sc->col,
						"this face corner does not survive the save: "
						"reading the view back changes %s",
						what);
		}
	}
	if (!e && ta != tb) {
		size_t fa = ta > tb ? A.f : a->f1 - 1;
		if (ta > tb)
			e = lfs_fail_at(c->err, c->path, S->f[fa].line, S->f[fa].col,
					"this face is not kept: reading the view back has %zu "
					"triangle(s) in this object, the saved text %zu",
					tb, ta);
		else
			e = lfs_fail_at(c->err, c->path, S->f[fa].line, S->f[fa].col,
					"reading the view back has %zu further triangle(s) "
					"after this face",
					tb - ta);
	}
	return e;
}

lfs_err lfs_law_compare_obj(lctx *c, bool whole, const char *saved, size_t sn, const char *reread,
			    size_t rn, const char *orig, size_t on)
{
	lfs_err e = known_statements(c);
	if (e)
		return e;
	lfs_obj S, R, Ob;
	memset(&R, 0, sizeof(R));
	memset(&Ob, 0, sizeof(Ob));
	lfs_obj_rules rules = { .flags = LFS_OBJ_W }, srules = { .flags = LFS_OBJ_W | LFS_OBJ_NUMS };
	e = lfs_obj_read(c->path, saved, sn, &srules, &S, c->err);
	if (!e) {
		lfs_error tmp;
		e = lfs_obj_read(c->path, reread, rn, &rules, &R, &tmp);
		if (e)
			e = lfs_fail_at(c->err, c->path, 1, 1,
					"the view of the saved model does not read back: %s",
					tmp.msg);
	}
	/* the view the save was made from (what moved, the normals that stay) */
	const lfs_obj *O = &R;
	if (!e && orig && (on != rn || memcmp(orig, reread, rn))) {
		lfs_error tmp;
		if (lfs_obj_read(c->path, orig, on, &rules, &Ob, &tmp) == LFS_OK)
			O = &Ob;
		else
			O = NULL;
	}
	if (!e)
		e = corners_exist(c, &S, &R);
	osec *ss = NULL, *rs = NULL, *os = NULL;
	size_t nss = 0, nrs = 0, nos = 0;
	uint8_t *rused = NULL, *oused = NULL, *moved = NULL;
	octx x = { c, &S, &R, O, NULL, 0, NULL, NULL };
	if (!e) {
		ss = obj_sections(&S, &nss);
		rs = obj_sections(&R, &nrs);
		os = O ? obj_sections(O, &nos) : NULL;
		rused = calloc(nrs + 1, 1);
		oused = calloc(nos + 1, 1);
		moved = calloc(tri_count(&S, 0, S.nf) + 1, 1);
		x.nby = (size_t)c->S.end_line + 2;
		x.byline = calloc(x.nby, sizeof(uint32_t));
		if (O && O->nn == R.nn) {
			x.nst = calloc(R.nn + 1, 1);
			x.nval = calloc(R.nn + 1, sizeof(*x.nval));
		}
		if (!ss || !rs || (O && !os) || !rused || !oused || !moved || !x.byline ||
		    (O && O->nn == R.nn && (!x.nst || !x.nval)))
			e = lfs_nomem(c->err, "round-trip check");
		else
			for (size_t i = 0; i < c->S.nl; i++)
				if (c->S.l[i].line < x.nby)
					x.byline[c->S.l[i].line] = (uint32_t)i + 1;
	}
	/* objects paired: saved k with re-read sb[k] and original sob[k] */
	const osec **sb = NULL, **sob = NULL;
	if (!e) {
		sb = calloc(nss + 1, sizeof(*sb));
		sob = calloc(nss + 1, sizeof(*sob));
		if (!sb || !sob)
			e = lfs_nomem(c->err, "round-trip check");
		for (size_t k = 0; !e && k < nss; k++) {
			sb[k] = pair_sec(&ss[k], k, rs, nrs, whole, rused);
			sob[k] = O ? pair_sec(&ss[k], k, os, nos, whole, oused) : NULL;
		}
	}
	if (!e && x.nst)
		note_moved(&x, ss, sb, sob, nss, moved);
	for (size_t k = 0, tbase = 0; !e && k < nss; k++) {
		e = compare_object(&x, &ss[k], sb[k], whole, nrs, moved + tbase);
		tbase += tri_count(&S, ss[k].f0, ss[k].f1);
	}
	if (!e && nrs > nss)
		e = lfs_fail_at(c->err, c->path, c->S.end_line, c->S.end_col,
				"reading the view back has %zu further object(s) with faces "
				"(a deletion that was not applied)",
				nrs - nss);
	free(sb);
	free(sob);
	free(os);
	free(rused);
	free(oused);
	free(moved);
	free(x.nst);
	free(x.nval);
	lfs_obj_free(&Ob);
	free(ss);
	free(rs);
	free(x.byline);
	lfs_obj_free(&S);
	lfs_obj_free(&R);
	return e;
}
