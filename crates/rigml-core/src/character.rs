//! A character: one mesh, one skeleton, its skin and its clips — the unit every reader
//! produces and every algorithm takes.

use crate::{Attachment, Clip, CoreError, Mesh, Skeleton, Skin};
use std::fmt;

/// Bones shorter than this fraction of the character's size are reported as zero-length.
const ZERO_BONE_FRACTION: f32 = 1e-6;

/// Everything about one animatable asset.
///
/// Any part may be empty: an OBJ has no skeleton, a BVH has no mesh. When `skin` is present it
/// has one row per mesh vertex and refers to `skeleton` joints.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Character {
    /// Asset name (file stem or scene name).
    pub name: String,
    pub mesh: Mesh,
    pub skeleton: Skeleton,
    pub skin: Option<Skin>,
    pub clips: Vec<Clip>,
    /// Meshes that joints carry rigidly (props, hats), outside the skinned mesh.
    pub attachments: Vec<Attachment>,
}

/// Something suspicious that does not stop the data from being used, for `rigml inspect`.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    UnskinnedVertices { count: usize },
    ZeroLengthBones { joints: Vec<String> },
    DegenerateTriangles { count: usize },
    UnusedJoints { count: usize },
    EmptyMesh,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::UnskinnedVertices { count } => write!(f, "{count} vertices have no skin weight"),
            Problem::ZeroLengthBones { joints } => {
                write!(f, "{} zero-length bones: {}", joints.len(), abbreviate(joints))
            }
            Problem::DegenerateTriangles { count } => write!(f, "{count} degenerate (zero-area) triangles"),
            Problem::UnusedJoints { count } => write!(f, "{count} joints carry no weight"),
            Problem::EmptyMesh => write!(f, "the mesh is empty"),
        }
    }
}

fn abbreviate(names: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut s = names.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(", … ({} more)", names.len() - SHOWN));
    }
    s
}

impl Character {
    /// Check every invariant that algorithms rely on; they never re-check.
    pub fn validate(&self) -> Result<(), CoreError> {
        self.mesh.validate()?;
        self.skeleton.validate()?;
        if let Some(skin) = &self.skin {
            skin.validate(self.mesh.vertex_count(), self.skeleton.joint_count())?;
        }
        for clip in &self.clips {
            clip.validate(self.skeleton.joint_count())?;
        }
        for a in &self.attachments {
            a.validate(self.skeleton.joint_count(), self.mesh.materials.len())?;
        }
        Ok(())
    }

    /// Non-fatal issues worth showing to a rigger.
    pub fn problems(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        if self.mesh.is_empty() && !self.skeleton.is_empty() && self.skin.is_some() {
            problems.push(Problem::EmptyMesh);
        }
        if let Some(skin) = &self.skin {
            let count = skin.unskinned_count();
            if count > 0 {
                problems.push(Problem::UnskinnedVertices { count });
            }
            let used = skin.joints_used(self.skeleton.joint_count());
            let count = used.iter().filter(|u| !**u).count();
            if count > 0 {
                problems.push(Problem::UnusedJoints { count });
            }
        }
        let size = self.size();
        let lengths = self.skeleton.bone_lengths();
        let joints: Vec<String> = self
            .skeleton
            .parents
            .iter()
            .enumerate()
            .filter(|(j, p)| p.is_some() && lengths[*j] <= ZERO_BONE_FRACTION * size)
            .map(|(j, _)| self.skeleton.names[j].clone())
            .collect();
        if !joints.is_empty() {
            problems.push(Problem::ZeroLengthBones { joints });
        }
        let p = &self.mesh.positions;
        let count = self
            .mesh
            .triangles
            .iter()
            .filter(|t| {
                let [a, b, c] = t.map(|i| p.get(i as usize).copied().unwrap_or_default());
                (b - a).cross(c - a).length_squared() == 0.0
            })
            .count();
        if count > 0 {
            problems.push(Problem::DegenerateTriangles { count });
        }
        problems
    }

    /// Longest side of the bind-pose bounding box of mesh and joints (1 if both are empty):
    /// the scale METRICS.md §1 normalises by.
    pub fn size(&self) -> f32 {
        let mut points = self.mesh.positions.clone();
        points.extend(self.skeleton.bind_positions());
        let Some(first) = points.first().copied() else {
            return 1.0;
        };
        let (lo, hi) = points
            .iter()
            .fold((first, first), |(lo, hi), &q| (lo.min(q), hi.max(q)));
        let extent = (hi - lo).max_element();
        if extent > 0.0 && extent.is_finite() {
            extent
        } else {
            1.0
        }
    }
}
