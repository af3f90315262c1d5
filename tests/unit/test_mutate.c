/**
 * @file test_mutate.c
 * The round-trip law under seeded single-edit mutations of real texts
 * (docs/roundtrip.md, docs/editing.md "The round-trip law").
 *
 * For every format with writable views (nwn-mdl, nod, nad, sod; nil has no
 * writable view and no public file), the corpus models are taken in a
 * seeded order; for each, writable views of each kind (the MDL-style text,
 * OBJ, CSV) are mutated by one edit: a misspelt keyword, a misspelt node
 * type (the word after a block keyword: `node trimesh`, `track rotation`),
 * a deleted, duplicated or swapped (with the next) line, a number replaced
 * by junk, a truncation at a random byte, a stray byte inserted; and edits
 * the law must let through: a keyword in another letter case, blanks, a
 * number respelt as "%.9g" of its float32. The edited
 * text goes through lfs_view_apply() (the checked path the mount and
 * `legacyfs-convert apply` use). Each kind has its expected verdict in a
 * table (m_expect, expect_of()): must refuse, must accept leaving the bytes
 * as they were, must accept, or either. Every outcome must be one of
 *  - a refusal (where the table allows one): no output bytes, a message,
 *    and for LFS_ERR_PARSE one in the
 *    form `file:line:col: error: ...`; counted as refused by the format's
 *    parser (the format's apply alone refuses it) or by the law check;
 *  - an accepted save (where the table allows one) for which an independent
 *    re-check holds: the output
 *    decodes, the same view of it reads back as the saved text by this
 *    test's own judge (judge(): its own tokenizer, float32 values at most
 *    one step apart, not lfs_law_compare()), and re-applying that re-read
 *    view to the output is
 *    a no-op (the very same bytes); counted as no-op (output = input) or
 *    changed.
 * Anything else is a VIOLATION and fails the test; the table of counts per
 * format and mutation kind is printed to stdout (and to $LFS_MUTATE_REPORT
 * when set, as the markdown table of docs/roundtrip.md).
 *
 * LFS_MUTATE_N: mutations per format (default 600: the `meson test` subset);
 * the full run is `LFS_MUTATE_N=10000 build/tests/unit/test_mutate`.
 * LFS_TEST_SEED replays a run; LFS_MUTATE_VERBOSE=1 prints every refusal. Corpus: ../shared/corpus (exit 77 when absent).
 */
#define _GNU_SOURCE /* nftw */
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "conform.h"
#include "corpus.h"
#include "testrng.h"
#include "registry/format.h"
#include "law/law.h"
#include "registry/viewset.h"

enum { M_KEYWORD, M_NODETYPE, M_DELETE, M_DUP, M_SWAP, M_JUNK, M_TRUNC, M_STRAY, M_CASE,
       M_BLANK, M_RESPELL, M_KINDS };
static const char *const m_name[M_KINDS] = { "misspelt keyword", "misspelt node type",
					     "deleted line",	 "duplicated line",
					     "swapped lines",	 "number -> junk",
					     "truncation",	 "stray byte",
					     "keyword case",	 "blanks",
					     "number respelt" };

/*
 * The verdict each mutation kind must get (docs/editing.md "The round-trip
 * law", docs/formats/obj-csv.md "Reading CSV"), written here, not asked of
 * the law (expect_of()):
 *  - X_REFUSE: a misspelt keyword is no statement of the view (the parsers
 *    or the law refuse it): NWN model.mdl (its lines start with a keyword
 *    or a number), OBJ, CSV. In NOD, NAD and SOD texts the first word of a
 *    list row is a name (`meshes 2` / `  Candle`): X_EITHER there;
 *  - X_NOOP: accepted, and the model bytes stay as they were: the letter
 *    case of a keyword ("the parsers take keywords in any case"; not OBJ,
 *    whose keywords are lower case, nor SOD CSV headers), blanks (a tab or
 *    spaces before a line's first token or after its last one, CR before
 *    LF, a blank line; SOD CSV: no blanks around fields), a number respelt
 *    as "%.9g" of the float32 it reads as, in text and CSV views;
 *  - X_ACCEPT: accepted, bytes may change: the respelt number in an OBJ
 *    (a text not in the views' own shortest printing is read at its
 *    writer's precision, docs/formats/obj-csv.md "Saving OBJ from other
 *    programs");
 *  - X_EITHER: the edit may mean something the format keeps (a deleted
 *    default, swapped order-free statements, junk that is a number, a
 *    renamed material, ...): a refusal must be well-formed, an accepted
 *    save must pass the independent judge below.
 * Every accepted save, whatever its kind, must pass the judge.
 */
enum { X_REFUSE, X_NOOP, X_ACCEPT, X_EITHER };
static const int m_expect[M_KINDS] = {
	[M_KEYWORD] = X_REFUSE, [M_NODETYPE] = X_EITHER, [M_DELETE] = X_EITHER,
	[M_DUP] = X_EITHER,	[M_SWAP] = X_EITHER,	 [M_JUNK] = X_EITHER,
	[M_TRUNC] = X_EITHER,	[M_STRAY] = X_EITHER,	 [M_CASE] = X_NOOP,
	[M_BLANK] = X_NOOP,	[M_RESPELL] = X_NOOP,
};

static int expect_of(const lfs_format *f, lfs_view_kind k, int mk)
{
	bool text = k == LFS_VIEW_TEXT;
	bool obj = k == LFS_VIEW_MODEL_OBJ || k == LFS_VIEW_MESH_OBJ;
	if (mk == M_KEYWORD && text && strcmp(f->name, "nwn-mdl") != 0)
		return X_EITHER;
	if (mk == M_RESPELL && obj)
		return X_ACCEPT;
	return m_expect[mk];
}
/* outcomes: refused by the parser, refused by the law check, accepted
 * no-op, accepted with changed bytes, violation */
enum { O_PARSE, O_LAW, O_NOOP, O_CHANGED, O_VIOL, O_KINDS };
enum { V_TEXT, V_OBJ, V_CSV, V_KINDS };
static const char *const v_name[V_KINDS] = { "text", "OBJ", "CSV" };

typedef struct cfile {
	char *path;
	const lfs_format *f;
} cfile;

static cfile *g_files;
static size_t g_n, g_cap;

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type != FTW_F)
		return 0;
	size_t n = 0;
	uint8_t *d = lfs_read_file(path, &n);
	if (!d)
		return 0;
	const lfs_format *f = lfs_format_for(lfs_base_name(path), d, n);
	free(d);
	if (!f || !f->apply)
		return 0;
	if (g_n == g_cap) {
		g_cap = g_cap ? g_cap * 2 : 256;
		g_files = realloc(g_files, g_cap * sizeof(*g_files));
		assert_non_null(g_files);
	}
	g_files[g_n].path = strdup(path);
	g_files[g_n].f = f;
	g_n++;
	return 0;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const cfile *)a)->path, ((const cfile *)b)->path);
}

/* ---- mutations ------------------------------------------------------------- */

typedef struct text {
	char *s;
	size_t n;
} text;

