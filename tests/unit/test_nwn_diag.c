/**
 * @file test_nwn_diag.c
 * The NWN compiler's diagnostics (issue 10, docs/nwn-compile.md "Refused"
 * and "Warnings"): each refusal names its statement as
 * `file:line:col: error: ...`, each warning of a compile that lands is a line
 * `file:line:col: warning: ...` in the lfs_warnings given to
 * nwn_compile_ex(); structural edits through nwn_apply_structural_ex() report
 * the same warnings. Small hand-written models; no corpus needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "formats/nwn/nwn_mdl.h"
#include "formats/nwn/nwn_apply_struct.h"
#include "formats/nwn/nwn_compile.h"
#include "registry/viewset.h"

/* A model with one trimesh `m` (4 vertices, 2 faces) under root `t`;
 * NODE_EXTRA goes into the trimesh, FACES_EXTRA after its two faces (the
 * count is 2 + extra rows), HEAD_EXTRA into the model header. */
static char *model(const char *head_extra, const char *node_extra, const char *faces_extra, int extra_faces)
{
	char *t = malloc(8192);
	assert_non_null(t);
	snprintf(t, 8192,
		 "newmodel t\n"                 /* 1 */
		 "setsupermodel t NULL\n"       /* 2 */
		 "classification character\n"   /* 3 */
		 "%s"                           /* head_extra: 0 or 1 line */
		 "beginmodelgeom t\n"
		 "node dummy t\n"
		 "  parent NULL\n"
		 "endnode\n"
		 "node trimesh m\n"
		 "  parent t\n"
		 "%s"
		 "  verts 4\n"
		 "    0 0 0\n"
		 "    1 0 0\n"
		 "    1 1 0\n"
		 "    2 2 0\n"
		 "  tverts 1\n"
		 "    0 0 0\n"
		 "  faces %d\n"
		 "    0 1 2 1 0 0 0 1\n"
		 "    0 2 1 1 0 0 0 1\n"
		 "%s"
		 "endnode\n"
		 "endmodelgeom t\n"
		 "donemodel t\n",
		 head_extra, node_extra, 2 + extra_faces, faces_extra);
	return t;
}

static lfs_err compile(const char *text, lfs_warnings *w, lfs_error *err, nwn_supermodel_lookup_fn lk)
{
	uint8_t *out = NULL;
	size_t on = 0;
	memset(err, 0, sizeof(*err));
	lfs_err e = nwn_compile_ex("t.mdl", (const uint8_t *)text, strlen(text), lk, NULL, w, &out, &on, err);
	if (!e) {
		nwn_model *m = NULL;
		assert_int_equal(nwn_mdl_decode(out, on, &m, NULL), LFS_OK);
		nwn_model_free(m);
	}
	free(out);
	return e;
}

/* Compiling @p text fails with a message that starts with @p at and
 * contains @p what. */
static void refused(const char *text, const char *at, const char *what)
{
	lfs_error err;
	lfs_warnings w = { 0 };
	lfs_err e = compile(text, &w, &err, NULL);
	if (e != LFS_ERR_PARSE)
		fail_msg("compiled (%d), expected '%s %s'", (int)e, at, what);
	if (strncmp(err.msg, at, strlen(at)) || !strstr(err.msg, "error: ") || !strstr(err.msg, what))
		fail_msg("message '%s', expected '%s ... %s'", err.msg, at, what);
}

/* Compiling @p text lands with exactly @p n warnings, the first starting with
 * @p at and containing @p what. */
static void warned(const char *text, unsigned n, const char *at, const char *what)
{
	lfs_error err;
	lfs_warnings w = { 0 };
	lfs_err e = compile(text, &w, &err, NULL);
	if (e)
		fail_msg("refused: %s", err.msg);
	if (w.count != n)
		fail_msg("%u warnings (%.*s), expected %u", w.count, (int)w.len, w.text, n);
	if (n && (strncmp(w.text, at, strlen(at)) || !strstr(w.text, ": warning: ") || !strstr(w.text, what)))
		fail_msg("warnings '%.*s', expected '%s ... %s'", (int)w.len, w.text, at, what);
}

static void test_clean(void **state)
{
	(void)state;
	char *t = model("", "", "", 0);
	warned(t, 0, "", "");
	free(t);
}

/* A.1: unknown node types are refused; `emmiter`/`pwk` (real files) are dummies
 * with a warning; `camera` is a known type this compiler cannot write. */
