//! Geodesic distances through the solid: Dijkstra over the 26-neighbourhood with integer step
//! costs and a ring of buckets (Dial's algorithm) as the queue.
//!
//! Two searches share it:
//! - [`nearest_distances`]: one multi-source search from every bone, giving each solid voxel
//!   its distance to the nearest bone (the reference for how far other bones may reach);
//! - [`bone_labels`]: one search per joint, in parallel over joints, each stopped at every
//!   voxel where the joint is beyond the voxel's reach, recording the distances at the query
//!   voxels (those holding mesh vertices) into a per-query top-k.
//!
//! A search per joint touches only the neighbourhood of its bone, so its state stays in the
//! CPU cache and joints run independently on every core; one search carrying several labels
//! per voxel sweeps the whole solid at once and waits on memory.

use super::solid::Solid;
use rayon::prelude::*;

/// Buckets in the ring: more than the largest step (√3 voxels = 28 units).
const RING: usize = 32;

/// Bits of a packed label `distance << JOINT_BITS | joint` holding the joint (comparing packed
/// labels compares distances, then joints).
pub const JOINT_BITS: u32 = 16;
pub const JOINT_MASK: u32 = (1 << JOINT_BITS) - 1;

/// An unused label slot (joint bits all ones: no real joint matches).
pub const EMPTY: u32 = u32::MAX;

/// Unreached voxel in a distance array.
pub const UNREACHED: u32 = u32::MAX;

/// Largest distance in units a search goes (4095 voxels, 16 grids of 256 across), so that it
/// fits a packed label: a voxel farther than that from every bone gets no label and its
/// vertices fall back to the nearest bone in post-processing.
pub const MAX_UNITS: u32 = (1 << (32 - JOINT_BITS)) - 2;

/// Reusable state of one search: the bucket ring and the list of voxels whose distance was set
/// (to reset a scratch distance array in time proportional to what the search touched).
#[derive(Debug, Default)]
struct Queue {
    ring: Vec<Vec<u32>>,
    bucket: Vec<u32>,
    touched: Vec<u32>,
}

impl Queue {
    fn new() -> Queue {
        Queue {
            ring: vec![Vec::new(); RING],
            bucket: Vec::new(),
            touched: Vec::new(),
        }
    }

    /// Dijkstra from `seeds` (`(distance, solid voxel)`, sorted by distance) through `solid`,
    /// lowering `dist` (indexed by solid number; [`UNREACHED`] = not yet reached). A voxel
    /// takes a distance only up to its `limit` (and [`MAX_UNITS`]); past it the search does not
    /// go through that voxel. Every voxel whose distance was set is added to `self.touched`.
    fn run(&mut self, solid: &Solid, seeds: &[(u32, u32)], dist: &mut [u32], limit: impl Fn(u32) -> u32) {
        let Some(&(first, _)) = seeds.first() else {
            return;
        };
        let Queue { ring, bucket, touched } = self;
        let mut offer = Offer {
            dist,
            ring,
            touched,
            limit,
            queued: 0,
        };
        let mut current = first;
        let mut next_seed = 0;
        loop {
            if offer.queued == 0 {
                // Jump to the next seed, if any.
                match seeds.get(next_seed) {
                    Some(&(d, _)) => current = current.max(d),
                    None => break,
                }
            }
            while let Some(&(d, s)) = seeds.get(next_seed) {
                if d > current {
                    break;
                }
                next_seed += 1;
                offer.offer(s, d.max(current));
            }
            let Some(due) = offer.ring.get_mut(current as usize % RING) else {
                break;
            };
            // Steps are shorter than the ring, so no offer below lands in this bucket.
            std::mem::swap(bucket, due);
            offer.queued -= bucket.len();
            for &s in bucket.iter() {
                // Stale entries (the voxel was lowered since) are skipped.
                if offer.dist.get(s as usize) != Some(&current) {
                    continue;
                }
                solid.for_neighbours(s, |t, cost| offer.offer(t, current + cost));
            }
            bucket.clear();
            current += 1;
        }
    }
}

/// The mutable state an offer of a distance to a voxel updates.
struct Offer<'a, L> {
    dist: &'a mut [u32],
    ring: &'a mut [Vec<u32>],
    touched: &'a mut Vec<u32>,
    limit: L,
    queued: usize,
}

