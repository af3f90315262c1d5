/**
 * @file nwn_mdl_encode.c
 * NWN binary MDL encoder: fresh layout (see nwn_mdl_encode.h).
 *
 * Two growable buffers, model data and raw data, are filled in file order.
 * Each structure is reserved (zero-filled) first and its fields are written
 * once the positions of the things it points to are known — the same
 * "write, then rewrite the header" scheme the layout implies [T, N §3.5].
 */
#include "nwn_mdl_encode.h"
#include "nwn_fields.h"
#include "nwn_mdl_layout.h"

#include "../../common/mem.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 1024


typedef struct buf {
	uint8_t *p;
	size_t n, cap;
} buf;

typedef struct enc {
	buf md, raw;
	const nwn_model *m;
	const uint8_t *img;  /* image model data (file offset 12), NULL when not used */
	size_t img_n;        /* its size */
	lfs_error *err;
	uint8_t *visited;    /* per node of the geometry being written */
} enc;

/* ------------------------------------------------------------------ buffers */

/* Reserve @p size zero bytes at the end of @p b; offset in *at. */
static lfs_err reserve(enc *e, buf *b, size_t size, uint32_t *at)
{
	*at = 0;
	if (size > UINT32_MAX || b->n > UINT32_MAX - size)
		return lfs_fail(e->err, LFS_ERR_CORRUPT, SIZE_MAX, "model",
				"encoded model data would exceed 4 GiB");
	if (!lfs_grow((void **)&b->p, &b->cap, b->n + size, 1))
		return lfs_nomem(e->err, NULL);
	memset(b->p + b->n, 0, size);
	*at = (uint32_t)b->n;
	b->n += size;
	return LFS_OK;
}

static void w8(buf *b, uint32_t o, uint8_t v)
{
	b->p[o] = v;
}
static void w16(buf *b, uint32_t o, uint16_t v)
{
	b->p[o] = (uint8_t)v;
	b->p[o + 1] = (uint8_t)(v >> 8);
}
static void w32(buf *b, uint32_t o, uint32_t v)
{
	b->p[o] = (uint8_t)v;
	b->p[o + 1] = (uint8_t)(v >> 8);
	b->p[o + 2] = (uint8_t)(v >> 16);
	b->p[o + 3] = (uint8_t)(v >> 24);
}
/* Float bits as stored (keeps -0 and NaN payloads). */
static void wf(buf *b, uint32_t o, float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	w32(b, o, u);
}
static void wfv(buf *b, uint32_t o, const float *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		wf(b, (uint32_t)(o + 4 * i), v[i]);
}

/* Does the image hold the same NUL-terminated string @p s at model offset
 * @p src within a field of @p size bytes? Then the structure at @p src is
 * this one, unedited in that field, and its other bytes may be reused. */
static bool img_has_str(const enc *e, uint32_t src, const char *s, size_t size)
{
	if (!e->img || (size_t)src + size > e->img_n)
		return false;
	size_t len = strnlen(s, size);
	if (len >= size)
		return memcmp(e->img + src, s, size) == 0;
	return memcmp(e->img + src, s, len) == 0 && e->img[src + len] == 0;
}

/* Fixed-size string field: the string, then zeros or (when the image holds
 * the same string at @p src) the image's bytes after the NUL. */
static void wstr(enc *e, buf *b, uint32_t o, const char *s, size_t size, uint32_t src, bool use_src)
{
	size_t len = strnlen(s, size);
	memcpy(b->p + o, s, len);
	if (use_src && len + 1 < size && img_has_str(e, src, s, size))
		memcpy(b->p + o + len + 1, e->img + src + len + 1, size - len - 1);
}

/* The scalar fields of part @p kind (nwn_fields.def) of @p obj at offset
 * @p o of @p b; string tails come from the image at @p src + offset when
 * @p same (see wstr). */
