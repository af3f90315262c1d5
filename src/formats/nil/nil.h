/**
 * @file nil.h
 * Vampire: The Masquerade – Redemption level geometry (NIL, version 27):
 * bytes <-> in-memory model, lossless, read-only in the mount.
 *
 * Layout sources: Nihilistic's NOD Engine SDK 1.0 "NIL File Specifications"
 * (cited as [SDK]; the public copy stops in the middle of the sector table,
 * at aSectorVertices) and the public NIL readers (cited as [N §3.x]: §3.1
 * file header, §3.2 sector), chiefly TheBestPlan's NIL -> Killing Floor
 * converter (TheBestPlan/killingfloor-map-importer, src/vtmr/nil.js and
 * docs/games/vtmr.md), reverse engineered from real v27 files ([TBP]), with
 * a StarCraft: Ghost NIL v35 parser (sophiaeagent-beep/ghost-port-tools)
 * confirming the magic and header offsets; docs/formats/nil.md. All values
 * little-endian.
 *
 *   off   field                                                  source
 *   0x00  magic, 4 bytes "NIL\x10"                               [SDK "ignored"; N §3.1]
 *   0x04  version u32 = 27                                       [SDK]
 *   0x08  GlobalLight cRenderLight, 72 bytes (fields unknown)    [N §3.1: 0x08..0x4F]
 *   0x50  AmbientColor vec3 (RGB, 3 × f32)                       [SDK, N §3.1]
 *   0x5C  NumMaterials u32                                       [SDK, N §3.1]
 *   0x60  MaterialName, 32 bytes NUL-padded × NumMaterials       [SDK]
 *         NumSectors u32                                         [SDK]
 *         sectors
 *
 *   sector (the part [SDK] documents; sizes corrected as in docs/formats/nil.md):
 *         SectorFlags u32 | AmbientColor vec3 (12)
 *         NumSectorPlanes u8  | cPlane3D (16 = normal vec3 + distance f32) × n
 *         NumSurfacePlanes u16| cPlane3D × n
 *         NumBSPNodes u16     | cBSPNode (8 = 4 × u16, meaning unknown) × n
 *         NumVertices u16     | vec3 × n
 *         NumSectorVerts u16  | cSectorVertex (24 bytes, nil_wedge) × n   [TBP]
 *         ... the rest of the sector: not documented anywhere (kept as bytes)
 *
 * What cannot be decoded, and how the decoder copes: the public spec stops
 * after aSectorVertices, so the length of a sector (and thus where the next
 * one starts) is unknown. Sector 0 starts right after NumSectors and is read
 * in sequence. Every later sector is *located by search*: from the end of the
 * previous sector's wedges, the first byte offset at which a complete sector
 * prefix reads with every check of nil_sector_plausible() passing is taken as
 * the next sector; the bytes skipped over are the previous sector's `tail`.
 * Tie-break: when that first offset's plane normals are not all unit-length
 * (nil_sector_unit_normals()), the first later offset before the end of its
 * wedges that also passes and has unit-length normals is taken instead; the
 * first offset stays when there is none. Two false starts this catches: 16
 * bytes before a real sector whose SectorFlags low byte is NumSectorPlanes
 * + 1 (the bytes read as a sector with one more "plane" made of the real
 * flags and ambient colour), and a start inside an undocumented block that
 * runs on into the wedges of a later sector, swallowing the real one between.
 * The search stops when NumSectors sectors are found, at end of file, or when
 * its work budget (NIL_SEARCH_BUDGET) is spent. Whatever follows the last
 * sector's wedges is its tail. A level with NumSectors = 0 keeps everything
 * after the header in `trailer`.
 *
 * Losslessness: the encoder writes the header, then per decoded sector its
 * prefix and its tail, then the trailer. Every byte is thus kept whatever the
 * search found: decode -> encode gives back the input for every file the
 * decoder accepts (floats bit for bit, the bytes after a material name's NUL
 * included).
 *
 * Memory: a nil_model and everything under it belongs to the caller and is
 * freed with nil_model_free(). No FUSE or text code here.
 */
#ifndef LFS_NIL_H
#define LFS_NIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/** The only version whose layout is documented [SDK "Version"]. */
#define NIL_VERSION 27u
/** Bytes of the magic, the GlobalLight block and a material name. */
#define NIL_MAGIC_SIZE 4u
#define NIL_LIGHT_SIZE 72u
#define NIL_NAME_SIZE 32u
/** File offset of NumMaterials, and of the first material name. */
#define NIL_OFF_NUM_MATERIALS 0x5Cu
#define NIL_OFF_MATERIALS 0x60u
/** Record sizes inside a sector. */
#define NIL_PLANE_SIZE 16u
#define NIL_BSP_NODE_SIZE 8u
#define NIL_VERTEX_SIZE 12u
#define NIL_WEDGE_SIZE 24u
/** Smallest possible sector prefix (all counts zero). */
#define NIL_SECTOR_MIN 25u
/**
 * Work budget of the sector search, in bytes examined: NIL_SEARCH_BUDGET_PER_BYTE
 * per byte of input plus NIL_SEARCH_BUDGET_BASE. Keeps hostile input linear.
 */
#define NIL_SEARCH_BUDGET_PER_BYTE 32u
#define NIL_SEARCH_BUDGET_BASE (1u << 20)
/** |normal|^2 may differ from 1 by this much for a plane to count as unit-length. */
#define NIL_UNIT_TOLERANCE 1e-3

/** The 4 magic bytes every known file starts with [N §3.1]. */
extern const uint8_t nil_magic[NIL_MAGIC_SIZE];

