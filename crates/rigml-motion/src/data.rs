//! Clips made into what the model trains on: each humanoid clip encoded in IK-Rig space at
//! [`MODEL_FPS`](crate::features::MODEL_FPS) (clean), with damaged copies ([`crate::noise`])
//! encoded the same way, and the left-right mirror of both.

use crate::evidence::noise_evidence;
use crate::features::{mirror, model_frame_window, to_model_rate, to_vectors, CONTACTS, FEATURES};
use crate::noise::{corrupt, Noise};
use crate::MotionError;
use glam::Vec3;
use rayon::prelude::*;
use rigml_anim::cleanup::contacts::{self, ContactParams};
use rigml_anim::cleanup::footskate::remove_footskate;
use rigml_anim::cleanup::{self, Filter, FootskateOptions, Leg, StepLimits};
use rigml_anim::decode::{decode_onto, DecodeOptions};
use rigml_anim::encode::{encode, RigClip, RigFrame};
use rigml_anim::humanoid::Role;
use rigml_anim::rig::{sample_frames, Frames, RigInfo};
use rigml_core::{Clip, Pose, Skeleton, Transform};

/// A humanoid clip on its skeleton.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub skeleton: Skeleton,
    pub clip: Clip,
    pub info: RigInfo,
}

impl Source {
    /// The clip's frames at its own rate.
    pub fn frames(&self) -> Result<Frames, MotionError> {
        sample_frames(&self.skeleton, &self.clip, &self.name).map_err(MotionError::from)
    }
}

/// The IK-Rig frames of `frames` at [`MODEL_FPS`](crate::features::MODEL_FPS), their contacts
/// those of [`foot_contacts`]: the targets the model learns and is scored against.
pub fn model_frames(source: &Source, frames: &Frames) -> Vec<RigFrame> {
    to_model_rate(&labelled_frames(source, frames), frames.fps)
}

/// `frames` encoded at their own rate, each with the detector's contacts
/// ([`foot_contacts`]): what [`model_frames`] brings to the model's rate.
fn labelled_frames(source: &Source, frames: &Frames) -> Vec<RigFrame> {
    let mut encoded = encode(&source.skeleton, &source.info, frames, &source.name).frames;
    for (frame, c) in encoded.iter_mut().zip(foot_contacts(source, frames)) {
        frame.contacts = c;
    }
    encoded
}

/// `poses` (a decoded clip of `source`'s skeleton at `fps`) with foot skate removed as `rigml
/// clean` removes it after filtering (docs/ALGORITHMS.md §8 step 4: contacts found on the poses
/// themselves, ankles pinned horizontally at their stillest point, leg IK, blends in and out).
///
/// The model's output is decoded without the IK-Rig decoder's pinning and cleaned this way
/// instead. Measured on val (10 clips, `rigml eval-motion`): the decoder's pins moved joints by
/// 2.9 % of leg on clean clips where this moves them by 1.0 %, and left more skate (0.013 against
/// 0.0013 H/s); pinning at the model's contacts instead of the detector's gave the same joint
/// error and skate of 0.014 H/s (docs/experiments/2026-11-27-motion-model.md).
/// With `contact_cutoff`, contacts are found on foot tracks low-passed at that cutoff
/// ([`contact_cutoff`]; [`FootskateOptions::contact_cutoff`]).
pub fn remove_skate(
    source: &Source,
    poses: Vec<Vec<Transform>>,
    fps: f32,
    contact_cutoff: Option<f64>,
) -> Result<Vec<Vec<Transform>>, MotionError> {
    let bad = |e: cleanup::CleanupError| MotionError::Clip {
        clip: source.name.clone(),
        problem: e.to_string(),
    };
    let legs = Leg::from_humanoid(&source.info.map, &source.skeleton).map_err(bad)?;
    let mut frames = cleanup::Frames { fps, start: 0.0, poses };
    remove_footskate(
        &source.skeleton,
        &mut frames,
        &legs,
        source.info.hip_height,
        &FootskateOptions {
            contact_cutoff,
            ..FootskateOptions::default()
        },
    )
    .map_err(bad)?;
    Ok(frames.poses)
}

