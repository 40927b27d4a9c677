//! The character's solid as voxels in its own frame (x left, y up, z forward), with the
//! distance to the surface of every inside voxel and a shortest-path tree that keeps to the
//! middle of the limbs.
//!
//! Voxels make separate parts one body: KayKit characters have their arms, legs and head as
//! separate meshes that only overlap, and their union is connected as soon as it is voxelised.

use glam::Vec3;
use rigml_geom::{Cell, VoxelGrid};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// Most voxels the solid is grown by to join parts separated by gaps.
const MAX_BRIDGE: usize = 4;

/// A voxel index into [`Volume`]'s grid.
pub(crate) type Voxel = usize;

/// Solid voxels, their depth inside the body and neighbour steps.
pub(crate) struct Volume {
    pub grid: VoxelGrid,
    /// Inside the body (boundary or interior voxel).
    pub solid: Vec<bool>,
    /// Distance to the nearest outside voxel, in voxels (0 outside).
    pub depth: Vec<f32>,
    /// Neighbour offsets (26-connected) with their lengths in voxels.
    steps: Vec<(isize, f32)>,
}

/// Shortest-path tree over the half-resolution solid (see [`Volume::medial_tree`]).
pub(crate) struct MedialTree<'a> {
    volume: &'a Volume,
    dims: [usize; 3],
    cost: Vec<f32>,
    prev: Vec<usize>,
}

impl MedialTree<'_> {
    /// The path from voxel `end` (its exact centre first) to the root; just `end` when it is
    /// not connected to the root.
    pub fn path(&self, end: Voxel) -> Vec<Vec3> {
        let vol = self.volume;
        let dims = self.dims;
        let [x, y, z] = vol.grid.coords(end).map(|c| c / 2);
        let mut v = (z * dims[1] + y) * dims[0] + x;
        let mut out = vec![vol.point(end)];
        if self.cost.get(v).is_some_and(|c| c.is_finite()) {
            while v != usize::MAX && out.len() <= self.prev.len() {
                let q = [v % dims[0], (v / dims[0]) % dims[1], v / (dims[0] * dims[1])];
                let corner = Vec3::new(q[0] as f32, q[1] as f32, q[2] as f32) * 2.0 * vol.grid.size;
                out.push(vol.grid.origin + corner + vol.grid.size);
                v = self.prev[v];
            }
        }
        out
    }
}

/// Order for the Dijkstra heap: smallest cost first.
#[derive(PartialEq)]
struct Entry(f32, Voxel);

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then_with(|| other.1.cmp(&self.1))
    }
}

impl Volume {
    /// Voxelise `positions` (already in the character frame) with `resolution` voxels along the
    /// longest side. `None` when the mesh gives no solid voxel.
    pub fn new(positions: &[Vec3], triangles: &[[u32; 3]], resolution: usize) -> Option<Volume> {
        let grid = VoxelGrid::new(positions, triangles, resolution)?;
        let solid: Vec<bool> = grid.cells.iter().map(|c| *c != Cell::Exterior).collect();
        if !solid.iter().any(|s| *s) {
            return None;
        }
        let [nx, ny, _] = grid.dims;
        let (nx, ny) = (nx as isize, ny as isize);
        let mut steps = Vec::with_capacity(26);
        for dz in -1isize..=1 {
            for dy in -1isize..=1 {
                for dx in -1isize..=1 {
                    if (dx, dy, dz) != (0, 0, 0) {
                        let len = ((dx * dx + dy * dy + dz * dz) as f32).sqrt();
                        steps.push((dx + dy * nx + dz * nx * ny, len));
                    }
                }
            }
        }
        let mut volume = Volume {
            grid,
            solid,
            depth: Vec::new(),
            steps,
        };
        volume.bridge_gaps();
        volume.depth = volume.distance_to_outside();
        Some(volume)
    }

