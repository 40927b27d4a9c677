//! Poses: one local transform per joint at one instant.

use crate::{CoreError, Skeleton, Transform};
use glam::Mat4;

/// Joint-local transforms of a skeleton at one instant, parent-first like the skeleton.
#[derive(Debug, Clone, PartialEq)]
pub struct Pose {
    pub local: Vec<Transform>,
}

impl Pose {
    /// The skeleton's rest pose.
    pub fn rest(skeleton: &Skeleton) -> Pose {
        Pose {
            local: skeleton.rest_local.clone(),
        }
    }

    /// The bind pose expressed as local transforms (from the inverse bind matrices).
    pub fn bind(skeleton: &Skeleton) -> Pose {
        let world = skeleton.bind_world();
        let local = world
            .iter()
            .enumerate()
            .map(|(j, w)| {
                let m = match skeleton.parents[j] {
                    Some(p) => world[p].inverse() * *w,
                    None => *w,
                };
                Transform::from_mat4(&m)
            })
            .collect();
        Pose { local }
    }

    /// Model-space joint matrices of this pose.
    pub fn world_matrices(&self, skeleton: &Skeleton) -> Result<Vec<Mat4>, CoreError> {
        if self.local.len() != skeleton.joint_count() {
            return Err(CoreError::PoseLength {
                got: self.local.len(),
                expected: skeleton.joint_count(),
            });
        }
        Ok(skeleton.world_matrices(&self.local))
    }
}
