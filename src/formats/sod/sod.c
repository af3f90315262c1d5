/**
 * @file sod.c
 * SOD decoder and encoder (sod.h; layout and decisions: docs/formats/sod.md).
 */
#include "sod.h"

#include "common/mem.h"
#include "common/rd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ---------------------------------------------------------------- */

void *sod_alloc(sod_model *m, size_t size)
{
	return lfs_arena_zalloc(&m->arena, size);
}

bool sod_str_set(sod_model *m, sod_str *dst, const char *s, size_t len)
{
	if (len > UINT16_MAX)
		return false;
	char *p = sod_alloc(m, len + 1);
	if (!p)
		return false;
	if (len)
		memcpy(p, s, len);
	p[len] = '\0';
	dst->s = p;
	dst->len = (uint16_t)len;
	return true;
}

static char empty_str[1];

sod_model *sod_model_new(void)
{
	sod_model *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->version = 1.8f;
	m->ver = SOD_V18;
	return m;
}

void sod_model_free(sod_model *m)
{
	if (!m)
		return;
	lfs_arena_free(&m->arena);
	free(m);
}

/* ---- versions ------------------------------------------------------------- */

bool sod_ver_of(float version, sod_ver *out)
{
	if (!isfinite(version) || version < 1.0f || version > 3.0f)
		return false;
	int v = (int)lround((double)version * 100.0);
	switch (v) {
	case 140: case 150: case 160: case 170: case 180:
	case 190: case 191: case 192: case 193:
		*out = (sod_ver)v;
		return true;
	default:
		return false;
	}
}

sod_layout sod_layout_of(sod_ver v)
{
	sod_layout l = { 0 };
	l.legacy = v <= SOD_V16;
	l.refs_count = v >= SOD_V16;
	l.ref_offset = v >= SOD_V18;
	l.texmat = v >= SOD_V17;
	l.alpha_illum = v >= SOD_V19;
	l.prefix = v >= SOD_V191 ? (int)v : 0;
	return l;
}

const char *sod_node_type_name(uint16_t type)
{
	switch (type) {
	case SOD_NULL: return "null";
	case SOD_MESH: return "mesh";
	case SOD_SPRITE: return "sprite";
	case SOD_LOD: return "lodcontrol";
	case SOD_EMITTER: return "emitter";
	default: return NULL;
	}
}

bool sod_is_binary(const uint8_t *data, size_t n)
{
	return data && n >= 14 &&
	       (!memcmp(data, "Storm3D_SW", 10) || !memcmp(data, "StarTrekDB", 10));
}

/* ---- decoder -------------------------------------------------------------- */

typedef struct dec {
	lfs_rd r;
	size_t o;
	sod_model *m;
	sod_layout L;
	lfs_error *err;
} dec;

static lfs_err trunc_err(dec *d, size_t at, const char *what)
{
	return lfs_fail(d->err, LFS_ERR_CORRUPT, at, what,
			"%s runs past the end of the file (%zu bytes)", what, d->r.n);
}

static lfs_err rd_u8(dec *d, uint8_t *v, const char *what)
{
	if (!lfs_rd_u8(&d->r, d->o, v))
		return trunc_err(d, d->o, what);
	d->o += 1;
	return LFS_OK;
}

static lfs_err rd_u16(dec *d, uint16_t *v, const char *what)
{
	if (!lfs_rd_u16(&d->r, d->o, v))
		return trunc_err(d, d->o, what);
	d->o += 2;
	return LFS_OK;
}

static lfs_err rd_u32(dec *d, uint32_t *v, const char *what)
{
	if (!lfs_rd_u32(&d->r, d->o, v))
		return trunc_err(d, d->o, what);
	d->o += 4;
	return LFS_OK;
}

static lfs_err rd_f32s(dec *d, float *v, size_t n, const char *what)
{
	if (!lfs_rd_has_n(&d->r, d->o, n, 4))
		return trunc_err(d, d->o, what);
	for (size_t i = 0; i < n; i++)
		v[i] = lfs_lef32(d->r.p + d->o + 4 * i);
	d->o += 4 * n;
	return LFS_OK;
}

static lfs_err rd_str(dec *d, sod_str *s, const char *what)
{
	uint16_t len;
	size_t at = d->o;
	if (!lfs_rd_u16(&d->r, at, &len) || !lfs_rd_has(&d->r, at + 2, len))
		return trunc_err(d, at, what);
	if (!sod_str_set(d->m, s, (const char *)d->r.p + at + 2, len))
		return lfs_nomem(d->err, "SOD");
	d->o = at + 2 + len;
	return LFS_OK;
}

