/**
 * @file test_samples.c
 * Decode the project's own samples (samples/box.mdl, samples/skin2bone.mdl) and compare every decoded
 * value with what the test-only writer was told to write.
 *
 * Both this test and tests/samples/mksamples.c read the sample descriptions
 * from tests/samples/samples_spec.c, so the comparison is decoder output vs
 * writer input, not against numbers typed twice. Derived fields that the
 * writer computes (face planes, adjacency, bounding box, skin bind inverse,
 * part numbers of animation nodes) are checked here with independent
 * properties: a plane contains its face's corners, adjacency is symmetric
 * and the two faces share both edge positions, the bbox is the min/max of
 * the vertices, tbone = skin position - node position from the spec's
 * position keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../samples/samples_spec.h"
#include "corpus.h"
#include "formats/nwn/nwn_mdl.h"
#include "registry/viewset.h"

/* Bit-exact float compare (the decoder must hand back the stored float). */
#define FEQ(got, want, ...)                                                            \
	do {                                                                           \
		float g_ = (got), w_ = (want);                                         \
		if (memcmp(&g_, &w_, sizeof g_) != 0) {                                \
			char where_[256];                                              \
			snprintf(where_, sizeof where_, __VA_ARGS__);                  \
			fail_msg("%s: got %.9g, want %.9g", where_, (double)g_, (double)w_); \
		}                                                                      \
	} while (0)

static nwn_model *load_sample(const smp_model *sm)
{
	const char *root = getenv("LFS_SOURCE_ROOT");
	assert_non_null(root);
	char path[4096];
	snprintf(path, sizeof path, "%s/samples/%s", root, sm->file);
	size_t n;
	uint8_t *data = lfs_read_file(path, &n);
	if (!data)
		fail_msg("cannot read %s", path);
	assert_true(nwn_mdl_is_binary(data, n));
	nwn_model *m = NULL;
	lfs_error err;
	lfs_err r = nwn_mdl_decode(data, n, &m, &err);
	if (r != LFS_OK)
		fail_msg("%s: %s", path, err.msg);
	free(data);
	return m;
}

/* Controllers of a decoded node against the spec's controllers. */
static void check_ctrls(const char *where, const nwn_node *nd, const smp_node *sn)
{
	assert_int_equal(nd->n_ctrls, sn->n_ctrls);
	for (uint32_t c = 0; c < sn->n_ctrls; c++) {
		const nwn_controller *ct = &nd->ctrls[c];
		const smp_ctrl *sc = &sn->ctrls[c];
		assert_int_equal(ct->type, sc->type);
		assert_int_equal(ct->rows, sc->rows);
		assert_int_equal(ct->columns, sc->cols);
		assert_int_equal(ct->ncols, sc->cols);
		assert_false(ct->bezier);
		assert_non_null(ct->name);
		assert_string_equal(ct->name, sc->type == SMP_CTRL_POSITION ? "position" : "orientation");
		for (uint32_t r = 0; r < sc->rows; r++) {
			assert_true((size_t)ct->key_offset + r < nd->n_ctrl_data);
			FEQ(nd->ctrl_data[ct->key_offset + r], sc->times[r], "%s %s key %u time",
			    where, ct->name, r);
			for (uint32_t k = 0; k < sc->cols; k++) {
				size_t at = (size_t)ct->data_offset + (size_t)r * ct->ncols + k;
				assert_true(at < nd->n_ctrl_data);
				FEQ(nd->ctrl_data[at], sc->values[r * sc->cols + k],
				    "%s %s key %u value %u", where, ct->name, r, k);
			}
		}
	}
}

/* Tree links of a decoded geometry against the spec's parent indices. */
static void check_tree(const nwn_geometry *g, const smp_node *nodes, uint32_t n)
{
	assert_int_equal(g->n_nodes, n);
	for (uint32_t i = 0; i < n; i++) {
		const nwn_node *nd = &g->nodes[i];
		assert_string_equal(nd->name, nodes[i].name);
		assert_int_equal(nd->parent, nodes[i].parent);
		uint32_t nch = 0;
		for (uint32_t j = 0; j < n; j++)
			if (nodes[j].parent == (int32_t)i) {
				assert_true(nch < nd->n_children);
				assert_int_equal(nd->children[nch], j);
				nch++;
			}
		assert_int_equal(nd->n_children, nch);
		assert_int_equal(nd->depth, nodes[i].parent < 0 ? 0 : g->nodes[nodes[i].parent].depth + 1);
	}
}