impl<L: Fn(u32) -> u32> Offer<'_, L> {
    /// Lower voxel `t` to distance `d` if that is shorter and within its limit, and queue it.
    #[inline]
    fn offer(&mut self, t: u32, d: u32) {
        let Some(slot) = self.dist.get_mut(t as usize) else {
            return;
        };
        if d < *slot && d <= (self.limit)(t).min(MAX_UNITS) {
            if *slot == UNREACHED {
                self.touched.push(t);
            }
            *slot = d;
            if let Some(bucket) = self.ring.get_mut(d as usize % RING) {
                bucket.push(t);
                self.queued += 1;
            }
        }
    }
}

/// Per solid voxel, the distance in units to the nearest bone ([`UNREACHED`] in a part of the
/// solid no bone reaches). `seeds`: `(distance, solid voxel)` of every bone, any order.
pub fn nearest_distances(solid: &Solid, seeds: &[(u32, u32)]) -> Vec<u32> {
    let mut seeds = seeds.to_vec();
    seeds.sort_unstable();
    let mut dist = vec![UNREACHED; solid.len()];
    let mut queue = Queue::new();
    queue.run(solid, &seeds, &mut dist, |_| MAX_UNITS);
    dist
}

/// The `k` nearest joints of each query voxel, as packed labels.
#[derive(Debug, Clone)]
pub struct TopK {
    k: usize,
    /// `k` slots per query, unordered; unused slots are [`EMPTY`].
    slots: Vec<u32>,
}

impl TopK {
    fn new(queries: usize, k: usize) -> TopK {
        TopK {
            k,
            slots: vec![EMPTY; queries * k],
        }
    }

    /// Keep `label` at query `q` if it is among the `k` smallest seen there.
    fn insert(&mut self, q: usize, label: u32) {
        let Some(slots) = self.slots.get_mut(q * self.k..(q + 1) * self.k) else {
            return;
        };
        let worst = slots.iter_mut().max();
        if let Some(worst) = worst.filter(|w| label < **w) {
            *worst = label;
        }
    }

    /// Fold `other` (same shape) into `self`.
    fn merge(mut self, other: TopK) -> TopK {
        for (q, slots) in other.slots.chunks_exact(other.k.max(1)).enumerate() {
            for &label in slots.iter().filter(|&&l| l != EMPTY) {
                self.insert(q, label);
            }
        }
        self
    }

    /// The labels of query `q` as `(joint, distance in units)`, nearest first (ties: lower
    /// joint first).
    pub fn labels(&self, q: usize) -> Vec<(u32, u32)> {
        let mut slots = self.slots.get(q * self.k..(q + 1) * self.k).unwrap_or(&[]).to_vec();
        slots.sort_unstable();
        slots
            .into_iter()
            .filter(|&e| e != EMPTY)
            .map(|e| (e & JOINT_MASK, e >> JOINT_BITS))
            .collect()
    }
}

/// One joint's seeds: `(joint, [(distance, solid voxel)])` sorted by distance.
pub type JointSeeds = (u32, Vec<(u32, u32)>);

