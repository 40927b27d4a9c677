//! Unit tests on tiny glTF files built in code: every component type and layout the reader
//! must handle, the skeleton rules, and error messages that name the JSON path.

use super::container::{base64_encode, glb};
use super::*;
use glam::{Mat4, Quat, Vec3};
use rigml_core::{ChannelValues, Interpolation, Mesh};
use serde_json::{json, Value};
use std::path::PathBuf;

/// Accumulates a binary buffer with one view per accessor.
#[derive(Default)]
struct Builder {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Builder {
    fn view(&mut self, bytes: &[u8]) -> usize {
        self.bin.resize(self.bin.len().next_multiple_of(4), 0);
        self.views
            .push(json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()}));
        self.bin.extend_from_slice(bytes);
        self.views.len() - 1
    }

    fn accessor(&mut self, bytes: &[u8], component: u32, count: usize, ty: &str, normalized: bool) -> usize {
        let view = self.view(bytes);
        self.accessors.push(json!({
            "bufferView": view, "componentType": component, "count": count, "type": ty, "normalized": normalized
        }));
        self.accessors.len() - 1
    }

    fn f32s(&mut self, data: &[f32], ty: &str) -> usize {
        let width = width(ty);
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.accessor(&bytes, 5126, data.len() / width, ty, false)
    }

    fn u8s(&mut self, data: &[u8], ty: &str, normalized: bool) -> usize {
        self.accessor(data, 5121, data.len() / width(ty), ty, normalized)
    }

    fn u16s(&mut self, data: &[u16], ty: &str, normalized: bool) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.accessor(&bytes, 5123, data.len() / width(ty), ty, normalized)
    }

    /// The document with buffers, views and accessors filled in, as GLB bytes.
    fn glb(&self, mut doc: Value) -> Vec<u8> {
        self.fill(&mut doc, None);
        glb(doc.to_string().as_bytes(), &self.bin)
    }

    fn fill(&self, doc: &mut Value, uri: Option<String>) {
        doc["asset"] = json!({"version": "2.0"});
        let mut buffer = json!({"byteLength": self.bin.len()});
        if let Some(uri) = uri {
            buffer["uri"] = json!(uri);
        }
        doc["buffers"] = json!([buffer]);
        doc["bufferViews"] = json!(self.views);
        doc["accessors"] = json!(self.accessors);
    }
}

fn width(ty: &str) -> usize {
    match ty {
        "SCALAR" => 1,
        "VEC2" => 2,
        "VEC3" => 3,
        "VEC4" => 4,
        _ => 16,
    }
}

fn path() -> PathBuf {
    PathBuf::from("Test.glb")
}

fn read_glb(bytes: &[u8]) -> Character {
    from_bytes(bytes, &path()).unwrap_or_else(|e| panic!("{e}"))
}

fn error(bytes: &[u8]) -> String {
    match from_bytes(bytes, &path()) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

const TRIANGLE: [f32; 9] = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0];

/// Two joints (`hip` → `spine`) and a skinned triangle; `attributes` extends the primitive.
fn skinned(b: &mut Builder, attributes: Value) -> Value {
    let pos = b.f32s(&TRIANGLE, "VEC3");
    let mut attrs = json!({"POSITION": pos});
    for (k, v) in attributes.as_object().unwrap() {
        attrs[k] = v.clone();
    }
    json!({
        "scene": 0,
        "scenes": [{"nodes": [0, 2]}],
        "nodes": [
            {"name": "hip", "children": [1]},
            {"name": "spine", "translation": [0.0, 1.0, 0.0]},
            {"name": "body", "mesh": 0, "skin": 0}
        ],
        "meshes": [{"primitives": [{"attributes": attrs}]}],
        "skins": [{"joints": [0, 1]}]
    })
}

/// [`skinned`] with every vertex weighted fully to `hip`: a file that reads without warnings.
fn weighted(b: &mut Builder) -> Value {
    let joints = b.u8s(&[0; 12], "VEC4", false);
    let weights = b.f32s(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], "VEC4");
    skinned(b, json!({"JOINTS_0": joints, "WEIGHTS_0": weights}))
}

fn weights_of(c: &Character, v: usize) -> Vec<(u32, f32)> {
    c.skin
        .as_ref()
        .unwrap()
        .influences(v)
        .iter()
        .map(|i| (i.joint, i.weight))
        .collect()
}

#[test]
fn normalized_u8_and_u16_weights_are_read() {
    let mut b = Builder::default();
    let joints = b.u8s(&[0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0], "VEC4", false);
    let weights = b.u8s(&[255, 0, 0, 0, 51, 204, 0, 0, 255, 0, 0, 0], "VEC4", true);
    let doc = skinned(&mut b, json!({"JOINTS_0": joints, "WEIGHTS_0": weights}));
    let c = read_glb(&b.glb(doc));
    assert_eq!(weights_of(&c, 0), vec![(0, 1.0)]);
    let w = weights_of(&c, 1);
    assert_eq!(w[0].0, 1);
    assert!((w[0].1 - 0.8).abs() < 1e-6 && (w[1].1 - 0.2).abs() < 1e-6, "{w:?}");

    let mut b = Builder::default();
    let joints = b.u16s(&[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0], "VEC4", false);
    let weights = b.u16s(&[65535, 0, 0, 0, 16384, 49151, 0, 0, 65535, 0, 0, 0], "VEC4", true);
    let doc = skinned(&mut b, json!({"JOINTS_0": joints, "WEIGHTS_0": weights}));
    let c = read_glb(&b.glb(doc));
    assert_eq!(weights_of(&c, 0), vec![(1, 1.0)]);
    let w = weights_of(&c, 1);
    assert!((w[0].1 - 49151.0 / 65535.0).abs() < 1e-5, "{w:?}");
    assert!((w.iter().map(|x| x.1).sum::<f32>() - 1.0).abs() < 1e-6);
}

