/**
 * @file nwn_views.c
 * The Neverwinter Nights binary MDL row of the format registry
 * (lfs_format_nwn_mdl): the view list of a model (model.mdl, model.mtl,
 * model.obj, meshes/<node>.obj, anims/<anim>/<node>.<controller>.csv) with
 * each view's kind and target, and the apply entry that hands an edited view
 * to the NWN compiler (nwn_apply.h).
 *
 * Name scopes for names.h's uniqueness rule: mesh node names within
 * meshes/, animation names within anims/, node names within one
 * anims/<anim>/ directory. A node with two controllers of the same keyword
 * gets "~2", "~3" after the keyword ("<node>.position~2.csv").
 */
#include "nwn_views.h"

#include "common/mem.h"
#include "nwn_mdl.h"
#include "nwn_mdl_encode.h"
#include "law/law.h"
#include "registry/names.h"
#include "nwn_apply.h"
#include "nwn_ascii.h"
#include "nwn_compile.h"
#include "nwn_rename.h"
#include "nwn_csv.h"
#include "nwn_obj.h"
#include "render/thumb_models.h"
#include "registry/vlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ctrl_ord {
	uint32_t type, idx;
} ctrl_ord;

static int ctrl_ord_cmp(const void *a, const void *b)
{
	const ctrl_ord *x = a, *y = b;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* dup[k] = 1 for the first controller of its type on node @p n, 2 for the
 * second, ... (the file-name label is a function of the type). Sorting keeps
 * this O(k log k) even for hostile nodes with huge controller counts. */
static bool dup_numbers(const nwn_node *n, uint32_t *dup)
{
	ctrl_ord *o = malloc((size_t)n->n_ctrls * sizeof(*o));
	if (!o)
		return false;
	for (uint32_t k = 0; k < n->n_ctrls; k++) {
		o[k].type = n->ctrls[k].type;
		o[k].idx = k;
	}
	qsort(o, n->n_ctrls, sizeof(*o), ctrl_ord_cmp);
	for (uint32_t k = 0; k < n->n_ctrls; k++)
		dup[o[k].idx] = (k > 0 && o[k - 1].type == o[k].type) ? dup[o[k - 1].idx] + 1 : 1;
	free(o);
	return true;
}

/* Controller views of one animation. */
static void anim_views(const nwn_anim *an, uint32_t ai, const char *aname, bool wr,
		       lfs_vlist *l)
{
	lfs_nameset nodes;
	lfs_nameset_init(&nodes);
	const nwn_geometry *g = &an->geom;
	char path[1024];
	for (uint32_t i = 0; i < g->n_nodes && !l->failed; i++) {
		const nwn_node *n = &g->nodes[i];
		if (!n->n_ctrls)
			continue;
		const char *nn = lfs_nameset_add(&nodes, n->name);
		uint32_t *dup = malloc((size_t)n->n_ctrls * sizeof(*dup));
		if (!nn || !dup || !dup_numbers(n, dup)) {
			free(dup);
			l->failed = 1;
			break;
		}
		for (uint32_t k = 0; k < n->n_ctrls && !l->failed; k++) {
			const nwn_controller *c = &n->ctrls[k];
			char lb[48];
			const char *label = nwn_csv_controller_label(n, c, lb, sizeof(lb));
			if (dup[k] > 1)
				snprintf(path, sizeof(path), "anims/%s/%s.%s~%u.csv", aname, nn, label,
					 (unsigned)dup[k]);
			else
				snprintf(path, sizeof(path), "anims/%s/%s.%s.csv", aname, nn, label);
			lfs_view_target tg = { ai, i, k };
			if (!lfs_vlist_wants(l, path)) {
				/* listed as a full build lists it: bad keys leave it out */
				if (l->names_only && nwn_csv_controller_ok(n, c))
					lfs_vlist_name(l, path, LFS_VIEW_TRACK_CSV, tg, wr);
				continue;
			}
			lfs_sb sb = { 0 };
			lfs_error e2;
			lfs_err r = nwn_csv_controller(n, c, &sb, &e2);
			if (r == LFS_ERR_NOMEM) {
				lfs_sb_free(&sb);
				l->failed = 1;
			} else if (r != LFS_OK) {
				lfs_sb_free(&sb); /* bad keys: leave the file out */
			} else {
				lfs_vlist_add(l, path, LFS_VIEW_TRACK_CSV, tg, wr, &sb);
			}
		}
		free(dup);
	}
	lfs_nameset_free(&nodes);
}

lfs_err nwn_model_views(const nwn_model *m, const uint8_t *text, size_t tn,
			const lfs_view_opts *opts, lfs_vlist *l, lfs_error *err)
{
	const nwn_geometry *g = &m->geom;
	lfs_err r;
	lfs_sb sb = { 0 };
	/* an ASCII source: its views besides model.mdl are read-only */
	const bool wr = text == NULL;

	if (lfs_vlist_wants(l, "model.mdl")) {
		r = LFS_OK;
		if (text)
			lfs_sb_put(&sb, text, tn); /* a failed sb fails the list */
		else
			r = nwn_ascii_write(m, &sb, err);
		if (r) {
			lfs_sb_free(&sb);
			return r;
		}
		lfs_vlist_add(l, "model.mdl", LFS_VIEW_TEXT, LFS_VIEW_WHOLE, true, &sb);
	} else {
		lfs_vlist_name(l, "model.mdl", LFS_VIEW_TEXT, LFS_VIEW_WHOLE, true);
	}

	/* the material names are needed by every OBJ written (usemtl); the
	 * text of model.mtl (and its texture lookups) only when it is wanted */
	bool want_mtl = lfs_vlist_wants(l, "model.mtl");
	bool want_obj = !l->names_only &&
			(!l->only || strcmp(l->only, "model.obj") == 0 ||
			 strncmp(l->only, "meshes/", 7) == 0);
	nwn_obj_mats mats = { 0 };
	lfs_sb mtl = { 0 };
	if (want_mtl || want_obj) {
		r = nwn_obj_materials(m, opts, &mats, want_mtl ? &mtl : NULL, err);
		if (r) {
			lfs_sb_free(&mtl);
			nwn_obj_mats_free(&mats);
			return r;
		}
	}
	/* model.mtl is derived (materials merged by value): no way back.
	 * model.obj is writable: values only, each object back to its node
	 * (nwn_apply_obj.c). */
	if (want_mtl)
		lfs_vlist_add(l, "model.mtl", LFS_VIEW_MATERIALS, LFS_VIEW_WHOLE, false, &mtl);
	else
		lfs_vlist_name(l, "model.mtl", LFS_VIEW_MATERIALS, LFS_VIEW_WHOLE, false);

	const char **obj_names = calloc(g->n_nodes ? g->n_nodes : 1, sizeof(*obj_names));
	lfs_nameset meshes;
	lfs_nameset_init(&meshes);
	if (!obj_names)
		l->failed = 1;
	char path[1024];
	for (uint32_t i = 0; i < g->n_nodes && !l->failed; i++) {
		if (!g->nodes[i].mesh)
			continue;
		obj_names[i] = lfs_nameset_add(&meshes, g->nodes[i].name);
		if (!obj_names[i]) {
			l->failed = 1;
			break;
		}
		snprintf(path, sizeof(path), "meshes/%s.obj", obj_names[i]);
		lfs_view_target tg = { LFS_VIEW_NONE, i, LFS_VIEW_NONE };
		if (!lfs_vlist_wants(l, path)) {
			lfs_vlist_name(l, path, LFS_VIEW_MESH_OBJ, tg, wr);
			continue;
		}
		r = nwn_obj_mesh(m, i, obj_names[i], &mats, &sb, err);
		if (r)
			l->failed = 1;
		lfs_vlist_add(l, path, LFS_VIEW_MESH_OBJ, tg, wr, &sb);
	}
	if (!l->failed && !lfs_vlist_wants(l, "model.obj")) {
		lfs_vlist_name(l, "model.obj", LFS_VIEW_MODEL_OBJ, LFS_VIEW_WHOLE, wr);
	} else if (!l->failed) {
		r = nwn_obj_model(m, obj_names, &mats, &sb, err);
		if (r)
			l->failed = 1;
		lfs_vlist_add(l, "model.obj", LFS_VIEW_MODEL_OBJ, LFS_VIEW_WHOLE, wr, &sb);
	}
	free(obj_names);
	lfs_nameset_free(&meshes);
	nwn_obj_mats_free(&mats);

	lfs_nameset anims;
	lfs_nameset_init(&anims);
	/* only one view outside anims/ wanted: no animation is looked at */
	bool any_anim = !l->only || strncmp(l->only, "anims/", 6) == 0;
	for (uint32_t a = 0; a < m->n_anims && !l->failed && any_anim; a++) {
		const char *an = lfs_nameset_add(&anims, m->anims[a].geom.name);
		if (!an) {
			l->failed = 1;
			break;
		}
		anim_views(&m->anims[a], a, an, wr, l);
	}
	lfs_nameset_free(&anims);
	lfs_sb_free(&sb);
	return l->failed ? lfs_nomem(err, "views") : LFS_OK;
}

static lfs_err nwn_build(const uint8_t *data, size_t n, const lfs_view_opts *opts,
			 struct lfs_vlist *l, lfs_error *err)
{
	nwn_model *m = NULL;
	lfs_err r = nwn_mdl_decode(data, n, &m, err);
	if (r)
		return r;
	r = nwn_model_views(m, NULL, 0, opts, l, err);
	nwn_model_free(m);
	return r;
}

/* build_views of a model already decoded (the apply's checked result). */
static lfs_err nwn_build_model(const void *model, const lfs_view_opts *opts, struct lfs_vlist *l,
			       lfs_error *err)
{
	return nwn_model_views((const nwn_model *)model, NULL, 0, opts, l, err);
}

static lfs_err nwn_apply_decoded_any(const uint8_t *orig, size_t n, const lfs_view *v,
				     const char *text, size_t tn, const lfs_siblings *sib,
				     uint8_t **out, size_t *outn, void **result, lfs_error *err)
{
	nwn_model *m = NULL;
	lfs_err r = nwn_apply_view_decoded(orig, n, v, text, tn, sib, out, outn, &m, err);
	*result = m;
	return r;
}

LFS_FORMAT_CODEC(nwn, nwn_model, nwn_mdl_decode, nwn_mdl_encode, nwn_model_free)

static lfs_err nwn_compile_text(const char *file, const uint8_t *text, size_t n,
				const lfs_siblings *sib, uint8_t **out, size_t *outn,
				lfs_error *err)
{
	return nwn_compile_ex(file, text, n, sib ? sib->read : NULL, sib ? sib->ctx : NULL,
			      sib ? sib->warn : NULL, out, outn, err);
}

static const char *const nwn_extensions[] = { ".mdl", NULL };

/*
 * model.mdl and the round-trip law (law.h): the applier pairs the
 * statements of the model header, of each node and of each animation by
 * (keyword, occurrence) and the nodes by name, so their order is free;
 * `#part-number` comment lines are statements (nwn_apply_match.c).
 */
static const char *const nwn_law_kept[] = { "#part-number", NULL };
static const char *const nwn_law_open[] = { "node", "newanim", NULL };
static const char *const nwn_law_close[] = { "endnode", "doneanim", NULL };
/* What the compiler writes for a statement the text leaves out
 * (docs/nwn-compile.md "Compiler defaults"): zero for everything not listed,
 * the part numbers and the supermodel it derives, the model box and radius
 * it starts from, and the non-zero default of every field table row
 * (nwn_fields.def; a row without one adds another "everything 0"). */
#define NWN_FIELD(kind, kw, off, type, size, st, member, flags, dflt)                             \
	{ sizeof(dflt) > 1 ? (kw) : "*", sizeof(dflt) > 1 ? (dflt) : "0" },
static const lfs_law_default nwn_law_defaults[] = {
	{ "*", "0" },
	{ "#part-number", NULL },
	{ "normals", NULL }, /* computed per corner when the text has none */
	{ "colors", NULL },  /* vertex colours the compiler writes for a new mesh */
	{ "setsupermodel", "* NULL" },
	{ "bmin", "-5 -5 -1" },
	{ "bmax", "5 5 10" },
	{ "radius", "7" },
#include "nwn_fields.def"
	{ NULL, NULL },
};
#undef NWN_FIELD
/* newanim/doneanim <anim> <model>: the model name is not stored per
 * animation (it reads back as the model's own name) */
static const char *const nwn_law_free[] = { "newanim 2", "doneanim 2", NULL };
static const char *const nwn_law_aa[] = { "orientation", "orientationkey",
					   "orientationbezierkey", NULL };
/* The law over the whole model: a mesh node's lists, row i = OBJ element i
 * of meshes/<node>.obj; the bounds and the walkmesh AABB tree the compiler
 * derives from positions. */
static const lfs_law_list nwn_law_lists[] = {
	{ "verts", 'v', 0, 3 },	  { "tverts", 't', 0, 64 }, { "normals", 'n', 0, 3 },
	{ "faces", 'f', 0, 64 }, { NULL, 0, 0, 0 },
};
static const char *const nwn_law_derived[] = { "bmin", "bmax", "radius", "aabb", NULL };
static const lfs_law_dialect nwn_law = {
	.comment = '#',
	.kept_comments = nwn_law_kept,
	.any_order = true,
	.block_open = nwn_law_open,
	.block_close = nwn_law_close,
	.free_tokens = nwn_law_free,
	.axis_angle = nwn_law_aa,
	.defaults = nwn_law_defaults,
	.lists = nwn_law_lists,
	.derived = nwn_law_derived,
};

const lfs_format lfs_format_nwn_mdl = {
	.name = "nwn-mdl",
	.extensions = nwn_extensions,
	.detect = nwn_mdl_is_binary,
	.decode = nwn_decode_any,
	.encode = nwn_encode_any,
	.free_model = nwn_free_any,
	.build_views = nwn_build,
	.apply = nwn_apply_view,
	.apply_decoded = nwn_apply_decoded_any,
	.build_views_model = nwn_build_model,
	.thumb_scene = nwn_thumb_scene,
	.compile = nwn_compile_text,
	.siblings = "the supermodel <supermodel>.mdl beside the model (part numbers of new nodes)",
	.name_valid = nwn_resref_valid,
	.text_rename = nwn_text_rename,
	.law = &nwn_law,
	.corpus_dir = "nwn/tree",
};
