/**
 * @file nwn_mdl_derive_priv.h
 * Private to the compiler's derivations (nwn_mdl_derive.c,
 * nwn_mdl_derive_tree.c): float / extended-precision vectors, quaternions,
 * arena allocation.
 */
#ifndef LFS_NWN_MDL_DERIVE_PRIV_H
#define LFS_NWN_MDL_DERIVE_PRIV_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../common/mem.h"
#include "nwn_mdl_derive.h"

#define RAW_NULL 0xFFFFFFFFu

typedef struct v3 {
	float x, y, z;
} v3;

static inline v3 v3_at(const float *p)
{
	return (v3){ p[0], p[1], p[2] };
}
static inline v3 v3_sub(v3 a, v3 b)
{
	return (v3){ a.x - b.x, a.y - b.y, a.z - b.z };
}
static inline float v3_len(v3 a)
{
	float sq = (float)((double)a.x * a.x + (double)a.y * a.y + (double)a.z * a.z);
	return (float)sqrt(sq);
}
/* Normalise in place; a zero vector stays as it is. */
static inline v3 v3_norm(v3 a)
{
	float l = v3_len(a);
	if (l == 0)
		return a;
	return (v3){ a.x / l, a.y / l, a.z / l };
}
/* Extended precision, as the reference's x87 code keeps temporaries. */
typedef long double xf;
typedef struct xv3 {
	xf x, y, z;
} xv3;

static inline xv3 xv3_cross_sub(v3 p1, v3 p2, v3 p3, bool second_from_p1)
{
	/* (p2 - p1) x (p3 - p2)  or  (p2 - p1) x (p3 - p1) */
	v3 q = second_from_p1 ? p1 : p2;
	xf ax = (xf)p2.x - p1.x, ay = (xf)p2.y - p1.y, az = (xf)p2.z - p1.z;
	xf bx = (xf)p3.x - q.x, by = (xf)p3.y - q.y, bz = (xf)p3.z - q.z;
	return (xv3){ ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx };
}

static inline xf xv3_len(xv3 a)
{
	return sqrtl(a.x * a.x + a.y * a.y + a.z * a.z);
}

static inline v3 xv3_norm_f(xv3 a)
{
	xf l = xv3_len(a);
	if (l == 0)
		return (v3){ (float)a.x, (float)a.y, (float)a.z };
	return (v3){ (float)(a.x / l), (float)(a.y / l), (float)(a.z / l) };
}

static inline bool v3_eq(v3 a, v3 b)
{
	return a.x == b.x && a.y == b.y && a.z == b.z;
}


/* ------------------------------------------------------------- quaternions */

typedef struct quat {
	float x, y, z, w;
} quat;

static inline quat q_mul(quat a, quat b)
{
	return (quat){
		(float)((double)a.w * b.x - (double)a.z * b.y + (double)a.y * b.z + (double)a.x * b.w),
		(float)((double)a.z * b.x + (double)a.w * b.y - (double)a.x * b.z + (double)a.y * b.w),
		(float)(-(double)a.y * b.x + (double)a.x * b.y + (double)a.w * b.z + (double)a.z * b.w),
		(float)(-(double)a.x * b.x - (double)a.y * b.y - (double)a.z * b.z + (double)a.w * b.w),
	};
}

/* The reference compiler's vector rotation (two quaternion products with
 * the vector taken as (v, 1)); reproduced formula for formula. */
static inline v3 q_rotate(quat q, v3 v)
{
	quat t = {
		(float)((double)q.w * v.x - (double)q.z * v.y + (double)q.y * v.z + q.x),
		(float)((double)q.z * v.x + (double)q.w * v.y - (double)q.x * v.z + q.y),
		(float)(-(double)q.y * v.x + (double)q.x * v.y + (double)q.w * v.z + q.z),
		(float)(-(double)q.x * v.x - (double)q.y * v.y - (double)q.z * v.z + q.w),
	};
	return (v3){
		(float)(-(double)t.w * q.x + (double)t.z * q.y - (double)t.y * q.z + (double)t.x * q.w),
		(float)(-(double)t.z * q.x - (double)t.w * q.y + (double)t.x * q.z + (double)t.y * q.w),
		(float)((double)t.y * q.x - (double)t.x * q.y - (double)t.w * q.z + (double)t.z * q.w),
	};
}


static inline void *zalloc(const nwn_alloc *a, size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		return NULL;
	size_t n = count * size;
	return a->fn(a->ctx, n ? n : 1);
}

#define NOMEM(e) lfs_nomem((e), NULL)

#endif
