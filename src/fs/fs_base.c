/**
 * @file fs_base.c
 * What the mount remembers of the texts it served, the bases of saves
 * (docs/editing.md "Concurrent saves"): the generated text last served per
 * (model, view) and its history (the served table), what each process read
 * or saved (the read records), the texts of recent versions by hash (the
 * vtext store, bounded, counted in the cache's bound), and the base a writer
 * with no read record gets from the history. Split from fs_edit.c, which
 * keeps overlays, scratch objects and errors.txt.
 */
#define _GNU_SOURCE
#include "fs_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Safety margin of fsi_base_hist(), clock ticks (one tick: 10 ms at the usual 100 Hz). */
#define BASE_START_MARGIN 1
/* How long the page-cache order of pids is trusted, clock ticks (30 s at 100 Hz). */
#define PID_ORDER_TICKS 3000

/* Now, in clock ticks since boot (the unit of /proc/PID/stat starttime). */
static uint64_t boot_ticks(void)
{
	struct timespec t;
	if (clock_gettime(CLOCK_BOOTTIME, &t) != 0)
		return 0;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		hz = 100;
	return (uint64_t)t.tv_sec * (uint64_t)hz + (uint64_t)t.tv_nsec / (1000000000ULL / (uint64_t)hz);
}

/* Read the start of /proc file @p path into @p buf (@p sz bytes, NUL-terminated);
 * false when it cannot be read or is empty. */
static bool proc_read(const char *path, char *buf, size_t sz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sz - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* Start of process @p tgid in clock ticks since boot (/proc/PID/stat field 22); 0 = unknown. */
static uint64_t proc_start_ticks(pid_t tgid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)tgid);
	if (!proc_read(path, buf, sizeof(buf)))
		return 0;
	const char *p = strrchr(buf, ')'); /* the command name may hold anything */
	if (!p)
		return 0;
	p++;
	for (int field = 3; field <= 22; field++) { /* p: before field `field` */
		while (*p == ' ')
			p++;
		if (field == 22)
			return strtoull(p, NULL, 10);
		while (*p && *p != ' ')
			p++;
	}
	return 0;
}

static char *served_key(const char *rel, const char *vpath, size_t *slot)
{
	size_t rl = strlen(rel), vl = strlen(vpath);
	char *k = malloc(rl + vl + 2);
	if (!k)
		return NULL;
	memcpy(k, rel, rl);
	k[rl] = '\x01';
	memcpy(k + rl + 1, vpath, vl + 1);
	*slot = (size_t)(fsi_text_hash(k, rl + vl + 1) % SERVED_SLOTS);
	return k;
}

/* Base of the next edit of (rel, vpath) (fs->mu held). */
bool fsi_served_get(lfs_fs *fs, const char *rel, const char *vpath, uint64_t *hash)
{
	size_t slot;
	if (!fs->served)
		return false;
	char *k = served_key(rel, vpath, &slot);
	bool ok = k && fs->served[slot].key && strcmp(fs->served[slot].key, k) == 0;
	if (ok)
		*hash = fs->served[slot].hash;
	free(k);
	return ok;
}

/* Is (rel, vpath) recorded for this source version? (fs->mu held) */
bool fsi_served_known(lfs_fs *fs, const char *rel, const char *vpath, const lfs_cache_key *v)
{
	size_t slot;
	if (!fs->served)
		return false;
	char *k = served_key(rel, vpath, &slot);
	const struct served *e = &fs->served[slot];
	bool ok = k && e->key && strcmp(e->key, k) == 0 && e->dev == v->dev && e->ino == v->ino &&
		  e->size == v->size && e->mtime == v->mtime_ns;
	free(k);
	return ok;
}

