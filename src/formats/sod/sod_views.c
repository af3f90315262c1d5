/**
 * @file sod_views.c
 * SOD views: detection, the view names, the list of views of a model and
 * applying an edited view (sod_views.h, docs/formats/sod.md). The views
 * themselves: sod_text.c (model.txt), sod_obj.c (OBJ, MTL), sod_csv.c (CSV).
 */
#include "sod_views.h"

#include "common/mem.h"
#include "law/law.h"
#include "registry/names.h"
#include "sod_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- builder and apply ---------------------------------------------------- */

/* Do all faces of mesh @p me name stored positions and texture coordinates?
 * A face that does not (a damaged file) is written as it is stored, and the
 * OBJ apply refuses it ("vertex index N out of range"): the unedited view
 * would not save. Such a mesh's OBJ is read-only. */
static bool mesh_faces_in_range(const sod_mesh *me)
{
	for (uint16_t g = 0; g < me->n_groups; g++)
		for (uint16_t f = 0; f < me->groups[g].n_faces; f++)
			for (int k = 0; k < 3; k++)
				if (me->groups[g].faces[f].v[k] >= me->n_verts ||
				    me->groups[g].faces[f].t[k] >= me->n_tverts)
					return false;
	return true;
}

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
		e = lfs_nomem(err, "SOD views");
		goto out;
	}
	/* each view's text is written only when wanted (lfs_vlist_wants) */
	if (!lfs_vlist_wants(l, "model.txt"))
		lfs_vlist_name(l, "model.txt", LFS_VIEW_TEXT, LFS_VIEW_WHOLE, true);
	else if ((e = sod_text_write(m, &sb, err)))
		goto out;
	else
		lfs_vlist_add(l, "model.txt", LFS_VIEW_TEXT, LFS_VIEW_WHOLE, true, &sb);
	/* model.mtl and model.obj bake node transforms and the LOD choice in:
	 * no exact way back. */
	if (!lfs_vlist_wants(l, "model.mtl"))
		lfs_vlist_name(l, "model.mtl", LFS_VIEW_MATERIALS, LFS_VIEW_WHOLE, false);
	else if ((e = sod_mtl_write(m, opts, &sb, err)))
		goto out;
	else
		lfs_vlist_add(l, "model.mtl", LFS_VIEW_MATERIALS, LFS_VIEW_WHOLE, false, &sb);
	if (!lfs_vlist_wants(l, "model.obj"))
		lfs_vlist_name(l, "model.obj", LFS_VIEW_MODEL_OBJ, LFS_VIEW_WHOLE, false);
	else if ((e = sod_obj_model_write(m, nm.node_obj, &sb, err)))
		goto out;
	else
		lfs_vlist_add(l, "model.obj", LFS_VIEW_MODEL_OBJ, LFS_VIEW_WHOLE, false, &sb);
	for (uint16_t i = 0; i < m->n_nodes; i++) {
		if (!nm.node_obj[i])
			continue;
		snprintf(path, sizeof(path), "meshes/%s.obj", nm.node_obj[i]);
		lfs_view_target tg = { LFS_VIEW_NONE, i, LFS_VIEW_NONE };
		bool w = mesh_faces_in_range(m->nodes[i].mesh);
		if (!lfs_vlist_wants(l, path)) {
			lfs_vlist_name(l, path, LFS_VIEW_MESH_OBJ, tg, w);
			continue;
		}
		if ((e = sod_obj_mesh(m, i, nm.node_obj[i], &sb, err)))
			goto out;
		lfs_vlist_add(l, path, LFS_VIEW_MESH_OBJ, tg, w, &sb);
	}
	for (uint16_t i = 0; i < m->n_channels; i++) {
		snprintf(path, sizeof(path), "anims/%s.csv", nm.chan_csv[i]);
		lfs_view_target tg = { LFS_VIEW_NONE, i, LFS_VIEW_NONE };
		if (!lfs_vlist_wants(l, path)) {
			lfs_vlist_name(l, path, LFS_VIEW_TRACK_CSV, tg, true);
			continue;
		}
		if ((e = sod_csv_channel(m, i, &sb, err)))
			goto out;
		lfs_vlist_add(l, path, LFS_VIEW_TRACK_CSV, tg, true, &sb);
	}
	if (l->failed)
		e = lfs_nomem(err, "SOD views");
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
		e = sod_obj_apply(m, m->nodes[i].mesh, viewpath, text, tn, err);
	else if (v->kind == LFS_VIEW_TRACK_CSV && i < m->n_channels)
		e = sod_csv_apply(m, &m->channels[i], viewpath, text, tn, err);
	else
		e = lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, viewpath,
			     "read-only view (derived; edit meshes/*.obj or model.txt instead)");
	if (!e)
		e = sod_encode(m, out, outn, err);
	sod_model_free(m);
	return e;
}

LFS_FORMAT_CODEC(sod, sod_model, sod_decode, sod_encode, sod_model_free)

static const char *const sod_extensions[] = { ".sod", NULL };

/*
 * model.txt and the round-trip law (law.h): inside a node, material, group,
 * channel or reference block the parser takes statements by keyword
 * (sod_text.c), so their order is free there.
 */
static const char *const sod_law_open[] = { "node",    "material",  "group",
					     "channel", "reference", NULL };
static const char *const sod_law_close[] = { "endnode",	   "endmaterial",  "endgroup",
					      "endchannel", "endreference", NULL };
/* anims/<node>.csv: `time` is derived from the key count and period and
 * ignored by the apply (sod_csv.c) */
static const char *const sod_law_csv_free[] = { "time", NULL };
/* The law over the whole model: a mesh node's lists, row i = OBJ element i
 * of meshes/<node>.obj. */
static const lfs_law_list sod_law_lists[] = {
	{ "verts", 'v', 0, 3 }, { "tverts", 't', 0, 2 }, { NULL, 0, 0, 0 },
};
static const lfs_law_dialect sod_law = {
	.comment = '#',
	.any_order = true,
	.block_open = sod_law_open,
	.block_close = sod_law_close,
	.csv_free_columns = sod_law_csv_free,
	.lists = sod_law_lists,
};

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
	.law = &sod_law,
	.corpus_dir = "sod",
};
