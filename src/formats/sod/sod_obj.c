/**
 * @file sod_obj.c
 * SOD OBJ and MTL views (docs/formats/sod.md): meshes/<node>.obj (node-local),
 * model.obj (model space: the node transforms composed down the scene graph,
 * one LOD per lodcontrol node) and model.mtl, and applying an edited
 * meshes/<node>.obj. The OBJ syntax is obj.h's: lfs_obj_write_* and
 * lfs_obj_read() with SOD's rules (triangles, v/vt corners, no normals).
 */
#include "sod_views.h"

#include "common/mem.h"
#include "text/mdltext.h"
#include "registry/names.h"
#include "text/obj.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	lfs_obj_write_stmt(sb, "mtllib", "../model.mtl");
	lfs_obj_write_stmt(sb, "o", obj_name);
	for (uint16_t k = 0; k < me->n_verts; k++)
		lfs_obj_write_v(sb, me->verts + 3 * k);
	for (uint16_t k = 0; k < me->n_tverts; k++)
		lfs_obj_write_vt(sb, me->tverts[2 * k], me->tverts[2 * k + 1]);
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
		lfs_obj_write_stmt(sb, "usemtl", mn);
		for (uint16_t f = 0; f < gr->n_faces; f++) {
			const sod_face *fc = &gr->faces[f];
			size_t v[3] = { fc->v[0], fc->v[1], fc->v[2] };
			size_t t[3] = { fc->t[0], fc->t[1], fc->t[2] };
			lfs_obj_write_f(sb, 3, v, t, NULL);
		}
	}
	if (!lfs_sb_ok(sb))
		return lfs_nomem(err, "SOD views");
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

lfs_err sod_mtl_write(const sod_model *m, const lfs_view_opts *opts, lfs_sb *sb, lfs_error *err)
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
		return lfs_nomem(err, "SOD views");
	return LFS_OK;
}

lfs_err sod_obj_model_write(const sod_model *m, const char *const *node_obj, lfs_sb *sb,
			    lfs_error *err)
{
	graph g;
	if (!graph_build(m, &g))
		return lfs_nomem(err, "SOD views");
	lfs_sb_puts(sb, "# legacyfs: SOD mesh nodes in model space (node transforms applied;\n"
			"# Y up, left-handed as stored); under each lodcontrol node only the\n"
			"# child subtree with the most faces (the highest detail LOD)\n"
			"mtllib model.mtl\n");
	size_t vbase = 0, tbase = 0, skipped = 0;
	char mn[LFS_NAME_MAX_BASE + 1];
	for (size_t k = 0; k < g.n_order; k++) {
		uint32_t i = g.order[k];
		const sod_node *nd = &m->nodes[i];
		if (nd->type != SOD_MESH || !nd->mesh || !g.shown[i])
			continue;
		const sod_mesh *me = nd->mesh;
		lfs_obj_write_stmt(sb, "o", node_obj[i]);
		for (uint16_t v = 0; v < me->n_verts; v++) {
			double in[3] = { me->verts[3 * v], me->verts[3 * v + 1], me->verts[3 * v + 2] }, o[3];
			xf_point(&g.world[i], in, o);
			float f[3] = { (float)o[0], (float)o[1], (float)o[2] };
			lfs_obj_write_v(sb, f);
		}
		for (uint16_t t = 0; t < me->n_tverts; t++)
			lfs_obj_write_vt(sb, me->tverts[2 * t], me->tverts[2 * t + 1]);
		for (uint16_t q = 0; q < me->n_groups; q++) {
			const sod_group *gr = &me->groups[q];
			mtl_name(&me->texture, &gr->material, mn);
			lfs_obj_write_stmt(sb, "usemtl", mn);
			for (uint16_t f = 0; f < gr->n_faces; f++) {
				const sod_face *fc = &gr->faces[f];
				bool bad = false;
				for (int c = 0; c < 3; c++)
					bad |= fc->v[c] >= me->n_verts || fc->t[c] >= me->n_tverts;
				if (bad) {
					skipped++;
					continue;
				}
				size_t v[3] = { vbase + fc->v[0], vbase + fc->v[1], vbase + fc->v[2] };
				size_t t[3] = { tbase + fc->t[0], tbase + fc->t[1], tbase + fc->t[2] };
				lfs_obj_write_f(sb, 3, v, t, NULL);
			}
		}
		vbase += me->n_verts;
		tbase += me->n_tverts;
	}
	if (skipped)
		lfs_sb_printf(sb, "# %zu faces left out: index outside the position/texcoord lists\n", skipped);
	graph_free(&g);
	if (!lfs_sb_ok(sb))
		return lfs_nomem(err, "SOD views");
	return LFS_OK;
}

