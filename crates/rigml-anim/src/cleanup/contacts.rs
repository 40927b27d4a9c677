//! Foot-contact detection with hysteresis (docs/ALGORITHMS.md §8) on world joint tracks.
//!
//! The thresholds are those of docs/METRICS.md §7 (height `< 0.05·H`, horizontal speed `< 0.5·H/s`)
//! for entering contact, with looser ones for leaving it, so a foot that hovers around a
//! threshold does not flicker. Two project choices differ from the metric:
//! - the height is measured above the joint's own floor (the 5th percentile of its height within
//!   a second either side, [`floor_track`]) rather than above `y = 0`, because an ankle stands
//!   about 0.1·H above the ground when the foot is flat and would otherwise never be in contact,
//!   and capture floors are not always level;
//! - the speed is the displacement over a fixed time ([`ContactParams::speed_span`], 1/15 s: the
//!   central difference of a 30 fps clip), and short runs and gaps are judged in seconds, so one
//!   motion gets the same contacts at any frame rate. A central difference over two frames of
//!   120 fps capture reads the markers' shake (a planted CMU ankle: 0.1–3.6 H/s from one frame
//!   to the next), and a planted foot then dropped in and out of contact.

use super::CleanupError;
use glam::Vec3;
use std::ops::Range;

/// Percentile of a joint's heights taken as its floor level.
pub const FLOOR_PERCENTILE: f64 = 0.05;

/// Hysteresis thresholds, in hip heights `H` (heights) and `H` per second (speeds), the span
/// speeds are measured over and the clean-up of short runs, in seconds.
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
    /// Seconds a speed is measured over, centred on its frame (at least one frame each side).
    pub speed_span: f32,
    /// Contacts shorter than this many seconds are dropped.
    pub min_duration: f32,
    /// Gaps shorter than this many seconds between two contacts are filled.
    pub max_gap: f32,
    /// Heights are measured above the joint's floor within this many seconds either side
    /// ([`floor_track`]; 0: one floor for the whole clip, [`floor_level`]).
    pub floor_window: f32,
}

impl Default for ContactParams {
    /// The values docs/ALGORITHMS.md §8 suggests: on at 0.05·H and 0.5·H/s (METRICS.md §7), off at
    /// 0.07·H and 0.7·H/s, speeds over 1/15 s, runs and gaps under 0.1 s removed (at 30 fps: the
    /// central difference, and under 3 frames), the floor within a second either side (a walk's
    /// stride: every window holds a stance of each foot).
    fn default() -> Self {
        ContactParams {
            h_on: 0.05,
            h_off: 0.07,
            v_on: 0.5,
            v_off: 0.7,
            speed_span: 1.0 / 15.0,
            min_duration: 0.1,
            max_gap: 0.1,
            floor_window: 1.0,
        }
    }
}

impl ContactParams {
    /// Check that thresholds are finite, non-negative and ordered (`on ≤ off`).
    pub fn validate(&self) -> Result<(), CleanupError> {
        let ok = |x: f32| x.is_finite() && x >= 0.0;
        let all = [
            self.h_on,
            self.h_off,
            self.v_on,
            self.v_off,
            self.speed_span,
            self.min_duration,
            self.max_gap,
            self.floor_window,
        ];
        if !all.into_iter().all(ok) {
            return Err(CleanupError::Parameter(format!(
                "contact thresholds and durations must be finite and non-negative: {self:?}"
            )));
        }
        if self.h_off < self.h_on || self.v_off < self.v_on {
            return Err(CleanupError::Parameter(format!(
                "contact hysteresis needs h_off ≥ h_on and v_off ≥ v_on: {self:?}"
            )));
        }
        Ok(())
    }

    /// Horizontal speed of every frame of `track` (at `fps`) over [`ContactParams::speed_span`]:
    /// the displacement from `k` frames before to `k` after, `k = max(1, round(span·fps/2))`
    /// (fewer at the clip's ends), over the time between them; what [`detect`] thresholds.
    pub fn speed(&self, track: &[Vec3], fps: f32) -> Vec<f32> {
        let n = track.len();
        let k = ((0.5 * self.speed_span * fps).round() as usize).max(1);
        (0..n)
            .map(|t| {
                let (a, b) = (t.saturating_sub(k), (t + k).min(n.saturating_sub(1)));
                if b <= a {
                    return 0.0;
                }
                horizontal(track[b] - track[a]) * fps / (b - a) as f32
            })
            .collect()
    }

