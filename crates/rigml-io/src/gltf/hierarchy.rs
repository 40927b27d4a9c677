//! The node tree: parents, global transforms and the METRICS.md §1 traversal order, with
//! cycles, shared children and dangling indices reported by JSON path.

use super::accessor::Doc;
use super::json::{self, fail, unsupported, Fail};
use glam::{Mat4, Quat, Vec3};
use rigml_core::Transform;

/// Largest relative error allowed when a matrix is stored as translation/rotation/scale.
const TRS_TOLERANCE: f32 = 1e-4;

/// One node, as read.
pub(super) struct Node {
    pub name: Option<String>,
    pub children: Vec<usize>,
    pub mesh: Option<usize>,
    pub skin: Option<usize>,
    /// Local transform when given as TRS (exact), or decomposed from `matrix`.
    pub trs: Transform,
    /// Local matrix (`matrix` if given, else T·R·S).
    pub local: Mat4,
    /// True when the node gave a `matrix`.
    pub has_matrix: bool,
}

/// All nodes with their parents, global matrices and the scene's depth-first order.
pub(super) struct Hierarchy {
    pub nodes: Vec<Node>,
    pub parent: Vec<Option<usize>>,
    pub global: Vec<Mat4>,
    /// Nodes of the chosen scene, depth-first, children in array order.
    pub order: Vec<usize>,
}

impl Hierarchy {
    pub fn read(doc: &Doc) -> Result<Self, Fail> {
        let nodes = doc
            .nodes
            .iter()
            .enumerate()
            .map(|(i, v)| read_node(v, i))
            .collect::<Result<Vec<_>, _>>()?;
        let mut parent = vec![None; nodes.len()];
        for (i, node) in nodes.iter().enumerate() {
            for (k, &c) in node.children.iter().enumerate() {
                let here = format!("nodes[{i}].children[{k}]");
                let slot = parent
                    .get_mut(c)
                    .ok_or_else(|| fail(format!("{here}: node {c} does not exist")))?;
                if let Some(other) = *slot {
                    return Err(fail(format!("{here}: node {c} is already a child of node {other}")));
                }
                *slot = Some(i);
            }
        }
        // Walk up from each node; meeting a node of the current walk again is a cycle.
        // Each node is walked once (0 = unseen, 1 = on this walk, 2 = reaches a root).
        let mut state = vec![0u8; nodes.len()];
        for start in 0..nodes.len() {
            let mut walk = Vec::new();
            let mut at = Some(start);
            while let Some(n) = at {
                match state[n] {
                    2 => break,
                    1 => return Err(fail(format!("nodes[{n}]: the node hierarchy has a cycle through it"))),
                    _ => {}
                }
                state[n] = 1;
                walk.push(n);
                at = parent[n];
            }
            walk.into_iter().for_each(|n| state[n] = 2);
        }
        let global = globals(&nodes, &parent);
        let order = scene_order(doc, &nodes, &parent)?;
        Ok(Hierarchy {
            nodes,
            parent,
            global,
            order,
        })
    }

    /// The node's name, or `node<i>` when it has none.
    pub fn name(&self, i: usize) -> String {
        match self.nodes.get(i).and_then(|n| n.name.as_deref()) {
            Some(name) if !name.is_empty() => name.to_string(),
            _ => format!("node{i}"),
        }
    }

    /// Ancestors of `i`, nearest first.
    pub fn ancestors(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(self.parent.get(i).copied().flatten(), |&p| {
            self.parent.get(p).copied().flatten()
        })
    }

    /// The node's local TRS, refusing matrices with shear (rigml joints are TRS).
    pub fn local_trs(&self, i: usize) -> Result<Transform, Fail> {
        let node = self
            .nodes
            .get(i)
            .ok_or_else(|| fail(format!("node {i} does not exist")))?;
        if node.has_matrix {
            return trs_of(&node.local, &format!("nodes[{i}].matrix"));
        }
        Ok(node.trs)
    }
}

