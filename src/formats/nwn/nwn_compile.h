/**
 * @file nwn_compile.h
 * Full compile of an NWN ASCII model into a binary MDL.
 *
 * Pipeline: mdl_parse() (src/text/mdl_parse.h: the tolerant reader of real
 * ASCII files) -> nwn_model built by the rules of the game's compiler
 * ([N §2]–[N §3], key in src/formats/nwn/nwn_mdl.h; computations in
 * src/formats/nwn/nwn_mdl_derive.h) -> nwn_mdl_encode() (fresh layout).
 * Interpretation follows nwnmdlcomp wherever the game's behaviour is not
 * documented; every deliberate difference is listed in docs/nwn-compile.md.
 *
 * Messy real files: a GMax snoop preamble, CRLF, NUL bytes, `node emmiter`
 * and `node pwk` (compiled as dummies with a warning, as the game does with
 * unknown types; other unknown types are refused), the editor keywords real
 * files carry (`wirecolor`, `center`, ...: the list in docs/nwn-compile.md),
 * `filedependancy`/`filedependency`, classification spellings (`effects`,
 * any case; unknown words such as `other`/`unknown`/`item` leave 0),
 * `spawntype -1`, faces referencing missing tverts (the faces are dropped, as
 * the compiler does) all compile. Errors are LFS_ERR_PARSE with
 * `file:line:col: error: message`: malformed syntax (from mdl_parse: text
 * after `donemodel`, no `donemodel`/`endmodelgeom`), no `newmodel`, an
 * unknown node type, an unknown statement or one the node's type cannot hold,
 * a second root node, an unknown parent or bone name, a malformed number
 * (`undefined`) in an attribute, more than 18 bones in a skin, more than 65535 split vertices,
 * controller data beyond the 16-bit key offsets.
 */
#ifndef LFS_NWN_COMPILE_H
#define LFS_NWN_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/**
 * Supermodel lookup: find the model named @p name (resref, no extension; the
 * text's spelling) and return its file bytes — binary or ASCII MDL — in a
 * malloc'd buffer (*data, *n; the compiler frees it). Return false when it is
 * not available. Part numbers of same-named nodes and the node-count field
 * come from the supermodel [N §3.8]; without it, part numbers are the node
 * order of the text (the rule documented in docs/nwn-compile.md).
 */
typedef bool (*nwn_supermodel_lookup_fn)(void *ctx, const char *name, uint8_t **data, size_t *n);

/**
 * Compile ASCII MDL @p text (@p n bytes, need not be NUL-terminated) to a
 * binary MDL.
 *
 * @param file    name for error messages ("<input>" when NULL)
 * @param lookup  supermodel lookup, may be NULL (then no supermodel is used)
 * @param ctx     passed to @p lookup
 * @param out     receives the malloc'd binary (free()) on success
 * @param outn    its size
 * @param err     optional; LFS_ERR_PARSE messages are `file:line:col: ...`
 * @return LFS_OK, LFS_ERR_PARSE, LFS_ERR_UNSUPPORTED (limits above),
 *         LFS_ERR_NOMEM.
 */
lfs_err nwn_compile(const char *file, const uint8_t *text, size_t n, nwn_supermodel_lookup_fn lookup,
		    void *ctx, uint8_t **out, size_t *outn, lfs_error *err);

/**
 * nwn_compile() that also reports the diagnostics of a compile that lands
 * into @p warn (may be NULL): each a line `file:line:col: warning: msg` —
 * dropped degenerate faces, a supermodel not found (part numbers then follow
 * the text order), unknown node types compiled as dummies (`emmiter`), lines
 * of numbers outside any list. docs/nwn-compile.md lists them.
 */
lfs_err nwn_compile_ex(const char *file, const uint8_t *text, size_t n, nwn_supermodel_lookup_fn lookup,
		       void *ctx, lfs_warnings *warn, uint8_t **out, size_t *outn, lfs_error *err);

/* ------------------------------------------------------------------------
 * Edit mode (used by src/formats/nwn/nwn_apply.c for structural edits).
 */
struct mdl_doc;
struct mdl_node;
struct nwn_model;

/** A model compiled in memory, before encoding. */
typedef struct nwn_compiled {
	struct nwn_model *model;  /**< the compiled model (arena memory) */
	/** src[0][j]: the text node model node j was compiled from; src[1 + a][j]
	 *  the same for animation a (nodes in the model's depth-first order) */
	const struct mdl_node ***src;
	/** split[g][j]: for mesh nodes, per compiled (split) vertex the index of
	 *  the text vertex it came from (NULL when the node has no faces) */
	uint32_t ***split;
	bool super_found;         /**< the supermodel was found through the lookup
	                               (part numbers and node-count field come from it) */
	void *priv;               /**< arena; nwn_compiled_free() */
} nwn_compiled;

/**
 * Compile a parsed document @p d (owned by the caller; it must outlive
 * @p out: `src` points into it) by the rules of nwn_compile(), but keep the
 * children in text order (no transparency sort: an edit keeps the old
 * binary's order) and do not encode. Errors as nwn_compile().
 */
lfs_err nwn_compile_doc(const char *file, const struct mdl_doc *d, nwn_supermodel_lookup_fn lookup,
			void *ctx, lfs_warnings *warn, nwn_compiled *out, lfs_error *err);

/** Zeroed memory from @p c's arena (freed with it); NULL when out of memory. */
void *nwn_compiled_zalloc(nwn_compiled *c, size_t n);

/** Free everything of @p c (NULL and zeroed structs are fine). */
void nwn_compiled_free(nwn_compiled *c);

#endif