static void test_node_types(void **state)
{
	(void)state;
#define BASE(type) "newmodel t\nbeginmodelgeom t\nnode dummy t\n  parent NULL\nendnode\n" \
		   "node " type " head_g\n  parent t\nendnode\nendmodelgeom t\ndonemodel t\n"
	refused(BASE("trimsh"), "t.mdl:6:6:", "unknown node type 'trimsh'");
	refused(BASE("camera"), "t.mdl:6:6:", "'camera'");
	warned(BASE("emmiter"), 1, "t.mdl:6:6:", "unknown node type 'emmiter' compiled as a dummy");
#undef BASE
	/* the emitter lines of an `emmiter` dummy are read and ignored */
	const char *em = "newmodel t\nbeginmodelgeom t\nnode dummy t\n  parent NULL\nendnode\n"
			 "node emmiter e\n  parent t\n  birthrate 10\n  update Fountain\nendnode\nendmodelgeom t\ndonemodel t\n";
	warned(em, 1, "t.mdl:6:6:", "'emmiter'");
	/* the mesh statements of the typo'd node are not silently dropped */
	char *m = model("", "", "", 0);
	char *p = strstr(m, "node trimesh m");
	memcpy(p, "node trimsh  m", 14);
	refused(m, "t.mdl:8:6:", "unknown node type 'trimsh'");
	free(m);
}

/* A.2 / A.4: unknown keywords and statements another node type holds. */
static void test_statements(void **state)
{
	(void)state;
	char *t = model("", "  foo 1 2 3\n", "", 0);
	refused(t, "t.mdl:10:3:", "unknown statement 'foo' in node 'm'");
	free(t);
	t = model("", "  birthrate 3\n", "", 0);
	refused(t, "t.mdl:10:3:", "'birthrate' cannot appear in node 'm' of type trimesh");
	free(t);
	t = model("", "  weights 0\n", "", 0);
	refused(t, "t.mdl:10:3:", "'weights' cannot appear in node 'm'");
	free(t);
	/* verts in a dummy */
	refused("newmodel t\nbeginmodelgeom t\nnode dummy t\n  parent NULL\n  verts 1\n    0 0 0\nendnode\n"
		"endmodelgeom t\ndonemodel t\n",
		"t.mdl:5:3:", "'verts' cannot appear in node 't' of type dummy");
	/* keywords real files use, deliberately ignored */
	t = model("", "  wirecolor 1 1 1\n  center undefined\n  gizmo SubAnim:Gizmo\n", "", 0);
	warned(t, 0, "", "");
	free(t);
	/* a line of numbers outside any list (rows beyond a key list's count) */
	t = model("", "  0 0\n", "", 0);
	warned(t, 1, "t.mdl:10:3:", "a line of numbers outside any list: ignored");
	free(t);
	/* model header and animation */
	t = model("  setfoo 1\n", "", "", 0);
	refused(t, "t.mdl:4:3:", "unknown statement 'setfoo' in the model header");
	free(t);
	refused("newmodel t\nbeginmodelgeom t\nnode dummy t\n  parent NULL\nendnode\nendmodelgeom t\n"
		"newanim a t\n  length 1\n  animfoo 2\ndoneanim a t\ndonemodel t\n",
		"t.mdl:9:3:", "unknown statement 'animfoo' in animation 'a'");
}

/* A.3: text after donemodel; missing donemodel / endmodelgeom / endnode / doneanim. */
static void test_structure(void **state)
{
	(void)state;
	char *t = model("", "", "", 0);
	size_t n = strlen(t);
	char *g = malloc(n + 64);
	assert_non_null(g);
	snprintf(g, n + 64, "%sgarbage\n", t);
	/* the compiler ignores it as the reference does (issue 24 item 6); a save
	 * through the mount refuses it (test_refuse.c) */
	warned(g, 1, "t.mdl:23:1:", "text after donemodel ignored");
	/* a GMax snoop trailer is not text that would be lost */
	snprintf(g, n + 64, "%s</snoopstart>\n</snoopend>\n", t);
	warned(g, 0, "", "");
	memcpy(g, t, n + 1);
	*strstr(g, "donemodel t\n") = '\0';
	refused(g, "t.mdl:22:1:", "has no 'donemodel'");
	memcpy(g, t, n + 1);
	memcpy(strstr(g, "endmodelgeom t"), "#ndmodelgeom t", 14);
	refused(g, "t.mdl:4:1:", "'beginmodelgeom' without 'endmodelgeom'");
	memcpy(g, t, n + 1);
	memcpy(strstr(g, "endnode\nendmodelgeom"), "#ndnode", 7);
	refused(g, "t.mdl:21:1:", "missing endnode");
	refused("newmodel t\nbeginmodelgeom t\nnode dummy t\n  parent NULL\nendnode\nendmodelgeom t\n"
		"newanim a t\n  length 1\ndonemodel t\n",
		"t.mdl:9:1:", "missing doneanim");
	free(g);
	free(t);
}

