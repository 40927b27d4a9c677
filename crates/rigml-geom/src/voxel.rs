//! Solid voxelisation of a triangle mesh: boundary voxels by exact triangle/box overlap, the
//! exterior by flood fill from the padded border, everything else interior
//! (ALGORITHMS.md §3, the "simpler alternative" to the paper's GPU slice votes).
//!
//! An open or leaky mesh lets the flood reach inside; its solid is then just the shell of
//! boundary voxels, which still connects the surface for geodesic distances.

use glam::Vec3;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// Largest resolution accepted (cells along the longest side); memory grows as its cube.
pub const MAX_RESOLUTION: usize = 512;

/// Bounds narrower than this share of the largest coordinate's magnitude are rounding noise
/// (64 units in the last place of `f32`), not an extent to voxelise (or to rig: rigml-rig's
/// mesh check refuses such a mesh as having no extent).
pub const ROUNDING: f32 = 64.0 * f32::EPSILON;

/// True when the box `lo..hi` is narrower along every axis than [`ROUNDING`] of its largest
/// coordinate's magnitude: a point smeared by rounding, with no extent to voxelise or rig.
pub fn within_rounding(lo: Vec3, hi: Vec3) -> bool {
    let magnitude = lo.abs().max(hi.abs()).max_element();
    (hi - lo).max_element() <= ROUNDING * magnitude
}

/// What a voxel is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Cell {
    Exterior = 0,
    Boundary = 1,
    Interior = 2,
}

/// A dense voxel grid over a mesh's bounds plus padding (one voxel below, two above: the
/// border layer is always exterior).
#[derive(Debug, Clone)]
pub struct VoxelGrid {
    /// Corner of voxel (0, 0, 0).
    pub origin: Vec3,
    /// Edge length of a voxel.
    pub size: f32,
    /// Voxels along x, y, z.
    pub dims: [usize; 3],
    /// Per voxel, x fastest.
    pub cells: Vec<Cell>,
}

impl VoxelGrid {
    /// Voxelise with `resolution` voxels along the longest side of the bounds (clamped to
    /// `2..=MAX_RESOLUTION`). Triangles with a corner out of range or non-finite are skipped.
    /// `None` when there are no finite positions or their bounds overflow `f32`. Bounds within
    /// rounding of the coordinates (a mesh collapsed to a point, as a clip that scales a
    /// character up from nothing gives on its first frame) count as no extent at all.
    pub fn new(positions: &[Vec3], triangles: &[[u32; 3]], resolution: usize) -> Option<VoxelGrid> {
        let finite = positions.iter().filter(|p| p.is_finite());
        let lo = finite.clone().copied().reduce(Vec3::min)?;
        let hi = finite.copied().reduce(Vec3::max)?;
        let resolution = resolution.clamp(2, MAX_RESOLUTION);
        let longest = (hi - lo).max_element();
        if !longest.is_finite() {
            return None;
        }
        let longest = if within_rounding(lo, hi) { 0.0 } else { longest };
        let size = if longest > 0.0 {
            longest / resolution as f32
        } else {
            1.0
        };
        let origin = lo - Vec3::splat(size);
        let span = ((hi - lo) / size).ceil();
        let dims = [span.x as usize + 3, span.y as usize + 3, span.z as usize + 3].map(|d| d.clamp(3, resolution + 3));
        let mut grid = VoxelGrid {
            origin,
            size,
            dims,
            cells: vec![Cell::Exterior; dims[0] * dims[1] * dims[2]],
        };
        // Triangles are rasterised in parallel into a shared mask; marking is idempotent, so the
        // result does not depend on the order.
        let boundary: Vec<AtomicBool> = (0..grid.cells.len()).map(|_| AtomicBool::new(false)).collect();
        triangles
            .par_iter()
            .with_min_len(64)
            .for_each_init(Vec::new, |pieces, t| {
                let corners = t.map(|i| positions.get(i as usize).copied().unwrap_or(Vec3::NAN));
                if corners.iter().all(|p| p.is_finite()) {
                    // Large triangles are split by longest-edge bisection until each piece spans
                    // about two voxels, so the work is proportional to the voxels they cover rather
                    // than to the volume of their bounding boxes.
                    pieces.push(corners);
                    while let Some(tri) = pieces.pop() {
                        let edges = [0, 1, 2].map(|k| ((tri[(k + 1) % 3] - tri[k]) / size).length());
                        let k = (0..3).fold(0, |best, k| if edges[k] > edges[best] { k } else { best });
                        // Edges are measured in voxels and halves taken without overflow, and a
                        // split that rounding keeps from shortening the edge is not taken (it
                        // would never end).
                        let (a, b) = (tri[k], tri[(k + 1) % 3]);
                        let mid = a * 0.5 + b * 0.5;
                        if edges[k] > 2.0 && mid != a && mid != b {
                            let other = tri[(k + 2) % 3];
                            pieces.push([a, mid, other]);
                            pieces.push([mid, b, other]);
                        } else {
                            grid.rasterise(&tri, &boundary);
                        }
                    }
                }
            });
        for (cell, b) in grid.cells.iter_mut().zip(boundary) {
            if b.into_inner() {
                *cell = Cell::Boundary;
            }
        }
        grid.fill();
        Some(grid)
    }

