/**
 * @file mdl_parse.h
 * Tolerant reader of NWN ASCII MDL text into a document tree.
 *
 * This is the syntactic layer only: it knows the statement shapes of the
 * ASCII format (cited [N §2.x]: the grammar of real files as the public
 * parsers read it — niv/nwn-tools nwnmdlcomp _NmcLib/NmcCoreParsers.cpp,
 * jd28/rollnw MdlTextParser.cpp, xoreos model_nwn.cpp; the [N] key with
 * its topics is in src/formats/nwn/nwn_mdl.h) but not
 * what any attribute means. A compiler or a comparison walks the tree and
 * interprets keywords itself (e.g. with nwn_controller_id() from
 * formats/nwn_mdl.h to tell a plain controller from an attribute).
 *
 * Shape of a document
 * -------------------
 *  - model-level statements in file order (newmodel, setsupermodel,
 *    classification, setanimationscale, filedependancy, beginmodelgeom,
 *    endmodelgeom, donemodel, bmin/bmax/radius, anything unknown) [N §2.1];
 *  - geometry nodes (`node <type> <name>` ... `endnode`) in file order, each
 *    with its parent name and its statements [N §2.2];
 *  - animations (`newanim <anim> <model>` ... `doneanim`), each with its own
 *    statements (length, transtime, animroot, event, ...) and nodes [N §2.4].
 *
 * A statement is one of
 *  - MDL_ST_PLAIN: keyword + values on one line (an attribute or a plain,
 *    single-row controller: `position 0 0 1`);
 *  - MDL_ST_LIST: a known list keyword (`verts`, `faces`, `weights`, `aabb`,
 *    ...) with an optional row count, then rows [N §2.2 table];
 *  - MDL_ST_KEYS: `<name>key` or `<name>bezierkey` with an optional count,
 *    then rows `time v1 .. vk` [N §2.3].
 * Lists and keys take the `count` form (exactly count rows, an `endlist`
 * after them is accepted and consumed), the count-less form (rows until
 * `endlist`, or until the first line that is not a row), and for `aabb` the
 * form whose first row sits on the keyword line.
 *
 * Tolerance (real files, [N §1, §2.1]): CRLF and lone NUL bytes are
 * whitespace; keywords are case-insensitive; indentation is free; lines whose
 * first non-blank character is `#` are comments, except `#part-number N`
 * which is kept as mdl_node.part_number; a GMax `<snoopstart ...>` preamble
 * before the first statement and a snoop trailer (`</snoopstart>`,
 * `</snoopend>` lines) after `donemodel` are skipped;
 * classification, setsupermodel etc. may be absent; `.pwk`-style files with
 * bare nodes and no newmodel are accepted.
 *
 * Names are single tokens, as nwnmdlcomp reads them: `node emmiter Emmiter A`
 * (vce_negblast) is a node named `Emmiter`; further tokens stay in `head`.
 *
 * Lists with a count read rows as nwnmdlcomp does, with one leniency each
 * way: blank lines between rows are skipped, but when the rows run out and
 * enough blank lines preceded the next statement, those blank lines count as
 * empty rows (mdl_row.ntok == 0; nwnmdlcomp reads exactly `count` physical
 * lines and takes a blank one as all-default values). A stray `endlist` that
 * closes no list is skipped (doc->n_stray_endlist).
 *
 * Errors (LFS_ERR_PARSE, message `file:line:col: ...` via lfs_fail_at):
 * a list or key list with fewer rows than its count, a non-number in a
 * numeric row, a row with too few columns, a bad count, a node without
 * `endnode`, an animation without `doneanim`, `endnode`/`endlist`/`doneanim`
 * out of place, other text after `donemodel` (it would be lost), and in a
 * file with `newmodel`: no `donemodel`, `beginmodelgeom` without
 * `endmodelgeom`. Input larger than MDL_MAX_INPUT is refused. Memory use is
 * linear in the input size (about 40 bytes per token) and nothing is
 * allocated from a count read in the text.
 *
 * Memory: the document owns a private copy of the text; every string in the
 * tree points into it and lives until mdl_doc_free().
 */
#ifndef LFS_MDL_PARSE_H
#define LFS_MDL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"

/** Largest input mdl_parse() accepts, in bytes (real files are < 10 MB). */
#define MDL_MAX_INPUT ((size_t)512 * 1024 * 1024)

/** One whitespace-separated token: NUL-terminated text and its 1-based byte column. */
typedef struct mdl_tok {
	const char *s;
	uint32_t col;
} mdl_tok;

/** The tokens of one text line (1-based line number). */
typedef struct mdl_row {
	uint32_t line;
	uint32_t ntok;
	mdl_tok *tok;
} mdl_row;

/** Statement kinds (see file comment). */
typedef enum mdl_stmt_kind {
	MDL_ST_PLAIN = 0,
	MDL_ST_LIST,
	MDL_ST_KEYS,
} mdl_stmt_kind;

/**
 * One statement. `head` is the keyword line: head.tok[0] is the keyword as
 * written, further tokens are its values (PLAIN) or the count (LIST/KEYS).
 */
