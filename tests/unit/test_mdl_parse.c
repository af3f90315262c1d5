/**
 * @file test_mdl_parse.c
 * The ASCII MDL reader (src/text/mdl_parse.h) on real and hostile text.
 *
 *  - every corpus ASCII model (nwn/ascii.txt, 459 files) and every peer
 *    decompile (nwn/peer_decompiled, 216 files) parses; the node and
 *    animation counts agree with a plain line count of `node`/`newanim`;
 *  - the real-file oddities of [N §1]–[N §2] (key in src/formats/nwn/nwn_mdl.h)
 *    are read as intended (snoop preamble, NUL bytes, CRLF, stray endlist,
 *    a count-form key list whose row is a blank line, inline aabb rows,
 *    lists with count and endlist, files without classification);
 *  - statement shapes and line:col on small texts;
 *  - malformed structure fails with the exact `file:line:col: message`;
 *  - truncations and byte flips of real files never crash (ASan/UBSan runs).
 */
#include <setjmp.h>
#include <stdbool.h>
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
#include "text/mdl_parse.h"

static mdl_doc *parse_ok(const char *text)
{
	mdl_doc *d = NULL;
	lfs_error e = { 0 };
	lfs_err r = mdl_parse("t.mdl", (const uint8_t *)text, strlen(text), &d, &e);
	if (r != LFS_OK)
		fail_msg("unexpected parse error: %s", e.msg);
	return d;
}

/* Expect a parse error whose message starts with @p prefix ("t.mdl:L:C:"). */
static void parse_fails(const char *text, const char *prefix, const char *needle)
{
	mdl_doc *d = NULL;
	lfs_error e = { 0 };
	lfs_err r = mdl_parse("t.mdl", (const uint8_t *)text, strlen(text), &d, &e);
	assert_int_equal(r, LFS_ERR_PARSE);
	assert_null(d);
	if (strncmp(e.msg, prefix, strlen(prefix)) != 0 || !strstr(e.msg, needle))
		fail_msg("message '%s' does not start with '%s' / contain '%s'", e.msg, prefix,
			 needle);
}

/* Count lines "<kw> <more>" (first token @p kw in any case), the way a
 * person would grep for them: an independent check of the node and
 * animation counts. A GMax snoop log at the top (`Node "x" has a scale that
 * is not 1`) is skipped up to its `</snoopstart>`. */
static unsigned count_kw_lines(const uint8_t *p, size_t n, const char *kw)
{
	unsigned c = 0;
	size_t kl = strlen(kw);
	size_t i = 0;
	if (n > 6 && strncasecmp((const char *)p, "<snoop", 6) == 0) {
		const char *end = NULL;
		for (size_t k = 0; k + 12 <= n && !end; k++)
			if (strncasecmp((const char *)p + k, "</snoopstart", 12) == 0)
				end = (const char *)p + k;
		if (end)
			i = (size_t)(end - (const char *)p);
	}
	for (; i < n;) {
		size_t e = i;
		while (e < n && p[e] != '\n')
			e++;
		unsigned ntok = 0;
		bool first_kw = false;
		for (size_t j = i; j < e;) {
			while (j < e && p[j] <= ' ')
				j++;
			if (j >= e)
				break;
			size_t t = j;
			while (j < e && p[j] > ' ')
				j++;
			if (ntok == 0)
				first_kw = j - t == kl && strncasecmp((const char *)p + t, kw, kl) == 0;
			ntok++;
		}
		if (first_kw && ntok >= 2)
			c++;
		i = e + 1;
	}
	return c;
}

