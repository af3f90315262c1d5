/**
 * @file resorder.h
 * Which copy of a resource wins under SOURCE: game install layouts, the
 * module's hak order, and the one precedence rule (docs/archives.md
 * "Resources by ResRef"), shared by the texture/supermodel index (texture.c)
 * and the "which resource wins" listing (lfs_texture_resources_text()).
 *
 * THE RULE lives in one place: the tier enum below (its order) and
 * lfs_resorder_cmp(). Highest first:
 *
 *  | tier                   | what                                              |
 *  | ---------------------- | ------------------------------------------------- |
 *  | LFS_RES_DEVELOPMENT    | loose, in an NWN:EE `development/` folder          |
 *  | LFS_RES_MODULE_HAK     | a hak of the module's `Mod_HakList`, first listed wins |
 *  | LFS_RES_MODULE         | the module's own resources (.mod, unpacked folder) |
 *  | LFS_RES_OVERRIDE       | loose, `override/` anywhere; an install's `ovr/` (EE `lang/<xx>/data/ovr` above `ovr`) |
 *  | LFS_RES_LOOSE          | other loose files outside a game install           |
 *  | LFS_RES_ARCHIVE        | other ERF-family archives (texturepacks, haks not listed) |
 *  | LFS_RES_KEY            | KEY/BIF resources, the later key of the game's load order first |
 *  | LFS_RES_INSTALL_OTHER  | other loose files inside a game install            |
 *
 * Within a tier: `sub` (hak list position; override kind; 1000 − key rank),
 * then folder depth (loose files: the shallowest), then the bytewise
 * smallest folder / archive / KEY path.
 *
 * Sources: BioWare, "BioWare Aurora Engine — Key and BIF File Formats" §1.2
 * (encapsulated files beat directories beat key tables); NWNWiki "Override"
 * (1.69: core < override < module < hak); nwn.wiki "HAK" and "Content Load
 * Order" (NWN:EE: the first-listed hak wins; haks are overridden only by
 * `development/` and the portrait/vault folders, which sit above them);
 * neverwinter.nim `neverwinter/game.nim` (EE keys `data/nwn_base.key` then
 * `lang/<xx>/data/nwn_base_loc.key`, then `ovr/` and `lang/<xx>/data/ovr`
 * added later; `neverwinter/resman.nim` asks the newest container first);
 * xoreos `src/engines/nwn/nwn.cpp` (1.69 keys in load order chitin, patch,
 * xp1, xp1patch, xp2, xp2patch, xp3, xp3patch; a later one wins).
 * Conflict: the brief's draft put override above the module's haks; every
 * source read puts haks (and, for 1.69, the module) above override, so the
 * table follows the sources. EE keys: the default resource manager of
 * neverwinter.nim (`newDefaultResMan`, highest first) stacks
 * `lang/<xx>/data/nwn_base_loc.key` above `data/nwn_retail.key` above
 * `data/nwn_base.key`; `nwn_retail_loc.key` (no source) is put with the
 * language keys, above them.
 *
 * No FUSE code here.
 */
#ifndef LFS_FS_RESORDER_H
#define LFS_FS_RESORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Precedence tiers, highest first (the smaller wins). */
typedef enum lfs_res_tier {
	LFS_RES_DEVELOPMENT = 0,
	LFS_RES_MODULE_HAK,
	LFS_RES_MODULE,
	LFS_RES_OVERRIDE,
	LFS_RES_LOOSE,
	LFS_RES_ARCHIVE,
	LFS_RES_KEY,
	LFS_RES_INSTALL_OTHER,
} lfs_res_tier;

/** Where one copy sits, as far as precedence goes (lfs_resorder_place()). */
typedef struct lfs_resplace {
	uint8_t tier;   /**< lfs_res_tier */
	uint32_t sub;   /**< order inside the tier, the smaller wins */
	uint32_t depth; /**< loose files: folders between SOURCE and the file; 0 in an archive */
} lfs_resplace;

