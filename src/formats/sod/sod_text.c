/**
 * @file sod_text.c
 * model.txt writer and parser for SOD (sod_text.h, docs/formats/sod.md).
 */
#include "sod_text.h"

#include "common/floatfmt.h"
#include "common/mem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- floats --------------------------------------------------------------- */

/* ---- writer --------------------------------------------------------------- */

static void put_name(lfs_sb *sb, const sod_str *s)
{
	if (!s->len)
		lfs_sb_puts(sb, "\"\"");
	else
		lfs_sb_name(sb, s->s, s->len);
}

static void kv_name(lfs_sb *sb, const char *ind, const char *kw, const sod_str *s)
{
	lfs_sb_printf(sb, "%s%s ", ind, kw);
	put_name(sb, s);
	lfs_sb_putc(sb, '\n');
}

static void kv_f(lfs_sb *sb, const char *ind, const char *kw, const float *v, size_t n)
{
	lfs_sb_printf(sb, "%s%s ", ind, kw);
	lfs_sb_floats_bits(sb, v, n, ' ');
	lfs_sb_putc(sb, '\n');
}

static void row_f(lfs_sb *sb, const char *ind, const float *v, size_t n)
{
	lfs_sb_puts(sb, ind);
	lfs_sb_floats_bits(sb, v, n, ' ');
	lfs_sb_putc(sb, '\n');
}

static void ver_text(lfs_sb *sb, sod_ver v)
{
	int x = (int)v;
	if (x % 10 == 0)
		lfs_sb_printf(sb, "%d.%d", x / 100, x % 100 / 10);
	else
		lfs_sb_printf(sb, "%d.%02d", x / 100, x % 100);
}

