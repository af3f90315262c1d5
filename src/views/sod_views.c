/**
 * @file sod_views.c
 * SOD views: detection, model.txt / OBJ / MTL / CSV generation and applying
 * an edited view (sod_views.h, docs/formats/sod.md).
 */
#include "../common/floatfmt.h"
#include "sod_views.h"

#include "mdltext.h"
#include "names.h"
#include "sod_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static lfs_err nomem(lfs_error *err)
{
	return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "SOD views", "out of memory building SOD views");
}

/* ---- names ---------------------------------------------------------------- */

/* Per node: the safe unique meshes/ name (NULL for non-mesh nodes); per
 * channel: the safe unique anims/ name. Owned by the two name sets. */
typedef struct sod_names {
	lfs_nameset meshes, anims;
	const char **node_obj;
	const char **chan_csv;
} sod_names;

static void names_free(sod_names *nm)
{
	lfs_nameset_free(&nm->meshes);
	lfs_nameset_free(&nm->anims);
	free(nm->node_obj);
	free(nm->chan_csv);
}

static bool names_build(const sod_model *m, sod_names *nm)
{
	memset(nm, 0, sizeof(*nm));
	lfs_nameset_init(&nm->meshes);
	lfs_nameset_init(&nm->anims);
	nm->node_obj = calloc(m->n_nodes + 1u, sizeof(char *));
	nm->chan_csv = calloc(m->n_channels + 1u, sizeof(char *));
	if (!nm->node_obj || !nm->chan_csv)
		return false;
	for (uint16_t i = 0; i < m->n_nodes; i++)
		if (m->nodes[i].type == SOD_MESH &&
		    !(nm->node_obj[i] = lfs_nameset_add(&nm->meshes, m->nodes[i].name.s ? m->nodes[i].name.s : "")))
			return false;
	for (uint16_t i = 0; i < m->n_channels; i++)
		if (!(nm->chan_csv[i] = lfs_nameset_add(&nm->anims, m->channels[i].node.s ? m->channels[i].node.s : "")))
			return false;
	return true;
}

/* ---- name lookup (sorted index) ------------------------------------------- */

typedef struct name_idx {
	const sod_str **key;
	uint32_t *idx;
	size_t n;
} name_idx;

static int str_cmp(const sod_str *a, const sod_str *b)
{
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->len ? memcmp(a->s, b->s, a->len) : 0;
}

/* Build an index over @p n names; lookups return the FIRST index with a name. */
static bool name_idx_build(name_idx *x, const sod_str **keys, size_t n)
{
	x->key = keys;
	x->n = n;
	x->idx = malloc((n + 1) * sizeof(uint32_t));
	if (!x->idx)
		return false;
	for (size_t i = 0; i < n; i++)
		x->idx[i] = (uint32_t)i;
	/* bottom-up merge sort (qsort has no context argument in C11) */
	uint32_t *tmp = malloc((n + 1) * sizeof(uint32_t));
	if (!tmp)
		return false;
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t a = lo, b = mid, o = lo;
			while (a < mid && b < hi) {
				int c = str_cmp(keys[x->idx[a]], keys[x->idx[b]]);
				tmp[o++] = (c < 0 || (c == 0 && x->idx[a] < x->idx[b])) ? x->idx[a++] : x->idx[b++];
			}
			while (a < mid)
				tmp[o++] = x->idx[a++];
			while (b < hi)
				tmp[o++] = x->idx[b++];
		}
		memcpy(x->idx, tmp, n * sizeof(uint32_t));
	}
	free(tmp);
	return true;
}

static long name_idx_find(const name_idx *x, const sod_str *s)
{
	size_t lo = 0, hi = x->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (str_cmp(x->key[x->idx[mid]], s) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < x->n && !str_cmp(x->key[x->idx[lo]], s))
		return (long)x->idx[lo];
	return -1;
}

/* ---- OBJ per mesh --------------------------------------------------------- */

/* Material names: "<texture>.<lighting material>" (spaces -> '_'), cut to
 * MTL_KEY_MAX - 1 bytes before the names.h rule is applied. */
#define MTL_KEY_MAX 1024

static void mtl_key(const sod_str *tex, const sod_str *lm, char *out, size_t outsz)
{
	snprintf(out, outsz, "%s%s%s", tex->len ? tex->s : "untextured", lm->len ? "." : "",
		 lm->len ? lm->s : "");
	for (char *p = out; *p; p++)
		if (*p == ' ' || *p == '\t')
			*p = '_';
}

