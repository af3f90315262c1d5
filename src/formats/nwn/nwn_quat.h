/**
 * @file nwn_quat.h
 * Quaternion helpers shared by the NWN views and thumbnail (internal to src/formats/nwn/).
 *
 * Binary orientation keys are quaternions (x, y, z, w) [N §3.2]; the ASCII
 * and CSV views print axis + angle in radians, converted the way the
 * decompilers do: axis = xyz/|xyz|, angle = 2·acos(w), evaluated as
 * 2·atan2(|xyz|, w) (the same value for unit quaternions, but exact for small
 * angles where acos(w) of a float32 w near 1 loses most digits, and tolerant
 * of slightly unnormalised keys); a quaternion with xyz = 0 prints as
 * "0 0 0 0". Computed in double, printed as float32.
 */
#ifndef LFS_VIEWS_NWN_QUAT_H
#define LFS_VIEWS_NWN_QUAT_H

#include <math.h>

/** Quaternion (x, y, z, w) -> axis (3) + angle in radians, as float32. */
static inline void nwn_quat_to_axis_angle(const float q[4], float out[4])
{
	double x = q[0], y = q[1], z = q[2], w = q[3];
	double len = sqrt(x * x + y * y + z * z);
	if (!(len > 0.0) || !isfinite(len)) {
		out[0] = out[1] = out[2] = out[3] = 0.0f;
		return;
	}
	out[0] = (float)(x / len);
	out[1] = (float)(y / len);
	out[2] = (float)(z / len);
	out[3] = (float)(2.0 * atan2(len, w));
}

/**
 * Rotate @p v by the unit quaternion @p q (x, y, z, w) into @p o, in double:
 * t = 2·(q.xyz × v), o = v + w·t + q.xyz × t. Used by model.obj and the
 * thumbnail to place nodes by their orientation keys.
 */
static inline void nwn_quat_rotate(const double q[4], const double v[3], double o[3])
{
	double tx = 2 * (q[1] * v[2] - q[2] * v[1]);
	double ty = 2 * (q[2] * v[0] - q[0] * v[2]);
	double tz = 2 * (q[0] * v[1] - q[1] * v[0]);
	o[0] = v[0] + q[3] * tx + (q[1] * tz - q[2] * ty);
	o[1] = v[1] + q[3] * ty + (q[2] * tx - q[0] * tz);
	o[2] = v[2] + q[3] * tz + (q[0] * ty - q[1] * tx);
}

#endif
