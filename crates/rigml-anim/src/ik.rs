//! Inverse kinematics solvers (`docs/ALGORITHMS.md` §7): analytic two-bone IK for limbs and
//! FABRIK for chains of any length (spine, neck), plus the step that turns solved joint
//! positions back into world rotations.
//!
//! Everything here works on world-space positions and returns world-space quantities, so the
//! solvers know nothing about skeletons; the IK-Rig decoder applies the results to joints.

use glam::{Quat, Vec3};

/// Relative slack kept from full extension and full folding in [`two_bone`], as a fraction of
/// the summed bone lengths, so the bend plane stays defined.
pub const REACH_EPSILON: f32 = 1e-6;

/// Default FABRIK iteration cap (ALGORITHMS.md §7).
pub const FABRIK_MAX_ITERATIONS: usize = 10;

/// Analytic two-bone IK.
///
/// `root`, `mid` and `end` are the current world positions of the chain's joints (e.g. hip,
/// knee, ankle), `target` where `end` should go, and `pole` a world-space **direction** (not a
/// point) towards which the middle joint should bend (the knee's forward, the elbow's back).
/// The distance to the target is clamped to `[|l1 - l2| + ε, l1 + l2 - ε]` (ε =
/// [`REACH_EPSILON`]·(l1 + l2)), so an unreachable target gives the nearest reachable pose.
///
/// Returns world-space delta rotations `(q_root, q_mid)`: pre-multiply the root joint's world
/// rotation by `q_root`, recompute the children (forward kinematics), then pre-multiply the mid
/// joint's world rotation by `q_mid`. Equivalently the new positions are
/// `mid' = root + q_root·(mid - root)` and `end' = mid' + q_mid·q_root·(end - mid)`.
/// Degenerate input (zero-length bones, non-finite values) returns identities.
pub fn two_bone(root: Vec3, mid: Vec3, end: Vec3, target: Vec3, pole: Vec3) -> (Quat, Quat) {
    let identity = (Quat::IDENTITY, Quat::IDENTITY);
    let upper = mid - root;
    let lower = end - mid;
    let (l1, l2) = (upper.length(), lower.length());
    if !(l1 > 0.0 && l2 > 0.0 && l1.is_finite() && l2.is_finite() && target.is_finite() && pole.is_finite()) {
        return identity;
    }
    let to_target = target - root;
    let eps = REACH_EPSILON * (l1 + l2);
    let d = to_target.length().clamp((l1 - l2).abs() + eps, l1 + l2 - eps);
    // Chain axis: towards the target, or the current root→end axis if the target sits on the root.
    let axis = to_target
        .try_normalize()
        .or_else(|| (end - root).try_normalize())
        .unwrap_or(upper / l1);
    let bend = perpendicular(pole, axis)
        .or_else(|| perpendicular(upper, axis))
        .unwrap_or_else(|| axis.any_orthonormal_vector());
    let cos_a = ((l1 * l1 + d * d - l2 * l2) / (2.0 * l1 * d)).clamp(-1.0, 1.0);
    let sin_a = (1.0 - cos_a * cos_a).max(0.0).sqrt();
    let mid_new = root + l1 * (cos_a * axis + sin_a * bend);
    let end_new = root + d * axis;
    let q_root = Quat::from_rotation_arc(upper / l1, (mid_new - root) / l1);
    let lower_rotated = q_root * lower;
    let q_mid = match ((end_new - mid_new).try_normalize(), lower_rotated.try_normalize()) {
        (Some(want), Some(have)) => Quat::from_rotation_arc(have, want),
        _ => Quat::IDENTITY,
    };
    (q_root.normalize(), q_mid.normalize())
}

/// The unit component of `v` perpendicular to the unit `axis`, if it is not vanishingly small.
fn perpendicular(v: Vec3, axis: Vec3) -> Option<Vec3> {
    let p = v - v.dot(axis) * axis;
    if p.length_squared() > 1e-12 * v.length_squared().max(1e-30) {
        p.try_normalize()
    } else {
        None
    }
}

/// The outcome of [`fabrik`].
#[derive(Debug, Clone, PartialEq)]
pub struct FabrikResult {
    /// Solved joint positions, root first; the root never moves and every bone keeps its length.
    pub positions: Vec<Vec3>,
    /// Distance from the end joint to the target after solving.
    pub error: f32,
    /// Iterations run (0 when the target was already met or out of reach).
    pub iterations: usize,
}