static void mtl_name(const sod_str *tex, const sod_str *lm, char out[LFS_NAME_MAX_BASE + 1])
{
	char raw[MTL_KEY_MAX];
	mtl_key(tex, lm, raw, sizeof(raw));
	lfs_name_safe(raw, out);
}

lfs_err sod_obj_mesh(const sod_model *m, uint16_t idx, const char *obj_name, lfs_sb *sb,
		     lfs_error *err)
{
	const sod_node *nd = &m->nodes[idx];
	const sod_mesh *me = nd->mesh;
	if (nd->type != SOD_MESH || !me)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "SOD OBJ", "node %u is not a mesh", idx);
	size_t nf = 0;
	for (uint16_t g = 0; g < me->n_groups; g++)
		nf += me->groups[g].n_faces;
	lfs_sb_puts(sb, "# legacyfs: SOD mesh node ");
	lfs_sb_name(sb, nd->name.s, nd->name.len);
	lfs_sb_puts(sb, ", node-local coordinates (Y up, left-handed as stored)\n");
	lfs_sb_printf(sb, "# %u positions, %u texture coordinates, %u lighting groups, %zu faces\n",
		      me->n_verts, me->n_tverts, me->n_groups, nf);
	lfs_sb_puts(sb, "# one 'g' per lighting group in file order; f = position/texcoord\n");
	lfs_sb_puts(sb, "mtllib ../model.mtl\n");
	lfs_sb_printf(sb, "o %s\n", obj_name);
	for (uint16_t k = 0; k < me->n_verts; k++) {
		lfs_sb_puts(sb, "v ");
		lfs_sb_floats_bits(sb, me->verts + 3 * k, 3, ' ');
		lfs_sb_putc(sb, '\n');
	}
	for (uint16_t k = 0; k < me->n_tverts; k++) {
		lfs_sb_puts(sb, "vt ");
		lfs_sb_floats_bits(sb, me->tverts + 2 * k, 2, ' ');
		lfs_sb_putc(sb, '\n');
	}
	char mn[LFS_NAME_MAX_BASE + 1];
	for (uint16_t g = 0; g < me->n_groups; g++) {
		const sod_group *gr = &me->groups[g];
		lfs_sb_printf(sb, "g group%u\n# lighting material ", g);
		if (gr->material.len)
			lfs_sb_name(sb, gr->material.s, gr->material.len);
		else
			lfs_sb_puts(sb, "\"\"");
		lfs_sb_putc(sb, '\n');
		mtl_name(&me->texture, &gr->material, mn);
		lfs_sb_printf(sb, "usemtl %s\n", mn);
		for (uint16_t f = 0; f < gr->n_faces; f++) {
			const sod_face *fc = &gr->faces[f];
			lfs_sb_printf(sb, "f %u/%u %u/%u %u/%u\n", fc->v[0] + 1u, fc->t[0] + 1u,
				      fc->v[1] + 1u, fc->t[1] + 1u, fc->v[2] + 1u, fc->t[2] + 1u);
		}
	}
	if (!lfs_sb_ok(sb))
		return nomem(err);
	return LFS_OK;
}

/* ---- model space ---------------------------------------------------------- */

typedef struct xf {
	double r[3][3]; /* right, up, front rows */
	double p[3];
} xf;

static xf xf_of(const float *m)
{
	xf x;
	for (int i = 0; i < 3; i++) {
		for (int j = 0; j < 3; j++)
			x.r[i][j] = m[3 * i + j];
		x.p[i] = m[9 + i];
	}
	return x;
}

/* Local point -> parent space: p.x*right + p.y*up + p.z*front + position. */
static void xf_point(const xf *x, const double in[3], double out[3])
{
	for (int j = 0; j < 3; j++)
		out[j] = in[0] * x->r[0][j] + in[1] * x->r[1][j] + in[2] * x->r[2][j] + x->p[j];
}

/* child (local to parent) composed with parent (parent to model). */
static xf xf_mul(const xf *child, const xf *parent)
{
	xf o;
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			o.r[i][j] = child->r[i][0] * parent->r[0][j] + child->r[i][1] * parent->r[1][j] +
				    child->r[i][2] * parent->r[2][j];
	xf_point(parent, child->p, o.p);
	return o;
}

/* The scene graph: parent indices, pre-order, model transforms, and which
 * nodes model.obj shows (LOD rule). */
typedef struct graph {
	long *parent;
	uint32_t *order; /* pre-order of the nodes reachable from a root */
	size_t n_order;
	xf *world;
	bool *shown;
} graph;

static void graph_free(graph *g)
{
	free(g->parent);
	free(g->order);
	free(g->world);
	free(g->shown);
}