lfs_err sod_text_write(const sod_model *m, lfs_sb *sb, lfs_error *err)
{
	sod_layout L = sod_layout_of(m->ver);
	unsigned counts[13] = { 0 };
	for (uint16_t i = 0; i < m->n_nodes; i++)
		if (m->nodes[i].type < 13)
			counts[m->nodes[i].type]++;
	lfs_sb_puts(sb, "# legacyfs: Storm3D SOD model as text (docs/formats/sod.md)\n");
	lfs_sb_printf(sb, "# %u materials, %u nodes (%u mesh, %u null, %u sprite, %u lodcontrol, "
			  "%u emitter), %u channels, %u references\n",
		      m->n_materials, m->n_nodes, counts[1], counts[0], counts[3], counts[11],
		      counts[12], m->n_channels, m->n_refs);
	lfs_sb_printf(sb, "magic %s\n", m->startrekdb ? "StarTrekDB" : "Storm3D_SW");
	lfs_sb_puts(sb, "version ");
	lfs_sb_float_bits(sb, m->version);
	lfs_sb_puts(sb, "\n# layout of version ");
	ver_text(sb, m->ver);
	lfs_sb_puts(sb, "\n");
	if (L.legacy) {
		lfs_sb_printf(sb, "legacy %u\n", m->n_legacy);
		for (uint16_t i = 0; i < m->n_legacy; i++) {
			lfs_sb_puts(sb, "  ");
			put_name(sb, &m->legacy[i].a);
			lfs_sb_putc(sb, ' ');
			put_name(sb, &m->legacy[i].b);
			lfs_sb_putc(sb, ' ');
			lfs_sb_hex(sb, m->legacy[i].bytes, 7);
			lfs_sb_putc(sb, '\n');
		}
	}
	for (uint16_t i = 0; i < m->n_materials; i++) {
		const sod_material *mt = &m->materials[i];
		kv_name(sb, "", "material", &mt->name);
		kv_f(sb, "  ", "ambient", mt->ambient, 3);
		kv_f(sb, "  ", "diffuse", mt->diffuse, 3);
		kv_f(sb, "  ", "specular", mt->specular, 3);
		kv_f(sb, "  ", "specularpower", &mt->specular_power, 1);
		lfs_sb_printf(sb, "  lightingmodel %u\n", mt->lighting_model);
		if (L.alpha_illum)
			lfs_sb_printf(sb, "  alphaillum %u\n", mt->alpha_illum);
		lfs_sb_puts(sb, "endmaterial\n");
	}
	for (uint16_t i = 0; i < m->n_nodes; i++) {
		const sod_node *nd = &m->nodes[i];
		const char *tn = sod_node_type_name(nd->type);
		if (tn)
			lfs_sb_printf(sb, "node %s ", tn);
		else
			lfs_sb_printf(sb, "node type%u ", nd->type);
		put_name(sb, &nd->name);
		lfs_sb_putc(sb, '\n');
		kv_name(sb, "  ", "parent", &nd->parent);
		kv_f(sb, "  ", "right", nd->m, 3);
		kv_f(sb, "  ", "up", nd->m + 3, 3);
		kv_f(sb, "  ", "front", nd->m + 6, 3);
		kv_f(sb, "  ", "position", nd->m + 9, 3);
		if (nd->type == SOD_EMITTER)
			kv_name(sb, "  ", "emitter", &nd->emitter);
		const sod_mesh *me = nd->type == SOD_MESH ? nd->mesh : NULL;
		if (me) {
			if (L.texmat)
				kv_name(sb, "  ", "texturematerial", &me->texture_material);
			if (L.prefix == 193) {
				lfs_sb_printf(sb, "  meshflags %u\n", me->flags);
				lfs_sb_printf(sb, "  numtextures %u\n", me->n_textures);
			}
			kv_name(sb, "  ", "texture", &me->texture);
			if (L.prefix == 193) {
				lfs_sb_printf(sb, "  texturereserved %u\n", me->tex_reserved);
				if (me->n_textures == 2) {
					kv_name(sb, "  ", "bumptexture", &me->bump_texture);
					lfs_sb_printf(sb, "  bumptype %u\n", me->bump_type);
				}
			}
			if (L.prefix == 192 || L.prefix == 193)
				kv_name(sb, "  ", "borgtexture", &me->borg_texture);
			if (L.prefix)
				lfs_sb_printf(sb, "  prefixreserved %u\n", me->prefix_reserved);
			lfs_sb_printf(sb, "  verts %u\n", me->n_verts);
			for (uint16_t k = 0; k < me->n_verts; k++)
				row_f(sb, "    ", me->verts + 3 * k, 3);
			lfs_sb_printf(sb, "  tverts %u\n", me->n_tverts);
			for (uint16_t k = 0; k < me->n_tverts; k++)
				row_f(sb, "    ", me->tverts + 2 * k, 2);
			for (uint16_t g = 0; g < me->n_groups; g++) {
				const sod_group *gr = &me->groups[g];
				kv_name(sb, "  ", "group", &gr->material);
				lfs_sb_printf(sb, "    faces %u\n", gr->n_faces);
				for (uint16_t f = 0; f < gr->n_faces; f++) {
					const sod_face *fc = &gr->faces[f];
					lfs_sb_printf(sb, "      %u %u %u %u %u %u\n", fc->v[0], fc->t[0],
						      fc->v[1], fc->t[1], fc->v[2], fc->t[2]);
				}
				lfs_sb_puts(sb, "  endgroup\n");
			}
			lfs_sb_printf(sb, "  cull %u\n", me->cull);
			lfs_sb_printf(sb, "  cullwords %u\n", me->n_trailer);
			for (uint16_t k = 0; k < me->n_trailer; k++)
				lfs_sb_printf(sb, "    %u\n", me->trailer[k]);
		}
		lfs_sb_puts(sb, "endnode\n");
	}
	for (uint16_t i = 0; i < m->n_channels; i++) {
		const sod_channel *c = &m->channels[i];
		kv_name(sb, "", "channel", &c->node);
		lfs_sb_printf(sb, "  type %u\n", c->type);
		kv_f(sb, "  ", "period", &c->period, 1);
		size_t w = c->type == SOD_CHAN_MATRIX ? 12 : 1;
		lfs_sb_printf(sb, "  keys %u\n", c->n_keys);
		for (uint16_t k = 0; k < c->n_keys; k++)
			row_f(sb, "    ", c->keys + w * k, w);
		lfs_sb_puts(sb, "endchannel\n");
	}
	for (uint16_t i = 0; i < m->n_refs; i++) {
		const sod_ref *r = &m->refs[i];
		kv_name(sb, "", "reference", &r->node);
		lfs_sb_printf(sb, "  type %u\n", r->type);
		kv_name(sb, "  ", "anim", &r->anim);
		if (L.ref_offset)
			kv_f(sb, "  ", "offset", &r->offset, 1);
		lfs_sb_puts(sb, "endreference\n");
	}
	if (m->n_trailing) {
		lfs_sb_printf(sb, "trailing %zu\n", m->n_trailing);
		for (size_t k = 0; k < m->n_trailing; k += 32) {
			lfs_sb_puts(sb, "  ");
			lfs_sb_hex(sb, m->trailing + k, m->n_trailing - k < 32 ? m->n_trailing - k : 32);
			lfs_sb_putc(sb, '\n');
		}
	}
	if (!lfs_sb_ok(sb))
		return lfs_nomem(err, "model.txt");
	return LFS_OK;
}

/* ---- parser --------------------------------------------------------------- */

typedef struct vec {
	void *p;
	size_t n, cap, sz;
} vec;

static void *vec_push(vec *v)
{
	if (!lfs_grow(&v->p, &v->cap, v->n + 1, v->sz))
		return NULL;
	void *slot = (char *)v->p + v->n++ * v->sz;
	memset(slot, 0, v->sz);
	return slot;
}

