/**
 * @file nwn_csv.c
 * Controller keys as CSV (see nwn_csv.h).
 */
#include "nwn_csv.h"
#include "text/csv.h"
#include "nwn_quat.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *nwn_csv_controller_label(const nwn_node *n, const nwn_controller *c, char *buf,
				     size_t bufsz)
{
	const char *name = nwn_controller_name(n->flags, c->type);
	if (name)
		return name;
	snprintf(buf, bufsz, "controller%" PRIu32, c->type);
	return buf;
}

static bool is_colour(const char *name)
{
	static const char *const cols[] = { "color", "selfillumcolor", "colorStart", "colorMid",
					    "colorEnd" };
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		if (name && !strcasecmp(name, cols[i]))
			return true;
	return false;
}

void nwn_csv_header(const nwn_node *n, const nwn_controller *c, lfs_sb *o, bool *orient)
{
	size_t nc = c->ncols;
	const char *name = nwn_controller_name(n->flags, c->type);
	/* base columns */
	static const char *const pos[] = { "x", "y", "z" };
	static const char *const ori[] = { "axis_x", "axis_y", "axis_z", "angle" };
	static const char *const rgb[] = { "r", "g", "b" };
	static const char *const val[] = { "value" };
	const char *const *base = NULL;
	size_t nbase = 0;
	*orient = false;
	if (c->type == NWN_CTRL_POSITION && nc >= 3) {
		base = pos;
		nbase = 3;
	} else if (c->type == NWN_CTRL_ORIENTATION && nc >= 4) {
		base = ori;
		nbase = 4;
		*orient = true;
	} else if (is_colour(name) && nc >= 3) {
		base = rgb;
		nbase = 3;
	} else if (name && nc >= 1 && (nc == 1 || c->bezier)) {
		base = val;
		nbase = 1;
	}
	/* Without bezier, extra columns beyond the base are unexpected: fall
	 * back to generic names for all of them. */
	if (!c->bezier && nbase != nc) {
		base = NULL;
		nbase = 0;
		*orient = false;
	}
	lfs_sb_puts(o, "time");
	for (size_t k = 0; k < nc; k++) {
		if (k < nbase)
			lfs_sb_printf(o, ",%s", base[k]);
		else if (nbase)
			lfs_sb_printf(o, ",ctrl%zu", k - nbase + 1);
		else
			lfs_sb_printf(o, ",v%zu", k + 1);
	}
}

bool nwn_csv_controller_ok(const nwn_node *n, const nwn_controller *c)
{
	size_t rows = c->rows, nc = c->ncols;
	return (size_t)c->key_offset + rows <= n->n_ctrl_data &&
	       (size_t)c->data_offset + rows * nc <= n->n_ctrl_data && (!rows || n->ctrl_data);
}

lfs_err nwn_csv_controller(const nwn_node *n, const nwn_controller *c, lfs_sb *o, lfs_error *err)
{
	size_t rows = c->rows, nc = c->ncols;
	if (!nwn_csv_controller_ok(n, c))
		return lfs_fail(err, LFS_ERR_CORRUPT, c->off + 12u, "controller key",
				"controller %" PRIu32 " of node %s: keys outside the data array",
				c->type, n->name);
	bool orient;
	lfs_sb head = { 0 };
	nwn_csv_header(n, c, &head, &orient);
	if (lfs_sb_ok(&head))
		lfs_csv_write_header(o, head.data);
	bool ok = lfs_sb_ok(&head);
	lfs_sb_free(&head);
	/* one row: the time, then the values (an orientation's first 4 as axis-angle) */
	float row[1 + 255]; /* ncols is a uint8_t */
	for (size_t r = 0; r < rows; r++) {
		row[0] = n->ctrl_data[c->key_offset + r];
		const float *v = n->ctrl_data + c->data_offset + r * nc;
		memcpy(row + 1, v, nc * sizeof(float));
		if (orient)
			nwn_quat_to_axis_angle(v, row + 1);
		lfs_csv_write_floats_plain(o, row, 1 + nc);
		lfs_csv_write_eol(o);
	}
	if (!ok || !lfs_sb_ok(o))
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "csv view", "out of memory");
	return LFS_OK;
}
