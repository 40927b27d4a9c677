//! FBX meshes and skin deformers → one merged [`Mesh`] and its [`Skin`].
//!
//! Model space. ufbx skins a control point `p` of a mesh with cluster `c` on bone `b` as
//! `node_to_world(b) · geometry_to_bone(c) · p`. Our joints skin model-space positions `x` as
//! `world(b) · inverse_bind(b) · x` with `inverse_bind(b) = bind_to_world(b)⁻¹`, so the bind
//! position is `x = bind_to_world(b) · geometry_to_bone(c) · p` — the FBX mesh bind matrix
//! (`Transform`, including any geometric transform). All clusters of a mesh normally agree on it;
//! when they do not, each control point uses the matrix of its heaviest cluster, so it is exact at
//! rest for the bone that moves it most. Control points without weights, and meshes without
//! clusters, use the mesh bind matrix of the first cluster or else the node's
//! `geometry_to_world`. A mirroring matrix (negative determinant) flips the triangle winding so
//! front faces stay counter-clockwise.

use super::skeleton::{node_at, ClusterBinds, Joints};
use super::{dmat, node_name, Ctx};
use crate::IoError;
use rigml_core::glam::{DMat3, DMat4, DVec3, Vec2, Vec3};
use rigml_core::skin::SkinBuilder;
use rigml_core::{Material, Mesh, MeshPart, Skin, DEFAULT_MAX_INFLUENCES};

/// Negative skin weights down to this are float noise and read as no influence (with a
/// warning); below it a weight is an error.
pub const NEGATIVE_NOISE: f64 = 0.01;

/// Mesh nodes (ufbx node indices) whose mesh has a skin deformer, in scene node order.
pub fn skinned_mesh_nodes(scene: &ufbx::Scene) -> Vec<u32> {
    scene
        .nodes
        .iter()
        .filter(|n| n.mesh.as_ref().is_some_and(|m| !m.skin_deformers.is_empty()))
        .map(|n| n.element.typed_id)
        .collect()
}

/// The bone nodes of every cluster of these meshes (first seen first) and their bind matrices
/// (the first cluster's, when several meshes bind the same bone).
pub fn cluster_bone_nodes(
    ctx: &Ctx,
    scene: &ufbx::Scene,
    mesh_nodes: &[u32],
) -> Result<(Vec<u32>, ClusterBinds), IoError> {
    let mut bones = Vec::new();
    let mut binds = ClusterBinds::new();
    for &n in mesh_nodes {
        let node = node_at(ctx, scene, n)?;
        let Some(deformer) = skin_deformer(ctx, node)? else {
            continue;
        };
        for cluster in &deformer.clusters {
            let bone = cluster_bone(ctx, node, cluster)?;
            if let std::collections::hash_map::Entry::Vacant(slot) = binds.entry(bone) {
                slot.insert(dmat(&cluster.bind_to_world));
                bones.push(bone);
            }
        }
    }
    Ok((bones, binds))
}

