/**
 * @file nil_text.c
 * model.txt of a NIL level: writer and parser (see nil_text.h,
 * docs/formats/nil.md).
 */
#include "nil_text.h"

#include "common/floatfmt.h"
#include "common/mem.h"
#include "text/mdltext.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- writer ------------------------------------------------------------------ */

static void hex_block(lfs_sb *sb, const char *indent, const char *kw, const uint8_t *p, size_t n)
{
	lfs_sb_printf(sb, "%s%s %zu\n", indent, kw, n);
	for (size_t i = 0; i < n; i += NIL_HEX_ROW) {
		size_t k = n - i < NIL_HEX_ROW ? n - i : NIL_HEX_ROW;
		lfs_sb_printf(sb, "%s  ", indent);
		lfs_sb_hex(sb, p + i, k);
		lfs_sb_putc(sb, '\n');
	}
}

static void planes(lfs_sb *sb, const char *kw, const nil_plane *pl, size_t n)
{
	lfs_sb_printf(sb, "  %s %zu\n", kw, n);
	for (size_t i = 0; i < n; i++) {
		lfs_sb_puts(sb, "    ");
		lfs_sb_floats_bits(sb, pl[i].n, 3, ' ');
		lfs_sb_putc(sb, ' ');
		lfs_sb_float_bits(sb, pl[i].d);
		lfs_sb_putc(sb, '\n');
	}
}

static size_t sector_prefix_size(const nil_sector *s)
{
	return NIL_SECTOR_MIN + ((size_t)s->n_sector_planes + s->n_surface_planes) * NIL_PLANE_SIZE +
	       (size_t)s->n_bsp * NIL_BSP_NODE_SIZE + (size_t)s->n_vertices * NIL_VERTEX_SIZE +
	       (size_t)s->n_wedges * NIL_WEDGE_SIZE;
}

