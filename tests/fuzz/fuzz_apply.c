/**
 * @file fuzz_apply.c
 * libFuzzer target for the formats' applies of edited views: the model.mdl
 * / model.txt / anim.txt, OBJ and CSV parsers as they run on a save, with a
 * real model behind them (docs/fuzzing.md). Input layout:
 *   byte 0        format among the rows with an apply (as fuzz_roundtrip.c)
 *   bytes 1..4    L, little endian: length of the model file
 *   L bytes       the model file
 *   2 bytes       view index, little endian, modulo the writable views
 *   the rest      the edited text of that view
 * Every outcome must be one lfs_view_apply() documents: a refusal (no
 * bytes, a message; LFS_ERR_PARSE in the form `file:line:col: error:`) or an
 * accepted save whose bytes build their views again (the law already
 * compared the view read back with the text).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "registry/viewset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	if (n < 7)
		return 0;
	const lfs_format *f = lfs_fuzz_apply_row(data[0]);
	if (!f)
		return 0;
	size_t L = (size_t)data[1] | (size_t)data[2] << 8 | (size_t)data[3] << 16 |
		   (size_t)data[4] << 24;
	if (L > n - 7)
		return 0;
	const uint8_t *d = data + 5;
	size_t vi = (size_t)d[L] | (size_t)d[L + 1] << 8;
	const char *text = (const char *)d + L + 2;
	size_t tn = n - 7 - L;
	lfs_viewset vs;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	if (lfs_views_build_as(f, d, L, NULL, &vs, &err))
		return 0;
	size_t nw = 0;
	for (size_t i = 0; i < vs.n_views; i++)
		nw += vs.views[i].writable;
	if (nw) {
		size_t pick = vi % nw, i = 0;
		for (; i < vs.n_views; i++)
			if (vs.views[i].writable && pick-- == 0)
				break;
		const lfs_view *v = &vs.views[i];
		uint8_t *out = NULL;
		size_t on = 0;
		lfs_err r = lfs_view_apply(f, d, L, v, text, tn, NULL, &out, &on, &err);
		if (r) {
			lfs_fuzz_check(out == NULL && on == 0, "a refusal with bytes", err.msg);
			lfs_fuzz_check(err.msg[0] != '\0', "a refusal without a message", NULL);
			lfs_fuzz_check(r != LFS_ERR_PARSE || strstr(err.msg, ": error: ") != NULL,
				       "a parse error not in file:line:col: error: form", err.msg);
		} else {
			lfs_viewset vs2;
			r = lfs_views_build_as(f, out, on, NULL, &vs2, &err);
			lfs_fuzz_check(r == LFS_OK, "an accepted save does not build its views",
				       err.msg);
			lfs_fuzz_check(lfs_viewset_find(&vs2, v->path) != NULL,
				       "the saved view is gone after the save", v->path);
			lfs_viewset_free(&vs2);
			free(out);
		}
	}
	lfs_viewset_free(&vs);
	return 0;
}
