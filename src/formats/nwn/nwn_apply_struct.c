/**
 * @file nwn_apply_struct.c
 * Structural edits: compile the edited model.mdl, merge it with the old
 * binary as template, re-lay the file (see nwn_apply_struct.h and
 * docs/nwn-compile.md "Structural edits"): this part holds the statement
 * comparison, controllers, nodes, animations, the model header and the
 * entry. Meshes and skins: nwn_apply_struct_mesh.c.
 */
#include "nwn_apply_struct.h"
#include "common/floatfmt.h"
#include "nwn_apply_struct_priv.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/mem.h"
#include "nwn_fields.h"
#include "nwn_ascii.h"


void *sa_rz(rb *r, size_t n)
{
	return nwn_compiled_zalloc(&r->nc, n ? n : 1);
}

void *sa_rdup(rb *r, const void *p, size_t n)
{
	void *q = sa_rz(r, n);
	if (q && p && n)
		memcpy(q, p, n);
	return q;
}

static void *az(void *ctx, size_t n)
{
	return nwn_compiled_zalloc(ctx, n);
}

/* ---- text comparison ---------------------------------------------------------- */

static const char *stmt_key(const mdl_stmt *s)
{
	return s->kind == MDL_ST_KEYS ? s->name : s->head.tok[0].s;
}

/* Same text or the same float32 value ("1" = "1.0"). */
static bool tok_same(const char *a, const char *b)
{
	if (!strcmp(a, b))
		return true;
	float x, y;
	return mdl_tok_float(a, &x) && mdl_tok_float(b, &y) && lfs_f32_bits(x) == lfs_f32_bits(y);
}

static bool row_same(const mdl_row *x, const mdl_row *y, uint32_t from)
{
	if (x->ntok != y->ntok)
		return false;
	for (uint32_t i = from; i < x->ntok; i++)
		if (!tok_same(x->tok[i].s, y->tok[i].s))
			return false;
	return true;
}

/* Same keyword, kind and shape, and every value token the same text or the
 * same float32 value ("1" = "1.0"): the statement compiles to the same
 * values (unlike ap_stmt_text_equal, which compares text). */
static bool stmt_value_equal(const mdl_stmt *x, const mdl_stmt *y)
{
	if (x->kind != y->kind || x->n_rows != y->n_rows || x->bezier != y->bezier ||
	    strcasecmp(stmt_key(x), stmt_key(y)))
		return false;
	if (x->kind == MDL_ST_PLAIN ? !row_same(&x->head, &y->head, 1) : false)
		return false;
	for (uint32_t i = 0; i < x->n_rows; i++)
		if (!row_same(&x->rows[i], &y->rows[i], 0))
			return false;
	return true;
}

const mdl_stmt *sa_find_kw(const mdl_stmt *s, uint32_t n, const char *kw)
{
	for (uint32_t i = 0; i < n; i++)
		if (!strcasecmp(stmt_key(&s[i]), kw))
			return &s[i];
	return NULL;
}

/* The first statements with keyword @p kw of two blocks are the same
 * (or both absent). */
static bool kw_same(const mdl_stmt *gs, uint32_t gn, const mdl_stmt *es, uint32_t en, const char *kw)
{
	const mdl_stmt *x = sa_find_kw(gs, gn, kw), *y = sa_find_kw(es, en, kw);
	if (!x || !y)
		return !x && !y;
	return stmt_value_equal(x, y);
}

bool sa_node_kw_same(const mdl_node *g, const mdl_node *e, const char *kw)
{
	return kw_same(g->stmts, g->n_stmts, e->stmts, e->n_stmts, kw);
}

bool sa_node_kws_same(const mdl_node *g, const mdl_node *e, const char *const *kws, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!sa_node_kw_same(g, e, kws[i]))
			return false;
	return true;
}

static const char *const ANIM_GEOM_KWS[] = { "sampleperiod", "animverts", "animtverts" };

/* Controller statements as nwn_compile turns them into controllers. */
static uint32_t stmt_ctrl_id(uint32_t flags, const mdl_stmt *s)
{
	if (s->kind == MDL_ST_LIST || (s->kind == MDL_ST_KEYS && s->n_rows == 0))
		return 0;
	const char *k = stmt_key(s);
	if ((flags & NWN_HAS_MESH) && !strcasecmp(k, "setfillumcolor"))
		return NWN_CTRL_SELFILLUMCOLOR;
	return nwn_controller_id(flags, k);
}

/* ---- arrays and styles ----------------------------------------------------------- */

void sa_arr_set(nwn_array *a, uint32_t count)
{
	if (a->count != count || a->alloc < count)
		a->alloc = count;
	a->count = count;
}

/* New structure in a BioWare-layout file: empty arrays get a position. */
static void arr_new(const rb *r, nwn_array *a)
{
	a->off = (r->bioware && a->count == 0) ? 1 : 0;
}

