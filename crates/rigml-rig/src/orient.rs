//! Which way a character stands: its up axis, the direction it faces, and its left/right
//! mirror plane, found from the shape alone.
//!
//! Files disagree on conventions (glTF is Y-up facing +Z, but FBX2glTF and COLLADA exports keep
//! the mesh Z-up facing -Y in their bind space), so nothing is assumed: the three axes are
//! read off a coarse solid voxelisation, as axis-aligned candidates, by three tests:
//! - **depth** (front-back) is the thinnest side of the bounds;
//! - **lateral** (left-right) is the remaining axis whose mid-plane mirrors the solid best;
//! - **up** is the last axis; its sign puts the end where two separate blobs (feet) stand left
//!   and right of the mirror plane at the bottom;
//! - **forward** is the depth side the feet reach further out to (toes point forward).
//!
//! Signs that the tests cannot decide keep the file's positive axis (glTF: +Y up, +Z forward).

use crate::RigError;
use glam::Vec3;
use rigml_geom::{Cell, VoxelGrid};

/// Resolution (voxels along the longest side) of the grid the orientation is read from.
const RESOLUTION: usize = 64;

/// A character's frame: `left = up × forward`, so `(left, up, forward)` is right-handed, and a
/// character standing in a glTF file facing +Z has `left = +X`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Orientation {
    /// The character's left (unit, model space).
    pub left: Vec3,
    /// Up (unit, model space).
    pub up: Vec3,
    /// The direction the character faces (unit, model space).
    pub forward: Vec3,
    /// Model-space point on the mirror plane (the AABB centre).
    pub centre: Vec3,
    /// Share of solid voxels whose mirror image across the left/right plane is solid too
    /// (1 = perfectly symmetric).
    pub symmetry: f32,
    /// The same share for the plane across the depth (front-back) axis. A standing humanoid
    /// mirrors itself left to right far better than front to back; a four-legged body, whose
    /// thinnest side is its width, mirrors itself best across that side.
    pub depth_symmetry: f32,
    /// Evidence for the up sign: how many bottom slices show two feet beside the mirror plane,
    /// minus how many top slices do (the sign was taken from the file when this is 0).
    pub feet_evidence: i32,
}

impl Orientation {
    /// Model-space point -> character coordinates `(left, up, forward)` about [`Self::centre`].
    pub fn to_local(&self, p: Vec3) -> Vec3 {
        let d = p - self.centre;
        Vec3::new(d.dot(self.left), d.dot(self.up), d.dot(self.forward))
    }

    /// Character coordinates -> model space (inverse of [`Self::to_local`]).
    pub fn to_model(&self, q: Vec3) -> Vec3 {
        self.centre + self.left * q.x + self.up * q.y + self.forward * q.z
    }
}

/// Find the orientation of a standing, roughly symmetric character.
pub fn detect(positions: &[Vec3], triangles: &[[u32; 3]]) -> Result<Orientation, RigError> {
    let grid = VoxelGrid::new(positions, triangles, RESOLUTION).ok_or(RigError::EmptyMesh)?;
    let (lo, hi) = bounds(positions).ok_or(RigError::EmptyMesh)?;
    let centre = (lo + hi) * 0.5;
    let extent = hi - lo;
    if extent.max_element() <= 0.0 {
        return Err(RigError::Degenerate);
    }
    let solid: Vec<Vec3> = grid
        .cells
        .iter()
        .enumerate()
        .filter(|(_, c)| **c != Cell::Exterior)
        .map(|(i, _)| grid.center(grid.coords(i)))
        .collect();
    let occupied = |p: Vec3| {
        grid.cell_of(p)
            .is_some_and(|c| grid.cells.get(grid.index(c)).is_some_and(|&k| k != Cell::Exterior))
    };
    // Depth: thinnest side. Lateral: best mirror of the other two.
    let depth = (0..3).min_by(|&a, &b| extent[a].total_cmp(&extent[b])).unwrap_or(2);
    let others: Vec<usize> = (0..3).filter(|&a| a != depth).collect();
    let mirror = |axis: usize| -> f32 {
        if solid.is_empty() {
            return 0.0;
        }
        let hits = solid
            .iter()
            .filter(|p| {
                let mut m = **p;
                m[axis] = 2.0 * centre[axis] - m[axis];
                occupied(m)
            })
            .count();
        hits as f32 / solid.len() as f32
    };
    let scores: Vec<f32> = others.iter().map(|&a| mirror(a)).collect();
    let (lateral, up_axis, symmetry) = match (others.as_slice(), scores.as_slice()) {
        ([a, b], [sa, sb]) if sa >= sb => (*a, *b, *sa),
        ([a, b], [_, sb]) => (*b, *a, *sb),
        _ => (0, 1, 0.0),
    };
    let depth_symmetry = mirror(depth);
    let unit = |axis: usize| Vec3::AXES[axis];
    // Up sign: slices near each end of the up axis; feet are two blobs beside the mirror plane.
    let feet = |sign: f32| -> i32 {
        [0.02, 0.05, 0.08, 0.12]
            .iter()
            .filter(|&&t| {
                let level = if sign > 0.0 {
                    lo[up_axis] + t * extent[up_axis]
                } else {
                    hi[up_axis] - t * extent[up_axis]
                };
                two_blobs(
                    &solid,
                    up_axis,
                    level,
                    grid.size,
                    lateral,
                    centre[lateral],
                    extent[lateral],
                )
            })
            .count() as i32
    };
    let feet_evidence = feet(1.0) - feet(-1.0);
    let up_sign = if feet_evidence < 0 { -1.0 } else { 1.0 };
    let up = unit(up_axis) * up_sign;
    // Forward: the lowest slab (the feet) reaches further forward than the shins above it.
    let height = extent[up_axis];
    let level = |p: &Vec3| (p[up_axis] - centre[up_axis]) * up_sign + 0.5 * height;
    let mean_depth = |from: f32, to: f32| -> Option<f32> {
        let (sum, n) = solid
            .iter()
            .filter(|p| (from * height..to * height).contains(&level(p)))
            .fold((0.0f32, 0usize), |(s, n), p| (s + p[depth], n + 1));
        (n > 0).then(|| sum / n as f32)
    };
    let toes = mean_depth(0.0, 0.04)
        .zip(mean_depth(0.1, 0.2))
        .map(|(feet, shins)| feet - shins)
        .unwrap_or(0.0);
    let forward_sign = if toes.abs() > 0.01 * extent[depth].max(grid.size) {
        toes.signum()
    } else if up_axis == 2 {
        // Z-up exports (Blender convention) face -Y.
        -1.0
    } else {
        1.0
    };
    let forward = unit(depth) * forward_sign;
    let left = up.cross(forward);
    Ok(Orientation {
        left,
        up,
        forward,
        centre,
        symmetry,
        depth_symmetry,
        feet_evidence,
    })
}