/// `rig` decoded onto `source`'s skeleton starting from `base` (joints outside the IK-Rig chains
/// keep those rotations) without the decoder's foot pins, then, with `skate`, foot skate removed
/// by [`remove_skate`] (its contacts on foot tracks low-passed at `contact_cutoff`, if any): how
/// cleaned clips and in-betweens reach the skeleton.
pub fn decode_on_skeleton(
    source: &Source,
    rig: &RigClip,
    base: &[Vec<Transform>],
    skate: bool,
    contact_cutoff: Option<f64>,
) -> Result<Vec<Vec<Transform>>, MotionError> {
    let options = DecodeOptions {
        pin_feet: false,
        ..DecodeOptions::default()
    };
    let poses = decode_onto(&source.skeleton, &source.info, rig, options, base);
    if skate {
        remove_skate(source, poses, rig.fps, contact_cutoff)
    } else {
        Ok(poses)
    }
}

/// The tracks of the left ankle, left toes, right ankle and right toes of `frames` in the
/// skeleton's canonical frame (none for a joint the map lacks): what [`foot_contacts`] reads.
pub fn foot_tracks(source: &Source, frames: &Frames) -> [Option<Vec<Vec3>>; CONTACTS] {
    let facing_inv = source.info.facing.inverse();
    let slots = [Role::LeftFoot, Role::LeftToes, Role::RightFoot, Role::RightToes];
    let joints: Vec<Option<usize>> = slots.iter().map(|&r| source.info.map.joint(r)).collect();
    let mut tracks: [Option<Vec<Vec3>>; CONTACTS] = std::array::from_fn(|k| joints[k].map(|_| Vec::new()));
    for pose in &frames.poses {
        let world = source.skeleton.world_matrices(&pose.local);
        for (k, j) in joints.iter().enumerate() {
            if let (Some(m), Some(t)) = (j.and_then(|j| world.get(j)), tracks[k].as_mut()) {
                t.push(facing_inv * m.w_axis.truncate());
            }
        }
    }
    tracks.map(|t| t.filter(|t| t.len() == frames.poses.len()))
}

/// Contacts of the left ankle, left toes, right ankle and right toes at every frame, by
/// `rigml clean`'s detector (docs/ALGORITHMS.md §8: each joint's height above its own floor
/// and its horizontal speed, with hysteresis, default thresholds) in the skeleton's canonical
/// frame. The model learns these and is scored against them: unlike the IK-Rig encoder's rule
/// (heights above a ground guessed from the rest pose), they do not depend on where the capture
/// put the floor.
pub fn foot_contacts(source: &Source, frames: &Frames) -> Vec<[bool; CONTACTS]> {
    let mut out = vec![[false; CONTACTS]; frames.poses.len()];
    let params = ContactParams::default();
    for (k, track) in foot_tracks(source, frames).iter().enumerate() {
        let Some(track) = track else { continue };
        for (f, c) in contacts::detect(track, source.info.hip_height, frames.fps, &params)
            .into_iter()
            .enumerate()
        {
            out[f][k] = c;
        }
    }
    out
}

/// How much the feet of `frames` shake: the root mean square distance of every foot track
/// ([`foot_tracks`]) from its own 6 Hz low-pass, in hip heights. Clean capture at 120 fps
/// shakes 0.004–0.03 (a run's pounding feet the most), `rigml eval-motion`'s damage levels
/// about 0.04, 0.08 and 0.15. Zero for a clip too short or slow to filter.
pub fn foot_shake(source: &Source, frames: &Frames) -> f32 {
    let filter = Filter::Butterworth { cutoff: 6.0, order: 2 };
    let (mut sum, mut count) = (0.0f64, 0usize);
    for track in foot_tracks(source, frames).iter().flatten() {
        let Ok(smooth) = filter.apply_vec3(track, frames.fps as f64) else {
            continue;
        };
        for (a, b) in track.iter().zip(&smooth) {
            let d = (a.distance(*b) / source.info.hip_height) as f64;
            sum += d * d;
            count += 1;
        }
    }
    if count == 0 || !sum.is_finite() {
        return 0.0;
    }
    (sum / count as f64).sqrt() as f32
}

