//! FBX reader (binary and ASCII FBX, through the `ufbx` crate) and writer (binary FBX 7.4, see
//! [`write`]).
//!
//! What a [`Character`] gets from an FBX file:
//! - **mesh**: every mesh node that has a skin deformer, in scene node order, one
//!   [`MeshPart`](rigml_core::MeshPart) per node. Vertices are the FBX *control points* (ufbx
//!   `mesh.vertices`), so skin weights are per control point exactly as in the file; polygons are
//!   triangulated with ufbx's triangulator. Positions are in the model space of the skeleton's
//!   bind pose (see the `mesh` module). Normals and UVs are per face corner in FBX; they are kept
//!   only when every control point of every part has a single value (otherwise the attribute is
//!   left empty). Mesh nodes without a skin deformer in a file that has skinned ones (props
//!   parented to bones) become attachments of their nearest joint ancestor (meshes under no
//!   joint are scenery and are not read). A file without any skin deformer gives all its mesh nodes,
//!   unskinned. Each part gets its node's first material (name, base colour, metalness,
//!   roughness; textures are not read).
//! - **skeleton**: the bone nodes of the skin clusters plus the nodes that connect them up to
//!   their common ancestor (see the `skeleton` module); without clusters, the nodes with a bone
//!   attribute.
//! - **skin**: the deformers' weights, capped at
//!   [`DEFAULT_MAX_INFLUENCES`](rigml_core::DEFAULT_MAX_INFLUENCES). Control points that
//!   rigml's writer listed in a skin deformer's [`UNSKINNED_PROP`] (vertices without influence,
//!   written with weight 1 on a root so that other importers move them) read back unskinned.
//! - **clips**: one per animation stack, sampled at the scene frame rate into linear TRS
//!   channels for every joint (see the `anim` module).
//!
//! Space: ufbx converts the scene to glTF conventions on load — right-handed, Y up, +Z front,
//! metres — with `SpaceConversion::ModifyGeometry`: the unit scale is applied to vertex data and
//! translations instead of being left as a scale on the root, so joints keep unit scale and
//! every matrix we read (node, cluster and bind-pose matrices) is already in metres, Y up.
//!
//! No input panics: ufbx errors become [`IoError::Parse`] with ufbx's own message, every index
//! read from the file is checked, and the result is validated before it is returned.
//!
//! Repairs (each one a warning from [`read_with_warnings`], never a silent change): indices
//! ufbx had to clamp and arrays shorter than declared (normals, UVs, creases of hand-edited or
//! damaged files), names that were not valid UTF-8, polygons with fewer than 3 corners (points
//! and lines) and meshes made only of edges (left out), animation stacks that drive no joint or
//! whose time range cannot be sampled (left out). An empty take (no animated property at all,
//! as most exporters write by default) is not a clip and is skipped without a warning.

mod anim;
mod binary;
mod mesh;
mod skeleton;
pub mod unconnected;
pub mod write;

pub use write::to_fbx;

/// User property of a skin deformer in which rigml's writer lists (comma-separated control
/// point indices) the vertices that have no influence: FBX has no way to say so for a vertex
/// of a skinned mesh that must still follow the character (see [`write`]).
pub const UNSKINNED_PROP: &str = "rigml_unskinned";

use crate::error::read_file;
use crate::IoError;
use rigml_core::glam::DMat4;
use rigml_core::Character;
use std::cell::RefCell;
use std::path::Path;

/// Read an FBX file into a validated character (what was repaired is dropped: see
/// [`read_with_warnings`]).
pub fn read(path: &Path) -> Result<Character, IoError> {
    read_with_warnings(path).map(|(character, _)| character)
}

/// Read an FBX file into a validated character, with one line per repair (the place in the file
/// and what was done; the path is not repeated).
pub fn read_with_warnings(path: &Path) -> Result<(Character, Vec<String>), IoError> {
    let bytes = read_file(path)?;
    from_bytes_with_warnings(&bytes, path)
}

/// Parse FBX bytes; `path` names the source in errors and gives the character its name.
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Character, IoError> {
    from_bytes_with_warnings(bytes, path).map(|(character, _)| character)
}

