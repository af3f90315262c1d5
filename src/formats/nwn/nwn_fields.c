/**
 * @file nwn_fields.c
 * The NWN scalar field table, built from nwn_fields.def, and the
 * hand-coded byte ranges of nwn_layout.def (see nwn_fields.h).
 */
#include "nwn_fields.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nwn_mdl.h"

#define OPT NWN_FF_OPT
#define ALIAS NWN_FF_ALIAS
#define HIDDEN NWN_FF_HIDDEN

/* member sizes must match the binary type */
#define NWN_FIELD(kind, kw, off, type, size, st, member, flags, dflt)                             \
	_Static_assert(NWN_FT_##type == NWN_FT_STR ? sizeof(((st *)0)->member) == (size) + 1u :   \
		       NWN_FT_##type == NWN_FT_F32X3 ? sizeof(((st *)0)->member) == 12u :        \
		       NWN_FT_##type == NWN_FT_U16 ? sizeof(((st *)0)->member) == 2u :           \
		       NWN_FT_##type == NWN_FT_U8 ? sizeof(((st *)0)->member) == 1u :            \
						    sizeof(((st *)0)->member) == 4u,             \
		       "nwn_fields.def: " kw ": member size does not match the type");
#include "nwn_fields.def"
#undef NWN_FIELD

const nwn_field nwn_fields[] = {
#define NWN_FIELD(kind, kw, off, type, size, st, member, flags, dflt)                             \
	{ kw, off, NWN_FK_##kind, NWN_FT_##type, size, flags, (uint16_t)offsetof(st, member),    \
	  (uint16_t)sizeof(((st *)0)->member), dflt },
#include "nwn_fields.def"
#undef NWN_FIELD
};

const size_t nwn_n_fields = sizeof(nwn_fields) / sizeof(nwn_fields[0]);

const nwn_field *nwn_field_find(nwn_field_kind kind, const char *kw, bool aliases)
{
	for (size_t i = 0; i < nwn_n_fields; i++) {
		const nwn_field *f = &nwn_fields[i];
		if (f->kind == kind && (aliases || !(f->flags & NWN_FF_ALIAS)) &&
		    !(f->flags & NWN_FF_HIDDEN) && !strcasecmp(f->kw, kw))
			return f;
	}
	return NULL;
}

void nwn_fields_copy(nwn_field_kind kind, void *dst, const void *src)
{
	for (size_t i = 0; i < nwn_n_fields; i++) {
		const nwn_field *f = &nwn_fields[i];
		if (f->kind != kind || (f->flags & (NWN_FF_ALIAS | NWN_FF_HIDDEN)) ||
		    f->type == NWN_FT_EFLAG)
			continue;
		memcpy((char *)dst + f->moff, (const char *)src + f->moff, f->msize);
	}
}

/* One default value (nwn_field.dflt) into the member at @p p. */
static void set_default(const nwn_field *f, void *p)
{
	const char *s = f->dflt;
	char *end;
	switch ((nwn_field_type)f->type) {
	case NWN_FT_F32:
	case NWN_FT_F32X3:
		for (unsigned k = 0; k < (f->type == NWN_FT_F32X3 ? 3u : 1u); k++) {
			float v = strtof(s, &end);
			memcpy((char *)p + 4 * k, &v, sizeof(v));
			s = end;
		}
		break;
	case NWN_FT_I32:
	case NWN_FT_RHINT: {
		uint32_t v = (uint32_t)strtol(s, NULL, 10);
		memcpy(p, &v, sizeof(v));
		break;
	}
	case NWN_FT_U16: {
		uint16_t v = (uint16_t)strtol(s, NULL, 10);
		memcpy(p, &v, sizeof(v));
		break;
	}
	case NWN_FT_U8:
		*(uint8_t *)p = (uint8_t)strtol(s, NULL, 10);
		break;
	case NWN_FT_STR:
		snprintf(p, (size_t)f->size + 1u, "%s", s);
		break;
	case NWN_FT_EFLAG: {
		uint32_t v;
		memcpy(&v, p, sizeof(v));
		if (strtol(s, NULL, 10))
			v |= 1u << f->size;
		else
			v &= ~(1u << f->size);
		memcpy(p, &v, sizeof(v));
		break;
	}
	}
}

