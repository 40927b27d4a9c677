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

    /// Per bone, its `(vertex, weight)` entries (the transform update walks bones).
    pub(crate) fn by_bone(&self, bones: usize) -> Vec<Vec<(u32, f32)>> {
        let mut out = vec![Vec::new(); bones];
        for v in 0..self.vertex_count() {
            for (b, w) in self.row(v) {
                if let Some(list) = out.get_mut(b as usize) {
                    list.push((v as u32, w));
                }
            }
        }
        out
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
    let by_bone = weights.by_bone(bones);
    (0..source.frame_count())
        .into_par_iter()
        .map(|f| {
            let mut x = Vec::new();
            read_normalised(source, f, norm, &mut x)?;
            let mut transforms = previous.get(f).cloned().unwrap_or_else(|| vec![Rigid::IDENTITY; bones]);
            transforms.resize(bones, Rigid::IDENTITY);
            Ok(fit_frame(&x, rest, weights, &by_bone, transforms, iterations))
        })
        .collect()
}

/// The transform update of one frame (see [`transform_pass`]).
fn fit_frame(
    x: &[Vec3],
    rest: &[Vec3],
    weights: &Weights,
    by_bone: &[Vec<(u32, f32)>],
    mut transforms: Vec<Rigid>,
    iterations: usize,
) -> FrameFit {
    let affine: Vec<(Mat3A, Vec3A)> = transforms.iter().map(Rigid::affine).collect();
    // Residual r_v = x_v − Σ_b w_vb M_b u_v.
    let mut r: Vec<Vec3A> = x
        .iter()
        .zip(rest)
        .enumerate()
        .map(|(v, (xv, u))| {
            let u = Vec3A::from(*u);
            let mut p = Vec3A::ZERO;
            for (b, w) in weights.row(v) {
                if let Some((m, t)) = affine.get(b as usize) {
                    p += w * (*m * u + *t);
                }
            }
            Vec3A::from(*xv) - p
        })
        .collect();
    let mut q: Vec<Vec3A> = Vec::new();
    for _ in 0..iterations {
        for (b, support) in by_bone.iter().enumerate() {
            let Some(current) = transforms.get_mut(b) else { continue };
            let (m, t) = current.affine();
            // Add this bone's contribution back: q_v = r_v + w M_b u_v.
            q.clear();
            let (mut sw2, mut pu, mut pq) = (0.0f64, DVec3::ZERO, DVec3::ZERO);
            for &(v, w) in support {
                let (v, w64) = (v as usize, f64::from(w));
                let u = Vec3A::from(rest[v]);
                let qv = r[v] + w * (m * u + t);
                q.push(qv);
                sw2 += w64 * w64;
                pu += w64 * w64 * DVec3::from(Vec3::from(u));
                pq += w64 * DVec3::from(Vec3::from(qv));
            }
            if sw2 <= 1e-12 {
                continue;
            }
            let (pbar, qbar) = (pu / sw2, pq / sw2);
            let mut s = [[0.0f64; 3]; 3];
            for (&(v, w), qv) in support.iter().zip(&q) {
                let w64 = f64::from(w);
                let a = w64 * (DVec3::from(rest[v as usize]) - pbar);
                let bq = DVec3::from(Vec3::from(*qv)) - w64 * qbar;
                for (i, row) in s.iter_mut().enumerate() {
                    for (j, cell) in row.iter_mut().enumerate() {
                        *cell += a[i] * bq[j];
                    }
                }
            }
            let rot = horn_rotation(&s);
            let tr = qbar - rot * pbar;
            *current = Rigid {
                rotation: rot.as_quat().normalize(),
                translation: tr.as_vec3(),
            };
            let (m, t) = current.affine();
            for (&(v, w), qv) in support.iter().zip(&q) {
                let u = Vec3A::from(rest[v as usize]);
                r[v as usize] = *qv - w * (m * u + t);
            }
        }
    }
    let (sse, max) = r.iter().fold((0.0f64, 0.0f64), |(s, m), e| {
        let d = f64::from(e.length_squared());
        (s + d, m.max(d.sqrt()))
    });
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

/// One pass over the frames accumulating [`Stats`] for `transforms[f][b]`. Frames are read in
/// order; the vertices of each frame are processed in parallel.
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
    let mut x = Vec::new();
    let mut q = vec![[0.0f64; 16]; bones * bones];
    for (f, frame_transforms) in transforms.iter().enumerate() {
        read_normalised(source, f, norm, &mut x)?;
        let affine: Vec<(Mat3A, Vec3A)> = frame_transforms.iter().map(Rigid::affine).collect();
        h.par_chunks_mut(CHUNK * bones.max(1))
            .zip(c.par_chunks_mut(CHUNK))
            .enumerate()
            .for_each(|(chunk, (h, c))| {
                let v0 = chunk * CHUNK;
                for (i, cv) in c.iter_mut().enumerate() {
                    let v = v0 + i;
                    let (Some(u), Some(xv)) = (rest.get(v), x.get(v)) else {
                        continue;
                    };
                    let (u, xv) = (Vec3A::from(*u), Vec3A::from(*xv));
                    *cv += f64::from(xv.length_squared());
                    for (b, (m, t)) in affine.iter().enumerate() {
                        if let Some(hv) = h.get_mut(i * bones + b) {
                            *hv += f64::from((*m * u + *t).dot(xv));
                        }
                    }
                }
            });
        accumulate_q(&mut q, frame_transforms);
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
    q.par_chunks_mut(bones.max(1)).enumerate().for_each(|(a, row)| {
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
    });
}
