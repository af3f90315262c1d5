/**
 * @file nod.h
 * Vampire: The Masquerade – Redemption model (NOD, version 7):
 * bytes <-> in-memory model, lossless.
 *
 * Layout sources: Nihilistic's NOD Engine SDK 1.0 "NOD File Specifications"
 * (cited as [SDK]) and the three independent public readers, which agree on
 * the order and sizes (cited as [N §1.x]: §1.1 header, §1.2 bone, §1.3
 * vertex, §1.4 mesh group): hypov8's Vampire.T.M.R_Noesis_plugin
 * (fmt_NOD.py), rfsheffer/nod_nad_to_fbx (nod_file.py) and
 * atrblizzard/RedemptionUnity (Assets/Scripts/NOD); docs/formats/nod.md.
 * All values little-endian, no alignment padding anywhere.
 *
 *   header    version u32 (= 7) | n_materials u32 | material name str32 × n
 *             | n_bones u16 | n_meshes u16 | n_verts u32 | n_faces u32
 *             | n_groups u16 | model flags u32 | bounds min xyz, max xyz f32  [SDK, N §1.1]
 *   bone      66 bytes: rest translate xyz | rest inverse 12 f32 | sibling s16
 *             | child s16 | parent s16                                       [N §1.2]
 *   mesh      name str32 × n_meshes                                         [SDK]
 *   vertex    40 bytes: pos xyz | normal xyz | uv | weight f32 | bone u8
 *             | 3 more bytes (kept verbatim)                                 [N §1.3]
 *   lod       u16 × n_verts, only when model flag bit 0 (HASLOD) is set     [SDK, N §1.1]
 *   face      3 × u16, group-local vertex indices                           [SDK]
 *   group     28 bytes: material s32 | reserved 12 bytes | n_faces u16
 *             | n_verts u16 | min_verts u16 | flags u16 | bone u8 | mesh u8
 *             | 2 more bytes (kept verbatim)                                 [SDK, N §1.4]
 *   trailing  whatever follows the last group, verbatim
 *
 * Group bone and mesh fields: the SDK gives BYTE, BYTE after the flags (offsets
 * 24 and 25, then two bytes nobody documents); hypov8's writer and its Kaitai
 * spec agree; rfsheffer/RedemptionUnity read u16 at 24 and u16 at 26. We follow
 * the SDK (docs/formats/nod.md); every byte is kept either way.
 *
 * Space and units (measured on the corpus, docs/formats/nod.md): vertex
 * positions and normals are in MODEL space at the rest pose (not bone-local);
 * `translate` of a bone is its rest position in its PARENT bone's frame; the
 * 12 `inverse` floats are the inverse of the bone's model-space rest matrix,
 * column-major 3×4 (x, y, z basis columns, then translation). Z is up, +Y is
 * the character's forward, +X its right [SDK "Coordinate systems"]. UV v runs
 * downwards (Direct3D convention; v = 1 − the NWN/OBJ v of the same point).
 *
 * Structure: the groups partition the vertex and face arrays consecutively in
 * file order [SDK, N §1.4]: nod_decode() rejects a file whose group vertex or
 * face counts do not add up to the header counts (the engine would index
 * outside its arrays). Face indices and LOD words are NOT range-checked (kept
 * as stored; views mark out-of-range faces).
 *
 * Memory: a nod_model and everything under it is owned by the caller and
 * freed with nod_model_free(). No FUSE or text code here.
 */
#ifndef LFS_NOD_H
#define LFS_NOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/** The only version whose layout is documented ("Vampire 1.1 uses version 7") [SDK]. */
#define NOD_VERSION 7u
/** Byte sizes of the fixed structures. */
#define NOD_NAME_SIZE 32u
#define NOD_HEADER_FIXED 42u /**< n_bones .. bounds: 2+2+4+4+2+4+24 */
#define NOD_BONE_SIZE 66u
#define NOD_VERTEX_SIZE 40u
#define NOD_FACE_SIZE 6u
#define NOD_GROUP_SIZE 28u

/** Model flags [SDK "ModelFlags Bitvector"]. */
enum nod_model_flag {
	NOD_MODEL_HASLOD = 0x1, /**< lod collapse words follow the vertices */
	NOD_MODEL_INLINE = 0x2, /**< generated from Inline level editor data */
	NOD_MODEL_STATIC = 0x4, /**< no skeletal animation */
};

/** Group flags [SDK "GroupFlags Bitvector"]. */
enum nod_group_flag {
	NOD_GROUP_HASLOD = 0x1,
	NOD_GROUP_NOWEIGHTS = 0x2,
	NOD_GROUP_NOSKINNING = 0x4,
	NOD_GROUP_MULTITEXTURE = 0x8,
};

/** A 32-byte name field exactly as stored (NUL-padded ASCII, not always terminated). */
typedef struct nod_name {
	uint8_t raw[NOD_NAME_SIZE];
} nod_name;

