/**
 * @file test_objcsv.c
 * The shared OBJ and CSV readers/writers (src/text/obj.h, src/text/csv.h):
 * write -> read gives back the same float bits (negative zero, subnormals,
 * infinities, NaN payloads) and indices, the writers produce the exact bytes
 * the views have (LF CSV records), RFC 4180 quoting as other tools write it
 * (Python's csv module in each mode) reads as the bare fields, and every
 * refusal names the right file:line:col. Also the rules NWN needs (a vt w that must be 0, at
 * most 15 corners a face, model.mdl's wording) and the plain float form of
 * the NWN and NIL writers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "common/floatfmt.h"
#include "text/csv.h"
#include "text/obj.h"

/* Float bit patterns that a text round trip must keep exactly. */
static const uint32_t tricky[] = {
	0x00000000u, 0x80000000u, /* +0, -0 */
	0x00000001u, 0x80000001u, /* smallest subnormals */
	0x007FFFFFu, 0x00400000u, /* largest / mid subnormal */
	0x00800000u, 0x7F7FFFFFu, /* FLT_MIN, FLT_MAX */
	0x3DCCCCCDu, 0xBF800000u, /* 0.1f, -1 */
	0x7F800000u, 0xFF800000u, /* +inf, -inf */
	0x7FC00000u, 0x7FC01234u, /* NaN, NaN with payload */
	0xFFA00001u, 0x3F7FFFFFu, /* signalling negative NaN, 1 - ulp */
	0x4B800001u, 0x33D6BF95u, /* 2^24 + 2, 1e-7 */
};
#define NTRICKY (sizeof(tricky) / sizeof(tricky[0]))

static void test_obj_round_trip(void **state)
{
	(void)state;
	lfs_sb sb = { 0 };
	lfs_obj_write_stmt(&sb, "mtllib", "m.mtl");
	lfs_obj_write_stmt(&sb, "o", "a");
	for (size_t i = 0; i + 3 <= NTRICKY; i++) {
		float p[3] = { lfs_f32_from_bits(tricky[i]), lfs_f32_from_bits(tricky[i + 1]),
			       lfs_f32_from_bits(tricky[i + 2]) };
		lfs_obj_write_v(&sb, p);
		lfs_obj_write_vt(&sb, p[0], p[2]);
		lfs_obj_write_vn(&sb, p);
	}
	lfs_obj_write_stmt(&sb, "g", "g0");
	lfs_obj_write_stmt(&sb, "usemtl", "stone");
	size_t v[4] = { 0, 1, 2, 15 }, t[4] = { 3, 4, 5, 0 }, n[4] = { 6, 7, 8, 1 };
	lfs_obj_write_f(&sb, 3, v, t, n);
	lfs_obj_write_f(&sb, 4, v, t, NULL);
	lfs_obj_write_f(&sb, 3, v, NULL, n);
	lfs_obj_write_f(&sb, 3, v, NULL, NULL);
	assert_true(lfs_sb_ok(&sb));
	/* the face lines as the views always wrote them */
	assert_non_null(strstr(sb.data, "\nf 1/4/7 2/5/8 3/6/9\nf 1/4 2/5 3/6 16/1\n"
					"f 1//7 2//8 3//9\nf 1 2 3\n"));
	assert_non_null(strstr(sb.data, "\nv 0 -0 1e-45\n"));
	assert_non_null(strstr(sb.data, "nan:7fc01234"));

	lfs_obj o;
	lfs_error err;
	assert_int_equal(lfs_obj_read("t.obj", sb.data, sb.len, NULL, &o, &err), LFS_OK);
	size_t nv = NTRICKY - 2;
	assert_int_equal(o.nv, nv);
	assert_int_equal(o.nt, nv);
	assert_int_equal(o.nn, nv);
	for (size_t i = 0; i < nv; i++)
		for (int k = 0; k < 3; k++) {
			assert_int_equal(lfs_f32_bits(o.v[i][k]), tricky[i + (size_t)k]);
			assert_int_equal(lfs_f32_bits(o.vn[i][k]), tricky[i + (size_t)k]);
		}
	for (size_t i = 0; i < nv; i++) {
		assert_int_equal(lfs_f32_bits(o.vt[i][0]), tricky[i]);
		assert_int_equal(lfs_f32_bits(o.vt[i][1]), tricky[i + 2]);
		assert_int_equal(o.v_at[i].line, 3 + 3 * (uint32_t)i);
		assert_int_equal(o.vt_at[i].line, 4 + 3 * (uint32_t)i);
	}
	assert_int_equal(o.nf, 4);
	assert_int_equal(o.f[0].n, 3);
	assert_int_equal(o.f[1].n, 4);
	const lfs_obj_corner *c = &o.c[o.f[0].first];
	for (int k = 0; k < 3; k++) {
		assert_int_equal(c[k].v, (int64_t)v[k]);
		assert_int_equal(c[k].t, (int64_t)t[k]);
		assert_int_equal(c[k].n, (int64_t)n[k]);
	}
	c = &o.c[o.f[1].first];
	assert_int_equal(c[3].v, 15);
	assert_int_equal(c[3].n, -1);
	c = &o.c[o.f[2].first];
	assert_int_equal(c[0].t, -1);
	assert_int_equal(c[0].n, 6);
	assert_int_equal(c[1].col, 8); /* "f 1//7 2//8": second corner at column 8 */
	c = &o.c[o.f[3].first];
	assert_int_equal(c[2].v, 2);
	assert_int_equal(c[2].t, -1);
	/* o / g / usemtl / mtllib lines with list lengths at that point */
	assert_int_equal(o.ns, 4);
	assert_int_equal(o.s[0].kind, LFS_OBJ_MTLLIB);
	assert_int_equal(o.s[1].kind, LFS_OBJ_O);
	assert_int_equal(o.s[1].arg_len, 1);
	assert_memory_equal(o.s[1].arg, "a", 1);
	assert_int_equal(o.s[1].nv, 0);
	assert_int_equal(o.s[2].kind, LFS_OBJ_G);
	assert_int_equal(o.s[2].nv, nv);
	assert_int_equal(o.s[2].nf, 0);
	assert_int_equal(o.s[3].kind, LFS_OBJ_USEMTL);
	assert_int_equal(o.s[3].line, 2 + 3 * (uint32_t)nv + 2);
	lfs_obj_free(&o);
	lfs_sb_free(&sb);
}

