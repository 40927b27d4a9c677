//! MakeHuman and MPFB rigs on the MakeHuman base mesh.
//!
//! Layout: `rig_<name>.json` (or MPFB's `rig.<name>.json`), `weights_<name>.json` (or
//! `weights.<name>.json`) and `base.obj` in one folder. Two rig schemas are read:
//!
//! * MakeHuman `.mhskel` (`{"bones": {name: {head, tail, parent}}, "joints": {name: [v...]}}`):
//!   a bone's head names a joint, whose position is the mean of the listed base-mesh vertices.
//! * MPFB rig JSON (`{name: {head: {strategy, ...}, parent}}`, optionally wrapped as
//!   `{"bones": {...}, "scale_factor": ...}`): the head is placed by `strategy` — `CUBE` (mean of
//!   the base-mesh vertex group `cube_name`, i.e. the faces under `g cube_name` in `base.obj`),
//!   `MEAN` (mean of `vertex_indices`) or `VERTEX` (`vertex_index`). `default_position` is not
//!   used: it is in Blender's Z-up metres for MPFB's default body, not the base mesh's space.
//!
//! The skeleton has one joint per bone at the bone's head, in the rig file's bone order
//! (parents moved before children), identity rotations, bind = rest, all in `base.obj` units
//! (decimetres, Y up). Weights (`{"weights": {bone: [[vertex, weight], ...]}}`) are not
//! normalised in the files; the skin merges, caps at [`DEFAULT_MAX_INFLUENCES`] and normalises
//! each vertex's row, and vertices with no weight are unskinned.

use crate::error::read_file;
use crate::obj::{self, ObjFile};
use crate::IoError;
use glam::{Mat4, Vec3};
use rigml_core::{Character, Skeleton, Skin, Transform, DEFAULT_MAX_INFLUENCES};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// JSON object entries in file order (serde_json's own map sorts keys).
struct Ordered<T>(Vec<(String, T)>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, T>()? {
                    entries.push(entry);
                }
                Ok(Ordered(entries))
            }
        }
        deserializer.deserialize_map(V(std::marker::PhantomData))
    }
}

/// The `bones` object of a wrapped rig, in file order.
#[derive(serde::Deserialize)]
struct Wrapped {
    bones: Ordered<Value>,
}

/// The files a rig path implies: `(weights, base mesh)`. `rig_<name>.json` pairs with
/// `weights_<name>.json`, MPFB's `rig.<name>.json` with `weights.<name>.json`; the base mesh is
/// `base.obj` beside the rig. (For MakeHuman's own `.mhskel` layout see [`read`].)
pub fn companion_paths(rig_path: &Path) -> Result<(PathBuf, PathBuf), IoError> {
    let name = rig_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let weights = if let Some(rest) = name.strip_prefix("rig_") {
        format!("weights_{rest}")
    } else if let Some(rest) = name.strip_prefix("rig.") {
        format!("weights.{rest}")
    } else {
        return Err(IoError::unsupported(
            rig_path,
            "a MakeHuman rig must be named rig_<name>.json or rig.<name>.json (weights and base.obj beside it), \
             or be a .mhskel file",
        ));
    };
    Ok((rig_path.with_file_name(weights), rig_path.with_file_name("base.obj")))
}

/// MakeHuman's own layout: `rigs/<name>.mhskel` names its weights in `"weights_file"` (beside
/// it); the base mesh is `base.obj` beside it or MakeHuman's `../3dobjs/base.obj`.
fn mhskel_companions(rig_path: &Path, rig: &[u8]) -> Result<(PathBuf, PathBuf), IoError> {
    let json: Value =
        serde_json::from_slice(rig).map_err(|e| IoError::parse(rig_path, format!("not valid JSON: {e}")))?;
    let weights = json
        .get("weights_file")
        .and_then(Value::as_str)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| IoError::parse(rig_path, "weights_file: expected the name of the weights file"))?;
    let beside = rig_path.with_file_name("base.obj");
    let mesh = if beside.is_file() {
        beside
    } else {
        rig_path.with_file_name("../3dobjs/base.obj")
    };
    Ok((rig_path.with_file_name(weights), mesh))
}

/// Read a MakeHuman/MPFB rig with its weights and base mesh (see [`companion_paths`]).
pub fn read(path: &Path) -> Result<Character, IoError> {
    let rig = read_file(path)?;
    let is_mhskel = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("mhskel"));
    let (weights_path, mesh_path) = if is_mhskel {
        mhskel_companions(path, &rig)?
    } else {
        companion_paths(path)?
    };
    let base = obj::parse(&read_file(&mesh_path)?, &mesh_path)?;
    let weights = read_file(&weights_path)?;
    from_parts(&rig, path, &weights, &weights_path, base, &mesh_path)
}