/// Build the merged mesh (one part per mesh node) and, when any node has a skin deformer, the skin.
pub fn build(
    ctx: &Ctx,
    scene: &ufbx::Scene,
    mesh_nodes: &[u32],
    joints: &Joints,
    binds: &ClusterBinds,
) -> Result<(Mesh, Option<Skin>), IoError> {
    let joint_count = joints.skeleton.joint_count();
    let mut skin = SkinBuilder::new(joint_count, DEFAULT_MAX_INFLUENCES).map_err(|e| IoError::invalid(ctx.path, e))?;
    let mut any_skin = false;
    let mut mesh = Mesh::default();
    let mut normals: Option<Vec<Vec3>> = Some(Vec::new());
    let mut uvs: Option<Vec<Vec2>> = Some(Vec::new());
    let mut material_index: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();

    for &n in mesh_nodes {
        let node = node_at(ctx, scene, n)?;
        let name = node_name(node);
        let Some(fbx_mesh) = node.mesh.as_ref() else {
            return Err(ctx.err(format!("node '{name}' has no mesh")));
        };
        let deformer = skin_deformer(ctx, node)?;
        any_skin |= deformer.is_some();

        // Per cluster: its joint and its mesh-to-model bind matrix.
        let mut clusters: Vec<(u32, DMat4)> = Vec::new();
        for cluster in deformer.iter().flat_map(|d| d.clusters.iter()) {
            let bone = cluster_bone(ctx, node, cluster)?;
            let joint = joints
                .joint_of_node
                .get(&bone)
                .copied()
                .ok_or_else(|| ctx.err(format!("mesh node '{name}': skin cluster bone is not a joint")))?;
            let bind = binds
                .get(&bone)
                .copied()
                .unwrap_or_else(|| dmat(&cluster.bind_to_world));
            clusters.push((joint as u32, bind * dmat(&cluster.geometry_to_bone)));
        }
        let fallback = clusters.first().map_or_else(|| dmat(&node.geometry_to_world), |c| c.1);

        let v0 = mesh.positions.len();
        let vertex_count = fbx_mesh.vertices.len();
        if v0 + vertex_count > u32::MAX as usize {
            return Err(ctx.err(format!("mesh node '{name}': too many vertices")));
        }
        if let Some(d) = deformer {
            check_cluster_indices(ctx, &name, d, vertex_count)?;
            if d.vertices.len() != vertex_count {
                return Err(ctx.err(format!(
                    "mesh node '{name}': skin deformer has {} vertices, mesh has {vertex_count}",
                    d.vertices.len()
                )));
            }
        }
        let unskinned = match deformer {
            Some(d) => unskinned_list(ctx, &name, d, vertex_count),
            None => Vec::new(),
        };
        let mut row: Vec<(u32, f32)> = Vec::new();
        let mut noise = 0usize;
        for (v, p) in fbx_mesh.vertices.iter().enumerate() {
            row.clear();
            let mut model = fallback;
            if let Some(d) = deformer {
                let mut heaviest = f64::NEG_INFINITY;
                for w in skin_weights(ctx, &name, d, v)? {
                    let c = w.cluster_index as usize;
                    let &(joint, m) = clusters.get(c).ok_or_else(|| {
                        ctx.err(format!(
                            "mesh node '{name}': control point {v} refers to skin cluster {c}, but there are {}",
                            clusters.len()
                        ))
                    })?;
                    if w.weight < 0.0 && w.weight >= -NEGATIVE_NOISE {
                        // Float noise from a DCC's normalisation (Blender writes -0.001): no
                        // influence, with a warning; larger negative weights stay an error.
                        noise += 1;
                        continue;
                    }
                    if w.weight > heaviest {
                        heaviest = w.weight;
                        model = m;
                    }
                    row.push((joint, w.weight as f32));
                }
            }
            // Listed as unskinned by rigml's writer: its one weight-1 influence is a stand-in.
            if unskinned.get(v).copied().unwrap_or(false) && row.len() == 1 && row[0].1 == 1.0 {
                row.clear();
            }
            skin.push_row(&row)
                .map_err(|e| ctx.err(format!("mesh node '{name}' control point {v}: {e}")))?;
            let x = model.transform_point3(DVec3::new(p.x, p.y, p.z));
            mesh.positions.push(x.as_vec3());
        }

        if noise > 0 {
            ctx.warn(format!(
                "mesh node '{name}': {noise} skin weight(s) slightly below 0 (down to -{NEGATIVE_NOISE}) read as no influence"
            ));
        }
        let flip = fallback.determinant() < 0.0;
        let t0 = mesh.triangles.len();
        triangulate(ctx, &name, fbx_mesh, v0 as u32, flip, &mut mesh.triangles)?;
        report_non_surface(ctx, &name, fbx_mesh);
        let material = node.materials.first().map(|m| {
            *material_index.entry(m.element.element_id).or_insert_with(|| {
                mesh.materials.push(material_of(m));
                mesh.materials.len() - 1
            })
        });
        mesh.parts.push(MeshPart {
            name,
            vertices: v0..mesh.positions.len(),
            triangles: t0..mesh.triangles.len(),
            material,
        });

        let normal_matrix = DMat3::from_mat4(fallback).inverse().transpose();
        let part_normals = per_control_point((&fbx_mesh.vertex_normal).into(), fbx_mesh, |n| {
            let v = normal_matrix * DVec3::new(n.x, n.y, n.z);
            v.normalize_or_zero().as_vec3()
        });
        extend_or_drop(&mut normals, part_normals);
        let part_uvs = per_control_point((&fbx_mesh.vertex_uv).into(), fbx_mesh, |uv| {
            Vec2::new(uv.x as f32, uv.y as f32)
        });
        extend_or_drop(&mut uvs, part_uvs);
    }

    mesh.normals = normals.unwrap_or_default();
    mesh.uvs = uvs.unwrap_or_default();
    Ok((mesh, any_skin.then(|| skin.finish())))
}

/// A node's material as rigml holds it: name and base colour (ufbx maps Phong, Lambert and
/// PBR materials to one PBR view), metalness and roughness where the file gives them. Textures
/// are not read from FBX. A mesh node with several materials gets its first.
fn material_of(m: &ufbx::Material) -> Material {
    let pbr = &m.pbr;
    let mut base = [1.0f32; 4];
    if pbr.base_color.has_value {
        let v = &pbr.base_color.value_vec4;
        base = [v.x as f32, v.y as f32, v.z as f32, 1.0];
    }
    if pbr.base_factor.has_value {
        let f = pbr.base_factor.value_vec4.x as f32;
        for c in &mut base[..3] {
            *c *= f;
        }
    }
    let unit = |x: f32| if x.is_finite() { x.clamp(0.0, 1.0) } else { 1.0 };
    Material {
        name: m.element.name.to_string(),
        base_color: base.map(unit),
        metallic: if pbr.metalness.has_value {
            unit(pbr.metalness.value_vec4.x as f32)
        } else {
            0.0
        },
        roughness: if pbr.roughness.has_value {
            unit(pbr.roughness.value_vec4.x as f32)
        } else {
            1.0
        },
        ..Material::default()
    }
}

