/**
 * @file registry.c
 * The format registry: one line per format (src/formats/format.h).
 *
 * Adding a format: write its codec in src/formats/, its views and its
 * `const lfs_format lfs_format_<name>` row in src/views/<name>_views.c, add
 * one line below and its files to meson.build (docs/architecture.md).
 * Order is detection order: the first row whose extension and header test
 * accept a file takes it.
 */
#include "../formats/format.h"

#include <string.h>
#include <strings.h>

extern const lfs_format lfs_format_nwn_mdl, lfs_format_nod, lfs_format_nad, lfs_format_nil,
	lfs_format_sod, lfs_format_nwn_ascii;

/* lfs_format_ascii_views(): is the ASCII NWN row offered (after the rows
 * above)? Set once before any thread asks. */
static bool ascii_views;

void lfs_format_ascii_views(bool on)
{
	ascii_views = on;
}

const lfs_format *const lfs_formats[] = {
	&lfs_format_nwn_mdl, /* Neverwinter Nights binary MDL (src/views/nwn_views.c) */
	&lfs_format_nod,     /* Vampire: The Masquerade – Redemption model */
	&lfs_format_nad,     /* Vampire: The Masquerade – Redemption animation */
	&lfs_format_nil,     /* Vampire: The Masquerade – Redemption level (read-only) */
	&lfs_format_sod,     /* Star Trek: Armada Storm3D model */
	NULL,
};

static bool has_extension(const lfs_format *f, const char *name)
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
		if ((!name || has_extension(*f, name)) && (*f)->detect(data, n))
			return *f;
	const lfs_format *a = &lfs_format_nwn_ascii;
	if (ascii_views && (!name || has_extension(a, name)) && a->detect(data, n))
		return a;
	return NULL;
}

const lfs_format *lfs_format_compiler_for(const char *name)
{
	const lfs_format *only = NULL;
	size_t compilers = 0;
	for (const lfs_format *const *f = lfs_formats; *f; f++) {
		if (!(*f)->compile)
			continue;
		if (has_extension(*f, name))
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
	if (ascii_views && !strcmp(lfs_format_nwn_ascii.name, name))
		return &lfs_format_nwn_ascii;
	return NULL;
}
