/**
 * @file nwn_mdl_decode.c
 * NWN binary MDL decoder (see nwn_mdl.h).
 *
 * Every read goes through the bounds-checked helpers of rd.h against one of
 * three ranges: the whole file, the model data block (file offset 12, size A)
 * and the raw data block (offset 12 + A, size B). A failed check aborts the
 * decode with LFS_ERR_CORRUPT and an lfs_error naming the *file* offset and
 * the structure. Offsets kept in the model (`off` fields) are model-data
 * offsets, as stored in the file.
 *
 * The node tree is walked depth first. A bitmap over the model data marks
 * node headers already decoded, so a pointer cycle or a node shared between
 * two parents is reported instead of looping; recursion depth is capped.
 *
 * All allocations of one model come from a bump arena owned by the model, so
 * a failed decode and nwn_model_free() release everything at once.
 */
#include "nwn_mdl.h"
#include "nwn_fields.h"
#include "nwn_mdl_layout.h"

#include "../../common/arena.h"
#include "../../common/mem.h"
#include "../../common/rd.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 512


/* The model struct is allocated first in the arena (common/arena.h); the
 * arena is kept right before the model. */
typedef struct model_box {
	lfs_arena arena;
	nwn_model model;
} model_box;

/* ---------------------------------------------------------------- context */

typedef struct dec {
	lfs_rd md;         /* model data block */
	lfs_rd raw;        /* raw data block */
	size_t raw_base;   /* file offset of raw block */
	lfs_error *err;
	model_box *box;
	uint8_t *seen;     /* bitmap over model data: node headers decoded */
	uint8_t *seen_aabb;/* bitmap over model data: aabb entries decoded */
} dec;

#define MD_FILE(o) ((size_t)(o) + 12)

static lfs_err corrupt(dec *d, size_t file_off, const char *what, const char *detail)
{
	return lfs_fail(d->err, LFS_ERR_CORRUPT, file_off, what, "%s", detail);
}

static void *alloc(dec *d, size_t count, size_t size)
{
	return lfs_arena_calloc(&d->box->arena, count, size);
}

#define NOMEM(d) lfs_nomem((d)->err, NULL)

/* Checked model-data reads: any failure means the structure at `off` (a
 * model offset) does not fit in the model data block. The callers check the
 * whole structure size first, so these unchecked reads are safe. */
static uint32_t md32(const dec *d, uint32_t off)
{
	return lfs_le32(d->md.p + off);
}
static uint16_t md16(const dec *d, uint32_t off)
{
	return lfs_le16(d->md.p + off);
}
static uint8_t md8(const dec *d, uint32_t off)
{
	return d->md.p[off];
}
static float mdf(const dec *d, uint32_t off)
{
	return lfs_lef32(d->md.p + off);
}
static void mdfv(const dec *d, uint32_t off, float *out, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		out[i] = mdf(d, off + 4 * i);
}
/* Copy a fixed-size string field; the copy ends at the first NUL. */
static void mdstr(const dec *d, uint32_t off, size_t field, char *out)
{
	const uint8_t *p = d->md.p + off;
	size_t n = 0;
	while (n < field && p[n])
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* The scalar fields of part @p kind (nwn_fields.def) of the structure at
 * model offset @p o into @p obj; the caller checked the structure's size. */
static void read_fields(const dec *d, nwn_field_kind kind, uint32_t o, void *obj)
{
	for (size_t i = 0; i < nwn_n_fields; i++) {
		const nwn_field *f = &nwn_fields[i];
		if (f->kind != kind || (f->flags & NWN_FF_ALIAS) || f->type == NWN_FT_EFLAG)
			continue;
		void *p = nwn_field_ptr(f, obj);
		uint32_t at = o + f->off;
		switch ((nwn_field_type)f->type) {
		case NWN_FT_F32: {
			float v = mdf(d, at);
			memcpy(p, &v, sizeof(v));
			break;
		}
		case NWN_FT_F32X3:
			mdfv(d, at, p, 3);
			break;
		case NWN_FT_I32:
		case NWN_FT_RHINT: {
			uint32_t v = md32(d, at);
			memcpy(p, &v, sizeof(v));
			break;
		}
		case NWN_FT_U16: {
			uint16_t v = md16(d, at);
			memcpy(p, &v, sizeof(v));
			break;
		}
		case NWN_FT_U8:
			*(uint8_t *)p = md8(d, at);
			break;
		case NWN_FT_STR:
			mdstr(d, at, f->size, p);
			break;
		case NWN_FT_EFLAG:
			break;
		}
	}
}

/* The structure of `size` bytes at model offset `off` must fit in the model
 * data. `from` is the file offset of the field that pointed to it: errors name
 * that field, which is always inside the file, rather than the bogus target. */
static lfs_err need_md(dec *d, uint32_t off, size_t size, const char *what, size_t from)
{
	if (!lfs_rd_has(&d->md, off, size))
		return lfs_fail(d->err, LFS_ERR_CORRUPT, from, what,
				"pointer to model offset 0x%x: %zu-byte structure runs past the end of the model data (size 0x%zx)",
				off, size, d->md.n);
	return LFS_OK;
}

static void read_array(const dec *d, uint32_t off, nwn_array *a)
{
	a->off = md32(d, off);
	a->count = md32(d, off + 4);
	a->alloc = md32(d, off + 8);
}

/* Elements of an array must lie inside the model data. */
static lfs_err check_array(dec *d, const nwn_array *a, size_t elem, uint32_t at, const char *what)
{
	if (a->count == 0)
		return LFS_OK;
	if (!lfs_rd_has_n(&d->md, a->off, a->count, elem))
		return lfs_fail(d->err, LFS_ERR_CORRUPT, MD_FILE(at), what,
				"array of %u x %zu bytes at model offset 0x%x runs past the model data (size 0x%zx)",
				a->count, elem, a->off, d->md.n);
	return LFS_OK;
}

/* Read a float array living in the model data. */
static lfs_err md_floats(dec *d, const nwn_array *a, unsigned per, uint32_t at, const char *what,
			 float **out)
{
	*out = NULL;
	lfs_err e = check_array(d, a, 4u * per, at, what);
	if (e || a->count == 0)
		return e;
	size_t n = (size_t)a->count * per;
	float *f = alloc(d, n, sizeof(float));
	if (!f)
		return NOMEM(d);
	for (size_t i = 0; i < n; i++)
		f[i] = mdf(d, (uint32_t)(a->off + 4 * i));
	*out = f;
	return LFS_OK;
}

/* Read `count` records of `per` little-endian units of `unit` bytes (4: 32-bit
 * words, 2: halves) at a raw pointer into a new array of those units. */
static lfs_err raw_units(dec *d, uint32_t ptr, size_t count, unsigned unit, unsigned per, size_t at,
			 const char *what, void **out)
{
	*out = NULL;
	if (ptr == RAW_NULL || count == 0)
		return LFS_OK;
	if (!lfs_rd_has_n(&d->raw, ptr, count, unit * per))
		return lfs_fail(
			d->err, LFS_ERR_CORRUPT, at, what,
			"raw pointer 0x%x + %zu x %u bytes runs past the raw data (size 0x%zx)",
			ptr, count, unit * per, d->raw.n);
	size_t n = count * per;
	void *v = alloc(d, n, unit);
	if (!v)
		return NOMEM(d);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *src = d->raw.p + ptr + unit * i;
		if (unit == 4)
			((uint32_t *)v)[i] = lfs_le32(src);
		else
			((uint16_t *)v)[i] = lfs_le16(src);
	}
	*out = v;
	return LFS_OK;
}

