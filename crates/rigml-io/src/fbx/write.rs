//! A character as a binary FBX 7.4 scene, for Maya, 3ds Max, MotionBuilder and Blender.
//!
//! What is written:
//! - **mesh**: one mesh node (Model + Geometry) per mesh part, in part order, so a reader that
//!   reads nodes in file order (rigml's, ufbx's) gives back the same vertex order. Control
//!   points are the vertices (positions in model space, the mesh nodes at the origin);
//!   normals per control point (`ByVertice`), UVs per corner indexed by control point, one
//!   material per part.
//! - **skeleton**: a LimbNode Model (with its NodeAttribute) per joint, parented as the joints
//!   are, local transforms = the rest pose (rotation as XYZ Euler angles in degrees); a scale
//!   all roots share goes on a Null above them (the armature object in Blender and Maya).
//! - **bind pose**: when the bind pose differs from the rest pose by one transform shared by
//!   every weighted joint, the mesh is re-bound in the rest pose first (exact; see
//!   `bound_at_rest`), as DCCs expect bind = rest; and when every weighted joint's bind
//!   matrix carries one uniform scale other than that of the node the skeleton hangs under,
//!   the mesh is re-expressed so that they do not (`bind_scale_matched`): Blender's bones hold
//!   no scale.
//! - **joint frames**: as the rest pose gives them, except that a joint whose child Blender's
//!   importer would connect (the child on the joint's Y axis at the bone's length) while a clip
//!   moves that child is turned a quarter turn, its children re-expressed (exact; see
//!   [`children_unconnected`](super::unconnected::children_unconnected)).
//! - **skin**: per mesh part a Skin deformer with one Cluster per joint that weights the part:
//!   `Indexes`/`Weights`, `TransformLink` = the joint's bind matrix (inverse of
//!   [`Skeleton::inverse_bind`](rigml_core::Skeleton)) and `Transform` = its inverse (the mesh
//!   sits at the origin); and a BindPose holding every joint's bind matrix. Vertices without
//!   influence get weight 1 on joint 0 (as in rigml's GLBs, so importers move them with the
//!   character) and are listed in the skin deformer's user property
//!   [`UNSKINNED_PROP`](super::UNSKINNED_PROP), so rigml reads them back unskinned.
//! - **clips**: one AnimationStack + layer per clip, sampled on a grid at the file's frame rate
//!   (the key spacing of the first clip, e.g. 30 or 120 fps) from the clip's first key to its
//!   last, with linear translation, Euler rotation and scale curves for every joint the clip
//!   animates. At the grid times the pose is the clip's; between them FBX interpolates the
//!   Euler angles linearly (kept continuous, no 360° jumps).
//! - **attachments**: a mesh node under its joint, unskinned.
//!
//! Units and axes: metres, Y up, as rigml holds them: `UnitScaleFactor` 100 (1 unit = 100 cm)
//! and glTF's axes in `GlobalSettings`, so DCCs and ufbx need no conversion.
//!
//! Not written: textures and images (material colours only), morph targets (rigml has none).

use super::binary::{encode, Node, Prop};
use crate::IoError;
use rigml_core::glam::{DMat4, DQuat, DVec3, EulerRot, Quat, Vec3};
use rigml_core::{Character, Clip, Mesh, Pose, Transform};
use std::path::Path;

/// FBX time units per second (the SDK's `KTime`).
pub const TICKS_PER_SECOND: i64 = 46_186_158_000;

/// The frame rate clips are sampled at when no clip says otherwise.
pub const DEFAULT_FPS: f64 = 30.0;

/// Highest frame rate the writer samples at (a clip keyed more densely is resampled).
pub const MAX_FPS: f64 = 240.0;

/// Encode a character as a binary FBX file.
pub fn to_fbx(character: &Character, path: &Path) -> Result<Vec<u8>, IoError> {
    let rebound;
    let character = match as_written(character) {
        Some(c) => {
            rebound = c;
            &rebound
        }
        None => character,
    };
    let fps = frame_rate(character);
    let mut scene = Scene::default();
    scene.build(character, fps)?;
    let nodes = [
        header(),
        global_settings(fps),
        Node::new("Documents").c(Node::new("Count").p(Prop::I32(0))),
        Node::new("References"),
        Node::new("Definitions")
            .c(Node::new("Version").p(Prop::I32(100)))
            .c(Node::new("Count").p(Prop::I32(0))),
        scene.objects,
        scene.connections,
        Node::new("Takes").c(Node::new("Current").p(Prop::Str(String::new()))),
    ];
    encode(&nodes).map_err(|_| IoError::unsupported(path, "the scene is over the 4 GiB a 7.4 FBX file can hold"))
}

/// The character re-bound in its rest pose, when its bind pose differs from the rest pose by
/// one transform `M` shared by every weighted joint (`rest_world · inverse_bind = M`; Blender's
/// glTF exports of Quaternius characters bind a 0.28-scaled, turned copy of the rest skeleton):
/// vertices become `M · p` and each joint's bind matrix its rest matrix, which poses every vertex
/// exactly as before. FBX importers that build bones from the bind matrices (Blender's: bones
/// hold no scale) then see the rest skeleton. `None` when bind and rest agree already or when
/// joints differ by different transforms.
pub fn bound_at_rest(c: &Character) -> Option<Character> {
    let skin = c.skin.as_ref()?;
    // Rest matrices in f64: the re-bound vertices must land within float rounding of the
    // originals' poses even under a ×100 armature.
    let mut rest: Vec<DMat4> = Vec::with_capacity(c.skeleton.joint_count());
    for (j, t) in c.skeleton.rest_local.iter().enumerate() {
        let local = t.to_mat4().as_dmat4();
        let world = match c.skeleton.parents[j] {
            Some(p) if p < j => rest[p] * local,
            _ => local,
        };
        rest.push(world);
    }
    let used = skin.joints_used(c.skeleton.joint_count());
    let offsets: Vec<DMat4> = (0..c.skeleton.joint_count())
        .filter(|&j| used[j])
        .map(|j| rest[j] * c.skeleton.inverse_bind[j].as_dmat4())
        .collect();
    let m = *offsets.first()?;
    let scale = m.to_cols_array().iter().fold(0.0f64, |a, x| a.max(x.abs()));
    let close = |a: &DMat4, b: &DMat4| a.abs_diff_eq(*b, 1e-5 * scale.max(1.0));
    if close(&m, &DMat4::IDENTITY) || !offsets.iter().all(|o| close(o, &m)) || m.determinant().abs() < 1e-12 {
        return None;
    }
    let mut out = c.clone();
    for p in &mut out.mesh.positions {
        *p = m.transform_point3(p.as_dvec3()).as_vec3();
    }
    let normal = rigml_core::glam::Mat3::from_mat4(m.as_mat4()).inverse().transpose();
    for n in &mut out.mesh.normals {
        *n = (normal * *n).normalize_or_zero();
    }
    if m.determinant() < 0.0 {
        for t in &mut out.mesh.triangles {
            t.swap(1, 2);
        }
    }
    out.skeleton.inverse_bind = rest.iter().map(|r| r.inverse().as_mat4()).collect();
    Some(out)
}

