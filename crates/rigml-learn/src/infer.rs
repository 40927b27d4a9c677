//! Inference: features -> network -> softmax over the candidates -> sparse rows -> the shared
//! post-processing ([`rigml_skin::post::finish`]: island fallback, pruning to the influence cap,
//! normalisation).
//!
//! Sparsification matters for precision (METRICS.md §2 counts every weight above 1e-4): a
//! candidate is kept when its probability is at least `relative × row max` and at least
//! `absolute`. Both thresholds are chosen on val and stored in the model file's metadata.

use crate::features::{self, Features, CANDIDATES, FEATURES};
use crate::model::ModelFile;
use crate::{device, LearnError};
use burn::tensor::activation::softmax;
use burn::tensor::{Tensor, TensorData};
use rayon::prelude::*;
use rigml_core::{Mesh, Skeleton, Skin};
use rigml_skin::post::{finish, Prepared, Row};
use rigml_skin::{SkinError, SkinSolver, SolveOptions};
use std::path::Path;
use std::sync::Arc;

/// The default model, trained by `rigml train` on the train split (README: "The default skin
/// model").
pub const DEFAULT_MODEL: &[u8] = include_bytes!("../../../models/skin-default.safetensors");

/// Vertices per network call (bounds the memory of one forward pass).
const CHUNK: usize = 16_384;

/// Default relative threshold when a model file does not name one.
pub const DEFAULT_RELATIVE: f32 = 0.25;
/// Default absolute threshold when a model file does not name one.
pub const DEFAULT_ABSOLUTE: f32 = 0.02;

/// Metadata keys of the thresholds.
pub const KEY_RELATIVE: &str = "rigml.infer.relative";
pub const KEY_ABSOLUTE: &str = "rigml.infer.absolute";

/// The learned solver (`learned`).
#[derive(Debug, Clone)]
pub struct Learned {
    model: Arc<ModelFile>,
    /// Drop candidates below this share of the row's largest probability.
    pub relative: f32,
    /// Drop candidates below this probability.
    pub absolute: f32,
}

impl Learned {
    /// A solver for `model`, with the thresholds stored in it (or the defaults).
    pub fn new(model: ModelFile) -> Learned {
        let relative = model.setting(KEY_RELATIVE).unwrap_or(DEFAULT_RELATIVE);
        let absolute = model.setting(KEY_ABSOLUTE).unwrap_or(DEFAULT_ABSOLUTE);
        Learned {
            model: Arc::new(model),
            relative,
            absolute,
        }
    }

    /// The default model shipped inside the binary (`models/skin-default.safetensors`).
    pub fn embedded() -> Result<Learned, LearnError> {
        Ok(Learned::new(ModelFile::from_bytes(
            DEFAULT_MODEL,
            "embedded default model",
        )?))
    }

    /// Load a model file.
    pub fn from_file(path: &Path) -> Result<Learned, LearnError> {
        Ok(Learned::new(ModelFile::load(path)?))
    }

    /// The model behind this solver.
    pub fn model(&self) -> &ModelFile {
        &self.model
    }

    /// Candidate probabilities `[n * K]` for extracted features.
    pub fn probabilities(&self, feats: &Features) -> Result<Vec<f32>, LearnError> {
        let device = device();
        let net = self.model.net(&device)?;
        let n = feats.vertex_count;
        let mut out = Vec::with_capacity(n * CANDIDATES);
        for start in (0..n).step_by(CHUNK) {
            let end = (start + CHUNK).min(n);
            let b = end - start;
            let x = feats.values[start * CANDIDATES * FEATURES..end * CANDIDATES * FEATURES].to_vec();
            let m = feats.mask[start * CANDIDATES..end * CANDIDATES].to_vec();
            let x = Tensor::<3>::from_data(TensorData::new(x, [b, CANDIDATES, FEATURES]), &device);
            let m = Tensor::<2>::from_data(TensorData::new(m, [b, CANDIDATES]), &device);
            let p = softmax(net.forward(x, m), 1);
            out.extend(crate::model::tensor_values(p.into_data()));
        }
        if out.len() != n * CANDIDATES {
            return Err(LearnError::Model(format!(
                "the network returned {} values for {} pairs",
                out.len(),
                n * CANDIDATES
            )));
        }
        Ok(out)
    }

