//! Character → BVH text: the skeleton and the first clip, resampled to uniform frames.

use crate::IoError;
use glam::{EulerRot, Vec3};
use rigml_core::{ChannelValues, Character, Clip, Pose, Transform};
use std::fmt::Write as _;
use std::path::Path;

/// Frame rate used when the clip gives none (no clip, or a single key).
const DEFAULT_FPS: f64 = 30.0;

/// Refuse clips that would need more frames than this (a sign of bogus key times).
const MAX_FRAMES: usize = 2_000_000;

/// Scales further than this from 1 cannot be written (BVH has no scale channels).
const SCALE_TOLERANCE: f32 = 1e-4;

/// Deeper joints are indented no further (keeps output linear in size for long chains).
const MAX_INDENT: usize = 32;

/// Intervals shorter than this are treated as duplicate keys when choosing the frame time.
const MIN_FRAME_TIME: f32 = 1e-5;

/// The skeleton and first clip as BVH text.
///
/// Offsets are the rest translations. Rotations are written as `Zrotation Yrotation Xrotation`
/// (degrees) holding each joint's full local rotation, rest rotation included, since BVH has no
/// rest rotations. Roots and joints whose translation is animated get three position channels
/// first. Unanimated leaf joints become `End Site`s (their names are not kept; a leaf's rotation
/// does not move it, so joint positions are preserved). The clip is resampled at the smallest key
/// interval (exactly its own frames for baked clips); without a clip one rest-pose frame is
/// written. Errors: no skeleton, a non-unit scale anywhere (BVH cannot hold scale), or a clip
/// needing more than 2,000,000 frames.
pub fn to_bvh(character: &Character, path: &Path) -> Result<String, IoError> {
    let skeleton = &character.skeleton;
    skeleton.validate().map_err(|e| IoError::invalid(path, e))?;
    if skeleton.is_empty() {
        return Err(IoError::unsupported(
            path,
            "BVH needs a skeleton, and this character has none",
        ));
    }
    let clip = character.clips.first();
    let (start, frame_time, frame_count) = frame_plan(clip, path)?;
    let joint_count = skeleton.joint_count();
    let mut animated_translation = vec![false; joint_count];
    let mut animated = vec![false; joint_count];
    for c in clip.map(|c| c.channels.as_slice()).unwrap_or(&[]) {
        if let Some(a) = animated.get_mut(c.joint) {
            *a = true;
        }
        if let (Some(t), ChannelValues::Translation(_)) = (animated_translation.get_mut(c.joint), &c.values) {
            *t = true;
        }
    }
    let children = skeleton.children();
    let is_root = |j: usize| skeleton.parents.get(j).copied().flatten().is_none();
    let end_site = |j: usize| !is_root(j) && children[j].is_empty() && !animated[j];
    let with_position = |j: usize| is_root(j) || animated_translation[j];

    check_scale(&skeleton.rest_local, &skeleton.names, "rest pose", path)?;
    let mut out = String::new();
    out.push_str("HIERARCHY\n");
    // Depth-first, children in joint order: the written channel order is this order.
    let mut order = Vec::with_capacity(joint_count);
    for root in (0..joint_count).filter(|&j| is_root(j)) {
        write_joint(
            &mut out,
            root,
            0,
            skeleton,
            &children,
            &end_site,
            &with_position,
            &mut order,
        );
    }

    let _ = write!(out, "MOTION\nFrames: {frame_count}\nFrame Time: {frame_time}\n");
    let mut pose = Pose::rest(skeleton);
    for f in 0..frame_count {
        pose.local.clone_from(&skeleton.rest_local);
        if let Some(clip) = clip {
            clip.sample_into((start + f as f64 * frame_time) as f32, &mut pose);
        }
        check_scale(&pose.local, &skeleton.names, &format!("frame {f}"), path)?;
        let mut first = true;
        for &j in &order {
            let Some(local) = pose.local.get(j) else { continue };
            let mut values = [0.0f32; 6];
            let mut n = 0;
            if with_position(j) {
                values[..3].copy_from_slice(&local.translation.to_array());
                n = 3;
            }
            let (z, y, x) = local.rotation.as_dquat().normalize().to_euler(EulerRot::ZYX);
            for a in [z, y, x] {
                values[n] = a.to_degrees() as f32;
                n += 1;
            }
            for v in &values[..n] {
                if !first {
                    out.push(' ');
                }
                first = false;
                let _ = write!(out, "{}", clean(*v));
            }
        }
        out.push('\n');
    }
    Ok(out)
}

