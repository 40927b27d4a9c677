//! The writer: a character as one glTF scene — a node per joint, one mesh with a primitive per
//! part (so vertex order round-trips), one skin, one sampler per clip channel — laid out so
//! the Khronos validator reports no errors.

use super::container;
use crate::{atomic, IoError};
use rigml_core::{
    AlphaMode, ChannelValues, Character, Clip, Interpolation, Material, Mesh, MeshPart, Sampler, Skin, TextureSlot,
};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::Path;

const F32: u32 = 5126;
const U16: u32 = 5123;
const U32: u32 = 5125;
/// Primitive `extras` key listing vertices that have no skin weight (see `skin_attributes`).
pub(super) const UNSKINNED_KEY: &str = "rigml_unskinned";
/// Primitive `extras` key holding the part's name.
pub(super) const PART_NAME_KEY: &str = "rigml_part";
/// Primitive `extras` key (`true`) marking a POINTS primitive as a part's loose vertices (a
/// part without triangles), which the reader keeps; other points and lines it leaves out.
pub(super) const LOOSE_VERTICES_KEY: &str = "rigml_loose_vertices";
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;
/// Normals further than this from unit length are renormalised (the validator's threshold).
const UNIT_TOLERANCE: f32 = 5e-5;

/// The character as GLB bytes (`path` only names the file in errors).
pub fn to_glb(character: &Character, path: &Path) -> Result<Vec<u8>, IoError> {
    let (json, bin) = document(character, path, None)?;
    if json.len() + bin.len() > u32::MAX as usize - 64 {
        return Err(IoError::unsupported(path, "larger than the 4 GiB a GLB file can hold"));
    }
    Ok(container::glb(&json, &bin))
}

/// Write `.gltf` JSON and a `.bin` of the same stem beside it, both atomically; refuses to
/// replace either file unless `force`.
pub fn write_gltf(character: &Character, path: &Path, force: bool) -> Result<(), IoError> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| IoError::unsupported(path, "needs a file name"))?;
    let bin_name = format!("{stem}.bin");
    let bin_path = path.with_file_name(&bin_name);
    for p in [path, bin_path.as_path()] {
        if !force && p.exists() {
            return Err(IoError::Exists { path: p.to_path_buf() });
        }
    }
    let (json, bin) = document(character, path, Some(&percent_encode(&bin_name)))?;
    atomic::write(&bin_path, &bin, force)?;
    atomic::write(path, &json, force)
}

/// Accumulates the binary buffer, its views and accessors.
#[derive(Default)]
struct Out {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
    /// Key-time accessors already written, by their bits (clips share time lines).
    times: HashMap<Vec<u32>, usize>,
}

impl Out {
    fn accessor(&mut self, bytes: &[u8], target: Option<u32>, mut acc: Map<String, Value>) -> usize {
        self.bin.resize(self.bin.len().next_multiple_of(4), 0);
        let mut view = json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()});
        if let Some(t) = target {
            view["target"] = json!(t);
        }
        self.bin.extend_from_slice(bytes);
        self.views.push(view);
        acc.insert("bufferView".into(), json!(self.views.len() - 1));
        self.accessors.push(Value::Object(acc));
        self.accessors.len() - 1
    }

    /// A buffer view holding `bytes` as they are (an encoded image).
    fn raw_view(&mut self, bytes: &[u8]) -> usize {
        self.bin.resize(self.bin.len().next_multiple_of(4), 0);
        self.views
            .push(json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()}));
        self.bin.extend_from_slice(bytes);
        self.views.len() - 1
    }

    fn floats(&mut self, data: &[f32], ty: &str, width: usize, target: Option<u32>, bounds: bool) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut acc = meta(F32, data.len() / width, ty);
        if bounds {
            let mut min = vec![f32::INFINITY; width];
            let mut max = vec![f32::NEG_INFINITY; width];
            for e in data.chunks_exact(width) {
                for (k, &x) in e.iter().enumerate() {
                    min[k] = min[k].min(x);
                    max[k] = max[k].max(x);
                }
            }
            acc.insert("min".into(), json!(min));
            acc.insert("max".into(), json!(max));
        }
        self.accessor(&bytes, target, acc)
    }

    fn times(&mut self, times: &[f32]) -> usize {
        let key: Vec<u32> = times.iter().map(|t| t.to_bits()).collect();
        if let Some(&a) = self.times.get(&key) {
            return a;
        }
        let a = self.floats(times, "SCALAR", 1, None, true);
        self.times.insert(key, a);
        a
    }
}

