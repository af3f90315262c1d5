/**
 * @file test_fs_tree.c
 * The virtual tree (src/fs/fs.c) without FUSE, over the corpus tree and over
 * a small SOURCE made at test time below the build root:
 *  - readdir (plain and plus, resumed from offsets in small batches) and
 *    lookup agree on every entry's type and st_ino;
 *  - every file's st_size equals the bytes read; passthrough files read as
 *    their source bytes; model.mdl equals lfs_views_build()'s;
 *  - every corpus binary is a folder; lookup counts are honoured (after
 *    forgetting everything only the three pinned nodes remain);
 *  - st_ino of a view survives forget + lookup;
 *  - a corrupt NWN-looking binary is a model folder (listing decodes
 *    nothing) holding README.txt with its message and its original bytes,
 *    and the message is in /.legacyfs/errors; a changed source is noticed on getattr
 *    and lookup without any watcher;
 *  - a cache bound smaller than one model still gives exact sizes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "conform.h"
#include "corpus.h"
#include "fs/fs.h"
#include "registry/viewset.h"

static void quiet(int level, const char *msg)
{
	(void)level;
	(void)msg;
}

static lfs_fs *mount_fs(const char *src, size_t cache_bytes)
{
	lfs_fs_opts o = { .timeout = 1, .cache_bytes = cache_bytes, .cache_entries = 0,
			  .max_model_size = 64 << 20, .watch = false, .log = quiet };
	lfs_fs *fs = NULL;
	assert_int_equal(lfs_fs_new(src, &o, &fs), 0);
	return fs;
}

/* ---- readdir collection in small batches ---- */

struct ent {
	char name[256];
	uint64_t ino;    /* node id when plus */
	uint64_t st_ino;
	mode_t type;
	off_t next;
};

struct batch {
	struct ent *v;
	size_t n, cap, taken, limit;
};

static int collect(void *ctx, const char *name, const lfs_fs_entry *e, off_t next)
{
	struct batch *b = ctx;
	if (b->taken == b->limit)
		return 1; /* "buffer full" */
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 64;
		b->v = realloc(b->v, b->cap * sizeof(*b->v));
		assert_non_null(b->v);
	}
	struct ent *x = &b->v[b->n++];
	snprintf(x->name, sizeof(x->name), "%s", name);
	x->ino = e->ino;
	x->st_ino = (uint64_t)e->attr.st_ino;
	x->type = e->attr.st_mode & S_IFMT;
	x->next = next;
	b->taken++;
	return 0;
}

/* Whole listing of @p dir, 7 entries per call. */
static struct batch list_dir(lfs_fs *fs, uint64_t dir, bool plus)
{
	struct batch b = { 0 };
	off_t off = 0;
	for (;;) {
		size_t before = b.n;
		b.taken = 0;
		b.limit = 7;
		assert_int_equal(lfs_fs_readdir(fs, dir, off, plus, collect, &b), 0);
		if (b.n == before)
			break;
		off = b.v[b.n - 1].next;
	}
	return b;
}

static size_t read_all(lfs_fs *fs, uint64_t ino, uint8_t **out)
{
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	for (;;) {
		lfs_fs_read r;
		assert_int_equal(lfs_fs_read_begin(fs, ino, 4096, (off_t)n, &r), 0);
		size_t got;
		if (r.fd >= 0) {
			if (n + 4096 > cap)
				buf = realloc(buf, cap *= 2);
			ssize_t k = pread(r.fd, buf + n, 4096, (off_t)n);
			assert_true(k >= 0);
			got = (size_t)k;
		} else {
			if (n + r.len > cap)
				buf = realloc(buf, cap = (n + r.len) * 2);
			if (r.len)
				memcpy(buf + n, r.data, r.len);
			got = r.len;
		}
		lfs_fs_read_end(fs, &r);
		n += got;
		if (got == 0)
			break;
	}
	*out = buf;
	return n;
}

struct walk_stats {
	size_t models, files, dirs, views;
};

/* Recursively check folder @p dir; @p src is the matching source folder
 * (NULL inside model folders). */
