//! Joint hierarchies with rest and bind transforms.

use crate::{CoreError, Transform};
use glam::{Mat4, Vec3};

/// Bone length, as a fraction of the character's size (the length normalised to 1, METRICS.md
/// §1), below which a leaf joint is a zero-length end-site (METRICS.md §4, failure 6).
pub const END_SITE_FRACTION: f32 = 1e-6;

/// A joint hierarchy, parents before children.
///
/// Two poses matter: the **rest** pose (`rest_local`, what a clip's untouched channels fall back
/// to) and the **bind** pose (`inverse_bind`, the space the mesh was skinned in). They are often
/// equal but need not be.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Skeleton {
    /// Joint names, unique within the skeleton (readers disambiguate duplicates).
    pub names: Vec<String>,
    /// Parent of each joint; `None` for roots. Always `parents[j] < j` (topological order).
    pub parents: Vec<Option<usize>>,
    /// Joint-local rest transforms relative to the parent (the root's is in model space).
    pub rest_local: Vec<Transform>,
    /// Model-space → joint-space matrices at bind time, one per joint.
    pub inverse_bind: Vec<Mat4>,
}

impl Skeleton {
    pub fn joint_count(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Index of the joint with this exact name.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Children of every joint, in joint order.
    pub fn children(&self) -> Vec<Vec<usize>> {
        let mut children = vec![Vec::new(); self.joint_count()];
        for (j, p) in self.parents.iter().enumerate() {
            if let Some(p) = *p {
                children[p].push(j);
            }
        }
        children
    }

    /// Model-space matrices of the given local transforms (forward kinematics).
    pub fn world_matrices(&self, local: &[Transform]) -> Vec<Mat4> {
        let mut world: Vec<Mat4> = Vec::with_capacity(local.len());
        for (j, t) in local.iter().enumerate() {
            let m = t.to_mat4();
            let w = match self.parents.get(j).copied().flatten() {
                Some(p) if p < j => world[p] * m,
                _ => m,
            };
            world.push(w);
        }
        world
    }

    /// The uniform scale every root joint's rest transform shares, when it is not 1: files that
    /// keep their vertices under an armature scaled ×100, which readers bake into the roots.
    /// Writers put it back on a node above the roots, where DCCs expect the armature's scale.
    pub fn common_root_scale(&self) -> Option<f32> {
        let mut roots = (0..self.joint_count()).filter(|&j| self.parents[j].is_none());
        let s = self.rest_local[roots.next()?].scale;
        let uniform = (s.max_element() - s.min_element()).abs() <= 1e-6 * s.max_element().abs();
        let lifted = s.x.is_finite() && s.x > 0.0 && uniform && (s.x - 1.0).abs() > 1e-4;
        let same = |v: Vec3| (v - s).abs().max_element() <= 1e-6 * s.x;
        (lifted && roots.all(|j| same(self.rest_local[j].scale))).then_some(s.x)
    }

    /// Model-space rest matrices.
    pub fn rest_world(&self) -> Vec<Mat4> {
        self.world_matrices(&self.rest_local)
    }

    /// Model-space bind matrices (inverses of `inverse_bind`).
    pub fn bind_world(&self) -> Vec<Mat4> {
        self.inverse_bind.iter().map(|m| m.inverse()).collect()
    }

    /// Model-space joint positions in the bind pose.
    pub fn bind_positions(&self) -> Vec<Vec3> {
        self.bind_world().iter().map(|m| m.w_axis.truncate()).collect()
    }

    /// Length of the bone from each joint's parent to the joint, in the bind pose (0 for roots).
    pub fn bone_lengths(&self) -> Vec<f32> {
        let p = self.bind_positions();
        self.parents
            .iter()
            .enumerate()
            .map(|(j, parent)| parent.map_or(0.0, |q| (p[j] - p[q]).length()))
            .collect()
    }

    /// Per joint: is it a zero-length end-site — a leaf with a parent whose bind-pose bone is
    /// shorter than [`END_SITE_FRACTION`] × `size` (`size` = the length that normalises to 1)?
    /// Solvers give such joints no weight, and evaluation checks that they do not.
    pub fn zero_length_end_sites(&self, size: f32) -> Vec<bool> {
        let lengths = self.bone_lengths();
        let children = self.children();
        (0..self.joint_count())
            .map(|j| self.parents[j].is_some() && children[j].is_empty() && lengths[j] < END_SITE_FRACTION * size)
            .collect()
    }

    /// Set `inverse_bind` from the rest pose (for formats that have no separate bind pose).
    pub fn bind_to_rest(&mut self) {
        self.inverse_bind = self.rest_world().iter().map(|m| m.inverse()).collect();
    }

    /// Build a skeleton from joints listed in any order with parent indices into that list.
    /// Returns the skeleton in topological order (parents first, otherwise keeping the input
    /// order) and, for each input joint, its new index. Cycles are an error.
    pub fn from_unordered(
        names: Vec<String>,
        parents: Vec<Option<usize>>,
        rest_local: Vec<Transform>,
        inverse_bind: Vec<Mat4>,
    ) -> Result<(Skeleton, Vec<usize>), CoreError> {
        let n = names.len();
        for (what, len) in [
            ("parents", parents.len()),
            ("rest_local", rest_local.len()),
            ("inverse_bind", inverse_bind.len()),
        ] {
            if len != n {
                return Err(CoreError::SkeletonLength {
                    what,
                    got: len,
                    expected: n,
                });
            }
        }
        let order = topological_order(&names, &parents)?;
        let mut new_index = vec![0; n];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        let skeleton = Skeleton {
            names: order.iter().map(|&o| names[o].clone()).collect(),
            parents: order.iter().map(|&o| parents[o].map(|p| new_index[p])).collect(),
            rest_local: order.iter().map(|&o| rest_local[o]).collect(),
            inverse_bind: order.iter().map(|&o| inverse_bind[o]).collect(),
        };
        Ok((skeleton, new_index))
    }

    /// Check the invariants: lengths agree, parents come first, transforms finite, bind
    /// matrices invertible.
    pub fn validate(&self) -> Result<(), CoreError> {
        let n = self.joint_count();
        for (what, len) in [
            ("parents", self.parents.len()),
            ("rest_local", self.rest_local.len()),
            ("inverse_bind", self.inverse_bind.len()),
        ] {
            if len != n {
                return Err(CoreError::SkeletonLength {
                    what,
                    got: len,
                    expected: n,
                });
            }
        }
        for j in 0..n {
            let name = || self.names[j].clone();
            if let Some(parent) = self.parents[j] {
                if parent >= j {
                    return Err(CoreError::ParentOrder {
                        joint: j,
                        name: name(),
                        parent,
                    });
                }
            }
            if !self.rest_local[j].is_finite() {
                return Err(CoreError::NonFiniteJoint {
                    joint: j,
                    name: name(),
                    what: "rest transform",
                });
            }
            let ib = &self.inverse_bind[j];
            if !ib.is_finite() {
                return Err(CoreError::NonFiniteJoint {
                    joint: j,
                    name: name(),
                    what: "inverse bind matrix",
                });
            }
            let det = ib.determinant();
            if !det.is_finite() || det.abs() < 1e-12 {
                return Err(CoreError::SingularBind { joint: j, name: name() });
            }
        }
        Ok(())
    }
}

/// Parents-first order of joints given with arbitrary parent links; error on a cycle or a
/// parent index out of range.
fn topological_order(names: &[String], parents: &[Option<usize>]) -> Result<Vec<usize>, CoreError> {
    let n = names.len();
    // 0 = unvisited, 1 = on the current path, 2 = placed.
    let mut state = vec![0u8; n];
    let mut order = Vec::with_capacity(n);
    for start in 0..n {
        let mut path = Vec::new();
        let mut j = start;
        loop {
            match state[j] {
                2 => break,
                1 => {
                    return Err(CoreError::Cycle {
                        joint: j,
                        name: names[j].clone(),
                    })
                }
                _ => {}
            }
            state[j] = 1;
            path.push(j);
            match parents[j] {
                Some(p) if p < n => j = p,
                Some(p) => {
                    return Err(CoreError::ParentOrder {
                        joint: j,
                        name: names[j].clone(),
                        parent: p,
                    });
                }
                None => break,
            }
        }
        for &k in path.iter().rev() {
            state[k] = 2;
            order.push(k);
        }
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("j{i}")).collect()
    }

