/**
 * @file nwn_mdl_derive.h
 * What the NWN model compiler computes from ASCII data (cited [N §x], the
 * topics of the [N] key in nwn_mdl.h, §3.2–§3.6; the algorithms follow the
 * only public compiler, nwnmdlcomp (niv/nwn-tools _NmcLib/NmcMesh.cpp,
 * NmcGeometry.cpp), whose output the game loads).
 *
 * Arithmetic: float32 values, intermediate expressions in double and rounded
 * to float32 where the reference stores a float (its x87 build keeps
 * temporaries in extended precision). docs/nwn-compile.md lists the measured
 * agreement with nwnmdlcomp's binaries.
 *
 * Memory: functions that create arrays take an nwn_alloc (zeroed memory,
 * owned by the caller's arena; nothing is freed here).
 */
#ifndef LFS_NWN_MDL_DERIVE_H
#define LFS_NWN_MDL_DERIVE_H

#include "nwn_mdl.h"

/** Zeroed allocation from the caller's arena; NULL on failure. */
typedef struct nwn_alloc {
	void *(*fn)(void *ctx, size_t n);
	void *ctx;
} nwn_alloc;

/**
 * Orientation: ASCII axis + angle (radians) -> stored quaternion (x, y, z, w)
 * exactly as the compiler does [N §3.2]: axis normalised (left as is when its
 * length is 0), q = (axis * sin(a/2), cos(a/2)); no w >= 0 normalisation, so
 * negative zeros and negative w come out as the game's files have them.
 */
void nwn_axis_angle_to_quat(const float aa[4], float q[4]);

/** One ASCII face row: `v0 v1 v2 smooth t0 t1 t2 surface` [N §2.2]. */
typedef struct nwn_src_face {
	int32_t v[3];
	uint32_t smooth;   /**< smoothing-group bit mask */
	int32_t t[3];      /**< tvert indices (tverts list 0) */
	uint32_t surface;  /**< surface id / walk material */
} nwn_src_face;

/** One ASCII skin weight row: up to 4 (bone node, weight) pairs. */
typedef struct nwn_src_weight {
	int32_t node[4];   /**< depth-first index of the bone node in the model geometry, -1 = none */
	float w[4];
	uint32_t count;
} nwn_src_weight;

/** ASCII mesh data of one node, as written (before vertex splitting). */
typedef struct nwn_mesh_src {
	const float *verts;             /**< 3 per ASCII vertex */
	uint32_t n_verts;
	const float *tverts[4];         /**< 3 per row (u v w) */
	uint32_t n_tverts[4];
	const float *colors;            /**< 3 per ASCII vertex, 0..1 */
	uint32_t n_colors;
	const float *normals;           /**< EE explicit normals, 3 per ASCII vertex, or NULL */
	uint32_t n_normals;
	const nwn_src_face *faces;
	uint32_t n_faces;
	const int32_t *texindices[4];   /**< [1..3]: 3 per face, tvert indices into tverts[k] */
	uint32_t n_texindices[4];
	const uint32_t *mirror;         /**< per face, or NULL */
	uint32_t n_mirror;
	const float *constraints;       /**< dangly: per ASCII vertex */
	uint32_t n_constraints;
	const float *anim_verts;        /**< animmesh: sets x ASCII verts x 3 */
	uint32_t n_anim_verts;          /**< rows */
	const float *anim_tverts;       /**< animmesh: sets x ASCII tverts x 3 */
	uint32_t n_anim_tverts;
	uint32_t *warnings;             /**< optional counter of dropped data */
} nwn_mesh_src;

/**
 * Build the compiled mesh of @p node (flags and type parts already set) from
 * @p src [N §3.3–§3.5]: validation (faces that reference missing vertices or
 * tverts are dropped, as the compiler does), per-corner vertex normals summed
 * over faces sharing the ASCII vertex and a smoothing bit (or the EE normals
 * list when given), bounding box / average / radius over the ASCII vertices
 * (box starting at the origin, as the compiler's), animmesh extension of the
 * box and vertex/tvert sets, vertex splitting by (position, normal, tverts,
 * colour, constraint, mirror), face planes and adjacency, the vertex index
 * list, colours (trimesh/aabb), dangly constraints per split vertex, and the
 * mesh area (trimesh/aabb). Skin weights are mapped by nwn_derive_skin()
 * after the whole geometry is known; @p split_src receives, per split vertex,
 * its ASCII vertex index (allocated from @p a) for that step.
 */
lfs_err nwn_derive_mesh(nwn_node *node, const nwn_mesh_src *src, const nwn_alloc *a,
			uint32_t **split_src, lfs_error *err);

/**
 * Skin bone maps and bind transforms [N §3.6] for skin node @p skin of model
 * geometry @p g (nodes depth-first): node-to-bone map (one i16 per node),
 * bone node numbers (first-use order, at most 17), per split vertex 4
 * weights + bone refs, and — unless the ASCII gave them — qbone_ref_inv
 * (w x y z) and tbone_ref_inv for every node, relative to the skin node.
 * @p weights has one row per ASCII vertex; @p split_src maps split vertices to
 * them. Fails with LFS_ERR_PARSE-free LFS_ERR_UNSUPPORTED when more than 17
 * bones are used.
 */
lfs_err nwn_derive_skin(const nwn_geometry *g, uint32_t skin, const nwn_src_weight *weights,
			uint32_t n_weights, const uint32_t *split_src, const nwn_alloc *a, lfs_error *err);