/* Line starts of @p s: offsets of each line's first byte, plus n at the end. */
static size_t *line_starts(const char *s, size_t n, size_t *nl)
{
	size_t cap = 64, k = 0;
	size_t *a = malloc(cap * sizeof(*a));
	assert_non_null(a);
	a[k++] = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\n' && i + 1 < n) {
			if (k + 1 >= cap) {
				cap *= 2;
				a = realloc(a, cap * sizeof(*a));
				assert_non_null(a);
			}
			a[k++] = i + 1;
		}
	a[k] = n;
	*nl = k;
	return a;
}

static text splice(const char *s, size_t n, size_t at, size_t del, const char *ins, size_t insn)
{
	text t;
	t.n = n - del + insn;
	t.s = malloc(t.n + 1);
	assert_non_null(t.s);
	memcpy(t.s, s, at);
	memcpy(t.s + at, ins, insn);
	memcpy(t.s + at + insn, s + at + del, n - at - del);
	t.s[t.n] = '\0';
	return t;
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_num_start(char c)
{
	return (c >= '0' && c <= '9') || c == '-' || c == '.';
}

/* Token @p k (0-based) of the line [a, b): its offset and length; false if none. */
static bool line_tok(const char *s, size_t a, size_t b, unsigned k, char sep, size_t *off,
		     size_t *len)
{
	size_t i = a;
	for (unsigned t = 0;; t++) {
		while (i < b && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || (sep == ',' && s[i] == ',')))
			i++;
		if (i >= b || s[i] == '\n')
			return false;
		size_t st = i;
		while (i < b && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n' &&
		       s[i] != sep)
			i++;
		if (t == k) {
			*off = st;
			*len = i - st;
			return true;
		}
	}
}

/* Misspell the word at [off, off+len): swap, replace, drop or double a letter. */
static text misspell(lfs_rng *r, const char *s, size_t n, size_t off, size_t len)
{
	char w[128];
	if (len == 0 || len >= sizeof(w) - 2)
		return splice(s, n, off, 0, "x", 1);
	memcpy(w, s + off, len);
	size_t wl = len, p = lfs_rng_u32(r) % len;
	switch (lfs_rng_u32(r) % 4) {
	case 0:
		if (len > 1) {
			if (p + 1 >= len)
				p--;
			char c = w[p];
			w[p] = w[p + 1];
			w[p + 1] = c;
			if (w[p] == w[p + 1])
				w[p] = (char)('a' + (w[p] - 'a' + 1) % 26);
			break;
		}
		/* fall through */
	case 1:
		w[p] = (char)(w[p] == 'q' ? 'z' : 'q');
		break;
	case 2:
		if (len > 1) {
			memmove(w + p, w + p + 1, len - p - 1);
			wl--;
			break;
		}
		/* fall through */
	default:
		memmove(w + p + 1, w + p, len - p);
		wl++;
		break;
	}
	return splice(s, n, off, len, w, wl);
}

static const char *const junk[] = { "x",     "1.2.3", "--1", "0x",  "12abc", "1,5",  "#",
				    "\"",    "nan:zz", "1e",  "+",   "..",    "1e99999", "-",
				    "9999999999999999999999" };
static const char stray[] = { '\0', '#', '"', ',', '\n', ' ', 'x', '7', (char)0xff, '\t',
			      '/',  '-', '.', 'e', '\r' };

static const char *const block_words[] = { "node", "track", "newanim", "channel", "o",
					   "g",    "usemtl", NULL };

/*
 * One mutation of kind @p kind of @p s (@p n bytes; CSV when @p sep is ',').
 * Returns false when the text offers nothing for that kind (no number, ...).
 * *line gets the 1-based line the edit is on (for messages).
 */
static bool mutate(lfs_rng *r, int kind, const char *s, size_t n, char sep, bool is_obj,
		   bool csv_strict, text *out, size_t *line)
{
	size_t nl = 0;
	size_t *ls = line_starts(s, n, &nl);
	bool ok = false;
	*line = 0;
	if (n == 0) {
		free(ls);
		return false;
	}
	switch (kind) {
	case M_KEYWORD:
	case M_NODETYPE:
		/* up to 64 tries for a line with a fitting word */
		for (int t = 0; t < 64 && !ok; t++) {
			size_t l = lfs_rng_u32(r) % nl, off, len;
			if (kind == M_KEYWORD) {
				if (!line_tok(s, ls[l], ls[l + 1], 0, sep, &off, &len) ||
				    !is_alpha(s[off]))
					continue;
			} else {
				size_t o0, l0;
				if (!line_tok(s, ls[l], ls[l + 1], 0, sep, &o0, &l0))
					continue;
				bool blk = false;
				for (const char *const *b = block_words; *b && !blk; b++)
					blk = l0 == strlen(*b) && memcmp(s + o0, *b, l0) == 0;
				if (!blk || !line_tok(s, ls[l], ls[l + 1], 1, sep, &off, &len) ||
				    !is_alpha(s[off]))
					continue;
			}
			*out = misspell(r, s, n, off, len);
			*line = l + 1;
			ok = true;
		}
		break;
	case M_DELETE: {
		size_t l = lfs_rng_u32(r) % nl;
		*out = splice(s, n, ls[l], ls[l + 1] - ls[l], "", 0);
		*line = l + 1;
		ok = true;
		break;
	}
	case M_DUP: {
		size_t l = lfs_rng_u32(r) % nl;
		size_t ll = ls[l + 1] - ls[l];
		if (ll == 0 || s[ls[l] + ll - 1] != '\n')
			break;
		*out = splice(s, n, ls[l], 0, s + ls[l], ll);
		*line = l + 1;
		ok = true;
		break;
	}
	case M_SWAP: {
		if (nl < 2)
			break;
		size_t l = lfs_rng_u32(r) % (nl - 1);
		size_t a = ls[l], b = ls[l + 1], c = ls[l + 2];
		if (c == n && (n == 0 || s[n - 1] != '\n'))
			break;
		char *buf = malloc(c - a);
		assert_non_null(buf);
		memcpy(buf, s + b, c - b);
		memcpy(buf + (c - b), s + a, b - a);
		*out = splice(s, n, a, c - a, buf, c - a);
		free(buf);
		*line = l + 1;
		ok = true;
		break;
	}
	case M_JUNK:
		for (int t = 0; t < 64 && !ok; t++) {
			size_t l = lfs_rng_u32(r) % nl, off, len;
			unsigned k = lfs_rng_u32(r) % 4;
			if (!line_tok(s, ls[l], ls[l + 1], k, sep, &off, &len) ||
			    !is_num_start(s[off]) || s[ls[l]] == '#')
				continue;
			const char *j = junk[lfs_rng_u32(r) % (sizeof(junk) / sizeof(junk[0]))];
			*out = splice(s, n, off, len, j, strlen(j));
			*line = l + 1;
			ok = true;
		}
		break;
	case M_TRUNC: {
		size_t at = lfs_rng_u64(r) % n;
		*out = splice(s, n, at, n - at, "", 0);
		for (size_t l = 0; l < nl; l++)
			if (ls[l] <= at)
				*line = l + 1;
		ok = true;
		break;
	}
	case M_STRAY: {
		size_t at = lfs_rng_u64(r) % (n + 1);
		char c = stray[lfs_rng_u32(r) % sizeof(stray)];
		*out = splice(s, n, at, 0, &c, 1);
		for (size_t l = 0; l < nl; l++)
			if (ls[l] <= at)
				*line = l + 1;
		ok = true;
		break;
	}
	case M_CASE:
		/* the letters of a line's keyword in another case (not OBJ,
		 * whose keywords are lower case by the format) */
		for (int t = 0; t < 64 && !ok && !is_obj && !csv_strict; t++) {
			size_t l = lfs_rng_u32(r) % nl, off, len;
			if (!line_tok(s, ls[l], ls[l + 1], 0, sep, &off, &len) || !is_alpha(s[off]))
				continue;
			*out = splice(s, n, 0, 0, "", 0);
			unsigned how = lfs_rng_u32(r) % 3;
			for (size_t i = off; i < off + len; i++) {
				char c = out->s[i];
				bool up = how == 0 || (how == 2 && i == off);
				if (up && c >= 'a' && c <= 'z')
					out->s[i] = (char)(c - 32);
				else if (!up && c >= 'A' && c <= 'Z')
					out->s[i] = (char)(c + 32);
			}
			*line = l + 1;
			ok = true;
		}
		break;
	case M_BLANK: {
		size_t l = lfs_rng_u32(r) % nl, e = ls[l + 1];
		if (e == ls[l] || s[e - 1] != '\n')
			break;
		static const char *const ins[] = { "\t", "  ", "\r", "\n" };
		unsigned how = csv_strict ? 2 + lfs_rng_u32(r) % 2 : lfs_rng_u32(r) % 4;
		/* before the first byte, before the line end */
		size_t at = how == 0 ? ls[l] : e - 1;
		if (how == 2 && e - 1 > ls[l] && s[e - 2] == '\r')
			at = e - 2; /* already CRLF: a blank before it */
		*out = splice(s, n, at, 0, how == 2 && at == e - 2 ? " " : ins[how], 1 + (how == 1));
		*line = l + 1;
		ok = true;
		break;
	}
	case M_RESPELL:
		for (int t = 0; t < 64 && !ok; t++) {
			size_t l = lfs_rng_u32(r) % nl, off, len;
			unsigned k = lfs_rng_u32(r) % 5;
			char b[64], *e = NULL;
			if (!line_tok(s, ls[l], ls[l + 1], k, sep, &off, &len) || len >= sizeof(b) ||
			    s[ls[l]] == '#')
				continue;
			memcpy(b, s + off, len);
			b[len] = '\0';
			if (!strpbrk(b, ".eE") || !is_num_start(b[0]))
				continue;
			float v = strtof(b, &e);
			if (e != b + len || !isfinite(v))
				continue;
			char nb[64];
			snprintf(nb, sizeof(nb), "%.9g", (double)v);
			*out = splice(s, n, off, len, nb, strlen(nb));
			*line = l + 1;
			ok = true;
		}
		break;
	default:
		break;
	}
	free(ls);
	return ok;
}

