/**
 * @file test_views.c
 * Views of real NWN binaries (corpus): viewset shape, determinism, float
 * tokens, OBJ indices and counts, CSV keys bit for bit, skin bone names, and
 * spot checks against nwnmdlcomp's decompiles (peer_decompiled/), read at run
 * time — nothing here is hard-coded from the corpus.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/floatfmt.h"
#include "formats/nwn/nwn_mdl.h"
#include "registry/names.h"
#include "formats/nwn/nwn_csv.h"
#include "formats/nwn/nwn_views.h"
#include "registry/viewset.h"
#include "conform.h"
#include "corpus.h"

static char **g_list;
static size_t g_count;
static const char *g_corpus;

static int setup(void **state)
{
	(void)state;
	g_corpus = lfs_corpus_dir_or_skip();
	g_list = lfs_corpus_list("nwn", "binary.txt", &g_count);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	lfs_free_list(g_list);
	return 0;
}

static bool build(const char *path, lfs_viewset *vs, uint8_t **data, size_t *n)
{
	*data = lfs_read_file_ok(path, n);
	lfs_error err;
	lfs_err r = lfs_views_build(lfs_base_name(path), *data, *n, NULL, vs, &err);
	if (r) {
		fprintf(stderr, "%s: %s\n", path, err.msg);
		return false;
	}
	return true;
}

/* ---- tiny text helpers ------------------------------------------------------ */

/* A document split into lines of whitespace-separated tokens. */
typedef struct doc {
	char *text;
	char ***tok; /* per line: NULL-terminated token array */
	size_t *ntok;
	size_t n;
} doc;

static void doc_parse(doc *d, const char *src, size_t len)
{
	d->text = malloc(len + 1);
	memcpy(d->text, src, len);
	d->text[len] = '\0';
	size_t lines = 1;
	for (size_t i = 0; i < len; i++)
		lines += d->text[i] == '\n';
	d->tok = calloc(lines, sizeof(*d->tok));
	d->ntok = calloc(lines, sizeof(*d->ntok));
	d->n = 0;
	char *save = NULL;
	for (char *line = strtok_r(d->text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t cap = 8, k = 0;
		char **t = malloc(cap * sizeof(*t));
		char *s2 = NULL;
		for (char *w = strtok_r(line, " \t\r", &s2); w; w = strtok_r(NULL, " \t\r", &s2)) {
			if (k + 1 >= cap)
				t = realloc(t, (cap *= 2) * sizeof(*t));
			t[k++] = w;
		}
		t[k] = NULL;
		if (k == 0) {
			free(t);
			continue;
		}
		d->tok[d->n] = t;
		d->ntok[d->n] = k;
		d->n++;
	}
}

static void doc_free(doc *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->tok[i]);
	free(d->tok);
	free(d->ntok);
	free(d->text);
}

/* Line range [*b, *e) of node @p name inside animation @p anim (NULL = model
 * geometry). Names compared case-insensitively. */
static bool doc_node(const doc *d, const char *anim, const char *name, size_t *b, size_t *e)
{
	const char *cur = NULL;
	for (size_t i = 0; i < d->n; i++) {
		char **t = d->tok[i];
		if (!strcasecmp(t[0], "newanim") && t[1])
			cur = t[1];
		if (strcasecmp(t[0], "node") || d->ntok[i] < 3)
			continue;
		bool in_anim = anim ? (cur && !strcasecmp(cur, anim)) : cur == NULL;
		if (!in_anim || strcasecmp(t[2], name))
			continue;
		size_t j = i + 1;
		while (j < d->n && strcasecmp(d->tok[j][0], "endnode"))
			j++;
		*b = i + 1;
		*e = j;
		return true;
	}
	return false;
}

/* Line index of keyword @p kw in [b, e), or SIZE_MAX. */
static size_t doc_kw(const doc *d, size_t b, size_t e, const char *kw)
{
	for (size_t i = b; i < e; i++)
		if (!strcasecmp(d->tok[i][0], kw))
			return i;
	return SIZE_MAX;
}

