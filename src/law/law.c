/**
 * @file law.c
 * The round-trip law (law.h, docs/editing.md "The round-trip law"): the
 * saved text of a view against the text the same view of the new bytes
 * reads back as, after the documented normalisations. Generic: every
 * format-specific fact comes from the format row (lfs_format.law) or the
 * view kind.
 *
 * Texts are read here by a small tokenizer of their own (not the formats'
 * parsers, whose mistakes the law is there to catch): lines of
 * whitespace-separated tokens (CSV: comma-separated fields), comment and
 * blank lines dropped. OBJ texts go through the shared OBJ reader (obj.h) to
 * resolve face corners to values.
 */
#include "law.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/mem.h"
#include "law_priv.h"
#include "registry/viewset.h"
#include "registry/vlist.h"

/* ---- tokenizer ------------------------------------------------------------ */


static void ltext_free(ltext *x)
{
	free(x->t);
	free(x->l);
	memset(x, 0, sizeof(*x));
}

static void add_tok(ltext *x, const char *s, uint32_t len, uint32_t col)
{
	if (x->nt == x->ct) {
		size_t nc = x->ct ? x->ct * 2 : 256;
		ltok *p = realloc(x->t, nc * sizeof(*p));
		if (!p) {
			x->failed = 1;
			return;
		}
		x->t = p;
		x->ct = nc;
	}
	x->t[x->nt++] = (ltok){ s, len, col };
}

