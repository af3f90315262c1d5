/*
 * The model name of an NWN ASCII model follows its file's resref
 * (src/formats/nwn/nwn_rename.h): which statements are renamed, that every other
 * byte stays, and the resref rule (1-16 characters, [A-Za-z0-9_]).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "formats/nwn/nwn_rename.h"

static const char in[] = "# model: c_Bodak\r\n"
			 "newmodel c_Bodak\r\n"
			 "setsupermodel c_Bodak a_ba\r\n"
			 "beginmodelgeom c_Bodak\r\n"
			 "node dummy c_Bodak\r\n"
			 "  parent NULL\r\n"
			 "endnode\r\n"
			 "node trimesh torso_g\n"
			 "  parent c_bodak   # comment\n"
			 "  bitmap c_bodak\n"
			 "endnode\n"
			 "endmodelgeom c_Bodak\n"
			 "newanim walk c_Bodak\n"
			 "  animroot c_Bodak\n"
			 "doneanim walk c_Bodak\n"
			 "donemodel c_Bodak\n";

static const char want[] = "# model: c_Bodak\r\n"
			   "newmodel c_bodak2\r\n"
			   "setsupermodel c_bodak2 a_ba\r\n"
			   "beginmodelgeom c_bodak2\r\n"
			   "node dummy c_bodak2\r\n"
			   "  parent NULL\r\n"
			   "endnode\r\n"
			   "node trimesh torso_g\n"
			   "  parent c_bodak2   # comment\n"
			   "  bitmap c_bodak\n"
			   "endnode\n"
			   "endmodelgeom c_bodak2\n"
			   "newanim walk c_bodak2\n"
			   "  animroot c_bodak2\n"
			   "doneanim walk c_bodak2\n"
			   "donemodel c_bodak2\n";

static void test_rename_statements(void **state)
{
	(void)state;
	char *out = NULL, old[64];
	size_t n = 0;
	long k = nwn_text_rename(in, strlen(in), "c_bodak2", &out, &n, old, sizeof(old));
	assert_int_equal(k, 10);
	assert_string_equal(old, "c_Bodak");
	assert_non_null(out);
	assert_int_equal(n, strlen(want));
	assert_memory_equal(out, want, n); /* line ends, comments, bitmap untouched */
	free(out);
}

static void test_rename_noop(void **state)
{
	(void)state;
	char *out = NULL, old[64];
	size_t n = 0;
	assert_int_equal(nwn_text_rename(in, strlen(in), "c_Bodak", &out, &n, old, sizeof(old)), 0);
	assert_null(out);
	const char none[] = "node dummy x\nendnode\n"; /* no newmodel: the compiler says so */
	assert_int_equal(nwn_text_rename(none, strlen(none), "y", &out, &n, old, sizeof(old)), 0);
	assert_null(out);
	assert_string_equal(old, "");
}

static void test_resref_rule(void **state)
{
	(void)state;
	const char *why = NULL;
	assert_true(nwn_resref_valid("c_bodak2", &why));
	assert_null(why);
	assert_true(nwn_resref_valid("Dla_Horse_J1", NULL)); /* real files break lower case */
	assert_true(nwn_resref_valid("abcdefghijklmnop", NULL)); /* 16 */
	assert_false(nwn_resref_valid("abcdefghijklmnopq", &why)); /* 17 */
	assert_non_null(why);
	assert_false(nwn_resref_valid("", NULL));
	assert_false(nwn_resref_valid("bad-name", NULL));
	assert_false(nwn_resref_valid("a b", NULL));
	assert_false(nwn_resref_valid("a.b", NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rename_statements),
		cmocka_unit_test(test_rename_noop),
		cmocka_unit_test(test_resref_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
