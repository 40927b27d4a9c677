//! Inference: features -> network ([`crate::forward`]) -> softmax over the candidates (the mean
//! over the networks of an ensemble file) -> one-ring averaging of the probabilities -> sparse
//! rows -> the shared post-processing ([`rigml_skin::post::finish`]: island fallback, pruning to
//! the influence cap, normalisation).
//!
//! The network scores every vertex on its own; artists' weights are smooth over the surface, so
//! `smooth` rounds of `p_v(j) <- (p_v(j) + mean over the one-ring of p_u(j)) / 2` over the
//! vertex's candidate joints (a neighbour without `j` among its candidates counts 0) remove
//! isolated disagreements before sparsifying (RigNet averages over the one-ring too). Then
//! `p <- p^sharpen`, renormalised: a calibration of the softmax temperature (the network is
//! trained on renormalised GT over 8 candidates and tends to spread mass).
//!
//! Sparsification matters for precision (METRICS.md §2 counts every weight above 1e-4): a
//! candidate is kept when its probability is at least `relative × row max` and at least
//! `absolute`. The thresholds and the smoothing rounds are chosen on val and stored in the
//! model file's metadata.
//!
//! Last, separate pieces of the mesh (eyes, buttons, armour plates, a mech's parts) that the rows
//! already give almost entirely to one bone are bound to that bone alone: artists bind such
//! pieces rigidly, and the network, scoring each vertex on its own, leaves small spurious shares
//! on them that cost precision ([`make_rigid`]; the share is chosen on val too). A piece that
//! holds no joint and that one bone runs through ([`Features::single_bone`]: an arm shell, a
//! plate; nothing bends inside it) has a share of its own, which may be lower: the network,
//! scoring each vertex on its own, blends such a shell with the bones beyond its ends.

use crate::features::{self, Features, CANDIDATES};
use crate::forward::Ensemble;
use crate::model::ModelFile;
use crate::LearnError;
use rayon::prelude::*;
use rigml_core::{Mesh, Skeleton, Skin};
use rigml_geom::Adjacency;
use rigml_skin::post::{finish, Prepared, Row};
use rigml_skin::{SkinError, SkinSolver, SolveOptions};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The default model, trained by `rigml train` on the train split (docs/model-card-skin.md).
pub const DEFAULT_MODEL: &[u8] = include_bytes!("../../../models/skin-default.safetensors");

/// Default relative threshold when a model file does not name one.
pub const DEFAULT_RELATIVE: f32 = 0.25;
/// Default absolute threshold when a model file does not name one.
pub const DEFAULT_ABSOLUTE: f32 = 0.02;

/// Default one-ring smoothing rounds when a model file does not name them (older models).
pub const DEFAULT_SMOOTH: usize = 0;
/// Default sharpening exponent when a model file does not name one.
pub const DEFAULT_SHARPEN: f32 = 1.0;
/// Default rigid-piece share when a model file does not name one (above 1: never). A model file
/// without a share for single-bone pieces uses the same for them.
pub const DEFAULT_RIGID: f32 = RIGID_OFF;
/// A rigid-piece share that no piece reaches: pieces are left as the rows say.
pub const RIGID_OFF: f32 = 2.0;

/// Metadata keys of the inference settings.
pub const KEY_RELATIVE: &str = "rigml.infer.relative";
pub const KEY_ABSOLUTE: &str = "rigml.infer.absolute";
pub const KEY_SMOOTH: &str = "rigml.infer.smooth";
pub const KEY_SHARPEN: &str = "rigml.infer.sharpen";
pub const KEY_RIGID: &str = "rigml.infer.rigid";
pub const KEY_RIGID_SINGLE: &str = "rigml.infer.rigid_single_bone";
pub const KEY_FALLBACK: &str = "rigml.infer.fallback";

/// With 1, [`Learned::fallback`] moves rows toward the geometric solver's own row instead of the
/// prior at its learnt scale.
pub const KEY_FALLBACK_GEOMETRY: &str = "rigml.infer.fallback_geometry";

/// The members' spread below which [`Learned::fallback`] leaves a vertex alone.
pub const KEY_FALLBACK_FROM: &str = "rigml.infer.fallback_from";

/// With 1, [`Learned::fallback`]'s weight is scaled by how far voxel binding and bone heat agree
/// at the vertex ([`crate::forward::geometry_agreement`]): fall back only where geometry is sure.
pub const KEY_FALLBACK_AGREEMENT: &str = "rigml.infer.fallback_agreement";

