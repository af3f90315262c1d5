/**
 * @file test_fuzz_regress.c
 * Regression cases for what the libFuzzer targets found (tests/fuzz,
 * docs/fuzzing.md "Findings"), each on a small input made here.
 *
 * 1. NOD, fuzz-roundtrip: a group with a face naming a vertex the group
 *    does not have (a damaged file) shows that face as a comment in its
 *    mesh OBJ and in model.obj; the OBJ views were writable, so saving them
 *    unedited dropped the face (changed bytes). Those views are read-only
 *    now; model.txt (which keeps the face) stays writable and re-applies to
 *    the same bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "formats/nod.h"
#include "views/viewset.h"

/* A NOD with one bone, one mesh name, one group of 3 vertices and 2 faces;
 * the second face's last index is @p bad_index (3 or more: out of range). */
static uint8_t *nod_bytes(uint16_t bad_index, size_t *n)
{
	nod_model *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	m->version = NOD_VERSION;
	m->n_bones = 1;
	m->bones = calloc(1, sizeof(nod_bone));
	m->bones[0].inverse[0] = m->bones[0].inverse[4] = m->bones[0].inverse[8] = 1;
	m->bones[0].parent = m->bones[0].child = m->bones[0].sibling = -1;
	m->n_meshes = 1;
	m->meshes = calloc(1, sizeof(nod_name));
	memcpy(m->meshes[0].raw, "body", 4);
	m->n_groups = 1;
	m->groups = calloc(1, sizeof(nod_group));
	m->groups[0].n_verts = 3;
	m->groups[0].n_faces = 2;
	m->groups[0].material = -1;
	m->groups[0].flags = NOD_GROUP_NOSKINNING;
	m->n_verts = 3;
	m->verts = calloc(3, sizeof(nod_vertex));
	for (int v = 0; v < 3; v++) {
		m->verts[v].pos[v] = 1;
		m->verts[v].normal[2] = 1;
		m->verts[v].uv[0] = (float)v / 2;
		m->verts[v].weight = 1;
	}
	m->n_faces = 2;
	m->faces = calloc(2, sizeof(nod_face));
	uint16_t fs[2][3] = { { 0, 1, 2 }, { 2, 1, bad_index } };
	memcpy(m->faces, fs, sizeof(fs));
	uint8_t *out = NULL;
	lfs_error err;
	assert_int_equal(nod_encode(m, &out, n, &err), LFS_OK);
	nod_model_free(m);
	return out;
}

static void test_nod_face_out_of_range(void **state)
{
	(void)state;
	for (int damaged = 0; damaged < 2; damaged++) {
		size_t n = 0;
		uint8_t *d = nod_bytes(damaged ? 7 : 0, &n);
		lfs_viewset vs;
		lfs_error err;
		assert_int_equal(lfs_views_build("x.nod", d, n, NULL, &vs, &err), LFS_OK);
		const lfs_view *mesh = lfs_viewset_find(&vs, "meshes/body.0.obj");
		const lfs_view *model = lfs_viewset_find(&vs, "model.obj");
		const lfs_view *txt = lfs_viewset_find(&vs, "model.txt");
		assert_non_null(mesh);
		assert_non_null(model);
		assert_non_null(txt);
		/* the damaged face is shown as a comment in the OBJs ... */
		assert_int_equal(strstr(mesh->data, "# face 1 left out") != NULL, damaged);
		/* ... so they are read-only exactly then */
		assert_int_equal(mesh->writable, !damaged);
		assert_int_equal(model->writable, !damaged);
		assert_true(txt->writable);
		for (size_t i = 0; i < vs.n_views; i++) {
			const lfs_view *v = &vs.views[i];
			uint8_t *out = NULL;
			size_t on = 0;
			lfs_err r = lfs_view_apply(vs.format, d, n, v, v->data, v->size, NULL, &out,
						   &on, &err);
			if (!v->writable) {
				assert_int_equal(r, LFS_ERR_UNSUPPORTED);
				assert_null(out);
				continue;
			}
			/* every writable view re-applies unedited to the same bytes */
			assert_int_equal(r, LFS_OK);
			assert_int_equal(on, n);
			assert_memory_equal(out, d, n);
			free(out);
		}
		lfs_viewset_free(&vs);
		free(d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nod_face_out_of_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
