//! Primitives into one [`Mesh`] and their JOINTS_n/WEIGHTS_n into skin rows, in METRICS.md §1
//! order: one part per primitive, vertices in accessor order, never welded.

use super::accessor::Doc;
use super::json::Value;
use super::json::{self, fail, unsupported, Fail, Obj};
use super::write::{LOOSE_VERTICES_KEY, PART_NAME_KEY, UNSKINNED_KEY};
use glam::{Mat3, Mat4, Vec2, Vec3};
use rigml_core::skin::SkinBuilder;
use rigml_core::{Mesh, Skin, DEFAULT_MAX_INFLUENCES};

/// Where a primitive's vertices go and how its joint indices map to skeleton joints.
pub(super) struct Placement<'a> {
    /// Part name (node name, else mesh name).
    pub name: String,
    /// Matrix applied to positions (and, as its normal matrix, to normals).
    pub transform: Option<Mat4>,
    /// The skin the node binds the mesh with, or `None` for an unskinned mesh.
    pub skin: Option<SkinUse<'a>>,
}

/// A skinned node's skin, as the mesh reader needs it.
pub(super) struct SkinUse<'a> {
    /// The node carrying the skin and the skin's index in the file (for warnings).
    pub node: usize,
    pub skin: usize,
    /// Skin joint k → skeleton joint.
    pub joints: &'a [usize],
    /// When the skin binds some joints differently from the skeleton's kept binding: per skin
    /// joint k, the matrix taking a vertex weighted fully to it into the skeleton's bind space
    /// (`skeleton::SkinMap::per_joint`). A vertex gets the weighted blend of its joints'
    /// matrices; vertices without weight get [`Placement::transform`].
    pub per_joint: Option<&'a [Mat4]>,
}

/// Primitive modes that draw points or lines (glTF 2.0 §5.24.4), by mode number.
const POINT_AND_LINE_MODES: [&str; 4] = ["POINTS", "LINES", "LINE_LOOP", "LINE_STRIP"];

/// Mesh and skin being assembled.
pub(super) struct MeshBuild {
    pub mesh: Mesh,
    skin: Option<SkinBuilder>,
    /// Repair NaN weight rows (make the vertex unskinned) instead of refusing them.
    repair: bool,
    pub warnings: Vec<String>,
}

impl MeshBuild {
    pub fn new(joint_count: Option<usize>, repair: bool) -> Result<Self, Fail> {
        let skin = joint_count
            .map(|n| SkinBuilder::new(n, DEFAULT_MAX_INFLUENCES))
            .transpose()
            .map_err(|e| fail(e.to_string()))?;
        Ok(MeshBuild {
            mesh: Mesh::default(),
            skin,
            repair,
            warnings: Vec::new(),
        })
    }

    pub fn finish(self) -> (Mesh, Option<Skin>, Vec<String>) {
        (self.mesh, self.skin.map(SkinBuilder::finish), self.warnings)
    }

    /// Append every primitive of mesh `m`.
    pub fn add_mesh(&mut self, doc: &Doc, m: usize, referrer: &str, place: &Placement) -> Result<(), Fail> {
        let mesh = json::item(doc.meshes, m, "mesh", referrer)?;
        let here = format!("meshes[{m}]");
        let name = if place.name.is_empty() {
            json::opt_str(mesh, "name", &here)?.unwrap_or("").to_string()
        } else {
            place.name.clone()
        };
        let primitives = json::array(mesh, "primitives", &here)?;
        if primitives.is_empty() {
            // glTF 2.0 §5.23: `primitives` has at least one item; an empty list is a broken file.
            return Err(fail(format!(
                "{here}.primitives: empty (a mesh needs at least one primitive)"
            )));
        }
        for (p, prim) in primitives.iter().enumerate() {
            let ppath = format!("{here}.primitives[{p}]");
            let prim = json::object(prim, &ppath)?;
            self.add_primitive(doc, prim, &ppath, &name, place)?;
        }
        Ok(())
    }

