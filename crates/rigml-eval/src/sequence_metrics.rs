//! Sequence metrics, METRICS.md §6: anchor frame, LBS reconstruction RMSE, pairwise joint
//! distance deviation (PJDD), graph spectral distance (GSD) and temporal skinning error (TSE).
//!
//! The Laplacian spectrum uses a cyclic Jacobi eigenvalue solver written here (the matrices are
//! joint-count sized, tens to a few hundred rows, so a dense O(n³) sweep is enough and keeps
//! the crate free of a linear-algebra dependency).

use glam::Vec3;

/// Total triangle area of one frame (the anchor criterion of §6); defined in `rigml-core`.
pub use rigml_core::sequence::total_area;

/// Anchor frame `argmax_t` total triangle area, ties to the lowest `t`; `None` for no frames.
pub fn anchor_frame(frames: &[Vec<Vec3>], triangles: &[[u32; 3]]) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (t, f) in frames.iter().enumerate() {
        let a = total_area(f, triangles);
        if best.is_none_or(|(_, b)| a > b) {
            best = Some((t, a));
        }
    }
    best.map(|b| b.0)
}

/// `(RMSE, max)` of reconstructed against reference positions over all frames and vertices,
/// multiplied by `scale` (the anchor's `1 / longest side`). `None` when shapes differ or empty.
pub fn lbs_rmse(recon: &[Vec<Vec3>], reference: &[Vec<Vec3>], scale: f32) -> Option<(f64, f64)> {
    if recon.len() != reference.len() || recon.is_empty() {
        return None;
    }
    let (mut sum, mut max, mut count) = (0.0f64, 0.0f64, 0usize);
    for (a, b) in recon.iter().zip(reference) {
        if a.len() != b.len() {
            return None;
        }
        for (x, y) in a.iter().zip(b) {
            let d = f64::from(x.distance(*y)) * f64::from(scale);
            sum += d * d;
            max = max.max(d);
            count += 1;
        }
    }
    (count > 0).then(|| ((sum / count as f64).sqrt(), max))
}

/// Pairwise joint distances `|j_a - j_b|`, `a < b`, sorted descending.
pub fn pairwise_sorted(joints: &[Vec3]) -> Vec<f64> {
    let mut d: Vec<f64> = Vec::with_capacity(joints.len() * joints.len().saturating_sub(1) / 2);
    for (a, p) in joints.iter().enumerate() {
        for q in joints.iter().skip(a + 1) {
            d.push(f64::from(p.distance(*q)));
        }
    }
    d.sort_by(|x, y| y.total_cmp(x));
    d
}

/// `(1/M) Σ |s_t[m] - s_a[m]|` with the shorter vector zero-padded at the end.
pub fn pjdd_frame(s_t: &[f64], s_a: &[f64]) -> f64 {
    let m = s_t.len().max(s_a.len());
    if m == 0 {
        return 0.0;
    }
    let sum: f64 = (0..m)
        .map(|i| (s_t.get(i).copied().unwrap_or(0.0) - s_a.get(i).copied().unwrap_or(0.0)).abs())
        .sum();
    sum / m as f64
}

/// PJDD: mean over frames `t ≠ anchor` of [`pjdd_frame`]; joints already normalised (§6).
/// `None` with fewer than two frames or an anchor out of range.
pub fn pjdd(joints: &[Vec<Vec3>], anchor: usize) -> Option<f64> {
    let s_a = pairwise_sorted(joints.get(anchor)?);
    let others: Vec<f64> = joints
        .iter()
        .enumerate()
        .filter(|(t, _)| *t != anchor)
        .map(|(_, j)| pjdd_frame(&pairwise_sorted(j), &s_a))
        .collect();
    (!others.is_empty()).then(|| others.iter().sum::<f64>() / others.len() as f64)
}

/// Eigenvalues of a symmetric matrix (row-major `n×n`), ascending, by cyclic Jacobi rotations.
pub fn symmetric_eigenvalues(a: &[f64], n: usize) -> Vec<f64> {
    let mut m = a.to_vec();
    if m.len() != n * n {
        return Vec::new();
    }
    for _sweep in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| m[i * n + j] * m[i * n + j])
            .sum();
        if off < 1e-22 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = m[p * n + q];
                if apq.abs() < 1e-300 {
                    continue;
                }
                let theta = (m[q * n + q] - m[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let (akp, akq) = (m[k * n + p], m[k * n + q]);
                    m[k * n + p] = c * akp - s * akq;
                    m[k * n + q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let (apk, aqk) = (m[p * n + k], m[q * n + k]);
                    m[p * n + k] = c * apk - s * aqk;
                    m[q * n + k] = s * apk + c * aqk;
                }
            }
        }
    }
    let mut ev: Vec<f64> = (0..n).map(|i| m[i * n + i]).collect();
    ev.sort_by(f64::total_cmp);
    ev
}

