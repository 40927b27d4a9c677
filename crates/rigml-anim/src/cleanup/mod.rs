//! Mocap cleanup (docs/ALGORITHMS.md §8): smoothing filters on joint rotation and translation
//! tracks, foot-contact detection with hysteresis, and foot-skate removal by pinning contacts
//! and solving two-bone leg IK.
//!
//! The pipeline ([`clean`]) bakes a clip to uniform frames ([`Frames`]), filters every animated
//! track, detects contacts on the filtered motion, pins the feet, and writes a clip with the
//! same channels (one linear key per frame) back.

pub mod contacts;
pub mod filters;
pub mod footskate;
pub mod synthetic;

pub use contacts::{ContactParams, FootContacts};
pub use filters::Filter;
pub use footskate::{Footskate, FootskateOptions, Leg, LegReport};

use glam::{Quat, Vec3};
use rayon::prelude::*;
use rigml_core::{Channel, ChannelValues, Clip, Interpolation, Skeleton, Transform};

/// What can go wrong while cleaning a clip.
#[derive(Debug, thiserror::Error)]
pub enum CleanupError {
    /// A filter or contact parameter out of range.
    #[error("invalid parameter: {0}")]
    Parameter(String),
    /// The clip cannot be baked to frames (no keys, bogus key times, a channel on a missing joint).
    #[error("clip {clip:?}: {problem}")]
    Clip { clip: String, problem: String },
    /// A leg's joints are not a hip → knee → ankle → toe chain of this skeleton.
    #[error("leg {leg}: {problem}")]
    Leg { leg: String, problem: String },
}

/// Refuse to bake clips needing more frames than this (a sign of bogus key times).
pub const MAX_FRAMES: usize = 2_000_000;

/// Key intervals shorter than this (seconds) count as duplicate keys when finding the frame rate.
const MIN_FRAME_TIME: f32 = 1e-5;

/// A clip sampled at uniform frames: every joint's local transform per frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Frames {
    /// Frames per second.
    pub fps: f32,
    /// Time of frame 0 in seconds.
    pub start: f32,
    /// `poses[f][j]`: joint `j`'s local transform at frame `f`.
    pub poses: Vec<Vec<Transform>>,
}

impl Frames {
    /// Sample `clip` at its own frame rate: the smallest key interval of any channel (exactly its
    /// frames for baked mocap), from the first key to the last.
    pub fn bake(skeleton: &Skeleton, clip: &Clip) -> Result<Frames, CleanupError> {
        let bad = |problem: String| CleanupError::Clip {
            clip: clip.name.clone(),
            problem,
        };
        clip.validate(skeleton.joint_count()).map_err(|e| bad(e.to_string()))?;
        if clip.key_count() == 0 {
            return Err(bad("has no keys".into()));
        }
        let step = clip
            .channels
            .iter()
            .flat_map(|c| c.times.windows(2).map(|w| w[1] - w[0]))
            .filter(|d| *d >= MIN_FRAME_TIME)
            .fold(f32::INFINITY, f32::min);
        let (start, end) = (clip.start(), clip.duration());
        let (fps, count) = if step.is_finite() {
            let count = ((end - start) / step).round() as f64 + 1.0;
            if !(count.is_finite() && count <= MAX_FRAMES as f64) {
                return Err(bad(format!(
                    "needs more than {MAX_FRAMES} frames at its smallest key interval {step} s"
                )));
            }
            (1.0 / step, count as usize)
        } else {
            // A single key time: one frame.
            (30.0, 1)
        };
        let poses = (0..count)
            .map(|f| {
                let t = start + f as f32 / fps;
                clip.sample(skeleton, t).local
            })
            .collect();
        Ok(Frames { fps, start, poses })
    }

    /// The same frames as [`crate::rig::Frames`] (what retargeting, the IK-Rig encoder and the
    /// motion model read): one pose per frame at `start + f / fps`.
    pub fn to_sampled(&self) -> crate::rig::Frames {
        crate::rig::Frames {
            fps: self.fps,
            times: (0..self.len()).map(|f| self.start + f as f32 / self.fps).collect(),
            poses: self
                .poses
                .iter()
                .map(|l| rigml_core::Pose { local: l.clone() })
                .collect(),
        }
    }

    /// Frames sampled by [`crate::rig::sample_frames`] as uniform frames from their first time
    /// (their own frame rate; the times are not kept).
    pub fn from_sampled(frames: &crate::rig::Frames) -> Frames {
        Frames {
            fps: frames.fps,
            start: frames.times.first().copied().unwrap_or(0.0),
            poses: frames.poses.iter().map(|p| p.local.clone()).collect(),
        }
    }

