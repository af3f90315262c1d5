/**
 * @file test_nwn_decode.c
 * NWN binary MDL decoder on the real corpus.
 *
 * Every check compares the decode with an independent fact about the same
 * file: the corpus MANIFEST (written by another tool), geometry the values
 * must satisfy (face planes computed from the vertices, the raw block tiled
 * exactly by the arrays that point into it [N §3.5]), or redundancy
 * inside the file (the vertex index list repeats the faces' indices).
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

#include "conform.h"
#include "corpus.h"
#include "formats/nwn/nwn_mdl.h"

static char **g_bins;
static size_t g_nbins;
static const char *g_corpus;

static int setup(void **state)
{
	(void)state;
	g_corpus = lfs_corpus_dir_or_skip();
	g_bins = lfs_corpus_list("nwn", "binary.txt", &g_nbins);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	lfs_free_list(g_bins);
	return 0;
}

static nwn_model *load(const char *path)
{
	size_t n;
	uint8_t *data = lfs_read_file_ok(path, &n);
	nwn_model *m = NULL;
	lfs_error err;
	lfs_err r = nwn_mdl_decode(data, n, &m, &err);
	if (r)
		fail_msg("%s: %s", path, err.msg);
	free(data);
	return m;
}

/* MANIFEST.tsv row for a tree path: columns 9 (node types) and 10 (notes). */
static bool manifest_row(const char *tree_path, char *types, size_t tsz, char *notes, size_t nsz)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/nwn/MANIFEST.tsv", g_corpus);
	size_t n;
	char *text = (char *)lfs_read_file(p, &n);
	assert_non_null(text);
	bool found = false;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *cols[12] = { 0 };
		int c = 0;
		for (char *s = line; c < 12; c++) {
			cols[c] = s;
			char *tab = strchr(s, '\t');
			if (!tab)
				break;
			*tab = '\0';
			s = tab + 1;
		}
		if (c >= 9 && !strcmp(cols[0], tree_path)) {
			snprintf(types, tsz, "%s", cols[8]);
			snprintf(notes, nsz, "%s", cols[9]);
			found = true;
			break;
		}
	}
	free(text);
	return found;
}

static const char *tree_rel(const char *abs)
{
	const char *t = strstr(abs, "/nwn/tree/");
	return t ? t + 5 : abs;
}

/* Every binary decodes, and name, classification, animation count and the
 * per-type node counts agree with the MANIFEST written by the corpus tool. */
static void test_corpus_matches_manifest(void **state)
{
	(void)state;
	for (size_t i = 0; i < g_nbins; i++) {
		nwn_model *m = load(g_bins[i]);
		char types[1024], notes[2048];
		assert_true(manifest_row(tree_rel(g_bins[i]), types, sizeof(types), notes, sizeof(notes)));

		char want[256];
		snprintf(want, sizeof(want), "name=%s ", m->geom.name);
		if (!strstr(notes, want))
			fail_msg("%s: model name '%s' not in manifest notes '%s'", g_bins[i], m->geom.name, notes);
		snprintf(want, sizeof(want), "cls=%u ", m->classification);
		assert_non_null(strstr(notes, want));
		snprintf(want, sizeof(want), "anims=%u ", m->n_anims);
		assert_non_null(strstr(notes, want));

		/* node type histogram of the model geometry, in the manifest's form */
		static const char *names[] = { "aabb", "animmesh", "danglymesh", "dummy", "emitter",
					       "light", "reference", "skin", "trimesh" };
		char got[1024] = "";
		for (size_t t = 0; t < sizeof(names) / sizeof(names[0]); t++) {
			unsigned count = 0;
			for (uint32_t k = 0; k < m->geom.n_nodes; k++)
				count += !strcmp(nwn_node_type_name(m->geom.nodes[k].flags), names[t]);
			if (count) {
				size_t l = strlen(got);
				snprintf(got + l, sizeof(got) - l, "%s%s:%u", l ? "," : "", names[t], count);
			}
		}
		if (strcmp(got, types))
			fail_msg("%s: node types %s, manifest says %s", g_bins[i], got, types);
		nwn_model_free(m);
	}
}

typedef struct range {
	uint64_t lo, hi;
} range;

static int cmp_range(const void *a, const void *b)
{
	const range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void add(range **r, size_t *n, size_t *cap, uint32_t ptr, uint64_t bytes)
{
	if (ptr == 0xFFFFFFFFu || bytes == 0)
		return;
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*r = realloc(*r, *cap * sizeof(**r));
		assert_non_null(*r);
	}
	(*r)[(*n)++] = (range){ ptr, ptr + bytes };
}

/* The arrays the decoder found in the raw block tile it exactly: no gap, no
 * overlap, ending at the raw size ([N §3.5]). A wrong raw pointer, element
 * size or count in the decoder breaks the tiling. */