/// Ascending eigenvalues of the combinatorial Laplacian `D - A` of the undirected joint tree.
pub fn laplacian_spectrum(parents: &[Option<usize>]) -> Vec<f64> {
    let n = parents.len();
    let mut l = vec![0.0; n * n];
    for (j, p) in parents.iter().enumerate() {
        let Some(p) = *p else { continue };
        if p >= n || p == j {
            continue;
        }
        l[j * n + p] -= 1.0;
        l[p * n + j] -= 1.0;
        l[j * n + j] += 1.0;
        l[p * n + p] += 1.0;
    }
    symmetric_eigenvalues(&l, n)
}

/// `|λ_t - λ_a|₂` with the shorter ascending spectrum zero-padded at the front.
pub fn spectral_distance(a: &[f64], b: &[f64]) -> f64 {
    let m = a.len().max(b.len());
    let pad = |s: &[f64], i: usize| if i < m - s.len() { 0.0 } else { s[i - (m - s.len())] };
    (0..m).map(|i| (pad(a, i) - pad(b, i)).powi(2)).sum::<f64>().sqrt()
}

/// GSD: mean over frames `t ≠ anchor` of the spectral distance of the frames' joint trees.
pub fn gsd(parents_per_frame: &[Vec<Option<usize>>], anchor: usize) -> Option<f64> {
    let l_a = laplacian_spectrum(parents_per_frame.get(anchor)?);
    let d: Vec<f64> = parents_per_frame
        .iter()
        .enumerate()
        .filter(|(t, _)| *t != anchor)
        .map(|(_, p)| spectral_distance(&laplacian_spectrum(p), &l_a))
        .collect();
    (!d.is_empty()).then(|| d.iter().sum::<f64>() / d.len() as f64)
}

/// `(TSE, TSE/N)` of dense per-frame weights `weights[t][v * joints + j]` on one common joint
/// set. `None` with fewer than two frames, no vertex, or frames of different sizes.
pub fn tse(weights: &[Vec<f32>], vertices: usize) -> Option<(f64, f64)> {
    if weights.len() < 2 || vertices == 0 || weights.iter().any(|w| w.len() != weights[0].len()) {
        return None;
    }
    let total: f64 = weights
        .windows(2)
        .map(|w| {
            w[1].iter()
                .zip(&w[0])
                .map(|(a, b)| f64::from((a - b).abs()))
                .sum::<f64>()
        })
        .sum();
    let tse = total / (weights.len() - 1) as f64;
    Some((tse, tse / vertices as f64))
}

