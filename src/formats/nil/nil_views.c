/**
 * @file nil_views.c
 * The NIL row of the format registry (lfs_format_nil): the read-only views
 * (see nil_views.h).
 */
#include "nil_views.h"

#include "common/mem.h"
#include "registry/names.h"
#include "nil_text.h"
#include "text/obj.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_MATERIAL "nil_no_material"

/* Triangle k of the strip, or false when it is a restart / out of range. */
static bool strip_tri(const nil_sector *s, size_t k, size_t t[3])
{
	const nil_wedge *w = s->wedges;
	uint16_t a = w[k].vertex, b = w[k + 1].vertex, c = w[k + 2].vertex;
	if (a == b || b == c || a == c || a >= s->n_vertices || b >= s->n_vertices ||
	    c >= s->n_vertices)
		return false;
	t[0] = k;
	t[1] = (k & 1) ? k + 2 : k + 1;
	t[2] = (k & 1) ? k + 1 : k + 2;
	return true;
}

size_t nil_sector_triangles(const nil_sector *s)
{
	size_t n = 0, t[3];
	for (size_t k = 0; k + 2 < s->n_wedges; k++)
		n += strip_tri(s, k, t);
	return n;
}

/* ---- materials --------------------------------------------------------- */

typedef struct mats {
	lfs_nameset set;
	const char **name; /* per header material */
	const char *none;
} mats;

static lfs_err materials(const nil_model *m, const lfs_view_opts *opts, mats *mt, lfs_sb *mtl,
			 lfs_error *err)
{
	lfs_nameset_init(&mt->set);
	mt->name = calloc(m->n_materials ? m->n_materials : 1, sizeof(*mt->name));
	mt->none = lfs_nameset_add(&mt->set, NO_MATERIAL);
	if (!mt->name || !mt->none)
		return lfs_nomem(err, "NIL views");
	lfs_sb_puts(mtl, "# legacyfs: materials of a NIL level, one per material name of the header\n"
			 "# (docs/formats/nil.md); the file stores names only, no colours\n");
	lfs_sb_printf(mtl, "\nnewmtl %s\nKd 0.5 0.5 0.5\n", mt->none);
	for (uint32_t i = 0; i < m->n_materials; i++) {
		char raw[NIL_NAME_SIZE + 1];
		size_t len = nil_name_len(m->materials[i]);
		memcpy(raw, m->materials[i], len);
		raw[len] = '\0';
		char clean[NIL_NAME_SIZE + 1];
		for (size_t k = 0; k <= len; k++)
			clean[k] = (raw[k] == ' ' || raw[k] == '\t' || raw[k] == '#') ? '_' : raw[k];
		mt->name[i] = lfs_nameset_add(&mt->set, clean);
		if (!mt->name[i])
			return lfs_nomem(err, "NIL views");
		lfs_sb_printf(mtl, "\n# material %" PRIu32 "\nnewmtl %s\nKd 1 1 1\n", i, mt->name[i]);
		/* texture resref = last component of "Dir\\Name" [N §3.2] */
		const char *stem = raw;
		for (const char *q = raw; *q; q++)
			if (*q == '\\' || *q == '/')
				stem = q + 1;
		if (*stem && opts && opts->texture_lookup) {
			char path[1024];
			path[0] = '\0';
			if (opts->texture_lookup(opts->texture_ctx, stem, path, sizeof(path)) && path[0] &&
			    !strpbrk(path, "\r\n"))
				lfs_sb_printf(mtl, "map_Kd %s\n", path);
		}
	}
	return lfs_sb_ok(mtl) ? LFS_OK : lfs_nomem(err, "NIL views");
}

static void mats_free(mats *mt)
{
	free(mt->name);
	lfs_nameset_free(&mt->set);
}

/* ---- OBJ --------------------------------------------------------------- */

/* One sector as OBJ statements; OBJ numbers of its first v / vt are
 * v0 + 1 / vt0 + 1. */
static void obj_sector(lfs_sb *o, const nil_model *m, const nil_sector *s, uint32_t idx,
		       const mats *mt, size_t v0, size_t vt0)
{
	char name[32];
	snprintf(name, sizeof(name), "sector%" PRIu32, idx);
	lfs_obj_write_stmt(o, "o", name);
	for (size_t i = 0; i < s->n_vertices; i++)
		lfs_obj_write_plain(o, LFS_OBJ_V, s->vertices + 3 * i);
	for (size_t i = 0; i < s->n_wedges; i++)
		lfs_obj_write_plain(o, LFS_OBJ_VT, s->wedges[i].uv);
	const char *cur = NULL;
	size_t t[3];
	for (size_t k = 0; k + 2 < s->n_wedges; k++) {
		if (!strip_tri(s, k, t))
			continue;
		uint16_t b = s->wedges[k].base;
		const char *mn = b < m->n_materials ? mt->name[b] : mt->none;
		if (mn != cur) {
			lfs_obj_write_stmt(o, "usemtl", mn);
			cur = mn;
		}
		size_t v[3], vt[3];
		for (int c = 0; c < 3; c++) {
			v[c] = v0 + s->wedges[t[c]].vertex;
			vt[c] = vt0 + t[c];
		}
		lfs_obj_write_f(o, 3, v, vt, NULL);
	}
}

