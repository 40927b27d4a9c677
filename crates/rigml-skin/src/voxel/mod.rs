//! `voxel`: geodesic voxel binding (Dionne & de Lasa 2013, ALGORITHMS.md §3).
//!
//! 1. Voxelise the normalised mesh ([`rigml_geom::VoxelGrid`], `resolution` voxels along the
//!    longest side) with interior fill.
//! 2. Seed every bone's voxels along its segment; a bone with no solid voxel on it (outside the
//!    mesh) is seeded instead at the solid voxels nearest to it, at their true distance.
//! 3. Dijkstra (bucket queue) through solid voxels (26-neighbourhood, Euclidean steps): one
//!    search from all bones gives every voxel its nearest-bone distance, then one search per
//!    joint, in parallel, stops where the joint is too far from a voxel, compared with that
//!    voxel's nearest bone, to keep a weight above the post-processing threshold
//!    (`voxel/search.rs`); the `max_influences` nearest joints of the voxels holding vertices
//!    are kept.
//! 4. A vertex's distance to a bone is its voxel's label plus the voxel-centre-to-vertex
//!    distance, and `w = (1 / ((1 - α) d + α d²))^falloff` with α the bind smoothness (the
//!    formula's base is from a secondary summary of the paper, unverified — see ALGORITHMS.md;
//!    the exponent is Maya's "falloff", chosen on the val split, see [`DEFAULT_FALLOFF`]).

mod search;
mod solid;

use crate::post::{finish, Prepared, Row};
use crate::{SkinError, SkinSolver, SolveOptions};
use glam::Vec3;
use rayon::prelude::*;
use rigml_core::{Mesh, Skeleton, Skin};
use rigml_geom::{segment_distance, VoxelGrid};
use search::{bone_labels, nearest_distances, JointSeeds, JOINT_MASK};
use solid::{Solid, UNITS};

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

/// Most solid voxels searched (2^21, about 2 million; a 50k-vertex tube character at 256 has about
/// 0.55 million, so it runs at full resolution): keeps a bulky character at resolution 256 within seconds (a
/// sphere filling the grid would be about 9 million) at the cost of resolution for that
/// character only.
pub const MAX_SOLID_VOXELS: usize = 1 << 21;

/// Labels are propagated only up to `reach_factor ×` the voxel's nearest-bone distance plus
/// `REACH_SLACK` units (two voxels, for the vertex's offset from its voxel centre and the
/// rounding): farther bones would get less than `REACH_WEIGHT` of the nearest's weight, below
/// the default `min_weight` of 1 % that post-processing drops anyway. The pruning makes each
/// joint's search cover only the neighbourhood of its bone.
const REACH_WEIGHT: f64 = 0.005;
const REACH_SLACK: u32 = 2 * UNITS as u32;

/// Distance ratio beyond which a bone's weight is below `REACH_WEIGHT` of the nearest's: the
/// weight ratio is at most `(d_near / d_far)^falloff`. Capped at 4 for a soft falloff.
fn reach_factor(falloff: f64) -> f64 {
    REACH_WEIGHT.powf(-1.0 / falloff.max(1.0)).min(4.0)
}

impl SkinSolver for Voxel {
    fn name(&self) -> &'static str {
        "voxel"
    }

    fn solve(&self, mesh: &Mesh, skeleton: &Skeleton, options: &SolveOptions) -> Result<Skin, SkinError> {
        let prep = Prepared::for_solve(mesh, skeleton, options)?;
        let rows = self.raw_rows(&prep, options)?;
        finish(&prep, rows, options)
    }
}

