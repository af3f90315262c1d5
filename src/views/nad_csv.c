/**
 * @file nad_csv.c
 * Track and tag CSVs of a NAD file, writers and parsers (see nad_views.h,
 * docs/formats/nad.md).
 *
 * Written as RFC 4180 CSV without quoting (every field is a number or a
 * fixed word): a header row, one row per key/tag, CRLF record ends. The
 * parsers also accept LF ends, blank lines, spaces or tabs around fields,
 * and a leading UTF-8 byte order mark.
 */
#include "../common/floatfmt.h"
#include "nad_views.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char nad_csv_track_header[] =
	"frame,frame_scale,x,y,z,c_x,c_y,c_z,b_x,b_y,b_z,a_x,a_y,a_z";

static const char tags_header[] = "frame,tag";

lfs_err nad_csv_track_write(const nad_track *t, lfs_sb *sb, lfs_error *err)
{
	lfs_sb_puts(sb, nad_csv_track_header);
	lfs_sb_puts(sb, "\r\n");
	for (uint32_t k = 0; k < t->n_keys; k++) {
		for (unsigned i = 0; i < NAD_KEY_FLOATS; i++) {
			if (i)
				lfs_sb_putc(sb, ',');
			lfs_sb_float_bits(sb, t->keys[k].v[i]);
		}
		lfs_sb_puts(sb, "\r\n");
	}
	if (!lfs_sb_ok(sb))
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "track csv", "out of memory");
	return LFS_OK;
}

lfs_err nad_csv_tags_write(const nad_model *m, lfs_sb *sb, lfs_error *err)
{
	lfs_sb_puts(sb, tags_header);
	lfs_sb_puts(sb, "\r\n");
	for (uint32_t i = 0; i < m->n_tags; i++) {
		lfs_sb_float_bits(sb, m->tags[i].frame);
		const char *name = nad_tag_name(m->tags[i].type);
		if (name)
			lfs_sb_printf(sb, ",%s\r\n", name);
		else
			lfs_sb_printf(sb, ",%" PRIu32 "\r\n", m->tags[i].type);
	}
	if (!lfs_sb_ok(sb))
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "tags.csv", "out of memory");
	return LFS_OK;
}

/* ---- reader ----------------------------------------------------------------- */

#define CSV_MAXF 16

typedef struct csv_field {
	const char *s;
	size_t len;
	unsigned col;
} csv_field;

typedef struct csv {
	const char *file;
	const char *p, *end;
	unsigned line;
	lfs_error *err;
	/* current row */
	unsigned row_line, end_col;
	size_t nf;          /* fields found (may exceed CSV_MAXF: only counted) */
	csv_field f[CSV_MAXF];
} csv;

/* Next non-blank row. 1 = row, 0 = end of text, -1 = error. */
static int csv_next(csv *c)
{
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
		while (q < e && (*q == ' ' || *q == '\t'))
			q++;
		if (q == e)
			continue;
		if (memchr(ls, '\0', (size_t)(e - ls))) {
			lfs_fail_at(c->err, c->file, c->line,
				    (unsigned)((const char *)memchr(ls, '\0', (size_t)(e - ls)) - ls) + 1,
				    "NUL byte in text");
			return -1;
		}
		c->row_line = c->line;
		c->end_col = (unsigned)(e - ls) + 1;
		c->nf = 0;
		const char *fs = ls;
		for (;;) {
			const char *fe = memchr(fs, ',', (size_t)(e - fs));
			if (!fe)
				fe = e;
			const char *a = fs, *b = fe;
			while (a < b && (*a == ' ' || *a == '\t'))
				a++;
			while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
				b--;
			if (c->nf < CSV_MAXF) {
				c->f[c->nf].s = a;
				c->f[c->nf].len = (size_t)(b - a);
				c->f[c->nf].col = (unsigned)(a - ls) + 1;
			}
			c->nf++;
			if (fe == e)
				break;
			fs = fe + 1;
		}
		return 1;
	}
	return 0;
}

static unsigned field_col(const csv *c, size_t i)
{
	return i < c->nf && i < CSV_MAXF ? c->f[i].col : c->end_col;
}

static lfs_err check_header(csv *c, const char *header)
{
	int r = csv_next(c);
	if (r < 0)
		return LFS_ERR_PARSE;
	if (r == 0)
		return lfs_fail_at(c->err, c->file, c->line + 1, 1, "expected the header row '%s'",
				   header);
	const char *h = header;
	for (size_t i = 0;; i++) {
		const char *he = strchr(h, ',');
		size_t hl = he ? (size_t)(he - h) : strlen(h);
		if (i >= c->nf || i >= CSV_MAXF)
			return lfs_fail_at(c->err, c->file, c->row_line, c->end_col,
					   "header: missing column '%.*s' (expected '%s')", (int)hl, h,
					   header);
		if (c->f[i].len != hl || strncasecmp(c->f[i].s, h, hl))
			return lfs_fail_at(c->err, c->file, c->row_line, c->f[i].col,
					   "header: expected column '%.*s' (expected '%s')", (int)hl, h,
					   header);
		if (!he) {
			if (c->nf > i + 1)
				return lfs_fail_at(c->err, c->file, c->row_line, field_col(c, i + 1),
						   "header: unexpected extra column (expected '%s')",
						   header);
			return LFS_OK;
		}
		h = he + 1;
	}
}