static void add_line(ltext *x, uint32_t line, size_t tok0)
{
	if (x->nl == x->cl) {
		size_t nc = x->cl ? x->cl * 2 : 64;
		lline *p = realloc(x->l, nc * sizeof(*p));
		if (!p) {
			x->failed = 1;
			return;
		}
		x->l = p;
		x->cl = nc;
	}
	x->l[x->nl++] = (lline){ line, (uint32_t)tok0, (uint32_t)(x->nt - tok0) };
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool kept_comment(const lfs_law_dialect *d, const char *p, const char *e)
{
	if (!d || !d->kept_comments)
		return false;
	for (const char *const *k = d->kept_comments; *k; k++) {
		size_t kl = strlen(*k);
		if ((size_t)(e - p) >= kl && strncasecmp(p, *k, kl) == 0)
			return true;
	}
	return false;
}

/*
 * Split @p text into lines of tokens. sep ' ': blank-separated tokens, a
 * token opening with '"' runs to the closing unescaped '"' (mdltext.h);
 * lines whose first non-blank byte is @p comment are dropped (unless a kept
 * comment of @p d). sep ',': comma-separated fields, blanks around them
 * trimmed, a field opening with '"' runs to its closing quote ("" escapes).
 * Blank lines are dropped. CR before LF is a blank.
 */
static int tokenize(ltext *x, const char *text, size_t n, char sep, char comment,
		    const lfs_law_dialect *d)
{
	memset(x, 0, sizeof(*x));
	const char *p = text, *end = text + n;
	uint32_t line = 0;
	x->end_line = 1;
	x->end_col = 1;
	while (p < end) {
		line++;
		const char *e = memchr(p, '\n', (size_t)(end - p));
		if (!e)
			e = end;
		const char *lb = p;
		x->end_line = line;
		x->end_col = (uint32_t)(e - lb) + 1;
		const char *q = p;
		while (q < e && is_blank(*q))
			q++;
		size_t tok0 = x->nt;
		if (q == e || (comment && *q == comment && !kept_comment(d, q, e))) {
			p = e < end ? e + 1 : e;
			continue;
		}
		if (sep == ',') {
			const char *f = p;
			for (;;) {
				while (f < e && is_blank(*f))
					f++;
				const char *fs = f;
				if (f < e && *f == '"') {
					f++;
					while (f < e && !(*f == '"' && (f + 1 == e || f[1] != '"')))
						f += (*f == '"') ? 2 : 1;
					if (f < e)
						f++;
				}
				while (f < e && *f != ',')
					f++;
				const char *fe = f;
				while (fe > fs && is_blank(fe[-1]))
					fe--;
				add_tok(x, fs, (uint32_t)(fe - fs), (uint32_t)(fs - lb) + 1);
				if (f >= e)
					break;
				f++; /* the comma */
			}
		} else {
			while (q < e) {
				const char *ts = q;
				if (*q == '"') {
					q++;
					while (q < e && *q != '"')
						q += (*q == '\\' && q + 1 < e) ? 2 : 1;
					if (q < e)
						q++;
				}
				while (q < e && !is_blank(*q))
					q++;
				add_tok(x, ts, (uint32_t)(q - ts), (uint32_t)(ts - lb) + 1);
				while (q < e && is_blank(*q))
					q++;
			}
		}
		add_line(x, line, tok0);
		p = e < end ? e + 1 : e;
	}
	return x->failed ? -1 : 0;
}

/* ---- values --------------------------------------------------------------- */


/* A bare token: a quoted one without its quotes (escapes kept as written). */
static ltok bare(ltok t)
{
	if (t.len >= 2 && t.s[0] == '"' && t.s[t.len - 1] == '"') {
		t.s++;
		t.len -= 2;
	}
	return t;
}

/*
 * Token @p t as a number: NUM_FINITE with its value and the tolerance its
 * printed precision gives (half a unit of its last printed digit when it
 * has a '.', else 0: integers and exponent forms are exact), NUM_NAN (any
 * NaN spelling, "nan:XXXXXXXX" included), NUM_INF (sign in *v), NUM_NO.
 */
int lfs_law_tok_num(ltok t, double *v, double *tol)
{
	char buf[64];
	if (t.len == 0 || t.len >= sizeof(buf))
		return NUM_NO;
	memcpy(buf, t.s, t.len);
	buf[t.len] = '\0';
	if (strncasecmp(buf, "nan:", 4) == 0)
		return NUM_NAN;
	char c0 = buf[0] == '-' || buf[0] == '+' ? buf[1] : buf[0];
	if (!((c0 >= '0' && c0 <= '9') || c0 == '.' || c0 == 'n' || c0 == 'N' || c0 == 'i' ||
	      c0 == 'I'))
		return NUM_NO;
	char *endp = NULL;
	double x = strtod(buf, &endp);
	if (endp != buf + t.len)
		return NUM_NO;
	if (isnan(x))
		return NUM_NAN;
	*v = x;
	if (isinf(x))
		return NUM_INF;
	*tol = 0.0;
	const char *dot = strchr(buf, '.');
	if (dot) {
		int frac = 0;
		const char *q = dot + 1;
		while (*q >= '0' && *q <= '9') {
			frac++;
			q++;
		}
		long ex = 0;
		if (*q == 'e' || *q == 'E')
			ex = strtol(q + 1, NULL, 10);
		if (ex > 400)
			ex = 400;
		if (ex < -400)
			ex = -400;
		*tol = 0.5 * pow(10.0, (double)(ex - frac));
	}
	return NUM_FINITE;
}

/* One unit in the last place of a float32 near |x| (the storage rounding). */
static double ulp32(double x)
{
	x = fabs(x);
	if (x == 0.0 || !isfinite(x))
		return ldexp(1.0, -149);
	int e = 0;
	frexp(x, &e); /* x = m * 2^e, m in [0.5, 1) */
	int k = e - 24;
	if (k < -149)
		k = -149;
	return ldexp(1.0, k);
}

/* Saved value @p sv (printed tolerance @p tol) against read-back value @p rv. */
bool lfs_law_val_eq(double sv, double tol, double rv)
{
	if (sv == rv)
		return true;
	double u = ulp32(fabs(sv) > fabs(rv) ? sv : rv);
	return fabs(rv - sv) <= tol * (1.0 + 1e-9) + u;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Byte @p *i of token @p t as the text means it: inside a "quoted" token
 * the escapes \\, \" and \xHH of mdltext.h are decoded. */
static int tok_byte(ltok t, bool quoted, uint32_t *i)
{
	unsigned char ch = (unsigned char)t.s[(*i)++];
	if (!quoted || ch != '\\' || *i >= t.len)
		return ch;
	char e = t.s[(*i)++];
	if (e == 'x' && *i + 2 <= t.len &&
	    hexval(t.s[*i]) >= 0 && hexval(t.s[*i + 1]) >= 0) {
		int v = hexval(t.s[*i]) * 16 + hexval(t.s[*i + 1]);
		*i += 2;
		return v;
	}
	return (unsigned char)e;
}

/* Words compare as the names they mean: quotes and escapes decoded, ASCII
 * case folded. */
static bool word_eq(ltok a, ltok b)
{
	bool qa = a.len >= 2 && a.s[0] == '"' && a.s[a.len - 1] == '"';
	bool qb = b.len >= 2 && b.s[0] == '"' && b.s[b.len - 1] == '"';
	a = bare(a);
	b = bare(b);
	uint32_t i = 0, j = 0;
	while (i < a.len && j < b.len) {
		int x = tok_byte(a, qa, &i), y = tok_byte(b, qb, &j);
		if (x >= 'A' && x <= 'Z')
			x += 32;
		if (y >= 'A' && y <= 'Z')
			y += 32;
		if (x != y)
			return false;
	}
	return i == a.len && j == b.len;
}

static bool word_is(ltok a, const char *w)
{
	size_t n = strlen(w);
	return a.len == n && strncasecmp(a.s, w, n) == 0;
}

/* A saved token against a read-back token: as values when both are numbers
 * (a quoted number, as CSV writers that quote every field give it, is that
 * number), else as words (ASCII case folded). */
static bool tok_eq(ltok s, ltok r)
{
	double sv = 0, st = 0, rv = 0, rt = 0;
	int ks = lfs_law_tok_num(bare(s), &sv, &st), kr = lfs_law_tok_num(bare(r), &rv, &rt);
	if (ks == NUM_FINITE && kr == NUM_FINITE)
		return lfs_law_val_eq(sv, st, rv);
	if (ks == NUM_NAN && kr == NUM_NAN) {
		bool sb = s.len > 4 && strncasecmp(s.s, "nan:", 4) == 0;
		bool rb = r.len > 4 && strncasecmp(r.s, "nan:", 4) == 0;
		return !(sb && rb) || word_eq(s, r); /* bits compared when both give them */
	}
	if (ks == NUM_INF && kr == NUM_INF)
		return (sv > 0) == (rv > 0);
	if (ks != NUM_NO || kr != NUM_NO)
		return false;
	return word_eq(s, r);
}

/* ---- lines ---------------------------------------------------------------- */


/* Token @p k of saved line @p a is one the dialect lists as free. */
static bool tok_free(const lctx *c, const lline *a, uint32_t k)
{
	if (c->free_cols && a != &c->S.l[0] && k < 64 && (c->free_cols >> k & 1))
		return true;
	if (!c->d || !c->d->free_tokens || k == 0)
		return false;
	for (const char *const *f = c->d->free_tokens; *f; f++) {
		const char *sp = strchr(*f, ' ');
		if (!sp || (uint32_t)atoi(sp + 1) != k)
			continue;
		ltok w = c->S.t[a->tok0];
		if (w.len == (size_t)(sp - *f) && strncasecmp(w.s, *f, w.len) == 0)
			return true;
	}
	return false;
}

/* Axis-angle (4 tokens at @p t) as a unit quaternion; false if not numbers. */
static bool aa_quat(const ltok *t, double q[4])
{
	double v[4], tol;
	for (int k = 0; k < 4; k++)
		if (lfs_law_tok_num(t[k], &v[k], &tol) != NUM_FINITE)
			return false;
	double len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
	double s = sin(v[3] / 2), c = cos(v[3] / 2);
	if (len < 1e-12 || fabs(s) < 1e-12) {
		q[0] = q[1] = q[2] = 0;
		q[3] = 1;
		return true;
	}
	for (int k = 0; k < 3; k++)
		q[k] = v[k] / len * s;
	q[3] = c;
	return true;
}

/* Line @p a (keyword @p kw, or a data row of a group headed by @p kw)
 * against @p b when kw is an axis-angle keyword: earlier tokens as usual,
 * the last four as rotations. -1: not such a line. */
static int aa_eq(lctx *c, const lline *a, const lline *b, ltok kw)
{
	if (!c->d || !c->d->axis_angle || a->ntok < 4 || a->ntok != b->ntok)
		return -1;
	bool hit = false;
	for (const char *const *k = c->d->axis_angle; *k && !hit; k++)
		hit = word_is(kw, *k);
	if (!hit)
		return -1;
	uint32_t n0 = a->ntok - 4;
	double p[4], q[4];
	if (!aa_quat(&c->S.t[a->tok0 + n0], p) || !aa_quat(&c->R.t[b->tok0 + n0], q))
		return -1;
	for (uint32_t k = 0; k < n0; k++)
		if (!tok_eq(c->S.t[a->tok0 + k], c->R.t[b->tok0 + k]))
			return 0;
	double dp = 0, dm = 0;
	for (int k = 0; k < 4; k++) {
		dp = fmax(dp, fabs(p[k] - q[k]));
		dm = fmax(dm, fabs(p[k] + q[k]));
	}
	return fmin(dp, dm) <= 2e-5 ? 1 : 0;
}

static bool line_eq_kw(lctx *c, uint32_t si, uint32_t ri, int64_t head)
{
	const lline *a = &c->S.l[si], *b = &c->R.l[ri];
	ltok kw = c->S.t[c->S.l[head >= 0 ? (size_t)head : si].tok0];
	int r = aa_eq(c, a, b, kw);
	if (r >= 0)
		return r == 1;
	if (a->ntok != b->ntok)
		return false;
	for (uint32_t k = 0; k < a->ntok; k++)
		if (!tok_eq(c->S.t[a->tok0 + k], c->R.t[b->tok0 + k]) && !tok_free(c, a, k))
			return false;
	return true;
}

static bool line_eq(lctx *c, uint32_t si, uint32_t ri)
{
	return line_eq_kw(c, si, ri, -1);
}

/* A line's text for a message: tokens joined by one space, at most ~80 bytes. */
static const char *line_str(const ltext *x, uint32_t li, char *buf, size_t bsz)
{
	size_t o = 0;
	const lline *l = &x->l[li];
	for (uint32_t k = 0; k < l->ntok && o + 1 < bsz; k++) {
		const ltok *t = &x->t[l->tok0 + k];
		if (k && o + 1 < bsz)
			buf[o++] = ' ';
		for (uint32_t j = 0; j < t->len && o + 1 < bsz; j++) {
			unsigned char ch = (unsigned char)t->s[j];
			buf[o++] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
		}
	}
	if (o + 1 >= bsz && bsz > 4)
		memcpy(buf + bsz - 4, "...", 3), o = bsz - 1;
	buf[o] = '\0';
	return buf;
}

/* Every value of line @p l after the keyword is a number equal to 0. */
static bool all_zero(const ltext *x, const lline *l)
{
	for (uint32_t k = 1; k < l->ntok; k++) {
		double v = 1, t = 0;
		if (lfs_law_tok_num(x->t[l->tok0 + k], &v, &t) != NUM_FINITE || v != 0.0)
			return false;
	}
	return true;
}

static bool is_default_line(lctx *c, uint32_t ri, uint32_t nrows)
{
	if (!c->d || !c->d->defaults)
		return false;
	const lline *l = &c->R.l[ri];
	if (!l->ntok)
		return false;
	for (const lfs_law_default *df = c->d->defaults; df->keyword; df++) {
		if (nrows && df->values) /* rows: only an "any values" entry */
			continue;
		if (strcmp(df->keyword, "*") == 0) {
			if (df->values && strcmp(df->values, "0") == 0 && all_zero(&c->R, l))
				return true;
			continue;
		}
		if (!word_is(c->R.t[l->tok0], df->keyword))
			continue;
		if (!df->values)
			return true;
		ltext v;
		if (tokenize(&v, df->values, strlen(df->values), ' ', 0, NULL)) {
			ltext_free(&v);
			return false;
		}
		bool ok = v.nl == 1 && v.l[0].ntok == l->ntok - 1;
		for (uint32_t k = 0; ok && k + 1 < l->ntok; k++)
			ok = word_is(v.t[k], "*") || tok_eq(v.t[k], c->R.t[l->tok0 + 1 + k]);
		ltext_free(&v);
		if (ok)
			return true;
	}
	return false;
}

__attribute__((format(printf, 4, 0)))
static lfs_err fail_at_v(lctx *c, uint32_t line, uint32_t col, const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	return lfs_fail_at(c->err, c->path, line, col, "%s", msg);
}

__attribute__((format(printf, 3, 4))) static lfs_err fail_line(lctx *c, uint32_t si,
								const char *fmt, ...)
{
	const lline *l = &c->S.l[si];
	uint32_t col = l->ntok ? c->S.t[l->tok0].col : 1;
	va_list ap;
	va_start(ap, fmt);
	lfs_err e = fail_at_v(c, l->line, col, fmt, ap);
	va_end(ap);
	return e;
}

__attribute__((format(printf, 2, 3))) static lfs_err fail_end(lctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	lfs_err e = fail_at_v(c, c->S.end_line, c->S.end_col, fmt, ap);
	va_end(ap);
	return e;
}

#define MSG_GIVES "this statement does not survive the save: reading the view back gives '%s'"
#define MSG_NONE "this statement is not kept: reading the view back has no such statement"
#define MSG_EXTRA                                                                          \
	"the saved text does not have '%s', which reading the view back gives here (a "  \
	"deleted or missing statement that was not applied)"

/* Statements in order (dialects whose applier reads them in order). */
static lfs_err compare_ordered(lctx *c)
{
	char buf[96];
	size_t i = 0, j = 0;
	while (i < c->S.nl) {
		if (j < c->R.nl && line_eq(c, (uint32_t)i, (uint32_t)j)) {
			i++, j++;
			continue;
		}
		if (j < c->R.nl && is_default_line(c, (uint32_t)j, 0)) {
			j++;
			continue;
		}
		if (j < c->R.nl)
			return fail_line(c, (uint32_t)i, MSG_GIVES,
					 line_str(&c->R, (uint32_t)j, buf, sizeof(buf)));
		return fail_line(c, (uint32_t)i,
				 "this statement is not kept: reading the view back ends before it");
	}
	for (; j < c->R.nl; j++)
		if (!is_default_line(c, (uint32_t)j, 0))
			return fail_end(c, MSG_EXTRA, line_str(&c->R, (uint32_t)j, buf, sizeof(buf)));
	return LFS_OK;
}

/* ---- order-free blocks (any_order dialects) -------------------------------- */

typedef struct litem {
	uint32_t head;	/* line index */
	uint32_t nrows; /* group: data rows after the head */
	int64_t close;	/* block: line index of its closing word, -1 none */
	uint32_t *kids;
	uint32_t nkids;
	uint32_t last; /* last line index of the item */
	bool block;
} litem;

typedef struct ltree {
	litem *it;
	size_t n, cap;
	uint32_t *top;
	uint32_t ntop;
	int failed;
} ltree;

#define MAX_DEPTH 8

static bool line_is_row(const ltext *x, size_t li)
{
	const lline *l = &x->l[li];
	double v, t;
	return l->ntok && lfs_law_tok_num(x->t[l->tok0], &v, &t) != NUM_NO;
}

static int open_index(const lfs_law_dialect *d, ltok w)
{
	if (!d->block_open || !d->block_close)
		return -1;
	for (int k = 0; d->block_open[k] && d->block_close[k]; k++)
		if (word_is(w, d->block_open[k]))
			return k;
	return -1;
}

static uint32_t new_item(ltree *t)
{
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 64;
		litem *p = realloc(t->it, nc * sizeof(*p));
		if (!p) {
			t->failed = 1;
			return UINT32_MAX;
		}
		t->it = p;
		t->cap = nc;
	}
	memset(&t->it[t->n], 0, sizeof(litem));
	return (uint32_t)t->n++;
}

static void push_kid(ltree *t, uint32_t **kids, uint32_t *n, uint32_t *cap, uint32_t id)
{
	if (*n == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 8;
		uint32_t *p = realloc(*kids, nc * sizeof(*p));
		if (!p) {
			t->failed = 1;
			return;
		}
		*kids = p;
		*cap = nc;
	}
	(*kids)[(*n)++] = id;
}

static void parse_items(const lfs_law_dialect *d, const ltext *x, ltree *t, size_t *pos,
			const char *close, int depth, uint32_t **kids, uint32_t *nkids)
{
	uint32_t cap = 0;
	*kids = NULL;
	*nkids = 0;
	while (*pos < x->nl && !t->failed) {
		ltok w = x->t[x->l[*pos].tok0];
		if (close && word_is(w, close))
			return;
		int k = depth < MAX_DEPTH ? open_index(d, w) : -1;
		uint32_t id = new_item(t);
		if (id == UINT32_MAX)
			return;
		if (k >= 0) {
			uint32_t head = (uint32_t)(*pos)++;
			uint32_t *kk = NULL, nk = 0;
			parse_items(d, x, t, pos, d->block_close[k], depth + 1, &kk, &nk);
			litem *it = &t->it[id];
			it->block = true;
			it->head = head;
			it->kids = kk;
			it->nkids = nk;
			it->close = -1;
			if (*pos < x->nl && word_is(x->t[x->l[*pos].tok0], d->block_close[k]))
				it->close = (int64_t)(*pos)++;
			it->last = (uint32_t)(*pos - 1);
		} else {
			litem *it = &t->it[id];
			it->head = (uint32_t)(*pos)++;
			while (*pos < x->nl && line_is_row(x, *pos)) {
				(*pos)++;
				it->nrows++;
			}
			it->last = (uint32_t)(*pos - 1);
		}
		push_kid(t, kids, nkids, &cap, id);
	}
}

static void ltree_free(ltree *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->it[i].kids);
	free(t->it);
	free(t->top);
	memset(t, 0, sizeof(*t));
}