/* ---- outcomes -------------------------------------------------------------- */

static bool gcc_form(const char *m)
{
	/* file:line:col: error: */
	const char *p = strstr(m, ": error: ");
	if (!p || p == m)
		return false;
	const char *q = p; /* back over :col and :line */
	for (int part = 0; part < 2; part++) {
		const char *d = q;
		while (d > m && d[-1] >= '0' && d[-1] <= '9')
			d--;
		if (d == q || d == m || d[-1] != ':')
			return false;
		q = d - 1;
	}
	return q > m;
}

static size_t g_count[8][V_KINDS][M_KINDS][O_KINDS];
static size_t g_viol;

static void violation(const cfile *cf, const lfs_view *v, int kind, size_t line, const char *why,
		      const char *msg)
{
	g_viol++;
	if (g_viol <= 40)
		fprintf(stderr, "VIOLATION %s %s [%s] (%s, edit at line %zu): %s%s%s\n", cf->f->name,
			cf->path, v->path, m_name[kind], line, why, msg ? ": " : "", msg ? msg : "");
}

/*
 * LFS_MUTATE_KEEP_DIR=DIR: every accepted save that changed an NWN model is
 * written to DIR as <n>_<base name>, for the independent reader
 * (tests/integration/peer_mutate.sh feeds DIR to test_peer_read through
 * LFS_PEER_READ_DIR: nwnmdlcomp must decompile each to our own text).
 */
static void keep_accepted(const cfile *cf, const uint8_t *out, size_t on)
{
	static unsigned kept;
	const char *dir = getenv("LFS_MUTATE_KEEP_DIR");
	if (!dir || !*dir || strcmp(cf->f->name, "nwn-mdl"))
		return;
	char path[4096];
	snprintf(path, sizeof(path), "%s/%05u_%s", dir, ++kept, lfs_base_name(cf->path));
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(out, 1, on, fp), on);
	assert_int_equal(fclose(fp), 0);
}

static int vkind(lfs_view_kind k);

/* ---- the independent judge of accepted saves -------------------------------
 *
 * Not lfs_law_compare(): a reader of its own, from docs/editing.md "The
 * round-trip law". Lines of tokens (CSV: comma-separated fields, blanks
 * around them and quotes dropped), blank lines and '#' lines (not in CSV)
 * dropped. Two tokens are the same when both read with strtof() as float32
 * values at most one float32 step apart (NaNs alike, infinities by sign),
 * else as words ignoring ASCII case and quotes. NWN `orientation*` rows end
 * in an axis-angle compared as a rotation (quaternion components within
 * 2e-5, either sign). Order: NWN model.mdl and SOD model.txt compare each
 * block (node, newanim; SOD node, material, group, channel, reference) as a
 * multiset of statement groups (a keyword line and the number rows after
 * it), a read-back group without a partner must be a documented NWN default
 * (listed below by hand); everything else compares line by line in order.
 * SOD CSV `time` columns are derived (not compared). OBJ: faces in order as
 * fans of triangles, each corner by its position and uv values (same rule);
 * normals by direction within 0.01 rad or reversed, on faces whose saved
 * positions are the original view's only (the apply re-derives the others).
 */
typedef struct jtok {
	const char *s;
	uint32_t len;
} jtok;
typedef struct jline {
	uint32_t t0, nt, no;
} jline;
typedef struct jtext {
	jtok *t;
	jline *l;
	size_t nt, nl;
} jtext;

static void jt_free(jtext *x)
{
	free(x->t);
	free(x->l);
}

static bool jblank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static void jt_read(jtext *x, const char *s, size_t n, bool csv)
{
	size_t ct = 64, cl = 16;
	x->t = malloc(ct * sizeof(*x->t));
	x->l = malloc(cl * sizeof(*x->l));
	assert_true(x->t && x->l);
	x->nt = x->nl = 0;
	const char *p = s, *end = s + n;
	uint32_t no = 0;
	while (p < end) {
		no++;
		const char *e = memchr(p, '\n', (size_t)(end - p));
		if (!e)
			e = end;
		const char *q = p;
		while (q < e && jblank(*q))
			q++;
		if (q < e && !(!csv && *q == '#')) {
			size_t t0 = x->nt;
			while (q < e) {
				const char *a = q, *b;
				if (csv) {
					b = memchr(q, ',', (size_t)(e - q));
					if (!b)
						b = e;
					q = b < e ? b + 1 : e;
					while (a < b && jblank(*a))
						a++;
					while (b > a && jblank(b[-1]))
						b--;
				} else {
					while (q < e && !jblank(*q))
						q++;
					b = q;
					while (q < e && jblank(*q))
						q++;
				}
				if (b - a >= 2 && *a == '"' && b[-1] == '"')
					a++, b--;
				if (x->nt == ct) {
					ct *= 2;
					x->t = realloc(x->t, ct * sizeof(*x->t));
					assert_non_null(x->t);
				}
				x->t[x->nt++] = (jtok){ a, (uint32_t)(b - a) };
				if (csv && q == e && e > p && e[-1] == ',') {
					/* a trailing empty field */
				}
			}
			if (x->nl == cl) {
				cl *= 2;
				x->l = realloc(x->l, cl * sizeof(*x->l));
				assert_non_null(x->l);
			}
			x->l[x->nl++] = (jline){ (uint32_t)t0, (uint32_t)(x->nt - t0), no };
		}
		p = e < end ? e + 1 : e;
	}
}

