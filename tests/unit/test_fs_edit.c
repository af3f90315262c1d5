/**
 * @file test_fs_edit.c
 * Editing through the fs layer (src/fs/fs.c, docs/editing.md), without FUSE,
 * on corpus NOD/NAD files COPIED at run time into a SOURCE folder below the
 * build root. Expected source bytes are always computed with
 * lfs_views_apply() from the bytes before the save (the mount must write
 * exactly what the companion command writes):
 *  - in-place write (truncate + write + flush) commits; the view then shows
 *    the text generated from the new bytes; FLUSH without a WRITE commits
 *    nothing (bash's early flush);
 *  - a bad edit: flush/fsync EINVAL, SOURCE untouched (bytes, mtime, inode),
 *    errors.txt holds lfs_views_apply's message, VIEW.rejected the text, the
 *    view the generated text;
 *  - a no-op save leaves bytes and mtime alone;
 *  - scratch -> view rename commits; view -> scratch rename moves the text
 *    and the view stays; unlink + create of a view replaces it; a deleted
 *    view comes back after the grace time;
 *  - the errno of every kind of rename in a model folder (source kind x
 *    target kind, RENAME_NOREPLACE, renameat2 flags);
 *  - a save based on a text the source no longer generates is refused;
 *  - two views of one model saved one after the other both land;
 *  - scratch files: O_EXCL, symlink/readlink, link (scratch and view),
 *    chmod, truncate, the memory bound (ENOSPC);
 *  - passthrough create/write/rename/unlink/mkdir/rmdir/symlink/chmod in
 *    SOURCE; model folders cannot be removed or renamed (EPERM);
 *  - membuf holes, truncation and bounds.
 */
#define _GNU_SOURCE
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "conform.h"
#include "corpus.h"
#include "fs/fs.h"
#include "fs/membuf.h"
#include "registry/viewset.h"

#define NOD "PLC_Cndl02.nod"
#define NAD "PLC_Cndl02__on.nad"

static void quiet(int level, const char *msg)
{
	(void)level;
	(void)msg;
}

static char src_dir[1024];

/* Paths below SOURCE fit: src_dir is at most 1023 bytes. */
#define PATHSZ 2048

/* Fresh SOURCE with copies of the NOD and NAD test files and a plain file. */
static void make_source(void)
{
	const char *corpus = lfs_corpus_dir_or_skip();
	const char *b = getenv("LFS_BUILD_ROOT");
	snprintf(src_dir, sizeof(src_dir), "%s/tests/unit/work-fs-edit-XXXXXX", b ? b : ".");
	char parent[PATHSZ];
	snprintf(parent, sizeof(parent), "%s/tests/unit", b ? b : ".");
	mkdir(parent, 0755);
	assert_non_null(mkdtemp(src_dir));
	const char *files[][2] = { { "nod/" NOD, NOD }, { "nad/" NAD, NAD } };
	for (size_t i = 0; i < 2; i++) {
		char in[PATHSZ], out[PATHSZ];
		snprintf(in, sizeof(in), "%s/%s", corpus, files[i][0]);
		snprintf(out, sizeof(out), "%s/%s", src_dir, files[i][1]);
		size_t n;
		uint8_t *d = lfs_read_file(in, &n);
		if (!d)
			LFS_SKIP(in);
		FILE *f = fopen(out, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(d, 1, n, f), n);
		assert_int_equal(fclose(f), 0);
		chmod(out, 0640);
		free(d);
	}
	char p[PATHSZ];
	snprintf(p, sizeof(p), "%s/plain.txt", src_dir);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs("plain\n", f);
	fclose(f);
}

