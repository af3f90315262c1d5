/**
 * @file fs_int.h
 * Private to src/fs/fs*.c: what the parts of the virtual tree share.
 *
 * Owns the node kinds, the node and mount structs, the editing-state
 * structs, the per-kind table of operations (struct node_ops, the idea of
 * the Linux kernel's struct inode_operations: one table per node kind,
 * selected by the node's kind, NULL = the default answer) and the lock
 * helpers. The parts:
 *   fs.c         public entry points of fs.h (thin: dispatch through the ops)
 *   fs_nodes.c   node table, ids/generations, lookup counts, names
 *   fs_entry.c   classification of source objects through the view cache
 *   fs_pass.c    passthrough of SOURCE (root, folders, files, symlinks, others)
 *   fs_list.c    listings of SOURCE folders, header prefetch
 *   fs_model.c   model folders, view folders, view files, /.legacyfs
 *   fs_container.c models and resources inside archives (registry/container.h)
 *   fs_ctl.c     /.legacyfs/status and /.legacyfs/resources
 *   fs_edit.c    editing state: overlays, scratch objects, errors.txt
 *   fs_base.c    served texts, read records, the vtext store (bases of saves)
 *   fs_scratch.c the namespace of model folders (create/unlink/rename/link)
 *   fs_commit.c  commit of an edited view back into SOURCE
 *   fs_watch.c   the inotify watcher / notification thread
 *
 * Names: every function and table the parts share carries the prefix fsi_
 * ("fs internal"); everything else is static to its file.
 *
 * Invariants:
 *  - Every node has a slot (node id) and, except the root, a parent; a child
 *    keeps its parent alive (the kernel forgets parents after children, but we
 *    do not rely on it).
 *  - A node is "hashed" (findable by (parent, name)) while it is the current
 *    meaning of that name. When SOURCE changes what a name is (file <-> model
 *    folder, another inode), the old node is unhashed and a new node with a
 *    new id is made: the kernel must never see an inode change its type.
 *  - Source paths are relative to SOURCE ("." is the root) and are opened
 *    with *at() calls on the root fd, final component O_NOFOLLOW.
 *  - fs->mu protects the node tables, the cache, the error list and the
 *    editing state (struct mstate: overlays, scratch names, messages). It is
 *    never held during source I/O, view building, commits or notifications.
 *    A commit holds its model's commit_mu (taken before fs->mu, never the
 *    other way round). A view build is registered in the cache while it
 *    runs unlocked; a request for the same model version waits on
 *    cache.built (with fs->mu) instead of building it again.
 *  - Under -o mt a node's kind can change between fsi_node_info() and the
 *    operation (a scratch file renamed onto a view): an operation that sees
 *    it returns FSI_KIND_CHANGED and fs.c dispatches again. A model folder
 *    follows its model file across replacements (new inode, same node).
 *  - Editing state is keyed by the model file's path relative to SOURCE and
 *    by view path, never by node: nodes come and go with the kernel's
 *    lookup counts, an edit must not (docs/editing.md).
 */
#ifndef LFS_FS_FS_INT_H
#define LFS_FS_FS_INT_H

#include "fs.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "../common/strbuf.h"
#include "errlog.h"
#include "membuf.h"

#define CTL_ID 2
#define ERRORS_ID 3
#define STATUS_ID 4
#define RESOURCES_ID 5
#define FIRST_FREE_ID 6
#define VINO_BIT (1ULL << 63)
#define CTL_INO (VINO_BIT | 1)
#define ERRORS_INO (VINO_BIT | 2)
#define STATUS_INO (VINO_BIT | 3)
#define RESOURCES_INO (VINO_BIT | 4)
/* st_ino of control file @p id (ERRORS_ID, STATUS_ID, RESOURCES_ID) */
#define CTLFILE_INO(id) (VINO_BIT | ((uint64_t)(id) - 1))
#define WATCH_BUCKETS 1024

/* One byte (packed): the kind is in every node (struct node). */
enum __attribute__((packed)) nkind {
	K_ROOT,
	K_DIR,    /* source folder */
	K_FILE,   /* source file shown as itself */
	K_LINK,   /* source symlink */
	K_OTHER,  /* fifo, socket, device */
	K_MODEL,  /* source file shown as a folder of views */
	K_VDIR,   /* folder inside a model folder */
	K_VFILE,  /* generated file */
	K_CTLDIR, /* /.legacyfs */
	K_CTLERR, /* a file of /.legacyfs: errors, status, resources (by node id) */
	K_SCRATCH, /* in-memory file or symlink in a model folder's scratch namespace */
	K_MERR,   /* <model>/errors.txt: messages of refused saves */
	K_NEWDIR, /* a pending new model folder (mkdir X.mdl) or a folder in it: fs_newmodel.c */
	K_NEWFILE, /* a file in a pending model folder (in memory) */
};

/* One pending kernel notification. */
struct inval {
	uint64_t id;
	char *name; /* NULL: inval_inode(id); else inval_entry(id, name) */
};

struct inval_list {
	struct inval *v;
	size_t n, cap;
};

/* ---- editing state (docs/editing.md) ---- */

/* A scratch file or symlink: in memory, never written to SOURCE. */
struct sobj {
	unsigned refs;   /* names + nodes */
	unsigned nlink;  /* names */
	lfs_membuf data; /* file bytes, or the symlink target */
	mode_t mode;     /* S_IFREG or S_IFLNK | permission bits */
	uid_t uid;
	gid_t gid;
	struct timespec atime, mtime, ctime;
	uint64_t sino;
	bool base_valid; /* the text came from a view whose generated text hashed base_hash */
	uint64_t base_hash;
	uint64_t base_gen; /* generated version base_hash stands for (0: base_hash itself) */
	bool resource;     /* a new resource at the top of an archive folder: added to the
			    * archive when closed (fsi_scratch_flush, docs/archives.md) */
};

struct sname {
	char *vpath; /* path inside the model folder */
	struct sobj *obj;
	struct sname *next;
};