static void style_new_node(const rb *r, nwn_node *n)
{
	arr_new(r, &n->children_arr);
	arr_new(r, &n->ctrl_arr);
	arr_new(r, &n->ctrl_data_arr);
	if (n->mesh) {
		nwn_mesh *m = n->mesh;
		arr_new(r, &m->faces_arr);
		arr_new(r, &m->vindex_arr);
		arr_new(r, &m->leftover_arr);
		arr_new(r, &m->vindex_count_arr);
		arr_new(r, &m->vindex_offset_arr);
		if (m->skin) {
			arr_new(r, &m->skin->weights_arr);
			arr_new(r, &m->skin->qbone_arr);
			arr_new(r, &m->skin->tbone_arr);
			arr_new(r, &m->skin->const_idx_arr);
		}
		if (m->dangly)
			arr_new(r, &m->dangly->constraints_arr);
		if (m->anim) {
			arr_new(r, &m->anim->anim_verts_arr);
			arr_new(r, &m->anim->anim_tverts_arr);
			arr_new(r, &m->anim->anim_normals_arr);
		}
	}
	if (n->light) {
		nwn_light *l = n->light;
		arr_new(r, &l->unknown_arr);
		arr_new(r, &l->sizes_arr);
		arr_new(r, &l->positions_arr);
		arr_new(r, &l->colorshifts_arr);
		arr_new(r, &l->texnames_arr);
	}
}

/* Function pointers of a new node: those of the first old node of the same
 * type (the file's compiler), else the compiler defaults already set. */
static void new_node_fn(const rb *r, nwn_node *x)
{
	const nwn_model *o = r->O;
	for (int32_t gi = -1; gi < (int32_t)o->n_anims; gi++) {
		const nwn_geometry *g = gi < 0 ? &o->geom : &o->anims[gi].geom;
		for (uint32_t i = 0; i < g->n_nodes; i++) {
			const nwn_node *p = &g->nodes[i];
			if (p->flags != x->flags)
				continue;
			memcpy(x->fn, p->fn, sizeof(x->fn));
			if (x->mesh && p->mesh)
				memcpy(x->mesh->fn, p->mesh->fn, sizeof(x->mesh->fn));
			return;
		}
	}
}

/* ---- controllers ------------------------------------------------------------------ */

/* Row @p r of a controller statement as written (PLAIN: the head line, with
 * the keyword as token 0; KEYS: rows[r]). */
static const mdl_row *ctrl_row_text(const mdl_stmt *s, uint32_t r, uint32_t *from)
{
	if (s->kind == MDL_ST_PLAIN) {
		*from = 1;
		return r == 0 ? &s->head : NULL;
	}
	*from = 0;
	return r < s->n_rows ? &s->rows[r] : NULL;
}

/* Controllers of matched node @p x (a copy of old node @p p) from compiled
 * node @p nn: an unchanged statement keeps the old controller (rows, pad,
 * stored bits); a changed one takes the compiled keys, except rows whose
 * text is unchanged (old bits) and the old pad byte; controllers the text
 * cannot show (unknown ids) are kept after the others. */
