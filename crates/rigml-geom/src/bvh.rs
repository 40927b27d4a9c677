//! A bounding-volume hierarchy over triangles for ray and segment queries (bone-heat visibility,
//! voxel inside tests).
//!
//! Built top-down by splitting at the median centroid along the longest axis of the node's
//! centroid bounds; leaves hold up to [`LEAF_SIZE`] triangles. Our own code rather than a crate:
//! the queries needed are two small functions, and the general-purpose crates (`parry3d`, `bvh`)
//! bring their own math types and much more than we use.

use glam::Vec3;

/// Most triangles in a leaf.
pub const LEAF_SIZE: usize = 4;

#[derive(Debug, Clone, Copy)]
struct Node {
    min: Vec3,
    max: Vec3,
    /// Leaf: first triangle; inner: index of the left child (right = left + 1).
    start: u32,
    /// Leaf: triangle count (> 0); inner: 0.
    count: u32,
}

/// Triangle BVH. Triangles with a corner out of range or a non-finite corner are left out.
#[derive(Debug, Clone)]
pub struct Bvh {
    nodes: Vec<Node>,
    /// Triangle corners in leaf order.
    triangles: Vec<[Vec3; 3]>,
    /// Source triangle index of each entry of `triangles`.
    source: Vec<u32>,
}

/// A ray or segment hit: parameter along the direction and the source triangle index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub t: f32,
    pub triangle: u32,
}

impl Bvh {
    pub fn new(positions: &[Vec3], triangles: &[[u32; 3]]) -> Bvh {
        let mut items: Vec<([Vec3; 3], u32)> = triangles
            .iter()
            .enumerate()
            .filter_map(|(t, tri)| {
                let c = [
                    *positions.get(tri[0] as usize)?,
                    *positions.get(tri[1] as usize)?,
                    *positions.get(tri[2] as usize)?,
                ];
                c.iter().all(|p| p.is_finite()).then_some((c, t as u32))
            })
            .collect();
        let mut nodes = Vec::with_capacity(2 * items.len() / LEAF_SIZE + 1);
        nodes.push(Node {
            min: Vec3::ZERO,
            max: Vec3::ZERO,
            start: 0,
            count: 0,
        });
        // (node index, range of items)
        let mut todo = vec![(0usize, 0usize, items.len())];
        while let Some((node, lo, hi)) = todo.pop() {
            let slice = &mut items[lo..hi];
            let (mut min, mut max) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
            let (mut cmin, mut cmax) = (min, max);
            for (c, _) in slice.iter() {
                for p in c {
                    min = min.min(*p);
                    max = max.max(*p);
                }
                let centroid = (c[0] + c[1] + c[2]) / 3.0;
                cmin = cmin.min(centroid);
                cmax = cmax.max(centroid);
            }
            if slice.is_empty() {
                (min, max) = (Vec3::ZERO, Vec3::ZERO);
            }
            let extent = cmax - cmin;
            if slice.len() <= LEAF_SIZE || extent.max_element() <= 0.0 {
                // Only the root of an empty tree can be an empty leaf; traversal never visits it.
                nodes[node] = Node {
                    min,
                    max,
                    start: lo as u32,
                    count: slice.len() as u32,
                };
                continue;
            }
            let axis = if extent.x >= extent.y && extent.x >= extent.z {
                0
            } else if extent.y >= extent.z {
                1
            } else {
                2
            };
            let mid = slice.len() / 2;
            slice.select_nth_unstable_by(mid, |a, b| {
                let ca = a.0[0][axis] + a.0[1][axis] + a.0[2][axis];
                let cb = b.0[0][axis] + b.0[1][axis] + b.0[2][axis];
                ca.total_cmp(&cb)
            });
            let left = nodes.len();
            nodes.push(nodes[node]);
            nodes.push(nodes[node]);
            nodes[node] = Node {
                min,
                max,
                start: left as u32,
                count: 0,
            };
            todo.push((left, lo, lo + mid));
            todo.push((left + 1, lo + mid, hi));
        }
        let (triangles, source) = items.into_iter().unzip();
        Bvh {
            nodes,
            triangles,
            source,
        }
    }

    /// Number of triangles indexed.
    pub fn len(&self) -> usize {
        self.triangles.len()
    }

    pub fn is_empty(&self) -> bool {
        self.triangles.is_empty()
    }

    /// Whether any triangle crosses the ray `origin + t * dir` for `t` in `(t_min, t_max)`.
    pub fn any_hit(&self, origin: Vec3, dir: Vec3, t_min: f32, t_max: f32) -> bool {
        let mut found = false;
        self.traverse(origin, dir, t_min, t_max, |_, _| {
            found = true;
            None
        });
        found
    }

    /// The nearest triangle crossed by the ray for `t` in `(t_min, t_max)`.
    pub fn first_hit(&self, origin: Vec3, dir: Vec3, t_min: f32, t_max: f32) -> Option<Hit> {
        let mut best: Option<Hit> = None;
        self.traverse(origin, dir, t_min, t_max, |t, triangle| {
            if best.is_none_or(|b| t < b.t) {
                best = Some(Hit { t, triangle });
            }
            Some(t)
        });
        best
    }

    /// All hits along the ray for `t` in `(t_min, t_max)`, unsorted.
    pub fn all_hits(&self, origin: Vec3, dir: Vec3, t_min: f32, t_max: f32, out: &mut Vec<Hit>) {
        out.clear();
        self.traverse(origin, dir, t_min, t_max, |t, triangle| {
            out.push(Hit { t, triangle });
            Some(t_max)
        });
    }

