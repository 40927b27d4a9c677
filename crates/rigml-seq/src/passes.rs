//! The two passes over the frames that every SSDR iteration makes (docs/ALGORITHMS.md §5):
//! the transform update (weighted Procrustes per bone and frame, other bones held fixed) and the
//! statistics the weight update needs (per vertex and bone `Σ_f (M_fb u_v)·x_fv`, per vertex
//! `Σ_f |x_fv|²`). Both read each frame once through a [`FrameSource`].

use crate::math::horn_rotation;
use crate::source::{FrameSource, Normalisation};
use crate::SeqError;
use glam::{DVec3, Mat3A, Quat, Vec3, Vec3A};
use rayon::prelude::*;

/// Vertices per rayon task in the per-vertex loops.
const CHUNK: usize = 1024;

/// A rigid transform `x ↦ R x + T` (rotation as a unit quaternion), in normalised units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rigid {
    pub rotation: Quat,
    pub translation: Vec3,
}

impl Rigid {
    pub const IDENTITY: Rigid = Rigid {
        rotation: Quat::IDENTITY,
        translation: Vec3::ZERO,
    };

    pub fn apply(&self, p: Vec3) -> Vec3 {
        self.rotation * p + self.translation
    }

    /// Rotation matrix and translation, for applying to many points.
    pub(crate) fn affine(&self) -> (Mat3A, Vec3A) {
        (Mat3A::from_quat(self.rotation), Vec3A::from(self.translation))
    }
}

/// Sparse per-vertex weights with a fixed stride of `k` slots (unused slots have weight 0).
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    pub k: usize,
    pub bone: Vec<u32>,
    pub weight: Vec<f32>,
}

impl Weights {
    /// One bone per vertex with weight 1.
    pub fn one_hot(labels: &[u32], k: usize) -> Weights {
        let k = k.max(1);
        let mut w = Weights {
            k,
            bone: vec![0; labels.len() * k],
            weight: vec![0.0; labels.len() * k],
        };
        for (v, &b) in labels.iter().enumerate() {
            w.bone[v * k] = b;
            w.weight[v * k] = 1.0;
        }
        w
    }

    pub fn vertex_count(&self) -> usize {
        self.bone.len() / self.k.max(1)
    }

    /// The non-zero `(bone, weight)` entries of vertex `v`.
    pub fn row(&self, v: usize) -> impl Iterator<Item = (u32, f32)> + '_ {
        let range = v * self.k..(v + 1) * self.k;
        let bones = self.bone.get(range.clone()).unwrap_or(&[]);
        let weights = self.weight.get(range).unwrap_or(&[]);
        bones
            .iter()
            .copied()
            .zip(weights.iter().copied())
            .filter(|(_, w)| *w > 0.0)
    }

    /// The bone of largest weight per vertex.
    pub fn dominant(&self) -> Vec<u32> {
        (0..self.vertex_count())
            .map(|v| self.row(v).max_by(|a, b| a.1.total_cmp(&b.1)).map_or(0, |e| e.0))
            .collect()
    }
}

/// Frame `f` of `source` in normalised units, into `buf`.
pub(crate) fn read_normalised(
    source: &dyn FrameSource,
    f: usize,
    norm: &Normalisation,
    buf: &mut Vec<Vec3>,
) -> Result<(), SeqError> {
    source.read_frame(f, buf)?;
    if buf.len() != source.vertex_count() {
        return Err(SeqError::Source {
            frame: f,
            message: format!("{} vertices, expected {}", buf.len(), source.vertex_count()),
        });
    }
    if let Some(v) = buf.iter().position(|p| !p.is_finite()) {
        return Err(SeqError::Source {
            frame: f,
            message: format!("vertex {v} is not finite"),
        });
    }
    for p in buf.iter_mut() {
        *p = norm.apply(*p);
    }
    Ok(())
}

/// Result of the transform update on one frame.
pub(crate) struct FrameFit {
    pub transforms: Vec<Rigid>,
    /// `Σ_v |x_v − x̂_v|²` after the update.
    pub sse: f64,
    /// `max_v |x_v − x̂_v|`.
    pub max: f64,
}

