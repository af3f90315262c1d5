/**
 * @file nwn_compile_priv.h
 * Private to the ASCII MDL compiler (nwn_compile*.c): its arena, the node
 * and geometry being built, and the helpers its files share.
 */
#ifndef LFS_VIEWS_NWN_COMPILE_PRIV_H
#define LFS_VIEWS_NWN_COMPILE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "nwn_fields.h"
#include "nwn_mdl.h"
#include "nwn_mdl_derive.h"
#include "nwn_mdl_encode.h"
#include "text/mdl_parse.h"
#include "nwn_compile.h"

#define RAW_NULL 0xFFFFFFFFu
#define MAX_SUPER_DEPTH 8

/* ------------------------------------------------------------------ arena */

/* The compiled model's allocations: the project's bump arena (common/arena.h). */
typedef lfs_arena arena;

/* ------------------------------------------------------------ structures */

/* Growable float/int vectors (malloc, freed with the compile). */
typedef struct fvec {
	float *v;
	uint32_t n, cap;
} fvec;

typedef struct cnode {
	nwn_node n;
	const mdl_node *src;
	int32_t parent;      /* cnode index, -1 */
	bool attached;
	uint32_t *kids;
	uint32_t nkids, capk;
	/* controllers */
	nwn_controller *ctrls;
	uint32_t nctrl, capc;
	fvec data;
	/* mesh source */
	nwn_mesh_src ms;
	fvec verts, tverts[4], colors, normals, constraints, animverts, animtverts;
	nwn_src_face *faces;
	uint32_t nfaces;
	int32_t *texind[4];
	uint32_t ntexind[4];
	uint32_t *mirror;
	uint32_t nmirror;
	const mdl_stmt *weights_stmt;
	const mdl_stmt *faces_stmt; /* rows name dropped faces in warnings */
	uint32_t *split_src;
	bool alias_dummy;    /* a type word real files use for a dummy (`emmiter`) */
	bool has_aabb_rows;
	bool transparent_sorted;
} cnode;

typedef struct cgeom {
	cnode *nodes;
	uint32_t n, cap;
	int32_t root;
	uint32_t node_count; /* running part number */
} cgeom;

typedef struct comp {
	const char *file;
	lfs_error *err;
	arena *ar;
	nwn_alloc alloc;
	nwn_supermodel_lookup_fn lookup;
	void *lctx;
	int depth;
	uint32_t warnings;
	lfs_warnings *warn;  /* where diagnostics of a compile that lands go; may be NULL */
	/* edit mode (nwn_compile_doc): keep the text's child order, record the
	 * source node of every flattened node, report the supermodel */
	bool edit_mode;
	const mdl_node ***srcs; /* [1 + animations] */
	uint32_t ***splits;     /* [1 + animations][node]: split vertex -> text vertex */
	bool super_found;
} comp;

/* lfs_arena_zalloc() as the allocator callback of nwn_mdl_encode.h (@p ctx an arena) */
void *nc_arena_zalloc(void *ctx, size_t n);

/* errors: `file:line:col` of token @p tok of row @p r (NULL: line 1) */
lfs_err nc_at(comp *c, const mdl_row *r, uint32_t tok, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* a warning `file:line:col: warning: ...` at token @p tok of row @p r */
void nc_warn(comp *c, const mdl_row *r, uint32_t tok, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* values as the reference compiler reads them */
bool nc_tok_f(const char *s, float *out);
/** The message for a token nc_tok_f() refused: the float32 range message
 *  when @p tok is a number beyond FLT_MAX, else @p what (static). */
const char *nc_num_msg(const char *tok, const char *what);
bool nc_tok_i(const char *s, int32_t *out);
lfs_err nc_head_f(comp *c, const mdl_stmt *s, uint32_t i, float *out);
lfs_err nc_head_fv(comp *c, const mdl_stmt *s, float *out, int n);
lfs_err nc_head_i(comp *c, const mdl_stmt *s, int32_t *out);
void nc_head_str(const mdl_stmt *s, char *dst, size_t size);
lfs_err nc_rows_f(comp *c, const mdl_stmt *s, uint32_t cols, fvec *v);
lfs_err nc_rows_i(comp *c, const mdl_stmt *s, uint32_t cols, int32_t **out, uint32_t *n);
/** Keywords compare case-insensitively. */
bool nc_kw(const char *a, const char *b);

/* nodes and controllers (nwn_compile.c) */
lfs_err nc_init_node(comp *c, cnode *cn, const mdl_node *src, bool anim);
uint32_t nc_controller_id(uint32_t flags, const char *name);
lfs_err nc_add_controller(comp *c, cnode *cn, const mdl_stmt *s, uint32_t id);
/* one statement of a node (nwn_compile_attr.c); a scalar field statement */
lfs_err nc_field_stmt(comp *c, const mdl_stmt *s, nwn_field_kind kind, void *obj, const char *k,
		      bool *done);
lfs_err nc_node_statement(comp *c, cnode *cn, const mdl_stmt *s);

#endif
