//! The per-frame vector the motion model reads and writes: one IK-Rig frame
//! ([`rigml_anim::encode::RigFrame`]) as [`FEATURES`] numbers that do not depend on where the
//! character stands or which way it faces (root motion as a velocity in its own ground frame),
//! with rotations as 6D vectors (two matrix columns: continuous, unlike quaternions or angles).
//!
//! Also what moves IK-Rig frames between the clip's frame rate and the model's
//! ([`MODEL_FPS`]): averaging down ([`resample_down`], which also removes some noise) and
//! interpolating back up ([`resample_up`]), and left-right mirroring ([`mirror`]) for
//! augmentation.

use glam::{Mat3, Quat, Vec2, Vec3};
use rigml_anim::cleanup::contacts::FLOOR_PERCENTILE;
use rigml_anim::encode::{ChainGoal, RigFrame};
use std::ops::Range;

/// Frame rate the model works at.
pub const MODEL_FPS: f32 = 30.0;

/// Numbers per frame.
pub const FEATURES: usize = 128;

/// Contact slots per frame (left ankle, left toes, right ankle, right toes, as
/// [`RigFrame::contacts`]).
pub const CONTACTS: usize = 4;

/// A rotation as its matrix's first two columns.
pub fn rot6(q: Quat) -> [f32; 6] {
    let m = Mat3::from_quat(q.normalize());
    [m.x_axis.x, m.x_axis.y, m.x_axis.z, m.y_axis.x, m.y_axis.y, m.y_axis.z]
}

/// The rotation nearest to a 6D vector (Gram–Schmidt); identity for a degenerate vector.
pub fn unrot6(v: &[f32]) -> Quat {
    let a = Vec3::new(v[0], v[1], v[2]);
    let b = Vec3::new(v[3], v[4], v[5]);
    let Some(x) = a.try_normalize() else {
        return Quat::IDENTITY;
    };
    let Some(y) = (b - b.dot(x) * x).try_normalize() else {
        return Quat::IDENTITY;
    };
    Quat::from_mat3(&Mat3::from_cols(x, y, x.cross(y))).normalize()
}

/// Yaw angle of a ground-frame forward (x, z).
fn yaw(forward: Vec2) -> f32 {
    forward.x.atan2(forward.y)
}

/// Wrap an angle to (-π, π].
fn wrap(a: f32) -> f32 {
    let t = std::f32::consts::TAU;
    let mut a = a % t;
    if a > std::f32::consts::PI {
        a -= t;
    } else if a <= -std::f32::consts::PI {
        a += t;
    }
    a
}

/// The feature vector of `frame`, its root motion measured from `previous` (none: at rest).
/// Layout: root velocity in the frame's own ground axes (x, z) and yaw change (0..3), hips
/// position (3..6), hips rotation (6..12), per chain root, offset, pole and rotation
/// (12..102, 15 each), shoulders and toes (102..126), foot heights (126..128).
pub fn to_vector(previous: Option<&RigFrame>, frame: &RigFrame) -> [f32; FEATURES] {
    let mut v = [0.0f32; FEATURES];
    if let Some(p) = previous {
        let d = frame.origin - p.origin;
        let (s, c) = yaw(frame.forward).sin_cos();
        // Into the current ground frame: rotate by -yaw (x right-of-forward... canonical x, z).
        v[0] = c * d.x - s * d.y;
        v[1] = s * d.x + c * d.y;
        v[2] = wrap(yaw(frame.forward) - yaw(p.forward));
    }
    let mut i = 3;
    let mut put = |values: &[f32]| {
        v[i..i + values.len()].copy_from_slice(values);
        i += values.len();
    };
    put(&frame.hips.to_array());
    put(&rot6(frame.hips_rotation));
    for goal in &frame.chains {
        put(&goal.root.to_array());
        put(&goal.offset.to_array());
        put(&goal.pole.to_array());
        put(&rot6(goal.rotation));
    }
    for q in frame.shoulders.iter().chain(&frame.toes) {
        put(&rot6(*q));
    }
    put(&frame.foot_heights);
    debug_assert_eq!(i, FEATURES);
    v
}

