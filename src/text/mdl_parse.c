/**
 * @file mdl_parse.c
 * Tolerant NWN ASCII MDL reader (see mdl_parse.h; the grammar of real files
 * as the public parsers read it, [N §2] in src/formats/nwn/nwn_mdl.h).
 *
 * Structure: a line lexer over a private, writable copy of the text (tokens
 * are NUL-terminated in place, token arrays come from a bump allocator) with a
 * one-line lookahead, and a flat (non-recursive) statement parser. Arrays of
 * statements/rows/nodes grow geometrically; their sizes are bounded by the
 * number of lines, never by a count read from the text.
 */
#include "mdl_parse.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/floatfmt.h"
#include "../common/mem.h"

/* ---- bump allocator --------------------------------------------------- */

typedef struct blk {
	struct blk *next;
	size_t used, cap;
	max_align_t data[];
} blk;

typedef struct priv {
	blk *blocks;
	char *text;        /* writable copy of the input, n + 1 bytes */
} priv;

static void *bump(priv *p, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	blk *b = p->blocks;
	if (!b || b->cap - b->used < size) {
		size_t cap = size > 65536 ? size : 65536;
		b = malloc(sizeof(blk) + cap);
		if (!b)
			return NULL;
		b->next = p->blocks;
		b->used = 0;
		b->cap = cap;
		p->blocks = b;
	}
	void *r = (char *)b->data + b->used;
	b->used += size;
	return r;
}

/* ---- lexer ------------------------------------------------------------- */

enum line_kind { L_EOF = 0, L_TOKENS, L_PARTNUM };

typedef struct parser {
	priv *pv;
	mdl_doc *doc;
	lfs_error *err;
	const char *file;
	char *buf;
	size_t n, pos;
	uint32_t line;       /* number of the last line read */
	/* lookahead */
	bool have;
	int kind;
	mdl_row cur;
	uint32_t blank_before; /* whitespace-only lines right before the lookahead */
	bool oom;
	unsigned flags;        /* MDL_PARSE_* */
	lfs_warnings *warn;    /* MDL_PARSE_TAIL_IGNORED's warning, may be NULL */
} parser;

static bool is_ws(unsigned char c)
{
	return c <= 0x20; /* space, tab, CR, NUL and other control bytes */
}

/* Tokenise the next non-blank, non-comment line into the lookahead. */
static void lex(parser *ps)
{
	ps->have = true;
	ps->blank_before = 0;
	for (;;) {
		if (ps->pos >= ps->n) {
			ps->kind = L_EOF;
			ps->cur.line = ps->line + 1;
			ps->cur.ntok = 0;
			ps->cur.tok = NULL;
			return;
		}
		size_t start = ps->pos, end = start;
		while (end < ps->n && ps->buf[end] != '\n')
			end++;
		ps->pos = end < ps->n ? end + 1 : end;
		ps->line++;
		uint32_t nt = 0;
		for (size_t i = start; i < end;) {
			while (i < end && is_ws((unsigned char)ps->buf[i]))
				i++;
			if (i >= end)
				break;
			nt++;
			while (i < end && !is_ws((unsigned char)ps->buf[i]))
				i++;
		}
		if (!nt) {
			ps->blank_before++;
			continue;
		}
		mdl_tok *t = bump(ps->pv, (size_t)nt * sizeof(*t));
		if (!t) {
			ps->oom = true;
			ps->kind = L_EOF;
			ps->cur.ntok = 0;
			return;
		}
		uint32_t k = 0;
		for (size_t i = start; i < end;) {
			while (i < end && is_ws((unsigned char)ps->buf[i]))
				i++;
			if (i >= end)
				break;
			t[k].s = ps->buf + i;
			t[k].col = (uint32_t)(i - start + 1);
			while (i < end && !is_ws((unsigned char)ps->buf[i]))
				i++;
			ps->buf[i] = '\0'; /* i <= end <= n; buf has n + 1 bytes */
			k++;
		}
		ps->cur.line = ps->line;
		ps->cur.ntok = nt;
		ps->cur.tok = t;
		if (t[0].s[0] == '#') {
			if (strcasecmp(t[0].s, "#part-number") == 0 && nt >= 2) {
				ps->kind = L_PARTNUM;
				return;
			}
			ps->doc->n_comment_lines++;
			ps->blank_before = 0;
			continue;
		}
		ps->kind = L_TOKENS;
		return;
	}
}

