//! An independent glTF skinning evaluator, the oracle of `tests/deformation.rs`.
//!
//! It shares nothing with rigml's reader or its skeleton/clip/skinning code: the file is parsed
//! with the `gltf` crate's document API and accessor readers, every node of the hierarchy
//! (joint or not) gets its global matrix from its own rest TRS or the raw animation samplers at
//! time `t`, joint matrices are `global(joint) · inverseBindMatrix`, and each skinned primitive's
//! raw JOINTS_n/WEIGHTS_n are applied to its raw POSITIONs (glTF 2.0 §3.7.3: the skinned mesh
//! node's own transform is ignored). Everything after the accessor read is in f64, so its own
//! rounding is far below the f32 pipeline it checks.

#![allow(dead_code)]

use glam::{DMat4, DQuat, DVec3, DVec4};
use gltf::animation::util::ReadOutputs;
use gltf::animation::{Interpolation, Property};
use std::path::Path;

/// The animated property of one channel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Path3 {
    Translation,
    Rotation,
    Scale,
}

/// One raw animation channel: key times and values (xyz or xyzw; 3 per key for cubic splines).
pub struct Channel {
    pub node: usize,
    pub path: Path3,
    pub interpolation: Interpolation,
    pub times: Vec<f64>,
    pub values: Vec<DVec4>,
}

pub struct Animation {
    pub name: Option<String>,
    pub channels: Vec<Channel>,
}

impl Animation {
    /// First and last key time over all channels.
    pub fn range(&self) -> (f64, f64) {
        let lo = self
            .channels
            .iter()
            .filter_map(|c| c.times.first())
            .fold(f64::INFINITY, |a, &b| a.min(b));
        let hi = self
            .channels
            .iter()
            .filter_map(|c| c.times.last())
            .fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        if lo.is_finite() && hi.is_finite() {
            (lo, hi)
        } else {
            (0.0, 0.0)
        }
    }
}

/// A node's rest transform as the file gives it.
#[derive(Clone, Copy)]
enum Rest {
    Matrix(DMat4),
    Trs(DVec3, DQuat, DVec3),
}

/// One vertex's raw influences: (slot in the skin's joint list, normalised weight); `None` when the
/// file's data for it is unusable (NaN weight, joint slot outside the skin, all-zero weights).
pub type Influences = Option<Vec<(usize, f64)>>;

/// One drawn primitive of one mesh node.
pub struct Primitive {
    pub node: usize,
    pub mesh: usize,
    pub primitive: usize,
    /// The node's skin, if any.
    pub skin: Option<usize>,
    pub positions: Vec<DVec3>,
    /// Per vertex, when the node has a skin.
    pub influences: Option<Vec<Influences>>,
}

/// A parsed glTF file, ready to be posed at any time of any animation.
pub struct Document {
    rest: Vec<Rest>,
    parent: Vec<Option<usize>>,
    /// Per skin: joint nodes and inverse bind matrices.
    skins: Vec<(Vec<usize>, Vec<DMat4>)>,
    pub primitives: Vec<Primitive>,
    pub animations: Vec<Animation>,
}

fn dvec3(a: [f32; 3]) -> DVec3 {
    DVec3::new(a[0] as f64, a[1] as f64, a[2] as f64)
}

fn dmat4(m: [[f32; 4]; 4]) -> DMat4 {
    DMat4::from_cols_array_2d(&m.map(|c| c.map(|x| x as f64)))
}

/// The bytes of a base64 `data:` URI (RFC 2397), decoded by the `base64` crate.
fn data_uri(uri: &str) -> Result<Vec<u8>, String> {
    use base64::Engine;
    let (_, payload) = uri
        .split_once(";base64,")
        .ok_or_else(|| "data: URI without ;base64,".to_string())?;
    base64::engine::general_purpose::STANDARD
        .decode(payload)
        .map_err(|e| format!("data: URI: {e}"))
}

