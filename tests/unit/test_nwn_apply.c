/**
 * @file test_nwn_apply.c
 * nwn_apply_view() (through lfs_view_apply) on every corpus binary (docs/nwn-compile.md "Edits"):
 *  - unedited views (model.mdl, every meshes/ *.obj, every anims CSV) give the
 *    original bytes; so does model.mdl re-typed with other number spellings
 *    and CRLF line ends (the value comparison path, not the fast path);
 *  - value edits (a vertex through model.mdl and through the mesh OBJ, a key
 *    through a CSV, an orientation, a material colour, a controller value)
 *    change exactly the bytes computed from the decoded model's offsets and
 *    the derived-value rules, and the result decodes to the edited values;
 *  - structural edits (nodes, animations, events, controllers added or
 *    removed, a parent changed, OBJ vertices and faces added or removed)
 *    decode back to the edited text and leave every untouched node's bytes;
 *    with the supermodel found, part numbers are the game's;
 *  - parse errors carry exact file:line:col; mutated text never crashes.
 * Nothing is hard-coded from the corpus: targets, offsets and expected values
 * come from the decoded models at run time.
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

#include "common/strbuf.h"
#include "formats/nwn/nwn_mdl.h"
#include "law/law.h"
#include "formats/nwn/nwn_apply.h"
#include "formats/nwn/nwn_views.h"
#include "formats/nwn/nwn_ascii.h"
#include "text/mdl_parse.h"
#include "registry/viewset.h"
#include "conform.h"
#include "corpus.h"
#include "testrng.h"

static char **g_list;  /* the models walked (the fast tier: a slice, docs/testing.md) */
static size_t g_count;
static char **g_all;   /* every binary: supermodels are looked up among them */
static size_t g_nall;

static int setup(void **state)
{
	(void)state;
	g_list = lfs_corpus_list("nwn", "binary.txt", &g_count);
	g_all = lfs_corpus_list("nwn", "binary.txt", &g_nall);
	lfs_test_slice(g_list, &g_count);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	lfs_free_list(g_list);
	lfs_free_list(g_all);
	return 0;
}

typedef struct item {
	uint8_t *data;
	size_t n;
	nwn_model *m;
	lfs_viewset vs;
} item;

static void load_path(const char *path, item *it)
{
	memset(it, 0, sizeof(*it));
	it->data = lfs_read_file_ok(path, &it->n);
	lfs_error err;
	assert_int_equal(nwn_mdl_decode(it->data, it->n, &it->m, &err), LFS_OK);
	assert_int_equal(lfs_views_build(lfs_base_name(path), it->data, it->n, NULL, &it->vs, &err),
			 LFS_OK);
}

static void load(size_t i, item *it)
{
	load_path(g_list[i], it);
}

static void unload(item *it)
{
	free(it->data);
	nwn_model_free(it->m);
	lfs_viewset_free(&it->vs);
}

static lfs_err apply(const item *it, const char *view, const char *text, size_t tn, uint8_t **out,
		     size_t *outn, lfs_error *err)
{
	const lfs_view *v = lfs_viewset_find(&it->vs, view);
	if (!v)
		return lfs_views_apply("x.mdl", it->data, it->n, view, text, tn, out, outn, err);
	return lfs_view_apply(it->vs.format, it->data, it->n, v, text, tn, NULL, out, outn, err);
}

/* Apply and require success (any output size). */
static uint8_t *apply_any(const item *it, const char *view, const char *text, size_t tn, size_t *on)
{
	uint8_t *out = NULL;
	lfs_error err;
	lfs_err r = apply(it, view, text, tn, &out, on, &err);
	if (r)
		fprintf(stderr, "%s: %s\n", view, err.msg);
	assert_int_equal(r, LFS_OK);
	return out;
}

/* Apply a value edit: success and the original size. */
static uint8_t *apply_ok(const item *it, const char *view, const char *text, size_t tn)
{
	size_t on = 0;
	uint8_t *out = apply_any(it, view, text, tn, &on);
	assert_int_equal(on, it->n);
	return out;
}

/* ---- allowed byte ranges ------------------------------------------------------ */

typedef struct ranges {
	size_t lo[4096], hi[4096];
	size_t n;
} ranges;

static void allow(ranges *r, size_t file_off, size_t len)
{
	assert_true(r->n < 4096);
	r->lo[r->n] = file_off;
	r->hi[r->n] = file_off + len;
	r->n++;
}

/* Every changed byte lies in an allowed range; returns the number changed. */
static size_t check_changes(const uint8_t *a, const uint8_t *b, size_t n, const ranges *r,
			    const char *what)
{
	size_t changed = 0;
	for (size_t i = 0; i < n; i++) {
		if (a[i] == b[i])
			continue;
		changed++;
		bool ok = false;
		for (size_t k = 0; k < r->n && !ok; k++)
			ok = i >= r->lo[k] && i < r->hi[k];
		if (!ok)
			fprintf(stderr, "%s: byte 0x%zx changed outside the expected set\n", what, i);
		assert_true(ok);
	}
	return changed;
}

static float rdf(const uint8_t *p)
{
	uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static char *gen_mdl(const nwn_model *m, size_t *len)
{
	lfs_sb sb = { 0 };
	lfs_error err;
	assert_int_equal(nwn_ascii_write(m, &sb, &err), LFS_OK);
	return lfs_sb_take(&sb, len);
}

/* Replace line @p line (1-based) of @p text with @p repl; malloc'd result. */
static char *replace_line(const char *text, size_t n, unsigned line, const char *repl, size_t *outn)
{
	size_t s = 0;
	for (unsigned l = 1; l < line && s < n; s++)
		if (text[s] == '\n')
			l++;
	size_t e = s;
	while (e < n && text[e] != '\n')
		e++;
	size_t rl = strlen(repl);
	char *o = malloc(n - (e - s) + rl + 1);
	assert_non_null(o);
	memcpy(o, text, s);
	memcpy(o + s, repl, rl);
	memcpy(o + s + rl, text + e, n - e);
	*outn = n - (e - s) + rl;
	o[*outn] = 0;
	return o;
}

/* Line number (1-based) of the first line starting with @p prefix at or after
 * line @p from; 0 when none. */
static unsigned find_line(const char *text, size_t n, unsigned from, const char *prefix)
{
	size_t pl = strlen(prefix);
	unsigned line = 1;
	for (size_t s = 0; s < n;) {
		size_t e = s;
		while (e < n && text[e] != '\n')
			e++;
		if (line >= from && e - s >= pl && !memcmp(text + s, prefix, pl))
			return line;
		s = e + 1;
		line++;
	}
	return 0;
}

/* ---- (a) unedited views ------------------------------------------------------- */

static void test_unedited_views(void **state)
{
	(void)state;
	size_t views = 0, mdl = 0, obj = 0, csv = 0;
	for (size_t i = 0; i < g_count; i++) {
		item it;
		load(i, &it);
		for (size_t v = 0; v < it.vs.n_views; v++) {
			const lfs_view *w = &it.vs.views[v];
			if (!strcmp(w->path, "model.obj") || !strcmp(w->path, "model.mtl"))
				continue;
			uint8_t *out = apply_ok(&it, w->path, w->data, w->size);
			assert_memory_equal(out, it.data, it.n);
			free(out);
			views++;
			mdl += !strcmp(w->path, "model.mdl");
			obj += !strncmp(w->path, "meshes/", 7);
			csv += !strncmp(w->path, "anims/", 6);
		}
		unload(&it);
	}
	printf("unedited views applied: %zu (model.mdl %zu, obj %zu, csv %zu), all byte-identical\n",
	       views, mdl, obj, csv);
	assert_int_equal(mdl, g_count);
	assert_true(obj > 0 && csv > 0);
}

/* model.mdl re-typed: every number printed with %.9g, CRLF line ends, extra
 * indentation. Same values -> the original bytes (comparison path). */
static void test_retyped_mdl(void **state)
{
	(void)state;
	size_t files = 0;
	for (size_t i = 0; i < g_count; i++) {
		item it;
		load(i, &it);
		const lfs_view *w = lfs_viewset_find(&it.vs, "model.mdl");
		assert_non_null(w);
		lfs_sb sb = { 0 };
		const char *p = w->data, *end = w->data + w->size;
		bool changed = false;
		while (p < end) {
			const char *le = memchr(p, '\n', (size_t)(end - p));
			if (!le)
				le = end;
			bool comment = false;
			for (const char *q = p; q < le && (*q == ' ' || *q == '#'); q++)
				if (*q == '#')
					comment = true;
			if (!comment)
				lfs_sb_puts(&sb, "\t");
			for (const char *q = p; q < le;) {
				if (*q == ' ') {
					lfs_sb_putc(&sb, *q++);
					continue;
				}
				const char *t = q;
				while (q < le && *q != ' ')
					q++;
				char tok[64];
				size_t tl = (size_t)(q - t);
				char *ep = NULL;
				if (!comment && tl < sizeof(tok)) {
					memcpy(tok, t, tl);
					tok[tl] = 0;
					float f = strtof(tok, &ep);
					if (ep && *ep == 0 && ep != tok && strchr(tok, '.') && isfinite(f)) {
						char b[48];
						snprintf(b, sizeof(b), "%.9g", (double)f);
						if (strcmp(b, tok))
							changed = true;
						lfs_sb_puts(&sb, b);
						continue;
					}
				}
				lfs_sb_put(&sb, t, tl);
			}
			lfs_sb_puts(&sb, "\r\n");
			p = le + 1;
		}
		assert_true(lfs_sb_ok(&sb));
		assert_true(changed || sb.len != w->size);
		uint8_t *out = apply_ok(&it, "model.mdl", sb.data, sb.len);
		assert_memory_equal(out, it.data, it.n);
		free(out);
		lfs_sb_free(&sb);
		unload(&it);
		files++;
	}
	printf("re-typed model.mdl: %zu files byte-identical\n", files);
}

/* ---- (c) value edits ------------------------------------------------------------ */

/* Independent plane check (double, [N §3.4]). */
static void check_plane(const nwn_mesh *me, const uint8_t *img, size_t md0, uint32_t f)
{
	const nwn_face *fc = &me->faces[f];
	const float *p0 = me->verts + 3 * fc->v[0], *p1 = me->verts + 3 * fc->v[1],
		    *p2 = me->verts + 3 * fc->v[2];
	double a[3] = { p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2] };
	double b[3] = { p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2] };
	double c[3] = { a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0] };
	double l = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
	if (l < 1e-9)
		return;
	const uint8_t *fo = img + md0 + me->faces_arr.off + 32 * f;
	double d = 0;
	for (int k = 0; k < 3; k++) {
		assert_true(fabs(c[k] / l - rdf(fo + 4 * k)) < 1e-5);
		d -= c[k] / l * p0[k];
	}
	assert_true(fabs(d - rdf(fo + 12)) < 1e-4 * (1 + fabs(d)));
}

/* The allowed set and checks for an edit of vertex @p v of node @p ni. */
static void vertex_expect(const nwn_model *m, uint32_t ni, uint32_t v, ranges *r)
{
	const nwn_node *n = &m->geom.nodes[ni];
	const nwn_mesh *me = n->mesh;
	size_t md0 = 12, raw0 = 12 + (size_t)m->model_size;
	r->n = 0;
	allow(r, raw0 + me->verts_raw + 12 * (size_t)v, 12);
	for (uint32_t f = 0; f < me->n_faces; f++)
		if (me->faces[f].v[0] == v || me->faces[f].v[1] == v || me->faces[f].v[2] == v)
			allow(r, md0 + me->faces_arr.off + 32 * f, 16); /* plane normal + distance */
	allow(r, md0 + n->off + 0x84, 0x28); /* bbox, radius, average */
	allow(r, md0 + n->off + 0x268, 4);   /* area */
	if (me->aabb)
		for (uint32_t e = 0; e < me->aabb->n_entries; e++)
			allow(r, md0 + me->aabb->entries[e].off, 24);
}

/* Result of a vertex edit decodes to the new vertex, planes and bbox. */
static void vertex_verify(const uint8_t *out, size_t n, uint32_t ni, uint32_t v, const float nv[3])
{
	nwn_model *m2;
	lfs_error err;
	assert_int_equal(nwn_mdl_decode(out, n, &m2, &err), LFS_OK);
	const nwn_mesh *me = m2->geom.nodes[ni].mesh;
	assert_memory_equal(me->verts + 3 * v, nv, 12);
	for (uint32_t f = 0; f < me->n_faces; f++)
		if (me->faces[f].v[0] == v || me->faces[f].v[1] == v || me->faces[f].v[2] == v)
			check_plane(me, out, 12, f);
	for (int k = 0; k < 3; k++) {
		float lo = 0, hi = 0;
		for (uint32_t i = 0; i < me->n_verts; i++) {
			lo = fminf(lo, me->verts[3 * i + k]);
			hi = fmaxf(hi, me->verts[3 * i + k]);
		}
		assert_true(lo == me->bmin[k] && hi == me->bmax[k]);
	}
	nwn_model_free(m2);
}

