/**
 * @file test_rd.c
 * Bounds-checked reader (src/common/rd.h): reads inside the range succeed
 * with little-endian values, reads touching the end or with offsets near
 * SIZE_MAX fail without touching memory (ASan would see an overrun).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "common/rd.h"

static void test_values_little_endian(void **state)
{
	(void)state;
	/* exact-size heap buffer so ASan flags any byte read past it */
	uint8_t *b = malloc(8);
	memcpy(b, "\x01\x02\x03\x04\x00\x00\x80\xbf", 8);
	lfs_rd r = { b, 8 };
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	int16_t i16;
	float f;
	assert_true(lfs_rd_u8(&r, 7, &u8));
	assert_int_equal(u8, 0xbf);
	assert_true(lfs_rd_u16(&r, 0, &u16));
	assert_int_equal(u16, 0x0201);
	assert_true(lfs_rd_u32(&r, 0, &u32));
	assert_int_equal(u32, 0x04030201);
	assert_true(lfs_rd_f32(&r, 4, &f));
	assert_true(f == -1.0f);
	assert_true(lfs_rd_i16(&r, 6, &i16));
	assert_int_equal(i16, (int16_t)0xbf80);
	free(b);
}

static void test_bounds(void **state)
{
	(void)state;
	uint8_t *b = malloc(8);
	memset(b, 0xAA, 8);
	lfs_rd r = { b, 8 };
	uint32_t u32 = 7;
	uint16_t u16;
	assert_false(lfs_rd_u32(&r, 5, &u32));
	assert_int_equal(u32, 7); /* untouched on failure */
	assert_false(lfs_rd_u32(&r, 8, &u32));
	assert_false(lfs_rd_u16(&r, 7, &u16));
	assert_false(lfs_rd_u32(&r, SIZE_MAX, &u32));
	assert_false(lfs_rd_u32(&r, SIZE_MAX - 2, &u32));
	assert_true(lfs_rd_has(&r, 8, 0));
	assert_false(lfs_rd_has(&r, 9, 0));
	assert_false(lfs_rd_has(&r, 1, SIZE_MAX));
	assert_true(lfs_rd_has_n(&r, 0, 2, 4));
	assert_false(lfs_rd_has_n(&r, 0, 3, 4));
	assert_false(lfs_rd_has_n(&r, 0, SIZE_MAX / 2 + 1, 2)); /* count*size overflows */
	lfs_rd empty = { NULL, 0 };
	assert_false(lfs_rd_u8(&empty, 0, (uint8_t *)&u16));
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_little_endian),
		cmocka_unit_test(test_bounds),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
