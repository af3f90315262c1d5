/**
 * @file nil.c
 * NIL v27 codec (see nil.h for the layout, its sources and the sector search).
 */
#include "nil.h"

#include "common/mem.h"
#include "common/rd.h"
#include "common/wr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const uint8_t nil_magic[NIL_MAGIC_SIZE] = { 'N', 'I', 'L', 0x10 };

size_t nil_name_len(const uint8_t raw[NIL_NAME_SIZE])
{
	const uint8_t *z = memchr(raw, 0, NIL_NAME_SIZE);
	return z ? (size_t)(z - raw) : NIL_NAME_SIZE;
}

bool nil_is_binary(const uint8_t *data, size_t n)
{
	lfs_rd r = { data, n };
	uint32_t version, nm, ns;
	if (!data || n < NIL_OFF_MATERIALS + 4 || memcmp(data, nil_magic, NIL_MAGIC_SIZE))
		return false;
	if (!lfs_rd_u32(&r, 4, &version) || version != NIL_VERSION)
		return false;
	if (!lfs_rd_u32(&r, NIL_OFF_NUM_MATERIALS, &nm) ||
	    !lfs_rd_has_n(&r, NIL_OFF_MATERIALS, nm, NIL_NAME_SIZE))
		return false;
	size_t p = NIL_OFF_MATERIALS + (size_t)nm * NIL_NAME_SIZE;
	if (!lfs_rd_u32(&r, p, &ns))
		return false;
	return lfs_rd_has_n(&r, p + 4, ns, NIL_SECTOR_MIN);
}

/* ---- sector prefix ------------------------------------------------------- */

/** Offsets of the arrays of one sector prefix (computed before reading them). */
typedef struct sector_shape {
	size_t off, planes, surf, bsp, verts, wedges, end;
	uint8_t n_planes;
	uint16_t n_surf, n_bsp, n_verts, n_wedges;
	const char *fail_what; /**< structure that did not fit (when shape() fails) */
	size_t fail_off;
} sector_shape;

/* Read the counts of the sector at @p off and where each array lies; false
 * when a count field or an array runs past the end (fail_what/fail_off say
 * which). */
static bool shape(const lfs_rd *r, size_t off, sector_shape *s)
{
	s->off = off;
	s->fail_off = off;
	s->fail_what = "sector header";
	if (!lfs_rd_has(r, off, 17) || !lfs_rd_u8(r, off + 16, &s->n_planes))
		return false;
	s->planes = off + 17;
	s->fail_off = s->planes;
	s->fail_what = "sector planes";
	if (!lfs_rd_has_n(r, s->planes, s->n_planes, NIL_PLANE_SIZE))
		return false;
	size_t p = s->planes + (size_t)s->n_planes * NIL_PLANE_SIZE;
	s->fail_off = p;
	s->fail_what = "surface plane count";
	if (!lfs_rd_u16(r, p, &s->n_surf))
		return false;
	s->surf = p + 2;
	s->fail_off = s->surf;
	s->fail_what = "surface planes";
	if (!lfs_rd_has_n(r, s->surf, s->n_surf, NIL_PLANE_SIZE))
		return false;
	p = s->surf + (size_t)s->n_surf * NIL_PLANE_SIZE;
	s->fail_off = p;
	s->fail_what = "BSP node count";
	if (!lfs_rd_u16(r, p, &s->n_bsp))
		return false;
	s->bsp = p + 2;
	s->fail_off = s->bsp;
	s->fail_what = "BSP nodes";
	if (!lfs_rd_has_n(r, s->bsp, s->n_bsp, NIL_BSP_NODE_SIZE))
		return false;
	p = s->bsp + (size_t)s->n_bsp * NIL_BSP_NODE_SIZE;
	s->fail_off = p;
	s->fail_what = "vertex count";
	if (!lfs_rd_u16(r, p, &s->n_verts))
		return false;
	s->verts = p + 2;
	s->fail_off = s->verts;
	s->fail_what = "vertices";
	if (!lfs_rd_has_n(r, s->verts, s->n_verts, NIL_VERTEX_SIZE))
		return false;
	p = s->verts + (size_t)s->n_verts * NIL_VERTEX_SIZE;
	s->fail_off = p;
	s->fail_what = "sector vertex count";
	if (!lfs_rd_u16(r, p, &s->n_wedges))
		return false;
	s->wedges = p + 2;
	s->fail_off = s->wedges;
	s->fail_what = "sector vertices";
	if (!lfs_rd_has_n(r, s->wedges, s->n_wedges, NIL_WEDGE_SIZE))
		return false;
	s->end = s->wedges + (size_t)s->n_wedges * NIL_WEDGE_SIZE;
	s->fail_what = NULL;
	return true;
}

