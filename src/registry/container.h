/**
 * @file container.h
 * Containers: file formats that hold other files (NWN's ERF family and
 * KEY/BIF: src/formats/nwnarchive/), shown by the mount as folders of their
 * resources, each model inside a model folder of its own
 * (docs/archives.md). The table of container formats sits next to the model
 * formats' registry (registry.c): it is the one place that knows which
 * names are containers; the file system layer (src/fs) asks it and calls a
 * row's operations, never a codec.
 *
 * A resource inside a container is named by a member path
 * "<container>/<name>" relative to SOURCE, <name> as the container's folder
 * lists it (e.g. "hak/cep.hak/c_bodak.mdl", "data/nwn_base.key/x.tga").
 * Its version is the container file's (stat) plus, for a container built
 * from other files (a KEY from its BIFs), the count of changes of those
 * files reported with lfs_container_aux_changed().
 *
 * No FUSE code. Thread-safe (rows keep their shared tables under their own
 * locks).
 */
#ifndef LFS_VIEWS_CONTAINER_H
#define LFS_VIEWS_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "../common/error.h"
#include "../common/strbuf.h"
#include "viewset.h"

/** What a new name at the top of a writable container's folder would be. */
typedef enum lfs_cname_kind {
	LFS_CNAME_SCRATCH = 0, /**< not a resource name (editors' temp files): kept in memory */
	LFS_CNAME_RESOURCE,    /**< a resource name: added to the container when closed */
	LFS_CNAME_BAD,	       /**< looks like a resource but breaks the naming rules: refused */
} lfs_cname_kind;

/** Called once per resource by lfs_container.each: its name as stored and its type. */
typedef void (*lfs_container_each_fn)(void *ctx, const char *resref, uint16_t type);

/**
 * One container format. Paths are relative to @p rootfd (SOURCE's root);
 * @p rel names the container file, @p name a resource as listed. Errno
 * returns: 0, ENOENT (no such container or resource), EFBIG (over @p max),
 * EIO (cannot be read), ENOMEM.
 */
typedef struct lfs_container {
	const char *name;		 /**< e.g. "nwn-archive" */
	const char *const *extensions;	 /**< NULL-terminated, with the dot, any case */
	const lfs_format *row;		 /**< the format row its listings carry (vs->format) */
	/** Header test of file @p name (@p n bytes of its start). */
	bool (*detect)(const char *name, const uint8_t *head, size_t n);
	/** Can resources of file @p name be written (false: a read-only folder)? */
	bool (*writable)(const char *name);
	/** Is file @p name one other containers of this kind are built from (a BIF)? */
	bool (*aux_name)(const char *name);
	/** Does container file @p name depend on aux files (a KEY)? */
	bool (*uses_aux)(const char *name);
	/** The folder of @p rel from its tables (viewset.h):
	 *  resources lazy (size, no bytes), models LFS_VIEW_MEMBER; *st its stat. */
	lfs_err (*list)(int rootfd, const char *rel, size_t max_res, struct stat *st,
			lfs_viewset *vs, lfs_sb *problems, lfs_error *err);
	/** Payload of resource @p name of @p rel; *st the container's stat; *ro read-only. */
	int (*member_read)(int rootfd, const char *rel, const char *name, size_t max, uint8_t **out,
			   size_t *n, struct stat *st, bool *ro);
	/** Is @p name a resource of @p rel? *st the container's stat, *size its bytes. */
	int (*member_stat)(int rootfd, const char *rel, const char *name, struct stat *st,
			   uint64_t *size);
	/** Every resource of @p rel (names as stored, types); false when it cannot be read. */
	bool (*each)(int rootfd, const char *rel, lfs_container_each_fn fn, void *ctx);
	/** The best resource of ResRef @p resref (ignoring case) among @p types (first =
	 *  best) in @p rel: its ResRef as stored (@p stored, 33 bytes) and type. */
	bool (*find)(int rootfd, const char *rel, const char *resref, const uint16_t *types,
		     size_t ntypes, char stored[33], uint16_t *type);
	/** Resource @p resref (ignoring case) of @p type from @p rel; false when absent. */
	bool (*read_resref)(int rootfd, const char *rel, const char *resref, uint16_t type,
			    size_t max, uint8_t **out, size_t *n);
	/** Edits, bytes in, bytes out (src/formats/nwnarchive/edit.h for the rules). */
	lfs_err (*apply)(const uint8_t *orig, size_t n, const char *vpath, const lfs_view *cached,
			 const char *text, size_t tn, const lfs_siblings *sib, uint8_t **out,
			 size_t *outn, char **reread, size_t *rn, lfs_error *err);
	lfs_err (*add)(const uint8_t *orig, size_t n, const char *name, const uint8_t *data,
		       size_t dn, uint8_t **out, size_t *outn, char *listed, lfs_error *err);
	lfs_err (*remove)(const uint8_t *orig, size_t n, const char *name, uint8_t **out,
			  size_t *outn, lfs_error *err);
	lfs_err (*rename)(const uint8_t *orig, size_t n, const char *from, const char *to,
			  bool replace, uint8_t **out, size_t *outn, lfs_error *err);
	/** What a new name at the top of the folder is; @p why (≥ 160 bytes) says why it is bad. */
	lfs_cname_kind (*name_class)(const char *name, char *why);
	/** The archives a module file @p data (@p n bytes; NWN: module.ifo) uses, in
	 *  precedence order (first wins): *names malloc'd, each malloc'd. */
	lfs_err (*module_deps)(const uint8_t *data, size_t n, char ***names, size_t *nn,
			       lfs_error *err);
	/** Drop the shared tables nobody uses (read again when next asked). */
	void (*flush)(void);
	/** Bytes the shared tables hold now. */
	size_t (*held)(void);
} lfs_container;

/** The container whose extension @p name (a base name) has, or NULL. */
const lfs_container *lfs_container_for_name(const char *name);

/** The container file @p name (base name) is by its extension and header (@p n bytes), or NULL. */
const lfs_container *lfs_container_detect(const char *name, const uint8_t *head, size_t n);

/** The container whose listing format row is @p f, or NULL (@p f a model format). */
const lfs_container *lfs_container_of(const lfs_format *f);

/**
 * Split member path @p rel "<container>/<name>" whose folder part has a
 * container's extension: the container's path into @p arch (@p archsz
 * bytes), *@p name into @p rel, *@p c the container. False otherwise
 * (nothing is read).
 */
bool lfs_container_member(const char *rel, char *arch, size_t archsz, const char **name,
			  const lfs_container **c);

/** lfs_container.member_read of member path @p rel (ENOENT when it is none). */
int lfs_container_member_read(int rootfd, const char *rel, size_t max, uint8_t **out, size_t *n,
			      struct stat *st, bool *ro);

/** lfs_container.member_stat of member path @p rel (ENOENT when it is none). */
int lfs_container_member_stat(int rootfd, const char *rel, struct stat *st, uint64_t *size);

/** Is file @p name one some container is built from (a BIF)? Nothing is counted. */
bool lfs_container_aux_name(const char *name);

/**
 * A file named @p name changed (the watcher): when it is a container's aux
 * file (a BIF), every container that uses aux files gets a new version.
 * Returns whether it was one. Any thread.
 */
bool lfs_container_aux_changed(const char *name);

/**
 * The aux-change count a version of @p rel depends on: for a container that
 * uses aux files, or a member of one, the changes reported so far; else 0.
 */
uint64_t lfs_container_version(const char *rel);

/** Drop every container's unused shared tables. */
void lfs_container_flush(void);

/** Bytes every container's shared tables hold now. */
size_t lfs_container_held(void);

#endif