static float tokf(const char *s)
{
	float f;
	assert_true(lfs_parse_float(s, strlen(s), &f));
	return f;
}

static bool is_number_token(const char *s)
{
	char *end;
	strtod(s, &end);
	return end != s && *end == '\0';
}

/* ---- viewset shape ------------------------------------------------------------ */

/* Every corpus binary: detected, builds, sorted unique paths, the fixed views
 * present, every path component a safe name, a second build byte-identical. */
static void every_binary_builds(void **state)
{
	(void)state;
	size_t total_views = 0;
	for (size_t f = 0; f < g_count; f++) {
		size_t n;
		uint8_t *data;
		lfs_viewset vs, vs2;
		data = lfs_read_file_ok(g_list[f], &n);
		assert_ptr_equal(lfs_format_for(lfs_base_name(g_list[f]), data, n), &lfs_format_nwn_mdl);
		free(data);
		assert_true(build(g_list[f], &vs, &data, &n));
		assert_ptr_equal(vs.format, &lfs_format_nwn_mdl);
		assert_non_null(lfs_viewset_find(&vs, "model.mdl"));
		assert_non_null(lfs_viewset_find(&vs, "model.obj"));
		assert_non_null(lfs_viewset_find(&vs, "model.mtl"));
		assert_null(lfs_viewset_find(&vs, "nope"));
		for (size_t i = 0; i < vs.n_views; i++) {
			if (i)
				assert_true(strcmp(vs.views[i - 1].path, vs.views[i].path) < 0);
			assert_ptr_equal(lfs_viewset_find(&vs, vs.views[i].path), &vs.views[i]);
			char tmp[1024];
			snprintf(tmp, sizeof(tmp), "%s", vs.views[i].path);
			char *save = NULL;
			for (char *c = strtok_r(tmp, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
				assert_true(strcmp(c, ".") && strcmp(c, ".."));
				assert_true(strlen(c) <= 255);
			}
			assert_int_equal(strlen(vs.views[i].data), vs.views[i].size);
		}
		lfs_error err;
		assert_int_equal(
			lfs_views_build(lfs_base_name(g_list[f]), data, n, NULL, &vs2, &err),
			LFS_OK);
		assert_int_equal(vs.n_views, vs2.n_views);
		for (size_t i = 0; i < vs.n_views; i++) {
			assert_string_equal(vs.views[i].path, vs2.views[i].path);
			assert_int_equal(vs.views[i].size, vs2.views[i].size);
			assert_memory_equal(vs.views[i].data, vs2.views[i].data, vs.views[i].size);
		}
		total_views += vs.n_views;
		lfs_viewset_free(&vs);
		lfs_viewset_free(&vs2);
		free(data);
	}
	assert_true(total_views > g_count * 3);
}

/* Not a model: wrong extension, or ASCII bytes -> NOTFORMAT. */
static void non_models_pass_through(void **state)
{
	(void)state;
	size_t n;
	uint8_t *data = lfs_read_file_ok(g_list[0], &n);
	assert_null(lfs_format_for("x.tga", data, n));
	assert_ptr_equal(lfs_format_for("X.MDL", data, n), &lfs_format_nwn_mdl);
	lfs_viewset vs;
	lfs_error err;
	assert_int_equal(lfs_views_build("x.txt", data, n, NULL, &vs, &err), LFS_ERR_NOTFORMAT);
	static const uint8_t ascii[] = "# ascii\nnewmodel x\n";
	assert_int_equal(lfs_views_build("x.mdl", ascii, sizeof(ascii) - 1, NULL, &vs, &err),
			 LFS_ERR_NOTFORMAT);
	free(data);
}

/* Every numeric token of model.mdl is a whole number strtof reads. */
static void ascii_numbers_parse(void **state)
{
	(void)state;
	size_t tokens = 0;
	for (size_t f = 0; f < g_count; f++) {
		size_t n;
		uint8_t *data;
		lfs_viewset vs;
		assert_true(build(g_list[f], &vs, &data, &n));
		const lfs_view *v = lfs_viewset_find(&vs, "model.mdl");
		assert_null(memchr(v->data, '\r', v->size));
		doc d;
		doc_parse(&d, v->data, v->size);
		for (size_t i = 0; i < d.n; i++) {
			if (d.tok[i][0][0] == '#')
				continue;
			for (size_t k = 0; k < d.ntok[i]; k++) {
				const char *t = d.tok[i][k];
				if (!(t[0] == '-' || (t[0] >= '0' && t[0] <= '9')))
					continue;
				char *end;
				float x = strtof(t, &end);
				(void)x;
				if (*end != '\0') {
					/* a name that starts with a digit is allowed only in
					 * name positions (node/parent/bitmap/...) */
					assert_false(is_number_token(t));
					continue;
				}
				tokens++;
			}
		}
		doc_free(&d);
		lfs_viewset_free(&vs);
		free(data);
	}
	assert_true(tokens > 1000);
}

/* ---- OBJ ------------------------------------------------------------------------ */

static void obj_counts_and_indices(void **state)
{
	(void)state;
	size_t meshes = 0;
	for (size_t f = 0; f < g_count; f++) {
		size_t n;
		uint8_t *data;
		lfs_viewset vs;
		assert_true(build(g_list[f], &vs, &data, &n));
		nwn_model *m;
		assert_int_equal(nwn_mdl_decode(data, n, &m, NULL), LFS_OK);
		lfs_nameset names;
		lfs_nameset_init(&names);
		for (uint32_t i = 0; i < m->geom.n_nodes; i++) {
			const nwn_node *nd = &m->geom.nodes[i];
			if (!nd->mesh)
				continue;
			char path[512];
			snprintf(path, sizeof(path), "meshes/%s.obj", lfs_nameset_add(&names, nd->name));
			const lfs_view *v = lfs_viewset_find(&vs, path);
			assert_non_null(v);
			doc d;
			doc_parse(&d, v->data, v->size);
			size_t nv = 0, nvt = 0, nvn = 0, nf = 0;
			for (size_t l = 0; l < d.n; l++) {
				const char *k = d.tok[l][0];
				if (!strcmp(k, "v"))
					nv++;
				else if (!strcmp(k, "vt"))
					nvt++;
				else if (!strcmp(k, "vn"))
					nvn++;
				else if (!strcmp(k, "f")) {
					nf++;
					assert_int_equal(d.ntok[l], 4);
					for (int c = 1; c <= 3; c++) {
						char *s = d.tok[l][c];
						long a = strtol(s, &s, 10);
						assert_true(a >= 1 && (size_t)a <= nv);
						assert_true(a - 1 == nd->mesh->faces[nf - 1].v[c - 1]);
						while (*s == '/') {
							s++;
							if (*s == '/')
								continue;
							long b = strtol(s, &s, 10);
							assert_int_equal(b, a);
						}
					}
				}
			}
			assert_int_equal(nv, nd->mesh->verts ? nd->mesh->n_verts : 0);
			if (nd->mesh->tverts[0])
				assert_int_equal(nvt, nv);
			if (nd->mesh->normals)
				assert_int_equal(nvn, nv);
			assert_int_equal(nf, nd->mesh->n_faces);
			assert_true(strstr(v->data, "mtllib ../model.mtl\n") != NULL);
			doc_free(&d);
			meshes++;
		}
		/* model.obj: all indices in range of the vertices defined so far */
		const lfs_view *mo = lfs_viewset_find(&vs, "model.obj");
		doc d;
		doc_parse(&d, mo->data, mo->size);
		size_t nv = 0;
		for (size_t l = 0; l < d.n; l++) {
			if (!strcmp(d.tok[l][0], "v"))
				nv++;
			if (!strcmp(d.tok[l][0], "f"))
				for (int c = 1; c <= 3; c++) {
					long a = strtol(d.tok[l][c], NULL, 10);
					assert_true(a >= 1 && (size_t)a <= nv);
				}
		}
		doc_free(&d);
		lfs_nameset_free(&names);
		nwn_model_free(m);
		lfs_viewset_free(&vs);
		free(data);
	}
	assert_true(meshes > 0);
}

/* ---- CSV ------------------------------------------------------------------------ */

static void csv_rows_and_times(void **state)
{
	(void)state;
	size_t files = 0;
	for (size_t f = 0; f < g_count; f++) {
		size_t n;
		uint8_t *data;
		lfs_viewset vs;
		assert_true(build(g_list[f], &vs, &data, &n));
		nwn_model *m;
		assert_int_equal(nwn_mdl_decode(data, n, &m, NULL), LFS_OK);
		lfs_nameset anames;
		lfs_nameset_init(&anames);
		for (uint32_t a = 0; a < m->n_anims; a++) {
			const nwn_geometry *g = &m->anims[a].geom;
			const char *an = lfs_nameset_add(&anames, g->name);
			lfs_nameset nn;
			lfs_nameset_init(&nn);
			for (uint32_t i = 0; i < g->n_nodes; i++) {
				const nwn_node *nd = &g->nodes[i];
				if (!nd->n_ctrls)
					continue;
				const char *node = lfs_nameset_add(&nn, nd->name);
				for (uint32_t k = 0; k < nd->n_ctrls; k++) {
					const nwn_controller *c = &nd->ctrls[k];
					bool dup = false;
					for (uint32_t j = 0; j < k; j++)
						dup |= nd->ctrls[j].type == c->type;
					if (dup)
						continue; /* "~2" names: covered by the shape test */
					char lb[48], path[1024];
					snprintf(path, sizeof(path), "anims/%s/%s.%s.csv", an, node,
						 nwn_csv_controller_label(nd, c, lb, sizeof(lb)));
					const lfs_view *v = lfs_viewset_find(&vs, path);
					assert_non_null(v);
					/* LF records (no CR), header + one row per key */
					size_t rows = 0;
					const char *p = v->data;
					assert_int_equal(strncmp(p, "time", 4), 0);
					assert_null(memchr(v->data, '\r', v->size));
					const char *eol = strchr(p, '\n');
					assert_non_null(eol);
					p = eol + 1;
					while (*p) {
						eol = strchr(p, '\n');
						assert_non_null(eol);
						char tbuf[64];
						size_t tl = strcspn(p, ",\n");
						assert_true(tl < sizeof(tbuf));
						memcpy(tbuf, p, tl);
						tbuf[tl] = '\0';
						assert_true(rows < c->rows);
						float t = tokf(tbuf);
						assert_int_equal(lfs_f32_bits(t),
								 lfs_f32_bits(nd->ctrl_data[c->key_offset + rows]));
						/* columns: time + ncols */
						size_t commas = 0;
						for (const char *q = p; q < eol; q++)
							commas += *q == ',';
						assert_int_equal(commas, c->ncols);
						rows++;
						p = eol + 1;
					}
					assert_int_equal(rows, c->rows);
					files++;
				}
			}
			lfs_nameset_free(&nn);
		}
		lfs_nameset_free(&anames);
		nwn_model_free(m);
		lfs_viewset_free(&vs);
		free(data);
	}
	assert_true(files > 100);
}

/* ---- skin weights name existing nodes ------------------------------------------ */

static void skin_weights_name_nodes(void **state)
{
	(void)state;
	size_t rows_seen = 0;
	for (size_t f = 0; f < g_count; f++) {
		size_t n;
		uint8_t *data;
		lfs_viewset vs;
		assert_true(build(g_list[f], &vs, &data, &n));
		nwn_model *m;
		assert_int_equal(nwn_mdl_decode(data, n, &m, NULL), LFS_OK);
		const lfs_view *v = lfs_viewset_find(&vs, "model.mdl");
		doc d;
		doc_parse(&d, v->data, v->size);
		for (size_t i = 0; i < d.n; i++) {
			if (strcmp(d.tok[i][0], "weights") || d.ntok[i] != 2)
				continue;
			size_t cnt = strtoul(d.tok[i][1], NULL, 10);
			assert_true(i + cnt < d.n);
			for (size_t r = 1; r <= cnt; r++) {
				char **t = d.tok[i + r];
				assert_int_equal(d.ntok[i + r] % 2, 0);
				assert_true(d.ntok[i + r] >= 2 && d.ntok[i + r] <= 8);
				for (size_t k = 0; k < d.ntok[i + r]; k += 2) {
					bool found = false;
					for (uint32_t q = 0; q < m->geom.n_nodes && !found; q++)
						found = !strcmp(m->geom.nodes[q].name, t[k]);
					assert_true(found);
					float w = tokf(t[k + 1]);
					assert_true(w >= 0.0f && w <= 1.0f);
				}
				rows_seen++;
			}
		}
		doc_free(&d);
		nwn_model_free(m);
		lfs_viewset_free(&vs);
		free(data);
	}
	assert_true(rows_seen > 0);
}

/* ---- against the peer's decompiles -------------------------------------------- */

static const char *rollnw_dir = "rollnw/tests/test_data/renderer/nwn_dump_user/development/mdl";

static bool load_pair(const char *model, doc *ours, doc *peer, nwn_model **mp)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/nwn/tree/%s/%s.mdl", g_corpus, rollnw_dir, model);
	size_t n;
	uint8_t *data;
	lfs_viewset vs;
	if (!build(path, &vs, &data, &n))
		return false;
	const lfs_view *v = lfs_viewset_find(&vs, "model.mdl");
	doc_parse(ours, v->data, v->size);
	if (mp)
		assert_int_equal(nwn_mdl_decode(data, n, mp, NULL), LFS_OK);
	lfs_viewset_free(&vs);
	free(data);
	snprintf(path, sizeof(path), "%s/nwn/peer_decompiled/%s/%s.mdl", g_corpus, rollnw_dir, model);
	uint8_t *p = lfs_read_file_ok(path, &n);
	doc_parse(peer, (const char *)p, n);
	free(p);
	return true;
}