    /// Linear index of voxel `(x, y, z)`.
    pub fn index(&self, c: [usize; 3]) -> usize {
        (c[2] * self.dims[1] + c[1]) * self.dims[0] + c[0]
    }

    /// Voxel coordinates of a linear index.
    pub fn coords(&self, index: usize) -> [usize; 3] {
        let x = index % self.dims[0];
        let y = (index / self.dims[0]) % self.dims[1];
        [x, y, index / (self.dims[0] * self.dims[1])]
    }

    /// The voxel holding `p`, clamped into the grid (`None` for a non-finite point).
    pub fn cell_of(&self, p: Vec3) -> Option<[usize; 3]> {
        if !p.is_finite() {
            return None;
        }
        let q = ((p - self.origin) / self.size).floor();
        Some([0, 1, 2].map(|a| (q[a].max(0.0) as usize).min(self.dims[a] - 1)))
    }

    /// Centre of voxel `c`.
    pub fn center(&self, c: [usize; 3]) -> Vec3 {
        self.origin + (Vec3::new(c[0] as f32, c[1] as f32, c[2] as f32) + 0.5) * self.size
    }

    /// Number of voxels of each kind: `[exterior, boundary, interior]`.
    pub fn counts(&self) -> [usize; 3] {
        let mut n = [0; 3];
        for c in &self.cells {
            n[*c as usize] += 1;
        }
        n
    }