static lfs_err merge_ctrls(rb *r, nwn_node *x, const nwn_node *p, const nwn_node *nn, const mdl_node *gn,
			   const mdl_node *en)
{
	uint32_t ng = 0, ne = 0;
	const mdl_stmt **gs = calloc((size_t)gn->n_stmts + 1, sizeof(*gs));
	const mdl_stmt **es = calloc((size_t)en->n_stmts + 1, sizeof(*es));
	uint32_t *pp = calloc((size_t)p->n_ctrls + 1, sizeof(*pp));
	lfs_err e = LFS_OK;
	if (!gs || !es || !pp) {
		e = lfs_nomem(r->err, "structural edit");
		goto out;
	}
	for (uint32_t i = 0; i < gn->n_stmts; i++)
		if (stmt_ctrl_id(p->flags, &gn->stmts[i]))
			gs[ng++] = &gn->stmts[i];
	for (uint32_t i = 0; i < en->n_stmts; i++)
		if (stmt_ctrl_id(nn->flags, &en->stmts[i]))
			es[ne++] = &en->stmts[i];
	uint32_t np = 0, nunk = 0;
	for (uint32_t i = 0; i < p->n_ctrls; i++) {
		if (nwn_ascii_controller_shown(p, &p->ctrls[i]))
			pp[np++] = i;
		else if (!nwn_controller_name(p->flags, p->ctrls[i].type) && p->ctrl_data &&
			 (size_t)p->ctrls[i].key_offset + p->ctrls[i].rows <= p->n_ctrl_data &&
			 (size_t)p->ctrls[i].data_offset + (size_t)p->ctrls[i].rows * p->ctrls[i].ncols <=
				 p->n_ctrl_data)
			nunk++;
	}
	bool aligned = np == ng && ne == nn->n_ctrls;
	if (aligned && ng == ne) {
		bool same = true;
		for (uint32_t i = 0; i < ng && same; i++)
			same = stmt_value_equal(gs[i], es[i]);
		if (same)
			goto out; /* every controller unchanged: x keeps p's */
	}
	uint32_t nc = nn->n_ctrls + nunk;
	nwn_controller *ctrls = sa_rz(r, (size_t)nc * sizeof(*ctrls));
	size_t total = 0;
	for (uint32_t k = 0; k < nn->n_ctrls; k++)
		total += (size_t)nn->ctrls[k].rows * (1 + (size_t)nn->ctrls[k].ncols);
	for (uint32_t i = 0; i < p->n_ctrls; i++)
		total += (size_t)p->ctrls[i].rows * (1 + (size_t)p->ctrls[i].ncols);
	float *data = sa_rz(r, (total + 1) * sizeof(float));
	if (!ctrls || !data) {
		e = lfs_nomem(r->err, "structural edit");
		goto out;
	}
	size_t pos = 0;
	uint32_t k2 = 0;
	for (uint32_t k = 0; k < nn->n_ctrls; k++) {
		const nwn_controller *c = &nn->ctrls[k];
		/* the old controller of the same type and occurrence */
		uint32_t occ = 0;
		for (uint32_t j = 0; j < k; j++)
			occ += nn->ctrls[j].type == c->type;
		int32_t pi = -1, gi = -1;
		for (uint32_t j = 0, seen = 0; j < np; j++)
			if (p->ctrls[pp[j]].type == c->type && seen++ == occ) {
				pi = (int32_t)pp[j];
				gi = (int32_t)j;
				break;
			}
		const nwn_controller *pc = pi >= 0 ? &p->ctrls[pi] : NULL;
		const mdl_stmt *g = (aligned && gi >= 0) ? gs[gi] : NULL;
		const mdl_stmt *s = aligned ? es[k] : NULL;
		nwn_controller *o = &ctrls[k2++];
		bool keep = pc && g && s && stmt_value_equal(g, s);
		const nwn_controller *src = keep ? pc : c;
		const float *sd = keep ? p->ctrl_data : nn->ctrl_data;
		*o = *src;
		o->off = keep ? pc->off : NEWOFF;
		if (pc)
			o->pad = pc->pad;
		size_t rows = src->rows, nv = src->ncols;
		o->key_offset = (uint16_t)pos;
		if (rows)
			memcpy(data + pos, sd + src->key_offset, rows * sizeof(float));
		o->data_offset = (uint16_t)(pos + rows);
		if (rows && nv)
			memcpy(data + pos + rows, sd + src->data_offset, rows * nv * sizeof(float));
		/* rows whose text is unchanged keep the old bits */
		if (!keep && pc && g && s && pc->ncols == c->ncols && pc->bezier == c->bezier) {
			for (uint32_t q = 0; q < rows && q < pc->rows; q++) {
				uint32_t f1, f2;
				const mdl_row *gr = ctrl_row_text(g, q, &f1), *er = ctrl_row_text(s, q, &f2);
				if (!gr || !er || f1 != f2 || !row_same(gr, er, f1))
					continue;
				data[pos + q] = p->ctrl_data[pc->key_offset + q];
				if (nv)
					memcpy(data + pos + rows + q * nv,
					       p->ctrl_data + pc->data_offset + (size_t)q * nv, nv * sizeof(float));
			}
		}
		pos += rows * (1 + nv);
	}
	for (uint32_t i = 0; i < p->n_ctrls && nunk; i++) {
		const nwn_controller *pc = &p->ctrls[i];
		if (nwn_controller_name(p->flags, pc->type) || !p->ctrl_data ||
		    (size_t)pc->key_offset + pc->rows > p->n_ctrl_data ||
		    (size_t)pc->data_offset + (size_t)pc->rows * pc->ncols > p->n_ctrl_data)
			continue;
		nwn_controller *o = &ctrls[k2++];
		*o = *pc;
		size_t rows = pc->rows, nv = pc->ncols;
		o->key_offset = (uint16_t)pos;
		memcpy(data + pos, p->ctrl_data + pc->key_offset, rows * sizeof(float));
		o->data_offset = (uint16_t)(pos + rows);
		memcpy(data + pos + rows, p->ctrl_data + pc->data_offset, rows * nv * sizeof(float));
		pos += rows * (1 + nv);
	}
	if (pos > 65535) {
		e = lfs_fail_at(r->err, r->file, en->head.line, 1,
				"node '%s' would hold %zu controller floats (16-bit key offsets allow 65535)",
				x->name, pos);
		goto out;
	}
	x->ctrls = ctrls;
	x->n_ctrls = k2;
	x->ctrl_data = data;
	x->n_ctrl_data = (uint32_t)pos;
	sa_arr_set(&x->ctrl_arr, k2);
	sa_arr_set(&x->ctrl_data_arr, (uint32_t)pos);
out:
	free(gs);
	free(es);
	free(pp);
	return e;
}

/* ---- nodes ------------------------------------------------------------------------ */

