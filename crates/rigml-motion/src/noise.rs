//! What motion capture gets wrong, applied to clean poses (seeded), so that the model learns to
//! undo it and so that denoising can be measured against the clean clip: rotation jitter on
//! every joint, marker-swap spikes (one joint thrown off for a few frames), dropped frames (the
//! previous pose held), and foot sliding (a slow wander of the root in the ground plane).

use glam::{Quat, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rigml_core::{Pose, Skeleton};

/// How much of each kind of damage, per clip.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Noise {
    /// Standard deviation of the rotation noise per axis on every joint, degrees.
    pub jitter_degrees: f32,
    /// Chance per frame that a spike starts (one joint rotated by `spike_degrees` about a random
    /// axis for 1–3 frames).
    pub spike_rate: f32,
    pub spike_degrees: f32,
    /// Chance per frame that the capture drops 1–4 frames (the last pose is held).
    pub drop_rate: f32,
    /// Amplitude of the root's slow wander in the ground plane, in hip heights (foot sliding).
    pub slide: f32,
}

impl Noise {
    /// The evaluation levels (METRICS.md §10): jitter of 1, 2 and 4 degrees, the last two with
    /// spikes, drops and sliding as well.
    pub const LEVELS: [Noise; 3] = [
        Noise {
            jitter_degrees: 1.0,
            spike_rate: 0.0,
            spike_degrees: 0.0,
            drop_rate: 0.0,
            slide: 0.0,
        },
        Noise {
            jitter_degrees: 2.0,
            spike_rate: 0.005,
            spike_degrees: 20.0,
            drop_rate: 0.005,
            slide: 0.02,
        },
        Noise {
            jitter_degrees: 4.0,
            spike_rate: 0.01,
            spike_degrees: 30.0,
            drop_rate: 0.01,
            slide: 0.05,
        },
    ];

    /// A random mix for training: each kind present or not, amplitudes spread over and beyond
    /// the evaluation levels (and sometimes no damage at all, so that clean motion is kept).
    pub fn random(rng: &mut ChaCha8Rng) -> Noise {
        if rng.random::<f32>() < 0.15 {
            return Noise::default();
        }
        let on = |rng: &mut ChaCha8Rng, p: f32| rng.random::<f32>() < p;
        Noise {
            jitter_degrees: if on(rng, 0.9) { rng.random_range(0.2..6.0) } else { 0.0 },
            spike_rate: if on(rng, 0.4) {
                rng.random_range(0.001..0.02)
            } else {
                0.0
            },
            spike_degrees: rng.random_range(10.0..45.0),
            drop_rate: if on(rng, 0.4) {
                rng.random_range(0.001..0.02)
            } else {
                0.0
            },
            slide: if on(rng, 0.4) {
                rng.random_range(0.005..0.08)
            } else {
                0.0
            },
        }
    }

    /// A short label (`jitter 2°, spikes, drops, slide`).
    pub fn label(&self) -> String {
        let mut parts = vec![format!("jitter {}°", self.jitter_degrees)];
        if self.spike_rate > 0.0 {
            parts.push(format!("spikes {}/s·{}°", self.spike_rate, self.spike_degrees));
        }
        if self.drop_rate > 0.0 {
            parts.push(format!("drops {}", self.drop_rate));
        }
        if self.slide > 0.0 {
            parts.push(format!("slide {} H", self.slide));
        }
        parts.join(", ")
    }
}