/// What the transform update needs of the weights and the rest mesh, computed once per pass:
/// for every pair of bones that share a vertex, `U_ab = Σ_v w_va w_vb ũ_v ũ_vᵀ` (4×4, ũ the
/// homogeneous rest point). With these and one sum per frame and bone,
/// `V_b = Σ_v w_vb x_v ũ_vᵀ` (3×4), a bone's Procrustes problem needs no pass over its
/// vertices: Dem Bones' formulation of the same update (Le & Deng 2012).
pub(crate) struct Moments {
    /// Per bone `b`: `(a, U_ab)` for every bone `a` sharing a vertex with it (`a == b` included).
    pairs: Vec<Vec<(usize, [[f64; 4]; 4])>>,
}

impl Moments {
    pub(crate) fn of(weights: &Weights, rest: &[Vec3], bones: usize) -> Moments {
        // Pairs are summed in a dense table up to 256 bones (65 536 cells), in a map beyond.
        Moments::summed(weights, rest, bones, bones <= 256)
    }

    fn summed(weights: &Weights, rest: &[Vec3], bones: usize, dense: bool) -> Moments {
        let mut table: Vec<Option<[[f64; 4]; 4]>> = if dense { vec![None; bones * bones] } else { Vec::new() };
        let mut map: std::collections::HashMap<(usize, usize), [[f64; 4]; 4]> = std::collections::HashMap::new();
        let mut row: Vec<(usize, f64)> = Vec::new();
        for (v, u) in rest.iter().enumerate() {
            let uh = [f64::from(u.x), f64::from(u.y), f64::from(u.z), 1.0];
            row.clear();
            row.extend(
                weights
                    .row(v)
                    .filter(|(b, _)| (*b as usize) < bones)
                    .map(|(b, w)| (b as usize, f64::from(w))),
            );
            for &(a, wa) in &row {
                for &(b, wb) in &row {
                    let cell = if dense {
                        table[a * bones + b].get_or_insert([[0.0; 4]; 4])
                    } else {
                        map.entry((a, b)).or_insert([[0.0; 4]; 4])
                    };
                    let w = wa * wb;
                    for i in 0..4 {
                        for j in 0..4 {
                            cell[i][j] += w * uh[i] * uh[j];
                        }
                    }
                }
            }
        }
        let mut pairs = vec![Vec::new(); bones];
        if dense {
            for (i, cell) in table.into_iter().enumerate() {
                if let Some(m) = cell {
                    pairs[i % bones].push((i / bones, m));
                }
            }
        } else {
            for ((a, b), m) in map {
                pairs[b].push((a, m));
            }
            // A fixed order, so that results do not depend on the map's.
            for list in &mut pairs {
                list.sort_by_key(|e| e.0);
            }
        }
        Moments { pairs }
    }

    /// `U_bb`, if bone `b` has any vertex.
    fn own(&self, b: usize) -> Option<&[[f64; 4]; 4]> {
        self.pairs.get(b)?.iter().find(|e| e.0 == b).map(|e| &e.1)
    }
}

/// Update every frame's bone transforms given the weights: `iterations` Gauss–Seidel sweeps over
/// the bones, each a weighted Procrustes fit of the frame's residual with that bone added back
/// (Le & Deng 2012). Frames are independent and run in parallel.
pub(crate) fn transform_pass(
    source: &dyn FrameSource,
    norm: &Normalisation,
    rest: &[Vec3],
    weights: &Weights,
    previous: &[Vec<Rigid>],
    iterations: usize,
) -> Result<Vec<FrameFit>, SeqError> {
    let bones = previous.first().map_or(0, Vec::len);
    let moments = Moments::of(weights, rest, bones);
    (0..source.frame_count())
        .into_par_iter()
        .map(|f| {
            let mut x = Vec::new();
            read_normalised(source, f, norm, &mut x)?;
            let mut transforms = previous.get(f).cloned().unwrap_or_else(|| vec![Rigid::IDENTITY; bones]);
            transforms.resize(bones, Rigid::IDENTITY);
            Ok(fit_frame(&x, rest, weights, &moments, transforms, iterations))
        })
        .collect()
}

