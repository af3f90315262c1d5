/**
 * @file nad_views.c
 * NAD: detection, the view list, apply-a-view, float text (see nad_views.h).
 */
#include "nad_views.h"

#include "../common/mem.h"

#include "../common/floatfmt.h"
#include "names.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool nad_detect(const uint8_t *data, size_t n)
{
	return nad_is_binary(data, n);
}

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

lfs_err nad_views(const uint8_t *data, size_t n, const lfs_view_opts *opts, lfs_vlist *l,
		  lfs_error *err)
{
	(void)opts;
	nad_model *m = NULL;
	lfs_err r = nad_decode(data, n, &m, err);
	if (r)
		return r;
	lfs_sb sb = { 0 };
	r = nad_text_write(m, &sb, err);
	if (!r) {
		lfs_vlist_add(l, "anim.txt", &sb);
		r = nad_csv_tags_write(m, &sb, err);
	}
	if (!r)
		lfs_vlist_add(l, "tags.csv", &sb);
	char **names = NULL;
	if (!r) {
		names = nad_track_names(m);
		if (!names)
			r = lfs_nomem(err, "NAD views");
	}
	char path[256];
	for (uint32_t t = 0; !r && t < m->n_tracks && !l->failed; t++) {
		r = nad_csv_track_write(&m->tracks[t], &sb, err);
		if (r)
			break;
		snprintf(path, sizeof(path), "tracks/%s.csv", names[t]);
		lfs_vlist_add(l, path, &sb);
	}
	nad_track_names_free(names, m->n_tracks);
	lfs_sb_free(&sb);
	nad_model_free(m);
	if (!r && l->failed)
		r = lfs_nomem(err, "NAD views");
	return r;
}

/* ---- apply -------------------------------------------------------------- */

lfs_err nad_apply_view(const uint8_t *orig, size_t n, const char *viewpath, const char *text,
		       size_t tn, uint8_t **out, size_t *outn, lfs_error *err)
{
	*out = NULL;
	*outn = 0;
	if (!viewpath)
		return lfs_fail(err, LFS_ERR_NOTFORMAT, SIZE_MAX, "NAD views", "no view path");
	nad_model *m = NULL;
	lfs_err r;
	if (!strcmp(viewpath, "anim.txt")) {
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
	if (!strcmp(viewpath, "tags.csv")) {
		nad_tag *tags = NULL;
		uint32_t nt = 0;
		r = nad_csv_tags_parse(viewpath, text, tn, &tags, &nt, err);
		if (!r) {
			free(m->tags);
			m->tags = tags;
			m->n_tags = nt;
		}
	} else if (!strncmp(viewpath, "tracks/", 7)) {
		char **names = nad_track_names(m);
		if (!names) {
			r = lfs_nomem(err, "NAD views");
		} else {
			size_t pl = strlen(viewpath);
			uint32_t hit = UINT32_MAX;
			for (uint32_t t = 0; t < m->n_tracks; t++) {
				size_t nl = strlen(names[t]);
				if (pl == 7 + nl + 4 && !memcmp(viewpath + 7, names[t], nl) &&
				    !strcmp(viewpath + 7 + nl, ".csv")) {
					hit = t;
					break;
				}
			}
			nad_track_names_free(names, m->n_tracks);
			if (hit == UINT32_MAX) {
				r = lfs_fail(err, LFS_ERR_NOTFORMAT, SIZE_MAX, "NAD views",
					     "%s: no such track view", viewpath);
			} else {
				nad_key *keys = NULL;
				uint32_t nk = 0;
				r = nad_csv_track_parse(viewpath, text, tn, &keys, &nk, err);
				if (!r) {
					free(m->tracks[hit].keys);
					m->tracks[hit].keys = keys;
					m->tracks[hit].n_keys = nk;
				}
			}
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
