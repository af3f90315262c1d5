/**
 * @file nad_views.c
 * NAD: detection, the view list, apply-a-view, float text (see nad_views.h).
 */
#include "nad_views.h"

#include "common/mem.h"

#include "common/floatfmt.h"
#include "registry/names.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names -------------------------------------------------------------- */

void nad_track_names_free(char **names, uint32_t n)
{
	if (!names)
		return;
	for (uint32_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

char **nad_track_names(const nad_model *m)
{
	char **names = calloc(m->n_tracks ? m->n_tracks : 1, sizeof(*names));
	if (!names)
		return NULL;
	lfs_nameset set;
	lfs_nameset_init(&set);
	bool ok = true;
	for (uint32_t t = 0; t < m->n_tracks && ok; t++) {
		const nad_track *tr = &m->tracks[t];
		char raw[64];
		const char *tn = nad_track_type_name(tr->type);
		if (tn)
			snprintf(raw, sizeof(raw), "bone%" PRIu32 ".%s", tr->bone, tn);
		else
			snprintf(raw, sizeof(raw), "bone%" PRIu32 ".type%" PRIu32, tr->bone, tr->type);
		const char *u = lfs_nameset_add(&set, raw);
		names[t] = u ? strdup(u) : NULL;
		ok = names[t] != NULL;
	}
	lfs_nameset_free(&set);
	if (!ok) {
		nad_track_names_free(names, m->n_tracks);
		return NULL;
	}
	return names;
}

/* ---- views -------------------------------------------------------------- */

static lfs_err nad_views(const uint8_t *data, size_t n, const lfs_view_opts *opts,
			 lfs_vlist *l, lfs_error *err)
{
	(void)opts;
	nad_model *m = NULL;
	lfs_err r = nad_decode(data, n, &m, err);
	if (r)
		return r;
	lfs_sb sb = { 0 };
	/* each view's text is written only when wanted (lfs_vlist_wants) */
	if (!lfs_vlist_wants(l, "anim.txt"))
		lfs_vlist_name(l, "anim.txt", LFS_VIEW_TEXT, LFS_VIEW_WHOLE, true);
	else if (!(r = nad_text_write(m, &sb, err)))
		lfs_vlist_add(l, "anim.txt", LFS_VIEW_TEXT, LFS_VIEW_WHOLE, true, &sb);
	if (!r && !lfs_vlist_wants(l, "tags.csv"))
		lfs_vlist_name(l, "tags.csv", LFS_VIEW_TABLE_CSV, LFS_VIEW_WHOLE, true);
	else if (!r && !(r = nad_csv_tags_write(m, &sb, err)))
		lfs_vlist_add(l, "tags.csv", LFS_VIEW_TABLE_CSV, LFS_VIEW_WHOLE, true, &sb);
	char **names = NULL;
	if (!r) {
		names = nad_track_names(m);
		if (!names)
			r = lfs_nomem(err, "NAD views");
	}
	char path[256];
	for (uint32_t t = 0; !r && t < m->n_tracks && !l->failed; t++) {
		snprintf(path, sizeof(path), "tracks/%s.csv", names[t]);
		lfs_view_target tg = { LFS_VIEW_NONE, t, LFS_VIEW_NONE };
		if (!lfs_vlist_wants(l, path)) {
			lfs_vlist_name(l, path, LFS_VIEW_TRACK_CSV, tg, true);
			continue;
		}
		r = nad_csv_track_write(&m->tracks[t], &sb, err);
		if (r)
			break;
		lfs_vlist_add(l, path, LFS_VIEW_TRACK_CSV, tg, true, &sb);
	}
	nad_track_names_free(names, m->n_tracks);
	lfs_sb_free(&sb);
	nad_model_free(m);
	if (!r && l->failed)
		r = lfs_nomem(err, "NAD views");
	return r;
}

/* ---- apply -------------------------------------------------------------- */

static lfs_err nad_apply_view(const uint8_t *orig, size_t n, const lfs_view *v, const char *text,
			      size_t tn, const lfs_siblings *sib, uint8_t **out, size_t *outn,
			      lfs_error *err)
{
	(void)sib;
	*out = NULL;
	*outn = 0;
	const char *viewpath = v->path;
	nad_model *m = NULL;
	lfs_err r;
	if (v->kind == LFS_VIEW_TEXT) {
		/* The text holds every field: the original bytes are not needed,
		 * but they must still be a NAD (the caller edits a view of them). */
		if (!nad_is_binary(orig, n))
			return lfs_fail(err, LFS_ERR_NOTFORMAT, 0, "NAD header", "not a NAD v3 file");
		r = nad_text_parse(viewpath, text, tn, &m, err);
		if (r)
			return r;
		r = nad_encode(m, out, outn, err);
		nad_model_free(m);
		return r;
	}
	r = nad_decode(orig, n, &m, err);
	if (r)
		return r;
	if (v->kind == LFS_VIEW_TABLE_CSV) {
		nad_tag *tags = NULL;
		uint32_t nt = 0;
		r = nad_csv_tags_parse(viewpath, text, tn, &tags, &nt, err);
		if (!r) {
			free(m->tags);
			m->tags = tags;
			m->n_tags = nt;
		}
	} else if (v->kind == LFS_VIEW_TRACK_CSV && v->target.node < m->n_tracks) {
		nad_track *t = &m->tracks[v->target.node];
		nad_key *keys = NULL;
		uint32_t nk = 0;
		r = nad_csv_track_parse(viewpath, text, tn, &keys, &nk, err);
		if (!r) {
			free(t->keys);
			t->keys = keys;
			t->n_keys = nk;
		}
	} else {
		r = lfs_fail(err, LFS_ERR_NOTFORMAT, SIZE_MAX, "NAD views", "%s: no such view",
			     viewpath);
	}
	if (!r)
		r = nad_encode(m, out, outn, err);
	nad_model_free(m);
	return r;
}

LFS_FORMAT_CODEC(nad, nad_model, nad_decode, nad_encode, nad_model_free)

static const char *const nad_extensions[] = { ".nad", NULL };

/* No geometry: no thumbnail. */
const lfs_format lfs_format_nad = {
	.name = "nad",
	.extensions = nad_extensions,
	.detect = nad_is_binary,
	.decode = nad_decode_any,
	.encode = nad_encode_any,
	.free_model = nad_free_any,
	.build_views = nad_views,
	.apply = nad_apply_view,
	.corpus_dir = "nad",
};
