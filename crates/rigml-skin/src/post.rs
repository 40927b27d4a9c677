//! What every solver shares: the prepared (welded, normalised) mesh before solving, and the
//! post-processing after it (island/zero-row fallback, smoothing, threshold, then pruning and
//! normalisation by [`rigml_core::Skin`]).
//!
//! Solvers compute one raw row per **welded** vertex (coincident source vertices share a row,
//! so UV seams cannot tear the weights apart); [`finish`] maps rows back to source vertices.

use crate::{Bones, SkinError, SolveOptions};
use glam::Vec3;
use rayon::prelude::*;
use rigml_core::{Mesh, Skeleton, Skin};
use rigml_geom::{segment_distance, Adjacency, Welded};

/// Welding tolerance in normalised units (longest AABB side = 1).
pub const WELD_TOLERANCE: f32 = 1e-6;

/// Distances below this (normalised units) are clamped, as Blender's `DISTANCE_EPSILON`.
pub const DISTANCE_EPSILON: f32 = 1e-4;

/// One raw weight row: `(joint, weight)` pairs, any order, not normalised.
pub type Row = Vec<(u32, f32)>;

/// A mesh and skeleton made ready for solving.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The mesh with coincident vertices merged, positions in normalised units:
    /// `(p - center) / scale`.
    pub welded: Welded,
    /// One-ring adjacency of the welded triangles.
    pub adjacency: Adjacency,
    /// Bone segments, in the same normalised units.
    pub bones: Bones,
    /// Length mapped to 1 (longest AABB side of the source mesh).
    pub scale: f32,
    pub center: Vec3,
    /// Source vertex count.
    pub vertex_count: usize,
}

impl Prepared {
    /// Validate, normalise and weld. Errors on an empty mesh, a skeleton without joints, or
    /// invalid mesh/skeleton data.
    pub fn new(mesh: &Mesh, skeleton: &Skeleton) -> Result<Prepared, SkinError> {
        Prepared::with_tails(mesh, skeleton, None)
    }

    /// [`Prepared::new`] with the solve's explicit bone tails, if any ([`Bones::with_tails`]).
    pub fn for_solve(mesh: &Mesh, skeleton: &Skeleton, options: &SolveOptions) -> Result<Prepared, SkinError> {
        Prepared::with_tails(mesh, skeleton, options.tails.as_deref())
    }

    /// [`Prepared::new`] with explicit bone tails (`None`: derived from the joints).
    pub fn with_tails(mesh: &Mesh, skeleton: &Skeleton, tails: Option<&[Vec3]>) -> Result<Prepared, SkinError> {
        if mesh.is_empty() {
            return Err(SkinError::EmptyMesh);
        }
        if skeleton.is_empty() {
            return Err(SkinError::NoJoints);
        }
        mesh.validate()?;
        let (lo, hi) = mesh.bounds().ok_or(SkinError::EmptyMesh)?;
        let center = (lo + hi) * 0.5;
        let longest = (hi - lo).max_element();
        // A mesh collapsed to a point still has a meaningful nearest bone.
        let scale = if longest > 0.0 && longest.is_finite() {
            longest
        } else {
            1.0
        };
        let positions: Vec<Vec3> = mesh.positions.iter().map(|&p| (p - center) / scale).collect();
        let welded = Welded::new(&positions, &mesh.triangles, WELD_TOLERANCE);
        let adjacency = Adjacency::from_triangles(welded.vertex_count(), &welded.triangles);
        let mut bones = Bones::with_tails(skeleton, scale, tails)?;
        for b in &mut bones.segments {
            b.a = (b.a - center) / scale;
            b.b = (b.b - center) / scale;
        }
        if bones.segments.is_empty() {
            return Err(SkinError::Failed {
                solver: "bones",
                problem: "every joint is a zero-length end-site; no bone can take weight".into(),
            });
        }
        Ok(Prepared {
            welded,
            adjacency,
            bones,
            scale,
            center,
            vertex_count: mesh.vertex_count(),
        })
    }

    /// Per joint, the distance from `p` to its nearest segment (`f32::INFINITY` for joints
    /// without segments), written into `out` (length = joint count).
    pub fn joint_distances(&self, p: Vec3, out: &mut [f32]) {
        out.fill(f32::INFINITY);
        for b in &self.bones.segments {
            if let Some(d) = out.get_mut(b.joint as usize) {
                *d = d.min(segment_distance(p, b.a, b.b));
            }
        }
    }

    /// The row binding `p` rigidly to its nearest bone (ties shared equally).
    pub fn nearest_row(&self, p: Vec3) -> Row {
        let mut d = vec![f32::INFINITY; self.bones.joint_count];
        self.joint_distances(p, &mut d);
        let best = d.iter().copied().fold(f32::INFINITY, f32::min);
        let limit = best.max(DISTANCE_EPSILON) * (1.0 + 1e-4);
        d.iter()
            .enumerate()
            .filter(|(_, &dj)| dj <= limit)
            .map(|(j, _)| (j as u32, 1.0))
            .collect()
    }
}