    /// The 26 neighbours of `v` with step lengths (in voxels). Solid voxels always have all 26
    /// inside the grid (its border layer is padding), so steps from a solid voxel stay in range.
    pub fn neighbours(&self, v: Voxel) -> impl Iterator<Item = (Voxel, f32)> + '_ {
        self.steps.iter().filter_map(move |&(d, len)| {
            let n = v.checked_add_signed(d)?;
            (n < self.solid.len()).then_some((n, len))
        })
    }

    /// Chamfer distance transform: two raster passes over the 26-neighbourhood.
    fn distance_to_outside(&self) -> Vec<f32> {
        let n = self.solid.len();
        let mut d: Vec<f32> = self.solid.iter().map(|&s| if s { f32::MAX } else { 0.0 }).collect();
        let (back, front): (Vec<_>, Vec<_>) = self.steps.iter().partition(|(o, _)| *o < 0);
        for v in 0..n {
            if self.solid[v] {
                let best = back
                    .iter()
                    .filter_map(|&&(o, len)| Some(d.get(v.checked_add_signed(o)?)? + len))
                    .fold(d[v], f32::min);
                d[v] = best;
            }
        }
        for v in (0..n).rev() {
            if self.solid[v] {
                let best = front
                    .iter()
                    .filter_map(|&&(o, len)| Some(d.get(v.checked_add_signed(o)?)? + len))
                    .fold(d[v], f32::min);
                d[v] = best;
            }
        }
        d
    }

    /// The largest 26-connected group of solid voxels (floating props and separate hats are left
    /// out of the extremity search).
    pub fn main_body(&self) -> Vec<bool> {
        let n = self.solid.len();
        let mut label = vec![u32::MAX; n];
        let mut best = (0usize, u32::MAX);
        let mut next = 0u32;
        let mut stack = Vec::new();
        for s in 0..n {
            if !self.solid[s] || label[s] != u32::MAX {
                continue;
            }
            label[s] = next;
            stack.push(s);
            let mut size = 0usize;
            while let Some(v) = stack.pop() {
                size += 1;
                for (u, _) in self.neighbours(v) {
                    if self.solid[u] && label[u] == u32::MAX {
                        label[u] = next;
                        stack.push(u);
                    }
                }
            }
            if size > best.0 {
                best = (size, next);
            }
            next += 1;
        }
        label.iter().map(|&l| l == best.1).collect()
    }

    /// Grow the solid by one voxel (never into the padding layer).
    fn dilate(&mut self) {
        let [nx, ny, nz] = self.grid.dims;
        let mut grown = self.solid.clone();
        for v in 0..self.solid.len() {
            if !self.solid[v] {
                continue;
            }
            for (u, _) in self.neighbours(v) {
                let [x, y, z] = self.grid.coords(u);
                if x > 0 && y > 0 && z > 0 && x + 1 < nx && y + 1 < ny && z + 1 < nz {
                    grown[u] = true;
                }
            }
        }
        self.solid = grown;
    }

    /// Join parts separated by small gaps (mechs built of rigid pieces, feet floating under the
    /// legs): while the largest connected piece spans less than 90 % of the solid's height,
    /// grow the solid by a voxel, at most [`MAX_BRIDGE`] times.
    fn bridge_gaps(&mut self) {
        let span = |grid: &VoxelGrid, mask: &[bool]| {
            let ys = mask
                .iter()
                .enumerate()
                .filter(|(_, m)| **m)
                .map(|(v, _)| grid.coords(v)[1]);
            let (lo, hi) = ys.fold((usize::MAX, 0), |(lo, hi), y| (lo.min(y), hi.max(y)));
            hi.saturating_sub(lo)
        };
        for _ in 0..MAX_BRIDGE {
            let body = self.main_body();
            if span(&self.grid, &body) as f32 >= 0.9 * span(&self.grid, &self.solid) as f32 {
                return;
            }
            self.dilate();
        }
    }

    /// Solid voxels within `radius` of `p` in the one-voxel slab across `axis` (the slab of
    /// [`Volume::section`]), whether connected to `p` or not: compared with the section's own
    /// count it tells a cut through one limb from a cut through several separate parts.
    pub fn slab_count(&self, p: Vec3, axis: Vec3, radius: f32) -> usize {
        let axis = axis.normalize_or(Vec3::Y);
        let half = 0.9 * self.grid.size;
        let (Some(lo), Some(hi)) = (
            self.grid.cell_of(p - Vec3::splat(radius)),
            self.grid.cell_of(p + Vec3::splat(radius)),
        ) else {
            return 0;
        };
        let mut count = 0;
        for z in lo[2]..=hi[2] {
            for y in lo[1]..=hi[1] {
                for x in lo[0]..=hi[0] {
                    let v = self.grid.index([x, y, z]);
                    let r = self.point(v) - p;
                    if self.solid[v] && r.dot(axis).abs() <= half && r.length() <= radius {
                        count += 1;
                    }
                }
            }
        }
        count
    }

    /// Centre of a voxel in the character frame.
    pub fn point(&self, v: Voxel) -> Vec3 {
        self.grid.center(self.grid.coords(v))
    }

    /// True when `p` falls in a solid voxel.
    pub fn is_solid(&self, p: Vec3) -> bool {
        self.grid
            .cell_of(p)
            .is_some_and(|c| self.solid.get(self.grid.index(c)) == Some(&true))
    }

    /// Length (character units) of the solid run straight down (-y) from voxel `v`, bridging
    /// air gaps of up to two voxels (between separate parts that nearly touch).
    pub fn run_down(&self, v: Voxel) -> f32 {
        let nx = self.grid.dims[0];
        let (mut u, mut last, mut k, mut air) = (v, 0usize, 0usize, 0usize);
        loop {
            if self.solid.get(u) == Some(&true) {
                last = k + 1;
                air = 0;
            } else {
                air += 1;
                if air > 2 {
                    break;
                }
            }
            k += 1;
            match u.checked_sub(nx) {
                Some(next) => u = next,
                None => break,
            }
        }
        last as f32 * self.grid.size
    }

    /// True when the segment `a`-`b` runs through solid voxels only (sampled every half voxel).
    pub fn solid_segment(&self, a: Vec3, b: Vec3) -> bool {
        let n = (a.distance(b) / (0.5 * self.grid.size)).ceil() as usize + 1;
        (0..=n).all(|k| self.is_solid(a.lerp(b, k as f32 / n as f32)))
    }

    /// The solid voxel nearest to `p` (searching outward up to `reach` voxels), if any.
    pub fn solid_near(&self, p: Vec3, reach: usize) -> Option<Voxel> {
        let c = self.grid.cell_of(p)?;
        let v = self.grid.index(c);
        if self.solid.get(v) == Some(&true) {
            return Some(v);
        }
        let r = reach as isize;
        let mut best: Option<(f32, Voxel)> = None;
        for dz in -r..=r {
            for dy in -r..=r {
                for dx in -r..=r {
                    let q = [c[0] as isize + dx, c[1] as isize + dy, c[2] as isize + dz];
                    if (0..3).any(|a| q[a] < 0 || q[a] >= self.grid.dims[a] as isize) {
                        continue;
                    }
                    let i = self.grid.index(q.map(|x| x as usize));
                    if self.solid[i] {
                        let dist = self.point(i).distance_squared(p);
                        if best.is_none_or(|(b, _)| dist < b) {
                            best = Some((dist, i));
                        }
                    }
                }
            }
        }
        best.map(|(_, i)| i)
    }

    /// The tree of curve-skeleton paths to `root` ([`MedialTree::path`]): shortest paths over the solid where a
    /// step costs its length divided by the square of the depth it enters, so they keep to the
    /// middle of the limbs. The search runs on the solid at half resolution (2x2x2 blocks, the
    /// deepest voxel's depth): eight times fewer nodes.
    pub fn medial_tree(&self, root: Voxel) -> MedialTree<'_> {
        let dims = self.grid.dims.map(|n| n.div_ceil(2));
        let index = |c: [usize; 3]| (c[2] * dims[1] + c[1]) * dims[0] + c[0];
        let coarse_of = |v: Voxel| index(self.grid.coords(v).map(|x| x / 2));
        let n = dims[0] * dims[1] * dims[2];
        let mut depth = vec![0.0f32; n];
        for v in (0..self.solid.len()).filter(|&v| self.solid[v]) {
            let c = coarse_of(v);
            depth[c] = depth[c].max(0.5 * self.depth[v]);
        }
        let mut cost = vec![f32::INFINITY; n];
        let mut prev = vec![usize::MAX; n];
        let mut heap = BinaryHeap::new();
        let start = coarse_of(root);
        if depth.get(start).is_some_and(|d| *d > 0.0) {
            cost[start] = 0.0;
            heap.push(Entry(0.0, start));
        }
        while let Some(Entry(c, v)) = heap.pop() {
            if c > cost[v] {
                continue;
            }
            let q = [v % dims[0], (v / dims[0]) % dims[1], v / (dims[0] * dims[1])];
            for k in 0..27 {
                let d = [k % 3, (k / 3) % 3, k / 9];
                if k == 13 || (0..3).any(|a| q[a] + d[a] == 0 || q[a] + d[a] > dims[a]) {
                    continue;
                }
                let u = index([0, 1, 2].map(|a| q[a] + d[a] - 1));
                if depth[u] <= 0.0 {
                    continue;
                }
                let len = ((0..3).filter(|&a| d[a] != 1).count() as f32).sqrt();
                let next = c + len / (depth[u] * depth[u]).max(0.25);
                if next < cost[u] {
                    cost[u] = next;
                    prev[u] = v;
                    heap.push(Entry(next, u));
                }
            }
        }
        MedialTree {
            volume: self,
            dims,
            cost,
            prev,
        }
    }

    /// Centroid of the cross-section through `p` perpendicular to `axis`: the solid voxels in a
    /// one-voxel slab, connected to `p` within the slab and within `radius` of it. `p` itself
    /// when no solid voxel is near.
    pub fn section_centre(&self, p: Vec3, axis: Vec3, radius: f32) -> Vec3 {
        self.section(p, axis, radius).0
    }

    /// [`Self::section_centre`] and the number of voxels in the section (its area, in voxels).
    pub fn section(&self, p: Vec3, axis: Vec3, radius: f32) -> (Vec3, usize) {
        let axis = axis.normalize_or(Vec3::Y);
        let Some(start) = self.solid_near(p, 2) else {
            return (p, 0);
        };
        let half = 0.9 * self.grid.size;
        let mut seen = std::collections::HashSet::new();
        let mut queue = VecDeque::from([start]);
        seen.insert(start);
        let (mut sum, mut count) = (Vec3::ZERO, 0usize);
        while let Some(v) = queue.pop_front() {
            let q = self.point(v);
            sum += q;
            count += 1;
            for (u, _) in self.neighbours(v) {
                if self.solid[u] && !seen.contains(&u) {
                    let r = self.point(u) - p;
                    if r.dot(axis).abs() <= half && r.length() <= radius {
                        seen.insert(u);
                        queue.push_back(u);
                    }
                }
            }
        }
        if count == 0 {
            (p, 0)
        } else {
            (sum / count as f32, count)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slab_counts_separate_parts_that_a_section_leaves_out() {
        // Two parallel bars along x, apart in z (fingers): a cut across x meets both.
        let (mut p, mut t) = rigml_geom::procedural::cuboid(Vec3::ZERO, Vec3::new(4.0, 0.5, 0.5));
        let (q, u) = rigml_geom::procedural::cuboid(Vec3::new(0.0, 0.0, 1.0), Vec3::new(4.0, 0.5, 1.5));
        let offset = p.len() as u32;
        p.extend(q);
        t.extend(u.iter().map(|tri| tri.map(|i| i + offset)));
        let vol = Volume::new(&p, &t, 40).unwrap();
        let at = Vec3::new(2.0, 0.25, 0.25);
        let (_, own) = vol.section(at, Vec3::X, 2.0);
        let all = vol.slab_count(at, Vec3::X, 2.0);
        assert!(
            own > 0 && (all as f32 - 2.0 * own as f32).abs() <= 0.2 * own as f32,
            "{own} {all}"
        );
        // Far from anything solid, or at a non-finite point, the slab is empty.
        assert_eq!(vol.slab_count(Vec3::new(2.0, 0.25, 0.75), Vec3::X, 0.1), 0);
        assert_eq!(vol.slab_count(Vec3::NAN, Vec3::X, 1.0), 0);
    }

    #[test]
    fn depth_peaks_in_the_middle_and_paths_stay_central() {
        let (p, t) = rigml_geom::procedural::cuboid(Vec3::new(0.0, 0.0, 0.0), Vec3::new(4.0, 1.0, 1.0));
        let vol = Volume::new(&p, &t, 40).unwrap();
        let centre = vol.solid_near(Vec3::new(2.0, 0.5, 0.5), 0).unwrap();
        let corner = vol.solid_near(Vec3::new(0.05, 0.05, 0.05), 1).unwrap();
        assert!(vol.depth[centre] > 3.0 && vol.depth[corner] <= 1.5);
        let end = vol.solid_near(Vec3::new(3.9, 0.5, 0.5), 0).unwrap();
        let root = vol.solid_near(Vec3::new(0.1, 0.5, 0.5), 0).unwrap();
        let path = vol.medial_tree(root).path(end);
        assert!(path.last().unwrap().distance(vol.point(root)) < 0.2);
        assert!(path[0] == vol.point(end) && path.len() > 10);
        for q in path {
            assert!((q.y - 0.5).abs() < 0.2 && (q.z - 0.5).abs() < 0.2, "{q}");
        }
        let c = vol.section_centre(Vec3::new(2.0, 0.2, 0.8), Vec3::X, 2.0);
        assert!((c - Vec3::new(2.0, 0.5, 0.5)).abs().max_element() < 0.1, "{c}");
    }
}