/// FABRIK (Aristidou & Lasenby 2011) on a chain of joint positions `positions[0]` (root, kept
/// fixed) to `positions[n-1]` (end), moving the end towards `target`.
///
/// Each iteration runs a backward pass (end on the target, walk to the root keeping bone
/// lengths) and a forward pass (root back in place, walk out). It stops when the end is within
/// `tolerance` of the target or after `max_iterations`. A target beyond reach stretches the
/// chain straight towards it. Chains of fewer than two joints are returned unchanged.
pub fn fabrik(positions: &[Vec3], target: Vec3, tolerance: f32, max_iterations: usize) -> FabrikResult {
    let mut p = positions.to_vec();
    let n = p.len();
    if n < 2 || !target.is_finite() {
        let error = p.last().map_or(0.0, |e| e.distance(target));
        return FabrikResult {
            positions: p,
            error: if error.is_finite() { error } else { f32::INFINITY },
            iterations: 0,
        };
    }
    let lengths: Vec<f32> = p.windows(2).map(|w| w[0].distance(w[1])).collect();
    let total: f32 = lengths.iter().sum();
    let root = p[0];
    if root.distance(target) >= total {
        // Out of reach: straighten towards the target.
        let dir = (target - root).try_normalize().unwrap_or(Vec3::Y);
        let mut at = root;
        for (i, l) in lengths.iter().enumerate() {
            at += dir * *l;
            p[i + 1] = at;
        }
        return FabrikResult {
            error: p[n - 1].distance(target),
            positions: p,
            iterations: 0,
        };
    }
    let mut iterations = 0;
    let mut error = p[n - 1].distance(target);
    while error > tolerance && iterations < max_iterations {
        p[n - 1] = target;
        for i in (0..n - 1).rev() {
            p[i] = place(p[i + 1], p[i], lengths[i]);
        }
        p[0] = root;
        for i in 0..n - 1 {
            p[i + 1] = place(p[i], p[i + 1], lengths[i]);
        }
        iterations += 1;
        error = p[n - 1].distance(target);
    }
    FabrikResult {
        positions: p,
        error,
        iterations,
    }
}

/// The point at distance `length` from `anchor` in the direction of `towards` (keeping the old
/// bone direction when the two coincide).
fn place(anchor: Vec3, towards: Vec3, length: f32) -> Vec3 {
    match (towards - anchor).try_normalize() {
        Some(dir) => anchor + dir * length,
        None => towards,
    }
}

/// Spin a solved chain about its root→end axis so that joint `mid` bends towards `pole` (a
/// direction), as FABRIK leaves that free. The root and end stay; bone lengths are kept. Does
/// nothing when `mid` is the root or end, or lies (almost) on the axis.
pub fn twist_to_pole(positions: &mut [Vec3], mid: usize, pole: Vec3) {
    let n = positions.len();
    if n < 3 || mid == 0 || mid >= n - 1 {
        return;
    }
    let root = positions[0];
    let Some(axis) = (positions[n - 1] - root).try_normalize() else {
        return;
    };
    let (Some(have), Some(want)) = (perpendicular(positions[mid] - root, axis), perpendicular(pole, axis)) else {
        return;
    };
    let angle = have.cross(want).dot(axis).atan2(have.dot(want));
    let q = Quat::from_axis_angle(axis, angle);
    for p in &mut positions[1..n - 1] {
        *p = root + q * (*p - root);
    }
}

