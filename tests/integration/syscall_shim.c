/**
 * @file syscall_shim.c
 * Test-only LD_PRELOAD library (tests/integration/durability.sh, issue 15):
 * records the file-system calls a process makes below one folder, and fails
 * or kills the process at a chosen call, to check the atomic replace of a
 * source file (src/fs/replace.c, docs/editing.md "How a save reaches SOURCE").
 *
 * Environment (read once, at load time):
 *  - SHIM_ROOT  absolute, symlink-free folder; only calls whose path (or the
 *               path of whose file descriptor, read from /proc/self/fd) lies
 *               below it are recorded and counted. Unset: the shim is inert.
 *  - SHIM_LOG   file that receives one line per recorded call (O_APPEND,
 *               one write(2) per line, so threads do not interleave):
 *               "CALL PATH [PATH2] [flags]" then " = RESULT" or " = -ERRNO";
 *               an injected failure adds " INJECTED", a kill writes
 *               "KILL CALL PATH" first.
 *  - SHIM_EXE   optional: the shim is active only in a process whose
 *               program_invocation_short_name equals it (LD_PRELOAD is
 *               inherited by `timeout`, `mountpoint`, ...).
 *  - SHIM_FAIL  CALL:N[:ERRNO]: the Nth recorded call named CALL fails with
 *               ERRNO (a number or one of EIO ENOSPC EDQUOT EACCES EROFS;
 *               default EIO) without reaching the kernel.
 *  - SHIM_KILL  CALL:N: raise(SIGKILL) at the Nth recorded call named CALL,
 *               before it reaches the kernel.
 * CALL is the name in the log: open, openat, creat, write, pwrite, writev,
 * fsync, fdatasync, ftruncate, truncate, fchmod, fchown, rename, renameat,
 * renameat2, unlink, unlinkat, close (the *64 and __*_2 variants of glibc
 * count as their plain name). Counting is per process, across threads.
 */
/* Both the plain and the *64 names are defined here: no redirection. */
#undef _FILE_OFFSET_BITS
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum call {
	C_OPEN, C_OPENAT, C_CREAT, C_WRITE, C_PWRITE, C_WRITEV, C_FSYNC, C_FDATASYNC,
	C_FTRUNCATE, C_TRUNCATE, C_FCHMOD, C_FCHOWN, C_RENAME, C_RENAMEAT, C_RENAMEAT2,
	C_UNLINK, C_UNLINKAT, C_CLOSE, C_N
};
static const char *const names[C_N] = {
	"open", "openat", "creat", "write", "pwrite", "writev", "fsync", "fdatasync",
	"ftruncate", "truncate", "fchmod", "fchown", "rename", "renameat", "renameat2",
	"unlink", "unlinkat", "close",
};

static char root[PATH_MAX];
static size_t rootlen;
static int logfd = -1;
static int active;
static int fail_call = -1, fail_errno = EIO, kill_call = -1;
static unsigned long fail_n, kill_n;
static atomic_ulong counts[C_N];

/* The next definition of @p name (libc, or the sanitizer runtime's). */
static void *next(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (!p)
		abort();
	return p;
}

#define REAL(type, name, args) \
	static type(*real) args; \
	if (!real)             \
		real = (type(*) args)next(name)

static int call_of(const char *s, size_t n)
{
	for (int i = 0; i < C_N; i++)
		if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
			return i;
	return -1;
}

static int errno_of(const char *s)
{
	static const struct { const char *n; int e; } t[] = {
		{ "EIO", EIO }, { "ENOSPC", ENOSPC }, { "EDQUOT", EDQUOT },
		{ "EACCES", EACCES }, { "EROFS", EROFS },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(s, t[i].n) == 0)
			return t[i].e;
	int e = atoi(s);
	return e > 0 ? e : EIO;
}