static bool finite_run(const uint8_t *p, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (!isfinite(lfs_lef32(p + 4 * i)))
			return false;
	return true;
}

static bool plausible(const uint8_t *data, size_t n, size_t off, sector_shape *s, uint64_t *work)
{
	lfs_rd r = { data, n };
	*work += 8;
	if (!shape(&r, off, s) || s->n_verts < 1 || s->n_wedges < 3)
		return false;
	/* The strongest filters first: alpha byte and vertex index per wedge. */
	for (size_t i = 0; i < s->n_wedges; i++) {
		const uint8_t *w = data + s->wedges + i * NIL_WEDGE_SIZE;
		*work += 1;
		if (w[7] != 0xFF || lfs_le16(w) >= s->n_verts)
			return false;
	}
	*work += (uint64_t)s->n_wedges * NIL_WEDGE_SIZE;
	for (size_t i = 0; i < s->n_wedges; i++)
		if (!finite_run(data + s->wedges + i * NIL_WEDGE_SIZE + 8, 4))
			return false;
	*work += 12 + (uint64_t)s->n_verts * NIL_VERTEX_SIZE +
		 ((uint64_t)s->n_planes + s->n_surf) * NIL_PLANE_SIZE;
	return finite_run(data + off + 4, 3) && finite_run(data + s->verts, 3 * (size_t)s->n_verts) &&
	       finite_run(data + s->planes, 4 * (size_t)s->n_planes) &&
	       finite_run(data + s->surf, 4 * (size_t)s->n_surf);
}

bool nil_sector_plausible(const uint8_t *data, size_t n, size_t off, size_t *end,
			  uint64_t *work)
{
	sector_shape s;
	if (!plausible(data, n, off, &s, work))
		return false;
	*end = s.end;
	return true;
}

static bool unit_run(const uint8_t *p, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		double x = lfs_lef32(p + 16 * i), y = lfs_lef32(p + 16 * i + 4),
		       z = lfs_lef32(p + 16 * i + 8);
		if (!(fabs(x * x + y * y + z * z - 1.0) <= NIL_UNIT_TOLERANCE))
			return false;
	}
	return true;
}

bool nil_sector_unit_normals(const uint8_t *data, size_t n, size_t off)
{
	lfs_rd r = { data, n };
	sector_shape s;
	if (!shape(&r, off, &s))
		return false;
	return unit_run(data + s.planes, s.n_planes) && unit_run(data + s.surf, s.n_surf);
}

/* The search (nil.h): the first plausible offset from @p from; when its
 * planes are not unit-length, the first later plausible offset before the
 * end of its wedges whose planes are wins. SIZE_MAX when none. */
static size_t search(const uint8_t *data, size_t n, size_t from, uint64_t *work, uint64_t budget,
		     bool *stopped)
{
	sector_shape s;
	size_t found = SIZE_MAX;
	for (size_t q = from; q + NIL_SECTOR_MIN <= n; q++) {
		if (*work > budget) {
			*stopped = true;
			return SIZE_MAX;
		}
		if (plausible(data, n, q, &s, work)) {
			found = q;
			break;
		}
	}
	if (found == SIZE_MAX || nil_sector_unit_normals(data, n, found))
		return found;
	size_t end = s.end;
	for (size_t q = found + 1; q + NIL_SECTOR_MIN <= end; q++) {
		if (*work > budget) {
			*stopped = true;
			break;
		}
		sector_shape s2;
		if (plausible(data, n, q, &s2, work) && nil_sector_unit_normals(data, n, q))
			return q;
	}
	return found;
}

static void read_planes(const uint8_t *p, nil_plane *out, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		for (int k = 0; k < 3; k++)
			out[i].n[k] = lfs_lef32(p + 16 * i + 4 * k);
		out[i].d = lfs_lef32(p + 16 * i + 12);
	}
}

static void *alloc_n(size_t count, size_t size)
{
	return calloc(count ? count : 1, size);
}

void nil_sector_clear(nil_sector *s)
{
	free(s->sector_planes);
	free(s->surface_planes);
	free(s->bsp);
	free(s->vertices);
	free(s->wedges);
	free(s->tail);
	memset(s, 0, sizeof(*s));
}