void nwn_fields_defaults(nwn_field_kind kind, void *obj)
{
	for (size_t i = 0; i < nwn_n_fields; i++) {
		const nwn_field *f = &nwn_fields[i];
		if (f->kind == kind && !(f->flags & NWN_FF_ALIAS) && f->dflt && f->dflt[0])
			set_default(f, nwn_field_ptr(f, obj));
	}
}

/* ------------------------------------------------------------ layout */

const nwn_part_extent nwn_parts[] = {
#define NWN_PART(kind, start, end) { NWN_FK_##kind, start, end },
#define NWN_HAND(kind, off, size, what)
#include "nwn_layout.def"
#undef NWN_PART
#undef NWN_HAND
};
const size_t nwn_n_parts = sizeof(nwn_parts) / sizeof(nwn_parts[0]);

const nwn_hand_range nwn_hand[] = {
#define NWN_PART(kind, start, end)
#define NWN_HAND(kind, off, size, what) { NWN_FK_##kind, off, size, what },
#include "nwn_layout.def"
#undef NWN_PART
#undef NWN_HAND
};
const size_t nwn_n_hand = sizeof(nwn_hand) / sizeof(nwn_hand[0]);

static const char *const kind_names[] = { "MODEL", "NODE",    "MESH", "DANGLY", "ANIMMESH",
					  "LIGHT", "EMITTER", "REF",  "ANIM" };

#define LAYOUT_MAX 0x400 /* bytes of the largest part, with room */

typedef struct lcheck {
	size_t problems;
	char *msg;
	size_t msgn;
} lcheck;

__attribute__((format(printf, 2, 3))) static void problem(lcheck *c, const char *fmt, ...)
{
	if (c->problems++ == 0 && c->msg && c->msgn) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->msg, c->msgn, fmt, ap);
		va_end(ap);
	}
}

/* Bytes a non-EFLAG field takes in the file. */
static unsigned field_bytes(const nwn_field *f)
{
	switch ((nwn_field_type)f->type) {
	case NWN_FT_F32X3: return 12;
	case NWN_FT_U16: return 2;
	case NWN_FT_U8: return 1;
	case NWN_FT_STR: return f->size;
	case NWN_FT_EFLAG: return 0;
	default: return 4;
	}
}

static const nwn_part_extent *part_of(unsigned kind)
{
	for (size_t i = 0; i < nwn_n_parts; i++)
		if (nwn_parts[i].kind == kind)
			return &nwn_parts[i];
	return NULL;
}

/* An alias names the bytes and member of a (non-alias) field of its kind. */
static void check_alias(lcheck *c, const nwn_field *fields, size_t n, const nwn_field *a)
{
	for (size_t i = 0; i < n; i++) {
		const nwn_field *f = &fields[i];
		if (f->kind == a->kind && !(f->flags & NWN_FF_ALIAS) && f->off == a->off &&
		    f->type == a->type && f->size == a->size && f->moff == a->moff)
			return;
	}
	problem(c, "%s alias '%s' at 0x%X names no field", kind_names[a->kind], a->kw, a->off);
}

/* The EFLAG row @p f: inside a flags word of its kind, its bit unused by
 * the EFLAG rows before it. */
static void check_eflag(lcheck *c, const nwn_field *fields, size_t i)
{
	const nwn_field *f = &fields[i];
	bool in_word = false;
	for (size_t h = 0; h < nwn_n_hand; h++)
		if (nwn_hand[h].kind == f->kind && !strcmp(nwn_hand[h].what, "flags word") &&
		    f->off >= nwn_hand[h].off && f->off + 4u <= nwn_hand[h].off + nwn_hand[h].size)
			in_word = true;
	if (!in_word || f->size > 31)
		problem(c, "%s flag '%s' at 0x%X bit %u lies in no flags word", kind_names[f->kind],
			f->kw, f->off, f->size);
	for (size_t j = 0; j < i; j++)
		if (fields[j].kind == f->kind && fields[j].type == NWN_FT_EFLAG &&
		    fields[j].off == f->off && fields[j].size == f->size && !(fields[j].flags & NWN_FF_ALIAS))
			problem(c, "%s flag '%s' takes bit %u of 0x%X, as '%s' does", kind_names[f->kind],
				f->kw, f->size, f->off, fields[j].kw);
}

