/**
 * @file archive_table.c
 * Shared decoded tables of archives (table.h): ERF tables from
 * lfs_erf_decode_fd(), KEY tables with each BIF's variable table, payloads
 * read one by one with pread.
 */
#define _GNU_SOURCE
#include "table.h"

#include "edit.h"

#include "../../common/mem.h"
#include "registry/container.h"
#include "registry/names.h"
#include "erf.h"
#include "keybif.h"
#include "restype.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Largest KEY file read whole (the retail chitin.key is under 2 MiB). */
#define KEY_FILE_MAX ((size_t)256 << 20)

struct abif {
	int fd;       /* -1: missing or undecodable */
	lfs_bif *bif; /* its variable table (read from fd) */
};

struct lfs_atable {
	/* identity */
	uint64_t dev, ino, bif_gen;
	int64_t size, mtime_ns;
	char *rel; /* where it was opened: a KEY's BIFs are found from there */
	unsigned refs;   /* users + 1 while in the shared list */
	bool listed;     /* in the shared list */
	struct lfs_atable *next;
	/* an ERF */
	int fd;
	lfs_erf *erf;
	/* a KEY */
	lfs_key *key;
	struct abif *bifs; /* key->n_bifs */
	const lfs_bif **bifv;
	/* resources */
	lfs_ares *res;
	size_t n;
	size_t *by_name; /* indices sorted by name (once named: name_all) */
	bool named;      /* every resource has its listed name */
	pthread_mutex_t name_mu;
	size_t *by_resref; /* indices sorted by ResRef ignoring case, then type */
	lfs_nameset names;
	lfs_sb problems;
	size_t bytes;
};

static pthread_mutex_t tab_mu = PTHREAD_MUTEX_INITIALIZER;
static struct lfs_atable *tabs; /* most recently used first */
static size_t ntabs, tab_bytes;