static lfs_err raw_floats(dec *d, uint32_t ptr, size_t count, unsigned per, size_t at, const char *what,
			  float **out)
{
	/* float and uint32_t have the same size and alignment; decode bits. */
	uint32_t *w;
	lfs_err e = raw_units(d, ptr, count, 4, per, at, what, (void **)&w);
	if (e)
		return e;
	*out = (float *)(void *)w;
	if (w)
		for (size_t i = 0; i < count * per; i++) {
			float f;
			memcpy(&f, &w[i], 4);
			(*out)[i] = f;
		}
	return LFS_OK;
}

/* ------------------------------------------------------------ controllers */

static lfs_err decode_controllers(dec *d, nwn_node *n)
{
	uint32_t at = n->off;
	lfs_err e = check_array(d, &n->ctrl_arr, CTRL_KEY_SIZE, at + 0x54, "controller key array");
	if (!e)
		e = md_floats(d, &n->ctrl_data_arr, 1, at + 0x60, "controller data array", &n->ctrl_data);
	if (e)
		return e;
	n->n_ctrl_data = n->ctrl_data_arr.count;
	n->n_ctrls = n->ctrl_arr.count;
	if (!n->n_ctrls)
		return LFS_OK;
	n->ctrls = alloc(d, n->n_ctrls, sizeof(*n->ctrls));
	if (!n->ctrls)
		return NOMEM(d);
	for (uint32_t i = 0; i < n->n_ctrls; i++) {
		nwn_controller *c = &n->ctrls[i];
		uint32_t o = n->ctrl_arr.off + i * CTRL_KEY_SIZE;
		c->off = o;
		c->type = md32(d, o);
		c->rows = md16(d, o + 4);
		c->key_offset = md16(d, o + 6);
		c->data_offset = md16(d, o + 8);
		c->columns = md8(d, o + 10);
		c->pad = md8(d, o + 11);
		c->name = nwn_controller_name(n->flags, c->type);
		if (c->columns == 0xFF) {
			c->ncols = 0;
			c->bezier = false;
		} else {
			if (c->columns & 0xE0)
				return lfs_fail(d->err, LFS_ERR_CORRUPT, MD_FILE(o), "controller key",
						"column byte 0x%02x of controller %u in node '%s' has unknown bits",
						c->columns, c->type, n->name);
			c->ncols = c->columns & 0x0F;
			c->bezier = (c->columns & 0x10) != 0;
		}
		if ((int16_t)c->rows < 0 || (int16_t)c->key_offset < 0 || (int16_t)c->data_offset < 0)
			return lfs_fail(d->err, LFS_ERR_CORRUPT, MD_FILE(o), "controller key",
					"negative row count or data index in controller %u of node '%s'",
					c->type, n->name);
		if ((size_t)c->key_offset + c->rows > n->n_ctrl_data ||
		    (size_t)c->data_offset + (size_t)c->rows * c->ncols > n->n_ctrl_data)
			return lfs_fail(d->err, LFS_ERR_CORRUPT, MD_FILE(o), "controller key",
					"controller %u of node '%s' indexes %u rows x %u columns at %u/%u past its %u data floats",
					c->type, n->name, c->rows, c->ncols, c->key_offset, c->data_offset,
					n->n_ctrl_data);
	}
	return LFS_OK;
}

