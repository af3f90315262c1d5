/**
 * @file keybif.c
 * KEY and BIF decoders and the payload reader (see keybif.h; layout in
 * docs/formats/keybif.md).
 */
#include "keybif.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "common/rd.h"
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

/*
 * Check a BIF header (@p h, @p hn bytes read from the start of a file of
 * @p size bytes): tag and version, header size, no fixed resources, and the
 * variable table (*nv entries of *stride bytes at *off) inside the file —
 * all before anything is allocated. Errors as lfs_bif_decode's.
 */
static lfs_err bif_header(const uint8_t *h, size_t hn, uint64_t size, bool *e1, uint32_t *nv,
			  uint32_t *off, size_t *stride, lfs_error *err)
{
	lfs_err tr = tag_version(h, hn, "BIFF", "BIF", "BIF header", e1, err);
	if (tr != LFS_OK)
		return tr;
	size_t hdr = *e1 ? BIF_HEADER_E1 : BIF_HEADER_V1;
	if (hn < hdr)
		return lfs_fail(err, LFS_ERR_CORRUPT, 0, "BIF header",
				"BIF header needs %zu bytes, the file has %zu", hdr, hn);
	uint32_t nf = lfs_le32(h + 12);
	*nv = lfs_le32(h + 8);
	*off = lfs_le32(h + 16);
	if (nf)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, 12, "BIF header",
				"BIF has %u fixed resources (documented by BioWare as not implemented)",
				nf);
	*stride = *e1 ? BIF_ENTRY_E1 : BIF_ENTRY_V1;
	/* u32 × ≤ 24 + u32 cannot overflow 64 bits */
	if (*off > size || (uint64_t)*nv * *stride > size - *off)
		return lfs_fail(err, LFS_ERR_CORRUPT, *off <= size ? *off : 16, "BIF variable table",
				"variable table of %u entries × %zu bytes at offset %u does not fit in "
				"the file (%llu bytes)", *nv, *stride, *off, (unsigned long long)size);
	return LFS_OK;
}

/* A BIF of @p nv entries with its header fields from @p h; NULL when out of memory. */
static lfs_bif *bif_new(const uint8_t *h, bool e1, uint32_t nv)
{
	lfs_bif *b = calloc(1, sizeof(*b));
	if (!b || (nv && !(b->res = calloc(nv, sizeof(*b->res))))) {
		lfs_bif_free(b);
		return NULL;
	}
	b->e1 = e1;
	if (e1) {
		memcpy(b->oid, h + 20, 24);
		b->oid[24] = 0;
	}
	b->fd = -1;
	return b;
}

/* Decode @p count table entries of @p stride bytes at @p e into b->res from @p first. */
static void bif_entries(lfs_bif *b, uint32_t first, uint32_t count, const uint8_t *e, size_t stride)
{
	for (uint32_t i = 0; i < count; i++, e += stride) {
		lfs_bif_res *br = &b->res[first + i];
		br->id = lfs_le32(e);
		br->offset = lfs_le32(e + 4);
		br->size = lfs_le32(e + 8);
		br->type = lfs_le32(e + 12);
		br->usize = br->size;
		if (b->e1) {
			br->compression = lfs_le32(e + 16);
			br->usize = lfs_le32(e + 20);
		}
	}
}

lfs_err lfs_bif_decode(const uint8_t *data, size_t n, lfs_bif **out, lfs_error *err)
{
	*out = NULL;
	bool e1;
	uint32_t nv, off;
	size_t stride;
	lfs_err r = bif_header(data, n, n, &e1, &nv, &off, &stride, err);
	if (r != LFS_OK)
		return r;
	lfs_bif *b = bif_new(data, e1, nv);
	if (!b)
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "BIF", "out of memory");
	bif_entries(b, 0, nv, data + off, stride);
	b->n = nv;
	b->data = data;
	b->size = n;
	*out = b;
	return LFS_OK;
}

/*
 * pread exactly @p n bytes at @p off (retrying short reads and EINTR).
 * Returns the bytes read: @p n, fewer at the end of the file, or -1 (errno).
 */