fn meta(component: u32, count: usize, ty: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("componentType".into(), json!(component));
    m.insert("count".into(), json!(count));
    m.insert("type".into(), json!(ty));
    m
}

/// The glTF JSON text and the binary buffer; `bin_uri` names an external buffer (`.gltf`),
/// `None` means the GLB BIN chunk.
fn document(character: &Character, path: &Path, bin_uri: Option<&str>) -> Result<(Vec<u8>, Vec<u8>), IoError> {
    character.validate().map_err(|e| IoError::invalid(path, e))?;
    let skeleton = &character.skeleton;
    let joint_count = skeleton.joint_count();
    if joint_count > usize::from(u16::MAX) {
        return Err(IoError::unsupported(
            path,
            "more than 65535 joints (JOINTS_n holds 16-bit indices)",
        ));
    }
    let mut out = Out::default();
    let children = skeleton.children();
    let lift = skeleton.common_root_scale();
    let mut nodes: Vec<Value> = (0..joint_count)
        .map(|j| {
            let mut t = skeleton.rest_local[j];
            if let (Some(s), None) = (lift, skeleton.parents[j]) {
                t.translation /= s;
                t.scale /= s;
            }
            let mut node = json!({
                "name": skeleton.names[j],
                "translation": t.translation.to_array(),
                "rotation": t.rotation.to_array(),
                "scale": t.scale.to_array(),
            });
            if !children[j].is_empty() {
                node["children"] = json!(children[j]);
            }
            node
        })
        .collect();
    let mut scene_nodes: Vec<usize> = (0..joint_count).filter(|&j| skeleton.parents[j].is_none()).collect();
    if scene_nodes.len() > 1 || lift.is_some() {
        // glTF wants a skin's joints under one common root (SKIN_NO_COMMON_ROOT): gather several
        // root joints under a node that is not a joint; readers bake it away. It also carries
        // the roots' common scale, as the armature object of the file rigml read did: Blender
        // makes that node the armature object and sizes its bones in the unscaled space,
        // where a scale on the root bone would make every bone, and the offset of every mesh
        // parented to a bone, `scale` times too long.
        let mut gather = json!({"name": format!("{}_skeleton", character.name), "children": scene_nodes});
        if let Some(s) = lift {
            gather["scale"] = json!([s, s, s]);
        }
        nodes.push(gather);
        scene_nodes = vec![nodes.len() - 1];
    }
    let mut root = Map::new();
    root.insert("asset".into(), json!({"version": "2.0", "generator": "rigml"}));

    if joint_count > 0 {
        let ibm: Vec<f32> = skeleton.inverse_bind.iter().flat_map(|m| m.to_cols_array()).collect();
        let ibm = out.floats(&ibm, "MAT4", 16, None, false);
        let mut skin = json!({"joints": (0..joint_count).collect::<Vec<_>>(), "inverseBindMatrices": ibm});
        if let [common_root] = scene_nodes.as_slice() {
            skin["skeleton"] = json!(common_root);
        }
        root.insert("skins".into(), json!([skin]));
    }
    let skin = character.skin.as_ref().filter(|_| joint_count > 0);
    let primitives = primitives(&mut out, &character.mesh, skin, path)?;
    if !primitives.is_empty() {
        let mut node = json!({"name": character.name, "mesh": 0});
        if skin.is_some() {
            node["skin"] = json!(0);
        }
        nodes.push(node);
        scene_nodes.push(nodes.len() - 1);
    }
    let mut meshes: Vec<Value> = Vec::new();
    if !primitives.is_empty() {
        meshes.push(json!({"name": character.name, "primitives": primitives}));
    }
    // Attachments: a mesh each, on a node under their joint.
    for a in &character.attachments {
        let carried = self::primitives(&mut out, &a.mesh, None, path)?;
        if carried.is_empty() {
            continue;
        }
        meshes.push(json!({"name": a.name, "primitives": carried}));
        let mut node = json!({"name": a.name, "mesh": meshes.len() - 1});
        place_node(&mut node, &a.local);
        nodes.push(node);
        let child = nodes.len() - 1;
        match nodes[a.joint].get_mut("children").and_then(Value::as_array_mut) {
            Some(children) => children.push(json!(child)),
            None => nodes[a.joint]["children"] = json!([child]),
        }
    }
    if !meshes.is_empty() {
        root.insert("meshes".into(), json!(meshes));
    }
    if !meshes.is_empty() && !character.mesh.materials.is_empty() {
        looks(&mut out, &character.mesh, &mut root);
    }
    let animations = animations(&mut out, character, lift);
    if !animations.is_empty() {
        root.insert("animations".into(), json!(animations));
    }
    if !nodes.is_empty() {
        root.insert("nodes".into(), json!(nodes));
    }
    root.insert("scene".into(), json!(0));
    // An empty `nodes` array is invalid glTF (EMPTY_ENTITY): a character with nothing in it
    // gets a scene without one.
    let mut scene = json!({"name": character.name});
    if !scene_nodes.is_empty() {
        scene["nodes"] = json!(scene_nodes);
    }
    root.insert("scenes".into(), json!([scene]));
    out.bin.resize(out.bin.len().next_multiple_of(4), 0);
    if !out.bin.is_empty() {
        let mut buffer = json!({"byteLength": out.bin.len()});
        if let Some(uri) = bin_uri {
            buffer["uri"] = json!(uri);
        }
        root.insert("buffers".into(), json!([buffer]));
        root.insert("bufferViews".into(), json!(out.views));
        root.insert("accessors".into(), json!(out.accessors));
    }
    let text = serde_json::to_vec(&Value::Object(root)).map_err(|e| IoError::parse(path, e.to_string()))?;
    Ok((text, out.bin))
}