/// The frame a vector describes, its root placed by integrating the velocity from `previous`
/// (none: at the origin, facing +z). Contacts are copied from `contacts`.
pub fn from_vector(previous: Option<&RigFrame>, v: &[f32], contacts: [bool; CONTACTS]) -> RigFrame {
    let (origin, forward) = match previous {
        Some(p) => {
            let heading = yaw(p.forward) + v[2];
            let (s, c) = heading.sin_cos();
            // Inverse of the rotation in `to_vector`.
            let d = Vec2::new(c * v[0] + s * v[1], -s * v[0] + c * v[1]);
            (p.origin + d, Vec2::new(s, c))
        }
        None => (Vec2::ZERO, Vec2::Y),
    };
    let v3 = |i: usize| Vec3::new(v[i], v[i + 1], v[i + 2]);
    let unit = |i: usize, fallback: Vec3| v3(i).try_normalize().unwrap_or(fallback);
    let mut chains = [ChainGoal::NEUTRAL; 6];
    for (k, goal) in chains.iter_mut().enumerate() {
        let b = 12 + 15 * k;
        *goal = ChainGoal {
            root: v3(b),
            offset: v3(b + 3),
            pole: unit(b + 6, Vec3::Z),
            rotation: unrot6(&v[b + 9..b + 15]),
        };
    }
    let q = |i: usize| unrot6(&v[i..i + 6]);
    RigFrame {
        origin,
        forward,
        hips: v3(3),
        hips_rotation: q(6),
        chains,
        shoulders: [q(102), q(108)],
        toes: [q(114), q(120)],
        contacts,
        foot_heights: [v[126], v[127]],
    }
}

/// Vector indices of heights above the ground (y = 0 of the canonical frame): the hips, every
/// chain's root and both ankles ([`to_vector`]'s layout). Lowering a clip by its own floor
/// ([`floor_of`], [`lower`]) moves exactly these.
pub const HEIGHTS: [usize; 9] = [4, 13, 28, 43, 58, 73, 88, 126, 127];

/// The floor a clip's feet stand on, in hip heights above y = 0: over the frames marked `known`
/// (all where `known` is short), the percentile of both ankles' heights (above their rest
/// clearance) that `rigml clean`'s contact detector takes as a joint's floor
/// ([`FLOOR_PERCENTILE`]); 0 for no frames. Capture puts the floor where it likes (all but two
/// train clips' lie from 0.18 H below the ground the encoder assumes to 0.16 H above, several times
/// the 0.05 H a contact is judged by); a model that reads heights above this floor need not
/// guess it.
pub fn floor_of(vectors: &[[f32; FEATURES]], known: &[bool]) -> f32 {
    let mut heights: Vec<f32> = vectors
        .iter()
        .enumerate()
        .filter(|(f, _)| known.get(*f).copied().unwrap_or(true))
        .flat_map(|(_, v)| [v[126], v[127]])
        .filter(|h| h.is_finite())
        .collect();
    if heights.is_empty() {
        return 0.0;
    }
    heights.sort_by(f32::total_cmp);
    heights[((heights.len() - 1) as f64 * FLOOR_PERCENTILE).round() as usize]
}

/// Lower every frame of `vectors` by `dy` hip heights (the [`HEIGHTS`] indices): `lower(v, f)`
/// stands a clip on its floor `f`, `lower(v, -f)` lifts it back.
pub fn lower(vectors: &mut [[f32; FEATURES]], dy: f32) {
    for v in vectors {
        for &k in &HEIGHTS {
            v[k] -= dy;
        }
    }
}

/// Vectors of every frame of a clip (the first frame's root velocity is zero).
pub fn to_vectors(frames: &[RigFrame]) -> Vec<[f32; FEATURES]> {
    (0..frames.len())
        .map(|f| to_vector(f.checked_sub(1).map(|p| &frames[p]), &frames[f]))
        .collect()
}

