//! FBX animation stacks → [`Clip`]s sampled at the scene frame rate.
//!
//! Each stack is evaluated by ufbx (`evaluate_scene`) at every frame from its start to its end
//! time, and every joint gets linear translation, rotation and scale channels with one key per
//! frame. Joint-local transforms are taken from the evaluated world matrices
//! (`parent_world⁻¹ · world`, roots keep their model-space transform), as the rest pose is built
//! from the bind matrices, so FBX's non-standard scale inheritance, pivots and layers all come
//! out as ufbx evaluates them. Key times are the stack's own times in seconds (a stack may start
//! after 0, or before it).
//!
//! Stacks that cannot be motion of the skeleton are not clips: an empty take (no animated
//! property, which most exporters write by default) and, in a file without a skeleton, a stack
//! whose curves are all constant are skipped silently; a stack that moves something in a file
//! without a skeleton (an animated mesh node, light or camera) and one whose time range cannot
//! be sampled (keys ±166,666 s apart, over [`MAX_SAMPLES`] keys) are left out with a warning,
//! since the mesh and skeleton do not depend on them.

use super::skeleton::Joints;
use super::{dmat, Ctx};
use crate::IoError;
use rigml_core::glam::{DMat4, Quat, Vec3};
use rigml_core::{Channel, ChannelValues, Clip, Interpolation, Transform};
use std::collections::HashSet;

/// Frame rate used when the file's is missing or not a positive number.
pub const FALLBACK_FPS: f64 = 30.0;

/// Most keys (frames × joints) one stack may produce; beyond this the file is rejected rather
/// than exhausting memory.
pub const MAX_SAMPLES: usize = 10_000_000;

/// One clip per animation stack that moves the skeleton, in file order.
pub fn clips(ctx: &Ctx, scene: &ufbx::Scene, joints: &Joints) -> Result<Vec<Clip>, IoError> {
    let fps = scene.settings.frames_per_second;
    let fps = if fps.is_finite() && fps > 0.0 {
        fps
    } else {
        FALLBACK_FPS
    };
    let mut used_names = HashSet::new();
    let mut clips = Vec::with_capacity(scene.anim_stacks.len());
    for (i, stack) in scene.anim_stacks.iter().enumerate() {
        let mut name = stack.element.name.to_string();
        if name.is_empty() {
            name = format!("clip{i}");
        }
        let base = name.clone();
        let mut k = 2;
        while !used_names.insert(name.clone()) {
            name = format!("{base}.{k}");
            k += 1;
        }
        let props: Vec<&ufbx::AnimProp> = stack.layers.iter().flat_map(|l| l.anim_props.iter()).collect();
        if props.is_empty() {
            continue; // an empty take
        }
        if joints.nodes.is_empty() {
            // Nothing to move: say so when the stack moves something else (a mesh, a light).
            if let Some(first) = props.iter().find(|p| moves(p)) {
                ctx.warn(format!(
                    "animation stack '{name}': the file has no skeleton, and the motion of {:?} '{}' ({} animated propert(ies) in all) is left out",
                    first.element.type_,
                    first.element.name,
                    props.len()
                ));
            }
            continue;
        }
        if let Some(clip) = sample_stack(ctx, scene, stack, &name, fps, joints)? {
            clips.push(clip);
        }
    }
    Ok(clips)
}

/// Whether an animated property changes over time: some curve has two keys of different value.
fn moves(prop: &ufbx::AnimProp) -> bool {
    prop.anim_value.curves.iter().flatten().any(|curve| {
        let mut values = curve.keyframes.iter().map(|k| k.value);
        let first = values.next();
        first.is_some_and(|v0| values.any(|v| v != v0))
    })
}

/// Frame times from `begin` to `end` (both included) at `fps`.
fn frame_times(begin: f64, end: f64, fps: f64) -> Option<Vec<f64>> {
    if !begin.is_finite() || !end.is_finite() || end < begin {
        return None;
    }
    let frames = ((end - begin) * fps).round();
    if !frames.is_finite() || frames >= MAX_SAMPLES as f64 {
        return None;
    }
    let frames = frames as usize + 1;
    Some((0..frames).map(|f| (begin + f as f64 / fps).min(end)).collect())
}