nil_sector *nil_sector_push(nil_model *m, size_t *cap)
{
	size_t old = *cap;
	void *q = m->sectors;
	if (m->n_decoded == UINT32_MAX ||
	    !lfs_grow(&q, cap, (size_t)m->n_decoded + 1, sizeof(nil_sector)))
		return NULL;
	m->sectors = q;
	memset(m->sectors + old, 0, (*cap - old) * sizeof(nil_sector));
	return &m->sectors[m->n_decoded++];
}

/* Read the prefix of sector @p idx at @p off into @p s; *end = past its wedges. */
static lfs_err read_sector(const lfs_rd *r, size_t off, uint32_t idx, nil_sector *s, size_t *end,
			   lfs_error *err)
{
	sector_shape sh;
	if (!shape(r, off, &sh))
		return lfs_fail(err, LFS_ERR_CORRUPT, sh.fail_off, sh.fail_what,
				"sector %u (at %zu): %s run past the end of the file (%zu bytes)",
				(unsigned)idx, off, sh.fail_what, r->n);
	const uint8_t *d = r->p;
	s->offset = off;
	s->flags = lfs_le32(d + off);
	for (int k = 0; k < 3; k++)
		s->ambient[k] = lfs_lef32(d + off + 4 + 4 * k);
	s->n_sector_planes = sh.n_planes;
	s->n_surface_planes = sh.n_surf;
	s->n_bsp = sh.n_bsp;
	s->n_vertices = sh.n_verts;
	s->n_wedges = sh.n_wedges;
	s->sector_planes = alloc_n(sh.n_planes, sizeof(nil_plane));
	s->surface_planes = alloc_n(sh.n_surf, sizeof(nil_plane));
	s->bsp = alloc_n(sh.n_bsp, sizeof(nil_bsp_node));
	s->vertices = alloc_n(3 * (size_t)sh.n_verts, sizeof(float));
	s->wedges = alloc_n(sh.n_wedges, sizeof(nil_wedge));
	if (!s->sector_planes || !s->surface_planes || !s->bsp || !s->vertices || !s->wedges)
		return lfs_nomem(err, "sector");
	read_planes(d + sh.planes, s->sector_planes, sh.n_planes);
	read_planes(d + sh.surf, s->surface_planes, sh.n_surf);
	for (size_t i = 0; i < sh.n_bsp; i++)
		for (int k = 0; k < 4; k++)
			s->bsp[i].w[k] = lfs_le16(d + sh.bsp + 8 * i + 2 * k);
	for (size_t i = 0; i < 3 * (size_t)sh.n_verts; i++)
		s->vertices[i] = lfs_lef32(d + sh.verts + 4 * i);
	for (size_t i = 0; i < sh.n_wedges; i++) {
		const uint8_t *w = d + sh.wedges + NIL_WEDGE_SIZE * i;
		nil_wedge *o = &s->wedges[i];
		o->vertex = lfs_le16(w);
		o->base = lfs_le16(w + 2);
		memcpy(o->rgba, w + 4, 4);
		o->uv[0] = lfs_lef32(w + 8);
		o->uv[1] = lfs_lef32(w + 12);
		o->lm[0] = lfs_lef32(w + 16);
		o->lm[1] = lfs_lef32(w + 20);
	}
	*end = sh.end;
	return LFS_OK;
}

/* ---- decode ---------------------------------------------------------------- */

