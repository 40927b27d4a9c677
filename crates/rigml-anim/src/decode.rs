//! IK-Rig decoding (`docs/ALGORITHMS.md` §7): scale an encoded clip back by the target's hip
//! height and chain lengths and solve each chain — FABRIK for spine and neck, analytic two-bone
//! IK for arms and legs — with feet pinned while the source had them in contact.

use crate::encode::{contact_flags, RigClip, RigFrame};
use crate::humanoid::{is_ancestor, ChainKind, Role};
use crate::ik::{chain_deltas, fabrik, twist_to_pole, two_bone, FABRIK_MAX_ITERATIONS};
use crate::rig::{place_hips, Posed, RigInfo};
use glam::{Quat, Vec3};
use rigml_core::{Skeleton, Transform};

/// FABRIK tolerance, in the target's hip heights (ALGORITHMS.md §7: 1e-4·H).
pub const FABRIK_TOLERANCE: f32 = 1e-4;

/// Options of [`decode`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecodeOptions {
    /// Hold a foot still (in x, z) while the source had its ankle or toes in contact, and ease
    /// the correction out over [`DecodeOptions::release_seconds`] after the contact ends.
    pub pin_feet: bool,
    /// Time constant of the correction's decay after a contact ends, in seconds.
    pub release_seconds: f32,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            pin_feet: true,
            release_seconds: 0.1,
        }
    }
}

/// A foot's pinning state between frames.
#[derive(Debug, Clone, Copy, Default)]
struct Pin {
    ankle: Option<Vec3>,
    toe: Option<Vec3>,
    /// Horizontal correction added to the raw goal (decays after a contact ends).
    correction: Vec3,
}

/// Decode `clip` onto `skeleton` (measured by `info`): the local transforms of every joint at
/// every frame. Joints outside the chains keep their rest local transforms.
///
/// With `pin_feet`, a foot is pinned while the source had it in contact or the decoded target
/// has it in contact by the METRICS.md §7 test, and the hips are lowered where a pinned or
/// grounded foot would be out of reach. Pinning can create contacts and reach problems, so
/// decoding is repeated (up to four passes) until neither grows; the hip lowering found is
/// smoothed over ±[`HIP_DROP_WINDOW`] seconds (a running maximum, then a running mean, so it
/// still covers every frame's need) to avoid snapping the legs straight.
pub fn decode(skeleton: &Skeleton, info: &RigInfo, clip: &RigClip, options: DecodeOptions) -> Vec<Vec<Transform>> {
    decode_onto(skeleton, info, clip, options, &[])
}

/// [`decode`], starting every frame from `base[f]` instead of the rest pose (where `base` has
/// that frame): joints outside the chains (fingers, twist bones, props) keep the base's local
/// transforms. Cleaning a clip in IK-Rig space decodes onto the clip itself this way.
pub fn decode_onto(
    skeleton: &Skeleton,
    info: &RigInfo,
    clip: &RigClip,
    options: DecodeOptions,
    base: &[Vec<Transform>],
) -> Vec<Vec<Transform>> {
    let n = clip.frames.len();
    let mut contacts: Vec<[bool; 4]> = clip.frames.iter().map(|f| f.contacts).collect();
    let mut drops = vec![0.0f32; n];
    let (mut out, mut needed) = decode_pass(skeleton, info, clip, options, &contacts, &drops, base);
    if !options.pin_feet {
        return out;
    }
    let half = (HIP_DROP_WINDOW * clip.fps).round().max(0.0) as usize;
    for _ in 0..3 {
        let found = target_contacts(skeleton, info, &out, clip.fps);
        let mut grew = false;
        for (have, new) in contacts.iter_mut().zip(found) {
            for (h, n) in have.iter_mut().zip(new) {
                grew |= n && !*h;
                *h |= n;
            }
        }
        let short = needed.iter().any(|&d| d > 1e-5 * info.hip_height);
        if !grew && !short {
            break;
        }
        if short {
            let total: Vec<f32> = drops.iter().zip(&needed).map(|(a, b)| a + b).collect();
            drops = smooth_cover(&total, half);
        }
        (out, needed) = decode_pass(skeleton, info, clip, options, &contacts, &drops, base);
    }
    out
}

