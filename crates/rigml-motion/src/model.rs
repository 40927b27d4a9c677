//! The motion model file and its inference.
//!
//! Layout (a temporal convolution network over frames at [`MODEL_FPS`]):
//! input `[FEATURES + 1, T]` = normalised frame vectors (noisy, or interpolated between key
//! frames) and a key mask (1 where the frame was given), or `[2 · FEATURES + 1, T]` with the
//! noise evidence of every feature between them ([`crate::evidence`]); `in` (1×1 conv) to `H` channels; residual
//! blocks `x += b(relu(a(x)))` with `a` a 3-tap conv of dilation `d` (the dilations in the
//! metadata; together they see ±32 frames, about a second each way) and `b` a 1×1 conv; `out`
//! (1×1 conv of `relu(x)`) to `[FEATURES + CONTACTS, T]`: a correction added to the input
//! vectors (for a blending model, file version [`BLEND_VERSION`]: the logit of the share of the
//! prefilter's residual to give back, [`MotionModel::keep`]), and one contact logit per foot joint.
//!
//! Weights are named f32 tensors in a safetensors file ([`rigml_learn::ModelFile`]); inference
//! is plain Rust (`matrixmultiply`): the network is a few hundred kB, and a clip's whole length
//! runs as one matrix product per tap and layer.

use crate::evidence::evidence_channel;
use crate::features::{floor_of, lower, CONTACTS, FEATURES, MODEL_FPS};
use crate::MotionError;
use rigml_learn::ModelFile;
use std::collections::HashMap;

/// Version of the frame vector and layout a model file was made for.
pub const MOTION_VERSION: u32 = 1;
/// Version of a blending model's file ([`MotionModel::blend`]): the same tensors, but its
/// first outputs mean something else, so a build that reads only version 1 refuses it rather
/// than taking its shares for corrections.
pub const BLEND_VERSION: u32 = 2;

/// Metadata keys.
pub const KEY_VERSION: &str = "rigml.motion.version";
pub const KEY_DILATIONS: &str = "rigml.motion.dilations";
/// `"1"` for a model that reads heights above the clip's own floor ([`MotionModel::floor`]).
pub const KEY_FLOOR: &str = "rigml.motion.floor";
/// `"1"` for a blending model ([`MotionModel::blend`]).
pub const KEY_BLEND: &str = "rigml.motion.blend";

/// Input channels: the vector and the key mask.
pub const INPUTS: usize = FEATURES + 1;
/// Input channels of a model that also reads the noise evidence ([`crate::evidence`]): the
/// vector, the evidence of every feature, the key mask.
pub const EVIDENCE_INPUTS: usize = 2 * FEATURES + 1;

/// Output channels.
pub const OUTPUTS: usize = FEATURES + CONTACTS;

/// The default dilations (receptive field ±(1+2+4+8+16+1) = ±32 frames).
pub const DILATIONS: [usize; 6] = [1, 2, 4, 8, 16, 1];

/// One convolution: weight `[out, in, taps]`, bias `[out]`, dilation.
#[derive(Debug, Clone, PartialEq)]
pub struct Conv {
    pub weight: Vec<f32>,
    pub bias: Vec<f32>,
    pub outputs: usize,
    pub inputs: usize,
    pub taps: usize,
    pub dilation: usize,
}

