/**
 * @file test_nwn_apply.c
 * nwn_apply_view() on every corpus binary (docs/nwn-compile.md "Edits"):
 *  - unedited views (model.mdl, every meshes/ *.obj, every anims CSV) give the
 *    original bytes; so does model.mdl re-typed with other number spellings
 *    and CRLF line ends (the value comparison path, not the fast path);
 *  - value edits (a vertex through model.mdl and through the mesh OBJ, a key
 *    through a CSV, an orientation, a material colour, a controller value)
 *    change exactly the bytes computed from the decoded model's offsets and
 *    the derived-value rules, and the result decodes to the edited values;
 *  - structural edits are refused as such; parse errors carry exact
 *    file:line:col; mutated text never crashes.
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
#include "formats/nwn_mdl.h"
#include "views/nwn_apply.h"
#include "views/nwn_ascii.h"
#include "views/viewset.h"
#include "corpus.h"

static char **g_list;
static size_t g_count;

static int setup(void **state)
{
	(void)state;
	const char *corpus = lfs_corpus_dir_or_skip();
	char list[4096], prefix[4096];
	snprintf(list, sizeof(list), "%s/nwn/binary.txt", corpus);
	snprintf(prefix, sizeof(prefix), "%s/nwn", corpus);
	g_list = lfs_read_list(list, prefix, &g_count);
	if (!g_list || !g_count) {
		fprintf(stderr, "no binary list: skipping\n");
		exit(77);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	lfs_free_list(g_list);
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

typedef struct item {
	uint8_t *data;
	size_t n;
	nwn_model *m;
	lfs_viewset vs;
} item;

static void load(size_t i, item *it)
{
	memset(it, 0, sizeof(*it));
	it->data = lfs_read_file(g_list[i], &it->n);
	assert_non_null(it->data);
	lfs_error err;
	assert_int_equal(nwn_mdl_decode(it->data, it->n, &it->m, &err), LFS_OK);
	assert_int_equal(lfs_views_build(base_name(g_list[i]), it->data, it->n, NULL, &it->vs, &err),
			 LFS_OK);
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
	return nwn_apply_view(it->data, it->n, view, text, tn, out, outn, err);
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

/* Independent plane check (double, notes §3.4). */
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
	assert_true(models >= 20);
	assert_true(vert >= 10); /* 14 corpus models have meshes with vertices */
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
	assert_true(meshes >= 20);
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
	assert_true(removed > 100 && added > 100 && mdl > 100);
}

