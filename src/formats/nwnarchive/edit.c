/**
 * @file archive_edit.c
 * Edits of ERF-family archives (archive_edit.h, docs/archives.md "Writing
 * into an archive"): locate an entry by its listed name, change it through
 * the codec (erf.h), encode, and check the result decodes back to what was
 * meant with everything else unchanged.
 */
#define _GNU_SOURCE
#include "edit.h"

#include "../../common/mem.h"
#include "registry/names.h"
#include "registry/viewset.h"
#include "erf.h"
#include "restype.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool lfs_archive_entry_name(char *buf, size_t size, const char *resref, uint16_t type,
			    uint32_t idx)
{
	char ext[16];
	lfs_restype_name(type, ext, sizeof(ext));
	bool broken = !resref[0] || type == 0;
	if (broken)
		snprintf(buf, size, "broken-%u.%s", idx, ext);
	else
		snprintf(buf, size, "%s.%s", resref, ext);
	return broken;
}

lfs_archive_name_kind lfs_archive_name_class(const char *name, size_t max_len, char *resref,
					     uint16_t *type, char *why)
{
	const char *dot = strrchr(name, '.');
	if (!dot || dot == name || !dot[1])
		return LFS_ANAME_SCRATCH;
	uint16_t t = 0;
	char ext[16];
	size_t el = strlen(dot + 1);
	if (el >= sizeof(ext))
		return LFS_ANAME_SCRATCH;
	for (size_t i = 0; i <= el; i++) {
		char c = dot[1 + i];
		ext[i] = c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
	}
	if (!lfs_restype_from_ext(ext, &t) || t == 0)
		return LFS_ANAME_SCRATCH;
	size_t sl = (size_t)(dot - name);
	if (name[0] == '.' || name[0] == '#' || name[0] == '~' || memchr(name, '.', sl) != NULL)
		return LFS_ANAME_SCRATCH;
	/* Editor temp files never look like "stem.ext" with a plain stem; a
	 * plain stem that is no ResRef is an attempt at a resource: refused. */
	char stem[LFS_RESREF_MAX_NWN2 + 2];
	if (sl > max_len) {
		if (why)
			snprintf(why, 160, "ResRef '%.*s' has %zu characters; at most %zu are allowed",
				 (int)(sl > 64 ? 64 : sl), name, sl, max_len);
		return LFS_ANAME_BAD;
	}
	memcpy(stem, name, sl);
	stem[sl] = '\0';
	lfs_error e;
	memset(&e, 0, sizeof(e));
	if (lfs_resref_check(stem, max_len, &e) != LFS_OK) {
		if (why)
			snprintf(why, 160, "%.150s", e.msg);
		return LFS_ANAME_BAD;
	}
	if (resref)
		memcpy(resref, stem, sl + 1);
	if (type)
		*type = t;
	return LFS_ANAME_RESOURCE;
}

uint32_t lfs_archive_locate(const lfs_erf *a, const char *fname, bool *broken)
{
	lfs_nameset ns;
	lfs_nameset_init(&ns);
	uint32_t found = UINT32_MAX;
	for (uint32_t i = 0; i < a->n; i++) {
		char raw[64];
		bool b = lfs_archive_entry_name(raw, sizeof(raw), a->e[i].resref, a->e[i].type, i);
		const char *nm = lfs_nameset_add(&ns, raw);
		if (!nm) {
			found = UINT32_MAX - 1;
			break;
		}
		if (strcmp(nm, fname) == 0) {
			found = i;
			if (broken)
				*broken = b;
			break;
		}
	}
	lfs_nameset_free(&ns);
	return found;
}