static void test_obj_relative_and_options(void **state)
{
	(void)state;
	lfs_obj o;
	lfs_error err;
	const char *t = "v 0 0 0\nv 1 0 0\nvt 0 0\nv 0 1 0 1\r\nf -3/1 -2/-1 -1/1\n";
	/* optional w: only with LFS_OBJ_W */
	assert_int_equal(lfs_obj_read("t.obj", t, strlen(t), NULL, &o, &err), LFS_ERR_PARSE);
	assert_string_equal(err.msg, "t.obj:4:9: error: expected 3 numbers after 'v', found 4");
	lfs_obj_free(&o);
	lfs_obj_rules r = { .flags = LFS_OBJ_W | LFS_OBJ_DEFINED_ABOVE };
	assert_int_equal(lfs_obj_read("t.obj", t, strlen(t), &r, &o, &err), LFS_OK);
	assert_int_equal(o.nf, 1);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(o.c[k].v, k);
		assert_int_equal(o.c[k].t, 0);
	}
	assert_int_equal(o.lines, 5);
	lfs_obj_free(&o);
	/* LFS_OBJ_NO_VN: vn lines and third corner parts are not read */
	t = "v 0 0 0\nvt 0 0\nvn what ever x\ng x\nf 1/1/zz 1/1/ 1/1/1/1\n";
	lfs_obj_rules sod = { .flags = LFS_OBJ_NO_VN | LFS_OBJ_NEED_VT | LFS_OBJ_STRICT,
			      .triangles = "SOD" };
	assert_int_equal(lfs_obj_read("t.obj", t, strlen(t), &sod, &o, &err), LFS_OK);
	assert_int_equal(o.nn, 0);
	assert_int_equal(o.c[2].t, 0);
	lfs_obj_free(&o);
	/* without it the same text is refused */
	assert_int_equal(lfs_obj_read("t.obj", t, strlen(t), NULL, &o, &err), LFS_ERR_PARSE);
	assert_string_equal(err.msg, "t.obj:3:4: error: expected a number, found 'what'");
	lfs_obj_free(&o);
	/* unknown statements: skipped, or refused when strict */
	t = "call x.obj\nv 1 2 3\n";
	assert_int_equal(lfs_obj_read("t.obj", t, strlen(t), NULL, &o, &err), LFS_OK);
	assert_int_equal(o.nv, 1);
	lfs_obj_free(&o);
	assert_int_equal(lfs_obj_read("t.obj", t, strlen(t), &sod, &o, &err), LFS_ERR_PARSE);
	assert_string_equal(err.msg, "t.obj:1:1: error: unsupported OBJ statement 'call'");
	lfs_obj_free(&o);
}

/* Refuse @p text under @p r with exactly @p msg. */
static void refuse_n(const char *text, size_t n, const lfs_obj_rules *r, const char *msg)
{
	lfs_obj o;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err e = lfs_obj_read("bad.obj", text, n, r, &o, &err);
	lfs_obj_free(&o);
	if (e != LFS_ERR_PARSE)
		fail_msg("accepted or wrong code %d: %s", (int)e, text);
	assert_string_equal(err.msg, msg);
	assert_int_equal(err.code, LFS_ERR_PARSE);
}