/// The mesh's skin deformer, if any; several on one mesh are not supported.
fn skin_deformer<'s>(ctx: &Ctx, node: &'s ufbx::Node) -> Result<Option<&'s ufbx::SkinDeformer>, IoError> {
    let Some(mesh) = node.mesh.as_ref() else {
        return Ok(None);
    };
    match mesh.skin_deformers.len() {
        0 => Ok(None),
        1 => Ok(mesh.skin_deformers.first().map(|d| d.as_ref())),
        k => Err(IoError::unsupported(
            ctx.path,
            &format!(
                "mesh node '{}' has {k} skin deformers; one per mesh is supported",
                node_name(node)
            ),
        )),
    }
}

/// Which control points the deformer's [`UNSKINNED_PROP`](super::UNSKINNED_PROP) lists (all
/// `false` without it). A malformed list is left unused with a warning: the weights stand.
fn unskinned_list(ctx: &Ctx, name: &str, deformer: &ufbx::SkinDeformer, vertex_count: usize) -> Vec<bool> {
    let mut out = vec![false; vertex_count];
    let Some(prop) = deformer.element.props.find_prop(super::UNSKINNED_PROP) else {
        return out;
    };
    for item in prop.value_str.split(',').filter(|s| !s.is_empty()) {
        match item.trim().parse::<usize>() {
            Ok(v) if v < vertex_count => out[v] = true,
            _ => {
                ctx.warn(format!(
                    "mesh node '{name}': skin deformer property {}: '{item}' is not a control point of the mesh's {vertex_count}; the list is ignored",
                    super::UNSKINNED_PROP
                ));
                return vec![false; vertex_count];
            }
        }
    }
    out
}

/// The bone node (ufbx index) of a cluster.
fn cluster_bone(ctx: &Ctx, node: &ufbx::Node, cluster: &ufbx::SkinCluster) -> Result<u32, IoError> {
    cluster.bone_node.as_ref().map(|b| b.element.typed_id).ok_or_else(|| {
        ctx.err(format!(
            "mesh node '{}': skin cluster '{}' has no bone node",
            node_name(node),
            cluster.element.name
        ))
    })
}

/// Every control point a cluster weights must exist (ufbx drops the others silently).
fn check_cluster_indices(
    ctx: &Ctx,
    name: &str,
    deformer: &ufbx::SkinDeformer,
    vertex_count: usize,
) -> Result<(), IoError> {
    for cluster in &deformer.clusters {
        if let Some(&v) = cluster.vertices.iter().find(|&&v| v as usize >= vertex_count) {
            return Err(ctx.err(format!(
                "mesh node '{name}': skin cluster '{}' weights control point {v}, but the mesh has {vertex_count}",
                cluster.element.name
            )));
        }
    }
    Ok(())
}

/// The raw weights of control point `v`, bounds-checked.
fn skin_weights<'d>(
    ctx: &Ctx,
    name: &str,
    deformer: &'d ufbx::SkinDeformer,
    v: usize,
) -> Result<&'d [ufbx::SkinWeight], IoError> {
    let sv = deformer
        .vertices
        .get(v)
        .ok_or_else(|| ctx.err(format!("mesh node '{name}': control point {v} has no skin entry")))?;
    let begin = sv.weight_begin as usize;
    let end = begin + sv.num_weights as usize;
    deformer.weights.get(begin..end).ok_or_else(|| {
        ctx.err(format!(
            "mesh node '{name}': control point {v} weights {begin}..{end} are beyond the {} weights",
            deformer.weights.len()
        ))
    })
}

/// Warn about what of a mesh carries no surface and so is left out: polygons with 1 or 2
/// corners (points and lines) and, in a mesh without any face, its loose edges. The control
/// points stay (vertex order is the file's), only without triangles.
fn report_non_surface(ctx: &Ctx, name: &str, mesh: &ufbx::Mesh) {
    let (points, lines) = (mesh.num_point_faces, mesh.num_line_faces);
    if points + lines > 0 {
        ctx.warn(format!(
            "mesh node '{name}': {points} point and {lines} line polygon(s) (fewer than 3 corners) left out"
        ));
    }
    if mesh.faces.is_empty() && !mesh.vertices.is_empty() {
        ctx.warn(format!(
            "mesh node '{name}': no faces, so its {} vertices have no triangles (edges left out)",
            mesh.vertices.len()
        ));
    }
}

