//! Mesh deformation by a posed skeleton: linear blend skinning (LBS) and dual-quaternion
//! skinning (DQS, Kavan et al. 2008). One implementation each, used everywhere.

use crate::{CoreError, Influence, Pose, Skeleton, Skin};
use glam::{Affine3A, Mat3A, Mat4, Quat, Vec3, Vec3A, Vec4};
use rayon::prelude::*;

/// Vertices per rayon task: large enough to amortise scheduling, small enough to balance.
const CHUNK: usize = 4096;

/// Per-joint skinning matrices `world(pose)_j · inverse_bind_j`: bind space → posed space.
pub fn skinning_matrices(skeleton: &Skeleton, pose: &Pose) -> Result<Vec<Mat4>, CoreError> {
    let world = pose.world_matrices(skeleton)?;
    Ok(world
        .iter()
        .zip(&skeleton.inverse_bind)
        .map(|(w, ib)| *w * *ib)
        .collect())
}

/// Linear blend skinning: `x'_v = Σ_j w_vj · M_j · x_v`. Unskinned vertices keep their bind
/// position. Panics if lengths disagree or a joint index is out of range (a validated
/// [`crate::Character`] guarantees neither happens).
pub fn lbs(positions: &[Vec3], skin: &Skin, matrices: &[Mat4]) -> Vec<Vec3> {
    let mut out = vec![Vec3::ZERO; positions.len()];
    lbs_into(positions, skin, matrices, &mut out);
    out
}

/// [`lbs`] writing into a caller-provided buffer (no allocation per frame).
///
/// Speed: each vertex is moved by each of its joints' affine matrices and the results are
/// blended (`Σ w·(A·x)`), fewer vector operations than blending the matrices first; rows of
/// the usual 4 influences take an unrolled path. Rows are read in blocks straight from the
/// skin's compressed arrays (see `benches/skinning.rs` for the measured effect).
pub fn lbs_into(positions: &[Vec3], skin: &Skin, matrices: &[Mat4], out: &mut [Vec3]) {
    assert_eq!(positions.len(), skin.vertex_count());
    assert_eq!(positions.len(), out.len());
    let affine: Vec<Affine3A> = matrices.iter().map(|m| Affine3A::from_mat4(*m)).collect();
    for_each_row(positions, skin, out, |p, row| lbs_vertex(p, row, &affine));
}

/// Run `deform(position, influences)` for every vertex in parallel blocks of [`CHUNK`],
/// writing the results to `out`.
fn for_each_row<F>(positions: &[Vec3], skin: &Skin, out: &mut [Vec3], deform: F)
where
    F: Fn(Vec3, &[Influence]) -> Vec3 + Sync,
{
    let (offsets, influences) = skin.csr();
    out.par_chunks_mut(CHUNK)
        .zip(positions.par_chunks(CHUNK))
        .enumerate()
        .for_each(|(c, (out, positions))| {
            // This block's row starts plus the start after its last row; in range because the
            // callers checked `positions.len() == skin.vertex_count()` (offsets has one more).
            let v0 = c * CHUNK;
            let starts = &offsets[v0..=v0 + positions.len()];
            for ((x, p), span) in out.iter_mut().zip(positions).zip(starts.windows(2)) {
                let row = influences.get(span[0] as usize..span[1] as usize).unwrap_or(&[]);
                *x = deform(*p, row);
            }
        });
}

/// One vertex of [`lbs`].
#[inline(always)]
fn lbs_vertex(p: Vec3, row: &[Influence], joints: &[Affine3A]) -> Vec3 {
    let x = Vec3A::from(p);
    let term = |i: &Influence| joints[i.joint as usize].transform_point3a(x) * i.weight;
    match row {
        [] => p,
        [a, b, c, d] => ((term(a) + term(b)) + (term(c) + term(d))).into(),
        _ => row.iter().fold(Vec3A::ZERO, |s, i| s + term(i)).into(),
    }
}

/// A joint's skinning matrix split as `M = [R | t] · S`: a rigid part as a unit dual
/// quaternion (`real`, `dual` as xyzw vectors) and the remaining stretch `S = Rᵀ · M₃`
/// (identity for rigid skeletons).
#[derive(Clone, Copy)]
struct DualQuatJoint {
    real: Vec4,
    dual: Vec4,
    stretch: Mat3A,
}