    /// Number of frames.
    pub fn len(&self) -> usize {
        self.poses.len()
    }

    /// True when there are no frames.
    pub fn is_empty(&self) -> bool {
        self.poses.is_empty()
    }

    /// A clip with the channels of `template` (same joints and paths, in order), one linear key
    /// per frame taken from these poses.
    pub fn to_clip(&self, template: &Clip) -> Clip {
        let times: Vec<f32> = (0..self.len()).map(|f| self.start + f as f32 / self.fps).collect();
        let column = |j: usize| self.poses.iter().filter_map(move |p| p.get(j));
        let channels = template
            .channels
            .iter()
            .map(|c| Channel {
                joint: c.joint,
                interpolation: Interpolation::Linear,
                times: times.clone(),
                values: match c.values {
                    ChannelValues::Translation(_) => {
                        ChannelValues::Translation(column(c.joint).map(|t| t.translation).collect())
                    }
                    ChannelValues::Rotation(_) => {
                        ChannelValues::Rotation(column(c.joint).map(|t| t.rotation).collect())
                    }
                    ChannelValues::Scale(_) => ChannelValues::Scale(column(c.joint).map(|t| t.scale).collect()),
                },
            })
            .collect();
        Clip {
            name: template.name.clone(),
            channels,
        }
    }

    /// Model-space positions of every joint at every frame (`[f][j]`).
    pub fn world_positions(&self, skeleton: &Skeleton) -> Vec<Vec<Vec3>> {
        self.poses
            .iter()
            .map(|p| skeleton.world_matrices(p).iter().map(|m| m.w_axis.truncate()).collect())
            .collect()
    }

    /// Filter every rotation and translation track of the joints in `joints`, each track in
    /// pieces between its discontinuities (see [`StepLimits`]), which are returned. Translations
    /// are filtered in units of `scale` (the hip height), so the 1€ filter's `beta` and the
    /// translation step limit do not depend on the clip's units. Joints run in parallel.
    pub fn filter(
        &mut self,
        skeleton: &Skeleton,
        filter: &Filter,
        joints: &[usize],
        scale: f32,
        limits: &StepLimits,
    ) -> Result<Vec<Cut>, CleanupError> {
        let fps = f64::from(self.fps);
        filter.validate(fps)?;
        limits.validate()?;
        let scale = if scale > 0.0 && scale.is_finite() { scale } else { 1.0 };
        let max_angle = limits.max_rotation_degrees.to_radians();
        let pose_cuts = self.pose_jumps(skeleton, scale, limits.max_pose_speed);
        let poses = &self.poses;
        let results: Vec<Result<FilteredJoint, CleanupError>> = joints
            .par_iter()
            .map(|&j| {
                let rotations: Vec<Quat> = poses.iter().filter_map(|p| p.get(j)).map(|t| t.rotation).collect();
                let translations: Vec<Vec3> = poses
                    .iter()
                    .filter_map(|p| p.get(j))
                    .map(|t| t.translation / scale)
                    .collect();
                let cuts: Vec<usize> = (1..rotations.len())
                    .filter(|&f| {
                        pose_cuts.binary_search(&f).is_ok()
                            || rotations[f].angle_between(rotations[f - 1]) > max_angle
                            || translations[f].distance(translations[f - 1]) > limits.max_translation
                    })
                    .collect();
                let (mut r, mut t) = (Vec::with_capacity(rotations.len()), Vec::with_capacity(rotations.len()));
                for piece in pieces(rotations.len(), &cuts) {
                    r.extend(filter.apply_quat(&rotations[piece.clone()], fps)?);
                    t.extend(filter.apply_vec3(&translations[piece], fps)?);
                }
                Ok((j, r, t, cuts))
            })
            .collect();
        let mut cuts = Vec::new();
        for result in results {
            let (j, rotations, translations, joint_cuts) = result?;
            for ((p, r), t) in self.poses.iter_mut().zip(rotations).zip(translations) {
                if let Some(local) = p.get_mut(j) {
                    local.rotation = r;
                    local.translation = t * scale;
                }
            }
            let own = joint_cuts.into_iter().filter(|f| pose_cuts.binary_search(f).is_err());
            cuts.extend(own.map(|frame| Cut { joint: Some(j), frame }));
        }
        cuts.extend(pose_cuts.into_iter().map(|frame| Cut { joint: None, frame }));
        cuts.sort_by_key(|c| (c.frame, c.joint));
        Ok(cuts)
    }

