/**
 * @file test_node_mem.c
 * Memory of the mount's nodes (src/fs/fs_nodes.c, struct node in
 * src/fs/fs_int.h; docs/performance.md "Memory"): after every name of the
 * corpus tree (NWN models and their generated files) has been looked up and
 * is held by the "kernel" (no forget), what malloc holds for the nodes
 * (mallinfo2: bytes in use, measured with every view already in the cache)
 * divided by the number of nodes stays under NODE_BYTES_MAX, and what the
 * generated files and folders alone added (looked up after every SOURCE
 * name) under GEN_NODE_BYTES_MAX each. Skipped where mallinfo2 says nothing
 * (AddressSanitizer's allocator).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <malloc.h>

#include <cmocka.h>

#include "corpus.h"
#include "fs/fs.h"

/*
 * Bytes per held node, tables included (id slots, free ids, name hash).
 * Measured on the corpus tree: 139.7 over all nodes and 131.9 per generated
 * file or folder (one malloc chunk: the 67-byte common part of struct node
 * and the view path, 36 bytes on average here, plus the node's share of the
 * slot and name tables); before: 172 / 165 (node and path apart), 191 (name
 * a separate field, model pointer and st_ino stored), 330 before model-side
 * nodes lost the source part of struct node. The goal is 64.
 */
#define NODE_BYTES_MAX 152
#define GEN_NODE_BYTES_MAX 144

static void quiet(int level, const char *msg)
{
	(void)level;
	(void)msg;
}

struct names {
	char **v;
	bool *gen; /* the name is a generated file or folder (st_ino with bit 63: a view inode) */
	uint64_t *ino; /* st_ino the listing gave */
	size_t n, cap;
};

struct listing {
	struct names *out;
	const char *prefix;
	uint64_t dot, dotdot; /* st_ino listed for "." and ".." */
};

static int collect(void *ctx, const char *name, const lfs_fs_entry *e, off_t next)
{
	(void)e;
	(void)next;
	struct listing *l = ctx;
	if (strcmp(name, ".") == 0)
		l->dot = (uint64_t)e->attr.st_ino;
	if (strcmp(name, "..") == 0)
		l->dotdot = (uint64_t)e->attr.st_ino;
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, ".legacyfs") == 0)
		return 0;
	struct names *o = l->out;
	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 256;
		o->v = realloc(o->v, o->cap * sizeof(*o->v));
		o->gen = realloc(o->gen, o->cap * sizeof(*o->gen));
		o->ino = realloc(o->ino, o->cap * sizeof(*o->ino));
		assert_non_null(o->v);
		assert_non_null(o->gen);
		assert_non_null(o->ino);
	}
	char *p = NULL;
	assert_true(asprintf(&p, "%s%s%s", l->prefix, *l->prefix ? "/" : "", name) > 0);
	o->gen[o->n] = false;
	o->ino[o->n] = (uint64_t)e->attr.st_ino;
	o->v[o->n++] = p;
	return 0;
}

/*
 * Every path below folder @p ino (path @p prefix, st_ino @p self, its
 * parent's @p parent), depth first, into @p out. The inode numbers agree:
 * a generated name's from the listing, its lookup and its getattr (worked
 * out when asked, never stored: fsi_node_sino()), and "." and ".." of every
 * listing with the folder's and its parent's.
 */