lfs_err nil_text_write(const nil_model *m, lfs_sb *sb, lfs_error *err)
{
	lfs_sb_puts(sb, "# legacyfs: Vampire: The Masquerade - Redemption level (NIL), read-only view\n"
			"# every byte of the file, in file order; docs/formats/nil.md says what is\n"
			"# decoded and why the rest is kept as hex\n");
	lfs_sb_printf(sb, "version %" PRIu32 "\n", m->version);
	lfs_sb_puts(sb, "magic ");
	lfs_sb_hex(sb, m->magic, NIL_MAGIC_SIZE);
	lfs_sb_puts(sb, "\n# GlobalLight (cRenderLight): field layout not public\n");
	hex_block(sb, "", "globallight", m->light, NIL_LIGHT_SIZE);
	lfs_sb_puts(sb, "ambient ");
	lfs_sb_floats_bits(sb, m->ambient, 3, ' ');
	lfs_sb_puts(sb, "\n# name [hex of the bytes after the name's NUL, when not all zero]\n");
	lfs_sb_printf(sb, "materials %" PRIu32 "\n", m->n_materials);
	for (uint32_t i = 0; i < m->n_materials; i++) {
		const uint8_t *raw = m->materials[i];
		size_t len = nil_name_len(raw);
		lfs_sb_puts(sb, "  ");
		lfs_sb_name(sb, (const char *)raw, len);
		bool pad = false;
		for (size_t k = len + 1; k < NIL_NAME_SIZE; k++)
			pad |= raw[k] != 0;
		if (pad) {
			lfs_sb_putc(sb, ' ');
			lfs_sb_hex(sb, raw + len + 1, NIL_NAME_SIZE - len - 1);
		}
		lfs_sb_putc(sb, '\n');
	}
	lfs_sb_printf(sb, "sectors %" PRIu32 "\n", m->n_sectors);
	size_t off = NIL_OFF_MATERIALS + (size_t)m->n_materials * NIL_NAME_SIZE + 4;
	for (uint32_t i = 0; i < m->n_decoded; i++) {
		const nil_sector *s = &m->sectors[i];
		lfs_sb_printf(sb, "# sector %" PRIu32 " at file offset %zu (%s)\n", i, off,
			      i ? "located by search" : "read in sequence");
		lfs_sb_printf(sb, "node sector %" PRIu32 "\n", i);
		lfs_sb_printf(sb, "  flags %" PRIu32 "\n", s->flags);
		lfs_sb_puts(sb, "  ambient ");
		lfs_sb_floats_bits(sb, s->ambient, 3, ' ');
		lfs_sb_puts(sb, "\n  # planes: normal x y z, distance\n");
		planes(sb, "sectorplanes", s->sector_planes, s->n_sector_planes);
		planes(sb, "surfaceplanes", s->surface_planes, s->n_surface_planes);
		lfs_sb_puts(sb, "  # BSP nodes: four 16-bit words each, meaning not public\n");
		lfs_sb_printf(sb, "  bspnodes %u\n", (unsigned)s->n_bsp);
		for (size_t j = 0; j < s->n_bsp; j++)
			lfs_sb_printf(sb, "    %u %u %u %u\n", s->bsp[j].w[0], s->bsp[j].w[1],
				      s->bsp[j].w[2], s->bsp[j].w[3]);
		lfs_sb_printf(sb, "  verts %u\n", (unsigned)s->n_vertices);
		for (size_t j = 0; j < s->n_vertices; j++) {
			lfs_sb_puts(sb, "    ");
			lfs_sb_floats_bits(sb, s->vertices + 3 * j, 3, ' ');
			lfs_sb_putc(sb, '\n');
		}
		lfs_sb_puts(sb, "  # sector vertices: vert base r g b a u v lightmap_u lightmap_v\n");
		lfs_sb_printf(sb, "  wedges %u\n", (unsigned)s->n_wedges);
		for (size_t j = 0; j < s->n_wedges; j++) {
			const nil_wedge *w = &s->wedges[j];
			lfs_sb_printf(sb, "    %u %u %u %u %u %u ", w->vertex, w->base, w->rgba[0],
				      w->rgba[1], w->rgba[2], w->rgba[3]);
			lfs_sb_floats_bits(sb, w->uv, 2, ' ');
			lfs_sb_putc(sb, ' ');
			lfs_sb_floats_bits(sb, w->lm, 2, ' ');
			lfs_sb_putc(sb, '\n');
		}
		off += sector_prefix_size(s);
		lfs_sb_printf(sb, "  # rest of the sector, layout not public: file offset %zu\n", off);
		hex_block(sb, "  ", "tail", s->tail, s->n_tail);
		off += s->n_tail;
		lfs_sb_puts(sb, "endnode\n");
	}
	if (m->search_stopped)
		lfs_sb_puts(sb, "# the sector search stopped: work budget spent (docs/formats/nil.md)\n");
	if (m->n_decoded < m->n_sectors)
		lfs_sb_printf(sb, "# %" PRIu32 " of %" PRIu32 " sectors located\n", m->n_decoded,
			      m->n_sectors);
	lfs_sb_printf(sb, "# bytes after the last sector or the header: file offset %zu\n", off);
	hex_block(sb, "", "trailer", m->trailer, m->n_trailer);
	if (!lfs_sb_ok(sb))
		return lfs_nomem(err, "model.txt");
	return LFS_OK;
}

/* ---- parser ------------------------------------------------------------------ */

typedef struct parser {
	lfs_lex lx;
	const char *text;
	size_t n;
	lfs_line ln;
	lfs_error *err;
} parser;

/* Error at the end of the text ("unexpected end of text ..."). */
static lfs_err eof_fail(parser *p, const char *what)
{
	unsigned line = p->lx.line, col = 1;
	if (p->n == 0 || p->text[p->n - 1] == '\n') {
		line++;
	} else {
		const char *ls = p->text + p->n;
		while (ls > p->text && ls[-1] != '\n')
			ls--;
		col = (unsigned)(p->text + p->n - ls) + 1;
	}
	if (line == 0)
		line = 1;
	return lfs_fail_at(p->err, p->lx.file, line, col, "unexpected end of text, expected %s", what);
}

/* Next line, which must start with keyword @p kw and have @p nargs values. */
static lfs_err expect(parser *p, const char *kw, uint32_t nargs)
{
	int r = lfs_lex_next(&p->lx, &p->ln);
	if (r < 0)
		return LFS_ERR_PARSE;
	char what[64];
	snprintf(what, sizeof(what), "'%s'", kw);
	if (r == 0)
		return eof_fail(p, what);
	if (!lfs_tok_is(&p->ln.tok[0], kw)) {
		char got[40];
		size_t k = p->ln.tok[0].len < sizeof(got) - 1 ? p->ln.tok[0].len : sizeof(got) - 1;
		memcpy(got, p->ln.tok[0].s, k);
		got[k] = '\0';
		return lfs_lex_fail(&p->lx, &p->ln, 0, "expected '%s', found '%s'", kw, got);
	}
	return lfs_lex_arity(&p->lx, &p->ln, nargs, "values");
}

