/**
 * @file obj.c
 * The shared OBJ reader and line writers (obj.h).
 */
#include "obj.h"

#include "../common/floatfmt.h"
#include "../common/mem.h"
#include "mdltext.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void lfs_obj_free(lfs_obj *o)
{
	free(o->v);
	free(o->vt);
	free(o->vn);
	free(o->v_at);
	free(o->vt_at);
	free(o->vn_at);
	free(o->f);
	free(o->c);
	free(o->s);
	free(o->v_num);
	free(o->vt_num);
	free(o->vn_num);
	memset(o, 0, sizeof(*o));
}

typedef struct reader {
	lfs_lex lx;
	const lfs_obj_rules *r;
	lfs_obj *o;
	lfs_line ln;
	size_t num_cap[LFS_OBJ_VN + 1]; /* elements allotted in v_num, vt_num, vn_num */
	bool foreign; /* a number that is not the shortest text of its float32 was read */
} reader;

static const struct {
	const char *kw;
	lfs_obj_kind kind;
} keywords[] = {
	{ "v", LFS_OBJ_V }, { "vt", LFS_OBJ_VT },	  { "vn", LFS_OBJ_VN },
	{ "f", LFS_OBJ_F }, { "o", LFS_OBJ_O },		  { "g", LFS_OBJ_G },
	{ "s", LFS_OBJ_S }, { "usemtl", LFS_OBJ_USEMTL }, { "mtllib", LFS_OBJ_MTLLIB },
};

static lfs_obj_kind kind_of(const lfs_tok *t)
{
	for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (lfs_tok_is(t, keywords[i].kw))
			return keywords[i].kind;
	return LFS_OBJ_OTHER;
}

/* Grow the value array *@p a and its position array *@p at (same capacity). */
static bool grow_pair(void **a, void **at, size_t *cap, size_t need, size_t esz)
{
	size_t old = *cap;
	if (!lfs_grow(a, cap, need, esz))
		return false;
	if (*cap != old) {
		void *q = realloc(*at, *cap * sizeof(lfs_obj_at));
		if (!q)
			return false; /* the reader stops; lfs_obj_free() frees both */
		*at = q;
	}
	return true;
}

/* Token @p i as float32 (lfs_lex_f32(); LFS_OBJ_MDL_MSGS: model.mdl's wording). */
static lfs_err read_f32(reader *rd, uint32_t i, float *out)
{
	if (!(rd->r->flags & LFS_OBJ_MDL_MSGS))
		return lfs_lex_f32(&rd->lx, &rd->ln, i, out);
	const lfs_tok *t = &rd->ln.tok[i];
	if (lfs_parse_float_bits(t->s, t->len, out))
		return LFS_OK;
	if (lfs_float_overflows(t->s, t->len))
		return lfs_lex_fail(&rd->lx, &rd->ln, i, "'%.*s' " LFS_FLOAT_RANGE_MSG,
				    (int)(t->len > 40 ? 40 : t->len), t->s);
	return lfs_lex_fail(&rd->lx, &rd->ln, i, "'%.*s' is not a number",
			    (int)(t->len > 40 ? 40 : t->len), t->s);
}

int16_t lfs_obj_num_decimals(const char *s, size_t len)
{
	size_t i = 0;
	if (i < len && (s[i] == '+' || s[i] == '-'))
		i++;
	size_t int_digits = 0, frac = 0;
	bool dot = false;
	while (i < len && s[i] >= '0' && s[i] <= '9')
		i++, int_digits++;
	if (i < len && s[i] == '.') {
		dot = true;
		i++;
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++, frac++;
	}
	if (!int_digits && !frac)
		return LFS_OBJ_NUM_EXACT; /* nan, inf, nan:XXXXXXXX */
	long ex = 0;
	bool has_exp = false;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		size_t j = i + 1;
		bool neg = false;
		if (j < len && (s[j] == '+' || s[j] == '-'))
			neg = s[j++] == '-';
		if (j == len || s[j] < '0' || s[j] > '9')
			return LFS_OBJ_NUM_EXACT;
		while (j < len && s[j] >= '0' && s[j] <= '9') {
			if (ex < 100000)
				ex = ex * 10 + (s[j] - '0');
			j++;
		}
		i = j;
		has_exp = true;
		if (neg)
			ex = -ex;
	}
	if (i != len || (!dot && !has_exp))
		return LFS_OBJ_NUM_EXACT; /* hex floats and the like; plain integers */
	long d = (long)frac - ex;
	if (d < 0)
		return LFS_OBJ_NUM_EXACT;
	return (int16_t)(d > LFS_OBJ_NUM_MAXDEC ? LFS_OBJ_NUM_MAXDEC : d);
}

