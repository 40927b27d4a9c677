//! BVH (Biovision hierarchy) motion capture: a skeleton of offsets plus one baked clip.
//!
//! Reading: every `ROOT`/`JOINT` becomes a joint whose rest translation is its `OFFSET` and
//! whose rest rotation is the identity (BVH has no rest rotations). Every `End Site` becomes a
//! leaf joint named `<parent>_end` so the last bone of each chain has a length; those joints
//! carry no channels and [`BvhFile::end_site`] marks them. The motion becomes one clip with
//! linear keys at `f × Frame Time`: a rotation channel for every joint with rotation channels
//! (composed in the file's own per-joint order, `R = R₁·R₂·R₃`), and a translation channel for
//! every joint with position channels (the values replace the `OFFSET` on the axes they name,
//! the usual BVH convention for the root).
//!
//! Writing ([`to_bvh`]): offsets from the rest translations, rotations as Z-Y-X Euler angles,
//! six channels for roots and any joint with animated translation, three for the others.

mod parse;
mod write;

pub use write::{to_bvh, to_bvh_with_orders};

use crate::error::read_file;
use crate::obj::{stem, utf8};
use crate::IoError;
use glam::{DQuat, DVec3, Vec3};
use parse::{ChannelKind, RawBvh};
use rigml_core::{Channel, ChannelValues, Character, Clip, Interpolation, Skeleton, Transform};
use std::collections::HashSet;
use std::path::Path;

/// A BVH file read into a character, with what the character alone does not say.
#[derive(Debug, Clone, PartialEq)]
pub struct BvhFile {
    /// Skeleton and one clip (no mesh, no skin).
    pub character: Character,
    /// Per joint: true for joints made from `End Site` blocks.
    pub end_site: Vec<bool>,
    /// Per joint: the axes of its rotation channels in file order (`"ZXY"`), empty if none.
    pub rotation_order: Vec<String>,
    /// Number of frames (`Frames:`).
    pub frame_count: usize,
    /// Seconds per frame (`Frame Time:`).
    pub frame_time: f64,
    /// What the reader repaired, one line each (`line N: ...`; e.g. more frame lines than
    /// `Frames:` declares, all read).
    pub warnings: Vec<String>,
}

impl BvhFile {
    /// Frames per second, `1 / Frame Time` (0 when the file gives no usable frame time).
    pub fn fps(&self) -> f64 {
        if self.frame_time > 0.0 {
            1.0 / self.frame_time
        } else {
            0.0
        }
    }

    /// Joints that are `ROOT` or `JOINT` blocks (what BVH tools call the joint count).
    pub fn bvh_joint_count(&self) -> usize {
        self.end_site.iter().filter(|e| !**e).count()
    }
}

/// Read a BVH file into a character (skeleton + one clip).
pub fn read(path: &Path) -> Result<Character, IoError> {
    from_bytes(&read_file(path)?, path)
}

/// [`read`], also returning what was repaired (see [`BvhFile::warnings`]).
pub fn read_with_warnings(path: &Path) -> Result<(Character, Vec<String>), IoError> {
    let file = parse(&read_file(path)?, path)?;
    Ok((file.character, file.warnings))
}

/// Parse BVH bytes into a character; `path` names the file in errors and gives the character
/// and clip names.
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Character, IoError> {
    parse(bytes, path).map(|f| f.character)
}

/// Parse BVH bytes, keeping the file facts a character does not hold (End Sites, frame time).
pub fn parse(bytes: &[u8], path: &Path) -> Result<BvhFile, IoError> {
    let text = utf8(bytes, path)?;
    let raw = parse::parse(text, path)?;
    Ok(build(raw, &stem(path)))
}