typedef struct mdl_stmt {
	mdl_stmt_kind kind;
	mdl_row head;
	/** KEYS: controller name = keyword without "key"/"bezierkey" (as written, NUL
	 *  terminated copy); LIST/PLAIN: head.tok[0].s */
	const char *name;
	bool bezier;      /**< KEYS written as `<name>bezierkey` */
	int64_t count;    /**< LIST/KEYS: declared row count, -1 when none was written */
	bool endlist;     /**< LIST/KEYS: rows were closed by `endlist` */
	mdl_row *rows;    /**< LIST/KEYS rows (for `aabb` with an inline first row,
	                       rows[0] is a view of the head line's tokens 1..7) */
	uint32_t n_rows;
} mdl_stmt;

/** A `node <type> <name>` ... `endnode` block. */
typedef struct mdl_node {
	mdl_row head;             /**< the `node` line */
	const char *type;         /**< as written ("trimesh", "emmiter", ...), "" if missing */
	const char *name;         /**< "" if missing */
	const char *parent;       /**< value of `parent`, NULL when the node has no parent line */
	uint32_t parent_line;     /**< line of `parent`, 0 when absent */
	bool has_part_number;
	int64_t part_number;      /**< from a `#part-number N` comment line */
	mdl_stmt *stmts;          /**< every statement except `parent`, in file order */
	uint32_t n_stmts;
	uint32_t end_line;        /**< line of `endnode` */
} mdl_node;

/** A `newanim <anim> <model>` ... `doneanim` block. */
typedef struct mdl_anim {
	mdl_row head;             /**< the `newanim` line */
	const char *name;         /**< "" if missing */
	const char *model;        /**< "" if missing */
	mdl_stmt *stmts;          /**< length, transtime, animroot, event, unknown; file order */
	uint32_t n_stmts;
	mdl_node *nodes;
	uint32_t n_nodes;
	uint32_t end_line;        /**< line of `doneanim` */
} mdl_anim;

/** A parsed file. */
typedef struct mdl_doc {
	const char *file;         /**< the name given to mdl_parse() (copy) */
	mdl_stmt *stmts;          /**< model-level statements in file order */
	uint32_t n_stmts;
	mdl_node *nodes;          /**< geometry nodes in file order */
	uint32_t n_nodes;
	mdl_anim *anims;
	uint32_t n_anims;
	bool has_donemodel;
	uint32_t n_comment_lines; /**< `#` lines other than #part-number */
	uint32_t n_skipped_lines; /**< snoop preamble + snoop trailer lines after donemodel */
	uint32_t n_stray_endlist; /**< `endlist` lines closing no list (skipped) */
	uint32_t n_blank_rows;    /**< empty rows taken from blank lines (see mdl_parse()) */
	void *priv;               /**< allocator state; do not touch */
} mdl_doc;

/**
 * Parse ASCII MDL text.
 *
 * @param file  name used in error messages (copied; NULL prints "<input>")
 * @param data  the text (need not be NUL-terminated; not retained)
 * @param n     its length in bytes (<= MDL_MAX_INPUT)
 * @param out   receives the document on success (free with mdl_doc_free()),
 *              NULL on failure
 * @param err   optional: on failure `file:line:col: message`
 * @return LFS_OK, LFS_ERR_PARSE (malformed structure, see file comment) or
 *         LFS_ERR_NOMEM.
 */
lfs_err mdl_parse(const char *file, const uint8_t *data, size_t n, mdl_doc **out,
		  lfs_error *err);

/** mdl_parse_ex() flag: text after `donemodel` is ignored with one warning
 *  `file:line:col: warning: text after donemodel ignored` instead of refused
 *  (the compiler: the game's compiler stops reading at `donemodel`; a save
 *  through the mount keeps refusing it, the text would be lost). */
#define MDL_PARSE_TAIL_IGNORED 1u

/**
 * mdl_parse() with @p flags (MDL_PARSE_*) and a warning sink @p warn (may be
 * NULL: warnings discarded). @return as mdl_parse().
 */
lfs_err mdl_parse_ex(const char *file, const uint8_t *data, size_t n, unsigned flags,
		     lfs_warnings *warn, mdl_doc **out, lfs_error *err);

/** Free a document; NULL is fine. */
void mdl_doc_free(mdl_doc *d);

/** First statement of @p n with keyword @p kw (case-insensitive), NULL if none. */
const mdl_stmt *mdl_node_find(const mdl_node *n, const char *kw);

/** First model-level statement with keyword @p kw, NULL if none. */
const mdl_stmt *mdl_doc_find(const mdl_doc *d, const char *kw);

/** First statement of animation @p a with keyword @p kw, NULL if none. */
const mdl_stmt *mdl_anim_find(const mdl_anim *a, const char *kw);

/**
 * Value token @p i (0 = first after the keyword) of a statement's head as
 * text, NULL when absent.
 */
const char *mdl_stmt_arg(const mdl_stmt *s, uint32_t i);

/** Parse a token as float32 (any strtof syntax, whole token); false if not a number. */
bool mdl_tok_float(const char *s, float *out);

/** Parse a token as a decimal integer (optional sign, whole token); false otherwise. */
bool mdl_tok_int(const char *s, int64_t *out);

#endif
