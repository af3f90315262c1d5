/**
 * @file thumbcache.h
 * Disk cache of thumbnails (docs/thumbnails.md "Disk cache"): one file per
 * (model content, renderer version, edge), shared by every mount and every
 * daemon of the user, so a second mount shows thumbnails without rendering.
 *
 * Key: SHA-256 (nettle; FIPS 180-4 "Secure Hash Standard") of the model
 * file's bytes, hashed again with LFS_THUMB_VERSION and the edge in pixels;
 * the file is "<64 hex digits>.thumb" in the cache folder. What the texture
 * lookup found is not known before rendering, so each file also stores the
 * render's *dependencies*: a text the caller writes (one line per texture
 * resref the render asked for, with the identity of the file it found or
 * "-"), which the caller checks against the textures as they are now before
 * using a hit (a changed, added or removed texture = a miss).
 *
 * File layout (all text up to the PNG, decimal lengths):
 *     "LFSTHUMB 1\n" "deps <D>\n" <D bytes> "png <P>\n" <P bytes of PNG>
 *
 * Safety: a file is written under a unique temporary name in the folder
 * (".tmp-<pid>-<thread>-<n>") and renamed over its final name (atomic: a
 * concurrent daemon sees the old file, the new one or none, never a partial
 * one); no fsync (a lost file is only a miss). A read validates the layout,
 * the PNG signature, an IHDR of the expected edge and the final IEND chunk;
 * a file that fails is removed (and a later put replaces it). Every failure
 * (read-only folder, full disk, permissions) is returned as an errno; none
 * of them is fatal to the caller.
 *
 * Bound: after each put the folder's cache files are summed; while the sum
 * is over the bound the least recently used (oldest mtime; a hit touches the
 * file's mtime) are removed. Temporary files older than an hour (a daemon
 * that died mid-write) are removed too.
 *
 * Thread safe (no shared state besides a counter); no FUSE code.
 */
#ifndef LFS_FS_THUMBCACHE_H
#define LFS_FS_THUMBCACHE_H

#include <stddef.h>
#include <stdint.h>

/** Identity of one thumbnail: SHA-256 of (model hash, version, edge). */
typedef struct lfs_thumbcache_key {
	uint8_t b[32];
} lfs_thumbcache_key;

/** Largest cache file read, bytes (a 1024 px PNG is at most ~4.2 MB). */
#define LFS_THUMBCACHE_FILE_MAX ((size_t)16 << 20)
/** Largest dependency text stored, bytes. */
#define LFS_THUMBCACHE_DEPS_MAX ((size_t)64 << 10)

/**
 * The key of model bytes @p model (@p n bytes) drawn by renderer version
 * @p version at @p edge pixels.
 */
void lfs_thumbcache_key_of(const uint8_t *model, size_t n, unsigned version, unsigned edge,
			   lfs_thumbcache_key *k);

/**
 * The cache file name of @p k ("<64 hex>.thumb") into @p out (at least
 * LFS_THUMBCACHE_NAME_MAX bytes).
 */
void lfs_thumbcache_name(const lfs_thumbcache_key *k, char *out);
#define LFS_THUMBCACHE_NAME_MAX 72

/**
 * Look @p k up in folder @p dir. On a hit the file's mtime is set to now
 * (least recently used order) and *deps (NUL-terminated) and *png are
 * malloc'd (caller frees both).
 * @param edge  the edge the PNG must have (IHDR width and height)
 * @return 0 on a hit; ENOENT when absent; EBADMSG when the file was invalid
 *         (it is removed); ENOMEM; other errno of open/read.
 */
int lfs_thumbcache_get(const char *dir, const lfs_thumbcache_key *k, unsigned edge, char **deps,
		       uint8_t **png, size_t *pngn);

/**
 * Store @p png (@p n bytes) with dependency text @p deps under @p k in
 * folder @p dir (created, with its parents, mode 0700, when missing), then
 * bound the folder to @p max_bytes (lfs_thumbcache_trim()).
 * @return 0; EINVAL when @p deps or @p png is too large; otherwise the errno
 *         of mkdir/open/write/rename (EROFS, ENOSPC, EACCES, ...): nothing
 *         is left behind.
 */
int lfs_thumbcache_put(const char *dir, size_t max_bytes, const lfs_thumbcache_key *k,
		       const char *deps, const uint8_t *png, size_t n);

/**
 * Remove the least recently used cache files of @p dir (by mtime, oldest
 * first; ties by name) until their sizes sum to at most @p max_bytes, and
 * temporary files older than an hour. @p max_bytes 0: no bound.
 * @return the number of files removed, or -errno when @p dir cannot be read.
 */
long lfs_thumbcache_trim(const char *dir, size_t max_bytes);

#endif
