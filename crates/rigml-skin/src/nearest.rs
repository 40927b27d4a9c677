//! `nearest`: weights from the straight-line distance to each bone segment.
//!
//! `w_j ∝ max(d_j, ε)^-power` with `d_j` the distance (normalised units) from the vertex to the
//! nearest segment of joint `j`, over the `2 × max_influences` closest joints. The baseline the
//! other solvers are measured against, and the fallback they use for vertices they cannot reach.

use crate::post::{finish, Prepared, Row, DISTANCE_EPSILON};
use crate::{SkinError, SkinSolver, SolveOptions};
use rayon::prelude::*;
use rigml_core::{Mesh, Skeleton, Skin};

/// Inverse-distance weighting to bone segments.
#[derive(Debug, Clone, Copy)]
pub struct Nearest {
    /// Falloff exponent: larger is closer to a rigid binding to the nearest bone.
    pub power: f32,
}

impl Default for Nearest {
    fn default() -> Self {
        Self { power: 4.0 }
    }
}

impl SkinSolver for Nearest {
    fn name(&self) -> &'static str {
        "nearest"
    }

    fn solve(&self, mesh: &Mesh, skeleton: &Skeleton, options: &SolveOptions) -> Result<Skin, SkinError> {
        let prep = Prepared::for_solve(mesh, skeleton, options)?;
        let keep = options.max_influences.max(1) * 2;
        let power = if self.power.is_finite() && self.power > 0.0 {
            self.power
        } else {
            4.0
        };
        let rows: Vec<Row> = prep
            .welded
            .positions
            .par_iter()
            .map_init(
                || vec![0.0f32; prep.bones.joint_count],
                |d, &p| {
                    prep.joint_distances(p, d);
                    let mut row: Row = d
                        .iter()
                        .enumerate()
                        .filter(|(_, dj)| dj.is_finite())
                        .map(|(j, &dj)| (j as u32, dj.max(DISTANCE_EPSILON)))
                        .collect();
                    row.sort_by(|a, b| a.1.total_cmp(&b.1));
                    row.truncate(keep);
                    // Relative to the nearest, so tiny meshes do not overflow the power.
                    let nearest = row.first().map_or(1.0, |e| e.1);
                    row.iter_mut().for_each(|e| e.1 = (nearest / e.1).powf(power));
                    row
                },
            )
            .collect();
        finish(&prep, rows, options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{check, synthetic};

    #[test]
    fn tube_vertices_follow_their_bone() {
        let (mesh, skeleton) = synthetic::tube_chain(4, 8, 12, 0.1, 1.0);
        let options = SolveOptions::default();
        let skin = Nearest::default().solve(&mesh, &skeleton, &options).unwrap();
        let prep = Prepared::new(&mesh, &skeleton).unwrap();
        assert!(check::failures(&skin, mesh.vertex_count(), 4, &prep.bones).is_empty());
        for (v, p) in mesh.positions.iter().enumerate() {
            // Mid-bone vertices: bone k spans y in [k, k+1].
            let frac = p.y.fract();
            if (0.3..0.7).contains(&frac) && p.y < 4.0 {
                assert_eq!(skin.influences(v)[0].joint, p.y.floor() as u32, "vertex {v} at {p}");
            }
        }
    }
}