impl Conv {
    /// `y[out, T] = conv(x[in, T])` with zero padding (the output as long as the input).
    pub fn apply(&self, x: &[f32], t: usize) -> Vec<f32> {
        assert_eq!(x.len(), self.inputs * t);
        let mut y = vec![0.0f32; self.outputs * t];
        for (o, row) in y.chunks_exact_mut(t.max(1)).enumerate() {
            row.fill(self.bias[o]);
        }
        let half = (self.taps / 2) as isize;
        for tap in 0..self.taps {
            let shift = (tap as isize - half) * self.dilation as isize;
            // Output frames whose input frame (frame + shift) exists.
            let first = (-shift).max(0) as usize;
            let end = (t as isize - shift).min(t as isize).max(0) as usize;
            if first >= end {
                continue;
            }
            let cols = end - first;
            // SAFETY: the weight has `outputs * inputs * taps` values (checked when loaded); the
            // tap's matrix starts at `tap` with row stride `inputs * taps` and column stride
            // `taps`. `x` holds `inputs * t` values: columns `first + shift .. end + shift` lie in
            // `0..t`. `y` holds `outputs * t`: columns `first..end` lie in `0..t`. `y` aliases
            // neither input.
            unsafe {
                matrixmultiply::sgemm(
                    self.outputs,
                    self.inputs,
                    cols,
                    1.0,
                    self.weight.as_ptr().add(tap),
                    (self.inputs * self.taps) as isize,
                    self.taps as isize,
                    x.as_ptr().offset(first as isize + shift),
                    t as isize,
                    1,
                    1.0,
                    y.as_mut_ptr().add(first),
                    t as isize,
                    1,
                );
            }
        }
        y
    }
}

fn relu(mut x: Vec<f32>) -> Vec<f32> {
    for v in &mut x {
        *v = v.max(0.0);
    }
    x
}

/// A loaded motion model.
#[derive(Debug, Clone, PartialEq)]
pub struct MotionModel {
    pub mean: Vec<f32>,
    pub std: Vec<f32>,
    pub input: Conv,
    /// `(a, b)` of every residual block.
    pub blocks: Vec<(Conv, Conv)>,
    pub output: Conv,
    pub metadata: HashMap<String, String>,
    /// The model reads the noise evidence ([`EVIDENCE_INPUTS`] input channels).
    pub evidence: bool,
    /// The model reads heights above the clip's own floor: [`MotionModel::predict`] lowers the
    /// clip by [`floor_of`] its given frames before the network and lifts the result back.
    pub floor: bool,
    /// A blending model: its first [`FEATURES`] outputs are not a correction but, through a
    /// logistic, the share of what the prefilter took away from each feature to give back at
    /// the clip's rate ([`MotionModel::keep`], [`crate::denoise`]). It cannot invent motion, only
    /// choose, per feature and moment, between the raw clip and the prefiltered one.
    pub blend: bool,
}

/// What the model says about a run of frames.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// The corrected vectors.
    pub vectors: Vec<[f32; FEATURES]>,
    /// Contact probability of each foot joint, per frame.
    pub contacts: Vec<[f32; CONTACTS]>,
}

/// What a built-in model was trained for (docs/model-card-motion.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// Cleaning capture (`rigml clean --method learned`): trained on denoising windows only.
    Denoise,
    /// Filling frames between keys (`rigml inbetween --method learned`): trained on denoising
    /// and in-filling windows (30 % in-filling).
    Inbetween,
}

/// The built-in models, trained by `rigml train-motion` on the train subjects with `--infill 0`
/// (denoising) and the default `--infill 0.3` (in-betweens). One model for both tasks was
/// measured first: the denoising-only one moves clean val clips by 0.96 % of leg where it moved
/// them by 1.04 % (level 3: 4.76 against 4.88 %; a second seed 0.90 and 4.75 %), but fills
/// in-betweens worse (12.1 against 10.9 % at 30 frames), so each task has its own.
static DENOISE_MODEL: &[u8] = include_bytes!("../models/motion-denoise.safetensors");
static INBETWEEN_MODEL: &[u8] = include_bytes!("../models/motion.safetensors");

impl MotionModel {
    /// The model embedded in rigml for `task`.
    pub fn built_in(task: Task) -> Result<MotionModel, MotionError> {
        let (bytes, origin) = match task {
            Task::Denoise => (DENOISE_MODEL, "the built-in denoising model"),
            Task::Inbetween => (INBETWEEN_MODEL, "the built-in in-between model"),
        };
        MotionModel::from_file(&ModelFile::read(bytes, origin)?, origin)
    }