static const mdl_row *peek(parser *ps, int *kind)
{
	if (!ps->have)
		lex(ps);
	*kind = ps->kind;
	return &ps->cur;
}

static void take(parser *ps)
{
	ps->have = false;
}

/* ---- helpers ----------------------------------------------------------- */

bool mdl_tok_float(const char *s, float *out)
{
	float f;
	if (!s || !lfs_parse_float(s, strlen(s), &f))
		return false;
	if (out)
		*out = f;
	return true;
}

bool mdl_tok_int(const char *s, int64_t *out)
{
	if (!s || !*s)
		return false;
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return false;
	for (const char *q = p; *q; q++)
		if (*q < '0' || *q > '9')
			return false;
	errno = 0;
	char *end;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	if (out)
		*out = v;
	return true;
}

static bool kw_is(const mdl_row *r, const char *kw)
{
	return r->ntok && strcasecmp(r->tok[0].s, kw) == 0;
}

/* A number token, also one beyond the float32 range (a row of numbers is
 * still a row: its value is refused where it is read, with the range message). */
static bool is_number(const char *s)
{
	return mdl_tok_float(s, NULL) || (s && lfs_float_overflows(s, strlen(s)));
}

/* List keywords [N §2.2 table, skin/dangly/aabb/light paragraphs]. */
enum row_kind { RK_NUM, RK_STR, RK_WEIGHTS };
static const struct list_def {
	const char *kw;
	uint8_t kind;
	uint8_t min_cols;
} list_defs[] = {
	{ "verts", RK_NUM, 3 },        { "tverts", RK_NUM, 2 },
	{ "tverts1", RK_NUM, 2 },      { "tverts2", RK_NUM, 2 },
	{ "tverts3", RK_NUM, 2 },      { "faces", RK_NUM, 8 },
	{ "colors", RK_NUM, 3 },       { "normals", RK_NUM, 3 },
	{ "tangents", RK_NUM, 3 },     { "texindices1", RK_NUM, 3 },
	{ "texindices2", RK_NUM, 3 },  { "texindices3", RK_NUM, 3 },
	{ "mirrorlist", RK_NUM, 1 },   { "multimaterial", RK_STR, 1 },
	{ "weights", RK_WEIGHTS, 2 },  { "constraints", RK_NUM, 1 },
	{ "aabb", RK_NUM, 7 },         { "flaresizes", RK_NUM, 1 },
	{ "flarepositions", RK_NUM, 1 }, { "flarecolorshifts", RK_NUM, 3 },
	{ "texturenames", RK_STR, 1 }, { "animverts", RK_NUM, 3 },
	{ "animtverts", RK_NUM, 2 },   { "animnormals", RK_NUM, 3 },
	{ "qbone_ref_inv", RK_NUM, 4 }, { "tbone_ref_inv", RK_NUM, 3 },
	{ "boneconstantindices", RK_NUM, 1 },
};

static const struct list_def *find_list(const char *kw)
{
	for (size_t i = 0; i < sizeof(list_defs) / sizeof(list_defs[0]); i++)
		if (strcasecmp(kw, list_defs[i].kw) == 0)
			return &list_defs[i];
	return NULL;
}

/* Length of the controller name if @p kw is `<name>key` / `<name>bezierkey`, else 0. */
static size_t key_suffix(const char *kw, bool *bezier)
{
	size_t len = strlen(kw);
	*bezier = false;
	if (len > 9 && strcasecmp(kw + len - 9, "bezierkey") == 0) {
		*bezier = true;
		return len - 9;
	}
	if (len > 3 && strcasecmp(kw + len - 3, "key") == 0)
		return len - 3;
	return 0;
}

/* Keywords that close or open a block: never a list row, never inside a node. */
static bool is_structural(const mdl_row *r)
{
	static const char *const kws[] = {
		"node", "endnode", "endlist", "newanim", "doneanim", "newmodel",
		"donemodel", "beginmodelgeom", "endmodelgeom",
	};
	for (size_t i = 0; i < sizeof(kws) / sizeof(kws[0]); i++)
		if (kw_is(r, kws[i]))
			return true;
	return false;
}

