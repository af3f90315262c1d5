/**
 * @file sod.h
 * Storm3D Object Definition (SOD, Star Trek: Armada I/II): bytes <-> model,
 * lossless, versions 1.4 to 1.93.
 *
 * Layout sources: Steve Williams' (Storm3D graphics engine lead) "Storm3D
 * Object Definition (SOD) File Format", the 1.8 description (cited
 * [S §n]: its "Section n"), and the public readers and writers (cited
 * [N §4.x]: §4.1 header and versions, §4.2 legacy block, §4.3 materials,
 * §4.4 nodes, §4.5 mesh payload, §4.6 animation channels):
 * SomaZ/Blender_ST_Armada_Tools
 * (SOD.py), Elenterius/stau (sod_io.py), TamsynnImogen/Python-SOD-Viewer and
 * the Assimilation Software Armada SOD exporter; where they disagree the
 * choice was made by the corpus files (shared/corpus/sod/MANIFEST.tsv says
 * which writer wrote each one) and is recorded in docs/formats/sod.md
 * "Decisions".
 *
 * File shape (all little-endian; "pstr" = u16 length + that many bytes, no
 * terminator is added or removed: the bytes are kept as stored):
 *
 *   magic[10] ("Storm3D_SW" or "StarTrekDB") | f32 version
 *   legacy block          1.4-1.6 only: u16 n, n x (pstr, pstr, 7 bytes)
 *   materials             u16 n, n x (pstr name, f32 ambient[3], diffuse[3],
 *                         specular[3], specular power, u8 lighting model,
 *                         [u8 alpha self-illumination: 1.9+])
 *   nodes                 u16 n, n x (u16 type, pstr name, pstr parent,
 *                         f32[12] right, up, front, position, payload)
 *   animation channels    u16 n, n x (pstr node, u16 keys, f32 period,
 *                         u16 type, keys: type 0 = 12 f32 each, 5 = 1 f32)
 *   animation references  [u16 n: 1.6+], n x (u8 type, pstr node,
 *                         pstr anim, [f32 playback offset: 1.8+])
 *   trailing bytes        anything after the references (kept verbatim)
 *
 * Mesh payload (node type 1), version-dependent prefix [N §4.5]:
 *   [pstr texture material: 1.7+] [u32 flags, u32 texture count: 1.93]
 *   pstr texture
 *   1.91: u16 | 1.92: pstr borg texture, u16 |
 *   1.93: u32, [pstr bump texture, u32 bump type: when texture count == 2],
 *         pstr borg texture, u16
 *   u16 nverts, u16 ntverts, u16 ngroups, f32[3] x nverts, f32[2] x ntverts,
 *   ngroups x (u16 nfaces, pstr lighting material, nfaces x 3 x (u16 vertex,
 *   u16 tvert)), u8 cull type, u16 n, n x u16 (the "unused" word read as a
 *   count, as SomaZ's reader does; 0 in every known file).
 *
 * Memory: a model and everything it points to live in one arena owned by the
 * model; sod_model_free() releases all of it. Strings are sod_str: the stored
 * bytes plus a NUL terminator (a stored NUL inside a name is kept in `len`).
 *
 * Units: positions in game units, times (channel period, reference offset) in
 * seconds. Axes: Y up, X right, Z front (left-handed; docs/formats/sod.md).
 */
#ifndef LFS_SOD_H
#define LFS_SOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/error.h"

/** Version class: the stored float rounded to two decimals, times 100. */
typedef enum sod_ver {
	SOD_V14 = 140,
	SOD_V15 = 150,
	SOD_V16 = 160,
	SOD_V17 = 170,
	SOD_V18 = 180,
	SOD_V19 = 190,
	SOD_V191 = 191,
	SOD_V192 = 192,
	SOD_V193 = 193,
} sod_ver;

/** Node types [S "Nodes"]; no other value is valid (payload size unknown). */
enum sod_node_type {
	SOD_NULL = 0,
	SOD_MESH = 1,
	SOD_SPRITE = 3,
	SOD_LOD = 11,
	SOD_EMITTER = 12,
};

/** Animation channel key types [N §4.6]. */
enum sod_channel_type {
	SOD_CHAN_MATRIX = 0, /**< 12 floats per key: right, up, front, position */
	SOD_CHAN_SCALE = 5,  /**< 1 float per key: uniform scale */
};

/**
 * A stored identifier: @c len bytes at @c s, followed by a NUL. A field the
 * file's version does not have is {NULL, 0}; a stored empty string is {"", 0}.
 */
typedef struct sod_str {
	char *s;
	uint16_t len;
} sod_str;

/** Legacy block entry (1.4-1.6): meaning unknown, kept as stored. */
typedef struct sod_legacy {
	sod_str a, b;
	uint8_t bytes[7];
} sod_legacy;

/** Vertex lighting material [S §2]. */
typedef struct sod_material {
	sod_str name;
	float ambient[3], diffuse[3], specular[3];
	float specular_power;
	uint8_t lighting_model; /**< 0 constant, 1 lambert, 2 phong */
	uint8_t alpha_illum;    /**< 1.9+ only: alpha-map self-illumination */
} sod_material;

/** Triangle: per corner an index into the positions and one into the tverts. */
typedef struct sod_face {
	uint16_t v[3], t[3];
} sod_face;

/** Vertex lighting group: faces sharing one lighting material. */
typedef struct sod_group {
	sod_str material; /**< lighting material name, empty = default */
	uint16_t n_faces;
	sod_face *faces;
} sod_group;