/* "CALL:N[:ERRNO]" into *c, *n, *e (e may be NULL). */
static void parse_spec(const char *spec, int *c, unsigned long *n, int *e)
{
	const char *colon = spec ? strchr(spec, ':') : NULL;
	if (!colon)
		return;
	*c = call_of(spec, (size_t)(colon - spec));
	char *end;
	*n = strtoul(colon + 1, &end, 10);
	if (e && *end == ':')
		*e = errno_of(end + 1);
}

__attribute__((constructor)) static void shim_init(void)
{
	const char *r = getenv("SHIM_ROOT"), *l = getenv("SHIM_LOG"), *x = getenv("SHIM_EXE");
	if (!r || !*r || !l || !*l)
		return;
	if (x && *x && strcmp(x, program_invocation_short_name) != 0)
		return;
	rootlen = strlen(r);
	while (rootlen > 1 && r[rootlen - 1] == '/')
		rootlen--;
	if (rootlen >= sizeof(root))
		return;
	memcpy(root, r, rootlen);
	root[rootlen] = '\0';
	REAL(int, "open", (const char *, int, ...));
	logfd = real(l, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0)
		return;
	parse_spec(getenv("SHIM_FAIL"), &fail_call, &fail_n, &fail_errno);
	parse_spec(getenv("SHIM_KILL"), &kill_call, &kill_n, NULL);
	active = 1;
}

static int below_root(const char *p)
{
	return strncmp(p, root, rootlen) == 0 && (p[rootlen] == '/' || p[rootlen] == '\0');
}

/* Path of @p fd into @p out ("" when unknown). */
static void fd_path(int fd, char *out, size_t sz)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, out, sz - 1);
	out[n > 0 ? n : 0] = '\0';
}

/* Absolute path of @p p relative to @p dirfd into @p out. */
static void at_path(int dirfd, const char *p, char *out, size_t sz)
{
	char base[PATH_MAX];
	if (!p) {
		out[0] = '\0';
		return;
	}
	if (p[0] == '/') {
		snprintf(out, sz, "%s", p);
		return;
	}
	if (dirfd == AT_FDCWD) {
		if (!getcwd(base, sizeof(base)))
			base[0] = '\0';
	} else {
		fd_path(dirfd, base, sizeof(base));
	}
	snprintf(out, sz, "%s/%s", base, p);
}

/* One recorded call in progress. */
struct rec {
	int call;
	int inject;  /* errno to return instead of calling, or 0 */
	char line[2 * PATH_MAX + 128];
	size_t len;
};

/*
 * Begin recording call @p c on @p p1 (and @p p2, may be NULL): false when
 * not below SHIM_ROOT (nothing recorded). Counts it, kills or marks it for
 * injection.
 */
static int rec_begin(struct rec *r, int c, const char *p1, const char *p2, const char *extra)
{
	if (!active)
		return 0;
	if (!below_root(p1) && !(p2 && below_root(p2)))
		return 0;
	r->call = c;
	r->inject = 0;
	int n = snprintf(r->line, sizeof(r->line), "%s %s%s%s%s%s", names[c], p1, p2 ? " " : "",
			 p2 ? p2 : "", extra && *extra ? " " : "", extra ? extra : "");
	r->len = n < 0 ? 0 : (size_t)n >= sizeof(r->line) ? sizeof(r->line) - 1 : (size_t)n;
	unsigned long k = atomic_fetch_add(&counts[c], 1) + 1;
	REAL(ssize_t, "write", (int, const void *, size_t));
	if (c == kill_call && k == kill_n) {
		char kl[sizeof(r->line) + 8];
		int m = snprintf(kl, sizeof(kl), "KILL %.*s\n", (int)r->len, r->line);
		if (m > 0)
			(void)!real(logfd, kl, (size_t)m < sizeof(kl) ? (size_t)m : sizeof(kl) - 1);
		raise(SIGKILL);
	}
	if (c == fail_call && k == fail_n)
		r->inject = fail_errno;
	return 1;
}

