/**
 * @file fs_archive.c
 * NWN resource archives (ERF family, KEY/BIF) as folders of their
 * resources: detection by header and the build of an archive's folder
 * (fs_archive.h, docs/archives.md). Nothing here writes: edits go through
 * archive_edit.c.
 */
#define _GNU_SOURCE
#include "fs_archive.h"

#include "archive_edit.h"
#include "replace.h"

#include "../common/mem.h"
#include "../formats/erf.h"
#include "../formats/keybif.h"
#include "../formats/restype.h"
#include "../views/names.h"
#include "../views/vlist.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const archive_exts[] = { ".erf", ".hak", ".mod", ".sav", ".nwm", ".key", NULL };

bool lfs_archive_candidate(const char *name)
{
	size_t ln = strlen(name);
	for (size_t i = 0; archive_exts[i]; i++) {
		size_t le = strlen(archive_exts[i]);
		if (ln > le && strcasecmp(name + ln - le, archive_exts[i]) == 0)
			return true;
	}
	return false;
}

bool lfs_archive_key_name(const char *name)
{
	size_t ln = strlen(name);
	return ln > 4 && strcasecmp(name + ln - 4, ".key") == 0;
}

bool lfs_archive_erf_name(const char *name)
{
	return lfs_archive_candidate(name) && !lfs_archive_key_name(name);
}

/* Header test (BioWare "Encapsulated Resource File Format" header; "Key and
 * BIF File Formats" §2.2; neverwinter.nim's E1 tags). */
static bool header_ok(const uint8_t *d, size_t n, bool key)
{
	if (key)
		return n >= 64 && (memcmp(d, "KEY V1  ", 8) == 0 || memcmp(d, "KEY E1  ", 8) == 0);
	if (n < LFS_ERF_HEADER)
		return false;
	static const char *const types[] = { "ERF ", "HAK ", "MOD ", "SAV ", "NWM " };
	static const char *const vers[] = { "V1.0", "V1.1", "E1.0" };
	bool t = false, v = false;
	for (size_t i = 0; i < 5; i++)
		t |= memcmp(d, types[i], 4) == 0;
	for (size_t i = 0; i < 3; i++)
		v |= memcmp(d + 4, vers[i], 4) == 0;
	return t && v;
}

static bool archive_detect_bytes(const uint8_t *data, size_t n)
{
	return header_ok(data, n, false) || header_ok(data, n, true);
}

const lfs_format *lfs_archive_detect(const char *name, const uint8_t *data, size_t n)
{
	if (!lfs_archive_candidate(name))
		return NULL;
	return header_ok(data, n, lfs_archive_key_name(name)) ? &lfs_archive_format : NULL;
}

/* A texture resource of the archive (for map_Kd of the models inside). */
struct atex {
	char resref[33]; /* as stored */
	unsigned rank;   /* 0 tga, 1 dds, 2 plt: the order of lfs_texture_lookup_fn */
	const char *fname;
};

/* A `.mdl` resource whose folder is built once every name is known. */
struct amodel {
	const char *fname;
	uint8_t *data;
	size_t n;
};

/* One archive folder being built. */
struct abuild {
	lfs_vlist l;
	lfs_nameset names;
	const lfs_view_opts *opts;
	lfs_sb *problems;
	const char *arch; /* the archive's base name, for messages */
	bool writable;    /* an ERF: resources and models' views can be saved (archive_edit.h) */
	struct atex *tex;
	size_t ntex, tex_cap;
	struct amodel *mdl;
	size_t nmdl, mdl_cap;
	const char *want; /* lfs_archive_model_bytes(): the model folder wanted, nothing listed */
	uint8_t *got;     /* its payload (malloc'd) */
	size_t gotn;
	lfs_archive_res *res; /* a KEY's texture payloads (want mode) */
	size_t nres, res_cap;
};

static void problem(struct abuild *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct abuild *b, const char *fmt, ...)
{
	if (!b->problems)
		return;
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	lfs_sb_puts(b->problems, line);
	lfs_sb_putc(b->problems, '\n');
}

