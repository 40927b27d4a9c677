//! The default template: the humanoid placer when the mesh is a standing humanoid; for every
//! other shape, the rig library's rig when the mesh is shaped like one of its characters
//! ([`crate::library`]), else the general placer ([`Auto`]).
//!
//! Humanoids keep the humanoid template's landmarks: a humanoid rig from the library moved by
//! bounding boxes placed the ankles less exactly (the KayKit ranger on the knight's rig made a
//! retargeted run's soles skate). With a library of anchored humanoid rigs, the artists' rig
//! that the most alike ones agree on is carried onto those landmarks instead
//! ([`humanoid_match`]; docs/experiments/2026-12-07-humanoid-conventions.md): its joint names,
//! counts and conventions, on the template's ankles and toes.

use crate::library::{best_match, humanoid_match, LibraryMatch};
use crate::{Auto, Humanoid, PlacedSkeleton, Placement, RigError, SkeletonPlacer};
use rigml_core::Mesh;
use rigml_learn::skeleton::library::RigLibrary;

/// Tries [`Humanoid`] (with `library` and `humanoid_conventions`, the library's conventions on
/// its landmarks); when it refuses the shape (a [`RigError::Placement`]: not a standing
/// humanoid, legs that never join, ...), with `library`, the skeleton model's rig library's
/// most alike rig when the similarity reaches the library's threshold, else [`Auto`]. Other
/// errors (an empty or broken mesh) are returned as they are. Its name is always `"detect"`;
/// which template a mesh got is what [`SkeletonPlacer::place_with_template`] (and
/// [`Detect::choose`]) return, and [`SkeletonPlacer::place_reported`] also names a library rig.
#[derive(Debug)]
pub struct Detect {
    pub humanoid: Humanoid,
    pub auto: Auto,
    /// Use the rig library of `auto`'s skeleton model (when it holds one).
    pub library: bool,
    /// With `library`, give standing humanoids the conventions of the library's alike
    /// humanoids ([`humanoid_match`]).
    pub humanoid_conventions: bool,
}

impl Detect {
    /// The default humanoid placer and the general one with the embedded skeleton model.
    pub fn embedded() -> Result<Detect, RigError> {
        Ok(Detect {
            humanoid: Humanoid::default(),
            auto: Auto::embedded()?,
            library: true,
            humanoid_conventions: true,
        })
    }

    /// The template that fits `mesh` (`"humanoid"`, `"library"` or `"auto"`) and its joints.
    pub fn choose(&self, mesh: &Mesh) -> Result<(&'static str, PlacedSkeleton), RigError> {
        let p = self.place_reported(mesh)?;
        Ok((p.template, p.skeleton))
    }

    /// The skeleton model's rig library, when `library` is on and the model holds one.
    fn rig_library(&self) -> Option<&RigLibrary> {
        self.library.then(|| self.auto.learned.predictor().library()).flatten()
    }

    /// The rig library's most alike rig when `library` is on, the skeleton model holds a
    /// library and the similarity reaches its threshold.
    fn alike_library_rig(&self, mesh: &Mesh) -> Result<Option<LibraryMatch>, RigError> {
        let Some(library) = self.rig_library() else {
            return Ok(None);
        };
        Ok(best_match(library, mesh)?.filter(|m| m.similarity >= library.threshold))
    }

    /// For a standing humanoid the template placed: the library's artists' rig carried onto
    /// the template's joints ([`humanoid_match`]), when `library` is on and alike anchored
    /// rigs are found.
    fn library_conventions(&self, mesh: &Mesh, placed: &PlacedSkeleton) -> Result<Option<LibraryMatch>, RigError> {
        let Some(library) = self.rig_library().filter(|_| self.humanoid_conventions) else {
            return Ok(None);
        };
        humanoid_match(library, mesh, placed)
    }
}

impl SkeletonPlacer for Detect {
    fn name(&self) -> &'static str {
        "detect"
    }

    fn place(&self, mesh: &Mesh) -> Result<PlacedSkeleton, RigError> {
        Ok(self.choose(mesh)?.1)
    }

    fn place_with_template(&self, mesh: &Mesh) -> Result<(&'static str, PlacedSkeleton), RigError> {
        self.choose(mesh)
    }

    fn place_reported(&self, mesh: &Mesh) -> Result<Placement, RigError> {
        let plain = |template, skeleton| Placement {
            template,
            skeleton,
            library_rig: None,
        };
        match self.humanoid.place(mesh) {
            Ok(placed) => match self.library_conventions(mesh, &placed)? {
                Some(found) => Ok(Placement {
                    template: "humanoid",
                    library_rig: Some((found.id, found.similarity)),
                    skeleton: found.skeleton,
                }),
                None => Ok(plain("humanoid", placed)),
            },
            Err(RigError::Placement { .. }) => match self.alike_library_rig(mesh)? {
                Some(found) => Ok(found.into_placement()),
                None => Ok(plain("auto", self.auto.place(mesh)?)),
            },
            Err(other) => Err(other),
        }
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
        assert!(detect.place_with_template(&mesh).is_err());
    }
}
