/**
 * @file gff.c
 * GFF V3.x reader for a module's hak list (see gff.h for the layout and its sources).
 */
#include "gff.h"

#include "common/mem.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Field types of the "Field Array" table that are read here. */
#define GFF_CEXOSTRING 10u
#define GFF_LIST 15u

/* Bytes of one struct, field, label entry. */
#define GFF_STRUCT 12u
#define GFF_FIELD 12u
#define GFF_LABEL 16u

/* The header's six tables (offsets from the file start). */
struct gff {
	const uint8_t *d;
	size_t n;
	uint32_t so, sc;   /* structs: offset, count */
	uint32_t fo, fc;   /* fields */
	uint32_t lo, lc;   /* labels */
	uint32_t fdo, fdn; /* field data: offset, bytes */
	uint32_t fio, fin; /* field indices: offset, bytes */
	uint32_t lio, lin; /* list indices: offset, bytes */
	uint64_t visits;   /* fields looked at so far (bounded: GFF_VISITS_MAX) */
};

/* Most fields one call looks at: a hostile list of N entries naming one
 * struct of N fields would otherwise cost N² (a real module.ifo: a few hundred). */
#define GFF_VISITS_MAX ((uint64_t)1 << 22)

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* Check that @p count entries of @p size bytes at @p off lie inside the file. */
static lfs_err table_ok(const struct gff *g, uint32_t off, uint32_t count, uint32_t size,
			size_t hdr_off, const char *what, lfs_error *err)
{
	uint64_t end = (uint64_t)off + (uint64_t)count * size;
	if (end > g->n || (count && off < LFS_GFF_HEADER))
		return lfs_fail(err, LFS_ERR_CORRUPT, hdr_off, what,
				"GFF %s: %u × %u bytes at offset %u outside the file (%zu bytes) or over the header",
				what, count, size, off, g->n);
	return LFS_OK;
}

static lfs_err header(struct gff *g, lfs_error *err)
{
	if (g->n < LFS_GFF_HEADER || memcmp(g->d, "IFO ", 4) != 0 ||
	    (memcmp(g->d + 4, "V3.2", 4) != 0 && memcmp(g->d + 4, "V3.3", 4) != 0))
		return lfs_fail(err, LFS_ERR_NOTFORMAT, 0, "GFF header",
				"not a module.ifo (GFF \"IFO \" V3.2/V3.3, 56-byte header)");
	const uint8_t *h = g->d + 8;
	g->so = rd32(h);
	g->sc = rd32(h + 4);
	g->fo = rd32(h + 8);
	g->fc = rd32(h + 12);
	g->lo = rd32(h + 16);
	g->lc = rd32(h + 20);
	g->fdo = rd32(h + 24);
	g->fdn = rd32(h + 28);
	g->fio = rd32(h + 32);
	g->fin = rd32(h + 36);
	g->lio = rd32(h + 40);
	g->lin = rd32(h + 44);
	lfs_err r;
	if ((r = table_ok(g, g->so, g->sc, GFF_STRUCT, 8, "struct array", err)) ||
	    (r = table_ok(g, g->fo, g->fc, GFF_FIELD, 16, "field array", err)) ||
	    (r = table_ok(g, g->lo, g->lc, GFF_LABEL, 24, "label array", err)) ||
	    (r = table_ok(g, g->fdo, g->fdn, 1, 32, "field data", err)) ||
	    (r = table_ok(g, g->fio, g->fin, 1, 40, "field indices", err)) ||
	    (r = table_ok(g, g->lio, g->lin, 1, 48, "list indices", err)))
		return r;
	if (g->sc == 0)
		return lfs_fail(err, LFS_ERR_CORRUPT, 12, "struct array",
				"GFF without a top-level struct (struct count 0)");
	return LFS_OK;
}

/*
 * Find the field labelled @p label in struct @p si: *fi its index (UINT32_MAX
 * when the struct has no such field). Every index followed is checked.
 */
