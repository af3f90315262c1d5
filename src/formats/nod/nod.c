/**
 * @file nod.c
 * NOD v7 codec (layout and sources in nod.h).
 */
#include "nod.h"

#include "common/mem.h"
#include "common/rd.h"
#include "common/wr.h"

#include <stdlib.h>
#include <string.h>

size_t nod_name_len(const nod_name *nm)
{
	const void *z = memchr(nm->raw, 0, NOD_NAME_SIZE);
	return z ? (size_t)((const uint8_t *)z - nm->raw) : NOD_NAME_SIZE;
}

bool nod_name_canonical(const nod_name *nm)
{
	for (size_t i = nod_name_len(nm); i < NOD_NAME_SIZE; i++)
		if (nm->raw[i])
			return false;
	return true;
}

/* Header counts at fixed positions after the material names. */
typedef struct nod_counts {
	uint32_t n_materials;
	uint16_t n_bones, n_meshes, n_groups;
	uint32_t n_verts, n_faces, flags;
	size_t off_fixed; /* offset of n_bones */
} nod_counts;

/* Byte size of everything from the start of the file through the groups, or
 * SIZE_MAX on overflow. */
static size_t body_size(const nod_counts *c)
{
	uint64_t s = 8 + (uint64_t)c->n_materials * NOD_NAME_SIZE + NOD_HEADER_FIXED +
		     (uint64_t)c->n_bones * NOD_BONE_SIZE + (uint64_t)c->n_meshes * NOD_NAME_SIZE +
		     (uint64_t)c->n_verts * NOD_VERTEX_SIZE +
		     ((c->flags & NOD_MODEL_HASLOD) ? (uint64_t)c->n_verts * 2 : 0) +
		     (uint64_t)c->n_faces * NOD_FACE_SIZE + (uint64_t)c->n_groups * NOD_GROUP_SIZE;
	return s > SIZE_MAX ? SIZE_MAX : (size_t)s;
}

static bool read_counts(const lfs_rd *r, nod_counts *c)
{
	if (!lfs_rd_u32(r, 4, &c->n_materials))
		return false;
	if ((uint64_t)c->n_materials * NOD_NAME_SIZE > r->n)
		return false;
	size_t o = 8 + (size_t)c->n_materials * NOD_NAME_SIZE;
	c->off_fixed = o;
	return lfs_rd_u16(r, o, &c->n_bones) && lfs_rd_u16(r, o + 2, &c->n_meshes) &&
	       lfs_rd_u32(r, o + 4, &c->n_verts) && lfs_rd_u32(r, o + 8, &c->n_faces) &&
	       lfs_rd_u16(r, o + 12, &c->n_groups) && lfs_rd_u32(r, o + 14, &c->flags) &&
	       lfs_rd_has(r, o, NOD_HEADER_FIXED);
}

bool nod_is_binary(const uint8_t *data, size_t n)
{
	lfs_rd r = { data, n };
	uint32_t v;
	nod_counts c;
	if (!lfs_rd_u32(&r, 0, &v) || v != NOD_VERSION || !read_counts(&r, &c))
		return false;
	size_t s = body_size(&c);
	return s != SIZE_MAX && s <= n;
}

void nod_model_free(nod_model *m)
{
	if (!m)
		return;
	free(m->materials);
	free(m->bones);
	free(m->meshes);
	free(m->verts);
	free(m->lod);
	free(m->faces);
	free(m->groups);
	free(m->trailing);
	free(m);
}

/* Partition check shared by decode, layout and encode. When @p set, fills
 * first_vert / first_face. */
static lfs_err partition(const nod_model *m, nod_group *set, size_t goff, lfs_error *err)
{
	uint64_t v = 0, f = 0;
	for (uint32_t g = 0; g < m->n_groups; g++) {
		const nod_group *gr = &m->groups[g];
		if (set) {
			set[g].first_vert = (uint32_t)(v < m->n_verts ? v : m->n_verts);
			set[g].first_face = (uint32_t)(f < m->n_faces ? f : m->n_faces);
		}
		v += gr->n_verts;
		f += gr->n_faces;
		if (v > m->n_verts || f > m->n_faces)
			return lfs_fail(err, LFS_ERR_CORRUPT,
					goff == SIZE_MAX ? SIZE_MAX : goff + (size_t)g * NOD_GROUP_SIZE,
					"mesh group",
					"mesh group %u runs past the %s array (groups need %llu, the header has %u)",
					(unsigned)g, v > m->n_verts ? "vertex" : "face",
					(unsigned long long)(v > m->n_verts ? v : f),
					(unsigned)(v > m->n_verts ? m->n_verts : m->n_faces));
	}
	if (v != m->n_verts || f != m->n_faces)
		return lfs_fail(err, LFS_ERR_CORRUPT, goff, "mesh group",
				"mesh groups cover %llu of %u vertices and %llu of %u faces; they must "
				"partition both arrays",
				(unsigned long long)v, (unsigned)m->n_verts, (unsigned long long)f,
				(unsigned)m->n_faces);
	return LFS_OK;
}