/// The cutoff (Hz) at which to low-pass the foot tracks before skate removal finds the contacts
/// to pin at ([`remove_skate`]), for feet that shake `shake` ([`foot_shake`], of the clip as
/// captured): none up to 0.1 hip heights, 3 Hz above. The detector's speed test (0.5 H/s over
/// 1/15 s) reads the shake left in a heavily damaged clip as motion and breaks contacts apart;
/// smoothing clean capture the same way would blur where its contacts start and end. The
/// threshold lies between the shake of `rigml eval-motion`'s level 2 and level 3; chosen by
/// leaving train subjects out among one- and two-step rules
/// (docs/experiments/2026-12-07-contacts-of-shaking-feet.md).
pub fn contact_cutoff(shake: f32) -> Option<f64> {
    (shake > 0.1).then_some(3.0)
}

/// Frames × slots where a method's contact flags agree or disagree with the truth's: the counts
/// an F1 is made of. Summed over clips they give the pooled F1 of a whole split, in which every
/// contact frame counts once; the mean of per-clip F1s instead gives a clip whose truth holds a
/// dozen contact frames (a run the detector finds one brief stance in) as much weight as a long
/// walk, and scores it 0 for missing them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContactCounts {
    /// Contact in both.
    pub hits: u64,
    /// Contact found where the truth has none.
    pub false_alarms: u64,
    /// Truth's contact not found.
    pub misses: u64,
}

impl ContactCounts {
    /// The counts of `predicted` against `truth` over every frame both have and every slot.
    pub fn of(predicted: &[[bool; CONTACTS]], truth: &[[bool; CONTACTS]]) -> ContactCounts {
        let mut c = ContactCounts::default();
        for (p, t) in predicted.iter().zip(truth) {
            for s in 0..CONTACTS {
                match (p[s], t[s]) {
                    (true, true) => c.hits += 1,
                    (true, false) => c.false_alarms += 1,
                    (false, true) => c.misses += 1,
                    _ => {}
                }
            }
        }
        c
    }

    /// F1 of these counts: `2 hits / (2 hits + false alarms + misses)`, 1 when there is no
    /// contact in either.
    pub fn f1(&self) -> f64 {
        let (tp, wrong) = (self.hits as f64, (self.false_alarms + self.misses) as f64);
        if tp + wrong == 0.0 {
            1.0
        } else {
            2.0 * tp / (2.0 * tp + wrong)
        }
    }
}

impl std::ops::AddAssign for ContactCounts {
    fn add_assign(&mut self, other: ContactCounts) {
        self.hits += other.hits;
        self.false_alarms += other.false_alarms;
        self.misses += other.misses;
    }
}

/// F1 of `predicted` against `truth` contact flags over every frame and slot (1 when neither
/// has a contact): the per-clip score `rigml eval-motion` averages (METRICS.md §10).
pub fn contact_f1(predicted: &[[bool; CONTACTS]], truth: &[[bool; CONTACTS]]) -> f64 {
    ContactCounts::of(predicted, truth).f1()
}

/// Step limits that never cut a track: the prefilter smooths across everything (capture noise
/// at 120 fps trips `rigml clean`'s pose-speed limit on every frame, and then nothing would be
/// smoothed; the model undoes what smoothing should not have done).
pub const NO_CUTS: StepLimits = StepLimits {
    max_rotation_degrees: 180.0,
    max_translation: 1e6,
    max_pose_speed: 1e9,
};

/// The prefilter's cutoff (Hz): `rigml clean`'s default Butterworth.
pub const PREFILTER_CUTOFF: f64 = 6.0;

/// What the model reads is first smoothed: every joint's rotation and translation track through
/// a zero-phase Butterworth (order 2, [`PREFILTER_CUTOFF`], no step limits), so that the model
/// corrects the filter's result (what smoothing left or smeared: spikes, dropped frames, sliding
/// feet) and finds contacts, rather than averaging white noise itself; a blending model
/// ([`crate::MotionModel::blend`]) says how much of the smoothing to undo. A clip slower than
/// 2.2 × the cutoff is returned as it is.
pub fn prefilter(source: &Source, frames: &Frames) -> Result<Frames, MotionError> {
    if f64::from(frames.fps) < 2.2 * PREFILTER_CUTOFF || frames.poses.len() < 4 {
        return Ok(frames.clone());
    }
    let mut f = cleanup::Frames::from_sampled(frames);
    let joints: Vec<usize> = (0..source.skeleton.joint_count()).collect();
    let filter = Filter::Butterworth {
        cutoff: PREFILTER_CUTOFF,
        order: 2,
    };
    f.filter(&source.skeleton, &filter, &joints, source.info.hip_height, &NO_CUTS)
        .map_err(|e| MotionError::Clip {
            clip: source.name.clone(),
            problem: e.to_string(),
        })?;
    Ok(Frames {
        fps: frames.fps,
        times: frames.times.clone(),
        poses: f.poses.into_iter().map(|local| Pose { local }).collect(),
    })
}

