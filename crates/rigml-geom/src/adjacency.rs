//! Vertex welding and one-ring adjacency.
//!
//! Source meshes split vertices at UV seams and hard edges, so the triangle graph of a glTF
//! character is cut into many pieces that are one surface geometrically. Solvers that diffuse
//! over the surface (smoothing, bone heat) work on a [`Welded`] copy where coincident vertices
//! are one, and map the result back with [`Welded::map`].

use glam::Vec3;
use std::collections::HashMap;

/// A mesh with coincident vertices merged.
#[derive(Debug, Clone, PartialEq)]
pub struct Welded {
    /// For every source vertex v, its welded vertex.
    pub map: Vec<u32>,
    /// Welded positions (the first source vertex of each group).
    pub positions: Vec<Vec3>,
    /// Triangles over welded vertices. Triangles with an out-of-range corner or with two corners
    /// welded together are dropped (they carry no area or connectivity).
    pub triangles: Vec<[u32; 3]>,
}

impl Welded {
    /// Merge vertices whose positions fall in the same cell of a grid of size `tolerance`
    /// (`tolerance <= 0` merges only bit-identical positions). Non-finite positions are never
    /// merged with anything.
    pub fn new(positions: &[Vec3], triangles: &[[u32; 3]], tolerance: f32) -> Welded {
        let mut cells: HashMap<[i64; 3], u32> = HashMap::with_capacity(positions.len());
        let mut map = Vec::with_capacity(positions.len());
        let mut welded = Vec::new();
        for &p in positions {
            let key = if !p.is_finite() {
                None
            } else if tolerance > 0.0 {
                let q = (p / tolerance).round();
                Some([q.x as i64, q.y as i64, q.z as i64])
            } else {
                Some([p.x.to_bits() as i64, p.y.to_bits() as i64, p.z.to_bits() as i64])
            };
            let next = welded.len() as u32;
            let w = match key {
                Some(key) => *cells.entry(key).or_insert(next),
                None => next,
            };
            if w == next {
                welded.push(p);
            }
            map.push(w);
        }
        let n = positions.len();
        let triangles = triangles
            .iter()
            .filter(|t| t.iter().all(|&i| (i as usize) < n))
            .map(|t| t.map(|i| map[i as usize]))
            .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
            .collect();
        Welded {
            map,
            positions: welded,
            triangles,
        }
    }

    /// Number of welded vertices.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }
}

/// One-ring neighbours of every vertex in compressed-row form (sorted, no duplicates, no self).
#[derive(Debug, Clone, PartialEq)]
pub struct Adjacency {
    offsets: Vec<u32>,
    neighbors: Vec<u32>,
}

impl Adjacency {
    /// Neighbours from the edges of `triangles` over `vertex_count` vertices; corners out of
    /// range are ignored.
    pub fn from_triangles(vertex_count: usize, triangles: &[[u32; 3]]) -> Adjacency {
        let mut edges: Vec<(u32, u32)> = Vec::with_capacity(triangles.len() * 6);
        for t in triangles {
            if t.iter().any(|&i| i as usize >= vertex_count) {
                continue;
            }
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                if a != b {
                    edges.push((a, b));
                    edges.push((b, a));
                }
            }
        }
        Self::from_directed(vertex_count, edges)
    }

    /// Neighbours from an undirected edge list; edges with an end out of range are ignored.
    pub fn from_edges(vertex_count: usize, edges: impl IntoIterator<Item = (u32, u32)>) -> Adjacency {
        let mut directed: Vec<(u32, u32)> = Vec::new();
        for (a, b) in edges {
            if a != b && (a as usize) < vertex_count && (b as usize) < vertex_count {
                directed.push((a, b));
                directed.push((b, a));
            }
        }
        Self::from_directed(vertex_count, directed)
    }

    fn from_directed(vertex_count: usize, mut edges: Vec<(u32, u32)>) -> Adjacency {
        edges.sort_unstable();
        edges.dedup();
        let mut offsets = vec![0u32; vertex_count + 1];
        for &(a, _) in &edges {
            offsets[a as usize + 1] += 1;
        }
        for v in 0..vertex_count {
            offsets[v + 1] += offsets[v];
        }
        Adjacency {
            offsets,
            neighbors: edges.into_iter().map(|(_, b)| b).collect(),
        }
    }

    pub fn vertex_count(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Neighbours of vertex `v` (empty when `v` is out of range).
    pub fn neighbors(&self, v: usize) -> &[u32] {
        match (self.offsets.get(v), self.offsets.get(v + 1)) {
            (Some(&a), Some(&b)) => &self.neighbors[a as usize..b as usize],
            _ => &[],
        }
    }

    /// Connected components: `(label per vertex, component count)`. Isolated vertices are
    /// components of their own.
    pub fn components(&self) -> (Vec<u32>, usize) {
        let n = self.vertex_count();
        let mut label = vec![u32::MAX; n];
        let mut count = 0u32;
        let mut stack = Vec::new();
        for start in 0..n {
            if label[start] != u32::MAX {
                continue;
            }
            label[start] = count;
            stack.push(start as u32);
            while let Some(v) = stack.pop() {
                for &u in self.neighbors(v as usize) {
                    if label[u as usize] == u32::MAX {
                        label[u as usize] = count;
                        stack.push(u);
                    }
                }
            }
            count += 1;
        }
        (label, count as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welding_merges_seams_and_drops_collapsed_triangles() {
        // Two triangles sharing an edge, but with the shared vertices duplicated (a UV seam),
        // plus a triangle that collapses after welding and one with a bad index.
        let p = vec![
            Vec3::ZERO,
            Vec3::X,
            Vec3::Y,
            Vec3::X,
            Vec3::Y,
            Vec3::ONE,
            Vec3::ZERO + Vec3::splat(1e-7),
        ];
        let tris = vec![[0, 1, 2], [3, 5, 4], [0, 6, 1], [0, 1, 99]];
        let w = Welded::new(&p, &tris, 1e-5);
        assert_eq!(w.vertex_count(), 4);
        assert_eq!(w.map, vec![0, 1, 2, 1, 2, 3, 0]);
        assert_eq!(w.triangles, vec![[0, 1, 2], [1, 3, 2]]);
        let exact = Welded::new(&p, &tris, 0.0);
        assert_eq!(exact.vertex_count(), 5);
    }

    #[test]
    fn adjacency_and_components() {
        let tris = vec![[0, 1, 2], [1, 3, 2], [4, 5, 6]];
        let adj = Adjacency::from_triangles(8, &tris);
        assert_eq!(adj.neighbors(1), &[0, 2, 3]);
        assert_eq!(adj.neighbors(7), &[] as &[u32]);
        assert_eq!(adj.neighbors(100), &[] as &[u32]);
        let (label, count) = adj.components();
        assert_eq!(count, 3);
        assert_eq!(label, vec![0, 0, 0, 0, 1, 1, 1, 2]);
        let from_edges = Adjacency::from_edges(4, [(0, 1), (1, 0), (2, 2), (3, 9)]);
        assert_eq!(from_edges.components().1, 3);
    }
}
