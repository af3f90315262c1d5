/**
 * @file test_budget.c
 * Memory per model (-o model_memory, viewset.h): the per-thread strbuf
 * bound, the views' budget in lfs_vlist, and lfs_views_build() with
 * opts->view_budget on corpus models — a roomy budget changes nothing, a
 * tight one stops the build and leaves one read-only README.txt, a file
 * that cannot fit is not even decoded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/strbuf.h"
#include "corpus.h"
#include "registry/viewset.h"
#include "registry/vlist.h"

static void test_sb_limit(void **state)
{
	(void)state;
	assert_int_equal(lfs_sb_set_limit(1000), 0);
	assert_false(lfs_sb_limit_hit());
	lfs_sb sb = { 0 };
	char chunk[100];
	memset(chunk, 'x', sizeof(chunk));
	for (int i = 0; i < 9; i++)
		lfs_sb_put(&sb, chunk, sizeof(chunk));
	assert_true(lfs_sb_ok(&sb)); /* 900 bytes + NUL fit */
	assert_true(sb.cap <= 1000);
	lfs_sb_put(&sb, chunk, sizeof(chunk)); /* 1001 > 1000 */
	assert_false(lfs_sb_ok(&sb));
	assert_true(lfs_sb_limit_hit());
	lfs_sb_free(&sb);
	/* clearing the bound clears the flag; buffers grow freely again */
	assert_int_equal(lfs_sb_set_limit(0), 1000);
	assert_false(lfs_sb_limit_hit());
	for (int i = 0; i < 100; i++)
		lfs_sb_put(&sb, chunk, sizeof(chunk));
	assert_true(lfs_sb_ok(&sb));
	assert_int_equal(sb.len, 10000);
	lfs_sb_free(&sb);
}

static void add_text(lfs_vlist *l, const char *path, size_t n)
{
	lfs_sb sb = { 0 };
	for (size_t i = 0; i < n; i++)
		lfs_sb_putc(&sb, 'a');
	lfs_vlist_add(l, path, LFS_VIEW_TEXT, LFS_VIEW_WHOLE, false, &sb);
}

static void test_vlist_budget(void **state)
{
	(void)state;
	lfs_sb_set_limit(0);
	const size_t per = 1000 + 6 + sizeof(lfs_view); /* "a.txt" + NUL */
	lfs_vlist l = { 0 };
	l.budget = 3 * per + 8;
	add_text(&l, "a.txt", 1000);
	add_text(&l, "b.txt", 1000);
	assert_int_equal(l.n, 2);
	assert_false(l.over);
	assert_int_equal(l.bytes, 2 * per);
	/* the rest of the budget bounds the next text buffer */
	add_text(&l, "c.txt", per + 8);
	assert_true(l.failed);
	assert_true(lfs_sb_limit_hit());
	lfs_vlist_discard(&l);

	/* a text that fits the buffer bound but, with its path and entry,
	 * passes the budget: everything is dropped at once */
	lfs_sb_set_limit(0);
	memset(&l, 0, sizeof(l));
	l.budget = 3 * per + 8;
	add_text(&l, "a.txt", 1000);
	add_text(&l, "b.txt", 1000);
	add_text(&l, "c.txt", per); /* needs per + 1 <= per + 8 bytes of buffer */
	assert_true(l.over);
	assert_true(l.failed);
	assert_int_equal(l.n, 0);
	assert_null(l.v);
	add_text(&l, "e.txt", 10); /* a failed list takes nothing more */
	assert_int_equal(l.n, 0);
	lfs_vlist_discard(&l);
	lfs_sb_set_limit(0);
}

static uint8_t *corpus_file(const char *rel, size_t *n)
{
	char p[4096];
	uint8_t *b = lfs_read_file(lfs_path(p, sizeof(p), "%s/%s", lfs_corpus_dir_or_skip(), rel), n);
	if (!b)
		LFS_SKIP(rel);
	return b;
}

static size_t views_bytes(const lfs_viewset *vs)
{
	size_t s = 0;
	for (size_t i = 0; i < vs->n_views; i++)
		s += vs->views[i].size + strlen(vs->views[i].path) + 1 + sizeof(lfs_view);
	return s;
}