static void rm_rf(const char *dir)
{
	char cmd[PATHSZ + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static lfs_fs *open_fs(size_t edit_bytes)
{
	lfs_fs_opts o = { .timeout = 1, .max_model_size = 64 << 20, .watch = false, .log = quiet,
			  .unlink_grace = 0.2, .edit_bytes = edit_bytes };
	lfs_fs *fs = NULL;
	assert_int_equal(lfs_fs_new(src_dir, &o, &fs), 0);
	return fs;
}

static uint64_t look(lfs_fs *fs, uint64_t dir, const char *name)
{
	lfs_fs_entry e;
	int r = lfs_fs_lookup(fs, dir, name, &e);
	if (r)
		fail_msg("lookup %s: %s", name, strerror(r));
	return e.ino;
}

static int look_err(lfs_fs *fs, uint64_t dir, const char *name)
{
	lfs_fs_entry e;
	int r = lfs_fs_lookup(fs, dir, name, &e);
	if (!r)
		lfs_fs_forget(fs, e.ino, 1);
	return r;
}

static char *read_ino(lfs_fs *fs, uint64_t ino, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		lfs_fs_read r;
		assert_int_equal(lfs_fs_read_begin(fs, ino, 4096, (off_t)n, &r), 0);
		size_t got;
		if (n + 4096 > cap)
			buf = realloc(buf, cap *= 2);
		if (r.fd >= 0) {
			ssize_t k = pread(r.fd, buf + n, 4096, (off_t)n);
			assert_true(k >= 0);
			got = (size_t)k;
		} else {
			if (r.len)
				memcpy(buf + n, r.data, r.len);
			got = r.len;
		}
		lfs_fs_read_end(fs, &r);
		n += got;
		if (!got)
			break;
	}
	*len = n;
	return buf;
}

static uint8_t *src_bytes(const char *name, size_t *n, struct stat *st)
{
	char p[PATHSZ];
	snprintf(p, sizeof(p), "%s/%s", src_dir, name);
	if (st)
		assert_int_equal(stat(p, st), 0);
	uint8_t *d = lfs_read_file_ok(p, n);
	return d;
}

/* Copy of @p text with the token after the @p nth occurrence of @p key replaced by @p val. */
static char *subst(const char *text, size_t n, const char *key, int nth, const char *val, size_t *outn)
{
	const char *p = text, *end = text + n;
	size_t kl = strlen(key);
	for (int i = 0; i < nth; i++) {
		p = memmem(p, (size_t)(end - p), key, kl);
		assert_non_null(p);
		p += kl;
	}
	const char *q = p;
	while (q < end && *q != ' ' && *q != '\n' && *q != ',')
		q++;
	size_t vl = strlen(val);
	char *o = malloc(n - (size_t)(q - p) + vl + 1);
	size_t a = (size_t)(p - text);
	memcpy(o, text, a);
	memcpy(o + a, val, vl);
	memcpy(o + a + vl, q, (size_t)(end - q));
	*outn = n - (size_t)(q - p) + vl;
	o[*outn] = '\0';
	return o;
}

/* In-place save: truncate, write in 1000-byte pieces, then @p fsync or flush. */
static int save_inplace(lfs_fs *fs, uint64_t ino, const char *text, size_t n, bool fsync)
{
	struct stat a, out;
	double t;
	memset(&a, 0, sizeof(a));
	assert_int_equal(lfs_fs_setattr(fs, ino, &a, LFS_SET_SIZE, NULL, &out, &t), 0);
	assert_int_equal(lfs_fs_flush(fs, ino, NULL), 0); /* bash: flush before any write */
	for (size_t off = 0; off < n; off += 1000) {
		size_t k = n - off < 1000 ? n - off : 1000, w;
		assert_int_equal(lfs_fs_write(fs, ino, text + off, k, (off_t)off, NULL, &w), 0);
		assert_int_equal(w, k);
	}
	return fsync ? lfs_fs_fsync(fs, ino, false) : lfs_fs_flush(fs, ino, NULL);
}

/* What lfs_views_apply makes of @p text on @p orig (0 length on refusal). */
static uint8_t *expect_apply(const char *name, const uint8_t *orig, size_t n, const char *vpath,
			     const char *text, size_t tn, size_t *outn, lfs_error *err)
{
	uint8_t *out = NULL;
	lfs_err r = lfs_views_apply(name, orig, n, vpath, text, tn, &out, outn, err);
	if (r != LFS_OK) {
		free(out);
		*outn = 0;
		return NULL;
	}
	return out;
}

static void check_view_is_generated(lfs_fs *fs, uint64_t ino, const char *model, const char *vpath)
{
	size_t n, vn;
	uint8_t *src = src_bytes(model, &n, NULL);
	lfs_viewset vs;
	lfs_error err;
	assert_int_equal(lfs_views_build(model, src, n, NULL, &vs, &err), LFS_OK);
	const lfs_view *v = lfs_viewset_find(&vs, vpath);
	assert_non_null(v);
	char *got = read_ino(fs, ino, &vn);
	assert_int_equal(vn, v->size);
	assert_memory_equal(got, v->data, vn);
	struct stat st;
	double t;
	assert_int_equal(lfs_fs_getattr(fs, ino, &st, &t), 0);
	assert_int_equal((size_t)st.st_size, v->size);
	free(got);
	lfs_viewset_free(&vs);
	free(src);
}

static void test_inplace_bad_noop(void **state)
{
	(void)state;
	make_source();
	lfs_fs *fs = open_fs(0);
	uint64_t m = look(fs, LFS_FS_ROOT_ID, NOD);
	uint64_t v = look(fs, m, "model.txt");
	size_t tn, n0;
	char *text = read_ino(fs, v, &tn);
	struct stat st0;
	uint8_t *orig = src_bytes(NOD, &n0, &st0);

	/* good in-place save */
	size_t en, xn;
	char *edited = subst(text, tn, "\n  resttranslate ", 2, "0.5", &en);
	lfs_error err;
	uint8_t *want = expect_apply(NOD, orig, n0, "model.txt", edited, en, &xn, &err);
	assert_non_null(want);
	assert_false(xn == n0 && memcmp(want, orig, n0) == 0);
	assert_int_equal(save_inplace(fs, v, edited, en, false), 0);
	size_t n1;
	struct stat st1;
	uint8_t *now = src_bytes(NOD, &n1, &st1);
	assert_int_equal(n1, xn);
	assert_memory_equal(now, want, xn);
	assert_int_equal(st1.st_mode & 07777, st0.st_mode & 07777); /* mode kept */
	check_view_is_generated(fs, v, NOD, "model.txt");
	assert_int_equal(lfs_fs_flush(fs, v, NULL), 0); /* nothing left to commit */

	/* a close by another process (a forked child's exec of an inherited
	 * descriptor) does not commit; the writer's own close does */
	{
		lfs_fs_ctx me = { getuid(), getgid(), getpid(), 0 }, other = { 0, 0, 1, 0 };
		size_t gn, ed2n, wn, x2n;
		char *g = read_ino(fs, v, &gn);
		char *ed2 = subst(g, gn, "\n  resttranslate ", 5, "0.5", &ed2n);
		uint8_t *w2 = expect_apply(NOD, now, n1, "model.txt", ed2, ed2n, &x2n, &err);
		assert_non_null(w2);
		struct stat z, zo;
		double zt;
		memset(&z, 0, sizeof(z));
		assert_int_equal(lfs_fs_setattr(fs, v, &z, LFS_SET_SIZE, NULL, &zo, &zt), 0);
		assert_int_equal(lfs_fs_write(fs, v, ed2, ed2n / 2, 0, &me, &wn), 0);
		assert_int_equal(lfs_fs_flush(fs, v, &other), 0);
		size_t nn;
		uint8_t *still = src_bytes(NOD, &nn, NULL);
		assert_int_equal(nn, n1);
		assert_memory_equal(still, now, n1);
		free(still);
		assert_int_equal(lfs_fs_write(fs, v, ed2 + ed2n / 2, ed2n - ed2n / 2, (off_t)(ed2n / 2), &me, &wn), 0);
		assert_int_equal(lfs_fs_flush(fs, v, &me), 0);
		free(now);
		now = src_bytes(NOD, &n1, &st1);
		assert_int_equal(n1, x2n);
		assert_memory_equal(now, w2, x2n);
		free(w2);
		free(ed2);
		free(g);
	}

	/* bad edit: refused at fsync, SOURCE untouched */
	size_t cn, bn;
	char *cur = read_ino(fs, v, &cn);
	char *bad = subst(cur, cn, "\n  resttranslate ", 3, "bogus", &bn);
	assert_null(expect_apply(NOD, now, n1, "model.txt", bad, bn, &xn, &err));
	assert_int_equal(save_inplace(fs, v, bad, bn, true), EINVAL);
	size_t n2;
	struct stat st2;
	uint8_t *after = src_bytes(NOD, &n2, &st2);
	assert_int_equal(n2, n1);
	assert_memory_equal(after, now, n1);
	assert_int_equal(st2.st_ino, st1.st_ino);
	assert_true(st2.st_mtim.tv_sec == st1.st_mtim.tv_sec && st2.st_mtim.tv_nsec == st1.st_mtim.tv_nsec);
	uint64_t e = look(fs, m, LFS_FS_MODEL_ERRORS_NAME);
	size_t mn;
	char *msgs = read_ino(fs, e, &mn);
	char line[512];
	snprintf(line, sizeof(line), "%s\n", err.msg);
	assert_non_null(memmem(msgs, mn, line, strlen(line)));
	assert_true(strncmp(err.msg, "model.txt:", 10) == 0);
	uint64_t rj = look(fs, m, "model.txt" LFS_FS_REJECTED_SUFFIX);
	size_t rn;
	char *rtext = read_ino(fs, rj, &rn);
	assert_int_equal(rn, bn);
	assert_memory_equal(rtext, bad, bn);
	check_view_is_generated(fs, v, NOD, "model.txt"); /* the view reverted */

	/* no-op save (the current text): bytes and mtime stay, message stays */
	lfs_fs_stats s0, s1;
	lfs_fs_get_stats(fs, &s0);
	assert_int_equal(save_inplace(fs, v, cur, cn, false), 0);
	lfs_fs_get_stats(fs, &s1);
	assert_int_equal(s1.commit_noops, s0.commit_noops + 1);
	assert_int_equal(s1.commits, s0.commits);
	size_t n3;
	struct stat st3;
	uint8_t *b3 = src_bytes(NOD, &n3, &st3);
	assert_int_equal(n3, n1);
	assert_memory_equal(b3, now, n1);
	assert_true(st3.st_mtim.tv_sec == st1.st_mtim.tv_sec && st3.st_mtim.tv_nsec == st1.st_mtim.tv_nsec);
	assert_int_equal(st3.st_ino, st1.st_ino);

	free(b3);
	free(rtext);
	free(msgs);
	free(after);
	free(bad);
	free(cur);
	free(now);
	free(want);
	free(edited);
	free(orig);
	free(text);
	lfs_fs_free(fs);
	rm_rf(src_dir);
}

struct first_obj {
	char name[256];
	int found;
};

static int first_obj_cb(void *c, const char *name, const lfs_fs_entry *e, off_t off)
{
	(void)e;
	(void)off;
	struct first_obj *x = c;
	if (!x->found && strstr(name, ".obj")) {
		snprintf(x->name, sizeof(x->name), "%s", name);
		x->found = 1;
	}
	return 0;
}

static void test_renames_unlink_two_views(void **state)
{
	(void)state;
	make_source();
	lfs_fs *fs = open_fs(0);
	lfs_fs_ctx ctx = { getuid(), getgid(), getpid(), 0 };
	uint64_t m = look(fs, LFS_FS_ROOT_ID, NOD);
	uint64_t v = look(fs, m, "model.txt");
	size_t tn, n0, en, xn;
	char *text = read_ino(fs, v, &tn);
	uint8_t *orig = src_bytes(NOD, &n0, NULL);
	lfs_error err;

	/* sed -i: scratch file, then rename over the view */
	char *edited = subst(text, tn, "\n  resttranslate ", 2, "0.25", &en);
	uint8_t *want = expect_apply(NOD, orig, n0, "model.txt", edited, en, &xn, &err);
	assert_non_null(want);
	lfs_fs_entry e;
	assert_int_equal(lfs_fs_create(fs, m, "sedAbc123", 0600, O_EXCL | O_WRONLY, &ctx, &e), 0);
	lfs_fs_entry ex;
	assert_int_equal(lfs_fs_create(fs, m, "sedAbc123", 0600, O_EXCL | O_WRONLY, &ctx, &ex), EEXIST);
	size_t w;
	assert_int_equal(lfs_fs_write(fs, e.ino, edited, en, 0, NULL, &w), 0);
	assert_int_equal(lfs_fs_rename(fs, m, "sedAbc123", m, "model.txt", 0), 0);
	assert_int_equal(look_err(fs, m, "sedAbc123"), ENOENT);
	size_t n1;
	uint8_t *now = src_bytes(NOD, &n1, NULL);
	assert_int_equal(n1, xn);
	assert_memory_equal(now, want, xn);
	char srcfile[4096];
	snprintf(srcfile, sizeof(srcfile), "%s/sedAbc123", src_dir);
	assert_int_not_equal(access(srcfile, F_OK), 0); /* never in SOURCE */

	/* vim: rename view -> backup; the view stays; the backup has the text */
	v = look(fs, m, "model.txt");
	size_t cn;
	char *cur = read_ino(fs, v, &cn);
	assert_int_equal(lfs_fs_rename(fs, m, "model.txt", m, "model.txt~", 0), 0);
	uint64_t bk = look(fs, m, "model.txt~");
	size_t bkn;
	char *bkt = read_ino(fs, bk, &bkn);
	assert_int_equal(bkn, cn);
	assert_memory_equal(bkt, cur, cn);
	uint64_t v2 = look(fs, m, "model.txt");
	check_view_is_generated(fs, v2, NOD, "model.txt");
	assert_int_equal(lfs_fs_unlink(fs, m, "model.txt~"), 0);
	assert_int_equal(look_err(fs, m, "model.txt~"), ENOENT);

	/* mv from another filesystem: unlink, create O_EXCL, write, close */
	assert_int_equal(lfs_fs_unlink(fs, m, "model.txt"), 0);
	assert_int_equal(look_err(fs, m, "model.txt"), ENOENT);
	char *ed2 = subst(cur, cn, "\n  resttranslate ", 3, "1.5", &en);
	free(want);
	want = expect_apply(NOD, now, n1, "model.txt", ed2, en, &xn, &err);
	assert_non_null(want);
	assert_int_equal(lfs_fs_create(fs, m, "model.txt", 0644, O_EXCL | O_WRONLY, &ctx, &e), 0);
	assert_int_equal(lfs_fs_write(fs, e.ino, ed2, en, 0, NULL, &w), 0);
	assert_int_equal(lfs_fs_flush(fs, e.ino, NULL), 0);
	free(now);
	now = src_bytes(NOD, &n1, NULL);
	assert_int_equal(n1, xn);
	assert_memory_equal(now, want, xn);

	/* a deleted view comes back after the grace time */
	assert_int_equal(lfs_fs_unlink(fs, m, "model.txt"), 0);
	assert_int_equal(look_err(fs, m, "model.txt"), ENOENT);
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	uint64_t v3 = look(fs, m, "model.txt");
	check_view_is_generated(fs, v3, NOD, "model.txt");

	/* two views of one model, one after the other: both land */
	uint64_t meshes = look(fs, m, "meshes");
	struct first_obj l = { "", 0 };
	assert_int_equal(lfs_fs_readdir(fs, meshes, 0, false, first_obj_cb, &l), 0);
	assert_true(l.found);
	const char *obj = l.name;
	uint64_t ov = look(fs, meshes, obj);
	size_t on;
	char *otext = read_ino(fs, ov, &on);
	char opath[300];
	snprintf(opath, sizeof(opath), "meshes/%s", obj);
	size_t oen;
	char *oed = subst(otext, on, "\nv ", 1, "1.5", &oen);
	free(cur);
	cur = read_ino(fs, v3, &cn);
	char *ted = subst(cur, cn, "\n  resttranslate ", 4, "2.5", &en);
	/* expected: the OBJ edit applied on top of the model.txt edit */
	size_t x1n;
	uint8_t *x1 = expect_apply(NOD, now, n1, "model.txt", ted, en, &x1n, &err);
	assert_non_null(x1);
	free(want);
	want = expect_apply(NOD, x1, x1n, opath, oed, oen, &xn, &err);
	assert_non_null(want);
	assert_int_equal(save_inplace(fs, v3, ted, en, false), 0);
	assert_int_equal(save_inplace(fs, ov, oed, oen, false), 0);
	free(now);
	now = src_bytes(NOD, &n1, NULL);
	assert_int_equal(n1, xn);
	assert_memory_equal(now, want, xn);

	/* JetBrains: tmp, rename view -> old, rename tmp -> view, unlink old */
	free(cur);
	cur = read_ino(fs, v3, &cn);
	char *jed = subst(cur, cn, "\n  resttranslate ", 2, "3.5", &en);
	free(want);
	want = expect_apply(NOD, now, n1, "model.txt", jed, en, &xn, &err);
	assert_non_null(want);
	assert_int_equal(lfs_fs_create(fs, m, "model.txt___jb_tmp___", 0644, O_WRONLY, &ctx, &e), 0);
	assert_int_equal(lfs_fs_write(fs, e.ino, jed, en, 0, NULL, &w), 0);
	assert_int_equal(lfs_fs_flush(fs, e.ino, NULL), 0);
	assert_int_equal(lfs_fs_rename(fs, m, "model.txt", m, "model.txt___jb_old___", 0), 0);
	assert_int_equal(lfs_fs_rename(fs, m, "model.txt___jb_tmp___", m, "model.txt", 0), 0);
	assert_int_equal(lfs_fs_unlink(fs, m, "model.txt___jb_old___"), 0);
	free(now);
	now = src_bytes(NOD, &n1, NULL);
	assert_int_equal(n1, xn);
	assert_memory_equal(now, want, xn);

	free(jed);
	free(x1);
	free(ted);
	free(oed);
	free(otext);
	free(ed2);
	free(bkt);
	free(cur);
	free(now);
	free(want);
	free(edited);
	free(orig);
	free(text);
	lfs_fs_free(fs);
	rm_rf(src_dir);
}

/*
 * The errno of every kind of rename in a model folder (the rename table of
 * fs_scratch.c: source kind x target kind): folders and errors.txt are
 * EPERM, nothing to rename ENOENT (EPERM onto a folder), one view onto
 * another EPERM, a read-only view to a scratch name EROFS, RENAME_NOREPLACE
 * EEXIST onto a view or a scratch file but not onto a view deleted in its
 * grace time, renameat2 flags other than RENAME_NOREPLACE EINVAL. The
 * grace time is long (30 s) so that no step races it.
 */
static void test_rename_kinds(void **state)
{
	(void)state;
	make_source();
	lfs_fs_opts o = { .timeout = 1, .max_model_size = 64 << 20, .watch = false, .log = quiet,
			  .unlink_grace = 30 };
	lfs_fs *fs = NULL;
	assert_int_equal(lfs_fs_new(src_dir, &o, &fs), 0);
	lfs_fs_ctx ctx = { getuid(), getgid(), getpid(), 0 };
	uint64_t m = look(fs, LFS_FS_ROOT_ID, NOD);
	uint64_t v = look(fs, m, "model.txt");
	size_t tn, w;
	char *text = read_ino(fs, v, &tn);
	lfs_fs_entry e;
	const char *scratch[] = { "s1", "s2", "s3" };
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(lfs_fs_create(fs, m, scratch[i], 0600, O_EXCL | O_WRONLY, &ctx, &e), 0);
		assert_int_equal(lfs_fs_write(fs, e.ino, text, tn, 0, NULL, &w), 0);
	}
	const unsigned NR = RENAME_NOREPLACE;
	static const struct {
		const char *from, *to;
		unsigned flags;
		int want;
	} cases[] = {
		{ "model.txt", "x", RENAME_EXCHANGE, EINVAL },
		/* source: a view folder, errors.txt */
		{ "meshes", "x", 0, EPERM },
		{ "errors.txt", "x", 0, EPERM },
		/* source: nothing */
		{ "nosuch", "x", 0, ENOENT },
		{ "nosuch", "meshes", 0, EPERM },
		{ "nosuch", "errors.txt", 0, EPERM },
		/* source: a scratch file */
		{ "s1", "meshes", 0, EPERM },
		{ "s1", "errors.txt", 0, EPERM },
		{ "s1", "model.txt", RENAME_NOREPLACE, EEXIST },
		{ "s1", "s2", RENAME_NOREPLACE, EEXIST },
		/* source: a view */
		{ "model.txt", "model.obj", 0, EPERM },
		{ "model.txt", "meshes", 0, EPERM },
		{ "model.txt", "errors.txt", 0, EPERM },
		{ "model.txt", "s3", RENAME_NOREPLACE, EEXIST },
		{ "model.mtl", "mtl.bak", 0, EROFS },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = lfs_fs_rename(fs, m, cases[i].from, m, cases[i].to, cases[i].flags);
		if (r != cases[i].want)
			fail_msg("rename %s -> %s (flags %u): %s, want %s", cases[i].from, cases[i].to,
				 cases[i].flags, strerror(r), strerror(cases[i].want));
	}
	/* scratch -> scratch replaces it; scratch -> a free name moves it */
	assert_int_equal(lfs_fs_rename(fs, m, "s1", m, "s2", 0), 0);
	assert_int_equal(look_err(fs, m, "s1"), ENOENT);
	assert_int_equal(lfs_fs_rename(fs, m, "s2", m, "s4", NR), 0);
	assert_int_equal(look_err(fs, m, "s2"), ENOENT);
	/* a deleted view (grace time): gone as a source, one view onto it EPERM,
	 * a scratch file onto it with RENAME_NOREPLACE commits */
	assert_int_equal(lfs_fs_unlink(fs, m, "model.txt"), 0);
	assert_int_equal(lfs_fs_rename(fs, m, "model.txt", m, "x", 0), ENOENT);
	assert_int_equal(lfs_fs_rename(fs, m, "model.obj", m, "model.txt", 0), EPERM);
	assert_int_equal(lfs_fs_rename(fs, m, "s4", m, "model.txt", NR), 0);
	assert_int_equal(look_err(fs, m, "s4"), ENOENT);
	v = look(fs, m, "model.txt");
	check_view_is_generated(fs, v, NOD, "model.txt");
	/* a view to a scratch name: the text moves, the view stays */
	assert_int_equal(lfs_fs_rename(fs, m, "model.txt", m, "s3", 0), 0);
	size_t bn;
	char *bk = read_ino(fs, look(fs, m, "s3"), &bn);
	assert_int_equal(bn, tn);
	assert_memory_equal(bk, text, tn);
	free(bk);
	free(text);
	lfs_fs_free(fs);
	rm_rf(src_dir);
}