static lfs_err merge_light(rb *r, nwn_node *x, const nwn_node *p, const nwn_node *nn, const mdl_node *gn,
			   const mdl_node *en)
{
	nwn_light *l = sa_rdup(r, p->light, sizeof(*l));
	const nwn_light *t = nn->light;
	if (!l)
		return lfs_nomem(r->err, "structural edit");
	x->light = l;
	nwn_fields_copy(NWN_FK_LIGHT, l, t);
	if (!sa_node_kw_same(gn, en, "texturenames")) {
		l->flare_textures = t->flare_textures;
		sa_arr_set(&l->texnames_arr, t->flare_textures ? t->texnames_arr.count : 0);
	}
	if (!sa_node_kw_same(gn, en, "flaresizes")) {
		l->flare_sizes = t->flare_sizes;
		sa_arr_set(&l->sizes_arr, t->flare_sizes ? t->sizes_arr.count : 0);
	}
	if (!sa_node_kw_same(gn, en, "flarepositions")) {
		l->flare_positions = t->flare_positions;
		sa_arr_set(&l->positions_arr, t->flare_positions ? t->positions_arr.count : 0);
	}
	if (!sa_node_kw_same(gn, en, "flarecolorshifts")) {
		l->flare_colorshifts = t->flare_colorshifts;
		sa_arr_set(&l->colorshifts_arr, t->flare_colorshifts ? t->colorshifts_arr.count : 0);
	}
	return LFS_OK;
}

static lfs_err merge_emitter(rb *r, nwn_node *x, const nwn_node *p, const nwn_node *nn)
{
	nwn_emitter *m = sa_rdup(r, p->emitter, sizeof(*m));
	const nwn_emitter *t = nn->emitter;
	if (!m)
		return lfs_nomem(r->err, "structural edit");
	x->emitter = m;
	nwn_fields_copy(NWN_FK_EMITTER, m, t);
	/* the text shows the 11 known flag bits; unknown ones are kept */
	m->flags = (p->emitter->flags & ~(uint32_t)0x7FF) | (t->flags & 0x7FF);
	return LFS_OK;
}

/* Node @p j of output geometry @p xg from compiled node @p nn and, when
 * matched, old node @p p (text blocks @p gn, @p en). */
static lfs_err merge_node(rb *r, nwn_geometry *xg, uint32_t j, const nwn_node *nn, const nwn_node *p,
			  const mdl_node *gn, const mdl_node *en, const uint32_t *split, bool anim, bool *geom_changed)
{
	nwn_node *x = &xg->nodes[j];
	*geom_changed = true;
	if (!p || p->flags != nn->flags || !gn) {
		*x = *nn;
		if (x->mesh && !anim) {
			lfs_err ce = sa_check_faces(r, en);
			if (ce)
				return ce;
			nwn_mesh *m = sa_rdup(r, x->mesh, sizeof(*m));
			if (!m)
				return lfs_nomem(r->err, "structural edit");
			x->mesh = m;
			lfs_err e = sa_reorder_split(r, m, split);
			if (e)
				return e;
		}
		x->off = NEWOFF;
		new_node_fn(r, x);
		style_new_node(r, x);
		if (x->flags == NWN_EMITTER && !anim)
			r->new_emitter = true;
		return LFS_OK;
	}
	*x = *p;
	memcpy(x->name, nn->name, sizeof(x->name));
	x->parent = nn->parent;
	x->children = nn->children;
	x->n_children = nn->n_children;
	x->depth = nn->depth;
	sa_arr_set(&x->children_arr, nn->n_children);
	nwn_fields_copy(NWN_FK_NODE, x, nn);
	lfs_err e = merge_ctrls(r, x, p, nn, gn, en);
	if (e)
		return e;
	if (anim) {
		/* animation nodes show controllers only (and animmesh sets) */
		*geom_changed = false;
		if (p->mesh && p->mesh->anim &&
		    !sa_node_kws_same(gn, en, ANIM_GEOM_KWS, sizeof(ANIM_GEOM_KWS) / sizeof(ANIM_GEOM_KWS[0])))
			return lfs_fail_at(r->err, r->file, en->head.line, 1,
					   "animmesh sets of animation node '%s': changing them together with "
					   "a structural edit is not supported (edit them alone)",
					   x->name);
		return LFS_OK;
	}
	*geom_changed = false;
	if (p->light && nn->light && (e = merge_light(r, x, p, nn, gn, en)))
		return e;
	if (p->emitter && nn->emitter && (e = merge_emitter(r, x, p, nn)))
		return e;
	if (p->ref && nn->ref) {
		nwn_reference *f = sa_rdup(r, p->ref, sizeof(*f));
		if (!f)
			return lfs_nomem(r->err, "structural edit");
		nwn_fields_copy(NWN_FK_REF, f, nn->ref);
		x->ref = f;
	}
	if (p->mesh && nn->mesh && (e = sa_merge_mesh(r, x, p, nn, gn, en, split, geom_changed)))
		return e;
	return LFS_OK;
}