static ssize_t pread_full(int fd, uint8_t *buf, size_t n, uint64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = pread(fd, buf + got, n - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

enum { BIF_TABLE_CHUNK = 4096 }; /* entries read per pread of the table */

lfs_err lfs_bif_read_table(int fd, lfs_bif **out, lfs_error *err)
{
	*out = NULL;
	struct stat st;
	if (fstat(fd, &st) != 0)
		return lfs_fail(err, LFS_ERR_IO, SIZE_MAX, "BIF", "cannot stat the BIF: %s",
				strerror(errno));
	uint64_t size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
	uint8_t h[BIF_HEADER_E1];
	ssize_t hn = pread_full(fd, h, size < sizeof(h) ? (size_t)size : sizeof(h), 0);
	if (hn < 0)
		return lfs_fail(err, LFS_ERR_IO, 0, "BIF header", "cannot read the BIF header: %s",
				strerror(errno));
	bool e1;
	uint32_t nv, off;
	size_t stride;
	lfs_err r = bif_header(h, (size_t)hn, size, &e1, &nv, &off, &stride, err);
	if (r != LFS_OK)
		return r;
	lfs_bif *b = bif_new(h, e1, nv);
	uint8_t *chunk = malloc((nv < BIF_TABLE_CHUNK ? (nv ? nv : 1) : BIF_TABLE_CHUNK) * stride);
	if (!b || !chunk) {
		lfs_bif_free(b);
		free(chunk);
		return lfs_fail(err, LFS_ERR_NOMEM, SIZE_MAX, "BIF", "out of memory");
	}
	for (uint32_t i = 0; i < nv;) {
		uint32_t c = nv - i < BIF_TABLE_CHUNK ? nv - i : BIF_TABLE_CHUNK;
		uint64_t at = off + (uint64_t)i * stride;
		ssize_t k = pread_full(fd, chunk, (size_t)c * stride, at);
		if (k != (ssize_t)(c * stride)) {
			int e = errno;
			free(chunk);
			lfs_bif_free(b);
			if (k < 0)
				return lfs_fail(err, LFS_ERR_IO, (size_t)at, "BIF variable table",
						"cannot read the variable table: %s", strerror(e));
			return lfs_fail(err, LFS_ERR_CORRUPT, (size_t)at, "BIF variable table",
					"variable table ends early at offset %llu (the file shrank?)",
					(unsigned long long)(at + (uint64_t)k));
		}
		bif_entries(b, i, c, chunk, stride);
		i += c;
	}
	free(chunk);
	b->n = nv;
	b->fd = fd;
	b->size = (size_t)size;
	*out = b;
	return LFS_OK;
}

lfs_err lfs_key_locate(const lfs_key *key, uint32_t i, const lfs_bif *const *bifs,
		       const lfs_bif_res **out, lfs_error *err)
{
	*out = NULL;
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
	lfs_rd r = { NULL, b->size };
	if (!lfs_rd_has(&r, br->offset, br->size))
		return lfs_fail(err, LFS_ERR_CORRUPT, err_at(br->offset, b->size, SIZE_MAX), "BIF payload",
				"%s (type %u): %u bytes at offset %u run past the end of BIF %s "
				"(%zu bytes; truncated?)", kr->resref, kr->type, br->size, br->offset,
				path, b->size);
	if (br->compression > 1)
		return lfs_fail(err, LFS_ERR_CORRUPT, br->offset, "BIF variable table",
				"%s (type %u): compression %u in BIF %s is not 0 or 1", kr->resref,
				kr->type, br->compression, path);
	*out = br;
	return LFS_OK;
}

lfs_err lfs_key_read(const lfs_key *key, uint32_t i, const lfs_bif *const *bifs, uint8_t **out,
		     size_t *n, lfs_error *err)
{
	*out = NULL;
	*n = 0;
	const lfs_bif_res *br;
	lfs_err lr = lfs_key_locate(key, i, bifs, &br, err);
	if (lr != LFS_OK)
		return lr;
	const lfs_key_res *kr = &key->res[i];
	const char *path = key->bifs[lfs_key_bif_of(kr->res_id)].path;
	const lfs_bif *b = bifs[lfs_key_bif_of(kr->res_id)];
	/* the payload as stored: in the caller's bytes, or read from the file */
	const uint8_t *p = b->data ? b->data + br->offset : NULL;
	uint8_t *own = NULL;
	if (!p) {
		own = malloc(br->size ? br->size : 1);
		if (!own)
			return lfs_fail(err, LFS_ERR_NOMEM, br->offset, "BIF payload", "out of memory");
		ssize_t k = pread_full(b->fd, own, br->size, br->offset);
		if (k != (ssize_t)br->size) {
			int e = errno;
			free(own);
			if (k < 0)
				return lfs_fail(err, LFS_ERR_IO, br->offset, "BIF payload",
						"%s (type %u): cannot read BIF %s: %s", kr->resref,
						kr->type, path, strerror(e));
			return lfs_fail(err, LFS_ERR_CORRUPT, br->offset, "BIF payload",
					"%s (type %u): %u bytes at offset %u run past the end of BIF %s "
					"(%zd bytes read; truncated?)", kr->resref, kr->type, br->size,
					br->offset, path, k);
		}
		p = own;
	}
	if (br->compression == 1) {
		lfs_err rc = lfs_xres_decompress(p, br->size, br->offset, br->usize, out, n, err);
		free(own);
		if (rc) {
			if (err) { /* name the resource and the BIF too */
				char m[sizeof(err->msg)];
				snprintf(m, sizeof(m), "%.16s (type %u) in BIF %.80s: %.200s", kr->resref,
					 kr->type, path, err->msg);
				memcpy(err->msg, m, sizeof(m));
			}
			return rc;
		}
	} else if (own) {
		*out = own;
		*n = br->size;
	} else {
		*out = malloc(br->size ? br->size : 1);
		if (!*out)
			return lfs_fail(err, LFS_ERR_NOMEM, br->offset, "BIF payload", "out of memory");
		if (br->size)
			memcpy(*out, p, br->size);
		*n = br->size;
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
