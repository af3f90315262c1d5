/**
 * @file test_law_ulp.c
 * The round-trip law's value tolerance at its edges (docs/editing.md "The
 * round-trip law", src/law/law.c), table-driven.
 *
 * The law compares two numbers as values: a saved token with a '.' matches
 * a read-back value within half a unit of its last printed digit, a token
 * without one exactly, and both allow one float32 unit in the last place
 * (ulp32() of the larger value) on top. Orientations of NWN `model.mdl`
 * (`orientation`, `orientationkey`) compare as rotations: quaternion
 * components within 2e-5, either sign. OBJ positions and uvs also match by
 * the OBJ apply's precision rule (writer's precision plus 2^-23 of the
 * vector's largest component), normals by direction within 0.01 rad
 * (docs/formats/obj-csv.md "Saving OBJ from other programs").
 *
 * Texts: the views of the project's own samples/box.mdl, built through the
 * registry (lfs_views_build()), so both sides are genuine view texts; one
 * statement is replaced in both (the re-read side gets the base value, the
 * saved side the base moved by k float32 steps with nextafterf(), printed
 * with "%.9g"; a row may move the re-read side instead, printed as the views
 * print a float32: the shortest text that reads back as it). Base values are dyadic (1.25, -2.75, 0.625 ...: printed
 * exactly, away from a power of two, so one step is one ulp on both sides).
 * Every row carries its expected verdict, written here by hand from the
 * documented rules, never computed by the code under test. Rows that need
 * the law's full path (build the view of new bytes, lfs_law_check()) are in
 * test_check_path. NOD and SOD texts (other dialects: in order, SOD's free
 * CSV `time`) come from the corpus (skipped when it is absent).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "corpus.h"
#include "registry/format.h"
#include "law/law.h"
#include "registry/viewset.h"

enum { A = 1, R = 0 }; /* expected verdict: accept, refuse */

/* @p b moved by @p k float32 steps (nextafterf, toward +inf for k > 0). */
static float step(float b, int k)
{
	for (int i = 0; i < k; i++)
		b = nextafterf(b, INFINITY);
	for (int i = 0; i > k; i--)
		b = nextafterf(b, -INFINITY);
	return b;
}

/* The shortest "%.Ng" text that reads back as @p x (how the views print a
 * float32: the re-read side). */
static void shortest(char *buf, size_t n, float x)
{
	for (int p = 1; p <= 9; p++) {
		snprintf(buf, n, "%.*g", p, (double)x);
		if (strtof(buf, NULL) == x)
			return;
	}
}

/* @p s with the first '@' replaced by @p num (malloc'd). */
static char *fill(const char *tmpl, const char *num)
{
	const char *at = strchr(tmpl, '@');
	size_t n = strlen(tmpl) + strlen(num) + 1;
	char *o = malloc(n);
	assert_non_null(o);
	if (!at) {
		memcpy(o, tmpl, strlen(tmpl) + 1);
		return o;
	}
	snprintf(o, n, "%.*s%s%s", (int)(at - tmpl), tmpl, num, at + 1);
	return o;
}

/* @p s (@p n bytes) with the first occurrence of @p find replaced by @p repl. */
static char *subst(const char *s, size_t n, const char *find, const char *repl, size_t *on)
{
	char *z = malloc(n + 1);
	assert_non_null(z);
	memcpy(z, s, n);
	z[n] = '\0';
	const char *at = strstr(z, find);
	if (!at)
		fail_msg("'%s' not in the view text", find);
	size_t off = (size_t)(at - z), fl = strlen(find), rl = strlen(repl);
	*on = n - fl + rl;
	char *o = malloc(*on + 1);
	assert_non_null(o);
	memcpy(o, z, off);
	memcpy(o + off, repl, rl);
	memcpy(o + off + rl, z + off + fl, n - off - fl);
	o[*on] = '\0';
	free(z);
	return o;
}

typedef struct row {
	const char *view;   /* view path in the box.mdl view set */
	const char *find;   /* statement replaced in both texts */
	const char *saved;  /* its saved form ('@': the saved number) */
	const char *reread; /* its re-read form ('@': the base number) */
	float base;
	int sk, rk; /* float32 steps of the saved / re-read number from base */
	int expect;
	const char *what;
} row;