static int32_t first_mesh(const nwn_model *m)
{
	for (uint32_t i = 0; i < m->geom.n_nodes; i++) {
		const nwn_mesh *me = m->geom.nodes[i].mesh;
		if (me && me->verts && me->n_faces && me->n_verts)
			return (int32_t)i;
	}
	return -1;
}

/* Vertex edit through model.mdl and through meshes/<node>.obj: the same
 * bytes, inside the expected set. Returns true when the model has a mesh. */
static bool edit_vertex(const item *it, size_t *changed_bytes)
{
	int32_t ni = first_mesh(it->m);
	if (ni < 0)
		return false;
	const nwn_node *n = &it->m->geom.nodes[ni];
	uint32_t v = n->mesh->faces[0].v[1];
	float nv[3];
	memcpy(nv, n->mesh->verts + 3 * v, 12);
	nv[0] += 0.25f;
	nv[2] -= 0.125f;
	ranges *r = malloc(sizeof(*r));
	assert_non_null(r);
	vertex_expect(it->m, (uint32_t)ni, v, r);

	/* model.mdl: the text of a model whose vertex was moved */
	nwn_model *m2;
	lfs_error err;
	assert_int_equal(nwn_mdl_decode(it->data, it->n, &m2, &err), LFS_OK);
	memcpy(m2->geom.nodes[ni].mesh->verts + 3 * v, nv, 12);
	size_t tn;
	char *text = gen_mdl(m2, &tn);
	nwn_model_free(m2);
	uint8_t *o1 = apply_ok(it, "model.mdl", text, tn);
	*changed_bytes += check_changes(it->data, o1, it->n, r, "vertex via model.mdl");
	vertex_verify(o1, it->n, (uint32_t)ni, v, nv);
	free(text);

	/* meshes/<node>.obj: replace the v line */
	char path[600];
	snprintf(path, sizeof(path), "meshes/%s.obj", n->name);
	const lfs_view *w = lfs_viewset_find(&it->vs, path);
	if (w) {
		unsigned line = find_line(w->data, w->size, 1, "v ");
		assert_true(line > 0);
		char repl[200];
		snprintf(repl, sizeof(repl), "v %.9g %.9g %.9g", (double)nv[0], (double)nv[1], (double)nv[2]);
		size_t en;
		char *ed = replace_line(w->data, w->size, line + v, repl, &en);
		uint8_t *o2 = apply_ok(it, path, ed, en);
		assert_memory_equal(o1, o2, it->n); /* same edit, same bytes */
		free(o2);
		free(ed);
	}
	free(o1);
	free(r);
	return true;
}

/* A controller value of a model-geometry node through model.mdl. */
static bool edit_geom_controller(const item *it, size_t *changed_bytes)
{
	const nwn_model *m = it->m;
	for (uint32_t i = 0; i < m->geom.n_nodes; i++) {
		const nwn_node *n = &m->geom.nodes[i];
		for (uint32_t k = 0; k < n->n_ctrls; k++) {
			const nwn_controller *c = &n->ctrls[k];
			if (!c->name || c->type == NWN_CTRL_ORIENTATION || c->ncols < 1 || !c->rows)
				continue;
			nwn_model *m2;
			lfs_error err;
			assert_int_equal(nwn_mdl_decode(it->data, it->n, &m2, &err), LFS_OK);
			float *val = &m2->geom.nodes[i].ctrl_data[c->data_offset];
			*val = *val * 2.0f + 1.0f;
			float want = *val;
			size_t tn;
			char *text = gen_mdl(m2, &tn);
			nwn_model_free(m2);
			ranges r = { .n = 0 };
			size_t at = 12 + n->ctrl_data_arr.off + 4 * (size_t)c->data_offset;
			allow(&r, at, 4);
			uint8_t *o = apply_ok(it, "model.mdl", text, tn);
			*changed_bytes += check_changes(it->data, o, it->n, &r, "controller via model.mdl");
			assert_true(rdf(o + at) == want);
			free(o);
			free(text);
			return true;
		}
	}
	return false;
}

/* Orientation through model.mdl: axis 0 0 1, angle 0.5 -> q = (0, 0, sin .25, cos .25). */
static bool edit_orientation(const item *it, size_t *changed_bytes)
{
	const nwn_model *m = it->m;
	const lfs_view *w = lfs_viewset_find(&it->vs, "model.mdl");
	for (uint32_t i = 0; i < m->geom.n_nodes; i++) {
		const nwn_node *n = &m->geom.nodes[i];
		for (uint32_t k = 0; k < n->n_ctrls; k++) {
			const nwn_controller *c = &n->ctrls[k];
			if (c->type != NWN_CTRL_ORIENTATION || c->ncols != 4 || c->rows != 1)
				continue;
			uint32_t t0;
			memcpy(&t0, &n->ctrl_data[c->key_offset], 4);
			if (t0 != 0 || c->bezier)
				continue;
			char hdr[128];
			snprintf(hdr, sizeof(hdr), "node %s %s", nwn_node_type_name(n->flags), n->name);
			unsigned nl = find_line(w->data, w->size, 1, hdr);
			unsigned ol = nl ? find_line(w->data, w->size, nl, "  orientation ") : 0;
			if (!ol)
				continue;
			size_t en;
			char *ed = replace_line(w->data, w->size, ol, "  orientation 0 0 1 0.5", &en);
			ranges r = { .n = 0 };
			size_t at = 12 + n->ctrl_data_arr.off + 4 * (size_t)c->data_offset;
			allow(&r, at, 16);
			uint8_t *o = apply_ok(it, "model.mdl", ed, en);
			*changed_bytes += check_changes(it->data, o, it->n, &r, "orientation");
			assert_true(rdf(o + at) == 0.0f && rdf(o + at + 4) == 0.0f);
			assert_true(rdf(o + at + 8) == (float)sin(0.25));
			assert_true(rdf(o + at + 12) == (float)cos(0.25));
			free(o);
			free(ed);
			return true;
		}
	}
	return false;
}

/* Material colour: diffuse of the first mesh. */
static bool edit_diffuse(const item *it, size_t *changed_bytes)
{
	int32_t ni = first_mesh(it->m);
	if (ni < 0)
		return false;
	const nwn_node *n = &it->m->geom.nodes[ni];
	const lfs_view *w = lfs_viewset_find(&it->vs, "model.mdl");
	char hdr[128];
	snprintf(hdr, sizeof(hdr), "node %s %s", nwn_node_type_name(n->flags), n->name);
	unsigned nl = find_line(w->data, w->size, 1, hdr);
	unsigned dl = nl ? find_line(w->data, w->size, nl, "  diffuse ") : 0;
	assert_true(dl > 0);
	size_t en;
	char *ed = replace_line(w->data, w->size, dl, "  diffuse 0.5 0.25 0.125", &en);
	ranges r = { .n = 0 };
	size_t at = 12 + n->off + 0xAC;
	allow(&r, at, 12);
	uint8_t *o = apply_ok(it, "model.mdl", ed, en);
	*changed_bytes += check_changes(it->data, o, it->n, &r, "diffuse");
	assert_true(rdf(o + at) == 0.5f && rdf(o + at + 4) == 0.25f && rdf(o + at + 8) == 0.125f);
	free(o);
	free(ed);
	return true;
}

/* One key value through an animation CSV (ordinary names only). */
static bool edit_csv(const item *it, size_t *changed_bytes, bool orientation)
{
	const nwn_model *m = it->m;
	for (uint32_t a = 0; a < m->n_anims; a++) {
		const nwn_anim *an = &m->anims[a];
		for (uint32_t i = 0; i < an->geom.n_nodes; i++) {
			const nwn_node *n = &an->geom.nodes[i];
			for (uint32_t k = 0; k < n->n_ctrls; k++) {
				const nwn_controller *c = &n->ctrls[k];
				bool is_or = c->type == NWN_CTRL_ORIENTATION && c->ncols == 4 && !c->bezier;
				if (!c->name || c->ncols < 1 || !c->rows || is_or != orientation)
					continue;
				char path[600];
				snprintf(path, sizeof(path), "anims/%s/%s.%s.csv", an->geom.name, n->name,
					 c->name);
				const lfs_view *w = lfs_viewset_find(&it->vs, path);
				if (!w)
					continue;
				/* make sure this is the first controller of its type */
				bool first = true;
				for (uint32_t j = 0; j < k; j++)
					first &= n->ctrls[j].type != c->type;
				if (!first)
					continue;
				size_t at = 12 + n->ctrl_data_arr.off + 4 * (size_t)c->data_offset;
				char repl[256];
				float t = n->ctrl_data[c->key_offset];
				float want = n->ctrl_data[c->data_offset] + 0.5f;
				if (orientation)
					snprintf(repl, sizeof(repl), "%.9g,1,0,0,1\r", (double)t);
				else {
					int len = snprintf(repl, sizeof(repl), "%.9g,%.9g", (double)t, (double)want);
					for (unsigned q = 1; q < c->ncols; q++)
						len += snprintf(repl + len, sizeof(repl) - (size_t)len, ",%.9g",
								(double)n->ctrl_data[c->data_offset + q]);
					snprintf(repl + len, sizeof(repl) - (size_t)len, "\r");
				}
				size_t en;
				char *ed = replace_line(w->data, w->size, 2, repl, &en);
				ranges r = { .n = 0 };
				allow(&r, at, orientation ? 16 : 4);
				uint8_t *o = apply_ok(it, path, ed, en);
				*changed_bytes += check_changes(it->data, o, it->n, &r, path);
				if (orientation) {
					assert_true(rdf(o + at) == (float)sin(0.5));
					assert_true(rdf(o + at + 4) == 0.0f && rdf(o + at + 8) == 0.0f);
					assert_true(rdf(o + at + 12) == (float)cos(0.5));
				} else {
					assert_true(rdf(o + at) == want);
				}
				free(o);
				free(ed);
				return true;
			}
		}
	}
	return false;
}

static void test_value_edits(void **state)
{
	(void)state;
	size_t models = 0, vert = 0, ctrl = 0, orient = 0, diffuse = 0, csv = 0, csvo = 0, bytes = 0;
	for (size_t i = 0; i < g_count; i++) {
		item it;
		load(i, &it);
		bool any = false;
		if (edit_vertex(&it, &bytes))
			vert++, any = true;
		if (edit_geom_controller(&it, &bytes))
			ctrl++, any = true;
		if (edit_orientation(&it, &bytes))
			orient++, any = true;
		if (edit_diffuse(&it, &bytes))
			diffuse++, any = true;
		if (edit_csv(&it, &bytes, false))
			csv++, any = true;
		if (edit_csv(&it, &bytes, true))
			csvo++, any = true;
		models += any;
		unload(&it);
	}
	printf("value edits on %zu models: vertex (model.mdl + obj) %zu, controller %zu, "
	       "orientation %zu, diffuse %zu, csv key %zu, csv orientation %zu; %zu bytes changed\n",
	       models, vert, ctrl, orient, diffuse, csv, csvo, bytes);
	assert_true(models >= lfs_test_slice_min(20));
	assert_true(vert >= lfs_test_slice_min(10)); /* 14 corpus models have meshes with vertices */
	assert_true(csv > 0 && orient > 0 && diffuse > 0 && csvo > 0);
}

/* "Done when": one vertex edited in meshes/<node>.obj changes exactly that
 * vertex and its derived values (planes of its faces, bbox/average/radius,
 * area) — for every mesh of every corpus model, last vertex of the mesh. */
static void test_obj_vertex_every_mesh(void **state)
{
	(void)state;
	size_t meshes = 0;
	for (size_t i = 0; i < g_count; i++) {
		item it;
		load(i, &it);
		for (uint32_t ni = 0; ni < it.m->geom.n_nodes; ni++) {
			const nwn_node *n = &it.m->geom.nodes[ni];
			const nwn_mesh *me = n->mesh;
			if (!me || !me->verts || !me->n_verts || strchr(n->name, '%'))
				continue;
			char path[600];
			snprintf(path, sizeof(path), "meshes/%s.obj", n->name);
			const lfs_view *w = lfs_viewset_find(&it.vs, path);
			if (!w)
				continue;
			uint32_t v = me->n_verts - 1;
			float nv[3] = { me->verts[3 * v] - 0.0625f, me->verts[3 * v + 1] + 0.5f,
					me->verts[3 * v + 2] };
			unsigned line = find_line(w->data, w->size, 1, "v ");
			char repl[200];
			snprintf(repl, sizeof(repl), "v %.9g %.9g %.9g", (double)nv[0], (double)nv[1],
				 (double)nv[2]);
			size_t en;
			char *ed = replace_line(w->data, w->size, line + v, repl, &en);
			ranges *r = malloc(sizeof(*r));
			vertex_expect(it.m, ni, v, r);
			uint8_t *o = apply_ok(&it, path, ed, en);
			size_t ch = check_changes(it.data, o, it.n, r, path);
			assert_true(ch >= 1);
			vertex_verify(o, it.n, ni, v, nv);
			free(o);
			free(ed);
			free(r);
			meshes++;
		}
		unload(&it);
	}
	printf("obj vertex edits: %zu meshes, each exactly the vertex + derived values\n", meshes);
	assert_true(meshes >= lfs_test_slice_min(20));
}

