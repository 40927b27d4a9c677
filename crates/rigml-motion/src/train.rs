//! Training the motion model: Adam on random windows of the prepared clips
//! ([`crate::data::Prepared`]); each window is either a denoising example (a damaged copy in,
//! the clean frames out) or an in-filling example (clean key frames every few frames, the frames
//! between them interpolated, and the mask saying which are keys). Loss: mean squared error of
//! the normalised vectors plus a weighted binary cross-entropy of the contacts. Cosine learning
//! rate, periodic validation, checkpoints; deterministic for a seed on the CPU.
//!
//! Settings and losses are here for every build; the loop itself needs the `train` feature.

use crate::data::Prepared;
use crate::evidence::evidence_channel;
use crate::features::{floor_of, lower, CONTACTS, FEATURES};
use crate::model::{DILATIONS, EVIDENCE_INPUTS, INPUTS};
use crate::MotionError;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Training settings.
#[derive(Debug, Clone, PartialEq)]
pub struct MotionTrainConfig {
    /// Optimiser steps in total (a resumed run continues up to this count).
    pub steps: usize,
    /// Windows per step.
    pub batch: usize,
    /// Frames per window (at the model's rate).
    pub window: usize,
    /// Hidden channels.
    pub hidden: usize,
    pub dilations: Vec<usize>,
    /// Peak learning rate (cosine decay to 5 % of it).
    pub learning_rate: f64,
    /// Share of windows that are in-filling examples.
    pub infill: f32,
    /// Weight of the contact term.
    pub contact_weight: f32,
    pub seed: u64,
    /// Validate every this many steps (0: only at the end).
    pub val_every: usize,
    /// Emit a checkpoint every this many steps (0: none).
    pub checkpoint_every: usize,
    /// What the model reads beside the frames.
    pub inputs: Inputs,
    /// Smallest spread a feature is normalised by ([`crate::data::MIN_SPREAD`] by default):
    /// the loss weighs a feature by one over its spread squared.
    pub min_spread: f32,
}

/// What a model reads beside the frame vectors and the key mask ([`crate::evidence`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Inputs {
    /// The noise evidence of every feature ([`EVIDENCE_INPUTS`] channels).
    pub evidence: bool,
    /// Heights above each clip's own floor ([`crate::MotionModel::floor`]): every training clip
    /// is lowered by [`floor_of`] its clean frames, as inference lowers a clip by its own.
    pub floor: bool,
    /// A blending model ([`crate::MotionModel::blend`]; needs the evidence and denoising
    /// windows only): its first [`FEATURES`] outputs say how much of the prefilter's residual
    /// to keep, trained on [`crate::data::Prepared::blend`].
    pub blend: bool,
}

impl Inputs {
    /// Input channels of a model reading these.
    pub fn channels(&self) -> usize {
        if self.evidence {
            EVIDENCE_INPUTS
        } else {
            INPUTS
        }
    }

    /// What `model` reads.
    pub fn of(model: &crate::MotionModel) -> Inputs {
        Inputs {
            evidence: model.evidence,
            floor: model.floor,
            blend: model.blend,
        }
    }
}

impl Default for MotionTrainConfig {
    fn default() -> Self {
        MotionTrainConfig {
            steps: 3000,
            batch: 16,
            window: 96,
            hidden: 128,
            dilations: DILATIONS.to_vec(),
            learning_rate: 1e-3,
            infill: 0.3,
            contact_weight: 0.2,
            seed: 1,
            val_every: 250,
            checkpoint_every: 500,
            inputs: Inputs::default(),
            min_spread: crate::data::MIN_SPREAD,
        }
    }
}