/* B: `undefined` values are errors, not 1 */
static void test_undefined(void **state)
{
	(void)state;
	char *t = model("setanimationscale undefined\n", "", "", 0);
	refused(t, "t.mdl:4:19:", "'undefined': not a number");
	free(t);
	t = model("", "  scale undefined\n", "", 0);
	refused(t, "t.mdl:10:9:", "'undefined'");
	free(t);
	t = model("ignorefog undefined\n", "", "", 0);
	refused(t, "t.mdl:4:11:", "'undefined': not an integer");
	free(t);
}

/* B: degenerate faces are dropped with one warning each, naming the row */
static void test_degenerate(void **state)
{
	(void)state;
	/* rows 18, 19: the two good faces; 20: repeated index; 21: zero area
	 * (0, 2, 3 lie on the line x = y) */
	char *t = model("", "", "    1 1 2 1 0 0 0 1\n    0 2 3 1 0 0 0 1\n", 2);
	lfs_error err;
	lfs_warnings w = { 0 };
	uint8_t *out = NULL;
	size_t on = 0;
	assert_int_equal(nwn_compile_ex("t.mdl", (const uint8_t *)t, strlen(t), NULL, NULL, &w, &out, &on, &err),
			 LFS_OK);
	assert_int_equal(w.count, 2);
	assert_non_null(strstr(w.text, "t.mdl:20:5: warning: node 'm': face 2 (1 1 2) has a repeated vertex index: dropped\n"));
	assert_non_null(strstr(w.text, "t.mdl:21:5: warning: node 'm': face 3 (0 2 3) has zero area"));
	nwn_model *m = NULL;
	assert_int_equal(nwn_mdl_decode(out, on, &m, NULL), LFS_OK);
	assert_int_equal(m->geom.nodes[1].mesh->n_faces, 2);
	nwn_model_free(m);
	free(out);
	/* without a sink the compile is the same */
	uint8_t *out2 = NULL;
	size_t on2 = 0;
	assert_int_equal(nwn_compile("t.mdl", (const uint8_t *)t, strlen(t), NULL, NULL, &out2, &on2, NULL), LFS_OK);
	free(out2);
	free(t);
}

static bool no_files(void *ctx, const char *name, uint8_t **data, size_t *n)
{
	(void)ctx;
	(void)name;
	(void)data;
	(void)n;
	return false;
}

/* B: a supermodel the lookup does not find: a warning naming it and where
 * it was looked for; the model still compiles (text order part numbers) */
static void test_missing_supermodel(void **state)
{
	(void)state;
	char *t = model("", "", "", 0);
	char *s = strstr(t, "setsupermodel t NULL");
	memcpy(s, "setsupermodel t a_ba", 20);
	lfs_error err;
	lfs_warnings w = { 0 };
	assert_int_equal(compile(t, &w, &err, no_files), LFS_OK);
	assert_int_equal(w.count, 1);
	assert_non_null(strstr(w.text, "t.mdl:2:17: warning: supermodel 'a_ba' not found (looked for 'a_ba.mdl'"));
	assert_non_null(strstr(w.text, "part numbers follow the text order"));
	free(t);
}

/* C: more than 18 bones is refused; 18 compile (the 18th in the word after
 * the 17-entry table) */
