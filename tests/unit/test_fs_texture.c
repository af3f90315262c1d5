/**
 * @file test_fs_texture.c
 * Texture lookup for model.mtl (src/fs/texture.c) on a folder tree made at
 * test time below the build root: case-insensitive match, nearest folder
 * first, .tga > .dds > .plt within a folder, paths relative to the model
 * folder, folders never match, hostile resrefs find nothing; then the
 * SOURCE-wide index when no ancestor has the texture: sibling folders,
 * "override" first, shallowest, bytewise smallest folder, invalidation, and
 * respath folders (absolute answers, after SOURCE, read back); then archives
 * written with the project's ERF writer: their textures and models in the
 * index after loose files, archives in bytewise path order, a model inside
 * an archive finding its own archive's first, one entry read back (V1.0 and
 * E1.0), supermodels by ResRef (lfs_texture_model_read) and the watcher's
 * names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "corpus.h"
#include "fs/texture.h"
#include "formats/nwnarchive/erf.h"
#include "formats/nwnarchive/restype.h"

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
	/* for the SOURCE-wide index */
	mk("lib");
	mk("lib/deep");
	touch("lib/deep/Wood.tga");
	touch("lib/wood.dds");
	touch("lib/stone.tga");
	mk("x");
	mk("x/Override");
	touch("x/Override/stone.tga");
	mk("m1");
	mk("M2");
	touch("m1/iron.tga");
	touch("M2/iron.tga");
	touch("m1/both.plt");
	touch("m1/both.tga");
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

static void test_index(void **state)
{
	(void)state;
	/* a sibling folder: relative to the model directory, up to the root */
	assert_string_equal(find("a/b/m.mdl", "WOOD"), "../../../lib/wood.dds"); /* shallowest */
	assert_string_equal(find("top.mdl", "wood"), "../lib/wood.dds");
	/* a folder named override (any case) beats a shallower one */
	assert_string_equal(find("a/m.mdl", "stone"), "../../x/Override/stone.tga");
	/* same depth: bytewise smallest folder ("M2" < "m1"), then .tga before .plt */
	assert_string_equal(find("a/m.mdl", "iron"), "../../M2/iron.tga");
	assert_string_equal(find("a/m.mdl", "both"), "../../m1/both.tga");
	/* the nearest-ancestor rule still comes first */
	assert_string_equal(find("lib/deep/m.mdl", "wood"), "../Wood.tga");
	/* the answer reads back through lfs_texture_read() */
	lfs_texture_ctx c;
	uint8_t *d;
	size_t n;
	lfs_texture_ctx_init(&c, rootfd, "a/b/m.mdl");
	assert_true(lfs_texture_read(&c, "iron", &d, &n));
	assert_int_equal(n, 1);
	free(d);
	lfs_texture_ctx_free(&c);
	/* folders, hostile names: nothing */
	assert_null(find("a/m.mdl", "deep"));
	assert_null(find("a/m.mdl", "lib/wood"));
	assert_null(find("a/m.mdl", ".."));
}

static void test_index_invalidate(void **state)
{
	(void)state;
	assert_non_null(find("a/m.mdl", "wood")); /* built */
	touch("lib/fresh.tga");
	assert_null(find("a/m.mdl", "fresh")); /* kept until invalidated */
	lfs_texture_index_invalidate(rootfd);
	assert_string_equal(find("a/m.mdl", "fresh"), "../../lib/fresh.tga");
	char p[8192];
	snprintf(p, sizeof(p), "%s/lib/fresh.tga", root);
	assert_int_equal(unlink(p), 0);
	lfs_texture_index_invalidate(rootfd);
	assert_null(find("a/m.mdl", "fresh"));
}

static void *lookups(void *arg)
{
	int *bad = arg;
	for (int i = 0; i < 200; i++) {
		char out[512];
		lfs_texture_ctx c;
		lfs_texture_ctx_init(&c, rootfd, "a/m.mdl");
		if (!lfs_texture_lookup(&c, "iron", out, sizeof(out)) || strcmp(out, "../../M2/iron.tga"))
			(*bad)++;
		lfs_texture_ctx_free(&c);
	}
	return NULL;
}

/* Lookups on several threads while the index is invalidated: every one answers. */
static void test_index_threads(void **state)
{
	(void)state;
	pthread_t th[4];
	int bad[4] = { 0 };
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, lookups, &bad[i]), 0);
	for (int i = 0; i < 50; i++)
		lfs_texture_index_invalidate(rootfd);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(bad[i], 0);
	}
}