/// Frames from vectors, the root starting at `start`'s origin and facing (the root motion is
/// integrated from there); contacts from `contacts` (false where it is short).
pub fn from_vectors(start: &RigFrame, vectors: &[[f32; FEATURES]], contacts: &[[bool; CONTACTS]]) -> Vec<RigFrame> {
    let mut out: Vec<RigFrame> = Vec::with_capacity(vectors.len());
    for (f, v) in vectors.iter().enumerate() {
        let c = contacts.get(f).copied().unwrap_or_default();
        let frame = match out.last() {
            Some(p) => from_vector(Some(p), v, c),
            None => {
                let mut first = from_vector(None, v, c);
                first.origin = start.origin;
                first.forward = start.forward;
                first
            }
        };
        out.push(frame);
    }
    out
}

/// Mirror a quaternion of the canonical frame across its x = 0 plane (left ↔ right).
fn mirror_quat(q: Quat) -> Quat {
    Quat::from_xyzw(q.x, -q.y, -q.z, q.w)
}

fn mirror_vec(v: Vec3) -> Vec3 {
    Vec3::new(-v.x, v.y, v.z)
}

/// The frame of the left-right mirrored motion (on a left-right symmetric skeleton): x
/// negated, left and right chains, shoulders, toes, foot heights and contacts swapped.
pub fn mirror(frame: &RigFrame) -> RigFrame {
    let chain = |k: usize| {
        let g = frame.chains[k];
        ChainGoal {
            root: mirror_vec(g.root),
            offset: mirror_vec(g.offset),
            pole: mirror_vec(g.pole),
            rotation: mirror_quat(g.rotation),
        }
    };
    // ChainKind::ALL: spine, neck, left arm, right arm, left leg, right leg.
    let c = frame.contacts;
    RigFrame {
        origin: Vec2::new(-frame.origin.x, frame.origin.y),
        forward: Vec2::new(-frame.forward.x, frame.forward.y),
        hips: mirror_vec(frame.hips),
        hips_rotation: mirror_quat(frame.hips_rotation),
        chains: [chain(0), chain(1), chain(3), chain(2), chain(5), chain(4)],
        shoulders: [mirror_quat(frame.shoulders[1]), mirror_quat(frame.shoulders[0])],
        toes: [mirror_quat(frame.toes[1]), mirror_quat(frame.toes[0])],
        contacts: [c[2], c[3], c[0], c[1]],
        foot_heights: [frame.foot_heights[1], frame.foot_heights[0]],
    }
}

/// Sum of sign-aligned quaternions, normalised (a good mean of nearby rotations).
fn mean_quat(qs: impl Iterator<Item = Quat>) -> Quat {
    let mut sum = glam::Vec4::ZERO;
    let mut first: Option<Quat> = None;
    for q in qs {
        let r = *first.get_or_insert(q);
        let q = if r.dot(q) < 0.0 { -q } else { q };
        sum += glam::Vec4::from(q);
    }
    match sum.try_normalize() {
        Some(v) => Quat::from_vec4(v),
        None => Quat::IDENTITY,
    }
}

/// The mean of a run of frames (vectors averaged, directions and rotations renormalised,
/// contacts by majority).
pub fn mean_frame(frames: &[RigFrame]) -> RigFrame {
    let n = frames.len().max(1) as f32;
    let avg2 = |f: &dyn Fn(&RigFrame) -> Vec2| frames.iter().map(f).sum::<Vec2>() / n;
    let avg3 = |f: &dyn Fn(&RigFrame) -> Vec3| frames.iter().map(f).sum::<Vec3>() / n;
    let first = frames[0];
    let mut chains = first.chains;
    for (k, goal) in chains.iter_mut().enumerate() {
        *goal = ChainGoal {
            root: avg3(&|f| f.chains[k].root),
            offset: avg3(&|f| f.chains[k].offset),
            pole: avg3(&|f| f.chains[k].pole)
                .try_normalize()
                .unwrap_or(first.chains[k].pole),
            rotation: mean_quat(frames.iter().map(|f| f.chains[k].rotation)),
        };
    }
    let mut contacts = [false; CONTACTS];
    for (s, c) in contacts.iter_mut().enumerate() {
        *c = 2 * frames.iter().filter(|f| f.contacts[s]).count() >= frames.len();
    }
    RigFrame {
        origin: avg2(&|f| f.origin),
        forward: avg2(&|f| f.forward).try_normalize().unwrap_or(first.forward),
        hips: avg3(&|f| f.hips),
        hips_rotation: mean_quat(frames.iter().map(|f| f.hips_rotation)),
        chains,
        shoulders: [0, 1].map(|s| mean_quat(frames.iter().map(|f| f.shoulders[s]))),
        toes: [0, 1].map(|s| mean_quat(frames.iter().map(|f| f.toes[s]))),
        contacts,
        foot_heights: [0, 1].map(|s| frames.iter().map(|f| f.foot_heights[s]).sum::<f32>() / n),
    }
}