impl MotionTrainConfig {
    /// Refuse settings that cannot train.
    pub fn validate(&self) -> Result<(), MotionError> {
        let bad = |m: String| Err(MotionError::Train(m));
        if self.steps == 0 || self.batch == 0 {
            return bad("steps and batch must be at least 1".into());
        }
        if !(8..=4096).contains(&self.window) {
            return bad(format!("window must lie in 8..=4096 frames, got {}", self.window));
        }
        if !(1..=4096).contains(&self.hidden) {
            return bad(format!("hidden width must lie in 1..=4096, got {}", self.hidden));
        }
        if self.dilations.is_empty() || self.dilations.iter().any(|d| !(1..=64).contains(d)) {
            return bad(format!("dilations must be 1..=64 each, got {:?}", self.dilations));
        }
        if !(self.min_spread.is_finite() && self.min_spread > 0.0) {
            return bad(format!("the smallest spread must be positive, got {}", self.min_spread));
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return bad(format!("learning rate must be positive, got {}", self.learning_rate));
        }
        if self.inputs.blend && !(self.inputs.evidence && self.infill == 0.0) {
            return bad(
                "a blending model reads the noise evidence and learns denoising only (--noise-evidence, --infill 0)"
                    .into(),
            );
        }
        if !((0.0..=1.0).contains(&self.infill) && self.contact_weight >= 0.0 && self.contact_weight.is_finite()) {
            return bad(format!(
                "in-fill share must lie in [0, 1] and the contact weight be ≥ 0, got {} and {}",
                self.infill, self.contact_weight
            ));
        }
        Ok(())
    }
}

/// Mean losses.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MotionLosses {
    pub total: f32,
    /// Mean squared error of the normalised vectors.
    pub motion: f32,
    /// Binary cross-entropy of the contacts.
    pub contacts: f32,
}

/// One window of one clip, as arrays: input `[W, channels]` ([`Inputs::channels`]), target
/// `[W, FEATURES]`, contacts `[W, CONTACTS]` (frame-major, as the burn network reads them), and
/// for a blending model the blend terms `[W, 3 · FEATURES]` in normalised units (zero for
/// clean frames, which have no residual).
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub input: Vec<f32>,
    pub target: Vec<f32>,
    pub contacts: Vec<f32>,
    pub blend: Vec<f32>,
}

/// Where windows are drawn from: clips at least one window long, each start equally likely.
#[derive(Debug, Clone)]
pub struct Draw {
    /// `(clip, number of starts)`.
    clips: Vec<(usize, usize)>,
    total: usize,
    window: usize,
}

impl Draw {
    pub fn new(data: &[Prepared], window: usize) -> Result<Draw, MotionError> {
        let clips: Vec<(usize, usize)> = data
            .iter()
            .enumerate()
            .filter(|(_, p)| p.len() >= window)
            .map(|(i, p)| (i, p.len() - window + 1))
            .collect();
        let total = clips.iter().map(|c| c.1).sum();
        if total == 0 {
            return Err(MotionError::Train(format!(
                "no clip is {window} frames long at the model's rate"
            )));
        }
        Ok(Draw { clips, total, window })
    }

    /// A random `(clip, start)`.
    pub fn sample(&self, rng: &mut ChaCha8Rng) -> (usize, usize) {
        let mut k = rng.random_range(0..self.total);
        for &(clip, starts) in &self.clips {
            if k < starts {
                return (clip, k);
            }
            k -= starts;
        }
        unreachable!("k < total")
    }

    /// Evenly spread `(clip, start)` pairs for validation (up to `count`).
    pub fn spread(&self, count: usize) -> Vec<(usize, usize)> {
        let step = (self.total / count.max(1)).max(1);
        (0..self.total)
            .step_by(step)
            .take(count)
            .map(|mut k| {
                for &(clip, starts) in &self.clips {
                    if k < starts {
                        return (clip, k);
                    }
                    k -= starts;
                }
                unreachable!("k < total")
            })
            .collect()
    }

    pub fn window(&self) -> usize {
        self.window
    }
}

/// `clips` each lowered by the floor of its clean frames ([`floor_of`]): clean and damaged
/// vectors alike, so a model learns to keep the input's level and what it reads of heights is
/// measured from the floor the clip's feet stand on.
pub fn on_their_floors(clips: &[Prepared]) -> Vec<Prepared> {
    clips
        .iter()
        .map(|p| {
            let mut p = p.clone();
            let floor = floor_of(&p.clean, &[]);
            lower(&mut p.clean, floor);
            for n in &mut p.noisy {
                lower(n, floor);
            }
            p
        })
        .collect()
}