/// With 1, [`Learned::fallback`] moves only the vertices whose members' mean puts its largest
/// probability on another bone than the target row does (the network overrides geometry there).
pub const KEY_FALLBACK_CONTESTED: &str = "rigml.infer.fallback_contested";

/// The geometric fallback that `rigml train` writes into an ensemble whose members correct
/// voxel binding: where the members disagree by more than a spread of 0.1, a vertex moves
/// toward voxel binding's own row (weight `spread − 0.1`), scaled by how far voxel binding and
/// bone heat agree there. Chosen by family-grouped cross-validation
/// (docs/experiments/2026-12-07-gated-geometry-fallback.md): 26 of 32 held-out families below
/// voxel binding's deformation error, against 24 without it.
pub const GATED_GEOMETRY_FALLBACK: [(&str, &str); 4] = [
    (KEY_FALLBACK, "1"),
    (KEY_FALLBACK_GEOMETRY, "1"),
    (KEY_FALLBACK_FROM, "0.1"),
    (KEY_FALLBACK_AGREEMENT, "1"),
];

/// Default fallback strength when a model file does not name one (0: off).
pub const DEFAULT_FALLBACK: f32 = 0.0;

/// Most smoothing rounds a model file may ask for.
pub const MAX_SMOOTH: usize = 16;

/// The learned solver (`learned`).
#[derive(Debug, Clone)]
pub struct Learned {
    model: Arc<ModelFile>,
    /// The model's networks, unpacked once and shared by clones (a broken model keeps its
    /// error's text, reported on every use).
    networks: Arc<Result<Ensemble, String>>,
    /// The feature layout the model was trained on (its metadata), which inference extracts.
    feature_version: u32,
    /// Drop candidates below this share of the row's largest probability.
    pub relative: f32,
    /// Drop candidates below this probability.
    pub absolute: f32,
    /// One-ring averaging rounds of the probabilities before sparsifying.
    pub smooth: usize,
    /// Exponent applied to the (smoothed) probabilities before renormalising (1 = none).
    pub sharpen: f32,
    /// A connected piece of the mesh whose rows give at least this mean share to one bone is
    /// bound to that bone alone (above 1: never).
    pub rigid: f32,
    /// The same for a piece that holds no joint and that one bone runs through
    /// ([`Features::single_bone`]); the lower of the two applies to such a piece.
    pub rigid_single: f32,
    /// How far a vertex falls back from the members' mean toward the prior they correct where
    /// they disagree: its probabilities become `(1 - w) mean + w prior`, `w = min(1, fallback *
    /// spread)` ([`crate::forward::Spread`]). 0 turns it off; it needs an ensemble whose members
    /// correct a prior, and is ignored otherwise.
    pub fallback: f32,
    /// Fall back toward the geometric solver's own row ([`Ensemble::geometry_probabilities`])
    /// rather than the prior at its learnt scale.
    pub fallback_geometry: bool,
    /// Spread below which a vertex does not fall back at all: `w = min(1, fallback · (spread −
    /// fallback_from))` where the spread exceeds it.
    pub fallback_from: f32,
    /// Scale the fallback weight by the geometric solvers' agreement ([`KEY_FALLBACK_AGREEMENT`]).
    pub fallback_agreement: bool,
    /// Fall back only where the mean's and the target's largest candidates differ
    /// ([`KEY_FALLBACK_CONTESTED`]).
    pub fallback_contested: bool,
}

