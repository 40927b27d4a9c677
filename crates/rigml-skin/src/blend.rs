//! A blend of two solvers: each vertex's row is `(1 - share) · first + share · second`, then
//! capped to the influence limit and normalised. Meant for a learned solver that leans on a
//! geometric one where it is unsure (e.g. `learned+voxel:0.3`): a character unlike any the
//! network has seen gets part of the geometric binding instead of the network's guess alone.

use crate::{SkinError, SkinSolver, SolveOptions};
use rigml_core::{Mesh, Skeleton, Skin};

/// Two solvers mixed row by row (see the module doc).
pub struct Blend {
    pub first: Box<dyn SkinSolver + Send>,
    pub second: Box<dyn SkinSolver + Send>,
    /// Weight of `second` in every row, in `[0, 1]`.
    pub share: f32,
}

impl Blend {
    /// `first` and `second` mixed with `share` of `second`; a share outside `[0, 1]` (or NaN)
    /// is refused.
    pub fn new(
        first: Box<dyn SkinSolver + Send>,
        second: Box<dyn SkinSolver + Send>,
        share: f32,
    ) -> Result<Blend, SkinError> {
        if !(0.0..=1.0).contains(&share) {
            return Err(SkinError::Failed {
                solver: "blend",
                problem: format!("blend share {share} is not in [0, 1]"),
            });
        }
        Ok(Blend { first, second, share })
    }
}

impl SkinSolver for Blend {
    fn name(&self) -> &'static str {
        "blend"
    }

    fn solve(&self, mesh: &Mesh, skeleton: &Skeleton, options: &SolveOptions) -> Result<Skin, SkinError> {
        let a = self.first.solve(mesh, skeleton, options)?;
        let b = self.second.solve(mesh, skeleton, options)?;
        let (wa, wb) = (1.0 - self.share, self.share);
        // Skin::from_rows merges a joint both rows hold, caps and normalises.
        let rows: Vec<Vec<(u32, f32)>> = a
            .rows()
            .zip(b.rows())
            .map(|(ra, rb)| {
                let from_a = ra.iter().map(|i| (i.joint, wa * i.weight));
                from_a.chain(rb.iter().map(|i| (i.joint, wb * i.weight))).collect()
            })
            .collect();
        Skin::from_rows(
            rows.iter().map(Vec::as_slice),
            skeleton.joint_count(),
            options.max_influences,
        )
        .map_err(|e| SkinError::Failed {
            solver: "blend",
            problem: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::tube_chain;
    use crate::{Heat, Nearest};

    #[test]
    fn a_blend_lies_between_its_solvers_and_its_ends_are_them() {
        let (mesh, skeleton) = tube_chain(3, 6, 8, 0.2, 1.0);
        let options = SolveOptions::default();
        let joints = skeleton.joint_count();
        let dense = |s: &Skin| s.to_dense(joints);
        let near = dense(&Nearest::default().solve(&mesh, &skeleton, &options).unwrap());
        let heat = dense(&Heat::default().solve(&mesh, &skeleton, &options).unwrap());
        let blend = |share: f32| {
            let b = Blend::new(Box::new(Nearest::default()), Box::new(Heat::default()), share).unwrap();
            dense(&b.solve(&mesh, &skeleton, &options).unwrap())
        };
        let close = |x: &[f32], y: &[f32]| x.iter().zip(y).all(|(a, b)| (a - b).abs() < 1e-5);
        assert!(close(&blend(0.0), &near));
        assert!(close(&blend(1.0), &heat));
        // With at most 4 joints per row in a 3-bone chain nothing is capped: the half blend is
        // the mean of the two.
        let half: Vec<f32> = near.iter().zip(&heat).map(|(a, b)| 0.5 * (a + b)).collect();
        assert!(close(&blend(0.5), &half));
        assert!(Blend::new(Box::new(Nearest::default()), Box::new(Heat::default()), 1.5).is_err());
        assert!(Blend::new(Box::new(Nearest::default()), Box::new(Heat::default()), f32::NAN).is_err());
    }
}
