/**
 * @file test_mdltext.c
 * Shared MDL-style lexer/writer (src/text/mdltext.h): names of any bytes
 * survive write -> lex, numbers and hex parse exactly, and every error names
 * the right line and column.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "text/mdltext.h"

static void test_lines_tokens_comments(void **state)
{
	(void)state;
	const char *t = "# comment\r\n\r\n  node mesh \"a b\"\r\n\tverts 2 # not a comment\n";
	lfs_lex lx;
	lfs_error err;
	lfs_lex_init(&lx, "m.txt", t, strlen(t), &err);
	lfs_line ln;
	assert_int_equal(lfs_lex_next(&lx, &ln), 1);
	assert_int_equal(ln.line, 3);
	assert_int_equal(ln.ntok, 3);
	assert_int_equal(ln.tok[0].col, 3);
	assert_true(lfs_tok_is(&ln.tok[0], "NODE"));
	char name[16];
	assert_int_equal(lfs_lex_str(&lx, &ln, 2, name, sizeof(name), NULL), LFS_OK);
	assert_string_equal(name, "a b");
	assert_int_equal(lfs_lex_peek(&lx, &ln), 1);
	assert_int_equal(ln.line, 4);
	assert_int_equal(lfs_lex_next(&lx, &ln), 1);
	assert_int_equal(ln.line, 4);
	assert_int_equal(ln.ntok, 6); /* '#' inside a line is a token, not a comment */
	assert_int_equal(lfs_lex_next(&lx, &ln), 0);
}

static void test_errors_have_positions(void **state)
{
	(void)state;
	const char *t = "position 1 x 3\nscale\nhex 0g\nname \"abc\nn 99\n";
	lfs_lex lx;
	lfs_error err;
	lfs_lex_init(&lx, "model.txt", t, strlen(t), &err);
	lfs_line ln;
	float f;
	assert_int_equal(lfs_lex_next(&lx, &ln), 1);
	assert_int_equal(lfs_lex_f32(&lx, &ln, 2, &f), LFS_ERR_PARSE);
	assert_string_equal(err.msg, "model.txt:1:12: error: expected a number, found 'x'");
	assert_int_equal(lfs_lex_arity(&lx, &ln, 2, "numbers"), LFS_ERR_PARSE);
	assert_string_equal(err.msg, "model.txt:1:14: error: expected 2 numbers after 'position', found 3");
	assert_int_equal(lfs_lex_next(&lx, &ln), 1);
	assert_int_equal(lfs_lex_arity(&lx, &ln, 1, "number"), LFS_ERR_PARSE);
	assert_string_equal(err.msg, "model.txt:2:6: error: expected 1 number after 'scale', found 0");
	assert_int_equal(lfs_lex_next(&lx, &ln), 1);
	uint8_t b;
	assert_int_equal(lfs_lex_hex(&lx, &ln, 1, &b, 1), LFS_ERR_PARSE);
	assert_string_equal(err.msg, "model.txt:3:5: error: '0g' is not a hex byte");
	assert_int_equal(lfs_lex_next(&lx, &ln), -1);
	assert_string_equal(err.msg, "model.txt:4:6: error: unterminated quoted name");
	assert_int_equal(lfs_lex_next(&lx, &ln), 1);
	int64_t v;
	assert_int_equal(lfs_lex_int(&lx, &ln, 1, 0, 10, &v), LFS_ERR_PARSE);
	assert_string_equal(err.msg, "model.txt:5:3: error: 99 is out of range 0..10");
}

/* Random byte strings (all 256 values) written with lfs_sb_name read back
 * identical; hex of random bytes likewise. */
static void test_name_and_hex_round_trip(void **state)
{
	(void)state;
	uint64_t x = 88172645463325252ull;
	for (int it = 0; it < 20000; it++) {
		char raw[40];
		uint8_t bytes[16];
		size_t n = it % 40;
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			raw[i] = (char)(x % 255 + 1); /* names are NUL-free */
		}
		for (size_t i = 0; i < 16; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			bytes[i] = (uint8_t)x;
		}
		lfs_sb sb = { 0 };
		lfs_sb_puts(&sb, "name ");
		lfs_sb_name(&sb, raw, n);
		lfs_sb_puts(&sb, " ");
		lfs_sb_hex(&sb, bytes, 16);
		lfs_sb_putc(&sb, '\n');
		assert_true(lfs_sb_ok(&sb));
		lfs_lex lx;
		lfs_error err;
		lfs_lex_init(&lx, "t", sb.data, sb.len, &err);
		lfs_line ln;
		assert_int_equal(lfs_lex_next(&lx, &ln), 1);
		assert_int_equal(ln.ntok, 3);
		char back[64];
		size_t len;
		assert_int_equal(lfs_lex_str(&lx, &ln, 1, back, sizeof(back), &len), LFS_OK);
		assert_int_equal(len, n);
		assert_memory_equal(back, raw, n);
		uint8_t hb[16];
		assert_int_equal(lfs_lex_hex(&lx, &ln, 2, hb, 16), LFS_OK);
		assert_memory_equal(hb, bytes, 16);
		lfs_sb_free(&sb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_tokens_comments),
		cmocka_unit_test(test_errors_have_positions),
		cmocka_unit_test(test_name_and_hex_round_trip),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