/// A rigid transform as the 3×4 matrix `[R | T]` (rows).
type Affine34 = [[f64; 4]; 3];

fn affine34(rotation: glam::DQuat, t: DVec3) -> Affine34 {
    let m = glam::DMat3::from_quat(rotation);
    std::array::from_fn(|i| [m.col(0)[i], m.col(1)[i], m.col(2)[i], t[i]])
}

/// The transform update of one frame (see [`transform_pass`]). For bone `b`, with
/// `q_v = x_v − Σ_{a≠b} w_va M_a ũ_v` (the frame less the other bones),
/// `G = Σ_v w_vb q_v ũ_vᵀ = V_b − Σ_{a≠b} M_a U_ab`; the weighted Procrustes problem
/// `min Σ_v |q_v − w_vb (R u_v + T)|²` then has the cross-covariance
/// `S = Σ_v w_vb (u_v − c) q_vᵀ` (its entries from `G` and `c = Σ w² u / Σ w²`) and
/// `T = Σ w q / Σ w² − R c`. The sweeps cost a few 3×4·4×4 products per bone pair; the frame's
/// vertices are read twice (for `V` and for the final residuals).
fn fit_frame(
    x: &[Vec3],
    rest: &[Vec3],
    weights: &Weights,
    moments: &Moments,
    mut transforms: Vec<Rigid>,
    iterations: usize,
) -> FrameFit {
    let bones = transforms.len();
    let mut v_sum: Vec<Affine34> = vec![[[0.0; 4]; 3]; bones];
    for (v, (xv, u)) in x.iter().zip(rest).enumerate() {
        let uh = [f64::from(u.x), f64::from(u.y), f64::from(u.z), 1.0];
        let xd = xv.as_dvec3();
        for (b, w) in weights.row(v) {
            if let Some(m) = v_sum.get_mut(b as usize) {
                let w = f64::from(w);
                for i in 0..3 {
                    let wx = w * xd[i];
                    for j in 0..4 {
                        m[i][j] += wx * uh[j];
                    }
                }
            }
        }
    }
    let mut m: Vec<Affine34> = transforms
        .iter()
        .map(|r| affine34(r.rotation.as_dquat(), r.translation.as_dvec3()))
        .collect();
    for _ in 0..iterations {
        for b in 0..bones {
            let Some(own) = moments.own(b) else { continue };
            let sw2 = own[3][3];
            if sw2 <= 1e-12 {
                continue;
            }
            let mut g = v_sum[b];
            for (a, u_ab) in &moments.pairs[b] {
                if *a == b {
                    continue;
                }
                let ma = &m[*a];
                for i in 0..3 {
                    for j in 0..4 {
                        g[i][j] -= ma[i][0] * u_ab[0][j]
                            + ma[i][1] * u_ab[1][j]
                            + ma[i][2] * u_ab[2][j]
                            + ma[i][3] * u_ab[3][j];
                    }
                }
            }
            let c = DVec3::new(own[0][3], own[1][3], own[2][3]) / sw2;
            let pq = DVec3::new(g[0][3], g[1][3], g[2][3]);
            // S[x][y] = Σ w (u_x − c_x) q_y = G[y][x] − c_x pq_y.
            let s: [[f64; 3]; 3] = std::array::from_fn(|xi| std::array::from_fn(|yi| g[yi][xi] - c[xi] * pq[yi]));
            let rot = horn_rotation(&s);
            let t = pq / sw2 - rot * c;
            transforms[b] = Rigid {
                rotation: rot.as_quat().normalize(),
                translation: t.as_vec3(),
            };
            m[b] = affine34(rot, t);
        }
    }
    // Residuals of the final transforms: x_v − Σ_b w_vb M_b ũ_v.
    let affine: Vec<(Mat3A, Vec3A)> = transforms.iter().map(Rigid::affine).collect();
    let (mut sse, mut max) = (0.0f64, 0.0f64);
    for (v, (xv, u)) in x.iter().zip(rest).enumerate() {
        let u = Vec3A::from(*u);
        let mut p = Vec3A::ZERO;
        for (b, w) in weights.row(v) {
            if let Some((m, t)) = affine.get(b as usize) {
                p += w * (*m * u + *t);
            }
        }
        let d = f64::from((Vec3A::from(*xv) - p).length_squared());
        sse += d;
        max = max.max(d.sqrt());
    }
    FrameFit { transforms, sse, max }
}

