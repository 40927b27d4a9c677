//! A library of artists' rigs kept beside the skeleton network: for a new mesh, the training
//! character whose shape is most alike and its skeleton, moved onto the new mesh by the two
//! bounding boxes (nearest-neighbour retrieval; docs/model-card-skeleton.md, "The rig library").
//!
//! Characters of one family are often built on one rig (Ultimate Monsters' flying monsters on
//! a 13-joint winged rig, the cute fish on six joints, the modular women on one 51-joint rig),
//! with joint counts and placements no geometric rule recovers, because they are conventions
//! (one joint for a whole head, pole targets in front of the knees). When a new mesh is shaped
//! like a rig in the library, that rig is the best guess of what its artist would have built.
//! Whether a mesh is alike is a [`Descriptor`]: the share of the surface's area in each cell
//! of a 6 x 6 x 6 grid over its bounding box, and the box's proportions
//! ([`Descriptor::similarity`]). Measured on the train split leaving each family out, the
//! cells and the threshold chosen there (6 cells, 0.6) keep the retrieval from firing on most
//! shapes of families it has never seen.
//!
//! The rigs are stored in the skeleton model file (tensors `library.*`, names in the metadata):
//! `rigml train-skeleton` adds the rigs of its training characters, and for the standing
//! humanoids among them the humanoid template's joints on their meshes ([`Anchors`], tensors
//! `library.anchor_*`), by which their rigs are carried onto other humanoids' landmarks.

use crate::model::{ModelFile, Weights};
use crate::LearnError;
use glam::Vec3;

/// Cells along each side of the descriptor's grid.
pub const CELLS: usize = 6;
/// Values of one descriptor histogram.
pub const HISTOGRAM: usize = CELLS * CELLS * CELLS;
/// Similarity at or above which the library's rig is used (chosen leaving families out on
/// the train split; docs/experiments/2026-12-07-rig-library.md).
pub const DEFAULT_THRESHOLD: f32 = 0.6;

/// Metadata key of the similarity threshold stored with a library.
pub const KEY_THRESHOLD: &str = "rigml.skeleton.library.threshold";
const KEY_COUNT: &str = "rigml.skeleton.library.rigs";

/// What a mesh looks like to the library: its bounding box and how its surface area spreads
/// over the box.
#[derive(Debug, Clone, PartialEq)]
pub struct Descriptor {
    /// The box's low corner, in the mesh's space.
    pub lo: Vec3,
    /// The box's sides (each at least a tiny positive length).
    pub extent: Vec3,
    /// Share of the surface area in each of the [`HISTOGRAM`] cells (sums to 1); cell
    /// `(x · CELLS + y) · CELLS + z`, each triangle counted at its centroid.
    pub histogram: Vec<f32>,
}

impl Descriptor {
    /// The descriptor of a triangle mesh; `None` when it has no area (or no valid triangle).
    /// Triangles with an index out of range or a non-finite corner are skipped.
    pub fn of(positions: &[Vec3], triangles: &[[u32; 3]]) -> Option<Descriptor> {
        let finite: Vec<Vec3> = positions.iter().copied().filter(|p| p.is_finite()).collect();
        let first = *finite.first()?;
        let (lo, hi) = finite
            .iter()
            .fold((first, first), |(lo, hi), p| (lo.min(*p), hi.max(*p)));
        let extent = (hi - lo).max(Vec3::splat((hi - lo).max_element() * 1e-6 + f32::MIN_POSITIVE));
        let mut histogram = vec![0.0f32; HISTOGRAM];
        let cell = |x: f32| ((x * CELLS as f32).floor().max(0.0) as usize).min(CELLS - 1);
        for t in triangles {
            let Some([a, b, c]) = corners(positions, t) else {
                continue;
            };
            let area = 0.5 * (b - a).cross(c - a).length();
            if !area.is_finite() {
                continue;
            }
            let u = ((a + b + c) / 3.0 - lo) / extent;
            histogram[(cell(u.x) * CELLS + cell(u.y)) * CELLS + cell(u.z)] += area;
        }
        let total: f32 = histogram.iter().sum();
        if !(total.is_finite() && total > 0.0) {
            return None;
        }
        histogram.iter_mut().for_each(|h| *h /= total);
        Some(Descriptor { lo, extent, histogram })
    }

