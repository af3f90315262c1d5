/**
 * @file test_nwn_derive_memo.c
 * The memo of seen derived values (src/formats/nwn/nwn_derive_memo.h), no
 * corpus: keys separate scopes and inputs, a value comes back only with its
 * size, a re-recorded key takes the new value, the byte bound holds with the
 * oldest entry dropped first, a value larger than the bound is not kept, and
 * several threads recording and looking up at once get back what they put.
 * Its use by the apply is tested on the corpus by test_nwn_derive.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/nwn/nwn_derive_memo.h"
#include "corpus.h"

/* a key from a number, as a face key of scope @p s */
static nwn_memo_key key_of(const nwn_memo_key *s, uint32_t i)
{
	float p[3] = { (float)i, 0.5f, -1.0f };
	return nwn_memo_face_key(s, p, p, p);
}

static nwn_memo_key scope_a(void)
{
	static nwn_node nodes[1];
	static nwn_model m;
	strcpy(m.geom.name, "c_test");
	m.geom.fn[0] = 0x0046AB0Cu;
	m.geom.nodes = nodes;
	m.geom.n_nodes = 1;
	strcpy(nodes[0].name, "mesh01");
	return nwn_memo_scope(&m, 0);
}

static void keys(void **state)
{
	(void)state;
	nwn_memo_clear();
	nwn_memo_key s = scope_a(), t = s;
	t.b[0] ^= 1;
	nwn_memo_key a = key_of(&s, 1), b = key_of(&t, 1), c = key_of(&s, 2);
	assert_memory_not_equal(a.b, b.b, sizeof(a.b));
	assert_memory_not_equal(a.b, c.b, sizeof(a.b));
	float v[4] = { 1, 2, 3, 4 }, w[4] = { 0 };
	nwn_memo_put(&a, v, sizeof(v));
	assert_false(nwn_memo_get(&b, w, sizeof(w)));
	assert_false(nwn_memo_get(&c, w, sizeof(w)));
	assert_false(nwn_memo_get(&a, w, 12)); /* another size: no hit */
	assert_true(nwn_memo_get(&a, w, sizeof(w)));
	assert_memory_equal(v, w, sizeof(v));
	/* recorded again: the newer value */
	v[3] = 5;
	nwn_memo_put(&a, v, sizeof(v));
	assert_true(nwn_memo_get(&a, w, sizeof(w)));
	assert_true(w[3] == 5.0f);
	size_t n;
	nwn_memo_usage(NULL, &n);
	assert_int_equal(n, 1);
	nwn_memo_clear();
	nwn_memo_usage(NULL, &n);
	assert_int_equal(n, 0);
}

static void bound(void **state)
{
	(void)state;
	nwn_memo_clear();
	nwn_memo_key s = scope_a();
	uint8_t v[100] = { 0 };
	nwn_memo_key k0 = key_of(&s, 0);
	nwn_memo_put(&k0, v, sizeof(v));
	size_t one;
	nwn_memo_usage(&one, NULL);
	assert_true(one >= sizeof(v));
	nwn_memo_set_limit(10 * one);
	for (uint32_t i = 1; i < 25; i++) {
		nwn_memo_key k = key_of(&s, i);
		v[0] = (uint8_t)i;
		nwn_memo_put(&k, v, sizeof(v));
	}
	size_t bytes, n;
	nwn_memo_usage(&bytes, &n);
	assert_true(bytes <= 10 * one);
	assert_int_equal(n, 10);
	/* the newest ten stay, the older ones went first */
	for (uint32_t i = 0; i < 25; i++) {
		nwn_memo_key k = key_of(&s, i);
		bool hit = nwn_memo_get(&k, v, sizeof(v));
		assert_int_equal(hit, i >= 15);
		if (hit)
			assert_int_equal(v[0], i);
	}
	/* a value larger than the bound is not kept, and drops nothing */
	uint8_t *big = calloc(1, 11 * one);
	assert_non_null(big);
	nwn_memo_key kb = key_of(&s, 1000);
	nwn_memo_put(&kb, big, 11 * one);
	assert_false(nwn_memo_get(&kb, big, 11 * one));
	nwn_memo_usage(NULL, &n);
	assert_int_equal(n, 10);
	free(big);
	/* a lower bound drops the oldest at once */
	nwn_memo_set_limit(3 * one);
	nwn_memo_usage(NULL, &n);
	assert_int_equal(n, 3);
	nwn_memo_key k24 = key_of(&s, 24), k21 = key_of(&s, 21);
	assert_true(nwn_memo_get(&k24, v, sizeof(v)));
	assert_false(nwn_memo_get(&k21, v, sizeof(v)));
	nwn_memo_set_limit(NWN_MEMO_DEFAULT_LIMIT);
	nwn_memo_clear();
}

#define THREADS 4
#define PER_THREAD 20000u

static void *worker(void *arg)
{
	uint32_t base = (uint32_t)(uintptr_t)arg * PER_THREAD;
	nwn_memo_key s = scope_a();
	uintptr_t bad = 0;
	for (uint32_t i = 0; i < PER_THREAD; i++) {
		nwn_memo_key k = key_of(&s, base + i);
		uint32_t v[2] = { base + i, ~(base + i) }, w[2];
		nwn_memo_put(&k, v, sizeof(v));
		/* a hit (the entry may be dropped already) is the value put */
		if (nwn_memo_get(&k, w, sizeof(w)) && (w[0] != v[0] || w[1] != v[1]))
			bad++;
	}
	return (void *)bad;
}

static void threads(void **state)
{
	(void)state;
	nwn_memo_clear();
	nwn_memo_set_limit(64 << 10); /* small: entries are dropped while others record */
	pthread_t t[THREADS];
	for (uintptr_t i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, worker, (void *)i), 0);
	for (int i = 0; i < THREADS; i++) {
		void *r;
		assert_int_equal(pthread_join(t[i], &r), 0);
		assert_true(r == NULL);
	}
	size_t bytes, n;
	nwn_memo_usage(&bytes, &n);
	assert_true(bytes <= (64 << 10));
	assert_true(n > 0);
	nwn_memo_set_limit(NWN_MEMO_DEFAULT_LIMIT);
	nwn_memo_clear();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keys),
		cmocka_unit_test(bound),
		cmocka_unit_test(threads),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