static void walk(lfs_fs *fs, uint64_t dir, const char *src, bool plus, struct walk_stats *ws)
{
	struct batch b = list_dir(fs, dir, plus);
	assert_true(b.n >= 2);
	assert_string_equal(b.v[0].name, ".");
	assert_string_equal(b.v[1].name, "..");
	for (size_t i = 2; i < b.n; i++) {
		struct ent *x = &b.v[i];
		lfs_fs_entry e;
		/* A candidate model file the mount has not classified yet is listed
		 * without a type (DT_UNKNOWN) nor, in READDIRPLUS, attributes: the
		 * listing reads no header (docs/mount.md "Listing is cheap"). */
		bool untyped = x->type == 0;
		if (untyped) {
			assert_non_null(src);
			assert_int_equal(x->ino, 0);
		}
		assert_int_equal(lfs_fs_lookup(fs, dir, x->name, &e), 0);
		if (plus && !untyped) {
			assert_int_equal(x->ino, e.ino); /* same node for both */
			lfs_fs_forget(fs, x->ino, 1);
		}
		if (untyped)
			assert_true(S_ISDIR(e.attr.st_mode) || S_ISREG(e.attr.st_mode));
		else
			assert_int_equal(x->type, e.attr.st_mode & S_IFMT);
		assert_int_equal(x->st_ino, (uint64_t)e.attr.st_ino); /* d_ino == st_ino */
		struct stat st;
		double to;
		assert_int_equal(lfs_fs_getattr(fs, e.ino, &st, &to), 0);
		assert_int_equal(st.st_size, e.attr.st_size);
		char spath[8192];
		if (src)
			snprintf(spath, sizeof(spath), "%s/%s", src, x->name);
		if (S_ISDIR(st.st_mode)) {
			if (dir == LFS_FS_ROOT_ID && strcmp(x->name, LFS_FS_CTL_NAME) == 0) {
				lfs_fs_forget(fs, e.ino, 1);
				continue;
			}
			struct stat sst;
			bool is_model = src && lstat(spath, &sst) == 0 && S_ISREG(sst.st_mode);
			if (is_model) {
				ws->models++;
				/* model.mdl equals what lfs_views_build gives */
				lfs_fs_entry me;
				assert_int_equal(lfs_fs_lookup(fs, e.ino, "model.mdl", &me), 0);
				uint8_t *got;
				size_t n = read_all(fs, me.ino, &got);
				size_t slen;
				uint8_t *data = lfs_read_file(spath, &slen);
				lfs_viewset vs;
				lfs_error err;
				assert_int_equal(lfs_views_build(x->name, data, slen, NULL, &vs, &err), LFS_OK);
				const lfs_view *v = lfs_viewset_find(&vs, "model.mdl");
				assert_non_null(v);
				assert_int_equal(n, v->size);
				assert_memory_equal(got, v->data, n);
				lfs_viewset_free(&vs);
				free(data);
				free(got);
				lfs_fs_forget(fs, me.ino, 1);
			} else {
				ws->dirs++;
			}
			walk(fs, e.ino, is_model ? NULL : (src ? spath : NULL), plus, ws);
		} else if (S_ISREG(st.st_mode)) {
			uint8_t *got;
			size_t n = read_all(fs, e.ino, &got);
			assert_int_equal(n, (size_t)st.st_size);
			if (src) {
				ws->files++;
				size_t slen;
				uint8_t *data = lfs_read_file_ok(spath, &slen);
				assert_int_equal(slen, n);
				assert_memory_equal(data, got, n);
				free(data);
			} else {
				ws->views++;
			}
			free(got);
		}
		lfs_fs_forget(fs, e.ino, 1);
	}
	free(b.v);
}

static void test_corpus_walk(void **state)
{
	(void)state;
	char src[4096];
	snprintf(src, sizeof(src), "%s/nwn/tree", lfs_corpus_dir_or_skip());
	size_t nbin = 0;
	lfs_free_list(lfs_corpus_list("nwn", "binary.txt", &nbin));

	for (int plus = 0; plus < 2; plus++) {
		lfs_fs *fs = mount_fs(src, 256 << 20);
		struct walk_stats ws = { 0 };
		walk(fs, LFS_FS_ROOT_ID, src, plus, &ws);
		assert_true(ws.models >= nbin);
		assert_true(ws.files > 0 && ws.views > ws.models);
		lfs_fs_stats s;
		lfs_fs_get_stats(fs, &s);
		assert_int_equal(s.nodes, 5); /* root, /.legacyfs, errors, status, resources: the rest forgotten */
		assert_int_equal(s.build_failures, 0);
		print_message("plus=%d: %zu models, %zu plain files, %zu views, %zu folders\n", plus,
			      ws.models, ws.files, ws.views, ws.dirs);
		lfs_fs_free(fs);
	}
}

