/**
 * @file nwn_fields.h
 * The table of NWN scalar fields the ASCII text shows (built from
 * nwn_fields.def): keyword, node part, byte offset, binary type and struct
 * member. The decoder and encoder read and write these fields from it, the
 * ASCII writer prints them from it, the compiler and the edit-preserving
 * apply look keywords up in it, the compiler starts each part from its
 * defaults and the round-trip law reads them. The bytes no row describes
 * are listed in nwn_layout.def (nwn_parts[], nwn_hand[]).
 */
#ifndef LFS_NWN_FIELDS_H
#define LFS_NWN_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Node part (struct) a field belongs to. */
typedef enum nwn_field_kind {
	NWN_FK_MODEL,    /**< nwn_model: model header */
	NWN_FK_NODE,     /**< nwn_node: node header */
	NWN_FK_MESH,     /**< nwn_mesh: trimesh part */
	NWN_FK_DANGLY,   /**< nwn_dangly */
	NWN_FK_ANIMMESH, /**< nwn_animmesh */
	NWN_FK_LIGHT,    /**< nwn_light */
	NWN_FK_EMITTER,  /**< nwn_emitter */
	NWN_FK_REF,      /**< nwn_reference */
	NWN_FK_ANIM,     /**< nwn_anim: animation header */
} nwn_field_kind;

/** Binary type of a field (see nwn_fields.def). */
typedef enum nwn_field_type {
	NWN_FT_F32,   /**< float32 */
	NWN_FT_F32X3, /**< three float32 */
	NWN_FT_I32,   /**< 32-bit integer (uint32_t member, printed signed) */
	NWN_FT_U16,   /**< uint16_t */
	NWN_FT_U8,    /**< uint8_t */
	NWN_FT_STR,   /**< char[size] in the file, NUL padded */
	NWN_FT_RHINT, /**< uint32_t render hint; 2 prints as NormalAndSpecMapped */
	NWN_FT_EFLAG, /**< bit `size` of the emitter flags (uint32_t) */
} nwn_field_type;

/** nwn_field.flags */
enum {
	NWN_FF_OPT = 1,   /**< left out of the text when 0 / empty */
	NWN_FF_ALIAS = 2, /**< another keyword for a field (compiler only) */
	NWN_FF_HIDDEN = 4, /**< carried by the codec, not shown by the text: not
			    *   found by nwn_field_find(), not copied by
			    *   nwn_fields_copy(), the compiler writes 0 */
};

/** One scalar field. */
typedef struct nwn_field {
	const char *kw;  /**< ASCII keyword */
	uint16_t off;    /**< byte offset from the part's header */
	uint8_t kind;    /**< nwn_field_kind */
	uint8_t type;    /**< nwn_field_type */
	uint8_t size;    /**< STR: field bytes; EFLAG: bit number */
	uint8_t flags;   /**< NWN_FF_* */
	uint16_t moff;   /**< offsetof(struct, member) */
	uint16_t msize;  /**< sizeof(member) */
	const char *dflt; /**< default as the text prints it; "" = 0 / empty */
} nwn_field;

/** Every field, in nwn_fields.def order; nwn_n_fields entries. */
extern const nwn_field nwn_fields[];
extern const size_t nwn_n_fields;

/** The field of part @p kind with keyword @p kw (any case), NULL when none;
 * ALIAS rows only when @p aliases; never a HIDDEN row. */
const nwn_field *nwn_field_find(nwn_field_kind kind, const char *kw, bool aliases);

/** The member of @p f inside the part struct @p obj. */
static inline void *nwn_field_ptr(const nwn_field *f, void *obj)
{
	return (char *)obj + f->moff;
}

/** Copy every field of part @p kind that the text shows from @p src to
 * @p dst (ALIAS and HIDDEN rows are skipped; so are EFLAG rows: the flags
 * word is copied by the caller). */
void nwn_fields_copy(nwn_field_kind kind, void *dst, const void *src);

/** Set every (non-alias) field of part @p kind of @p obj that has a
 * default (nwn_field.dflt) to it; other fields are left as they are (the
 * compiler's parts start zeroed). EFLAG rows set or clear their bit. */
void nwn_fields_defaults(nwn_field_kind kind, void *obj);

/** The bytes [start, end) of one part (nwn_layout.def NWN_PART). */
typedef struct nwn_part_extent {
	uint8_t kind;   /**< nwn_field_kind */
	uint16_t start; /**< first byte, offsets as in nwn_fields.def */
	uint16_t end;   /**< one past the last byte */
} nwn_part_extent;

/** A byte range the codec writes and reads by hand (nwn_layout.def
 * NWN_HAND): no table field may overlap it. */
typedef struct nwn_hand_range {
	uint8_t kind;     /**< nwn_field_kind */
	uint16_t off;     /**< first byte, offsets as in nwn_fields.def */
	uint16_t size;    /**< bytes */
	const char *what; /**< its name in messages ("flags word": EFLAG bits) */
} nwn_hand_range;

/** Every part (nwn_n_parts entries) and every hand-coded range
 * (nwn_n_hand entries), in nwn_layout.def order. */
extern const nwn_part_extent nwn_parts[];
extern const size_t nwn_n_parts;
extern const nwn_hand_range nwn_hand[];
extern const size_t nwn_n_hand;

/**
 * Check the layout of @p n fields @p fields (normally nwn_fields) against
 * nwn_layout.def: each non-alias field lies inside its part, overlaps no
 * hand-coded range and no other field of its part (EFLAG rows: inside a
 * "flags word" range, distinct bits); an alias names the same bytes as a
 * field; every byte of every part is covered by a field or a range.
 * Returns the number of problems; the first is described in @p msg (of
 * @p msgn bytes, may be NULL), e.g. "MESH field 'x' at 0x26C+4 overlaps
 * hand-coded 'unknown word 0x26C' (0x26C+4)".
 */
size_t nwn_fields_layout_check(const nwn_field *fields, size_t n, char *msg, size_t msgn);

#endif