#[test]
fn sparse_accessors_replace_elements() {
    let mut b = Builder::default();
    let doc_with = |b: &mut Builder, base_view: Option<usize>| {
        let indices = b.view(&[1u8, 0, 0, 0]);
        let values = b.view(
            &[5.0f32, 6.0, 7.0]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect::<Vec<_>>(),
        );
        let mut acc = json!({
            "componentType": 5126, "count": 3, "type": "VEC3",
            "sparse": {"count": 1, "indices": {"bufferView": indices, "componentType": 5121},
                       "values": {"bufferView": values}}
        });
        if let Some(v) = base_view {
            acc["bufferView"] = json!(v);
        }
        b.accessors.push(acc);
        let pos = b.accessors.len() - 1;
        json!({"nodes": [{"mesh": 0}], "meshes": [{"primitives": [{"attributes": {"POSITION": pos}}]}]})
    };
    let base = b.view(&TRIANGLE.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>());
    let doc = doc_with(&mut b, Some(base));
    let c = read_glb(&b.glb(doc));
    assert_eq!(c.mesh.positions, vec![Vec3::ZERO, Vec3::new(5.0, 6.0, 7.0), Vec3::Y]);
    assert_eq!(c.mesh.triangles, vec![[0, 1, 2]], "non-indexed triangles are 0..n");

    let mut b = Builder::default();
    let doc = doc_with(&mut b, None);
    let c = read_glb(&b.glb(doc));
    assert_eq!(c.mesh.positions, vec![Vec3::ZERO, Vec3::new(5.0, 6.0, 7.0), Vec3::ZERO]);
}

#[test]
fn joints_1_gives_more_than_four_influences_and_round_trips() {
    let mut b = Builder::default();
    let j0 = b.u8s(&[0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], "VEC4", false);
    let w0 = b.f32s(&[0.2, 0.2, 0.1, 0.1, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], "VEC4");
    let j1 = b.u8s(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], "VEC4", false);
    let w1 = b.f32s(&[0.4, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], "VEC4");
    let doc = skinned(
        &mut b,
        json!({"JOINTS_0": j0, "WEIGHTS_0": w0, "JOINTS_1": j1, "WEIGHTS_1": w1}),
    );
    let c = read_glb(&b.glb(doc));
    // Duplicated joints merge: joint 0 = 0.2+0.1+0.1, joint 1 = 0.2+0.4.
    let w = weights_of(&c, 0);
    assert_eq!(w.len(), 2);
    assert!((w[0].1 - 0.6).abs() < 1e-6 && w[0].0 == 1, "{w:?}");

    // Five distinct influences need a second set when written.
    let mut skel = c.clone();
    for k in 2..5 {
        skel.skeleton.names.push(format!("extra{k}"));
        skel.skeleton.parents.push(Some(0));
        skel.skeleton.rest_local.push(rigml_core::Transform::IDENTITY);
        skel.skeleton.inverse_bind.push(Mat4::IDENTITY);
    }
    let rows: Vec<Vec<(u32, f32)>> = vec![(0..5).map(|j| (j, 0.2)).collect(), vec![(1, 1.0)], vec![]];
    skel.skin = Some(rigml_core::Skin::from_rows(rows.iter().map(|r| r.as_slice()), 5, 16).unwrap());
    let bytes = to_glb(&skel, &path()).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("JOINTS_1") && text.contains("rigml_unskinned"));
    let back = read_glb(&bytes);
    assert_eq!(back.skin, skel.skin);
    assert_eq!(back.skeleton, skel.skeleton);
}

#[test]
fn joints_listed_children_first_are_sorted_parents_first() {
    let mut b = Builder::default();
    let joints = b.u8s(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0], "VEC4", false);
    let weights = b.f32s(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], "VEC4");
    let mut doc = skinned(&mut b, json!({"JOINTS_0": joints, "WEIGHTS_0": weights}));
    doc["skins"][0]["joints"] = json!([1, 0]); // spine before its parent hip
    let c = read_glb(&b.glb(doc));
    assert_eq!(c.skeleton.names, vec!["hip", "spine"]);
    assert_eq!(c.skeleton.parents, vec![None, Some(0)]);
    assert_eq!(
        weights_of(&c, 0),
        vec![(1, 1.0)],
        "skin joint 0 is spine = skeleton joint 1"
    );
    assert_eq!(weights_of(&c, 1), vec![(0, 1.0)]);
}

#[test]
fn non_joint_ancestors_are_baked_into_the_root_and_its_channels() {
    let mut b = Builder::default();
    let joints = b.u8s(&[0; 12], "VEC4", false);
    let weights = b.f32s(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], "VEC4");
    let mut doc = skinned(&mut b, json!({"JOINTS_0": joints, "WEIGHTS_0": weights}));
    let times = b.f32s(&[0.0, 1.0], "SCALAR");
    let q = Quat::from_rotation_z(0.5);
    let rot = b.f32s(&[0.0, 0.0, 0.0, 1.0, q.x, q.y, q.z, q.w], "VEC4");
    let shift = b.f32s(&[0.0, 0.0, 0.0, 1.0, 2.0, 3.0], "VEC3");
    let armature = Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
    let mut nodes = doc["nodes"].as_array().unwrap().clone();
    nodes.push(
        json!({"name": "Armature", "children": [0], "translation": [1.0, 0.0, 0.0],
                      "rotation": armature.to_array(), "scale": [100.0, 100.0, 100.0]}),
    );
    doc["nodes"] = json!(nodes);
    doc["scenes"] = json!([{"nodes": [3, 2]}]);
    doc["animations"] = json!([{"name": "wave",
        "samplers": [{"input": times, "output": rot}, {"input": times, "output": shift, "interpolation": "STEP"}],
        "channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}},
                     {"sampler": 1, "target": {"node": 0, "path": "translation"}},
                     {"sampler": 0, "target": {"node": 3, "path": "rotation"}}]}]);
    let outcome = from_bytes_with(&b.glb(doc), &path(), ReadOptions::default()).unwrap();
    assert_eq!(
        outcome.warnings,
        vec!["animations[0].channels[2]: animates nodes[3] (Armature), which is not a joint; that motion is dropped"]
    );
    let c = outcome.character;
    let armature_m = Mat4::from_scale_rotation_translation(Vec3::splat(100.0), armature, Vec3::X);
    let world = c.skeleton.rest_world();
    let expect_spine = armature_m * Mat4::from_translation(Vec3::Y);
    assert!(world[1].abs_diff_eq(expect_spine, 1e-4), "{:?}", world[1]);
    assert!(world[0].abs_diff_eq(armature_m, 1e-4));
    // The channel on the non-joint Armature is skipped; the root's channels are re-expressed.
    let clip = &c.clips[0];
    assert_eq!(clip.channels.len(), 2);
    assert_eq!(clip.channels[1].interpolation, Interpolation::Step);
    let pose = clip.sample(&c.skeleton, 1.0);
    let posed = c.skeleton.world_matrices(&pose.local)[0];
    let expect = armature_m * Mat4::from_rotation_translation(q, Vec3::new(1.0, 2.0, 3.0));
    assert!(posed.abs_diff_eq(expect, 1e-3), "{posed:?} vs {expect:?}");
}