/* End the record with result @p res (errno @p err when res < 0). */
static void rec_end(struct rec *r, long res, int err)
{
	size_t room = sizeof(r->line) - r->len;
	int n = res < 0 ? snprintf(r->line + r->len, room, " = -%s%s\n", strerrorname_np(err) ? strerrorname_np(err) : "?",
				   r->inject ? " INJECTED" : "")
			: snprintf(r->line + r->len, room, " = %ld\n", res);
	size_t len = r->len + (n < 0 ? 0 : (size_t)n >= room ? room - 1 : (size_t)n);
	REAL(ssize_t, "write", (int, const void *, size_t));
	int saved = errno;
	(void)!real(logfd, r->line, len);
	errno = saved;
}

static void flags_text(int flags, char *out, size_t sz)
{
	int acc = flags & O_ACCMODE;
	snprintf(out, sz, "%s%s%s%s%s%s", acc == O_RDONLY ? "O_RDONLY" : acc == O_WRONLY ? "O_WRONLY" : "O_RDWR",
		 flags & O_CREAT ? "|O_CREAT" : "", flags & O_EXCL ? "|O_EXCL" : "",
		 flags & O_TRUNC ? "|O_TRUNC" : "", flags & O_DIRECTORY ? "|O_DIRECTORY" : "",
		 flags & O_APPEND ? "|O_APPEND" : "");
}

/* Run @p expr (the real call) unless injected; record; return. */
#define RUN(r, rec_on, type, expr)                                   \
	do {                                                           \
		if (!(rec_on))                                          \
			return expr;                                    \
		if ((r).inject) {                                       \
			rec_end(&(r), -1, (r).inject);                  \
			errno = (r).inject;                             \
			return (type)-1;                                \
		}                                                       \
		type res_ = expr;                                       \
		int e_ = errno;                                         \
		rec_end(&(r), (long)res_, e_);                          \
		errno = e_;                                             \
		return res_;                                            \
	} while (0)

static int has_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

static int do_openat(int c, int dirfd, const char *p, int flags, mode_t mode)
{
	REAL(int, "openat", (int, const char *, int, ...));
	struct rec r;
	char path[PATH_MAX], fl[96];
	int on = 0;
	if (active) {
		at_path(dirfd, p, path, sizeof(path));
		flags_text(flags, fl, sizeof(fl));
		on = rec_begin(&r, c, path, NULL, fl);
	}
	RUN(r, on, int, real(dirfd, p, flags, mode));
}

static int do_open(int c, const char *p, int flags, mode_t mode)
{
	REAL(int, "open", (const char *, int, ...));
	struct rec r;
	char path[PATH_MAX], fl[96];
	int on = 0;
	if (active) {
		at_path(AT_FDCWD, p, path, sizeof(path));
		flags_text(flags, fl, sizeof(fl));
		on = rec_begin(&r, c, path, NULL, fl);
	}
	RUN(r, on, int, real(p, flags, mode));
}

#define OPEN_WRAPPER(fn)                                      \
	int fn(const char *p, int flags, ...)                 \
	{                                                     \
		mode_t mode = 0;                              \
		if (has_mode(flags)) {                        \
			va_list ap;                           \
			va_start(ap, flags);                  \
			mode = va_arg(ap, mode_t);            \
			va_end(ap);                           \
		}                                             \
		return do_open(C_OPEN, p, flags, mode);  \
	}
#define OPENAT_WRAPPER(fn)                                           \
	int fn(int dirfd, const char *p, int flags, ...)             \
	{                                                            \
		mode_t mode = 0;                                     \
		if (has_mode(flags)) {                               \
			va_list ap;                                  \
			va_start(ap, flags);                         \
			mode = va_arg(ap, mode_t);                   \
			va_end(ap);                                  \
		}                                                    \
		return do_openat(C_OPENAT, dirfd, p, flags, mode); \
	}
OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)