static void write_fields(enc *e, buf *b, nwn_field_kind kind, uint32_t o, uint32_t src, bool same,
			 const void *obj)
{
	for (size_t i = 0; i < nwn_n_fields; i++) {
		const nwn_field *f = &nwn_fields[i];
		if (f->kind != kind || (f->flags & NWN_FF_ALIAS) || f->type == NWN_FT_EFLAG)
			continue;
		const void *p = (const char *)obj + f->moff;
		uint32_t at = o + f->off;
		switch ((nwn_field_type)f->type) {
		case NWN_FT_F32: {
			float v;
			memcpy(&v, p, sizeof(v));
			wf(b, at, v);
			break;
		}
		case NWN_FT_F32X3:
			wfv(b, at, p, 3);
			break;
		case NWN_FT_I32:
		case NWN_FT_RHINT: {
			uint32_t v;
			memcpy(&v, p, sizeof(v));
			w32(b, at, v);
			break;
		}
		case NWN_FT_U16: {
			uint16_t v;
			memcpy(&v, p, sizeof(v));
			w16(b, at, v);
			break;
		}
		case NWN_FT_U8:
			w8(b, at, *(const uint8_t *)p);
			break;
		case NWN_FT_STR:
			wstr(e, b, at, p, f->size, src + f->off, same);
			break;
		case NWN_FT_EFLAG:
			break;
		}
	}
}

/* Copy @p n pad bytes from the image at @p src when @p ok. */
static void wpad(enc *e, buf *b, uint32_t o, uint32_t src, size_t n, bool ok)
{
	if (ok && e->img && (size_t)src + n <= e->img_n)
		memcpy(b->p + o, e->img + src, n);
}

/* Array descriptor {offset, used, allocated} at @p at. */
static void warr(buf *b, uint32_t at, uint32_t pos, uint32_t count, const nwn_array *src)
{
	uint32_t off = count ? pos : (src && src->off ? pos : 0);
	uint32_t alloc = (src && src->count == count && src->alloc >= count) ? src->alloc : count;
	w32(b, at, off);
	w32(b, at + 4, count);
	w32(b, at + 8, alloc);
}

static uint32_t raw_absent(uint32_t stored)
{
	return stored == 0 ? 0 : RAW_NULL;
}

/* Raw array of @p n little-endian units of @p unit bytes (4: 32-bit words or
 * float bits, 2: halves) at @p data, or NULL -> pointer value. */
static lfs_err raw_units(enc *e, const void *data, size_t n, unsigned unit, uint32_t stored,
			 uint32_t *ptr)
{
	if (!data || n == 0) {
		*ptr = raw_absent(stored);
		return LFS_OK;
	}
	if (n > UINT32_MAX / unit)
		return lfs_fail(e->err, LFS_ERR_CORRUPT, SIZE_MAX, "raw data", "raw array too large");
	lfs_err r = reserve(e, &e->raw, n * unit, ptr);
	if (r)
		return r;
	for (size_t i = 0; i < n; i++) {
		uint32_t at = (uint32_t)(*ptr + unit * i);
		if (unit == 4)
			w32(&e->raw, at, ((const uint32_t *)data)[i]);
		else
			w16(&e->raw, at, ((const uint16_t *)data)[i]);
	}
	return LFS_OK;
}

/* Model-data float array; returns its position in *pos. */
static lfs_err md_floats(enc *e, const float *v, size_t n, uint32_t *pos)
{
	if (!v)
		n = 0;
	lfs_err r = reserve(e, &e->md, n * 4, pos);
	if (!r && n)
		wfv(&e->md, *pos, v, n);
	return r;
}

static lfs_err unsupported(enc *e, const nwn_node *n, const char *what)
{
	return lfs_fail(e->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "node",
			"node '%s': %s cannot be encoded (the decoded model does not keep its data)",
			n->name, what);
}

/* ------------------------------------------------------------------ parts */

static lfs_err light_texnames(enc *e, const nwn_light *l, uint32_t o)
{
	buf *b = &e->md;
	lfs_err r;
	uint32_t p = 0;
	uint32_t nt = l->flare_textures ? l->texnames_arr.count : 0;
	uint32_t tp;
	if ((r = reserve(e, b, (size_t)nt * 4, &tp)))
		return r;
	warr(b, o + 0xA4, tp, nt, &l->texnames_arr);
	for (uint32_t i = 0; i < nt; i++) {
		const char *s = l->flare_textures[i] ? l->flare_textures[i] : "";
		size_t len = strlen(s) + 1;
		if ((r = reserve(e, b, len, &p)))
			return r;
		memcpy(b->p + p, s, len);
		w32(b, tp + 4 * i, p);
	}
	return LFS_OK;
}

