/**
 * @file nad_text.c
 * anim.txt: the MDL-style text of a NAD file, writer and parser
 * (docs/formats/nad.md; lexer: mdltext.h).
 *
 *   version 3
 *   flags <u32>
 *   duration <f32>
 *   tracks <count>
 *   track <rotation|translation|scale|number> <bone>     × count
 *     keys <count>
 *     <frame> <frame_scale> <x> <y> <z> <c_x> <c_y> <c_z> <b_x> <b_y> <b_z> <a_x> <a_y> <a_z>
 *   endtrack
 *   tags <count>
 *     <frame> <tag name|number>
 *   trailing <byte count>
 *     <hex, up to 32 bytes per row>
 */
#include "common/floatfmt.h"
#include "common/mem.h"
#include "nad_views.h"

#include "text/mdltext.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEX_ROW 32u

static const char key_legend[] =
	"# frame frame_scale x y z c_x c_y c_z b_x b_y b_z a_x a_y a_z\n";

lfs_err nad_text_write(const nad_model *m, lfs_sb *sb, lfs_error *err)
{
	uint64_t nkeys = 0;
	for (uint32_t t = 0; t < m->n_tracks; t++)
		nkeys += m->tracks[t].n_keys;
	lfs_sb_puts(sb, "# legacyfs anim.txt: Vampire: The Masquerade - Redemption animation (NAD)\n"
			"# see docs/formats/nad.md; frames at a nominal 30 per second\n");
	lfs_sb_printf(sb, "# %" PRIu32 " tracks, %" PRIu64 " keys, %" PRIu32 " tags, %zu trailing bytes\n",
		      m->n_tracks, nkeys, m->n_tags, m->n_trailing);
	lfs_sb_printf(sb, "version %" PRIu32 "\n", m->version);
	lfs_sb_printf(sb, "flags %" PRIu32 "\n", m->flags);
	lfs_sb_puts(sb, "duration ");
	lfs_sb_float_bits(sb, m->duration);
	lfs_sb_printf(sb, "\ntracks %" PRIu32 "\n", m->n_tracks);
	size_t off = NAD_HEADER_SIZE;
	for (uint32_t t = 0; t < m->n_tracks; t++) {
		const nad_track *tr = &m->tracks[t];
		const char *tn = nad_track_type_name(tr->type);
		lfs_sb_printf(sb, "# track %" PRIu32 " at offset 0x%zx\n", t, off);
		if (tn)
			lfs_sb_printf(sb, "track %s %" PRIu32 "\n", tn, tr->bone);
		else
			lfs_sb_printf(sb, "track %" PRIu32 " %" PRIu32 "\n", tr->type, tr->bone);
		lfs_sb_printf(sb, "  keys %" PRIu32 "\n", tr->n_keys);
		if (tr->n_keys)
			lfs_sb_printf(sb, "  %s", key_legend);
		for (uint32_t k = 0; k < tr->n_keys; k++) {
			lfs_sb_puts(sb, "    ");
			for (unsigned i = 0; i < NAD_KEY_FLOATS; i++) {
				if (i)
					lfs_sb_putc(sb, ' ');
				lfs_sb_float_bits(sb, tr->keys[k].v[i]);
			}
			lfs_sb_putc(sb, '\n');
		}
		lfs_sb_puts(sb, "endtrack\n");
		off += NAD_TRACK_HEADER_SIZE + (size_t)tr->n_keys * NAD_KEY_SIZE;
	}
	lfs_sb_printf(sb, "tags %" PRIu32 "\n", m->n_tags);
	if (m->n_tags)
		lfs_sb_puts(sb, "  # frame tag\n");
	for (uint32_t i = 0; i < m->n_tags; i++) {
		lfs_sb_puts(sb, "  ");
		lfs_sb_float_bits(sb, m->tags[i].frame);
		const char *name = nad_tag_name(m->tags[i].type);
		if (name)
			lfs_sb_printf(sb, " %s\n", name);
		else
			lfs_sb_printf(sb, " %" PRIu32 "\n", m->tags[i].type);
	}
	lfs_sb_printf(sb, "trailing %zu\n", m->n_trailing);
	for (size_t o = 0; o < m->n_trailing; o += HEX_ROW) {
		size_t k = m->n_trailing - o < HEX_ROW ? m->n_trailing - o : HEX_ROW;
		lfs_sb_puts(sb, "  ");
		lfs_sb_hex(sb, m->trailing + o, k);
		lfs_sb_putc(sb, '\n');
	}
	if (!lfs_sb_ok(sb))
		return lfs_nomem(err, "anim.txt");
	return LFS_OK;
}

