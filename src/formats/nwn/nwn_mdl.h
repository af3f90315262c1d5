/**
 * @file nwn_mdl.h
 * Neverwinter Nights binary MDL: bytes -> in-memory model.
 *
 * No FUSE or text code here. Layout sources, cited by key here and in the
 * rest of the NWN code (src/formats/nwn/, src/text/mdl_parse.*):
 *
 *  [T §section]  Torlack, "NWN Binary Model Files Basics" (public copy:
 *                xoreos/xoreos-docs, specs/torlack/binmdl.html); the section
 *                is the document's heading, e.g. [T "The Model Header"].
 *  [N §x.y]      facts beyond [T], each taken from the public readers and
 *                compilers named for its topic below where they agree, or
 *                measured on the test corpus (real game files; see
 *                docs/formats/nwn-binary.md and docs/nwn-compile.md):
 *    §1    an NWN binary vs other .mdl files: [T]'s file header; xoreos
 *          (src/graphics/aurora/model_nwn.cpp, model_kotor.cpp); GMax's
 *          "snoop" preamble, CRLF and NUL bytes in real ASCII files: measured
 *    §2    the ASCII MDL grammar of real files (§2.1 file level, §2.2 node
 *          blocks, §2.3 controllers, §2.4 animations, §2.5 walkmesh side
 *          files) as the public parsers read it: niv/nwn-tools (the NWNTools
 *          nwnmdlcomp: _NmcLib/NmcCoreParsers.cpp, NmcGeometry.cpp,
 *          NmcController.cpp, NmcMesh.cpp), jd28/rollnw
 *          (lib/nw/model/MdlTextParser.cpp), xoreos model_nwn.cpp,
 *          plenarius/cleanmodels (walkmeshes)
 *    §3.1  controller keys and data: [T]; niv/nwn-tools _NwnLib/NwnMdlNodes.h
 *          and NmcController.cpp; jd28/rollnw MdlBinaryParser.hpp
 *    §3.2  orientation storage (quaternion x, y, z, w; skin bind quaternions
 *          w, x, y, z): niv/nwn-tools NwnMdlDecomp.cpp and NmcMesh.cpp,
 *          cleanmodels load_binary.pl; checked on BioWare's it_torch_000
 *    §3.3  mesh header details: [T]; niv/nwn-tools NwnMdlNodes.h,
 *          virusman/nwnexplorer, jd28/rollnw MdlBinaryParser.hpp
 *    §3.4  faces, vertices and what the compiler computes: [T];
 *          niv/nwn-tools _NmcLib/NmcMesh.cpp, NmcGeometry.cpp
 *    §3.5  raw data block layout: [T]; measured on BioWare's and nwnmdlcomp's
 *          binaries
 *    §3.6  skin layout: [T]; niv/nwn-tools NmcMesh.cpp; jd28/rollnw
 *          lib/nw/render/docs/nwn_model_findings.md
 *    §3.7  light, emitter and reference layouts: [T]; niv/nwn-tools
 *          NwnMdlNodes.h, NmcGeometry.cpp
 *    §3.8  model header odds and ends, part numbers: [T]; niv/nwn-tools
 *    §4    number formatting of the decompilers: niv/nwn-tools,
 *          virusman/nwnexplorer, gyoerkaa/mdltools (NeverBlender)
 *
 * Shape of the model
 * ------------------
 * A file is a 12-byte file header, the model data block (starting at file
 * offset 12; every "model pointer" is an offset from there, 0 = NULL) and the
 * raw data block (every "raw pointer" is an offset from its start, 0xFFFFFFFF =
 * NULL) [T "Arrays and Pointers"]. The model geometry is a tree of nodes; each
 * animation is a separate geometry tree whose nodes carry controller keys.
 *
 * All nodes of one geometry are kept in a flat array in depth-first pre-order
 * (the order the compiler writes them and assigns part numbers); tree links are
 * indices into that array.
 *
 * Losslessness
 * ------------
 * Beyond the decoded values the model keeps a private copy of the whole input
 * (`image`), and every decoded structure records the model-data offset it was
 * read from (`off`). Function pointers, pad bytes, the uninitialised bytes after
 * the NUL of fixed-size strings, allocated-vs-used array counts and the layout
 * order are therefore all recoverable from `image` + `off`; the fields below
 * expose the ones a text view or an edit needs. The encoder (compiler issue)
 * patches values into a copy of `image` for value edits and re-lays the file
 * for structural edits.
 *
 * Units: positions in metres (game units), times in seconds, orientations as
 * stored: quaternions (x, y, z, w) in controller data [N §3.2], angles nowhere.
 *
 * Memory: everything hangs off one nwn_model and is freed by nwn_model_free().
 * All strings are NUL-terminated copies of the fixed-size fields (bytes after
 * the first NUL are not part of them).
 */