/// Decompose a matrix into TRS, refusing it when T·R·S does not give it back (shear).
pub(super) fn trs_of(m: &Mat4, here: &str) -> Result<Transform, Fail> {
    let t = Transform::from_mat4(m);
    let back = t.to_mat4();
    let scale = m.to_cols_array().iter().fold(1.0f32, |a, x| a.max(x.abs()));
    let err = (back - *m).to_cols_array().iter().fold(0.0f32, |a, x| a.max(x.abs()));
    if err.is_nan() && m.is_finite() {
        return Err(unsupported(format!(
            "{here}: transform is singular (a zero scale) and cannot be split into translation/rotation/scale"
        )));
    }
    if err > TRS_TOLERANCE * scale {
        return Err(unsupported(format!(
            "{here}: transform has shear (error {err:e}); rigml stores joints as translation/rotation/scale"
        )));
    }
    Ok(t)
}

fn read_node(value: &json::Value<'_>, i: usize) -> Result<Node, Fail> {
    let here = format!("nodes[{i}]");
    let obj = json::object(value, &here)?;
    let children = json::array(obj, "children", &here)?
        .iter()
        .enumerate()
        .map(|(k, c)| json::as_index(c, &format!("{here}.children[{k}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let translation = json::opt_floats::<3>(obj, "translation", &here)?.map_or(Vec3::ZERO, Vec3::from);
    let rotation = json::opt_floats::<4>(obj, "rotation", &here)?.map_or(Quat::IDENTITY, Quat::from_array);
    let scale = json::opt_floats::<3>(obj, "scale", &here)?.map_or(Vec3::ONE, Vec3::from);
    let trs = Transform {
        translation,
        rotation,
        scale,
    };
    let matrix = json::opt_floats::<16>(obj, "matrix", &here)?;
    Ok(Node {
        name: json::opt_str(obj, "name", &here)?.map(str::to_string),
        children,
        mesh: json::opt_index(obj, "mesh", &here)?,
        skin: json::opt_index(obj, "skin", &here)?,
        trs,
        local: matrix.map_or_else(|| trs.to_mat4(), |m| Mat4::from_cols_array(&m)),
        has_matrix: matrix.is_some(),
    })
}

/// Global matrices, parents before children (the hierarchy is known to be acyclic).
fn globals(nodes: &[Node], parent: &[Option<usize>]) -> Vec<Mat4> {
    let mut global: Vec<Option<Mat4>> = vec![None; nodes.len()];
    for start in 0..nodes.len() {
        let mut chain = vec![start];
        let mut at = start;
        while let Some(p) = parent[at] {
            if global[p].is_some() {
                break;
            }
            chain.push(p);
            at = p;
        }
        for &n in chain.iter().rev() {
            let above = parent[n].and_then(|p| global[p]).unwrap_or(Mat4::IDENTITY);
            global[n] = Some(above * nodes[n].local);
        }
    }
    global.into_iter().map(|g| g.unwrap_or(Mat4::IDENTITY)).collect()
}

/// METRICS.md §1: roots of the default scene (else scene 0, else every parentless node), then
/// children depth-first in array order. A node reached twice is visited once.
fn scene_order(doc: &Doc, nodes: &[Node], parent: &[Option<usize>]) -> Result<Vec<usize>, Fail> {
    let scene = match json::opt_index(doc.root, "scene", "")? {
        Some(s) => Some((s, "scene".to_string())),
        None if !doc.scenes.is_empty() => Some((0, "scenes".to_string())),
        None => None,
    };
    let roots: Vec<usize> = match scene {
        Some((s, referrer)) => {
            let obj = json::item(doc.scenes, s, "scene", &referrer)?;
            let here = format!("scenes[{s}]");
            json::array(obj, "nodes", &here)?
                .iter()
                .enumerate()
                .map(|(k, v)| {
                    let n = json::as_index(v, &format!("{here}.nodes[{k}]"))?;
                    if n >= nodes.len() {
                        return Err(fail(format!("{here}.nodes[{k}]: node {n} does not exist")));
                    }
                    Ok(n)
                })
                .collect::<Result<_, _>>()?
        }
        None => (0..nodes.len()).filter(|&n| parent[n].is_none()).collect(),
    };
    let mut seen = vec![false; nodes.len()];
    let mut order = Vec::new();
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(n) = stack.pop() {
        if std::mem::replace(&mut seen[n], true) {
            continue;
        }
        order.push(n);
        stack.extend(nodes[n].children.iter().rev());
    }
    Ok(order)
}
