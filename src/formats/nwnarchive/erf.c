/**
 * @file erf.c
 * ERF family codec (see erf.h; layout in docs/formats/erf.md).
 */
#include "erf.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/rd.h"
#include "common/wr.h"
#include "xres.h"

/* header fields (BioWare ERF "ERF Header format") */
enum {
	H_LANG_COUNT = 8,
	H_LOC_SIZE = 12,
	H_ENTRY_COUNT = 16,
	H_OFF_LOC = 20,
	H_OFF_KEYS = 24,
	H_OFF_RES = 28,
};

/* the offset an error names: the structure when it starts inside the file,
 * else the header field that points outside it */
static size_t err_at(size_t off, size_t n, size_t field)
{
	return off <= n ? off : field;
}

static bool known_type(const uint8_t *t)
{
	static const char k[][5] = { "ERF ", "MOD ", "SAV ", "HAK ", "NWM " };
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (!memcmp(t, k[i], 4))
			return true;
	return false;
}

static void set_resref_raw(lfs_erf_entry *e, size_t width)
{
	size_t len = 0;
	while (len < width && e->resref_raw[len])
		len++;
	memcpy(e->resref, e->resref_raw, len);
	e->resref[len] = '\0';
}

/* a copy of [off, off+len) of the input, or NULL for len 0 */
static lfs_err copy_range(const uint8_t *d, size_t off, size_t len, uint8_t **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!len)
		return LFS_OK;
	*out = malloc(len);
	if (!*out)
		return LFS_ERR_NOMEM;
	memcpy(*out, d + off, len);
	*n = len;
	return LFS_OK;
}

void lfs_erf_free(lfs_erf *a)
{
	if (!a)
		return;
	for (uint32_t i = 0; i < a->n_loc; i++)
		free(a->loc[i].text);
	free(a->loc);
	free(a->loc_tail);
	for (int g = 0; g < 4; g++)
		free(a->gap[g]);
	free(a->trailer);
	for (uint32_t i = 0; i < a->n; i++)
		free(a->e[i].owned);
	free(a->e);
	free(a);
}

static void set_version_layout(lfs_erf *a, lfs_erf_version v, bool nwn2)
{
	a->version = v;
	a->resref_len = nwn2 ? 32 : 16;
	a->key_stride = v == LFS_ERF_E10 ? 44 : nwn2 ? 40 : 24;
	a->res_stride = v == LFS_ERF_E10 ? 16 : 8;
}

lfs_erf *lfs_erf_new(const char file_type[4], lfs_erf_version version)
{
	lfs_erf *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	memcpy(a->header, file_type, 4);
	memcpy(a->header + 4, version == LFS_ERF_V10 ? "V1.0" : version == LFS_ERF_V11 ? "V1.1" : "E1.0",
	       4);
	if (version == LFS_ERF_E10)
		memset(a->header + 44, '0', 24); /* OID as nwn_erf writes it */
	lfs_put_le32(a->header + 40, 0xFFFFFFFFu); /* no DescriptionStrRef */
	set_version_layout(a, version, version == LFS_ERF_V11);
	return a;
}

static lfs_err nomem(lfs_error *err, lfs_erf *a)
{
	lfs_erf_free(a);
	return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "ERF", "out of memory");
}

/* The localized strings of the file read by @p r (LanguageCount ×
 * {id, size, bytes} at @p off_loc; StringSize is trusted) into @p a, and
 * the bytes LocalizedStringSize (@p loc_size) counts past them; *loc_end:
 * where they end. On an error @p a is the caller's to free. */