static void test_stale(void **state)
{
	(void)state;
	make_source();
	lfs_fs *fs = open_fs(0);
	uint64_t m = look(fs, LFS_FS_ROOT_ID, NAD);
	uint64_t v = look(fs, m, "anim.txt");
	size_t tn, n0, en, on, xn;
	char *text = read_ino(fs, v, &tn); /* the editor reads the text */
	uint8_t *orig = src_bytes(NAD, &n0, NULL);
	lfs_error err;
	/* another program changes the model so that anim.txt changes */
	char *otext = subst(text, tn, "\n    0 0.0125 ", 1, "0.125", &on);
	uint8_t *newsrc = expect_apply(NAD, orig, n0, "anim.txt", otext, on, &xn, &err);
	assert_non_null(newsrc);
	char p[PATHSZ];
	snprintf(p, sizeof(p), "%s/%s", src_dir, NAD);
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(newsrc, 1, xn, f), xn);
	assert_int_equal(fclose(f), 0);
	size_t sn;
	uint8_t *saved = src_bytes(NAD, &sn, NULL);
	/* the editor saves its (old-based) text changing the same line:
	 * refused (a conflict), the outside change kept */
	char *edited = subst(text, tn, "\n    0 0.0125 ", 1, "0.75", &en);
	assert_int_equal(save_inplace(fs, v, edited, en, false), EINVAL);
	size_t n1;
	uint8_t *now = src_bytes(NAD, &n1, NULL);
	assert_int_equal(n1, sn);
	assert_memory_equal(now, saved, sn);
	uint64_t e = look(fs, m, LFS_FS_MODEL_ERRORS_NAME);
	size_t mn;
	char *msgs = read_ino(fs, e, &mn);
	assert_non_null(memmem(msgs, mn, "changed in SOURCE", 17));
	assert_non_null(memmem(msgs, mn, "error: conflicts with a change saved since you read this file", 61));
	free(msgs);
	/* the same editor (same old base) saves a change of another line: it is
	 * merged onto the outside change (docs/editing.md "Concurrent saves") */
	free(edited);
	edited = subst(text, tn, "\n    0 0.0125 ", 3, "0.75", &en);
	size_t bn;
	char *both = subst(otext, on, "\n    0 0.0125 ", 3, "0.75", &bn);
	uint8_t *merged = expect_apply(NAD, now, n1, "anim.txt", both, bn, &xn, &err);
	assert_non_null(merged);
	assert_int_equal(save_inplace(fs, v, edited, en, false), 0);
	free(now);
	now = src_bytes(NAD, &n1, NULL);
	assert_int_equal(n1, xn);
	assert_memory_equal(now, merged, xn);
	free(merged);
	free(both);
	msgs = read_ino(fs, e, &mn);
	assert_non_null(memmem(msgs, mn, "note: merged with changes saved", 31));
	/* after reading the view again, the save works */
	free(text);
	text = read_ino(fs, v, &tn);
	free(edited);
	edited = subst(text, tn, "\n    0 0.0125 ", 3, "0.75", &en);
	uint8_t *want = expect_apply(NAD, now, n1, "anim.txt", edited, en, &xn, &err);
	assert_non_null(want);
	assert_int_equal(save_inplace(fs, v, edited, en, false), 0);
	free(now);
	now = src_bytes(NAD, &n1, NULL);
	assert_int_equal(n1, xn);
	assert_memory_equal(now, want, xn);
	free(want);
	free(msgs);
	free(now);
	free(edited);
	free(saved);
	free(newsrc);
	free(otext);
	free(orig);
	free(text);
	lfs_fs_free(fs);
	rm_rf(src_dir);
}