bool lfs_obj_num_keeps(const lfs_obj_num *n, float stored, double scale)
{
	if (lfs_obj_num_prec(n) < 0 || !isfinite(stored) || !isfinite(n->value)) {
		float f = (float)n->value;
		/* the writers print any NaN as "nan" (its bits are lost): a plain
		 * NaN states a stored NaN of any bits, and "nan:XXXXXXXX" the
		 * stored bits or the quiet NaN "nan" reads as */
		if (isnan(f) && isnan(stored) &&
		    (lfs_f32_bits(f) & 0x7fffffffu) == 0x7fc00000u)
			return true;
		return f == stored || lfs_f32_bits(f) == lfs_f32_bits(stored);
	}
	/* a number that reads as the very float stored states it, whatever
	 * precision the rest of the text was printed at: storing it would give
	 * the same bits, and keeping them matters where the view shows a
	 * transform of the stored value (NOD's vt v = 1 - stored v, not
	 * invertible in float32: re-deriving it moves the stored v by an ulp) */
	if ((float)n->value == stored)
		return true;
	double half = 0.5 * pow(10.0, -(double)lfs_obj_num_prec(n));
	double slack = FLT_EPSILON * (isfinite(scale) ? fabs(scale) : 0.0);
	return fabs((double)stored - n->value) <= half + slack;
}

bool lfs_obj_normal_same(const double n[3], const float stored[3])
{
	double a2 = 0, b2 = 0, d = 0;
	for (int k = 0; k < 3; k++) {
		a2 += n[k] * n[k];
		b2 += (double)stored[k] * stored[k];
		d += n[k] * stored[k];
	}
	if (!(b2 > 0) || !isfinite(b2))
		return true;
	if (!(a2 > 0) || !isfinite(a2))
		return false;
	return fabs(d / sqrt(a2 * b2)) >= cos(LFS_OBJ_NORMAL_TOL);
}

unsigned lfs_obj_vec_keeps(const lfs_obj_num *n, const float *stored, unsigned dim)
{
	double scale = 0;
	for (unsigned k = 0; dim == 3 && k < 3; k++)
		if (fabs((double)stored[k]) > scale)
			scale = fabs((double)stored[k]);
	unsigned mask = 0;
	for (unsigned k = 0; k < dim; k++)
		if (lfs_obj_num_keeps(&n[k], stored[k], scale))
			mask |= 1u << k;
	return mask;
}

bool lfs_obj_normal_keeps(const lfs_obj_num *n, const float stored[3])
{
	if (lfs_obj_vec_keeps(n, stored, 3) == 7)
		return true;
	const double v[3] = { n[0].value, n[1].value, n[2].value };
	return lfs_obj_normal_same(v, stored);
}

/* The decimal value of number token @p t in double: strtod() of the token
 * when it is plain decimal text, else @p f (what the float reader gave:
 * "nan:XXXXXXXX", overlong tokens). */
static double tok_double(const lfs_tok *t, float f)
{
	char buf[64];
	if (t->len == 0 || t->len >= sizeof(buf) || memchr(t->s, ':', t->len))
		return (double)f;
	memcpy(buf, t->s, t->len);
	buf[t->len] = 0;
	char *end;
	double d = strtod(buf, &end);
	return *end ? (double)f : d;
}

/* v / vt / vn: @p want numbers, plus a w when LFS_OBJ_W (skipped unread) or
 * LFS_OBJ_VT_W0 (read, must be 0) allows it. */