/** Length of the name up to the first NUL (at most 32). */
size_t nod_name_len(const nod_name *nm);

/**
 * True when the bytes after the name's first NUL are all zero (the canonical
 * form the text writer can express without the raw bytes).
 */
bool nod_name_canonical(const nod_name *nm);

/** One bone (66 bytes) [N §1.2]. */
typedef struct nod_bone {
	float translate[3]; /**< rest position in the parent bone's frame (model units) */
	float inverse[12];  /**< inverse model-space rest matrix, column-major 3×4 */
	int16_t sibling;    /**< next bone with the same parent, -1 = none */
	int16_t child;      /**< first child, -1 = none */
	int16_t parent;     /**< parent, -1 = root */
} nod_bone;

/** One vertex (40 bytes) [N §1.3]. */
typedef struct nod_vertex {
	float pos[3];    /**< model space, rest pose */
	float normal[3]; /**< model space */
	float uv[2];     /**< v downwards (Direct3D) */
	float weight;    /**< share of `bone`; 1 − weight goes to bone's parent [N §1.3] */
	uint8_t bone;    /**< bone index */
	uint8_t pad[3];  /**< the three bytes after the bone index, verbatim */
} nod_vertex;

/** One triangle: three vertex indices local to its group. */
typedef struct nod_face {
	uint16_t v[3];
} nod_face;

/** One mesh group (28 bytes) [SDK "Mesh Group Definitions", N §1.4]. */
typedef struct nod_group {
	int32_t material;     /**< index into materials, -1 = untextured */
	uint8_t reserved[12]; /**< "should be ignored", verbatim */
	uint16_t n_faces;
	uint16_t n_verts;
	uint16_t min_verts;   /**< minimum-LOD vertex count (0xCDCD from hypov8's writer) */
	uint16_t flags;       /**< enum nod_group_flag (0xCDCF from hypov8's writer) */
	uint8_t bone;         /**< rigid binding bone when NOSKINNING */
	uint8_t mesh;         /**< index into mesh names */
	uint8_t pad[2];       /**< the last two bytes, verbatim */
	/* derived on decode / nod_model_layout(), not stored: */
	uint32_t first_vert;  /**< index of the group's first vertex in the model array */
	uint32_t first_face;  /**< index of the group's first face in the model array */
} nod_group;

/** A whole NOD file. */
typedef struct nod_model {
	uint32_t version; /**< NOD_VERSION after a successful decode */
	uint32_t flags;   /**< enum nod_model_flag, other bits kept */
	float bounds[6];  /**< min xyz, max xyz, model space */
	uint32_t n_materials;
	nod_name *materials;
	uint16_t n_bones;
	nod_bone *bones;
	uint16_t n_meshes;
	nod_name *meshes;
	uint32_t n_verts;
	nod_vertex *verts;
	uint16_t *lod;    /**< n_verts collapse words when flags & HASLOD, else NULL */
	uint32_t n_faces;
	nod_face *faces;
	uint16_t n_groups;
	nod_group *groups;
	size_t n_trailing;
	uint8_t *trailing; /**< bytes after the last group, verbatim */
} nod_model;

/**
 * Cheap header test: version 7 and a header whose counts the file size can
 * hold (material names, bones, meshes, vertices, faces, groups). Does not
 * check the group partition.
 */
bool nod_is_binary(const uint8_t *data, size_t n);

/**
 * Decode @p n bytes into a new model (*out, free with nod_model_free()).
 * @return LFS_OK; LFS_ERR_NOTFORMAT (shorter than the fixed header),
 *         LFS_ERR_UNSUPPORTED (version ≠ 7), LFS_ERR_CORRUPT (a count runs
 *         past the end of the file, or the groups do not partition the
 *         vertex/face arrays: @p err names the file offset and structure),
 *         LFS_ERR_NOMEM. *out is NULL on failure.
 */
lfs_err nod_decode(const uint8_t *data, size_t n, nod_model **out, lfs_error *err);

/**
 * Recompute every group's first_vert / first_face from the counts and check
 * that the groups partition the arrays. LFS_ERR_CORRUPT (structure "mesh
 * group", offset SIZE_MAX) otherwise. Used by the encoder and by view parsers
 * after they change counts.
 */
lfs_err nod_model_layout(nod_model *m, lfs_error *err);

/**
 * Encode @p m into a new malloc'd buffer (*out, *n bytes; caller frees).
 * LFS_ERR_CORRUPT when the model is inconsistent (NULL arrays with non-zero
 * counts, HASLOD without lod words, groups not partitioning the arrays).
 */
lfs_err nod_encode(const nod_model *m, uint8_t **out, size_t *n, lfs_error *err);

/** Deep copy (NULL on allocation failure). */
nod_model *nod_model_clone(const nod_model *m);

/** Free a model (NULL allowed). */
void nod_model_free(nod_model *m);

#endif