/// The character as the writer stores it, when that differs from `c`: re-bound in its rest
/// pose ([`bound_at_rest`]), then its mesh re-expressed so that the bind matrices carry the
/// scale of the node the skeleton hangs under ([`bind_scale_matched`]), then the frame of each
/// joint turned that Blender would connect to a moving child
/// ([`children_unconnected`](super::unconnected::children_unconnected)). Each step changes the
/// stored vertices, bind matrices or joint frames, never a posed vertex.
pub fn as_written(c: &Character) -> Option<Character> {
    let unit = f64::from(lifted_scale(c).unwrap_or(1.0));
    let rescaled = match bound_at_rest(c) {
        Some(r) => Some(bind_scale_matched(&r, unit).unwrap_or(r)),
        None => bind_scale_matched(c, unit),
    };
    super::unconnected::children_unconnected(rescaled.as_ref().unwrap_or(c)).or(rescaled)
}

/// The character with each mesh part's space scaled so that the bind matrices of the joints
/// weighting it have scale `unit`, when those joints share one uniform bind scale `s` that is
/// not `unit`: the part's vertices become `p · unit / s` and each of its joints' inverse bind
/// matrices `inverse_bind · (s / unit)`, which poses every skinned vertex exactly as before.
/// Blender's FBX importer builds bones from the bind matrices and drops their scale (edit bones
/// hold none) while posing them with the joints' full local transforms, so a bind scale other
/// than the armature's shows every bone that many times too close to its parent: measured on
/// the manifest's dinosaurs (bind scale 3 in the mesh's space under a ×300 armature), the
/// T-Rex's posed bounding box was 0.19 of its size off. Parts are scaled apart because a
/// character may bind them at different scales (Quaternius' Cowboy: body ×377.7, hat ×100);
/// parts bound at one scale (within 1e-4) share one exact factor. Vertices without
/// influence have no joint to hold them and stay at their stored (re-expressed) place; the
/// writer gives them weight 1 on joint 0 in the file, so importers move them with the root as
/// they do the GLB's. `None` when every scale already matches, or when a part's joints disagree
/// on the scale.
pub fn bind_scale_matched(c: &Character, unit: f64) -> Option<Character> {
    let skin = c.skin.as_ref()?;
    let joints = c.skeleton.joint_count();
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-4 * a.abs().max(b.abs());
    // Each joint's uniform bind scale (None: not uniform or degenerate).
    let scale_of = |j: usize| -> Option<f64> {
        let bind = c.skeleton.inverse_bind[j].as_dmat4().inverse();
        let axes = [bind.x_axis, bind.y_axis, bind.z_axis].map(|a| a.truncate().length());
        let s = axes[0];
        (s.is_finite() && s > 0.0 && axes.iter().all(|&a| same(a, s))).then_some(s)
    };
    let scales: Vec<Option<f64>> = (0..joints).map(scale_of).collect();
    let parts = c.mesh.parts_or_whole();
    // One factor per group of parts bound at one scale (the group's first scale, so that a
    // part's vertices and its joints are re-expressed by exactly the same number).
    let mut groups: Vec<f64> = Vec::new();
    let mut group_of = |s: f64| -> f64 {
        match groups.iter().find(|&&g| same(g, s)) {
            Some(&g) => g,
            None => {
                groups.push(s);
                s
            }
        }
    };
    let mut part_factor: Vec<Option<f64>> = vec![None; parts.len()];
    let mut factor: Vec<Option<f64>> = vec![None; joints];
    for (k, part) in parts.iter().enumerate() {
        for v in part.vertices.clone() {
            for inf in skin.influences(v) {
                let j = inf.joint as usize;
                let f = group_of(scales[j]?) / unit;
                // Every joint of a part, and every part of a joint, in one group.
                for slot in [&mut part_factor[k], &mut factor[j]] {
                    match *slot {
                        Some(g) if g != f => return None,
                        Some(_) => {}
                        None => *slot = Some(f),
                    }
                }
            }
        }
    }
    // Joints no vertex depends on: their own scale's group, else their own scale; a joint
    // whose scale is not uniform takes a descendant's factor (children come after parents, so
    // a backward pass carries factors up), else its parent's, else none.
    for j in 0..joints {
        if factor[j].is_none() {
            factor[j] = scales[j].map(|s| groups.iter().find(|&&g| same(g, s)).copied().unwrap_or(s) / unit);
        }
    }
    for k in (0..joints).rev() {
        if let Some(p) = c.skeleton.parents[k] {
            if factor[p].is_none() {
                factor[p] = factor[k];
            }
        }
    }
    for j in 0..joints {
        if factor[j].is_none() {
            factor[j] = c.skeleton.parents[j].and_then(|p| factor[p]);
        }
    }
    let changes = |f: &Option<f64>| f.is_some_and(|f| (f - 1.0).abs() > 1e-4);
    if !part_factor.iter().any(changes) {
        return None;
    }
    let mut out = c.clone();
    for (part, f) in parts.iter().zip(&part_factor) {
        if let Some(f) = f {
            for p in &mut out.mesh.positions[part.vertices.clone()] {
                *p = (p.as_dvec3() / f).as_vec3();
            }
        }
    }
    for (ib, f) in out.skeleton.inverse_bind.iter_mut().zip(&factor) {
        if let Some(f) = f {
            *ib = (ib.as_dmat4() * DMat4::from_scale(DVec3::splat(*f))).as_mat4();
        }
    }
    Some(out)
}