/*
 * The file name of resource @p resref / @p type (index @p idx in its
 * archive): "resref.ext" (restype.h; `type<N>` for a type outside the
 * table), made safe and unique in the folder (names.h: a repeated name gets
 * "~N"). A broken entry (empty ResRef, or type 0) is named
 * "broken-<idx>.<ext>" ('-' never occurs in a valid ResRef) and reported.
 */
static const char *resource_name(struct abuild *b, const char *resref, uint16_t type, uint32_t idx)
{
	char raw[64];
	if (lfs_archive_entry_name(raw, sizeof(raw), resref, type, idx))
		problem(b, "entry %u: broken (%s, type %u): listed as %s", idx,
			resref[0] ? "ResRef kept" : "empty ResRef", type, raw);
	return lfs_nameset_add(&b->names, raw);
}

/* Rank of a texture type in the lookup order (tga, dds, plt), or -1. */
static int tex_rank(uint16_t type)
{
	return type == LFS_RESTYPE_TGA ? 0 : type == LFS_RESTYPE_DDS ? 1 : type == 6 ? 2 : -1;
}

/*
 * lfs_texture_lookup_fn of a model inside the archive (@p ctx: the build):
 * a texture resource of the same archive whose ResRef equals @p resref
 * ignoring case (tga, then dds, then plt), as "../<its name>" (the model's
 * folder is inside the archive's); else the lookup the archive itself was
 * given (loose files beside the archive and above), one level further up.
 */
static bool tex_lookup(void *ctx, const char *resref, char *out, size_t outsz)
{
	struct abuild *b = ctx;
	const struct atex *best = NULL;
	for (size_t i = 0; i < b->ntex; i++)
		if (strcasecmp(b->tex[i].resref, resref) == 0 && (!best || b->tex[i].rank < best->rank))
			best = &b->tex[i];
	if (best)
		return snprintf(out, outsz, "../%s", best->fname) < (int)outsz;
	char up[PATH_MAX];
	if (!b->opts || !b->opts->texture_lookup ||
	    !b->opts->texture_lookup(b->opts->texture_ctx, resref, up, sizeof(up)))
		return false;
	return snprintf(out, outsz, "../%s", up) < (int)outsz;
}

/*
 * Add resource @p fname with payload @p p (@p n bytes; NULL with
 * names_only when not read). A `.mdl` payload that the registry detects as
 * a model is kept (copied) for build_models(); anything else is a plain
 * read-only file, and a texture is remembered for tex_lookup().
 */
static void add_resource(struct abuild *b, const char *resref, const char *fname, uint16_t type,
			 const uint8_t *p, size_t n)
{
	if (b->want) {
		/* lfs_archive_model_bytes(): only the wanted model's payload */
		if (type == LFS_RESTYPE_MDL && p && n && !b->got && strcmp(fname, b->want) == 0 &&
		    lfs_format_for("model.mdl", p, n)) {
			b->got = malloc(n);
			if (!b->got) {
				b->l.failed = 1;
				return;
			}
			memcpy(b->got, p, n);
			b->gotn = n;
		}
		/* a KEY's textures, whose entries texture.h cannot read alone */
		if (tex_rank(type) >= 0 && p && n && resref[0] && lfs_archive_key_name(b->arch)) {
			uint8_t *c = malloc(n);
			if (!c || !lfs_grow((void **)&b->res, &b->res_cap, b->nres + 1, sizeof(*b->res))) {
				free(c);
				b->l.failed = 1;
				return;
			}
			memcpy(c, p, n);
			lfs_archive_res *t = &b->res[b->nres++];
			snprintf(t->resref, sizeof(t->resref), "%s", resref);
			t->type = type;
			t->data = c;
			t->n = n;
		}
		return;
	}
	if (type == LFS_RESTYPE_MDL && p && n && lfs_format_for("model.mdl", p, n)) {
		uint8_t *c = malloc(n);
		if (!c || !lfs_grow((void **)&b->mdl, &b->mdl_cap, b->nmdl + 1, sizeof(*b->mdl))) {
			free(c);
			b->l.failed = 1;
			return;
		}
		memcpy(c, p, n);
		b->mdl[b->nmdl++] = (struct amodel){ fname, c, n };
		return;
	}
	int rank = tex_rank(type);
	if (rank >= 0 && resref[0]) {
		if (!lfs_grow((void **)&b->tex, &b->tex_cap, b->ntex + 1, sizeof(*b->tex))) {
			b->l.failed = 1;
			return;
		}
		struct atex *t = &b->tex[b->ntex++];
		snprintf(t->resref, sizeof(t->resref), "%s", resref);
		t->rank = (unsigned)rank;
		t->fname = fname;
	}
	lfs_sb sb = { 0 };
	if (p && n && !b->l.names_only)
		lfs_sb_put(&sb, p, n);
	lfs_vlist_add(&b->l, fname, LFS_VIEW_RESOURCE, LFS_VIEW_WHOLE,
		      b->writable && resref[0] && type != 0, &sb);
}

