/**
 * @file nod_text.c
 * model.txt of a NOD model: writer and parser (dialect: docs/formats/nod.md).
 */
#include "nod_views.h"

#include "common/floatfmt.h"
#include "common/mem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- floats ----------------------------------------------------------------- */

/* ---- names ------------------------------------------------------------------ */

lfs_err nod_group_names(const nod_model *m, lfs_nameset *set, const char **names, lfs_error *err)
{
	char raw[NOD_NAME_SIZE + 32];
	for (uint32_t g = 0; g < m->n_groups; g++) {
		uint8_t mi = m->groups[g].mesh;
		if (mi < m->n_meshes) {
			size_t l = nod_name_len(&m->meshes[mi]);
			memcpy(raw, m->meshes[mi].raw, l);
			snprintf(raw + l, sizeof(raw) - l, ".%u", (unsigned)g);
		} else {
			snprintf(raw, sizeof(raw), "mesh%u.%u", (unsigned)mi, (unsigned)g);
		}
		names[g] = lfs_nameset_add(set, raw);
		if (!names[g])
			return lfs_nomem(err, "views");
	}
	return LFS_OK;
}

/* ---- writer ----------------------------------------------------------------- */

static void put_name_row(lfs_sb *sb, const nod_name *nm)
{
	lfs_sb_puts(sb, "  ");
	lfs_sb_name(sb, (const char *)nm->raw, nod_name_len(nm));
	if (!nod_name_canonical(nm)) {
		lfs_sb_putc(sb, ' ');
		lfs_sb_hex(sb, nm->raw, NOD_NAME_SIZE);
	}
	lfs_sb_putc(sb, '\n');
}

static void put_vec(lfs_sb *sb, const char *kw, const float *f, size_t n)
{
	lfs_sb_puts(sb, kw);
	lfs_sb_putc(sb, ' ');
	lfs_sb_floats_bits(sb, f, n, ' ');
	lfs_sb_putc(sb, '\n');
}