static void spec_world_pos(const smp_model *sm, int32_t i, double out[3])
{
	out[0] = out[1] = out[2] = 0;
	for (; i >= 0; i = sm->nodes[i].parent)
		for (uint32_t c = 0; c < sm->nodes[i].n_ctrls; c++)
			if (sm->nodes[i].ctrls[c].type == SMP_CTRL_POSITION)
				for (int k = 0; k < 3; k++)
					out[k] += sm->nodes[i].ctrls[c].values[k];
}

static bool same_pos(const float *a, const float *b)
{
	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

static void check_mesh(const smp_model *sm, uint32_t i, const nwn_node *nd)
{
	const smp_mesh *ms = sm->nodes[i].mesh;
	const nwn_mesh *me = nd->mesh;
	assert_non_null(me);
	assert_string_equal(me->textures[0], ms->bitmap);
	assert_string_equal(me->textures[1], "");
	assert_int_equal(me->n_textures, 1);
	assert_int_equal(me->triangle_mode, 3);
	for (int k = 0; k < 3; k++) {
		FEQ(me->diffuse[k], ms->diffuse[k], "%s diffuse", nd->name);
		FEQ(me->ambient[k], ms->ambient[k], "%s ambient", nd->name);
		FEQ(me->specular[k], ms->specular[k], "%s specular", nd->name);
	}
	FEQ(me->shininess, ms->shininess, "%s shininess", nd->name);

	/* vertices */
	assert_int_equal(me->n_verts, ms->n_verts);
	assert_non_null(me->verts);
	assert_non_null(me->tverts[0]);
	assert_non_null(me->normals);
	assert_null(me->tverts[1]);
	assert_null(me->colors);
	float mn[3], mx[3];
	for (int k = 0; k < 3; k++)
		mn[k] = mx[k] = ms->verts[k];
	for (uint32_t v = 0; v < ms->n_verts; v++) {
		for (int k = 0; k < 3; k++) {
			float x = ms->verts[3 * v + (uint32_t)k];
			FEQ(me->verts[3 * v + (uint32_t)k], x, "%s vert %u", nd->name, v);
			FEQ(me->normals[3 * v + (uint32_t)k], ms->normals[3 * v + (uint32_t)k],
			    "%s normal %u", nd->name, v);
			mn[k] = x < mn[k] ? x : mn[k];
			mx[k] = x > mx[k] ? x : mx[k];
		}
		for (int k = 0; k < 2; k++)
			FEQ(me->tverts[0][2 * v + (uint32_t)k], ms->tverts[2 * v + (uint32_t)k],
			    "%s tvert %u", nd->name, v);
	}
	for (int k = 0; k < 3; k++) {
		FEQ(me->bmin[k], mn[k], "%s bmin", nd->name);
		FEQ(me->bmax[k], mx[k], "%s bmax", nd->name);
	}

	/* faces: indices, plane through the corners, symmetric adjacency */
	assert_int_equal(me->n_faces, ms->n_faces);
	double area = 0;
	for (uint32_t f = 0; f < ms->n_faces; f++) {
		const nwn_face *fc = &me->faces[f];
		assert_int_equal(fc->surface_id, ms->surface_id);
		for (int k = 0; k < 3; k++)
			assert_int_equal(fc->v[k], ms->faces[3 * f + (uint32_t)k]);
		const float *p[3];
		for (int k = 0; k < 3; k++)
			p[k] = ms->verts + 3 * fc->v[k];
		double e1[3], e2[3];
		for (int k = 0; k < 3; k++) {
			e1[k] = (double)p[1][k] - p[0][k];
			e2[k] = (double)p[2][k] - p[0][k];
		}
		double cr[3] = { e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
				 e1[0] * e2[1] - e1[1] * e2[0] };
		double len = sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]);
		area += len / 2;
		for (int k = 0; k < 3; k++) {
			double dist = fc->plane_normal[0] * p[k][0] + fc->plane_normal[1] * p[k][1] +
				      fc->plane_normal[2] * p[k][2] + fc->plane_distance;
			assert_true(fabs(dist) < 1e-6);
			assert_true(fabs(fc->plane_normal[k] - cr[k] / len) < 1e-6);
		}
		for (int k = 0; k < 3; k++) {
			int16_t g = fc->adjacent[k];
			if (g < 0)
				continue;
			assert_true((uint32_t)g < me->n_faces);
			const nwn_face *gc = &me->faces[g];
			bool back = false;
			for (int j = 0; j < 3; j++)
				back |= gc->adjacent[j] == (int16_t)f;
			assert_true(back);
			const float *a = me->verts + 3 * fc->v[k], *b = me->verts + 3 * fc->v[(k + 1) % 3];
			int shared = 0;
			for (int j = 0; j < 3; j++) {
				const float *c = me->verts + 3 * gc->v[j];
				shared += same_pos(a, c) || same_pos(b, c);
			}
			assert_int_equal(shared, 2);
		}
	}
	/* a closed box has a neighbour across every edge; the open tube only inside */
	if (sm->nodes[i].flags == SMP_TRIMESH) {
		for (uint32_t f = 0; f < me->n_faces; f++)
			for (int k = 0; k < 3; k++)
				assert_true(me->faces[f].adjacent[k] >= 0);
		assert_true(fabs(me->area - area) < 1e-5);
	}

	/* the one vertex index list repeats the faces' indices */
	assert_int_equal(me->n_vindices, 3 * ms->n_faces);
	assert_non_null(me->vindices);
	for (uint32_t j = 0; j < 3 * ms->n_faces; j++)
		assert_int_equal(me->vindices[j], ms->faces[j]);

	if (sm->nodes[i].flags != SMP_SKIN) {
		assert_null(me->skin);
		return;
	}
	const nwn_skin *sk = me->skin;
	assert_non_null(sk);
	assert_non_null(sk->weights);
	assert_non_null(sk->bonerefs);
	for (uint32_t j = 0; j < 4u * ms->n_verts; j++) {
		FEQ(sk->weights[j], ms->weights[j], "skin weight %u", j);
		assert_int_equal(sk->bonerefs[j], ms->bonerefs[j]);
	}
	for (uint8_t b = 0; b < ms->n_bones; b++)
		assert_int_equal(sk->bone_node_numbers[b], ms->bone_nodes[b]);
	assert_int_equal(sk->node_to_bone_count, sm->n_nodes);
	assert_non_null(sk->node_to_bone);
	for (uint32_t j = 0; j < sm->n_nodes; j++) {
		int16_t want = -1;
		for (uint8_t b = 0; b < ms->n_bones; b++)
			if (ms->bone_nodes[b] == (int16_t)j)
				want = (int16_t)b;
		assert_int_equal(sk->node_to_bone[j], want);
	}
	assert_int_equal(sk->qbone_arr.count, sm->n_nodes);
	assert_int_equal(sk->tbone_arr.count, sm->n_nodes);
	assert_non_null(sk->qbone_ref_inv);
	assert_non_null(sk->tbone_ref_inv);
	double ps[3];
	spec_world_pos(sm, (int32_t)i, ps);
	for (uint32_t j = 0; j < sm->n_nodes; j++) {
		double pj[3];
		spec_world_pos(sm, (int32_t)j, pj);
		/* identity bind orientations: q = (w 1, x 0, y 0, z 0), stored w first */
		FEQ(sk->qbone_ref_inv[4 * j], 1.0f, "qbone %u w", j);
		for (int k = 1; k < 4; k++)
			FEQ(sk->qbone_ref_inv[4 * j + (uint32_t)k], 0.0f, "qbone %u", j);
		for (int k = 0; k < 3; k++)
			FEQ(sk->tbone_ref_inv[3 * j + (uint32_t)k], (float)(ps[k] - pj[k]), "tbone %u", j);
	}
}