/* model.mdl lines of box.mdl (samples/README.md) */
#define GPOS "  position 0 0 0\n"
#define GORI "  orientation 0 0 0 0\n"
#define VERT "  verts 24\n    0.5 -0.5 0\n"
#define TVERT "  tverts 24\n    0 0 0\n"
#define NORM "  normals 24\n    1 0 0\n"
#define PKEY "    0.5 0 0 0.25\n"
#define OKEY "    0.5 0 0 1 1.5707964\n"
#define MDL "model.mdl"
#define OBJ "meshes/crate.obj"
#define PCSV "anims/spin/crate.position.csv"
#define OCSV "anims/spin/crate.orientation.csv"

static const row rows[] = {
	/* ---- NWN model.mdl: positions (plain values: 1 ulp + printed digit) */
	{ MDL, GPOS, "  position @ 0.25 0\n", "  position @ 0.25 0\n", 1.25f, 0, 0, A, "0 ulp" },
	{ MDL, GPOS, "  position @ 0.25 0\n", "  position @ 0.25 0\n", 1.25f, 1, 0, A, "+1 ulp" },
	{ MDL, GPOS, "  position @ 0.25 0\n", "  position @ 0.25 0\n", 1.25f, -1, 0, A, "-1 ulp" },
	{ MDL, GPOS, "  position @ 0.25 0\n", "  position @ 0.25 0\n", 1.25f, 2, 0, R, "+2 ulp" },
	{ MDL, GPOS, "  position @ 0.25 0\n", "  position @ 0.25 0\n", 1.25f, -2, 0, R, "-2 ulp" },
	{ MDL, GPOS, "  position 0.25 @ 0\n", "  position 0.25 @ 0\n", -2.75f, 1, 0, A, "+1 ulp" },
	{ MDL, GPOS, "  position 0.25 @ 0\n", "  position 0.25 @ 0\n", -2.75f, -1, 0, A, "-1 ulp" },
	{ MDL, GPOS, "  position 0.25 @ 0\n", "  position 0.25 @ 0\n", -2.75f, 2, 0, R, "+2 ulp" },
	{ MDL, GPOS, "  position 0.25 @ 0\n", "  position 0.25 @ 0\n", -2.75f, -2, 0, R, "-2 ulp" },
	/* re-read side moved (shortest text), saved at 8 decimals (+-5e-9) */
	{ MDL, GPOS, "  position 1.25000000 0.25 0\n", "  position @ 0.25 0\n", 1.25f, 0, 1, A, "re-read +1 ulp" },
	{ MDL, GPOS, "  position 1.25000000 0.25 0\n", "  position @ 0.25 0\n", 1.25f, 0, -1, A, "re-read -1 ulp" },
	{ MDL, GPOS, "  position 1.25000000 0.25 0\n", "  position @ 0.25 0\n", 1.25f, 0, 2, R, "re-read +2 ulp" },
	{ MDL, GPOS, "  position 1.25000000 0.25 0\n", "  position @ 0.25 0\n", 1.25f, 0, -2, R, "re-read -2 ulp" },
	/* saved "1.25" states 1.25 +- 0.005 */
	{ MDL, GPOS, "  position 1.25 0.25 0\n", "  position @ 0.25 0\n", 1.25f, 0, -2, A, "saved 1.25, re-read -2 ulp" },
	{ MDL, GPOS, "  position 1.25 0.25 0\n", "  position 1.2549 0.25 0\n", 0, 0, 0, A, "saved 1.25, re-read 1.2549" },
	{ MDL, GPOS, "  position 1.25 0.25 0\n", "  position 1.2551 0.25 0\n", 0, 0, 0, R, "saved 1.25, re-read 1.2551" },
	/* an integer is exact: only the ulp */
	{ MDL, GPOS, "  position 3 0.25 0\n", "  position @ 0.25 0\n", 3.0f, 0, 1, A, "integer, +1 ulp" },
	{ MDL, GPOS, "  position 3 0.25 0\n", "  position @ 0.25 0\n", 3.0f, 0, -1, A, "integer, -1 ulp" },
	{ MDL, GPOS, "  position 3 0.25 0\n", "  position @ 0.25 0\n", 3.0f, 0, 2, R, "integer, +2 ulp" },
	{ MDL, GPOS, "  position 3 0.25 0\n", "  position @ 0.25 0\n", 3.0f, 0, -2, R, "integer, -2 ulp" },
	/* printed precision: 6 decimals (Blender) = +-5e-7, plus 1 ulp
	 * (1.19e-7 at 1.25): 5 steps (5.96e-7) in, 6 steps (7.15e-7) out */
	{ MDL, GPOS, "  position 1.250000 0.25 0\n", "  position @ 0.25 0\n", 1.25f, 0, 5, A, "6 decimals, 5 ulp" },
	{ MDL, GPOS, "  position 1.250000 0.25 0\n", "  position @ 0.25 0\n", 1.25f, 0, 6, R, "6 decimals, 6 ulp" },
	{ MDL, GPOS, "  position 1.250000 0.25 0\n", "  position @ 0.25 0\n", 1.25f, 0, -5, A, "6 decimals, -5 ulp" },
	{ MDL, GPOS, "  position 1.250000 0.25 0\n", "  position @ 0.25 0\n", 1.25f, 0, -6, R, "6 decimals, -6 ulp" },
	/* docs/editing.md's own example */
	{ MDL, GPOS, "  position 0.362295 0 1\n", "  position 0.36229503 0 1\n", 0, 0, 0, A, "Blender 0.362295" },
	{ MDL, GPOS, "  position 0.375 0 1\n", "  position 0.376 0 1\n", 0, 0, 0, R, "0.375 vs 0.376" },
	/* number spellings documented as equal */
	{ MDL, GPOS, "  position 3.0 0.25 0\n", "  position 3 0.25 0\n", 0, 0, 0, A, "3.0 = 3" },
	{ MDL, GPOS, "  position 3 0.25 0\n", "  position 3.0 0.25 0\n", 0, 0, 0, A, "3 = 3.0" },
	{ MDL, GPOS, "  position 3e0 0.25 0\n", "  position 3 0.25 0\n", 0, 0, 0, A, "3e0 = 3" },
	{ MDL, GPOS, "  position +3 .25 0\n", "  position 3 0.25 0\n", 0, 0, 0, A, "+3 .25" },
	{ MDL, GPOS, "  position 3.00000 0.25 -0\n", "  position 3 0.25 0\n", 0, 0, 0, A, "-0 = 0 (values)" },
	{ MDL, GPOS, "  position 3 0.25 0\n", "  position 3 0.25 -0\n", 0, 0, 0, A, "0 = -0 (values)" },
	{ MDL, GPOS, "  position 3 0.25 1\n", "  position 3 0.25 0\n", 0, 0, 0, R, "1 vs 0" },
	/* letter case, blanks, line ends, quotes, comments */
	{ MDL, GPOS, "  Position @ 0.25 0\n", "  position @ 0.25 0\n", 1.25f, 0, 0, A, "Position" },
	{ MDL, GPOS, "  POSITION @ 0.25 0\n", "  position @ 0.25 0\n", 1.25f, 1, 0, A, "POSITION, +1 ulp" },
	{ MDL, GPOS, "\tposition\t@\t0.25\t0\n", "  position @ 0.25 0\n", 1.25f, 0, 0, A, "tabs" },
	{ MDL, GPOS, "  position   @ 0.25 0   \n", "  position @ 0.25 0\n", 1.25f, 0, 0, A, "trailing spaces" },
	{ MDL, GPOS, "  position @ 0.25 0\r\n\n# a comment\n", "  position @ 0.25 0\n", 1.25f, 0, 0, A, "CRLF, blank, comment" },
	{ MDL, GPOS, "  Position @ 0.25 0\r\n", "  position @ 0.25 0\n", 1.25f, 2, 0, R, "Position, CRLF, +2 ulp" },
	{ MDL, GPOS, "  positon @ 0.25 0\n", "  position @ 0.25 0\n", 1.25f, 0, 0, R, "misspelt" },
	{ MDL, "node trimesh crate\n", "NODE TriMesh CRATE\n", "node trimesh crate\n", 0, 0, 0, A, "node case" },
	{ MDL, "node trimesh crate\n", "node trimesh crates\n", "node trimesh crate\n", 0, 0, 0, R, "node name" },
	{ MDL, "  bitmap lfs_crate\n", "  bitmap \"lfs_crate\"\n", "  bitmap lfs_crate\n", 0, 0, 0, A, "quoted" },
	{ MDL, "  bitmap lfs_crate\n", "  bitmap LFS_Crate\n", "  bitmap lfs_crate\n", 0, 0, 0, A, "name case" },
	/* vertex, uv and normal rows of model.mdl: plain values */
	{ MDL, VERT, "  verts 24\n    @ -0.5 0\n", "  verts 24\n    @ -0.5 0\n", 1.25f, 1, 0, A, "verts +1 ulp" },
	{ MDL, VERT, "  verts 24\n    @ -0.5 0\n", "  verts 24\n    @ -0.5 0\n", 1.25f, -2, 0, R, "verts -2 ulp" },
	{ MDL, TVERT, "  tverts 24\n    @ 0.375 0\n", "  tverts 24\n    @ 0.375 0\n", 0.625f, -1, 0, A, "tverts -1 ulp" },
	{ MDL, TVERT, "  tverts 24\n    @ 0.375 0\n", "  tverts 24\n    @ 0.375 0\n", 0.625f, 2, 0, R, "tverts +2 ulp" },
	{ MDL, NORM, "  normals 24\n    0.6 @ 0\n", "  normals 24\n    0.6 @ 0\n", 0.75f, 1, 0, A, "normals +1 ulp" },
	{ MDL, NORM, "  normals 24\n    0.6 @ 0\n", "  normals 24\n    0.6 @ 0\n", 0.75f, -2, 0, R, "normals -2 ulp" },
	/* keys: times and values are plain values */
	{ MDL, PKEY, "    0.5 0 0 @\n", "    0.5 0 0 @\n", 1.25f, -1, 0, A, "positionkey value -1 ulp" },
	{ MDL, PKEY, "    0.5 0 0 @\n", "    0.5 0 0 @\n", 1.25f, 2, 0, R, "positionkey value +2 ulp" },
	{ MDL, PKEY, "    @ 0 0 0.25\n", "    @ 0 0 0.25\n", 0.625f, 1, 0, A, "positionkey time +1 ulp" },
	{ MDL, PKEY, "    @ 0 0 0.25\n", "    @ 0 0 0.25\n", 0.625f, -2, 0, R, "positionkey time -2 ulp" },
	{ MDL, OKEY, "    @ 0 0 1 1.5707964\n", "    @ 0 0 1 1.5707964\n", 0.625f, -1, 0, A, "orientationkey time -1 ulp" },
	{ MDL, OKEY, "    @ 0 0 1 1.5707964\n", "    @ 0 0 1 1.5707964\n", 0.625f, 2, 0, R, "orientationkey time +2 ulp" },
	/* ---- orientations: rotations, quaternion components within 2e-5.
	 * About z by 1.25 rad, the angle moves the largest component by
	 * 0.406 x its change: 413 steps (4.92e-5 rad) give 1.996e-5, 414
	 * steps 2.001e-5 (worked out by hand in double precision) */
	{ MDL, GORI, "  orientation 0 0 1 @\n", "  orientation 0 0 1 @\n", 1.25f, 0, 0, A, "0 ulp" },
	{ MDL, GORI, "  orientation 0 0 1 @\n", "  orientation 0 0 1 @\n", 1.25f, 1, 0, A, "+1 ulp" },
	{ MDL, GORI, "  orientation 0 0 1 @\n", "  orientation 0 0 1 @\n", 1.25f, -1, 0, A, "-1 ulp" },
	{ MDL, GORI, "  orientation 0 0 1 @\n", "  orientation 0 0 1 @\n", 1.25f, 413, 0, A, "+413 ulp (1.996e-5)" },
	{ MDL, GORI, "  orientation 0 0 1 @\n", "  orientation 0 0 1 @\n", 1.25f, 414, 0, R, "+414 ulp (2.001e-5)" },
	{ MDL, GORI, "  orientation 0 0 1 @\n", "  orientation 0 0 1 @\n", 1.25f, -413, 0, A, "-413 ulp" },
	{ MDL, GORI, "  orientation 0 0 1 @\n", "  orientation 0 0 1 @\n", 1.25f, -414, 0, R, "-414 ulp" },
	{ MDL, GORI, "  orientation 0 0 -1 -1.25\n", "  orientation 0 0 1 1.25\n", 0, 0, 0, A, "same rotation, axis and angle negated" },
	{ MDL, GORI, "  orientation 0 0 2 1.25\n", "  orientation 0 0 1 1.25\n", 0, 0, 0, A, "axis length free" },
	{ MDL, GORI, "  orientation 0 0 1 7.53318531\n", "  orientation 0 0 1 1.25\n", 0, 0, 0, A, "angle + 2 pi (quaternion sign)" },
	{ MDL, GORI, "  orientation 0 0 1 -1.25\n", "  orientation 0 0 1 1.25\n", 0, 0, 0, R, "inverse rotation" },
	{ MDL, GORI, "  Orientation\t0 0 1 @  \n", "  orientation 0 0 1 @\n", 1.25f, 1, 0, A, "case, tab, trailing, +1 ulp" },
	{ MDL, OKEY, "    0.5 0 0 1 @\n", "    0.5 0 0 1 @\n", 1.25f, 413, 0, A, "orientationkey +413 ulp" },
	{ MDL, OKEY, "    0.5 0 0 1 @\n", "    0.5 0 0 1 @\n", 1.25f, 414, 0, R, "orientationkey +414 ulp" },
	{ MDL, OKEY, "    0.5 0 0 -1 -1.5707964\n", "    0.5 0 0 1 1.5707964\n", 0, 0, 0, A, "orientationkey negated" },
	/* ---- meshes/crate.obj: v (1 ulp; or 2^-23 of the largest component) */
	{ OBJ, "v 0.5 -0.5 0\n", "v @ -0.5 0\n", "v @ -0.5 0\n", 1.25f, 0, 0, A, "v 0 ulp" },
	{ OBJ, "v 0.5 -0.5 0\n", "v @ -0.5 0\n", "v @ -0.5 0\n", 1.25f, 1, 0, A, "v +1 ulp" },
	{ OBJ, "v 0.5 -0.5 0\n", "v @ -0.5 0\n", "v @ -0.5 0\n", 1.25f, -1, 0, A, "v -1 ulp" },
	{ OBJ, "v 0.5 -0.5 0\n", "v @ -0.5 0\n", "v @ -0.5 0\n", 1.25f, 2, 0, R, "v +2 ulp" },
	{ OBJ, "v 0.5 -0.5 0\n", "v @ -0.5 0\n", "v @ -0.5 0\n", 1.25f, -2, 0, R, "v -2 ulp" },
	/* the smaller component of (1.75, -0.375, 0): 2^-23 x 1.75 = 7 of
	 * its steps (2^-25), plus half of the 9th decimal */
	{ OBJ, "v 0.5 -0.5 0\n", "v 1.75 @ 0\n", "v 1.75 @ 0\n", -0.375f, 7, 0, A, "v small component +7 ulp" },
	{ OBJ, "v 0.5 -0.5 0\n", "v 1.75 @ 0\n", "v 1.75 @ 0\n", -0.375f, 8, 0, R, "v small component +8 ulp" },
	{ OBJ, "v 0.5 -0.5 0\n", "v 1.75 @ 0\n", "v 1.75 @ 0\n", -0.375f, -7, 0, A, "v small component -7 ulp" },
	{ OBJ, "v 0.5 -0.5 0\n", "v 1.75 @ 0\n", "v 1.75 @ 0\n", -0.375f, -8, 0, R, "v small component -8 ulp" },
	{ OBJ, "v 0.5 -0.5 0\n", "v\t@  -0.5 0   \r\n", "v @ -0.5 0\n", 1.25f, 1, 0, A, "v tabs, trailing, CRLF, +1 ulp" },
	{ OBJ, "v 0.5 -0.5 0\n", "v 1.25000 -0.5 0.0\n", "v 1.25 -0.5 0\n", 0, 0, 0, A, "v 1.25000, 0.0" },
	/* vt: a 2-vector has no component slack: 1 ulp */
	{ OBJ, "vt 0 0\n", "vt @ 0.375\n", "vt @ 0.375\n", 0.625f, 0, 0, A, "vt 0 ulp" },
	{ OBJ, "vt 0 0\n", "vt @ 0.375\n", "vt @ 0.375\n", 0.625f, 1, 0, A, "vt +1 ulp" },
	{ OBJ, "vt 0 0\n", "vt @ 0.375\n", "vt @ 0.375\n", 0.625f, -1, 0, A, "vt -1 ulp" },
	{ OBJ, "vt 0 0\n", "vt @ 0.375\n", "vt @ 0.375\n", 0.625f, 2, 0, R, "vt +2 ulp" },
	{ OBJ, "vt 0 0\n", "vt @ 0.375\n", "vt @ 0.375\n", 0.625f, -2, 0, R, "vt -2 ulp" },
	/* vn: by direction within 0.01 rad; 0.0100003332 is the last float32
	 * y with atan(y) <= 0.01 (worked out by hand), one step more is out */
	{ OBJ, "vn 1 0 0\n", "vn @ 0 0\n", "vn 1 0 0\n", 1.0f, 0, 0, A, "vn 0 ulp" },
	{ OBJ, "vn 1 0 0\n", "vn @ 0 0\n", "vn 1 0 0\n", 1.0f, 1, 0, A, "vn +1 ulp" },
	{ OBJ, "vn 1 0 0\n", "vn @ 0 0\n", "vn 1 0 0\n", 1.0f, 2, 0, A, "vn +2 ulp (same direction)" },
	{ OBJ, "vn 1 0 0\n", "vn 1 @ 0\n", "vn 1 0 0\n", 0.0100003332f, 0, 0, A, "vn 0.01 rad" },
	{ OBJ, "vn 1 0 0\n", "vn 1 @ 0\n", "vn 1 0 0\n", 0.0100003332f, 1, 0, R, "vn 0.01 rad + 1 ulp" },
	{ OBJ, "vn 1 0 0\n", "vn -1 0 0\n", "vn 1 0 0\n", 0, 0, 0, A, "vn reversed" },
	{ OBJ, "vn 1 0 0\n", "vn 2 0 0\n", "vn 1 0 0\n", 0, 0, 0, A, "vn length free" },
	/* ---- anims CSV: track values and times, plain values */
	{ PCSV, "0.5,0,0,0.25\n", "0.5,0,0,@\n", "0.5,0,0,@\n", 1.25f, 0, 0, A, "value 0 ulp" },
	{ PCSV, "0.5,0,0,0.25\n", "0.5,0,0,@\n", "0.5,0,0,@\n", 1.25f, 1, 0, A, "value +1 ulp" },
	{ PCSV, "0.5,0,0,0.25\n", "0.5,0,0,@\n", "0.5,0,0,@\n", 1.25f, -1, 0, A, "value -1 ulp" },
	{ PCSV, "0.5,0,0,0.25\n", "0.5,0,0,@\n", "0.5,0,0,@\n", 1.25f, 2, 0, R, "value +2 ulp" },
	{ PCSV, "0.5,0,0,0.25\n", "0.5,0,0,@\n", "0.5,0,0,@\n", 1.25f, -2, 0, R, "value -2 ulp" },
	{ PCSV, "0.5,0,0,0.25\n", "@,0,0,0.25\n", "@,0,0,0.25\n", 0.625f, 1, 0, A, "time +1 ulp" },
	{ PCSV, "0.5,0,0,0.25\n", "@,0,0,0.25\n", "@,0,0,0.25\n", 0.625f, -1, 0, A, "time -1 ulp" },
	{ PCSV, "0.5,0,0,0.25\n", "@,0,0,0.25\n", "@,0,0,0.25\n", 0.625f, 2, 0, R, "time +2 ulp" },
	{ PCSV, "0.5,0,0,0.25\n", "@,0,0,0.25\n", "@,0,0,0.25\n", 0.625f, -2, 0, R, "time -2 ulp" },
	{ PCSV, "0.5,0,0,0.25\n", "0.5,0,0,0.250000\n", "0.5,0,0,@\n", 0.25f, 0, 17, A, "6 decimals, +17 ulp" },
	{ PCSV, "0.5,0,0,0.25\n", "0.5,0,0,0.250000\n", "0.5,0,0,@\n", 0.25f, 0, 18, R, "6 decimals, +18 ulp" },
	{ PCSV, "0.5,0,0,0.25\n", " 0.5 ,\t0, \"0\" ,@  \r\n", "0.5,0,0,@\n", 1.25f, 1, 0, A, "blanks, quotes, CRLF, +1 ulp" },
	{ PCSV, "0.5,0,0,0.25\n", "0.50,0e0,-0,1.25000\n", "0.5,0,0,1.25\n", 0, 0, 0, A, "spellings" },
	{ PCSV, "time,x,y,z\n", "Time,X,Y,Z\n", "time,x,y,z\n", 0, 0, 0, A, "header case" },
	{ PCSV, "time,x,y,z\n", "time,y,x,z\n", "time,x,y,z\n", 0, 0, 0, R, "header order" },
	/* orientation CSV columns are plain values (no rotation rule) */
	{ OCSV, "0.5,0,0,1,1.5707964\n", "0.5,0,0,1,@\n", "0.5,0,0,1,@\n", 1.25f, 1, 0, A, "angle +1 ulp" },
	{ OCSV, "0.5,0,0,1,1.5707964\n", "0.5,0,0,1,@\n", "0.5,0,0,1,@\n", 1.25f, -2, 0, R, "angle -2 ulp" },
	{ OCSV, "0.5,0,0,1,1.5707964\n", "0.5,0,0,-1,-1.5707964\n", "0.5,0,0,1,1.5707964\n", 0, 0, 0, R, "negated axis-angle: values differ" },
};

