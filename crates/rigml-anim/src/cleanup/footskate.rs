//! Foot-skate removal (docs/ALGORITHMS.md §8): pin each foot during its contacts and solve
//! two-bone leg IK (hip → knee → ankle) to reach the pin, keeping the foot's world orientation.
//!
//! Per leg and frame, the ankle goal is its own position moved by `d = c_a + (1 − w_a)·c_o`,
//! where `c_a`, `c_o` are the corrections that put the ankle `a` and toe `o` on their pins (the
//! weighted mean position over the current contact interval) and fade out with smoothstep weights
//! `w_a`, `w_o` around each interval (see `pin_track`). A planted heel pins the ankle; a foot
//! rolling onto its toe moves rigidly so that the toe stays put. By default only the horizontal
//! position is pinned.

use super::contacts::{self, ContactParams, FootContacts};
use super::{CleanupError, Frames};
use crate::humanoid::{HumanoidMap, Role};
use crate::ik::two_bone;
use glam::{Mat3, Mat4, Quat, Vec3};
use rigml_core::Skeleton;

/// The joints of one leg, as indices into the skeleton.
#[derive(Debug, Clone, PartialEq)]
pub struct Leg {
    /// A label for reports ("left", "right").
    pub name: String,
    /// The thigh's joint (at the hip ball), an ancestor of `knee`.
    pub hip: usize,
    /// An ancestor of `ankle`.
    pub knee: usize,
    pub ankle: usize,
    /// The toe joint, a descendant of `ankle`, if the skeleton has one.
    pub toe: Option<usize>,
}

fn is_ancestor(skeleton: &Skeleton, ancestor: usize, mut j: usize) -> bool {
    while let Some(p) = skeleton.parents.get(j).copied().flatten() {
        if p == ancestor {
            return true;
        }
        j = p;
    }
    false
}

impl Leg {
    /// Both legs of a humanoid mapping (upper leg, lower leg, foot, toes roles).
    pub fn from_humanoid(map: &HumanoidMap, skeleton: &Skeleton) -> Result<Vec<Leg>, CleanupError> {
        [
            (
                "left",
                [Role::LeftUpperLeg, Role::LeftLowerLeg, Role::LeftFoot, Role::LeftToes],
            ),
            (
                "right",
                [
                    Role::RightUpperLeg,
                    Role::RightLowerLeg,
                    Role::RightFoot,
                    Role::RightToes,
                ],
            ),
        ]
        .into_iter()
        .map(|(name, [hip, knee, ankle, toe])| {
            let role = |r: Role| {
                map.joint(r).ok_or_else(|| CleanupError::Leg {
                    leg: name.to_string(),
                    problem: format!("the humanoid mapping has no {} joint", r.name()),
                })
            };
            let leg = Leg {
                name: name.to_string(),
                hip: role(hip)?,
                knee: role(knee)?,
                ankle: role(ankle)?,
                toe: map.joint(toe),
            };
            leg.validate(skeleton)?;
            Ok(leg)
        })
        .collect()
    }

    /// Check that the joints exist and form a chain hip → knee → ankle (→ toe).
    pub fn validate(&self, skeleton: &Skeleton) -> Result<(), CleanupError> {
        let bad = |problem: String| {
            Err(CleanupError::Leg {
                leg: self.name.clone(),
                problem,
            })
        };
        let n = skeleton.joint_count();
        for j in [self.hip, self.knee, self.ankle].into_iter().chain(self.toe) {
            if j >= n {
                return bad(format!("joint {j} is out of range ({n} joints)"));
            }
        }
        // The ankle may hang elsewhere (an IK foot parented to the root), but not above the leg.
        let detached = !is_ancestor(skeleton, self.hip, self.ankle) && !is_ancestor(skeleton, self.ankle, self.hip);
        if !is_ancestor(skeleton, self.hip, self.knee) || !(is_ancestor(skeleton, self.knee, self.ankle) || detached) {
            return bad("hip, knee and ankle are not a chain".into());
        }
        if let Some(toe) = self.toe {
            if !is_ancestor(skeleton, self.ankle, toe) {
                return bad("the toe is not below the ankle".into());
            }
        }
        Ok(())
    }
}

