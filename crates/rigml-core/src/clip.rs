//! Animation clips: keyframed joint channels, sampled at any time into a [`Pose`].
//!
//! Interpolation follows the glTF 2.0 specification (Appendix C): step, linear (slerp for
//! rotations, shortest arc) and cubic Hermite splines with per-key tangents.

use crate::{CoreError, Pose, Skeleton};
use glam::{Quat, Vec3, Vec4};

/// How values between keys are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interpolation {
    Step,
    Linear,
    /// Values hold `[in_tangent, value, out_tangent]` per key.
    CubicSpline,
}

/// Keyframe values of one channel; one entry per key (three per key for cubic splines).
#[derive(Debug, Clone, PartialEq)]
pub enum ChannelValues {
    Translation(Vec<Vec3>),
    Rotation(Vec<Quat>),
    Scale(Vec<Vec3>),
}

impl ChannelValues {
    pub fn len(&self) -> usize {
        match self {
            Self::Translation(v) | Self::Scale(v) => v.len(),
            Self::Rotation(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `"translation"`, `"rotation"` or `"scale"` (glTF target path names).
    pub fn path(&self) -> &'static str {
        match self {
            Self::Translation(_) => "translation",
            Self::Rotation(_) => "rotation",
            Self::Scale(_) => "scale",
        }
    }

    fn is_finite(&self) -> bool {
        match self {
            Self::Translation(v) | Self::Scale(v) => v.iter().all(|x| x.is_finite()),
            Self::Rotation(v) => v.iter().all(|x| x.is_finite()),
        }
    }
}

/// One animated property of one joint.
#[derive(Debug, Clone, PartialEq)]
pub struct Channel {
    /// Index into the skeleton's joints.
    pub joint: usize,
    pub interpolation: Interpolation,
    /// Key times in seconds, non-decreasing.
    pub times: Vec<f32>,
    pub values: ChannelValues,
}

/// A named animation: joint channels over time. Joints without a channel keep their rest
/// transform (or the component of it that is not animated).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Clip {
    pub name: String,
    pub channels: Vec<Channel>,
}

impl Clip {
    /// Time of the last key in seconds (0 for an empty clip).
    pub fn duration(&self) -> f32 {
        self.channels
            .iter()
            .filter_map(|c| c.times.last().copied())
            .fold(0.0, f32::max)
    }

    /// Time of the first key in seconds (0 for an empty clip).
    pub fn start(&self) -> f32 {
        let first = self
            .channels
            .iter()
            .filter_map(|c| c.times.first().copied())
            .fold(f32::INFINITY, f32::min);
        if first.is_finite() {
            first
        } else {
            0.0
        }
    }

    /// The largest number of keys on any channel (the clip's frame count for baked clips).
    pub fn key_count(&self) -> usize {
        self.channels.iter().map(|c| c.times.len()).max().unwrap_or(0)
    }

    /// The skeleton's local transforms at time `t` (clamped to the key range per channel).
    pub fn sample(&self, skeleton: &Skeleton, t: f32) -> Pose {
        let mut pose = Pose::rest(skeleton);
        self.sample_into(t, &mut pose);
        pose
    }

    /// Overwrite the animated components of `pose` with their values at time `t`.
    pub fn sample_into(&self, t: f32, pose: &mut Pose) {
        for c in &self.channels {
            let Some(local) = pose.local.get_mut(c.joint) else {
                continue;
            };
            match &c.values {
                ChannelValues::Translation(v) => {
                    if let Some(x) = sample_vec3(c, v, t) {
                        local.translation = x;
                    }
                }
                ChannelValues::Scale(v) => {
                    if let Some(x) = sample_vec3(c, v, t) {
                        local.scale = x;
                    }
                }
                ChannelValues::Rotation(v) => {
                    if let Some(q) = sample_quat(c, v, t) {
                        local.rotation = q;
                    }
                }
            }
        }
    }

