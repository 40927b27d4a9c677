//! From per-point votes to a joint tree: weighted mean shift over the votes (each point votes
//! for `point + predicted offset`, weighted by its confidence), modes merged within a radius
//! that follows the predicted joint spacing, weak modes dropped; then a minimum spanning tree
//! whose edge cost is the bone length times a penalty for the part of the bone outside the
//! solid, rooted at the joint nearest the centre of the surface.

use super::points::PointGrid;
use glam::Vec3;
use rayon::prelude::*;

/// Clustering and connectivity settings (normalised units), chosen on val and stored in the
/// model file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Mean-shift Gaussian kernel width.
    pub bandwidth: f32,
    /// Modes closer than `merge × predicted joint spacing` (and at least `bandwidth`) are one
    /// joint.
    pub merge: f32,
    /// A joint must gather at least this share of the total vote weight.
    pub min_mass: f32,
    /// Vote weight = confidence^power.
    pub power: f32,
    /// Bone cost = length × (1 + outside × share of the bone outside the solid).
    pub outside: f32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            bandwidth: 0.02,
            merge: 0.5,
            min_mass: 0.004,
            power: 2.0,
            outside: 8.0,
        }
    }
}

/// Metadata keys of [`Settings`] in a model file.
pub const KEYS: [&str; 5] = [
    "rigml.skeleton.bandwidth",
    "rigml.skeleton.merge",
    "rigml.skeleton.min_mass",
    "rigml.skeleton.power",
    "rigml.skeleton.outside",
];

impl Settings {
    /// As `(key, value)` pairs for a model file's metadata.
    pub fn to_metadata(&self) -> Vec<(String, String)> {
        let values = [self.bandwidth, self.merge, self.min_mass, self.power, self.outside];
        KEYS.iter()
            .zip(values)
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Settings from metadata (`get` looks a key up), defaults for missing or unusable values.
    pub fn from_metadata(get: impl Fn(&str) -> Option<f32>) -> Settings {
        let d = Settings::default();
        let ok = |key: &str, default: f32, range: std::ops::RangeInclusive<f32>| {
            get(key).filter(|v| range.contains(v)).unwrap_or(default)
        };
        Settings {
            bandwidth: ok(KEYS[0], d.bandwidth, 1e-4..=0.5),
            merge: ok(KEYS[1], d.merge, 0.0..=4.0),
            min_mass: ok(KEYS[2], d.min_mass, 0.0..=0.5),
            power: ok(KEYS[3], d.power, 0.0..=8.0),
            outside: ok(KEYS[4], d.outside, 0.0..=1000.0),
        }
    }
}

/// One vote: where a point says its joint is, its confidence (the vote counts
/// `weight^power`), and the joint spacing it predicts there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Vote {
    pub at: Vec3,
    pub weight: f32,
    pub spacing: f32,
}

/// Mean-shift modes of the votes for one bandwidth and confidence power (the expensive half of
/// [`cluster`]; [`Modes::joints`] then merges and filters them for any `merge` / `min_mass`).
#[derive(Debug, Clone, PartialEq)]
pub struct Modes {
    /// Per vote: the mode it converged to, the kernel density there, its weight, its spacing.
    modes: Vec<(Vec3, f32, f32, f32)>,
    total: f32,
    bandwidth: f32,
}

impl Modes {
    /// Run mean shift from every vote (weights `confidence^power`, Gaussian kernel of width
    /// `bandwidth` cut at 2.5 widths).
    pub fn new(votes: &[Vote], bandwidth: f32, power: f32) -> Modes {
        let votes: Vec<Vote> = votes
            .iter()
            .copied()
            .filter(|v| v.at.is_finite() && v.weight.is_finite() && v.weight > 0.0 && v.spacing.is_finite())
            .map(|v| Vote {
                weight: v.weight.powf(power),
                ..v
            })
            .filter(|v| v.weight > 0.0 && v.weight.is_finite())
            .collect();
        let total: f32 = votes.iter().map(|v| v.weight).sum();
        let h = bandwidth.max(1e-4);
        let reach = 2.5 * h;
        let at: Vec<Vec3> = votes.iter().map(|v| v.at).collect();
        let grid = PointGrid::new(&at, reach);
        let modes = at
            .par_iter()
            .zip(votes.par_iter())
            .map(|(&start, v)| {
                let mut x = start;
                let mut density = 0.0;
                for _ in 0..30 {
                    let (mut sum, mut mass) = (Vec3::ZERO, 0.0f32);
                    grid.for_near_index(x, |i| {
                        let d2 = at[i].distance_squared(x);
                        if d2 <= reach * reach {
                            let k = votes[i].weight * (-0.5 * d2 / (h * h)).exp();
                            sum += at[i] * k;
                            mass += k;
                        }
                    });
                    if mass <= 0.0 {
                        break;
                    }
                    density = mass;
                    let next = sum / mass;
                    let moved = next.distance(x);
                    x = next;
                    if moved < 1e-2 * h {
                        break;
                    }
                }
                (x, density, v.weight, v.spacing)
            })
            .collect();
        Modes {
            modes,
            total,
            bandwidth: h,
        }
    }

