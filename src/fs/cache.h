/**
 * @file cache.h
 * In-memory cache of classified source files and their generated views.
 *
 * Key: the source file's (st_dev, st_ino, st_size, st_mtim in ns) plus its
 * path relative to SOURCE (the path matters: model.mtl's texture paths are
 * relative to the model's folder). A changed file therefore has a new key
 * and is classified and built again; the old entry just ages out.
 *
 * Value: the classification (plain / model / failed), the views of a model,
 * the decoder's message of a failure. Plain and failed verdicts are cached
 * too so that directory listings never read a file twice. A model entry
 * starts as a header verdict (`built` false, no views: what listing a
 * folder needs), may get the names of its views (lfs_cache_set_names(): what
 * a listing inside the model folder needs) and a thumbnail drawn alone
 * (lfs_cache_set_thumb()), and gets its views in place (lfs_cache_fill())
 * when a view file inside the model folder is first asked for.
 *
 * Bound: least-recently-used entries are dropped while the total bytes the
 * entries hold in malloc (lfs_centry_held(): every allocation an entry owns,
 * at its malloc_usable_size() plus malloc's chunk header) exceed max_bytes
 * or the entry count exceeds max_entries. Every eighth of the bound evicted
 * (at least 4 MiB), the memory malloc keeps free is given back to the
 * kernel (malloc_trim), so the process's RSS follows the bound.
 * Entries with refs > 0 (in use by a request) and
 * the most recently used entry are never dropped (so a model larger than the
 * bound is not rebuilt for every READ of a sequential walk). An evicted model is simply rebuilt on the next access; the
 * views are deterministic, so sizes already reported stay true.
 *
 * Builds in progress: a request that misses registers its key
 * (lfs_cache_build_begin()), builds unlocked, and ends the build
 * (lfs_cache_build_end(), which wakes the waiters on `built`). A second
 * request for the same key waits on `built` (with the caller's lock) instead
 * of building the same model again; requests for other keys never wait, so
 * unrelated models build in parallel under a multi-threaded loop.
 *
 * Not thread safe: the fs layer calls it under its own lock. No FUSE code.
 */
#ifndef LFS_FS_CACHE_H
#define LFS_FS_CACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "source.h"

/** Identity of one version of one source file. `rel` is owned by the entry. */
typedef struct lfs_cache_key {
	uint64_t dev, ino;
	int64_t size;
	int64_t mtime_ns;
	uint64_t bif_gen; /**< a container built from other files (a KEY) or a member of
			   *   one: registry/container.h lfs_container_version(); else 0 */
	uint64_t super_gen; /**< an NWN `.mdl`: the count of model files changes the watcher
			     *   reported (its supermodel links follow them: supermodel.h
			     *   lfs_supermodel_version()); else 0 */
	const char *rel;
} lfs_cache_key;

/** One cached source file. */
typedef struct lfs_centry {
	lfs_cache_key key;    /**< key.rel points at rel_buf */
	char *rel_buf;
	lfs_source_kind kind;
	lfs_viewset vs;       /**< views when kind == LFS_SOURCE_MODEL and built */
	const lfs_format *format; /**< the format the header was detected as (model) */
	bool built;           /**< vs is final; false: a header verdict, views not built yet.
			       *   Set once, under the caller's lock (lfs_cache_fill()) */
	/** Names of the views of a model whose views are not built yet
	 *  (lfs_view_opts.names_only: every view listed, no bytes): what a
	 *  listing of the model folder needs. NULL: none. Set once
	 *  (lfs_cache_set_names()) and never changed while requests hold the
	 *  entry: they walk it without the caller's lock. Freed with the entry,
	 *  or by lfs_cache_fill() when no other request holds the entry. */
	lfs_viewset *names;
	/** thumbnail.png drawn before the views were built (NULL: none; PNG,
	 *  thumb_n bytes): lfs_cache_fill() hands it to the views' pending
	 *  thumbnail, so the full build does not draw it again. */
	uint8_t *thumb;
	size_t thumb_n;
	/** The thumbnail without the views (fs_thumb.c): 0 not tried yet; 1 drawn
	 *  (in thumb, or in vs once built); -1 nothing to draw. */
	signed char thumb_early;
	/** A request is drawing this entry's thumbnail right now (set and cleared
	 *  under the caller's lock): others wait on lfs_cache.built. */
	bool thumb_busy;
	char *errmsg;         /**< decoder message when kind == LFS_SOURCE_FAILED */
	size_t bytes;         /**< accounted size: lfs_centry_held() when it was made */
	unsigned refs;        /**< requests using the entry right now */
	struct lfs_centry *hnext, *prev, *next; /* hash chain, LRU list (head = newest) */
} lfs_centry;

/** A build in progress (lfs_cache_build_begin()): other requests for the key wait for it. */
typedef struct lfs_cbuild {
	lfs_cache_key key;    /**< key.rel points at rel_buf */
	char *rel_buf;
	bool names;           /**< a names-only build (lfs_cache_names_begin()) */
	struct lfs_cbuild *next;
} lfs_cbuild;