/* The round-trip law of one save of view @p w (text @p t, @p tn bytes)
 * whose bytes are @p out (@p on) with the model the apply decoded from them,
 * @p res, handed over, and decoding @p out itself: the same verdict, the
 * same message, the same re-read text. Returns the verdict. */
static lfs_err law_both(const lfs_view *w, const char *t, size_t tn, const uint8_t *out,
			size_t on, const nwn_model *res)
{
	const lfs_format *f = &lfs_format_nwn_mdl;
	lfs_error e1, e2;
	memset(&e1, 0, sizeof(e1));
	memset(&e2, 0, sizeof(e2));
	char *r1 = NULL, *r2 = NULL;
	size_t n1 = 0, n2 = 0;
	lfs_err v1 = lfs_law_check_model(f, w, t, tn, out, on, res, &r1, &n1, &e1);
	lfs_err v2 = lfs_law_check_keep(f, w, t, tn, out, on, &r2, &n2, &e2);
	assert_int_equal(v1, v2);
	if (v1 != LFS_OK)
		assert_string_equal(e1.msg, e2.msg);
	assert_int_equal(n1, n2);
	assert_true((r1 == NULL) == (r2 == NULL));
	if (r1)
		assert_memory_equal(r1, r2, n1);
	free(r1);
	free(r2);
	return v1;
}

/*
 * The law given the model the apply decoded (nwn_apply_view_decoded(),
 * lfs_law_check_model()) reaches the verdict of the law decoding the bytes,
 * for a good save (a vertex moved through meshes/<node>.obj and through
 * model.mdl: accepted) and a bad one (the saved text states another value
 * than the bytes hold: refused at the same line and column), on every
 * corpus binary with a mesh. The handed model is the decode of the result.
 */
static void test_law_handed_model(void **state)
{
	(void)state;
	size_t good = 0, bad = 0;
	for (size_t i = 0; i < g_count; i++) {
		item it;
		load(i, &it);
		/* the first mesh with faces whose OBJ is named after its node */
		const nwn_node *n = NULL;
		const lfs_view *w = NULL;
		uint32_t ni = 0;
		char path[600];
		for (; ni < it.m->geom.n_nodes && !w; ni++) {
			n = &it.m->geom.nodes[ni];
			const nwn_mesh *me = n->mesh;
			if (!me || !me->verts || !me->n_verts || !me->faces || !me->n_faces ||
			    strchr(n->name, '%'))
				continue;
			snprintf(path, sizeof(path), "meshes/%s.obj", n->name);
			w = lfs_viewset_find(&it.vs, path);
		}
		if (!w) {
			unload(&it);
			continue;
		}
		ni--;
		uint32_t v = n->mesh->faces[0].v[1];
		float nv[3];
		memcpy(nv, n->mesh->verts + 3 * v, 12);
		nv[1] += 0.375f;
		unsigned line = find_line(w->data, w->size, 1, "v ");
		assert_true(line > 0);
		char repl[200];
		snprintf(repl, sizeof(repl), "v %.9g %.9g %.9g", (double)nv[0], (double)nv[1],
			 (double)nv[2]);
		size_t en, bn;
		char *ed = replace_line(w->data, w->size, line + v, repl, &en);
		snprintf(repl, sizeof(repl), "v %.9g %.9g %.9g", (double)nv[0],
			 (double)(nv[1] + 0.5f), (double)nv[2]);
		char *bd = replace_line(w->data, w->size, line + v, repl, &bn);

		uint8_t *out = NULL;
		size_t on = 0;
		nwn_model *res = NULL;
		lfs_error err;
		assert_int_equal(nwn_apply_view_decoded(it.data, it.n, w, ed, en, NULL, &out, &on,
							&res, &err),
				 LFS_OK);
		assert_non_null(res); /* a byte changed: the check's model comes back */
		nwn_model *chk = NULL;
		assert_int_equal(nwn_mdl_decode(out, on, &chk, &err), LFS_OK);
		assert_int_equal(res->geom.n_nodes, chk->geom.n_nodes);
		assert_memory_equal(res->geom.nodes[ni].mesh->verts, chk->geom.nodes[ni].mesh->verts,
				    12 * (size_t)chk->geom.nodes[ni].mesh->n_verts);
		nwn_model_free(chk);
		assert_int_equal(law_both(w, ed, en, out, on, res), LFS_OK);
		assert_int_equal(law_both(w, bd, bn, out, on, res), LFS_ERR_PARSE);

		/* model.mdl: the same bytes read as the whole-model text */
		const lfs_view *mv = lfs_viewset_find(&it.vs, "model.mdl");
		assert_non_null(mv);
		size_t tn;
		char *good_mdl = gen_mdl(res, &tn);
		assert_int_equal(law_both(mv, good_mdl, tn, out, on, res), LFS_OK);
		free(good_mdl);
		char *orig_mdl = gen_mdl(it.m, &tn); /* the old vertex: not what the bytes hold */
		assert_int_equal(law_both(mv, orig_mdl, tn, out, on, res), LFS_ERR_PARSE);
		free(orig_mdl);

		nwn_model_free(res);
		free(out);
		free(ed);
		free(bd);
		unload(&it);
		good += 2;
		bad += 2;
	}
	printf("law with a handed model: %zu good and %zu bad saves, the same verdicts\n", good, bad);
	assert_true(good >= lfs_test_slice_min(20)); /* 14 corpus binaries have such a mesh */
}

/* ---- structural edits and errors ----------------------------------------------- */

/* Views of @p out: every view equals the original's except @p path, which
 * equals @p want. */
static void views_match(const item *it, const uint8_t *out, size_t on, const char *path,
			const char *want, size_t wn)
{
	lfs_viewset vs;
	lfs_error err;
	assert_int_equal(lfs_views_build("x.mdl", out, on, NULL, &vs, &err), LFS_OK);
	assert_int_equal(vs.n_views, it->vs.n_views);
	for (size_t v = 0; v < vs.n_views; v++) {
		const lfs_view *x = &vs.views[v], *y = &it->vs.views[v];
		assert_string_equal(x->path, y->path);
		if (!strcmp(x->path, path)) {
			assert_int_equal(x->size, wn);
			assert_memory_equal(x->data, want, wn);
		} else if (strcmp(x->path, "model.mdl")) {
			assert_int_equal(x->size, y->size);
			assert_memory_equal(x->data, y->data, x->size);
		}
	}
	lfs_viewset_free(&vs);
}

/* (d) key count changes re-lay the file with nwn_mdl_encode(); the result
 * decodes back to the edited text, and every other view is unchanged. */
static void test_structural_keys(void **state)
{
	(void)state;
	size_t removed = 0, added = 0, mdl = 0;
	for (size_t i = 0; i < g_count; i++) {
		item it;
		load(i, &it);
		for (size_t v = 0; v < it.vs.n_views; v++) {
			const lfs_view *w = &it.vs.views[v];
			if (strncmp(w->path, "anims/", 6))
				continue;
			unsigned lines = 0;
			for (size_t k = 0; k < w->size; k++)
				lines += w->data[k] == '\n';
			if (lines < 3)
				continue;
			/* remove the last key row (lines: header + rows, CRLF ends) */
			const char *last = w->data;
			for (unsigned l = 1; l < lines; l++)
				last = (const char *)memchr(last, '\n', (size_t)(w->data + w->size - last)) + 1;
			size_t keep = (size_t)(last - w->data);
			size_t on;
			uint8_t *out = apply_any(&it, w->path, w->data, keep, &on);
			views_match(&it, out, on, w->path, w->data, keep);
			free(out);
			removed++;
			/* add a key row: the last row again, 0.5 s later (time in the
			 * writer's own spelling, so the text must come back verbatim) */
			float t = strtof(last, NULL) + 0.5f;
			const char *rest = memchr(last, ',', (size_t)(w->data + w->size - last));
			if (!rest)
				rest = last + strcspn(last, "\r");
			lfs_sb sb = { 0 };
			lfs_sb_put(&sb, w->data, w->size);
			lfs_sb_float(&sb, t);
			lfs_sb_put(&sb, rest, (size_t)(w->data + w->size - rest));
			assert_true(lfs_sb_ok(&sb));
			out = apply_any(&it, w->path, sb.data, sb.len, &on);
			views_match(&it, out, on, w->path, sb.data, sb.len);
			free(out);
			lfs_sb_free(&sb);
			added++;
			break;
		}
		/* model.mdl: a plain geometry position becomes a 2-key list */
		const lfs_view *w = lfs_viewset_find(&it.vs, "model.mdl");
		unsigned anim = find_line(w->data, w->size, 1, "newanim ");
		unsigned pl = find_line(w->data, w->size, 1, "  position ");
		if (pl && (!anim || pl < anim)) {
			size_t s = 0;
			for (unsigned l = 1; l < pl; s++)
				if (w->data[s] == '\n')
					l++;
			const char *xyz = w->data + s + strlen("  position ");
			size_t xl = strcspn(xyz, "\n");
			char repl[512];
			snprintf(repl, sizeof(repl), "  positionkey 2\n    0 %.*s\n    1 %.*s", (int)xl, xyz,
				 (int)xl, xyz);
			size_t en, on;
			char *ed = replace_line(w->data, w->size, pl, repl, &en);
			uint8_t *out = apply_any(&it, "model.mdl", ed, en, &on);
			views_match(&it, out, on, "model.mdl", ed, en);
			free(out);
			free(ed);
			mdl++;
		}
		unload(&it);
	}
	printf("key rows removed in %zu CSVs, added in %zu; model.mdl key lists %zu; each decodes "
	       "back to the edited text\n", removed, added, mdl);
	assert_true(removed >= lfs_test_slice_min(101) && added >= lfs_test_slice_min(101) &&
		    mdl >= lfs_test_slice_min(101));
}

/* ---- (d) structural edits ------------------------------------------------------ */

/* Line range [s, e) in bytes of lines @p l0..@p l1 (1-based, inclusive). */
static void line_span(const char *t, size_t n, unsigned l0, unsigned l1, size_t *s, size_t *e)
{
	unsigned l = 1;
	size_t i = 0;
	for (; i < n && l < l0; i++)
		if (t[i] == '\n')
			l++;
	*s = i;
	for (; i < n && l <= l1; i++)
		if (t[i] == '\n')
			l++;
	*e = i;
}

/* @p t with bytes [s, e) replaced by @p ins (malloc'd, NUL-terminated). */
static char *splice(const char *t, size_t n, size_t s, size_t e, const char *ins, size_t *on)
{
	size_t il = strlen(ins);
	char *o = malloc(n - (e - s) + il + 1);
	assert_non_null(o);
	memcpy(o, t, s);
	memcpy(o + s, ins, il);
	memcpy(o + s + il, t + e, n - e);
	*on = n - (e - s) + il;
	o[*on] = 0;
	return o;
}

static bool tok_eq(const char *a, const char *b)
{
	if (!strcmp(a, b))
		return true;
	float x, y;
	return mdl_tok_float(a, &x) && mdl_tok_float(b, &y) && !memcmp(&x, &y, 4);
}

static bool rows_eq(const mdl_row *x, const mdl_row *y, uint32_t from)
{
	if (x->ntok != y->ntok)
		return false;
	for (uint32_t i = from; i < x->ntok; i++)
		if (!tok_eq(x->tok[i].s, y->tok[i].s))
			return false;
	return true;
}

static const char *skey(const mdl_stmt *s)
{
	return s->kind == MDL_ST_KEYS ? s->name : s->head.tok[0].s;
}

/* Axis-angle rows (time + 4 values, or 4 values on a plain line) that show
 * the same rotation within 2e-5 (new orientations are computed from the
 * text's axis-angle; printing them back may change the last digits). */
