/**
 * @file nwn_apply_priv.h
 * Private to the NWN apply (src/formats/nwn/nwn_apply*.c): the apply context (a
 * byte patch of src/formats/nwn/nwn_patch.h plus the edited text), and the
 * helpers its files share: error positions, token values, statement
 * comparison, and the per-statement appliers.
 */
#ifndef LFS_VIEWS_NWN_APPLY_PRIV_H
#define LFS_VIEWS_NWN_APPLY_PRIV_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/strbuf.h"
#include "nwn_fields.h"
#include "nwn_mdl.h"
#include "nwn_mdl_derive.h"
#include "nwn_mdl_encode.h"
#include "nwn_patch.h"
#include "text/mdl_parse.h"
#include "registry/names.h"
#include "nwn_apply.h"

#define RAW_NULL 0xFFFFFFFFu
#define FACE_SIZE 32u

/** The apply in progress: the byte patch, the view, the edited text. */
typedef struct ap {
	nwn_patch p;
	lfs_view_kind kind;     /* the edited view's kind: TEXT, MESH_OBJ or TRACK_CSV */
	lfs_view_target target; /* its target, checked against the model */
	const char *text;    /* edited text (for column lookups) */
	size_t tn;
	const mdl_row *crow; /* edited row being applied (for messages) */
	bool hit_structural; /* a structural difference was found */
} ap;


/** The node a statement pair belongs to. */
typedef struct nctx {
	nwn_geometry *g;
	int32_t gi;       /* -1 = model geometry, else animation index */
	uint32_t idx;     /* node index in g */
	bool anim;        /* animation geometry */
	bool model_geom;  /* g is the model geometry (mesh tracking applies) */
	const mdl_node *en;
} nctx;


typedef struct aval {
	float f[3];
	int64_t i;
	const char *s;
} aval;

/* errors (file:line:col of the edited text) */
unsigned ap_row_col(const mdl_row *r, uint32_t i);
lfs_err __attribute__((format(printf, 4, 0)))
ap_failv(ap *a, unsigned line, unsigned col, const char *fmt, va_list va);
lfs_err __attribute__((format(printf, 4, 5)))
ap_perr(ap *a, const mdl_row *r, uint32_t i, const char *fmt, ...);
lfs_err __attribute__((format(printf, 4, 5)))
ap_perr_at(ap *a, unsigned line, unsigned col, const char *fmt, ...);
/** A structural edit: LFS_ERR_UNSUPPORTED with the position of the edit. */
lfs_err __attribute__((format(printf, 4, 5)))
ap_structural(ap *a, unsigned line, unsigned col, const char *fmt, ...);
/** Column of token @p ti on line @p line of the edited text, 1 when absent. */
unsigned ap_text_col(const ap *a, uint32_t line, uint32_t ti);

/* token values: edited (checked) and generated (never fails) */
lfs_err ap_tok_f(ap *a, const mdl_row *r, uint32_t i, float *v);
lfs_err ap_tok_i(ap *a, const mdl_row *r, uint32_t i, int64_t lo, int64_t hi, int64_t *v);
float ap_gtok_f(const mdl_row *r, uint32_t i);
int64_t ap_gtok_i(const mdl_row *r, uint32_t i);
/** Same tokens, same text. */
bool ap_rows_same(const mdl_row *x, const mdl_row *y);
/** Two statements with the same kind and token-for-token the same text
 * (head and rows): the edit did not touch it. */
bool ap_stmt_text_equal(const mdl_stmt *x, const mdl_stmt *y);

/* model.mdl statements (nwn_apply_mdl.c) */
const char *ap_stmt_key(const mdl_stmt *s);
lfs_err ap_mdl_controller(ap *a, nctx *c, const mdl_stmt *gs, const mdl_stmt *es, uint32_t occ,
			  const char *key);
const nwn_field *ap_find_attr(const nwn_node *n, bool anim, const char *kw);
lfs_err ap_attr_value(ap *a, const nwn_field *t, const mdl_stmt *s, aval *v);
lfs_err ap_mdl_attr(ap *a, uint32_t base, const nwn_field *t, const mdl_stmt *gs, const mdl_stmt *es);
lfs_err ap_mdl_list(ap *a, nctx *c, const mdl_stmt *gs, const mdl_stmt *es, const char *kw);

/* the views: model.mdl (nwn_apply_match.c), meshes/<node>.obj
 * (nwn_apply_obj.c), anims/.../<track>.csv (nwn_apply.c) */
lfs_err ap_apply_mdl(ap *a, const char *text, size_t tn);
lfs_err ap_apply_obj(ap *a, const char *text, size_t tn);
/** model.obj: value edits of every rendered mesh, objects mapped to mesh
 * nodes by name, model-space values transformed back to each node. */
lfs_err ap_apply_model_obj(ap *a, const char *text, size_t tn);
/** The meshes/<name>.obj name of mesh node @p idx (as viewset.c names it),
 * owned by @p ns; NULL when out of memory. */
const char *ap_mesh_obj_name(const nwn_model *m, uint32_t idx, lfs_nameset *ns);
lfs_err ap_structural_obj(ap *a, const uint8_t *orig, size_t n, const char *text, size_t tn,
			  nwn_supermodel_lookup_fn lookup, void *ctx, uint8_t **out, size_t *outn);
lfs_err ap_apply_csv(ap *a, const char *text, size_t tn);

#endif
