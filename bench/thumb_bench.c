/**
 * @file thumb_bench.c
 * Thumbnail timing (not a test): per model over the corpus and on generated
 * UV spheres, at 256 and 512 px. Results: docs/performance.md "Thumbnails".
 *
 * Usage: thumb_bench [-n RUNS] [-c PATH/legacyfs-convert] [-k] [CORPUS_DIR]
 *   (-k keeps the generated sphere files in $TMPDIR for other tools)
 *
 *  - corpus: every NWN binary of nwn/binary.txt that has drawable meshes,
 *    every NOD, every SOD outside disputed/; each file timed RUNS times
 *    (default 5) through lfs_views_thumbnail (decode + extraction + render
 *    + PNG, no textures), median per file; printed: per format the median
 *    and max of those per-file medians, and the triangle range.
 *  - spheres: UV spheres of ~1k, 10k, 100k, 1M triangles (the counts of
 *    the f3d comparison in docs/performance.md), built as NOD files (groups of <= 65535 vertices), timed
 *    (a) in-process through lfs_views_thumbnail, median of RUNS, split into
 *    scene (decode + extraction), render and PNG; (b) with -c, the whole
 *    process `legacyfs-convert thumbnail -s N sphere.nod out.png` (fork +
 *    exec + file read + render + write), median of RUNS of the child's
 *    CPU time (user + sys) and of the wall time — the figures to put next
 *    to f3d's whole-process times. Files go to $TMPDIR (or /tmp).
 * In-process figures are thread CPU time (CLOCK_THREAD_CPUTIME_ID): robust
 * on a shared machine; wall time on an idle machine is the same.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchlib.h"
#include "formats/nod/nod.h"
#include "formats/nod/nod_views.h"
#include "formats/nwn/nwn_views.h"
#include "formats/sod/sod_views.h"
#include "render/thumb.h"
#include "render/thumb_models.h"
#include "registry/viewset.h"

/* In-process timings are this thread's CPU time, not wall time: the
 * machines we measure on are shared, and CPU time does not count the time
 * other processes hold the core (cache and SMT contention still show). */
static double now(void)
{
	return bench_clock(CLOCK_THREAD_CPUTIME_ID);
}

/* Median ms of RUNS thumbnails of one file; -1 when it has none. */
static double time_file(const char *name, const uint8_t *d, size_t n, unsigned size, int runs,
			size_t *tris, const lfs_format *f)
{
	double t[64];
	for (int r = 0; r < runs; r++) {
		uint8_t *png = NULL;
		size_t pn;
		lfs_error err;
		double t0 = now();
		lfs_err e = lfs_views_thumbnail(name, d, n, size, NULL, "file:///x", 0, &png, &pn, &err);
		t[r] = (now() - t0) * 1e3;
		free(png);
		if (e)
			return -1;
	}
	lfs_thumb_scene s = { 0 };
	lfs_error err;
	*tris = lfs_thumb_scene_of(f, d, n, NULL, &s, &err) ? 0 : lfs_thumb_drawable(&s);
	lfs_thumb_scene_free(&s);
	return bench_median(t, runs);
}

typedef struct stat_row {
	const char *fmt;
	double med[2][4096];
	int n;
	size_t tmin, tmax;
} stat_row;

static void corpus_file(stat_row *row, const char *path, const char *name, int runs, const lfs_format *f)
{
	size_t n;
	uint8_t *d = lfs_read_file(path, &n);
	if (!d)
		return;
	size_t tris = 0;
	double a = time_file(name, d, n, 256, runs, &tris, f);
	if (a >= 0 && row->n < 4096) {
		double b = time_file(name, d, n, 512, runs, &tris, f);
		row->med[0][row->n] = a;
		row->med[1][row->n] = b;
		row->n++;
		if (!row->tmin || tris < row->tmin)
			row->tmin = tris;
		if (tris > row->tmax)
			row->tmax = tris;
	}
	free(d);
}

static void manifest(stat_row *row, const char *dir, const char *sub, const char *ext, int runs,
		     const lfs_format *f)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s/MANIFEST.tsv", dir, sub);
	size_t mn;
	char *man = (char *)lfs_read_file(path, &mn);
	if (!man)
		return;
	man[mn] = '\0';
	char *save = NULL;
	for (char *line = strtok_r(man, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		size_t ln = strlen(line), el = strlen(ext);
		if (ln <= el || strcmp(line + ln - el, ext) || !strncmp(line, "disputed/", 9))
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, line);
		corpus_file(row, path, line, runs, f);
	}
	free(man);
}