/// One primitive per part; the parts must tile the mesh in order, else the whole mesh is one.
fn primitives(out: &mut Out, mesh: &Mesh, skin: Option<&Skin>, path: &Path) -> Result<Vec<Value>, IoError> {
    let mut prims = Vec::new();
    for part in tiling_parts(mesh) {
        let (v0, v1) = (part.vertices.start, part.vertices.end);
        if v0 == v1 {
            continue; // glTF accessors need at least one element; an empty part has no data.
        }
        let positions: Vec<f32> = mesh.positions[v0..v1].iter().flat_map(|p| p.to_array()).collect();
        let mut attributes = Map::new();
        let pos = out.floats(&positions, "VEC3", 3, Some(ARRAY_BUFFER), true);
        attributes.insert("POSITION".into(), json!(pos));
        if let Some(normals) = mesh.normals.get(v0..v1).and_then(unit_normals) {
            let a = out.floats(&normals, "VEC3", 3, Some(ARRAY_BUFFER), false);
            attributes.insert("NORMAL".into(), json!(a));
        }
        if let Some(uvs) = mesh.uvs.get(v0..v1) {
            let data: Vec<f32> = uvs.iter().flat_map(|t| t.to_array()).collect();
            let a = out.floats(&data, "VEC2", 2, Some(ARRAY_BUFFER), false);
            attributes.insert("TEXCOORD_0".into(), json!(a));
        }
        let unskinned = skin.map_or_else(Vec::new, |skin| skin_attributes(out, skin, v0..v1, &mut attributes));
        let mut prim = json!({"attributes": attributes});
        if let Some(m) = part.material {
            prim["material"] = json!(m);
        }
        // glTF primitives have no name, and "no influence" has no encoding: rigml keeps both
        // in `extras` so its own files read back as written.
        let mut extras = Map::new();
        if !part.name.is_empty() {
            extras.insert(PART_NAME_KEY.into(), json!(part.name));
        }
        if !unskinned.is_empty() {
            extras.insert(UNSKINNED_KEY.into(), json!(unskinned));
        }
        let tris = &mesh.triangles[part.triangles.clone()];
        if tris.is_empty() {
            prim["mode"] = json!(0); // Vertices without faces stay points, marked as rigml's.
            extras.insert(LOOSE_VERTICES_KEY.into(), json!(true));
        } else {
            prim["indices"] = json!(indices(out, tris, v0, v1 - v0).map_err(|m| IoError::parse(path, m))?);
        }
        if !extras.is_empty() {
            prim["extras"] = Value::Object(extras);
        }
        prims.push(prim);
    }
    Ok(prims)
}

