/**
 * @file mdltext.c
 * Lexer and writer helpers for the MDL-style dialects (see mdltext.h).
 */
#include "mdltext.h"

#include "../common/floatfmt.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void lfs_lex_init(lfs_lex *lx, const char *file, const char *data, size_t n, lfs_error *err)
{
	memset(lx, 0, sizeof(*lx));
	lx->file = file ? file : "<input>";
	lx->p = data;
	lx->end = data + n;
	lx->err = err;
}

static int lex_line(lfs_lex *lx, lfs_line *out)
{
	while (lx->p < lx->end) {
		const char *ls = lx->p;
		const char *le = memchr(ls, '\n', (size_t)(lx->end - ls));
		if (!le)
			le = lx->end;
		lx->p = le < lx->end ? le + 1 : le;
		lx->line++;
		const char *e = le;
		if (e > ls && e[-1] == '\r')
			e--;
		const char *q = ls;
		while (q < e && (*q == ' ' || *q == '\t'))
			q++;
		if (q == e || *q == '#')
			continue;
		out->line = lx->line;
		out->ntok = 0;
		out->end_col = (uint32_t)(e - ls) + 1;
		while (q < e) {
			if (*q == ' ' || *q == '\t') {
				q++;
				continue;
			}
			if (*q == '\0')
				return lfs_fail_at(lx->err, lx->file, lx->line, (unsigned)(q - ls) + 1,
						   "NUL byte in text"),
				       -1;
			if (out->ntok == LFS_LEX_MAXTOK)
				return lfs_fail_at(lx->err, lx->file, lx->line, (unsigned)(q - ls) + 1,
						   "more than %d values on one line", LFS_LEX_MAXTOK),
				       -1;
			lfs_tok *t = &out->tok[out->ntok++];
			t->s = q;
			t->col = (uint32_t)(q - ls) + 1;
			if (*q == '"') {
				q++;
				while (q < e && *q != '"') {
					if (*q == '\\' && q + 1 < e)
						q++;
					q++;
				}
				if (q >= e)
					return lfs_fail_at(lx->err, lx->file, lx->line, t->col,
							   "unterminated quoted name"),
					       -1;
				q++;
			} else {
				while (q < e && *q != ' ' && *q != '\t' && *q != '\0')
					q++;
			}
			t->len = (uint32_t)(q - t->s);
		}
		return 1;
	}
	return 0;
}

int lfs_lex_next(lfs_lex *lx, lfs_line *out)
{
	if (lx->have_peek) {
		lx->have_peek = false;
		*out = lx->peek;
		return 1;
	}
	return lex_line(lx, out);
}

int lfs_lex_peek(lfs_lex *lx, lfs_line *out)
{
	if (!lx->have_peek) {
		int r = lex_line(lx, &lx->peek);
		if (r != 1)
			return r;
		lx->have_peek = true;
	}
	*out = lx->peek;
	return 1;
}

bool lfs_tok_is(const lfs_tok *t, const char *kw)
{
	size_t n = strlen(kw);
	return t->len == n && !strncasecmp(t->s, kw, n);
}

lfs_err lfs_lex_fail(lfs_lex *lx, const lfs_line *ln, uint32_t i, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	uint32_t col = i < ln->ntok ? ln->tok[i].col : ln->end_col;
	return lfs_fail_at(lx->err, lx->file, ln->line, col, "%s", msg);
}

static void tok_text(const lfs_tok *t, char *buf, size_t sz)
{
	size_t n = t->len < sz - 1 ? t->len : sz - 1;
	memcpy(buf, t->s, n);
	buf[n] = '\0';
}

lfs_err lfs_lex_arity(lfs_lex *lx, const lfs_line *ln, uint32_t want, const char *what)
{
	if (ln->ntok == want + 1)
		return LFS_OK;
	char kw[64];
	tok_text(&ln->tok[0], kw, sizeof(kw));
	return lfs_lex_fail(lx, ln, ln->ntok < want + 1 ? ln->ntok : want + 1,
			    "expected %u %s after '%s', found %u", want, what, kw, ln->ntok - 1);
}

lfs_err lfs_lex_f32(lfs_lex *lx, const lfs_line *ln, uint32_t i, float *out)
{
	if (i >= ln->ntok)
		return lfs_lex_fail(lx, ln, i, "expected a number");
	const lfs_tok *t = &ln->tok[i];
	if (t->len == 12 && !strncmp(t->s, "nan:", 4)) {
		uint32_t u;
		if (!lfs_parse_nan_bits(t->s, t->len, &u))
			return lfs_lex_fail(lx, ln, i, "bad NaN bits (expected nan:XXXXXXXX)");
		memcpy(out, &u, 4);
		if (!isnan(*out))
			return lfs_lex_fail(lx, ln, i, "nan:%08x is not a NaN", (unsigned)u);
		return LFS_OK;
	}
	char v[48];
	tok_text(t, v, sizeof(v));
	if (lfs_parse_float(t->s, t->len, out))
		return LFS_OK;
	/* a number too large for a float32 would be stored as infinity and
	 * read back as "inf": refused (write inf to mean infinity) */
	if (lfs_float_overflows(t->s, t->len))
		return lfs_lex_fail(lx, ln, i, "'%s' " LFS_FLOAT_RANGE_MSG, v);
	return lfs_lex_fail(lx, ln, i, "expected a number, found '%s'", v);
}