/// Build the character from rig and weights JSON bytes and the parsed base mesh.
pub fn from_parts(
    rig: &[u8],
    rig_path: &Path,
    weights: &[u8],
    weights_path: &Path,
    base: ObjFile,
    mesh_path: &Path,
) -> Result<Character, IoError> {
    let top: Ordered<Value> =
        serde_json::from_slice(rig).map_err(|e| IoError::parse(rig_path, format!("not a JSON object: {e}")))?;
    let joints = top.0.iter().find(|(k, _)| k == "joints").map(|(_, v)| v.clone());
    let wrapped = top.0.iter().any(|(k, v)| k == "bones" && v.is_object());
    let bones = if wrapped {
        let w: Wrapped = serde_json::from_slice(rig).map_err(|e| IoError::parse(rig_path, format!("bones: {e}")))?;
        w.bones.0
    } else {
        top.0
    };
    let place = Placer {
        positions: &base.mesh.positions,
        groups: &base,
        rig_path,
        mesh_path,
    };
    let mut names = Vec::with_capacity(bones.len());
    let mut heads = Vec::with_capacity(bones.len());
    let mut parent_names = Vec::with_capacity(bones.len());
    for (name, bone) in &bones {
        let at = format!("bones[\"{name}\"]");
        let head = match &joints {
            Some(joints) => place.mhskel_head(bone, joints, &at)?,
            None => place.mpfb_head(bone, &at)?,
        };
        let parent = match bone.get("parent") {
            None | Some(Value::Null) => None,
            Some(Value::String(p)) if p.is_empty() => None,
            Some(Value::String(p)) => Some(p.clone()),
            Some(other) => {
                return Err(IoError::parse(
                    rig_path,
                    format!("{at}.parent: expected a bone name, found {other}"),
                ))
            }
        };
        names.push(name.clone());
        heads.push(head);
        parent_names.push(parent);
    }
    let index: HashMap<String, usize> = names.iter().enumerate().map(|(j, n)| (n.clone(), j)).collect();
    let mut parents = Vec::with_capacity(names.len());
    for (name, parent) in names.iter().zip(&parent_names) {
        parents.push(match parent {
            None => None,
            Some(p) => Some(*index.get(p.as_str()).ok_or_else(|| {
                IoError::parse(
                    rig_path,
                    format!("bones[\"{name}\"].parent: bone \"{p}\" does not exist"),
                )
            })?),
        });
    }
    let rest_local: Vec<Transform> = heads
        .iter()
        .zip(&parents)
        .map(|(&h, p)| Transform::from_translation(h - p.and_then(|p| heads.get(p)).copied().unwrap_or(Vec3::ZERO)))
        .collect();
    let n = names.len();
    let (mut skeleton, new_index) = Skeleton::from_unordered(names, parents, rest_local, vec![Mat4::IDENTITY; n])
        .map_err(|e| IoError::invalid(rig_path, e))?;
    skeleton.bind_to_rest();
    let skin = read_weights(
        weights,
        weights_path,
        &skeleton,
        &new_index,
        &index,
        base.mesh.vertex_count(),
    )?;
    let name = rig_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = name.trim_start_matches("rig_").trim_start_matches("rig.").to_string();
    Ok(Character {
        name: format!("makehuman-{name}"),
        mesh: base.mesh,
        skeleton,
        skin: Some(skin),
        clips: Vec::new(),
        attachments: Vec::new(),
    })
}

/// Places joints on the base mesh.
struct Placer<'a> {
    positions: &'a [Vec3],
    groups: &'a ObjFile,
    rig_path: &'a Path,
    mesh_path: &'a Path,
}

