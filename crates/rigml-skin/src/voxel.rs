//! `voxel`: geodesic voxel binding (Dionne & de Lasa 2013, ALGORITHMS.md §3).
//!
//! 1. Voxelise the normalised mesh ([`rigml_geom::VoxelGrid`], `resolution` voxels along the
//!    longest side) with interior fill.
//! 2. Seed every bone's voxels along its segment; a bone with no solid voxel on it (outside the
//!    mesh) is seeded instead at the solid voxels nearest to it, at their true distance.
//! 3. One multi-label Dijkstra (bucket queue) through solid voxels (26-neighbourhood, Euclidean steps) keeps the
//!    `top_k` nearest distinct bones of every voxel — the cost of `top_k` single-bone searches
//!    rather than one per bone.
//! 4. A vertex's distance to a bone is its voxel's label plus the voxel-centre-to-vertex
//!    distance, and `w = (1 / ((1 - α) d + α d²))^falloff` with α the bind smoothness (the
//!    formula's base is from a secondary summary of the paper, unverified — see ALGORITHMS.md;
//!    the exponent is Maya's "falloff", chosen on the val split, see [`DEFAULT_FALLOFF`]).

use crate::post::{finish, Prepared, Row};
use crate::{SkinError, SkinSolver, SolveOptions};
use glam::Vec3;
use rayon::prelude::*;
use rigml_core::{Mesh, Skeleton, Skin};
use rigml_geom::{segment_distance, Cell, VoxelGrid};

/// Geodesic voxel binding.
#[derive(Debug, Clone, Copy)]
pub struct Voxel {
    /// Voxels along the longest side of the mesh bounds (Maya's default is 256); lowered for a
    /// character whose solid would exceed [`MAX_SOLID_VOXELS`].
    pub resolution: usize,
    /// Bind smoothness α in `[0, 1]`.
    pub smoothness: f32,
    /// Exponent of the weight falloff (at least 1): the weight ratio of two bones is at most
    /// `(d_near / d_far)^falloff`, so larger is more rigid.
    pub falloff: f32,
}

/// Falloff chosen on the val split (`rigml eval --split val --methods voxel`, smoothness 0.5,
/// resolution 256; precision / recall / L1 / deform_a mean): 2 gave 0.555 / 0.913 / 0.886 /
/// 0.0231, 6 gave 0.606 / 0.899 / 0.749, 8 gave 0.638 / 0.876 / 0.722 / 0.0198, 10 gave
/// 0.651 / 0.861 / 0.708, 12 gave 0.665 / 0.847 / 0.699 / 0.0194, 16 gave 0.672 / 0.826 / 0.718;
/// 12 has the lowest L1 and deformation error.
pub const DEFAULT_FALLOFF: f32 = 12.0;

impl Default for Voxel {
    fn default() -> Self {
        Self {
            resolution: 256,
            smoothness: 0.5,
            falloff: DEFAULT_FALLOFF,
        }
    }
}

/// A label is packed into a `u32`, distance above joint (so that comparing packed labels
/// compares distances): half the memory of a pair, which keeps the label field of a
/// resolution-256 character in the CPU cache.
const JOINT_BITS: u32 = 16;
const JOINT_MASK: u32 = (1 << JOINT_BITS) - 1;
/// An unused label slot (joint bits all ones: no real joint matches).
const EMPTY: u32 = u32::MAX;
/// Largest distance in units a label holds (4095 voxels, 16 grids of 256 across): a bone
/// farther than that from the solid gets no label and its vertices fall back to the nearest
/// bone in post-processing.
const MAX_UNITS: u32 = (1 << (32 - JOINT_BITS)) - 2;

/// Most solid voxels searched: keeps a bulky character at resolution 256 within seconds (a
/// sphere filling the grid would be about 9 million) at the cost of resolution for that
/// character only.
pub const MAX_SOLID_VOXELS: usize = 1 << 19;