/// The rate clips are sampled at: the median key spacing of the first clip with keys,
/// rounded to a whole number of frames per second when within 1 % of one.
pub fn frame_rate(character: &Character) -> f64 {
    let Some(times) = character
        .clips
        .iter()
        .flat_map(|c| c.channels.iter())
        .map(|c| &c.times)
        .find(|t| t.len() > 1)
    else {
        return DEFAULT_FPS;
    };
    let mut gaps: Vec<f64> = times
        .windows(2)
        .map(|w| f64::from(w[1] - w[0]))
        .filter(|g| *g > 1e-6)
        .collect();
    if gaps.is_empty() {
        return DEFAULT_FPS;
    }
    gaps.sort_by(f64::total_cmp);
    let fps = 1.0 / gaps[gaps.len() / 2];
    let whole = fps.round();
    let fps = if (fps - whole).abs() < 0.01 * whole { whole } else { fps };
    if fps.is_finite() && fps >= 1.0 {
        fps.min(MAX_FPS)
    } else {
        DEFAULT_FPS
    }
}

fn header() -> Node {
    Node::new("FBXHeaderExtension")
        .c(Node::new("FBXHeaderVersion").p(Prop::I32(1003)))
        .c(Node::new("FBXVersion").p(Prop::I32(super::binary::VERSION as i32)))
        .c(Node::new("Creator").p(Prop::Str(format!("rigml {}", env!("CARGO_PKG_VERSION")))))
}

fn global_settings(fps: f64) -> Node {
    let props = Node::new("Properties70")
        .c(prop_i32("UpAxis", 1))
        .c(prop_i32("UpAxisSign", 1))
        .c(prop_i32("FrontAxis", 2))
        .c(prop_i32("FrontAxisSign", 1))
        .c(prop_i32("CoordAxis", 0))
        .c(prop_i32("CoordAxisSign", 1))
        .c(prop_i32("OriginalUpAxis", 1))
        .c(prop_i32("OriginalUpAxisSign", 1))
        .c(prop_f64("UnitScaleFactor", 100.0))
        .c(prop_f64("OriginalUnitScaleFactor", 100.0))
        // TimeMode 14 = custom frame rate, given by CustomFrameRate.
        .c(Node::new("P")
            .p(Prop::Str("TimeMode".into()))
            .p(Prop::Str("enum".into()))
            .p(Prop::Str(String::new()))
            .p(Prop::Str(String::new()))
            .p(Prop::I32(14)))
        .c(prop_f64("CustomFrameRate", fps));
    Node::new("GlobalSettings")
        .c(Node::new("Version").p(Prop::I32(1000)))
        .c(props)
}

fn p_head(name: &str, ty: &str, label: &str, flags: &str) -> Node {
    Node::new("P")
        .p(Prop::Str(name.into()))
        .p(Prop::Str(ty.into()))
        .p(Prop::Str(label.into()))
        .p(Prop::Str(flags.into()))
}

fn prop_i32(name: &str, v: i32) -> Node {
    p_head(name, "int", "Integer", "").p(Prop::I32(v))
}

fn prop_f64(name: &str, v: f64) -> Node {
    p_head(name, "double", "Number", "").p(Prop::F64(v))
}

fn prop_vec(name: &str, ty: &str, label: &str, flags: &str, v: Vec3) -> Node {
    prop_dvec(name, ty, label, flags, v.as_dvec3())
}

fn prop_dvec(name: &str, ty: &str, label: &str, flags: &str, v: DVec3) -> Node {
    p_head(name, ty, label, flags)
        .p(Prop::F64(v.x))
        .p(Prop::F64(v.y))
        .p(Prop::F64(v.z))
}

fn prop_time(name: &str, ticks: i64) -> Node {
    p_head(name, "KTime", "Time", "").p(Prop::I64(ticks))
}

/// `name\0\x01Class`, the binary form of an object's name.
fn object_name(name: &str, class: &str) -> Prop {
    let mut bytes = name.replace('\0', "").into_bytes();
    bytes.extend_from_slice(b"\0\x01");
    bytes.extend_from_slice(class.as_bytes());
    Prop::Bytes(bytes)
}

/// A matrix as the 16 doubles FBX stores (column-major, like glam).
fn matrix(m: &DMat4) -> Prop {
    Prop::F64s(m.to_cols_array().to_vec())
}

/// FBX's default rotation order XYZ applies X first: `R = Rz · Ry · Rx`, glam's intrinsic ZYX.
/// Computed in f64: near gimbal lock (Y at ±90°, common on quadrupeds' legs) the f32
/// decomposition is off by degrees.
fn euler_degrees(q: Quat) -> DVec3 {
    let q = DQuat::from_xyzw(f64::from(q.x), f64::from(q.y), f64::from(q.z), f64::from(q.w)).normalize();
    let (z, y, x) = q.to_euler(EulerRot::ZYX);
    DVec3::new(x.to_degrees(), y.to_degrees(), z.to_degrees())
}

/// The Objects and Connections sections being built, with the next free object id.
struct Scene {
    objects: Node,
    connections: Node,
    next_id: i64,
}

impl Default for Scene {
    fn default() -> Self {
        Scene {
            objects: Node::new("Objects"),
            connections: Node::new("Connections"),
            next_id: 1_000_000,
        }
    }
}

impl Scene {
    fn id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    fn connect(&mut self, child: i64, parent: i64) {
        self.connections.push(
            Node::new("C")
                .p(Prop::Str("OO".into()))
                .p(Prop::I64(child))
                .p(Prop::I64(parent)),
        );
    }

    fn connect_prop(&mut self, child: i64, parent: i64, prop: &str) {
        self.connections.push(
            Node::new("C")
                .p(Prop::Str("OP".into()))
                .p(Prop::I64(child))
                .p(Prop::I64(parent))
                .p(Prop::Str(prop.into())),
        );
    }

