//! Fingers, only where the mesh has them: the hand (everything past the wrist) is voxelised on
//! its own at a finer resolution, and sections across the hand axis are searched for separate
//! finger branches. When four or five are found, each finger gets a three-joint chain from
//! where it leaves the palm to near its tip; otherwise the hand gets no fingers.

use glam::Vec3;
use rigml_geom::{Cell, VoxelGrid};
use std::collections::VecDeque;

/// Voxels along the longest side of the hand's bounds.
const RESOLUTION: usize = 64;

/// One finger: its chain of three joint heads, knuckle first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Finger {
    pub name: &'static str,
    pub joints: [Vec3; 3],
}

/// Finger names, from the forward-most finger back (T-pose, palm down: thumb in front).
const FIVE: [&str; 5] = ["Thumb", "Index", "Middle", "Ring", "Pinky"];
const FOUR: [&str; 4] = ["Index", "Middle", "Ring", "Pinky"];

/// The solid of the hand past the wrist, with its axis.
struct HandGrid {
    grid: VoxelGrid,
    solid: Vec<bool>,
    wrist: Vec3,
    axis: Vec3,
}

impl HandGrid {
    fn level(&self, v: usize) -> f32 {
        (self.grid.center(self.grid.coords(v)) - self.wrist).dot(self.axis)
    }

    fn neighbours(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
        let [x, y, z] = self.grid.coords(v);
        let dims = self.grid.dims;
        (0..27).filter_map(move |k| {
            let d = [k % 3, (k / 3) % 3, k / 9];
            let c = [x + d[0], y + d[1], z + d[2]];
            if k == 13 || c.iter().zip(dims).any(|(&c, n)| c == 0 || c > n) {
                return None;
            }
            Some(self.grid.index([c[0] - 1, c[1] - 1, c[2] - 1]))
        })
    }

    /// Connected groups of solid voxels whose level lies in `lo..hi`.
    fn groups(&self, lo: f32, hi: f32) -> Vec<Vec<usize>> {
        let inside = |v: usize| self.solid[v] && (lo..hi).contains(&self.level(v));
        let mut seen = vec![false; self.solid.len()];
        let mut out = Vec::new();
        for s in 0..self.solid.len() {
            if seen[s] || !inside(s) {
                continue;
            }
            seen[s] = true;
            let mut group = Vec::new();
            let mut queue = VecDeque::from([s]);
            while let Some(v) = queue.pop_front() {
                group.push(v);
                for u in self.neighbours(v) {
                    if !seen[u] && inside(u) {
                        seen[u] = true;
                        queue.push_back(u);
                    }
                }
            }
            out.push(group);
        }
        out
    }

    fn centroid(&self, group: &[usize]) -> Vec3 {
        let sum: Vec3 = group.iter().map(|&v| self.grid.center(self.grid.coords(v))).sum();
        sum / group.len().max(1) as f32
    }
}

/// Voxelise the part of the mesh past `wrist` towards `tip`.
fn hand_grid(positions: &[Vec3], triangles: &[[u32; 3]], wrist: Vec3, tip: Vec3) -> Option<HandGrid> {
    let axis = (tip - wrist).normalize_or_zero();
    let length = wrist.distance(tip);
    if axis == Vec3::ZERO {
        return None;
    }
    let in_hand = |p: Vec3| {
        let t = (p - wrist).dot(axis);
        t >= 0.0 && t <= 1.2 * length && (p - wrist - axis * t).length() <= 0.8 * length
    };
    let mut map = vec![u32::MAX; positions.len()];
    let mut local = Vec::new();
    let mut tris = Vec::new();
    for t in triangles {
        let corners = t.map(|i| positions.get(i as usize).copied());
        if corners.iter().all(|c| c.is_some_and(in_hand)) {
            let mut out = [0u32; 3];
            for (k, &i) in t.iter().enumerate() {
                let i = i as usize;
                if map[i] == u32::MAX {
                    map[i] = local.len() as u32;
                    local.push(positions[i]);
                }
                out[k] = map[i];
            }
            tris.push(out);
        }
    }
    let grid = VoxelGrid::new(&local, &tris, RESOLUTION)?;
    let solid = grid.cells.iter().map(|c| *c != Cell::Exterior).collect();
    Some(HandGrid {
        grid,
        solid,
        wrist,
        axis,
    })
}