static void refuse(const char *text, const lfs_obj_rules *r, const char *msg)
{
	refuse_n(text, strlen(text), r, msg);
}

static lfs_err no_groups(void *ctx, const lfs_obj *o, lfs_obj_kind kind, const lfs_obj_where *at,
			 lfs_error *err)
{
	(void)ctx;
	if (kind == LFS_OBJ_G)
		return lfs_fail_at(err, at->file, at->line, at->col, "no g here (after %zu v)",
				   o->nv);
	return LFS_OK;
}

static void test_obj_refusals(void **state)
{
	(void)state;
	lfs_obj_rules nod = { .flags = LFS_OBJ_W | LFS_OBJ_DEFINED_ABOVE, .triangles = "NOD" };
	lfs_obj_rules sod = { .flags = LFS_OBJ_NO_VN | LFS_OBJ_NEED_VT | LFS_OBJ_STRICT,
			      .triangles = "SOD",
			      .max_index = 65536 };
	refuse("v 1 2 x\n", NULL, "bad.obj:1:7: error: expected a number, found 'x'");
	refuse("v 1 2 3e\n", NULL, "bad.obj:1:7: error: expected a number, found '3e'");
	refuse("vt 1 nan:7f800000\n", NULL, "bad.obj:1:6: error: nan:7f800000 is not a NaN");
	refuse("v 1 2\n", NULL, "bad.obj:1:6: error: expected 3 numbers after 'v', found 2");
	refuse("vn 1 2 3 4\n", &nod, "bad.obj:1:10: error: expected 3 numbers after 'vn', found 4");
	refuse("# c\nvt 1 2 3 4\n", &nod,
	       "bad.obj:2:10: error: expected 2 or 3 numbers after 'vt', found 4");
	/* face index 0, empty first part, a fourth part, garbage */
	refuse("v 0 0 0\nf 1 0 1\n", NULL, "bad.obj:2:5: error: bad face corner '0'");
	refuse("v 0 0 0\nf 1 /1 1\n", NULL, "bad.obj:2:5: error: bad face corner '/1'");
	refuse("v 0 0 0\nf 1 1/1/1/1 1\n", NULL, "bad.obj:2:5: error: bad face corner '1/1/1/1'");
	refuse("v 0 0 0\nf 1 1 1x\n", NULL, "bad.obj:2:7: error: bad face corner '1x'");
	refuse("v 0 0 0\nf 1 1 1234567890123456789012345\n", NULL,
	       "bad.obj:2:7: error: face index too long");
	/* indices: defined above, relative before the start, upper limit */
	refuse("v 0 0 0\nf 1 1 2\n", &nod, "bad.obj:2:7: error: vertex index 2 is not defined above");
	refuse("v 0 0 0\nvt 0 0\nf 1/1 1/2 1\n", &nod,
	       "bad.obj:3:7: error: texture index 2 is not defined above");
	refuse("v 0 0 0\nf 1 1 -2\n", NULL, "bad.obj:2:7: error: vertex index -2 is not defined above");
	refuse("g a\nf 1/1 2/2 65537/1\n", &sod,
	       "bad.obj:2:11: error: vertex index 65537 is out of range 1..65536");
	/* face sizes */
	refuse("v 0 0 0\n\nf 1 1\n", NULL, "bad.obj:3:6: error: a face needs at least 3 corners, found 2");
	refuse("v 0 0 0\nf 1 1\n", &nod,
	       "bad.obj:2:6: error: NOD faces are triangles: expected 3 corners, found 2");
	refuse("v 0 0 0\nf 1 1 1 1\n", &nod,
	       "bad.obj:2:9: error: NOD faces are triangles: expected 3 corners, found 4");
	refuse("g a\nf 1/1 1 1/1\n", &sod,
	       "bad.obj:2:7: error: face corner needs position/texcoord indices (v/vt)");
	/* lexer: NUL byte, overlong line, unterminated quote */
	refuse_n("v 1 2 3\nv 1\0 2 3\n", 17, NULL, "bad.obj:2:4: error: NUL byte in text");
	char big[400] = "f";
	for (int i = 0; i < 70; i++)
		strcat(big, " 1");
	refuse(big, NULL, "bad.obj:1:129: error: more than 64 values on one line");
	refuse("o \"abc\n", NULL, "bad.obj:1:3: error: unterminated quoted name");
	/* a format's line check runs in file order */
	lfs_obj_rules hook = { .check = no_groups };
	refuse("v 0 0 0\n  g x\nv 1 2 zz\n", &hook, "bad.obj:2:3: error: no g here (after 1 v)");
	refuse("v 0 0 zz\ng x\n", &hook, "bad.obj:1:7: error: expected a number, found 'zz'");
}

/* NWN's rules: vt w read and required to be 0, at most 15 corners a face,
 * model.mdl's wording (LFS_OBJ_MDL_MSGS). */