    fn build(&mut self, c: &Character, fps: f64) -> Result<(), IoError> {
        let materials: Vec<i64> = c.mesh.materials.iter().map(|m| self.material(m)).collect();
        let lift = lifted_scale(c);
        let top = self.lift_node(c, lift);
        let unit = lift.unwrap_or(1.0);
        // Mesh nodes first: readers meet them in this order.
        let mut parts = Vec::new();
        for part in c.mesh.parts_or_whole() {
            if part.vertices.is_empty() {
                continue;
            }
            let (model, geometry) = self.mesh_node(&c.mesh, &part, unit, None)?;
            self.connect(model, top);
            if let Some(m) = part.material.and_then(|m| materials.get(m)) {
                self.connect(*m, model);
            }
            parts.push((part, model, geometry));
        }
        let joints = self.skeleton(c, lift, top);
        if let Some(skin) = &c.skin {
            // In f64: the cluster matrices multiply out to the stored vertices' bind positions,
            // and a ×100 armature costs single precision its last digits.
            let bind_world: Vec<DMat4> = c.skeleton.inverse_bind.iter().map(|m| m.as_dmat4().inverse()).collect();
            // Where the mesh nodes sit: under the lifted scale's Null, or at the origin.
            let mesh_world = DMat4::from_scale(DVec3::splat(f64::from(unit)));
            for (k, (part, _, geometry)) in parts.iter().enumerate() {
                // Per joint: the part's control points it weights, and how much. Unskinned
                // vertices get weight 1 on joint 0 (a root), as in rigml's GLBs, so that every
                // importer moves them with the character; the skin deformer lists them.
                let mut per_joint: Vec<(Vec<i32>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); joints.len()];
                let mut unskinned = Vec::new();
                for (local, v) in part.vertices.clone().enumerate() {
                    let row = skin.influences(v);
                    if row.is_empty() && !per_joint.is_empty() {
                        per_joint[0].0.push(local as i32);
                        per_joint[0].1.push(1.0);
                        unskinned.push(local);
                    }
                    for inf in row {
                        if let Some(slot) = per_joint.get_mut(inf.joint as usize) {
                            slot.0.push(local as i32);
                            slot.1.push(f64::from(inf.weight));
                        }
                    }
                }
                let skin_id = self.id();
                let mut deformer = Node::new("Deformer")
                    .p(Prop::I64(skin_id))
                    .p(object_name(&format!("{} skin", part.name), "Deformer"))
                    .p(Prop::Str("Skin".into()))
                    .c(Node::new("Version").p(Prop::I32(101)))
                    .c(Node::new("Link_DeformAcuracy").p(Prop::F64(50.0)));
                if !unskinned.is_empty() {
                    let list = unskinned.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
                    let prop = p_head(super::UNSKINNED_PROP, "KString", "", "U").p(Prop::Str(list));
                    deformer.push(Node::new("Properties70").c(prop));
                }
                self.objects.push(deformer);
                self.connect(skin_id, *geometry);
                for (j, (indexes, weights)) in per_joint.into_iter().enumerate() {
                    // The first part also binds the joints no vertex depends on (a root above
                    // the hips, end sites), so readers that take the skeleton from the
                    // clusters (Maya's, ufbx's, rigml's) see every joint with its bind matrix.
                    if indexes.is_empty() && k > 0 {
                        continue;
                    }
                    let cluster = self.id();
                    let link = bind_world[j];
                    let mut node = Node::new("Deformer")
                        .p(Prop::I64(cluster))
                        .p(object_name(&c.skeleton.names[j], "SubDeformer"))
                        .p(Prop::Str("Cluster".into()))
                        .c(Node::new("Version").p(Prop::I32(100)));
                    if !indexes.is_empty() {
                        node.push(Node::new("Indexes").p(Prop::I32s(indexes)));
                        node.push(Node::new("Weights").p(Prop::F64s(weights)));
                    }
                    node.push(Node::new("Transform").p(matrix(&(link.inverse() * mesh_world))));
                    node.push(Node::new("TransformLink").p(matrix(&link)));
                    self.objects.push(node);
                    self.connect(cluster, skin_id);
                    self.connect(joints[j], cluster);
                }
            }
            self.bind_pose(
                &parts.iter().map(|p| p.1).collect::<Vec<_>>(),
                mesh_world,
                &joints,
                &bind_world,
            );
        }
        for a in &c.attachments {
            let whole = a.mesh.parts_or_whole();
            let Some(first) = whole.first() else { continue };
            let part = rigml_core::MeshPart {
                vertices: 0..a.mesh.vertex_count(),
                triangles: 0..a.mesh.triangle_count(),
                material: first.material,
                name: a.name.clone(),
            };
            let (model, _) = self.mesh_node(&a.mesh, &part, 1.0, Some(&Transform::from_mat4(&a.local)))?;
            if let Some(&parent) = joints.get(a.joint) {
                self.connect(model, parent);
            }
        }
        for clip in &c.clips {
            self.clip(c, clip, &joints, fps, lift);
        }
        Ok(())
    }

    fn material(&mut self, m: &rigml_core::Material) -> i64 {
        let id = self.id();
        let [r, g, b, a] = m.base_color;
        self.objects.push(
            Node::new("Material")
                .p(Prop::I64(id))
                .p(object_name(&m.name, "Material"))
                .p(Prop::Str(String::new()))
                .c(Node::new("Version").p(Prop::I32(102)))
                .c(Node::new("ShadingModel").p(Prop::Str("phong".into())))
                .c(Node::new("MultiLayer").p(Prop::I32(0)))
                .c(Node::new("Properties70")
                    .c(prop_vec("DiffuseColor", "Color", "", "A", Vec3::new(r, g, b)))
                    .c(prop_f64("DiffuseFactor", 1.0))
                    .c(prop_f64("Opacity", f64::from(a)))),
        );
        id
    }

    /// A mesh Model and its Geometry for `part` of `mesh` (named as the part, at `local` under
    /// its parent, else at its parent's origin); returns their ids (connected). Vertices are
    /// stored divided by `unit` (the scale of the node the mesh hangs under).
    fn mesh_node(
        &mut self,
        mesh: &Mesh,
        part: &rigml_core::MeshPart,
        unit: f32,
        local: Option<&Transform>,
    ) -> Result<(i64, i64), IoError> {
        let name = part.name.as_str();
        let v0 = part.vertices.start;
        let unit = f64::from(unit);
        let vertices: Vec<f64> = mesh.positions[part.vertices.clone()]
            .iter()
            .flat_map(|p| p.to_array())
            .map(|x| f64::from(x) / unit)
            .collect();
        let mut polygon_index = Vec::with_capacity(part.triangles.len() * 3);
        for t in &mesh.triangles[part.triangles.clone()] {
            let local = |k: usize| t[k] as i64 - v0 as i64;
            polygon_index.push(local(0) as i32);
            polygon_index.push(local(1) as i32);
            polygon_index.push(-(local(2) as i32) - 1); // the last corner of a polygon is stored as -(i+1)
        }
        let geometry = self.id();
        let mut g = Node::new("Geometry")
            .p(Prop::I64(geometry))
            .p(object_name(name, "Geometry"))
            .p(Prop::Str("Mesh".into()))
            .c(Node::new("GeometryVersion").p(Prop::I32(124)))
            .c(Node::new("Vertices").p(Prop::F64s(vertices)))
            .c(Node::new("PolygonVertexIndex").p(Prop::I32s(polygon_index.clone())));
        let mut layer = Node::new("Layer")
            .p(Prop::I32(0))
            .c(Node::new("Version").p(Prop::I32(100)));
        let element = |ty: &str| {
            Node::new("LayerElement")
                .c(Node::new("Type").p(Prop::Str(ty.into())))
                .c(Node::new("TypedIndex").p(Prop::I32(0)))
        };
        if !mesh.normals.is_empty() {
            let normals: Vec<f64> = mesh.normals[part.vertices.clone()]
                .iter()
                .flat_map(|n| n.to_array())
                .map(f64::from)
                .collect();
            g.push(
                Node::new("LayerElementNormal")
                    .p(Prop::I32(0))
                    .c(Node::new("Version").p(Prop::I32(101)))
                    .c(Node::new("Name").p(Prop::Str(String::new())))
                    .c(Node::new("MappingInformationType").p(Prop::Str("ByVertice".into())))
                    .c(Node::new("ReferenceInformationType").p(Prop::Str("Direct".into())))
                    .c(Node::new("Normals").p(Prop::F64s(normals))),
            );
            layer.push(element("LayerElementNormal"));
        }
        if !mesh.uvs.is_empty() {
            let uvs: Vec<f64> = mesh.uvs[part.vertices.clone()]
                .iter()
                .flat_map(|uv| uv.to_array())
                .map(f64::from)
                .collect();
            let corners: Vec<i32> = polygon_index.iter().map(|&i| if i < 0 { -i - 1 } else { i }).collect();
            g.push(
                Node::new("LayerElementUV")
                    .p(Prop::I32(0))
                    .c(Node::new("Version").p(Prop::I32(101)))
                    .c(Node::new("Name").p(Prop::Str("UVMap".into())))
                    .c(Node::new("MappingInformationType").p(Prop::Str("ByPolygonVertex".into())))
                    .c(Node::new("ReferenceInformationType").p(Prop::Str("IndexToDirect".into())))
                    .c(Node::new("UV").p(Prop::F64s(uvs)))
                    .c(Node::new("UVIndex").p(Prop::I32s(corners))),
            );
            layer.push(element("LayerElementUV"));
        }
        if part.material.is_some() {
            g.push(
                Node::new("LayerElementMaterial")
                    .p(Prop::I32(0))
                    .c(Node::new("Version").p(Prop::I32(101)))
                    .c(Node::new("Name").p(Prop::Str(String::new())))
                    .c(Node::new("MappingInformationType").p(Prop::Str("AllSame".into())))
                    .c(Node::new("ReferenceInformationType").p(Prop::Str("IndexToDirect".into())))
                    .c(Node::new("Materials").p(Prop::I32s(vec![0]))),
            );
            layer.push(element("LayerElementMaterial"));
        }
        g.push(layer);
        self.objects.push(g);
        let model = self.id();
        let mut p70 = Node::new("Properties70");
        if let Some(t) = local {
            p70.children = local_props(t);
        }
        self.objects.push(
            Node::new("Model")
                .p(Prop::I64(model))
                .p(object_name(name, "Model"))
                .p(Prop::Str("Mesh".into()))
                .c(Node::new("Version").p(Prop::I32(232)))
                .c(p70)
                .c(Node::new("Shading").p(Prop::Bool(true)))
                .c(Node::new("Culling").p(Prop::Str("CullingOff".into()))),
        );
        self.connect(geometry, model);
        Ok((model, geometry))
    }

    /// The Null carrying the roots' common scale (and the mesh nodes, whose vertices are then
    /// stored in its unscaled space, as Blender exports such files); 0 (the scene root) without.
    fn lift_node(&mut self, c: &Character, lift: Option<f32>) -> i64 {
        let Some(scale) = lift else { return 0 };
        let local = Transform {
            scale: Vec3::splat(scale),
            ..Transform::default()
        };
        let null = self.attributed_model(&format!("{}_skeleton", c.name), "Null", "Null", &local);
        self.connect(null, 0);
        null
    }

    /// One LimbNode per joint, parented as the skeleton is; returns their ids. A scale every
    /// root shares (an armature scaled ×100 that the reader baked into the roots) goes on a
    /// Null above them instead, as the file rigml read had it: Blender makes that Null the
    /// armature object and sizes the bones in its unscaled space.
    fn skeleton(&mut self, c: &Character, lift: Option<f32>, top: i64) -> Vec<i64> {
        let s = &c.skeleton;
        let mut ids = Vec::with_capacity(s.joint_count());
        for j in 0..s.joint_count() {
            let local = under_lift(s.rest_local[j], lift, s.parents[j].is_none());
            let model = self.attributed_model(&s.names[j], "LimbNode", "Skeleton", &local);
            let parent = s.parents[j].and_then(|p| ids.get(p).copied()).unwrap_or(top);
            self.connect(model, parent);
            ids.push(model);
        }
        ids
    }

    /// A Model of `kind` (`LimbNode`, `Null`) at `local` with the NodeAttribute DCCs read its
    /// kind from (`flags`: its TypeFlags); returns the Model's id, not yet parented.
    fn attributed_model(&mut self, name: &str, kind: &str, flags: &str, local: &Transform) -> i64 {
        let model = self.id();
        let attribute = self.id();
        self.objects.push(
            Node::new("NodeAttribute")
                .p(Prop::I64(attribute))
                .p(object_name(name, "NodeAttribute"))
                .p(Prop::Str(kind.into()))
                .c(Node::new("TypeFlags").p(Prop::Str(flags.into()))),
        );
        let mut p70 = Node::new("Properties70");
        p70.children = local_props(local);
        let mut node = Node::new("Model")
            .p(Prop::I64(model))
            .p(object_name(name, "Model"))
            .p(Prop::Str(kind.into()))
            .c(Node::new("Version").p(Prop::I32(232)))
            .c(p70);
        if kind == "LimbNode" {
            node.push(Node::new("Culling").p(Prop::Str("CullingOff".into())));
        }
        self.objects.push(node);
        self.connect(attribute, model);
        model
    }

    fn bind_pose(&mut self, meshes: &[i64], mesh_world: DMat4, joints: &[i64], bind_world: &[DMat4]) {
        let id = self.id();
        let mut pose = Node::new("Pose")
            .p(Prop::I64(id))
            .p(object_name("BindPose", "Pose"))
            .p(Prop::Str("BindPose".into()))
            .c(Node::new("Type").p(Prop::Str("BindPose".into())))
            .c(Node::new("Version").p(Prop::I32(100)))
            .c(Node::new("NbPoseNodes").p(Prop::I32((meshes.len() + joints.len()) as i32)));
        let entries = meshes
            .iter()
            .map(|&m| (m, mesh_world))
            .chain(joints.iter().copied().zip(bind_world.iter().copied()));
        for (node, m) in entries {
            pose.push(
                Node::new("PoseNode")
                    .c(Node::new("Node").p(Prop::I64(node)))
                    .c(Node::new("Matrix").p(matrix(&m))),
            );
        }
        self.objects.push(pose);
    }

    /// One stack + layer; T/R/S curves for each animated joint, sampled at `fps`.
    fn clip(&mut self, c: &Character, clip: &Clip, joints: &[i64], fps: f64, lift: Option<f32>) {
        if clip.channels.is_empty() {
            return;
        }
        let start = f64::from(clip.start());
        let frames = (f64::from(clip.duration()) * fps).round().max(0.0) as usize + 1;
        let times: Vec<f64> = (0..frames)
            .map(|f| (start + f as f64 / fps).min(start + f64::from(clip.duration())))
            .collect();
        let ticks: Vec<i64> = times
            .iter()
            .map(|&t| (t * TICKS_PER_SECOND as f64).round() as i64)
            .collect();
        // Per joint: which of translation, rotation, scale the clip animates (only those get
        // curves; the rest keep the joint's rest values, as in the clip).
        let mut animated = vec![[false; 3]; joints.len()];
        for ch in &clip.channels {
            if let Some(a) = animated.get_mut(ch.joint) {
                let k = match ch.values {
                    rigml_core::ChannelValues::Translation(_) => 0,
                    rigml_core::ChannelValues::Rotation(_) => 1,
                    rigml_core::ChannelValues::Scale(_) => 2,
                };
                a[k] = true;
            }
        }
        // Poses at every frame.
        let rest = Pose::rest(&c.skeleton);
        let mut pose = rest.clone();
        let mut poses = Vec::with_capacity(frames);
        for &t in &times {
            pose.local.clone_from(&rest.local);
            clip.sample_into(t as f32, &mut pose);
            poses.push(pose.local.clone());
        }

        let stack = self.id();
        let layer = self.id();
        let (first, last) = (ticks[0], ticks[ticks.len() - 1]);
        self.objects.push(
            Node::new("AnimationStack")
                .p(Prop::I64(stack))
                .p(object_name(&clip.name, "AnimStack"))
                .p(Prop::Str(String::new()))
                .c(Node::new("Properties70")
                    .c(prop_time("LocalStart", first))
                    .c(prop_time("LocalStop", last))
                    .c(prop_time("ReferenceStart", first))
                    .c(prop_time("ReferenceStop", last))),
        );
        // Named as its stack: Blender then names the action `<armature>|<clip>`.
        self.objects.push(
            Node::new("AnimationLayer")
                .p(Prop::I64(layer))
                .p(object_name(&clip.name, "AnimLayer"))
                .p(Prop::Str(String::new())),
        );
        self.connect(layer, stack);
        for (j, &model) in joints.iter().enumerate() {
            if !animated[j].iter().any(|&a| a) {
                continue;
            }
            let root = c.skeleton.parents[j].is_none();
            let local: Vec<Transform> = poses.iter().map(|p| under_lift(p[j], lift, root)).collect();
            let translation: Vec<DVec3> = local.iter().map(|t| t.translation.as_dvec3()).collect();
            let scale: Vec<DVec3> = local.iter().map(|t| t.scale.as_dvec3()).collect();
            let rotation = continuous_euler(poses.iter().map(|p| p[j].rotation));
            let curves = [
                ("T", "Lcl Translation", translation),
                ("R", "Lcl Rotation", rotation),
                ("S", "Lcl Scaling", scale),
            ];
            for ((short, prop, values), on) in curves.into_iter().zip(animated[j]) {
                if on {
                    self.curve_node(layer, model, short, prop, &ticks, &values);
                }
            }
        }
    }

    fn curve_node(&mut self, layer: i64, model: i64, short: &str, prop: &str, ticks: &[i64], values: &[DVec3]) {
        let node = self.id();
        let first = values.first().copied().unwrap_or_default();
        self.objects.push(
            Node::new("AnimationCurveNode")
                .p(Prop::I64(node))
                .p(object_name(short, "AnimCurveNode"))
                .p(Prop::Str(String::new()))
                .c(Node::new("Properties70")
                    .c(p_head("d|X", "Number", "", "A").p(Prop::F64(first.x)))
                    .c(p_head("d|Y", "Number", "", "A").p(Prop::F64(first.y)))
                    .c(p_head("d|Z", "Number", "", "A").p(Prop::F64(first.z)))),
        );
        self.connect(node, layer);
        self.connect_prop(node, model, prop);
        for (axis, channel) in ["d|X", "d|Y", "d|Z"].into_iter().enumerate() {
            let curve = self.id();
            // KeyValueFloat is single precision in every FBX version.
            let keys: Vec<f32> = values.iter().map(|v| v[axis] as f32).collect();
            self.objects.push(
                Node::new("AnimationCurve")
                    .p(Prop::I64(curve))
                    .p(object_name("", "AnimCurve"))
                    .p(Prop::Str(String::new()))
                    .c(Node::new("Default").p(Prop::F64(f64::from(keys[0]))))
                    .c(Node::new("KeyVer").p(Prop::I32(4009)))
                    .c(Node::new("KeyTime").p(Prop::I64s(ticks.to_vec())))
                    .c(Node::new("KeyValueFloat").p(Prop::F32s(keys)))
                    // One attribute for all keys: linear interpolation (flag 0x4).
                    .c(Node::new("KeyAttrFlags").p(Prop::I32s(vec![0x4])))
                    .c(Node::new("KeyAttrDataFloat").p(Prop::F32s(vec![0.0; 4])))
                    .c(Node::new("KeyAttrRefCount").p(Prop::I32s(vec![ticks.len() as i32]))),
            );
            self.connect_prop(curve, node, channel);
        }
    }
}