/* The listed name of entry @p idx of @p a into @p buf (NULL: out of memory). */
static const char *listed_name(const lfs_erf *a, uint32_t idx, char *buf, size_t size)
{
	lfs_nameset ns;
	lfs_nameset_init(&ns);
	const char *nm = NULL;
	for (uint32_t i = 0; i <= idx && i < a->n; i++) {
		char raw[64];
		lfs_archive_entry_name(raw, sizeof(raw), a->e[i].resref, a->e[i].type, i);
		nm = lfs_nameset_add(&ns, raw);
		if (!nm)
			break;
	}
	if (nm)
		snprintf(buf, size, "%s", nm);
	lfs_nameset_free(&ns);
	return nm ? buf : NULL;
}

static lfs_err no_such(lfs_error *err, const char *name)
{
	return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL, "%s: no such resource in the archive",
			name);
}

/* Are the stored parts of entries @p x and @p y the same (key and payload as on disk)? */
static bool same_entry(const lfs_erf_entry *x, const lfs_erf_entry *y)
{
	return memcmp(x->resref_raw, y->resref_raw, sizeof(x->resref_raw)) == 0 &&
	       x->type == y->type && x->res_id == y->res_id && x->unused == y->unused &&
	       x->size == y->size && x->compression == y->compression && x->usize == y->usize &&
	       memcmp(x->sha1, y->sha1, sizeof(x->sha1)) == 0 &&
	       (x->size == 0 || memcmp(x->data, y->data, x->size) == 0);
}

/*
 * The archive-level round-trip law: decode @p out (@p outn bytes) and check
 * it is @p want (the edited archive in memory) entry for entry: same header
 * fields but counts and offsets, same strings, each entry's key and stored
 * payload equal. Because @p want differs from the original only in what the
 * edit changed, "nothing else changed" follows. LFS_ERR_PARSE with a
 * message naming @p what when it does not hold.
 */
static lfs_err check_result(const lfs_erf *want, const uint8_t *out, size_t outn, const char *what,
			    uint32_t edited, const uint8_t *payload, size_t pn, lfs_error *err)
{
	lfs_erf *got = NULL;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	lfs_err r = lfs_erf_decode(out, outn, &got, &e);
	if (r == LFS_ERR_NOMEM)
		return lfs_nomem(err, "archive check");
	if (r != LFS_OK)
		return lfs_fail(err, LFS_ERR_PARSE, SIZE_MAX, NULL,
				"%s: error: not saved: the new archive does not decode (%s)", what, e.msg);
	const char *bad = NULL;
	if (got->n != want->n || got->version != want->version || got->n_loc != want->n_loc)
		bad = "entry count, version or string count";
	else if (memcmp(got->header, want->header, 16) != 0 ||
		 memcmp(got->header + 32, want->header + 32, 12) != 0)
		bad = "header";
	for (uint32_t i = 0; !bad && i < got->n_loc; i++)
		if (got->loc[i].lang != want->loc[i].lang || got->loc[i].size != want->loc[i].size ||
		    memcmp(got->loc[i].text, want->loc[i].text, got->loc[i].size) != 0)
			bad = "localized strings";
	uint32_t which = 0;
	for (uint32_t i = 0; !bad && i < got->n; i++)
		if (!same_entry(&got->e[i], &want->e[i])) {
			bad = "an entry";
			which = i;
		}
	if (!bad && payload) {
		/* the edited entry reads back (decompressed, SHA-1 checked) as the new payload */
		uint8_t *back = NULL;
		size_t bn = 0;
		if (lfs_erf_read(got, edited, &back, &bn, &e) != LFS_OK || bn != pn ||
		    (pn && memcmp(back, payload, pn) != 0)) {
			bad = "payload";
			which = edited;
		}
		free(back);
	}
	lfs_erf_free(got);
	if (bad)
		return lfs_fail(err, LFS_ERR_PARSE, SIZE_MAX, NULL,
				"%s: error: not saved: the new archive reads back with a different %s "
				"(entry %u); the archive is unchanged", what, bad, which);
	return LFS_OK;
}