/** cPlane3D: unit normal (x, y, z) and distance from the origin [SDK]. */
typedef struct nil_plane {
	float n[3];
	float d;
} nil_plane;

/** cBSPNode: four 16-bit words whose meaning is not documented [SDK]. */
typedef struct nil_bsp_node {
	uint16_t w[4];
} nil_bsp_node;

/**
 * cSectorVertex ("wedge"), 24 bytes [N §3.2, TBP's layout]:
 * vertex u16 (index into the sector's vertices) | base u16 (per-sector
 * constant in real files: flags / lightmap page / base material index) |
 * colour u8 × 4 (R, G, B, A; A = 0xFF in real files) | texture u, v f32
 * (world-planar) | lightmap u, v f32.
 */
typedef struct nil_wedge {
	uint16_t vertex;
	uint16_t base;
	uint8_t rgba[4];
	float uv[2];
	float lm[2];
} nil_wedge;

/** One sector: the documented prefix and the undocumented rest (`tail`). */
typedef struct nil_sector {
	size_t offset;     /**< file offset of SectorFlags (derived, not stored) */
	bool searched;     /**< located by search (every sector but the first) */
	uint32_t flags;    /**< SectorFlags (game-specific, meaning not public) */
	float ambient[3];  /**< per-sector ambient RGB */
	uint8_t n_sector_planes;
	nil_plane *sector_planes;    /**< planes bounding the sector */
	uint16_t n_surface_planes;
	nil_plane *surface_planes;   /**< planes of the surfaces */
	uint16_t n_bsp;
	nil_bsp_node *bsp;           /**< collision BSP nodes */
	uint16_t n_vertices;
	float *vertices;             /**< 3 × n_vertices, positions in level units */
	uint16_t n_wedges;
	nil_wedge *wedges;           /**< a Direct3D triangle strip over vertices [TBP] */
	size_t n_tail;
	uint8_t *tail;               /**< bytes up to the next sector (or end of file) */
} nil_sector;

/** A NIL file. */
typedef struct nil_model {
	uint8_t magic[NIL_MAGIC_SIZE];
	uint32_t version;
	uint8_t light[NIL_LIGHT_SIZE];  /**< cRenderLight, kept as bytes (layout unknown) */
	float ambient[3];               /**< level ambient RGB */
	uint32_t n_materials;
	uint8_t (*materials)[NIL_NAME_SIZE]; /**< names as stored, all 32 bytes */
	uint32_t n_sectors;             /**< NumSectors as stored */
	uint32_t n_decoded;             /**< sectors in `sectors` (<= n_sectors) */
	nil_sector *sectors;
	bool search_stopped;            /**< the search budget ran out (decode only) */
	size_t n_trailer;
	uint8_t *trailer;               /**< bytes after the last decoded structure */
} nil_model;

/**
 * Cheap header test (O(1)): magic "NIL\x10", version 27, the material table
 * and NumSectors minimal sectors fit in @p n bytes.
 */
bool nil_is_binary(const uint8_t *data, size_t n);

/**
 * Decode @p n bytes. On success *out is a new model (free with
 * nil_model_free()).
 * @return LFS_OK; LFS_ERR_NOTFORMAT (bad magic, file shorter than the header);
 *         LFS_ERR_UNSUPPORTED (version other than 27); LFS_ERR_CORRUPT (a count
 *         runs past the end: @p err names the offset and structure);
 *         LFS_ERR_NOMEM.
 */
lfs_err nil_decode(const uint8_t *data, size_t n, nil_model **out, lfs_error *err);

/**
 * Encode @p m into a new malloc'd buffer (*out, *n). Writes exactly the
 * fields of the model in file order (see the file comment).
 * @return LFS_OK, LFS_ERR_CORRUPT when an array pointer is NULL with a
 *         non-zero count, LFS_ERR_NOMEM.
 */
lfs_err nil_encode(const nil_model *m, uint8_t **out, size_t *n, lfs_error *err);

/** Free a model (NULL is fine). */
void nil_model_free(nil_model *m);

/** Free the arrays of one sector and zero it. */
void nil_sector_clear(nil_sector *s);

/**
 * Append one zeroed sector to m->sectors and count it in m->n_decoded (the
 * decoder and the model.txt parser both build the array this way).
 * @p cap is the capacity of m->sectors in sectors: 0 with m->sectors NULL
 * before the first call, then left to this function.
 * @return the new sector (owned by @p m), or NULL when out of memory (the
 *         model is unchanged).
 */
nil_sector *nil_sector_push(nil_model *m, size_t *cap);

/**
 * Length of the material name in @p raw: bytes before the first NUL (32 when
 * there is none).
 */
size_t nil_name_len(const uint8_t raw[NIL_NAME_SIZE]);

/**
 * The search test (exposed for tests and docs): does a complete sector prefix
 * start at @p off, with finite ambient, plane, vertex and wedge floats, at
 * least one vertex, at least 3 wedges, every wedge's vertex index below
 * NumVertices and every wedge's alpha byte 0xFF [TBP]? On true, *end is the
 * offset just past its wedges. *work grows by the bytes examined.
 */
bool nil_sector_plausible(const uint8_t *data, size_t n, size_t off, size_t *end,
			  uint64_t *work);

/**
 * The search's tie-break: does the sector prefix at @p off fit, with every
 * sector and surface plane normal of length 1 (|n|^2 within
 * NIL_UNIT_TOLERANCE of 1; no planes counts as true)?
 */
bool nil_sector_unit_normals(const uint8_t *data, size_t n, size_t off);

#endif
