/**
 * @file nod_views.c
 * The NOD row of the format registry (lfs_format_nod): the view list with
 * each view's kind and target, and the apply entry (nod_views.h).
 */
#include "nod_views.h"

#include "common/mem.h"
#include "law/law.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Names shared by the writers: group OBJ names and MTL material names. */
typedef struct nod_names {
	lfs_nameset groups, mats;
	const char **gn, **mn, *untextured;
} nod_names;

static void names_free(nod_names *nn)
{
	lfs_nameset_free(&nn->groups);
	lfs_nameset_free(&nn->mats);
	free(nn->gn);
	free(nn->mn);
}

static lfs_err names_init(const nod_model *m, nod_names *nn, lfs_error *err)
{
	memset(nn, 0, sizeof(*nn));
	lfs_nameset_init(&nn->groups);
	lfs_nameset_init(&nn->mats);
	nn->gn = calloc(m->n_groups ? m->n_groups : 1, sizeof(*nn->gn));
	nn->mn = calloc(m->n_materials ? m->n_materials : 1, sizeof(*nn->mn));
	if (!nn->gn || !nn->mn)
		return lfs_nomem(err, "views");
	lfs_err r = nod_group_names(m, &nn->groups, nn->gn, err);
	if (!r)
		r = nod_mtl_names(m, &nn->mats, nn->mn, &nn->untextured, err);
	return r;
}

/* Does every face of group @p g name vertices of the group? A face that does
 * not (a damaged file) is left out of the group's OBJ (a comment), so that
 * OBJ cannot map back: saving it would drop the face. Such a group's mesh
 * OBJ, and model.obj, are read-only; so are those of a group whose name does
 * not read back from an `o` line (nod_obj_name_ok()). */
static bool group_faces_in_range(const nod_model *m, uint32_t g)
{
	const nod_group *gr = &m->groups[g];
	const nod_face *fs = m->faces + gr->first_face;
	for (uint32_t i = 0; i < gr->n_faces; i++)
		for (int k = 0; k < 3; k++)
			if (fs[i].v[k] >= gr->n_verts)
				return false;
	return true;
}

static lfs_err nod_views(const uint8_t *data, size_t n, const lfs_view_opts *opts, lfs_vlist *l,
			 lfs_error *err)
{
	nod_model *m = NULL;
	lfs_err r = nod_decode(data, n, &m, err);
	if (r)
		return r;
	nod_names nn;
	lfs_sb sb = { 0 };
	r = names_init(m, &nn, err);
	/* each view's text is written only when wanted (lfs_vlist_wants) */
	if (!r && !lfs_vlist_wants(l, "model.txt"))
		lfs_vlist_name(l, "model.txt", LFS_VIEW_TEXT, LFS_VIEW_WHOLE, true);
	else if (!r && !(r = nod_text_write(m, &sb, err)))
		lfs_vlist_add(l, "model.txt", LFS_VIEW_TEXT, LFS_VIEW_WHOLE, true, &sb);
	if (!r && !lfs_vlist_wants(l, "model.mtl"))
		lfs_vlist_name(l, "model.mtl", LFS_VIEW_MATERIALS, LFS_VIEW_WHOLE, false);
	else if (!r && !(r = nod_mtl_write(m, opts, nn.mn, nn.untextured, &sb, err)))
		lfs_vlist_add(l, "model.mtl", LFS_VIEW_MATERIALS, LFS_VIEW_WHOLE, false, &sb);
	/* NOD's model.obj is the rest-pose vertices as stored (model space):
	 * exact, unless a group has faces it must leave out */
	bool all_in_range = true;
	for (uint32_t g = 0; g < m->n_groups && nn.gn; g++)
		all_in_range = all_in_range && group_faces_in_range(m, g) &&
			       nn.gn[g] && nod_obj_name_ok(nn.gn[g]);
	if (!r && !lfs_vlist_wants(l, "model.obj"))
		lfs_vlist_name(l, "model.obj", LFS_VIEW_MODEL_OBJ, LFS_VIEW_WHOLE, all_in_range);
	else if (!r && !(r = nod_obj_model_write(m, nn.gn, nn.mn, nn.untextured, &sb, err)))
		lfs_vlist_add(l, "model.obj", LFS_VIEW_MODEL_OBJ, LFS_VIEW_WHOLE, all_in_range, &sb);
	char path[1024];
	for (uint32_t g = 0; g < m->n_groups && !r && !l->failed; g++) {
		snprintf(path, sizeof(path), "meshes/%s.obj", nn.gn[g]);
		lfs_view_target tg = { LFS_VIEW_NONE, g, LFS_VIEW_NONE };
		bool w = group_faces_in_range(m, g) && nod_obj_name_ok(nn.gn[g]);
		if (!lfs_vlist_wants(l, path)) {
			lfs_vlist_name(l, path, LFS_VIEW_MESH_OBJ, tg, w);
			continue;
		}
		r = nod_obj_group_write(m, g, nn.gn, nn.mn, nn.untextured, &sb, err);
		if (r)
			break;
		lfs_vlist_add(l, path, LFS_VIEW_MESH_OBJ, tg, w, &sb);
	}
	lfs_sb_free(&sb);
	names_free(&nn);
	nod_model_free(m);
	if (!r && l->failed)
		r = lfs_nomem(err, "views");
	return r;
}