/* ---- parser ----------------------------------------------------------------- */

typedef struct parser {
	lfs_lex lx;
	lfs_line ln;
	size_t text_len;
} parser;

static void tokstr(const lfs_tok *t, char *buf, size_t sz)
{
	size_t n = t->len < sz - 1 ? t->len : sz - 1;
	memcpy(buf, t->s, n);
	buf[n] = '\0';
}

/* Next line; at the end of the text fail with "expected <what>". */
static lfs_err need_line(parser *p, const char *what)
{
	int r = lfs_lex_next(&p->lx, &p->ln);
	if (r < 0)
		return LFS_ERR_PARSE;
	if (r == 0)
		return lfs_fail_at(p->lx.err, p->lx.file, p->lx.line + 1, 1,
				   "unexpected end of text, expected %s", what);
	return LFS_OK;
}

/* Next line must be `<kw> <one value>`. */
static lfs_err need_kw(parser *p, const char *kw)
{
	char what[48];
	snprintf(what, sizeof(what), "'%s'", kw);
	lfs_err r = need_line(p, what);
	if (r)
		return r;
	if (!lfs_tok_is(&p->ln.tok[0], kw)) {
		char found[48];
		tokstr(&p->ln.tok[0], found, sizeof(found));
		return lfs_lex_fail(&p->lx, &p->ln, 0, "expected '%s', found '%s'", kw, found);
	}
	return lfs_lex_arity(&p->lx, &p->ln, 1, "value");
}

static lfs_err need_u32(parser *p, const char *kw, uint32_t *v)
{
	lfs_err r = need_kw(p, kw);
	int64_t x;
	if (!r)
		r = lfs_lex_int(&p->lx, &p->ln, 1, 0, UINT32_MAX, &x);
	if (!r)
		*v = (uint32_t)x;
	return r;
}

static lfs_err tok_f32(parser *p, uint32_t i, float *out)
{
	const lfs_tok *t = &p->ln.tok[i];
	if (lfs_parse_float_bits(t->s, t->len, out))
		return LFS_OK;
	char v[48];
	tokstr(t, v, sizeof(v));
	if (lfs_float_overflows(t->s, t->len))
		return lfs_lex_fail(&p->lx, &p->ln, i, "'%s' " LFS_FLOAT_RANGE_MSG, v);
	return lfs_lex_fail(&p->lx, &p->ln, i, "expected a number, found '%s'", v);
}

/* Name from a table or a decimal u32. */
static lfs_err tok_enum(parser *p, uint32_t i, int (*from_name)(const char *, size_t),
			const char *what, uint32_t *out)
{
	const lfs_tok *t = &p->ln.tok[i];
	int v = from_name(t->s, t->len);
	if (v >= 0) {
		*out = (uint32_t)v;
		return LFS_OK;
	}
	if (t->len && t->s[0] >= '0' && t->s[0] <= '9') {
		int64_t x;
		lfs_err r = lfs_lex_int(&p->lx, &p->ln, i, 0, UINT32_MAX, &x);
		if (!r)
			*out = (uint32_t)x;
		return r;
	}
	char v2[48];
	tokstr(t, v2, sizeof(v2));
	return lfs_lex_fail(&p->lx, &p->ln, i, "unknown %s '%s'", what, v2);
}