/* Check one row of a list/key statement. */
static lfs_err check_row(parser *ps, const mdl_stmt *st, const mdl_row *r, uint8_t kind,
			 uint8_t min_cols)
{
	const char *kw = st->head.tok[0].s;
	if (r->ntok < min_cols)
		return lfs_fail_at(ps->err, ps->file, r->line, r->tok[0].col,
				   "%s row has %u value(s), at least %u expected", kw,
				   r->ntok, min_cols);
	for (uint32_t i = 0; i < r->ntok; i++) {
		bool need = kind == RK_NUM || (kind == RK_WEIGHTS && (i & 1));
		if (need && lfs_float_overflows(r->tok[i].s, strlen(r->tok[i].s)))
			return lfs_fail_at(ps->err, ps->file, r->line, r->tok[i].col,
					   "'%.40s' " LFS_FLOAT_RANGE_MSG, r->tok[i].s);
		if (need && !is_number(r->tok[i].s))
			return lfs_fail_at(ps->err, ps->file, r->line, r->tok[i].col,
					   "non-number '%.40s' in %s row", r->tok[i].s, kw);
	}
	if (kind == RK_WEIGHTS && (r->ntok & 1))
		return lfs_fail_at(ps->err, ps->file, r->line, r->tok[r->ntok - 1].col,
				   "weights row needs bone/weight pairs, has %u tokens", r->ntok);
	return LFS_OK;
}

/* Does line @p r look like a row of this list (used for count-less forms and
 * to detect a list shorter than its count)? */
static bool looks_like_row(const mdl_row *r, uint8_t kind)
{
	if (is_structural(r))
		return false;
	if (kind == RK_NUM)
		return is_number(r->tok[0].s);
	if (kind == RK_WEIGHTS)
		return r->ntok >= 2 && is_number(r->tok[1].s);
	return true;
}

static lfs_err add_row(parser *ps, mdl_stmt *st, uint32_t *cap, const mdl_row *r)
{
	if (!lfs_grow32((void **)&st->rows, cap, st->n_rows + 1, sizeof(*st->rows)))
		return lfs_nomem(ps->err, "mdl text");
	st->rows[st->n_rows++] = *r;
	return LFS_OK;
}

/* Parse the rows of a LIST/KEYS statement whose head has just been taken. */
static lfs_err parse_rows(parser *ps, mdl_stmt *st, uint8_t kind, uint8_t min_cols)
{
	const mdl_row *h = &st->head;
	const char *kw = h->tok[0].s;
	uint32_t cap = 0;
	lfs_err e;
	st->count = -1;
	if (h->ntok >= 2) {
		int64_t c;
		bool inline_aabb = strcasecmp(kw, "aabb") == 0 && h->ntok >= 1u + min_cols;
		if (inline_aabb) {
			/* `aabb x y z x y z leaf` then more rows [N §2.2 aabb] */
			mdl_row first = { h->line, h->ntok - 1, h->tok + 1 };
			if ((e = check_row(ps, st, &first, kind, min_cols)) != LFS_OK)
				return e;
			if ((e = add_row(ps, st, &cap, &first)) != LFS_OK)
				return e;
		} else if (h->ntok > 2) {
			return lfs_fail_at(ps->err, ps->file, h->line, h->tok[2].col,
					   "unexpected '%.40s' after %s count", h->tok[2].s, kw);
		} else if (!mdl_tok_int(h->tok[1].s, &c) || c < 0) {
			return lfs_fail_at(ps->err, ps->file, h->line, h->tok[1].col,
					   "%s count '%.40s' is not a non-negative integer",
					   kw, h->tok[1].s);
		} else {
			st->count = c;
		}
	}
	int lk;
	if (st->count >= 0) {
		for (int64_t i = 0; i < st->count; i++) {
			const mdl_row *r = peek(ps, &lk);
			if (lk != L_TOKENS || !looks_like_row(r, kind)) {
				/* NN reads exactly `count` physical lines, so trailing
				 * blank lines are (all-default) rows to it: accept them
				 * as empty rows (vwp_flash_whiblu: `detonatekey 1` + a
				 * blank line). */
				int64_t missing = st->count - i;
				if (lk != L_PARTNUM && missing <= (int64_t)ps->blank_before) {
					uint32_t first = r->line - ps->blank_before;
					for (int64_t k = 0; k < missing; k++) {
						mdl_row empty = { first + (uint32_t)k, 0, NULL };
						if ((e = add_row(ps, st, &cap, &empty)) != LFS_OK)
							return e;
					}
					ps->doc->n_blank_rows += (uint32_t)missing;
					ps->blank_before -= (uint32_t)missing;
					break;
				}
				uint32_t col = lk == L_TOKENS ? r->tok[0].col : 1;
				if (lk == L_PARTNUM)
					col = r->tok[0].col;
				return lfs_fail_at(ps->err, ps->file, r->line, col,
						   "%s (line %u) declares %lld row(s) but has %lld: %s",
						   kw, h->line, (long long)st->count, (long long)i,
						   lk == L_EOF ? "end of file" : "found a non-row line");
			}
			if ((e = check_row(ps, st, r, kind, min_cols)) != LFS_OK)
				return e;
			if ((e = add_row(ps, st, &cap, r)) != LFS_OK)
				return e;
			take(ps);
		}
		const mdl_row *r = peek(ps, &lk);
		if (lk == L_TOKENS && kw_is(r, "endlist") && st->n_rows == st->count) {
			st->endlist = true;
			take(ps);
		}
		return LFS_OK;
	}
	for (;;) {
		const mdl_row *r = peek(ps, &lk);
		if (lk != L_TOKENS)
			return LFS_OK;
		if (kw_is(r, "endlist")) {
			st->endlist = true;
			take(ps);
			return LFS_OK;
		}
		if (!looks_like_row(r, kind))
			return LFS_OK;
		if ((e = check_row(ps, st, r, kind, min_cols)) != LFS_OK)
			return e;
		if ((e = add_row(ps, st, &cap, r)) != LFS_OK)
			return e;
		take(ps);
	}
}

