/**
 * @file csv.h
 * The one CSV reader and the CSV writers shared by the CSV views of every
 * format (NAD tracks and tags, SOD channels, NWN controller keys).
 *
 * Owns: CSV text <-> rows of fields. The CSVs are RFC 4180 ("Common Format
 * and MIME Type for Comma-Separated Values (CSV) Files"). Writers write
 * every field bare (each is a number or a fixed word: no comma, quote or
 * line break) and end every record with LF, so that line tools (grep's '$',
 * awk's last field) see the value. Readers take CRLF or LF line ends and a
 * last line without one, skip blank lines, refuse NUL bytes, and read RFC
 * 4180 quoting as Python's csv module writes it (QUOTE_MINIMAL, QUOTE_ALL,
 * QUOTE_NONNUMERIC): a field that starts with '"' runs to the next lone
 * '"', "" inside standing for one '"'; its content is the field, so "0.5"
 * is the number 0.5 and "frame" a header name. A quote not closed on its
 * line (no value holds a line break) and text after a closing quote are
 * refused; a '"' inside a bare field is an ordinary byte. With
 * LFS_CSV_LENIENT they also skip a leading UTF-8 byte order mark, lines of
 * only spaces/tabs, and spaces/tabs around fields (outside the quotes), and
 * compare header column names ignoring ASCII case.
 *
 * Errors are "file:line:col: message" (lfs_fail_at); columns are 1-based
 * byte columns of the field (after leading blanks) or of the line end.
 */
#ifndef LFS_CSV_H
#define LFS_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "../common/strbuf.h"

/** Fields kept per row; further fields are only counted (lfs_csv.nf). */
#define LFS_CSV_MAXF 32

/** Reader flag: BOM, blank-only lines, blanks around fields, header case. */
#define LFS_CSV_LENIENT 0x1u
/**
 * Reader flag: lfs_csv_f32() words its error as NWN's model.mdl parser does
 * (mdl_parse.h), "'x' is not a number", so that NWN speaks one wording in
 * all its views.
 */
#define LFS_CSV_MDL_MSGS 0x2u

/**
 * One field of the current row, not NUL-terminated: bytes in the text, or
 * in lfs_csv.scratch for a quoted field holding "" (valid until the next
 * lfs_csv_next()).
 */
typedef struct lfs_csv_field {
	const char *s;
	size_t len;
	uint32_t col;
} lfs_csv_field;

/** Reader over a text buffer (not owned; must outlive the reader). */
typedef struct lfs_csv {
	const char *file;
	const char *p, *end;
	uint32_t line; /**< lines read so far */
	unsigned flags;
	lfs_error *err;
	/* the current row */
	uint32_t row_line, end_col; /**< its line; column just past its last byte */
	size_t nf;		    /**< fields in the row (may exceed LFS_CSV_MAXF) */
	lfs_csv_field f[LFS_CSV_MAXF];
	/** The row's quoted fields that hold "", unquoted. One that does not
	 * fit is kept as written, quotes and all (refused as any value). */
	char scratch[512];
	size_t scratch_used;
} lfs_csv;

/** Start reading @p n bytes of @p text; messages name @p file. */
void lfs_csv_init(lfs_csv *c, const char *file, const char *text, size_t n, unsigned flags,
		  lfs_error *err);

/**
 * Next non-blank row. 1 = a row, 0 = end of text, -1 = error (err filled):
 * a NUL byte, "unterminated quoted field ..." at the opening quote, "text
 * after a closing quote ..." at that text.
 */
int lfs_csv_next(lfs_csv *c);

/**
 * Read the first row and require it to be @p header (column names separated
 * by ','). Messages: "expected the header row '<header>'" (empty text),
 * "header: expected column 'x' (expected '<header>')", "header: missing
 * column 'x' ...", "header: unexpected extra column ...".
 */
lfs_err lfs_csv_header(lfs_csv *c, const char *header);

/** Column of field @p i of the row, or of the line end when there is no such field. */
uint32_t lfs_csv_col(const lfs_csv *c, size_t i);

/**
 * Require @p want fields: "expected N fields (<what>), found M", or without
 * the parenthesis when @p what is NULL; at the first missing or extra field.
 */
lfs_err lfs_csv_arity(lfs_csv *c, size_t want, const char *what);

/**
 * Field @p i (< nf, < LFS_CSV_MAXF) as float32 (strtof syntax or
 * "nan:XXXXXXXX"): "expected a number, found '...'" otherwise
 * ("'...' is not a number" with LFS_CSV_MDL_MSGS).
 */
lfs_err lfs_csv_f32(lfs_csv *c, size_t i, float *out);

/** True when @p f is 1..15 decimal digits and the value is at most @p max. */
bool lfs_csv_uint(const lfs_csv_field *f, uint64_t max, uint64_t *out);

/**
 * Reads one data row into @p elem (zeroed, esz bytes) once the row has the
 * right field count: return LFS_OK or an error (messages through c->err).
 */
typedef lfs_err (*lfs_csv_row_fn)(lfs_csv *c, void *elem, void *ctx);

/** What lfs_csv_rows() reads: the table's shape and its limits. */
typedef struct lfs_csv_table {
	const char *header; /**< required first row (lfs_csv_header) */
	size_t ncols;       /**< fields per data row (lfs_csv_arity) */
	const char *what;   /**< names the columns in the arity message, may be NULL */
	size_t esz;         /**< bytes per row in the result array */
	size_t max_rows;    /**< more rows: "<too_many>" at the row's line, column 1 */
	const char *too_many;
	lfs_csv_row_fn row;
	void *ctx;
} lfs_csv_table;

/**
 * Read a whole table: the header, then every non-blank row checked for
 * @p t->ncols fields and read by @p t->row into a growing array of
 * @p t->esz bytes per row. *rows (malloc'd, caller frees; NULL when empty)
 * and *n are set on success only.
 * @return LFS_OK; LFS_ERR_PARSE (`file:line:col: ...`); LFS_ERR_NOMEM.
 */
lfs_err lfs_csv_rows(lfs_csv *c, const lfs_csv_table *t, void **rows, size_t *n);

/* ---- writers ---------------------------------------------------------------- */

/** The line end of every record: LF. */
#define LFS_CSV_EOL "\n"

/** "<header>\n". */
void lfs_csv_write_header(lfs_sb *sb, const char *header);
/** @p n floats in lfs_fmt_float_bits() form separated by ',' (no line end). */
void lfs_csv_write_floats(lfs_sb *sb, const float *f, size_t n);
/**
 * @p n floats in the plain shortest form of lfs_fmt_float() (a NaN as
 * "nan", its bits lost) separated by ',' (no line end): the form the NWN
 * controller views have always had.
 */
void lfs_csv_write_floats_plain(lfs_sb *sb, const float *f, size_t n);
/** End the record: "\n". */
void lfs_csv_write_eol(lfs_sb *sb);

#endif