typedef struct tparse {
	lfs_lex lx;
	sod_model *m;
	bool have_version, have_content, have_magic;
	sod_layout L;
	char *sbuf; /* 65536 + 1 bytes for names */
	lfs_error *err;
} tparse;

static lfs_err p_next(tparse *P, lfs_line *ln, const lfs_line *opener, const char *closer)
{
	int r = lfs_lex_next(&P->lx, ln);
	if (r < 0)
		return LFS_ERR_PARSE;
	if (r == 0)
		return lfs_lex_fail(&P->lx, opener, 0, "missing '%s' for this block", closer);
	return LFS_OK;
}

static lfs_err p_str(tparse *P, const lfs_line *ln, uint32_t i, sod_str *out)
{
	size_t len;
	LFS_TRY(lfs_lex_str(&P->lx, ln, i, P->sbuf, 65536, &len));
	if (!sod_str_set(P->m, out, P->sbuf, len))
		return lfs_nomem(P->err, "model.txt");
	return LFS_OK;
}

static lfs_err p_name_arg(tparse *P, const lfs_line *ln, sod_str *out)
{
	LFS_TRY(lfs_lex_arity(&P->lx, ln, 1, "name"));
	return p_str(P, ln, 1, out);
}

static lfs_err p_floats(tparse *P, const lfs_line *ln, uint32_t first, float *v, size_t n)
{
	for (size_t k = 0; k < n; k++)
		LFS_TRY(lfs_lex_f32(&P->lx, ln, first + (uint32_t)k, &v[k]));
	return LFS_OK;
}

static lfs_err p_kw_floats(tparse *P, const lfs_line *ln, float *v, size_t n)
{
	LFS_TRY(lfs_lex_arity(&P->lx, ln, (uint32_t)n, n == 1 ? "number" : "numbers"));
	return p_floats(P, ln, 1, v, n);
}

static lfs_err p_kw_int(tparse *P, const lfs_line *ln, int64_t max, int64_t *v)
{
	LFS_TRY(lfs_lex_arity(&P->lx, ln, 1, "integer"));
	return lfs_lex_int(&P->lx, ln, 1, 0, max, v);
}

/* A row line of exactly @p n tokens. */
static lfs_err p_row(tparse *P, lfs_line *ln, const lfs_line *opener, uint32_t n,
		     const char *what, size_t idx, size_t count)
{
	int r = lfs_lex_next(&P->lx, ln);
	if (r < 0)
		return LFS_ERR_PARSE;
	if (r == 0)
		return lfs_lex_fail(&P->lx, opener, 1, "expected %zu %s rows, the file ends after %zu",
				    count, what, idx);
	if (ln->ntok != n)
		return lfs_lex_fail(&P->lx, ln, ln->ntok < n ? ln->ntok : n,
				    "%s row %zu of %zu: expected %u values, found %u", what, idx + 1,
				    count, n, ln->ntok);
	return LFS_OK;
}

static lfs_err need(tparse *P, const lfs_line *ln, bool ok, const char *why)
{
	if (ok)
		return LFS_OK;
	return lfs_lex_fail(&P->lx, ln, 0, "%s", why);
}

static lfs_err p_version_first(tparse *P, const lfs_line *ln)
{
	if (!P->have_version)
		return lfs_lex_fail(&P->lx, ln, 0, "'version' must come before the first block");
	P->have_content = true;
	return LFS_OK;
}

static lfs_err p_material(tparse *P, const lfs_line *open, sod_material *mt)
{
	LFS_TRY(p_name_arg(P, open, &mt->name));
	lfs_line ln;
	for (;;) {
		LFS_TRY(p_next(P, &ln, open, "endmaterial"));
		const lfs_tok *k = &ln.tok[0];
		int64_t v;
		if (lfs_tok_is(k, "endmaterial")) {
			return lfs_lex_arity(&P->lx, &ln, 0, "values");
		} else if (lfs_tok_is(k, "ambient")) {
			LFS_TRY(p_kw_floats(P, &ln, mt->ambient, 3));
		} else if (lfs_tok_is(k, "diffuse")) {
			LFS_TRY(p_kw_floats(P, &ln, mt->diffuse, 3));
		} else if (lfs_tok_is(k, "specular")) {
			LFS_TRY(p_kw_floats(P, &ln, mt->specular, 3));
		} else if (lfs_tok_is(k, "specularpower")) {
			LFS_TRY(p_kw_floats(P, &ln, &mt->specular_power, 1));
		} else if (lfs_tok_is(k, "lightingmodel")) {
			LFS_TRY(p_kw_int(P, &ln, 255, &v));
			mt->lighting_model = (uint8_t)v;
		} else if (lfs_tok_is(k, "alphaillum")) {
			LFS_TRY(need(P, &ln, P->L.alpha_illum, "'alphaillum' exists only in version 1.9 and later"));
			LFS_TRY(p_kw_int(P, &ln, 255, &v));
			mt->alpha_illum = (uint8_t)v;
		} else {
			return lfs_lex_fail(&P->lx, &ln, 0, "unknown material field '%.*s'",
					    (int)(k->len > 40 ? 40 : k->len), k->s);
		}
	}
}

