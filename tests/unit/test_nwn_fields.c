/**
 * @file test_nwn_fields.c
 * The NWN field table (src/formats/nwn/nwn_fields.def) against the rest of
 * the codec, on a model built in memory (no corpus):
 *
 *  - layout: no table row overlaps a hand-coded range of nwn_layout.def
 *    or another row of its part, every byte of a part is described once;
 *    a row added over a hand-coded offset (the mesh's 0x268 area word) or
 *    over another row is reported.
 *  - survive: for every field the text shows, a decoded model with the
 *    field set to a value other than its default and its current one is
 *    written as model.mdl, compiled and decoded again: the value is there.
 *    The same edit made through the save path's apply of model.mdl
 *    (nwn_apply_view) comes back too. HIDDEN fields survive decode ->
 *    encode -> decode.
 *  - defaults: a compiled text that leaves every field out holds each
 *    field's table default (nwn_fields.def `default`), and the round-trip
 *    law's NWN dialect lists it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/strbuf.h"
#include "formats/nwn/nwn_fields.h"
#include "formats/nwn/nwn_mdl.h"
#include "formats/nwn/nwn_mdl_encode.h"
#include "law/law.h"
#include "formats/nwn/nwn_apply.h"
#include "formats/nwn/nwn_ascii.h"
#include "formats/nwn/nwn_compile.h"
#include "registry/viewset.h"

/* One node of each part the table describes, and an animation. */
static const char MODEL_TEXT[] =
	"newmodel t\n"
	"setsupermodel t NULL\n"
	"classification character\n"
	"beginmodelgeom t\n"
	"node dummy t\n  parent NULL\nendnode\n"
	"node trimesh m1\n  parent t\n  bitmap tex1\n"
	"  verts 3\n    0 0 0\n    1 0 0\n    0 1 0\n"
	"  faces 1\n    0 1 2 1 0 0 0 1\nendnode\n"
	"node danglymesh d1\n  parent t\n"
	"  verts 3\n    0 0 0\n    1 0 0\n    0 1 0\n"
	"  faces 1\n    0 1 2 1 0 0 0 1\n"
	"  constraints 3\n    0\n    0\n    0\nendnode\n"
	"node animmesh a1\n  parent t\n"
	"  verts 3\n    0 0 0\n    1 0 0\n    0 1 0\n"
	"  faces 1\n    0 1 2 1 0 0 0 1\nendnode\n"
	"node light l1\n  parent t\nendnode\n"
	"node emitter e1\n  parent t\nendnode\n"
	"node reference r1\n  parent t\nendnode\n"
	"endmodelgeom t\n"
	"newanim idle t\n  length 1\n"
	"  node dummy t\n    parent NULL\n  endnode\n"
	"doneanim idle t\n"
	"donemodel t\n";

static uint8_t *compile_text(const char *text, size_t n, size_t *outn)
{
	uint8_t *out = NULL;
	lfs_error err = { 0 };
	lfs_err r = nwn_compile("t.mdl", (const uint8_t *)text, n, NULL, NULL, &out, outn, &err);
	if (r)
		fail_msg("compile: %s", err.msg);
	return out;
}

static nwn_model *decode(const uint8_t *b, size_t n)
{
	nwn_model *m = NULL;
	lfs_error err = { 0 };
	if (nwn_mdl_decode(b, n, &m, &err))
		fail_msg("decode: %s", err.msg);
	return m;
}

/* The struct of @p m that holds part @p kind (first node with it). */
static void *part_obj(nwn_model *m, nwn_field_kind kind)
{
	if (kind == NWN_FK_MODEL)
		return m;
	if (kind == NWN_FK_ANIM)
		return m->n_anims ? &m->anims[0] : NULL;
	for (uint32_t i = 0; i < m->geom.n_nodes; i++) {
		nwn_node *n = &m->geom.nodes[i];
		switch (kind) {
		case NWN_FK_NODE: return n;
		case NWN_FK_MESH: if (n->mesh && !n->mesh->dangly && !n->mesh->anim) return n->mesh; break;
		case NWN_FK_DANGLY: if (n->mesh && n->mesh->dangly) return n->mesh->dangly; break;
		case NWN_FK_ANIMMESH: if (n->mesh && n->mesh->anim) return n->mesh->anim; break;
		case NWN_FK_LIGHT: if (n->light) return n->light; break;
		case NWN_FK_EMITTER: if (n->emitter) return n->emitter; break;
		case NWN_FK_REF: if (n->ref) return n->ref; break;
		default: break;
		}
	}
	return NULL;
}