/* Allocate @p count items of @p size after checking that at least
 * count * min_bytes bytes remain (so hostile counts cannot allocate more than
 * the file can describe). */
static lfs_err alloc_n(dec *d, void **p, size_t count, size_t size, size_t min_bytes,
		       const char *what)
{
	*p = NULL;
	if (!count)
		return LFS_OK;
	if (!lfs_rd_has_n(&d->r, d->o, count, min_bytes))
		return lfs_fail(d->err, LFS_ERR_CORRUPT, d->o, what,
				"%zu %s need at least %zu bytes, only %zu left", count, what,
				count * min_bytes, d->r.n - d->o);
	*p = sod_alloc(d->m, count * size);
	return *p ? LFS_OK : lfs_nomem(d->err, "SOD");
}

static lfs_err dec_mesh(dec *d, sod_mesh *me, size_t node_off)
{
	const sod_layout *L = &d->L;
	if (L->texmat)
		LFS_TRY(rd_str(d, &me->texture_material, "mesh texture material"));
	if (L->prefix == 193) {
		LFS_TRY(rd_u32(d, &me->flags, "mesh flags (1.93)"));
		size_t at = d->o;
		LFS_TRY(rd_u32(d, &me->n_textures, "mesh texture count (1.93)"));
		if (me->n_textures != 1 && me->n_textures != 2)
			return lfs_fail(d->err, LFS_ERR_UNSUPPORTED, at, "mesh texture count (1.93)",
					"mesh texture count %u (node at offset %zu): only 1 and 2 have a "
					"known layout",
					me->n_textures, node_off);
	}
	LFS_TRY(rd_str(d, &me->texture, "mesh texture"));
	if (L->prefix == 193) {
		LFS_TRY(rd_u32(d, &me->tex_reserved, "mesh word after texture (1.93)"));
		if (me->n_textures == 2) {
			LFS_TRY(rd_str(d, &me->bump_texture, "mesh bump texture (1.93)"));
			LFS_TRY(rd_u32(d, &me->bump_type, "mesh bump type (1.93)"));
		}
	}
	if (L->prefix == 192 || L->prefix == 193)
		LFS_TRY(rd_str(d, &me->borg_texture, "mesh borg texture"));
	if (L->prefix)
		LFS_TRY(rd_u16(d, &me->prefix_reserved, "mesh prefix word (1.91+)"));
	LFS_TRY(rd_u16(d, &me->n_verts, "mesh vertex count"));
	LFS_TRY(rd_u16(d, &me->n_tverts, "mesh texture coordinate count"));
	LFS_TRY(rd_u16(d, &me->n_groups, "mesh lighting group count"));
	LFS_TRY(alloc_n(d, (void **)&me->verts, me->n_verts, 12, 12, "mesh vertices"));
	LFS_TRY(rd_f32s(d, me->verts, (size_t)me->n_verts * 3, "mesh vertices"));
	LFS_TRY(alloc_n(d, (void **)&me->tverts, me->n_tverts, 8, 8, "mesh texture coordinates"));
	LFS_TRY(rd_f32s(d, me->tverts, (size_t)me->n_tverts * 2, "mesh texture coordinates"));
	LFS_TRY(alloc_n(d, (void **)&me->groups, me->n_groups, sizeof(sod_group), 4,
		    "mesh lighting groups"));
	for (uint16_t g = 0; g < me->n_groups; g++) {
		sod_group *gr = &me->groups[g];
		LFS_TRY(rd_u16(d, &gr->n_faces, "lighting group face count"));
		LFS_TRY(rd_str(d, &gr->material, "lighting group material"));
		LFS_TRY(alloc_n(d, (void **)&gr->faces, gr->n_faces, sizeof(sod_face), 12,
			    "lighting group faces"));
		const uint8_t *p = d->r.p + d->o;
		for (uint16_t f = 0; f < gr->n_faces; f++, p += 12)
			for (int k = 0; k < 3; k++) {
				gr->faces[f].v[k] = lfs_le16(p + 4 * k);
				gr->faces[f].t[k] = lfs_le16(p + 4 * k + 2);
			}
		d->o += (size_t)gr->n_faces * 12;
	}
	LFS_TRY(rd_u8(d, &me->cull, "mesh cull type"));
	LFS_TRY(rd_u16(d, &me->n_trailer, "mesh word after cull type"));
	LFS_TRY(alloc_n(d, (void **)&me->trailer, me->n_trailer, 2, 2, "mesh words after cull type"));
	for (uint16_t i = 0; i < me->n_trailer; i++)
		me->trailer[i] = lfs_le16(d->r.p + d->o + 2 * i);
	d->o += (size_t)me->n_trailer * 2;
	return LFS_OK;
}