/// Settings of [`remove_footskate`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FootskateOptions {
    pub contacts: ContactParams,
    /// Time over which a pin fades in before a contact and out after it, in seconds.
    pub blend_seconds: f32,
    /// Also pin the height (else only the horizontal position is pinned and the foot keeps its
    /// own height, so a heel still rises while the toe stays planted).
    pub pin_height: bool,
    /// Lower the hips where a pinned ankle is out of the leg's reach. Off by default: on the
    /// validation walk (cmu_131_02_walk) no goal was out of reach (misses ≤ 0.0005 H), and on the
    /// train walk (cmu_131_01_walk) it moved every joint (mean change 0.0051 → 0.0067 H) and
    /// raised the cleaned jitter of the damaged clip (654 → 727 H/s³).
    pub lower_hips: bool,
    /// Low-pass each foot track at this cutoff (Hz, zero-phase Butterworth of order 2) before
    /// finding its contacts; the pins are still placed on the track as it is. None: contacts
    /// of the track as it is (the default). For capture whose feet shake hard enough to break
    /// the detector's speed test apart. A cutoff that is not positive is refused; one at or
    /// above the clip's Nyquist frequency leaves the tracks as they are.
    pub contact_cutoff: Option<f64>,
}

impl Default for FootskateOptions {
    /// Default contacts, a blend of 1/12 s (10 frames at 120 fps; chosen on the validation clip
    /// cmu_131_02_walk among 1/24, 1/12 and 1/6 s: shorter blends leave more skate, longer ones
    /// more jerk), horizontal pins.
    fn default() -> Self {
        FootskateOptions {
            contacts: ContactParams::default(),
            blend_seconds: 1.0 / 12.0,
            pin_height: false,
            lower_hips: false,
            contact_cutoff: None,
        }
    }
}

/// What happened to one leg.
#[derive(Debug, Clone, PartialEq)]
pub struct LegReport {
    pub leg: String,
    /// Contacts of the ankle, then of the toe (if the leg has one).
    pub contacts: Vec<FootContacts>,
    /// Frames whose leg was solved (ankle pinned, blending, or hips lowered).
    pub adjusted_frames: usize,
    /// Largest distance between the ankle goal and where IK put the ankle (goal out of reach),
    /// in skeleton units.
    pub max_residual: f32,
}

/// Per-frame pin weight and correction (pinned position − track). Inside each interval the weight
/// is 1 and the correction moves the track onto the pin; over `blend` frames before and after it
/// the correction of the interval's first (last) frame fades out with a smoothstep weight, so the
/// foot is never pulled towards a pin it has left. Where ramps overlap the stronger one wins. The
/// pin is the mean of the track over the interval weighted by `(1 − v/v_max)²` (`speed`, clamped
/// at 0), so the frames where the foot is stillest count most; all weights 0 give the plain mean.
fn pin_track(
    track: &[Vec3],
    speed: &[f32],
    v_max: f32,
    intervals: &[std::ops::Range<usize>],
    blend: usize,
) -> Vec<(f32, Vec3)> {
    let n = track.len();
    let mut out = vec![(0.0f32, Vec3::ZERO); n];
    for r in intervals {
        let Some(slice) = track.get(r.clone()) else { continue };
        if slice.is_empty() {
            continue;
        }
        let (mut sum, mut total) = (Vec3::ZERO, 0.0f32);
        for (p, v) in slice.iter().zip(speed.get(r.clone()).unwrap_or(&[])) {
            let w = if v_max > 0.0 {
                (1.0 - v / v_max).max(0.0).powi(2)
            } else {
                1.0
            };
            sum += *p * w;
            total += w;
        }
        let pin = if total > 1e-6 {
            sum / total
        } else {
            slice.iter().copied().sum::<Vec3>() / slice.len() as f32
        };
        let lo = r.start.saturating_sub(blend);
        let hi = (r.end + blend).min(n);
        for (t, slot) in out.iter_mut().enumerate().take(hi).skip(lo) {
            let (outside, source) = if t < r.start {
                (r.start - t, r.start)
            } else if t >= r.end {
                (t + 1 - r.end, r.end - 1)
            } else {
                (0, t)
            };
            let x = 1.0 - outside as f32 / (blend + 1) as f32;
            let w = x * x * (3.0 - 2.0 * x);
            if w > slot.0 {
                *slot = (w, w * (pin - track[source]));
            }
        }
    }
    out
}

/// What [`remove_footskate`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Footskate {
    pub legs: Vec<LegReport>,
    /// Largest amount the hips were lowered so that pinned feet stay reachable, in skeleton units.
    pub max_hip_drop: f32,
}

