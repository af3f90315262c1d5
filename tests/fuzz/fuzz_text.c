/**
 * @file fuzz_text.c
 * libFuzzer targets for the text parsers (docs/fuzzing.md), one binary per
 * parser, chosen at compile time by LFS_FUZZ_TEXT:
 *  - "mdl":     mdl_parse(), the MDL-style text reader (NWN model.mdl);
 *  - "nwn-ascii": the NWN ASCII MDL compiler (lfs_format.compile, no
 *               supermodel); a compiled binary must decode;
 *  - "nod", "nad", "sod", "nil": the model.txt / anim.txt dialect parsers;
 *               a parsed model is encoded, and the bytes must decode.
 * The input is the text, hostile: any bytes, not NUL-terminated. A refusal
 * must carry a message (LFS_ERR_PARSE: `file:line:col: error: ...`).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "formats/nad/nad.h"
#include "formats/nil/nil.h"
#include "formats/nod/nod.h"
#include "formats/sod/sod.h"
#include "text/mdl_parse.h"
#include "formats/nad/nad_views.h"
#include "formats/nil/nil_text.h"
#include "formats/nod/nod_views.h"
#include "formats/sod/sod_text.h"

#ifndef LFS_FUZZ_TEXT
#error "LFS_FUZZ_TEXT names the parser (tests/fuzz/meson.build)"
#endif

/* A refusal: a message, and for a parse error the gcc form's ": error: ". */
static void refused(lfs_err r, const lfs_error *err)
{
	lfs_fuzz_check(err->msg[0] != '\0', "a refusal without a message", NULL);
	if (r == LFS_ERR_PARSE)
		lfs_fuzz_check(strstr(err->msg, ": error: ") != NULL,
			       "a parse error not in file:line:col: error: form", err->msg);
}

/* Encode @p m of format @p fname; the bytes must decode again. */
static void encode_decodes(const char *fname, const void *m)
{
	const lfs_format *f = lfs_fuzz_format(fname);
	uint8_t *out = NULL;
	size_t on = 0;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = f->encode(m, &out, &on, &err);
	if (r) {
		/* a parsed model the encoder cannot lay out (e.g. beyond a
		 * count the format can hold) must say why */
		refused(r, &err);
		return;
	}
	void *m2 = NULL;
	r = f->decode(out, on, &m2, &err);
	lfs_fuzz_check(r == LFS_OK, "the encoded model does not decode", err.msg);
	f->free_model(m2);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	const char *which = LFS_FUZZ_TEXT;
	const char *text = (const char *)data;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r;
	if (!strcmp(which, "mdl")) {
		mdl_doc *d = NULL;
		r = mdl_parse("model.mdl", data, n, &d, &err);
		if (r)
			refused(r, &err);
		mdl_doc_free(d);
	} else if (!strcmp(which, "nwn-ascii")) {
		const lfs_format *f = lfs_fuzz_format("nwn-mdl");
		uint8_t *out = NULL;
		size_t on = 0;
		r = f->compile("model.mdl", data, n, NULL, &out, &on, &err);
		if (r) {
			refused(r, &err);
			lfs_fuzz_check(out == NULL, "a refused compile left bytes", err.msg);
		} else {
			void *m = NULL;
			r = f->decode(out, on, &m, &err);
			lfs_fuzz_check(r == LFS_OK, "a compiled binary does not decode", err.msg);
			f->free_model(m);
		}
		free(out);
	} else if (!strcmp(which, "nod")) {
		nod_model *m = NULL;
		r = nod_text_parse("model.txt", text, n, &m, &err);
		if (r)
			refused(r, &err);
		else
			encode_decodes("nod", m);
		nod_model_free(m);
	} else if (!strcmp(which, "nad")) {
		nad_model *m = NULL;
		r = nad_text_parse("anim.txt", text, n, &m, &err);
		if (r)
			refused(r, &err);
		else
			encode_decodes("nad", m);
		nad_model_free(m);
	} else if (!strcmp(which, "sod")) {
		sod_model *m = NULL;
		r = sod_text_parse("model.txt", text, n, &m, &err);
		if (r)
			refused(r, &err);
		else
			encode_decodes("sod", m);
		sod_model_free(m);
	} else if (!strcmp(which, "nil")) {
		nil_model *m = NULL;
		r = nil_text_parse(text, n, "model.txt", &m, &err);
		if (r)
			refused(r, &err);
		else
			encode_decodes("nil", m);
		nil_model_free(m);
	} else {
		lfs_fuzz_check(0, "unknown LFS_FUZZ_TEXT", which);
	}
	return 0;
}