static bool graph_build(const sod_model *m, graph *g)
{
	size_t n = m->n_nodes;
	memset(g, 0, sizeof(*g));
	const sod_str **keys = malloc((n + 1) * sizeof(*keys));
	uint32_t *first = calloc(n + 1, sizeof(uint32_t)), *next = malloc((n + 1) * sizeof(uint32_t));
	uint64_t *faces = calloc(n + 1, sizeof(uint64_t));
	uint32_t *stack = malloc((n + 1) * sizeof(uint32_t));
	long *best = malloc((n + 1) * sizeof(long));
	g->parent = malloc((n + 1) * sizeof(long));
	g->order = malloc((n + 1) * sizeof(uint32_t));
	g->world = malloc((n + 1) * sizeof(xf));
	g->shown = calloc(n + 1, sizeof(bool));
	name_idx ix = { 0 };
	bool ok = keys && first && next && faces && stack && best && g->parent && g->order &&
		  g->world && g->shown;
	if (ok) {
		for (size_t i = 0; i < n; i++)
			keys[i] = &m->nodes[i].name;
		ok = name_idx_build(&ix, keys, n);
	}
	if (ok) {
		/* children lists in node order: first[] / next[] hold index + 1 */
		uint32_t *last = stack; /* reuse as scratch: last child + 1 */
		memset(last, 0, (n + 1) * sizeof(uint32_t));
		for (size_t i = 0; i < n; i++) {
			const sod_str *ps = &m->nodes[i].parent;
			long p = ps->len ? name_idx_find(&ix, ps) : -1;
			if (p == (long)i)
				p = -1;
			g->parent[i] = p;
			next[i] = 0;
			if (p >= 0) {
				if (last[p])
					next[last[p] - 1] = (uint32_t)i + 1;
				else
					first[p] = (uint32_t)i + 1;
				last[p] = (uint32_t)i + 1;
			}
		}
		/* iterative pre-order DFS from the roots */
		size_t sp = 0;
		for (size_t r = n; r-- > 0;)
			if (g->parent[r] < 0)
				stack[sp++] = (uint32_t)r;
		while (sp) {
			uint32_t v = stack[--sp];
			g->order[g->n_order++] = v;
			xf local = xf_of(m->nodes[v].m);
			g->world[v] = g->parent[v] < 0 ? local : xf_mul(&local, &g->world[g->parent[v]]);
			/* push children in reverse so they pop in node order */
			size_t base = sp;
			for (uint32_t c = first[v]; c; c = next[c - 1])
				stack[sp++] = c - 1;
			for (size_t a = base, b = sp; a + 1 < b; a++, b--) {
				uint32_t t = stack[a];
				stack[a] = stack[b - 1];
				stack[b - 1] = t;
			}
		}
		/* subtree face counts (reverse pre-order) */
		for (size_t k = g->n_order; k-- > 0;) {
			uint32_t v = g->order[k];
			const sod_node *nd = &m->nodes[v];
			if (nd->type == SOD_MESH && nd->mesh)
				for (uint16_t q = 0; q < nd->mesh->n_groups; q++)
					faces[v] += nd->mesh->groups[q].n_faces;
			if (g->parent[v] >= 0)
				faces[g->parent[v]] += faces[v];
		}
		/* LOD: each lodcontrol node keeps its child with the most faces */
		for (size_t i = 0; i < n; i++) {
			best[i] = -1;
			if (m->nodes[i].type != SOD_LOD)
				continue;
			for (uint32_t c = first[i]; c; c = next[c - 1])
				if (best[i] < 0 || faces[c - 1] > faces[best[i]])
					best[i] = (long)c - 1;
		}
		for (size_t k = 0; k < g->n_order; k++) {
			uint32_t v = g->order[k];
			long p = g->parent[v];
			g->shown[v] = p < 0 || (g->shown[p] && (m->nodes[p].type != SOD_LOD || best[p] == (long)v));
		}
	}
	free(ix.idx);
	free(keys);
	free(first);
	free(next);
	free(faces);
	free(stack);
	free(best);
	if (!ok)
		graph_free(g);
	return ok;
}

bool sod_model_space(const sod_model *m, double *world, bool *shown)
{
	graph g;
	if (!graph_build(m, &g))
		return false;
	for (size_t i = 0; i < m->n_nodes; i++)
		shown[i] = false;
	for (size_t k = 0; k < g.n_order; k++) {
		uint32_t v = g.order[k];
		shown[v] = g.shown[v];
		for (int r = 0; r < 3; r++)
			for (int c = 0; c < 3; c++)
				world[12 * (size_t)v + 3 * r + c] = g.world[v].r[r][c];
		for (int c = 0; c < 3; c++)
			world[12 * (size_t)v + 9 + c] = g.world[v].p[c];
	}
	graph_free(&g);
	return true;
}