static void assert_notice(const lfs_viewset *vs, const char *name, unsigned mib)
{
	assert_true(vs->over_budget);
	assert_false(vs->writable);
	assert_int_equal(vs->n_views, 1);
	const lfs_view *v = lfs_viewset_find(vs, LFS_VIEWSET_NOTICE_NAME);
	assert_non_null(v);
	assert_int_equal(v->kind, LFS_VIEW_NOTICE);
	assert_false(v->writable);
	char want[64];
	snprintf(want, sizeof(want), "need more than %u MiB", mib);
	if (!strstr(v->data, want) || strncmp(v->data, name, strlen(name)) != 0 ||
	    !strstr(v->data, "mount with -o model_memory="))
		fail_msg("notice text: %s", v->data);
}

/* One model: no budget vs roomy budget vs tight vs hopeless. */
static void check_model(const char *rel)
{
	size_t n;
	uint8_t *b = corpus_file(rel, &n);
	const char *name = lfs_base_name(rel);
	lfs_sb_set_limit(0);
	lfs_viewset all, vs;
	lfs_error e;
	assert_int_equal(lfs_views_build(name, b, n, NULL, &all, &e), LFS_OK);
	assert_false(all.over_budget);
	size_t need = views_bytes(&all);

	/* roomy: the same views, byte for byte */
	lfs_view_opts o = { 0 };
	o.view_budget = LFS_VIEWSET_HELD_PER_BYTE * n + need;
	assert_true(lfs_views_may_fit(n, &o));
	assert_int_equal(lfs_views_build(name, b, n, &o, &vs, &e), LFS_OK);
	assert_false(vs.over_budget);
	assert_int_equal(vs.n_views, all.n_views);
	for (size_t i = 0; i < vs.n_views; i++) {
		assert_string_equal(vs.views[i].path, all.views[i].path);
		assert_int_equal(vs.views[i].size, all.views[i].size);
		assert_memory_equal(vs.views[i].data, all.views[i].data, all.views[i].size);
	}
	assert_int_equal(vs.writable, all.writable);
	lfs_viewset_free(&vs);

	/* tight: room for the file's worth of views, not for all of them */
	o.view_budget = LFS_VIEWSET_HELD_PER_BYTE * n + need - 1;
	assert_true(lfs_views_may_fit(n, &o));
	assert_int_equal(lfs_views_build(name, b, n, &o, &vs, &e), LFS_OK);
	assert_notice(&vs, name, (unsigned)((o.view_budget + (1u << 20) - 1) >> 20));
	assert_non_null(strstr(vs.views[0].data, "Building stopped when the views passed"));
	lfs_viewset_free(&vs);

	/* hopeless: not decoded at all — a file cut after its header and
	 * zero-filled (which would not decode) gives the same notice */
	o.view_budget = (LFS_VIEWSET_HELD_PER_BYTE + 1) * n - 1;
	assert_false(lfs_views_may_fit(n, &o));
	uint8_t *cut = calloc(n, 1);
	assert_non_null(cut);
	memcpy(cut, b, n < 64 ? n : 64);
	assert_int_equal(lfs_views_build(name, cut, n, &o, &vs, &e), LFS_OK);
	assert_notice(&vs, name, (unsigned)((o.view_budget + (1u << 20) - 1) >> 20));
	assert_non_null(strstr(vs.views[0].data, "The model file is"));
	lfs_viewset_free(&vs);
	free(cut);
	/* the bound of this thread's buffers is gone after each build */
	lfs_sb sb = { 0 };
	for (size_t i = 0; i < 2 * n; i++)
		lfs_sb_putc(&sb, 'z');
	assert_true(lfs_sb_ok(&sb));
	lfs_sb_free(&sb);
	lfs_viewset_free(&all);
	free(b);
}

static void test_build_nod(void **state)
{
	(void)state;
	check_model("nod/PLC_Cndl02.nod");
}

static void test_build_sod(void **state)
{
	(void)state;
	check_model("sod/PLC_Cndl02_1.93.sod");
}

static void test_build_nwn(void **state)
{
	(void)state;
	/* a BioWare binary with meshes and animations (many CSV views) */
	check_model("nwn/tree/rollnw/tests/test_data/user/development/c_bodak.mdl");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sb_limit),
		cmocka_unit_test(test_vlist_budget),
		cmocka_unit_test(test_build_nod),
		cmocka_unit_test(test_build_sod),
		cmocka_unit_test(test_build_nwn),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
