/**
 * @file nod_views.c
 * NOD views for the mount: detection, the view list, apply-a-view (nod_views.h).
 */
#include "nod_views.h"

#include "../common/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool nod_detect(const uint8_t *data, size_t n)
{
	return nod_is_binary(data, n);
}

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

lfs_err nod_views(const uint8_t *data, size_t n, const lfs_view_opts *opts, lfs_vlist *l,
		  lfs_error *err)
{
	nod_model *m = NULL;
	lfs_err r = nod_decode(data, n, &m, err);
	if (r)
		return r;
	nod_names nn;
	lfs_sb sb = { 0 };
	r = names_init(m, &nn, err);
	if (!r)
		r = nod_text_write(m, &sb, err);
	if (!r) {
		lfs_vlist_add(l, "model.txt", &sb);
		r = nod_mtl_write(m, opts, nn.mn, nn.untextured, &sb, err);
	}
	if (!r) {
		lfs_vlist_add(l, "model.mtl", &sb);
		r = nod_obj_model_write(m, nn.gn, nn.mn, nn.untextured, &sb, err);
	}
	if (!r)
		lfs_vlist_add(l, "model.obj", &sb);
	char path[1024];
	for (uint32_t g = 0; g < m->n_groups && !r && !l->failed; g++) {
		r = nod_obj_group_write(m, g, nn.gn, nn.mn, nn.untextured, &sb, err);
		if (r)
			break;
		snprintf(path, sizeof(path), "meshes/%s.obj", nn.gn[g]);
		lfs_vlist_add(l, path, &sb);
	}
	lfs_sb_free(&sb);
	names_free(&nn);
	nod_model_free(m);
	if (!r && l->failed)
		r = lfs_nomem(err, "views");
	return r;
}

lfs_err nod_apply_view(const uint8_t *orig, size_t n, const char *viewpath, const char *text,
		       size_t tn, uint8_t **out, size_t *outn, lfs_error *err)
{
	*out = NULL;
	*outn = 0;
	nod_model *m = NULL;
	lfs_err r;
	if (!strcmp(viewpath, "model.txt")) {
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
	if (!strcmp(viewpath, "model.obj")) {
		group = -1;
	} else if (!strncmp(viewpath, "meshes/", 7)) {
		size_t l = strlen(viewpath);
		for (uint32_t g = 0; g < m->n_groups; g++) {
			size_t gl = strlen(nn.gn[g]);
			if (l == 7 + gl + 4 && !memcmp(viewpath + 7, nn.gn[g], gl) &&
			    !strcmp(viewpath + 7 + gl, ".obj")) {
				group = (int32_t)g;
				break;
			}
		}
	}
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