/// The mesh's parts when they cover its vertices and triangles in order with each triangle
/// inside its part; otherwise one part for everything.
fn tiling_parts(mesh: &Mesh) -> Vec<MeshPart> {
    let parts = mesh.parts_or_whole();
    let (mut v, mut t) = (0, 0);
    let tiles = parts.iter().all(|p| {
        let ok = p.vertices.start == v
            && p.triangles.start == t
            && p.vertices.end >= v
            && p.triangles.end >= t
            && p.triangles.end <= mesh.triangles.len()
            && mesh.triangles[p.triangles.clone()]
                .iter()
                .all(|tri| tri.iter().all(|&i| p.vertices.contains(&(i as usize))));
        v = p.vertices.end;
        t = p.triangles.end;
        ok
    });
    if tiles && v == mesh.positions.len() && t == mesh.triangles.len() {
        parts
    } else {
        vec![MeshPart {
            name: String::new(),
            vertices: 0..mesh.positions.len(),
            triangles: 0..mesh.triangles.len(),
            material: None,
        }]
    }
}

/// Normals as written: unit length (renormalised when off), or `None` when one is zero or
/// non-finite (the validator refuses those; the part is then written without normals).
fn unit_normals(normals: &[glam::Vec3]) -> Option<Vec<f32>> {
    let mut data = Vec::with_capacity(normals.len() * 3);
    for n in normals {
        let len = n.length();
        if !len.is_finite() || len < 1e-6 {
            return None;
        }
        let n = if (len - 1.0).abs() > UNIT_TOLERANCE {
            *n / len
        } else {
            *n
        };
        data.extend_from_slice(&n.to_array());
    }
    Some(data)
}

fn indices(out: &mut Out, tris: &[[u32; 3]], v0: usize, count: usize) -> Result<usize, String> {
    let local = tris.iter().flatten().map(|&i| i as usize - v0);
    // 65535 is the primitive-restart value, which glTF forbids in index data.
    let (bytes, component): (Vec<u8>, u32) = if count < usize::from(u16::MAX) {
        (local.flat_map(|i| (i as u16).to_le_bytes()).collect(), U16)
    } else if count < u32::MAX as usize {
        (local.flat_map(|i| (i as u32).to_le_bytes()).collect(), U32)
    } else {
        return Err("a part has more than 2^32-1 vertices".into());
    };
    Ok(out.accessor(
        &bytes,
        Some(ELEMENT_ARRAY_BUFFER),
        meta(component, tris.len() * 3, "SCALAR"),
    ))
}

/// A node's transform: translation, rotation and scale when `m` is one (within float
/// rounding), else the matrix.
fn place_node(node: &mut Value, m: &glam::Mat4) {
    if *m == glam::Mat4::IDENTITY {
        return;
    }
    let (scale, rotation, translation) = m.to_scale_rotation_translation();
    let back = glam::Mat4::from_scale_rotation_translation(scale, rotation, translation);
    let size = m.to_cols_array().iter().fold(1f32, |a, x| a.max(x.abs()));
    if back.abs_diff_eq(*m, 1e-6 * size) && scale.min_element() > 0.0 {
        node["translation"] = json!(translation.to_array());
        node["rotation"] = json!(rotation.normalize().to_array());
        node["scale"] = json!(scale.to_array());
    } else {
        node["matrix"] = json!(m.to_cols_array());
    }
}

