//! Skin-weight solvers: given a mesh and a skeleton in its bind pose, compute a [`Skin`].
//!
//! Every solver implements [`SkinSolver`]; post-processing (smoothing, pruning to N influences,
//! normalisation, island fallback) is shared by all of them.

pub mod blend;
pub mod bones;
pub mod check;
pub mod heat;
pub mod nearest;
pub mod post;
pub mod synthetic;
pub mod voxel;

pub use blend::Blend;
pub use bones::{Bone, Bones};
pub use heat::Heat;
pub use nearest::Nearest;
pub use voxel::Voxel;

use rigml_core::{CoreError, Mesh, Skeleton, Skin};
use thiserror::Error;

/// Why a solver could not produce weights.
#[derive(Debug, Error)]
pub enum SkinError {
    #[error("the mesh is empty")]
    EmptyMesh,
    #[error("the skeleton has no joints")]
    NoJoints,
    #[error("{0}")]
    Invalid(#[from] CoreError),
    #[error("{solver}: {problem}")]
    Failed { solver: &'static str, problem: String },
    /// The solve was stopped through [`SolveOptions::cancel`].
    #[error("cancelled")]
    Cancelled,
}

/// A flag that stops a solve in progress: any thread may set it ([`Cancel::cancel`]); the
/// solvers look at it between their phases (heat: before each block of bones is solved; voxel:
/// after each of its passes over the grid; learned: before its features and after its networks)
/// and stop with [`SkinError::Cancelled`]. Clones share the flag.
#[derive(Debug, Clone, Default)]
pub struct Cancel(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Cancel {
    /// A flag not set yet.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Ask every solve holding this flag (or a clone of it) to stop.
    pub fn cancel(&self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Settings every solver honours.
#[derive(Debug, Clone)]
pub struct SolveOptions {
    /// Influence cap of the output (METRICS.md §4 failure 5 checks it).
    pub max_influences: usize,
    /// Rounds of one-ring smoothing of the weights over the welded surface (0 = none).
    pub smooth_iterations: usize,
    /// Share of the neighbours' mean blended into a vertex per smoothing round, in `[0, 1]`.
    pub smooth_strength: f32,
    /// Influences lighter than this (after normalising the row) are dropped before the final
    /// prune; a row always keeps its heaviest influence.
    pub min_weight: f32,
    /// Explicit bone tails, one per joint, in the skeleton's bind space (a DCC bone's tail:
    /// Blender's `tail_local`). With tails, joint `j` owns exactly the segment from its bind
    /// position to `tails[j]` instead of segments to its children ([`Bones`]), so a
    /// disconnected child does not drag its parent's bone toward it. `None`: derived from the
    /// joints.
    pub tails: Option<Vec<glam::Vec3>>,
    /// A flag that stops the solve when set from another thread (`None`: runs to its end).
    pub cancel: Option<Cancel>,
}

impl SolveOptions {
    /// [`SkinError::Cancelled`] if the solve's [`Cancel`] flag is set.
    pub fn check_cancel(&self) -> Result<(), SkinError> {
        match &self.cancel {
            Some(flag) if flag.is_cancelled() => Err(SkinError::Cancelled),
            _ => Ok(()),
        }
    }
}

impl Default for SolveOptions {
    fn default() -> Self {
        Self {
            max_influences: 4,
            smooth_iterations: 1,
            smooth_strength: 0.5,
            min_weight: 0.01,
            tails: None,
            cancel: None,
        }
    }
}

/// A method that computes skin weights for a mesh bound to a skeleton (bind pose).
pub trait SkinSolver: Sync {
    /// Short name used on the command line and in reports (`nearest`, `heat`, `voxel`).
    fn name(&self) -> &'static str;

    /// Weights for every vertex of `mesh` over the joints of `skeleton`: one row per vertex,
    /// normalised, at most `options.max_influences` entries, no vertex left without weight.
    fn solve(&self, mesh: &Mesh, skeleton: &Skeleton, options: &SolveOptions) -> Result<Skin, SkinError>;
}
