/**
 * @file sod_csv.c
 * SOD animation channel CSVs (anims/<node>.csv, docs/formats/sod.md): the
 * columns of a channel and their mapping onto its keys. The CSV syntax is
 * csv.h's (strict: no byte order mark, no blanks around fields, exact
 * header), LF record ends.
 */
#include "sod_views.h"

#include "common/mem.h"
#include "text/csv.h"

#include <stdlib.h>
#include <string.h>

static const char csv_matrix_header[] =
	"key,time,right_x,right_y,right_z,up_x,up_y,up_z,front_x,front_y,front_z,"
	"position_x,position_y,position_z";
static const char csv_scale_header[] = "key,time,scale";

float sod_key_time(const sod_channel *c, uint32_t k)
{
	if (!c->n_keys)
		return 0.0f;
	return (float)((double)k * (double)c->period / (double)c->n_keys);
}

lfs_err sod_csv_channel(const sod_model *m, uint16_t idx, lfs_sb *sb, lfs_error *err)
{
	const sod_channel *c = &m->channels[idx];
	size_t w = c->type == SOD_CHAN_MATRIX ? 12 : 1;
	lfs_csv_write_header(sb, c->type == SOD_CHAN_MATRIX ? csv_matrix_header : csv_scale_header);
	for (uint32_t k = 0; k < c->n_keys; k++) {
		float t = sod_key_time(c, k);
		lfs_sb_printf(sb, "%u,", k);
		lfs_csv_write_floats(sb, &t, 1);
		lfs_sb_putc(sb, ',');
		lfs_csv_write_floats(sb, c->keys + w * k, w);
		lfs_csv_write_eol(sb);
	}
	if (!lfs_sb_ok(sb))
		return lfs_nomem(err, "SOD views");
	return LFS_OK;
}

/* One row: the key (must be the row number), the time (derived from the
 * period, read and ignored), then the @p w values into @p dst. */
/* Where a channel's rows go: values per key, and the next key number. */
typedef struct key_rows {
	size_t w, next;
} key_rows;

static lfs_err csv_row(lfs_csv *cv, void *elem, void *ctx)
{
	key_rows *kr = ctx;
	size_t row = kr->next, w = kr->w;
	float *dst = elem;
	uint64_t k;
	if (!lfs_csv_uint(&cv->f[0], UINT64_MAX, &k) || k != row)
		return lfs_fail_at(cv->err, cv->file, cv->row_line, cv->f[0].col,
				   "key must be the row number %zu (keys are evenly spaced; rows "
				   "cannot be reordered)",
				   row);
	float time;
	lfs_err e = lfs_csv_f32(cv, 1, &time);
	for (size_t i = 0; i < w && !e; i++)
		e = lfs_csv_f32(cv, 2 + i, &dst[i]);
	if (!e)
		kr->next++;
	return e;
}

lfs_err sod_csv_apply(sod_model *m, sod_channel *c, const char *file, const char *text, size_t n,
		      lfs_error *err)
{
	bool matrix = c->type == SOD_CHAN_MATRIX;
	size_t w = matrix ? 12 : 1;
	lfs_csv cv;
	lfs_csv_init(&cv, file, text, n, 0, err);
	key_rows kr = { w, 0 };
	const lfs_csv_table t = { matrix ? csv_matrix_header : csv_scale_header, w + 2,
				  matrix ? "key, time, 12 matrix values" : "key, time, scale",
				  w * sizeof(float), UINT16_MAX, "more than 65535 keys", csv_row, &kr };
	void *rows_p;
	size_t rows;
	lfs_err e = lfs_csv_rows(&cv, &t, &rows_p, &rows);
	float *keys = rows_p;
	if (!e) {
		c->n_keys = (uint16_t)rows;
		c->keys = sod_alloc(m, rows * w * sizeof(float) + 1);
		if (!c->keys)
			e = lfs_nomem(err, "SOD views");
		else if (rows)
			memcpy(c->keys, keys, rows * w * sizeof(float));
	}
	free(keys);
	return e;
}
