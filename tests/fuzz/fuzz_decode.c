/**
 * @file fuzz_decode.c
 * libFuzzer target for one binary decoder of the registry (docs/fuzzing.md):
 * the format named by LFS_FUZZ_FORMAT (a compile-time string: "nwn-mdl",
 * "nod", "nad", "nil", "sod"; one binary per format) decodes the input as
 * hostile bytes. A model that decodes is encoded again, and the bytes must
 * equal the input: lfs_format.encode promises that for a model straight
 * from decode (lossless codecs).
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
	lfs_fuzz_check(r == LFS_OK, "a decoded model does not encode", err.msg);
	lfs_fuzz_check(on == n && memcmp(out, data, n) == 0,
		       "decode -> encode does not give the input bytes", NULL);
	free(out);
	f->free_model(m);
	return 0;
}