static lfs_err light_part(enc *e, const nwn_node *n, uint32_t o)
{
	const nwn_light *l = n->light;
	buf *b = &e->md;
	lfs_err r;
	uint32_t p;
	if (l->unknown_arr.count)
		return unsupported(e, n, "the light's unknown array");
	write_fields(e, b, NWN_FK_LIGHT, o, n->off, false, l);
	warr(b, o + 0x74, (uint32_t)b->n, 0, &l->unknown_arr);
	/* BioWare writes the flare texture names first, nwnmdlcomp last (NN
	 * NwnMdlSerialize.cpp); follow the source's order when it shows one. */
	bool tex_last = l->texnames_arr.count && l->sizes_arr.count &&
			l->texnames_arr.off > l->sizes_arr.off;
	if (!tex_last && (r = light_texnames(e, l, o)))
		return r;
	uint32_t ns = l->flare_sizes ? l->sizes_arr.count : 0;
	if ((r = md_floats(e, l->flare_sizes, ns, &p)))
		return r;
	warr(b, o + 0x80, p, ns, &l->sizes_arr);
	uint32_t np = l->flare_positions ? l->positions_arr.count : 0;
	if ((r = md_floats(e, l->flare_positions, np, &p)))
		return r;
	warr(b, o + 0x8C, p, np, &l->positions_arr);
	uint32_t nc = l->flare_colorshifts ? l->colorshifts_arr.count : 0;
	if (nc > UINT32_MAX / 3)
		return unsupported(e, n, "a flare colour-shift list this long");
	if ((r = md_floats(e, l->flare_colorshifts, (size_t)nc * 3, &p)))
		return r;
	warr(b, o + 0x98, p, nc, &l->colorshifts_arr);
	if (tex_last && (r = light_texnames(e, l, o)))
		return r;
	return LFS_OK;
}

static void emitter_part(enc *e, const nwn_node *n, uint32_t o, bool same)
{
	const nwn_emitter *m = n->emitter;
	buf *b = &e->md;
	write_fields(e, b, NWN_FK_EMITTER, o, n->off, same, m);
	w16(b, o + 0x142, m->pad);
	w32(b, o + 0x144, m->flags);
}

/* AABB tree: entries in depth-first pre-order; children found by depth. */
static lfs_err aabb_tree(enc *e, const nwn_node *n, uint32_t o)
{
	const nwn_aabb *a = n->mesh->aabb;
	buf *b = &e->md;
	if (!a->entries || a->n_entries == 0) {
		w32(b, o + 0x270, a->root_ptr ? (uint32_t)b->n : 0);
		return LFS_OK;
	}
	uint32_t base;
	lfs_err r = reserve(e, b, (size_t)a->n_entries * AABB_ENTRY_SIZE, &base);
	if (r)
		return r;
	w32(b, o + 0x270, base);
	for (uint32_t i = 0; i < a->n_entries; i++) {
		const nwn_aabb_entry *x = &a->entries[i];
		uint32_t eo = base + i * AABB_ENTRY_SIZE;
		uint32_t left = 0, right = 0;
		/* children: the next entries one level deeper, before the subtree ends */
		int found = 0;
		for (uint32_t j = i + 1; j < a->n_entries && a->entries[j].depth > x->depth; j++) {
			if (a->entries[j].depth != x->depth + 1)
				continue;
			if (found == 0)
				left = base + j * AABB_ENTRY_SIZE;
			else if (found == 1)
				right = base + j * AABB_ENTRY_SIZE;
			found++;
		}
		wfv(b, eo, x->bmin, 3);
		wfv(b, eo + 12, x->bmax, 3);
		w32(b, eo + 24, left);
		w32(b, eo + 28, right);
		w32(b, eo + 32, (uint32_t)x->leaf_face);
		w32(b, eo + 36, x->plane);
	}
	return LFS_OK;
}