/**
 * Build an AABB tree over the faces of @p m (walkmesh without an `aabb`
 * list): depth-first pre-order entries, leaves one face each, split at the
 * median face centre along the longest box axis; the plane bits of an
 * inner node as the compiler computes them from its children [N §2.5].
 * Not the game's own (unpublished) builder: the tree shape may differ.
 */
lfs_err nwn_derive_aabb(nwn_mesh *m, const nwn_alloc *a, lfs_error *err);

/** AABB plane bits of an inner node from its two children (NN rule). */
uint32_t nwn_aabb_plane(const nwn_aabb_entry *left, const nwn_aabb_entry *right);

/* ---- edit-preserving variants (nwn_mdl_derive_edit.c) -------------------
 * One module, two arithmetics. The compiler (nwn_derive_mesh above, used by
 * src/formats/nwn/nwn_compile*.c) reproduces nwnmdlcomp's x87 extended-precision
 * arithmetic on the ASCII vertices; the edit-preserving apply
 * (nwn_patch_derive.c) recomputes a value from the stored (split) vertices
 * in the arithmetic of BioWare's compiler, measured bit for bit on the
 * game's files (docs/derived-values.md). The two differ in the last bits and the tests
 * compare both outputs byte for byte (nwn_compile, nwn_apply), so both stay:
 *   quantity      compiler (nwn_mdl_derive.c)        apply (below)
 *   quaternion    nwn_axis_angle_to_quat (float)     nwn_axis_angle_to_quat_double
 *   face plane    nwn_derive_mesh (extended)         nwn_edit_face_plane (float/x87)
 *   bounding box  nwn_bbox_extend (shared)           nwn_edit_bbox -> nwn_bbox_extend
 *   average       sum of ASCII vertices (extended)   nwn_edit_average (distinct
 *                                                    split positions, float)
 *   radius        extended-precision lengths         nwn_edit_radius (float/double)
 *   area          extended-precision cross products  nwn_edit_area (float/x87)
 *   adjacency     by ASCII vertex (int32 indices)    nwn_face_adjacency (uint16)
 *   AABB plane    nwn_aabb_plane (shared)            nwn_aabb_plane
 */

/** Whose arithmetic a derived value is recomputed in: the game's (BioWare)
 * compiler or nwnmdlcomp (an x87 build, temporaries in extended precision).
 * docs/derived-values.md lists how many corpus values each reproduces. */
typedef enum nwn_arith {
	NWN_ARITH_BIOWARE = 0,
	NWN_ARITH_NMC = 1,
} nwn_arith;

/** Extend the box @p mn / @p mx by @p n points (xyz floats); NaN never
 * extends it. The one bounding-box rule of compiler and apply. */
void nwn_bbox_extend(const float *v, size_t n, float mn[3], float mx[3]);

/**
 * Axis-angle (radians) -> quaternion (x, y, z, w) = (axis*sin(a/2), cos(a/2)),
 * axis normalised, computed in double and rounded once; a zero axis gives the
 * identity. Reproduces the stored bits of 31 437 of the corpus's 54 055
 * orientation keys (nwn_axis_angle_to_quat(): 24 079). Used by the apply's
 * controller edits; the compiler uses nwn_axis_angle_to_quat().
 */
void nwn_axis_angle_to_quat_double(const float aa[4], float q[4]);
/** Face plane n = normalize((p1-p0) x (p2-p1)), d = -n.p0, in BioWare's
 * compiler's arithmetic (float edges, float cross product, x87 extended
 * length; d in double), or nwnmdlcomp's (@p ar). false for a degenerate
 * face. */
bool nwn_edit_face_plane(const float *p0, const float *p1, const float *p2, float out[4], nwn_arith ar);
/** Bounding box of @p nv vertices (xyz floats) and the origin, extended by
 * the animmesh vertex sets of @p am (may be NULL). */
void nwn_edit_bbox(const float *v, size_t nv, const nwn_animmesh *am, float mn[3], float mx[3]);
/** Mean of the distinct (bitwise) positions in first-occurrence order, float
 * sum / float count (BioWare) or extended sum / count (nwnmdlcomp). false
 * on no memory. */
bool nwn_edit_average(const float *v, size_t nv, float out[3], nwn_arith ar);
/** Largest distance of a vertex from @p avg: float differences, double
 * length rounded to float (BioWare). nwnmdlcomp: from its own unrounded
 * average of the distinct positions (@p avg unused), extended precision
 * throughout; NaN on no memory. */
float nwn_edit_radius(const float *v, size_t nv, const float avg[3], nwn_arith ar);
/** Sum of |(p1-p0) x (p2-p0)| / 2 over @p nf faces (@p fv: 3 indices each):
 * edges and cross product rounded to float (BioWare) or not (nwnmdlcomp),
 * extended length, float running sum. */
float nwn_edit_area(const float *v, const uint16_t *fv, size_t nf, nwn_arith ar);
/** Adjacency: for edge k = (v_k, v_k+1) of each face, the first other face
 * sharing the edge in either winding, or -1; @p adj has nf * 3 entries.
 * false on no memory. */
bool nwn_face_adjacency(const uint16_t *fv, size_t nf, int16_t *adj);
/** Box (min xyz, max xyz) of the face with vertex indices @p fv. */
void nwn_face_box(const float *v, const uint16_t *fv, float box[6]);

#endif
