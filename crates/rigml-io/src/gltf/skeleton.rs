//! The character's skeleton from the file's skins: the union of their joints plus nodes lying
//! between two joints, parents first, with non-joint ancestors baked into the roots and the
//! skins' inverse bind matrices brought into one bind space.

use super::accessor::Doc;
use super::hierarchy::{trs_of, Hierarchy};
use super::json::{self, fail, Fail};
use glam::{DMat4, Mat4};
use rigml_core::{Skeleton, Transform};
use std::collections::{HashMap, HashSet};

/// Relative tolerance when checking that one skin's bind ratio is the same for all its joints
/// (exporters' f32 noise is ~1e-8 here).
const BIND_TOLERANCE: f64 = 1e-5;

/// A ratio this close to identity is identity: positions stay exactly as stored. It must be
/// tight: node scales of 100 magnify a small offset in bind space (Quaternius Suit: 7e-5).
const IDENTITY_TOLERANCE: f64 = 1e-7;

/// The skeleton and how the file's skins map onto it.
pub(super) struct SkeletonBuild {
    pub skeleton: Skeleton,
    /// Skeleton joint of each node that is a joint.
    pub joint_of_node: HashMap<usize, usize>,
    /// For each skin used: its joints as skeleton indices, and the matrix taking positions
    /// bound with that skin into the skeleton's bind space (`None` = identity).
    pub skins: HashMap<usize, SkinMap>,
    /// For root joints with non-joint ancestors: the ancestors' global matrix, baked into the
    /// root's rest transform (and into its animation channels).
    pub baked: HashMap<usize, Mat4>,
}

pub(super) struct SkinMap {
    pub joints: Vec<usize>,
    pub to_bind: Option<Mat4>,
}

/// Build from `skins` (indices into the file's skins, in the order their joints are listed).
pub(super) fn build(doc: &Doc, tree: &Hierarchy, skins: &[usize]) -> Result<SkeletonBuild, Fail> {
    // Joint nodes in first-seen order, with the skins' inverse bind matrices.
    let mut nodes: Vec<usize> = Vec::new();
    let mut slot_of: HashMap<usize, usize> = HashMap::new();
    let mut skin_joints: Vec<(usize, Vec<usize>, Vec<DMat4>)> = Vec::new();
    for &s in skins {
        let skin = json::item(doc.skins, s, "skin", "nodes")?;
        let here = format!("skins[{s}]");
        let mut joints = Vec::new();
        let mut listed = HashSet::new();
        for (k, v) in json::array(skin, "joints", &here)?.iter().enumerate() {
            let jpath = format!("{here}.joints[{k}]");
            let n = json::as_index(v, &jpath)?;
            if n >= tree.nodes.len() {
                return Err(fail(format!("{jpath}: node {n} does not exist")));
            }
            if !listed.insert(n) {
                return Err(fail(format!("{jpath}: node {n} is listed twice")));
            }
            joints.push(n);
        }
        let ibm = match json::opt_index(skin, "inverseBindMatrices", &here)? {
            Some(a) => {
                let path = format!("{here}.inverseBindMatrices");
                let m = doc.floats(a, &path, &["MAT4"])?;
                if m.count() < joints.len() {
                    return Err(fail(format!(
                        "{path}: {} matrices for {} joints",
                        m.count(),
                        joints.len()
                    )));
                }
                (0..joints.len())
                    .map(|k| {
                        m.get::<16>(k)
                            .map_or(DMat4::IDENTITY, |c| Mat4::from_cols_array(&c).as_dmat4())
                    })
                    .collect()
            }
            None => vec![DMat4::IDENTITY; joints.len()],
        };
        for &n in &joints {
            slot_of.entry(n).or_insert_with(|| {
                nodes.push(n);
                nodes.len() - 1
            });
        }
        skin_joints.push((s, joints, ibm));
    }
    add_between_nodes(tree, &mut nodes, &mut slot_of);

    let (parents, rest, baked_slots) = rest_pose(tree, &nodes, &slot_of)?;
    let (ibm, skin_maps) = bind_space(&skin_joints, &slot_of, nodes.len())?;
    let ibm = fill_missing_binds(ibm, &parents, &rest);

    let names = unique_names(tree, &nodes);
    let (skeleton, new_index) =
        Skeleton::from_unordered(names, parents, rest, ibm).map_err(|e| fail(format!("skins: {e}")))?;
    let remap = |slot: usize| new_index.get(slot).copied().unwrap_or(slot);
    Ok(SkeletonBuild {
        skeleton,
        joint_of_node: slot_of.iter().map(|(&n, &s)| (n, remap(s))).collect(),
        skins: skin_maps
            .into_iter()
            .map(|(s, m)| {
                let joints = m.joints.iter().map(|&j| remap(j)).collect();
                (s, SkinMap { joints, ..m })
            })
            .collect(),
        baked: baked_slots.into_iter().map(|(s, m)| (remap(s), m)).collect(),
    })
}

/// Nodes on the path between a joint and the nearest joint above it become joints too.
fn add_between_nodes(tree: &Hierarchy, nodes: &mut Vec<usize>, slot_of: &mut HashMap<usize, usize>) {
    let joints: HashSet<usize> = nodes.iter().copied().collect();
    for j in nodes.clone() {
        let path: Vec<usize> = tree.ancestors(j).take_while(|a| !joints.contains(a)).collect();
        let reaches_joint = tree.ancestors(j).nth(path.len()).is_some_and(|a| joints.contains(&a));
        if reaches_joint {
            for &n in path.iter().rev() {
                slot_of.entry(n).or_insert_with(|| {
                    nodes.push(n);
                    nodes.len() - 1
                });
            }
        }
    }
}

