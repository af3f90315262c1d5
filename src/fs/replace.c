/**
 * @file replace.c
 * Atomic replacement of a source file (see replace.h).
 */
#define _GNU_SOURCE
#include "replace.h"
#include "registry/container.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_uint counter;

int lfs_write_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (w == 0)
			return EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* fsync of folder @p dfd; the test hook LFS_TEST_FAIL_DIRSYNC=<errno> makes it fail (replace.h). */
static int dir_fsync(int dfd)
{
	const char *hook = getenv("LFS_TEST_FAIL_DIRSYNC");
	if (hook && atoi(hook) > 0)
		return atoi(hook);
	if (fsync(dfd) != 0 && errno != EINVAL)
		return errno;
	return 0;
}

int lfs_replace_file(int rootfd, const char *rel, const uint8_t *data, size_t n,
		     const struct stat *orig, struct stat *newst, int *owner_kept,
		     char *what, size_t whatsz)
{
	int dsync = 0;
	int r = lfs_replace_file_ex(rootfd, rel, data, n, orig, newst, owner_kept, &dsync, what, whatsz);
	return r ? r : dsync;
}

int lfs_replace_file_ex(int rootfd, const char *rel, const uint8_t *data, size_t n,
			const struct stat *orig, struct stat *newst, int *owner_kept, int *dirsync_err,
			char *what, size_t whatsz)
{
	*dirsync_err = 0;
	char dir[PATH_MAX], tmp[NAME_MAX + 1];
	const char *base = strrchr(rel, '/');
	if (owner_kept)
		*owner_kept = 1;
	if (base) {
		size_t dl = (size_t)(base - rel);
		if (dl >= sizeof(dir))
			return ENAMETOOLONG;
		memcpy(dir, rel, dl);
		dir[dl] = '\0';
		base++;
	} else {
		strcpy(dir, ".");
		base = rel;
	}
	unsigned k = atomic_fetch_add(&counter, 1) + 1;
	if ((size_t)snprintf(tmp, sizeof(tmp), ".%s.legacyfs-%ld-%u", base, (long)getpid(), k) >= sizeof(tmp) &&
	    (size_t)snprintf(tmp, sizeof(tmp), ".legacyfs-%ld-%u", (long)getpid(), k) >= sizeof(tmp))
		return ENAMETOOLONG;
#define FAIL(step)                                                            \
	do {                                                                  \
		if (what)                                                     \
			snprintf(what, whatsz, "%s %s", step, tmp);           \
		goto fail;                                                    \
	} while (0)
	int err = 0, fd = -1;
	int dfd = openat(rootfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		err = errno;
		if (what)
			snprintf(what, whatsz, "open folder %s", dir);
		return err;
	}
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		err = errno;
		if (what)
			snprintf(what, whatsz, "create %s", tmp);
		close(dfd);
		return err;
	}
	if ((err = lfs_write_all(fd, data, n)) != 0)
		FAIL("write");
	struct stat tst;
	if (fstat(fd, &tst) != 0) {
		err = errno;
		FAIL("fstat");
	}
	if (tst.st_uid != orig->st_uid || tst.st_gid != orig->st_gid) {
		if (fchown(fd, orig->st_uid, orig->st_gid) != 0) {
			if (errno != EPERM) {
				err = errno;
				FAIL("chown");
			}
			if (owner_kept)
				*owner_kept = 0;
		}
	}
	if (fchmod(fd, orig->st_mode & 07777) != 0) {
		err = errno;
		FAIL("chmod");
	}
	if (fsync(fd) != 0) {
		err = errno;
		FAIL("fsync");
	}
	if (close(fd) != 0) {
		fd = -1;
		err = errno;
		FAIL("close");
	}
	fd = -1;
	if (renameat(dfd, tmp, dfd, base) != 0) {
		err = errno;
		/* Said plainly: on a network share the server may refuse to replace
		 * a file (SMB: another program holds it open; no POSIX rename over
		 * SFTP without the posix-rename extension). Nothing is written in
		 * place of an atomic replace: the temporary file goes (below). */
		bool refused = err == EXDEV || err == EPERM || err == EACCES || err == EBUSY ||
			       err == ETXTBSY || err == ENOSYS || err == EOPNOTSUPP || err == EEXIST;
		if (what && refused)
			snprintf(what, whatsz, "rename %s: the file system refuses to replace %s by "
				 "renaming (needed for an atomic save; it is untouched)", tmp, base);
		else if (what)
			snprintf(what, whatsz, "rename %s", tmp);
		goto fail;
	}
	/* The new name is in place: a failing folder fsync is reported apart
	 * (saved, but not confirmed durable). */
	*dirsync_err = dir_fsync(dfd);
	if (*dirsync_err && what)
		snprintf(what, whatsz, "fsync folder %s", dir);
	if (newst && fstatat(dfd, base, newst, AT_SYMLINK_NOFOLLOW) != 0 && !err)
		err = errno;
	close(dfd);
	return err;