static void test_raw_block_tiled(void **state)
{
	(void)state;
	for (size_t i = 0; i < g_nbins; i++) {
		nwn_model *m = load(g_bins[i]);
		range *r = NULL;
		size_t n = 0, cap = 0;
		for (uint32_t k = 0; k < m->geom.n_nodes; k++) {
			const nwn_mesh *me = m->geom.nodes[k].mesh;
			if (!me || !me->n_verts)
				continue;
			uint64_t nv = me->n_verts;
			add(&r, &n, &cap, me->verts_raw, nv * 12);
			for (int t = 0; t < 4; t++)
				add(&r, &n, &cap, me->tverts_raw[t], nv * 8);
			add(&r, &n, &cap, me->normals_raw, nv * 12);
			add(&r, &n, &cap, me->colors_raw, nv * 4);
			for (uint32_t j = 0; j < me->vindex_offset_arr.count && j < me->vindex_count_arr.count; j++)
				add(&r, &n, &cap, me->vindex_offsets[j], (uint64_t)me->vindex_counts[j] * 2);
			if (me->skin) {
				add(&r, &n, &cap, me->skin->weights_raw, nv * 16);
				add(&r, &n, &cap, me->skin->bonerefs_raw, nv * 8);
			}
		}
		if (n)
			qsort(r, n, sizeof(*r), cmp_range);
		uint64_t at = 0;
		for (size_t j = 0; j < n; j++) {
			if (r[j].lo != at)
				fail_msg("%s: raw block %s at 0x%llx (expected 0x%llx)", g_bins[i],
					 r[j].lo > at ? "gap" : "overlap", (unsigned long long)r[j].lo,
					 (unsigned long long)at);
			at = r[j].hi;
		}
		assert_int_equal(at, m->raw_size);
		free(r);
		nwn_model_free(m);
	}
}

/* Face planes recomputed from the decoded vertices agree with the stored
 * plane normal and distance ([N §3.4]: n = normalize((p1-p0)x(p2-p1)),
 * d = -n.p0). Checks the face and vertex decoding together. */
static void test_face_planes(void **state)
{
	(void)state;
	size_t faces = 0, bad = 0;
	for (size_t i = 0; i < g_nbins; i++) {
		nwn_model *m = load(g_bins[i]);
		for (uint32_t k = 0; k < m->geom.n_nodes; k++) {
			const nwn_mesh *me = m->geom.nodes[k].mesh;
			if (!me || !me->verts)
				continue;
			for (uint32_t f = 0; f < me->n_faces; f++) {
				const nwn_face *fc = &me->faces[f];
				const float *p0 = me->verts + 3 * fc->v[0], *p1 = me->verts + 3 * fc->v[1],
					    *p2 = me->verts + 3 * fc->v[2];
				double a[3] = { p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2] };
				double b[3] = { p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2] };
				double c[3] = { a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
						a[0] * b[1] - a[1] * b[0] };
				double len = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
				if (len < 1e-9)
					continue; /* degenerate: plane undefined */
				faces++;
				double dd = 0;
				for (int j = 0; j < 3; j++) {
					double nj = c[j] / len;
					if (fabs(nj - fc->plane_normal[j]) > 2e-3)
						bad++, j = 3;
					else
						dd -= nj * p0[j];
				}
				if (fabs(dd - fc->plane_distance) > 2e-3 * (1 + fabs(dd)))
					bad++;
			}
		}
		nwn_model_free(m);
	}
	printf("face planes checked: %zu, mismatching: %zu\n", faces, bad);
	assert_true(faces > 1000);
	assert_int_equal(bad, 0);
}

/* The stored vertex index list is the faces' vertex indices in face order
 * (NN NmcBuildVertexList, [N §3.3]). */
static void test_vertex_index_list(void **state)
{
	(void)state;
	size_t lists = 0;
	for (size_t i = 0; i < g_nbins; i++) {
		nwn_model *m = load(g_bins[i]);
		for (uint32_t k = 0; k < m->geom.n_nodes; k++) {
			const nwn_mesh *me = m->geom.nodes[k].mesh;
			if (!me || !me->vindices)
				continue;
			lists++;
			assert_int_equal(me->n_vindices, 3 * me->n_faces);
			for (uint32_t f = 0; f < me->n_faces; f++)
				for (int j = 0; j < 3; j++)
					assert_int_equal(me->vindices[3 * f + j], me->faces[f].v[j]);
		}
		nwn_model_free(m);
	}
	assert_true(lists > 0);
}

/* Tree links are consistent, and without a supermodel the node count field
 * equals the nodes found by the walk [T "The Geometry Header"]. */