/// Per-vertex sums over frames for the weight update and the rigid-fit errors.
pub(crate) struct Stats {
    pub bones: usize,
    /// `h[v * bones + b] = Σ_f (M_fb u_v) · x_fv`.
    pub h: Vec<f64>,
    /// `c[v] = Σ_f |x_fv|²`.
    pub c: Vec<f64>,
    /// `q[(a * bones + b)]` = `Σ_f M_faᵀ M_fb` as a row-major 4×4 (M = [R | T], 3×4).
    pub q: Vec<[f64; 16]>,
    pub frames: usize,
}

impl Stats {
    /// `ũᵀ Q_ab ũ` for the homogeneous rest point ũ = (u, 1): `Σ_f (M_fa u)·(M_fb u)`.
    pub fn gram(&self, a: usize, b: usize, u: Vec3) -> f64 {
        let Some(m) = self.q.get(a * self.bones + b) else {
            return 0.0;
        };
        let uh = [f64::from(u.x), f64::from(u.y), f64::from(u.z), 1.0];
        let mut s = 0.0;
        for i in 0..4 {
            for j in 0..4 {
                s += uh[i] * m[i * 4 + j] * uh[j];
            }
        }
        s
    }

    /// `Σ_f |M_fb u_v − x_fv|²`: how well bone `b` alone explains vertex `v`.
    pub fn rigid_error(&self, v: usize, b: usize, u: Vec3) -> f64 {
        let h = self.h.get(v * self.bones + b).copied().unwrap_or(0.0);
        let c = self.c.get(v).copied().unwrap_or(0.0);
        (self.gram(b, b, u) - 2.0 * h + c).max(0.0)
    }
}

/// Frames read per block of [`stats_pass`]: one parallel pass over the vertices per block
/// rather than per frame (on Dem Bones' 754-vertex example, two thread wake-ups per frame cost
/// more than the arithmetic).
const FRAME_BLOCK: usize = 32;

/// One pass over the frames accumulating [`Stats`] for `transforms[f][b]`. Frames are read in
/// order, [`FRAME_BLOCK`] at a time; the vertices of each block are processed in parallel, each
/// vertex's sums taken over the frames in order (the result does not depend on the threads).
pub(crate) fn stats_pass(
    source: &dyn FrameSource,
    norm: &Normalisation,
    rest: &[Vec3],
    transforms: &[Vec<Rigid>],
) -> Result<Stats, SeqError> {
    let bones = transforms.first().map_or(0, Vec::len);
    let n = rest.len();
    let mut h = vec![0.0f64; n * bones];
    let mut c = vec![0.0f64; n];
    let mut q = vec![[0.0f64; 16]; bones * bones];
    let chunk = n.div_ceil(8).clamp(64, CHUNK);
    let mut block: Vec<Vec<Vec3>> = Vec::new();
    for start in (0..transforms.len()).step_by(FRAME_BLOCK) {
        let end = (start + FRAME_BLOCK).min(transforms.len());
        block.resize_with(end - start, Vec::new);
        for (f, x) in (start..end).zip(block.iter_mut()) {
            read_normalised(source, f, norm, x)?;
        }
        let affine: Vec<Vec<(Mat3A, Vec3A)>> = transforms[start..end]
            .iter()
            .map(|frame| frame.iter().map(Rigid::affine).collect())
            .collect();
        let block = &block;
        h.par_chunks_mut(chunk * bones.max(1))
            .zip(c.par_chunks_mut(chunk))
            .enumerate()
            .for_each(|(k, (h, c))| {
                let v0 = k * chunk;
                for (i, cv) in c.iter_mut().enumerate() {
                    let v = v0 + i;
                    let Some(u) = rest.get(v) else { continue };
                    let u = Vec3A::from(*u);
                    for (x, affine) in block.iter().zip(&affine) {
                        let Some(xv) = x.get(v) else { continue };
                        let xv = Vec3A::from(*xv);
                        *cv += f64::from(xv.length_squared());
                        for (b, (m, t)) in affine.iter().enumerate() {
                            if let Some(hv) = h.get_mut(i * bones + b) {
                                *hv += f64::from((*m * u + *t).dot(xv));
                            }
                        }
                    }
                }
            });
        for frame_transforms in &transforms[start..end] {
            accumulate_q(&mut q, frame_transforms);
        }
    }
    Ok(Stats {
        bones,
        h,
        c,
        q,
        frames: transforms.len(),
    })
}

