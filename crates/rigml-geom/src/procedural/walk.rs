//! A procedural in-place walk cycle for the demo humanoid: sinusoidal leg and arm swing, knee
//! flexion in the swing phase, feet kept roughly flat, a small hip bob and counter-rotating
//! torso twist. It loops: the last key equals the first.

use super::joint;
use glam::{Quat, Vec3};
use rigml_core::{Channel, ChannelValues, Clip, Interpolation, Skeleton};
use std::f32::consts::{PI, TAU};

/// Name of the clip.
pub const WALK_CLIP_NAME: &str = "walk";

/// Seconds per cycle (two steps).
const CYCLE_SECONDS: f32 = 1.0;

/// Keys per cycle; one more closes the loop.
const KEYS_PER_CYCLE: usize = 24;

/// Peak thigh swing forward/back, degrees.
const THIGH_SWING: f32 = 25.0;
/// Knee flexion: always this much, plus up to `KNEE_SWING_FLEX` mid-swing, degrees.
const KNEE_BASE_FLEX: f32 = 5.0;
const KNEE_SWING_FLEX: f32 = 50.0;
/// Arm swing forward/back, degrees, and how far the arms drop from the rest A-pose.
const ARM_SWING: f32 = 18.0;
const ARM_DROP: f32 = 35.0;
/// Elbow flexion, degrees, and its extra bend when the arm swings forward.
const ELBOW_FLEX: f32 = 15.0;
const ELBOW_SWING_FLEX: f32 = 12.0;
/// Hip bob (metres, twice per cycle) and hip yaw (degrees).
const HIP_BOB: f32 = 0.015;
const HIP_YAW: f32 = 6.0;

/// The walk clip for the skeleton built by [`super::skeleton`] (rest local rotations are
/// identity, so every rotation below is about the model axes: X pitches forward/back, Y turns,
/// Z raises/lowers an arm).
pub(super) fn walk(skeleton: &Skeleton) -> Clip {
    let times: Vec<f32> = (0..=KEYS_PER_CYCLE)
        .map(|f| CYCLE_SECONDS * f as f32 / KEYS_PER_CYCLE as f32)
        .collect();
    let phases: Vec<f32> = (0..=KEYS_PER_CYCLE)
        .map(|f| TAU * f as f32 / KEYS_PER_CYCLE as f32)
        .collect();
    let mut channels = Vec::new();
    let mut rotation = |j: usize, pose: &dyn Fn(f32) -> Quat| {
        channels.push(Channel {
            joint: j,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: ChannelValues::Rotation(phases.iter().map(|&phi| pose(phi)).collect()),
        });
    };

    rotation(joint::HIPS, &|phi| Quat::from_rotation_y(deg(HIP_YAW) * phi.sin()));
    rotation(joint::SPINE, &|phi| {
        Quat::from_rotation_y(-deg(0.6 * HIP_YAW) * phi.sin())
    });
    rotation(joint::CHEST, &|phi| {
        Quat::from_rotation_y(-deg(0.5 * HIP_YAW) * phi.sin())
    });
    for (side, offset, drop_sign) in [(&joint::LEFT, 0.0, -1.0), (&joint::RIGHT, PI, 1.0)] {
        // Leg forward swing angle; a positive X rotation swings a hanging limb backwards.
        let thigh = move |phi: f32| deg(THIGH_SWING) * (phi + offset).sin();
        // Knee bends while the leg travels forward (swing phase, cos > 0).
        let knee = move |phi: f32| deg(KNEE_BASE_FLEX + KNEE_SWING_FLEX * (phi + offset).cos().max(0.0).powi(2));
        rotation(side.upper_leg, &move |phi| Quat::from_rotation_x(-thigh(phi)));
        rotation(side.lower_leg, &move |phi| Quat::from_rotation_x(knee(phi)));
        // The foot undoes most of the thigh's pitch and a little of the knee's, so it stays
        // near flat in stance and hangs toes-down only moderately in swing.
        rotation(side.foot, &move |phi| {
            Quat::from_rotation_x(0.9 * thigh(phi) - 0.3 * (knee(phi) - deg(KNEE_BASE_FLEX)) - deg(KNEE_BASE_FLEX))
        });
        // Arms swing opposite to the leg on the same side.
        let arm = move |phi: f32| -deg(ARM_SWING) * (phi + offset).sin();
        rotation(side.upper_arm, &move |phi| {
            Quat::from_rotation_x(-arm(phi)) * Quat::from_rotation_z(drop_sign * deg(ARM_DROP))
        });
        rotation(side.lower_arm, &move |phi| {
            Quat::from_rotation_x(-deg(ELBOW_FLEX) - ELBOW_SWING_FLEX.to_radians() * arm(phi).max(0.0) / deg(ARM_SWING))
        });
    }

    let hips_rest = skeleton
        .rest_local
        .get(joint::HIPS)
        .map_or(Vec3::ZERO, |t| t.translation);
    channels.push(Channel {
        joint: joint::HIPS,
        interpolation: Interpolation::Linear,
        times: times.clone(),
        values: ChannelValues::Translation(
            phases
                .iter()
                .map(|&phi| hips_rest + Vec3::Y * (HIP_BOB * (2.0 * phi).cos()))
                .collect(),
        ),
    });
    Clip {
        name: WALK_CLIP_NAME.to_string(),
        channels,
    }
}

fn deg(degrees: f32) -> f32 {
    degrees.to_radians()
}