/* ---- OBJ apply: lfs_obj_read() with SOD's rules ----------------------------- */

typedef struct obj_check {
	uint16_t n_groups;
	long grp;	   /* current lighting group, -1 before the first `g` */
	size_t faces;	   /* faces of the current group so far */
	uint32_t fline, fcol; /* the first face before any `g` (line 0: none) */
} obj_check;

/* Line by line (so the first error in the file is the one reported): list
 * lengths, one `g` per lighting group, no face before the first of them
 * (a file without `g` lines is another program's: its faces pair with the
 * stored ones, sod_obj_apply()). */
static lfs_err obj_check_line(void *ctx, const lfs_obj *o, lfs_obj_kind kind,
			      const lfs_obj_where *at, lfs_error *err)
{
	obj_check *ck = ctx;
	if ((kind == LFS_OBJ_V && o->nv == UINT16_MAX) || (kind == LFS_OBJ_VT && o->nt == UINT16_MAX))
		return lfs_fail_at(err, at->file, at->line, at->col, "more than 65535 %s lines",
				   kind == LFS_OBJ_V ? "v" : "vt");
	if (kind == LFS_OBJ_G) {
		if (ck->fline)
			return lfs_fail_at(err, at->file, ck->fline, ck->fcol,
					   "face before the first 'g' line");
		if (ck->grp + 1 >= (long)ck->n_groups)
			return lfs_fail_at(err, at->file, at->line, at->col,
					   "more 'g' groups than the mesh's %u lighting groups (add "
					   "lighting groups in model.txt)",
					   ck->n_groups);
		ck->grp++;
		ck->faces = 0;
	} else if (kind == LFS_OBJ_F) {
		if (ck->grp < 0 && !ck->fline)
			ck->fline = at->line, ck->fcol = at->col;
		if (ck->faces == UINT16_MAX)
			return lfs_fail_at(err, at->file, at->line, at->col,
					   "more than 65535 faces in one group");
		ck->faces++;
	}
	return LFS_OK;
}


/* Faces [f0, f1) of @p d (one lighting group) copied into the arena of @p m;
 * texture indices from @p ct (one per corner of all faces of @p d) when not
 * NULL, else as written. */
static sod_face *group_faces(sod_model *m, const lfs_obj *d, size_t f0, size_t f1,
			     const uint32_t *ct)
{
	sod_face *fa = sod_alloc(m, (f1 - f0) * sizeof(sod_face) + 1);
	for (size_t i = f0; fa && i < f1; i++)
		for (int k = 0; k < 3; k++) {
			const lfs_obj_corner *c = &d->c[d->f[i].first + (size_t)k];
			fa[i - f0].v[k] = (uint16_t)c->v; /* < 65536: max_index */
			/* present: LFS_OBJ_NEED_VT; < 65536: max_index or the weld */
			fa[i - f0].t[k] = (uint16_t)(ct ? ct[3 * i + (size_t)k] : (uint32_t)c->t);
		}
	return fa;
}

/* Blender's OBJ exporter writes the texture coordinates of one vertex that
 * differ by less than this in u and in v as one `vt` (the first of them):
 * its UV vertex map's STD_UV_CONNECT_LIMIT. */
#define UV_MERGE 1e-4

/*
 * Texture coordinates of a file without `g` lines (another program's, which
 * re-numbers `vt`): each corner is welded to the stored texture coordinate
 * of the stored face at its place (@p paired: OBJ face i is stored face i
 * in group order; else none) when it states its u and v or those of another
 * stored one less than UV_MERGE away from it, else to any stored one it
 * states. A corner that states none edits the coordinate at its place
 * (when no other corner keeps it and the corners editing it agree), else
 * adds one. Writes the list to *@p out (@p *nt of them) and each corner's
 * index to @p ct.
 */
