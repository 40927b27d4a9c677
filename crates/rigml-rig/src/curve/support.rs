//! Keep only the end chains another placer agrees with. A curve skeleton follows every part of
//! the shape, but artists leave many parts unrigged: a fish's fins, an angler's lantern, spikes
//! and plates. The learned placer, trained on artists' rigs, puts no joints there. An end chain
//! (from a leaf up to the joint where it branches off) whose joints lie far from every bone of
//! that placer's skeleton is removed; mirrored chains are judged together, so the result stays
//! symmetric. Where a removed chain passed through a part the learned skeleton does rig (the
//! lantern chain runs through the angler's head), that skeleton's joints there fill the gap.
//! The learned placer misses thin parts artists do rig (quadrupeds' tails and ears), so a
//! pruning that would remove only a few chains is not applied at all.
//!
//! The other way round, [`graft_supported`] adds end chains of a less pruned curve skeleton
//! that the learned placer backs and the curve skeleton lacks: short limbs its pruning took for
//! the rim of a thick body.

use super::simplify::Joints;
use glam::Vec3;

/// The supporting skeleton: its joints and its bones as segments (a lone root is a point: both
/// ends equal).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Support {
    joints: Vec<Vec3>,
    segments: Vec<(Vec3, Vec3)>,
}

impl Support {
    /// The skeleton given by joint positions and parents.
    pub fn new(positions: &[Vec3], parents: &[Option<usize>]) -> Support {
        let segments = positions
            .iter()
            .zip(parents)
            .filter_map(|(&p, parent)| match parent {
                Some(q) => positions.get(*q).map(|&q| (q, p)),
                None => Some((p, p)),
            })
            .collect();
        Support {
            joints: positions.to_vec(),
            segments,
        }
    }

    /// True when there are no bones to judge by.
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// Distance from `p` to the nearest bone.
    pub fn distance(&self, p: Vec3) -> f32 {
        self.segments
            .iter()
            .map(|&(a, b)| rigml_geom::segment_distance(p, a, b))
            .fold(f32::INFINITY, f32::min)
    }
}

/// Remove the end chains whose joints are on average farther than `reach` from `support`'s
/// bones, again and again until every end chain is supported (a removed chain can leave its
/// branch joint as a new tip). A joint's distance is averaged with its mirror partner's
/// (`partners`), so mirrored chains go together. At least three joints (the root and a chain
/// from it) always stay. When that removes less than `least_share` of the joints, nothing is
/// removed (the support likely misses a thin part the shape really has: a cow's tail, a husky's
/// ears). Otherwise each supporting joint within `reach` of a removed joint and
/// farther than `fill` from every remaining bone is added as a child of the nearest joint
/// (unpaired): the part a removed chain ran through keeps a joint where the support has one.
/// Returns how many joints were removed and how many added; `partners` follows the joints.
pub fn prune_unsupported(
    joints: &mut Joints,
    partners: &mut Vec<Option<usize>>,
    support: &Support,
    reach: f32,
    fill: f32,
    least_share: f32,
) -> (usize, usize) {
    if support.is_empty() {
        return (0, 0);
    }
    let (before, before_partners) = (joints.clone(), partners.clone());
    let mut gone = Vec::new();
    while let Some(removed) = unsupported_chains(joints, partners, support, reach) {
        let mut alive = vec![true; joints.positions.len()];
        for j in removed {
            alive[j] = false;
            gone.push(joints.positions[j]);
        }
        keep(joints, partners, &alive);
    }
    if gone.is_empty() || (gone.len() as f32) < least_share * before.positions.len() as f32 {
        *joints = before;
        *partners = before_partners;
        return (0, 0);
    }
    let kept = Support::new(&joints.positions, &joints.parents);
    let mut added = 0;
    for &p in &support.joints {
        let near_gone = gone.iter().any(|g| g.distance(p) <= reach);
        if !near_gone || kept.distance(p) <= fill {
            continue;
        }
        let nearest = (0..joints.positions.len())
            .min_by(|&a, &b| {
                joints.positions[a]
                    .distance_squared(p)
                    .total_cmp(&joints.positions[b].distance_squared(p))
            })
            .unwrap_or(0);
        joints.positions.push(p);
        joints.parents.push(Some(nearest));
        partners.push(None);
        added += 1;
    }
    (gone.len(), added)
}

/// The end chains of a joint tree: each leaf and its ancestors up to (not including) the first
/// joint with other children or the root, leaf first.
fn end_chains(joints: &Joints) -> Vec<Vec<usize>> {
    let n = joints.positions.len();
    let mut children = vec![0usize; n];
    for p in joints.parents.iter().flatten() {
        children[*p] += 1;
    }
    let mut chains = Vec::new();
    for leaf in (0..n).filter(|&j| children[j] == 0) {
        let mut chain = Vec::new();
        let mut j = leaf;
        while let Some(p) = joints.parents[j] {
            chain.push(j);
            if children[p] > 1 || joints.parents[p].is_none() {
                break;
            }
            j = p;
        }
        if !chain.is_empty() {
            chains.push(chain);
        }
    }
    chains
}

