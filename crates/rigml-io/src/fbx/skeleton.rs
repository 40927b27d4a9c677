//! Which FBX nodes become joints, and their rest and bind transforms.
//!
//! Joints are the given bone nodes (the skin clusters' bones) plus every node on the way from
//! each of them up to their lowest common ancestor; that ancestor is a joint too, unless it is
//! the scene root (then the skeleton has several roots). Nodes above the joints are not joints:
//! their transforms are folded into the root joints, whose rest transform is their model-space
//! transform. Joints are listed in scene node order, then sorted parents first.
//!
//! Bind matrices come from the clusters' `bind_to_world` (the FBX `TransformLink`); a connecting
//! node without a cluster uses its matrix in a bind pose of the file, or its world matrix in the
//! scene when no bind pose lists it. The rest pose is the bind pose (`local = parent_bind⁻¹ ·
//! bind`, which also covers FBX's non-standard scale inheritance), so that the rest pose
//! reproduces the stored mesh, as in Blender's importer, which builds bones from the bind pose:
//! many exporters (Blender 2.7x with an action, e.g. Quaternius' 2016–2019 packs) leave the
//! scene's nodes in an animated pose that is not the bind pose.

use super::{dmat, node_name, Ctx};
use crate::IoError;
use rigml_core::glam::DMat4;
use rigml_core::{Skeleton, Transform};
use std::collections::{HashMap, HashSet};

/// The skeleton and the FBX node behind each joint.
pub struct Joints {
    pub skeleton: Skeleton,
    /// `nodes[j]` = ufbx node index (`typed_id`) of joint `j`.
    pub nodes: Vec<u32>,
    /// Inverse of `nodes`.
    pub joint_of_node: HashMap<u32, usize>,
}

/// Bind matrices (`bind_to_world`) of the bone nodes that have a skin cluster, by node index.
pub type ClusterBinds = HashMap<u32, DMat4>;

/// Build the skeleton for `bone_nodes` (ufbx node indices, deduplicated, any order).
pub fn build(ctx: &Ctx, scene: &ufbx::Scene, bone_nodes: &[u32], binds: &ClusterBinds) -> Result<Joints, IoError> {
    let chains = bone_nodes
        .iter()
        .map(|&b| ancestry(ctx, scene, b))
        .collect::<Result<Vec<_>, _>>()?;
    let lca = common_ancestor(&chains);
    let stop_at_root = |n: u32| scene.nodes.get(n as usize).is_none_or(|node| node.is_root);

    let mut included: HashSet<u32> = HashSet::new();
    for chain in &chains {
        // chain[0] is the bone, then its parent, and so on up to the scene root.
        for &n in chain {
            if stop_at_root(n) {
                break;
            }
            included.insert(n);
            if Some(n) == lca {
                break;
            }
        }
    }
    let mut nodes: Vec<u32> = included.into_iter().collect();
    nodes.sort_unstable();

    let index_of: HashMap<u32, usize> = nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let mut names = Vec::with_capacity(nodes.len());
    let mut parents = Vec::with_capacity(nodes.len());
    let mut bind_world = Vec::with_capacity(nodes.len());
    let mut inverse_bind = Vec::with_capacity(nodes.len());
    let mut used_names: HashSet<String> = HashSet::new();
    for (i, &n) in nodes.iter().enumerate() {
        let node = node_at(ctx, scene, n)?;
        names.push(unique_name(&node_name(node), i, &mut used_names));
        parents.push(
            node.parent
                .as_ref()
                .and_then(|p| index_of.get(&p.element.typed_id).copied()),
        );
        let bind = match binds.get(&n) {
            Some(b) => *b,
            None => bind_pose_matrix(scene, node).unwrap_or_else(|| dmat(&node.node_to_world)),
        };
        inverse_bind.push(bind.inverse().as_mat4());
        bind_world.push(bind);
    }
    let rest_local = (0..nodes.len())
        .map(|i| {
            let local = match parents[i] {
                Some(p) => bind_world[p].inverse() * bind_world[i],
                None => bind_world[i],
            };
            Transform::from_mat4(&local.as_mat4())
        })
        .collect();

    let (skeleton, new_index) = Skeleton::from_unordered(names, parents, rest_local, inverse_bind)
        .map_err(|e| IoError::invalid(ctx.path, e))?;
    let mut ordered = vec![0u32; nodes.len()];
    for (old, &new) in new_index.iter().enumerate() {
        if let (Some(slot), Some(&n)) = (ordered.get_mut(new), nodes.get(old)) {
            *slot = n;
        }
    }
    let joint_of_node = ordered.iter().enumerate().map(|(j, &n)| (n, j)).collect();
    Ok(Joints {
        skeleton,
        nodes: ordered,
        joint_of_node,
    })
}