static bool orient_row_close(const mdl_row *x, const mdl_row *y, uint32_t from)
{
	if (x->ntok != y->ntok || x->ntok != from + 4 + (from == 0))
		return false;
	uint32_t o = from == 0 ? 1 : from;
	if (from == 0 && !tok_eq(x->tok[0].s, y->tok[0].s))
		return false;
	double q[2][4];
	const mdl_row *r[2] = { x, y };
	for (int k = 0; k < 2; k++) {
		float a[4];
		for (int j = 0; j < 4; j++)
			if (!mdl_tok_float(r[k]->tok[o + j].s, &a[j]))
				return false;
		double len = sqrt((double)a[0] * a[0] + (double)a[1] * a[1] + (double)a[2] * a[2]);
		double sn = len > 0 ? sin(a[3] / 2.0) / len : 0;
		q[k][0] = a[0] * sn;
		q[k][1] = a[1] * sn;
		q[k][2] = a[2] * sn;
		q[k][3] = len > 0 ? cos(a[3] / 2.0) : 1;
	}
	double d1 = 0, d2 = 0;
	for (int j = 0; j < 4; j++) {
		d1 = fmax(d1, fabs(q[0][j] - q[1][j]));
		d2 = fmax(d2, fabs(q[0][j] + q[1][j]));
	}
	return fmin(d1, d2) <= 2e-5;
}

static bool stmts_eq(const mdl_stmt *x, const mdl_stmt *y)
{
	bool orient = !strcasecmp(skey(x), "orientation");
	if (x->kind != y->kind || x->n_rows != y->n_rows || x->bezier != y->bezier)
		return false;
	if (x->kind == MDL_ST_PLAIN && !rows_eq(&x->head, &y->head, 1) &&
	    !(orient && orient_row_close(&x->head, &y->head, 1)))
		return false;
	for (uint32_t i = 0; i < x->n_rows; i++)
		if (!rows_eq(&x->rows[i], &y->rows[i], 0) && !(orient && orient_row_close(&x->rows[i], &y->rows[i], 0)))
			return false;
	return true;
}

static bool is_geom_list(const char *k)
{
	static const char *const l[] = { "verts", "tverts", "tverts1", "tverts2", "tverts3", "normals",
					 "colors", "faces", "weights", "constraints", "aabb" };
	for (size_t i = 0; i < sizeof(l) / sizeof(l[0]); i++)
		if (!strcasecmp(k, l[i]))
			return true;
	return false;
}

static const mdl_stmt *nth_stmt(const mdl_node *n, const char *k, uint32_t occ)
{
	for (uint32_t i = 0; i < n->n_stmts; i++)
		if (!strcasecmp(skey(&n->stmts[i]), k) && occ-- == 0)
			return &n->stmts[i];
	return NULL;
}

static uint32_t occ_of(const mdl_node *n, uint32_t i)
{
	uint32_t o = 0;
	for (uint32_t j = 0; j < i; j++)
		o += !strcasecmp(skey(&n->stmts[j]), skey(&n->stmts[i]));
	return o;
}

static const mdl_row *list_row(const mdl_node *n, const char *k, int64_t i)
{
	const mdl_stmt *s = nth_stmt(n, k, 0);
	return (s && i >= 0 && (uint64_t)i < s->n_rows) ? &s->rows[i] : NULL;
}

/* Mesh lists compared per face corner (documented normalisation: vertex
 * order, sharing and unreferenced vertices are the compiler's). */
static bool corners_eq(const mdl_node *x, const mdl_node *y)
{
	const mdl_stmt *fx = nth_stmt(x, "faces", 0), *fy = nth_stmt(y, "faces", 0);
	if (!fx || !fy)
		return !fx == !fy || (fx ? fx->n_rows : fy->n_rows) == 0;
	if (fx->n_rows != fy->n_rows)
		return false;
	static const char *const per_vertex[] = { "verts", "normals", "colors", "weights", "constraints" };
	for (uint32_t f = 0; f < fx->n_rows; f++) {
		const mdl_row *a = &fx->rows[f], *b = &fy->rows[f];
		if (a->ntok < 8 || b->ntok < 8 || !tok_eq(a->tok[7].s, b->tok[7].s))
			return false;
		for (int c = 0; c < 3; c++) {
			int64_t va, vb, ta, tb;
			if (!mdl_tok_int(a->tok[c].s, &va) || !mdl_tok_int(b->tok[c].s, &vb) ||
			    !mdl_tok_int(a->tok[4 + c].s, &ta) || !mdl_tok_int(b->tok[4 + c].s, &tb))
				return false;
			for (size_t k = 0; k < sizeof(per_vertex) / sizeof(per_vertex[0]); k++) {
				if (!nth_stmt(x, per_vertex[k], 0) || !nth_stmt(y, per_vertex[k], 0))
					continue; /* shown on one side only: compiler default */
				const mdl_row *ra = list_row(x, per_vertex[k], va), *rb = list_row(y, per_vertex[k], vb);
				if (!ra || !rb || !rows_eq(ra, rb, 0))
					return false;
			}
			if (nth_stmt(x, "tverts", 0) && nth_stmt(y, "tverts", 0)) {
				const mdl_row *ra = list_row(x, "tverts", ta), *rb = list_row(y, "tverts", tb);
				if (!ra || !rb || ra->ntok < 2 || rb->ntok < 2 || !tok_eq(ra->tok[0].s, rb->tok[0].s) ||
				    !tok_eq(ra->tok[1].s, rb->tok[1].s))
					return false;
			}
		}
	}
	return true;
}

static bool name_in(const char *name, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] && !strcasecmp(set[i], name))
			return true;
	return false;
}

/* Nodes of one geometry: same names, types, parents, part numbers (except
 * @p fresh nodes), statements (fresh nodes may show more: compiler defaults). */
static bool nodes_eq(const mdl_node *x, uint32_t nx, const mdl_node *y, uint32_t ny, const char *const *fresh,
		     size_t nfresh, char *why, size_t wl)
{
	if (nx != ny) {
		snprintf(why, wl, "%u nodes, expected %u", ny, nx);
		return false;
	}
	for (uint32_t i = 0; i < nx; i++) {
		const mdl_node *a = &x[i], *b = NULL;
		for (uint32_t j = 0; j < ny && !b; j++)
			if (!strcasecmp(a->name, y[j].name))
				b = &y[j];
		bool isnew = name_in(a->name, fresh, nfresh);
		if (!b || strcasecmp(a->type, b->type) || strcasecmp(a->parent ? a->parent : "NULL", b->parent ? b->parent : "NULL") ||
		    (!isnew && a->part_number != b->part_number)) {
			snprintf(why, wl, "node '%s': missing or other type/parent/part number", a->name);
			return false;
		}
		for (uint32_t k = 0; k < a->n_stmts; k++) {
			const mdl_stmt *s = &a->stmts[k];
			if (is_geom_list(skey(s)))
				continue;
			const mdl_stmt *t = nth_stmt(b, skey(s), occ_of(a, k));
			if (!t || !stmts_eq(s, t)) {
				snprintf(why, wl, "node '%s': statement '%s' (line %u) differs", a->name, skey(s), s->head.line);
				return false;
			}
		}
		if (!isnew)
			for (uint32_t k = 0; k < b->n_stmts; k++)
				if (!is_geom_list(skey(&b->stmts[k])) && !nth_stmt(a, skey(&b->stmts[k]), occ_of(b, k))) {
					snprintf(why, wl, "node '%s': extra statement '%s'", a->name, skey(&b->stmts[k]));
					return false;
				}
		if (!corners_eq(a, b)) {
			snprintf(why, wl, "node '%s': mesh corners differ", a->name);
			return false;
		}
	}
	return true;
}

static bool block_stmts_eq(const mdl_stmt *x, uint32_t nx, const mdl_stmt *y, uint32_t ny)
{
	if (nx != ny)
		return false;
	for (uint32_t i = 0; i < nx; i++) {
		uint32_t occ = 0, seen = 0;
		for (uint32_t j = 0; j < i; j++)
			occ += !strcasecmp(skey(&x[j]), skey(&x[i]));
		const mdl_stmt *t = NULL;
		for (uint32_t j = 0; j < ny && !t; j++)
			if (!strcasecmp(skey(&y[j]), skey(&x[i])) && seen++ == occ)
				t = &y[j];
		if (!t || !stmts_eq(&x[i], t))
			return false;
	}
	return true;
}

/* The edited text @p want and the text regenerated from the result @p got
 * hold the same model (modulo the normalisations documented in
 * docs/nwn-compile.md: node order, mesh vertex order, compiler defaults of
 * new nodes, orientations computed from axis-angle). */
static void assert_same_model(const char *what, const char *want, size_t wn, const char *got, size_t gn,
			      const char *const *fresh, size_t nfresh)
{
	mdl_doc *x = NULL, *y = NULL;
	lfs_error err;
	assert_int_equal(mdl_parse("want", (const uint8_t *)want, wn, &x, &err), LFS_OK);
	assert_int_equal(mdl_parse("got", (const uint8_t *)got, gn, &y, &err), LFS_OK);
	char why[256] = "";
	bool ok = block_stmts_eq(x->stmts, x->n_stmts, y->stmts, y->n_stmts);
	if (!ok)
		snprintf(why, sizeof(why), "model statements differ");
	ok = ok && nodes_eq(x->nodes, x->n_nodes, y->nodes, y->n_nodes, fresh, nfresh, why, sizeof(why));
	if (ok && x->n_anims != y->n_anims) {
		snprintf(why, sizeof(why), "%u animations, expected %u", y->n_anims, x->n_anims);
		ok = false;
	}
	for (uint32_t a = 0; ok && a < x->n_anims; a++) {
		const mdl_anim *p = &x->anims[a], *q = NULL;
		for (uint32_t b = 0; b < y->n_anims && !q; b++)
			if (!strcasecmp(p->name, y->anims[b].name))
				q = &y->anims[b];
		ok = q && block_stmts_eq(p->stmts, p->n_stmts, q->stmts, q->n_stmts);
		if (!ok)
			snprintf(why, sizeof(why), "animation '%s' differs", p->name);
		ok = ok && nodes_eq(p->nodes, p->n_nodes, q->nodes, q->n_nodes, fresh, nfresh, why, sizeof(why));
	}
	if (!ok)
		fprintf(stderr, "%s: %s\n", what, why);
	assert_true(ok);
	mdl_doc_free(x);
	mdl_doc_free(y);
}

/* ---- untouched nodes keep their bytes ---- */

static bool fsame(const float *a, const float *b, size_t n)
{
	return (!a && !b) || (a && b && !memcmp(a, b, n * sizeof(float)));
}

static const char *node_name_at(const nwn_geometry *g, int32_t i)
{
	return (i >= 0 && (uint32_t)i < g->n_nodes) ? g->nodes[i].name : "";
}

static bool ctrls_same(const nwn_node *a, const nwn_node *b)
{
	if (a->n_ctrls != b->n_ctrls)
		return false;
	for (uint32_t k = 0; k < a->n_ctrls; k++) {
		const nwn_controller *x = &a->ctrls[k], *y = &b->ctrls[k];
		if (x->type != y->type || x->rows != y->rows || x->columns != y->columns || x->pad != y->pad)
			return false;
		if (!fsame(a->ctrl_data + x->key_offset, b->ctrl_data + y->key_offset, x->rows) ||
		    !fsame(a->ctrl_data + x->data_offset, b->ctrl_data + y->data_offset, (size_t)x->rows * x->ncols))
			return false;
	}
	return true;
}