/* Structural edits the encoder path does not cover yet are refused as such. */
static void test_structural_refused(void **state)
{
	(void)state;
	size_t checked = 0;
	for (size_t i = 0; i < g_count; i++) {
		item it;
		load(i, &it);
		/* model.mdl with one node block removed */
		const lfs_view *w = lfs_viewset_find(&it.vs, "model.mdl");
		if (it.m->geom.n_nodes >= 2) {
			unsigned nl = find_line(w->data, w->size, 1, "node ");
			unsigned nl2 = find_line(w->data, w->size, nl + 1, "node ");
			if (nl2) {
				size_t s = 0;
				unsigned l = 1;
				for (; l < nl2 && s < w->size; s++)
					if (w->data[s] == '\n')
						l++;
				size_t e = s;
				unsigned el = find_line(w->data, w->size, nl2, "endnode");
				for (; l <= el && e < w->size; e++)
					if (w->data[e] == '\n')
						l++;
				char *ed = malloc(w->size);
				memcpy(ed, w->data, s);
				memcpy(ed + s, w->data + e, w->size - e);
				uint8_t *out = NULL;
				size_t on;
				lfs_error err;
				lfs_err r = apply(&it, "model.mdl", ed, w->size - (e - s), &out, &on, &err);
				/* a structural edit or, when another node named it as
				 * parent, an unknown parent */
				assert_true(r == LFS_ERR_UNSUPPORTED || r == LFS_ERR_PARSE);
				if (r == LFS_ERR_UNSUPPORTED)
					assert_non_null(strstr(err.msg, "structural edit needs the encoder"));
				assert_null(out);
				free(ed);
				checked++;
			}
		}
		/* a mesh OBJ with one more vertex */
		for (size_t v = 0; v < it.vs.n_views; v++) {
			const lfs_view *x = &it.vs.views[v];
			if (strncmp(x->path, "meshes/", 7))
				continue;
			char *ed = malloc(x->size + 16);
			memcpy(ed, x->data, x->size);
			memcpy(ed + x->size, "v 0 0 0\n", 8);
			uint8_t *out = NULL;
			size_t on;
			lfs_error err;
			assert_int_equal(apply(&it, x->path, ed, x->size + 8, &out, &on, &err),
					 LFS_ERR_UNSUPPORTED);
			assert_non_null(strstr(err.msg, "structural edit needs the encoder"));
			free(ed);
			checked++;
			break;
		}
		unload(&it);
	}
	assert_true(checked > 20);
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
			snprintf(want, sizeof(want), "model.mdl:%u:15: expected 3 numbers after 'position'", pl);
			assert_string_equal(err.msg, want);
			free(ed);
			ed = replace_line(w->data, w->size, pl, "  position 1 2 x3", &en);
			assert_int_equal(apply(&it, "model.mdl", ed, en, &out, &on, &err), LFS_ERR_PARSE);
			snprintf(want, sizeof(want), "model.mdl:%u:16: 'x3' is not a number", pl);
			assert_string_equal(err.msg, want);
			free(ed);
			done_pos = true;
		}
		unsigned par = find_line(w->data, w->size, 1, "  parent ");
		unsigned par2 = par ? find_line(w->data, w->size, par + 1, "  parent ") : 0;
		if (par2 && !done_parent) {
			char *ed = replace_line(w->data, w->size, par2, "  parent no_such_node", &en);
			assert_int_equal(apply(&it, "model.mdl", ed, en, &out, &on, &err), LFS_ERR_PARSE);
			snprintf(want, sizeof(want), "model.mdl:%u:10: unknown node 'no_such_node' in parent",
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
				 "model.mdl:%u:1: unknown statement 'frobnicate' in the model header", sl + 1);
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
				snprintf(want, sizeof(want), "%s:%u:5: expected 3 numbers after 'v'", x->path, vl);
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
					snprintf(want, sizeof(want), "%s:2:3: 'abc' is not a number", x->path);
				else
					snprintf(want, sizeof(want), "%s:2:6: expected %u fields, found 2",
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
	assert_int_equal(apply(&it, "model.obj", "", 0, &out, &on, &err), LFS_ERR_UNSUPPORTED);
	assert_int_equal(apply(&it, "model.mtl", "", 0, &out, &on, &err), LFS_ERR_UNSUPPORTED);
	assert_int_equal(apply(&it, "meshes/no such mesh.obj", "", 0, &out, &on, &err),
			 LFS_ERR_UNSUPPORTED);
	assert_int_equal(apply(&it, "anims/x/y.z.csv", "", 0, &out, &on, &err), LFS_ERR_UNSUPPORTED);
	assert_int_equal(apply(&it, "other.txt", "", 0, &out, &on, &err), LFS_ERR_UNSUPPORTED);
	assert_null(out);
	unload(&it);
}

/* ---- (e) hostile text ---------------------------------------------------------- */

static uint32_t rng(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 33);
}

static void mutate_and_apply(const item *it, const lfs_view *w, uint64_t *seed, size_t rounds,
			     size_t *ok, size_t *bad)
{
	static const char alphabet[] = "0123456789.-+e \n\t\r#/,xyz\0";
	for (size_t k = 0; k < rounds; k++) {
		size_t n = w->size;
		char *t = malloc(n + 64);
		memcpy(t, w->data, n);
		uint32_t kind = rng(seed) % 4;
		if (kind == 0 && n) { /* truncate */
			n = rng(seed) % n;
		} else if (kind == 1) { /* a few byte changes */
			for (int j = 0; j < 4 && n; j++)
				t[rng(seed) % n] = alphabet[rng(seed) % (sizeof(alphabet))];
		} else if (kind == 2 && n > 2) { /* delete a span */
			size_t s = rng(seed) % n, l = 1 + rng(seed) % 40;
			if (s + l > n)
				l = n - s;
			memmove(t + s, t + s + l, n - s - l);
			n -= l;
		} else if (n) { /* insert a number-ish token */
			size_t s = rng(seed) % n;
			const char *ins = (rng(seed) & 1) ? " 7" : "\n1e9 ";
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
	uint64_t seed = 0x5eed;
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
		cmocka_unit_test(test_structural_keys),
		cmocka_unit_test(test_structural_refused),
		cmocka_unit_test(test_error_messages),
		cmocka_unit_test(test_readonly_views),
		cmocka_unit_test(test_hostile_text),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