static lfs_err parse_track(parser *p, nad_track *tr, uint32_t index, uint32_t count)
{
	char what[64];
	snprintf(what, sizeof(what), "'track' (track %" PRIu32 " of %" PRIu32 ")", index, count);
	lfs_err r = need_line(p, what);
	if (r)
		return r;
	if (!lfs_tok_is(&p->ln.tok[0], "track")) {
		char found[48];
		tokstr(&p->ln.tok[0], found, sizeof(found));
		return lfs_lex_fail(&p->lx, &p->ln, 0, "expected %s, found '%s'", what, found);
	}
	if ((r = lfs_lex_arity(&p->lx, &p->ln, 2, "values (type and bone)")))
		return r;
	if ((r = tok_enum(p, 1, nad_track_type_from_name, "track type", &tr->type)))
		return r;
	int64_t x;
	if ((r = lfs_lex_int(&p->lx, &p->ln, 2, 0, UINT32_MAX, &x)))
		return r;
	tr->bone = (uint32_t)x;
	uint32_t nk;
	if ((r = need_u32(p, "keys", &nk)))
		return r;
	uint32_t cap = 0;
	for (uint32_t k = 0; k < nk; k++) {
		snprintf(what, sizeof(what), "key %" PRIu32 " of %" PRIu32, k, nk);
		if ((r = need_line(p, what)))
			return r;
		if (p->ln.ntok != NAD_KEY_FLOATS)
			return lfs_lex_fail(&p->lx, &p->ln, p->ln.ntok < NAD_KEY_FLOATS ? p->ln.ntok : NAD_KEY_FLOATS,
					    "expected %u numbers for key %" PRIu32 " of %" PRIu32 ", found %" PRIu32
					    " values",
					    NAD_KEY_FLOATS, k, nk, p->ln.ntok);
		if (!lfs_grow32((void **)&tr->keys, &cap, k + 1, sizeof(nad_key)))
			return LFS_ERR_NOMEM; /* filled in by nad_text_parse */
		for (uint32_t i = 0; i < NAD_KEY_FLOATS; i++)
			if ((r = tok_f32(p, i, &tr->keys[k].v[i])))
				return r;
		tr->n_keys = k + 1;
	}
	if ((r = need_line(p, "'endtrack'")))
		return r;
	if (!lfs_tok_is(&p->ln.tok[0], "endtrack")) {
		char found[48];
		tokstr(&p->ln.tok[0], found, sizeof(found));
		return lfs_lex_fail(&p->lx, &p->ln, 0, "expected 'endtrack' after %" PRIu32 " keys, found '%s'",
				    nk, found);
	}
	return lfs_lex_arity(&p->lx, &p->ln, 0, "values");
}

