/**
 * @file test_refuse.c
 * Issue 24 items 3 and 6: a save refuses what it would drop, the compiler
 * compiles what the reference compiles (docs/editing.md "Refused saves",
 * docs/nwn-compile.md "Accepted oddities").
 *
 *  - an empty save of any writable view (NWN box.mdl of samples/; one NOD,
 *    SOD and NAD of the corpus when present) is `VIEW:1:1: error: the view
 *    is empty ...` through lfs_views_apply(), the registry-level apply that
 *    the mount's commit and `legacyfs-convert apply` share;
 *  - a number beyond the float32 range (`1e400`) is refused in model.mdl,
 *    a mesh OBJ and a track CSV, and by the compiler;
 *  - a line of numbers outside any list (`1 shadow`, `3 positionkey`) and a
 *    second node of one name are refused in a save of model.mdl, with their
 *    line and column;
 *  - the compiler takes `node patch` as a dummy and text after `donemodel`
 *    with a warning (same bytes as without them), while a save of model.mdl
 *    with either is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/floatfmt.h"
#include "corpus.h"
#include "formats/nwn/nwn_compile.h"
#include "registry/viewset.h"

static uint8_t *g_box;
static size_t g_boxn;

static int setup(void **state)
{
	(void)state;
	const char *root = getenv("LFS_SOURCE_ROOT");
	char p[4096];
	snprintf(p, sizeof(p), "%s/samples/box.mdl", root ? root : ".");
	g_box = lfs_read_file(p, &g_boxn);
	return g_box ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(g_box);
	return 0;
}

/* The generated text of view @p vp of box.mdl (malloc'd, NUL-terminated). */
static char *box_view(const char *vp)
{
	lfs_view_opts o = { .only = vp };
	lfs_viewset vs;
	lfs_error err;
	assert_int_equal(lfs_views_build("box.mdl", g_box, g_boxn, &o, &vs, &err), LFS_OK);
	const lfs_view *v = lfs_viewset_find(&vs, vp);
	assert_non_null(v);
	char *t = malloc(v->size + 1);
	assert_non_null(t);
	memcpy(t, v->data, v->size);
	t[v->size] = 0;
	lfs_viewset_free(&vs);
	return t;
}

/* @p text with the first @p from replaced by @p to (malloc'd). */
static char *subst(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	assert_non_null(at);
	size_t a = (size_t)(at - text), fl = strlen(from), tl = strlen(to), n = strlen(text);
	char *o = malloc(n - fl + tl + 1);
	assert_non_null(o);
	memcpy(o, text, a);
	memcpy(o + a, to, tl);
	memcpy(o + a + tl, at + fl, n - a - fl + 1);
	return o;
}

/* model.mdl's line number of the first @p what (1-based). */
static unsigned line_of(const char *text, const char *what)
{
	const char *at = strstr(text, what);
	assert_non_null(at);
	unsigned line = 1;
	for (const char *c = text; c < at; c++)
		line += *c == '\n';
	return line;
}

/* Apply @p text to view @p vp of box.mdl: must be refused with a message
 * starting with @p prefix and holding @p part. */
static void refused(const char *vp, const char *text, const char *prefix, const char *part)
{
	uint8_t *out = NULL;
	size_t on = 0;
	lfs_error err = { 0 };
	lfs_err e = lfs_views_apply("box.mdl", g_box, g_boxn, vp, text, strlen(text), &out, &on, &err);
	if (e != LFS_ERR_PARSE || strncmp(err.msg, prefix, strlen(prefix)) || !strstr(err.msg, part))
		fail_msg("%s: expected '%s...%s', got %d '%s'", vp, prefix, part, (int)e, err.msg);
	assert_null(out);
}

static void test_empty_box(void **state)
{
	(void)state;
	static const char *const views[] = { "model.mdl", "model.obj", "meshes/crate.obj",
					     "anims/spin/crate.position.csv",
					     "anims/spin/crate.orientation.csv" };
	char pre[128];
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		snprintf(pre, sizeof(pre), "%s:1:1: error: the view is empty", views[i]);
		refused(views[i], "", pre, "nothing was saved");
		refused(views[i], "\n\n", pre, "to delete");
	}
	refused("meshes/crate.obj", "", "meshes/crate.obj:1:1:", "delete its node in the model's text");
}

