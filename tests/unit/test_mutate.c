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
 * by junk, a truncation at a random byte, a stray byte inserted. The edited
 * text goes through lfs_view_apply() (the checked path the mount and
 * `legacyfs-convert apply` use). Every outcome must be one of
 *  - a refusal: no output bytes, a message, and for LFS_ERR_PARSE one in the
 *    form `file:line:col: error: ...`; counted as refused by the format's
 *    parser (the format's apply alone refuses it) or by the law check;
 *  - an accepted save for which an independent re-check holds: the output
 *    decodes, the same view of it compares equal to the saved text
 *    (lfs_law_compare()), and re-applying that re-read view to the output is
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
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "corpus.h"
#include "testrng.h"
#include "formats/format.h"
#include "views/law.h"
#include "views/viewset.h"

enum { M_KEYWORD, M_NODETYPE, M_DELETE, M_DUP, M_SWAP, M_JUNK, M_TRUNC, M_STRAY, M_KINDS };
static const char *const m_name[M_KINDS] = { "misspelt keyword", "misspelt node type",
					     "deleted line",	 "duplicated line",
					     "swapped lines",	 "number -> junk",
					     "truncation",	 "stray byte" };
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
static bool mutate(lfs_rng *r, int kind, const char *s, size_t n, char sep, text *out,
		   size_t *line)
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
	if (res == O_CHANGED)
		keep_accepted(cf, out, on);
	/* independent re-check: decode, rebuild, compare, re-apply is a no-op */
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
	} else if ((e = lfs_law_compare(f, v->path, v->kind, t->s, t->n, w->data, w->size,
					&err))) {
		violation(cf, v, kind, line, "the law does not hold", err.msg);
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
	const char *dirs[] = { "nwn/tree", "nod", "nad", "sod" };
	char p[4096];
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		nftw(p, walk_one, 16, FTW_PHYS);
	}
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
				if (!mutate(&rng, mk, v->data, v->size, vk == V_CSV ? ',' : ' ', &t,
					    &line))
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
