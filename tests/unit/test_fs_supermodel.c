/**
 * @file test_fs_supermodel.c
 * Supermodel links (src/fs/supermodel.c) on header-only NWN files made at
 * test time below the build root: the supermodel name read from hostile
 * headers (short, not binary, "NULL", empty, unterminated, with '/'); the
 * link of a model to its supermodel beside it; a missing supermodel (no
 * link, a problem naming where it looked); a cycle (ends, reported); a
 * chain longer than LFS_SUPERMODEL_DEPTH (ends, reported); an ASCII
 * supermodel (linked, the chain ends quietly) and an ASCII model's
 * `setsupermodel` line; the version the cache key takes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/supermodel.h"
#include "formats/nwn/nwn_compile.h"

#define HDR (12 + 0xA8 + 64)

static char root[4096];
static int rootfd = -1;

/* Header-only NWN binary file @p rel naming supermodel @p super. */
static void put(const char *rel, const char *super)
{
	uint8_t b[HDR + 16];
	memset(b, 0, sizeof(b));
	strncpy((char *)b + 12 + 0xA8, super, 64);
	char p[8192];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, sizeof(b), f), sizeof(b));
	fclose(f);
}

/* Binary NWN model @p rel compiled from text: a dummy root, supermodel
 * @p super, one animation @p anim (one position key: an animation is
 * listed by its tracks). */
static void model(const char *rel, const char *name, const char *super, const char *anim)
{
	char t[1024];
	int tn = snprintf(t, sizeof(t),
			  "newmodel %s\nsetsupermodel %s %s\nclassification Character\n"
			  "beginmodelgeom %s\nnode dummy %s\n  parent NULL\nendnode\nendmodelgeom %s\n"
			  "newanim %s %s\n  length 1\n  transtime 0.25\n  animroot %s\n"
			  "  node dummy %s\n    parent NULL\n    positionkey 1\n      0 0 0 0\n  endnode\n"
			  "doneanim %s %s\ndonemodel %s\n",
			  name, name, super, name, name, name, anim, name, name, name, anim, name, name);
	uint8_t *out = NULL;
	size_t n = 0;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	if (nwn_compile(rel, (const uint8_t *)t, (size_t)tn, NULL, NULL, &out, &n, &err) != LFS_OK)
		fail_msg("compile %s: %s", rel, err.msg);
	char p[8192];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(out, 1, n, f), n);
	fclose(f);
	free(out);
}

