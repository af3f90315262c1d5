/**
 * @file nad.h
 * Vampire: The Masquerade – Redemption animation (NAD, version 3):
 * bytes <-> in-memory model, lossless.
 *
 * Layout sources: Nihilistic's NOD Engine SDK 1.0 "NAD File Specifications"
 * (cited as [SDK]) and the two independent public readers, which agree on
 * it (cited as [N §2.1]): rfsheffer/nod_nad_to_fbx (nad_file.py) and hypov8's
 * Vampire.T.M.R_Noesis_plugin (fmt_NAD.py, the only writer studied);
 * docs/formats/nad.md. All values are little-endian.
 *
 *   header   version u32 (= 3) | n_tracks u32 | flags u32 | duration f32   [SDK, N §2.1]
 *   track    n_keys u32 | bone u32 | type u32 | key × n_keys               [SDK]
 *   key      56 bytes = 14 × f32: frame, frame_scale, value xyz, C xyz,
 *            B xyz, A xyz                                                 [SDK, N §2.1]
 *   tags     n_tags u32 | (frame f32, type u32) × n_tags                   [SDK, N §2.1]
 *   trailing whatever follows the tags (hypov8's exporter writes 4 zero
 *            bytes after a zero tag count [N §2.1])
 *
 * Units: frames (nominal 30 per second [SDK]); rotation values are Euler
 * angles (pitch, roll, yaw = about X, Y, Z), in degrees per the only writer
 * studied [N §2.1]; translation values in model units. The codec never
 * interprets them.
 *
 * Losslessness: every field is kept as read, floats bit for bit (NaN
 * payloads, -0, +inf frame scales), track types and tag types outside the
 * documented enums, and all bytes after the tag list (`trailing`). Nothing
 * is validated that the layout does not need (frames need not ascend, the
 * duration need not match), so decode -> encode gives back the input bytes
 * for every file the decoder accepts. Only version 3 is accepted: no other
 * version's layout is documented.
 *
 * Memory: a nad_model and everything under it is owned by the caller and
 * freed with nad_model_free(). No FUSE or text code here.
 */
#ifndef LFS_NAD_H
#define LFS_NAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/** The only version whose layout is documented [SDK "File Format"]. */
#define NAD_VERSION 3u
/** Bytes of the file header, a track header, a key and a tag. */
#define NAD_HEADER_SIZE 16u
#define NAD_TRACK_HEADER_SIZE 12u
#define NAD_KEY_SIZE 56u
#define NAD_TAG_SIZE 8u
/** Floats per key. */
#define NAD_KEY_FLOATS 14u

/** Track types [SDK "Bone Track Definitions"]; other values are kept as numbers. */
enum nad_track_type {
	NAD_TRACK_ROTATION = 0,    /**< Euler angles (pitch, roll, yaw) */
	NAD_TRACK_TRANSLATION = 1, /**< position */
	NAD_TRACK_SCALE = 2,       /**< per-axis scale ("not supported by the engine") */
};

/** Number of named tag types (0 .. 18) [SDK "Keyframe Tag Meanings"]. */
#define NAD_TAG_NAMED 19u

/**
 * One keyframe: the 14 floats in file order. v[0] frame (timeline position),
 * v[1] frame_scale (1 / (next frame − this frame); +inf on the last key of
 * hypov8's files), v[2..4] value x y z, v[5..7] C (constant curve factor),
 * v[8..10] B (linear), v[11..13] A (square) [SDK "Keyframe Data"].
 */
typedef struct nad_key {
	float v[NAD_KEY_FLOATS];
} nad_key;

/** One bone track [SDK "Bone Track Definitions"]. */
typedef struct nad_track {
	uint32_t bone;  /**< bone index in the matching NOD skeleton */
	uint32_t type;  /**< enum nad_track_type, or any other value as read */
	uint32_t n_keys;
	nad_key *keys;  /**< n_keys keys (NULL when 0); owned */
	size_t off;     /**< file offset of the track header (0 for built models) */
} nad_track;

/** One keyframe tag [SDK "Keyframe Tag Definitions"]. */
typedef struct nad_tag {
	float frame;
	uint32_t type; /**< 0 .. 18 named (nad_tag_name), others kept as read */
} nad_tag;

/** A whole NAD file. */
typedef struct nad_model {
	uint32_t version;  /**< always NAD_VERSION after a successful decode */
	uint32_t flags;    /**< "animation behaviour flags", meaning unknown [N §2.1] */
	float duration;    /**< in frames (hypov8 writes frame count − 1) */
	uint32_t n_tracks;
	nad_track *tracks; /**< owned */
	uint32_t n_tags;
	nad_tag *tags;     /**< owned */
	size_t n_trailing;
	uint8_t *trailing; /**< bytes after the tag list, verbatim; owned */
} nad_model;

/**
 * Cheap header test: at least a header and a tag count, version 3, and a
 * track count the file size can hold. Does not walk the tracks.
 */
bool nad_is_binary(const uint8_t *data, size_t n);

/**
 * Decode @p n bytes into a new model (*out, free with nad_model_free()).
 * @return LFS_OK; LFS_ERR_NOTFORMAT (too short for a header),
 *         LFS_ERR_UNSUPPORTED (version ≠ 3), LFS_ERR_CORRUPT (a count runs past
 *         the end: @p err names the file offset and structure),
 *         LFS_ERR_NOMEM. *out is NULL on failure.
 */
lfs_err nad_decode(const uint8_t *data, size_t n, nad_model **out, lfs_error *err);

/**
 * Encode @p m into a new malloc'd buffer (*out, *n bytes; caller frees).
 * Fails with LFS_ERR_CORRUPT when the model is inconsistent (a non-zero count
 * with a NULL array, version ≠ 3, or a size beyond 4 GiB counts),
 * LFS_ERR_NOMEM when memory runs out.
 */
lfs_err nad_encode(const nad_model *m, uint8_t **out, size_t *n, lfs_error *err);

/** Free a model (NULL is fine). */
void nad_model_free(nad_model *m);

/** Byte size nad_encode() will produce (SIZE_MAX on overflow). */
size_t nad_encoded_size(const nad_model *m);

/**
 * File offset of key @p k of track @p t in the encoded form of @p m
 * (SIZE_MAX when out of range). Used by tests and error messages.
 */
size_t nad_key_offset(const nad_model *m, uint32_t t, uint32_t k);

/**
 * Name of tag type @p type as used by the NODExporter, lower case: "lwalk",
 * "rwalk", "lrun", "rrun", "fire", "strike", "cast", "fall", "project",
 * "flap", "suck", "idle", "idle2", "codex1", "codex2", "codex3", "repeat",
 * "repeatto", "throwdeath" [SDK "Keyframe Tag Meanings"]; NULL for others.
 */
const char *nad_tag_name(uint32_t type);

/**
 * Tag type for @p name (@p len bytes; ASCII case-insensitive; "repeat_to",
 * the spelling of hypov8's nad.ksy, is accepted for 17). Returns -1 when
 * unknown.
 */
int nad_tag_from_name(const char *name, size_t len);

/** "rotation", "translation", "scale", or NULL for other track types. */
const char *nad_track_type_name(uint32_t type);

/** Track type for @p name (@p len bytes, case-insensitive), -1 when unknown. */
int nad_track_type_from_name(const char *name, size_t len);

#endif