static lfs_err p_count(tparse *P, const lfs_line *ln, int64_t *n)
{
	return p_kw_int(P, ln, UINT16_MAX, n);
}

static lfs_err p_group(tparse *P, const lfs_line *open, sod_group *gr)
{
	LFS_TRY(p_name_arg(P, open, &gr->material));
	lfs_line ln;
	bool have_faces = false;
	for (;;) {
		LFS_TRY(p_next(P, &ln, open, "endgroup"));
		const lfs_tok *k = &ln.tok[0];
		if (lfs_tok_is(k, "endgroup"))
			return lfs_lex_arity(&P->lx, &ln, 0, "values");
		if (!lfs_tok_is(k, "faces") || have_faces)
			return lfs_lex_fail(&P->lx, &ln, 0, have_faces ? "expected 'endgroup'"
								    : "expected 'faces' or 'endgroup'");
		have_faces = true;
		int64_t n;
		LFS_TRY(p_count(P, &ln, &n));
		lfs_line head = ln;
		gr->n_faces = (uint16_t)n;
		gr->faces = sod_alloc(P->m, (size_t)n * sizeof(sod_face));
		if (n && !gr->faces)
			return lfs_nomem(P->err, "model.txt");
		for (int64_t f = 0; f < n; f++) {
			LFS_TRY(p_row(P, &ln, &head, 6, "face", (size_t)f, (size_t)n));
			for (uint32_t c = 0; c < 3; c++) {
				int64_t a, b;
				LFS_TRY(lfs_lex_int(&P->lx, &ln, 2 * c, 0, UINT16_MAX, &a));
				LFS_TRY(lfs_lex_int(&P->lx, &ln, 2 * c + 1, 0, UINT16_MAX, &b));
				gr->faces[f].v[c] = (uint16_t)a;
				gr->faces[f].t[c] = (uint16_t)b;
			}
		}
	}
}

static lfs_err p_float_rows(tparse *P, const lfs_line *head, float **out, uint16_t *count,
			    uint32_t w, const char *what)
{
	int64_t n;
	LFS_TRY(p_count(P, head, &n));
	*count = (uint16_t)n;
	*out = sod_alloc(P->m, (size_t)n * w * sizeof(float));
	if (n && !*out)
		return lfs_nomem(P->err, "model.txt");
	lfs_line ln;
	for (int64_t r = 0; r < n; r++) {
		LFS_TRY(p_row(P, &ln, head, w, what, (size_t)r, (size_t)n));
		LFS_TRY(p_floats(P, &ln, 0, *out + (size_t)r * w, w));
	}
	return LFS_OK;
}

static const struct {
	const char *name;
	uint16_t type;
} node_types[] = {
	{ "null", SOD_NULL }, { "mesh", SOD_MESH }, { "sprite", SOD_SPRITE },
	{ "lodcontrol", SOD_LOD }, { "emitter", SOD_EMITTER },
};

/* Node fields that may appear once per node (a second one would silently
 * replace the first); the first five are in every node. */
static const char *const node_once[] = { "parent",	    "right",	   "up",
					 "front",	    "position",	   "emitter",
					 "texturematerial", "meshflags",   "numtextures",
					 "texturereserved", "bumptexture", "bumptype",
					 "borgtexture",	    "prefixreserved", "verts",
					 "tverts",	    "cull",	   "cullwords" };
#define NODE_ALWAYS 5

static int node_once_index(const lfs_tok *k)
{
	for (size_t i = 0; i < sizeof(node_once) / sizeof(node_once[0]); i++)
		if (lfs_tok_is(k, node_once[i]))
			return (int)i;
	return -1;
}

/* A mesh field of a mesh node's block (line @p ln, which row readers
 * advance): its value into @p me, a lighting group onto @p groups. */