static void test_obj_vt_w_and_max_corners(void **state)
{
	(void)state;
	lfs_obj_rules nwn = { .flags = LFS_OBJ_STRICT | LFS_OBJ_DEFINED_ABOVE | LFS_OBJ_VT_W0 |
				       LFS_OBJ_MDL_MSGS,
			      .max_corners = 15 };
	lfs_obj_rules w0 = { .flags = LFS_OBJ_VT_W0 };
	lfs_obj o;
	lfs_error err;
	/* a w of 0 (either sign) is read and dropped: vt keeps u, v */
	const char *t = "v 0 0 0\nvt 0.5 0.25 0\nvt 1 2 -0\nvt 3 4\nf 1/1 1/2 1/3\n";
	assert_int_equal(lfs_obj_read("t.obj", t, strlen(t), &nwn, &o, &err), LFS_OK);
	assert_int_equal(o.nt, 3);
	assert_true(o.vt[0][0] == 0.5f && o.vt[0][1] == 0.25f);
	assert_true(o.vt[1][0] == 1.0f && o.vt[1][1] == 2.0f);
	assert_true(o.vt[2][0] == 3.0f && o.vt[2][1] == 4.0f);
	assert_int_equal(o.c[2].t, 2);
	lfs_obj_free(&o);
	/* a w that is not 0 is refused at the w; without the flag it is one too many */
	refuse("vt 1 2 0.5\n", &w0, "bad.obj:1:8: error: texture w coordinates are not stored: must be 0");
	refuse("vt 1 2 nan\n", &nwn,
	       "bad.obj:1:8: error: texture w coordinates are not stored: must be 0");
	refuse("vt 1 2 0\n", NULL, "bad.obj:1:8: error: expected 2 numbers after 'vt', found 3");
	refuse("vt 1 2 0 0\n", &w0, "bad.obj:1:10: error: expected 2 or 3 numbers after 'vt', found 4");
	refuse("vt 1 2 w\n", &w0, "bad.obj:1:8: error: expected a number, found 'w'");
	/* v and vn take no w under LFS_OBJ_VT_W0 */
	refuse("v 1 2 3 0\n", &w0, "bad.obj:1:9: error: expected 3 numbers after 'v', found 4");
	/* 15 corners pass, 16 are refused at the 16th */
	char face[200] = "v 0 0 0\nf";
	for (int i = 0; i < 15; i++)
		strcat(face, " 1");
	assert_int_equal(lfs_obj_read("t.obj", face, strlen(face), &nwn, &o, &err), LFS_OK);
	assert_int_equal(o.nf, 1);
	assert_int_equal(o.f[0].n, 15);
	lfs_obj_free(&o);
	strcat(face, " 1\n");
	refuse(face, &nwn, "bad.obj:2:33: error: a face has at most 15 corners, found 16");
	/* the limit is checked before the corners are read */
	strcpy(face + strlen(face) - 3, " x\n");
	refuse(face, &nwn, "bad.obj:2:33: error: a face has at most 15 corners, found 16");
	/* model.mdl's wording: count at the last token, numbers, index ranges */
	refuse("v 1 2\n", &nwn, "bad.obj:1:5: error: expected 3 numbers after 'v'");
	refuse("v\n", &nwn, "bad.obj:1:1: error: expected 3 numbers after 'v'");
	refuse("vt 1 2 0 0\n", &nwn, "bad.obj:1:10: error: expected 2 numbers after 'vt'");
	refuse("vn 1 2 3 4\n", &nwn, "bad.obj:1:10: error: expected 3 numbers after 'vn'");
	refuse("v 1 2 x3\n", &nwn, "bad.obj:1:7: error: 'x3' is not a number");
	refuse("v 0 0 0\nv 0 0 0\nv 0 0 0\nf 1 2 99999\n", &nwn,
	       "bad.obj:4:7: error: index 99999 out of range (1..3)");
	refuse("v 0 0 0\nv 0 0 0\nv 0 0 0\nf -5 1 2\n", &nwn,
	       "bad.obj:4:3: error: index -1 out of range (1..3)");
	refuse("v 0 0 0\nvt 0 0\nf 1/2 1/1 1/1\n", &nwn,
	       "bad.obj:3:3: error: index 2 out of range (1..1)");
	refuse("v 0 0 0\nf 1 1\n", &nwn, "bad.obj:2:6: error: a face needs at least 3 corners, found 2");
	refuse("vp 1 2\n", &nwn, "bad.obj:1:1: error: unsupported OBJ statement 'vp'");
	/* the NaN-bits form is a number in either wording */
	t = "v nan:7fc01234 0 0\n";
	assert_int_equal(lfs_obj_read("t.obj", t, strlen(t), &nwn, &o, &err), LFS_OK);
	assert_int_equal(lfs_f32_bits(o.v[0][0]), 0x7FC01234u);
	lfs_obj_free(&o);
	refuse("v nan:3f800000 0 0\n", &nwn, "bad.obj:1:3: error: 'nan:3f800000' is not a number");
}