typedef struct tctx {
	lctx *c;
	ltree S, R;
} tctx;

static bool match_list(tctx *x, const uint32_t *sk, uint32_t ns, const uint32_t *rk, uint32_t nr,
		       bool report, int64_t end_line, lfs_err *e);

static bool item_eq(tctx *x, uint32_t si, uint32_t ri)
{
	const litem *s = &x->S.it[si], *r = &x->R.it[ri];
	if (s->block != r->block || !line_eq(x->c, s->head, r->head))
		return false;
	if (!s->block) {
		if (s->nrows != r->nrows)
			return false;
		for (uint32_t k = 1; k <= s->nrows; k++)
			if (!line_eq_kw(x->c, s->head + k, r->head + k, s->head))
				return false;
		return true;
	}
	if ((s->close < 0) != (r->close < 0))
		return false;
	if (s->close >= 0 && !line_eq(x->c, (uint32_t)s->close, (uint32_t)r->close))
		return false;
	lfs_err e = LFS_OK;
	return match_list(x, s->kids, s->nkids, r->kids, r->nkids, false, -1, &e);
}

/* Report why saved item @p si does not survive, against candidate @p ri. */
static lfs_err report_item(tctx *x, uint32_t si, uint32_t ri)
{
	lctx *c = x->c;
	char buf[96];
	const litem *s = &x->S.it[si], *r = &x->R.it[ri];
	if (!line_eq(c, s->head, r->head) || s->block != r->block)
		return fail_line(c, s->head, MSG_GIVES, line_str(&c->R, r->head, buf, sizeof(buf)));
	if (!s->block) {
		for (uint32_t k = 1; k <= s->nrows && k <= r->nrows; k++)
			if (!line_eq_kw(c, s->head + k, r->head + k, s->head))
				return fail_line(c, s->head + k,
						 "this row does not survive the save: reading the "
						 "view back gives '%s'",
						 line_str(&c->R, r->head + k, buf, sizeof(buf)));
		if (s->nrows > r->nrows) {
			snprintf(buf, sizeof(buf), "%u", r->nrows);
			return fail_line(c, s->head + r->nrows + 1,
					 "this row is not kept: reading the view back has %s "
					 "row(s) here",
					 buf);
		}
		return fail_line(c, s->last,
				 "reading the view back has a further row '%s' after this one",
				 line_str(&c->R, r->head + s->nrows + 1, buf, sizeof(buf)));
	}
	lfs_err e = LFS_OK;
	if (!match_list(x, s->kids, s->nkids, r->kids, r->nkids, true,
			s->close >= 0 ? s->close : (int64_t)s->last, &e))
		return e;
	if (s->close < 0)
		return fail_line(c, s->last,
				 "this block is not closed: reading the view back closes it with '%s'",
				 line_str(&c->R, (uint32_t)r->close, buf, sizeof(buf)));
	return fail_line(c, (uint32_t)s->close, MSG_GIVES,
			 line_str(&c->R, (uint32_t)r->close, buf, sizeof(buf)));
}

