/**
 * @file convert_batch.c
 * legacyfs-convert's batches (several MODELs, or -d): each file done on its
 * own, a failure reported and the batch going on; the progress line; -j N
 * worker threads whose messages and cat views are captured and written in
 * argument order by the main thread; eprintf() and err_write(), which every
 * command uses for its messages. See convert.c's header for the behaviour.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convert.h"

/* The progress line of a batch (stderr is a terminal, more than one model,
 * no -q): "[i/n] MODEL", rewritten in place with "\r", cleared before any
 * message and at the end. */
bool g_progress;              /* a batch shows progress */
static bool g_progress_shown; /* the line is on the terminal now */

static void progress_clear(void)
{
	if (g_progress_shown) {
		fputs("\r\033[K", stderr);
		g_progress_shown = false;
	}
}

static void progress(size_t i, size_t n, const char *model)
{
	if (!g_progress)
		return;
	fprintf(stderr, "\r\033[K[%zu/%zu] %.60s", i + 1, n, model);
	fflush(stderr);
	g_progress_shown = true;
}

/* A growing byte buffer (owned; NULL p = empty). */
struct obuf {
	char *p;
	size_t len, cap;
	bool oom; /* an append failed: the text is cut short */
};

static void obuf_add(struct obuf *b, const char *s, size_t n)
{
	if (b->oom || !n)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		char *q = realloc(b->p, cap);
		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* What one model of a parallel batch (-j N, N > 1) produced, kept until the
 * main thread writes it in argument order: its stderr text, the view cat
 * writes to stdout (the viewset it lives in is freed after writing), the
 * exit status. */
struct capture {
	struct obuf err;
	lfs_viewset vs;   /* cat: the built views (has_vs) */
	const lfs_view *view; /* cat: the one to write, in vs */
	bool has_vs;
	int status;
	bool done; /* set by the worker under batch_pool.mu */
};

/* The capture of the model this thread is doing (NULL: write directly, the
 * sequential batch and the one-model commands). */
static _Thread_local struct capture *t_cap;

bool capture_view(lfs_viewset *vs, const lfs_view *v)
{
	if (!t_cap)
		return false;
	/* parallel batch: the main thread writes it in order and frees vs */
	t_cap->vs = *vs;
	t_cap->view = v;
	t_cap->has_vs = true;
	return true;
}

/* @p n bytes of a message to stderr, or into the thread's capture. */
void err_write(const char *s, size_t n)
{
	if (t_cap) {
		obuf_add(&t_cap->err, s, n);
		return;
	}
	progress_clear();
	fwrite(s, 1, n, stderr);
}

/* A message on stderr, below the progress line (which it clears first); in
 * a worker of a parallel batch, into its capture (written in order later). */
void eprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (t_cap) {
		char *s = NULL;
		int n = vasprintf(&s, fmt, ap);
		if (n > 0)
			obuf_add(&t_cap->err, s, (size_t)n);
		else
			t_cap->err.oom = true;
		free(s);
	} else {
		progress_clear();
		vfprintf(stderr, fmt, ap);
	}
	va_end(ap);
}

/* One file of a batch: with -d the output path is
 * dest/<base><the command's suffix>. Exit status. */
static int batch_one(const struct run *r, const char *model)
{
	if (!r->dest)
		return r->cmd->one(r, model, NULL);
	const char *base = strrchr(model, '/');
	base = base ? base + 1 : model;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		eprintf("%s: error: no file name to write the output under\n", model);
		return EXIT_ERR;
	}
	char out[PATH_MAX];
	int len = snprintf(out, sizeof(out), "%s/%s%s", r->dest, base, r->cmd->suffix);
	if (len < 0 || (size_t)len >= sizeof(out)) {
		eprintf("%s: error: output path too long\n", model);
		return EXIT_ERR;
	}
	return r->cmd->one(r, model, out);
}

/* Model @p i of a batch: refused when an earlier input has its file name
 * (with -d both would write the same output), else batch_one(). */
static int batch_model(const struct run *r, char **models, size_t i)
{
	if (r->dest) {
		const char *bi = strrchr(models[i], '/');
		bi = bi ? bi + 1 : models[i];
		for (size_t j = 0; j < i; j++) {
			const char *bj = strrchr(models[j], '/');
			if (strcmp(bi, bj ? bj + 1 : models[j]) == 0) {
				eprintf("%s: error: same file name as %s: its output would "
					"replace that one's (not done)\n", models[i], models[j]);
				return EXIT_ERR;
			}
		}
	}
	return batch_one(r, models[i]);
}

/* The workers of a parallel batch: each takes the next model index, does it
 * into caps[i] and marks it done; the main thread writes the captures in
 * argument order. A worker stays at most `window` models ahead of the
 * writer (the captured views of cat are held until written). */
struct batch_pool {
	const struct run *r;
	char **models;
	size_t n, next, written, window;
	struct capture *caps;
	pthread_mutex_t mu;
	pthread_cond_t done_cv; /* a capture is done */
	pthread_cond_t room_cv; /* the writer moved on */
};