/// Fraction of the full leg length (thigh + shin) a pinned ankle may be from the hip before the
/// hips are lowered (a leg never locks fully straight).
pub const MAX_EXTENSION: f32 = 0.999;

/// How far the hip at `hip` must move down (along −y) for `goal` to lie within `reach`; 0 if it
/// already does. A goal further than `reach` sideways only gets the hip down to its height.
fn required_drop(hip: Vec3, goal: Vec3, reach: f32) -> f32 {
    let v = goal - hip;
    if v.length() <= reach {
        return 0.0;
    }
    let side2 = v.x * v.x + v.z * v.z;
    let drop = if side2 < reach * reach {
        -v.y - (reach * reach - side2).sqrt()
    } else {
        -v.y
    };
    drop.max(0.0)
}

/// Remove foot skate from `frames` in place; `hip_height` scales the contact thresholds.
///
/// Per leg, the ankle goals come from the pinned contacts (module docs). With
/// [`FootskateOptions::lower_hips`], where a goal is out of the leg's reach the hips are lowered (docs/ALGORITHMS.md §8 step 4): the drop each frame needs
/// is spread over the blend time before and after it with smoothstep weights (never less than
/// needed), the root moves down by it, and every leg is solved again to its goal or, if it had
/// none, to where its ankle was, so only the hips and knees move.
pub fn remove_footskate(
    skeleton: &Skeleton,
    frames: &mut Frames,
    legs: &[Leg],
    hip_height: f32,
    options: &FootskateOptions,
) -> Result<Footskate, CleanupError> {
    options.contacts.validate()?;
    if !(hip_height > 0.0 && hip_height.is_finite()) {
        return Err(CleanupError::Parameter(format!(
            "hip height must be positive, got {hip_height}"
        )));
    }
    if let Some(cutoff) = options.contact_cutoff.filter(|c| !(*c > 0.0 && c.is_finite())) {
        return Err(CleanupError::Parameter(format!(
            "the contact cutoff must be a positive frequency, got {cutoff} Hz"
        )));
    }
    for leg in legs {
        leg.validate(skeleton)?;
    }
    let positions = frames.world_positions(skeleton);
    let at = |f: usize, j: usize| positions.get(f).and_then(|p| p.get(j)).copied().unwrap_or(Vec3::ZERO);
    let track = |j: usize| -> Vec<Vec3> { (0..positions.len()).map(|f| at(f, j)).collect() };
    let blend = (options.blend_seconds * frames.fps).round().max(0.0) as usize;
    let n = frames.len();
    // Goals per leg and frame (None: the ankle stays where it is), and the contacts found.
    let mut goals: Vec<Vec<Option<Vec3>>> = Vec::with_capacity(legs.len());
    let mut contact_lists = Vec::with_capacity(legs.len());
    for leg in legs {
        let mut contact_list = Vec::new();
        let mut pins = Vec::new();
        for joint in std::iter::once(leg.ankle).chain(leg.toe) {
            let t = track(joint);
            let smoothed = options.contact_cutoff.and_then(|cutoff| {
                super::Filter::Butterworth { cutoff, order: 2 }
                    .apply_vec3(&t, f64::from(frames.fps))
                    .ok()
            });
            let flags = contacts::detect(
                smoothed.as_ref().unwrap_or(&t),
                hip_height,
                frames.fps,
                &options.contacts,
            );
            let intervals = contacts::intervals(&flags);
            let speed = options.contacts.speed(&t, frames.fps);
            let v_max = options.contacts.v_off * hip_height;
            pins.push(pin_track(&t, &speed, v_max, &intervals, blend));
            contact_list.push(FootContacts {
                joint,
                name: skeleton.names.get(joint).cloned().unwrap_or_default(),
                intervals,
            });
        }
        let leg_goals = (0..n)
            .map(|f| {
                let mut d = Vec3::ZERO;
                let mut ankle_weight = 0.0;
                for (k, pin) in pins.iter().enumerate() {
                    let (w, mut delta) = pin[f];
                    if w <= 0.0 {
                        continue;
                    }
                    if !options.pin_height {
                        delta.y = 0.0;
                    }
                    if k == 0 {
                        ankle_weight = w;
                        d += delta;
                    } else {
                        d += (1.0 - ankle_weight) * delta;
                    }
                }
                (d.length_squared() > 0.0).then(|| at(f, leg.ankle) + d)
            })
            .collect();
        goals.push(leg_goals);
        contact_lists.push(contact_list);
    }
    // Hip drop each frame needs, then its smoothstep envelope.
    let need: Vec<f32> = (0..n)
        .map(|f| {
            legs.iter()
                .zip(&goals)
                .filter_map(|(leg, g)| {
                    let goal = g.get(f).copied().flatten()?;
                    let (h, k, a) = (at(f, leg.hip), at(f, leg.knee), at(f, leg.ankle));
                    let reach = MAX_EXTENSION * (h.distance(k) + k.distance(a));
                    Some(required_drop(h, goal, reach))
                })
                .fold(0.0f32, f32::max)
        })
        .collect();
    let drop: Vec<f32> = (0..n)
        .map(|f| {
            if !options.lower_hips {
                return 0.0;
            }
            let lo = f.saturating_sub(blend);
            let hi = (f + blend + 1).min(n);
            (lo..hi)
                .map(|g| {
                    let x = 1.0 - f.abs_diff(g) as f32 / (blend + 1) as f32;
                    need[g] * x * x * (3.0 - 2.0 * x)
                })
                .fold(0.0f32, f32::max)
        })
        .collect();
    let root = legs.first().map(|l| super::root_of(skeleton, l.hip));
    let mut reports: Vec<LegReport> = legs
        .iter()
        .zip(contact_lists)
        .map(|(leg, contacts)| LegReport {
            leg: leg.name.clone(),
            contacts,
            adjusted_frames: 0,
            max_residual: 0.0,
        })
        .collect();
    for (f, &lower) in drop.iter().enumerate() {
        if let (Some(root), true) = (root, lower > 0.0) {
            if let Some(t) = frames.poses.get_mut(f).and_then(|p| p.get_mut(root)) {
                t.translation.y -= lower;
            }
        }
        for ((leg, g), report) in legs.iter().zip(&goals).zip(reports.iter_mut()) {
            let goal = match g.get(f).copied().flatten() {
                Some(goal) => goal,
                None if lower > 0.0 => at(f, leg.ankle),
                None => continue,
            };
            report.adjusted_frames += 1;
            let reached = solve_leg(skeleton, frames, f, leg, goal);
            report.max_residual = report.max_residual.max(reached.distance(goal));
        }
    }
    Ok(Footskate {
        legs: reports,
        max_hip_drop: drop.iter().copied().fold(0.0, f32::max),
    })
}