fail:
	if (fd >= 0)
		close(fd);
	/* A network file system may fail this too (connection lost): the
	 * mount-time recovery removes what is left (lfs_replace_recover()). */
	unlinkat(dfd, tmp, 0);
	close(dfd);
	return err ? err : EIO;
#undef FAIL
}

/*
 * Read open regular file @p fd whole as of its fstat @p st: *out, *n. 0;
 * EAGAIN when the bytes are not that version's (fewer than st_size, more
 * past it: a size a network file system cached is older than the bytes it
 * serves; or a second fstat differs); ENOMEM; errno of pread/fstat.
 */
static int read_version(int fd, const struct stat *st, uint8_t **out, size_t *n)
{
	size_t want = (size_t)st->st_size;
	uint8_t *buf = malloc(want + 1);
	if (!buf)
		return ENOMEM;
	size_t got = 0;
	while (got <= want) { /* one byte past st_size: must be EOF */
		ssize_t r = pread(fd, buf + got, want + 1 - got, (off_t)got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			return e;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	struct stat st2;
	int e = fstat(fd, &st2) != 0 ? errno : 0;
	if (!e && (got != want || st2.st_size != st->st_size || st2.st_ino != st->st_ino ||
		   st2.st_mtim.tv_sec != st->st_mtim.tv_sec || st2.st_mtim.tv_nsec != st->st_mtim.tv_nsec))
		e = EAGAIN;
	if (e) {
		free(buf);
		return e;
	}
	*out = buf;
	*n = got;
	return 0;
}

int lfs_read_source(int rootfd, const char *rel, size_t max, uint8_t **out, size_t *n,
		    struct stat *st)
{
	*out = NULL;
	*n = 0;
	int fd = openat(rootfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && errno == ENOTDIR) { /* a resource inside an archive: its payload */
		int mr = lfs_container_member_read(rootfd, rel, max, out, n, st, NULL);
		return mr == ENOENT ? ENOTDIR : mr;
	}
	if (fd < 0)
		return errno;
	int e = 0;
	/* A version changing under the read (a writer; a stale size): read again, twice at most. */
	for (int attempt = 0; attempt < 3; attempt++) {
		if (fstat(fd, st) != 0) {
			e = errno;
			break;
		}
		if (!S_ISREG(st->st_mode)) {
			e = EINVAL;
			break;
		}
		if (st->st_size < 0 || (uint64_t)st->st_size > max) {
			e = EFBIG;
			break;
		}
		e = read_version(fd, st, out, n);
		if (e != EAGAIN)
			break;
	}
	close(fd);
	return e;
}

/* Decimal digits [p, e): true and *v when non-empty and all digits (saturating). */
static bool digits(const char *p, const char *e, unsigned long long *v)
{
	if (p >= e)
		return false;
	unsigned long long x = 0;
	for (; p < e; p++) {
		if (*p < '0' || *p > '9')
			return false;
		x = x > (ULLONG_MAX - 9) / 10 ? ULLONG_MAX : x * 10 + (unsigned)(*p - '0');
	}
	*v = x;
	return true;
}

bool lfs_replace_is_temp_name(const char *name, long *pid, size_t *target_len)
{
	static const char tag[] = ".legacyfs-";
	const size_t tl = sizeof(tag) - 1;
	if (name[0] != '.')
		return false;
	size_t len = strlen(name);
	/* <k>: digits at the end, then '-', then <pid> digits, then the tag */
	const char *e = name + len, *k = e;
	while (k > name && k[-1] >= '0' && k[-1] <= '9')
		k--;
	if (k == e || k == name || k[-1] != '-')
		return false;
	const char *pe = k - 1, *ps = pe;
	while (ps > name && ps[-1] >= '0' && ps[-1] <= '9')
		ps--;
	unsigned long long pv, kv;
	if (!digits(ps, pe, &pv) || !digits(k, e, &kv))
		return false;
	if ((size_t)(ps - name) < tl || memcmp(ps - tl, tag, tl) != 0)
		return false;
	const char *t = ps - tl; /* the tag's '.' */
	size_t tlen;
	if (t == name)
		tlen = 0; /* short form ".legacyfs-P-K" */
	else if (t - name >= 2)
		tlen = (size_t)(t - name) - 1; /* ".<name>" before the tag */
	else
		return false;
	if (pid)
		*pid = pv > (unsigned long long)INT32_MAX ? 0 : (long)pv;
	if (target_len)
		*target_len = tlen;
	return true;
}

/* Is process @p pid running (or unknown: treated as running)? */
static bool pid_alive(long pid)
{
	if (pid <= 0)
		return true; /* not a pid we could have written: never ours to remove */
	if (pid == (long)getpid())
		return false;
	return !(kill((pid_t)pid, 0) != 0 && errno == ESRCH);
}

/* One temporary file @p name in folder @p dfd (@p rel its path from the root). */
static size_t recover_one(int dfd, const char *rel, const char *name, long pid, size_t tlen,
			  lfs_recover_shared_fn shared, lfs_recover_fn fn, void *ctx)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || pid_alive(pid))
		return 0;
	char why[NAME_MAX + 160];
	/* On a share other machines mount, <pid> may be another machine's
	 * process: a recent file may be its save in progress. */
	time_t now = time(NULL);
	if (shared && now - st.st_mtime < LFS_RECOVER_SHARED_AGE && now >= st.st_mtime - 60 &&
	    shared(dfd)) {
		snprintf(why, sizeof(why),
			 "writer %ld is not running here, but the file is on a network file system and "
			 "was written %lds ago: it may be another machine's save in progress, kept",
			 pid, (long)(now - st.st_mtime));
		goto keep;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, sizeof(why), "writer %ld is not running; not a regular file, kept", pid);
		goto keep;
	}
	if (st.st_uid != geteuid()) {
		snprintf(why, sizeof(why),
			 "writer %ld is not running; owned by uid %ld, not by this mount, kept", pid,
			 (long)st.st_uid);
		goto keep;
	}
	if (!tlen) {
		snprintf(why, sizeof(why),
			 "writer %ld is not running; its target is unknown (short name), kept", pid);
		goto keep;
	}
	char target[NAME_MAX + 1];
	memcpy(target, name + 1, tlen);
	target[tlen] = '\0';
	struct stat tst;
	if (fstatat(dfd, target, &tst, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(tst.st_mode)) {
		snprintf(why, sizeof(why),
			 "writer %ld is not running; its target %s is missing, kept (it may be the "
			 "only copy)", pid, target);
		goto keep;
	}
	if (unlinkat(dfd, name, 0) != 0) {
		snprintf(why, sizeof(why), "writer %ld is not running; cannot remove it: %s, kept",
			 pid, strerror(errno));
		goto keep;
	}
	snprintf(why, sizeof(why),
		 "writer %ld is not running; an unfinished save of %s (never renamed into place), "
		 "removed", pid, target);
	if (fn)
		fn(ctx, rel, LFS_RECOVER_REMOVED, why);
	return 1;
keep:
	if (fn)
		fn(ctx, rel, LFS_RECOVER_KEPT, why);
	return 1;
}