void fsi_served_set(lfs_fs *fs, const char *rel, const char *vpath, uint64_t hash,
		const lfs_cache_key *v)
{
	size_t slot;
	if (!fs->served && !(fs->served = calloc(SERVED_SLOTS, sizeof(*fs->served))))
		return;
	char *k = served_key(rel, vpath, &slot);
	if (!k)
		return;
	struct served *e = &fs->served[slot];
	if (e->key && strcmp(e->key, k) == 0) {
		free(k);
	} else {
		/* a new key (or a collision: the other view is forgotten) */
		free(e->key);
		memset(e, 0, sizeof(*e));
		e->key = k;
	}
	if (!e->nhist || e->hist[e->nhist - 1] != hash) {
		if (e->nhist == SERVED_HIST) {
			memmove(e->hist, e->hist + 1, (SERVED_HIST - 1) * sizeof(e->hist[0]));
			memmove(e->hist_tick, e->hist_tick + 1, (SERVED_HIST - 1) * sizeof(e->hist_tick[0]));
			memmove(e->hist_need, e->hist_need + 1, (SERVED_HIST - 1) * sizeof(e->hist_need[0]));
			memmove(e->hist_pid, e->hist_pid + 1, (SERVED_HIST - 1) * sizeof(e->hist_pid[0]));
			e->hist_saved >>= 1;
			e->nhist--;
			e->hist_lost = true;
		}
		e->hist[e->nhist] = hash;
		e->hist_tick[e->nhist] = boot_ticks();
		/* the invalidations queued so far go out in the next batch */
		e->hist_need[e->nhist] = fs->inval_batch + 1;
		e->hist_pid[e->nhist] = 0;
		fs->served_unstamped++;
		e->hist_saved &= (uint8_t)~(1u << e->nhist);
		e->nhist++;
	}
	e->hash = hash;
	e->dev = v->dev;
	e->ino = v->ino;
	e->size = v->size;
	e->mtime = v->mtime_ns;
}

/*
 * The text @p hash of a save that was merged with other changes (the
 * saver's buffer, which lacks them) goes into the history of (rel, vpath)
 * as an entry that was never served, just before the merged version the
 * caller records next (fsi_served_set): the saver's record points at it,
 * and fsi_served_since() then finds the versions served after it
 * (fs->mu held).
 */
void fsi_served_saved(lfs_fs *fs, const char *rel, const char *vpath, uint64_t hash,
		      const lfs_cache_key *v)
{
	size_t slot;
	char *k = fs->served ? served_key(rel, vpath, &slot) : NULL;
	struct served *e = k ? &fs->served[slot] : NULL;
	bool same = e && e->key && strcmp(e->key, k) == 0;
	/* already the last entry (a text that was served as such): kept as it is */
	bool fresh = !same || !e->nhist || e->hist[e->nhist - 1] != hash;
	free(k);
	fsi_served_set(fs, rel, vpath, hash, v);
	if (fresh && e && e->nhist && e->hist[e->nhist - 1] == hash)
		e->hist_saved |= (uint8_t)(1u << (e->nhist - 1));
}

/* ---- per-process bases (docs/editing.md "Concurrent saves") ---- */

/*
 * Thread group (process) of thread @p tid, from /proc/TID/status; @p tid
 * itself when /proc cannot say; 0 for 0.
 */
pid_t fsi_tgid_of(pid_t tid)
{
	if (tid <= 0)
		return 0;
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)tid);
	if (!proc_read(path, buf, sizeof(buf)))
		return tid;
	const char *t = strstr(buf, "\nTgid:");
	long v = t ? strtol(t + 6, NULL, 10) : 0;
	return v > 0 ? (pid_t)v : tid;
}

/*
 * Thread group of thread @p tid (fsi_tgid_of), through a small cache of
 * recent answers (entries older than 2 s are asked again: pids are reused).
 * Takes and releases fs->mu (not held by the caller).
 */
pid_t fsi_tgid_cached(lfs_fs *fs, pid_t tid)
{
	if (tid <= 0)
		return 0;
	size_t slot = (size_t)tid % (sizeof(fs->tgcache) / sizeof(fs->tgcache[0]));
	int64_t now = (int64_t)fsi_now_mono().tv_sec;
	fs_lock(fs);
	pid_t g = fs->tgcache[slot].tid == tid && now - fs->tgcache[slot].when < 2 ?
			  fs->tgcache[slot].tgid : 0;
	fs_unlock(fs);
	if (g)
		return g;
	g = fsi_tgid_of(tid);
	fs_lock(fs);
	fs->tgcache[slot].tid = tid;
	fs->tgcache[slot].tgid = g;
	fs->tgcache[slot].when = now;
	fs_unlock(fs);
	return g;
}