/* Every writable view of one corpus file of each other format. */
static void test_empty_formats(void **state)
{
	(void)state;
	const char *dir = lfs_corpus_dir();
	if (!dir) {
		lfs_test_note_skip(__FILE__, __LINE__, "corpus absent: NOD/SOD/NAD part skipped");
		return;
	}
	static const char *const files[] = { "nod/pfh0_robe020.nod", "sod/c_a_chicken_1.8.sod",
					     "nad/c_orcus__ccwalkf.nad" };
	for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		char p[4096];
		snprintf(p, sizeof(p), "%s/%s", dir, files[k]);
		size_t n = 0;
		uint8_t *data = lfs_read_file(p, &n);
		if (!data) {
			lfs_test_note_skip(__FILE__, __LINE__, files[k]);
			continue;
		}
		const char *base = lfs_base_name(files[k]);
		lfs_view_opts o = { 0 };
		lfs_viewset vs;
		lfs_error err;
		assert_int_equal(lfs_views_build(base, data, n, &o, &vs, &err), LFS_OK);
		size_t tried = 0;
		for (size_t i = 0; i < vs.n_views; i++) {
			const lfs_view *v = &vs.views[i];
			if (!v->writable || !v->size)
				continue;
			uint8_t *out = NULL;
			size_t on = 0;
			lfs_error e2 = { 0 };
			lfs_err r = lfs_views_apply(base, data, n, v->path, "", 0, &out, &on, &e2);
			char pre[300];
			snprintf(pre, sizeof(pre), "%s:1:1: error: the view is empty", v->path);
			if (r != LFS_ERR_PARSE || strncmp(e2.msg, pre, strlen(pre)))
				fail_msg("%s %s: %d '%s'", base, v->path, (int)r, e2.msg);
			assert_null(out);
			tried++;
		}
		assert_true(tried > 0);
		lfs_viewset_free(&vs);
		free(data);
	}
}

static void test_overflow(void **state)
{
	(void)state;
	float f = 0;
	assert_false(lfs_parse_float("1e400", 5, &f));
	assert_false(lfs_parse_float("-4e38", 5, &f));
	assert_true(lfs_float_overflows("1e400", 5));
	assert_true(lfs_parse_float("inf", 3, &f));
	assert_true(lfs_parse_float("3.4028235e38", 12, &f));
	assert_false(lfs_float_overflows("inf", 3));

	char *mdl = box_view("model.mdl");
	char *t = subst(mdl, "  position 0 0 0\n", "  position 1e400 0 0\n");
	/* the line of that position statement */
	unsigned line = 1;
	for (const char *c = mdl; c < strstr(mdl, "  position 0 0 0\n"); c++)
		line += *c == '\n';
	char pre[96];
	snprintf(pre, sizeof(pre), "model.mdl:%u:12: error: '1e400' is out of the float32 range", line);
	refused("model.mdl", t, pre, "write inf");
	free(t);
	/* in a list row (a row still, its value refused) and in a key row */
	t = subst(mdl, "    0.5 -0.5 0\n", "    1e400 -0.5 0\n");
	snprintf(pre, sizeof(pre), "model.mdl:%u:5: error: '1e400' is out of the float32 range",
		 line_of(mdl, "    0.5 -0.5 0\n"));
	refused("model.mdl", t, pre, "write inf");
	free(t);
	const char *key = strstr(mdl, "  positionkey 3\n");
	assert_non_null(key);
	const char *krow = key + strlen("  positionkey 3\n"); /* "    T X Y Z" */
	const char *kx = strchr(krow + 4, ' ');
	assert_non_null(kx);
	size_t mn = strlen(mdl);
	t = malloc(mn + 16);
	assert_non_null(t);
	snprintf(t, mn + 16, "%.*s1e39%s", (int)(kx + 1 - mdl), mdl, kx + 1 + strcspn(kx + 1, " "));
	snprintf(pre, sizeof(pre), "model.mdl:%u:%u: error: '1e39' is out of the float32 range",
		 line_of(mdl, "  positionkey 3\n") + 1, (unsigned)(kx + 1 - krow) + 1);
	refused("model.mdl", t, pre, "write inf");
	free(t);
	free(mdl);

	char *obj = box_view("meshes/crate.obj");
	char *v = strstr(obj, "\nv ");
	assert_non_null(v);
	line = 2;
	for (const char *c = obj; c < v; c++)
		line += *c == '\n';
	/* the first vertex's x becomes 1e39 */
	const char *x = v + 3, *xe = x + strcspn(x, " ");
	size_t on_ = strlen(obj);
	t = malloc(on_ + 16);
	assert_non_null(t);
	snprintf(t, on_ + 16, "%.*s1e39%s", (int)(x - obj), obj, xe);
	snprintf(pre, sizeof(pre), "meshes/crate.obj:%u:3: error: '1e39' is out of the float32", line);
	refused("meshes/crate.obj", t, pre, "range");
	free(t);
	free(obj);

	char *csv = box_view("anims/spin/crate.position.csv");
	char *row = strchr(csv, '\n');
	assert_non_null(row);
	char *comma = strchr(row, ',');
	assert_non_null(comma);
	size_t keep = (size_t)(comma - csv) + 1;
	char buf[512];
	snprintf(buf, sizeof(buf), "%.*s1e39%s", (int)keep, csv, comma + 1 + strcspn(comma + 1, ","));
	refused("anims/spin/crate.position.csv", buf, "anims/spin/crate.position.csv:2:",
		"'1e39' is out of the float32 range");
	free(csv);

	/* the compiler (legacyfs-convert compile) */
	const char *src = "newmodel t\nsetsupermodel t NULL\nclassification effects\nbeginmodelgeom t\n"
			  "node dummy t\n  parent NULL\n  position 0 1e400 0\nendnode\nendmodelgeom t\n"
			  "donemodel t\n";
	uint8_t *out = NULL;
	size_t on = 0;
	lfs_error err = { 0 };
	assert_int_equal(nwn_compile("t.mdl", (const uint8_t *)src, strlen(src), NULL, NULL, &out, &on, &err),
			 LFS_ERR_PARSE);
	assert_non_null(strstr(err.msg, "t.mdl:7:14: error: '1e400': is out of the float32 range"));
	free(out);
}