#[test]
fn nodes_between_joints_become_joints() {
    let mut b = Builder::default();
    let joints = b.u8s(&[1; 12], "VEC4", false);
    let weights = b.f32s(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], "VEC4");
    let mut doc = skinned(&mut b, json!({"JOINTS_0": joints, "WEIGHTS_0": weights}));
    // hip → twist (not a joint) → spine
    doc["nodes"][0]["children"] = json!([3]);
    let mut nodes = doc["nodes"].as_array().unwrap().clone();
    nodes.push(json!({"name": "twist", "children": [1], "translation": [0.0, 0.0, 2.0]}));
    doc["nodes"] = json!(nodes);
    let c = read_glb(&b.glb(doc));
    assert_eq!(c.skeleton.names, vec!["hip", "twist", "spine"]);
    assert_eq!(c.skeleton.parents, vec![None, Some(0), Some(1)]);
    assert_eq!(weights_of(&c, 0), vec![(2, 1.0)]);
    // twist is in no skin: its bind keeps its rest offset from hip's bind.
    assert!((c.skeleton.bind_positions()[1] - Vec3::new(0.0, 0.0, 2.0)).length() < 1e-6);
}

#[test]
fn strips_and_fans_become_triangles() {
    let mut b = Builder::default();
    let square = [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0];
    let pos = b.f32s(&square, "VEC3");
    let idx = b.u16s(&[0, 1, 2, 3], "SCALAR", false);
    let doc = json!({"nodes": [{"mesh": 0}], "meshes": [{"primitives": [
        {"attributes": {"POSITION": pos}, "indices": idx, "mode": 5},
        {"attributes": {"POSITION": pos}, "mode": 6},
        {"attributes": {"POSITION": pos}, "mode": 1}
    ]}]});
    let out = from_bytes_with(&b.glb(doc), &path(), ReadOptions::default()).unwrap();
    assert_eq!(
        out.warnings,
        vec!["meshes[0].primitives[2]: mode 1 (LINES) with 4 vertices: points and lines are not kept, left out"]
    );
    let c = out.character;
    assert_eq!(c.mesh.vertex_count(), 8, "the lines' vertices are left out");
    assert_eq!(c.mesh.triangles, vec![[0, 1, 2], [2, 1, 3], [5, 6, 4], [6, 7, 4]]);
    assert_eq!(c.mesh.parts.len(), 2);
    assert!(c.skin.is_none());
    let back = read_glb(&to_glb(&c, &path()).unwrap());
    assert_eq!(back.mesh.positions, c.mesh.positions);
    assert_eq!(back.mesh.triangles, c.mesh.triangles);
}

#[test]
fn points_and_lines_are_left_out_but_rigml_loose_vertices_round_trip() {
    let mut b = Builder::default();
    let pos = b.f32s(&TRIANGLE, "VEC3");
    let idx = b.u16s(&[0, 1, 1, 2], "SCALAR", false);
    let prims: Vec<Value> = (0..4)
        .map(|mode| json!({"attributes": {"POSITION": pos}, "mode": mode, "indices": idx}))
        .chain([json!({"attributes": {"POSITION": pos}})])
        .collect();
    // Two nodes share the mesh: each primitive is still named once.
    let doc = json!({"nodes": [{"mesh": 0}, {"mesh": 0}], "meshes": [{"primitives": prims}]});
    let out = from_bytes_with(&b.glb(doc), &path(), ReadOptions::default()).unwrap();
    let names = ["POINTS", "LINES", "LINE_LOOP", "LINE_STRIP"];
    let expect: Vec<String> = (0..4)
        .map(|m| {
            format!(
                "meshes[0].primitives[{m}]: mode {m} ({}) with 3 vertices: points and lines are not kept, left out",
                names[m]
            )
        })
        .collect();
    assert_eq!(out.warnings, expect);
    assert_eq!(out.character.mesh.vertex_count(), 6, "the triangle, once per node");

    // rigml writes a part without triangles as POINTS marked in `extras`; it reads back.
    let mut c = out.character;
    let loose = Mesh {
        positions: vec![Vec3::ZERO, Vec3::ONE],
        ..Mesh::default()
    };
    c.mesh.append(&loose, "loose");
    let bytes = to_glb(&c, &path()).unwrap();
    assert!(String::from_utf8_lossy(&bytes).contains("\"rigml_loose_vertices\":true"));
    let back = from_bytes_with(&bytes, &path(), ReadOptions::default()).unwrap();
    assert!(back.warnings.is_empty(), "{:?}", back.warnings);
    assert_eq!(back.character.mesh.positions, c.mesh.positions);
    assert_eq!(back.character.mesh.parts.last().map(|p| p.name.as_str()), Some("loose"));
}

/// Two skinned triangles, skin 1 bound in a space shifted by `offset` for joint 0 and by
/// `offset1` for joint 1.
fn two_skins(offset: Vec3, offset1: Vec3) -> Vec<u8> {
    let mut b = Builder::default();
    let joints = b.u8s(&[0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0], "VEC4", false);
    let weights = b.f32s(&[0.5, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0], "VEC4");
    let mut doc = skinned(&mut b, json!({"JOINTS_0": joints, "WEIGHTS_0": weights}));
    let ibm0: Vec<f32> = [Mat4::IDENTITY, Mat4::from_translation(-Vec3::Y)]
        .iter()
        .flat_map(|m| m.to_cols_array())
        .collect();
    let ibm1: Vec<f32> = [
        Mat4::from_translation(offset),
        Mat4::from_translation(-Vec3::Y + offset1),
    ]
    .iter()
    .flat_map(|m| m.to_cols_array())
    .collect();
    let (a0, a1) = (b.f32s(&ibm0, "MAT4"), b.f32s(&ibm1, "MAT4"));
    doc["skins"] =
        json!([{"joints": [0, 1], "inverseBindMatrices": a0}, {"joints": [0, 1], "inverseBindMatrices": a1}]);
    let mut nodes = doc["nodes"].as_array().unwrap().clone();
    nodes.push(json!({"name": "hat", "mesh": 0, "skin": 1}));
    doc["nodes"] = json!(nodes);
    doc["scenes"] = json!([{"nodes": [0, 2, 3]}]);
    b.glb(doc)
}