impl DualQuatJoint {
    fn from_matrix(m: &Mat4) -> Self {
        let (scale, rotation, translation) = m.to_scale_rotation_translation();
        let real = rotation.normalize();
        let m3 = Mat3A::from_mat4(*m);
        let stretch = if (scale - Vec3::ONE).abs().max_element() < 1e-6 {
            Mat3A::IDENTITY
        } else {
            Mat3A::from_quat(real.conjugate()) * m3
        };
        // Dual part: ½ · t · r, with t as a pure quaternion.
        let dual = Quat::from_xyzw(translation.x, translation.y, translation.z, 0.0) * real * 0.5;
        Self {
            real: Vec4::from(real),
            dual: Vec4::from(dual),
            stretch,
        }
    }
}

/// Dual-quaternion skinning: rigid parts blended as dual quaternions (no candy-wrapper
/// collapse), any scale/shear blended linearly and applied first. Unskinned vertices keep
/// their bind position.
pub fn dqs(positions: &[Vec3], skin: &Skin, matrices: &[Mat4]) -> Vec<Vec3> {
    let mut out = vec![Vec3::ZERO; positions.len()];
    dqs_into(positions, skin, matrices, &mut out);
    out
}

/// [`dqs`] writing into a caller-provided buffer.
///
/// Speed: the blended dual quaternion is applied with cross products
/// (`x' = x + 2r×(r×x + w·x) + t`) instead of quaternion products, and normalised once.
pub fn dqs_into(positions: &[Vec3], skin: &Skin, matrices: &[Mat4], out: &mut [Vec3]) {
    assert_eq!(positions.len(), skin.vertex_count());
    assert_eq!(positions.len(), out.len());
    let joints: Vec<DualQuatJoint> = matrices.iter().map(DualQuatJoint::from_matrix).collect();
    if joints.iter().any(|j| j.stretch != Mat3A::IDENTITY) {
        for_each_row(positions, skin, out, |p, row| dqs_vertex::<true>(p, row, &joints));
    } else {
        for_each_row(positions, skin, out, |p, row| dqs_vertex::<false>(p, row, &joints));
    }
}