/* ------------------------------------------------------------------ parts */

static lfs_err decode_mesh_raw(dec *d, nwn_node *n, nwn_mesh *m)
{
	size_t at = MD_FILE(n->off);
	size_t nv = m->n_verts;
	lfs_err e;
	if (nv == 0)
		return LFS_OK; /* animation mesh nodes: pointers 0 or -1, nothing stored */
	if ((e = raw_floats(d, m->verts_raw, nv, 3, at + 0x22C, "mesh vertices", &m->verts)))
		return e;
	for (int t = 0; t < 4; t++)
		if ((e = raw_floats(d, m->tverts_raw[t], nv, 2, at + 0x234 + 4 * t, "mesh tverts",
				    &m->tverts[t])))
			return e;
	if ((e = raw_floats(d, m->normals_raw, nv, 3, at + 0x244, "mesh normals", &m->normals)))
		return e;
	if ((e = raw_units(d, m->colors_raw, nv, 4, 1, at + 0x248, "mesh colors",
			   (void **)&m->colors)))
		return e;
	return LFS_OK;
}

/* The skin part of mesh @p m (its node at model offset @p o) [T "The
 * Skin Mesh node", N §3.6]. */
static lfs_err decode_skin(dec *d, nwn_mesh *m, uint32_t o)
{
	lfs_err e;
	nwn_skin *s = alloc(d, 1, sizeof(*s));
	if (!s)
		return NOMEM(d);
	m->skin = s;
	read_array(d, o + 0x270, &s->weights_arr);
	s->weights_raw = md32(d, o + 0x27C);
	s->bonerefs_raw = md32(d, o + 0x280);
	s->node_to_bone_ptr = md32(d, o + 0x284);
	s->node_to_bone_count = md32(d, o + 0x288);
	read_array(d, o + 0x28C, &s->qbone_arr);
	read_array(d, o + 0x298, &s->tbone_arr);
	read_array(d, o + 0x2A4, &s->const_idx_arr);
	/* slot 17 is the word after the 17-entry table (+0x2D2) */
	for (int i = 0; i < NWN_SKIN_BONES; i++)
		s->bone_node_numbers[i] = (int16_t)md16(d, o + 0x2B0 + 2 * i);
	size_t at = MD_FILE(o);
	if ((e = raw_floats(d, s->weights_raw, m->n_verts, 4, at + 0x27C, "skin weights", &s->weights)))
		return e;
	uint16_t *refs = NULL;
	if ((e = raw_units(d, s->bonerefs_raw, (size_t)m->n_verts * 4, 2, 1, at + 0x280,
			   "skin bone refs", (void **)&refs)))
		return e;
	s->bonerefs = (int16_t *)(void *)refs;
	/* node-to-bone map: i16 per model node, in the model data [N §3.6] */
	if (s->node_to_bone_count) {
		if (!lfs_rd_has_n(&d->md, s->node_to_bone_ptr, s->node_to_bone_count, 2))
			return lfs_fail(d->err, LFS_ERR_CORRUPT, at + 0x284, "skin node-to-bone map",
					"%u entries at model offset 0x%x run past the model data",
					s->node_to_bone_count, s->node_to_bone_ptr);
		s->node_to_bone = alloc(d, s->node_to_bone_count, 2);
		if (!s->node_to_bone)
			return NOMEM(d);
		for (uint32_t i = 0; i < s->node_to_bone_count; i++)
			s->node_to_bone[i] = (int16_t)md16(d, s->node_to_bone_ptr + 2 * i);
	}
	if ((e = md_floats(d, &s->qbone_arr, 4, o + 0x28C, "skin qbone_ref_inv", &s->qbone_ref_inv)) ||
	    (e = md_floats(d, &s->tbone_arr, 3, o + 0x298, "skin tbone_ref_inv", &s->tbone_ref_inv)))
		return e;
	if ((e = check_array(d, &s->const_idx_arr, 4, o + 0x2A4, "skin bone constant indices")))
		return e;
	if (s->const_idx_arr.count) {
		s->const_indices = alloc(d, s->const_idx_arr.count, 4);
		if (!s->const_indices)
			return NOMEM(d);
		for (uint32_t i = 0; i < s->const_idx_arr.count; i++)
			s->const_indices[i] = md32(d, s->const_idx_arr.off + 4 * i);
	}
	return LFS_OK;
}

/* The animmesh part of mesh @p m (its node at model offset @p o)
 * [T "The Animmesh node"]. */