static lfs_err weld_tverts(sod_model *m, const sod_mesh *me, const lfs_obj *d, bool paired,
			   const char *file, uint32_t *ct, float **out, size_t *nt, lfs_error *err)
{
	size_t n0 = me->n_tverts, cap = n0 + 3 * d->nf + 1, n = n0;
	float *l = malloc(cap * 2 * sizeof(float));
	uint8_t *st = calloc(n0 + 1, 1); /* 1 kept by a corner, 2 edited */
	uint32_t *place = malloc((3 * d->nf + 1) * sizeof(uint32_t));
	lfs_err e = LFS_OK;
	if (!l || !st || !place) {
		e = lfs_nomem(err, "SOD views");
		goto out;
	}
	if (n0)
		memcpy(l, me->tverts, n0 * 2 * sizeof(float));
	/* the stored texture index at each corner's place */
	size_t fi = 0;
	for (uint16_t g = 0; g < me->n_groups; g++)
		for (uint16_t f = 0; f < me->groups[g].n_faces; f++, fi++)
			for (int k = 0; k < 3 && paired && fi < d->nf; k++)
				place[3 * fi + (size_t)k] = me->groups[g].faces[f].t[k];
	for (size_t i = 0; i < 3 * d->nf; i++) {
		if (!paired || i >= 3 * fi || place[i] >= n0)
			place[i] = UINT32_MAX;
		ct[i] = UINT32_MAX;
	}
	/* corners that state the coordinate at their place, or one that differs
	 * from it by less than UV_MERGE in u and v */
	for (size_t i = 0; i < 3 * d->nf; i++) {
		const lfs_obj_corner *c = &d->c[d->f[i / 3].first + i % 3];
		const lfs_obj_num *num = d->vt_num + 2 * (size_t)c->t;
		uint32_t p = place[i];
		if (p == UINT32_MAX)
			continue;
		const float *tp = me->tverts + 2 * (size_t)p;
		bool keep = lfs_obj_vec_keeps(num, tp, 2) == 3;
		for (size_t j = 0; j < n0 && !keep; j++) {
			const float *tj = me->tverts + 2 * j;
			keep = fabs((double)tj[0] - tp[0]) < UV_MERGE &&
			       fabs((double)tj[1] - tp[1]) < UV_MERGE && lfs_obj_vec_keeps(num, tj, 2) == 3;
		}
		if (keep)
			ct[i] = p, st[p] = 1;
	}
	for (size_t i = 0; i < 3 * d->nf && !e; i++) {
		if (ct[i] != UINT32_MAX)
			continue;
		const lfs_obj_corner *c = &d->c[d->f[i / 3].first + i % 3];
		const lfs_obj_num *num = d->vt_num + 2 * (size_t)c->t;
		for (size_t j = 0; j < n0 && ct[i] == UINT32_MAX; j++)
			if (fabs(num[0].value - (double)me->tverts[2 * j]) <= 0.5 &&
			    lfs_obj_vec_keeps(num, me->tverts + 2 * j, 2) == 3)
				ct[i] = (uint32_t)j;
		if (ct[i] != UINT32_MAX)
			continue;
		uint32_t p = place[i];
		float val[2];
		unsigned mk = p != UINT32_MAX ? lfs_obj_vec_keeps(num, me->tverts + 2 * (size_t)p, 2) : 0;
		for (int k = 0; k < 2; k++)
			val[k] = (mk >> k) & 1 ? me->tverts[2 * (size_t)p + (size_t)k] : d->vt[c->t][k];
		if (p != UINT32_MAX && st[p] == 0) {
			memcpy(l + 2 * (size_t)p, val, sizeof(val));
			st[p] = 2;
			ct[i] = p;
		} else if (p != UINT32_MAX && st[p] == 2 && !memcmp(l + 2 * (size_t)p, val, sizeof(val))) {
			ct[i] = p;
		} else if (n == UINT16_MAX) {
			e = lfs_fail_at(err, file, d->f[i / 3].line, c->col,
					"more than 65535 texture coordinates");
		} else {
			memcpy(l + 2 * n, val, sizeof(val));
			ct[i] = (uint32_t)n++;
		}
	}
	if (!e) {
		*out = sod_alloc(m, n * 8 + 1);
		if (!*out)
			e = lfs_nomem(err, "SOD views");
		else if (n)
			memcpy(*out, l, n * 8);
		*nt = n;
	}
out:
	free(l);
	free(st);
	free(place);
	return e;
}

