//! The character's skeleton from the file's skins: the union of their joints plus nodes lying
//! between two joints, parents first, with non-joint ancestors baked into the roots and the
//! skins' inverse bind matrices brought into one bind space.
//!
//! A joint keeps the inverse bind matrix of the first skin that lists it. A later skin whose
//! matrices for shared joints differ from those by one matrix `R` (its meshes were bound in
//! another space) has its vertices moved by `R`, exactly. When the difference is not the
//! same for all its shared joints (magnum's `skin.gltf`), the first skin's binding is still
//! kept, with a warning, and each vertex of the later skin is re-bound: moved by the blend of
//! its joints' differences by its weights, so that it deforms as its own skin says wherever
//! its joints agree, and at the bind pose everywhere.

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
    /// What was repaired (skins binding a shared joint differently), one line each.
    pub warnings: Vec<String>,
}

/// How one skin of the file maps onto the skeleton.
pub(super) struct SkinMap {
    /// Skin joint k → skeleton joint.
    pub joints: Vec<usize>,
    /// The matrix taking positions bound with this skin into the skeleton's bind space
    /// (`None` = identity); vertices without weight use it.
    pub to_bind: Option<Mat4>,
    /// Set when this skin binds some shared joints differently from the others: per skin
    /// joint k, the matrix taking a vertex weighted fully to joint k into the skeleton's bind
    /// space (the kept inverse bind matrix's inverse times this skin's).
    pub per_joint: Option<Vec<Mat4>>,
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
    let (ibm, skin_maps, warnings) = bind_space(tree, &skin_joints, &slot_of, nodes.len());
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
        warnings,
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

type BindSpace = (Vec<Option<Mat4>>, Vec<(usize, SkinMap)>, Vec<String>);

/// Most joints a warning names before it says how many more there are.
const NAMED_IN_WARNING: usize = 4;

/// One inverse bind matrix per joint. A joint's first skin sets it; a later skin's ratio to
/// it, `R = kept⁻¹ · own`, is the matrix taking that skin's vertices into the common space.
/// The ratio of the later skin's first shared joint is the skin's (`to_bind`; its joints not
/// bound yet get their matrices divided by it). Shared joints whose ratio differs from that
/// one are named in a warning and get their own ratio in `per_joint`.
fn bind_space(
    tree: &Hierarchy,
    skins: &[(usize, Vec<usize>, Vec<DMat4>)],
    slot_of: &HashMap<usize, usize>,
    joint_count: usize,
) -> BindSpace {
    let mut ibm: Vec<Option<DMat4>> = vec![None; joint_count];
    // The skin whose matrix each joint kept.
    let mut owner: Vec<Option<usize>> = vec![None; joint_count];
    let mut maps = Vec::new();
    let mut warnings = Vec::new();
    for (s, joints, mats) in skins {
        let slots: Vec<usize> = joints.iter().filter_map(|n| slot_of.get(n).copied()).collect();
        // Each shared joint's ratio to the binding kept for it.
        let ratios: Vec<Option<DMat4>> = slots
            .iter()
            .zip(mats)
            .map(|(&slot, m)| ibm.get(slot).copied().flatten().map(|kept| kept.inverse() * *m))
            .collect();
        let base = ratios.iter().flatten().next().copied();
        let differ: Vec<usize> = match base {
            Some(b) => (0..ratios.len())
                .filter(|&k| ratios[k].is_some_and(|r| !close(&r, &b, BIND_TOLERANCE)))
                .collect(),
            None => Vec::new(),
        };
        let r = base.filter(|r| !close(r, &DMat4::IDENTITY, IDENTITY_TOLERANCE));
        let r_inv = r.map(|r| r.inverse());
        for (&slot, m) in slots.iter().zip(mats) {
            if let Some(entry) = ibm.get_mut(slot).filter(|e| e.is_none()) {
                *entry = Some(r_inv.map_or(*m, |ri| *m * ri));
                if let Some(o) = owner.get_mut(slot) {
                    *o = Some(*s);
                }
            }
        }
        let per_joint = (!differ.is_empty()).then(|| {
            let common = r.unwrap_or(DMat4::IDENTITY);
            (0..slots.len())
                .map(|k| {
                    if differ.contains(&k) {
                        ratios[k].unwrap_or(common)
                    } else {
                        common
                    }
                    .as_mat4()
                })
                .collect()
        });
        if !differ.is_empty() {
            warnings.push(differ_warning(tree, *s, joints, &differ, |k| {
                slots.get(k).and_then(|&slot| owner.get(slot).copied().flatten())
            }));
        }
        let to_bind = r.map(|r| r.as_mat4());
        maps.push((
            *s,
            SkinMap {
                joints: slots,
                to_bind,
                per_joint,
            },
        ));
    }
    (
        ibm.into_iter().map(|m| m.map(|m| m.as_mat4())).collect(),
        maps,
        warnings,
    )
}

/// `skins[s].inverseBindMatrices: joints[1] (node2) and joints[2] (node1) are bound in
/// different spaces from skins[0], which lists them first; …`
fn differ_warning(
    tree: &Hierarchy,
    s: usize,
    joints: &[usize],
    differ: &[usize],
    owner: impl Fn(usize) -> Option<usize>,
) -> String {
    let named: Vec<String> = differ
        .iter()
        .take(NAMED_IN_WARNING)
        .map(|&k| {
            format!(
                "joints[{k}] ({})",
                joints.get(k).map_or_else(String::new, |&n| tree.name(n))
            )
        })
        .collect();
    let mut list = match named.as_slice() {
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
        [] => String::new(),
    };
    if differ.len() > NAMED_IN_WARNING {
        list = format!("{} (+{} more)", named.join(", "), differ.len() - NAMED_IN_WARNING);
    }
    let mut owners: Vec<usize> = differ.iter().filter_map(|&k| owner(k)).collect();
    owners.sort_unstable();
    owners.dedup();
    let (them, are) = if differ.len() == 1 {
        ("it", "is")
    } else {
        ("them", "are")
    };
    let (owners, kept) = match owners.as_slice() {
        [one] => (
            format!("skins[{one}], which lists {them} first"),
            format!("skins[{one}]'s binding is kept and skins[{s}]'s vertices are re-bound to it"),
        ),
        many => (
            format!(
                "{}, which list {them} first",
                many.iter()
                    .map(|o| format!("skins[{o}]"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            format!("their bindings are kept and skins[{s}]'s vertices are re-bound to them"),
        ),
    };
    format!("skins[{s}].inverseBindMatrices: {list} {are} bound in different spaces from {owners}; {kept}")
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