impl SkinSolver for Voxel {
    fn name(&self) -> &'static str {
        "voxel"
    }

    fn solve(&self, mesh: &Mesh, skeleton: &Skeleton, options: &SolveOptions) -> Result<Skin, SkinError> {
        let prep = Prepared::new(mesh, skeleton)?;
        let positions = &prep.welded.positions;
        let mut grid =
            VoxelGrid::new(positions, &prep.welded.triangles, self.resolution).ok_or(SkinError::EmptyMesh)?;
        // Bulky shapes (a round head, a blob) fill far more voxels than a limb; above the budget
        // the resolution is lowered once so that the solid fits it.
        let [_, boundary, interior] = grid.counts();
        if boundary + interior > MAX_SOLID_VOXELS {
            let shrink = (MAX_SOLID_VOXELS as f64 / (boundary + interior) as f64).cbrt();
            let resolution = ((self.resolution.max(2) as f64 * shrink) as usize).max(8);
            grid = VoxelGrid::new(positions, &prep.welded.triangles, resolution).ok_or(SkinError::EmptyMesh)?;
        }
        if prep.bones.joint_count >= JOINT_MASK as usize {
            return Err(SkinError::Failed {
                solver: "voxel",
                problem: format!(
                    "{} joints; geodesic voxel binding supports fewer than {JOINT_MASK}",
                    prep.bones.joint_count
                ),
            });
        }
        let k = options.max_influences.max(1).min(prep.bones.joint_count.max(1));
        let solid = Solid::new(&grid);
        let falloff = f64::from(self.falloff).max(1.0);
        // First the nearest bone of every voxel, then the k nearest within reach of it. The
        // joints are split into one group per thread; the k nearest of the union are among the
        // groups' k nearest, so the groups run in parallel and are merged per vertex.
        let nearest = LabelField::solve(&grid, &solid, &prep, 1, &[], |_| true);
        let factor = reach_factor(falloff);
        let reach: Vec<u32> = (0..solid.cells.len() as u32)
            .map(|s| nearest.nearest_distance(s))
            .map(|d| ((f64::from(d) * factor).min(f64::from(u32::MAX / 4)) as u32).saturating_add(REACH_SLACK))
            .collect();
        drop(nearest);
        let groups = rayon::current_num_threads().clamp(1, prep.bones.joint_count.max(1));
        let fields: Vec<LabelField> = (0..groups)
            .into_par_iter()
            .map(|g| LabelField::solve(&grid, &solid, &prep, k, &reach, |j| j as usize % groups == g))
            .collect();
        let alpha = f64::from(self.smoothness.clamp(0.0, 1.0));
        let floor = f64::from(grid.size) * 0.5;
        let rows: Vec<Row> = positions
            .par_iter()
            .map(|&p| {
                let Some(labels) = labels_near(&grid, &solid, &fields, k, p) else {
                    return Row::new();
                };
                let base = |d: f32| {
                    let d = f64::from(d).max(floor);
                    (1.0 - alpha) * d + alpha * d * d
                };
                let distances: Vec<(u32, f64)> = labels
                    .iter()
                    .filter(|l| l.1.is_finite())
                    .map(|&(j, d, center)| (j, base(d + (p - center).length())))
                    .collect();
                // Weights relative to the nearest bone's, in (0, 1]: the absolute ones
                // (1 / d)^falloff overflow for small d.
                let nearest = distances.iter().map(|e| e.1).fold(f64::INFINITY, f64::min);
                distances
                    .iter()
                    .map(|&(j, b)| (j, (nearest / b).powf(falloff) as f32))
                    .collect()
            })
            .collect();
        finish(&prep, rows, options)
    }
}

/// Distances are integers in units of `1 / UNITS` voxel: the queue is a ring of buckets
/// (Dial's algorithm) instead of a binary heap, several times faster on millions of voxels.
const UNITS: f32 = 16.0;

/// Buckets in the ring: more than the largest step (√3 voxels = 28 units).
const RING: usize = 32;

/// Labels are propagated only up to `reach_factor ×` the voxel's nearest-bone distance plus
/// `REACH_SLACK` units (two voxels, for the vertex's offset from its voxel centre and the
/// rounding): farther bones would get less than `REACH_WEIGHT` of the nearest's weight, below
/// the default `min_weight` of 1 % that post-processing drops anyway. The pruning makes the
/// k-label search cost little more than the 1-label one.
const REACH_WEIGHT: f64 = 0.005;
const REACH_SLACK: u32 = 2 * UNITS as u32;

