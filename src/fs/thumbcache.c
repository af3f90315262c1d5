/**
 * @file thumbcache.c
 * Disk cache of thumbnails (thumbcache.h): key, file layout, atomic write,
 * validated read, least-recently-used bound.
 */
#define _GNU_SOURCE
#include "thumbcache.h"

#include "replace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <nettle/sha2.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "LFSTHUMB 1\n"
#define SUFFIX ".thumb"
#define TMP_PREFIX ".tmp-"
#define TMP_STALE_SECONDS 3600

static const uint8_t png_sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
static const uint8_t png_iend[12] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82 };

void lfs_thumbcache_key_of(const uint8_t *model, size_t n, unsigned version, unsigned edge,
			   lfs_thumbcache_key *k)
{
	struct sha256_ctx c;
	uint8_t mh[SHA256_DIGEST_SIZE];
	sha256_init(&c);
	sha256_update(&c, n, model);
	sha256_digest(&c, sizeof(mh), mh);
	char tail[64];
	int tl = snprintf(tail, sizeof(tail), "legacyfs thumbnail v%u %upx", version, edge);
	sha256_init(&c);
	sha256_update(&c, sizeof(mh), mh);
	sha256_update(&c, (size_t)tl, (const uint8_t *)tail);
	sha256_digest(&c, sizeof(k->b), k->b);
}

void lfs_thumbcache_name(const lfs_thumbcache_key *k, char *out)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < sizeof(k->b); i++) {
		out[2 * i] = hex[k->b[i] >> 4];
		out[2 * i + 1] = hex[k->b[i] & 15];
	}
	memcpy(out + 2 * sizeof(k->b), SUFFIX, sizeof(SUFFIX));
}

/* Is @p name "<64 hex>.thumb"? */
static bool is_cache_name(const char *name)
{
	for (int i = 0; i < 64; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return false;
	return strcmp(name + 64, SUFFIX) == 0;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Read "<word> <decimal>\n" at @p p (of @p n bytes); the number, or SIZE_MAX. */
static size_t header_num(const uint8_t *p, size_t n, const char *word, size_t *used)
{
	size_t wl = strlen(word), i = wl + 1, v = 0;
	if (n < wl + 3 || memcmp(p, word, wl) != 0 || p[wl] != ' ')
		return SIZE_MAX;
	for (; i < n && i < wl + 12 && p[i] >= '0' && p[i] <= '9'; i++)
		v = v * 10 + (size_t)(p[i] - '0');
	if (i == wl + 1 || i >= n || p[i] != '\n')
		return SIZE_MAX;
	*used = i + 1;
	return v;
}

/* Check the layout of cache file bytes @p b; sets the deps and PNG spans. */
static bool valid(const uint8_t *b, size_t n, unsigned edge, size_t *doff, size_t *dn,
		  size_t *poff, size_t *pn)
{
	size_t ml = sizeof(MAGIC) - 1, u = 0;
	if (n < ml || memcmp(b, MAGIC, ml) != 0)
		return false;
	size_t at = ml;
	size_t d = header_num(b + at, n - at, "deps", &u);
	if (d > LFS_THUMBCACHE_DEPS_MAX || d > n - at - u)
		return false;
	at += u;
	if (memchr(b + at, 0, d))
		return false;
	*doff = at;
	*dn = d;
	at += d;
	size_t p = header_num(b + at, n - at, "png", &u);
	if (p == SIZE_MAX || p != n - at - u)
		return false;
	at += u;
	/* PNG: signature, IHDR of edge x edge, IEND at the end */
	const uint8_t *q = b + at;
	if (p < 8 + 25 + 12 || memcmp(q, png_sig, 8) != 0 || be32(q + 8) != 13 ||
	    memcmp(q + 12, "IHDR", 4) != 0 || be32(q + 16) != edge || be32(q + 20) != edge ||
	    memcmp(q + p - 12, png_iend, 12) != 0)
		return false;
	*poff = at;
	*pn = p;
	return true;
}

int lfs_thumbcache_get(const char *dir, const lfs_thumbcache_key *k, unsigned edge, char **deps,
		       uint8_t **png, size_t *pngn)
{
	*deps = NULL;
	*png = NULL;
	*pngn = 0;
	char name[LFS_THUMBCACHE_NAME_MAX];
	lfs_thumbcache_name(k, name);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		close(dfd);
		return e == ELOOP ? EBADMSG : e;
	}
	struct stat st;
	int r = 0;
	uint8_t *b = NULL;
	size_t n = 0;
	if (fstat(fd, &st) != 0) {
		r = errno;
	} else if (!S_ISREG(st.st_mode) || st.st_size <= 0 ||
		   (uint64_t)st.st_size > LFS_THUMBCACHE_FILE_MAX) {
		r = EBADMSG;
	} else {
		n = (size_t)st.st_size;
		b = malloc(n);
		size_t got = 0;
		if (!b)
			r = ENOMEM;
		while (!r && got < n) {
			ssize_t g = read(fd, b + got, n - got);
			if (g < 0 && errno == EINTR)
				continue;
			if (g < 0)
				r = errno;
			else if (g == 0)
				r = EBADMSG; /* shorter than its stat: replaced under us, or truncated */
			else
				got += (size_t)g;
		}
	}
	close(fd);
	size_t doff = 0, dn = 0, poff = 0, pn = 0;
	if (!r && !valid(b, n, edge, &doff, &dn, &poff, &pn))
		r = EBADMSG;
	if (r == EBADMSG)
		unlinkat(dfd, name, 0); /* a later put writes a good one */
	if (!r) {
		*deps = malloc(dn + 1);
		*png = malloc(pn);
		if (!*deps || !*png) {
			free(*deps);
			free(*png);
			*deps = NULL;
			*png = NULL;
			r = ENOMEM;
		} else {
			memcpy(*deps, b + doff, dn);
			(*deps)[dn] = '\0';
			memcpy(*png, b + poff, pn);
			*pngn = pn;
			/* most recently used: mtime = now (fails quietly on a read-only folder) */
			struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_NOW } };
			utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW);
		}
	}
	free(b);
	close(dfd);
	return r;
}

