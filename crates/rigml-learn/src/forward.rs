//! Inference-only forward pass of the skin network (layout in [`crate::model`]) over the saved weights: plain f32
//! matrix products (`matrixmultiply::sgemm`) on chunks of vertices, in parallel with rayon.
//!
//! Why not burn at inference: the network is tiny (four linear layers of width 64) and the
//! ndarray backend spends most of a 20k-vertex forward pass allocating and copying whole
//! intermediate tensors (the candidate concat, the broadcast of the pooled context, the mask
//! arithmetic), and it runs them one after another on one core. Here the pooled-context half of
//! the `mix` layer is computed once per vertex instead of once per candidate, every buffer is a
//! per-chunk scratch, and chunks run in parallel. Training keeps burn (it needs autodiff); the
//! unit tests check that both give the same probabilities within 1e-5.

use crate::features::{CANDIDATES, FEATURES, HEAT_SHARE, PATCH_DIMS, PATCH_POINTS, VOXEL_SHARE};
use crate::model::{checked_tensor, patch_width, prior_logit, prior_scale, voxel_prior_scale, ModelFile, Weights};
use crate::LearnError;
use rayon::prelude::*;

/// Vertices per parallel work item (`VERTS * CANDIDATES` rows per matrix product).
const VERTS: usize = 256;

/// Logit of padded candidate slots (as the burn network's).
const PAD_LOGIT: f32 = -1.0e4;

/// One linear layer, `y = x W + b`, `W` row-major `[input, output]` as burn stores it (the
/// skeleton network's hand-written pass uses it too).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layer {
    pub(crate) input: usize,
    pub(crate) output: usize,
    weight: Vec<f32>,
    pub(crate) bias: Vec<f32>,
}

impl Layer {
    /// The layer `name` of `weights` (`name.weight` `[input, output]`, `name.bias` `[output]`),
    /// shapes and finiteness checked.
    pub(crate) fn load(weights: &Weights, name: &str, input: usize, output: usize) -> Result<Layer, LearnError> {
        let get = |key: String, shape: &[usize]| checked_tensor(weights, &key, shape).map_err(LearnError::Model);
        Ok(Layer {
            input,
            output,
            weight: get(format!("{name}.weight"), &[input, output])?,
            bias: get(format!("{name}.bias"), &[output])?,
        })
    }

    /// `out[rows, output] = x[rows, input_used] · W[row_from..row_from + input_used, :]` (the
    /// weight rows of a slice of the input features; the bias is left to the caller).
    pub(crate) fn apply(&self, x: &[f32], rows: usize, input_used: usize, row_from: usize, out: &mut [f32]) {
        let w = &self.weight[row_from * self.output..(row_from + input_used) * self.output];
        assert!(x.len() >= rows * input_used && out.len() >= rows * self.output);
        // SAFETY: the slices hold at least `rows * input_used`, `input_used * output` and
        // `rows * output` f32s (the assert and the slicing above), the strides describe dense
        // row-major matrices inside them, and `out` (a `&mut`) aliases neither `x` nor `w`.
        unsafe {
            matrixmultiply::sgemm(
                rows,
                input_used,
                self.output,
                1.0,
                x.as_ptr(),
                input_used as isize,
                1,
                w.as_ptr(),
                self.output as isize,
                1,
                0.0,
                out.as_mut_ptr(),
                self.output as isize,
                1,
            );
        }
    }

    /// `out[rows, output] = relu(x[rows, input] W + b)`.
    pub(crate) fn relu(&self, x: &[f32], rows: usize, out: &mut [f32]) {
        self.apply(x, rows, self.input, 0, out);
        for row in out.chunks_exact_mut(self.output) {
            row.iter_mut().zip(&self.bias).for_each(|(y, b)| *y = (*y + b).max(0.0));
        }
    }
}

/// The network's weights, ready for [`Dense::probabilities`].
#[derive(Debug, Clone, PartialEq)]
pub struct Dense {
    hidden: usize,
    pair: Layer,
    mix: Layer,
    deep: Layer,
    out: Layer,
    /// The point encoder's two layers, if the network has one.
    patch: Option<(Layer, Layer)>,
    /// The learnt scale of the heat prior, if the network corrects heat's row.
    prior: Option<f32>,
    /// The learnt scale of the voxel-binding prior, if the network corrects voxel's row.
    voxel_prior: Option<f32>,
}