/* Parse one statement starting at the (peeked, L_TOKENS) line into @p st. */
static lfs_err parse_stmt(parser *ps, mdl_stmt *st)
{
	memset(st, 0, sizeof(*st));
	st->head = ps->cur;
	st->name = st->head.tok[0].s;
	st->count = -1;
	take(ps);
	const char *kw = st->head.tok[0].s;
	const struct list_def *ld = find_list(kw);
	if (ld) {
		st->kind = MDL_ST_LIST;
		return parse_rows(ps, st, ld->kind, ld->min_cols);
	}
	bool bez;
	size_t nl = key_suffix(kw, &bez);
	if (nl && (st->head.ntok == 1 || (st->head.ntok == 2 && mdl_tok_int(st->head.tok[1].s, NULL)))) {
		st->kind = MDL_ST_KEYS;
		st->bezier = bez;
		char *name = bump(ps->pv, nl + 1);
		if (!name)
			return lfs_nomem(ps->err, "mdl text");
		memcpy(name, kw, nl);
		name[nl] = '\0';
		st->name = name;
		return parse_rows(ps, st, RK_NUM, 1);
	}
	st->kind = MDL_ST_PLAIN;
	return LFS_OK;
}

static lfs_err add_stmt(parser *ps, mdl_stmt **arr, uint32_t *n, uint32_t *cap)
{
	if (!lfs_grow32((void **)arr, cap, *n + 1, sizeof(**arr)))
		return lfs_nomem(ps->err, "mdl text");
	lfs_err e = parse_stmt(ps, &(*arr)[*n]);
	/* keep the statement even on error so its rows are freed */
	(*n)++;
	return e;
}

static const char *arg_or_empty(const mdl_row *r, uint32_t i)
{
	return i < r->ntok ? r->tok[i].s : "";
}