/// World-space delta rotations that turn the bones of a chain from `old` positions into `new`
/// ones, root first: pre-multiply joint `i`'s world rotation by `deltas[i]` after applying
/// `deltas[..i]` to its ancestors (as in [`two_bone`]). `deltas.len() == old.len() - 1`; the end
/// joint's own rotation is left to the caller.
pub fn chain_deltas(old: &[Vec3], new: &[Vec3]) -> Vec<Quat> {
    let n = old.len().min(new.len());
    let mut deltas = Vec::with_capacity(n.saturating_sub(1));
    // Accumulated rotation of the current bone's frame from the deltas applied above it.
    let mut above = Quat::IDENTITY;
    for i in 0..n.saturating_sub(1) {
        let have = above * (old[i + 1] - old[i]);
        let want = new[i + 1] - new[i];
        let q = match (have.try_normalize(), want.try_normalize()) {
            (Some(h), Some(w)) => Quat::from_rotation_arc(h, w),
            _ => Quat::IDENTITY,
        };
        deltas.push(q);
        above = (q * above).normalize();
    }
    deltas
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply_two_bone(root: Vec3, mid: Vec3, end: Vec3, q: (Quat, Quat)) -> (Vec3, Vec3) {
        let mid2 = root + q.0 * (mid - root);
        let end2 = mid2 + q.1 * (q.0 * (end - mid));
        (mid2, end2)
    }

    #[test]
    fn two_bone_reaches_a_reachable_target_and_keeps_lengths() {
        let (r, m, e) = (Vec3::ZERO, Vec3::new(0.0, -1.0, 0.0), Vec3::new(0.0, -2.0, 0.0));
        for target in [
            Vec3::new(0.3, -1.5, 0.4),
            Vec3::new(-1.0, 0.2, 0.5),
            Vec3::new(0.0, -0.3, 0.0),
        ] {
            let q = two_bone(r, m, e, target, Vec3::Z);
            let (m2, e2) = apply_two_bone(r, m, e, q);
            assert!(e2.distance(target) < 1e-4, "target {target} got {e2}");
            assert!((m2.distance(r) - 1.0).abs() < 1e-5);
            assert!((e2.distance(m2) - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn two_bone_bends_towards_the_pole() {
        let (r, m, e) = (Vec3::ZERO, Vec3::new(0.0, -1.0, 0.0), Vec3::new(0.0, -2.0, 0.0));
        let target = Vec3::new(0.0, -1.2, 0.0);
        for pole in [Vec3::Z, -Vec3::Z, Vec3::X] {
            let (m2, _) = apply_two_bone(r, m, e, two_bone(r, m, e, target, pole));
            assert!(m2.dot(pole) > 0.5, "pole {pole}: knee at {m2}");
        }
    }

    #[test]
    fn two_bone_clamps_an_unreachable_target_along_its_direction() {
        let (r, m, e) = (Vec3::ZERO, Vec3::new(1.0, 0.0, 0.0), Vec3::new(1.0, 1.0, 0.0));
        let target = Vec3::new(0.0, 0.0, 10.0);
        let (m2, e2) = apply_two_bone(r, m, e, two_bone(r, m, e, target, Vec3::Y));
        assert!((e2.length() - 2.0).abs() < 1e-3);
        assert!(e2.normalize().dot(Vec3::Z) > 0.999);
        assert!((m2.length() - 1.0).abs() < 1e-5);
    }

    #[test]
    fn two_bone_degenerate_input_is_identity() {
        let q = two_bone(Vec3::ZERO, Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::Z);
        assert_eq!(q, (Quat::IDENTITY, Quat::IDENTITY));
        let q = two_bone(Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::NAN, Vec3::Z);
        assert_eq!(q, (Quat::IDENTITY, Quat::IDENTITY));
    }

    #[test]
    fn fabrik_reaches_and_keeps_lengths() {
        let chain: Vec<Vec3> = (0..5).map(|i| Vec3::new(0.0, i as f32 * 0.5, 0.0)).collect();
        let target = Vec3::new(0.8, 1.2, 0.5);
        let out = fabrik(&chain, target, 1e-4, 50);
        assert!(out.error < 1e-4, "error {}", out.error);
        assert_eq!(out.positions[0], Vec3::ZERO);
        for w in out.positions.windows(2) {
            assert!((w[0].distance(w[1]) - 0.5).abs() < 1e-4);
        }
    }

    #[test]
    fn fabrik_stretches_towards_an_unreachable_target() {
        let chain = vec![Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0)];
        let out = fabrik(&chain, Vec3::new(0.0, 0.0, -5.0), 1e-4, FABRIK_MAX_ITERATIONS);
        assert!((out.positions[2] - Vec3::new(0.0, 0.0, -2.0)).length() < 1e-5);
        assert!((out.error - 3.0).abs() < 1e-5);
    }

    #[test]
    fn twist_to_pole_turns_the_middle_joint() {
        let mut chain = vec![Vec3::ZERO, Vec3::new(0.3, 1.0, 0.0), Vec3::new(0.0, 2.0, 0.0)];
        twist_to_pole(&mut chain, 1, Vec3::Z);
        assert!((chain[1] - Vec3::new(0.0, 1.0, 0.3)).length() < 1e-5, "{}", chain[1]);
        assert_eq!(chain[2], Vec3::new(0.0, 2.0, 0.0));
    }

    #[test]
    fn chain_deltas_reproduce_the_new_positions() {
        let old = vec![Vec3::ZERO, Vec3::Y, Vec3::new(0.0, 2.0, 0.0), Vec3::new(0.0, 3.0, 0.0)];
        let out = fabrik(&old, Vec3::new(1.5, 2.0, 0.5), 1e-5, 50);
        let deltas = chain_deltas(&old, &out.positions);
        // Forward kinematics with world-space deltas applied root first.
        let mut acc = Quat::IDENTITY;
        let mut at = old[0];
        for i in 0..deltas.len() {
            acc = deltas[i] * acc;
            at += acc * (old[i + 1] - old[i]);
            assert!(at.distance(out.positions[i + 1]) < 1e-4);
        }
    }
}