/** The cache. Zero-initialise then call lfs_cache_init(). */
typedef struct lfs_cache {
	lfs_centry **buckets;
	size_t nbuckets, n;
	lfs_centry *head, *tail;
	size_t bytes, max_bytes, max_entries;
	/** Bytes of the same bound held outside the entries: the texts kept as
	 *  merge bases (fs_edit.c vtext store, at most a quarter of max_bytes).
	 *  Eviction keeps bytes + reserved <= max_bytes. Set by the fs layer. */
	size_t reserved;
	uint64_t hits, misses, evictions; /**< counters for statistics */
	uint64_t build_waits;  /**< requests that waited for another request's build of their key */
	size_t freed_since_trim; /**< bytes evicted since memory was last given back (malloc_trim) */
	uint64_t trims;        /**< times freed memory was given back to the kernel */
	lfs_cbuild *building;  /**< builds in progress (unlocked, by the request that began them) */
	pthread_cond_t built;  /**< broadcast when a build ends; waited on with the caller's lock */
} lfs_cache;

/**
 * Key of a stat result (rel is borrowed). The key of a container built from
 * other files (a KEY, from its BIFs) and of a member "<x.key>/<name>" of one
 * also holds the count of those files' changes the watcher reported
 * (registry/container.h lfs_container_version(), docs/archives.md "Changes
 * and caching").
 */
lfs_cache_key lfs_cache_key_of(const struct stat *st, const char *rel);

/** Set the bounds (bytes of view data, number of entries; 0 = no bound). */
void lfs_cache_init(lfs_cache *c, size_t max_bytes, size_t max_entries);

/** Free every entry (refs must all be 0). */
void lfs_cache_destroy(lfs_cache *c);

/**
 * Find the entry for @p k and take a reference (refs++), marking it most
 * recently used. NULL when absent.
 */
lfs_centry *lfs_cache_get(lfs_cache *c, const lfs_cache_key *k);

/**
 * Make a new entry (refs = 0, not inserted). Takes ownership of @p vs's
 * contents; copies @p k->rel and @p errmsg. NULL when memory runs out (then
 * @p vs is freed).
 */
lfs_centry *lfs_centry_new(const lfs_cache_key *k, lfs_source_kind kind, lfs_viewset *vs,
			   const char *errmsg);

/**
 * Bytes entry @p e holds in malloc: the entry itself, its key's path, its
 * message, its array of views and each view's path and bytes, its names-only
 * set (struct, array, paths) and early thumbnail, each at its
 * malloc_usable_size() plus one chunk header, and two bucket slots. What
 * the cache's bound counts (docs/performance.md "Memory").
 */
size_t lfs_centry_held(const lfs_centry *e);

/** Free an entry that is not in a cache. */
void lfs_centry_free(lfs_centry *e);

/**
 * Insert @p e with one reference taken, or, when an entry with the same key
 * already exists, free @p e and return the existing one (reference taken).
 * Evicts old entries afterwards.
 */
lfs_centry *lfs_cache_put(lfs_cache *c, lfs_centry *e);

/**
 * Give verdict entry @p e (a model, not built, a reference held by the
 * caller) the views and message of @p b, a new entry of the same key not in
 * the cache (lfs_centry_new()), which is freed. @p e becomes built; its
 * accounted bytes grow by the views' (an entry not in the cache: not
 * counted). Evicts old entries afterwards.
 */
void lfs_cache_fill(lfs_cache *c, lfs_centry *e, lfs_centry *b);

/**
 * Give model entry @p e (not built, no names yet, a reference held by the
 * caller) the names-only set @p names (malloc'd struct, owned from now on).
 * Its accounted bytes grow by the set's. Evicts old entries afterwards.
 */
void lfs_cache_set_names(lfs_cache *c, lfs_centry *e, lfs_viewset *names);

/**
 * Give entry @p e (a reference held by the caller) the thumbnail @p png
 * (@p n bytes, malloc'd, owned from now on): into its views' pending
 * thumbnail when it is built (lfs_viewset_thumb_set()), else kept in
 * e->thumb for lfs_cache_fill(). Accounted bytes follow. Evicts afterwards.
 */
void lfs_cache_set_thumb(lfs_cache *c, lfs_centry *e, uint8_t *png, size_t n);

/**
 * A texture changed: every thumbnail the cache holds (drawn into the views,
 * or drawn before them) is dropped, to be drawn again when next asked
 * (the disk cache, thumbcache.h, checks its textures itself). Entries in
 * use right now keep theirs until their next version. Returns how many
 * entries changed. Accounted bytes follow.
 */
size_t lfs_cache_thumbs_reset(lfs_cache *c);

/** Drop a reference taken by lfs_cache_get()/lfs_cache_put(). */
void lfs_cache_release(lfs_cache *c, lfs_centry *e);

/** Is a build of @p k (of its views, not a names-only one) in progress? */
bool lfs_cache_is_building(const lfs_cache *c, const lfs_cache_key *k);

/** Is a names-only build of @p k in progress? */
bool lfs_cache_is_naming(const lfs_cache *c, const lfs_cache_key *k);

/** lfs_cache_build_begin() of a names-only build (lfs_cache_is_naming()). */
lfs_cbuild *lfs_cache_names_begin(lfs_cache *c, const lfs_cache_key *k);

/**
 * Register a build of @p k (copied). Returns the token for
 * lfs_cache_build_end(), or NULL when memory runs out (the build then runs
 * unregistered: waiters of the key do not exist, nothing breaks).
 */
lfs_cbuild *lfs_cache_build_begin(lfs_cache *c, const lfs_cache_key *k);

/** End build @p b (NULL: nothing) and wake every waiter on `built`. */
void lfs_cache_build_end(lfs_cache *c, lfs_cbuild *b);

#endif