static lfs_err skin_part(enc *e, const nwn_node *n, uint32_t o)
{
	const nwn_mesh *me = n->mesh;
	const nwn_skin *s = me->skin;
	buf *b = &e->md;
	lfs_err r;
	uint32_t p;
	if (s->weights_arr.count)
		return unsupported(e, n, "the skin's compile-time weights array");
	warr(b, o + 0x270, (uint32_t)b->n, 0, &s->weights_arr);
	/* node-to-bone map */
	uint32_t nb = s->node_to_bone ? s->node_to_bone_count : 0;
	if ((r = reserve(e, b, (size_t)nb * 2, &p)))
		return r;
	for (uint32_t i = 0; i < nb; i++)
		w16(b, p + 2 * i, (uint16_t)s->node_to_bone[i]);
	w32(b, o + 0x284,
	    nb ? p : (s->node_to_bone_ptr == 0 || s->node_to_bone_ptr == RAW_NULL ? s->node_to_bone_ptr : p));
	w32(b, o + 0x288, s->node_to_bone ? s->node_to_bone_count : 0);
	uint32_t nq = s->qbone_ref_inv ? s->qbone_arr.count : 0;
	if ((r = md_floats(e, s->qbone_ref_inv, (size_t)nq * 4, &p)))
		return r;
	warr(b, o + 0x28C, p, nq, &s->qbone_arr);
	uint32_t nt = s->tbone_ref_inv ? s->tbone_arr.count : 0;
	if ((r = md_floats(e, s->tbone_ref_inv, (size_t)nt * 3, &p)))
		return r;
	warr(b, o + 0x298, p, nt, &s->tbone_arr);
	uint32_t nc = s->const_indices ? s->const_idx_arr.count : 0;
	if ((r = reserve(e, b, (size_t)nc * 4, &p)))
		return r;
	for (uint32_t i = 0; i < nc; i++)
		w32(b, p + 4 * i, s->const_indices[i]);
	warr(b, o + 0x2A4, p, nc, &s->const_idx_arr);
	for (int i = 0; i < NWN_SKIN_BONES; i++) /* slot 17 at +0x2D2 */
		w16(b, o + 0x2B0 + 2 * (uint32_t)i, (uint16_t)s->bone_node_numbers[i]);
	/* raw: weights then bone refs, before the mesh's own raw arrays */
	uint32_t wp, bp;
	if ((r = raw_units(e, s->weights, (size_t)me->n_verts * 4, 4, s->weights_raw, &wp)) ||
	    (r = raw_units(e, s->bonerefs, (size_t)me->n_verts * 4, 2, s->bonerefs_raw, &bp)))
		return r;
	w32(b, o + 0x27C, wp);
	w32(b, o + 0x280, bp);
	return LFS_OK;
}

static lfs_err animmesh_part(enc *e, const nwn_node *n, uint32_t o)
{
	const nwn_mesh *me = n->mesh;
	const nwn_animmesh *a = me->anim;
	buf *b = &e->md;
	lfs_err r;
	uint32_t p;
	if (a->anim_verts_arr.count || a->anim_tverts_arr.count || a->anim_normals_arr.count)
		return unsupported(e, n, "the animmesh compile-time arrays");
	write_fields(e, b, NWN_FK_ANIMMESH, o, n->off, false, a);
	warr(b, o + 0x274, (uint32_t)b->n, 0, &a->anim_verts_arr);
	warr(b, o + 0x280, (uint32_t)b->n, 0, &a->anim_tverts_arr);
	warr(b, o + 0x28C, (uint32_t)b->n, 0, &a->anim_normals_arr);
	size_t nv = a->anim_verts ? (size_t)a->n_vert_sets * me->n_verts * 3 : 0;
	if ((r = md_floats(e, a->anim_verts, nv, &p)))
		return r;
	w32(b, o + 0x298, nv ? p : a->anim_verts_ptr);
	size_t nt = a->anim_tverts ? (size_t)a->n_tvert_sets * me->n_verts * 2 : 0;
	if ((r = md_floats(e, a->anim_tverts, nt, &p)))
		return r;
	w32(b, o + 0x29C, nt ? p : a->anim_tverts_ptr);
	w32(b, o + 0x2A0, a->n_vert_sets);
	w32(b, o + 0x2A4, a->n_tvert_sets);
	return LFS_OK;
}

