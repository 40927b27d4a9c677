//! The learned placer (`--template learned`): joints voted by a network trained on the train
//! split's characters, clustered and connected by a minimum spanning tree
//! ([`rigml_learn::skeleton`]).
//!
//! rigml-rig depends on rigml-learn for this: auto-rigging composes placement and skinning, and
//! both have a learned variant there; rigml-learn does not depend on rigml-rig.

use crate::{check_mesh, PlacedSkeleton, RigError, SkeletonPlacer};
use glam::Vec3;
use rigml_core::Mesh;
use rigml_learn::skeleton::Predictor;
use std::path::Path;
use std::sync::Arc;

/// Places joints with a trained skeleton model (the embedded default or a file).
#[derive(Debug, Clone)]
pub struct LearnedPlacer {
    predictor: Arc<Predictor>,
}

impl LearnedPlacer {
    /// The model embedded in the binary (`models/skeleton-default.safetensors`).
    pub fn embedded() -> Result<LearnedPlacer, RigError> {
        Ok(LearnedPlacer::new(Predictor::embedded().map_err(Self::error)?))
    }

    /// A model file written by `rigml train-skeleton`.
    pub fn from_file(path: &Path) -> Result<LearnedPlacer, RigError> {
        Ok(LearnedPlacer::new(Predictor::from_file(path).map_err(Self::error)?))
    }

    pub fn new(predictor: Predictor) -> LearnedPlacer {
        LearnedPlacer {
            predictor: Arc::new(predictor),
        }
    }

    /// The model and settings in use.
    pub fn predictor(&self) -> &Predictor {
        &self.predictor
    }

    fn error(e: rigml_learn::LearnError) -> RigError {
        RigError::Placement {
            placer: "learned".into(),
            message: e.to_string(),
        }
    }
}

impl SkeletonPlacer for LearnedPlacer {
    fn name(&self) -> &'static str {
        "learned"
    }

    fn place(&self, mesh: &Mesh) -> Result<PlacedSkeleton, RigError> {
        check_mesh(mesh)?;
        let tree = self
            .predictor
            .place(&mesh.positions, &mesh.triangles)
            .map_err(Self::error)?;
        let names = (0..tree.positions.len())
            .map(|j| {
                if j == 0 {
                    // Not `root`: that names the weightless ground root (`crate::ground`).
                    "body".to_string()
                } else {
                    format!("joint_{j:03}")
                }
            })
            .collect();
        let placed = PlacedSkeleton {
            names,
            parents: tree.parents,
            heads: tree.positions,
            // The model works in the file's axes: glTF, +Z forward.
            forward: Vec3::Z,
        };
        placed.validate()?;
        Ok(placed)
    }
}