static void print_row(stat_row *r)
{
	if (!r->n) {
		printf("| %s | 0 | | | | |\n", r->fmt);
		return;
	}
	double mx[2] = { 0, 0 };
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < r->n; i++)
			mx[s] = r->med[s][i] > mx[s] ? r->med[s][i] : mx[s];
	double m256 = bench_median(r->med[0], r->n), m512 = bench_median(r->med[1], r->n);
	printf("| %s | %d | %zu–%zu | %.2f / %.2f | %.2f / %.2f |\n", r->fmt, r->n, r->tmin, r->tmax,
	       m256, mx[0], m512, mx[1]);
}

/* UV sphere as a NOD: @p stacks rings × 2*stacks slices, ~4*stacks² triangles. */
static uint8_t *sphere_nod(unsigned stacks, size_t *n, size_t *tris)
{
	unsigned slices = 2 * stacks;
	/* bands of rows so that every group has <= 65535 vertices */
	unsigned rows_per = 65535 / (slices + 1) - 1;
	if (rows_per > 65535 / (2 * slices))
		rows_per = 65535 / (2 * slices); /* u16 face count per group too */
	if (rows_per < 1)
		rows_per = 1;
	size_t nv = 0, nf = 0, ng = 0;
	for (unsigned r0 = 0; r0 < stacks; r0 += rows_per) {
		unsigned r1 = r0 + rows_per < stacks ? r0 + rows_per : stacks;
		nv += (size_t)(r1 - r0 + 1) * (slices + 1);
		nf += (size_t)(r1 - r0) * slices * 2;
		ng++;
	}
	nod_model m;
	memset(&m, 0, sizeof(m));
	m.version = NOD_VERSION;
	m.flags = NOD_MODEL_STATIC;
	nod_bone bone;
	memset(&bone, 0, sizeof(bone));
	bone.sibling = bone.child = bone.parent = -1;
	m.n_bones = 1;
	m.bones = &bone;
	nod_name mesh;
	memset(&mesh, 0, sizeof(mesh));
	memcpy(mesh.raw, "sphere", 6);
	m.n_meshes = 1;
	m.meshes = &mesh;
	m.verts = calloc(nv, sizeof(nod_vertex));
	m.faces = calloc(nf, sizeof(nod_face));
	m.groups = calloc(ng, sizeof(nod_group));
	size_t v = 0, f = 0, g = 0;
	for (unsigned r0 = 0; r0 < stacks; r0 += rows_per, g++) {
		unsigned r1 = r0 + rows_per < stacks ? r0 + rows_per : stacks;
		size_t v0 = v, f0 = f;
		for (unsigned r = r0; r <= r1; r++) {
			double th = M_PI * r / stacks;
			for (unsigned s = 0; s <= slices; s++) {
				double ph = 2 * M_PI * s / slices;
				nod_vertex *x = &m.verts[v++];
				x->pos[0] = x->normal[0] = (float)(sin(th) * cos(ph));
				x->pos[1] = x->normal[1] = (float)(sin(th) * sin(ph));
				x->pos[2] = x->normal[2] = (float)cos(th);
				x->uv[0] = (float)s / slices;
				x->uv[1] = (float)r / stacks;
				x->weight = 1;
			}
		}
		for (unsigned r = 0; r < r1 - r0; r++)
			for (unsigned s = 0; s < slices; s++) {
				uint16_t a = (uint16_t)(r * (slices + 1) + s), b = (uint16_t)(a + slices + 1);
				m.faces[f++] = (nod_face){ { a, b, (uint16_t)(a + 1) } };
				m.faces[f++] = (nod_face){ { (uint16_t)(a + 1), b, (uint16_t)(b + 1) } };
			}
		m.groups[g].material = -1;
		m.groups[g].n_verts = (uint16_t)(v - v0);
		m.groups[g].n_faces = (uint16_t)(f - f0);
		m.groups[g].flags = NOD_GROUP_NOSKINNING;
	}
	m.n_verts = (uint32_t)nv;
	m.n_faces = (uint32_t)nf;
	m.n_groups = (uint16_t)ng;
	uint8_t *out = NULL;
	lfs_error err;
	if (nod_model_layout(&m, &err) || nod_encode(&m, &out, n, &err)) {
		fprintf(stderr, "sphere: %s\n", err.msg);
		exit(1);
	}
	free(m.verts);
	free(m.faces);
	free(m.groups);
	*tris = nf;
	return out;
}

