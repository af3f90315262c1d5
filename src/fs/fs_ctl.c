/**
 * @file fs_ctl.c
 * The generated files of /.legacyfs besides `errors` (docs/mount.md
 * "/.legacyfs"):
 *   status     the mount's state now, one "name value" line each: what the
 *              view cache holds against its bound, the shared archive
 *              tables, nodes, builds, saves, whether SOURCE is watched;
 *              made again whenever the file is looked at (stat, open, a
 *              read at offset 0);
 *   resources  for every resource of SOURCE by ResRef and type, where it is
 *              found and which copy wins (texture.h
 *              lfs_texture_resources_text(): the game's precedence), made
 *              again when looked at at least LFS_CTL_RESOURCES_MAX_AGE
 *              seconds after the last time (it walks SOURCE's index).
 * Texts are kept in the fs (fs->mu) so that a read sees one version.
 */
#define _GNU_SOURCE
#include "fs_int.h"

#include "texture.h"

#include "registry/container.h"

#include <errno.h>
#include <string.h>

/** Seconds a built /.legacyfs/resources is served before it is made again. */
#define LFS_CTL_RESOURCES_MAX_AGE 2

uint32_t fsi_ctl_id_of(const char *name)
{
	if (!strcmp(name, LFS_FS_ERRORS_NAME))
		return ERRORS_ID;
	if (!strcmp(name, LFS_FS_STATUS_NAME))
		return STATUS_ID;
	if (!strcmp(name, LFS_FS_RESOURCES_NAME))
		return RESOURCES_ID;
	return 0;
}

/* The status text (fs->mu held). */
static void status_text(lfs_fs *fs, lfs_sb *sb)
{
	lfs_sb_free(sb);
	lfs_sb_printf(sb, "cache_entries %zu\n", fs->cache.n);
	lfs_sb_printf(sb, "cache_bytes %zu\n", fs->cache.bytes);
	lfs_sb_printf(sb, "cache_reserved_bytes %zu\n", fs->cache.reserved);
	lfs_sb_printf(sb, "cache_bound_bytes %zu\n", fs->cache.max_bytes);
	lfs_sb_printf(sb, "cache_hits %llu\n", (unsigned long long)fs->cache.hits);
	lfs_sb_printf(sb, "cache_misses %llu\n", (unsigned long long)fs->cache.misses);
	lfs_sb_printf(sb, "cache_evictions %llu\n", (unsigned long long)fs->cache.evictions);
	lfs_sb_printf(sb, "archive_tables_bytes %zu\n", lfs_container_held());
	lfs_sb_printf(sb, "nodes %zu\n", fs->nnodes);
	lfs_sb_printf(sb, "builds %llu\n", (unsigned long long)fs->builds);
	lfs_sb_printf(sb, "build_failures %llu\n", (unsigned long long)fs->build_failures);
	lfs_sb_printf(sb, "commits %llu\n", (unsigned long long)fs->commits);
	lfs_sb_printf(sb, "commits_unchanged %llu\n", (unsigned long long)fs->commit_noops);
	lfs_sb_printf(sb, "commits_refused %llu\n", (unsigned long long)fs->commit_refused);
	lfs_sb_printf(sb, "edit_bytes %zu\n", fs->edit_used);
	lfs_sb_printf(sb, "watch %s\n", fs->ifd >= 0 ? "inotify" : "off");
	lfs_sb_printf(sb, "watches %llu\n", (unsigned long long)fs->nwatches);
	lfs_sb_printf(sb, "attr_timeout_s %g\n", fs->o.timeout);
	/* SOURCE (or folders below it) on a file system inotify cannot follow */
	lfs_sb_printf(sb, "source_fs %s\n", fs->root_fs);
	lfs_sb_printf(sb, "source_fs_watched %s\n",
		      fs->slots[LFS_FS_ROOT_ID]->remote ? "no: revalidated by stat"
		      : fs->ifd < 0 ? "off"
		      : "yes");
	lfs_sb_printf(sb, "remote_file_systems %u\n", fs->nremote_devs);
	lfs_sb_printf(sb, "remote_attr_timeout_s %g\n", fs->o.remote_timeout);
}

int fsi_ctl_refresh(lfs_fs *fs, uint32_t id)
{
	if (id == STATUS_ID) {
		fs_lock(fs);
		status_text(fs, &fs->ctl_status);
		int r = lfs_sb_ok(&fs->ctl_status) ? 0 : ENOMEM;
		fs_unlock(fs);
		return r;
	}
	if (id != RESOURCES_ID)
		return 0;
	struct timespec now = fsi_now_mono();
	fs_lock(fs);
	while (fs->ctl_resources_busy)
		pthread_cond_wait(&fs->cache.built, &fs->mu);
	bool fresh = fs->ctl_resources_at.tv_sec &&
		     now.tv_sec - fs->ctl_resources_at.tv_sec < LFS_CTL_RESOURCES_MAX_AGE;
	if (fresh) {
		fs_unlock(fs);
		return 0;
	}
	fs->ctl_resources_busy = true;
	fs_unlock(fs);
	/* walks SOURCE's index: unlocked */
	lfs_sb text = { 0 };
	bool ok = lfs_texture_resources_text(fs->rootfd, &text) && lfs_sb_ok(&text);
	fs_lock(fs);
	if (ok) {
		lfs_sb_free(&fs->ctl_resources);
		fs->ctl_resources = text;
		fs->ctl_resources_at = now;
	} else {
		lfs_sb_free(&text);
	}
	fs->ctl_resources_busy = false;
	pthread_cond_broadcast(&fs->cache.built);
	fs_unlock(fs);
	return ok ? 0 : ENOMEM;
}

const lfs_sb *fsi_ctl_text(lfs_fs *fs, uint32_t id)
{
	return id == STATUS_ID ? &fs->ctl_status : id == RESOURCES_ID ? &fs->ctl_resources : NULL;
}