static lfs_err decode_animmesh(dec *d, nwn_mesh *m, uint32_t o)
{
	lfs_err e;
	nwn_animmesh *a = alloc(d, 1, sizeof(*a));
	if (!a)
		return NOMEM(d);
	m->anim = a;
	read_fields(d, NWN_FK_ANIMMESH, o, a);
	read_array(d, o + 0x274, &a->anim_verts_arr);
	read_array(d, o + 0x280, &a->anim_tverts_arr);
	read_array(d, o + 0x28C, &a->anim_normals_arr);
	a->anim_verts_ptr = md32(d, o + 0x298);
	a->anim_tverts_ptr = md32(d, o + 0x29C);
	a->n_vert_sets = md32(d, o + 0x2A0);
	a->n_tvert_sets = md32(d, o + 0x2A4);
	/* stored arrays: sets x mesh vertices [T "The Animmesh node"] */
	nwn_array va = { a->anim_verts_ptr, 0, 0 }, ta = { a->anim_tverts_ptr, 0, 0 };
	uint64_t nv = (uint64_t)a->n_vert_sets * m->n_verts;
	uint64_t nt = (uint64_t)a->n_tvert_sets * m->n_verts;
	if (nv > UINT32_MAX / 3 || nt > UINT32_MAX / 2)
		return corrupt(d, MD_FILE(o + 0x2A0), "animmesh node", "animation set counts too large");
	va.count = (uint32_t)nv;
	ta.count = (uint32_t)nt;
	if ((e = md_floats(d, &va, 3, o + 0x298, "animmesh vertex sets", &a->anim_verts)) ||
	    (e = md_floats(d, &ta, 2, o + 0x29C, "animmesh tvert sets", &a->anim_tverts)))
		return e;
	return LFS_OK;
}

/* The vertex index lists of mesh @p m (its node at model offset @p o):
 * counts (u32) and raw offsets (u32) in model data, the first list's
 * indices in raw data. */
static lfs_err decode_vindex(dec *d, nwn_mesh *m, uint32_t o)
{
	lfs_err e;
	if ((e = check_array(d, &m->vindex_count_arr, 4, o + 0x204, "vertex index count array")) ||
	    (e = check_array(d, &m->vindex_offset_arr, 4, o + 0x210, "vertex index offset array")))
		return e;
	if (m->vindex_count_arr.count) {
		m->vindex_counts = alloc(d, m->vindex_count_arr.count, 4);
		if (!m->vindex_counts)
			return NOMEM(d);
		for (uint32_t i = 0; i < m->vindex_count_arr.count; i++)
			m->vindex_counts[i] = md32(d, m->vindex_count_arr.off + 4 * i);
	}
	if (m->vindex_offset_arr.count) {
		m->vindex_offsets = alloc(d, m->vindex_offset_arr.count, 4);
		if (!m->vindex_offsets)
			return NOMEM(d);
		for (uint32_t i = 0; i < m->vindex_offset_arr.count; i++)
			m->vindex_offsets[i] = md32(d, m->vindex_offset_arr.off + 4 * i);
	}
	if (m->vindex_counts && m->vindex_offsets) {
		m->n_vindices = m->vindex_counts[0];
		if ((e = raw_units(d, m->vindex_offsets[0], m->n_vindices, 2, 1,
				   MD_FILE(m->vindex_offset_arr.off), "vertex index list",
				   (void **)&m->vindices)))
			return e;
		if (!m->vindices)
			m->n_vindices = 0;
	}
	return LFS_OK;
}