impl Dense {
    /// Take the weights of a single-network `model` (same names and shapes as
    /// `crate::net::Net::from_weights`).
    pub fn new(model: &ModelFile) -> Result<Dense, LearnError> {
        Dense::from_weights(&model.weights)
    }

    /// Take named weights (as [`ModelFile::member_weights`] gives them).
    fn from_weights(weights: &Weights) -> Result<Dense, LearnError> {
        let hidden = weights
            .get("pair.weight")
            .and_then(|(shape, _)| shape.get(1).copied())
            .filter(|&h| h > 0)
            .ok_or_else(|| LearnError::Model("no usable `pair.weight` tensor".into()))?;
        let h = hidden;
        let w = patch_width(weights);
        let patch = if w > 0 {
            Some((
                Layer::load(weights, "patch1", PATCH_DIMS, w)?,
                Layer::load(weights, "patch2", w, w)?,
            ))
        } else {
            None
        };
        Ok(Dense {
            hidden,
            patch,
            prior: prior_scale(weights),
            voxel_prior: voxel_prior_scale(weights),
            pair: Layer::load(weights, "pair", FEATURES + w, h)?,
            mix: Layer::load(weights, "mix", 2 * h, h)?,
            deep: Layer::load(weights, "deep", h, h)?,
            out: Layer::load(weights, "out", h, 1)?,
        })
    }

    /// Softmax over the candidates, `[n * CANDIDATES]`, for features `x` (`[n * CANDIDATES *
    /// FEATURES]`), mask (`[n * CANDIDATES]`) and surface patches (`[n * PATCH_POINTS *
    /// PATCH_DIMS]`; read, and checked, only by a network with a point encoder).
    pub fn probabilities(&self, x: &[f32], mask: &[f32], patch: &[f32]) -> Result<Vec<f32>, LearnError> {
        let n = mask.len() / CANDIDATES;
        let points = PATCH_POINTS * PATCH_DIMS;
        if mask.len() != n * CANDIDATES || x.len() != n * CANDIDATES * FEATURES {
            return Err(LearnError::Model(format!(
                "{} feature values and {} mask values do not describe whole vertices",
                x.len(),
                mask.len()
            )));
        }
        if self.reads_patches() && patch.len() != n * points {
            return Err(LearnError::Model(format!(
                "the network has a point encoder but got {} patch values for {n} vertices",
                patch.len()
            )));
        }
        let mut out = vec![0.0f32; n * CANDIDATES];
        out.par_chunks_mut(VERTS * CANDIDATES)
            .zip(x.par_chunks(VERTS * CANDIDATES * FEATURES))
            .zip(mask.par_chunks(VERTS * CANDIDATES))
            .enumerate()
            .for_each(|(c, ((probs, x), mask))| {
                let patch = if self.reads_patches() {
                    &patch[c * VERTS * points..(c * VERTS + mask.len() / CANDIDATES) * points]
                } else {
                    &[]
                };
                self.chunk(x, mask, patch, probs)
            });
        Ok(out)
    }

    /// The logit the priors give one (vertex, candidate) row of features before the network's
    /// correction: each prior's learnt scale times the log of its share (0 without priors).
    fn base_logit(&self, row: &[f32]) -> f32 {
        self.prior.map_or(0.0, |s| s * prior_logit(row[HEAT_SHARE]))
            + self.voxel_prior.map_or(0.0, |s| s * prior_logit(row[VOXEL_SHARE]))
    }

    /// Softmax over the candidates of the prior's logits alone, the network's correction
    /// withdrawn (what the network would give if its output were zero), for features `x` and
    /// `mask` as [`Dense::probabilities`] takes them; `None` for a network without a prior.
    pub fn prior_probabilities(&self, x: &[f32], mask: &[f32]) -> Option<Vec<f32>> {
        if self.prior.is_none() && self.voxel_prior.is_none() {
            return None;
        }
        Some(softmax_of_rows(x, mask, |row| self.base_logit(row)))
    }

    /// Softmax over the candidates of the geometric solver's own log shares (voxel binding's
    /// where the network corrects it, else heat's), at scale 1 rather than the learnt scale:
    /// close to that solver's own row among the candidates. `None` without a prior.
    pub fn geometry_probabilities(&self, x: &[f32], mask: &[f32]) -> Option<Vec<f32>> {
        let column = if self.voxel_prior.is_some() {
            VOXEL_SHARE
        } else if self.prior.is_some() {
            HEAT_SHARE
        } else {
            return None;
        };
        Some(softmax_of_rows(x, mask, |row| prior_logit(row[column])))
    }