    /// Merge the modes, densest first, within `max(bandwidth, merge × predicted spacing)`, and
    /// keep those gathering at least `min_mass` of the total weight.
    pub fn joints(&self, merge: f32, min_mass: f32) -> Vec<Vec3> {
        if self.total <= 0.0 {
            return Vec::new();
        }
        let mut order: Vec<usize> = (0..self.modes.len()).collect();
        order.sort_by(|&a, &b| self.modes[b].1.total_cmp(&self.modes[a].1).then(a.cmp(&b)));
        // (position, mass, weighted spacing sum)
        let mut joints: Vec<(Vec3, f32, f32)> = Vec::new();
        for i in order {
            let (x, _, w, spacing) = self.modes[i];
            let found = joints
                .iter_mut()
                .find(|j| x.distance(j.0) <= (merge * j.2 / j.1.max(1e-12)).max(self.bandwidth));
            match found {
                Some(j) => {
                    j.1 += w;
                    j.2 += w * spacing;
                }
                None => joints.push((x, w, w * spacing)),
            }
        }
        joints
            .into_iter()
            .filter(|j| j.1 >= min_mass * self.total)
            .map(|j| j.0)
            .collect()
    }
}

/// Joint positions from votes (see the module documentation). Empty when no vote has weight.
pub fn cluster(votes: &[Vote], s: &Settings) -> Vec<Vec3> {
    Modes::new(votes, s.bandwidth, s.power).joints(s.merge, s.min_mass)
}

/// A joint tree: positions with parents listed before children (`parents[0] = None`).
#[derive(Debug, Clone, PartialEq)]
pub struct Tree {
    pub positions: Vec<Vec3>,
    pub parents: Vec<Option<usize>>,
}

/// Minimum spanning tree over `joints` (all pairs; cost = length × (1 + `outside` × share of
/// the segment where `inside` is false)), rooted at the joint nearest `centre`, in breadth-first
/// order. Empty input gives an empty tree.
pub fn connect(joints: &[Vec3], centre: Vec3, outside: f32, step: f32, inside: &(dyn Fn(Vec3) -> bool + Sync)) -> Tree {
    let n = joints.len();
    if n == 0 {
        return Tree {
            positions: Vec::new(),
            parents: Vec::new(),
        };
    }
    let step = step.max(1e-4);
    let cost = |a: usize, b: usize| -> f32 {
        let (p, q) = (joints[a], joints[b]);
        let length = p.distance(q);
        let samples = ((length / step).ceil() as usize).clamp(1, 512);
        let out = (0..=samples)
            .filter(|&i| !inside(p.lerp(q, i as f32 / samples as f32)))
            .count() as f32
            / (samples + 1) as f32;
        length * (1.0 + outside * out)
    };
    let costs: Vec<Vec<f32>> = (0..n)
        .into_par_iter()
        .map(|a| {
            (0..n)
                .map(|b| if a == b { 0.0 } else { cost(a.min(b), a.max(b)) })
                .collect()
        })
        .collect();
    let root = (0..n)
        .min_by(|&a, &b| joints[a].distance(centre).total_cmp(&joints[b].distance(centre)))
        .unwrap_or(0);
    // Prim from the root.
    let mut in_tree = vec![false; n];
    let mut best = vec![(f32::INFINITY, usize::MAX); n];
    let mut parent = vec![None; n];
    best[root] = (0.0, usize::MAX);
    for _ in 0..n {
        let Some(u) = (0..n)
            .filter(|&i| !in_tree[i])
            .min_by(|&a, &b| best[a].0.total_cmp(&best[b].0))
        else {
            break;
        };
        in_tree[u] = true;
        if best[u].1 != usize::MAX {
            parent[u] = Some(best[u].1);
        }
        for v in 0..n {
            if !in_tree[v] && costs[u][v] < best[v].0 {
                best[v] = (costs[u][v], u);
            }
        }
    }
    // Breadth-first order from the root so that parents come first.
    let mut children = vec![Vec::new(); n];
    for (c, p) in parent.iter().enumerate() {
        if let Some(p) = *p {
            children[p].push(c);
        }
    }
    let mut order = vec![root];
    let mut k = 0;
    while k < order.len() {
        let u = order[k];
        order.extend(children[u].iter().copied());
        k += 1;
    }
    let mut index = vec![usize::MAX; n];
    for (i, &j) in order.iter().enumerate() {
        index[j] = i;
    }
    Tree {
        positions: order.iter().map(|&j| joints[j]).collect(),
        parents: order
            .iter()
            .map(|&j| parent[j].map(|p| index[p]).filter(|&p| p != usize::MAX))
            .collect(),
    }
}

