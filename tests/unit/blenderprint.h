/**
 * @file blenderprint.h
 * Test support: an OBJ view re-printed as Blender 3.4's OBJ exporter
 * (wm.obj_export, default settings) prints it.
 */
#ifndef LFS_TEST_BLENDERPRINT_H
#define LFS_TEST_BLENDERPRINT_H

#include <stdbool.h>

#include "common/strbuf.h"

/**
 * Append to @p out the OBJ view @p text (NUL-terminated) as Blender prints
 * it: positions and uvs with "%.6f" of their float32, normals normalised and
 * printed with "%.4f", uvs and normals deduplicated (within each object when
 * @p per_object, else over the whole file) so a corner's v/vt/vn indices
 * differ, each object's vt and vn lines after its v lines, `g` and comment
 * lines left out, a Blender header and `s 0` before each `usemtl`. A zero
 * normal is printed as 0 0 @p zero_z. Asserts (cmocka) on allocation failure
 * or a line of 4096 bytes or more.
 */
void lfs_test_blenderize(const char *text, bool per_object, double zero_z, lfs_sb *out);

#endif