/* Quaternion of an ASCII axis-angle (double). */
static void aa_quat(char **t, double q[4])
{
	double x = tokf(t[0]), y = tokf(t[1]), z = tokf(t[2]), a = tokf(t[3]);
	double len = sqrt(x * x + y * y + z * z);
	if (len == 0) {
		q[0] = q[1] = q[2] = 0;
		q[3] = 1;
		return;
	}
	double s = sin(a / 2) / len;
	q[0] = x * s;
	q[1] = y * s;
	q[2] = z * s;
	q[3] = cos(a / 2);
}

static void assert_same_rotation(char **peer, char **ours)
{
	double a[4], b[4];
	aa_quat(peer, a);
	aa_quat(ours, b);
	/* the peer rounds near-identity keys to "0 0 0 0" */
	bool peer_id = !strcmp(peer[0], "0") && !strcmp(peer[1], "0") && !strcmp(peer[2], "0") &&
		       !strcmp(peer[3], "0");
	double tol = peer_id ? 5e-3 : 2e-5, d1 = 0, d2 = 0;
	for (int k = 0; k < 4; k++) {
		d1 = fmax(d1, fabs(a[k] - b[k]));
		d2 = fmax(d2, fabs(a[k] + b[k]));
	}
	if (fmin(d1, d2) > tol)
		fail_msg("rotation %s %s %s %s vs ours %s %s %s %s", peer[0], peer[1], peer[2], peer[3],
			 ours[0], ours[1], ours[2], ours[3]);
}