/// Move frame `f`'s leg so its ankle reaches `goal`, keeping the knee's bend plane and the
/// foot's world orientation; returns where the ankle ended up.
fn solve_leg(skeleton: &Skeleton, frames: &mut Frames, f: usize, leg: &Leg, goal: Vec3) -> Vec3 {
    let Some(pose) = frames.poses.get_mut(f) else {
        return goal;
    };
    let world = skeleton.world_matrices(pose);
    let pos = |j: usize| world[j].w_axis.truncate();
    let rot = |j: usize| Quat::from_mat3(&Mat3::from_mat4(world[j]).orthonormalize_or_identity());
    let parent_rot = |j: usize| skeleton.parents[j].map_or(Quat::IDENTITY, rot);
    let (r, m, e) = (pos(leg.hip), pos(leg.knee), pos(leg.ankle));
    let (d1, d2) = two_bone(r, m, e, goal, bend_pole(r, m, e));
    // New world rotations: everything from the hip down turns by d1, from the knee down also by d2.
    let hip_world = d1 * rot(leg.hip);
    let knee_parent = d1 * parent_rot(leg.knee);
    let knee_world = d2 * d1 * rot(leg.knee);
    pose[leg.hip].rotation = (parent_rot(leg.hip).inverse() * hip_world).normalize();
    pose[leg.knee].rotation = (knee_parent.inverse() * knee_world).normalize();
    if is_ancestor(skeleton, leg.knee, leg.ankle) {
        let ankle_parent = d2 * d1 * parent_rot(leg.ankle);
        pose[leg.ankle].rotation = (ankle_parent.inverse() * rot(leg.ankle)).normalize();
    } else {
        // A foot that hangs elsewhere (an IK foot): its parent did not turn, so it keeps its
        // world rotation; it is moved to where the solved shin ends.
        let knee_new = r + d1 * (m - r);
        let ankle_new = knee_new + d2 * d1 * (e - m);
        let parent_world = skeleton.parents[leg.ankle].map_or(Mat4::IDENTITY, |p| world[p]);
        pose[leg.ankle].translation = parent_world.inverse().transform_point3(ankle_new);
    }
    let after = skeleton.world_matrices(pose);
    after[leg.ankle].w_axis.truncate()
}

