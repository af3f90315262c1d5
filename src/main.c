/**
 * @file main.c
 * `legacyfs [options] SOURCE MOUNTPOINT`: options, session setup, the loop.
 *
 * Option handling follows libfuse's passthrough_ll: our own -o options go
 * through a fuse_opt table (lfs_opts), then fuse_parse_cmdline() takes the
 * standard ones (-f, -d, -s, -h, -V, -o clone_fd, -o max_threads=...), then
 * fuse_parse_conn_info_opts() the connection ones (-o max_read=,
 * -o readdirplus=...), and fuse_session_new() the mount options. Every
 * option is documented in docs/mount.md and in --help.
 */
#define _GNU_SOURCE
#include "fs/texture.h"
#include "fuse_ll.h"
#include "views/thumb.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "lfs_config.h"

struct lfs_options {
	double timeout;
	unsigned cache_mb;
	unsigned cache_entries;
	unsigned max_model_mb;
	int list_classify;    /* candidates a listing classifies by header, at most */
	unsigned model_memory_mb;
	int nowatch;
	int mt;
	int kernel_open;
	double follow_cpu_ms; /* loop/threads: re-read the requester's CPU this often; 0 = off */
	unsigned slice_us;    /* loop/threads: EEVDF slice of request threads; 0 = kernel's */
	unsigned poll_us;     /* loop: a thread polls /dev/fuse this long after a request; 0 = off */
	int ro; /* "-o ro" seen (also passed on to the kernel) */
	double unlink_grace;
	unsigned edit_mb;
	unsigned thumb_size;
	char *thumb_cache;        /* -o thumb_cache=DIR ("off" = none) */
	int nothumb_cache;
	unsigned thumb_cache_mb;
	char *respath;            /* -o respath=DIR[:DIR...]: texture folders after SOURCE */
	char *source;
};

#define LFS_OPT(t, p, v) { t, offsetof(struct lfs_options, p), v }

static const struct fuse_opt lfs_opts[] = {
	LFS_OPT("timeout=%lf", timeout, 0),
	LFS_OPT("cache_size=%u", cache_mb, 0),
	LFS_OPT("cache_entries=%u", cache_entries, 0),
	LFS_OPT("max_model_size=%u", max_model_mb, 0),
	LFS_OPT("list_classify=%d", list_classify, 0),
	LFS_OPT("model_memory=%u", model_memory_mb, 0),
	LFS_OPT("nowatch", nowatch, 1),
	LFS_OPT("watch", nowatch, 0),
	LFS_OPT("mt", mt, 1),
	LFS_OPT("st", mt, 0),
	LFS_OPT("kernel_open", kernel_open, 1),
	LFS_OPT("zero_open", kernel_open, 0),
	LFS_OPT("follow_cpu=%lf", follow_cpu_ms, 0),
	LFS_OPT("request_slice=%u", slice_us, 0),
	LFS_OPT("poll_us=%u", poll_us, 0),
	LFS_OPT("unlink_grace=%lf", unlink_grace, 0),
	LFS_OPT("edit_size=%u", edit_mb, 0),
	LFS_OPT("thumb_size=%u", thumb_size, 0),
	LFS_OPT("thumb_cache=%s", thumb_cache, 0),
	LFS_OPT("nothumb_cache", nothumb_cache, 1),
	LFS_OPT("thumb_cache_size=%u", thumb_cache_mb, 0),
	LFS_OPT("respath=%s", respath, 0),
	LFS_OPT("ro", ro, 1),
	FUSE_OPT_KEY("ro", FUSE_OPT_KEY_KEEP),
	FUSE_OPT_END
};

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	(void)outargs;
	struct lfs_options *o = data;
	if (key == FUSE_OPT_KEY_NONOPT && !o->source) {
		o->source = strdup(arg);
		return 0; /* consumed: fuse_parse_cmdline sees only MOUNTPOINT */
	}
	return 1;
}

