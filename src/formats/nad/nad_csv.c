/**
 * @file nad_csv.c
 * Track and tag CSVs of a NAD file, writers and parsers (see nad_views.h,
 * docs/formats/nad.md).
 *
 * Owns the NAD mapping only (columns, tag names); the CSV syntax is csv.h's:
 * a header row, one row per key/tag, LF record ends, read with
 * LFS_CSV_LENIENT (CRLF or LF ends, quoted fields, blank lines, spaces or tabs around fields and a
 * leading UTF-8 byte order mark are accepted).
 */
#include "nad_views.h"

#include "common/mem.h"
#include "text/csv.h"

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

static lfs_err key_row(lfs_csv *c, void *elem, void *ctx)
{
	(void)ctx;
	nad_key *k = elem;
	lfs_err r = LFS_OK;
	for (unsigned i = 0; i < NAD_KEY_FLOATS && !r; i++)
		r = lfs_csv_f32(c, i, &k->v[i]);
	return r;
}

lfs_err nad_csv_track_parse(const char *file, const char *text, size_t n, nad_key **keys,
			    uint32_t *n_keys, lfs_error *err)
{
	*keys = NULL;
	*n_keys = 0;
	lfs_csv c;
	lfs_csv_init(&c, file, text, n, LFS_CSV_LENIENT, err);
	const lfs_csv_table t = { nad_csv_track_header, NAD_KEY_FLOATS, "a key", sizeof(nad_key),
				  UINT32_MAX, "too many keys", key_row, NULL };
	void *rows;
	size_t nr;
	lfs_err r = lfs_csv_rows(&c, &t, &rows, &nr);
	if (!r) {
		*keys = rows;
		*n_keys = (uint32_t)nr;
	}
	return r;
}

static lfs_err tag_row(lfs_csv *c, void *elem, void *ctx)
{
	(void)ctx;
	nad_tag *t = elem;
	lfs_err r = lfs_csv_f32(c, 0, &t->frame);
	if (r)
		return r;
	const lfs_csv_field *f = &c->f[1];
	int v = nad_tag_from_name(f->s, f->len);
	uint64_t x;
	if (v >= 0)
		t->type = (uint32_t)v;
	else if (lfs_csv_uint(f, UINT32_MAX, &x))
		t->type = (uint32_t)x;
	else
		return lfs_fail_at(c->err, c->file, c->row_line, f->col,
				   "unknown tag '%.*s' (a name lwalk .. throwdeath or a number)",
				   (int)(f->len > 40 ? 40 : f->len), f->s);
	return LFS_OK;
}

lfs_err nad_csv_tags_parse(const char *file, const char *text, size_t n, nad_tag **tags,
			   uint32_t *n_tags, lfs_error *err)
{
	*tags = NULL;
	*n_tags = 0;
	lfs_csv c;
	lfs_csv_init(&c, file, text, n, LFS_CSV_LENIENT, err);
	const lfs_csv_table t = { tags_header, 2, "frame,tag", sizeof(nad_tag), UINT32_MAX,
				  "too many tags", tag_row, NULL };
	void *rows;
	size_t nr;
	lfs_err r = lfs_csv_rows(&c, &t, &rows, &nr);
	if (!r) {
		*tags = rows;
		*n_tags = (uint32_t)nr;
	}
	return r;
}