trait OrthonormalizeOrIdentity {
    fn orthonormalize_or_identity(self) -> Mat3;
}

impl OrthonormalizeOrIdentity for Mat3 {
    /// Strip scale from a rotation-scale matrix (columns normalised); identity if degenerate.
    fn orthonormalize_or_identity(self) -> Mat3 {
        let (x, y, z) = (
            self.x_axis.normalize_or_zero(),
            self.y_axis.normalize_or_zero(),
            self.z_axis.normalize_or_zero(),
        );
        if x == Vec3::ZERO || y == Vec3::ZERO || z == Vec3::ZERO {
            Mat3::IDENTITY
        } else {
            Mat3::from_cols(x, y, z)
        }
    }
}

/// The direction the knee points: the part of `m − r` perpendicular to the hip–ankle line.
pub fn bend_pole(r: Vec3, m: Vec3, e: Vec3) -> Vec3 {
    let axis = (e - r).normalize_or_zero();
    let v = m - r;
    v - axis * axis.dot(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigml_core::Transform;

    /// Hips → hip → knee → ankle → toe, a leg bent slightly forward, 1 unit per bone.
    fn leg_skeleton() -> Skeleton {
        let t = |x: f32, y: f32, z: f32| Transform::from_translation(Vec3::new(x, y, z));
        let mut s = Skeleton {
            names: ["Hips", "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase"]
                .map(String::from)
                .to_vec(),
            parents: vec![None, Some(0), Some(1), Some(2), Some(3)],
            rest_local: vec![
                t(0.0, 2.1, 0.0),
                t(0.1, -0.1, 0.0),
                t(0.0, -1.0, 0.1),
                t(0.0, -1.0, -0.1),
                t(0.0, -0.1, 0.3),
            ],
            inverse_bind: Vec::new(),
        };
        s.bind_to_rest();
        s
    }

    /// The leg of [`leg_skeleton`].
    fn left_leg() -> Leg {
        Leg {
            name: "left".into(),
            hip: 1,
            knee: 2,
            ankle: 3,
            toe: Some(4),
        }
    }

    /// One frame of `s`'s rest pose with the foot turned 0.3 rad about x.
    fn turned_foot(s: &Skeleton) -> Frames {
        let mut pose = s.rest_local.clone();
        pose[3].rotation = Quat::from_rotation_x(0.3);
        Frames {
            fps: 30.0,
            start: 0.0,
            poses: vec![pose],
        }
    }

    #[test]
    fn solve_leg_reaches_the_goal_and_keeps_foot_orientation() {
        let s = leg_skeleton();
        let mut frames = turned_foot(&s);
        let leg = left_leg();
        leg.validate(&s).unwrap();
        let before = s.world_matrices(&frames.poses[0]);
        let goal = before[3].w_axis.truncate() + Vec3::new(0.05, 0.02, -0.08);
        let reached = solve_leg(&s, &mut frames, 0, &leg, goal);
        assert!(reached.distance(goal) < 1e-4, "{reached} vs {goal}");
        let after = s.world_matrices(&frames.poses[0]);
        // The foot keeps its world orientation, so the toe moved exactly as the ankle did.
        let rot = |m: &glam::Mat4| Quat::from_mat3(&Mat3::from_mat4(*m));
        assert!(rot(&after[3]).dot(rot(&before[3])).abs() > 1.0 - 1e-6);
        let toe_shift = after[4].w_axis.truncate() - before[4].w_axis.truncate();
        assert!((toe_shift - (goal - before[3].w_axis.truncate())).length() < 1e-4);
        // The hips did not move, and the knee still bends forward (+z).
        assert_eq!(after[0], before[0]);
        let (r, m, e) = (
            after[1].w_axis.truncate(),
            after[2].w_axis.truncate(),
            after[3].w_axis.truncate(),
        );
        assert!(bend_pole(r, m, e).z > 0.0);
    }

    #[test]
    fn an_ik_foot_parented_to_the_root_is_moved_with_the_shin() {
        // The leg of `leg_skeleton`, its foot re-parented to the hips (as IK targets hang from
        // the root in game rigs) at the same rest position.
        let mut s = leg_skeleton();
        let rest = s.rest_world();
        s.parents = vec![None, Some(0), Some(1), Some(0), Some(3)];
        s.rest_local[3] = Transform::from_translation(rest[3].w_axis.truncate() - rest[0].w_axis.truncate());
        s.bind_to_rest();
        let leg = left_leg();
        leg.validate(&s).unwrap();
        let mut frames = turned_foot(&s);
        let before = s.world_matrices(&frames.poses[0]);
        let goal = before[3].w_axis.truncate() + Vec3::new(0.05, 0.02, -0.08);
        let reached = solve_leg(&s, &mut frames, 0, &leg, goal);
        assert!(reached.distance(goal) < 1e-4, "{reached} vs {goal}");
        let after = s.world_matrices(&frames.poses[0]);
        // The foot sits on the solved shin's end and keeps its world orientation.
        let shin = |w: &[glam::Mat4]| w[3].w_axis.truncate() - w[2].w_axis.truncate();
        assert!((shin(&after).length() - shin(&before).length()).abs() < 1e-4);
        let rot = |m: &glam::Mat4| Quat::from_mat3(&Mat3::from_mat4(*m));
        assert!(rot(&after[3]).dot(rot(&before[3])).abs() > 1.0 - 1e-6);
        // A foot above the leg is still refused.
        let mut upside = s.clone();
        upside.parents = vec![None, Some(3), Some(1), Some(0), Some(3)];
        assert!(leg.validate(&upside).is_err());
    }

    #[test]
    fn hips_drop_only_as_far_as_needed() {
        // Hip at 2, goal straight below at 0, reach 1.5: drop 0.5. Within reach: 0.
        assert!((required_drop(Vec3::Y * 2.0, Vec3::ZERO, 1.5) - 0.5).abs() < 1e-6);
        assert_eq!(required_drop(Vec3::Y * 2.0, Vec3::Y, 1.5), 0.0);
        // Goal 0.9 to the side and 2 below, reach 1.5: drop 2 - sqrt(1.5² - 0.9²) = 0.8.
        assert!((required_drop(Vec3::Y * 2.0, Vec3::X * 0.9, 1.5) - 0.8).abs() < 1e-5);
        // Too far sideways to help: down to the goal's height.
        assert!((required_drop(Vec3::Y * 2.0, Vec3::X * 3.0, 1.5) - 2.0).abs() < 1e-6);
    }

    #[test]
    fn an_unreachable_pin_lowers_the_hips() {
        // The leg stands straight (reach 2.2 from the hip ball), and the ankle is pinned 0.3 ahead:
        // out of reach unless the hips come down.
        let s = leg_skeleton();
        let still: Vec<Vec<Transform>> = (0..40).map(|_| s.rest_local.clone()).collect();
        let mut frames = Frames {
            fps: 30.0,
            start: 0.0,
            poses: still,
        };
        // Straighten the knee: the leg from the hip ball is then 2 bones of 1.005 in line.
        for p in &mut frames.poses {
            p[2].translation = Vec3::new(0.0, -1.0, 0.0);
            p[3].translation = Vec3::new(0.0, -1.0, 0.0);
        }
        // Slide the whole body 0.01 per frame: the planted foot skates.
        for (f, p) in frames.poses.iter_mut().enumerate() {
            p[0].translation.x += 0.01 * f as f32;
        }
        let leg = Leg {
            name: "left".into(),
            hip: 1,
            knee: 2,
            ankle: 3,
            toe: Some(4),
        };
        let options = FootskateOptions {
            contacts: ContactParams {
                v_on: 1.0,
                v_off: 1.0,
                ..ContactParams::default()
            },
            lower_hips: true,
            ..FootskateOptions::default()
        };
        let out = remove_footskate(&s, &mut frames, std::slice::from_ref(&leg), 2.2, &options).unwrap();
        assert!(out.max_hip_drop > 0.0, "{out:?}");
        assert!(out.legs[0].max_residual < 1e-3, "{out:?}");
        // The ankle no longer slides: it stays within 1e-3 of one x over the pinned frames.
        let xs: Vec<f32> = frames.world_positions(&s).iter().map(|p| p[3].x).collect();
        let (lo, hi) = xs.iter().fold((f32::MAX, f32::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
        assert!(hi - lo < 1e-3, "ankle x from {lo} to {hi}");
    }

    /// A standing leg whose whole body shakes (white noise of ±0.1 of a 2.1 hip height on the
    /// ground axes, 120 fps): the detector reads the shake as speed and breaks the stance apart,
    /// but on tracks low-passed at 3 Hz first it finds one contact over nearly the whole clip.
    #[test]
    fn contacts_of_a_shaking_foot_are_found_on_smoothed_tracks() {
        let s = leg_skeleton();
        let poses: Vec<Vec<Transform>> = (0..240)
            .map(|f| {
                let mut p = s.rest_local.clone();
                // White noise of ±0.1 on both ground axes (a fixed scramble of the frame index).
                let noise = |k: usize| ((k * 7919 + 13) % 101) as f32 / 50.0 - 1.0;
                p[0].translation.x += 0.1 * noise(f);
                p[0].translation.z += 0.1 * noise(f + 1000);
                p
            })
            .collect();
        let ankle = |options: &FootskateOptions| {
            let mut frames = Frames {
                fps: 120.0,
                start: 0.0,
                poses: poses.clone(),
            };
            let out = remove_footskate(&s, &mut frames, std::slice::from_ref(&left_leg()), 2.1, options).unwrap();
            out.legs[0].contacts[0].intervals.clone()
        };
        let plain = ankle(&FootskateOptions::default());
        let smoothed = ankle(&FootskateOptions {
            contact_cutoff: Some(3.0),
            ..FootskateOptions::default()
        });
        let frames = |r: &[std::ops::Range<usize>]| r.iter().map(|r| r.len()).sum::<usize>();
        assert!(plain.len() > 1 || frames(&plain) < 200, "{plain:?}");
        assert!(smoothed.len() == 1 && frames(&smoothed) > 200, "{smoothed:?}");
        // A cutoff that is no frequency is refused, not ignored.
        for bad in [0.0, -3.0, f64::NAN, f64::INFINITY] {
            let mut frames = Frames {
                fps: 120.0,
                start: 0.0,
                poses: poses.clone(),
            };
            let options = FootskateOptions {
                contact_cutoff: Some(bad),
                ..FootskateOptions::default()
            };
            let err = remove_footskate(&s, &mut frames, std::slice::from_ref(&left_leg()), 2.1, &options);
            assert!(matches!(err, Err(CleanupError::Parameter(_))), "{bad}: {err:?}");
        }
    }

    #[test]
    fn legs_must_be_chains() {
        let s = leg_skeleton();
        let leg = |hip, knee, ankle, toe| Leg {
            name: "left".into(),
            hip,
            knee,
            ankle,
            toe,
        };
        assert!(leg(1, 2, 3, Some(4)).validate(&s).is_ok());
        assert!(leg(2, 1, 3, Some(4)).validate(&s).is_err());
        assert!(leg(1, 2, 3, Some(0)).validate(&s).is_err());
        assert!(leg(1, 2, 9, None).validate(&s).is_err());
    }

    #[test]
    fn pin_track_ramps_with_smoothstep() {
        let track: Vec<Vec3> = (0..20).map(|t| Vec3::X * t as f32).collect();
        let pins = pin_track(&track, &[0.0; 20], 1.0, std::slice::from_ref(&(8..12)), 3);
        // Inside: weight 1, pin = mean x of 8..11 = 9.5, correction 9.5 - x.
        assert_eq!(pins[8], (1.0, Vec3::X * 1.5));
        assert_eq!(pins[11], (1.0, Vec3::X * -1.5));
        // One frame outside: x = 1 - 1/4 = 0.75 -> 0.75² (3 - 1.5) = 0.84375 times the edge
        // frame's correction; four out: 0.
        assert!((pins[7].0 - 0.843_75).abs() < 1e-6);
        assert!((pins[7].1.x - 0.843_75 * 1.5).abs() < 1e-6);
        assert!((pins[12].1.x + 0.843_75 * 1.5).abs() < 1e-6);
        assert_eq!(pins[4].0, 0.0);
        assert_eq!(pins[15].0, 0.0);
        // Speed weights: frames 8 and 9 still (weight 1), 10 at half the limit (1/4), 11 at it (0):
        // pin x = (8 + 9 + 10/4) / 2.25.
        let pins = pin_track(
            &track,
            &[
                0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
            ],
            1.0,
            std::slice::from_ref(&(8..12)),
            3,
        );
        assert!((pins[9].1.x - (19.5 / 2.25 - 9.0)).abs() < 1e-5);
    }
}