static lfs_err dec_body(dec *d)
{
	sod_model *m = d->m;
	const sod_layout *L = &d->L;
	d->o = 14;
	if (L->legacy) {
		LFS_TRY(rd_u16(d, &m->n_legacy, "legacy block count"));
		LFS_TRY(alloc_n(d, (void **)&m->legacy, m->n_legacy, sizeof(sod_legacy), 11,
			    "legacy block entries"));
		for (uint16_t i = 0; i < m->n_legacy; i++) {
			LFS_TRY(rd_str(d, &m->legacy[i].a, "legacy block entry"));
			LFS_TRY(rd_str(d, &m->legacy[i].b, "legacy block entry"));
			if (!lfs_rd_has(&d->r, d->o, 7))
				return trunc_err(d, d->o, "legacy block entry bytes");
			memcpy(m->legacy[i].bytes, d->r.p + d->o, 7);
			d->o += 7;
		}
	}
	LFS_TRY(rd_u16(d, &m->n_materials, "lighting material count"));
	LFS_TRY(alloc_n(d, (void **)&m->materials, m->n_materials, sizeof(sod_material),
		    43 + L->alpha_illum, "lighting materials"));
	for (uint16_t i = 0; i < m->n_materials; i++) {
		sod_material *mt = &m->materials[i];
		LFS_TRY(rd_str(d, &mt->name, "lighting material name"));
		float v[10] = { 0 };
		LFS_TRY(rd_f32s(d, v, 10, "lighting material colours"));
		memcpy(mt->ambient, v, 12);
		memcpy(mt->diffuse, v + 3, 12);
		memcpy(mt->specular, v + 6, 12);
		mt->specular_power = v[9];
		LFS_TRY(rd_u8(d, &mt->lighting_model, "lighting material model"));
		if (L->alpha_illum)
			LFS_TRY(rd_u8(d, &mt->alpha_illum, "lighting material alpha self-illumination (1.9+)"));
	}
	LFS_TRY(rd_u16(d, &m->n_nodes, "node count"));
	LFS_TRY(alloc_n(d, (void **)&m->nodes, m->n_nodes, sizeof(sod_node), 54, "nodes"));
	for (uint16_t i = 0; i < m->n_nodes; i++) {
		sod_node *nd = &m->nodes[i];
		size_t at = d->o;
		LFS_TRY(rd_u16(d, &nd->type, "node type"));
		if (!sod_node_type_name(nd->type))
			return lfs_fail(d->err, LFS_ERR_CORRUPT, at, "node type",
					"node %u has type %u (valid: 0, 1, 3, 11, 12; the payload size "
					"of others is unknown)",
					i, nd->type);
		LFS_TRY(rd_str(d, &nd->name, "node name"));
		LFS_TRY(rd_str(d, &nd->parent, "node parent name"));
		LFS_TRY(rd_f32s(d, nd->m, 12, "node transform"));
		if (nd->type == SOD_EMITTER) {
			LFS_TRY(rd_str(d, &nd->emitter, "emitter node emitter name"));
		} else if (nd->type == SOD_MESH) {
			nd->mesh = sod_alloc(m, sizeof(sod_mesh));
			if (!nd->mesh)
				return lfs_nomem(d->err, "SOD");
			LFS_TRY(dec_mesh(d, nd->mesh, at));
		}
	}
	LFS_TRY(rd_u16(d, &m->n_channels, "animation channel count"));
	LFS_TRY(alloc_n(d, (void **)&m->channels, m->n_channels, sizeof(sod_channel), 10,
		    "animation channels"));
	for (uint16_t i = 0; i < m->n_channels; i++) {
		sod_channel *c = &m->channels[i];
		LFS_TRY(rd_str(d, &c->node, "animation channel node name"));
		LFS_TRY(rd_u16(d, &c->n_keys, "animation channel key count"));
		LFS_TRY(rd_f32s(d, &c->period, 1, "animation channel period"));
		size_t at = d->o;
		LFS_TRY(rd_u16(d, &c->type, "animation channel type"));
		if (c->type != SOD_CHAN_MATRIX && c->type != SOD_CHAN_SCALE)
			return lfs_fail(d->err, LFS_ERR_UNSUPPORTED, at, "animation channel type",
					"animation channel %u has type %u: only types 0 (matrix) and 5 "
					"(scale) have a known key size",
					i, c->type);
		size_t w = c->type == SOD_CHAN_MATRIX ? 12 : 1;
		LFS_TRY(alloc_n(d, (void **)&c->keys, c->n_keys, 4 * w, 4 * w, "animation channel keys"));
		LFS_TRY(rd_f32s(d, c->keys, (size_t)c->n_keys * w, "animation channel keys"));
	}
	if (L->refs_count) {
		LFS_TRY(rd_u16(d, &m->n_refs, "animation reference count"));
		LFS_TRY(alloc_n(d, (void **)&m->refs, m->n_refs, sizeof(sod_ref), 5 + 4 * L->ref_offset,
			    "animation references"));
		for (uint16_t i = 0; i < m->n_refs; i++) {
			sod_ref *rf = &m->refs[i];
			LFS_TRY(rd_u8(d, &rf->type, "animation reference type"));
			LFS_TRY(rd_str(d, &rf->node, "animation reference node name"));
			LFS_TRY(rd_str(d, &rf->anim, "animation reference animation name"));
			if (L->ref_offset)
				LFS_TRY(rd_f32s(d, &rf->offset, 1, "animation reference playback offset"));
		}
	}
	m->n_trailing = d->r.n - d->o;
	if (m->n_trailing) {
		m->trailing = sod_alloc(m, m->n_trailing);
		if (!m->trailing)
			return lfs_nomem(d->err, "SOD");
		memcpy(m->trailing, d->r.p + d->o, m->n_trailing);
	}
	return LFS_OK;
}

