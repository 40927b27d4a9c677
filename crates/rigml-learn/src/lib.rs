//! Learned skin weights (ALGORITHMS.md §4): per (vertex, candidate bone) features in
//! bone-relative, scale-normalised coordinates ([`features`]), a small `burn` network scoring
//! every pair ([`model`]), training on skinned characters with a weight KL loss plus an LBS
//! deformation loss under random poses ([`train`], samples and pose augmentation in
//! [`sample`]), and inference as a [`rigml_skin::SkinSolver`] ([`Learned`], with the default
//! model embedded in the binary).
//!
//! The backend is burn's CPU ndarray backend (no GPU backend feature yet).

pub mod curves;
pub mod features;
pub mod forward;
pub mod infer;
pub mod model;
pub mod sample;
pub mod skeleton;
pub mod train;

pub use infer::Learned;
pub use model::{ModelFile, Net, NetConfig};
pub use sample::{SampleOptions, Samples};
pub use train::{TrainConfig, TrainEvent};

use thiserror::Error;

/// What can go wrong while learning or applying a model.
#[derive(Debug, Error)]
pub enum LearnError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: not a usable rigml model: {problem}")]
    ModelFile { path: String, problem: String },
    #[error("model: {0}")]
    Model(String),
    #[error("{0}")]
    Data(String),
    #[error("training: {0}")]
    Train(String),
}

/// The compute device: burn's default (the CPU ndarray backend in the default build).
pub fn device() -> burn::tensor::Device {
    burn::tensor::Device::default()
}