static lfs_err mesh_part(enc *e, const nwn_node *n, uint32_t o, bool same)
{
	const nwn_mesh *me = n->mesh;
	buf *b = &e->md;
	lfs_err r;
	uint32_t p;
	if (me->leftover_arr.count)
		return unsupported(e, n, "a left-over face list");
	if (me->vindex_offset_arr.count > 1 || me->vindex_count_arr.count > 1)
		return unsupported(e, n, "more than one vertex index list");
	if (me->n_verts)
		for (int t = 0; t < 6; t++)
			if (me->texanim_raw[t] != RAW_NULL && me->texanim_raw[t] != 0)
				return unsupported(e, n, "bump-map (texture animation) data");

	/* type-specific model data comes first */
	if (me->skin && (r = skin_part(e, n, o)))
		return r;
	if (me->dangly) {
		const nwn_dangly *d = me->dangly;
		uint32_t nc = d->constraints ? d->constraints_arr.count : 0;
		if ((r = md_floats(e, d->constraints, nc, &p)))
			return r;
		warr(b, o + 0x270, p, nc, &d->constraints_arr);
		write_fields(e, b, NWN_FK_DANGLY, o, n->off, false, d);
	}
	if (me->aabb && (r = aabb_tree(e, n, o)))
		return r;
	if (me->anim && (r = animmesh_part(e, n, o)))
		return r;

	w32(b, o + 0x70, me->fn[0]);
	w32(b, o + 0x74, me->fn[1]);
	/* faces */
	uint32_t nf = me->faces ? me->n_faces : 0;
	if ((r = reserve(e, b, (size_t)nf * FACE_SIZE, &p)))
		return r;
	warr(b, o + 0x78, p, nf, &me->faces_arr);
	for (uint32_t i = 0; i < nf; i++) {
		const nwn_face *f = &me->faces[i];
		uint32_t fo = p + i * FACE_SIZE;
		wfv(b, fo, f->plane_normal, 3);
		wf(b, fo + 12, f->plane_distance);
		w32(b, fo + 16, f->surface_id);
		for (uint32_t k = 0; k < 3; k++) {
			w16(b, fo + 20 + 2 * k, (uint16_t)f->adjacent[k]);
			w16(b, fo + 26 + 2 * k, f->v[k]);
		}
	}
	wfv(b, o + 0x84, me->bmin, 3);
	wfv(b, o + 0x90, me->bmax, 3);
	wf(b, o + 0x9C, me->radius);
	wfv(b, o + 0xA0, me->average, 3);
	write_fields(e, b, NWN_FK_MESH, o, n->off, same, me);
	/* runtime vertex-index array: no data is kept for it */
	if (me->vindex_arr.count) {
		w32(b, o + 0x1EC, me->vindex_arr.off);
		w32(b, o + 0x1F0, me->vindex_arr.count);
		w32(b, o + 0x1F4, me->vindex_arr.alloc);
	} else {
		warr(b, o + 0x1EC, (uint32_t)b->n, 0, &me->vindex_arr);
	}
	warr(b, o + 0x1F8, (uint32_t)b->n, 0, &me->leftover_arr);
	/* vertex index counts */
	uint32_t ncnt = me->vindex_counts ? me->vindex_count_arr.count : 0;
	if ((r = reserve(e, b, (size_t)ncnt * 4, &p)))
		return r;
	for (uint32_t i = 0; i < ncnt; i++)
		w32(b, p + 4 * i, me->vindex_counts[i]);
	warr(b, o + 0x204, p, ncnt, &me->vindex_count_arr);

	/* raw arrays of this mesh */
	size_t nv = me->n_verts;
	uint32_t rp;
	if ((r = raw_units(e, nv ? me->verts : NULL, nv * 3, 4, me->verts_raw, &rp)))
		return r;
	w32(b, o + 0x22C, rp);
	for (uint32_t t = 0; t < 4; t++) {
		if ((r = raw_units(e, nv ? me->tverts[t] : NULL, nv * 2, 4, me->tverts_raw[t],
				   &rp)))
			return r;
		w32(b, o + 0x234 + 4 * t, rp);
	}
	if ((r = raw_units(e, nv ? me->normals : NULL, nv * 3, 4, me->normals_raw, &rp)))
		return r;
	w32(b, o + 0x244, rp);
	if ((r = raw_units(e, nv ? me->colors : NULL, nv, 4, me->colors_raw, &rp)))
		return r;
	w32(b, o + 0x248, rp);
	for (uint32_t t = 0; t < 6; t++)
		w32(b, o + 0x24C + 4 * t, me->texanim_raw[t]);

	/* vertex index offsets (model data) -> index list (raw) */
	uint32_t noff = me->vindex_offsets ? me->vindex_offset_arr.count : 0;
	if ((r = reserve(e, b, (size_t)noff * 4, &p)))
		return r;
	warr(b, o + 0x210, p, noff, &me->vindex_offset_arr);
	if (noff) {
		uint32_t lp;
		size_t nidx = me->vindices ? me->n_vindices : 0;
		if ((r = raw_units(e, me->vindices, nidx, 2, me->vindex_offsets[0], &lp)))
			return r;
		if (!nidx)
			lp = me->vindex_offsets[0] == RAW_NULL ? RAW_NULL : (uint32_t)e->raw.n;
		w32(b, p, lp);
	}

	w32(b, o + 0x21C, me->strip_raw);
	w32(b, o + 0x220, me->strip_count);
	w8(b, o + 0x224, me->triangle_mode);
	wpad(e, b, o + 0x225, n->off + 0x225, 3, same);
	w32(b, o + 0x228, me->compile_ptr);
	w16(b, o + 0x230, me->n_verts);
	w16(b, o + 0x232, me->n_textures);
	wpad(e, b, o + 0x266, n->off + 0x266, 2, same);
	wf(b, o + 0x268, me->area);
	return LFS_OK;
}

