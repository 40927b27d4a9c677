//! Retargeting a clip from one humanoid to another: through the IK-Rig encoding (the default)
//! or by copying world rotation deltas joint by joint (`Mode::Fk`, for comparison). Root
//! motion is scaled by the ratio of hip heights in both modes.

use crate::decode::{decode, DecodeOptions};
use crate::encode::encode;
use crate::humanoid::{map_humanoid_with, Role};
use crate::rig::{place_hips, sample_frames, world_rotation, Frames, Posed, RigInfo};
use crate::AnimError;
use glam::{Quat, Vec3};
use rigml_core::{Channel, ChannelValues, Clip, Interpolation, Skeleton, Transform};

/// How poses move from source to target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Encode chain goals and solve them with IK on the target (ALGORITHMS.md §7).
    #[default]
    IkRig,
    /// Copy each mapped joint's world rotation delta from rest; hips position scaled by H.
    Fk,
}

/// A source skeleton, its measurements and the frames to move.
pub struct Source<'a> {
    pub skeleton: &'a Skeleton,
    pub info: &'a RigInfo,
    pub frames: &'a Frames,
}

/// Retarget `source` onto `target`: the target's local transforms at every source frame.
pub fn retarget_poses(
    source: &Source,
    target: &Skeleton,
    target_info: &RigInfo,
    mode: Mode,
    options: DecodeOptions,
) -> Vec<Vec<Transform>> {
    match mode {
        Mode::IkRig => {
            let encoded = encode(source.skeleton, source.info, source.frames, "");
            decode(target, target_info, &encoded, options)
        }
        Mode::Fk => source
            .frames
            .poses
            .iter()
            .map(|pose| fk_frame(source.skeleton, source.info, &pose.local, target, target_info))
            .collect(),
    }
}

/// FK rotation copy of one frame.
fn fk_frame(
    source: &Skeleton,
    source_info: &RigInfo,
    local: &[Transform],
    target: &Skeleton,
    target_info: &RigInfo,
) -> Vec<Transform> {
    let world = source.world_matrices(local);
    let mut posed = Posed::new(target, target.rest_local.clone());
    // Canonical world delta of a source joint, re-expressed in the target's facing.
    let to_target = source_info.facing.inverse();
    let delta_of = |js: usize| {
        let delta = world_rotation(&world[js]) * source_info.rest_rotations[js].inverse();
        let canonical = to_target * delta * source_info.facing;
        target_info.facing * canonical * target_info.facing.inverse()
    };
    // Hips first (through the motion root), position scaled by the hip heights with the
    // ground at y = 0 for both (METRICS.md §7).
    if let (Some(hs), Some(ht)) = (source_info.map.joint(Role::Hips), target_info.map.joint(Role::Hips)) {
        let canonical = to_target * world[hs].w_axis.truncate() / source_info.hip_height;
        let at = target_info.facing * canonical * target_info.hip_height;
        let rotation = (delta_of(hs) * target_info.rest_rotations[ht]).normalize();
        place_hips(&mut posed, &target_info.map, rotation, at);
    }
    let mut pairs: Vec<(usize, usize)> = Role::ALL
        .into_iter()
        .filter(|&r| r != Role::Hips)
        .filter_map(|r| Some((target_info.map.joint(r)?, source_info.map.joint(r)?)))
        .collect();
    pairs.sort_unstable();
    for (jt, js) in pairs {
        posed.set_world_rotation(jt, (delta_of(js) * target_info.rest_rotations[jt]).normalize());
    }
    posed.local
}

/// Bake per-frame local transforms into a clip: a linear rotation channel for every joint whose
/// rotation changes, and a translation channel for every joint whose translation changes.
pub fn bake_clip(skeleton: &Skeleton, times: &[f32], frames: &[Vec<Transform>], name: &str) -> Clip {
    let mut channels = Vec::new();
    for j in 0..skeleton.joint_count() {
        let rest = skeleton.rest_local[j];
        let rotations: Vec<Quat> = frames.iter().map(|f| f[j].rotation).collect();
        let translations: Vec<Vec3> = frames.iter().map(|f| f[j].translation).collect();
        if rotations.iter().any(|q| q.dot(rest.rotation).abs() < 1.0 - 1e-7) {
            channels.push(Channel {
                joint: j,
                interpolation: Interpolation::Linear,
                times: times.to_vec(),
                values: ChannelValues::Rotation(rigml_core::continuous_rotations(rotations.into_iter())),
            });
        }
        if translations
            .iter()
            .any(|t| t.distance(rest.translation) > 1e-7 * (1.0 + rest.translation.length()))
        {
            channels.push(Channel {
                joint: j,
                interpolation: Interpolation::Linear,
                times: times.to_vec(),
                values: ChannelValues::Translation(translations),
            });
        }
    }
    Clip {
        name: name.to_string(),
        channels,
    }
}

/// A retargeted clip and what it took.
#[derive(Debug, Clone)]
pub struct Retargeted {
    /// The clip on the target skeleton.
    pub clip: Clip,
    pub frames: usize,
    pub fps: f32,
}

/// Map a skeleton (with `--map` overrides, if any) and measure it, in one step.
pub fn rig_for(skeleton: &Skeleton, overrides: &[(Role, String)], asset: &str) -> Result<RigInfo, AnimError> {
    let map = map_humanoid_with(skeleton, overrides, asset)?;
    RigInfo::new(skeleton, map, asset)
}

/// Sample `clip` on the source, retarget every frame onto `target` and bake the result into a
/// clip named `name` with the source's key times (starting at 0).
#[allow(clippy::too_many_arguments)]
pub fn retarget_clip(
    source: &Skeleton,
    source_info: &RigInfo,
    clip: &Clip,
    source_asset: &str,
    target: &Skeleton,
    target_info: &RigInfo,
    mode: Mode,
    name: &str,
) -> Result<Retargeted, AnimError> {
    let frames = sample_frames(source, clip, source_asset)?;
    let src = Source {
        skeleton: source,
        info: source_info,
        frames: &frames,
    };
    let poses = retarget_poses(&src, target, target_info, mode, DecodeOptions::default());
    let times: Vec<f32> = frames.times.iter().map(|t| t - frames.times[0]).collect();
    Ok(Retargeted {
        clip: bake_clip(target, &times, &poses, name),
        frames: poses.len(),
        fps: frames.fps,
    })
}