/* _FORTIFY_SOURCE variants: no mode argument. */
int __open_2(const char *p, int flags);
int __open64_2(const char *p, int flags);
int __openat_2(int dirfd, const char *p, int flags);
int __openat64_2(int dirfd, const char *p, int flags);
int __open_2(const char *p, int flags) { return do_open(C_OPEN, p, flags, 0); }
int __open64_2(const char *p, int flags) { return do_open(C_OPEN, p, flags, 0); }
int __openat_2(int dirfd, const char *p, int flags)
{
	return do_openat(C_OPENAT, dirfd, p, flags, 0);
}
int __openat64_2(int dirfd, const char *p, int flags)
{
	return do_openat(C_OPENAT, dirfd, p, flags, 0);
}

static int do_creat(const char *p, mode_t mode)
{
	REAL(int, "creat", (const char *, mode_t));
	struct rec r;
	char path[PATH_MAX];
	int on = 0;
	if (active) {
		at_path(AT_FDCWD, p, path, sizeof(path));
		on = rec_begin(&r, C_CREAT, path, NULL, NULL);
	}
	RUN(r, on, int, real(p, mode));
}
int creat(const char *p, mode_t mode) { return do_creat(p, mode); }
int creat64(const char *p, mode_t mode) { return do_creat(p, mode); }

/* Begin a record for a call on file descriptor @p fd. */
static int fd_begin(struct rec *r, int c, int fd, const char *extra)
{
	if (!active)
		return 0;
	char path[PATH_MAX];
	fd_path(fd, path, sizeof(path));
	if (!path[0])
		return 0;
	char ex[160];
	struct stat st;
	int dir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
	snprintf(ex, sizeof(ex), "%s%s%s", dir ? "dir" : "file", extra ? " " : "", extra ? extra : "");
	return rec_begin(r, c, path, NULL, ex);
}

ssize_t write(int fd, const void *b, size_t n)
{
	REAL(ssize_t, "write", (int, const void *, size_t));
	struct rec r;
	char ex[48];
	snprintf(ex, sizeof(ex), "n=%zu", n);
	int on = fd != logfd && fd > 2 && fd_begin(&r, C_WRITE, fd, ex);
	RUN(r, on, ssize_t, real(fd, b, n));
}

static ssize_t do_pwrite(int fd, const void *b, size_t n, off_t off)
{
	REAL(ssize_t, "pwrite", (int, const void *, size_t, off_t));
	struct rec r;
	char ex[64];
	snprintf(ex, sizeof(ex), "n=%zu off=%lld", n, (long long)off);
	int on = fd_begin(&r, C_PWRITE, fd, ex);
	RUN(r, on, ssize_t, real(fd, b, n, off));
}
ssize_t pwrite(int fd, const void *b, size_t n, off_t off) { return do_pwrite(fd, b, n, off); }
ssize_t pwrite64(int fd, const void *b, size_t n, off_t off) { return do_pwrite(fd, b, n, off); }

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	REAL(ssize_t, "writev", (int, const struct iovec *, int));
	struct rec r;
	int on = fd > 2 && fd != logfd && fd_begin(&r, C_WRITEV, fd, NULL);
	RUN(r, on, ssize_t, real(fd, iov, cnt));
}

