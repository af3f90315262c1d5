/**
 * @file nad.c
 * NAD v3 decoder and encoder (layout and sources in nad.h).
 */
#include "nad.h"

#include "common/mem.h"
#include "common/rd.h"
#include "common/wr.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* [SDK "Keyframe Tag Meanings"], lower case; 13-15 are "Codex1-Codex3". */
static const char *const tag_names[NAD_TAG_NAMED] = {
	"lwalk", "rwalk", "lrun",   "rrun",   "fire",   "strike",   "cast",
	"fall",  "project", "flap", "suck",   "idle",   "idle2",    "codex1",
	"codex2", "codex3", "repeat", "repeatto", "throwdeath",
};

static const char *const track_names[] = { "rotation", "translation", "scale" };

const char *nad_tag_name(uint32_t type)
{
	return type < NAD_TAG_NAMED ? tag_names[type] : NULL;
}

static bool word_is(const char *s, size_t len, const char *w)
{
	return strlen(w) == len && !strncasecmp(s, w, len);
}

int nad_tag_from_name(const char *name, size_t len)
{
	for (uint32_t i = 0; i < NAD_TAG_NAMED; i++)
		if (word_is(name, len, tag_names[i]))
			return (int)i;
	if (word_is(name, len, "repeat_to"))
		return 17;
	return -1;
}

const char *nad_track_type_name(uint32_t type)
{
	return type < 3 ? track_names[type] : NULL;
}

int nad_track_type_from_name(const char *name, size_t len)
{
	for (int i = 0; i < 3; i++)
		if (word_is(name, len, track_names[i]))
			return i;
	return -1;
}

bool nad_is_binary(const uint8_t *data, size_t n)
{
	if (!data || n < NAD_HEADER_SIZE + 4)
		return false;
	uint32_t version = lfs_le32(data), n_tracks = lfs_le32(data + 4);
	return version == NAD_VERSION &&
	       (uint64_t)n_tracks * NAD_TRACK_HEADER_SIZE <= n - NAD_HEADER_SIZE - 4;
}

void nad_model_free(nad_model *m)
{
	if (!m)
		return;
	if (m->tracks)
		for (uint32_t i = 0; i < m->n_tracks; i++)
			free(m->tracks[i].keys);
	free(m->tracks);
	free(m->tags);
	free(m->trailing);
	free(m);
}

static void get_key(const uint8_t *p, nad_key *k)
{
	for (unsigned i = 0; i < NAD_KEY_FLOATS; i++) {
		uint32_t u = lfs_le32(p + 4 * i);
		memcpy(&k->v[i], &u, 4);
	}
}

lfs_err nad_decode(const uint8_t *data, size_t n, nad_model **out, lfs_error *err)
{
	*out = NULL;
	lfs_err rc;
	lfs_rd r = { data, data ? n : 0 };
	if (!lfs_rd_has(&r, 0, NAD_HEADER_SIZE))
		return lfs_fail(err, LFS_ERR_NOTFORMAT, 0, "NAD header",
				"file of %zu bytes is shorter than the 16-byte header", n);
	uint32_t version = lfs_le32(data);
	if (version != NAD_VERSION)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, 0, "NAD header",
				"version %" PRIu32 " (only version 3 is documented)", version);
	nad_model *m = calloc(1, sizeof(*m));
	if (!m)
		goto nomem;
	m->version = version;
	m->n_tracks = lfs_le32(data + 4);
	m->flags = lfs_le32(data + 8);
	{
		uint32_t u = lfs_le32(data + 12);
		memcpy(&m->duration, &u, 4);
	}
	size_t off = NAD_HEADER_SIZE;
	/* Every track needs at least its 12-byte header: bound the allocation
	 * by what the file can hold before allocating. */
	if (!lfs_rd_has_n(&r, off, m->n_tracks, NAD_TRACK_HEADER_SIZE)) {
		rc = lfs_fail(err, LFS_ERR_CORRUPT, 4, "NAD header",
			 "%" PRIu32 " tracks cannot fit in a file of %zu bytes", m->n_tracks, n);
		goto fail;
	}
	if (m->n_tracks) {
		m->tracks = calloc(m->n_tracks, sizeof(*m->tracks));
		if (!m->tracks)
			goto nomem;
	}
	for (uint32_t t = 0; t < m->n_tracks; t++) {
		nad_track *tr = &m->tracks[t];
		if (!lfs_rd_has(&r, off, NAD_TRACK_HEADER_SIZE)) {
			rc = lfs_fail(err, LFS_ERR_CORRUPT, off, "track header",
				 "track %" PRIu32 " of %" PRIu32 ": header runs past the end (%zu bytes)",
				 t, m->n_tracks, n);
			goto fail;
		}
		tr->off = off;
		tr->n_keys = lfs_le32(data + off);
		tr->bone = lfs_le32(data + off + 4);
		tr->type = lfs_le32(data + off + 8);
		off += NAD_TRACK_HEADER_SIZE;
		if (!lfs_rd_has_n(&r, off, tr->n_keys, NAD_KEY_SIZE)) {
			rc = lfs_fail(err, LFS_ERR_CORRUPT, tr->off, "track header",
				 "track %" PRIu32 ": %" PRIu32 " keys of 56 bytes run past the end "
				 "(%zu bytes left)",
				 t, tr->n_keys, n - off);
			goto fail;
		}
		if (tr->n_keys) {
			tr->keys = malloc((size_t)tr->n_keys * sizeof(*tr->keys));
			if (!tr->keys)
				goto nomem;
		}
		for (uint32_t k = 0; k < tr->n_keys; k++, off += NAD_KEY_SIZE)
			get_key(data + off, &tr->keys[k]);
	}
	if (!lfs_rd_has(&r, off, 4)) {
		rc = lfs_fail(err, LFS_ERR_CORRUPT, off, "tag count",
			 "file ends before the tag count (%zu bytes)", n);
		goto fail;
	}
	m->n_tags = lfs_le32(data + off);
	off += 4;
	if (!lfs_rd_has_n(&r, off, m->n_tags, NAD_TAG_SIZE)) {
		rc = lfs_fail(err, LFS_ERR_CORRUPT, off - 4, "tag count",
			 "%" PRIu32 " tags of 8 bytes run past the end (%zu bytes left)", m->n_tags,
			 n - off);
		goto fail;
	}
	if (m->n_tags) {
		m->tags = malloc((size_t)m->n_tags * sizeof(*m->tags));
		if (!m->tags)
			goto nomem;
	}
	for (uint32_t i = 0; i < m->n_tags; i++, off += NAD_TAG_SIZE) {
		uint32_t u = lfs_le32(data + off);
		memcpy(&m->tags[i].frame, &u, 4);
		m->tags[i].type = lfs_le32(data + off + 4);
	}
	m->n_trailing = n - off;
	if (!lfs_memdup((void **)&m->trailing, data + off, m->n_trailing))
		goto nomem;
	*out = m;
	return LFS_OK;