/// Make a joint set mirror symmetric about `x = 0`: each joint is paired with the joint nearest
/// its mirror image (mutually nearest, within `pair`) and the pair is averaged into an exact
/// mirror pair; joints within `pair / 2` of the plane without a partner go onto it; other
/// joints stay.
pub fn symmetrise(joints: &mut [Vec3], pair: f32) {
    let mirror = |p: Vec3| Vec3::new(-p.x, p.y, p.z);
    let n = joints.len();
    let nearest = |j: usize, js: &[Vec3]| -> Option<(usize, f32)> {
        let image = mirror(js[j]);
        (0..n)
            .filter(|&k| k != j)
            .map(|k| (k, js[k].distance(image)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    };
    let original = joints.to_vec();
    for j in 0..n {
        let on_plane = original[j].x.abs() <= 0.5 * pair;
        let partner = nearest(j, &original)
            .filter(|&(k, d)| d <= pair && !on_plane && nearest(k, &original).is_some_and(|(b, _)| b == j));
        match partner {
            Some((k, _)) => joints[j] = (original[j] + mirror(original[k])) * 0.5,
            None if on_plane => joints[j].x = 0.0,
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn votes_around(centres: &[(Vec3, usize)]) -> Vec<Vote> {
        let mut out = Vec::new();
        for (c, count) in centres {
            for i in 0..*count {
                let t = i as f32 * 2.399;
                let jitter = Vec3::new(t.cos(), t.sin(), (3.0 * t).cos()) * 0.004;
                out.push(Vote {
                    at: *c + jitter,
                    weight: 1.0,
                    spacing: 0.2,
                });
            }
        }
        out
    }

    #[test]
    fn votes_become_one_joint_per_cluster_and_weak_clusters_are_dropped() {
        let votes = votes_around(&[(Vec3::ZERO, 100), (Vec3::new(0.3, 0.0, 0.0), 80), (Vec3::Y * 0.3, 1)]);
        let s = Settings {
            min_mass: 0.02,
            ..Settings::default()
        };
        let mut joints = cluster(&votes, &s);
        joints.sort_by(|a, b| a.x.total_cmp(&b.x));
        assert_eq!(joints.len(), 2, "{joints:?}");
        assert!(joints[0].length() < 0.01 && (joints[1].x - 0.3).abs() < 0.01);
        assert!(cluster(&[], &s).is_empty());
    }

    #[test]
    fn the_tree_avoids_bones_outside_the_solid() {
        // A U shape: two arms joined at the bottom; the tops are close but the gap is empty.
        let joints = [
            Vec3::new(-0.1, 0.0, 0.0),
            Vec3::new(0.1, 0.0, 0.0),
            Vec3::new(-0.1, 0.3, 0.0),
            Vec3::new(0.1, 0.3, 0.0),
        ];
        let inside = |p: Vec3| p.y < 0.05 || p.x.abs() > 0.05;
        let tree = connect(&joints, Vec3::new(-0.1, 0.0, 0.0), 8.0, 0.01, &inside);
        assert_eq!(tree.positions[0], joints[0]);
        assert_eq!(tree.parents[0], None);
        let bones: Vec<(Vec3, Vec3)> = tree
            .parents
            .iter()
            .enumerate()
            .filter_map(|(c, p)| p.map(|p| (tree.positions[p], tree.positions[c])))
            .collect();
        assert_eq!(bones.len(), 3);
        for (p, c) in bones {
            assert!(!(p.y > 0.2 && c.y > 0.2), "bone across the gap {p} {c}");
        }
        for (c, p) in tree.parents.iter().enumerate() {
            assert!(p.is_none_or(|p| p < c));
        }
    }

    #[test]
    fn symmetrise_pairs_and_centres() {
        let mut js = vec![
            Vec3::new(0.2, 0.0, 0.01),
            Vec3::new(-0.22, 0.0, 0.0),
            Vec3::new(0.004, 0.5, 0.0),
        ];
        symmetrise(&mut js, 0.05);
        assert!((js[0].x + js[1].x).abs() < 1e-6 && (js[0].z - js[1].z).abs() < 1e-6);
        assert_eq!(js[2].x, 0.0);
    }
}