/* Match compiled nodes to old nodes by name (first unused). */
static void match_nodes(const nwn_geometry *og, const nwn_geometry *ng, uint32_t *n2o, uint32_t *o2n)
{
	for (uint32_t i = 0; i < og->n_nodes; i++)
		o2n[i] = NONE;
	for (uint32_t j = 0; j < ng->n_nodes; j++) {
		n2o[j] = NONE;
		/* the same position first (the usual case), then any */
		if (j < og->n_nodes && o2n[j] == NONE && !strcasecmp(og->nodes[j].name, ng->nodes[j].name)) {
			n2o[j] = j;
			o2n[j] = j;
			continue;
		}
		for (uint32_t i = 0; i < og->n_nodes; i++)
			if (o2n[i] == NONE && !strcasecmp(og->nodes[i].name, ng->nodes[j].name)) {
				n2o[j] = i;
				o2n[i] = j;
				break;
			}
	}
}

static int32_t clamp_part(int64_t v)
{
	return v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

/* One geometry (model: @p ai < 0, else animation @p ai of the output, matched
 * to old animation @p oai or none). */
static lfs_err merge_geometry(rb *r, nwn_geometry *xg, const nwn_geometry *ng, const nwn_geometry *og,
			      const mdl_node *gnodes, uint32_t n_gnodes, const mdl_node *const *esrc,
			      uint32_t *const *splits, bool anim, bool has_super)
{
	uint32_t nn = ng->n_nodes, no = og ? og->n_nodes : 0;
	uint32_t *n2o = malloc(((size_t)nn + 1) * sizeof(uint32_t));
	uint32_t *o2n = malloc(((size_t)no + 1) * sizeof(uint32_t));
	bool *gch = calloc((size_t)nn + 1, sizeof(bool));
	lfs_err e = LFS_OK;
	xg->nodes = sa_rz(r, ((size_t)nn + 1) * sizeof(nwn_node));
	if (!n2o || !o2n || !gch || !xg->nodes) {
		e = lfs_nomem(r->err, "structural edit");
		goto out;
	}
	xg->n_nodes = nn;
	xg->root_ptr = nn ? 1 : 0;
	if (og)
		match_nodes(og, ng, n2o, o2n);
	else
		for (uint32_t j = 0; j < nn; j++)
			n2o[j] = NONE;
	for (uint32_t j = 0; j < nn && !e; j++) {
		uint32_t oi = n2o[j];
		const nwn_node *p = oi != NONE ? &og->nodes[oi] : NULL;
		const mdl_node *gn = (oi != NONE && oi < n_gnodes) ? &gnodes[oi] : NULL;
		e = merge_node(r, xg, j, &ng->nodes[j], p, gn, esrc[j], splits[j], anim, &gch[j]);
	}
	if (e)
		goto out;
	/* part numbers: old nodes first, then new ones (a number the text gives
	 * a new node is taken when no other node of the geometry has it: a
	 * block copied within the model keeps the original's number in its
	 * comment) */
	int64_t maxp = -1;
	for (uint32_t i = 0; i < no; i++)
		if (og->nodes[i].part_number > maxp)
			maxp = og->nodes[i].part_number;
	for (uint32_t j = 0; j < nn; j++) {
		nwn_node *x = &xg->nodes[j];
		uint32_t oi = n2o[j];
		const mdl_node *en = esrc[j];
		const mdl_node *gn = (oi != NONE && oi < n_gnodes) ? &gnodes[oi] : NULL;
		if (oi == NONE)
			continue;
		if (gn && en->has_part_number && gn->has_part_number && en->part_number != gn->part_number)
			x->part_number = clamp_part(en->part_number); /* edited in the text */
		else if (r->nc.super_found)
			x->part_number = ng->nodes[j].part_number;
		else
			x->part_number = og->nodes[oi].part_number;
		if (x->part_number > maxp)
			maxp = x->part_number;
	}
	for (uint32_t j = 0; j < nn; j++) {
		nwn_node *x = &xg->nodes[j];
		const mdl_node *en = esrc[j];
		if (n2o[j] != NONE)
			continue;
		bool given = en->has_part_number;
		int32_t gp = clamp_part(en->part_number);
		for (uint32_t k = 0; given && !anim && gp >= 0 && k < nn; k++)
			if (k != j && (n2o[k] != NONE || k < j) && xg->nodes[k].part_number == gp)
				given = false;
		if (given)
			x->part_number = gp;
		else if (r->nc.super_found)
			x->part_number = ng->nodes[j].part_number;
		else if (anim) {
			int32_t mi = nwn_find_node(&r->X.geom, x->name);
			x->part_number = mi >= 0 ? r->X.geom.nodes[mi].part_number : -1;
		} else if (has_super)
			x->part_number = -1;
		else
			x->part_number = (int32_t)(maxp < INT32_MAX ? ++maxp : maxp);
		if (x->part_number > maxp)
			maxp = x->part_number;
	}
	/* node-count field: the old one moved by the node count difference,
	 * also when the supermodel is found (the compiler's "supermodel count
	 * + 1 + nodes" does not give the stored field of the BioWare files
	 * c_aribeth and a_ba_non_combat, test_structural_supermodel) */
	if (og && og->node_count_field >= no)
		xg->node_count_field = og->node_count_field - no + nn;
	else
		xg->node_count_field = og ? nn : ng->node_count_field;
	if (!anim) {
		r->chain = calloc((size_t)nn + 1, sizeof(bool));
		if (!r->chain) {
			e = lfs_nomem(r->err, "structural edit");
			goto out;
		}
		for (uint32_t j = 0; j < nn; j++) {
			uint32_t oi = n2o[j];
			const nwn_node *x = &xg->nodes[j];
			const mdl_node *gn = (oi != NONE && oi < n_gnodes) ? &gnodes[oi] : NULL;
			bool ok = gn && og->nodes[oi].flags == x->flags;
			int32_t pj = x->parent, po = ok ? og->nodes[oi].parent : -1;
			if (ok)
				ok = (pj < 0 && po < 0) || (pj >= 0 && po >= 0 && n2o[pj] == (uint32_t)po);
			if (ok)
				ok = sa_node_kw_same(gn, esrc[j], "position") && sa_node_kw_same(gn, esrc[j], "orientation");
			r->chain[j] = ok && (pj < 0 || ((uint32_t)pj < j && r->chain[pj]));
		}
		r->mo2n = o2n;
		r->mn2o = n2o;
		o2n = n2o = NULL;
		for (uint32_t j = 0; j < nn && !e; j++)
			if (xg->nodes[j].mesh && xg->nodes[j].mesh->skin)
				e = sa_fix_skin(r, j, gch[j], esrc[j]);
	}
out:
	free(n2o);
	free(o2n);
	free(gch);
	return e;
}

/* ---- model header and animations ---------------------------------------------- */

static bool doc_kw_same(const rb *r, const char *kw)
{
	return kw_same(r->dg->stmts, r->dg->n_stmts, r->de->stmts, r->de->n_stmts, kw);
}

static lfs_err classification(rb *r, uint8_t *out)
{
	const mdl_stmt *s = sa_find_kw(r->de->stmts, r->de->n_stmts, "classification");
	if (!s) {
		*out = 0;
		return LFS_OK;
	}
	const char *w = mdl_stmt_arg(s, 0);
	static const char *const names[] = { "unknown", "effect", "effects", "tile", "character", "door" };
	static const uint8_t vals[] = { 0, NWN_CLASS_EFFECT, NWN_CLASS_EFFECT, NWN_CLASS_TILE, NWN_CLASS_CHARACTER,
					NWN_CLASS_DOOR };
	for (int i = 0; w && i < 6; i++)
		if (!strcasecmp(w, names[i])) {
			*out = vals[i];
			return LFS_OK;
		}
	int64_t v;
	if (w && mdl_tok_int(w, &v) && v >= 0 && v <= 255) {
		*out = (uint8_t)v;
		return LFS_OK;
	}
	return lfs_fail_at(r->err, r->file, s->head.line, s->head.ntok > 1 ? s->head.tok[1].col : 1,
			   "classification is effect, tile, character, door, unknown or 0..255");
}

static bool events_same(const mdl_anim *g, const mdl_anim *e)
{
	uint32_t i = 0, j = 0;
	for (;;) {
		while (i < g->n_stmts && strcasecmp(stmt_key(&g->stmts[i]), "event"))
			i++;
		while (j < e->n_stmts && strcasecmp(stmt_key(&e->stmts[j]), "event"))
			j++;
		if (i >= g->n_stmts || j >= e->n_stmts)
			return i >= g->n_stmts && j >= e->n_stmts;
		if (!stmt_value_equal(&g->stmts[i], &e->stmts[j]))
			return false;
		i++;
		j++;
	}
}

static lfs_err merge_anims(rb *r)
{
	const nwn_model *o = r->O, *n = r->N;
	nwn_model *x = &r->X;
	uint32_t na = n->n_anims;
	int32_t *n2o = malloc(((size_t)na + 1) * sizeof(int32_t));
	bool *used = calloc((size_t)o->n_anims + 1, 1);
	lfs_err e = LFS_OK;
	x->anims = sa_rz(r, ((size_t)na + 1) * sizeof(nwn_anim));
	if (!n2o || !used || !x->anims) {
		e = lfs_nomem(r->err, "structural edit");
		goto out;
	}
	x->n_anims = na;
	sa_arr_set(&x->anims_arr, na);
	for (uint32_t a = 0; a < na; a++) {
		n2o[a] = -1;
		for (uint32_t b = 0; b < o->n_anims; b++)
			if (!used[b] && !strcasecmp(o->anims[b].geom.name, n->anims[a].geom.name)) {
				n2o[a] = (int32_t)b;
				used[b] = 1;
				break;
			}
	}
	/* renamed animations: the same position when that one is free */
	for (uint32_t a = 0; a < na; a++) {
		if (n2o[a] >= 0 || a >= o->n_anims || used[a])
			continue;
		bool named = false;
		for (uint32_t b = 0; b < o->n_anims && !named; b++)
			named = !strcasecmp(o->anims[b].geom.name, n->anims[a].geom.name);
		if (!named) {
			n2o[a] = (int32_t)a;
			used[a] = 1;
		}
	}
	for (uint32_t a = 0; a < na && !e; a++) {
		const nwn_anim *t = &n->anims[a];
		nwn_anim *y = &x->anims[a];
		const mdl_anim *ea = NULL;
		/* the text block of compiled animation a (same order) */
		if (a < r->de->n_anims)
			ea = &r->de->anims[a];
		if (n2o[a] < 0 || !ea || (uint32_t)n2o[a] >= r->dg->n_anims) {
			*y = *t;
			y->geom.off = NEWOFF;
			y->events_arr.off = (r->bioware && !y->n_events) ? 1 : 0;
			if (o->n_anims) {
				memcpy(y->geom.fn, o->anims[0].geom.fn, sizeof(y->geom.fn));
				y->geom.rt1_arr = o->anims[0].geom.rt1_arr;
				y->geom.rt2_arr = o->anims[0].geom.rt2_arr;
				y->geom.ref_count = o->anims[0].geom.ref_count;
			}
			e = merge_geometry(r, &y->geom, &t->geom, NULL, NULL, 0, r->nc.src[a + 1], r->nc.split[a + 1], true,
					   false);
			continue;
		}
		const nwn_anim *p = &o->anims[n2o[a]];
		const mdl_anim *ga = &r->dg->anims[n2o[a]];
		*y = *p;
		memcpy(y->geom.name, t->geom.name, sizeof(y->geom.name));
		nwn_fields_copy(NWN_FK_ANIM, y, t);
		if (!events_same(ga, ea)) {
			y->events = t->events;
			y->n_events = t->n_events;
			sa_arr_set(&y->events_arr, t->n_events);
		}
		e = merge_geometry(r, &y->geom, &t->geom, &p->geom, ga->nodes, ga->n_nodes, r->nc.src[a + 1],
				   r->nc.split[a + 1], true, false);
	}
out:
	free(n2o);
	free(used);
	return e;
}

static lfs_err merge_model(rb *r)
{
	const nwn_model *o = r->O, *n = r->N;
	nwn_model *x = &r->X;
	*x = *o;
	memcpy(x->geom.name, n->geom.name, sizeof(x->geom.name));
	lfs_err e;
	if (!doc_kw_same(r, "classification") && (e = classification(r, &x->classification)))
		return e;
	if (!doc_kw_same(r, "ignorefog"))
		x->fog = n->fog;
	if (!doc_kw_same(r, "setsupermodel"))
		memcpy(x->supermodel, n->supermodel, sizeof(x->supermodel));
	nwn_fields_copy(NWN_FK_MODEL, x, n); /* setanimationscale, ... */
	bool has_super = x->supermodel[0] && strcasecmp(x->supermodel, "NULL");
	if ((e = merge_geometry(r, &x->geom, &n->geom, &o->geom, r->dg->nodes, r->dg->n_nodes, r->nc.src[0],
				r->nc.split[0], false, has_super)))
		return e;
	if (r->new_emitter && !(x->radius >= 40.0f))
		x->radius = 40.0f; /* the compiler's floor for models with emitters */
	return merge_anims(r);
}

/* ---- entry ------------------------------------------------------------------------ */

lfs_err nwn_apply_structural(const uint8_t *orig, size_t n, const char *file, const char *text, size_t tn,
			     nwn_supermodel_lookup_fn lookup, void *ctx, uint8_t **out, size_t *outn,
			     lfs_error *err)
{
	return nwn_apply_structural_ex(orig, n, file, text, tn, lookup, ctx, NULL, out, outn, err);
}

/* Characters of a node name the binary keeps (the compiler cuts to 31). */
#define NODE_NAME_KEPT 31

static int cmp_node_name(const void *a, const void *b)
{
	const mdl_node *x = *(const mdl_node *const *)a, *y = *(const mdl_node *const *)b;
	int r = strncasecmp(x->name, y->name, NODE_NAME_KEPT);
	return r ? r : (x < y ? -1 : x > y);
}

/* A name given to more nodes of one geometry (the model's, or one
 * animation's) in the edited text @p en than in the text read from the
 * model file @p gn: refused at the first node beyond the model's count. The
 * game finds nodes by name (case ignored), so the added node would be saved
 * apart from the one it names (part number -1, moved to the end). Names
 * the model file already repeats (10 corpus sources, compiled as they are)
 * stay as they are. */
static lfs_err added_duplicates(const char *file, const mdl_node *en, uint32_t ne, const mdl_node *gn,
				uint32_t ng, lfs_error *err)
{
	if (ne < 2)
		return LFS_OK;
	const mdl_node **by = malloc((size_t)ne * sizeof(*by));
	if (!by)
		return lfs_nomem(err, NULL);
	for (uint32_t i = 0; i < ne; i++)
		by[i] = &en[i];
	qsort(by, ne, sizeof(*by), cmp_node_name);
	const mdl_node *dup = NULL, *first = NULL;
	for (uint32_t i = 0; i + 1 < ne;) {
		uint32_t j = i + 1;
		while (j < ne && !strncasecmp(by[i]->name, by[j]->name, NODE_NAME_KEPT))
			j++;
		if (j - i > 1) {
			uint32_t had = 0;
			for (uint32_t k = 0; k < ng; k++)
				had += !strncasecmp(gn[k].name, by[i]->name, NODE_NAME_KEPT);
			/* within a run, nodes are in file order (ties by address);
			 * the node the user added is the one without the
			 * `#part-number` comment every generated node has */
			uint32_t at = i + (had > 1 ? had : 1);
			for (uint32_t k = i; at < j && k < j; k++)
				if (!by[k]->has_part_number) {
					at = k;
					break;
				}
			if (at < j && (!dup || by[at] < dup)) {
				dup = by[at];
				first = by[at == i ? i + 1 : i];
			}
		}
		i = j;
	}
	free(by);
	if (!dup)
		return LFS_OK;
	return lfs_fail_at(err, file, dup->head.line, dup->head.ntok > 2 ? dup->head.tok[2].col : 1,
			   "another node named '%s' (also on line %u): node names must be unique, the game finds nodes by name",
			   dup->name, first->head.line);
}

/* added_duplicates() of the geometry and of every animation (matched with
 * the model file's by name). */
static lfs_err check_names(const char *file, const mdl_doc *de, const mdl_doc *dg, lfs_error *err)
{
	lfs_err e = added_duplicates(file, de->nodes, de->n_nodes, dg->nodes, dg->n_nodes, err);
	for (uint32_t a = 0; !e && a < de->n_anims; a++) {
		const mdl_anim *ga = NULL;
		for (uint32_t k = 0; k < dg->n_anims && !ga; k++)
			if (!strcasecmp(dg->anims[k].name, de->anims[a].name))
				ga = &dg->anims[k];
		e = added_duplicates(file, de->anims[a].nodes, de->anims[a].n_nodes, ga ? ga->nodes : NULL,
				     ga ? ga->n_nodes : 0, err);
	}
	return e;
}

lfs_err nwn_apply_structural_ex(const uint8_t *orig, size_t n, const char *file, const char *text, size_t tn,
				nwn_supermodel_lookup_fn lookup, void *ctx, lfs_warnings *warn, uint8_t **out,
				size_t *outn, lfs_error *err)
{
	*out = NULL;
	*outn = 0;
	rb r = { .file = file, .err = err };
	lfs_sb g = { 0 };
	lfs_err e = nwn_mdl_decode(orig, n, &r.O, err);
	if (e)
		return e;
	if ((e = nwn_ascii_write(r.O, &g, err)))
		goto done;
	lfs_error gerr;
	if ((e = mdl_parse(file, (const uint8_t *)g.data, g.len, &r.dg, &gerr))) {
		e = lfs_fail(err, e == LFS_ERR_NOMEM ? e : LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			     "%s: this model's text does not read back (%s)", file, gerr.msg);
		goto done;
	}
	if (r.dg->n_nodes != r.O->geom.n_nodes || r.dg->n_anims != r.O->n_anims) {
		e = lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL, "%s: this model's text does not match its nodes",
			     file);
		goto done;
	}
	if ((e = mdl_parse(file, (const uint8_t *)text, tn, &r.de, err)))
		goto done;
	if ((e = check_names(file, r.de, r.dg, err)))
		goto done;
	if ((e = nwn_compile_doc(file, r.de, lookup, ctx, warn, &r.nc, err)))
		goto done;
	r.N = r.nc.model;
	if (!r.N->geom.n_nodes) {
		e = lfs_fail_at(err, file, 1, 1, "the edited model has no root node (a node with 'parent NULL')");
		goto done;
	}
	r.alloc.fn = az;
	r.alloc.ctx = &r.nc;
	/* BioWare layout: empty arrays keep a position (e.g. the animation
	 * array of a model without animations, a leaf's children array) */
	r.bioware = r.O->anims_arr.off != 0;
	for (uint32_t i = 0; i < r.O->geom.n_nodes && !r.bioware; i++)
		r.bioware = (r.O->geom.nodes[i].children_arr.count == 0 && r.O->geom.nodes[i].children_arr.off) ||
			    (r.O->geom.nodes[i].ctrl_arr.count == 0 && r.O->geom.nodes[i].ctrl_arr.off);
	if ((e = merge_model(&r)))
		goto done;
	uint8_t *res = NULL;
	size_t rn = 0;
	if ((e = nwn_mdl_encode(&r.X, &res, &rn, err)))
		goto done;
	nwn_model *chk = NULL;
	lfs_error cerr;
	if (nwn_mdl_decode(res, rn, &chk, &cerr) != LFS_OK) {
		free(res);
		e = lfs_fail(err, LFS_ERR_CORRUPT, cerr.offset, cerr.structure,
			     "%s: the re-laid binary does not decode: %s", file, cerr.msg);
		goto done;
	}
	nwn_model_free(chk);
	*out = res;
	*outn = rn;
done:
	lfs_sb_free(&g);
	free(r.mo2n);
	free(r.mn2o);
	free(r.chain);
	nwn_compiled_free(&r.nc);
	mdl_doc_free(r.dg);
	mdl_doc_free(r.de);
	nwn_model_free(r.O);
	return e;
}

