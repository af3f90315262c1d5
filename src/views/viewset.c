/**
 * @file viewset.c
 * Format detection and the set of generated views of one model (viewset.h).
 *
 * Name scopes for names.h's uniqueness rule: mesh node names within
 * meshes/, animation names within anims/, node names within one
 * anims/<anim>/ directory. A node with two controllers of the same keyword
 * gets "~2", "~3" after the keyword ("<node>.position~2.csv").
 */
#include "viewset.h"

#include "../formats/nwn/nwn_mdl.h"
#include "names.h"
#include "vlist.h"
#include "nad_views.h"
#include "nil_views.h"
#include "nod_views.h"
#include "sod_views.h"
#include "thumb_models.h"
#include "nwn_apply.h"
#include "nwn_ascii.h"
#include "nwn_csv.h"
#include "nwn_obj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void lfs_viewset_free(lfs_viewset *vs)
{
	if (!vs)
		return;
	for (size_t i = 0; i < vs->n_views; i++) {
		free(vs->views[i].path);
		free(vs->views[i].data);
	}
	free(vs->views);
	vs->views = NULL;
	vs->n_views = 0;
	vs->format = LFS_FMT_NONE;
}

const lfs_view *lfs_viewset_find(const lfs_viewset *vs, const char *path)
{
	size_t lo = 0, hi = vs->n_views;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(path, vs->views[mid].path);
		if (c == 0)
			return &vs->views[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* ---- NWN ------------------------------------------------------------------ */

static lfs_err nomem(lfs_error *err)
{
	return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "views", "out of memory building views");
}

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
static void anim_views(const nwn_anim *an, const char *aname, lfs_vlist *l)
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
			lfs_sb sb = { 0 };
			lfs_error e2;
			lfs_err r = nwn_csv_controller(n, c, &sb, &e2);
			if (r == LFS_ERR_NOMEM) {
				lfs_sb_free(&sb);
				l->failed = 1;
			} else if (r != LFS_OK) {
				lfs_sb_free(&sb); /* bad keys: leave the file out */
			} else {
				lfs_vlist_add(l, path, &sb);
			}
		}
		free(dup);
	}
	lfs_nameset_free(&nodes);
}

static lfs_err nwn_views(const nwn_model *m, const lfs_view_opts *opts, lfs_vlist *l,
			 lfs_error *err)
{
	const nwn_geometry *g = &m->geom;
	lfs_err r;
	lfs_sb sb = { 0 };

	r = nwn_ascii_write(m, &sb, err);
	if (r) {
		lfs_sb_free(&sb);
		return r;
	}
	lfs_vlist_add(l, "model.mdl", &sb);

	nwn_obj_mats mats = { 0 };
	lfs_sb mtl = { 0 };
	r = nwn_obj_materials(m, opts, &mats, &mtl, err);
	if (r) {
		lfs_sb_free(&mtl);
		nwn_obj_mats_free(&mats);
		return r;
	}
	lfs_vlist_add(l, "model.mtl", &mtl);

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
		r = nwn_obj_mesh(m, i, obj_names[i], &mats, &sb, err);
		if (r)
			l->failed = 1;
		lfs_vlist_add(l, path, &sb);
	}
	if (!l->failed) {
		r = nwn_obj_model(m, obj_names, &mats, &sb, err);
		if (r)
			l->failed = 1;
		lfs_vlist_add(l, "model.obj", &sb);
	}
	free(obj_names);
	lfs_nameset_free(&meshes);
	nwn_obj_mats_free(&mats);

	lfs_nameset anims;
	lfs_nameset_init(&anims);
	for (uint32_t a = 0; a < m->n_anims && !l->failed; a++) {
		const char *an = lfs_nameset_add(&anims, m->anims[a].geom.name);
		if (!an) {
			l->failed = 1;
			break;
		}
		anim_views(&m->anims[a], an, l);
	}
	lfs_nameset_free(&anims);
	lfs_sb_free(&sb);
	return l->failed ? nomem(err) : LFS_OK;
}

/* ---- dispatch --------------------------------------------------------------- */

static lfs_err nwn_build(const uint8_t *data, size_t n, const lfs_view_opts *opts, lfs_vlist *l,
			 lfs_error *err)
{
	nwn_model *m = NULL;
	lfs_err r = nwn_mdl_decode(data, n, &m, err);
	if (r)
		return r;
	r = nwn_views(m, opts, l, err);
	nwn_model_free(m);
	return r;
}

/* SOD's model.obj bakes node transforms and LOD choice in: no exact way back. */
static bool sod_writable(const char *viewpath)
{
	return strcmp(viewpath, "model.obj") != 0 && strcmp(viewpath, "model.mtl") != 0;
}

/* NWN's model.obj places every mesh in model space and merges nodes: no way back. */
static bool nwn_writable(const char *viewpath)
{
	return strcmp(viewpath, "model.obj") != 0 && strcmp(viewpath, "model.mtl") != 0;
}

/* NOD's model.obj is the rest-pose vertices as stored (model space): exact. */
static bool nod_writable(const char *viewpath)
{
	return strcmp(viewpath, "model.mtl") != 0;
}

/**
 * One row per format: file name extension (case-insensitive), cheap header
 * test, and the builder that decodes and appends every view.
 */