/* Whole process: wall ms into *w, CPU ms (user + sys of the child) returned. */
static double run_convert(const char *conv, const char *in, const char *out, unsigned size,
			  double *w)
{
	char sz[16];
	snprintf(sz, sizeof(sz), "%u", size);
	double t0 = bench_now();
	pid_t p = fork();
	if (p == 0) {
		execl(conv, conv, "thumbnail", "-s", sz, in, out, (char *)NULL);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (wait4(p, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "%s failed\n", conv);
		exit(1);
	}
	*w = (bench_now() - t0) * 1e3;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-3;
}

int main(int argc, char **argv)
{
	int runs = 5;
	const char *dir = getenv("LFS_CORPUS"), *conv = NULL;
	bool keep = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			conv = argv[++i];
		else if (!strcmp(argv[i], "-k"))
			keep = true;
		else
			dir = argv[i];
	}
	if (runs < 1 || runs > 64)
		runs = 5;
	if (!dir)
		dir = "../shared/corpus";

	printf("## corpus (ms of thread CPU time per model, no textures; median of %d runs per file)\n\n",
	       runs);
	printf("| format | models | triangles | 256 px median / max | 512 px median / max |\n");
	printf("| --- | ---: | ---: | ---: | ---: |\n");
	static stat_row rows[3];
	rows[0].fmt = "NWN binary (with meshes)";
	rows[1].fmt = "NOD";
	rows[2].fmt = "SOD";
	char path[4096];
	snprintf(path, sizeof(path), "%s/nwn/binary.txt", dir);
	size_t ln;
	char *list = (char *)lfs_read_file(path, &ln);
	if (list) {
		list[ln] = '\0';
		char *save = NULL;
		for (char *l = strtok_r(list, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			snprintf(path, sizeof(path), "%s/nwn/%s", dir, l);
			const char *base = strrchr(l, '/') ? strrchr(l, '/') + 1 : l;
			corpus_file(&rows[0], path, base, runs, &lfs_format_nwn_mdl);
		}
		free(list);
	}
	manifest(&rows[1], dir, "nod", ".nod", runs, &lfs_format_nod);
	manifest(&rows[2], dir, "sod", ".sod", runs, &lfs_format_sod);
	for (int i = 0; i < 3; i++)
		print_row(&rows[i]);

	printf("\n## UV spheres (ms; in-process thread CPU time, median of %d: total = scene + render + PNG)\n\n",
	       runs);
	printf("| triangles | size | in-process total | scene | render | PNG | PNG bytes |%s\n",
	       conv ? " whole process CPU / wall (legacyfs-convert) |" : "");
	printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |%s\n", conv ? " ---: |" : "");
	const unsigned stacks[] = { 16, 50, 158, 500 };
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	for (int k = 0; k < 4; k++) {
		size_t n, tris;
		uint8_t *d = sphere_nod(stacks[k], &n, &tris);
		char in[4096], out[4096];
		snprintf(in, sizeof(in), "%s/thumb_bench_sphere_%zu.nod", tmp, tris);
		snprintf(out, sizeof(out), "%s/thumb_bench_sphere_%zu.png", tmp, tris);
		FILE *fo = fopen(in, "wb");
		if (!fo || fwrite(d, 1, n, fo) != n) {
			fprintf(stderr, "%s: cannot write\n", in);
			return 1;
		}
		fclose(fo);
		unsigned sizes[] = { 256, 512 };
		for (int z = 0; z < 2; z++) {
			double tt[64], ts[64], tr[64], tp[64];
			size_t pngn = 0;
			for (int r = 0; r < runs; r++) {
				double t0 = now();
				lfs_thumb_scene s = { 0 };
				lfs_error err;
				if (lfs_thumb_scene_of(&lfs_format_nod, d, n, NULL, &s, &err))
					return 1;
				double t1 = now();
				uint8_t *rgba;
				if (lfs_thumb_render(&s, sizes[z], &rgba, &err))
					return 1;
				double t2 = now();
				uint8_t *png;
				if (lfs_thumb_png(rgba, sizes[z], sizes[z], "file:///x", 0, &png, &pngn, &err))
					return 1;
				double t3 = now();
				lfs_thumb_scene_free(&s);
				free(rgba);
				free(png);
				ts[r] = (t1 - t0) * 1e3;
				tr[r] = (t2 - t1) * 1e3;
				tp[r] = (t3 - t2) * 1e3;
				tt[r] = (t3 - t0) * 1e3;
			}
			printf("| %zu | %u | %.2f | %.2f | %.2f | %.2f | %zu |", tris, sizes[z],
			       bench_median(tt, runs), bench_median(ts, runs),
			       bench_median(tr, runs), bench_median(tp, runs), pngn);
			if (conv) {
				double tc[64], tw[64];
				for (int r = 0; r < runs; r++)
					tc[r] = run_convert(conv, in, out, sizes[z], &tw[r]);
				printf(" %.1f / %.1f |", bench_median(tc, runs),
				       bench_median(tw, runs));
			}
			printf("\n");
		}
		free(d);
		if (!keep) {
			remove(in);
			remove(out);
		}
	}
	return 0;
}