/* mkdir -p @p dir, the last component mode 0700. */
static int make_dirs(const char *dir)
{
	char buf[PATH_MAX];
	size_t l = strlen(dir);
	if (l == 0 || l >= sizeof(buf))
		return ENAMETOOLONG;
	memcpy(buf, dir, l + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) != 0 && errno != EEXIST)
		return errno;
	return 0;
}

int lfs_thumbcache_put(const char *dir, size_t max_bytes, const lfs_thumbcache_key *k,
		       const char *deps, const uint8_t *png, size_t n)
{
	static atomic_ulong counter;
	size_t dn = strlen(deps);
	if (dn > LFS_THUMBCACHE_DEPS_MAX || n > LFS_THUMBCACHE_FILE_MAX - 4096)
		return EINVAL;
	int r = make_dirs(dir);
	if (r)
		return r;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno;
	char tmp[96], name[LFS_THUMBCACHE_NAME_MAX], head[64];
	snprintf(tmp, sizeof(tmp), TMP_PREFIX "%ld-%ld-%lu", (long)getpid(), (long)gettid(),
		 (unsigned long)atomic_fetch_add(&counter, 1));
	lfs_thumbcache_name(k, name);
	int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		r = errno;
		close(dfd);
		return r;
	}
	int hl = snprintf(head, sizeof(head), MAGIC "deps %zu\n", dn);
	r = lfs_write_all(fd, head, (size_t)hl);
	if (!r)
		r = lfs_write_all(fd, deps, dn);
	hl = snprintf(head, sizeof(head), "png %zu\n", n);
	if (!r)
		r = lfs_write_all(fd, head, (size_t)hl);
	if (!r)
		r = lfs_write_all(fd, png, n);
	if (close(fd) != 0 && !r)
		r = errno;
	if (!r && renameat(dfd, tmp, dfd, name) != 0)
		r = errno;
	if (r)
		unlinkat(dfd, tmp, 0);
	close(dfd);
	if (!r && max_bytes)
		lfs_thumbcache_trim(dir, max_bytes);
	return r;
}

struct cfile {
	char name[LFS_THUMBCACHE_NAME_MAX];
	int64_t mtime_ns;
	uint64_t size;
};

static int cfile_cmp(const void *a, const void *b)
{
	const struct cfile *x = a, *y = b;
	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

long lfs_thumbcache_trim(const char *dir, size_t max_bytes)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	DIR *d = fdopendir(dfd);
	if (!d) {
		int e = errno;
		close(dfd);
		return -e;
	}
	struct cfile *v = NULL;
	size_t nv = 0, cap = 0;
	uint64_t total = 0;
	long removed = 0;
	time_t now = time(NULL);
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		bool tmp = strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0;
		if (!tmp && (strlen(de->d_name) != 64 + strlen(SUFFIX) || !is_cache_name(de->d_name)))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (tmp) {
			if (now - st.st_mtime > TMP_STALE_SECONDS && unlinkat(dirfd(d), de->d_name, 0) == 0)
				removed++;
			continue;
		}
		if (nv == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct cfile *nvp = realloc(v, nc * sizeof(*v));
			if (!nvp)
				break; /* bound what we have seen */
			v = nvp;
			cap = nc;
		}
		memcpy(v[nv].name, de->d_name, strlen(de->d_name) + 1);
		v[nv].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		v[nv].size = (uint64_t)st.st_size;
		total += v[nv].size;
		nv++;
	}
	if (max_bytes && total > max_bytes) {
		qsort(v, nv, sizeof(*v), cfile_cmp);
		for (size_t i = 0; i < nv && total > max_bytes; i++) {
			if (unlinkat(dirfd(d), v[i].name, 0) == 0 || errno == ENOENT) {
				total -= v[i].size;
				removed++;
			}
		}
	}
	free(v);
	closedir(d);
	return removed;
}
