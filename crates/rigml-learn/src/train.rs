//! The training loop: Adam on `KL(target || softmax) + λ · LBS deformation error`, random
//! batches of (vertex, candidates) samples, a cosine learning-rate decay, periodic validation
//! and checkpoints. Deterministic on the CPU for a given seed (parameter init from the device seed,
//! batches from a ChaCha stream).
//!
//! This module holds what every build needs (settings, losses, events, the metadata key of a
//! checkpoint's step); the loop itself, in burn, is `fit`, built with the `train` feature.

use crate::model::ModelFile;
use crate::LearnError;
#[cfg(not(feature = "train"))]
use {crate::sample::Samples, std::collections::HashMap};

/// Training settings.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainConfig {
    /// Optimiser steps in total (a resumed run continues up to this count).
    pub steps: usize,
    /// Samples per step.
    pub batch: usize,
    /// Peak learning rate (cosine decay to 5 % of it).
    pub learning_rate: f64,
    /// Weight λ of the deformation term.
    pub deform_weight: f32,
    /// Hidden width of the network.
    pub hidden: usize,
    /// Width of the point encoder's shape code (0: none).
    pub patch: usize,
    /// Whether the network corrects the bone-heat solution ([`crate::NetConfig::prior`]).
    pub prior: bool,
    /// Whether the network corrects voxel binding's solution ([`crate::NetConfig::voxel_prior`]).
    pub voxel_prior: bool,
    /// Keep the priors' scales at 1 instead of learning them: a correction of zero is then the
    /// geometric solver's own row, not a flattened one (the learnt scale of the voxel prior
    /// settles near 0.25, where the network's correction carries most of the answer). Needs
    /// `prior` or `voxel_prior`.
    pub fixed_prior_scale: bool,
    /// Group of every asset (indexed like [`crate::Samples::asset`], e.g. its family): when not
    /// empty, each batch sample draws a group (see [`TrainConfig::group_balance`]) and then one
    /// of its samples. Empty: samples uniformly.
    pub groups: Vec<u32>,
    /// How far the draw of groups is balanced, in `0..=1`: a group of `n` samples is drawn with
    /// probability proportional to `n^(1 - group_balance)`. 1: every group weighs the same
    /// however many characters it has; 0: every sample weighs the same (as without groups);
    /// between: large groups weigh more than small ones, less than their size.
    pub group_balance: f32,
    /// Seed of the initial parameters and of the batches.
    pub seed: u64,
    /// Validate every this many steps (0 = only at the end).
    pub val_every: usize,
    /// Emit a checkpoint every this many steps (0 = none).
    pub checkpoint_every: usize,
}

impl TrainConfig {
    /// Refuses settings that cannot train: no steps, empty batches or network, a learning rate
    /// or deformation weight that is not a finite number of the right sign.
    pub fn validate(&self) -> Result<(), LearnError> {
        check_shape(self.steps, self.batch, self.hidden, self.learning_rate)?;
        if self.patch > MAX_HIDDEN {
            return Err(LearnError::Train(format!(
                "point encoder width must lie in 0..={MAX_HIDDEN}, got {}",
                self.patch
            )));
        }
        if !(0.0..=1.0).contains(&self.group_balance) {
            return Err(LearnError::Train(format!(
                "group balance must lie in 0..=1, got {}",
                self.group_balance
            )));
        }
        if self.fixed_prior_scale && !(self.prior || self.voxel_prior) {
            return Err(LearnError::Train(
                "a fixed prior scale needs a prior (the heat or the voxel-binding residual)".into(),
            ));
        }
        if !(self.deform_weight.is_finite() && self.deform_weight >= 0.0) {
            return Err(LearnError::Train(format!(
                "deformation weight must be a number >= 0, got {}",
                self.deform_weight
            )));
        }
        Ok(())
    }
}

/// Widest hidden layer a trainer accepts and a model file may hold.
pub const MAX_HIDDEN: usize = 4096;

/// The checks every trainer's settings share: at least one step, non-empty batches, a hidden
/// width in `1..=MAX_HIDDEN` and a positive finite learning rate.
pub(crate) fn check_shape(steps: usize, batch: usize, hidden: usize, learning_rate: f64) -> Result<(), LearnError> {
    let bad = |problem: String| Err(LearnError::Train(problem));
    if steps == 0 {
        return bad("steps must be at least 1".into());
    }
    if batch == 0 {
        return bad("batch size must be at least 1".into());
    }
    if hidden == 0 || hidden > MAX_HIDDEN {
        return bad(format!("hidden width must lie in 1..={MAX_HIDDEN}, got {hidden}"));
    }
    if !(learning_rate.is_finite() && learning_rate > 0.0) {
        return bad(format!("learning rate must be a positive number, got {learning_rate}"));
    }
    Ok(())
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            steps: 3000,
            batch: 1024,
            learning_rate: 3e-3,
            deform_weight: 10.0,
            hidden: 64,
            patch: 0,
            prior: false,
            voxel_prior: false,
            fixed_prior_scale: false,
            groups: Vec::new(),
            group_balance: 1.0,
            seed: 1,
            val_every: 250,
            checkpoint_every: 500,
        }
    }
}

/// Mean losses over a set of samples.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Losses {
    pub total: f32,
    pub kl: f32,
    pub deform: f32,
}

/// What a training loop reports as it goes (`L`: its mean losses; both the skin and the
/// skeleton trainers use this).
#[derive(Debug)]
pub enum TrainEvent<'a, L = Losses> {
    /// One optimiser step done.
    Step { step: usize, total: usize, losses: L },
    /// Validation losses at `step`.
    Val { step: usize, losses: L },
    /// A checkpoint to write.
    Checkpoint { step: usize, model: &'a ModelFile },
}

/// Loss curves: `(step, losses)` of every training step and every validation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History<L = Losses> {
    pub train: Vec<(usize, L)>,
    pub val: Vec<(usize, L)>,
}

/// The learning rate at `step` of `steps`: a cosine decay from `peak` to 5 % of it (every
/// rigml training loop uses this schedule).
pub fn cosine_rate(peak: f64, step: usize, steps: usize) -> f64 {
    let progress = step as f64 / steps.max(1) as f64;
    peak * (0.05 + 0.95 * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()))
}

/// Metadata key of the step count a model was saved at (for `--resume`).
pub const KEY_STEP: &str = "rigml.train.step";

#[cfg(feature = "train")]
mod fit;
#[cfg(feature = "train")]
pub use fit::{evaluate, train};

/// Training needs burn, which this build left out (the `train` cargo feature): always
/// [`LearnError::NoTraining`]. With the feature, it trains a network on `train` (validating
/// on `val`), resuming from `resume`, storing `metadata` in every model emitted.
#[cfg(not(feature = "train"))]
pub fn train(
    _train: &Samples,
    _val: Option<&Samples>,
    _config: &TrainConfig,
    _resume: Option<&ModelFile>,
    _metadata: &HashMap<String, String>,
    _on_event: &mut dyn FnMut(TrainEvent) -> Result<(), LearnError>,
) -> Result<(ModelFile, History), LearnError> {
    Err(LearnError::NoTraining)
}
