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
        .map(|t| contacts::detect(t, hip_height, frames.fps, &params))
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

#[cfg(test)]
mod tests {
    use super::*;
    use rigml_core::{Channel, ChannelValues, Clip, Interpolation, Skeleton, Transform};

    /// Hips → hip → knee → ankle → toe standing on y = 0, 30 still frames.
    fn standing() -> (Skeleton, Clip, Frames, Vec<Leg>) {
        let t = |x: f32, y: f32, z: f32| Transform::from_translation(Vec3::new(x, y, z));
        let mut s = Skeleton {
            names: ["Hips", "UpLeg", "Leg", "Foot", "Toe"].map(String::from).to_vec(),
            parents: vec![None, Some(0), Some(1), Some(2), Some(3)],
            rest_local: vec![
                t(0.0, 2.2, 0.0),
                t(0.1, -0.2, 0.0),
                t(0.0, -1.0, 0.05),
                t(0.0, -1.0, -0.05),
                t(0.0, 0.0, 0.3),
            ],
            inverse_bind: Vec::new(),
        };
        s.bind_to_rest();
        let times: Vec<f32> = (0..30).map(|f| f as f32 / 30.0).collect();
        let clip = Clip {
            name: "still".into(),
            channels: vec![
                Channel {
                    joint: 0,
                    interpolation: Interpolation::Linear,
                    times: times.clone(),
                    values: ChannelValues::Translation(vec![Vec3::new(0.0, 2.2, 0.0); 30]),
                },
                Channel {
                    joint: 2,
                    interpolation: Interpolation::Linear,
                    times,
                    values: ChannelValues::Rotation(vec![Quat::IDENTITY; 30]),
                },
            ],
        };
        let frames = Frames::bake(&s, &clip).unwrap();
        let legs = vec![Leg {
            name: "left".into(),
            hip: 1,
            knee: 2,
            ankle: 3,
            toe: Some(4),
        }];
        (s, clip, frames, legs)
    }

    #[test]
    fn damage_is_seeded_and_drifts_while_planted() {
        let (s, clip, frames, legs) = standing();
        let d = Damage {
            seed: 3,
            jitter_degrees: 1.0,
            drift_speed: 0.3,
        };
        let run = |d: &Damage| {
            let mut f = frames.clone();
            damage(&s, &mut f, &clip, &legs, 2.2, d).unwrap();
            f
        };
        let (a, b) = (run(&d), run(&d));
        assert_eq!(a, b);
        assert_ne!(a, run(&Damage { seed: 4, ..d }));
        // The foot stands still the whole clip, so the root drifts every frame: 0.3·2.2/30 each.
        let last = a.poses[29][0].translation.x;
        assert!((last - 30.0 * 0.3 * 2.2 / 30.0).abs() < 1e-4, "{last}");
        // Only animated joints get jitter (joint 1 has no channel).
        assert_eq!(a.poses[10][1], frames.poses[10][1]);
        assert_ne!(a.poses[10][2].rotation, frames.poses[10][2].rotation);
        // No damage changes nothing; bad parameters are refused.
        let none = run(&Damage {
            seed: 3,
            jitter_degrees: 0.0,
            drift_speed: 0.0,
        });
        for (p, q) in none.poses.iter().zip(&frames.poses) {
            for (x, y) in p.iter().zip(q) {
                assert!(x.rotation.angle_between(y.rotation) < 1e-6 && x.translation == y.translation);
            }
        }
        let mut f = frames.clone();
        assert!(damage(
            &s,
            &mut f,
            &clip,
            &legs,
            2.2,
            &Damage {
                jitter_degrees: f32::NAN,
                ..d
            }
        )
        .is_err());
    }
}
