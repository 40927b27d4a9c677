//! Foot-contact detection with hysteresis (docs/ALGORITHMS.md §8) on world joint tracks.
//!
//! The thresholds are those of docs/METRICS.md §7 (height `< 0.05·H`, horizontal speed `< 0.5·H/s`,
//! central differences) for entering contact, with looser ones for leaving it, so a foot that
//! hovers around a threshold does not flicker. One project choice differs from the metric: the
//! height is measured above the joint's own floor level (the 5th percentile of its height over
//! the clip) rather than above `y = 0`, because an ankle stands about 0.1·H above the ground
//! when the foot is flat and would otherwise never be in contact.

use super::CleanupError;
use glam::Vec3;
use std::ops::Range;

/// Percentile of a joint's heights taken as its floor level.
pub const FLOOR_PERCENTILE: f64 = 0.05;

/// Hysteresis thresholds, in hip heights `H` (heights) and `H` per second (speeds), and the
/// clean-up of short runs, in frames.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactParams {
    /// Enter contact below this height...
    pub h_on: f32,
    /// ...and leave it above this one (`h_off ≥ h_on`).
    pub h_off: f32,
    /// Enter contact below this horizontal speed...
    pub v_on: f32,
    /// ...and leave it above this one (`v_off ≥ v_on`).
    pub v_off: f32,
    /// Contacts shorter than this many frames are dropped.
    pub min_frames: usize,
    /// Gaps shorter than this many frames between two contacts are filled.
    pub max_gap: usize,
}

impl Default for ContactParams {
    /// The values docs/ALGORITHMS.md §8 suggests: on at 0.05·H and 0.5·H/s (METRICS.md §7), off at
    /// 0.07·H and 0.7·H/s, runs and gaps under 3 frames removed.
    fn default() -> Self {
        ContactParams {
            h_on: 0.05,
            h_off: 0.07,
            v_on: 0.5,
            v_off: 0.7,
            min_frames: 3,
            max_gap: 3,
        }
    }
}

impl ContactParams {
    /// Check that thresholds are finite, non-negative and ordered (`on ≤ off`).
    pub fn validate(&self) -> Result<(), CleanupError> {
        let ok = |x: f32| x.is_finite() && x >= 0.0;
        if !(ok(self.h_on) && ok(self.h_off) && ok(self.v_on) && ok(self.v_off)) {
            return Err(CleanupError::Parameter(format!(
                "contact thresholds must be finite and non-negative: {self:?}"
            )));
        }
        if self.h_off < self.h_on || self.v_off < self.v_on {
            return Err(CleanupError::Parameter(format!(
                "contact hysteresis needs h_off ≥ h_on and v_off ≥ v_on: {self:?}"
            )));
        }
        Ok(())
    }
}

/// Contacts found for one foot joint.
#[derive(Debug, Clone, PartialEq)]
pub struct FootContacts {
    /// The joint (an ankle or toe).
    pub joint: usize,
    /// Its name in the skeleton.
    pub name: String,
    /// Frame ranges in contact, ascending and disjoint.
    pub intervals: Vec<Range<usize>>,
}

impl FootContacts {
    /// Number of frames in contact.
    pub fn frames(&self) -> usize {
        self.intervals.iter().map(|r| r.len()).sum()
    }
}

fn horizontal(v: Vec3) -> f32 {
    (v.x * v.x + v.z * v.z).sqrt()
}

/// Horizontal speed per frame (central difference, one-sided at the ends, 0 for one frame), in
/// track units per second — the speed of docs/METRICS.md §7.
pub fn horizontal_speed(track: &[Vec3], fps: f32) -> Vec<f32> {
    let n = track.len();
    (0..n)
        .map(|t| {
            let (a, b, span) = match (t.checked_sub(1), (t + 1 < n).then_some(t + 1)) {
                (Some(a), Some(b)) => (a, b, 2.0),
                (None, Some(b)) => (t, b, 1.0),
                (Some(a), None) => (a, t, 1.0),
                (None, None) => return 0.0,
            };
            horizontal(track[b] - track[a]) * fps / span
        })
        .collect()
}

/// The floor level of a joint: the [`FLOOR_PERCENTILE`] of its heights (0 for an empty track).
pub fn floor_level(track: &[Vec3]) -> f32 {
    let mut ys: Vec<f32> = track.iter().map(|p| p.y).filter(|y| y.is_finite()).collect();
    if ys.is_empty() {
        return 0.0;
    }
    ys.sort_by(f32::total_cmp);
    let k = ((ys.len() - 1) as f64 * FLOOR_PERCENTILE).round() as usize;
    ys[k.min(ys.len() - 1)]
}

/// The track lowered by its [`floor_level`], so heights are measured from the joint's own floor
/// (what [`detect`] thresholds): feeding these to the METRICS.md §7 functions gives the
/// floor-relative variant of foot skate that rigml reports beside the `y = 0` one.
pub fn floor_relative(track: &[Vec3]) -> Vec<Vec3> {
    let floor = floor_level(track);
    track.iter().map(|p| Vec3::new(p.x, p.y - floor, p.z)).collect()
}