/* One part: every byte owned once (by a field or a hand-coded range). */
static void check_part(lcheck *c, const nwn_field *fields, size_t n, const nwn_part_extent *p)
{
	/* owner of each byte: 0 none, i + 1 field i, -(h + 1) range h */
	long own[LAYOUT_MAX] = { 0 };
	for (size_t h = 0; h < nwn_n_hand; h++) {
		const nwn_hand_range *r = &nwn_hand[h];
		if (r->kind != p->kind)
			continue;
		for (unsigned b = r->off; b < (unsigned)r->off + r->size; b++) {
			if (b < p->start || b >= p->end) {
				problem(c, "%s hand-coded '%s' (0x%X+%u) leaves its part", kind_names[p->kind],
					r->what, r->off, r->size);
				break;
			}
			if (own[b]) {
				problem(c, "%s hand-coded '%s' overlaps another range at 0x%X",
					kind_names[p->kind], r->what, b);
				break;
			}
			own[b] = -(long)(h + 1);
		}
	}
	for (size_t i = 0; i < n; i++) {
		const nwn_field *f = &fields[i];
		if (f->kind != p->kind || (f->flags & NWN_FF_ALIAS) || f->type == NWN_FT_EFLAG)
			continue;
		unsigned sz = field_bytes(f);
		for (unsigned b = f->off; b < (unsigned)f->off + sz; b++) {
			if (b < p->start || b >= p->end) {
				problem(c, "%s field '%s' (0x%X+%u) lies outside its part (0x%X..0x%X)",
					kind_names[p->kind], f->kw, f->off, sz, p->start, p->end);
				break;
			}
			if (own[b] < 0) {
				const nwn_hand_range *r = &nwn_hand[-own[b] - 1];
				problem(c, "%s field '%s' (0x%X+%u) overlaps hand-coded '%s' (0x%X+%u)",
					kind_names[p->kind], f->kw, f->off, sz, r->what, r->off, r->size);
				break;
			}
			if (own[b] > 0) {
				problem(c, "%s field '%s' (0x%X+%u) overlaps field '%s' at 0x%X",
					kind_names[p->kind], f->kw, f->off, sz, fields[own[b] - 1].kw, b);
				break;
			}
			own[b] = (long)i + 1;
		}
	}
	for (unsigned b = p->start; b < p->end; b++)
		if (!own[b]) {
			problem(c, "%s byte 0x%X belongs to no field and no hand-coded range",
				kind_names[p->kind], b);
			break;
		}
}

size_t nwn_fields_layout_check(const nwn_field *fields, size_t n, char *msg, size_t msgn)
{
	lcheck c = { 0, msg, msgn };
	if (msg && msgn)
		msg[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const nwn_field *f = &fields[i];
		if (f->kind >= sizeof(kind_names) / sizeof(kind_names[0]) || !part_of(f->kind)) {
			problem(&c, "field '%s' has a kind without a part", f->kw);
			continue;
		}
		if (f->flags & NWN_FF_ALIAS)
			check_alias(&c, fields, n, f);
		else if (f->type == NWN_FT_EFLAG)
			check_eflag(&c, fields, i);
	}
	for (size_t p = 0; p < nwn_n_parts; p++) {
		if (nwn_parts[p].end > LAYOUT_MAX || nwn_parts[p].start >= nwn_parts[p].end) {
			problem(&c, "%s part 0x%X..0x%X is not a byte range", kind_names[nwn_parts[p].kind],
				nwn_parts[p].start, nwn_parts[p].end);
			continue;
		}
		check_part(&c, fields, n, &nwn_parts[p]);
	}
	return c.problems;
}
