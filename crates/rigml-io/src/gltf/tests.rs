//! Unit tests on tiny glTF files built in code: every component type and layout the reader
//! must handle, the skeleton rules, and error messages that name the JSON path.

use super::container::{base64_encode, glb};
use super::*;
use glam::{Mat4, Quat, Vec3};
use rigml_core::{ChannelValues, Interpolation};
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
    let c = read_glb(&b.glb(doc));
    assert_eq!(c.mesh.vertex_count(), 12);
    assert_eq!(c.mesh.triangles, vec![[0, 1, 2], [2, 1, 3], [5, 6, 4], [6, 7, 4]]);
    assert_eq!(c.mesh.parts.len(), 3);
    assert_eq!(
        c.mesh.parts[2].triangles,
        4..4,
        "lines keep their vertices, no triangles"
    );
    assert!(c.skin.is_none());
    let back = read_glb(&to_glb(&c, &path()).unwrap());
    assert_eq!(back.mesh.positions, c.mesh.positions);
    assert_eq!(back.mesh.triangles, c.mesh.triangles);
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
    let c = read_glb(&two_skins(shift, shift));
    assert_eq!(c.skeleton.joint_count(), 2);
    assert_eq!(c.mesh.parts.len(), 2);
    // Skin 1's vertices move by the ratio of the binds (here a translation by `shift`), so
    // that LBS with the common inverse binds deforms them as the file's own skin did.
    assert_eq!(c.mesh.positions[0], Vec3::ZERO);
    assert!((c.mesh.positions[3] - shift).length() < 1e-6);
    let err = error(&two_skins(shift, Vec3::ZERO));
    assert!(
        err.contains("skins[1].inverseBindMatrices") && err.contains("different spaces"),
        "{err}"
    );
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
    let mut doc = skinned(&mut b, json!({}));
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
    let e = with_materials(json!([{"pbrMetallicRoughness": {"metallicFactor": 2}}]), json!(0))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("materials[0].pbrMetallicRoughness.metallicFactor: 2 is outside 0..=1"),
        "{e}"
    );
    let e = with_materials(json!([{"alphaMode": "MASK", "alphaCutoff": -1}]), json!(0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("materials[0].alphaCutoff: -1 is negative"), "{e}");
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
