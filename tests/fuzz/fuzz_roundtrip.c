/**
 * @file fuzz_roundtrip.c
 * libFuzzer target for decode -> views -> apply unchanged -> same bytes
 * (docs/fuzzing.md, docs/editing.md "The round-trip law"). Input byte 0
 * picks the format among the registry rows with an apply (nwn-mdl, nod,
 * nad, sod, in registry order, byte 0 modulo their count; bit 7 also asks
 * for thumbnail.png at 128 px); the rest is the model file, hostile. When
 * its views build, the first writable view of each kind is applied unedited
 * through
 * lfs_view_apply() (the checked path of the mount and `legacyfs-convert
 * apply`), and the promise of a writable view holds: it maps back exactly
 * (lfs_view.writable), so the save is accepted and gives the very bytes the
 * views were built from (docs/architecture.md: "every writable view
 * re-applied unedited to the same bytes"). A file that does not build its
 * views must say why and leave no views.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "registry/viewset.h"

/* NWN models can have thousands of views (one CSV per controller), and each
 * checked apply builds the views again: the first writable view of each kind
 * is applied (the text, model.obj, a mesh OBJ, a track CSV, a table CSV),
 * which keeps an execution short. */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	if (n < 1)
		return 0;
	const lfs_format *f = lfs_fuzz_apply_row(data[0]);
	if (!f)
		return 0;
	lfs_view_opts opts;
	memset(&opts, 0, sizeof(opts));
	opts.thumb_size = (data[0] & 0x80) ? 128 : 0;
	const uint8_t *d = data + 1;
	size_t dn = n - 1;
	lfs_viewset vs;
	memset(&vs, 0, sizeof(vs));
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = lfs_views_build_as(f, d, dn, &opts, &vs, &err);
	if (r) {
		lfs_fuzz_check(err.msg[0] != '\0', "views refused without a message", NULL);
		return 0;
	}
	bool applied[LFS_VIEW_THUMBNAIL + 1] = { false };
	for (size_t i = 0; i < vs.n_views; i++) {
		const lfs_view *v = &vs.views[i];
		if (!v->writable || v->kind > LFS_VIEW_THUMBNAIL || applied[v->kind])
			continue;
		applied[v->kind] = true;
		uint8_t *out = NULL;
		size_t on = 0;
		memset(&err, 0, sizeof(err));
		r = lfs_view_apply(f, d, dn, v, v->data, v->size, NULL, &out, &on, &err);
		if (r) {
			fprintf(stderr, "fuzz: %s view %s\n", f->name, v->path);
			lfs_fuzz_check(0, "an unedited writable view is refused", err.msg);
		}
		if (on != dn || memcmp(out, d, dn) != 0) {
			fprintf(stderr, "fuzz: %s view %s: %zu bytes in, %zu out\n", f->name,
				v->path, dn, on);
			lfs_fuzz_check(0, "an unedited writable view changes the bytes", NULL);
		}
		free(out);
	}
	lfs_viewset_free(&vs);
	return 0;
}