/// One clip ready for training: clean vectors and contacts, and damaged versions of the same
/// frames (each as long as the clean one).
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub name: String,
    pub clean: Vec<[f32; FEATURES]>,
    pub contacts: Vec<[bool; CONTACTS]>,
    pub noisy: Vec<Vec<[f32; FEATURES]>>,
    /// The noise evidence of each damaged copy ([`noise_evidence`]: what the prefilter took
    /// away, per model frame and feature).
    pub evidence: Vec<Vec<[f32; FEATURES]>>,
    /// For a blending model only ([`prepare_with`]; else empty): per damaged copy, model frame
    /// and feature, what keeping a share of the prefilter's residual costs ([`blend_terms`]).
    pub blend: Vec<Vec<[f32; 3 * FEATURES]>>,
}

impl Prepared {
    /// Whether every number of it (clean and damaged vectors, noise evidence, blend terms) is
    /// finite.
    pub fn is_finite(&self) -> bool {
        fn all<const N: usize>(frames: &[[f32; N]]) -> bool {
            frames.iter().all(|v| v.iter().all(|x| x.is_finite()))
        }
        all(&self.clean)
            && self.noisy.iter().all(|n| all(n))
            && self.evidence.iter().all(|e| all(e))
            && self.blend.iter().all(|b| all(b))
    }

    pub fn len(&self) -> usize {
        self.clean.len()
    }

    pub fn is_empty(&self) -> bool {
        self.clean.is_empty()
    }
}

/// Prepare `sources` with `variants` damaged copies each (random [`Noise`], seeded by `seed` and
/// the clip's index; each copy then [`prefilter`]ed, as the model's input always is, and its
/// noise evidence kept), plus the mirror of every clip and copy when `mirrored`.
pub fn prepare(sources: &[Source], variants: usize, seed: u64, mirrored: bool) -> Result<Vec<Prepared>, MotionError> {
    prepare_with(sources, variants, seed, mirrored, false)
}

/// [`prepare`], with each damaged copy's [`Prepared::blend`] terms when `blend` (for a blending
/// model, [`crate::MotionModel::blend`]).
pub fn prepare_with(
    sources: &[Source],
    variants: usize,
    seed: u64,
    mirrored: bool,
    blend: bool,
) -> Result<Vec<Prepared>, MotionError> {
    let per_clip: Vec<Vec<Prepared>> = sources
        .par_iter()
        .enumerate()
        .map(|(i, source)| {
            prepare_one(
                source,
                variants,
                seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
                mirrored,
                blend,
            )
        })
        .collect::<Result<_, _>>()?;
    Ok(per_clip.into_iter().flatten().collect())
}

/// Per model frame (`count` of them) and feature `k`, the three numbers that give the error of
/// keeping a share `β` of the prefilter's residual at the clip's rate: over the clip frames that
/// make the model frame ([`model_frame_window`]), with `r = raw − filtered` and
/// `e = filtered − clean`, `A = mean r²` (slot `k`), `B = mean r·e` (slot `FEATURES + k`) and
/// `C = mean e²` (slot `2 · FEATURES + k`), so that
/// `mean (filtered + β r − clean)² = A β² + 2 B β + C`. A blending model is trained on these at
/// the clip's rate although it runs at [`crate::features::MODEL_FPS`]: what the prefilter
/// removed above the model's rate (most of white jitter) counts.
pub fn blend_terms(
    raw: &[RigFrame],
    filtered: &[RigFrame],
    clean: &[RigFrame],
    fps: f32,
    count: usize,
) -> Vec<[f32; 3 * FEATURES]> {
    let n = raw.len().min(filtered.len()).min(clean.len());
    if n == 0 {
        return vec![[0.0; 3 * FEATURES]; count];
    }
    let (r, f, c) = (
        to_vectors(&raw[..n]),
        to_vectors(&filtered[..n]),
        to_vectors(&clean[..n]),
    );
    (0..count)
        .map(|i| {
            let window = model_frame_window(i, n, fps);
            let m = window.len() as f32;
            let mut out = [0.0f32; 3 * FEATURES];
            for t in window {
                for k in 0..FEATURES {
                    let (rk, ek) = (r[t][k] - f[t][k], f[t][k] - c[t][k]);
                    out[k] += rk * rk / m;
                    out[FEATURES + k] += rk * ek / m;
                    out[2 * FEATURES + k] += ek * ek / m;
                }
            }
            out
        })
        .collect()
}

