//! The sweep's block solve ([`crate::pose_fit`]) from moments instead of vertices.
//!
//! A block (a joint and its subtree `S`) is moved by the rigid map that best carries its share
//! of each vertex, `B_v = Σ_{k∈S} w_vk M_k(x_v)` with weight `s_v = Σ_{k∈S} w_vk`, onto what the
//! rest of the skin leaves to it, `y_v − A_v` (`A_v`: the other joints' share): a weighted
//! Procrustes problem whose cross-covariance and centroids are sums over the block's vertices.
//! Every one of those sums is bilinear in the joints' current maps `M_k = (R_k, t_k)`, so it is
//! a sum over joints and joint pairs of fixed moments of the bind positions `x_v`:
//!
//! - per joint `k` of `S`: `m̃_k = Σ_v w_vk s_v x_v`, `c̃_k = Σ_v w_vk s_v` (for `Σ s_v B_v`);
//! - per pair `(k ∈ S, l ∉ S)` sharing vertices: `U_kl = Σ_v w_vk w_vl x_v x_vᵀ`,
//!   `m_kl = Σ_v w_vk w_vl x_v`, `c_kl = Σ_v w_vk w_vl` (for `Σ B_v A_vᵀ` and `Σ s_v A_v`);
//! - per frame and joint: `Y_k = Σ_v w_vk x_v y_vᵀ`, `n_k = Σ_v w_vk y_v` (for `Σ B_v y_vᵀ`).
//!
//! A block solve then costs its subtree's joints plus the pairs across its boundary, not its
//! vertices times their influences: a sweep over a 50-joint rig no longer touches the mesh.
//! The result is the same minimisation as summing over vertices (equal to rounding).

use crate::pose_fit::Rigid;
use glam::{DMat3, DVec3};
use std::collections::HashMap;

/// Moments of one block that depend only on the bind positions and the skin.
#[derive(Debug, Clone)]
pub(crate) struct BlockMoments {
    /// `(k, m̃_k, c̃_k)` for each joint of the subtree that weights a vertex.
    inside: Vec<(usize, DVec3, f64)>,
    /// Joint pairs across the subtree's boundary that share a vertex.
    crossing: Vec<Pair>,
    /// `Σ_v s_v²`.
    total: f64,
}

#[derive(Debug, Clone)]
struct Pair {
    /// In the subtree.
    k: usize,
    /// Outside it.
    l: usize,
    u: DMat3,
    m: DVec3,
    c: f64,
}

/// Per frame: `Y_k` and `n_k` of every joint (see the module's documentation).
#[derive(Debug, Clone)]
pub(crate) struct FrameMoments {
    y: Vec<DMat3>,
    n: Vec<DVec3>,
}

/// `a bᵀ`.
fn outer(a: DVec3, b: DVec3) -> DMat3 {
    DMat3::from_cols(a * b.x, a * b.y, a * b.z)
}

impl FrameMoments {
    /// The moments of `target` (one position per vertex of `rows`) for `joints` joints.
    pub(crate) fn new(rows: &[Vec<(usize, f64)>], rest: &[DVec3], target: &[DVec3], joints: usize) -> FrameMoments {
        let mut y = vec![DMat3::ZERO; joints];
        let mut n = vec![DVec3::ZERO; joints];
        for ((row, &x), &t) in rows.iter().zip(rest).zip(target) {
            let xt = outer(x, t);
            for &(k, w) in row {
                y[k] += xt * w;
                n[k] += t * w;
            }
        }
        FrameMoments { y, n }
    }
}

