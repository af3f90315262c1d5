/**
 * @file nwn_compile_model.c
 * The compiler's node tree and model: attaching nodes, per-node finish
 * (part numbers, mesh derivation), flattening, transparency order, skins,
 * supermodel part numbers, and the entry points nwn_compile(),
 * nwn_compile_doc() (edit mode) and the nwn_compiled helpers.
 */
#include "nwn_compile_priv.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/mem.h"

static const uint32_t FN_GEOM[2] = { 0x0040BBC0, 0x0040BBD0 };
static const uint32_t FN_ANIM[2] = { 0x0040B6C0, 0x0044E700 };

/* ------------------------------------------------------------------ tree */

static int32_t find_in_tree(const cgeom *g, int32_t at_, const char *name, uint32_t depth)
{
	if (at_ < 0 || depth > 4096)
		return -1;
	const cnode *n = &g->nodes[at_];
	if (!strcasecmp(n->n.name, name))
		return at_;
	for (uint32_t i = 0; i < n->nkids; i++) {
		int32_t r = find_in_tree(g, (int32_t)n->kids[i], name, depth + 1);
		if (r >= 0)
			return r;
	}
	return -1;
}

static lfs_err attach(comp *c, cgeom *g, uint32_t idx)
{
	cnode *cn = &g->nodes[idx];
	const mdl_node *src = cn->src;
	if (!src->parent)
		return LFS_OK; /* no parent line: the node belongs to no tree */
	if (!strcasecmp(src->parent, "NULL")) {
		if (g->root >= 0)
			return lfs_fail_at(c->err, c->file, src->parent_line, 1,
					   "node '%s': a second node with parent NULL (the geometry already has root '%s')",
					   cn->n.name, g->nodes[g->root].n.name);
		g->root = (int32_t)idx;
		cn->attached = true;
		return LFS_OK;
	}
	char pname[32]; /* the reference reads the parent name into 32 bytes */
	size_t pl = strlen(src->parent);
	memcpy(pname, src->parent, pl > 31 ? 31 : pl);
	pname[pl > 31 ? 31 : pl] = '\0';
	int32_t p = find_in_tree(g, g->root, pname, 0);
	if (p < 0)
		return lfs_fail_at(c->err, c->file, src->parent_line, 1,
				   "node '%s': unknown parent node '%s' (a parent must be defined earlier in the same geometry)",
				   cn->n.name, src->parent);
	cnode *pn = &g->nodes[p];
	if (!lfs_grow32((void **)&pn->kids, &pn->capk, pn->nkids + 1, sizeof(uint32_t)))
		return lfs_nomem(c->err, NULL);
	pn->kids[pn->nkids++] = idx;
	cn->parent = p;
	cn->attached = true;
	return LFS_OK;
}

static void free_cnode(cnode *cn)
{
	free(cn->kids);
	free(cn->ctrls);
	free(cn->data.v);
	free(cn->verts.v);
	for (int t = 0; t < 4; t++) {
		free(cn->tverts[t].v);
		free(cn->texind[t]);
	}
	free(cn->colors.v);
	free(cn->normals.v);
	free(cn->constraints.v);
	free(cn->animverts.v);
	free(cn->animtverts.v);
	free(cn->faces);
	free(cn->mirror);
}

static void free_cgeom(cgeom *g)
{
	for (uint32_t i = 0; i < g->n; i++)
		free_cnode(&g->nodes[i]);
	free(g->nodes);
	memset(g, 0, sizeof(*g));
}

/* Faces with a repeated vertex index or zero area (the cross product of
 * two edges, from the text positions in double, is the zero vector) are
 * dropped with a warning each: no face of the BioWare-compiled corpus
 * binaries (108 980 faces) is like that, and nwnmdlcomp drops faces whose
 * corners share a vertex. Faces that index a vertex the node lacks are left
 * to nwn_derive_mesh (which drops all faces of the node). In edit mode a
 * repeated vertex index is an error instead (see below). */
