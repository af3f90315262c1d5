/**
 * @file nwn_derive_memo.c
 * Memo of seen derived values (nwn_derive_memo.h): a chained hash table of
 * SHA-256 keys with a list in recording order for dropping the oldest entry,
 * behind one mutex.
 */
#include "nwn_derive_memo.h"

#include <nettle/sha2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct memo_ent {
	nwn_memo_key key;
	struct memo_ent *chain;        /* next in the bucket */
	struct memo_ent *older, *newer; /* recording order */
	size_t n;                      /* value bytes */
	uint8_t val[];
} memo_ent;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static memo_ent **g_bucket;
static size_t g_nbucket, g_count, g_bytes;
static size_t g_limit = NWN_MEMO_DEFAULT_LIMIT;
static memo_ent *g_oldest, *g_newest;

static size_t ent_bytes(size_t n)
{
	return sizeof(memo_ent) + n + sizeof(memo_ent *); /* + its bucket share */
}

static size_t bucket_of(const nwn_memo_key *k, size_t nb)
{
	uint64_t h;
	memcpy(&h, k->b, sizeof(h));
	return (size_t)(h & (nb - 1));
}

/* ---- keys ------------------------------------------------------------- */

static void put_u32(struct sha256_ctx *c, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	sha256_update(c, 4, b);
}

/* floats by their bits, little-endian whatever the host */
static void put_floats(struct sha256_ctx *c, const float *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t w;
		memcpy(&w, v + i, 4);
		put_u32(c, w);
	}
}

static nwn_memo_key finish(struct sha256_ctx *c)
{
	nwn_memo_key k;
	sha256_digest(c, sizeof(k.b), k.b);
	return k;
}

nwn_memo_key nwn_memo_scope(const nwn_model *m, uint32_t node)
{
	struct sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, 6, (const uint8_t *)"scope");
	const nwn_geometry *g = &m->geom;
	sha256_update(&c, strnlen(g->name, sizeof(g->name) - 1) + 1, (const uint8_t *)g->name);
	put_u32(&c, g->fn[0]);
	put_u32(&c, g->fn[1]);
	put_u32(&c, node);
	if (node < g->n_nodes) {
		const nwn_node *n = &g->nodes[node];
		sha256_update(&c, strnlen(n->name, sizeof(n->name) - 1) + 1, (const uint8_t *)n->name);
		put_u32(&c, n->flags);
	}
	return finish(&c);
}

nwn_memo_key nwn_memo_face_key(const nwn_memo_key *scope, const float *p0, const float *p1, const float *p2)
{
	struct sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, 5, (const uint8_t *)"face");
	sha256_update(&c, sizeof(scope->b), scope->b);
	put_floats(&c, p0, 3);
	put_floats(&c, p1, 3);
	put_floats(&c, p2, 3);
	return finish(&c);
}

nwn_memo_key nwn_memo_mesh_key(const nwn_memo_key *scope, const nwn_mesh *me, const float *v, size_t nv,
			       const uint16_t *fv, size_t nf)
{
	struct sha256_ctx c;
	sha256_init(&c);
	sha256_update(&c, 5, (const uint8_t *)"mesh");
	sha256_update(&c, sizeof(scope->b), scope->b);
	put_u32(&c, (uint32_t)nv);
	put_floats(&c, v, 3 * nv);
	put_u32(&c, (uint32_t)nf);
	for (size_t i = 0; i < 3 * nf; i++)
		put_u32(&c, fv[i]);
	const nwn_animmesh *am = me->anim;
	if (am && am->anim_verts) {
		put_u32(&c, am->n_vert_sets);
		put_floats(&c, am->anim_verts, (size_t)am->n_vert_sets * nv * 3);
	} else {
		put_u32(&c, 0);
	}
	const nwn_aabb *t = me->aabb;
	put_u32(&c, t ? t->n_entries : 0);
	for (uint32_t i = 0; t && i < t->n_entries; i++) {
		put_u32(&c, t->entries[i].left_ptr);
		put_u32(&c, t->entries[i].right_ptr);
		put_u32(&c, (uint32_t)t->entries[i].leaf_face);
	}
	return finish(&c);
}

/* ---- the table (callers hold g_mu) -------------------------------------- */

static memo_ent **find_slot(const nwn_memo_key *k)
{
	if (!g_nbucket)
		return NULL;
	memo_ent **p = &g_bucket[bucket_of(k, g_nbucket)];
	while (*p && memcmp((*p)->key.b, k->b, sizeof(k->b)))
		p = &(*p)->chain;
	return p;
}

static void unlink_ent(memo_ent *e)
{
	memo_ent **p = find_slot(&e->key);
	if (p && *p == e)
		*p = e->chain;
	if (e->older)
		e->older->newer = e->newer;
	else
		g_oldest = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		g_newest = e->older;
	g_count--;
	g_bytes -= ent_bytes(e->n);
	free(e);
}

static void fit(void)
{
	while (g_oldest && g_bytes > g_limit)
		unlink_ent(g_oldest);
}

/* Double the bucket array when the table holds as many entries as buckets
 * (before an entry is added); a failed growth keeps the old array (longer
 * chains, still correct). */
static void grow(void)
{
	if (g_count < g_nbucket)
		return;
	size_t nb = g_nbucket ? 2 * g_nbucket : 1024;
	memo_ent **b = calloc(nb, sizeof(*b));
	if (!b)
		return;
	for (memo_ent *e = g_oldest; e; e = e->newer) {
		size_t i = bucket_of(&e->key, nb);
		e->chain = b[i];
		b[i] = e;
	}
	free(g_bucket);
	g_bucket = b;
	g_nbucket = nb;
}

void nwn_memo_put(const nwn_memo_key *k, const void *val, size_t n)
{
	pthread_mutex_lock(&g_mu);
	memo_ent **p = find_slot(k);
	if (p && *p)
		unlink_ent(*p);
	memo_ent *e = NULL;
	grow();
	if (g_nbucket && ent_bytes(n) <= g_limit)
		e = malloc(sizeof(memo_ent) + n);
	if (e) {
		e->key = *k;
		e->n = n;
		memcpy(e->val, val, n);
		size_t i = bucket_of(k, g_nbucket);
		e->chain = g_bucket[i];
		g_bucket[i] = e;
		e->older = g_newest;
		e->newer = NULL;
		if (g_newest)
			g_newest->newer = e;
		else
			g_oldest = e;
		g_newest = e;
		g_bytes += ent_bytes(n);
		g_count++;
		fit(); /* e is the newest and fits alone: never dropped */
	}
	pthread_mutex_unlock(&g_mu);
}

bool nwn_memo_get(const nwn_memo_key *k, void *val, size_t n)
{
	bool hit = false;
	pthread_mutex_lock(&g_mu);
	memo_ent **p = find_slot(k);
	if (p && *p && (*p)->n == n) {
		memcpy(val, (*p)->val, n);
		hit = true;
	}
	pthread_mutex_unlock(&g_mu);
	return hit;
}

void nwn_memo_set_limit(size_t bytes)
{
	pthread_mutex_lock(&g_mu);
	g_limit = bytes;
	fit();
	pthread_mutex_unlock(&g_mu);
}

void nwn_memo_usage(size_t *bytes, size_t *entries)
{
	pthread_mutex_lock(&g_mu);
	if (bytes)
		*bytes = g_bytes;
	if (entries)
		*entries = g_count;
	pthread_mutex_unlock(&g_mu);
}

void nwn_memo_clear(void)
{
	pthread_mutex_lock(&g_mu);
	while (g_oldest)
		unlink_ent(g_oldest);
	pthread_mutex_unlock(&g_mu);
}