/* ------------------------------------------------------------------ nodes */

static lfs_err write_node(enc *e, const nwn_geometry *g, uint32_t idx, uint32_t depth, uint32_t geom_off,
			  uint32_t parent_off, uint32_t *at)
{
	const nwn_node *n = &g->nodes[idx];
	if (depth > MAX_DEPTH)
		return lfs_fail(e->err, LFS_ERR_CORRUPT, SIZE_MAX, "node", "node tree deeper than %d levels",
				MAX_DEPTH);
	if (e->visited[idx])
		return lfs_fail(e->err, LFS_ERR_CORRUPT, SIZE_MAX, "node",
				"node '%s' is reached twice in the tree", n->name);
	e->visited[idx] = 1;
	uint32_t size = nwn_node_size(n->flags);
	if (!size)
		return lfs_fail(e->err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "node",
				"node '%s' has unknown flag combination 0x%x", n->name, n->flags);
	bool want_mesh = (n->flags & NWN_HAS_MESH) != 0;
	if ((want_mesh && !n->mesh) || (n->flags == NWN_LIGHT && !n->light) ||
	    (n->flags == NWN_EMITTER && !n->emitter) || (n->flags == NWN_REFERENCE && !n->ref) ||
	    (n->flags == NWN_SKIN && !n->mesh->skin) || (n->flags == NWN_DANGLYMESH && !n->mesh->dangly) ||
	    (n->flags == NWN_AABB && !n->mesh->aabb) || (n->flags == NWN_ANIMMESH && !n->mesh->anim))
		return lfs_fail(e->err, LFS_ERR_CORRUPT, SIZE_MAX, "node",
				"node '%s' (flags 0x%x) lacks its type part", n->name, n->flags);

	buf *b = &e->md;
	uint32_t o;
	lfs_err r = reserve(e, b, size, &o);
	if (r)
		return r;
	*at = o;
	/* the node at its recorded offset in the image is this one (unedited name) */
	bool same = img_has_str(e, n->off + 0x20, n->name, 32);

	if (n->light && (r = light_part(e, n, o)))
		return r;
	if (n->emitter)
		emitter_part(e, n, o, same);
	if (n->ref) {
		write_fields(e, b, NWN_FK_REF, o, n->off, same, n->ref);
	}
	if (n->mesh && (r = mesh_part(e, n, o, same)))
		return r;

	/* children pointer array, then the subtrees */
	uint32_t nch = n->children ? n->n_children : 0;
	uint32_t cp;
	if ((r = reserve(e, b, (size_t)nch * 4, &cp)))
		return r;
	warr(b, o + 0x48, cp, nch, &n->children_arr);
	for (uint32_t i = 0; i < nch; i++) {
		uint32_t c = n->children[i];
		if (c >= g->n_nodes)
			return lfs_fail(e->err, LFS_ERR_CORRUPT, SIZE_MAX, "node",
					"node '%s' has child index %u of %u nodes", n->name, c, g->n_nodes);
		uint32_t co;
		if ((r = write_node(e, g, c, depth + 1, geom_off, o, &co)))
			return r;
		w32(b, cp + 4 * i, co);
	}
	/* controller keys and data */
	uint32_t nk = n->ctrls ? n->n_ctrls : 0;
	uint32_t kp;
	if ((r = reserve(e, b, (size_t)nk * CTRL_KEY_SIZE, &kp)))
		return r;
	warr(b, o + 0x54, kp, nk, &n->ctrl_arr);
	for (uint32_t i = 0; i < nk; i++) {
		const nwn_controller *c = &n->ctrls[i];
		uint32_t ko = kp + i * CTRL_KEY_SIZE;
		w32(b, ko, c->type);
		w16(b, ko + 4, c->rows);
		w16(b, ko + 6, c->key_offset);
		w16(b, ko + 8, c->data_offset);
		w8(b, ko + 10, c->columns);
		w8(b, ko + 11, c->pad);
	}
	uint32_t nd = n->ctrl_data ? n->n_ctrl_data : 0;
	uint32_t dp;
	if ((r = md_floats(e, n->ctrl_data, nd, &dp)))
		return r;
	warr(b, o + 0x60, dp, nd, &n->ctrl_data_arr);

	/* node header */
	for (uint32_t i = 0; i < 6; i++)
		w32(b, o + 4 * i, n->fn[i]);
	write_fields(e, b, NWN_FK_NODE, o, n->off, same, n);
	w32(b, o + 0x1C, (uint32_t)n->part_number);
	wstr(e, b, o + 0x20, n->name, 32, n->off + 0x20, same);
	w32(b, o + 0x40, n->geom_ptr ? geom_off : 0);
	w32(b, o + 0x44, n->parent_ptr ? parent_off : 0);
	w32(b, o + 0x6C, n->flags);
	return LFS_OK;
}