static void problem(lfs_atable *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(lfs_atable *t, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	lfs_sb_puts(&t->problems, line);
	lfs_sb_putc(&t->problems, '\n');
}

static void table_free(lfs_atable *t)
{
	if (!t)
		return;
	if (t->fd >= 0)
		close(t->fd);
	lfs_erf_free(t->erf);
	if (t->key && t->bifs) {
		for (uint32_t i = 0; i < t->key->n_bifs; i++) {
			lfs_bif_free(t->bifs[i].bif);
			if (t->bifs[i].fd >= 0)
				close(t->bifs[i].fd);
		}
	}
	free(t->bifs);
	free(t->bifv);
	lfs_key_free(t->key);
	free(t->res);
	free(t->by_name);
	free(t->by_resref);
	lfs_nameset_free(&t->names);
	pthread_mutex_destroy(&t->name_mu);
	lfs_sb_free(&t->problems);
	free(t->rel);
	free(t);
}

/*
 * Open @p path (relative to folder fd @p dfd, '/'-separated) for reading,
 * each component as written or else the one entry whose name equals it
 * ignoring case. Returns an fd or -1.
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
 * Open BIF @p path of the KEY in folder @p keydir (relative to @p rootfd;
 * "" = the root): relative to the KEY's folder, then to each folder above
 * it up to the root (archive_table.h). A regular file, or -1.
 */
static int open_bif(int rootfd, const char *keydir, const char *path)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", keydir);
	for (;;) {
		int dfd = *dir ? openat(rootfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : dup(rootfd);
		int fd = dfd >= 0 ? open_ci(dfd, path) : -1;
		if (dfd >= 0)
			close(dfd);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			return fd;
		if (fd >= 0)
			close(fd);
		if (!*dir)
			return -1;
		char *sl = strrchr(dir, '/');
		if (sl)
			*sl = '\0';
		else
			dir[0] = '\0';
	}
}

/* Name resource @p i and add it (ERF and KEY alike). */
static int add_res(lfs_atable *t, size_t *cap, const char *resref, uint16_t type, uint32_t idx,
		   uint64_t size, uint64_t stored)
{
	if (!lfs_grow((void **)&t->res, cap, t->n + 1, sizeof(*t->res)))
		return -1;
	bool broken = !resref[0] || type == 0;
	if (broken) {
		char raw[64];
		lfs_archive_entry_name(raw, sizeof(raw), resref, type, idx);
		problem(t, "entry %u: broken (%s, type %u): listed as %s", idx,
			resref[0] ? "ResRef kept" : "empty ResRef", type, raw);
	}
	lfs_ares *r = &t->res[t->n++];
	memset(r, 0, sizeof(*r));
	size_t rl = strnlen(resref, sizeof(r->resref) - 1);
	memcpy(r->resref, resref, rl);
	r->type = type;
	r->broken = broken;
	r->idx = idx;
	r->size = size;
	r->stored = stored;
	return 0; /* its listed name: when the folder is listed (name_all) */
}

static lfs_err build_erf(lfs_atable *t, lfs_error *err)
{
	lfs_err r = lfs_erf_decode_fd(t->fd, SIZE_MAX, &t->erf, err);
	if (r != LFS_OK)
		return r;
	size_t cap = 0;
	for (uint32_t i = 0; i < t->erf->n; i++) {
		const lfs_erf_entry *e = &t->erf->e[i];
		if (add_res(t, &cap, e->resref, e->type, i, e->usize, e->size) != 0)
			return lfs_nomem(err, "archive table");
	}
	return LFS_OK;
}

/* Name the sorted order of a KEY's keys: by (BIF, index), as BioWare's chitin.key is. */
static int key_present(lfs_atable *t, uint32_t i, uint64_t *size, uint64_t *stored,
		       uint32_t *absent, char *first, size_t first_sz)
{
	const lfs_bif_res *br;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	if (lfs_key_locate(t->key, i, t->bifv, &br, &e) != LFS_OK) {
		if (!(*absent)++)
			snprintf(first, first_sz, "%.200s", e.msg);
		return -1;
	}
	*size = br->usize;
	*stored = br->size;
	return 0;
}

static lfs_err build_key(lfs_atable *t, int rootfd, const char *rel, lfs_error *err)
{
	struct stat st;
	if (fstat(t->fd, &st) != 0)
		return lfs_fail(err, LFS_ERR_IO, SIZE_MAX, NULL, "%s: %s", rel, strerror(errno));
	if ((uint64_t)st.st_size > KEY_FILE_MAX)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: a KEY of %lld bytes is larger than %zu MiB", rel,
				(long long)st.st_size, KEY_FILE_MAX >> 20);
	size_t n = (size_t)st.st_size;
	uint8_t *d = malloc(n ? n : 1);
	if (!d)
		return lfs_nomem(err, "KEY");
	size_t got = 0;
	while (got < n) {
		ssize_t k = pread(t->fd, d + got, n - got, (off_t)got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	lfs_err r = got == n ? lfs_key_decode(d, n, &t->key, err)
			     : lfs_fail(err, LFS_ERR_IO, SIZE_MAX, NULL, "%s: short read", rel);
	free(d);
	if (r != LFS_OK)
		return r;
	uint32_t nb = t->key->n_bifs;
	t->bifs = calloc(nb ? nb : 1, sizeof(*t->bifs));
	t->bifv = calloc(nb ? nb : 1, sizeof(*t->bifv));
	if (!t->bifs || !t->bifv)
		return lfs_nomem(err, "BIF table");
	char keydir[PATH_MAX];
	const char *sl = strrchr(rel, '/');
	size_t dl = sl ? (size_t)(sl - rel) : 0;
	if (dl >= sizeof(keydir))
		dl = 0;
	memcpy(keydir, rel, dl);
	keydir[dl] = '\0';
	for (uint32_t b = 0; b < nb; b++) {
		t->bifs[b].fd = open_bif(rootfd, keydir, t->key->bifs[b].path);
		if (t->bifs[b].fd < 0) {
			problem(t, "%s: missing: its resources are absent", t->key->bifs[b].path);
			continue;
		}
		lfs_error e;
		memset(&e, 0, sizeof(e));
		lfs_err br = lfs_bif_read_table(t->bifs[b].fd, &t->bifs[b].bif, &e);
		if (br == LFS_ERR_NOMEM)
			return lfs_nomem(err, "BIF table");
		if (br != LFS_OK) {
			problem(t, "%s: does not decode, its resources are absent: %s",
				t->key->bifs[b].path, e.msg);
			close(t->bifs[b].fd);
			t->bifs[b].fd = -1;
			continue;
		}
		t->bifv[b] = t->bifs[b].bif;
	}
	uint32_t *absent = calloc(nb ? nb : 1, sizeof(*absent));
	char (*first)[256] = calloc(nb ? nb : 1, sizeof(*first));
	size_t cap = 0;
	lfs_err out = LFS_OK;
	if (!absent || !first)
		out = lfs_nomem(err, "KEY table");
	for (uint32_t i = 0; out == LFS_OK && i < t->key->n_res; i++) {
		const lfs_key_res *kr = &t->key->res[i];
		uint32_t b = lfs_key_bif_of(kr->res_id);
		if (b >= nb) {
			problem(t, "%s.%u: BIF index %u beyond the file table: absent", kr->resref,
				kr->type, b);
			continue;
		}
		if (!t->bifv[b])
			continue; /* reported once for the BIF */
		uint64_t size, stored;
		if (key_present(t, i, &size, &stored, &absent[b], first[b], sizeof(first[b])) != 0)
			continue;
		if (add_res(t, &cap, kr->resref, kr->type, i, size, stored) != 0)
			out = lfs_nomem(err, "KEY table");
	}
	for (uint32_t b = 0; out == LFS_OK && b < nb; b++)
		if (absent[b])
			problem(t, "%s: truncated or damaged: %u of its resources are absent (first: %s)",
				t->key->bifs[b].path, absent[b], first[b]);
	free(absent);
	free(first);
	return out;
}

static const lfs_atable *sort_t;
static pthread_mutex_t sort_mu = PTHREAD_MUTEX_INITIALIZER;
static int by_name_cmp(const void *a, const void *b)
{
	return strcmp(sort_t->res[*(const size_t *)a].name, sort_t->res[*(const size_t *)b].name);
}

static int by_resref_cmp(const void *a, const void *b)
{
	const lfs_ares *x = &sort_t->res[*(const size_t *)a], *y = &sort_t->res[*(const size_t *)b];
	int c = strcasecmp(x->resref, y->resref);
	if (!c)
		c = (int)x->type - (int)y->type;
	/* then key order: the first of equal names is the one listed plainly */
	return c ? c : (x > y) - (x < y);
}

static size_t usable(const void *p)
{
	return p ? malloc_usable_size((void *)p) + 8 : 0;
}

static lfs_err index_names(lfs_atable *t, lfs_error *err)
{
	t->by_resref = malloc((t->n ? t->n : 1) * sizeof(*t->by_resref));
	if (!t->by_resref)
		return lfs_nomem(err, "archive names");
	for (size_t i = 0; i < t->n; i++)
		t->by_resref[i] = i;
	pthread_mutex_lock(&sort_mu);
	sort_t = t;
	qsort(t->by_resref, t->n, sizeof(*t->by_resref), by_resref_cmp);
	sort_t = NULL;
	pthread_mutex_unlock(&sort_mu);
	/* what it holds: entries, indices, tables (names, once made, about 24
	 * bytes each more) */
	t->bytes = usable(t) + usable(t->res) + usable(t->by_resref) +
		   (t->erf ? usable(t->erf->e) : 0) + (t->key ? usable(t->key->res) : 0);
	for (uint32_t b = 0; t->key && b < t->key->n_bifs; b++)
		t->bytes += t->bifs[b].bif ? usable(t->bifs[b].bif->res) : 0;
	return LFS_OK;
}

bool lfs_atable_name_all(lfs_atable *t)
{
	pthread_mutex_lock(&t->name_mu);
	bool ok = t->named;
	if (!ok) {
		size_t *by = malloc((t->n ? t->n : 1) * sizeof(*by));
		ok = by != NULL;
		for (size_t i = 0; ok && i < t->n; i++) {
			lfs_ares *r = &t->res[i];
			char raw[64];
			lfs_archive_entry_name(raw, sizeof(raw), r->resref, r->type, r->idx);
			r->name = lfs_nameset_add(&t->names, raw);
			ok = r->name != NULL;
			by[i] = i;
		}
		if (ok) {
			pthread_mutex_lock(&sort_mu);
			sort_t = t;
			qsort(by, t->n, sizeof(*by), by_name_cmp);
			sort_t = NULL;
			pthread_mutex_unlock(&sort_mu);
			t->by_name = by;
			t->named = true;
		} else {
			free(by);
		}
	}
	pthread_mutex_unlock(&t->name_mu);
	return ok;
}

static void unlist_locked(lfs_atable *t)
{
	for (struct lfs_atable **pp = &tabs; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	t->listed = false;
	ntabs--;
	tab_bytes -= t->bytes;
	if (--t->refs == 0)
		table_free(t);
}

/* Keep at most LFS_ATABLE_MAX tables (tab_mu held). */
static void trim_locked(void)
{
	while (ntabs > LFS_ATABLE_MAX) {
		struct lfs_atable *last = tabs;
		while (last && last->next)
			last = last->next;
		if (!last)
			break;
		unlist_locked(last);
	}
}

/* One version of an archive file: its stat, the aux changes it depends on, its path. */
struct aversion {
	uint64_t dev, ino, bif_gen;
	int64_t size, mtime_ns;
	const char *rel;
};

static struct aversion version_of(const struct stat *st, const char *rel)
{
	return (struct aversion){ .dev = (uint64_t)st->st_dev, .ino = (uint64_t)st->st_ino,
				  .size = (int64_t)st->st_size,
				  .mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
				  .bif_gen = lfs_container_version(rel), .rel = rel };
}

static bool same_version(const lfs_atable *t, const struct aversion *k)
{
	return t->dev == k->dev && t->ino == k->ino && t->size == k->size &&
	       t->mtime_ns == k->mtime_ns && t->bif_gen == k->bif_gen && !strcmp(t->rel, k->rel);
}

lfs_err lfs_atable_get(int rootfd, const char *rel, struct stat *st, lfs_atable **out,
		       lfs_error *err)
{
	*out = NULL;
	int fd = openat(rootfd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 || fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		int e = fd < 0 ? errno : S_ISREG(st->st_mode) ? errno : EINVAL;
		if (fd >= 0)
			close(fd);
		return lfs_fail(err, LFS_ERR_IO, SIZE_MAX, NULL, "%s: %s", rel, strerror(e));
	}
	struct aversion k = version_of(st, rel);
	pthread_mutex_lock(&tab_mu);
	for (struct lfs_atable **pp = &tabs; *pp; pp = &(*pp)->next) {
		lfs_atable *t = *pp;
		if (same_version(t, &k)) {
			*pp = t->next; /* most recently used first */
			t->next = tabs;
			tabs = t;
			t->refs++;
			pthread_mutex_unlock(&tab_mu);
			close(fd);
			*out = t;
			return LFS_OK;
		}
	}
	pthread_mutex_unlock(&tab_mu);

	lfs_atable *t = calloc(1, sizeof(*t));
	if (!t) {
		close(fd);
		return lfs_nomem(err, "archive table");
	}
	t->fd = fd;
	lfs_nameset_init(&t->names);
	pthread_mutex_init(&t->name_mu, NULL);
	t->rel = strdup(rel);
	if (!t->rel) {
		table_free(t);
		return lfs_nomem(err, "archive table");
	}
	t->dev = k.dev;
	t->ino = k.ino;
	t->size = k.size;
	t->mtime_ns = k.mtime_ns;
	t->bif_gen = k.bif_gen;
	const char *base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	size_t bl = strlen(base);
	bool key = bl > 4 && strcasecmp(base + bl - 4, ".key") == 0;
	lfs_err r = key ? build_key(t, rootfd, rel, err) : build_erf(t, err);
	if (r == LFS_OK)
		r = index_names(t, err);
	if (key && t->fd >= 0) {
		close(t->fd); /* the KEY itself is read whole: only BIFs stay open */
		t->fd = -1;
	}
	if (r != LFS_OK) {
		table_free(t);
		return r;
	}
	pthread_mutex_lock(&tab_mu);
	/* another request may have decoded the same version meanwhile: use one */
	for (lfs_atable *o = tabs; o; o = o->next) {
		if (same_version(o, &k)) {
			o->refs++;
			pthread_mutex_unlock(&tab_mu);
			table_free(t);
			*out = o;
			return LFS_OK;
		}
	}
	t->refs = 2; /* the list's and the caller's */
	t->listed = true;
	t->next = tabs;
	tabs = t;
	ntabs++;
	tab_bytes += t->bytes;
	trim_locked();
	pthread_mutex_unlock(&tab_mu);
	*out = t;
	return LFS_OK;
}

void lfs_atable_put(lfs_atable *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&tab_mu);
	bool last = --t->refs == 0;
	pthread_mutex_unlock(&tab_mu);
	if (last)
		table_free(t);
}

bool lfs_atable_is_key(const lfs_atable *t)
{
	return t->key != NULL;
}

size_t lfs_atable_count(const lfs_atable *t)
{
	return t->n;
}

const lfs_ares *lfs_atable_res(const lfs_atable *t, size_t i)
{
	return i < t->n ? &t->res[i] : NULL;
}

/* The first index of by_resref whose ResRef is not below @p resref (ignoring case). */
static size_t resref_first(const lfs_atable *t, const char *resref)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcasecmp(t->res[t->by_resref[mid]].resref, resref) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Resource @p name by its ResRef and type, without the listed names: when
 * @p name is "resref.ext" as lfs_archive_entry_name() spells a resource and
 * needs neither an escape nor a "~N" suffix (names.h), its owner is the
 * first resource in key order with exactly that ResRef and type (the
 * nameset gives the first one the plain name). *sure false: cannot tell.
 */
static const lfs_ares *find_plain(const lfs_atable *t, const char *name, bool *sure)
{
	*sure = false;
	const char *dot = strrchr(name, '.');
	if (!dot || dot == name || (size_t)(dot - name) > 32 || strpbrk(name, "%~") ||
	    !strncmp(name, "broken-", 7))
		return NULL;
	uint16_t type;
	char ext[16], resref[33];
	if (!lfs_restype_from_ext(dot + 1, &type))
		return NULL;
	lfs_restype_name(type, ext, sizeof(ext));
	if (strcmp(ext, dot + 1) != 0 || type == 0)
		return NULL;
	memcpy(resref, name, (size_t)(dot - name));
	resref[dot - name] = '\0';
	*sure = true;
	/* equal ResRefs sort by type, then key order: the first exact one */
	for (size_t i = resref_first(t, resref);
	     i < t->n && !strcasecmp(t->res[t->by_resref[i]].resref, resref); i++) {
		const lfs_ares *r = &t->res[t->by_resref[i]];
		if (r->type == type && !strcmp(r->resref, resref))
			return r;
	}
	return NULL;
}

const lfs_ares *lfs_atable_find(lfs_atable *t, const char *name)
{
	bool sure;
	const lfs_ares *r = find_plain(t, name, &sure);
	if (sure || !lfs_atable_name_all(t))
		return r;
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(t->res[t->by_name[mid]].name, name);
		if (c == 0)
			return &t->res[t->by_name[mid]];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const lfs_ares *lfs_atable_find_resref(const lfs_atable *t, const char *resref,
				       const uint16_t *types, size_t ntypes)
{
	const lfs_ares *best = NULL;
	size_t rank = ntypes;
	for (size_t i = resref_first(t, resref); i < t->n && strcasecmp(t->res[t->by_resref[i]].resref, resref) == 0; i++) {
		const lfs_ares *r = &t->res[t->by_resref[i]];
		for (size_t k = 0; k < rank; k++) {
			if (r->type == types[k]) {
				best = r;
				rank = k;
				break;
			}
		}
	}
	return best;
}

lfs_err lfs_atable_read(lfs_atable *t, const lfs_ares *r, size_t max, uint8_t **out, size_t *n,
			lfs_error *err)
{
	*out = NULL;
	*n = 0;
	if (r->size > max || r->stored > max)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s (type %u): %llu bytes, larger than -o max_model_size", r->resref, r->type,
				(unsigned long long)(r->size > r->stored ? r->size : r->stored));
	if (t->erf)
		return lfs_erf_read_fd(t->erf, t->fd, r->idx, max, out, n, err);
	return lfs_key_read(t->key, r->idx, t->bifv, out, n, err);
}

/* Where resource @p r's stored bytes are: its file and offset; false when compressed. */
static bool stored_at(const lfs_atable *t, const lfs_ares *r, int *fd, uint64_t *off)
{
	if (t->erf) {
		const lfs_erf_entry *e = &t->erf->e[r->idx];
		*fd = t->fd;
		*off = e->offset;
		return e->compression == 0;
	}
	const lfs_bif_res *br;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	if (lfs_key_locate(t->key, r->idx, t->bifv, &br, &e) != LFS_OK)
		return false;
	*fd = t->bifs[lfs_key_bif_of(t->key->res[r->idx].res_id)].fd;
	*off = br->offset;
	return br->compression == 0 && !t->key->e1;
}

long lfs_atable_head(lfs_atable *t, const lfs_ares *r, uint8_t *buf, size_t want)
{
	if (want > r->size)
		want = (size_t)r->size;
	int fd;
	uint64_t off;
	if (stored_at(t, r, &fd, &off)) {
		size_t got = 0;
		while (got < want) {
			ssize_t k = pread(fd, buf + got, want - got, (off_t)(off + got));
			if (k <= 0)
				return -1;
			got += (size_t)k;
		}
		return (long)got;
	}
	uint8_t *all = NULL;
	size_t n = 0;
	lfs_error e;
	memset(&e, 0, sizeof(e));
	if (lfs_atable_read(t, r, SIZE_MAX, &all, &n, &e) != LFS_OK)
		return -1;
	if (want > n)
		want = n;
	memcpy(buf, all, want);
	free(all);
	return (long)want;
}

const char *lfs_atable_problems(const lfs_atable *t)
{
	return t->problems.data ? t->problems.data : "";
}

size_t lfs_atable_held(void)
{
	pthread_mutex_lock(&tab_mu);
	size_t b = tab_bytes;
	pthread_mutex_unlock(&tab_mu);
	return b;
}

void lfs_atable_flush(void)
{
	pthread_mutex_lock(&tab_mu);
	while (tabs)
		unlist_locked(tabs);
	pthread_mutex_unlock(&tab_mu);
}
