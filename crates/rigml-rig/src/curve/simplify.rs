//! From the dense Reeb tree to joints: prune short side branches (bumps, eyes, fingers of
//! noise), cut the tree into chains between branch points, keep the bends of each chain
//! (Douglas–Peucker) and space joints evenly between them, then drop bones too short to matter.

use super::reeb::Node;
use glam::Vec3;

/// Lengths of the simplification, in model units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lengths {
    /// Side branches (junction to tip) shorter than this plus `thickness` times the
    /// junction's distance to the surface are removed.
    pub min_branch: f32,
    /// See `min_branch`: how many local radii a branch must stick out of a thick part.
    pub thickness: f32,
    /// Target spacing of joints along a chain.
    pub spacing: f32,
    /// Douglas–Peucker tolerance: a chain point farther than this from the simplified
    /// polyline becomes a joint.
    pub bend: f32,
    /// Bones shorter than this are merged away.
    pub min_bone: f32,
    /// Leaf chains end this far (along the chain) before the tip of the part, where rigs put
    /// their last joint (the wrist, the ankle, the end of the tail), when the chain is more
    /// than twice as long.
    pub tip_trim: f32,
}

impl Lengths {
    /// These lengths times `size` (for lengths given as fractions of a model's size);
    /// `thickness`, a ratio, stays as it is.
    pub fn scaled(&self, size: f32) -> Lengths {
        Lengths {
            min_branch: self.min_branch * size,
            thickness: self.thickness,
            spacing: self.spacing * size,
            bend: self.bend * size,
            min_bone: self.min_bone * size,
            tip_trim: self.tip_trim * size,
        }
    }
}

/// A joint tree: positions and parents (`parent < child`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Joints {
    pub positions: Vec<Vec3>,
    pub parents: Vec<Option<usize>>,
}

/// Children lists of a parent array over the nodes still `alive`.
fn children_of(parents: &[Option<usize>], alive: &[bool]) -> Vec<Vec<usize>> {
    let mut children = vec![Vec::new(); parents.len()];
    for (j, p) in parents.iter().enumerate() {
        if let (true, Some(p)) = (alive[j], *p) {
            children[p].push(j);
        }
    }
    children
}

/// Short branches reaching at least this share of the farthest one's reach tie with it; a tie
/// among short branches keeps none of them (on val the stag's antlers: one was kept, making its
/// head chain lopsided).
pub const TIE: f32 = 0.97;

/// Remove side subtrees that do not reach far enough out of the part they leave. Going down
/// from the root, at every node with several children, a child's subtree whose farthest node
/// is closer to the junction than `min_branch + thickness · radius(junction)` is removed (the
/// farthest-reaching child always stays, unless others reach as far: see [`TIE`]). The radius
/// term removes the branches a level set makes at the rim of a thick part; `min_branch`
/// removes bumps.
pub fn prune(nodes: &[Node], min_branch: f32, thickness: f32) -> Vec<bool> {
    let n = nodes.len();
    let parents = parents_of(nodes);
    let mut alive = vec![true; n];
    let children = children_of(&parents, &alive);
    let mut stack = Vec::new();
    for p in 0..n {
        if !alive[p] || children[p].len() < 2 {
            continue;
        }
        let origin = nodes[p].position;
        let reach: Vec<(usize, f32)> = children[p]
            .iter()
            .map(|&c| {
                let mut far = 0.0f32;
                stack.push(c);
                while let Some(d) = stack.pop() {
                    far = far.max(nodes[d].position.distance(origin));
                    stack.extend(children[d].iter().copied());
                }
                (c, far)
            })
            .collect();
        let keep = reach.iter().map(|r| r.1).fold(0.0f32, f32::max);
        let limit = min_branch + thickness * nodes[p].radius;
        // One farthest-reaching child stays, unless every branch is short and two or more tie
        // for the farthest (a mirrored fork: a stag's antlers), where keeping one would make
        // the skeleton lopsided.
        let tied = reach.iter().filter(|r| r.1 >= TIE * keep).count() > 1;
        let mut keep_farthest = !(keep < limit && tied);
        for &(c, far) in &reach {
            if far >= limit || (far == keep && keep_farthest) {
                keep_farthest &= far != keep;
                continue;
            }
            stack.push(c);
            while let Some(d) = stack.pop() {
                alive[d] = false;
                stack.extend(children[d].iter().copied());
            }
        }
    }
    alive
}

/// Parent of each node, every node but the first hanging somewhere (a parent listed after its
/// child or missing falls back to node 0).
fn parents_of(nodes: &[Node]) -> Vec<Option<usize>> {
    nodes
        .iter()
        .enumerate()
        .map(|(j, node)| node.parent.filter(|&p| p < j).or((j > 0).then_some(0)))
        .collect()
}

