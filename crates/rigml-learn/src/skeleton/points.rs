//! The point cloud the skeleton network reads: area-weighted surface samples of the mesh in
//! METRICS.md §1 units (AABB centre at the origin, longest side 1), with per-point features,
//! and the per-point training targets from a GT skeleton.
//!
//! Features (all scale-free, [`FEATURES`] per point):
//! - position (3) and outward face normal (3);
//! - thickness: distance to the opposite wall along the inward normal (BVH ray cast), × 4;
//! - for each radius in [`RADII`]: the offset from the point to the centroid of the samples
//!   within that radius, divided by the radius (3 × 3). On a limb it points towards the limb's
//!   axis; at a tip it points back along the limb; on a flat side it is small.

use crate::LearnError;
use glam::Vec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use rigml_geom::Bvh;
use std::collections::HashMap;

/// Surface samples per cloud (training and inference).
pub const POINTS: usize = 2048;
/// Features per point.
pub const FEATURES: usize = 16;
/// Targets per point: offset to the nearest joint (3), confidence (1), log joint spacing (1).
pub const TARGETS: usize = 5;
/// Neighbourhood radii of the centroid features (normalised units).
pub const RADII: [f32; 3] = [0.04, 0.08, 0.16];
/// Thickness when the inward ray finds no wall (open meshes), normalised units.
const NO_WALL: f32 = 0.5;
/// Smallest joint spacing used in the log-spacing target.
pub const MIN_SPACING: f32 = 0.005;

/// METRICS.md §1 normalisation of one mesh: `unit = (model - centre) * scale`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    pub centre: Vec3,
    pub scale: f32,
}

impl Frame {
    /// The frame of `positions` (AABB centre, 1 / longest side). Errors on empty, non-finite or
    /// flat-to-a-point input.
    pub fn of(positions: &[Vec3]) -> Result<Frame, LearnError> {
        if let Some(v) = positions.iter().position(|p| !p.is_finite()) {
            return Err(LearnError::Data(format!("vertex {v} has a non-finite position")));
        }
        let lo = positions.iter().copied().reduce(Vec3::min);
        let hi = positions.iter().copied().reduce(Vec3::max);
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return Err(LearnError::Data("the mesh has no vertices".into()));
        };
        let longest = (hi - lo).max_element();
        if !(longest > 0.0 && longest.is_finite()) {
            return Err(LearnError::Data("the mesh has no extent".into()));
        }
        Ok(Frame {
            centre: (lo + hi) * 0.5,
            scale: 1.0 / longest,
        })
    }

    pub fn to_unit(&self, p: Vec3) -> Vec3 {
        (p - self.centre) * self.scale
    }

    pub fn to_model(&self, q: Vec3) -> Vec3 {
        q / self.scale + self.centre
    }
}

/// Samples of one surface with their features, in normalised units.
#[derive(Debug, Clone, PartialEq)]
pub struct Cloud {
    pub points: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    /// `[points.len() * FEATURES]`.
    pub features: Vec<f32>,
}