static lfs_err drop_degenerate_faces(comp *c, cnode *cn)
{
	uint32_t nv = cn->verts.n / 3, kept = 0;
	for (uint32_t i = 0; i < cn->nfaces; i++) {
		const nwn_src_face *f = &cn->faces[i];
		bool degenerate = false;
		const char *why = "";
		if (f->v[0] == f->v[1] || f->v[1] == f->v[2] || f->v[0] == f->v[2]) {
			degenerate = true;
			why = "a repeated vertex index";
		} else if (f->v[0] >= 0 && f->v[1] >= 0 && f->v[2] >= 0 && (uint32_t)f->v[0] < nv &&
			   (uint32_t)f->v[1] < nv && (uint32_t)f->v[2] < nv) {
			const float *p0 = &cn->verts.v[3 * f->v[0]], *p1 = &cn->verts.v[3 * f->v[1]],
				    *p2 = &cn->verts.v[3 * f->v[2]];
			double a[3], b[3];
			for (int k = 0; k < 3; k++) {
				a[k] = (double)p1[k] - p0[k];
				b[k] = (double)p2[k] - p0[k];
			}
			double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2],
			       z = a[0] * b[1] - a[1] * b[0];
			if (x == 0 && y == 0 && z == 0) {
				degenerate = true;
				why = "zero area (its corners lie on one line)";
			}
		}
		if (degenerate) {
			const mdl_row *r = cn->faces_stmt && i < cn->faces_stmt->n_rows ? &cn->faces_stmt->rows[i]
											 : NULL;
			/* the `aabb` rows name faces by index: there the face stays */
			bool keep = cn->has_aabb_rows;
			/* a save through the mount: a face with a repeated vertex is
			 * typed (no compiled file holds one: nwnmdlcomp drops them,
			 * BioWare's binaries have none), so it is refused rather
			 * than dropped; zero-area faces, which nwnmdlcomp-compiled
			 * files do hold, keep the warning */
			if (c->edit_mode && !keep &&
			    (f->v[0] == f->v[1] || f->v[1] == f->v[2] || f->v[0] == f->v[2]))
				return nc_at(c, r ? r : &cn->src->head, 0,
					     "node '%s': face %u (%d %d %d) has a repeated vertex index: it would be dropped (a face needs three different vertices)",
					     cn->n.name, i, f->v[0], f->v[1], f->v[2]);
			nc_warn(c, r ? r : &cn->src->head, 0, "node '%s': face %u (%d %d %d) has %s: %s",
				cn->n.name, i, f->v[0], f->v[1], f->v[2], why,
				keep ? "kept (the aabb rows index the faces)" : "dropped");
			if (!keep)
				continue;
		}
		/* texindices1..3 have one row per face: they move with it */
		for (int t = 1; t < 4; t++)
			if (cn->texind[t] && cn->ntexind[t] == cn->nfaces && kept != i)
				memcpy(&cn->texind[t][3 * (size_t)kept], &cn->texind[t][3 * (size_t)i],
				       3 * sizeof(int32_t));
		cn->faces[kept++] = *f;
	}
	for (int t = 1; t < 4; t++)
		if (cn->texind[t] && cn->ntexind[t] == cn->nfaces)
			cn->ntexind[t] = kept;
	cn->nfaces = kept;
	return LFS_OK;
}

/* Finish a node nc_at `endnode`: copy controllers to the arena, derive meshes. */
static lfs_err finish_node(comp *c, cnode *cn, bool model_geom, float *model_radius)
{
	nwn_node *n = &cn->n;
	if (cn->nctrl) {
		n->ctrls = nc_arena_zalloc(c->ar, (size_t)cn->nctrl * sizeof(nwn_controller));
		if (!n->ctrls)
			return lfs_nomem(c->err, NULL);
		memcpy(n->ctrls, cn->ctrls, (size_t)cn->nctrl * sizeof(nwn_controller));
		n->n_ctrls = cn->nctrl;
		n->ctrl_arr.count = n->ctrl_arr.alloc = cn->nctrl;
	}
	if (cn->data.n) {
		n->ctrl_data = nc_arena_zalloc(c->ar, (size_t)cn->data.n * sizeof(float));
		if (!n->ctrl_data)
			return lfs_nomem(c->err, NULL);
		memcpy(n->ctrl_data, cn->data.v, (size_t)cn->data.n * sizeof(float));
		n->n_ctrl_data = cn->data.n;
		n->ctrl_data_arr.count = n->ctrl_data_arr.alloc = cn->data.n;
	}
	if (n->flags == NWN_EMITTER && model_geom && *model_radius < 40.0f)
		*model_radius = 40.0f;
	if (!n->mesh)
		return LFS_OK;
	nwn_mesh_src *s = &cn->ms;
	s->verts = cn->verts.v;
	s->n_verts = cn->verts.n / 3;
	for (int t = 0; t < 4; t++) {
		s->tverts[t] = cn->tverts[t].v;
		s->n_tverts[t] = cn->tverts[t].n / 3;
		s->texindices[t] = cn->texind[t];
		s->n_texindices[t] = cn->ntexind[t];
	}
	s->colors = cn->colors.v;
	s->n_colors = cn->colors.n / 3;
	s->normals = cn->normals.v;
	s->n_normals = cn->normals.n / 3;
	lfs_err de = drop_degenerate_faces(c, cn);
	if (de)
		return de;
	s->faces = cn->faces;
	s->n_faces = cn->nfaces;
	s->mirror = cn->mirror;
	s->n_mirror = cn->nmirror;
	s->constraints = cn->constraints.v;
	s->n_constraints = cn->constraints.n;
	s->anim_verts = cn->animverts.v;
	s->n_anim_verts = cn->animverts.n / 3;
	s->anim_tverts = cn->animtverts.v;
	s->n_anim_tverts = cn->animtverts.n / 3;
	s->warnings = &c->warnings;
	lfs_error sub = { 0 };
	lfs_err e = nwn_derive_mesh(n, s, &c->alloc, &cn->split_src, &sub);
	if (e) {
		if (c->err)
			lfs_fail_at(c->err, c->file, cn->src->head.line, 1, "node '%s': %s", n->name, sub.msg);
		return e == LFS_ERR_NOMEM ? e : LFS_ERR_PARSE;
	}
	if (n->flags == NWN_AABB && !cn->has_aabb_rows && (e = nwn_derive_aabb(n->mesh, &c->alloc, c->err)))
		return e;
	return LFS_OK;
}