static bool mesh_same(const nwn_node *na, const nwn_geometry *ga, const nwn_node *nb, const nwn_geometry *gb,
		      bool pose_kept)
{
	const nwn_mesh *a = na->mesh, *b = nb->mesh;
	if (!a || !b)
		return !a && !b;
	size_t nv = a->n_verts;
	if (memcmp(a->fn, b->fn, sizeof(a->fn)) || a->n_verts != b->n_verts || a->n_faces != b->n_faces ||
	    !fsame(a->bmin, b->bmin, 3) || !fsame(a->bmax, b->bmax, 3) || !fsame(&a->radius, &b->radius, 1) ||
	    !fsame(a->average, b->average, 3) || !fsame(a->diffuse, b->diffuse, 3) ||
	    !fsame(a->ambient, b->ambient, 3) || !fsame(a->specular, b->specular, 3) ||
	    !fsame(&a->shininess, &b->shininess, 1) || !fsame(&a->area, &b->area, 1) ||
	    memcmp(a->textures, b->textures, sizeof(a->textures)) || a->shadow != b->shadow ||
	    a->render != b->render || a->transparency_hint != b->transparency_hint || a->n_textures != b->n_textures)
		return false;
	if ((a->faces == NULL) != (b->faces == NULL) ||
	    (a->faces && memcmp(a->faces, b->faces, a->n_faces * sizeof(nwn_face))))
		return false;
	if (!fsame(a->verts, b->verts, nv * 3) || !fsame(a->normals, b->normals, nv * 3))
		return false;
	for (int t = 0; t < 4; t++)
		if (!fsame(a->tverts[t], b->tverts[t], nv * 2))
			return false;
	if ((a->colors == NULL) != (b->colors == NULL) || (a->colors && memcmp(a->colors, b->colors, nv * 4)))
		return false;
	if (a->skin) {
		const nwn_skin *x = a->skin, *y = b->skin;
		if (!y || !fsame(x->weights, y->weights, nv * 4) ||
		    memcmp(x->bonerefs, y->bonerefs, nv * 4 * sizeof(int16_t)))
			return false;
		for (int k = 0; k < 17; k++)
			if (strcasecmp(node_name_at(ga, x->bone_node_numbers[k]), node_name_at(gb, y->bone_node_numbers[k])))
				return false;
		for (uint32_t i = 0; pose_kept && i < ga->n_nodes; i++) {
			int32_t j = nwn_find_node(gb, ga->nodes[i].name);
			if (j < 0 || i >= x->qbone_arr.count || (uint32_t)j >= y->qbone_arr.count)
				continue;
			if (!fsame(x->qbone_ref_inv + 4 * i, y->qbone_ref_inv + 4 * j, 4) ||
			    !fsame(x->tbone_ref_inv + 3 * i, y->tbone_ref_inv + 3 * j, 3) ||
			    x->node_to_bone[i] != y->node_to_bone[j])
				return false;
		}
	}
	if (a->dangly && (!b->dangly || !fsame(a->dangly->constraints, b->dangly->constraints, a->dangly->constraints_arr.count) ||
			  a->dangly->constraints_arr.count != b->dangly->constraints_arr.count))
		return false;
	if (a->aabb) {
		if (!b->aabb || a->aabb->n_entries != b->aabb->n_entries)
			return false;
		for (uint32_t i = 0; i < a->aabb->n_entries; i++) {
			const nwn_aabb_entry *x = &a->aabb->entries[i], *y = &b->aabb->entries[i];
			if (!fsame(x->bmin, y->bmin, 3) || !fsame(x->bmax, y->bmax, 3) || x->leaf_face != y->leaf_face ||
			    x->plane != y->plane)
				return false;
		}
	}
	return true;
}

static bool part_same(const nwn_node *a, const nwn_node *b)
{
	if (a->light) {
		const nwn_light *x = a->light, *y = b->light;
		if (!y || !fsame(&x->flare_radius, &y->flare_radius, 1) || x->priority != y->priority ||
		    x->ambient_only != y->ambient_only || x->dynamic_type != y->dynamic_type ||
		    x->shadow != y->shadow || x->generate_flare != y->generate_flare ||
		    x->fading_light != y->fading_light || x->sizes_arr.count != y->sizes_arr.count ||
		    x->texnames_arr.count != y->texnames_arr.count ||
		    !fsame(x->flare_sizes, y->flare_sizes, x->sizes_arr.count))
			return false;
	}
	if (a->emitter && (!b->emitter || memcmp(a->emitter, b->emitter, sizeof(nwn_emitter))))
		return false;
	if (a->ref && (!b->ref || memcmp(a->ref, b->ref, sizeof(nwn_reference))))
		return false;
	return true;
}

/* Every node of @p ga not named in @p touched keeps its decoded fields and
 * raw arrays in @p gb (children compared by name unless one is touched). */
static size_t untouched_same(const char *what, const nwn_geometry *ga, const nwn_geometry *gb,
			     const char *const *touched, size_t nt, bool pose_kept)
{
	size_t checked = 0;
	for (uint32_t i = 0; i < ga->n_nodes; i++) {
		const nwn_node *a = &ga->nodes[i];
		if (name_in(a->name, touched, nt))
			continue;
		/* the k-th node of this name (names may repeat) */
		uint32_t occ = 0;
		for (uint32_t q = 0; q < i; q++)
			occ += !strcasecmp(ga->nodes[q].name, a->name);
		int32_t j = -1;
		for (uint32_t q = 0; q < gb->n_nodes && j < 0; q++)
			if (!strcasecmp(gb->nodes[q].name, a->name) && occ-- == 0)
				j = (int32_t)q;
		if (j < 0)
			fprintf(stderr, "%s: node '%s' lost\n", what, a->name);
		assert_true(j >= 0);
		const nwn_node *b = &gb->nodes[j];
		bool ok = a->flags == b->flags && !memcmp(a->fn, b->fn, sizeof(a->fn)) &&
			  a->inherit_color == b->inherit_color && a->part_number == b->part_number &&
			  !strcmp(a->name, b->name) && ctrls_same(a, b) && mesh_same(a, ga, b, gb, pose_kept) &&
			  part_same(a, b);
		bool kids_touched = false;
		for (uint32_t k = 0; k < a->n_children; k++)
			kids_touched |= name_in(ga->nodes[a->children[k]].name, touched, nt);
		for (uint32_t k = 0; k < b->n_children; k++)
			kids_touched |= name_in(gb->nodes[b->children[k]].name, touched, nt);
		if (ok && !kids_touched) {
			ok = a->n_children == b->n_children;
			for (uint32_t k = 0; ok && k < a->n_children; k++)
				ok = !strcasecmp(ga->nodes[a->children[k]].name, gb->nodes[b->children[k]].name);
		}
		if (!ok)
			fprintf(stderr, "%s: untouched node '%s' changed (flags %d fn %d part %d ctrls %d mesh %d part %d)\n",
				what, a->name, a->flags == b->flags, !memcmp(a->fn, b->fn, sizeof(a->fn)),
				a->part_number == b->part_number, ctrls_same(a, b), mesh_same(a, ga, b, gb, pose_kept),
				part_same(a, b));
		assert_true(ok);
		checked++;
	}
	return checked;
}

typedef struct sctx {
	const item *it;
	const char *base;
	size_t untouched;
	size_t ctrl_checked, faces_kept, faces_new;
} sctx;

/* Apply an edited model.mdl, check the result decodes back to it and that
 * every untouched node (model geometry and animations) keeps its bytes. */
static void struct_check_ex(sctx *c, const char *op, const char *ed, size_t en, const char *const *fresh,
			    size_t nfresh, const char *const *touched, size_t nt, bool pose_kept, const char *ctrl_node);

static void struct_check(sctx *c, const char *op, const char *ed, size_t en, const char *const *fresh,
			 size_t nfresh, const char *const *touched, size_t nt, bool pose_kept)
{
	struct_check_ex(c, op, ed, en, fresh, nfresh, touched, nt, pose_kept, NULL);
}

/* @p ctrl_node: the node that got a `scale 1.5`: its old controllers keep
 * their order and stored bits, the new one follows. */
static void struct_check_ex(sctx *c, const char *op, const char *ed, size_t en, const char *const *fresh,
			    size_t nfresh, const char *const *touched, size_t nt, bool pose_kept, const char *ctrl_node)
{
	char what[512];
	snprintf(what, sizeof(what), "%s: %s", c->base, op);
	size_t on;
	uint8_t *out = apply_any(c->it, "model.mdl", ed, en, &on);
	nwn_model *m2;
	lfs_error err;
	assert_int_equal(nwn_mdl_decode(out, on, &m2, &err), LFS_OK);
	size_t gl;
	char *got = gen_mdl(m2, &gl);
	assert_same_model(what, ed, en, got, gl, fresh, nfresh);
	const nwn_model *m = c->it->m;
	c->untouched += untouched_same(what, &m->geom, &m2->geom, touched, nt, pose_kept);
	for (uint32_t a = 0; a < m->n_anims; a++)
		for (uint32_t b = 0; b < m2->n_anims; b++)
			if (!strcasecmp(m->anims[a].geom.name, m2->anims[b].geom.name))
				c->untouched += untouched_same(what, &m->anims[a].geom, &m2->anims[b].geom, touched, nt, true);
	if (ctrl_node) {
		int32_t i = nwn_find_node(&m->geom, ctrl_node), j = nwn_find_node(&m2->geom, ctrl_node);
		assert_true(i >= 0 && j >= 0);
		const nwn_node *a = &m->geom.nodes[i], *b = &m2->geom.nodes[j];
		assert_int_equal(b->n_ctrls, a->n_ctrls + 1);
		for (uint32_t k = 0; k < a->n_ctrls; k++) {
			const nwn_controller *x = &a->ctrls[k], *y = &b->ctrls[k];
			assert_true(x->type == y->type && x->rows == y->rows && x->columns == y->columns && x->pad == y->pad);
			assert_true(fsame(a->ctrl_data + x->key_offset, b->ctrl_data + y->key_offset, x->rows));
			assert_true(fsame(a->ctrl_data + x->data_offset, b->ctrl_data + y->data_offset,
					  (size_t)x->rows * x->ncols));
		}
		const nwn_controller *z = &b->ctrls[a->n_ctrls];
		assert_int_equal(z->type, NWN_CTRL_SCALE);
		assert_true(z->rows == 1 && z->ncols == 1 && b->ctrl_data[z->key_offset] == 0.0f &&
			    b->ctrl_data[z->data_offset] == 1.5f);
		c->ctrl_checked++;
	}
	free(got);
	nwn_model_free(m2);
	free(out);
}

/* Node block of model node @p name in model.mdl (lines). */
static bool node_lines(const mdl_doc *d, const char *name, unsigned *l0, unsigned *l1)
{
	for (uint32_t i = 0; i < d->n_nodes; i++)
		if (!strcmp(d->nodes[i].name, name)) {
			*l0 = d->nodes[i].head.line;
			*l1 = d->nodes[i].end_line;
			return true;
		}
	return false;
}

/* Is @p name used by any other model node (parent) or skin weight? */
static bool name_referenced(const mdl_doc *d, const char *name)
{
	for (uint32_t i = 0; i < d->n_nodes; i++) {
		const mdl_node *n = &d->nodes[i];
		if (n->parent && !strcasecmp(n->parent, name))
			return true;
		const mdl_stmt *w = nth_stmt(n, "weights", 0);
		for (uint32_t r = 0; w && r < w->n_rows; r++)
			for (uint32_t k = 0; k < w->rows[r].ntok; k += 2)
				if (!strcasecmp(w->rows[r].tok[k].s, name))
					return true;
	}
	return false;
}

static size_t g_ops[10];
static const char *const g_op_names[10] = {
	"add a dummy node", "add a trimesh node", "remove a leaf node", "change a parent",
	"add an animation", "remove an animation", "add an event", "add a controller",
	"OBJ: add a vertex and a face", "OBJ: remove a face",
};