static void test_stray_numbers(void **state)
{
	(void)state;
	char *mdl = box_view("model.mdl");
	char pre[96];
	/* swapped tokens: a statement that would be dropped */
	char *t = subst(mdl, "  shadow 1\n", "  1 shadow\n");
	snprintf(pre, sizeof(pre), "model.mdl:%u:3: error: node 'crate': a line of numbers outside any list",
		 line_of(mdl, "  shadow 1\n"));
	refused("model.mdl", t, pre, "would be lost");
	free(t);
	/* a swapped key list header: the whole track would go */
	t = subst(mdl, "  positionkey 3\n", "  3 positionkey\n");
	snprintf(pre, sizeof(pre), "model.mdl:%u:3: error: node 'crate': a line of numbers outside any list",
		 line_of(mdl, "  positionkey 3\n"));
	refused("model.mdl", t, pre, "would be lost");
	free(t);
	free(mdl);
}

static void test_duplicate_node(void **state)
{
	(void)state;
	char *mdl = box_view("model.mdl");
	char *t = subst(mdl, "endmodelgeom box\n",
			"node dummy crate\n  parent box\nendnode\nendmodelgeom box\n");
	char pre[96];
	snprintf(pre, sizeof(pre), "model.mdl:%u:12: error: another node named 'crate' (also on line 13)",
		 line_of(mdl, "endmodelgeom box\n"));
	refused("model.mdl", t, pre, "node names must be unique");
	free(t);
	/* case does not make another name: the game compares names ignoring case */
	t = subst(mdl, "endmodelgeom box\n", "node dummy CRATE\n  parent box\nendnode\nendmodelgeom box\n");
	snprintf(pre, sizeof(pre), "model.mdl:%u:12: error: another node named 'CRATE' (also on line 13)",
		 line_of(mdl, "endmodelgeom box\n"));
	refused("model.mdl", t, pre, "node names must be unique");
	free(t);
	free(mdl);
}

static uint8_t *compile_ok(const char *src, size_t *on, lfs_warnings *w)
{
	uint8_t *out = NULL;
	lfs_error err = { 0 };
	lfs_err e = nwn_compile_ex("t.mdl", (const uint8_t *)src, strlen(src), NULL, NULL, w, &out, on, &err);
	if (e)
		fail_msg("compile refused: %s", err.msg);
	return out;
}

static void test_compile_lenient(void **state)
{
	(void)state;
#define BASE(type, tail)                                                                          \
	"newmodel t\nsetsupermodel t NULL\nclassification effects\nbeginmodelgeom t\n"                \
	"node dummy t\n  parent NULL\nendnode\nnode " type " p\n  parent t\n  position 1 2 3\n"       \
	"endnode\nendmodelgeom t\ndonemodel t\n" tail
	const char *a = BASE("dummy", ""), *b = BASE("patch", ""),
		   *c = BASE("dummy", "\nsome notes the exporter left\n  and more\n");
#undef BASE
	size_t an = 0, bn = 0, cn = 0;
	lfs_warnings wa = { 0 }, wb = { 0 }, wc = { 0 };
	uint8_t *oa = compile_ok(a, &an, &wa), *ob = compile_ok(b, &bn, &wb), *oc = compile_ok(c, &cn, &wc);
	assert_int_equal(wa.count, 0);
	/* `node patch`: a dummy, as the game's compiler reads any other type */
	assert_int_equal(wb.count, 1);
	assert_non_null(strstr(wb.text, "t.mdl:8:6: warning: node 'p': unknown node type 'patch' compiled as a dummy"));
	assert_int_equal(bn, an);
	assert_memory_equal(ob, oa, an);
	/* text after donemodel: one warning at its first line */
	assert_int_equal(wc.count, 1);
	assert_string_equal(wc.text, "t.mdl:15:1: warning: text after donemodel ignored\n");
	assert_int_equal(cn, an);
	assert_memory_equal(oc, oa, an);
	free(oa);
	free(ob);
	free(oc);
}