static void test_sample(void **state)
{
	const smp_model *sm = *state;
	nwn_model *m = load_sample(sm);

	assert_string_equal(m->geom.name, sm->name);
	assert_int_equal(m->geom.geom_type, 2);
	assert_int_equal(m->geom.node_count_field, sm->n_nodes);
	assert_int_equal(m->classification, sm->classification);
	assert_string_equal(m->supermodel, sm->supermodel);
	FEQ(m->animation_scale, 1.0f, "animation scale");

	check_tree(&m->geom, sm->nodes, sm->n_nodes);
	for (uint32_t i = 0; i < sm->n_nodes; i++) {
		const nwn_node *nd = &m->geom.nodes[i];
		const smp_node *sn = &sm->nodes[i];
		assert_int_equal(nd->flags, sn->flags);
		assert_int_equal(nd->part_number, (int32_t)i);
		assert_string_equal(nwn_node_type_name(nd->flags),
				    sn->flags == SMP_DUMMY ? "dummy" :
				    sn->flags == SMP_TRIMESH ? "trimesh" : "skin");
		check_ctrls(sn->name, nd, sn);
		if (sn->mesh)
			check_mesh(sm, i, nd);
		else
			assert_null(nd->mesh);
		assert_null(nd->light);
		assert_null(nd->emitter);
		assert_null(nd->ref);
	}

	assert_int_equal(m->n_anims, sm->n_anims);
	for (uint32_t a = 0; a < sm->n_anims; a++) {
		const nwn_anim *an = &m->anims[a];
		const smp_anim *sa = &sm->anims[a];
		assert_string_equal(an->geom.name, sa->name);
		assert_int_equal(an->geom.geom_type, 5);
		FEQ(an->length, sa->length, "%s length", sa->name);
		FEQ(an->trans_time, sa->trans_time, "%s transtime", sa->name);
		assert_string_equal(an->anim_root, sa->anim_root);
		assert_int_equal(an->n_events, sa->n_events);
		for (uint32_t e = 0; e < sa->n_events; e++) {
			FEQ(an->events[e].after, sa->events[e].after, "%s event %u", sa->name, e);
			assert_string_equal(an->events[e].name, sa->events[e].name);
		}
		check_tree(&an->geom, sa->nodes, sa->n_nodes);
		for (uint32_t i = 0; i < sa->n_nodes; i++) {
			const nwn_node *nd = &an->geom.nodes[i];
			assert_int_equal(nd->flags, sa->nodes[i].flags);
			/* animation nodes carry the part number of the same-named model node */
			assert_int_equal(nd->part_number, nwn_find_node(&m->geom, nd->name));
			check_ctrls(nd->name, nd, &sa->nodes[i]);
		}
	}
	nwn_model_free(m);
}