/* Token as a float32: 1 finite, 2 NaN, 3 infinite, 0 not a number. */
static int jnum(jtok t, float *f)
{
	char b[80], *e = NULL;
	if (!t.len || t.len >= sizeof(b))
		return 0;
	memcpy(b, t.s, t.len);
	b[t.len] = '\0';
	if (strncasecmp(b, "nan", 3) == 0)
		return 2;
	char c = b[0] == '-' || b[0] == '+' ? b[1] : b[0];
	if (!((c >= '0' && c <= '9') || c == '.' || c == 'i' || c == 'I'))
		return 0;
	*f = strtof(b, &e);
	if (e != b + t.len)
		return 0;
	return isnan(*f) ? 2 : isinf(*f) ? 3 : 1;
}

/* Float32 steps between @p a and @p b (-0 and 0 alike). */
static uint64_t jsteps(float a, float b)
{
	int64_t ia, ib;
	uint32_t ua, ub;
	memcpy(&ua, &a, 4);
	memcpy(&ub, &b, 4);
	ia = ua & 0x80000000u ? -(int64_t)(ua & 0x7fffffffu) : (int64_t)ua;
	ib = ub & 0x80000000u ? -(int64_t)(ub & 0x7fffffffu) : (int64_t)ub;
	return (uint64_t)(ia > ib ? ia - ib : ib - ia);
}

static bool jtok_same(jtok a, jtok b)
{
	float x = 0, y = 0;
	int ka = jnum(a, &x), kb = jnum(b, &y);
	if (ka || kb) {
		if (ka != kb)
			return false;
		return ka == 2 || (ka == 3 ? (x > 0) == (y > 0) : jsteps(x, y) <= 1);
	}
	return a.len == b.len && strncasecmp(a.s, b.s, a.len) == 0;
}

/* Axis-angle @p t[0..3] as a unit quaternion. */
static bool jquat(const jtok *t, double q[4])
{
	float v[4];
	for (int k = 0; k < 4; k++)
		if (jnum(t[k], &v[k]) != 1)
			return false;
	double len = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
	double s = sin(v[3] / 2.0);
	if (len == 0 || s == 0) {
		q[0] = q[1] = q[2] = 0;
		q[3] = 1;
		return true;
	}
	for (int k = 0; k < 3; k++)
		q[k] = v[k] / len * s;
	q[3] = cos(v[3] / 2.0);
	return true;
}

typedef struct jctx {
	jtext S, R;
	bool rot_rows;	/* NWN: orientation rows compare as rotations */
	uint64_t free_cols; /* CSV columns not compared */
} jctx;

/* Saved line @p a against read-back line @p b; @p kw: the group keyword
 * (for data rows) or NULL. @p ntok_head: compare only this many tokens
 * (0: all). */
static bool jline_same(const jctx *c, const jline *a, const jline *b, jtok kw, bool rows,
		       uint32_t ntok)
{
	const jtok *s = c->S.t + a->t0, *r = c->R.t + b->t0;
	if (!ntok && a->nt != b->nt)
		return false;
	uint32_t n = ntok ? ntok : a->nt, lim = n;
	if (n > a->nt || n > b->nt)
		return false;
	if (c->rot_rows && n >= 4 &&
	    ((rows && kw.len >= 11 && strncasecmp(kw.s, "orientation", 11) == 0) ||
	     (!rows && s[0].len == 11 && strncasecmp(s[0].s, "orientation", 11) == 0))) {
		double p[4], q[4];
		if (jquat(s + n - 4, p) && jquat(r + n - 4, q)) {
			double dp = 0, dm = 0;
			for (int k = 0; k < 4; k++) {
				dp = fmax(dp, fabs(p[k] - q[k]));
				dm = fmax(dm, fabs(p[k] + q[k]));
			}
			if (fmin(dp, dm) > 2e-5)
				return false;
			lim = n - 4;
		}
	}
	for (uint32_t k = 0; k < lim; k++)
		if (!(k < 64 && (c->free_cols >> k & 1) && a != c->S.l) && !jtok_same(s[k], r[k]))
			return false;
	return true;
}

static bool jword(jtok t, const char *w)
{
	return t.len == strlen(w) && strncasecmp(t.s, w, t.len) == 0;
}

/* NWN documented defaults (docs/editing.md "The round-trip law", defaults
 * row): may read back without being saved. */
static bool jnwn_default(const jctx *c, size_t li, uint32_t nrows)
{
	const jline *l = &c->R.l[li];
	const jtok *t = c->R.t + l->t0;
	static const char *const any[] = { "normals", "colors", NULL };
	for (const char *const *w = any; *w; w++)
		if (jword(t[0], *w))
			return true;
	if (nrows)
		return false;
	bool zero = true;
	for (uint32_t k = 1; k < l->nt && zero; k++) {
		float f;
		zero = jnum(t[k], &f) == 1 && f == 0;
	}
	if (zero)
		return true;
	static const char *const vals[][2] = {
		{ "setsupermodel", "* NULL" }, { "setanimationscale", "1" }, { "bmin", "-5 -5 -1" },
		{ "bmax", "5 5 10" },	       { "radius", "7" },	     { "diffuse", "0.8 0.8 0.8" },
		{ "ambient", "0.2 0.2 0.2" },  { "shininess", "1" },	     { "shadow", "1" },
		{ "render", "1" },
	};
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		if (!jword(t[0], vals[i][0]))
			continue;
		jtext v;
		jt_read(&v, vals[i][1], strlen(vals[i][1]), false);
		bool ok = v.nt == l->nt - 1;
		for (uint32_t k = 0; ok && k < v.nt; k++)
			ok = jword(v.t[k], "*") || jtok_same(v.t[k], t[1 + k]);
		jt_free(&v);
		if (ok)
			return true;
	}
	return false;
}

/* Items of an order-free text: a block [head, close] or a group (head and
 * its number rows). */
typedef struct jitem {
	size_t head, last, close; /* close: SIZE_MAX none */
	uint32_t nrows;
	bool block;
	size_t k0, nk; /* kids: jseq indices */
} jitem;
typedef struct jseq {
	jitem *it;
	size_t n, cap;
	size_t *kid;
	size_t nkid, ckid;
} jseq;

static const char *const *jopen, *const *jclose;

static bool jis_row(const jtext *x, size_t li)
{
	float f;
	return jnum(x->t[x->l[li].t0], &f) != 0;
}