/// Per-frame contact flags of one foot joint: enter when height above `floor` is below `h_on·H`
/// and speed below `v_on·H/s`, stay until height exceeds `h_off·H` or speed `v_off·H/s`; then
/// drop runs shorter than `min_frames` and fill gaps shorter than `max_gap`.
pub fn detect(track: &[Vec3], floor: f32, hip_height: f32, fps: f32, params: &ContactParams) -> Vec<bool> {
    let speed = horizontal_speed(track, fps);
    let mut inside = false;
    let mut flags: Vec<bool> = track
        .iter()
        .zip(&speed)
        .map(|(p, &v)| {
            let h = p.y - floor;
            inside = if inside {
                h <= params.h_off * hip_height && v <= params.v_off * hip_height
            } else {
                h < params.h_on * hip_height && v < params.v_on * hip_height
            };
            inside
        })
        .collect();
    // Fill short gaps first (a foot that lifts for a frame or two is still planted), then drop
    // short contacts.
    for gap in intervals_of(&flags, false) {
        if gap.start > 0 && gap.end < flags.len() && gap.len() < params.max_gap {
            flags[gap].fill(true);
        }
    }
    for run in intervals_of(&flags, true) {
        if run.len() < params.min_frames {
            flags[run].fill(false);
        }
    }
    flags
}

/// Maximal runs of frames whose flag equals `value`.
fn intervals_of(flags: &[bool], value: bool) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = None;
    for (f, &x) in flags.iter().enumerate() {
        match (x == value, start) {
            (true, None) => start = Some(f),
            (false, Some(s)) => {
                out.push(s..f);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(s..flags.len());
    }
    out
}

/// Contact intervals: maximal runs of `true`.
pub fn intervals(flags: &[bool]) -> Vec<Range<usize>> {
    intervals_of(flags, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// H = 1, 10 fps: a foot that rests, lifts and moves, rests again.
    fn step_track() -> Vec<Vec3> {
        let mut t = Vec::new();
        for _ in 0..10 {
            t.push(Vec3::ZERO);
        }
        for k in 1..=5 {
            t.push(Vec3::new(0.2 * k as f32, 0.3, 0.0));
        }
        for _ in 0..10 {
            t.push(Vec3::new(1.2, 0.0, 0.0));
        }
        t
    }

    #[test]
    fn detects_two_stances() {
        let flags = detect(&step_track(), 0.0, 1.0, 10.0, &ContactParams::default());
        // Frame 9 moves at (0.2 - 0) * 10 / 2 = 1 H/s > v_off: it leaves contact there.
        // Frame 15 (first rest frame) moves at (1.2 - 1.0) * 10 / 2 = 1 H/s: not yet in contact.
        assert_eq!(intervals(&flags), vec![0..9, 16..25]);
    }

    #[test]
    fn hysteresis_keeps_a_hovering_foot_planted() {
        // Height alternates 0.04 / 0.06 H: below h_on, then between h_on and h_off.
        let track: Vec<Vec3> = (0..12)
            .map(|t| Vec3::new(0.0, if t % 2 == 0 { 0.04 } else { 0.06 }, 0.0))
            .collect();
        let p = ContactParams::default();
        assert_eq!(intervals(&detect(&track, 0.0, 1.0, 30.0, &p)), vec![0..12]);
        // Without hysteresis (off = on) it flickers, and the short runs are then filled or dropped.
        let flicker = ContactParams {
            h_off: p.h_on,
            v_off: p.v_on,
            max_gap: 0,
            min_frames: 0,
            ..p
        };
        assert_eq!(intervals(&detect(&track, 0.0, 1.0, 30.0, &flicker)).len(), 6);
    }

    #[test]
    fn short_runs_dropped_and_gaps_filled() {
        // A 2-frame contact is dropped; a 2-frame gap inside a contact is filled.
        let mut track = vec![Vec3::Y; 20];
        for p in &mut track[2..4] {
            p.y = 0.0;
        }
        for (i, p) in track[8..18].iter_mut().enumerate() {
            p.y = if (4..6).contains(&i) { 1.0 } else { 0.0 };
        }
        let flags = detect(&track, 0.0, 1.0, 30.0, &ContactParams::default());
        assert_eq!(intervals(&flags), vec![8..18]);
    }

    #[test]
    fn floor_is_a_low_percentile() {
        let track: Vec<Vec3> = (0..101).map(|t| Vec3::Y * t as f32).collect();
        assert_eq!(floor_level(&track), 5.0);
        assert_eq!(floor_level(&[]), 0.0);
        // Heights measured above the floor: the same stance 2 units up is still found.
        let raised: Vec<Vec3> = step_track().iter().map(|p| *p + Vec3::Y * 2.0).collect();
        let flags = detect(&raised, 2.0, 1.0, 10.0, &ContactParams::default());
        assert_eq!(intervals(&flags), vec![0..9, 16..25]);
    }

    #[test]
    fn bad_thresholds_rejected() {
        let p = ContactParams {
            h_off: 0.01,
            ..ContactParams::default()
        };
        assert!(p.validate().is_err());
        let p = ContactParams {
            v_on: f32::NAN,
            ..ContactParams::default()
        };
        assert!(p.validate().is_err());
        assert!(ContactParams::default().validate().is_ok());
    }
}