/* Geometry header (first 0x70 bytes of a model or animation header). */
static lfs_err write_geometry(enc *e, const nwn_geometry *g, uint32_t o)
{
	buf *b = &e->md;
	bool same = img_has_str(e, g->off + 8, g->name, 64);
	w32(b, o, g->fn[0]);
	w32(b, o + 4, g->fn[1]);
	wstr(e, b, o + 8, g->name, 64, g->off + 8, same);
	w32(b, o + 0x4C, g->node_count_field);
	w32(b, o + 0x50, g->rt1_arr.off);
	w32(b, o + 0x54, g->rt1_arr.count);
	w32(b, o + 0x58, g->rt1_arr.alloc);
	w32(b, o + 0x5C, g->rt2_arr.off);
	w32(b, o + 0x60, g->rt2_arr.count);
	w32(b, o + 0x64, g->rt2_arr.alloc);
	w32(b, o + 0x68, g->ref_count);
	w8(b, o + 0x6C, g->geom_type);
	wpad(e, b, o + 0x6D, g->off + 0x6D, 3, same);
	if (!g->nodes || g->n_nodes == 0) {
		w32(b, o + 0x48, g->root_ptr ? (uint32_t)b->n : 0);
		return LFS_OK;
	}
	free(e->visited);
	e->visited = calloc(g->n_nodes, 1);
	if (!e->visited)
		return lfs_nomem(e->err, NULL);
	uint32_t root;
	lfs_err r = write_node(e, g, 0, 0, o, 0, &root);
	if (r)
		return r;
	w32(b, o + 0x48, root);
	return LFS_OK;
}

