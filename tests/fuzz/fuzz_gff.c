/**
 * @file fuzz_gff.c
 * libFuzzer target for the GFF reader's module hak list
 * (src/formats/nwnarchive/gff.h lfs_gff_hak_list(), read from a module.ifo by the
 * resource precedence, src/fs/resorder.c), docs/fuzzing.md. The input is
 * the file's bytes. Checks: never a crash or an out-of-bounds read (ASan),
 * a refusal always has a message, every hak name of an accepted list is a
 * non-empty string of at most 16 characters.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "formats/nwnarchive/gff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	char **haks = NULL;
	size_t nh = 0;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = lfs_gff_hak_list(data, n, &haks, &nh, &err);
	if (r != LFS_OK) {
		lfs_fuzz_check(err.msg[0] != '\0', "a refusal without a message", NULL);
		return 0;
	}
	for (size_t i = 0; i < nh; i++) {
		size_t l = strlen(haks[i]);
		lfs_fuzz_check(l > 0 && l <= 16, "a hak name of a bad length", haks[i]);
	}
	lfs_gff_hak_list_free(haks, nh);
	return 0;
}