static lfs_err write_mtl(const sod_model *m, const lfs_view_opts *opts, lfs_sb *sb, lfs_error *err)
{
	lfs_nameset seen;
	lfs_nameset_init(&seen);
	const sod_str **keys = malloc((m->n_materials + 1u) * sizeof(*keys));
	name_idx ix = { 0 };
	bool ok = keys != NULL;
	if (ok) {
		for (uint16_t i = 0; i < m->n_materials; i++)
			keys[i] = &m->materials[i].name;
		ok = name_idx_build(&ix, keys, m->n_materials);
	}
	lfs_sb_puts(sb, "# legacyfs: SOD materials: one per (texture, lighting material) pair\n");
	char raw[MTL_KEY_MAX];
	for (uint16_t i = 0; ok && i < m->n_nodes; i++) {
		const sod_node *nd = &m->nodes[i];
		if (nd->type != SOD_MESH || !nd->mesh)
			continue;
		const sod_mesh *me = nd->mesh;
		for (uint16_t g = 0; ok && g < me->n_groups; g++) {
			char mn[LFS_NAME_MAX_BASE + 1];
			mtl_key(&me->texture, &me->groups[g].material, raw, sizeof(raw));
			lfs_name_safe(raw, mn);
			if (lfs_nameset_has(&seen, mn))
				continue;
			if (!lfs_nameset_add(&seen, raw)) {
				ok = false;
				break;
			}
			long li = name_idx_find(&ix, &me->groups[g].material);
			lfs_sb_printf(sb, "newmtl %s\n", mn);
			if (li >= 0) {
				const sod_material *mt = &m->materials[li];
				lfs_sb_puts(sb, "Ka ");
				lfs_sb_floats_bits(sb, mt->ambient, 3, ' ');
				lfs_sb_puts(sb, "\nKd ");
				lfs_sb_floats_bits(sb, mt->diffuse, 3, ' ');
				lfs_sb_puts(sb, "\nKs ");
				lfs_sb_floats_bits(sb, mt->specular, 3, ' ');
				lfs_sb_puts(sb, "\nNs ");
				lfs_sb_float_bits(sb, mt->specular_power);
				lfs_sb_printf(sb, "\nillum %u\n", mt->lighting_model > 2 ? 2u : mt->lighting_model);
			} else {
				lfs_sb_puts(sb, "Kd 1 1 1\nillum 1\n");
			}
			lfs_sb_puts(sb, "d 1\n");
			char path[4096];
			if (me->texture.len && opts && opts->texture_lookup &&
			    opts->texture_lookup(opts->texture_ctx, me->texture.s, path, sizeof(path)))
				lfs_sb_printf(sb, "map_Kd %s\n", path);
		}
	}
	free(ix.idx);
	free(keys);
	lfs_nameset_free(&seen);
	if (!ok || !lfs_sb_ok(sb))
		return nomem(err);
	return LFS_OK;
}

static lfs_err write_model_obj(const sod_model *m, const sod_names *nm, lfs_sb *sb, lfs_error *err)
{
	graph g;
	if (!graph_build(m, &g))
		return nomem(err);
	lfs_sb_puts(sb, "# legacyfs: SOD mesh nodes in model space (node transforms applied;\n"
			"# Y up, left-handed as stored); under each lodcontrol node only the\n"
			"# child subtree with the most faces (the highest detail LOD)\n"
			"mtllib model.mtl\n");
	size_t vbase = 1, tbase = 1, skipped = 0;
	char mn[LFS_NAME_MAX_BASE + 1];
	for (size_t k = 0; k < g.n_order; k++) {
		uint32_t i = g.order[k];
		const sod_node *nd = &m->nodes[i];
		if (nd->type != SOD_MESH || !nd->mesh || !g.shown[i])
			continue;
		const sod_mesh *me = nd->mesh;
		lfs_sb_printf(sb, "o %s\n", nm->node_obj[i]);
		for (uint16_t v = 0; v < me->n_verts; v++) {
			double in[3] = { me->verts[3 * v], me->verts[3 * v + 1], me->verts[3 * v + 2] }, o[3];
			xf_point(&g.world[i], in, o);
			float f[3] = { (float)o[0], (float)o[1], (float)o[2] };
			lfs_sb_puts(sb, "v ");
			lfs_sb_floats_bits(sb, f, 3, ' ');
			lfs_sb_putc(sb, '\n');
		}
		for (uint16_t t = 0; t < me->n_tverts; t++) {
			lfs_sb_puts(sb, "vt ");
			lfs_sb_floats_bits(sb, me->tverts + 2 * t, 2, ' ');
			lfs_sb_putc(sb, '\n');
		}
		for (uint16_t q = 0; q < me->n_groups; q++) {
			const sod_group *gr = &me->groups[q];
			mtl_name(&me->texture, &gr->material, mn);
			lfs_sb_printf(sb, "usemtl %s\n", mn);
			for (uint16_t f = 0; f < gr->n_faces; f++) {
				const sod_face *fc = &gr->faces[f];
				bool bad = false;
				for (int c = 0; c < 3; c++)
					bad |= fc->v[c] >= me->n_verts || fc->t[c] >= me->n_tverts;
				if (bad) {
					skipped++;
					continue;
				}
				lfs_sb_printf(sb, "f %zu/%zu %zu/%zu %zu/%zu\n", vbase + fc->v[0],
					      tbase + fc->t[0], vbase + fc->v[1], tbase + fc->t[1],
					      vbase + fc->v[2], tbase + fc->t[2]);
			}
		}
		vbase += me->n_verts;
		tbase += me->n_tverts;
	}
	if (skipped)
		lfs_sb_printf(sb, "# %zu faces left out: index outside the position/texcoord lists\n", skipped);
	graph_free(&g);
	if (!lfs_sb_ok(sb))
		return nomem(err);
	return LFS_OK;
}