static lfs_err read_vec(reader *rd, lfs_obj_kind k)
{
	lfs_obj *o = rd->o;
	const lfs_line *ln = &rd->ln;
	unsigned flags = rd->r->flags;
	uint32_t want = k == LFS_OBJ_VT ? 2 : 3;
	bool w0 = k == LFS_OBJ_VT && (flags & LFS_OBJ_VT_W0);
	uint32_t extra = (k != LFS_OBJ_VN && (flags & LFS_OBJ_W)) || w0 ? 1 : 0;
	uint32_t got = ln->ntok - 1;
	if (got < want || got > want + extra) {
		const lfs_tok *kw = &ln->tok[0];
		if (flags & LFS_OBJ_MDL_MSGS)
			return lfs_lex_fail(&rd->lx, ln, ln->ntok - 1,
					    "expected %u numbers after '%.*s'", want, (int)kw->len,
					    kw->s);
		if (extra)
			return lfs_lex_fail(&rd->lx, ln, got < want ? ln->ntok : want + extra + 1,
					    "expected %u or %u numbers after '%.*s', found %u",
					    want, want + extra, (int)kw->len, kw->s, got);
		return lfs_lex_fail(&rd->lx, ln, got < want ? ln->ntok : want + 1,
				    "expected %u numbers after '%.*s', found %u", want,
				    (int)kw->len, kw->s, got);
	}
	float *dst;
	lfs_obj_at *at;
	bool ok;
	lfs_obj_num **num;
	size_t cap, idx;
	if (k == LFS_OBJ_V) {
		ok = grow_pair((void **)&o->v, (void **)&o->v_at, &o->cap_v, o->nv + 1,
			       sizeof(*o->v));
		dst = ok ? o->v[o->nv] : NULL;
		at = ok ? &o->v_at[o->nv] : NULL;
		num = &o->v_num, cap = o->cap_v, idx = o->nv;
	} else if (k == LFS_OBJ_VT) {
		ok = grow_pair((void **)&o->vt, (void **)&o->vt_at, &o->cap_t, o->nt + 1,
			       sizeof(*o->vt));
		dst = ok ? o->vt[o->nt] : NULL;
		at = ok ? &o->vt_at[o->nt] : NULL;
		num = &o->vt_num, cap = o->cap_t, idx = o->nt;
	} else {
		ok = grow_pair((void **)&o->vn, (void **)&o->vn_at, &o->cap_n, o->nn + 1,
			       sizeof(*o->vn));
		dst = ok ? o->vn[o->nn] : NULL;
		at = ok ? &o->vn_at[o->nn] : NULL;
		num = &o->vn_num, cap = o->cap_n, idx = o->nn;
	}
	lfs_obj_num *nd = NULL;
	if (ok && (flags & LFS_OBJ_NUMS)) {
		/* in step with the value array: cap elements of want numbers
		 * (its capacity only grows when the value array's did) */
		if (idx == 0 || cap != rd->num_cap[k]) {
			void *q = realloc(*num, cap * want * sizeof(lfs_obj_num));
			if (q) {
				*num = q;
				rd->num_cap[k] = cap;
			} else {
				ok = false;
			}
		}
		nd = ok ? *num + idx * want : NULL;
	}
	if (!ok)
		return lfs_nomem(rd->lx.err, "OBJ");
	for (uint32_t i = 0; i < want; i++) {
		lfs_err e = read_f32(rd, i + 1, &dst[i]);
		if (e)
			return e;
		if (nd) {
			const lfs_tok *t = &ln->tok[i + 1];
			nd[i].value = tok_double(t, dst[i]);
			nd[i].decimals = lfs_obj_num_decimals(t->s, t->len);
			nd[i].kind_decimals = 0;
			if (nd[i].decimals >= 0 && !rd->foreign) {
				char b[LFS_FLOAT_BUFSZ];
				size_t bl = lfs_fmt_float(b, dst[i]);
				rd->foreign = bl != t->len || memcmp(b, t->s, bl) != 0;
			}
		}
	}
	if (w0 && got > want) {
		float w;
		lfs_err e = read_f32(rd, want + 1, &w);
		if (e)
			return e;
		if (w != 0.0f)
			return lfs_lex_fail(&rd->lx, ln, want + 1,
					    "texture w coordinates are not stored: must be 0");
	}
	at->line = ln->line;
	at->col = ln->tok[0].col;
	if (k == LFS_OBJ_V)
		o->nv++;
	else if (k == LFS_OBJ_VT)
		o->nt++;
	else
		o->nn++;
	return LFS_OK;
}