/// Hip-lowering smoothing half-window, in seconds.
pub const HIP_DROP_WINDOW: f32 = 0.1;

/// A running maximum over ±`half` frames, then a running mean over the same window: smooth,
/// and at least `x` everywhere.
fn smooth_cover(x: &[f32], half: usize) -> Vec<f32> {
    let n = x.len();
    let window = |f: usize| f.saturating_sub(half)..(f + half + 1).min(n);
    let peak: Vec<f32> = (0..n)
        .map(|f| x[window(f)].iter().copied().fold(0.0, f32::max))
        .collect();
    (0..n)
        .map(|f| {
            let w = &peak[window(f)];
            w.iter().sum::<f32>() / w.len() as f32
        })
        .collect()
}

/// One decoding pass with given pinned contacts and hip drops: the local transforms and, per
/// frame, how much further the hips had to be lowered for the feet to reach.
fn decode_pass(
    skeleton: &Skeleton,
    info: &RigInfo,
    clip: &RigClip,
    options: DecodeOptions,
    contacts: &[[bool; 4]],
    drops: &[f32],
    base: &[Vec<Transform>],
) -> (Vec<Vec<Transform>>, Vec<f32>) {
    let dt = if clip.fps > 0.0 { 1.0 / clip.fps } else { 0.0 };
    let decay = if options.release_seconds > 0.0 {
        (-dt / options.release_seconds).exp()
    } else {
        0.0
    };
    let mut pins = [Pin::default(); 2];
    clip.frames
        .iter()
        .zip(contacts)
        .zip(drops)
        .enumerate()
        .map(|(f, ((frame, contact), &drop))| {
            let start = base
                .get(f)
                .filter(|b| b.len() == skeleton.joint_count())
                .unwrap_or(&skeleton.rest_local);
            let mut posed = Posed::new(skeleton, start.clone());
            let pinning = Pinning {
                enabled: options.pin_feet,
                contacts: *contact,
                decay,
                drop,
            };
            let needed = solve_frame(&mut posed, info, frame, pinning, &mut pins);
            (posed.local, needed)
        })
        .unzip()
}

/// METRICS.md §7 contacts (absolute height, ground y = 0 in the canonical frame) of the left
/// ankle, left toes, right ankle and right toes of decoded frames.
fn target_contacts(skeleton: &Skeleton, info: &RigInfo, frames: &[Vec<Transform>], fps: f32) -> Vec<[bool; 4]> {
    let facing_inv = info.facing.inverse();
    let joints = [Role::LeftFoot, Role::LeftToes, Role::RightFoot, Role::RightToes].map(|r| info.map.joint(r));
    let mut tracks: [Vec<Vec3>; 4] = Default::default();
    for local in frames {
        let world = skeleton.world_matrices(local);
        for (slot, j) in joints.iter().enumerate() {
            if let Some(m) = j.and_then(|j| world.get(j)) {
                tracks[slot].push(facing_inv * m.w_axis.truncate());
            }
        }
    }
    let mut out = vec![[false; 4]; frames.len()];
    for (slot, track) in tracks.iter().enumerate() {
        if track.len() != frames.len() {
            continue;
        }
        for (f, c) in contact_flags(track, 0.0, info.hip_height, fps).into_iter().enumerate() {
            out[f][slot] = c;
        }
    }
    out
}

/// Per-frame pinning inputs.
#[derive(Debug, Clone, Copy)]
struct Pinning {
    enabled: bool,
    contacts: [bool; 4],
    decay: f32,
    /// Hip lowering decided by an earlier pass.
    drop: f32,
}

