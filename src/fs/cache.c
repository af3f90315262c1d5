/**
 * @file cache.c
 * LRU cache of classified source files (see cache.h).
 */
#include "cache.h"

#include "registry/container.h"
#include "supermodel.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/mem.h"

/*
 * What malloc holds for one allocation @p p: its usable size
 * (malloc_usable_size(), which includes the rounding up to malloc's chunk
 * sizes) plus the chunk header in front of it (one size_t in glibc's
 * allocator, "Malloc Internals" of the glibc wiki). 0 for NULL.
 */
static size_t held(const void *p)
{
	return p ? malloc_usable_size((void *)p) + sizeof(size_t) : 0;
}

size_t lfs_centry_held(const lfs_centry *e)
{
	/* the entry, its key's path, its message, the array of views, each
	 * view's path and bytes, and its share of the bucket table (at most
	 * two slots per entry: the table doubles when it is full) */
	size_t b = held(e) + held(e->rel_buf) + held(e->errmsg) + held(e->vs.views) +
		   2 * sizeof(lfs_centry *);
	for (size_t i = 0; i < e->vs.n_views; i++)
		b += held(e->vs.views[i].path) + held(e->vs.views[i].data);
	if (e->names) {
		b += held(e->names) + held(e->names->views);
		for (size_t i = 0; i < e->names->n_views; i++)
			b += held(e->names->views[i].path) + held(e->names->views[i].data);
	}
	return b + held(e->thumb);
}