static void test_tree_and_node_count(void **state)
{
	(void)state;
	for (size_t i = 0; i < g_nbins; i++) {
		nwn_model *m = load(g_bins[i]);
		const nwn_geometry *g = &m->geom;
		assert_true(g->n_nodes > 0);
		assert_int_equal(g->nodes[0].parent, -1);
		for (uint32_t k = 0; k < g->n_nodes; k++)
			for (uint32_t c = 0; c < g->nodes[k].n_children; c++) {
				uint32_t ch = g->nodes[k].children[c];
				assert_true(ch < g->n_nodes);
				assert_int_equal(g->nodes[ch].parent, (int32_t)k);
				assert_int_equal(g->nodes[ch].depth, g->nodes[k].depth + 1);
			}
		bool super = m->supermodel[0] && strcasecmp(m->supermodel, "NULL");
		if (!super && g->node_count_field != g->n_nodes)
			fail_msg("%s: node count field %u, tree walk found %u", g_bins[i], g->node_count_field,
				 g->n_nodes);
		nwn_model_free(m);
	}
}

/* Orientation keys are unit quaternions and every controller is named for
 * its node type; skin weights of used lanes sum to 1 and name real nodes. */
static void test_controllers_and_skins(void **state)
{
	(void)state;
	size_t quats = 0, skins = 0;
	for (size_t i = 0; i < g_nbins; i++) {
		nwn_model *m = load(g_bins[i]);
		for (int32_t a = -1; a < (int32_t)m->n_anims; a++) {
			const nwn_geometry *g = a < 0 ? &m->geom : &m->anims[a].geom;
			for (uint32_t k = 0; k < g->n_nodes; k++) {
				const nwn_node *n = &g->nodes[k];
				for (uint32_t c = 0; c < n->n_ctrls; c++) {
					const nwn_controller *ct = &n->ctrls[c];
					if (!ct->name)
						fail_msg("%s: node %s: controller id %u unknown", g_bins[i], n->name,
							 ct->type);
					if (ct->type != NWN_CTRL_ORIENTATION)
						continue;
					assert_int_equal(ct->ncols, 4);
					for (uint32_t r = 0; r < ct->rows; r++) {
						const float *q = n->ctrl_data + ct->data_offset + 4 * r;
						double l = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] +
								(double)q[2] * q[2] + (double)q[3] * q[3]);
						assert_true(fabs(l - 1) < 1e-3);
						quats++;
					}
				}
			}
		}
		for (uint32_t k = 0; k < m->geom.n_nodes; k++) {
			const nwn_mesh *me = m->geom.nodes[k].mesh;
			if (!me || !me->skin)
				continue;
			skins++;
			const nwn_skin *s = me->skin;
			assert_non_null(s->weights);
			assert_non_null(s->bonerefs);
			for (uint32_t v = 0; v < me->n_verts; v++) {
				double sum = 0;
				for (int l = 0; l < 4; l++) {
					int16_t b = s->bonerefs[4 * v + l];
					if (b < 0)
						continue;
					assert_true(b < 17);
					int16_t node_no = s->bone_node_numbers[b];
					/* the node number names a node of the model geometry */
					assert_true(node_no >= 0 && (uint32_t)node_no < m->geom.n_nodes);
					sum += s->weights[4 * v + l];
				}
				assert_true(fabs(sum - 1) < 1e-2);
			}
			/* node-to-bone map inverts bone_node_numbers */
			for (int b = 0; b < 17; b++) {
				int16_t nn = s->bone_node_numbers[b];
				if (nn >= 0 && (uint32_t)nn < s->node_to_bone_count && s->node_to_bone[nn] >= 0)
					assert_int_equal(s->node_to_bone[nn], b);
			}
		}
		nwn_model_free(m);
	}
	assert_true(quats > 1000);
	assert_true(skins >= 2);
}


static void add_arr(range **r, size_t *n, size_t *cap, const nwn_array *a, uint64_t elem)
{
	if (a->count)
		add(r, n, cap, a->off, (uint64_t)a->count * elem);
}

static const uint8_t *g_cur_image; /* image of the model being tiled */