#[test]
fn skins_bound_in_another_space_are_moved_into_the_first() {
    let shift = Vec3::new(0.0, 0.0, 0.25);
    let out = from_bytes_with(&two_skins(shift, shift), &path(), ReadOptions::default()).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let c = out.character;
    assert_eq!(c.skeleton.joint_count(), 2);
    assert_eq!(c.mesh.parts.len(), 2);
    // Skin 1's vertices move by the ratio of the binds (here a translation by `shift`), so
    // that LBS with the common inverse binds deforms them as the file's own skin did.
    assert_eq!(c.mesh.positions[0], Vec3::ZERO);
    assert!((c.mesh.positions[3] - shift).length() < 1e-6);
}

/// Where the file's own skins put each vertex of the two-skin file in `pose`: LBS with the
/// skin's inverse bind matrices (skin 0 for vertices 0..3, skin 1 for 3..6).
fn deformed_by_own_skins(c: &Character, pose: &rigml_core::Pose, offset: Vec3, offset1: Vec3) -> Vec<Vec3> {
    let world = pose.world_matrices(&c.skeleton).unwrap();
    let ibm = [
        [Mat4::IDENTITY, Mat4::from_translation(-Vec3::Y)],
        [
            Mat4::from_translation(offset),
            Mat4::from_translation(-Vec3::Y + offset1),
        ],
    ];
    let rows: [&[(usize, f32)]; 3] = [&[(0, 0.5), (1, 0.5)], &[(0, 1.0)], &[(1, 1.0)]];
    (0..6)
        .map(|v| {
            let p = Vec3::from_slice(&TRIANGLE[3 * (v % 3)..3 * (v % 3) + 3]);
            rows[v % 3]
                .iter()
                .map(|&(j, w)| (world[j] * ibm[v / 3][j]).transform_point3(p) * w)
                .sum()
        })
        .collect()
}

#[test]
fn skins_binding_shared_joints_differently_are_re_bound_with_a_warning() {
    // Skin 1 binds joint 0 shifted by `a` but joint 1 by `b`: no single matrix moves its
    // vertices into skin 0's space. The file loads; skin 0's binding is kept.
    let (a, b) = (Vec3::new(0.0, 0.0, 0.25), Vec3::new(0.5, 0.0, 0.0));
    let out = from_bytes_with(&two_skins(a, b), &path(), ReadOptions::default()).unwrap();
    assert_eq!(
        out.warnings,
        vec![
            "skins[1].inverseBindMatrices: joints[1] (spine) is bound in different spaces from skins[0], which \
             lists it first; skins[0]'s binding is kept and skins[1]'s vertices are re-bound to it",
            "meshes[0].primitives[0]: 1 of 3 vertices blend joints that skins[1] binds in different spaces; \
             re-bound to the kept binding, they follow skins[1] exactly at its bind pose and closely, not \
             exactly, when posed"
        ]
    );
    let c = out.character;
    assert_eq!(c.skeleton.joint_count(), 2);
    assert_eq!(
        c.skeleton.inverse_bind[1],
        Mat4::from_translation(-Vec3::Y),
        "skin 0's bind is kept"
    );
    let skin = c.skin.as_ref().unwrap();
    let check = |pose: &rigml_core::Pose, exact: &[usize]| {
        let got = rigml_core::lbs(
            &c.mesh.positions,
            skin,
            &rigml_core::skinning_matrices(&c.skeleton, pose).unwrap(),
        );
        let want = deformed_by_own_skins(&c, pose, a, b);
        for &v in exact {
            assert!(
                (got[v] - want[v]).length() < 1e-5,
                "vertex {v}: {} vs {}",
                got[v],
                want[v]
            );
        }
    };
    // Every vertex weighted to one joint deforms exactly as its own skin says, in any pose.
    let mut pose = rigml_core::Pose::rest(&c.skeleton);
    pose.local[0].rotation = Quat::from_rotation_z(0.7);
    pose.local[1].rotation = Quat::from_rotation_x(-1.1);
    pose.local[1].translation += Vec3::new(0.3, 0.0, 0.1);
    check(&pose, &[0, 1, 2, 4, 5]);
    // The blended vertex of skin 1 (vertex 3) matches where skin 0's bind pose is its rest.
    check(&rigml_core::Pose::bind(&c.skeleton), &[0, 1, 2, 3, 4, 5]);
}

#[test]
fn two_skins_without_a_mesh_keep_the_first_binding() {
    // magnum's skin.gltf: skins[0] binds nodes 1 and 2 at identity, skins[1] binds them (and
    // node 0) elsewhere, and no mesh uses either.
    let mut b = Builder::default();
    let ibm: Vec<f32> = [Vec3::X, Vec3::Y, Vec3::Z]
        .iter()
        .flat_map(|t| Mat4::from_translation(*t).to_cols_array())
        .collect();
    let ibm = b.f32s(&ibm, "MAT4");
    let doc = json!({
        "nodes": [{}, {}, {}],
        "skins": [{"joints": [1, 2]}, {"joints": [0, 2, 1], "inverseBindMatrices": ibm}]
    });
    let out = from_bytes_with(&b.glb(doc), &path(), ReadOptions::default()).unwrap();
    assert_eq!(out.warnings.len(), 1, "{:?}", out.warnings);
    assert!(
        out.warnings[0].starts_with("skins[1].inverseBindMatrices: joints[2] (node1) is bound in different spaces"),
        "{:?}",
        out.warnings
    );
    let c = out.character;
    assert_eq!(c.skeleton.joint_count(), 3);
    assert!(c.mesh.is_empty());
}