/// Fingers of the hand from `wrist` to the hand tip `tip` (character frame), or none when the
/// hand does not split into four or five branches.
pub(crate) fn fingers(positions: &[Vec3], triangles: &[[u32; 3]], wrist: Vec3, tip: Vec3) -> Vec<Finger> {
    let Some(hand) = hand_grid(positions, triangles, wrist, tip) else {
        return Vec::new();
    };
    let length = wrist.distance(tip);
    let step = hand.grid.size;
    let min_voxels = 2;
    // Sections across the hand, from 30 % to 95 % of the way to the tip.
    let mut levels: Vec<(f32, Vec<Vec<usize>>)> = Vec::new();
    let mut s = 0.3 * length;
    while s < 0.95 * length {
        let groups = hand
            .groups(s - step, s + step)
            .into_iter()
            .filter(|g| g.len() >= min_voxels)
            .collect();
        levels.push((s, groups));
        s += step;
    }
    // The level where the hand splits into the most branches (four or five fingers).
    // Branches count only where the section before or after has as many (not noise).
    let steady = |k: usize| {
        let n = levels[k].1.len();
        (k > 0 && levels[k - 1].1.len() == n) || levels.get(k + 1).is_some_and(|l| l.1.len() == n)
    };
    let best = (0..levels.len())
        .filter(|&k| steady(k))
        .map(|k| &levels[k])
        .filter(|(s, g)| *s >= 0.4 * length && (4..=5).contains(&g.len()))
        .fold(None::<&(f32, Vec<Vec<usize>>)>, |b, l| match b {
            Some(b) if b.1.len() >= l.1.len() => Some(b),
            _ => Some(l),
        })
        .cloned();
    // Failing that, a thumb standing apart from the rest of the hand (a mitten): a run of at
    // least three sections with two branches, one branch before and after it (so the thumb
    // leaves the palm and ends), the thumb's section at most 0.6 of the rest's.
    let mut thumb: Option<(f32, Vec<Vec<usize>>)> = None;
    let sizes = |g: &[Vec<usize>]| {
        let mut n: Vec<usize> = g.iter().map(Vec::len).collect();
        n.sort_unstable();
        n
    };
    let mut k = 1;
    while k < levels.len() {
        if levels[k].1.len() != 2 || levels[k - 1].1.len() != 1 {
            k += 1;
            continue;
        }
        let end = (k..levels.len())
            .find(|&e| levels[e].1.len() != 2)
            .unwrap_or(levels.len());
        let closed = levels.get(end).is_some_and(|(_, g)| g.len() == 1);
        if closed && end - k >= 3 {
            for (level, groups) in &levels[k..end] {
                let n = sizes(groups);
                let fits = n[0] >= 4 && n[0] as f32 <= 0.6 * n[1] as f32;
                if fits && thumb.as_ref().is_none_or(|(_, t)| n[0] > sizes(t)[0]) {
                    thumb = Some((*level, groups.clone()));
                }
            }
        }
        k = end.max(k + 1);
    }
    let Some((level, mut groups)) = best else {
        return thumb.map_or_else(Vec::new, |(level, groups)| mitten(&hand, level, groups, length));
    };
    // Each branch: its tip is the far end of the solid beyond this level connected to it, its
    // base where it leaves the palm, found by following it back until the branches merge.
    let beyond = hand.groups(level - step, f32::MAX);
    groups.sort_by(|a, b| hand.centroid(b).z.total_cmp(&hand.centroid(a).z));
    let names: &[&str] = if groups.len() == 5 { &FIVE } else { &FOUR };
    let merge = merge_level(&hand, level, groups.len(), length);
    let ends: Vec<Vec3> = groups
        .iter()
        .map(|g| far_end(&hand, &beyond, g, hand.centroid(g), length))
        .collect();
    // Fingers run along the hand out to its tip; at least three branches must (a thumb may
    // not). Pieces of a hollow shell cut by the section do neither.
    let reaching = groups
        .iter()
        .zip(&ends)
        .filter(|(g, e)| {
            let along = (**e - hand.centroid(g)).normalize_or_zero().dot(hand.axis);
            (**e - hand.wrist).dot(hand.axis) >= 0.85 * length && along >= 0.6
        })
        .count();
    if reaching < 3 {
        return Vec::new();
    }
    groups
        .iter()
        .zip(names)
        .zip(ends)
        .map(|((g, name), far)| {
            let centre = hand.centroid(g);
            let dir = (far - centre).normalize_or(hand.axis);
            let base = centre - dir * (level - merge).max(0.0);
            let span = far - base;
            Finger {
                name,
                joints: [base, base + span * 0.35, base + span * 0.65],
            }
        })
        .collect()
}