/* Next line as a row of exactly @p ntok values (@p what names the list). */
static lfs_err row(parser *p, uint32_t ntok, const char *what)
{
	int r = lfs_lex_next(&p->lx, &p->ln);
	if (r < 0)
		return LFS_ERR_PARSE;
	if (r == 0)
		return eof_fail(p, what);
	if (p->ln.ntok != ntok)
		return lfs_lex_fail(&p->lx, &p->ln, p->ln.ntok < ntok ? p->ln.ntok : ntok,
				    "expected %u values in a row of %s, found %u", ntok, what,
				    p->ln.ntok);
	return LFS_OK;
}

static lfs_err tok_f32(parser *p, uint32_t i, float *out)
{
	return lfs_lex_f32(&p->lx, &p->ln, i, out);
}

static lfs_err tok_f32s(parser *p, uint32_t i, float *out, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		lfs_err r = tok_f32(p, i + k, out + k);
		if (r)
			return r;
	}
	return LFS_OK;
}

static lfs_err tok_uint(parser *p, uint32_t i, uint64_t max, uint64_t *out)
{
	int64_t v;
	lfs_err r = lfs_lex_int(&p->lx, &p->ln, i, 0, (int64_t)max, &v);
	*out = (uint64_t)v;
	return r;
}

/* Count line `kw N` (N <= max) followed by the rest of the text being large
 * enough to hold N rows of at least @p min_row bytes each. */
static lfs_err count_line(parser *p, const char *kw, uint64_t max, size_t min_row, uint64_t *out)
{
	lfs_err r = expect(p, kw, 1);
	if (!r)
		r = tok_uint(p, 1, max, out);
	if (r)
		return r;
	size_t left = (size_t)(p->lx.end - p->lx.p);
	if (min_row && *out > left / min_row)
		return lfs_lex_fail(&p->lx, &p->ln, 1, "'%s %" PRIu64 "' cannot fit in the %zu bytes of text left",
				    kw, *out, left);
	return LFS_OK;
}

/* Hex block: `kw N` then rows of NIL_HEX_ROW bytes (the last one shorter).
 * With @p fixed != SIZE_MAX, N must equal it and the bytes go to @p into;
 * otherwise a new buffer is returned in *outp. */
static lfs_err hex_rows(parser *p, const char *kw, size_t fixed, uint8_t *into, uint8_t **outp,
			size_t *outn)
{
	uint64_t n;
	lfs_err r = count_line(p, kw, SIZE_MAX / 2, 2, &n);
	if (r)
		return r;
	if (fixed != SIZE_MAX && n != fixed)
		return lfs_lex_fail(&p->lx, &p->ln, 1, "%s is %zu bytes, found %" PRIu64, kw, fixed, n);
	uint8_t *buf = into;
	if (!buf) {
		buf = malloc(n ? (size_t)n : 1);
		if (!buf)
			return lfs_nomem(p->err, "model.txt");
	}
	char what[64];
	snprintf(what, sizeof(what), "%s hex", kw);
	for (size_t i = 0; i < n; i += NIL_HEX_ROW) {
		size_t k = n - i < NIL_HEX_ROW ? (size_t)n - i : NIL_HEX_ROW;
		r = row(p, 1, what);
		if (!r)
			r = lfs_lex_hex(&p->lx, &p->ln, 0, buf + i, k);
		if (r) {
			if (!into)
				free(buf);
			return r;
		}
	}
	if (outp)
		*outp = buf;
	if (outn)
		*outn = (size_t)n;
	return LFS_OK;
}

static lfs_err plane_rows(parser *p, const char *kw, uint64_t max, uint64_t *count,
			  nil_plane **out)
{
	lfs_err r = count_line(p, kw, max, 8, count);
	if (r)
		return r;
	*out = calloc(*count ? (size_t)*count : 1, sizeof(nil_plane));
	if (!*out)
		return lfs_nomem(p->err, "model.txt");
	for (size_t i = 0; i < *count; i++) {
		nil_plane *pl = &(*out)[i];
		if ((r = row(p, 4, kw)) || (r = tok_f32s(p, 0, pl->n, 3)) || (r = tok_f32(p, 3, &pl->d)))
			return r;
	}
	return LFS_OK;
}

