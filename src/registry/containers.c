/**
 * @file containers.c
 * The table of container formats (container.h), beside the model formats'
 * registry (registry.c): the one place that knows which file names are
 * containers. One row today: NWN's ERF family and KEY/BIF
 * (src/formats/nwnarchive/archive.c).
 */
#define _GNU_SOURCE
#include "container.h"

#include <errno.h>

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The rows, NULL-terminated: each container module (src/formats/<module>/)
 * defines its `const lfs_container lfs_container_<row>` and names the row in
 * its meson.build; src/formats/meson.build generates formats_list.h. */
#define LFS_CONTAINER_ROW(x) extern const lfs_container lfs_container_##x;
#include "formats/formats_list.h"
static const lfs_container *const containers[] = {
#define LFS_CONTAINER_ROW(x) &lfs_container_##x,
#include "formats/formats_list.h"
	NULL,
};

static bool has_ext(const char *name, const char *const *exts)
{
	size_t ln = strlen(name);
	for (size_t i = 0; exts[i]; i++) {
		size_t le = strlen(exts[i]);
		if (ln > le && strcasecmp(name + ln - le, exts[i]) == 0)
			return true;
	}
	return false;
}

const lfs_container *lfs_container_for_name(const char *name)
{
	for (size_t i = 0; containers[i]; i++)
		if (has_ext(name, containers[i]->extensions))
			return containers[i];
	return NULL;
}

const lfs_container *lfs_container_detect(const char *name, const uint8_t *head, size_t n)
{
	const lfs_container *c = lfs_container_for_name(name);
	return c && c->detect(name, head, n) ? c : NULL;
}

const lfs_container *lfs_container_of(const lfs_format *f)
{
	for (size_t i = 0; f && containers[i]; i++)
		if (containers[i]->row == f)
			return containers[i];
	return NULL;
}

bool lfs_container_member(const char *rel, char *arch, size_t archsz, const char **name,
			  const lfs_container **c)
{
	const char *sl = strrchr(rel, '/');
	if (!sl || sl == rel || !sl[1] || (size_t)(sl - rel) >= archsz)
		return false;
	memcpy(arch, rel, (size_t)(sl - rel));
	arch[sl - rel] = '\0';
	const char *ab = strrchr(arch, '/');
	const lfs_container *k = lfs_container_for_name(ab ? ab + 1 : arch);
	if (!k)
		return false;
	*name = sl + 1;
	if (c)
		*c = k;
	return true;
}

int lfs_container_member_read(int rootfd, const char *rel, size_t max, uint8_t **out, size_t *n,
			      struct stat *st, bool *ro)
{
	char arch[4096];
	const char *name;
	const lfs_container *c;
	*out = NULL;
	*n = 0;
	if (!lfs_container_member(rel, arch, sizeof(arch), &name, &c))
		return ENOENT;
	return c->member_read(rootfd, arch, name, max, out, n, st, ro);
}

int lfs_container_member_stat(int rootfd, const char *rel, struct stat *st, uint64_t *size)
{
	char arch[4096];
	const char *name;
	const lfs_container *c;
	if (!lfs_container_member(rel, arch, sizeof(arch), &name, &c))
		return ENOENT;
	return c->member_stat(rootfd, arch, name, st, size);
}

/* Changes of aux files seen so far (process-wide). */
static _Atomic uint64_t aux_changes;

bool lfs_container_aux_name(const char *name)
{
	for (size_t i = 0; containers[i]; i++)
		if (containers[i]->aux_name && containers[i]->aux_name(name))
			return true;
	return false;
}

bool lfs_container_aux_changed(const char *name)
{
	for (size_t i = 0; containers[i]; i++) {
		if (containers[i]->aux_name && containers[i]->aux_name(name)) {
			aux_changes++;
			return true;
		}
	}
	return false;
}

uint64_t lfs_container_version(const char *rel)
{
	/* the container itself, or the folder part of a member path */
	const char *base = strrchr(rel, '/');
	const lfs_container *c = lfs_container_for_name(base ? base + 1 : rel);
	if (c && c->uses_aux && c->uses_aux(base ? base + 1 : rel))
		return aux_changes;
	if (!base)
		return 0;
	size_t dl = (size_t)(base - rel);
	const char *pb = dl ? (const char *)memrchr(rel, '/', dl) : NULL;
	char dir[256];
	size_t bl = dl - (pb ? (size_t)(pb + 1 - rel) : 0);
	if (bl >= sizeof(dir))
		return 0;
	memcpy(dir, pb ? pb + 1 : rel, bl);
	dir[bl] = '\0';
	c = lfs_container_for_name(dir);
	return c && c->uses_aux && c->uses_aux(dir) ? aux_changes : 0;
}

void lfs_container_flush(void)
{
	for (size_t i = 0; containers[i]; i++)
		if (containers[i]->flush)
			containers[i]->flush();
}

size_t lfs_container_held(void)
{
	size_t b = 0;
	for (size_t i = 0; containers[i]; i++)
		if (containers[i]->held)
			b += containers[i]->held();
	return b;
}
