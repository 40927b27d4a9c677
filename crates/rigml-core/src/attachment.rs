//! Meshes a joint carries rigidly: a sword in a hand, a hat, a stag's horns. Files keep them as
//! unskinned meshes under a joint; rigml keeps them as such, so that converting or skinning a
//! character hands back every piece of it, each still following its joint.

use crate::{CoreError, Mesh};
use glam::Mat4;

/// A mesh that follows one joint rigidly.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    /// The node's name in the source.
    pub name: String,
    /// The joint it hangs from.
    pub joint: usize,
    /// From the attachment's own space into the joint's space (the source's node transforms
    /// between the joint and the mesh, multiplied out).
    pub local: Mat4,
    /// Vertices in the attachment's own space. Its parts' materials index the character's
    /// [`Mesh::materials`]; its own `materials` and `images` stay empty.
    pub mesh: Mesh,
}

impl Attachment {
    /// Check the joint index, the transform and the mesh (parts' materials against the
    /// character's `material_count`).
    pub fn validate(&self, joint_count: usize, material_count: usize) -> Result<(), CoreError> {
        if self.joint >= joint_count {
            return Err(CoreError::Attachment {
                name: self.name.clone(),
                problem: format!(
                    "hangs from joint {}, but the skeleton has {joint_count} joints",
                    self.joint
                ),
            });
        }
        if !self.local.is_finite() {
            return Err(CoreError::Attachment {
                name: self.name.clone(),
                problem: "its transform is not finite".into(),
            });
        }
        if !self.mesh.materials.is_empty() || !self.mesh.images.is_empty() {
            return Err(CoreError::Attachment {
                name: self.name.clone(),
                problem: "holds materials of its own (they belong to the character's mesh)".into(),
            });
        }
        self.mesh
            .validate_with_materials(material_count)
            .map_err(|e| CoreError::Attachment {
                name: self.name.clone(),
                problem: e.to_string(),
            })
    }
}
