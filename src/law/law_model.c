/**
 * @file law_model.c
 * The round-trip law over the whole model (law.h lfs_law_check_whole(),
 * docs/editing.md "The law over the whole model"): after a save of one view
 * passed the law, every other view of the new bytes is built and compared
 * with the same view of the old bytes. Lines are compared by key, not by
 * position: each line of a view gets the entity it shows (object or node,
 * list keyword, row index; for a statement, its block and keyword), so an
 * inserted row shifts nothing. The edited view's own changed keys give the
 * changed entities (object, element kind v/vt/vn/f, index); a changed line
 * of another view must show one of them (through the format's list map,
 * lfs_law_dialect.lists) or be a value the format derives from positions
 * (lfs_law_dialect.derived). Anything else is refused at its line.
 */
#include "law_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/mem.h"
#include "registry/names.h"
#include "registry/viewset.h"

/* ---- keyed lines ----------------------------------------------------------- */

/** One line of a view with its key. Strings point into the view's text or
 *  into the owning ktext's names (never NUL-terminated: lengths given). */
typedef struct kline {
	const char *obj; /* object / node path ("" = model level) */
	uint32_t olen;
	const char *kw; /* list keyword (row) or statement keyword */
	uint32_t kwlen;
	uint32_t idx;  /* row index in its list / object; 0 for statements */
	uint32_t line; /* 1-based line of the text */
	uint32_t seq;  /* order in the text: ties of equal keys pair in order */
	bool row;
	const char *s; /* the line, without its newline */
	uint32_t len;
	uint32_t base[3]; /* OBJ `f` rows: v, vt, vn rows before the object (model.obj
			   * numbers them across objects: compared object-local) */
} kline;

typedef struct ktext {
	kline *l;
	size_t n, cap;
	char *names; /* joined block paths "a/b" (kline.obj points here or into the text) */
	size_t nn, ncap;
	lfs_nameset meshes; /* the names the views give mesh nodes (names.h) */
	int failed;
} ktext;

static void ktext_free(ktext *k)
{
	free(k->l);
	free(k->names);
	lfs_nameset_free(&k->meshes);
	memset(k, 0, sizeof(*k));
}