/* Corner token @p i: "a", "a/b", "a//c" or "a/b/c" (1-based, negative =
 * relative to the list so far) into @p c (0-based, -1 when absent). */
static lfs_err read_corner(reader *rd, uint32_t i, lfs_obj_corner *c)
{
	const lfs_line *ln = &rd->ln;
	const lfs_tok *t = &ln->tok[i];
	const lfs_obj *o = rd->o;
	unsigned flags = rd->r->flags;
	int64_t part[3] = { 0, 0, 0 };
	bool have[3] = { false, false, false };
	uint32_t nparts = (flags & LFS_OBJ_NO_VN) ? 2 : 3;
	if ((flags & LFS_OBJ_NEED_VT) && !memchr(t->s, '/', t->len))
		return lfs_lex_fail(&rd->lx, ln, i,
				    "face corner needs position/texcoord indices (v/vt)");
	size_t p = 0;
	for (uint32_t k = 0;; k++) {
		size_t q = p;
		while (q < t->len && t->s[q] != '/')
			q++;
		if (q > p) {
			char buf[24];
			if (q - p >= sizeof(buf))
				return lfs_lex_fail(&rd->lx, ln, i, "face index too long");
			memcpy(buf, t->s + p, q - p);
			buf[q - p] = 0;
			char *end;
			long long x = strtoll(buf, &end, 10);
			if (*end || x == 0)
				return lfs_lex_fail(&rd->lx, ln, i, "bad face corner '%.*s'",
						    (int)t->len, t->s);
			part[k] = x;
			have[k] = true;
		}
		if (q == t->len || k + 1 == nparts) {
			if (q < t->len && !(flags & LFS_OBJ_NO_VN))
				have[0] = false; /* a fourth part */
			break;
		}
		p = q + 1;
	}
	if (!have[0] || ((flags & LFS_OBJ_NEED_VT) && !have[1]))
		return lfs_lex_fail(&rd->lx, ln, i, "bad face corner '%.*s'", (int)t->len, t->s);
	static const char *const what[3] = { "vertex", "texture", "normal" };
	size_t cnt[3] = { o->nv, o->nt, o->nn };
	int64_t *dst[3] = { &c->v, &c->t, &c->n };
	for (int j = 0; j < 3; j++) {
		*dst[j] = -1;
		if (!have[j])
			continue;
		int64_t x = part[j] > 0 ? part[j] - 1 : (int64_t)cnt[j] + part[j];
		if (x < 0 || ((flags & LFS_OBJ_DEFINED_ABOVE) && (uint64_t)x >= cnt[j])) {
			if (flags & LFS_OBJ_MDL_MSGS)
				return lfs_lex_fail(&rd->lx, ln, i,
						    "index %lld out of range (1..%zu)",
						    (long long)x + 1, cnt[j]);
			return lfs_lex_fail(&rd->lx, ln, i, "%s index %lld is not defined above",
					    what[j], (long long)part[j]);
		}
		if (rd->r->max_index && (uint64_t)x >= rd->r->max_index)
			return lfs_lex_fail(&rd->lx, ln, i, "%s index %lld is out of range 1..%llu",
					    what[j], (long long)part[j],
					    (unsigned long long)rd->r->max_index);
		*dst[j] = x;
	}
	c->col = t->col;
	return LFS_OK;
}