static void test_respath(void **state)
{
	(void)state;
	char rp[4200], p[8600], real[PATH_MAX];
	snprintf(rp, sizeof(rp), "%s-respath", root);
	assert_int_equal(mkdir(rp, 0755), 0);
	snprintf(p, sizeof(p), "%s/Gold.tga", rp);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs("gold", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/iron.tga", rp);
	f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
	assert_non_null(realpath(rp, real));
	/* not a folder: refused, nothing changes */
	assert_int_not_equal(lfs_texture_set_respath("/nonexistent-lfs-dir"), 0);
	snprintf(p, sizeof(p), "%s/Gold.tga", rp);
	assert_int_equal(lfs_texture_set_respath(p), ENOTDIR);
	assert_null(find("a/m.mdl", "gold"));
	/* a folder outside SOURCE: absolute answer, read back */
	snprintf(p, sizeof(p), "::%s:", rp);
	assert_int_equal(lfs_texture_set_respath(p), 0);
	char want[PATH_MAX + 16];
	snprintf(want, sizeof(want), "%s/Gold.tga", real);
	assert_string_equal(find("a/m.mdl", "GOLD"), want);
	lfs_texture_ctx c;
	uint8_t *d;
	size_t n;
	lfs_texture_ctx_init(&c, rootfd, "a/m.mdl");
	assert_true(lfs_texture_read(&c, "gold", &d, &n));
	assert_int_equal(n, 4);
	assert_memory_equal(d, "gold", 4);
	free(d);
	lfs_texture_ctx_free(&c);
	/* SOURCE before respath */
	assert_string_equal(find("a/m.mdl", "iron"), "../../M2/iron.tga");
	assert_int_equal(lfs_texture_set_respath(NULL), 0);
	assert_null(find("a/m.mdl", "gold"));
	snprintf(p, sizeof(p), "rm -rf '%s'", rp);
	assert_int_equal(system(p), 0);
}

/* One resource for write_erf(). */
struct res {
	const char *resref;
	uint16_t type;
	const char *bytes;
};

/* Write archive @p rel (under root) with the project's ERF writer. */
static void write_erf(const char *rel, const char tag[4], lfs_erf_version ver, const struct res *r,
		      size_t n)
{
	lfs_erf *a = lfs_erf_new(tag, ver);
	assert_non_null(a);
	lfs_error e;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(lfs_erf_add(a, r[i].resref, r[i].type, (const uint8_t *)r[i].bytes,
					     strlen(r[i].bytes), &e),
				 LFS_OK);
	uint8_t *out;
	size_t on;
	assert_int_equal(lfs_erf_encode(a, &out, &on, &e), LFS_OK);
	lfs_erf_free(a);
	char p[8192];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(out, 1, on, f), on);
	fclose(f);
	free(out);
}

/* lfs_texture_read() of @p resref for model @p model_rel, as a string ("" when not found). */
static const char *read_tex(const char *model_rel, const char *resref)
{
	static char buf[64];
	lfs_texture_ctx c;
	uint8_t *d = NULL;
	size_t n = 0;
	lfs_texture_ctx_init(&c, rootfd, model_rel);
	buf[0] = '\0';
	if (lfs_texture_read(&c, resref, &d, &n))
		snprintf(buf, sizeof(buf), "%.*s", (int)n, (const char *)d);
	free(d);
	lfs_texture_ctx_free(&c);
	return buf;
}

/* lfs_texture_model_read() as a string ("" when not found). */
static const char *read_mdl(const char *dir, const char *name, size_t max)
{
	static char buf[64];
	uint8_t *d = NULL;
	size_t n = 0;
	buf[0] = '\0';
	if (lfs_texture_model_read(rootfd, dir, name, max, &d, &n))
		snprintf(buf, sizeof(buf), "%.*s", (int)n, (const char *)d);
	free(d);
	return buf;
}