/// The target-world orientation of an encoded world delta `o` in ground frame `g`.
fn world_delta(g: Quat, o: Quat, facing: Quat) -> Quat {
    (g * o * facing.inverse()).normalize()
}

/// Pose one frame; returns the hip lowering it still needed beyond `pinning.drop`.
fn solve_frame(posed: &mut Posed, info: &RigInfo, frame: &RigFrame, pinning: Pinning, pins: &mut [Pin; 2]) -> f32 {
    let h = info.hip_height;
    let facing = info.facing;
    let map = &info.map;
    let yaw = Quat::from_rotation_y(frame.forward.x.atan2(frame.forward.y));
    let g = facing * yaw;
    let origin = facing * Vec3::new(frame.origin.x, 0.0, frame.origin.y) * h;
    let rest = |j: usize| info.rest_rotations[j];
    let set_delta = |posed: &mut Posed, j: usize, o: Quat| {
        posed.set_world_rotation(j, world_delta(g, o, facing) * rest(j));
    };
    // Hips: orientation, then position (root motion scaled by the target's hip height).
    let Some(hips) = map.joint(Role::Hips) else { return 0.0 };
    let hips_rotation = (world_delta(g, frame.hips_rotation, facing) * rest(hips)).normalize();
    place_hips(posed, map, hips_rotation, origin + g * frame.hips * h);
    if pinning.drop > 0.0 {
        let root = map.motion_root();
        let at = posed.position(root) - facing * Vec3::Y * pinning.drop;
        posed.set_world_position(root, at);
    }
    // Leg goals (pinned while in contact) from where the hips put the legs' roots; if a goal
    // is out of reach, lower the hips until both are reachable.
    let mut leg_targets = [None; 2];
    for (s, kind) in [ChainKind::LeftLeg, ChainKind::RightLeg].into_iter().enumerate() {
        let k = kind as usize;
        let &[upper, _, end] = map.chain(kind) else { continue };
        let goal = frame.chains[k];
        // Horizontal from the chain goal, height from the ground (keeps feet on the floor).
        let raw = posed.position(upper) + g * goal.offset * info.chain_lengths[k];
        let mut raw_c = facing.inverse() * raw;
        raw_c.y = info.ankle_clearance(end) + frame.foot_heights[s] * h;
        let raw = facing * raw_c;
        let target = if pinning.enabled {
            let toes = map.joint(if s == 0 { Role::LeftToes } else { Role::RightToes });
            let toe_offset = toes
                .map(|t| world_delta(g, goal.rotation, facing) * (info.rest_positions[t] - info.rest_positions[end]));
            let (ankle, toe) = (pinning.contacts[2 * s], pinning.contacts[2 * s + 1]);
            pin_foot(&mut pins[s], raw, toe_offset, ankle, toe, pinning.decay)
        } else {
            raw
        };
        leg_targets[s] = Some(target);
    }
    let needed = if pinning.enabled {
        lower_hips_to_reach(posed, info, &leg_targets)
    } else {
        0.0
    };
    // Spine and neck by FABRIK, then their effectors' orientations.
    for kind in [ChainKind::Spine, ChainKind::Neck] {
        let k = kind as usize;
        let joints = map.chain(kind);
        let goal = frame.chains[k];
        let Some(&first) = joints.first() else { continue };
        let target = posed.position(first) + g * goal.offset * info.chain_lengths[k];
        // The chain's first bone is rigid with its root (hips, chest), whose orientation is
        // decoded separately, so FABRIK moves the joints from the second one on.
        let moving = &joints[1..];
        let old: Vec<Vec3> = moving.iter().map(|&j| posed.position(j)).collect();
        if let &[a, b, _] = moving {
            // Two moving bones: the analytic solver is exact where FABRIK converges slowly
            // on a nearly straight chain.
            let (qa, qb) = two_bone(old[0], old[1], old[2], target, g * goal.pole);
            posed.rotate_world(a, qa);
            posed.rotate_world(b, qb);
        } else {
            let mut solved = fabrik(&old, target, FABRIK_TOLERANCE * h, FABRIK_MAX_ITERATIONS).positions;
            // The encoded pole is that of the chain's middle joint (index len/2 of the full chain).
            twist_to_pole(&mut solved, (joints.len() / 2).saturating_sub(1), g * goal.pole);
            for (i, delta) in chain_deltas(&old, &solved).into_iter().enumerate() {
                posed.rotate_world(moving[i], delta);
            }
        }
        if let Some(&end) = joints.last() {
            set_delta(posed, end, goal.rotation);
        }
    }
    // Shoulders follow the spine's end with the source's relative rotation.
    let branch = map.chain(ChainKind::Spine).last().copied().unwrap_or(hips);
    let relative = |posed: &mut Posed, parent: usize, child: Option<usize>, r: Quat| {
        let Some(c) = child else { return };
        let parent_delta = posed.rotation(parent) * rest(parent).inverse();
        let delta = parent_delta * facing * r * facing.inverse();
        posed.set_world_rotation(c, (delta * rest(c)).normalize());
    };
    relative(posed, branch, map.joint(Role::LeftShoulder), frame.shoulders[0]);
    relative(posed, branch, map.joint(Role::RightShoulder), frame.shoulders[1]);
    // Limbs by two-bone IK.
    for kind in [
        ChainKind::LeftArm,
        ChainKind::RightArm,
        ChainKind::LeftLeg,
        ChainKind::RightLeg,
    ] {
        let k = kind as usize;
        let &[upper, lower, end] = map.chain(kind) else {
            continue;
        };
        let goal = frame.chains[k];
        carry_end(posed, info, lower, end);
        let root = posed.position(upper);
        let target = match kind {
            ChainKind::LeftLeg => leg_targets[0],
            ChainKind::RightLeg => leg_targets[1],
            _ => None,
        }
        .unwrap_or(root + g * goal.offset * info.chain_lengths[k]);
        let (q_upper, q_lower) = two_bone(root, posed.position(lower), posed.position(end), target, g * goal.pole);
        posed.rotate_world(upper, q_upper);
        posed.rotate_world(lower, q_lower);
        carry_end(posed, info, lower, end);
        set_delta(posed, end, goal.rotation);
        for &companion in &info.end_companions[k] {
            set_delta(posed, companion, goal.rotation);
        }
    }
    relative(
        posed,
        map.joint(Role::LeftFoot).unwrap_or(0),
        map.joint(Role::LeftToes),
        frame.toes[0],
    );
    relative(
        posed,
        map.joint(Role::RightFoot).unwrap_or(0),
        map.joint(Role::RightToes),
        frame.toes[1],
    );
    needed
}

