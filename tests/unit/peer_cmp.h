/**
 * @file peer_cmp.h
 * The comparer of two NWN ASCII model texts: ours (the model.mdl view of a
 * binary) and nwnmdlcomp's decompile of the same binary. Shared by
 * test_peer_compare (the corpus binaries against the stored peer
 * decompiles) and test_peer_read (binaries the project writes, decompiled
 * by the peer built from ../shared/tools).
 *
 * Both texts are read with mdl_parse() and compared node by node, statement
 * by statement, float32-exactly. Where the two texts differ for a
 * documented reason the difference is normalised or counted under a named
 * class; every class and every rule is explained in docs/peer-differences.md.
 *
 * Comparison rules (details and reasons: docs/peer-differences.md):
 *  R1 meshes are compared per face corner: position verts[v] and uv
 *     tverts[t] (all columns), per-vertex lists (weights, constraints) via the
 *     corner's vertex index; face count and surface ids equal; smoothing
 *     masks are invented by both writers and not compared.
 *  R2 orientations (plain and keyed) are compared as rotations: quaternion
 *     from axis-angle, q ~ -q, |dq| <= PEER_ORIENT_TOL.
 *  R3 keywords compared case-insensitively; a plain controller equals a
 *     one-key list at time 0.
 *  R4 comments are not compared (#part-number is: it is data).
 *  everything else: equal, float32 bit-equal for numbers.
 *
 * Test code: failures of its own bookkeeping (out of memory) are cmocka
 * assertions.
 */
#ifndef LFS_TEST_PEER_CMP_H
#define LFS_TEST_PEER_CMP_H

#include <stdbool.h>
#include <stddef.h>

#include "text/mdl_parse.h"

/** R2 tolerance on quaternion components (see docs/peer-differences.md). */
#define PEER_ORIENT_TOL 1e-6

/** One class of difference: its key, how often and in how many files, an example. */
typedef struct peer_dclass {
	char key[96];
	unsigned count, files, last_file;
	char example[400];
} peer_dclass;

/** The comparison state over a run of files (zero-initialise; free cls). */
typedef struct peer_cmp {
	peer_dclass *cls;     /**< classes found (malloc'd) */
	size_t n_cls, cap_cls;
	unsigned file_no;     /**< 1-based index of the file being compared */
	const char *file;     /**< short name of the file being compared */
	const char *where;    /**< "geom" or the animation name */
	const char *node;     /**< node name or NULL */
	double max_orient_dev;
	char max_orient_at[400];
	unsigned n_orient;    /**< orientation rows compared */
	unsigned n_corners;   /**< face corners compared */
	unsigned n_values;    /**< tokens compared */
} peer_cmp;

/** An accepted class of difference and the most corpus files it may affect. */
typedef struct peer_rule {
	const char *key;
	unsigned max_files;
} peer_rule;

/** The accepted classes, ended by { NULL, 0 } (docs/peer-differences.md). */
extern const peer_rule peer_rules[];

/** The rule for class @p key, or NULL when the class is not accepted. */
const peer_rule *peer_cmp_rule(const char *key);

/** Count one difference of class @p key in the current file (message: an example). */
void peer_cmp_diff(peer_cmp *c, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** Compare document @p a (ours) with @p b (the peer's), counting differences into @p c. */
void peer_cmp_docs(peer_cmp *c, const mdl_doc *a, const mdl_doc *b);

/** True when class @p key was counted. */
bool peer_cmp_has_class(const peer_cmp *c, const char *key);

/**
 * Print the classes found (count, files, verdict, example) and return how
 * many are not accepted: not in peer_rules, or (when @p check_files) found
 * in more files than the rule allows.
 */
unsigned peer_cmp_report(const peer_cmp *c, bool check_files);

#endif