/* Parse the nodes of one geometry (model or animation). */
static lfs_err build_geometry(comp *c, cgeom *g, const mdl_node *nodes, uint32_t count, bool model_geom,
			      float *model_radius)
{
	g->root = -1;
	g->nodes = calloc(count ? count : 1, sizeof(cnode));
	if (!g->nodes)
		return lfs_nomem(c->err, NULL);
	for (uint32_t i = 0; i < count; i++) {
		cnode *cn = &g->nodes[i];
		lfs_err e = nc_init_node(c, cn, &nodes[i], !model_geom);
		g->n = i + 1;
		if (e)
			return e;
		/* the parent line is normally first; attach before the statements
		 * as the reference does when it reads it */
		if ((e = attach(c, g, i)))
			return e;
		for (uint32_t k = 0; k < nodes[i].n_stmts; k++)
			if ((e = nc_node_statement(c, cn, &nodes[i].stmts[k])))
				return e;
		cn->n.part_number = (int32_t)g->node_count++;
		if ((e = finish_node(c, cn, model_geom, model_radius)))
			return e;
	}
	return LFS_OK;
}

/* Depth-first flatten of the attached tree into a nwn_geometry node array. */
static lfs_err flatten(comp *c, cgeom *g, nwn_geometry *out, uint32_t **order_out)
{
	out->nodes = NULL;
	out->n_nodes = 0;
	if (g->root < 0)
		return LFS_OK;
	uint32_t *order = malloc((size_t)g->n * sizeof(uint32_t));
	uint32_t *stack = malloc(((size_t)g->n + 1) * sizeof(uint32_t));
	int32_t *pos = malloc((size_t)g->n * sizeof(int32_t));
	if (!order || !stack || !pos) {
		free(order);
		free(stack);
		free(pos);
		return lfs_nomem(c->err, NULL);
	}
	uint32_t no = 0, sp = 0;
	stack[sp++] = (uint32_t)g->root;
	while (sp) {
		uint32_t i = stack[--sp];
		order[no++] = i;
		const cnode *cn = &g->nodes[i];
		for (uint32_t k = cn->nkids; k-- > 0;)
			stack[sp++] = cn->kids[k];
	}
	nwn_node *nodes = nc_arena_zalloc(c->ar, (size_t)no * sizeof(nwn_node));
	if (!nodes) {
		free(order);
		free(stack);
		free(pos);
		return lfs_nomem(c->err, NULL);
	}
	for (uint32_t i = 0; i < g->n; i++)
		pos[i] = -1;
	for (uint32_t j = 0; j < no; j++)
		pos[order[j]] = (int32_t)j;
	for (uint32_t j = 0; j < no; j++) {
		const cnode *cn = &g->nodes[order[j]];
		nwn_node *n = &nodes[j];
		*n = cn->n;
		n->parent = cn->parent >= 0 ? pos[cn->parent] : -1;
		n->n_children = cn->nkids;
		n->children = NULL;
		if (cn->nkids) {
			n->children = nc_arena_zalloc(c->ar, (size_t)cn->nkids * sizeof(uint32_t));
			if (!n->children) {
				free(order);
				free(stack);
				free(pos);
				return lfs_nomem(c->err, NULL);
			}
			for (uint32_t k = 0; k < cn->nkids; k++)
				n->children[k] = (uint32_t)pos[cn->kids[k]];
			n->children_arr.count = n->children_arr.alloc = cn->nkids;
		}
		n->depth = n->parent >= 0 ? nodes[n->parent].depth + 1 : 0;
	}
	free(stack);
	free(pos);
	out->nodes = nodes;
	out->n_nodes = no;
	if (order_out)
		*order_out = order;
	else
		free(order);
	return LFS_OK;
}

