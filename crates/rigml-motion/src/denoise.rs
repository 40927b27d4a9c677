//! Cleaning a clip with the motion model: smooth it ([`crate::data::prefilter`]), encode it in
//! IK-Rig space, bring it to the model's rate (with what smoothing took away, for a model that
//! reads it: [`crate::evidence`]), let the model correct every frame and say where
//! the feet touch the ground, apply its change at the clip's own rate
//! ([`crate::features::apply_at_rate`]), decode onto the same skeleton and remove foot skate as
//! `rigml clean` does ([`crate::data::decode_on_skeleton`]), and report the contacts the
//! detector finds on the result ([`crate::data::foot_contacts`]).
//!
//! The model's root motion is a velocity; integrated over a long clip its small errors would
//! add up. So the root path (ground position and heading) keeps the clip's own slow movement
//! (below [`DenoiseOptions::root_cutoff`]) and takes only the faster part from the model: a
//! complementary filter.

use crate::data::{decode_on_skeleton, foot_contacts, prefilter, Source};
use crate::evidence::noise_evidence;
use crate::features::{
    apply_at_rate, from_vectors, interpolate, to_model_rate, to_vectors, CONTACTS, FEATURES, MODEL_FPS,
};
use crate::model::MotionModel;
use crate::MotionError;
use glam::Vec2;
use rigml_anim::cleanup::filters::{butterworth, filtfilt};
use rigml_anim::encode::{encode, RigClip, RigFrame};
use rigml_anim::rig::Frames;
use rigml_core::{Pose, Transform};

/// Options of [`denoise`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DenoiseOptions {
    /// Remove foot skate from the result as `rigml clean` does ([`crate::data::remove_skate`]).
    pub remove_skate: bool,
    /// Below this frequency (Hz) the root path follows the clip, above it the model.
    pub root_cutoff: f64,
    /// Contact probability from which the model counts a foot joint in contact (the IK-Rig
    /// frames' contacts in [`Denoised::rig`]; the contacts reported are the detector's).
    pub contact_threshold: f32,
    /// Apply the model's change to the clip at its own rate ([`apply_at_rate`]) instead of
    /// interpolating the model's frames back up from [`MODEL_FPS`].
    pub at_clip_rate: bool,
}

impl Default for DenoiseOptions {
    fn default() -> Self {
        DenoiseOptions {
            remove_skate: true,
            root_cutoff: 2.0,
            contact_threshold: 0.5,
            at_clip_rate: true,
        }
    }
}

/// A denoised clip.
#[derive(Debug, Clone, PartialEq)]
pub struct Denoised {
    /// Local transforms of every joint, one per input frame.
    pub poses: Vec<Vec<Transform>>,
    /// Contacts of the left ankle, left toes, right ankle and right toes per input frame:
    /// `rigml clean`'s detector on the result ([`foot_contacts`]). Leaving train subjects out,
    /// these scored F1 0.96 / 0.91 / 0.92 / 0.74 against the clean clips' at the four noise
    /// levels of `rigml eval-motion`, the model's own contacts 0.67 at every level
    /// (docs/experiments/2026-12-07-contacts-in-seconds.md).
    pub contacts: Vec<[bool; CONTACTS]>,
    /// The IK-Rig frames decoded (at the clip's rate; their contacts the model's own).
    pub rig: RigClip,
}

/// Zero-phase low-pass of a series at the model's rate (as it is when too short to filter).
fn low_pass(x: &[f64], cutoff: f64) -> Vec<f64> {
    if x.len() < 8 || !(cutoff > 0.0 && cutoff < 0.5 * MODEL_FPS as f64) {
        return x.to_vec();
    }
    let sections = butterworth(2, cutoff, MODEL_FPS as f64);
    filtfilt(&sections, x, (MODEL_FPS as f64 / cutoff).round() as usize)
}