typedef struct box {
	uint8_t *d;
	size_t n;
	lfs_viewset vs;
} box;

static void box_load(box *b)
{
	const char *root = getenv("LFS_SOURCE_ROOT");
	assert_non_null(root); /* set by meson (tests/meson.build) */
	char p[4096];
	snprintf(p, sizeof(p), "%s/samples/box.mdl", root);
	b->d = lfs_read_file(p, &b->n);
	assert_non_null(b->d);
	lfs_error err;
	if (lfs_views_build("box.mdl", b->d, b->n, NULL, &b->vs, &err))
		fail_msg("box.mdl: %s", err.msg);
}

static void box_free(box *b)
{
	lfs_viewset_free(&b->vs);
	free(b->d);
}

/* The saved and re-read texts of row @p r from view text @p v. */
static void row_texts(const row *r, const lfs_view *v, char **s, size_t *sn, char **t, size_t *tn,
		      char *sv, char *rv)
{
	snprintf(sv, 32, "%.9g", (double)step(r->base, r->sk));
	shortest(rv, 32, step(r->base, r->rk));
	char *fs = fill(r->saved, sv), *fr = fill(r->reread, rv);
	*s = subst(v->data, v->size, r->find, fs, sn);
	*t = subst(v->data, v->size, r->find, fr, tn);
	free(fs);
	free(fr);
}