/// True when the voxels in the slab at `level` (one voxel thick along `up_axis`) form two
/// groups along `lateral`: some left and some right of the mirror plane, none near it.
fn two_blobs(solid: &[Vec3], up_axis: usize, level: f32, size: f32, lateral: usize, mid: f32, width: f32) -> bool {
    let slab = solid.iter().filter(|p| (p[up_axis] - level).abs() <= 0.5 * size);
    let gap = (0.02 * width).max(0.75 * size);
    let (mut left, mut right, mut middle) = (0usize, 0usize, 0usize);
    for p in slab {
        let x = p[lateral] - mid;
        if x.abs() <= gap {
            middle += 1;
        } else if x > 0.0 {
            left += 1;
        } else {
            right += 1;
        }
    }
    middle == 0 && left > 0 && right > 0
}

/// Axis-aligned bounds of the finite positions.
pub(crate) fn bounds(positions: &[Vec3]) -> Option<(Vec3, Vec3)> {
    let mut finite = positions.iter().copied().filter(|p| p.is_finite());
    let first = finite.next()?;
    Some(finite.fold((first, first), |(lo, hi), p| (lo.min(p), hi.max(p))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two legs, a torso, a head: a crude figure standing on +Y, toes toward +Z.
    fn figure() -> (Vec<Vec3>, Vec<[u32; 3]>) {
        let mut positions = Vec::new();
        let mut triangles = Vec::new();
        let mut add_box = |lo: Vec3, hi: Vec3| {
            rigml_geom::procedural::append_cuboid(&mut positions, &mut triangles, lo, hi);
        };
        add_box(Vec3::new(0.05, 0.0, -0.05), Vec3::new(0.15, 0.05, 0.15)); // left foot
        add_box(Vec3::new(-0.15, 0.0, -0.05), Vec3::new(-0.05, 0.05, 0.15)); // right foot
        add_box(Vec3::new(0.05, 0.05, -0.05), Vec3::new(0.15, 0.8, 0.05)); // left leg
        add_box(Vec3::new(-0.15, 0.05, -0.05), Vec3::new(-0.05, 0.8, 0.05)); // right leg
        add_box(Vec3::new(-0.2, 0.8, -0.08), Vec3::new(0.2, 1.4, 0.08)); // torso
        add_box(Vec3::new(-0.7, 1.3, -0.04), Vec3::new(0.7, 1.38, 0.04)); // arms
        add_box(Vec3::new(-0.1, 1.4, -0.1), Vec3::new(0.1, 1.7, 0.1)); // head
        (positions, triangles)
    }

    #[test]
    fn a_y_up_figure_faces_its_toes_and_has_left_on_plus_x() {
        let (p, t) = figure();
        let o = detect(&p, &t).unwrap();
        assert_eq!(o.up, Vec3::Y);
        assert_eq!(o.forward, Vec3::Z);
        assert_eq!(o.left, Vec3::X);
        assert!(o.symmetry > 0.95, "{}", o.symmetry);
        assert!(
            o.depth_symmetry < o.symmetry - 0.1,
            "{} vs {}",
            o.depth_symmetry,
            o.symmetry
        );
        assert!(o.feet_evidence > 0);
    }

    #[test]
    fn a_figure_turned_z_up_and_upside_down_is_found() {
        let (p, t) = figure();
        // Y-up -> Z-up facing -Y (Blender export), then a copy standing on its head.
        let z_up: Vec<Vec3> = p.iter().map(|v| Vec3::new(v.x, -v.z, v.y)).collect();
        let o = detect(&z_up, &t).unwrap();
        assert_eq!((o.up, o.forward, o.left), (Vec3::Z, -Vec3::Y, Vec3::X));
        let flipped: Vec<Vec3> = p.iter().map(|v| Vec3::new(-v.x, -v.y, v.z)).collect();
        let o = detect(&flipped, &t).unwrap();
        assert_eq!((o.up, o.forward, o.left), (-Vec3::Y, Vec3::Z, -Vec3::X));
        let q = o.to_local(flipped[0]);
        assert!((o.to_model(q) - flipped[0]).length() < 1e-5);
    }
}