/// Points of `polyline` kept by Douglas–Peucker with `tolerance` (indices, ends included).
pub fn douglas_peucker(polyline: &[Vec3], tolerance: f32) -> Vec<usize> {
    if polyline.len() <= 2 {
        return (0..polyline.len()).collect();
    }
    let mut keep = vec![false; polyline.len()];
    keep[0] = true;
    keep[polyline.len() - 1] = true;
    let mut stack = vec![(0, polyline.len() - 1)];
    while let Some((a, b)) = stack.pop() {
        let (pa, pb) = (polyline[a], polyline[b]);
        let far = (a + 1..b)
            .map(|i| (i, rigml_geom::segment_distance(polyline[i], pa, pb)))
            .max_by(|x, y| x.1.total_cmp(&y.1));
        if let Some((i, d)) = far {
            if d > tolerance {
                keep[i] = true;
                stack.push((a, i));
                stack.push((i, b));
            }
        }
    }
    (0..polyline.len()).filter(|&i| keep[i]).collect()
}

/// Arc length of a polyline.
fn arc_length(polyline: &[Vec3]) -> f32 {
    polyline.windows(2).map(|w| w[0].distance(w[1])).sum()
}

/// The point at arc length `s` along `polyline`.
fn point_at(polyline: &[Vec3], s: f32) -> Vec3 {
    let mut left = s;
    for w in polyline.windows(2) {
        let d = w[0].distance(w[1]);
        if left <= d && d > 0.0 {
            return w[0].lerp(w[1], left / d);
        }
        left -= d;
    }
    polyline.last().copied().unwrap_or(Vec3::ZERO)
}

/// Joint positions along a chain polyline (its first point is the parent joint, excluded; its
/// last point, the next key node, included): the Douglas–Peucker bends, and between them points
/// spaced about `spacing` along the curve.
pub fn chain_points(polyline: &[Vec3], lengths: &Lengths) -> Vec<Vec3> {
    let bends = douglas_peucker(polyline, lengths.bend);
    let mut out = Vec::new();
    for w in bends.windows(2) {
        let piece = &polyline[w[0]..=w[1]];
        let length = arc_length(piece);
        let k = ((length / lengths.spacing.max(f32::EPSILON)).round() as usize).max(1);
        out.extend((1..=k).map(|i| point_at(piece, length * i as f32 / k as f32)));
    }
    out
}

/// Shorten a polyline by `trim` arc length at its end, if it is longer than twice that.
fn trim_end(polyline: &mut Vec<Vec3>, trim: f32) {
    let length = arc_length(polyline);
    if trim <= 0.0 || length <= 2.0 * trim {
        return;
    }
    let end = point_at(polyline, length - trim);
    let mut s = 0.0;
    let mut keep = 1;
    for (i, w) in polyline.windows(2).enumerate() {
        s += w[0].distance(w[1]);
        if s >= length - trim {
            break;
        }
        keep = i + 2;
    }
    polyline.truncate(keep);
    polyline.push(end);
}

/// Smooth the inner points of a polyline (ends fixed): `iterations` of moving each point
/// halfway to the mean of its neighbours. Removes the voxel staircase from centroid paths.
fn smooth(polyline: &mut [Vec3], iterations: usize) {
    for _ in 0..iterations {
        let copy = polyline.to_vec();
        for i in 1..polyline.len().saturating_sub(1) {
            polyline[i] = copy[i].lerp((copy[i - 1] + copy[i + 1]) * 0.5, 0.5);
        }
    }
}