/* Stable reorder of children: non-mesh, opaque mesh, transparent mesh —
 * only where a transparent mesh precedes an opaque sibling. */
static int sort_key(const cnode *n)
{
	if (!n->n.mesh)
		return 0;
	return n->n.mesh->transparency_hint ? 2 : 1;
}

static void sort_transparency(cgeom *g)
{
	for (uint32_t i = 0; i < g->n; i++) {
		cnode *cn = &g->nodes[i];
		bool trans = false, after = false;
		for (uint32_t k = 0; k < cn->nkids; k++) {
			const cnode *ch = &g->nodes[cn->kids[k]];
			bool t = ch->n.mesh && ch->n.mesh->transparency_hint > 0;
			if (t)
				trans = true;
			else if (trans)
				after = true;
		}
		if (!after)
			continue;
		for (uint32_t k = 1; k < cn->nkids; k++) { /* insertion sort: stable */
			uint32_t x = cn->kids[k], j = k;
			while (j > 0 && sort_key(&g->nodes[cn->kids[j - 1]]) > sort_key(&g->nodes[x])) {
				cn->kids[j] = cn->kids[j - 1];
				j--;
			}
			cn->kids[j] = x;
		}
	}
}

/* Skin weights: bone names -> depth-first node index of the model tree. */
static lfs_err derive_skins(comp *c, cgeom *g, nwn_geometry *flat, const uint32_t *order)
{
	for (uint32_t j = 0; j < flat->n_nodes; j++) {
		cnode *cn = &g->nodes[order[j]];
		if (cn->n.flags != NWN_SKIN)
			continue;
		const mdl_stmt *ws = cn->weights_stmt;
		uint32_t nw = ws ? ws->n_rows : 0;
		nwn_src_weight *w = calloc(nw + 1, sizeof(*w));
		if (!w)
			return lfs_nomem(c->err, NULL);
		for (uint32_t r = 0; r < nw; r++) {
			const mdl_row *row = &ws->rows[r];
			for (uint32_t k = 0; k < 4; k++)
				w[r].node[k] = -1;
			for (uint32_t k = 0; k < 4 && 2 * k < row->ntok; k++) {
				const char *bn = row->tok[2 * k].s;
				float wt = 0;
				if (2 * k + 1 >= row->ntok || !nc_tok_f(row->tok[2 * k + 1].s, &wt)) {
					free(w);
					return nc_at(c, row, 2 * k + 1, "weights: bone '%s' has no numeric weight", bn);
				}
				int32_t idx = -1;
				for (uint32_t q = 0; q < flat->n_nodes; q++)
					if (!strcasecmp(flat->nodes[q].name, bn)) {
						idx = (int32_t)q;
						break;
					}
				if (idx < 0) {
					free(w);
					return nc_at(c, row, 2 * k, "weights: bone '%s' is not a node of the model", bn);
				}
				w[r].node[k] = idx;
				w[r].w[k] = wt;
				w[r].count = k + 1;
			}
		}
		lfs_error sub = { 0 };
		lfs_err e = nwn_derive_skin(flat, j, w, nw, cn->split_src, &c->alloc, &sub);
		free(w);
		if (e) {
			if (c->err)
				lfs_fail_at(c->err, c->file, cn->src->head.line, 1, "%s", sub.msg);
			return e == LFS_ERR_NOMEM ? e : LFS_ERR_PARSE;
		}
		/* the skin part is shared by pointer: g's copy sees it */
		cn->n.mesh = flat->nodes[j].mesh;
	}
	return LFS_OK;
}

/* Part numbers from a reference geometry: the root takes the reference
 * root's number, children are matched by name among the reference node's
 * children; an unmatched child gets -1 [N §2.4, §3.8]. */
static void merge_parts(nwn_geometry *dst, uint32_t di, const nwn_geometry *src, uint32_t si, uint32_t depth)
{
	if (depth > 4096)
		return;
	dst->nodes[di].part_number = src->nodes[si].part_number;
	const nwn_node *sn = &src->nodes[si];
	nwn_node *dn = &dst->nodes[di];
	for (uint32_t i = 0; i < dn->n_children; i++) {
		uint32_t dc = dn->children[i];
		dst->nodes[dc].part_number = -1;
		for (uint32_t j = 0; j < sn->n_children; j++) {
			uint32_t sc = sn->children[j];
			if (sc < src->n_nodes && !strcasecmp(dst->nodes[dc].name, src->nodes[sc].name)) {
				merge_parts(dst, dc, src, sc, depth + 1);
				break;
			}
		}
	}
}

/* ------------------------------------------------------------------ model */