#[test]
fn errors_name_the_file_and_the_json_path() {
    let mut b = Builder::default();
    let joints = b.u8s(&[0; 12], "VEC4", false);
    let weights = b.f32s(&[1.0; 12], "VEC4");
    let doc = skinned(&mut b, json!({"JOINTS_0": joints, "WEIGHTS_0": weights}));

    let mut bad = doc.clone();
    bad["skins"][0]["joints"] = json!([0, 41]);
    assert_eq!(
        error(&b.glb(bad)),
        "Test.glb: skins[0].joints[1]: node 41 does not exist"
    );

    let mut bad = doc.clone();
    bad["meshes"][0]["primitives"][0]["indices"] = json!(joints);
    let err = error(&b.glb(bad));
    assert!(err.contains("meshes[0].primitives[0].indices"), "{err}");

    let mut bad = doc.clone();
    bad["meshes"][0]["primitives"][0]["attributes"]["NORMAL"] = json!(99);
    let err = error(&b.glb(bad));
    assert!(
        err.contains("meshes[0].primitives[0].attributes.NORMAL: accessor 99 does not exist"),
        "{err}"
    );

    let mut bad_b = Builder::default();
    let doc2 = skinned(&mut bad_b, json!({}));
    bad_b.accessors[0]["count"] = json!(1000);
    let err = error(&bad_b.glb(doc2));
    assert!(
        err.contains("accessors[0] (meshes[0].primitives[0].attributes.POSITION)") && err.contains("do not fit"),
        "{err}"
    );

    let mut bad = doc.clone();
    bad["nodes"][1]["children"] = json!([0]);
    let err = error(&b.glb(bad));
    assert!(
        err.contains("nodes[1].children[0]: node 0 is already a child") || err.contains("cycle"),
        "{err}"
    );

    let good = b.glb(doc);
    let err = error(&good[..good.len() - 8]);
    assert!(err.starts_with("Test.glb: GLB") && err.contains("truncated"), "{err}");
    assert!(error(b"{\"asset\": ").starts_with("Test.glb: JSON: "));
    assert!(error(b"{}").contains("asset: missing"));
}

#[test]
fn nan_weights_are_refused_or_repaired_with_a_warning() {
    let mut b = Builder::default();
    let joints = b.u8s(&[0; 12], "VEC4", false);
    let weights = b.f32s(
        &[
            1.0,
            0.0,
            0.0,
            0.0,
            f32::NAN,
            f32::NAN,
            f32::NAN,
            f32::NAN,
            1.0,
            0.0,
            0.0,
            0.0,
        ],
        "VEC4",
    );
    let doc = skinned(&mut b, json!({"JOINTS_0": joints, "WEIGHTS_0": weights}));
    let bytes = b.glb(doc);
    let err = error(&bytes);
    assert!(
        err.contains("meshes[0].primitives[0].attributes.WEIGHTS_0[1]: weight is NaN"),
        "{err}"
    );
    let outcome = from_bytes_with(&bytes, &path(), ReadOptions { repair: true }).unwrap();
    assert_eq!(outcome.warnings.len(), 1);
    let skin = outcome.character.skin.as_ref().unwrap();
    assert!(skin.influences(1).is_empty());
    assert_eq!(skin.unskinned_count(), 1);
}

#[test]
fn gltf_json_with_data_uri_and_external_bin() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = Builder::default();
    let mut doc = skinned(&mut b, json!({}));
    b.fill(
        &mut doc,
        Some(format!(
            "data:application/octet-stream;base64,{}",
            base64_encode(&b.bin)
        )),
    );
    let gltf_path = dir.path().join("embedded.gltf");
    let c = from_bytes(doc.to_string().as_bytes(), &gltf_path).unwrap();
    assert_eq!(c.mesh.positions[1], Vec3::X);

    b.fill(&mut doc, Some("my%20data.bin".into()));
    std::fs::write(dir.path().join("my data.bin"), &b.bin).unwrap();
    let file = dir.path().join("external.gltf");
    std::fs::write(&file, doc.to_string()).unwrap();
    assert_eq!(read(&file).unwrap().mesh.positions, c.mesh.positions);

    b.fill(&mut doc, Some("missing.bin".into()));
    let err = from_bytes(doc.to_string().as_bytes(), &file).unwrap_err().to_string();
    assert!(err.contains("buffers[0].uri: cannot read"), "{err}");
}

#[test]
fn write_gltf_writes_json_and_bin_and_refuses_to_clobber() {
    let mut b = Builder::default();
    let joints = b.u8s(&[0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0], "VEC4", false);
    let weights = b.f32s(&[0.7, 0.3, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], "VEC4");
    let doc = skinned(&mut b, json!({"JOINTS_0": joints, "WEIGHTS_0": weights}));
    let c = read_glb(&b.glb(doc));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out file.gltf");
    write_gltf(&c, &file, false).unwrap();
    assert!(dir.path().join("out file.bin").exists());
    assert!(matches!(write_gltf(&c, &file, false), Err(IoError::Exists { .. })));
    write_gltf(&c, &file, true).unwrap();
    let back = read(&file).unwrap();
    assert_eq!(back.mesh, c.mesh);
    assert_eq!(back.skeleton, c.skeleton);
    assert_eq!(back.skin, c.skin);
}

#[test]
fn plain_meshes_and_bare_skeletons_round_trip() {
    let mut b = Builder::default();
    let doc = skinned(&mut b, json!({}));
    let c = read_glb(&b.glb(doc));
    assert!(
        c.skin.is_some(),
        "a skinned node without JOINTS_0 is skinned but unweighted"
    );

    let mut plain = c.clone();
    plain.skeleton = Default::default();
    plain.skin = None;
    let back = read_glb(&to_glb(&plain, &path()).unwrap());
    assert_eq!(back.mesh, plain.mesh);
    assert!(back.skeleton.is_empty() && back.skin.is_none());

    let mut bare = c.clone();
    bare.mesh = Default::default();
    bare.skin = None;
    bare.clips = vec![rigml_core::Clip {
        name: "nod".into(),
        channels: vec![rigml_core::Channel {
            joint: 1,
            interpolation: Interpolation::CubicSpline,
            times: vec![0.0, 0.5],
            values: ChannelValues::Scale(vec![Vec3::ZERO, Vec3::ONE, Vec3::X, Vec3::Y, Vec3::ONE * 2.0, Vec3::Z]),
        }],
    }];
    let back = read_glb(&to_glb(&bare, &path()).unwrap());
    assert_eq!(back.skeleton, bare.skeleton);
    assert_eq!(back.clips, bare.clips);
    assert!(back.mesh.is_empty());
}