static void test_archives(void **state)
{
	(void)state;
	mk("haks");
	const struct res a[] = {
		{ "Gem", LFS_RESTYPE_TGA, "gemA" },     { "wood", LFS_RESTYPE_TGA, "woodA" },
		{ "rock", 6, "rockplt" },               { "rock", LFS_RESTYPE_DDS, "rockdds" },
		{ "stone", LFS_RESTYPE_TGA, "stoneA" }, { "sup", LFS_RESTYPE_MDL, "supA" },
		{ "base", LFS_RESTYPE_MDL, "baseA" },
	};
	const struct res b[] = {
		{ "gem", LFS_RESTYPE_TGA, "gemB" },   { "RUBY", LFS_RESTYPE_TGA, "rubyB" },
		{ "sup", LFS_RESTYPE_MDL, "supB" },   { "inner", LFS_RESTYPE_MDL, "innerB" },
		{ "notes", 10, "not a texture" },
	};
	const struct res z[] = { { "emerald", LFS_RESTYPE_TGA, "emeraldZ" }, { "gem", LFS_RESTYPE_TGA, "gemZ" } };
	write_erf("haks/b.hak", "HAK ", LFS_ERF_V10, b, sizeof(b) / sizeof(b[0]));
	write_erf("haks/a.hak", "HAK ", LFS_ERF_V10, a, sizeof(a) / sizeof(a[0]));
	write_erf("z.erf", "ERF ", LFS_ERF_E10, z, 2);
	/* NWN2 V1.1: 32-byte ResRef field */
	const struct res n2[] = { { "nwn2_texture_name_of_32_bytes_x", LFS_RESTYPE_DDS, "n2" } };
	write_erf("haks/n2.hak", "HAK ", LFS_ERF_V11, n2, 1);
	touch("lib/deep/base.mdl");
	lfs_texture_index_invalidate(rootfd);

	/* archives after loose files: lib/wood.dds beats a.hak's wood.tga,
	 * x/Override/stone.tga beats a.hak's stone.tga */
	assert_string_equal(find("a/m.mdl", "wood"), "../../lib/wood.dds");
	assert_string_equal(find("a/m.mdl", "stone"), "../../x/Override/stone.tga");
	/* archives in bytewise path order: haks/a.hak < haks/b.hak < z.erf; the
	 * resource's name in the mount keeps the stored case */
	assert_string_equal(find("a/m.mdl", "GEM"), "../../haks/a.hak/Gem.tga");
	assert_string_equal(find("a/m.mdl", "ruby"), "../../haks/b.hak/RUBY.tga");
	assert_string_equal(find("top.mdl", "Emerald"), "../z.erf/emerald.tga");
	/* in one archive .dds before .plt; not a texture type: nothing */
	assert_string_equal(find("a/m.mdl", "rock"), "../../haks/a.hak/rock.dds");
	assert_null(find("a/m.mdl", "notes"));
	/* one entry read back: V1.0 (tables and that payload), E1.0 */
	assert_string_equal(read_tex("a/m.mdl", "gem"), "gemA");
	assert_string_equal(read_tex("a/m.mdl", "RoCk"), "rockdds");
	assert_string_equal(read_tex("a/m.mdl", "emerald"), "emeraldZ");
	assert_string_equal(find("a/m.mdl", "NWN2_texture_name_of_32_bytes_X"),
			    "../../haks/n2.hak/nwn2_texture_name_of_32_bytes_x.dds");
	assert_string_equal(read_tex("a/m.mdl", "nwn2_texture_name_of_32_bytes_x"), "n2");
	/* a model inside an archive: its own archive first, then the others */
	assert_string_equal(find("haks/b.hak/inner.mdl", "GEM"), "../gem.tga");
	assert_string_equal(read_tex("haks/b.hak/inner.mdl", "gem"), "gemB");
	assert_string_equal(find("haks/b.hak/inner.mdl", "rock"), "../../../haks/a.hak/rock.dds");
	assert_string_equal(read_tex("haks/b.hak/inner.mdl", "rock"), "rockdds");
	assert_string_equal(find("z.erf/x.mdl", "gem"), "../gem.tga");
	assert_string_equal(read_tex("z.erf/x.mdl", "gem"), "gemZ");
	/* the identity of a resource inside an archive is the archive's */
	struct stat st, sa;
	assert_true(lfs_texture_stat(rootfd, "haks/a.hak/Gem.tga", &st));
	assert_int_equal(fstatat(rootfd, "haks/a.hak", &sa, 0), 0);
	assert_int_equal(st.st_ino, sa.st_ino);
	assert_false(lfs_texture_stat(rootfd, "lib/none.tga", &st));

	/* supermodels by ResRef: loose first, then archives in order; inside
	 * an archive that archive first; bounded */
	assert_string_equal(read_mdl("a", "SUP", 1 << 20), "supA");
	assert_string_equal(read_mdl("haks/b.hak", "sup", 1 << 20), "supB");
	assert_string_equal(read_mdl("a", "base", 1 << 20), "x"); /* lib/deep/base.mdl */
	assert_string_equal(read_mdl("haks/b.hak", "inner", 1 << 20), "innerB");
	assert_string_equal(read_mdl("a", "sup", 3), "");
	assert_string_equal(read_mdl("a", "missing", 1 << 20), "");
	assert_string_equal(read_mdl("a", "../sup", 1 << 20), "");

	/* the watcher's names */
	assert_true(lfs_texture_index_name("X.HAK"));
	assert_true(lfs_texture_index_name("m.Mdl"));
	assert_true(lfs_texture_index_name("t.dds"));
	assert_true(lfs_texture_index_name("chitin.key")); /* KEYs are indexed too */
	assert_false(lfs_texture_index_name("notes.txt"));
	assert_true(lfs_texture_archive_name("mod.MOD"));

	/* a deleted archive leaves the index once invalidated */
	char p[8192];
	snprintf(p, sizeof(p), "%s/z.erf", root);
	assert_int_equal(unlink(p), 0);
	assert_non_null(find("a/m.mdl", "emerald"));
	lfs_texture_index_invalidate(rootfd);
	assert_null(find("a/m.mdl", "emerald"));
}

