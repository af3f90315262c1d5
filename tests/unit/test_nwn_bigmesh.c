/*
 * A trimesh of more than 32,767 faces through the NWN codec (issue 11's
 * open bug: applying such an OBJ wrote a binary the decoder refused with
 * "adjacent face -32768").
 *
 * The project's sample samples/box.mdl gets, as its mesh OBJ
 * meshes/crate.obj, a 130 x 130 vertex grid (33,282 faces). The test then
 * checks, with its own edge map (not the codec's derivation), that every
 * stored face adjacency is the first other face sharing that edge, as a
 * signed 16-bit number (so faces past 32,767 appear wrapped), that the new
 * binary decodes and encodes back byte for byte, and that the regenerated
 * OBJ view applied unedited gives the same bytes (round-trip law).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "common/strbuf.h"
#include "corpus.h"
#include "formats/nwn/nwn_mdl.h"
#include "formats/nwn/nwn_mdl_encode.h"
#include "registry/viewset.h"

#define GRID 130u

/* The grid OBJ: vertex (i, j) is number j*GRID+i+1; two faces per cell. */
static char *grid_obj(size_t *len)
{
	lfs_sb b = { 0 };
	lfs_sb_puts(&b, "mtllib ../model.mtl\no crate\ng crate\n");
	for (unsigned j = 0; j < GRID; j++)
		for (unsigned i = 0; i < GRID; i++)
			lfs_sb_printf(&b, "v %g %g 0\n", i / (double)(GRID - 1) - 0.5,
					  j / (double)(GRID - 1) - 0.5);
	for (unsigned j = 0; j < GRID; j++)
		for (unsigned i = 0; i < GRID; i++)
			lfs_sb_printf(&b, "vt %g %g\n", i / (double)(GRID - 1), j / (double)(GRID - 1));
	lfs_sb_puts(&b, "usemtl lfs_crate\n");
	for (unsigned j = 0; j + 1 < GRID; j++)
		for (unsigned i = 0; i + 1 < GRID; i++) {
			unsigned a = j * GRID + i + 1, c = a + GRID;
			lfs_sb_printf(&b, "f %u/%u %u/%u %u/%u\n", a, a, a + 1, a + 1, c + 1, c + 1);
			lfs_sb_printf(&b, "f %u/%u %u/%u %u/%u\n", a, a, c + 1, c + 1, c, c);
		}
	assert_true(lfs_sb_ok(&b));
	return lfs_sb_take(&b, len);
}

static const nwn_node *node_named(const nwn_model *m, const char *name)
{
	for (uint32_t i = 0; i < m->geom.n_nodes; i++)
		if (strcmp(m->geom.nodes[i].name, name) == 0)
			return &m->geom.nodes[i];
	return NULL;
}

/* First other face (in face order) with the edge {a, b} (grid points), or -1. */
static int64_t neighbour(const uint32_t *pt, const uint32_t *first, const uint32_t *list, uint32_t f,
			 uint32_t a, uint32_t b)
{
	for (uint32_t j = first[a]; j < first[a + 1]; j++) {
		uint32_t g = list[j];
		if (g == f)
			continue;
		const uint32_t *v = pt + 3 * (size_t)g;
		if (v[0] == b || v[1] == b || v[2] == b)
			return g;
	}
	return -1;
}