/*
 * Model @p m as the folder "<fname>/" of its views, built from its bytes as
 * a loose model file's (read-only here; map_Kd through tex_lookup()); a
 * model that does not decode, or passes -o model_memory, as a plain file
 * (reported). With opts->thumb_lazy (the mount) its thumbnail.png is listed
 * when the model has drawable triangles, without bytes (size 0): the mount
 * draws it when asked for (fs_thumb.c, lfs_archive_model_bytes()). Without
 * thumb_lazy there is no thumbnail (the archive's own textures are not at
 * hand here for an eager render).
 */
static void build_model(struct abuild *b, const struct amodel *m)
{
	bool lazy = b->opts && b->opts->thumb_lazy && b->opts->thumb_size;
	lfs_view_opts so = { .view_budget = b->opts ? b->opts->view_budget : 0,
			     .names_only = b->opts && b->opts->names_only,
			     .texture_lookup = tex_lookup,
			     .texture_ctx = b,
			     .thumb_size = lazy ? b->opts->thumb_size : 0,
			     .thumb_lazy = lazy };
	lfs_viewset sub;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	lfs_err r = lfs_views_build("model.mdl", m->data, m->n, &so, &sub, &e);
	if (r == LFS_OK && !sub.over_budget) {
		char path[PATH_MAX];
		for (size_t i = 0; i < sub.n_views && !b->l.failed; i++) {
			lfs_view *v = &sub.views[i];
			snprintf(path, sizeof(path), "%s/%s", m->fname, v->path);
			lfs_sb sb = { 0 };
			if (v->size && v->data)
				lfs_sb_put(&sb, v->data, v->size);
			lfs_vlist_add(&b->l, path, v->kind, v->target, b->writable && v->writable,
				      &sb);
		}
		lfs_viewset_free(&sub);
		return;
	}
	if (r == LFS_OK) {
		lfs_viewset_free(&sub);
		problem(b, "%s: model views over -o model_memory: listed as a plain file", m->fname);
	} else if (r == LFS_ERR_NOMEM) {
		b->l.failed = 1;
		return;
	} else {
		problem(b, "%s: looks like a model but does not decode, listed as a plain file: %s",
			m->fname, e.msg);
	}
	lfs_sb sb = { 0 };
	if (!b->l.names_only)
		lfs_sb_put(&sb, m->data, m->n);
	lfs_vlist_add(&b->l, m->fname, LFS_VIEW_RESOURCE, LFS_VIEW_WHOLE, b->writable, &sb);
}

