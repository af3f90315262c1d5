/**
 * @file nwn_patch.h
 * Edit-preserving changes to an NWN binary MDL: a copy of the file whose
 * bytes are patched in place (value edits), with the derived values that
 * depend on edited inputs rewritten, and key count changes re-laid by the
 * encoder. Works on the decoded model and the bytes only; the text views
 * (src/formats/nwn/nwn_apply*.c) read the edited text and call these.
 *
 * Offsets: every structure of the decoded model keeps its model-data offset
 * (`off`) and raw pointers (nwn_mdl.h), so a value edit is a write of the new
 * bits at md0 + off (model data) or raw0 + ptr (raw data); layouts as in
 * "BioWare Aurora Engine: Model format" (binary MDL), see nwn_mdl_decode.c.
 *
 * Derived values: for a derived value D = f(inputs), f in the arithmetic of
 * the file's compiler (nwn_arith, docs/derived-values.md)
 *   f(new) == f(old) bitwise  -> the stored bits are kept;
 *   otherwise, exact rules    -> f(new) is written (face plane, bbox, AABB box,
 *                                adjacency, vertex index list; radius and area
 *                                when f(old) == stored);
 *   radius, area otherwise    -> stored + (f(new) - f(old)) in double;
 *   average                   -> f(new) when f(old) == stored, else the stored
 *                                centre is kept (the radius is measured from it).
 * Before these rules, the memo of seen derived values (nwn_derive_memo.h):
 * the stored values of the old version are recorded under their inputs, and
 * a hit for the new inputs writes the values of the version that had them.
 */
#ifndef LFS_NWN_PATCH_H
#define LFS_NWN_PATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../common/error.h"
#include "nwn_mdl.h"

/** Edit tracking of one mesh node of the model geometry (arrays owned). */
typedef struct nwn_mesh_track {
	bool on;
	float *vold;        /**< verts before the edit (n_verts * 3) */
	uint16_t *fold;     /**< face vertex indices before the edit (n_faces * 3) */
	uint8_t *vdirty;    /**< per vertex: position edited */
	uint8_t *fdirty;    /**< per face: vertex indices edited */
	float *aold;        /**< per aabb entry: box before the edit (6 floats) */
	uint8_t *aexplicit; /**< per aabb entry: box edited explicitly (keep it) */
} nwn_mesh_track;

/** A controller whose key count changes: applied to the re-decoded, patched
 * file, which is then re-laid by nwn_mdl_encode(). */
typedef struct nwn_pend_keys {
	int32_t geom;   /**< -1 = model geometry, else animation index */
	uint32_t node, ctrl, rows;
	float *t, *v;   /**< rows times; rows * ncols stored values (owned) */
} nwn_pend_keys;

/** A patch in progress. Made by nwn_patch_open(), freed by nwn_patch_close(). */
typedef struct nwn_patch {
	nwn_model *m;     /**< the decoded original, updated as values are set;
			   *   its image is taken as img (m->image NULL) */
	uint8_t *img;     /**< the output: a copy of the input, patched (owned) */
	size_t n;         /**< size of img */
	size_t md0, raw0; /**< file offsets of model data / raw data */
	const char *file; /**< view path, for messages */
	lfs_error *err;
	nwn_mesh_track *trk; /**< per model-geometry node */
	bool changed;        /**< a byte differs from the input */
	nwn_pend_keys *pend;
	uint32_t n_pend, cap_pend;
	/** Set before nwn_patch_finish(): keep the model its check decodes from
	 *  img (in `result`) instead of freeing it. */
	bool keep_result;
	/** With keep_result, after a nwn_patch_finish() that changed a byte:
	 *  the decode of exactly img[0..n), without an image copy
	 *  (nwn_mdl_decode_noimage; owned: take it, else
	 *  nwn_patch_close() frees it); NULL otherwise. */
	nwn_model *result;
} nwn_patch;

/** Node @p i of the patched model's geometry (i < m->geom.n_nodes). */
static inline nwn_node *nwn_patch_node(const nwn_patch *p, uint32_t i)
{
	return &p->m->geom.nodes[i];
}

