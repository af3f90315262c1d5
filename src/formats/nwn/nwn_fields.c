/**
 * @file nwn_fields.c
 * The NWN scalar field table, built from nwn_fields.def (see nwn_fields.h).
 */
#include "nwn_fields.h"

#include <string.h>
#include <strings.h>

#include "nwn_mdl.h"

#define OPT NWN_FF_OPT
#define ALIAS NWN_FF_ALIAS

/* member sizes must match the binary type */
#define NWN_FIELD(kind, kw, off, type, size, st, member, flags)                                   \
	_Static_assert(NWN_FT_##type == NWN_FT_STR ? sizeof(((st *)0)->member) == (size) + 1u :   \
		       NWN_FT_##type == NWN_FT_F32X3 ? sizeof(((st *)0)->member) == 12u :        \
		       NWN_FT_##type == NWN_FT_U16 ? sizeof(((st *)0)->member) == 2u :           \
		       NWN_FT_##type == NWN_FT_U8 ? sizeof(((st *)0)->member) == 1u :            \
						    sizeof(((st *)0)->member) == 4u,             \
		       "nwn_fields.def: " kw ": member size does not match the type");
#include "nwn_fields.def"
#undef NWN_FIELD

const nwn_field nwn_fields[] = {
#define NWN_FIELD(kind, kw, off, type, size, st, member, flags)                                   \
	{ kw, off, NWN_FK_##kind, NWN_FT_##type, size, flags, (uint16_t)offsetof(st, member),    \
	  (uint16_t)sizeof(((st *)0)->member) },
#include "nwn_fields.def"
#undef NWN_FIELD
};

const size_t nwn_n_fields = sizeof(nwn_fields) / sizeof(nwn_fields[0]);

const nwn_field *nwn_field_find(nwn_field_kind kind, const char *kw, bool aliases)
{
	for (size_t i = 0; i < nwn_n_fields; i++) {
		const nwn_field *f = &nwn_fields[i];
		if (f->kind == kind && (aliases || !(f->flags & NWN_FF_ALIAS)) && !strcasecmp(f->kw, kw))
			return f;
	}
	return NULL;
}

void nwn_fields_copy(nwn_field_kind kind, void *dst, const void *src)
{
	for (size_t i = 0; i < nwn_n_fields; i++) {
		const nwn_field *f = &nwn_fields[i];
		if (f->kind != kind || (f->flags & NWN_FF_ALIAS) || f->type == NWN_FT_EFLAG)
			continue;
		memcpy((char *)dst + f->moff, (const char *)src + f->moff, f->msize);
	}
}