/// Parse a .glb, or a .gltf with `.bin` buffers beside it or embedded as `data:` URIs.
pub fn open(path: &Path) -> Result<Document, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let gltf = gltf::Gltf::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut buffers: Vec<Vec<u8>> = Vec::new();
    for b in gltf.buffers() {
        buffers.push(match b.source() {
            gltf::buffer::Source::Bin => gltf.blob.clone().ok_or("GLB without BIN chunk")?,
            gltf::buffer::Source::Uri(uri) if !uri.starts_with("data:") => {
                let p = path.with_file_name(uri);
                std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?
            }
            gltf::buffer::Source::Uri(uri) => {
                data_uri(uri).map_err(|e| format!("{}: buffer {}: {e}", path.display(), b.index()))?
            }
        });
    }
    let get = |b: gltf::Buffer| buffers.get(b.index()).map(Vec::as_slice);

    let n = gltf.nodes().count();
    let mut parent = vec![None; n];
    let mut rest = Vec::with_capacity(n);
    for node in gltf.nodes() {
        for child in node.children() {
            parent[child.index()] = Some(node.index());
        }
        rest.push(match node.transform() {
            gltf::scene::Transform::Matrix { matrix } => Rest::Matrix(dmat4(matrix)),
            gltf::scene::Transform::Decomposed {
                translation,
                rotation,
                scale,
            } => Rest::Trs(
                dvec3(translation),
                DQuat::from_xyzw(
                    rotation[0] as f64,
                    rotation[1] as f64,
                    rotation[2] as f64,
                    rotation[3] as f64,
                ),
                dvec3(scale),
            ),
        });
    }

    let mut skins = Vec::new();
    for skin in gltf.skins() {
        let joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
        let ibm: Vec<DMat4> = match skin.reader(get).read_inverse_bind_matrices() {
            Some(it) => it.map(dmat4).collect(),
            None => vec![DMat4::IDENTITY; joints.len()],
        };
        skins.push((joints, ibm));
    }

    let mut primitives = Vec::new();
    for node in gltf.nodes() {
        let Some(mesh) = node.mesh() else { continue };
        for prim in mesh.primitives() {
            let reader = prim.reader(get);
            let positions: Vec<DVec3> = reader
                .read_positions()
                .ok_or_else(|| format!("mesh {} primitive {}: no POSITION", mesh.index(), prim.index()))?
                .map(dvec3)
                .collect();
            let influences = node.skin().map(|skin| {
                let joints = skins.get(skin.index()).map_or(0, |s| s.0.len());
                read_influences(&reader, positions.len(), joints)
            });
            primitives.push(Primitive {
                node: node.index(),
                mesh: mesh.index(),
                primitive: prim.index(),
                skin: node.skin().map(|s| s.index()),
                positions,
                influences,
            });
        }
    }

    let mut animations = Vec::new();
    for anim in gltf.animations() {
        let mut channels = Vec::new();
        for ch in anim.channels() {
            let path3 = match ch.target().property() {
                Property::Translation => Path3::Translation,
                Property::Rotation => Path3::Rotation,
                Property::Scale => Path3::Scale,
                Property::MorphTargetWeights => continue,
            };
            let reader = ch.reader(get);
            let times: Vec<f64> = reader
                .read_inputs()
                .ok_or("channel without input")?
                .map(|t| t as f64)
                .collect();
            let values: Vec<DVec4> = match reader.read_outputs().ok_or("channel without output")? {
                ReadOutputs::Translations(it) | ReadOutputs::Scales(it) => it.map(|v| dvec3(v).extend(0.0)).collect(),
                ReadOutputs::Rotations(r) => r
                    .into_f32()
                    .map(|q| DVec4::new(q[0] as f64, q[1] as f64, q[2] as f64, q[3] as f64))
                    .collect(),
                ReadOutputs::MorphTargetWeights(_) => continue,
            };
            channels.push(Channel {
                node: ch.target().node().index(),
                path: path3,
                interpolation: ch.sampler().interpolation(),
                times,
                values,
            });
        }
        animations.push(Animation {
            name: anim.name().map(str::to_string),
            channels,
        });
    }
    Ok(Document {
        rest,
        parent,
        skins,
        primitives,
        animations,
    })
}

