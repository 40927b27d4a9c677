//! The solid the general placer works in: a voxelisation of the mesh ([`VoxelGrid`]) made into
//! one connected piece (islands such as eyes, props or armour plates are bridged to their
//! nearest neighbour), optionally made exactly mirror-symmetric.
//!
//! Voxels rather than the surface graph because game characters are often several
//! interpenetrating part meshes (a KayKit body is arms, legs, head and torso pieces): their
//! union is one solid, while their surfaces are disconnected and overlap inside each other.

use glam::Vec3;
use rigml_geom::{Cell, VoxelGrid};
use std::collections::{HashMap, VecDeque};

/// Sentinel of "no voxel" in index arrays.
pub const NONE: u32 = u32::MAX;

/// A voxel solid: the grid and, for speed, a compact numbering of its solid voxels.
#[derive(Debug, Clone)]
pub struct Solid {
    pub grid: VoxelGrid,
    /// Linear grid index of every solid voxel, ascending.
    pub voxels: Vec<u32>,
    /// Compact id of each grid cell (`NONE` for exterior cells).
    pub compact: Vec<u32>,
}

/// A mirror plane perpendicular to a grid axis: voxel coordinate `c` along `axis` maps to
/// `sum - c`, so the plane passes through voxel centres (`sum` even) or between two voxel
/// layers (`sum` odd).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mirror {
    pub axis: usize,
    pub sum: usize,
}

impl Mirror {
    /// The mirrored coordinates of `c`, `None` outside the grid's inner cells (the border layer
    /// stays exterior).
    pub fn apply(&self, dims: [usize; 3], c: [usize; 3]) -> Option<[usize; 3]> {
        let m = self.sum.checked_sub(c[self.axis])?;
        if m == 0 || m + 1 >= dims[self.axis] {
            return None;
        }
        let mut out = c;
        out[self.axis] = m;
        Some(out)
    }

    /// True for the voxel layer on the plane (the lower of the two when it runs between).
    pub fn on_plane(&self, c: [usize; 3]) -> bool {
        c[self.axis] == self.sum / 2
    }

    /// Model-space coordinate of the plane along `axis`.
    pub fn plane(&self, grid: &VoxelGrid) -> f32 {
        grid.origin[self.axis] + (self.sum as f32 * 0.5 + 0.5) * grid.size
    }

    /// Mirror a model-space point.
    pub fn reflect(&self, grid: &VoxelGrid, p: Vec3) -> Vec3 {
        let mut q = p;
        q[self.axis] = 2.0 * self.plane(grid) - p[self.axis];
        q
    }
}

/// Where two components' growth met: (path length in cells, solid voxel of the lower-numbered
/// component, solid voxel of the other), voxels as grid indices.
type Meeting = (u32, u32, u32);

/// The 26 neighbour offsets with their step lengths ×1000 (1, √2, √3).
pub const OFFSETS: [([i32; 3], u32); 26] = offsets();

const fn offsets() -> [([i32; 3], u32); 26] {
    let mut out = [([0i32; 3], 0u32); 26];
    let mut k = 0;
    let mut z = -1;
    while z <= 1 {
        let mut y = -1;
        while y <= 1 {
            let mut x = -1;
            while x <= 1 {
                let nonzero = (x != 0) as u32 + (y != 0) as u32 + (z != 0) as u32;
                if nonzero > 0 {
                    let cost = match nonzero {
                        1 => 1000,
                        2 => 1414,
                        _ => 1732,
                    };
                    out[k] = ([x, y, z], cost);
                    k += 1;
                }
                x += 1;
            }
            y += 1;
        }
        z += 1;
    }
    out
}

/// Neighbours of grid cell `index` inside the grid: `(linear index, step ×1000)`.
pub fn neighbours(dims: [usize; 3], index: usize) -> impl Iterator<Item = (usize, u32)> {
    let x = index % dims[0];
    let y = (index / dims[0]) % dims[1];
    let z = index / (dims[0] * dims[1]);
    OFFSETS.iter().filter_map(move |&(d, cost)| {
        let nx = x.checked_add_signed(d[0] as isize).filter(|&v| v < dims[0])?;
        let ny = y.checked_add_signed(d[1] as isize).filter(|&v| v < dims[1])?;
        let nz = z.checked_add_signed(d[2] as isize).filter(|&v| v < dims[2])?;
        Some(((nz * dims[1] + ny) * dims[0] + nx, cost))
    })
}

impl Solid {
    /// Voxelise `positions`/`triangles` at `resolution` cells along the longest side.
    pub fn new(positions: &[Vec3], triangles: &[[u32; 3]], resolution: usize) -> Option<Solid> {
        let grid = VoxelGrid::new(positions, triangles, resolution)?;
        let mut solid = Solid {
            grid,
            voxels: Vec::new(),
            compact: Vec::new(),
        };
        solid.renumber();
        (!solid.voxels.is_empty()).then_some(solid)
    }