/* Every single-line attribute and every key list the peer prints for a node
 * is in ours with the same values (floats bit for bit; orientations as the
 * same rotation), except the peer's typo "setfillumcolor" and its
 * "isdynamic" spelling (we print nDynamicType). */
static void compare_node(const doc *pd, size_t pb, size_t pe, const doc *od, size_t ob, size_t oe,
			 const char *where)
{
	for (size_t i = pb; i < pe; i++) {
		char **t = pd->tok[i];
		size_t nt = pd->ntok[i];
		const char *kw = t[0];
		if (kw[0] == '#' || !strcasecmp(kw, "setfillumcolor"))
			continue;
		/* lists are compared elsewhere (index spaces differ): skip rows */
		static const char *const lists[] = { "verts", "tverts", "faces", "weights",
						     "constraints", "normals", "colors" };
		bool skip = false;
		for (size_t k = 0; k < sizeof(lists) / sizeof(lists[0]); k++)
			skip |= !strcasecmp(kw, lists[k]);
		if (skip) {
			i += strtoul(t[1], NULL, 10);
			continue;
		}
		if (!strcasecmp(kw, "aabb")) {
			while (i + 1 < pe && is_number_token(pd->tok[i + 1][0]))
				i++;
			continue;
		}
		if (!is_number_token(t[nt - 1]) || nt == 1) {
			/* string attribute (parent, bitmap, texture, update, ...) */
			size_t j = doc_kw(od, ob, oe, kw);
			if (j == SIZE_MAX)
				fail_msg("%s: %s missing in ours", where, kw);
			assert_int_equal(od->ntok[j], nt);
			for (size_t k = 1; k < nt; k++)
				assert_string_equal(od->tok[j][k], t[k]);
			continue;
		}
		const char *okw = !strcasecmp(kw, "isdynamic") ? "nDynamicType" : kw;
		size_t j = doc_kw(od, ob, oe, okw);
		if (j == SIZE_MAX)
			fail_msg("%s: %s missing in ours", where, kw);
		char **u = od->tok[j];
		size_t len = strlen(kw);
		bool keyed = len > 3 && !strcasecmp(kw + len - 3, "key");
		if (!keyed) {
			assert_int_equal(od->ntok[j], nt);
			if (!strcasecmp(kw, "orientation")) {
				assert_same_rotation(t + 1, u + 1);
				continue;
			}
			for (size_t k = 1; k < nt; k++)
				if (lfs_f32_bits(tokf(t[k])) != lfs_f32_bits(tokf(u[k])))
					fail_msg("%s: %s %s vs ours %s", where, kw, t[k], u[k]);
			continue;
		}
		size_t rows = strtoul(t[1], NULL, 10);
		assert_string_equal(u[1], t[1]);
		bool orient = !strcasecmp(kw, "orientationkey");
		for (size_t r = 1; r <= rows; r++) {
			char **pr = pd->tok[i + r], **orw = od->tok[j + r];
			assert_int_equal(od->ntok[j + r], pd->ntok[i + r]);
			assert_int_equal(lfs_f32_bits(tokf(pr[0])), lfs_f32_bits(tokf(orw[0])));
			if (orient) {
				assert_same_rotation(pr + 1, orw + 1);
				continue;
			}
			for (size_t k = 1; k < pd->ntok[i + r]; k++)
				if (lfs_f32_bits(tokf(pr[k])) != lfs_f32_bits(tokf(orw[k])))
					fail_msg("%s: %s row %zu %s vs ours %s", where, kw, r, pr[k], orw[k]);
		}
		i += rows;
	}
}

