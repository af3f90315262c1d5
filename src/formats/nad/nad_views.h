/**
 * @file nad_views.h
 * NAD (Vampire: The Masquerade – Redemption animation): the views of a
 * `X.nad/` directory, their writers and parsers, and apply-a-view.
 *
 * Views (docs/formats/nad.md):
 *   anim.txt                               every field, MDL-style text
 *   tags.csv                               frame,tag (one row per tag)
 *   tracks/bone<N>.<type>.csv              one per track: frame, frame_scale,
 *                                          x, y, z, c_x..c_z, b_x..b_z, a_x..a_z
 * <type> is rotation / translation / scale, or type<K> for other values.
 * Two tracks with the same bone and type get names.h's "~2", "~3" suffix
 * ("bone3.rotation~2.csv"), in track order.
 *
 * Floats are printed in the shortest exact float32 form (floatfmt.h:
 * "inf", "-0", ...), except NaNs, which print as "nan:" + the 8 hex digits of
 * their bits so that the payload survives the text. Parsers accept that form,
 * plain "nan" and anything strtof() reads.
 *
 * Parse errors are `<file>:line:col: message` (lfs_fail_at), file = the
 * view path given by the caller ("anim.txt", "tracks/bone0.rotation.csv").
 * Code: nad_views.c (detect, views, apply), nad_text.c (anim.txt),
 * nad_csv.c (CSV). Layout: src/formats/nad/nad.h.
 */
#ifndef LFS_NAD_VIEWS_H
#define LFS_NAD_VIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nad.h"
#include "registry/format.h"
#include "registry/vlist.h"

/**
 * The registry row of NAD (src/registry/registry.c). Views, all writable:
 * anim.txt (the whole animation), tags.csv (the tag list), tracks/<bone>.
 * <type>.csv (target.node = track index). Saving anim.txt replaces the whole
 * model; tags.csv replaces the tag list; a track CSV replaces that track's
 * keys (its bone and type stay). Trailing bytes after the tag list are kept
 * in every case. Errors: LFS_ERR_PARSE (`<path>:line:col: ...`),
 * decode/encode errors as nad_decode()/nad_encode().
 */
extern const lfs_format lfs_format_nad;

/* ---- anim.txt (nad_text.c) ---------------------------------------------- */

/** Append the anim.txt text of @p m to @p sb. LFS_ERR_NOMEM on failure. */
lfs_err nad_text_write(const nad_model *m, lfs_sb *sb, lfs_error *err);

/**
 * Parse anim.txt text (@p n bytes, need not be NUL-terminated) into a new
 * model (*out, free with nad_model_free()). Messages name @p file.
 */
lfs_err nad_text_parse(const char *file, const char *text, size_t n, nad_model **out,
		       lfs_error *err);

/* ---- CSV (nad_csv.c) ----------------------------------------------------- */

/** The header row of a track CSV (without the line end). */
extern const char nad_csv_track_header[];

/** Append the CSV of track @p t (header + one row per key, LF ends). */
lfs_err nad_csv_track_write(const nad_track *t, lfs_sb *sb, lfs_error *err);

/**
 * Parse a track CSV into a new key array (*keys, malloc'd, NULL when zero
 * rows; *n_keys rows). The header row must be nad_csv_track_header.
 */
lfs_err nad_csv_track_parse(const char *file, const char *text, size_t n, nad_key **keys,
			    uint32_t *n_keys, lfs_error *err);

/** Append tags.csv: "frame,tag" then one row per tag (name, or the number). */
lfs_err nad_csv_tags_write(const nad_model *m, lfs_sb *sb, lfs_error *err);

/** Parse tags.csv into a new tag array (*tags, malloc'd, NULL when zero rows). */
lfs_err nad_csv_tags_parse(const char *file, const char *text, size_t n, nad_tag **tags,
			   uint32_t *n_tags, lfs_error *err);

/**
 * File names (without "tracks/" and ".csv") of every track of @p m, in track
 * order, unique by names.h's rule. Returns a malloc'd array of n_tracks
 * malloc'd strings (free with nad_track_names_free), or NULL when out of memory.
 */
char **nad_track_names(const nad_model *m);

/** Free the result of nad_track_names(). */
void nad_track_names_free(char **names, uint32_t n);

/* ---- float text shared by anim.txt and the CSVs -------------------------- */



#endif
