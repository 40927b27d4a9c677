//! IK-Rig encoding (`docs/ALGORITHMS.md` §7): each frame as a ground-projected global frame and
//! per-chain goals (root, normalised effector offset, pole, effector orientation) that do not
//! depend on the character's proportions or bone count.
//!
//! Frames. World vectors are first expressed in the skeleton's canonical frame (its rest facing
//! [`RigInfo::facing`] undone: x = left, y = up, z = forward), then in the per-frame ground
//! frame `G` (origin = hips on the ground, yaw = the hips' forward). Orientations are world
//! deltas from the rest pose, `O = G⁻¹ · R · R_rest⁻¹ · F`, so the rest pose encodes as the
//! identity on every skeleton.

use crate::humanoid::{ChainKind, Role};
use crate::rig::{Frames, RigInfo};
use glam::{Quat, Vec2, Vec3};
use rigml_core::Skeleton;

/// Contact height above a joint's rest clearance, in hip heights (METRICS.md §7 `h_c`).
pub const CONTACT_HEIGHT: f32 = 0.05;
/// Contact horizontal speed, in hip heights per second (METRICS.md §7 `v_c`).
pub const CONTACT_SPEED: f32 = 0.5;

/// One chain's goals in the ground frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChainGoal {
    /// Chain root position relative to the ground-frame origin, in hip heights.
    pub root: Vec3,
    /// `(effector - root) / chain_length`.
    pub offset: Vec3,
    /// Unit direction from the chain axis towards the middle joint (knee, elbow).
    pub pole: Vec3,
    /// Effector orientation (world delta from rest, in the ground frame).
    pub rotation: Quat,
}

impl ChainGoal {
    /// The goal of a chain the skeleton does not have: at the origin, no reach, no turn.
    pub const NEUTRAL: ChainGoal = ChainGoal {
        root: Vec3::ZERO,
        offset: Vec3::ZERO,
        pole: Vec3::Z,
        rotation: Quat::IDENTITY,
    };
}

/// One encoded frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RigFrame {
    /// Ground-frame origin (hips projected on the ground) in canonical x, z, in hip heights.
    pub origin: Vec2,
    /// Ground-frame forward in canonical x, z (unit).
    pub forward: Vec2,
    /// Hips position in the ground frame, in hip heights.
    pub hips: Vec3,
    /// Hips orientation (world delta from rest, in the ground frame).
    pub hips_rotation: Quat,
    /// Goals in [`ChainKind::ALL`] order.
    pub chains: [ChainGoal; 6],
    /// Left, right shoulder (clavicle) rotation relative to the spine's end, canonical frame;
    /// identity when the skeleton has no shoulder joints.
    pub shoulders: [Quat; 2],
    /// Left, right toes rotation relative to the foot, canonical frame; identity if no toes.
    pub toes: [Quat; 2],
    /// Contacts of the left ankle, left toes, right ankle, right toes (METRICS.md §7 thresholds,
    /// heights above each joint's rest clearance).
    pub contacts: [bool; 4],
    /// Left, right ankle height above the ground minus its rest height above the lowest point
    /// of the legs, in hip heights: 0 when a foot stands flat on the ground. Decoding places
    /// the ankles at this height, so feet on the ground stay on the ground whatever the legs'
    /// proportions.
    pub foot_heights: [f32; 2],
}

/// An encoded clip.
#[derive(Debug, Clone, PartialEq)]
pub struct RigClip {
    pub name: String,
    pub fps: f32,
    /// Time of each frame in seconds.
    pub times: Vec<f32>,
    pub frames: Vec<RigFrame>,
}

/// The default pole of each chain in the ground frame (spine/neck: forward; legs: knees
/// forward; arms: elbows back), used when a chain is straight.
pub fn default_pole(kind: ChainKind) -> Vec3 {
    match kind {
        ChainKind::LeftArm | ChainKind::RightArm => -Vec3::Z,
        _ => Vec3::Z,
    }
}