static void test_small_cache(void **state)
{
	(void)state;
	char src[4096];
	snprintf(src, sizeof(src), "%s/nwn/tree/nwnprc/nwnprc/others", lfs_corpus_dir_or_skip());
	lfs_fs *fs = mount_fs(src, 1); /* only the most recent entry stays */
	struct walk_stats ws = { 0 };
	walk(fs, LFS_FS_ROOT_ID, src, false, &ws);
	assert_true(ws.models > 0);
	lfs_fs_stats s;
	lfs_fs_get_stats(fs, &s);
	assert_true(s.cache_evictions > 0);
	assert_true(s.cache_entries <= 1);
	lfs_fs_free(fs);
}

/* ---- a SOURCE of our own ---- */

static char tmp[4096];

static void put(const char *rel, const uint8_t *data, size_t n)
{
	char p[8192];
	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	fclose(f);
}

static uint8_t *nth_binary(size_t i, size_t *n)
{
	size_t cnt;
	char **l = lfs_corpus_list("nwn", "binary.txt", &cnt);
	assert_true(i < cnt);
	uint8_t *d = lfs_read_file(l[i], n);
	lfs_free_list(l);
	return d;
}

/* First 60% of a binary with the header sizes patched to add up again. */
static uint8_t *corrupt(const uint8_t *d, size_t n, size_t *out_n)
{
	size_t cut = n * 6 / 10;
	uint8_t *c = malloc(cut);
	memcpy(c, d, cut);
	uint32_t a = (uint32_t)(cut - 12), z = 0;
	memcpy(c + 4, &a, 4); /* little-endian host (x86-64, as the CI) */
	memcpy(c + 8, &z, 4);
	*out_n = cut;
	return c;
}

static uint64_t look(lfs_fs *fs, uint64_t dir, const char *name, struct stat *st)
{
	lfs_fs_entry e;
	int r = lfs_fs_lookup(fs, dir, name, &e);
	if (r)
		return 0;
	if (st)
		*st = e.attr;
	return e.ino;
}