static lfs_err compile_doc(comp *c, const mdl_doc *d, nwn_model *m);

/* Model-level keywords the field table does not hold [N §2.1]
 * (`filedependency`: a spelling 6 corpus files use). */
static bool model_kw(const char *k)
{
	static const char *const kws[] = { "newmodel", "setsupermodel", "classification",
					   "ignorefog", "bmin", "bmax", "radius", "beginmodelgeom",
					   "endmodelgeom", "donemodel", "filedependancy", "filedependency" };
	for (size_t i = 0; i < sizeof(kws) / sizeof(kws[0]); i++)
		if (nc_kw(k, kws[i]))
			return true;
	return false;
}

/* Edit mode: the source node of every flattened node (arena array). */
static lfs_err record_srcs(comp *c, const cgeom *g, const uint32_t *order, uint32_t n, uint32_t gi)
{
	const mdl_node **src = nc_arena_zalloc(c->ar, ((size_t)n + 1) * sizeof(*src));
	uint32_t **split = nc_arena_zalloc(c->ar, ((size_t)n + 1) * sizeof(*split));
	if (!src || !split)
		return lfs_nomem(c->err, NULL);
	for (uint32_t j = 0; j < n && order; j++) {
		src[j] = g->nodes[order[j]].src;
		split[j] = g->nodes[order[j]].split_src;
	}
	c->srcs[gi] = src;
	c->splits[gi] = split;
	return LFS_OK;
}

/* Load the supermodel through the callback: binary (decoded) or ASCII
 * (compiled, recursively). Returns NULL when not available. */
static lfs_err load_super(comp *c, const char *name, nwn_model **out, nwn_model **to_free, arena *sub_ar,
			  char *why, size_t whyn)
{
	*out = NULL;
	*to_free = NULL;
	if (!c->lookup) {
		snprintf(why, whyn, "not looked for (no sibling files)");
		return LFS_OK;
	}
	if (c->depth >= MAX_SUPER_DEPTH)
		return LFS_OK;
	uint8_t *data = NULL;
	size_t n = 0;
	if (!c->lookup(c->lctx, name, &data, &n) || !data) {
		snprintf(why, whyn, "not found (looked for '%.64s.mdl', as written and in lower case, in the folder of the model)",
			 name);
		return LFS_OK;
	}
	lfs_err e = LFS_OK;
	lfs_error perr = { 0 };
	if (nwn_mdl_is_binary(data, n)) {
		if (nwn_mdl_decode(data, n, out, &perr) == LFS_OK)
			*to_free = *out;
		else
			snprintf(why, whyn, "found as '%.64s.mdl' but it does not decode: %.100s", name, perr.msg);
	} else {
		mdl_doc *d = NULL;
		if (mdl_parse_ex(name, data, n, MDL_PARSE_TAIL_IGNORED, NULL, &d, &perr) != LFS_OK) {
			snprintf(why, whyn, "found as '%.64s.mdl' but it does not parse: %.100s", name, perr.msg);
		} else {
			comp sc = *c;
			sc.ar = sub_ar;
			sc.alloc.ctx = sub_ar;
			sc.depth = c->depth + 1;
			sc.file = name;
			sc.edit_mode = false;
			sc.srcs = NULL;
			sc.splits = NULL;
			sc.warn = NULL; /* the supermodel's own diagnostics are not this model's */
			sc.err = &perr;
			nwn_model *sm = nc_arena_zalloc(sub_ar, sizeof(*sm));
			if (sm && compile_doc(&sc, d, sm) == LFS_OK)
				*out = sm;
			else if (!sm)
				e = lfs_nomem(c->err, NULL);
			else
				snprintf(why, whyn, "found as '%.64s.mdl' but it does not compile: %.100s", name, perr.msg);
		}
		mdl_doc_free(d);
	}
	free(data);
	return e;
}

/* What the model header's statements leave for the rest of compile_doc. */
typedef struct mhead {
	float radius;              /* the `radius` statement's value, 7 when none */
	uint32_t radius_line;      /* its line, 0 when none */
	const mdl_stmt *super_stmt; /* the `setsupermodel` statement, NULL when none */
} mhead;

/* The model header: newmodel, the model's defaults, then each top-level
 * statement (the field table's MODEL rows, then the hand-coded ones). */
