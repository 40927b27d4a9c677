//! The rig library's placer (`--template library`, and what `detect` tries for shapes that are
//! not standing humanoids): the rig of the most alike training character, moved onto the mesh
//! by the two bounding boxes ([`rigml_learn::skeleton::library`]).
//!
//! `detect` takes the library's rig only when the shapes are alike enough (the library's
//! threshold, 0.6 in the shipped model): a new mesh of a family the library holds gets that
//! family's rig, joint names and conventions included; any other shape gets the general
//! template as before. `--template library` takes the best rig whatever its similarity.

use crate::{check_mesh, LearnedPlacer, PlacedSkeleton, Placement, RigError, SkeletonPlacer};
use glam::Vec3;
use rigml_core::Mesh;
use rigml_learn::skeleton::library::{Descriptor, RigLibrary};

/// The library's best rig for one mesh.
#[derive(Debug, Clone)]
pub struct LibraryMatch {
    /// The library rig's id (the training character it came from).
    pub id: String,
    /// How alike the two shapes are (0 to 1, [`Descriptor::similarity`]).
    pub similarity: f32,
    /// Its joints moved onto the mesh.
    pub skeleton: PlacedSkeleton,
}

impl LibraryMatch {
    /// As a placement by the `library` template, naming the rig.
    pub fn into_placement(self) -> Placement {
        Placement {
            template: "library",
            library_rig: Some((self.id, self.similarity)),
            skeleton: self.skeleton,
        }
    }
}

/// The best rig of `library` for `mesh`, moved onto it; `None` for an empty library.
pub fn best_match(library: &RigLibrary, mesh: &Mesh) -> Result<Option<LibraryMatch>, RigError> {
    check_mesh(mesh)?;
    let Some(target) = Descriptor::of(&mesh.positions, &mesh.triangles) else {
        return Err(RigError::Degenerate);
    };
    let Some((similarity, rig)) = library.best(&target) else {
        return Ok(None);
    };
    let skeleton = PlacedSkeleton {
        names: rig.names.clone(),
        parents: rig.parents.clone(),
        heads: rig.joints.iter().map(|p| rig.descriptor.move_to(*p, &target)).collect(),
        // The library's rigs and the meshes it is used on follow glTF: +Z forward.
        forward: Vec3::Z,
    };
    skeleton.validate()?;
    Ok(Some(LibraryMatch {
        id: rig.id.clone(),
        similarity,
        skeleton,
    }))
}

/// `--template library`: the library's best rig whatever its similarity. Refuses meshes when
/// the skeleton model holds no library.
#[derive(Debug, Clone)]
pub struct LibraryPlacer {
    pub learned: LearnedPlacer,
}

impl LibraryPlacer {
    /// The best match for `mesh`, or a placement error naming why there is none.
    pub fn best(&self, mesh: &Mesh) -> Result<LibraryMatch, RigError> {
        let none = |message: &str| RigError::Placement {
            placer: "library".into(),
            message: message.into(),
        };
        let library = self.learned.predictor().library().ok_or_else(|| {
            none("the skeleton model holds no rig library (train it again with `rigml train-skeleton`)")
        })?;
        best_match(library, mesh)?.ok_or_else(|| none("the skeleton model's rig library is empty"))
    }
}

impl SkeletonPlacer for LibraryPlacer {
    fn name(&self) -> &'static str {
        "library"
    }

    fn place(&self, mesh: &Mesh) -> Result<PlacedSkeleton, RigError> {
        Ok(self.best(mesh)?.skeleton)
    }

    fn place_reported(&self, mesh: &Mesh) -> Result<Placement, RigError> {
        Ok(self.best(mesh)?.into_placement())
    }
}