static lfs_err read_face(reader *rd)
{
	lfs_obj *o = rd->o;
	const lfs_line *ln = &rd->ln;
	uint32_t n = ln->ntok - 1;
	if (rd->r->triangles && n != 3)
		return lfs_lex_fail(&rd->lx, ln, ln->ntok < 4 ? ln->ntok : 4,
				    "%s faces are triangles: expected 3 corners, found %u",
				    rd->r->triangles, n);
	if (n < 3)
		return lfs_lex_fail(&rd->lx, ln, ln->ntok,
				    "a face needs at least 3 corners, found %u", n);
	if (rd->r->max_corners && n > rd->r->max_corners)
		return lfs_lex_fail(&rd->lx, ln, rd->r->max_corners + 1,
				    "a face has at most %u corners, found %u", rd->r->max_corners,
				    n);
	if (!lfs_grow((void **)&o->f, &o->cap_f, o->nf + 1, sizeof(*o->f)) ||
	    !lfs_grow((void **)&o->c, &o->cap_c, o->nc + n, sizeof(*o->c)))
		return lfs_nomem(rd->lx.err, "OBJ");
	for (uint32_t k = 0; k < n; k++) {
		lfs_err e = read_corner(rd, k + 1, &o->c[o->nc + k]);
		if (e)
			return e;
	}
	lfs_obj_face *f = &o->f[o->nf++];
	f->first = o->nc;
	f->n = n;
	f->line = ln->line;
	f->col = ln->tok[0].col;
	o->nc += n;
	return LFS_OK;
}

static lfs_err read_stmt(reader *rd, lfs_obj_kind k)
{
	lfs_obj *o = rd->o;
	const lfs_line *ln = &rd->ln;
	if (!lfs_grow((void **)&o->s, &o->cap_s, o->ns + 1, sizeof(*o->s)))
		return lfs_nomem(rd->lx.err, "OBJ");
	lfs_obj_stmt *s = &o->s[o->ns++];
	memset(s, 0, sizeof(*s));
	s->kind = k;
	s->line = ln->line;
	s->col = ln->tok[0].col;
	s->end_col = ln->end_col;
	s->narg = ln->ntok - 1;
	if (s->narg) {
		s->arg = ln->tok[1].s;
		s->arg_len = ln->tok[1].len;
		s->arg_col = ln->tok[1].col;
	}
	s->nv = o->nv, s->nt = o->nt, s->nn = o->nn, s->nf = o->nf;
	return LFS_OK;
}