static lfs_err build_erf(struct abuild *b, const uint8_t *data, size_t n, lfs_error *err)
{
	lfs_erf *a = NULL;
	lfs_err r = lfs_erf_decode(data, n, &a, err);
	if (r != LFS_OK)
		return r;
	b->writable = true;
	for (uint32_t i = 0; i < a->n && !b->l.failed; i++) {
		const lfs_erf_entry *en = &a->e[i];
		const char *fname = resource_name(b, en->resref, en->type, i);
		if (!fname) {
			b->l.failed = 1;
			break;
		}
		/* A model's folder needs its bytes even for a listing (its views'
		 * names); an E1 payload is read (decompressed, SHA-1 checked) so that
		 * a listing leaves out what the full build leaves out. A V1 payload's
		 * bounds were checked by the decoder: its read cannot fail. */
		bool need = !b->l.names_only || en->type == LFS_RESTYPE_MDL ||
			    a->version == LFS_ERF_E10;
		uint8_t *p = NULL;
		size_t pn = 0;
		if (need) {
			lfs_error e;
			memset(&e, 0, sizeof(e));
			lfs_err rr = lfs_erf_read(a, i, &p, &pn, &e);
			if (rr == LFS_ERR_NOMEM) {
				b->l.failed = 1;
				break;
			}
			if (rr != LFS_OK) {
				problem(b, "%s (entry %u): cannot be read, left out: %s", fname, i, e.msg);
				continue;
			}
		}
		add_resource(b, en->resref, fname, en->type, p, pn);
		free(p);
	}
	lfs_erf_free(a);
	return LFS_OK;
}

/*
 * Open @p path (relative to folder fd @p dfd, '/'-separated) for reading,
 * each component as written or else the one entry whose name equals it
 * ignoring case (the game's own lookup is case-insensitive:
 * docs/archives.md). Returns an fd or -1.
 */
static int open_ci(int dfd, const char *path)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -1;
	int cur = dup(dfd);
	char *save = NULL;
	char *comp = strtok_r(buf, "/", &save);
	while (cur >= 0 && comp) {
		char *next = strtok_r(NULL, "/", &save);
		if (!strcmp(comp, ".") || !strcmp(comp, "..") || !*comp) {
			close(cur);
			return -1;
		}
		int fl = (next ? O_DIRECTORY : 0) | O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
		int fd = openat(cur, comp, fl);
		if (fd < 0 && errno == ENOENT) {
			int d2 = dup(cur);
			DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
			if (!d && d2 >= 0)
				close(d2);
			struct dirent *de;
			while (d && (de = readdir(d)) != NULL) {
				if (strcasecmp(de->d_name, comp) == 0) {
					fd = openat(cur, de->d_name, fl);
					break;
				}
			}
			if (d)
				closedir(d);
		}
		close(cur);
		cur = fd;
		comp = next;
	}
	return cur;
}

/*
 * Open BIF @p path (relative to @p dirfd / @p dir) for reading: a regular
 * file found by open_ci(); -1 with *why set ("missing", …).
 */
static int read_bif(int dirfd, const char *dir, const char *path, const char **why)
{
	int dfd = *dir ? openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : dup(dirfd);
	if (dfd < 0) {
		*why = strerror(errno);
		return -1;
	}
	int fd = open_ci(dfd, path);
	close(dfd);
	if (fd < 0) {
		*why = "missing";
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		*why = "not a regular file";
		return -1;
	}
	return fd;
}

/* A key and its BIF index: build_key() reads the keys BIF by BIF. */
struct keyref {
	uint32_t bif, i;
};

