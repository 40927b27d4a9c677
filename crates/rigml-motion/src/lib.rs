//! rigml's learned motion model: a small temporal convolution network over IK-Rig frames
//! (docs/ALGORITHMS.md §8a) that denoises captured motion, labels foot contacts and fills
//! frames between key poses. It works in the IK-Rig code, which does not change with the
//! character's proportions or bone count, so one model serves every humanoid and its output
//! decodes onto any of them.
//!
//! - [`features`]: one IK-Rig frame as the model's vector; frame-rate conversion; mirroring.
//! - [`noise`]: seeded capture damage (jitter, spikes, dropped frames, foot sliding).
//! - [`data`]: clips made into training pairs.
//! - [`model`]: the model file and its inference (plain Rust, no burn).
//! - [`denoise`]: a clip in, denoised poses and contacts out.
//! - [`evidence`]: what the prefilter took away, and the clip's floor, beside the frames.
//! - [`inbetween`]: frames between key poses.
//! - [`library`]: frames between key poses retrieved from captured motion.
//! - `train` (the `train` feature, burn): the training loop.

pub mod data;
pub mod denoise;
pub mod evidence;
pub mod features;
pub mod inbetween;
pub mod library;
pub mod model;
#[cfg(feature = "train")]
pub mod net;
pub mod noise;
pub mod train;

pub use model::{MotionModel, Task};

/// What can go wrong in the motion model.
#[derive(Debug, thiserror::Error)]
pub enum MotionError {
    #[error(transparent)]
    Anim(#[from] rigml_anim::AnimError),
    #[error(transparent)]
    Learn(#[from] rigml_learn::LearnError),
    #[error("{origin}: not a usable rigml motion model: {problem}")]
    Model { origin: String, problem: String },
    #[error("training: {0}")]
    Train(String),
    #[error("clip {clip:?}: {problem}")]
    Clip { clip: String, problem: String },
}