    /// How alike two shapes are, 0 to 1 (1: the same spread of area over boxes of the same
    /// proportions): the histograms' overlap (sum of the smaller share per cell) times
    /// `exp(-d)`, `d` the summed absolute log-ratios of the boxes' sides, each box scaled to a
    /// longest side of 1.
    pub fn similarity(&self, other: &Descriptor) -> f32 {
        let overlap: f32 = self
            .histogram
            .iter()
            .zip(&other.histogram)
            .map(|(a, b)| a.min(*b))
            .sum();
        let (ra, rb) = (
            self.extent / self.extent.max_element(),
            other.extent / other.extent.max_element(),
        );
        let d = (ra / rb).to_array().iter().map(|r| r.ln().abs()).sum::<f32>();
        let s = overlap * (-d).exp();
        if s.is_finite() {
            s
        } else {
            0.0
        }
    }

    /// `p`, a point of the shape this describes, moved to the same place relative to `other`'s
    /// box.
    pub fn move_to(&self, p: Vec3, other: &Descriptor) -> Vec3 {
        other.lo + (p - self.lo) / self.extent * other.extent
    }
}

fn corners(positions: &[Vec3], t: &[u32; 3]) -> Option<[Vec3; 3]> {
    let c = [
        *positions.get(t[0] as usize)?,
        *positions.get(t[1] as usize)?,
        *positions.get(t[2] as usize)?,
    ];
    c.iter().all(|p| p.is_finite()).then_some(c)
}

/// One artist's rig in the library.
#[derive(Debug, Clone, PartialEq)]
pub struct LibraryRig {
    /// Where it came from (the manifest id of the training character).
    pub id: String,
    pub descriptor: Descriptor,
    /// Joint names (unique, without line breaks).
    pub names: Vec<String>,
    /// Parents, listed before their children.
    pub parents: Vec<Option<usize>>,
    /// Bind-pose joint positions in the space of the mesh `descriptor` describes.
    pub joints: Vec<Vec3>,
    /// The humanoid template's joints placed on the same mesh, for a character the humanoid
    /// template takes for a standing humanoid: what carries this rig onto another humanoid by
    /// its landmarks rather than by the boxes (`rigml_rig::library`). `None` for other shapes.
    pub anchors: Option<Anchors>,
}

/// A skeleton placed by a template on a library character's mesh (names, parents listed before
/// their children, positions in the mesh's space): the landmarks its artist's joints are
/// carried by.
#[derive(Debug, Clone, PartialEq)]
pub struct Anchors {
    pub names: Vec<String>,
    pub parents: Vec<Option<usize>>,
    pub heads: Vec<Vec3>,
}

impl Anchors {
    /// Checked anchors: matching lengths, at least two joints, parents before children, finite
    /// positions, names without line breaks.
    pub fn new(names: Vec<String>, parents: Vec<Option<usize>>, heads: Vec<Vec3>) -> Result<Anchors, String> {
        let n = names.len();
        if n < 2 || parents.len() != n || heads.len() != n {
            return Err(format!(
                "{n} anchor names, {} parents, {} positions",
                parents.len(),
                heads.len()
            ));
        }
        if parents.iter().enumerate().any(|(j, p)| p.is_some_and(|p| p >= j)) {
            return Err("an anchor is listed before its parent".into());
        }
        if heads.iter().any(|h| !h.is_finite()) {
            return Err("an anchor has a non-finite position".into());
        }
        if names.iter().any(|n| n.contains(['\n', '\r'])) {
            return Err("an anchor name holds a line break".into());
        }
        Ok(Anchors { names, parents, heads })
    }
}

/// The rigs, and the similarity at which one is used.
#[derive(Debug, Clone, PartialEq)]
pub struct RigLibrary {
    pub rigs: Vec<LibraryRig>,
    pub threshold: f32,
}

impl Default for RigLibrary {
    fn default() -> Self {
        RigLibrary {
            rigs: Vec::new(),
            threshold: DEFAULT_THRESHOLD,
        }
    }
}