lfs_cache_key lfs_cache_key_of(const struct stat *st, const char *rel)
{
	lfs_cache_key k = {
		.dev = (uint64_t)st->st_dev,
		.ino = (uint64_t)st->st_ino,
		.size = (int64_t)st->st_size,
		.mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
		/* a KEY, or a member of one, is built from its BIFs too */
		.bif_gen = lfs_container_version(rel),
		.super_gen = lfs_supermodel_version(rel),
		.rel = rel,
	};
	return k;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		h ^= (v >> (i * 8)) & 0xff;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t key_hash(const lfs_cache_key *k)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	h = mix(h, k->dev);
	h = mix(h, k->ino);
	h = mix(h, (uint64_t)k->size);
	h = mix(h, (uint64_t)k->mtime_ns);
	h = mix(h, k->bif_gen);
	h = mix(h, k->super_gen);
	for (const unsigned char *p = (const unsigned char *)k->rel; *p; p++) {
		h ^= *p;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int key_eq(const lfs_cache_key *a, const lfs_cache_key *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->bif_gen == b->bif_gen &&
	       a->super_gen == b->super_gen && strcmp(a->rel, b->rel) == 0;
}

void lfs_cache_init(lfs_cache *c, size_t max_bytes, size_t max_entries)
{
	memset(c, 0, sizeof(*c));
	c->max_bytes = max_bytes;
	c->max_entries = max_entries;
	pthread_cond_init(&c->built, NULL);
}

static bool building(const lfs_cache *c, const lfs_cache_key *k, bool names)
{
	for (const lfs_cbuild *b = c->building; b; b = b->next)
		if (b->names == names && key_eq(&b->key, k))
			return true;
	return false;
}

bool lfs_cache_is_building(const lfs_cache *c, const lfs_cache_key *k)
{
	return building(c, k, false);
}

bool lfs_cache_is_naming(const lfs_cache *c, const lfs_cache_key *k)
{
	return building(c, k, true);
}

lfs_cbuild *lfs_cache_names_begin(lfs_cache *c, const lfs_cache_key *k)
{
	lfs_cbuild *b = lfs_cache_build_begin(c, k);
	if (b)
		b->names = true;
	return b;
}

lfs_cbuild *lfs_cache_build_begin(lfs_cache *c, const lfs_cache_key *k)
{
	lfs_cbuild *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->rel_buf = strdup(k->rel);
	if (!b->rel_buf) {
		free(b);
		return NULL;
	}
	b->key = *k;
	b->key.rel = b->rel_buf;
	b->next = c->building;
	c->building = b;
	return b;
}

void lfs_cache_build_end(lfs_cache *c, lfs_cbuild *b)
{
	if (b) {
		lfs_cbuild **pp = &c->building;
		while (*pp && *pp != b)
			pp = &(*pp)->next;
		if (*pp)
			*pp = b->next;
		free(b->rel_buf);
		free(b);
	}
	pthread_cond_broadcast(&c->built);
}

void lfs_centry_free(lfs_centry *e)
{
	if (!e)
		return;
	lfs_viewset_free(&e->vs);
	if (e->names) {
		lfs_viewset_free(e->names);
		free(e->names);
	}
	free(e->thumb);
	free(e->errmsg);
	free(e->rel_buf);
	free(e);
}

void lfs_cache_destroy(lfs_cache *c)
{
	lfs_centry *e = c->head;
	while (e) {
		lfs_centry *nx = e->next;
		lfs_centry_free(e);
		e = nx;
	}
	free(c->buckets);
	while (c->building) {
		lfs_cbuild *b = c->building;
		c->building = b->next;
		free(b->rel_buf);
		free(b);
	}
	pthread_cond_destroy(&c->built);
	memset(c, 0, sizeof(*c));
}

static void lru_unlink(lfs_cache *c, lfs_centry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
}

static void lru_push_front(lfs_cache *c, lfs_centry *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	c->head = e;
	if (!c->tail)
		c->tail = e;
}

static lfs_centry *find(lfs_cache *c, const lfs_cache_key *k)
{
	if (!c->nbuckets)
		return NULL;
	for (lfs_centry *e = c->buckets[key_hash(k) & (c->nbuckets - 1)]; e; e = e->hnext)
		if (key_eq(&e->key, k))
			return e;
	return NULL;
}

lfs_centry *lfs_cache_get(lfs_cache *c, const lfs_cache_key *k)
{
	lfs_centry *e = find(c, k);
	if (!e) {
		c->misses++;
		return NULL;
	}
	c->hits++;
	e->refs++;
	lru_unlink(c, e);
	lru_push_front(c, e);
	return e;
}

lfs_centry *lfs_centry_new(const lfs_cache_key *k, lfs_source_kind kind, lfs_viewset *vs,
			   const char *errmsg)
{
	lfs_centry *e = calloc(1, sizeof(*e));
	if (!e) {
		lfs_viewset_free(vs);
		return NULL;
	}
	e->key = *k;
	e->rel_buf = strdup(k->rel);
	e->kind = kind;
	e->built = vs != NULL;
	if (vs) {
		e->vs = *vs;
		memset(vs, 0, sizeof(*vs));
	}
	if (errmsg)
		e->errmsg = strdup(errmsg);
	if (!e->rel_buf || (errmsg && !e->errmsg)) {
		lfs_centry_free(e);
		return NULL;
	}
	e->key.rel = e->rel_buf;
	e->bytes = lfs_centry_held(e);
	return e;
}

static void unhash(lfs_cache *c, lfs_centry *e)
{
	lfs_centry **pp = &c->buckets[key_hash(&e->key) & (c->nbuckets - 1)];
	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	e->hnext = NULL;
}

/*
 * Evicted bytes after which the freed memory is handed back to the kernel
 * (malloc_trim): an eighth of the bound, at least 4 MiB. Views are built by
 * any request thread, so they sit in several malloc arenas, and an evicted
 * entry leaves holes among live ones that malloc keeps for itself: measured
 * on a 10,000-model tree at -o cache_size=64, 148 MB of 340 MB held by malloc
 * were such free chunks (docs/performance.md "Memory").
 */
static size_t trim_step(const lfs_cache *c)
{
	size_t step = c->max_bytes / 8;
	return step < ((size_t)4 << 20) ? (size_t)4 << 20 : step;
}

static void evict(lfs_cache *c)
{
	lfs_centry *e = c->tail;
	/* The most recently used entry always stays: a model larger than the
	 * whole bound is then built once per run of accesses, not once per READ. */
	while (e && e != c->head && ((c->max_bytes && c->bytes + c->reserved > c->max_bytes) ||
		     (c->max_entries && c->n > c->max_entries))) {
		lfs_centry *pv = e->prev;
		if (e->refs == 0) {
			unhash(c, e);
			lru_unlink(c, e);
			c->bytes -= e->bytes;
			c->n--;
			c->evictions++;
			c->freed_since_trim += e->bytes;
			lfs_centry_free(e);
		}
		e = pv;
	}
	if (c->freed_since_trim >= trim_step(c)) {
		c->freed_since_trim = 0;
		c->trims++;
		malloc_trim(0);
	}
}

/* Double the bucket table (a power of two) and rehash in place. 0 or -1 (no memory). */
static int rehash_grow(lfs_cache *c)
{
	size_t old = c->nbuckets, nb = old;
	if (!lfs_grow((void **)&c->buckets, &nb, old ? old * 2 : 256, sizeof(*c->buckets)))
		return -1;
	memset(c->buckets + old, 0, (nb - old) * sizeof(*c->buckets));
	/* A chain of bucket i moves to i or i + old only. */
	for (size_t i = 0; i < old; i++) {
		lfs_centry *e = c->buckets[i];
		c->buckets[i] = NULL;
		while (e) {
			lfs_centry *nx = e->hnext;
			size_t h = key_hash(&e->key) & (nb - 1);
			e->hnext = c->buckets[h];
			c->buckets[h] = e;
			e = nx;
		}
	}
	c->nbuckets = nb;
	return 0;
}

lfs_centry *lfs_cache_put(lfs_cache *c, lfs_centry *e)
{
	lfs_centry *old = find(c, &e->key);
	if (old) {
		lfs_centry_free(e);
		old->refs++;
		lru_unlink(c, old);
		lru_push_front(c, old);
		return old;
	}
	if (c->n + 1 > c->nbuckets && rehash_grow(c) != 0 && !c->nbuckets) {
		/* No table at all: hand the entry out uncached (refs keep it alive). */
		e->refs = 1;
		return e; /* caller's release frees it: see lfs_cache_release */
	}
	size_t h = key_hash(&e->key) & (c->nbuckets - 1);
	e->hnext = c->buckets[h];
	c->buckets[h] = e;
	lru_push_front(c, e);
	c->n++;
	c->bytes += e->bytes;
	e->refs = 1;
	evict(c);
	return e;
}

static bool in_cache(const lfs_cache *c, const lfs_centry *e)
{
	return e->prev || e->next || c->head == e;
}

/* Account entry @p e again at what it holds now. */
static void reaccount(lfs_cache *c, lfs_centry *e)
{
	size_t now = lfs_centry_held(e);
	if (in_cache(c, e))
		c->bytes = c->bytes - e->bytes + now;
	e->bytes = now;
}

void lfs_cache_fill(lfs_cache *c, lfs_centry *e, lfs_centry *b)
{
	lfs_viewset_free(&e->vs);
	e->vs = b->vs;
	memset(&b->vs, 0, sizeof(b->vs));
	free(e->errmsg);
	e->errmsg = b->errmsg;
	b->errmsg = NULL;
	e->built = true;
	if (e->thumb) {
		/* drawn before the views: theirs now (freed when nothing is pending) */
		lfs_viewset_thumb_set(&e->vs, e->thumb, e->thumb_n);
		e->thumb = NULL;
		e->thumb_n = 0;
	}
	if (e->names && e->refs <= 1) {
		/* only the caller holds it: no listing walks the names */
		lfs_viewset_free(e->names);
		free(e->names);
		e->names = NULL;
	}
	reaccount(c, e);
	lfs_centry_free(b);
	evict(c);
}

void lfs_cache_set_names(lfs_cache *c, lfs_centry *e, lfs_viewset *names)
{
	if (e->names) {
		lfs_viewset_free(names);
		free(names);
		return;
	}
	e->names = names;
	reaccount(c, e);
	evict(c);
}

void lfs_cache_set_thumb(lfs_cache *c, lfs_centry *e, uint8_t *png, size_t n)
{
	if (e->built) {
		lfs_viewset_thumb_set(&e->vs, png, n);
	} else {
		free(e->thumb);
		e->thumb = png;
		e->thumb_n = n;
	}
	reaccount(c, e);
	evict(c);
}

void lfs_cache_release(lfs_cache *c, lfs_centry *e)
{
	if (!e)
		return;
	if (e->refs)
		e->refs--;
	if (e->refs == 0 && !e->prev && !e->next && c->head != e) {
		/* Never inserted (allocation failure in lfs_cache_put). */
		lfs_centry_free(e);
		return;
	}
	evict(c);
}

size_t lfs_cache_thumbs_reset(lfs_cache *c)
{
	size_t k = 0;
	for (lfs_centry *e = c->head; e; e = e->next) {
		if (e->refs || e->thumb_busy)
			continue; /* in use: its bytes may be being copied (redrawn next version) */
		size_t before = e->bytes;
		bool changed = e->built && lfs_viewset_thumb_reset(&e->vs);
		if (e->thumb || e->thumb_early) {
			free(e->thumb);
			e->thumb = NULL;
			e->thumb_n = 0;
			e->thumb_early = 0;
			changed = true;
		}
		if (!changed)
			continue;
		k++;
		size_t after = lfs_centry_held(e);
		e->bytes = after;
		c->bytes = c->bytes - before + after;
	}
	return k;
}
