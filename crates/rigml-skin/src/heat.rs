//! `heat`: bone heat (Baran & Popović 2007, ALGORITHMS.md §2), made robust.
//!
//! For every joint j solve `(L + A H) w_j = A H p_j` on the welded surface, where `L` is the
//! clamped cotangent Laplacian ([`rigml_geom::CotLaplacian`]), `A` the lumped vertex areas, and
//! `H`/`p` come from each vertex's nearest *visible* bone (BVH ray cast to the closest point of
//! the segment; distances scaled by Blender's normal term `0.5 (cos θ + 1.001)`). This is the
//! area-weighted, symmetric form of `(-Δ + H) w = H p`, so one sparse Cholesky factorisation
//! (faer) serves every joint; the per-joint back-substitutions run in parallel.
//!
//! Where Blender fails we fall back instead: every connected piece of the Laplacian graph that
//! sees no bone (an eye, a button, an isolated vertex, a mesh whose bones lie outside it) is
//! heated by its nearest bone regardless of visibility, which also keeps the matrix positive
//! definite. Rows left empty after solving get their nearest bone in post-processing.

use crate::post::{finish, Prepared, Row, DISTANCE_EPSILON};
use crate::{SkinError, SkinSolver, SolveOptions};
use faer::linalg::solvers::Solve;
use faer::sparse::{SparseColMat, Triplet};
use faer::{Mat, Side};
use glam::Vec3;
use rayon::prelude::*;
use rigml_core::{Mesh, Skeleton, Skin};
use rigml_geom::{closest_on_segment, Adjacency, Bvh, CotLaplacian};

/// Heat constant `c` of `H = c / d²` (Pinocchio and Blender use 1).
const HEAT_WEIGHT: f64 = 1.0;

/// Bones within this factor of the nearest visible distance share the vertex.
const TIE: f32 = 1.0 + 1e-4;

/// Ray casts tried per vertex, nearest segments first, before it counts as seeing no bone.
const MAX_VISIBILITY_TESTS: usize = 16;

/// Solved weights below this are dropped as zero.
const ZERO_WEIGHT: f64 = 1e-6;

/// Bone heat weighting.
#[derive(Debug, Clone, Copy)]
pub struct Heat {
    /// Test bone visibility by ray casts (Pinocchio); off = every bone is visible.
    pub visibility: bool,
}

impl Default for Heat {
    fn default() -> Self {
        Self { visibility: true }
    }
}

/// The heat source of one vertex: `H_v` and the joints sharing it.
#[derive(Debug, Clone, Default)]
struct Source {
    heat: f64,
    joints: Vec<u32>,
}

impl SkinSolver for Heat {
    fn name(&self) -> &'static str {
        "heat"
    }

    fn solve(&self, mesh: &Mesh, skeleton: &Skeleton, options: &SolveOptions) -> Result<Skin, SkinError> {
        let prep = Prepared::for_solve(mesh, skeleton, options)?;
        options.check_cancel()?;
        let rows = solve_rows_until(&prep, self.visibility, options.cancel.as_ref())?;
        finish(&prep, rows, options)
    }
}

/// Raw (unnormalised, unpruned) heat rows for every welded vertex of `prep`: the solver before
/// post-processing, for callers that use bone heat as an input (the learned model's features).
pub fn raw_rows(prep: &Prepared, visibility: bool) -> Result<Vec<Row>, SkinError> {
    solve_rows_until(prep, visibility, None)
}