static lfs_err parse_body(parser *p, nad_model *m)
{
	lfs_err r;
	int64_t x;
	if ((r = need_kw(p, "version")))
		return r;
	if ((r = lfs_lex_int(&p->lx, &p->ln, 1, NAD_VERSION, NAD_VERSION, &x)))
		return r;
	m->version = NAD_VERSION;
	if ((r = need_u32(p, "flags", &m->flags)))
		return r;
	if ((r = need_kw(p, "duration")) || (r = tok_f32(p, 1, &m->duration)))
		return r;
	uint32_t nt;
	if ((r = need_u32(p, "tracks", &nt)))
		return r;
	uint32_t cap = 0;
	for (uint32_t t = 0; t < nt; t++) {
		if (!lfs_grow32((void **)&m->tracks, &cap, t + 1, sizeof(nad_track)))
			return LFS_ERR_NOMEM; /* filled in by nad_text_parse */
		memset(&m->tracks[t], 0, sizeof(m->tracks[t]));
		m->n_tracks = t + 1;
		if ((r = parse_track(p, &m->tracks[t], t, nt)))
			return r;
	}
	if ((r = need_line(p, "'tags'")))
		return r;
	if (lfs_tok_is(&p->ln.tok[0], "track"))
		return lfs_lex_fail(&p->lx, &p->ln, 0, "more track blocks than 'tracks %" PRIu32 "' says",
				    nt);
	if (!lfs_tok_is(&p->ln.tok[0], "tags")) {
		char found[48];
		tokstr(&p->ln.tok[0], found, sizeof(found));
		return lfs_lex_fail(&p->lx, &p->ln, 0, "expected 'tags', found '%s'", found);
	}
	if ((r = lfs_lex_arity(&p->lx, &p->ln, 1, "value")) ||
	    (r = lfs_lex_int(&p->lx, &p->ln, 1, 0, UINT32_MAX, &x)))
		return r;
	uint32_t ng = (uint32_t)x;
	cap = 0;
	for (uint32_t i = 0; i < ng; i++) {
		char what[64];
		snprintf(what, sizeof(what), "tag %" PRIu32 " of %" PRIu32, i, ng);
		if ((r = need_line(p, what)))
			return r;
		if (p->ln.ntok != 2)
			return lfs_lex_fail(&p->lx, &p->ln, p->ln.ntok < 2 ? p->ln.ntok : 2,
					    "expected frame and tag name for tag %" PRIu32 " of %" PRIu32
					    ", found %" PRIu32 " values",
					    i, ng, p->ln.ntok);
		if (!lfs_grow32((void **)&m->tags, &cap, i + 1, sizeof(nad_tag)))
			return LFS_ERR_NOMEM; /* filled in by nad_text_parse */
		m->n_tags = i + 1;
		if ((r = tok_f32(p, 0, &m->tags[i].frame)) ||
		    (r = tok_enum(p, 1, nad_tag_from_name, "tag", &m->tags[i].type)))
			return r;
	}
	if ((r = need_kw(p, "trailing")))
		return r;
	if ((r = lfs_lex_int(&p->lx, &p->ln, 1, 0, (int64_t)(p->text_len / 2), &x)))
		return r;
	size_t nb = (size_t)x;
	if (nb) {
		m->trailing = malloc(nb);
		if (!m->trailing)
			return LFS_ERR_NOMEM; /* filled in by nad_text_parse */
	}
	m->n_trailing = nb;
	size_t got = 0;
	while (got < nb) {
		char what[64];
		snprintf(what, sizeof(what), "hex bytes (%zu of %zu read)", got, nb);
		if ((r = need_line(p, what)))
			return r;
		if (p->ln.ntok != 1)
			return lfs_lex_fail(&p->lx, &p->ln, p->ln.ntok ? 1 : 0,
					    "expected one hex token per trailing row");
		const lfs_tok *t = &p->ln.tok[0];
		if (t->len % 2 || t->len == 0 || t->len / 2 > nb - got)
			return lfs_lex_fail(&p->lx, &p->ln, 0,
					    "expected an even number of hex digits, at most %zu bytes",
					    nb - got);
		if ((r = lfs_lex_hex(&p->lx, &p->ln, 0, m->trailing + got, t->len / 2)))
			return r;
		got += t->len / 2;
	}
	int e = lfs_lex_next(&p->lx, &p->ln);
	if (e < 0)
		return LFS_ERR_PARSE;
	if (e > 0) {
		char found[48];
		tokstr(&p->ln.tok[0], found, sizeof(found));
		return lfs_lex_fail(&p->lx, &p->ln, 0,
				    "text after the last trailing byte: '%s'", found);
	}
	return LFS_OK;
}

lfs_err nad_text_parse(const char *file, const char *text, size_t n, nad_model **out,
		       lfs_error *err)
{
	*out = NULL;
	nad_model *m = calloc(1, sizeof(*m));
	parser *p = malloc(sizeof(*p));
	if (!m || !p) {
		free(m);
		free(p);
		return lfs_nomem(err, file);
	}
	lfs_lex_init(&p->lx, file, text ? text : "", text ? n : 0, err);
	p->text_len = text ? n : 0;
	lfs_err r = parse_body(p, m);
	free(p);
	if (r == LFS_ERR_NOMEM)
		lfs_nomem(err, file);
	if (r) {
		nad_model_free(m);
		return r;
	}
	*out = m;
	return LFS_OK;
}