/** Decode @p orig (@p n bytes) and copy it into a new patch. On error the
 * patch still has to be closed. @p file names the view in messages. */
lfs_err nwn_patch_open(nwn_patch *a, const uint8_t *orig, size_t n, const char *file, lfs_error *err);
/** Rewrite derived values of tracked meshes, re-lay key count changes, and
 * check that the result decodes (LFS_ERR_CORRUPT otherwise); with
 * keep_result that decoded model is kept in `result`. */
lfs_err nwn_patch_finish(nwn_patch *a);
/** Free everything the patch owns (img included: take it first). */
void nwn_patch_close(nwn_patch *a);

/** true when @p x and @p y have the same bits. */
bool nwn_feq(float x, float y);

/** Write @p len bytes at file offset @p foff (LFS_ERR_CORRUPT outside the
 * file; @p what names the structure); sets `changed` when a byte differs. */
lfs_err nwn_patch_bytes(nwn_patch *a, size_t foff, const void *src, size_t len, const char *what);
/** Little-endian writes at model-data offset @p off. */
lfs_err nwn_patch_md_u32(nwn_patch *a, uint32_t off, uint32_t v);
lfs_err nwn_patch_md_f32(nwn_patch *a, uint32_t off, float v);
lfs_err nwn_patch_md_u16(nwn_patch *a, uint32_t off, uint16_t v);
lfs_err nwn_patch_md_u8(nwn_patch *a, uint32_t off, uint8_t v);
/** Little-endian writes of element @p idx of the raw-data array at @p ptr. */
lfs_err nwn_patch_raw_u32(nwn_patch *a, uint32_t ptr, size_t idx, uint32_t v);
lfs_err nwn_patch_raw_f32(nwn_patch *a, uint32_t ptr, size_t idx, float v);
lfs_err nwn_patch_raw_u16(nwn_patch *a, uint32_t ptr, size_t idx, uint16_t v);
/** Fixed-size string field of @p field bytes (<= 256) at model offset @p off:
 * the new text, a NUL, zeros over the rest of the old text; bytes after the
 * old string's NUL (uninitialised memory in game files) are kept. */
lfs_err nwn_patch_md_str(nwn_patch *a, uint32_t off, size_t field, const char *s);

/** Start tracking mesh node @p node of the model geometry (idempotent). */
lfs_err nwn_patch_track(nwn_patch *a, uint32_t node);
/** Free a mesh track's arrays. */
void nwn_track_free(nwn_mesh_track *t);
/** Component @p k of vertex @p v of model-geometry mesh node @p node. */
lfs_err nwn_patch_set_vert(nwn_patch *a, uint32_t node, uint32_t v, int k, float val);
/** Vertex index @p k of face @p f; keeps the vertex index list in step. */
lfs_err nwn_patch_set_face_v(nwn_patch *a, uint32_t node, uint32_t f, int k, uint16_t v);
/** Rewrite the derived values of tracked node @p node (nwn_patch_derive.c). */
lfs_err nwn_patch_derive_mesh(nwn_patch *a, uint32_t node);

/**
 * Write key row @p r of controller @p c of node @p n: time @p et and values
 * @p ev where they differ from the generated @p gt / @p gv. @p ocols = 4 when
 * the first four values are shown as axis-angle (the quaternion is rebuilt
 * only if one of the four changed).
 */
lfs_err nwn_patch_ctrl_row(nwn_patch *a, nwn_node *n, const nwn_controller *c, uint32_t r, float gt,
			   float et, const float *gv, const float *ev, unsigned ocols);
/**
 * Record a new key list for controller @p ct (node @p ni of geometry @p gi,
 * -1 = model geometry): @p en rows of times @p et and shown values @p ev,
 * against the @p gn generated rows @p gv. Applied by nwn_patch_finish().
 */
lfs_err nwn_patch_pend_rows(nwn_patch *a, int32_t gi, uint32_t ni, const nwn_node *n,
			    const nwn_controller *ct, uint32_t gn, const float *gv, uint32_t en,
			    const float *et, const float *ev, unsigned ocols);
/** Re-decode the patched file, apply the key count changes, re-lay it. */
lfs_err nwn_patch_relayout(nwn_patch *a);

#endif