    /// Rebuild the compact numbering after cells changed.
    fn renumber(&mut self) {
        self.compact = vec![NONE; self.grid.cells.len()];
        self.voxels.clear();
        for (i, c) in self.grid.cells.iter().enumerate() {
            if *c != Cell::Exterior {
                self.compact[i] = self.voxels.len() as u32;
                self.voxels.push(i as u32);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.voxels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.voxels.is_empty()
    }

    /// Model-space centre of solid voxel `v` (compact id).
    pub fn center(&self, v: usize) -> Vec3 {
        self.grid.center(self.grid.coords(self.voxels[v] as usize))
    }

    /// Solid neighbours of solid voxel `v`: `(compact id, step ×1000)`.
    pub fn solid_neighbours(&self, v: usize) -> impl Iterator<Item = (usize, u32)> + '_ {
        neighbours(self.grid.dims, self.voxels[v] as usize).filter_map(|(n, cost)| {
            let c = self.compact[n];
            (c != NONE).then_some((c as usize, cost))
        })
    }

    /// Connected components (26-neighbourhood) of the solid: label per compact voxel, count.
    pub fn components(&self) -> (Vec<u32>, usize) {
        let mut label = vec![NONE; self.len()];
        let mut count = 0u32;
        let mut stack = Vec::new();
        for start in 0..self.len() {
            if label[start] != NONE {
                continue;
            }
            label[start] = count;
            stack.push(start);
            while let Some(v) = stack.pop() {
                for (n, _) in self.solid_neighbours(v) {
                    if label[n] == NONE {
                        label[n] = count;
                        stack.push(n);
                    }
                }
            }
            count += 1;
        }
        (label, count as usize)
    }

    /// Join every island to the rest: grow all components at once through the empty cells
    /// (a Voronoi partition of the exterior), take the shortest meeting between each pair of
    /// components, keep a minimum spanning tree of those meetings and draw each kept one as a
    /// straight line of voxels between the two solid voxels it connects. Returns the number of
    /// bridges drawn.
    pub fn bridge_islands(&mut self) -> usize {
        let (label, count) = self.components();
        if count <= 1 {
            return 0;
        }
        let dims = self.grid.dims;
        let cells = self.grid.cells.len();
        // Source solid voxel (grid index) and BFS depth of every reached cell.
        let mut source = vec![NONE; cells];
        let mut depth = vec![0u32; cells];
        let mut queue = VecDeque::new();
        for &g in &self.voxels {
            source[g as usize] = g;
            queue.push_back(g as usize);
        }
        let comp = |g: u32, source: &[u32]| label[self.compact[source[g as usize] as usize] as usize];
        // (component a < b) -> (length, voxel of a, voxel of b)
        let mut meetings: HashMap<(u32, u32), Meeting> = HashMap::new();
        while let Some(g) = queue.pop_front() {
            let a = comp(g as u32, &source);
            for (n, _) in neighbours(dims, g) {
                if source[n] == NONE {
                    source[n] = source[g];
                    depth[n] = depth[g] + 1;
                    queue.push_back(n);
                    continue;
                }
                let b = comp(n as u32, &source);
                if a == b {
                    continue;
                }
                let length = depth[g] + depth[n] + 1;
                let (key, ends) = if a < b {
                    ((a, b), (source[g], source[n]))
                } else {
                    ((b, a), (source[n], source[g]))
                };
                let entry = meetings.entry(key).or_insert((u32::MAX, 0, 0));
                if length < entry.0 {
                    *entry = (length, ends.0, ends.1);
                }
            }
        }
        let mut edges: Vec<((u32, u32), Meeting)> = meetings.into_iter().collect();
        edges.sort_unstable_by_key(|&(key, (length, _, _))| (length, key));
        let mut sets = UnionFind::new(count);
        let mut drawn = 0;
        for ((a, b), (_, ga, gb)) in edges {
            if sets.union(a as usize, b as usize) {
                self.draw_line(ga as usize, gb as usize);
                drawn += 1;
            }
        }
        self.renumber();
        drawn
    }

    /// Mark the voxels on the segment between the centres of cells `a` and `b` solid.
    fn draw_line(&mut self, a: usize, b: usize) {
        let (ca, cb) = (self.grid.coords(a), self.grid.coords(b));
        let pa = Vec3::new(ca[0] as f32, ca[1] as f32, ca[2] as f32);
        let pb = Vec3::new(cb[0] as f32, cb[1] as f32, cb[2] as f32);
        let steps = ((pb - pa).abs().max_element() * 2.0).ceil().max(1.0) as usize;
        for i in 0..=steps {
            let p = (pa + (pb - pa) * (i as f32 / steps as f32)).round();
            let c = [p.x as usize, p.y as usize, p.z as usize];
            let g = self.grid.index(c);
            if let Some(cell) = self.grid.cells.get_mut(g) {
                if *cell == Cell::Exterior {
                    *cell = Cell::Boundary;
                }
            }
        }
    }

    /// The best mirror plane perpendicular to one of `axes` near the solid's centroid, and
    /// its score: the share of solid voxels whose mirror image is solid too. An axis listed
    /// earlier wins unless a later one scores clearly (0.02) better: a flat shape is symmetric
    /// about its own plane too, and the first axis is the usual left/right one.
    pub fn best_mirror(&self, axes: &[usize]) -> Option<(Mirror, f32)> {
        let dims = self.grid.dims;
        let mut mean = [0.0f64; 3];
        for &g in &self.voxels {
            let c = self.grid.coords(g as usize);
            for a in 0..3 {
                mean[a] += c[a] as f64;
            }
        }
        let n = self.voxels.len().max(1) as f64;
        let score = |mirror: Mirror| {
            let hits = self
                .voxels
                .iter()
                .filter(|&&g| {
                    mirror
                        .apply(dims, self.grid.coords(g as usize))
                        .is_some_and(|m| self.grid.cells[self.grid.index(m)] != Cell::Exterior)
                })
                .count();
            hits as f32 / n as f32
        };
        axes.iter()
            .filter(|&&a| a < 3)
            .filter_map(|&axis| {
                let twice = (2.0 * mean[axis] / n).round() as usize;
                (twice.saturating_sub(1)..=twice + 1)
                    .map(|sum| Mirror { axis, sum })
                    .map(|m| (m, score(m)))
                    .max_by(|a, b| a.1.total_cmp(&b.1))
            })
            .reduce(|best, next| if next.1 > best.1 + 0.02 { next } else { best })
    }

    /// Make the solid exactly symmetric about `mirror`: the union with its mirror image.
    pub fn symmetrise(&mut self, mirror: Mirror) {
        let dims = self.grid.dims;
        for i in 0..self.voxels.len() {
            let g = self.voxels[i] as usize;
            if let Some(m) = mirror.apply(dims, self.grid.coords(g)) {
                let mi = self.grid.index(m);
                if self.grid.cells[mi] == Cell::Exterior {
                    self.grid.cells[mi] = self.grid.cells[g];
                }
            }
        }
        self.renumber();
    }

    /// Depth of every solid voxel: BFS steps (26-neighbourhood) to the nearest exterior cell,
    /// 1 for voxels touching the outside.
    pub fn depth(&self) -> Vec<u32> {
        let mut depth = vec![0u32; self.len()];
        let mut queue = VecDeque::new();
        for (v, d) in depth.iter_mut().enumerate() {
            let outside = neighbours(self.grid.dims, self.voxels[v] as usize).count() < 26
                || neighbours(self.grid.dims, self.voxels[v] as usize).any(|(n, _)| self.compact[n] == NONE);
            if outside {
                *d = 1;
                queue.push_back(v);
            }
        }
        while let Some(v) = queue.pop_front() {
            for (n, _) in self.solid_neighbours(v) {
                if depth[n] == 0 {
                    depth[n] = depth[v] + 1;
                    queue.push_back(n);
                }
            }
        }
        depth
    }
}

/// Disjoint sets with path halving and union by size.
pub struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    pub fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    pub fn find(&mut self, mut a: usize) -> usize {
        while self.parent[a] as usize != a {
            let grand = self.parent[self.parent[a] as usize];
            self.parent[a] = grand;
            a = grand as usize;
        }
        a
    }