static lfs_err parse_sector(parser *p, nil_sector *s)
{
	uint64_t v;
	lfs_err r;
	if ((r = expect(p, "flags", 1)) || (r = tok_uint(p, 1, UINT32_MAX, &v)))
		return r;
	s->flags = (uint32_t)v;
	if ((r = expect(p, "ambient", 3)) || (r = tok_f32s(p, 1, s->ambient, 3)))
		return r;
	if ((r = plane_rows(p, "sectorplanes", UINT8_MAX, &v, &s->sector_planes)))
		return r;
	s->n_sector_planes = (uint8_t)v;
	if ((r = plane_rows(p, "surfaceplanes", UINT16_MAX, &v, &s->surface_planes)))
		return r;
	s->n_surface_planes = (uint16_t)v;

	if ((r = count_line(p, "bspnodes", UINT16_MAX, 8, &v)))
		return r;
	s->n_bsp = (uint16_t)v;
	s->bsp = calloc(v ? (size_t)v : 1, sizeof(nil_bsp_node));
	if (!s->bsp)
		return lfs_nomem(p->err, "model.txt");
	for (size_t i = 0; i < s->n_bsp; i++) {
		if ((r = row(p, 4, "bspnodes")))
			return r;
		for (uint32_t k = 0; k < 4; k++) {
			uint64_t w;
			if ((r = tok_uint(p, k, UINT16_MAX, &w)))
				return r;
			s->bsp[i].w[k] = (uint16_t)w;
		}
	}

	if ((r = count_line(p, "verts", UINT16_MAX, 6, &v)))
		return r;
	s->n_vertices = (uint16_t)v;
	s->vertices = calloc(v ? 3 * (size_t)v : 1, sizeof(float));
	if (!s->vertices)
		return lfs_nomem(p->err, "model.txt");
	for (size_t i = 0; i < s->n_vertices; i++)
		if ((r = row(p, 3, "verts")) || (r = tok_f32s(p, 0, s->vertices + 3 * i, 3)))
			return r;

	if ((r = count_line(p, "wedges", UINT16_MAX, 20, &v)))
		return r;
	s->n_wedges = (uint16_t)v;
	s->wedges = calloc(v ? (size_t)v : 1, sizeof(nil_wedge));
	if (!s->wedges)
		return lfs_nomem(p->err, "model.txt");
	for (size_t i = 0; i < s->n_wedges; i++) {
		nil_wedge *w = &s->wedges[i];
		uint64_t x[6];
		if ((r = row(p, 10, "wedges")))
			return r;
		for (uint32_t k = 0; k < 6; k++)
			if ((r = tok_uint(p, k, k < 2 ? UINT16_MAX : UINT8_MAX, &x[k])))
				return r;
		w->vertex = (uint16_t)x[0];
		w->base = (uint16_t)x[1];
		for (int k = 0; k < 4; k++)
			w->rgba[k] = (uint8_t)x[2 + k];
		if ((r = tok_f32s(p, 6, w->uv, 2)) || (r = tok_f32s(p, 8, w->lm, 2)))
			return r;
	}
	if ((r = hex_rows(p, "tail", SIZE_MAX, NULL, &s->tail, &s->n_tail)))
		return r;
	return expect(p, "endnode", 0);
}

