//! Training the skeleton network: Adam on `OFFSET_WEIGHT · L1(offset) + BCE(confidence) +
//! SPACING_WEIGHT · L1(log spacing)` over batches of whole clouds, cosine learning-rate decay,
//! periodic validation and checkpoints. Deterministic for a given seed (parameters from the
//! burn device seed, batches from a ChaCha stream); a resumed run replays the batch stream.
//!
//! This module holds what every build needs (settings, losses, events, the metadata key of a
//! checkpoint's step); the loop itself, in burn, is `fit`, built with the `train` feature.

use crate::LearnError;
#[cfg(not(feature = "train"))]
use {super::data::Shape, crate::model::ModelFile, std::collections::HashMap};

/// Weight of the offset term (offsets are a few hundredths of the model size).
pub const OFFSET_WEIGHT: f32 = 10.0;
/// Weight of the log-spacing term.
pub const SPACING_WEIGHT: f32 = 0.2;
/// Metadata key of the step a model was saved at (for `--resume`).
pub const KEY_STEP: &str = "rigml.skeleton.train.step";

/// Training settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Optimiser steps in total (a resumed run continues up to this count).
    pub steps: usize,
    /// Clouds per step.
    pub batch: usize,
    /// Peak learning rate (cosine decay to 5 % of it).
    pub learning_rate: f64,
    /// Hidden width.
    pub hidden: usize,
    /// Seed of the initial parameters and of the batches.
    pub seed: u64,
    /// Validate every this many steps (0 = only at the end).
    pub val_every: usize,
    /// Emit a checkpoint every this many steps (0 = none).
    pub checkpoint_every: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            steps: 1500,
            batch: 4,
            learning_rate: 2e-3,
            hidden: 96,
            seed: 1,
            val_every: 100,
            checkpoint_every: 250,
        }
    }
}

impl Config {
    /// Refuses settings that cannot train.
    pub fn validate(&self) -> Result<(), LearnError> {
        crate::train::check_shape(self.steps, self.batch, self.hidden, self.learning_rate)
    }
}

/// Mean losses.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Losses {
    pub total: f32,
    /// Mean L1 distance between predicted and GT offsets (normalised units).
    pub offset: f32,
    pub confidence: f32,
    pub spacing: f32,
}

/// What the loop reports as it goes.
pub type Event<'a> = crate::train::TrainEvent<'a, Losses>;

/// Loss curves: `(step, losses)` of every training step and every validation.
pub type History = crate::train::History<Losses>;

#[cfg(feature = "train")]
mod fit;
#[cfg(feature = "train")]
pub use fit::{evaluate, train};

/// Training needs burn, which this build left out (the `train` cargo feature): always
/// [`LearnError::NoTraining`]. With the feature, it trains on `train` (validating on `val`),
/// resuming from `resume`, storing `metadata` in every model emitted.
#[cfg(not(feature = "train"))]
pub fn train(
    _train: &[Shape],
    _val: &[Shape],
    _config: &Config,
    _resume: Option<&ModelFile>,
    _metadata: &HashMap<String, String>,
    _on_event: &mut dyn FnMut(Event) -> Result<(), LearnError>,
) -> Result<(ModelFile, History), LearnError> {
    Err(LearnError::NoTraining)
}