/* The text of a view being edited. */
struct overlay {
	char *vpath;
	lfs_membuf text;
	bool written;    /* WRITE since the last commit attempt: FLUSH commits */
	bool modified;   /* WRITE or truncate since then: FSYNC commits */
	bool base_valid; /* text the edit started from (hash, its text in the vtext store) */
	uint64_t base_hash;
	uint64_t base_gen; /* generated version that base stands for (docs/editing.md) */
	bool base_by_writer; /* base chosen for the writing process (first WRITE) */
	int cut;         /* errno of a refused WRITE or truncation since the text was last
			  * emptied: EFBIG (past fs->save_max) or ENOSPC (edit memory full). The
			  * text lacks what was refused: its commit is refused unparsed */
	uint64_t gen;    /* bumped on every change */
	pid_t writer;    /* thread group of the last WRITE (0 = unknown) */
	struct timespec mtime;
	struct overlay *next;
};

/* A deleted view: absent until re-created or until the grace time ends. */
struct hidden {
	char *vpath;
	struct timespec until; /* CLOCK_MONOTONIC */
	uint64_t dir_id;       /* folder to invalidate when the view comes back */
	struct hidden *next;
};

/* Base of a view whose node went away (rename/unlink), for its next overlay. */
struct pbase {
	char *vpath;
	uint64_t hash;
	struct pbase *next;
};

/* Message of the last refused save of one view. */
struct merr {
	char *vpath;
	char *text; /* complete lines */
	struct timespec when;
	struct merr *next;
};

/*
 * The generated text last served by READ for (model path, view path), and
 * the versions served before it (history, oldest first, with the time each
 * was first served): the base of a writer the mount has no read record for
 * is the version the kernel's page cache held when that process started
 * (docs/editing.md "Concurrent saves"). A direct-mapped table: a collision
 * forgets an entry (the view is then "never read").
 */
#define SERVED_SLOTS 16384
#define SERVED_HIST 6
struct served {
	char *key;      /* "<model rel>\x01<view path>" */
	uint64_t hash;  /* of the text */
	uint64_t dev, ino; /* source version it was generated from */
	int64_t size, mtime;
	uint64_t hist[SERVED_HIST];      /* hashes, oldest first; hist[nhist-1] == hash */
	uint64_t hist_tick[SERVED_HIST]; /* first served, clock ticks since boot (as /proc/PID/stat) */
	unsigned nhist;
	uint8_t hist_saved; /* bit i: hist[i] is a merged save's text, never served
			     * (fsi_served_saved): not a base by start time, not a
			     * candidate base; the saver's record points at it */
	bool hist_lost;  /* older versions were dropped from hist */
	/* The page-cache order (fsi_served_stamp): hist[i] is the only text of
	 * the view a process can find in the kernel's page cache once the
	 * notification batch hist_need[i] (or a later one) has been sent;
	 * hist_pid[i] is the newest pid allocated when that was so (0: not yet):
	 * a process with a larger pid started after it. */
	uint64_t hist_need[SERVED_HIST];
	int32_t hist_pid[SERVED_HIST];
};

/*
 * What one process (thread group) last read of (model path, view path), or
 * saved there: base = the text it holds (hash; the text in the vtext
 * store), gen = the generated version that text stands for (equal after a
 * read; after a save, the text generated from the saved bytes). A table
 * keyed by "<tgid>\x01<model rel>\x01<view path>", RDREC_WAYS-way set
 * associative, the least recently used record of a set forgotten first (a
 * `grep -r` records every view it reads, under a new process each time: a
 * direct-mapped table let such passes evict the records of editors).
 */
#define RDREC_SLOTS 8192
#define RDREC_WAYS 4
struct rdrec {
	char *key;
	uint64_t base, gen;
	uint64_t used; /* fs->rdrec_clock when last set or read */
};

/*
 * Texts of recent versions of views (and of saved texts), by hash: the base
 * texts of three-way merges. Least recently used dropped first beyond
 * VTEXT_MAX_BYTES (or the edit bound, or a quarter of -o cache_size, if lower:
 * counted in the cache's bound as cache.reserved) or VTEXT_MAX_COUNT texts.
 */
#define VTEXT_BUCKETS 4096

/*
 * The largest text one save takes is the edit bound (-o edit_size) divided by
 * LFS_SAVE_DIV: a save holds the text (the view's overlay), a copy of it, and
 * what the format's apply and the round-trip law build from it (the parsed
 * mesh, the new bytes, the views read back: measured 17 times the text
 * for NWN mesh OBJ, docs/performance.md "Bounded saves"), so that a save
 * stays within edit_size on top of the daemon's resident size before it.
 * A WRITE or truncation of a view past it fails with EFBIG and its commit
 * is refused unparsed (docs/editing.md "Refused saves").
 */
#define LFS_SAVE_DIV 16
#define VTEXT_MAX_BYTES ((size_t)64 << 20)
#define VTEXT_MAX_COUNT 4096
struct vtext {
	uint64_t hash;
	char *data;
	size_t n;
	struct vtext *hnext;       /* bucket chain */
	struct vtext *prev, *next; /* LRU list, most recent first */
};

/* Editing state of one model file; kept until the fs is freed. */
struct mstate {
	char *rel;
	pthread_mutex_t commit_mu;
	struct sname *names;
	struct overlay *ovl;
	struct hidden *hidden;
	struct pbase *pbase;
	struct merr *errs;
	struct mstate *next;
};

/* One readdir listing of a folder. */
struct dsent {
	char *name;
	uint64_t ino;
	unsigned char type; /* DT_* */
};

struct dirsnap {
	unsigned refs;
	uint64_t gen;       /* node->dirty_gen when the listing was read */
	uint64_t dev, ino;
	int64_t mtime_ns, ctime_ns;
	struct dsent *ents;
	size_t n;
	bool bare;          /* from view names only (no sizes yet): READDIRPLUS lists its
			     * files without attributes, so listing builds no views */
	bool prefetch;      /* source folder: has unclassified candidates (DT_UNKNOWN) whose
			     * headers the first lookup prefetches (fs_pass.c prefetch_start) */
	struct timespec made; /* CLOCK_MONOTONIC when read (reused on a remote folder only
			       * within fs->o.remote_timeout: fsi_source_snap) */
};