static void add_geometry(range **r, size_t *n, size_t *cap, const nwn_geometry *g)
{
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		const nwn_node *nd = &g->nodes[k];
		add(r, n, cap, nd->off, nwn_node_size(nd->flags));
		add_arr(r, n, cap, &nd->children_arr, 4);
		add_arr(r, n, cap, &nd->ctrl_arr, 12);
		add_arr(r, n, cap, &nd->ctrl_data_arr, 4);
		const nwn_mesh *me = nd->mesh;
		if (me) {
			add_arr(r, n, cap, &me->faces_arr, 32);
			add_arr(r, n, cap, &me->vindex_count_arr, 4);
			add_arr(r, n, cap, &me->vindex_offset_arr, 4);
			if (me->skin) {
				add(r, n, cap, me->skin->node_to_bone_ptr, 2ull * me->skin->node_to_bone_count);
				add_arr(r, n, cap, &me->skin->qbone_arr, 16);
				add_arr(r, n, cap, &me->skin->tbone_arr, 12);
				add_arr(r, n, cap, &me->skin->const_idx_arr, 4);
			}
			if (me->dangly)
				add_arr(r, n, cap, &me->dangly->constraints_arr, 4);
			if (me->aabb)
				for (uint32_t j = 0; j < me->aabb->n_entries; j++)
					add(r, n, cap, me->aabb->entries[j].off, 40);
		}
		if (nd->light) {
			const nwn_light *l = nd->light;
			add_arr(r, n, cap, &l->sizes_arr, 4);
			add_arr(r, n, cap, &l->positions_arr, 4);
			add_arr(r, n, cap, &l->colorshifts_arr, 12);
			add_arr(r, n, cap, &l->texnames_arr, 4);
			for (uint32_t j = 0; j < l->texnames_arr.count; j++) {
				uint32_t p = (uint32_t)(l->texnames_arr.off + 4 * j);
				const uint8_t *img = g_cur_image + 12 + p;
				uint32_t ptr = (uint32_t)img[0] | (uint32_t)img[1] << 8 |
					       (uint32_t)img[2] << 16 | (uint32_t)img[3] << 24;
				add(r, n, cap, ptr, strlen(l->flare_textures[j]) + 1);
			}
		}
	}
}

/* The structures the decoder found tile the model data block: every byte of
 * the model data belongs to a decoded structure (so no field is skipped), and
 * no two structures overlap. Reported per compiler. */
static void test_model_block_tiled(void **state)
{
	(void)state;
	size_t files = 0, clean = 0;
	for (size_t i = 0; i < g_nbins; i++) {
		nwn_model *m = load(g_bins[i]);
		range *r = NULL;
		size_t n = 0, cap = 0;
		g_cur_image = m->image;
		add(&r, &n, &cap, 0, 0xE8);
		add_arr(&r, &n, &cap, &m->anims_arr, 4);
		add_geometry(&r, &n, &cap, &m->geom);
		for (uint32_t a = 0; a < m->n_anims; a++) {
			add(&r, &n, &cap, m->anims[a].geom.off, 0xC4);
			add_arr(&r, &n, &cap, &m->anims[a].events_arr, 36);
			add_geometry(&r, &n, &cap, &m->anims[a].geom);
		}
		qsort(r, n, sizeof(*r), cmp_range);
		uint64_t at = 0, gaps = 0;
		for (size_t j = 0; j < n; j++) {
			if (r[j].lo < at)
				fail_msg("%s: model data structures overlap at 0x%llx", g_bins[i],
					 (unsigned long long)r[j].lo);
			if (r[j].lo > at) {
				if (getenv("LFS_VERBOSE"))
					printf("%s: gap 0x%llx..0x%llx\n", g_bins[i], (unsigned long long)at,
					       (unsigned long long)r[j].lo);
				gaps += r[j].lo - at;
			}
			at = r[j].hi;
		}
		if (at < m->model_size && getenv("LFS_VERBOSE"))
			printf("%s: tail gap 0x%llx..0x%x\n", g_bins[i], (unsigned long long)at, m->model_size);
		gaps += at < m->model_size ? m->model_size - at : 0;
		files++;
		clean += gaps == 0;
		free(r);
		nwn_model_free(m);
	}
	printf("model data fully tiled in %zu of %zu files\n", clean, files);
	assert_int_equal(clean, files);
}

/* ASCII models in the corpus are not decoded: header test says "not format". */
static void test_ascii_is_not_binary(void **state)
{
	(void)state;
	char list[4096], prefix[4096];
	snprintf(list, sizeof(list), "%s/nwn/ascii.txt", g_corpus);
	snprintf(prefix, sizeof(prefix), "%s/nwn", g_corpus);
	size_t n;
	char **asc = lfs_read_list(list, prefix, &n);
	assert_non_null(asc);
	assert_true(n > 100);
	for (size_t i = 0; i < n; i++) {
		size_t len;
		uint8_t *d = lfs_read_file_ok(asc[i], &len);
		nwn_model *m = NULL;
		lfs_error err;
		assert_false(nwn_mdl_is_binary(d, len));
		assert_int_equal(nwn_mdl_decode(d, len, &m, &err), LFS_ERR_NOTFORMAT);
		assert_null(m);
		free(d);
	}
	lfs_free_list(asc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_matches_manifest),
		cmocka_unit_test(test_raw_block_tiled),
		cmocka_unit_test(test_face_planes),
		cmocka_unit_test(test_vertex_index_list),
		cmocka_unit_test(test_model_block_tiled),
		cmocka_unit_test(test_tree_and_node_count),
		cmocka_unit_test(test_controllers_and_skins),
		cmocka_unit_test(test_ascii_is_not_binary),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
