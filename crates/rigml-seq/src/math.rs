//! Small dense solvers the decomposition needs per bone and per vertex: the optimal rotation
//! of a cross-covariance (Horn's quaternion method), a symmetric 4×4 eigen solver, dense
//! Gaussian elimination, and the simplex-constrained quadratic program of the weight step.
//!
//! All are a few dozen operations on tiny matrices, called hundreds of thousands of times, so
//! they are written out here rather than routed through a general linear-algebra crate.

use glam::{DQuat, DVec3};

/// The rotation `R` maximising `Σ b_i · R a_i` given the cross-covariance `s[x][y] = Σ a_x b_y`
/// (Horn 1987): the eigenvector of the largest eigenvalue of Horn's symmetric 4×4 matrix. Always
/// a proper rotation (no reflection case as with an SVD). Identity for a zero matrix.
pub fn horn_rotation(s: &[[f64; 3]; 3]) -> DQuat {
    let n = horn_matrix(s);
    let [w, x, y, z] = top_eigenvector4(&n).unwrap_or_else(|| jacobi_top_eigenvector(n));
    let q = DQuat::from_xyzw(x, y, z, w);
    let len = q.length();
    if len.is_finite() && len > 1e-12 {
        q / len
    } else {
        DQuat::IDENTITY
    }
}

/// Horn's symmetric 4×4 matrix of a cross-covariance `s[x][y] = Σ a_x b_y`: its top eigenvector
/// is the quaternion (w, x, y, z) of the best rotation.
fn horn_matrix(s: &[[f64; 3]; 3]) -> [[f64; 4]; 4] {
    let [[sxx, sxy, sxz], [syx, syy, syz], [szx, szy, szz]] = *s;
    [
        [sxx + syy + szz, syz - szy, szx - sxz, sxy - syx],
        [syz - szy, sxx - syy - szz, sxy + syx, szx + sxz],
        [szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy],
        [sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz],
    ]
}

/// The eigenvector of the largest eigenvalue of a symmetric 4×4 matrix by the full Jacobi
/// decomposition ([`jacobi4`]): the fallback of [`top_eigenvector4`].
fn jacobi_top_eigenvector(n: [[f64; 4]; 4]) -> [f64; 4] {
    let (values, vectors) = jacobi4(n);
    let best = (1..4).fold(0, |k, i| if values[i] > values[k] { i } else { k });
    std::array::from_fn(|i| vectors[i][best])
}