lfs_err nil_decode(const uint8_t *data, size_t n, nil_model **out, lfs_error *err)
{
	*out = NULL;
	lfs_rd r = { data, n };
	if (!data || n < NIL_OFF_MATERIALS + 4)
		return lfs_fail(err, LFS_ERR_NOTFORMAT, 0, "file header",
				"%zu bytes: shorter than the %u-byte NIL header", n,
				(unsigned)(NIL_OFF_MATERIALS + 4));
	if (memcmp(data, nil_magic, NIL_MAGIC_SIZE))
		return lfs_fail(err, LFS_ERR_NOTFORMAT, 0, "file header",
				"magic %02x %02x %02x %02x is not \"NIL\\x10\"", data[0], data[1],
				data[2], data[3]);
	uint32_t version = lfs_le32(data + 4);
	if (version != NIL_VERSION)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, 4, "file header",
				"NIL version %u: only version %u (Redemption) is documented",
				(unsigned)version, NIL_VERSION);
	uint32_t nm = lfs_le32(data + NIL_OFF_NUM_MATERIALS);
	if (!lfs_rd_has_n(&r, NIL_OFF_MATERIALS, nm, NIL_NAME_SIZE) ||
	    !lfs_rd_has(&r, NIL_OFF_MATERIALS + (size_t)nm * NIL_NAME_SIZE, 4))
		return lfs_fail(err, LFS_ERR_CORRUPT, NIL_OFF_NUM_MATERIALS, "material table",
				"NumMaterials %u: the names and the sector count need %llu bytes, "
				"the file has %zu",
				(unsigned)nm,
				(unsigned long long)NIL_OFF_MATERIALS + 32ull * nm + 4ull, n);
	size_t p = NIL_OFF_MATERIALS + (size_t)nm * NIL_NAME_SIZE;
	uint32_t ns = lfs_le32(data + p);
	p += 4;
	if (!lfs_rd_has_n(&r, p, ns, NIL_SECTOR_MIN))
		return lfs_fail(err, LFS_ERR_CORRUPT, p - 4, "sector count",
				"NumSectors %u: at least %u bytes each, only %zu bytes follow",
				(unsigned)ns, NIL_SECTOR_MIN, n - p);

	nil_model *m = calloc(1, sizeof(*m));
	if (!m)
		return lfs_nomem(err, "model");
	lfs_err rc = LFS_OK;
	memcpy(m->magic, data, NIL_MAGIC_SIZE);
	m->version = version;
	memcpy(m->light, data + 8, NIL_LIGHT_SIZE);
	for (int k = 0; k < 3; k++)
		m->ambient[k] = lfs_lef32(data + 0x50 + 4 * k);
	m->n_materials = nm;
	m->n_sectors = ns;
	m->materials = alloc_n(nm, NIL_NAME_SIZE);
	if (!m->materials) {
		rc = lfs_nomem(err, "material table");
		goto fail;
	}
	if (nm)
		memcpy(m->materials, data + NIL_OFF_MATERIALS, (size_t)nm * NIL_NAME_SIZE);

	size_t tail_from = p; /* start of the bytes not yet assigned */
	if (ns) {
		/* ns * 25 <= n, so ns sectors always fit in memory terms. */
		size_t cap = 0;
		nil_sector *first = nil_sector_push(m, &cap);
		if (!first) {
			rc = lfs_nomem(err, "sectors");
			goto fail;
		}
		size_t end;
		rc = read_sector(&r, p, 0, first, &end, err);
		if (rc)
			goto fail;
		uint64_t budget = (uint64_t)n * NIL_SEARCH_BUDGET_PER_BYTE + NIL_SEARCH_BUDGET_BASE;
		uint64_t work = 0;
		while (m->n_decoded < ns) {
			size_t found = search(data, n, end, &work, budget, &m->search_stopped);
			if (found == SIZE_MAX)
				break;
			nil_sector *prev = &m->sectors[m->n_decoded - 1];
			prev->n_tail = found - end;
			if (!lfs_memdup((void **)&prev->tail, data + end, prev->n_tail)) {
				rc = lfs_nomem(err, "sector tail");
				goto fail;
			}
			nil_sector *s = nil_sector_push(m, &cap);
			if (!s) {
				rc = lfs_nomem(err, "sectors");
				goto fail;
			}
			rc = read_sector(&r, found, m->n_decoded - 1, s, &end, err);
			if (rc)
				goto fail;
			s->searched = true;
		}
		nil_sector *last = &m->sectors[m->n_decoded - 1];
		last->n_tail = n - end;
		if (!lfs_memdup((void **)&last->tail, data + end, last->n_tail)) {
			rc = lfs_nomem(err, "sector tail");
			goto fail;
		}
		tail_from = n;
	}
	m->n_trailer = n - tail_from;
	if (!lfs_memdup((void **)&m->trailer, data + tail_from, m->n_trailer)) {
		rc = lfs_nomem(err, "trailer");
		goto fail;
	}
	*out = m;
	return LFS_OK;
fail:
	nil_model_free(m);
	return rc;
}

void nil_model_free(nil_model *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->n_decoded && m->sectors; i++)
		nil_sector_clear(&m->sectors[i]);
	free(m->sectors);
	free(m->materials);
	free(m->trailer);
	free(m);
}

/* ---- encode ---------------------------------------------------------------- */

static bool add_size(size_t *acc, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		return false;
	if (count * size > SIZE_MAX - *acc)
		return false;
	*acc += count * size;
	return true;
}

static uint8_t *put_planes(uint8_t *o, const nil_plane *pl, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		for (int k = 0; k < 3; k++)
			o = lfs_put_lef32(o, pl[i].n[k]);
		o = lfs_put_lef32(o, pl[i].d);
	}
	return o;
}