typedef struct lfs_format_entry {
	lfs_format format;
	const char *ext;
	bool (*detect)(const uint8_t *data, size_t n);
	lfs_err (*build)(const uint8_t *data, size_t n, const lfs_view_opts *opts, lfs_vlist *l,
			 lfs_error *err);
	/** NULL while the format has no encoder (read-only views) */
	lfs_err (*apply)(const uint8_t *orig, size_t n, const char *viewpath, const char *text,
			 size_t tn, uint8_t **out, size_t *outn, lfs_error *err);
	/** views that map back exactly; NULL = every view the format lists */
	bool (*writable)(const char *viewpath);
	/** apply with a sibling-file lookup (NWN supermodel); NULL = use apply */
	lfs_err (*apply_ex)(const uint8_t *orig, size_t n, const char *viewpath, const char *text,
			    size_t tn, nwn_supermodel_lookup_fn sib, void *sib_ctx, uint8_t **out,
			    size_t *outn, lfs_error *err);
} lfs_format_entry;

static const lfs_format_entry formats[] = {
	{ LFS_FMT_NWN_MDL, ".mdl", nwn_mdl_is_binary, nwn_build, nwn_apply_view, nwn_writable,
	  nwn_apply_view_ex },
	{ LFS_FMT_NOD, ".nod", nod_detect, nod_views, nod_apply_view, nod_writable, NULL },
	{ LFS_FMT_NAD, ".nad", nad_detect, nad_views, nad_apply_view, NULL, NULL },
	{ LFS_FMT_NIL, ".nil", nil_detect, nil_views, NULL, NULL, NULL },
	{ LFS_FMT_SOD, ".sod", sod_detect, sod_views, sod_apply_view, sod_writable, NULL },
};

static const lfs_format_entry *entry_for(const char *name, const uint8_t *data, size_t n)
{
	size_t len = name ? strlen(name) : 0;
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		const lfs_format_entry *f = &formats[i];
		size_t el = strlen(f->ext);
		if (name && (len <= el || strcasecmp(name + len - el, f->ext)))
			continue;
		if (f->detect(data, n))
			return f;
	}
	return NULL;
}

lfs_format lfs_detect(const char *name, const uint8_t *data, size_t n)
{
	const lfs_format_entry *f = entry_for(name, data, n);
	return f ? f->format : LFS_FMT_NONE;
}

lfs_err lfs_views_build(const char *name, const uint8_t *data, size_t n,
			const lfs_view_opts *opts, lfs_viewset *out, lfs_error *err)
{
	memset(out, 0, sizeof(*out));
	const lfs_format_entry *f = entry_for(name, data, n);
	if (!f)
		return lfs_fail(err, LFS_ERR_NOTFORMAT, SIZE_MAX, "file header",
				"%s: not a binary model", name ? name : "(unnamed)");
	lfs_vlist l = { 0 };
	lfs_err r = f->build(data, n, opts, &l, err);
	if (!r && opts && opts->thumb_size) {
		/* thumbnail.png: a model without drawable triangles (or whose render
		 * fails) simply has none; the other views stand. */
		uint8_t *png = NULL;
		size_t pngn = 0;
		lfs_error te;
		if (lfs_thumb_model(f->format, data, n, opts->thumb_size, opts, opts->thumb_uri,
				    opts->thumb_mtime, &png, &pngn, &te) == LFS_OK) {
			lfs_sb sb = { 0 };
			lfs_sb_put(&sb, png, pngn);
			lfs_vlist_add(&l, "thumbnail.png", &sb);
		}
		free(png);
	}
	if (!r && l.failed)
		r = nomem(err);
	if (r) {
		lfs_vlist_discard(&l);
		return r;
	}
	lfs_vlist_finish(&l, out);
	out->format = f->format;
	return LFS_OK;
}

lfs_err lfs_views_apply(const char *name, const uint8_t *orig, size_t n, const char *viewpath,
			const char *text, size_t tn, uint8_t **out, size_t *outn, lfs_error *err)
{
	return lfs_views_apply_ex(name, orig, n, viewpath, text, tn, NULL, NULL, out, outn, err);
}

lfs_err lfs_views_apply_ex(const char *name, const uint8_t *orig, size_t n, const char *viewpath,
			   const char *text, size_t tn, lfs_sibling_read_fn sib, void *sib_ctx,
			   uint8_t **out, size_t *outn, lfs_error *err)
{
	*out = NULL;
	*outn = 0;
	const lfs_format_entry *f = entry_for(name, orig, n);
	if (!f)
		return lfs_fail(err, LFS_ERR_NOTFORMAT, SIZE_MAX, "file header",
				"%s: not a binary model", name ? name : "(unnamed)");
	if (!f->apply || !lfs_view_writable(f->format, viewpath))
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: this view is read-only", viewpath);
	if (f->apply_ex && sib)
		return f->apply_ex(orig, n, viewpath, text, tn, sib, sib_ctx, out, outn, err);
	return f->apply(orig, n, viewpath, text, tn, out, outn, err);
}

bool lfs_view_writable(lfs_format format, const char *viewpath)
{
	if (!strcmp(viewpath, "thumbnail.png"))
		return false; /* rendered, never parsed back */
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (formats[i].format == format)
			return formats[i].apply &&
			       (!formats[i].writable || formats[i].writable(viewpath));
	return false;
}

/* ---- thumbnails (thumb_models.h) ------------------------------------------ */

lfs_err lfs_views_thumbnail(const char *name, const uint8_t *data, size_t n, unsigned size,
			    const lfs_view_opts *opts, const char *uri, int64_t mtime,
			    uint8_t **png, size_t *pngn, lfs_error *err)
{
	*png = NULL;
	*pngn = 0;
	const lfs_format_entry *f = entry_for(name, data, n);
	if (!f)
		return lfs_fail(err, LFS_ERR_NOTFORMAT, SIZE_MAX, "file header",
				"%s: not a binary model", name ? name : "(unnamed)");
	return lfs_thumb_model(f->format, data, n, size, opts, uri, mtime, png, pngn, err);
}