/// The eigenvector of the largest eigenvalue of a symmetric 4×4 matrix with zero trace (Horn's
/// matrix is one), without a full eigen-decomposition (Theobald's QCP idea): the eigenvalue by
/// Newton's method on the characteristic polynomial `λ⁴ − p₂/2 λ² − p₃/3 λ + det`
/// (`p_k = tr Aᵏ`) from the upper bound `√p₂`, from which Newton descends monotonically to the
/// largest root; the vector as a column of the adjugate of `A − λI`, which has rank one there.
/// `None` when the matrix has trace, is (nearly) zero, or the largest eigenvalue is (nearly)
/// repeated so that the adjugate does not fix the vector: callers then use [`jacobi4`]. About a
/// fifth of the work of [`jacobi4`] on the decomposition's matrices.
pub fn top_eigenvector4(a: &[[f64; 4]; 4]) -> Option<[f64; 4]> {
    let p2: f64 = a.iter().flatten().map(|x| x * x).sum();
    let trace = a[0][0] + a[1][1] + a[2][2] + a[3][3];
    if !(p2.is_finite() && p2 > 1e-200) || trace.abs() > 1e-12 * p2.sqrt() {
        return None;
    }
    let mut a2 = [[0.0f64; 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            a2[i][j] = (0..4).map(|k| a[i][k] * a[k][j]).sum();
        }
    }
    let p3: f64 = (0..4)
        .flat_map(|i| (0..4).map(move |j| (i, j)))
        .map(|(i, j)| a2[i][j] * a[j][i])
        .sum();
    let det = det4(a);
    let scale = p2.sqrt();
    let mut lambda = scale;
    for _ in 0..100 {
        let l2 = lambda * lambda;
        let p = l2 * l2 - 0.5 * p2 * l2 - p3 / 3.0 * lambda + det;
        let dp = 4.0 * l2 * lambda - p2 * lambda - p3 / 3.0;
        if dp <= 0.0 {
            break;
        }
        let step = p / dp;
        lambda -= step;
        if step.abs() <= 1e-14 * scale {
            break;
        }
    }
    let mut b = *a;
    for (i, row) in b.iter_mut().enumerate() {
        row[i] -= lambda;
    }
    // The adjugate's diagonal is μ v_i²: take the column of the largest.
    let cofactor = |r: usize, c: usize| -> f64 {
        let skip = |k: usize, out: usize| if k >= out { k + 1 } else { k };
        let rows = [skip(0, r), skip(1, r), skip(2, r)];
        let cols = [skip(0, c), skip(1, c), skip(2, c)];
        let m = |i: usize, j: usize| b[rows[i]][cols[j]];
        let minor = m(0, 0) * (m(1, 1) * m(2, 2) - m(1, 2) * m(2, 1))
            - m(0, 1) * (m(1, 0) * m(2, 2) - m(1, 2) * m(2, 0))
            + m(0, 2) * (m(1, 0) * m(2, 1) - m(1, 1) * m(2, 0));
        if (r + c).is_multiple_of(2) {
            minor
        } else {
            -minor
        }
    };
    let diagonal: [f64; 4] = std::array::from_fn(|i| cofactor(i, i));
    let best = (1..4).fold(0, |k, i| if diagonal[i].abs() > diagonal[k].abs() { i } else { k });
    let floor = 1e-9 * scale * scale * scale;
    if diagonal[best].is_nan() || diagonal[best].abs() <= floor {
        return None;
    }
    let v: [f64; 4] = std::array::from_fn(|k| if k == best { diagonal[best] } else { cofactor(best, k) });
    let len = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    (len.is_finite() && len > 0.0).then(|| v.map(|x| x / len))
}

/// Determinant of a 4×4 matrix (expansion by 2×2 minors of the first two rows).
fn det4(m: &[[f64; 4]; 4]) -> f64 {
    let s0 = m[0][0] * m[1][1] - m[1][0] * m[0][1];
    let s1 = m[0][0] * m[1][2] - m[1][0] * m[0][2];
    let s2 = m[0][0] * m[1][3] - m[1][0] * m[0][3];
    let s3 = m[0][1] * m[1][2] - m[1][1] * m[0][2];
    let s4 = m[0][1] * m[1][3] - m[1][1] * m[0][3];
    let s5 = m[0][2] * m[1][3] - m[1][2] * m[0][3];
    let c5 = m[2][2] * m[3][3] - m[3][2] * m[2][3];
    let c4 = m[2][1] * m[3][3] - m[3][1] * m[2][3];
    let c3 = m[2][1] * m[3][2] - m[3][1] * m[2][2];
    let c2 = m[2][0] * m[3][3] - m[3][0] * m[2][3];
    let c1 = m[2][0] * m[3][2] - m[3][0] * m[2][2];
    let c0 = m[2][0] * m[3][1] - m[3][0] * m[2][1];
    s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0
}

/// Eigen-decomposition of a symmetric 4×4 matrix by cyclic Jacobi rotations: eigenvalues and
/// the eigenvectors as the columns of the returned matrix.
pub fn jacobi4(mut a: [[f64; 4]; 4]) -> ([f64; 4], [[f64; 4]; 4]) {
    let mut v = [[0.0; 4]; 4];
    for (i, row) in v.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    let scale: f64 = a.iter().flatten().map(|x| x * x).sum::<f64>().max(1e-300);
    for _sweep in 0..32 {
        let off: f64 = (0..4)
            .flat_map(|i| (0..4).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i][j] * a[i][j])
            .sum();
        if off <= 1e-26 * scale {
            break;
        }
        for p in 0..4 {
            for q in p + 1..4 {
                let apq = a[p][q];
                if apq.abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q][q] - a[p][p]) / (2.0 * apq);
                let t = if theta == 0.0 {
                    1.0
                } else {
                    theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt())
                };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for row in a.iter_mut() {
                    let (akp, akq) = (row[p], row[q]);
                    row[p] = c * akp - s * akq;
                    row[q] = s * akp + c * akq;
                }
                let (row_p, row_q) = (a[p], a[q]);
                a[p] = std::array::from_fn(|k| c * row_p[k] - s * row_q[k]);
                a[q] = std::array::from_fn(|k| s * row_p[k] + c * row_q[k]);
                for row in v.iter_mut() {
                    let (vkp, vkq) = (row[p], row[q]);
                    row[p] = c * vkp - s * vkq;
                    row[q] = s * vkp + c * vkq;
                }
            }
        }
    }
    ([a[0][0], a[1][1], a[2][2], a[3][3]], v)
}