/// `clip + model − low_pass(model)`, with the clip's slow part low-passed too.
fn complement(clip: &[f64], model: &[f64], cutoff: f64) -> Vec<f64> {
    let (a, b) = (low_pass(clip, cutoff), low_pass(model, cutoff));
    (0..model.len()).map(|i| a[i] + model[i] - b[i]).collect()
}

/// Unwrapped heading angles of ground forwards.
fn headings(frames: &[RigFrame]) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::with_capacity(frames.len());
    for f in frames {
        let a = f.forward.x.atan2(f.forward.y) as f64;
        let a = match out.last() {
            Some(&p) => p + (a - p + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI,
            None => a,
        };
        out.push(a);
    }
    out
}

/// The model's frames for `input` (frames at the model's rate, with their noise `evidence` for a
/// model that reads it), the root path mixed with the input's as the module says.
pub fn correct(
    model: &MotionModel,
    input: &[RigFrame],
    evidence: Option<&[[f32; FEATURES]]>,
    options: &DenoiseOptions,
) -> Vec<RigFrame> {
    if input.is_empty() {
        return Vec::new();
    }
    let prediction = model.predict(&to_vectors(input), &vec![true; input.len()], evidence);
    let contacts: Vec<[bool; CONTACTS]> = prediction
        .contacts
        .iter()
        .map(|p| p.map(|c| c >= options.contact_threshold))
        .collect();
    let mut out = from_vectors(&input[0], &prediction.vectors, &contacts);
    let series = |frames: &[RigFrame], k: usize| frames.iter().map(|f| f.origin[k] as f64).collect::<Vec<_>>();
    let x = complement(&series(input, 0), &series(&out, 0), options.root_cutoff);
    let z = complement(&series(input, 1), &series(&out, 1), options.root_cutoff);
    let yaw = complement(&headings(input), &headings(&out), options.root_cutoff);
    for (i, f) in out.iter_mut().enumerate() {
        f.origin = Vec2::new(x[i] as f32, z[i] as f32);
        f.forward = Vec2::new(yaw[i].sin() as f32, yaw[i].cos() as f32);
    }
    out
}

/// Denoise `frames` (a clip of `source`'s skeleton at its own rate) with `model`.
pub fn denoise(
    model: &MotionModel,
    source: &Source,
    frames: &Frames,
    options: &DenoiseOptions,
) -> Result<Denoised, MotionError> {
    let n = frames.poses.len();
    if n < 2 {
        return Err(MotionError::Clip {
            clip: source.name.clone(),
            problem: "has fewer than two frames; there is nothing to denoise".into(),
        });
    }
    let smoothed = prefilter(source, frames)?;
    let encoded = encode(&source.skeleton, &source.info, &smoothed, &source.name).frames;
    let low = to_model_rate(&encoded, frames.fps);
    let evidence = model.evidence.then(|| {
        let raw = encode(&source.skeleton, &source.info, frames, &source.name).frames;
        noise_evidence(&raw, &encoded, frames.fps, low.len())
    });
    let corrected = correct(model, &low, evidence.as_deref(), options);
    let native = if options.at_clip_rate && low.len() < n {
        apply_at_rate(&encoded, &low, &corrected, frames.fps)
    } else {
        interpolate(&corrected, MODEL_FPS, frames.fps, n)
    };
    let rig = RigClip {
        name: source.name.clone(),
        fps: frames.fps,
        times: frames.times.iter().map(|t| t - frames.times[0]).collect(),
        frames: native,
    };
    let base: Vec<Vec<Transform>> = smoothed.poses.iter().map(|p| p.local.clone()).collect();
    let result = Frames {
        fps: frames.fps,
        times: frames.times.clone(),
        poses: decode_on_skeleton(source, &rig, &base, options.remove_skate)?
            .into_iter()
            .map(|local| Pose { local })
            .collect(),
    };
    Ok(Denoised {
        contacts: foot_contacts(source, &result),
        poses: result.poses.into_iter().map(|p| p.local).collect(),
        rig,
    })
}
