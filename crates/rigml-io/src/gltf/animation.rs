//! Animations into [`Clip`]s: channels on skeleton joints, keys exactly as stored; channels on
//! other nodes, morph-weight channels and `KHR_animation_pointer` channels are skipped (the
//! character has no place for them). An animation left with no joint channel is not a clip:
//! it is left out with a warning.

use super::accessor::Doc;
use super::hierarchy::Hierarchy;
use super::json::{self, at, fail, unsupported, Fail, Here};
use glam::{Mat4, Quat, Vec3};
use rigml_core::{Channel, ChannelValues, Clip, Interpolation};
use std::collections::HashMap;

/// Every animation of the file that drives a joint, as a clip, and the warnings: one per
/// animation left out because none of its channels drives a joint, and one per skipped channel
/// of a kept clip that moves a non-joint node away from its rest transform.
pub(super) fn read_clips(
    doc: &Doc,
    tree: &Hierarchy,
    joint_of_node: &HashMap<usize, usize>,
    baked: &HashMap<usize, Mat4>,
) -> Result<(Vec<Clip>, Vec<String>), Fail> {
    let mut warnings = Vec::new();
    let mut clips = Vec::new();
    for (a, value) in doc.animations.iter().enumerate() {
        let here = at(move |f| write!(f, "animations[{a}]"));
        let anim = json::object(value, here)?;
        let name = json::opt_str(anim, "name", here)?.map_or_else(|| format!("animation{a}"), str::to_string);
        let samplers = json::array(anim, "samplers", here)?;
        let listed = json::array(anim, "channels", here)?;
        let mut channels = Vec::with_capacity(listed.len());
        let mut dropped = Vec::new();
        for (c, ch) in listed.iter().enumerate() {
            let cpath = at(move |f| write!(f, "{here}.channels[{c}]"));
            match read_channel(doc, ch, cpath, samplers, here, joint_of_node, baked)? {
                // A channel without keys drives nothing (glTF requires at least one key).
                Read::Joint(channel) if channel.times.is_empty() => {}
                Read::Joint(channel) => channels.push(channel),
                Read::OtherNode(node) => {
                    if moves_node(doc, tree, ch, samplers, node) {
                        dropped.push(format!(
                            "{cpath}: animates nodes[{node}] ({}), which is not a joint; that motion is dropped",
                            tree.name(node)
                        ));
                    }
                }
                Read::Skipped => {}
            }
        }
        if channels.is_empty() {
            warnings.push(format!(
                "{here} ({name}): drives no joint ({} channel(s) on other nodes, morph weights or pointers): left out",
                listed.len()
            ));
        } else {
            warnings.extend(dropped);
            clips.push(Clip { name, channels });
        }
    }
    Ok((clips, warnings))
}

/// What a channel became.
enum Read {
    Joint(Channel),
    /// A translation/rotation/scale channel on this node, which is not a joint.
    OtherNode(usize),
    Skipped,
}

/// Whether a skipped channel's values differ from the node's rest (a channel that holds the
/// rest pose, as BrainStem's does, loses nothing). Unreadable data counts as moving.
fn moves_node(doc: &Doc, tree: &Hierarchy, ch: &json::Value<'_>, samplers: &[json::Value<'_>], node: usize) -> bool {
    let (Some(path), Some(sampler)) = (
        ch.get("target").and_then(|t| t.get("path")).and_then(|p| p.as_str()),
        ch.get("sampler")
            .and_then(|s| s.as_u64())
            .and_then(|s| samplers.get(s as usize)),
    ) else {
        return true;
    };
    let Some(output) = sampler.get("output").and_then(|o| o.as_u64()) else {
        return true;
    };
    let Ok(rest) = tree.local_trs(node) else {
        return true;
    };
    let (ty, reference): (&str, Vec<f32>) = match path {
        "translation" => ("VEC3", rest.translation.to_array().to_vec()),
        "scale" => ("VEC3", rest.scale.to_array().to_vec()),
        _ => ("VEC4", rest.rotation.to_array().to_vec()),
    };
    let Ok(values) = doc.floats(output as usize, "skipped channel", &[ty]) else {
        return true;
    };
    let cubic = sampler.get("interpolation").and_then(|i| i.as_str()) == Some("CUBICSPLINE");
    values.data.chunks(reference.len()).enumerate().any(|(k, v)| {
        let tangent = cubic && k % 3 != 1;
        v.iter().zip(&reference).any(|(a, b)| {
            let target = if tangent { 0.0 } else { *b };
            (a - target).abs() > 1e-5 * (1.0 + target.abs())
        })
    })
}