/// Solve the dense system `a x = b` (row-major `n×n`) in place by Gaussian elimination with
/// partial pivoting; `None` when a pivot is (numerically) zero.
pub fn solve_dense(a: &mut [f64], b: &mut [f64], n: usize) -> Option<()> {
    if a.len() != n * n || b.len() != n {
        return None;
    }
    let norm = a.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1e-300);
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs()))?;
        if a[pivot * n + col].abs() <= 1e-14 * norm {
            return None;
        }
        if pivot != col {
            for k in 0..n {
                a.swap(pivot * n + k, col * n + k);
            }
            b.swap(pivot, col);
        }
        let d = a[col * n + col];
        for row in col + 1..n {
            let f = a[row * n + col] / d;
            if f == 0.0 {
                continue;
            }
            for k in col..n {
                a[row * n + k] -= f * a[col * n + k];
            }
            b[row] -= f * b[col];
        }
    }
    for col in (0..n).rev() {
        let mut x = b[col];
        for k in col + 1..n {
            x -= a[col * n + k] * b[k];
        }
        b[col] = x / a[col * n + col];
    }
    Some(())
}

/// The point `p` minimising `Σ |A_i p + c_i|² + μ |p - m|²` given the normal equations
/// accumulated by the caller as `ata = Σ AᵀA` and `atc = Σ Aᵀc` (3×3 and 3-vector).
pub fn regularised_point(ata: &[[f64; 3]; 3], atc: DVec3, mu: f64, m: DVec3) -> DVec3 {
    let mut a = [0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            a[i * 3 + j] = ata[i][j] + if i == j { mu } else { 0.0 };
        }
    }
    let rhs = -atc + mu * m;
    let mut b = [rhs.x, rhs.y, rhs.z];
    match solve_dense(&mut a, &mut b, 3) {
        Some(()) => DVec3::new(b[0], b[1], b[2]),
        None => m,
    }
}