static kline *kadd(ktext *k)
{
	if (k->n == k->cap) {
		size_t nc = k->cap ? 2 * k->cap : 256;
		kline *p = realloc(k->l, nc * sizeof(*p));
		if (!p) {
			k->failed = 1;
			return NULL;
		}
		k->l = p;
		k->cap = nc;
	}
	kline *r = &k->l[k->n];
	memset(r, 0, sizeof(*r));
	r->seq = (uint32_t)k->n++;
	return r;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* First token of [p, e) (after blanks): *t, its length; the rest after it. */
static uint32_t first_tok(const char *p, const char *e, const char **t)
{
	while (p < e && blank(*p))
		p++;
	*t = p;
	const char *q = p;
	while (q < e && !blank(*q))
		q++;
	return (uint32_t)(q - p);
}

/* One line of a text walked by next_line(): [s, e) without its newline,
 * its first token t of tl bytes (0: a blank line), its number from 0. */
typedef struct tline {
	const char *s, *e, *t;
	uint32_t tl, line;
} tline;

/* A walk over the lines of [p, end); next: the number of the next line. */
typedef struct lwalk {
	const char *p, *end;
	uint32_t next;
} lwalk;

/* The next line of @p w into @p l; false at the end of the text. */
static bool next_line(lwalk *w, tline *l)
{
	if (w->p >= w->end)
		return false;
	const char *e = memchr(w->p, '\n', (size_t)(w->end - w->p));
	if (!e)
		e = w->end;
	l->s = w->p;
	l->e = e;
	l->line = w->next++;
	l->tl = first_tok(w->p, e, &l->t);
	w->p = e + 1;
	return true;
}

static bool word_in(const char *w, uint32_t n, const char *const *list)
{
	for (; list && *list; list++)
		if (strlen(*list) == n && strncasecmp(w, *list, n) == 0)
			return true;
	return false;
}

static bool numeric(const char *t, uint32_t n)
{
	return n && ((t[0] >= '0' && t[0] <= '9') || t[0] == '-' || t[0] == '+' || t[0] == '.');
}

/* "meshes/NAME.obj" inside [p, e): NAME. */
static uint32_t mesh_ref(const char *p, const char *e, const char **name)
{
	for (const char *q = p; q + 7 < e; q++)
		if (memcmp(q, "meshes/", 7) == 0) {
			const char *a = q + 7;
			for (const char *b = a; b + 4 <= e; b++)
				if (memcmp(b, ".obj", 4) == 0) {
					*name = a;
					return (uint32_t)(b - a);
				}
		}
	return 0;
}

/* The name a block-opening line gives its block: its last token, or the
 * one before when the dialect lists the last as a free token (NWN
 * `newanim <anim> <model>`). */
static uint32_t block_name(const lfs_law_dialect *d, const char *t, uint32_t tl, const char *e,
			   const char **name)
{
	const char *toks[16];
	uint32_t lens[16], nt = 0;
	for (const char *p = t; nt < 16;) {
		uint32_t l = first_tok(p, e, &toks[nt]);
		if (!l)
			break;
		lens[nt++] = l;
		p = toks[nt - 1] + l;
	}
	uint32_t k = nt - 1;
	for (const char *const *f = d->free_tokens; f && *f && k > 1; f++) {
		const char *sp = strchr(*f, ' ');
		if (sp && (size_t)(sp - *f) == tl && strncasecmp(*f, t, tl) == 0 &&
		    (uint32_t)atoi(sp + 1) == k) {
			k--;
			break;
		}
	}
	*name = toks[k];
	return lens[k];
}

/* Group names of "# group N (meshes/NAME.obj)" comments (NOD), by N. */
#define KGROUPS 256

/* Is @p kw a list of the dialect's list map? */
static bool list_of(const lfs_law_dialect *d, const char *kw, uint32_t n)
{
	for (const lfs_law_list *m = d && d->lists ? d->lists : NULL; m && m->keyword; m++)
		if (strlen(m->keyword) == n && strncasecmp(m->keyword, kw, n) == 0)
			return true;
	return false;
}

/*
 * A top-level mesh block named @p raw (@p rl bytes) closed: its lines from
 * keyed line @p from on take the name the views give the node's OBJ
 * (names.h: escapes, "~2" for a name met before among the meshes), so
 * they key like the lines of meshes/<name>.obj.
 */
static void mesh_name(ktext *k, const char *raw, uint32_t rl, size_t from)
{
	char buf[1024];
	if (rl >= sizeof(buf))
		return;
	memcpy(buf, raw, rl);
	buf[rl] = 0;
	const char *nm = lfs_nameset_add(&k->meshes, buf);
	if (!nm) {
		k->failed = 1;
		return;
	}
	size_t nl = strlen(nm);
	if (nl == rl && !memcmp(nm, raw, rl))
		return;
	for (size_t i = from; i < k->n; i++)
		if (k->l[i].olen == rl && !memcmp(k->l[i].obj, raw, rl)) {
			k->l[i].obj = nm;
			k->l[i].olen = (uint32_t)nl;
		}
}

/*
 * Key the lines of an MDL-style text: blocks (dialect block_open/close)
 * give the object path (innermost two names joined by '/'), a keyword line
 * opens a list, lines whose first token is a number are its rows. A comment
 * naming `meshes/NAME.obj` makes NAME the object of the rows that follow
 * (or of the block it is in); `# group N` without a name reopens group N.
 */
static void key_text(const lfs_law_dialect *d, const char *text, size_t n, ktext *k)
{
	const char *bn[2] = { "", "" };
	uint32_t bl[2] = { 0, 0 };
	int depth = 0;
	const char *path = "";
	uint32_t plen = 0;
	const char *robj = NULL, *kw = "";
	uint32_t rlen = 0, kwlen = 0, ridx = 0;
	bool last_open = false; /* the last statement opened a block */
	const char *gname[KGROUPS] = { 0 };
	uint32_t glen[KGROUPS] = { 0 };
	size_t blk0 = 0;      /* first keyed line of the open top-level block */
	bool blk_mesh = false; /* it has a list of the list map: a mesh node */
	lfs_nameset_init(&k->meshes);
	k->ncap = 2 * n + 64;
	k->names = malloc(k->ncap);
	if (!k->names) {
		k->failed = 1;
		return;
	}
	lwalk lw = { text, text + n, 0 };
	tline L;
	while (!k->failed && next_line(&lw, &L)) {
		const char *e = L.e, *t = L.t, *lp = L.s;
		uint32_t tl = L.tl, line = L.line;
		if (!tl)
			continue;
		if (t[0] == (d && d->comment ? d->comment : '#') &&
		    !(d && d->kept_comments && word_in(t, tl, d->kept_comments))) {
			const char *nm = NULL;
			uint32_t nl = mesh_ref(t, e, &nm);
			const char *g = t + 1;
			while (g < e && blank(*g))
				g++;
			long gi = -1;
			if (e - g > 6 && strncmp(g, "group ", 6) == 0)
				gi = strtol(g + 6, NULL, 10);
			if (gi >= 0 && gi < KGROUPS && nl) {
				gname[gi] = nm;
				glen[gi] = nl;
			} else if (gi >= 0 && gi < KGROUPS && gname[gi]) {
				nm = gname[gi];
				nl = glen[gi];
			}
			if (nl && kwlen && !last_open) { /* rows of object NAME follow */
				robj = nm;
				rlen = nl;
				ridx = 0;
			} else if (nl && depth) { /* this block shows object NAME */
				path = nm;
				plen = nl;
			}
			continue;
		}
		kline *kl = kadd(k);
		if (!kl)
			break;
		kl->line = line + 1;
		kl->s = lp;
		kl->len = (uint32_t)(e - lp);
		if (numeric(t, tl)) {
			kl->row = true;
			kl->obj = robj ? robj : path;
			kl->olen = robj ? rlen : plen;
			kl->kw = kw;
			kl->kwlen = kwlen;
			kl->idx = ridx++;
			continue;
		}
		robj = NULL;
		kl->kw = t;
		kl->kwlen = tl;
		kl->obj = path;
		kl->olen = plen;
		last_open = false;
		if (depth == 1 && list_of(d, t, tl))
			blk_mesh = true;
		if (d && word_in(t, tl, d->block_open)) {
			const char *nm;
			uint32_t nl = block_name(d, t, tl, e, &nm);
			if (depth < 2) {
				bn[depth] = nm;
				bl[depth] = nl;
			}
			if (depth == 0) {
				blk0 = k->n;
				blk_mesh = false;
			}
			depth++;
			last_open = true;
		} else if (d && word_in(t, tl, d->block_close) && depth > 0) {
			if (--depth == 0 && blk_mesh)
				mesh_name(k, bn[0], bl[0], blk0);
		} else {
			goto keep_path;
		}
		/* the path of the lines that follow */
		if (depth == 0) {
			path = "";
			plen = 0;
		} else if (depth == 1) {
			path = bn[0];
			plen = bl[0];
		} else if (k->nn + bl[0] + 1 + bl[1] <= k->ncap) {
			char *w = k->names + k->nn;
			memcpy(w, bn[0], bl[0]);
			w[bl[0]] = '/';
			memcpy(w + bl[0] + 1, bn[1], bl[1]);
			path = w;
			plen = bl[0] + 1 + bl[1];
			k->nn += plen;
		} else {
			k->failed = 1;
		}
	keep_path:
		kw = t;
		kwlen = tl;
		ridx = 0;
	}
}

/* Key the lines of an OBJ text: object from `o` (from `g` when the text
 * has no `o`); v / vt / vn / f rows numbered per object. */
static void key_obj(const char *text, size_t n, ktext *k)
{
	bool has_o = false;
	lwalk lw = { text, text + n, 0 };
	tline L;
	while (next_line(&lw, &L))
		if (L.tl == 1 && L.t[0] == 'o')
			has_o = true;
	const char *obj = "";
	uint32_t olen = 0, cnt[4] = { 0 }, tot[3] = { 0 }, base[3] = { 0 };
	lw = (lwalk){ text, text + n, 0 };
	while (!k->failed && next_line(&lw, &L)) {
		const char *e = L.e, *t = L.t, *lp = L.s;
		uint32_t tl = L.tl, line = L.line;
		if (!tl || t[0] == '#')
			continue;
		if ((tl == 1 && t[0] == 'o') || (!has_o && tl == 1 && t[0] == 'g')) {
			const char *a = t + 1;
			while (a < e && blank(*a))
				a++;
			const char *b = e;
			while (b > a && blank(b[-1]))
				b--;
			obj = a;
			olen = (uint32_t)(b - a);
			memset(cnt, 0, sizeof(cnt));
			memcpy(base, tot, sizeof(base));
		}
		kline *kl = kadd(k);
		if (!kl)
			break;
		kl->line = line + 1;
		kl->s = lp;
		kl->len = (uint32_t)(e - lp);
		kl->obj = obj;
		kl->olen = olen;
		kl->kw = t;
		kl->kwlen = tl;
		int ki = tl == 1 && t[0] == 'v'		    ? 0
			 : tl == 2 && t[0] == 'v' && t[1] == 't' ? 1
			 : tl == 2 && t[0] == 'v' && t[1] == 'n' ? 2
			 : tl == 1 && t[0] == 'f'		    ? 3
								    : -1;
		if (ki >= 0) {
			kl->row = true;
			kl->idx = cnt[ki]++;
			if (ki < 3)
				tot[ki]++;
			memcpy(kl->base, base, sizeof(base));
		}
	}
}

/* Key the lines of a CSV text: rows by number. */
static void key_csv(const char *text, size_t n, ktext *k)
{
	uint32_t idx = 0;
	lwalk lw = { text, text + n, 0 };
	tline L;
	while (!k->failed && next_line(&lw, &L)) {
		if (!L.tl)
			continue;
		kline *kl = kadd(k);
		if (!kl)
			break;
		*kl = (kline){ "", 0, "row", 3, idx++, L.line + 1, kl->seq, true, L.s, (uint32_t)(L.e - L.s),
			       { 0 } };
	}
}

static int kcmp_key(const kline *a, const kline *b)
{
	uint32_t m = a->olen < b->olen ? a->olen : b->olen;
	int c = memcmp(a->obj, b->obj, m);
	if (c || a->olen != b->olen)
		return c ? c : (a->olen < b->olen ? -1 : 1);
	if (a->row != b->row)
		return a->row ? 1 : -1;
	m = a->kwlen < b->kwlen ? a->kwlen : b->kwlen;
	c = strncasecmp(a->kw, b->kw, m);
	if (c || a->kwlen != b->kwlen)
		return c ? c : (a->kwlen < b->kwlen ? -1 : 1);
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int kcmp(const void *x, const void *y)
{
	const kline *a = x, *b = y;
	int c = kcmp_key(a, b);
	return c ? c : (a->seq < b->seq ? -1 : a->seq > b->seq);
}

/* Two `f` rows: the same corners, indices made local to their objects. */
static bool same_face(const kline *a, const kline *b)
{
	const char *p = a->s, *pe = a->s + a->len, *q = b->s, *qe = b->s + b->len;
	for (;;) {
		const char *s, *t;
		uint32_t sl = first_tok(p, pe, &s), tl = first_tok(q, qe, &t);
		if (!sl || !tl)
			return !sl && !tl;
		if (*s == 'f' || *t == 'f') {
			if (sl != tl || memcmp(s, t, sl))
				return false;
		} else {
			const char *x = s, *y = t;
			for (int k = 0; k < 3; k++) {
				char *xe, *ye;
				long u = strtol(x, &xe, 10), w = strtol(y, &ye, 10);
				if ((xe == x) != (ye == y) ||
				    (xe > x && u - (long)a->base[k] != w - (long)b->base[k]))
					return false;
				bool xs = xe < s + sl && *xe == '/', ys = ye < t + tl && *ye == '/';
				if (xs != ys)
					return false;
				if (!xs)
					break;
				x = xe + 1;
				y = ye + 1;
			}
		}
		p = s + sl;
		q = t + tl;
	}
}

/* Same tokens (blanks between them free)? */
static bool same_line(const kline *a, const kline *b)
{
	if (a->row && a->kwlen == 1 && a->kw[0] == 'f' && (a->base[0] || b->base[0]))
		return same_face(a, b);
	const char *p = a->s, *pe = a->s + a->len, *q = b->s, *qe = b->s + b->len;
	for (;;) {
		const char *s, *t;
		uint32_t sl = first_tok(p, pe, &s), tl = first_tok(q, qe, &t);
		if (sl != tl || memcmp(s, t, sl))
			return false;
		if (!sl)
			return true;
		p = s + sl;
		q = t + tl;
	}
}

/* Bit k set: token k differs (all bits when the token counts differ). */
static uint64_t changed_cols(const kline *a, const kline *b)
{
	const char *p = a->s, *pe = a->s + a->len, *q = b->s, *qe = b->s + b->len;
	uint64_t m = 0;
	for (unsigned k = 0;; k++) {
		const char *s, *t;
		uint32_t sl = first_tok(p, pe, &s), tl = first_tok(q, qe, &t);
		if (!sl && !tl)
			return m;
		if (!sl || !tl)
			return ~(uint64_t)0;
		if ((sl != tl || memcmp(s, t, sl)) && k < 64)
			m |= (uint64_t)1 << k;
		p = s + sl;
		q = t + tl;
	}
}

static void key_view(const lfs_format *f, lfs_view_kind kind, const char *s, size_t n, ktext *k)
{
	if (kind == LFS_VIEW_MODEL_OBJ || kind == LFS_VIEW_MESH_OBJ)
		key_obj(s, n, k);
	else if (kind == LFS_VIEW_TRACK_CSV || kind == LFS_VIEW_TABLE_CSV)
		key_csv(s, n, k);
	else
		key_text(f ? f->law : NULL, s, n, k);
	if (!k->failed && k->n)
		qsort(k->l, k->n, sizeof(*k->l), kcmp);
}

/* ---- the changed entities ---------------------------------------------------- */

/** A changed entity: object @p obj, element kind @p at ('v' position,
 *  't' uv, 'n' normal, 'f' face; '*' the whole object; 'V' some position
 *  of the object changed), element @p idx. */
typedef struct dent {
	const char *obj;
	uint32_t olen, idx;
	char at;
} dent;

typedef struct delta {
	dent *e;
	size_t n, cap;
	bool any_v;    /* some position changed */
	bool obj_free; /* a text edit changed a statement: OBJ views not keyed */
	bool rest_free; /* text/CSV/MTL views not keyed (a whole-model text or CSV edit) */
	int failed;
} delta;

static void dadd(delta *D, const char *obj, uint32_t olen, char at, uint32_t idx)
{
	if (D->n == D->cap) {
		size_t nc = D->cap ? 2 * D->cap : 64;
		dent *p = realloc(D->e, nc * sizeof(*p));
		if (!p) {
			D->failed = 1;
			return;
		}
		D->e = p;
		D->cap = nc;
	}
	D->e[D->n++] = (dent){ obj, olen, at == '*' || at == 'V' ? 0 : idx, at };
	if (at == 'v' || at == 'V')
		D->any_v = true;
	if (at == 'v')
		dadd(D, obj, olen, 'V', 0);
}

static int dcmp(const void *x, const void *y)
{
	const dent *a = x, *b = y;
	uint32_t m = a->olen < b->olen ? a->olen : b->olen;
	int c = memcmp(a->obj, b->obj, m);
	if (c || a->olen != b->olen)
		return c ? c : (a->olen < b->olen ? -1 : 1);
	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static bool dhas1(const delta *D, const char *obj, uint32_t olen, char at, uint32_t idx)
{
	dent key = { obj, olen, idx, at };
	return D->n && bsearch(&key, D->e, D->n, sizeof(dent), dcmp) != NULL;
}

/* Is element (obj, at, idx) changed: itself, or its whole object (or a
 * block it is nested in, "obj/..."). */
static bool dhas(const delta *D, const char *obj, uint32_t olen, char at, uint32_t idx)
{
	if (dhas1(D, obj, olen, at, idx) || dhas1(D, obj, olen, '*', 0))
		return true;
	for (uint32_t i = 0; i < olen; i++)
		if (obj[i] == '/' && dhas1(D, obj, i, '*', 0))
			return true;
	return false;
}

/* The list map entries of keyword @p kw that cover column @p col. */
static const lfs_law_list *list_at(const lfs_law_dialect *d, const kline *l, unsigned col,
				   const lfs_law_list *after)
{
	if (!d || !d->lists)
		return NULL;
	const lfs_law_list *m = after ? after + 1 : d->lists;
	for (; m->keyword; m++)
		if (strlen(m->keyword) == l->kwlen && strncasecmp(m->keyword, l->kw, l->kwlen) == 0 &&
		    col >= m->col0 && col < (unsigned)m->col0 + m->ncol)
			return m;
	return NULL;
}

/* A changed keyed line of the edited view (@p a old, @p b new; one may be
 * NULL): the entities it stands for. */
static void note_edit(const lfs_format *f, lfs_view_kind kind, delta *D, const kline *a,
		      const kline *b)
{
	const kline *l = a ? a : b;
	if (kind == LFS_VIEW_MODEL_OBJ || kind == LFS_VIEW_MESH_OBJ) {
		if (l->row && a && b)
			dadd(D, l->obj, l->olen, l->kwlen == 1 ? l->kw[0] : l->kw[1], l->idx);
		else
			dadd(D, l->obj, l->olen, '*', 0);
		return;
	}
	if (kind != LFS_VIEW_TEXT) {
		D->rest_free = true; /* CSV: the whole-model text is not keyed */
		return;
	}
	D->rest_free = true;
	const lfs_law_dialect *d = f ? f->law : NULL;
	if (!l->row) {
		dadd(D, l->obj, l->olen, '*', 0);
		D->obj_free = true;
		return;
	}
	if (!a || !b) {
		dadd(D, l->obj, l->olen, '*', 0);
		return;
	}
	uint64_t m = changed_cols(a, b);
	for (unsigned c = 0; c < 64; c++) {
		if (!(m >> c & 1))
			continue;
		const lfs_law_list *e = list_at(d, l, c, NULL);
		if (e)
			dadd(D, l->obj, l->olen, e->attr, l->idx);
		else
			dadd(D, l->obj, l->olen, '*', 0);
	}
}

/* ---- explaining the changed lines of another view ----------------------------- */

static const char *attr_name(char at)
{
	return at == 'v' ? "position" : at == 't' ? "uv" : at == 'n' ? "normal" : "face";
}

/* Does the edit explain changed line @p a -> @p b (one may be NULL) of a
 * view of kind @p kind? When not, *what names what it shows. */
static bool explained(const lfs_format *f, lfs_view_kind kind, const delta *D, const kline *a,
		      const kline *b, char *what, size_t wn)
{
	const kline *l = a ? a : b;
	const lfs_law_dialect *d = f ? f->law : NULL;
	int ol = (int)(l->olen > 60 ? 60 : l->olen), kl = (int)(l->kwlen > 30 ? 30 : l->kwlen);
	if (kind == LFS_VIEW_MODEL_OBJ || kind == LFS_VIEW_MESH_OBJ) {
		if (D->obj_free)
			return true;
		char at = l->row ? (l->kwlen == 1 ? l->kw[0] : l->kw[1]) : '*';
		if (dhas(D, l->obj, l->olen, at, l->idx))
			return true;
		if (l->row)
			snprintf(what, wn, "%s of %s %u of %.*s", attr_name(at),
				 at == 'f' ? "face" : "vertex", (unsigned)l->idx + 1, ol, l->obj);
		else
			snprintf(what, wn, "'%.*s' of %.*s", kl, l->kw, ol, l->obj);
		return false;
	}
	if (D->rest_free)
		return true;
	if (kind != LFS_VIEW_TEXT) {
		/* the material library: only an edit of a whole object (its
		 * usemtl, its faces) may change it; a CSV: nothing explains it */
		for (size_t i = 0; kind == LFS_VIEW_MATERIALS && i < D->n; i++)
			if (D->e[i].at == '*')
				return true;
		if (kind == LFS_VIEW_MATERIALS)
			snprintf(what, wn, "a material");
		else
			snprintf(what, wn, "row %u", (unsigned)l->idx);
		return false;
	}
	/* a value the format derives from positions: of the same block, or of
	 * any at model level */
	bool derived = d && word_in(l->kw, l->kwlen, d->derived);
	if (derived && (l->olen ? dhas(D, l->obj, l->olen, 'V', 0) : D->any_v))
		return true;
	if (dhas(D, l->obj, l->olen, '*', 0))
		return true;
	/* a model-level list (its header's count, its rows numbered across the
	 * model) whose rows an edit of a whole object added or removed */
	if (l->olen == 0 && list_of(d, l->kw, l->kwlen))
		for (size_t i = 0; i < D->n; i++)
			if (D->e[i].at == '*')
				return true;
	if (!l->row || !a || !b) {
		if (l->row)
			snprintf(what, wn, "row %u of '%.*s' of %.*s", (unsigned)l->idx, kl, l->kw, ol,
				 l->obj);
		else
			snprintf(what, wn, "'%.*s' of %.*s", kl, l->kw, ol, l->olen ? l->obj : "the model");
		return false;
	}
	uint64_t m = changed_cols(a, b);
	for (unsigned c = 0; c < 64; c++) {
		if (!(m >> c & 1))
			continue;
		bool ok = false;
		char first = 0;
		for (const lfs_law_list *e = list_at(d, l, c, NULL); e && !ok; e = list_at(d, l, c, e)) {
			first = first ? first : e->attr;
			ok = dhas(D, l->obj, l->olen, e->attr, l->idx);
		}
		if (!ok) {
			if (first)
				snprintf(what, wn, "%s of %s %u of %.*s", attr_name(first),
					 first == 'f' ? "face" : "vertex", (unsigned)l->idx, ol, l->obj);
			else
				snprintf(what, wn, "value %u of row %u of '%.*s' of %.*s", c + 1,
					 (unsigned)l->idx, kl, l->kw, ol, l->olen ? l->obj : "the model");
			return false;
		}
	}
	return true;
}

/* Walk the keyed lines of @p A (old) and @p B (new) in key order, calling
 * the edit noter or the checker for each changed key. The first unexplained
 * line (by line number) is kept in *bad / *bad_new. */
typedef struct walk {
	const lfs_format *f;
	lfs_view_kind kind;
	const char *edited_path;
	delta *D;
	bool edited;
	const kline *bad;    /* where to report: the old line (the new when added) */
	const kline *bad_to; /* what it would read: the new line, NULL when removed */
	bool bad_new;
	char what[160];
} walk;

static void on_change(walk *w, const kline *a, const kline *b)
{
	if (w->edited) {
		note_edit(w->f, w->kind, w->D, a, b);
		return;
	}
	char what[160];
	if (explained(w->f, w->kind, w->D, a, b, what, sizeof(what)))
		return;
	const kline *l = a ? a : b;
	if (!w->bad || l->line < w->bad->line) {
		w->bad = l;
		w->bad_to = b;
		w->bad_new = !a;
		memcpy(w->what, what, sizeof(what));
	}
}

static void walk_keys(walk *w, const ktext *A, const ktext *B)
{
	size_t i = 0, j = 0;
	while (i < A->n || j < B->n) {
		const kline *a = i < A->n ? &A->l[i] : NULL, *b = j < B->n ? &B->l[j] : NULL;
		int c = !a ? 1 : !b ? -1 : kcmp_key(a, b);
		if (c < 0) {
			on_change(w, a, NULL);
			i++;
		} else if (c > 0) {
			on_change(w, NULL, b);
			j++;
		} else {
			if (!same_line(a, b))
				on_change(w, a, b);
			i++;
			j++;
		}
	}
}

/* ---- entry point --------------------------------------------------------------- */

static bool keyed_kind(lfs_view_kind k)
{
	return k == LFS_VIEW_TEXT || k == LFS_VIEW_MODEL_OBJ || k == LFS_VIEW_MESH_OBJ ||
	       k == LFS_VIEW_TRACK_CSV || k == LFS_VIEW_TABLE_CSV || k == LFS_VIEW_MATERIALS;
}

static lfs_err diff_view(walk *w, const lfs_view *o, const lfs_view *nv, lfs_error *err)
{
	ktext A = { 0 }, B = { 0 };
	key_view(w->f, o->kind, o->data, o->size, &A);
	key_view(w->f, o->kind, nv->data, nv->size, &B);
	lfs_err e = LFS_OK;
	if (A.failed || B.failed)
		e = lfs_nomem(err, "whole-model check");
	else
		walk_keys(w, &A, &B);
	if (!e && w->bad) {
		const kline *l = w->bad, *t = w->bad_to;
		int n = t ? (int)(t->len > 80 ? 80 : t->len) : 0;
		if (w->bad_new)
			e = lfs_fail_at(err, o->path, l->line, 1,
					"this save would also add a line (%s) to %s, which the edit "
					"of %s does not explain: '%.*s'",
					w->what, o->path, w->edited_path, n, t->s);
		else if (!t)
			e = lfs_fail_at(err, o->path, l->line, 1,
					"this save would also remove this line (%s) of %s, which the "
					"edit of %s does not explain",
					w->what, o->path, w->edited_path);
		else
			e = lfs_fail_at(err, o->path, l->line, 1,
					"this save would also change this line (%s) of %s, which the "
					"edit of %s does not explain: it would read '%.*s'",
					w->what, o->path, w->edited_path, n, t->s);
	}
	ktext_free(&A);
	ktext_free(&B);
	return e;
}

lfs_err lfs_law_check_whole(const lfs_format *f, const lfs_view *v, const uint8_t *orig, size_t n,
			    const uint8_t *out, size_t outn, const void *model, lfs_error *err)
{
	if (!keyed_kind(v->kind) || v->kind == LFS_VIEW_MATERIALS)
		return LFS_OK;
	lfs_view_opts o = { 0 };
	lfs_viewset ov, nvs;
	lfs_err e = lfs_views_build_as(f, orig, n, &o, &ov, err);
	if (e)
		return e;
	e = lfs_views_build_model(f, model, out, outn, &o, &nvs, err);
	if (e) {
		lfs_viewset_free(&ov);
		return e;
	}
	delta D = { 0 };
	walk w = { .f = f, .kind = v->kind, .edited_path = v->path, .D = &D, .edited = true };
	const lfs_view *eo = lfs_viewset_find(&ov, v->path), *en = lfs_viewset_find(&nvs, v->path);
	if (eo && en) {
		ktext A = { 0 }, B = { 0 };
		key_view(f, v->kind, eo->data, eo->size, &A);
		key_view(f, v->kind, en->data, en->size, &B);
		if (A.failed || B.failed)
			e = lfs_nomem(err, "whole-model check");
		else
			walk_keys(&w, &A, &B);
		/* D's strings point into the old and new views' texts, alive
		 * until the viewsets are freed; A's and B's names are needed too */
		if (!e && !D.failed && D.n)
			qsort(D.e, D.n, sizeof(*D.e), dcmp);
		w.edited = false;
		for (size_t i = 0; !e && !D.failed && i < ov.n_views; i++) {
			const lfs_view *ow = &ov.views[i];
			if (!keyed_kind(ow->kind) || !strcmp(ow->path, v->path))
				continue;
			const lfs_view *nw = lfs_viewset_find(&nvs, ow->path);
			if (!nw && D.rest_free)
				continue; /* a whole-model text or CSV edit may remove views */
			if (!nw) {
				e = lfs_fail_at(err, ow->path, 1, 1,
						"this save would remove the view %s, which the edit of %s "
						"does not explain",
						ow->path, v->path);
				break;
			}
			if (nw->size == ow->size && !memcmp(nw->data, ow->data, ow->size))
				continue;
			w.bad = NULL;
			w.kind = ow->kind;
			e = diff_view(&w, ow, nw, err);
		}
		if (!e && D.failed)
			e = lfs_nomem(err, "whole-model check");
		ktext_free(&A);
		ktext_free(&B);
	}
	free(D.e);
	lfs_viewset_free(&ov);
	lfs_viewset_free(&nvs);
	return e;
}