static lfs_err decode_mesh(dec *d, nwn_node *n)
{
	uint32_t o = n->off;
	size_t size = MESH_HDR_SIZE;
	const char *what = "mesh header";
	if (n->flags & NWN_HAS_SKIN) {
		size = SKIN_SIZE;
		what = "skin mesh node";
	} else if (n->flags & NWN_HAS_DANGLY) {
		size = DANGLY_SIZE;
		what = "danglymesh node";
	} else if (n->flags & NWN_HAS_AABB) {
		size = AABB_NODE_SIZE;
		what = "aabb node";
	} else if (n->flags & NWN_HAS_ANIM) {
		size = ANIMMESH_SIZE;
		what = "animmesh node";
	}
	lfs_err e = need_md(d, o, size, what, MD_FILE(o));
	if (e)
		return e;
	nwn_mesh *m = alloc(d, 1, sizeof(*m));
	if (!m)
		return NOMEM(d);
	n->mesh = m;
	m->fn[0] = md32(d, o + 0x70);
	m->fn[1] = md32(d, o + 0x74);
	read_array(d, o + 0x78, &m->faces_arr);
	mdfv(d, o + 0x84, m->bmin, 3);
	mdfv(d, o + 0x90, m->bmax, 3);
	m->radius = mdf(d, o + 0x9C);
	mdfv(d, o + 0xA0, m->average, 3);
	read_fields(d, NWN_FK_MESH, o, m);
	read_array(d, o + 0x1EC, &m->vindex_arr);
	read_array(d, o + 0x1F8, &m->leftover_arr);
	read_array(d, o + 0x204, &m->vindex_count_arr);
	read_array(d, o + 0x210, &m->vindex_offset_arr);
	m->strip_raw = md32(d, o + 0x21C);
	m->strip_count = md32(d, o + 0x220);
	m->triangle_mode = md8(d, o + 0x224);
	m->compile_ptr = md32(d, o + 0x228);
	m->verts_raw = md32(d, o + 0x22C);
	m->n_verts = md16(d, o + 0x230);
	m->n_textures = md16(d, o + 0x232);
	for (int t = 0; t < 4; t++)
		m->tverts_raw[t] = md32(d, o + 0x234 + 4 * t);
	m->normals_raw = md32(d, o + 0x244);
	m->colors_raw = md32(d, o + 0x248);
	for (int t = 0; t < 6; t++)
		m->texanim_raw[t] = md32(d, o + 0x24C + 4 * t);
	m->area = mdf(d, o + 0x268);

	/* faces */
	if ((e = check_array(d, &m->faces_arr, FACE_SIZE, o + 0x78, "face array")))
		return e;
	m->n_faces = m->faces_arr.count;
	if (m->n_faces) {
		m->faces = alloc(d, m->n_faces, sizeof(*m->faces));
		if (!m->faces)
			return NOMEM(d);
	}
	for (uint32_t i = 0; i < m->n_faces; i++) {
		nwn_face *f = &m->faces[i];
		uint32_t fo = m->faces_arr.off + i * FACE_SIZE;
		mdfv(d, fo, f->plane_normal, 3);
		f->plane_distance = mdf(d, fo + 12);
		f->surface_id = md32(d, fo + 16);
		for (int k = 0; k < 3; k++) {
			f->adjacent[k] = (int16_t)md16(d, fo + 20 + 2 * k);
			f->v[k] = md16(d, fo + 26 + 2 * k);
			if (f->v[k] >= m->n_verts)
				return lfs_fail(d->err, LFS_ERR_CORRUPT, MD_FILE(fo), "face",
						"face %u of node '%s' uses vertex %u of %u", i, n->name,
						f->v[k], m->n_verts);
			/* adjacent[k] is kept as stored and never used as an index:
			 * the field is a signed 16-bit face number, so a mesh of more
			 * than 32,767 faces holds wrapped (negative) numbers, as the
			 * compilers write them (docs/formats/nwn-binary.md "Layout decisions"). */
		}
	}

	if ((e = decode_mesh_raw(d, n, m)))
		return e;

	if ((e = decode_vindex(d, m, o)))
		return e;

	/* subtype parts */
	if (n->flags & NWN_HAS_SKIN) {
		if ((e = decode_skin(d, m, o)))
			return e;
	} else if (n->flags & NWN_HAS_DANGLY) {
		nwn_dangly *g = alloc(d, 1, sizeof(*g));
		if (!g)
			return NOMEM(d);
		m->dangly = g;
		read_array(d, o + 0x270, &g->constraints_arr);
		read_fields(d, NWN_FK_DANGLY, o, g);
		if ((e = md_floats(d, &g->constraints_arr, 1, o + 0x270, "dangly constraints", &g->constraints)))
			return e;
	} else if (n->flags & NWN_HAS_AABB) {
		/* handled by decode_aabb() after allocation of the part */
		nwn_aabb *a = alloc(d, 1, sizeof(*a));
		if (!a)
			return NOMEM(d);
		m->aabb = a;
		a->root_ptr = md32(d, o + 0x270);
	} else if (n->flags & NWN_HAS_ANIM) {
		if ((e = decode_animmesh(d, m, o)))
			return e;
	}
	return LFS_OK;
}

static bool bit_test_set(uint8_t *bm, uint32_t off)
{
	bool was = bm[off >> 3] & (1u << (off & 7));
	bm[off >> 3] |= (uint8_t)(1u << (off & 7));
	return was;
}

/* AABB tree, iterative depth-first pre-order with an explicit stack. */
static lfs_err decode_aabb(dec *d, nwn_node *n)
{
	nwn_aabb *a = n->mesh->aabb;
	if (a->root_ptr == 0)
		return LFS_OK;
	size_t cap = 64, sp = 0, count = 0, ecap = 64;
	struct item {
		uint32_t off;
		uint16_t depth;
		size_t from; /* file offset of the pointer field */
	} *stack = malloc(cap * sizeof(*stack));
	nwn_aabb_entry *ents = malloc(ecap * sizeof(*ents));
	lfs_err e = LFS_OK;
	if (!stack || !ents) {
		e = NOMEM(d);
		goto out;
	}
	stack[sp++] = (struct item){ a->root_ptr, 0, MD_FILE(n->off + 0x270) };
	while (sp) {
		struct item it = stack[--sp];
		if ((e = need_md(d, it.off, AABB_ENTRY_SIZE, "aabb entry", it.from)))
			goto out;
		if (bit_test_set(d->seen_aabb, it.off)) {
			e = corrupt(d, it.from, "aabb entry", "aabb tree entry reached twice (cycle or shared subtree)");
			goto out;
		}
		if (it.depth > MAX_DEPTH) {
			e = corrupt(d, MD_FILE(it.off), "aabb entry", "aabb tree deeper than 512 levels");
			goto out;
		}
		void *q = ents;
		if (!lfs_grow(&q, &ecap, count + 1, sizeof(*ents))) {
			e = NOMEM(d);
			goto out;
		}
		ents = q;
		nwn_aabb_entry *x = &ents[count++];
		x->off = it.off;
		mdfv(d, it.off, x->bmin, 3);
		mdfv(d, it.off + 12, x->bmax, 3);
		x->left_ptr = md32(d, it.off + 24);
		x->right_ptr = md32(d, it.off + 28);
		x->leaf_face = (int32_t)md32(d, it.off + 32);
		x->plane = md32(d, it.off + 36);
		x->depth = it.depth;
		if (x->leaf_face < -1 || (x->leaf_face >= 0 && (uint32_t)x->leaf_face >= n->mesh->n_faces)) {
			e = lfs_fail(d->err, LFS_ERR_CORRUPT, MD_FILE(it.off + 32), "aabb entry",
				     "leaf face %d of node '%s' is not one of its %u faces", x->leaf_face,
				     n->name, n->mesh->n_faces);
			goto out;
		}
		q = stack;
		if (!lfs_grow(&q, &cap, sp + 2, sizeof(*stack))) {
			e = NOMEM(d);
			goto out;
		}
		stack = q;
		/* push right first so left is visited first */
		if (x->right_ptr)
			stack[sp++] = (struct item){ x->right_ptr, (uint16_t)(it.depth + 1), MD_FILE(it.off + 28) };
		if (x->left_ptr)
			stack[sp++] = (struct item){ x->left_ptr, (uint16_t)(it.depth + 1), MD_FILE(it.off + 24) };
	}
	a->entries = alloc(d, count, sizeof(*ents));
	if (!a->entries) {
		e = NOMEM(d);
		goto out;
	}
	memcpy(a->entries, ents, count * sizeof(*ents));
	a->n_entries = (uint32_t)count;
out:
	free(stack);
	free(ents);
	return e;
}