    fn add_primitive(
        &mut self,
        doc: &Doc,
        prim: &Obj<'_>,
        here: &str,
        name: &str,
        place: &Placement,
    ) -> Result<(), Fail> {
        if prim
            .get("extensions")
            .and_then(|e| e.get("KHR_draco_mesh_compression"))
            .is_some()
        {
            return Err(unsupported(format!(
                "{here}: Draco-compressed primitives are not supported"
            )));
        }
        let attrs = prim
            .get("attributes")
            .map(|a| json::object(a, &format!("{here}.attributes")))
            .transpose()?;
        let apath = format!("{here}.attributes");
        let attr =
            |key: &str| -> Result<Option<usize>, Fail> { attrs.map_or(Ok(None), |a| json::opt_index(a, key, &apath)) };
        let Some(pos_acc) = attr("POSITION")? else {
            return Ok(()); // Nothing to draw (glTF 2.0 §3.7.2.1): no vertices to keep.
        };
        let mode = json::opt_index(prim, "mode", here)?.unwrap_or(4);
        // Points and lines have no surface to skin or render as a character; rigml's own loose
        // vertices (marked in `extras`) are the exception. Their data is still read and
        // checked below, so that a broken file is refused whatever its mode.
        let own_loose = prim
            .get("extras")
            .and_then(|e| e.get(LOOSE_VERTICES_KEY))
            .is_some_and(|v| *v == Value::Bool(true));
        let left_out = POINT_AND_LINE_MODES.get(mode).filter(|_| !own_loose);
        let pos = doc.floats(pos_acc, &format!("{apath}.POSITION"), &["VEC3"])?;
        let n = pos.count();
        if n == 0 {
            // glTF 2.0 §5.1: accessor.count is at least 1; say "empty" rather than load nothing.
            return Err(fail(format!("{apath}.POSITION: empty (0 vertices)")));
        }
        let mut part = Mesh {
            positions: (0..n).filter_map(|v| pos.get::<3>(v)).map(Vec3::from).collect(),
            ..Mesh::default()
        };
        if let Some(a) = attr("NORMAL")? {
            let path = format!("{apath}.NORMAL");
            let normals = doc.floats(a, &path, &["VEC3"])?;
            check_count(normals.count(), n, &path)?;
            part.normals = (0..n).filter_map(|v| normals.get::<3>(v)).map(Vec3::from).collect();
        }
        if let Some(a) = attr("TEXCOORD_0")? {
            let path = format!("{apath}.TEXCOORD_0");
            let uvs = doc.floats(a, &path, &["VEC2"])?;
            check_count(uvs.count(), n, &path)?;
            part.uvs = (0..n).filter_map(|v| uvs.get::<2>(v)).map(Vec2::from).collect();
        }
        part.triangles = triangles(doc, prim, here, mode, n)?;
        let skinning = match (self.skin.is_some(), &place.skin) {
            (true, Some(skin)) => Some((skin, SkinRows::read(doc, attr, &apath, n)?)),
            _ => None,
        };
        // Skin rows as skeleton joints, checked before anything is kept: `ends[v]` is where
        // vertex v's influences end in `influences`.
        let mut influences: Vec<(u32, f32)> = Vec::new();
        let mut ends = Vec::new();
        let mut repaired = Vec::new();
        if let Some((skin, rows)) = &skinning {
            let unskinned = unskinned_list(prim, here, n)?;
            ends.reserve_exact(n);
            let mut row = Vec::new();
            for v in 0..n {
                row.clear();
                rows.row(v, skin.joints, &mut row)?;
                if unskinned.get(v).copied().unwrap_or(false) {
                    row.clear();
                }
                if row.iter().any(|(_, w)| w.is_nan()) {
                    if !self.repair {
                        return Err(fail(format!(
                            "{apath}.WEIGHTS_{}[{v}]: weight is NaN (read with repair to make such vertices unskinned)",
                            rows.nan_set(v)
                        )));
                    }
                    repaired.push(v);
                    row.clear();
                }
                influences.extend_from_slice(&row);
                ends.push(influences.len());
            }
        }
        let material = json::opt_index(prim, "material", here)?;
        if let Some(m) = material.filter(|&m| m >= doc.material_count) {
            return Err(fail(format!(
                "{here}.material: material {m} does not exist ({} materials)",
                doc.material_count
            )));
        }
        if let Some(kind) = left_out {
            self.warnings.push(format!(
                "{here}: mode {mode} ({kind}) with {n} vertices: points and lines are not kept, left out"
            ));
            return Ok(());
        }

        if let Some((skin, rows)) = &skinning {
            if rows.sets.is_empty() {
                // glTF 2.0 §5.25: a skinned node's primitives must have JOINTS_0 and WEIGHTS_0.
                self.warnings.push(format!(
                    "{here}: nodes[{}] binds it with skins[{}] but it has no JOINTS_0/WEIGHTS_0; the skin is \
                     ignored for it and its {n} vertices carry no weight",
                    skin.node, skin.skin
                ));
            }
        }
        let rebind = skinning
            .as_ref()
            .and_then(|(skin, rows)| Some((skin.per_joint?, rows, skin.skin)))
            .filter(|(_, rows, _)| !rows.sets.is_empty());
        if let Some((per_joint, rows, skin)) = rebind {
            // Per vertex: the weighted blend of its joints' matrices (exact when they agree).
            let unweighted = place.transform.unwrap_or(Mat4::IDENTITY);
            let mut blended = 0;
            for v in 0..n {
                let (m, mixed) = rows.blend(v, per_joint).unwrap_or((unweighted, false));
                blended += usize::from(mixed);
                move_vertex(&mut part, v, &m, &normal_matrix(&m));
            }
            if blended > 0 {
                self.warnings.push(format!(
                    "{here}: {blended} of {n} vertices blend joints that skins[{skin}] binds in different spaces; \
                     re-bound to the kept binding, they follow skins[{skin}] exactly at its bind pose and closely, \
                     not exactly, when posed"
                ));
            }
        } else if let Some(m) = place.transform {
            let normals = normal_matrix(&m);
            for v in 0..n {
                move_vertex(&mut part, v, &m, &normals);
            }
        }
        if let (Some(builder), Some(_)) = (self.skin.as_mut(), &skinning) {
            let mut start = 0;
            for (v, &end) in ends.iter().enumerate() {
                builder
                    .push_row(influences.get(start..end).unwrap_or(&[]))
                    .map_err(|e| fail(format!("{apath}: vertex {v}: {e}")))?;
                start = end;
            }
            if let Some(first) = repaired.first() {
                self.warnings.push(format!(
                    "{apath}: {} vertices with NaN weights (first: vertex {first}) were made unskinned",
                    repaired.len()
                ));
            }
        }
        let saved = prim
            .get("extras")
            .and_then(|e| e.get(PART_NAME_KEY))
            .and_then(|n| n.as_str());
        self.mesh.append(&part, saved.unwrap_or(name));
        if let Some(last) = self.mesh.parts.last_mut() {
            last.material = material;
        }
        Ok(())
    }
}