static void check_corpus_list(char **files, size_t n, unsigned *n_nodes, unsigned *n_anims)
{
	for (size_t i = 0; i < n; i++) {
		size_t len;
		uint8_t *buf = lfs_read_file_ok(files[i], &len);
		mdl_doc *d = NULL;
		lfs_error e = { 0 };
		if (mdl_parse(files[i], buf, len, &d, &e) != LFS_OK)
			fail_msg("%s", e.msg);
		unsigned nodes = d->n_nodes;
		for (uint32_t a = 0; a < d->n_anims; a++)
			nodes += d->anims[a].n_nodes;
		unsigned want_nodes = count_kw_lines(buf, len, "node");
		unsigned want_anims = count_kw_lines(buf, len, "newanim");
		if (nodes != want_nodes || d->n_anims != want_anims)
			fail_msg("%s: %u nodes / %u anims parsed, %u / %u `node`/`newanim` lines",
				 files[i], nodes, d->n_anims, want_nodes, want_anims);
		*n_nodes += nodes;
		*n_anims += d->n_anims;
		mdl_doc_free(d);
		free(buf);
	}
}

static void test_corpus_ascii(void **state)
{
	(void)state;
	size_t n = 0;
	char **files = lfs_corpus_list("nwn", "ascii.txt", &n);
	assert_non_null(files);
	assert_int_equal(n, 459);
	unsigned nodes = 0, anims = 0;
	check_corpus_list(files, n, &nodes, &anims);
	printf("ascii corpus: %zu files, %u nodes, %u animations, 0 failures\n", n, nodes, anims);
	lfs_free_list(files);
}

static void test_corpus_peer_decompiled(void **state)
{
	(void)state;
	char prefix[4096];
	lfs_path(prefix, sizeof(prefix), "%s/nwn", lfs_corpus_dir_or_skip());
	size_t n = 0;
	char **files = lfs_corpus_list("nwn", "binary.txt", &n);
	assert_non_null(files);
	assert_int_equal(n, 216);
	/* same paths under peer_decompiled/ without the leading "tree/" */
	size_t plen = strlen(prefix) + 1;
	for (size_t i = 0; i < n; i++) {
		char *rel = files[i] + plen;
		assert_true(strncmp(rel, "tree/", 5) == 0);
		size_t sz = strlen(prefix) + strlen(rel) + 32;
		char *p = malloc(sz);
		assert_non_null(p);
		snprintf(p, sz, "%s/peer_decompiled/%s", prefix, rel + 5);
		free(files[i]);
		files[i] = p;
	}
	unsigned nodes = 0, anims = 0;
	check_corpus_list(files, n, &nodes, &anims);
	printf("peer decompiles: %zu files, %u nodes, %u animations, 0 failures\n", n, nodes, anims);
	lfs_free_list(files);
}

static mdl_doc *parse_corpus_file(const char *rel)
{
	const char *corpus = lfs_corpus_dir_or_skip();
	char path[4096];
	snprintf(path, sizeof(path), "%s/nwn/%s", corpus, rel);
	size_t len;
	uint8_t *buf = lfs_read_file_ok(path, &len);
	mdl_doc *d = NULL;
	lfs_error e = { 0 };
	if (mdl_parse(rel, buf, len, &d, &e) != LFS_OK)
		fail_msg("%s", e.msg);
	free(buf);
	return d;
}