static void test_corrupt_and_changes(void **state)
{
	(void)state;
	const char *b = getenv("LFS_BUILD_ROOT");
	snprintf(tmp, sizeof(tmp), "%s/test-fs-tree-XXXXXX", b ? b : ".");
	assert_non_null(mkdtemp(tmp));
	size_t n0, n1, nb;
	uint8_t *b0 = nth_binary(0, &n0), *b1 = nth_binary(1, &n1);
	uint8_t *bad = corrupt(b1, n1, &nb);
	put("good.mdl", b0, n0);
	put("bad.mdl", bad, nb);

	lfs_fs *fs = mount_fs(tmp, 1 << 20);
	struct stat st;
	/* the corrupt file: a model folder by its header (listing reads and
	 * decodes nothing: both are untyped until looked up); inside,
	 * README.txt with the message and the original bytes */
	struct batch ls = list_dir(fs, LFS_FS_ROOT_ID, false);
	bool seen = false;
	for (size_t i = 0; i < ls.n; i++)
		if (strcmp(ls.v[i].name, "bad.mdl") == 0) {
			seen = true;
			assert_int_equal(ls.v[i].type, 0);
		} else if (strcmp(ls.v[i].name, "good.mdl") == 0) {
			assert_int_equal(ls.v[i].type, 0);
		}
	free(ls.v);
	assert_true(seen);
	lfs_fs_stats s0;
	lfs_fs_get_stats(fs, &s0);
	assert_int_equal(s0.build_failures, 0); /* nothing built by the listing */
	uint64_t ib = look(fs, LFS_FS_ROOT_ID, "bad.mdl", &st);
	assert_true(ib != 0);
	assert_true(S_ISDIR(st.st_mode));
	uint8_t *got;
	uint64_t ibo = look(fs, ib, "bad.mdl", &st);
	assert_true(ibo != 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0222, 0);
	assert_int_equal(st.st_size, nb);
	assert_int_equal(read_all(fs, ibo, &got), nb);
	assert_memory_equal(got, bad, nb);
	free(got);
	uint64_t ibr = look(fs, ib, "README.txt", &st);
	assert_true(ibr != 0);
	size_t rn = read_all(fs, ibr, &got);
	assert_true(rn > 20);
	assert_memory_equal(got, "bad.mdl: error: ", 16);
	free(got);
	lfs_fs_forget(fs, ibo, 1);
	lfs_fs_forget(fs, ibr, 1);
	uint64_t ctl = look(fs, LFS_FS_ROOT_ID, LFS_FS_CTL_NAME, NULL);
	uint64_t errs = look(fs, ctl, LFS_FS_ERRORS_NAME, &st);
	assert_true(errs != 0);
	size_t elen = read_all(fs, errs, &got);
	assert_int_equal(elen, (size_t)st.st_size);
	assert_true(elen > 10);
	assert_memory_equal(got, "bad.mdl: ", 9);
	assert_int_equal(got[elen - 1], '\n');
	free(got);

	/* the good one, and a view's st_ino across forget + lookup */
	uint64_t ig = look(fs, LFS_FS_ROOT_ID, "good.mdl", &st);
	assert_true(S_ISDIR(st.st_mode));
	struct stat vst;
	uint64_t iv = look(fs, ig, "model.mdl", &vst);
	assert_true(iv != 0);
	uint64_t sino = (uint64_t)vst.st_ino;
	lfs_fs_forget(fs, iv, 1);
	iv = look(fs, ig, "model.mdl", &vst);
	assert_int_equal((uint64_t)vst.st_ino, sino);

	/* rewrite in place with another model: getattr sees the new size */
	put("good.mdl", b1, n1);
	lfs_viewset vs;
	lfs_error err;
	assert_int_equal(lfs_views_build("good.mdl", b1, n1, NULL, &vs, &err), LFS_OK);
	double to;
	assert_int_equal(lfs_fs_getattr(fs, iv, &vst, &to), 0);
	assert_int_equal((size_t)vst.st_size, lfs_viewset_find(&vs, "model.mdl")->size);
	assert_int_equal(read_all(fs, iv, &got), (size_t)vst.st_size);
	assert_memory_equal(got, lfs_viewset_find(&vs, "model.mdl")->data, (size_t)vst.st_size);
	free(got);
	lfs_viewset_free(&vs);

	/* good -> corrupt: still the same model folder (its header says so),
	 * its views are gone, the original bytes are inside */
	put("good.mdl", bad, nb);
	assert_int_equal(lfs_fs_getattr(fs, ig, &st, &to), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(lfs_fs_getattr(fs, iv, &st, &to), ESTALE);
	uint64_t ig2 = look(fs, LFS_FS_ROOT_ID, "good.mdl", &st);
	assert_true(ig2 == ig);
	assert_true(S_ISDIR(st.st_mode));
	uint64_t igo = look(fs, ig, "good.mdl", &st);
	assert_true(igo != 0);
	assert_int_equal(read_all(fs, igo, &got), nb);
	assert_memory_equal(got, bad, nb);
	free(got);
	lfs_fs_forget(fs, igo, 1);
	/* and the errors file grew, keeping its old text as a prefix */
	assert_int_equal(lfs_fs_getattr(fs, errs, &st, &to), 0);
	assert_true((size_t)st.st_size > elen);
	assert_true(to == 0);

	/* a vanished name */
	char p[8192];
	snprintf(p, sizeof(p), "%s/bad.mdl", tmp);
	unlink(p);
	lfs_fs_entry e;
	assert_int_equal(lfs_fs_lookup(fs, LFS_FS_ROOT_ID, "bad.mdl", &e), ENOENT);
	assert_int_equal(e.ino, 0);
	assert_int_equal(lfs_fs_lookup(fs, LFS_FS_ROOT_ID, "..", &e), ENOENT);

	lfs_fs_forget(fs, iv, 1);
	lfs_fs_forget(fs, ig, 1);
	lfs_fs_forget(fs, ig2, 1);
	lfs_fs_forget(fs, ib, 1);
	lfs_fs_forget(fs, errs, 1);
	lfs_fs_forget(fs, ctl, 1);
	lfs_fs_stats s;
	lfs_fs_get_stats(fs, &s);
	assert_int_equal(s.nodes, 5);
	lfs_fs_free(fs);
	free(b0);
	free(b1);
	free(bad);
	snprintf(p, sizeof(p), "rm -rf '%s'", tmp);
	assert_int_equal(system(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_walk),
		cmocka_unit_test(test_small_cache),
		cmocka_unit_test(test_corrupt_and_changes),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