static lfs_err model_header(comp *c, const mdl_doc *d, nwn_model *m, mhead *h)
{
	lfs_err e = LFS_OK;
	const mdl_stmt *nm = mdl_doc_find(d, "newmodel");
	if (!nm || !mdl_stmt_arg(nm, 0))
		return lfs_fail_at(c->err, c->file, nm ? nm->head.line : 1, 1,
				   "no 'newmodel <name>' statement: not a model file (walkmesh side files are not compiled)");
	memset(m, 0, sizeof(*m));
	strncpy(m->geom.name, mdl_stmt_arg(nm, 0), 63);
	m->geom.fn[0] = FN_GEOM[0];
	m->geom.fn[1] = FN_GEOM[1];
	m->geom.geom_type = 2;
	m->fog = 1;
	nwn_fields_defaults(NWN_FK_MODEL, m); /* setanimationscale 1 */
	/* model box and radius: the reference's defaults (no corpus file states
	 * them; every peer binary without `bmin/bmax/radius` has these) */
	m->bmin[0] = m->bmin[1] = -5.0f;
	m->bmin[2] = -1.0f;
	m->bmax[0] = m->bmax[1] = 5.0f;
	m->bmax[2] = 10.0f;
	*h = (mhead){ 7.0f, 0, NULL };
	for (uint32_t i = 0; i < d->n_stmts; i++) {
		const mdl_stmt *s = &d->stmts[i];
		const char *k = s->head.tok[0].s;
		bool done = false;
		/* a value that is no number (`setanimationscale undefined`) is refused */
		if ((e = nc_field_stmt(c, s, NWN_FK_MODEL, m, k, &done)))
			return e;
		if (done)
			continue;
		if (nc_kw(k, "setsupermodel")) {
			const char *sm = mdl_stmt_arg(s, 1);
			h->super_stmt = s;
			memset(m->supermodel, 0, sizeof(m->supermodel));
			if (sm)
				strncpy(m->supermodel, sm, 63);
		} else if (nc_kw(k, "classification")) {
			const char *v = mdl_stmt_arg(s, 0);
			if (!v)
				continue;
			if (nc_kw(v, "effect") || nc_kw(v, "effects"))
				m->classification = NWN_CLASS_EFFECT;
			else if (nc_kw(v, "tile"))
				m->classification = NWN_CLASS_TILE;
			else if (nc_kw(v, "character"))
				m->classification = NWN_CLASS_CHARACTER;
			else if (nc_kw(v, "door"))
				m->classification = NWN_CLASS_DOOR;
			else
				c->warnings++; /* other/unknown/item/gui: the compiler leaves 0 */
		} else if (nc_kw(k, "ignorefog")) {
			int32_t iv;
			if ((e = nc_head_i(c, s, &iv)))
				return e;
			m->fog = iv ? 0 : 1; /* "ignore fog" clears the fog flag */
		} else if (nc_kw(k, "bmin") || nc_kw(k, "bmax")) {
			float v[3];
			if ((e = nc_head_fv(c, s, v, 3)))
				return e;
			memcpy(nc_kw(k, "bmin") ? m->bmin : m->bmax, v, sizeof(v));
		} else if (nc_kw(k, "radius")) {
			if ((e = nc_head_f(c, s, 0, &h->radius)))
				return e;
			h->radius_line = s->head.line;
		} else if (!model_kw(k) && !(s->head.ntok == 1 && nc_kw(k, m->geom.name))) {
			/* (a line holding only the model's name: the second argument of
			 * `newanim`/`doneanim` wrapped onto its own line, ttf02_j09_02) */
			return nc_at(c, &s->head, 0, "unknown statement '%s' in the model header", k);
		}
	}
	return LFS_OK;
}

/* One `event <time> <name>` of animation @p an (events sorted by time;
 * equal times keep text order; room for it is allocated). */
static lfs_err anim_event(comp *c, const mdl_stmt *s, nwn_anim *an)
{
	nwn_event ev = { 0 };
	lfs_err e = nc_head_f(c, s, 0, &ev.after);
	if (e)
		return e;
	const char *en = mdl_stmt_arg(s, 1);
	if (!en)
		return nc_at(c, &s->head, 0, "event: expected a time and a name");
	strncpy(ev.name, en, 31);
	uint32_t pos = an->n_events;
	for (uint32_t q = 0; q < an->n_events; q++)
		if (an->events[q].after > ev.after) {
			pos = q;
			break;
		}
	memmove(&an->events[pos + 1], &an->events[pos], (an->n_events - pos) * sizeof(nwn_event));
	an->events[pos] = ev;
	an->n_events++;
	return LFS_OK;
}

/* Animation @p a of the text into m->anims[a] (its nodes compiled into
 * @p ag, flattened, part numbers from the model's geometry). */