static lfs_err find_field(struct gff *g, uint32_t si, const char *label, uint32_t *fi,
			  lfs_error *err)
{
	*fi = UINT32_MAX;
	if (si >= g->sc)
		return lfs_fail(err, LFS_ERR_CORRUPT, g->so, "struct array",
				"GFF struct index %u outside the struct array (%u structs)", si, g->sc);
	size_t soff = (size_t)g->so + (size_t)si * GFF_STRUCT;
	uint32_t data = rd32(g->d + soff + 4), count = rd32(g->d + soff + 8);
	if (count > 1 && ((uint64_t)data + (uint64_t)count * 4 > g->fin))
		return lfs_fail(err, LFS_ERR_CORRUPT, soff, "struct",
				"GFF struct %u: %u field indices at byte %u outside the field indices (%u bytes)",
				si, count, data, g->fin);
	size_t ll = strlen(label);
	for (uint32_t k = 0; k < count; k++) {
		if (++g->visits > GFF_VISITS_MAX)
			return lfs_fail(err, LFS_ERR_CORRUPT, soff, "struct",
					"GFF: more than %llu field visits (a hostile list)",
					(unsigned long long)GFF_VISITS_MAX);
		uint32_t f = count == 1 ? data : rd32(g->d + g->fio + (size_t)data + (size_t)k * 4);
		if (f >= g->fc)
			return lfs_fail(err, LFS_ERR_CORRUPT, count == 1 ? soff + 4 : (size_t)g->fio + data + k * 4u,
					count == 1 ? "struct" : "field indices",
					"GFF struct %u: field index %u outside the field array (%u fields)", si, f,
					g->fc);
		size_t foff = (size_t)g->fo + (size_t)f * GFF_FIELD;
		uint32_t li = rd32(g->d + foff + 4);
		if (li >= g->lc)
			return lfs_fail(err, LFS_ERR_CORRUPT, foff + 4, "field",
					"GFF field %u: label index %u outside the label array (%u labels)", f, li,
					g->lc);
		const char *lab = (const char *)g->d + g->lo + (size_t)li * GFF_LABEL;
		if (ll <= GFF_LABEL && memcmp(lab, label, ll) == 0 && (ll == GFF_LABEL || lab[ll] == '\0')) {
			*fi = f;
			return LFS_OK;
		}
	}
	return LFS_OK;
}

/* The CExoString of field @p fi, checked as a hak name, into *out (malloc'd; NULL when empty). */
static lfs_err hak_string(const struct gff *g, uint32_t fi, char **out, lfs_error *err)
{
	*out = NULL;
	size_t foff = (size_t)g->fo + (size_t)fi * GFF_FIELD;
	uint32_t type = rd32(g->d + foff), off = rd32(g->d + foff + 8);
	if (type != GFF_CEXOSTRING)
		return lfs_fail(err, LFS_ERR_CORRUPT, foff, "field",
				"GFF field %u (Mod_Hak): type %u, not a CExoString (10)", fi, type);
	if ((uint64_t)off + 4 > g->fdn)
		return lfs_fail(err, LFS_ERR_CORRUPT, foff + 8, "field",
				"GFF field %u (Mod_Hak): string at byte %u outside the field data (%u bytes)",
				fi, off, g->fdn);
	size_t soff = (size_t)g->fdo + off;
	uint32_t len = rd32(g->d + soff);
	if ((uint64_t)off + 4 + len > g->fdn)
		return lfs_fail(err, LFS_ERR_CORRUPT, soff, "CExoString",
				"GFF Mod_Hak string of %u bytes runs past the field data (%u bytes)", len,
				g->fdn);
	if (len > LFS_GFF_HAK_MAX)
		return lfs_fail(err, LFS_ERR_CORRUPT, soff, "CExoString",
				"GFF Mod_Hak string of %u bytes: a hak name has at most %u", len,
				LFS_GFF_HAK_MAX);
	const char *s = (const char *)g->d + soff + 4;
	for (uint32_t i = 0; i < len; i++)
		if (s[i] == '\0' || s[i] == '/' || s[i] == '\\')
			return lfs_fail(err, LFS_ERR_CORRUPT, soff + 4 + i, "CExoString",
					"GFF Mod_Hak string holds a NUL, '/' or '\\' at byte %u", i);
	if (len == 0)
		return LFS_OK;
	*out = malloc((size_t)len + 1);
	if (!*out)
		return lfs_nomem(err, "GFF hak list");
	memcpy(*out, s, len);
	(*out)[len] = '\0';
	return LFS_OK;
}