/* The part of kind @p fk of node @p n (light, emitter, reference): @p size
 * bytes at the node (named @p what), a new struct of @p esz bytes in *@p out
 * with its nwn_fields.def fields read. */
static lfs_err decode_part(dec *d, const nwn_node *n, nwn_field_kind fk, uint32_t size, size_t esz,
			   const char *what, void **out)
{
	lfs_err e = need_md(d, n->off, size, what, MD_FILE(n->off));
	if (e)
		return e;
	void *p = alloc(d, 1, esz);
	if (!p)
		return NOMEM(d);
	read_fields(d, fk, n->off, p);
	*out = p;
	return LFS_OK;
}

static lfs_err decode_light(dec *d, nwn_node *n)
{
	uint32_t o = n->off;
	void *part = NULL;
	lfs_err e =
		decode_part(d, n, NWN_FK_LIGHT, LIGHT_SIZE, sizeof(nwn_light), "light node", &part);
	if (e)
		return e;
	nwn_light *l = n->light = part;
	read_array(d, o + 0x74, &l->unknown_arr);
	read_array(d, o + 0x80, &l->sizes_arr);
	read_array(d, o + 0x8C, &l->positions_arr);
	read_array(d, o + 0x98, &l->colorshifts_arr);
	read_array(d, o + 0xA4, &l->texnames_arr);
	if ((e = md_floats(d, &l->sizes_arr, 1, o + 0x80, "light flare sizes", &l->flare_sizes)) ||
	    (e = md_floats(d, &l->positions_arr, 1, o + 0x8C, "light flare positions", &l->flare_positions)) ||
	    (e = md_floats(d, &l->colorshifts_arr, 3, o + 0x98, "light flare color shifts",
			   &l->flare_colorshifts)) ||
	    (e = check_array(d, &l->texnames_arr, 4, o + 0xA4, "light flare texture names")))
		return e;
	if (l->texnames_arr.count) {
		l->flare_textures = alloc(d, l->texnames_arr.count, sizeof(char *));
		if (!l->flare_textures)
			return NOMEM(d);
		for (uint32_t i = 0; i < l->texnames_arr.count; i++) {
			uint32_t p = md32(d, l->texnames_arr.off + 4 * i);
			size_t len = 0;
			while (len < 256 && lfs_rd_has(&d->md, p, len + 1) && d->md.p[p + len])
				len++;
			if (!lfs_rd_has(&d->md, p, len + 1) || len == 256)
				return lfs_fail(d->err, LFS_ERR_CORRUPT, MD_FILE(l->texnames_arr.off + 4 * i),
						"light flare texture name",
						"name at model offset 0x%x is not a terminated string", p);
			char *s = alloc(d, len + 1, 1);
			if (!s)
				return NOMEM(d);
			memcpy(s, d->md.p + p, len);
			l->flare_textures[i] = s;
		}
	}
	return LFS_OK;
}

static lfs_err decode_emitter(dec *d, nwn_node *n)
{
	uint32_t o = n->off;
	void *part = NULL;
	lfs_err e = decode_part(d, n, NWN_FK_EMITTER, EMITTER_SIZE, sizeof(nwn_emitter),
				"emitter node", &part);
	if (e)
		return e;
	nwn_emitter *m = n->emitter = part;
	m->pad = md16(d, o + 0x142);
	m->flags = md32(d, o + 0x144);
	return LFS_OK;
}

static lfs_err decode_reference(dec *d, nwn_node *n)
{
	void *part = NULL;
	lfs_err e = decode_part(d, n, NWN_FK_REF, REFERENCE_SIZE, sizeof(nwn_reference),
				"reference node", &part);
	if (!e)
		n->ref = part;
	return e;
}

/* ------------------------------------------------------------------ nodes */

typedef struct node_vec {
	nwn_node *v;
	uint32_t n, cap;
} node_vec;

static bool known_type(uint32_t f)
{
	switch (f) {
	case NWN_DUMMY: case NWN_LIGHT: case NWN_EMITTER: case NWN_REFERENCE:
	case NWN_TRIMESH: case NWN_SKIN: case NWN_ANIMMESH: case NWN_DANGLYMESH:
	case NWN_AABB:
		return true;
	}
	return false;
}