/// The clip frames (a range of indices) that make model frame `i` of a clip of `n` frames at
/// `fps`, as [`resample_down`] averages them: the nearest clip frame and those
/// strictly within half a model frame of it (fewer near the ends, the window centred). For
/// clips at or below the model's rate, the nearest frame.
pub fn model_frame_window(i: usize, n: usize, fps: f32) -> Range<usize> {
    let centre = ((i as f32 * fps / MODEL_FPS).round() as usize).min(n.saturating_sub(1));
    if fps <= MODEL_FPS * 1.01 {
        return centre..centre + 1;
    }
    let half = 0.5 * fps / MODEL_FPS;
    let radius = ((half - 1e-3).floor().max(0.0) as usize)
        .min(centre)
        .min(n - 1 - centre);
    centre - radius..centre + radius + 1
}

/// Frames at [`MODEL_FPS`] from frames at `fps`: model frame `i` (time `i / MODEL_FPS`) is the
/// mean of the clip's frames strictly within half a model frame of it. A clip at or below the model's
/// rate is returned as it is (`None`: nothing to do).
pub fn resample_down(frames: &[RigFrame], fps: f32) -> Option<Vec<RigFrame>> {
    if fps.is_nan() || fps <= MODEL_FPS * 1.01 || frames.is_empty() {
        return None;
    }
    let duration = (frames.len() - 1) as f32 / fps;
    let count = (duration * MODEL_FPS).floor() as usize + 1;
    Some(
        (0..count)
            .map(|i| mean_frame(&frames[model_frame_window(i, frames.len(), fps)]))
            .collect(),
    )
}

/// Interpolate one frame between `a` and `b` at `t` in [0, 1] (contacts from the nearer).
pub fn lerp_frame(a: &RigFrame, b: &RigFrame, t: f32) -> RigFrame {
    let q = |x: Quat, y: Quat| x.slerp(y, t);
    let l3 = |x: Vec3, y: Vec3| x.lerp(y, t);
    let mut chains = a.chains;
    for (k, goal) in chains.iter_mut().enumerate() {
        let (x, y) = (a.chains[k], b.chains[k]);
        *goal = ChainGoal {
            root: l3(x.root, y.root),
            offset: l3(x.offset, y.offset),
            pole: l3(x.pole, y.pole).try_normalize().unwrap_or(x.pole),
            rotation: q(x.rotation, y.rotation),
        };
    }
    RigFrame {
        origin: a.origin.lerp(b.origin, t),
        forward: a.forward.lerp(b.forward, t).try_normalize().unwrap_or(a.forward),
        hips: l3(a.hips, b.hips),
        hips_rotation: q(a.hips_rotation, b.hips_rotation),
        chains,
        shoulders: [0, 1].map(|s| q(a.shoulders[s], b.shoulders[s])),
        toes: [0, 1].map(|s| q(a.toes[s], b.toes[s])),
        contacts: if t < 0.5 { a.contacts } else { b.contacts },
        foot_heights: [0, 1].map(|s| a.foot_heights[s] + (b.foot_heights[s] - a.foot_heights[s]) * t),
    }
}