    /// Check channel targets, key counts, finiteness and time order.
    pub fn validate(&self, joint_count: usize) -> Result<(), CoreError> {
        for (channel, c) in self.channels.iter().enumerate() {
            let bad = |problem: String| CoreError::BadChannel {
                clip: self.name.clone(),
                channel,
                problem,
            };
            if c.joint >= joint_count {
                return Err(CoreError::ChannelJointOutOfRange {
                    clip: self.name.clone(),
                    channel,
                    joint: c.joint,
                    joint_count,
                });
            }
            let per_key = if c.interpolation == Interpolation::CubicSpline {
                3
            } else {
                1
            };
            if c.values.len() != c.times.len() * per_key {
                return Err(bad(format!(
                    "{} keys but {} {} values",
                    c.times.len(),
                    c.values.len(),
                    c.values.path()
                )));
            }
            if c.times.iter().any(|t| !t.is_finite()) || !c.values.is_finite() {
                return Err(bad("non-finite key time or value".into()));
            }
            if let Some(k) = c.times.windows(2).position(|w| w[1] < w[0]) {
                return Err(bad(format!("key times decrease at key {}", k + 1)));
            }
        }
        Ok(())
    }
}

/// Key interval containing `t`: `(k0, k1, u)` with `u` in [0, 1]; clamped at both ends.
fn locate(times: &[f32], t: f32) -> Option<(usize, usize, f32)> {
    let last = times.len().checked_sub(1)?;
    if t <= times[0] {
        return Some((0, 0, 0.0));
    }
    if t >= times[last] {
        return Some((last, last, 0.0));
    }
    // First key strictly after t.
    let k1 = times.partition_point(|&x| x <= t);
    let k0 = k1 - 1;
    let span = times[k1] - times[k0];
    let u = if span > 0.0 { (t - times[k0]) / span } else { 0.0 };
    Some((k0, k1, u))
}

fn sample_vec3(c: &Channel, v: &[Vec3], t: f32) -> Option<Vec3> {
    let (k0, k1, u) = locate(&c.times, t)?;
    Some(match c.interpolation {
        Interpolation::Step => *v.get(k0)?,
        Interpolation::Linear => v.get(k0)?.lerp(*v.get(k1)?, u),
        Interpolation::CubicSpline => {
            let dt = c.times[k1] - c.times[k0];
            hermite(
                *v.get(3 * k0 + 1)?,
                *v.get(3 * k0 + 2)? * dt,
                *v.get(3 * k1 + 1)?,
                *v.get(3 * k1)? * dt,
                u,
            )
        }
    })
}

fn sample_quat(c: &Channel, v: &[Quat], t: f32) -> Option<Quat> {
    let (k0, k1, u) = locate(&c.times, t)?;
    let q = match c.interpolation {
        Interpolation::Step => *v.get(k0)?,
        Interpolation::Linear => {
            let (a, b) = (v.get(k0)?.normalize(), v.get(k1)?.normalize());
            // Shortest arc: flip b into a's hemisphere before slerp.
            let b = if a.dot(b) < 0.0 { -b } else { b };
            a.slerp(b, u)
        }
        Interpolation::CubicSpline => {
            let dt = c.times[k1] - c.times[k0];
            let h = hermite4(
                Vec4::from(*v.get(3 * k0 + 1)?),
                Vec4::from(*v.get(3 * k0 + 2)?) * dt,
                Vec4::from(*v.get(3 * k1 + 1)?),
                Vec4::from(*v.get(3 * k1)?) * dt,
                u,
            );
            Quat::from_vec4(h)
        }
    };
    Some(q.normalize())
}

/// Cubic Hermite basis (glTF spec Appendix C): p0, outgoing tangent m0, p1, incoming m1.
fn hermite(p0: Vec3, m0: Vec3, p1: Vec3, m1: Vec3, u: f32) -> Vec3 {
    let (a, b, c, d) = hermite_basis(u);
    p0 * a + m0 * b + p1 * c + m1 * d
}

fn hermite4(p0: Vec4, m0: Vec4, p1: Vec4, m1: Vec4, u: f32) -> Vec4 {
    let (a, b, c, d) = hermite_basis(u);
    p0 * a + m0 * b + p1 * c + m1 * d
}

fn hermite_basis(u: f32) -> (f32, f32, f32, f32) {
    let u2 = u * u;
    let u3 = u2 * u;
    (
        2.0 * u3 - 3.0 * u2 + 1.0,
        u3 - 2.0 * u2 + u,
        -2.0 * u3 + 3.0 * u2,
        u3 - u2,
    )
}

/// Quaternions with signs chosen so consecutive keys are in the same hemisphere (linear
/// interpolation then takes the short way): what a rotation channel's keys need.
pub fn continuous_rotations(rotations: impl Iterator<Item = Quat>) -> Vec<Quat> {
    let mut out: Vec<Quat> = Vec::new();
    for q in rotations {
        let q = match out.last() {
            Some(prev) if prev.dot(q) < 0.0 => -q,
            _ => q,
        };
        out.push(q);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Transform;
    use glam::Mat4;

    fn one_joint() -> Skeleton {
        Skeleton {
            names: vec!["root".into()],
            parents: vec![None],
            rest_local: vec![Transform::IDENTITY],
            inverse_bind: vec![Mat4::IDENTITY],
        }
    }

    fn clip(interpolation: Interpolation, values: ChannelValues, times: Vec<f32>) -> Clip {
        Clip {
            name: "c".into(),
            channels: vec![Channel {
                joint: 0,
                interpolation,
                times,
                values,
            }],
        }
    }

    #[test]
    fn linear_step_and_clamping() {
        let s = one_joint();
        let v = ChannelValues::Translation(vec![Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0)]);
        let c = clip(Interpolation::Linear, v.clone(), vec![1.0, 2.0]);
        assert_eq!(c.sample(&s, 1.25).local[0].translation, Vec3::new(0.5, 0.0, 0.0));
        assert_eq!(c.sample(&s, 0.0).local[0].translation, Vec3::ZERO);
        assert_eq!(c.sample(&s, 9.0).local[0].translation, Vec3::new(2.0, 0.0, 0.0));
        let c = clip(Interpolation::Step, v, vec![1.0, 2.0]);
        assert_eq!(c.sample(&s, 1.99).local[0].translation, Vec3::ZERO);
        assert_eq!(c.duration(), 2.0);
    }

    #[test]
    fn rotation_slerp_takes_shortest_arc() {
        let s = one_joint();
        let a = Quat::IDENTITY;
        // -q is the same rotation as q; a 90° turn stored negated must still give 45° halfway.
        let b = -Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
        let c = clip(
            Interpolation::Linear,
            ChannelValues::Rotation(vec![a, b]),
            vec![0.0, 1.0],
        );
        let q = c.sample(&s, 0.5).local[0].rotation;
        let expected = Quat::from_rotation_y(std::f32::consts::FRAC_PI_4);
        assert!(q.dot(expected).abs() > 1.0 - 1e-6);
    }

    #[test]
    fn cubic_spline_hits_keys_and_follows_tangents() {
        let s = one_joint();
        // Keys 0 and 1 at values 0 and 1 with tangents 1: the Hermite curve is the line x = t.
        let v = vec![Vec3::X, Vec3::ZERO, Vec3::X, Vec3::X, Vec3::X, Vec3::X];
        let c = clip(
            Interpolation::CubicSpline,
            ChannelValues::Translation(v),
            vec![0.0, 1.0],
        );
        assert!((c.sample(&s, 0.3).local[0].translation.x - 0.3).abs() < 1e-6);
        assert_eq!(c.sample(&s, 1.0).local[0].translation, Vec3::X);
        c.validate(1).unwrap();
    }

    #[test]
    fn validation_catches_bad_channels() {
        let v = ChannelValues::Translation(vec![Vec3::ZERO]);
        assert!(clip(Interpolation::Linear, v.clone(), vec![0.0, 1.0])
            .validate(1)
            .is_err());
        assert!(clip(Interpolation::Linear, v, vec![0.0]).validate(0).is_err());
        let v = ChannelValues::Translation(vec![Vec3::ZERO, Vec3::ONE]);
        assert!(clip(Interpolation::Linear, v, vec![1.0, 0.0]).validate(1).is_err());
    }
}