/* The plain float form: shortest text, a NaN as "nan" (NWN and NIL views). */
static void test_plain_writers(void **state)
{
	(void)state;
	lfs_sb sb = { 0 };
	float p[3] = { lfs_f32_from_bits(0x7FC01234u), lfs_f32_from_bits(0x80000000u), 0.1f };
	lfs_obj_write_plain(&sb, LFS_OBJ_V, p);
	lfs_obj_write_plain(&sb, LFS_OBJ_VT, p + 1);
	lfs_obj_write_plain(&sb, LFS_OBJ_VN, p);
	lfs_obj_write_v(&sb, p);
	assert_true(lfs_sb_ok(&sb));
	assert_string_equal(sb.data, "v nan -0 0.1\nvt -0 0.1\nvn nan -0 0.1\n"
				     "v nan:7fc01234 -0 0.1\n");
	lfs_sb_free(&sb);
	float row[4] = { 1.5f, lfs_f32_from_bits(0xFFC00000u), lfs_f32_from_bits(0xFF800000u), 1e-45f };
	lfs_csv_write_floats_plain(&sb, row, 4);
	lfs_csv_write_eol(&sb);
	lfs_csv_write_floats_plain(&sb, row, 1);
	lfs_csv_write_eol(&sb);
	lfs_csv_write_floats(&sb, row, 2);
	assert_true(lfs_sb_ok(&sb));
	assert_string_equal(sb.data, "1.5,nan,-inf,1e-45\n1.5\n1.5,nan:ffc00000");
	/* plain text reads back bit for bit except for a NaN's payload */
	lfs_csv c;
	lfs_error err;
	lfs_csv_init(&c, "t.csv", sb.data, sb.len, 0, &err);
	assert_int_equal(lfs_csv_next(&c), 1);
	assert_int_equal(lfs_csv_arity(&c, 4, NULL), LFS_OK);
	float f;
	assert_int_equal(lfs_csv_f32(&c, 3, &f), LFS_OK);
	assert_int_equal(lfs_f32_bits(f), 1);
	assert_int_equal(lfs_csv_f32(&c, 1, &f), LFS_OK);
	assert_true(isnan(f));
	lfs_sb_free(&sb);
}

static void test_csv_round_trip(void **state)
{
	(void)state;
	lfs_sb sb = { 0 };
	lfs_csv_write_header(&sb, "a,b,c");
	float row[3];
	for (size_t i = 0; i + 3 <= NTRICKY; i++) {
		for (int k = 0; k < 3; k++)
			row[k] = lfs_f32_from_bits(tricky[i + (size_t)k]);
		lfs_csv_write_floats(&sb, row, 3);
		lfs_csv_write_eol(&sb);
	}
	assert_true(lfs_sb_ok(&sb));
	/* today's bytes: LF record ends (no CR), shortest floats, NaN bits */
	assert_memory_equal(sb.data, "a,b,c\n0,-0,1e-45\n-0,1e-45,-1e-45\n", 32);
	assert_non_null(strstr(sb.data, "\ninf,-inf,nan:7fc00000\n"));
	assert_int_equal(sb.data[sb.len - 1], '\n');
	assert_null(memchr(sb.data, '\r', sb.len));
	for (unsigned flags = 0; flags <= LFS_CSV_LENIENT; flags++) {
		lfs_csv c;
		lfs_error err;
		lfs_csv_init(&c, "t.csv", sb.data, sb.len, flags, &err);
		assert_int_equal(lfs_csv_header(&c, "a,b,c"), LFS_OK);
		size_t i = 0;
		int r;
		while ((r = lfs_csv_next(&c)) == 1) {
			assert_int_equal(lfs_csv_arity(&c, 3, "a,b,c"), LFS_OK);
			assert_int_equal(c.row_line, i + 2);
			for (size_t k = 0; k < 3; k++) {
				float f;
				assert_int_equal(lfs_csv_f32(&c, k, &f), LFS_OK);
				assert_int_equal(lfs_f32_bits(f), tricky[i + k]);
			}
			i++;
		}
		assert_int_equal(r, 0);
		assert_int_equal(i, NTRICKY - 2);
	}
	lfs_sb_free(&sb);
}