static lfs_err decode_loc(lfs_erf *a, const lfs_rd *r, uint32_t lang_count, uint32_t off_loc,
			  uint32_t loc_size, size_t *loc_end, lfs_error *err)
{
	size_t pos = off_loc;
	if (lang_count) {
		if (!lfs_rd_has_n(r, off_loc, lang_count, 8)) {
			return lfs_fail(err, LFS_ERR_CORRUPT, err_at(off_loc, r->n, H_OFF_LOC), "ERF localized string list",
					"%u localized strings at offset %u do not fit in the file (%zu bytes)",
					lang_count, off_loc, r->n);
		}
		a->loc = calloc(lang_count, sizeof(*a->loc));
		if (!a->loc)
			return nomem(err, NULL);
	}
	for (uint32_t i = 0; i < lang_count; i++) {
		uint32_t id, sz;
		if (!lfs_rd_u32(r, pos, &id) || !lfs_rd_u32(r, pos + 4, &sz) ||
		    !lfs_rd_has(r, pos + 8, sz)) {
			return lfs_fail(err, LFS_ERR_CORRUPT, err_at(pos, r->n, H_OFF_LOC), "ERF localized string",
					"localized string %u at offset %zu runs past the end of the file "
					"(%zu bytes)", i, pos, r->n);
		}
		lfs_erf_locstr *s = &a->loc[a->n_loc];
		s->text = malloc((size_t)sz + 1);
		if (!s->text)
			return nomem(err, NULL);
		memcpy(s->text, r->p + pos + 8, sz);
		s->text[sz] = 0;
		s->lang = id;
		s->size = sz;
		a->n_loc++;
		pos += 8 + (size_t)sz;
	}
	*loc_end = pos;
	/* bytes that LocalizedStringSize counts past the strings (rollnw's NULs) */
	if (lang_count && (size_t)off_loc + loc_size > *loc_end && (size_t)off_loc + loc_size <= r->n) {
		size_t tail = (size_t)off_loc + loc_size - *loc_end;
		if (copy_range(r->p, *loc_end, tail, &a->loc_tail, &a->loc_tail_n))
			return nomem(err, NULL);
		*loc_end += tail;
	}
	return LFS_OK;
}

/* The @p count entries (keys at @p off_keys, resources at @p off_res,
 * bounds checked against @p fsize; payloads in @p data unless @p tables)
 * into a->e; *first, *last: the payload region (widened). On an error
 * @p a is the caller's to free. */
static lfs_err decode_entries(lfs_erf *a, const uint8_t *data, uint32_t count, uint32_t off_keys,
			      uint32_t off_res, size_t fsize, bool tables, size_t *first, size_t *last,
			      lfs_error *err)
{
	for (uint32_t i = 0; i < count; i++) {
		lfs_erf_entry *e = &a->e[i];
		size_t k = off_keys + (size_t)i * a->key_stride;
		size_t q = off_res + (size_t)i * a->res_stride;
		memcpy(e->resref_raw, data + k, a->resref_len);
		set_resref_raw(e, a->resref_len);
		e->res_id = lfs_le32(data + k + a->resref_len);
		e->type = lfs_le16(data + k + a->resref_len + 4);
		e->unused = lfs_le16(data + k + a->resref_len + 6);
		e->offset = lfs_le32(data + q);
		e->size = lfs_le32(data + q + 4);
		e->usize = e->size;
		if (a->version == LFS_ERF_E10) {
			memcpy(e->sha1, data + k + 24, 20);
			e->compression = lfs_le32(data + q + 8);
			e->usize = lfs_le32(data + q + 12);
			if (e->compression > 1) {
				uint32_t c = e->compression;
				return lfs_fail(err, LFS_ERR_CORRUPT, q + 8, "ERF resource entry",
						"entry %u: compression %u at offset %zu is not 0 or 1", i,
						c, q + 8);
			}
		}
		if ((uint64_t)e->offset + e->size > fsize) {
			uint32_t off = e->offset, sz = e->size;
			return lfs_fail(err, LFS_ERR_CORRUPT, q, "ERF resource entry",
					"entry %u: payload of %u bytes at offset %u runs past the end of the "
					"file (%zu bytes)", i, sz, off, fsize);
		}
		e->data = tables ? NULL : data + e->offset;
		e->order = e->offset;
		if (e->size) {
			if (e->offset < *first)
				*first = e->offset;
			if ((size_t)e->offset + e->size > *last)
				*last = (size_t)e->offset + e->size;
		}
	}
	return LFS_OK;
}

