/**
 * @file replace.c
 * Atomic replacement of a source file (see replace.h).
 */
#define _GNU_SOURCE
#include "replace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_uint counter;

static int write_all(int fd, const uint8_t *p, size_t n)
{
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
	if ((err = write_all(fd, data, n)) != 0)
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
		FAIL("rename");
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
	unlinkat(dfd, tmp, 0);
	close(dfd);
	return err ? err : EIO;
#undef FAIL
}

int lfs_read_source(int rootfd, const char *rel, size_t max, uint8_t **out, size_t *n,
		    struct stat *st)
{
	*out = NULL;
	*n = 0;
	int fd = openat(rootfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno;
	if (fstat(fd, st) != 0) {
		int e = errno;
		close(fd);
		return e;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return EINVAL;
	}
	if (st->st_size < 0 || (uint64_t)st->st_size > max) {
		close(fd);
		return EFBIG;
	}
	size_t want = (size_t)st->st_size;
	uint8_t *buf = malloc(want ? want : 1);
	if (!buf) {
		close(fd);
		return ENOMEM;
	}
	size_t got = 0;
	while (got < want) {
		ssize_t r = pread(fd, buf + got, want - got, (off_t)got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got != want) {
		free(buf);
		return EAGAIN;
	}
	*out = buf;
	*n = got;
	return 0;
}