static void test_csv_lenient_and_strict(void **state)
{
	(void)state;
	lfs_csv c;
	lfs_error err;
	/* BOM, blank-only lines, blanks around fields, header case: lenient only */
	const char *t = "\xEF\xBB\xBF"
			"Frame , TAG\n \t\n 3.5 ,\tx \n";
	lfs_csv_init(&c, "t.csv", t, strlen(t), LFS_CSV_LENIENT, &err);
	assert_int_equal(lfs_csv_header(&c, "frame,tag"), LFS_OK);
	assert_int_equal(lfs_csv_next(&c), 1);
	assert_int_equal(c.row_line, 3);
	assert_int_equal(c.f[0].col, 2);
	assert_int_equal(c.f[1].len, 1);
	assert_int_equal(c.f[1].col, 8);
	assert_int_equal(lfs_csv_next(&c), 0);
	lfs_csv_init(&c, "t.csv", t, strlen(t), 0, &err);
	assert_int_equal(lfs_csv_header(&c, "frame,tag"), LFS_ERR_PARSE);
	assert_string_equal(err.msg,
			    "t.csv:1:1: error: header: expected column 'frame' (expected 'frame,tag')");
	/* strict: blanks are part of the field */
	t = "k\n1 \n";
	lfs_csv_init(&c, "t.csv", t, strlen(t), 0, &err);
	assert_int_equal(lfs_csv_header(&c, "k"), LFS_OK);
	assert_int_equal(lfs_csv_next(&c), 1);
	assert_int_equal(c.f[0].len, 2);
	uint64_t u;
	assert_false(lfs_csv_uint(&c.f[0], 100, &u));
	c.f[0].len = 1;
	assert_true(lfs_csv_uint(&c.f[0], 100, &u));
	assert_int_equal(u, 1);
	assert_false(lfs_csv_uint(&c.f[0], 0, &u));
}

static void csv_refuse_n(const char *text, size_t n, unsigned flags, size_t want, const char *msg)
{
	lfs_csv c;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_csv_init(&c, "bad.csv", text, n, flags, &err);
	lfs_err e = lfs_csv_header(&c, "a,b,c");
	int r;
	while (!e && (r = lfs_csv_next(&c)) != 0) {
		if (r < 0) {
			e = LFS_ERR_PARSE;
			break;
		}
		if ((e = lfs_csv_arity(&c, want, "a,b,c")))
			break;
		for (size_t k = 0; k < want && !e; k++) {
			float f;
			e = lfs_csv_f32(&c, k, &f);
		}
	}
	if (e != LFS_ERR_PARSE)
		fail_msg("accepted: %s", text);
	assert_string_equal(err.msg, msg);
}

static void csv_refuse(const char *text, unsigned flags, size_t want, const char *msg)
{
	csv_refuse_n(text, strlen(text), flags, want, msg);
}

static void test_csv_refusals(void **state)
{
	(void)state;
	csv_refuse("", LFS_CSV_LENIENT, 3, "bad.csv:1:1: error: expected the header row 'a,b,c'");
	csv_refuse("\r\n\r\n", 0, 3, "bad.csv:3:1: error: expected the header row 'a,b,c'");
	csv_refuse("a,b\r\n", 0, 3, "bad.csv:1:4: error: header: missing column 'c' (expected 'a,b,c')");
	csv_refuse("a,b,c,d\r\n", 0, 3,
		   "bad.csv:1:7: error: header: unexpected extra column (expected 'a,b,c')");
	csv_refuse("a,B,c\r\n", 0, 3,
		   "bad.csv:1:3: error: header: expected column 'b' (expected 'a,b,c')");
	csv_refuse("a,b,c\r\n1,2\r\n", 0, 3, "bad.csv:2:4: error: expected 3 fields (a,b,c), found 2");
	csv_refuse("a,b,c\r\n1,2,3,4\r\n", 0, 3, "bad.csv:2:7: error: expected 3 fields (a,b,c), found 4");
	csv_refuse(
		"a,b,c\r\n1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,"
		"28,29,30,31,32,33,34\r\n",
		0, 3, "bad.csv:2:7: error: expected 3 fields (a,b,c), found 34");
	csv_refuse("a,b,c\r\n1,,3\r\n", 0, 3, "bad.csv:2:3: error: expected a number, found ''");
	csv_refuse("a,b,c\n\n1, 2,3x\n", LFS_CSV_LENIENT, 3,
		   "bad.csv:3:6: error: expected a number, found '3x'");
	csv_refuse_n("a,b,c\n1,2\0,3\n", 13, 0, 3, "bad.csv:2:4: error: NUL byte in text");
	csv_refuse("a,b,c\n1,2,nan:3f800000\n", 0, 3,
		   "bad.csv:2:5: error: expected a number, found 'nan:3f800000'");
	/* model.mdl's wording (NWN): no column list in the count, "is not a number" */
	lfs_csv c;
	lfs_error err;
	const char *t = "a,b,c\r\n0,abc\r\n1,2,x\r\n";
	lfs_csv_init(&c, "n.csv", t, strlen(t), LFS_CSV_LENIENT | LFS_CSV_MDL_MSGS, &err);
	assert_int_equal(lfs_csv_header(&c, "a,b,c"), LFS_OK);
	assert_int_equal(lfs_csv_next(&c), 1);
	assert_int_equal(lfs_csv_arity(&c, 3, NULL), LFS_ERR_PARSE);
	assert_string_equal(err.msg, "n.csv:2:6: error: expected 3 fields, found 2");
	assert_int_equal(lfs_csv_arity(&c, 1, NULL), LFS_ERR_PARSE);
	assert_string_equal(err.msg, "n.csv:2:3: error: expected 1 fields, found 2");
	float f;
	assert_int_equal(lfs_csv_f32(&c, 1, &f), LFS_ERR_PARSE);
	assert_string_equal(err.msg, "n.csv:2:3: error: 'abc' is not a number");
	assert_int_equal(lfs_csv_next(&c), 1);
	assert_int_equal(lfs_csv_f32(&c, 2, &f), LFS_ERR_PARSE);
	assert_string_equal(err.msg, "n.csv:3:5: error: 'x' is not a number");
}

