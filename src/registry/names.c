/**
 * @file names.c
 * Safe unique file names (see names.h and docs/naming.md).
 */
#include "names.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t lfs_name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		h ^= *p;
		h *= 16777619u;
	}
	return h;
}

static bool needs_escape(unsigned char c)
{
	return c == '/' || c == '%' || c < 0x20 || c == 0x7F;
}

size_t lfs_name_safe(const char *raw, char out[LFS_NAME_MAX_BASE + 1])
{
	static const char hex[] = "0123456789ABCDEF";
	if (!raw[0]) {
		memcpy(out, "%00", 4);
		return 3;
	}
	if (!strcmp(raw, ".")) {
		memcpy(out, "%2E", 4);
		return 3;
	}
	if (!strcmp(raw, "..")) {
		memcpy(out, "%2E%2E", 7);
		return 6;
	}
	/* Escape while it fits; remember where the cut for step 3 would go. */
	const size_t cut_at = LFS_NAME_MAX_BASE - 9;
	size_t n = 0, cut = 0;
	bool too_long = false;
	for (const unsigned char *p = (const unsigned char *)raw; *p; p++) {
		size_t w = needs_escape(*p) ? 3 : 1;
		if (n + w <= cut_at)
			cut = n + w;
		if (n + w > LFS_NAME_MAX_BASE) {
			too_long = true;
			break;
		}
		if (w == 3) {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		} else {
			out[n++] = (char)*p;
		}
	}
	if (too_long) {
		n = cut;
		n += (size_t)snprintf(out + n, LFS_NAME_MAX_BASE + 1 - n, "~%08x",
				      (unsigned)lfs_name_hash(raw));
	}
	out[n] = '\0';
	return n;
}

void lfs_nameset_init(lfs_nameset *s)
{
	s->slots = NULL;
	s->next = NULL;
	s->cap = s->n = 0;
}

void lfs_nameset_free(lfs_nameset *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->slots[i]);
	free(s->slots);
	free(s->next);
	lfs_nameset_init(s);
}

/* Slot of @p name: the slot holding it, or the free slot where it would go. */
static size_t find_slot(char *const *slots, size_t cap, const char *name)
{
	size_t i = lfs_name_hash(name) & (cap - 1);
	while (slots[i] && strcmp(slots[i], name))
		i = (i + 1) & (cap - 1);
	return i;
}

int lfs_nameset_has(const lfs_nameset *s, const char *name)
{
	if (!s->cap)
		return 0;
	return s->slots[find_slot(s->slots, s->cap, name)] != NULL;
}

static bool grow(lfs_nameset *s)
{
	size_t ncap = s->cap ? s->cap * 2 : 16;
	char **ns = calloc(ncap, sizeof(*ns));
	unsigned long *nx = calloc(ncap, sizeof(*nx));
	if (!ns || !nx) {
		free(ns);
		free(nx);
		return false;
	}
	for (size_t i = 0; i < s->cap; i++) {
		if (s->slots[i]) {
			size_t j = find_slot(ns, ncap, s->slots[i]);
			ns[j] = s->slots[i];
			nx[j] = s->next[i];
		}
	}
	free(s->slots);
	free(s->next);
	s->slots = ns;
	s->next = nx;
	s->cap = ncap;
	return true;
}

const char *lfs_nameset_add(lfs_nameset *s, const char *raw)
{
	if ((s->n + 1) * 2 > s->cap && !grow(s))
		return NULL;
	char base[LFS_NAME_MAX_BASE + 1];
	size_t blen = lfs_name_safe(raw, base);
	char cand[LFS_NAME_MAX_BASE + 32];
	memcpy(cand, base, blen + 1);
	size_t slot = find_slot(s->slots, s->cap, cand);
	/* Duplicates: the first free "~k", k = 2, 3, ... The base's slot
	 * remembers where the previous search stopped, so n copies of one name
	 * cost O(n) in total; a set of n names blocks at most n suffixes. */
	if (s->slots[slot]) {
		size_t bslot = slot;
		unsigned long k = s->next[bslot] ? s->next[bslot] : 2;
		for (;; k++) {
			snprintf(cand, sizeof(cand), "%s~%lu", base, k);
			slot = find_slot(s->slots, s->cap, cand);
			if (!s->slots[slot])
				break;
		}
		s->next[bslot] = k + 1;
	}
	char *copy = strdup(cand);
	if (!copy)
		return NULL;
	s->slots[slot] = copy;
	s->next[slot] = 0;
	s->n++;
	return copy;
}