static const char obj_head[] =
	"# legacyfs: NIL level geometry (docs/formats/nil.md), read-only\n"
	"# v = sector vertices as stored, vt = texture u v of each sector vertex as stored,\n"
	"# faces = the sector vertices read as a Direct3D triangle strip\n";

lfs_err nil_model_views(const nil_model *m, const lfs_view_opts *opts, lfs_vlist *l,
			lfs_error *err)
{
	lfs_sb sb = { 0 };
	lfs_err r = LFS_OK;
	/* each view's text is written only when wanted (lfs_vlist_wants) */
	if (!lfs_vlist_wants(l, "model.txt")) {
		lfs_vlist_name(l, "model.txt", LFS_VIEW_TEXT, LFS_VIEW_WHOLE, false);
	} else {
		r = nil_text_write(m, &sb, err);
		if (r) {
			lfs_sb_free(&sb);
			return r;
		}
		lfs_vlist_add(l, "model.txt", LFS_VIEW_TEXT, LFS_VIEW_WHOLE, false, &sb);
	}

	mats mt = { 0 };
	/* the material names are needed by every OBJ written; the texture
	 * lookups only by model.mtl */
	bool want_mtl = lfs_vlist_wants(l, "model.mtl");
	if (!l->names_only) {
		r = materials(m, want_mtl ? opts : NULL, &mt, &sb, err);
		if (r) {
			lfs_sb_free(&sb);
			mats_free(&mt);
			return r;
		}
	}
	if (want_mtl)
		lfs_vlist_add(l, "model.mtl", LFS_VIEW_MATERIALS, LFS_VIEW_WHOLE, false, &sb);
	else
		lfs_vlist_name(l, "model.mtl", LFS_VIEW_MATERIALS, LFS_VIEW_WHOLE, false);
	lfs_sb_free(&sb);

	if (lfs_vlist_wants(l, "model.obj")) {
		lfs_sb_puts(&sb, obj_head);
		lfs_obj_write_stmt(&sb, "mtllib", "model.mtl");
		size_t v0 = 0, vt0 = 0;
		for (uint32_t i = 0; i < m->n_decoded; i++) {
			obj_sector(&sb, m, &m->sectors[i], i, &mt, v0, vt0);
			v0 += m->sectors[i].n_vertices;
			vt0 += m->sectors[i].n_wedges;
		}
		if (!lfs_sb_ok(&sb))
			l->failed = 1;
		lfs_vlist_add(l, "model.obj", LFS_VIEW_MODEL_OBJ, LFS_VIEW_WHOLE, false, &sb);
	} else {
		lfs_vlist_name(l, "model.obj", LFS_VIEW_MODEL_OBJ, LFS_VIEW_WHOLE, false);
	}

	char path[64];
	for (uint32_t i = 0; i < m->n_decoded && !l->failed; i++) {
		snprintf(path, sizeof(path), "sectors/%" PRIu32 ".obj", i);
		if (!lfs_vlist_wants(l, path)) {
			lfs_vlist_name(l, path, LFS_VIEW_MESH_OBJ,
				       (lfs_view_target){ LFS_VIEW_NONE, i, LFS_VIEW_NONE }, false);
			continue;
		}
		lfs_sb_puts(&sb, obj_head);
		lfs_obj_write_stmt(&sb, "mtllib", "../model.mtl");
		obj_sector(&sb, m, &m->sectors[i], i, &mt, 0, 0);
		if (!lfs_sb_ok(&sb))
			l->failed = 1;
		lfs_vlist_add(l, path, LFS_VIEW_MESH_OBJ,
			      (lfs_view_target){ LFS_VIEW_NONE, i, LFS_VIEW_NONE }, false, &sb);
	}
	lfs_sb_free(&sb);
	mats_free(&mt);
	return l->failed ? lfs_nomem(err, "NIL views") : LFS_OK;
}

static lfs_err nil_views(const uint8_t *data, size_t n, const lfs_view_opts *opts,
			 lfs_vlist *l, lfs_error *err)
{
	nil_model *m = NULL;
	lfs_err r = nil_decode(data, n, &m, err);
	if (r)
		return r;
	r = nil_model_views(m, opts, l, err);
	nil_model_free(m);
	return r;
}

LFS_FORMAT_CODEC(nil, nil_model, nil_decode, nil_encode, nil_model_free)

static const char *const nil_extensions[] = { ".nil", NULL };

/* Read-only: the level layout is only partly documented (docs/formats/nil.md). */
const lfs_format lfs_format_nil = {
	.name = "nil",
	.extensions = nil_extensions,
	.detect = nil_is_binary,
	.decode = nil_decode_any,
	.encode = nil_encode_any,
	.free_model = nil_free_any,
	.build_views = nil_views,
	.thumb_scene = nil_thumb_scene,
	.corpus_dir = LFS_FORMAT_NO_CORPUS,
};