/*
 * One node (inode) of the mount. Two sizes, one type:
 *  - Model-side nodes (kinds whose ops have in_model: K_VDIR, K_VFILE,
 *    K_SCRATCH, K_MERR; one per generated file the kernel looked up, so tens
 *    of thousands on a big tree) are allocated with the common part only,
 *    NODE_MODEL_SIZE bytes (every field up to `rel_inline`), followed in the
 *    same allocation by the node's path as it was made (node_inline_path()):
 *    one malloc chunk per generated file, path included.
 *  - Every other node (SOURCE folders and files, model folders, the root,
 *    /.legacyfs) has the source part too (sizeof(struct node)); its path is
 *    a separate allocation.
 * A node's kind changes only between model-side kinds (a scratch file renamed
 * onto a view, a view renamed to a scratch name), so node_has_src() never
 * changes for a node. The fields of the source part are read and written
 * only for nodes with node_has_src().
 *
 * A node's name in its parent is not stored: it is the last component of
 * `rel` (node_name(); fixed names for the root and /.legacyfs, whose rel is
 * "." or NULL). `rel` is the inline path (rel_inline) until a rename gives
 * the node a new one (its own allocation; the inline bytes stay, unused,
 * for the node's life: requests may still read them). Free it with
 * fsi_node_free_path().
 *
 * Not stored either, for the tens of thousands of model-side nodes: their
 * model folder (model_of(): the nearest K_MODEL ancestor, fs->mu held) and
 * their st_ino (fsi_node_sino(): worked out from the model folder's path and
 * the view path, or the scratch object's); the list of children shares a word
 * with the scratch object; lookup counts are 32-bit (saturating).
 *
 * Bytes of a model-side node on x86-64: 67 + the path's length + 1, in one
 * malloc chunk (8 bytes of header, 16-byte steps); docs/performance.md "Memory".
 */
struct node {
	/* ---- common part: every node ---- */
	uint64_t gen;
	struct node *parent;
	/* The source path (or the view path for model-side nodes; the name in
	 * the parent is its last component, node_name()). Requests read it
	 * without fs->mu (one atomic load); a rename stores a new string under
	 * fs->mu and hands the old one to fsi_retire(), which frees it once every
	 * request that could have loaded it has ended. */
	char *_Atomic rel;
	struct node *next_sib, *prev_sib;
	struct node *hnext;  /* name hash chain */
	/* By kind: a scratch file has no children, a folder no scratch object
	 * (node_first_child() reads the list for any kind). */
	union {
		struct node *first_child; /* every kind but K_SCRATCH */
		struct sobj *sobj;        /* K_SCRATCH: the object (one reference; NULL
					   * while the kind changes to or from it) */
	};
	uint32_t id;         /* slot in fs->slots: the FUSE node id */
	/* The kernel's lookup count (FUSE: 64-bit); saturates at UINT32_MAX and
	 * is then never lowered (node_hold(), lfs_fs_forget()): a node looked up
	 * four billion times without a forget stays until unmount. */
	uint32_t nlookup;
	enum nkind kind;     /* one byte (packed) */
	bool hashed;
	bool rel_inline;     /* rel is the path stored after the common part (model-side only) */

	/* ---- source part: only nodes with node_has_src() ---- */
	uint64_t sino;       /* st_ino reported (model-side nodes: fsi_node_sino()) */
	uint64_t src_dev, src_ino; /* source object this node shows */
	int wd;              /* inotify watch, -1 = none */
	struct node *wnext;  /* watch hash chain */
	struct dirsnap *snap;
	uint64_t dirty_gen;  /* bumped by the watcher when the folder's content changed */
	bool self_commit;    /* K_MODEL: SOURCE was just replaced by our own commit */
	bool remote;         /* on a file system whose changes inotify misses (NFS, SMB, 9p,
			      * FUSE...: fsi_fs_untrusted()): short kernel timeouts, listings
			      * read again, attributes revalidated by stat (docs/mount.md) */
	int held_fd;         /* K_FILE/K_LINK/K_OTHER: O_PATH fd of the source object, kept when our
			      * own unlink/rename took its name while the kernel held the node
			      * (-1 = none; closed when the node is freed; fs_pass.c) */
	/* K_DIR/K_ROOT: the link count last worked out (0 = none) and what it is valid
	 * for: dirty_gen, SOURCE mtime and ctime of the folder (fs_pass.c dir_nlink) */
	nlink_t nl;
	uint64_t nl_gen;
	int64_t nl_mtime, nl_ctime;
};

/* Bytes of the common part of struct node (a model-side node without its inline path). */
#define NODE_MODEL_SIZE (offsetof(struct node, rel_inline) + sizeof(bool))

/* Where a model-side node's inline path is (just after the common part). */
static inline char *node_inline_path(struct node *n)
{
	return (char *)n + NODE_MODEL_SIZE;
}

/*
 * The name of @p n in its parent: the last component of its path, read with
 * one atomic load (valid while the path is: see `rel`); "" for the root.
 */
static inline const char *node_name(const struct node *n)
{
	switch (n->kind) {
	case K_ROOT:
		return "";
	case K_CTLDIR:
		return LFS_FS_CTL_NAME;
	case K_CTLERR:
		return n->id == STATUS_ID ? LFS_FS_STATUS_NAME
		       : n->id == RESOURCES_ID ? LFS_FS_RESOURCES_NAME : LFS_FS_ERRORS_NAME;
	default:
		break;
	}
	const char *r = n->rel;
	const char *s = strrchr(r, '/');
	return s ? s + 1 : r;
}

/* First child of @p n (NULL for a scratch file: its union holds the object). */
static inline struct node *node_first_child(const struct node *n)
{
	return n->kind == K_SCRATCH ? NULL : n->first_child;
}

/* One more lookup of @p n by the kernel (fs->mu held; saturating, see nlookup). */
static inline void node_hold(struct node *n)
{
	if (n->nlookup != UINT32_MAX)
		n->nlookup++;
}

struct lfs_fs {
	pthread_mutex_t mu;
	int rootfd;
	struct newmdl *newmdls; /* pending new model folders (fs_newmodel.c) */
	char *source;        /* absolute, for inotify_add_watch */
	lfs_fs_opts o;
	struct timespec start;
	uid_t uid;
	gid_t gid;