impl RigLibrary {
    /// Add a rigged character: its mesh, and its joints (names, parents, bind positions in the
    /// mesh's space). Joints are reordered so that parents come first; repeated names get a
    /// numbered suffix and line breaks become spaces. Refused when the mesh has no area, the
    /// lists' lengths differ, a parent is out of range or the parents form a cycle.
    pub fn add(
        &mut self,
        id: &str,
        positions: &[Vec3],
        triangles: &[[u32; 3]],
        names: &[String],
        parents: &[Option<usize>],
        joints: &[Vec3],
    ) -> Result<(), LearnError> {
        let bad = |problem: String| LearnError::Data(format!("rig library, {id}: {problem}"));
        let descriptor = Descriptor::of(positions, triangles).ok_or_else(|| bad("the mesh has no area".into()))?;
        let n = joints.len();
        if n == 0 || names.len() != n || parents.len() != n {
            return Err(bad(format!(
                "{n} joints, {} names, {} parents",
                names.len(),
                parents.len()
            )));
        }
        if let Some(j) = joints.iter().position(|p| !p.is_finite()) {
            return Err(bad(format!("joint {j} has a non-finite position")));
        }
        if let Some(j) = parents.iter().position(|p| p.is_some_and(|p| p >= n)) {
            return Err(bad(format!("joint {j}'s parent is out of range")));
        }
        let order = parents_first(parents).ok_or_else(|| bad("the joints' parents form a cycle".into()))?;
        let mut at = vec![0usize; n];
        for (k, &j) in order.iter().enumerate() {
            at[j] = k;
        }
        let mut used = std::collections::HashSet::new();
        let names = order
            .iter()
            .map(|&j| {
                let base = names[j].replace(['\n', '\r'], " ");
                let mut name = base.clone();
                let mut k = 2;
                while !used.insert(name.clone()) {
                    name = format!("{base}.{k}");
                    k += 1;
                }
                name
            })
            .collect();
        self.rigs.push(LibraryRig {
            id: id.replace(['\n', '\r'], " "),
            descriptor,
            names,
            parents: order.iter().map(|&j| parents[j].map(|p| at[p])).collect(),
            joints: order.iter().map(|&j| joints[j]).collect(),
            anchors: None,
        });
        Ok(())
    }

    /// The rigs by similarity to a mesh described by `d`, most alike first.
    pub fn ranked(&self, d: &Descriptor) -> Vec<(f32, &LibraryRig)> {
        let mut all: Vec<(f32, &LibraryRig)> = self.rigs.iter().map(|r| (d.similarity(&r.descriptor), r)).collect();
        all.sort_by(|a, b| b.0.total_cmp(&a.0));
        all
    }

    /// The most alike rig for a mesh described by `d`, and its similarity; `None` for an empty
    /// library.
    pub fn best(&self, d: &Descriptor) -> Option<(f32, &LibraryRig)> {
        self.rigs
            .iter()
            .map(|r| (d.similarity(&r.descriptor), r))
            .max_by(|a, b| a.0.total_cmp(&b.0))
    }

    /// Store the library in `model` (replacing one stored before).
    pub fn write_into(&self, model: &mut ModelFile) {
        model.weights.retain(|k, _| !k.starts_with("library."));
        model.metadata.retain(|k, _| !k.starts_with("rigml.skeleton.library."));
        let n = self.rigs.len();
        let mut histograms = Vec::with_capacity(n * HISTOGRAM);
        let mut boxes = Vec::with_capacity(n * 6);
        let (mut counts, mut joints, mut parents) = (Vec::new(), Vec::new(), Vec::new());
        for (i, r) in self.rigs.iter().enumerate() {
            histograms.extend_from_slice(&r.descriptor.histogram);
            boxes.extend(r.descriptor.lo.to_array());
            boxes.extend(r.descriptor.extent.to_array());
            counts.push(r.joints.len() as f32);
            joints.extend(r.joints.iter().flat_map(|p| p.to_array()));
            parents.extend(r.parents.iter().map(|p| p.map_or(-1.0, |p| p as f32)));
            model
                .metadata
                .insert(format!("rigml.skeleton.library.{i}.id"), r.id.clone());
            model
                .metadata
                .insert(format!("rigml.skeleton.library.{i}.names"), r.names.join("\n"));
        }
        let (mut anchor_counts, mut anchor_heads, mut anchor_parents) = (Vec::new(), Vec::new(), Vec::new());
        for (i, r) in self.rigs.iter().enumerate() {
            let Some(a) = &r.anchors else {
                anchor_counts.push(0.0);
                continue;
            };
            anchor_counts.push(a.heads.len() as f32);
            anchor_heads.extend(a.heads.iter().flat_map(|p| p.to_array()));
            anchor_parents.extend(a.parents.iter().map(|p| p.map_or(-1.0, |p| p as f32)));
            model
                .metadata
                .insert(format!("rigml.skeleton.library.{i}.anchor_names"), a.names.join("\n"));
        }
        let m = parents.len();
        let w: &mut Weights = &mut model.weights;
        if anchor_counts.iter().any(|&c| c > 0.0) {
            let k = anchor_parents.len();
            w.insert("library.anchor_counts".into(), (vec![n], anchor_counts));
            w.insert("library.anchor_joints".into(), (vec![k, 3], anchor_heads));
            w.insert("library.anchor_parents".into(), (vec![k], anchor_parents));
        }
        w.insert("library.histograms".into(), (vec![n, HISTOGRAM], histograms));
        w.insert("library.boxes".into(), (vec![n, 6], boxes));
        w.insert("library.counts".into(), (vec![n], counts));
        w.insert("library.joints".into(), (vec![m, 3], joints));
        w.insert("library.parents".into(), (vec![m], parents));
        model.metadata.insert(KEY_COUNT.into(), n.to_string());
        model.metadata.insert(KEY_THRESHOLD.into(), self.threshold.to_string());
    }

