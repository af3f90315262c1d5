/**
 * @file nwn_ascii.h
 * In-memory NWN model -> NWN ASCII MDL text (the "model.mdl" view).
 *
 * The dialect is described in docs/formats/nwn-ascii.md; the grammar follows
 * the files BioWare's exporter and nwnmdlcomp write, as the public parsers
 * read them (jd28/rollnw MdlTextParser.cpp, niv/nwn-tools; [N §2] in
 * src/formats/nwn/nwn_mdl.h). Output is deterministic, LF line ends, 2-space indent;
 * every float is the shortest text that reads back to the same float32
 * (lfs_sb_float), so positions, vertices, times and scalar values round-trip
 * bit for bit. Orientations are printed as axis + angle in radians (converted
 * from the stored quaternions; last-bit changes are possible on the way back).
 */
#ifndef LFS_VIEWS_NWN_ASCII_H
#define LFS_VIEWS_NWN_ASCII_H

#include "common/error.h"
#include "common/strbuf.h"
#include "nwn_mdl.h"

/**
 * Append model @p m as ASCII MDL to @p out.
 *
 * @return LFS_OK, or LFS_ERR_NOMEM when the buffer could not grow (@p err is
 *         filled). The model is only read.
 */
lfs_err nwn_ascii_write(const nwn_model *m, lfs_sb *out, lfs_error *err);

/**
 * Append one controller the way model.mdl prints it (plain line, key list,
 * or comment block for unknown ids), @p indent spaces deep. Exposed for the
 * tests and other views.
 */
/**
 * true when model.mdl shows controller @p c of node @p n as a statement:
 * its id has a keyword for the node's type and its times and values lie
 * inside the node's float array. Any other controller is printed as a
 * comment block (and kept as stored by the structural apply).
 */
bool nwn_ascii_controller_shown(const nwn_node *n, const nwn_controller *c);

void nwn_ascii_controller(lfs_sb *out, const nwn_node *n, const nwn_controller *c, int indent);

#endif