	struct node **slots; /* by id */
	size_t nslots;
	uint32_t *free_ids;  /* ids given back (maybe_free), reused first */
	size_t nfree, free_cap;
	size_t next_id;      /* ids from here to nslots were never used */
	size_t nnodes;
	uint64_t last_gen;   /* generation of the newest node: (id, gen) never repeats */

	struct node **nh;    /* (parent, name) hash */
	size_t nh_size, nh_count;

	lfs_cache cache;
	lfs_errlog errors;
	/* renames of SOURCE names through the mount (fsi_rename_begin/end) */
	/* Deferred frees of strings replaced under running requests (fsi_retire):
	 * requests entering while epoch is E count in active[E & 1]; a string
	 * retired in epoch E goes to retired[E & 1] and is freed once the epoch
	 * has moved on and active[E & 1] is back to 0 (fs_nodes.c). */
	uint64_t epoch;
	unsigned long active[2];
	struct retired *retired[2];
	uint64_t rename_seq;       /* bumped at the start and the end of each */
	unsigned renames_running;
	pthread_cond_t renamed;    /* broadcast when one ends (waited on with mu) */
	uint64_t builds, build_failures;

	/* editing */
	struct mstate *mstates;
	size_t edit_used, edit_max;
	size_t save_max; /* largest text a save takes: edit_max / LFS_SAVE_DIV (docs/editing.md) */
	uint64_t next_sino;
	size_t nhidden;
	uint64_t commits, commit_noops, commit_refused;
	struct inval_list pending; /* notifications queued by requests, sent by the thread */
	struct served *served;     /* SERVED_SLOTS entries, allocated on first use */
	uint64_t inval_batch;      /* notification batches taken by the thread (fs_watch.c) */
	size_t served_unstamped;   /* history entries whose hist_pid is not known yet */
	struct rdrec *rdrecs;      /* RDREC_SLOTS entries, allocated on first use */
	uint64_t rdrec_clock;      /* ticks of struct rdrec.used */
	struct vtext **vt_buckets; /* VTEXT_BUCKETS chains, allocated on first use */
	struct vtext *vt_head, *vt_tail;
	size_t vt_bytes, vt_count;
	struct { pid_t tid, tgid; int64_t when; } tgcache[64]; /* tid -> tgid, seconds (monotonic) */

	/* generated control files (fs_ctl.c): /.legacyfs/status, /.legacyfs/resources */
	lfs_sb ctl_status, ctl_resources;
	struct timespec ctl_resources_at; /* CLOCK_MONOTONIC of its last build (0: never) */
	bool ctl_resources_busy;

	/* watcher / notification thread */
	int ifd, stopfd, kickfd;
	bool thread_running;
	pthread_t thread;
	lfs_fs_notify notify;
	struct node *wh[WATCH_BUCKETS];
	uint64_t nwatches;
	bool watch_warned;

	/* SOURCE on file systems whose changes inotify misses (fsi_fs_untrusted()) */
	char root_fs[16];     /* type name of SOURCE's own file system ("ext4", "nfs", ...) */
	uint64_t remote_devs[16]; /* st_dev of each such file system said once in the log */
	unsigned nremote_devs;
};


/* What a source object is. */
struct srcinfo {
	struct stat st;
	enum nkind kind;   /* K_DIR, K_FILE, K_LINK, K_OTHER, K_MODEL */
	lfs_centry *ce;    /* K_FILE/K_MODEL: cache entry with a reference (or NULL); of a
			    * model from fsi_classify(): maybe a header verdict without views */
	const lfs_viewset *names; /* set by fsi_srcinfo_names() when ce's views are not built:
			    * ce->names (view names, no bytes); NULL: use ce->vs */
};

/* Is @p v a lazy view: an archive's resource (or model candidate) listed with its size, its
 * bytes not in the set? */
static inline bool fsi_view_lazy(const lfs_view *v)
{
	return v && (v->kind == LFS_VIEW_RESOURCE || v->kind == LFS_VIEW_MEMBER) && !v->data &&
	       v->size;
}

/* The views a listing of @p si's model walks: its names-only set or its views. */
static inline const lfs_viewset *fsi_si_vs(const struct srcinfo *si)
{
	return si->names ? si->names : &si->ce->vs;
}

/* Snapshot of what a node is (copied under the lock, used unlocked). */
struct nodeinfo {
	enum nkind kind;
	struct node *node;  /* valid while the kernel holds the inode (see lookup) */
	struct node *model; /* model-side kinds: model_of(node) when taken; else NULL */
};

/* Where a name in a model folder points (views held: release with mloc_put). */
struct mloc {
	struct node *dir, *model;
	char *vpath;
	struct srcinfo si;
	const lfs_view *v;  /* the name is a view */
	bool isdir;         /* the name is a view folder */
	bool writable;      /* the model has writable views */
	bool vwritable;     /* v can be written back */
	bool merr_name;     /* errors.txt at the model root (no view of that name) */
	bool archive;       /* the top of a writable archive folder: names there are
			     * resources (added, removed, renamed: fsi_archive_op) */
};

/* A text to commit, copied out of an overlay or a scratch file. */
struct ctext {
	char *data;
	size_t n;
	bool base_valid;
	uint64_t base_hash; /* the text the writer started from (vtext store) */
	uint64_t base_gen;  /* the generated version it stands for */
	uint64_t gen;
	pid_t saver;        /* thread group saving (0 = unknown): its record after the save */
	int cut;            /* the overlay's cut (EFBIG, ENOSPC, 0): refused unparsed */
};

/*
 * Returned (instead of an errno) by an operation that found its node of
 * another kind than the snapshot it was dispatched on: a scratch file renamed
 * onto a view becomes that view (fsi_rename_commit) while, under -o mt,
 * another request on it is between fsi_node_info() and the operation. The
 * entry points in fs.c take a new snapshot and dispatch again.
 */
#define FSI_KIND_CHANGED (-1)

/* Returned by fsi_member_lookup() when the model candidate is no model: a plain resource. */
#define FSI_NOT_MEMBER (-2)

/* lfs_fs_read.hold_kind */
enum { HOLD_NONE, HOLD_ENTRY, HOLD_MALLOC };

/*
 * Walk callback of view_children(): one immediate child of a view folder
 * (a sub-folder once, or view @p v). Non-zero stops the walk.
 */