static void usage(const char *prog)
{
	printf("usage: %s [options] SOURCE MOUNTPOINT\n\n"
	       "Mounts SOURCE at MOUNTPOINT. Every binary model X.mdl/.nod/.nad/.nil/.sod\n"
	       "in SOURCE appears as a folder X/ of generated text views; saving a view\n"
	       "re-encodes the model (NIL and some views are read-only); every\n"
	       "other file passes through read-write. Files that look like models but\n"
	       "do not decode pass through and are listed in MOUNTPOINT/.legacyfs/errors.\n"
	       "See docs/mount.md and docs/editing.md. Add -o ro for a read-only mount.\n\n", prog);
	printf("legacyfs options:\n"
	       "    -o timeout=SECONDS     kernel cache time of names and attributes\n"
	       "                           (default 86400 with the watcher, 1 without)\n"
	       "    -o nowatch             do not watch SOURCE with inotify\n"
	       "    -o cache_size=MIB      bound of the in-memory view cache (default 256)\n"
	       "    -o cache_entries=N     bound of cached files (default 200000)\n"
	       "    -o max_model_size=MIB  never decode larger files (default 256)\n"
	       "    -o list_classify=N     a folder listing reads the headers of at most N\n"
	       "                           candidate model files (default 256); the others\n"
	       "                           show their type when looked up (0 = none)\n"
	       "    -o model_memory=MIB    memory the views of one model may take (default 256;\n"
	       "                           0 = no bound); a model over it shows only README.txt\n"
	       "    -o mt / -o st          multi-threaded loop (default; see -o max_threads,\n"
	       "                           -o clone_fd) / single thread (also -s)\n"
	       "    -o kernel_open         answer OPEN/OPENDIR (default: zero-message open)\n"
	       "    -o follow_cpu=MS       serve each request on the CPU of the process that\n"
	       "                           sent it, re-reading that CPU every MS ms (default 0 =\n"
	       "                           off, the scheduler places the threads; 5 helps on a\n"
	       "                           busy machine, hurts on an idle one)\n"
	       "    -o poll_us=US          after a request, one thread polls /dev/fuse US us\n"
	       "                           before it sleeps, yielding to other work (default\n"
	       "                           200; 0 = libfuse's loop; not with -o st, clone_fd)\n"
	       "    -o unlink_grace=SEC    a deleted view stays absent this long (default 1)\n"
	       "    -o edit_size=MIB       bound of in-memory edits and scratch files (default 512)\n"
	       "    -o thumb_size=N        thumbnail.png edge: 128, 256 (default), 512, 1024; 0 = none\n"
	       "    -o thumb_cache=DIR     disk cache of thumbnails, shared by mounts (default\n"
	       "                           $XDG_CACHE_HOME/legacyfs, else ~/.cache/legacyfs)\n"
	       "    -o nothumb_cache       no disk cache of thumbnails (also thumb_cache=off)\n"
	       "    -o thumb_cache_size=MIB  bound of that folder (default 64; 0 = no bound)\n"
	       "    -o respath=DIR[:DIR...]  folders outside SOURCE where textures are looked for\n"
	       "                           after SOURCE (model.mtl names them by absolute path)\n\n");
}

/*
 * "-odefault_permissions,fsname=SOURCE": kernel permission checks on the
 * modes we report, and SOURCE in /proc/mounts (',' and '\\' escaped for
 * fuse_opt). The mount is read-write; "-o ro" from the user still works.
 */
static char *mount_opts(const char *source)
{
	static const char head[] = "-odefault_permissions,fsname=";
	size_t n = strlen(source);
	char *s = malloc(sizeof(head) + 2 * n);
	if (!s)
		return NULL;
	char *p = stpcpy(s, head);
	for (size_t i = 0; i < n; i++) {
		if (source[i] == ',' || source[i] == '\\')
			*p++ = '\\';
		*p++ = source[i];
	}
	*p = '\0';
	return s;
}

/*
 * The folder of the thumbnail disk cache (malloc'd, absolute), or NULL for
 * none: -o thumb_cache=DIR (relative to the current folder), "off" or
 * -o nothumb_cache, else $XDG_CACHE_HOME/legacyfs (an absolute
 * XDG_CACHE_HOME, XDG Base Directory Specification), else
 * $HOME/.cache/legacyfs.
 */
static char *thumb_cache_dir(const struct lfs_options *o)
{
	char *d = NULL;
	if (o->nothumb_cache || (o->thumb_cache && (!*o->thumb_cache || !strcmp(o->thumb_cache, "off"))))
		return NULL;
	if (o->thumb_cache) {
		char cwd[PATH_MAX];
		if (o->thumb_cache[0] == '/')
			return strdup(o->thumb_cache);
		if (!getcwd(cwd, sizeof(cwd)) || asprintf(&d, "%s/%s", cwd, o->thumb_cache) < 0)
			return NULL;
		return d;
	}
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	if (x && x[0] == '/') {
		if (asprintf(&d, "%s/legacyfs", x) < 0)
			return NULL;
	} else if (h && h[0] == '/') {
		if (asprintf(&d, "%s/.cache/legacyfs", h) < 0)
			return NULL;
	}
	return d;
}

static void log_to_fuse(int level, const char *msg)
{
	fuse_log((enum fuse_log_level)level, "legacyfs: %s\n", msg);
}