static void test_rows(void **state)
{
	(void)state;
	box b;
	box_load(&b);
	unsigned bad = 0;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const row *r = &rows[i];
		const lfs_view *v = lfs_viewset_find(&b.vs, r->view);
		assert_non_null(v);
		char *s, *t, sv[32], rv[32];
		size_t sn, tn;
		row_texts(r, v, &s, &sn, &t, &tn, sv, rv);
		lfs_error err;
		memset(&err, 0, sizeof(err));
		lfs_err e = lfs_law_compare(b.vs.format, v->path, v->kind, s, sn, t, tn, &err);
		int got = e == LFS_OK ? A : R;
		printf("%-4s %-32s %-40s saved %-14s re-read %-14s %s\n", got == r->expect ? "ok" : "FAIL",
		       r->view, r->what, strchr(r->saved, '@') ? sv : "-",
		       strchr(r->reread, '@') ? rv : "-", got == A ? "accepted" : err.msg);
		if (got != r->expect)
			bad++;
		if (got == R && e != LFS_ERR_PARSE)
			fail_msg("row %zu: refused with %d, not a parse error", i, (int)e);
		free(s);
		free(t);
	}
	box_free(&b);
	if (bad)
		fail_msg("%u rows with the wrong verdict", bad);
}

/*
 * Through lfs_law_check(): the bytes of a save of box.mdl that set dyadic
 * values (geometry position, a position key), then texts moved by k
 * float32 steps against those bytes (the law builds the view itself).
 */