static lfs_err write_anim(enc *e, const nwn_anim *a, uint32_t o)
{
	buf *b = &e->md;
	bool same = img_has_str(e, a->geom.off + 8, a->geom.name, 64);
	write_fields(e, b, NWN_FK_ANIM, o, a->geom.off, same, a);
	uint32_t ne = a->events ? a->n_events : 0;
	uint32_t p;
	lfs_err r = reserve(e, b, (size_t)ne * EVENT_SIZE, &p);
	if (r)
		return r;
	warr(b, o + 0xB8, p, ne, &a->events_arr);
	for (uint32_t i = 0; i < ne; i++) {
		uint32_t eo = p + i * EVENT_SIZE;
		uint32_t src = a->events_arr.off + i * EVENT_SIZE;
		wf(b, eo, a->events[i].after);
		wstr(e, b, eo + 4, a->events[i].name, 32, src + 4,
		     same && i < a->events_arr.count);
	}
	return write_geometry(e, &a->geom, o);
}

lfs_err nwn_mdl_encode_ex(const nwn_model *m, unsigned flags, uint8_t **out, size_t *n, lfs_error *err)
{
	*out = NULL;
	*n = 0;
	enc e = { .m = m, .err = err };
	if (!(flags & NWN_ENC_NO_IMAGE_BYTES) && m->image && m->image_size >= 12 &&
	    m->image_size - 12 >= m->model_size) {
		e.img = m->image + 12;
		e.img_n = m->model_size;
	}
	buf *b = &e.md;
	uint32_t o, p;
	lfs_err r = reserve(&e, b, MODEL_HDR_SIZE, &o);
	if (r)
		goto fail;
	bool same = img_has_str(&e, 8, m->geom.name, 64);
	w8(b, 0x72, m->classification);
	w8(b, 0x73, m->fog);
	w32(b, 0x84, m->parent_model_ptr);
	wfv(b, 0x88, m->bmin, 3);
	wfv(b, 0x94, m->bmax, 3);
	wf(b, 0xA0, m->radius);
	write_fields(&e, b, NWN_FK_MODEL, 0, 0, false, m);
	wstr(&e, b, 0xA8, m->supermodel, 64, 0xA8, same);

	uint32_t na = m->anims ? m->n_anims : 0;
	if ((r = reserve(&e, b, (size_t)na * 4, &p)))
		goto fail;
	warr(b, 0x78, p, na, &m->anims_arr);
	for (uint32_t i = 0; i < na; i++) {
		uint32_t ao;
		if ((r = reserve(&e, b, ANIM_HDR_SIZE, &ao)))
			goto fail;
		w32(b, p + 4 * i, ao);
		if ((r = write_anim(&e, &m->anims[i], ao)))
			goto fail;
	}
	if ((r = write_geometry(&e, &m->geom, 0)))
		goto fail;

	size_t total = 12 + e.md.n + e.raw.n;
	uint8_t *res = malloc(total);
	if (!res) {
		r = lfs_nomem(e.err, NULL);
		goto fail;
	}
	memset(res, 0, 4);
	res[4] = (uint8_t)e.md.n;
	res[5] = (uint8_t)(e.md.n >> 8);
	res[6] = (uint8_t)(e.md.n >> 16);
	res[7] = (uint8_t)(e.md.n >> 24);
	res[8] = (uint8_t)e.raw.n;
	res[9] = (uint8_t)(e.raw.n >> 8);
	res[10] = (uint8_t)(e.raw.n >> 16);
	res[11] = (uint8_t)(e.raw.n >> 24);
	if (e.md.n)
		memcpy(res + 12, e.md.p, e.md.n);
	if (e.raw.n)
		memcpy(res + 12 + e.md.n, e.raw.p, e.raw.n);
	*out = res;
	*n = total;
	r = LFS_OK;
fail:
	free(e.md.p);
	free(e.raw.p);
	free(e.visited);
	return r;
}

lfs_err nwn_mdl_encode(const nwn_model *m, uint8_t **out, size_t *n, lfs_error *err)
{
	return nwn_mdl_encode_ex(m, 0, out, n, err);
}
