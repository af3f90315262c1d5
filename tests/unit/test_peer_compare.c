/**
 * @file test_peer_compare.c
 * Our model.mdl view vs nwnmdlcomp's decompile of the same binary.
 *
 * For every corpus binary (nwn/binary.txt) the text from lfs_views_build()
 * ("model.mdl") and the peer's text (nwn/peer_decompiled/<path without
 * "tree/">) are both read with mdl_parse() and compared node by node,
 * statement by statement, float32-exactly, by the comparer in peer_cmp.c. Where the two texts differ for a
 * documented reason the difference is normalised or counted under a named
 * class; every class and every rule is explained in docs/peer-differences.md.
 * The test fails on any difference of a class that is not listed in `rules`
 * below, or when a listed class affects more files than documented.
 *
 * Comparison rules (peer_cmp.h; details and reasons: docs/peer-differences.md):
 *  R1 meshes are compared per face corner: position verts[v] and uv
 *     tverts[t] (all columns), per-vertex lists (weights, constraints) via the
 *     corner's vertex index; face count and surface ids equal; smoothing
 *     masks are invented by both writers and not compared.
 *  R2 orientations (plain and keyed) are compared as rotations: quaternion
 *     from axis-angle, q ~ -q, |dq| <= PEER_ORIENT_TOL.
 *  R3 keywords compared case-insensitively; a plain controller equals a
 *     one-key list at time 0.
 *  R4 comments are not compared (#part-number is: it is data).
 *  everything else: equal, float32 bit-equal for numbers.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "corpus.h"
#include "peer_cmp.h"
#include "text/mdl_parse.h"
#include "registry/viewset.h"

/* ---- self-test of the comparison on small texts -------------------------- */

/* Compare two texts; returns the number of difference classes found and
 * leaves them in *c (caller frees c->cls). */
static size_t compare_texts(peer_cmp *c, const char *ours, const char *peer)
{
	mdl_doc *a = NULL, *b = NULL;
	lfs_error e;
	memset(c, 0, sizeof(*c));
	c->file = "synthetic";
	c->file_no = 1;
	assert_int_equal(mdl_parse("ours", (const uint8_t *)ours, strlen(ours), &a, &e), LFS_OK);
	assert_int_equal(mdl_parse("peer", (const uint8_t *)peer, strlen(peer), &b, &e), LFS_OK);
	peer_cmp_docs(c, a, b);
	mdl_doc_free(a);
	mdl_doc_free(b);
	return c->n_cls;
}

#define HEAD "newmodel m\nsetsupermodel m NULL\nbeginmodelgeom m\n" \
	     "node dummy m\nparent NULL\nendnode\n"
#define TAIL "endmodelgeom m\ndonemodel m\n"
/* Split mesh (ours): 4 binary vertices, 2 faces, tvert index = vertex index. */
#define MESH_OURS "node trimesh q\nparent m\nverts 4\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n" \
	"tverts 4\n0 0 0\n1 0 0\n1 1 0\n0 1 0\nfaces 2\n0 1 2 1 0 1 2 3\n0 2 3 1 0 2 3 3\nendnode\n"

static void test_compare_self(void **state)
{
	(void)state;
	peer_cmp c;
	/* same model, peer with re-ordered positions and its own tvert indices */
	const char *peer_mesh = HEAD "node trimesh q\nparent m\nverts 4\n1 1 0\n0 0 0\n1 0 0\n0 1 0\n"
		"tverts 4\n1 1 0\n0 1 0\n0 0 0\n1 0 0\nfaces 2\n1 2 0 4 2 3 0 3\n1 0 3 2 2 0 1 3\nendnode\n" TAIL;
	assert_int_equal(compare_texts(&c, HEAD MESH_OURS TAIL, peer_mesh), 0);
	free(c.cls);
	/* one moved position is found through the face corners */
	const char *peer_moved = HEAD "node trimesh q\nparent m\nverts 4\n1 1 0\n0 0 0\n1 0 0.5\n0 1 0\n"
		"tverts 4\n1 1 0\n0 1 0\n0 0 0\n1 0 0\nfaces 2\n1 2 0 4 2 3 0 3\n1 0 3 2 2 0 1 3\nendnode\n" TAIL;
	compare_texts(&c, HEAD MESH_OURS TAIL, peer_moved);
	assert_true(peer_cmp_has_class(&c, "mesh:verts:value"));
	free(c.cls);
	/* a surface id */
	const char *peer_surf = HEAD "node trimesh q\nparent m\nverts 4\n1 1 0\n0 0 0\n1 0 0\n0 1 0\n"
		"tverts 4\n1 1 0\n0 1 0\n0 0 0\n1 0 0\nfaces 2\n1 2 0 4 2 3 0 3\n1 0 3 2 2 0 1 4\nendnode\n" TAIL;
	compare_texts(&c, HEAD MESH_OURS TAIL, peer_surf);
	assert_true(peer_cmp_has_class(&c, "mesh:surface:value"));
	free(c.cls);
	/* rotations: same rotation written two ways; a different one */
	const char *o1 = HEAD "node dummy d\nparent m\norientation 1 0 0 1.5\nendnode\n" TAIL;
	const char *o2 = HEAD "node dummy d\nparent m\norientation -1 0 0 -1.5\nendnode\n" TAIL;
	const char *o3 = HEAD "node dummy d\nparent m\norientation 1 0 0 1.5001\nendnode\n" TAIL;
	assert_int_equal(compare_texts(&c, o1, o2), 0);
	free(c.cls);
	compare_texts(&c, o1, o3);
	assert_true(peer_cmp_has_class(&c, "node:orientation"));
	free(c.cls);
	/* float32 equality: 0.1 and 0.100000001 are the same float, 0.1000001 is not */
	const char *p1 = HEAD "node dummy d\nparent m\nposition 0.1 0 0\nendnode\n" TAIL;
	const char *p2 = HEAD "node dummy d\nparent m\nposition 0.100000001 0 0\nendnode\n" TAIL;
	const char *p3 = HEAD "node dummy d\nparent m\nposition 0.1000001 0 0\nendnode\n" TAIL;
	assert_int_equal(compare_texts(&c, p1, p2), 0);
	free(c.cls);
	compare_texts(&c, p1, p3);
	assert_true(peer_cmp_has_class(&c, "node:value"));
	free(c.cls);
	/* keys: plain vs one key at 0 is the same; a key time is not */
	const char *k1 = HEAD "node dummy d\nparent m\nscalekey 2\n0 1\n1 2\nendnode\n" TAIL;
	const char *k2 = HEAD "node dummy d\nparent m\nscalekey 2\n0 1\n1.5 2\nendnode\n" TAIL;
	compare_texts(&c, k1, k2);
	assert_true(peer_cmp_has_class(&c, "node:value"));
	free(c.cls);
	/* an attribute only one side has, a default the peer may omit, an alias */
	const char *a1 = HEAD "node light l\nparent m\nnDynamicType 1\ngenerateflare 0\nradius 5\nendnode\n" TAIL;
	const char *a2 = HEAD "node light l\nparent m\nisdynamic 1\nendnode\n" TAIL;
	compare_texts(&c, a1, a2);
	assert_true(peer_cmp_has_class(&c, "node:only-ours:radius"));
	assert_true(peer_cmp_has_class(&c, "node:peer-omits-default:generateflare"));
	assert_true(peer_cmp_has_class(&c, "node:peer-alias:isdynamic"));
	assert_int_equal(c.n_cls, 3);
	free(c.cls);
	/* node structure */
	const char *n2 = HEAD "node dummy e\nparent m\nendnode\n" TAIL;
	const char *n1 = HEAD "node dummy d\nparent m\nendnode\n" TAIL;
	compare_texts(&c, n1, n2);
	assert_true(peer_cmp_has_class(&c, "node:name"));
	free(c.cls);
}