/// Raw heat rows for every welded vertex; stops with [`SkinError::Cancelled`] once `cancel` is
/// set (checked after the factorisation and before each block of bones is solved).
fn solve_rows_until(prep: &Prepared, visibility: bool, cancel: Option<&crate::Cancel>) -> Result<Vec<Row>, SkinError> {
    let stopped = || cancel.is_some_and(crate::Cancel::is_cancelled);
    let positions = &prep.welded.positions;
    let n = positions.len();
    let laplacian = CotLaplacian::new(positions, &prep.welded.triangles);
    let normals = vertex_normals(positions, &prep.welded.triangles);
    let bvh = visibility.then(|| Bvh::new(positions, &prep.welded.triangles));
    let mut sources: Vec<Source> = (0..n)
        .into_par_iter()
        .map(|v| visible_source(prep, positions[v], normals[v], bvh.as_ref()))
        .collect();

    // Pieces of the Laplacian graph (edges of positive weight) that no bone heats get their
    // nearest bone, so that every piece has a source and the matrix is definite.
    let graph = Adjacency::from_edges(n, laplacian.edges.iter().filter(|e| e.2 > 0.0).map(|e| (e.0, e.1)));
    let (label, pieces) = graph.components();
    let mut heated = vec![false; pieces];
    for (v, s) in sources.iter().enumerate() {
        if s.heat > 0.0 {
            heated[label[v] as usize] = true;
        }
    }
    sources.par_iter_mut().enumerate().for_each(|(v, s)| {
        if !heated[label[v] as usize] {
            *s = nearest_source(prep, positions[v]);
        }
    });

    let area = clamped_areas(&laplacian.areas);
    let mut diagonal: Vec<f64> = (0..n).map(|v| area[v] * sources[v].heat).collect();
    let mut triplets = Vec::with_capacity(laplacian.edges.len() + n);
    for &(i, j, w) in &laplacian.edges {
        if w > 0.0 {
            diagonal[i as usize] += w;
            diagonal[j as usize] += w;
            // Lower triangle only: row j > column i.
            triplets.push(Triplet::new(j as usize, i as usize, -w));
        }
    }
    triplets.extend(diagonal.iter().enumerate().map(|(v, &d)| Triplet::new(v, v, d)));
    let matrix =
        SparseColMat::<usize, f64>::try_new_from_triplets(n, n, &triplets).map_err(|e| fail(format!("{e:?}")))?;
    let llt = matrix.sp_cholesky(Side::Lower).map_err(|e| {
        fail(format!(
            "sparse Cholesky failed ({e:?}); the system is not positive definite"
        ))
    })?;

    // Only joints that heat some vertex can have non-zero weight.
    let mut column_of = vec![usize::MAX; prep.bones.joint_count];
    let mut used: Vec<u32> = Vec::new();
    for s in &sources {
        for &j in &s.joints {
            if column_of[j as usize] == usize::MAX {
                column_of[j as usize] = used.len();
                used.push(j);
            }
        }
    }
    let threads = rayon::current_num_threads().max(1);
    let chunk = used.len().div_ceil(threads).max(1);
    let mut blocks: Vec<(usize, Mat<f64>)> = (0..used.len())
        .step_by(chunk)
        .map(|start| (start, Mat::<f64>::zeros(n, chunk.min(used.len() - start))))
        .collect();
    if stopped() {
        return Err(SkinError::Cancelled);
    }
    blocks.par_iter_mut().for_each(|(start, block)| {
        if stopped() {
            return;
        }
        for (v, s) in sources.iter().enumerate() {
            let share = area[v] * s.heat / s.joints.len().max(1) as f64;
            for &j in &s.joints {
                let c = column_of[j as usize];
                if c >= *start && c < *start + block.ncols() {
                    block[(v, c - *start)] = share;
                }
            }
        }
        llt.solve_in_place(block.as_mut());
    });
    if stopped() {
        return Err(SkinError::Cancelled);
    }
    let rows = (0..n)
        .into_par_iter()
        .map(|v| {
            let mut row = Row::new();
            for (start, block) in &blocks {
                for c in 0..block.ncols() {
                    let w = block[(v, c)];
                    if w.is_finite() && w > ZERO_WEIGHT {
                        row.push((used[start + c], w as f32));
                    }
                }
            }
            row
        })
        .collect();
    Ok(rows)
}

fn fail(problem: String) -> SkinError {
    SkinError::Failed {
        solver: "heat",
        problem,
    }
}

