/**
 * @file csv.c
 * The shared CSV reader and writers (csv.h).
 */
#include "csv.h"

#include "../common/floatfmt.h"
#include "../common/mem.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

void lfs_csv_init(lfs_csv *c, const char *file, const char *text, size_t n, unsigned flags,
		  lfs_error *err)
{
	memset(c, 0, sizeof(*c));
	c->file = file ? file : "<input>";
	c->p = text ? text : "";
	c->end = c->p + (text ? n : 0);
	c->flags = flags;
	c->err = err;
	/* A UTF-8 byte order mark (spreadsheets add one) is skipped; columns
	 * of the first line count from after it. */
	if ((flags & LFS_CSV_LENIENT) && c->end - c->p >= 3 && !memcmp(c->p, "\xEF\xBB\xBF", 3))
		c->p += 3;
}

static bool blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

/*
 * Append a field to the row: @p len bytes at @p a (kept when the row has
 * room), its column that of @p at on the line starting at @p ls.
 */
static void put_field(lfs_csv *c, const char *ls, const char *at, const char *a, size_t len)
{
	if (c->nf < LFS_CSV_MAXF) {
		c->f[c->nf].s = a;
		c->f[c->nf].len = len;
		c->f[c->nf].col = (uint32_t)(at - ls) + 1;
	}
	c->nf++;
}

/*
 * The quoted field opening at @p q (a '"') on the line [ls, e): its content
 * is the bytes up to the closing quote with every '""' read as '"' (copied
 * into c->scratch when it holds one). Returns the byte after the closing
 * quote, or NULL (error filled) when the quote is not closed on the line.
 */
static const char *quoted_field(lfs_csv *c, const char *ls, const char *q, const char *e)
{
	const char *s = q + 1;
	bool doubled = false;
	const char *p = s;
	for (;;) {
		const char *dq = memchr(p, '"', (size_t)(e - p));
		if (!dq) {
			lfs_fail_at(c->err, c->file, c->line, (unsigned)(q - ls) + 1,
				    "unterminated quoted field (a quoted field must close on its line)");
			return NULL;
		}
		if (dq + 1 < e && dq[1] == '"') {
			doubled = true;
			p = dq + 2;
			continue;
		}
		p = dq;
		break;
	}
	/* p: the closing quote */
	if (!doubled) {
		put_field(c, ls, q, s, (size_t)(p - s));
		return p + 1;
	}
	size_t room = sizeof(c->scratch) - c->scratch_used, k = 0;
	char *d = c->scratch + c->scratch_used;
	for (const char *x = s; x < p && k <= room; x++, k++) {
		if (k < room)
			d[k] = *x;
		if (*x == '"')
			x++; /* the second quote of a pair */
	}
	if (k > room) {
		/* No value of ours holds a '"': keep the field as written,
		 * quotes and all, which is refused as any value. */
		put_field(c, ls, q, q, (size_t)(p + 1 - q));
	} else {
		put_field(c, ls, q, d, k);
		c->scratch_used += k;
	}
	return p + 1;
}

int lfs_csv_next(lfs_csv *c)
{
	bool trim = c->flags & LFS_CSV_LENIENT;
	while (c->p < c->end) {
		const char *ls = c->p;
		const char *le = memchr(ls, '\n', (size_t)(c->end - ls));
		if (!le)
			le = c->end;
		c->p = le < c->end ? le + 1 : le;
		c->line++;
		const char *e = le;
		if (e > ls && e[-1] == '\r')
			e--;
		const char *q = ls;
		while (trim && q < e && blank(*q))
			q++;
		if (q == e)
			continue;
		const char *nul = memchr(ls, '\0', (size_t)(e - ls));
		if (nul) {
			lfs_fail_at(c->err, c->file, c->line, (unsigned)(nul - ls) + 1,
				    "NUL byte in text");
			return -1;
		}
		c->row_line = c->line;
		c->end_col = (uint32_t)(e - ls) + 1;
		c->nf = 0;
		c->scratch_used = 0;
		const char *fs = ls;
		for (;;) {
			const char *a = fs;
			while (trim && a < e && blank(*a))
				a++;
			const char *fe;
			if (a < e && *a == '"') {
				/* RFC 4180 quoted field */
				const char *after = quoted_field(c, ls, a, e);
				if (!after)
					return -1;
				fe = after;
				while (trim && fe < e && blank(*fe))
					fe++;
				if (fe < e && *fe != ',') {
					lfs_fail_at(c->err, c->file, c->line,
						    (unsigned)(fe - ls) + 1,
						    "text after a closing quote (a field is "
						    "quoted whole: \"...\", with \"\" for a quote "
						    "inside)");
					return -1;
				}
			} else {
				fe = memchr(fs, ',', (size_t)(e - fs));
				if (!fe)
					fe = e;
				const char *b = fe;
				while (trim && b > a && blank(b[-1]))
					b--;
				put_field(c, ls, a, a, (size_t)(b - a));
			}
			if (fe == e)
				break;
			fs = fe + 1;
		}
		return 1;
	}
	return 0;
}

uint32_t lfs_csv_col(const lfs_csv *c, size_t i)
{
	return i < c->nf && i < LFS_CSV_MAXF ? c->f[i].col : c->end_col;
}