/*
 * Saved items @p sk against read-back items @p rk as multisets: each saved
 * item takes the first unused equal read-back item; read-back items left
 * over must be defaults. On a mismatch with @p report, *e gets the message
 * for the first saved item that found no partner (or for the first extra
 * read-back item, at saved line @p end_line, -1 = end of text).
 */
static bool match_list(tctx *x, const uint32_t *sk, uint32_t ns, const uint32_t *rk, uint32_t nr,
		       bool report, int64_t end_line, lfs_err *e)
{
	lctx *c = x->c;
	bool *used = calloc(nr ? nr : 1, 1);
	if (!used) {
		*e = lfs_nomem(c->err, "round-trip check");
		return false;
	}
	bool ok = true;
	for (uint32_t i = 0; i < ns && ok; i++) {
		const litem *s = &x->S.it[sk[i]];
		ltok sw = c->S.t[c->S.l[s->head].tok0];
		int64_t found = -1;
		for (uint32_t j = 0; j < nr && found < 0; j++) {
			if (used[j])
				continue;
			const litem *r = &x->R.it[rk[j]];
			if (r->block == s->block && word_eq(sw, c->R.t[c->R.l[r->head].tok0]) &&
			    item_eq(x, sk[i], rk[j]))
				found = j;
		}
		if (found >= 0) {
			used[found] = true;
			continue;
		}
		ok = false;
		if (!report)
			break;
		/* the best candidate for the message: same head, else same last
		 * head token (a node's name), else same keyword */
		int64_t best = -1, name = -1, kw = -1;
		const lline *sl = &c->S.l[s->head];
		for (uint32_t j = 0; j < nr; j++) {
			if (used[j])
				continue;
			const litem *r = &x->R.it[rk[j]];
			const lline *rl = &c->R.l[r->head];
			if (!word_eq(sw, c->R.t[rl->tok0]))
				continue;
			if (best < 0 && line_eq(c, s->head, r->head))
				best = j;
			if (name < 0 && sl->ntok > 1 && rl->ntok == sl->ntok &&
			    word_eq(c->S.t[sl->tok0 + sl->ntok - 1], c->R.t[rl->tok0 + rl->ntok - 1]))
				name = j;
			if (kw < 0)
				kw = j;
		}
		/* a block (a node) is shown against the same head or the same
		 * name only: another node of the same keyword says nothing */
		int64_t pick = best >= 0 ? best : name >= 0 ? name : s->block ? -1 : kw;
		if (pick >= 0)
			*e = report_item(x, sk[i], rk[pick]);
		else
			*e = fail_line(c, s->head, MSG_NONE);
	}
	for (uint32_t j = 0; j < nr && ok; j++) {
		if (used[j])
			continue;
		const litem *r = &x->R.it[rk[j]];
		if (!r->block && is_default_line(c, r->head, r->nrows))
			continue;
		ok = false;
		if (report) {
			char buf[96];
			line_str(&c->R, r->head, buf, sizeof(buf));
			*e = end_line >= 0 ? fail_line(c, (uint32_t)end_line, MSG_EXTRA, buf)
					   : fail_end(c, MSG_EXTRA, buf);
		}
	}
	free(used);
	return ok;
}

