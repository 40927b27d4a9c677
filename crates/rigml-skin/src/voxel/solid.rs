//! The solid (non-exterior) voxels of a [`VoxelGrid`], numbered compactly so that per-voxel
//! search state is a dense array over the solid only (a tenth to a half of the grid), plus the
//! 26-neighbourhood as grid offsets with their step costs.

use rigml_geom::{Cell, VoxelGrid};

/// Step costs and search distances are integers in units of `1 / UNITS` voxel, so that the
/// search's queue is a ring of buckets instead of a binary heap.
pub const UNITS: f32 = 16.0;

/// Marks a grid voxel that is not solid in [`Solid::index`].
pub const NOT_SOLID: u32 = u32::MAX;

/// The non-exterior voxels of a grid, numbered in grid order (x fastest), so that voxels close
/// in the grid are mostly close in every array indexed by solid number.
#[derive(Debug, Clone)]
pub struct Solid {
    /// Solid number of each grid voxel ([`NOT_SOLID`] for exterior).
    pub index: Vec<u32>,
    /// Grid index of each solid voxel.
    pub cells: Vec<u32>,
    /// The 26 neighbours: `(grid index offset, step cost in queue units)`, costs being the
    /// Euclidean step lengths 1, √2, √3 voxels rounded to units (16, 23, 28).
    pub steps: [(i64, u32); 26],
}

impl Solid {
    /// Number the solid voxels of `grid`.
    pub fn new(grid: &VoxelGrid) -> Solid {
        let mut index = vec![NOT_SOLID; grid.cells.len()];
        let mut cells = Vec::new();
        for (i, c) in grid.cells.iter().enumerate() {
            if *c != Cell::Exterior {
                if let Some(slot) = index.get_mut(i) {
                    *slot = cells.len() as u32;
                }
                cells.push(i as u32);
            }
        }
        let [nx, ny, _] = grid.dims.map(|d| d as i64);
        let mut steps = [(0i64, 0u32); 26];
        let mut n = 0;
        for dz in -1i64..=1 {
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    if (dx, dy, dz) != (0, 0, 0) {
                        let cost = ((dx * dx + dy * dy + dz * dz) as f32).sqrt() * UNITS;
                        if let Some(step) = steps.get_mut(n) {
                            *step = ((dz * ny + dy) * nx + dx, cost.round() as u32);
                        }
                        n += 1;
                    }
                }
            }
        }
        Solid { index, cells, steps }
    }

    /// Number of solid voxels.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// The solid number of grid voxel `c`, if it is solid.
    pub fn at(&self, grid: &VoxelGrid, c: [usize; 3]) -> Option<u32> {
        self.index.get(grid.index(c)).copied().filter(|&s| s != NOT_SOLID)
    }

    /// Calls `visit(t, cost)` for every solid 26-neighbour `t` of solid voxel `s`.
    #[inline]
    pub fn for_neighbours(&self, s: u32, mut visit: impl FnMut(u32, u32)) {
        let Some(&here) = self.cells.get(s as usize) else {
            return;
        };
        let here = i64::from(here);
        for &(offset, cost) in &self.steps {
            // Solid voxels never touch the grid border (see VoxelGrid), so every neighbour
            // index is inside the grid; checked anyway.
            let Some(&t) = usize::try_from(here + offset).ok().and_then(|n| self.index.get(n)) else {
                continue;
            };
            if t != NOT_SOLID {
                visit(t, cost);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    /// A closed octahedron around the origin (solid interior at any resolution).
    fn octahedron() -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let p = vec![Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z];
        let t = vec![
            [0, 2, 4],
            [2, 1, 4],
            [1, 3, 4],
            [3, 0, 4],
            [2, 0, 5],
            [1, 2, 5],
            [3, 1, 5],
            [0, 3, 5],
        ];
        (p, t)
    }

    #[test]
    fn compact_numbering_agrees_with_the_dense_grid() {
        let (p, t) = octahedron();
        let grid = VoxelGrid::new(&p, &t, 12).unwrap();
        let solid = Solid::new(&grid);
        let [_, boundary, interior] = grid.counts();
        assert_eq!(solid.len(), boundary + interior);
        assert!(interior > 0);
        for (i, cell) in grid.cells.iter().enumerate() {
            let s = solid.index[i];
            assert_eq!(s == NOT_SOLID, *cell == Cell::Exterior, "voxel {i}");
            if s != NOT_SOLID {
                assert_eq!(solid.cells[s as usize] as usize, i);
                assert_eq!(solid.at(&grid, grid.coords(i)), Some(s));
            }
        }
        // Numbers rise with the grid index.
        assert!(solid.cells.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn neighbours_are_the_solid_voxels_of_the_3x3x3_block() {
        let (p, t) = octahedron();
        let grid = VoxelGrid::new(&p, &t, 12).unwrap();
        let solid = Solid::new(&grid);
        for s in 0..solid.len() as u32 {
            let c = grid.coords(solid.cells[s as usize] as usize).map(|v| v as i64);
            let mut expected = Vec::new();
            for dz in -1..=1 {
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        let n = [c[0] + dx, c[1] + dy, c[2] + dz].map(|v| v as usize);
                        let steps = dx * dx + dy * dy + dz * dz;
                        if steps > 0 && grid.cells[grid.index(n)] != Cell::Exterior {
                            let cost = [0, 16, 23, 28][steps as usize];
                            expected.push((solid.index[grid.index(n)], cost));
                        }
                    }
                }
            }
            let mut found = Vec::new();
            solid.for_neighbours(s, |t, cost| found.push((t, cost)));
            expected.sort_unstable();
            found.sort_unstable();
            assert_eq!(found, expected, "solid voxel {s}");
        }
    }
}
