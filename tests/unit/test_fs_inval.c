/**
 * @file test_fs_inval.c
 * When the views of a mount change (docs/testing.md "The filesystem"): the
 * rules of the view cache's key and of the watcher, each pinned by one fast
 * test through the fs layer (src/fs/fs.h, no FUSE) on a SOURCE made at test
 * time below the build root from the project's samples (samples/box.mdl and
 * its texture lfs_crate.tga) and a KEY + BIF written here:
 *  - key_fields: lfs_cache_key_of() + lfs_cache_get() directly: two stats
 *    that differ only in the nanoseconds of their mtime, or only in inode,
 *    size, device or path, are different entries; a KEY's key (and a KEY
 *    member's) changes when a BIF is reported changed, a loose file's not;
 *  - same_second: a same-size rewrite of a model whose mtime keeps its
 *    second (other nanoseconds) shows the new text; a file of the same
 *    size and the same mtime to the nanosecond renamed over it (another
 *    inode) too;
 *  - bif_change: a BIF rewritten in place (same size, other bytes), seen by
 *    the real watcher (lfs_fs_watch_start()): the KEY folder's resource
 *    reads the new bytes;
 *  - texture_change: a texture beside the model rewritten (same size, other
 *    pixels), seen by the watcher: thumbnail.png is drawn again (and again
 *    the first picture once the texture is written back);
 *  - rename_delete: a model renamed in SOURCE: the old name is ENOENT and
 *    its nodes ESTALE/ENOENT, the new name shows the views; deleted: ENOENT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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

#include "corpus.h"
#include "fs/cache.h"
#include "fs/fs.h"
#include "registry/container.h"
#include "registry/viewset.h"

#define PATHSZ 2048

static void quiet(int level, const char *msg)
{
	(void)level;
	(void)msg;
}

static char src_dir[1024];

/* Fresh empty SOURCE below the build root. */
static void make_source(const char *tag)
{
	const char *b = getenv("LFS_BUILD_ROOT");
	char parent[512];
	snprintf(parent, sizeof(parent), "%s/tests/unit", b ? b : ".");
	mkdir(parent, 0755);
	snprintf(src_dir, sizeof(src_dir), "%s/work-fs-inval-%.8s-XXXXXX", parent, tag);
	assert_non_null(mkdtemp(src_dir));
}

static void rm_rf(const char *dir)
{
	char cmd[PATHSZ + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	if (dir == src_dir)
		src_dir[0] = '\0';
}

/* Teardown: the SOURCE of a test that failed before removing it. */
static int cleanup(void **state)
{
	(void)state;
	if (src_dir[0])
		rm_rf(src_dir);
	return 0;
}

static char *src_path(char *buf, const char *rel)
{
	snprintf(buf, PATHSZ, "%s/%s", src_dir, rel);
	return buf;
}

/* The bytes of samples/@p name (malloc'd). */
static uint8_t *sample(const char *name, size_t *n)
{
	const char *root = getenv("LFS_SOURCE_ROOT");
	char p[PATHSZ];
	snprintf(p, sizeof(p), "%s/samples/%s", root ? root : ".", name);
	uint8_t *d = lfs_read_file(p, n);
	if (!d)
		fail_msg("cannot read %s", p);
	return d;
}

/* Write @p n bytes to SOURCE/@p rel: in place (O_TRUNC, same inode) when it exists. */
static void put(const char *rel, const void *d, size_t n)
{
	char p[PATHSZ];
	int fd = open(src_path(p, rel), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, d, n), (ssize_t)n);
	assert_int_equal(close(fd), 0);
}

/* Set SOURCE/@p rel's mtime to @p sec.@p nsec; false when the filesystem keeps no nanoseconds. */
static bool set_mtime(const char *rel, time_t sec, long nsec)
{
	char p[PATHSZ];
	struct timespec ts[2] = { { sec, nsec }, { sec, nsec } };
	assert_int_equal(utimensat(AT_FDCWD, src_path(p, rel), ts, 0), 0);
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mtim.tv_sec, sec);
	return st.st_mtim.tv_nsec == nsec;
}