/* Read @p text's header "a,b,c" and its rows of numbers into @p out (at most
 * @p max); returns the row count, or -1 with err filled. */
static int csv_numbers(const char *text, unsigned flags, float *out, size_t max, lfs_error *err)
{
	lfs_csv c;
	lfs_csv_init(&c, "q.csv", text, strlen(text), flags, err);
	if (lfs_csv_header(&c, "a,b,c"))
		return -1;
	size_t k = 0;
	int r, rows = 0;
	while ((r = lfs_csv_next(&c)) == 1) {
		if (lfs_csv_arity(&c, 3, "a,b,c"))
			return -1;
		for (size_t i = 0; i < 3; i++, k++)
			if (k >= max || lfs_csv_f32(&c, i, &out[k]))
				return -1;
		rows++;
	}
	return r < 0 ? -1 : rows;
}

static void test_csv_quoting(void **state)
{
	(void)state;
	lfs_error err;
	float v[12];
	/* Python's csv.writer output for the same table in its three quoting
	 * modes (CRLF, its default line end), and ours (LF, no final newline) */
	static const char *const forms[] = {
		"a,b,c\r\n0.5,-2,1e-45\r\n3,4,5\r\n",                              /* QUOTE_MINIMAL */
		"\"a\",\"b\",\"c\"\r\n\"0.5\",\"-2\",\"1e-45\"\r\n\"3\",\"4\",\"5\"\r\n", /* QUOTE_ALL */
		"\"a\",\"b\",\"c\"\r\n0.5,-2.0,1e-45\r\n3.0,4.0,5.0\r\n",         /* QUOTE_NONNUMERIC */
		"a,b,c\n0.5,-2,1e-45\n\"3\",4,\"5\"",                               /* mixed, no final EOL */
	};
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
		for (unsigned flags = 0; flags <= LFS_CSV_LENIENT; flags++) {
			memset(&err, 0, sizeof(err));
			if (csv_numbers(forms[i], flags, v, 12, &err) != 2)
				fail_msg("form %zu flags %u: %s", i, flags, err.msg);
			assert_true(v[0] == 0.5f && v[1] == -2.0f && lfs_f32_bits(v[2]) == 1u);
			assert_true(v[3] == 3.0f && v[4] == 4.0f && v[5] == 5.0f);
		}
	/* lenient: blanks outside the quotes; quoted header names ignore case */
	assert_int_equal(csv_numbers(" \"A\" ,\t\"b\",c\n \"1\" , 2 ,\"3\"\t\n", LFS_CSV_LENIENT, v,
				     12, &err),
			 1);
	assert_true(v[0] == 1.0f && v[1] == 2.0f && v[2] == 3.0f);

	/* field contents and columns: a column is that of the opening quote */
	lfs_csv c;
	const char *t = "\"x\"\"y\",\"\",\"1,5\",q\"r,\"\"\"\"\r\n";
	lfs_csv_init(&c, "q.csv", t, strlen(t), 0, &err);
	assert_int_equal(lfs_csv_next(&c), 1);
	assert_int_equal(c.nf, 5);
	assert_int_equal(c.f[0].len, 3);
	assert_memory_equal(c.f[0].s, "x\"y", 3);
	assert_int_equal(c.f[0].col, 1);
	assert_int_equal(c.f[1].len, 0);
	assert_int_equal(c.f[1].col, 8);
	assert_int_equal(c.f[2].len, 3);
	assert_memory_equal(c.f[2].s, "1,5", 3); /* a quoted comma is data */
	assert_int_equal(c.f[2].col, 11);
	assert_int_equal(c.f[3].len, 3);
	assert_memory_equal(c.f[3].s, "q\"r", 3); /* a quote inside a bare field is a byte */
	assert_int_equal(c.f[3].col, 17);
	assert_int_equal(c.f[4].len, 1);
	assert_memory_equal(c.f[4].s, "\"", 1);
	assert_int_equal(c.f[4].col, 21);
	assert_int_equal(c.end_col, 25);
	assert_int_equal(lfs_csv_next(&c), 0);
	/* the scratch is per row: many "" fields, row after row */
	lfs_sb sb = { 0 };
	for (int r = 0; r < 3; r++) {
		for (int i = 0; i < 20; i++)
			lfs_sb_printf(&sb, "%s\"%d\"\"%d\"", i ? "," : "", r, i);
		lfs_sb_puts(&sb, "\n");
	}
	assert_true(lfs_sb_ok(&sb));
	lfs_csv_init(&c, "q.csv", sb.data, sb.len, 0, &err);
	for (int r = 0; r < 3; r++) {
		assert_int_equal(lfs_csv_next(&c), 1);
		assert_int_equal(c.nf, 20);
		for (int i = 0; i < 20; i++) {
			char want[32];
			int wl = snprintf(want, sizeof(want), "%d\"%d", r, i);
			assert_int_equal(c.f[i].len, (size_t)wl);
			assert_memory_equal(c.f[i].s, want, (size_t)wl);
		}
	}
	lfs_sb_free(&sb);
	/* a "" field larger than the scratch is kept as written: never a value */
	lfs_sb_puts(&sb, "a,b,c\n1,2,\"");
	for (int i = 0; i < 600; i++)
		lfs_sb_puts(&sb, "1");
	lfs_sb_puts(&sb, "\"\"\"\n");
	assert_true(lfs_sb_ok(&sb));
	assert_int_equal(csv_numbers(sb.data, 0, v, 12, &err), -1);
	assert_string_equal(err.msg, "q.csv:2:5: error: expected a number, found "
				     "'\"111111111111111111111111111111111111111'");
	lfs_sb_free(&sb);
}