lfs_err nod_text_write(const nod_model *m, lfs_sb *sb, lfs_error *err)
{
	lfs_nameset set;
	lfs_nameset_init(&set);
	const char **gn = calloc(m->n_groups ? m->n_groups : 1, sizeof(*gn));
	if (!gn || nod_group_names(m, &set, gn, err)) {
		free(gn);
		lfs_nameset_free(&set);
		return lfs_nomem(err, "views");
	}

	lfs_sb_puts(sb, "# legacyfs: text view of a NOD model (Vampire: The Masquerade - Redemption)\n"
			"# dialect: docs/formats/nod.md; model space, Z up, rest pose\n");
	lfs_sb_printf(sb, "nodversion %u\n", (unsigned)m->version);
	lfs_sb_printf(sb, "# modelflags: haslod=%u inline=%u static=%u other=0x%x\n",
		      (unsigned)(m->flags & 1), (unsigned)(m->flags >> 1 & 1),
		      (unsigned)(m->flags >> 2 & 1), (unsigned)(m->flags & ~7u));
	lfs_sb_printf(sb, "modelflags %u\n", (unsigned)m->flags);
	put_vec(sb, "boundsmin", m->bounds, 3);
	put_vec(sb, "boundsmax", m->bounds + 3, 3);

	lfs_sb_printf(sb, "materials %u\n", (unsigned)m->n_materials);
	for (uint32_t i = 0; i < m->n_materials; i++)
		put_name_row(sb, &m->materials[i]);

	lfs_sb_printf(sb, "bones %u\n", (unsigned)m->n_bones);
	for (uint32_t i = 0; i < m->n_bones; i++) {
		const nod_bone *b = &m->bones[i];
		lfs_sb_printf(sb, "node bone bone%u\n", (unsigned)i);
		put_vec(sb, "  resttranslate", b->translate, 3);
		put_vec(sb, "  restinverse x", b->inverse, 3);
		put_vec(sb, "  restinverse y", b->inverse + 3, 3);
		put_vec(sb, "  restinverse z", b->inverse + 6, 3);
		put_vec(sb, "  restinverse t", b->inverse + 9, 3);
		lfs_sb_printf(sb, "  sibling %d\n  child %d\n  parent %d\nendnode\n", b->sibling,
			      b->child, b->parent);
	}

	lfs_sb_printf(sb, "meshes %u\n", (unsigned)m->n_meshes);
	for (uint32_t i = 0; i < m->n_meshes; i++)
		put_name_row(sb, &m->meshes[i]);

	lfs_sb_printf(sb, "verts %u\n", (unsigned)m->n_verts);
	lfs_sb_puts(sb, "  # x y z  nx ny nz  u v  weight bone pad(3 bytes hex)\n");
	uint32_t g = 0;
	for (uint32_t i = 0; i < m->n_verts; i++) {
		for (; g < m->n_groups && m->groups[g].first_vert <= i; g++)
			if (m->groups[g].n_verts && m->groups[g].first_vert == i)
				lfs_sb_printf(sb, "  # group %u (meshes/%s.obj): %u vertices\n",
					      (unsigned)g, gn[g], (unsigned)m->groups[g].n_verts);
		const nod_vertex *v = &m->verts[i];
		lfs_sb_puts(sb, "  ");
		lfs_sb_floats_bits(sb, v->pos, 3, ' ');
		lfs_sb_putc(sb, ' ');
		lfs_sb_floats_bits(sb, v->normal, 3, ' ');
		lfs_sb_putc(sb, ' ');
		lfs_sb_floats_bits(sb, v->uv, 2, ' ');
		lfs_sb_putc(sb, ' ');
		lfs_sb_float_bits(sb, v->weight);
		lfs_sb_printf(sb, " %u ", (unsigned)v->bone);
		lfs_sb_hex(sb, v->pad, 3);
		lfs_sb_putc(sb, '\n');
	}

	if (m->flags & NOD_MODEL_HASLOD) {
		lfs_sb_printf(sb, "lodcollapse %u\n", (unsigned)m->n_verts);
		for (uint32_t i = 0; i < m->n_verts; i++)
			lfs_sb_printf(sb, "  %u\n", (unsigned)m->lod[i]);
	}

	lfs_sb_printf(sb, "faces %u\n", (unsigned)m->n_faces);
	g = 0;
	for (uint32_t i = 0; i < m->n_faces; i++) {
		for (; g < m->n_groups && m->groups[g].first_face <= i; g++)
			if (m->groups[g].n_faces && m->groups[g].first_face == i)
				lfs_sb_printf(sb,
					      "  # group %u: %u faces, vertex indices local to the group\n",
					      (unsigned)g, (unsigned)m->groups[g].n_faces);
		const nod_face *f = &m->faces[i];
		lfs_sb_printf(sb, "  %u %u %u\n", f->v[0], f->v[1], f->v[2]);
	}

	lfs_sb_printf(sb, "groups %u\n", (unsigned)m->n_groups);
	for (uint32_t i = 0; i < m->n_groups; i++) {
		const nod_group *gr = &m->groups[i];
		lfs_sb_printf(sb, "node meshgroup %u\n", (unsigned)i);
		lfs_sb_printf(sb, "  # meshes/%s.obj: vertices %u.., faces %u..\n", gn[i],
			      (unsigned)gr->first_vert, (unsigned)gr->first_face);
		lfs_sb_printf(sb, "  material %d\n", gr->material);
		lfs_sb_puts(sb, "  reserved ");
		lfs_sb_hex(sb, gr->reserved, 12);
		lfs_sb_printf(sb, "\n  numfaces %u\n  numverts %u\n  minverts %u\n", gr->n_faces,
			      gr->n_verts, gr->min_verts);
		lfs_sb_printf(sb,
			      "  # groupflags: haslod=%u noweights=%u noskinning=%u multitexture=%u "
			      "other=0x%x\n",
			      gr->flags & 1u, gr->flags >> 1 & 1u, gr->flags >> 2 & 1u,
			      gr->flags >> 3 & 1u, gr->flags & ~15u & 0xffffu);
		lfs_sb_printf(sb, "  groupflags %u\n  bone %u\n  mesh %u\n  pad ", gr->flags,
			      gr->bone, gr->mesh);
		lfs_sb_hex(sb, gr->pad, 2);
		lfs_sb_puts(sb, "\nendnode\n");
	}
	if (m->n_trailing) {
		lfs_sb_printf(sb, "# %zu bytes after the last group\ntrailing ", m->n_trailing);
		lfs_sb_hex(sb, m->trailing, m->n_trailing);
		lfs_sb_putc(sb, '\n');
	}
	free(gn);
	lfs_nameset_free(&set);
	if (!lfs_sb_ok(sb))
		return lfs_nomem(err, "model.txt");
	return LFS_OK;
}