/* ---- CSV ------------------------------------------------------------------ */

static const char csv_matrix_header[] =
	"key,time,right_x,right_y,right_z,up_x,up_y,up_z,front_x,front_y,front_z,"
	"position_x,position_y,position_z";
static const char csv_scale_header[] = "key,time,scale";

float sod_key_time(const sod_channel *c, uint32_t k)
{
	if (!c->n_keys)
		return 0.0f;
	return (float)((double)k * (double)c->period / (double)c->n_keys);
}

lfs_err sod_csv_channel(const sod_model *m, uint16_t idx, lfs_sb *sb, lfs_error *err)
{
	const sod_channel *c = &m->channels[idx];
	size_t w = c->type == SOD_CHAN_MATRIX ? 12 : 1;
	lfs_sb_puts(sb, c->type == SOD_CHAN_MATRIX ? csv_matrix_header : csv_scale_header);
	lfs_sb_puts(sb, "\r\n");
	for (uint32_t k = 0; k < c->n_keys; k++) {
		lfs_sb_printf(sb, "%u,", k);
		lfs_sb_float_bits(sb, sod_key_time(c, k));
		lfs_sb_putc(sb, ',');
		lfs_sb_floats_bits(sb, c->keys + w * k, w, ',');
		lfs_sb_puts(sb, "\r\n");
	}
	if (!lfs_sb_ok(sb))
		return nomem(err);
	return LFS_OK;
}

