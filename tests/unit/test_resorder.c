/**
 * @file test_resorder.c
 * Which copy wins (src/fs/resorder.c, texture.c) on small game installs
 * built here in C: KEY V1 / BIF V1 files (BioWare, "Key and BIF File
 * Formats" §2–3), ERF V1.0 archives (the project's writer, erf.h) and a
 * module.ifo (GFF V3.2, BioWare "Generic File Format") in a .mod or an
 * unpacked module folder. One case per rule, each failing if the rule goes:
 * 1.69 (later key wins, patch keys, texturepacks over keys, override over
 * texturepacks and keys, the module over override, listed haks over the
 * module, first-listed hak first, listed over unlisted haks, asset-folder
 * loose files over keys, install loose files last); NWN:EE (loc key over
 * base key, ovr over keys, lang ovr over ovr, haks over ovr, development/
 * over haks); an unpacked module folder (its haks found in hak/ and
 * elsewhere); the lines of lfs_texture_resources_text() and the texture
 * lookup's answer through the same rule.
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

#include "corpus.h"
#include "common/strbuf.h"
#include "formats/nwnarchive/erf.h"
#include "formats/nwnarchive/restype.h"
#include "fs/resorder.h"
#include "fs/texture.h"

static char root[4096];

/* ---- writers ---------------------------------------------------------------- */