#ifndef LFS_NWN_MDL_H
#define LFS_NWN_MDL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../common/error.h"

/** Node flag bits [T "Model Routines and the Node types"]. */
enum nwn_node_flag {
	NWN_HAS_HEADER = 0x001,
	NWN_HAS_LIGHT = 0x002,
	NWN_HAS_EMITTER = 0x004,
	NWN_HAS_REFERENCE = 0x010,
	NWN_HAS_MESH = 0x020,
	NWN_HAS_SKIN = 0x040,
	NWN_HAS_ANIM = 0x080,
	NWN_HAS_DANGLY = 0x100,
	NWN_HAS_AABB = 0x200,
};

/** Node type = full flag combination [T]. */
typedef enum nwn_node_type {
	NWN_DUMMY = 0x001,
	NWN_LIGHT = 0x003,
	NWN_EMITTER = 0x005,
	NWN_REFERENCE = 0x011,
	NWN_TRIMESH = 0x021,
	NWN_SKIN = 0x061,
	NWN_ANIMMESH = 0x0A1,
	NWN_DANGLYMESH = 0x121,
	NWN_AABB = 0x221,
} nwn_node_type;

/** Classification byte at model header +0x72 [T "The Model Header", N §2.1]. */
enum nwn_classification {
	NWN_CLASS_EFFECT = 0x01,
	NWN_CLASS_TILE = 0x02,
	NWN_CLASS_CHARACTER = 0x04,
	NWN_CLASS_DOOR = 0x08,
};

/** Controller type ids [T "Controllers", N §3.1]. Meaning depends on node flags. */
enum nwn_controller_type {
	NWN_CTRL_POSITION = 8,
	NWN_CTRL_ORIENTATION = 20,
	NWN_CTRL_SCALE = 36,
	NWN_CTRL_SELFILLUMCOLOR = 100, /* meshes */
	NWN_CTRL_ALPHA = 128,          /* meshes */
	NWN_CTRL_DETONATE = 228,       /* emitters; may have no value columns */
};

/** A binary array descriptor {offset, used, allocated} [T "Arrays"]. */
typedef struct nwn_array {
	uint32_t off;   /**< model pointer to the first element (0 may mean none) */
	uint32_t count; /**< used entries */
	uint32_t alloc; /**< allocated entries (kept verbatim) */
} nwn_array;

/**
 * One controller [T "Controllers"]: `rows` keys, times at
 * node->ctrl_data[key_offset + r], values at ctrl_data[data_offset + r*ncols + c].
 */
typedef struct nwn_controller {
	uint32_t off;         /**< model offset of the 12-byte key structure */
	uint32_t type;        /**< nwn_controller_type (meaning depends on node flags) */
	uint16_t rows;        /**< number of keys (>= 1 in valid files) */
	uint16_t key_offset;  /**< index of the first time in ctrl_data */
	uint16_t data_offset; /**< index of the first value in ctrl_data */
	uint8_t columns;      /**< raw column byte: low nibble = values per key,
	                           bit 0x10 = bezier, 0xFF = no values (detonate) */
	uint8_t pad;          /**< pad byte; not always 0 in game files [N §3.1] */
	/* derived, for convenience: */
	uint8_t ncols;        /**< values per key: columns & 0x0F, 0 when columns == 0xFF */
	bool bezier;          /**< columns != 0xFF && (columns & 0x10). Bezier rows store
	                           all ncols values as written by the compiler [N §3.1] */
	const char *name;     /**< ASCII keyword ("position", "birthrate", ...) or NULL
	                           when the id is unknown for this node type */
} nwn_controller;

