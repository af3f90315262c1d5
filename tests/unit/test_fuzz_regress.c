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
 * 2. NOD, fuzz-roundtrip: a group named with a space ("my body.0") is
 *    written `o my body.0` in model.obj, and the apply compared only the
 *    first word: the unedited model.obj was refused. The apply reads the
 *    rest of the line now; a name that cannot read back (a word starting
 *    with '"', a leading or trailing space) makes the OBJ views read-only.
 * 3. NWN (and NOD), fuzz-roundtrip: the OBJ writers print every NaN as
 *    "nan", dropping its bits, and lfs_obj_num_keeps() took "nan" as a new
 *    value over a stored NaN with other bits: the unedited OBJ rewrote the
 *    vertex (and the NWN mesh's derived bounds). A plain "nan" now states
 *    any stored NaN.
 * 4. SOD, fuzz-roundtrip: a mesh face naming a position or texture
 *    coordinate the mesh does not have is written to the mesh OBJ as
 *    stored, and the OBJ apply refuses it: the unedited view did not save.
 *    That mesh OBJ is read-only now.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "formats/nod/nod.h"
#include "formats/sod/sod.h"
#include "text/obj.h"
#include "registry/viewset.h"

/* A NOD with one bone, one mesh name, one group of 3 vertices and 2 faces;
 * the second face's last index is @p bad_index (3 or more: out of range). */
static uint32_t g_nan_bits; /* non-zero: vertex 1's x has these bits */

static uint8_t *nod_bytes_named(uint16_t bad_index, const char *mesh, size_t *n)
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
	memcpy(m->meshes[0].raw, mesh, strlen(mesh));
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
	if (g_nan_bits)
		memcpy(&m->verts[1].pos[0], &g_nan_bits, 4);
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

static uint8_t *nod_bytes(uint16_t bad_index, size_t *n)
{
	return nod_bytes_named(bad_index, "body", n);
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

static void test_nod_group_name_spaces(void **state)
{
	(void)state;
	/* group names get ".<group>" appended: "my body.0", "tail .0" read back */
	const char *names[] = { "my body", "tail ", "say \"hi", "\"q", " lead" };
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		size_t n = 0;
		uint8_t *d = nod_bytes_named(0, names[k], &n);
		lfs_viewset vs;
		lfs_error err;
		assert_int_equal(lfs_views_build("x.nod", d, n, NULL, &vs, &err), LFS_OK);
		const lfs_view *model = lfs_viewset_find(&vs, "model.obj");
		assert_non_null(model);
		assert_int_equal(model->writable, k < 2);
		for (size_t i = 0; i < vs.n_views; i++) {
			const lfs_view *v = &vs.views[i];
			if (v->kind == LFS_VIEW_MESH_OBJ)
				assert_int_equal(v->writable, k < 2);
			uint8_t *out = NULL;
			size_t on = 0;
			lfs_err r = lfs_view_apply(vs.format, d, n, v, v->data, v->size, NULL, &out,
						   &on, &err);
			if (!v->writable) {
				assert_int_equal(r, LFS_ERR_UNSUPPORTED);
				continue;
			}
			if (r)
				fail_msg("%s %s: %s", names[k], v->path, err.msg);
			assert_int_equal(on, n);
			assert_memory_equal(out, d, n);
			free(out);
		}
		lfs_viewset_free(&vs);
		free(d);
	}
}

static void test_obj_nan_payload(void **state)
{
	(void)state;
	/* the number rule itself */
	const char *text = "v nan nan:7fc01234 nan:7fc05678\nv 1 -nan 0\n";
	lfs_obj_rules rules = { .flags = LFS_OBJ_NUMS };
	lfs_obj o;
	lfs_error err;
	assert_int_equal(lfs_obj_read("t.obj", text, strlen(text), &rules, &o, &err), LFS_OK);
	float stored, one = 1;
	uint32_t bits = 0x7fc01234u;
	memcpy(&stored, &bits, 4);
	assert_true(lfs_obj_num_keeps(&o.v_num[0], stored, 0));  /* nan */
	assert_true(lfs_obj_num_keeps(&o.v_num[1], stored, 0));  /* its bits */
	assert_false(lfs_obj_num_keeps(&o.v_num[2], stored, 0)); /* other bits: an edit */
	assert_false(lfs_obj_num_keeps(&o.v_num[3], stored, 0)); /* 1 */
	assert_true(lfs_obj_num_keeps(&o.v_num[4], stored, 0));  /* -nan */
	assert_false(lfs_obj_num_keeps(&o.v_num[0], one, 0));    /* nan over 1 */
	lfs_obj_free(&o);

	/* a NOD vertex with a NaN of other bits: every writable view re-applies */
	g_nan_bits = 0xffc0beefu;
	size_t n = 0;
	uint8_t *d = nod_bytes_named(0, "body", &n);
	g_nan_bits = 0;
	lfs_viewset vs;
	assert_int_equal(lfs_views_build("x.nod", d, n, NULL, &vs, &err), LFS_OK);
	size_t writable = 0;
	for (size_t i = 0; i < vs.n_views; i++) {
		const lfs_view *v = &vs.views[i];
		if (!v->writable)
			continue;
		writable++;
		uint8_t *out = NULL;
		size_t on = 0;
		if (lfs_view_apply(vs.format, d, n, v, v->data, v->size, NULL, &out, &on, &err))
			fail_msg("%s: %s", v->path, err.msg);
		assert_int_equal(on, n);
		if (memcmp(out, d, n))
			fail_msg("%s: the unedited view changed the bytes", v->path);
		free(out);
	}
	assert_int_equal(writable, 3); /* model.txt, model.obj, meshes/body.0.obj */
	lfs_viewset_free(&vs);
	free(d);
}

/* SOD bytes (docs/formats/sod.md, version 1.8): no materials, one mesh node
 * "m" with 3 positions, 3 texture coordinates and one lighting group of one
 * face whose first corner names position @p v0, then no channels and no
 * references. */
typedef struct bb {
	uint8_t b[512];
	size_t n;
} bb;
static void b8(bb *b, unsigned v)
{
	b->b[b->n++] = (uint8_t)v;
}
static void b16(bb *b, unsigned v)
{
	b8(b, v & 255);
	b8(b, v >> 8 & 255);
}
static void bf(bb *b, float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	b16(b, u & 0xFFFF);
	b16(b, u >> 16);
}
static void bs(bb *b, const char *s)
{
	b16(b, (unsigned)strlen(s));
	memcpy(b->b + b->n, s, strlen(s));
	b->n += strlen(s);
}

static void sod_bytes(bb *b, unsigned v0)
{
	b->n = 0;
	memcpy(b->b, "Storm3D_SW", 10);
	b->n = 10;
	bf(b, 1.8f);
	b16(b, 0); /* materials */
	b16(b, 1); /* nodes */
	b16(b, 1); /* mesh */
	bs(b, "m");
	bs(b, "");
	for (int i = 0; i < 12; i++) /* identity rotation, zero position */
		bf(b, i % 4 == 0 && i < 9 ? 1.0f : 0.0f);
	bs(b, "alphathreshold");
	bs(b, "tex");
	b16(b, 3); /* positions */
	b16(b, 3); /* texture coordinates */
	b16(b, 1); /* lighting groups */
	for (int i = 0; i < 9; i++)
		bf(b, i % 4 == 0 ? 1.0f : 0.0f);
	for (int i = 0; i < 6; i++)
		bf(b, 0.25f * (float)i);
	b16(b, 1); /* faces */
	bs(b, "");
	unsigned fv[3] = { v0, 1, 2 };
	for (int c = 0; c < 3; c++) {
		b16(b, fv[c]);
		b16(b, (unsigned)c);
	}
	b8(b, 1); /* cull type */
	b16(b, 0);
	b16(b, 0); /* channels */
	b16(b, 0); /* references */
}

static void test_sod_face_out_of_range(void **state)
{
	(void)state;
	for (int damaged = 0; damaged < 2; damaged++) {
		bb b;
		sod_bytes(&b, damaged ? 9 : 0);
		lfs_viewset vs;
		lfs_error err;
		if (lfs_views_build("x.sod", b.b, b.n, NULL, &vs, &err))
			fail_msg("%s", err.msg);
		const lfs_view *mesh = lfs_viewset_find(&vs, "meshes/m.obj");
		assert_non_null(mesh);
		assert_int_equal(strstr(mesh->data, "f 10/1") != NULL, damaged);
		assert_int_equal(mesh->writable, !damaged);
		for (size_t i = 0; i < vs.n_views; i++) {
			const lfs_view *v = &vs.views[i];
			uint8_t *out = NULL;
			size_t on = 0;
			lfs_err r = lfs_view_apply(vs.format, b.b, b.n, v, v->data, v->size, NULL,
						   &out, &on, &err);
			if (!v->writable) {
				assert_int_equal(r, LFS_ERR_UNSUPPORTED);
				assert_null(out);
				continue;
			}
			if (r)
				fail_msg("%s: %s", v->path, err.msg);
			assert_int_equal(on, b.n);
			assert_memory_equal(out, b.b, b.n);
			free(out);
		}
		lfs_viewset_free(&vs);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nod_face_out_of_range),
		cmocka_unit_test(test_nod_group_name_spaces),
		cmocka_unit_test(test_obj_nan_payload),
		cmocka_unit_test(test_sod_face_out_of_range),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