static int keyref_cmp(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;
	if (x->bif != y->bif)
		return x->bif < y->bif ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * Add key @p i of @p k, whose BIF is bifs[its index] (open), to the folder:
 * its payload pread when needed (build_erf's rule: always, but with
 * names_only only a `.mdl` payload, or any in an E1 key so that a listing
 * leaves out what the full build leaves out); a V1 payload not read is
 * still located and bounds-checked. A resource over @p max bytes (stored
 * or uncompressed) is left out and reported; one that cannot be read is
 * counted in *absent (*first: the first message).
 */
static void key_resource(struct abuild *b, const lfs_key *k, uint32_t i, const lfs_bif *const *bifs,
			 size_t max, uint32_t *absent, char *first, size_t first_sz)
{
	const lfs_key_res *kr = &k->res[i];
	const lfs_bif_res *br;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	lfs_err rr = lfs_key_locate(k, i, bifs, &br, &e);
	uint8_t *p = NULL;
	size_t pn = 0;
	if (rr == LFS_OK && (br->size > max || br->usize > max)) {
		problem(b, "%s (type %u): %u bytes, larger than -o max_model_size: left out",
			kr->resref, kr->type, br->size > br->usize ? br->size : br->usize);
		return;
	}
	bool need = !b->l.names_only || kr->type == LFS_RESTYPE_MDL || k->e1;
	if (rr == LFS_OK && need)
		rr = lfs_key_read(k, i, bifs, &p, &pn, &e);
	if (rr == LFS_ERR_NOMEM) {
		b->l.failed = 1;
		return;
	}
	if (rr != LFS_OK) {
		if (!(*absent)++)
			snprintf(first, first_sz, "%s", e.msg);
		return;
	}
	const char *fname = resource_name(b, kr->resref, kr->type, i);
	if (!fname)
		b->l.failed = 1;
	else
		add_resource(b, kr->resref, fname, kr->type, p, pn);
	free(p);
}

/*
 * The folder of KEY @p data (@p n bytes) in folder @p dir: the resources of
 * every BIF it names, BIF by BIF (each opened once, its table read, the
 * payloads it needs pread, closed): no BIF is held whole, whatever its
 * size (the folder still keeps the payloads it shows, see lfs_vlist). A
 * missing, undecodable or truncated BIF is reported once; a
 * resource larger than @p max_res (-o max_model_size) is left out.
 */
static lfs_err build_key(struct abuild *b, int dirfd, const char *dir, size_t max_res,
			 const uint8_t *data, size_t n, lfs_error *err)
{
	lfs_key *k = NULL;
	lfs_err r = lfs_key_decode(data, n, &k, err);
	if (r != LFS_OK)
		return r;
	const lfs_bif **bifs = calloc(k->n_bifs ? k->n_bifs : 1, sizeof(*bifs));
	struct keyref *ord = calloc(k->n_res ? k->n_res : 1, sizeof(*ord));
	if (!bifs || !ord) {
		r = lfs_nomem(err, "BIF table");
		goto out;
	}
	for (uint32_t i = 0; i < k->n_res; i++)
		ord[i] = (struct keyref){ lfs_key_bif_of(k->res[i].res_id), i };
	qsort(ord, k->n_res, sizeof(*ord), keyref_cmp);
	uint32_t j = 0;
	for (uint32_t bi = 0; bi < k->n_bifs && !b->l.failed; bi++) {
		uint32_t end = j;
		while (end < k->n_res && ord[end].bif == bi)
			end++;
		const char *path = k->bifs[bi].path, *why = NULL;
		int fd = read_bif(dirfd, dir, path, &why);
		if (fd < 0) {
			problem(b, "%s: %s: its resources are absent", path, why);
			j = end;
			continue;
		}
		lfs_bif *bif = NULL;
		lfs_error e;
		memset(&e, 0, sizeof(e));
		lfs_err br = lfs_bif_read_table(fd, &bif, &e);
		if (br == LFS_ERR_NOMEM) {
			b->l.failed = 1;
		} else if (br != LFS_OK) {
			problem(b, "%s: does not decode, its resources are absent: %s", path, e.msg);
		} else {
			uint32_t absent = 0;
			char first[sizeof(e.msg)] = "";
			bifs[bi] = bif;
			for (; j < end && !b->l.failed; j++)
				key_resource(b, k, ord[j].i, bifs, max_res, &absent, first, sizeof(first));
			bifs[bi] = NULL;
			if (absent)
				problem(b, "%s: truncated or damaged: %u of its resources are absent "
					"(first: %s)", path, absent, first);
		}
		lfs_bif_free(bif);
		close(fd);
		j = end;
	}
	for (; j < k->n_res && !b->l.failed; j++) {
		const lfs_key_res *kr = &k->res[ord[j].i];
		problem(b, "%s.%u: BIF index %u beyond the file table: absent", kr->resref, kr->type,
			ord[j].bif);
	}
	r = LFS_OK;
out:
	free(bifs);
	free(ord);
	lfs_key_free(k);
	return r;
}

lfs_err lfs_archive_build(int dirfd, const char *dir, const char *name, const uint8_t *data,
			  size_t n, size_t max_bif, const lfs_view_opts *opts, lfs_viewset *vs,
			  lfs_sb *problems, lfs_error *err)
{
	memset(vs, 0, sizeof(*vs));
	struct abuild b;
	memset(&b, 0, sizeof(b));
	lfs_nameset_init(&b.names);
	b.opts = opts;
	b.problems = problems;
	b.arch = name;
	b.l.names_only = opts && opts->names_only;
	lfs_err r = lfs_archive_key_name(name) ? build_key(&b, dirfd, dir, max_bif, data, n, err)
				      : build_erf(&b, data, n, err);
	for (size_t i = 0; i < b.nmdl; i++) {
		if (r == LFS_OK && !b.l.failed)
			build_model(&b, &b.mdl[i]);
		free(b.mdl[i].data);
	}
	free(b.mdl);
	free(b.tex);
	lfs_nameset_free(&b.names);
	if (r == LFS_OK && b.l.failed)
		r = lfs_nomem(err, "archive folder");
	if (r != LFS_OK) {
		lfs_vlist_discard(&b.l);
		return r;
	}
	lfs_vlist_finish(&b.l, vs);
	vs->format = &lfs_archive_format;
	for (size_t i = 0; i < vs->n_views && !vs->writable; i++)
		vs->writable = vs->views[i].writable;
	vs->names_only = opts && opts->names_only;
	return LFS_OK;
}

lfs_err lfs_archive_model_bytes(int dirfd, const char *dir, const char *name, const uint8_t *data,
				size_t n, size_t max_bif, const char *model, uint8_t **out, size_t *outn,
				lfs_archive_res **tex, size_t *ntex, lfs_error *err)
{
	*out = NULL;
	*outn = 0;
	*tex = NULL;
	*ntex = 0;
	struct abuild b;
	memset(&b, 0, sizeof(b));
	lfs_nameset_init(&b.names);
	b.arch = name;
	b.want = model;
	b.l.names_only = true; /* an ERF reads its MDL payloads alone */
	lfs_err r = lfs_archive_key_name(name) ? build_key(&b, dirfd, dir, max_bif, data, n, err)
				      : build_erf(&b, data, n, err);
	lfs_nameset_free(&b.names);
	lfs_vlist_discard(&b.l);
	if (r == LFS_OK && b.l.failed)
		r = lfs_nomem(err, "archive model");
	if (r == LFS_OK && !b.got)
		r = lfs_fail(err, LFS_ERR_NOTFORMAT, SIZE_MAX, NULL, "%s: no model %s inside", name, model);
	if (r != LFS_OK) {
		free(b.got);
		lfs_archive_res_free(b.res, b.nres);
		return r;
	}
	*out = b.got;
	*outn = b.gotn;
	*tex = b.res;
	*ntex = b.nres;
	return LFS_OK;
}

void lfs_archive_res_free(lfs_archive_res *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].data);
	free(v);
}