static void jpush_kid(jseq *q, size_t id)
{
	if (q->nkid == q->ckid) {
		q->ckid = q->ckid ? 2 * q->ckid : 64;
		q->kid = realloc(q->kid, q->ckid * sizeof(*q->kid));
		assert_non_null(q->kid);
	}
	q->kid[q->nkid++] = id;
}

/* Items from line *pos up to @p close; their ids in q->kid[*k0, +*nk). */
static void jparse(const jtext *x, jseq *q, size_t *pos, const char *close, int depth, size_t *k0,
		   size_t *nk)
{
	size_t ids[4096], n = 0;
	bool spill = false;
	size_t *many = NULL, cmany = 0;
	while (*pos < x->nl) {
		jtok w = x->t[x->l[*pos].t0];
		if (close && jword(w, close))
			break;
		int k = -1;
		for (int i = 0; depth < 4 && jopen[i]; i++)
			if (jword(w, jopen[i]))
				k = i;
		if (q->n == q->cap) {
			q->cap = q->cap ? 2 * q->cap : 64;
			q->it = realloc(q->it, q->cap * sizeof(*q->it));
			assert_non_null(q->it);
		}
		size_t id = q->n++;
		jitem it = { .head = (*pos)++, .close = SIZE_MAX };
		if (k >= 0) {
			it.block = true;
			jparse(x, q, pos, jclose[k], depth + 1, &it.k0, &it.nk);
			if (*pos < x->nl && jword(x->t[x->l[*pos].t0], jclose[k]))
				it.close = (*pos)++;
		} else {
			while (*pos < x->nl && jis_row(x, *pos)) {
				(*pos)++;
				it.nrows++;
			}
		}
		it.last = *pos - 1;
		q->it[id] = it;
		if (n == sizeof(ids) / sizeof(ids[0]) && !spill) {
			spill = true;
			cmany = 2 * n;
			many = malloc(cmany * sizeof(*many));
			assert_non_null(many);
			memcpy(many, ids, n * sizeof(*ids));
		}
		if (spill) {
			if (n == cmany) {
				cmany *= 2;
				many = realloc(many, cmany * sizeof(*many));
				assert_non_null(many);
			}
			many[n++] = id;
		} else {
			ids[n++] = id;
		}
	}
	*k0 = q->nkid;
	*nk = n;
	for (size_t i = 0; i < n; i++)
		jpush_kid(q, spill ? many[i] : ids[i]);
	free(many);
}

typedef struct jtree {
	const jctx *c;
	jseq S, R;
	bool nwn;
} jtree;

static bool jmatch(jtree *t, size_t sk0, size_t sn, size_t rk0, size_t rn);

static bool jitem_same(jtree *t, const jitem *s, const jitem *r)
{
	const jctx *c = t->c;
	if (s->block != r->block)
		return false;
	jtok kw = c->S.t[c->S.l[s->head].t0];
	/* NWN newanim/doneanim: the model name (token 2) reads back as the
	 * model's own (law.h free_tokens) */
	uint32_t nh = t->nwn && (jword(kw, "newanim") || jword(kw, "doneanim")) ? 2 : 0;
	if (!jline_same(c, &c->S.l[s->head], &c->R.l[r->head], kw, false, nh))
		return false;
	if (!s->block) {
		if (s->nrows != r->nrows)
			return false;
		for (uint32_t k = 1; k <= s->nrows; k++)
			if (!jline_same(c, &c->S.l[s->head + k], &c->R.l[r->head + k], kw, true, 0))
				return false;
		return true;
	}
	if ((s->close == SIZE_MAX) != (r->close == SIZE_MAX))
		return false;
	if (s->close != SIZE_MAX) {
		jtok ck = c->S.t[c->S.l[s->close].t0];
		uint32_t nc = t->nwn && jword(ck, "doneanim") ? 2 : 0;
		if (!jline_same(c, &c->S.l[s->close], &c->R.l[r->close], ck, false, nc))
			return false;
	}
	return jmatch(t, s->k0, s->nk, r->k0, r->nk);
}

static bool jmatch(jtree *t, size_t sk0, size_t sn, size_t rk0, size_t rn)
{
	bool *used = calloc(rn + 1, 1);
	assert_non_null(used);
	bool ok = true;
	for (size_t i = 0; i < sn && ok; i++) {
		const jitem *s = &t->S.it[t->S.kid[sk0 + i]];
		jtok sw = t->c->S.t[t->c->S.l[s->head].t0];
		bool found = false;
		for (size_t j = 0; j < rn && !found; j++) {
			const jitem *r = &t->R.it[t->R.kid[rk0 + j]];
			if (!used[j] && jtok_same(sw, t->c->R.t[t->c->R.l[r->head].t0]) &&
			    jitem_same(t, s, r))
				used[j] = found = true;
		}
		ok = found;
	}
	for (size_t j = 0; j < rn && ok; j++) {
		const jitem *r = &t->R.it[t->R.kid[rk0 + j]];
		if (!used[j])
			ok = !r->block && t->nwn && jnwn_default(t->c, r->head, r->nrows);
	}
	free(used);
	return ok;
}

/* OBJ: a text's v, vt, vn values and its faces (corner value indices). */
typedef struct jobj {
	float (*v)[3], (*vt)[2], (*vn)[3];
	size_t nv, nt, nn;
	int64_t (*c)[3]; /* corners: v, vt, vn (0-based, -1 none) */
	size_t nc, *f0, *fn, nf;
} jobj;

static void jobj_free(jobj *o)
{
	free(o->v);
	free(o->vt);
	free(o->vn);
	free(o->c);
	free(o->f0);
	free(o->fn);
}

#define JGROW(p, n, cap) \
	do { \
		if ((n) == (cap)) { \
			(cap) = (cap) ? 2 * (cap) : 64; \
			(p) = realloc((p), (cap) * sizeof(*(p))); \
			assert_non_null(p); \
		} \
	} while (0)

static bool jobj_read(const jtext *x, jobj *o)
{
	memset(o, 0, sizeof(*o));
	size_t cv = 0, ct = 0, cn = 0, cc = 0, cf = 0, cf2 = 0;
	for (size_t i = 0; i < x->nl; i++) {
		const jtok *t = x->t + x->l[i].t0;
		uint32_t nt = x->l[i].nt;
		float f[3] = { 0, 0, 0 };
		if (jword(t[0], "v") || jword(t[0], "vn") || jword(t[0], "vt")) {
			unsigned want = jword(t[0], "vt") ? 2 : 3;
			if (nt < 1 + want)
				return false;
			for (unsigned k = 0; k < want; k++)
				if (!jnum(t[1 + k], &f[k]))
					return false;
			if (t[0].len == 1) {
				JGROW(o->v, o->nv, cv);
				memcpy(o->v[o->nv++], f, 12);
			} else if (t[0].s[1] == 't') {
				JGROW(o->vt, o->nt, ct);
				memcpy(o->vt[o->nt++], f, 8);
			} else {
				JGROW(o->vn, o->nn, cn);
				memcpy(o->vn[o->nn++], f, 12);
			}
		} else if (jword(t[0], "f")) {
			JGROW(o->f0, o->nf, cf);
			JGROW(o->fn, o->nf, cf2);
			o->f0[o->nf] = o->nc;
			o->fn[o->nf] = nt - 1;
			for (uint32_t k = 1; k < nt; k++) {
				JGROW(o->c, o->nc, cc);
				int64_t *q = o->c[o->nc++];
				const char *p = t[k].s, *e = t[k].s + t[k].len;
				size_t have[3] = { o->nv, o->nt, o->nn };
				for (int part = 0; part < 3; part++) {
					q[part] = -1;
					if (p < e && *p != '/') {
						long long v = strtoll(p, NULL, 10);
						q[part] = v < 0 ? (int64_t)have[part] + v : v - 1;
						while (p < e && *p != '/')
							p++;
					}
					if (p < e)
						p++;
				}
				if (q[0] < 0 || (size_t)q[0] >= o->nv)
					return false;
			}
			o->nf++;
		}
	}
	return true;
}