/// Graft onto `joints` the end chains of `loose` (a curve skeleton of the same shape pruned less
/// eagerly, with its mirror `loose_partners`) that `joints` lacks (their joints on average
/// farther than `apart` from its bones) and `support` agrees with (on average within `reach` of
/// its bones): limbs the pruning took for the rim of a thick part (a T-rex's short arms). Each
/// chain hangs from the joint nearest the joint it branched from; mirrored chains are taken
/// together, so the result stays symmetric. Returns how many joints were added.
pub fn graft_supported(
    joints: &mut Joints,
    partners: &mut Vec<Option<usize>>,
    loose: &Joints,
    loose_partners: &[Option<usize>],
    support: &Support,
    reach: f32,
    apart: f32,
) -> usize {
    if support.is_empty() || joints.positions.is_empty() {
        return 0;
    }
    let base = Support::new(&joints.positions, &joints.parents);
    let mean = |chain: &[usize], s: &Support| {
        chain.iter().map(|&j| s.distance(loose.positions[j])).sum::<f32>() / chain.len().max(1) as f32
    };
    let partner = |j: usize| loose_partners.get(j).copied().flatten();
    let paired = |j: usize| partner(j).is_some();
    // A chain of mirrored joints sheds the unpaired joints at its tip (one side's chain can be a
    // joint longer); one that still mixes paired and unpaired joints is not taken.
    let chosen: Vec<Vec<usize>> = end_chains(loose)
        .into_iter()
        .filter_map(|mut c| {
            if c.iter().any(|&j| paired(j)) {
                let tip = c.iter().take_while(|&&j| !paired(j)).count();
                c.drain(..tip);
                if !c.iter().all(|&j| paired(j)) {
                    return None;
                }
            }
            (mean(&c, &base) > apart && mean(&c, support) <= reach).then_some(c)
        })
        .collect();
    // Mirrored chains are grafted together or not at all.
    let taken: std::collections::HashSet<usize> = chosen.iter().flatten().copied().collect();
    let chains: Vec<&Vec<usize>> = chosen
        .iter()
        .filter(|c| c.iter().all(|&j| partner(j).is_none_or(|k| taken.contains(&k))))
        .collect();
    let mut index = vec![None; loose.positions.len()];
    let mut added = Vec::new();
    let before = joints.positions.len();
    for chain in chains {
        let top = *chain.last().unwrap_or(&0);
        let Some(from) = loose.parents[top].map(|p| loose.positions[p]) else {
            continue;
        };
        let mut parent = (0..before)
            .min_by(|&a, &b| {
                joints.positions[a]
                    .distance_squared(from)
                    .total_cmp(&joints.positions[b].distance_squared(from))
            })
            .unwrap_or(0);
        for &j in chain.iter().rev() {
            index[j] = Some(joints.positions.len());
            added.push(j);
            joints.positions.push(loose.positions[j]);
            joints.parents.push(Some(parent));
            parent = joints.positions.len() - 1;
        }
    }
    partners.extend(added.iter().map(|&j| partner(j).and_then(|k| index[k])));
    added.len()
}

/// The joints of the end chains to remove now, or `None` when every end chain is supported.
fn unsupported_chains(
    joints: &Joints,
    partners: &[Option<usize>],
    support: &Support,
    reach: f32,
) -> Option<Vec<usize>> {
    let n = joints.positions.len();
    let chains = end_chains(joints);
    // A joint's distance to the support, averaged with its mirror partner's.
    let own: Vec<f32> = joints.positions.iter().map(|&p| support.distance(p)).collect();
    let distance: Vec<f32> = (0..n)
        .map(|j| {
            partners[j]
                .filter(|&k| k < n)
                .map_or(own[j], |k| 0.5 * (own[j] + own[k]))
        })
        .collect();
    let mut removed = Vec::new();
    let mut left = n;
    for chain in &chains {
        let mean = chain.iter().map(|&j| distance[j]).sum::<f32>() / chain.len() as f32;
        // Keep at least the root and two joints (a bone to skin to).
        if mean > reach && left > chain.len() + 2 {
            left -= chain.len();
            removed.extend_from_slice(chain);
        }
    }
    (!removed.is_empty()).then_some(removed)
}

