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
//!    distance, and `w = (1 / ((1 - α) d + α d²))²` with α the bind smoothness (the formula is
//!    from a secondary summary of the paper, unverified — see ALGORITHMS.md).

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
}

impl Default for Voxel {
    fn default() -> Self {
        Self {
            resolution: 256,
            smoothness: 0.5,
        }
    }
}

const NO_JOINT: u32 = u32::MAX;

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
        let k = options.max_influences.max(1).min(prep.bones.joint_count.max(1));
        let solid = Solid::new(&grid);
        // First the nearest bone of every voxel, then the k nearest within reach of it. The
        // joints are split into one group per thread; the k nearest of the union are among the
        // groups' k nearest, so the groups run in parallel and are merged per vertex.
        let nearest = LabelField::solve(&grid, &solid, &prep, 1, &[], |_| true);
        let reach: Vec<u32> = nearest
            .labels
            .iter()
            .map(|l| l.1.saturating_mul(REACH).saturating_add(REACH_SLACK))
            .collect();
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
                labels
                    .iter()
                    .filter(|l| l.0 != NO_JOINT && l.1.is_finite())
                    .map(|&(j, d, center)| {
                        let d = (f64::from(d) + f64::from((p - center).length())).max(floor);
                        let w = 1.0 / ((1.0 - alpha) * d + alpha * d * d);
                        (j, (w * w) as f32)
                    })
                    .collect()
            })
            .collect();
        // Weights can be huge for tiny d; rows are scaled to their max before the f32 rounding
        // matters in post-processing.
        let rows = rows
            .into_iter()
            .map(|mut r| {
                let max = r.iter().map(|e| e.1).fold(0.0f32, f32::max);
                if max.is_finite() && max > 0.0 {
                    r.iter_mut().for_each(|e| e.1 /= max);
                }
                r
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

/// Labels farther than `REACH ×` the voxel's nearest-bone distance (plus `REACH_SLACK` units)
/// are not propagated: their weight would be below `(1 / REACH)^4 ≈ 1 %` of the nearest's at
/// α = 0, and the pruning makes the k-label search cost little more than the 1-label one.
const REACH: u32 = 2;
const REACH_SLACK: u32 = 2 * UNITS as u32;

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
struct LabelField<'a> {
    /// `k` entries per solid voxel: `(joint, distance in units)`, unused = `(NO_JOINT, MAX)`.
    labels: Vec<(u32, u32)>,
    k: usize,
    /// Per solid voxel, the largest distance accepted (empty = no limit).
    reach: &'a [u32],
}

impl<'a> LabelField<'a> {
    fn solve(
        grid: &VoxelGrid,
        solid: &Solid,
        prep: &Prepared,
        k: usize,
        reach: &'a [u32],
        in_group: impl Fn(u32) -> bool,
    ) -> LabelField<'a> {
        let cells = &solid.cells;
        let mut field = LabelField {
            labels: vec![(NO_JOINT, u32::MAX); cells.len() * k],
            k,
            reach,
        };
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

    fn slots(&mut self, s: u32) -> &mut [(u32, u32)] {
        let start = s as usize * self.k;
        &mut self.labels[start..start + self.k]
    }

    /// Record `joint` at distance `d` at solid voxel `s` if it is among its `k` nearest; true
    /// when the label improved (and must be propagated).
    fn offer(&mut self, s: u32, joint: u32, d: u32) -> bool {
        if self.reach.get(s as usize).is_some_and(|&r| d > r) {
            return false;
        }
        let slots = self.slots(s);
        let mut worst = 0;
        for i in 0..slots.len() {
            if slots[i].0 == joint {
                if d < slots[i].1 {
                    slots[i].1 = d;
                    return true;
                }
                return false;
            }
            if slots[i].1 > slots[worst].1 {
                worst = i;
            }
        }
        match slots.get_mut(worst) {
            Some(slot) if d < slot.1 => {
                *slot = (joint, d);
                true
            }
            _ => false,
        }
    }

    /// Whether `(joint, d)` is still the label of voxel `s` (stale queue entries are skipped).
    fn current(&mut self, s: u32, joint: u32, d: u32) -> bool {
        self.slots(s).iter().any(|e| e.0 == joint && e.1 == d)
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
        labels.extend(
            field
                .labels
                .get(s * field.k..(s + 1) * field.k)?
                .iter()
                .filter(|l| l.0 != NO_JOINT),
        );
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
