/**
 * @file registry.c
 * The format registry: the table of model formats (src/registry/format.h).
 *
 * The rows are not listed here: each format module (src/formats/<fmt>/)
 * defines its `const lfs_format lfs_format_<row>` and names the row in its
 * meson.build; src/formats/meson.build lists the modules in detection order
 * and generates formats_list.h, one LFS_FORMAT_ROW(row) line per row
 * (docs/architecture.md "Adding a format"). Order is detection order: the
 * first row whose extension and header test accept a file takes it.
 */
#include "registry/format.h"

#include <string.h>
#include <strings.h>

#define LFS_FORMAT_ROW(x) extern const lfs_format lfs_format_##x;
#define LFS_FORMAT_OPTIN_ROW(x) extern const lfs_format lfs_format_##x;
#include "formats/formats_list.h"

/* lfs_format_ascii_views(): is the ASCII NWN row offered (after the rows
 * above)? Set once before any thread asks. */
static bool ascii_views;

void lfs_format_ascii_views(bool on)
{
	ascii_views = on;
}

const lfs_format *const lfs_formats[] = {
#define LFS_FORMAT_ROW(x) &lfs_format_##x,
#include "formats/formats_list.h"
	NULL,
};

/* The opt-in rows (today NWN ASCII MDL), offered after every row of
 * lfs_formats[] once lfs_format_ascii_views(true) was called. */
static const lfs_format *const optin_rows[] = {
#define LFS_FORMAT_OPTIN_ROW(x) &lfs_format_##x,
#include "formats/formats_list.h"
	NULL,
};

bool lfs_format_has_extension(const lfs_format *f, const char *name)
{
	size_t len = strlen(name);
	for (const char *const *e = f->extensions; *e; e++) {
		size_t el = strlen(*e);
		if (len > el && !strcasecmp(name + len - el, *e))
			return true;
	}
	return false;
}

const lfs_format *lfs_format_for(const char *name, const uint8_t *data, size_t n)
{
	for (const lfs_format *const *f = lfs_formats; *f; f++)
		if ((!name || lfs_format_has_extension(*f, name)) && (*f)->detect(data, n))
			return *f;
	for (const lfs_format *const *a = optin_rows; ascii_views && *a; a++)
		if ((!name || lfs_format_has_extension(*a, name)) && (*a)->detect(data, n))
			return *a;
	return NULL;
}

const lfs_format *lfs_format_compiler_for(const char *name)
{
	const lfs_format *only = NULL;
	size_t compilers = 0;
	for (const lfs_format *const *f = lfs_formats; *f; f++) {
		if (!(*f)->compile)
			continue;
		if (lfs_format_has_extension(*f, name))
			return *f;
		only = *f;
		compilers++;
	}
	return compilers == 1 ? only : NULL;
}

const lfs_format *lfs_format_named(const char *name)
{
	for (const lfs_format *const *f = lfs_formats; *f; f++)
		if (!strcmp((*f)->name, name))
			return *f;
	for (const lfs_format *const *a = optin_rows; ascii_views && *a; a++)
		if (!strcmp((*a)->name, name))
			return *a;
	return NULL;
}