    #[test]
    fn unordered_joints_are_sorted_parents_first() {
        // 0 -> parent 2, 1 -> root, 2 -> parent 1
        let (s, map) = Skeleton::from_unordered(
            names(3),
            vec![Some(2), None, Some(1)],
            vec![Transform::IDENTITY; 3],
            vec![Mat4::IDENTITY; 3],
        )
        .unwrap();
        assert_eq!(s.names, vec!["j1", "j2", "j0"]);
        assert_eq!(s.parents, vec![None, Some(0), Some(1)]);
        assert_eq!(map, vec![2, 0, 1]);
        s.validate().unwrap();
    }

    #[test]
    fn cycle_is_reported() {
        let err = Skeleton::from_unordered(
            names(3),
            vec![Some(2), Some(0), Some(1)],
            vec![Transform::IDENTITY; 3],
            vec![Mat4::IDENTITY; 3],
        )
        .unwrap_err();
        assert!(matches!(err, CoreError::Cycle { .. }));
    }

    #[test]
    fn world_matrices_compose_parent_first() {
        let mut s = Skeleton {
            names: names(2),
            parents: vec![None, Some(0)],
            rest_local: vec![
                Transform::from_translation(Vec3::X),
                Transform::from_translation(Vec3::Y),
            ],
            inverse_bind: vec![Mat4::IDENTITY; 2],
        };
        s.bind_to_rest();
        assert!((s.bind_positions()[1] - Vec3::new(1.0, 1.0, 0.0)).length() < 1e-6);
        assert!((s.bone_lengths()[1] - 1.0).abs() < 1e-6);
    }

    #[test]
    fn zero_length_end_sites_are_leaves_with_a_vanishing_bone() {
        // 0 -> 1 (unit bone, leaf), 0 -> 2 (bone of 1e-7 at size 1, leaf), 3 root alone.
        let mut s = Skeleton {
            names: names(4),
            parents: vec![None, Some(0), Some(0), None],
            rest_local: vec![
                Transform::IDENTITY,
                Transform::from_translation(Vec3::Y),
                Transform::from_translation(Vec3::splat(1e-7)),
                Transform::IDENTITY,
            ],
            inverse_bind: vec![],
        };
        s.bind_to_rest();
        assert_eq!(s.zero_length_end_sites(1.0), vec![false, false, true, false]);
        // Relative to the character's size: at size 1e-3 the same bone is a real one.
        assert_eq!(s.zero_length_end_sites(1e-3), vec![false; 4]);
    }
}