static lfs_err nod_apply_view(const uint8_t *orig, size_t n, const lfs_view *v, const char *text,
			      size_t tn, const lfs_siblings *sib, uint8_t **out, size_t *outn,
			      lfs_error *err)
{
	(void)sib;
	*out = NULL;
	*outn = 0;
	const char *viewpath = v->path;
	nod_model *m = NULL;
	lfs_err r;
	if (v->kind == LFS_VIEW_TEXT) {
		/* the whole model comes from the text; orig must still decode */
		r = nod_decode(orig, n, &m, err);
		nod_model_free(m);
		m = NULL;
		if (!r)
			r = nod_text_parse(viewpath, text, tn, &m, err);
		if (!r)
			r = nod_encode(m, out, outn, err);
		nod_model_free(m);
		return r;
	}
	r = nod_decode(orig, n, &m, err);
	if (r)
		return r;
	nod_names nn;
	r = names_init(m, &nn, err);
	if (r)
		goto done;
	int32_t group = -2;
	if (v->kind == LFS_VIEW_MODEL_OBJ)
		group = -1;
	else if (v->kind == LFS_VIEW_MESH_OBJ && v->target.node < m->n_groups)
		group = (int32_t)v->target.node;
	if (group == -2) {
		r = lfs_fail(err, LFS_ERR_NOTFORMAT, SIZE_MAX, "views",
			     "%s is not an editable view of this NOD file", viewpath);
		goto done;
	}
	r = nod_obj_apply(m, group, nn.gn, viewpath, text, tn, err);
	if (!r)
		r = nod_encode(m, out, outn, err);
done:
	names_free(&nn);
	nod_model_free(m);
	return r;
}

LFS_FORMAT_CODEC(nod, nod_model, nod_decode, nod_encode, nod_model_free)

static const char *const nod_extensions[] = { ".nod", NULL };

/* model.txt and the round-trip law (law.h): statements compare in order
 * (the strict reading); for the law over the whole model, `node ...
 * endnode` blocks name their lines, and a `verts` row shows one vertex of
 * the mesh group its `# group N (meshes/NAME.obj)` comment names: position,
 * normal and uv (stored v) by column; a `faces` row one face; the
 * `lodcollapse` rows (one per vertex, numbered across the model) follow any
 * edit that adds or removes vertices; the model's
 * bounds are derived from the positions (docs/formats/nod.md). */
static const char *const nod_law_open[] = { "node", NULL };
static const char *const nod_law_close[] = { "endnode", NULL };
static const lfs_law_list nod_law_lists[] = {
	{ "verts", 'v', 0, 3 }, { "verts", 'n', 3, 3 }, { "verts", 't', 6, 2 },
	{ "faces", 'f', 0, 64 }, { "lodcollapse", '*', 0, 0 }, { NULL, 0, 0, 0 },
};
static const char *const nod_law_derived[] = { "boundsmin", "boundsmax", NULL };
static const lfs_law_dialect nod_law = {
	.comment = '#',
	.block_open = nod_law_open,
	.block_close = nod_law_close,
	.lists = nod_law_lists,
	.derived = nod_law_derived,
};

const lfs_format lfs_format_nod = {
	.name = "nod",
	.extensions = nod_extensions,
	.detect = nod_is_binary,
	.decode = nod_decode_any,
	.encode = nod_encode_any,
	.free_model = nod_free_any,
	.build_views = nod_views,
	.apply = nod_apply_view,
	.thumb_scene = nod_thumb_scene,
	.law = &nod_law,
	.corpus_dir = "nod",
};