lfs_err sod_obj_apply(sod_model *m, sod_mesh *me, const char *file, const char *text, size_t n,
		      lfs_error *err)
{
	obj_check ck = { me->n_groups, -1, 0, 0, 0 };
	lfs_obj_rules rules = { .flags = LFS_OBJ_STRICT | LFS_OBJ_NO_VN | LFS_OBJ_NEED_VT |
					  LFS_OBJ_NUMS,
				.triangles = "SOD",
				.max_index = 65536,
				.check = obj_check_line,
				.ctx = &ck };
	lfs_obj d;
	uint32_t *ct = NULL;
	lfs_err e = lfs_obj_read(file, text, n, &rules, &d, err);
	/* indices may point forward (no LFS_OBJ_DEFINED_ABOVE) but must exist */
	for (size_t i = 0; !e && i < d.nf; i++)
		for (uint32_t k = 0; !e && k < d.f[i].n; k++) {
			const lfs_obj_corner *c = &d.c[d.f[i].first + k];
			if (c->v < 0 || (size_t)c->v >= d.nv)
				e = lfs_fail_at(err, file, d.f[i].line, c->col,
						"vertex index %lld out of range (1..%zu)",
						(long long)c->v + 1, d.nv);
			else if (c->t < 0 || (size_t)c->t >= d.nt)
				e = lfs_fail_at(err, file, d.f[i].line, c->col,
						"texture coordinate index %lld out of range (1..%zu)",
						(long long)c->t + 1, d.nt);
		}
	if (!e && ck.fline && me->n_groups == 0)
		e = lfs_fail_at(err, file, ck.fline, ck.fcol, "face before the first 'g' line");
	/* no `g` line: faces pair with the stored faces in order */
	bool no_g = !e && ck.grp < 0 && me->n_groups > 0;
	size_t stored_nf = 0;
	for (uint16_t g = 0; g < me->n_groups; g++)
		stored_nf += me->groups[g].n_faces;
	bool paired = no_g && d.nf == stored_nf;
	if (no_g && !paired && me->n_groups > 1)
		e = lfs_fail_at(err, file, d.nf ? d.f[0].line : (d.lines ? d.lines : 1), 1,
				"no 'g' lines and %zu faces: the mesh has %zu faces in %u lighting "
				"groups (faces pair with them in order while their count is kept; to "
				"add or remove faces, write one 'g' per lighting group)",
				d.nf, stored_nf, me->n_groups);
	else if (!e && !no_g && ck.grp + 1 != (long)me->n_groups)
		e = lfs_fail_at(err, file, d.lines ? d.lines : 1, 1,
				"the file has %ld 'g' groups, the mesh has %u lighting groups (change "
				"the group list in model.txt)",
				ck.grp + 1, me->n_groups);
	else if (!e && no_g && d.nf > UINT16_MAX)
		e = lfs_fail_at(err, file, d.f[UINT16_MAX].line, d.f[UINT16_MAX].col,
				"more than 65535 faces in one group");
	float *nvp = NULL, *ntp = NULL;
	size_t nt = d.nt;
	if (!e) {
		nvp = sod_alloc(m, d.nv * 12 + 1);
		if (!nvp)
			e = lfs_nomem(err, "SOD views");
	}
	if (!e && no_g) {
		ct = malloc((3 * d.nf + 1) * sizeof(uint32_t));
		e = ct ? weld_tverts(m, me, &d, paired, file, ct, &ntp, &nt, err)
		       : lfs_nomem(err, "SOD views");
	} else if (!e) {
		/* the file's own list: a `vt` keeps the stored bits it states */
		ntp = sod_alloc(m, d.nt * 8 + 1);
		if (!ntp)
			e = lfs_nomem(err, "SOD views");
		for (size_t i = 0; !e && i < d.nt; i++) {
			unsigned mk = i < me->n_tverts ? lfs_obj_vec_keeps(d.vt_num + 2 * i, me->tverts + 2 * i, 2) : 0;
			for (int k = 0; k < 2; k++)
				ntp[2 * i + (size_t)k] = (mk >> k) & 1 ? me->tverts[2 * i + (size_t)k]
								   : d.vt[i][k];
		}
	}
	/* positions in the file's order: a `v` keeps the stored bits it states */
	for (size_t i = 0; !e && i < d.nv; i++) {
		unsigned mk = i < me->n_verts ? lfs_obj_vec_keeps(d.v_num + 3 * i, me->verts + 3 * i, 3) : 0;
		for (int k = 0; k < 3; k++)
			nvp[3 * i + (size_t)k] = (mk >> k) & 1 ? me->verts[3 * i + (size_t)k] : d.v[i][k];
	}
	/* the k-th `g` line starts lighting group k; its faces run to the next
	 * (without `g` lines: the stored group sizes, or all in the one group) */
	size_t f0 = 0;
	for (uint16_t g = 0; !e && g < me->n_groups; g++) {
		size_t fs = 0, f1 = d.nf;
		if (no_g) {
			fs = f0;
			f1 = paired ? f0 + me->groups[g].n_faces : d.nf;
			f0 = f1;
		} else {
			size_t seen = 0;
			for (size_t i = 0; i < d.ns; i++) {
				if (d.s[i].kind != LFS_OBJ_G)
					continue;
				if (seen == g)
					fs = d.s[i].nf;
				else if (seen == (size_t)g + 1) {
					f1 = d.s[i].nf;
					break;
				}
				seen++;
			}
		}
		sod_face *fa = group_faces(m, &d, fs, f1, ct);
		if (!fa) {
			e = lfs_nomem(err, "SOD views");
			break;
		}
		me->groups[g].faces = fa;
		me->groups[g].n_faces = (uint16_t)(f1 - fs);
	}
	if (!e) {
		me->verts = nvp;
		me->tverts = ntp;
		me->n_verts = (uint16_t)d.nv;
		me->n_tverts = (uint16_t)nt;
	}
	free(ct);
	lfs_obj_free(&d);
	return e;
}