/// Minimise `½ wᵀ A w − bᵀ w` over the probability simplex (`w ≥ 0`, `Σ w = 1`) by a primal
/// active-set method; `a` is row-major `m×m`, symmetric positive definite. Starts from the best
/// single vertex of the simplex, so every iterate is feasible. Returns the weights.
pub fn simplex_qp(a: &[f64], b: &[f64], m: usize) -> Vec<f64> {
    if m == 0 || a.len() != m * m || b.len() != m {
        return Vec::new();
    }
    let objective = |w: &[f64]| -> f64 {
        let mut f = 0.0;
        for i in 0..m {
            let mut aw = 0.0;
            for j in 0..m {
                aw += a[i * m + j] * w[j];
            }
            f += 0.5 * w[i] * aw - b[i] * w[i];
        }
        f
    };
    // Start at the vertex e_k with the lowest objective ½ a_kk − b_k.
    let start = (0..m)
        .min_by(|&i, &j| (0.5 * a[i * m + i] - b[i]).total_cmp(&(0.5 * a[j * m + j] - b[j])))
        .unwrap_or(0);
    let mut w = vec![0.0; m];
    w[start] = 1.0;
    let mut free = vec![false; m];
    free[start] = true;
    for _ in 0..4 * m + 4 {
        // Equality-constrained minimiser on the free set: [A_FF 1; 1ᵀ 0] [w; λ] = [b_F; 1].
        let idx: Vec<usize> = (0..m).filter(|&i| free[i]).collect();
        let k = idx.len();
        let mut kkt = vec![0.0; (k + 1) * (k + 1)];
        let mut rhs = vec![0.0; k + 1];
        for (r, &i) in idx.iter().enumerate() {
            for (c, &j) in idx.iter().enumerate() {
                kkt[r * (k + 1) + c] = a[i * m + j];
            }
            kkt[r * (k + 1) + k] = 1.0;
            kkt[k * (k + 1) + r] = 1.0;
            rhs[r] = b[i];
        }
        rhs[k] = 1.0;
        if solve_dense(&mut kkt, &mut rhs, k + 1).is_none() {
            break;
        }
        let lambda = rhs[k];
        let target: Vec<f64> = rhs[..k].to_vec();
        if target.iter().all(|&x| x >= 0.0) {
            for (r, &i) in idx.iter().enumerate() {
                w[i] = target[r];
            }
            // KKT multipliers of the bound variables: ν_i = (A w − b)_i + λ must be ≥ 0.
            let mut worst: Option<(usize, f64)> = None;
            for i in (0..m).filter(|&i| !free[i]) {
                let mut g = -b[i] + lambda;
                for j in 0..m {
                    g += a[i * m + j] * w[j];
                }
                if g < -1e-12 * (1.0 + b[i].abs()) && worst.is_none_or(|(_, x)| g < x) {
                    worst = Some((i, g));
                }
            }
            match worst {
                Some((i, _)) => free[i] = true,
                None => break,
            }
        } else {
            // Step from the feasible w towards the target until the first weight hits 0.
            let mut alpha = 1.0f64;
            for (r, &i) in idx.iter().enumerate() {
                if target[r] < 0.0 {
                    let denom = w[i] - target[r];
                    if denom > 0.0 {
                        alpha = alpha.min(w[i] / denom);
                    }
                }
            }
            for (r, &i) in idx.iter().enumerate() {
                w[i] += alpha * (target[r] - w[i]);
                if w[i] <= 1e-15 {
                    w[i] = 0.0;
                    free[i] = false;
                }
            }
            if !free.iter().any(|&f| f) {
                // Cannot happen for a convex step, but never leave the simplex.
                w.iter_mut().for_each(|x| *x = 0.0);
                w[start] = 1.0;
                free[start] = true;
            }
        }
    }
    let sum: f64 = w.iter().sum();
    if !(sum > 0.0 && sum.is_finite() && objective(&w).is_finite()) {
        let mut e = vec![0.0; m];
        e[start] = 1.0;
        return e;
    }
    w.iter().map(|x| x / sum).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_eigenvector_matches_jacobi_and_refuses_repeated_roots() {
        // Horn matrices of random cross-covariances (a small LCG: no rand in this crate's tests).
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let mut fast = 0;
        for _ in 0..500 {
            let s: [[f64; 3]; 3] = std::array::from_fn(|_| std::array::from_fn(|_| next()));
            let n = horn_matrix(&s);
            let reference = jacobi_top_eigenvector(n);
            if let Some(v) = top_eigenvector4(&n) {
                fast += 1;
                let dot: f64 = v.iter().zip(&reference).map(|(a, b)| a * b).sum();
                assert!(dot.abs() > 1.0 - 1e-9, "{v:?} vs {reference:?}");
            }
        }
        assert!(fast > 490, "the fast path served {fast} of 500");
        // Collinear points (a rotation about their line is free: the top root is double): the
        // fast path either declines or returns a vector of the top eigenspace.
        let q = DQuat::from_axis_angle(DVec3::new(0.3, -1.0, 0.2).normalize(), 1.1);
        let a = DVec3::new(0.5, 1.0, -2.0);
        let b = q * a;
        let mut s = [[0.0; 3]; 3];
        s[0][0] = 2.0;
        let line: [[f64; 3]; 3] = std::array::from_fn(|x| std::array::from_fn(|y| a[x] * b[y]));
        for s in [s, line] {
            let n = horn_matrix(&s);
            let (values, _) = jacobi4(n);
            let top = values.iter().copied().fold(f64::MIN, f64::max);
            if let Some(v) = top_eigenvector4(&n) {
                let nv: [f64; 4] = std::array::from_fn(|i| (0..4).map(|j| n[i][j] * v[j]).sum());
                let rayleigh: f64 = v.iter().zip(&nv).map(|(x, y)| x * y).sum();
                assert!(
                    (rayleigh - top).abs() < 1e-8 * top.abs().max(1.0),
                    "{rayleigh} vs {top}"
                );
            }
            let r = horn_rotation(&s);
            assert!(r.is_finite() && (r.length() - 1.0).abs() < 1e-12);
        }
        // The line's rotation still takes a onto b (to about the square root of f64's precision,
        // as a double root allows: far below the f32 frames' own).
        let miss = (horn_rotation(&line) * a - b).length();
        assert!(miss < 1e-6 * b.length(), "{miss}");
        assert!(top_eigenvector4(&[[0.0; 4]; 4]).is_none());
    }

    #[test]
    fn horn_recovers_a_rotation() {
        let q = DQuat::from_axis_angle(DVec3::new(1.0, 2.0, -0.5).normalize(), 2.3);
        let points = [
            DVec3::new(1.0, 0.0, 0.0),
            DVec3::new(0.0, 2.0, 0.5),
            DVec3::new(-0.3, 0.1, 1.0),
            DVec3::new(0.4, -1.0, -0.2),
        ];
        let mut s = [[0.0; 3]; 3];
        for a in points {
            let b = q * a;
            for x in 0..3 {
                for y in 0..3 {
                    s[x][y] += a[x] * b[y];
                }
            }
        }
        let r = horn_rotation(&s);
        assert!(r.dot(q).abs() > 1.0 - 1e-10, "{r:?} vs {q:?}");
        assert_eq!(horn_rotation(&[[0.0; 3]; 3]), DQuat::IDENTITY);
    }

    #[test]
    fn dense_solve_and_singular() {
        let mut a = [2.0, 1.0, 1.0, 3.0];
        let mut b = [3.0, 5.0];
        solve_dense(&mut a, &mut b, 2).unwrap();
        assert!((b[0] - 0.8).abs() < 1e-12 && (b[1] - 1.4).abs() < 1e-12, "{b:?}");
        assert!(solve_dense(&mut [1.0, 2.0, 2.0, 4.0], &mut [1.0, 1.0], 2).is_none());
    }

    #[test]
    fn simplex_qp_matches_hand_solutions() {
        // min ½|w|² − bᵀw on the simplex with b = (1, 0, 0): interior optimum is projection.
        let id = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let w = simplex_qp(&id, &[1.0, 0.0, 0.0], 3);
        assert!((w[0] - 1.0).abs() < 1e-12 && w[1].abs() < 1e-12, "{w:?}");
        // b = (0.5, 0.5, -3): projection of b onto the simplex is (0.5, 0.5, 0).
        let w = simplex_qp(&id, &[0.5, 0.5, -3.0], 3);
        assert!(
            (w[0] - 0.5).abs() < 1e-12 && (w[1] - 0.5).abs() < 1e-12 && w[2] == 0.0,
            "{w:?}"
        );
        // b = (1, 0.8, 0): projection is (0.6, 0.4, 0).
        let w = simplex_qp(&id, &[1.0, 0.8, 0.0], 3);
        assert!((w[0] - 0.6).abs() < 1e-12 && (w[1] - 0.4).abs() < 1e-12, "{w:?}");
        assert!(w.iter().all(|&x| x >= 0.0) && (w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn regularised_point_finds_the_fixed_point() {
        // Two frames: A = I and A = 2I, c = -(A p*) for p* = (1,2,3): exact fixed point.
        let p = DVec3::new(1.0, 2.0, 3.0);
        let mut ata = [[0.0; 3]; 3];
        let mut atc = DVec3::ZERO;
        for s in [1.0, 2.0] {
            for (i, row) in ata.iter_mut().enumerate() {
                row[i] += s * s;
            }
            atc += s * (-(s * p));
        }
        let got = regularised_point(&ata, atc, 1e-9, DVec3::ZERO);
        assert!(got.distance(p) < 1e-6, "{got}");
    }
}