typedef int (*vchild_fn)(void *ctx, const char *name, size_t len, bool is_dir, const lfs_view *v);

/* What lfs_fs_create/mknod/mkdir/symlink make: one path, parameterised. */
enum newkind { NEW_FILE, NEW_NODE, NEW_DIR, NEW_SYMLINK };

struct newobj {
	enum newkind what;
	mode_t mode;        /* type and permission bits (NEW_NODE: type from mknod) */
	int flags;          /* NEW_FILE: O_EXCL, O_TRUNC */
	dev_t rdev;         /* NEW_NODE */
	const char *target; /* NEW_SYMLINK */
};

/*
 * Operations of one node kind. The public entry points (fs.c) call through
 * the table of the node's kind; a NULL member gives the default answer
 * written next to it. Every member runs without fs->mu unless noted.
 */
struct node_ops {
	/* classes of kinds */
	bool is_dir;        /* shown as a folder (open/opendir check) */
	bool source_dir;    /* a folder of SOURCE: passthrough names, negative entries cacheable */
	bool model_ns;      /* model folder or view folder: names are views or scratch names */
	bool source;        /* shows a source object by path (renames recompute the path) */
	bool generated;     /* belongs to its model folder whatever the model file's inode */
	bool in_model;      /* lives in a model folder (node->model set) */
	bool volatile_attr; /* attributes never cached (timeout 0) */
	bool is_view;       /* a generated file: the page cache is kept across opens */
	int not_file;       /* errno of read/write/truncate of a non-regular node (0: regular) */

	/* the node itself */
	int (*getattr)(lfs_fs *fs, const struct nodeinfo *ni, struct stat *st);  /* required */
	/* generated kinds: attributes from the model's current views (fs->mu held); NULL: EINVAL */
	int (*gen_attr)(lfs_fs *fs, struct node *c, const struct srcinfo *si, struct mstate *ms,
			struct stat *a);
	int (*readlink)(lfs_fs *fs, const struct nodeinfo *ni, char *buf, size_t bufsz); /* NULL: EINVAL */
	int (*open_write)(lfs_fs *fs, const struct nodeinfo *ni);                         /* NULL: 0 */
	int (*read)(lfs_fs *fs, const struct nodeinfo *ni, size_t size, off_t off,
		    lfs_fs_read *r);                                                      /* NULL: not_file */
	int (*write)(lfs_fs *fs, const struct nodeinfo *ni, const char *buf, size_t size, off_t off,
		     const lfs_fs_ctx *ctx, size_t *written);                             /* NULL: not_file */
	int (*setattr)(lfs_fs *fs, const struct nodeinfo *ni, const struct stat *a, int to_set); /* NULL: EPERM */
	int (*flush)(lfs_fs *fs, const struct nodeinfo *ni, const lfs_fs_ctx *ctx);       /* NULL: 0 */
	int (*fsync)(lfs_fs *fs, const struct nodeinfo *ni, bool datasync);               /* NULL: 0 */
	/* hard link of this node into folder @p np; NULL: fsi_link_elsewhere() */
	int (*link)(lfs_fs *fs, const struct nodeinfo *ni, const struct nodeinfo *np, const char *newname,
		    lfs_fs_entry *e);

	/* as a folder (@p p: this node) */
	int (*lookup)(lfs_fs *fs, const struct nodeinfo *p, const char *name, lfs_fs_entry *e); /* NULL: ENOTDIR */
	int (*snap)(lfs_fs *fs, const struct nodeinfo *p, off_t off, uint64_t parent_ino,
		    struct dirsnap **out);                                                /* NULL: ENOTDIR */
	int (*mknew)(lfs_fs *fs, const struct nodeinfo *p, const char *name, const struct newobj *what,
		     const lfs_fs_ctx *ctx, lfs_fs_entry *e);                             /* NULL: ENOTDIR */
	int (*unlink)(lfs_fs *fs, const struct nodeinfo *p, const char *name);           /* NULL: ENOTDIR */
	int (*rmdir)(lfs_fs *fs, const struct nodeinfo *p, const char *name);            /* NULL: ENOTDIR */
	/* rename of @p name to (@p np, @p newname); NULL: fsi_rename_elsewhere() */
	int (*rename)(lfs_fs *fs, const struct nodeinfo *p, const char *name, const struct nodeinfo *np,
		      const char *newname, unsigned flags);
};

/* The tables, one per kind (defined by the part that implements the kind). */
extern const struct node_ops fsi_root_ops, fsi_dir_ops, fsi_file_ops, fsi_link_ops, fsi_other_ops;
extern const struct node_ops fsi_model_ops, fsi_vdir_ops, fsi_vfile_ops, fsi_ctldir_ops, fsi_ctlerr_ops;
extern const struct node_ops fsi_scratch_ops, fsi_merr_ops;
extern const struct node_ops fsi_newdir_ops, fsi_newfile_ops; /* fs_newmodel.c */

/* The operations of kind @p k. */
const struct node_ops *fsi_kind_ops(enum nkind k);

/* The operations of node @p n (by its current kind). */
static inline const struct node_ops *node_ops_of(const struct node *n)
{
	return fsi_kind_ops(n->kind);
}

/* Does @p n have the source part of struct node (not a model-side node)? */
static inline bool node_has_src(const struct node *n)
{
	return !node_ops_of(n)->in_model;
}

/*
 * The model folder of a model-side node (the node itself for a model
 * folder; NULL for any other node): its nearest K_MODEL ancestor, not
 * stored in the node. fs->mu held (the walk reads parents, which renames
 * change); without it use struct nodeinfo's model (ni_model()).
 */
static inline struct node *model_of(struct node *n)
{
	while (n && n->kind != K_MODEL)
		n = n->parent;
	return n;
}

/* model_of() the node of snapshot @p ni, without fs->mu. */
static inline struct node *ni_model(const struct nodeinfo *ni)
{
	return ni->kind == K_MODEL ? ni->node : ni->model;
}

/* Lock helpers: fs->mu protects tables, cache and editing state. */
static inline void fs_lock(lfs_fs *fs)
{
	pthread_mutex_lock(&fs->mu);
}