__attribute__((format(printf, 2, 0)))
static void log_to_syslog(enum fuse_log_level level, const char *fmt, va_list ap)
{
	vsyslog((int)level, fmt, ap);
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct lfs_options o = { .timeout = -1, .cache_mb = 256, .cache_entries = 200000,
				 .max_model_mb = 256, .list_classify = 256, .model_memory_mb = 256, .thumb_size = 256, .thumb_cache_mb = 64,
				 .mt = 1, .follow_cpu_ms = 0, .poll_us = 200 };
	char *tcache = NULL;
	struct fuse_cmdline_opts opts = { 0 };
	struct fuse_session *se = NULL;
	lfs_fs *fs = NULL;
	lfs_ll ll = { 0 };
	int ret = 1;

	if (fuse_opt_parse(&args, &o, lfs_opts, opt_proc) != 0)
		return 1;
	if (fuse_parse_cmdline(&args, &opts) != 0)
		goto out;
	if (o.thumb_size && !lfs_thumb_size_ok(o.thumb_size)) {
		fprintf(stderr, "legacyfs: -o thumb_size=%u: use 128, 256, 512, 1024 or 0\n", o.thumb_size);
		goto out;
	}
	if (opts.show_help) {
		usage(argv[0]);
		printf("FUSE options:\n");
		fuse_cmdline_help();
		fuse_lowlevel_help();
		ret = 0;
		goto out;
	}
	if (opts.show_version) {
		printf("legacyfs %s\n", LFS_VERSION);
		printf("FUSE library version %s\n", fuse_pkgversion());
		fuse_lowlevel_version();
		ret = 0;
		goto out;
	}
	if (!o.source || !opts.mountpoint) {
		fprintf(stderr, "usage: %s [options] SOURCE MOUNTPOINT\n"
				"       %s --help\n", argv[0], argv[0]);
		goto out;
	}
	struct stat st;
	if (stat(o.source, &st) != 0) {
		fprintf(stderr, "legacyfs: %s: %s\n", o.source, strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "legacyfs: %s: SOURCE must be a folder\n", o.source);
		goto out;
	}
	/*
	 * A mountpoint inside SOURCE would make legacyfs stat its own mount while
	 * answering a request for it: a deadlock. Refuse it.
	 */
	char *rs = realpath(o.source, NULL), *rm = realpath(opts.mountpoint, NULL);
	bool inside = false;
	if (rs && rm) {
		size_t l = strlen(rs);
		inside = strncmp(rm, rs, l) == 0 && (rm[l] == '/' || rm[l] == '\0' || l == 1);
	}
	free(rs);
	free(rm);
	if (inside) {
		fprintf(stderr, "legacyfs: MOUNTPOINT %s must not be inside SOURCE %s\n",
			opts.mountpoint, o.source);
		goto out;
	}
	if (o.list_classify < 0) {
		fprintf(stderr, "legacyfs: -o list_classify=%d: must be 0 or more\n", o.list_classify);
		goto out;
	}
	if (o.respath) {
		/* made absolute now: the daemon later runs from "/" */
		int e = lfs_texture_set_respath(o.respath);
		if (e) {
			fprintf(stderr, "legacyfs: -o respath=%s: %s\n", o.respath,
				e == ENOTDIR ? "every entry must be a folder" : strerror(e));
			goto out;
		}
	}
	if (o.timeout < 0)
		o.timeout = o.nowatch ? 1.0 : 86400.0;

	ll.conn_opts = fuse_parse_conn_info_opts(&args);
	if (!ll.conn_opts)
		goto out;
	/*
	 * Kernel permission checks on the modes we report (writes included), and
	 * a useful fsname in /proc/mounts.
	 */
	char *oarg = mount_opts(o.source);
	if (!oarg || fuse_opt_add_arg(&args, oarg) != 0) {
		free(oarg);
		goto out;
	}
	free(oarg);

	/*
	 * Objects created through the mount get the caller's mode & ~umask (the
	 * kernel sends the caller's umask with CREATE/MKNOD/MKDIR; src/fs applies
	 * it): the daemon's own umask must not mask them again (docs/posix.md).
	 * The fs layer gives every file it makes for itself an explicit mode.
	 */
	umask(0);

	lfs_fs_opts fo = {
		.timeout = o.timeout,
		.cache_bytes = (size_t)o.cache_mb << 20,
		.cache_entries = o.cache_entries,
		.max_model_size = (size_t)o.max_model_mb << 20,
		.list_classify = (unsigned)o.list_classify,
		.model_memory = o.model_memory_mb ? (size_t)o.model_memory_mb << 20 : SIZE_MAX,
		.watch = !o.nowatch,
		.debug = opts.debug,
		.unlink_grace = o.unlink_grace,
		.edit_bytes = (size_t)o.edit_mb << 20,
		.thumb_size = o.thumb_size,
		.log = log_to_fuse,
	};
	tcache = o.thumb_size ? thumb_cache_dir(&o) : NULL;
	fo.thumb_cache = tcache;
	fo.thumb_cache_bytes = (size_t)o.thumb_cache_mb << 20;
	int r = lfs_fs_new(o.source, &fo, &fs);
	if (r)
		goto out;
	ll.fs = fs;
	ll.zero_open = !o.kernel_open;
	ll.read_only = o.ro;
	if (o.follow_cpu_ms > 0)
		ll.follow_ns = (uint64_t)(o.follow_cpu_ms * 1e6);
	ll.slice_ns = (uint64_t)o.slice_us * 1000;

	se = fuse_session_new(&args, lfs_ll_ops(), sizeof(struct fuse_lowlevel_ops), &ll);
	if (!se)
		goto out;
	ll.se = se;
	if (fuse_set_signal_handlers(se) != 0)
		goto out_session;
	if (fuse_session_mount(se, opts.mountpoint) != 0)
		goto out_signals;
	if (!opts.foreground) {
		/* stderr goes to /dev/null once daemonized: log to syslog instead. */
		openlog("legacyfs", LOG_PID, LOG_DAEMON);
		fuse_set_log_func(log_to_syslog);
	}
	fuse_daemonize(opts.foreground);

	/* After daemonize: fork() would not carry the watcher thread along. */
	lfs_fs_notify nt;
	lfs_ll_notify(&ll, &nt);
	r = lfs_fs_watch_start(fs, &nt);
	if (r)
		fuse_log(FUSE_LOG_WARNING, "legacyfs: watcher not started: %s\n", strerror(r));

	/*
	 * Multi-threaded by default: a model being built (seconds for a big one)
	 * then holds up only the requests that need that model, and concurrent
	 * saves of different models overlap; the single-threaded loop is ~20%
	 * faster only for warm small-file reads (docs/performance.md "Threads").
	 * -s or -o st: single thread. -o poll_us (default 200): our own
	 * multi-threaded loop where the latest thread to serve a request polls
	 * the fd a while before it sleeps (lfs_ll_loop, docs/performance.md
	 * "Read-write grep"); -o poll_us=0 or -o clone_fd: libfuse's loop.
	 */
	if (o.mt && !opts.singlethread && o.poll_us && !opts.clone_fd) {
		/* our own loop: one thread polls after a request (fuse_ll.h lfs_ll_loop) */
		fuse_log(FUSE_LOG_INFO, "legacyfs: multi-threaded loop, at most %u threads, "
			 "polling %u us after a request\n", opts.max_threads, o.poll_us);
		ret = lfs_ll_loop(&ll, opts.max_threads, opts.max_idle_threads, o.poll_us) < 0;
	} else if (o.mt && !opts.singlethread) {
		struct fuse_loop_config *cfg = fuse_loop_cfg_create();
		if (!cfg) {
			ret = 1;
		} else {
			fuse_loop_cfg_set_clone_fd(cfg, (unsigned)opts.clone_fd);
			/* fuse_parse_cmdline() leaves max_idle_threads at UINT_MAX ("not
			 * given"); libfuse 3.14 logs "Ignoring invalid max threads value
			 * 4294967295" when that is passed on, so pass only what was given. */
			if (opts.max_idle_threads != UINT_MAX)
				fuse_loop_cfg_set_idle_threads(cfg, opts.max_idle_threads);
			fuse_loop_cfg_set_max_threads(cfg, opts.max_threads);
			fuse_log(FUSE_LOG_INFO, "legacyfs: multi-threaded loop, at most %u threads%s\n",
				 opts.max_threads, opts.clone_fd ? ", one /dev/fuse fd per thread" : "");
			ret = fuse_session_loop_mt(se, cfg) < 0;
			fuse_loop_cfg_destroy(cfg);
		}
	} else {
		/* > 0: stopped by SIGINT/SIGTERM/SIGHUP, a normal way to end. */
		ret = fuse_session_loop(se) < 0;
	}
	lfs_fs_watch_stop(fs);
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
out:
	lfs_fs_free(fs);
	free(tcache);
	free(o.thumb_cache);
	free(o.respath);
	free(ll.conn_opts);
	free(opts.mountpoint);
	free(o.source);
	fuse_opt_free_args(&args);
	return ret;
}