/* Set field @p f of @p obj to a value that is neither its default nor 0
 * (the test model's value of every field). */
static void set_other(const nwn_field *f, void *obj)
{
	void *p = nwn_field_ptr(f, obj);
	switch ((nwn_field_type)f->type) {
	case NWN_FT_F32: {
		float v = 0.375f;
		memcpy(p, &v, 4);
		break;
	}
	case NWN_FT_F32X3: {
		float v[3] = { 0.125f, 0.25f, 0.625f };
		memcpy(p, v, 12);
		break;
	}
	case NWN_FT_I32: {
		uint32_t v = 3;
		memcpy(p, &v, 4);
		break;
	}
	case NWN_FT_RHINT: {
		uint32_t v = 2; /* printed NormalAndSpecMapped */
		memcpy(p, &v, 4);
		break;
	}
	case NWN_FT_U16: {
		uint16_t v = 7;
		memcpy(p, &v, 2);
		break;
	}
	case NWN_FT_U8:
		*(uint8_t *)p = 3;
		break;
	case NWN_FT_STR:
		snprintf(p, f->size, "fld_%.8s", f->kw);
		break;
	case NWN_FT_EFLAG: {
		uint32_t v;
		memcpy(&v, p, 4);
		v ^= 1u << f->size;
		memcpy(p, &v, 4);
		break;
	}
	}
}

/* Field @p f holds the same value in @p a and @p b. */
static bool same_value(const nwn_field *f, const void *a, const void *b)
{
	if (f->type == NWN_FT_EFLAG) {
		uint32_t x, y;
		memcpy(&x, (const char *)a + f->moff, 4);
		memcpy(&y, (const char *)b + f->moff, 4);
		return ((x ^ y) >> f->size & 1u) == 0;
	}
	return memcmp((const char *)a + f->moff, (const char *)b + f->moff, f->msize) == 0;
}

/* ----------------------------------------------------------------- layout */

static void test_layout(void **state)
{
	(void)state;
	char msg[256];
	size_t k = nwn_fields_layout_check(nwn_fields, nwn_n_fields, msg, sizeof(msg));
	if (k)
		fail_msg("%zu layout problem(s); first: %s", k, msg);

	/* a row over a hand-coded offset, over another row, past its part */
	const nwn_field bad[] = {
		{ "area", 0x268, NWN_FK_MESH, NWN_FT_F32, 0, 0, offsetof(nwn_mesh, area), 4, "" },
		{ "shine2", 0xD0, NWN_FK_MESH, NWN_FT_F32, 0, 0, offsetof(nwn_mesh, area), 4, "" },
		{ "far", 0xB4, NWN_FK_REF, NWN_FT_I32, 0, 0, offsetof(nwn_reference, reattachable), 4, "" },
		{ "bit", 0x140, NWN_FK_EMITTER, NWN_FT_EFLAG, 3, 0, offsetof(nwn_emitter, flags), 4, "" },
	};
	static const char *const want[] = { "hand-coded 'total area'", "overlaps field 'shininess'",
					    "outside its part", "no flags word" };
	for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		nwn_field *t = malloc((nwn_n_fields + 1) * sizeof(*t));
		assert_non_null(t);
		memcpy(t, nwn_fields, nwn_n_fields * sizeof(*t));
		t[nwn_n_fields] = bad[b];
		k = nwn_fields_layout_check(t, nwn_n_fields + 1, msg, sizeof(msg));
		free(t);
		if (!k || !strstr(msg, want[b]))
			fail_msg("row '%s': %zu problems, '%s' (wanted '%s')", bad[b].kw, k, msg, want[b]);
	}
}

/* ---------------------------------------------------------------- survive */

/* model.mdl of @p m through the compiler, decoded. */
static nwn_model *through_compile(const nwn_model *m)
{
	lfs_sb sb = { 0 };
	lfs_error err = { 0 };
	if (nwn_ascii_write(m, &sb, &err))
		fail_msg("ascii: %s", err.msg);
	size_t n = 0;
	uint8_t *b = compile_text(sb.data, sb.len, &n);
	lfs_sb_free(&sb);
	nwn_model *r = decode(b, n);
	free(b);
	return r;
}