/* Parse `node <type> <name>` ... `endnode`; the `node` line is the lookahead. */
static lfs_err parse_node(parser *ps, mdl_node *nd)
{
	memset(nd, 0, sizeof(*nd));
	nd->head = ps->cur;
	nd->type = arg_or_empty(&nd->head, 1);
	nd->name = arg_or_empty(&nd->head, 2);
	take(ps);
	if (nd->head.ntok < 3)
		return lfs_fail_at(ps->err, ps->file, nd->head.line, nd->head.tok[0].col,
				   "node needs a type and a name");
	uint32_t cap = 0;
	for (;;) {
		int lk;
		const mdl_row *r = peek(ps, &lk);
		if (lk == L_EOF)
			return lfs_fail_at(ps->err, ps->file, r->line, 1,
					   "node '%.64s' (line %u) has no endnode before end of file",
					   nd->name, nd->head.line);
		if (lk == L_PARTNUM) {
			int64_t pn;
			if (!mdl_tok_int(r->tok[1].s, &pn))
				return lfs_fail_at(ps->err, ps->file, r->line, r->tok[1].col,
						   "#part-number '%.40s' is not an integer", r->tok[1].s);
			nd->has_part_number = true;
			nd->part_number = pn;
			take(ps);
			continue;
		}
		if (kw_is(r, "endnode")) {
			nd->end_line = r->line;
			take(ps);
			return LFS_OK;
		}
		if (kw_is(r, "endlist")) { /* stray: tts01_h02_03 has them */
			ps->doc->n_stray_endlist++;
			take(ps);
			continue;
		}
		if (is_structural(r))
			return lfs_fail_at(ps->err, ps->file, r->line, r->tok[0].col,
					   "'%.40s' inside node '%.64s' (line %u): missing endnode",
					   r->tok[0].s, nd->name, nd->head.line);
		if (kw_is(r, "parent")) {
			nd->parent = arg_or_empty(r, 1);
			nd->parent_line = r->line;
			take(ps);
			continue;
		}
		lfs_err e = add_stmt(ps, &nd->stmts, &nd->n_stmts, &cap);
		if (e != LFS_OK)
			return e;
	}
}

static lfs_err add_node(parser *ps, mdl_node **arr, uint32_t *n, uint32_t *cap)
{
	if (!lfs_grow32((void **)arr, cap, *n + 1, sizeof(**arr)))
		return lfs_nomem(ps->err, "mdl text");
	lfs_err e = parse_node(ps, &(*arr)[*n]);
	(*n)++;
	return e;
}

/* Parse `newanim` ... `doneanim`; the `newanim` line is the lookahead. */
static lfs_err parse_anim(parser *ps, mdl_anim *an)
{
	memset(an, 0, sizeof(*an));
	an->head = ps->cur;
	an->name = arg_or_empty(&an->head, 1);
	an->model = arg_or_empty(&an->head, 2);
	take(ps);
	uint32_t scap = 0, ncap = 0;
	for (;;) {
		int lk;
		const mdl_row *r = peek(ps, &lk);
		if (lk == L_EOF)
			return lfs_fail_at(ps->err, ps->file, r->line, 1,
					   "animation '%.64s' (line %u) has no doneanim before end of file",
					   an->name, an->head.line);
		if (lk == L_PARTNUM) { /* stray part number outside a node: comment */
			ps->doc->n_comment_lines++;
			take(ps);
			continue;
		}
		lfs_err e;
		if (kw_is(r, "doneanim")) {
			an->end_line = r->line;
			take(ps);
			return LFS_OK;
		}
		if (kw_is(r, "endlist")) {
			ps->doc->n_stray_endlist++;
			take(ps);
			continue;
		}
		if (kw_is(r, "node")) {
			e = add_node(ps, &an->nodes, &an->n_nodes, &ncap);
		} else if (is_structural(r)) {
			return lfs_fail_at(ps->err, ps->file, r->line, r->tok[0].col,
					   "'%.40s' inside animation '%.64s' (line %u): missing doneanim",
					   r->tok[0].s, an->name, an->head.line);
		} else {
			e = add_stmt(ps, &an->stmts, &an->n_stmts, &scap);
		}
		if (e != LFS_OK)
			return e;
	}
}

/* `<snoopstart ...>`, `</snoopstart>`, `</snoopend>`: GMax's log tags [N §1] */
static bool is_snoop_tag(const char *t)
{
	return strncasecmp(t, "<snoop", 6) == 0 || strncasecmp(t, "</snoop", 7) == 0;
}

/* The end of a model file (@p eof_line: line of the end of file, 0 when
 * `donemodel` was read): a file with `newmodel` needs `endmodelgeom` and
 * `donemodel` (bare `.pwk`-style node files need neither). */
