//! Hand-made semantic breakage of a glTF rig, one case per problem.

use super::glb::{edited, pack, Rig, INDICES, INVERSE_BIND, JOINTS, KEY_VALUES, POSITION};
use super::harness::{Case, Expect, Source};
use super::words::{CYCLE, NON_FINITE, OUT_OF_BOUNDS, OUT_OF_RANGE};
use serde_json::json;

const FILE: &str = "rig.glb";

fn case(label: &str, bytes: Vec<u8>, expect: Expect) -> Case {
    Case::new(label, FILE, bytes, expect)
}

/// A rig with one field of [`Rig::default`] changed.
fn rig(change: impl FnOnce(&mut Rig)) -> Rig {
    let mut r = Rig::default();
    change(&mut r);
    r
}

/// Cases whose damage is in the numbers of the binary chunk.
pub fn data_cases() -> Vec<Case> {
    vec![
        case(
            "NaN position",
            rig(|r| r.positions[1][0] = f32::NAN).glb(),
            Expect::Error(NON_FINITE),
        ),
        case(
            "infinite position",
            rig(|r| r.positions[3][2] = f32::INFINITY).glb(),
            Expect::Error(NON_FINITE),
        ),
        case(
            "JOINTS_0 index beyond skin.joints (weighted)",
            rig(|r| r.joints[2] = [0, 5, 0, 0]).glb(),
            Expect::Error(OUT_OF_RANGE),
        ),
        case(
            "JOINTS_0 index beyond skin.joints with zero weight",
            rig(|r| r.joints[0] = [0, 9, 0, 0]).glb(),
            Expect::Either,
        ),
        case(
            "empty mesh (0 vertices)",
            rig(|r| {
                r.positions.clear();
                r.indices.clear();
                r.joints.clear();
                r.weights.clear();
            })
            .glb(),
            Expect::Error(&["empty", "no vertices", "0 vertices", "count", "zero"]),
        ),
        case(
            "triangle index beyond the vertices",
            rig(|r| r.indices[5] = 9).glb(),
            Expect::Error(OUT_OF_RANGE),
        ),
        case(
            "singular inverse bind matrix",
            rig(|r| r.inverse_bind[1] = [0.0; 16]).glb(),
            Expect::Error(&["singular", "invert", "inverse"]),
        ),
        case(
            "NaN inverse bind matrix",
            rig(|r| r.inverse_bind[1][5] = f32::NAN).glb(),
            Expect::Error(NON_FINITE),
        ),
        case(
            // `load` repairs NaN weights (the vertex becomes unskinned, with a warning);
            // the strict `gltf::read` refuses them (unit tests in gltf/tests.rs).
            "NaN weight",
            rig(|r| r.weights[2][0] = f32::NAN).glb(),
            Expect::Ok,
        ),
        case(
            "negative weight",
            rig(|r| r.weights[2] = [-0.5, 1.5, 0.0, 0.0]).glb(),
            Expect::Either,
        ),
        case(
            "all-zero weights",
            rig(|r| r.weights[1] = [0.0; 4]).glb(),
            Expect::Either,
        ),
        case(
            "NaN key time",
            rig(|r| r.key_times[1] = f32::NAN).glb(),
            Expect::Error(NON_FINITE),
        ),
        case(
            "decreasing key times",
            rig(|r| r.key_times = vec![1.0, 0.0]).glb(),
            Expect::Error(&["decrease", "increas", "order", "time"]),
        ),
    ]
}