static void struct_mdl_ops(sctx *c, const lfs_view *w, const mdl_doc *d)
{
	const char *t = w->data;
	size_t n = w->size, en, s, e;
	const char *root = d->n_nodes ? d->nodes[0].name : NULL;
	unsigned gend = find_line(t, n, 1, "endmodelgeom");
	if (!root || !gend)
		return;
	char buf[4096];
	/* 0: a dummy node under the root */
	{
		static const char *const fresh[] = { "lfs_new_dummy" };
		const char *const touched[] = { "lfs_new_dummy", root };
		snprintf(buf, sizeof(buf), "node dummy lfs_new_dummy\n  parent %s\n  position 0.25 0.5 1\n"
			 "  orientation 0 0 1 0.5\nendnode\n", root);
		line_span(t, n, gend, gend - 1, &s, &e);
		char *ed = splice(t, n, s, s, buf, &en);
		struct_check(c, g_op_names[0], ed, en, fresh, 1, touched, 2, true);
		free(ed);
		g_ops[0]++;
	}
	/* 1: a trimesh node (2 faces, textured) under the root */
	{
		static const char *const fresh[] = { "lfs_new_mesh" };
		const char *const touched[] = { "lfs_new_mesh", root };
		snprintf(buf, sizeof(buf),
			 "node trimesh lfs_new_mesh\n  parent %s\n  position 0 0 1\n  bitmap lfs_tex\n"
			 "  verts 4\n    0 0 0\n    1 0 0\n    1 1 0\n    0 1 0\n"
			 "  tverts 4\n    0 0 0\n    1 0 0\n    1 1 0\n    0 1 0\n"
			 "  faces 2\n    0 1 2 1 0 1 2 1\n    0 2 3 1 0 2 3 1\nendnode\n", root);
		line_span(t, n, gend, gend - 1, &s, &e);
		char *ed = splice(t, n, s, s, buf, &en);
		struct_check(c, g_op_names[1], ed, en, fresh, 1, touched, 2, true);
		free(ed);
		g_ops[1]++;
	}
	/* 2: remove the last leaf node nobody refers to */
	for (uint32_t i = d->n_nodes; i-- > 1;) {
		const mdl_node *x = &d->nodes[i];
		if (name_referenced(d, x->name) || !x->parent)
			continue;
		const char *const touched[] = { x->name, x->parent };
		unsigned l0 = 0, l1 = 0;
		assert_true(node_lines(d, x->name, &l0, &l1));
		line_span(t, n, l0, l1, &s, &e);
		char *ed = splice(t, n, s, e, "", &en);
		struct_check(c, g_op_names[2], ed, en, NULL, 0, touched, 2, true);
		free(ed);
		g_ops[2]++;
		break;
	}
	/* 3: change a parent: a node two levels down moves to the root, else a
	 * child of the root moves under its previous sibling */
	for (uint32_t i = 1; i < d->n_nodes; i++) {
		const mdl_node *x = &d->nodes[i];
		if (!x->parent || x->parent_line == 0)
			continue;
		const char *np = NULL;
		if (strcasecmp(x->parent, root))
			np = root;
		else
			for (uint32_t j = i; j-- > 1 && !np;)
				if (d->nodes[j].parent && !strcasecmp(d->nodes[j].parent, root))
					np = d->nodes[j].name;
		if (!np)
			continue;
		const char *const touched[] = { x->name, x->parent, np };
		snprintf(buf, sizeof(buf), "  parent %s", np);
		char *ed = replace_line(t, n, x->parent_line, buf, &en);
		struct_check(c, g_op_names[3], ed, en, NULL, 0, touched, 3, false);
		free(ed);
		g_ops[3]++;
		break;
	}
	unsigned a0 = find_line(t, n, 1, "newanim ");
	unsigned done = find_line(t, n, 1, "donemodel");
	/* 4: a new animation: a copy of the first one, or a small one */
	if (done) {
		lfs_sb sb = { 0 };
		if (a0) {
			unsigned a1 = find_line(t, n, a0, "doneanim");
			size_t s0, e0;
			line_span(t, n, a0, a1, &s0, &e0);
			const mdl_anim *fa = &d->anims[0];
			lfs_sb_printf(&sb, "newanim lfs_new_anim %s\n", fa->model);
			size_t s1, e1;
			line_span(t, n, a0 + 1, a1 - 1, &s1, &e1);
			lfs_sb_put(&sb, t + s1, e1 - s1);
			lfs_sb_printf(&sb, "doneanim lfs_new_anim %s\n", fa->model);
		} else {
			lfs_sb_printf(&sb, "newanim lfs_new_anim x\n  length 1\n  transtime 0.25\n  event 0.5 hit\n"
				      "node dummy %s\n  parent NULL\n  positionkey 2\n    0 0 0 0\n    1 0 0 1\n"
				      "  orientationkey 2\n    0 0 0 1 0\n    1 0 0 1 1.5\nendnode\ndoneanim lfs_new_anim x\n",
				      root);
		}
		line_span(t, n, done, done - 1, &s, &e);
		char *ed = splice(t, n, s, s, sb.data, &en);
		struct_check(c, g_op_names[4], ed, en, NULL, 0, NULL, 0, true);
		free(ed);
		lfs_sb_free(&sb);
		g_ops[4]++;
	}
	if (a0) {
		/* 5: remove the last animation */
		const mdl_anim *la = &d->anims[d->n_anims - 1];
		line_span(t, n, la->head.line, la->end_line, &s, &e);
		char *ed = splice(t, n, s, e, "", &en);
		struct_check(c, g_op_names[5], ed, en, NULL, 0, NULL, 0, true);
		free(ed);
		g_ops[5]++;
		/* 6: an event in the first animation, after its last one (the
		 * compiler keeps events sorted by time) */
		const mdl_anim *fa = &d->anims[0];
		unsigned after = 0;
		float last = 0;
		for (uint32_t k = 0; k < fa->n_stmts; k++) {
			const mdl_stmt *st = &fa->stmts[k];
			float ft;
			if (!strcasecmp(skey(st), "transtime") && !after)
				after = st->head.line;
			if (!strcasecmp(skey(st), "event") && st->head.ntok > 1 &&
			    mdl_tok_float(st->head.tok[1].s, &ft)) {
				after = st->head.line;
				last = ft > last ? ft : last;
			}
		}
		if (after) {
			char ev[128];
			lfs_sb tb = { 0 };
			lfs_sb_puts(&tb, "  event ");
			lfs_sb_float(&tb, last + 0.0625f);
			lfs_sb_puts(&tb, " lfs_event\n");
			assert_true(lfs_sb_ok(&tb));
			snprintf(ev, sizeof(ev), "%.*s", (int)tb.len, tb.data);
			lfs_sb_free(&tb);
			line_span(t, n, after + 1, after, &s, &e);
			char *ed2 = splice(t, n, s, s, ev, &en);
			struct_check(c, g_op_names[6], ed2, en, NULL, 0, NULL, 0, true);
			free(ed2);
			g_ops[6]++;
		}
	}
	/* 7: a scale controller on the first model node without one */
	for (uint32_t i = 0; i < d->n_nodes; i++) {
		const mdl_node *x = &d->nodes[i];
		if (nth_stmt(x, "scale", 0))
			continue;
		const char *const touched[] = { x->name };
		line_span(t, n, x->end_line, x->end_line - 1, &s, &e);
		char *ed = splice(t, n, s, s, "  scale 1.5\n", &en);
		struct_check_ex(c, g_op_names[7], ed, en, NULL, 0, touched, 1, true, x->name);
		free(ed);
		g_ops[7]++;
		break;
	}
}

/* A parsed OBJ (test side). */
typedef struct tobj {
	float v[70000][3];
	uint32_t nv, nvt, nvn, nf;
	float vt[70000][2], vn[70000][3];
	int32_t f[30000][9];
} tobj;

static void tobj_parse(const char *t, size_t n, tobj *o)
{
	o->nv = o->nvt = o->nvn = o->nf = 0;
	const char *p = t, *end = t + n;
	while (p < end) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		if (!e)
			e = end;
		char line[512];
		size_t l = (size_t)(e - p) < sizeof(line) - 1 ? (size_t)(e - p) : sizeof(line) - 1;
		memcpy(line, p, l);
		line[l] = 0;
		if (!strncmp(line, "v ", 2) && o->nv < 70000) {
			assert_int_equal(sscanf(line + 2, "%f %f %f", &o->v[o->nv][0], &o->v[o->nv][1], &o->v[o->nv][2]), 3);
			o->nv++;
		} else if (!strncmp(line, "vt ", 3) && o->nvt < 70000) {
			assert_int_equal(sscanf(line + 3, "%f %f", &o->vt[o->nvt][0], &o->vt[o->nvt][1]), 2);
			o->nvt++;
		} else if (!strncmp(line, "vn ", 3) && o->nvn < 70000) {
			assert_int_equal(sscanf(line + 3, "%f %f %f", &o->vn[o->nvn][0], &o->vn[o->nvn][1], &o->vn[o->nvn][2]), 3);
			o->nvn++;
		} else if (!strncmp(line, "f ", 2) && o->nf < 30000) {
			int32_t *f = o->f[o->nf];
			for (int k = 0; k < 9; k++)
				f[k] = -1;
			char *q = line + 2;
			for (int c = 0; c < 3; c++) {
				while (*q == ' ')
					q++;
				for (int k = 0; k < 3; k++) {
					if (*q >= '0' && *q <= '9')
						f[3 * c + k] = (int32_t)strtol(q, &q, 10) - 1;
					if (*q == '/')
						q++;
					else
						break;
				}
			}
			o->nf++;
		}
		p = e + 1;
	}
}

/* Two OBJs show the same faces: per corner position, uv and normal (the
 * compiler's vertex order may differ). */
static bool tobj_same_faces(const tobj *a, const tobj *b)
{
	if (a->nf != b->nf)
		return false;
	for (uint32_t f = 0; f < a->nf; f++)
		for (int c = 0; c < 3; c++) {
			const int32_t *x = a->f[f] + 3 * c, *y = b->f[f] + 3 * c;
			if (memcmp(a->v[x[0]], b->v[y[0]], 12))
				return false;
			if (x[1] >= 0 && y[1] >= 0 && memcmp(a->vt[x[1]], b->vt[y[1]], 8))
				return false;
			if (x[2] >= 0 && y[2] >= 0 && memcmp(a->vn[x[2]], b->vn[y[2]], 12))
				return false;
		}
	return true;
}

static void struct_obj_check(sctx *c, const char *op, const char *path, const char *node, const char *ed,
			     size_t en, tobj *want, tobj *got)
{
	char what[512];
	snprintf(what, sizeof(what), "%s: %s %s", c->base, op, path);
	size_t on;
	uint8_t *out = apply_any(c->it, path, ed, en, &on);
	lfs_viewset vs;
	lfs_error err;
	assert_int_equal(lfs_views_build("x.mdl", out, on, NULL, &vs, &err), LFS_OK);
	const lfs_view *g = lfs_viewset_find(&vs, path);
	assert_non_null(g);
	tobj_parse(ed, en, want);
	tobj_parse(g->data, g->size, got);
	bool same = tobj_same_faces(want, got);
	if (!same)
		fprintf(stderr, "%s: faces differ\n", what);
	assert_true(same);
	nwn_model *m2;
	assert_int_equal(nwn_mdl_decode(out, on, &m2, &err), LFS_OK);
	/* faces of the edited mesh with the corner positions of an old face keep
	 * its stored plane bits */
	{
		const nwn_mesh *a = c->it->m->geom.nodes[nwn_find_node(&c->it->m->geom, node)].mesh;
		const nwn_mesh *b = m2->geom.nodes[nwn_find_node(&m2->geom, node)].mesh;
		for (uint32_t f = 0; f < b->n_faces; f++) {
			bool found = false;
			for (uint32_t q = 0; q < a->n_faces && !found; q++) {
				bool eq = true;
				for (int k = 0; k < 3 && eq; k++)
					eq = !memcmp(a->verts + 3 * a->faces[q].v[k], b->verts + 3 * b->faces[f].v[k], 12);
				if (!eq)
					continue;
				found = true;
				assert_memory_equal(a->faces[q].plane_normal, b->faces[f].plane_normal, 12);
				assert_memory_equal(&a->faces[q].plane_distance, &b->faces[f].plane_distance, 4);
			}
			if (found)
				c->faces_kept++;
			else
				c->faces_new++;
		}
	}
	const char *const touched[] = { node };
	c->untouched += untouched_same(what, &c->it->m->geom, &m2->geom, touched, 1, true);
	for (uint32_t a = 0; a < c->it->m->n_anims && a < m2->n_anims; a++)
		c->untouched += untouched_same(what, &c->it->m->anims[a].geom, &m2->anims[a].geom, NULL, 0, true);
	nwn_model_free(m2);
	lfs_viewset_free(&vs);
	free(out);
}

static void struct_obj_ops(sctx *c, tobj *want, tobj *got)
{
	const nwn_model *m = c->it->m;
	for (size_t v = 0; v < c->it->vs.n_views; v++) {
		const lfs_view *w = &c->it->vs.views[v];
		if (strncmp(w->path, "meshes/", 7))
			continue;
		/* the node: the OBJ's "o" line names it (safe name) */
		tobj_parse(w->data, w->size, want);
		if (want->nf == 0 || want->nv < 2)
			continue;
		int32_t ni = -1;
		for (uint32_t i = 0; i < m->geom.n_nodes && ni < 0; i++) {
			const nwn_mesh *me = m->geom.nodes[i].mesh;
			char p[256];
			snprintf(p, sizeof(p), "meshes/%s.obj", m->geom.nodes[i].name);
			if (me && !strcmp(p, w->path))
				ni = (int32_t)i;
		}
		if (ni < 0 || m->geom.nodes[ni].mesh->anim)
			continue;
		const char *node = m->geom.nodes[ni].name;
		bool vt = want->nvt > 0, vn = want->nvn > 0;
		/* 8: a vertex (with uv and normal) and a face using it and two
		 * corners of face 0 */
		lfs_sb sb = { 0 };
		lfs_sb_put(&sb, w->data, w->size);
		const int32_t *f0 = want->f[0];
		float np[3] = { want->v[f0[0]][0] + 0.125f, want->v[f0[0]][1] + 0.25f, want->v[f0[0]][2] + 0.5f };
		lfs_sb_puts(&sb, "v ");
		lfs_sb_floats(&sb, np, 3);
		lfs_sb_putc(&sb, '\n');
		if (vt)
			lfs_sb_puts(&sb, "vt 0.5 0.25\n");
		if (vn)
			lfs_sb_puts(&sb, "vn 0 0 1\n");
		uint32_t nv1 = want->nv + 1, nt1 = want->nvt + 1, nn1 = want->nvn + 1;
		lfs_sb_puts(&sb, "f");
		int32_t cs[3][3] = { { f0[0], f0[1], f0[2] }, { f0[3], f0[4], f0[5] }, { (int32_t)nv1 - 1, (int32_t)nt1 - 1, (int32_t)nn1 - 1 } };
		for (int k = 0; k < 3; k++) {
			lfs_sb_printf(&sb, " %d", cs[k][0] + 1);
			if (vt || vn)
				lfs_sb_putc(&sb, '/');
			if (vt)
				lfs_sb_printf(&sb, "%d", cs[k][1] + 1);
			if (vn)
				lfs_sb_printf(&sb, "/%d", cs[k][2] + 1);
		}
		lfs_sb_putc(&sb, '\n');
		assert_true(lfs_sb_ok(&sb));
		struct_obj_check(c, g_op_names[8], w->path, node, sb.data, sb.len, want, got);
		lfs_sb_free(&sb);
		g_ops[8]++;
		/* 9: the first face removed */
		unsigned fl = find_line(w->data, w->size, 1, "f ");
		size_t s, e, en;
		line_span(w->data, w->size, fl, fl, &s, &e);
		char *ed = splice(w->data, w->size, s, e, "", &en);
		struct_obj_check(c, g_op_names[9], w->path, node, ed, en, want, got);
		free(ed);
		g_ops[9]++;
		break; /* one mesh per model */
	}
}