/// A standard normal sample (Box–Muller).
fn normal(rng: &mut ChaCha8Rng) -> f32 {
    let u1: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let u2: f64 = rng.random();
    ((-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()) as f32
}

fn random_axis(rng: &mut ChaCha8Rng) -> Vec3 {
    Vec3::new(normal(rng), normal(rng), normal(rng))
        .try_normalize()
        .unwrap_or(Vec3::X)
}

/// Damage `poses` (frames at `fps` of `skeleton`, whose up axis is `up` and hip height `h`)
/// in place with `noise`, seeded by `seed`. Rates are per frame at 120 fps and scaled to `fps`.
/// Returns the offset the sliding added to the root joints' translation per frame (zero
/// without sliding): the wander a cleaner would have to take out.
pub fn corrupt(
    skeleton: &Skeleton,
    poses: &mut [Pose],
    fps: f32,
    up: Vec3,
    h: f32,
    noise: &Noise,
    seed: u64,
) -> Vec<Vec3> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = poses.len();
    let joints = skeleton.joint_count();
    let per_frame = |rate: f32| (rate * 120.0 / fps.max(1.0)).min(1.0);
    // Dropped frames first (a held pose is the clean one before it), then spikes, jitter and
    // sliding on top.
    let sigma = noise.jitter_degrees.to_radians();
    let mut f = 0;
    while f < n {
        if noise.drop_rate > 0.0 && f > 0 && rng.random::<f32>() < per_frame(noise.drop_rate) {
            let run = rng.random_range(1..=4usize);
            for g in f..(f + run).min(n) {
                poses[g] = poses[f - 1].clone();
            }
            f += run;
            continue;
        }
        f += 1;
    }
    if noise.spike_rate > 0.0 && joints > 0 {
        for f in 0..n {
            if rng.random::<f32>() < per_frame(noise.spike_rate) {
                let j = rng.random_range(0..joints);
                let q = Quat::from_axis_angle(random_axis(&mut rng), noise.spike_degrees.to_radians());
                let run = rng.random_range(1..=3usize);
                for pose in poses.iter_mut().skip(f).take(run) {
                    if let Some(t) = pose.local.get_mut(j) {
                        t.rotation = (t.rotation * q).normalize();
                    }
                }
            }
        }
    }
    if sigma > 0.0 {
        for pose in poses.iter_mut() {
            for t in pose.local.iter_mut() {
                let v = Vec3::new(normal(&mut rng), normal(&mut rng), normal(&mut rng)) * sigma;
                t.rotation = (t.rotation * Quat::from_scaled_axis(v)).normalize();
            }
        }
    }
    let mut offsets = vec![Vec3::ZERO; n];
    if noise.slide > 0.0 {
        // Two horizontal axes, each a sum of two slow sines (0.1–0.6 Hz).
        let side = up.any_orthonormal_vector();
        let ahead = up.cross(side);
        let waves: Vec<(f32, f32, f32)> = (0..4)
            .map(|_| {
                (
                    rng.random_range(0.1..0.6f32) * std::f32::consts::TAU,
                    rng.random_range(0.0..std::f32::consts::TAU),
                    noise.slide * h * rng.random_range(0.3..1.0f32),
                )
            })
            .collect();
        let roots: Vec<usize> = (0..joints).filter(|&j| skeleton.parents[j].is_none()).collect();
        for (f, pose) in poses.iter_mut().enumerate() {
            let t = f as f32 / fps.max(1.0);
            let w = |k: usize| waves[k].2 * (waves[k].0 * t + waves[k].1).sin();
            let offset = side * (w(0) + w(1)) + ahead * (w(2) + w(3));
            offsets[f] = offset;
            for &r in &roots {
                if let Some(tr) = pose.local.get_mut(r) {
                    tr.translation += offset;
                }
            }
        }
    }
    offsets
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigml_core::Transform;

    fn chain() -> Skeleton {
        let mut s = Skeleton {
            names: ["a", "b", "c"].map(String::from).to_vec(),
            parents: vec![None, Some(0), Some(1)],
            rest_local: vec![Transform::from_translation(Vec3::Y); 3],
            inverse_bind: Vec::new(),
        };
        s.bind_to_rest();
        s
    }

    #[test]
    fn no_noise_changes_nothing_and_damage_is_seeded() {
        let s = chain();
        let clean: Vec<Pose> = (0..50).map(|_| Pose::rest(&s)).collect();
        let mut same = clean.clone();
        let offsets = corrupt(&s, &mut same, 30.0, Vec3::Y, 1.0, &Noise::default(), 1);
        assert_eq!(same, clean);
        assert!(offsets.iter().all(|o| *o == Vec3::ZERO));
        let level = Noise::LEVELS[2];
        let (mut a, mut b) = (clean.clone(), clean.clone());
        corrupt(&s, &mut a, 30.0, Vec3::Y, 1.0, &level, 7);
        corrupt(&s, &mut b, 30.0, Vec3::Y, 1.0, &level, 7);
        assert_eq!(a, b);
        assert_ne!(a, clean);
        // Jitter of 4° per axis: the mean rotation angle is ~√(8/π)·4° ≈ 6.4°.
        let mean: f32 = a
            .iter()
            .flat_map(|p| p.local.iter().map(|t| t.rotation.angle_between(Quat::IDENTITY)))
            .sum::<f32>()
            / (50.0 * 3.0);
        assert!((4.0..10.0).contains(&mean.to_degrees()), "{}", mean.to_degrees());
    }

    #[test]
    fn sliding_moves_the_root_only_along_the_ground() {
        let s = chain();
        let mut poses: Vec<Pose> = (0..300).map(|_| Pose::rest(&s)).collect();
        let slide = Noise {
            slide: 0.1,
            ..Noise::default()
        };
        let offsets = corrupt(&s, &mut poses, 30.0, Vec3::Y, 2.0, &slide, 3);
        assert_eq!(offsets.len(), poses.len());
        let moved = poses.iter().map(|p| p.local[0].translation - Vec3::Y);
        let mut largest = 0.0f32;
        for (m, o) in moved.zip(&offsets) {
            // The offset returned is the one added.
            assert!(m.distance(*o) < 1e-6);
            assert!(m.y.abs() < 1e-6);
            largest = largest.max(m.length());
        }
        assert!(largest > 0.05 && largest < 0.6, "{largest}");
        assert!(poses.iter().all(|p| p.local[1] == s.rest_local[1]));
    }
}