/* All nodes of the model geometry and of every animation. */
static void compare_all_nodes(const doc *pd, const doc *od)
{
	const char *anim = NULL;
	size_t nodes = 0;
	for (size_t i = 0; i < pd->n; i++) {
		char **t = pd->tok[i];
		if (!strcasecmp(t[0], "newanim"))
			anim = t[1];
		if (strcasecmp(t[0], "node"))
			continue;
		size_t pb, pe, ob, oe;
		assert_true(doc_node(pd, anim, t[2], &pb, &pe));
		if (!doc_node(od, anim, t[2], &ob, &oe))
			fail_msg("node %s (anim %s) missing in ours", t[2], anim ? anim : "-");
		char where[256];
		snprintf(where, sizeof(where), "%s/%s", anim ? anim : "geometry", t[2]);
		if (anim) {
			/* animation nodes: only controllers (the anim mesh header
			 * defaults the peer prints are not part of our dialect) */
			for (size_t k = pb; k < pe; k++) {
				size_t len = strlen(pd->tok[k][0]);
				if (len > 3 && !strcasecmp(pd->tok[k][0] + len - 3, "key")) {
					compare_node(pd, k, k + 1 + strtoul(pd->tok[k][1], NULL, 10), od,
						     ob, oe, where);
				}
			}
		} else {
			compare_node(pd, pb, pe, od, ob, oe, where);
		}
		nodes++;
	}
	assert_true(nodes > 0);
}