#[test]
fn damaged_files_never_panic() {
    let mut b = Builder::default();
    let joints = b.u8s(&[0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0], "VEC4", false);
    let weights = b.u16s(&[65535, 0, 0, 0, 30000, 35535, 0, 0, 65535, 0, 0, 0], "VEC4", true);
    let mut doc = skinned(&mut b, json!({"JOINTS_0": joints, "WEIGHTS_0": weights}));
    // A textured material and a prop hanging from the second joint, so that damage reaches
    // the material, image and attachment readers too.
    let image = b.view(PNG);
    doc["meshes"][0]["primitives"][0]["material"] = json!(0);
    doc["materials"] = json!([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}]);
    doc["textures"] = json!([{"source": 0, "sampler": 0}]);
    doc["samplers"] = json!([{"wrapS": 33071}]);
    doc["images"] = json!([{"bufferView": image, "mimeType": "image/png"}]);
    let prop = doc["meshes"][0].clone();
    doc["meshes"].as_array_mut().unwrap().push(prop);
    doc["nodes"][1]["children"] = json!([3]);
    let prop = json!({"name": "prop", "mesh": 1, "translation": [0.0, 0.5, 0.0]});
    doc["nodes"].as_array_mut().unwrap().push(prop);
    let good = b.glb(doc);
    let c = read_glb(&good);
    assert_eq!(
        (c.attachments.len(), c.mesh.images.len()),
        (1, 1),
        "the undamaged file has both"
    );
    for len in 0..good.len() {
        let _ = from_bytes(&good[..len], &path());
    }
    let mut state = 0x2545_f491_u32;
    for _ in 0..3000 {
        let mut bytes = good.clone();
        for _ in 0..3 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let at = state as usize % bytes.len();
            bytes[at] = (state >> 8) as u8;
        }
        let _ = from_bytes(&bytes, &path());
    }
}

#[test]
fn one_accessor_shared_by_many_nodes_cannot_exhaust_memory() {
    // 40 nodes × 3M zero-filled components from ~2 kB of JSON: refused, not allocated.
    let nodes: Vec<Value> = (0..40).map(|_| json!({"mesh": 0})).collect();
    let doc = json!({
        "asset": {"version": "2.0"},
        "nodes": nodes,
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "mode": 0}]}],
        "accessors": [{"componentType": 5126, "count": 1_000_000, "type": "VEC3"}]
    });
    let err = error(doc.to_string().as_bytes());
    assert!(err.contains("decoding would exceed"), "{err}");
}

#[test]
fn joint_matrices_are_decomposed_and_shear_is_refused() {
    let mut b = Builder::default();
    let mut doc = skinned(&mut b, json!({}));
    let m = Mat4::from_scale_rotation_translation(Vec3::splat(2.0), Quat::from_rotation_y(0.3), Vec3::X);
    doc["nodes"][1]["matrix"] = json!(m.to_cols_array());
    doc["nodes"][1].as_object_mut().unwrap().remove("translation");
    let c = read_glb(&b.glb(doc.clone()));
    assert!(c.skeleton.rest_local[1].to_mat4().abs_diff_eq(m, 1e-5));

    let mut sheared = Mat4::IDENTITY.to_cols_array();
    sheared[4] = 0.5; // x depends on y
    doc["nodes"][1]["matrix"] = json!(sheared);
    let err = error(&b.glb(doc));
    assert!(err.contains("nodes[1].matrix: transform has shear"), "{err}");
}

/// A one-pixel PNG's first bytes (the signature is what the reader checks).
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

/// The skinned triangle with `materials` (and a PNG image in the buffer, texture 0) in the
/// document and `material` on its primitive.
fn with_materials(materials: Value, material: Value) -> Result<ReadOutcome, IoError> {
    let mut b = Builder::default();
    let mut doc = weighted(&mut b);
    let image = b.view(PNG);
    doc["meshes"][0]["primitives"][0]["material"] = material;
    doc["materials"] = materials;
    doc["images"] = json!([{"bufferView": image, "mimeType": "image/png"}, {"uri": "missing.png"}]);
    doc["samplers"] = json!([{"magFilter": 9728, "wrapS": 33071}]);
    doc["textures"] = json!([{"source": 0, "sampler": 0}, {"source": 1}]);
    from_bytes_with(&b.glb(doc), &path(), ReadOptions::default())
}

#[test]
fn materials_textures_and_images_are_read_and_written_back() {
    let materials = json!([
        {"name": "skin", "pbrMetallicRoughness": {"baseColorFactor": [1, 0.5, 0.25, 1],
            "baseColorTexture": {"index": 0}, "metallicFactor": 0, "roughnessFactor": 0.7},
         "normalTexture": {"index": 0, "scale": 0.5}, "alphaMode": "MASK", "alphaCutoff": 0.3,
         "doubleSided": true, "emissiveFactor": [0.1, 0, 0]},
        {"name": "visor", "extensions": {"KHR_materials_unlit": {}}, "alphaMode": "BLEND"}
    ]);
    let out = with_materials(materials, json!(0)).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let mesh = &out.character.mesh;
    assert_eq!(mesh.parts[0].material, Some(0));
    assert_eq!(mesh.images.len(), 1, "only the image a material uses is kept");
    assert_eq!(mesh.images[0].bytes, PNG);
    assert_eq!(mesh.images[0].mime_type, "image/png");
    let skin = &mesh.materials[0];
    assert_eq!(skin.name, "skin");
    assert_eq!(skin.base_color, [1.0, 0.5, 0.25, 1.0]);
    assert_eq!((skin.metallic, skin.roughness), (0.0, 0.7));
    let slot = skin.base_color_texture.unwrap();
    assert_eq!(
        (slot.image, slot.sampler.mag_filter, slot.sampler.wrap_s),
        (0, Some(9728), 33071)
    );
    assert_eq!(skin.normal_texture.unwrap().scale, 0.5);
    assert_eq!(skin.alpha, rigml_core::AlphaMode::Mask(0.3));
    assert!(skin.double_sided && !skin.unlit);
    assert_eq!(skin.emissive, [0.1, 0.0, 0.0]);
    let visor = &mesh.materials[1];
    assert!(visor.unlit && visor.alpha == rigml_core::AlphaMode::Blend);
    assert_eq!(
        *visor,
        rigml_core::Material {
            name: "visor".into(),
            unlit: true,
            alpha: rigml_core::AlphaMode::Blend,
            ..Default::default()
        }
    );

    let back = read_glb(&to_glb(&out.character, &path()).unwrap());
    assert_eq!(back.mesh, out.character.mesh);
}