static struct stat src_stat(const char *rel)
{
	char p[PATHSZ];
	struct stat st;
	assert_int_equal(stat(src_path(p, rel), &st), 0);
	return st;
}

/* @p d with the first occurrence of @p from (as long as @p to) replaced by @p to. */
static void subst(uint8_t *d, size_t n, const char *from, const char *to)
{
	size_t l = strlen(from);
	assert_int_equal(strlen(to), l);
	uint8_t *p = memmem(d, n, from, l);
	if (!p)
		fail_msg("'%s' not in the sample", from);
	memcpy(p, to, l);
}

static lfs_fs *open_fs(bool watch, unsigned thumb_size)
{
	lfs_fs_opts o = { .timeout = 1, .max_model_size = 64 << 20, .watch = watch, .log = quiet,
			  .thumb_size = thumb_size };
	lfs_fs *fs = NULL;
	assert_int_equal(lfs_fs_new(src_dir, &o, &fs), 0);
	return fs;
}

static int look_r(lfs_fs *fs, uint64_t dir, const char *name, uint64_t *ino)
{
	lfs_fs_entry e;
	int r = lfs_fs_lookup(fs, dir, name, &e);
	*ino = r ? 0 : e.ino;
	return r;
}

static uint64_t look(lfs_fs *fs, uint64_t dir, const char *name)
{
	uint64_t ino;
	int r = look_r(fs, dir, name, &ino);
	if (r)
		fail_msg("lookup %s: %s", name, strerror(r));
	return ino;
}

/* All bytes of @p ino (NUL-terminated, malloc'd), or NULL with *err. */
static char *read_r(lfs_fs *fs, uint64_t ino, size_t *len, int *err)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	assert_non_null(buf);
	for (;;) {
		lfs_fs_read r;
		int e = lfs_fs_read_begin(fs, ino, 4096, (off_t)n, &r);
		if (e) {
			free(buf);
			*err = e;
			return NULL;
		}
		size_t got;
		if (n + 4096 > cap) {
			buf = realloc(buf, (cap *= 2) + 1);
			assert_non_null(buf);
		}
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
	buf[n] = '\0';
	*len = n;
	*err = 0;
	return buf;
}

static char *read_ino(lfs_fs *fs, uint64_t ino, size_t *len)
{
	int e;
	char *d = read_r(fs, ino, len, &e);
	if (!d)
		fail_msg("read of node %llu: %s", (unsigned long long)ino, strerror(e));
	return d;
}

/* Text of view @p view of model folder @p name in the root (looked up afresh). */
static char *view_text(lfs_fs *fs, const char *name, const char *view, size_t *len)
{
	uint64_t m = look(fs, LFS_FS_ROOT_ID, name);
	uint64_t v = look(fs, m, view);
	char *t = read_ino(fs, v, len);
	lfs_fs_forget(fs, v, 1);
	lfs_fs_forget(fs, m, 1);
	return t;
}

/* ---- the key, directly ---- */