static void vt_unlink_lru(lfs_fs *fs, struct vtext *t)
{
	if (t->prev)
		t->prev->next = t->next;
	else
		fs->vt_head = t->next;
	if (t->next)
		t->next->prev = t->prev;
	else
		fs->vt_tail = t->prev;
	t->prev = t->next = NULL;
}

static void vt_push_front(lfs_fs *fs, struct vtext *t)
{
	t->prev = NULL;
	t->next = fs->vt_head;
	if (fs->vt_head)
		fs->vt_head->prev = t;
	fs->vt_head = t;
	if (!fs->vt_tail)
		fs->vt_tail = t;
}

static struct vtext *vt_find(lfs_fs *fs, uint64_t hash)
{
	if (!fs->vt_buckets)
		return NULL;
	for (struct vtext *t = fs->vt_buckets[hash % VTEXT_BUCKETS]; t; t = t->hnext)
		if (t->hash == hash)
			return t;
	return NULL;
}

static void vt_drop(lfs_fs *fs, struct vtext *t)
{
	for (struct vtext **pp = &fs->vt_buckets[t->hash % VTEXT_BUCKETS]; *pp; pp = &(*pp)->hnext)
		if (*pp == t) {
			*pp = t->hnext;
			break;
		}
	vt_unlink_lru(fs, t);
	fs->vt_bytes -= t->n;
	fs->vt_count--;
	fs->cache.reserved = fs->vt_bytes;
	free(t->data);
	free(t);
}

/* Bytes the vtext store may hold: VTEXT_MAX_BYTES, at most the edit bound
 * and a quarter of -o cache_size, whose bound it shares (cache.h reserved:
 * docs/performance.md "Memory"). */
static size_t vt_max(const lfs_fs *fs)
{
	size_t m = fs->edit_max < VTEXT_MAX_BYTES ? fs->edit_max : VTEXT_MAX_BYTES;
	if (fs->cache.max_bytes && fs->cache.max_bytes / 4 < m)
		m = fs->cache.max_bytes / 4;
	return m;
}

/*
 * Keep a copy of text @p data (@p n bytes, hash @p hash) as a possible base
 * of a three-way merge; a text already kept becomes the most recent. Texts
 * larger than the bound are not kept (fs->mu held).
 */
void fsi_vtext_put(lfs_fs *fs, uint64_t hash, const char *data, size_t n)
{
	struct vtext *t = vt_find(fs, hash);
	if (t) {
		vt_unlink_lru(fs, t);
		vt_push_front(fs, t);
		return;
	}
	if (n > vt_max(fs))
		return;
	if (!fs->vt_buckets && !(fs->vt_buckets = calloc(VTEXT_BUCKETS, sizeof(*fs->vt_buckets))))
		return;
	while (fs->vt_tail && (fs->vt_bytes + n > vt_max(fs) || fs->vt_count >= VTEXT_MAX_COUNT))
		vt_drop(fs, fs->vt_tail);
	t = calloc(1, sizeof(*t));
	if (!t || !(t->data = malloc(n ? n : 1))) {
		free(t);
		return;
	}
	if (n)
		memcpy(t->data, data, n);
	t->n = n;
	t->hash = hash;
	t->hnext = fs->vt_buckets[hash % VTEXT_BUCKETS];
	fs->vt_buckets[hash % VTEXT_BUCKETS] = t;
	vt_push_front(fs, t);
	fs->vt_bytes += n;
	fs->vt_count++;
	fs->cache.reserved = fs->vt_bytes;
}

/*
 * A malloc'd copy of the kept text of hash @p hash (fs->mu held). 0, ENOENT
 * (not kept: never served, or dropped by the bound) or ENOMEM.
 */
int fsi_vtext_copy(lfs_fs *fs, uint64_t hash, char **out, size_t *n)
{
	struct vtext *t = vt_find(fs, hash);
	if (!t)
		return ENOENT;
	*out = malloc(t->n ? t->n : 1);
	if (!*out)
		return ENOMEM;
	if (t->n)
		memcpy(*out, t->data, t->n);
	*n = t->n;
	return 0;
}