static inline void fs_unlock(lfs_fs *fs)
{
	pthread_mutex_unlock(&fs->mu);
}

void fsi_log(lfs_fs *fs, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Thread id of the FUSE request being served by this thread, for the parts
 * whose node_ops member has no ctx (READ, RENAME): set by
 * lfs_fs_read_begin_ctx() and lfs_fs_rename_ctx() for the call (0 = unknown).
 */
extern _Thread_local pid_t fsi_req_pid;

/*
 * Is node @p n (any kind; a model-side node by its model folder, fs->mu held
 * or the node's model given in @p model) on a file system inotify cannot
 * follow? Then its kernel timeouts are fs->o.remote_timeout.
 */
static inline bool node_remote(const struct node *n, const struct node *model)
{
	const struct node *s = node_has_src(n) ? n : model;
	return s && s->remote;
}

/* BEGIN PROTOTYPES: functions the parts share, by defining file (contracts at the definitions) */
/* fs_nodes.c */
int64_t fsi_ts_ns(const struct timespec *t);
uint64_t fsi_view_ino(const struct node *model, const char *vpath);
uint64_t fsi_node_sino(struct node *n);
char *fsi_join_rel(const char *parent_rel, const char *name);
char *fsi_join_view(const struct node *parent, const char *name);
bool fsi_is_dot(const char *name);
struct node *fsi_find_child(lfs_fs *fs, struct node *parent, const char *name);
void fsi_nh_remove(lfs_fs *fs, struct node *n);
void fsi_snap_unref(struct dirsnap *s);
int fsi_alloc_id(lfs_fs *fs, uint64_t *id);
bool fsi_is_ctl_name(enum nkind dir, const char *name);
struct node *fsi_node_new(lfs_fs *fs, uint64_t id, enum nkind kind, struct node *parent,
		      const char *name, char *rel_owned);
void fsi_node_free_path(struct node *n);
int fsi_node_set_path(lfs_fs *fs, struct node *n, const char *name, char *rel);
void fsi_node_free(lfs_fs *fs, struct node *n);
void fsi_srcinfo_release(lfs_fs *fs, struct srcinfo *si);
lfs_centry *fsi_entry_for(lfs_fs *fs, const char *rel, const struct stat *st);
int fsi_classify(lfs_fs *fs, const char *rel, struct srcinfo *si);
int fsi_srcinfo_views(lfs_fs *fs, struct srcinfo *si);
int fsi_srcinfo_names(lfs_fs *fs, struct srcinfo *si);
bool fsi_names_fit(const lfs_fs *fs, const lfs_cache_key *k);
int fsi_classify_node(lfs_fs *fs, const struct node *n, struct srcinfo *si);
int fsi_openat_node(lfs_fs *fs, const struct node *n, int flags);
void fsi_rename_begin(lfs_fs *fs);
void fsi_rename_end(lfs_fs *fs);
struct timespec fsi_now_real(void);
struct timespec fsi_now_mono(void);
uint64_t fsi_text_hash(const char *p, size_t n);
double fsi_node_timeout(lfs_fs *fs, struct node *n);
void fsi_entry_timeouts(lfs_fs *fs, struct node *n, lfs_fs_entry *e);
struct node *fsi_child_for(lfs_fs *fs, struct node *parent, const char *name, enum nkind kind,
		       uint64_t dev, uint64_t ino, const char *rel, int *err);
int fsi_node_info(lfs_fs *fs, uint64_t ino, struct nodeinfo *ni);

/*
 * Request brackets for deferred frees: every entry point of fs.h that runs
 * on a request starts with FSI_REQUEST(fs); the bracket ends when the
 * function returns (GCC/clang cleanup attribute). Strings given to
 * fsi_retire() (fs->mu held) stay valid until every request that began
 * before the call has ended. Nesting is fine (lfs_fs_readdir -> lookup).
 */
struct fsi_req {
	lfs_fs *fs;
	unsigned slot;
};
struct fsi_req fsi_req_enter(lfs_fs *fs);
void fsi_req_leave(struct fsi_req *r);
void fsi_retire(lfs_fs *fs, void *p);
void fsi_retired_free_all(lfs_fs *fs); /* lfs_fs_free: no request left */
#define FSI_REQUEST(fs) \
	__attribute__((cleanup(fsi_req_leave))) struct fsi_req fsi_req_ = fsi_req_enter(fs); \
	(void)fsi_req_
void fsi_detach(lfs_fs *fs, struct node *n);
int fsi_dsent_cmp(const void *a, const void *b);
int fsi_snap_add(struct dirsnap *s, size_t *cap, const char *name, size_t len, uint64_t ino,
	     unsigned char type);
int fsi_give_entry(lfs_fs *fs, struct node *c, const struct srcinfo *si, lfs_fs_entry *e);
int fsi_node_move(lfs_fs *fs, struct node *n, struct node *np, const char *newname, const char *vrel);
int fsi_read_copy(lfs_fs_read *r, const char *src, size_t total, size_t size, off_t off);
int fsi_link_elsewhere(const struct nodeinfo *np);
int fsi_link_eperm(lfs_fs *fs, const struct nodeinfo *ni, const struct nodeinfo *np,
	       const char *newname, lfs_fs_entry *e);
int fsi_rename_elsewhere(const struct nodeinfo *p, const struct nodeinfo *np);

/* fs_container.c */
int fsi_member_lookup(lfs_fs *fs, struct node *p, const char *name, const char *vpath,
		      lfs_fs_entry *e);
int fsi_member_lookup_direct(lfs_fs *fs, struct node *p, const char *name, lfs_fs_entry *e);
bool fsi_member_is_model(lfs_fs *fs, struct node *model, const char *name);
lfs_centry *fsi_resource_entry(lfs_fs *fs, const lfs_centry *ce, const char *vpath, int *err);
int fsi_view_bytes(lfs_fs *fs, struct srcinfo *si, const char *vpath, const lfs_view **v);
struct lfs_container;
int fsi_write_member(lfs_fs *fs, const struct lfs_container *c, const char *arch, const char *name,
		     const uint8_t *out, size_t outn, const struct stat *st, struct stat *nst,
		     int *kept, int *dsync, char *what, size_t whatsz);

/* fs_ctl.c */
int fsi_ctl_refresh(lfs_fs *fs, uint32_t id);
const lfs_sb *fsi_ctl_text(lfs_fs *fs, uint32_t id);
uint32_t fsi_ctl_id_of(const char *name);

/* fs_pass.c */
int fsi_pass_getattr(lfs_fs *fs, const struct nodeinfo *ni, struct stat *st);
void fsi_fill_source(struct stat *a, const struct srcinfo *si, nlink_t nl);

/* fs_list.c */
void fsi_prefetch_due(lfs_fs *fs, struct node *p);
void fsi_snap_expire(lfs_fs *fs, struct node *n);
int fsi_source_snap(lfs_fs *fs, const struct nodeinfo *ni, off_t off, uint64_t parent_ino,
		    struct dirsnap **out);

/* fs_model.c */
bool fsi_view_is_dir(const lfs_viewset *vs, const char *vpath);
void fsi_fill_virtual_dir(struct stat *a, const struct stat *src, const lfs_viewset *vs,
		      const char *vpath, uint64_t ino);
void fsi_fill_view_file(struct stat *a, const struct stat *src, size_t size,
		    const struct timespec *mtime, bool writable, uint64_t ino);
void fsi_fill_ctl(lfs_fs *fs, struct stat *a, uint32_t id);
int fsi_model_views(lfs_fs *fs, const struct node *model, struct srcinfo *si);
int fsi_model_names(lfs_fs *fs, const struct node *model, struct srcinfo *si);
int fsi_fill_gen(lfs_fs *fs, struct node *c, const struct srcinfo *si, struct stat *a);
int fsi_gen_getattr(lfs_fs *fs, const struct nodeinfo *ni, struct stat *st);

int fsi_open_write_erofs(lfs_fs *fs, const struct nodeinfo *ni);
int fsi_write_erofs(lfs_fs *fs, const struct nodeinfo *ni, const char *buf, size_t size, off_t off,
		const lfs_fs_ctx *ctx, size_t *written);

/* fs_edit.c */
struct mstate *fsi_ms_find(lfs_fs *fs, const char *rel);
struct mstate *fsi_ms_get(lfs_fs *fs, const char *rel);
struct sname *fsi_sname_find(struct mstate *ms, const char *vpath);
struct overlay *fsi_ovl_find(struct mstate *ms, const char *vpath);
void fsi_ovl_drop(lfs_fs *fs, struct mstate *ms, const char *vpath);
void fsi_edit_account(lfs_fs *fs, size_t oldlen, size_t newlen);
bool fsi_pbase_take(struct mstate *ms, const char *vpath, uint64_t *hash);
void fsi_pbase_set(struct mstate *ms, const char *vpath, uint64_t hash);
bool fsi_served_get(lfs_fs *fs, const char *rel, const char *vpath, uint64_t *hash);
bool fsi_served_known(lfs_fs *fs, const char *rel, const char *vpath, const lfs_cache_key *v);
void fsi_served_set(lfs_fs *fs, const char *rel, const char *vpath, uint64_t hash,
		const lfs_cache_key *v);
struct overlay *fsi_ovl_new(lfs_fs *fs, struct mstate *ms, const char *vpath, const char *init,
			size_t n, int *err);
bool fsi_hidden_active(lfs_fs *fs, struct mstate *ms, const char *vpath);
void fsi_hidden_clear(lfs_fs *fs, struct mstate *ms, const char *vpath);
int fsi_hidden_add(lfs_fs *fs, struct mstate *ms, const char *vpath, uint64_t dir_id);
void fsi_hidden_expire(lfs_fs *fs, struct inval_list *l);
/* -o scratch_ttl (fs_edit.c): exporters' scratch *.mtl unchanged that long are
 * dropped (fs->mu held); _wait: the watcher's poll timeout for it, ms (-1: none). */
void fsi_scratch_expire(lfs_fs *fs, struct inval_list *l);
int fsi_scratch_ttl_wait(lfs_fs *fs);
void fsi_merr_clear(struct mstate *ms, const char *vpath);
void fsi_merr_clear_all(struct mstate *ms);
void fsi_merr_set(struct mstate *ms, const char *vpath, const char *text);
void fsi_sobj_unref(lfs_fs *fs, struct sobj *o);
struct sname *fsi_sname_add(struct mstate *ms, const char *vpath, struct sobj *o);
void fsi_sname_remove(lfs_fs *fs, struct mstate *ms, struct sname *s);
void fsi_scratch_put(lfs_fs *fs, struct mstate *ms, const char *vpath, const char *data, size_t n,
		 mode_t perm, uid_t uid, gid_t gid);
void fsi_ms_free(lfs_fs *fs, struct mstate *ms);
void fsi_vdir_of(const char *vpath, char *buf, size_t bufsz);
bool fsi_pbase_peek(struct mstate *ms, const char *vpath, uint64_t *hash);
int fsi_view_change(lfs_fs *fs, const struct nodeinfo *ni, const char *buf, size_t size, uint64_t off,
		uint64_t newsize, pid_t writer);
struct sobj *fsi_sobj_with(lfs_fs *fs, mode_t mode, uid_t uid, gid_t gid, const char *data, size_t n,
		       int *err);
void fsi_sobj_discard(lfs_fs *fs, struct sobj *o);
pid_t fsi_tgid_cached(lfs_fs *fs, pid_t tid);
void fsi_vtext_put(lfs_fs *fs, uint64_t hash, const char *data, size_t n);
int fsi_vtext_copy(lfs_fs *fs, uint64_t hash, char **out, size_t *n);
void fsi_rdrec_set(lfs_fs *fs, pid_t tgid, const char *rel, const char *vpath, uint64_t base,
	       uint64_t gen);
bool fsi_rdrec_get(lfs_fs *fs, pid_t tgid, const char *rel, const char *vpath, uint64_t *base,
	       uint64_t *gen);
void fsi_view_served(lfs_fs *fs, const char *rel, const char *vpath, const lfs_view *v,
		 const lfs_cache_key *k, pid_t tid);
bool fsi_base_hist(lfs_fs *fs, const char *rel, const char *vpath, pid_t tgid, uint64_t *base,
	       uint64_t *gen);
void fsi_served_saved(lfs_fs *fs, const char *rel, const char *vpath, uint64_t hash,
		      const lfs_cache_key *v);

/* The rule that chose a save's base (fsi_save_base), in the order they are tried. */
enum fsi_base_rule {
	FSI_BASE_NONE = 0, /* no base: the text is applied to the current version as it is */
	FSI_BASE_COPY,     /* the base the saved text carries (a scratch copy of the view) */
	FSI_BASE_READ,     /* what the saving process last read or saved (its read record) */
	FSI_BASE_MOVED,    /* what an editor that moved the view away had read */
	FSI_BASE_HIST,     /* the served version the process could have read (fsi_base_hist) */
};

/* A save's base: the text it started from (hash, its text in the vtext store)
 * and the generated version that text stands for. */
struct fsi_base {
	bool valid;
	uint64_t hash;
	uint64_t gen;
};

/* The save whose base fsi_save_base() decides. */
struct fsi_save_q {
	const char *rel;   /* the model file */
	const char *vpath; /* the view saved */
	pid_t saver;       /* thread group of the saving process (0: unknown) */
	struct fsi_base copy; /* FSI_BASE_COPY: the saved scratch file's own base (valid or not) */
	/* FSI_BASE_MOVED: NULL = the moved-away base the model keeps for vpath
	 * (fsi_pbase_peek); else this one (an overlay took it when it was made) */
	const struct fsi_base *moved;
};

enum fsi_base_rule fsi_save_base(lfs_fs *fs, struct mstate *ms, const struct fsi_save_q *q,
				 struct fsi_base *out);
size_t fsi_served_since(lfs_fs *fs, const char *rel, const char *vpath, uint64_t gen,
			uint64_t *out, size_t max);
void fsi_served_after_queue(lfs_fs *fs, const char *rel, const char *vpath);
void fsi_served_stamp(lfs_fs *fs, uint64_t batch, int32_t last_pid);
int32_t fsi_last_pid(void);
void fsi_edit_tables_free(lfs_fs *fs);

/* fs_scratch.c */
struct node *fsi_scratch_node(lfs_fs *fs, struct node *p, const char *name, struct sname *sn, int *err);
int fsi_model_mknew(lfs_fs *fs, const struct nodeinfo *pi, const char *name, const struct newobj *w,
		const lfs_fs_ctx *ctx, lfs_fs_entry *e);
int fsi_model_unlink(lfs_fs *fs, const struct nodeinfo *pi, const char *name);
int fsi_model_rmdir(lfs_fs *fs, const struct nodeinfo *p, const char *name);
int fsi_model_rename_op(lfs_fs *fs, const struct nodeinfo *p, const char *name,
		    const struct nodeinfo *np, const char *newname, unsigned flags);
int fsi_model_link_op(lfs_fs *fs, const struct nodeinfo *ni, const struct nodeinfo *np,
		  const char *newname, lfs_fs_entry *e);
int fsi_scratch_flush(lfs_fs *fs, const struct nodeinfo *ni, const lfs_fs_ctx *ctx);

/* fs_commit.c */
/* An edit of an archive's resources (fsi_archive_op, archive_edit.h). */
enum fsi_aop_what { FSI_AOP_ADD, FSI_AOP_REMOVE, FSI_AOP_RENAME };
struct fsi_aop {
	enum fsi_aop_what what;
	const char *name;    /* the resource as listed (ADD: the new name) */
	const char *to;      /* RENAME: the new name */
	bool replace;        /* RENAME: onto an existing resource */
	const uint8_t *data; /* ADD: payload */
	size_t dn;
};
int fsi_archive_op(lfs_fs *fs, struct mstate *ms, struct node *model, const struct fsi_aop *op,
		   char *listed);
pid_t fsi_tgid_of(pid_t tid);
bool fsi_is_plain_file(lfs_fs *fs, const char *rel);
int fsi_commit_overlay(lfs_fs *fs, struct node *nd, bool fsync, pid_t closer);
int fsi_rename_commit(lfs_fs *fs, struct mstate *ms, struct mloc *a, struct mloc *b, struct node *p,
		  const char *name, struct node *np, const char *newname);

/* fs_watch.c */
bool fsi_fs_untrusted(int fd, char *name, size_t namesz);
bool fsi_dir_untrusted(lfs_fs *fs, const char *rel, uint64_t dev);
void fsi_wh_remove(lfs_fs *fs, struct node *n);
void fsi_add_watch(lfs_fs *fs, struct node *n);
void fsi_kick(lfs_fs *fs);
void fsi_inval_add(struct inval_list *l, uint64_t id, const char *name);
void fsi_inval_subtree(struct inval_list *l, struct node *n);

/*
 * New models from text (fs_newmodel.c, docs/editing.md "New models").
 * fsi_newmdl_mkdir: mkdir of @p name (SOURCE path @p rel) in source folder
 * @p p: a pending model folder when the name has the extension of a format
 * that compiles from text (ENOSYS: not such a name, make a plain folder;
 * EINVAL: not a valid resref; EEXIST). fsi_newmdl_lookup / _rmdir: the
 * pending folder of that name (ENOENT: none). fsi_newmdl_list: add the
 * pending folders of source folder @p dir to listing @p s. fsi_newmdl_rename_model:
 * rename model file @p oldrel to @p newrel (ENOSYS: not a compiled format's
 * model, rename as a file), its model name following. The model name
 * follows the resref (nwn_rename.h).
 */
int fsi_newmdl_mkdir(lfs_fs *fs, struct node *p, const char *name, const char *rel, mode_t mode,
		     lfs_fs_entry *e);
int fsi_newmdl_lookup(lfs_fs *fs, struct node *p, const char *name, const char *rel, lfs_fs_entry *e);
int fsi_newmdl_rmdir(lfs_fs *fs, struct node *p, const char *name, const char *rel);
int fsi_newmdl_list(lfs_fs *fs, struct node *dir, struct dirsnap *s, size_t *cap);
int fsi_newmdl_rename_model(lfs_fs *fs, const char *oldrel, const char *newrel, unsigned flags);
void fsi_newmdl_free_all(lfs_fs *fs);
/* END PROTOTYPES */

#endif