static void key_fields(void **state)
{
	(void)state;
	struct stat a;
	memset(&a, 0, sizeof(a));
	a.st_dev = 7;
	a.st_ino = 1234;
	a.st_size = 5000;
	a.st_mtim.tv_sec = 1700000000;
	a.st_mtim.tv_nsec = 100;
	lfs_cache_key ka = lfs_cache_key_of(&a, "m/box.mdl");

	lfs_cache c;
	lfs_cache_init(&c, 0, 0);
	lfs_viewset vs = { 0 };
	lfs_centry *e = lfs_centry_new(&ka, LFS_SOURCE_PLAIN, &vs, NULL);
	assert_non_null(e);
	assert_ptr_equal(lfs_cache_put(&c, e), e);
	lfs_cache_release(&c, e);

	/* the same stat hits */
	lfs_centry *g = lfs_cache_get(&c, &ka);
	assert_ptr_equal(g, e);
	lfs_cache_release(&c, g);

	/* one field differs: another version, a miss */
	struct {
		const char *what;
		struct stat st;
		const char *rel;
	} other[6];
	for (size_t i = 0; i < 6; i++) {
		other[i].st = a;
		other[i].rel = "m/box.mdl";
	}
	other[0].what = "mtime 1 ns later, same second";
	other[0].st.st_mtim.tv_nsec = 101;
	other[1].what = "mtime 999999900 ns later, same second";
	other[1].st.st_mtim.tv_nsec = 999999999;
	other[2].what = "another inode";
	other[2].st.st_ino = 1235;
	other[3].what = "another size";
	other[3].st.st_size = 5001;
	other[4].what = "another device";
	other[4].st.st_dev = 8;
	other[5].what = "another path";
	other[5].rel = "n/box.mdl";
	for (size_t i = 0; i < 6; i++) {
		lfs_cache_key k = lfs_cache_key_of(&other[i].st, other[i].rel);
		lfs_centry *h = lfs_cache_get(&c, &k);
		if (h) {
			lfs_cache_release(&c, h);
			fail_msg("%s: the cache gives the old version's entry", other[i].what);
		}
	}
	lfs_cache_destroy(&c);
	assert_int_equal(ka.mtime_ns, (int64_t)1700000000 * 1000000000 + 100);

	/* A BIF reported changed: a KEY's key and its members' change, a loose file's does not. */
	struct stat ks = a;
	lfs_cache_key k1 = lfs_cache_key_of(&ks, "data/nwn_base.key");
	lfs_cache_key m1 = lfs_cache_key_of(&ks, "data/nwn_base.key/Beta.txt");
	lfs_cache_key p1 = lfs_cache_key_of(&ks, "m/box.mdl");
	assert_false(lfs_container_aux_changed("box.mdl"));
	assert_true(lfs_container_aux_changed("x.bif"));
	lfs_cache_key k2 = lfs_cache_key_of(&ks, "data/nwn_base.key");
	lfs_cache_key m2 = lfs_cache_key_of(&ks, "data/nwn_base.key/Beta.txt");
	lfs_cache_key p2 = lfs_cache_key_of(&ks, "m/box.mdl");
	if (k1.bif_gen == k2.bif_gen)
		fail_msg("KEY: the same key after a BIF changed (bif_gen %llu)", (unsigned long long)k1.bif_gen);
	if (m1.bif_gen == m2.bif_gen)
		fail_msg("KEY member: the same key after a BIF changed");
	assert_int_equal(p1.bif_gen, 0);
	assert_int_equal(p2.bif_gen, 0);
}

/* ---- same size, same second ---- */