static lfs_err p_mesh_field(tparse *P, lfs_line *ln, sod_mesh *me, vec *groups)
{
	const sod_layout *L = &P->L;
	const lfs_tok *k = &ln->tok[0];
	lfs_err e = LFS_OK;
	int64_t v;
	if (lfs_tok_is(k, "texturematerial")) {
		e = need(P, ln, L->texmat, "'texturematerial' exists only in version 1.7 and later");
		if (!e)
			e = p_name_arg(P, ln, &me->texture_material);
	} else if (lfs_tok_is(k, "meshflags") || lfs_tok_is(k, "numtextures") ||
		   lfs_tok_is(k, "texturereserved")) {
		e = need(P, ln, L->prefix == 193, "this field exists only in version 1.93");
		if (!e)
			e = p_kw_int(P, ln, UINT32_MAX, &v);
		if (!e && lfs_tok_is(k, "numtextures") && v != 1 && v != 2)
			e = lfs_lex_fail(&P->lx, ln, 1,
					 "numtextures must be 1 or 2 (no other layout is known)");
		if (!e) {
			if (lfs_tok_is(k, "meshflags"))
				me->flags = (uint32_t)v;
			else if (lfs_tok_is(k, "numtextures"))
				me->n_textures = (uint32_t)v;
			else
				me->tex_reserved = (uint32_t)v;
		}
	} else if (lfs_tok_is(k, "texture")) {
		e = p_name_arg(P, ln, &me->texture);
	} else if (lfs_tok_is(k, "bumptexture") || lfs_tok_is(k, "bumptype")) {
		e = need(P, ln, L->prefix == 193 && me->n_textures == 2,
			 "bump fields need version 1.93 and a preceding 'numtextures 2'");
		if (!e && lfs_tok_is(k, "bumptexture"))
			e = p_name_arg(P, ln, &me->bump_texture);
		else if (!e) {
			e = p_kw_int(P, ln, UINT32_MAX, &v);
			if (!e)
				me->bump_type = (uint32_t)v;
		}
	} else if (lfs_tok_is(k, "borgtexture")) {
		e = need(P, ln, L->prefix == 192 || L->prefix == 193,
			 "'borgtexture' exists only in versions 1.92 and 1.93");
		if (!e)
			e = p_name_arg(P, ln, &me->borg_texture);
	} else if (lfs_tok_is(k, "prefixreserved")) {
		e = need(P, ln, L->prefix != 0, "'prefixreserved' exists only in versions 1.91 to 1.93");
		if (!e)
			e = p_kw_int(P, ln, UINT16_MAX, &v);
		if (!e)
			me->prefix_reserved = (uint16_t)v;
	} else if (lfs_tok_is(k, "verts")) {
		e = p_float_rows(P, ln, &me->verts, &me->n_verts, 3, "vertex");
	} else if (lfs_tok_is(k, "tverts")) {
		e = p_float_rows(P, ln, &me->tverts, &me->n_tverts, 2, "texture coordinate");
	} else if (lfs_tok_is(k, "group")) {
		if (groups->n == UINT16_MAX)
			return lfs_lex_fail(&P->lx, ln, 0, "more than 65535 lighting groups");
		sod_group *gr = vec_push(groups);
		e = gr ? p_group(P, ln, gr) : lfs_nomem(P->err, "model.txt");
	} else if (lfs_tok_is(k, "cull")) {
		e = p_kw_int(P, ln, 255, &v);
		if (!e)
			me->cull = (uint8_t)v;
	} else if (lfs_tok_is(k, "cullwords")) {
		e = p_count(P, ln, &v);
		lfs_line head = *ln;
		if (!e) {
			me->n_trailer = (uint16_t)v;
			me->trailer = sod_alloc(P->m, (size_t)v * 2);
			if (v && !me->trailer)
				e = lfs_nomem(P->err, "model.txt");
		}
		for (int64_t r = 0; !e && r < v; r++) {
			int64_t w;
			e = p_row(P, ln, &head, 1, "cull word", (size_t)r, (size_t)v);
			if (!e)
				e = lfs_lex_int(&P->lx, ln, 0, 0, UINT16_MAX, &w);
			if (!e)
				me->trailer[r] = (uint16_t)w;
		}
	}
	return e;
}