/// Nearest visible bones of a vertex (Blender's rule), or no heat when none is visible.
fn visible_source(prep: &Prepared, p: Vec3, normal: Vec3, bvh: Option<&Bvh>) -> Source {
    let mut candidates: Vec<(f32, u32, Vec3)> = prep
        .bones
        .segments
        .iter()
        .map(|b| {
            let c = closest_on_segment(p, b.a, b.b);
            let away = p - c;
            let d = away.length();
            let cos = if d > 0.0 && normal != Vec3::ZERO {
                normal.dot(away / d)
            } else {
                1.0
            };
            (d / (0.5 * (cos + 1.001)), b.joint, c)
        })
        .collect();
    candidates.sort_by(|a, b| a.0.total_cmp(&b.0));
    let visible = |c: Vec3| bvh.is_none_or(|bvh| sees(bvh, p, c));
    let Some(first) = candidates.iter().take(MAX_VISIBILITY_TESTS).position(|e| visible(e.2)) else {
        return Source::default();
    };
    let best = candidates[first].0;
    let mut joints = vec![candidates[first].1];
    for e in candidates.iter().skip(first + 1) {
        if e.0 > best.max(DISTANCE_EPSILON) * TIE {
            break;
        }
        if !joints.contains(&e.1) && visible(e.2) {
            joints.push(e.1);
        }
    }
    let d = f64::from(best.max(DISTANCE_EPSILON));
    Source {
        heat: joints.len() as f64 * HEAT_WEIGHT / (d * d),
        joints,
    }
}

/// Nearest bones of a vertex, visibility ignored (the fallback for unheated pieces).
fn nearest_source(prep: &Prepared, p: Vec3) -> Source {
    let mut d = vec![f32::INFINITY; prep.bones.joint_count];
    prep.joint_distances(p, &mut d);
    let best = d.iter().copied().fold(f32::INFINITY, f32::min).max(DISTANCE_EPSILON);
    let joints: Vec<u32> = (0..d.len()).filter(|&j| d[j] <= best * TIE).map(|j| j as u32).collect();
    let best = f64::from(best);
    Source {
        heat: joints.len() as f64 * HEAT_WEIGHT / (best * best),
        joints,
    }
}

/// Whether the segment from surface point `p` to bone point `c` leaves the surface unobstructed
/// (start nudged off the surface and end short of the bone, as Blender does).
fn sees(bvh: &Bvh, p: Vec3, c: Vec3) -> bool {
    let along = c - p;
    let len = along.length();
    if len < 4e-5 {
        return true;
    }
    let dir = along / len;
    !bvh.any_hit(p + dir * 1e-5, dir, 0.0, len - 2e-5)
}

/// Area-weighted vertex normals (zero for vertices without triangles).
fn vertex_normals(positions: &[Vec3], triangles: &[[u32; 3]]) -> Vec<Vec3> {
    let mut normals = vec![Vec3::ZERO; positions.len()];
    for t in triangles {
        let [a, b, c] = t.map(|i| i as usize);
        if let (Some(&pa), Some(&pb), Some(&pc)) = (positions.get(a), positions.get(b), positions.get(c)) {
            let n = (pb - pa).cross(pc - pa);
            normals[a] += n;
            normals[b] += n;
            normals[c] += n;
        }
    }
    normals.iter().map(|n| n.normalize_or_zero()).collect()
}

/// Vertex areas with a positive floor, so that heat reaches vertices whose triangles are all
/// degenerate (their row of `L` may be empty).
fn clamped_areas(areas: &[f64]) -> Vec<f64> {
    let positive: Vec<f64> = areas.iter().copied().filter(|a| *a > 0.0 && a.is_finite()).collect();
    let mean = if positive.is_empty() {
        1.0
    } else {
        positive.iter().sum::<f64>() / positive.len() as f64
    };
    let floor = mean * 1e-3;
    areas
        .iter()
        .map(|&a| if a.is_finite() && a > floor { a } else { floor })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{check, synthetic};

    #[test]
    fn heat_on_a_tube_follows_the_bones_and_blends_at_joints() {
        let (mesh, skeleton) = synthetic::tube_chain(4, 8, 12, 0.1, 1.0);
        let skin = Heat::default()
            .solve(&mesh, &skeleton, &SolveOptions::default())
            .unwrap();
        let prep = Prepared::new(&mesh, &skeleton).unwrap();
        assert!(check::failures(&skin, mesh.vertex_count(), 4, &prep.bones).is_empty());
        let mut blended = 0;
        for (v, p) in mesh.positions.iter().enumerate() {
            let frac = p.y.fract();
            if (0.3..0.7).contains(&frac) && p.y < 4.0 {
                assert_eq!(skin.influences(v)[0].joint, p.y.floor() as u32, "vertex {v} at {p}");
            }
            if skin.influences(v).len() > 1 {
                blended += 1;
            }
        }
        assert!(blended > 0, "heat diffusion should blend neighbouring bones");
    }
}