/* Real-file oddities [N §1, §2.1–2.3]. */
static void test_corpus_oddities(void **state)
{
	(void)state;
	/* GMax snoop preamble before the first '#', snoop trailer after donemodel */
	mdl_doc *d = parse_corpus_file("tree/nwnprc/nwnprc/others/vff_red_symbl.mdl");
	assert_true(d->n_skipped_lines >= 6);
	assert_true(d->n_stmts > 0);
	assert_string_equal(d->stmts[0].head.tok[0].s, "filedependancy");
	assert_true(d->has_donemodel);
	mdl_doc_free(d);
	/* a NUL byte after donemodel */
	d = parse_corpus_file("tree/nwnprc/nwnprc/others/vid_vortex.mdl");
	assert_true(d->has_donemodel);
	assert_true(d->n_nodes > 0);
	mdl_doc_free(d);
	/* stray `endlist` lines inside nodes (8 of them) */
	d = parse_corpus_file("tree/rollnw/tests/test_data/user/development/tts01_h02_03.mdl");
	assert_int_equal(d->n_stray_endlist, 8);
	mdl_doc_free(d);
	/* `detonatekey 1` whose only row is a blank line (CRLF file) */
	d = parse_corpus_file("tree/rollnw/tests/test_data/user/development/vwp_flash_whiblu.mdl");
	assert_int_equal(d->n_blank_rows, 1);
	bool found = false;
	for (uint32_t a = 0; a < d->n_anims; a++)
		for (uint32_t i = 0; i < d->anims[a].n_nodes; i++) {
			const mdl_stmt *s = mdl_node_find(&d->anims[a].nodes[i], "detonatekey");
			if (s) {
				assert_int_equal(s->kind, MDL_ST_KEYS);
				assert_string_equal(s->name, "detonate");
				assert_int_equal(s->count, 1);
				assert_int_equal(s->n_rows, 1);
				assert_int_equal(s->rows[0].ntok, 0);
				found = true;
			}
		}
	assert_true(found);
	mdl_doc_free(d);
	/* aabb: first row on the keyword line, then indented rows, no endlist */
	d = parse_corpus_file("tree/rollnw/tests/test_data/user/development/tbw01_c09_01.mdl");
	found = false;
	for (uint32_t i = 0; i < d->n_nodes; i++) {
		const mdl_stmt *s = mdl_node_find(&d->nodes[i], "aabb");
		const mdl_stmt *f = mdl_node_find(&d->nodes[i], "faces");
		if (s) {
			assert_int_equal(s->kind, MDL_ST_LIST);
			assert_int_equal(s->count, -1);
			assert_non_null(f);
			/* a binary AABB tree over n faces has 2n-1 entries [N §2.5] */
			assert_int_equal(s->n_rows, 2 * f->n_rows - 1);
			assert_int_equal(s->rows[0].line, s->head.line);
			found = true;
		}
		const mdl_stmt *mm = mdl_node_find(&d->nodes[i], "multimaterial");
		if (mm) { /* string rows with spaces: "Walkmesh - Dirt" */
			assert_int_equal(mm->n_rows, mm->count);
			assert_string_equal(mm->rows[0].tok[0].s, "Walkmesh");
		}
	}
	assert_true(found);
	mdl_doc_free(d);
	/* newanim with the model name on the next line; no classification */
	d = parse_corpus_file("tree/rollnw/tests/test_data/user/development/ttf02_j09_02.mdl");
	assert_true(d->n_anims > 0);
	assert_string_equal(d->anims[0].name, "animloop01");
	assert_string_equal(d->anims[0].model, "");
	mdl_doc_free(d);
	d = parse_corpus_file("tree/rollnw/tests/test_data/user/development/ctl_treebtn_spel.mdl");
	assert_null(mdl_doc_find(d, "classification"));
	mdl_doc_free(d);
}