    /// The library stored in `model`; `None` when it holds none (models written before the
    /// library existed). Refused when its parts do not fit together.
    pub fn from_model(model: &ModelFile) -> Result<Option<RigLibrary>, LearnError> {
        let Some(count) = model.metadata.get(KEY_COUNT) else {
            return Ok(None);
        };
        let bad = |problem: String| LearnError::Model(format!("the model's rig library: {problem}"));
        let n: usize = count.parse().map_err(|_| bad(format!("{KEY_COUNT} is {count:?}")))?;
        let tensor = |name: &str, len: usize| -> Result<&[f32], LearnError> {
            match model.weights.get(name) {
                Some((_, v)) if v.len() == len => Ok(v),
                Some((_, v)) => Err(bad(format!("{name} holds {} values, not {len}", v.len()))),
                None => Err(bad(format!("no {name} tensor"))),
            }
        };
        let histograms = tensor("library.histograms", n * HISTOGRAM)?;
        let boxes = tensor("library.boxes", n * 6)?;
        let counts = tensor("library.counts", n)?;
        let total: usize = counts.iter().map(|&c| c.max(0.0) as usize).sum();
        let joints = tensor("library.joints", total * 3)?;
        let parents = tensor("library.parents", total)?;
        if [histograms, boxes, joints]
            .iter()
            .any(|t| t.iter().any(|v| !v.is_finite()))
        {
            return Err(bad("it holds non-finite values".into()));
        }
        if boxes.chunks_exact(6).any(|b| b[3..].iter().any(|&e| e <= 0.0)) {
            return Err(bad("a rig's box has a side of no length".into()));
        }
        let threshold = model.setting(KEY_THRESHOLD).unwrap_or(DEFAULT_THRESHOLD);
        // Anchors are optional (libraries written before them have none).
        let anchor_counts = match model.weights.get("library.anchor_counts") {
            Some(_) => Some(tensor("library.anchor_counts", n)?),
            None => None,
        };
        let anchor_total: usize = anchor_counts.map_or(0, |c| c.iter().map(|&c| c.max(0.0) as usize).sum());
        let (anchor_heads, anchor_parents) = match anchor_counts {
            Some(_) => (
                tensor("library.anchor_joints", anchor_total * 3)?,
                tensor("library.anchor_parents", anchor_total)?,
            ),
            None => (&[][..], &[][..]),
        };
        let mut anchor_start = 0usize;
        let mut rigs = Vec::with_capacity(n);
        let mut start = 0usize;
        for i in 0..n {
            let k = counts[i].max(0.0) as usize;
            let names: Vec<String> = model
                .metadata
                .get(&format!("rigml.skeleton.library.{i}.names"))
                .map(|s| s.split('\n').map(str::to_string).collect())
                .unwrap_or_default();
            if names.len() != k || k == 0 {
                return Err(bad(format!("rig {i} has {k} joints and {} names", names.len())));
            }
            let rig_parents: Vec<Option<usize>> = parents[start..start + k]
                .iter()
                .map(|&p| (p >= 0.0).then_some(p as usize))
                .collect();
            if rig_parents.iter().enumerate().any(|(j, p)| p.is_some_and(|p| p >= j)) {
                return Err(bad(format!("rig {i} lists a joint before its parent")));
            }
            let b = &boxes[i * 6..i * 6 + 6];
            let ka = anchor_counts.map_or(0, |c| c[i].max(0.0) as usize);
            let anchors = if ka == 0 {
                None
            } else {
                let names: Vec<String> = model
                    .metadata
                    .get(&format!("rigml.skeleton.library.{i}.anchor_names"))
                    .map(|s| s.split('\n').map(str::to_string).collect())
                    .unwrap_or_default();
                let parents = anchor_parents[anchor_start..anchor_start + ka]
                    .iter()
                    .map(|&p| (p >= 0.0).then_some(p as usize))
                    .collect();
                let heads = anchor_heads[anchor_start * 3..(anchor_start + ka) * 3]
                    .chunks_exact(3)
                    .map(|c| Vec3::new(c[0], c[1], c[2]))
                    .collect();
                anchor_start += ka;
                Some(Anchors::new(names, parents, heads).map_err(|e| bad(format!("rig {i}: {e}")))?)
            };
            rigs.push(LibraryRig {
                anchors,
                id: model
                    .metadata
                    .get(&format!("rigml.skeleton.library.{i}.id"))
                    .cloned()
                    .unwrap_or_else(|| format!("rig {i}")),
                descriptor: Descriptor {
                    lo: Vec3::new(b[0], b[1], b[2]),
                    extent: Vec3::new(b[3], b[4], b[5]),
                    histogram: histograms[i * HISTOGRAM..(i + 1) * HISTOGRAM].to_vec(),
                },
                names,
                parents: rig_parents,
                joints: joints[start * 3..(start + k) * 3]
                    .chunks_exact(3)
                    .map(|c| Vec3::new(c[0], c[1], c[2]))
                    .collect(),
            });
            start += k;
        }
        Ok(Some(RigLibrary { rigs, threshold }))
    }
}