/// Encode every frame of `frames` (poses of `skeleton`, measured by `info`).
pub fn encode(skeleton: &Skeleton, info: &RigInfo, frames: &Frames, name: &str) -> RigClip {
    let h = info.hip_height;
    let facing = info.facing;
    let facing_inv = facing.inverse();
    let map = &info.map;
    let hips = map.joint(Role::Hips).unwrap_or(0);
    let spine = map.chain(ChainKind::Spine);
    let branch = spine.last().copied().unwrap_or(hips);
    let mut previous_forward = Vec3::Z;
    let mut previous_poles = ChainKind::ALL.map(default_pole);
    let mut out = Vec::with_capacity(frames.poses.len());
    let mut positions = Vec::with_capacity(frames.poses.len());
    for pose in &frames.poses {
        let world = skeleton.world_matrices(&pose.local);
        let pos: Vec<Vec3> = world.iter().map(|m| m.w_axis.truncate()).collect();
        let delta = |j: usize| (crate::rig::world_rotation(&world[j]) * info.rest_rotations[j].inverse()).normalize();
        // Ground frame: the hips' forward, else the chest's, else the previous frame's.
        let flat_forward = |j: usize| {
            let f = facing_inv * (delta(j) * (facing * Vec3::Z));
            Vec3::new(f.x, 0.0, f.z)
        };
        let forward = [hips, branch]
            .into_iter()
            .map(flat_forward)
            .find(|f| f.length() > 0.2)
            .and_then(Vec3::try_normalize)
            .unwrap_or(previous_forward);
        previous_forward = forward;
        let yaw = Quat::from_rotation_y(forward.x.atan2(forward.z));
        let g = facing * yaw;
        let g_inv = g.inverse();
        // Ground plane y = 0 of the canonical frame (METRICS.md §7).
        let hips_c = facing_inv * pos[hips];
        let origin_c = Vec3::new(hips_c.x, 0.0, hips_c.z) / h;
        let origin_w = facing * origin_c * h;
        let orient = |j: usize| (g_inv * delta(j) * facing).normalize();
        let relative = |parent: Option<usize>, child: Option<usize>| match (parent, child) {
            (Some(p), Some(c)) => (facing_inv * delta(p).inverse() * delta(c) * facing).normalize(),
            _ => Quat::IDENTITY,
        };
        let mut chains = [ChainGoal::NEUTRAL; 6];
        for (k, kind) in ChainKind::ALL.into_iter().enumerate() {
            let joints = map.chain(kind);
            let (Some(&root), Some(&end)) = (joints.first(), joints.last()) else {
                continue;
            };
            let (r, m, e) = (pos[root], pos[joints[joints.len() / 2]], pos[end]);
            let axis = e - r;
            let along = m - r;
            let perp = match axis.try_normalize() {
                Some(a) => along - along.dot(a) * a,
                None => Vec3::ZERO,
            };
            let pole = if perp.length() > 1e-3 * info.chain_lengths[k] {
                (g_inv * perp).normalize()
            } else {
                previous_poles[k]
            };
            previous_poles[k] = pole;
            chains[k] = ChainGoal {
                root: g_inv * (r - origin_w) / h,
                offset: g_inv * axis / info.chain_lengths[k],
                pole,
                rotation: orient(end),
            };
        }
        out.push(RigFrame {
            origin: Vec2::new(origin_c.x, origin_c.z),
            forward: Vec2::new(forward.x, forward.z),
            hips: g_inv * (pos[hips] - origin_w) / h,
            hips_rotation: orient(hips),
            chains,
            shoulders: [
                relative(Some(branch), map.joint(Role::LeftShoulder)),
                relative(Some(branch), map.joint(Role::RightShoulder)),
            ],
            toes: [
                relative(map.joint(Role::LeftFoot), map.joint(Role::LeftToes)),
                relative(map.joint(Role::RightFoot), map.joint(Role::RightToes)),
            ],
            contacts: [false; 4],
            foot_heights: [Role::LeftFoot, Role::RightFoot].map(|r| {
                map.joint(r)
                    .map_or(0.0, |j| ((facing_inv * pos[j]).y - info.ankle_clearance(j)) / h)
            }),
        });
        positions.push(pos);
    }
    mark_contacts(info, frames.fps, &positions, &mut out);
    keep_hemispheres(&mut out);
    RigClip {
        name: name.to_string(),
        fps: frames.fps,
        times: frames.times.iter().map(|t| t - frames.times[0]).collect(),
        frames: out,
    }
}

/// Contacts of the ankles and toes: height above the joint's rest clearance below
/// [`CONTACT_HEIGHT`]·H and horizontal speed below [`CONTACT_SPEED`]·H/s, in the canonical frame.
fn mark_contacts(info: &RigInfo, fps: f32, positions: &[Vec<Vec3>], out: &mut [RigFrame]) {
    let h = info.hip_height;
    let facing_inv = info.facing.inverse();
    let hips = info.map.joint(Role::Hips).unwrap_or(0);
    let ground = (facing_inv * info.rest_positions[hips]).y - h;
    let joints = [Role::LeftFoot, Role::LeftToes, Role::RightFoot, Role::RightToes].map(|r| info.map.joint(r));
    for (slot, joint) in joints.into_iter().enumerate() {
        let Some(j) = joint else { continue };
        let clearance = (facing_inv * info.rest_positions[j]).y - ground;
        let track: Vec<Vec3> = positions.iter().map(|p| facing_inv * p[j]).collect();
        for (f, c) in contact_flags(&track, clearance, h, fps).into_iter().enumerate() {
            out[f].contacts[slot] = c;
        }
    }
}

/// Contact flags of one joint track (canonical frame, ground y = 0): height minus `clearance`
/// below [`CONTACT_HEIGHT`]·`h` and horizontal speed (central difference, one-sided at the
/// ends) below [`CONTACT_SPEED`]·`h` per second. With `clearance` 0 this is METRICS.md §7.
pub fn contact_flags(track: &[Vec3], clearance: f32, h: f32, fps: f32) -> Vec<bool> {
    let n = track.len();
    (0..n)
        .map(|f| {
            let (a, b) = (f.saturating_sub(1), (f + 1).min(n - 1));
            let steps = (b - a).max(1) as f32;
            let d = track[b] - track[a];
            let speed = (d.x * d.x + d.z * d.z).sqrt() * fps / steps;
            track[f].y - clearance < CONTACT_HEIGHT * h && speed < CONTACT_SPEED * h
        })
        .collect()
}

/// Flip quaternions into the hemisphere of the previous frame's, slot by slot.
fn keep_hemispheres(frames: &mut [RigFrame]) {
    fn fix(prev: Quat, q: &mut Quat) {
        if prev.dot(*q) < 0.0 {
            *q = -*q;
        }
    }
    for f in 1..frames.len() {
        let prev = frames[f - 1];
        let cur = &mut frames[f];
        fix(prev.hips_rotation, &mut cur.hips_rotation);
        for k in 0..6 {
            fix(prev.chains[k].rotation, &mut cur.chains[k].rotation);
        }
        for k in 0..2 {
            fix(prev.shoulders[k], &mut cur.shoulders[k]);
            fix(prev.toes[k], &mut cur.toes[k]);
        }
    }
}