/* Real sources with a peer-compiled binary: `node patch` in place of a
 * dummy and text after donemodel give the same bytes as the file itself. */
static void test_compile_corpus(void **state)
{
	(void)state;
	const char *dir = lfs_corpus_dir();
	if (!dir) {
		lfs_test_note_skip(__FILE__, __LINE__, "corpus absent");
		return;
	}
	static const char *const files[] = { "nwn/tree/rollnw/tests/test_data/user/development/ptm_candle07n.mdl",
					     "nwn/tree/nwnprc/nwnprc/others/vim_frostspike.mdl" };
	size_t done = 0;
	for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		char p[4096];
		snprintf(p, sizeof(p), "%s/%s", dir, files[k]);
		size_t n = 0;
		char *text = (char *)lfs_read_file(p, &n);
		if (!text)
			continue;
		char *z = realloc(text, n + 64);
		assert_non_null(z);
		text = z;
		text[n] = 0;
		if (strlen(text) != n) { /* NULs in the file: not this test's business */
			free(text);
			continue;
		}
		const char *name = lfs_base_name(files[k]);
		uint8_t *o1 = NULL, *o2 = NULL;
		size_t n1 = 0, n2 = 0;
		lfs_error err = { 0 };
		lfs_warnings w1 = { 0 }, w2 = { 0 };
		assert_int_equal(nwn_compile_ex(name, (uint8_t *)text, n, NULL, NULL, &w1, &o1, &n1, &err), LFS_OK);
		/* every `node dummy` -> `node patch`, and a line after donemodel */
		size_t cap = n * 2 + 64, m = 0, swapped = 0;
		char *t2 = malloc(cap);
		assert_non_null(t2);
		for (const char *c = text; *c;) {
			if ((c == text || c[-1] == '\n') && !strncmp(c, "node dummy ", 11)) {
				memcpy(t2 + m, "node patch ", 11);
				m += 11;
				c += 11;
				swapped++;
				continue;
			}
			t2[m++] = *c++;
		}
		memcpy(t2 + m, "trailing words\n", 15);
		m += 15;
		assert_true(swapped > 0);
		lfs_err e = nwn_compile_ex(name, (uint8_t *)t2, m, NULL, NULL, &w2, &o2, &n2, &err);
		if (e)
			fail_msg("%s: %s", name, err.msg);
		assert_true(w2.count >= w1.count + swapped + 1);
		assert_non_null(strstr(w2.text, "unknown node type 'patch' compiled as a dummy"));
		assert_int_equal(n2, n1);
		assert_memory_equal(o2, o1, n1);
		free(o1);
		free(o2);
		free(t2);
		free(text);
		done++;
	}
	if (!done)
		lfs_test_note_skip(__FILE__, __LINE__, "no corpus source found");
}

/* A save through the mount stays strict where text would be lost. */
static void test_save_strict(void **state)
{
	(void)state;
	char *mdl = box_view("model.mdl");
	size_t n = strlen(mdl);
	char *t = malloc(n + 64);
	assert_non_null(t);
	snprintf(t, n + 64, "%strailing words\n", mdl);
	char pre[96];
	snprintf(pre, sizeof(pre), "model.mdl:%u:1: error: text after 'donemodel'", line_of(mdl, "donemodel") + 1);
	refused("model.mdl", t, pre, "would be lost");
	free(t);
	t = subst(mdl, "endmodelgeom box\n", "node patch extra\n  parent box\nendnode\nendmodelgeom box\n");
	snprintf(pre, sizeof(pre), "model.mdl:%u:6: error: node 'extra': node type 'patch'",
		 line_of(mdl, "endmodelgeom box\n"));
	refused("model.mdl", t, pre, "no type of the binary format");
	free(t);
	free(mdl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_box),     cmocka_unit_test(test_empty_formats),
		cmocka_unit_test(test_overflow),      cmocka_unit_test(test_stray_numbers),
		cmocka_unit_test(test_duplicate_node), cmocka_unit_test(test_compile_lenient),
		cmocka_unit_test(test_compile_corpus), cmocka_unit_test(test_save_strict),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
