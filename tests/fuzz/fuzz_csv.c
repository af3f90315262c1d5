/**
 * @file fuzz_csv.c
 * libFuzzer target for the CSV reader (src/text/csv.h) and the CSV parsers
 * built on it that stand alone (NAD track and tags CSVs; the NWN and SOD
 * CSV applies run in fuzz_roundtrip), docs/fuzzing.md. Input byte 0 chooses:
 * bits 0-1 = mode (0: every row and field through lfs_csv_next() and
 * lfs_csv_f32(); 1: a NAD track CSV; 2: a NAD tags.csv; 3: lfs_csv_header()
 * with a fixed header, then rows), bits 2-3 = reader flags (LFS_CSV_*); the
 * rest is the CSV text.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "formats/nad/nad.h"
#include "text/csv.h"
#include "formats/nad/nad_views.h"

static void refused(const lfs_error *err)
{
	lfs_fuzz_check(err->msg[0] != '\0', "a refusal without a message", NULL);
	lfs_fuzz_check(strstr(err->msg, ": error: ") != NULL,
		       "a refusal not in file:line:col: error: form", err->msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	if (n < 1)
		return 0;
	unsigned mode = data[0] & 3, flags = (data[0] >> 2) & 3;
	const char *text = (const char *)data + 1;
	size_t tn = n - 1;
	lfs_error err;
	memset(&err, 0, sizeof(err));
	if (mode == 1) {
		nad_key *keys = NULL;
		uint32_t nk = 0;
		if (nad_csv_track_parse("track.csv", text, tn, &keys, &nk, &err))
			refused(&err);
		free(keys);
		return 0;
	}
	if (mode == 2) {
		nad_tag *tags = NULL;
		uint32_t nt = 0;
		if (nad_csv_tags_parse("tags.csv", text, tn, &tags, &nt, &err))
			refused(&err);
		free(tags);
		return 0;
	}
	lfs_csv c;
	lfs_csv_init(&c, "keys.csv", text, tn, flags, &err);
	if (mode == 3 && lfs_csv_header(&c, "time,x,y,z")) {
		refused(&err);
		return 0;
	}
	int k;
	while ((k = lfs_csv_next(&c)) == 1) {
		size_t nf = c.nf < LFS_CSV_MAXF ? c.nf : LFS_CSV_MAXF;
		for (size_t i = 0; i < nf; i++) {
			float v;
			uint64_t u;
			lfs_fuzz_check(c.f[i].s != NULL || c.f[i].len == 0, "a field without bytes",
				       NULL);
			(void)lfs_csv_col(&c, i);
			(void)lfs_csv_uint(&c.f[i], UINT32_MAX, &u);
			if (lfs_csv_f32(&c, i, &v))
				refused(&err);
		}
		(void)lfs_csv_col(&c, nf + 1);
		if (mode == 3 && lfs_csv_arity(&c, 4, "time, x, y, z"))
			refused(&err);
	}
	if (k < 0)
		refused(&err);
	return 0;
}