/*
 * Decode @p data (@p n bytes): the whole file, or with @p tables its first
 * @p n bytes holding the tables of a file of @p fsize bytes (payloads not
 * read: data NULL, bounds checked against @p fsize).
 */
static lfs_err decode_impl(const uint8_t *data, size_t n, size_t fsize, bool tables,
			   lfs_erf **out, lfs_error *err)
{
	lfs_rd r = { data, n };
	*out = NULL;
	if (n < 8 || !known_type(data))
		return lfs_fail(err, LFS_ERR_NOTFORMAT, 0, "ERF header",
				"not an ERF archive (no ERF/MOD/SAV/HAK/NWM tag at offset 0)");
	lfs_erf_version v;
	if (!memcmp(data + 4, "V1.0", 4))
		v = LFS_ERF_V10;
	else if (!memcmp(data + 4, "V1.1", 4))
		v = LFS_ERF_V11;
	else if (!memcmp(data + 4, "E1.0", 4))
		v = LFS_ERF_E10;
	else
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, 4, "ERF header",
				"ERF version \"%.4s\" at offset 4 is not supported (V1.0, V1.1, E1.0)",
				(const char *)data + 4);
	if (n < LFS_ERF_HEADER)
		return lfs_fail(err, LFS_ERR_CORRUPT, 0, "ERF header",
				"ERF header needs %u bytes, the file has %zu", LFS_ERF_HEADER, n);
	uint32_t lang_count = 0, loc_size = 0, count = 0, off_loc = 0, off_keys = 0, off_res = 0;
	lfs_rd_u32(&r, H_LANG_COUNT, &lang_count);
	lfs_rd_u32(&r, H_LOC_SIZE, &loc_size);
	lfs_rd_u32(&r, H_ENTRY_COUNT, &count);
	lfs_rd_u32(&r, H_OFF_LOC, &off_loc);
	lfs_rd_u32(&r, H_OFF_KEYS, &off_keys);
	lfs_rd_u32(&r, H_OFF_RES, &off_res);

	lfs_erf *a = calloc(1, sizeof(*a));
	if (!a)
		return nomem(err, NULL);
	memcpy(a->header, data, LFS_ERF_HEADER);
	bool nwn2 = v == LFS_ERF_V11 &&
		    !(count && off_res > off_keys && (off_res - off_keys) / count < 40);
	set_version_layout(a, v, nwn2);
	size_t ks = a->key_stride, rs = a->res_stride;

	if (!lfs_rd_has_n(&r, off_keys, count, ks)) {
		lfs_erf_free(a);
		return lfs_fail(err, LFS_ERR_CORRUPT, err_at(off_keys, n, H_OFF_KEYS), "ERF key list",
				"key list of %u entries × %zu bytes at offset %u does not fit in the "
				"file (%zu bytes)", count, ks, off_keys, n);
	}
	if (!lfs_rd_has_n(&r, off_res, count, rs)) {
		lfs_erf_free(a);
		return lfs_fail(err, LFS_ERR_CORRUPT, err_at(off_res, n, H_OFF_RES), "ERF resource list",
				"resource list of %u entries × %zu bytes at offset %u does not fit in "
				"the file (%zu bytes)", count, rs, off_res, n);
	}

	size_t loc_end = off_loc;
	lfs_err rc = decode_loc(a, &r, lang_count, off_loc, loc_size, &loc_end, err);
	if (rc) {
		lfs_erf_free(a);
		return rc;
	}

	if (count) {
		a->e = calloc(count, sizeof(*a->e));
		if (!a->e)
			return nomem(err, a);
		a->cap = count;
	}
	size_t first = n, last = 0; /* payload region */
	rc = decode_entries(a, data, count, off_keys, off_res, fsize, tables, &first, &last, err);
	if (rc) {
		lfs_erf_free(a);
		return rc;
	}
	a->n = count;
	a->tables_only = tables;
	if (tables) {
		*out = a;
		return LFS_OK;
	}
	if (!last)
		first = last = n;

	/* gaps between the parts, when they come in the usual order */
	size_t key_end = off_keys + (size_t)count * a->key_stride;
	size_t res_end = off_res + (size_t)count * a->res_stride;
	size_t loc_start = off_loc;
	if (!lang_count && off_loc < LFS_ERF_HEADER)
		loc_start = loc_end = LFS_ERF_HEADER;
	if (LFS_ERF_HEADER <= loc_start && loc_end <= off_keys && key_end <= off_res &&
	    res_end <= first) {
		size_t from[4] = { LFS_ERF_HEADER, loc_end, key_end, res_end };
		size_t to[4] = { loc_start, off_keys, off_res, first };
		for (int g = 0; g < 4; g++)
			if (copy_range(data, from[g], to[g] - from[g], &a->gap[g], &a->gap_n[g]))
				return nomem(err, a);
		if (copy_range(data, last, n - last, &a->trailer, &a->trailer_n))
			return nomem(err, a);
	}
	*out = a;
	return LFS_OK;
}