static void *batch_worker(void *arg)
{
	struct batch_pool *bp = arg;
	pthread_mutex_lock(&bp->mu);
	for (;;) {
		while (bp->next < bp->n && bp->next >= bp->written + bp->window)
			pthread_cond_wait(&bp->room_cv, &bp->mu);
		if (bp->next >= bp->n)
			break;
		size_t i = bp->next++;
		pthread_mutex_unlock(&bp->mu);
		t_cap = &bp->caps[i];
		int st = batch_model(bp->r, bp->models, i);
		t_cap = NULL;
		pthread_mutex_lock(&bp->mu);
		bp->caps[i].status = st;
		bp->caps[i].done = true;
		pthread_cond_broadcast(&bp->done_cv);
	}
	pthread_mutex_unlock(&bp->mu);
	return NULL;
}

/* Write capture @p c of @p model (messages, then cat's view) and free it.
 * Returns the model's exit status. */
static int batch_emit(struct capture *c, const char *model)
{
	int st = c->status;
	if (c->err.len)
		err_write(c->err.p, c->err.len);
	if (c->err.oom)
		eprintf("%s: error: out of memory for its messages\n", model);
	if (c->has_vs) {
		if (write_all(STDOUT_FILENO, c->view->data, c->view->size) != 0) {
			eprintf("stdout: error: %s\n", strerror(errno));
			st = EXIT_ERR;
		}
		lfs_viewset_free(&c->vs);
	}
	free(c->err.p);
	return st;
}

/* Many models in one process: each is done on its own; a failure is
 * reported and the batch goes on. Two inputs with the same file name would
 * write the same output: the later one fails. With r->jobs > 1 the models
 * are done on that many threads and everything is written in argument
 * order, as with one (the same stdout, messages, files, exit status).
 * Exit status: 0 all done, 1 some failed, 3 the only failures were files
 * that are not models. */
int convert_batch(const struct run *r, char **models, size_t n)
{
	if (r->dest && mkdir(r->dest, 0755) != 0 && errno != EEXIST) {
		eprintf("%s: error: %s\n", r->dest, strerror(errno));
		return EXIT_ERR;
	}
#ifdef __GLIBC__
	/* Many models: keep freed memory in the heap for the next model. By
	 * default glibc gives each buffer over 128 KiB (a model file, its views'
	 * text) its own mmap and unmaps it when freed, so every model paid page
	 * faults for fresh zeroed pages again (a fifth of a batch `cat`). */
	if (n > 1) {
		mallopt(M_MMAP_THRESHOLD, 64 << 20);
		mallopt(M_TRIM_THRESHOLD, 256 << 20);
	}
#endif
	/* no progress line between views that cat writes to the same terminal */
	g_progress = g_progress && n > 1 && isatty(STDERR_FILENO) &&
		     !(r->cmd->views_to_stdout && isatty(STDOUT_FILENO));
	size_t failed = 0, notmodel = 0;
	size_t jobs = r->jobs < n ? r->jobs : n;
	struct batch_pool bp = { .r = r, .models = models, .n = n, .window = 4 * jobs };
	pthread_t *th = NULL;
	size_t started = 0;
	if (jobs > 1) {
		bp.caps = calloc(n, sizeof(*bp.caps));
		th = calloc(jobs, sizeof(*th));
		if (bp.caps && th) {
			pthread_mutex_init(&bp.mu, NULL);
			pthread_cond_init(&bp.done_cv, NULL);
			pthread_cond_init(&bp.room_cv, NULL);
			while (started < jobs &&
			       pthread_create(&th[started], NULL, batch_worker, &bp) == 0)
				started++;
		}
		if (!started) { /* no memory or no thread: one at a time */
			free(bp.caps);
			bp.caps = NULL;
		}
	}
	for (size_t i = 0; i < n; i++) {
		progress(i, n, models[i]);
		int st;
		if (started) {
			pthread_mutex_lock(&bp.mu);
			while (!bp.caps[i].done)
				pthread_cond_wait(&bp.done_cv, &bp.mu);
			pthread_mutex_unlock(&bp.mu);
			st = batch_emit(&bp.caps[i], models[i]);
			pthread_mutex_lock(&bp.mu);
			bp.written = i + 1;
			pthread_cond_broadcast(&bp.room_cv);
			pthread_mutex_unlock(&bp.mu);
		} else {
			st = batch_model(r, models, i);
		}
		if (st) {
			failed++;
			notmodel += st == EXIT_NOTMODEL;
		}
	}
	if (started) {
		for (size_t k = 0; k < started; k++)
			pthread_join(th[k], NULL);
		pthread_cond_destroy(&bp.room_cv);
		pthread_cond_destroy(&bp.done_cv);
		pthread_mutex_destroy(&bp.mu);
	}
	free(bp.caps);
	free(th);
	progress_clear();
	if (failed && n > 1)
		eprintf("legacyfs-convert: %zu of %zu files failed\n", failed, n);
	return !failed ? 0 : failed == notmodel ? EXIT_NOTMODEL : EXIT_ERR;
}
