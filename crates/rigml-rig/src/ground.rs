//! The ground root: a control joint above the placed skeleton's root, where game engines and
//! DCC tools expect a character's root (Unreal's and KayKit's `root`, the Quaternius rigs'
//! `Root` or `Body`). It carries no skin weight; animators key root motion on it, and the
//! body's root (the hips) keeps its own translation.
//!
//! It goes at the model's origin, the pivot the modeller chose: game characters keep it on the
//! floor between the feet, swimming and flying ones at the body's centre. A mesh whose origin
//! lies outside its own bounds (a scan, a part cut out of a scene) gets the point on the floor
//! under the centre of its bounds instead. The general template raises a four-legged shape's
//! root to where artists put it ([`crate::curve::legs::ROOT_HEIGHT`]).

use crate::PlacedSkeleton;
use glam::Vec3;

/// Name of the ground root.
pub const GROUND_ROOT: &str = "root";

/// How far outside the mesh's bounds, as a fraction of their longest side, the origin may lie
/// and still be used.
pub const ORIGIN_MARGIN: f32 = 0.05;

/// Where the ground root of a mesh with these vertex `positions` goes, `up` being the unit
/// direction the character stands along (module docs). `None` without a finite vertex.
pub fn ground_point(positions: &[Vec3], up: Vec3) -> Option<Vec3> {
    let (lo, hi) = crate::orient::bounds(positions)?;
    let floor = positions
        .iter()
        .filter(|p| p.is_finite())
        .map(|p| p.dot(up))
        .fold(f32::INFINITY, f32::min);
    Some(ground_point_in(lo, hi, up, floor))
}

/// [`ground_point`] for a mesh whose bounds are `lo..hi` and whose lowest point along `up` is
/// at `floor` (`p · up`).
pub fn ground_point_in(lo: Vec3, hi: Vec3, up: Vec3, floor: f32) -> Vec3 {
    let margin = Vec3::splat(ORIGIN_MARGIN * (hi - lo).max_element());
    if Vec3::ZERO.cmpge(lo - margin).all() && Vec3::ZERO.cmple(hi + margin).all() {
        return Vec3::ZERO;
    }
    let centre = (lo + hi) * 0.5;
    centre - up * (centre.dot(up) - floor)
}

/// Put a ground root named [`GROUND_ROOT`] at `at` above every root of `placed`, as joint 0
/// (parents stay listed before their children). A joint already named so is renamed `body`,
/// keeping names unique.
pub fn add_ground_root(placed: &mut PlacedSkeleton, at: Vec3) {
    for name in &mut placed.names {
        if name == GROUND_ROOT {
            *name = "body".into();
        }
    }
    placed.names.insert(0, GROUND_ROOT.into());
    placed.heads.insert(0, at);
    placed.parents = std::iter::once(None)
        .chain(placed.parents.iter().map(|p| Some(p.map_or(0, |p| p + 1))))
        .collect();
}

/// Whether joint `joint` of a skeleton with these `names` and `parents` is a ground root: a
/// root named [`GROUND_ROOT`] with children.
pub fn is_ground_root(names: &[String], parents: &[Option<usize>], joint: usize) -> bool {
    names.get(joint).is_some_and(|n| n == GROUND_ROOT)
        && parents.get(joint).is_some_and(Option::is_none)
        && parents.contains(&Some(joint))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn box_at(lo: Vec3, hi: Vec3) -> Vec<Vec3> {
        vec![lo, hi, Vec3::new(lo.x, hi.y, lo.z)]
    }

    #[test]
    fn the_origin_when_inside_the_bounds() {
        let standing = box_at(Vec3::new(-0.3, 0.0, -0.2), Vec3::new(0.3, 1.8, 0.2));
        assert_eq!(ground_point(&standing, Vec3::Y), Some(Vec3::ZERO));
        // Just below the feet, within the margin.
        let raised = box_at(Vec3::new(-0.3, 0.05, -0.2), Vec3::new(0.3, 1.8, 0.2));
        assert_eq!(ground_point(&raised, Vec3::Y), Some(Vec3::ZERO));
    }

    #[test]
    fn under_the_centre_when_the_origin_is_far() {
        let far = box_at(Vec3::new(9.0, 2.0, -1.0), Vec3::new(11.0, 4.0, 1.0));
        assert_eq!(ground_point(&far, Vec3::Y), Some(Vec3::new(10.0, 2.0, 0.0)));
        // Z up.
        assert_eq!(ground_point(&far, Vec3::Z), Some(Vec3::new(10.0, 3.0, -1.0)));
        assert_eq!(ground_point(&[], Vec3::Y), None);
        assert_eq!(ground_point(&[Vec3::NAN], Vec3::Y), None);
    }

    #[test]
    fn the_ground_root_goes_above_the_placed_root() {
        let mut placed = PlacedSkeleton {
            names: vec!["root".into(), "spine".into(), "tail".into()],
            parents: vec![None, Some(0), Some(0)],
            heads: vec![Vec3::Y, Vec3::new(0.0, 1.5, 0.0), Vec3::new(0.0, 1.0, -1.0)],
            forward: Vec3::Z,
        };
        add_ground_root(&mut placed, Vec3::ZERO);
        assert_eq!(placed.names, ["root", "body", "spine", "tail"]);
        assert_eq!(placed.parents, [None, Some(0), Some(1), Some(1)]);
        assert_eq!(placed.heads[0], Vec3::ZERO);
        assert_eq!(placed.heads[1], Vec3::Y);
        placed.validate().unwrap();
        assert!(is_ground_root(&placed.names, &placed.parents, 0));
        assert!(!is_ground_root(&placed.names, &placed.parents, 1));
        // A lone joint named root is not one: it has nothing to carry.
        assert!(!is_ground_root(&["root".into()], &[None], 0));
    }
}