static char *rdrec_key(pid_t tgid, const char *rel, const char *vpath, size_t *slot)
{
	size_t need = strlen(rel) + strlen(vpath) + 32;
	char *k = malloc(need);
	if (!k)
		return NULL;
	int len = snprintf(k, need, "%ld\x01%s\x01%s", (long)tgid, rel, vpath);
	*slot = (size_t)(fsi_text_hash(k, (size_t)len) % (RDREC_SLOTS / RDREC_WAYS)) * RDREC_WAYS;
	return k;
}

/* The record of key @p k in the set starting at @p set, or NULL (fs->mu held). */
static struct rdrec *rdrec_find(lfs_fs *fs, size_t set, const char *k)
{
	for (size_t w = 0; w < RDREC_WAYS; w++) {
		struct rdrec *e = &fs->rdrecs[set + w];
		if (e->key && strcmp(e->key, k) == 0)
			return e;
	}
	return NULL;
}

/* Record what process @p tgid holds of (rel, vpath) (fs->mu held; see struct rdrec). */
void fsi_rdrec_set(lfs_fs *fs, pid_t tgid, const char *rel, const char *vpath, uint64_t base,
		   uint64_t gen)
{
	if (tgid <= 0)
		return;
	if (!fs->rdrecs && !(fs->rdrecs = calloc(RDREC_SLOTS, sizeof(*fs->rdrecs))))
		return;
	size_t slot;
	char *k = rdrec_key(tgid, rel, vpath, &slot);
	if (!k)
		return;
	struct rdrec *e = rdrec_find(fs, slot, k);
	if (e) {
		free(k);
	} else {
		/* an empty way, else the least recently used one */
		e = &fs->rdrecs[slot];
		for (size_t w = 1; w < RDREC_WAYS && e->key; w++) {
			struct rdrec *c = &fs->rdrecs[slot + w];
			if (!c->key || c->used < e->used)
				e = c;
		}
		free(e->key);
		e->key = k;
	}
	e->base = base;
	e->gen = gen;
	e->used = ++fs->rdrec_clock;
}

/* What process @p tgid last read or saved of (rel, vpath) (fs->mu held); false = no record. */
bool fsi_rdrec_get(lfs_fs *fs, pid_t tgid, const char *rel, const char *vpath, uint64_t *base,
		   uint64_t *gen)
{
	if (tgid <= 0 || !fs->rdrecs)
		return false;
	size_t slot;
	char *k = rdrec_key(tgid, rel, vpath, &slot);
	struct rdrec *e = k ? rdrec_find(fs, slot, k) : NULL;
	if (e) {
		*base = e->base;
		*gen = e->gen;
		e->used = ++fs->rdrec_clock;
	}
	free(k);
	return e != NULL;
}

/*
 * READ of view @p v (writable) of model @p rel, generated from source
 * version @p k, by thread @p tid: the first READ of a version keeps its text
 * (hash, vtext store, history of the served table); every READ records the
 * version as what the reading process holds. Takes fs->mu (not held).
 */
void fsi_view_served(lfs_fs *fs, const char *rel, const char *vpath, const lfs_view *v,
		     const lfs_cache_key *k, pid_t tid)
{
	pid_t tgid = fsi_tgid_cached(fs, tid);
	uint64_t h = 0;
	fs_lock(fs);
	bool known = fsi_served_known(fs, rel, vpath, k) && fsi_served_get(fs, rel, vpath, &h) &&
		     vt_find(fs, h);
	fs_unlock(fs);
	if (!known)
		h = fsi_text_hash(v->data, v->size);
	fs_lock(fs);
	if (!known) {
		fsi_served_set(fs, rel, vpath, h, k);
		fsi_vtext_put(fs, h, v->data, v->size);
	}
	if (tgid && tgid != getpid())
		fsi_rdrec_set(fs, tgid, rel, vpath, h, h);
	fs_unlock(fs);
}

/*
 * Base of a save by process @p tgid of (rel, vpath) that the mount has no
 * read record for: the version the kernel's page cache held when the process
 * started (the newest served version first served at or before its start),
 * else the oldest one kept when the process started before all of them
 * (it can only have read one of these; an older base merges the same, as
 * identical changes are taken once). False when nobody read the view (the
 * text is then applied to the current version) (fs->mu held; reads /proc).
 */
