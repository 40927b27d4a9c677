//! Seeded synthetic damage for testing cleanup on real clips: Gaussian jitter on every joint
//! rotation and a slow horizontal drift of the root while a foot is planted (foot skate).

use super::contacts::{self, ContactParams};
use super::{animated_joints, foot_tracks, CleanupError, Frames, Leg};
use glam::{Quat, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How much damage to add.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Damage {
    pub seed: u64,
    /// Standard deviation of the rotation noise per axis, in degrees.
    pub jitter_degrees: f32,
    /// Root drift speed while any foot is in contact, in hip heights per second (along +x).
    pub drift_speed: f32,
}

/// A standard normal sample (Box–Muller).
fn normal(rng: &mut ChaCha8Rng) -> f32 {
    let u1: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let u2: f64 = rng.random();
    ((-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()) as f32
}

/// Damage `frames` in place: every animated joint's rotation is multiplied by a random rotation
/// with rotation vector `N(0, σ²I)` (σ = `jitter_degrees`), then the root of each animated
/// joint's chain moves along +x by `drift_speed·H/fps` per frame in which any foot joint of
/// `legs` is in contact (contacts of the undamaged motion, [`ContactParams::default`]).
pub fn damage(
    skeleton: &rigml_core::Skeleton,
    frames: &mut Frames,
    clip: &rigml_core::Clip,
    legs: &[Leg],
    hip_height: f32,
    damage: &Damage,
) -> Result<(), CleanupError> {
    if !(damage.jitter_degrees >= 0.0 && damage.drift_speed.is_finite() && hip_height > 0.0) {
        return Err(CleanupError::Parameter(format!(
            "damage needs jitter ≥ 0, a finite drift and a positive hip height: {damage:?}, H = {hip_height}"
        )));
    }
    let positions = frames.world_positions(skeleton);
    let feet = foot_tracks(&positions, legs);
    let params = ContactParams::default();
    let flags: Vec<Vec<bool>> = feet
        .iter()
        .map(|t| contacts::detect(t, contacts::floor_level(t), hip_height, frames.fps, &params))
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(damage.seed);
    let sigma = damage.jitter_degrees.to_radians();
    let joints = animated_joints(clip);
    let roots: Vec<usize> = joints
        .iter()
        .filter(|&&j| skeleton.parents.get(j).is_some_and(Option::is_none))
        .copied()
        .collect();
    let step = damage.drift_speed * hip_height / frames.fps;
    let mut drift = 0.0f32;
    for (f, pose) in frames.poses.iter_mut().enumerate() {
        if flags.iter().any(|c| c.get(f).copied().unwrap_or(false)) {
            drift += step;
        }
        for &j in &joints {
            let Some(local) = pose.get_mut(j) else { continue };
            let v = Vec3::new(normal(&mut rng), normal(&mut rng), normal(&mut rng)) * sigma;
            local.rotation = (local.rotation * Quat::from_scaled_axis(v)).normalize();
        }
        for &j in &roots {
            if let Some(local) = pose.get_mut(j) {
                local.translation.x += drift;
            }
        }
    }
    Ok(())
}