    /// Whether the network has a point encoder (and so needs surface patches).
    pub fn reads_patches(&self) -> bool {
        self.patch.is_some()
    }

    /// The point encoder's codes `[verts * W]` of a chunk's patches (`None` without an encoder).
    fn codes(&self, patch: &[f32], verts: usize) -> Option<(Vec<f32>, usize)> {
        let (first, second) = self.patch.as_ref()?;
        let w = second.output;
        let rows = verts * PATCH_POINTS;
        let mut hidden = vec![0.0f32; rows * w];
        first.relu(patch, rows, &mut hidden);
        let mut code = vec![0.0f32; rows * w];
        second.relu(&hidden, rows, &mut code);
        // Max over each patch's points (ReLU outputs are >= 0).
        let mut pooled = vec![0.0f32; verts * w];
        for (v, p) in pooled.chunks_exact_mut(w).enumerate() {
            for row in code[v * PATCH_POINTS * w..(v + 1) * PATCH_POINTS * w].chunks_exact(w) {
                p.iter_mut().zip(row).for_each(|(a, &b)| *a = a.max(b));
            }
        }
        Some((pooled, w))
    }

    /// One chunk of whole vertices.
    fn chunk(&self, x: &[f32], mask: &[f32], patch: &[f32], probs: &mut [f32]) {
        let h = self.hidden;
        let rows = mask.len();
        let verts = rows / CANDIDATES;
        // local = relu([x, code] Wp + bp) * mask: the code's half once per vertex.
        let mut local = vec![0.0f32; rows * h];
        self.pair.apply(x, rows, FEATURES, 0, &mut local);
        if let Some((code, w)) = self.codes(patch, verts) {
            let mut shape = vec![0.0f32; verts * h];
            self.pair.apply(&code, verts, w, FEATURES, &mut shape);
            for (r, row) in local.chunks_exact_mut(h).enumerate() {
                let s = &shape[(r / CANDIDATES) * h..(r / CANDIDATES + 1) * h];
                row.iter_mut().zip(s).for_each(|(y, &s)| *y += s);
            }
        }
        for (r, row) in local.chunks_exact_mut(h).enumerate() {
            let keep = mask[r];
            row.iter_mut()
                .zip(&self.pair.bias)
                .for_each(|(y, b)| *y = (*y + b).max(0.0) * keep);
        }
        // pooled = max over the candidates (padded slots are 0 and ReLU outputs >= 0).
        let mut pooled = vec![0.0f32; verts * h];
        for (v, p) in pooled.chunks_exact_mut(h).enumerate() {
            p.copy_from_slice(&local[v * CANDIDATES * h..(v * CANDIDATES + 1) * h]);
            for k in 1..CANDIDATES {
                let row = &local[(v * CANDIDATES + k) * h..(v * CANDIDATES + k + 1) * h];
                p.iter_mut().zip(row).for_each(|(a, &b)| *a = a.max(b));
            }
        }
        // mixed = relu([local, pooled] Wm + bm): the pooled half once per vertex.
        let mut context = vec![0.0f32; verts * h];
        self.mix.apply(&pooled, verts, h, h, &mut context);
        let mut mixed = vec![0.0f32; rows * h];
        self.mix.apply(&local, rows, h, 0, &mut mixed);
        for (r, row) in mixed.chunks_exact_mut(h).enumerate() {
            let c = &context[(r / CANDIDATES) * h..(r / CANDIDATES + 1) * h];
            row.iter_mut()
                .zip(c)
                .zip(&self.mix.bias)
                .for_each(|((y, &c), &b)| *y = (*y + c + b).max(0.0));
        }
        // deep = relu(mixed Wd + bd) + mixed
        let deep = &mut local; // reuse: `local` is no longer needed
        self.deep.apply(&mixed, rows, h, 0, deep);
        for (d, m) in deep.chunks_exact_mut(h).zip(mixed.chunks_exact(h)) {
            d.iter_mut()
                .zip(m)
                .zip(&self.deep.bias)
                .for_each(|((y, &m), &b)| *y = (*y + b).max(0.0) + m);
        }
        // logits = deep wo + bo, masked; softmax per vertex.
        self.out.apply(deep, rows, h, 0, probs);
        let bias = self.out.bias.first().copied().unwrap_or(0.0);
        for (r, (p, &m)) in probs.iter_mut().zip(mask).enumerate() {
            let base = self.base_logit(&x[r * FEATURES..(r + 1) * FEATURES]);
            *p = (*p + bias + base) * m + (1.0 - m) * PAD_LOGIT;
        }
        probs.chunks_exact_mut(CANDIDATES).for_each(softmax_row);
    }
}