/// Triangulate every polygon (ufbx's ear clipping) into control-point triangles shifted by `v0`.
fn triangulate(
    ctx: &Ctx,
    name: &str,
    mesh: &ufbx::Mesh,
    v0: u32,
    flip: bool,
    out: &mut Vec<[u32; 3]>,
) -> Result<(), IoError> {
    let vertex_count = mesh.vertices.len();
    let mut corners: Vec<u32> = Vec::new();
    for (f, face) in mesh.faces.iter().enumerate() {
        if face.num_indices < 3 {
            continue; // points and lines carry no surface
        }
        let end = face.index_begin as usize + face.num_indices as usize;
        if end > mesh.num_indices || end > mesh.vertex_indices.len() {
            return Err(ctx.err(format!("mesh node '{name}': face {f} runs past the index list")));
        }
        let needed = (face.num_indices as usize - 2) * 3;
        corners.resize(needed, 0);
        let count = ufbx::triangulate_face(&mut corners, mesh, *face) as usize;
        for tri in corners.chunks_exact(3).take(count) {
            let mut t = [0u32; 3];
            for (slot, &corner) in t.iter_mut().zip(tri) {
                let cp = mesh.vertex_indices.get(corner as usize).copied().unwrap_or(u32::MAX);
                if cp as usize >= vertex_count {
                    return Err(ctx.err(format!(
                        "mesh node '{name}': face {f} refers to control point {cp}, but there are {vertex_count}"
                    )));
                }
                *slot = cp + v0;
            }
            if flip {
                t.swap(1, 2);
            }
            out.push(t);
        }
    }
    Ok(())
}

/// A per-corner attribute as one value per control point, if every control point's corners
/// agree (to 1e-6); control points without corners get the default. `None` when absent or when
/// some control point has several values (a seam or hard edge).
fn per_control_point<V, T, F>(attr: VertexAttribute<'_, V>, mesh: &ufbx::Mesh, convert: F) -> Option<Vec<T>>
where
    V: Copy + Close,
    T: Default + Clone,
    F: Fn(&V) -> T,
{
    if !attr.exists {
        return None;
    }
    let mut seen: Vec<Option<V>> = vec![None; mesh.vertices.len()];
    for (corner, &cp) in mesh.vertex_indices.iter().enumerate() {
        let index = *attr.indices.get(corner)? as usize;
        let value = *attr.values.get(index)?;
        match seen.get_mut(cp as usize)? {
            slot @ None => *slot = Some(value),
            Some(prev) if prev.close(&value) => {}
            Some(_) => return None,
        }
    }
    Some(
        seen.iter()
            .map(|s| s.as_ref().map(&convert).unwrap_or_default())
            .collect(),
    )
}

/// Append a part's attribute, or drop the attribute for the whole mesh when the part lacks it.
fn extend_or_drop<T>(all: &mut Option<Vec<T>>, part: Option<Vec<T>>) {
    match (all.as_mut(), part) {
        (Some(all), Some(part)) => all.extend(part),
        _ => *all = None,
    }
}

/// The fields of a ufbx per-corner attribute that [`per_control_point`] needs.
struct VertexAttribute<'a, V> {
    exists: bool,
    values: &'a [V],
    indices: &'a [u32],
}

impl<'a> From<&'a ufbx::VertexVec3> for VertexAttribute<'a, ufbx::Vec3> {
    fn from(a: &'a ufbx::VertexVec3) -> Self {
        Self {
            exists: a.exists,
            values: &a.values,
            indices: &a.indices,
        }
    }
}

impl<'a> From<&'a ufbx::VertexVec2> for VertexAttribute<'a, ufbx::Vec2> {
    fn from(a: &'a ufbx::VertexVec2) -> Self {
        Self {
            exists: a.exists,
            values: &a.values,
            indices: &a.indices,
        }
    }
}

/// Equality to rounding, for deciding whether corners of a control point share a value.
trait Close {
    fn close(&self, other: &Self) -> bool;
}

const ATTRIBUTE_TOLERANCE: f64 = 1e-6;

impl Close for ufbx::Vec3 {
    fn close(&self, o: &Self) -> bool {
        (self.x - o.x).abs() <= ATTRIBUTE_TOLERANCE
            && (self.y - o.y).abs() <= ATTRIBUTE_TOLERANCE
            && (self.z - o.z).abs() <= ATTRIBUTE_TOLERANCE
    }
}

impl Close for ufbx::Vec2 {
    fn close(&self, o: &Self) -> bool {
        (self.x - o.x).abs() <= ATTRIBUTE_TOLERANCE && (self.y - o.y).abs() <= ATTRIBUTE_TOLERANCE
    }
}