/** Face [T "The face structure"]. */
typedef struct nwn_face {
	float plane_normal[3];
	float plane_distance;
	uint32_t surface_id;  /**< walk material / ASCII face column 8 */
	int16_t adjacent[3];  /**< adjacent face per edge or -1 */
	uint16_t v[3];        /**< vertex indices (into the binary, split vertex list) */
} nwn_face;

/** Bone slots of a skin: 17 in the table plus the word after it (nwn_skin). */
#define NWN_SKIN_BONES 18

/** Skin part of a skin mesh [T "The Skin mesh Node", N §3.6]. */
typedef struct nwn_skin {
	nwn_array weights_arr;        /**< compile-time weights array (kept verbatim) */
	uint32_t weights_raw;         /**< raw pointer: 4 f32 per vertex, or 0xFFFFFFFF */
	uint32_t bonerefs_raw;        /**< raw pointer: 4 i16 per vertex, or 0xFFFFFFFF */
	uint32_t node_to_bone_ptr;    /**< model pointer: i16 per model node */
	uint32_t node_to_bone_count;
	nwn_array qbone_arr, tbone_arr, const_idx_arr;
	/** bone index -> node number (depth-first index in the model geometry):
	 *  the 17-entry table at skin +0x2B0 [T] and an 18th slot in the word after
	 *  it (+0x2D2, Torlack's "pad"): the game's compiler and nwnmdlcomp check
	 *  `bones > 17` after storing, so a skin holds up to NWN_SKIN_BONES bones
	 *  and bone ref 17 reads that word (nwnmdlcomp's decompiler does the
	 *  same). Unused slots hold whatever the compiler left there (0). */
	int16_t bone_node_numbers[NWN_SKIN_BONES];
	/* decoded data, NULL when absent: */
	float *weights;               /**< n_verts * 4 */
	int16_t *bonerefs;            /**< n_verts * 4, -1 unused (lanes in any order) */
	int16_t *node_to_bone;        /**< node_to_bone_count entries */
	float *qbone_ref_inv;         /**< qbone_arr.count * 4, stored order w x y z */
	float *tbone_ref_inv;         /**< tbone_arr.count * 3 */
	uint32_t *const_indices;      /**< const_idx_arr.count */
} nwn_skin;

/** Dangly part [T "The Danglymesh node"]. */
typedef struct nwn_dangly {
	nwn_array constraints_arr;    /**< one float per binary vertex */
	float *constraints;           /**< constraints_arr.count floats */
	float displacement, tightness, period;
} nwn_dangly;

/** One AABB tree entry, flattened depth first [T "The AABB node"]. */
typedef struct nwn_aabb_entry {
	uint32_t off;                 /**< model offset of the 40-byte entry */
	float bmin[3], bmax[3];
	uint32_t left_ptr, right_ptr; /**< model pointers as stored */
	int32_t leaf_face;            /**< face index or -1 */
	uint32_t plane;               /**< most significant plane bits */
	uint16_t depth;               /**< 0 for the root */
} nwn_aabb_entry;

/** AABB walkmesh part. */
typedef struct nwn_aabb {
	uint32_t root_ptr;
	nwn_aabb_entry *entries;      /**< depth-first pre-order */
	uint32_t n_entries;
} nwn_aabb;

/** Animmesh part [T "The Animmesh node"]. */
typedef struct nwn_animmesh {
	float sample_period;          /**< seconds */
	nwn_array anim_verts_arr, anim_tverts_arr, anim_normals_arr; /**< compile-only, kept */
	uint32_t anim_verts_ptr, anim_tverts_ptr; /**< as stored (model pointers) */
	uint32_t n_vert_sets, n_tvert_sets;
	float *anim_verts;            /**< n_verts * n_vert_sets * 3, vertex-major (vertex i, set s at i * n_vert_sets + s), or NULL */
	float *anim_tverts;           /**< n_verts * n_tvert_sets * 2, vertex-major like anim_verts, or NULL */
} nwn_animmesh;