lfs_err lfs_lex_int(lfs_lex *lx, const lfs_line *ln, uint32_t i, int64_t min, int64_t max,
		    int64_t *out)
{
	if (i >= ln->ntok)
		return lfs_lex_fail(lx, ln, i, "expected an integer");
	const lfs_tok *t = &ln->tok[i];
	char v[48];
	tok_text(t, v, sizeof(v));
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (t->len == 0 || t->len >= sizeof(v) || *end || errno || (v[0] != '-' && (v[0] < '0' || v[0] > '9')))
		return lfs_lex_fail(lx, ln, i, "expected an integer, found '%s'", v);
	if (x < min || x > max)
		return lfs_lex_fail(lx, ln, i, "%s is out of range %lld..%lld", v, (long long)min,
				    (long long)max);
	*out = x;
	return LFS_OK;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

lfs_err lfs_lex_hex(lfs_lex *lx, const lfs_line *ln, uint32_t i, uint8_t *out, size_t n)
{
	if (i >= ln->ntok)
		return lfs_lex_fail(lx, ln, i, "expected %zu bytes of hex", n);
	const lfs_tok *t = &ln->tok[i];
	if (t->len != 2 * n)
		return lfs_lex_fail(lx, ln, i, "expected %zu hex digits, found %u", 2 * n, t->len);
	for (size_t k = 0; k < n; k++) {
		int a = hexval(t->s[2 * k]), b = hexval(t->s[2 * k + 1]);
		if (a < 0 || b < 0)
			return lfs_lex_fail(lx, ln, i, "'%c%c' is not a hex byte", t->s[2 * k], t->s[2 * k + 1]);
		out[k] = (uint8_t)(a << 4 | b);
	}
	return LFS_OK;
}

lfs_err lfs_lex_str(lfs_lex *lx, const lfs_line *ln, uint32_t i, char *out, size_t outsz,
		    size_t *len)
{
	if (i >= ln->ntok)
		return lfs_lex_fail(lx, ln, i, "expected a name");
	const lfs_tok *t = &ln->tok[i];
	size_t o = 0;
	const char *p = t->s, *e = t->s + t->len;
	bool quoted = t->len >= 2 && *p == '"';
	if (quoted) {
		p++;
		e--;
	}
	while (p < e) {
		int c = (unsigned char)*p++;
		if (quoted && c == '\\' && p < e) {
			c = (unsigned char)*p++;
			if (c == 'x') {
				int a = e - p >= 2 ? hexval(p[0]) : -1;
				int b = e - p >= 2 ? hexval(p[1]) : -1;
				if (a < 0 || b < 0)
					return lfs_lex_fail(lx, ln, i, "bad \\x escape in name");
				c = a << 4 | b;
				p += 2;
			} else if (c != '\\' && c != '"')
				return lfs_lex_fail(lx, ln, i, "unknown escape '\\%c' in name", c);
		}
		if (o + 1 >= outsz)
			return lfs_lex_fail(lx, ln, i, "name longer than %zu bytes", outsz - 1);
		out[o++] = (char)c;
	}
	out[o] = '\0';
	if (len)
		*len = o;
	return LFS_OK;
}

static bool bare_ok(const char *s, size_t n)
{
	if (n == 0 || s[0] == '#' || s[0] == '"')
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= ' ' || c >= 0x7F || c == '"' || c == '\\')
			return false;
	}
	return true;
}

void lfs_sb_name(lfs_sb *sb, const char *s, size_t n)
{
	if (bare_ok(s, n)) {
		lfs_sb_put(sb, s, n);
		return;
	}
	lfs_sb_putc(sb, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			lfs_sb_putc(sb, '\\');
			lfs_sb_putc(sb, (char)c);
		} else if (c < ' ' || c >= 0x7F) {
			lfs_sb_printf(sb, "\\x%02x", c);
		} else {
			lfs_sb_putc(sb, (char)c);
		}
	}
	lfs_sb_putc(sb, '"');
}

void lfs_sb_hex(lfs_sb *sb, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		char two[2] = { digits[p[i] >> 4], digits[p[i] & 15] };
		lfs_sb_put(sb, two, 2);
	}
}