/// Add `M_aᵀ M_b` (4×4) of one frame to every bone pair's sum.
fn accumulate_q(q: &mut [[f64; 16]], transforms: &[Rigid]) {
    let bones = transforms.len();
    let cols: Vec<[DVec3; 4]> = transforms
        .iter()
        .map(|r| {
            let m = glam::DMat3::from_quat(r.rotation.as_dquat());
            [m.x_axis, m.y_axis, m.z_axis, r.translation.as_dvec3()]
        })
        .collect();
    let pair_row = |(a, row): (usize, &mut [[f64; 16]])| {
        let Some(ca) = cols.get(a) else { return };
        for (b, cell) in row.iter_mut().enumerate() {
            let Some(cb) = cols.get(b) else { continue };
            for i in 0..4 {
                for j in 0..4 {
                    // (M_aᵀ M_b)_ij = column i of M_a · column j of M_b (M is 3×4: [R | T]).
                    cell[i * 4 + j] += ca[i].dot(cb[j]);
                }
            }
        }
    };
    // Rows in parallel only where there are enough pairs to pay for waking threads.
    if bones >= 64 {
        q.par_chunks_mut(bones).enumerate().for_each(pair_row);
    } else {
        q.chunks_mut(bones.max(1)).enumerate().for_each(pair_row);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_are_the_same_from_the_table_and_the_map() {
        let rest: Vec<Vec3> = (0..40)
            .map(|i| Vec3::new(i as f32 * 0.1, (i % 7) as f32, 0.5))
            .collect();
        let mut weights = Weights {
            k: 2,
            bone: vec![0; 80],
            weight: vec![0.0; 80],
        };
        for v in 0..40 {
            weights.bone[2 * v] = (v % 5) as u32;
            weights.bone[2 * v + 1] = ((v + 1) % 5) as u32;
            weights.weight[2 * v] = 0.7;
            weights.weight[2 * v + 1] = if v % 3 == 0 { 0.0 } else { 0.3 };
        }
        let (a, b) = (
            Moments::summed(&weights, &rest, 6, true),
            Moments::summed(&weights, &rest, 6, false),
        );
        assert_eq!(a.pairs, b.pairs);
        // Bone 5 has no vertex; bone 0 shares vertices with bones 1 and 4 (and itself).
        assert!(a.own(5).is_none() && a.pairs[5].is_empty());
        assert_eq!(a.pairs[0].iter().map(|e| e.0).collect::<Vec<_>>(), [0, 1, 4]);
        // U_00's corner is Σ w² over bone 0's vertices.
        let expected: f64 = (0..40)
            .filter(|v| v % 5 == 0 || (v + 1) % 5 == 0)
            .map(|v| {
                let w = if v % 5 == 0 {
                    0.7f64
                } else if v % 3 == 0 {
                    0.0
                } else {
                    0.3
                };
                (w as f32 as f64).powi(2)
            })
            .sum();
        assert!((a.own(0).unwrap()[3][3] - expected).abs() < 1e-9);
    }
}