/* Rows of list @p kw of a node block, or NULL. */
static char ***list_rows(const doc *d, size_t b, size_t e, const char *kw, size_t *n)
{
	size_t i = doc_kw(d, b, e, kw);
	if (i == SIZE_MAX)
		return NULL;
	*n = strtoul(d->tok[i][1], NULL, 10);
	assert_true(i + *n < e);
	return d->tok + i + 1;
}

/* Mesh lists through the faces: the peer's vertex list is merged, ours is the
 * binary's split list, so compare per face corner. */
static void compare_mesh(const doc *pd, const doc *od, const char *node)
{
	size_t pb, pe, ob, oe, npf = 0, nof = 0, tmp = 0;
	assert_true(doc_node(pd, NULL, node, &pb, &pe));
	assert_true(doc_node(od, NULL, node, &ob, &oe));
	char ***pf = list_rows(pd, pb, pe, "faces", &npf);
	char ***of = list_rows(od, ob, oe, "faces", &nof);
	assert_non_null(pf);
	assert_non_null(of);
	assert_int_equal(npf, nof);
	char ***pv = list_rows(pd, pb, pe, "verts", &tmp), ***ov = list_rows(od, ob, oe, "verts", &tmp);
	char ***pt = list_rows(pd, pb, pe, "tverts", &tmp), ***ot = list_rows(od, ob, oe, "tverts", &tmp);
	char ***pw = list_rows(pd, pb, pe, "weights", &tmp), ***ow = list_rows(od, ob, oe, "weights", &tmp);
	char ***pc = list_rows(pd, pb, pe, "constraints", &tmp);
	char ***oc = list_rows(od, ob, oe, "constraints", &tmp);
	assert_true((pw == NULL) == (ow == NULL));
	assert_true((pc == NULL) == (oc == NULL));
	for (size_t f = 0; f < npf; f++) {
		assert_string_equal(pf[f][7], of[f][7]); /* surface id */
		for (int c = 0; c < 3; c++) {
			long a = strtol(pf[f][c], NULL, 10), b = strtol(of[f][c], NULL, 10);
			for (int k = 0; k < 3; k++)
				assert_int_equal(lfs_f32_bits(tokf(pv[a][k])), lfs_f32_bits(tokf(ov[b][k])));
			if (pt && ot) {
				long ta = strtol(pf[f][4 + c], NULL, 10), tb = strtol(of[f][4 + c], NULL, 10);
				for (int k = 0; k < 2; k++)
					assert_int_equal(lfs_f32_bits(tokf(pt[ta][k])), lfs_f32_bits(tokf(ot[tb][k])));
			}
			if (pw) {
				/* same set of (bone, weight) pairs */
				size_t pn = 0, on = 0;
				while (pw[a][pn])
					pn++;
				while (ow[b][on])
					on++;
				assert_int_equal(pn, on);
				for (size_t k = 0; k < pn; k += 2) {
					bool found = false;
					for (size_t l = 0; l < on && !found; l += 2)
						found = !strcmp(pw[a][k], ow[b][l]) &&
							lfs_f32_bits(tokf(pw[a][k + 1])) == lfs_f32_bits(tokf(ow[b][l + 1]));
					if (!found)
						fail_msg("%s: weight %s %s missing in ours", node, pw[a][k],
							 pw[a][k + 1]);
				}
			}
			if (pc)
				assert_int_equal(lfs_f32_bits(tokf(pc[a][0])), lfs_f32_bits(tokf(oc[b][0])));
		}
	}
}

