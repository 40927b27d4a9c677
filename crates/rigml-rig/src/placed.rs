//! A skeleton as placers produce it (names, parents, joint heads) and its conversion to a
//! [`Skeleton`] with a bind pose.

use crate::RigError;
use glam::{Mat3, Mat4, Quat, Vec3};
use rigml_core::{Skeleton, Transform};

/// Joints placed inside a mesh, in the mesh's model space.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacedSkeleton {
    /// Joint names, unique.
    pub names: Vec<String>,
    /// Parent of each joint; `parents[j] < j` for every non-root joint.
    pub parents: Vec<Option<usize>>,
    /// Model-space head of each joint.
    pub heads: Vec<Vec3>,
    /// The character's forward direction (unit, model space); the bone roll is taken from it so
    /// that every bone's local Z axis points as close to forward as the bone allows.
    pub forward: Vec3,
}

impl PlacedSkeleton {
    /// Joint count.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when there are no joints.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Check the invariants every consumer relies on: matching lengths, at least one joint,
    /// parents before children, finite heads, unique names.
    pub fn validate(&self) -> Result<(), RigError> {
        let n = self.names.len();
        if n == 0 {
            return Err(RigError::Invalid("no joints".into()));
        }
        if self.parents.len() != n || self.heads.len() != n {
            return Err(RigError::Invalid(format!(
                "{n} names, {} parents, {} heads",
                self.parents.len(),
                self.heads.len()
            )));
        }
        for (j, p) in self.parents.iter().enumerate() {
            if let Some(p) = *p {
                if p >= j {
                    return Err(RigError::Invalid(format!(
                        "joint {j} has parent {p}, not listed before it"
                    )));
                }
            }
        }
        if let Some(j) = self.heads.iter().position(|h| !h.is_finite()) {
            return Err(RigError::Invalid(format!(
                "joint {} ({j}) has a non-finite position",
                self.names[j]
            )));
        }
        let mut sorted: Vec<&String> = self.names.iter().collect();
        sorted.sort();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(RigError::Invalid(format!("joint name {} used twice", w[0])));
        }
        Ok(())
    }

    /// The bind-pose skeleton: each joint's local Y axis runs along its bone (towards its child
    /// with the most descendants; leaves keep their parent's direction), and the roll puts local
    /// Z as close to [`PlacedSkeleton::forward`] as possible — the Blender convention, so bones
    /// on the left and right of a symmetric rig get mirrored frames. Rest = bind.
    pub fn to_skeleton(&self) -> Result<Skeleton, RigError> {
        self.validate()?;
        let n = self.len();
        let forward = if self.forward.is_finite() && self.forward.length_squared() > 0.0 {
            self.forward.normalize()
        } else {
            Vec3::Z
        };
        let mut children = vec![Vec::new(); n];
        for (j, p) in self.parents.iter().enumerate() {
            if let Some(p) = *p {
                children[p].push(j);
            }
        }
        let mut descendants = vec![0usize; n];
        for j in (0..n).rev() {
            if let Some(p) = self.parents[j] {
                descendants[p] += descendants[j] + 1;
            }
        }
        let mut world_rot = vec![Quat::IDENTITY; n];
        let mut axis = vec![Vec3::Y; n];
        for j in 0..n {
            let along = children[j]
                .iter()
                .copied()
                .max_by_key(|&c| descendants[c])
                .map(|c| self.heads[c] - self.heads[j])
                .filter(|d| d.length_squared() > f32::EPSILON * f32::EPSILON.max(self.heads[j].length_squared()))
                .map(Vec3::normalize);
            let y = along.unwrap_or_else(|| self.parents[j].map_or(Vec3::Y, |p| axis[p]));
            axis[j] = y;
            world_rot[j] = frame(y, forward);
        }
        let mut rest_local = Vec::with_capacity(n);
        let mut inverse_bind = Vec::with_capacity(n);
        for j in 0..n {
            let world = Mat4::from_rotation_translation(world_rot[j], self.heads[j]);
            let local = match self.parents[j] {
                Some(p) => {
                    let inv = world_rot[p].inverse();
                    Transform {
                        translation: inv * (self.heads[j] - self.heads[p]),
                        rotation: (inv * world_rot[j]).normalize(),
                        scale: Vec3::ONE,
                    }
                }
                None => Transform {
                    translation: self.heads[j],
                    rotation: world_rot[j],
                    scale: Vec3::ONE,
                },
            };
            rest_local.push(local);
            inverse_bind.push(world.inverse());
        }
        Ok(Skeleton {
            names: self.names.clone(),
            parents: self.parents.clone(),
            rest_local,
            inverse_bind,
        })
    }
}

/// Rotation whose Y axis is `y` and whose Z axis is the part of `forward` perpendicular to `y`
/// (another reference when `y` is parallel to `forward`).
fn frame(y: Vec3, forward: Vec3) -> Quat {
    let mut z = forward - y * y.dot(forward);
    if z.length_squared() < 1e-8 {
        let other = if y.y.abs() < 0.9 { Vec3::Y } else { Vec3::X };
        z = other - y * y.dot(other);
    }
    let z = z.normalize();
    let x = y.cross(z);
    Quat::from_mat3(&Mat3::from_cols(x, y, z)).normalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm() -> PlacedSkeleton {
        PlacedSkeleton {
            names: vec!["hips".into(), "spine".into(), "arm_l".into(), "arm_r".into()],
            parents: vec![None, Some(0), Some(1), Some(1)],
            heads: vec![
                Vec3::new(0.0, 1.0, 0.0),
                Vec3::new(0.0, 1.4, 0.0),
                Vec3::new(0.5, 1.4, 0.0),
                Vec3::new(-0.5, 1.4, 0.0),
            ],
            forward: Vec3::Z,
        }
    }

    #[test]
    fn bind_pose_puts_joints_at_their_heads_with_y_along_the_bone() {
        let placed = arm();
        let skeleton = placed.to_skeleton().unwrap();
        let rest = skeleton.rest_world();
        for (j, m) in rest.iter().enumerate() {
            assert!((m.w_axis.truncate() - placed.heads[j]).length() < 1e-5, "joint {j}");
            let bind = skeleton.inverse_bind[j].inverse();
            assert!((bind.w_axis.truncate() - placed.heads[j]).length() < 1e-5);
        }
        // hips -> spine: up; spine -> its first-listed child with most descendants (arm_l, tie).
        assert!((rest[0].y_axis.truncate() - Vec3::Y).length() < 1e-5);
        // Leaves keep the parent's direction; Z stays forward wherever the bone allows it.
        for m in &rest {
            assert!((m.z_axis.truncate() - Vec3::Z).length() < 1e-5);
        }
    }

    #[test]
    fn invalid_skeletons_are_refused_not_converted() {
        let mut bad = arm();
        bad.parents[1] = Some(3);
        assert!(matches!(bad.to_skeleton(), Err(RigError::Invalid(_))));
        let mut bad = arm();
        bad.heads[2] = Vec3::NAN;
        assert!(bad.to_skeleton().is_err());
        let mut bad = arm();
        bad.names[3] = "arm_l".into();
        assert!(bad.to_skeleton().is_err());
        let empty = PlacedSkeleton {
            names: vec![],
            parents: vec![],
            heads: vec![],
            forward: Vec3::Z,
        };
        assert!(empty.to_skeleton().is_err());
    }
}
