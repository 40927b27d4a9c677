//! Character → BVH text: the skeleton and the first clip, resampled to uniform frames.

use crate::IoError;
use glam::{EulerRot, Vec3};
use rigml_core::{ChannelValues, Character, Clip, Pose, Skeleton, Transform};
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

/// A joint's rotation channel order: glam's intrinsic Euler order and the axis letters.
#[derive(Clone, Copy)]
struct Order {
    euler: EulerRot,
    axes: [char; 3],
}

/// The order BVH files most often use, and the default.
const ZYX: Order = Order {
    euler: EulerRot::ZYX,
    axes: ['Z', 'Y', 'X'],
};

/// `"ZXY"` → that order. BVH composes `R = R₁·R₂·R₃` in channel order, which is glam's
/// intrinsic Euler order of the same name.
fn order_of(name: &str) -> Option<Order> {
    let euler = match name.to_ascii_uppercase().as_str() {
        "XYZ" => EulerRot::XYZ,
        "XZY" => EulerRot::XZY,
        "YXZ" => EulerRot::YXZ,
        "YZX" => EulerRot::YZX,
        "ZXY" => EulerRot::ZXY,
        "ZYX" => EulerRot::ZYX,
        _ => return None,
    };
    let mut axes = ['X'; 3];
    for (a, c) in axes.iter_mut().zip(name.chars()) {
        *a = c.to_ascii_uppercase();
    }
    Some(Order { euler, axes })
}

/// What each joint becomes in the file.
struct Layout {
    children: Vec<Vec<usize>>,
    end_site: Vec<bool>,
    with_position: Vec<bool>,
    orders: Vec<Order>,
}

/// The skeleton and first clip as BVH text, rotations in Z-Y-X order.
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
    to_bvh_with_orders(character, path, &[])
}

/// Like [`to_bvh`], with a rotation order per joint (`"ZXY"`, as in
/// [`BvhFile::rotation_order`](super::BvhFile::rotation_order)), so a file read can be written
/// back with its own channel orders. Joints without a recognised Tait-Bryan order (missing,
/// empty, or repeated axes) use Z-Y-X.
pub fn to_bvh_with_orders(character: &Character, path: &Path, rotation_order: &[String]) -> Result<String, IoError> {
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
    let layout = layout(character, rotation_order);
    check_scale(&skeleton.rest_local, &skeleton.names, "rest pose", path)?;
    let mut out = String::new();
    out.push_str("HIERARCHY\n");
    // Depth-first, children in joint order: the written channel order is this order.
    let mut order = Vec::with_capacity(skeleton.joint_count());
    for root in (0..skeleton.joint_count()).filter(|&j| skeleton.parents[j].is_none()) {
        write_joint(&mut out, root, skeleton, &layout, &mut order);
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
            if layout.with_position[j] {
                values[..3].copy_from_slice(&local.translation.to_array());
                n = 3;
            }
            let (a, b, c) = local.rotation.as_dquat().normalize().to_euler(layout.orders[j].euler);
            for angle in [a, b, c] {
                values[n] = angle.to_degrees() as f32;
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

fn layout(character: &Character, rotation_order: &[String]) -> Layout {
    let skeleton = &character.skeleton;
    let n = skeleton.joint_count();
    let mut animated = vec![false; n];
    let mut with_position: Vec<bool> = skeleton.parents.iter().map(Option::is_none).collect();
    for c in character.clips.first().map(|c| c.channels.as_slice()).unwrap_or(&[]) {
        if let Some(a) = animated.get_mut(c.joint) {
            *a = true;
        }
        if let (Some(t), ChannelValues::Translation(_)) = (with_position.get_mut(c.joint), &c.values) {
            *t = true;
        }
    }
    let children = skeleton.children();
    let end_site = (0..n)
        .map(|j| skeleton.parents[j].is_some() && children[j].is_empty() && !animated[j])
        .collect();
    let orders = (0..n)
        .map(|j| rotation_order.get(j).and_then(|o| order_of(o)).unwrap_or(ZYX))
        .collect();
    Layout {
        children,
        end_site,
        with_position,
        orders,
    }
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

/// Write the block of `root` and everything below it; `order` collects the joints that carry
/// channels, in the order their values appear on a frame line.
fn write_joint(out: &mut String, root: usize, skeleton: &Skeleton, layout: &Layout, order: &mut Vec<usize>) {
    // Explicit stack of (joint, depth, entering): no recursion on deep chains.
    let mut stack = vec![(root, 0usize, true)];
    while let Some((j, d, entering)) = stack.pop() {
        let indent = "\t".repeat(d.min(MAX_INDENT));
        if !entering {
            let _ = writeln!(out, "{indent}}}");
            continue;
        }
        let offset = skeleton.rest_local.get(j).map_or(Vec3::ZERO, |t| t.translation);
        let offset_line = format!("OFFSET {} {} {}", clean(offset.x), clean(offset.y), clean(offset.z));
        if layout.end_site[j] {
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
        let [a, b, c] = layout.orders[j].axes;
        let rotations = format!("{a}rotation {b}rotation {c}rotation");
        if layout.with_position[j] {
            let _ = writeln!(out, "{indent}\tCHANNELS 6 Xposition Yposition Zposition {rotations}");
        } else {
            let _ = writeln!(out, "{indent}\tCHANNELS 3 {rotations}");
        }
        order.push(j);
        stack.push((j, d, false));
        for &child in layout.children[j].iter().rev() {
            stack.push((child, d + 1, true));
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