static bool sector_arrays_ok(const nil_sector *s)
{
	return (s->sector_planes || !s->n_sector_planes) && (s->surface_planes || !s->n_surface_planes) &&
	       (s->bsp || !s->n_bsp) && (s->vertices || !s->n_vertices) &&
	       (s->wedges || !s->n_wedges) && (s->tail || !s->n_tail);
}

lfs_err nil_encode(const nil_model *m, uint8_t **out, size_t *n, lfs_error *err)
{
	*out = NULL;
	*n = 0;
	size_t sz = NIL_OFF_MATERIALS + 4;
	bool ok = (m->materials || !m->n_materials) && (m->sectors || !m->n_decoded) &&
		  (m->trailer || !m->n_trailer);
	ok = ok && add_size(&sz, m->n_materials, NIL_NAME_SIZE) && add_size(&sz, m->n_trailer, 1);
	for (uint32_t i = 0; ok && i < m->n_decoded; i++) {
		const nil_sector *s = &m->sectors[i];
		ok = sector_arrays_ok(s) && add_size(&sz, 1, NIL_SECTOR_MIN) &&
		     add_size(&sz, (size_t)s->n_sector_planes + s->n_surface_planes, NIL_PLANE_SIZE) &&
		     add_size(&sz, s->n_bsp, NIL_BSP_NODE_SIZE) &&
		     add_size(&sz, s->n_vertices, NIL_VERTEX_SIZE) &&
		     add_size(&sz, s->n_wedges, NIL_WEDGE_SIZE) && add_size(&sz, s->n_tail, 1);
	}
	if (!ok)
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "model",
				"inconsistent model: missing array or size overflow");
	uint8_t *buf = malloc(sz);
	if (!buf)
		return lfs_nomem(err, "encode");
	uint8_t *o = buf;
	memcpy(o, m->magic, NIL_MAGIC_SIZE);
	o = lfs_put_le32(o + NIL_MAGIC_SIZE, m->version);
	memcpy(o, m->light, NIL_LIGHT_SIZE);
	o += NIL_LIGHT_SIZE;
	for (int k = 0; k < 3; k++)
		o = lfs_put_lef32(o, m->ambient[k]);
	o = lfs_put_le32(o, m->n_materials);
	if (m->n_materials) {
		memcpy(o, m->materials, (size_t)m->n_materials * NIL_NAME_SIZE);
		o += (size_t)m->n_materials * NIL_NAME_SIZE;
	}
	o = lfs_put_le32(o, m->n_sectors);
	for (uint32_t i = 0; i < m->n_decoded; i++) {
		const nil_sector *s = &m->sectors[i];
		o = lfs_put_le32(o, s->flags);
		for (int k = 0; k < 3; k++)
			o = lfs_put_lef32(o, s->ambient[k]);
		*o++ = s->n_sector_planes;
		o = put_planes(o, s->sector_planes, s->n_sector_planes);
		o = lfs_put_le16(o, s->n_surface_planes);
		o = put_planes(o, s->surface_planes, s->n_surface_planes);
		o = lfs_put_le16(o, s->n_bsp);
		for (size_t j = 0; j < s->n_bsp; j++)
			for (int k = 0; k < 4; k++)
				o = lfs_put_le16(o, s->bsp[j].w[k]);
		o = lfs_put_le16(o, s->n_vertices);
		for (size_t j = 0; j < 3 * (size_t)s->n_vertices; j++)
			o = lfs_put_lef32(o, s->vertices[j]);
		o = lfs_put_le16(o, s->n_wedges);
		for (size_t j = 0; j < s->n_wedges; j++) {
			const nil_wedge *w = &s->wedges[j];
			o = lfs_put_le16(o, w->vertex);
			o = lfs_put_le16(o, w->base);
			memcpy(o, w->rgba, 4);
			o += 4;
			o = lfs_put_lef32(o, w->uv[0]);
			o = lfs_put_lef32(o, w->uv[1]);
			o = lfs_put_lef32(o, w->lm[0]);
			o = lfs_put_lef32(o, w->lm[1]);
		}
		if (s->n_tail) {
			memcpy(o, s->tail, s->n_tail);
			o += s->n_tail;
		}
	}
	if (m->n_trailer) {
		memcpy(o, m->trailer, m->n_trailer);
		o += m->n_trailer;
	}
	*out = buf;
	*n = (size_t)(o - buf);
	return LFS_OK;
}