/* model.mdl of @p m applied over the binary @p orig (the save path). */
static nwn_model *through_apply(const uint8_t *orig, size_t on, const nwn_model *m)
{
	lfs_sb sb = { 0 };
	lfs_error err = { 0 };
	if (nwn_ascii_write(m, &sb, &err))
		fail_msg("ascii: %s", err.msg);
	lfs_view v = { .path = (char *)"model.mdl", .kind = LFS_VIEW_TEXT,
		       .target = LFS_VIEW_WHOLE, .writable = true };
	uint8_t *out = NULL;
	size_t n = 0;
	lfs_err r = nwn_apply_view(orig, on, &v, sb.data, sb.len, NULL, &out, &n, &err);
	lfs_sb_free(&sb);
	if (r)
		fail_msg("apply: %s", err.msg);
	nwn_model *d = decode(out, n);
	free(out);
	return d;
}

/* model @p m encoded and decoded again. */
static nwn_model *through_encode(const nwn_model *m)
{
	uint8_t *b = NULL;
	size_t n = 0;
	lfs_error err = { 0 };
	if (nwn_mdl_encode_ex(m, NWN_ENC_NO_IMAGE_BYTES, &b, &n, &err))
		fail_msg("encode: %s", err.msg);
	nwn_model *r = decode(b, n);
	free(b);
	return r;
}

static void test_survive(void **state)
{
	(void)state;
	size_t n0 = 0;
	uint8_t *b0 = compile_text(MODEL_TEXT, sizeof(MODEL_TEXT) - 1, &n0);
	size_t checked = 0, failed = 0;
	for (size_t i = 0; i < nwn_n_fields; i++) {
		const nwn_field *f = &nwn_fields[i];
		if (f->flags & NWN_FF_ALIAS)
			continue;
		nwn_model *m = decode(b0, n0);
		void *obj = part_obj(m, (nwn_field_kind)f->kind);
		if (!obj)
			fail_msg("the test model has no part for field '%s'", f->kw);
		set_other(f, obj);
		bool hidden = (f->flags & NWN_FF_HIDDEN) != 0;
		nwn_model *r[2] = { hidden ? through_encode(m) : through_compile(m),
				    hidden ? NULL : through_apply(b0, n0, m) };
		static const char *const how[2] = { "text -> compile", "model.mdl apply" };
		for (int w = 0; w < 2; w++) {
			if (!r[w])
				continue;
			void *got = part_obj(r[w], (nwn_field_kind)f->kind);
			if (!got || !same_value(f, obj, got)) {
				print_error("field '%s' (0x%X) does not survive %s -> decode\n", f->kw, f->off,
					    hidden ? "encode" : how[w]);
				failed++;
			}
			nwn_model_free(r[w]);
		}
		nwn_model_free(m);
		checked++;
	}
	free(b0);
	printf("  %zu fields checked\n", checked);
	assert_int_equal(failed, 0);
}

/* --------------------------------------------------------------- defaults */

static void test_defaults(void **state)
{
	(void)state;
	size_t n0 = 0;
	uint8_t *b0 = compile_text(MODEL_TEXT, sizeof(MODEL_TEXT) - 1, &n0);
	nwn_model *m = decode(b0, n0);
	free(b0);
	const lfs_format *fmt = lfs_format_named("nwn-mdl");
	assert_non_null(fmt);
	const lfs_law_dialect *law = fmt->law;
	assert_non_null(law);
	size_t failed = 0;
	for (size_t i = 0; i < nwn_n_fields; i++) {
		const nwn_field *f = &nwn_fields[i];
		if (f->flags & NWN_FF_ALIAS)
			continue;
		void *obj = part_obj(m, (nwn_field_kind)f->kind);
		assert_non_null(obj);
		/* the table default on a zeroed part: what the compiler starts from */
		uint8_t want[1024] = { 0 };
		assert_true(f->moff + f->msize <= sizeof(want));
		nwn_fields_defaults((nwn_field_kind)f->kind, want);
		if (!strcmp(f->kw, "bitmap") || !strcmp(f->kw, "length"))
			continue; /* the test text states them */
		if (!same_value(f, want, obj)) {
			print_error("field '%s': the compiler does not write the table default '%s'\n",
				    f->kw, f->dflt);
			failed++;
		}
		if (!f->dflt[0])
			continue;
		bool listed = false;
		for (const lfs_law_default *d = law->defaults; d->keyword; d++)
			if (!strcasecmp(d->keyword, f->kw) && d->values && !strcmp(d->values, f->dflt))
				listed = true;
		if (!listed) {
			print_error("field '%s': default '%s' not in the law's defaults\n", f->kw, f->dflt);
			failed++;
		}
	}
	nwn_model_free(m);
	assert_int_equal(failed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_survive),
		cmocka_unit_test(test_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