impl BlockMoments {
    /// The moments of the block moving `vertices`, whose subtree is `in_subtree`.
    pub(crate) fn new(
        vertices: &[usize],
        rows: &[Vec<(usize, f64)>],
        rest: &[DVec3],
        in_subtree: &[bool],
    ) -> BlockMoments {
        let mut inside: Vec<(usize, DVec3, f64)> = Vec::new();
        let mut inside_at: HashMap<usize, usize> = HashMap::new();
        let mut crossing: Vec<Pair> = Vec::new();
        let mut crossing_at: HashMap<(usize, usize), usize> = HashMap::new();
        let mut total = 0.0;
        for &v in vertices {
            let x = rest[v];
            let row = &rows[v];
            let s: f64 = row.iter().filter(|e| in_subtree[e.0]).map(|e| e.1).sum();
            total += s * s;
            for &(k, wk) in row.iter().filter(|e| in_subtree[e.0]) {
                let at = *inside_at.entry(k).or_insert_with(|| {
                    inside.push((k, DVec3::ZERO, 0.0));
                    inside.len() - 1
                });
                inside[at].1 += x * (wk * s);
                inside[at].2 += wk * s;
                for &(l, wl) in row.iter().filter(|e| !in_subtree[e.0]) {
                    let at = *crossing_at.entry((k, l)).or_insert_with(|| {
                        crossing.push(Pair {
                            k,
                            l,
                            u: DMat3::ZERO,
                            m: DVec3::ZERO,
                            c: 0.0,
                        });
                        crossing.len() - 1
                    });
                    let w = wk * wl;
                    let p = &mut crossing[at];
                    p.u += outer(x, x) * w;
                    p.m += x * w;
                    p.c += w;
                }
            }
        }
        BlockMoments {
            inside,
            crossing,
            total,
        }
    }

    /// The block's best rigid motion under the current maps `skinning` (bind → frame per joint,
    /// rotation matrices `rotations`): a rotation about `pivot`, or, when `centred` (the block
    /// translates, or bones are free), a rotation and translation about the centroids.
    /// Identity when the block carries no weight or the rotation is not finite.
    pub(crate) fn solve(
        &self,
        frame: &FrameMoments,
        skinning: &[Rigid],
        rotations: &[DMat3],
        centred: bool,
        pivot: DVec3,
    ) -> Rigid {
        if self.total <= 0.0 {
            return Rigid::IDENTITY;
        }
        // Σ B yᵀ, Σ s B, Σ s y.
        let (mut by, mut sb, mut sy) = (DMat3::ZERO, DVec3::ZERO, DVec3::ZERO);
        for &(k, m, c) in &self.inside {
            let (r, t) = (rotations[k], skinning[k].t);
            by += r * frame.y[k] + outer(t, frame.n[k]);
            sb += r * m + t * c;
            sy += frame.n[k];
        }
        // Σ B Aᵀ and Σ s A.
        let (mut ba, mut sa) = (DMat3::ZERO, DVec3::ZERO);
        for p in &self.crossing {
            let (rk, rl) = (rotations[p.k], rotations[p.l]);
            let (tk, tl) = (skinning[p.k].t, skinning[p.l].t);
            let (mk, ml) = (rk * p.m, rl * p.m);
            ba += rk * p.u * rl.transpose() + outer(mk, tl) + outer(tk, ml) + outer(tk, tl) * p.c;
            sa += ml + tl * p.c;
        }
        // With ω = s², u = B/s, z = (y − A)/s: Σ ω u zᵀ = Σ B (y − A)ᵀ, Σ ω u = Σ s B,
        // Σ ω z = Σ s (y − A).
        let (cross, sz) = (by - ba, sy - sa);
        let (cu, cz) = if centred {
            (sb / self.total, sz / self.total)
        } else {
            (pivot, pivot)
        };
        let cov = cross - outer(cu, sz) - outer(sb, cz) + outer(cu, cz) * self.total;
        let cov = [0, 1, 2].map(|r| [0, 1, 2].map(|c| cov.col(c)[r]));
        let r = crate::math::horn_rotation(&cov);
        if !r.is_finite() {
            return Rigid::IDENTITY;
        }
        Rigid { r, t: cz - r * cu }
    }
}