static bool jvec_same(const float *a, const float *b, unsigned dim)
{
	float m = 0;
	for (unsigned k = 0; k < dim; k++)
		m = fmaxf(m, fabsf(b[k]));
	for (unsigned k = 0; k < dim; k++)
		if (jsteps(a[k], b[k]) > 1 &&
		    !(dim == 3 && fabs((double)a[k] - b[k]) <= ldexp(1.0, -23) * m + 1e-7 * fabsf(b[k])))
			return false;
	return true;
}

static bool jnormal_same(const float *a, const float *b)
{
	double aa = 0, bb = 0, d = 0;
	for (int k = 0; k < 3; k++) {
		aa += (double)a[k] * a[k];
		bb += (double)b[k] * b[k];
		d += (double)a[k] * b[k];
	}
	if (!(bb > 0))
		return true;
	return aa > 0 && fabs(d) / sqrt(aa * bb) >= cos(0.01) - 1e-12;
}

/* Corner @p q (0..2) of triangle @p k of face @p f as a fan. */
static const int64_t *jcorner(const jobj *o, size_t f, size_t k, unsigned q)
{
	return o->c[o->f0[f] + (q == 0 ? 0 : k + q)];
}

static const char *jobj_same(const jtext *S, const jtext *R, const jtext *O)
{
	jobj s, r, g;
	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	memset(&g, 0, sizeof(g));
	const char *why = NULL;
	bool rs = jobj_read(S, &s), rr = jobj_read(R, &r), rg = jobj_read(O, &g);
	if (!rs || !rr || !rg)
		why = "an OBJ that does not read";
	size_t fs = 0, fr = 0, ks = 0, kr = 0, fo = 0, ko = 0;
	while (!why) {
		while (fs < s.nf && s.fn[fs] < 3)
			fs++;
		while (fr < r.nf && r.fn[fr] < 3)
			fr++;
		while (fo < g.nf && g.fn[fo] < 3)
			fo++;
		if (fs == s.nf || fr == r.nf) {
			if (fs != s.nf || fr != r.nf)
				why = "triangle count";
			break;
		}
		bool moved = fo == g.nf;
		for (unsigned q = 0; q < 3 && !moved; q++)
			moved = !jvec_same(s.v[jcorner(&s, fs, ks, q)[0]],
					   g.v[jcorner(&g, fo, ko, q)[0]], 3);
		for (unsigned q = 0; q < 3 && !why; q++) {
			const int64_t *a = jcorner(&s, fs, ks, q), *b = jcorner(&r, fr, kr, q);
			if (!jvec_same(s.v[a[0]], r.v[b[0]], 3))
				why = "a position";
			else if (a[1] >= 0 && b[1] >= 0 && (size_t)a[1] < s.nt && (size_t)b[1] < r.nt &&
				 !jvec_same(s.vt[a[1]], r.vt[b[1]], 2))
				why = "a texture coordinate";
			else if (!moved && a[2] >= 0 && b[2] >= 0 && (size_t)a[2] < s.nn &&
				 (size_t)b[2] < r.nn && !jnormal_same(s.vn[a[2]], r.vn[b[2]]) &&
				 !(fo < g.nf && (size_t)jcorner(&g, fo, ko, q)[2] < g.nn &&
				   jcorner(&g, fo, ko, q)[2] >= 0 &&
				   jnormal_same(g.vn[jcorner(&g, fo, ko, q)[2]], r.vn[b[2]])))
				why = "a normal";
		}
		if (++ks + 2 >= s.fn[fs])
			ks = 0, fs++;
		if (++kr + 2 >= r.fn[fr])
			kr = 0, fr++;
		if (fo < g.nf && ++ko + 2 >= g.fn[fo])
			ko = 0, fo++;
	}
	jobj_free(&s);
	jobj_free(&r);
	jobj_free(&g);
	return why;
}

/* Does saved text @p s of view @p v (of format @p f; @p orig: the view's
 * text before the save) survive as read-back text @p r? NULL: yes; else
 * what does not. */
static const char *judge(const lfs_format *f, const lfs_view *v, const char *s, size_t sn,
			 const char *r, size_t rn)
{
	static const char *const nwn_open[] = { "node", "newanim", NULL },
				 *const nwn_close[] = { "endnode", "doneanim", NULL };
	static const char *const sod_open[] = { "node", "material", "group", "channel",
						"reference", NULL },
				 *const sod_close[] = { "endnode", "endmaterial", "endgroup",
							 "endchannel", "endreference", NULL };
	int vk = vkind(v->kind);
	bool nwn = strcmp(f->name, "nwn-mdl") == 0, sod = strcmp(f->name, "sod") == 0;
	jctx c = { .rot_rows = nwn && vk == V_TEXT };
	jt_read(&c.S, s, sn, vk == V_CSV);
	jt_read(&c.R, r, rn, vk == V_CSV);
	const char *why = NULL;
	if (vk == V_OBJ) {
		jtext O;
		jt_read(&O, v->data, v->size, false);
		why = jobj_same(&c.S, &c.R, &O);
		jt_free(&O);
	} else if (vk == V_TEXT && (nwn || sod)) {
		jopen = nwn ? nwn_open : sod_open;
		jclose = nwn ? nwn_close : sod_close;
		jtree t = { .c = &c, .nwn = nwn };
		size_t ps = 0, pr = 0, s0, sn2, r0, rn2;
		jparse(&c.S, &t.S, &ps, NULL, 0, &s0, &sn2);
		jparse(&c.R, &t.R, &pr, NULL, 0, &r0, &rn2);
		if (!jmatch(&t, s0, sn2, r0, rn2))
			why = "a statement group without its partner";
		free(t.S.it);
		free(t.S.kid);
		free(t.R.it);
		free(t.R.kid);
	} else {
		if (vk == V_CSV && sod && c.S.nl)
			for (uint32_t k = 0; k < c.S.l[0].nt && k < 64; k++)
				if (jword(c.S.t[c.S.l[0].t0 + k], "time"))
					c.free_cols |= (uint64_t)1 << k;
		if (c.S.nl != c.R.nl)
			why = "the number of lines";
		for (size_t i = 0; i < c.S.nl && !why; i++)
			if (!jline_same(&c, &c.S.l[i], &c.R.l[i], c.S.t[c.S.l[i].t0], false, 0))
				why = "a line";
	}
	jt_free(&c.S);
	jt_free(&c.R);
	return why;
}