static lfs_err p_node(tparse *P, const lfs_line *open, sod_node *nd)
{
	uint32_t seen = 0;
	LFS_TRY(lfs_lex_arity(&P->lx, open, 2, "values (type and name)"));
	size_t t;
	for (t = 0; t < sizeof(node_types) / sizeof(node_types[0]); t++)
		if (lfs_tok_is(&open->tok[1], node_types[t].name))
			break;
	if (t == sizeof(node_types) / sizeof(node_types[0]))
		return lfs_lex_fail(&P->lx, open, 1,
				    "unknown node type (expected null, mesh, sprite, lodcontrol or emitter)");
	nd->type = node_types[t].type;
	LFS_TRY(p_str(P, open, 2, &nd->name));
	sod_mesh *me = NULL;
	vec groups = { .sz = sizeof(sod_group) };
	if (nd->type == SOD_MESH) {
		me = nd->mesh = sod_alloc(P->m, sizeof(sod_mesh));
		if (!me)
			return lfs_nomem(P->err, "model.txt");
		me->n_textures = 1;
	}
	lfs_line ln;
	lfs_err e = LFS_OK;
	for (;;) {
		e = p_next(P, &ln, open, "endnode");
		if (e)
			break;
		const lfs_tok *k = &ln.tok[0];
		bool mesh_kw = lfs_tok_is(k, "texturematerial") || lfs_tok_is(k, "meshflags") ||
			       lfs_tok_is(k, "numtextures") || lfs_tok_is(k, "texture") ||
			       lfs_tok_is(k, "texturereserved") || lfs_tok_is(k, "bumptexture") ||
			       lfs_tok_is(k, "bumptype") || lfs_tok_is(k, "borgtexture") ||
			       lfs_tok_is(k, "prefixreserved") || lfs_tok_is(k, "verts") ||
			       lfs_tok_is(k, "tverts") || lfs_tok_is(k, "group") ||
			       lfs_tok_is(k, "cull") || lfs_tok_is(k, "cullwords");
		if (mesh_kw && !me) {
			e = lfs_lex_fail(&P->lx, &ln, 0, "'%.*s' is a mesh field, this is a %s node",
					 (int)k->len, k->s, sod_node_type_name(nd->type));
			break;
		}
		int once = node_once_index(k);
		if (once >= 0 && (seen & (1u << once))) {
			e = lfs_lex_fail(&P->lx, &ln, 0, "'%s' is given twice in this node",
					 node_once[once]);
			break;
		}
		if (once >= 0)
			seen |= 1u << once;
		if (lfs_tok_is(k, "endnode")) {
			e = lfs_lex_arity(&P->lx, &ln, 0, "values");
			for (int i = 0; !e && i < NODE_ALWAYS; i++)
				if (!(seen & (1u << i)))
					e = lfs_lex_fail(&P->lx, &ln, 0,
							 "this node has no '%s' line (every node "
							 "has parent, right, up, front and position)",
							 node_once[i]);
			break;
		} else if (lfs_tok_is(k, "parent")) {
			e = p_name_arg(P, &ln, &nd->parent);
		} else if (lfs_tok_is(k, "right")) {
			e = p_kw_floats(P, &ln, nd->m, 3);
		} else if (lfs_tok_is(k, "up")) {
			e = p_kw_floats(P, &ln, nd->m + 3, 3);
		} else if (lfs_tok_is(k, "front")) {
			e = p_kw_floats(P, &ln, nd->m + 6, 3);
		} else if (lfs_tok_is(k, "position")) {
			e = p_kw_floats(P, &ln, nd->m + 9, 3);
		} else if (lfs_tok_is(k, "emitter")) {
			e = need(P, &ln, nd->type == SOD_EMITTER, "'emitter' belongs to emitter nodes only");
			if (!e)
				e = p_name_arg(P, &ln, &nd->emitter);
		} else if (mesh_kw) {
			e = p_mesh_field(P, &ln, me, &groups);
		} else {
			e = lfs_lex_fail(&P->lx, &ln, 0, "unknown node field '%.*s'",
					 (int)(k->len > 40 ? 40 : k->len), k->s);
		}
		if (e)
			break;
	}
	if (!e && me && groups.n) {
		me->groups = sod_alloc(P->m, groups.n * sizeof(sod_group));
		if (!me->groups)
			e = lfs_nomem(P->err, "model.txt");
		else {
			memcpy(me->groups, groups.p, groups.n * sizeof(sod_group));
			me->n_groups = (uint16_t)groups.n;
		}
	}
	free(groups.p);
	return e;
}

static lfs_err p_channel(tparse *P, const lfs_line *open, sod_channel *c)
{
	LFS_TRY(p_name_arg(P, open, &c->node));
	lfs_line ln;
	bool have_keys = false;
	for (;;) {
		LFS_TRY(p_next(P, &ln, open, "endchannel"));
		const lfs_tok *k = &ln.tok[0];
		int64_t v;
		if (lfs_tok_is(k, "endchannel")) {
			return lfs_lex_arity(&P->lx, &ln, 0, "values");
		} else if (lfs_tok_is(k, "type")) {
			LFS_TRY(need(P, &ln, !have_keys, "'type' must come before 'keys'"));
			LFS_TRY(p_kw_int(P, &ln, UINT16_MAX, &v));
			if (v != SOD_CHAN_MATRIX && v != SOD_CHAN_SCALE)
				return lfs_lex_fail(&P->lx, &ln, 1,
						    "channel type must be 0 (matrix) or 5 (scale)");
			c->type = (uint16_t)v;
		} else if (lfs_tok_is(k, "period")) {
			LFS_TRY(p_kw_floats(P, &ln, &c->period, 1));
		} else if (lfs_tok_is(k, "keys")) {
			have_keys = true;
			LFS_TRY(p_float_rows(P, &ln, &c->keys, &c->n_keys,
					 c->type == SOD_CHAN_MATRIX ? 12 : 1, "key"));
		} else {
			return lfs_lex_fail(&P->lx, &ln, 0, "unknown channel field '%.*s'",
					    (int)(k->len > 40 ? 40 : k->len), k->s);
		}
	}
}