static void peer_it_torch(void **state)
{
	(void)state;
	doc o, p;
	nwn_model *m;
	assert_true(load_pair("it_torch_000", &o, &p, &m));
	compare_all_nodes(&p, &o);
	for (uint32_t i = 0; i < m->geom.n_nodes; i++)
		if (m->geom.nodes[i].mesh)
			compare_mesh(&p, &o, m->geom.nodes[i].name);
	nwn_model_free(m);
	doc_free(&o);
	doc_free(&p);
}

static void peer_skin_and_dangly(void **state)
{
	(void)state;
	const char *models[] = { "c_drgshad", "c_aribeth" };
	size_t skins = 0, danglies = 0;
	for (size_t k = 0; k < 2; k++) {
		doc o, p;
		nwn_model *m;
		assert_true(load_pair(models[k], &o, &p, &m));
		compare_all_nodes(&p, &o);
		for (uint32_t i = 0; i < m->geom.n_nodes; i++) {
			const nwn_node *nd = &m->geom.nodes[i];
			if (!nd->mesh)
				continue;
			compare_mesh(&p, &o, nd->name);
			skins += nd->mesh->skin != NULL;
			danglies += nd->mesh->dangly != NULL;
		}
		nwn_model_free(m);
		doc_free(&o);
		doc_free(&p);
	}
	assert_true(skins > 0);
	assert_true(danglies > 0);
}

