/**
 * @file test_nwn_ascii_views.c
 * The ASCII NWN row (src/formats/nwn/nwn_ascii_views.c, issue 26 item 4): ASCII
 * models are compiled in memory and shown through the views and the
 * thumbnail of a binary one, only once lfs_format_ascii_views(true).
 *
 * Tests:
 *  - off_by_default: before the switch an ASCII .mdl of the corpus is no
 *    model (lfs_format_for NULL, the thumbnail says not a model); after it,
 *    the row "nwn-ascii"; a binary is still "nwn-mdl".
 *  - thumb_matches_peer: for every ASCII file of the corpus that has an
 *    nwnmdlcomp compile (nwn/peer_compiled/), the thumbnail scene of the
 *    text renders (drawable triangles) and the bounding box of its opaque
 *    pixels is that of the peer binary's thumbnail within TOL_PX (material
 *    colours, no textures: the pictures differ only by what the compilers
 *    do differently, vertex splitting); when the peer draws nothing
 *    (emitter-only effects), neither does the text.
 *  - views: model.mdl is the file's own bytes, the only writable view;
 *    meshes/<node>.obj and anims/ CSVs exist and are read-only; a save of
 *    model.mdl that compiles gives the text itself, one that does not is
 *    refused `model.mdl:line:col: error`, a save of a mesh OBJ is refused.
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
#include "registry/format.h"
#include "render/thumb.h"
#include "registry/viewset.h"

#define THUMB_PX 128
#define TOL_PX 3 /* bounding boxes of the opaque pixels, each side */

static const char *g_corpus;

/* A corpus file by path relative to nwn/; NULL when missing. */
static uint8_t *nwn_file(const char *sub, const char *rel, size_t *n)
{
	char p[4096];
	return lfs_read_file(lfs_path(p, sizeof(p), "%s/nwn/%s/%s", g_corpus, sub, rel), n);
}

#define OX "krivoj-viewer/Textures/c_a_ox.mdl"

static void test_off_by_default(void **state)
{
	(void)state;
	size_t n = 0, bn = 0;
	uint8_t *t = nwn_file("tree", OX, &n);
	uint8_t *b = nwn_file("peer_compiled", OX, &bn);
	if (!t || !b) {
		free(t);
		free(b);
		LFS_SKIP("corpus: " OX " or its peer compile missing");
		return;
	}
	assert_null(lfs_format_for("c_a_ox.mdl", t, n));
	assert_null(lfs_format_named("nwn-ascii"));
	uint8_t *png = NULL;
	size_t pn = 0;
	lfs_error err = { 0 };
	assert_int_equal(lfs_views_thumbnail("c_a_ox.mdl", t, n, 128, NULL, NULL, 0, &png, &pn, &err),
			 LFS_ERR_NOTFORMAT);
	lfs_format_ascii_views(true);
	const lfs_format *f = lfs_format_for("c_a_ox.mdl", t, n);
	assert_non_null(f);
	assert_string_equal(f->name, "nwn-ascii");
	assert_ptr_equal(lfs_format_named("nwn-ascii"), f);
	assert_null(lfs_format_for("c_a_ox.txt", t, n)); /* .mdl only */
	assert_string_equal(lfs_format_for("c_a_ox.mdl", b, bn)->name, "nwn-mdl");
	assert_int_equal(lfs_views_thumbnail("c_a_ox.mdl", t, n, 128, NULL, NULL, 0, &png, &pn, &err),
			 LFS_OK);
	assert_true(pn > 100 && !memcmp(png, "\x89PNG", 4));
	free(png);
	lfs_format_ascii_views(false);
	free(t);
	free(b);
}

typedef struct bbox {
	int x0, y0, x1, y1; /* opaque pixels, inclusive; x0 > x1 when none */
} bbox;

/* Render the thumbnail scene of @p data (format @p f) at THUMB_PX, no
 * textures; the box of its opaque pixels. false when nothing is drawable. */
static bool render_box(const lfs_format *f, const uint8_t *data, size_t n, bbox *bb)
{
	lfs_thumb_scene s;
	memset(&s, 0, sizeof(s));
	lfs_view_opts o = { 0 };
	lfs_error err = { 0 };
	bool ok = false;
	*bb = (bbox){ THUMB_PX, THUMB_PX, -1, -1 };
	if (f->thumb_scene(data, n, &o, &s, &err) == LFS_OK && lfs_thumb_drawable(&s)) {
		uint8_t *rgba = NULL;
		if (lfs_thumb_render(&s, THUMB_PX, &rgba, &err) == LFS_OK) {
			for (int y = 0; y < THUMB_PX; y++)
				for (int x = 0; x < THUMB_PX; x++) {
					if (!rgba[4 * ((size_t)y * THUMB_PX + (size_t)x) + 3])
						continue;
					bb->x0 = x < bb->x0 ? x : bb->x0;
					bb->y0 = y < bb->y0 ? y : bb->y0;
					bb->x1 = x > bb->x1 ? x : bb->x1;
					bb->y1 = y > bb->y1 ? y : bb->y1;
				}
			ok = bb->x1 >= bb->x0;
		}
		free(rgba);
	}
	lfs_thumb_scene_free(&s);
	return ok;
}

static int iabs(int v)
{
	return v < 0 ? -v : v;
}