static void list_tree(lfs_fs *fs, uint64_t ino, const char *prefix, uint64_t self, uint64_t parent,
		      struct names *out)
{
	size_t first = out->n;
	struct listing l = { out, prefix, 0, 0 };
	assert_int_equal(lfs_fs_readdir(fs, ino, 0, false, collect, &l), 0);
	assert_true(l.dot == self);
	assert_true(l.dotdot == parent);
	size_t last = out->n;
	for (size_t i = first; i < last; i++) {
		lfs_fs_entry e;
		const char *name = strrchr(out->v[i], '/');
		name = name ? name + 1 : out->v[i];
		assert_int_equal(lfs_fs_lookup(fs, ino, name, &e), 0);
		out->gen[i] = ((uint64_t)e.attr.st_ino >> 63) != 0;
		if (out->gen[i]) {
			struct stat st;
			double t;
			assert_int_equal(lfs_fs_getattr(fs, e.ino, &st, &t), 0);
			assert_true((uint64_t)st.st_ino == (uint64_t)e.attr.st_ino);
			assert_true((uint64_t)e.attr.st_ino == out->ino[i]);
		}
		if (S_ISDIR(e.attr.st_mode))
			list_tree(fs, e.ino, out->v[i], (uint64_t)e.attr.st_ino, self, out);
		lfs_fs_forget(fs, e.ino, 1);
	}
}

/* Look path @p p up component by component from the root (each node held once more). */
static void look_path(lfs_fs *fs, const char *p)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", p);
	uint64_t ino = LFS_FS_ROOT_ID;
	for (char *save = NULL, *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		lfs_fs_entry e;
		assert_int_equal(lfs_fs_lookup(fs, ino, c, &e), 0);
		ino = e.ino;
	}
}

static void test_bytes_per_node(void **state)
{
	(void)state;
	char src[4096];
	snprintf(src, sizeof(src), "%s/nwn/tree", lfs_corpus_dir_or_skip());
	lfs_fs_opts o = { .timeout = 1, .cache_bytes = 0, .cache_entries = 0,
			  .max_model_size = 64 << 20, .watch = false, .log = quiet };
	lfs_fs *fs = NULL;
	assert_int_equal(lfs_fs_new(src, &o, &fs), 0);
	/* every view built and cached, every path known; nothing held */
	struct names all = { 0 };
	struct stat rst;
	double rt;
	assert_int_equal(lfs_fs_getattr(fs, LFS_FS_ROOT_ID, &rst, &rt), 0);
	list_tree(fs, LFS_FS_ROOT_ID, "", (uint64_t)rst.st_ino, (uint64_t)rst.st_ino, &all);
	assert_true(all.n > 10000);
	lfs_fs_stats s;
	lfs_fs_get_stats(fs, &s);
	assert_int_equal(s.nodes, 5); /* root, /.legacyfs and its errors, status, resources */

	/* SOURCE names first (folders, model folders, plain files), then the
	 * generated names (their folders are held already): the second step's
	 * growth is what generated-file nodes cost, tables included. */
	size_t before = lfs_malloc_in_use();
	for (size_t i = 0; i < all.n; i++)
		if (!all.gen[i])
			look_path(fs, all.v[i]);
	size_t mid = lfs_malloc_in_use();
	lfs_fs_get_stats(fs, &s);
	size_t src_nodes = s.nodes - 5; /* the pinned nodes: root, /.legacyfs and its three files */
	for (size_t i = 0; i < all.n; i++)
		if (all.gen[i])
			look_path(fs, all.v[i]);
	size_t after = lfs_malloc_in_use();
	lfs_fs_get_stats(fs, &s);
	size_t nodes = s.nodes - 5, gen_nodes = nodes - src_nodes;
	assert_int_equal(nodes, all.n);
	assert_true(gen_nodes > 10000);
	size_t held = after - before, gen_held = after - mid;
	printf("# %zu nodes held: %zu bytes in malloc, %.1f bytes per node\n", nodes, held,
	       (double)held / (double)nodes);
	printf("# %zu generated-file nodes: %zu bytes, %.1f bytes per node\n", gen_nodes, gen_held,
	       (double)gen_held / (double)gen_nodes);
	if (lfs_malloc_counts()) {
		assert_true(held <= nodes * NODE_BYTES_MAX);
		assert_true(gen_held <= gen_nodes * GEN_NODE_BYTES_MAX);
	}
	lfs_fs_free(fs);
	for (size_t i = 0; i < all.n; i++)
		free(all.v[i]);
	free(all.v);
	free(all.gen);
	free(all.ino);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes_per_node),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