/* Line @p line (1-based) of @p a (@p an bytes): *@p s and its length (no line end); false when none. */
static bool nth_line(const char *a, size_t an, size_t line, const char **s, size_t *len)
{
	size_t at = 0;
	for (size_t l = 1; l < line; l++) {
		const char *nl = memchr(a + at, '\n', an - at);
		if (!nl)
			return false;
		at = (size_t)(nl - a) + 1;
	}
	const char *nl = memchr(a + at, '\n', an - at);
	*s = a + at;
	*len = (nl ? (size_t)(nl - a) : an) - at;
	return true;
}

/* A "keyword case" mutation whose first token was a value, not a keyword (a
 * NOD material name inside its list, ...): does view @p v of the saved bytes
 * @p out show line @p line exactly as mutated text @p t has it? Then the
 * format kept what was written, as it must for a value. */
static bool case_kept(const lfs_format *f, const uint8_t *out, size_t on, const lfs_view *v,
		      const text *t, size_t line)
{
	lfs_viewset vs;
	lfs_error err;
	if (lfs_views_build_as(f, out, on, NULL, &vs, &err) != LFS_OK)
		return false;
	const lfs_view *w = lfs_viewset_find(&vs, v->path);
	const char *a, *b;
	size_t al, bl;
	bool kept = w && nth_line(t->s, t->n, line, &a, &al) &&
		    nth_line((const char *)w->data, w->size, line, &b, &bl) && al == bl &&
		    memcmp(a, b, al) == 0;
	lfs_viewset_free(&vs);
	return kept;
}

/* One mutated save of view @p v of @p d; returns the outcome. */
static int one(const cfile *cf, const uint8_t *d, size_t n, const lfs_view *v, int kind,
	       const text *t, size_t line)
{
	const lfs_format *f = cf->f;
	uint8_t *out = NULL;
	size_t on = 0;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = lfs_view_apply(f, d, n, v, t->s, t->n, NULL, &out, &on, &err);
	if (r && (expect_of(f, v->kind, kind) == X_NOOP || expect_of(f, v->kind, kind) == X_ACCEPT)) {
		violation(cf, v, kind, line, "a save that changes nothing the law compares is refused",
			  err.msg);
		free(out);
		return O_VIOL;
	}
	if (!r && expect_of(f, v->kind, kind) == X_REFUSE) {
		violation(cf, v, kind, line, "accepted, but this kind must be refused", NULL);
		free(out);
		return O_VIOL;
	}
	if (r) {
		if (out || on)
			violation(cf, v, kind, line, "refusal with output bytes", err.msg);
		if (!err.msg[0]) {
			violation(cf, v, kind, line, "refusal without a message", NULL);
			return O_VIOL;
		}
		if (r == LFS_ERR_PARSE && !gcc_form(err.msg)) {
			violation(cf, v, kind, line, "message not in file:line:col: error: form",
				  err.msg);
			return O_VIOL;
		}
		/* who refused: the format's apply alone, or the law check */
		uint8_t *o2 = NULL;
		size_t n2 = 0;
		lfs_error e2;
		lfs_err r2 = f->apply(d, n, v, t->s, t->n, NULL, &o2, &n2, &e2);
		free(o2);
		free(out);
		if (getenv("LFS_MUTATE_VERBOSE"))
			fprintf(stderr, "%s %s %s [%s] (%s, line %zu): %s\n", r2 ? "parser" : "law",
				f->name, lfs_base_name(cf->path), v->path, m_name[kind], line,
				err.msg);
		return r2 ? O_PARSE : O_LAW;
	}
	int res = on == n && memcmp(out, d, n) == 0 ? O_NOOP : O_CHANGED;
	if (res != O_NOOP && expect_of(f, v->kind, kind) == X_NOOP &&
	    !(kind == M_CASE && case_kept(f, out, on, v, t, line))) {
		violation(cf, v, kind, line, "accepted, but the model bytes changed", NULL);
		free(out);
		return O_VIOL;
	}
	if (res == O_CHANGED)
		keep_accepted(cf, out, on);
	/* independent re-check: decode, rebuild, compare (judge(), not the
	 * law), re-apply is a no-op */
	const char *why = NULL;
	lfs_viewset vs;
	lfs_err e = lfs_views_build_as(f, out, on, NULL, &vs, &err);
	if (e) {
		violation(cf, v, kind, line, "the saved model does not build its views", err.msg);
		free(out);
		return O_VIOL;
	}
	const lfs_view *w = lfs_viewset_find(&vs, v->path);
	if (!w) {
		violation(cf, v, kind, line, "the view is gone after the save", NULL);
		res = O_VIOL;
	} else if ((why = judge(f, v, t->s, t->n, w->data, w->size)) != NULL) {
		violation(cf, v, kind, line, "the saved text does not read back (independent judge)",
			  why);
		res = O_VIOL;
	} else {
		uint8_t *o3 = NULL;
		size_t n3 = 0;
		e = lfs_view_apply(f, out, on, w, w->data, w->size, NULL, &o3, &n3, &err);
		if (e)
			violation(cf, v, kind, line, "the re-read view does not re-apply", err.msg);
		else if (n3 != on || memcmp(o3, out, on) != 0)
			violation(cf, v, kind, line, "re-applying the re-read view changes the bytes",
				  NULL);
		if (e || n3 != on || memcmp(o3, out, on) != 0)
			res = O_VIOL;
		free(o3);
	}
	lfs_viewset_free(&vs);
	free(out);
	return res;
}

static int vkind(lfs_view_kind k)
{
	switch (k) {
	case LFS_VIEW_TEXT:
		return V_TEXT;
	case LFS_VIEW_MODEL_OBJ:
	case LFS_VIEW_MESH_OBJ:
		return V_OBJ;
	case LFS_VIEW_TRACK_CSV:
	case LFS_VIEW_TABLE_CSV:
		return V_CSV;
	default:
		return -1;
	}
}

static size_t fmt_index(const lfs_format *f)
{
	size_t i = 0;
	for (const lfs_format *const *fp = lfs_formats; *fp; fp++, i++)
		if (*fp == f)
			return i;
	return 0;
}

static void report(FILE *o, size_t per_format)
{
	fprintf(o, "Mutations per format: %zu (seeded; %s)\n\n", per_format,
		getenv("LFS_TEST_SEED") ? getenv("LFS_TEST_SEED") : "default seed");
	fprintf(o, "| format | view | mutation | refused (parser) | refused (law) | no-op | "
		   "changed | violations |\n|---|---|---|---:|---:|---:|---:|---:|\n");
	size_t fi = 0;
	for (const lfs_format *const *fp = lfs_formats; *fp; fp++, fi++)
		for (int vk = 0; vk < V_KINDS; vk++) {
			size_t tot[O_KINDS] = { 0 };
			bool any = false;
			for (int m = 0; m < M_KINDS; m++) {
				size_t *c = g_count[fi][vk][m];
				size_t s = 0;
				for (int o2 = 0; o2 < O_KINDS; o2++)
					s += c[o2], tot[o2] += c[o2];
				if (!s)
					continue;
				any = true;
				fprintf(o, "| %s | %s | %s | %zu | %zu | %zu | %zu | %zu |\n",
					(*fp)->name, v_name[vk], m_name[m], c[O_PARSE], c[O_LAW],
					c[O_NOOP], c[O_CHANGED], c[O_VIOL]);
			}
			if (any)
				fprintf(o, "| **%s** | **%s** | **all** | **%zu** | **%zu** | **%zu** "
					   "| **%zu** | **%zu** |\n",
					(*fp)->name, v_name[vk], tot[O_PARSE], tot[O_LAW], tot[O_NOOP],
					tot[O_CHANGED], tot[O_VIOL]);
		}
}