static void test_scratch_and_passthrough(void **state)
{
	(void)state;
	make_source();
	lfs_fs *fs = open_fs(64 << 10);
	lfs_fs_ctx ctx = { getuid(), getgid(), getpid(), 0 };
	uint64_t m = look(fs, LFS_FS_ROOT_ID, NOD);
	lfs_fs_entry e, e2;
	char buf[64];
	/* emacs lock symlink */
	assert_int_equal(lfs_fs_symlink(fs, "user@host.42", m, ".#model.txt", &ctx, &e), 0);
	assert_int_equal(lfs_fs_readlink(fs, e.ino, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "user@host.42");
	assert_true(S_ISLNK(e.attr.st_mode));
	assert_int_equal(lfs_fs_symlink(fs, "x", m, ".#model.txt", &ctx, &e2), EEXIST);
	assert_int_equal(lfs_fs_unlink(fs, m, ".#model.txt"), 0);
	/* swap file: create, write, chmod, truncate, link, unlink */
	assert_int_equal(lfs_fs_create(fs, m, ".model.txt.swp", 0600, O_EXCL | O_WRONLY, &ctx, &e), 0);
	size_t w;
	assert_int_equal(lfs_fs_write(fs, e.ino, "abc", 3, 10, NULL, &w), 0);
	struct stat a, out;
	double t;
	memset(&a, 0, sizeof(a));
	a.st_mode = 0644;
	assert_int_equal(lfs_fs_setattr(fs, e.ino, &a, LFS_SET_MODE, &ctx, &out, &t), 0);
	assert_int_equal(out.st_mode, S_IFREG | 0644);
	assert_int_equal(out.st_size, 13);
	a.st_size = 11;
	assert_int_equal(lfs_fs_setattr(fs, e.ino, &a, LFS_SET_SIZE, &ctx, &out, &t), 0);
	size_t n;
	char *d = read_ino(fs, e.ino, &n);
	assert_int_equal(n, 11);
	assert_memory_equal(d, "\0\0\0\0\0\0\0\0\0\0a", 11);
	free(d);
	assert_int_equal(lfs_fs_link(fs, e.ino, m, "swap2", &e2), 0);
	assert_int_equal(e2.attr.st_nlink, 2);
	assert_int_equal(e2.attr.st_ino, e.attr.st_ino);
	assert_int_equal(lfs_fs_unlink(fs, m, ".model.txt.swp"), 0);
	d = read_ino(fs, e2.ino, &n);
	assert_int_equal(n, 11);
	free(d);
	/* gio -b: link(view, backup) copies the view's text */
	uint64_t v = look(fs, m, "model.txt");
	assert_int_equal(lfs_fs_link(fs, v, m, "model.txt~", &e), 0);
	size_t vn, bn;
	char *vt = read_ino(fs, v, &vn), *bt = read_ino(fs, e.ino, &bn);
	assert_int_equal(vn, bn);
	assert_memory_equal(vt, bt, vn);
	free(vt);
	free(bt);
	/* the memory bound: ENOSPC */
	char *big = calloc(1, 128 << 10);
	assert_int_equal(lfs_fs_write(fs, e2.ino, big, 128 << 10, 0, NULL, &w), ENOSPC);
	free(big);
	/* model folders: no rmdir, no rename, no mkdir inside; generated folders stay */
	assert_int_equal(lfs_fs_rmdir(fs, LFS_FS_ROOT_ID, NOD), EPERM);
	assert_int_equal(lfs_fs_rename(fs, LFS_FS_ROOT_ID, NOD, LFS_FS_ROOT_ID, "x.nod", 0), EPERM);
	assert_int_equal(lfs_fs_mkdir(fs, m, "sub", 0755, &ctx, &e), EPERM);
	assert_int_equal(lfs_fs_rmdir(fs, m, "meshes"), EPERM);
	assert_int_equal(lfs_fs_rename(fs, m, "model.txt~", LFS_FS_ROOT_ID, "out.txt", 0), EXDEV);
	/* nothing of this reached SOURCE */
	char p[PATHSZ];
	snprintf(p, sizeof(p), "%s/swap2", src_dir);
	assert_int_not_equal(access(p, F_OK), 0);

	/* passthrough */
	assert_int_equal(lfs_fs_mkdir(fs, LFS_FS_ROOT_ID, "d", 0755, &ctx, &e), 0);
	uint64_t dino = e.ino;
	assert_int_equal(lfs_fs_create(fs, dino, "f", 0644, O_EXCL | O_WRONLY, &ctx, &e), 0);
	assert_int_equal(lfs_fs_write(fs, e.ino, "hello", 5, 0, NULL, &w), 0);
	assert_int_equal(lfs_fs_rename(fs, dino, "f", dino, "g", 0), 0);
	assert_int_equal(lfs_fs_symlink(fs, "g", dino, "l", &ctx, &e2), 0);
	a.st_mode = 0600;
	assert_int_equal(lfs_fs_setattr(fs, e.ino, &a, LFS_SET_MODE, &ctx, &out, &t), 0);
	snprintf(p, sizeof(p), "%s/d/g", src_dir);
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_size, 5);
	d = read_ino(fs, e.ino, &n); /* the renamed node reads the new path */
	assert_int_equal(n, 5);
	assert_memory_equal(d, "hello", 5);
	free(d);
	/* rename the folder: nodes below follow */
	assert_int_equal(lfs_fs_rename(fs, LFS_FS_ROOT_ID, "d", LFS_FS_ROOT_ID, "d2", 0), 0);
	d = read_ino(fs, e.ino, &n);
	assert_int_equal(n, 5);
	free(d);
	assert_int_equal(lfs_fs_rmdir(fs, LFS_FS_ROOT_ID, "d2"), ENOTEMPTY);
	assert_int_equal(lfs_fs_unlink(fs, dino, "g"), 0);
	assert_int_equal(lfs_fs_unlink(fs, dino, "l"), 0);
	assert_int_equal(lfs_fs_rmdir(fs, LFS_FS_ROOT_ID, "d2"), 0);
	snprintf(p, sizeof(p), "%s/d2", src_dir);
	assert_int_not_equal(access(p, F_OK), 0);
	lfs_fs_free(fs);
	rm_rf(src_dir);
}