/* Statement shapes, case-insensitivity and positions on a small text. */
static void test_shapes(void **state)
{
	(void)state;
	const char *t =
		"# comment\r\n"
		"NewModel m\r\n"
		"setsupermodel m NULL\r\n"
		"classification Effect\r\n"
		"beginmodelgeom m\r\n"
		"node dummy m\r\n"
		"  parent NULL\r\n"
		"endnode\r\n"
		"NODE TriMesh  q\n"
		"  parent m\n"
		"  #part-number 3\n"
		"  position 1 2 3\n"
		"\tverts 2\n"
		"    0 0 0\n"
		"\n"
		"    1 1 1\n"
		"  endlist\n"
		"  weights 2\n"
		"    a 0.5 b 0.5\n"
		"    a 1\n"
		"  bitmap Mtl #1\n"
		"  alphakey\n"
		"    0 1\n"
		"    1 0\n"
		"  endlist\n"
		"  scaleBezierKey 1\n"
		"    0 1 2 3\n"
		"  lightningSubDivkey 0\n"
		"  detonate\n"
		"endnode\n"
		"endmodelgeom m\n"
		"newanim a m\n"
		"  length 2\n"
		"  event 0.5 hit\n"
		"  node dummy q\n"
		"    parent m\n"
		"    positionkey 1\n"
		"      0 1 2 3\n"
		"  endnode\n"
		"doneanim a m\n"
		"donemodel m\n"
		"</snoopstart>\n"; /* a GMax snoop trailer is skipped; other text is refused (test_errors) */
	mdl_doc *d = parse_ok(t);
	assert_int_equal(d->n_nodes, 2);
	assert_int_equal(d->n_anims, 1);
	assert_true(d->has_donemodel);
	assert_int_equal(d->n_skipped_lines, 1);
	const mdl_stmt *cl = mdl_doc_find(d, "CLASSIFICATION");
	assert_non_null(cl);
	assert_string_equal(mdl_stmt_arg(cl, 0), "Effect");
	assert_null(mdl_stmt_arg(cl, 1));
	const mdl_node *q = &d->nodes[1];
	assert_string_equal(q->type, "TriMesh");
	assert_string_equal(q->name, "q");
	assert_string_equal(q->parent, "m");
	assert_int_equal(q->head.line, 9);
	assert_int_equal(q->head.tok[2].col, 15);
	assert_true(q->has_part_number);
	assert_int_equal(q->part_number, 3);
	const mdl_stmt *v = mdl_node_find(q, "verts");
	assert_int_equal(v->kind, MDL_ST_LIST);
	assert_int_equal(v->count, 2);
	assert_true(v->endlist);
	assert_int_equal(v->n_rows, 2);
	assert_int_equal(v->rows[1].line, 16); /* the blank line is skipped */
	assert_int_equal(v->rows[1].tok[0].col, 5);
	assert_int_equal(v->head.tok[0].col, 2); /* after a tab */
	const mdl_stmt *w = mdl_node_find(q, "weights");
	assert_int_equal(w->n_rows, 2);
	assert_int_equal(w->rows[0].ntok, 4);
	assert_int_equal(w->rows[1].ntok, 2);
	const mdl_stmt *bm = mdl_node_find(q, "bitmap");
	assert_int_equal(bm->kind, MDL_ST_PLAIN);
	assert_int_equal(bm->head.ntok, 3); /* '#' mid-line is not a comment */
	const mdl_stmt *ak = mdl_node_find(q, "alphakey");
	assert_int_equal(ak->kind, MDL_ST_KEYS);
	assert_string_equal(ak->name, "alpha");
	assert_int_equal(ak->count, -1);
	assert_true(ak->endlist);
	assert_int_equal(ak->n_rows, 2);
	const mdl_stmt *bz = mdl_node_find(q, "scalebezierkey");
	assert_int_equal(bz->kind, MDL_ST_KEYS);
	assert_true(bz->bezier);
	assert_string_equal(bz->name, "scale");
	assert_int_equal(bz->rows[0].ntok, 4);
	const mdl_stmt *ls = mdl_node_find(q, "lightningsubdivkey");
	assert_int_equal(ls->kind, MDL_ST_KEYS);
	assert_int_equal(ls->n_rows, 0);
	const mdl_stmt *dt = mdl_node_find(q, "detonate");
	assert_int_equal(dt->kind, MDL_ST_PLAIN);
	assert_int_equal(dt->head.ntok, 1);
	const mdl_anim *a = &d->anims[0];
	assert_string_equal(a->name, "a");
	assert_string_equal(a->model, "m");
	assert_string_equal(mdl_stmt_arg(mdl_anim_find(a, "length"), 0), "2");
	assert_string_equal(mdl_stmt_arg(mdl_anim_find(a, "event"), 1), "hit");
	assert_int_equal(a->n_nodes, 1);
	const mdl_stmt *pk = mdl_node_find(&a->nodes[0], "positionkey");
	assert_int_equal(pk->n_rows, 1);
	float f;
	assert_true(mdl_tok_float(pk->rows[0].tok[3].s, &f));
	assert_true(f == 3.0f);
	int64_t iv;
	assert_true(mdl_tok_int("-12", &iv));
	assert_int_equal(iv, -12);
	assert_false(mdl_tok_int("1.5", &iv));
	assert_false(mdl_tok_int("", &iv));
	assert_false(mdl_tok_float("1.2.3", &f));
	mdl_doc_free(d);

	/* bare nodes (walkmesh side file), no newmodel, no donemodel */
	d = parse_ok("node dummy x_pwk\nparent NULL\nendnode\n");
	assert_int_equal(d->n_nodes, 1);
	assert_false(d->has_donemodel);
	mdl_doc_free(d);
	/* empty input */
	d = NULL;
	lfs_error e;
	assert_int_equal(mdl_parse("t.mdl", (const uint8_t *)"", 0, &d, &e), LFS_OK);
	assert_int_equal(d->n_nodes + d->n_stmts + d->n_anims, 0);
	mdl_doc_free(d);
}