lfs_err lfs_obj_read(const char *file, const char *text, size_t n, const lfs_obj_rules *rules,
		     lfs_obj *out, lfs_error *err)
{
	static const lfs_obj_rules lenient = { 0 };
	memset(out, 0, sizeof(*out));
	reader *rd = malloc(sizeof(*rd));
	if (!rd)
		return lfs_nomem(err, "OBJ");
	memset(rd, 0, sizeof(*rd));
	lfs_lex_init(&rd->lx, file, text ? text : "", text ? n : 0, err);
	rd->r = rules ? rules : &lenient;
	rd->o = out;
	lfs_err e = LFS_OK;
	int lr;
	while (!e && (lr = lfs_lex_next(&rd->lx, &rd->ln)) == 1) {
		const lfs_tok *kw = &rd->ln.tok[0];
		lfs_obj_kind k = kind_of(kw);
		if (k == LFS_OBJ_OTHER) {
			if (rd->r->flags & LFS_OBJ_STRICT)
				e = lfs_lex_fail(&rd->lx, &rd->ln, 0,
						 "unsupported OBJ statement '%.*s'",
						 (int)(kw->len > 40 ? 40 : kw->len), kw->s);
			continue;
		}
		if (k == LFS_OBJ_VN && (rd->r->flags & LFS_OBJ_NO_VN))
			continue;
		if (rd->r->check) {
			lfs_obj_where at = { rd->lx.file, rd->ln.line, kw->col };
			if ((e = rd->r->check(rd->r->ctx, out, k, &at, err)))
				break;
		}
		if (k == LFS_OBJ_V || k == LFS_OBJ_VT || k == LFS_OBJ_VN)
			e = read_vec(rd, k);
		else if (k == LFS_OBJ_F)
			e = read_face(rd);
		else
			e = read_stmt(rd, k);
	}
	if (!e && lr < 0)
		e = LFS_ERR_PARSE;
	/* the writer's precision of each kind (lfs_obj_num.kind_decimals):
	 * exact when every number is the shortest text of its float32 */
	lfs_obj_num *const nums[3] = { out->v_num, out->vt_num, out->vn_num };
	const size_t cnt[3] = { out->nv * 3, out->nt * 2, out->nn * 3 };
	/* A fixed-decimals writer (Blender: 6 for v/vt, 4 for vn) can happen to
	 * print only shortest texts in a small file; the views' own printing
	 * gives numbers of varying decimals. So the text reads as exact only
	 * when, besides, some kind has numbers with different decimal counts. */
	if (!rd->foreign) {
		bool varies = false;
		for (int k = 0; k < 3 && !varies; k++) {
			int16_t d0 = -2;
			for (size_t i = 0; nums[k] && i < cnt[k] && !varies; i++) {
				if (nums[k][i].decimals < 0)
					continue;
				if (d0 == -2)
					d0 = nums[k][i].decimals;
				else if (nums[k][i].decimals != d0)
					varies = true;
			}
		}
		rd->foreign = !varies;
	}
	for (int k = 0; k < 3 && !e; k++) {
		int16_t most = rd->foreign ? 0 : LFS_OBJ_NUM_EXACT;
		for (size_t i = 0; rd->foreign && nums[k] && i < cnt[k]; i++)
			if (nums[k][i].decimals > most)
				most = nums[k][i].decimals;
		for (size_t i = 0; nums[k] && i < cnt[k]; i++)
			nums[k][i].kind_decimals = most;
	}
	out->lines = rd->lx.line;
	free(rd);
	return e;
}

/* ---- writers ---------------------------------------------------------------- */

void lfs_obj_write_v(lfs_sb *sb, const float p[3])
{
	lfs_sb_puts(sb, "v ");
	lfs_sb_floats_bits(sb, p, 3, ' ');
	lfs_sb_putc(sb, '\n');
}

void lfs_obj_write_vt(lfs_sb *sb, float u, float v)
{
	lfs_sb_puts(sb, "vt ");
	lfs_sb_float_bits(sb, u);
	lfs_sb_putc(sb, ' ');
	lfs_sb_float_bits(sb, v);
	lfs_sb_putc(sb, '\n');
}

void lfs_obj_write_vn(lfs_sb *sb, const float n[3])
{
	lfs_sb_puts(sb, "vn ");
	lfs_sb_floats_bits(sb, n, 3, ' ');
	lfs_sb_putc(sb, '\n');
}

void lfs_obj_write_plain(lfs_sb *sb, lfs_obj_kind kind, const float *x)
{
	lfs_sb_puts(sb, kind == LFS_OBJ_V ? "v " : kind == LFS_OBJ_VT ? "vt " : "vn ");
	lfs_sb_floats(sb, x, kind == LFS_OBJ_VT ? 2 : 3);
	lfs_sb_putc(sb, '\n');
}

void lfs_obj_write_f(lfs_sb *sb, unsigned n, const size_t *v, const size_t *vt, const size_t *vn)
{
	lfs_sb_putc(sb, 'f');
	for (unsigned k = 0; k < n; k++) {
		lfs_sb_printf(sb, " %zu", v[k] + 1);
		if (vt || vn)
			lfs_sb_putc(sb, '/');
		if (vt)
			lfs_sb_printf(sb, "%zu", vt[k] + 1);
		if (vn)
			lfs_sb_printf(sb, "/%zu", vn[k] + 1);
	}
	lfs_sb_putc(sb, '\n');
}

void lfs_obj_write_stmt(lfs_sb *sb, const char *keyword, const char *name)
{
	lfs_sb_puts(sb, keyword);
	lfs_sb_putc(sb, ' ');
	lfs_sb_puts(sb, name);
	lfs_sb_putc(sb, '\n');
}