/// Minimum-cost assignment of rows to columns (Hungarian / Kuhn–Munkres, O(n²m)) of a
/// row-major `rows × cols` cost matrix. Returns `assignment[row] = Some(col)`; with more rows
/// than columns the extra rows get `None`.
pub fn hungarian(cost: &[f64], rows: usize, cols: usize) -> Vec<Option<usize>> {
    if cost.len() != rows * cols || rows == 0 || cols == 0 {
        return vec![None; rows];
    }
    // Work on the orientation with rows ≤ cols.
    let transpose = rows > cols;
    let (n, m) = if transpose { (cols, rows) } else { (rows, cols) };
    let at = |i: usize, j: usize| {
        if transpose {
            cost[j * cols + i]
        } else {
            cost[i * cols + j]
        }
    };
    let (mut u, mut v) = (vec![0.0f64; n + 1], vec![0.0f64; m + 1]);
    let (mut p, mut way) = (vec![0usize; m + 1], vec![0usize; m + 1]);
    for i in 1..=n {
        p[0] = i;
        let mut j0 = 0;
        let mut minv = vec![f64::INFINITY; m + 1];
        let mut used = vec![false; m + 1];
        loop {
            used[j0] = true;
            let i0 = p[j0];
            let (mut delta, mut j1) = (f64::INFINITY, 0);
            for j in 1..=m {
                if !used[j] {
                    let cur = at(i0 - 1, j - 1) - u[i0] - v[j];
                    if cur < minv[j] {
                        minv[j] = cur;
                        way[j] = j0;
                    }
                    if minv[j] < delta {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            }
            for j in 0..=m {
                if used[j] {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
            if p[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut out = vec![None; rows];
    for (j, &row) in p.iter().enumerate().skip(1) {
        if row == 0 {
            continue;
        }
        let (r, c) = if transpose { (j - 1, row - 1) } else { (row - 1, j - 1) };
        out[r] = Some(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    #[test]
    fn anchor_is_largest_area_lowest_on_ties() {
        let tri = [[0u32, 1, 2]];
        let f0 = vec![Vec3::ZERO, Vec3::X, Vec3::Y];
        let f1: Vec<Vec3> = f0.iter().map(|p| *p * 2.0).collect();
        assert_eq!(anchor_frame(&[f0.clone(), f1.clone(), f0.clone()], &tri), Some(1));
        assert_eq!(anchor_frame(&[f0.clone(), f0.clone()], &tri), Some(0));
        close(total_area(&f1, &tri), 2.0);
        assert_eq!(anchor_frame(&[], &tri), None);
    }

    #[test]
    fn rmse_hand_computed() {
        // Two vertices off by 3 and 4: RMSE = sqrt((9 + 16) / 2), max 4; scale 0.5 halves both.
        let a = vec![vec![Vec3::ZERO, Vec3::ZERO]];
        let b = vec![vec![Vec3::new(3.0, 0.0, 0.0), Vec3::new(0.0, 4.0, 0.0)]];
        let (r, m) = lbs_rmse(&a, &b, 1.0).unwrap();
        close(r, 12.5f64.sqrt());
        close(m, 4.0);
        let (r, _) = lbs_rmse(&a, &b, 0.5).unwrap();
        close(r, 12.5f64.sqrt() / 2.0);
        assert!(lbs_rmse(&a, &[], 1.0).is_none());
    }

    #[test]
    fn pjdd_hand_computed() {
        // Anchor (0,0,0),(1,0,0),(3,0,0): distances sorted [3, 2, 1].
        // Frame 1: (0,0,0),(1,0,0),(1,2,0): [√5, 2, 1] -> (3 - √5)/3.
        // Frame 2: (0,0,0),(2,0,0): [2] padded [2,0,0] -> (1 + 2 + 1)/3 = 4/3.
        let anchor = vec![Vec3::ZERO, Vec3::X, Vec3::new(3.0, 0.0, 0.0)];
        let f1 = vec![Vec3::ZERO, Vec3::X, Vec3::new(1.0, 2.0, 0.0)];
        let f2 = vec![Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0)];
        let expected = ((3.0 - 5f64.sqrt()) / 3.0 + 4.0 / 3.0) / 2.0;
        let got = pjdd(&[anchor.clone(), f1, f2], 0).unwrap();
        assert!((got - expected).abs() < 1e-6, "{got} {expected}");
        assert!(pjdd(&[anchor], 0).is_none());
    }

    #[test]
    fn laplacian_spectra_and_gsd() {
        // Path of 3: eigenvalues 0, 1, 3. Star with 3 leaves: 0, 1, 1, 4.
        let path = vec![None, Some(0), Some(1)];
        let star = vec![None, Some(0), Some(0), Some(0)];
        let lp = laplacian_spectrum(&path);
        let ls = laplacian_spectrum(&star);
        for (a, b) in lp.iter().zip([0.0, 1.0, 3.0]) {
            close(*a, b);
        }
        for (a, b) in ls.iter().zip([0.0, 1.0, 1.0, 4.0]) {
            close(*a, b);
        }
        // Path padded at the front: [0,0,1,3] vs [0,1,1,4] -> sqrt(0 + 1 + 0 + 1) = √2.
        close(spectral_distance(&lp, &ls), 2f64.sqrt());
        close(
            gsd(&[star.clone(), path.clone(), star.clone()], 0).unwrap(),
            2f64.sqrt() / 2.0,
        );
        close(gsd(&[path.clone(), path], 1).unwrap(), 0.0);
    }

    #[test]
    fn tse_hand_computed() {
        // W1 = [[1,0],[0,1]], W2 = [[.5,.5],[0,1]]: Σ|ΔW| = .5 + .5 = 1; T-1 = 1; N = 2.
        let w = vec![vec![1.0, 0.0, 0.0, 1.0], vec![0.5, 0.5, 0.0, 1.0]];
        assert_eq!(tse(&w, 2), Some((1.0, 0.5)));
        assert_eq!(tse(&w[..1], 2), None);
    }

    #[test]
    fn hungarian_finds_the_minimum() {
        // Costs: rows 0..3, best = (0→1) 1 + (1→0) 2 + (2→2) 2 = 5.
        let c = [4.0, 1.0, 3.0, 2.0, 0.0, 5.0, 3.0, 2.0, 2.0];
        assert_eq!(hungarian(&c, 3, 3), vec![Some(1), Some(0), Some(2)]);
        // 3 rows, 2 columns: row 2 stays unmatched.
        let c = [0.0, 9.0, 9.0, 0.0, 5.0, 5.0];
        assert_eq!(hungarian(&c, 3, 2), vec![Some(0), Some(1), None]);
    }
}