/* Encode @p a into *out and check it (check_result; @p payload: entry @p edited's new bytes, or NULL). */
static lfs_err finish(lfs_erf *a, const char *what, uint32_t edited, const uint8_t *payload,
		      size_t pn, uint8_t **out, size_t *outn, lfs_error *err)
{
	lfs_err r = lfs_erf_encode(a, out, outn, err);
	if (r == LFS_OK)
		r = check_result(a, *out, *outn, what, edited, payload, pn, err);
	if (r != LFS_OK) {
		free(*out);
		*out = NULL;
		*outn = 0;
	}
	return r;
}

/* A copy of @p n bytes at @p p into *out (the "nothing changed" result). */
static lfs_err copy_out(const uint8_t *p, size_t n, uint8_t **out, size_t *outn, lfs_error *err)
{
	*out = malloc(n ? n : 1);
	if (!*out)
		return lfs_nomem(err, "archive copy");
	memcpy(*out, p, n);
	*outn = n;
	return LFS_OK;
}

static lfs_err decode(const uint8_t *orig, size_t n, lfs_erf **a, lfs_error *err)
{
	lfs_error e;
	memset(&e, 0, sizeof(e));
	lfs_err r = lfs_erf_decode(orig, n, a, &e);
	if (r == LFS_ERR_NOMEM)
		return lfs_nomem(err, "archive");
	if (r != LFS_OK)
		return lfs_fail(err, LFS_ERR_CORRUPT, e.offset, NULL, "the archive does not decode: %s",
				e.msg);
	return LFS_OK;
}

/* Sibling reader of a model inside an archive: its `.mdl` resources, then the outer reader. */
struct asib {
	const lfs_erf *a;
	const lfs_siblings *outer;
};

static bool archive_sibling(void *ctx, const char *name, uint8_t **data, size_t *n)
{
	const struct asib *s = ctx;
	uint32_t i = strlen(name) <= LFS_RESREF_MAX_NWN2 ? lfs_erf_find(s->a, name, LFS_RESTYPE_MDL)
							 : UINT32_MAX;
	if (i != UINT32_MAX) {
		lfs_error e;
		memset(&e, 0, sizeof(e));
		if (lfs_erf_read(s->a, i, data, n, &e) == LFS_OK)
			return true;
	}
	return s->outer && s->outer->read && s->outer->read(s->outer->ctx, name, data, n);
}

/*
 * View @p inner of the model that is entry @p i of @p a, with @p text: the
 * model's new bytes into *np (*np NULL-free: equal to the old payload when
 * nothing changed).
 */
static lfs_err apply_inner(const lfs_erf *a, uint32_t i, const char *fname, const char *inner,
			   const lfs_view *cached, const char *text, size_t tn,
			   const lfs_siblings *sib, uint8_t **np, size_t *npn, char **reread,
			   size_t *rn, lfs_error *err)
{
	uint8_t *p = NULL;
	size_t pn = 0;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	lfs_err r = lfs_erf_read(a, i, &p, &pn, &e);
	if (r != LFS_OK)
		{
		if (r == LFS_ERR_NOMEM)
			return lfs_nomem(err, "payload");
		return lfs_fail(err, LFS_ERR_CORRUPT, SIZE_MAX, NULL, "%s: cannot be read: %s", fname,
				e.msg);
	}
	struct asib as = { a, sib };
	lfs_siblings s2 = { archive_sibling, &as, sib ? sib->warn : NULL };
	const lfs_format *f = cached ? lfs_format_for("model.mdl", p, pn) : NULL;
	if (f && cached->data) {
		/* the folder's own view of these bytes, under its path in the model */
		lfs_view iv = *cached;
		iv.path = (char *)inner;
		r = lfs_view_apply_keep(f, p, pn, &iv, text, tn, &s2, np, npn, reread, rn, err);
		free(p);
		return r;
	}
	lfs_view_opts so = { 0 };
	lfs_viewset vs;
	r = lfs_views_build("model.mdl", p, pn, &so, &vs, &e);
	if (r != LFS_OK) {
		free(p);
		if (r == LFS_ERR_NOMEM)
			return lfs_nomem(err, "views");
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: not a model this mount can save: %s", fname, e.msg);
	}
	const lfs_view *v = lfs_viewset_find(&vs, inner);
	if (!v)
		r = lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL, "%s/%s: no such view", fname,
			     inner);
	else
		r = lfs_view_apply_keep(vs.format, p, pn, v, text, tn, &s2, np, npn, reread, rn, err);
	lfs_viewset_free(&vs);
	free(p);
	return r;
}