static void test_grid_over_32767_faces(void **state)
{
	(void)state;
	const char *root = getenv("LFS_SOURCE_ROOT");
	assert_non_null(root);
	char path[4096];
	snprintf(path, sizeof path, "%s/samples/box.mdl", root);
	size_t n;
	uint8_t *data = lfs_read_file(path, &n);
	if (!data)
		fail_msg("cannot read %s", path);

	size_t tn;
	char *text = grid_obj(&tn);
	uint8_t *out = NULL;
	size_t on = 0;
	lfs_error err;
	memset(&err, 0, sizeof err);
	lfs_err r = lfs_views_apply("box.mdl", data, n, "meshes/crate.obj", text, tn, &out, &on, &err);
	if (r != LFS_OK)
		fail_msg("apply: %s", err.msg);

	nwn_model *m = NULL;
	r = nwn_mdl_decode(out, on, &m, &err);
	if (r != LFS_OK)
		fail_msg("decode of the applied model: %s", err.msg);
	const nwn_node *nd = node_named(m, "crate");
	assert_non_null(nd);
	assert_non_null(nd->mesh);
	const nwn_mesh *me = nd->mesh;
	uint32_t nf = 2 * (GRID - 1) * (GRID - 1);
	assert_int_equal(me->n_faces, nf);
	assert_true(nf > 32767);

	/* Faces by grid point, in face order. Edges are compared by position
	 * (the grid point a vertex sits on), as the derivation compares the
	 * source's welded vertices; the binary may split a point's vertex. */
	uint32_t np = GRID * GRID;
	uint32_t *pt = calloc(3 * (size_t)nf, sizeof *pt); /* grid point of each face corner */
	uint32_t *first = calloc(np + 1, sizeof *first), *list = calloc(3 * (size_t)nf, sizeof *list);
	uint32_t *fill = calloc(np, sizeof *fill);
	assert_non_null(pt);
	assert_non_null(first);
	assert_non_null(list);
	assert_non_null(fill);
	for (uint32_t f = 0; f < nf; f++)
		for (int k = 0; k < 3; k++) {
			uint32_t v = me->faces[f].v[k];
			assert_true(v < me->n_verts);
			double x = (me->verts[3 * (size_t)v] + 0.5) * (GRID - 1);
			double y = (me->verts[3 * (size_t)v + 1] + 0.5) * (GRID - 1);
			long i = lround(x), j = lround(y);
			assert_true(i >= 0 && i < (long)GRID && j >= 0 && j < (long)GRID);
			pt[3 * (size_t)f + k] = (uint32_t)(j * (long)GRID + i);
			first[pt[3 * (size_t)f + k] + 1]++;
		}
	for (uint32_t p = 0; p < np; p++)
		first[p + 1] += first[p];
	for (uint32_t f = 0; f < nf; f++)
		for (int k = 0; k < 3; k++) {
			uint32_t p = pt[3 * (size_t)f + k];
			list[first[p] + fill[p]++] = f;
		}
	unsigned wrapped = 0;
	for (uint32_t f = 0; f < nf; f++)
		for (int k = 0; k < 3; k++) {
			const uint32_t *v = pt + 3 * (size_t)f;
			int64_t g = neighbour(pt, first, list, f, v[k], v[(k + 1) % 3]);
			int16_t want = g < 0 ? -1 : (int16_t)(uint16_t)g;
			if (me->faces[f].adjacent[k] != want)
				fail_msg("face %u edge %d: adjacency %d, expected %d (face %lld)", f, k,
					 me->faces[f].adjacent[k], want, (long long)g);
			wrapped += want < -1;
		}
	assert_true(wrapped > 0); /* the case of the bug is really there */

	/* lossless: encode(decode(x)) == x */
	uint8_t *again = NULL;
	size_t an = 0;
	r = nwn_mdl_encode(m, &again, &an, &err);
	if (r != LFS_OK)
		fail_msg("encode: %s", err.msg);
	assert_int_equal(an, on);
	assert_memory_equal(again, out, on);

	/* the round-trip law: the regenerated view, applied unedited, changes nothing */
	lfs_viewset vs;
	lfs_view_opts vo;
	memset(&vo, 0, sizeof vo);
	r = lfs_views_build("box.mdl", out, on, &vo, &vs, &err);
	if (r != LFS_OK)
		fail_msg("views of the applied model: %s", err.msg);
	const lfs_view *v = lfs_viewset_find(&vs, "meshes/crate.obj");
	assert_non_null(v);
	uint8_t *same = NULL;
	size_t sn = 0;
	r = lfs_views_apply("box.mdl", out, on, "meshes/crate.obj", (const char *)v->data, v->size, &same, &sn, &err);
	if (r != LFS_OK)
		fail_msg("unedited re-apply: %s", err.msg);
	assert_int_equal(sn, on);
	assert_memory_equal(same, out, on);

	free(same);
	lfs_viewset_free(&vs);
	free(again);
	free(fill);
	free(list);
	free(first);
	free(pt);
	nwn_model_free(m);
	free(out);
	free(text);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grid_over_32767_faces),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