/* One attempt with layout @p L; on success *out owns the model. When
 * @p exact, trailing bytes count as failure (used by the diagnosis). */
static lfs_err try_layout(const uint8_t *data, size_t n, float version, sod_ver ver,
			  sod_layout L, bool exact, sod_model **out, lfs_error *err)
{
	sod_model *m = calloc(1, sizeof(*m));
	if (!m)
		return lfs_nomem(err, "SOD");
	m->startrekdb = !memcmp(data, "StarTrekDB", 10);
	m->version = version;
	m->ver = ver;
	dec d = { .r = { data, n }, .o = 14, .m = m, .L = L, .err = err };
	lfs_err e = dec_body(&d);
	if (e == LFS_OK && exact && m->n_trailing)
		e = LFS_ERR_CORRUPT;
	if (e != LFS_OK) {
		sod_model_free(m);
		return e;
	}
	*out = m;
	return LFS_OK;
}

/* Layouts other writers produce for the same version number (docs/formats/
 * sod.md "Disputed files"). Tried only to explain a failure. */
typedef struct alt_layout {
	sod_layout L;
	const char *who;
} alt_layout;

static size_t alternates(sod_ver v, alt_layout *alt)
{
	sod_layout L = sod_layout_of(v);
	size_t k = 0;
	if (v == SOD_V14 || v == SOD_V15) {
		sod_layout a = L;
		a.legacy = false;
		a.refs_count = false;
		alt[k++] = (alt_layout){ a, "without the legacy block and the reference count "
					    "(SomaZ's 1.4/1.5 writer; no reader accepts it)" };
	}
	if (v == SOD_V16 || v == SOD_V17 || v == SOD_V18) {
		sod_layout a = L;
		a.legacy = !L.legacy;
		alt[k++] = (alt_layout){ a, L.legacy ? "without the legacy block"
						     : "with a legacy block (stau/AS-HP layout)" };
	}
	if (v == SOD_V192) {
		sod_layout a = L;
		a.prefix = 193;
		alt[k++] = (alt_layout){ a, "with the 1.93 mesh prefix (stau/UL 1.92 layout)" };
	}
	if (v == SOD_V19) {
		sod_layout a = L;
		a.prefix = 191;
		alt[k++] = (alt_layout){ a, "with a u16 after the texture (AS-HP 1.9 layout)" };
	}
	return k;
}