lfs_err lfs_archive_apply(const uint8_t *orig, size_t n, const char *vpath, const char *text,
			  size_t tn, const lfs_siblings *sib, uint8_t **out, size_t *outn,
			  char **reread, size_t *rn, lfs_error *err)
{
	return lfs_archive_apply_view(orig, n, vpath, NULL, text, tn, sib, out, outn, reread, rn,
				      err);
}

lfs_err lfs_archive_apply_view(const uint8_t *orig, size_t n, const char *vpath,
			       const lfs_view *cached, const char *text, size_t tn,
			       const lfs_siblings *sib, uint8_t **out, size_t *outn, char **reread,
			       size_t *rn, lfs_error *err)
{
	*out = NULL;
	*outn = 0;
	if (reread) {
		*reread = NULL;
		*rn = 0;
	}
	lfs_erf *a = NULL;
	lfs_err r = decode(orig, n, &a, err);
	if (r != LFS_OK)
		return r;
	char fname[256];
	const char *sl = strchr(vpath, '/');
	size_t fl = sl ? (size_t)(sl - vpath) : strlen(vpath);
	if (fl >= sizeof(fname)) {
		lfs_erf_free(a);
		return no_such(err, vpath);
	}
	memcpy(fname, vpath, fl);
	fname[fl] = '\0';
	bool broken = false;
	uint32_t i = lfs_archive_locate(a, fname, &broken);
	if (i == UINT32_MAX - 1) {
		lfs_erf_free(a);
		return lfs_nomem(err, "names");
	}
	if (i == UINT32_MAX || (sl && a->e[i].type != LFS_RESTYPE_MDL)) {
		lfs_erf_free(a);
		return no_such(err, vpath);
	}
	if (broken) {
		lfs_erf_free(a);
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: a broken entry is read-only; rename it to a valid `resref.ext` "
				"first", fname);
	}
	uint8_t *np = NULL;
	size_t npn = 0;
	if (sl) {
		r = apply_inner(a, i, fname, sl + 1, cached, text, tn, sib, &np, &npn, reread, rn,
				err);
	} else {
		np = malloc(tn ? tn : 1);
		if (!np)
			r = lfs_nomem(err, "payload");
		else {
			memcpy(np, text, tn);
			npn = tn;
		}
		if (r == LFS_OK && reread && (*reread = malloc(tn ? tn : 1)) != NULL) {
			memcpy(*reread, text, tn);
			*rn = tn;
		}
	}
	if (r == LFS_OK) {
		/* The payload as it is now: an unchanged one leaves the archive's bytes alone. */
		uint8_t *cur = NULL;
		size_t cn = 0;
		lfs_error e;
		memset(&e, 0, sizeof(e));
		bool same = lfs_erf_read(a, i, &cur, &cn, &e) == LFS_OK && cn == npn &&
			    (npn == 0 || memcmp(cur, np, npn) == 0);
		free(cur);
		if (same)
			r = copy_out(orig, n, out, outn, err);
		else if ((r = lfs_erf_set(a, i, np, npn, err)) == LFS_OK)
			r = finish(a, vpath, i, np, npn, out, outn, err);
	}
	free(np);
	lfs_erf_free(a);
	if (r != LFS_OK) {
		free(*out);
		*out = NULL;
		*outn = 0;
		if (reread) {
			free(*reread);
			*reread = NULL;
			*rn = 0;
		}
	}
	return r;
}