lfs_err lfs_erf_decode(const uint8_t *data, size_t n, lfs_erf **out, lfs_error *err)
{
	return decode_impl(data, n, n, false, out, err);
}

static lfs_err read_entry(lfs_erf_version version, const lfs_erf_entry *e, const uint8_t *data,
			  uint32_t i, uint8_t **out, size_t *n, lfs_error *err);

/* pread @p n bytes at @p off of @p fd whole; false on a short read or an error. */
static bool pread_full(int fd, uint8_t *buf, size_t n, uint64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = pread(fd, buf + got, n - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		got += (size_t)k;
	}
	return true;
}

lfs_err lfs_erf_decode_fd(int fd, size_t max, lfs_erf **out, lfs_error *err)
{
	*out = NULL;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return lfs_fail(err, LFS_ERR_IO, SIZE_MAX, "ERF", "not a readable regular file");
	size_t fsize = (size_t)st.st_size;
	uint8_t h[LFS_ERF_HEADER];
	size_t hn = fsize < sizeof(h) ? fsize : sizeof(h);
	if (!pread_full(fd, h, hn, 0))
		return lfs_fail(err, LFS_ERR_IO, 0, "ERF header", "cannot read the header");
	if (hn < LFS_ERF_HEADER) /* the decoder says what is wrong */
		return decode_impl(h, hn, fsize, true, out, err);
	/* the tables end where the last of strings, keys, resources ends (widest
	 * strides: the decoder picks the real ones); never past the file */
	uint64_t count = lfs_le32(h + H_ENTRY_COUNT);
	uint64_t end = LFS_ERF_HEADER;
	uint64_t ends[3] = { (uint64_t)lfs_le32(h + H_OFF_LOC) + lfs_le32(h + H_LOC_SIZE),
			     lfs_le32(h + H_OFF_KEYS) + count * 44, lfs_le32(h + H_OFF_RES) + count * 16 };
	for (int i = 0; i < 3; i++)
		if (ends[i] > end)
			end = ends[i];
	if (end > fsize)
		end = fsize;
	if (end > max)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "ERF tables",
				"tables of %llu bytes pass the bound of %zu", (unsigned long long)end,
				max);
	uint8_t *t = malloc((size_t)end);
	if (!t)
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "ERF tables", "out of memory");
	lfs_err r = pread_full(fd, t, (size_t)end, 0)
			    ? decode_impl(t, (size_t)end, fsize, true, out, err)
			    : lfs_fail(err, LFS_ERR_IO, SIZE_MAX, "ERF tables", "cannot read the tables");
	free(t);
	if (r == LFS_ERR_CORRUPT && end < fsize && fsize <= max) {
		/* localized strings longer than LocalizedStringSize says (it is not
		 * trusted: real haks have them): the front of the file up to its end */
		t = malloc(fsize);
		if (!t)
			return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "ERF tables", "out of memory");
		r = pread_full(fd, t, fsize, 0) ? decode_impl(t, fsize, fsize, true, out, err)
						 : lfs_fail(err, LFS_ERR_IO, SIZE_MAX, "ERF tables",
							    "cannot read the tables");
		free(t);
	}
	return r;
}