/* ---- parser ----------------------------------------------------------------- */

typedef struct tp {
	lfs_lex lx;
	lfs_line ln;
} tp;

/* Next line; at end of input fail "expected <what>" at the last line. */
static lfs_err next_line(tp *p, const char *what)
{
	int r = lfs_lex_next(&p->lx, &p->ln);
	if (r < 0)
		return LFS_ERR_PARSE;
	if (r == 0)
		return lfs_fail_at(p->lx.err, p->lx.file, p->lx.line ? p->lx.line : 1, 1,
				   "unexpected end of text, expected %s", what);
	return LFS_OK;
}

/* Next line must start with keyword @p kw. */
static lfs_err expect_kw(tp *p, const char *kw)
{
	lfs_err r = next_line(p, kw);
	if (r)
		return r;
	if (!lfs_tok_is(&p->ln.tok[0], kw)) {
		char got[40];
		uint32_t l = p->ln.tok[0].len < 39 ? p->ln.tok[0].len : 39;
		memcpy(got, p->ln.tok[0].s, l);
		got[l] = 0;
		return lfs_lex_fail(&p->lx, &p->ln, 0, "expected '%s', found '%s'", kw, got);
	}
	return LFS_OK;
}

/* "kw <int>" */
static lfs_err kw_int(tp *p, const char *kw, int64_t min, int64_t max, int64_t *v)
{
	lfs_err r = expect_kw(p, kw);
	if (!r)
		r = lfs_lex_arity(&p->lx, &p->ln, 1, "number");
	if (!r)
		r = lfs_lex_int(&p->lx, &p->ln, 1, min, max, v);
	return r;
}

/* "kw f f f" (n floats after @p skip extra keyword tokens) */
static lfs_err kw_floats(tp *p, const char *kw, const char *sub, float *f, uint32_t n)
{
	lfs_err r = expect_kw(p, kw);
	if (r)
		return r;
	uint32_t base = 1;
	if (sub) {
		if (p->ln.ntok < 2 || !lfs_tok_is(&p->ln.tok[1], sub))
			return lfs_lex_fail(&p->lx, &p->ln, 1, "expected '%s %s'", kw, sub);
		base = 2;
	}
	if (p->ln.ntok != base + n)
		return lfs_lex_fail(&p->lx, &p->ln, p->ln.ntok < base + n ? p->ln.ntok : base + n,
				    "expected %u numbers after '%s%s%s', found %u", n, kw,
				    sub ? " " : "", sub ? sub : "", p->ln.ntok - base);
	for (uint32_t i = 0; i < n; i++) {
		r = lfs_lex_f32(&p->lx, &p->ln, base + i, &f[i]);
		if (r)
			return r;
	}
	return LFS_OK;
}

static lfs_err kw_hex(tp *p, const char *kw, uint8_t *out, size_t n)
{
	lfs_err r = expect_kw(p, kw);
	if (!r)
		r = lfs_lex_arity(&p->lx, &p->ln, 1, "hex value");
	if (!r)
		r = lfs_lex_hex(&p->lx, &p->ln, 1, out, n);
	return r;
}

static lfs_err name_row(tp *p, nod_name *nm, const char *what)
{
	lfs_err r = next_line(p, what);
	if (r)
		return r;
	if (p->ln.ntok > 2)
		return lfs_lex_fail(&p->lx, &p->ln, 2, "expected a name and at most its raw bytes");
	char s[NOD_NAME_SIZE + 1];
	size_t len;
	r = lfs_lex_str(&p->lx, &p->ln, 0, s, sizeof(s), &len);
	if (r)
		return r;
	if (memchr(s, 0, len))
		return lfs_lex_fail(&p->lx, &p->ln, 0, "a NUL byte cannot be part of a name");
	memset(nm->raw, 0, NOD_NAME_SIZE);
	memcpy(nm->raw, s, len);
	if (p->ln.ntok == 2) {
		nod_name raw;
		r = lfs_lex_hex(&p->lx, &p->ln, 1, raw.raw, NOD_NAME_SIZE);
		if (r)
			return r;
		if (nod_name_len(&raw) != len || memcmp(raw.raw, s, len))
			return lfs_lex_fail(&p->lx, &p->ln, 1,
					    "the raw bytes do not start with the name; edit both or "
					    "drop the raw bytes");
		*nm = raw;
	}
	return LFS_OK;
}