fn prepare_one(
    source: &Source,
    variants: usize,
    seed: u64,
    mirrored: bool,
    blend: bool,
) -> Result<Vec<Prepared>, MotionError> {
    let frames = source.frames()?;
    let labelled = labelled_frames(source, &frames);
    let clean = to_model_rate(&labelled, frames.fps);
    // The clean clip at its own rate: what a blending model's error is measured against.
    let clean_native = if blend { labelled } else { Vec::new() };
    let up = source.info.facing * Vec3::Y;
    let h = source.info.hip_height;
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed);
    let noises: Vec<Noise> = (0..variants).map(|_| Noise::random(&mut rng)).collect();
    // Each damaged copy as the model reads it (prefiltered, at its rate) and, at the clip's
    // rate, unsmoothed and prefiltered (for the noise evidence and its mirror).
    let damaged: Vec<(Vec<RigFrame>, Vec<RigFrame>, Vec<RigFrame>)> = noises
        .iter()
        .enumerate()
        .map(|(v, noise)| {
            let mut damaged = frames.clone();
            corrupt(
                &source.skeleton,
                &mut damaged.poses,
                frames.fps,
                up,
                h,
                noise,
                seed.wrapping_add(v as u64 + 1),
            );
            let raw = encode(&source.skeleton, &source.info, &damaged, &source.name).frames;
            let filtered = encode(
                &source.skeleton,
                &source.info,
                &prefilter(source, &damaged)?,
                &source.name,
            )
            .frames;
            let mut out = to_model_rate(&filtered, frames.fps);
            out.truncate(clean.len());
            while out.len() < clean.len() {
                out.push(*out.last().unwrap_or(&clean[out.len()]));
            }
            Ok((out, raw, filtered))
        })
        .collect::<Result<_, MotionError>>()?;
    let fps = frames.fps;
    type Copy = (Vec<RigFrame>, Vec<RigFrame>, Vec<RigFrame>);
    let make = |name: String, clean: &[RigFrame], clean_native: &[RigFrame], damaged: &[Copy]| Prepared {
        name,
        clean: to_vectors(clean),
        contacts: clean.iter().map(|f| f.contacts).collect(),
        noisy: damaged.iter().map(|d| to_vectors(&d.0)).collect(),
        evidence: damaged
            .iter()
            .map(|d| noise_evidence(&d.1, &d.2, fps, clean.len()))
            .collect(),
        blend: if blend {
            damaged
                .iter()
                .map(|d| blend_terms(&d.1, &d.2, clean_native, fps, clean.len()))
                .collect()
        } else {
            Vec::new()
        },
    };
    let mut out = vec![make(source.name.clone(), &clean, &clean_native, &damaged)];
    if mirrored {
        let m = |frames: &[RigFrame]| frames.iter().map(mirror).collect::<Vec<_>>();
        let damaged_m: Vec<_> = damaged.iter().map(|d| (m(&d.0), m(&d.1), m(&d.2))).collect();
        out.push(make(
            format!("{} (mirrored)", source.name),
            &m(&clean),
            &m(&clean_native),
            &damaged_m,
        ));
    }
    Ok(out)
}

/// Smallest spread a feature is normalised by (hip heights, or 6D rotation components: ~1°).
/// Clean capture barely moves some features (the clavicles and toes: spreads of 0.003–0.007 on
/// the train clips); dividing by that made a 2° jitter on them ten spreads, so those few
/// numbers weighed most in the loss.
pub const MIN_SPREAD: f32 = 0.02;