/* (d) structural edits through model.mdl and the mesh OBJs re-lay the file:
 * the result decodes back to the edited text (modulo the documented
 * normalisations) and every untouched node keeps its decoded fields and
 * raw arrays. */
static void test_structural_edits(void **state)
{
	(void)state;
	sctx c = { 0 };
	tobj *want = malloc(sizeof(tobj)), *got = malloc(sizeof(tobj));
	assert_non_null(want);
	assert_non_null(got);
	memset(g_ops, 0, sizeof(g_ops));
	for (size_t i = 0; i < g_count; i++) {
		item it;
		load(i, &it);
		c.it = &it;
		c.base = lfs_base_name(g_list[i]);
		const lfs_view *w = lfs_viewset_find(&it.vs, "model.mdl");
		mdl_doc *d = NULL;
		lfs_error err;
		assert_int_equal(mdl_parse("model.mdl", (const uint8_t *)w->data, w->size, &d, &err), LFS_OK);
		struct_mdl_ops(&c, w, d);
		mdl_doc_free(d);
		struct_obj_ops(&c, want, got);
		unload(&it);
	}
	/* the corpus binaries hold mesh faces in 14 models: the OBJ edits also
	 * run on the nwnmdlcomp compiles of corpus ASCII files (peer_compiled/) */
	const char *corpus = lfs_corpus_dir_or_skip();
	char list[4096], prefix[4096], peer[4096];
	snprintf(list, sizeof(list), "%s/nwn/ascii.txt", corpus);
	snprintf(prefix, sizeof(prefix), "%s/nwn", corpus);
	size_t na = 0, peers = 0;
	char **ascii = lfs_read_list(list, prefix, &na);
	for (size_t i = 0; ascii && i < na && g_ops[8] < 40; i++) {
		const char *rel = strstr(ascii[i], "/nwn/tree/");
		if (!rel)
			continue;
		snprintf(peer, sizeof(peer), "%s/nwn/peer_compiled/%s", corpus, rel + strlen("/nwn/tree/"));
		FILE *f = fopen(peer, "rb");
		if (!f)
			continue;
		fclose(f);
		item it;
		load_path(peer, &it);
		c.it = &it;
		c.base = lfs_base_name(peer);
		struct_obj_ops(&c, want, got);
		unload(&it);
		peers++;
	}
	lfs_free_list(ascii);
	free(want);
	free(got);
	for (int k = 0; k < 10; k++)
		printf("%-32s %zu models\n", g_op_names[k], g_ops[k]);
	printf("(OBJ edits: %zu peer_compiled binaries looked at)\n", peers);
	printf("untouched nodes compared: %zu; controllers kept bit for bit beside a new one in %zu nodes;\n"
	       "OBJ edits: %zu faces kept their stored plane, %zu new faces\n", c.untouched, c.ctrl_checked,
	       c.faces_kept, c.faces_new);
	assert_true(c.ctrl_checked >= 20);
	assert_true(c.faces_new >= g_ops[8]);
	for (int k = 0; k < 10; k++)
		assert_true(g_ops[k] >= 20);
}

/* Supermodel lookup over the corpus binaries (by base name). */
static bool corpus_lookup(void *ctx, const char *name, uint8_t **data, size_t *n)
{
	(void)ctx;
	char want[300];
	snprintf(want, sizeof(want), "%s.mdl", name);
	for (size_t i = 0; i < g_nall; i++)
		if (!strcasecmp(lfs_base_name(g_all[i]), want)) {
			*data = lfs_read_file(g_all[i], n);
			return *data != NULL;
		}
	return false;
}

/* With the supermodel found through the lookup, part numbers come from it
 * (the compiler's rule [N §3.8]): a node added to a model whose
 * supermodel is a corpus binary leaves every old node with the number the
 * game's compiler gave it, and the node-count field grows by one. */
static void test_structural_supermodel(void **state)
{
	(void)state;
	size_t models = 0, nodes = 0, same = 0;
	for (size_t i = 0; i < g_count; i++) {
		item it;
		load(i, &it);
		const nwn_model *m = it.m;
		uint8_t *sb = NULL;
		size_t sn = 0;
		if (!m->supermodel[0] || !strcasecmp(m->supermodel, "NULL") ||
		    !corpus_lookup(NULL, m->supermodel, &sb, &sn)) {
			unload(&it);
			continue;
		}
		free(sb);
		const lfs_view *w = lfs_viewset_find(&it.vs, "model.mdl");
		unsigned gend = find_line(w->data, w->size, 1, "endmodelgeom");
		char buf[256];
		snprintf(buf, sizeof(buf), "node dummy lfs_new_dummy\n  parent %s\nendnode\n", m->geom.nodes[0].name);
		size_t s, e, en, on;
		line_span(w->data, w->size, gend, gend - 1, &s, &e);
		char *ed = splice(w->data, w->size, s, s, buf, &en);
		uint8_t *out = NULL;
		lfs_error err;
		assert_int_equal(lfs_views_apply_ex("x.mdl", it.data, it.n, "model.mdl", ed, en, corpus_lookup, NULL, &out, &on, &err),
				 LFS_OK);
		nwn_model *m2;
		assert_int_equal(nwn_mdl_decode(out, on, &m2, &err), LFS_OK);
		assert_int_equal(m2->geom.n_nodes, m->geom.n_nodes + 1);
		assert_int_equal(m2->geom.node_count_field, m->geom.node_count_field + 1);
		uint32_t diff = 0;
		for (uint32_t k = 0; k < m->geom.n_nodes; k++) {
			nodes++;
			if (m2->geom.nodes[k].part_number == m->geom.nodes[k].part_number)
				same++;
			else
				diff++;
		}
		printf("%s (supermodel %s): %u of %u old part numbers differ from the "
		       "supermodel's; "
		       "node-count field %u -> %u\n",
		       lfs_base_name(g_list[i]), m->supermodel, diff, m->geom.n_nodes,
		       m->geom.node_count_field, m2->geom.node_count_field);
		models++;
		nwn_model_free(m2);
		free(out);
		free(ed);
		unload(&it);
	}
	printf("supermodel part numbers: %zu of %zu old nodes in %zu models as stored\n", same, nodes, models);
	if (g_count == g_nall) /* a slice (the fast tier) may hold no model whose supermodel is there */
		assert_true(models >= 1);
	assert_int_equal(same, nodes);
}

/* Errors of the structural path carry the position in the edited text. */
static void test_structural_errors(void **state)
{
	(void)state;
	item it;
	load(0, &it);
	const lfs_view *w = lfs_viewset_find(&it.vs, "model.mdl");
	unsigned gend = find_line(w->data, w->size, 1, "endmodelgeom");
	const char *root = it.m->geom.nodes[0].name;
	char buf[512], want[600];
	size_t s, e, en, on;
	uint8_t *out = NULL;
	lfs_error err;
	line_span(w->data, w->size, gend, gend - 1, &s, &e);
	/* a face indexing a vertex the node does not have: line gend + 7, column 11 */
	snprintf(buf, sizeof(buf),
		 "node trimesh lfs_bad\n  parent %s\n  verts 3\n    0 0 0\n    1 0 0\n    0 1 0\n  faces 1\n"
		 "    0 1 9 1 0 0 0 0\nendnode\n", root);
	char *ed = splice(w->data, w->size, s, s, buf, &en);
	assert_int_equal(apply(&it, "model.mdl", ed, en, &out, &on, &err), LFS_ERR_PARSE);
	snprintf(want, sizeof(want), "model.mdl:%u:9: error: vertex index 9 out of range (the node has 3 verts)", gend + 7);
	assert_string_equal(err.msg, want);
	free(ed);
	/* a new node under a parent that does not exist: the parent line */
	snprintf(buf, sizeof(buf), "node dummy lfs_bad\n  parent lfs_nosuch\nendnode\n");
	ed = splice(w->data, w->size, s, s, buf, &en);
	assert_int_equal(apply(&it, "model.mdl", ed, en, &out, &on, &err), LFS_ERR_PARSE);
	snprintf(want, sizeof(want), "model.mdl:%u:1: error: node 'lfs_bad': unknown parent node 'lfs_nosuch'", gend + 1);
	assert_true(!strncmp(err.msg, want, strlen(want)));
	free(ed);
	unload(&it);
	/* an OBJ face with a corner index past the vertex list */
	bool done = false;
	for (size_t i = 0; i < g_count && !done; i++) {
		load(i, &it);
		for (size_t v = 0; v < it.vs.n_views && !done; v++) {
			const lfs_view *x = &it.vs.views[v];
			if (strncmp(x->path, "meshes/", 7))
				continue;
			unsigned lines = 0;
			for (size_t k = 0; k < x->size; k++)
				lines += x->data[k] == '\n';
			lfs_sb sb = { 0 };
			lfs_sb_put(&sb, x->data, x->size);
			lfs_sb_puts(&sb, "f 1 2 99999\n");
			assert_int_equal(apply(&it, x->path, sb.data, sb.len, &out, &on, &err), LFS_ERR_PARSE);
			snprintf(want, sizeof(want), "%s:%u:7: error: index 99999 out of range", x->path, lines + 1);
			assert_true(!strncmp(err.msg, want, strlen(want)));
			lfs_sb_free(&sb);
			done = true;
		}
		unload(&it);
	}
	assert_true(done);
	assert_null(out);
}

/* Hostile structural edits: node blocks duplicated, removed, re-typed,
 * re-parented at random, OBJ faces pointing anywhere: success (and the
 * result decodes) or a clean error, never a crash. */
