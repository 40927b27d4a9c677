//! glTF 2.0 reader and writer (`.gltf` with external or `data:` buffers, `.glb`, `.vrm`).
//!
//! **Reading** (METRICS.md §1): the character is every node of the scene that has both a mesh
//! and a skin, in depth-first order, one [`rigml_core::MeshPart`] per primitive, vertices in
//! accessor order. Nodes with a mesh but no skin under a joint (weapons, hats, horns) are the
//! character's attachments, each following its nearest joint ancestor; unskinned meshes under
//! no joint are left out, with a warning. Materials, textures and images go with the mesh
//! (`material.rs`). The skeleton is the union of those nodes' skins' joints plus any node
//! between two joints; non-joint ancestors of a root joint are baked into its rest transform so that joint world
//! matrices equal the glTF global transforms, and skins bound in different spaces are brought
//! into one (see `skeleton.rs`). A file with no skinned mesh gives its unskinned meshes (node
//! transforms applied) and the joints of all its skins. Accessors are read with rigml's own
//! bounds checks: malformed input gives an [`IoError`] naming the JSON path, never a panic.
//!
//! **Writing**: one mesh with one primitive per part (vertex order round-trips), a node per
//! joint, one skin, a mesh and node per attachment under its joint, and one sampler per clip
//! channel; output passes the Khronos validator. A scale every root shares (a 100x armature
//! baked into the roots on reading) is written on a node above them, as the source had it, so
//! that Blender sizes the bones as in the source.
//! Three things glTF cannot say travel in primitive `extras`, read back by rigml: `rigml_part`
//! (the part's name), `rigml_unskinned` (vertices without influences, which are written
//! with weight 1 on joint 0 because glTF requires weights summing to 1) and
//! `rigml_loose_vertices` (a part without triangles, written as POINTS). Clips without
//! channels are not written (glTF requires at least one channel); a clip whose keys start
//! before 0 is written shifted to start at 0 ([`clip_start_shift`]). A character with nothing
//! in it gets a scene without `nodes` (an empty array is invalid).
//!
//! **Repaired or left out, each with a warning in [`ReadOutcome::warnings`]** (the file
//! still loads):
//! - NaN skin weights (Quaternius Bee, Wasp, Crab) are refused by [`read`]; with
//!   [`ReadOptions::repair`] those vertices become unskinned.
//! - POINTS, LINES, LINE_LOOP and LINE_STRIP primitives are left out, one warning each
//!   (except rigml's own `rigml_loose_vertices`).
//! - A primitive of a skinned node without JOINTS_0/WEIGHTS_0: the skin is ignored for it,
//!   its vertices carry no weight.
//! - Two skins binding a shared joint in different spaces: the first skin's binding is kept
//!   and the later skin's vertices are re-bound to it (`skeleton.rs`).
//! - An animation with no channel on a joint (only other nodes, morph weights or
//!   `KHR_animation_pointer`) is left out; in a kept clip, a channel moving a node that is not
//!   a joint is dropped.
//! - Material factors outside 0..=1 are clamped into it, a negative `alphaCutoff` becomes 0;
//!   textures rigml cannot carry (a second UV set, an image it cannot load) are left out;
//!   `KHR_texture_transform` offsets, rotations and scales are not kept (one warning).
//! - Required extensions rigml does not implement are named (what they carry is dropped).
//! - Unskinned meshes under no joint, when the file has a skinned mesh.
//!
//! **Refused** ([`IoError`], naming the JSON path): glTF 1.0 and an `asset.minVersion` past
//! 2.0; Draco and meshopt compression; malformed JSON, references to items that do not exist,
//! accessors that do not fit their buffers, indices past the vertices, integers that are
//! fractions or out of range (an integer written `1.0` is read as 1); node cycles and shared
//! children; singular or sheared joint transforms; NaN weights without repair.

mod accessor;
mod animation;
mod container;
mod hierarchy;
mod json;
mod material;
mod mesh;
mod skeleton;
#[cfg(test)]
mod tests;
mod value;
mod write;

pub use write::{clip_start_shift, to_glb, write_gltf};

use crate::error::read_file;
use crate::IoError;
use accessor::Doc;
use hierarchy::Hierarchy;
use json::{fail, unsupported, Fail};
use mesh::{MeshBuild, Placement, SkinUse};
use rigml_core::{Attachment, Character, Skeleton};
use std::path::Path;

/// Extensions that change how geometry is stored; rigml cannot decode them.
const UNDECODABLE: &[&str] = &["KHR_draco_mesh_compression", "EXT_meshopt_compression"];

/// Extensions rigml reads in full: a file may require them. (`KHR_texture_transform` is read
/// but its transforms are not kept; `material.rs` warns when a texture carries one.)
const IMPLEMENTED: &[&str] = &["KHR_materials_unlit", "KHR_mesh_quantization"];