/// Sample `count` points on the surface (area-weighted, `seed` decides which) and compute
/// their features. `positions` are already normalised. Triangles with an index out of range
/// or no area are skipped; a surface with no area at all is an error.
pub fn sample(positions: &[Vec3], triangles: &[[u32; 3]], count: usize, seed: u64) -> Result<Cloud, LearnError> {
    let corners = |t: &[u32; 3]| -> Option<[Vec3; 3]> {
        let get = |i: u32| positions.get(i as usize).copied().filter(|p| p.is_finite());
        Some([get(t[0])?, get(t[1])?, get(t[2])?])
    };
    let mut tris = Vec::with_capacity(triangles.len());
    let mut cumulative = Vec::with_capacity(triangles.len());
    let mut total = 0.0f64;
    for t in triangles {
        let Some(c) = corners(t) else { continue };
        let area = 0.5 * (c[1] - c[0]).cross(c[2] - c[0]).length();
        if area > 0.0 && area.is_finite() {
            total += f64::from(area);
            tris.push(c);
            cumulative.push(total);
        }
    }
    if tris.is_empty() || total <= 0.0 || count == 0 {
        return Err(LearnError::Data(
            "the mesh has no triangle with an area to sample".into(),
        ));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5ce1_e70a);
    let mut points = Vec::with_capacity(count);
    let mut normals = Vec::with_capacity(count);
    for _ in 0..count {
        let r = rng.random::<f64>() * total;
        let i = cumulative.partition_point(|&c| c < r).min(tris.len() - 1);
        let [a, b, c] = tris[i];
        let (mut u, mut v) = (rng.random::<f32>(), rng.random::<f32>());
        if u + v > 1.0 {
            (u, v) = (1.0 - u, 1.0 - v);
        }
        points.push(a + (b - a) * u + (c - a) * v);
        normals.push((b - a).cross(c - a).normalize_or(Vec3::Y));
    }
    let bvh = Bvh::new(positions, triangles);
    let thickness: Vec<(f32, bool)> = points
        .par_iter()
        .zip(normals.par_iter())
        .map(|(&p, &n)| wall(&bvh, p, n))
        .collect();
    for (n, (_, flip)) in normals.iter_mut().zip(&thickness) {
        if *flip {
            *n = -*n;
        }
    }
    let grid = PointGrid::new(&points, RADII[RADII.len() - 1]);
    let features: Vec<f32> = (0..count)
        .into_par_iter()
        .flat_map_iter(|i| {
            let p = points[i];
            let n = normals[i];
            let mut f = [0.0f32; FEATURES];
            f[..3].copy_from_slice(&p.to_array());
            f[3..6].copy_from_slice(&n.to_array());
            f[6] = 4.0 * thickness[i].0;
            let mut sums = [(Vec3::ZERO, 0u32); RADII.len()];
            grid.for_near(p, |q| {
                let d = q.distance(p);
                for (r, s) in RADII.iter().zip(sums.iter_mut()) {
                    if d <= *r {
                        s.0 += q;
                        s.1 += 1;
                    }
                }
            });
            for (k, (r, (sum, n))) in RADII.iter().zip(sums).enumerate() {
                let offset = if n > 0 { (sum / n as f32 - p) / *r } else { Vec3::ZERO };
                f[7 + 3 * k..10 + 3 * k].copy_from_slice(&offset.to_array());
            }
            f
        })
        .collect();
    Ok(Cloud {
        points,
        normals,
        features,
    })
}

/// Thickness at `p` with outward normal `n`: distance to the first wall along `-n`; when that
/// ray finds nothing but `+n` does, the normal points inwards (returned flag: flip it).
fn wall(bvh: &Bvh, p: Vec3, n: Vec3) -> (f32, bool) {
    let eps = 1e-4;
    if let Some(hit) = bvh.first_hit(p - n * eps, -n, eps, 2.0) {
        return (hit.t.min(NO_WALL), false);
    }
    match bvh.first_hit(p + n * eps, n, eps, 2.0) {
        Some(hit) => (hit.t.min(NO_WALL), true),
        None => (NO_WALL, false),
    }
}

/// Uniform hash grid over points for radius queries (cell = the largest radius).
pub struct PointGrid<'a> {
    points: &'a [Vec3],
    cell: f32,
    cells: HashMap<[i32; 3], Vec<u32>>,
}

impl<'a> PointGrid<'a> {
    pub fn new(points: &'a [Vec3], cell: f32) -> PointGrid<'a> {
        let cell = if cell > 0.0 && cell.is_finite() { cell } else { 1.0 };
        let mut cells: HashMap<[i32; 3], Vec<u32>> = HashMap::new();
        for (i, p) in points.iter().enumerate() {
            cells.entry(Self::key(*p, cell)).or_default().push(i as u32);
        }
        PointGrid { points, cell, cells }
    }

    fn key(p: Vec3, cell: f32) -> [i32; 3] {
        (p / cell).floor().to_array().map(|x| x.clamp(-1e6, 1e6) as i32)
    }

    /// Call `f` with every point in the 27 cells around `p` (all points within `cell`, and some
    /// further).
    pub fn for_near(&self, p: Vec3, mut f: impl FnMut(Vec3)) {
        self.for_near_index(p, |i| f(self.points[i]));
    }

    /// [`PointGrid::for_near`] with point indices.
    pub fn for_near_index(&self, p: Vec3, mut f: impl FnMut(usize)) {
        let k = Self::key(p, self.cell);
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    if let Some(list) = self.cells.get(&[k[0] + dx, k[1] + dy, k[2] + dz]) {
                        list.iter().for_each(|&i| f(i as usize));
                    }
                }
            }
        }
    }
}