#define FD_WRAPPER(fn, c)                             \
	int fn(int fd)                                \
	{                                             \
		REAL(int, #fn, (int));                \
		struct rec r;                         \
		int on = fd_begin(&r, c, fd, NULL);   \
		RUN(r, on, int, real(fd));            \
	}
FD_WRAPPER(fsync, C_FSYNC)
FD_WRAPPER(fdatasync, C_FDATASYNC)

int close(int fd)
{
	REAL(int, "close", (int));
	struct rec r;
	int on = fd != logfd && fd_begin(&r, C_CLOSE, fd, NULL);
	RUN(r, on, int, real(fd));
}

static int do_ftruncate(int fd, off_t len)
{
	REAL(int, "ftruncate", (int, off_t));
	struct rec r;
	char ex[48];
	snprintf(ex, sizeof(ex), "len=%lld", (long long)len);
	int on = fd_begin(&r, C_FTRUNCATE, fd, ex);
	RUN(r, on, int, real(fd, len));
}
int ftruncate(int fd, off_t len) { return do_ftruncate(fd, len); }
int ftruncate64(int fd, off_t len) { return do_ftruncate(fd, len); }

static int do_truncate(const char *p, off_t len)
{
	REAL(int, "truncate", (const char *, off_t));
	struct rec r;
	char path[PATH_MAX];
	int on = 0;
	if (active) {
		at_path(AT_FDCWD, p, path, sizeof(path));
		on = rec_begin(&r, C_TRUNCATE, path, NULL, NULL);
	}
	RUN(r, on, int, real(p, len));
}
int truncate(const char *p, off_t len) { return do_truncate(p, len); }
int truncate64(const char *p, off_t len) { return do_truncate(p, len); }

int fchmod(int fd, mode_t mode)
{
	REAL(int, "fchmod", (int, mode_t));
	struct rec r;
	char ex[32];
	snprintf(ex, sizeof(ex), "mode=%04o", (unsigned)mode);
	int on = fd_begin(&r, C_FCHMOD, fd, ex);
	RUN(r, on, int, real(fd, mode));
}

int fchown(int fd, uid_t u, gid_t g)
{
	REAL(int, "fchown", (int, uid_t, gid_t));
	struct rec r;
	char ex[48];
	snprintf(ex, sizeof(ex), "uid=%ld gid=%ld", (long)u, (long)g);
	int on = fd_begin(&r, C_FCHOWN, fd, ex);
	RUN(r, on, int, real(fd, u, g));
}

int rename(const char *a, const char *b)
{
	REAL(int, "rename", (const char *, const char *));
	struct rec r;
	char pa[PATH_MAX], pb[PATH_MAX];
	int on = 0;
	if (active) {
		at_path(AT_FDCWD, a, pa, sizeof(pa));
		at_path(AT_FDCWD, b, pb, sizeof(pb));
		on = rec_begin(&r, C_RENAME, pa, pb, NULL);
	}
	RUN(r, on, int, real(a, b));
}

int renameat(int da, const char *a, int db, const char *b)
{
	REAL(int, "renameat", (int, const char *, int, const char *));
	struct rec r;
	char pa[PATH_MAX], pb[PATH_MAX];
	int on = 0;
	if (active) {
		at_path(da, a, pa, sizeof(pa));
		at_path(db, b, pb, sizeof(pb));
		on = rec_begin(&r, C_RENAMEAT, pa, pb, NULL);
	}
	RUN(r, on, int, real(da, a, db, b));
}

int renameat2(int da, const char *a, int db, const char *b, unsigned fl)
{
	REAL(int, "renameat2", (int, const char *, int, const char *, unsigned));
	struct rec r;
	char pa[PATH_MAX], pb[PATH_MAX], ex[32];
	int on = 0;
	if (active) {
		at_path(da, a, pa, sizeof(pa));
		at_path(db, b, pb, sizeof(pb));
		snprintf(ex, sizeof(ex), "flags=%u", fl);
		on = rec_begin(&r, C_RENAMEAT2, pa, pb, ex);
	}
	RUN(r, on, int, real(da, a, db, b, fl));
}

int unlink(const char *p)
{
	REAL(int, "unlink", (const char *));
	struct rec r;
	char path[PATH_MAX];
	int on = 0;
	if (active) {
		at_path(AT_FDCWD, p, path, sizeof(path));
		on = rec_begin(&r, C_UNLINK, path, NULL, NULL);
	}
	RUN(r, on, int, real(p));
}

int unlinkat(int d, const char *p, int fl)
{
	REAL(int, "unlinkat", (int, const char *, int));
	struct rec r;
	char path[PATH_MAX];
	int on = 0;
	if (active) {
		at_path(d, p, path, sizeof(path));
		on = rec_begin(&r, C_UNLINKAT, path, NULL, NULL);
	}
	RUN(r, on, int, real(d, p, fl));
}