static void test_membuf(void **state)
{
	(void)state;
	lfs_membuf b = { 0 };
	assert_int_equal(lfs_membuf_write(&b, "xy", 2, 5, 100), 0);
	assert_int_equal(b.len, 7);
	assert_memory_equal(b.data, "\0\0\0\0\0xy", 7);
	assert_int_equal(lfs_membuf_write(&b, "z", 1, 100, 100), EFBIG);
	assert_int_equal(b.len, 7);
	assert_int_equal(lfs_membuf_write(&b, "z", 1, UINT64_MAX, 100), EFBIG);
	assert_int_equal(lfs_membuf_truncate(&b, 3, 100), 0);
	assert_int_equal(lfs_membuf_truncate(&b, 6, 100), 0);
	assert_memory_equal(b.data, "\0\0\0\0\0\0", 6);
	assert_int_equal(lfs_membuf_truncate(&b, 101, 100), EFBIG);
	assert_int_equal(lfs_membuf_set(&b, "abc", 3), 0);
	assert_int_equal(b.len, 3);
	lfs_membuf_free(&b);
	assert_int_equal(b.len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_membuf),
		cmocka_unit_test(test_inplace_bad_noop),
		cmocka_unit_test(test_renames_unlink_two_views),
		cmocka_unit_test(test_rename_kinds),
		cmocka_unit_test(test_stale),
		cmocka_unit_test(test_scratch_and_passthrough),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
