/**
 * @file nwn_ascii_views.c
 * The ASCII Neverwinter Nights MDL row (lfs_format_nwn_ascii): a text model
 * as shipped by custom content (NWmax, GMax, the toolset's export), shown
 * through the views of a binary one by compiling it in memory with the
 * project's own compiler (nwn_compile.h, docs/nwn-compile.md).
 *
 * - decode: compile, then decode the binary (an nwn_model).
 * - views: model.mdl is the file's own bytes, exactly; model.mtl,
 *   model.obj, meshes/<node>.obj, anims/<anim>/<node>.<controller>.csv and
 *   the thumbnail come from the compiled model, read-only (a save of one of
 *   them would have to rewrite the user's text around the edit: not done).
 * - apply (model.mdl only): the edited text must compile (errors
 *   `model.mdl:line:col: ...`, warnings to the siblings' list); the result
 *   is the text itself, saved as it is.
 *
 * The row is not in lfs_formats[]: lfs_format_for() offers it only after
 * lfs_format_ascii_views(true) (the mount's -o ascii_views, the thumbnail
 * command of legacyfs-convert), so by default ASCII files stay plain files.
 * Dialect: "Neverwinter Nights ASCII MDL" (docs/formats/nwn-ascii.md).
 */
#include "nwn_views.h"

#include "common/mem.h"
#include "nwn_mdl.h"
#include "nwn_mdl_encode.h"
#include "nwn_compile.h"
#include "registry/vlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Bytes of the head where the `newmodel` statement is looked for: the
 * detection header of the mount (src/fs/source.h LFS_SOURCE_HEADER_BYTES),
 * so a header-only buffer and the whole file get the same verdict. */
#define ASCII_HEAD 4096

/* The name compile messages of a decode give the text. */
#define ASCII_FILE "model.mdl"

/*
 * Is this an ASCII MDL: not a binary (nwn_mdl_is_binary) and, in its first
 * ASCII_HEAD bytes, a line whose first word is `newmodel` (any case, after
 * blanks)? Every ASCII .mdl of public custom content has it within its
 * comment preamble. NUL bytes (some exporters leave them) are skipped.
 */
static bool ascii_detect(const uint8_t *data, size_t n)
{
	if (!data || n < 9 || nwn_mdl_is_binary(data, n))
		return false;
	size_t end = n < ASCII_HEAD ? n : ASCII_HEAD;
	bool bol = true;
	for (size_t i = 0; i < end; i++) {
		uint8_t c = data[i];
		if (c == '\n' || c == '\r') {
			bol = true;
			continue;
		}
		if (bol && (c == ' ' || c == '\t' || c == 0))
			continue;
		if (bol && end - i > 8 && !strncasecmp((const char *)data + i, "newmodel", 8) &&
		    (data[i + 8] == ' ' || data[i + 8] == '\t'))
			return true;
		bol = false;
	}
	return false;
}

/*
 * A compile error of a decode or a thumbnail names no file (the caller
 * prefixes the model's own name): "model.mdl:8:3: error: msg" becomes
 * "line 8, column 3: msg".
 */
static void unname(lfs_error *err)
{
	if (!err || !err->line)
		return;
	const char *m = strstr(err->msg, ": error: ");
	char tmp[sizeof(err->msg)];
	snprintf(tmp, sizeof(tmp), "%s", m ? m + 9 : err->msg);
	int k = snprintf(err->msg, sizeof(err->msg), "line %u, column %u: ", err->line, err->col);
	if (k > 0 && (size_t)k < sizeof(err->msg)) {
		size_t c = strnlen(tmp, sizeof(err->msg) - (size_t)k - 1);
		memcpy(err->msg + k, tmp, c);
		err->msg[(size_t)k + c] = '\0';
	}
}

/* Compile @p text in memory (no siblings unless @p sib) into *bin. */
static lfs_err compile_bin(const char *file, const uint8_t *text, size_t n,
			   const lfs_siblings *sib, uint8_t **bin, size_t *binn, lfs_error *err)
{
	return nwn_compile_ex(file, text, n, sib ? sib->read : NULL, sib ? sib->ctx : NULL,
			      sib ? sib->warn : NULL, bin, binn, err);
}

static lfs_err ascii_decode(const uint8_t *data, size_t n, void **model, lfs_error *err)
{
	*model = NULL;
	uint8_t *bin = NULL;
	size_t binn = 0;
	lfs_err r = compile_bin(ASCII_FILE, data, n, NULL, &bin, &binn, err);
	if (r) {
		unname(err);
		return r;
	}
	nwn_model *m = NULL;
	r = nwn_mdl_decode(bin, binn, &m, err);
	free(bin);
	*model = m;
	return r;
}

/* The binary the text compiles to (the model's other encoding; the text
 * itself is what apply saves). */
static lfs_err ascii_encode(const void *model, uint8_t **out, size_t *n, lfs_error *err)
{
	return nwn_mdl_encode((const nwn_model *)model, out, n, err);
}

static void ascii_free(void *model)
{
	nwn_model_free((nwn_model *)model);
}

static lfs_err ascii_build(const uint8_t *data, size_t n, const lfs_view_opts *opts,
			   struct lfs_vlist *l, lfs_error *err)
{
	void *m = NULL;
	lfs_err r = ascii_decode(data, n, &m, err);
	if (!r)
		r = nwn_model_views((const nwn_model *)m, data, n, opts, l, err);
	ascii_free(m);
	return r;
}

static lfs_err ascii_thumb(const uint8_t *data, size_t n, const lfs_view_opts *opts,
			   struct lfs_thumb_scene *s, lfs_error *err)
{
	uint8_t *bin = NULL;
	size_t binn = 0;
	lfs_err r = compile_bin(ASCII_FILE, data, n, NULL, &bin, &binn, err);
	if (r)
		unname(err);
	else
		r = nwn_thumb_scene(bin, binn, opts, s, err);
	free(bin);
	return r;
}

/* A save of model.mdl: compile-checked, then the text as it is. */
static lfs_err ascii_apply(const uint8_t *orig, size_t n, const lfs_view *v, const char *text,
			   size_t tn, const lfs_siblings *sib, uint8_t **out, size_t *outn,
			   lfs_error *err)
{
	(void)orig;
	(void)n;
	*out = NULL;
	*outn = 0;
	if (v->kind != LFS_VIEW_TEXT)
		return lfs_fail(err, LFS_ERR_UNSUPPORTED, SIZE_MAX, NULL,
				"%s: read-only: the views of an ASCII model other than model.mdl are derived from its text; edit model.mdl",
				v->path);
	uint8_t *bin = NULL;
	size_t binn = 0;
	lfs_err r = compile_bin(v->path, (const uint8_t *)text, tn, sib, &bin, &binn, err);
	free(bin);
	if (r)
		return r;
	*out = malloc(tn ? tn : 1);
	if (!*out)
		return lfs_nomem(err, v->path);
	memcpy(*out, text, tn);
	*outn = tn;
	return LFS_OK;
}

static const char *const ascii_extensions[] = { ".mdl", NULL };

const lfs_format lfs_format_nwn_ascii = {
	.name = "nwn-ascii",
	.extensions = ascii_extensions,
	.detect = ascii_detect,
	.decode = ascii_decode,
	.encode = ascii_encode,
	.free_model = ascii_free,
	.build_views = ascii_build,
	.apply = ascii_apply,
	.thumb_scene = ascii_thumb,
	.siblings = "the supermodel <supermodel>.mdl beside the model (part numbers of new nodes)",
};