type RestPose = (Vec<Option<usize>>, Vec<Transform>, Vec<(usize, Mat4)>);

/// Parents (as slots), local rest transforms with non-joint ancestors baked into roots.
fn rest_pose(tree: &Hierarchy, nodes: &[usize], slot_of: &HashMap<usize, usize>) -> Result<RestPose, Fail> {
    let mut parents = Vec::with_capacity(nodes.len());
    let mut rest = Vec::with_capacity(nodes.len());
    let mut baked = Vec::new();
    for (slot, &n) in nodes.iter().enumerate() {
        let local = tree.local_trs(n)?;
        let parent_node = tree.parent.get(n).copied().flatten();
        match parent_node.and_then(|p| slot_of.get(&p).copied()) {
            Some(p) => {
                parents.push(Some(p));
                rest.push(local);
            }
            None => {
                parents.push(None);
                let above = parent_node.and_then(|p| tree.global.get(p).copied());
                match above {
                    Some(a) if a != Mat4::IDENTITY => {
                        let m = a * tree.nodes.get(n).map_or(Mat4::IDENTITY, |x| x.local);
                        rest.push(trs_of(&m, &format!("nodes[{n}] (with its non-joint ancestors)"))?);
                        baked.push((slot, a));
                    }
                    _ => rest.push(local),
                }
            }
        }
    }
    Ok((parents, rest, baked))
}

type BindSpace = (Vec<Option<Mat4>>, Vec<(usize, SkinMap)>);

/// One inverse bind matrix per joint. A joint's first skin sets it; a later skin whose
/// matrices differ must differ by one matrix `R` for all shared joints (its meshes were bound
/// in another space): its primitives are then moved by `R` into the common space.
fn bind_space(
    skins: &[(usize, Vec<usize>, Vec<DMat4>)],
    slot_of: &HashMap<usize, usize>,
    joint_count: usize,
) -> Result<BindSpace, Fail> {
    let mut ibm: Vec<Option<DMat4>> = vec![None; joint_count];
    let mut maps = Vec::new();
    for (s, joints, mats) in skins {
        let slots: Vec<usize> = joints.iter().filter_map(|n| slot_of.get(n).copied()).collect();
        let mut ratio: Option<(DMat4, usize)> = None;
        for (k, (&slot, m)) in slots.iter().zip(mats).enumerate() {
            let Some(common) = ibm.get(slot).copied().flatten() else {
                continue;
            };
            let r = common.inverse() * *m;
            match ratio {
                None => ratio = Some((r, k)),
                Some((r0, k0)) if !close(&r, &r0, BIND_TOLERANCE) => {
                    return Err(fail(format!(
                        "skins[{s}].inverseBindMatrices: joints[{k0}] and joints[{k}] are bound in different spaces \
                         from the skin listed first for them; cannot merge into one skeleton"
                    )));
                }
                Some(_) => {}
            }
        }
        let r = ratio
            .map(|(r, _)| r)
            .filter(|r| !close(r, &DMat4::IDENTITY, IDENTITY_TOLERANCE));
        let r_inv = r.map(|r| r.inverse());
        for (&slot, m) in slots.iter().zip(mats) {
            if let Some(entry) = ibm.get_mut(slot).filter(|e| e.is_none()) {
                *entry = Some(r_inv.map_or(*m, |ri| *m * ri));
            }
        }
        let to_bind = r.map(|r| r.as_mat4());
        maps.push((*s, SkinMap { joints: slots, to_bind }));
    }
    Ok((ibm.into_iter().map(|m| m.map(|m| m.as_mat4())).collect(), maps))
}

fn close(a: &DMat4, b: &DMat4, tolerance: f64) -> bool {
    let scale = b.to_cols_array().iter().fold(1.0f64, |s, x| s.max(x.abs()));
    let err = (*a - *b).to_cols_array().iter().fold(0.0f64, |s, x| s.max(x.abs()));
    err <= tolerance * scale
}

/// Joints in no skin (nodes between joints) keep their rest offset from their parent's bind.
fn fill_missing_binds(ibm: Vec<Option<Mat4>>, parents: &[Option<usize>], rest: &[Transform]) -> Vec<Mat4> {
    let mut out: Vec<Option<Mat4>> = ibm;
    // Parents of between-nodes may be between-nodes listed later: walk up to a known bind,
    // then fill the chain downwards (the hierarchy is acyclic, so the walk ends).
    for start in 0..out.len() {
        let mut chain = Vec::new();
        let mut at = Some(start);
        while let Some(j) = at.filter(|&j| out.get(j).is_some_and(Option::is_none)) {
            chain.push(j);
            at = parents.get(j).copied().flatten();
        }
        let mut above = at.and_then(|p| out.get(p).copied().flatten()).unwrap_or(Mat4::IDENTITY);
        for &j in chain.iter().rev() {
            let local = rest.get(j).map_or(Mat4::IDENTITY, Transform::to_mat4);
            above = local.inverse() * above;
            out[j] = Some(above);
        }
    }
    out.into_iter().map(|m| m.unwrap_or(Mat4::IDENTITY)).collect()
}

/// Node names, made unique (`name`, `name_1`, …) as the skeleton requires.
fn unique_names(tree: &Hierarchy, nodes: &[usize]) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut next_suffix: HashMap<String, usize> = HashMap::new();
    nodes
        .iter()
        .map(|&n| {
            let base = tree.name(n);
            let mut name = base.clone();
            while !seen.insert(name.clone()) {
                let k = next_suffix.entry(base.clone()).or_insert(1);
                name = format!("{base}_{k}");
                *k += 1;
            }
            name
        })
        .collect()
}