/// Joint names made unique (`name`, `name_2`, ...), End Sites named `<parent>_end`.
fn joint_names(raw: &RawBvh) -> Vec<String> {
    let mut used: HashSet<String> = HashSet::new();
    let mut names: Vec<String> = Vec::with_capacity(raw.joints.len());
    for joint in &raw.joints {
        let base = if joint.end_site {
            let parent = joint.parent.and_then(|p| names.get(p)).map_or("", |s| s.as_str());
            format!("{parent}_end")
        } else {
            joint.name.clone()
        };
        let mut name = base.clone();
        let mut k = 2;
        while used.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        used.insert(name.clone());
        names.push(name);
    }
    names
}

fn axis(i: usize) -> DVec3 {
    match i {
        0 => DVec3::X,
        1 => DVec3::Y,
        _ => DVec3::Z,
    }
}

/// Turn the parsed file into a character. Joints are already parents-first (file order).
fn build(raw: RawBvh, name: &str) -> BvhFile {
    let names = joint_names(&raw);
    let mut skeleton = Skeleton {
        names,
        parents: raw.joints.iter().map(|j| j.parent).collect(),
        rest_local: raw
            .joints
            .iter()
            .map(|j| Transform::from_translation(j.offset.unwrap_or(Vec3::ZERO)))
            .collect(),
        inverse_bind: Vec::new(),
    };
    skeleton.bind_to_rest();

    let times: Vec<f32> = (0..raw.frame_count)
        .map(|f| (f as f64 * raw.frame_time) as f32)
        .collect();
    let mut channels = Vec::new();
    let mut first_channel = 0;
    for (j, joint) in raw.joints.iter().enumerate() {
        let n = joint.channels.len();
        if n == 0 || raw.frame_count == 0 {
            first_channel += n;
            continue;
        }
        let frame_values = |f: usize| {
            let start = f * raw.channel_count + first_channel;
            raw.values.get(start..start + n).unwrap_or(&[])
        };
        let has_position = joint.channels.iter().any(|c| matches!(c, ChannelKind::Position(_)));
        let has_rotation = joint.channels.iter().any(|c| matches!(c, ChannelKind::Rotation(_)));
        let offset = joint.offset.unwrap_or(Vec3::ZERO);
        let mut translations = Vec::with_capacity(if has_position { raw.frame_count } else { 0 });
        let mut rotations = Vec::with_capacity(if has_rotation { raw.frame_count } else { 0 });
        for f in 0..raw.frame_count {
            let mut t = offset;
            let mut q = DQuat::IDENTITY;
            for (kind, &value) in joint.channels.iter().zip(frame_values(f)) {
                match *kind {
                    ChannelKind::Position(a) => t[a] = value,
                    ChannelKind::Rotation(a) => q *= DQuat::from_axis_angle(axis(a), (value as f64).to_radians()),
                }
            }
            if has_position {
                translations.push(t);
            }
            if has_rotation {
                rotations.push(q.normalize().as_quat());
            }
        }
        if has_position {
            channels.push(Channel {
                joint: j,
                interpolation: Interpolation::Linear,
                times: times.clone(),
                values: ChannelValues::Translation(translations),
            });
        }
        if has_rotation {
            channels.push(Channel {
                joint: j,
                interpolation: Interpolation::Linear,
                times: times.clone(),
                values: ChannelValues::Rotation(rotations),
            });
        }
        first_channel += n;
    }
    BvhFile {
        end_site: raw.joints.iter().map(|j| j.end_site).collect(),
        rotation_order: raw
            .joints
            .iter()
            .map(|j| {
                j.channels
                    .iter()
                    .filter_map(|c| match c {
                        ChannelKind::Rotation(a) => ["X", "Y", "Z"].get(*a).copied(),
                        ChannelKind::Position(_) => None,
                    })
                    .collect()
            })
            .collect(),
        character: Character {
            name: name.to_string(),
            skeleton,
            clips: vec![Clip {
                name: name.to_string(),
                channels,
            }],
            ..Default::default()
        },
        frame_count: raw.frame_count,
        frame_time: raw.frame_time,
        warnings: raw.warnings,
    }
}

#[cfg(test)]
mod tests;