static lfs_err compile_anim(comp *c, const mdl_anim *sa, uint32_t a, nwn_model *m, cgeom *ag)
{
	nwn_anim *an = &m->anims[a];
	lfs_err e;
	strncpy(an->geom.name, sa->name, 63);
	an->geom.fn[0] = FN_ANIM[0];
	an->geom.fn[1] = FN_ANIM[1];
	an->geom.geom_type = 5;
	nwn_fields_defaults(NWN_FK_ANIM, an);
	uint32_t nev = 0;
	for (uint32_t i = 0; i < sa->n_stmts; i++)
		nev += nc_kw(sa->stmts[i].head.tok[0].s, "event");
	if (nev && !(an->events = nc_arena_zalloc(c->ar, (size_t)nev * sizeof(nwn_event))))
		return lfs_nomem(c->err, NULL);
	for (uint32_t i = 0; i < sa->n_stmts; i++) {
		const mdl_stmt *s = &sa->stmts[i];
		const char *k = s->head.tok[0].s;
		bool done = false;
		if ((e = nc_field_stmt(c, s, NWN_FK_ANIM, an, k, &done)))
			return e;
		if (done)
			continue;
		if (nc_kw(k, "animlength")) { /* `animlength <anim> <length>` */
			if ((e = nc_head_f(c, s, 1, &an->length)))
				return e;
		} else if (nc_kw(k, "event")) {
			if ((e = anim_event(c, s, an)))
				return e;
		} else if (!(s->head.ntok == 1 && nc_kw(k, m->geom.name))) {
			return nc_at(c, &s->head, 0, "unknown statement '%s' in animation '%s'", k, sa->name);
		}
	}
	an->events_arr.count = an->events_arr.alloc = an->n_events;
	float dummy = 0;
	if ((e = build_geometry(c, ag, sa->nodes, sa->n_nodes, false, &dummy)))
		return e;
	an->geom.node_count_field = ag->node_count;
	uint32_t *order = NULL;
	if ((e = flatten(c, ag, &an->geom, c->edit_mode ? &order : NULL)))
		return e;
	if (c->edit_mode && (e = record_srcs(c, ag, order, an->geom.n_nodes, a + 1))) {
		free(order);
		return e;
	}
	free(order);
	if (an->geom.n_nodes && m->geom.n_nodes)
		merge_parts(&an->geom, 0, &m->geom, 0, 0);
	return LFS_OK;
}

/* The model's geometry: nodes built and flattened, the emitter radius
 * floor, skins derived, transparency order (not in edit mode), part
 * numbers from the supermodel @p super (NULL: none). */
static lfs_err model_geometry(comp *c, const mdl_doc *d, nwn_model *m, const mhead *h,
			      const nwn_model *super, cgeom *g)
{
	lfs_err e;
	m->radius = h->radius;
	float emitter_radius = 0;
	if (super)
		g->node_count = super->geom.node_count_field + 1;
	if ((e = build_geometry(c, g, d->nodes, d->n_nodes, true, &emitter_radius)))
		return e;
	if (emitter_radius > 0) {
		/* the 40 floor applies at the emitter's endnode: a radius statement
		 * after the last emitter wins */
		uint32_t last_em = 0;
		for (uint32_t i = 0; i < g->n; i++)
			if (g->nodes[i].n.flags == NWN_EMITTER)
				last_em = g->nodes[i].src->end_line;
		if (!h->radius_line || h->radius_line < last_em) {
			if (m->radius < 40.0f)
				m->radius = 40.0f;
		}
	}
	m->geom.node_count_field = g->node_count;
	{
		nwn_geometry pre = { 0 };
		uint32_t *order = NULL;
		if ((e = flatten(c, g, &pre, &order)))
			return e;
		e = derive_skins(c, g, &pre, order);
		free(order);
		if (e)
			return e;
	}
	if (!c->edit_mode)
		sort_transparency(g);
	if (c->edit_mode) {
		c->super_found = super != NULL;
		c->srcs = nc_arena_zalloc(c->ar, ((size_t)d->n_anims + 1) * sizeof(*c->srcs));
		c->splits = nc_arena_zalloc(c->ar, ((size_t)d->n_anims + 1) * sizeof(*c->splits));
		if (!c->srcs || !c->splits)
			return lfs_nomem(c->err, NULL);
	}
	uint32_t *order = NULL;
	if ((e = flatten(c, g, &m->geom, c->edit_mode ? &order : NULL)))
		return e;
	if (c->edit_mode && (e = record_srcs(c, g, order, m->geom.n_nodes, 0))) {
		free(order);
		return e;
	}
	free(order);
	if (super && super->geom.n_nodes && m->geom.n_nodes)
		merge_parts(&m->geom, 0, &super->geom, 0, 0);
	return LFS_OK;
}

