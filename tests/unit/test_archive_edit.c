/**
 * @file test_archive_edit.c
 * Edits of ERF archives as the mount makes them (src/fs/archive_edit.h),
 * on every ERF-family archive of the corpus (real HAK/ERF/MOD V1.0/V1.1
 * and the generated V1.0 / E1 haks):
 *  - names: resource, scratch (editors' temp files) and refused names;
 *  - the same bytes saved give back the archive itself; new bytes change
 *    that entry only (decoded again: every other key and stored payload
 *    equal); written back, the archive is the original byte for byte
 *    (V1.x; an E1 payload is compressed again, so only its content is);
 *  - add then remove, and rename then rename back, give the original;
 *  - a model's view inside a hak: the unchanged text is a no-op, a bad
 *    text is refused with model.mdl:line:col, a changed value lands;
 *  - truncated and bit-flipped archives are refused, never a crash (ASan).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive_corpus.h"
#include "corpus.h"
#include "formats/nwnarchive/erf.h"
#include "formats/nwnarchive/edit.h"
#include "formats/nwnarchive/archive.h"
#include "fs/source.h"
#include "testrng.h"


static void test_names(void **state)
{
	(void)state;
	char rr[40], why[160];
	uint16_t t = 0;
	assert_int_equal(lfs_archive_name_class("c_aribeth.mdl", 16, rr, &t, why), LFS_ANAME_RESOURCE);
	assert_string_equal(rr, "c_aribeth");
	assert_int_equal(t, 2002);
	assert_int_equal(lfs_archive_name_class("TEX01.TGA", 16, rr, &t, why), LFS_ANAME_RESOURCE);
	assert_string_equal(rr, "TEX01");
	assert_int_equal(t, 3);
	/* editors' files stay scratch files */
	static const char *const scratch[] = { ".c_aribeth.mdl.swp", "tex.tga~", "4913", "#tex.tga#",
					       ".#tex.tga", "tex.tga.bak", "sedAbc123",
					       ".goutputstream-XYZ", "x.res", "noext.", "x.unknownext" };
	for (size_t i = 0; i < sizeof(scratch) / sizeof(*scratch); i++)
		if (lfs_archive_name_class(scratch[i], 16, rr, &t, why) != LFS_ANAME_SCRATCH)
			fail_msg("%s: not a scratch name", scratch[i]);
	assert_int_equal(lfs_archive_name_class("a_name_longer_than16.2da", 16, rr, &t, why),
			 LFS_ANAME_BAD);
	assert_non_null(strstr(why, "at most 16"));
	assert_int_equal(lfs_archive_name_class("a_name_longer_than16.2da", 32, rr, &t, why),
			 LFS_ANAME_RESOURCE);
	assert_int_equal(lfs_archive_name_class("bad-name.2da", 16, rr, &t, why), LFS_ANAME_BAD);
	assert_int_equal(lfs_archive_name_class("sp ace.2da", 16, rr, &t, why), LFS_ANAME_BAD);
	char buf[64];
	assert_true(lfs_archive_entry_name(buf, sizeof(buf), "", 10, 7));
	assert_string_equal(buf, "broken-7.txt");
	assert_false(lfs_archive_entry_name(buf, sizeof(buf), "Foo", 3, 7));
	assert_string_equal(buf, "Foo.tga");
}

/* Every key and stored payload of @p x and @p y equal but entry @p skip's payload. */
static void same_but(const lfs_erf *x, const lfs_erf *y, uint32_t skip, const char *what)
{
	assert_int_equal(x->n, y->n);
	assert_int_equal(x->n_loc, y->n_loc);
	for (uint32_t i = 0; i < x->n; i++) {
		const lfs_erf_entry *a = &x->e[i], *b = &y->e[i];
		if (memcmp(a->resref_raw, b->resref_raw, 32) || a->type != b->type ||
		    a->res_id != b->res_id)
			fail_msg("%s: entry %u: key changed", what, i);
		if (i == skip)
			continue;
		if (a->size != b->size || (a->size && memcmp(a->data, b->data, a->size)))
			fail_msg("%s: entry %u: payload changed", what, i);
	}
}

/*
 * The listed name of entry @p i (as fs_archive.c lists it) of the archive
 * of row @p row (its bytes @p d, @p n): listed by lfs_archive_build() from
 * the file in its folder.
 */
