/**
 * @file keybif.c
 * KEY and BIF decoders and the payload reader (see keybif.h; layout in
 * docs/formats/keybif.md).
 */
#include "keybif.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/rd.h"
#include "xres.h"

enum {
	KEY_HEADER = 64,   /* BioWare KEY §2.2 */
	KEY_FILE_ENTRY = 12,
	KEY_ENTRY_V1 = 22, /* ResRef[16], u16 type, u32 id */
	KEY_ENTRY_E1 = 42, /* + SHA-1 */
	BIF_HEADER_V1 = 20,
	BIF_HEADER_E1 = 44, /* + 24-byte OID */
	BIF_ENTRY_V1 = 16,
	BIF_ENTRY_E1 = 24,
};

/* the offset an error names: the structure when it starts inside the file,
 * else the header field that points outside it */
static size_t err_at(size_t off, size_t n, size_t field)
{
	return off <= n ? off : field;
}

void lfs_key_free(lfs_key *k)
{
	if (!k)
		return;
	for (uint32_t i = 0; i < k->n_bifs; i++)
		free(k->bifs[i].path);
	free(k->bifs);
	free(k->res);
	free(k);
}

static lfs_err key_nomem(lfs_key *k, lfs_error *err)
{
	lfs_key_free(k);
	return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "KEY", "out of memory");
}

/*
 * The 8 bytes every KEY and BIF starts with: the 4-byte @p tag, then the
 * version "V1  " or "E1  " (*e1 says which). @p what names the file kind
 * ("KEY", "BIF") in the message, @p where (a static string) the structure.
 */
static lfs_err tag_version(const uint8_t *data, size_t n, const char *tag, const char *what,
			   const char *where, bool *e1, lfs_error *err)
{
	if (n < 8 || memcmp(data, tag, 4))
		return lfs_fail(err, LFS_ERR_NOTFORMAT, 0, where,
				"not a %s file (no \"%.4s\" tag at offset 0)", what, tag);
	if (!memcmp(data + 4, "V1  ", 4))
		*e1 = false;
	else if (!memcmp(data + 4, "E1  ", 4))
		*e1 = true;
	else
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, 4, where,
				"%s version \"%.4s\" at offset 4 is not supported (V1, E1)", what,
				(const char *)data + 4);
	return LFS_OK;
}