typedef struct crow {
	const char *view, *find, *saved;
	float base;
	int sk, expect;
} crow;

static const crow crows[] = {
	{ MDL, "  position 1.25 -2.75 0.375\n", "  position @ -2.75 0.375\n", 1.25f, 0, A },
	{ MDL, "  position 1.25 -2.75 0.375\n", "  position @ -2.75 0.375\n", 1.25f, 1, A },
	{ MDL, "  position 1.25 -2.75 0.375\n", "  position @ -2.75 0.375\n", 1.25f, -1, A },
	{ MDL, "  position 1.25 -2.75 0.375\n", "  position @ -2.75 0.375\n", 1.25f, 2, R },
	{ MDL, "  position 1.25 -2.75 0.375\n", "  position @ -2.75 0.375\n", 1.25f, -2, R },
	{ MDL, "  position 1.25 -2.75 0.375\n", "  Position\t1.25 @ 0.375  \n", -2.75f, 1, A },
	{ MDL, "  position 1.25 -2.75 0.375\n", "  position 1.25 @ 0.375\n", -2.75f, -2, R },
	{ PCSV, "0.5,0,0,1.25\n", "0.5,0,0,@\n", 1.25f, 1, A },
	{ PCSV, "0.5,0,0,1.25\n", "0.5,0,0,@\n", 1.25f, -1, A },
	{ PCSV, "0.5,0,0,1.25\n", "0.5,0,0,@\n", 1.25f, 2, R },
	{ PCSV, "0.5,0,0,1.25\n", "0.5,0,0,@\n", 1.25f, -2, R },
	{ OBJ, "v 0.5 -0.5 0\n", "v @ -0.5 0\n", 0.5f, 0, A },
};

