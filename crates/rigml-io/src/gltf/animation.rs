//! Animations into [`Clip`]s: channels on skeleton joints, keys exactly as stored; channels on
//! other nodes and morph-weight channels are skipped (the character has no place for them).

use super::accessor::Doc;
use super::json::{self, fail, unsupported, Fail};
use glam::{Mat4, Quat, Vec3};
use rigml_core::{Channel, ChannelValues, Clip, Interpolation};
use std::collections::HashMap;

/// Every animation of the file as a clip (possibly with no channels).
pub(super) fn read_clips(
    doc: &Doc,
    joint_of_node: &HashMap<usize, usize>,
    baked: &HashMap<usize, Mat4>,
) -> Result<Vec<Clip>, Fail> {
    doc.animations
        .iter()
        .enumerate()
        .map(|(a, value)| {
            let here = format!("animations[{a}]");
            let anim = json::object(value, &here)?;
            let name = json::opt_str(anim, "name", &here)?.map_or_else(|| format!("animation{a}"), str::to_string);
            let samplers = json::array(anim, "samplers", &here)?;
            let mut channels = Vec::new();
            for (c, ch) in json::array(anim, "channels", &here)?.iter().enumerate() {
                let cpath = format!("{here}.channels[{c}]");
                if let Some(channel) = read_channel(doc, ch, &cpath, samplers, &here, joint_of_node, baked)? {
                    channels.push(channel);
                }
            }
            Ok(Clip { name, channels })
        })
        .collect()
}

fn read_channel(
    doc: &Doc,
    ch: &serde_json::Value,
    cpath: &str,
    samplers: &[serde_json::Value],
    apath: &str,
    joint_of_node: &HashMap<usize, usize>,
    baked: &HashMap<usize, Mat4>,
) -> Result<Option<Channel>, Fail> {
    let ch = json::object(ch, cpath)?;
    let tpath = format!("{cpath}.target");
    let target = json::object(ch.get("target").unwrap_or(&serde_json::Value::Null), &tpath)?;
    let Some(node) = json::opt_index(target, "node", &tpath)? else {
        return Ok(None); // Targets given by extensions (KHR_animation_pointer) are not joints.
    };
    if node >= doc.nodes.len() {
        return Err(fail(format!("{tpath}.node: node {node} does not exist")));
    }
    let path = json::opt_str(target, "path", &tpath)?.unwrap_or("");
    let Some(&joint) = joint_of_node.get(&node) else {
        return Ok(None);
    };
    if !matches!(path, "translation" | "rotation" | "scale") {
        return Ok(None);
    }
    let s = json::req_index(ch, "sampler", cpath)?;
    let spath = format!("{apath}.samplers[{s}]");
    let sampler = json::item(samplers, s, "sampler", &format!("{cpath}.sampler"))?;
    let interpolation = match json::opt_str(sampler, "interpolation", &spath)?.unwrap_or("LINEAR") {
        "LINEAR" => Interpolation::Linear,
        "STEP" => Interpolation::Step,
        "CUBICSPLINE" => Interpolation::CubicSpline,
        other => return Err(fail(format!("{spath}.interpolation: unknown {other:?}"))),
    };
    let ipath = format!("{spath}.input");
    let times = doc
        .floats(json::req_index(sampler, "input", &spath)?, &ipath, &["SCALAR"])?
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
    let opath = format!("{spath}.output");
    let out_index = json::req_index(sampler, "output", &spath)?;
    let per_key = if interpolation == Interpolation::CubicSpline {
        3
    } else {
        1
    };
    let ty = if path == "rotation" { "VEC4" } else { "VEC3" };
    let out = doc.floats(out_index, &opath, &[ty])?;
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
    Ok(Some(Channel {
        joint,
        interpolation,
        times,
        values,
    }))
}

/// The baked ancestors' matrix as (uniform scale, rotation, translation); a channel on a root
/// below a non-uniformly scaled ancestor cannot be re-expressed as TRS keys.
fn uniform(a: &Mat4, cpath: &str) -> Result<(f32, Quat, Vec3), Fail> {
    let (scale, rot, shift) = a.to_scale_rotation_translation();
    let s = scale.x;
    if (scale.y - s).abs() > 1e-5 * s.abs() || (scale.z - s).abs() > 1e-5 * s.abs() {
        return Err(unsupported(format!(
            "{cpath}: animates a root joint under a non-uniformly scaled node ({scale}); cannot bake it"
        )));
    }
    Ok((s, rot, shift))
}