lfs_err lfs_csv_header(lfs_csv *c, const char *header)
{
	int r = lfs_csv_next(c);
	if (r < 0)
		return LFS_ERR_PARSE;
	if (r == 0)
		return lfs_fail_at(c->err, c->file, c->line + 1, 1, "expected the header row '%s'",
				   header);
	bool nocase = c->flags & LFS_CSV_LENIENT;
	const char *h = header;
	for (size_t i = 0;; i++) {
		const char *he = strchr(h, ',');
		size_t hl = he ? (size_t)(he - h) : strlen(h);
		if (i >= c->nf || i >= LFS_CSV_MAXF)
			return lfs_fail_at(c->err, c->file, c->row_line, c->end_col,
					   "header: missing column '%.*s' (expected '%s')", (int)hl,
					   h, header);
		const lfs_csv_field *f = &c->f[i];
		if (f->len != hl || (nocase ? strncasecmp(f->s, h, hl) : memcmp(f->s, h, hl)))
			return lfs_fail_at(c->err, c->file, c->row_line, f->col,
					   "header: expected column '%.*s' (expected '%s')",
					   (int)hl, h, header);
		if (!he) {
			if (c->nf > i + 1)
				return lfs_fail_at(
					c->err, c->file, c->row_line, lfs_csv_col(c, i + 1),
					"header: unexpected extra column (expected '%s')", header);
			return LFS_OK;
		}
		h = he + 1;
	}
}

lfs_err lfs_csv_arity(lfs_csv *c, size_t want, const char *what)
{
	if (c->nf == want)
		return LFS_OK;
	uint32_t col = lfs_csv_col(c, c->nf < want ? c->nf : want);
	if (!what)
		return lfs_fail_at(c->err, c->file, c->row_line, col,
				   "expected %zu fields, found %zu", want, c->nf);
	return lfs_fail_at(c->err, c->file, c->row_line, col, "expected %zu fields (%s), found %zu",
			   want, what, c->nf);
}

lfs_err lfs_csv_f32(lfs_csv *c, size_t i, float *out)
{
	const lfs_csv_field *f = &c->f[i];
	if (f->len && lfs_parse_float_bits(f->s, f->len, out))
		return LFS_OK;
	if (lfs_float_overflows(f->s, f->len))
		return lfs_fail_at(c->err, c->file, c->row_line, f->col, "'%.*s' " LFS_FLOAT_RANGE_MSG,
				   (int)(f->len > 40 ? 40 : f->len), f->s);
	if (c->flags & LFS_CSV_MDL_MSGS)
		return lfs_fail_at(c->err, c->file, c->row_line, f->col, "'%.*s' is not a number",
				   (int)(f->len > 40 ? 40 : f->len), f->s);
	return lfs_fail_at(c->err, c->file, c->row_line, f->col, "expected a number, found '%.*s'",
			   (int)(f->len > 40 ? 40 : f->len), f->s);
}

bool lfs_csv_uint(const lfs_csv_field *f, uint64_t max, uint64_t *out)
{
	if (f->len == 0 || f->len > 15)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < f->len; i++) {
		if (f->s[i] < '0' || f->s[i] > '9')
			return false;
		x = x * 10 + (uint64_t)(f->s[i] - '0');
	}
	if (x > max)
		return false;
	*out = x;
	return true;
}

lfs_err lfs_csv_rows(lfs_csv *c, const lfs_csv_table *t, void **rows, size_t *n)
{
	*rows = NULL;
	*n = 0;
	lfs_err r = lfs_csv_header(c, t->header);
	uint8_t *a = NULL;
	size_t k = 0, cap = 0;
	while (!r) {
		int e = lfs_csv_next(c);
		if (e < 0)
			r = LFS_ERR_PARSE;
		if (e <= 0)
			break;
		if (k == t->max_rows) {
			r = lfs_fail_at(c->err, c->file, c->row_line, 1, "%s", t->too_many);
			break;
		}
		if ((r = lfs_csv_arity(c, t->ncols, t->what)))
			break;
		if (!lfs_grow((void **)&a, &cap, k + 1, t->esz)) {
			r = lfs_nomem(c->err, c->file);
			break;
		}
		memset(a + k * t->esz, 0, t->esz);
		if (!(r = t->row(c, a + k * t->esz, t->ctx)))
			k++;
	}
	if (r) {
		free(a);
		return r;
	}
	*rows = a;
	*n = k;
	return LFS_OK;
}

/* ---- writers ---------------------------------------------------------------- */

void lfs_csv_write_header(lfs_sb *sb, const char *header)
{
	lfs_sb_puts(sb, header);
	lfs_sb_puts(sb, LFS_CSV_EOL);
}

void lfs_csv_write_floats(lfs_sb *sb, const float *f, size_t n)
{
	lfs_sb_floats_bits(sb, f, n, ',');
}

void lfs_csv_write_eol(lfs_sb *sb)
{
	lfs_sb_puts(sb, LFS_CSV_EOL);
}

void lfs_csv_write_floats_plain(lfs_sb *sb, const float *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			lfs_sb_putc(sb, ',');
		lfs_sb_float(sb, f[i]);
	}
}