lfs_err lfs_erf_read_fd(const lfs_erf *a, int fd, uint32_t i, size_t max, uint8_t **out,
			size_t *n, lfs_error *err)
{
	*out = NULL;
	*n = 0;
	if (i >= a->n)
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "ERF", "no entry %u (%u entries)", i,
				a->n);
	const lfs_erf_entry *e = &a->e[i];
	if (!a->tables_only || e->owned)
		return lfs_erf_read(a, i, out, n, err);
	if (e->size > max || e->usize > max)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, e->offset, "ERF payload",
				"entry %u (%s): %u bytes pass the bound of %zu", i, e->resref,
				e->size > e->usize ? e->size : e->usize, max);
	uint8_t *buf = malloc(e->size ? e->size : 1);
	if (!buf)
		return lfs_fail(err, LFS_ERR_NOMEM, e->offset, "ERF payload", "out of memory");
	if (e->size && !pread_full(fd, buf, e->size, e->offset)) {
		free(buf);
		return lfs_fail(err, LFS_ERR_IO, e->offset, "ERF payload",
				"entry %u (%s): cannot read %u bytes at offset %u", i, e->resref,
				e->size, e->offset);
	}
	lfs_err r = read_entry(a->version, e, buf, i, out, n, err);
	free(buf);
	return r;
}

/* entries with a payload, in placement order */
static int cmp_order(const void *x, const void *y)
{
	const lfs_erf_entry *a = *(const lfs_erf_entry *const *)x, *b = *(const lfs_erf_entry *const *)y;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	if (!a->owned != !b->owned) /* a replaced payload after the one it shared */
		return a->owned ? 1 : -1;
	return a < b ? -1 : a > b;
}