static void test_mutate(void **state)
{
	(void)state;
	const char *root = lfs_corpus_dir_or_skip();
	const lfs_format *walked; /* every row's corpus folder (lfs_format.corpus_dir) */
	lfs_conform_walk_rows(root, walk_one, &walked);
	qsort(g_files, g_n, sizeof(*g_files), cmp_path);
	const char *env = getenv("LFS_MUTATE_N");
	size_t per_format = env ? strtoull(env, NULL, 0) : 600;
	lfs_rng rng;
	lfs_rng_seed(&rng, "test_mutate", 0x6d757461746521ull);

	for (const lfs_format *const *fp = lfs_formats; *fp; fp++) {
		const lfs_format *f = *fp;
		size_t nf = 0;
		for (size_t i = 0; i < g_n; i++)
			nf += g_files[i].f == f;
		if (!f->apply) {
			fprintf(stderr, "test_mutate: %s has no writable view: skipped\n", f->name);
			continue;
		}
		if (!nf) {
			fprintf(stderr, "test_mutate: %s: no corpus file\n", f->name);
			continue;
		}
		size_t fi = fmt_index(f);
		/* files in a seeded order, a batch of mutations on each, until
		 * per_format mutations were tried */
		size_t done = 0, batch = per_format / nf + 1;
		if (batch > 64)
			batch = 64;
		while (done < per_format) {
			size_t pick = lfs_rng_u32(&rng) % nf, i = 0;
			for (; i < g_n; i++)
				if (g_files[i].f == f && pick-- == 0)
					break;
			const cfile *cf = &g_files[i];
			size_t n = 0;
			uint8_t *d = lfs_read_file(cf->path, &n);
			assert_non_null(d);
			lfs_viewset vs;
			lfs_error err;
			if (lfs_views_build(lfs_base_name(cf->path), d, n, NULL, &vs, &err)) {
				free(d);
				done++; /* a model that does not decode (sod/disputed) */
				continue;
			}
			/* writable views by kind */
			size_t nk[V_KINDS] = { 0 };
			for (size_t k = 0; k < vs.n_views; k++)
				if (vs.views[k].writable && vkind(vs.views[k].kind) >= 0)
					nk[vkind(vs.views[k].kind)]++;
			for (size_t b = 0; b < batch && done < per_format; b++) {
				int vk = (int)(lfs_rng_u32(&rng) % V_KINDS);
				for (int t = 0; t < V_KINDS && !nk[vk]; t++)
					vk = (vk + 1) % V_KINDS;
				if (!nk[vk])
					break;
				size_t vp = lfs_rng_u32(&rng) % nk[vk], k = 0;
				for (; k < vs.n_views; k++)
					if (vs.views[k].writable && vkind(vs.views[k].kind) == vk &&
					    vp-- == 0)
						break;
				const lfs_view *v = &vs.views[k];
				int mk = (int)(lfs_rng_u32(&rng) % M_KINDS);
				text t = { 0 };
				size_t line = 0;
				if (!mutate(&rng, mk, v->data, v->size, vk == V_CSV ? ',' : ' ',
					    vk == V_OBJ,
					    vk == V_CSV && strcmp(f->name, "sod") == 0, &t, &line))
					continue; /* nothing of that kind here; draw again */
				int o = one(cf, d, n, v, mk, &t, line);
				g_count[fi][vk][mk][o]++;
				free(t.s);
				done++;
			}
			lfs_viewset_free(&vs);
			free(d);
		}
	}
	report(stdout, per_format);
	const char *rep = getenv("LFS_MUTATE_REPORT");
	if (rep) {
		FILE *o = fopen(rep, "w");
		if (o) {
			report(o, per_format);
			fclose(o);
		}
	}
	for (size_t i = 0; i < g_n; i++)
		free(g_files[i].path);
	free(g_files);
	if (g_viol)
		fail_msg("%zu round-trip law violations (first ones above)", g_viol);
}

/* Apply @p text to view @p v and require a law refusal at line @p line
 * whose message contains @p what; the model bytes are not given back. */
static void expect_refused(const lfs_format *f, const uint8_t *d, size_t n, const lfs_view *v,
			   const char *s, size_t tn, unsigned line, const char *what)
{
	uint8_t *out = NULL;
	size_t on = 0;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = lfs_view_apply(f, d, n, v, s, tn, NULL, &out, &on, &err);
	fprintf(stderr, "  %s\n", err.msg);
	assert_int_equal(r, LFS_ERR_PARSE);
	assert_null(out);
	assert_int_equal(on, 0);
	assert_int_equal(err.line, line);
	assert_true(gcc_form(err.msg));
	assert_non_null(strstr(err.msg, what));
}

/*
 * The two damages the law was written for, on a real NWN model with a
 * trimesh node: a misspelt node type (`node trimsh X` was compiled as a
 * dummy, dropping the mesh) and text after `donemodel` (skipped by the
 * parser: the save was a no-op that lost it). Both are refused, naming
 * the line.
 */
static void test_known_damage(void **state)
{
	(void)state;
	size_t nl = 0;
	char **list = lfs_corpus_list("nwn", "binary.txt", &nl);
	bool done = false;
	for (size_t i = 0; i < nl && !done; i++) {
		size_t n = 0;
		uint8_t *d = lfs_read_file(list[i], &n);
		lfs_viewset vs;
		lfs_error err;
		if (!d || lfs_views_build(lfs_base_name(list[i]), d, n, NULL, &vs, &err)) {
			free(d);
			continue;
		}
		const lfs_view *v = lfs_viewset_find(&vs, "model.mdl");
		const char *at = v ? strstr(v->data, "\nnode trimesh ") : NULL;
		if (at && v->writable) {
			fprintf(stderr, "known damage on %s\n", list[i]);
			unsigned line = 2;
			for (const char *p = v->data; p < at; p++)
				line += *p == '\n';
			/* node trimsh <name> */
			char *t = malloc(v->size + 64);
			assert_non_null(t);
			size_t off = (size_t)(at - v->data) + 1;
			memcpy(t, v->data, off);
			memcpy(t + off, "node trimsh ", 12);
			size_t rest = off + strlen("node trimesh ");
			memcpy(t + off + 12, v->data + rest, v->size - rest);
			expect_refused(vs.format, d, n, v, t, v->size - 1, line,
				       "unknown node type 'trimsh'");
			/* garbage after donemodel: the apply gives the same bytes */
			memcpy(t, v->data, v->size);
			memcpy(t + v->size, "garbage\n", 8);
			unsigned last = 1;
			for (size_t k = 0; k + 1 < v->size; k++)
				last += v->data[k] == '\n';
			expect_refused(vs.format, d, n, v, t, v->size + 8, last + 1,
				       "after 'donemodel'");
			free(t);
			done = true;
		}
		lfs_viewset_free(&vs);
		free(d);
	}
	lfs_free_list(list);
	assert_true(done);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_damage),
		cmocka_unit_test(test_mutate),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