/// Distance ratio beyond which a bone's weight is below `REACH_WEIGHT` of the nearest's: the
/// weight ratio is at most `(d_near / d_far)^falloff`. Capped at 4 for a soft falloff.
fn reach_factor(falloff: f64) -> f64 {
    REACH_WEIGHT.powf(-1.0 / falloff.max(1.0)).min(4.0)
}

/// The non-exterior voxels, numbered.
struct Solid {
    /// Solid number of each grid voxel (`u32::MAX` for exterior).
    index: Vec<u32>,
    /// Grid index of each solid voxel.
    cells: Vec<u32>,
}

impl Solid {
    fn new(grid: &VoxelGrid) -> Solid {
        let mut index = vec![u32::MAX; grid.cells.len()];
        let mut cells = Vec::new();
        for (i, c) in grid.cells.iter().enumerate() {
            if *c != Cell::Exterior {
                index[i] = cells.len() as u32;
                cells.push(i as u32);
            }
        }
        Solid { index, cells }
    }
}

/// Per solid voxel, its `k` nearest bones (of one joint group) by geodesic distance through
/// the solid.
struct LabelField {
    /// A block of `1 + k` entries per solid voxel: first the largest distance accepted, then
    /// the packed labels (`distance << JOINT_BITS | joint`), unused = `EMPTY`. The limit sits
    /// beside the labels so that an offer touches one cache line.
    blocks: Vec<u32>,
    k: usize,
}