    /// Frames (ascending) at which the whole pose jumps: the mean over joints of their speed
    /// relative to their root exceeds `max_speed` (in `scale` units per second).
    fn pose_jumps(&self, skeleton: &Skeleton, scale: f32, max_speed: f32) -> Vec<usize> {
        let positions = self.world_positions(skeleton);
        let roots: Vec<usize> = (0..skeleton.joint_count()).map(|j| root_of(skeleton, j)).collect();
        let relative = |f: usize, j: usize| -> Vec3 {
            let p = &positions[f];
            p.get(j).copied().unwrap_or(Vec3::ZERO) - p.get(roots[j]).copied().unwrap_or(Vec3::ZERO)
        };
        let n = roots.len().max(1) as f32;
        (1..positions.len())
            .filter(|&f| {
                let moved: f32 = (0..roots.len())
                    .map(|j| relative(f, j).distance(relative(f - 1, j)))
                    .sum();
                moved / n * self.fps / scale > max_speed
            })
            .collect()
    }
}

/// One joint's filtered tracks: joint, rotations, translations, frames where it was cut.
type FilteredJoint = (usize, Vec<Quat>, Vec<Vec3>, Vec<usize>);

/// The ranges `0..n` splits into at the frames `cuts` (ascending, each starting a new range).
fn pieces(n: usize, cuts: &[usize]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for &c in cuts.iter().chain(std::iter::once(&n)) {
        if c > start && c <= n {
            out.push(start..c);
            start = c;
        }
    }
    out
}

/// Per-frame steps too large to smooth across: a track is filtered in pieces between them.
///
/// A joint that turns further than this in one frame is not a motion a low-pass filter should
/// blend: it is a reference pose before the take (CMU's frame 0), a marker glitch (a thumb
/// flipping by ~180° and back), or a motion too fast for the frame rate. Smoothing across it
/// would smear the jump over the neighbouring frames; the pieces are filtered on their own and
/// the jump is kept, and reported.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepLimits {
    /// Largest rotation of one joint between consecutive frames, in degrees.
    pub max_rotation_degrees: f32,
    /// Largest translation of one joint between consecutive frames, in hip heights.
    pub max_translation: f32,
    /// Largest mean joint speed relative to the root, in hip heights per second: a faster frame
    /// is a jump of the whole pose (a T-pose reference frame) and cuts every track.
    pub max_pose_speed: f32,
}

impl Default for StepLimits {
    /// 30° and 0.25 H per frame, 10 H/s for the pose. Measured on the motion clips: joints turn
    /// at most ~10° per frame at the 99th percentile (CMU, 120 fps) and reference frames jump by
    /// 80–170°; the mean joint speed stays under 2 H/s except at the reference frames of the CMU
    /// files (20–126 H/s, over the first 1–3 frames of the Daz conversions).
    fn default() -> Self {
        StepLimits {
            max_rotation_degrees: 30.0,
            max_translation: 0.25,
            max_pose_speed: 10.0,
        }
    }
}

impl StepLimits {
    /// Check that every limit is positive and finite.
    pub fn validate(&self) -> Result<(), CleanupError> {
        let ok = |x: f32| x.is_finite() && x > 0.0;
        if ok(self.max_rotation_degrees) && ok(self.max_translation) && ok(self.max_pose_speed) {
            Ok(())
        } else {
            Err(CleanupError::Parameter(format!(
                "step limits must be positive and finite: {self:?}"
            )))
        }
    }
}

/// A discontinuity left unsmoothed: `joint` (or, for `None`, the whole pose) jumps between
/// frames `frame − 1` and `frame`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    pub joint: Option<usize>,
    pub frame: usize,
}

/// Joints with at least one rotation or translation channel in `clip`, ascending.
pub fn animated_joints(clip: &Clip) -> Vec<usize> {
    let mut joints: Vec<usize> = clip
        .channels
        .iter()
        .filter(|c| !matches!(c.values, ChannelValues::Scale(_)))
        .map(|c| c.joint)
        .collect();
    joints.sort_unstable();
    joints.dedup();
    joints
}

/// A length to scale thresholds by on skeletons that are not humanoids (no hip height `H`,
/// which [`crate::rig::RigInfo`] measures): half the largest extent of the rest pose's joints,
/// about `H` for a standing figure. 1 for an empty or pointlike skeleton.
pub fn rest_size(skeleton: &Skeleton) -> f32 {
    let rest: Vec<Vec3> = skeleton.rest_world().iter().map(|m| m.w_axis.truncate()).collect();
    let lo = rest.iter().copied().fold(Vec3::splat(f32::INFINITY), Vec3::min);
    let hi = rest.iter().copied().fold(Vec3::splat(f32::NEG_INFINITY), Vec3::max);
    let size = 0.5 * (hi - lo).max_element();
    if size.is_finite() && size > 0.0 {
        size
    } else {
        1.0
    }
}