/// Vertices rigml's writer marked as having no skin weight (`extras.rigml_unskinned`), as a
/// per-vertex flag.
fn unskinned_list(prim: &Obj<'_>, here: &str, n: usize) -> Result<Vec<bool>, Fail> {
    let mut flags = vec![false; n];
    let Some(list) = prim.get("extras").and_then(|e| e.get(UNSKINNED_KEY)) else {
        return Ok(flags);
    };
    let path = format!("{here}.extras.{UNSKINNED_KEY}");
    let list = list
        .as_array()
        .ok_or_else(|| fail(format!("{path}: expected an array of vertex indices")))?;
    for (k, v) in list.iter().enumerate() {
        let v = json::as_index(v, &format!("{path}[{k}]"))?;
        *flags
            .get_mut(v)
            .ok_or_else(|| fail(format!("{path}[{k}]: vertex {v} does not exist ({n} vertices)")))? = true;
    }
    Ok(flags)
}

/// Move vertex `v` of `part` by `m`, its normal by `normals` (`m`'s normal matrix).
fn move_vertex(part: &mut Mesh, v: usize, m: &Mat4, normals: &Mat3) {
    if let Some(p) = part.positions.get_mut(v) {
        *p = m.transform_point3(*p);
    }
    if let Some(nrm) = part.normals.get_mut(v) {
        *nrm = (*normals * *nrm).normalize_or_zero();
    }
}

/// The matrix that transforms normals as `m` transforms positions.
fn normal_matrix(m: &Mat4) -> Mat3 {
    Mat3::from_mat4(*m).inverse().transpose()
}

fn check_count(got: usize, expected: usize, path: &str) -> Result<(), Fail> {
    if got != expected {
        return Err(fail(format!("{path}: {got} elements but POSITION has {expected}")));
    }
    Ok(())
}

/// Triangles of a primitive: TRIANGLES as they are, strips and fans unrolled (glTF 2.0
/// §3.7.2.1 winding), non-indexed primitives as 0..n. Points and lines give no triangles.
fn triangles(doc: &Doc, prim: &Obj<'_>, here: &str, mode: usize, n: usize) -> Result<Vec<[u32; 3]>, Fail> {
    let indices: Vec<u32> = match json::opt_index(prim, "indices", here)? {
        Some(a) => {
            let path = format!("{here}.indices");
            let values = doc.ints(a, &path, &["SCALAR"])?;
            if let Some(k) = values.data.iter().position(|&i| i as usize >= n) {
                return Err(fail(format!(
                    "{path}[{k}]: vertex {} does not exist ({n} vertices)",
                    values.data[k]
                )));
            }
            values.data
        }
        None => (0..n as u32).collect(),
    };
    let at = |k: usize| indices.get(k).copied().unwrap_or(0);
    let count = indices.len();
    Ok(match mode {
        0..=3 => Vec::new(),
        4 => {
            if !count.is_multiple_of(3) {
                return Err(fail(format!(
                    "{here}: {count} indices is not a multiple of 3 (mode TRIANGLES)"
                )));
            }
            indices.chunks_exact(3).map(|t| [t[0], t[1], t[2]]).collect()
        }
        5 => (0..count.saturating_sub(2))
            .map(|i| {
                if i % 2 == 0 {
                    [at(i), at(i + 1), at(i + 2)]
                } else {
                    [at(i + 1), at(i), at(i + 2)]
                }
            })
            .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
            .collect(),
        6 => (0..count.saturating_sub(2))
            .map(|i| [at(i + 1), at(i + 2), at(0)])
            .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
            .collect(),
        _ => return Err(fail(format!("{here}.mode: {mode} is not a glTF primitive mode"))),
    })
}