static lfs_err count_kw(tp *p, const char *kw, int64_t max, int64_t *v)
{
	return kw_int(p, kw, 0, max, v);
}

static lfs_err parse_bone(tp *p, uint32_t i, nod_bone *b)
{
	lfs_err r = expect_kw(p, "node");
	if (r)
		return r;
	char want[24];
	snprintf(want, sizeof(want), "bone%u", (unsigned)i);
	if (p->ln.ntok != 3 || !lfs_tok_is(&p->ln.tok[1], "bone") || !lfs_tok_is(&p->ln.tok[2], want))
		return lfs_lex_fail(&p->lx, &p->ln, p->ln.ntok < 3 ? p->ln.ntok : 1,
				    "expected 'node bone %s' (bones are numbered in file order)", want);
	if ((r = kw_floats(p, "resttranslate", NULL, b->translate, 3)) ||
	    (r = kw_floats(p, "restinverse", "x", b->inverse, 3)) ||
	    (r = kw_floats(p, "restinverse", "y", b->inverse + 3, 3)) ||
	    (r = kw_floats(p, "restinverse", "z", b->inverse + 6, 3)) ||
	    (r = kw_floats(p, "restinverse", "t", b->inverse + 9, 3)))
		return r;
	int64_t v;
	if ((r = kw_int(p, "sibling", INT16_MIN, INT16_MAX, &v)))
		return r;
	b->sibling = (int16_t)v;
	if ((r = kw_int(p, "child", INT16_MIN, INT16_MAX, &v)))
		return r;
	b->child = (int16_t)v;
	if ((r = kw_int(p, "parent", INT16_MIN, INT16_MAX, &v)))
		return r;
	b->parent = (int16_t)v;
	if ((r = expect_kw(p, "endnode")))
		return r;
	return lfs_lex_arity(&p->lx, &p->ln, 0, "values");
}

static lfs_err parse_group(tp *p, uint32_t i, nod_group *g)
{
	lfs_err r = expect_kw(p, "node");
	if (r)
		return r;
	char want[24];
	snprintf(want, sizeof(want), "%u", (unsigned)i);
	if (p->ln.ntok != 3 || !lfs_tok_is(&p->ln.tok[1], "meshgroup") ||
	    !lfs_tok_is(&p->ln.tok[2], want))
		return lfs_lex_fail(&p->lx, &p->ln, p->ln.ntok < 3 ? p->ln.ntok : 1,
				    "expected 'node meshgroup %s' (groups are numbered in file order)",
				    want);
	int64_t v;
	if ((r = kw_int(p, "material", INT32_MIN, INT32_MAX, &v)))
		return r;
	g->material = (int32_t)v;
	if ((r = kw_hex(p, "reserved", g->reserved, 12)))
		return r;
	if ((r = kw_int(p, "numfaces", 0, UINT16_MAX, &v)))
		return r;
	g->n_faces = (uint16_t)v;
	if ((r = kw_int(p, "numverts", 0, UINT16_MAX, &v)))
		return r;
	g->n_verts = (uint16_t)v;
	if ((r = kw_int(p, "minverts", 0, UINT16_MAX, &v)))
		return r;
	g->min_verts = (uint16_t)v;
	if ((r = kw_int(p, "groupflags", 0, UINT16_MAX, &v)))
		return r;
	g->flags = (uint16_t)v;
	if ((r = kw_int(p, "bone", 0, UINT8_MAX, &v)))
		return r;
	g->bone = (uint8_t)v;
	if ((r = kw_int(p, "mesh", 0, UINT8_MAX, &v)))
		return r;
	g->mesh = (uint8_t)v;
	if ((r = kw_hex(p, "pad", g->pad, 2)))
		return r;
	if ((r = expect_kw(p, "endnode")))
		return r;
	return lfs_lex_arity(&p->lx, &p->ln, 0, "values");
}