/// Materials, textures, samplers and images into the document (images as buffer views;
/// identical samplers and identical image-sampler pairs written once).
fn looks(out: &mut Out, mesh: &Mesh, root: &mut Map<String, Value>) {
    let images: Vec<Value> = mesh
        .images
        .iter()
        .map(|image| {
            let view = out.raw_view(&image.bytes);
            let mut v = json!({"bufferView": view, "mimeType": image.mime_type});
            if !image.name.is_empty() {
                v["name"] = json!(image.name);
            }
            v
        })
        .collect();
    let mut samplers: Vec<Sampler> = Vec::new();
    let mut textures: Vec<(usize, usize)> = Vec::new();
    let mut info = |slot: &TextureSlot, scale_key: Option<&str>| {
        let s = samplers.iter().position(|x| *x == slot.sampler).unwrap_or_else(|| {
            samplers.push(slot.sampler);
            samplers.len() - 1
        });
        let t = textures.iter().position(|x| *x == (slot.image, s)).unwrap_or_else(|| {
            textures.push((slot.image, s));
            textures.len() - 1
        });
        let mut v = json!({"index": t});
        if let Some(k) = scale_key.filter(|_| slot.scale != 1.0) {
            v[k] = json!(slot.scale);
        }
        v
    };
    let mut unlit = false;
    let materials: Vec<Value> = mesh
        .materials
        .iter()
        .map(|m: &Material| {
            let mut pbr = json!({
                "baseColorFactor": m.base_color,
                "metallicFactor": m.metallic,
                "roughnessFactor": m.roughness,
            });
            if let Some(t) = &m.base_color_texture {
                pbr["baseColorTexture"] = info(t, None);
            }
            if let Some(t) = &m.metallic_roughness_texture {
                pbr["metallicRoughnessTexture"] = info(t, None);
            }
            let mut v = json!({"pbrMetallicRoughness": pbr});
            if !m.name.is_empty() {
                v["name"] = json!(m.name);
            }
            if let Some(t) = &m.normal_texture {
                v["normalTexture"] = info(t, Some("scale"));
            }
            if let Some(t) = &m.occlusion_texture {
                v["occlusionTexture"] = info(t, Some("strength"));
            }
            if m.emissive != [0.0; 3] {
                v["emissiveFactor"] = json!(m.emissive);
            }
            if let Some(t) = &m.emissive_texture {
                v["emissiveTexture"] = info(t, None);
            }
            match m.alpha {
                AlphaMode::Opaque => {}
                AlphaMode::Mask(cutoff) => {
                    v["alphaMode"] = json!("MASK");
                    v["alphaCutoff"] = json!(cutoff);
                }
                AlphaMode::Blend => v["alphaMode"] = json!("BLEND"),
            }
            if m.double_sided {
                v["doubleSided"] = json!(true);
            }
            if m.unlit {
                v["extensions"] = json!({"KHR_materials_unlit": {}});
                unlit = true;
            }
            v
        })
        .collect();
    root.insert("materials".into(), json!(materials));
    if !textures.is_empty() {
        let textures: Vec<Value> = textures
            .iter()
            .map(|(i, s)| json!({"source": i, "sampler": s}))
            .collect();
        let samplers: Vec<Value> = samplers
            .iter()
            .map(|s| {
                let mut v = json!({"wrapS": s.wrap_s, "wrapT": s.wrap_t});
                if let Some(f) = s.mag_filter {
                    v["magFilter"] = json!(f);
                }
                if let Some(f) = s.min_filter {
                    v["minFilter"] = json!(f);
                }
                v
            })
            .collect();
        root.insert("textures".into(), json!(textures));
        root.insert("samplers".into(), json!(samplers));
    }
    if !images.is_empty() {
        root.insert("images".into(), json!(images));
    }
    if unlit {
        root.insert("extensionsUsed".into(), json!(["KHR_materials_unlit"]));
    }
}