/// Place a limb end that does not hang below its lower joint (an IK foot or hand parented to the
/// root: [`crate::humanoid::limb_end_detached`]) where the lower joint carries it, at its
/// rest-pose offset turned by the lower joint's rotation from rest; an end below it is left alone.
fn carry_end(posed: &mut Posed, info: &RigInfo, lower: usize, end: usize) {
    if is_ancestor(posed.skeleton, lower, end) {
        return;
    }
    let turn = posed.rotation(lower) * info.rest_rotations[lower].inverse();
    let at = posed.position(lower) + turn * (info.rest_positions[end] - info.rest_positions[lower]);
    posed.set_world_position(end, at);
}

/// Lower the motion root along up until every leg target is within reach of its upper leg
/// (solving `|t - (r - up·δ)| = reach` for the smallest `δ ≥ 0`, reach just short of straight).
fn lower_hips_to_reach(posed: &mut Posed, info: &RigInfo, targets: &[Option<Vec3>; 2]) -> f32 {
    let up = info.facing * Vec3::Y;
    let mut drop: f32 = 0.0;
    for (kind, target) in [ChainKind::LeftLeg, ChainKind::RightLeg].into_iter().zip(targets) {
        let (&[upper, lower, end], Some(t)) = (info.map.chain(kind), target) else {
            continue;
        };
        carry_end(posed, info, lower, end);
        let reach = (posed.position(upper).distance(posed.position(lower))
            + posed.position(lower).distance(posed.position(end)))
            * (1.0 - 4.0 * crate::ik::REACH_EPSILON);
        let d = *t - posed.position(upper);
        let c = d.length_squared() - reach * reach;
        if c <= 0.0 {
            continue;
        }
        let b = d.dot(up);
        let disc = b * b - c;
        let delta = if disc >= 0.0 { -b - disc.sqrt() } else { -b };
        if delta.is_finite() {
            drop = drop.max(delta.clamp(0.0, 0.5 * info.hip_height));
        }
    }
    if drop > 0.0 {
        let root = info.map.motion_root();
        let at = posed.position(root) - up * drop;
        posed.set_world_position(root, at);
    }
    drop
}

