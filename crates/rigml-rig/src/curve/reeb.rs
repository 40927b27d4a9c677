//! A discrete Reeb graph of the geodesic distance inside the solid: voxels are cut into bands
//! of equal distance from a source voxel, each connected piece of a band becomes a node at the
//! piece's centroid (inside tubular parts it is the centre of the cross-section), and each node
//! hangs from the node of the previous band its shortest paths come through. The result is a
//! tree whose branches follow the limbs.

use super::solid::{Solid, UnionFind, NONE};
use glam::Vec3;
use rigml_geom::Cell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// One node of the Reeb tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Model-space position (inside the solid).
    pub position: Vec3,
    /// Parent node (`parent < self` in the node list); `None` for the source's node.
    pub parent: Option<usize>,
    /// Voxels in the band piece.
    pub voxels: usize,
    /// The position is in an interior voxel (not one the surface passes through), so it is
    /// surely inside the mesh.
    pub interior: bool,
    /// Distance from the position to the surface (model units, from the voxel depth): the
    /// local thickness a side branch must stick out beyond to count.
    pub radius: f32,
}

/// Geodesic distance (×1000 voxel edges) from the nearest of `sources` over the 26-connected
/// solid, and each voxel's predecessor on its shortest path (`NONE` for sources and unreached
/// voxels).
pub fn geodesic(solid: &Solid, sources: &[usize]) -> (Vec<u32>, Vec<u32>) {
    let n = solid.len();
    let mut dist = vec![u32::MAX; n];
    let mut pred = vec![NONE; n];
    let mut heap = BinaryHeap::new();
    for &source in sources.iter().filter(|&&s| s < n) {
        dist[source] = 0;
        heap.push(Reverse((0u32, source as u32)));
    }
    while let Some(Reverse((d, v))) = heap.pop() {
        let v = v as usize;
        if d > dist[v] {
            continue;
        }
        for (u, cost) in solid.solid_neighbours(v) {
            let nd = d + cost;
            if nd < dist[u] {
                dist[u] = nd;
                pred[u] = v as u32;
                heap.push(Reverse((nd, u as u32)));
            }
        }
    }
    (dist, pred)
}

/// The source voxel: among voxels at least half as deep as the deepest, the one nearest the
/// solid's centroid (a thick part near the middle of the shape). With `on_plane`, only voxels
/// for which it is true are candidates (when any is).
pub fn source_voxel(solid: &Solid, depth: &[u32], on_plane: &dyn Fn(usize) -> bool) -> usize {
    let centroid = (0..solid.len()).map(|v| solid.center(v)).sum::<Vec3>() / solid.len().max(1) as f32;
    let pick = |filter: &dyn Fn(usize) -> bool| {
        let max = (0..solid.len()).filter(|&v| filter(v)).map(|v| depth[v]).max()?;
        (0..solid.len())
            .filter(|&v| filter(v) && 2 * depth[v] >= max)
            .min_by(|&a, &b| {
                solid
                    .center(a)
                    .distance_squared(centroid)
                    .total_cmp(&solid.center(b).distance_squared(centroid))
            })
    };
    pick(on_plane).or_else(|| pick(&|_| true)).unwrap_or(0)
}