/// Logits to probabilities in place (one vertex's candidates).
fn softmax_row(row: &mut [f32]) {
    let top = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for p in row.iter_mut() {
        *p = (*p - top).exp();
        sum += *p;
    }
    row.iter_mut().for_each(|p| *p /= sum);
}

/// Per vertex, how far voxel binding and bone heat agree among the candidates: the overlap
/// `Σ min(voxel, heat)` of their rows (the softmax of each solver's log shares at scale 1), 1
/// where they give the same weights, 0 where they bind to different bones. The features must
/// hold both solvers' shares ([`crate::features::holds_voxel_binding`]). `voxel` is voxel
/// binding's rows where they were already computed ([`Ensemble::geometry_probabilities`] of
/// networks that [correct voxel binding](Ensemble::corrects_voxel_binding)); `None` computes them.
pub fn geometry_agreement(x: &[f32], mask: &[f32], voxel: Option<&[f32]>) -> Vec<f32> {
    let computed;
    let voxel = match voxel {
        Some(rows) => rows,
        None => {
            computed = softmax_of_rows(x, mask, |row| prior_logit(row[VOXEL_SHARE]));
            &computed
        }
    };
    let heat = softmax_of_rows(x, mask, |row| prior_logit(row[HEAT_SHARE]));
    voxel
        .par_chunks(CANDIDATES)
        .zip(heat.par_chunks(CANDIDATES))
        .map(|(a, b)| a.iter().zip(b).map(|(p, q)| p.min(*q)).sum::<f32>().min(1.0))
        .collect()
}

/// Softmax over each vertex's candidates of `logit` of every (vertex, candidate) row of
/// features `x`, padded candidates (`mask` 0) left out.
fn softmax_of_rows(x: &[f32], mask: &[f32], logit: impl Fn(&[f32]) -> f32 + Sync) -> Vec<f32> {
    let mut out: Vec<f32> = mask
        .par_iter()
        .enumerate()
        .map(|(r, &m)| logit(&x[r * FEATURES..(r + 1) * FEATURES]) * m + (1.0 - m) * PAD_LOGIT)
        .collect();
    out.par_chunks_mut(CANDIDATES).for_each(softmax_row);
    out
}

/// What [`Ensemble::probabilities_with_spread`] gives: the members' mean probabilities and how
/// far the members disagree on each vertex.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    /// Mean of the members' probabilities, `[n * CANDIDATES]`.
    pub mean: Vec<f32>,
    /// Per vertex, the mean over members of the total-variation distance between a member's
    /// row and the mean row (0: all agree; at most 1), `[n]`.
    pub spread: Vec<f32>,
}

/// Every network of a model file (one, or an ensemble's members): the probabilities are the
/// mean of the members'.
#[derive(Debug, Clone, PartialEq)]
pub struct Ensemble {
    members: Vec<Dense>,
}