lfs_err lfs_erf_encode(const lfs_erf *a, uint8_t **out, size_t *n, lfs_error *err)
{
	if (a->tables_only) {
		*out = NULL;
		*n = 0;
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "ERF",
				"an archive decoded from its tables alone cannot be encoded");
	}
	*out = NULL;
	*n = 0;
	size_t loc_n = a->loc_tail_n;
	for (uint32_t i = 0; i < a->n_loc; i++)
		loc_n += 8 + (size_t)a->loc[i].size;
	size_t off_loc = LFS_ERF_HEADER + a->gap_n[0];
	size_t off_keys = off_loc + loc_n + a->gap_n[1];
	size_t off_res = off_keys + (size_t)a->n * a->key_stride + a->gap_n[2];
	size_t data_start = off_res + (size_t)a->n * a->res_stride + a->gap_n[3];

	lfs_erf_entry **ord = malloc(((size_t)a->n + 1) * sizeof(*ord));
	uint32_t *pos = malloc(((size_t)a->n + 1) * sizeof(*pos));
	if (!ord || !pos) {
		free(ord);
		free(pos);
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "ERF", "out of memory");
	}
	size_t m = 0;
	for (uint32_t i = 0; i < a->n; i++)
		ord[m++] = &a->e[i];
	qsort(ord, m, sizeof(*ord), cmp_order);
	size_t at = data_start;
	lfs_err rc = LFS_OK;
	for (size_t j = 0; j < m; j++) {
		lfs_erf_entry *e = ord[j];
		if (!e->size) {
			/* an empty payload: where it falls in the order (its offset
			 * field points at the next payload, as writers put it), but
			 * one that pointed before the payloads (0: the toolset's
			 * broken entries) keeps its offset field */
			pos[e - a->e] = e->offset < data_start || at > UINT32_MAX ? e->offset
										  : (uint32_t)at;
			continue;
		}
		/* duplicate keys that share one untouched payload keep sharing it */
		if (j && !e->owned && !ord[j - 1]->owned && e->order == ord[j - 1]->order &&
		    e->size == ord[j - 1]->size) {
			pos[e - a->e] = pos[ord[j - 1] - a->e];
			continue;
		}
		if (at > UINT32_MAX || e->size > UINT32_MAX - at) {
			rc = lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "ERF",
				      "the archive would pass 4 GiB: ERF offsets are 32-bit");
			break;
		}
		pos[e - a->e] = (uint32_t)at;
		at += e->size;
	}
	size_t total = at + a->trailer_n;
	uint8_t *b = rc ? NULL : calloc(1, total ? total : 1);
	if (!rc && !b)
		rc = lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "ERF", "out of memory");
	if (rc) {
		free(ord);
		free(pos);
		return rc;
	}
	memcpy(b, a->header, LFS_ERF_HEADER);
	lfs_put_le32(b + H_LANG_COUNT, a->n_loc);
	lfs_put_le32(b + H_LOC_SIZE, (uint32_t)loc_n);
	lfs_put_le32(b + H_ENTRY_COUNT, a->n);
	lfs_put_le32(b + H_OFF_LOC, (uint32_t)off_loc);
	lfs_put_le32(b + H_OFF_KEYS, (uint32_t)off_keys);
	lfs_put_le32(b + H_OFF_RES, (uint32_t)off_res);
	size_t p = LFS_ERF_HEADER;
	if (a->gap_n[0])
		memcpy(b + p, a->gap[0], a->gap_n[0]);
	p = off_loc;
	for (uint32_t i = 0; i < a->n_loc; i++) {
		lfs_put_le32(b + p, a->loc[i].lang);
		lfs_put_le32(b + p + 4, a->loc[i].size);
		memcpy(b + p + 8, a->loc[i].text, a->loc[i].size);
		p += 8 + (size_t)a->loc[i].size;
	}
	if (a->loc_tail_n)
		memcpy(b + p, a->loc_tail, a->loc_tail_n);
	p += a->loc_tail_n;
	if (a->gap_n[1])
		memcpy(b + p, a->gap[1], a->gap_n[1]);
	for (uint32_t i = 0; i < a->n; i++) {
		const lfs_erf_entry *e = &a->e[i];
		uint8_t *k = b + off_keys + (size_t)i * a->key_stride;
		uint8_t *q = b + off_res + (size_t)i * a->res_stride;
		memcpy(k, e->resref_raw, a->resref_len);
		lfs_put_le32(k + a->resref_len, e->res_id);
		lfs_put_le16(k + a->resref_len + 4, e->type);
		lfs_put_le16(k + a->resref_len + 6, e->unused);
		lfs_put_le32(q, pos[i]);
		lfs_put_le32(q + 4, e->size);
		if (a->version == LFS_ERF_E10) {
			memcpy(k + 24, e->sha1, 20);
			lfs_put_le32(q + 8, e->compression);
			lfs_put_le32(q + 12, e->usize);
		}
		if (e->size)
			memcpy(b + pos[i], e->data, e->size);
	}
	p = off_keys + (size_t)a->n * a->key_stride;
	if (a->gap_n[2])
		memcpy(b + p, a->gap[2], a->gap_n[2]);
	p = off_res + (size_t)a->n * a->res_stride;
	if (a->gap_n[3])
		memcpy(b + p, a->gap[3], a->gap_n[3]);
	if (a->trailer_n)
		memcpy(b + at, a->trailer, a->trailer_n);
	free(ord);
	free(pos);
	*out = b;
	*n = total;
	return LFS_OK;
}