/* Issue 10: skin18bone.mdl's skin uses bone slot 17 (the word after the
 * 17-entry bone table). model.mdl names every bone (no `?bone17`), and a
 * structural edit of model.mdl (one vertex more, weighted to b17 and b16,
 * and a face using it) lands and keeps every bone name. */
static void test_skin18(void **state)
{
	(void)state;
	const char *root = getenv("LFS_SOURCE_ROOT");
	assert_non_null(root);
	char path[4096];
	snprintf(path, sizeof path, "%s/samples/skin18bone.mdl", root);
	size_t n;
	uint8_t *data = lfs_read_file(path, &n);
	assert_non_null(data);
	lfs_viewset vs;
	lfs_error err = { 0 };
	assert_int_equal(lfs_views_build("skin18bone.mdl", data, n, NULL, &vs, &err), LFS_OK);
	const lfs_view *v = lfs_viewset_find(&vs, "model.mdl");
	assert_non_null(v);
	char *text = malloc(v->size + 1);
	assert_non_null(text);
	memcpy(text, v->data, v->size);
	text[v->size] = '\0';
	lfs_viewset_free(&vs);
	assert_null(strstr(text, "?bone"));
	assert_non_null(strstr(text, "\n    b17 1\n"));

	/* the edit: a 37th vertex in every per-vertex list, a 35th face */
	size_t cap = strlen(text) + 4096, len = 0;
	char *ed = malloc(cap);
	assert_non_null(ed);
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t ll = nl ? (size_t)(nl - p) + 1 : strlen(p);
		char kw[32] = "";
		unsigned cnt = 0;
		if (sscanf(p, " %31s %u", kw, &cnt) == 2 &&
		    ((cnt == 36 && (!strcmp(kw, "verts") || !strcmp(kw, "tverts") || !strcmp(kw, "normals") ||
				    !strcmp(kw, "weights"))) ||
		     (cnt == 34 && !strcmp(kw, "faces")))) {
			len += (size_t)snprintf(ed + len, cap - len, "  %s %u\n", kw, cnt + 1);
			p += ll;
			for (unsigned r = 0; r < cnt; r++) { /* copy the rows */
				const char *e = strchr(p, '\n');
				size_t rl = e ? (size_t)(e - p) + 1 : strlen(p);
				memcpy(ed + len, p, rl);
				len += rl;
				p += rl;
			}
			const char *row = !strcmp(kw, "verts") ? "0 0 4.5" : !strcmp(kw, "tverts") ? "0.5 1 0" :
					  !strcmp(kw, "normals") ? "0 -1 0" : !strcmp(kw, "weights") ?
					  "b17 0.5 b16 0.5" : "34 35 36 1 34 35 36 1";
			len += (size_t)snprintf(ed + len, cap - len, "    %s\n", row);
			continue;
		}
		memcpy(ed + len, p, ll);
		len += ll;
		p += ll;
	}
	uint8_t *out = NULL;
	size_t outn = 0;
	lfs_err e = lfs_views_apply("skin18bone.mdl", data, n, "model.mdl", ed, len, &out, &outn, &err);
	if (e)
		fail_msg("structural edit refused: %s", err.msg);
	nwn_model *m = NULL;
	assert_int_equal(nwn_mdl_decode(out, outn, &m, &err), LFS_OK);
	const nwn_geometry *g = &m->geom;
	const nwn_node *rope = NULL;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (!strcmp(g->nodes[i].name, "rope"))
			rope = &g->nodes[i];
	assert_non_null(rope);
	const nwn_mesh *me = rope->mesh;
	assert_int_equal(me->n_faces, 35);
	const nwn_skin *sk = me->skin;
	/* every used bone ref names the bone its row was weighted to */
	uint32_t uses17 = 0, new_vert = 0;
	for (uint32_t i = 0; i < me->n_verts; i++) {
		for (int l = 0; l < 4; l++) {
			int16_t b = sk->bonerefs[4 * i + l];
			if (b < 0)
				continue;
			assert_true(b < NWN_SKIN_BONES);
			int16_t node = sk->bone_node_numbers[b];
			assert_true(node >= 0 && (uint32_t)node < g->n_nodes);
			const char *bn = g->nodes[node].name;
			char want[8];
			snprintf(want, sizeof want, "b%02d", (int)lroundf(me->verts[3 * i + 2] / 0.25f));
			if (me->verts[3 * i + 2] > 4.4f) { /* the new vertex: b17 and b16 */
				new_vert++;
				assert_true(!strcmp(bn, "b17") || !strcmp(bn, "b16"));
			} else {
				assert_string_equal(bn, want);
			}
			uses17 += b == 17;
		}
	}
	assert_true(new_vert == 2);
	assert_true(uses17 >= 2);
	nwn_model_free(m);
	free(out);
	free(ed);
	free(text);
	free(data);
}

int main(void)
{
	struct CMUnitTest tests[8];
	size_t n = 0;
	for (size_t i = 0; i < smp_n_models && n < sizeof tests / sizeof tests[0]; i++) {
		tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(test_sample, (void *)&smp_models[i]);
		tests[n].name = smp_models[i].file;
		n++;
	}
	if (n < sizeof tests / sizeof tests[0]) {
		tests[n] = (struct CMUnitTest)cmocka_unit_test(test_skin18);
		tests[n].name = "skin18bone: bone 17 named, survives a structural edit";
		n++;
	}
	return lfs_test_exit(_cmocka_run_group_tests("samples", tests, n, NULL, NULL));
}