/// [`Skeleton::common_root_scale`](rigml_core::Skeleton::common_root_scale), written on a Null
/// above the root (see `Scene::skeleton`). Only for a single root: above several roots the
/// Null would be their common ancestor, which FBX readers that take the skeleton from the
/// clusters' common ancestor (rigml's) count as a joint.
fn common_root_scale(skeleton: &rigml_core::Skeleton) -> Option<f32> {
    let roots = skeleton.parents.iter().filter(|p| p.is_none()).count();
    if roots == 1 {
        skeleton.common_root_scale()
    } else {
        None
    }
}

/// The roots' common scale when the writer lifts it onto a Null above them.
fn lifted_scale(c: &Character) -> Option<f32> {
    common_root_scale(&c.skeleton).filter(|_| clips_scale_the_root(c))
}

/// Whether the root's scale may move to a Null: when a clip keys the root's scale. Measured
/// with Blender 5.0's importers on the manifest: a clip that keys the root's scale shows at the
/// GLB's size only with the Null (Quaternius' 2017 animals, the Godot robot), a character whose
/// clips leave the root's scale to the rest pose only without it (their fish, dinosaurs).
fn clips_scale_the_root(c: &Character) -> bool {
    c.clips.iter().flat_map(|clip| clip.channels.iter()).any(|ch| {
        c.skeleton.parents.get(ch.joint) == Some(&None) && matches!(ch.values, rigml_core::ChannelValues::Scale(_))
    })
}