static bool listed(const lfs_arch_row *row, const uint8_t *d, size_t n, uint32_t i, char *out,
		   size_t outsz)
{
	lfs_viewset vs;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	struct stat st;
	int dfd = lfs_arch_dirfd(row->path);
	assert_true(dfd >= 0);
	lfs_err br =
		lfs_archive_build(dfd, lfs_base_name(row->path), SIZE_MAX, NULL, &st, &vs, NULL, &e);
	close(dfd);
	if (br != LFS_OK)
		return false;
	/* the top names in key order: rebuild the order from the archive */
	lfs_erf *a = NULL;
	bool ok = lfs_erf_decode(d, n, &a, &e) == LFS_OK && i < a->n;
	if (ok) {
		char raw[64];
		lfs_archive_entry_name(raw, sizeof(raw), a->e[i].resref, a->e[i].type, i);
		snprintf(out, outsz, "%s", raw);
		/* a unique name: listed exactly so */
		bool found = false;
		for (size_t k = 0; k < vs.n_views && !found; k++)
			found = !strcmp(vs.views[k].path, raw);
		ok = found;
	}
	lfs_erf_free(a);
	lfs_viewset_free(&vs);
	return ok;
}

static void test_payload_roundtrip(void **state)
{
	(void)state;
	size_t archives = 0, edits = 0;
	for (size_t r = 0; r < lfs_arch_nrows; r++) {
		if (!lfs_arch_is_erf(&lfs_arch_rows[r]))
			continue;
		size_t n;
		uint8_t *d = lfs_read_file(lfs_arch_rows[r].path, &n);
		assert_non_null(d);
		lfs_erf *a = NULL;
		lfs_error e;
		memset(&e, 0, sizeof(e));
		assert_int_equal(lfs_erf_decode(d, n, &a, &e), LFS_OK);
		archives++;
		/* up to three plain resources per archive: first, middle, last */
		uint32_t pick[3] = { 0, a->n / 2, a->n ? a->n - 1 : 0 };
		for (int p = 0; p < 3 && a->n; p++) {
			uint32_t i = pick[p];
			char name[64];
			if (a->e[i].type == 2002 || !a->e[i].resref[0] || a->e[i].type == 0 ||
			    !listed(&lfs_arch_rows[r], d, n, i, name, sizeof(name)))
				continue;
			uint8_t *cur = NULL;
			size_t cn = 0;
			if (lfs_erf_read(a, i, &cur, &cn, &e) != LFS_OK)
				continue;
			uint8_t *o1 = NULL, *o2 = NULL;
			size_t n1 = 0, n2 = 0;
			/* the same bytes: the archive itself */
			lfs_err ar = lfs_archive_apply(d, n, name, (const char *)cur, cn, NULL, &o1, &n1,
						       NULL, NULL, &e);
			if (ar != LFS_OK)
				fail_msg("%s: %s: %s", lfs_arch_rows[r].file, name, e.msg);
			assert_int_equal(n1, n);
			assert_memory_equal(o1, d, n);
			free(o1);
			/* new bytes: that entry only */
			static const char nb[] = "changed by test_archive_edit\n";
			char *reread = NULL;
			size_t rn = 0;
			ar = lfs_archive_apply(d, n, name, nb, sizeof(nb) - 1, NULL, &o1, &n1, &reread, &rn,
					       &e);
			if (ar != LFS_OK)
				fail_msg("%s: %s: %s", lfs_arch_rows[r].file, name, e.msg);
			assert_int_equal(rn, sizeof(nb) - 1);
			assert_memory_equal(reread, nb, rn);
			free(reread);
			lfs_erf *b = NULL;
			assert_int_equal(lfs_erf_decode(o1, n1, &b, &e), LFS_OK);
			same_but(a, b, i, lfs_arch_rows[r].file);
			uint8_t *back = NULL;
			size_t bn = 0;
			assert_int_equal(lfs_erf_read(b, i, &back, &bn, &e), LFS_OK);
			assert_int_equal(bn, sizeof(nb) - 1);
			assert_memory_equal(back, nb, bn);
			free(back);
			lfs_erf_free(b);
			/* written back: the original bytes (an E1 entry is compressed anew) */
			assert_int_equal(lfs_archive_apply(o1, n1, name, (const char *)cur, cn, NULL, &o2,
							   &n2, NULL, NULL, &e), LFS_OK);
			if (a->version != LFS_ERF_E10 || a->e[i].compression == 0) {
				if (n2 != n || memcmp(o2, d, n))
					fail_msg("%s: %s written back is not the original archive",
						 lfs_arch_rows[r].file, name);
			}
			free(o1);
			free(o2);
			free(cur);
			edits++;
		}
		lfs_erf_free(a);
		free(d);
	}
	assert_true(archives >= 10);
	assert_true(edits >= 20);
}