static void test_thumb_matches_peer(void **state)
{
	(void)state;
	size_t count = 0;
	char **peers = lfs_corpus_list("nwn", "ascii.txt", &count);
	lfs_test_slice(peers, &count);
	lfs_format_ascii_views(true);
	const lfs_format *bin = lfs_format_named("nwn-mdl");
	size_t compared = 0, undrawn_peer = 0;
	for (size_t i = 0; i < count; i++) {
		const char *rel = strstr(peers[i], "/nwn/tree/");
		if (!rel)
			continue;
		rel += strlen("/nwn/tree/");
		size_t n = 0, pn = 0;
		uint8_t *t = lfs_read_file(peers[i], &n);
		uint8_t *p = nwn_file("peer_compiled", rel, &pn);
		const lfs_format *f = t ? lfs_format_for(lfs_base_name(rel), t, n) : NULL;
		bbox a, b;
		if (p && f && lfs_format_for(lfs_base_name(rel), p, pn) == bin) {
			bool pb = render_box(bin, p, pn, &b);
			bool ab = render_box(f, t, n, &a);
			if (!pb) {
				/* emitter-only VFX, a source without tverts: the
				 * text draws nothing either */
				undrawn_peer++;
				if (ab)
					printf("%s: draws, its peer compile does not\n", rel);
				assert_false(ab);
			} else {
				if (!ab || iabs(a.x0 - b.x0) > TOL_PX || iabs(a.y0 - b.y0) > TOL_PX ||
				    iabs(a.x1 - b.x1) > TOL_PX || iabs(a.y1 - b.y1) > TOL_PX)
					printf("%s: ours %d,%d-%d,%d peer %d,%d-%d,%d\n", rel, a.x0, a.y0,
					       a.x1, a.y1, b.x0, b.y0, b.x1, b.y1);
				assert_true(ab);
				assert_true(iabs(a.x0 - b.x0) <= TOL_PX && iabs(a.y0 - b.y0) <= TOL_PX);
				assert_true(iabs(a.x1 - b.x1) <= TOL_PX && iabs(a.y1 - b.y1) <= TOL_PX);
				compared++;
			}
		}
		free(t);
		free(p);
	}
	lfs_format_ascii_views(false);
	lfs_free_list(peers);
	printf("(%zu ASCII thumbnails compared with their peer compile; %zu peers draw nothing)\n",
	       compared, undrawn_peer);
	if (!compared)
		LFS_SKIP("no ASCII model with a peer compile in the corpus slice");
}

static void test_views(void **state)
{
	(void)state;
	size_t n = 0;
	uint8_t *t = nwn_file("tree", OX, &n);
	if (!t) {
		LFS_SKIP("corpus: " OX " missing");
		return;
	}
	lfs_format_ascii_views(true);
	lfs_viewset vs;
	lfs_error err = { 0 };
	lfs_view_opts o = { 0 };
	assert_int_equal(lfs_views_build("c_a_ox.mdl", t, n, &o, &vs, &err), LFS_OK);
	const lfs_view *mdl = lfs_viewset_find(&vs, "model.mdl");
	assert_non_null(mdl);
	assert_int_equal(mdl->size, n);
	assert_memory_equal(mdl->data, t, n);
	assert_true(mdl->writable);
	size_t meshes = 0, csvs = 0;
	const lfs_view *mesh = NULL;
	for (size_t i = 0; i < vs.n_views; i++) {
		const lfs_view *v = &vs.views[i];
		if (v == mdl)
			continue;
		assert_false(v->writable);
		if (!strncmp(v->path, "meshes/", 7)) {
			meshes++;
			mesh = v;
		}
		csvs += !strncmp(v->path, "anims/", 6);
	}
	assert_true(meshes > 0);
	assert_true(csvs > 0);
	const lfs_format *f = lfs_format_named("nwn-ascii");

	/* a good save: a comment added, the text is saved as it is */
	size_t gn = n + 32;
	char *good = malloc(gn + 1);
	assert_non_null(good);
	memcpy(good, "# edited through the mount\n", 27);
	memcpy(good + 27, t, n);
	gn = n + 27;
	uint8_t *out = NULL;
	size_t outn = 0;
	assert_int_equal(lfs_view_apply(f, t, n, mdl, good, gn, NULL, &out, &outn, &err), LFS_OK);
	assert_int_equal(outn, gn);
	assert_memory_equal(out, good, gn);
	free(out);

	/* a bad one: a vertex coordinate that is not a number */
	char *bad = malloc(n + 1);
	assert_non_null(bad);
	memcpy(bad, t, n);
	bad[n] = '\0';
	char *v = strstr(bad, "verts ");
	assert_non_null(v);
	char *nl = strchr(v, '\n');
	assert_non_null(nl);
	nl++;
	while (*nl == ' ' || *nl == '\t')
		nl++;
	*nl = 'O'; /* the letter, not the digit */
	memset(&err, 0, sizeof(err));
	assert_int_equal(lfs_view_apply(f, t, n, mdl, bad, n, NULL, &out, &outn, &err),
			 LFS_ERR_PARSE);
	assert_null(out);
	printf("bad save: %s\n", err.msg);
	assert_true(strncmp(err.msg, "model.mdl:", 10) == 0);
	assert_non_null(strstr(err.msg, "error"));

	/* a derived view: refused */
	assert_int_equal(lfs_view_apply(f, t, n, mesh, mesh->data, mesh->size, NULL, &out, &outn,
					&err),
			 LFS_ERR_UNSUPPORTED);
	free(bad);
	free(good);
	lfs_viewset_free(&vs);
	lfs_format_ascii_views(false);
	free(t);
}

int main(void)
{
	g_corpus = lfs_corpus_dir_or_skip();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_by_default),
		cmocka_unit_test(test_thumb_matches_peer),
		cmocka_unit_test(test_views),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