/// Build one training window: a denoising example from damaged copy `variant` (none: the
/// clean frames), or, with `keys = Some(spacing)`, an in-filling example with clean keys every
/// `spacing` frames from a random phase. With [`Inputs::evidence`] the damaged copy's noise
/// evidence follows the vectors (zero for clean frames and in-filling).
#[allow(clippy::too_many_arguments)]
pub fn window(
    p: &Prepared,
    start: usize,
    w: usize,
    variant: Option<usize>,
    keys: Option<(usize, usize)>,
    mean: &[f32],
    std: &[f32],
    inputs: &Inputs,
) -> Window {
    let channels = inputs.channels();
    let mask = channels - 1;
    let clean = &p.clean[start..start + w];
    let norm = |v: &[f32; FEATURES], k: usize| (v[k] - mean[k]) / std[k];
    let mut input = vec![0.0f32; channels * w];
    let mut target = vec![0.0f32; FEATURES * w];
    let mut contacts = vec![0.0f32; CONTACTS * w];
    let mut blend = if inputs.blend {
        vec![0.0f32; 3 * FEATURES * w]
    } else {
        Vec::new()
    };
    for f in 0..w {
        for k in 0..FEATURES {
            target[f * FEATURES + k] = norm(&clean[f], k);
        }
        for c in 0..CONTACTS {
            contacts[f * CONTACTS + c] = if p.contacts[start + f][c] { 1.0 } else { 0.0 };
        }
    }
    match keys {
        None => {
            let source = variant
                .and_then(|v| p.noisy.get(v))
                .map_or(clean, |n| &n[start..start + w]);
            let evidence = variant.and_then(|v| p.evidence.get(v)).filter(|_| inputs.evidence);
            if let Some(terms) = variant.and_then(|v| p.blend.get(v)).filter(|_| inputs.blend) {
                for f in 0..w {
                    for k in 0..3 * FEATURES {
                        let s = std[k % FEATURES];
                        blend[f * 3 * FEATURES + k] = terms[start + f][k] / (s * s);
                    }
                }
            }
            for f in 0..w {
                for k in 0..FEATURES {
                    input[f * channels + k] = norm(&source[f], k);
                }
                if let Some(e) = evidence.and_then(|e| e.get(start + f)) {
                    for k in 0..FEATURES {
                        input[f * channels + FEATURES + k] = evidence_channel(e[k], std[k]);
                    }
                }
                input[f * channels + mask] = 1.0;
            }
        }
        Some((spacing, phase)) => {
            let known = key_frames(w, spacing, phase);
            let filled = fill_between_keys(clean, &known);
            for f in 0..w {
                for k in 0..FEATURES {
                    input[f * channels + k] = norm(&filled[f], k);
                }
                input[f * channels + mask] = if known[f] { 1.0 } else { 0.0 };
            }
        }
    }
    Window {
        input,
        target,
        contacts,
        blend,
    }
}

/// Key frames every `spacing` frames from `phase` (and the last frame).
pub fn key_frames(n: usize, spacing: usize, phase: usize) -> Vec<bool> {
    let spacing = spacing.max(1);
    let mut known: Vec<bool> = (0..n)
        .map(|f| f >= phase % spacing && (f - phase % spacing).is_multiple_of(spacing))
        .collect();
    if let Some(last) = known.last_mut() {
        *last = true;
    }
    if let Some(first) = known.first_mut() {
        *first = true;
    }
    known
}

/// The in-filling input: key frames as they are; frames between two keys linearly
/// interpolated between them, except the root velocity (the first three numbers), which is the
/// mean velocity from one key to the next on every frame after the first key up to the next
/// (what the keys' positions tell; a key's own velocity would tell of the hidden frame before
/// it).
pub fn fill_between_keys(frames: &[[f32; FEATURES]], known: &[bool]) -> Vec<[f32; FEATURES]> {
    let keys: Vec<usize> = (0..frames.len()).filter(|&f| known[f]).collect();
    let mut out = frames.to_vec();
    for pair in keys.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let n = (b - a) as f32;
        let mut velocity = [0.0f32; 3];
        for frame in &frames[a + 1..=b] {
            for (k, v) in velocity.iter_mut().enumerate() {
                *v += frame[k] / n;
            }
        }
        for (f, row) in out.iter_mut().enumerate().take(b + 1).skip(a + 1) {
            let t = (f - a) as f32 / n;
            if f < b {
                for k in 3..FEATURES {
                    row[k] = frames[a][k] + (frames[b][k] - frames[a][k]) * t;
                }
            }
            row[..3].copy_from_slice(&velocity);
        }
    }
    out
}