static lfs_err parse_vertex(tp *p, nod_vertex *v)
{
	lfs_err r = next_line(p, "a vertex row");
	if (r)
		return r;
	if (p->ln.ntok != 11)
		return lfs_lex_fail(&p->lx, &p->ln, p->ln.ntok < 11 ? p->ln.ntok : 11,
				    "a vertex row has 11 values (x y z nx ny nz u v weight bone pad), "
				    "found %u", p->ln.ntok);
	float f[9];
	for (uint32_t k = 0; k < 9; k++)
		if ((r = lfs_lex_f32(&p->lx, &p->ln, k, &f[k])))
			return r;
	memcpy(v->pos, f, sizeof(v->pos));
	memcpy(v->normal, f + 3, sizeof(v->normal));
	memcpy(v->uv, f + 6, sizeof(v->uv));
	v->weight = f[8];
	int64_t b;
	if ((r = lfs_lex_int(&p->lx, &p->ln, 9, 0, UINT8_MAX, &b)))
		return r;
	v->bone = (uint8_t)b;
	return lfs_lex_hex(&p->lx, &p->ln, 10, v->pad, 3);
}

/* Counts come from the text: allocations are bounded by the number of rows
 * actually present, because each row is parsed before the array grows past it. */
#define GROW(arr, cap, need)                                        \
	do {                                                        \
		void *g_ = (arr);                                   \
		if (!lfs_grow(&g_, &(cap), (need), sizeof(*(arr)))) \
			goto nomem;                                 \
		(arr) = g_;                                         \
	} while (0)

/* lodcollapse: one word per vertex (the model has NOD_MODEL_HASLOD). */
static lfs_err parse_lod(tp *p, nod_model *m)
{
	lfs_err r;
	int64_t v;
	if ((r = count_kw(p, "lodcollapse", UINT32_MAX, &v)))
		return r;
	if ((uint64_t)v != m->n_verts) {
		r = lfs_lex_fail(&p->lx, &p->ln, 1,
				 "lodcollapse has one word per vertex: expected %u",
				 (unsigned)m->n_verts);
		return r;
	}
	m->lod = calloc(m->n_verts ? m->n_verts : 1, sizeof(uint16_t));
	if (!m->lod)
		return lfs_nomem(p->lx.err, "model.txt");
	for (uint32_t i = 0; i < m->n_verts; i++) {
		if ((r = next_line(p, "a lod collapse word")) ||
		    (r = lfs_lex_arity(&p->lx, &p->ln, 0, "values")) ||
		    (r = lfs_lex_int(&p->lx, &p->ln, 0, 0, UINT16_MAX, &v)))
			return r;
		m->lod[i] = (uint16_t)v;
	}
	return LFS_OK;
}

/* faces N and its rows of 3 vertex indices. */
static lfs_err parse_faces(tp *p, nod_model *m)
{
	lfs_err r;
	int64_t v;
	size_t cap = 0;
	if ((r = count_kw(p, "faces", UINT32_MAX, &v)))
		return r;
	for (int64_t i = 0; i < v; i++) {
		GROW(m->faces, cap, (size_t)i + 1);
		if ((r = next_line(p, "a face row")))
			return r;
		if (p->ln.ntok != 3) {
			r = lfs_lex_fail(&p->lx, &p->ln, p->ln.ntok < 3 ? p->ln.ntok : 3,
					 "a face row has 3 vertex indices, found %u", p->ln.ntok);
			return r;
		}
		for (uint32_t k = 0; k < 3; k++) {
			int64_t x;
			if ((r = lfs_lex_int(&p->lx, &p->ln, k, 0, UINT16_MAX, &x)))
				return r;
			m->faces[i].v[k] = (uint16_t)x;
		}
		m->n_faces = (uint32_t)i + 1;
	}
	return LFS_OK;
nomem:
	return lfs_nomem(p->lx.err, "model.txt");
}

/* The end of the text, or `trailing HEX` and then the end. */
static lfs_err parse_trailing(tp *p, nod_model *m)
{
	lfs_err r;
	int lr = lfs_lex_next(&p->lx, &p->ln);
	if (lr < 0) {
		return LFS_ERR_PARSE;
	}
	if (lr == 1) {
		if (!lfs_tok_is(&p->ln.tok[0], "trailing")) {
			r = lfs_lex_fail(&p->lx, &p->ln, 0, "expected 'trailing' or the end of the text");
			return r;
		}
		if ((r = lfs_lex_arity(&p->lx, &p->ln, 1, "hex value")))
			return r;
		size_t tl = p->ln.tok[1].len;
		if (tl % 2 || tl == 0) {
			r = lfs_lex_fail(&p->lx, &p->ln, 1, "expected an even number of hex digits");
			return r;
		}
		m->trailing = malloc(tl / 2);
		if (!m->trailing)
			return lfs_nomem(p->lx.err, "model.txt");
		if ((r = lfs_lex_hex(&p->lx, &p->ln, 1, m->trailing, tl / 2)))
			return r;
		m->n_trailing = tl / 2;
		lr = lfs_lex_next(&p->lx, &p->ln);
		if (lr < 0) {
			return LFS_ERR_PARSE;
		}
		if (lr == 1) {
			r = lfs_lex_fail(&p->lx, &p->ln, 0, "text after 'trailing'");
			return r;
		}
	}
	return LFS_OK;
}