/// Turn raw rows (one per welded vertex) into a validated [`Skin`] over the source vertices:
/// 1. rows with no usable weight get their nearest bone (islands no bone reached, NaNs);
/// 2. `options.smooth_iterations` rounds of one-ring smoothing;
/// 3. influences below `options.min_weight` of the row are dropped (the heaviest stays);
/// 4. mapped to source vertices and pruned/normalised by [`Skin::from_rows`].
pub fn finish(prep: &Prepared, mut rows: Vec<Row>, options: &SolveOptions) -> Result<Skin, SkinError> {
    if rows.len() != prep.welded.vertex_count() {
        return Err(SkinError::Failed {
            solver: "post",
            problem: format!("{} rows for {} welded vertices", rows.len(), prep.welded.vertex_count()),
        });
    }
    let joint_count = prep.bones.joint_count;
    rows.par_iter_mut().enumerate().for_each(|(v, row)| {
        row.retain(|&(j, w)| w.is_finite() && w > 0.0 && (j as usize) < joint_count && !prep.bones.ignored[j as usize]);
        if row.iter().map(|e| e.1).sum::<f32>() < 1e-8 {
            *row = prep.nearest_row(prep.welded.positions[v]);
        }
        normalise(row);
    });
    let strength = options.smooth_strength.clamp(0.0, 1.0);
    for _ in 0..options.smooth_iterations {
        if strength == 0.0 {
            break;
        }
        rows = smooth_once(&rows, &prep.adjacency, strength);
    }
    let cap_before_threshold = options.max_influences.max(1) * 2;
    rows.par_iter_mut().for_each(|row| {
        row.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        row.truncate(cap_before_threshold);
        let heaviest = row.first().map_or(0.0, |e| e.1);
        let sum: f32 = row.iter().map(|e| e.1).sum();
        row.retain(|e| e.1 >= heaviest || e.1 >= options.min_weight * sum);
    });
    let skin = Skin::from_rows(
        prep.welded.map.iter().map(|&w| rows[w as usize].as_slice()),
        joint_count,
        options.max_influences,
    )?;
    Ok(skin)
}

/// Scale a row to sum 1 (a row summing to 0 is left alone).
fn normalise(row: &mut Row) {
    let sum: f32 = row.iter().map(|e| e.1).sum();
    if sum > 0.0 {
        row.iter_mut().for_each(|e| e.1 /= sum);
    }
}

/// One round of `w_v <- (1 - s) w_v + s * mean(w_u for u in ring(v))`.
fn smooth_once(rows: &[Row], adjacency: &Adjacency, strength: f32) -> Vec<Row> {
    (0..rows.len())
        .into_par_iter()
        .map(|v| {
            let ring = adjacency.neighbors(v);
            let mut out: Row = rows[v].iter().map(|&(j, w)| (j, w * (1.0 - strength))).collect();
            if ring.is_empty() {
                return rows[v].clone();
            }
            let share = strength / ring.len() as f32;
            for &u in ring {
                for &(j, w) in &rows[u as usize] {
                    match out.iter_mut().find(|e| e.0 == j) {
                        Some(e) => e.1 += w * share,
                        None => out.push((j, w * share)),
                    }
                }
            }
            out
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic;

    #[test]
    fn empty_rows_fall_back_to_the_nearest_bone_and_rows_are_capped() {
        let (mesh, skeleton) = synthetic::tube_chain(3, 8, 6, 0.2, 1.0);
        let prep = Prepared::new(&mesh, &skeleton).unwrap();
        let n = prep.welded.vertex_count();
        let mut rows: Vec<Row> = vec![Vec::new(); n];
        rows[0] = vec![(0, f32::NAN)];
        rows[1] = (0..4).map(|j| (j, 1.0)).collect();
        let options = SolveOptions {
            max_influences: 2,
            smooth_iterations: 0,
            ..Default::default()
        };
        let skin = finish(&prep, rows, &options).unwrap();
        assert_eq!(skin.vertex_count(), mesh.vertex_count());
        assert_eq!(skin.unskinned_count(), 0);
        assert!(skin.influences_max() <= 2);
        // Vertex at y = 0 sits on joint 0's bone.
        assert_eq!(skin.influences(0)[0].joint, 0);
        let wrong = finish(&prep, vec![Vec::new(); 3], &options);
        assert!(matches!(wrong, Err(SkinError::Failed { .. })));
    }

    #[test]
    fn smoothing_blends_across_a_boundary_and_keeps_sums() {
        let adjacency = Adjacency::from_edges(3, [(0, 1), (1, 2)]);
        let rows = vec![vec![(0, 1.0)], vec![(0, 1.0)], vec![(1, 1.0)]];
        let out = smooth_once(&rows, &adjacency, 0.5);
        let sum = |r: &Row| r.iter().map(|e| e.1).sum::<f32>();
        assert!(out.iter().all(|r| (sum(r) - 1.0).abs() < 1e-6));
        assert!(out[1].iter().any(|e| e.0 == 1 && (e.1 - 0.25).abs() < 1e-6));
        assert_eq!(out[0], vec![(0, 1.0)]);
    }
}