    /// Read a model file from disk.
    pub fn load(path: &std::path::Path) -> Result<MotionModel, MotionError> {
        let origin = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| rigml_learn::LearnError::Io {
            path: origin.clone(),
            source,
        })?;
        MotionModel::from_file(&ModelFile::read(&bytes, &origin)?, &origin)
    }

    /// A model from its file; `origin` names it in errors.
    pub fn from_file(file: &ModelFile, origin: &str) -> Result<MotionModel, MotionError> {
        let bad = |problem: String| MotionError::Model {
            origin: origin.to_string(),
            problem,
        };
        let version = file.metadata.get(KEY_VERSION).map(String::as_str);
        let blend = file.metadata.get(KEY_BLEND).is_some_and(|v| v == "1");
        let expected = if blend { BLEND_VERSION } else { MOTION_VERSION };
        if version != Some(expected.to_string().as_str()) {
            return Err(bad(format!(
                "made for motion model version {}, this build reads {MOTION_VERSION} (and {BLEND_VERSION} for a blending model, metadata {KEY_BLEND} = 1)",
                version.unwrap_or("(none: not a motion model)")
            )));
        }
        let dilations = parse_dilations(file.metadata.get(KEY_DILATIONS).map(String::as_str).unwrap_or(""))
            .ok_or_else(|| bad(format!("metadata {KEY_DILATIONS} is not a list of dilations")))?;
        let tensor = |name: &str, shape: &[usize]| -> Result<Vec<f32>, MotionError> {
            match file.weights.get(name) {
                Some((s, v)) if s.as_slice() == shape && v.len() == shape.iter().product::<usize>() => {
                    if v.iter().all(|x| x.is_finite()) {
                        Ok(v.clone())
                    } else {
                        Err(bad(format!("tensor {name} holds a value that is not finite")))
                    }
                }
                Some((s, _)) => Err(bad(format!("tensor {name} has shape {s:?}, expected {shape:?}"))),
                None => Err(bad(format!("no tensor {name}"))),
            }
        };
        let hidden = file
            .weights
            .get("in.weight")
            .and_then(|(s, _)| s.first().copied())
            .filter(|&h| h > 0 && h <= 4096)
            .ok_or_else(|| bad("no usable in.weight tensor".into()))?;
        let conv =
            |name: &str, outputs: usize, inputs: usize, taps: usize, dilation: usize| -> Result<Conv, MotionError> {
                Ok(Conv {
                    weight: tensor(&format!("{name}.weight"), &[outputs, inputs, taps])?,
                    bias: tensor(&format!("{name}.bias"), &[outputs])?,
                    outputs,
                    inputs,
                    taps,
                    dilation,
                })
            };
        let inputs = file
            .weights
            .get("in.weight")
            .and_then(|(s, _)| s.get(1).copied())
            .filter(|&i| i == INPUTS || i == EVIDENCE_INPUTS)
            .ok_or_else(|| bad(format!("in.weight must read {INPUTS} or {EVIDENCE_INPUTS} channels")))?;
        if blend && inputs != EVIDENCE_INPUTS {
            return Err(bad(format!(
                "a blending model must read the noise evidence ({EVIDENCE_INPUTS} channels)"
            )));
        }
        let std = tensor("norm.std", &[FEATURES])?;
        if std.iter().any(|s| *s <= 0.0) {
            return Err(bad("norm.std holds a spread that is not positive".into()));
        }
        Ok(MotionModel {
            mean: tensor("norm.mean", &[FEATURES])?,
            std,
            input: conv("in", hidden, inputs, 1, 1)?,
            blocks: dilations
                .iter()
                .enumerate()
                .map(|(i, &d)| {
                    Ok((
                        conv(&format!("block{i}.a"), hidden, hidden, 3, d)?,
                        conv(&format!("block{i}.b"), hidden, hidden, 1, 1)?,
                    ))
                })
                .collect::<Result<_, MotionError>>()?,
            output: conv("out", OUTPUTS, hidden, 1, 1)?,
            metadata: file.metadata.clone(),
            evidence: inputs == EVIDENCE_INPUTS,
            floor: file.metadata.get(KEY_FLOOR).is_some_and(|v| v == "1"),
            blend,
        })
    }

    /// Frames each side a frame's output depends on.
    pub fn reach(&self) -> usize {
        self.blocks.iter().map(|(a, _)| a.dilation * (a.taps / 2)).sum()
    }

    /// Seconds each side a frame's output depends on.
    pub fn reach_seconds(&self) -> f32 {
        self.reach() as f32 / MODEL_FPS
    }

    /// Raw network output `[OUTPUTS, T]` for input `[INPUTS, T]`.
    pub fn forward(&self, x: &[f32], t: usize) -> Vec<f32> {
        let mut h = self.input.apply(x, t);
        for (a, b) in &self.blocks {
            let inner = relu(a.apply(&h, t));
            let add = b.apply(&inner, t);
            for (v, d) in h.iter_mut().zip(add) {
                *v += d;
            }
        }
        self.output.apply(&relu(h), t)
    }

    /// Input channels the model reads.
    pub fn inputs(&self) -> usize {
        self.input.inputs
    }

    /// The model's input for `vectors` with `known` marking the frames given as keys (all, for
    /// denoising) and, for a model that reads it, the noise `evidence` of every frame (none:
    /// zero, as for in-filling): normalised vectors, channel-major, then the evidence
    /// ([`crate::evidence::evidence_channel`]), then the mask.
    pub fn input(&self, vectors: &[[f32; FEATURES]], known: &[bool], evidence: Option<&[[f32; FEATURES]]>) -> Vec<f32> {
        let t = vectors.len();
        let inputs = self.inputs();
        let mut x = vec![0.0f32; inputs * t];
        for (f, v) in vectors.iter().enumerate() {
            for k in 0..FEATURES {
                x[k * t + f] = (v[k] - self.mean[k]) / self.std[k];
            }
            if let (true, Some(e)) = (self.evidence, evidence.and_then(|e| e.get(f))) {
                for k in 0..FEATURES {
                    x[(FEATURES + k) * t + f] = evidence_channel(e[k], self.std[k]);
                }
            }
            x[(inputs - 1) * t + f] = if known.get(f).copied().unwrap_or(true) {
                1.0
            } else {
                0.0
            };
        }
        x
    }

    /// Corrected vectors and contact probabilities for `vectors` (frames at [`MODEL_FPS`]),
    /// `known` and `evidence` as [`MotionModel::input`] takes them. A blending model returns
    /// the vectors as they are (what it says is in [`MotionModel::keep`]) with its contacts.
    pub fn predict(
        &self,
        vectors: &[[f32; FEATURES]],
        known: &[bool],
        evidence: Option<&[[f32; FEATURES]]>,
    ) -> Prediction {
        let t = vectors.len();
        if t == 0 {
            return Prediction {
                vectors: Vec::new(),
                contacts: Vec::new(),
            };
        }
        let (x, y, floor) = self.run(vectors, known, evidence);
        if self.blend {
            return Prediction {
                vectors: vectors.to_vec(),
                contacts: contacts_of(&y, t),
            };
        }
        let mut vectors: Vec<[f32; FEATURES]> = (0..t)
            .map(|f| {
                let mut v = [0.0f32; FEATURES];
                for (k, out) in v.iter_mut().enumerate() {
                    *out = (x[k * t + f] + y[k * t + f]) * self.std[k] + self.mean[k];
                }
                v
            })
            .collect();
        if floor != 0.0 {
            lower(&mut vectors, -floor);
        }
        Prediction {
            vectors,
            contacts: contacts_of(&y, t),
        }
    }

    /// The network's input and raw output for `vectors`, and the floor they were lowered by.
    fn run(
        &self,
        vectors: &[[f32; FEATURES]],
        known: &[bool],
        evidence: Option<&[[f32; FEATURES]]>,
    ) -> (Vec<f32>, Vec<f32>, f32) {
        let t = vectors.len();
        let floor = if self.floor { floor_of(vectors, known) } else { 0.0 };
        let x = if floor != 0.0 {
            let mut lowered = vectors.to_vec();
            lower(&mut lowered, floor);
            self.input(&lowered, known, evidence)
        } else {
            self.input(vectors, known, evidence)
        };
        let y = self.forward(&x, t);
        (x, y, floor)
    }

    /// A blending model's share (0..1) of the prefilter's residual to give back, per frame and
    /// feature, for prefiltered `vectors` (frames at [`MODEL_FPS`]) and their noise `evidence`
    /// (`None` for any other model).
    pub fn keep(&self, vectors: &[[f32; FEATURES]], evidence: &[[f32; FEATURES]]) -> Option<Vec<[f32; FEATURES]>> {
        if !self.blend {
            return None;
        }
        let t = vectors.len();
        let (_, y, _) = self.run(vectors, &vec![true; t], Some(evidence));
        Some(
            (0..t)
                .map(|f| std::array::from_fn(|k| logistic(y[k * t + f])))
                .collect(),
        )
    }
}