static void test_add_remove_rename(void **state)
{
	(void)state;
	size_t done = 0;
	for (size_t r = 0; r < lfs_arch_nrows; r++) {
		if (!lfs_arch_is_erf(&lfs_arch_rows[r]))
			continue;
		size_t n;
		uint8_t *d = lfs_read_file(lfs_arch_rows[r].path, &n);
		assert_non_null(d);
		lfs_error e;
		memset(&e, 0, sizeof(e));
		uint8_t *o1 = NULL, *o2 = NULL, *o3 = NULL;
		size_t n1, n2, n3;
		char nm[256];
		static const uint8_t body[] = "a,b\n1,2\n";
		assert_int_equal(lfs_archive_add(d, n, "zz_newtable.2da", body, sizeof(body) - 1, &o1,
						 &n1, nm, &e), LFS_OK);
		assert_string_equal(nm, "zz_newtable.2da");
		/* a second one of that ResRef and type is refused, whatever the case */
		assert_int_equal(lfs_archive_add(o1, n1, "ZZ_NEWTABLE.2da", body, 1, &o2, &n2, NULL, &e),
				 LFS_ERR_UNSUPPORTED);
		assert_null(o2);
		assert_int_equal(lfs_archive_rename(o1, n1, "zz_newtable.2da", "zz_other.txt", false,
						    &o2, &n2, &e), LFS_OK);
		lfs_erf *b = NULL;
		assert_int_equal(lfs_erf_decode(o2, n2, &b, &e), LFS_OK);
		uint32_t j = lfs_erf_find(b, "zz_other", 10);
		assert_int_not_equal(j, UINT32_MAX);
		assert_int_equal(j, b->n - 1); /* renamed in place */
		lfs_erf_free(b);
		assert_int_equal(lfs_archive_remove(o2, n2, "zz_other.txt", &o3, &n3, &e), LFS_OK);
		if (n3 != n || memcmp(o3, d, n))
			fail_msg("%s: add, rename, remove: not the original archive", lfs_arch_rows[r].file);
		/* names that are not resources, and missing ones, are refused */
		free(o2);
		o2 = NULL;
		assert_int_equal(lfs_archive_add(d, n, "bad-name.2da", body, 1, &o2, &n2, NULL, &e),
				 LFS_ERR_UNSUPPORTED);
		assert_int_equal(lfs_archive_remove(d, n, "no_such_thing.2da", &o2, &n2, &e),
				 LFS_ERR_UNSUPPORTED);
		assert_null(o2);
		free(o1);
		free(o3);
		free(d);
		done++;
	}
	assert_true(done >= 10);
}