impl LabelField {
    /// `reach`: per solid voxel, the largest distance accepted (empty = no limit).
    fn solve(
        grid: &VoxelGrid,
        solid: &Solid,
        prep: &Prepared,
        k: usize,
        reach: &[u32],
        in_group: impl Fn(u32) -> bool,
    ) -> LabelField {
        let cells = &solid.cells;
        let mut blocks = vec![EMPTY; cells.len() * (k + 1)];
        for (s, block) in blocks.chunks_exact_mut(k + 1).enumerate() {
            if let Some(first) = block.first_mut() {
                *first = reach.get(s).copied().unwrap_or(MAX_UNITS).min(MAX_UNITS);
            }
        }
        let mut field = LabelField { blocks, k };
        // Seeds `(distance, solid voxel, joint)`: voxels along each segment, or the nearest
        // solid voxels for bones outside the solid.
        let mut seeds: Vec<(u32, u32, u32)> = Vec::new();
        let step = grid.size * 0.5;
        for bone in prep.bones.segments.iter().filter(|b| in_group(b.joint)) {
            let length = (bone.b - bone.a).length();
            let samples = ((length / step).ceil() as usize).clamp(1, 1 << 16);
            let before = seeds.len();
            for i in 0..=samples {
                let p = bone.a.lerp(bone.b, i as f32 / samples as f32);
                if let Some(c) = grid.cell_of(p) {
                    let s = solid.index[grid.index(c)];
                    if s != u32::MAX {
                        seeds.push((0, s, bone.joint));
                    }
                }
            }
            if seeds.len() == before && !cells.is_empty() {
                let distance = |i: u32| segment_distance(grid.center(grid.coords(i as usize)), bone.a, bone.b);
                let best = cells
                    .par_iter()
                    .map(|&i| distance(i))
                    .reduce(|| f32::INFINITY, f32::min);
                for (s, &i) in cells.iter().enumerate() {
                    let d = distance(i);
                    if d <= best + grid.size {
                        seeds.push((to_units(d, grid.size), s as u32, bone.joint));
                    }
                }
            }
        }
        // Latest distance last, so that seeds are taken from the end in increasing order.
        seeds.sort_unstable_by(|a, b| b.cmp(a));
        let [nx, ny, _] = grid.dims;
        let mut steps = Vec::with_capacity(26);
        for dz in -1i64..=1 {
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    if (dx, dy, dz) != (0, 0, 0) {
                        let cost = ((dx * dx + dy * dy + dz * dz) as f32).sqrt() * UNITS;
                        let offset = (dz * ny as i64 + dy) * nx as i64 + dx;
                        steps.push((offset, cost.round() as u32));
                    }
                }
            }
        }
        let mut ring: Vec<Vec<(u32, u32)>> = vec![Vec::new(); RING];
        let mut queued = 0usize;
        let mut current = 0u32;
        let mut bucket = Vec::new();
        loop {
            if queued == 0 {
                // Jump to the next seed, if any.
                match seeds.last() {
                    Some(&(d, _, _)) => current = current.max(d),
                    None => break,
                }
            }
            while let Some(&(d, s, joint)) = seeds.last() {
                if d > current {
                    break;
                }
                seeds.pop();
                let d = d.max(current);
                if field.offer(s, joint, d) {
                    ring[d as usize % RING].push((s, joint));
                    queued += 1;
                }
            }
            std::mem::swap(&mut bucket, &mut ring[current as usize % RING]);
            queued -= bucket.len();
            for (s, joint) in bucket.drain(..) {
                if !field.current(s, joint, current) {
                    continue;
                }
                let here = cells[s as usize] as i64;
                for &(offset, cost) in &steps {
                    // Solid voxels never touch the grid border (see VoxelGrid), so every
                    // neighbour index is inside the grid; checked anyway.
                    let Some(&t) = usize::try_from(here + offset).ok().and_then(|n| solid.index.get(n)) else {
                        continue;
                    };
                    let d = current + cost;
                    if t != u32::MAX && field.offer(t, joint, d) {
                        ring[d as usize % RING].push((t, joint));
                        queued += 1;
                    }
                }
            }
            current += 1;
        }
        field
    }

    /// The labels `(joint, distance in units)` of solid voxel `s`, nearest first.
    fn labels(&self, s: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        let start = s as usize * (self.k + 1);
        let mut slots: Vec<u32> = self.blocks.get(start + 1..start + 1 + self.k).unwrap_or(&[]).to_vec();
        slots.sort_unstable();
        slots
            .into_iter()
            .filter(|&e| e != EMPTY)
            .map(|e| (e & JOINT_MASK, e >> JOINT_BITS))
    }

    /// Distance in units of the nearest label of solid voxel `s` (`u32::MAX` when none).
    fn nearest_distance(&self, s: u32) -> u32 {
        let start = s as usize * (self.k + 1);
        let slots = self.blocks.get(start + 1..start + 1 + self.k).unwrap_or(&[]);
        slots
            .iter()
            .filter(|&&e| e != EMPTY)
            .map(|e| e >> JOINT_BITS)
            .min()
            .unwrap_or(u32::MAX)
    }

    /// Record `joint` at distance `d` at solid voxel `s` if it is within the voxel's reach and
    /// among its `k` nearest; true when the label improved (and must be propagated).
    fn offer(&mut self, s: u32, joint: u32, d: u32) -> bool {
        let start = s as usize * (self.k + 1);
        let Some(block) = self.blocks.get_mut(start..start + 1 + self.k) else {
            return false;
        };
        let Some((&mut limit, slots)) = block.split_first_mut() else {
            return false;
        };
        if d > limit {
            return false;
        }
        let label = (d << JOINT_BITS) | joint;
        let mut worst = 0;
        for i in 0..slots.len() {
            if slots[i] & JOINT_MASK == joint {
                if label < slots[i] {
                    slots[i] = label;
                    return true;
                }
                return false;
            }
            if slots[i] > slots[worst] {
                worst = i;
            }
        }
        match slots.get_mut(worst) {
            Some(slot) if label < *slot => {
                *slot = label;
                true
            }
            _ => false,
        }
    }

    /// Whether `(joint, d)` is still the label of voxel `s` (stale queue entries are skipped).
    fn current(&self, s: u32, joint: u32, d: u32) -> bool {
        let start = s as usize * (self.k + 1);
        let label = (d << JOINT_BITS) | joint;
        self.blocks
            .get(start + 1..start + 1 + self.k)
            .is_some_and(|slots| slots.contains(&label))
    }
}