bool fsi_base_hist(lfs_fs *fs, const char *rel, const char *vpath, pid_t tgid, uint64_t *base,
		   uint64_t *gen)
{
	size_t slot;
	if (!fs->served)
		return false;
	char *k = served_key(rel, vpath, &slot);
	const struct served *e = &fs->served[slot];
	bool ok = k && e->key && strcmp(e->key, k) == 0 && e->nhist;
	free(k);
	if (!ok)
		return false;
	uint64_t start = tgid > 0 ? proc_start_ticks(tgid) : 0;
	unsigned pick = 0;
	/*
	 * A version counts as what a process found in the page cache only when it
	 * was current at least BASE_START_MARGIN ticks before the process
	 * started (/proc's start time has one-tick resolution: a process started
	 * in the tick the version appeared may have read the one before). An
	 * older base than the one read is safe (the changes between the two are
	 * on both sides and taken once, or conflict and are refused); a newer one
	 * would undo a save.
	 */
	while (pick + 1 < e->nhist && (e->hist_saved >> pick & 1))
		pick++; /* the oldest served one */
	for (unsigned i = 0; i < e->nhist; i++)
		if (start && e->hist_tick[i] + BASE_START_MARGIN <= start && !(e->hist_saved >> i & 1))
			pick = i;
	if (!start)
		pick = e->nhist - 1; /* unknown start: the version in the page cache now */
	/*
	 * The page-cache order: a process whose pid was allocated after version
	 * i was the only one in the page cache (hist_pid, fsi_served_stamp)
	 * cannot have read an older one. Pids grow until they wrap: the rule
	 * holds only while the newest pid is at or above both (no wrap since),
	 * for versions first served in the last PID_ORDER_TICKS.
	 */
	int32_t last = tgid > 0 ? fsi_last_pid() : 0;
	uint64_t now = boot_ticks();
	for (unsigned i = pick + 1; last > 0 && i < e->nhist; i++)
		if (e->hist_pid[i] > 0 && tgid > e->hist_pid[i] && tgid <= last &&
		    e->hist_tick[i] + PID_ORDER_TICKS >= now && !(e->hist_saved >> i & 1))
			pick = i;
	*base = *gen = e->hist[pick];
	return true;
}

/*
 * The one place that decides the base of a save (docs/editing.md
 * "Concurrent saves"): the text the saved text was edited from, which the
 * commit merges onto the current text when they differ. The rules, tried
 * in this order, the first that knows wins:
 *
 *  1. FSI_BASE_COPY: the saved text is a scratch file made from the view
 *     (a view renamed or linked to a scratch name): the base it carries.
 *  2. FSI_BASE_READ: what the saving process @p q->saver last read or saved
 *     of the view (its read record, fsi_rdrec_get: sed -i, os.replace,
 *     an editor's first WRITE).
 *  3. FSI_BASE_MOVED: what an editor that moved the view away (to its
 *     backup name) had read: @p q->moved, else the record the model keeps
 *     of it (fsi_pbase_peek).
 *  4. FSI_BASE_HIST: the version the process could have read from the
 *     kernel's page cache, by its start time and the pid order
 *     (fsi_base_hist).
 *  5. FSI_BASE_NONE: nobody read the view: no base (*out invalid), the
 *     text is applied to the current version.
 *
 * Callers: the first WRITE of an overlay (fsi_view_change, fs_edit.c) and
 * the rename of a scratch file onto a view (fsi_rename_commit,
 * fs_commit.c). fs->mu held (reads /proc for rule 4).
 */
enum fsi_base_rule fsi_save_base(lfs_fs *fs, struct mstate *ms, const struct fsi_save_q *q,
				 struct fsi_base *out)
{
	memset(out, 0, sizeof(*out));
	if (q->copy.valid) {
		*out = q->copy;
		return FSI_BASE_COPY;
	}
	out->valid = true;
	if (fsi_rdrec_get(fs, q->saver, q->rel, q->vpath, &out->hash, &out->gen))
		return FSI_BASE_READ;
	if (q->moved && q->moved->valid) {
		*out = *q->moved;
		return FSI_BASE_MOVED;
	}
	if (!q->moved && ms && fsi_pbase_peek(ms, q->vpath, &out->hash)) {
		out->gen = out->hash;
		return FSI_BASE_MOVED;
	}
	if (fsi_base_hist(fs, q->rel, q->vpath, q->saver, &out->hash, &out->gen))
		return FSI_BASE_HIST;
	memset(out, 0, sizeof(*out));
	return FSI_BASE_NONE;
}