static int setup(void **state)
{
	(void)state;
	const char *b = getenv("LFS_BUILD_ROOT");
	snprintf(root, sizeof(root), "%s/test-fs-supermodel-XXXXXX", b ? b : ".");
	if (!mkdtemp(root))
		return -1;
	put("m.mdl", "s");
	put("s.mdl", "NULL");
	put("lost.mdl", "nowhere");
	model("cyc_a.mdl", "cyc_a", "cyc_b", "a1");
	model("cyc_b.mdl", "cyc_b", "CYC_A", "b1");
	for (int i = 0; i < 20; i++) {
		char r[32], nm[32], s[32], a[32];
		snprintf(r, sizeof(r), "ch%d.mdl", i);
		snprintf(nm, sizeof(nm), "ch%d", i);
		snprintf(s, sizeof(s), "ch%d", i + 1);
		snprintf(a, sizeof(a), "x%d", i);
		model(r, nm, s, i == 3 ? "x0" : a); /* ch3's animation is named as ch0's own */
	}
	put("to_ascii.mdl", "asc");
	char p[8192];
	snprintf(p, sizeof(p), "%s/asc.mdl", root);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs("# ASCII model\nnewmodel asc\n  SetSuperModel asc deeper\r\nbeginmodelgeom asc\n", f);
	fclose(f);
	rootfd = open(root, O_RDONLY | O_DIRECTORY);
	return rootfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	close(rootfd);
	char cmd[8300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_name(void **state)
{
	(void)state;
	uint8_t b[HDR];
	char out[65];
	memset(b, 0, sizeof(b));
	memcpy(b + 12 + 0xA8, "a_ba", 4);
	assert_true(lfs_supermodel_name(b, sizeof(b), out));
	assert_string_equal(out, "a_ba");
	assert_false(lfs_supermodel_name(b, sizeof(b) - 1, out)); /* header cut short */
	assert_false(lfs_supermodel_name(NULL, 0, out));
	b[0] = '#'; /* ASCII or another format */
	assert_false(lfs_supermodel_name(b, sizeof(b), out));
	b[0] = 0;
	memcpy(b + 12 + 0xA8, "null", 5);
	assert_false(lfs_supermodel_name(b, sizeof(b), out));
	memset(b + 12 + 0xA8, 0, 64);
	assert_false(lfs_supermodel_name(b, sizeof(b), out));
	memcpy(b + 12 + 0xA8, "../x", 5);
	assert_false(lfs_supermodel_name(b, sizeof(b), out));
	memset(b + 12 + 0xA8, 'q', 64); /* no NUL in the field: 64 bytes */
	assert_true(lfs_supermodel_name(b, sizeof(b), out));
	assert_int_equal(strlen(out), 64);
}

static const lfs_view *find(const lfs_viewset *vs, const char *path)
{
	return lfs_viewset_find(vs, path);
}

static void add(const char *rel, lfs_viewset *vs, lfs_sb *probs)
{
	memset(vs, 0, sizeof(*vs));
	assert_true(lfs_supermodel_add(rootfd, rel, 1 << 20, vs, probs));
	lfs_sb_putc(probs, '\0');
}

static void test_links(void **state)
{
	(void)state;
	lfs_viewset vs;
	lfs_sb p = { 0 };
	add("m.mdl", &vs, &p);
	const lfs_view *v = find(&vs, "supermodel");
	assert_non_null(v);
	assert_int_equal(v->kind, LFS_VIEW_LINK);
	assert_string_equal(v->data, "../s.mdl");
	/* s.mdl is no model that decodes: said so, nothing inherited */
	assert_non_null(strstr(p.data, "does not decode"));
	assert_int_equal(vs.n_views, 1);
	lfs_viewset_free(&vs);
	lfs_sb_free(&p);

	p = (lfs_sb){ 0 };
	add("s.mdl", &vs, &p); /* NULL: nothing, silently */
	assert_int_equal(vs.n_views, 0);
	assert_string_equal(p.data, "");
	lfs_sb_free(&p);

	p = (lfs_sb){ 0 };
	add("lost.mdl", &vs, &p);
	assert_int_equal(vs.n_views, 0);
	assert_non_null(strstr(p.data, "supermodel nowhere of lost.mdl not found: looked for nowhere.mdl"));
	lfs_sb_free(&p);
}

static void test_cycle_depth(void **state)
{
	(void)state;
	lfs_viewset vs;
	lfs_sb p = { 0 };
	add("cyc_a.mdl", &vs, &p);
	assert_string_equal(find(&vs, "supermodel")->data, "../cyc_b.mdl");
	assert_string_equal(find(&vs, "anims/b1")->data, "../supermodel/anims/b1");
	assert_int_equal(vs.n_views, 2); /* the caller's views (none here) + 2 links */
	assert_non_null(strstr(p.data, "supermodel chain of cyc_a.mdl comes back to cyc_a.mdl (a cycle)"));
	lfs_viewset_free(&vs);
	lfs_sb_free(&p);

	p = (lfs_sb){ 0 };
	add("ch0.mdl", &vs, &p);
	assert_string_equal(find(&vs, "supermodel")->data, "../ch1.mdl");
	assert_non_null(strstr(p.data, "supermodel chain longer than 16 models: not followed past ch16.mdl"));
	/* x1, x2, x4 .. x16 (ch3's is named x0), nothing from ch17 on */
	assert_non_null(find(&vs, "anims/x16"));
	assert_null(find(&vs, "anims/x17"));
	assert_null(find(&vs, "anims/x3"));
	assert_non_null(find(&vs, "anims/x0")); /* ch0 has no views here: x0 is ch3's */
	assert_int_equal(vs.n_views, 1 + 16);
	lfs_viewset_free(&vs);
	lfs_sb_free(&p);
}

/* An ASCII supermodel (a plain file in the mount): linked, the chain ends
 * there quietly; an ASCII model's own `setsupermodel` line is read. */
static void test_ascii(void **state)
{
	(void)state;
	lfs_viewset vs;
	lfs_sb p = { 0 };
	add("to_ascii.mdl", &vs, &p);
	assert_string_equal(find(&vs, "supermodel")->data, "../asc.mdl");
	assert_int_equal(vs.n_views, 1);
	assert_string_equal(p.data, "");
	lfs_viewset_free(&vs);
	lfs_sb_free(&p);
	p = (lfs_sb){ 0 };
	add("asc.mdl", &vs, &p);
	assert_int_equal(vs.n_views, 0);
	assert_non_null(strstr(p.data, "supermodel deeper of asc.mdl not found"));
	lfs_sb_free(&p);
}

static void test_version(void **state)
{
	(void)state;
	uint64_t g = lfs_supermodel_version("a/b.MDL");
	assert_int_equal(lfs_supermodel_version("a/b.tga"), 0);
	lfs_supermodel_changed();
	assert_int_equal(lfs_supermodel_version("a/b.MDL"), g + 1);
	assert_int_equal(lfs_supermodel_version("b.nod"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name),
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_cycle_depth),
		cmocka_unit_test(test_ascii),
		cmocka_unit_test(test_version),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
