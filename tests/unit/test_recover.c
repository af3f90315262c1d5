/**
 * @file test_recover.c
 * Temporary files of saves (src/fs/replace.h): the name test the mount uses
 * to hide them, the names lfs_replace_file() really makes, and the
 * mount-time recovery on a scratch folder — dead writer with target:
 * removed; live writer: untouched and unreported; dead writer without
 * target, or short form: kept and reported; other names: ignored.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "corpus.h"
#include "fs/replace.h"

static void test_names(void **state)
{
	(void)state;
	long pid = -1;
	size_t tl = 99;
	assert_true(lfs_replace_is_temp_name(".x.nod.legacyfs-123-4", &pid, &tl));
	assert_int_equal(pid, 123);
	assert_int_equal(tl, 5); /* "x.nod" */
	assert_true(lfs_replace_is_temp_name(".legacyfs-7-1", &pid, &tl));
	assert_int_equal(pid, 7);
	assert_int_equal(tl, 0);
	assert_true(lfs_replace_is_temp_name("..legacyfs-1-2.legacyfs-3-4", &pid, &tl));
	assert_int_equal(pid, 3);
	/* a pid that does not fit a pid_t is reported as 0 (never "dead") */
	assert_true(lfs_replace_is_temp_name(".a.legacyfs-99999999999999999999-1", &pid, NULL));
	assert_int_equal(pid, 0);
	static const char *const no[] = {
		"x.nod.legacyfs-1-2",   /* no leading dot */
		".x.nod.legacyfs-1-",   /* no <k> */
		".x.nod.legacyfs--2",   /* no <pid> */
		".x.nod.legacyfs-1a-2", /* not digits */
		".x.nod.legacyfs-1-2b",
		".x.nod.legacyfs-1",
		".x.nodlegacyfs-1-2",   /* no dot before the tag */
		"..legacyfs-1-2",       /* empty <name> */
		".x.nod.Legacyfs-1-2",
		".x.nod",
		".",
		"",
	};
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
		if (lfs_replace_is_temp_name(no[i], NULL, NULL))
			fail_msg("taken for a temporary name: \"%s\"", no[i]);
}

/* lfs_replace_file() makes names the test accepts, and leaves none behind. */
static void test_replace_names(void **state)
{
	(void)state;
	char dir[] = "/tmp/lfs-recover-XXXXXX";
	assert_non_null(mkdtemp(dir));
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	char longname[256];
	memset(longname, 'n', 250);
	memcpy(longname + 250, ".nod", 5);
	const char *names[] = { "m.nod", longname };
	for (size_t i = 0; i < 2; i++) {
		int fd = openat(dfd, names[i], O_WRONLY | O_CREAT, 0644);
		assert_true(fd >= 0);
		close(fd);
		struct stat st, nst;
		assert_int_equal(fstatat(dfd, names[i], &st, 0), 0);
		int kept;
		assert_int_equal(lfs_replace_file(dfd, names[i], (const uint8_t *)"abc", 3, &st, &nst,
						  &kept, NULL, 0),
				 0);
		assert_int_equal(nst.st_size, 3);
	}
	DIR *d = fdopendir(dup(dfd));
	struct dirent *de;
	size_t n = 0;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.' || strlen(de->d_name) > 2)
			n++, assert_false(lfs_replace_is_temp_name(de->d_name, NULL, NULL));
	closedir(d);
	assert_int_equal(n, 2);
	unlinkat(dfd, "m.nod", 0);
	unlinkat(dfd, longname, 0);
	close(dfd);
	rmdir(dir);
}

struct seen {
	char rel[8][300];
	int what[8];
	size_t n;
};

/* every folder is on a shared file system */
static bool always_shared(int dfd)
{
	(void)dfd;
	return true;
}

static void record(void *ctx, const char *rel, lfs_recover_action what, const char *why)
{
	struct seen *s = ctx;
	assert_non_null(strstr(why, "is not running"));
	if (s->n < 8) {
		snprintf(s->rel[s->n], sizeof(s->rel[0]), "%s", rel);
		s->what[s->n++] = (int)what;
	}
}