/* The payload of entry @p e (index @p i of an archive of @p version), its stored bytes at @p data. */
static lfs_err read_entry(lfs_erf_version version, const lfs_erf_entry *e, const uint8_t *data,
			  uint32_t i, uint8_t **out, size_t *n, lfs_error *err)
{
	if (e->compression == 1) {
		lfs_err rc = lfs_xres_decompress(data, e->size, e->offset, e->usize, out, n, err);
		if (rc) {
			if (err) { /* name the entry too */
				char m[sizeof(err->msg)];
				snprintf(m, sizeof(m), "entry %u (%.32s, type %u): %.240s", i, e->resref,
					 e->type, err->msg);
				memcpy(err->msg, m, sizeof(m));
			}
			return rc;
		}
	} else {
		*out = malloc(e->size ? e->size : 1);
		if (!*out)
			return lfs_fail(err, LFS_ERR_NOMEM, e->offset, "ERF payload", "out of memory");
		if (e->size)
			memcpy(*out, data, e->size);
		*n = e->size;
	}
	static const uint8_t zero[20];
	if (version == LFS_ERF_E10 && memcmp(e->sha1, zero, 20)) {
		uint8_t d[20];
		lfs_sha1(*out, *n, d);
		if (memcmp(d, e->sha1, 20)) {
			free(*out);
			*out = NULL;
			*n = 0;
			return lfs_fail(err, LFS_ERR_CORRUPT, e->offset, "ERF payload",
					"entry %u (%s): payload at offset %u does not match the key's SHA-1",
					i, e->resref, e->offset);
		}
	}
	return LFS_OK;
}

lfs_err lfs_erf_read(const lfs_erf *a, uint32_t i, uint8_t **out, size_t *n, lfs_error *err)
{
	*out = NULL;
	*n = 0;
	if (i >= a->n)
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "ERF", "no entry %u (%u entries)", i,
				a->n);
	const lfs_erf_entry *e = &a->e[i];
	if (e->size && !e->data)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, e->offset, "ERF payload",
				"entry %u (%s): decoded from the tables alone: read it with "
				"lfs_erf_read_fd()", i, e->resref);
	return read_entry(a->version, e, e->data, i, out, n, err);
}

/* give entry e the payload p/n (copied); E1: compress when it was, SHA-1 */
static lfs_err put_payload(lfs_erf *a, lfs_erf_entry *e, const uint8_t *p, size_t n,
			   lfs_error *err)
{
	if (n > UINT32_MAX)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "ERF",
				"a resource of %zu bytes does not fit a 32-bit size", n);
	uint8_t *buf;
	size_t bn = n;
	if (a->version == LFS_ERF_E10 && e->compression == 1) {
		lfs_err rc = lfs_xres_compress(p, n, &buf, &bn, err);
		if (rc)
			return rc;
		if (bn > UINT32_MAX) {
			free(buf);
			return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "ERF",
					"compressed resource of %zu bytes does not fit a 32-bit size", bn);
		}
	} else {
		buf = malloc(n ? n : 1);
		if (!buf)
			return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "ERF", "out of memory");
		if (n)
			memcpy(buf, p, n);
	}
	free(e->owned);
	e->owned = buf;
	e->data = buf;
	e->size = (uint32_t)bn;
	e->usize = (uint32_t)n;
	if (a->version == LFS_ERF_E10)
		lfs_sha1(p, n, e->sha1);
	e->order = UINT64_MAX; /* placed after the untouched payloads */
	return LFS_OK;
}

lfs_err lfs_erf_set(lfs_erf *a, uint32_t i, const uint8_t *p, size_t n, lfs_error *err)
{
	if (i >= a->n)
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "ERF", "no entry %u (%u entries)", i,
				a->n);
	/* A replaced payload keeps its place among the others (the ones after it
	 * move): written back, the archive is the original byte for byte. */
	uint64_t keep = a->e[i].order;
	lfs_err r = put_payload(a, &a->e[i], p, n, err);
	if (r == LFS_OK)
		a->e[i].order = keep;
	return r;
}