/** Mesh header and raw data [T "Mesh Nodes", N §3.3–3.5]. */
typedef struct nwn_mesh {
	uint32_t fn[2];
	nwn_array faces_arr;
	nwn_face *faces;
	uint32_t n_faces;
	float bmin[3], bmax[3], radius, average[3];
	float diffuse[3], ambient[3], specular[3], shininess;
	uint32_t shadow, beaming, render, transparency_hint;
	uint32_t render_hint;         /**< +0xE4: EE renderhint (2 = NormalAndSpecMapped) */
	char textures[4][65];         /**< texture0 = bitmap, texture3 = EE materialname */
	uint32_t tile_fade;
	nwn_array vindex_arr, leftover_arr, vindex_count_arr, vindex_offset_arr;
	uint32_t strip_raw, strip_count;
	uint8_t triangle_mode;        /**< 3 = triangles */
	uint32_t compile_ptr;
	uint32_t verts_raw;           /**< raw pointers, 0xFFFFFFFF = absent */
	uint16_t n_verts, n_textures;
	uint32_t tverts_raw[4], normals_raw, colors_raw, texanim_raw[6];
	uint8_t lightmapped, rotate_texture;
	float area;                   /**< +0x268: total triangle area [N §3.3] */
	uint32_t unknown_26c;
	/* raw data, NULL when the pointer is absent: */
	float *verts;                 /**< n_verts * 3 */
	float *tverts[4];             /**< n_verts * 2 each */
	float *normals;               /**< n_verts * 3 */
	uint32_t *colors;             /**< n_verts, RGBA packed little endian (R in low byte) */
	uint32_t *vindex_counts;      /**< vindex_count_arr.count */
	uint32_t *vindex_offsets;     /**< vindex_offset_arr.count raw pointers */
	uint16_t *vindices;           /**< first index list (vindex_counts[0] entries) or NULL */
	uint32_t n_vindices;
	/* subtype parts, NULL unless the node flags say so: */
	nwn_skin *skin;
	nwn_dangly *dangly;
	nwn_aabb *aabb;
	nwn_animmesh *anim;
} nwn_mesh;

/** Light [T "The Light Node"]. */
typedef struct nwn_light {
	float flare_radius;
	nwn_array unknown_arr, sizes_arr, positions_arr, colorshifts_arr, texnames_arr;
	float *flare_sizes;           /**< sizes_arr.count */
	float *flare_positions;       /**< positions_arr.count */
	float *flare_colorshifts;     /**< colorshifts_arr.count * 3 */
	char **flare_textures;        /**< texnames_arr.count strings */
	uint32_t priority, ambient_only, dynamic_type, affect_dynamic, shadow,
		generate_flare, fading_light;
} nwn_light;

/** Emitter [T "The Emitter Node", N §3.7]. */
typedef struct nwn_emitter {
	float dead_space, blast_radius, blast_length;
	uint32_t x_grid, y_grid, spawn_type;
	char update[33], render[33], blend[33], texture[65], chunk_name[17];
	uint32_t two_sided_tex, loop;
	uint16_t render_order, pad;
	uint32_t flags;               /**< p2p=0x1 ... inherit_part=0x400 */
} nwn_emitter;

/** Reference [T "The Reference Node"]. */
typedef struct nwn_reference {
	char ref_model[65];
	uint32_t reattachable;
} nwn_reference;

/** Any node [T "Nodes"]. */
typedef struct nwn_node {
	uint32_t off;                 /**< model offset of the node header */
	uint32_t fn[6];
	uint32_t inherit_color;
	int32_t part_number;
	char name[33];
	uint32_t geom_ptr, parent_ptr;
	nwn_array children_arr, ctrl_arr, ctrl_data_arr;
	uint32_t flags;               /**< nwn_node_type for known combinations */
	/* tree, as indices into nwn_geometry.nodes: */
	int32_t parent;               /**< -1 for the root */
	uint32_t *children;
	uint32_t n_children;
	uint32_t depth;               /**< 0 for the root */
	/* controllers: */
	nwn_controller *ctrls;
	uint32_t n_ctrls;
	float *ctrl_data;             /**< ctrl_data_arr.count floats */
	uint32_t n_ctrl_data;
	/* type parts (NULL unless flagged): */
	nwn_mesh *mesh;
	nwn_light *light;
	nwn_emitter *emitter;
	nwn_reference *ref;
} nwn_node;

/** Animation event [T "The Animation Header"]. */
typedef struct nwn_event {
	float after;                  /**< seconds from the start */
	char name[33];
} nwn_event;