/* Parse an edited CSV into new keys of channel @p c (arena of @p m). */
static lfs_err csv_apply(sod_model *m, sod_channel *c, const char *file, const char *text,
			 size_t n, lfs_error *err)
{
	const char *hdr = c->type == SOD_CHAN_MATRIX ? csv_matrix_header : csv_scale_header;
	size_t w = c->type == SOD_CHAN_MATRIX ? 12 : 1, cols = w + 2;
	const char *p = text, *end = text + n;
	unsigned line = 0;
	size_t rows = 0, cap = 0;
	float *keys = NULL;
	lfs_err e = LFS_OK;
	bool have_header = false;
	while (p < end && !e) {
		const char *le = memchr(p, '\n', (size_t)(end - p));
		const char *next = le ? le + 1 : end;
		if (!le)
			le = end;
		const char *ls = p;
		p = next;
		line++;
		const char *lend = le;
		if (lend > ls && lend[-1] == '\r')
			lend--;
		if (lend == ls)
			continue; /* blank line */
		if (!have_header) {
			if ((size_t)(lend - ls) != strlen(hdr) || memcmp(ls, hdr, strlen(hdr)))
				e = lfs_fail_at(err, file, line, 1, "expected the header '%s'", hdr);
			have_header = true;
			continue;
		}
		if (rows == UINT16_MAX) {
			e = lfs_fail_at(err, file, line, 1, "more than 65535 keys");
			break;
		}
		if (rows == cap) {
			size_t nc = cap ? cap * 2 : 64;
			float *nk = realloc(keys, nc * w * sizeof(float));
			if (!nk) {
				e = nomem(err);
				break;
			}
			keys = nk;
			cap = nc;
		}
		const char *f = ls;
		for (size_t col = 0; col < cols && !e; col++) {
			const char *fe = memchr(f, ',', (size_t)(lend - f));
			if (!fe)
				fe = lend;
			unsigned cno = (unsigned)(f - ls) + 1;
			if (col + 1 < cols && fe == lend) {
				e = lfs_fail_at(err, file, line, (unsigned)(lend - ls) + 1,
						"expected %zu fields, found %zu", cols, col + 1);
				break;
			}
			if (col + 1 == cols && fe != lend) {
				e = lfs_fail_at(err, file, line, (unsigned)(fe - ls) + 1,
						"expected %zu fields, found more", cols);
				break;
			}
			if (col == 0) {
				char buf[16];
				size_t len = (size_t)(fe - f);
				unsigned long k = 0;
				bool ok = len > 0 && len < sizeof(buf);
				for (size_t q = 0; ok && q < len; q++) {
					ok = f[q] >= '0' && f[q] <= '9';
					k = k * 10 + (unsigned long)(f[q] - '0');
				}
				if (!ok || k != rows)
					e = lfs_fail_at(err, file, line, cno,
							"key must be the row number %zu (keys are evenly spaced; "
							"rows cannot be reordered)",
							rows);
			} else {
				float v;
				if (!lfs_parse_float_bits(f, (size_t)(fe - f), &v))
					e = lfs_fail_at(err, file, line, cno, "expected a number, found '%.*s'",
							(int)((fe - f) > 40 ? 40 : (fe - f)), f);
				else if (col >= 2)
					keys[rows * w + col - 2] = v;
				/* col 1 (time) is derived from the period and ignored */
			}
			f = fe + 1;
		}
		if (!e)
			rows++;
	}
	if (!e && !have_header)
		e = lfs_fail_at(err, file, 1, 1, "expected the header '%s'", hdr);
	if (!e) {
		c->n_keys = (uint16_t)rows;
		c->keys = sod_alloc(m, rows * w * sizeof(float) + 1);
		if (!c->keys)
			e = nomem(err);
		else if (rows)
			memcpy(c->keys, keys, rows * w * sizeof(float));
	}
	free(keys);
	return e;
}

/* ---- OBJ apply ------------------------------------------------------------ */

static lfs_err obj_index(lfs_lex *lx, const lfs_line *ln, uint32_t ti, const char *s, size_t len,
			 size_t count, uint16_t *out)
{
	char buf[24];
	if (len == 0 || len >= sizeof(buf))
		return lfs_lex_fail(lx, ln, ti, "bad index in face corner");
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *e;
	long long v = strtoll(buf, &e, 10);
	if (*e)
		return lfs_lex_fail(lx, ln, ti, "bad index '%s' in face corner", buf);
	if (v < 0)
		v = (long long)count + v + 1; /* relative index */
	if (v < 1 || v > 65536)
		return lfs_lex_fail(lx, ln, ti, "index '%s' out of range (1..65536, or a valid negative index)",
				    buf);
	*out = (uint16_t)(v - 1);
	return LFS_OK;
}