/// Distinct joint positions (closer than 1e-6 merged, as the evaluation does).
pub fn distinct(joints: &[Vec3]) -> Vec<Vec3> {
    let mut out: Vec<Vec3> = Vec::new();
    for j in joints.iter().filter(|p| p.is_finite()) {
        if !out.iter().any(|o| o.distance(*j) < 1e-6) {
            out.push(*j);
        }
    }
    out
}

/// Per-point targets `[n * TARGETS]` for `joints` (normalised units): offset to the nearest
/// joint, confidence `(d2 - d1) / (d2 + d1)` (1 when the nearest joint is unambiguous, 0 midway
/// between two), and `ln` of the nearest joint's distance to its own nearest joint.
pub fn targets(points: &[Vec3], joints: &[Vec3]) -> Result<Vec<f32>, LearnError> {
    let joints = distinct(joints);
    if joints.is_empty() {
        return Err(LearnError::Data("the skeleton has no joints".into()));
    }
    let spacing: Vec<f32> = joints
        .iter()
        .enumerate()
        .map(|(j, a)| {
            joints
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != j)
                .map(|(_, b)| a.distance(*b))
                .fold(f32::INFINITY, f32::min)
        })
        .map(|s| if s.is_finite() { s.max(MIN_SPACING) } else { 0.5 })
        .collect();
    let mut out = Vec::with_capacity(points.len() * TARGETS);
    for p in points {
        let (mut j1, mut d1, mut d2) = (0usize, f32::INFINITY, f32::INFINITY);
        for (j, q) in joints.iter().enumerate() {
            let d = p.distance(*q);
            if d < d1 {
                d2 = d1;
                (j1, d1) = (j, d);
            } else if d < d2 {
                d2 = d;
            }
        }
        let offset = joints[j1] - *p;
        let confidence = if d2.is_finite() {
            (d2 - d1) / (d2 + d1).max(1e-9)
        } else {
            1.0
        };
        out.extend_from_slice(&[offset.x, offset.y, offset.z, confidence, spacing[j1].ln()]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_lie_on_the_surface_with_outward_normals_and_thickness() {
        let (p, t) = rigml_geom::procedural::cuboid(Vec3::new(-0.5, -0.1, -0.1), Vec3::new(0.5, 0.1, 0.1));
        let cloud = sample(&p, &t, 500, 3).unwrap();
        assert_eq!(cloud.features.len(), 500 * FEATURES);
        for (i, (q, n)) in cloud.points.iter().zip(&cloud.normals).enumerate() {
            assert!(q.x.abs() <= 0.5 + 1e-5 && q.y.abs() <= 0.1 + 1e-5 && q.z.abs() <= 0.1 + 1e-5);
            // Outward: the normal points away from the centre along its axis.
            assert!(n.dot(*q) > 0.0, "point {q} normal {n}");
            let thickness = cloud.features[i * FEATURES + 6] / 4.0;
            assert!(thickness > 0.0 && thickness <= 1.0 + 1e-4, "{thickness}");
        }
        // Same seed, same cloud; another seed, another one.
        assert_eq!(sample(&p, &t, 500, 3).unwrap(), cloud);
        assert_ne!(sample(&p, &t, 500, 4).unwrap().points, cloud.points);
    }

    #[test]
    fn targets_point_at_the_nearest_joint() {
        let joints = [Vec3::ZERO, Vec3::X, Vec3::X];
        let t = targets(&[Vec3::new(0.9, 0.1, 0.0), Vec3::new(0.5, 0.0, 0.0)], &joints).unwrap();
        assert!((Vec3::new(t[0], t[1], t[2]) - Vec3::new(0.1, -0.1, 0.0)).length() < 1e-6);
        assert!(t[3] > 0.5);
        assert!(t[8].abs() < 1e-6, "midway: confidence {}", t[8]);
        assert!((t[4] - 1.0f32.ln()).abs() < 1e-6);
        assert!(targets(&[Vec3::ZERO], &[]).is_err());
    }

    #[test]
    fn surfaces_without_area_are_refused() {
        let p = vec![Vec3::ZERO, Vec3::X, Vec3::new(2.0, 0.0, 0.0)];
        assert!(sample(&p, &[[0, 1, 2]], 10, 1).is_err());
        assert!(sample(&p, &[[0, 1, 7]], 10, 1).is_err());
        assert!(Frame::of(&[Vec3::ONE, Vec3::ONE]).is_err());
        assert!(Frame::of(&[Vec3::NAN]).is_err());
    }
}