/** Geometry header + node tree (model or animation) [T "The Geometry Header"]. */
typedef struct nwn_geometry {
	uint32_t off;                 /**< model offset of the geometry header */
	uint32_t fn[2];
	char name[65];
	uint32_t root_ptr;
	uint32_t node_count_field;    /**< +0x4C as stored (includes supermodel nodes) */
	nwn_array rt1_arr, rt2_arr;
	uint32_t ref_count;
	uint8_t geom_type;            /**< 2 = model, 5 = animation */
	nwn_node *nodes;              /**< depth-first pre-order; nodes[0] is the root */
	uint32_t n_nodes;
} nwn_geometry;

/** Animation [T "The Animation Header"]. */
typedef struct nwn_anim {
	nwn_geometry geom;            /**< geom.name is the animation name */
	float length;                 /**< seconds */
	float trans_time;             /**< seconds */
	char anim_root[65];
	nwn_array events_arr;
	nwn_event *events;
	uint32_t n_events;
} nwn_anim;

/** Whole model [T "The Model Header"]. */
typedef struct nwn_model {
	uint8_t *image;               /**< private copy of the input file */
	size_t image_size;
	uint32_t model_size, raw_size;/**< file header A and B */
	nwn_geometry geom;            /**< geom.name is the model name */
	uint8_t unknown_70, unknown_71;
	uint8_t classification;       /**< nwn_classification bits */
	uint8_t fog;
	uint32_t unknown_74;
	nwn_array anims_arr;
	uint32_t parent_model_ptr;
	float bmin[3], bmax[3], radius;
	float animation_scale;
	char supermodel[65];          /**< "" or "NULL" when none */
	nwn_anim *anims;
	uint32_t n_anims;
} nwn_model;

/**
 * Cheap check of the file header: first u32 = 0 and 12 + A + B = @p n
 * [N §1]. True does not yet mean the file decodes.
 */
bool nwn_mdl_is_binary(const uint8_t *data, size_t n);

/**
 * Decode a binary MDL.
 *
 * @param data  the whole file (not retained: the model copies it)
 * @param n     its size in bytes
 * @param out   receives a newly allocated model; free with nwn_model_free()
 * @param err   optional: on failure names the offset and structure
 * @return LFS_OK; LFS_ERR_NOTFORMAT when the header test fails (ASCII, other
 *         games); LFS_ERR_CORRUPT when the tree walk finds a bad offset, count,
 *         cycle or flag combination; LFS_ERR_NOMEM.
 */
lfs_err nwn_mdl_decode(const uint8_t *data, size_t n, nwn_model **out, lfs_error *err);

/**
 * nwn_mdl_decode() without the private copy of the input: the model's
 * `image` is NULL (image_size 0), so nwn_mdl_encode() of it lays the file
 * out without the image's pad and string-tail bytes. For a model that is
 * only read (views, a decode check): it saves a copy of the whole file.
 */
lfs_err nwn_mdl_decode_noimage(const uint8_t *data, size_t n, nwn_model **out, lfs_error *err);

/** Free a model from nwn_mdl_decode(); NULL is fine. */
void nwn_model_free(nwn_model *m);

/**
 * Size in bytes of the node structure of a node with these flags (node
 * header plus its type part: 0x70 dummy ... 0x2D4 skin) [T], 0 for an unknown
 * flag combination.
 */
uint32_t nwn_node_size(uint32_t flags);

/** ASCII node type keyword for a flag combination ("trimesh", ...), "dummy" if unknown. */
const char *nwn_node_type_name(uint32_t flags);

/**
 * ASCII keyword of controller @p type on a node with @p flags ("position",
 * "birthrate", "selfillumcolor", ...), NULL when unknown. [T "Controllers"]
 */
const char *nwn_controller_name(uint32_t flags, uint32_t type);

/** Controller id for ASCII keyword @p name (case-insensitive) on a node with @p flags, 0 if none. */
uint32_t nwn_controller_id(uint32_t flags, const char *name);

/**
 * ASCII classification word for the classification byte: "effect", "tile",
 * "character", "door", "unknown" for 0; NULL for any other value (EE item/gui
 * values are unconfirmed [N §2.1]; writers print the number instead).
 */
const char *nwn_classification_name(uint8_t c);

/** Model node index with this name in @p g (case-insensitive), -1 when absent. */
int32_t nwn_find_node(const nwn_geometry *g, const char *name);

#endif