/// Per-feature mean and standard deviation of the clean vectors (the spread floored at
/// `min_spread`, [`MIN_SPREAD`] by default).
pub fn statistics(data: &[Prepared], min_spread: f32) -> (Vec<f32>, Vec<f32>) {
    let mut sum = vec![0.0f64; FEATURES];
    let mut sq = vec![0.0f64; FEATURES];
    let mut n = 0.0f64;
    for p in data {
        for v in &p.clean {
            for (k, &x) in v.iter().enumerate() {
                sum[k] += x as f64;
                sq[k] += (x as f64) * (x as f64);
            }
            n += 1.0;
        }
    }
    let n = n.max(1.0);
    let mean: Vec<f32> = sum.iter().map(|s| (s / n) as f32).collect();
    let std: Vec<f32> = sq
        .iter()
        .zip(&sum)
        .map(|(q, s)| ((q / n - (s / n) * (s / n)).max(0.0).sqrt() as f32).max(min_spread))
        .collect();
    (mean, std)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::tests::frame;

    /// Pooled counts weigh every contact frame once: a long walk found well and a run whose
    /// dozen truth contact frames are missed pool to a high F1, while their per-clip F1s
    /// average to about half.
    #[test]
    fn pooled_contact_counts_weigh_every_frame_once() {
        let flags = |on: &[bool]| -> Vec<[bool; CONTACTS]> { on.iter().map(|&b| [b, false, b, false]).collect() };
        let walk_truth: Vec<bool> = (0..1000).map(|f| f % 100 < 60).collect();
        let walk_found: Vec<bool> = (0..1000).map(|f| f % 100 < 58).collect();
        let run_truth: Vec<bool> = (0..600).map(|f| (300..306).contains(&f)).collect();
        let run_found = vec![false; 600];
        let walk = ContactCounts::of(&flags(&walk_found), &flags(&walk_truth));
        let run = ContactCounts::of(&flags(&run_found), &flags(&run_truth));
        assert_eq!(
            walk,
            ContactCounts {
                hits: 1160,
                false_alarms: 0,
                misses: 40
            }
        );
        assert_eq!(
            run,
            ContactCounts {
                hits: 0,
                false_alarms: 0,
                misses: 12
            }
        );
        assert_eq!(run.f1(), 0.0);
        let mut pooled = walk;
        pooled += run;
        assert!((pooled.f1() - 2320.0 / 2372.0).abs() < 1e-12);
        let mean = 0.5 * (walk.f1() + run.f1());
        assert!(mean < 0.5 && pooled.f1() > 0.97, "{mean} {}", pooled.f1());
        // No contact in either: agreement.
        assert_eq!(ContactCounts::of(&flags(&run_found), &flags(&run_found)).f1(), 1.0);
        assert_eq!(contact_f1(&flags(&walk_found), &flags(&walk_truth)), walk.f1());
    }

    /// `A β² + 2 B β + C` is the mean squared error of keeping a share β of the residual, over
    /// the clip frames that make each model frame.
    #[test]
    fn blend_terms_give_the_error_of_any_share() {
        let clean: Vec<RigFrame> = (0..40).map(|i| frame(0.05 * i as f32)).collect();
        let filtered: Vec<RigFrame> = (0..40).map(|i| frame(0.05 * i as f32 + 0.01)).collect();
        let raw: Vec<RigFrame> = (0..40)
            .map(|i| frame(0.05 * i as f32 + if i % 2 == 0 { 0.03 } else { -0.02 }))
            .collect();
        let fps = 120.0;
        let count = 10;
        let terms = blend_terms(&raw, &filtered, &clean, fps, count);
        let (r, f, c) = (to_vectors(&raw), to_vectors(&filtered), to_vectors(&clean));
        for (i, t) in terms.iter().enumerate() {
            let window = model_frame_window(i, 40, fps);
            for k in [4, 20, 100] {
                for beta in [0.0f32, 0.3, 1.0] {
                    let direct = window
                        .clone()
                        .map(|x| (f[x][k] + beta * (r[x][k] - f[x][k]) - c[x][k]).powi(2))
                        .sum::<f32>()
                        / window.len() as f32;
                    let from_terms = t[k] * beta * beta + 2.0 * t[FEATURES + k] * beta + t[2 * FEATURES + k];
                    assert!(
                        (direct - from_terms).abs() < 1e-5 * (1.0 + direct),
                        "frame {i} feature {k}: {direct} vs {from_terms}"
                    );
                }
            }
        }
        assert_eq!(blend_terms(&[], &[], &[], fps, 3), vec![[0.0; 3 * FEATURES]; 3]);
    }
}
