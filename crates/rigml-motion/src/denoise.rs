//! Cleaning a clip with the motion model: smooth it ([`crate::data::prefilter`]), encode it in
//! IK-Rig space, bring it to the model's rate (with what smoothing took away, for a model that
//! reads it: [`crate::evidence`]), let the model correct every frame and say where
//! the feet touch the ground, apply its change at the clip's own rate
//! ([`crate::features::apply_at_rate`]), decode onto the same skeleton and remove foot skate as
//! `rigml clean` does ([`crate::data::decode_on_skeleton`]; where the input's feet shake hard,
//! at the contacts of foot tracks smoothed first), and report the contacts the detector finds
//! on the result ([`crate::data::foot_contacts`]).
//!
//! A blending model ([`MotionModel::blend`], the built-in denoising model) does not correct
//! the frames: it says per feature and moment how much of what the prefilter took away to give
//! back, and the clip's raw and prefiltered IK-Rig frames are blended at the clip's own rate by
//! those shares ([`give_back`]).
//!
//! A correcting model's root motion is a velocity; integrated over a long clip its small errors would
//! add up. So the root path (ground position and heading) keeps the clip's own slow movement
//! (below [`DenoiseOptions::root_cutoff`]) and takes only the faster part from the model: a
//! complementary filter.