static lfs_err compare_any_order(lctx *c)
{
	tctx x = { .c = c };
	size_t ps = 0, pr = 0;
	parse_items(c->d, &c->S, &x.S, &ps, NULL, 0, &x.S.top, &x.S.ntop);
	parse_items(c->d, &c->R, &x.R, &pr, NULL, 0, &x.R.top, &x.R.ntop);
	lfs_err e = LFS_OK;
	if (x.S.failed || x.R.failed)
		e = lfs_nomem(c->err, "round-trip check");
	else if (!match_list(&x, x.S.top, x.S.ntop, x.R.top, x.R.ntop, true, -1, &e) && !e)
		e = fail_end(c, "the saved text does not survive the save");
	ltree_free(&x.S);
	ltree_free(&x.R);
	return e;
}

/* ---- entry points --------------------------------------------------------- */

lfs_err lfs_law_compare(const lfs_format *f, const char *path, lfs_view_kind kind,
			const char *saved, size_t sn, const char *reread, size_t rn,
			lfs_error *err)
{
	return lfs_law_compare_from(f, path, kind, saved, sn, reread, rn, NULL, 0, err);
}

lfs_err lfs_law_compare_from(const lfs_format *f, const char *path, lfs_view_kind kind,
			     const char *saved, size_t sn, const char *reread, size_t rn,
			     const char *orig, size_t on, lfs_error *err)
{
	lctx c = { .path = path, .err = err };
	char sep = ' ', comment = '#';
	const char *const *csv_free = NULL;
	if (kind == LFS_VIEW_TEXT) {
		c.d = f ? f->law : NULL;
		if (c.d && c.d->comment)
			comment = c.d->comment;
	} else if (kind == LFS_VIEW_TRACK_CSV || kind == LFS_VIEW_TABLE_CSV) {
		sep = ',';
		comment = 0;
		csv_free = f && f->law ? f->law->csv_free_columns : NULL;
	} else if (kind != LFS_VIEW_MODEL_OBJ && kind != LFS_VIEW_MESH_OBJ) {
		return LFS_OK; /* not a text the law reads (thumbnail, material library) */
	}
	if (tokenize(&c.S, saved, sn, sep, comment, c.d) ||
	    tokenize(&c.R, reread, rn, sep, comment, c.d)) {
		ltext_free(&c.S);
		ltext_free(&c.R);
		return lfs_nomem(err, "round-trip check");
	}
	/* derived CSV columns, by the saved header's names */
	if (csv_free && c.S.nl) {
		const lline *h = &c.S.l[0];
		for (uint32_t k = 0; k < h->ntok && k < 64; k++)
			for (const char *const *w = csv_free; *w; w++)
				if (word_is(c.S.t[h->tok0 + k], *w))
					c.free_cols |= (uint64_t)1 << k;
	}
	lfs_err e;
	if (kind == LFS_VIEW_MODEL_OBJ || kind == LFS_VIEW_MESH_OBJ)
		e = lfs_law_compare_obj(&c, kind == LFS_VIEW_MESH_OBJ, saved, sn, reread, rn, orig, on);
	else if (c.d && c.d->any_order)
		e = compare_any_order(&c);
	else
		e = compare_ordered(&c);
	ltext_free(&c.S);
	ltext_free(&c.R);
	return e;
}

