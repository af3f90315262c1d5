/**
 * @file nwn_apply_struct_priv.h
 * Private to the structural apply (nwn_apply_struct*.c): the merge context
 * and the helpers its files share.
 */
#ifndef LFS_VIEWS_NWN_APPLY_STRUCT_PRIV_H
#define LFS_VIEWS_NWN_APPLY_STRUCT_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"
#include "nwn_mdl.h"
#include "nwn_mdl_derive.h"
#include "nwn_mdl_encode.h"
#include "text/mdl_parse.h"
#include "nwn_apply_struct.h"

/* Offset given to new structures: beyond any image, so the encoder takes no
 * string tails or pad bytes for them (and no uint32 wrap-around). */
#define NEWOFF 0x7FFFFFFFu
#define NONE UINT32_MAX

typedef struct rb {
	nwn_model *O;      /* the old binary, decoded */
	nwn_model *N;      /* the edited text, compiled */
	nwn_model X;       /* the result */
	nwn_compiled nc;
	mdl_doc *dg, *de;  /* generated (from O) and edited text */
	const char *file;
	lfs_error *err;
	bool bioware;      /* empty arrays keep a position (BioWare layout) */
	bool new_emitter;
	nwn_alloc alloc;
	uint32_t *mo2n, *mn2o; /* model geometry: old <-> new node index */
	bool *chain;           /* model node: it and its ancestors keep their old
	                          parent, position and orientation (bind pose) */
} rb;

/* zeroed memory of the result model (owned by r->nc); sa_rdup: a copy */
void *sa_rz(rb *r, size_t n);
void *sa_rdup(rb *r, const void *p, size_t n);
/* the first statement with keyword @p kw, NULL when absent */
const mdl_stmt *sa_find_kw(const mdl_stmt *s, uint32_t n, const char *kw);
/* the first statements with keyword @p kw of two nodes compile to the same values */
bool sa_node_kw_same(const mdl_node *g, const mdl_node *e, const char *kw);
bool sa_node_kws_same(const mdl_node *g, const mdl_node *e, const char *const *kws, size_t n);
/* array header of @p count elements */
void sa_arr_set(nwn_array *a, uint32_t count);
/* mesh merge (nwn_apply_struct_mesh.c) */
lfs_err sa_check_faces(rb *r, const mdl_node *en);
lfs_err sa_reorder_split(rb *r, nwn_mesh *m, const uint32_t *split);
lfs_err sa_merge_mesh(rb *r, nwn_node *x, const nwn_node *p, const nwn_node *nn, const mdl_node *gn,
			  const mdl_node *en, const uint32_t *split, bool *geom_changed);
lfs_err sa_fix_skin(rb *r, uint32_t j, bool geom_changed, const mdl_node *en);

#endif