/// [`from_bytes`], also returning the repairs.
pub fn from_bytes_with_warnings(bytes: &[u8], path: &Path) -> Result<(Character, Vec<String>), IoError> {
    let scene = ufbx::load_memory(bytes, load_options()).map_err(|e| IoError::parse(path, ufbx_message(&e)))?;
    let ctx = Ctx {
        path,
        warnings: RefCell::new(Vec::new()),
    };
    report_ufbx_repairs(&ctx, &scene);

    let skinned = mesh::skinned_mesh_nodes(&scene);
    let any_skin = !skinned.is_empty();
    let (mesh_nodes, bone_nodes, binds) = if skinned.is_empty() {
        // No skin at all: keep the geometry and the bone hierarchy as they are.
        let meshes = scene
            .nodes
            .iter()
            .filter(|n| n.mesh.is_some())
            .map(|n| n.element.typed_id);
        let bones = scene
            .nodes
            .iter()
            .filter(|n| n.bone.is_some())
            .map(|n| n.element.typed_id);
        (meshes.collect(), bones.collect(), skeleton::ClusterBinds::new())
    } else {
        let (bones, binds) = mesh::cluster_bone_nodes(&ctx, &scene, &skinned)?;
        (skinned, bones, binds)
    };

    let joints = skeleton::build(&ctx, &scene, &bone_nodes, &binds)?;
    let (mesh, skin) = mesh::build(&ctx, &scene, &mesh_nodes, &joints, &binds)?;
    let clips = anim::clips(&ctx, &scene, &joints)?;
    let attachments = if any_skin {
        attachments(&ctx, &scene, &joints, &binds)?
    } else {
        Vec::new()
    };

    let character = Character {
        name: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        mesh,
        skeleton: joints.skeleton,
        skin,
        clips,
        attachments,
    };
    character.validate().map_err(|e| IoError::invalid(path, e))?;
    if character.mesh.vertex_count() == 0 && character.skeleton.joint_count() == 0 {
        left_out_content(&ctx, &scene);
    }
    Ok((character, ctx.warnings.into_inner()))
}

/// Unskinned mesh nodes under a joint in a skinned file (a sword in a hand, a hat): each rides
/// its nearest joint ancestor, as the glTF reader's attachments do. Their vertices are read in
/// model space at rest and hung from the joint by the inverse of its rest transform.
fn attachments(
    ctx: &Ctx,
    scene: &ufbx::Scene,
    joints: &skeleton::Joints,
    binds: &skeleton::ClusterBinds,
) -> Result<Vec<rigml_core::Attachment>, IoError> {
    let rest_world = joints.skeleton.rest_world();
    let mut out = Vec::new();
    for node in scene.nodes.iter() {
        let has_skin = node.mesh.as_ref().is_some_and(|m| !m.skin_deformers.is_empty());
        if node.mesh.is_none() || has_skin {
            continue;
        }
        let mut up = node.parent.as_ref();
        let mut joint = None;
        // The depth bound keeps a malformed parent loop finite.
        for _ in 0..scene.nodes.len() {
            let Some(p) = up else { break };
            if let Some(&j) = joints.joint_of_node.get(&p.element.typed_id) {
                joint = Some(j);
                break;
            }
            up = p.parent.as_ref();
        }
        // Props under no joint are the scene, not the character (Blender's barbarian stands
        // among trees): not read, as the peers' corpus expects of such files.
        let Some(joint) = joint else { continue };
        let (mesh, _) = mesh::build(ctx, scene, &[node.element.typed_id], joints, binds)?;
        out.push(rigml_core::Attachment {
            name: node_name(node),
            joint,
            local: rest_world[joint].as_dmat4().inverse().as_mat4(),
            mesh,
        });
    }
    Ok(out)
}

/// With neither mesh nor skeleton, say what the scene held instead (lights, cameras, NURBS, ...), so "nothing to
/// rig" is explained.
fn left_out_content(ctx: &Ctx, scene: &ufbx::Scene) {
    let kinds = [
        (scene.lights.len(), "light(s)"),
        (scene.cameras.len(), "camera(s)"),
        (scene.nurbs_curves.len(), "NURBS curve(s)"),
        (scene.nurbs_surfaces.len(), "NURBS surface(s)"),
        (scene.line_curves.len(), "line curve(s)"),
        (scene.characters.len(), "MotionBuilder character(s)"),
    ];
    let held: Vec<String> = kinds
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    if !held.is_empty() {
        ctx.warn(format!(
            "scene: {} left out (rigml reads polygon meshes and skeletons)",
            held.join(", ")
        ));
    }
}

/// The load options: glTF axes and units, conversion baked into geometry and transforms.
fn load_options() -> ufbx::LoadOpts<'static> {
    ufbx::LoadOpts {
        target_axes: ufbx::CoordinateAxes {
            right: ufbx::CoordinateAxis::PositiveX,
            up: ufbx::CoordinateAxis::PositiveY,
            front: ufbx::CoordinateAxis::PositiveZ,
        },
        target_unit_meters: 1.0,
        space_conversion: ufbx::SpaceConversion::ModifyGeometry,
        // ufbx clamps bad indices and records a warning, which `report_ufbx_repairs` passes on
        // naming the element (ufbx's own abort would only say "Failed to load").
        index_error_handling: ufbx::IndexErrorHandling::Clamp,
        ..Default::default()
    }
}