static lfs_err p_ref(tparse *P, const lfs_line *open, sod_ref *r)
{
	LFS_TRY(p_name_arg(P, open, &r->node));
	lfs_line ln;
	for (;;) {
		LFS_TRY(p_next(P, &ln, open, "endreference"));
		const lfs_tok *k = &ln.tok[0];
		int64_t v;
		if (lfs_tok_is(k, "endreference")) {
			return lfs_lex_arity(&P->lx, &ln, 0, "values");
		} else if (lfs_tok_is(k, "type")) {
			LFS_TRY(p_kw_int(P, &ln, 255, &v));
			r->type = (uint8_t)v;
		} else if (lfs_tok_is(k, "anim")) {
			LFS_TRY(p_name_arg(P, &ln, &r->anim));
		} else if (lfs_tok_is(k, "offset")) {
			LFS_TRY(need(P, &ln, P->L.ref_offset, "'offset' exists only in version 1.8 and later"));
			LFS_TRY(p_kw_floats(P, &ln, &r->offset, 1));
		} else {
			return lfs_lex_fail(&P->lx, &ln, 0, "unknown reference field '%.*s'",
					    (int)(k->len > 40 ? 40 : k->len), k->s);
		}
	}
}

static lfs_err p_top(tparse *P, vec *mats, vec *nodes, vec *chans, vec *refs)
{
	sod_model *m = P->m;
	lfs_line ln;
	for (;;) {
		int r = lfs_lex_next(&P->lx, &ln);
		if (r < 0)
			return LFS_ERR_PARSE;
		if (r == 0)
			break;
		const lfs_tok *k = &ln.tok[0];
		if (lfs_tok_is(k, "magic")) {
			LFS_TRY(lfs_lex_arity(&P->lx, &ln, 1, "value"));
			if (lfs_tok_is(&ln.tok[1], "Storm3D_SW") && !memcmp(ln.tok[1].s, "Storm3D_SW", 10))
				m->startrekdb = false;
			else if (lfs_tok_is(&ln.tok[1], "StarTrekDB") && !memcmp(ln.tok[1].s, "StarTrekDB", 10))
				m->startrekdb = true;
			else
				return lfs_lex_fail(&P->lx, &ln, 1, "magic must be Storm3D_SW or StarTrekDB");
		} else if (lfs_tok_is(k, "version")) {
			LFS_TRY(need(P, &ln, !P->have_version, "duplicate 'version'"));
			LFS_TRY(need(P, &ln, !P->have_content, "'version' must come before the first block"));
			LFS_TRY(lfs_lex_arity(&P->lx, &ln, 1, "number"));
			float f;
			LFS_TRY(lfs_lex_f32(&P->lx, &ln, 1, &f));
			sod_ver v;
			if (!sod_ver_of(f, &v))
				return lfs_lex_fail(&P->lx, &ln, 1,
						    "unsupported SOD version (known: 1.4, 1.5, 1.6, 1.7, 1.8, "
						    "1.9, 1.91, 1.92, 1.93)");
			m->version = f;
			m->ver = v;
			P->L = sod_layout_of(v);
			P->have_version = true;
		} else if (lfs_tok_is(k, "legacy")) {
			LFS_TRY(p_version_first(P, &ln));
			LFS_TRY(need(P, &ln, P->L.legacy, "'legacy' exists only in versions 1.4 to 1.6"));
			LFS_TRY(need(P, &ln, !m->legacy, "duplicate 'legacy'"));
			int64_t n;
			LFS_TRY(p_count(P, &ln, &n));
			lfs_line head = ln;
			m->n_legacy = (uint16_t)n;
			m->legacy = sod_alloc(m, (size_t)n * sizeof(sod_legacy) + 1);
			if (!m->legacy)
				return lfs_nomem(P->err, "model.txt");
			for (int64_t i = 0; i < n; i++) {
				LFS_TRY(p_row(P, &ln, &head, 3, "legacy", (size_t)i, (size_t)n));
				LFS_TRY(p_str(P, &ln, 0, &m->legacy[i].a));
				LFS_TRY(p_str(P, &ln, 1, &m->legacy[i].b));
				LFS_TRY(lfs_lex_hex(&P->lx, &ln, 2, m->legacy[i].bytes, 7));
			}
		} else if (lfs_tok_is(k, "material") || lfs_tok_is(k, "node") ||
			   lfs_tok_is(k, "channel") || lfs_tok_is(k, "reference")) {
			LFS_TRY(p_version_first(P, &ln));
			vec *v = lfs_tok_is(k, "material") ? mats
				 : lfs_tok_is(k, "node")   ? nodes
				 : lfs_tok_is(k, "channel") ? chans : refs;
			if (v->n == UINT16_MAX)
				return lfs_lex_fail(&P->lx, &ln, 0, "more than 65535 %.*s blocks",
						    (int)k->len, k->s);
			if (v == refs && !P->L.refs_count)
				return lfs_lex_fail(&P->lx, &ln, 0,
						    "versions 1.4 and 1.5 have no animation references");
			void *slot = vec_push(v);
			if (!slot)
				return lfs_nomem(P->err, "model.txt");
			if (v == mats)
				LFS_TRY(p_material(P, &ln, slot));
			else if (v == nodes)
				LFS_TRY(p_node(P, &ln, slot));
			else if (v == chans)
				LFS_TRY(p_channel(P, &ln, slot));
			else
				LFS_TRY(p_ref(P, &ln, slot));
		} else if (lfs_tok_is(k, "trailing")) {
			LFS_TRY(p_version_first(P, &ln));
			LFS_TRY(need(P, &ln, !m->trailing, "duplicate 'trailing'"));
			int64_t n;
			LFS_TRY(lfs_lex_arity(&P->lx, &ln, 1, "integer"));
			LFS_TRY(lfs_lex_int(&P->lx, &ln, 1, 1, INT32_MAX, &n));
			if ((size_t)n / 2 > (size_t)(P->lx.end - P->lx.p))
				return lfs_lex_fail(&P->lx, &ln, 1, "more trailing bytes than the text holds");
			lfs_line head = ln;
			m->trailing = sod_alloc(m, (size_t)n);
			if (!m->trailing)
				return lfs_nomem(P->err, "model.txt");
			m->n_trailing = (size_t)n;
			size_t got = 0, row = 0, rows = ((size_t)n + 31) / 32;
			while (got < (size_t)n) {
				LFS_TRY(p_row(P, &ln, &head, 1, "trailing bytes", row, rows));
				size_t len = ln.tok[0].len / 2;
				if (len == 0 || len > (size_t)n - got)
					return lfs_lex_fail(&P->lx, &ln, 0,
							    "hex row does not fit the %lld trailing bytes",
							    (long long)n);
				LFS_TRY(lfs_lex_hex(&P->lx, &ln, 0, m->trailing + got, len));
				got += len;
				row++;
			}
		} else {
			return lfs_lex_fail(&P->lx, &ln, 0, "unknown keyword '%.*s'",
					    (int)(k->len > 40 ? 40 : k->len), k->s);
		}
	}
	if (!P->have_version)
		return lfs_fail_at(P->err, P->lx.file, P->lx.line ? P->lx.line : 1, 1,
				   "missing 'version' line");
	return LFS_OK;
}