fn read_channel(
    doc: &Doc,
    ch: &json::Value<'_>,
    cpath: impl Here,
    samplers: &[json::Value<'_>],
    apath: impl Here,
    joint_of_node: &HashMap<usize, usize>,
    baked: &HashMap<usize, Mat4>,
) -> Result<Read, Fail> {
    let ch = json::object(ch, cpath)?;
    let tpath = json::join(cpath, "target");
    let target = json::object(ch.get("target").unwrap_or(&json::Value::Null), tpath)?;
    let Some(node) = json::opt_index(target, "node", tpath)? else {
        return Ok(Read::Skipped); // Targets given by extensions (KHR_animation_pointer).
    };
    if node >= doc.nodes.len() {
        return Err(fail(format!("{tpath}.node: node {node} does not exist")));
    }
    let path = json::opt_str(target, "path", tpath)?.unwrap_or("");
    if !matches!(path, "translation" | "rotation" | "scale") {
        return Ok(Read::Skipped);
    }
    let Some(&joint) = joint_of_node.get(&node) else {
        return Ok(Read::OtherNode(node));
    };
    let s = json::req_index(ch, "sampler", cpath)?;
    let spath = at(move |f| write!(f, "{apath}.samplers[{s}]"));
    let sampler = json::item(samplers, s, "sampler", json::join(cpath, "sampler"))?;
    let interpolation = match json::opt_str(sampler, "interpolation", spath)?.unwrap_or("LINEAR") {
        "LINEAR" => Interpolation::Linear,
        "STEP" => Interpolation::Step,
        "CUBICSPLINE" => Interpolation::CubicSpline,
        other => return Err(fail(format!("{spath}.interpolation: unknown {other:?}"))),
    };
    let ipath = json::join(spath, "input");
    let times = doc
        .floats(json::req_index(sampler, "input", spath)?, ipath, &["SCALAR"])?
        .data;
    if let Some(k) = times
        .windows(2)
        .position(|w| w[1] < w[0] || w[1].is_nan() || w[0].is_nan())
    {
        return Err(fail(format!(
            "{ipath}: key times decrease (or are NaN) at key {}",
            k + 1
        )));
    }
    let opath = json::join(spath, "output");
    let out_index = json::req_index(sampler, "output", spath)?;
    let per_key = if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    let ty = if path == "rotation" { "VEC4" } else { "VEC3" };
    let out = doc.floats(out_index, opath, &[ty])?;
    if out.count() != times.len() * per_key {
        return Err(fail(format!(
            "{opath}: {} values for {} keys ({per_key} per key with {interpolation:?})",
            out.count(),
            times.len()
        )));
    }
    let bake = baked.get(&joint);
    let values = match path {
        "rotation" => {
            let mut v: Vec<Quat> = (0..out.count())
                .filter_map(|k| out.get::<4>(k))
                .map(Quat::from_array)
                .collect();
            if let Some(a) = bake {
                let (_, rot, _) = uniform(a, cpath)?;
                v.iter_mut().for_each(|q| *q = rot * *q);
            }
            ChannelValues::Rotation(v)
        }
        _ => {
            let mut v: Vec<Vec3> = (0..out.count())
                .filter_map(|k| out.get::<3>(k))
                .map(Vec3::from)
                .collect();
            if let Some(a) = bake {
                let (scale, rot, shift) = uniform(a, cpath)?;
                for (k, x) in v.iter_mut().enumerate() {
                    // Cubic tangents (slots 0 and 2 of each key) are directions: no offset.
                    let is_value = per_key == 1 || k % 3 == 1;
                    *x = match (path, is_value) {
                        ("translation", true) => shift + rot * (*x * scale),
                        ("translation", false) => rot * (*x * scale),
                        _ => *x * scale,
                    };
                }
            }
            if path == "translation" {
                ChannelValues::Translation(v)
            } else {
                ChannelValues::Scale(v)
            }
        }
    };
    Ok(Read::Joint(Channel {
        joint,
        interpolation,
        times,
        values,
    }))
}

/// The baked ancestors' matrix as (uniform scale, rotation, translation); a channel on a root
/// below a non-uniformly scaled ancestor cannot be re-expressed as TRS keys.
fn uniform(a: &Mat4, cpath: impl Here) -> Result<(f32, Quat, Vec3), Fail> {
    let (scale, rot, shift) = a.to_scale_rotation_translation();
    let s = scale.x;
    if (scale.y - s).abs() > 1e-5 * s.abs() || (scale.z - s).abs() > 1e-5 * s.abs() {
        return Err(unsupported(format!(
            "{cpath}: animates a root joint under a non-uniformly scaled node ({scale}); cannot bake it"
        )));
    }
    Ok((s, rot, shift))
}