/// The node at ufbx index `n`, or an error naming it.
pub fn node_at<'s>(ctx: &Ctx, scene: &'s ufbx::Scene, n: u32) -> Result<&'s ufbx::Node, IoError> {
    scene
        .nodes
        .get(n as usize)
        .map(|r| r.as_ref())
        .ok_or_else(|| ctx.err(format!("node {n} does not exist ({} nodes)", scene.nodes.len())))
}

/// `n`, its parent, grandparent, ... up to the top; an error if the parent links loop.
fn ancestry(ctx: &Ctx, scene: &ufbx::Scene, n: u32) -> Result<Vec<u32>, IoError> {
    let mut chain = vec![n];
    let mut node = node_at(ctx, scene, n)?;
    while let Some(parent) = node.parent.as_ref() {
        if chain.len() > scene.nodes.len() {
            return Err(ctx.err(format!("node '{}': parent links form a cycle", node_name(node))));
        }
        chain.push(parent.element.typed_id);
        node = parent.as_ref();
    }
    Ok(chain)
}

/// Lowest node shared by all chains (each chain runs from a node up to the top).
fn common_ancestor(chains: &[Vec<u32>]) -> Option<u32> {
    let first = chains.first()?;
    let mut lca = None;
    for depth in 1..=first.len() {
        let candidate = first[first.len() - depth];
        let shared = chains
            .iter()
            .all(|c| c.len() >= depth && c[c.len() - depth] == candidate);
        if !shared {
            break;
        }
        lca = Some(candidate);
    }
    lca
}

/// The node's world matrix in the first bind pose that lists it.
fn bind_pose_matrix(scene: &ufbx::Scene, node: &ufbx::Node) -> Option<DMat4> {
    scene
        .poses
        .iter()
        .filter(|p| p.is_bind_pose)
        .find_map(|p| {
            p.bone_poses
                .iter()
                .find(|b| b.bone_node.element.typed_id == node.element.typed_id)
        })
        .map(|b| dmat(&b.bone_to_world))
}

/// `name`, or `joint{j}` when empty, made unique with a `.2`, `.3`... suffix.
fn unique_name(name: &str, j: usize, used: &mut HashSet<String>) -> String {
    let base = if name.is_empty() {
        format!("joint{j}")
    } else {
        name.to_string()
    };
    let mut candidate = base.clone();
    let mut k = 2;
    while used.contains(&candidate) {
        candidate = format!("{base}.{k}");
        k += 1;
    }
    used.insert(candidate.clone());
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_ancestor_of_two_branches() {
        // 5 -> 3 -> 1 -> 0 and 4 -> 1 -> 0: the branches meet at 1.
        assert_eq!(common_ancestor(&[vec![5, 3, 1, 0], vec![4, 1, 0]]), Some(1));
        // One chain: the bone itself.
        assert_eq!(common_ancestor(&[vec![5, 3, 1, 0]]), Some(5));
        // Disjoint tops.
        assert_eq!(common_ancestor(&[vec![2, 0], vec![3, 9]]), None);
        assert_eq!(common_ancestor(&[]), None);
    }

    #[test]
    fn names_are_made_unique() {
        let mut used = HashSet::new();
        assert_eq!(unique_name("arm", 0, &mut used), "arm");
        assert_eq!(unique_name("arm", 1, &mut used), "arm.2");
        assert_eq!(unique_name("", 2, &mut used), "joint2");
        assert_eq!(unique_name("arm", 3, &mut used), "arm.3");
    }
}