impl Placer<'_> {
    fn err(&self, at: &str, msg: impl std::fmt::Display) -> IoError {
        IoError::parse(self.rig_path, format!("{at}: {msg}"))
    }

    /// Mean of the base-mesh vertices named by a JSON array of indices.
    fn mean_of_array(&self, list: Option<&Value>, at: &str) -> Result<Vec3, IoError> {
        let list = list
            .and_then(Value::as_array)
            .ok_or_else(|| self.err(at, "expected an array of vertex indices"))?;
        let mut indices = Vec::with_capacity(list.len());
        for (i, v) in list.iter().enumerate() {
            let v = v
                .as_u64()
                .ok_or_else(|| self.err(&format!("{at}[{i}]"), format!("{v} is not a vertex index")))?;
            indices.push((i, v));
        }
        self.mean(indices.into_iter(), at)
    }

    fn mean(&self, indices: impl Iterator<Item = (usize, u64)>, at: &str) -> Result<Vec3, IoError> {
        let mut sum = glam::DVec3::ZERO;
        let mut count = 0usize;
        for (i, v) in indices {
            let p = usize::try_from(v)
                .ok()
                .and_then(|v| self.positions.get(v))
                .ok_or_else(|| {
                    self.err(
                        &format!("{at}[{i}]"),
                        format!(
                            "vertex {v} does not exist ({} has {} vertices)",
                            self.mesh_path.display(),
                            self.positions.len()
                        ),
                    )
                })?;
            sum += p.as_dvec3();
            count += 1;
        }
        if count == 0 {
            return Err(self.err(at, "no vertices to place the joint"));
        }
        Ok((sum / count as f64).as_vec3())
    }

    /// `.mhskel`: the head is a joint name in `joints`, a list of vertices.
    fn mhskel_head(&self, bone: &Value, joints: &Value, at: &str) -> Result<Vec3, IoError> {
        let head = bone
            .get("head")
            .and_then(Value::as_str)
            .ok_or_else(|| self.err(&format!("{at}.head"), "expected a joint name"))?;
        let list = joints
            .get(head)
            .ok_or_else(|| self.err(&format!("{at}.head"), format!("joint \"{head}\" is not in \"joints\"")))?;
        self.mean_of_array(Some(list), &format!("joints[\"{head}\"]"))
    }

    /// MPFB: the head says how it is placed.
    fn mpfb_head(&self, bone: &Value, at: &str) -> Result<Vec3, IoError> {
        let at = format!("{at}.head");
        let head = bone
            .get("head")
            .filter(|h| h.is_object())
            .ok_or_else(|| self.err(&at, "expected an object with a placement strategy"))?;
        let strategy = head.get("strategy").and_then(Value::as_str).unwrap_or("");
        match strategy {
            "CUBE" => {
                let cube = head
                    .get("cube_name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| self.err(&format!("{at}.cube_name"), "expected a vertex group name"))?;
                let members = self.groups.group(cube).ok_or_else(|| {
                    self.err(
                        &format!("{at}.cube_name"),
                        format!("vertex group \"{cube}\" is not in {}", self.mesh_path.display()),
                    )
                })?;
                self.mean(
                    members.iter().map(|&v| v as u64).enumerate(),
                    &format!("{at} (group \"{cube}\")"),
                )
            }
            "MEAN" => self.mean_of_array(head.get("vertex_indices"), &format!("{at}.vertex_indices")),
            "VERTEX" => {
                let v = head
                    .get("vertex_index")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| self.err(&format!("{at}.vertex_index"), "expected a vertex index"))?;
                self.mean(std::iter::once((0, v)), &format!("{at}.vertex_index"))
            }
            other => Err(self.err(
                &format!("{at}.strategy"),
                format!("unknown strategy \"{other}\" (expected CUBE, MEAN or VERTEX)"),
            )),
        }
    }
}

/// The skin from `{"weights": {bone: [[vertex, weight], ...]}}`.
fn read_weights(
    bytes: &[u8],
    path: &Path,
    skeleton: &Skeleton,
    new_index: &[usize],
    index: &HashMap<String, usize>,
    vertex_count: usize,
) -> Result<Skin, IoError> {
    let json: Value =
        serde_json::from_slice(bytes).map_err(|e| IoError::parse(path, format!("not valid JSON: {e}")))?;
    let weights = json
        .get("weights")
        .and_then(Value::as_object)
        .ok_or_else(|| IoError::parse(path, "weights: expected an object of bone → [[vertex, weight], ...]"))?;
    let mut rows: Vec<Vec<(u32, f32)>> = vec![Vec::new(); vertex_count];
    for (bone, list) in weights {
        let at = format!("weights[\"{bone}\"]");
        let j = index
            .get(bone)
            .and_then(|&j| new_index.get(j))
            .ok_or_else(|| IoError::parse(path, format!("{at}: bone \"{bone}\" is not in the rig")))?;
        let list = list
            .as_array()
            .ok_or_else(|| IoError::parse(path, format!("{at}: expected an array of [vertex, weight]")))?;
        for (i, pair) in list.iter().enumerate() {
            let (v, w) = match pair.as_array().map(Vec::as_slice) {
                Some([v, w]) => (v.as_u64(), w.as_f64()),
                _ => (None, None),
            };
            let (Some(v), Some(w)) = (v, w) else {
                return Err(IoError::parse(
                    path,
                    format!("{at}[{i}]: expected [vertex, weight], found {pair}"),
                ));
            };
            let row = usize::try_from(v).ok().and_then(|v| rows.get_mut(v)).ok_or_else(|| {
                IoError::parse(
                    path,
                    format!("{at}[{i}]: vertex {v} does not exist (the mesh has {vertex_count} vertices)"),
                )
            })?;
            row.push((*j as u32, w as f32));
        }
    }
    Skin::from_rows(
        rows.iter().map(Vec::as_slice),
        skeleton.joint_count(),
        DEFAULT_MAX_INFLUENCES,
    )
    .map_err(|e| IoError::invalid(path, e))
}

#[cfg(test)]
mod tests;