/// The ankle goal after pinning: while the ankle is in contact its x, z stay where the contact
/// began; while only the toes are, the toes' x, z stay and the ankle follows the foot's
/// rotation around them. Afterwards the correction decays by `decay` per frame.
fn pin_foot(pin: &mut Pin, raw: Vec3, toe_offset: Option<Vec3>, ankle: bool, toe: bool, decay: f32) -> Vec3 {
    let flat = |v: Vec3| Vec3::new(v.x, 0.0, v.z);
    let mut goal = raw + pin.correction;
    let mut pinned = true;
    match (ankle, toe, toe_offset) {
        (true, _, _) => {
            let at = *pin.ankle.get_or_insert(flat(goal));
            goal = at + Vec3::Y * goal.y;
            pin.toe = None;
        }
        (false, true, Some(offset)) => {
            let toe_goal = goal + offset;
            let at = *pin.toe.get_or_insert(flat(toe_goal));
            goal = at + Vec3::Y * toe_goal.y - offset;
            pin.ankle = None;
        }
        _ => {
            pinned = false;
            pin.ankle = None;
            pin.toe = None;
        }
    }
    if pinned {
        pin.correction = flat(goal - raw);
    } else {
        pin.correction *= decay;
    }
    goal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_foot_holds_then_eases_out() {
        let mut pin = Pin::default();
        let a = pin_foot(&mut pin, Vec3::new(0.0, 0.1, 0.0), None, true, false, 0.5);
        let b = pin_foot(&mut pin, Vec3::new(0.2, 0.1, 0.0), None, true, false, 0.5);
        assert_eq!(a, b);
        // Released: the 0.2 correction halves each frame.
        let c = pin_foot(&mut pin, Vec3::new(0.4, 0.1, 0.0), None, false, false, 0.5);
        assert!((c.x - 0.2).abs() < 1e-6, "{c}");
        let d = pin_foot(&mut pin, Vec3::new(0.4, 0.1, 0.0), None, false, false, 0.5);
        assert!((d.x - 0.3).abs() < 1e-6, "{d}");
    }

    #[test]
    fn toe_contact_pins_the_toes_not_the_ankle() {
        let mut pin = Pin::default();
        let off = Vec3::new(0.0, -0.05, 0.1);
        let a = pin_foot(&mut pin, Vec3::ZERO, Some(off), false, true, 0.5);
        // The foot rotates about the toes: the offset changes, the toes stay.
        let off2 = Vec3::new(0.0, -0.08, 0.06);
        let b = pin_foot(&mut pin, Vec3::new(0.1, 0.0, 0.0), Some(off2), false, true, 0.5);
        let (ta, tb) = (a + off, b + off2);
        assert!((ta.x - tb.x).abs() < 1e-6 && (ta.z - tb.z).abs() < 1e-6);
    }
}