impl Voxel {
    /// Raw voxel rows for every welded vertex of `prep`: each of its `options.max_influences`
    /// nearest joints by geodesic voxel distance with its weight relative to the nearest's (the
    /// nearest has 1), before normalising and pruning. The solver before post-processing, for
    /// callers that use voxel binding as an input (the learned model's features, layout 5).
    pub fn raw_rows(&self, prep: &Prepared, options: &SolveOptions) -> Result<Vec<Row>, SkinError> {
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
        options.check_cancel()?;
        let solid = Solid::new(&grid);
        let joints = joint_seeds(&grid, &solid, prep);
        // First every voxel's distance to its nearest bone, then per joint the voxels within
        // reach of it (a bounded search per joint, in parallel).
        let all: Vec<(u32, u32)> = joints.iter().flat_map(|j| j.1.iter().copied()).collect();
        options.check_cancel()?;
        let nearest = nearest_distances(&solid, &all);
        drop(all);
        options.check_cancel()?;
        let factor = reach_factor(f64::from(self.falloff).max(1.0));
        let reach: Vec<u32> = nearest
            .par_iter()
            .map(|&d| ((f64::from(d) * factor).min(f64::from(u32::MAX / 4)) as u32).saturating_add(REACH_SLACK))
            .collect();
        drop(nearest);
        // Each welded vertex reads the labels of one solid voxel: its own, or its solid
        // 26-neighbour nearest to it when its own is exterior.
        let vertex_voxel: Vec<Option<u32>> = positions.par_iter().map(|&p| query_voxel(&grid, &solid, p)).collect();
        let mut query_of = vec![u32::MAX; solid.len()];
        let mut queries = 0u32;
        for s in vertex_voxel.iter().flatten() {
            if let Some(q) = query_of.get_mut(*s as usize).filter(|q| **q == u32::MAX) {
                *q = queries;
                queries += 1;
            }
        }
        let top = bone_labels(&solid, &joints, &reach, &query_of, queries as usize, k);
        drop(reach);
        options.check_cancel()?;
        let falloff = f64::from(self.falloff).max(1.0);
        let alpha = f64::from(self.smoothness.clamp(0.0, 1.0));
        let floor = f64::from(grid.size) * 0.5;
        let rows: Vec<Row> = positions
            .par_iter()
            .zip(&vertex_voxel)
            .map(|(&p, s)| {
                let Some((s, q)) = s.and_then(|s| Some((s, *query_of.get(s as usize)?))) else {
                    return Row::new();
                };
                let Some(center) = solid
                    .cells
                    .get(s as usize)
                    .map(|&i| grid.center(grid.coords(i as usize)))
                else {
                    return Row::new();
                };
                let base = |d: f32| {
                    let d = f64::from(d).max(floor);
                    (1.0 - alpha) * d + alpha * d * d
                };
                let offset = (p - center).length();
                let distances: Vec<(u32, f64)> = top
                    .labels(q as usize)
                    .into_iter()
                    .map(|(j, d)| (j, base(d as f32 / UNITS * grid.size + offset)))
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
        Ok(rows)
    }
}

/// Each joint's seeds `(distance in units, solid voxel)`, sorted: the voxels along its
/// segments at 0, or for a segment with no solid voxel on it (outside the mesh) the solid
/// voxels nearest to it at their true distance. Joints without segments are left out.
fn joint_seeds(grid: &VoxelGrid, solid: &Solid, prep: &Prepared) -> Vec<JointSeeds> {
    let mut seeds: Vec<Vec<(u32, u32)>> = vec![Vec::new(); prep.bones.joint_count];
    let step = grid.size * 0.5;
    for bone in &prep.bones.segments {
        let Some(list) = seeds.get_mut(bone.joint as usize) else {
            continue;
        };
        let length = (bone.b - bone.a).length();
        let samples = ((length / step).ceil() as usize).clamp(1, 1 << 16);
        let before = list.len();
        for i in 0..=samples {
            let p = bone.a.lerp(bone.b, i as f32 / samples as f32);
            if let Some(s) = grid.cell_of(p).and_then(|c| solid.at(grid, c)) {
                list.push((0, s));
            }
        }
        if list.len() == before && solid.len() > 0 {
            let distance = |i: u32| segment_distance(grid.center(grid.coords(i as usize)), bone.a, bone.b);
            let best = solid
                .cells
                .par_iter()
                .map(|&i| distance(i))
                .reduce(|| f32::INFINITY, f32::min);
            for (s, &i) in solid.cells.iter().enumerate() {
                let d = distance(i);
                if d <= best + grid.size {
                    list.push((to_units(d, grid.size), s as u32));
                }
            }
        }
    }
    seeds
        .into_iter()
        .enumerate()
        .filter(|(_, list)| !list.is_empty())
        .map(|(j, mut list)| {
            list.sort_unstable();
            list.dedup();
            (j as u32, list)
        })
        .collect()
}

/// The solid voxel whose labels the point `p` reads: the voxel holding it, or when that is
/// exterior its solid 26-neighbour nearest to `p` (`None` when there is none).
fn query_voxel(grid: &VoxelGrid, solid: &Solid, p: Vec3) -> Option<u32> {
    let c = grid.cell_of(p)?;
    if let Some(s) = solid.at(grid, c) {
        return Some(s);
    }
    let mut best: Option<(f32, u32)> = None;
    for dz in -1i64..=1 {
        for dy in -1i64..=1 {
            for dx in -1i64..=1 {
                let n = [c[0] as i64 + dx, c[1] as i64 + dy, c[2] as i64 + dz];
                if n.iter().zip(grid.dims).any(|(&v, dim)| v < 0 || v >= dim as i64) {
                    continue;
                }
                let n = n.map(|v| v as usize);
                let Some(s) = solid.at(grid, n) else {
                    continue;
                };
                let d = (grid.center(n) - p).length();
                if best.is_none_or(|b| d < b.0) {
                    best = Some((d, s));
                }
            }
        }
    }
    best.map(|b| b.1)
}

/// A length in queue units.
fn to_units(d: f32, size: f32) -> u32 {
    (d / size * UNITS).round().clamp(0.0, (u32::MAX / 2) as f32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{check, synthetic};
    use rigml_geom::Cell;

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