lfs_err nod_text_parse(const char *file, const char *text, size_t n, nod_model **out,
		       lfs_error *err)
{
	*out = NULL;
	tp *p = calloc(1, sizeof(*p));
	nod_model *m = calloc(1, sizeof(*m));
	if (!p || !m) {
		free(p);
		free(m);
		return lfs_nomem(err, "model.txt");
	}
	lfs_lex_init(&p->lx, file, text, n, err);
	lfs_err r;
	int64_t v;
	size_t cap;

	if ((r = kw_int(p, "nodversion", 0, UINT32_MAX, &v)))
		goto fail;
	if (v != NOD_VERSION) {
		r = lfs_lex_fail(&p->lx, &p->ln, 1, "only NOD version 7 is supported");
		goto fail;
	}
	m->version = (uint32_t)v;
	if ((r = kw_int(p, "modelflags", 0, UINT32_MAX, &v)))
		goto fail;
	m->flags = (uint32_t)v;
	if ((r = kw_floats(p, "boundsmin", NULL, m->bounds, 3)) ||
	    (r = kw_floats(p, "boundsmax", NULL, m->bounds + 3, 3)))
		goto fail;

	if ((r = count_kw(p, "materials", UINT32_MAX, &v)))
		goto fail;
	cap = 0;
	for (int64_t i = 0; i < v; i++) {
		GROW(m->materials, cap, (size_t)i + 1);
		if ((r = name_row(p, &m->materials[i], "a material name")))
			goto fail;
		m->n_materials = (uint32_t)i + 1;
	}

	if ((r = count_kw(p, "bones", UINT16_MAX, &v)))
		goto fail;
	cap = 0;
	for (int64_t i = 0; i < v; i++) {
		GROW(m->bones, cap, (size_t)i + 1);
		if ((r = parse_bone(p, (uint32_t)i, &m->bones[i])))
			goto fail;
		m->n_bones = (uint16_t)(i + 1);
	}

	if ((r = count_kw(p, "meshes", UINT16_MAX, &v)))
		goto fail;
	cap = 0;
	for (int64_t i = 0; i < v; i++) {
		GROW(m->meshes, cap, (size_t)i + 1);
		if ((r = name_row(p, &m->meshes[i], "a mesh name")))
			goto fail;
		m->n_meshes = (uint16_t)(i + 1);
	}

	if ((r = count_kw(p, "verts", UINT32_MAX, &v)))
		goto fail;
	cap = 0;
	for (int64_t i = 0; i < v; i++) {
		GROW(m->verts, cap, (size_t)i + 1);
		if ((r = parse_vertex(p, &m->verts[i])))
			goto fail;
		m->n_verts = (uint32_t)i + 1;
	}

	if ((m->flags & NOD_MODEL_HASLOD) && (r = parse_lod(p, m)))
		goto fail;

	if ((r = parse_faces(p, m)))
		goto fail;

	if ((r = count_kw(p, "groups", UINT16_MAX, &v)))
		goto fail;
	lfs_line groups_line = p->ln;
	cap = 0;
	for (int64_t i = 0; i < v; i++) {
		GROW(m->groups, cap, (size_t)i + 1);
		memset(&m->groups[i], 0, sizeof(nod_group));
		if ((r = parse_group(p, (uint32_t)i, &m->groups[i])))
			goto fail;
		m->n_groups = (uint16_t)(i + 1);
	}
	lfs_error e2;
	if (nod_model_layout(m, &e2)) {
		const char *msg = e2.msg;
		size_t sl = strlen("mesh group: ");
		if (!strncmp(msg, "mesh group: ", sl))
			msg += sl;
		r = lfs_lex_fail(&p->lx, &groups_line, 0, "%s", msg);
		goto fail;
	}

	if ((r = parse_trailing(p, m)))
		goto fail;
	free(p);
	*out = m;
	return LFS_OK;
nomem:
	r = lfs_nomem(err, "model.txt");
fail:
	free(p);
	nod_model_free(m);
	return r;
}