static bool move_vec(sod_model *m, vec *v, void **dst, uint16_t *count)
{
	*count = (uint16_t)v->n;
	if (!v->n)
		return true;
	*dst = sod_alloc(m, v->n * v->sz);
	if (!*dst)
		return false;
	memcpy(*dst, v->p, v->n * v->sz);
	return true;
}

lfs_err sod_text_parse(const char *file, const char *text, size_t n, sod_model **out,
		       lfs_error *err)
{
	*out = NULL;
	tparse P = { 0 };
	P.err = err;
	P.m = sod_model_new();
	P.sbuf = malloc(65537);
	vec mats = { .sz = sizeof(sod_material) }, nodes = { .sz = sizeof(sod_node) };
	vec chans = { .sz = sizeof(sod_channel) }, refs = { .sz = sizeof(sod_ref) };
	lfs_err e;
	if (!P.m || !P.sbuf) {
		e = lfs_nomem(P.err, "model.txt");
	} else {
		lfs_lex_init(&P.lx, file, text, n, err);
		e = p_top(&P, &mats, &nodes, &chans, &refs);
		if (!e && !(move_vec(P.m, &mats, (void **)&P.m->materials, &P.m->n_materials) &&
			    move_vec(P.m, &nodes, (void **)&P.m->nodes, &P.m->n_nodes) &&
			    move_vec(P.m, &chans, (void **)&P.m->channels, &P.m->n_channels) &&
			    move_vec(P.m, &refs, (void **)&P.m->refs, &P.m->n_refs)))
			e = lfs_nomem(P.err, "model.txt");
	}
	free(mats.p);
	free(nodes.p);
	free(chans.p);
	free(refs.p);
	free(P.sbuf);
	if (e) {
		sod_model_free(P.m);
		return e;
	}
	*out = P.m;
	return LFS_OK;
}