/*
 * The versions of (rel, vpath) served since version @p gen, oldest first:
 * the history from the first time it holds @p gen (itself included) to the
 * current version, at most @p max hashes into @p out. 0 when the history
 * does not hold @p gen (forgotten, or never served). These are the texts a
 * process whose last READ (or save) was @p gen may have read since, from
 * the kernel's page cache, which only ever holds texts the mount served
 * (docs/editing.md "Concurrent saves"). fs->mu held.
 */
size_t fsi_served_since(lfs_fs *fs, const char *rel, const char *vpath, uint64_t gen,
			uint64_t *out, size_t max)
{
	size_t slot;
	if (!fs->served)
		return 0;
	char *k = served_key(rel, vpath, &slot);
	const struct served *e = &fs->served[slot];
	bool ok = k && e->key && strcmp(e->key, k) == 0;
	free(k);
	if (!ok)
		return 0;
	unsigned first = 0;
	while (first < e->nhist && e->hist[first] != gen)
		first++;
	size_t n = 0;
	for (unsigned i = first; i < e->nhist && n < max; i++)
		if (!(e->hist_saved >> i & 1))
			out[n++] = e->hist[i];
	return n;
}

/*
 * After a commit of view @p vpath of model @p rel queued its invalidations
 * (fs->mu held): the version it recorded (served_after_commit, before the
 * queue) waits for the batch that carries them.
 */
void fsi_served_after_queue(lfs_fs *fs, const char *rel, const char *vpath)
{
	size_t slot;
	if (!fs->served)
		return;
	char *k = served_key(rel, vpath, &slot);
	struct served *e = &fs->served[slot];
	if (k && e->key && strcmp(e->key, k) == 0 && e->nhist && !e->hist_pid[e->nhist - 1])
		e->hist_need[e->nhist - 1] = fs->inval_batch + 1;
	free(k);
}

/*
 * The notification thread sent batch @p batch, and the newest pid was then
 * @p last_pid: every history entry that waited for this batch (or an
 * earlier one) is now the only text of its view the page cache can hold,
 * for processes started from now on (fs->mu held).
 */
void fsi_served_stamp(lfs_fs *fs, uint64_t batch, int32_t last_pid)
{
	if (!fs->served || !fs->served_unstamped || last_pid <= 0)
		return;
	size_t left = 0;
	for (size_t s = 0; s < SERVED_SLOTS; s++) {
		struct served *e = &fs->served[s];
		for (unsigned i = 0; e->key && i < e->nhist; i++) {
			if (e->hist_pid[i])
				continue;
			if (e->hist_need[i] <= batch)
				e->hist_pid[i] = last_pid;
			else
				left++;
		}
	}
	fs->served_unstamped = left;
}

/* The newest pid of this pid namespace (/proc/sys/kernel/ns_last_pid); 0 when unknown. */
int32_t fsi_last_pid(void)
{
	char buf[32];
	if (!proc_read("/proc/sys/kernel/ns_last_pid", buf, sizeof(buf)))
		return 0;
	long v = strtol(buf, NULL, 10);
	return v > 0 && v <= INT32_MAX ? (int32_t)v : 0;
}

/* Free the tables of served texts, read records and kept texts (fs_free). */
void fsi_edit_tables_free(lfs_fs *fs)
{
	if (fs->served) {
		for (size_t i = 0; i < SERVED_SLOTS; i++)
			free(fs->served[i].key);
		free(fs->served);
		fs->served = NULL;
	}
	if (fs->rdrecs) {
		for (size_t i = 0; i < RDREC_SLOTS; i++)
			free(fs->rdrecs[i].key);
		free(fs->rdrecs);
		fs->rdrecs = NULL;
	}
	while (fs->vt_tail)
		vt_drop(fs, fs->vt_tail);
	free(fs->vt_buckets);
	fs->vt_buckets = NULL;
}