/// The `k` nearest labels over all groups at the voxel holding `p`, or at its solid
/// 26-neighbour nearest to `p` when that voxel is exterior: `(joint, distance, voxel centre)`.
fn labels_near(
    grid: &VoxelGrid,
    solid: &Solid,
    fields: &[LabelField],
    k: usize,
    p: Vec3,
) -> Option<Vec<(u32, f32, Vec3)>> {
    let c = grid.cell_of(p)?;
    let mut best: Option<(f32, [usize; 3])> = None;
    for dz in -1i64..=1 {
        for dy in -1i64..=1 {
            for dx in -1i64..=1 {
                let n = [c[0] as i64 + dx, c[1] as i64 + dy, c[2] as i64 + dz];
                if n.iter().zip(grid.dims).any(|(&v, dim)| v < 0 || v >= dim as i64) {
                    continue;
                }
                let n = n.map(|v| v as usize);
                if solid.index[grid.index(n)] == u32::MAX {
                    continue;
                }
                let d = if n == c {
                    f32::NEG_INFINITY
                } else {
                    (grid.center(n) - p).length()
                };
                if best.is_none_or(|b| d < b.0) {
                    best = Some((d, n));
                }
            }
        }
    }
    let (_, n) = best?;
    let s = solid.index[grid.index(n)] as usize;
    let center = grid.center(n);
    let mut labels: Vec<(u32, u32)> = Vec::new();
    for field in fields {
        labels.extend(field.labels(s as u32));
    }
    labels.sort_by_key(|l| l.1);
    labels.truncate(k);
    Some(
        labels
            .iter()
            .map(|&(j, d)| (j, d as f32 / UNITS * grid.size, center))
            .collect(),
    )
}

/// A length in queue units.
fn to_units(d: f32, size: f32) -> u32 {
    (d / size * UNITS).round().clamp(0.0, (u32::MAX / 2) as f32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{check, synthetic};

    #[test]
    fn voxel_binding_on_an_open_tube_shell() {
        let (mesh, skeleton) = synthetic::tube_chain(4, 8, 12, 0.2, 1.0);
        let solver = Voxel {
            resolution: 64,
            ..Default::default()
        };
        let skin = solver.solve(&mesh, &skeleton, &SolveOptions::default()).unwrap();
        let prep = Prepared::new(&mesh, &skeleton).unwrap();
        assert!(check::failures(&skin, mesh.vertex_count(), 4, &prep.bones).is_empty());
        for (v, p) in mesh.positions.iter().enumerate() {
            let frac = p.y.fract();
            if (0.3..0.7).contains(&frac) && p.y < 4.0 {
                assert_eq!(skin.influences(v)[0].joint, p.y.floor() as u32, "vertex {v} at {p}");
            }
        }
    }

    #[test]
    fn voxel_binding_through_the_filled_interior_of_a_closed_tube() {
        let (mesh, skeleton) = synthetic::closed_tube_chain(4, 8, 16, 0.3, 1.0);
        let solver = Voxel {
            resolution: 48,
            ..Default::default()
        };
        let prep = Prepared::new(&mesh, &skeleton).unwrap();
        let grid = VoxelGrid::new(&prep.welded.positions, &prep.welded.triangles, 48).unwrap();
        let axis = grid
            .cell_of(prep.bones.segments[1].a.lerp(prep.bones.segments[1].b, 0.5))
            .unwrap();
        assert_eq!(
            grid.cells[grid.index(axis)],
            Cell::Interior,
            "the bones lie in filled voxels"
        );
        let skin = solver.solve(&mesh, &skeleton, &SolveOptions::default()).unwrap();
        assert!(check::failures(&skin, mesh.vertex_count(), 4, &prep.bones).is_empty());
        for (v, p) in mesh.positions.iter().enumerate() {
            let frac = p.y.fract();
            if (0.3..0.7).contains(&frac) && p.y < 4.0 {
                assert_eq!(skin.influences(v)[0].joint, p.y.floor() as u32, "vertex {v} at {p}");
            }
        }
    }
}