static void test_structural_hostile(void **state)
{
	(void)state;
	lfs_rng seed;
	lfs_rng_seed(&seed, "nwn_apply structural edits", 0xb10c);
	size_t ok = 0, bad = 0;
	size_t step = g_count / 30 ? g_count / 30 : 1;
	static const char *const types[] = { "dummy", "trimesh", "skin", "danglymesh", "aabb", "light",
					     "emitter", "reference", "animmesh", "bogus" };
	for (size_t i = 0; i < g_count; i += step) {
		item it;
		load(i, &it);
		const lfs_view *w = lfs_viewset_find(&it.vs, "model.mdl");
		mdl_doc *d = NULL;
		lfs_error err;
		assert_int_equal(mdl_parse("model.mdl", (const uint8_t *)w->data, w->size, &d, &err), LFS_OK);
		for (int round = 0; round < 12 && d->n_nodes; round++) {
			const mdl_node *x = &d->nodes[lfs_rng_u32(&seed) % d->n_nodes];
			size_t s, e, en;
			line_span(w->data, w->size, x->head.line, x->end_line, &s, &e);
			char *ed = NULL;
			char buf[256];
			switch (lfs_rng_u32(&seed) % 4) {
			case 0: /* duplicate the block */
				ed = malloc(w->size + (e - s) + 1);
				memcpy(ed, w->data, e);
				memcpy(ed + e, w->data + s, e - s);
				memcpy(ed + e + (e - s), w->data + e, w->size - e);
				en = w->size + (e - s);
				break;
			case 1: /* remove it */
				ed = splice(w->data, w->size, s, e, "", &en);
				break;
			case 2: /* another type */
				snprintf(buf, sizeof(buf), "node %s %s",
					 types[lfs_rng_u32(&seed) % 10], x->name);
				ed = replace_line(w->data, w->size, x->head.line, buf, &en);
				break;
			default: /* another parent */
				if (!x->parent_line)
					continue;
				snprintf(buf, sizeof(buf), "  parent %s",
					 d->nodes[lfs_rng_u32(&seed) % d->n_nodes].name);
				ed = replace_line(w->data, w->size, x->parent_line, buf, &en);
				break;
			}
			uint8_t *out = NULL;
			size_t on;
			lfs_err r = apply(&it, "model.mdl", ed, en, &out, &on, &err);
			if (r == LFS_OK) {
				nwn_model *m2;
				assert_int_equal(nwn_mdl_decode(out, on, &m2, &err), LFS_OK);
				nwn_model_free(m2);
				ok++;
			} else {
				assert_true(r == LFS_ERR_PARSE || r == LFS_ERR_UNSUPPORTED);
				assert_true(err.msg[0] != 0);
				bad++;
			}
			free(out);
			free(ed);
		}
		mdl_doc_free(d);
		for (size_t v = 0; v < it.vs.n_views; v++) {
			const lfs_view *x = &it.vs.views[v];
			if (strncmp(x->path, "meshes/", 7))
				continue;
			for (int round = 0; round < 8; round++) {
				lfs_sb sb = { 0 };
				lfs_sb_put(&sb, x->data, x->size);
				uint32_t k = lfs_rng_u32(&seed) % 4;
				if (k == 0)
					lfs_sb_puts(&sb, "v 1 2 3\nf 1 2 -1\n");
				else if (k == 1)
					lfs_sb_puts(&sb, "f 1/1/1 1/1/1 1/1/1\n");
				else if (k == 2)
					lfs_sb_puts(&sb, "v nan 0 0\nv 1e38 1e38 1e38\nf -1 -2 1 2 3\n");
				else
					lfs_sb_printf(&sb, "f %u %u %u\n",
						      lfs_rng_u32(&seed) % 5 + 1,
						      lfs_rng_u32(&seed) % 5 + 1,
						      lfs_rng_u32(&seed) % 5 + 1);
				uint8_t *out = NULL;
				size_t on;
				lfs_err r = apply(&it, x->path, sb.data, sb.len, &out, &on, &err);
				if (r == LFS_OK) {
					nwn_model *m2;
					assert_int_equal(nwn_mdl_decode(out, on, &m2, &err), LFS_OK);
					nwn_model_free(m2);
					ok++;
				} else {
					assert_true(r == LFS_ERR_PARSE || r == LFS_ERR_UNSUPPORTED);
					bad++;
				}
				free(out);
				lfs_sb_free(&sb);
			}
			break;
		}
		unload(&it);
	}
	printf("hostile structural edits: %zu applied (and decode), %zu refused with a message\n", ok, bad);
	assert_true(ok > 50 && ok + bad > 300);
}

/* Parse errors: exact file:line:col, computed from the edit position. */
static void test_error_messages(void **state)
{
	(void)state;
	bool done_pos = false, done_parent = false, done_obj = false, done_csv = false,
	     done_unknown = false;
	for (size_t i = 0; i < g_count; i++) {
		item it;
		load(i, &it);
		const lfs_view *w = lfs_viewset_find(&it.vs, "model.mdl");
		uint8_t *out = NULL;
		size_t on, en;
		lfs_error err;
		char want[400];
		unsigned pl = find_line(w->data, w->size, 1, "  position ");
		if (pl && !done_pos) {
			char *ed = replace_line(w->data, w->size, pl, "  position 1 2", &en);
			assert_int_equal(apply(&it, "model.mdl", ed, en, &out, &on, &err), LFS_ERR_PARSE);
			snprintf(want, sizeof(want), "model.mdl:%u:15: error: expected 3 numbers after 'position'", pl);
			assert_string_equal(err.msg, want);
			free(ed);
			ed = replace_line(w->data, w->size, pl, "  position 1 2 x3", &en);
			assert_int_equal(apply(&it, "model.mdl", ed, en, &out, &on, &err), LFS_ERR_PARSE);
			snprintf(want, sizeof(want), "model.mdl:%u:16: error: 'x3' is not a number", pl);
			assert_string_equal(err.msg, want);
			free(ed);
			done_pos = true;
		}
		unsigned par = find_line(w->data, w->size, 1, "  parent ");
		unsigned par2 = par ? find_line(w->data, w->size, par + 1, "  parent ") : 0;
		if (par2 && !done_parent) {
			char *ed = replace_line(w->data, w->size, par2, "  parent no_such_node", &en);
			assert_int_equal(apply(&it, "model.mdl", ed, en, &out, &on, &err), LFS_ERR_PARSE);
			snprintf(want, sizeof(want), "model.mdl:%u:10: error: unknown node 'no_such_node' in parent",
				 par2);
			assert_string_equal(err.msg, want);
			free(ed);
			done_parent = true;
		}
		unsigned sl = find_line(w->data, w->size, 1, "setanimationscale");
		if (sl && !done_unknown) {
			char *ed = replace_line(w->data, w->size, sl, "setanimationscale 1\nfrobnicate 3", &en);
			assert_int_equal(apply(&it, "model.mdl", ed, en, &out, &on, &err), LFS_ERR_PARSE);
			snprintf(want, sizeof(want),
				 "model.mdl:%u:1: error: unknown statement 'frobnicate' in the model header", sl + 1);
			assert_string_equal(err.msg, want);
			free(ed);
			done_unknown = true;
		}
		for (size_t v = 0; v < it.vs.n_views && (!done_obj || !done_csv); v++) {
			const lfs_view *x = &it.vs.views[v];
			if (!done_obj && !strncmp(x->path, "meshes/", 7)) {
				unsigned vl = find_line(x->data, x->size, 1, "v ");
				if (!vl)
					continue;
				char *ed = replace_line(x->data, x->size, vl, "v 1 2", &en);
				assert_int_equal(apply(&it, x->path, ed, en, &out, &on, &err), LFS_ERR_PARSE);
				snprintf(want, sizeof(want), "%s:%u:5: error: expected 3 numbers after 'v'", x->path, vl);
				assert_string_equal(err.msg, want);
				free(ed);
				done_obj = true;
			}
			if (!done_csv && !strncmp(x->path, "anims/", 6) && x->size > 0) {
				const char *nlp = memchr(x->data, '\n', x->size);
				if (!nlp || !memchr(nlp + 1, ',', x->size - (size_t)(nlp + 1 - x->data)))
					continue;
				char *ed = replace_line(x->data, x->size, 2, "0,abc", &en);
				lfs_err r = apply(&it, x->path, ed, en, &out, &on, &err);
				assert_int_equal(r, LFS_ERR_PARSE);
				/* 2 fields: either a field-count error or the bad number */
				unsigned commas = 0;
				for (const char *q = x->data; q < nlp; q++)
					commas += *q == ',';
				if (commas == 1)
					snprintf(want, sizeof(want), "%s:2:3: error: 'abc' is not a number", x->path);
				else
					snprintf(want, sizeof(want), "%s:2:6: error: expected %u fields, found 2",
						 x->path, commas + 1);
				assert_string_equal(err.msg, want);
				free(ed);
				done_csv = true;
			}
		}
		unload(&it);
	}
	assert_true(done_pos && done_parent && done_obj && done_csv && done_unknown);
}

/* Read-only and unknown views. */
static void test_readonly_views(void **state)
{
	(void)state;
	item it;
	load(0, &it);
	uint8_t *out = NULL;
	size_t on;
	lfs_error err;
	/* model.obj is writable: tests/unit/test_nwn_obj_weld.c */
	assert_int_equal(apply(&it, "model.mtl", "", 0, &out, &on, &err), LFS_ERR_UNSUPPORTED);
	assert_int_equal(apply(&it, "meshes/no such mesh.obj", "", 0, &out, &on, &err),
			 LFS_ERR_UNSUPPORTED);
	assert_int_equal(apply(&it, "anims/x/y.z.csv", "", 0, &out, &on, &err), LFS_ERR_UNSUPPORTED);
	assert_int_equal(apply(&it, "other.txt", "", 0, &out, &on, &err), LFS_ERR_UNSUPPORTED);
	assert_null(out);
	unload(&it);
}

/* ---- (e) hostile text ---------------------------------------------------------- */

static void mutate_and_apply(const item *it, const lfs_view *w, lfs_rng *seed, size_t rounds,
			     size_t *ok, size_t *bad)
{
	static const char alphabet[] = "0123456789.-+e \n\t\r#/,xyz\0";
	for (size_t k = 0; k < rounds; k++) {
		size_t n = w->size;
		char *t = malloc(n + 64);
		memcpy(t, w->data, n);
		uint32_t kind = lfs_rng_u32(seed) % 4;
		if (kind == 0 && n) { /* truncate */
			n = lfs_rng_u32(seed) % n;
		} else if (kind == 1) { /* a few byte changes */
			for (int j = 0; j < 4 && n; j++)
				t[lfs_rng_u32(seed) % n] =
					alphabet[lfs_rng_u32(seed) % (sizeof(alphabet))];
		} else if (kind == 2 && n > 2) { /* delete a span */
			size_t s = lfs_rng_u32(seed) % n, l = 1 + lfs_rng_u32(seed) % 40;
			if (s + l > n)
				l = n - s;
			memmove(t + s, t + s + l, n - s - l);
			n -= l;
		} else if (n) { /* insert a number-ish token */
			size_t s = lfs_rng_u32(seed) % n;
			const char *ins = (lfs_rng_u32(seed) & 1) ? " 7" : "\n1e9 ";
			size_t l = strlen(ins);
			memmove(t + s + l, t + s, n - s);
			memcpy(t + s, ins, l);
			n += l;
		}
		uint8_t *out = NULL;
		size_t on;
		lfs_error err;
		lfs_err r = apply(it, w->path, t, n, &out, &on, &err);
		if (r == LFS_OK) {
			nwn_model *m2;
			assert_int_equal(nwn_mdl_decode(out, on, &m2, &err), LFS_OK);
			nwn_model_free(m2);
			(*ok)++;
		} else {
			assert_true(r == LFS_ERR_PARSE || r == LFS_ERR_UNSUPPORTED);
			assert_true(err.msg[0] != 0);
			(*bad)++;
		}
		free(out);
		free(t);
	}
}

static void test_hostile_text(void **state)
{
	(void)state;
	lfs_rng seed;
	lfs_rng_seed(&seed, "nwn_apply mutations", 0x5eed);
	size_t ok = 0, bad = 0;
	size_t step = g_count / 24 ? g_count / 24 : 1;
	for (size_t i = 0; i < g_count; i += step) {
		item it;
		load(i, &it);
		size_t objs = 0, csvs = 0;
		for (size_t v = 0; v < it.vs.n_views; v++) {
			const lfs_view *w = &it.vs.views[v];
			if (!strcmp(w->path, "model.mdl"))
				mutate_and_apply(&it, w, &seed, 60, &ok, &bad);
			else if (!strncmp(w->path, "meshes/", 7) && objs++ < 2)
				mutate_and_apply(&it, w, &seed, 30, &ok, &bad);
			else if (!strncmp(w->path, "anims/", 6) && csvs++ < 3)
				mutate_and_apply(&it, w, &seed, 20, &ok, &bad);
		}
		/* garbage of every kind */
		uint8_t *out = NULL;
		size_t on;
		lfs_error err;
		static const char junk[] = "node trimesh\n\0\0verts 99999999999\nendnode\n";
		lfs_err r = apply(&it, "model.mdl", junk, sizeof(junk), &out, &on, &err);
		assert_true(r == LFS_ERR_PARSE || r == LFS_ERR_UNSUPPORTED);
		free(out);
		unload(&it);
	}
	printf("mutated views: %zu applied (and decode), %zu refused with a message\n", ok, bad);
	assert_true(ok + bad > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unedited_views),
		cmocka_unit_test(test_retyped_mdl),
		cmocka_unit_test(test_value_edits),
		cmocka_unit_test(test_obj_vertex_every_mesh),
		cmocka_unit_test(test_law_handed_model),
		cmocka_unit_test(test_structural_keys),
		cmocka_unit_test(test_structural_edits),
		cmocka_unit_test(test_structural_supermodel),
		cmocka_unit_test(test_structural_errors),
		cmocka_unit_test(test_structural_hostile),
		cmocka_unit_test(test_error_messages),
		cmocka_unit_test(test_readonly_views),
		cmocka_unit_test(test_hostile_text),
	};
	/* NWN_APPLY_TESTS=<glob> runs a subset (cmocka's test filter) */
	if (getenv("NWN_APPLY_TESTS"))
		cmocka_set_test_filter(getenv("NWN_APPLY_TESTS"));
	return lfs_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