/* Malformed structure: exact file:line:col. */
static void test_errors(void **state)
{
	(void)state;
	parse_fails("node dummy a\nparent NULL\n", "t.mdl:3:1:", "no endnode");
	parse_fails("node dummy a\n  parent NULL\n  node dummy b\nendnode\n", "t.mdl:3:3:",
		    "missing endnode");
	parse_fails("node trimesh a\n verts 3\n  0 0 0\n  1 1 1\n faces 0\nendnode\n",
		    "t.mdl:5:2:", "declares 3 row(s) but has 2");
	parse_fails("node trimesh a\n verts 2\n  0 0 0\n  1 x 1\nendnode\n", "t.mdl:4:5:",
		    "non-number 'x' in verts row");
	parse_fails("node trimesh a\n verts 1\n  0 0\nendnode\n", "t.mdl:3:3:",
		    "at least 3 expected");
	parse_fails("node trimesh a\n verts -1\nendnode\n", "t.mdl:2:8:",
		    "not a non-negative integer");
	parse_fails("node trimesh a\n verts 1 2\nendnode\n", "t.mdl:2:10:", "unexpected '2'");
	parse_fails("node dummy a\n positionkey 2\n  0 1 2 3\nendnode\n", "t.mdl:4:1:",
		    "declares 2 row(s) but has 1");
	parse_fails("node dummy a\n positionkey\n  0 1 2 3\n  1 2 b 4\nendlist\nendnode\n",
		    "t.mdl:4:7:", "non-number 'b'");
	parse_fails("node skin a\n weights 1\n  bone x\nendnode\n", "t.mdl:3:3:",
		    "declares 1 row(s) but has 0");
	parse_fails("node skin a\n weights 1\n  bone 1 other\nendnode\n", "t.mdl:3:10:",
		    "bone/weight pairs");
	parse_fails("newanim a m\n length 1\n", "t.mdl:3:1:", "no doneanim");
	parse_fails("newanim a m\nnewanim b m\ndoneanim b m\n", "t.mdl:2:1:", "missing doneanim");
	parse_fails("endnode\n", "t.mdl:1:1:", "outside of any node");
	parse_fails("node dummy\nendnode\n", "t.mdl:1:1:", "type and a name");
	parse_fails("node dummy a\n#part-number x\nendnode\n", "t.mdl:2:14:", "not an integer");
	parse_fails("<snoopstart file=x>\nno end\n", "t.mdl:1:1:", "</snoopstart>");
	/* issue 10: text after donemodel would be lost; a model file needs its
	 * donemodel and endmodelgeom */
	parse_fails("newmodel m\nbeginmodelgeom m\nendmodelgeom m\ndonemodel m\n  garbage 1\n", "t.mdl:5:3:",
		    "text after 'donemodel' (line 4): 'garbage'");
	parse_fails("newmodel m\nbeginmodelgeom m\nendmodelgeom m\n", "t.mdl:4:1:",
		    "model 'm' (line 1) has no 'donemodel'");
	parse_fails("newmodel m\nbeginmodelgeom m\nnode dummy m\n parent NULL\nendnode\ndonemodel m\n",
		    "t.mdl:2:1:", "'beginmodelgeom' without 'endmodelgeom'");
	/* the name given is used; NULL prints <input> */
	mdl_doc *d = NULL;
	lfs_error e = { 0 };
	assert_int_equal(mdl_parse(NULL, (const uint8_t *)"endnode", 7, &d, &e), LFS_ERR_PARSE);
	assert_string_equal(e.msg, "<input>:1:1: error: 'endnode' outside of any node");
	assert_int_equal(e.line, 1);
	assert_int_equal(e.col, 1);
}