/* Scan folder @p dfd (closed here), path @p path (len @p pl, "" = root). */
static size_t recover_dir(int dfd, char *path, size_t pl, unsigned depth,
			  lfs_recover_shared_fn shared, lfs_recover_fn fn, void *ctx)
{
	DIR *dp = fdopendir(dfd);
	if (!dp) {
		close(dfd);
		return 0;
	}
	size_t found = 0;
	struct dirent *de;
	while ((de = readdir(dp)) != NULL) {
		const char *nm = de->d_name;
		if (!strcmp(nm, ".") || !strcmp(nm, ".."))
			continue;
		size_t nl = strlen(nm);
		if (pl + (pl ? 1 : 0) + nl + 1 > PATH_MAX)
			continue;
		size_t np = pl;
		if (pl)
			path[np++] = '/';
		memcpy(path + np, nm, nl + 1);
		long pid;
		size_t tlen;
		unsigned char type = de->d_type;
		if (type == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(dirfd(dp), nm, &st, AT_SYMLINK_NOFOLLOW) == 0)
				type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		}
		if (type == DT_DIR) {
			if (depth > 0) {
				int cfd = openat(dirfd(dp), nm,
						 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (cfd >= 0)
					found += recover_dir(cfd, path, np + nl, depth - 1, shared, fn,
							     ctx);
			}
		} else if (lfs_replace_is_temp_name(nm, &pid, &tlen)) {
			found += recover_one(dirfd(dp), path, nm, pid, tlen, shared, fn, ctx);
		}
		path[pl] = '\0';
	}
	closedir(dp);
	return found;
}

size_t lfs_replace_recover(int rootfd, unsigned max_depth, lfs_recover_shared_fn shared,
			   lfs_recover_fn fn, void *ctx)
{
	int dfd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	char *path = malloc(PATH_MAX);
	if (!path) {
		close(dfd);
		return 0;
	}
	path[0] = '\0';
	size_t n = recover_dir(dfd, path, 0, max_depth, shared, fn, ctx);
	free(path);
	return n;
}