/// Every JOINTS_n/WEIGHTS_n set of a primitive, as joint slots and weights normalised to sum 1.
fn read_influences<'a, 's, F>(reader: &gltf::mesh::Reader<'a, 's, F>, count: usize, joints: usize) -> Vec<Influences>
where
    F: Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
{
    let mut rows: Vec<Influences> = vec![Some(Vec::new()); count];
    let mut set = 0;
    while let (Some(js), Some(ws)) = (reader.read_joints(set), reader.read_weights(set)) {
        for ((row, j), w) in rows.iter_mut().zip(js.into_u16()).zip(ws.into_f32()) {
            for k in 0..4 {
                let weight = w[k] as f64;
                if !weight.is_finite() || weight < 0.0 {
                    *row = None;
                }
                if weight == 0.0 {
                    continue;
                }
                match row.as_mut() {
                    Some(r) if (j[k] as usize) < joints => r.push((j[k] as usize, weight)),
                    _ => *row = None,
                }
            }
        }
        set += 1;
    }
    for row in &mut rows {
        let sum: f64 = row.as_ref().map_or(0.0, |r| r.iter().map(|e| e.1).sum());
        match row {
            Some(r) if sum > 0.0 => r.iter_mut().for_each(|e| e.1 /= sum),
            _ => *row = None,
        }
    }
    rows
}

/// Key interval of `t` in `times`: (k0, k1, u in [0,1], key spacing); clamped at both ends.
fn locate(times: &[f64], t: f64) -> Option<(usize, usize, f64, f64)> {
    let last = times.len().checked_sub(1)?;
    if t <= times[0] {
        return Some((0, 0, 0.0, 0.0));
    }
    if t >= times[last] {
        return Some((last, last, 0.0, 0.0));
    }
    let mut k1 = 1;
    while times[k1] <= t {
        k1 += 1;
    }
    let (t0, t1) = (times[k1 - 1], times[k1]);
    let dt = t1 - t0;
    Some((k1 - 1, k1, if dt > 0.0 { (t - t0) / dt } else { 0.0 }, dt))
}

/// Spherical interpolation on the shorter arc, computed from the angle directly.
fn slerp(a: DVec4, b: DVec4, u: f64) -> DVec4 {
    let (a, mut b) = (a.normalize(), b.normalize());
    let mut d = a.dot(b);
    if d < 0.0 {
        b = -b;
        d = -d;
    }
    if d > 1.0 - 1e-12 {
        return (a + (b - a) * u).normalize();
    }
    let theta = d.min(1.0).acos();
    let s = theta.sin();
    (a * ((1.0 - u) * theta).sin() / s + b * (u * theta).sin() / s).normalize()
}

impl Channel {
    /// The channel's value at time `t` (glTF 2.0 Appendix C), clamped outside the keys.
    fn sample(&self, t: f64) -> Option<DVec4> {
        let (k0, k1, u, dt) = locate(&self.times, t)?;
        let v = |i: usize| self.values.get(i).copied();
        let value = match self.interpolation {
            Interpolation::Step => v(k0)?,
            Interpolation::Linear if self.path == Path3::Rotation => slerp(v(k0)?, v(k1)?, u),
            Interpolation::Linear => v(k0)? * (1.0 - u) + v(k1)? * u,
            Interpolation::CubicSpline => {
                // Values are [in-tangent, value, out-tangent] per key.
                let (u2, u3) = (u * u, u * u * u);
                v(3 * k0 + 1)? * (2.0 * u3 - 3.0 * u2 + 1.0)
                    + v(3 * k0 + 2)? * (dt * (u3 - 2.0 * u2 + u))
                    + v(3 * k1 + 1)? * (-2.0 * u3 + 3.0 * u2)
                    + v(3 * k1)? * (dt * (u3 - u2))
            }
        };
        Some(if self.path == Path3::Rotation {
            value.normalize()
        } else {
            value
        })
    }
}