use crate::data::{contact_cutoff, decode_on_skeleton, foot_contacts, foot_shake, prefilter, Source};
use crate::evidence::noise_evidence;
use crate::features::{
    apply_at_rate, from_vector, from_vectors, interpolate, to_model_rate, to_vectors, CONTACTS, FEATURES, MODEL_FPS,
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
    /// `rigml clean`'s detector on the result ([`foot_contacts`]), whose skate removal pinned
    /// the feet at the contacts of foot tracks low-passed first where the input's feet shake
    /// hard ([`contact_cutoff`] of the input's [`foot_shake`]). Leaving train subjects out,
    /// these scored F1 0.97 / 0.91 / 0.93 / 0.86 against the clean clips' at the four noise
    /// levels of `rigml eval-motion`, the model's own contacts 0.67 at every level
    /// (docs/experiments/2026-12-07-contacts-in-seconds.md,
    /// 2026-12-07-contacts-of-shaking-feet.md).
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

/// A blending model's result at the clip's rate: `filtered + β (raw − filtered)` per feature,
/// `β` (`keep`, per model frame) interpolated to each clip frame's time. The root is blended
/// where it is, not through its velocity: ground position by the mean share of the two
/// velocity features, heading by the turn's share along the shorter way (integrating blended
/// velocities turned a capture's frame-to-frame heading flips into drift).
pub fn give_back(filtered: &[RigFrame], raw: &[RigFrame], keep: &[[f32; FEATURES]], fps: f32) -> Vec<RigFrame> {
    let n = filtered.len().min(raw.len());
    if n == 0 || keep.is_empty() {
        return filtered.to_vec();
    }
    let (f, r) = (to_vectors(&filtered[..n]), to_vectors(&raw[..n]));
    let last = keep.len() - 1;
    (0..n)
        .map(|t| {
            let x = t as f32 * MODEL_FPS / fps;
            let i = (x.floor() as usize).min(last);
            let j = (i + 1).min(last);
            let a = (x - i as f32).clamp(0.0, 1.0);
            let beta = |k: usize| keep[i][k] + (keep[j][k] - keep[i][k]) * a;
            let v: [f32; FEATURES] = std::array::from_fn(|k| f[t][k] + beta(k) * (r[t][k] - f[t][k]));
            let mut frame = from_vector(None, &v, filtered[t].contacts);
            let (fo, ro) = (&filtered[t], &raw[t]);
            frame.origin = fo.origin + (ro.origin - fo.origin) * (0.5 * (beta(0) + beta(1)));
            let (yf, yr) = (fo.forward.x.atan2(fo.forward.y), ro.forward.x.atan2(ro.forward.y));
            let turn = (yr - yf + std::f32::consts::PI).rem_euclid(std::f32::consts::TAU) - std::f32::consts::PI;
            let yaw = yf + beta(2) * turn;
            frame.forward = Vec2::new(yaw.sin(), yaw.cos());
            frame
        })
        .collect()
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
    let raw = model
        .evidence
        .then(|| encode(&source.skeleton, &source.info, frames, &source.name).frames);
    let evidence = raw
        .as_ref()
        .map(|raw| noise_evidence(raw, &encoded, frames.fps, low.len()));
    let kept = evidence
        .as_ref()
        .and_then(|e| model.keep(&to_vectors(&low), e))
        .zip(raw.as_ref());
    let native = match kept {
        Some((keep, raw)) => give_back(&encoded, raw, &keep, frames.fps),
        None => {
            let corrected = correct(model, &low, evidence.as_deref(), options);
            if options.at_clip_rate && low.len() < n {
                apply_at_rate(&encoded, &low, &corrected, frames.fps)
            } else {
                interpolate(&corrected, MODEL_FPS, frames.fps, n)
            }
        }
    };
    let rig = RigClip {
        name: source.name.clone(),
        fps: frames.fps,
        times: frames.times.iter().map(|t| t - frames.times[0]).collect(),
        frames: native,
    };
    let base: Vec<Vec<Transform>> = smoothed.poses.iter().map(|p| p.local.clone()).collect();
    // Where the clip's feet shake hard, skate removal pins at the contacts of foot tracks
    // smoothed first (docs/experiments/2026-12-07-contacts-of-shaking-feet.md).
    let cutoff = contact_cutoff(foot_shake(source, frames));
    let result = Frames {
        fps: frames.fps,
        times: frames.times.clone(),
        poses: decode_on_skeleton(source, &rig, &base, options.remove_skate, cutoff)?
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::tests::frame;

    fn close(a: &RigFrame, b: &RigFrame) -> bool {
        let (va, vb) = (to_vectors(std::slice::from_ref(a)), to_vectors(std::slice::from_ref(b)));
        va[0][3..].iter().zip(&vb[0][3..]).all(|(x, y)| (x - y).abs() < 1e-4)
            && a.origin.distance(b.origin) < 1e-4
            && a.forward.distance(b.forward) < 1e-4
    }

    /// Keeping none of the residual gives the filtered clip, all of it the raw one, frame for
    /// frame; half of it lies between, also for the root, whose heading is blended the short
    /// way round even where the two headings lie on either side of ±180°.
    #[test]
    fn giving_back_none_all_or_half_of_the_residual() {
        let filtered: Vec<RigFrame> = (0..40).map(|i| frame(0.05 * i as f32)).collect();
        let mut raw: Vec<RigFrame> = (0..40)
            .map(|i| frame(0.05 * i as f32 + if i % 2 == 0 { 0.04 } else { -0.03 }))
            .collect();
        let fps = 120.0;
        let count = 10;
        let none = give_back(&filtered, &raw, &vec![[0.0; FEATURES]; count], fps);
        let all = give_back(&filtered, &raw, &vec![[1.0; FEATURES]; count], fps);
        for t in 0..40 {
            assert!(close(&none[t], &filtered[t]), "frame {t} (none)");
            assert!(close(&all[t], &raw[t]), "frame {t} (all)");
        }
        // Headings at +179° and −179°: half way is ±180°, not 0°.
        let a = 179f32.to_radians();
        let mut f2 = filtered.clone();
        f2[5].forward = Vec2::new(a.sin(), a.cos());
        raw[5].forward = Vec2::new((-a).sin(), (-a).cos());
        let half = give_back(&f2, &raw, &vec![[0.5; FEATURES]; count], fps);
        assert!(
            (half[5].forward - Vec2::new(0.0, -1.0)).length() < 1e-3,
            "{:?}",
            half[5].forward
        );
        let mid = 0.5 * (f2[7].origin + raw[7].origin);
        assert!(half[7].origin.distance(mid) < 1e-5);
        assert_eq!(give_back(&filtered, &raw, &[], fps), filtered);
    }
}
