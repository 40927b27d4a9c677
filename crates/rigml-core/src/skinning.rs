//! Mesh deformation by a posed skeleton: linear blend skinning (LBS) and dual-quaternion
//! skinning (DQS, Kavan et al. 2008). One implementation each, used everywhere.

use crate::{CoreError, Pose, Skeleton, Skin};
use glam::{Affine3A, Mat3A, Mat4, Quat, Vec3, Vec3A};
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
pub fn lbs_into(positions: &[Vec3], skin: &Skin, matrices: &[Mat4], out: &mut [Vec3]) {
    assert_eq!(positions.len(), skin.vertex_count());
    assert_eq!(positions.len(), out.len());
    let affine: Vec<Affine3A> = matrices.iter().map(|m| Affine3A::from_mat4(*m)).collect();
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        let v0 = c * CHUNK;
        for (i, x) in chunk.iter_mut().enumerate() {
            let v = v0 + i;
            let row = skin.influences(v);
            if row.is_empty() {
                *x = positions[v];
                continue;
            }
            let mut m3 = Mat3A::ZERO;
            let mut t = Vec3A::ZERO;
            for inf in row {
                let a = &affine[inf.joint as usize];
                m3 += a.matrix3 * inf.weight;
                t += a.translation * inf.weight;
            }
            *x = (m3 * Vec3A::from(positions[v]) + t).into();
        }
    });
}

/// A joint's skinning matrix split as `M = [R | t] · S`: a rigid part as a unit dual
/// quaternion and the remaining stretch `S = Rᵀ · M₃` (identity for rigid skeletons).
#[derive(Clone, Copy)]
struct DualQuatJoint {
    real: Quat,
    dual: Quat,
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
        Self { real, dual, stretch }
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
pub fn dqs_into(positions: &[Vec3], skin: &Skin, matrices: &[Mat4], out: &mut [Vec3]) {
    assert_eq!(positions.len(), skin.vertex_count());
    assert_eq!(positions.len(), out.len());
    let joints: Vec<DualQuatJoint> = matrices.iter().map(DualQuatJoint::from_matrix).collect();
    let any_stretch = joints.iter().any(|j| j.stretch != Mat3A::IDENTITY);
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        let v0 = c * CHUNK;
        for (i, x) in chunk.iter_mut().enumerate() {
            let v = v0 + i;
            let row = skin.influences(v);
            let Some(first) = row.first() else {
                *x = positions[v];
                continue;
            };
            let pivot = joints[first.joint as usize].real;
            let mut real = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
            let mut dual = real;
            let mut stretch = Mat3A::ZERO;
            for inf in row {
                let jq = &joints[inf.joint as usize];
                // Antipodality: keep every quaternion in the first one's hemisphere.
                let w = if jq.real.dot(pivot) < 0.0 {
                    -inf.weight
                } else {
                    inf.weight
                };
                real += jq.real * w;
                dual += jq.dual * w;
                if any_stretch {
                    stretch += jq.stretch * inf.weight;
                }
            }
            let p = if any_stretch {
                stretch * Vec3A::from(positions[v])
            } else {
                Vec3A::from(positions[v])
            };
            let norm = real.length();
            let (real, dual) = (real / norm, dual / norm);
            let t = (dual * real.conjugate()) * 2.0;
            *x = (real * Vec3::from(p)) + Vec3::new(t.x, t.y, t.z);
        }
    });
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