impl Document {
    /// Global matrices of every node at time `t` of `animation` (rest pose when `None`).
    pub fn globals(&self, animation: Option<&Animation>, t: f64) -> Vec<DMat4> {
        let mut rest = self.rest.clone();
        for c in animation.map_or(&[][..], |a| &a.channels) {
            let (Some(value), Some(r)) = (c.sample(t), rest.get_mut(c.node)) else {
                continue;
            };
            let (mut tr, mut rot, mut sc) = match *r {
                Rest::Trs(tr, rot, sc) => (tr, rot, sc),
                Rest::Matrix(m) => {
                    let (sc, rot, tr) = m.to_scale_rotation_translation();
                    (tr, rot, sc)
                }
            };
            match c.path {
                Path3::Translation => tr = value.truncate(),
                Path3::Scale => sc = value.truncate(),
                Path3::Rotation => rot = DQuat::from_vec4(value),
            }
            *r = Rest::Trs(tr, rot, sc);
        }
        let local: Vec<DMat4> = rest
            .iter()
            .map(|r| match *r {
                Rest::Matrix(m) => m,
                Rest::Trs(tr, rot, sc) => {
                    DMat4::from_translation(tr) * DMat4::from_quat(rot.normalize()) * DMat4::from_scale(sc)
                }
            })
            .collect();
        let mut global: Vec<Option<DMat4>> = vec![None; local.len()];
        for n in 0..local.len() {
            // Walk up to the first ancestor already known (or a root), then fill downwards.
            let mut chain = vec![n];
            while let Some(p) = self.parent[*chain.last().unwrap_or(&n)] {
                if global[p].is_some() || chain.contains(&p) || chain.len() > local.len() {
                    break;
                }
                chain.push(p);
            }
            for &m in chain.iter().rev() {
                if global[m].is_some() {
                    continue;
                }
                let g = match self.parent[m].and_then(|p| global[p]) {
                    Some(pg) => pg * local[m],
                    None => local[m],
                };
                global[m] = Some(g);
            }
        }
        global.into_iter().map(|g| g.unwrap_or(DMat4::IDENTITY)).collect()
    }

    /// Positions of one primitive in the pose `globals`: skinned by its raw weights, or moved
    /// with its node when unskinned. `None` for a vertex whose weights are unusable.
    pub fn pose_primitive(&self, p: &Primitive, globals: &[DMat4]) -> Vec<Option<DVec3>> {
        match &p.influences {
            None => {
                let m = globals[p.node];
                p.positions.iter().map(|x| Some(m.transform_point3(*x))).collect()
            }
            Some(rows) => {
                let (joints, ibm) = p
                    .skin
                    .and_then(|s| self.skins.get(s))
                    .map_or((&[][..], &[][..]), |s| (&s.0[..], &s.1[..]));
                let matrices: Vec<Option<DMat4>> = joints
                    .iter()
                    .enumerate()
                    .map(|(slot, &node)| Some(*globals.get(node)? * *ibm.get(slot)?))
                    .collect();
                p.positions
                    .iter()
                    .zip(rows)
                    .map(|(x, row)| {
                        let mut sum = DVec3::ZERO;
                        for &(slot, w) in row.as_ref()? {
                            sum += matrices.get(slot).copied().flatten()?.transform_point3(*x) * w;
                        }
                        Some(sum)
                    })
                    .collect()
            }
        }
    }

    /// Positions of one primitive in the bind pose: raw for skinned primitives, the node's rest
    /// global transform applied for unskinned ones.
    pub fn bind_primitive(&self, p: &Primitive, rest_globals: &[DMat4]) -> Vec<DVec3> {
        match p.influences {
            Some(_) => p.positions.clone(),
            None => p
                .positions
                .iter()
                .map(|x| rest_globals[p.node].transform_point3(*x))
                .collect(),
        }
    }
}
