/**
 * @file fuzz.h
 * Shared bits of the libFuzzer targets (docs/fuzzing.md): the entry point's
 * prototype (the targets are built with -Wmissing-prototypes) and a check
 * that aborts with a message, so that a broken promise is a crash libFuzzer
 * reports and saves.
 */
#ifndef LFS_FUZZ_H
#define LFS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "registry/format.h"

/** libFuzzer's entry point: one input, @p n bytes; returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);

/** Abort with "fuzz: <what>: <msg>" when @p ok is false. */
static inline void lfs_fuzz_check(int ok, const char *what, const char *msg)
{
	if (ok)
		return;
	fprintf(stderr, "fuzz: %s%s%s\n", what, msg && *msg ? ": " : "", msg ? msg : "");
	abort();
}

/** The registry row named @p name; aborts when there is none. */
static inline const lfs_format *lfs_fuzz_format(const char *name)
{
	const lfs_format *f = lfs_format_named(name);
	lfs_fuzz_check(f != NULL, "no format row", name);
	return f;
}

/**
 * The registry row with an apply that input byte @p sel picks (its low 7
 * bits, modulo the number of such rows); NULL when no row can apply.
 */
static inline const lfs_format *lfs_fuzz_apply_row(uint8_t sel)
{
	static const lfs_format *rows[8];
	static size_t nrows;
	if (!nrows)
		for (const lfs_format *const *f = lfs_formats; *f && nrows < 8; f++)
			if ((*f)->apply)
				rows[nrows++] = *f;
	return nrows ? rows[(sel & 0x7f) % nrows] : NULL;
}

#endif