/// JOINTS_n / WEIGHTS_n sets of one primitive.
struct SkinRows {
    sets: Vec<(Vec<u32>, Vec<f32>, usize)>,
    path: String,
}

impl SkinRows {
    fn read(
        doc: &Doc,
        attr: impl Fn(&str) -> Result<Option<usize>, Fail>,
        apath: &str,
        n: usize,
    ) -> Result<Self, Fail> {
        let mut sets = Vec::new();
        for set in 0.. {
            let (jk, wk) = (format!("JOINTS_{set}"), format!("WEIGHTS_{set}"));
            let (j, w) = match (attr(&jk)?, attr(&wk)?) {
                (None, None) => break,
                (Some(j), Some(w)) => (j, w),
                _ => return Err(fail(format!("{apath}: {jk} and {wk} must come together"))),
            };
            let joints = doc.ints(j, &format!("{apath}.{jk}"), &["VEC4"])?;
            let weights = doc.floats(w, &format!("{apath}.{wk}"), &["VEC4"])?;
            check_count(joints.count(), n, &format!("{apath}.{jk}"))?;
            check_count(weights.count(), n, &format!("{apath}.{wk}"))?;
            sets.push((joints.data, weights.data, set));
        }
        Ok(SkinRows {
            sets,
            path: apath.to_string(),
        })
    }

    /// Raw influences of vertex `v` as skeleton joints; zero weights are skipped, so their
    /// joint index is not checked (exporters pad with joint 0 or garbage).
    fn row(&self, v: usize, joints: &[usize], out: &mut Vec<(u32, f32)>) -> Result<(), Fail> {
        for (js, ws, set) in &self.sets {
            for k in 4 * v..4 * v + 4 {
                let (Some(&j), Some(&w)) = (js.get(k), ws.get(k)) else {
                    continue;
                };
                if w == 0.0 || (-1e-6..0.0).contains(&w) {
                    continue;
                }
                if w < 0.0 {
                    return Err(fail(format!("{}.WEIGHTS_{set}[{v}]: negative weight {w}", self.path)));
                }
                let joint = joints.get(j as usize).ok_or_else(|| {
                    fail(format!(
                        "{}.JOINTS_{set}[{v}]: joint {j} but the skin has {} joints",
                        self.path,
                        joints.len()
                    ))
                })?;
                out.push((*joint as u32, w));
            }
        }
        Ok(())
    }

    /// The blend `Σ w·M / Σ w` of `per_joint` (by skin joint) over vertex `v`'s positive
    /// weights, and whether its joints' matrices differ (the blend is then exact at the bind
    /// pose only). `None` when the vertex has no positive weight.
    fn blend(&self, v: usize, per_joint: &[Mat4]) -> Option<(Mat4, bool)> {
        let mut first: Option<Mat4> = None;
        let mut mixed = false;
        let mut sum = Mat4::ZERO;
        let mut total = 0.0f32;
        for (js, ws, _) in &self.sets {
            for k in 4 * v..4 * v + 4 {
                let (Some(&j), Some(&w)) = (js.get(k), ws.get(k)) else {
                    continue;
                };
                let Some(m) = per_joint.get(j as usize).filter(|_| w > 0.0 && w.is_finite()) else {
                    continue;
                };
                match first {
                    None => first = Some(*m),
                    Some(f) => mixed |= f != *m,
                }
                sum += *m * w;
                total += w;
            }
        }
        let first = first?;
        Some(if mixed {
            (sum * (1.0 / total), true)
        } else {
            (first, false)
        })
    }

    /// The first set holding a NaN weight for vertex `v`.
    fn nan_set(&self, v: usize) -> usize {
        self.sets
            .iter()
            .find(|(_, ws, _)| ws.get(4 * v..4 * v + 4).is_some_and(|w| w.iter().any(|x| x.is_nan())))
            .map_or(0, |s| s.2)
    }
}