    /// `seconds` as a whole number of frames at `fps`.
    fn frames(seconds: f32, fps: f32) -> usize {
        (seconds * fps).round().max(0.0) as usize
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

/// The floor under a joint at every frame: the [`FLOOR_PERCENTILE`] of its heights within
/// `half_window` seconds either side (the whole clip when that is longer), computed every
/// tenth of a second and interpolated between. Capture floors are not always level (a CMU walk
/// climbs 0.08·H in 2.5 s, more than the 0.05·H a contact is judged by), and a floor that
/// follows the feet finds a planted foot wherever it stands.
pub fn floor_track(track: &[Vec3], fps: f32, half_window: f32) -> Vec<f32> {
    let n = track.len();
    let half = (half_window * fps).round().max(1.0) as usize;
    if n == 0 || half >= n {
        return vec![floor_level(track); n];
    }
    let step = ((0.1 * fps).round() as usize).max(1);
    let mut samples: Vec<usize> = (0..n).step_by(step).collect();
    if samples.last() != Some(&(n - 1)) {
        samples.push(n - 1);
    }
    let levels: Vec<f32> = samples
        .iter()
        .map(|&c| floor_level(&track[c.saturating_sub(half)..(c + half + 1).min(n)]))
        .collect();
    let mut out = Vec::with_capacity(n);
    for pair in samples.windows(2).zip(levels.windows(2)) {
        let ((a, b), (la, lb)) = ((pair.0[0], pair.0[1]), (pair.1[0], pair.1[1]));
        for t in a..b {
            out.push(la + (lb - la) * (t - a) as f32 / (b - a) as f32);
        }
    }
    out.push(*levels.last().unwrap_or(&0.0));
    out
}

/// The track lowered by its [`floor_level`] (one floor for the whole clip), so heights are
/// measured from the joint's own floor: feeding these to the METRICS.md §7 functions gives the
/// floor-relative variant of foot skate that rigml reports beside the `y = 0` one.
pub fn floor_relative(track: &[Vec3]) -> Vec<Vec3> {
    let floor = floor_level(track);
    track.iter().map(|p| Vec3::new(p.x, p.y - floor, p.z)).collect()
}

/// Per-frame contact flags of one foot joint: enter when height above its floor
/// ([`ContactParams::floor_window`]) is below `h_on·H`
/// and speed ([`ContactParams::speed`]) below `v_on·H/s`, stay until height exceeds `h_off·H` or
/// speed `v_off·H/s`; then fill gaps shorter than `max_gap` and drop runs shorter than
/// `min_duration` (both in seconds, as whole frames at `fps`).
pub fn detect(track: &[Vec3], hip_height: f32, fps: f32, params: &ContactParams) -> Vec<bool> {
    let speed = params.speed(track, fps);
    let floors = if params.floor_window > 0.0 {
        floor_track(track, fps, params.floor_window)
    } else {
        vec![floor_level(track); track.len()]
    };
    let (max_gap, min_frames) = (
        ContactParams::frames(params.max_gap, fps),
        ContactParams::frames(params.min_duration, fps),
    );
    let mut inside = false;
    let mut flags: Vec<bool> = track
        .iter()
        .zip(speed.iter().zip(&floors))
        .map(|(p, (&v, &floor))| {
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
        if gap.start > 0 && gap.end < flags.len() && gap.len() < max_gap {
            flags[gap].fill(true);
        }
    }
    for run in intervals_of(&flags, true) {
        if run.len() < min_frames {
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
        let flags = detect(&step_track(), 1.0, 10.0, &ContactParams::default());
        // Frame 9 moves at (0.2 - 0) * 10 / 2 = 1 H/s > v_off: it leaves contact there.
        // Frame 15 (first rest frame) moves at (1.2 - 1.0) * 10 / 2 = 1 H/s: not yet in contact.
        assert_eq!(intervals(&flags), vec![0..9, 16..25]);
    }

    #[test]
    fn hysteresis_keeps_a_hovering_foot_planted() {
        // Three frames on the floor, then the height alternates 0.04 / 0.06 H: below h_on, then
        // between h_on and h_off.
        let track: Vec<Vec3> = (0..15)
            .map(|t| Vec3::new(0.0, [0.0, 0.04, 0.06][if t < 3 { 0 } else { 1 + (t - 3) % 2 }], 0.0))
            .collect();
        let p = ContactParams::default();
        assert_eq!(intervals(&detect(&track, 1.0, 30.0, &p)), vec![0..15]);
        // Without hysteresis (off = on) it flickers, and the short runs are then filled or dropped.
        let flicker = ContactParams {
            h_off: p.h_on,
            v_off: p.v_on,
            max_gap: 0.0,
            min_duration: 0.0,
            ..p
        };
        assert_eq!(intervals(&detect(&track, 1.0, 30.0, &flicker)).len(), 6);
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
        let flags = detect(&track, 1.0, 30.0, &ContactParams::default());
        assert_eq!(intervals(&flags), vec![8..18]);
    }

    #[test]
    fn floor_is_a_low_percentile() {
        let track: Vec<Vec3> = (0..101).map(|t| Vec3::Y * t as f32).collect();
        assert_eq!(floor_level(&track), 5.0);
        assert_eq!(floor_level(&[]), 0.0);
        // Heights measured above the floor: the same stance 2 units up is still found.
        let raised: Vec<Vec3> = step_track().iter().map(|p| *p + Vec3::Y * 2.0).collect();
        let flags = detect(&raised, 1.0, 10.0, &ContactParams::default());
        assert_eq!(intervals(&flags), vec![0..9, 16..25]);
    }

    /// A 1 m/s walk seen by the detector at `fps`: each foot planted for 0.6 s of every 1 s
    /// stride and swinging 0.2 H high, the other half a stride later; the floor rises `slope` H
    /// per second; every frame shaken by up to `shake` H (capture's marker noise).
    fn walk(fps: f32, seconds: f32, slope: f32, shake: f32) -> Vec<Vec3> {
        let n = (seconds * fps) as usize;
        let mut seed = 12345u32;
        let mut noise = move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        };
        let mut x = 0.0f32;
        (0..n)
            .map(|f| {
                let t = f as f32 / fps;
                let phase = t.fract();
                let swing = phase >= 0.6;
                if swing {
                    x += 2.5 / fps; // the stride's 1 m covered in 0.4 s of swing
                }
                let lift = if swing {
                    0.2 * (std::f32::consts::PI * (phase - 0.6) / 0.4).sin()
                } else {
                    0.0
                };
                Vec3::new(x + shake * noise(), slope * t + lift + shake * noise(), shake * noise())
            })
            .collect()
    }

    /// Share of the frames of a planted phase (0.05–0.55 of each stride) found in contact.
    fn stance_found(flags: &[bool], fps: f32) -> f32 {
        let stance: Vec<usize> = (0..flags.len())
            .filter(|&f| (0.05..0.55).contains(&(f as f32 / fps).fract()))
            .collect();
        stance.iter().filter(|&&f| flags[f]).count() as f32 / stance.len() as f32
    }

    #[test]
    fn the_same_walk_gets_the_same_contacts_at_any_frame_rate() {
        let p = ContactParams::default();
        // 2 cm of shake (H = 1) moves a planted foot by up to 1.7 H/s between two frames at 120 fps.
        for fps in [30.0, 60.0, 120.0] {
            let flags = detect(&walk(fps, 8.0, 0.0, 0.02), 1.0, fps, &p);
            let found = stance_found(&flags, fps);
            assert!(found > 0.95, "{fps} fps: {found}");
            // No swing frame (0.65–0.95 of a stride) is in contact.
            assert!((0..flags.len()).all(|f| !flags[f] || !(0.65..0.95).contains(&(f as f32 / fps).fract())));
        }
        // The rule counted in frames (speeds between neighbouring frames, runs and gaps of 3
        // frames: 1/40 s at 120 fps) loses stances to the shake.
        let frame_by_frame = ContactParams {
            speed_span: 0.0,
            min_duration: 3.0 / 120.0,
            max_gap: 3.0 / 120.0,
            ..p
        };
        let flags = detect(&walk(120.0, 8.0, 0.0, 0.02), 1.0, 120.0, &frame_by_frame);
        assert!(stance_found(&flags, 120.0) < 0.8, "{}", stance_found(&flags, 120.0));
    }

    #[test]
    fn a_rising_floor_is_followed() {
        // The floor climbs 0.02 H a second: after 4 s the stance is 0.08 H above where it began.
        let track = walk(30.0, 10.0, 0.02, 0.0);
        let p = ContactParams::default();
        let local = stance_found(&detect(&track, 1.0, 30.0, &p), 30.0);
        let whole = ContactParams { floor_window: 0.0, ..p };
        let global = stance_found(&detect(&track, 1.0, 30.0, &whole), 30.0);
        assert!(local > 0.95 && global < 0.5, "local {local}, whole clip {global}");
        let floors = floor_track(&track, 30.0, 1.0);
        assert!((floors[150] - 0.1).abs() < 0.03, "{}", floors[150]);
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