/// The topmost ancestor of joint `j` (the hips of a BVH leg).
pub fn root_of(skeleton: &Skeleton, mut j: usize) -> usize {
    while let Some(p) = skeleton.parents.get(j).copied().flatten() {
        j = p;
    }
    j
}

/// World position tracks of the foot joints (each leg's ankle, then its toe), `[foot][f]`:
/// the feet of docs/METRICS.md §7.
pub fn foot_tracks(positions: &[Vec<Vec3>], legs: &[Leg]) -> Vec<Vec<Vec3>> {
    legs.iter()
        .flat_map(|l| std::iter::once(l.ankle).chain(l.toe))
        .map(|j| positions.iter().filter_map(|p| p.get(j).copied()).collect())
        .collect()
}

/// What [`clean`] does: a smoothing filter (none to skip) and foot-skate removal (none to skip).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CleanOptions {
    pub filter: Option<Filter>,
    /// Where the filter must not smooth across.
    pub limits: StepLimits,
    pub footskate: Option<FootskateOptions>,
}

impl Default for CleanOptions {
    /// Zero-phase Butterworth, order 2 at 6 Hz (the common body-motion cutoff of
    /// docs/ALGORITHMS.md §8), then foot-skate removal with default contacts.
    fn default() -> Self {
        CleanOptions {
            filter: Some(Filter::Butterworth { cutoff: 6.0, order: 2 }),
            limits: StepLimits::default(),
            footskate: Some(FootskateOptions::default()),
        }
    }
}

/// The outcome of [`clean`].
#[derive(Debug, Clone, PartialEq)]
pub struct Cleaned {
    /// The cleaned clip: the input's channels, one linear key per frame.
    pub clip: Clip,
    /// The cleaned motion as frames (what `clip` holds).
    pub frames: Frames,
    /// The input motion as frames, for before/after measurements.
    pub original: Frames,
    /// Hip height `H` the thresholds were scaled by, in skeleton units.
    pub hip_height: f32,
    /// Contacts and changes per leg (empty when foot-skate removal was off).
    pub legs: Vec<LegReport>,
    /// Largest lowering of the hips that kept pinned feet reachable, in skeleton units.
    pub hip_drop: f32,
    /// Discontinuities the filter kept (empty without a filter).
    pub cuts: Vec<Cut>,
}