static void test_csv_quote_refusals(void **state)
{
	(void)state;
	csv_refuse("a,b,c\r\n1,\"2,3\r\n", 0, 3,
		   "bad.csv:2:3: error: unterminated quoted field (a quoted field must close on "
		   "its line)");
	csv_refuse("a,b,c\n1,2,\"3\n\"\n", LFS_CSV_LENIENT, 3,
		   "bad.csv:2:5: error: unterminated quoted field (a quoted field must close on "
		   "its line)");
	csv_refuse("\"a\",\"b\",\"c\"\"\n", 0, 3,
		   "bad.csv:1:9: error: unterminated quoted field (a quoted field must close on "
		   "its line)");
	csv_refuse("a,b,c\n1,\"2\"x,3\n", 0, 3,
		   "bad.csv:2:6: error: text after a closing quote (a field is quoted whole: "
		   "\"...\", with \"\" for a quote inside)");
	csv_refuse("a,b,c\n1,\"2\" ,3\n", 0, 3,
		   "bad.csv:2:6: error: text after a closing quote (a field is quoted whole: "
		   "\"...\", with \"\" for a quote inside)");
	csv_refuse("a,b,c\n1,\"2\" \"3\",3\n", LFS_CSV_LENIENT, 3,
		   "bad.csv:2:7: error: text after a closing quote (a field is quoted whole: "
		   "\"...\", with \"\" for a quote inside)");
	csv_refuse("\"a\",\"x\",\"c\"\r\n", 0, 3,
		   "bad.csv:1:5: error: header: expected column 'b' (expected 'a,b,c')");
	csv_refuse("a,b,c\r\n1,\"abc\",3\r\n", 0, 3, "bad.csv:2:3: error: expected a number, found 'abc'");
	csv_refuse("a,b,c\r\n1,\"\",3\r\n", 0, 3, "bad.csv:2:3: error: expected a number, found ''");
	csv_refuse("a,b,c\r\n1,\"1,5\",3\r\n", 0, 3, "bad.csv:2:3: error: expected a number, found '1,5'");
	csv_refuse("a,b,c\r\n1,\"2\"\"\",3\r\n", 0, 3, "bad.csv:2:3: error: expected a number, found '2\"'");
	csv_refuse("a,b,c\n1, \"2\",3\n", 0, 3, "bad.csv:2:3: error: expected a number, found ' \"2\"'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_obj_round_trip),
		cmocka_unit_test(test_obj_relative_and_options),
		cmocka_unit_test(test_obj_refusals),
		cmocka_unit_test(test_obj_vt_w_and_max_corners),
		cmocka_unit_test(test_plain_writers),
		cmocka_unit_test(test_csv_round_trip),
		cmocka_unit_test(test_csv_lenient_and_strict),
		cmocka_unit_test(test_csv_refusals),
		cmocka_unit_test(test_csv_quoting),
		cmocka_unit_test(test_csv_quote_refusals),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
