/**
 * @file nwn_derive_memo.h
 * Memo of seen derived values (docs/derived-values.md, "The memo"): where a
 * compiler's arithmetic cannot be reproduced bit for bit, the apply keeps the
 * derived values a compiler stored whenever their inputs are bit-identical to
 * those of a version of the model it has seen.
 *
 * Every time the apply rewrites the derived values of a mesh
 * (nwn_patch_derive_mesh), it first records the stored values of the version
 * being replaced, keyed by a SHA-256 (FIPS 180-4 "Secure Hash Standard",
 * through nettle) of their exact inputs within a scope (model name, geometry
 * routine pointers = the compiler's fingerprint, node name and type):
 *   face  : the three vertex positions (bits, in face order) -> plane
 *           (normal xyz, distance: 4 floats);
 *   mesh  : every vertex position, every face's vertex indices, the animmesh
 *           vertex sets and the AABB tree's shape -> bbox, average, radius,
 *           area and the AABB entries (boxes and plane bits).
 * Then a lookup with the new inputs gives back the stored bits of the version
 * that had them; a miss leaves the arithmetic's rules in charge.
 *
 * Process-wide, thread-safe (one mutex), bounded: at most
 * NWN_MEMO_DEFAULT_LIMIT bytes of entries (their values and bookkeeping);
 * the oldest recorded entry is dropped first. Only saves record: reading a
 * model never touches it. A restart forgets everything.
 */
#ifndef LFS_NWN_DERIVE_MEMO_H
#define LFS_NWN_DERIVE_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nwn_mdl.h"

/** Bytes the memo holds at most unless nwn_memo_set_limit() says otherwise
 * (16 MiB, entries counted with their bookkeeping: 88 bytes a face plane on
 * a 64-bit host, 116 a mesh record plus 28 per AABB entry; about 190 000
 * face planes). */
#define NWN_MEMO_DEFAULT_LIMIT ((size_t)16 << 20)

/** A memo key: SHA-256 of a kind tag, a scope and the inputs (32 bytes). */
typedef struct nwn_memo_key {
	uint8_t b[32];
} nwn_memo_key;

/** Scope of mesh node @p node of model @p m's geometry: the model name, the
 * geometry routine pointers, the node's name, index and type flags. */
nwn_memo_key nwn_memo_scope(const nwn_model *m, uint32_t node);

/** Key of one face plane in @p scope: the bits of positions @p p0, @p p1,
 * @p p2 (3 floats each), in face order. */
nwn_memo_key nwn_memo_face_key(const nwn_memo_key *scope, const float *p0, const float *p1, const float *p2);

/**
 * Key of the whole-mesh derived values of mesh @p me in @p scope, with
 * vertex positions @p v (@p nv * 3 floats) and face vertex indices @p fv
 * (@p nf * 3) in place of the mesh's own (so the version before and after an
 * edit can be keyed); the animmesh vertex sets and the AABB tree's shape
 * (entry count, children pointers, leaf faces) are taken from @p me.
 */
nwn_memo_key nwn_memo_mesh_key(const nwn_memo_key *scope, const nwn_mesh *me, const float *v, size_t nv,
			       const uint16_t *fv, size_t nf);

/** Record @p n bytes at @p val under @p k (a copy; an entry under the same
 * key is replaced and becomes the newest). Silently records nothing when
 * out of memory or when @p n alone exceeds the limit; drops the oldest
 * entries until the memo fits its limit. */
void nwn_memo_put(const nwn_memo_key *k, const void *val, size_t n);

/** Copy the value recorded under @p k into @p val when it has exactly @p n
 * bytes; false (and @p val untouched) otherwise. */
bool nwn_memo_get(const nwn_memo_key *k, void *val, size_t n);

/** Set the byte limit (entries are dropped, oldest first, to fit it). */
void nwn_memo_set_limit(size_t bytes);

/** Bytes and entries the memo holds now (either pointer may be NULL). */
void nwn_memo_usage(size_t *bytes, size_t *entries);

/** Forget every entry (tests; the limit stays). */
void nwn_memo_clear(void);

#endif