/// Keep the joints marked `alive` (a removed joint's children must be removed too), re-indexing
/// parents and partners; a partner that was removed leaves its joint unpaired. Returns each old
/// joint's new index (`None` for a removed one).
pub(super) fn keep(joints: &mut Joints, partners: &mut Vec<Option<usize>>, alive: &[bool]) -> Vec<Option<usize>> {
    let mut index = vec![None; alive.len()];
    let mut next = 0;
    for (j, &a) in alive.iter().enumerate() {
        if a {
            index[j] = Some(next);
            next += 1;
        }
    }
    let old = std::mem::take(joints);
    let old_partners = std::mem::take(partners);
    for j in (0..alive.len()).filter(|&j| alive[j]) {
        joints.positions.push(old.positions[j]);
        joints.parents.push(old.parents[j].and_then(|p| index[p]));
        partners.push(old_partners.get(j).copied().flatten().and_then(|k| index[k]));
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trunk along +y from the origin with a side chain off joint 2 going along +x, and its
    /// mirror along -x.
    fn trunk_with_arms() -> (Joints, Vec<Option<usize>>) {
        let positions = vec![
            Vec3::ZERO,
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(0.0, 2.0, 0.0),
            Vec3::new(0.0, 3.0, 0.0),
            Vec3::new(1.0, 2.0, 0.0),
            Vec3::new(2.0, 2.0, 0.0),
            Vec3::new(-1.0, 2.0, 0.0),
            Vec3::new(-2.0, 2.0, 0.0),
        ];
        let parents = vec![None, Some(0), Some(1), Some(2), Some(2), Some(4), Some(2), Some(6)];
        let partners = vec![None, None, None, None, Some(6), Some(7), Some(4), Some(5)];
        (Joints { positions, parents }, partners)
    }

    #[test]
    fn chains_far_from_the_support_go_and_supported_ones_stay() {
        let (mut joints, mut partners) = trunk_with_arms();
        // The support is the trunk only: both arms go, the trunk stays.
        let support = Support::new(&[Vec3::ZERO, Vec3::new(0.0, 3.0, 0.0)], &[None, Some(0)]);
        assert_eq!(
            prune_unsupported(&mut joints, &mut partners, &support, 0.5, 0.5, 0.0),
            (4, 0)
        );
        assert_eq!(joints.positions.len(), 4);
        assert_eq!(joints.parents, vec![None, Some(0), Some(1), Some(2)]);
        assert_eq!(partners, vec![None; 4]);
        // A support along both arms keeps everything.
        let (mut joints, mut partners) = trunk_with_arms();
        let support = Support::new(
            &[
                Vec3::ZERO,
                Vec3::new(0.0, 3.0, 0.0),
                Vec3::new(2.0, 2.0, 0.0),
                Vec3::new(-2.0, 2.0, 0.0),
            ],
            &[None, Some(0), Some(1), Some(1)],
        );
        assert_eq!(
            prune_unsupported(&mut joints, &mut partners, &support, 0.5, 0.5, 0.0),
            (0, 0)
        );
        assert_eq!(joints.positions.len(), 8);
    }

    #[test]
    fn mirrored_chains_are_judged_together() {
        // A support bone reaching the +x arm's tip: that arm's mean distance is 0.22, the -x
        // arm's 1.5; judged together (0.86) both stay with reach 1 and both go with 0.5 (no
        // filling here).
        let support = Support::new(
            &[Vec3::ZERO, Vec3::new(0.0, 3.0, 0.0), Vec3::new(2.0, 2.0, 0.0)],
            &[None, Some(0), Some(1)],
        );
        for (reach, left) in [(1.0, 8), (0.5, 4)] {
            let (mut joints, mut partners) = trunk_with_arms();
            prune_unsupported(&mut joints, &mut partners, &support, reach, 1000.0, 0.0);
            assert_eq!(joints.positions.len(), left, "reach {reach}");
        }
    }

    #[test]
    fn no_support_prunes_nothing_and_the_root_always_stays() {
        let (mut joints, mut partners) = trunk_with_arms();
        assert_eq!(
            prune_unsupported(&mut joints, &mut partners, &Support::default(), 0.1, 0.1, 0.0),
            (0, 0)
        );
        let far = Support::new(&[Vec3::splat(100.0)], &[None]);
        let (removed, _) = prune_unsupported(&mut joints, &mut partners, &far, 0.1, 1000.0, 0.0);
        assert_eq!(joints.positions.len(), 8 - removed);
        assert!(joints.positions.len() >= 3, "root and a bone stay");
        assert_eq!(joints.parents[0], None);
    }

    #[test]
    fn a_pruning_of_too_small_a_share_is_not_applied() {
        // The trunk-only support would remove both arms: 4 of 8 joints, half.
        let support = Support::new(&[Vec3::ZERO, Vec3::new(0.0, 3.0, 0.0)], &[None, Some(0)]);
        let (mut joints, mut partners) = trunk_with_arms();
        let (original, original_partners) = (joints.clone(), partners.clone());
        assert_eq!(
            prune_unsupported(&mut joints, &mut partners, &support, 0.5, 0.5, 0.6),
            (0, 0)
        );
        assert_eq!((joints, partners), (original, original_partners));
        let (mut joints, mut partners) = trunk_with_arms();
        assert_eq!(
            prune_unsupported(&mut joints, &mut partners, &support, 0.5, 0.5, 0.5),
            (4, 0)
        );
    }

    #[test]
    fn supporting_joints_fill_the_gap_a_removed_chain_leaves() {
        // The support rigs the trunk and one joint beside it, where the +x arm starts: both arms
        // go (judged together, far on average), and that joint, near a removed one and 1.2 from
        // the trunk, hangs from the nearest trunk joint. The top of the trunk is near no removed
        // joint and adds nothing.
        let support = Support::new(
            &[Vec3::ZERO, Vec3::new(0.0, 3.0, 0.0), Vec3::new(1.2, 2.3, 0.0)],
            &[None, Some(0), Some(1)],
        );
        let (mut joints, mut partners) = trunk_with_arms();
        assert_eq!(
            prune_unsupported(&mut joints, &mut partners, &support, 0.5, 0.5, 0.0),
            (4, 1)
        );
        assert_eq!(joints.positions[4], Vec3::new(1.2, 2.3, 0.0));
        assert_eq!(joints.parents[4], Some(2));
        assert_eq!(partners.len(), 5);
        // Nothing removed, nothing added: the support's head alone does not change a supported
        // skeleton.
        let support = Support::new(
            &[
                Vec3::ZERO,
                Vec3::new(0.0, 3.0, 0.0),
                Vec3::new(0.0, 4.5, 0.0),
                Vec3::new(2.0, 2.0, 0.0),
                Vec3::new(-2.0, 2.0, 0.0),
            ],
            &[None, Some(0), Some(1), Some(1), Some(1)],
        );
        let (mut joints, mut partners) = trunk_with_arms();
        assert_eq!(
            prune_unsupported(&mut joints, &mut partners, &support, 0.5, 0.5, 0.0),
            (0, 0)
        );
    }

    #[test]
    fn supported_chains_the_skeleton_lacks_are_grafted_in_mirrored_pairs() {
        // The skeleton is the trunk; the loose one also has the arms.
        let (loose, loose_partners) = trunk_with_arms();
        let trunk = |n: usize| Joints {
            positions: loose.positions[..n].to_vec(),
            parents: loose.parents[..n].to_vec(),
        };
        let arms = Support::new(
            &[
                Vec3::new(0.0, 2.0, 0.0),
                Vec3::new(2.0, 2.0, 0.0),
                Vec3::new(-2.0, 2.0, 0.0),
            ],
            &[None, Some(0), Some(0)],
        );
        let (mut joints, mut partners) = (trunk(4), vec![None; 4]);
        assert_eq!(
            graft_supported(&mut joints, &mut partners, &loose, &loose_partners, &arms, 0.5, 0.5),
            4
        );
        // Each arm hangs from the trunk joint it branched from, its partner the other arm's.
        assert_eq!(joints.parents[4..], [Some(2), Some(4), Some(2), Some(6)]);
        assert_eq!(partners[4..], [Some(6), Some(7), Some(4), Some(5)]);
        assert_eq!(joints.positions, loose.positions);
        // Chains the skeleton has, or the support does not back, are not grafted.
        let (mut same, mut same_partners) = (loose.clone(), loose_partners.clone());
        assert_eq!(
            graft_supported(&mut same, &mut same_partners, &loose, &loose_partners, &arms, 0.5, 0.5),
            0
        );
        let trunk_only = Support::new(&[Vec3::ZERO, Vec3::new(0.0, 3.0, 0.0)], &[None, Some(0)]);
        let (mut joints, mut partners) = (trunk(4), vec![None; 4]);
        assert_eq!(
            graft_supported(
                &mut joints,
                &mut partners,
                &loose,
                &loose_partners,
                &trunk_only,
                0.5,
                0.5
            ),
            0
        );
        // One arm backed alone: its mirror is not, so neither is taken.
        let one = Support::new(&[Vec3::new(0.0, 2.0, 0.0), Vec3::new(2.0, 2.0, 0.0)], &[None, Some(0)]);
        let (mut joints, mut partners) = (trunk(4), vec![None; 4]);
        assert_eq!(
            graft_supported(&mut joints, &mut partners, &loose, &loose_partners, &one, 0.5, 0.5),
            0
        );
        assert_eq!((joints.positions.len(), partners.len()), (4, 4));
    }
}
