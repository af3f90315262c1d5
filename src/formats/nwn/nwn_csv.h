/**
 * @file nwn_csv.h
 * NWN animation controllers -> CSV (docs/formats/obj-csv.md).
 *
 * One file per controller of each animation node:
 * anims/<anim>/<node>.<controller>.csv. RFC 4180 CSV (LF record ends, no
 * quoting needed: every field is a number or a fixed column name). Header row
 * then one row per key:
 *  - position:            time,x,y,z
 *  - orientation:         time,axis_x,axis_y,axis_z,angle   (radians, from the
 *                         stored quaternion as in model.mdl)
 *  - colours (color, selfillumcolor, colorStart/Mid/End): time,r,g,b
 *  - 1-value controllers: time,value
 *  - no values (detonate): time
 *  - anything else:       time,v1..vN
 *  - bezier keys: the base columns above, then the remaining stored values as
 *    ctrl1..ctrlK (their meaning is unknown: no sample exists, [N §2.3]).
 * Time in seconds. Every number is the shortest exact float32 text (plain
 * form, csv.h: a NaN prints as "nan"), so times and non-orientation values
 * other than NaNs read back bit for bit.
 */
#ifndef LFS_VIEWS_NWN_CSV_H
#define LFS_VIEWS_NWN_CSV_H

#include <stdbool.h>

#include "common/error.h"
#include "common/strbuf.h"
#include "nwn_mdl.h"

/**
 * Write controller @p c of node @p n as CSV into @p out.
 * @return LFS_OK; LFS_ERR_CORRUPT when the controller's keys lie outside the
 *         node's float array (the caller leaves the file out); LFS_ERR_NOMEM.
 */
lfs_err nwn_csv_controller(const nwn_node *n, const nwn_controller *c, lfs_sb *out, lfs_error *err);

/**
 * Would nwn_csv_controller() write controller @p c of node @p n (its keys
 * lie inside the node's float array)? What a names-only build asks instead
 * of writing the CSV.
 */
bool nwn_csv_controller_ok(const nwn_node *n, const nwn_controller *c);

/**
 * The header row of controller @p c's CSV ("time,x,y,z", ...; no line end)
 * into @p out. Sets *@p orient when the value columns start with the
 * axis-angle form of an orientation (axis_x,axis_y,axis_z,angle).
 */
void nwn_csv_header(const nwn_node *n, const nwn_controller *c, lfs_sb *out, bool *orient);

/**
 * File-name part for controller @p c on node @p n: its ASCII keyword, or
 * "controller<id>" for unknown ids. Writes into @p buf (>= 32 bytes).
 */
const char *nwn_csv_controller_label(const nwn_node *n, const nwn_controller *c, char *buf,
				     size_t bufsz);

#endif