lfs_err nod_model_layout(nod_model *m, lfs_error *err)
{
	if (m->n_groups && !m->groups)
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "mesh group", "groups missing");
	return partition(m, m->groups, SIZE_MAX, err);
}

static void *alloc_n(size_t count, size_t size)
{
	return calloc(count ? count : 1, size);
}

static void rd_floats(const uint8_t *p, float *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		f[i] = lfs_lef32(p + 4 * i);
}

static lfs_err short_at(lfs_error *err, size_t off, const char *st, size_t need, size_t n)
{
	return lfs_fail(err, LFS_ERR_CORRUPT, off, st,
			"%s at offset %zu needs %zu bytes, the file has %zu", st, off, need,
			off < n ? n - off : 0);
}

lfs_err nod_decode(const uint8_t *data, size_t n, nod_model **out, lfs_error *err)
{
	*out = NULL;
	lfs_rd r = { data, n };
	uint32_t version;
	if (!lfs_rd_u32(&r, 0, &version) || n < 8 + NOD_HEADER_FIXED)
		return lfs_fail(err, LFS_ERR_NOTFORMAT, 0, "file header",
				"%zu bytes is too short for a NOD header", n);
	if (version != NOD_VERSION)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, 0, "file header",
				"NOD version %u is not supported (only version 7 is documented)",
				(unsigned)version);
	nod_counts c;
	uint32_t nmat = 0;
	lfs_rd_u32(&r, 4, &nmat);
	if (!lfs_rd_has_n(&r, 8, nmat, NOD_NAME_SIZE))
		return short_at(err, 8, "material names", (size_t)nmat * NOD_NAME_SIZE, n);
	if (!read_counts(&r, &c))
		return short_at(err, 8 + (size_t)nmat * NOD_NAME_SIZE, "model header", NOD_HEADER_FIXED, n);

	nod_model *m = calloc(1, sizeof(*m));
	if (!m)
		return lfs_nomem(err, "model");
	m->version = version;
	m->n_materials = c.n_materials;
	m->n_bones = c.n_bones;
	m->n_meshes = c.n_meshes;
	m->n_verts = c.n_verts;
	m->n_faces = c.n_faces;
	m->n_groups = c.n_groups;
	m->flags = c.flags;
	rd_floats(data + c.off_fixed + 18, m->bounds, 6);

	lfs_err rc = LFS_OK;
	size_t o = 8;
	/* sizes are checked against the file before each allocation */
	m->materials = alloc_n(m->n_materials, sizeof(nod_name));
	if (!m->materials)
		goto nomem;
	for (uint32_t i = 0; i < m->n_materials; i++)
		memcpy(m->materials[i].raw, data + o + (size_t)i * NOD_NAME_SIZE, NOD_NAME_SIZE);
	o = c.off_fixed + NOD_HEADER_FIXED;

	if (!lfs_rd_has_n(&r, o, m->n_bones, NOD_BONE_SIZE)) {
		rc = short_at(err, o, "bones", (size_t)m->n_bones * NOD_BONE_SIZE, n);
		goto fail;
	}
	m->bones = alloc_n(m->n_bones, sizeof(nod_bone));
	if (!m->bones)
		goto nomem;
	for (uint32_t i = 0; i < m->n_bones; i++, o += NOD_BONE_SIZE) {
		nod_bone *b = &m->bones[i];
		rd_floats(data + o, b->translate, 3);
		rd_floats(data + o + 12, b->inverse, 12);
		b->sibling = (int16_t)lfs_le16(data + o + 60);
		b->child = (int16_t)lfs_le16(data + o + 62);
		b->parent = (int16_t)lfs_le16(data + o + 64);
	}

	if (!lfs_rd_has_n(&r, o, m->n_meshes, NOD_NAME_SIZE)) {
		rc = short_at(err, o, "mesh names", (size_t)m->n_meshes * NOD_NAME_SIZE, n);
		goto fail;
	}
	m->meshes = alloc_n(m->n_meshes, sizeof(nod_name));
	if (!m->meshes)
		goto nomem;
	for (uint32_t i = 0; i < m->n_meshes; i++, o += NOD_NAME_SIZE)
		memcpy(m->meshes[i].raw, data + o, NOD_NAME_SIZE);

	if (!lfs_rd_has_n(&r, o, m->n_verts, NOD_VERTEX_SIZE)) {
		rc = short_at(err, o, "vertices", (size_t)m->n_verts * NOD_VERTEX_SIZE, n);
		goto fail;
	}
	m->verts = alloc_n(m->n_verts, sizeof(nod_vertex));
	if (!m->verts)
		goto nomem;
	for (uint32_t i = 0; i < m->n_verts; i++, o += NOD_VERTEX_SIZE) {
		nod_vertex *v = &m->verts[i];
		rd_floats(data + o, v->pos, 3);
		rd_floats(data + o + 12, v->normal, 3);
		rd_floats(data + o + 24, v->uv, 2);
		v->weight = lfs_lef32(data + o + 32);
		v->bone = data[o + 36];
		memcpy(v->pad, data + o + 37, 3);
	}

	if (m->flags & NOD_MODEL_HASLOD) {
		if (!lfs_rd_has_n(&r, o, m->n_verts, 2)) {
			rc = short_at(err, o, "lod collapse words", (size_t)m->n_verts * 2, n);
			goto fail;
		}
		m->lod = alloc_n(m->n_verts, sizeof(uint16_t));
		if (!m->lod)
			goto nomem;
		for (uint32_t i = 0; i < m->n_verts; i++, o += 2)
			m->lod[i] = lfs_le16(data + o);
	}

	if (!lfs_rd_has_n(&r, o, m->n_faces, NOD_FACE_SIZE)) {
		rc = short_at(err, o, "faces", (size_t)m->n_faces * NOD_FACE_SIZE, n);
		goto fail;
	}
	m->faces = alloc_n(m->n_faces, sizeof(nod_face));
	if (!m->faces)
		goto nomem;
	for (uint32_t i = 0; i < m->n_faces; i++, o += NOD_FACE_SIZE)
		for (int k = 0; k < 3; k++)
			m->faces[i].v[k] = lfs_le16(data + o + 2 * k);

	if (!lfs_rd_has_n(&r, o, m->n_groups, NOD_GROUP_SIZE)) {
		rc = short_at(err, o, "mesh groups", (size_t)m->n_groups * NOD_GROUP_SIZE, n);
		goto fail;
	}
	m->groups = alloc_n(m->n_groups, sizeof(nod_group));
	if (!m->groups)
		goto nomem;
	size_t goff = o;
	for (uint32_t i = 0; i < m->n_groups; i++, o += NOD_GROUP_SIZE) {
		nod_group *g = &m->groups[i];
		g->material = (int32_t)lfs_le32(data + o);
		memcpy(g->reserved, data + o + 4, 12);
		g->n_faces = lfs_le16(data + o + 16);
		g->n_verts = lfs_le16(data + o + 18);
		g->min_verts = lfs_le16(data + o + 20);
		g->flags = lfs_le16(data + o + 22);
		g->bone = data[o + 24];
		g->mesh = data[o + 25];
		memcpy(g->pad, data + o + 26, 2);
	}
	rc = partition(m, m->groups, goff, err);
	if (rc)
		goto fail;

	m->n_trailing = n - o;
	if (!lfs_memdup((void **)&m->trailing, data + o, m->n_trailing))
		goto nomem;
	*out = m;
	return LFS_OK;