    /// Features and probabilities of one mesh, for [`Learned::finish`] (and threshold search,
    /// which re-uses them for every setting).
    pub fn score(&self, mesh: &Mesh, skeleton: &Skeleton) -> Result<Scored, SkinError> {
        let prep = Prepared::new(mesh, skeleton)?;
        let feats = features::extract(&prep, &skeleton.parents);
        let probs = self.probabilities(&feats).map_err(|e| SkinError::Failed {
            solver: "learned",
            problem: e.to_string(),
        })?;
        Ok(Scored { prep, feats, probs })
    }

    /// The skin of a scored mesh with this solver's thresholds.
    pub fn finish(&self, scored: &Scored, options: &SolveOptions) -> Result<Skin, SkinError> {
        let rows = self.rows(&scored.feats, &scored.probs);
        // The network already produces smooth, sparse rows; only the shared fallback, cap and
        // normalisation apply.
        let options = SolveOptions {
            smooth_iterations: 0,
            ..*options
        };
        finish(&scored.prep, rows, &options)
    }

    /// Sparse raw rows (one per welded vertex) from probabilities.
    pub fn rows(&self, feats: &Features, probs: &[f32]) -> Vec<Row> {
        (0..feats.vertex_count)
            .into_par_iter()
            .map(|v| {
                let range = v * CANDIDATES..(v + 1) * CANDIDATES;
                let (js, ps, ms) = (&feats.joints[range.clone()], &probs[range.clone()], &feats.mask[range]);
                let best = ps
                    .iter()
                    .zip(ms)
                    .filter(|(_, &m)| m > 0.0)
                    .map(|(&p, _)| p)
                    .fold(0.0f32, f32::max);
                js.iter()
                    .zip(ps)
                    .zip(ms)
                    .filter(|((_, &p), &m)| {
                        m > 0.0 && p.is_finite() && (p >= best || (p >= self.relative * best && p >= self.absolute))
                    })
                    .map(|((&j, &p), _)| (j, p))
                    .collect()
            })
            .collect()
    }
}

/// A mesh run through the network: what [`Learned::finish`] needs.
#[derive(Debug, Clone)]
pub struct Scored {
    pub prep: Prepared,
    pub feats: Features,
    /// `[n * K]` candidate probabilities.
    pub probs: Vec<f32>,
}

/// Relative thresholds tried by [`search_thresholds`].
pub const RELATIVE_GRID: [f32; 8] = [0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5];
/// Absolute thresholds tried by [`search_thresholds`].
pub const ABSOLUTE_GRID: [f32; 5] = [0.0, 0.01, 0.02, 0.05, 0.1];

/// The `(relative, absolute)` thresholds of the grid that maximise the mean of
/// `score(case index, skin)` over `cases`, with that mean. Meant for validation data only.
pub fn search_thresholds(
    learned: &Learned,
    cases: &[Scored],
    options: &SolveOptions,
    score: &(dyn Fn(usize, &Skin) -> f64 + Sync),
) -> Result<(f32, f32, f64), SkinError> {
    let mut best = (learned.relative, learned.absolute, f64::NEG_INFINITY);
    for relative in RELATIVE_GRID {
        for absolute in ABSOLUTE_GRID {
            let trial = Learned {
                relative,
                absolute,
                ..learned.clone()
            };
            let mut total = 0.0;
            for (i, case) in cases.iter().enumerate() {
                total += score(i, &trial.finish(case, options)?);
            }
            let mean = total / cases.len().max(1) as f64;
            if mean > best.2 {
                best = (relative, absolute, mean);
            }
        }
    }
    Ok(best)
}

impl SkinSolver for Learned {
    fn name(&self) -> &'static str {
        "learned"
    }

    fn solve(&self, mesh: &Mesh, skeleton: &Skeleton, options: &SolveOptions) -> Result<Skin, SkinError> {
        let scored = self.score(mesh, skeleton)?;
        self.finish(&scored, options)
    }
}