static void test_bones(void **state)
{
	(void)state;
	for (int bones = 18; bones <= 19; bones++) {
		char *t = malloc(16384);
		assert_non_null(t);
		size_t len = (size_t)snprintf(t, 16384, "newmodel t\nbeginmodelgeom t\nnode dummy t\n  parent NULL\nendnode\n");
		for (int b = 0; b < bones; b++)
			len += (size_t)snprintf(t + len, 16384 - len, "node dummy b%d\n  parent t\n  position 0 0 %d\nendnode\n",
						b, b);
		len += (size_t)snprintf(t + len, 16384 - len, "node skin s\n  parent t\n  verts %d\n", bones);
		for (int b = 0; b < bones; b++)
			len += (size_t)snprintf(t + len, 16384 - len, "    %d 0 %d\n", b % 2, b);
		len += (size_t)snprintf(t + len, 16384 - len, "  tverts 1\n    0 0 0\n  faces %d\n", bones - 2);
		for (int f = 0; f + 2 < bones; f++)
			len += (size_t)snprintf(t + len, 16384 - len, "    %d %d %d 1 0 0 0 1\n", f, f + 1, f + 2);
		len += (size_t)snprintf(t + len, 16384 - len, "  weights %d\n", bones);
		for (int b = 0; b < bones; b++)
			len += (size_t)snprintf(t + len, 16384 - len, "    b%d 1\n", b);
		snprintf(t + len, 16384 - len, "endnode\nendmodelgeom t\ndonemodel t\n");
		uint8_t *out = NULL;
		size_t on = 0;
		lfs_error err = { 0 };
		lfs_err e = nwn_compile("t.mdl", (const uint8_t *)t, strlen(t), NULL, NULL, &out, &on, &err);
		if (bones == 18) {
			if (e)
				fail_msg("18 bones refused: %s", err.msg);
			nwn_model *m = NULL;
			assert_int_equal(nwn_mdl_decode(out, on, &m, NULL), LFS_OK);
			const nwn_node *s = &m->geom.nodes[m->geom.n_nodes - 1];
			assert_string_equal(s->name, "s");
			/* bone 17 = b17 = node 18, stored at skin + 0x2D2 */
			assert_int_equal(s->mesh->skin->bone_node_numbers[17], 18);
			assert_string_equal(m->geom.nodes[18].name, "b17");
			nwn_model_free(m);
		} else {
			assert_int_not_equal(e, LFS_OK);
			assert_non_null(strstr(err.msg, "more than 18 bones"));
		}
		free(out);
		free(t);
	}
}

/* B through a structural edit: nwn_apply_structural_ex reports the
 * compiler's warnings of the edited text, and the edit lands */
static void test_apply_warns(void **state)
{
	(void)state;
	char *t = model("", "", "", 0);
	uint8_t *bin = NULL;
	size_t bn = 0;
	assert_int_equal(nwn_compile("t.mdl", (const uint8_t *)t, strlen(t), NULL, NULL, &bin, &bn, NULL), LFS_OK);
	free(t);
	/* the edit: the decoded model's text with one more (degenerate) face */
	nwn_model *m = NULL;
	assert_int_equal(nwn_mdl_decode(bin, bn, &m, NULL), LFS_OK);
	nwn_model_free(m);
	/* zero area ((0,0,0), (1,1,0), (2,2,0) lie on one line): dropped with a
	 * warning, as files compiled by nwnmdlcomp hold such faces */
	char *e = model("", "", "    0 2 3 1 0 0 0 1\n", 1);
	uint8_t *out = NULL;
	size_t on = 0;
	lfs_error err = { 0 };
	lfs_warnings w = { 0 };
	lfs_err r = nwn_apply_structural_ex(bin, bn, "model.mdl", e, strlen(e), NULL, NULL, &w, &out, &on, &err);
	if (r)
		fail_msg("structural edit refused: %s", err.msg);
	assert_int_equal(w.count, 1);
	assert_non_null(strstr(w.text, "model.mdl:20:5: warning: node 'm': face 2 (0 2 3) has zero area (its corners lie on one line): dropped"));
	free(out);
	free(e);
	/* a repeated vertex index, which no compiled file holds: typed, so a
	 * save refuses it instead of dropping it (issue 24) */
	e = model("", "", "    3 3 1 1 0 0 0 1\n", 1);
	memset(&w, 0, sizeof(w));
	r = nwn_apply_structural_ex(bin, bn, "model.mdl", e, strlen(e), NULL, NULL, &w, &out, &on, &err);
	assert_int_equal(r, LFS_ERR_PARSE);
	assert_null(out);
	assert_string_equal(err.msg, "model.mdl:20:5: error: node 'm': face 2 (3 3 1) has a repeated vertex index: it would be dropped (a face needs three different vertices)");
	free(e);
	free(bin);
}