static int seen_as(const struct seen *s, const char *rel)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->rel[i], rel))
			return s->what[i];
	return -1;
}

static void touch(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
}

static bool exists(int dfd, const char *name)
{
	struct stat st;
	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void test_recover(void **state)
{
	(void)state;
	/* a dead pid: a reaped child */
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0)
		_exit(0);
	assert_int_equal(waitpid(c, NULL, 0), c);
	long dead = (long)c, live = (long)getppid();
	char dir[] = "/tmp/lfs-recover-XXXXXX";
	assert_non_null(mkdtemp(dir));
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_int_equal(mkdirat(dfd, "sub", 0755), 0);
	char a[64], b[64], cc[64], d[64], e[64];
	snprintf(a, sizeof(a), ".m.nod.legacyfs-%ld-1", dead);
	snprintf(b, sizeof(b), "sub/.m.nod.legacyfs-%ld-2", dead);
	snprintf(cc, sizeof(cc), ".m.nod.legacyfs-%ld-3", live);
	snprintf(d, sizeof(d), ".gone.nod.legacyfs-%ld-4", dead);
	snprintf(e, sizeof(e), ".legacyfs-%ld-5", dead);
	touch(dfd, "m.nod");
	touch(dfd, "sub/m.nod");
	touch(dfd, a);
	touch(dfd, b);
	touch(dfd, cc);
	touch(dfd, d);
	touch(dfd, e);
	touch(dfd, ".m.nod.legacyfs-x-1");
	struct seen s = { 0 };
	assert_int_equal(lfs_replace_recover(dfd, 8, NULL, record, &s), 4);
	assert_false(exists(dfd, a));
	assert_false(exists(dfd, b));
	assert_true(exists(dfd, cc));
	assert_true(exists(dfd, d));
	assert_true(exists(dfd, e));
	assert_true(exists(dfd, ".m.nod.legacyfs-x-1"));
	assert_true(exists(dfd, "m.nod"));
	assert_int_equal(seen_as(&s, a), LFS_RECOVER_REMOVED);
	assert_int_equal(seen_as(&s, b), LFS_RECOVER_REMOVED);
	assert_int_equal(seen_as(&s, cc), -1);
	assert_int_equal(seen_as(&s, d), LFS_RECOVER_KEPT);
	assert_int_equal(seen_as(&s, e), LFS_RECOVER_KEPT);
	/* depth 0: the root folder only */
	touch(dfd, b);
	memset(&s, 0, sizeof(s));
	assert_int_equal(lfs_replace_recover(dfd, 0, NULL, record, &s), 2); /* d and e again */
	assert_true(exists(dfd, b));
	assert_int_equal(lfs_replace_recover(dfd, 1, NULL, NULL, NULL), 3);
	assert_false(exists(dfd, b));
	/* on a shared file system a fresh file of a pid not running here may be
	 * another machine's save in progress: kept until it is old */
	touch(dfd, a);
	memset(&s, 0, sizeof(s));
	assert_int_equal(lfs_replace_recover(dfd, 0, always_shared, record, &s), 3);
	assert_true(exists(dfd, a));
	assert_int_equal(seen_as(&s, a), LFS_RECOVER_KEPT);
	struct timespec old[2] = { { .tv_sec = time(NULL) - LFS_RECOVER_SHARED_AGE - 5 },
				   { .tv_sec = time(NULL) - LFS_RECOVER_SHARED_AGE - 5 } };
	assert_int_equal(utimensat(dfd, a, old, 0), 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(lfs_replace_recover(dfd, 0, always_shared, record, &s), 3);
	assert_false(exists(dfd, a));
	assert_int_equal(seen_as(&s, a), LFS_RECOVER_REMOVED);
	const char *rm[] = { cc, d, e, ".m.nod.legacyfs-x-1", "m.nod", "sub/m.nod" };
	for (size_t i = 0; i < sizeof(rm) / sizeof(*rm); i++)
		unlinkat(dfd, rm[i], 0);
	unlinkat(dfd, "sub", AT_REMOVEDIR);
	close(dfd);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_replace_names),
		cmocka_unit_test(test_recover),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