static lfs_err obj_apply(sod_model *m, sod_mesh *me, const char *file, const char *text, size_t n,
			 lfs_error *err)
{
	lfs_lex lx;
	lfs_lex_init(&lx, file, text, n, err);
	size_t nv = 0, nt = 0, cv = 0, ct = 0;
	float *v = NULL, *t = NULL;
	long grp = -1;
	sod_face **faces = calloc(me->n_groups + 1u, sizeof(sod_face *));
	size_t *nf = calloc(me->n_groups + 1u, sizeof(size_t)), *cf = calloc(me->n_groups + 1u, sizeof(size_t));
	lfs_err e = faces && nf && cf ? LFS_OK : nomem(err);
	lfs_line ln;
	int r = 0;
	while (!e && (r = lfs_lex_next(&lx, &ln)) == 1) {
		const lfs_tok *k = &ln.tok[0];
		if (lfs_tok_is(k, "v") || lfs_tok_is(k, "vt")) {
			bool isv = k->len == 1;
			size_t w = isv ? 3 : 2;
			size_t *cnt = isv ? &nv : &nt, *cap = isv ? &cv : &ct;
			float **arr = isv ? &v : &t;
			if ((e = lfs_lex_arity(&lx, &ln, (uint32_t)w, "numbers")))
				break;
			if (*cnt == UINT16_MAX) {
				e = lfs_lex_fail(&lx, &ln, 0, "more than 65535 %s lines", isv ? "v" : "vt");
				break;
			}
			if (*cnt == *cap) {
				size_t ncap = *cap ? *cap * 2 : 256;
				float *na = realloc(*arr, ncap * w * sizeof(float));
				if (!na) {
					e = nomem(err);
					break;
				}
				*arr = na;
				*cap = ncap;
			}
			for (size_t q = 0; q < w && !e; q++)
				e = lfs_lex_f32(&lx, &ln, 1 + (uint32_t)q, &(*arr)[*cnt * w + q]);
			(*cnt)++;
		} else if (lfs_tok_is(k, "g")) {
			if (grp + 1 >= (long)me->n_groups) {
				e = lfs_lex_fail(&lx, &ln, 0,
						 "more 'g' groups than the mesh's %u lighting groups (add "
						 "lighting groups in model.txt)",
						 me->n_groups);
				break;
			}
			grp++;
		} else if (lfs_tok_is(k, "f")) {
			if (grp < 0) {
				e = lfs_lex_fail(&lx, &ln, 0, "face before the first 'g' line");
				break;
			}
			if (ln.ntok != 4) {
				e = lfs_lex_fail(&lx, &ln, ln.ntok < 4 ? ln.ntok : 4,
						 "SOD faces are triangles: expected 3 corners, found %u",
						 ln.ntok - 1);
				break;
			}
			if (nf[grp] == UINT16_MAX) {
				e = lfs_lex_fail(&lx, &ln, 0, "more than 65535 faces in one group");
				break;
			}
			if (nf[grp] == cf[grp]) {
				size_t ncap = cf[grp] ? cf[grp] * 2 : 64;
				sod_face *nfc = realloc(faces[grp], ncap * sizeof(sod_face));
				if (!nfc) {
					e = nomem(err);
					break;
				}
				faces[grp] = nfc;
				cf[grp] = ncap;
			}
			sod_face *fc = &faces[grp][nf[grp]];
			for (uint32_t c = 0; c < 3 && !e; c++) {
				const lfs_tok *tk = &ln.tok[c + 1];
				const char *sl = memchr(tk->s, '/', tk->len);
				if (!sl) {
					e = lfs_lex_fail(&lx, &ln, c + 1,
							 "face corner needs position/texcoord indices (v/vt)");
					break;
				}
				size_t la = (size_t)(sl - tk->s);
				const char *b = sl + 1;
				const char *sl2 = memchr(b, '/', tk->len - la - 1);
				size_t lb = sl2 ? (size_t)(sl2 - b) : tk->len - la - 1;
				e = obj_index(&lx, &ln, c + 1, tk->s, la, nv, &fc->v[c]);
				if (!e)
					e = obj_index(&lx, &ln, c + 1, b, lb, nt, &fc->t[c]);
			}
			nf[grp]++;
		} else if (lfs_tok_is(k, "o") || lfs_tok_is(k, "mtllib") || lfs_tok_is(k, "usemtl") ||
			   lfs_tok_is(k, "s") || lfs_tok_is(k, "vn")) {
			/* not part of the SOD mesh: ignored */
		} else {
			e = lfs_lex_fail(&lx, &ln, 0, "unsupported OBJ statement '%.*s'",
					 (int)(k->len > 40 ? 40 : k->len), k->s);
		}
	}
	if (!e && r < 0)
		e = LFS_ERR_PARSE;
	if (!e && grp + 1 != (long)me->n_groups)
		e = lfs_fail_at(err, file, lx.line ? lx.line : 1, 1,
				"the file has %ld 'g' groups, the mesh has %u lighting groups (change "
				"the group list in model.txt)",
				grp + 1, me->n_groups);
	if (!e) {
		float *nvp = sod_alloc(m, nv * 12 + 1), *ntp = sod_alloc(m, nt * 8 + 1);
		if (!nvp || !ntp)
			e = nomem(err);
		for (uint16_t g = 0; !e && g < me->n_groups; g++) {
			sod_face *fa = sod_alloc(m, nf[g] * sizeof(sod_face) + 1);
			if (!fa) {
				e = nomem(err);
				break;
			}
			if (nf[g])
				memcpy(fa, faces[g], nf[g] * sizeof(sod_face));
			me->groups[g].faces = fa;
			me->groups[g].n_faces = (uint16_t)nf[g];
		}
		if (!e) {
			if (nv)
				memcpy(nvp, v, nv * 12);
			if (nt)
				memcpy(ntp, t, nt * 8);
			me->verts = nvp;
			me->tverts = ntp;
			me->n_verts = (uint16_t)nv;
			me->n_tverts = (uint16_t)nt;
		}
	}
	if (faces)
		for (uint16_t g = 0; g < me->n_groups; g++)
			free(faces[g]);
	free(faces);
	free(nf);
	free(cf);
	free(v);
	free(t);
	return e;
}

/* ---- builder and apply ---------------------------------------------------- */