#[test]
fn an_image_that_cannot_be_loaded_drops_its_texture_with_a_warning() {
    let materials = json!([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 1}, "baseColorFactor": [0, 1, 0, 1]}},
                           {"emissiveTexture": {"index": 0, "texCoord": 1}}]);
    let out = with_materials(materials, json!(0)).unwrap();
    let m = &out.character.mesh.materials;
    assert_eq!(m[0].base_color_texture, None);
    assert_eq!(m[0].base_color, [0.0, 1.0, 0.0, 1.0], "the colour stays");
    assert_eq!(m[1].emissive_texture, None);
    assert_eq!(out.warnings.len(), 2, "{:?}", out.warnings);
    assert!(
        out.warnings[0].contains("images[1].uri") && out.warnings[0].contains("missing.png"),
        "{:?}",
        out.warnings
    );
    assert!(out.warnings[1].contains("TEXCOORD_1"), "{:?}", out.warnings);
}

#[test]
fn broken_material_references_are_errors_naming_the_path() {
    let e = with_materials(json!([{}]), json!(3)).unwrap_err().to_string();
    assert!(
        e.contains("meshes[0].primitives[0].material: material 3 does not exist (1 materials)"),
        "{e}"
    );
    let e = with_materials(json!([{"alphaMode": "SHINY"}]), json!(0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("materials[0].alphaMode"), "{e}");
    let e = with_materials(json!([{"pbrMetallicRoughness": {"metallicFactor": "x"}}]), json!(0))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("materials[0].pbrMetallicRoughness.metallicFactor: expected a number"),
        "{e}"
    );
    let mut b = Builder::default();
    let mut doc = skinned(&mut b, json!({}));
    doc["materials"] = json!([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}]);
    doc["textures"] = json!([{"source": 0, "sampler": 0}]);
    doc["samplers"] = json!([{"wrapS": 12345}]);
    doc["images"] = json!([{"uri": "missing.png"}]);
    let e = error(&b.glb(doc));
    assert!(e.contains("samplers[0].wrapS: 12345 is not one of"), "{e}");
    let e = with_materials(json!([{"normalTexture": {"index": 9}}]), json!(0))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("materials[0].normalTexture") && e.contains("texture 9"),
        "{e}"
    );
}

#[test]
fn material_factors_out_of_range_are_clamped_with_a_warning() {
    let materials = json!([
        {"pbrMetallicRoughness": {"baseColorFactor": [0.7, 0.8, 0.9, 1.1], "metallicFactor": 2}},
        {"emissiveFactor": [-0.5, 0, 3], "alphaMode": "MASK", "alphaCutoff": -1,
         "occlusionTexture": {"index": 0, "strength": 1.5}}
    ]);
    let out = with_materials(materials, json!(0)).unwrap();
    assert_eq!(
        out.warnings,
        vec![
            "materials[0].pbrMetallicRoughness.baseColorFactor: 1.1 is outside 0..=1; clamped",
            "materials[0].pbrMetallicRoughness.metallicFactor: 2 is outside 0..=1; clamped",
            "materials[1].occlusionTexture.strength: 1.5 is outside 0..=1; clamped",
            "materials[1].emissiveFactor: -0.5, 3 are outside 0..=1; clamped",
            "materials[1].alphaCutoff: -1 is negative; clamped to 0",
        ]
    );
    let m = &out.character.mesh.materials;
    assert_eq!(m[0].base_color, [0.7, 0.8, 0.9, 1.0]);
    assert_eq!(m[0].metallic, 1.0);
    assert_eq!(m[1].emissive, [0.0, 0.0, 1.0]);
    assert_eq!(m[1].alpha, rigml_core::AlphaMode::Mask(0.0));
    assert_eq!(m[1].occlusion_texture.unwrap().scale, 1.0);
}

#[test]
fn texture_transforms_and_unsupported_required_extensions_are_named() {
    let transform = |t: Value| json!({"index": 0, "extensions": {"KHR_texture_transform": t}});
    let materials = json!([
        {"pbrMetallicRoughness": {"baseColorTexture": transform(json!({"offset": [0.5, 0]})),
                                  "metallicRoughnessTexture": transform(json!({}))}},
        {"normalTexture": transform(json!({"rotation": 0.3, "scale": [1, 1]})),
         "emissiveTexture": transform(json!({"offset": [0, 0], "scale": [1, 1], "texCoord": 1}))}
    ]);
    let out = with_materials(materials, json!(0)).unwrap();
    // The identity transform loses nothing; the one naming TEXCOORD_1 leaves its texture out.
    assert_eq!(
        out.warnings,
        vec![
            "materials[1].emissiveTexture: uses TEXCOORD_1; rigml keeps only TEXCOORD_0, so the texture was left out",
            "materials: 2 texture reference(s) carry KHR_texture_transform; its offset, rotation and scale are \
             not kept, so those textures are drawn untransformed",
        ]
    );
    let m = &out.character.mesh.materials;
    assert!(m[0].base_color_texture.is_some() && m[1].normal_texture.is_some());

    let mut b = Builder::default();
    let mut doc = weighted(&mut b);
    doc["extensionsRequired"] = json!([
        "KHR_materials_unlit",
        "KHR_texture_transform",
        "EXT_lights_image_based",
        "KHR_materials_pbrSpecularGlossiness"
    ]);
    let out = from_bytes_with(&b.glb(doc.clone()), &path(), ReadOptions::default()).unwrap();
    assert_eq!(
        out.warnings,
        vec![
            "extensionsRequired: EXT_lights_image_based, KHR_materials_pbrSpecularGlossiness are not supported; \
             what they carry is dropped"
        ]
    );
    doc["extensionsRequired"] = json!(["KHR_mesh_quantization", "KHR_draco_mesh_compression"]);
    let e = error(&b.glb(doc));
    assert!(
        e.contains("extensionsRequired[1]: KHR_draco_mesh_compression is not supported"),
        "{e}"
    );
}