/// Turn `-0` into `0` so files read cleanly.
fn clean(v: f32) -> f32 {
    if v == 0.0 {
        0.0
    } else {
        v
    }
}

/// Names cannot hold whitespace or braces in BVH.
fn bvh_name(name: &str) -> String {
    let n: String = name
        .chars()
        .map(|c| {
            if c.is_whitespace() || c == '{' || c == '}' {
                '_'
            } else {
                c
            }
        })
        .collect();
    if n.is_empty() {
        "joint".into()
    } else {
        n
    }
}

#[allow(clippy::too_many_arguments)]
fn write_joint(
    out: &mut String,
    root: usize,
    depth: usize,
    skeleton: &rigml_core::Skeleton,
    children: &[Vec<usize>],
    end_site: &dyn Fn(usize) -> bool,
    with_position: &dyn Fn(usize) -> bool,
    order: &mut Vec<usize>,
) {
    // Explicit stack of (joint, depth, entering): no recursion on deep chains.
    let mut stack = vec![(root, depth, true)];
    while let Some((j, d, entering)) = stack.pop() {
        let indent = "\t".repeat(d.min(MAX_INDENT));
        if !entering {
            let _ = writeln!(out, "{indent}}}");
            continue;
        }
        let offset = skeleton.rest_local.get(j).map_or(Vec3::ZERO, |t| t.translation);
        let offset_line = format!("OFFSET {} {} {}", clean(offset.x), clean(offset.y), clean(offset.z));
        if end_site(j) {
            let _ = writeln!(out, "{indent}End Site\n{indent}{{\n{indent}\t{offset_line}\n{indent}}}");
            continue;
        }
        let keyword = if d == 0 { "ROOT" } else { "JOINT" };
        let name = skeleton.names.get(j).map_or("joint", |s| s.as_str());
        let _ = writeln!(
            out,
            "{indent}{keyword} {}\n{indent}{{\n{indent}\t{offset_line}",
            bvh_name(name)
        );
        if with_position(j) {
            let _ = writeln!(
                out,
                "{indent}\tCHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation"
            );
        } else {
            let _ = writeln!(out, "{indent}\tCHANNELS 3 Zrotation Yrotation Xrotation");
        }
        order.push(j);
        stack.push((j, d, false));
        for &c in children[j].iter().rev() {
            stack.push((c, d + 1, true));
        }
    }
}

fn check_scale(local: &[Transform], names: &[String], when: &str, path: &Path) -> Result<(), IoError> {
    for (j, t) in local.iter().enumerate() {
        if (t.scale - Vec3::ONE).abs().max_element() > SCALE_TOLERANCE {
            let name = names.get(j).map_or("", |s| s.as_str());
            return Err(IoError::unsupported(
                path,
                &format!(
                    "joint {j} ({name}) has scale {} in the {when}; BVH has no scale channels",
                    t.scale
                ),
            ));
        }
    }
    Ok(())
}

/// `(start time, frame time, frame count)` for resampling the clip.
fn frame_plan(clip: Option<&Clip>, path: &Path) -> Result<(f64, f64, usize), IoError> {
    let Some(clip) = clip else {
        return Ok((0.0, 1.0 / DEFAULT_FPS, 1));
    };
    let start = clip.start() as f64;
    let span = clip.duration() as f64 - start;
    let step = clip
        .channels
        .iter()
        .flat_map(|c| c.times.windows(2).map(|w| w[1] - w[0]))
        .filter(|&d| d >= MIN_FRAME_TIME)
        .fold(f32::INFINITY, f32::min) as f64;
    if span.is_nan() || span <= 0.0 || !step.is_finite() {
        return Ok((start, 1.0 / DEFAULT_FPS, 1));
    }
    let intervals = (span / step).round();
    if intervals.is_nan() || intervals >= MAX_FRAMES as f64 {
        return Err(IoError::unsupported(
            path,
            &format!(
                "clip '{}' spans {span} s with keys {step} s apart: more than {MAX_FRAMES} frames",
                clip.name
            ),
        ));
    }
    let intervals = (intervals as usize).max(1);
    Ok((start, span / intervals as f64, intervals + 1))
}