/// `native` (frames at `fps`) moved by the change the model made at its own rate, from `input`
/// to `output` (both at [`MODEL_FPS`]): both are interpolated to `fps` and their difference is
/// added to `native` (positions and heights added, rotations and heading turned by the relative
/// rotation, poles added and renormalised; contacts the output's). Unlike interpolating the
/// output itself, this keeps what `native` has above the model's rate: a clean clip the model
/// leaves alone comes back as it went in, not averaged down and up again.
pub fn apply_at_rate(native: &[RigFrame], input: &[RigFrame], output: &[RigFrame], fps: f32) -> Vec<RigFrame> {
    let n = native.len();
    if input.is_empty() || output.is_empty() {
        return native.to_vec();
    }
    let from = resample_up(input, fps, n);
    let to = resample_up(output, fps, n);
    native
        .iter()
        .zip(from.iter().zip(&to))
        .map(|(x, (a, b))| {
            let turn = |q: Quat, qa: Quat, qb: Quat| (qb * qa.inverse() * q).normalize();
            let mut out = *x;
            out.origin = x.origin + (b.origin - a.origin);
            let dyaw = yaw(b.forward) - yaw(a.forward);
            let (s, c) = dyaw.sin_cos();
            out.forward = Vec2::new(c * x.forward.x + s * x.forward.y, -s * x.forward.x + c * x.forward.y);
            out.hips = x.hips + (b.hips - a.hips);
            out.hips_rotation = turn(x.hips_rotation, a.hips_rotation, b.hips_rotation);
            for k in 0..out.chains.len() {
                let (g, ga, gb) = (x.chains[k], a.chains[k], b.chains[k]);
                out.chains[k] = ChainGoal {
                    root: g.root + (gb.root - ga.root),
                    offset: g.offset + (gb.offset - ga.offset),
                    pole: (g.pole + (gb.pole - ga.pole)).try_normalize().unwrap_or(g.pole),
                    rotation: turn(g.rotation, ga.rotation, gb.rotation),
                };
            }
            for s in 0..2 {
                out.shoulders[s] = turn(x.shoulders[s], a.shoulders[s], b.shoulders[s]);
                out.toes[s] = turn(x.toes[s], a.toes[s], b.toes[s]);
                out.foot_heights[s] = x.foot_heights[s] + (b.foot_heights[s] - a.foot_heights[s]);
            }
            out.contacts = b.contacts;
            out
        })
        .collect()
}

/// `count` frames at `fps` from frames at [`MODEL_FPS`] (the inverse of [`resample_down`]).
pub fn resample_up(model: &[RigFrame], fps: f32, count: usize) -> Vec<RigFrame> {
    interpolate(model, MODEL_FPS, fps, count)
}

/// `count` frames at `to` fps interpolated from frames at `from` fps: frame `f` lies between
/// the two source frames around time `f / to` (the last source frame past the end).
pub fn interpolate(frames: &[RigFrame], from: f32, to: f32, count: usize) -> Vec<RigFrame> {
    if frames.is_empty() {
        return Vec::new();
    }
    (0..count)
        .map(|f| {
            let x = f as f32 * from / to;
            let i = (x.floor() as usize).min(frames.len() - 1);
            let j = (i + 1).min(frames.len() - 1);
            lerp_frame(&frames[i], &frames[j], (x - i as f32).clamp(0.0, 1.0))
        })
        .collect()
}

