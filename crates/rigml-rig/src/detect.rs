//! The default template: the humanoid placer when the mesh is a standing humanoid, the general
//! placer ([`Guided`]) for every other shape.

use crate::{Guided, Humanoid, PlacedSkeleton, RigError, SkeletonPlacer};
use rigml_core::Mesh;
use std::sync::Mutex;

/// Tries [`Humanoid`]; when it refuses the shape (a [`RigError::Placement`]: not a standing
/// humanoid, legs that never join, ...) places with [`Guided`] instead. Other errors (an empty
/// or broken mesh) are returned as they are.
#[derive(Debug)]
pub struct Detect {
    pub humanoid: Humanoid,
    pub auto: Guided,
    /// The template the last [`SkeletonPlacer::place`] used, reported by `name()`.
    last: Mutex<&'static str>,
}

impl Detect {
    /// The default humanoid placer and the general one with the embedded skeleton model.
    pub fn embedded() -> Result<Detect, RigError> {
        Ok(Detect {
            humanoid: Humanoid::default(),
            auto: Guided::embedded()?,
            last: Mutex::new("detect"),
        })
    }

    /// The template that fits `mesh` (`"humanoid"` or `"auto"`) and its joints.
    pub fn choose(&self, mesh: &Mesh) -> Result<(&'static str, PlacedSkeleton), RigError> {
        match self.humanoid.place(mesh) {
            Ok(placed) => Ok(("humanoid", placed)),
            Err(RigError::Placement { .. }) => Ok(("auto", self.auto.place(mesh)?)),
            Err(other) => Err(other),
        }
    }
}

impl SkeletonPlacer for Detect {
    /// `"detect"` until a mesh was placed, then the template used for it.
    fn name(&self) -> &str {
        *self.last.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn place(&self, mesh: &Mesh) -> Result<PlacedSkeleton, RigError> {
        let (template, placed) = self.choose(mesh)?;
        *self.last.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = template;
        Ok(placed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn broken_meshes_are_errors_not_a_fallback() {
        let detect = Detect::embedded().unwrap();
        assert_eq!(detect.name(), "detect");
        let mut mesh = Mesh::default();
        assert!(detect.place(&mesh).is_err());
        mesh.positions = vec![Vec3::ZERO, Vec3::X, Vec3::new(f32::NAN, 0.0, 0.0)];
        mesh.triangles = vec![[0, 1, 2]];
        assert!(detect.place(&mesh).is_err());
        assert_eq!(detect.name(), "detect");
    }
}