/* Parse a resource name of archive @p a into @p resref / @p type, or fail naming the rule. */
static lfs_err parse_name(const lfs_erf *a, const char *name, char *resref, uint16_t *type,
			  lfs_error *err)
{
	char why[160];
	why[0] = '\0';
	lfs_archive_name_kind k = lfs_archive_name_class(name, a->resref_len, resref, type, why);
	if (k == LFS_ANAME_RESOURCE)
		return LFS_OK;
	if (k == LFS_ANAME_BAD)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL, "%s: not a resource name: %s",
				name, why);
	return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			"%s: not a resource name: a resource is named `resref.ext`, a ResRef of "
			"letters, digits and '_' and the extension of a resource type", name);
}

lfs_err lfs_archive_add(const uint8_t *orig, size_t n, const char *name, const uint8_t *data,
			size_t dn, uint8_t **out, size_t *outn, char *listed, lfs_error *err)
{
	*out = NULL;
	*outn = 0;
	lfs_erf *a = NULL;
	lfs_err r = decode(orig, n, &a, err);
	if (r != LFS_OK)
		return r;
	char resref[LFS_RESREF_MAX_NWN2 + 2];
	uint16_t type = 0;
	r = parse_name(a, name, resref, &type, err);
	if (r == LFS_OK)
		r = lfs_erf_add(a, resref, type, data, dn, err);
	if (r == LFS_OK && listed && !listed_name(a, a->n - 1, listed, 256))
		r = lfs_nomem(err, "names");
	if (r == LFS_OK)
		r = finish(a, name, a->n - 1, data ? data : (const uint8_t *)"", dn, out, outn, err);
	lfs_erf_free(a);
	return r;
}

lfs_err lfs_archive_remove(const uint8_t *orig, size_t n, const char *name, uint8_t **out,
			   size_t *outn, lfs_error *err)
{
	*out = NULL;
	*outn = 0;
	lfs_erf *a = NULL;
	lfs_err r = decode(orig, n, &a, err);
	if (r != LFS_OK)
		return r;
	uint32_t i = lfs_archive_locate(a, name, NULL);
	if (i == UINT32_MAX - 1)
		r = lfs_nomem(err, "names");
	else if (i == UINT32_MAX)
		r = no_such(err, name);
	if (r == LFS_OK) {
		lfs_erf_remove(a, i);
		r = finish(a, name, 0, NULL, 0, out, outn, err);
	}
	lfs_erf_free(a);
	return r;
}

lfs_err lfs_archive_rename(const uint8_t *orig, size_t n, const char *from, const char *to,
			   bool replace, uint8_t **out, size_t *outn, lfs_error *err)
{
	*out = NULL;
	*outn = 0;
	lfs_erf *a = NULL;
	lfs_err r = decode(orig, n, &a, err);
	if (r != LFS_OK)
		return r;
	char resref[LFS_RESREF_MAX_NWN2 + 2];
	uint16_t type = 0;
	uint32_t i = lfs_archive_locate(a, from, NULL);
	uint32_t j = r == LFS_OK ? lfs_archive_locate(a, to, NULL) : UINT32_MAX;
	if (i == UINT32_MAX - 1 || j == UINT32_MAX - 1)
		r = lfs_nomem(err, "names");
	else if (i == UINT32_MAX)
		r = no_such(err, from);
	else if (j != UINT32_MAX && !replace)
		r = lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL, "%s: exists", to);
	if (r == LFS_OK)
		r = parse_name(a, to, resref, &type, err);
	if (r == LFS_OK && i == j) {
		lfs_erf_free(a);
		return copy_out(orig, n, out, outn, err);
	}
	if (r == LFS_OK && j != UINT32_MAX) {
		lfs_erf_remove(a, j);
		if (j < i)
			i--;
	}
	if (r == LFS_OK)
		r = lfs_erf_rename(a, i, resref, type, err);
	if (r == LFS_OK)
		r = finish(a, to, 0, NULL, 0, out, outn, err);
	lfs_erf_free(a);
	return r;
}