/// A root joint's transform under the lifted scale's Null (others unchanged).
fn under_lift(mut t: Transform, lift: Option<f32>, root: bool) -> Transform {
    if let (Some(s), true) = (lift, root) {
        t.translation /= s;
        t.scale /= s;
    }
    t
}

/// Lcl Translation / Rotation (XYZ Euler, degrees) / Scaling properties of a transform.
fn local_props(t: &Transform) -> Vec<Node> {
    vec![
        prop_vec("Lcl Translation", "Lcl Translation", "", "A", t.translation),
        prop_dvec("Lcl Rotation", "Lcl Rotation", "", "A", euler_degrees(t.rotation)),
        prop_vec("Lcl Scaling", "Lcl Scaling", "", "A", t.scale),
    ]
}

/// Euler angles (degrees) of each rotation, each angle shifted by whole turns to stay within
/// 180° of the previous frame's, so linear interpolation never spins the long way round.
fn continuous_euler(rotations: impl Iterator<Item = Quat>) -> Vec<DVec3> {
    let mut out: Vec<DVec3> = Vec::new();
    for q in rotations {
        let mut e = euler_degrees(q);
        if let Some(prev) = out.last() {
            for k in 0..3 {
                e[k] += ((prev[k] - e[k]) / 360.0).round() * 360.0;
            }
        }
        out.push(e);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigml_core::glam::Mat4;
    use rigml_core::skin::SkinBuilder;
    use rigml_core::{lbs, skinning_matrices, Skeleton};

    /// Two joints under a ×300 root whose bind matrices carry scale 3 (a mesh stored at 1/100
    /// of the skeleton's size, as Quaternius' dinosaurs are), rest differing from bind by a
    /// turn of the child; vertex 2 has no influence.
    fn scaled_bind() -> Character {
        let rest_local = vec![
            Transform {
                scale: Vec3::splat(300.0),
                ..Transform::default()
            },
            Transform {
                translation: Vec3::new(0.0, 0.01, 0.0),
                rotation: Quat::from_rotation_z(0.4),
                ..Transform::default()
            },
        ];
        let bind_world = [
            Mat4::from_scale(Vec3::splat(3.0)),
            Mat4::from_scale(Vec3::splat(3.0)) * Mat4::from_translation(Vec3::new(0.0, 0.01, 0.0)),
        ];
        let skeleton = Skeleton {
            names: vec!["root".into(), "tip".into()],
            parents: vec![None, Some(0)],
            rest_local,
            inverse_bind: bind_world.iter().map(|m| m.inverse()).collect(),
        };
        let mut skin = SkinBuilder::new(2, 4).unwrap();
        for row in [&[(0u32, 1.0f32)][..], &[(0, 0.5), (1, 0.5)], &[]] {
            skin.push_row(row).unwrap();
        }
        Character {
            name: "scaled".into(),
            mesh: rigml_core::Mesh {
                positions: vec![Vec3::ZERO, Vec3::new(0.01, 0.02, 0.0), Vec3::new(0.0, 0.0, 0.01)],
                triangles: vec![[0, 1, 2]],
                ..Default::default()
            },
            skeleton,
            skin: Some(skin.finish()),
            clips: Vec::new(),
            attachments: Vec::new(),
        }
    }

    fn rest_posed(c: &Character) -> Vec<Vec3> {
        let m = skinning_matrices(&c.skeleton, &Pose::rest(&c.skeleton)).unwrap();
        lbs(&c.mesh.positions, c.skin.as_ref().unwrap(), &m)
    }

    #[test]
    fn bind_scale_moves_into_the_mesh_without_moving_a_posed_vertex() {
        let c = scaled_bind();
        let out = as_written(&c).expect("bind scale 3 under no lifted scale is re-expressed");
        for ib in &out.skeleton.inverse_bind {
            let bind = ib.inverse();
            for axis in [bind.x_axis, bind.y_axis, bind.z_axis] {
                assert!((axis.truncate().length() - 1.0).abs() < 1e-5, "{bind:?}");
            }
        }
        let size = 300.0 * 0.02;
        let (before, after) = (rest_posed(&c), rest_posed(&out));
        for v in 0..2 {
            assert!(
                before[v].distance(after[v]) < 1e-5 * size,
                "{} vs {}",
                before[v],
                after[v]
            );
        }
        // The unskinned vertex has no joint to hold it: it stays where the stored mesh is.
        assert!(after[2].distance(before[2] / 3.0) < 1e-7, "{}", after[2]);
        // Nothing to do once the scale matches the node the skeleton hangs under.
        assert!(bind_scale_matched(&out, 1.0).is_none());
        assert!(bind_scale_matched(&c, 3.0).is_none());
    }

    #[test]
    fn parts_bound_at_different_scales_are_scaled_apart() {
        // A second root (a hat) bound at scale 100 and weighting its own part.
        let mut c = scaled_bind();
        let s = &mut c.skeleton;
        s.names.push("hat".into());
        s.parents.push(None);
        s.rest_local.push(Transform {
            translation: Vec3::new(0.0, 6.0, 0.0),
            scale: Vec3::splat(100.0),
            ..Transform::default()
        });
        s.inverse_bind
            .push((Mat4::from_translation(Vec3::new(0.0, 6.0, 0.0)) * Mat4::from_scale(Vec3::splat(100.0))).inverse());
        c.mesh.positions.push(Vec3::new(0.001, 0.0, 0.0));
        c.mesh.triangles.push([3, 3, 3]);
        c.mesh.parts = vec![
            rigml_core::MeshPart {
                name: "body".into(),
                vertices: 0..3,
                triangles: 0..1,
                material: None,
            },
            rigml_core::MeshPart {
                name: "hat".into(),
                vertices: 3..4,
                triangles: 1..2,
                material: None,
            },
        ];
        let mut skin = SkinBuilder::new(3, 4).unwrap();
        for row in [&[(0u32, 1.0f32)][..], &[(0, 0.5), (1, 0.5)], &[], &[(2, 1.0)]] {
            skin.push_row(row).unwrap();
        }
        c.skin = Some(skin.finish());
        let out = bind_scale_matched(&c, 1.0).expect("both parts re-expressed");
        for ib in &out.skeleton.inverse_bind {
            let bind = ib.inverse();
            assert!((bind.x_axis.truncate().length() - 1.0).abs() < 1e-5, "{bind:?}");
        }
        let (before, after) = (rest_posed(&c), rest_posed(&out));
        for v in [0, 1, 3] {
            assert!(
                before[v].distance(after[v]) < 1e-4,
                "{v}: {} vs {}",
                before[v],
                after[v]
            );
        }
        assert!((out.mesh.positions[3].x - 0.001 / 100.0).abs() < 1e-9);
        // A joint weighting vertices of two parts bound at different scales: left alone.
        let mut shared = c.clone();
        let mut skin = SkinBuilder::new(3, 4).unwrap();
        for row in [&[(0u32, 1.0f32)][..], &[(0, 0.5), (1, 0.5)], &[], &[(2, 0.5), (0, 0.5)]] {
            skin.push_row(row).unwrap();
        }
        shared.skin = Some(skin.finish());
        assert!(bind_scale_matched(&shared, 1.0).is_none());
    }

    #[test]
    fn unskinned_vertices_follow_the_root_and_read_back_unskinned() {
        let c = scaled_bind();
        let path = Path::new("unskinned.fbx");
        let bytes = to_fbx(&c, path).unwrap();
        let (back, warnings) = super::super::from_bytes_with_warnings(&bytes, path).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let skin = back.skin.as_ref().unwrap();
        assert!(skin.influences(2).is_empty(), "{:?}", skin.influences(2));
        assert_eq!(skin.influences(0).len(), 1);
        // In the file it is weighted 1 on the root, and listed.
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains(super::super::UNSKINNED_PROP));
        let scene = ufbx::load_memory(&bytes, ufbx::LoadOpts::default()).unwrap();
        let mesh = &scene.meshes[0];
        let d = &mesh.skin_deformers[0];
        let sv = &d.vertices[2];
        assert_eq!(sv.num_weights, 1);
        let w = &d.weights[sv.weight_begin as usize];
        assert_eq!(w.weight, 1.0);
        assert_eq!(
            d.clusters[w.cluster_index as usize]
                .bone_node
                .as_ref()
                .unwrap()
                .element
                .name,
            "root"
        );
    }

    #[test]
    fn euler_angles_apply_x_first() {
        let q = Quat::from_rotation_z(0.3) * Quat::from_rotation_y(0.2) * Quat::from_rotation_x(0.1);
        let e = euler_degrees(q);
        assert!((e - DVec3::new(0.1f64.to_degrees(), 0.2f64.to_degrees(), 0.3f64.to_degrees())).length() < 1e-3);
    }

    #[test]
    fn euler_curves_do_not_jump_a_whole_turn() {
        let a = Quat::from_rotation_z(179f32.to_radians());
        let b = Quat::from_rotation_z(-179f32.to_radians());
        let e = continuous_euler([a, b].into_iter());
        assert!((e[1].z - 181.0).abs() < 1e-2, "{e:?}");
    }
}