    /// Mark in `boundary` the voxels `tri` overlaps.
    fn rasterise(&self, tri: &[Vec3; 3], boundary: &[AtomicBool]) {
        // Widened by a hair so that a triangle lying on a voxel face (a flat cap on the bounds)
        // is tested against the voxels on both sides despite rounding.
        let margin = Vec3::splat(self.size * 0.01);
        let lo = tri[0].min(tri[1]).min(tri[2]) - margin;
        let hi = tri[0].max(tri[1]).max(tri[2]) + margin;
        let (Some(a), Some(b)) = (self.cell_of(lo), self.cell_of(hi)) else {
            return;
        };
        // Slightly enlarged boxes so that a triangle on a voxel face marks both sides.
        let half = Vec3::splat(self.size * 0.5 * (1.0 + 1e-3));
        for z in a[2]..=b[2] {
            for y in a[1]..=b[1] {
                for x in a[0]..=b[0] {
                    let Some(mark) = boundary.get(self.index([x, y, z])) else {
                        continue;
                    };
                    if !mark.load(Ordering::Relaxed) && triangle_box_overlap(self.center([x, y, z]), half, tri) {
                        mark.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
    }

    /// Flood the exterior from the border through non-boundary voxels (6-connected); what the
    /// flood does not reach and is not boundary is interior.
    fn fill(&mut self) {
        let [nx, ny, nz] = self.dims;
        let border =
            |x: usize, y: usize, z: usize| x == 0 || y == 0 || z == 0 || x + 1 == nx || y + 1 == ny || z + 1 == nz;
        // Border voxels are padding: a triangle touching one through the enlarged overlap box
        // does not make it solid, so solid voxels always have all 26 neighbours in the grid.
        let mut reached = vec![false; self.cells.len()];
        let mut stack = Vec::new();
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    let i = self.index([x, y, z]);
                    if border(x, y, z) {
                        self.cells[i] = Cell::Exterior;
                        reached[i] = true;
                    }
                }
            }
        }
        // The flood starts at the non-boundary voxels next to the border and stays off it, so
        // the six neighbours of every voxel it visits are inside the grid (no coordinates
        // needed); the visiting order does not matter, hence a stack.
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    let next_to_border =
                        !border(x, y, z) && (x == 1 || y == 1 || z == 1 || x + 2 == nx || y + 2 == ny || z + 2 == nz);
                    let i = self.index([x, y, z]);
                    if next_to_border && self.cells[i] != Cell::Boundary {
                        reached[i] = true;
                        stack.push(i);
                    }
                }
            }
        }
        let plane = nx * ny;
        while let Some(i) = stack.pop() {
            for j in [i - 1, i + 1, i - nx, i + nx, i - plane, i + plane] {
                if !reached[j] && self.cells[j] != Cell::Boundary {
                    reached[j] = true;
                    stack.push(j);
                }
            }
        }
        for (c, r) in self.cells.iter_mut().zip(reached) {
            if *c == Cell::Exterior && !r {
                *c = Cell::Interior;
            }
        }
    }
}