/* KEY file @p name in folder @p dfd, decoded (at most @p max bytes); NULL when not. */
static lfs_key *key_open(int dfd, const char *name, size_t max)
{
	uint8_t *d = NULL;
	size_t n = 0;
	struct stat st;
	lfs_key *k = NULL;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	if (lfs_read_source(dfd, name, max, &d, &n, &st) == 0 && lfs_key_decode(d, n, &k, &e) != LFS_OK)
		k = NULL;
	free(d);
	return k;
}

bool lfs_archive_key_each(int dfd, const char *name, size_t max, lfs_archive_key_fn fn, void *ctx)
{
	lfs_key *k = key_open(dfd, name, max);
	if (!k)
		return false;
	bool *present = calloc(k->n_bifs ? k->n_bifs : 1, sizeof(*present));
	for (uint32_t i = 0; present && i < k->n_bifs; i++) {
		const char *why = NULL;
		int fd = read_bif(dfd, "", k->bifs[i].path, &why);
		present[i] = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	for (uint32_t i = 0; present && i < k->n_res; i++) {
		uint32_t b = lfs_key_bif_of(k->res[i].res_id);
		if (b < k->n_bifs && present[b] && k->res[i].resref[0] && k->res[i].type)
			fn(ctx, k->res[i].resref, k->res[i].type);
	}
	bool ok = present != NULL;
	free(present);
	lfs_key_free(k);
	return ok;
}

bool lfs_archive_key_read(int dfd, const char *name, const char *resref, uint16_t type,
			  size_t max, uint8_t **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	lfs_key *k = key_open(dfd, name, max < ((size_t)64 << 20) ? (size_t)64 << 20 : max);
	if (!k)
		return false;
	uint32_t i = 0;
	while (i < k->n_res && (k->res[i].type != type || strcasecmp(k->res[i].resref, resref) != 0))
		i++;
	uint32_t b = i < k->n_res ? lfs_key_bif_of(k->res[i].res_id) : UINT32_MAX;
	const char *why = NULL;
	int fd = b < k->n_bifs ? read_bif(dfd, "", k->bifs[b].path, &why) : -1;
	const lfs_bif **bifs = fd >= 0 ? calloc(k->n_bifs, sizeof(*bifs)) : NULL;
	lfs_bif *bif = NULL;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	bool ok = bifs && lfs_bif_read_table(fd, &bif, &e) == LFS_OK;
	const lfs_bif_res *br = NULL;
	if (ok) {
		bifs[b] = bif;
		ok = lfs_key_locate(k, i, bifs, &br, &e) == LFS_OK && br->size <= max &&
		     br->usize <= max && lfs_key_read(k, i, bifs, out, n, &e) == LFS_OK;
	}
	lfs_bif_free(bif);
	free(bifs);
	if (fd >= 0)
		close(fd);
	lfs_key_free(k);
	return ok;
}

/* build_views of the row: an ERF from its bytes (a KEY has no BIFs here). */
static lfs_err row_build(const uint8_t *data, size_t n, const lfs_view_opts *opts,
			 struct lfs_vlist *l, lfs_error *err)
{
	(void)data;
	(void)n;
	(void)opts;
	(void)l;
	return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
			"archives are built by lfs_archive_build() (src/fs/fs_archive.c)");
}

static lfs_err row_decode(const uint8_t *data, size_t n, void **model, lfs_error *err)
{
	lfs_erf *a = NULL;
	lfs_err r = lfs_erf_decode(data, n, &a, err);
	*model = a;
	return r;
}

static lfs_err row_encode(const void *model, uint8_t **out, size_t *n, lfs_error *err)
{
	return lfs_erf_encode(model, out, n, err);
}

/* apply of the row: an edited resource or view of a model inside an ERF (archive_edit.h). */
static lfs_err row_apply(const uint8_t *orig, size_t n, const lfs_view *v, const char *text,
			 size_t tn, const lfs_siblings *sib, uint8_t **out, size_t *outn,
			 lfs_error *err)
{
	return lfs_archive_apply_view(orig, n, v->path, v, text, tn, sib, out, outn, NULL, NULL, err);
}

static void row_free(void *model)
{
	lfs_erf_free(model);
}

const lfs_format lfs_archive_format = {
	.name = "nwn-archive",
	.extensions = archive_exts,
	.detect = archive_detect_bytes,
	.decode = row_decode,
	.encode = row_encode,
	.free_model = row_free,
	.build_views = row_build,
	.apply = row_apply,
};