/// Cases whose damage is in the JSON document (references, hierarchy, accessor layout).
pub fn document_cases() -> Vec<Case> {
    let r = Rig::default();
    vec![
        case(
            "node cycle hip <-> spine",
            edited(&r, |j, _| j["nodes"][1]["children"] = json!([0])),
            Expect::Error(CYCLE),
        ),
        case(
            "node is its own child",
            edited(&r, |j, _| j["nodes"][0]["children"] = json!([0, 1])),
            Expect::Error(CYCLE),
        ),
        case(
            "cycle among non-joint nodes under the mesh node",
            edited(&r, |j, _| {
                j["nodes"][2]["children"] = json!([3]);
                j["nodes"].as_array_mut().into_iter().for_each(|nodes| {
                    nodes.push(json!({ "name": "a", "children": [4] }));
                    nodes.push(json!({ "name": "b", "children": [3] }));
                });
            }),
            // Node a is a child of both the mesh node and b: either fault may be named first.
            Expect::Error(&["cycle", "already a child", "parent"]),
        ),
        case(
            "cycle among nodes outside every scene",
            edited(&r, |j, _| {
                j["nodes"].as_array_mut().into_iter().for_each(|nodes| {
                    nodes.push(json!({ "name": "a", "children": [4] }));
                    nodes.push(json!({ "name": "b", "children": [3] }));
                });
            }),
            Expect::Error(CYCLE),
        ),
        case(
            "node with two parents",
            edited(&r, |j, _| j["nodes"][2]["children"] = json!([1])),
            Expect::Error(&[]),
        ),
        case(
            "skin joint node does not exist",
            edited(&r, |j, _| j["skins"][0]["joints"] = json!([0, 41])),
            Expect::Error(&["41"]),
        ),
        case(
            "mesh with 0 primitives",
            edited(&r, |j, _| j["meshes"][0]["primitives"] = json!([])),
            Expect::Error(&["primitive", "empty"]),
        ),
        case(
            "POSITION accessor count beyond its buffer",
            edited(&r, |j, _| j["accessors"][POSITION]["count"] = json!(1000)),
            Expect::Error(OUT_OF_BOUNDS),
        ),
        case(
            "accessor count that overflows a byte size",
            edited(&r, |j, _| j["accessors"][POSITION]["count"] = json!(1u64 << 62)),
            Expect::Error(OUT_OF_BOUNDS),
        ),
        case(
            "index accessor count beyond its buffer",
            edited(&r, |j, _| j["accessors"][INDICES]["count"] = json!(600)),
            Expect::Error(OUT_OF_BOUNDS),
        ),
        case(
            "bufferView beyond the buffer",
            edited(&r, |j, _| j["bufferViews"][0]["byteLength"] = json!(1 << 20)),
            Expect::Error(OUT_OF_BOUNDS),
        ),
        case(
            "bufferView offset near u64::MAX",
            edited(&r, |j, _| j["bufferViews"][0]["byteOffset"] = json!(u64::MAX - 8)),
            Expect::Error(&[]),
        ),
        case(
            "buffer byteLength larger than the BIN chunk",
            edited(&r, |j, b| j["buffers"][0]["byteLength"] = json!(b.len() + 1000)),
            Expect::Error(&[]),
        ),
        case("BIN chunk missing", pack(&r.build().0, &[]), Expect::Error(&[])),
        case(
            "mesh node refers to a missing mesh",
            edited(&r, |j, _| j["nodes"][2]["mesh"] = json!(7)),
            Expect::Error(&["7", "range", "does not exist"]),
        ),
        case(
            "scene lists a missing node",
            edited(&r, |j, _| j["scenes"][0]["nodes"] = json!([0, 2, 99])),
            Expect::Error(&["99", "range", "does not exist"]),
        ),
        case(
            "inverse bind accessor shorter than skin.joints",
            edited(&r, |j, _| j["accessors"][INVERSE_BIND]["count"] = json!(1)),
            Expect::Error(&["inverse", "count", "bind"]),
        ),
        case(
            "JOINTS_0 stored as float",
            edited(&r, |j, _| j["accessors"][JOINTS]["componentType"] = json!(5126)),
            Expect::Error(&[]),
        ),
        case(
            "animation sampler with fewer values than key times",
            edited(&r, |j, _| j["accessors"][KEY_VALUES]["count"] = json!(1)),
            Expect::Error(&["key", "count", "output", "value", "sampler"]),
        ),
        case(
            "animation channel targets a missing node",
            edited(&r, |j, _| {
                j["animations"][0]["channels"][0]["target"]["node"] = json!(50)
            }),
            Expect::Error(&["50", "range", "does not exist"]),
        ),
        case(
            "node translation overflowing f32",
            edited(&r, |j, _| j["nodes"][1]["translation"] = json!([0.0, 1e39, 0.0])),
            Expect::Error(NON_FINITE),
        ),
        case(
            "points instead of triangles",
            edited(&r, |j, _| j["meshes"][0]["primitives"][0]["mode"] = json!(0)),
            Expect::Either,
        ),
    ]
}

/// Damage to the GLB container itself.
pub fn container_cases() -> Vec<Case> {
    let good = Rig::default().glb();
    let with = |at: usize, value: u32| {
        let mut b = good.clone();
        b[at..at + 4].copy_from_slice(&value.to_le_bytes());
        b
    };
    let json_len = u32::from_le_bytes([good[12], good[13], good[14], good[15]]) as usize;
    let mut not_json = good.clone();
    not_json[20..20 + json_len.min(8)].copy_from_slice(&b"#!?;:-<>"[..json_len.min(8)]);
    vec![
        case("GLB version 1", with(4, 1), Expect::Error(&["version"])),
        case(
            "GLB length larger than the file",
            with(8, good.len() as u32 + 100),
            Expect::Error(&[]),
        ),
        case("GLB length smaller than the header", with(8, 4), Expect::Error(&[])),
        case(
            "JSON chunk length beyond the file",
            with(12, u32::MAX - 3),
            Expect::Error(&[]),
        ),
        case("JSON chunk is not JSON", not_json, Expect::Error(&[])),
        case("GLB header only", good[..12].to_vec(), Expect::Error(&[])),
    ]
}

/// `.gltf` with its buffer in a `.bin` file beside it.
pub fn separate_cases() -> Vec<Case> {
    let (mut json, bin) = Rig::default().build();
    json["buffers"][0]["uri"] = json!("rig.bin");
    let text = serde_json::to_vec(&json).expect("test JSON serialises");
    let mut missing = json.clone();
    missing["buffers"][0]["uri"] = json!("missing.bin");
    let mut bad_data_uri = json.clone();
    bad_data_uri["buffers"][0]["uri"] = json!("data:application/octet-stream;base64,@@not*base64@@");
    let gltf = |label: &str, doc: &serde_json::Value, expect| {
        let bytes = serde_json::to_vec(doc).expect("test JSON serialises");
        Case::new(label, "rig.gltf", bytes, expect).beside("rig.bin", Source::Bytes(bin.clone()))
    };
    vec![
        Case::new(".gltf with a .bin beside it", "rig.gltf", text, Expect::Ok)
            .beside("rig.bin", Source::Bytes(bin.clone())),
        gltf(".gltf whose .bin is missing", &missing, Expect::Error(&["missing.bin"])),
        gltf(".gltf with a broken base64 data URI", &bad_data_uri, Expect::Error(&[])),
        Case::new(
            ".gltf with a truncated .bin",
            "rig.gltf",
            serde_json::to_vec(&json).unwrap_or_default(),
            Expect::Error(&[]),
        )
        .beside("rig.bin", Source::Bytes(bin[..bin.len() / 2].to_vec())),
    ]
}