lfs_err sod_decode(const uint8_t *data, size_t n, sod_model **out, lfs_error *err)
{
	*out = NULL;
	if (!sod_is_binary(data, n))
		return lfs_fail(err, LFS_ERR_NOTFORMAT, 0, "SOD header",
				"not a SOD file (no Storm3D_SW/StarTrekDB magic and version)");
	float version = lfs_lef32(data + 10);
	sod_ver ver;
	if (!sod_ver_of(version, &ver))
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, 10, "SOD header version",
				"version %.9g is not supported (known layouts: 1.4, "
				"1.5, 1.6, 1.7, 1.8, 1.9, 1.91, 1.92, 1.93; the readers disagree on "
				"others such as 1.81)",
				(double)version);
	lfs_error e1;
	lfs_err e = try_layout(data, n, version, ver, sod_layout_of(ver), false, out, &e1);
	if (e == LFS_OK || e == LFS_ERR_NOMEM) {
		if (err && e != LFS_OK)
			*err = e1;
		return e;
	}
	alt_layout alt[2];
	size_t na = alternates(ver, alt);
	for (size_t i = 0; i < na; i++) {
		sod_model *tmp = NULL;
		lfs_error e2;
		if (try_layout(data, n, version, ver, alt[i].L, true, &tmp, &e2) == LFS_OK) {
			sod_model_free(tmp);
			const char *detail = strstr(e1.msg, "): ");
			detail = detail ? detail + 3 : e1.msg;
			char first[sizeof(e1.msg)];
			snprintf(first, sizeof(first), "%s", detail);
			return lfs_fail(err, LFS_ERR_CORRUPT, e1.offset, e1.structure,
					"%.120s; disputed layout: the file parses %s; rejected",
					first, alt[i].who);
		}
	}
	if (err)
		*err = e1;
	return e;
}

/* ---- encoder -------------------------------------------------------------- */

typedef struct enc {
	uint8_t *p;
	size_t o, cap;
} enc;

static void w8(enc *e, uint8_t v)
{
	if (e->p)
		e->p[e->o] = v;
	e->o += 1;
}

static void w16(enc *e, uint16_t v)
{
	if (e->p) {
		e->p[e->o] = (uint8_t)v;
		e->p[e->o + 1] = (uint8_t)(v >> 8);
	}
	e->o += 2;
}

static void w32(enc *e, uint32_t v)
{
	if (e->p)
		for (int i = 0; i < 4; i++)
			e->p[e->o + i] = (uint8_t)(v >> (8 * i));
	e->o += 4;
}

static void wf(enc *e, const float *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &v[i], 4);
		w32(e, u);
	}
}

static void wbytes(enc *e, const void *p, size_t n)
{
	if (e->p && n)
		memcpy(e->p + e->o, p, n);
	e->o += n;
}

static void wstr(enc *e, const sod_str *s)
{
	w16(e, s->len);
	wbytes(e, s->len ? s->s : empty_str, s->len);
}

static lfs_err check_model(const sod_model *m, const sod_layout *L, lfs_error *err)
{
	for (uint16_t i = 0; i < m->n_nodes; i++) {
		const sod_node *nd = &m->nodes[i];
		if (!sod_node_type_name(nd->type))
			return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "node type",
					"SOD encode: node %u has type %u (valid: 0, 1, 3, 11, 12)", i,
					nd->type);
		if (nd->type == SOD_MESH && !nd->mesh)
			return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, "mesh",
					"SOD encode: mesh node %u has no mesh payload", i);
		if (nd->type == SOD_MESH && L->prefix == 193 && nd->mesh->n_textures != 1 &&
		    nd->mesh->n_textures != 2)
			return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "mesh texture count",
					"SOD encode: node %u: 1.93 texture count %u (only 1 and 2 have a "
					"known layout)",
					i, nd->mesh->n_textures);
	}
	for (uint16_t i = 0; i < m->n_channels; i++)
		if (m->channels[i].type != SOD_CHAN_MATRIX && m->channels[i].type != SOD_CHAN_SCALE)
			return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "animation channel type",
					"SOD encode: channel %u type %u (only 0 and 5 are known)", i,
					m->channels[i].type);
	return LFS_OK;
}