static lfs_err decode_node(dec *d, node_vec *nv, uint32_t off, int32_t parent, uint32_t depth, size_t from)
{
	lfs_err e = need_md(d, off, NODE_HDR_SIZE, "node header", from);
	if (e)
		return e;
	if (depth > MAX_DEPTH)
		return corrupt(d, from, "node header", "node tree deeper than 512 levels");
	if (bit_test_set(d->seen, off))
		return corrupt(d, from, "node header",
			       "node reached twice (pointer cycle or node shared by two parents)");
	/* nodes are at least 0x70 bytes apart, so this is bounded by the file */
	if (!lfs_grow32((void **)&nv->v, &nv->cap, nv->n + 1, sizeof(*nv->v)))
		return NOMEM(d);
	uint32_t idx = nv->n++;
	nwn_node *n = &nv->v[idx];
	memset(n, 0, sizeof(*n));
	n->off = off;
	for (int i = 0; i < 6; i++)
		n->fn[i] = md32(d, off + 4 * i);
	read_fields(d, NWN_FK_NODE, off, n);
	n->part_number = (int32_t)md32(d, off + 0x1C);
	mdstr(d, off + 0x20, 32, n->name);
	n->geom_ptr = md32(d, off + 0x40);
	n->parent_ptr = md32(d, off + 0x44);
	read_array(d, off + 0x48, &n->children_arr);
	read_array(d, off + 0x54, &n->ctrl_arr);
	read_array(d, off + 0x60, &n->ctrl_data_arr);
	n->flags = md32(d, off + 0x6C);
	n->parent = parent;
	n->depth = depth;
	if (!known_type(n->flags))
		return lfs_fail(d->err, LFS_ERR_CORRUPT, MD_FILE(off + 0x6C), "node header",
				"node '%s' has unknown flag combination 0x%x", n->name, n->flags);

	if ((e = decode_controllers(d, n)))
		return e;
	if (n->flags & NWN_HAS_MESH)
		e = decode_mesh(d, n);
	else if (n->flags & NWN_HAS_LIGHT)
		e = decode_light(d, n);
	else if (n->flags & NWN_HAS_EMITTER)
		e = decode_emitter(d, n);
	else if (n->flags & NWN_HAS_REFERENCE)
		e = decode_reference(d, n);
	if (e)
		return e;
	if (n->flags & NWN_HAS_AABB && (e = decode_aabb(d, n)))
		return e;

	nwn_array ch = n->children_arr;
	if ((e = check_array(d, &ch, 4, off + 0x48, "node children array")))
		return e;
	if (ch.count) {
		uint32_t *kids = alloc(d, ch.count, 4);
		if (!kids)
			return NOMEM(d);
		/* n may move when nv grows: index through nv->v[idx] from here on */
		nv->v[idx].children = kids;
		nv->v[idx].n_children = ch.count;
		for (uint32_t i = 0; i < ch.count; i++) {
			uint32_t child = md32(d, ch.off + 4 * i);
			kids[i] = nv->n;
			if ((e = decode_node(d, nv, child, (int32_t)idx, depth + 1, MD_FILE(ch.off + 4 * i))))
				return e;
		}
	}
	return LFS_OK;
}

static lfs_err decode_geometry(dec *d, uint32_t off, nwn_geometry *g, uint8_t want_type, const char *what,
			       size_t from)
{
	lfs_err e = need_md(d, off, GEOM_HDR_SIZE, what, from);
	if (e)
		return e;
	g->off = off;
	g->fn[0] = md32(d, off);
	g->fn[1] = md32(d, off + 4);
	mdstr(d, off + 8, 64, g->name);
	g->root_ptr = md32(d, off + 0x48);
	g->node_count_field = md32(d, off + 0x4C);
	read_array(d, off + 0x50, &g->rt1_arr);
	read_array(d, off + 0x5C, &g->rt2_arr);
	g->ref_count = md32(d, off + 0x68);
	g->geom_type = md8(d, off + 0x6C);
	if ((g->geom_type & 0x7F) != want_type)
		return lfs_fail(d->err, LFS_ERR_CORRUPT, MD_FILE(off + 0x6C), what,
				"geometry type %u, expected %u", g->geom_type, want_type);
	if (g->root_ptr == 0)
		return LFS_OK; /* empty geometry */
	node_vec nv = { 0 };
	e = decode_node(d, &nv, g->root_ptr, -1, 0, MD_FILE(off + 0x48));
	if (!e && nv.n) {
		g->nodes = alloc(d, nv.n, sizeof(nwn_node));
		if (!g->nodes)
			e = NOMEM(d);
		else {
			memcpy(g->nodes, nv.v, (size_t)nv.n * sizeof(nwn_node));
			g->n_nodes = nv.n;
		}
	}
	free(nv.v);
	return e;
}