fn sample_stack(
    ctx: &Ctx,
    scene: &ufbx::Scene,
    stack: &ufbx::AnimStack,
    name: &str,
    fps: f64,
    joints: &Joints,
) -> Result<Option<Clip>, IoError> {
    let Some(times) = frame_times(stack.time_begin, stack.time_end, fps) else {
        ctx.warn(format!(
            "animation stack '{name}': time range {}..{} s cannot be sampled at {fps} fps (over {MAX_SAMPLES} frames or not a range): left out",
            stack.time_begin, stack.time_end
        ));
        return Ok(None);
    };
    let joint_count = joints.skeleton.joint_count();
    if times.len().saturating_mul(joint_count) > MAX_SAMPLES {
        ctx.warn(format!(
            "animation stack '{name}': {} frames × {joint_count} joints is over the {MAX_SAMPLES} key limit: left out",
            times.len()
        ));
        return Ok(None);
    }
    let mut local: Vec<Vec<Transform>> = vec![Vec::with_capacity(times.len()); joint_count];
    let mut world: Vec<DMat4> = vec![DMat4::IDENTITY; joint_count];
    for &t in &times {
        let evaluated = ufbx::evaluate_scene(scene, &stack.anim, t, ufbx::EvaluateOpts::default()).map_err(|e| {
            ctx.err(format!(
                "animation stack '{name}' at {t:.4} s: {}",
                super::ufbx_message(&e)
            ))
        })?;
        for (j, &n) in joints.nodes.iter().enumerate() {
            let node = evaluated
                .nodes
                .get(n as usize)
                .ok_or_else(|| ctx.err(format!("animation stack '{name}': node {n} missing when evaluated")))?;
            world[j] = dmat(&node.node_to_world);
            let m = match joints.skeleton.parents[j] {
                Some(p) if p < j => world[p].inverse() * world[j],
                _ => world[j],
            };
            let mut t = Transform::from_mat4(&m.as_mat4());
            if !t.is_finite() {
                // A joint scaled to 0 (KayKit's spawn clips grow bones from nothing): its
                // children's parent matrix is singular, and its own matrix has no rotation to
                // recover. ufbx's own local transform is exact there.
                let l = &node.local_transform;
                t = Transform {
                    translation: Vec3::new(l.translation.x as f32, l.translation.y as f32, l.translation.z as f32),
                    rotation: Quat::from_xyzw(
                        l.rotation.x as f32,
                        l.rotation.y as f32,
                        l.rotation.z as f32,
                        l.rotation.w as f32,
                    ),
                    scale: Vec3::new(l.scale.x as f32, l.scale.y as f32, l.scale.z as f32),
                };
            }
            local[j].push(t);
        }
    }

    let key_times: Vec<f32> = times.iter().map(|&t| t as f32).collect();
    let mut channels = Vec::with_capacity(joint_count * 3);
    for (j, keys) in local.iter().enumerate() {
        let channel = |values| Channel {
            joint: j,
            interpolation: Interpolation::Linear,
            times: key_times.clone(),
            values,
        };
        channels.push(channel(ChannelValues::Translation(
            keys.iter().map(|k| k.translation).collect(),
        )));
        channels.push(channel(ChannelValues::Rotation(rigml_core::continuous_rotations(
            keys.iter().map(|k| k.rotation),
        ))));
        channels.push(channel(ChannelValues::Scale(
            keys.iter().map(|k| k.scale).collect::<Vec<Vec3>>(),
        )));
    }
    Ok(Some(Clip {
        name: name.to_string(),
        channels,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_times_cover_both_ends() {
        let t = frame_times(1.0 / 24.0, 1.0, 24.0).unwrap();
        assert_eq!(t.len(), 24);
        assert!((t[0] - 1.0 / 24.0).abs() < 1e-12);
        assert!((t[23] - 1.0).abs() < 1e-12);
        assert_eq!(frame_times(0.0, 0.0, 30.0).unwrap(), vec![0.0]);
    }

    #[test]
    fn bad_time_ranges_are_refused() {
        assert!(frame_times(1.0, 0.0, 30.0).is_none());
        assert!(frame_times(0.0, f64::NAN, 30.0).is_none());
        assert!(frame_times(0.0, 1e12, 30.0).is_none());
    }

    #[test]
    fn quaternion_signs_are_made_continuous() {
        let a = Quat::from_rotation_y(0.1);
        let out = rigml_core::continuous_rotations([a, -a, a].into_iter());
        assert!(out.iter().all(|q| q.dot(a) > 0.0));
    }
}