static lfs_err check_end(parser *ps, uint32_t eof_line)
{
	const mdl_doc *d = ps->doc;
	const mdl_stmt *nm = mdl_doc_find(d, "newmodel");
	if (!nm)
		return LFS_OK;
	const mdl_stmt *bg = mdl_doc_find(d, "beginmodelgeom");
	if (bg && !mdl_doc_find(d, "endmodelgeom"))
		return lfs_fail_at(ps->err, ps->file, bg->head.line, bg->head.tok[0].col,
				   "'beginmodelgeom' without 'endmodelgeom'");
	if (!d->has_donemodel)
		return lfs_fail_at(ps->err, ps->file, eof_line ? eof_line : 1, 1,
				   "model '%.64s' (line %u) has no 'donemodel' before end of file",
				   mdl_stmt_arg(nm, 0) ? mdl_stmt_arg(nm, 0) : "", nm->head.line);
	return LFS_OK;
}

static lfs_err parse_doc(parser *ps)
{
	mdl_doc *d = ps->doc;
	uint32_t scap = 0, ncap = 0, acap = 0;
	int lk;
	/* GMax snoop preamble: `<snoopstart ...>` lines up to `</snoopstart>` [N §1] */
	const mdl_row *r = peek(ps, &lk);
	if (lk == L_TOKENS && strncasecmp(r->tok[0].s, "<snoop", 6) == 0) {
		uint32_t first = r->line;
		for (;;) {
			r = peek(ps, &lk);
			if (lk == L_EOF)
				return lfs_fail_at(ps->err, ps->file, first, 1,
						   "snoop preamble has no </snoopstart>");
			bool close = lk == L_TOKENS && strncasecmp(r->tok[0].s, "</snoopstart", 12) == 0;
			d->n_skipped_lines++;
			take(ps);
			if (close)
				break;
		}
	}
	for (;;) {
		r = peek(ps, &lk);
		if (lk == L_EOF)
			return check_end(ps, r->line);
		if (lk == L_PARTNUM) {
			d->n_comment_lines++;
			take(ps);
			continue;
		}
		lfs_err e;
		if (kw_is(r, "node")) {
			e = add_node(ps, &d->nodes, &d->n_nodes, &ncap);
		} else if (kw_is(r, "newanim")) {
			if (!lfs_grow32((void **)&d->anims, &acap, d->n_anims + 1,
					sizeof(*d->anims)))
				return lfs_nomem(ps->err, "mdl text");
			e = parse_anim(ps, &d->anims[d->n_anims]);
			d->n_anims++;
		} else if (kw_is(r, "endlist")) {
			d->n_stray_endlist++;
			take(ps);
			continue;
		} else if (kw_is(r, "endnode") || kw_is(r, "doneanim")) {
			return lfs_fail_at(ps->err, ps->file, r->line, r->tok[0].col,
					   "'%.40s' outside of any %s", r->tok[0].s,
					   kw_is(r, "doneanim") ? "animation" : "node");
		} else {
			bool done = kw_is(r, "donemodel");
			e = add_stmt(ps, &d->stmts, &d->n_stmts, &scap);
			if (e == LFS_OK && done) {
				d->has_donemodel = true;
				/* after donemodel: only a GMax snoop trailer (`</snoopstart>`,
				 * `</snoopend>`: 2 corpus files), comments, blank lines and
				 * NULs; any other text would be lost: refused, or ignored
				 * with one warning (MDL_PARSE_TAIL_IGNORED: the compiler,
				 * as the game's and the reference stop reading there) */
				bool warned = false;
				for (;;) {
					r = peek(ps, &lk);
					if (lk == L_EOF)
						break;
					if (lk == L_TOKENS && !is_snoop_tag(r->tok[0].s)) {
						if (!(ps->flags & MDL_PARSE_TAIL_IGNORED))
							return lfs_fail_at(ps->err, ps->file, r->line, r->tok[0].col,
									   "text after 'donemodel' (line %u): '%.40s' would be lost",
									   d->stmts[d->n_stmts - 1].head.line, r->tok[0].s);
						if (!warned)
							lfs_warn_at(ps->warn, ps->file, r->line, r->tok[0].col,
								    "text after donemodel ignored");
						warned = true;
					}
					d->n_skipped_lines++;
					take(ps);
				}
				return ps->oom ? lfs_nomem(ps->err, "mdl text") : check_end(ps, 0);
			}
		}
		if (e != LFS_OK)
			return e;
	}
}