#[test]
fn animations_that_drive_no_joint_are_left_out_with_a_warning() {
    let mut b = Builder::default();
    let mut doc = weighted(&mut b);
    let times = b.f32s(&[0.0, 1.0], "SCALAR");
    let shift = b.f32s(&[0.0, 0.0, 0.0, 1.0, 2.0, 3.0], "VEC3");
    let weights = b.f32s(&[0.0, 1.0], "SCALAR");
    let sampler = |output: usize| json!({"input": times, "output": output});
    doc["animations"] = json!([
        {"name": "walk", "samplers": [sampler(shift)],
         "channels": [{"sampler": 0, "target": {"node": 1, "path": "translation"}}]},
        {"name": "mesh only", "samplers": [sampler(shift), sampler(weights)],
         "channels": [{"sampler": 0, "target": {"node": 2, "path": "translation"}},
                      {"sampler": 1, "target": {"node": 2, "path": "weights"}},
                      {"sampler": 1, "target": {"path": "pointer",
                       "extensions": {"KHR_animation_pointer": {"pointer": "/materials/0/alphaCutoff"}}}}]},
        {"samplers": [], "channels": []}
    ]);
    let out = from_bytes_with(&b.glb(doc), &path(), ReadOptions::default()).unwrap();
    assert_eq!(
        out.warnings,
        vec![
            "animations[1] (mesh only): drives no joint (3 channel(s) on other nodes, morph weights or pointers): left out",
            "animations[2] (animation2): drives no joint (0 channel(s) on other nodes, morph weights or pointers): left out",
        ]
    );
    let c = out.character;
    assert_eq!(c.clips.len(), 1);
    assert_eq!(c.clips[0].name, "walk");
    let written = to_glb(&c, &path()).unwrap();
    assert_eq!(read_glb(&written).clips, c.clips, "every clip reported is written");
}

#[test]
fn a_skinned_node_whose_mesh_has_no_weights_is_named() {
    let mut b = Builder::default();
    let doc = skinned(&mut b, json!({}));
    let out = from_bytes_with(&b.glb(doc), &path(), ReadOptions::default()).unwrap();
    assert_eq!(
        out.warnings,
        vec![
            "meshes[0].primitives[0]: nodes[2] binds it with skins[0] but it has no JOINTS_0/WEIGHTS_0; the skin is \
             ignored for it and its 3 vertices carry no weight"
        ]
    );
    assert_eq!(out.character.skin.as_ref().unwrap().unskinned_count(), 3);
}

#[test]
fn min_version_past_2_0_is_refused() {
    let doc = |asset: Value| json!({"asset": asset}).to_string();
    let e = error(doc(json!({"version": "2.1", "minVersion": "2.1"})).as_bytes());
    assert_eq!(e, "Test.glb: asset.minVersion: \"2.1\" (only glTF 2.0 is read)");
    let e = error(doc(json!({"version": "2.0", "minVersion": "two"})).as_bytes());
    assert!(e.contains("asset.minVersion: \"two\" is not MAJOR.MINOR"), "{e}");
    // A later 2.x file without minVersion is meant to be readable by a 2.0 reader.
    for asset in [
        json!({"version": "2.1"}),
        json!({"version": "2.0", "minVersion": "2.0"}),
    ] {
        let c = from_bytes(doc(asset).as_bytes(), &path()).unwrap();
        assert!(c.mesh.is_empty());
    }
}

#[test]
fn integers_written_as_floats_are_read() {
    let mut b = Builder::default();
    let joints = b.u8s(&[0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0], "VEC4", false);
    let weights = b.f32s(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], "VEC4");
    let doc = skinned(&mut b, json!({"JOINTS_0": joints, "WEIGHTS_0": weights}));
    let plain = read_glb(&b.glb(doc.clone()));
    // Every integer of the document as a float (`1.0`, `1e0`): the same character.
    let text = b.glb(doc.clone());
    let json_len = u32::from_le_bytes([text[12], text[13], text[14], text[15]]) as usize;
    let json_text = String::from_utf8_lossy(&text[20..20 + json_len]).trim_end().to_string();
    let value: Value = serde_json::from_str(&json_text).unwrap();
    fn floats(v: &Value) -> String {
        match v {
            Value::Number(n) if n.is_u64() => format!("{}e0", n),
            Value::Array(a) => format!("[{}]", a.iter().map(floats).collect::<Vec<_>>().join(",")),
            Value::Object(o) => format!(
                "{{{}}}",
                o.iter()
                    .map(|(k, v)| format!("{k:?}:{}", floats(v)))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            other => other.to_string(),
        }
    }
    let float_text = floats(&value);
    assert!(float_text.contains("\"count\":3e0"), "{float_text}");
    let c = read_glb(&glb(float_text.as_bytes(), &b.bin));
    assert_eq!(c, plain);

    // Fractions and numbers past what an index can be are still refused.
    let mut bad = doc.clone();
    bad["nodes"][2]["mesh"] = json!(0.5);
    assert!(error(&b.glb(bad)).contains("nodes[2].mesh: expected a non-negative integer, found 0.5"));
    b.views[0]["byteLength"] = json!(1e300);
    let e = error(&b.glb(doc));
    assert!(
        e.contains("bufferViews[0].byteLength: expected a non-negative integer, found 1e+300"),
        "{e}"
    );
}

#[test]
fn an_empty_character_is_written_without_an_empty_scene_node_list() {
    let bytes = to_glb(&Character::default(), &path()).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains("\"nodes\""), "{text}");
    assert!(text.contains("\"scenes\":[{\"name\":\"\"}]"), "{text}");
    assert!(read_glb(&bytes).mesh.is_empty());
}

#[test]
fn clips_starting_before_zero_are_written_from_zero() {
    let mut b = Builder::default();
    let doc = skinned(&mut b, json!({}));
    let mut c = read_glb(&b.glb(doc));
    let channel = |times: Vec<f32>| rigml_core::Channel {
        joint: 1,
        interpolation: Interpolation::Linear,
        times: times.clone(),
        values: ChannelValues::Translation(times.iter().map(|&t| Vec3::splat(t)).collect()),
    };
    c.clips = vec![
        rigml_core::Clip {
            name: "early".into(),
            channels: vec![channel(vec![-0.5, 0.0, 1.0]), channel(vec![-0.25, 2.0])],
        },
        rigml_core::Clip {
            name: "late".into(),
            channels: vec![channel(vec![0.5, 1.0])],
        },
    ];
    assert_eq!(clip_start_shift(&c.clips[0]), Some(0.5));
    assert_eq!(clip_start_shift(&c.clips[1]), None);
    assert_eq!(clip_start_shift(&rigml_core::Clip::default()), None);
    let back = read_glb(&to_glb(&c, &path()).unwrap());
    assert_eq!(back.clips[0].channels[0].times, vec![0.0, 0.5, 1.5]);
    assert_eq!(back.clips[0].channels[1].times, vec![0.25, 2.5]);
    assert_eq!(back.clips[0].channels[0].values, c.clips[0].channels[0].values);
    assert_eq!(
        back.clips[1], c.clips[1],
        "a clip starting at or after 0 is written as it is"
    );
}