lfs_err lfs_key_decode(const uint8_t *data, size_t n, lfs_key **out, lfs_error *err)
{
	lfs_rd r = { data, n };
	*out = NULL;
	bool e1;
	lfs_err tr = tag_version(data, n, "KEY ", "KEY", "KEY header", &e1, err);
	if (tr != LFS_OK)
		return tr;
	if (n < KEY_HEADER)
		return lfs_fail(err, LFS_ERR_CORRUPT, 0, "KEY header",
				"KEY header needs %d bytes, the file has %zu", KEY_HEADER, n);
	uint32_t nb = lfs_le32(data + 8), nk = lfs_le32(data + 12);
	uint32_t off_files = lfs_le32(data + 16), off_keys = lfs_le32(data + 20);
	size_t stride = e1 ? KEY_ENTRY_E1 : KEY_ENTRY_V1;
	if (!lfs_rd_has_n(&r, off_files, nb, KEY_FILE_ENTRY))
		return lfs_fail(err, LFS_ERR_CORRUPT, err_at(off_files, n, 16), "KEY file table",
				"file table of %u BIFs at offset %u does not fit in the file (%zu bytes)",
				nb, off_files, n);
	if (!lfs_rd_has_n(&r, off_keys, nk, stride))
		return lfs_fail(err, LFS_ERR_CORRUPT, err_at(off_keys, n, 20), "KEY key table",
				"key table of %u entries × %zu bytes at offset %u does not fit in the "
				"file (%zu bytes)", nk, stride, off_keys, n);
	lfs_key *k = calloc(1, sizeof(*k));
	if (!k)
		return key_nomem(NULL, err);
	k->e1 = e1;
	k->build_year = lfs_le32(data + 24);
	k->build_day = lfs_le32(data + 28);
	if (e1) {
		memcpy(k->oid, data + 32, 24);
		k->oid[24] = 0;
	}
	if (nb && !(k->bifs = calloc(nb, sizeof(*k->bifs))))
		return key_nomem(k, err);
	for (uint32_t b = 0; b < nb; b++) {
		size_t f = off_files + (size_t)b * KEY_FILE_ENTRY;
		uint32_t name_off = lfs_le32(data + f + 4);
		uint16_t name_n = lfs_le16(data + f + 8);
		if (!lfs_rd_has(&r, name_off, name_n)) {
			lfs_key_free(k);
			return lfs_fail(err, LFS_ERR_CORRUPT, f + 4, "KEY file entry",
					"BIF %u: file name of %u bytes at offset %u runs past the end of "
					"the file (%zu bytes)", b, name_n, name_off, n);
		}
		lfs_key_bif *kb = &k->bifs[k->n_bifs];
		kb->file_size = lfs_le32(data + f);
		kb->drives = lfs_le16(data + f + 10);
		size_t len = name_n;
		const uint8_t *nm = data + name_off;
		const uint8_t *nul = memchr(nm, 0, len);
		if (nul)
			len = (size_t)(nul - nm);
		if (!len) {
			lfs_key_free(k);
			return lfs_fail(err, LFS_ERR_CORRUPT, name_off, "KEY file name",
					"BIF %u: empty file name at offset %u", b, name_off);
		}
		if (!(kb->path = malloc(len + 1)))
			return key_nomem(k, err);
		for (size_t i = 0; i < len; i++)
			kb->path[i] = nm[i] == '\\' ? '/' : (char)nm[i];
		kb->path[len] = 0;
		k->n_bifs++;
	}
	if (nk && !(k->res = calloc(nk, sizeof(*k->res))))
		return key_nomem(k, err);
	for (uint32_t i = 0; i < nk; i++) {
		const uint8_t *e = data + off_keys + (size_t)i * stride;
		lfs_key_res *kr = &k->res[i];
		size_t len = 0;
		while (len < 16 && e[len])
			len++;
		memcpy(kr->resref, e, len);
		kr->resref[len] = 0;
		kr->type = lfs_le16(e + 16);
		kr->res_id = lfs_le32(e + 18);
		if (e1)
			memcpy(kr->sha1, e + 22, 20);
	}
	k->n_res = nk;
	*out = k;
	return LFS_OK;
}

void lfs_bif_free(lfs_bif *b)
{
	if (!b)
		return;
	free(b->res);
	free(b);
}

lfs_err lfs_bif_decode(const uint8_t *data, size_t n, lfs_bif **out, lfs_error *err)
{
	lfs_rd r = { data, n };
	*out = NULL;
	bool e1;
	lfs_err tr = tag_version(data, n, "BIFF", "BIF", "BIF header", &e1, err);
	if (tr != LFS_OK)
		return tr;
	size_t hdr = e1 ? BIF_HEADER_E1 : BIF_HEADER_V1;
	if (n < hdr)
		return lfs_fail(err, LFS_ERR_CORRUPT, 0, "BIF header",
				"BIF header needs %zu bytes, the file has %zu", hdr, n);
	uint32_t nv = lfs_le32(data + 8), nf = lfs_le32(data + 12), off = lfs_le32(data + 16);
	if (nf)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, 12, "BIF header",
				"BIF has %u fixed resources (documented by BioWare as not implemented)",
				nf);
	size_t stride = e1 ? BIF_ENTRY_E1 : BIF_ENTRY_V1;
	if (!lfs_rd_has_n(&r, off, nv, stride))
		return lfs_fail(err, LFS_ERR_CORRUPT, err_at(off, n, 16), "BIF variable table",
				"variable table of %u entries × %zu bytes at offset %u does not fit in "
				"the file (%zu bytes)", nv, stride, off, n);
	lfs_bif *b = calloc(1, sizeof(*b));
	if (!b || (nv && !(b->res = calloc(nv, sizeof(*b->res))))) {
		lfs_bif_free(b);
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "BIF", "out of memory");
	}
	b->e1 = e1;
	if (e1) {
		memcpy(b->oid, data + 20, 24);
		b->oid[24] = 0;
	}
	for (uint32_t i = 0; i < nv; i++) {
		const uint8_t *e = data + off + (size_t)i * stride;
		lfs_bif_res *br = &b->res[i];
		br->id = lfs_le32(e);
		br->offset = lfs_le32(e + 4);
		br->size = lfs_le32(e + 8);
		br->type = lfs_le32(e + 12);
		br->usize = br->size;
		if (e1) {
			br->compression = lfs_le32(e + 16);
			br->usize = lfs_le32(e + 20);
		}
	}
	b->n = nv;
	b->data = data;
	b->size = n;
	*out = b;
	return LFS_OK;
}