lfs_err nil_text_parse(const char *text, size_t n, const char *file, nil_model **out,
		       lfs_error *err)
{
	*out = NULL;
	parser p = { .text = text, .n = n, .err = err };
	lfs_lex_init(&p.lx, file ? file : "model.txt", text, n, err);
	nil_model *m = calloc(1, sizeof(*m));
	if (!m)
		return lfs_nomem(p.err, "model.txt");
	lfs_err r;
	uint64_t v;
	if ((r = expect(&p, "version", 1)) || (r = tok_uint(&p, 1, UINT32_MAX, &v)))
		goto fail;
	m->version = (uint32_t)v;
	if ((r = expect(&p, "magic", 1)) || (r = lfs_lex_hex(&p.lx, &p.ln, 1, m->magic, NIL_MAGIC_SIZE)))
		goto fail;
	if ((r = hex_rows(&p, "globallight", NIL_LIGHT_SIZE, m->light, NULL, NULL)))
		goto fail;
	if ((r = expect(&p, "ambient", 3)) || (r = tok_f32s(&p, 1, m->ambient, 3)))
		goto fail;
	if ((r = count_line(&p, "materials", UINT32_MAX, 2, &v)))
		goto fail;
	m->n_materials = (uint32_t)v;
	m->materials = calloc(v ? (size_t)v : 1, NIL_NAME_SIZE);
	if (!m->materials) {
		r = lfs_nomem(p.err, "model.txt");
		goto fail;
	}
	for (size_t i = 0; i < m->n_materials; i++) {
		int lr = lfs_lex_next(&p.lx, &p.ln);
		if (lr < 0) {
			r = LFS_ERR_PARSE;
			goto fail;
		}
		if (lr == 0) {
			r = eof_fail(&p, "a material name");
			goto fail;
		}
		if (p.ln.ntok > 2) {
			r = lfs_lex_fail(&p.lx, &p.ln, 2, "expected a material name and at most "
							  "one hex value");
			goto fail;
		}
		char name[NIL_NAME_SIZE + 1];
		size_t len;
		if ((r = lfs_lex_str(&p.lx, &p.ln, 0, name, sizeof(name), &len)))
			goto fail;
		if (memchr(name, 0, len)) {
			r = lfs_lex_fail(&p.lx, &p.ln, 0, "a material name cannot hold a NUL byte");
			goto fail;
		}
		memcpy(m->materials[i], name, len);
		if (p.ln.ntok == 2) {
			if (len >= NIL_NAME_SIZE) {
				r = lfs_lex_fail(&p.lx, &p.ln, 1, "a 32-byte name has no bytes after its NUL");
				goto fail;
			}
			if ((r = lfs_lex_hex(&p.lx, &p.ln, 1, m->materials[i] + len + 1,
					     NIL_NAME_SIZE - len - 1)))
				goto fail;
		}
	}
	if ((r = expect(&p, "sectors", 1)) || (r = tok_uint(&p, 1, UINT32_MAX, &v)))
		goto fail;
	m->n_sectors = (uint32_t)v;
	size_t cap = 0;
	for (;;) {
		lfs_line pk;
		int lr = lfs_lex_peek(&p.lx, &pk);
		if (lr < 0) {
			r = LFS_ERR_PARSE;
			goto fail;
		}
		if (lr == 0 || !lfs_tok_is(&pk.tok[0], "node"))
			break;
		if ((r = expect(&p, "node", 2)))
			goto fail;
		if (!lfs_tok_is(&p.ln.tok[1], "sector")) {
			r = lfs_lex_fail(&p.lx, &p.ln, 1, "expected node type 'sector'");
			goto fail;
		}
		if ((r = tok_uint(&p, 2, UINT32_MAX, &v)))
			goto fail;
		if (v != m->n_decoded) {
			r = lfs_lex_fail(&p.lx, &p.ln, 2, "expected sector %" PRIu32 " (sectors are numbered in order)",
					 m->n_decoded);
			goto fail;
		}
		if (m->n_decoded >= m->n_sectors) {
			r = lfs_lex_fail(&p.lx, &p.ln, 0, "more sector nodes than 'sectors %" PRIu32 "'",
					 m->n_sectors);
			goto fail;
		}
		nil_sector *s = nil_sector_push(m, &cap);
		if (!s) {
			r = lfs_nomem(p.err, "model.txt");
			goto fail;
		}
		s->searched = m->n_decoded > 1;
		if ((r = parse_sector(&p, s)))
			goto fail;
	}
	if ((r = hex_rows(&p, "trailer", SIZE_MAX, NULL, &m->trailer, &m->n_trailer)))
		goto fail;
	int lr = lfs_lex_next(&p.lx, &p.ln);
	if (lr < 0) {
		r = LFS_ERR_PARSE;
		goto fail;
	}
	if (lr > 0) {
		r = lfs_lex_fail(&p.lx, &p.ln, 0, "unexpected text after the trailer");
		goto fail;
	}
	*out = m;
	return LFS_OK;
fail:
	nil_model_free(m);
	return r;
}