lfs_err lfs_law_check_keep(const lfs_format *f, const lfs_view *v, const char *text, size_t tn,
			   const uint8_t *out, size_t outn, char **reread, size_t *rn,
			   lfs_error *err)
{
	return lfs_law_check_model(f, v, text, tn, out, outn, NULL, reread, rn, err);
}

lfs_err lfs_law_check_model(const lfs_format *f, const lfs_view *v, const char *text, size_t tn,
			    const uint8_t *out, size_t outn, const void *model, char **reread,
			    size_t *rn, lfs_error *err)
{
	if (reread) {
		*reread = NULL;
		*rn = 0;
	}
	if (v->kind == LFS_VIEW_THUMBNAIL || v->kind == LFS_VIEW_MATERIALS)
		return LFS_OK;
	/* only the saved view is re-read: the others are not written */
	lfs_view_opts o = { .only = v->path };
	lfs_viewset vs;
	lfs_err e = lfs_views_build_model(f, model, out, outn, &o, &vs, err);
	if (e)
		return e;
	const lfs_view *w = lfs_viewset_find(&vs, v->path);
	if (!w)
		e = lfs_fail_at(err, v->path, 1, 1,
				"this view does not survive the save: the saved model has no "
				"view %s",
				v->path);
	else
		e = lfs_law_compare_from(f, v->path, v->kind, text, tn, w->data, w->size, v->data,
					 v->size, err);
	if (!e && reread && (*reread = malloc(w->size ? w->size : 1)) != NULL) {
		memcpy(*reread, w->data, w->size);
		*rn = w->size;
	}
	lfs_viewset_free(&vs);
	return e;
}

lfs_err lfs_law_check(const lfs_format *f, const lfs_view *v, const char *text, size_t tn,
		      const uint8_t *out, size_t outn, lfs_error *err)
{
	return lfs_law_check_keep(f, v, text, tn, out, outn, NULL, NULL, err);
}