    /// Join the sets of `a` and `b`; false when they were one already.
    pub fn union(&mut self, a: usize, b: usize) -> bool {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return false;
        }
        if self.size[a] < self.size[b] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b] = a as u32;
        self.size[a] += self.size[b];
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two closed boxes side by side with a gap, as one mesh.
    fn two_boxes(gap: f32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let mut positions = Vec::new();
        let mut triangles = Vec::new();
        for (lo, hi) in [
            (Vec3::ZERO, Vec3::new(1.0, 1.0, 1.0)),
            (Vec3::new(1.0 + gap, 0.0, 0.0), Vec3::new(2.0 + gap, 1.0, 1.0)),
        ] {
            rigml_geom::procedural::append_cuboid(&mut positions, &mut triangles, lo, hi);
        }
        (positions, triangles)
    }

    #[test]
    fn islands_are_bridged_into_one_component() {
        let (p, t) = two_boxes(0.5);
        let mut solid = Solid::new(&p, &t, 40).unwrap();
        assert_eq!(solid.components().1, 2);
        assert_eq!(solid.bridge_islands(), 1);
        assert_eq!(solid.components().1, 1);
        assert_eq!(solid.bridge_islands(), 0);
    }

    #[test]
    fn symmetric_solid_scores_one_and_depth_peaks_inside() {
        let (p, t) = two_boxes(0.5);
        let solid = Solid::new(&p, &t, 40).unwrap();
        let (mirror, score) = solid.best_mirror(&[0, 2]).unwrap();
        assert!(score > 0.97, "{score}");
        // The plane lies halfway between the boxes (x = 1.25) within a voxel.
        let plane = match mirror.axis {
            0 => mirror.plane(&solid.grid) - 1.25,
            _ => mirror.plane(&solid.grid) - 0.5,
        };
        assert!(plane.abs() <= solid.grid.size, "{plane}");
        let depth = solid.depth();
        let deepest = (0..solid.len()).max_by_key(|&v| depth[v]).unwrap();
        let c = solid.center(deepest);
        assert!(c.y > 0.3 && c.y < 0.7 && c.z > 0.3 && c.z < 0.7, "{c}");
    }
}
