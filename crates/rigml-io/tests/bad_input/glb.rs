//! A tiny GLB writer for hand-made test files: the JSON document is a `serde_json::Value` that
//! tests edit freely, the binary chunk is built from typed arrays.

use serde_json::{json, Value};

const FLOAT: u32 = 5126;
const UNSIGNED_BYTE: u32 = 5121;
const UNSIGNED_SHORT: u32 = 5123;

/// The binary chunk with its bufferViews and accessors as they are added.
#[derive(Default)]
pub struct Bin {
    pub bytes: Vec<u8>,
    pub views: Vec<Value>,
    pub accessors: Vec<Value>,
}

impl Bin {
    /// Append `data` (4-byte aligned) as a new bufferView with one accessor over it; returns the
    /// accessor index.
    pub fn accessor(&mut self, data: &[u8], component_type: u32, kind: &str, count: usize) -> usize {
        self.bytes.resize(self.bytes.len().next_multiple_of(4), 0);
        self.views.push(json!({
            "buffer": 0,
            "byteOffset": self.bytes.len(),
            "byteLength": data.len(),
        }));
        self.bytes.extend_from_slice(data);
        self.accessors.push(json!({
            "bufferView": self.views.len() - 1,
            "componentType": component_type,
            "type": kind,
            "count": count,
        }));
        self.accessors.len() - 1
    }

    pub fn floats(&mut self, values: &[f32], kind: &str, per_item: usize) -> usize {
        let data: Vec<u8> = values.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.accessor(&data, FLOAT, kind, values.len() / per_item)
    }
}

/// A two-joint skinned quad: joints `hip` (node 0, at the origin) and `spine` (node 1, child of
/// hip at `spine_offset`), the mesh on node 2, and one animation rotating `spine`.
pub struct Rig {
    pub positions: Vec<[f32; 3]>,
    pub indices: Vec<u16>,
    pub joints: Vec<[u8; 4]>,
    pub weights: Vec<[f32; 4]>,
    pub spine_offset: [f32; 3],
    /// Column-major inverse bind matrices, one per joint.
    pub inverse_bind: Vec<[f32; 16]>,
    pub key_times: Vec<f32>,
}

pub fn translation_inverse(t: [f32; 3]) -> [f32; 16] {
    let mut m = [0.0; 16];
    m[0] = 1.0;
    m[5] = 1.0;
    m[10] = 1.0;
    m[15] = 1.0;
    m[12] = -t[0];
    m[13] = -t[1];
    m[14] = -t[2];
    m
}

impl Default for Rig {
    fn default() -> Self {
        let spine_offset = [0.0, 1.0, 0.0];
        Rig {
            positions: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [1.0, 2.0, 0.0]],
            indices: vec![0, 1, 2, 2, 1, 3],
            joints: vec![[0, 1, 0, 0]; 4],
            weights: vec![
                [1.0, 0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0, 0.0],
                [0.5, 0.5, 0.0, 0.0],
                [0.0, 1.0, 0.0, 0.0],
            ],
            spine_offset,
            inverse_bind: vec![translation_inverse([0.0; 3]), translation_inverse(spine_offset)],
            key_times: vec![0.0, 1.0],
        }
    }
}

/// Accessor indices of [`Rig::build`]'s document, for tests that edit it.
pub const POSITION: usize = 0;
pub const INDICES: usize = 1;
pub const JOINTS: usize = 2;
pub const WEIGHTS: usize = 3;
pub const INVERSE_BIND: usize = 4;
pub const KEY_TIMES: usize = 5;
pub const KEY_VALUES: usize = 6;