/* A model inside the generated hak: no-op, refused, landed. */
static void test_model_view(void **state)
{
	(void)state;
	const lfs_arch_row *row = NULL;
	for (size_t r = 0; r < lfs_arch_nrows && !row; r++)
		if (strstr(lfs_arch_rows[r].file, "gen/nwn_erf/models_v1.hak"))
			row = &lfs_arch_rows[r];
	if (!row)
		LFS_SKIP("no gen/nwn_erf/models_v1.hak in the archive manifest");
	size_t n;
	uint8_t *d = lfs_read_file(row->path, &n);
	assert_non_null(d);
	/* the model's views as the whole tree has them (listing, then expanded) */
	lfs_viewset vs;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	struct stat st;
	int dfd = lfs_arch_dirfd(row->path);
	assert_true(dfd >= 0);
	assert_int_equal(lfs_archive_build(dfd, "models_v1.hak", SIZE_MAX, NULL, &st, &vs, NULL, &e),
			 LFS_OK);
	assert_int_equal(lfs_source_expand(dfd, "models_v1.hak", NULL, &vs, NULL, &e), LFS_OK);
	close(dfd);
	const lfs_view *v = NULL;
	for (size_t k = 0; k < vs.n_views && !v; k++)
		if (!strcmp(vs.views[k].path, "c_aribeth.mdl/model.mdl"))
			v = &vs.views[k];
	assert_non_null(v);
	assert_true(v->writable);
	uint8_t *o = NULL;
	size_t on = 0;
	assert_int_equal(lfs_archive_apply(d, n, v->path, v->data, v->size, NULL, &o, &on, NULL, NULL,
					   &e), LFS_OK);
	assert_int_equal(on, n);
	assert_memory_equal(o, d, n);
	free(o);
	/* a bad value: refused naming the line */
	char *t = malloc(v->size + 64);
	assert_non_null(t);
	memcpy(t, v->data, v->size);
	char *pos = strstr(t, "\n  position ");
	assert_non_null(pos);
	size_t line = 2;
	for (char *c = t; c < pos; c++)
		line += *c == '\n';
	memcpy(pos + 12, "banana", 6);
	assert_int_equal(lfs_archive_apply(d, n, v->path, t, v->size, NULL, &o, &on, NULL, NULL, &e),
			 LFS_ERR_PARSE);
	assert_null(o);
	char want[64];
	snprintf(want, sizeof(want), "model.mdl:%zu:", line);
	if (!strstr(e.msg, want))
		fail_msg("message '%s' does not name %s", e.msg, want);
	/* a changed value lands in that entry only */
	memcpy(t, v->data, v->size);
	char *sp = strchr(pos + 12, ' '); /* end of the first value */
	assert_non_null(sp);
	size_t head = (size_t)(pos + 12 - t), vl = (size_t)(sp - (pos + 12));
	char *t2 = malloc(v->size + 8);
	assert_non_null(t2);
	memcpy(t2, t, head);
	memcpy(t2 + head, "0.5", 3);
	memcpy(t2 + head + 3, sp, v->size - head - vl);
	size_t tn = v->size - vl + 3;
	char *reread = NULL;
	size_t rn = 0;
	lfs_err r = lfs_archive_apply(d, n, v->path, t2, tn, NULL, &o, &on, &reread, &rn, &e);
	free(t2);
	if (r != LFS_OK)
		fail_msg("changed value refused: %s", e.msg);
	assert_non_null(reread);
	lfs_erf *a = NULL, *b = NULL;
	assert_int_equal(lfs_erf_decode(d, n, &a, &e), LFS_OK);
	assert_int_equal(lfs_erf_decode(o, on, &b, &e), LFS_OK);
	uint32_t i = lfs_erf_find(a, "c_aribeth", 2002);
	same_but(a, b, i, "c_aribeth.mdl");
	assert_true(a->e[i].size != b->e[i].size || memcmp(a->e[i].data, b->e[i].data, a->e[i].size));
	lfs_erf_free(a);
	lfs_erf_free(b);
	free(reread);
	free(o);
	free(t);
	lfs_viewset_free(&vs);
	free(d);
}

/* Truncated and bit-flipped archives: refused or edited, never a crash. */
static void test_hostile(void **state)
{
	(void)state;
	lfs_rng rng;
	lfs_rng_seed(&rng, "archive_edit", 13);
	size_t refused = 0;
	for (size_t r = 0; r < lfs_arch_nrows; r++) {
		if (!lfs_arch_is_erf(&lfs_arch_rows[r]))
			continue;
		size_t n;
		uint8_t *d = lfs_read_file(lfs_arch_rows[r].path, &n);
		assert_non_null(d);
		for (int k = 0; k < 40; k++) {
			size_t m = k < 20 ? (size_t)(lfs_rng_u64(&rng) % (n + 1)) : n;
			uint8_t *c = malloc(m ? m : 1);
			assert_non_null(c);
			memcpy(c, d, m);
			if (k >= 20 && m)
				for (int f = 0; f < 4; f++)
					c[lfs_rng_u64(&rng) % (m < 512 ? m : 512)] ^=
						(uint8_t)(1u << (lfs_rng_u32(&rng) % 8));
			uint8_t *o = NULL;
			size_t on = 0;
			lfs_error e;
			memset(&e, 0, sizeof(e));
			lfs_err a1 = lfs_archive_apply(c, m, "x.txt", "y", 1, NULL, &o, &on, NULL, NULL, &e);
			free(o);
			o = NULL;
			lfs_err a2 = lfs_archive_add(c, m, "zz.txt", (const uint8_t *)"y", 1, &o, &on, NULL,
						     &e);
			free(o);
			o = NULL;
			lfs_err a3 = lfs_archive_remove(c, m, "zz.txt", &o, &on, &e);
			free(o);
			refused += a1 != LFS_OK && a2 != LFS_OK && a3 != LFS_OK;
			free(c);
		}
		free(d);
	}
	assert_true(refused > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_payload_roundtrip),
		cmocka_unit_test(test_add_remove_rename),
		cmocka_unit_test(test_model_view),
		cmocka_unit_test(test_hostile),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, lfs_arch_setup, lfs_arch_teardown));
}
