//! Mesh sequences → rigs (issue 6): the anchor frame and normalisation of METRICS.md §6, the
//! smooth skinning decomposition with rigid bones (SSDR / Dem Bones, docs/ALGORITHMS.md §5),
//! skeleton fitting to the recovered bones, and skinning a sequence with any
//! [`rigml_skin::SkinSolver`] per frame or consistently from the anchor frame.
//!
//! Frames are read through [`FrameSource`], so a long sequence can be streamed from disk.

mod block_moments;
pub mod consistent;
pub mod decompose;
pub mod math;
pub mod passes;
pub mod pose_fit;
pub mod rig;
pub mod source;
pub mod split;

pub use decompose::{decompose, Decomposition, Options};
pub use passes::{Rigid, Weights};
pub use rig::{build_rig, Rig};
pub use source::{FrameSource, Normalisation};

use thiserror::Error;

/// What can go wrong turning a sequence into a rig. Frame-level problems name the frame; the
/// caller adds the file.
#[derive(Debug, Error)]
pub enum SeqError {
    #[error("the sequence has no frames or no vertices")]
    Empty,
    #[error("frame {frame}: {message}")]
    Source { frame: usize, message: String },
    #[error("anchor frame {frame} has no extent (all vertices at one point)")]
    Degenerate { frame: usize },
    #[error("{0}")]
    Options(String),
    #[error("per-frame skinning, frame {frame}: {message}")]
    Skin { frame: usize, message: String },
    #[error(transparent)]
    Core(#[from] rigml_core::CoreError),
}