void lfs_gff_hak_list_free(char **haks, size_t nhaks)
{
	for (size_t i = 0; haks && i < nhaks; i++)
		free(haks[i]);
	free(haks);
}

/* The entries of list field @p fi: *list points at count then struct indices (checked). */
static lfs_err list_of(const struct gff *g, uint32_t fi, size_t *at, uint32_t *count, lfs_error *err)
{
	size_t foff = (size_t)g->fo + (size_t)fi * GFF_FIELD;
	uint32_t type = rd32(g->d + foff), off = rd32(g->d + foff + 8);
	if (type != GFF_LIST)
		return lfs_fail(err, LFS_ERR_CORRUPT, foff, "field",
				"GFF field %u (Mod_HakList): type %u, not a List (15)", fi, type);
	if ((uint64_t)off + 4 > g->lin)
		return lfs_fail(err, LFS_ERR_CORRUPT, foff + 8, "field",
				"GFF Mod_HakList at byte %u outside the list indices (%u bytes)", off, g->lin);
	*at = (size_t)g->lio + off;
	*count = rd32(g->d + *at);
	if ((uint64_t)off + 4 + (uint64_t)*count * 4 > g->lin)
		return lfs_fail(err, LFS_ERR_CORRUPT, *at, "list indices",
				"GFF Mod_HakList of %u entries runs past the list indices (%u bytes)", *count,
				g->lin);
	return LFS_OK;
}

lfs_err lfs_gff_hak_list(const uint8_t *data, size_t n, char ***haks, size_t *nhaks,
			 lfs_error *err)
{
	*haks = NULL;
	*nhaks = 0;
	struct gff g = { .d = data, .n = n };
	lfs_err r = header(&g, err);
	uint32_t fi;
	if (r || (r = find_field(&g, 0, "Mod_HakList", &fi, err)))
		return r;
	char **v = NULL;
	size_t nv = 0;
	if (fi == UINT32_MAX) {
		/* modules made before the list: one Mod_Hak string, maybe empty */
		char *s = NULL;
		if ((r = find_field(&g, 0, "Mod_Hak", &fi, err)) ||
		    (fi != UINT32_MAX && (r = hak_string(&g, fi, &s, err))))
			return r;
		if (!s)
			return LFS_OK;
		if (!(v = malloc(sizeof(*v)))) {
			free(s);
			return lfs_nomem(err, "GFF hak list");
		}
		v[0] = s;
		*haks = v;
		*nhaks = 1;
		return LFS_OK;
	}
	size_t at = 0;
	uint32_t count = 0;
	if ((r = list_of(&g, fi, &at, &count, err)))
		return r;
	if (count && !(v = calloc(count, sizeof(*v))))
		return lfs_nomem(err, "GFF hak list");
	for (uint32_t k = 0; k < count && r == LFS_OK; k++) {
		uint32_t si = rd32(data + at + 4 + (size_t)k * 4), hf;
		char *s = NULL;
		if ((r = find_field(&g, si, "Mod_Hak", &hf, err)))
			break;
		if (hf == UINT32_MAX) {
			r = lfs_fail(err, LFS_ERR_CORRUPT, at + 4 + (size_t)k * 4, "list indices",
				     "GFF Mod_HakList entry %u (struct %u) has no Mod_Hak string", k, si);
			break;
		}
		if ((r = hak_string(&g, hf, &s, err)))
			break;
		if (s)
			v[nv++] = s;
	}
	if (r) {
		lfs_gff_hak_list_free(v, nv);
		return r;
	}
	if (!nv) {
		free(v);
		v = NULL;
	}
	*haks = v;
	*nhaks = nv;
	return LFS_OK;
}
