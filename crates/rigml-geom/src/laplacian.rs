//! The cotangent Laplacian of a triangle mesh, made safe for production meshes.
//!
//! `L f (i) = sum_j w_ij (f_i - f_j)` with `w_ij = (cot α_ij + cot β_ij) / 2`, the P1 finite
//! element stiffness matrix. Two departures from the textbook form keep it usable as the
//! matrix of a Cholesky solve on any input:
//! - **Non-manifold edges** (shared by more than two triangles) have their summed weight scaled
//!   by `2 / face count`, as Blender's `meshlaplacian.cc` does, so a fan of faces does not act as
//!   a very stiff edge.
//! - **Negative or huge cotangents are clamped** to `[0, COT_MAX]`. With non-negative
//!   off-diagonals the matrix is an M-matrix: `L + D` with a positive diagonal `D` is positive
//!   definite, and the solved weights obey a maximum principle (they stay in `[0, 1]`). Obtuse
//!   and sliver triangles otherwise give negative weights that can make the system indefinite.
//!   Degenerate (zero-area) triangles contribute nothing.

use glam::DVec3;
use glam::Vec3;

/// Largest cotangent kept (an angle of about 0.06 degrees).
pub const COT_MAX: f64 = 1e3;

/// Edge weights and lumped vertex areas of a triangle mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct CotLaplacian {
    /// `(i, j, w_ij)` with `i < j`, each edge once, weights `>= 0`.
    pub edges: Vec<(u32, u32, f64)>,
    /// Lumped (barycentric) area of every vertex: a third of its triangles' areas.
    pub areas: Vec<f64>,
    /// Number of edges with more than two faces.
    pub non_manifold_edges: usize,
    /// Number of triangles skipped as degenerate.
    pub degenerate_triangles: usize,
}

impl CotLaplacian {
    /// Build from positions and triangles; triangles with a corner out of range are skipped
    /// (counted as degenerate).
    pub fn new(positions: &[Vec3], triangles: &[[u32; 3]]) -> CotLaplacian {
        let n = positions.len();
        let mut areas = vec![0.0f64; n];
        let mut half_edges: Vec<(u32, u32, f64)> = Vec::with_capacity(triangles.len() * 3);
        let mut degenerate = 0;
        for t in triangles {
            if t.iter().any(|&i| i as usize >= n) || t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
                degenerate += 1;
                continue;
            }
            let p = t.map(|i| positions[i as usize].as_dvec3());
            let cross = (p[1] - p[0]).cross(p[2] - p[0]);
            let double_area = cross.length();
            let longest = (0..3)
                .map(|k| (p[(k + 1) % 3] - p[k]).length_squared())
                .fold(0.0, f64::max);
            if !double_area.is_finite() || double_area <= 1e-12 * longest || longest == 0.0 {
                degenerate += 1;
                continue;
            }
            for k in 0..3 {
                areas[t[k] as usize] += double_area / 6.0;
                let (a, b) = (t[(k + 1) % 3], t[(k + 2) % 3]);
                let cot = cotangent(p[k], p[(k + 1) % 3], p[(k + 2) % 3], double_area);
                half_edges.push((a.min(b), a.max(b), 0.5 * cot));
            }
        }
        half_edges.sort_unstable_by_key(|e| (e.0, e.1));
        let mut edges = Vec::with_capacity(half_edges.len() / 2 + 1);
        let mut non_manifold = 0;
        let mut k = 0;
        while k < half_edges.len() {
            let (i, j, _) = half_edges[k];
            let mut sum = 0.0;
            let mut count = 0;
            while k < half_edges.len() && half_edges[k].0 == i && half_edges[k].1 == j {
                sum += half_edges[k].2;
                count += 1;
                k += 1;
            }
            if count > 2 {
                non_manifold += 1;
                sum *= 2.0 / count as f64;
            }
            edges.push((i, j, sum));
        }
        CotLaplacian {
            edges,
            areas,
            non_manifold_edges: non_manifold,
            degenerate_triangles: degenerate,
        }
    }
}

/// Cotangent of the angle at `corner` between the edges to `a` and `b`, clamped to
/// `[0, COT_MAX]`.
fn cotangent(corner: DVec3, a: DVec3, b: DVec3, double_area: f64) -> f64 {
    let cot = (a - corner).dot(b - corner) / double_area;
    if cot.is_finite() {
        cot.clamp(0.0, COT_MAX)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn right_triangle_weights_and_areas() {
        // Right angle at vertex 0: the hypotenuse 1-2 has cot(90°)/2 = 0, legs cot(45°)/2 = 0.5.
        let p = vec![Vec3::ZERO, Vec3::X, Vec3::Y];
        let l = CotLaplacian::new(&p, &[[0, 1, 2]]);
        let w = |i, j| l.edges.iter().find(|e| e.0 == i && e.1 == j).unwrap().2;
        assert!((w(0, 1) - 0.5).abs() < 1e-9);
        assert!((w(0, 2) - 0.5).abs() < 1e-9);
        assert!(w(1, 2).abs() < 1e-9);
        assert!((l.areas.iter().sum::<f64>() - 0.5).abs() < 1e-9);
    }

    #[test]
    fn non_manifold_and_degenerate_faces_are_tamed() {
        // Three faces on edge 0-1 (a fin), one zero-area face, one obtuse face.
        let p = vec![
            Vec3::ZERO,
            Vec3::X,
            Vec3::new(0.5, 1.0, 0.0),
            Vec3::new(0.5, -1.0, 0.0),
            Vec3::new(0.5, 0.0, 1.0),
            Vec3::new(2.0, 0.0, 0.0),
            Vec3::new(0.5, 0.01, 0.0),
        ];
        let tris = [[0, 1, 2], [1, 0, 3], [0, 1, 4], [0, 1, 5], [0, 6, 1]];
        let l = CotLaplacian::new(&p, &tris);
        assert_eq!(l.non_manifold_edges, 1);
        assert_eq!(l.degenerate_triangles, 1);
        assert!(l.edges.iter().all(|e| e.2 >= 0.0 && e.2.is_finite()));
        assert!(l.edges.iter().all(|e| e.0 < e.1));
    }
}