/// How to treat repairable problems in the source.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// Make vertices whose weights are NaN unskinned (with a warning) instead of refusing the
    /// file. Off by default: bad data is reported, not silently changed.
    pub repair: bool,
}

/// A character and the warnings about what was repaired while reading it.
#[derive(Debug, Clone)]
pub struct ReadOutcome {
    pub character: Character,
    /// One line per repair or per thing left out (a point or line primitive, an animation
    /// that drives no joint, a channel animating a node that is not a joint, a texture
    /// transform…), each starting with the JSON path it concerns (never the file's path).
    pub warnings: Vec<String>,
}

/// Read a `.gltf`, `.glb` or `.vrm` file (strict: NaN weights are an error).
pub fn read(path: &Path) -> Result<Character, IoError> {
    read_with(path, ReadOptions::default()).map(|o| o.character)
}

/// Read a file with options; the outcome lists any repairs.
pub fn read_with(path: &Path, options: ReadOptions) -> Result<ReadOutcome, IoError> {
    let bytes = read_file(path)?;
    from_bytes_with(&bytes, path, options)
}

/// Read GLB or glTF JSON bytes; external buffer URIs are resolved beside `path`, which also
/// names the file in errors. Never panics, whatever the bytes.
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Character, IoError> {
    from_bytes_with(bytes, path, ReadOptions::default()).map(|o| o.character)
}

/// [`from_bytes`] with options.
pub fn from_bytes_with(bytes: &[u8], path: &Path, options: ReadOptions) -> Result<ReadOutcome, IoError> {
    let outcome = parse(bytes, path, options).map_err(|f| {
        if f.unsupported {
            IoError::unsupported(path, &f.message)
        } else {
            IoError::parse(path, f.message)
        }
    })?;
    outcome.character.validate().map_err(|e| IoError::invalid(path, e))?;
    Ok(outcome)
}

fn parse(bytes: &[u8], path: &Path, options: ReadOptions) -> Result<ReadOutcome, Fail> {
    let container = container::split(bytes)?;
    let value = value::parse(container.json).map_err(|e| fail(format!("JSON: {e}")))?;
    let root = json::object(&value, "(root)")?;
    let mut warnings = check_asset(root)?;
    let base_dir = path.parent().unwrap_or(Path::new("."));
    let doc = Doc::new(root, container.bin, base_dir, bytes.len())?;
    let tree = Hierarchy::read(&doc)?;

    let skinned: Vec<usize> = tree
        .order
        .iter()
        .copied()
        .filter(|&n| tree.nodes[n].mesh.is_some() && tree.nodes[n].skin.is_some())
        .collect();
    let mut skins: Vec<usize> = if skinned.is_empty() {
        (0..doc.skins.len()).collect()
    } else {
        skinned.iter().filter_map(|&n| tree.nodes[n].skin).collect()
    };
    skins.sort_unstable();
    skins.dedup();
    for &n in &skinned {
        if let Some(s) = tree.nodes[n].skin.filter(|&s| s >= doc.skins.len()) {
            return Err(fail(format!("nodes[{n}].skin: skin {s} does not exist")));
        }
    }
    let mut built = skeleton::build(&doc, &tree, &skins)?;
    warnings.append(&mut built.warnings);

    let mut meshes = MeshBuild::new(
        (!skinned.is_empty()).then_some(built.skeleton.joint_count()),
        options.repair,
    )?;
    if skinned.is_empty() {
        // No skinned mesh: the unskinned meshes are the character, placed by their nodes.
        for &n in tree.order.iter().filter(|&&n| tree.nodes[n].mesh.is_some()) {
            let global = tree.global[n];
            let place = Placement {
                name: tree.nodes[n].name.clone().unwrap_or_default(),
                transform: (global != glam::Mat4::IDENTITY).then_some(global),
                skin: None,
            };
            add_node_mesh(&mut meshes, &doc, &tree, n, &place)?;
        }
    } else {
        for &n in &skinned {
            let Some((skin, map)) = tree.nodes[n].skin.and_then(|s| Some((s, built.skins.get(&s)?))) else {
                continue;
            };
            let place = Placement {
                name: tree.nodes[n].name.clone().unwrap_or_default(),
                transform: map.to_bind,
                skin: Some(SkinUse {
                    node: n,
                    skin,
                    joints: &map.joints,
                    per_joint: map.per_joint.as_deref(),
                }),
            };
            add_node_mesh(&mut meshes, &doc, &tree, n, &place)?;
        }
    }
    let (mut mesh, skin, mesh_warnings) = meshes.finish();
    warnings.extend(mesh_warnings);
    let attachments = if skinned.is_empty() {
        Vec::new()
    } else {
        read_attachments(&doc, &tree, &built.joint_of_node, options.repair, &mut warnings)?
    };
    let looks = material::read(&doc)?;
    warnings.extend(looks.warnings);
    mesh.materials = looks.materials;
    mesh.images = looks.images;
    let (clips, clip_warnings) = animation::read_clips(&doc, &tree, &built.joint_of_node, &built.baked)?;
    warnings.extend(clip_warnings);
    let skeleton: Skeleton = built.skeleton;
    // A mesh used by several nodes gives the same warning once per node: say it once.
    let mut seen = std::collections::HashSet::new();
    warnings.retain(|w| seen.insert(w.clone()));
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(ReadOutcome {
        character: Character {
            name,
            mesh,
            skeleton,
            skin,
            clips,
            attachments,
        },
        warnings,
    })
}