/// JOINTS_n (u16) and WEIGHTS_n (f32), as many sets of 4 as the part's largest row needs.
/// When a row's rounding would fail the validator's sum check, the heaviest weight absorbs it.
/// glTF has no way to say "no influence": unskinned vertices get weight 1 on joint 0 (a root)
/// and are returned, to be listed in the primitive's `extras.rigml_unskinned`.
fn skin_attributes(
    out: &mut Out,
    skin: &Skin,
    vertices: std::ops::Range<usize>,
    attributes: &mut Map<String, Value>,
) -> Vec<usize> {
    let widest = vertices.clone().map(|v| skin.influences(v).len()).max().unwrap_or(0);
    let sets = widest.div_ceil(4).max(1);
    let n = vertices.len();
    let mut joints = vec![vec![0u16; 4 * n]; sets];
    let mut weights = vec![vec![0f32; 4 * n]; sets];
    let mut unskinned = Vec::new();
    for (i, v) in vertices.enumerate() {
        let row = skin.influences(v);
        if row.is_empty() {
            weights[0][4 * i] = 1.0;
            unskinned.push(i);
        }
        // The validator sums in f32, slot by slot, and allows 2e-7 per weight; keep the
        // weights exact unless the row misses half of that.
        let f32_sum = row.iter().fold(0f32, |s, x| s + x.weight);
        let off = (f32_sum - 1.0).abs() > 1e-7 * row.len() as f32;
        let rest: f64 = row.iter().skip(1).map(|x| f64::from(x.weight)).sum();
        for (k, inf) in row.iter().enumerate() {
            let w = if k == 0 && off { (1.0 - rest) as f32 } else { inf.weight };
            joints[k / 4][4 * i + k % 4] = inf.joint as u16;
            weights[k / 4][4 * i + k % 4] = w;
        }
    }
    for s in 0..sets {
        let bytes: Vec<u8> = joints[s].iter().flat_map(|j| j.to_le_bytes()).collect();
        let a = out.accessor(&bytes, Some(ARRAY_BUFFER), meta(U16, n, "VEC4"));
        attributes.insert(format!("JOINTS_{s}"), json!(a));
        let a = out.floats(&weights[s], "VEC4", 4, Some(ARRAY_BUFFER), false);
        attributes.insert(format!("WEIGHTS_{s}"), json!(a));
    }
    unskinned
}

/// How far [`to_glb`] and [`write_gltf`] shift a clip's keys: glTF key times cannot be
/// negative (validator ACCESSOR_ANIMATION_INPUT_NEGATIVE), so a clip whose earliest key is
/// before 0 (an FBX take starting at frame -1) is written with every key moved later by the
/// returned amount, in seconds, so that it starts at 0. `None` when the clip starts at 0 or
/// later (written as it is). Callers use it to tell the user that the times moved.
pub fn clip_start_shift(clip: &Clip) -> Option<f32> {
    let first = clip
        .channels
        .iter()
        .filter_map(|c| c.times.first().copied())
        .fold(f32::INFINITY, f32::min);
    (first < 0.0).then_some(-first)
}

/// One animation per clip that has channels (glTF requires at least one), one sampler per
/// channel; key times shifted by [`clip_start_shift`].
fn animations(out: &mut Out, character: &Character, lift: Option<f32>) -> Vec<Value> {
    let mut list = Vec::new();
    for clip in &character.clips {
        let (mut samplers, mut channels) = (Vec::new(), Vec::new());
        let shift = clip_start_shift(clip);
        for c in clip.channels.iter().filter(|c| !c.times.is_empty()) {
            let input = match shift {
                // t - first is never negative in float arithmetic, and keeps the keys' order.
                Some(s) => out.times(&c.times.iter().map(|t| t + s).collect::<Vec<_>>()),
                None => out.times(&c.times),
            };
            // A root's translation and scale are written under the lifted common scale.
            let under = lift
                .filter(|_| character.skeleton.parents.get(c.joint) == Some(&None))
                .unwrap_or(1.0);
            let output = match &c.values {
                ChannelValues::Translation(v) | ChannelValues::Scale(v) => {
                    let data: Vec<f32> = v.iter().flat_map(|x| (*x / under).to_array()).collect();
                    out.floats(&data, "VEC3", 3, None, false)
                }
                ChannelValues::Rotation(v) => {
                    let data: Vec<f32> = v.iter().flat_map(|x| x.to_array()).collect();
                    out.floats(&data, "VEC4", 4, None, false)
                }
            };
            let interpolation = match c.interpolation {
                Interpolation::Step => "STEP",
                Interpolation::Linear => "LINEAR",
                Interpolation::CubicSpline => "CUBICSPLINE",
            };
            samplers.push(json!({"input": input, "output": output, "interpolation": interpolation}));
            channels.push(json!({"sampler": samplers.len() - 1, "target": {"node": c.joint, "path": c.values.path()}}));
        }
        if !channels.is_empty() {
            list.push(json!({"name": clip.name, "samplers": samplers, "channels": channels}));
        }
    }
    list
}

/// Escape a file name for use as a URI reference.
fn percent_encode(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