nomem:
	rc = lfs_nomem(err, "model");
fail:
	nod_model_free(m);
	return rc;
}

static uint8_t *putf(uint8_t *p, const float *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p = lfs_put_lef32(p, f[i]);
	return p;
}

lfs_err nod_encode(const nod_model *m, uint8_t **out, size_t *nout, lfs_error *err)
{
	*out = NULL;
	*nout = 0;
	if ((m->n_materials && !m->materials) || (m->n_bones && !m->bones) ||
	    (m->n_meshes && !m->meshes) || (m->n_verts && !m->verts) ||
	    (m->n_faces && !m->faces) || (m->n_groups && !m->groups) ||
	    (m->n_trailing && !m->trailing))
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "model", "a count is set but its array is missing");
	if ((m->flags & NOD_MODEL_HASLOD) && m->n_verts && !m->lod)
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "lod collapse words",
				"model flag HASLOD is set but there are no lod collapse words");
	lfs_err rc = partition(m, NULL, SIZE_MAX, err);
	if (rc)
		return rc;
	nod_counts c = { .n_materials = m->n_materials, .n_bones = m->n_bones,
			 .n_meshes = m->n_meshes, .n_groups = m->n_groups,
			 .n_verts = m->n_verts, .n_faces = m->n_faces, .flags = m->flags };
	size_t body = body_size(&c);
	if (body == SIZE_MAX || m->n_trailing > SIZE_MAX - body)
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "model", "model too large to encode");
	size_t total = body + m->n_trailing;
	uint8_t *buf = malloc(total ? total : 1);
	if (!buf)
		return lfs_nomem(err, "model");
	uint8_t *p = buf;
	p = lfs_put_le32(p, m->version);
	p = lfs_put_le32(p, m->n_materials);
	for (uint32_t i = 0; i < m->n_materials; i++, p += NOD_NAME_SIZE)
		memcpy(p, m->materials[i].raw, NOD_NAME_SIZE);
	p = lfs_put_le16(p, m->n_bones);
	p = lfs_put_le16(p, m->n_meshes);
	p = lfs_put_le32(p, m->n_verts);
	p = lfs_put_le32(p, m->n_faces);
	p = lfs_put_le16(p, m->n_groups);
	p = lfs_put_le32(p, m->flags);
	p = putf(p, m->bounds, 6);
	for (uint32_t i = 0; i < m->n_bones; i++) {
		const nod_bone *b = &m->bones[i];
		p = putf(p, b->translate, 3);
		p = putf(p, b->inverse, 12);
		p = lfs_put_le16(p, (uint16_t)b->sibling);
		p = lfs_put_le16(p, (uint16_t)b->child);
		p = lfs_put_le16(p, (uint16_t)b->parent);
	}
	for (uint32_t i = 0; i < m->n_meshes; i++, p += NOD_NAME_SIZE)
		memcpy(p, m->meshes[i].raw, NOD_NAME_SIZE);
	for (uint32_t i = 0; i < m->n_verts; i++) {
		const nod_vertex *v = &m->verts[i];
		p = putf(p, v->pos, 3);
		p = putf(p, v->normal, 3);
		p = putf(p, v->uv, 2);
		p = putf(p, &v->weight, 1);
		*p++ = v->bone;
		memcpy(p, v->pad, 3);
		p += 3;
	}
	if (m->flags & NOD_MODEL_HASLOD)
		for (uint32_t i = 0; i < m->n_verts; i++)
			p = lfs_put_le16(p, m->lod[i]);
	for (uint32_t i = 0; i < m->n_faces; i++)
		for (int k = 0; k < 3; k++)
			p = lfs_put_le16(p, m->faces[i].v[k]);
	for (uint32_t i = 0; i < m->n_groups; i++) {
		const nod_group *g = &m->groups[i];
		p = lfs_put_le32(p, (uint32_t)g->material);
		memcpy(p, g->reserved, 12);
		p += 12;
		p = lfs_put_le16(p, g->n_faces);
		p = lfs_put_le16(p, g->n_verts);
		p = lfs_put_le16(p, g->min_verts);
		p = lfs_put_le16(p, g->flags);
		*p++ = g->bone;
		*p++ = g->mesh;
		memcpy(p, g->pad, 2);
		p += 2;
	}
	if (m->n_trailing)
		memcpy(p, m->trailing, m->n_trailing);
	*out = buf;
	*nout = total;
	return LFS_OK;
}