/// An order of the joints with every parent before its children (roots in their own order,
/// children depth first); `None` when the parents form a cycle.
fn parents_first(parents: &[Option<usize>]) -> Option<Vec<usize>> {
    let n = parents.len();
    let mut children = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for (j, p) in parents.iter().enumerate() {
        match p {
            Some(p) => children[*p].push(j),
            None => roots.push(j),
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(j) = stack.pop() {
        order.push(j);
        stack.extend(children[j].iter().rev());
    }
    (order.len() == n).then_some(order)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A box mesh from `lo` to `hi` (12 triangles).
    fn cuboid(lo: Vec3, hi: Vec3) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let p: Vec<Vec3> = (0..8)
            .map(|i| {
                Vec3::new(
                    if i & 1 == 0 { lo.x } else { hi.x },
                    if i & 2 == 0 { lo.y } else { hi.y },
                    if i & 4 == 0 { lo.z } else { hi.z },
                )
            })
            .collect();
        let t = vec![
            [0, 1, 3],
            [0, 3, 2],
            [4, 6, 7],
            [4, 7, 5],
            [0, 4, 5],
            [0, 5, 1],
            [2, 3, 7],
            [2, 7, 6],
            [0, 2, 6],
            [0, 6, 4],
            [1, 5, 7],
            [1, 7, 3],
        ];
        (p, t)
    }

    #[test]
    fn a_shape_is_most_like_itself_and_less_like_other_proportions() {
        let (p, t) = cuboid(Vec3::ZERO, Vec3::new(1.0, 2.0, 0.5));
        let a = Descriptor::of(&p, &t).unwrap();
        assert!((a.histogram.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!((a.similarity(&a) - 1.0).abs() < 1e-5);
        // Scaled and moved: the same shape.
        let moved: Vec<Vec3> = p.iter().map(|q| *q * 3.0 + Vec3::splat(5.0)).collect();
        let b = Descriptor::of(&moved, &t).unwrap();
        assert!((a.similarity(&b) - 1.0).abs() < 1e-4, "{}", a.similarity(&b));
        // Twice as wide: the boxes' proportions differ by ln 2.
        let (w, _) = cuboid(Vec3::ZERO, Vec3::new(2.0, 2.0, 0.5));
        let c = Descriptor::of(&w, &t).unwrap();
        let s = a.similarity(&c);
        assert!(s < 0.6 && s > 0.0, "{s}");
        assert_eq!(a.similarity(&c), c.similarity(&a));
        // A point keeps its place relative to the box.
        assert_eq!(a.move_to(Vec3::new(0.5, 1.0, 0.25), &b), Vec3::new(6.5, 8.0, 5.75));
        // No area, no descriptor; broken triangles are skipped.
        assert!(Descriptor::of(&p, &[]).is_none());
        assert!(Descriptor::of(&p, &[[0, 1, 99]]).is_none());
    }

    #[test]
    fn rigs_are_stored_parents_first_and_read_back_from_a_model_file() {
        let (p, t) = cuboid(Vec3::ZERO, Vec3::ONE);
        let mut library = RigLibrary::default();
        // Joint 0's parent is listed after it; two joints share a name.
        let names: Vec<String> = ["hand", "arm", "hand", "root"].map(String::from).to_vec();
        let parents = [Some(1), Some(3), Some(1), None];
        let joints = [Vec3::X, Vec3::Y, Vec3::Z, Vec3::ZERO];
        library.add("box", &p, &t, &names, &parents, &joints).unwrap();
        let (long, _) = cuboid(Vec3::ZERO, Vec3::new(3.0, 1.0, 1.0));
        library.add("plain", &long, &t, &names, &parents, &joints).unwrap();
        library.rigs[0].anchors = Some(
            Anchors::new(
                vec!["Hips".into(), "Head".into()],
                vec![None, Some(0)],
                vec![Vec3::ZERO, Vec3::Y],
            )
            .unwrap(),
        );
        // Anchors are checked.
        assert!(Anchors::new(vec!["a".into()], vec![None], vec![Vec3::ZERO]).is_err());
        assert!(Anchors::new(vec!["a".into(), "b".into()], vec![Some(1), None], vec![Vec3::ZERO; 2]).is_err());
        assert!(Anchors::new(vec!["a".into(), "b".into()], vec![None, Some(0)], vec![Vec3::NAN; 2]).is_err());
        let rig = &library.rigs[0];
        assert_eq!(rig.names, ["root", "arm", "hand", "hand.2"]);
        assert_eq!(rig.parents, [None, Some(0), Some(1), Some(1)]);
        assert_eq!(rig.joints, [Vec3::ZERO, Vec3::Y, Vec3::X, Vec3::Z]);
        // Cycles and mismatched lists are refused.
        assert!(library
            .add("cycle", &p, &t, &names[..2], &[Some(1), Some(0)], &joints[..2])
            .is_err());
        assert!(library.add("short", &p, &t, &names, &parents[..3], &joints).is_err());
        assert_eq!(library.rigs.len(), 2);

        let mut model = ModelFile {
            weights: HashMap::new(),
            metadata: HashMap::new(),
        };
        assert_eq!(RigLibrary::from_model(&model).unwrap(), None);
        library.threshold = 0.7;
        library.write_into(&mut model);
        let bytes = model.to_bytes().unwrap();
        let read = ModelFile::read(&bytes, "test").unwrap();
        assert_eq!(RigLibrary::from_model(&read).unwrap(), Some(library.clone()));
        let d = Descriptor::of(&p, &t).unwrap();
        let (s, best) = library.best(&d).unwrap();
        assert!((s - 1.0).abs() < 1e-5 && best.id == "box");
        // A damaged library is an error, not a wrong rig.
        let mut flat = model.clone();
        flat.weights.get_mut("library.boxes").unwrap().1[4] = 0.0;
        assert!(RigLibrary::from_model(&flat).is_err());
        let mut nan = model.clone();
        nan.weights.get_mut("library.joints").unwrap().1[0] = f32::NAN;
        assert!(RigLibrary::from_model(&nan).is_err());
        let mut nan = model.clone();
        nan.weights.get_mut("library.anchor_joints").unwrap().1[0] = f32::NAN;
        assert!(RigLibrary::from_model(&nan).is_err());
        let mut short = model.clone();
        short.weights.get_mut("library.anchor_parents").unwrap().1.pop();
        assert!(RigLibrary::from_model(&short).is_err());
        model.weights.get_mut("library.parents").unwrap().1.pop();
        assert!(RigLibrary::from_model(&model).is_err());
    }
}