nomem:
	rc = lfs_nomem(err, "NAD");
fail:
	nad_model_free(m);
	return rc;
}

size_t nad_encoded_size(const nad_model *m)
{
	uint64_t s = NAD_HEADER_SIZE + 4 + (uint64_t)m->n_tags * NAD_TAG_SIZE;
	for (uint32_t t = 0; t < m->n_tracks; t++)
		s += NAD_TRACK_HEADER_SIZE + (uint64_t)m->tracks[t].n_keys * NAD_KEY_SIZE;
	if (s > SIZE_MAX - m->n_trailing)
		return SIZE_MAX;
	s += m->n_trailing;
	return s > SIZE_MAX - 1 ? SIZE_MAX : (size_t)s;
}

size_t nad_key_offset(const nad_model *m, uint32_t t, uint32_t k)
{
	if (t >= m->n_tracks || k >= m->tracks[t].n_keys)
		return SIZE_MAX;
	uint64_t s = NAD_HEADER_SIZE;
	for (uint32_t i = 0; i < t; i++)
		s += NAD_TRACK_HEADER_SIZE + (uint64_t)m->tracks[i].n_keys * NAD_KEY_SIZE;
	s += NAD_TRACK_HEADER_SIZE + (uint64_t)k * NAD_KEY_SIZE;
	return s > SIZE_MAX ? SIZE_MAX : (size_t)s;
}

lfs_err nad_encode(const nad_model *m, uint8_t **out, size_t *n, lfs_error *err)
{
	*out = NULL;
	*n = 0;
	if (m->version != NAD_VERSION)
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "NAD model",
				"version %" PRIu32 " cannot be encoded (only 3)", m->version);
	if ((m->n_tracks && !m->tracks) || (m->n_tags && !m->tags) ||
	    (m->n_trailing && !m->trailing))
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "NAD model",
				"a count is set but its array is missing");
	for (uint32_t t = 0; t < m->n_tracks; t++)
		if (m->tracks[t].n_keys && !m->tracks[t].keys)
			return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "NAD model",
					"track %" PRIu32 " has %" PRIu32 " keys but no key array", t,
					m->tracks[t].n_keys);
	size_t size = nad_encoded_size(m);
	if (size == SIZE_MAX)
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "NAD model", "model too large");
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return lfs_nomem(err, "NAD");
	uint8_t *p = buf;
	p = lfs_put_le32(p, m->version);
	p = lfs_put_le32(p, m->n_tracks);
	p = lfs_put_le32(p, m->flags);
	p = lfs_put_lef32(p, m->duration);
	for (uint32_t t = 0; t < m->n_tracks; t++) {
		const nad_track *tr = &m->tracks[t];
		p = lfs_put_le32(p, tr->n_keys);
		p = lfs_put_le32(p, tr->bone);
		p = lfs_put_le32(p, tr->type);
		for (uint32_t k = 0; k < tr->n_keys; k++)
			for (unsigned i = 0; i < NAD_KEY_FLOATS; i++)
				p = lfs_put_lef32(p, tr->keys[k].v[i]);
	}
	p = lfs_put_le32(p, m->n_tags);
	for (uint32_t i = 0; i < m->n_tags; i++) {
		p = lfs_put_lef32(p, m->tags[i].frame);
		p = lfs_put_le32(p, m->tags[i].type);
	}
	if (m->n_trailing)
		memcpy(p, m->trailing, m->n_trailing);
	*out = buf;
	*n = size;
	return LFS_OK;
}