static void enc_all(enc *e, const sod_model *m, const sod_layout *L)
{
	wbytes(e, m->startrekdb ? "StarTrekDB" : "Storm3D_SW", 10);
	wf(e, &m->version, 1);
	if (L->legacy) {
		w16(e, m->n_legacy);
		for (uint16_t i = 0; i < m->n_legacy; i++) {
			wstr(e, &m->legacy[i].a);
			wstr(e, &m->legacy[i].b);
			wbytes(e, m->legacy[i].bytes, 7);
		}
	}
	w16(e, m->n_materials);
	for (uint16_t i = 0; i < m->n_materials; i++) {
		const sod_material *mt = &m->materials[i];
		wstr(e, &mt->name);
		wf(e, mt->ambient, 3);
		wf(e, mt->diffuse, 3);
		wf(e, mt->specular, 3);
		wf(e, &mt->specular_power, 1);
		w8(e, mt->lighting_model);
		if (L->alpha_illum)
			w8(e, mt->alpha_illum);
	}
	w16(e, m->n_nodes);
	for (uint16_t i = 0; i < m->n_nodes; i++) {
		const sod_node *nd = &m->nodes[i];
		w16(e, nd->type);
		wstr(e, &nd->name);
		wstr(e, &nd->parent);
		wf(e, nd->m, 12);
		if (nd->type == SOD_EMITTER)
			wstr(e, &nd->emitter);
		if (nd->type != SOD_MESH)
			continue;
		const sod_mesh *me = nd->mesh;
		if (L->texmat)
			wstr(e, &me->texture_material);
		if (L->prefix == 193) {
			w32(e, me->flags);
			w32(e, me->n_textures);
		}
		wstr(e, &me->texture);
		if (L->prefix == 193) {
			w32(e, me->tex_reserved);
			if (me->n_textures == 2) {
				wstr(e, &me->bump_texture);
				w32(e, me->bump_type);
			}
		}
		if (L->prefix == 192 || L->prefix == 193)
			wstr(e, &me->borg_texture);
		if (L->prefix)
			w16(e, me->prefix_reserved);
		w16(e, me->n_verts);
		w16(e, me->n_tverts);
		w16(e, me->n_groups);
		wf(e, me->verts, (size_t)me->n_verts * 3);
		wf(e, me->tverts, (size_t)me->n_tverts * 2);
		for (uint16_t g = 0; g < me->n_groups; g++) {
			const sod_group *gr = &me->groups[g];
			w16(e, gr->n_faces);
			wstr(e, &gr->material);
			for (uint16_t f = 0; f < gr->n_faces; f++)
				for (int k = 0; k < 3; k++) {
					w16(e, gr->faces[f].v[k]);
					w16(e, gr->faces[f].t[k]);
				}
		}
		w8(e, me->cull);
		w16(e, me->n_trailer);
		for (uint16_t k = 0; k < me->n_trailer; k++)
			w16(e, me->trailer[k]);
	}
	w16(e, m->n_channels);
	for (uint16_t i = 0; i < m->n_channels; i++) {
		const sod_channel *c = &m->channels[i];
		wstr(e, &c->node);
		w16(e, c->n_keys);
		wf(e, &c->period, 1);
		w16(e, c->type);
		wf(e, c->keys, (size_t)c->n_keys * (c->type == SOD_CHAN_MATRIX ? 12 : 1));
	}
	/* 1.4/1.5 have no reference count and so no references: whatever follows
	 * the channels in such a file is kept in `trailing`. */
	if (L->refs_count)
		w16(e, m->n_refs);
	if (L->refs_count)
		for (uint16_t i = 0; i < m->n_refs; i++) {
			const sod_ref *rf = &m->refs[i];
			w8(e, rf->type);
			wstr(e, &rf->node);
			wstr(e, &rf->anim);
			if (L->ref_offset)
				wf(e, &rf->offset, 1);
		}
	wbytes(e, m->trailing, m->n_trailing);
}

lfs_err sod_encode(const sod_model *m, uint8_t **out, size_t *n, lfs_error *err)
{
	*out = NULL;
	*n = 0;
	sod_ver v;
	if (!sod_ver_of(m->version, &v) || v != m->ver)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "SOD header version",
				"SOD encode: version %.9g is not a supported version class",
				(double)m->version);
	sod_layout L = sod_layout_of(m->ver);
	if (!L.refs_count && m->n_refs)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, "animation references",
				"SOD encode: version %.9g files have no animation reference count; "
				"%u references cannot be written",
				(double)m->version, m->n_refs);
	lfs_err ce = check_model(m, &L, err);
	if (ce != LFS_OK)
		return ce;
	enc e = { 0 };
	enc_all(&e, m, &L); /* size pass */
	size_t size = e.o;
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return lfs_nomem(err, "SOD");
	e = (enc){ .p = buf, .o = 0, .cap = size };
	enc_all(&e, m, &L);
	*out = buf;
	*n = size;
	return LFS_OK;
}