static void peer_tile_aabb_light(void **state)
{
	(void)state;
	doc o, p;
	nwn_model *m;
	assert_true(load_pair("ttd01_a04_03", &o, &p, &m));
	compare_all_nodes(&p, &o);
	size_t aabbs = 0;
	for (uint32_t i = 0; i < m->geom.n_nodes; i++) {
		const nwn_node *nd = &m->geom.nodes[i];
		if (!nd->mesh)
			continue;
		compare_mesh(&p, &o, nd->name);
		if (!nd->mesh->aabb)
			continue;
		/* the aabb rows: same count, order and values */
		size_t pb, pe, ob, oe;
		assert_true(doc_node(&p, NULL, nd->name, &pb, &pe));
		assert_true(doc_node(&o, NULL, nd->name, &ob, &oe));
		size_t pi = doc_kw(&p, pb, pe, "aabb"), oi = doc_kw(&o, ob, oe, "aabb");
		assert_true(pi != SIZE_MAX && oi != SIZE_MAX);
		size_t rows = 0;
		for (;; pi++, oi++, rows++) {
			char **pt = p.tok[pi], **ot = o.tok[oi];
			size_t off_p = rows ? 0 : 1, off_o = rows ? 0 : 1;
			if (pi >= pe || !is_number_token(pt[off_p]))
				break;
			assert_true(oi < oe && is_number_token(ot[off_o]));
			assert_int_equal(p.ntok[pi] - off_p, 7);
			assert_int_equal(o.ntok[oi] - off_o, 7);
			for (int k = 0; k < 7; k++)
				assert_int_equal(lfs_f32_bits(tokf(pt[off_p + k])), lfs_f32_bits(tokf(ot[off_o + k])));
		}
		assert_int_equal(rows, nd->mesh->aabb->n_entries);
		aabbs++;
	}
	assert_true(aabbs > 0);
	nwn_model_free(m);
	doc_free(&o);
	doc_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_binary_builds),
		cmocka_unit_test(non_models_pass_through),
		cmocka_unit_test(ascii_numbers_parse),
		cmocka_unit_test(obj_counts_and_indices),
		cmocka_unit_test(csv_rows_and_times),
		cmocka_unit_test(skin_weights_name_nodes),
		cmocka_unit_test(peer_it_torch),
		cmocka_unit_test(peer_skin_and_dangly),
		cmocka_unit_test(peer_tile_aabb_light),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