lfs_err lfs_resref_check(const char *resref, size_t max_len, lfs_error *err)
{
	size_t len = strlen(resref);
	if (!len)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "ResRef", "empty resource name");
	if (len > max_len)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "ResRef",
				"resource name \"%.40s\" has %zu characters, the limit is %zu", resref,
				len, max_len);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)resref[i];
		if (!(isascii(c) && (isalnum(c) || c == '_')))
			return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "ResRef",
					"resource name \"%.40s\": character %zu (0x%02x) is not a letter, "
					"digit or '_'", resref, i + 1, c);
	}
	return LFS_OK;
}

uint32_t lfs_erf_find(const lfs_erf *a, const char *resref, uint16_t type)
{
	for (uint32_t i = 0; i < a->n; i++)
		if (a->e[i].type == type && !strcasecmp(a->e[i].resref, resref))
			return i;
	return UINT32_MAX;
}

lfs_err lfs_erf_check_name(const lfs_erf *a, const char *resref, uint16_t type, uint32_t self,
			   lfs_error *err)
{
	lfs_err rc = lfs_resref_check(resref, a->resref_len, err);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < a->n; i++)
		if (i != self && a->e[i].type == type && !strcasecmp(a->e[i].resref, resref))
			return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "ResRef",
					"resource name \"%s\" (type %u) is already used by entry %u \"%s\" "
					"(names are compared ignoring case)", resref, type, i,
					a->e[i].resref);
	return LFS_OK;
}

static void name_entry(lfs_erf *a, lfs_erf_entry *e, const char *resref, uint16_t type)
{
	memset(e->resref_raw, 0, sizeof(e->resref_raw));
	memcpy(e->resref_raw, resref, strlen(resref));
	set_resref_raw(e, a->resref_len);
	e->type = type;
}

lfs_err lfs_erf_add(lfs_erf *a, const char *resref, uint16_t type, const uint8_t *p, size_t n,
		    lfs_error *err)
{
	lfs_err rc = lfs_erf_check_name(a, resref, type, UINT32_MAX, err);
	if (rc)
		return rc;
	if (a->n == UINT32_MAX)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "ERF", "too many entries");
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		lfs_erf_entry *ne = realloc(a->e, cap * sizeof(*ne));
		if (!ne)
			return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "ERF", "out of memory");
		a->e = ne;
		a->cap = cap;
	}
	lfs_erf_entry *e = &a->e[a->n];
	memset(e, 0, sizeof(*e));
	name_entry(a, e, resref, type);
	e->res_id = a->n;
	rc = put_payload(a, e, p, n, err);
	if (rc)
		return rc;
	a->n++;
	return LFS_OK;
}

void lfs_erf_remove(lfs_erf *a, uint32_t i)
{
	if (i >= a->n)
		return;
	bool by_index = true;
	for (uint32_t k = 0; k < a->n; k++)
		if (a->e[k].res_id != k)
			by_index = false;
	free(a->e[i].owned);
	memmove(&a->e[i], &a->e[i + 1], (a->n - i - 1) * sizeof(*a->e));
	a->n--;
	if (by_index)
		for (uint32_t k = i; k < a->n; k++)
			a->e[k].res_id = k;
}

lfs_err lfs_erf_rename(lfs_erf *a, uint32_t i, const char *resref, uint16_t type,
		       lfs_error *err)
{
	if (i >= a->n)
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "ERF", "no entry %u (%u entries)", i,
				a->n);
	lfs_err rc = lfs_erf_check_name(a, resref, type, i, err);
	if (rc)
		return rc;
	name_entry(a, &a->e[i], resref, type);
	return LFS_OK;
}