lfs_err lfs_key_read(const lfs_key *key, uint32_t i, const lfs_bif *const *bifs, uint8_t **out,
		     size_t *n, lfs_error *err)
{
	*out = NULL;
	*n = 0;
	if (i >= key->n_res)
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "KEY", "no key %u (%u keys)", i,
				key->n_res);
	const lfs_key_res *kr = &key->res[i];
	uint32_t bi = lfs_key_bif_of(kr->res_id), idx = lfs_key_index_of(kr->res_id);
	if (bi >= key->n_bifs)
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "KEY entry",
				"%s (type %u): BIF index %u is beyond the key's %u BIFs", kr->resref,
				kr->type, bi, key->n_bifs);
	const char *path = key->bifs[bi].path;
	const lfs_bif *b = bifs ? bifs[bi] : NULL;
	if (!b)
		return lfs_fail(err, LFS_ERR_IO, SIZE_MAX, "BIF",
				"%s (type %u): BIF %s is missing or unreadable", kr->resref, kr->type,
				path);
	const lfs_bif_res *br = NULL;
	if (idx < b->n && (b->res[idx].id & 0xFFFFFu) == idx)
		br = &b->res[idx];
	else
		for (uint32_t j = 0; j < b->n && !br; j++)
			if ((b->res[j].id & 0xFFFFFu) == idx)
				br = &b->res[j];
	if (!br)
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "BIF variable table",
				"%s (type %u): BIF %s has no resource %u (%u resources)", kr->resref,
				kr->type, path, idx, b->n);
	if (br->type != kr->type)
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "BIF variable table",
				"%s: type %u in the key, %u in BIF %s (resource %u)", kr->resref,
				kr->type, br->type, path, idx);
	lfs_rd r = { b->data, b->size };
	if (!lfs_rd_has(&r, br->offset, br->size))
		return lfs_fail(err, LFS_ERR_CORRUPT, err_at(br->offset, b->size, SIZE_MAX), "BIF payload",
				"%s (type %u): %u bytes at offset %u run past the end of BIF %s "
				"(%zu bytes; truncated?)", kr->resref, kr->type, br->size, br->offset,
				path, b->size);
	const uint8_t *p = b->data + br->offset;
	if (br->compression == 1) {
		lfs_err rc = lfs_xres_decompress(p, br->size, br->offset, br->usize, out, n, err);
		if (rc) {
			if (err) { /* name the resource and the BIF too */
				char m[sizeof(err->msg)];
				snprintf(m, sizeof(m), "%.16s (type %u) in BIF %.80s: %.200s", kr->resref,
					 kr->type, path, err->msg);
				memcpy(err->msg, m, sizeof(m));
			}
			return rc;
		}
	} else if (br->compression == 0) {
		*out = malloc(br->size ? br->size : 1);
		if (!*out)
			return lfs_fail(err, LFS_ERR_NOMEM, br->offset, "BIF payload", "out of memory");
		if (br->size)
			memcpy(*out, p, br->size);
		*n = br->size;
	} else {
		return lfs_fail(err, LFS_ERR_CORRUPT, br->offset, "BIF variable table",
				"%s (type %u): compression %u in BIF %s is not 0 or 1", kr->resref,
				kr->type, br->compression, path);
	}
	static const uint8_t zero[20];
	if (key->e1 && memcmp(kr->sha1, zero, 20)) {
		uint8_t d[20];
		lfs_sha1(*out, *n, d);
		if (memcmp(d, kr->sha1, 20)) {
			free(*out);
			*out = NULL;
			*n = 0;
			return lfs_fail(err, LFS_ERR_CORRUPT, br->offset, "BIF payload",
					"%s (type %u): payload in BIF %s does not match the key's SHA-1",
					kr->resref, kr->type, path);
		}
	}
	return LFS_OK;
}