/// `1 / (1 + e^-x)`: a logit as a probability or share.
fn logistic(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// Contact probabilities from a raw output `[OUTPUTS, t]`.
fn contacts_of(y: &[f32], t: usize) -> Vec<[f32; CONTACTS]> {
    (0..t)
        .map(|f| std::array::from_fn(|c| logistic(y[(FEATURES + c) * t + f])))
        .collect()
}

/// `"1,2,4"` → `[1, 2, 4]` (at least one; each 1..=64).
pub fn parse_dilations(text: &str) -> Option<Vec<usize>> {
    let d: Vec<usize> = text
        .split(',')
        .map(|s| s.trim().parse().ok().filter(|d| (1..=64).contains(d)))
        .collect::<Option<_>>()?;
    (!d.is_empty()).then_some(d)
}

/// The metadata every motion model file carries.
pub fn base_metadata(dilations: &[usize]) -> HashMap<String, String> {
    let mut m = HashMap::new();
    m.insert(KEY_VERSION.into(), MOTION_VERSION.to_string());
    m.insert(
        KEY_DILATIONS.into(),
        dilations.iter().map(usize::to_string).collect::<Vec<_>>().join(","),
    );
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A direct (loop) convolution to check the matrix-product one against.
    fn direct(c: &Conv, x: &[f32], t: usize) -> Vec<f32> {
        let mut y = vec![0.0; c.outputs * t];
        let half = (c.taps / 2) as isize;
        for o in 0..c.outputs {
            for f in 0..t {
                let mut s = c.bias[o];
                for i in 0..c.inputs {
                    for k in 0..c.taps {
                        let g = f as isize + (k as isize - half) * c.dilation as isize;
                        if g >= 0 && (g as usize) < t {
                            s += c.weight[(o * c.inputs + i) * c.taps + k] * x[i * t + g as usize];
                        }
                    }
                }
                y[o * t + f] = s;
            }
        }
        y
    }

    #[test]
    fn convolution_matches_the_direct_sum() {
        let (outputs, inputs, taps) = (5, 4, 3);
        let value = |i: usize| ((i * 37 % 101) as f32 / 50.0) - 1.0;
        for (dilation, t) in [(1, 9), (4, 9), (8, 5), (2, 1)] {
            let c = Conv {
                weight: (0..outputs * inputs * taps).map(value).collect(),
                bias: (0..outputs).map(|i| value(i + 7)).collect(),
                outputs,
                inputs,
                taps,
                dilation,
            };
            let x: Vec<f32> = (0..inputs * t).map(|i| value(i + 3)).collect();
            let (a, b) = (c.apply(&x, t), direct(&c, &x, t));
            for (p, q) in a.iter().zip(&b) {
                assert!((p - q).abs() < 1e-5, "dilation {dilation}, t {t}: {a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn the_built_in_models_load_and_keep_shapes() {
        // The denoising model sees ±32 frames (the default dilations), the in-between model
        // ±64 (one more block of dilation 32; docs/model-card-motion.md).
        for (task, reach) in [(Task::Denoise, DILATIONS.iter().sum::<usize>()), (Task::Inbetween, 64)] {
            let m = MotionModel::built_in(task).expect("built-in model");
            assert_eq!(m.reach(), reach);
            let vectors = vec![m.mean.clone().try_into().unwrap(); 40];
            let p = m.predict(&vectors, &[true; 40], None);
            assert_eq!(p.vectors.len(), 40);
            assert!(p.contacts.iter().flatten().all(|c| (0.0..=1.0).contains(c)));
        }
    }

    #[test]
    fn the_denoising_model_stands_a_clip_on_its_floor() {
        // The built-in denoising model reads heights above the clip's floor: the same clip
        // captured 0.1 H higher (every height of the vector raised) comes out raised by 0.1 H
        // and otherwise the same.
        let m = MotionModel::built_in(Task::Denoise).unwrap();
        assert!(m.floor);
        let mut vectors: Vec<[f32; FEATURES]> = (0..48)
            .map(|f| {
                let mut v: [f32; FEATURES] = m.mean.clone().try_into().unwrap();
                v[126] += 0.1 * (0.3 * f as f32).sin().max(0.0);
                v[127] += 0.1 * (0.3 * f as f32 + 1.5).sin().max(0.0);
                v
            })
            .collect();
        let known = vec![true; vectors.len()];
        let low = m.predict(&vectors, &known, None);
        let evidence = vec![[0.01f32; FEATURES]; vectors.len()];
        let low_shares = m.keep(&vectors, &evidence);
        crate::features::lower(&mut vectors, -0.1);
        let high = m.predict(&vectors, &known, None);
        // A blending model's shares of the residual do not depend on where the floor is.
        if let (Some(a), Some(b)) = (low_shares, m.keep(&vectors, &evidence)) {
            for (x, y) in a.iter().flatten().zip(b.iter().flatten()) {
                assert!((x - y).abs() < 1e-5, "share {x} then {y}");
            }
        }
        for (a, b) in low.vectors.iter().zip(&high.vectors) {
            for k in 0..FEATURES {
                let lift = if crate::features::HEIGHTS.contains(&k) {
                    0.1
                } else {
                    0.0
                };
                assert!((b[k] - a[k] - lift).abs() < 1e-4, "feature {k}: {} then {}", a[k], b[k]);
            }
        }
        for (a, b) in low.contacts.iter().flatten().zip(high.contacts.iter().flatten()) {
            assert!((a - b).abs() < 1e-5, "contacts {a} then {b}");
        }
    }

    #[test]
    fn files_of_other_kinds_are_refused() {
        let file = ModelFile {
            weights: HashMap::new(),
            metadata: HashMap::new(),
        };
        let e = MotionModel::from_file(&file, "x.safetensors").unwrap_err().to_string();
        assert!(e.contains("x.safetensors") && e.contains("not a motion model"), "{e}");
        let file = ModelFile {
            weights: HashMap::new(),
            metadata: base_metadata(&DILATIONS),
        };
        let e = MotionModel::from_file(&file, "y").unwrap_err().to_string();
        assert!(e.contains("in.weight"), "{e}");
        // The built-in denoising model blends (version 2): as version 1 it is refused, as is a
        // version-2 file that does not say it blends.
        let mut file = ModelFile::read(DENOISE_MODEL, "built-in").unwrap();
        assert!(MotionModel::from_file(&file, "built-in").unwrap().blend);
        file.metadata.insert(KEY_VERSION.into(), MOTION_VERSION.to_string());
        let e = MotionModel::from_file(&file, "old").unwrap_err().to_string();
        assert!(e.contains("version 1") && e.contains(KEY_BLEND), "{e}");
        file.metadata.insert(KEY_VERSION.into(), BLEND_VERSION.to_string());
        file.metadata.remove(KEY_BLEND);
        assert!(MotionModel::from_file(&file, "unsaid").is_err());
        assert_eq!(parse_dilations("1, 2,4"), Some(vec![1, 2, 4]));
        assert_eq!(parse_dilations("0"), None);
        assert_eq!(parse_dilations(""), None);
    }
}
