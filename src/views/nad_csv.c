/**
 * @file nad_csv.c
 * Track and tag CSVs of a NAD file, writers and parsers (see nad_views.h,
 * docs/formats/nad.md).
 *
 * Owns the NAD mapping only (columns, tag names); the CSV syntax is csv.h's:
 * a header row, one row per key/tag, CRLF record ends, read with
 * LFS_CSV_LENIENT (LF ends, blank lines, spaces or tabs around fields and a
 * leading UTF-8 byte order mark are accepted).
 */
#include "nad_views.h"

#include "../common/mem.h"
#include "csv.h"

#include <inttypes.h>
#include <stdlib.h>

const char nad_csv_track_header[] =
	"frame,frame_scale,x,y,z,c_x,c_y,c_z,b_x,b_y,b_z,a_x,a_y,a_z";

static const char tags_header[] = "frame,tag";

lfs_err nad_csv_track_write(const nad_track *t, lfs_sb *sb, lfs_error *err)
{
	lfs_csv_write_header(sb, nad_csv_track_header);
	for (uint32_t k = 0; k < t->n_keys; k++) {
		lfs_csv_write_floats(sb, t->keys[k].v, NAD_KEY_FLOATS);
		lfs_csv_write_eol(sb);
	}
	if (!lfs_sb_ok(sb))
		return lfs_nomem(err, "track csv");
	return LFS_OK;
}

lfs_err nad_csv_tags_write(const nad_model *m, lfs_sb *sb, lfs_error *err)
{
	lfs_csv_write_header(sb, tags_header);
	for (uint32_t i = 0; i < m->n_tags; i++) {
		lfs_csv_write_floats(sb, &m->tags[i].frame, 1);
		const char *name = nad_tag_name(m->tags[i].type);
		if (name)
			lfs_sb_printf(sb, ",%s", name);
		else
			lfs_sb_printf(sb, ",%" PRIu32, m->tags[i].type);
		lfs_csv_write_eol(sb);
	}
	if (!lfs_sb_ok(sb))
		return lfs_nomem(err, "tags.csv");
	return LFS_OK;
}

lfs_err nad_csv_track_parse(const char *file, const char *text, size_t n, nad_key **keys,
			    uint32_t *n_keys, lfs_error *err)
{
	*keys = NULL;
	*n_keys = 0;
	lfs_csv c;
	lfs_csv_init(&c, file, text, n, LFS_CSV_LENIENT, err);
	lfs_err r = lfs_csv_header(&c, nad_csv_track_header);
	nad_key *k = NULL;
	uint32_t nk = 0, cap = 0;
	while (!r) {
		int e = lfs_csv_next(&c);
		if (e < 0)
			r = LFS_ERR_PARSE;
		if (e <= 0)
			break;
		if (nk == UINT32_MAX) {
			r = lfs_fail_at(err, c.file, c.row_line, 1, "too many keys");
			break;
		}
		if ((r = lfs_csv_arity(&c, NAD_KEY_FLOATS, "a key")))
			break;
		if (!lfs_grow32((void **)&k, &cap, nk + 1, sizeof(*k))) {
			r = lfs_nomem(err, c.file);
			break;
		}
		for (unsigned i = 0; i < NAD_KEY_FLOATS && !r; i++)
			r = lfs_csv_f32(&c, i, &k[nk].v[i]);
		if (!r)
			nk++;
	}
	if (r) {
		free(k);
		return r;
	}
	*keys = k;
	*n_keys = nk;
	return LFS_OK;
}

lfs_err nad_csv_tags_parse(const char *file, const char *text, size_t n, nad_tag **tags,
			   uint32_t *n_tags, lfs_error *err)
{
	*tags = NULL;
	*n_tags = 0;
	lfs_csv c;
	lfs_csv_init(&c, file, text, n, LFS_CSV_LENIENT, err);
	lfs_err r = lfs_csv_header(&c, tags_header);
	nad_tag *t = NULL;
	uint32_t nt = 0, cap = 0;
	while (!r) {
		int e = lfs_csv_next(&c);
		if (e < 0)
			r = LFS_ERR_PARSE;
		if (e <= 0)
			break;
		if (nt == UINT32_MAX) {
			r = lfs_fail_at(err, c.file, c.row_line, 1, "too many tags");
			break;
		}
		if ((r = lfs_csv_arity(&c, 2, "frame,tag")))
			break;
		if (!lfs_grow32((void **)&t, &cap, nt + 1, sizeof(*t))) {
			r = lfs_nomem(err, c.file);
			break;
		}
		if ((r = lfs_csv_f32(&c, 0, &t[nt].frame)))
			break;
		const lfs_csv_field *f = &c.f[1];
		int v = nad_tag_from_name(f->s, f->len);
		uint64_t x;
		if (v >= 0) {
			t[nt].type = (uint32_t)v;
		} else if (lfs_csv_uint(f, UINT32_MAX, &x)) {
			t[nt].type = (uint32_t)x;
		} else {
			r = lfs_fail_at(err, c.file, c.row_line, f->col,
					"unknown tag '%.*s' (a name lwalk .. throwdeath or a number)",
					(int)(f->len > 40 ? 40 : f->len), f->s);
			break;
		}
		nt++;
	}
	if (r) {
		free(t);
		return r;
	}
	*tags = t;
	*n_tags = nt;
	return LFS_OK;
}