/// Draw the kind of a training window: `(variant, keys)` as [`window`] takes them.
pub fn draw_kind(rng: &mut ChaCha8Rng, p: &Prepared, w: usize, infill: f32) -> (Option<usize>, Option<(usize, usize)>) {
    if rng.random::<f32>() < infill {
        let spacing = rng.random_range(2..=40usize.min(w - 1).max(2));
        (None, Some((spacing, rng.random_range(0..spacing))))
    } else if p.noisy.is_empty() {
        (None, None)
    } else {
        (Some(rng.random_range(0..p.noisy.len())), None)
    }
}

#[cfg(feature = "train")]
mod fit;
#[cfg(feature = "train")]
pub use fit::train;

/// Training needs burn, which this build left out (the `train` cargo feature).
#[cfg(not(feature = "train"))]
pub fn train(
    _train: &[Prepared],
    _val: Option<&[Prepared]>,
    _config: &MotionTrainConfig,
    _resume: Option<&crate::MotionModel>,
    _metadata: &std::collections::HashMap<String, String>,
    _on_event: &mut dyn FnMut(rigml_learn::TrainEvent<MotionLosses>) -> Result<(), MotionError>,
) -> Result<(rigml_learn::ModelFile, rigml_learn::train::History<MotionLosses>), MotionError> {
    Err(MotionError::Learn(rigml_learn::LearnError::NoTraining))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_filling() {
        let known = key_frames(10, 4, 1);
        assert_eq!(
            known,
            [true, true, false, false, false, true, false, false, false, true]
        );
        let frames: Vec<[f32; FEATURES]> = (0..10).map(|f| [f as f32; FEATURES]).collect();
        let filled = fill_between_keys(&frames, &known);
        // Between keys 1 and 5: linear in everything but the velocity.
        assert_eq!(filled[3][10], 3.0);
        assert_eq!(filled[5][10], 5.0);
        // Velocity: the mean of frames 2..=5 on frames 2..=5.
        assert_eq!(filled[2][0], 3.5);
        assert_eq!(filled[5][0], 3.5);
        assert_eq!(filled[0], frames[0]);
    }

    #[test]
    fn draws_cover_only_clips_long_enough() {
        let clip = |n: usize| Prepared {
            name: String::new(),
            clean: vec![[0.0; FEATURES]; n],
            contacts: vec![[false; CONTACTS]; n],
            noisy: Vec::new(),
            evidence: Vec::new(),
            blend: Vec::new(),
        };
        let data = [clip(5), clip(12), clip(10)];
        let draw = Draw::new(&data, 10).unwrap();
        let mut rng = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
        for _ in 0..200 {
            let (c, s) = draw.sample(&mut rng);
            assert!(c != 0 && s + 10 <= data[c].len());
        }
        assert_eq!(draw.spread(4).len(), 4);
        assert!(Draw::new(&data, 20).is_err());
        let mut config = MotionTrainConfig::default();
        assert!(config.validate().is_ok());
        config.window = 2;
        assert!(config.validate().is_err());
    }

    #[test]
    fn a_clip_with_a_nan_anywhere_is_not_finite() {
        let mut p = Prepared {
            name: String::new(),
            clean: vec![[0.0; FEATURES]; 3],
            contacts: vec![[false; CONTACTS]; 3],
            noisy: vec![vec![[0.0; FEATURES]; 3]],
            evidence: vec![vec![[0.0; FEATURES]; 3]],
            blend: Vec::new(),
        };
        assert!(p.is_finite());
        p.evidence[0][2][7] = f32::NAN;
        assert!(!p.is_finite());
        p.evidence[0][2][7] = 0.0;
        p.noisy[0][1][0] = f32::INFINITY;
        assert!(!p.is_finite());
    }
}
