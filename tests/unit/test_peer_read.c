/**
 * @file test_peer_read.c
 * An independent reader accepts what we write (issue 10, item 7): every NWN
 * binary the project writes in its tests is decompiled by nwnmdlcomp (the
 * peer, built from ../shared/tools into the build folder) and the peer's
 * text is compared with our own model.mdl text of the same binary by the
 * comparer of test_peer_compare (peer_cmp.c: same rules, same tolerated
 * classes; the per-class file limits there count corpus files and are not
 * applied here).
 *
 * The binaries:
 *  (a) nwn_compile() of every corpus ASCII model that compiles;
 *  (b) lfs_views_apply() of seeded edits on corpus binaries: a node position
 *      and a colour in model.mdl, a controller key value in an animation CSV,
 *      a moved vertex in a mesh OBJ, a node added in model.mdl, a vertex
 *      added to a mesh OBJ (used by its first face);
 *  (c) every *.mdl file in $LFS_PEER_READ_DIR when set (e.g. the accepted
 *      outputs of the mutation harness, tests/unit/test_mutate.c).
 * Each must decompile (the peer writes IN.mdl.ascii) and parse, and every
 * difference must be of a class peer_cmp accepts.
 *
 * Run time (about 20 s, 1,200 binaries): (a) is every compiled ASCII file;
 * (b) makes every edit on every corpus binary, the edited values drawn
 * from a seeded generator (LFS_PEER_READ_SEED, default 1). Skips (77) without the corpus,
 * without ../shared/tools, or when the peer does not build (it needs
 * gcc-multilib and g++-multilib). LFS_NWNMDLCOMP names a peer built
 * elsewhere.
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/strbuf.h"
#include "corpus.h"
#include "peer_cmp.h"
#include "text/mdl_parse.h"
#include "formats/nwn/nwn_compile.h"
#include "registry/viewset.h"

/* ---- the peer ------------------------------------------------------------ */

static char g_peer[4096];   /* the nwnmdlcomp program */
static char g_work[4096];   /* scratch folder: binaries and decompiles */
static char **g_ascii, **g_bins;
static size_t g_nascii, g_nbins;

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

