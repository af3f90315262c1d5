/**
 * @file fuzz_decode.c
 * libFuzzer target for one binary decoder of the registry (docs/fuzzing.md):
 * the format named by LFS_FUZZ_FORMAT (a compile-time string: "nwn-mdl",
 * "nod", "nad", "nil", "sod"; one binary per format) decodes the input as
 * hostile bytes. A refusal carries a message and leaves no model. A model
 * that decodes is encoded (NWN may refuse data its decoder does not keep:
 * LFS_ERR_UNSUPPORTED with a message); the bytes must decode again and encode to the
 * very same bytes (the layout is a fixed point). For NOD, NAD, NIL and SOD
 * they must also equal the input: lfs_format.encode promises that for a
 * model straight from decode. The NWN encoder lays a file out afresh
 * (nwn_mdl_encode.h: the compilers' layout, pointers recomputed), so the
 * bytes of a decoded file equal it only when it was laid out that way, as
 * every real binary is (tests/unit/test_formats.c): not asserted here.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#ifndef LFS_FUZZ_FORMAT
#error "LFS_FUZZ_FORMAT names the format (tests/fuzz/meson.build)"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static const lfs_format *f;
	if (!f)
		f = lfs_fuzz_format(LFS_FUZZ_FORMAT);
	(void)f->detect(data, n);
	void *m = NULL;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = f->decode(data, n, &m, &err);
	if (r) {
		lfs_fuzz_check(m == NULL, "a failed decode left a model", err.msg);
		lfs_fuzz_check(err.msg[0] != '\0', "a failed decode without a message", NULL);
		return 0;
	}
	lfs_fuzz_check(m != NULL, "decode gave no model", NULL);
	uint8_t *out = NULL;
	size_t on = 0;
	r = f->encode(m, &out, &on, &err);
	if (r && !strcmp(f->name, "nwn-mdl")) {
		/* nwn_mdl_encode.h: data the decoder does not keep is refused */
		lfs_fuzz_check(r == LFS_ERR_UNSUPPORTED && err.msg[0] && !out,
			       "a decoded NWN model refused without LFS_ERR_UNSUPPORTED", err.msg);
		f->free_model(m);
		return 0;
	}
	lfs_fuzz_check(r == LFS_OK, "a decoded model does not encode", err.msg);
	if (strcmp(f->name, "nwn-mdl"))
		lfs_fuzz_check(on == n && memcmp(out, data, n) == 0,
			       "decode -> encode does not give the input bytes", NULL);
	void *m2 = NULL;
	r = f->decode(out, on, &m2, &err);
	lfs_fuzz_check(r == LFS_OK, "the encoded bytes do not decode", err.msg);
	uint8_t *out2 = NULL;
	size_t on2 = 0;
	r = f->encode(m2, &out2, &on2, &err);
	lfs_fuzz_check(r == LFS_OK, "the re-decoded model does not encode", err.msg);
	lfs_fuzz_check(on2 == on && memcmp(out2, out, on) == 0,
		       "encode -> decode -> encode changes the bytes", NULL);
	free(out2);
	free(out);
	f->free_model(m2);
	f->free_model(m);
	return 0;
}