/// Build the Reeb tree: bands `band` voxel edges wide of the geodesic distance from `sources`
/// (one voxel, or a voxel and its mirror image). Unreached voxels (none after bridging) are
/// ignored. Nodes are listed by band, so parents come first. `depth` is [`Solid::depth`].
pub fn reeb_tree(solid: &Solid, sources: &[usize], band: f32, depth: &[u32]) -> Vec<Node> {
    let (dist, pred) = geodesic(solid, sources);
    let width = (band.max(1.0) * 1000.0) as u32;
    let band_of = |v: usize| (dist[v] != u32::MAX).then(|| dist[v] / width);
    let n = solid.len();
    let mut sets = UnionFind::new(n);
    for v in 0..n {
        let Some(b) = band_of(v) else { continue };
        for (u, _) in solid.solid_neighbours(v) {
            if u > v && band_of(u) == Some(b) {
                sets.union(u, v);
            }
        }
    }
    // Pieces, ordered by (band, smallest voxel id) so the numbering is deterministic.
    let mut piece_of = vec![NONE; n];
    let mut keys: Vec<(u32, usize)> = Vec::new();
    let mut root_piece: HashMap<usize, usize> = HashMap::new();
    for v in 0..n {
        let Some(b) = band_of(v) else { continue };
        let r = sets.find(v);
        if let std::collections::hash_map::Entry::Vacant(e) = root_piece.entry(r) {
            e.insert(keys.len());
            keys.push((b, v));
        }
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_unstable_by_key(|&k| keys[k]);
    let mut rank = vec![0usize; keys.len()];
    for (i, &k) in order.iter().enumerate() {
        rank[k] = i;
    }
    for v in 0..n {
        if band_of(v).is_some() {
            piece_of[v] = rank[root_piece[&sets.find(v)]] as u32;
        }
    }
    let pieces = keys.len();
    let mut sum = vec![Vec3::ZERO; pieces];
    let mut count = vec![0usize; pieces];
    let mut votes: Vec<HashMap<u32, usize>> = vec![HashMap::new(); pieces];
    for v in 0..n {
        let p = piece_of[v];
        if p == NONE {
            continue;
        }
        sum[p as usize] += solid.center(v);
        count[p as usize] += 1;
        let q = pred[v];
        if q != NONE && piece_of[q as usize] != p {
            *votes[p as usize].entry(piece_of[q as usize]).or_insert(0) += 1;
        }
    }
    // Snap a centroid that falls outside the solid (a curved piece) to the piece's voxel
    // nearest to it, preferring interior voxels.
    let centroid: Vec<Vec3> = (0..pieces).map(|p| sum[p] / count[p].max(1) as f32).collect();
    let mut best: Vec<(f32, Vec3)> = vec![(f32::MAX, Vec3::ZERO); pieces];
    let needs_snap: Vec<bool> = centroid
        .iter()
        .map(|c| {
            solid
                .grid
                .cell_of(*c)
                .is_none_or(|cell| solid.grid.cells[solid.grid.index(cell)] != Cell::Interior)
        })
        .collect();
    for (v, &p) in piece_of.iter().enumerate() {
        if p == NONE || !needs_snap[p as usize] {
            continue;
        }
        let p = p as usize;
        let c = solid.center(v);
        let interior = solid.grid.cells[solid.voxels[v] as usize] == Cell::Interior;
        let d = c.distance_squared(centroid[p]) + if interior { 0.0 } else { 1e30 };
        if d < best[p].0 {
            best[p] = (d, c);
        }
    }
    let radius = |c: Vec3| {
        let d = solid
            .grid
            .cell_of(c)
            .map(|cell| solid.compact[solid.grid.index(cell)])
            .filter(|&v| v != NONE)
            .map_or(0, |v| depth.get(v as usize).copied().unwrap_or(0));
        (d as f32 - 0.5).max(0.0) * solid.grid.size
    };
    let is_interior = |c: Vec3| {
        solid
            .grid
            .cell_of(c)
            .is_some_and(|cell| solid.grid.cells[solid.grid.index(cell)] == Cell::Interior)
    };
    (0..pieces)
        .map(|p| {
            let parent = votes[p]
                .iter()
                .filter(|(&q, _)| (q as usize) < p)
                .max_by_key(|(&q, &c)| (c, Reverse(q)))
                .map(|(&q, _)| q as usize);
            let position = if needs_snap[p] && best[p].0 < f32::MAX {
                best[p].1
            } else {
                centroid[p]
            };
            Node {
                position,
                parent,
                voxels: count[p],
                interior: is_interior(position),
                radius: radius(position),
            }
        })
        .collect()
}
