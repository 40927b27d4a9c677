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
pub use footskate::{FootskateOptions, Leg, LegReport};

use glam::{Quat, Vec3};
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

    /// Filter every rotation and translation track of the joints in `joints` (translations are
    /// filtered in units of `scale`, so the 1€ filter's `beta` does not depend on the clip's
    /// units).
    pub fn filter(&mut self, filter: &Filter, joints: &[usize], scale: f32) -> Result<(), CleanupError> {
        let fps = f64::from(self.fps);
        filter.validate(fps)?;
        let scale = if scale > 0.0 && scale.is_finite() { scale } else { 1.0 };
        for &j in joints {
            let rotations: Vec<Quat> = self.poses.iter().filter_map(|p| p.get(j)).map(|t| t.rotation).collect();
            let translations: Vec<Vec3> = self
                .poses
                .iter()
                .filter_map(|p| p.get(j))
                .map(|t| t.translation / scale)
                .collect();
            let rotations = filter.apply_quat(&rotations, fps)?;
            let translations = filter.apply_vec3(&translations, fps)?;
            for ((p, r), t) in self.poses.iter_mut().zip(rotations).zip(translations) {
                if let Some(local) = p.get_mut(j) {
                    local.rotation = r;
                    local.translation = t * scale;
                }
            }
        }
        Ok(())
    }
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

/// Hip height `H` of a skeleton (docs/METRICS.md §7, from the rest pose): how far the root above
/// `hips` stands above the lowest joint of the rest pose. BVH rest poses put the hips at the
/// origin and the feet below, so this is the standing height of the hips over the toes.
pub fn hip_height(skeleton: &Skeleton, hips: usize) -> f32 {
    let rest: Vec<Vec3> = skeleton.rest_world().iter().map(|m| m.w_axis.truncate()).collect();
    let lowest = rest.iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
    rest.get(hips).map_or(0.0, |p| p.y - lowest)
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
    pub footskate: Option<FootskateOptions>,
}

impl Default for CleanOptions {
    /// Zero-phase Butterworth, order 2 at 6 Hz (the common body-motion cutoff of
    /// docs/ALGORITHMS.md §8), then foot-skate removal with default contacts.
    fn default() -> Self {
        CleanOptions {
            filter: Some(Filter::Butterworth { cutoff: 6.0, order: 2 }),
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
    /// Hip height used for the contact thresholds, in skeleton units.
    pub hip_height: f32,
    /// Contacts and changes per leg (empty when foot-skate removal was off).
    pub legs: Vec<LegReport>,
}

/// Clean `clip` on `skeleton`: bake to frames, filter every animated track, then remove foot
/// skate on `legs` (contacts detected on the filtered motion).
pub fn clean(skeleton: &Skeleton, clip: &Clip, legs: &[Leg], options: &CleanOptions) -> Result<Cleaned, CleanupError> {
    let original = Frames::bake(skeleton, clip)?;
    let hips = legs.first().map_or(0, |l| root_of(skeleton, l.hip));
    let h = hip_height(skeleton, hips);
    let mut frames = original.clone();
    if let Some(filter) = &options.filter {
        frames.filter(filter, &animated_joints(clip), h)?;
    }
    let legs = match &options.footskate {
        Some(fs) if !legs.is_empty() => footskate::remove_footskate(skeleton, &mut frames, legs, h, fs)?,
        _ => Vec::new(),
    };
    Ok(Cleaned {
        clip: frames.to_clip(clip),
        frames,
        original,
        hip_height: h,
        legs,
    })
}