/// The far end (largest level) of the part of `beyond` that holds the branch `g`, within
/// reach of the branch's centre.
fn far_end(hand: &HandGrid, beyond: &[Vec<usize>], g: &[usize], centre: Vec3, length: f32) -> Vec3 {
    let at = |v: usize| hand.grid.center(hand.grid.coords(v));
    g.first()
        .and_then(|first| beyond.iter().find(|b| b.contains(first)))
        .and_then(|b| {
            b.iter()
                .copied()
                .filter(|&v| at(v).distance(centre) < 0.6 * length)
                .max_by(|&a, &b| hand.level(a).total_cmp(&hand.level(b)))
        })
        .map_or(centre, at)
}

/// A thumb and a mitten (the other fingers fused): a thumb chain from where it leaves the palm,
/// and one `Middle` chain for the fused fingers from the knuckle line (half-way along the hand)
/// to the tip.
fn mitten(hand: &HandGrid, level: f32, mut groups: Vec<Vec<usize>>, length: f32) -> Vec<Finger> {
    let step = hand.grid.size;
    groups.sort_by_key(Vec::len);
    let beyond = hand.groups(level - step, f32::MAX);
    let merge = merge_level(hand, level, 2, length);
    let chain = |base: Vec3, far: Vec3| {
        let span = far - base;
        [base, base + span * 0.35, base + span * 0.65]
    };
    let mut out = Vec::new();
    if let [thumb, rest] = groups.as_slice() {
        let centre = hand.centroid(thumb);
        let far = far_end(hand, &beyond, thumb, centre, length);
        let base = centre - (far - centre).normalize_or(hand.axis) * (level - merge).max(0.0);
        out.push(Finger {
            name: "Thumb",
            joints: chain(base, far),
        });
        let knuckles = hand
            .groups(0.5 * length - step, 0.5 * length + step)
            .into_iter()
            .max_by_key(Vec::len)
            .map_or(hand.wrist + hand.axis * 0.5 * length, |g| hand.centroid(&g));
        let far = far_end(hand, &beyond, rest, hand.centroid(rest), length);
        out.push(Finger {
            name: "Middle",
            joints: chain(knuckles, far),
        });
    }
    out
}

/// Going back from `level` towards the wrist, the first level where fewer than `count`
/// branches remain (the palm).
fn merge_level(hand: &HandGrid, level: f32, count: usize, length: f32) -> f32 {
    let step = hand.grid.size;
    let mut s = level;
    while s > 0.2 * length {
        let n = hand.groups(s - step, s + step).iter().filter(|g| g.len() >= 2).count();
        if n < count.min(4) {
            return s;
        }
        s -= step;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Closed boxes as one triangle soup.
    fn boxes(list: &[(Vec3, Vec3)]) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let (mut p, mut t) = (Vec::new(), Vec::new());
        for &(lo, hi) in list {
            rigml_geom::procedural::append_cuboid(&mut p, &mut t, lo, hi);
        }
        (p, t)
    }

    /// A left hand pointing +x, palm down: a palm and `fingers` parallel fingers along x, spread
    /// along z (front first).
    fn hand(fingers: usize) -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let mut list = vec![(Vec3::new(0.0, -0.01, -0.04), Vec3::new(0.05, 0.01, 0.04))];
        for k in 0..fingers {
            let z = 0.03 - 0.06 * k as f32 / (fingers.max(2) - 1) as f32;
            list.push((Vec3::new(0.05, -0.004, z - 0.004), Vec3::new(0.1, 0.004, z + 0.004)));
        }
        boxes(&list)
    }

    #[test]
    fn separate_fingers_get_chains_and_a_mitten_gets_none() {
        let (p, t) = hand(5);
        let found = fingers(&p, &t, Vec3::ZERO, Vec3::new(0.1, 0.0, 0.0));
        let names: Vec<&str> = found.iter().map(|f| f.name).collect();
        assert_eq!(names, FIVE, "front-most finger is the thumb");
        for f in &found {
            // Knuckle near the palm's edge, then along the finger.
            assert!((f.joints[0].x - 0.05).abs() < 0.015, "{f:?}");
            assert!(f.joints[0].x < f.joints[1].x && f.joints[1].x < f.joints[2].x, "{f:?}");
        }
        assert!(found[0].joints[0].z > found[4].joints[0].z);
        let (p, t) = hand(0);
        let mitten: Vec<(Vec3, Vec3)> = vec![(Vec3::new(0.0, -0.01, -0.04), Vec3::new(0.1, 0.01, 0.04))];
        let (mp, mt) = boxes(&mitten);
        assert!(fingers(&mp, &mt, Vec3::ZERO, Vec3::new(0.1, 0.0, 0.0)).is_empty());
        assert!(fingers(&p, &t, Vec3::ZERO, Vec3::ZERO).is_empty(), "no hand axis");
    }
}