/* The round-trip law's allowance (docs/editing.md): a face dropped with a
 * warning naming its row is not a silent loss, so the checked save
 * (lfs_view_apply) lands when the caller takes warnings; without a warning
 * sink the same drop is silent and the law refuses it at the list header. */
static void test_law_allows_warned_drop(void **state)
{
	(void)state;
	/* a third face keeps vertex (2,2,0) in the model */
	char *t = model("", "", "    1 2 3 1 0 0 0 1\n", 1);
	uint8_t *bin = NULL;
	size_t bn = 0;
	assert_int_equal(nwn_compile("t.mdl", (const uint8_t *)t, strlen(t), NULL, NULL, &bin, &bn, NULL), LFS_OK);
	free(t);
	lfs_viewset vs;
	lfs_error err = { 0 };
	assert_int_equal(lfs_views_build("t.mdl", bin, bn, NULL, &vs, &err), LFS_OK);
	const lfs_view *v = lfs_viewset_find(&vs, "model.mdl");
	assert_non_null(v);
	const char *fl = strstr(v->data, "\n  faces ");
	assert_non_null(fl);
	fl++;
	unsigned nf = (unsigned)strtoul(fl + 8, NULL, 10), line = 1;
	for (const char *p = v->data; p < fl; p++)
		line += *p == '\n';
	const char *eol = strchr(fl, '\n');
	assert_non_null(eol);
	char *e = malloc(v->size + 64);
	assert_non_null(e);
	/* the generated indices of (0,0,0), (1,1,0), (2,2,0): a zero-area face */
	const char *vl = strstr(v->data, "\n  verts ");
	assert_non_null(vl);
	int idx[3] = { -1, -1, -1 };
	static const char *const pos[3] = { "0 0 0", "1 1 0", "2 2 0" };
	unsigned nv = (unsigned)strtoul(vl + 9, NULL, 10);
	const char *row = strchr(vl + 1, '\n');
	for (unsigned i = 0; i < nv && row; i++) {
		for (int q = 0; q < 3; q++)
			if (!strncmp(row + 1, "    ", 4) && !strncmp(row + 5, pos[q], 5) && row[10] == '\n' && idx[q] < 0)
				idx[q] = (int)i;
		row = strchr(row + 1, '\n');
	}
	assert_true(idx[0] >= 0 && idx[1] >= 0 && idx[2] >= 0);
	int k = sprintf(e, "%.*s  faces %u\n    %d %d %d 1 0 0 0 1\n", (int)(fl - v->data), v->data, nf + 1,
			idx[0], idx[1], idx[2]);
	memcpy(e + k, eol + 1, v->size - (size_t)(eol + 1 - v->data));
	size_t en = (size_t)k + v->size - (size_t)(eol + 1 - v->data);
	uint8_t *out = NULL;
	size_t on = 0;
	lfs_warnings w = { 0 };
	lfs_siblings sib = { NULL, NULL, &w };
	lfs_err r = lfs_view_apply(vs.format, bin, bn, v, e, en, &sib, &out, &on, &err);
	if (r)
		fail_msg("save with a warned drop refused: %s", err.msg);
	assert_int_equal(w.count, 1);
	char at[32];
	snprintf(at, sizeof(at), "model.mdl:%u:", line + 1);
	assert_non_null(strstr(w.text, at));
	/* the result reads back as the original model */
	lfs_viewset vs2;
	assert_int_equal(lfs_views_build("t.mdl", out, on, NULL, &vs2, &err), LFS_OK);
	const lfs_view *v2 = lfs_viewset_find(&vs2, "model.mdl");
	assert_non_null(v2);
	assert_int_equal(v2->size, v->size);
	assert_memory_equal(v2->data, v->data, v->size);
	lfs_viewset_free(&vs2);
	free(out);
	out = NULL;
	r = lfs_view_apply(vs.format, bin, bn, v, e, en, NULL, &out, &on, &err);
	assert_int_equal(r, LFS_ERR_PARSE);
	assert_null(out);
	assert_int_equal(err.line, line);
	free(e);
	lfs_viewset_free(&vs);
	free(bin);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_law_allows_warned_drop),
		cmocka_unit_test(test_node_types),
		cmocka_unit_test(test_statements),
		cmocka_unit_test(test_structure),
		cmocka_unit_test(test_undefined),
		cmocka_unit_test(test_degenerate),
		cmocka_unit_test(test_missing_supermodel),
		cmocka_unit_test(test_bones),
		cmocka_unit_test(test_apply_warns),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