/** Mesh payload. Fields outside the file's version are zero/empty. */
typedef struct sod_mesh {
	sod_str texture_material; /**< 1.7+: default, additive, translucent, ... */
	uint32_t flags;           /**< 1.93: bit 1 bump, bit 2 alpha self-illum */
	uint32_t n_textures;      /**< 1.93: 1 or 2 (2 = bump texture follows) */
	sod_str texture;
	uint32_t tex_reserved;    /**< 1.93: u32 after the texture (0 in every file) */
	sod_str bump_texture;     /**< 1.93 with n_textures == 2 */
	uint32_t bump_type;       /**< 1.93 with n_textures == 2 (512 = height map) */
	sod_str borg_texture;     /**< 1.92, 1.93 */
	uint16_t prefix_reserved; /**< 1.91-1.93: u16 closing the prefix */
	uint16_t n_verts, n_tverts, n_groups;
	float *verts;  /**< 3 * n_verts, node-local */
	float *tverts; /**< 2 * n_tverts */
	sod_group *groups;
	uint8_t cull;        /**< 0 none, 1 backface */
	uint16_t n_trailer;  /**< the word after the cull type */
	uint16_t *trailer;   /**< n_trailer words following it */
} sod_mesh;

/** Scene graph node [S §3]. */
typedef struct sod_node {
	uint16_t type;  /**< enum sod_node_type */
	sod_str name;
	sod_str parent; /**< empty for the root */
	float m[12];    /**< right, up, front, position (parent space) */
	sod_str emitter; /**< SOD_EMITTER only */
	sod_mesh *mesh;  /**< SOD_MESH only */
} sod_node;

/** Transform animation channel [S §4, N §4.6]. */
typedef struct sod_channel {
	sod_str node;
	uint16_t n_keys;
	float period;  /**< seconds per loop; keys evenly spaced over it */
	uint16_t type; /**< enum sod_channel_type */
	float *keys;   /**< n_keys * 12 (type 0) or n_keys (type 5) */
} sod_channel;

/** Texture animation reference [S §5]. */
typedef struct sod_ref {
	uint8_t type; /**< 4 in every known file; kept as stored */
	sod_str node, anim;
	float offset; /**< 1.8+ only: playback offset, seconds */
} sod_ref;

/** A whole SOD file. */
typedef struct sod_model {
	bool startrekdb;       /**< magic "StarTrekDB" instead of "Storm3D_SW" */
	float version;         /**< as stored (bits kept) */
	sod_ver ver;           /**< layout class derived from @c version */
	uint16_t n_legacy;     /**< 1.4-1.6 */
	sod_legacy *legacy;
	uint16_t n_materials;
	sod_material *materials;
	uint16_t n_nodes;
	sod_node *nodes;
	uint16_t n_channels;
	sod_channel *channels;
	uint16_t n_refs;
	sod_ref *refs;
	size_t n_trailing;     /**< bytes after the references */
	uint8_t *trailing;
	lfs_arena arena;       /**< private: every allocation of the model (common/arena.h) */
} sod_model;

/** Which optional parts a version class has (derived, never stored). */
typedef struct sod_layout {
	bool legacy;       /**< legacy block after the header (1.4-1.6) */
	bool refs_count;   /**< u16 reference count present (1.6+) */
	bool ref_offset;   /**< f32 playback offset per reference (1.8+) */
	bool texmat;       /**< mesh texture material pstr (1.7+) */
	bool alpha_illum;  /**< material alpha self-illumination byte (1.9+) */
	int prefix;        /**< mesh prefix after the texture: 0, 191, 192 or 193 */
} sod_layout;

/** The layout of version class @p v (docs/formats/sod.md "Decisions"). */
sod_layout sod_layout_of(sod_ver v);

/**
 * Version class of a stored version float: rounded to two decimals; false
 * (and *out untouched) for every value outside 1.4, 1.5, 1.6, 1.7, 1.8, 1.9,
 * 1.91, 1.92, 1.93 (e.g. 1.81, on which the public readers disagree).
 */
bool sod_ver_of(float version, sod_ver *out);

/** Cheap test: 10-byte magic "Storm3D_SW" or "StarTrekDB" and a version. */
bool sod_is_binary(const uint8_t *data, size_t n);

/**
 * Decode @p n bytes. On success *out is a new model (sod_model_free()).
 * @return LFS_OK; LFS_ERR_NOTFORMAT (no SOD magic); LFS_ERR_UNSUPPORTED
 *         (version outside the supported set; node/channel type or 1.93
 *         texture count whose layout is unknown); LFS_ERR_CORRUPT (a read
 *         past the end or an invalid value; @p err names the offset and
 *         the structure, and for the layouts other writers produce — see
 *         docs/formats/sod.md "Disputed files" — says which); LFS_ERR_NOMEM.
 */
lfs_err sod_decode(const uint8_t *data, size_t n, sod_model **out, lfs_error *err);

/**
 * Encode @p m in the layout of its own version class (m->ver). Output is
 * malloc'd into *out / *n. Fails with LFS_ERR_UNSUPPORTED/CORRUPT when the
 * model cannot be written in that version (e.g. a 1.93 texture count other
 * than 1 or 2, an unknown node type), LFS_ERR_NOMEM.
 */
lfs_err sod_encode(const sod_model *m, uint8_t **out, size_t *n, lfs_error *err);

/** Free a model (NULL is fine). */
void sod_model_free(sod_model *m);

/** A new empty model (version 1.8, magic Storm3D_SW), or NULL. */
sod_model *sod_model_new(void);

/** Zeroed memory from the model's arena (freed with the model); NULL on failure. */
void *sod_alloc(sod_model *m, size_t size);

/** Copy @p len bytes into a sod_str from the arena; false on failure. */
bool sod_str_set(sod_model *m, sod_str *dst, const char *s, size_t len);

/** Human name of a node type ("null", "mesh", "sprite", "lodcontrol", "emitter"), or NULL. */
const char *sod_node_type_name(uint16_t type);

#endif