static lfs_err sod_views(const uint8_t *data, size_t n, const lfs_view_opts *opts,
			 lfs_vlist *l, lfs_error *err)
{
	sod_model *m;
	lfs_err e = sod_decode(data, n, &m, err);
	if (e)
		return e;
	sod_names nm;
	lfs_sb sb = { 0 };
	char path[LFS_NAME_MAX_BASE + 64];
	if (!names_build(m, &nm)) {
		e = nomem(err);
		goto out;
	}
	if ((e = sod_text_write(m, &sb, err)))
		goto out;
	lfs_vlist_add(l, "model.txt", LFS_VIEW_TEXT, LFS_VIEW_WHOLE, true, &sb);
	if ((e = write_mtl(m, opts, &sb, err)))
		goto out;
	/* model.mtl and model.obj bake node transforms and the LOD choice in:
	 * no exact way back. */
	lfs_vlist_add(l, "model.mtl", LFS_VIEW_MATERIALS, LFS_VIEW_WHOLE, false, &sb);
	if ((e = write_model_obj(m, &nm, &sb, err)))
		goto out;
	lfs_vlist_add(l, "model.obj", LFS_VIEW_MODEL_OBJ, LFS_VIEW_WHOLE, false, &sb);
	for (uint16_t i = 0; i < m->n_nodes; i++) {
		if (!nm.node_obj[i])
			continue;
		if ((e = sod_obj_mesh(m, i, nm.node_obj[i], &sb, err)))
			goto out;
		snprintf(path, sizeof(path), "meshes/%s.obj", nm.node_obj[i]);
		lfs_vlist_add(l, path, LFS_VIEW_MESH_OBJ,
			      (lfs_view_target){ LFS_VIEW_NONE, i, LFS_VIEW_NONE }, true, &sb);
	}
	for (uint16_t i = 0; i < m->n_channels; i++) {
		if ((e = sod_csv_channel(m, i, &sb, err)))
			goto out;
		snprintf(path, sizeof(path), "anims/%s.csv", nm.chan_csv[i]);
		lfs_vlist_add(l, path, LFS_VIEW_TRACK_CSV,
			      (lfs_view_target){ LFS_VIEW_NONE, i, LFS_VIEW_NONE }, true, &sb);
	}
	if (l->failed)
		e = nomem(err);
out:
	lfs_sb_free(&sb);
	names_free(&nm);
	sod_model_free(m);
	return e;
}

static lfs_err sod_apply_view(const uint8_t *orig, size_t n, const lfs_view *v, const char *text,
			      size_t tn, const lfs_siblings *sib, uint8_t **out, size_t *outn,
			      lfs_error *err)
{
	(void)sib;
	*out = NULL;
	*outn = 0;
	const char *viewpath = v->path;
	sod_model *m = NULL;
	lfs_err e;
	if (v->kind == LFS_VIEW_TEXT) {
		e = sod_text_parse(viewpath, text, tn, &m, err);
		if (!e)
			e = sod_encode(m, out, outn, err);
		sod_model_free(m);
		return e;
	}
	e = sod_decode(orig, n, &m, err);
	if (e)
		return e;
	uint32_t i = v->target.node;
	if (v->kind == LFS_VIEW_MESH_OBJ && i < m->n_nodes && m->nodes[i].mesh)
		e = obj_apply(m, m->nodes[i].mesh, viewpath, text, tn, err);
	else if (v->kind == LFS_VIEW_TRACK_CSV && i < m->n_channels)
		e = csv_apply(m, &m->channels[i], viewpath, text, tn, err);
	else
		e = lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, viewpath,
			     "read-only view (derived; edit meshes/*.obj or model.txt instead)");
	if (!e)
		e = sod_encode(m, out, outn, err);
	sod_model_free(m);
	return e;
}

static lfs_err sod_decode_any(const uint8_t *data, size_t n, void **model, lfs_error *err)
{
	sod_model *m = NULL;
	lfs_err r = sod_decode(data, n, &m, err);
	*model = m;
	return r;
}

static lfs_err sod_encode_any(const void *model, uint8_t **out, size_t *n, lfs_error *err)
{
	return sod_encode(model, out, n, err);
}

static void sod_free_any(void *model)
{
	sod_model_free(model);
}

static const char *const sod_extensions[] = { ".sod", NULL };

const lfs_format lfs_format_sod = {
	.name = "sod",
	.extensions = sod_extensions,
	.detect = sod_is_binary,
	.decode = sod_decode_any,
	.encode = sod_encode_any,
	.free_model = sod_free_any,
	.build_views = sod_views,
	.apply = sod_apply_view,
	.thumb_scene = sod_thumb_scene,
};