static void same_second(void **state)
{
	(void)state;
	make_source("sec");
	size_t n;
	uint8_t *a = sample("box.mdl", &n);
	put("box.mdl", a, n);
	const time_t sec = 1700000000;
	if (!set_mtime("box.mdl", sec, 100000000)) {
		rm_rf(src_dir);
		free(a);
		LFS_SKIP("the build folder's filesystem keeps no nanoseconds of mtime");
	}
	lfs_fs *fs = open_fs(false, 0);
	size_t tl;
	char *t = view_text(fs, "box.mdl", "model.mdl", &tl);
	assert_non_null(strstr(t, "lfs_hop"));
	free(t);
	/* keep a node of the view across the change too */
	uint64_t m = look(fs, LFS_FS_ROOT_ID, "box.mdl");
	uint64_t v = look(fs, m, "model.mdl");

	/* 1. in place, same size, same second, other nanoseconds */
	struct stat before = src_stat("box.mdl");
	uint8_t *b = malloc(n);
	memcpy(b, a, n);
	subst(b, n, "lfs_hop", "lfs_top");
	put("box.mdl", b, n);
	assert_true(set_mtime("box.mdl", sec, 200000000));
	struct stat after = src_stat("box.mdl");
	assert_int_equal(after.st_ino, before.st_ino);
	assert_int_equal(after.st_size, before.st_size);
	assert_int_equal(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
	t = read_ino(fs, v, &tl);
	if (!strstr(t, "lfs_top"))
		fail_msg("same-size rewrite in the same second (mtime ns 100000000 -> 200000000): "
			 "model.mdl still shows the old text (%s)", strstr(t, "lfs_hop") ? "lfs_hop" : "?");
	free(t);
	t = view_text(fs, "box.mdl", "model.mdl", &tl);
	assert_non_null(strstr(t, "lfs_top"));
	free(t);

	/* 2. same size, same mtime to the ns, another inode (renamed over) */
	subst(b, n, "lfs_top", "lfs_pop");
	put("box.tmp", b, n);
	assert_true(set_mtime("box.tmp", sec, 200000000));
	char p1[PATHSZ], p2[PATHSZ];
	assert_int_equal(rename(src_path(p1, "box.tmp"), src_path(p2, "box.mdl")), 0);
	struct stat repl = src_stat("box.mdl");
	assert_int_not_equal(repl.st_ino, after.st_ino);
	assert_int_equal(repl.st_size, after.st_size);
	assert_int_equal(repl.st_mtim.tv_sec, after.st_mtim.tv_sec);
	assert_int_equal(repl.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
	t = view_text(fs, "box.mdl", "model.mdl", &tl);
	if (!strstr(t, "lfs_pop"))
		fail_msg("same size and mtime, another inode: model.mdl still shows the old text");
	free(t);

	lfs_fs_forget(fs, v, 1);
	lfs_fs_forget(fs, m, 1);
	lfs_fs_free(fs);
	free(a);
	free(b);
	rm_rf(src_dir);
}

/* ---- the watcher, in process ---- */

/* What the watcher asked the kernel to forget. */
struct seen {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t ino[256];
	size_t n_ino;
	struct {
		uint64_t parent;
		char name[64];
	} ent[256];
	size_t n_ent;
};

static void on_entry(void *ctx, uint64_t parent, const char *name)
{
	struct seen *s = ctx;
	pthread_mutex_lock(&s->mu);
	if (s->n_ent < 256) {
		s->ent[s->n_ent].parent = parent;
		snprintf(s->ent[s->n_ent].name, sizeof(s->ent[0].name), "%s", name);
		s->n_ent++;
	}
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void on_inode(void *ctx, uint64_t ino)
{
	struct seen *s = ctx;
	pthread_mutex_lock(&s->mu);
	if (s->n_ino < 256)
		s->ino[s->n_ino++] = ino;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void seen_reset(struct seen *s)
{
	pthread_mutex_lock(&s->mu);
	s->n_ino = s->n_ent = 0;
	pthread_mutex_unlock(&s->mu);
}

/* Wait (at most 10 s) until the watcher has sent the invalidation of entry
 * @p name in folder @p parent: it has then handled the change (the
 * callbacks run after the events are handled). */
static void wait_entry(struct seen *s, uint64_t parent, const char *name)
{
	struct timespec lim;
	clock_gettime(CLOCK_REALTIME, &lim);
	lim.tv_sec += 10;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		for (size_t i = 0; i < s->n_ent; i++)
			if (s->ent[i].parent == parent && !strcmp(s->ent[i].name, name)) {
				pthread_mutex_unlock(&s->mu);
				return;
			}
		if (pthread_cond_timedwait(&s->cv, &s->mu, &lim) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&s->mu);
	fail_msg("the watcher did not report %s within 10 s", name);
}

static bool seen_inode(struct seen *s, uint64_t ino)
{
	pthread_mutex_lock(&s->mu);
	bool f = false;
	for (size_t i = 0; i < s->n_ino && !f; i++)
		f = s->ino[i] == ino;
	pthread_mutex_unlock(&s->mu);
	return f;
}

static lfs_fs *open_watched(struct seen *s, unsigned thumb_size)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	lfs_fs *fs = open_fs(true, thumb_size);
	lfs_fs_notify nt = { .ctx = s, .inval_entry = on_entry, .inval_inode = on_inode };
	assert_int_equal(lfs_fs_watch_start(fs, &nt), 0);
	return fs;
}

static void close_watched(lfs_fs *fs, struct seen *s)
{
	lfs_fs_watch_stop(fs);
	lfs_fs_free(fs);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
}

/* ---- BIF change -> KEY folder ---- */

static void le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void le32(uint8_t *p, uint32_t v)
{
	le16(p, (uint16_t)v);
	le16(p + 2, (uint16_t)(v >> 16));
}

/* Two resources (BioWare "Key and BIF File Formats"). */
static const char *const res_ref[2] = { "alpha", "Beta" };
static const char *const res_name[2] = { "alpha.2da", "Beta.txt" };
static const uint16_t res_type[2] = { 2017, 10 };

/* data/x.bif: "BIFFV1  ", count, 0, 20, entries {id, offset, size, type}, payloads. */
static void write_bif(const char *const data[2])
{
	uint8_t b[256] = { 0 };
	memcpy(b, "BIFFV1  ", 8);
	le32(b + 8, 2);
	le32(b + 12, 0);
	le32(b + 16, 20);
	size_t off = 20 + 2 * 16;
	for (uint32_t i = 0; i < 2; i++) {
		size_t n = strlen(data[i]);
		le32(b + 20 + 16 * i, i);
		le32(b + 24 + 16 * i, (uint32_t)off);
		le32(b + 28 + 16 * i, (uint32_t)n);
		le32(b + 32 + 16 * i, res_type[i]);
		memcpy(b + off, data[i], n);
		off += n;
	}
	put("data/x.bif", b, off);
}

/* KEY @p rel: one BIF named @p bif, both resources (ResID = 0 << 20 | i). */
static void write_key(const char *rel, const char *bif)
{
	uint8_t k[256] = { 0 };
	size_t nl = strlen(bif), names = 64 + 12, keys = names + nl;
	memcpy(k, "KEY V1  ", 8);
	le32(k + 8, 1);      /* BIFCount */
	le32(k + 12, 2);     /* KeyCount */
	le32(k + 16, 64);    /* OffsetToFileTable */
	le32(k + 20, (uint32_t)keys);
	le32(k + 24, 126);   /* BuildYear (since 1900) */
	le32(k + 28, 1);     /* BuildDay; 32 bytes reserved up to 64 */
	le32(k + 64, 1000);  /* file size (not checked) */
	le32(k + 68, (uint32_t)names);
	le16(k + 72, (uint16_t)nl);
	le16(k + 74, 1);     /* Drives */
	memcpy(k + names, bif, nl);
	for (uint32_t i = 0; i < 2; i++) {
		uint8_t *e = k + keys + 22 * i;
		memcpy(e, res_ref[i], strlen(res_ref[i]));
		le16(e + 16, res_type[i]);
		le32(e + 18, (0u << 20) | i);
	}
	put(rel, k, keys + 44);
}

static int count_fn(void *ctx, const char *name, const lfs_fs_entry *e, off_t next)
{
	(void)e;
	(void)next;
	(void)name;
	(*(size_t *)ctx)++;
	return 0;
}

static void bif_change(void **state)
{
	(void)state;
	make_source("bif");
	char p[PATHSZ];
	assert_int_equal(mkdir(src_path(p, "data"), 0755), 0);
	const char *const v1[2] = { "2DA V2.0\n\n   LABEL\n0  one\n", "hello from a BIF\n" };
	const char *const v2[2] = { "2DA V2.0\n\n   LABEL\n0  two\n", "HELLO FROM A bif\n" };
	write_bif(v1);
	write_key("test.key", "data\\x.bif");
	struct stat b0 = src_stat("data/x.bif");

	struct seen s;
	lfs_fs *fs = open_watched(&s, 0);
	uint64_t data = look(fs, LFS_FS_ROOT_ID, "data"); /* watched from now on */
	uint64_t key = look(fs, LFS_FS_ROOT_ID, "test.key");
	size_t cnt = 0;
	assert_int_equal(lfs_fs_readdir(fs, key, 0, false, count_fn, &cnt), 0);
	assert_int_equal(cnt, 2 + 2); /* ".", "..", the two resources */
	uint64_t r[2];
	for (int i = 0; i < 2; i++) {
		r[i] = look(fs, key, res_name[i]);
		size_t n;
		char *t = read_ino(fs, r[i], &n);
		assert_string_equal(t, v1[i]);
		free(t);
	}

	/* in place: same file size, same sizes of both resources, other bytes */
	seen_reset(&s);
	write_bif(v2);
	struct stat b1 = src_stat("data/x.bif");
	assert_int_equal(b1.st_ino, b0.st_ino);
	assert_int_equal(b1.st_size, b0.st_size);
	wait_entry(&s, data, "x.bif");
	if (!seen_inode(&s, key))
		fail_msg("the watcher did not invalidate the KEY's folder after its BIF changed");
	for (int i = 0; i < 2; i++) {
		/* the nodes held across the change, then looked up afresh */
		size_t n;
		char *t = read_ino(fs, r[i], &n);
		if (strcmp(t, v2[i]))
			fail_msg("%s after its BIF changed in place: '%s', want '%s'", res_name[i], t, v2[i]);
		free(t);
		lfs_fs_forget(fs, r[i], 1);
		uint64_t again = look(fs, key, res_name[i]);
		t = read_ino(fs, again, &n);
		assert_string_equal(t, v2[i]);
		free(t);
		lfs_fs_forget(fs, again, 1);
	}
	lfs_fs_forget(fs, key, 1);
	lfs_fs_forget(fs, data, 1);
	close_watched(fs, &s);
	rm_rf(src_dir);
}

/* ---- texture change -> thumbnail ---- */

static void texture_change(void **state)
{
	(void)state;
	make_source("tex");
	size_t mn, tn;
	uint8_t *m = sample("box.mdl", &mn);
	uint8_t *tex = sample("lfs_crate.tga", &tn);
	put("box.mdl", m, mn);
	put("lfs_crate.tga", tex, tn);

	struct seen s;
	lfs_fs *fs = open_watched(&s, 128);
	size_t n0, n1, n2;
	char *png0 = view_text(fs, "box.mdl", "thumbnail.png", &n0);
	assert_true(n0 > 8 && !memcmp(png0, "\x89PNG", 4));

	struct stat t0 = src_stat("lfs_crate.tga");

	/* the same size, other pixels (after the 18-byte TGA header): inverted */
	assert_true(tn > 18 + 64);
	for (size_t i = 18; i < tn; i++)
		if ((i - 18) % 4 != 3) /* keep alpha */
			tex[i] = (uint8_t)(255 - tex[i]);
	seen_reset(&s);
	put("lfs_crate.tga", tex, tn);
	struct stat t1 = src_stat("lfs_crate.tga");
	assert_int_equal(t1.st_ino, t0.st_ino);
	assert_int_equal(t1.st_size, t0.st_size);
	wait_entry(&s, LFS_FS_ROOT_ID, "lfs_crate.tga");
	/* control: a new mount draws another picture (the texture is used) */
	lfs_fs *fresh = open_fs(false, 128);
	size_t nf;
	char *pngf = view_text(fresh, "box.mdl", "thumbnail.png", &nf);
	lfs_fs_free(fresh);
	assert_false(nf == n0 && !memcmp(png0, pngf, n0));
	free(pngf);
	char *png1 = view_text(fs, "box.mdl", "thumbnail.png", &n1);
	if (n1 == n0 && !memcmp(png0, png1, n0))
		fail_msg("thumbnail.png after its texture changed: the same %zu bytes as before", n0);

	/* and back: the first picture again */
	seen_reset(&s);
	free(tex);
	tex = sample("lfs_crate.tga", &tn);
	put("lfs_crate.tga", tex, tn);
	wait_entry(&s, LFS_FS_ROOT_ID, "lfs_crate.tga");
	char *png2 = view_text(fs, "box.mdl", "thumbnail.png", &n2);
	assert_int_equal(n2, n0);
	assert_memory_equal(png2, png0, n0);

	free(png0);
	free(png1);
	free(png2);
	close_watched(fs, &s);
	free(m);
	free(tex);
	rm_rf(src_dir);
}

/* ---- rename and delete in SOURCE ---- */

static void rename_delete(void **state)
{
	(void)state;
	make_source("ren");
	size_t n;
	uint8_t *a = sample("box.mdl", &n);
	put("box.mdl", a, n);
	free(a);
	lfs_fs *fs = open_fs(false, 0);
	uint64_t m = look(fs, LFS_FS_ROOT_ID, "box.mdl");
	uint64_t v = look(fs, m, "model.mdl");
	size_t tl;
	char *t = read_ino(fs, v, &tl);
	assert_non_null(strstr(t, "lfs_hop"));
	free(t);

	char p1[PATHSZ], p2[PATHSZ];
	assert_int_equal(rename(src_path(p1, "box.mdl"), src_path(p2, "crate.mdl")), 0);
	uint64_t x;
	int r = look_r(fs, LFS_FS_ROOT_ID, "box.mdl", &x);
	if (r != ENOENT)
		fail_msg("old name after a rename: lookup gives %s, want ENOENT", r ? strerror(r) : "a node");
	struct stat st;
	double to;
	r = lfs_fs_getattr(fs, m, &st, &to);
	if (r != ESTALE && r != ENOENT)
		fail_msg("old model folder after a rename: getattr gives %s, want ESTALE or ENOENT",
			 r ? strerror(r) : "success");
	int e;
	t = read_r(fs, v, &tl, &e);
	if (t)
		fail_msg("old model.mdl after a rename: read gives %zu bytes, want ESTALE or ENOENT", tl);
	if (e != ESTALE && e != ENOENT)
		fail_msg("old model.mdl after a rename: read gives %s, want ESTALE or ENOENT", strerror(e));
	t = view_text(fs, "crate.mdl", "model.mdl", &tl);
	assert_non_null(strstr(t, "lfs_hop"));
	free(t);
	lfs_fs_forget(fs, v, 1);
	lfs_fs_forget(fs, m, 1);

	m = look(fs, LFS_FS_ROOT_ID, "crate.mdl");
	v = look(fs, m, "model.mdl");
	assert_int_equal(unlink(src_path(p1, "crate.mdl")), 0);
	r = look_r(fs, LFS_FS_ROOT_ID, "crate.mdl", &x);
	if (r != ENOENT)
		fail_msg("deleted model: lookup gives %s, want ENOENT", r ? strerror(r) : "a node");
	r = lfs_fs_getattr(fs, m, &st, &to);
	if (r != ESTALE && r != ENOENT)
		fail_msg("deleted model's folder: getattr gives %s, want ESTALE or ENOENT",
			 r ? strerror(r) : "success");
	t = read_r(fs, v, &tl, &e);
	if (t)
		fail_msg("deleted model's model.mdl: read gives %zu bytes, want ESTALE or ENOENT", tl);
	if (e != ESTALE && e != ENOENT)
		fail_msg("deleted model's model.mdl: read gives %s", strerror(e));
	lfs_fs_forget(fs, v, 1);
	lfs_fs_forget(fs, m, 1);
	lfs_fs_free(fs);
	rm_rf(src_dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(key_fields),
		cmocka_unit_test_teardown(same_second, cleanup),
		cmocka_unit_test_teardown(bif_change, cleanup),
		cmocka_unit_test_teardown(texture_change, cleanup),
		cmocka_unit_test_teardown(rename_delete, cleanup),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
