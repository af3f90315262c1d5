/**
 * @file fuzz_obj.c
 * libFuzzer target for the OBJ reader lfs_obj_read() (src/text/obj.h), the
 * one reader under every format's OBJ apply (docs/fuzzing.md). The first two
 * input bytes choose the rules (so one corpus covers every combination the
 * formats use): byte 0 = lfs_obj_rules.flags (LFS_OBJ_*), byte 1 bit 0 =
 * faces are triangles, bits 1-3 = max_index (0 = none, else 8^k), bits 4-7
 * = max_corners (0 = none); the rest is the OBJ text. A text that reads is
 * then walked as the appliers walk it: every face lies within the corner
 * array, every corner has a position and no index beyond max_index, and
 * with LFS_OBJ_DEFINED_ABOVE every index names an element that exists
 * (without it indices may point forward: the applier checks them).
 */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "text/obj.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	if (n < 2)
		return 0;
	lfs_obj_rules rules;
	memset(&rules, 0, sizeof(rules));
	rules.flags = data[0];
	rules.triangles = (data[1] & 1) ? "FUZZ" : NULL;
	unsigned k = (data[1] >> 1) & 7;
	rules.max_index = k ? (uint64_t)1 << (3 * k) : 0;
	rules.max_corners = data[1] >> 4;
	lfs_obj o;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	lfs_err r = lfs_obj_read("mesh.obj", (const char *)data + 2, n - 2, &rules, &o, &err);
	if (r) {
		lfs_fuzz_check(err.msg[0] != '\0', "a refusal without a message", NULL);
		lfs_fuzz_check(strstr(err.msg, ": error: ") != NULL,
			       "a refusal not in file:line:col: error: form", err.msg);
	} else {
		bool above = rules.flags & LFS_OBJ_DEFINED_ABOVE;
		for (size_t i = 0; i < o.nf; i++) {
			const lfs_obj_face *f = &o.f[i];
			lfs_fuzz_check(f->first + f->n <= o.nc, "a face beyond the corners", NULL);
			lfs_fuzz_check(!rules.triangles || f->n == 3, "a face not a triangle", NULL);
			for (uint32_t c = 0; c < f->n; c++) {
				const lfs_obj_corner *cn = &o.c[f->first + c];
				lfs_fuzz_check(cn->v >= 0, "a corner without v", NULL);
				if (rules.max_index)
					lfs_fuzz_check((uint64_t)cn->v < rules.max_index &&
							       (cn->t < 0 ||
								(uint64_t)cn->t < rules.max_index) &&
							       (cn->n < 0 ||
								(uint64_t)cn->n < rules.max_index),
						       "a corner beyond max_index", NULL);
				if (!above)
					continue; /* forward indices: the applier checks */
				lfs_fuzz_check((size_t)cn->v < o.nv, "a corner's v out of range",
					       NULL);
				lfs_fuzz_check(cn->t < 0 || (size_t)cn->t < o.nt,
					       "a corner's vt out of range", NULL);
				lfs_fuzz_check(cn->n < 0 || (size_t)cn->n < o.nn ||
						       (rules.flags & LFS_OBJ_NO_VN),
					       "a corner's vn out of range", NULL);
			}
		}
	}
	lfs_obj_free(&o);
	return 0;
}