static lfs_err decode_anim(dec *d, uint32_t off, nwn_anim *a, size_t from)
{
	lfs_err e = need_md(d, off, ANIM_HDR_SIZE, "animation header", from);
	if (e)
		return e;
	read_fields(d, NWN_FK_ANIM, off, a);
	read_array(d, off + 0xB8, &a->events_arr);
	if ((e = check_array(d, &a->events_arr, EVENT_SIZE, off + 0xB8, "animation event array")))
		return e;
	a->n_events = a->events_arr.count;
	if (a->n_events) {
		a->events = alloc(d, a->n_events, sizeof(*a->events));
		if (!a->events)
			return NOMEM(d);
		for (uint32_t i = 0; i < a->n_events; i++) {
			uint32_t eo = a->events_arr.off + i * EVENT_SIZE;
			a->events[i].after = mdf(d, eo);
			mdstr(d, eo + 4, 32, a->events[i].name);
		}
	}
	return decode_geometry(d, off, &a->geom, 5, "animation geometry header", from);
}

/* ------------------------------------------------------------------- API */

bool nwn_mdl_is_binary(const uint8_t *data, size_t n)
{
	lfs_rd f = { data, n };
	uint32_t z, a, b;
	if (!lfs_rd_u32(&f, 0, &z) || !lfs_rd_u32(&f, 4, &a) || !lfs_rd_u32(&f, 8, &b))
		return false;
	return z == 0 && 12 + (uint64_t)a + b == n;
}

void nwn_model_free(nwn_model *m)
{
	if (!m)
		return;
	model_box *box = (model_box *)(void *)((char *)m - offsetof(model_box, model));
	free(m->image);
	lfs_arena_free(&box->arena);
	free(box);
}

static lfs_err decode_model(const uint8_t *data, size_t n, bool keep_image, nwn_model **out,
			    lfs_error *err);

lfs_err nwn_mdl_decode(const uint8_t *data, size_t n, nwn_model **out, lfs_error *err)
{
	return decode_model(data, n, true, out, err);
}

lfs_err nwn_mdl_decode_noimage(const uint8_t *data, size_t n, nwn_model **out, lfs_error *err)
{
	return decode_model(data, n, false, out, err);
}

static lfs_err decode_model(const uint8_t *data, size_t n, bool keep_image, nwn_model **out,
			    lfs_error *err)
{
	*out = NULL;
	lfs_rd f = { data, n };
	uint32_t z, a, b;
	if (!lfs_rd_u32(&f, 0, &z) || !lfs_rd_u32(&f, 4, &a) || !lfs_rd_u32(&f, 8, &b))
		return lfs_fail(err, LFS_ERR_NOTFORMAT, 0, "file header", "file shorter than 12 bytes");
	if (z != 0)
		return lfs_fail(err, LFS_ERR_NOTFORMAT, 0, "file header",
				"first word is not 0 (ASCII model or another game's format)");
	if (12 + (uint64_t)a + b != n)
		return lfs_fail(err, LFS_ERR_NOTFORMAT, 4, "file header",
				"12 + model size %u + raw size %u != file size %zu", a, b, n);
	if (a < MODEL_HDR_SIZE)
		return lfs_fail(err, LFS_ERR_CORRUPT, 12, "model header",
				"model data of %u bytes cannot hold the %u-byte model header", a,
				MODEL_HDR_SIZE);

	model_box *box = calloc(1, sizeof(*box));
	if (!box)
		return lfs_nomem(err, NULL);
	nwn_model *m = &box->model;
	dec d = {
		.md = { data + 12, a },
		.raw = { data + 12 + a, b },
		.raw_base = 12 + (size_t)a,
		.err = err,
		.box = box,
	};
	lfs_err e = LFS_OK;
	m->image = keep_image ? malloc(n ? n : 1) : NULL;
	d.seen = calloc((size_t)a / 8 + 1, 1);
	d.seen_aabb = calloc((size_t)a / 8 + 1, 1);
	if ((keep_image && !m->image) || !d.seen || !d.seen_aabb) {
		e = NOMEM(&d);
		goto fail;
	}
	if (keep_image) {
		memcpy(m->image, data, n);
		m->image_size = n;
	}
	m->model_size = a;
	m->raw_size = b;

	/* model header [T "The Model Header"] */
	m->classification = md8(&d, 0x72);
	m->fog = md8(&d, 0x73);
	read_array(&d, 0x78, &m->anims_arr);
	m->parent_model_ptr = md32(&d, 0x84);
	mdfv(&d, 0x88, m->bmin, 3);
	mdfv(&d, 0x94, m->bmax, 3);
	m->radius = mdf(&d, 0xA0);
	read_fields(&d, NWN_FK_MODEL, 0, m);
	mdstr(&d, 0xA8, 64, m->supermodel);

	if ((e = decode_geometry(&d, 0, &m->geom, 2, "model geometry header", 12)))
		goto fail;
	if ((e = check_array(&d, &m->anims_arr, 4, 0x78, "animation array")))
		goto fail;
	m->n_anims = m->anims_arr.count;
	if (m->n_anims) {
		m->anims = alloc(&d, m->n_anims, sizeof(*m->anims));
		if (!m->anims) {
			e = NOMEM(&d);
			goto fail;
		}
		for (uint32_t i = 0; i < m->n_anims; i++) {
			uint32_t ao = md32(&d, m->anims_arr.off + 4 * i);
			if ((e = decode_anim(&d, ao, &m->anims[i], MD_FILE(m->anims_arr.off + 4 * i))))
				goto fail;
		}
	}
	free(d.seen);
	free(d.seen_aabb);
	*out = m;
	return LFS_OK;
fail:
	free(d.seen);
	free(d.seen_aabb);
	nwn_model_free(m);
	return e;
}