/// Report what ufbx changed to load the file: clamped indices (an out-of-range normal or UV
/// index now points at the last valid value), arrays shorter than declared (the missing tail is
/// left out) and invalid UTF-8 in names (replaced). These touch attributes and names, never the
/// face list's shape, so the file is loaded with a warning rather than refused.
fn report_ufbx_repairs(ctx: &Ctx, scene: &ufbx::Scene) {
    for warning in scene.metadata.warnings.iter() {
        let what = match warning.type_ {
            ufbx::WarningType::IndexClamped => "index out of range, clamped to the last valid one",
            ufbx::WarningType::TruncatedArray => "array shorter than declared, the missing part left out",
            ufbx::WarningType::BadUnicode => "name is not valid UTF-8, bad bytes replaced",
            _ => continue,
        };
        let element = scene
            .elements
            .get(warning.element_id as usize)
            .filter(|e| e.type_ == ufbx::ElementType::Unknown);
        if element.is_some() {
            // An element rigml does not read (MotionBuilder's device and take folders): nothing
            // it loads was changed.
            continue;
        }
        let element = scene
            .elements
            .get(warning.element_id as usize)
            .map(|e| format!("{:?} '{}'", e.type_, e.name))
            .unwrap_or_else(|| "file".to_string());
        ctx.warn(format!(
            "{element}: {what} ({} time(s); ufbx: {})",
            warning.count, warning.description
        ));
    }
}

/// ufbx's description of a load error (message, details and error kind on one line), read
/// without trusting it to be valid UTF-8.
fn ufbx_message(error: &ufbx::Error) -> String {
    let mut buf = [0u8; 1024];
    let n = ufbx::format_error(&mut buf, error).min(buf.len());
    let text = String::from_utf8_lossy(&buf[..n]);
    // The first line is `ufbx vX.Y.Z error: <description> (<details>)`; later lines, when ufbx
    // was built with them, are its internal call stack.
    let first = text.lines().next().unwrap_or("").trim_matches(char::from(0)).trim();
    let message = first.split_once("error: ").map_or(first, |(_, m)| m).trim();
    let kind = format!("{:?}", error.type_);
    if message.is_empty() {
        format!("not a readable FBX file ({kind})")
    } else {
        format!("{message} [ufbx: {kind}]")
    }
}

/// What every part of the reader needs to report errors and repairs.
pub(crate) struct Ctx<'a> {
    pub path: &'a Path,
    /// Repairs so far, one line each (see [`read_with_warnings`]).
    pub warnings: RefCell<Vec<String>>,
}

impl Ctx<'_> {
    pub fn err(&self, message: impl Into<String>) -> IoError {
        IoError::parse(self.path, message)
    }

    /// Record a repair.
    pub fn warn(&self, message: impl Into<String>) {
        self.warnings.borrow_mut().push(message.into());
    }
}

/// A ufbx matrix (column-major 3×4 affine, f64) as a glam 4×4.
pub(crate) fn dmat(m: &ufbx::Matrix) -> DMat4 {
    DMat4::from_cols_array(&[
        m.m00, m.m10, m.m20, 0.0, m.m01, m.m11, m.m21, 0.0, m.m02, m.m12, m.m22, 0.0, m.m03, m.m13, m.m23, 1.0,
    ])
}

/// Name of a node for messages and joint names.
pub(crate) fn node_name(node: &ufbx::Node) -> String {
    node.element.name.to_string()
}

#[cfg(test)]
mod ascii_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_an_error_naming_the_file() {
        let path = Path::new("garbage.fbx");
        let err = from_bytes(b"this is not an fbx file at all", path).unwrap_err();
        let text = err.to_string();
        eprintln!("{text}");
        assert!(text.starts_with("garbage.fbx: "), "{text}");
        assert!(matches!(err, IoError::Parse { .. }), "{text}");
    }

    #[test]
    fn empty_input_is_an_error() {
        let err = from_bytes(&[], Path::new("empty.fbx")).unwrap_err();
        eprintln!("{err}");
        assert!(err.to_string().starts_with("empty.fbx: "), "{err}");
    }

    #[test]
    fn truncated_binary_header_is_an_error() {
        let mut bytes = b"Kaydara FBX Binary  \0\x1a\0".to_vec();
        bytes.extend_from_slice(&7400u32.to_le_bytes());
        bytes.extend_from_slice(&[0xff; 10]);
        let err = from_bytes(&bytes, Path::new("cut.fbx")).unwrap_err();
        eprintln!("{err}");
        assert!(err.to_string().starts_with("cut.fbx: "), "{err}");
    }

    #[test]
    fn missing_file_is_a_read_error() {
        let err = read(Path::new("/nonexistent/dir/none.fbx")).unwrap_err();
        assert!(matches!(err, IoError::Read { .. }), "{err}");
    }

    #[test]
    fn matrix_conversion_keeps_translation_in_the_last_column() {
        let m = ufbx::Matrix {
            m00: 1.0,
            m11: 1.0,
            m22: 1.0,
            m03: 1.0,
            m13: 2.0,
            m23: 3.0,
            ..Default::default()
        };
        let d = dmat(&m);
        assert_eq!(d.w_axis.truncate(), rigml_core::glam::DVec3::new(1.0, 2.0, 3.0));
        assert_eq!(d.determinant(), 1.0);
    }
}