/// For every query voxel (`query_of[s]` = its query number, or `u32::MAX` when voxel `s` is not
/// one), the `k` nearest joints by geodesic distance among those within reach: a joint's search
/// does not go through a voxel where it is farther than `reach[s]` units. `queries` is the
/// number of query voxels.
pub fn bone_labels(
    solid: &Solid,
    joints: &[JointSeeds],
    reach: &[u32],
    query_of: &[u32],
    queries: usize,
    k: usize,
) -> TopK {
    let k = k.max(1);
    joints
        .par_iter()
        .fold(
            || (vec![UNREACHED; solid.len()], Queue::new(), TopK::new(queries, k)),
            |(mut dist, mut queue, mut top), (joint, seeds)| {
                queue.run(solid, seeds, &mut dist, |s| reach.get(s as usize).copied().unwrap_or(0));
                for s in queue.touched.drain(..) {
                    let Some(d) = dist.get_mut(s as usize) else {
                        continue;
                    };
                    if let Some(&q) = query_of.get(s as usize).filter(|&&q| q != u32::MAX) {
                        top.insert(q as usize, (*d << JOINT_BITS) | joint);
                    }
                    *d = UNREACHED;
                }
                (dist, queue, top)
            },
        )
        .map(|(_, _, top)| top)
        .reduce_with(TopK::merge)
        .unwrap_or_else(|| TopK::new(queries, k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;
    use rigml_geom::procedural::cuboid;
    use rigml_geom::VoxelGrid;

    /// Plain Dijkstra with a binary heap over the dense grid, as a reference; voxel `s` is
    /// entered only at a distance up to `limit[s]`.
    fn reference(grid: &VoxelGrid, solid: &Solid, seeds: &[(u32, u32)], limit: &[u32]) -> Vec<u32> {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut dist = vec![UNREACHED; solid.len()];
        let mut heap: BinaryHeap<Reverse<(u32, u32)>> = seeds.iter().map(|&(d, s)| Reverse((d, s))).collect();
        while let Some(Reverse((d, s))) = heap.pop() {
            if d >= dist[s as usize] || d > limit[s as usize] {
                continue;
            }
            dist[s as usize] = d;
            let c = grid.coords(solid.cells[s as usize] as usize).map(|v| v as i64);
            for dz in -1..=1i64 {
                for dy in -1..=1i64 {
                    for dx in -1..=1i64 {
                        let n = [c[0] + dx, c[1] + dy, c[2] + dz].map(|v| v as usize);
                        let t = solid.index[grid.index(n)];
                        let steps = dx * dx + dy * dy + dz * dz;
                        if steps > 0 && t != u32::MAX {
                            heap.push(Reverse((d + [0, 16, 23, 28][steps as usize], t)));
                        }
                    }
                }
            }
        }
        dist
    }

    #[test]
    fn bucket_queue_matches_a_binary_heap_dijkstra() {
        let (p, t) = cuboid(Vec3::ZERO, Vec3::new(1.0, 0.4, 0.3));
        let grid = VoxelGrid::new(&p, &t, 20).unwrap();
        let solid = Solid::new(&grid);
        let a = solid
            .at(&grid, grid.cell_of(Vec3::new(0.1, 0.2, 0.15)).unwrap())
            .unwrap();
        let b = solid
            .at(&grid, grid.cell_of(Vec3::new(0.9, 0.1, 0.1)).unwrap())
            .unwrap();
        let seeds = [(0, a), (5, b)];
        let got = nearest_distances(&solid, &seeds);
        assert_eq!(got, reference(&grid, &solid, &seeds, &vec![u32::MAX; solid.len()]));
        assert!(got.iter().all(|&d| d != UNREACHED));
    }

    #[test]
    fn per_joint_labels_are_the_k_nearest_within_reach() {
        let (p, t) = cuboid(Vec3::ZERO, Vec3::new(1.0, 0.25, 0.25));
        let grid = VoxelGrid::new(&p, &t, 24).unwrap();
        let solid = Solid::new(&grid);
        // Three joints seeded at single voxels along x.
        let joints: Vec<JointSeeds> = [0.1f32, 0.5, 0.9]
            .iter()
            .enumerate()
            .map(|(j, &x)| {
                let s = solid
                    .at(&grid, grid.cell_of(Vec3::new(x, 0.12, 0.12)).unwrap())
                    .unwrap();
                (j as u32, vec![(0, s)])
            })
            .collect();
        let all: Vec<(u32, u32)> = joints.iter().flat_map(|j| j.1.clone()).collect();
        let nearest = nearest_distances(&solid, &all);
        let reach: Vec<u32> = nearest.iter().map(|&d| d * 3 / 2 + 8).collect();
        let single: Vec<Vec<u32>> = joints
            .iter()
            .map(|(_, s)| reference(&grid, &solid, s, &reach))
            .collect();
        let unlimited: Vec<u32> = vec![u32::MAX; solid.len()];
        let query_of: Vec<u32> = (0..solid.len() as u32).collect();
        let top = bone_labels(&solid, &joints, &reach, &query_of, solid.len(), 2);
        for s in 0..solid.len() {
            assert_eq!(nearest[s], single.iter().map(|d| d[s]).min().unwrap());
            let mut expected: Vec<(u32, u32)> = (0..3)
                .filter(|&j| single[j][s] != UNREACHED)
                .map(|j| (j as u32, single[j][s]))
                .collect();
            expected.sort_by_key(|&(j, d)| (d, j));
            expected.truncate(2);
            assert_eq!(top.labels(s), expected, "voxel {s}");
        }
        // The reach matters: some voxel sees fewer joints than without it.
        let free: Vec<Vec<u32>> = joints
            .iter()
            .map(|(_, s)| reference(&grid, &solid, s, &unlimited))
            .collect();
        assert!((0..solid.len()).any(|s| (0..3).any(|j| free[j][s] != single[j][s])));
    }
}