/// Separating-axis test of a triangle against an axis-aligned box (Akenine-Möller 2001).
pub fn triangle_box_overlap(center: Vec3, half: Vec3, tri: &[Vec3; 3]) -> bool {
    let v = tri.map(|p| p - center);
    let e = [v[1] - v[0], v[2] - v[1], v[0] - v[2]];
    let separated = |axis: Vec3| {
        let p = v.map(|q| q.dot(axis));
        let r = half.dot(axis.abs());
        p[0].min(p[1]).min(p[2]) > r || p[0].max(p[1]).max(p[2]) < -r
    };
    for edge in e {
        for unit in [Vec3::X, Vec3::Y, Vec3::Z] {
            let axis = unit.cross(edge);
            if axis != Vec3::ZERO && separated(axis) {
                return false;
            }
        }
    }
    for unit in [Vec3::X, Vec3::Y, Vec3::Z] {
        if separated(unit) {
            return false;
        }
    }
    let normal = e[0].cross(e[1]);
    normal == Vec3::ZERO || !separated(normal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::procedural::cuboid;
    use std::collections::VecDeque;

    #[test]
    fn closed_cube_is_filled_and_open_cube_is_a_shell() {
        let (p, t) = cuboid(Vec3::ZERO, Vec3::ONE);
        let grid = VoxelGrid::new(&p, &t, 16).unwrap();
        let [ext, boundary, interior] = grid.counts();
        assert!(boundary > 0 && ext > 0);
        // 16^3 voxels inside the cube, minus the boundary layer (about 14^3 interior).
        assert!((2000..=16 * 16 * 16).contains(&interior), "interior {interior}");
        let centre = grid.cell_of(Vec3::splat(0.5)).unwrap();
        assert_eq!(grid.cells[grid.index(centre)], Cell::Interior);
        // Without its top the flood gets in: no interior.
        let open: Vec<[u32; 3]> = t[..10].to_vec();
        let grid = VoxelGrid::new(&p, &open, 16).unwrap();
        assert_eq!(grid.counts()[2], 0);
    }

    #[test]
    fn a_mesh_collapsed_to_a_point_or_near_the_float_limit_voxelises_without_endless_splits() {
        // A clip's first frame with the character scaled to nothing: bounds of a few units in
        // the last place at y = 2 (once an endless split of the triangles into pieces).
        let (p, t) = cuboid(Vec3::ZERO, Vec3::ONE);
        let point: Vec<Vec3> = p.iter().map(|v| Vec3::new(0.0, 2.0, 0.0) + *v * 2.4e-7).collect();
        let grid = VoxelGrid::new(&point, &t, 64).unwrap();
        assert!(grid.dims.iter().all(|&d| d <= 4), "{:?}", grid.dims);
        // Coordinates whose sums overflow f32 (the halves are taken without them).
        let far: Vec<Vec3> = p.iter().map(|v| Vec3::splat(1.0e38) + *v * 2.0e38).collect();
        let grid = VoxelGrid::new(&far, &t, 16).unwrap();
        assert!(grid.counts()[1] > 0);
        // Bounds that overflow are refused.
        let wide: Vec<Vec3> = p.iter().map(|v| (*v * 2.0 - 1.0) * 3.0e38).collect();
        assert!(VoxelGrid::new(&wide, &t, 16).is_none());
    }

    /// The interior by a plain breadth-first flood with coordinates, from the boundary voxels
    /// of `grid`.
    fn reference_fill(grid: &VoxelGrid) -> Vec<Cell> {
        let [nx, ny, nz] = grid.dims;
        let mut cells: Vec<Cell> = grid
            .cells
            .iter()
            .map(|&c| if c == Cell::Boundary { c } else { Cell::Exterior })
            .collect();
        let mut reached = vec![false; cells.len()];
        let mut queue = VecDeque::new();
        for i in 0..cells.len() {
            let [x, y, z] = grid.coords(i);
            if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) && cells[i] != Cell::Boundary {
                reached[i] = true;
                queue.push_back(i);
            }
        }
        while let Some(i) = queue.pop_front() {
            let [x, y, z] = grid.coords(i).map(|v| v as i64);
            for (dx, dy, dz) in [(-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1)] {
                let n = [x + dx, y + dy, z + dz];
                if n.iter().zip(grid.dims).all(|(&v, d)| v >= 0 && v < d as i64) {
                    let j = grid.index(n.map(|v| v as usize));
                    if !reached[j] && cells[j] != Cell::Boundary {
                        reached[j] = true;
                        queue.push_back(j);
                    }
                }
            }
        }
        for (c, r) in cells.iter_mut().zip(reached) {
            if *c == Cell::Exterior && !r {
                *c = Cell::Interior;
            }
        }
        cells
    }

    #[test]
    fn fill_matches_a_plain_breadth_first_flood() {
        // A closed cube beside an open one (its top missing), and a thin closed slab.
        let (p, t) = cuboid(Vec3::ZERO, Vec3::ONE);
        let mut positions = p.clone();
        let mut triangles = t.clone();
        for (offset, faces) in [(Vec3::new(1.5, 0.0, 0.0), 10), (Vec3::new(0.0, 1.5, 0.2), 12)] {
            let base = positions.len() as u32;
            let scale = if faces == 12 {
                Vec3::new(2.0, 0.3, 0.5)
            } else {
                Vec3::ONE
            };
            positions.extend(p.iter().map(|&q| q * scale + offset));
            triangles.extend(t[..faces].iter().map(|f| f.map(|i| i + base)));
        }
        for resolution in [7, 16, 33] {
            let grid = VoxelGrid::new(&positions, &triangles, resolution).unwrap();
            assert!(grid.counts()[2] > 0, "resolution {resolution}");
            assert_eq!(grid.cells, reference_fill(&grid), "resolution {resolution}");
        }
    }

    #[test]
    fn overlap_test_cases() {
        let tri = [
            Vec3::new(-1.0, -1.0, 0.0),
            Vec3::new(1.0, -1.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
        ];
        assert!(triangle_box_overlap(Vec3::ZERO, Vec3::splat(0.1), &tri));
        assert!(!triangle_box_overlap(Vec3::new(0.0, 0.0, 0.5), Vec3::splat(0.1), &tri));
        assert!(!triangle_box_overlap(Vec3::new(2.0, 2.0, 0.0), Vec3::splat(0.1), &tri));
        assert!(VoxelGrid::new(&[], &[], 8).is_none());
    }
}