/* ---- public ------------------------------------------------------------ */

static void free_stmts(mdl_stmt *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(s[i].rows);
	free(s);
}

static void free_nodes(mdl_node *nd, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free_stmts(nd[i].stmts, nd[i].n_stmts);
	free(nd);
}

void mdl_doc_free(mdl_doc *d)
{
	if (!d)
		return;
	free_stmts(d->stmts, d->n_stmts);
	free_nodes(d->nodes, d->n_nodes);
	for (uint32_t i = 0; i < d->n_anims; i++) {
		free_stmts(d->anims[i].stmts, d->anims[i].n_stmts);
		free_nodes(d->anims[i].nodes, d->anims[i].n_nodes);
	}
	free(d->anims);
	priv *p = d->priv;
	if (p) {
		for (blk *b = p->blocks; b;) {
			blk *nx = b->next;
			free(b);
			b = nx;
		}
		free(p->text);
		free(p);
	}
	free(d);
}

lfs_err mdl_parse(const char *file, const uint8_t *data, size_t n, mdl_doc **out,
		  lfs_error *err)
{
	return mdl_parse_ex(file, data, n, 0, NULL, out, err);
}

lfs_err mdl_parse_ex(const char *file, const uint8_t *data, size_t n, unsigned flags,
		     lfs_warnings *warn, mdl_doc **out, lfs_error *err)
{
	*out = NULL;
	const char *fname = file ? file : "<input>";
	if (n > MDL_MAX_INPUT)
		return lfs_fail_at(err, fname, 1, 1, "file too large for an ASCII model (%zu bytes)", n);
	if (n && !data)
		return lfs_fail_at(err, fname, 1, 1, "no data");
	mdl_doc *d = calloc(1, sizeof(*d));
	priv *p = calloc(1, sizeof(*p));
	if (!d || !p) {
		free(d);
		free(p);
		return lfs_nomem(err, "mdl text");
	}
	d->priv = p;
	size_t flen = strlen(fname);
	p->text = malloc(n + 1);
	char *fcopy = bump(p, flen + 1);
	if (!p->text || !fcopy) {
		mdl_doc_free(d);
		return lfs_nomem(err, "mdl text");
	}
	if (n)
		memcpy(p->text, data, n);
	p->text[n] = '\0';
	memcpy(fcopy, fname, flen + 1);
	d->file = fcopy;

	parser ps = { .pv = p, .doc = d, .err = err, .file = fcopy, .buf = p->text, .n = n,
		      .flags = flags, .warn = warn };
	lfs_err e = parse_doc(&ps);
	if (e == LFS_OK && ps.oom)
		e = lfs_nomem(ps.err, "mdl text");
	if (e != LFS_OK) {
		if (ps.oom && e != LFS_ERR_NOMEM)
			e = lfs_nomem(ps.err,
				      "mdl text"); /* a truncated lex looks like a parse error */
		mdl_doc_free(d); /* err->msg is a copy: safe to free the text */
		return e;
	}
	*out = d;
	return LFS_OK;
}

static const mdl_stmt *find_in(const mdl_stmt *s, uint32_t n, const char *kw)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcasecmp(s[i].head.tok[0].s, kw) == 0)
			return &s[i];
	return NULL;
}

const mdl_stmt *mdl_node_find(const mdl_node *n, const char *kw)
{
	return n ? find_in(n->stmts, n->n_stmts, kw) : NULL;
}

const mdl_stmt *mdl_doc_find(const mdl_doc *d, const char *kw)
{
	return d ? find_in(d->stmts, d->n_stmts, kw) : NULL;
}

const mdl_stmt *mdl_anim_find(const mdl_anim *a, const char *kw)
{
	return a ? find_in(a->stmts, a->n_stmts, kw) : NULL;
}

const char *mdl_stmt_arg(const mdl_stmt *s, uint32_t i)
{
	if (!s || i + 1 >= s->head.ntok || i >= UINT32_MAX - 1)
		return NULL;
	return s->head.tok[i + 1].s;
}