/* Read @p path (absolute) whole into *n bytes (malloc'd), or NULL. */
static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	uint8_t *d = NULL;
	size_t cap = 0, len = 0, k;
	do {
		if (len == cap && !(d = realloc(d, cap = cap * 2 + 65536)))
			break;
		k = fread(d + len, 1, cap - len, f);
		len += k;
	} while (k > 0);
	fclose(f);
	*n = len;
	return d;
}

/*
 * KEY/BIF resources in the index (the base game, last in precedence): the
 * corpus' generated KEY+BIF set (neverwinter.nim's nwn_key_pack), a copy of
 * the KEY whose textures BIF is missing (its textures are not indexed), a
 * hak and a loose file that beat the KEY.
 */
static void test_keys(void **state)
{
	(void)state;
	const char *corpus = getenv("LFS_CORPUS");
	char src[4096], p[8192];
	static char cmd[65536];
	snprintf(src, sizeof(src), "%s/archives/gen/nwn_key_pack/v1", corpus ? corpus : "");
	snprintf(p, sizeof(p), "%s/gen_v1.key", src);
	if (!corpus || access(p, R_OK) != 0)
		LFS_SKIP("no corpus archives/gen/nwn_key_pack/v1/gen_v1.key");
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s/game/data' '%s/a_first/data' '%s/mine' && cp '%s/gen_v1.key' '%s/game/' && "
		 "cp '%s/data/models.bif' '%s/data/textures.bif' '%s/game/data/' && "
		 "cp '%s/gen_v1.key' '%s/a_first/g2.key' && cp '%s/data/models.bif' '%s/a_first/data/'",
		 root, root, root, src, root, src, src, root, src, root, src, root);
	assert_int_equal(system(cmd), 0);
	touch("mine/black.tga"); /* loose beats the KEY */
	const struct res h[] = { { "w_metal_tex", LFS_RESTYPE_TGA, "hakmetal" } };
	write_erf("mine/over.hak", "HAK ", LFS_ERF_V10, h, 1); /* a hak beats the KEY */
	lfs_texture_index_invalidate(rootfd);

	/* .tga before .dds inside the KEY; a_first/g2.key has no textures BIF */
	assert_string_equal(find("mine/m.mdl", "C_ARIBETH"), "../../game/gen_v1.key/c_aribeth.tga");
	assert_string_equal(find("mine/m.mdl", "black"), "../black.tga");
	assert_string_equal(find("mine/m.mdl", "w_metal_tex"), "../../mine/over.hak/w_metal_tex.tga");
	assert_string_equal(read_tex("mine/m.mdl", "w_metal_tex"), "hakmetal");

	/* the bytes come from the BIF: the input file nwn_key_pack packed */
	lfs_texture_ctx c;
	uint8_t *d = NULL, *want = NULL;
	size_t n = 0, wn = 0;
	lfs_texture_ctx_init(&c, rootfd, "mine/m.mdl");
	assert_true(lfs_texture_read(&c, "c_aribeth", &d, &n));
	lfs_texture_ctx_free(&c);
	snprintf(p, sizeof(p),
		 "%s/nwn/tree/rollnw/tests/test_data/renderer/nwn_dump_user/development/tga/c_aribeth.tga",
		 corpus);
	want = slurp(p, &wn);
	if (want) {
		assert_int_equal(n, wn);
		assert_memory_equal(d, want, n);
	} else {
		assert_int_equal(n, 65616); /* inputs.tsv's size */
	}
	free(d);
	free(want);
	struct stat st;
	assert_true(lfs_texture_stat(rootfd, "game/gen_v1.key/c_aribeth.tga", &st));

	/* supermodels by ResRef reach the KEY's models too */
	assert_true(lfs_texture_model_read(rootfd, "mine", "c_aribeth", 1 << 22, &d, &n));
	assert_true(n > 1000);
	free(d);

	/* without its BIFs the KEY gives nothing */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/game/data'", root);
	assert_int_equal(system(cmd), 0);
	lfs_texture_index_invalidate(rootfd);
	assert_null(find("mine/m.mdl", "c_aribeth"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_nearest_and_preference),
		cmocka_unit_test(test_no_match),
		cmocka_unit_test(test_listing_cache),
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_index_invalidate),
		cmocka_unit_test(test_index_threads),
		cmocka_unit_test(test_respath),
		cmocka_unit_test(test_archives),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