/// Turn the Reeb tree into joints: prune, follow chains from the root, place joints along each
/// chain, merge bones shorter than `min_bone` into their parent joint.
pub fn joints(nodes: &[Node], lengths: &Lengths) -> Joints {
    if nodes.is_empty() {
        return Joints::default();
    }
    let alive = prune(nodes, lengths.min_branch, lengths.thickness);
    let parents = parents_of(nodes);
    let children = children_of(&parents, &alive);
    let mut out = Joints {
        positions: vec![nodes[0].position],
        parents: vec![None],
    };
    // (key node, joint it became)
    let mut stack = vec![(0usize, 0usize)];
    while let Some((key, joint)) = stack.pop() {
        for &first in children[key].iter().rev() {
            let mut polyline = vec![out.positions[joint], nodes[first].position];
            let mut interior = vec![true, nodes[first].interior];
            let mut at = first;
            while children[at].len() == 1 {
                at = children[at][0];
                polyline.push(nodes[at].position);
                interior.push(nodes[at].interior);
            }
            let is_leaf = children[at].is_empty();
            if is_leaf {
                // The last pieces of a tip can be surface voxels only, whose centres may lie
                // just outside: end the chain at the last surely-inside node.
                if let Some(k) = (1..interior.len()).rev().find(|&k| interior[k]) {
                    polyline.truncate(k + 1);
                }
            }
            if is_leaf {
                trim_end(&mut polyline, lengths.tip_trim);
            }
            smooth(&mut polyline, 3);
            let mut parent = joint;
            let points = chain_points(&polyline, lengths);
            let last = points.len().saturating_sub(1);
            for (i, p) in points.into_iter().enumerate() {
                let bone = p.distance(out.positions[parent]);
                if bone < lengths.min_bone && (i < last || !is_leaf) {
                    continue;
                }
                if i == last && is_leaf && bone < lengths.min_bone && parent != joint {
                    // A stub at the tip: move the previous joint there instead.
                    out.positions[parent] = p;
                    continue;
                }
                out.positions.push(p);
                out.parents.push(Some(parent));
                parent = out.positions.len() - 1;
            }
            if !is_leaf {
                stack.push((at, parent));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(p: Vec3, parent: Option<usize>) -> Node {
        Node {
            position: p,
            parent,
            voxels: 1,
            interior: true,
            radius: 0.0,
        }
    }

    #[test]
    fn douglas_peucker_keeps_the_corner() {
        let l = [
            Vec3::ZERO,
            Vec3::X,
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(2.0, 1.0, 0.0),
            Vec3::new(2.0, 2.0, 0.0),
        ];
        assert_eq!(douglas_peucker(&l, 0.1), vec![0, 2, 4]);
        assert_eq!(douglas_peucker(&l, 5.0), vec![0, 4]);
    }

    #[test]
    fn chain_points_are_evenly_spaced_and_end_at_the_tip() {
        let l: Vec<Vec3> = (0..=10).map(|i| Vec3::new(i as f32 * 0.1, 0.0, 0.0)).collect();
        let lengths = Lengths {
            min_branch: 0.0,
            thickness: 1.0,
            spacing: 0.25,
            bend: 0.01,
            min_bone: 0.01,
            tip_trim: 0.0,
        };
        let pts = chain_points(&l, &lengths);
        assert_eq!(pts.len(), 4);
        assert!(
            (pts[0].x - 0.25).abs() < 1e-5 && (pts[3].x - 1.0).abs() < 1e-5,
            "{pts:?}"
        );
    }

    #[test]
    fn a_short_mirrored_fork_keeps_neither_branch_a_lone_short_tip_stays() {
        // Trunk 0-1 along y ending in two short mirrored branches (2, 3): neither stays.
        let fork = vec![
            node(Vec3::ZERO, None),
            node(Vec3::Y, Some(0)),
            node(Vec3::new(0.2, 1.2, 0.0), Some(1)),
            node(Vec3::new(-0.2, 1.2, 0.0), Some(1)),
        ];
        assert_eq!(prune(&fork, 0.5, 1.0), vec![true, true, false, false]);
        // One of them clearly longer: it stays as the trunk's tip.
        let mut uneven = fork.clone();
        uneven[3].position = Vec3::new(-0.1, 1.1, 0.0);
        assert_eq!(prune(&uneven, 0.5, 1.0), vec![true, true, true, false]);
    }

    #[test]
    fn short_side_branches_are_pruned_long_ones_kept() {
        // Trunk 0-1-2-3 along y; a long branch 4-5 off node 1, a stub 6 off node 2.
        let nodes = vec![
            node(Vec3::ZERO, None),
            node(Vec3::Y, Some(0)),
            node(Vec3::Y * 2.0, Some(1)),
            node(Vec3::Y * 3.0, Some(2)),
            node(Vec3::new(1.0, 1.0, 0.0), Some(1)),
            node(Vec3::new(2.0, 1.0, 0.0), Some(4)),
            node(Vec3::new(0.1, 2.0, 0.0), Some(2)),
        ];
        let alive = prune(&nodes, 0.5, 1.0);
        assert_eq!(alive, vec![true, true, true, true, true, true, false]);
        let lengths = Lengths {
            min_branch: 0.5,
            thickness: 1.0,
            spacing: 1.0,
            bend: 0.1,
            min_bone: 0.05,
            tip_trim: 0.0,
        };
        let j = joints(&nodes, &lengths);
        // root, 1 (junction), 2, 3 on the trunk; 4, 5 on the branch.
        assert_eq!(j.positions.len(), 6, "{j:?}");
        let leaves = (0..6).filter(|&a| !j.parents.contains(&Some(a))).count();
        assert_eq!(leaves, 2);
        assert!(j.parents.iter().enumerate().all(|(c, p)| p.is_none_or(|p| p < c)));
    }
}