impl Ensemble {
    /// The networks of `model`.
    pub fn new(model: &ModelFile) -> Result<Ensemble, LearnError> {
        let count = model.member_count()?;
        let members = (0..count)
            .map(|i| {
                let dense = Dense::from_weights(&model.member_weights(i)?);
                match dense {
                    Err(LearnError::Model(problem)) if count > 1 => {
                        Err(LearnError::Model(format!("member {i}: {problem}")))
                    }
                    other => other,
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Ensemble { members })
    }

    /// Number of networks.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether there is no network (never, for an ensemble built by [`Ensemble::new`]).
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Whether any member has a point encoder (and so needs surface patches).
    pub fn reads_patches(&self) -> bool {
        self.members.iter().any(Dense::reads_patches)
    }

    /// Whether the networks correct voxel binding (a voxel prior), so that
    /// [`Ensemble::geometry_probabilities`] gives voxel binding's own rows.
    pub fn corrects_voxel_binding(&self) -> bool {
        self.members.first().is_some_and(|m| m.voxel_prior.is_some())
    }

    /// The members' mean probabilities with their disagreement per vertex (see [`Spread`]).
    /// Where members trained alike but for their seeds disagree, the character is unlike what
    /// they learned from, and inference can fall back toward the prior or the geometric
    /// solver's row (`Learned::fallback`).
    pub fn probabilities_with_spread(&self, x: &[f32], mask: &[f32], patch: &[f32]) -> Result<Spread, LearnError> {
        let members = self
            .members
            .iter()
            .map(|m| m.probabilities(x, mask, patch))
            .collect::<Result<Vec<_>, _>>()?;
        if members.is_empty() {
            return Err(LearnError::Model("an ensemble without networks".into()));
        }
        let share = 1.0 / members.len() as f32;
        let mut mean = vec![0.0f32; mask.len()];
        for p in &members {
            mean.par_iter_mut().zip(p).for_each(|(m, q)| *m += q * share);
        }
        let spread = (0..mask.len() / CANDIDATES)
            .into_par_iter()
            .map(|v| {
                let row = v * CANDIDATES..(v + 1) * CANDIDATES;
                let distance = |p: &Vec<f32>| {
                    let pairs = p[row.clone()].iter().zip(&mean[row.clone()]);
                    0.5 * pairs.map(|(a, b)| (a - b).abs()).sum::<f32>()
                };
                members.iter().map(distance).sum::<f32>() * share
            })
            .collect();
        Ok(Spread { mean, spread })
    }

    /// Mean of the members' [`Dense::prior_probabilities`] (the prior they correct, at each
    /// member's learnt scale), if every member has a prior. Computed only when a fallback
    /// targets it, not with [`Ensemble::probabilities_with_spread`].
    pub fn prior_probabilities(&self, x: &[f32], mask: &[f32]) -> Option<Vec<f32>> {
        let priors: Vec<Vec<f32>> = self
            .members
            .iter()
            .map(|m| m.prior_probabilities(x, mask))
            .collect::<Option<_>>()?;
        let share = 1.0 / priors.len().max(1) as f32;
        let mut out = vec![0.0f32; mask.len()];
        for p in &priors {
            out.par_iter_mut().zip(p).for_each(|(m, q)| *m += q * share);
        }
        Some(out)
    }

    /// The geometric solver's own row ([`Dense::geometry_probabilities`]; the same for every
    /// member, so the first one's), if the networks correct one.
    pub fn geometry_probabilities(&self, x: &[f32], mask: &[f32]) -> Option<Vec<f32>> {
        self.members.first()?.geometry_probabilities(x, mask)
    }

    /// Mean of the members' [`Dense::probabilities`].
    pub fn probabilities(&self, x: &[f32], mask: &[f32], patch: &[f32]) -> Result<Vec<f32>, LearnError> {
        let mut members = self.members.iter();
        let first = members
            .next()
            .ok_or_else(|| LearnError::Model("an ensemble without networks".into()))?;
        let mut mean = first.probabilities(x, mask, patch)?;
        for member in members {
            let p = member.probabilities(x, mask, patch)?;
            mean.par_iter_mut().zip(&p).for_each(|(m, q)| *m += q);
        }
        let share = 1.0 / self.members.len() as f32;
        mean.par_iter_mut().for_each(|m| *m *= share);
        Ok(mean)
    }
}

// The tests compare against the burn network, so they need the `train` feature (which
// `cargo test --workspace` turns on through rigml-cli's dev-dependencies).
#[cfg(all(test, feature = "train"))]
mod tests {
    use super::*;
    use crate::model::NetConfig;
    use crate::net::{tensor_values, Net};
    use burn::tensor::activation::softmax;
    use burn::tensor::{Tensor, TensorData};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::HashMap;

    /// The hand-written pass and the burn network agree within 1e-5 on random inputs, with
    /// and without a point encoder and a heat prior (whose scale is set to 0.7, so that a pass
    /// that ignored the learnt value would differ).
    fn check_against_burn(config: NetConfig) {
        let device = crate::device();
        device.seed(3);
        let mut model = ModelFile::from_net(&Net::new(config, &device), HashMap::new());
        if let Some((_, scale)) = model.weights.get_mut(crate::model::PRIOR_SCALE) {
            scale[0] = 0.7;
        }
        if let Some((_, scale)) = model.weights.get_mut(crate::model::VOXEL_PRIOR_SCALE) {
            scale[0] = 0.4;
        }
        let net = Net::from_weights(&model.weights, &device).unwrap();
        assert_eq!(net.prior.is_some(), config.prior);
        assert_eq!(net.voxel_prior.is_some(), config.voxel_prior);
        let dense = Dense::new(&model).unwrap();
        // 600 vertices (more than two chunks), some with padded slots.
        let n = 600;
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        // Heat and voxel shares lie in [0, 1]; a few negative ones check the clamp.
        let x: Vec<f32> = (0..n * CANDIDATES * FEATURES)
            .map(|i| match i % FEATURES {
                HEAT_SHARE | VOXEL_SHARE => 1.05 * rng.random::<f32>() - 0.05,
                _ => 2.0 * rng.random::<f32>() - 1.0,
            })
            .collect();
        let patch: Vec<f32> = (0..n * PATCH_POINTS * PATCH_DIMS)
            .map(|_| 2.0 * rng.random::<f32>() - 1.0)
            .collect();
        let mask: Vec<f32> = (0..n * CANDIDATES)
            .map(|i| f32::from(u8::from(i % CANDIDATES < 2 + (i / CANDIDATES) % 7)))
            .collect();
        let mut x_padded = x.clone();
        for (i, m) in mask.iter().enumerate() {
            if *m == 0.0 {
                x_padded[i * FEATURES..(i + 1) * FEATURES].fill(0.0);
            }
        }
        let ours = dense.probabilities(&x_padded, &mask, &patch).unwrap();
        let xt = Tensor::<3>::from_data(TensorData::new(x_padded, [n, CANDIDATES, FEATURES]), &device);
        let mt = Tensor::<2>::from_data(TensorData::new(mask.clone(), [n, CANDIDATES]), &device);
        let pt = Tensor::<3>::from_data(TensorData::new(patch, [n, PATCH_POINTS, PATCH_DIMS]), &device);
        let theirs = tensor_values(softmax(net.forward(xt, mt, pt), 1).into_data());
        assert_eq!(ours.len(), theirs.len());
        let worst = ours
            .iter()
            .zip(&theirs)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(worst <= 1e-5, "largest difference {worst}");
        for (row, m) in ours.chunks(CANDIDATES).zip(mask.chunks(CANDIDATES)) {
            assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            assert!(row.iter().zip(m).all(|(p, m)| *m > 0.0 || *p < 1e-6));
        }
    }

    #[test]
    fn matches_the_burn_network_within_1e_5() {
        check_against_burn(NetConfig {
            hidden: 24,
            ..NetConfig::default()
        });
    }

    #[test]
    fn matches_the_burn_network_with_a_heat_prior_within_1e_5() {
        check_against_burn(NetConfig {
            hidden: 24,
            patch: 12,
            prior: true,
            voxel_prior: false,
        });
    }

    #[test]
    fn matches_the_burn_network_with_voxel_and_heat_priors_within_1e_5() {
        check_against_burn(NetConfig {
            hidden: 24,
            voxel_prior: true,
            ..NetConfig::default()
        });
        check_against_burn(NetConfig {
            hidden: 24,
            prior: true,
            voxel_prior: true,
            ..NetConfig::default()
        });
    }

    #[test]
    fn matches_the_burn_network_with_a_point_encoder_within_1e_5() {
        check_against_burn(NetConfig {
            hidden: 24,
            patch: 12,
            ..NetConfig::default()
        });
    }

    #[test]
    fn an_ensemble_gives_the_mean_of_its_members() {
        let device = crate::device();
        let members: Vec<ModelFile> = (0..3)
            .map(|seed| {
                device.seed(seed);
                ModelFile::from_net(
                    &Net::new(
                        NetConfig {
                            hidden: 8 + 4 * seed as usize,
                            patch: 0,
                            prior: seed == 1,
                            voxel_prior: seed == 2,
                        },
                        &device,
                    ),
                    HashMap::new(),
                )
            })
            .collect();
        let n = 300;
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        // Heat shares lie in [0, 1]; a few negative ones check the clamp.
        let x: Vec<f32> = (0..n * CANDIDATES * FEATURES)
            .map(|i| match i % FEATURES {
                HEAT_SHARE => 1.05 * rng.random::<f32>() - 0.05,
                _ => 2.0 * rng.random::<f32>() - 1.0,
            })
            .collect();
        let mask = vec![1.0f32; n * CANDIDATES];
        let patch = vec![0.0f32; n * PATCH_POINTS * PATCH_DIMS];
        let each: Vec<Vec<f32>> = members
            .iter()
            .map(|m| Dense::new(m).unwrap().probabilities(&x, &mask, &patch).unwrap())
            .collect();
        let ensemble = Ensemble::new(&ModelFile::ensemble(&members, HashMap::new()).unwrap()).unwrap();
        assert_eq!(ensemble.len(), 3);
        let mean = ensemble.probabilities(&x, &mask, &patch).unwrap();
        for (i, p) in mean.iter().enumerate() {
            let expected = each.iter().map(|e| e[i]).sum::<f32>() / 3.0;
            assert!((p - expected).abs() < 1e-6, "{p} vs {expected}");
        }
        // A single-network file is an ensemble of one.
        let one = Ensemble::new(&members[0]).unwrap();
        assert_eq!(one.probabilities(&x, &mask, &patch).unwrap(), each[0]);
        // The members are not single networks under their own names.
        let mut file = ModelFile::ensemble(&members, HashMap::new()).unwrap();
        assert!(Dense::new(&file).is_err());
        // A broken member is named.
        file.weights.remove("member1.deep.weight");
        let err = Ensemble::new(&file).unwrap_err().to_string();
        assert!(err.contains("member 1") && err.contains("deep.weight"), "{err}");
    }

    #[test]
    fn broken_models_and_ragged_inputs_are_refused() {
        let device = crate::device();
        let net = Net::new(
            NetConfig {
                hidden: 4,
                ..NetConfig::default()
            },
            &device,
        );
        let mut model = ModelFile::from_net(&net, HashMap::new());
        let dense = Dense::new(&model).unwrap();
        let patch = [0.0; PATCH_POINTS * PATCH_DIMS];
        assert!(dense
            .probabilities(&[0.0; FEATURES], &[1.0; CANDIDATES], &patch)
            .is_err());
        // Patches are only read (and checked) by a network with a point encoder.
        let x = [0.0; CANDIDATES * FEATURES];
        assert!(!dense.reads_patches());
        assert!(dense.probabilities(&x, &[1.0; CANDIDATES], &[]).is_ok());
        let encoder = Dense::new(&ModelFile::from_net(
            &Net::new(
                NetConfig {
                    hidden: 4,
                    patch: 4,
                    ..NetConfig::default()
                },
                &device,
            ),
            HashMap::new(),
        ))
        .unwrap();
        assert!(encoder.reads_patches());
        assert!(encoder.probabilities(&x, &[1.0; CANDIDATES], &patch).is_ok());
        assert!(encoder.probabilities(&x, &[1.0; CANDIDATES], &patch[1..]).is_err());
        assert!(encoder.probabilities(&x, &[1.0; CANDIDATES], &[]).is_err());
        if let Some((_, v)) = model.weights.get_mut("deep.weight") {
            v[0] = f32::NAN;
        }
        assert!(Dense::new(&model).is_err());
        model.weights.remove("deep.weight");
        assert!(Dense::new(&model).is_err());
    }

    #[test]
    fn voxel_binding_and_bone_heat_agree_where_their_shares_match() {
        let mut x = vec![0.0f32; 2 * CANDIDATES * FEATURES];
        let mask = vec![1.0f32; 2 * CANDIDATES];
        // Vertex 0: both solvers bind it to candidate 0; vertex 1: voxel to 0, heat to 1.
        x[VOXEL_SHARE] = 1.0;
        x[HEAT_SHARE] = 1.0;
        x[CANDIDATES * FEATURES + VOXEL_SHARE] = 1.0;
        x[(CANDIDATES + 1) * FEATURES + HEAT_SHARE] = 1.0;
        let agreement = geometry_agreement(&x, &mask, None);
        assert_eq!(agreement.len(), 2);
        assert!(agreement[0] > 0.99, "{agreement:?}");
        assert!(agreement[1] < 0.02, "{agreement:?}");
        // Voxel binding's rows handed in give the same as computing them.
        let voxel = softmax_of_rows(&x, &mask, |row| prior_logit(row[VOXEL_SHARE]));
        assert_eq!(geometry_agreement(&x, &mask, Some(&voxel)), agreement);
    }
}