/// Frames of a clip at `fps` brought to [`MODEL_FPS`]: averaged down from faster clips,
/// interpolated up from slower ones, as they are within 1 %.
pub fn to_model_rate(frames: &[RigFrame], fps: f32) -> Vec<RigFrame> {
    if let Some(down) = resample_down(frames, fps) {
        return down;
    }
    if fps < MODEL_FPS * 0.99 && fps > 0.0 && !frames.is_empty() {
        let duration = (frames.len() - 1) as f32 / fps;
        let count = (duration * MODEL_FPS).floor() as usize + 1;
        return interpolate(frames, fps, MODEL_FPS, count);
    }
    frames.to_vec()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A frame whose every feature depends on `seed` (for tests here and in other modules).
    pub(crate) fn frame(seed: f32) -> RigFrame {
        let q = |a: f32| Quat::from_euler(glam::EulerRot::YXZ, a, 0.3 * a, -0.2 * a);
        let mut chains = [ChainGoal::NEUTRAL; 6];
        for (k, g) in chains.iter_mut().enumerate() {
            let s = seed + k as f32;
            *g = ChainGoal {
                root: Vec3::new(s, 0.5, -s),
                offset: Vec3::new(0.1 * s, -0.8, 0.2),
                pole: Vec3::new(0.3, 0.1 * s, 1.0).normalize(),
                rotation: q(0.2 * s),
            };
        }
        RigFrame {
            origin: Vec2::new(seed, 2.0 * seed),
            forward: Vec2::new((0.3 * seed).sin(), (0.3 * seed).cos()),
            hips: Vec3::new(0.01, 1.0, 0.02 * seed),
            hips_rotation: q(0.1 * seed),
            chains,
            shoulders: [q(0.05), q(-0.05 * seed)],
            toes: [q(0.4), q(0.1)],
            contacts: [seed > 0.5, false, true, seed < 0.5],
            foot_heights: [0.01 * seed, 0.0],
        }
    }

    fn close(a: &RigFrame, b: &RigFrame) -> bool {
        let v = |x: &RigFrame| {
            let mut v = to_vector(None, x).to_vec();
            v.extend([x.origin.x, x.origin.y, x.forward.x, x.forward.y]);
            v
        };
        v(a).iter().zip(v(b)).all(|(x, y)| (x - y).abs() < 1e-4)
    }

    #[test]
    fn a_change_at_the_model_rate_moves_the_native_frames_by_as_much() {
        // 120 fps frames with detail between the model's frames; the model's input is them
        // averaged down.
        let native: Vec<RigFrame> = (0..41)
            .map(|i| frame(0.05 * i as f32 + 0.02 * (i % 2) as f32))
            .collect();
        let input = resample_down(&native, 120.0).unwrap();
        // No change: the native frames come back as they are (their detail kept).
        let same = apply_at_rate(&native, &input, &input, 120.0);
        assert!(native.iter().zip(&same).all(|(a, b)| close(a, b)));
        // A constant change: the hips 0.1 higher, the heading turned 0.2 rad, the first
        // chain's rotation turned 0.3 rad about y.
        let turn = Quat::from_rotation_y(0.3);
        let output: Vec<RigFrame> = input
            .iter()
            .map(|f| {
                let mut g = *f;
                g.hips.y += 0.1;
                let (s, c) = 0.2f32.sin_cos();
                g.forward = Vec2::new(c * f.forward.x + s * f.forward.y, -s * f.forward.x + c * f.forward.y);
                g.chains[0].rotation = turn * f.chains[0].rotation;
                g
            })
            .collect();
        let moved = apply_at_rate(&native, &input, &output, 120.0);
        for (a, b) in native.iter().zip(&moved) {
            assert!((b.hips.y - a.hips.y - 0.1).abs() < 1e-5);
            assert!((wrap(yaw(b.forward) - yaw(a.forward)) - 0.2).abs() < 1e-4);
            assert!(b.chains[0].rotation.angle_between(turn * a.chains[0].rotation) < 1e-3);
            assert!((b.chains[1].root - a.chains[1].root).length() < 1e-5);
        }
    }

    #[test]
    fn vectors_round_trip_with_the_root_path() {
        let frames: Vec<RigFrame> = (0..6).map(|i| frame(0.3 * i as f32)).collect();
        let vectors = to_vectors(&frames);
        let contacts: Vec<[bool; 4]> = frames.iter().map(|f| f.contacts).collect();
        let back = from_vectors(&frames[0], &vectors, &contacts);
        for (a, b) in frames.iter().zip(&back) {
            assert!(close(a, b), "{a:?}\n{b:?}");
            assert_eq!(a.contacts, b.contacts);
        }
    }

    #[test]
    fn root_velocity_does_not_depend_on_where_or_which_way() {
        let a = frame(0.4);
        let b = frame(0.7);
        let turn = |f: &RigFrame, angle: f32, shift: Vec2| {
            let (s, c) = angle.sin_cos();
            let r = |v: Vec2| Vec2::new(c * v.x + s * v.y, -s * v.x + c * v.y);
            RigFrame {
                origin: r(f.origin) + shift,
                forward: r(f.forward),
                ..*f
            }
        };
        let v = to_vector(Some(&a), &b);
        let w = to_vector(
            Some(&turn(&a, 1.1, Vec2::new(5.0, -3.0))),
            &turn(&b, 1.1, Vec2::new(5.0, -3.0)),
        );
        for (x, y) in v.iter().zip(&w) {
            assert!((x - y).abs() < 1e-4, "{v:?}\n{w:?}");
        }
    }

    #[test]
    fn mirroring_twice_is_the_identity_and_swaps_sides() {
        let f = frame(0.8);
        let m = mirror(&f);
        assert!(close(&mirror(&m), &f));
        assert_eq!(m.contacts, [f.contacts[2], f.contacts[3], f.contacts[0], f.contacts[1]]);
        assert!((m.chains[2].offset.x + f.chains[3].offset.x).abs() < 1e-6);
        // A yaw to the left mirrors to the same yaw to the right.
        let turned = Quat::from_rotation_y(0.5);
        assert!(mirror_quat(turned).angle_between(Quat::from_rotation_y(-0.5)) < 1e-5);
    }

    #[test]
    fn resampling_down_and_up_keeps_smooth_motion() {
        // A 120 fps clip whose origin moves steadily: averaging and interpolating keep it.
        let frames: Vec<RigFrame> = (0..121)
            .map(|i| RigFrame {
                origin: Vec2::new(i as f32 / 120.0, 0.0),
                ..frame(0.5)
            })
            .collect();
        let down = resample_down(&frames, 120.0).unwrap();
        assert_eq!(down.len(), 31);
        let up = resample_up(&down, 120.0, frames.len());
        assert_eq!(up.len(), frames.len());
        for (a, b) in frames.iter().zip(&up).skip(2).take(116) {
            assert!((a.origin.x - b.origin.x).abs() < 1e-4, "{} {}", a.origin.x, b.origin.x);
        }
        assert!(resample_down(&frames, 30.0).is_none());
    }

    #[test]
    fn six_d_rotations_round_trip() {
        for a in [0.0f32, 0.5, 2.0, 3.1] {
            let q = Quat::from_axis_angle(Vec3::new(1.0, 2.0, -0.5).normalize(), a);
            // (angle_between's acos near 1 resolves ~5e-4 rad in f32)
            assert!(unrot6(&rot6(q)).angle_between(q) < 2e-3);
        }
        assert_eq!(unrot6(&[0.0; 6]), Quat::IDENTITY);
    }

    #[test]
    fn a_clip_is_lowered_by_its_ankles_low_percentile() {
        // 100 frames whose ankles stand at 0.2 and 0.3 and lift to 1.0 in every other frame:
        // the floor is the 5th percentile of the 200 ankle heights (0.2), over the given frames.
        let vectors: Vec<[f32; FEATURES]> = (0..100)
            .map(|f| {
                let mut v = [0.5f32; FEATURES];
                v[126] = if f % 2 == 0 { 0.2 } else { 1.0 };
                v[127] = if f % 2 == 0 { 1.0 } else { 0.3 };
                v
            })
            .collect();
        assert_eq!(floor_of(&vectors, &[]), 0.2);
        let odd: Vec<bool> = (0..100).map(|f| f % 2 == 1).collect();
        assert_eq!(floor_of(&vectors, &odd), 0.3);
        assert_eq!(floor_of(&[], &[]), 0.0);
        let mut lowered = vectors.clone();
        lower(&mut lowered, 0.2);
        for (a, b) in vectors.iter().zip(&lowered) {
            for k in 0..FEATURES {
                let d = if HEIGHTS.contains(&k) { 0.2 } else { 0.0 };
                assert!((a[k] - b[k] - d).abs() < 1e-6);
            }
        }
    }
}