impl Learned {
    /// A solver for `model`, with the thresholds stored in it (or the defaults).
    pub fn new(model: ModelFile) -> Learned {
        let relative = model.setting(KEY_RELATIVE).unwrap_or(DEFAULT_RELATIVE);
        let absolute = model.setting(KEY_ABSOLUTE).unwrap_or(DEFAULT_ABSOLUTE);
        let smooth = model
            .setting(KEY_SMOOTH)
            .filter(|s| *s >= 0.0)
            .map_or(DEFAULT_SMOOTH, |s| (s as usize).min(MAX_SMOOTH));
        let sharpen = model
            .setting(KEY_SHARPEN)
            .filter(|s| (0.1..=10.0).contains(s))
            .unwrap_or(DEFAULT_SHARPEN);
        let rigid = model
            .setting(KEY_RIGID)
            .filter(|s| (0.5..=RIGID_OFF).contains(s))
            .unwrap_or(DEFAULT_RIGID);
        let rigid_single = model
            .setting(KEY_RIGID_SINGLE)
            .filter(|s| (0.0..=RIGID_OFF).contains(s))
            .unwrap_or(rigid);
        let fallback = model
            .setting(KEY_FALLBACK)
            .filter(|s| (0.0..=100.0).contains(s))
            .unwrap_or(DEFAULT_FALLBACK);
        let fallback_geometry = model.setting(KEY_FALLBACK_GEOMETRY).is_some_and(|s| s >= 0.5);
        let fallback_from = model
            .setting(KEY_FALLBACK_FROM)
            .filter(|s| (0.0..=1.0).contains(s))
            .unwrap_or(0.0);
        let fallback_agreement = model.setting(KEY_FALLBACK_AGREEMENT).is_some_and(|s| s >= 0.5);
        let fallback_contested = model.setting(KEY_FALLBACK_CONTESTED).is_some_and(|s| s >= 0.5);
        let networks = Ensemble::new(&model).map_err(|e| match e {
            LearnError::Model(problem) => problem,
            other => other.to_string(),
        });
        let feature_version = model.feature_version().unwrap_or(features::FEATURE_VERSION);
        Learned {
            feature_version,
            model: Arc::new(model),
            networks: Arc::new(networks),
            relative,
            absolute,
            smooth,
            sharpen,
            rigid,
            rigid_single,
            fallback,
            fallback_geometry,
            fallback_from,
            fallback_agreement,
            fallback_contested,
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

    /// Whether the model's networks read surface patches (a point encoder): its features must
    /// come from [`features::extract_with_patches`].
    pub fn reads_patches(&self) -> bool {
        self.networks.as_ref().as_ref().is_ok_and(Ensemble::reads_patches)
    }

    /// Candidate probabilities `[n * K]` for extracted features (the network, or the mean of an
    /// ensemble's networks, before smoothing).
    pub fn probabilities(&self, feats: &Features) -> Result<Vec<f32>, LearnError> {
        let networks = self
            .networks
            .as_ref()
            .as_ref()
            .map_err(|problem| LearnError::Model(problem.clone()))?;
        if self.fallback <= 0.0 || networks.len() < 2 {
            return networks.probabilities(&feats.values, &feats.mask, &feats.patch);
        }
        let spread = networks.probabilities_with_spread(&feats.values, &feats.mask, &feats.patch)?;
        let target = if self.fallback_geometry {
            networks.geometry_probabilities(&feats.values, &feats.mask)
        } else {
            networks.prior_probabilities(&feats.values, &feats.mask)
        };
        let Some(prior) = target else {
            return Ok(spread.mean);
        };
        // Voxel binding's rows, where the target already is them.
        let voxel = (self.fallback_geometry && networks.corrects_voxel_binding()).then_some(prior.as_slice());
        let agreement = (self.fallback_agreement && features::holds_voxel_binding(self.feature_version))
            .then(|| crate::forward::geometry_agreement(&feats.values, &feats.mask, voxel));
        let mut probs = spread.mean;
        probs
            .par_chunks_mut(CANDIDATES)
            .zip(prior.par_chunks(CANDIDATES))
            .zip(&spread.spread)
            .enumerate()
            .for_each(|(v, ((row, prior), &d))| {
                let mut w = (self.fallback * (d - self.fallback_from)).clamp(0.0, 1.0);
                if let Some(agreement) = &agreement {
                    w *= agreement[v];
                }
                if self.fallback_contested && largest(row) == largest(prior) {
                    w = 0.0;
                }
                row.iter_mut().zip(prior).for_each(|(p, q)| *p = (1.0 - w) * *p + w * q);
            });
        Ok(probs)
    }

    /// Features and probabilities of one mesh, for [`Learned::finish`] (and threshold search,
    /// which re-uses them for every setting).
    pub fn score(&self, mesh: &Mesh, skeleton: &Skeleton) -> Result<Scored, SkinError> {
        self.score_with_tails(mesh, skeleton, None)
    }

    /// [`Learned::score`] with explicit bone tails ([`rigml_skin::Bones::with_tails`]).
    pub fn score_with_tails(
        &self,
        mesh: &Mesh,
        skeleton: &Skeleton,
        tails: Option<&[rigml_core::glam::Vec3]>,
    ) -> Result<Scored, SkinError> {
        let prep = Prepared::with_tails(mesh, skeleton, tails)?;
        let feats = if self.reads_patches() {
            features::extract_with_patches(&prep, &skeleton.parents, self.feature_version)
        } else {
            features::extract(&prep, &skeleton.parents, self.feature_version)
        };
        let probs = self.probabilities(&feats).map_err(|e| SkinError::Failed {
            solver: "learned",
            problem: e.to_string(),
        })?;
        Ok(Scored { prep, feats, probs })
    }

    /// The skin of a scored mesh with this solver's smoothing and thresholds.
    pub fn finish(&self, scored: &Scored, options: &SolveOptions) -> Result<Skin, SkinError> {
        let adjusted;
        let probs = if self.smooth > 0 || self.sharpen != 1.0 {
            let mut p = smooth(&scored.feats, &scored.prep.adjacency, &scored.probs, self.smooth);
            sharpen(&scored.feats, &mut p, self.sharpen);
            adjusted = p;
            &adjusted
        } else {
            &scored.probs
        };
        let mut rows = self.rows(&scored.feats, probs);
        make_rigid(
            &scored.feats.pieces,
            &scored.feats.single_bone,
            &mut rows,
            self.rigid,
            self.rigid_single,
        );
        // The network already produces smooth, sparse rows; only the shared fallback, cap and
        // normalisation apply.
        let options = SolveOptions {
            smooth_iterations: 0,
            ..options.clone()
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

/// `rounds` of one-ring averaging of candidate probabilities `[n * K]`: `p_v(j) <- (p_v(j) +
/// mean_u p_u(j)) / 2` for each candidate joint `j` of `v` (0 where `j` is not among `u`'s
/// candidates), each row renormalised over its real candidates.
pub fn smooth(feats: &Features, adjacency: &Adjacency, probs: &[f32], rounds: usize) -> Vec<f32> {
    let n = feats.vertex_count;
    let mut current = probs.to_vec();
    if adjacency.vertex_count() != n || probs.len() != n * CANDIDATES {
        return current;
    }
    let mut next = vec![0.0f32; current.len()];
    for _ in 0..rounds {
        next.par_chunks_mut(CANDIDATES).enumerate().for_each(|(v, out)| {
            let range = v * CANDIDATES..(v + 1) * CANDIDATES;
            let (js, ms) = (&feats.joints[range.clone()], &feats.mask[range.clone()]);
            out.copy_from_slice(&current[range]);
            let ring = adjacency.neighbors(v);
            if ring.is_empty() {
                return;
            }
            let share = 0.5 / ring.len() as f32;
            out.iter_mut().for_each(|p| *p *= 0.5);
            for &u in ring {
                let u = u as usize;
                let theirs = &feats.joints[u * CANDIDATES..(u + 1) * CANDIDATES];
                for (k, &j) in js.iter().enumerate() {
                    if ms[k] == 0.0 {
                        continue;
                    }
                    if let Some(i) = theirs.iter().position(|&t| t == j) {
                        out[k] += share * current[u * CANDIDATES + i];
                    }
                }
            }
            let sum: f32 = out.iter().zip(ms).filter(|(_, &m)| m > 0.0).map(|(p, _)| *p).sum();
            if sum > 0.0 {
                out.iter_mut().for_each(|p| *p /= sum);
            }
        });
        std::mem::swap(&mut current, &mut next);
    }
    current
}

/// Bind every connected piece of the welded mesh (`piece` of each row's vertex, as in
/// [`Features::pieces`]) whose rows, each normalised, give on average at least `share` to one
/// bone to that bone alone (`share` above 1 changes nothing); a piece flagged in `single_bone`
/// (per piece, as in [`Features::single_bone`]) needs only the lower of `share` and
/// `single_share`. A piece that spans a joint splits its mass between bones and stays as it is.
pub fn make_rigid(piece: &[u32], single_bone: &[bool], rows: &mut [Row], share: f32, single_share: f32) {
    if share.min(single_share) > 1.0 || piece.len() != rows.len() {
        return;
    }
    let pieces = piece.iter().max().map_or(0, |&m| m as usize + 1);
    let mut mass: Vec<HashMap<u32, f32>> = vec![HashMap::new(); pieces];
    let mut size = vec![0usize; pieces];
    for (row, &c) in rows.iter().zip(piece) {
        let sum: f32 = row.iter().map(|e| e.1).filter(|w| w.is_finite() && *w > 0.0).sum();
        size[c as usize] += 1;
        if sum <= 0.0 {
            continue;
        }
        for &(j, w) in row.iter().filter(|e| e.1.is_finite() && e.1 > 0.0) {
            *mass[c as usize].entry(j).or_default() += w / sum;
        }
    }
    let owner: Vec<Option<u32>> = mass
        .iter()
        .zip(&size)
        .enumerate()
        .map(|(c, (m, &n))| {
            let (&j, &w) = m.iter().max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(a.0)))?;
            let needed = if single_bone.get(c).copied().unwrap_or(false) {
                share.min(single_share)
            } else {
                share
            };
            (needed <= 1.0 && w >= needed * n as f32).then_some(j)
        })
        .collect();
    for (row, &c) in rows.iter_mut().zip(piece) {
        if let Some(j) = owner[c as usize] {
            *row = vec![(j, 1.0)];
        }
    }
}

/// `p <- p^exponent` over the real candidates of every row, renormalised (1 = unchanged).
pub fn sharpen(feats: &Features, probs: &mut [f32], exponent: f32) {
    if exponent == 1.0 {
        return;
    }
    probs
        .par_chunks_mut(CANDIDATES)
        .zip(feats.mask.par_chunks(CANDIDATES))
        .for_each(|(row, mask)| {
            row.iter_mut().zip(mask).for_each(|(p, &m)| {
                *p = if m > 0.0 { p.max(0.0).powf(exponent) } else { 0.0 };
            });
            let sum: f32 = row.iter().sum();
            if sum > 0.0 && sum.is_finite() {
                row.iter_mut().for_each(|p| *p /= sum);
            }
        });
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
pub const ABSOLUTE_GRID: [f32; 6] = [0.0, 0.01, 0.02, 0.03, 0.05, 0.1];
/// Smoothing rounds tried by [`search_thresholds`].
pub const SMOOTH_GRID: [usize; 4] = [0, 1, 2, 4];
/// Sharpening exponents tried by [`search_thresholds`].
pub const SHARPEN_GRID: [f32; 5] = [1.0, 1.25, 1.5, 1.75, 2.0];
/// Rigid-piece shares tried by [`search_thresholds`].
pub const RIGID_GRID: [f32; 4] = [RIGID_OFF, 0.98, 0.95, 0.9];
/// Rigid shares for single-bone pieces that [`search_thresholds`] tries against keeping the
/// rigid-piece share for them too (0: every such piece goes to its leading bone). Only shares
/// below the chosen rigid-piece share are tried: [`make_rigid`] applies the lower of the two.
pub const RIGID_SINGLE_GRID: [f32; 5] = [0.9, 0.8, 0.7, 0.5, 0.0];

/// The inference settings chosen by [`search_thresholds`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chosen {
    pub relative: f32,
    pub absolute: f32,
    pub smooth: usize,
    pub sharpen: f32,
    pub rigid: f32,
    pub rigid_single: f32,
    /// Mean `[precision, recall, L1]` of the cases with these settings.
    pub means: [f64; 3],
    /// `2 min(precision, recall) - L1` of the means (see [`search_thresholds`]).
    pub objective: f64,
    /// Whether the mean recall reaches the asked minimum.
    pub recall_met: bool,
}

/// The `(relative, absolute, smooth, sharpen, rigid)` settings of the grids that maximise
/// `2 min(P, R) - L1` of the mean precision, recall and L1 (`score(case index, skin)` gives the
/// three numbers of one case) among the settings whose mean recall is at least `min_recall` (all
/// settings when none reaches it), then the share for single-bone pieces
/// ([`RIGID_SINGLE_GRID`]) with the others fixed. The balanced form, rather than `P + R - L1`,
/// keeps a threshold from buying recall with an equal loss of precision: a rigger needs both (a
/// missing influence tears, a spurious one drags), and issue 5 asks for both. Meant for
/// validation data only.
pub fn search_thresholds(
    learned: &Learned,
    cases: &[Scored],
    options: &SolveOptions,
    min_recall: f64,
    score: &(dyn Fn(usize, &Skin) -> [f64; 3] + Sync),
) -> Result<Chosen, SkinError> {
    let mut best = Chosen {
        relative: learned.relative,
        absolute: learned.absolute,
        smooth: learned.smooth,
        sharpen: learned.sharpen,
        rigid: learned.rigid,
        rigid_single: learned.rigid_single,
        means: [f64::NAN; 3],
        objective: f64::NEG_INFINITY,
        recall_met: false,
    };
    let adjust = |smooth_rounds: usize, exponent: f32| -> Vec<Scored> {
        cases
            .iter()
            .map(|case| {
                let mut probs = smooth(&case.feats, &case.prep.adjacency, &case.probs, smooth_rounds);
                sharpen(&case.feats, &mut probs, exponent);
                Scored { probs, ..case.clone() }
            })
            .collect()
    };
    // Scores `candidate` (its smoothing and sharpening already applied to `adjusted`) and keeps
    // it when it beats `best`.
    let consider = |best: &mut Chosen, candidate: Chosen, adjusted: &[Scored]| -> Result<(), SkinError> {
        let trial = Learned {
            relative: candidate.relative,
            absolute: candidate.absolute,
            smooth: 0,
            sharpen: 1.0,
            rigid: candidate.rigid,
            rigid_single: candidate.rigid_single,
            ..learned.clone()
        };
        let mut total = [0.0f64; 3];
        for (i, case) in adjusted.iter().enumerate() {
            let s = score(i, &trial.finish(case, options)?);
            total.iter_mut().zip(s).for_each(|(t, s)| *t += s);
        }
        let means = total.map(|t| t / cases.len().max(1) as f64);
        let objective = 2.0 * means[0].min(means[1]) - means[2];
        let recall_met = means[1] >= min_recall;
        let better = match (recall_met, best.recall_met) {
            (true, false) => true,
            (false, true) => false,
            _ => objective > best.objective,
        };
        if better {
            *best = Chosen {
                means,
                objective,
                recall_met,
                ..candidate
            };
        }
        Ok(())
    };
    for (smooth_rounds, exponent) in SMOOTH_GRID
        .iter()
        .flat_map(|&s| SHARPEN_GRID.iter().map(move |&e| (s, e)))
    {
        let adjusted = adjust(smooth_rounds, exponent);
        for (relative, absolute, rigid) in RELATIVE_GRID.iter().flat_map(|&r| {
            ABSOLUTE_GRID
                .iter()
                .flat_map(move |&a| RIGID_GRID.iter().map(move |&g| (r, a, g)))
        }) {
            let candidate = Chosen {
                relative,
                absolute,
                smooth: smooth_rounds,
                sharpen: exponent,
                rigid,
                rigid_single: rigid,
                means: [f64::NAN; 3],
                objective: f64::NEG_INFINITY,
                recall_met: false,
            };
            consider(&mut best, candidate, &adjusted)?;
        }
    }
    let fixed = best;
    let adjusted = adjust(fixed.smooth, fixed.sharpen);
    for rigid_single in RIGID_SINGLE_GRID.into_iter().filter(|&s| s < fixed.rigid) {
        consider(&mut best, Chosen { rigid_single, ..fixed }, &adjusted)?;
    }
    Ok(best)
}

impl SkinSolver for Learned {
    fn name(&self) -> &'static str {
        "learned"
    }

    fn solve(&self, mesh: &Mesh, skeleton: &Skeleton, options: &SolveOptions) -> Result<Skin, SkinError> {
        options.check_cancel()?;
        let scored = self.score_with_tails(mesh, skeleton, options.tails.as_deref())?;
        options.check_cancel()?;
        self.finish(&scored, options)
    }
}

/// Index of a row's largest entry.
fn largest(row: &[f32]) -> usize {
    (0..row.len()).max_by(|&a, &b| row[a].total_cmp(&row[b])).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigml_skin::synthetic::tube_chain;

    fn tube() -> (Prepared, Features) {
        let (mesh, skeleton) = tube_chain(3, 6, 8, 0.2, 1.0);
        let prep = Prepared::new(&mesh, &skeleton).unwrap();
        let feats = features::extract(&prep, &skeleton.parents, features::FEATURE_VERSION);
        (prep, feats)
    }

    #[test]
    #[cfg(feature = "train")] // makes its models with the burn network
    fn a_broken_member_fails_every_call_and_names_itself() {
        let (_, feats) = tube();
        let device = crate::device();
        let single = |seed: u64| {
            device.seed(seed);
            ModelFile::from_net(
                &crate::Net::new(
                    crate::model::NetConfig {
                        hidden: 8,
                        ..Default::default()
                    },
                    &device,
                ),
                Default::default(),
            )
        };
        let good = Learned::new(ModelFile::ensemble(&[single(1), single(2)], Default::default()).unwrap());
        let first = good.probabilities(&feats).unwrap();
        assert_eq!(good.clone().probabilities(&feats).unwrap(), first);
        let mut model = ModelFile::ensemble(&[single(1), single(2)], Default::default()).unwrap();
        model.weights.remove("member1.deep.weight");
        let broken = Learned::new(model);
        for _ in 0..2 {
            let error = broken.probabilities(&feats).unwrap_err().to_string();
            assert!(error.starts_with("model: member 1:"), "{error}");
        }
    }

    #[test]
    #[cfg(feature = "train")] // makes its models with the burn network
    fn where_members_disagree_the_fallback_moves_rows_toward_the_prior() {
        let (mesh, skeleton) = tube_chain(3, 6, 8, 0.2, 1.0);
        let prep = Prepared::new(&mesh, &skeleton).unwrap();
        let feats = features::extract(&prep, &skeleton.parents, 5);
        let device = crate::device();
        let single = |seed: u64, voxel_prior: bool| {
            device.seed(seed);
            let config = crate::model::NetConfig {
                hidden: 8,
                voxel_prior,
                ..Default::default()
            };
            ModelFile::from_net(&crate::Net::new(config, &device), Default::default())
        };
        let mut model = ModelFile::ensemble(&[single(1, true), single(2, true)], Default::default()).unwrap();
        // A learnt scale below 1, as training leaves it (about 0.25 in the shipped model).
        for m in 0..2 {
            let name = format!("member{m}.{}", crate::model::VOXEL_PRIOR_SCALE);
            model.weights.get_mut(&name).expect("a voxel prior scale").1[0] = 0.25;
        }
        let spread = Ensemble::new(&model)
            .unwrap()
            .probabilities_with_spread(&feats.values, &feats.mask, &feats.patch)
            .unwrap();
        let prior = Ensemble::new(&model)
            .unwrap()
            .prior_probabilities(&feats.values, &feats.mask)
            .expect("both members correct voxel binding");
        let geometry = Ensemble::new(&model)
            .unwrap()
            .geometry_probabilities(&feats.values, &feats.mask)
            .expect("the members correct voxel binding");
        assert_eq!(spread.spread.len(), feats.mask.len() / CANDIDATES);
        assert!(spread.spread.iter().all(|d| (0.0..=1.0).contains(d)));
        assert!(spread.spread.iter().any(|&d| d > 1e-3), "two seeds disagree somewhere");
        let mut learned = Learned::new(model);
        assert_eq!(learned.fallback, 0.0, "off unless the model asks for it");
        let plain = learned.probabilities(&feats).unwrap();
        assert!(plain.iter().zip(&spread.mean).all(|(a, b)| (a - b).abs() < 1e-6));
        learned.fallback = 50.0;
        let blended = learned.probabilities(&feats).unwrap();
        for (v, &d) in spread.spread.iter().enumerate() {
            let w = (50.0 * d).min(1.0);
            let row = v * CANDIDATES..(v + 1) * CANDIDATES;
            for k in row.clone() {
                let expected = (1.0 - w) * spread.mean[k] + w * prior[k];
                assert!((blended[k] - expected).abs() < 1e-5, "vertex {v}");
            }
            let sum: f32 = blended[row].iter().sum();
            assert!((sum - 1.0).abs() < 1e-4, "vertex {v}: row sums to {sum}");
        }
        // Toward the geometric solver's own row, from a spread threshold: vertices below it
        // keep the members' mean.
        let (lo, hi) = spread
            .spread
            .iter()
            .fold((f32::INFINITY, 0.0f32), |(lo, hi), &d| (lo.min(d), hi.max(d)));
        let from = 0.5 * (lo + hi);
        learned.fallback_geometry = true;
        learned.fallback_from = from;
        let toward_geometry = learned.probabilities(&feats).unwrap();
        for (v, &d) in spread.spread.iter().enumerate() {
            let w = (50.0 * (d - from)).clamp(0.0, 1.0);
            for k in v * CANDIDATES..(v + 1) * CANDIDATES {
                let expected = (1.0 - w) * spread.mean[k] + w * geometry[k];
                assert!((toward_geometry[k] - expected).abs() < 1e-5, "vertex {v}");
            }
        }
        assert!(
            spread.spread.iter().any(|&d| d < from),
            "some vertices stay as they are"
        );
        // Gated by the geometric solvers' agreement, and only where the mean's largest candidate
        // is not the geometric row's.
        let agreement = crate::forward::geometry_agreement(&feats.values, &feats.mask, None);
        assert!(agreement.iter().all(|a| (0.0..=1.0 + 1e-5).contains(a)));
        learned.fallback_agreement = true;
        learned.fallback_contested = true;
        learned.feature_version = 5; // the layout the features were extracted with (both shares)
        let gated = learned.probabilities(&feats).unwrap();
        let mut contested = 0;
        for (v, &d) in spread.spread.iter().enumerate() {
            let row = v * CANDIDATES..(v + 1) * CANDIDATES;
            let open = largest(&spread.mean[row.clone()]) != largest(&geometry[row.clone()]);
            contested += usize::from(open);
            let w = if open {
                (50.0 * (d - from)).clamp(0.0, 1.0) * agreement[v]
            } else {
                0.0
            };
            for k in row {
                let expected = (1.0 - w) * spread.mean[k] + w * geometry[k];
                assert!((gated[k] - expected).abs() < 1e-5, "vertex {v}");
            }
        }
        assert!(contested > 0, "the random members override geometry somewhere");
        learned.fallback_agreement = false;
        learned.fallback_contested = false;
        // The geometric row is voxel binding's shares, not flattened by the learnt scale.
        let sharpest = |p: &[f32]| {
            p.chunks(CANDIDATES)
                .map(|r| r.iter().copied().fold(0.0, f32::max))
                .sum::<f32>()
        };
        assert!(
            sharpest(&geometry) > sharpest(&prior),
            "the prior at its learnt scale is flatter"
        );
        // Members without a prior have nothing to fall back to: the mean is kept.
        let mut plain_members =
            Learned::new(ModelFile::ensemble(&[single(1, false), single(2, false)], Default::default()).unwrap());
        let mean = plain_members.probabilities(&feats).unwrap();
        plain_members.fallback = 50.0;
        assert_eq!(plain_members.probabilities(&feats).unwrap(), mean);
    }

    #[test]
    fn a_piece_given_almost_wholly_to_one_bone_becomes_rigid_and_a_spanning_piece_does_not() {
        // Piece 0 (a button) leans on joint 0; piece 1 spans joints 1 and 2.
        let pieces = [0, 0, 0, 1, 1, 1];
        let rows: Vec<Row> = vec![
            vec![(0, 0.99), (1, 0.01)],
            vec![(0, 2.0)],
            vec![(0, 0.97), (2, 0.03), (1, f32::NAN)],
            vec![(1, 1.0)],
            vec![(1, 0.5), (2, 0.5)],
            vec![(2, 1.0)],
        ];
        let mut rigid = rows.clone();
        make_rigid(&pieces, &[false, false], &mut rigid, 0.95, 0.95);
        assert!(rigid[..3].iter().all(|r| r == &vec![(0, 1.0)]), "{rigid:?}");
        assert_eq!(&rigid[3..], &rows[3..]);
        // Joint 0 holds a 0.987 share of the first piece: a higher bar leaves it alone.
        let mut strict = rows.clone();
        make_rigid(&pieces, &[false, false], &mut strict, 0.99, 0.99);
        assert_eq!(format!("{strict:?}"), format!("{rows:?}"));
        let mut off = rows.clone();
        make_rigid(&pieces, &[false, false], &mut off, RIGID_OFF, RIGID_OFF);
        assert_eq!(format!("{off:?}"), format!("{rows:?}"));
        // A single-bone piece has a bar of its own: the first piece at 0.9 even when others need
        // 0.99, and the second (no share above 0.5) goes to its leading bone at 0.
        let mut single = rows.clone();
        make_rigid(&pieces, &[true, false], &mut single, 0.99, 0.9);
        assert!(single[..3].iter().all(|r| r == &vec![(0, 1.0)]), "{single:?}");
        assert_eq!(&single[3..], &rows[3..]);
        let mut all = rows.clone();
        make_rigid(&pieces, &[false, true], &mut all, RIGID_OFF, 0.0);
        assert_eq!(format!("{:?}", &all[..3]), format!("{:?}", &rows[..3]));
        assert!(all[3..].iter().all(|r| r.len() == 1), "{all:?}");
    }

    #[test]
    fn smoothing_pulls_an_outlier_towards_its_ring_and_keeps_rows_normalised() {
        let (prep, feats) = tube();
        let n = feats.vertex_count;
        // Every vertex trusts its nearest candidate, except vertex `odd` which trusts its second.
        let odd = n / 2;
        let mut probs = vec![0.0f32; n * CANDIDATES];
        for v in 0..n {
            let k = usize::from(v == odd);
            probs[v * CANDIDATES + k] = 1.0;
        }
        let out = smooth(&feats, &prep.adjacency, &probs, 2);
        let first = out[odd * CANDIDATES];
        let second = out[odd * CANDIDATES + 1];
        assert!(first > 0.0 && second < 1.0, "outlier row {first} {second}");
        for (row, mask) in out.chunks(CANDIDATES).zip(feats.mask.chunks(CANDIDATES)) {
            assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            assert!(row.iter().zip(mask).all(|(p, m)| *m > 0.0 || *p == 0.0));
        }
        assert_eq!(smooth(&feats, &prep.adjacency, &probs, 0), probs);
    }

    #[test]
    fn sharpening_raises_the_largest_share_and_keeps_rows_normalised() {
        let (_, feats) = tube();
        let n = feats.vertex_count;
        let mut probs = vec![0.0f32; n * CANDIDATES];
        for row in probs.chunks_mut(CANDIDATES) {
            row[0] = 0.6;
            row[1] = 0.4;
        }
        let before = probs.clone();
        sharpen(&feats, &mut probs, 1.0);
        assert_eq!(probs, before);
        sharpen(&feats, &mut probs, 2.0);
        for row in probs.chunks(CANDIDATES) {
            assert!((row[0] - 0.36 / 0.52).abs() < 1e-5, "{row:?}");
            assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
    }
}