    /// Visit hits; the callback returns the new `t_max` to keep going, or `None` to stop.
    fn traverse(
        &self,
        origin: Vec3,
        dir: Vec3,
        t_min: f32,
        mut t_max: f32,
        mut visit: impl FnMut(f32, u32) -> Option<f32>,
    ) {
        if self.triangles.is_empty() || !origin.is_finite() || !dir.is_finite() {
            return;
        }
        let inv = dir.recip();
        let mut stack = Vec::with_capacity(64);
        stack.push(0usize);
        while let Some(n) = stack.pop() {
            let node = self.nodes[n];
            if !slab(node.min, node.max, origin, inv, t_min, t_max) {
                continue;
            }
            if node.count == 0 {
                stack.push(node.start as usize);
                stack.push(node.start as usize + 1);
                continue;
            }
            let range = node.start as usize..(node.start + node.count) as usize;
            for (tri, &src) in self.triangles[range.clone()].iter().zip(&self.source[range]) {
                if let Some(t) = intersect(origin, dir, tri) {
                    if t > t_min && t < t_max {
                        match visit(t, src) {
                            Some(new_max) => t_max = new_max,
                            None => return,
                        }
                    }
                }
            }
        }
    }
}

/// Ray/box slab test (handles infinite inverse directions).
fn slab(min: Vec3, max: Vec3, origin: Vec3, inv: Vec3, t_min: f32, t_max: f32) -> bool {
    let a = (min - origin) * inv;
    let b = (max - origin) * inv;
    let lo = a.min(b);
    let hi = a.max(b);
    // NaN (0 * inf) components come from rays lying in a slab plane: treat them as unbounded.
    let enter = [lo.x, lo.y, lo.z, t_min]
        .into_iter()
        .filter(|v| !v.is_nan())
        .fold(f32::NEG_INFINITY, f32::max);
    let exit = [hi.x, hi.y, hi.z, t_max]
        .into_iter()
        .filter(|v| !v.is_nan())
        .fold(f32::INFINITY, f32::min);
    enter <= exit
}

/// Möller–Trumbore ray/triangle intersection, both sides; `None` for parallel rays.
fn intersect(origin: Vec3, dir: Vec3, tri: &[Vec3; 3]) -> Option<f32> {
    let e1 = tri[1] - tri[0];
    let e2 = tri[2] - tri[0];
    let p = dir.cross(e2);
    let det = e1.dot(p);
    if det.abs() <= f32::MIN_POSITIVE {
        return None;
    }
    let inv = 1.0 / det;
    let s = origin - tri[0];
    let u = s.dot(p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = s.cross(e1);
    let v = dir.dot(q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = e2.dot(q) * inv;
    t.is_finite().then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grid of `n x n` unit quads in the plane z = `z`.
    fn plane(n: u32, z: f32) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let mut p = Vec::new();
        let mut t = Vec::new();
        for y in 0..=n {
            for x in 0..=n {
                p.push(Vec3::new(x as f32, y as f32, z));
            }
        }
        let idx = |x: u32, y: u32| y * (n + 1) + x;
        for y in 0..n {
            for x in 0..n {
                t.push([idx(x, y), idx(x + 1, y), idx(x + 1, y + 1)]);
                t.push([idx(x, y), idx(x + 1, y + 1), idx(x, y + 1)]);
            }
        }
        (p, t)
    }

    #[test]
    fn rays_hit_the_right_triangle_and_brute_force_agrees() {
        let (p, t) = plane(20, 1.0);
        let bvh = Bvh::new(&p, &t);
        assert_eq!(bvh.len(), 800);
        let origin = Vec3::new(3.3, 7.6, 0.0);
        let hit = bvh.first_hit(origin, Vec3::Z, 0.0, 10.0).unwrap();
        assert!((hit.t - 1.0).abs() < 1e-6);
        let brute: Vec<u32> = t
            .iter()
            .enumerate()
            .filter(|(_, tri)| intersect(origin, Vec3::Z, &tri.map(|i| p[i as usize])).is_some())
            .map(|(i, _)| i as u32)
            .collect();
        assert_eq!(brute, vec![hit.triangle]);
        // A segment that stops short of the plane, one beside it, one pointing away.
        assert!(!bvh.any_hit(origin, Vec3::Z, 0.0, 0.99));
        assert!(!bvh.any_hit(Vec3::new(-1.0, 5.0, 0.0), Vec3::Z, 0.0, 10.0));
        assert!(!bvh.any_hit(origin, -Vec3::Z, 0.0, 10.0));
        // Axis-aligned ray in the plane of box faces must not produce NaN misses.
        assert!(bvh.any_hit(Vec3::new(5.5, 5.5, 2.0), -Vec3::Z, 0.0, 5.0));
    }

    #[test]
    fn all_hits_through_two_layers_and_bad_triangles_skipped() {
        let (mut p, mut t) = plane(4, 0.0);
        let (p2, t2) = plane(4, 2.0);
        let off = p.len() as u32;
        p.extend(p2);
        t.extend(t2.iter().map(|tri| tri.map(|i| i + off)));
        t.push([0, 1, 999]);
        p.push(Vec3::NAN);
        t.push([0, 1, p.len() as u32 - 1]);
        let bvh = Bvh::new(&p, &t);
        assert_eq!(bvh.len(), 64);
        let mut hits = Vec::new();
        bvh.all_hits(Vec3::new(1.2, 2.7, -1.0), Vec3::Z, 0.0, f32::INFINITY, &mut hits);
        assert_eq!(hits.len(), 2);
        assert!(Bvh::new(&[], &[]).first_hit(Vec3::ZERO, Vec3::Z, 0.0, 1.0).is_none());
    }
}