/** What holds a copy. */
typedef enum lfs_res_kind {
	LFS_RES_IN_FOLDER = 0, /**< a loose file; the container is its folder */
	LFS_RES_IN_ERF,        /**< a resource of an ERF-family archive (container: the archive) */
	LFS_RES_IN_KEY,        /**< a resource of a KEY's BIFs (container: the KEY file) */
} lfs_res_kind;

/**
 * What a scan of SOURCE found (lfs_resorder_scan()). Paths are relative to
 * SOURCE, '/'-separated, "" for SOURCE itself; all owned (lfs_resorder_free()).
 */
typedef struct lfs_resorder {
	char **inst;     /**< game install roots (EE: holds data/nwn_base.key; 1.69: chitin.key) */
	size_t ninst;
	char **dev;      /**< EE `development` folders (in an install root or a user folder) */
	size_t ndev;
	char *module;    /**< the module: a .mod file or an unpacked module folder; NULL = none */
	bool module_dir; /**< @c module is a folder (holding module.ifo) */
	char **haks;     /**< the module's hak files, Mod_HakList order (NULL: not found) */
	size_t nhaks;
	/* scan state */
	char **hakfiles, **mods, **userdirs, **devcand;
	size_t nhakfiles, nmods, nuserdirs, ndevcand;
} lfs_resorder;

/**
 * Called by lfs_tree_walk() for each entry @p name of folder @p rel (path
 * from the walk's start, "" = the start itself) open at @p dfd: @p type is
 * DT_DIR, DT_REG or DT_LNK (<dirent.h>), @p depth the folder's depth (0 at
 * the start).
 */
typedef void (*lfs_tree_walk_fn)(void *ctx, int dfd, const char *rel, const char *name,
				 unsigned char type, unsigned depth);

/**
 * Walk the tree of folder @p dfd (taken: closed when done) whose path is
 * @p rel, at @p depth: every folder, regular file and symbolic link to
 * @p fn, a folder before its content; symbolic links to folders are not
 * followed, and folders deeper than LFS_TEXTURE_INDEX_DEPTH are not entered.
 * Entries whose type cannot be read are skipped. The walk of the resource
 * order scan and of the texture index.
 */
void lfs_tree_walk(int dfd, const char *rel, unsigned depth, lfs_tree_walk_fn fn, void *ctx);

/**
 * Scan SOURCE (@p rootfd; symbolic links to folders not followed; at most
 * LFS_TEXTURE_INDEX_DEPTH levels) for install roots (at SOURCE or one or two
 * folders below it), development folders, modules and haks; when there is a
 * module (several: the bytewise smallest path), read its module.ifo (from a
 * .mod: that one resource, "module"/ifo 2014, through erf.h; from a folder:
 * the file) with gff.h lfs_gff_hak_list() and find each hak `<name>.hak`
 * (case-insensitive): in a folder named `hak`, then `hk`, then anywhere,
 * then the bytewise smallest path. A module.ifo that does not decode gives
 * no haks. *o is zeroed first; free it with lfs_resorder_free(). Out of
 * memory leaves a partial (still valid) scan.
 */
void lfs_resorder_scan(int rootfd, lfs_resorder *o);

/** Free what lfs_resorder_scan() found (the struct itself is the caller's). */
void lfs_resorder_free(lfs_resorder *o);

/**
 * The place of a copy held by @p kind container @p cont (@p contlen bytes:
 * the loose file's folder, or the archive's or KEY's path), @p depth folders
 * below SOURCE (loose files; 0 otherwise). @p o may be NULL (no install, no
 * module: the ordinary asset-folder rule, used for respath folders).
 */
lfs_resplace lfs_resorder_place(const lfs_resorder *o, lfs_res_kind kind, const char *cont,
				size_t contlen, unsigned depth);

/**
 * THE comparison: <0 when copy @p a (place, container path @p ac of
 * @p al bytes) wins over @p b, >0 when @p b wins, 0 when the places tie
 * (the caller breaks ties: extension rank, then the name bytewise).
 */
int lfs_resorder_cmp(const lfs_resplace *a, const char *ac, size_t al, const lfs_resplace *b,
		     const char *bc, size_t bl);

/** The rank of KEY file @p name in its game's load order (later = larger; 0 = unknown). */
unsigned lfs_resorder_key_rank(const char *name);

#endif