static int run(const char *cmd)
{
	int r = system(cmd);
	return r == -1 ? -1 : WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

/* Find or build the peer; exit 77 when that is not possible here. */
static void peer_setup(void)
{
	const char *given = getenv("LFS_NWNMDLCOMP");
	const char *src = getenv("LFS_SOURCE_ROOT"), *build = getenv("LFS_BUILD_ROOT");
	if (given && *given) {
		snprintf(g_peer, sizeof(g_peer), "%s", given);
	} else {
		if (!src || !build) {
			fprintf(stderr, "LFS_SOURCE_ROOT/LFS_BUILD_ROOT unset: skipping\n");
			exit(77);
		}
		char script[4096];
		lfs_path(script, sizeof(script), "%s/../shared/tools/build-nwnmdlcomp.sh", src);
		if (!is_file(script)) {
			fprintf(stderr, "%s absent: skipping\n", script);
			exit(77);
		}
		lfs_path(g_peer, sizeof(g_peer), "%s/tests/unit/peer/nwnmdlcomp", build);
		if (!is_file(g_peer)) {
			lfs_sb cmd = { 0 };
			lfs_sb_printf(&cmd,
				      "mkdir -p '%s/tests/unit/peer' && sh '%s' '%s.tmp' >'%s.log' "
				      "2>&1 && mv '%s.tmp' '%s'",
				      build, script, g_peer, g_peer, g_peer, g_peer);
			assert_true(lfs_sb_ok(&cmd));
			int rc = run(cmd.data);
			lfs_sb_free(&cmd);
			if (rc != 0) {
				fprintf(stderr, "the peer did not build (needs gcc-multilib "
						"g++-multilib; log %s.log): skipping\n", g_peer);
				exit(77);
			}
		}
	}
	if (!is_file(g_peer)) {
		fprintf(stderr, "no peer at %s: skipping\n", g_peer);
		exit(77);
	}
	snprintf(g_work, sizeof(g_work), "%s/tests/unit/peer_read.XXXXXX", build ? build : "/tmp");
	assert_non_null(mkdtemp(g_work));
	char d[4200];
	snprintf(d, sizeof(d), "%s/inc", g_work);
	assert_int_equal(mkdir(d, 0755), 0);
	snprintf(d, sizeof(d), "%s/nwndir", g_work);
	assert_int_equal(mkdir(d, 0755), 0);
}

/* ---- the binaries ---------------------------------------------------------- */

typedef struct bin {
	char name[64];  /* file name in g_work: "<kind>_<n>.mdl" */
	char what[512]; /* where it came from */
} bin;

static bin *g_b;
static size_t g_nb, g_capb;

/* Write @p data as the next binary of kind @p kind. */
static void add_bin(const char *kind, const uint8_t *data, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add_bin(const char *kind, const uint8_t *data, size_t n, const char *fmt, ...)
{
	if (g_nb == g_capb) {
		g_capb = g_capb ? g_capb * 2 : 256;
		g_b = realloc(g_b, g_capb * sizeof(*g_b));
		assert_non_null(g_b);
	}
	bin *b = &g_b[g_nb];
	snprintf(b->name, sizeof(b->name), "%s_%05zu.mdl", kind, g_nb);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(b->what, sizeof(b->what), fmt, ap);
	va_end(ap);
	char p[4200];
	snprintf(p, sizeof(p), "%s/%s", g_work, b->name);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	g_nb++;
}

static const char *rel(const char *abs)
{
	const char *t = strstr(abs, "/nwn/tree/");
	return t ? t + 10 : abs;
}

/* (a) every corpus ASCII model that compiles */
static size_t make_compiles(void)
{
	size_t ok = 0;
	for (size_t i = 0; i < g_nascii; i++) {
		size_t n = 0;
		uint8_t *text = lfs_read_file(g_ascii[i], &n);
		assert_non_null(text);
		uint8_t *out = NULL;
		size_t on = 0;
		lfs_error err = { 0 };
		lfs_corpus_lookup lc = { g_ascii[i], g_ascii, g_bins };
		if (nwn_compile(rel(g_ascii[i]), text, n, lfs_corpus_supermodel, &lc, &out, &on, &err) ==
		    LFS_OK) {
			add_bin("compile", out, on, "compile of %s", rel(g_ascii[i]));
			ok++;
		}
		free(out);
		free(text);
	}
	return ok;
}

/* ---- seeded edits (b) ------------------------------------------------------- */

enum { ED_POSITION, ED_COLOUR, ED_KEY, ED_VERTEX, ED_ADD_NODE, ED_ADD_VERTEX, ED_N };
static const char *const ed_names[ED_N] = { "model.mdl position", "model.mdl colour",
					    "animation CSV key value", "mesh OBJ vertex moved",
					    "model.mdl node added", "mesh OBJ vertex added" };
static unsigned g_landed[ED_N], g_refused[ED_N], g_noview[ED_N];

static uint64_t g_rng;
static uint32_t rnd(void)
{
	g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(g_rng >> 33);
}

/* Line @p k (0-based) of @p text: start and length (without the line end). */
typedef struct line {
	const char *s;
	size_t n;
} line;

/* The first line starting (after blanks) with one of @p words followed by a
 * blank; before @p stop (a line prefix, NULL = none). */
static bool find_line(const char *text, size_t tn, const char *const *words, const char *stop,
		      line *out)
{
	const char *p = text, *end = text + tn;
	while (p < end) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		if (!e)
			e = end;
		const char *q = p;
		while (q < e && (*q == ' ' || *q == '\t'))
			q++;
		if (stop && (size_t)(e - q) >= strlen(stop) && !strncmp(q, stop, strlen(stop)))
			return false;
		for (const char *const *w = words; *w; w++) {
			size_t wl = strlen(*w);
			if ((size_t)(e - q) > wl && !strncmp(q, *w, wl) && q[wl] == ' ') {
				out->s = p;
				out->n = (size_t)(e - p);
				return true;
			}
		}
		p = e + 1;
	}
	return false;
}

/* @p text with [at, at+n) replaced by @p with (NUL-terminated, malloc'd). */
static char *splice(const char *text, size_t tn, const char *at, size_t n, const char *with,
		    size_t *on)
{
	lfs_sb sb = { 0 };
	lfs_sb_put(&sb, text, (size_t)(at - text));
	lfs_sb_puts(&sb, with);
	lfs_sb_put(&sb, at + n, tn - (size_t)(at - text) - n);
	assert_true(lfs_sb_ok(&sb));
	*on = sb.len;
	return sb.data;
}

/* The first view whose path starts with @p prefix and ends with @p suffix. */
static const lfs_view *find_view(const lfs_viewset *vs, const char *prefix, const char *suffix)
{
	for (size_t i = 0; i < vs->n_views; i++) {
		const char *p = vs->views[i].path;
		size_t pl = strlen(p), sl = strlen(suffix);
		if (!strncmp(p, prefix, strlen(prefix)) && pl >= sl && !strcmp(p + pl - sl, suffix))
			return &vs->views[i];
	}
	return NULL;
}

/* Make edit @p kind of @p vs's views: the view path and the edited text
 * (malloc'd) or NULL when the model has nothing to edit that way. */
static char *make_edit(int kind, const lfs_viewset *vs, const char **vpath, size_t *en)
{
	char buf[512];
	line l;
	const lfs_view *v = NULL;
	switch (kind) {
	case ED_POSITION:
	case ED_COLOUR:
	case ED_ADD_NODE: {
		v = lfs_viewset_find(vs, "model.mdl");
		if (!v)
			return NULL;
		*vpath = v->path;
		if (kind == ED_POSITION) {
			static const char *const w[] = { "position", NULL };
			float x, y, z;
			if (!find_line(v->data, v->size, w, "newanim", &l) ||
			    sscanf(l.s, " position %f %f %f", &x, &y, &z) != 3)
				return NULL;
			snprintf(buf, sizeof(buf), "  position %.9g %.9g %.9g",
				 (double)(x + 0.5f + (float)(rnd() % 8) * 0.125f), (double)y,
				 (double)z);
		} else if (kind == ED_COLOUR) {
			static const char *const w[] = { "diffuse", "color", "ambient", NULL };
			if (!find_line(v->data, v->size, w, "newanim", &l))
				return NULL;
			const char *q = l.s;
			while (*q == ' ' || *q == '\t')
				q++;
			snprintf(buf, sizeof(buf), "  %.*s %.9g 0.5 0.75",
				 (int)strcspn(q, " "), q, (double)(rnd() % 4) * 0.25);
		} else {
			static const char *const w[] = { "newmodel", NULL };
			static const char *const e[] = { "endmodelgeom", NULL };
			line nm;
			char model[128];
			if (!find_line(v->data, v->size, w, NULL, &nm) ||
			    sscanf(nm.s, "newmodel %127s", model) != 1 ||
			    !find_line(v->data, v->size, e, NULL, &l))
				return NULL;
			snprintf(buf, sizeof(buf),
				 "node dummy lfs_peer_added\n  parent %s\n  position %u 0.25 0\n"
				 "endnode\n%.*s",
				 model, rnd() % 4, (int)l.n, l.s);
		}
		return splice(v->data, v->size, l.s, l.n, buf, en);
	}
	case ED_KEY: {
		v = find_view(vs, "anims/", ".csv");
		if (!v)
			return NULL;
		*vpath = v->path;
		/* the last field of the first key row */
		const char *r1 = memchr(v->data, '\n', v->size);
		if (!r1 || (size_t)(r1 + 1 - v->data) >= v->size)
			return NULL;
		r1++;
		const char *e = memchr(r1, '\n', v->size - (size_t)(r1 - v->data));
		if (!e)
			e = v->data + v->size;
		const char *lc = e;
		while (lc > r1 && lc[-1] != ',')
			lc--;
		if (lc == r1)
			return NULL; /* no value column */
		float f = strtof(lc, NULL) + 0.25f * (float)(1 + rnd() % 4);
		snprintf(buf, sizeof(buf), "%.9g", (double)f);
		return splice(v->data, v->size, lc, (size_t)(e - lc), buf, en);
	}
	case ED_VERTEX:
	case ED_ADD_VERTEX: {
		v = find_view(vs, "meshes/", ".obj");
		if (!v)
			return NULL;
		*vpath = v->path;
		static const char *const w[] = { "v", NULL };
		float x, y, z;
		if (!find_line(v->data, v->size, w, NULL, &l) ||
		    sscanf(l.s, "v %f %f %f", &x, &y, &z) != 3)
			return NULL;
		if (kind == ED_VERTEX) {
			snprintf(buf, sizeof(buf), "v %.9g %.9g %.9g",
				 (double)(x + 0.125f * (float)(1 + rnd() % 4)), (double)y, (double)z);
			return splice(v->data, v->size, l.s, l.n, buf, en);
		}
		/* a new position after the last one, used by the first face's
		 * first corner */
		size_t nv = 0;
		const char *last = NULL, *p = v->data, *end = v->data + v->size;
		line f = { NULL, 0 };
		while (p < end) {
			const char *e = memchr(p, '\n', (size_t)(end - p));
			if (!e)
				e = end;
			if (e - p > 2 && p[0] == 'v' && p[1] == ' ') {
				nv++;
				last = e;
			}
			if (!f.s && e - p > 2 && p[0] == 'f' && p[1] == ' ') {
				f.s = p;
				f.n = (size_t)(e - p);
			}
			p = e + 1;
		}
		if (!last || !f.s || last > f.s)
			return NULL;
		const char *c1 = f.s + 2, *c1e = c1 + strcspn(c1, "/ \n");
		lfs_sb sb = { 0 };
		lfs_sb_put(&sb, v->data, (size_t)(last - v->data));
		lfs_sb_printf(&sb, "\nv %.9g %.9g %.9g", (double)(x + 0.25f), (double)(y + 0.25f),
			      (double)z);
		lfs_sb_put(&sb, last, (size_t)(f.s + 2 - last));
		lfs_sb_printf(&sb, "%zu", nv + 1);
		lfs_sb_put(&sb, c1e, (size_t)(end - c1e));
		assert_true(lfs_sb_ok(&sb));
		*en = sb.len;
		return sb.data;
	}
	}
	return NULL;
}

/* (b) seeded edits of corpus binaries applied through lfs_views_apply() */
static size_t make_edits(void)
{
	size_t ok = 0;
	for (size_t i = 0; i < g_nbins; i++) {
		size_t n = 0;
		uint8_t *data = lfs_read_file(g_bins[i], &n);
		assert_non_null(data);
		const char *base = lfs_base_name(g_bins[i]);
		lfs_viewset vs = { 0 };
		lfs_error err = { 0 };
		if (lfs_views_build(base, data, n, NULL, &vs, &err) != LFS_OK) {
			free(data);
			continue;
		}
		for (int k = 0; k < ED_N; k++) {
			const char *vp = NULL;
			size_t en = 0;
			char *ed = make_edit(k, &vs, &vp, &en);
			if (!ed) {
				g_noview[k]++;
				continue;
			}
			uint8_t *out = NULL;
			size_t on = 0;
			lfs_error ae = { 0 };
			if (lfs_views_apply(base, data, n, vp, ed, en, &out, &on, &ae) == LFS_OK) {
				add_bin("edit", out, on, "%s of %s (%s)", ed_names[k],
					rel(g_bins[i]), vp);
				g_landed[k]++;
				ok++;
			} else {
				g_refused[k]++;
				printf("refused: %s of %s: %s\n", ed_names[k], rel(g_bins[i]), ae.msg);
			}
			free(out);
			free(ed);
		}
		lfs_viewset_free(&vs);
		free(data);
	}
	return ok;
}

/* (c) every *.mdl in a folder */
static size_t take_dir(const char *dir)
{
	size_t count = 0;
	char **list = lfs_list_dir(dir, ".mdl", &count);
	assert_non_null(list);
	for (size_t i = 0; i < count; i++) {
		size_t n = 0;
		uint8_t *data = lfs_read_file(list[i], &n);
		assert_non_null(data);
		add_bin("given", data, n, "%s", list[i]);
		free(data);
	}
	lfs_free_list(list);
	return count;
}

/* ---- findings ---------------------------------------------------------------- */

/**
 * Classes this test accepts beyond peer_cmp's rules, each with the most
 * files it may affect in the default run. None: every class the compiles
 * and edits showed is explained by a rule of peer_cmp (R11-R15, R5/R7 in
 * animation nodes; docs/peer-differences.md, "Independent reader"). A new
 * finding goes here, with its files, only until it is explained.
 */
static const peer_rule read_findings[] = {
	{ NULL, 0 },
};

/* Print the classes; return how many are neither accepted by peer_cmp nor
 * a known finding within its file limit (@p limits). */
static unsigned report(const peer_cmp *c, bool limits)
{
	unsigned bad = 0;
	for (size_t i = 0; i < c->n_cls; i++) {
		const peer_dclass *d = &c->cls[i];
		const peer_rule *f = NULL;
		for (size_t k = 0; read_findings[k].key && !f; k++)
			if (!strcmp(read_findings[k].key, d->key))
				f = &read_findings[k];
		const char *verdict = "documented";
		if (!peer_cmp_rule(d->key)) {
			verdict = !f ? "UNDOCUMENTED" :
				  limits && d->files > f->max_files ? "MORE FILES THAN FOUND" :
								      "finding";
			bad += !f || (limits && d->files > f->max_files);
		}
		printf("  %-48s %6u diffs in %4u files  %s\n      e.g. %s\n", d->key, d->count,
		       d->files, verdict, d->example);
	}
	return bad;
}

/* ---- decompile and compare -------------------------------------------------- */

/* Decompile g_b[from, to) in one peer run (it takes many inputs). */
static void decompile(size_t from, size_t to)
{
	struct utsname u;
	assert_int_equal(uname(&u), 0);
	lfs_sb cmd = { 0 };
	lfs_sb_printf(&cmd, "cd '%s' && NWNDIR='%s/nwndir' setarch '%s' -R '%s' -d -i '%s/inc'",
		      g_work, g_work, u.machine, g_peer, g_work);
	for (size_t i = from; i < to; i++)
		lfs_sb_printf(&cmd, " %s", g_b[i].name);
	lfs_sb_puts(&cmd, " >>peer.log 2>&1");
	assert_true(lfs_sb_ok(&cmd));
	run(cmd.data); /* its exit status is always 0: the outputs tell */
	lfs_sb_free(&cmd);
}

static void test_peer_read(void **state)
{
	(void)state;
	(void)lfs_corpus_dir_or_skip();
	peer_setup();
	g_ascii = lfs_corpus_list("nwn", "ascii.txt", &g_nascii);
	g_bins = lfs_corpus_list("nwn", "binary.txt", &g_nbins);
	lfs_test_slice(g_ascii, &g_nascii); /* the fast tier: a slice (docs/testing.md) */
	lfs_test_slice(g_bins, &g_nbins);
	assert_true(g_nascii > 0 && g_nbins > 0);
	const char *seed = getenv("LFS_PEER_READ_SEED");
	g_rng = seed && *seed ? strtoull(seed, NULL, 10) : 1;

	size_t ncomp = make_compiles();
	size_t nedit = make_edits();
	const char *dir = getenv("LFS_PEER_READ_DIR");
	size_t ngiven = dir && *dir ? take_dir(dir) : 0;
	printf("binaries: %zu compiles of %zu corpus ASCII files, %zu applied edits of %zu corpus "
	       "binaries, %zu from LFS_PEER_READ_DIR\n",
	       ncomp, g_nascii, nedit, g_nbins, ngiven);
	for (int k = 0; k < ED_N; k++)
		printf("  edit %-26s landed %4u, refused %3u, nothing to edit %3u\n", ed_names[k],
		       g_landed[k], g_refused[k], g_noview[k]);

	for (size_t i = 0; i < g_nb; i += 64)
		decompile(i, i + 64 < g_nb ? i + 64 : g_nb);

	peer_cmp c = { 0 };
	unsigned decompiled = 0, compared = 0, failures = 0;
	for (size_t i = 0; i < g_nb; i++) {
		const bin *b = &g_b[i];
		c.file_no = (unsigned)i + 1;
		c.file = b->what;
		c.where = "file";
		c.node = NULL;
		char bp[4200], pp[4300];
		snprintf(bp, sizeof(bp), "%s/%s", g_work, b->name);
		snprintf(pp, sizeof(pp), "%s.ascii", bp);
		size_t nbin = 0, npeer = 0;
		uint8_t *data = lfs_read_file(bp, &nbin);
		uint8_t *peer = is_file(pp) ? lfs_read_file(pp, &npeer) : NULL;
		assert_non_null(data);
		if (!peer || npeer == 0) {
			peer_cmp_diff(&c, "file:no-peer-output", "%s: the peer wrote no %s.ascii",
				      b->what, b->name);
			printf("no peer output: %s (%s)\n", b->name, b->what);
			failures++;
			free(data);
			free(peer);
			continue;
		}
		decompiled++;
		lfs_viewset vs = { 0 };
		lfs_error err = { 0 };
		const lfs_view *v = NULL;
		if (lfs_views_build(b->name, data, nbin, NULL, &vs, &err) != LFS_OK ||
		    !(v = lfs_viewset_find(&vs, "model.mdl"))) {
			peer_cmp_diff(&c, "file:views-build-failed", "%s", err.msg);
			failures++;
		} else {
			mdl_doc *da = NULL, *db = NULL;
			lfs_error ea = { 0 }, eb = { 0 };
			lfs_err ra = mdl_parse("ours", (const uint8_t *)v->data, v->size, &da, &ea);
			lfs_err rb = mdl_parse(pp, peer, npeer, &db, &eb);
			if (ra != LFS_OK || rb != LFS_OK) {
				peer_cmp_diff(&c, ra ? "file:ours-unparseable" : "file:peer-unparseable",
					      "%s", ra ? ea.msg : eb.msg);
				failures++;
			} else {
				peer_cmp_docs(&c, da, db);
				compared++;
			}
			mdl_doc_free(da);
			mdl_doc_free(db);
		}
		lfs_viewset_free(&vs);
		free(data);
		free(peer);
		/* keep the folder small: only failures stay */
		if (!getenv("LFS_PEER_READ_KEEP")) {
			unlink(bp);
			unlink(pp);
		}
	}
	printf("peer read: %zu binaries, %u decompiled, %u compared, %u face corners, %u "
	       "orientation rows, %u values\n",
	       g_nb, decompiled, compared, c.n_corners, c.n_orient, c.n_values);
	printf("largest accepted orientation deviation: %.3g (%s)\n", c.max_orient_dev,
	       c.max_orient_at[0] ? c.max_orient_at : "-");
	unsigned bad = report(&c, ngiven == 0);
	free(c.cls);
	free(g_b);
	lfs_free_list(g_ascii);
	lfs_free_list(g_bins);
	if (failures == 0 && bad == 0 && !getenv("LFS_PEER_READ_KEEP")) {
		char cmd[4300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g_work);
		run(cmd);
	} else {
		printf("work folder kept: %s\n", g_work);
	}
	assert_int_equal(failures, 0);
	assert_int_equal(bad, 0);
	assert_true(ncomp > 0 && nedit > 0);
	for (int k = 0; k < ED_N; k++)
		assert_true(g_landed[k] > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peer_read),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