static lfs_err field_f32(csv *c, size_t i, float *out)
{
	const csv_field *f = &c->f[i];
	if (f->len && lfs_parse_float_bits(f->s, f->len, out))
		return LFS_OK;
	return lfs_fail_at(c->err, c->file, c->row_line, f->col, "expected a number, found '%.*s'",
			   (int)(f->len > 40 ? 40 : f->len), f->s);
}

static lfs_err row_arity(csv *c, size_t want, const char *what)
{
	if (c->nf == want)
		return LFS_OK;
	return lfs_fail_at(c->err, c->file, c->row_line, field_col(c, c->nf < want ? c->nf : want),
			   "expected %zu fields (%s), found %zu", want, what, c->nf);
}

static bool grow(void **arr, uint32_t *cap, uint32_t i, size_t elem)
{
	if (i < *cap)
		return true;
	uint64_t nc = *cap ? (uint64_t)*cap * 2 : 16;
	if (nc > UINT32_MAX)
		nc = UINT32_MAX;
	if (nc * elem > SIZE_MAX)
		return false;
	void *n = realloc(*arr, (size_t)(nc * elem));
	if (!n)
		return false;
	*arr = n;
	*cap = (uint32_t)nc;
	return true;
}

static void csv_init(csv *c, const char *file, const char *text, size_t n, lfs_error *err)
{
	memset(c, 0, sizeof(*c));
	c->file = file ? file : "<input>";
	c->p = text ? text : "";
	c->end = c->p + (text ? n : 0);
	c->err = err;
	/* A UTF-8 byte order mark (spreadsheets add one) is skipped; columns
	 * of the first line count from after it. */
	if (c->end - c->p >= 3 && !memcmp(c->p, "\xEF\xBB\xBF", 3))
		c->p += 3;
}

lfs_err nad_csv_track_parse(const char *file, const char *text, size_t n, nad_key **keys,
			    uint32_t *n_keys, lfs_error *err)
{
	*keys = NULL;
	*n_keys = 0;
	csv c;
	csv_init(&c, file, text, n, err);
	lfs_err r = check_header(&c, nad_csv_track_header);
	nad_key *k = NULL;
	uint32_t nk = 0, cap = 0;
	while (!r) {
		int e = csv_next(&c);
		if (e < 0)
			r = LFS_ERR_PARSE;
		if (e <= 0)
			break;
		if (nk == UINT32_MAX) {
			r = lfs_fail_at(err, c.file, c.row_line, 1, "too many keys");
			break;
		}
		if ((r = row_arity(&c, NAD_KEY_FLOATS, "a key")))
			break;
		if (!grow((void **)&k, &cap, nk, sizeof(*k))) {
			r = lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, c.file, "out of memory");
			break;
		}
		for (unsigned i = 0; i < NAD_KEY_FLOATS && !r; i++)
			r = field_f32(&c, i, &k[nk].v[i]);
		if (!r)
			nk++;
	}
	if (r) {
		free(k);
		return r;
	}
	*keys = k;
	*n_keys = nk;
	return LFS_OK;
}

lfs_err nad_csv_tags_parse(const char *file, const char *text, size_t n, nad_tag **tags,
			   uint32_t *n_tags, lfs_error *err)
{
	*tags = NULL;
	*n_tags = 0;
	csv c;
	csv_init(&c, file, text, n, err);
	lfs_err r = check_header(&c, tags_header);
	nad_tag *t = NULL;
	uint32_t nt = 0, cap = 0;
	while (!r) {
		int e = csv_next(&c);
		if (e < 0)
			r = LFS_ERR_PARSE;
		if (e <= 0)
			break;
		if (nt == UINT32_MAX) {
			r = lfs_fail_at(err, c.file, c.row_line, 1, "too many tags");
			break;
		}
		if ((r = row_arity(&c, 2, "frame,tag")))
			break;
		if (!grow((void **)&t, &cap, nt, sizeof(*t))) {
			r = lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, c.file, "out of memory");
			break;
		}
		if ((r = field_f32(&c, 0, &t[nt].frame)))
			break;
		const csv_field *f = &c.f[1];
		int v = nad_tag_from_name(f->s, f->len);
		if (v >= 0) {
			t[nt].type = (uint32_t)v;
		} else {
			char buf[16];
			char *end = NULL;
			unsigned long long x = 0;
			bool ok = f->len > 0 && f->len < sizeof(buf) && f->s[0] >= '0' && f->s[0] <= '9';
			if (ok) {
				memcpy(buf, f->s, f->len);
				buf[f->len] = '\0';
				errno = 0;
				x = strtoull(buf, &end, 10);
				ok = !*end && !errno && x <= UINT32_MAX;
			}
			if (!ok) {
				r = lfs_fail_at(err, c.file, c.row_line, f->col,
						"unknown tag '%.*s' (a name lwalk .. throwdeath or a number)",
						(int)(f->len > 40 ? 40 : f->len), f->s);
				break;
			}
			t[nt].type = (uint32_t)x;
		}
		nt++;
	}
	if (r) {
		free(t);
		return r;
	}
	*tags = t;
	*n_tags = nt;
	return LFS_OK;
}