/// Clean `clip` on `skeleton`: bake to frames, filter every animated track (in pieces between
/// its discontinuities), then remove foot skate on `legs` (contacts detected on the filtered
/// motion). `hip_height` is `H` (docs/METRICS.md §7, [`crate::rig::RigInfo::hip_height`] for a
/// humanoid, [`rest_size`] otherwise): translation filtering, step limits and contact thresholds
/// are in units of it.
pub fn clean(
    skeleton: &Skeleton,
    clip: &Clip,
    legs: &[Leg],
    hip_height: f32,
    options: &CleanOptions,
) -> Result<Cleaned, CleanupError> {
    let original = Frames::bake(skeleton, clip)?;
    let h = hip_height;
    let mut frames = original.clone();
    let cuts = match &options.filter {
        Some(filter) => frames.filter(skeleton, filter, &animated_joints(clip), h, &options.limits)?,
        None => Vec::new(),
    };
    let (legs, hip_drop) = match &options.footskate {
        Some(fs) if !legs.is_empty() => {
            let done = footskate::remove_footskate(skeleton, &mut frames, legs, h, fs)?;
            (done.legs, done.max_hip_drop)
        }
        _ => (Vec::new(), 0.0),
    };
    Ok(Cleaned {
        clip: frames.to_clip(clip),
        frames,
        original,
        hip_height: h,
        legs,
        hip_drop,
        cuts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigml_core::Transform;

    /// Hips → hip → knee → ankle → toe along `down`, 1 unit per bone after a 0.2 hip offset.
    fn leg(down: Vec3) -> (Skeleton, Vec<Leg>) {
        let t = |v: Vec3| Transform::from_translation(v);
        let mut s = Skeleton {
            names: ["Hips", "UpLeg", "Leg", "Foot", "Toe"].map(String::from).to_vec(),
            parents: vec![None, Some(0), Some(1), Some(2), Some(3)],
            rest_local: vec![t(Vec3::ZERO), t(down * 0.2), t(down), t(down), t(Vec3::X * 0.3)],
            inverse_bind: Vec::new(),
        };
        s.bind_to_rest();
        let legs = vec![Leg {
            name: "left".into(),
            hip: 1,
            knee: 2,
            ankle: 3,
            toe: Some(4),
        }];
        (s, legs)
    }

    #[test]
    fn rest_size_is_half_the_largest_extent() {
        // Upright: joints span y from 0 down to -2.2 (x 0 to 0.3).
        let (s, _) = leg(-Vec3::Y);
        assert!((rest_size(&s) - 1.1).abs() < 1e-6);
        // Lying along -z: the same size.
        let (s, _) = leg(-Vec3::Z);
        assert!((rest_size(&s) - 1.1).abs() < 1e-6);
        assert_eq!(rest_size(&Skeleton::default()), 1.0);
        assert_eq!(root_of(&s, 4), 0);
    }

    #[test]
    fn a_pose_jump_cuts_every_track() {
        // Frame 0 has every leg joint bent 25° (under the 30° joint limit), then the leg hangs
        // still: the pose moves ~0.3 H in one frame (~40 H/s), a whole-pose cut.
        let (s, _) = leg(-Vec3::Y);
        let h = 2.2;
        let poses: Vec<Vec<Transform>> = (0..20)
            .map(|f| {
                let mut p = s.rest_local.clone();
                if f == 0 {
                    for t in &mut p[1..4] {
                        t.rotation = Quat::from_rotation_x(25f32.to_radians());
                    }
                }
                p
            })
            .collect();
        let mut frames = Frames {
            fps: 120.0,
            start: 0.0,
            poses: poses.clone(),
        };
        let filter = Filter::Butterworth { cutoff: 6.0, order: 2 };
        let cuts = frames
            .filter(&s, &filter, &[1, 2, 3], h, &StepLimits::default())
            .unwrap();
        assert_eq!(cuts, vec![Cut { joint: None, frame: 1 }]);
        // Both pieces are constant, so nothing changes.
        for (a, b) in frames.poses.iter().zip(&poses) {
            for (x, y) in a.iter().zip(b) {
                assert!(x.rotation.angle_between(y.rotation) < 1e-5);
            }
        }
    }

    #[test]
    fn pieces_split_at_cuts() {
        assert_eq!(pieces(10, &[]), vec![0..10]);
        assert_eq!(pieces(10, &[1, 5]), vec![0..1, 1..5, 5..10]);
        assert_eq!(pieces(0, &[]), Vec::<std::ops::Range<usize>>::new());
        let bad = StepLimits {
            max_rotation_degrees: -1.0,
            ..StepLimits::default()
        };
        assert!(bad.validate().is_err());
        assert!(StepLimits::default().validate().is_ok());
    }

    #[test]
    fn a_jump_is_kept_and_the_pieces_are_smoothed() {
        // One joint: frame 0 a reference pose turned 90°, then a slow turn with jitter.
        let mut skeleton = Skeleton {
            names: vec!["root".into()],
            parents: vec![None],
            rest_local: vec![Transform::IDENTITY],
            inverse_bind: Vec::new(),
        };
        skeleton.bind_to_rest();
        let poses: Vec<Vec<Transform>> = (0..60)
            .map(|f| {
                let angle = if f == 0 {
                    std::f32::consts::FRAC_PI_2
                } else {
                    0.01 * f as f32 + if f % 2 == 0 { 0.002 } else { -0.002 }
                };
                vec![Transform {
                    rotation: Quat::from_rotation_y(angle),
                    ..Transform::IDENTITY
                }]
            })
            .collect();
        let mut frames = Frames {
            fps: 120.0,
            start: 0.0,
            poses,
        };
        let filter = Filter::Butterworth { cutoff: 6.0, order: 2 };
        let cuts = frames
            .filter(&skeleton, &filter, &[0], 1.0, &StepLimits::default())
            .unwrap();
        assert_eq!(
            cuts,
            vec![Cut {
                joint: Some(0),
                frame: 1
            }]
        );
        // The reference frame is untouched; the rest follows the slow turn with under half the
        // ±0.002 rad jitter left.
        assert_eq!(
            frames.poses[0][0].rotation,
            Quat::from_rotation_y(std::f32::consts::FRAC_PI_2)
        );
        for f in 5..55 {
            let want = Quat::from_rotation_y(0.01 * f as f32);
            let got = frames.poses[f][0].rotation;
            assert!(
                got.angle_between(want) < 0.001,
                "frame {f}: {}",
                got.angle_between(want)
            );
        }
    }
}