/* ---- driver ------------------------------------------------------------- */

static void test_peer_compare(void **state)
{
	(void)state;
	char prefix[4096];
	lfs_path(prefix, sizeof(prefix), "%s/nwn", lfs_corpus_dir_or_skip());
	size_t nfiles = 0;
	char **files = lfs_corpus_list("nwn", "binary.txt", &nfiles);
	assert_non_null(files);
	assert_true(nfiles > 0);
	peer_cmp c = { 0 };
	unsigned compared = 0, failures = 0;
	size_t plen = strlen(prefix) + 1;
	for (size_t i = 0; i < nfiles; i++) {
		const char *rel = files[i] + plen; /* "tree/<source>/..." */
		assert_true(strncmp(rel, "tree/", 5) == 0);
		char peer_path[8320];
		snprintf(peer_path, sizeof(peer_path), "%s/peer_decompiled/%s", prefix, rel + 5);
		c.file_no = (unsigned)i + 1;
		c.file = rel + 5;
		c.where = "file";
		c.node = NULL;

		size_t nbin = 0, npeer = 0;
		uint8_t *bin = lfs_read_file(files[i], &nbin);
		uint8_t *peer = lfs_read_file(peer_path, &npeer);
		assert_non_null(bin);
		if (!peer) {
			peer_cmp_diff(&c, "file:no-peer-output", "%s missing", peer_path);
			free(bin);
			continue;
		}
		const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
		lfs_viewset vs = { 0 };
		lfs_error err = { 0 };
		lfs_err e = lfs_views_build(base, bin, nbin, NULL, &vs, &err);
		if (e != LFS_OK) {
			peer_cmp_diff(&c, "file:views-build-failed", "%s", err.msg);
			failures++;
			free(bin);
			free(peer);
			continue;
		}
		const lfs_view *v = lfs_viewset_find(&vs, "model.mdl");
		if (!v) {
			peer_cmp_diff(&c, "file:no-model.mdl", "no model.mdl view");
			failures++;
		} else {
			char ours_name[8320];
			snprintf(ours_name, sizeof(ours_name), "ours:%s/model.mdl", rel);
			mdl_doc *da = NULL, *db = NULL;
			lfs_error ea = { 0 }, eb = { 0 };
			lfs_err ra = mdl_parse(ours_name, (const uint8_t *)v->data, v->size, &da, &ea);
			lfs_err rb = mdl_parse(peer_path, peer, npeer, &db, &eb);
			if (ra != LFS_OK) {
				peer_cmp_diff(&c, "file:ours-unparseable", "%s", ea.msg);
				failures++;
			}
			if (rb != LFS_OK)
				peer_cmp_diff(&c, "file:peer-unparseable", "%s", eb.msg);
			if (ra == LFS_OK && rb == LFS_OK) {
				peer_cmp_docs(&c, da, db);
				compared++;
			}
			mdl_doc_free(da);
			mdl_doc_free(db);
		}
		lfs_viewset_free(&vs);
		free(bin);
		free(peer);
	}
	lfs_free_list(files);

	/* summary */
	printf("peer comparison: %zu binaries, %u compared, %u face corners, %u orientation rows, "
	       "%u values\n", nfiles, compared, c.n_corners, c.n_orient, c.n_values);
	printf("largest accepted orientation deviation: %.3g (%s)\n", c.max_orient_dev,
	       c.max_orient_at[0] ? c.max_orient_at : "-");
	unsigned bad = peer_cmp_report(&c, true);
	free(c.cls);
	assert_int_equal(failures, 0);
	assert_int_equal(bad, 0);
	assert_true(compared > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare_self),
		cmocka_unit_test(test_peer_compare),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