struct buf {
	uint8_t *d;
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	b->d = realloc(b->d, b->n + n + 1);
	assert_non_null(b->d);
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

static void p32(struct buf *b, uint32_t v)
{
	uint8_t p[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	put(b, p, 4);
}

static void p16(struct buf *b, uint16_t v)
{
	uint8_t p[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	put(b, p, 2);
}

static void write_file(const char *rel, const void *d, size_t n)
{
	char p[8192];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	char *s = strrchr(p, '/');
	*s = '\0';
	char cmd[8300];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
	assert_int_equal(system(cmd), 0);
	*s = '/';
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(d, 1, n, f), n);
	fclose(f);
}

static void touch(const char *rel)
{
	write_file(rel, "x", 1);
}

struct res {
	const char *resref;
	uint16_t type;
};

/* ERF-family archive @p rel: each resource's payload is its ResRef. */
static void write_erf(const char *rel, const char tag[4], const struct res *r, size_t n,
		      const uint8_t *ifo, size_t ifon)
{
	lfs_erf *a = lfs_erf_new(tag, LFS_ERF_V10);
	lfs_error e;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(lfs_erf_add(a, r[i].resref, r[i].type, (const uint8_t *)r[i].resref,
					     strlen(r[i].resref), &e), LFS_OK);
	if (ifo)
		assert_int_equal(lfs_erf_add(a, "module", 2014, ifo, ifon, &e), LFS_OK);
	uint8_t *out;
	size_t on;
	assert_int_equal(lfs_erf_encode(a, &out, &on, &e), LFS_OK);
	lfs_erf_free(a);
	write_file(rel, out, on);
	free(out);
}

/*
 * KEY V1 @p krel naming one BIF @p bifname (as stored, `\` separated), and
 * that BIF V1 written at each of @p bifrel (NULL-terminated) — several
 * places so that the test holds whether BIF paths are taken relative to the
 * KEY's folder or to the install root.
 */
static void write_key(const char *krel, const char *bifname, const char *const *bifrel,
		      const struct res *r, uint32_t n)
{
	struct buf bif = { 0 };
	put(&bif, "BIFFV1  ", 8);
	p32(&bif, n);
	p32(&bif, 0);
	p32(&bif, 20);
	uint32_t off = 20 + 16 * n;
	for (uint32_t i = 0; i < n; i++) {
		p32(&bif, i); /* ID: index (x = 0, as patch BIFs) */
		p32(&bif, off);
		p32(&bif, (uint32_t)strlen(r[i].resref));
		p32(&bif, r[i].type);
		off += (uint32_t)strlen(r[i].resref);
	}
	for (uint32_t i = 0; i < n; i++)
		put(&bif, r[i].resref, strlen(r[i].resref));
	for (const char *const *b = bifrel; *b; b++)
		write_file(*b, bif.d, bif.n);

	struct buf k = { 0 };
	uint32_t nl = (uint32_t)strlen(bifname) + 1;
	uint32_t ft = 64, names = ft + 12, kt = names + nl;
	put(&k, "KEY V1  ", 8);
	p32(&k, 1);
	p32(&k, n);
	p32(&k, ft);
	p32(&k, kt);
	p32(&k, 125);
	p32(&k, 1);
	uint8_t z[32] = { 0 };
	put(&k, z, 32);
	p32(&k, (uint32_t)bif.n);
	p32(&k, names);
	p16(&k, (uint16_t)nl);
	p16(&k, 1);
	put(&k, bifname, nl);
	for (uint32_t i = 0; i < n; i++) {
		char rr[16] = { 0 };
		memcpy(rr, r[i].resref, strlen(r[i].resref));
		put(&k, rr, 16);
		p16(&k, r[i].type);
		p32(&k, i); /* BIF 0, index i */
	}
	write_file(krel, k.d, k.n);
	free(k.d);
	free(bif.d);
}

/* A module.ifo (GFF V3.2) whose Mod_HakList is @p haks, laid out per BioWare's GFF document. */
static uint8_t *make_ifo(const char *const *haks, uint32_t nh, size_t *n)
{
	struct buf st = { 0 }, fl = { 0 }, lab = { 0 }, fd = { 0 }, li = { 0 };
	char l[32] = "Mod_HakList\0\0\0\0\0Mod_Hak";
	put(&lab, l, 32);
	/* struct 0: the top, one field (the list: field nh) */
	p32(&st, 0xFFFFFFFFu);
	p32(&st, nh);
	p32(&st, 1);
	p32(&li, nh);
	for (uint32_t i = 0; i < nh; i++) {
		p32(&st, 8);
		p32(&st, i); /* its one field */
		p32(&st, 1);
		p32(&fl, 10);
		p32(&fl, 1);
		p32(&fl, (uint32_t)fd.n);
		p32(&fd, (uint32_t)strlen(haks[i]));
		put(&fd, haks[i], strlen(haks[i]));
		p32(&li, i + 1);
	}
	p32(&fl, 15);
	p32(&fl, 0);
	p32(&fl, 0);
	struct buf o = { 0 };
	put(&o, "IFO V3.2", 8);
	struct buf *parts[6] = { &st, &fl, &lab, &fd, NULL, &li };
	uint32_t cnt[6] = { nh + 1, nh + 1, 2, (uint32_t)fd.n, 0, (uint32_t)li.n };
	uint32_t off = 56;
	for (int i = 0; i < 6; i++) {
		p32(&o, off);
		p32(&o, cnt[i]);
		off += parts[i] ? (uint32_t)parts[i]->n : 0;
	}
	for (int i = 0; i < 6; i++)
		if (parts[i]) {
			if (parts[i]->n)
				put(&o, parts[i]->d, parts[i]->n);
			free(parts[i]->d);
		}
	*n = o.n;
	return o.d;
}

/* ---- helpers ---------------------------------------------------------------- */

static int open_sub(const char *sub)
{
	char p[8192];
	snprintf(p, sizeof(p), "%s/%s", root, sub);
	int fd = open(p, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	return fd;
}

static char *text_of(const char *sub)
{
	int fd = open_sub(sub);
	lfs_sb sb = { 0 };
	assert_true(lfs_texture_resources_text(fd, &sb));
	close(fd);
	lfs_sb_putc(&sb, '\0');
	return lfs_sb_take(&sb, NULL);
}

/* The line of @p text for "@p what<TAB>" (without its newline), or "". */
static const char *line(const char *text, const char *what)
{
	static char out[2048];
	size_t wl = strlen(what);
	out[0] = '\0';
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		size_t ll = e ? (size_t)(e - p) : strlen(p);
		if (ll > wl && !memcmp(p, what, wl) && p[wl] == '\t') {
			snprintf(out, sizeof(out), "%.*s", (int)ll, p);
			return out;
		}
		p += ll + (e ? 1 : 0);
	}
	return out;
}

static const char *find_tex(const char *sub, const char *model_rel, const char *resref)
{
	static char out[512];
	int fd = open_sub(sub);
	lfs_texture_ctx c;
	lfs_texture_ctx_init(&c, fd, model_rel);
	bool ok = lfs_texture_lookup(&c, resref, out, sizeof(out));
	lfs_texture_ctx_free(&c);
	close(fd);
	return ok ? out : "";
}

static int setup(void **state)
{
	(void)state;
	const char *b = getenv("LFS_BUILD_ROOT");
	snprintf(root, sizeof(root), "%s/test-resorder-XXXXXX", b ? b : ".");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[8300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- 1.69 --------------------------------------------------------------- */

static void test_169(void **state)
{
	(void)state;
	const uint16_t T = LFS_RESTYPE_TGA;
	/* the game one level below SOURCE, assets beside it */
	const struct res chitin[] = { { "tex1", T }, { "tex2", T }, { "tex3", T }, { "tex4", T },
				      { "tex6", T }, { "po_x", T }, { "c_a", LFS_RESTYPE_MDL } };
	const char *const cb[] = { "s169/nwn/data/base.bif", NULL };
	write_key("s169/nwn/chitin.key", "data\\base.bif", cb, chitin, 7);
	const struct res xp1[] = { { "tex1", T } };
	const char *const x1b[] = { "s169/nwn/data/xp1.bif", NULL };
	write_key("s169/nwn/xp1.key", "data\\xp1.bif", x1b, xp1, 1);
	const struct res xp2[] = { { "tex2", T } };
	const char *const x2b[] = { "s169/nwn/data/xp2.bif", NULL };
	write_key("s169/nwn/xp2.key", "data\\xp2.bif", x2b, xp2, 1);
	const char *const x2p[] = { "s169/nwn/data/xp2patch.bif", NULL };
	write_key("s169/nwn/XP2Patch.key", "data\\xp2patch.bif", x2p, xp2, 1);
	const struct res tp[] = { { "tex3", T }, { "tex4", T } };
	write_erf("s169/nwn/texturepacks/tp.erf", "ERF ", tp, 2, NULL, 0);
	touch("s169/nwn/override/tex4.tga");
	touch("s169/nwn/override/tex5.tga");
	touch("s169/nwn/override/hk2.tga");
	touch("s169/nwn/portraits/po_x.tga");
	touch("s169/assets/tex6.tga");
	/* the module: haks Top then bottom (bytewise "bottom" < "top") */
	const char *haks[] = { "Top", "bottom" };
	size_t ifon;
	uint8_t *ifo = make_ifo(haks, 2, &ifon);
	const struct res mod[] = { { "tex5", T }, { "modres", T }, { "hk4", T } };
	write_erf("s169/nwn/modules/mymod.mod", "MOD ", mod, 3, ifo, ifon);
	free(ifo);
	const struct res top[] = { { "hk1", T } };
	const struct res bottom[] = { { "hk1", T }, { "hk3", T }, { "hk4", T } };
	const struct res other[] = { { "hk2", T }, { "hk3", T } };
	write_erf("s169/nwn/hak/top.hak", "HAK ", top, 1, NULL, 0);
	write_erf("s169/nwn/hak/bottom.hak", "HAK ", bottom, 3, NULL, 0);
	write_erf("s169/nwn/hak/aother.hak", "HAK ", other, 2, NULL, 0);

	char *t = text_of("s169");
	/* later key wins; a patch key above what it patches (xoreos nwn.cpp order) */
	assert_string_equal(line(t, "tex1.tga"), "tex1.tga\tnwn/xp1.key/tex1.tga\tnwn/chitin.key/tex1.tga");
	assert_string_equal(line(t, "tex2.tga"),
			    "tex2.tga\tnwn/XP2Patch.key/tex2.tga\tnwn/xp2.key/tex2.tga\tnwn/chitin.key/tex2.tga");
	/* an ERF (texturepack) over the keys; override over both */
	assert_string_equal(line(t, "tex3.tga"), "tex3.tga\tnwn/texturepacks/tp.erf/tex3.tga\tnwn/chitin.key/tex3.tga");
	assert_string_equal(line(t, "tex4.tga"),
			    "tex4.tga\tnwn/override/tex4.tga\tnwn/texturepacks/tp.erf/tex4.tga\tnwn/chitin.key/tex4.tga");
	/* the module over override (NWNWiki "Override") */
	assert_string_equal(line(t, "tex5.tga"), "tex5.tga\tnwn/modules/mymod.mod/tex5.tga\tnwn/override/tex5.tga");
	/* listed haks: first listed wins, over the module, over unlisted haks */
	assert_string_equal(line(t, "hk1.tga"), "hk1.tga\tnwn/hak/top.hak/hk1.tga\tnwn/hak/bottom.hak/hk1.tga");
	assert_string_equal(line(t, "hk4.tga"), "hk4.tga\tnwn/hak/bottom.hak/hk4.tga\tnwn/modules/mymod.mod/hk4.tga");
	assert_string_equal(line(t, "hk3.tga"), "hk3.tga\tnwn/hak/bottom.hak/hk3.tga\tnwn/hak/aother.hak/hk3.tga");
	/* an unlisted hak is an ordinary archive: override beats it */
	assert_string_equal(line(t, "hk2.tga"), "hk2.tga\tnwn/override/hk2.tga\tnwn/hak/aother.hak/hk2.tga");
	/* asset-folder loose files beat keys (today's rule); install loose files come last */
	assert_string_equal(line(t, "tex6.tga"), "tex6.tga\tassets/tex6.tga\tnwn/chitin.key/tex6.tga");
	assert_string_equal(line(t, "po_x.tga"), "po_x.tga\tnwn/chitin.key/po_x.tga\tnwn/portraits/po_x.tga");
	/* every type: the module's own module.ifo, a model */
	assert_string_equal(line(t, "module.ifo"), "module.ifo\tnwn/modules/mymod.mod/module.ifo");
	assert_string_equal(line(t, "c_a.mdl"), "c_a.mdl\tnwn/chitin.key/c_a.mdl");
	/* sorted case-insensitively by ResRef */
	const char *a = strstr(t, "\nhk1.tga"), *z = strstr(t, "\nmodres.tga");
	assert_non_null(a);
	assert_non_null(z);
	assert_true(a < z);
	free(t);
	/* the texture lookup answers through the same rule */
	assert_string_equal(find_tex("s169", "m/x.mdl", "HK1"), "../../nwn/hak/top.hak/hk1.tga");
	assert_string_equal(find_tex("s169", "m/x.mdl", "tex5"), "../../nwn/modules/mymod.mod/tex5.tga");
	assert_string_equal(find_tex("s169", "m/x.mdl", "tex1"), "../../nwn/xp1.key/tex1.tga");
}

/* ---- NWN:EE ---------------------------------------------------------------- */

static void test_ee(void **state)
{
	(void)state;
	const uint16_t T = LFS_RESTYPE_TGA;
	const struct res base[] = { { "e1", T }, { "e2", T }, { "e5", T } };
	/* data\base.bif: relative to the install root (the game) or the KEY's folder (today) */
	const char *const bb[] = { "see/data/base.bif", "see/data/data/base.bif", NULL };
	write_key("see/data/nwn_base.key", "data\\base.bif", bb, base, 3);
	const struct res loc[] = { { "e1", T } };
	const char *const lb[] = { "see/lang/en/data/loc.bif", "see/loc.bif", NULL };
	write_key("see/lang/en/data/nwn_base_loc.key", "loc.bif", lb, loc, 1);
	touch("see/ovr/e2.tga");
	touch("see/ovr/e5.tga");
	touch("see/lang/en/data/ovr/e5.tga");
	touch("see/ovr/e4.tga");
	touch("see/development/e3.tga");
	const char *haks[] = { "eehak" };
	size_t ifon;
	uint8_t *ifo = make_ifo(haks, 1, &ifon);
	write_erf("see/modules/eemod.mod", "MOD ", NULL, 0, ifo, ifon);
	free(ifo);
	const struct res hk[] = { { "e3", T }, { "e4", T } };
	write_erf("see/hak/EEHAK.HAK", "HAK ", hk, 2, NULL, 0);

	char *t = text_of("see");
	/* nwn_base_loc.key over nwn_base.key (neverwinter.nim game.nim order) */
	assert_string_equal(line(t, "e1.tga"),
			    "e1.tga\tlang/en/data/nwn_base_loc.key/e1.tga\tdata/nwn_base.key/e1.tga");
	/* ovr/ over the keys; lang/<xx>/data/ovr over ovr/ */
	assert_string_equal(line(t, "e2.tga"), "e2.tga\tovr/e2.tga\tdata/nwn_base.key/e2.tga");
	assert_string_equal(line(t, "e5.tga"),
			    "e5.tga\tlang/en/data/ovr/e5.tga\tovr/e5.tga\tdata/nwn_base.key/e5.tga");
	/* the module's hak over ovr/; development/ over the hak (nwn.wiki "HAK") */
	assert_string_equal(line(t, "e4.tga"), "e4.tga\thak/EEHAK.HAK/e4.tga\tovr/e4.tga");
	assert_string_equal(line(t, "e3.tga"), "e3.tga\tdevelopment/e3.tga\thak/EEHAK.HAK/e3.tga");
	free(t);

	/* the scan itself */
	int fd = open_sub("see");
	lfs_resorder o;
	lfs_resorder_scan(fd, &o);
	close(fd);
	assert_int_equal(o.ninst, 1);
	assert_string_equal(o.inst[0], "");
	assert_int_equal(o.ndev, 1);
	assert_string_equal(o.module, "modules/eemod.mod");
	assert_int_equal(o.nhaks, 1);
	assert_string_equal(o.haks[0], "hak/EEHAK.HAK");
	lfs_resorder_free(&o);
	assert_true(lfs_resorder_key_rank("NWN_BASE_LOC.KEY") > lfs_resorder_key_rank("nwn_base.key"));
	assert_true(lfs_resorder_key_rank("xp3.key") > lfs_resorder_key_rank("xp2patch.key"));
	assert_int_equal(lfs_resorder_key_rank("mine.key"), 0);
}

/* ---- an unpacked module folder; an asset folder ------------------------------ */

static void test_unpacked_module(void **state)
{
	(void)state;
	const uint16_t T = LFS_RESTYPE_TGA;
	const char *haks[] = { "h2", "h1" };
	size_t ifon;
	uint8_t *ifo = make_ifo(haks, 2, &ifon);
	write_file("sum/temp0/module.ifo", ifo, ifon);
	free(ifo);
	touch("sum/temp0/um.tga");
	touch("sum/temp0/u2.tga");
	touch("sum/a/override/um.tga");
	const struct res h1[] = { { "u2", T }, { "u3", T } };
	const struct res h2[] = { { "u3", T } };
	write_erf("sum/hak/h1.hak", "HAK ", h1, 2, NULL, 0);
	write_erf("sum/elsewhere/deep/h2.hak", "HAK ", h2, 1, NULL, 0); /* found anywhere */
	write_erf("sum/aa/h1.hak", "HAK ", h2, 1, NULL, 0); /* hak/ preferred to a bytewise smaller path */
	char *t = text_of("sum");
	assert_string_equal(line(t, "um.tga"), "um.tga\ttemp0/um.tga\ta/override/um.tga");
	assert_string_equal(line(t, "u2.tga"), "u2.tga\thak/h1.hak/u2.tga\ttemp0/u2.tga");
	assert_string_equal(line(t, "u3.tga"),
			    "u3.tga\telsewhere/deep/h2.hak/u3.tga\thak/h1.hak/u3.tga\taa/h1.hak/u3.tga");
	free(t);

	/* no install, no module: today's asset-folder rule, unchanged */
	touch("sasset/b/override/x.tga");
	touch("sasset/x.tga");
	const struct res xa[] = { { "x", T }, { "y", T } };
	write_erf("sasset/b.hak", "HAK ", xa, 2, NULL, 0);
	write_erf("sasset/a.hak", "HAK ", xa + 1, 1, NULL, 0);
	t = text_of("sasset");
	assert_string_equal(line(t, "x.tga"), "x.tga\tb/override/x.tga\tx.tga\tb.hak/x.tga");
	assert_string_equal(line(t, "y.tga"), "y.tga\ta.hak/y.tga\tb.hak/y.tga");
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_169),
		cmocka_unit_test(test_ee),
		cmocka_unit_test(test_unpacked_module),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