static bool dup_arr(void **dst, const void *src, size_t count, size_t size)
{
	*dst = NULL;
	if (!src)
		return true;
	*dst = malloc(count ? count * size : 1);
	if (!*dst)
		return false;
	if (count)
		memcpy(*dst, src, count * size);
	return true;
}

nod_model *nod_model_clone(const nod_model *m)
{
	nod_model *c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	*c = *m;
	bool ok = dup_arr((void **)&c->materials, m->materials, m->n_materials, sizeof(nod_name));
	ok = dup_arr((void **)&c->bones, m->bones, m->n_bones, sizeof(nod_bone)) && ok;
	ok = dup_arr((void **)&c->meshes, m->meshes, m->n_meshes, sizeof(nod_name)) && ok;
	ok = dup_arr((void **)&c->verts, m->verts, m->n_verts, sizeof(nod_vertex)) && ok;
	ok = dup_arr((void **)&c->lod, m->lod, m->n_verts, sizeof(uint16_t)) && ok;
	ok = dup_arr((void **)&c->faces, m->faces, m->n_faces, sizeof(nod_face)) && ok;
	ok = dup_arr((void **)&c->groups, m->groups, m->n_groups, sizeof(nod_group)) && ok;
	ok = dup_arr((void **)&c->trailing, m->trailing, m->n_trailing, 1) && ok;
	if (!ok) {
		nod_model_free(c);
		return NULL;
	}
	return c;
}