/* Save @p text over view @p path of @p d; the new bytes (must be accepted). */
static uint8_t *save(const lfs_format *f, const uint8_t *d, size_t n, const lfs_viewset *vs,
		     const char *path, const char *find, const char *repl, size_t *on)
{
	const lfs_view *v = lfs_viewset_find(vs, path);
	assert_non_null(v);
	size_t tn;
	char *t = subst(v->data, v->size, find, repl, &tn);
	uint8_t *out = NULL;
	lfs_error err;
	if (lfs_view_apply(f, d, n, v, t, tn, NULL, &out, on, &err))
		fail_msg("%s: %s", path, err.msg);
	free(t);
	return out;
}

static void test_check_path(void **state)
{
	(void)state;
	box b;
	box_load(&b);
	const lfs_format *f = b.vs.format;
	size_t n1, n2;
	uint8_t *d1 = save(f, b.d, b.n, &b.vs, MDL, GPOS, "  position 1.25 -2.75 0.375\n", &n1);
	lfs_viewset v1;
	lfs_error err;
	assert_int_equal(lfs_views_build("box.mdl", d1, n1, NULL, &v1, &err), LFS_OK);
	uint8_t *d2 = save(f, d1, n1, &v1, PCSV, "0.5,0,0,0.25\n", "0.5,0,0,1.25\n", &n2);
	lfs_viewset v2;
	assert_int_equal(lfs_views_build("box.mdl", d2, n2, NULL, &v2, &err), LFS_OK);
	unsigned bad = 0;
	for (size_t i = 0; i < sizeof(crows) / sizeof(crows[0]); i++) {
		const crow *r = &crows[i];
		const lfs_view *v = lfs_viewset_find(&v2, r->view);
		assert_non_null(v);
		char sv[32];
		snprintf(sv, sizeof(sv), "%.9g", (double)step(r->base, r->sk));
		char *fs = fill(r->saved, sv);
		size_t sn;
		char *s = subst(v->data, v->size, r->find, fs, &sn);
		memset(&err, 0, sizeof(err));
		lfs_err e = lfs_law_check(f, v, s, sn, d2, n2, &err);
		int got = e == LFS_OK ? A : R;
		printf("%-4s check %-32s saved %-14s (%+d ulp) %s\n", got == r->expect ? "ok" : "FAIL",
		       r->view, sv, r->sk, got == A ? "accepted" : err.msg);
		bad += got != r->expect;
		free(fs);
		free(s);
	}
	lfs_viewset_free(&v2);
	lfs_viewset_free(&v1);
	free(d2);
	free(d1);
	box_free(&b);
	if (bad)
		fail_msg("%u rows with the wrong verdict", bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_check_path),
	};
	return lfs_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