/* Truncations and byte flips of real files: the parser returns OK or a
 * parse error with a position inside the text, and never crashes or leaks
 * (this test runs under ASan/UBSan in CI). */
static void test_mutations(void **state)
{
	(void)state;
	static const char *const files[] = {
		"tree/nwnprc/nwnprc/others/vff_red_symbl.mdl",
		"tree/rollnw/tests/test_data/user/development/vwp_flash_whiblu.mdl",
		"tree/rollnw/tests/test_data/user/development/ctl_treebtn_spel.mdl",
		"peer_decompiled/nwnprc/nwnprc/others/plc_dustmotes.mdl",
		"peer_decompiled/rollnw/tests/test_data/renderer/nwn_dump_user/development/mdl/it_torch_000.mdl",
	};
	static const char hostile[] = { '\0', '\n', '\r', ' ', '#', '<', '-', '9', 'x', (char)0xFF };
	const char *corpus = lfs_corpus_dir_or_skip();
	lfs_rng seed;
	lfs_rng_seed(&seed, "mdl_parse mutations", 0x9E3779B97F4A7C15ULL);
	unsigned runs = 0, ok = 0, errs = 0;
	for (size_t fi = 0; fi < sizeof(files) / sizeof(files[0]); fi++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/nwn/%s", corpus, files[fi]);
		size_t len;
		uint8_t *orig = lfs_read_file_ok(path, &len);
		uint8_t *buf = malloc(len + 1);
		assert_non_null(buf);
		unsigned lines = 1;
		for (size_t i = 0; i < len; i++)
			lines += orig[i] == '\n';
		for (int it = 0; it < 300; it++) {
			size_t n = len;
			memcpy(buf, orig, len);
			if (it % 3 == 0) {
				n = (size_t)lfs_rng_below(&seed, len + 1); /* truncation */
			} else {
				int flips = 1 + (int)lfs_rng_below(&seed, 16);
				for (int k = 0; k < flips; k++) {
					size_t at = (size_t)lfs_rng_below(&seed, len);
					buf[at] = (it % 3 == 1) ? lfs_rng_u8(&seed)
								: (uint8_t)hostile[lfs_rng_below(
									  &seed, sizeof(hostile))];
				}
			}
			mdl_doc *d = NULL;
			lfs_error e = { 0 };
			lfs_err r = mdl_parse("fuzz.mdl", buf, n, &d, &e);
			runs++;
			if (r == LFS_OK) {
				assert_non_null(d);
				ok++;
			} else {
				assert_int_equal(r, LFS_ERR_PARSE);
				assert_null(d);
				assert_true(strncmp(e.msg, "fuzz.mdl:", 9) == 0);
				/* a flipped '\r' can become '\n': at most one line per flip more */
				assert_true(e.line >= 1 && e.line <= lines + 17);
				assert_true(e.col >= 1);
				errs++;
			}
			mdl_doc_free(d);
		}
		free(buf);
		free(orig);
	}
	printf("mutations: %u runs, %u parsed, %u rejected with a position\n", runs, ok, errs);
	assert_true(errs > 0); /* the mutations do reach the error paths */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_corpus_ascii),
		cmocka_unit_test(test_corpus_peer_decompiled),
		cmocka_unit_test(test_corpus_oddities),
		cmocka_unit_test(test_mutations),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