/// Unskinned meshes under a joint (props, hats, horns): each follows its nearest joint
/// ancestor, through the node transforms in between. Unskinned meshes under no joint are not
/// part of the character (a warning says so).
fn read_attachments(
    doc: &Doc,
    tree: &Hierarchy,
    joint_of_node: &std::collections::HashMap<usize, usize>,
    repair: bool,
    warnings: &mut Vec<String>,
) -> Result<Vec<Attachment>, Fail> {
    let mut attachments = Vec::new();
    for &n in tree
        .order
        .iter()
        .filter(|&&n| tree.nodes[n].mesh.is_some() && tree.nodes[n].skin.is_none())
    {
        let mut local = tree.nodes[n].local;
        let mut up = tree.parent[n];
        while let Some(p) = up.filter(|p| !joint_of_node.contains_key(p)) {
            local = tree.nodes[p].local * local;
            up = tree.parent[p];
        }
        let name = tree.nodes[n].name.clone().unwrap_or_else(|| format!("node{n}"));
        let Some(joint) = up.and_then(|p| joint_of_node.get(&p).copied()) else {
            warnings.push(format!(
                "nodes[{n}] ({name}): an unskinned mesh under no joint, not part of the character"
            ));
            continue;
        };
        let mut build = MeshBuild::new(None, repair)?;
        let place = Placement {
            name: name.clone(),
            transform: None,
            skin: None,
        };
        add_node_mesh(&mut build, doc, tree, n, &place)?;
        let (mesh, _, more) = build.finish();
        warnings.extend(more);
        attachments.push(Attachment {
            name,
            joint,
            local,
            mesh,
        });
    }
    Ok(attachments)
}

fn add_node_mesh(meshes: &mut MeshBuild, doc: &Doc, tree: &Hierarchy, n: usize, place: &Placement) -> Result<(), Fail> {
    let Some(m) = tree.nodes[n].mesh else {
        return Ok(());
    };
    meshes.add_mesh(doc, m, &format!("nodes[{n}].mesh"), place)
}

/// Refuse glTF 1.0, files whose `asset.minVersion` is past 2.0 and required extensions that
/// change how geometry is stored; return a warning naming the other required extensions rigml
/// does not implement (what they carry is dropped).
fn check_asset(root: &json::Obj<'_>) -> Result<Vec<String>, Fail> {
    let asset = root
        .get("asset")
        .ok_or_else(|| fail("asset: missing (not a glTF 2.0 file?)"))?;
    let asset = json::object(asset, "asset")?;
    let version = json::opt_str(asset, "version", "asset")?.unwrap_or("");
    if !version.starts_with("2.") {
        return Err(unsupported(format!(
            "asset.version: {version:?} (only glTF 2.0 is read)"
        )));
    }
    if let Some(min) = json::opt_str(asset, "minVersion", "asset")? {
        // glTF 2.0 §3.2: a reader must refuse a file whose minVersion it does not support.
        let parsed = min
            .split_once('.')
            .and_then(|(major, minor)| Some((major.parse::<u32>().ok()?, minor.parse::<u32>().ok()?)));
        match parsed {
            Some((2, 0)) => {}
            Some(_) => {
                return Err(unsupported(format!(
                    "asset.minVersion: {min:?} (only glTF 2.0 is read)"
                )))
            }
            None => return Err(fail(format!("asset.minVersion: {min:?} is not MAJOR.MINOR"))),
        }
    }
    let mut dropped = Vec::new();
    for (k, ext) in json::array(root, "extensionsRequired", "")?.iter().enumerate() {
        let Some(name) = ext.as_str() else {
            continue;
        };
        if UNDECODABLE.contains(&name) {
            return Err(unsupported(format!("extensionsRequired[{k}]: {name} is not supported")));
        }
        if !IMPLEMENTED.contains(&name) && name != material::TEXTURE_TRANSFORM && !dropped.contains(&name) {
            dropped.push(name);
        }
    }
    Ok(match dropped.as_slice() {
        [] => Vec::new(),
        [one] => vec![format!(
            "extensionsRequired: {one} is not supported; what it carries is dropped"
        )],
        many => vec![format!(
            "extensionsRequired: {} are not supported; what they carry is dropped",
            many.join(", ")
        )],
    })
}