static lfs_err compile_doc(comp *c, const mdl_doc *d, nwn_model *m)
{
	mhead h;
	lfs_err e = model_header(c, d, m, &h);
	if (e)
		return e;

	/* supermodel */
	nwn_model *super = NULL, *super_free = NULL;
	arena sub_ar = { 0 };
	cgeom g = { 0 };
	cgeom *ag = NULL;
	uint32_t nanims = 0;
	if (m->supermodel[0] && strcasecmp(m->supermodel, "NULL")) {
		char why[400] = "";
		if ((e = load_super(c, m->supermodel, &super, &super_free, &sub_ar, why, sizeof(why))))
			goto out;
		if (!super && c->depth == 0)
			nc_warn(c, h.super_stmt ? &h.super_stmt->head : NULL, 2,
				"supermodel '%s' %s; part numbers follow the text order, so nodes the "
				"supermodel also has will not get its numbers",
				m->supermodel, why);
	}
	if ((e = model_geometry(c, d, m, &h, super, &g)))
		goto out;

	/* animations */
	nanims = d->n_anims;
	if (nanims) {
		m->anims = nc_arena_zalloc(c->ar, (size_t)nanims * sizeof(nwn_anim));
		ag = calloc(nanims, sizeof(cgeom));
		if (!m->anims || !ag) {
			e = lfs_nomem(c->err, NULL);
			goto out;
		}
	}
	for (uint32_t a = 0; a < nanims; a++)
		if ((e = compile_anim(c, &d->anims[a], a, m, &ag[a])))
			goto out;
	m->n_anims = nanims;
	m->anims_arr.count = m->anims_arr.alloc = nanims;
out:
	free_cgeom(&g);
	if (ag) {
		for (uint32_t a = 0; a < nanims; a++)
			free_cgeom(&ag[a]);
		free(ag);
	}
	nwn_model_free(super_free);
	lfs_arena_free(&sub_ar);
	return e;
}

lfs_err nwn_compile(const char *file, const uint8_t *text, size_t n, nwn_supermodel_lookup_fn lookup, void *ctx,
		    uint8_t **out, size_t *outn, lfs_error *err)
{
	return nwn_compile_ex(file, text, n, lookup, ctx, NULL, out, outn, err);
}

lfs_err nwn_compile_ex(const char *file, const uint8_t *text, size_t n, nwn_supermodel_lookup_fn lookup,
		       void *ctx, lfs_warnings *warn, uint8_t **out, size_t *outn, lfs_error *err)
{
	*out = NULL;
	*outn = 0;
	if (!file)
		file = "<input>";
	mdl_doc *d = NULL;
	lfs_err e = mdl_parse_ex(file, text, n, MDL_PARSE_TAIL_IGNORED, warn, &d, err);
	if (e)
		return e;
	arena ar = { 0 };
	comp c = {
		.file = file, .err = err, .ar = &ar, .lookup = lookup, .lctx = ctx, .warn = warn,
		.alloc = { nc_arena_zalloc, &ar },
	};
	nwn_model *m = nc_arena_zalloc(&ar, sizeof(*m));
	if (!m)
		e = lfs_nomem(c.err, NULL);
	else
		e = compile_doc(&c, d, m);
	if (!e)
		e = nwn_mdl_encode(m, out, outn, err);
	lfs_arena_free(&ar);
	mdl_doc_free(d);
	return e;
}

/* ------------------------------------------------------------- edit mode */

lfs_err nwn_compile_doc(const char *file, const mdl_doc *d, nwn_supermodel_lookup_fn lookup, void *ctx,
			lfs_warnings *warn, nwn_compiled *out, lfs_error *err)
{
	memset(out, 0, sizeof(*out));
	arena *ar = calloc(1, sizeof(*ar));
	if (!ar)
		return lfs_nomem(err, NULL);
	comp c = {
		.file = file ? file : "<input>", .err = err, .ar = ar, .lookup = lookup, .lctx = ctx,
		.alloc = { nc_arena_zalloc, ar }, .edit_mode = true, .warn = warn,
	};
	out->priv = ar;
	nwn_model *m = nc_arena_zalloc(ar, sizeof(*m));
	lfs_err e = m ? compile_doc(&c, d, m) : lfs_nomem(c.err, NULL);
	if (e) {
		nwn_compiled_free(out);
		return e;
	}
	out->model = m;
	out->src = c.srcs;
	out->split = c.splits;
	out->super_found = c.super_found;
	return LFS_OK;
}

void *nwn_compiled_zalloc(nwn_compiled *c, size_t n)
{
	if (!c || !c->priv || n > SIZE_MAX - 64)
		return NULL;
	return nc_arena_zalloc(c->priv, n);
}

void nwn_compiled_free(nwn_compiled *c)
{
	if (!c)
		return;
	if (c->priv) {
		lfs_arena_free(c->priv);
		free(c->priv);
	}
	memset(c, 0, sizeof(*c));
}
