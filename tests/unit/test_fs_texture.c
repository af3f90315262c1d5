/**
 * @file test_fs_texture.c
 * Texture lookup for model.mtl (src/fs/texture.c) on a folder tree made at
 * test time below the build root: case-insensitive match, nearest folder
 * first, .tga > .dds > .plt within a folder, paths relative to the model
 * folder, folders never match, hostile resrefs find nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/texture.h"

static char root[4096];
static int rootfd = -1;

static void touch(const char *rel)
{
	char p[8192];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs("x", f);
	fclose(f);
}

static void mk(const char *rel)
{
	char p[8192];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static int setup(void **state)
{
	(void)state;
	const char *b = getenv("LFS_BUILD_ROOT");
	snprintf(root, sizeof(root), "%s/test-fs-texture-XXXXXX", b ? b : ".");
	if (!mkdtemp(root))
		return -1;
	mk("a");
	mk("a/b");
	mk("a/b/dir.tga");
	touch("Shared.TGA");
	touch("a/b/foo.dds");
	touch("a/b/FOO.tga");
	touch("a/b/bar.plt");
	touch("a/Bar.tga");
	touch("a/b/dup.tga");
	touch("a/b/DUP.tga");
	touch("a/b/notes.txt");
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

static const char *find(const char *model_rel, const char *resref)
{
	static char out[512];
	lfs_texture_ctx c;
	lfs_texture_ctx_init(&c, rootfd, model_rel);
	bool ok = lfs_texture_lookup(&c, resref, out, sizeof(out));
	lfs_texture_ctx_free(&c);
	return ok ? out : NULL;
}

static void test_nearest_and_preference(void **state)
{
	(void)state;
	/* same folder: .tga beats .dds, case-insensitive */
	assert_string_equal(find("a/b/m.mdl", "foo"), "../FOO.tga");
	assert_string_equal(find("a/b/m.mdl", "FoO"), "../FOO.tga");
	/* nearest folder wins even with a worse extension */
	assert_string_equal(find("a/b/m.mdl", "bar"), "../bar.plt");
	assert_string_equal(find("a/m.mdl", "bar"), "../Bar.tga");
	/* ancestors up to the root, relative to the model folder */
	assert_string_equal(find("a/b/m.mdl", "shared"), "../../../Shared.TGA");
	assert_string_equal(find("top.mdl", "SHARED"), "../Shared.TGA");
	/* names differing only in case: bytewise smallest */
	assert_string_equal(find("a/b/m.mdl", "dup"), "../DUP.tga");
}

static void test_no_match(void **state)
{
	(void)state;
	assert_null(find("a/b/m.mdl", "missing"));
	assert_null(find("a/b/m.mdl", "notes"));   /* not a texture extension */
	assert_null(find("a/b/m.mdl", "dir"));     /* a folder named dir.tga */
	assert_null(find("a/b/m.mdl", ""));
	assert_null(find("a/b/m.mdl", "../Shared"));
	assert_null(find("a/b/m.mdl", "Shared.TGA"));
	assert_null(find("a/b/m.mdl", "sha*"));
	/* answer does not fit: false, not truncated */
	lfs_texture_ctx c;
	char small[8];
	lfs_texture_ctx_init(&c, rootfd, "a/b/m.mdl");
	assert_false(lfs_texture_lookup(&c, "shared", small, sizeof(small)));
	lfs_texture_ctx_free(&c);
}

static void test_listing_cache(void **state)
{
	(void)state;
	lfs_texture_ctx c;
	char out[256];
	lfs_texture_ctx_init(&c, rootfd, "a/b/m.mdl");
	assert_true(lfs_texture_lookup(&c, "foo", out, sizeof(out)));
	assert_true(lfs_texture_lookup(&c, "shared", out, sizeof(out)));
	assert_int_equal(c.n_dirs, 3); /* a/b, a, root: each listed once */
	assert_true(lfs_texture_lookup(&c, "bar", out, sizeof(out)));
	assert_int_equal(c.n_dirs, 3);
	lfs_texture_ctx_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nearest_and_preference),
		cmocka_unit_test(test_no_match),
		cmocka_unit_test(test_listing_cache),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