impl Rig {
    /// The glTF document and its binary chunk.
    pub fn build(&self) -> (Value, Vec<u8>) {
        let mut bin = Bin::default();
        let flat: Vec<f32> = self.positions.iter().flatten().copied().collect();
        let position = bin.floats(&flat, "VEC3", 3);
        let finite = || self.positions.iter().filter(|p| p.iter().all(|x| x.is_finite()));
        let min: Vec<f32> = (0..3)
            .map(|k| finite().map(|p| p[k]).fold(f32::INFINITY, f32::min))
            .collect();
        let max: Vec<f32> = (0..3)
            .map(|k| finite().map(|p| p[k]).fold(f32::NEG_INFINITY, f32::max))
            .collect();
        if min.iter().all(|x| x.is_finite()) {
            bin.accessors[position]["min"] = json!(min);
            bin.accessors[position]["max"] = json!(max);
        }
        let index_bytes: Vec<u8> = self.indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        bin.accessor(&index_bytes, UNSIGNED_SHORT, "SCALAR", self.indices.len());
        let joint_bytes: Vec<u8> = self.joints.iter().flatten().copied().collect();
        bin.accessor(&joint_bytes, UNSIGNED_BYTE, "VEC4", self.joints.len());
        let flat: Vec<f32> = self.weights.iter().flatten().copied().collect();
        bin.floats(&flat, "VEC4", 4);
        let flat: Vec<f32> = self.inverse_bind.iter().flatten().copied().collect();
        bin.floats(&flat, "MAT4", 16);
        bin.floats(&self.key_times, "SCALAR", 1);
        let half_turn = std::f32::consts::FRAC_1_SQRT_2;
        let rotations: Vec<f32> = (0..self.key_times.len())
            .flat_map(|k| {
                if k == 0 {
                    [0.0, 0.0, 0.0, 1.0]
                } else {
                    [0.0, 0.0, half_turn, half_turn]
                }
            })
            .collect();
        bin.floats(&rotations, "VEC4", 4);
        let json = json!({
            "asset": { "version": "2.0", "generator": "rigml bad_input test" },
            "scene": 0,
            "scenes": [{ "nodes": [0, 2] }],
            "nodes": [
                { "name": "hip", "children": [1] },
                { "name": "spine", "translation": self.spine_offset },
                { "name": "body", "mesh": 0, "skin": 0 },
            ],
            "skins": [{ "joints": [0, 1], "inverseBindMatrices": INVERSE_BIND, "skeleton": 0 }],
            "meshes": [{
                "name": "body",
                "primitives": [{
                    "attributes": { "POSITION": POSITION, "JOINTS_0": JOINTS, "WEIGHTS_0": WEIGHTS },
                    "indices": INDICES,
                    "mode": 4,
                }],
            }],
            "animations": [{
                "name": "bend",
                "samplers": [{ "input": KEY_TIMES, "output": KEY_VALUES, "interpolation": "LINEAR" }],
                "channels": [{ "sampler": 0, "target": { "node": 1, "path": "rotation" } }],
            }],
            "accessors": bin.accessors,
            "bufferViews": bin.views,
            "buffers": [{ "byteLength": bin.bytes.len() }],
        });
        (json, bin.bytes)
    }

    /// The rig as GLB bytes.
    pub fn glb(&self) -> Vec<u8> {
        let (json, bin) = self.build();
        pack(&json, &bin)
    }
}

/// GLB container: 12-byte header, JSON chunk (space-padded), BIN chunk (zero-padded).
pub fn pack(json: &Value, bin: &[u8]) -> Vec<u8> {
    let mut text = serde_json::to_vec(json).expect("test JSON serialises");
    text.resize(text.len().next_multiple_of(4), b' ');
    let mut bin = bin.to_vec();
    bin.resize(bin.len().next_multiple_of(4), 0);
    let total = 12 + 8 + text.len() + if bin.is_empty() { 0 } else { 8 + bin.len() };
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    if !bin.is_empty() {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
    }
    out
}

/// The rig with its document edited by `edit`.
pub fn edited(rig: &Rig, edit: impl FnOnce(&mut Value, &mut Vec<u8>)) -> Vec<u8> {
    let (mut json, mut bin) = rig.build();
    edit(&mut json, &mut bin);
    pack(&json, &bin)
}