/// One vertex of [`dqs`]; `STRETCH` says whether any joint has a non-rigid part.
#[inline(always)]
fn dqs_vertex<const STRETCH: bool>(p: Vec3, row: &[Influence], joints: &[DualQuatJoint]) -> Vec3 {
    let Some(first) = row.first() else {
        return p;
    };
    let pivot = joints[first.joint as usize].real;
    let mut real = Vec4::ZERO;
    let mut dual = Vec4::ZERO;
    let mut stretch = Mat3A::ZERO;
    let mut add = |i: &Influence| {
        let jq = &joints[i.joint as usize];
        // Antipodality: keep every quaternion in the first one's hemisphere.
        let w = if jq.real.dot(pivot) < 0.0 { -i.weight } else { i.weight };
        real += jq.real * w;
        dual += jq.dual * w;
        if STRETCH {
            stretch += jq.stretch * i.weight;
        }
    };
    match row {
        [a, b, c, d] => {
            add(a);
            add(b);
            add(c);
            add(d);
        }
        _ => row.iter().for_each(add),
    }
    let x = if STRETCH {
        stretch * Vec3A::from(p)
    } else {
        Vec3A::from(p)
    };
    // Normalise by the real part's length (the blend of unit quaternions is not unit).
    let inv = real.length_recip();
    let (r, d) = (real * inv, dual * inv);
    let (rv, rw) = (Vec3A::from_vec4(r), r.w);
    let (dv, dw) = (Vec3A::from_vec4(d), d.w);
    // Translation t = 2·(d·r*).xyz = 2·(rw·dv − dw·rv + rv×dv); rotation by the unit r.
    let t = (dv * rw - rv * dw + rv.cross(dv)) * 2.0;
    let rotated = x + rv.cross(rv.cross(x) + x * rw) * 2.0;
    (rotated + t).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Transform;

    fn two_joint_skeleton() -> Skeleton {
        let mut s = Skeleton {
            names: vec!["a".into(), "b".into()],
            parents: vec![None, Some(0)],
            rest_local: vec![Transform::IDENTITY, Transform::from_translation(Vec3::Y)],
            inverse_bind: vec![],
        };
        s.bind_to_rest();
        s
    }

    /// Straightforward LBS: blend the 4×4 matrices, then transform.
    fn lbs_reference(positions: &[Vec3], skin: &Skin, matrices: &[Mat4]) -> Vec<Vec3> {
        positions
            .iter()
            .zip(skin.rows())
            .map(|(p, row)| {
                if row.is_empty() {
                    return *p;
                }
                let m = row
                    .iter()
                    .fold(Mat4::ZERO, |m, i| m + matrices[i.joint as usize] * i.weight);
                m.transform_point3(*p)
            })
            .collect()
    }

    /// Straightforward DQS with quaternion products (the textbook form).
    fn dqs_reference(positions: &[Vec3], skin: &Skin, matrices: &[Mat4]) -> Vec<Vec3> {
        positions
            .iter()
            .zip(skin.rows())
            .map(|(p, row)| {
                let Some(first) = row.first() else {
                    return *p;
                };
                let parts: Vec<(Quat, Vec3, Mat3A)> = matrices
                    .iter()
                    .map(|m| {
                        let (_, r, t) = m.to_scale_rotation_translation();
                        let r = r.normalize();
                        (r, t, Mat3A::from_quat(r.conjugate()) * Mat3A::from_mat4(*m))
                    })
                    .collect();
                let pivot = parts[first.joint as usize].0;
                let (mut real, mut dual, mut stretch) = (Quat::from_xyzw(0.0, 0.0, 0.0, 0.0), Vec4::ZERO, Mat3A::ZERO);
                for i in row {
                    let (r, t, s) = parts[i.joint as usize];
                    let w = if r.dot(pivot) < 0.0 { -i.weight } else { i.weight };
                    let d = Quat::from_xyzw(t.x, t.y, t.z, 0.0) * r * 0.5;
                    real += r * w;
                    dual += Vec4::from(d) * w;
                    stretch += s * i.weight;
                }
                let n = real.length();
                let (real, dual) = (real / n, Quat::from_vec4(dual / n));
                let t = (dual * real.conjugate()) * 2.0;
                real * Vec3::from(stretch * Vec3A::from(*p)) + Vec3::new(t.x, t.y, t.z)
            })
            .collect()
    }

    /// A chain of `joints` with seeded rotations (and, if `stretch`, non-uniform scales), a
    /// mesh of `n` vertices spanning several parallel blocks, and rows of 0 to 6 influences.
    fn random_case(n: usize, joints: usize, stretch: bool) -> (Vec<Vec3>, Skin, Vec<Mat4>) {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32
        };
        let mut s = Skeleton {
            names: (0..joints).map(|j| format!("j{j}")).collect(),
            parents: (0..joints).map(|j| j.checked_sub(1)).collect(),
            rest_local: vec![Transform::from_translation(Vec3::Y); joints],
            inverse_bind: vec![],
        };
        s.bind_to_rest();
        let mut pose = Pose::rest(&s);
        for t in &mut pose.local {
            let axis = Vec3::new(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5).normalize();
            t.rotation = Quat::from_axis_angle(axis, 3.0 * rnd());
            if stretch {
                t.scale = Vec3::new(0.8 + 0.4 * rnd(), 0.8 + 0.4 * rnd(), 0.8 + 0.4 * rnd());
            }
        }
        let m = skinning_matrices(&s, &pose).unwrap();
        let positions: Vec<Vec3> = (0..n)
            .map(|_| Vec3::new(rnd() - 0.5, rnd() * joints as f32, rnd() - 0.5))
            .collect();
        let rows: Vec<Vec<(u32, f32)>> = (0..n)
            .map(|v| {
                (0..v % 7)
                    .map(|_| ((rnd() * joints as f32) as u32 % joints as u32, 0.05 + rnd()))
                    .collect()
            })
            .collect();
        let skin = Skin::from_rows(rows.iter().map(|r| r.as_slice()), joints, 8).unwrap();
        (positions, skin, m)
    }

    #[test]
    fn fast_paths_match_textbook_forms_across_blocks() {
        for stretch in [false, true] {
            let (p, skin, m) = random_case(2 * CHUNK + 123, 9, stretch);
            let max_err = |a: &[Vec3], b: &[Vec3]| a.iter().zip(b).map(|(a, b)| (*a - *b).length()).fold(0.0, f32::max);
            // Positions reach ~9 units from the origin: 1e-4 is ~10 float32 ulps there.
            assert!(max_err(&lbs(&p, &skin, &m), &lbs_reference(&p, &skin, &m)) < 1e-4);
            assert!(max_err(&dqs(&p, &skin, &m), &dqs_reference(&p, &skin, &m)) < 1e-4);
        }
    }

    #[test]
    fn rest_pose_leaves_mesh_unchanged() {
        let s = two_joint_skeleton();
        let positions = vec![Vec3::new(0.1, 0.5, 0.0), Vec3::new(0.0, 1.5, 0.2)];
        let rows: Vec<Vec<(u32, f32)>> = vec![vec![(0, 0.5), (1, 0.5)], vec![(1, 1.0)]];
        let skin = Skin::from_rows(rows.iter().map(|r| r.as_slice()), 2, 4).unwrap();
        let m = skinning_matrices(&s, &Pose::rest(&s)).unwrap();
        for out in [lbs(&positions, &skin, &m), dqs(&positions, &skin, &m)] {
            for (a, b) in out.iter().zip(&positions) {
                assert!((*a - *b).length() < 1e-6);
            }
        }
    }

    #[test]
    fn rigid_rotation_matches_hand_computation() {
        let s = two_joint_skeleton();
        let mut pose = Pose::rest(&s);
        // Bend joint b by 90° about z: a point one unit above b moves to one unit along -x.
        pose.local[1].rotation = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
        let m = skinning_matrices(&s, &pose).unwrap();
        let skin = Skin::rigid(&[1], 2).unwrap();
        let p = [Vec3::new(0.0, 2.0, 0.0)];
        for out in [lbs(&p, &skin, &m), dqs(&p, &skin, &m)] {
            assert!((out[0] - Vec3::new(-1.0, 1.0, 0.0)).length() < 1e-6, "{:?}", out[0]);
        }
    }

    #[test]
    fn dqs_preserves_volume_where_lbs_collapses() {
        // Twist 180° about the bone axis: LBS with 50/50 weights collapses a point off the
        // axis onto the axis; DQS keeps its distance (the candy-wrapper artefact).
        let s = two_joint_skeleton();
        let mut pose = Pose::rest(&s);
        pose.local[1].rotation = Quat::from_rotation_y(std::f32::consts::PI * 0.999);
        let m = skinning_matrices(&s, &pose).unwrap();
        let rows: Vec<Vec<(u32, f32)>> = vec![vec![(0, 0.5), (1, 0.5)]];
        let skin = Skin::from_rows(rows.iter().map(|r| r.as_slice()), 2, 4).unwrap();
        let p = [Vec3::new(0.3, 1.0, 0.0)];
        let radius = |q: Vec3| Vec3::new(q.x, 0.0, q.z).length();
        assert!(radius(lbs(&p, &skin, &m)[0]) < 0.01);
        assert!((radius(dqs(&p, &skin, &m)[0]) - 0.3).abs() < 1e-4);
    }

    #[test]
    fn dqs_handles_uniformly_scaled_skeletons() {
        let s = two_joint_skeleton();
        let mut pose = Pose::rest(&s);
        pose.local[0].scale = Vec3::splat(2.0);
        let m = skinning_matrices(&s, &pose).unwrap();
        let skin = Skin::rigid(&[0], 2).unwrap();
        let p = [Vec3::new(1.0, 1.0, 1.0)];
        assert!((dqs(&p, &skin, &m)[0] - Vec3::splat(2.0)).length() < 1e-5);
        assert!((lbs(&p, &skin, &m)[0] - Vec3::splat(2.0)).length() < 1e-5);
    }
}
