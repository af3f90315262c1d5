/**
 * @file nwn_rename.c
 * Model name of an NWN ASCII model -> its file's resref (nwn_rename.h).
 * The statements naming the model are those of the ASCII MDL layout as the
 * game's compiler reads it (newmodel/setsupermodel/beginmodelgeom/
 * endmodelgeom/donemodel, newanim/doneanim, node/parent; docs/nwn-compile.md).
 */
#include "nwn_rename.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool nwn_resref_valid(const char *name, const char **why)
{
	size_t n = strlen(name);
	const char *w = NULL;
	if (n == 0)
		w = "an empty name";
	else if (n > NWN_RESREF_MAX)
		w = "longer than 16 characters (a resref is at most 16)";
	for (size_t i = 0; !w && i < n; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_')
			w = "a resref holds only letters, digits and '_'";
	if (why)
		*why = w;
	return w == NULL;
}

/* Which operand (1-based) of statement @p kw (@p kl bytes) names the model; 0: none. */
static int name_operand(const char *kw, size_t kl)
{
	static const struct {
		const char *kw;
		int arg;
	} t[] = { { "newmodel", 1 },  { "setsupermodel", 1 }, { "beginmodelgeom", 1 },
		  { "endmodelgeom", 1 }, { "donemodel", 1 },   { "newanim", 2 },
		  { "doneanim", 2 },  { "animroot", 1 },      { "node", 2 },
		  { "parent", 1 } };
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strlen(t[i].kw) == kl && strncasecmp(t[i].kw, kw, kl) == 0)
			return t[i].arg;
	return 0;
}

static bool is_sp(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Token @p k (0 = keyword) of line [@p p, @p e): start and length, false when absent. */
static bool token(const char *p, const char *e, int k, const char **ts, size_t *tl)
{
	for (int i = 0;; i++) {
		while (p < e && is_sp(*p))
			p++;
		if (p >= e || *p == '#')
			return false;
		const char *s = p;
		while (p < e && !is_sp(*p) && *p != '#')
			p++;
		if (i == k) {
			*ts = s;
			*tl = (size_t)(p - s);
			return true;
		}
	}
}

/* The `newmodel` name of @p text into @p old (@p oldsz bytes). */
static void find_name(const char *text, size_t n, char *old, size_t oldsz)
{
	old[0] = '\0';
	for (const char *p = text, *end = text + n; p < end;) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		if (!e)
			e = end;
		const char *ks, *ns;
		size_t kl, nl;
		if (token(p, e, 0, &ks, &kl) && kl == 8 && strncasecmp(ks, "newmodel", 8) == 0 &&
		    token(p, e, 1, &ns, &nl)) {
			if (nl < oldsz) {
				memcpy(old, ns, nl);
				old[nl] = '\0';
			}
			return;
		}
		p = e < end ? e + 1 : end;
	}
}

long nwn_text_rename(const char *text, size_t n, const char *newname, char **out, size_t *outn,
		     char *oldname, size_t oldsz)
{
	*out = NULL;
	*outn = 0;
	find_name(text, n, oldname, oldsz);
	size_t ol = strlen(oldname), nl = strlen(newname);
	if (!ol || strcmp(oldname, newname) == 0)
		return 0;
	/* Worst case: every byte a replaced token (ol >= 1). */
	size_t cap = n + (n / ol + 1) * (nl > ol ? nl - ol : 0) + 1;
	char *o = malloc(cap);
	if (!o)
		return -1;
	size_t on = 0;
	long count = 0;
	for (const char *p = text, *end = text + n; p < end;) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		e = e ? e + 1 : end;
		const char *ks, *ts;
		size_t kl, tl;
		int k = token(p, e, 0, &ks, &kl) ? name_operand(ks, kl) : 0;
		if (k && token(p, e, k, &ts, &tl) && tl == ol && strncasecmp(ts, oldname, ol) == 0) {
			memcpy(o + on, p, (size_t)(ts - p));
			on += (size_t)(ts - p);
			memcpy(o + on, newname, nl);
			on += nl;
			memcpy(o + on, ts + tl, (size_t)(e - (ts + tl)));
			on += (size_t)(e - (ts + tl));
			count++;
		} else {
			memcpy(o + on, p, (size_t)(e - p));
			on += (size_t)(e - p);
		}
		p = e;
	}
	*out = o;
	*outn = on;
	return count;
}
