//! Posing a skinned character so that its mesh matches a target frame of the same topology
//! (issue 33, `rigml rig-seq`): joint rotations, plus a translation on the body root, found by
//! block coordinate descent over the hierarchy on the linear-blend-skinning residual.
//!
//! The skeleton never changes shape: every joint keeps its bind offset from its parent, so bone
//! lengths are those of the rig in every frame (SPRig's skeleton stability is 0 by
//! construction), and the one skin is used for every frame (temporal skinning error 0).
//!
//! One block is a joint's rotation about its own current position, which moves the joint's whole
//! subtree rigidly. With the skinned positions split as `x_v = A_v + B_v` (`B_v`: the part
//! blended from the subtree's joints, with weight `s_v`), rotating by `R` about pivot `p` gives
//! `A_v + R (B_v − s_v p) + s_v p`, so the best `R` for the target `y_v` is a weighted
//! Procrustes problem with a closed form (Horn's quaternion method): an exact minimisation of the
//! full residual in that block, so no sweep ever raises the error. The body root's block also
//! takes a translation. Sweeps go from the root outward, which is the classic initialisation
//! (per-bone Procrustes from the root, joints kept connected) repeated until it stalls.
//!
//! Cost per sweep: each block's solve comes from moments (`block_moments`): per joint of its
//! subtree and per joint pair across the subtree's boundary, not per vertex; the sweep then
//! reskins the mesh once for its error (O(V · influences)). The moments of a frame's target
//! cost one pass over the vertices per fit.

use crate::block_moments::{BlockMoments, FrameMoments};
use crate::SeqError;
use glam::{DQuat, DVec3, Mat4, Vec3};
use rayon::prelude::*;
use rigml_core::{Skeleton, Skin, Transform};

/// How hard to fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitOptions {
    /// Most sweeps over the joints per frame.
    pub sweeps: usize,
    /// Stop when a sweep lowers the squared error by less than this fraction.
    pub tolerance: f64,
    /// Let every joint translate too (free bones, as a skinning decomposition has): the motion
    /// [`PoseFitter::with_pivots`] reads joint positions from. Off for a rig's clip.
    pub free: bool,
    /// Most Levenberg–Marquardt steps over all joints at once after the sweeps (connected fits
    /// only): the sweeps move one joint at a time and crawl where a chain's joints must turn
    /// together; a joint step moves them all.
    pub joint_steps: usize,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            sweeps: 50,
            tolerance: 1e-5,
            free: false,
            joint_steps: 0,
        }
    }
}

/// A rigid map `x ↦ r x + t` (double precision: sweeps compose many of them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rigid {
    pub r: DQuat,
    pub t: DVec3,
}

impl Rigid {
    pub const IDENTITY: Rigid = Rigid {
        r: DQuat::IDENTITY,
        t: DVec3::ZERO,
    };

    pub fn apply(&self, p: DVec3) -> DVec3 {
        self.r * p + self.t
    }

    /// `self` after `inner`.
    pub fn after(&self, inner: &Rigid) -> Rigid {
        Rigid {
            r: (self.r * inner.r).normalize(),
            t: self.r * inner.t + self.t,
        }
    }

    pub fn to_mat4(self) -> Mat4 {
        Mat4::from_rotation_translation(self.r.as_quat(), self.t.as_vec3())
    }
}

/// One frame's fitted pose: the skinning map of every joint (bind → frame) and the residual.
#[derive(Debug, Clone, PartialEq)]
pub struct FittedPose {
    /// Per joint: bind space → this frame (the skinning matrix, always rigid).
    pub skinning: Vec<Rigid>,
    /// Sum over vertices of the squared distance to the target, in the input's units.
    pub squared_error: f64,
    /// Sweeps run.
    pub sweeps: usize,
}

/// A skinned character, prepared for fitting to many frames.
#[derive(Debug, Clone)]
pub struct PoseFitter {
    skeleton: Skeleton,
    /// Bind positions of the vertices.
    rest: Vec<DVec3>,
    /// Per vertex: `(joint, weight)`.
    rows: Vec<Vec<(usize, f64)>>,
    /// Joints in fitting order (parents first), with the vertices their subtree moves.
    blocks: Vec<Block>,
    /// Bind-pose world position of every joint.
    joint_bind: Vec<DVec3>,
    /// Joints never moved nor given weight by [`PoseFitter::reweighted`].
    fixed: Vec<bool>,
    /// Per vertex: the blocks (indices into `blocks`) that move it, in block order.
    moved_by: Vec<Vec<usize>>,
    skin: Skin,
}

#[derive(Debug, Clone)]
struct Block {
    joint: usize,
    translates: bool,
    /// In the subtree, per joint.
    in_subtree: Vec<bool>,
    vertices: Vec<usize>,
    /// The sweep's solve without the vertices.
    moments: BlockMoments,
}

impl Block {
    /// Apply `g` after the skinning map of every joint of the subtree: the block's motion.
    fn moved(&self, g: &Rigid, skinning: &mut [Rigid]) {
        for (k, inside) in self.in_subtree.iter().enumerate() {
            if *inside {
                skinning[k] = g.after(&skinning[k]);
            }
        }
    }
}

impl PoseFitter {
    /// Prepare `skeleton` and `skin` over `rest` (the mesh the skin was made for, bound in the
    /// skeleton's bind pose). `fixed[j]` joints are never rotated (control joints such as a
    /// weightless ground root); the first free joint below each chain of fixed joints (a root,
    /// or the body root under a ground root) also takes a translation.
    pub fn new(skeleton: &Skeleton, skin: &Skin, rest: &[Vec3], fixed: &[bool]) -> Result<PoseFitter, SeqError> {
        let n = skeleton.joint_count();
        skeleton.validate()?;
        skin.validate(rest.len(), n)?;
        if fixed.len() != n {
            return Err(SeqError::Options(format!("{} fixed flags for {n} joints", fixed.len())));
        }
        if rest.is_empty() {
            return Err(SeqError::Empty);
        }
        let order = topological(&skeleton.parents);
        // Subtree membership: j is in the subtree of each of its ancestors.
        let mut in_subtree = vec![vec![false; n]; n];
        for (j, first) in skeleton.parents.iter().enumerate() {
            in_subtree[j][j] = true;
            let mut a = *first;
            while let Some(k) = a {
                in_subtree[k][j] = true;
                a = skeleton.parents[k];
            }
        }
        let rows: Vec<Vec<(usize, f64)>> = skin
            .rows()
            .map(|row| {
                row.iter()
                    .filter(|i| i.weight > 0.0)
                    .map(|i| (i.joint as usize, f64::from(i.weight)))
                    .collect()
            })
            .collect();
        let rest_d: Vec<DVec3> = rest.iter().map(|p| p.as_dvec3()).collect();
        let mut blocks = Vec::new();
        for &j in &order {
            if fixed[j] {
                continue;
            }
            let vertices: Vec<usize> = (0..rows.len())
                .filter(|&v| rows[v].iter().any(|&(k, _)| in_subtree[j][k]))
                .collect();
            if vertices.is_empty() {
                continue;
            }
            let mut above = skeleton.parents[j];
            let mut translates = true;
            while let Some(p) = above {
                if !fixed[p] {
                    translates = false;
                    break;
                }
                above = skeleton.parents[p];
            }
            blocks.push(Block {
                joint: j,
                translates,
                moments: BlockMoments::new(&vertices, &rows, &rest_d, &in_subtree[j]),
                in_subtree: in_subtree[j].clone(),
                vertices,
            });
        }
        let mut moved_by: Vec<Vec<usize>> = vec![Vec::new(); rest.len()];
        for (b, block) in blocks.iter().enumerate() {
            for &v in &block.vertices {
                moved_by[v].push(b);
            }
        }
        let joint_bind = skeleton
            .bind_world()
            .iter()
            .map(|m| m.w_axis.truncate().as_dvec3())
            .collect();
        Ok(PoseFitter {
            skeleton: skeleton.clone(),
            rest: rest_d,
            rows,
            blocks,
            joint_bind,
            fixed: fixed.to_vec(),
            moved_by,
            skin: skin.clone(),
        })
    }

    /// A connected pose near free bones' (fits with [`FitOptions::free`]): every joint keeps
    /// its free bone's rotation, and its translation is set, root outward, so that the joint
    /// sits where its parent carries it (the roots and the joints that translate keep theirs).
    /// A start for the connected fit that the hierarchy's coupling cannot mislead.
    pub fn connected(&self, free: &[Rigid]) -> Vec<Rigid> {
        let mut out = free.to_vec();
        let translating: Vec<usize> = self.translating_joints();
        for j in topological(&self.skeleton.parents) {
            let Some(p) = self.skeleton.parents[j] else { continue };
            if translating.contains(&j) {
                continue;
            }
            let pivot = self.joint_bind[j];
            let r = if self.blocks.iter().any(|b| b.joint == j) {
                out[j].r
            } else {
                out[p].r
            };
            out[j] = Rigid {
                r,
                t: out[p].apply(pivot) - r * pivot,
            };
        }
        out
    }

    /// Vertex `v`'s skinned position split for `block`: the part blended from the block's
    /// subtree under `skinning` (`B_v`) and that part's weight (`s_v`).
    fn subtree_share(&self, block: &Block, v: usize, skinning: &[Rigid]) -> (DVec3, f64) {
        let (mut b, mut w) = (DVec3::ZERO, 0.0);
        for &(k, wk) in &self.rows[v] {
            if block.in_subtree[k] {
                b += skinning[k].apply(self.rest[v]) * wk;
                w += wk;
            }
        }
        (b, w)
    }

    /// The skin it fits with.
    pub fn skin(&self) -> &Skin {
        &self.skin
    }

    /// Joints of the rig.
    pub fn joint_count(&self) -> usize {
        self.skeleton.joint_count()
    }

    /// Vertices of the skinned mesh.
    pub fn vertex_count(&self) -> usize {
        self.rest.len()
    }

    /// Per joint, whether it is fixed (never rotated nor weighted; see [`PoseFitter::new`]).
    pub fn fixed(&self) -> &[bool] {
        &self.fixed
    }

    /// The joints the fit moves (each carries weight in its subtree and is not fixed).
    pub fn moving_joints(&self) -> Vec<usize> {
        self.blocks.iter().map(|b| b.joint).collect()
    }

    /// The joints that also take a translation.
    pub fn translating_joints(&self) -> Vec<usize> {
        self.blocks.iter().filter(|b| b.translates).map(|b| b.joint).collect()
    }

    /// Skinned positions for the given skinning maps.
    pub fn skinned(&self, skinning: &[Rigid]) -> Vec<DVec3> {
        self.rows
            .iter()
            .zip(&self.rest)
            .map(|(row, &x)| {
                if row.is_empty() {
                    x
                } else {
                    row.iter().map(|&(k, w)| skinning[k].apply(x) * w).sum()
                }
            })
            .collect()
    }

    /// Fit to `target` starting from `start` (per joint skinning maps, e.g. the neighbouring
    /// frame's; the bind pose is all identities).
    pub fn fit(&self, target: &[Vec3], start: &[Rigid], options: &FitOptions) -> Result<FittedPose, SeqError> {
        if target.len() != self.rest.len() {
            return Err(SeqError::Options(format!(
                "the frame has {} vertices, the rig {}",
                target.len(),
                self.rest.len()
            )));
        }
        if start.len() != self.skeleton.joint_count() {
            return Err(SeqError::Options(format!(
                "{} start transforms for {} joints",
                start.len(),
                self.skeleton.joint_count()
            )));
        }
        let y: Vec<DVec3> = target.iter().map(|p| p.as_dvec3()).collect();
        let mut s = start.to_vec();
        let mut x = self.skinned(&s);
        let mut error = squared_distance(&x, &y);
        let mut sweeps = 0;
        let frame = FrameMoments::new(&self.rows, &self.rest, &y, s.len());
        let mut rotations: Vec<glam::DMat3> = s.iter().map(|m| glam::DMat3::from_quat(m.r)).collect();
        while sweeps < options.sweeps {
            sweeps += 1;
            for block in &self.blocks {
                let pivot = s[block.joint].apply(self.joint_bind[block.joint]);
                let centred = block.translates || options.free;
                let g = block.moments.solve(&frame, &s, &rotations, centred, pivot);
                if g == Rigid::IDENTITY {
                    continue;
                }
                block.moved(&g, &mut s);
                for (k, inside) in block.in_subtree.iter().enumerate() {
                    if *inside {
                        rotations[k] = glam::DMat3::from_quat(s[k].r);
                    }
                }
            }
            x = self.skinned(&s);
            let next = squared_distance(&x, &y);
            let gain = error - next;
            error = next;
            if gain <= options.tolerance * error.max(f64::MIN_POSITIVE) {
                break;
            }
        }
        if !options.free && options.joint_steps > 0 {
            (s, error) = self.joint_steps(&y, s, error, options);
        }
        Ok(FittedPose {
            skinning: s,
            squared_error: error,
            sweeps,
        })
    }

    /// Levenberg–Marquardt over every block at once: per block a small rotation about its
    /// joint (world axes) and, where the block translates, a translation. The derivative of a
    /// vertex's skinned position under block `b`'s rotation `δθ` is `δθ × (B_v − s_v p_b)` (the
    /// split of [`PoseFitter::fit`]), under its translation `s_v δt`. A step is applied deepest
    /// joint first, each rotation about its joint's position before the step, so joints stay
    /// connected and bone lengths fixed; a step that raises the error is not taken.
    fn joint_steps(&self, y: &[DVec3], mut s: Vec<Rigid>, mut error: f64, options: &FitOptions) -> (Vec<Rigid>, f64) {
        // Parameter offset of every block: 3 for its rotation, 3 more for a translation.
        let mut offset = Vec::with_capacity(self.blocks.len());
        let mut count = 0;
        for block in &self.blocks {
            offset.push(count);
            count += if block.translates { 6 } else { 3 };
        }
        if count == 0 {
            return (s, error);
        }
        let mut lambda = 1e-3;
        let mut x = self.skinned(&s);
        let mut h = vec![0.0f64; count * count];
        let mut g = vec![0.0f64; count];
        // Per vertex and moving block: the 3×3 derivative columns (rotation, translation).
        let mut columns: Vec<(usize, glam::DMat3, Option<f64>)> = Vec::new();
        for _ in 0..options.joint_steps {
            h.iter_mut().for_each(|e| *e = 0.0);
            g.iter_mut().for_each(|e| *e = 0.0);
            let pivots: Vec<DVec3> = self
                .blocks
                .iter()
                .map(|b| s[b.joint].apply(self.joint_bind[b.joint]))
                .collect();
            for (v, blocks) in self.moved_by.iter().enumerate() {
                if blocks.is_empty() {
                    continue;
                }
                let r = x[v] - y[v];
                columns.clear();
                for &b in blocks {
                    let block = &self.blocks[b];
                    let (bv, sv) = self.subtree_share(block, v, &s);
                    // δθ × u = −[u]× δθ.
                    let u = bv - pivots[b] * sv;
                    let jr = -skew(u);
                    columns.push((b, jr, block.translates.then_some(sv)));
                }
                for (i, &(bi, ji, ti)) in columns.iter().enumerate() {
                    let oi = offset[bi];
                    let gr = ji.transpose() * r;
                    for a in 0..3 {
                        g[oi + a] += gr[a];
                    }
                    if let Some(t) = ti {
                        for a in 0..3 {
                            g[oi + 3 + a] += t * r[a];
                        }
                    }
                    for (j, &(bj, jj, tj)) in columns.iter().enumerate().skip(i) {
                        let oj = offset[bj];
                        // Off the diagonal, each block also goes in transposed.
                        let both = j != i;
                        add_block(&mut h, count, oi, oj, &(ji.transpose() * jj), both);
                        if let Some(t) = tj {
                            add_block(&mut h, count, oi, oj + 3, &(ji.transpose() * t), both);
                        }
                        if let Some(t) = ti {
                            add_block(&mut h, count, oi + 3, oj, &(jj * t), both);
                            if let Some(u) = tj {
                                add_block(&mut h, count, oi + 3, oj + 3, &(glam::DMat3::IDENTITY * (t * u)), both);
                            }
                        }
                    }
                }
            }
            let mut improved = false;
            for _ in 0..8 {
                let mut a = h.clone();
                for i in 0..count {
                    a[i * count + i] += lambda * h[i * count + i].max(1e-12);
                }
                let mut step: Vec<f64> = g.iter().map(|e| -e).collect();
                if crate::math::solve_dense(&mut a, &mut step, count).is_none() {
                    lambda *= 10.0;
                    continue;
                }
                let mut next = s.clone();
                for (b, block) in self.blocks.iter().enumerate().rev() {
                    let o = offset[b];
                    let theta = DVec3::new(step[o], step[o + 1], step[o + 2]);
                    let r = DQuat::from_scaled_axis(theta);
                    let t = if block.translates {
                        DVec3::new(step[o + 3], step[o + 4], step[o + 5])
                    } else {
                        DVec3::ZERO
                    };
                    let gmap = Rigid {
                        r,
                        t: pivots[b] - r * pivots[b] + t,
                    };
                    block.moved(&gmap, &mut next);
                }
                let nx = self.skinned(&next);
                let ne = squared_distance(&nx, y);
                if ne < error {
                    let gain = error - ne;
                    (s, x, error) = (next, nx, ne);
                    lambda = (lambda / 3.0).max(1e-9);
                    improved = gain > options.tolerance * error.max(f64::MIN_POSITIVE);
                    break;
                }
                lambda *= 4.0;
            }
            if !improved {
                break;
            }
        }
        (s, error)
    }

    /// Local joint transforms (parent space) of a fitted pose: the clip's keys. Joint offsets
    /// (translations) are the bind pose's except where a joint translates.
    pub fn local_pose(&self, skinning: &[Rigid]) -> Vec<Transform> {
        let bind = self.skeleton.bind_world();
        let world: Vec<Mat4> = skinning.iter().zip(&bind).map(|(s, b)| s.to_mat4() * *b).collect();
        (0..world.len())
            .map(|j| {
                let local = match self.skeleton.parents[j] {
                    Some(p) => world[p].inverse() * world[j],
                    None => world[j],
                };
                let mut t = Transform::from_mat4(&local);
                t.rotation = t.rotation.normalize();
                t
            })
            .collect()
    }
}

impl PoseFitter {
    /// The skeleton being fitted.
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// Move every joint to the point its bone and its parent's bone move most nearly alike
    /// over the frames of `free_poses` (fits with [`FitOptions::free`]):
    /// `argmin_p Σ_f |M_fj p − M_fparent p|² + μ|p − p₀|²` with `p₀` the joint's current
    /// position and `μ = pull × frames` (after Le & Deng 2014's joint fitting). A joint that
    /// does not bend in the sequence stays where it was; roots, fixed joints, joints whose
    /// subtree carries no weight, and joints whose point falls outside the mesh's bounding box
    /// stay too. Joint orientations are kept; returns the skeleton
    /// with its new bind (= rest) pose and a fitter for it with the same skin.
    pub fn with_pivots(&self, free_poses: &[Vec<Rigid>], pull: f64) -> Result<(Skeleton, PoseFitter), SeqError> {
        let n = self.skeleton.joint_count();
        if free_poses.iter().any(|p| p.len() != n) {
            return Err(SeqError::Options("a pose has the wrong joint count".into()));
        }
        let moving: Vec<bool> = {
            let mut m = vec![false; n];
            for b in &self.blocks {
                m[b.joint] = true;
            }
            m
        };
        let bind = self.skeleton.bind_world();
        let mut position: Vec<DVec3> = self.joint_bind.clone();
        let mu = pull * free_poses.len() as f64;
        let (lo, hi) = self.rest.iter().fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(lo, hi), &p| (lo.min(p), hi.max(p)),
        );
        let inside = |p: DVec3| p.cmpge(lo).all() && p.cmple(hi).all();
        for j in 0..n {
            let Some(p) = self.skeleton.parents[j] else { continue };
            if !moving[j] || !moving[p] {
                continue;
            }
            let (mut ata, mut atc) = ([[0.0f64; 3]; 3], DVec3::ZERO);
            for pose in free_poses {
                let a = glam::DMat3::from_quat(pose[j].r) - glam::DMat3::from_quat(pose[p].r);
                let c = pose[j].t - pose[p].t;
                let g = a.transpose() * a;
                for (r, row) in ata.iter_mut().enumerate() {
                    for (col, cell) in row.iter_mut().enumerate() {
                        *cell += g.col(col)[r];
                    }
                }
                atc += a.transpose() * c;
            }
            let point = crate::math::regularised_point(&ata, atc, mu, self.joint_bind[j]);
            // A pivot outside the mesh's box is no joint a rigger would keep: where a bone and
            // its parent move almost alike the solve is ill-posed and the point can land far
            // off (the fox walk's `joint_022_L`, 6 sizes away after 16 placings).
            if point.is_finite() && inside(point) {
                position[j] = point;
            }
        }
        let world: Vec<Mat4> = bind
            .iter()
            .zip(&position)
            .map(|(m, p)| {
                let mut m = *m;
                m.w_axis = p.as_vec3().extend(1.0);
                m
            })
            .collect();
        let mut skeleton = self.skeleton.clone();
        for j in 0..n {
            let local = match skeleton.parents[j] {
                Some(p) => world[p].inverse() * world[j],
                None => world[j],
            };
            skeleton.rest_local[j] = Transform::from_mat4(&local);
            skeleton.inverse_bind[j] = world[j].inverse();
        }
        let rest: Vec<Vec3> = self.rest.iter().map(|p| p.as_vec3()).collect();
        let fitter = PoseFitter::new(&skeleton, &self.skin, &rest, &self.fixed)?;
        Ok((skeleton, fitter))
    }
}

/// How [`PoseFitter::reweighted`] refits the skin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WeightOptions {
    /// Non-zero weights per vertex.
    pub max_influences: usize,
    /// Pull towards the starting weights, relative to the vertex's own data term (its mean
    /// diagonal): keeps the weights of poses the sequence does not show, and of joints that
    /// barely move, as they were.
    pub prior: f64,
}

impl PoseFitter {
    /// Refit every vertex's weights to the fitted poses of all frames (the weight step of
    /// smooth skinning decomposition with the transforms held: a least-squares fit on the
    /// probability simplex per vertex, over its current joints and their skeleton neighbours),
    /// then keep the `max_influences` largest. Returns the new skin and a fitter for it.
    /// `poses[f]` is the fit of `source`'s frame `f`.
    pub fn reweighted(
        &self,
        source: &dyn crate::FrameSource,
        poses: &[Vec<Rigid>],
        options: &WeightOptions,
    ) -> Result<(Skin, PoseFitter), SeqError> {
        let n = self.skeleton.joint_count();
        if poses.iter().any(|p| p.len() != n) {
            return Err(SeqError::Options("a pose has the wrong joint count".into()));
        }
        let children = self.skeleton.children();
        let candidates: Vec<Vec<usize>> = self
            .rows
            .iter()
            .map(|row| {
                let mut c: Vec<usize> = Vec::new();
                for &(k, _) in row {
                    let around = std::iter::once(k)
                        .chain(self.skeleton.parents[k])
                        .chain(children[k].iter().copied());
                    for j in around {
                        if !self.fixed[j] && !c.contains(&j) {
                            c.push(j);
                        }
                    }
                }
                c
            })
            .collect();
        // Per vertex: the normal equations over its candidates, summed frame by frame.
        let mut a: Vec<Vec<f64>> = candidates.iter().map(|c| vec![0.0; c.len() * c.len()]).collect();
        let mut b: Vec<Vec<f64>> = candidates.iter().map(|c| vec![0.0; c.len()]).collect();
        let mut y = Vec::new();
        for (f, pose) in poses.iter().enumerate() {
            source.read_frame(f, &mut y)?;
            if y.len() != self.rest.len() {
                return Err(SeqError::Source {
                    frame: f,
                    message: format!("{} vertices, the rig has {}", y.len(), self.rest.len()),
                });
            }
            let rest = &self.rest;
            a.par_iter_mut()
                .zip(b.par_iter_mut())
                .zip(candidates.par_iter())
                .enumerate()
                .for_each(|(v, ((av, bv), c))| {
                    let target = y[v].as_dvec3();
                    let m = c.len();
                    let moved: Vec<DVec3> = c.iter().map(|&k| pose[k].apply(rest[v])).collect();
                    for i in 0..m {
                        bv[i] += moved[i].dot(target);
                        for j in i..m {
                            let d = moved[i].dot(moved[j]);
                            av[i * m + j] += d;
                            if j != i {
                                av[j * m + i] += d;
                            }
                        }
                    }
                });
        }
        let rows: Vec<Vec<(u32, f32)>> = candidates
            .par_iter()
            .enumerate()
            .map(|(v, c)| self.solve_row(v, c, &a[v], &b[v], options))
            .collect();
        let skin = Skin::from_rows(rows.iter().map(|r| r.as_slice()), n, options.max_influences.max(1))?;
        let rest: Vec<Vec3> = self.rest.iter().map(|p| p.as_vec3()).collect();
        let fitter = PoseFitter::new(&self.skeleton, &skin, &rest, &self.fixed)?;
        Ok((skin, fitter))
    }
}

impl PoseFitter {
    /// One vertex's new weights over its candidate joints `c` from its normal equations.
    fn solve_row(&self, v: usize, c: &[usize], a: &[f64], b: &[f64], options: &WeightOptions) -> Vec<(u32, f32)> {
        let m = c.len();
        if m == 0 {
            return Vec::new();
        }
        let (mut av, mut bv) = (a.to_vec(), b.to_vec());
        let scale = (0..m).map(|i| av[i * m + i]).sum::<f64>() / m as f64;
        let lambda = options.prior * scale.max(1e-12);
        for (i, &k) in c.iter().enumerate() {
            let w0 = self.rows[v].iter().find(|e| e.0 == k).map_or(0.0, |e| e.1);
            av[i * m + i] += lambda;
            bv[i] += lambda * w0;
        }
        let mut w = crate::math::simplex_qp(&av, &bv, m);
        if w.len() != m || w.iter().any(|x| !x.is_finite()) {
            // Keep the old row when the solve fails.
            return self.rows[v].iter().map(|&(k, w)| (k as u32, w as f32)).collect();
        }
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by(|&i, &j| w[j].total_cmp(&w[i]));
        for &i in order.iter().skip(options.max_influences.max(1)) {
            w[i] = 0.0;
        }
        let sum: f64 = w.iter().sum();
        (0..m)
            .filter(|&i| w[i] > 1e-6)
            .map(|i| (c[i] as u32, (w[i] / sum) as f32))
            .collect()
    }
}

/// `[u]×`: the matrix with `[u]× v = u × v`.
fn skew(u: DVec3) -> glam::DMat3 {
    glam::DMat3::from_cols(
        DVec3::new(0.0, u.z, -u.y),
        DVec3::new(-u.z, 0.0, u.x),
        DVec3::new(u.y, -u.x, 0.0),
    )
}

/// `h[row.., col..] += m` for the 3×3 block at `(row, col)` of a row-major `n×n` matrix, and
/// `mᵀ` at `(col, row)` too when `mirrored`.
fn add_block(h: &mut [f64], n: usize, row: usize, col: usize, m: &glam::DMat3, mirrored: bool) {
    for r in 0..3 {
        for c in 0..3 {
            let e = m.col(c)[r];
            h[(row + r) * n + col + c] += e;
            if mirrored {
                h[(col + c) * n + row + r] += e;
            }
        }
    }
}

fn squared_distance(a: &[DVec3], b: &[DVec3]) -> f64 {
    a.iter().zip(b).map(|(p, q)| p.distance_squared(*q)).sum()
}

/// Joints ordered parents first (breadth first from the roots).
fn topological(parents: &[Option<usize>]) -> Vec<usize> {
    let n = parents.len();
    let mut children = vec![Vec::new(); n];
    let mut order: Vec<usize> = (0..n).filter(|&j| parents[j].is_none()).collect();
    for (j, p) in parents.iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(j);
        }
    }
    let mut i = 0;
    while i < order.len() {
        let j = order[i];
        order.extend_from_slice(&children[j]);
        i += 1;
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;
    use rigml_core::{Pose, Skin};

    /// A three-joint chain along +Y with a 2-vertex-wide strip of vertices skinned smoothly.
    fn chain() -> (Skeleton, Skin, Vec<Vec3>) {
        let skeleton = Skeleton {
            names: vec!["root".into(), "mid".into(), "tip".into()],
            parents: vec![None, Some(0), Some(1)],
            rest_local: vec![
                Transform::from_translation(Vec3::ZERO),
                Transform::from_translation(Vec3::Y),
                Transform::from_translation(Vec3::Y),
            ],
            inverse_bind: vec![
                Mat4::IDENTITY,
                Mat4::from_translation(-Vec3::Y),
                Mat4::from_translation(-2.0 * Vec3::Y),
            ],
        };
        let mut rest = Vec::new();
        let mut rows: Vec<Vec<(u32, f32)>> = Vec::new();
        for i in 0..=20 {
            let h = i as f32 * 0.125;
            for x in [-0.2f32, 0.2] {
                for z in [-0.1f32, 0.1] {
                    rest.push(Vec3::new(x, h, z));
                    let row = if h < 0.8 {
                        vec![(0, 1.0)]
                    } else if h < 1.2 {
                        let t = (h - 0.8) / 0.4;
                        vec![(0, 1.0 - t), (1, t)]
                    } else if h < 1.8 {
                        vec![(1, 1.0)]
                    } else if h < 2.2 {
                        let t = (h - 1.8) / 0.4;
                        vec![(1, 1.0 - t), (2, t)]
                    } else {
                        vec![(2, 1.0)]
                    };
                    rows.push(row);
                }
            }
        }
        let skin = Skin::from_rows(rows.iter().map(|r| r.as_slice()), 3, 4).unwrap();
        (skeleton, skin, rest)
    }

    /// The block solve summed over vertices (the sweep's before the moments): the best rigid motion
    /// of one block (rotation about `pivot`, plus a translation when the block translates), minimising `Σ_v |x_v − B_v + R B_v + s_v t − y_v|²` over its vertices.
    fn solve_block(block: &Block, free: bool, b: &[DVec3], s: &[f64], x: &[DVec3], y: &[DVec3], pivot: DVec3) -> Rigid {
        use crate::math::horn_rotation;
        // Per vertex, with weight ω = s²: moved point u = B/s, its target z = (y − A)/s.
        let mut total = 0.0f64;
        let (mut cu, mut cz) = (DVec3::ZERO, DVec3::ZERO);
        for &v in &block.vertices {
            let w = s[v];
            if w <= 1e-9 {
                continue;
            }
            let omega = w * w;
            let u = b[v] / w;
            let z = (y[v] - (x[v] - b[v])) / w;
            total += omega;
            cu += u * omega;
            cz += z * omega;
        }
        if total <= 0.0 {
            return Rigid::IDENTITY;
        }
        let (centre_u, centre_z) = if block.translates || free {
            (cu / total, cz / total)
        } else {
            (pivot, pivot)
        };
        let mut cov = [[0.0f64; 3]; 3];
        for &v in &block.vertices {
            let w = s[v];
            if w <= 1e-9 {
                continue;
            }
            let omega = w * w;
            let u = (b[v] / w - centre_u).to_array();
            let z = ((y[v] - (x[v] - b[v])) / w - centre_z).to_array();
            for (r, row) in cov.iter_mut().enumerate() {
                for (c, cell) in row.iter_mut().enumerate() {
                    *cell += omega * u[r] * z[c];
                }
            }
        }
        let r = horn_rotation(&cov);
        if !r.is_finite() {
            return Rigid::IDENTITY;
        }
        Rigid {
            r,
            t: centre_z - r * centre_u,
        }
    }

    /// The moments' block solve against the sum over vertices, on the chain with a fourth joint
    /// weighting vertices with both others (shared vertices across every block's boundary), in
    /// a pose off the bind pose, towards a target that no pose reaches, free and connected.
    #[test]
    fn block_moments_solve_as_the_sum_over_vertices_does() {
        let (mut skeleton, _, rest) = chain();
        skeleton.names.push("side".into());
        skeleton.parents.push(Some(0));
        skeleton
            .rest_local
            .push(Transform::from_translation(Vec3::new(0.2, 0.5, 0.0)));
        skeleton
            .inverse_bind
            .push(Mat4::from_translation(-Vec3::new(0.2, 0.5, 0.0)));
        let rows: Vec<Vec<(u32, f32)>> = (0..rest.len())
            .map(|v| {
                let a = (v % 3) as f32 * 0.2 + 0.1;
                vec![((v % 3) as u32, a), (3, 0.3), (((v + 1) % 3) as u32, 0.7 - a)]
            })
            .collect();
        let skin = Skin::from_rows(rows.iter().map(|r| r.as_slice()), 4, 4).unwrap();
        let fitter = PoseFitter::new(&skeleton, &skin, &rest, &[false; 4]).unwrap();
        let pose: Vec<Rigid> = (0..4)
            .map(|j| Rigid {
                r: DQuat::from_euler(glam::EulerRot::XYZ, 0.3 * j as f64, -0.2, 0.1 * j as f64 + 0.05),
                t: DVec3::new(0.1 * j as f64, -0.05, 0.2),
            })
            .collect();
        let target: Vec<DVec3> = rest
            .iter()
            .enumerate()
            .map(|(v, p)| p.as_dvec3() * 1.1 + DVec3::new((v as f64 * 0.7).sin() * 0.05, 0.3, -0.1))
            .collect();
        let frame = FrameMoments::new(&fitter.rows, &fitter.rest, &target, 4);
        let rotations: Vec<glam::DMat3> = pose.iter().map(|m| glam::DMat3::from_quat(m.r)).collect();
        let x = fitter.skinned(&pose);
        let (mut b, mut sv) = (vec![DVec3::ZERO; rest.len()], vec![0.0; rest.len()]);
        for block in &fitter.blocks {
            for &v in &block.vertices {
                (b[v], sv[v]) = fitter.subtree_share(block, v, &pose);
            }
            let pivot = pose[block.joint].apply(fitter.joint_bind[block.joint]);
            for free in [false, true] {
                let want = solve_block(block, free, &b, &sv, &x, &target, pivot);
                let got = block
                    .moments
                    .solve(&frame, &pose, &rotations, block.translates || free, pivot);
                assert!(want != Rigid::IDENTITY);
                assert!(
                    got.r.angle_between(want.r) < 1e-9 && got.t.distance(want.t) < 1e-9,
                    "joint {} free {free}: {got:?} vs {want:?}",
                    block.joint
                );
            }
        }
    }

    #[test]
    fn recovers_a_known_pose_from_the_bind_pose() {
        let (skeleton, skin, rest) = chain();
        let mut pose = Pose::bind(&skeleton);
        pose.local[0].translation = Vec3::new(0.3, -0.2, 0.1);
        pose.local[0].rotation = Quat::from_rotation_y(0.4);
        pose.local[1].rotation = Quat::from_rotation_z(0.7);
        pose.local[2].rotation = Quat::from_rotation_x(-0.5);
        let m = rigml_core::skinning::skinning_matrices(&skeleton, &pose).unwrap();
        let target = rigml_core::skinning::lbs(&rest, &skin, &m);
        let fitter = PoseFitter::new(&skeleton, &skin, &rest, &[false; 3]).unwrap();
        assert_eq!(fitter.translating_joints(), vec![0]);
        let start = vec![Rigid::IDENTITY; 3];
        let before = fitter
            .fit(
                &target,
                &start,
                &FitOptions {
                    sweeps: 0,
                    ..Default::default()
                },
            )
            .unwrap();
        let fitted = fitter
            .fit(
                &target,
                &start,
                &FitOptions {
                    sweeps: 200,
                    tolerance: 1e-12,
                    ..Default::default()
                },
            )
            .unwrap();
        assert!(before.squared_error > 1.0, "{}", before.squared_error);
        assert!(fitted.squared_error < 1e-8 * before.squared_error, "{fitted:?}");
        let local = fitter.local_pose(&fitted.skinning);
        for (j, (got, want)) in local.iter().zip(&pose.local).enumerate() {
            let angle = got.rotation.angle_between(want.rotation);
            assert!(angle < 1e-3, "joint {j}: {angle}");
            assert!((got.translation - want.translation).length() < 1e-4, "joint {j}");
        }
    }

    #[test]
    fn joint_steps_recover_a_pose_the_sweeps_leave_unfinished() {
        // One sweep leaves the chain short of the pose; Levenberg–Marquardt steps over all the
        // joints finish it, never raise the error, and keep every joint on its parent's bone.
        let (skeleton, skin, rest) = chain();
        let mut pose = Pose::bind(&skeleton);
        pose.local[0].translation = Vec3::new(0.1, 0.05, -0.1);
        pose.local[0].rotation = Quat::from_rotation_y(0.3);
        pose.local[1].rotation = Quat::from_rotation_z(0.6);
        pose.local[2].rotation = Quat::from_rotation_x(-0.4);
        let m = rigml_core::skinning::skinning_matrices(&skeleton, &pose).unwrap();
        let target = rigml_core::skinning::lbs(&rest, &skin, &m);
        let fitter = PoseFitter::new(&skeleton, &skin, &rest, &[false; 3]).unwrap();
        let start = vec![Rigid::IDENTITY; 3];
        let options = FitOptions {
            sweeps: 1,
            tolerance: 1e-12,
            ..Default::default()
        };
        let swept = fitter.fit(&target, &start, &options).unwrap();
        let stepped = fitter
            .fit(
                &target,
                &start,
                &FitOptions {
                    joint_steps: 30,
                    ..options
                },
            )
            .unwrap();
        assert!(swept.squared_error > 1e-4, "{swept:?}");
        assert!(
            stepped.squared_error < 1e-3 * swept.squared_error,
            "{stepped:?} vs {swept:?}"
        );
        let bind = skeleton.bind_positions();
        for (j, at) in bind.iter().enumerate().skip(1) {
            let p = skeleton.parents[j].unwrap();
            let carried = stepped.skinning[p].apply(at.as_dvec3());
            let own = stepped.skinning[j].apply(at.as_dvec3());
            assert!(carried.distance(own) < 1e-9, "joint {j} left its parent's bone");
        }
        let local = fitter.local_pose(&stepped.skinning);
        for (j, (got, want)) in local.iter().zip(&pose.local).enumerate() {
            assert!(got.rotation.angle_between(want.rotation) < 1e-2, "joint {j}");
        }
    }

    #[test]
    fn fixed_joints_stay_and_bone_lengths_never_change() {
        let (mut skeleton, skin, rest) = chain();
        // The root becomes a weightless control joint: its child translates instead.
        skeleton.rest_local[0].translation = Vec3::ZERO;
        let rows: Vec<Vec<(u32, f32)>> = skin
            .rows()
            .map(|r| r.iter().map(|i| (i.joint.max(1), i.weight)).collect())
            .collect();
        let merged: Vec<Vec<(u32, f32)>> = rows
            .iter()
            .map(|r| {
                let mut out: Vec<(u32, f32)> = Vec::new();
                for &(j, w) in r {
                    match out.iter_mut().find(|e| e.0 == j) {
                        Some(e) => e.1 += w,
                        None => out.push((j, w)),
                    }
                }
                out
            })
            .collect();
        let skin = Skin::from_rows(merged.iter().map(|r| r.as_slice()), 3, 4).unwrap();
        let target: Vec<Vec3> = rest.iter().map(|p| Quat::from_rotation_z(0.3) * *p + Vec3::X).collect();
        let fitter = PoseFitter::new(&skeleton, &skin, &rest, &[true, false, false]).unwrap();
        assert_eq!(fitter.moving_joints(), vec![1, 2]);
        assert_eq!(fitter.translating_joints(), vec![1]);
        let fitted = fitter
            .fit(&target, &[Rigid::IDENTITY; 3], &FitOptions::default())
            .unwrap();
        assert_eq!(fitted.skinning[0], Rigid::IDENTITY);
        assert!(fitted.squared_error < 1e-6, "{}", fitted.squared_error);
        let local = fitter.local_pose(&fitted.skinning);
        assert!((local[2].translation - Vec3::Y).length() < 1e-5, "{:?}", local[2]);
        assert!(fitter
            .fit(&target[1..], &[Rigid::IDENTITY; 3], &FitOptions::default())
            .is_err());
    }

    /// Frames of the chain bent at its middle joint by several angles (its true skin).
    fn bent_frames(skeleton: &Skeleton, skin: &Skin, rest: &[Vec3]) -> Vec<Vec<Vec3>> {
        [-0.9f32, -0.4, 0.3, 0.8, 1.2]
            .iter()
            .map(|&a| {
                let mut pose = Pose::bind(skeleton);
                pose.local[1].rotation = Quat::from_rotation_z(a);
                pose.local[2].rotation = Quat::from_rotation_x(0.5 * a);
                let m = rigml_core::skinning::skinning_matrices(skeleton, &pose).unwrap();
                rigml_core::skinning::lbs(rest, skin, &m)
            })
            .collect()
    }

    fn sequence_of(frames: Vec<Vec<Vec3>>) -> rigml_core::Sequence {
        rigml_core::Sequence {
            frames,
            ..Default::default()
        }
    }

    #[test]
    fn joints_move_to_the_pivots_the_frames_turn_about() {
        let (truth, skin, rest) = chain();
        let frames = bent_frames(&truth, &skin, &rest);
        // The same chain with its middle joint placed 0.25 too low.
        let mut placed = truth.clone();
        placed.rest_local[1].translation = Vec3::Y * 0.75;
        placed.rest_local[2].translation = Vec3::Y * 1.25;
        placed.inverse_bind[1] = Mat4::from_translation(-0.75 * Vec3::Y);
        let fitter = PoseFitter::new(&placed, &skin, &rest, &[false; 3]).unwrap();
        let free = FitOptions {
            free: true,
            sweeps: 200,
            ..Default::default()
        };
        let poses: Vec<Vec<Rigid>> = frames
            .iter()
            .map(|f| fitter.fit(f, &[Rigid::IDENTITY; 3], &free).unwrap().skinning)
            .collect();
        let (moved, moved_fitter) = fitter.with_pivots(&poses, 1e-4).unwrap();
        let at = moved.bind_positions();
        assert!(at[1].distance(Vec3::Y) < 0.05, "middle joint at {}", at[1]);
        assert!(at[2].distance(2.0 * Vec3::Y) < 0.05, "tip joint at {}", at[2]);
        // The connected fit on the moved skeleton beats the one on the placed skeleton.
        let error = |f: &PoseFitter| -> f64 {
            frames
                .iter()
                .map(|t| {
                    f.fit(t, &[Rigid::IDENTITY; 3], &FitOptions::default())
                        .unwrap()
                        .squared_error
                })
                .sum()
        };
        assert!(error(&moved_fitter) < 0.1 * error(&fitter));
    }

    #[test]
    fn refitted_weights_explain_the_frames_better() {
        let (skeleton, skin, rest) = chain();
        let frames = bent_frames(&skeleton, &skin, &rest);
        // Start from hard weights: each vertex on its strongest joint.
        let rigid: Vec<u32> = skin
            .rows()
            .map(|r| r.iter().max_by(|a, b| a.weight.total_cmp(&b.weight)).unwrap().joint)
            .collect();
        let hard = Skin::rigid(&rigid, 3).unwrap();
        let fitter = PoseFitter::new(&skeleton, &hard, &rest, &[false; 3]).unwrap();
        let fit_all = |f: &PoseFitter| -> (f64, Vec<Vec<Rigid>>) {
            let fits: Vec<FittedPose> = frames
                .iter()
                .map(|t| f.fit(t, &[Rigid::IDENTITY; 3], &FitOptions::default()).unwrap())
                .collect();
            (
                fits.iter().map(|p| p.squared_error).sum(),
                fits.into_iter().map(|p| p.skinning).collect(),
            )
        };
        let (before, poses) = fit_all(&fitter);
        let options = WeightOptions {
            max_influences: 4,
            prior: 1e-4,
        };
        let (new_skin, refitted) = fitter
            .reweighted(&sequence_of(frames.clone()), &poses, &options)
            .unwrap();
        assert_eq!(new_skin.unskinned_count(), 0);
        assert!(new_skin.influences_max() <= 4);
        let (after, _) = fit_all(&refitted);
        assert!(after < 0.2 * before, "{after} vs {before}");
        assert!(fitter
            .reweighted(&sequence_of(frames[1..].to_vec()), &poses, &options)
            .is_err());
    }

    #[test]
    fn connected_rechains_free_bones_at_the_joints() {
        let (skeleton, skin, rest) = chain();
        let mut pose = Pose::bind(&skeleton);
        pose.local[0].translation = Vec3::new(0.2, 0.1, 0.0);
        pose.local[1].rotation = Quat::from_rotation_z(0.6);
        pose.local[2].rotation = Quat::from_rotation_x(0.4);
        let truth: Vec<Rigid> = rigml_core::skinning::skinning_matrices(&skeleton, &pose)
            .unwrap()
            .iter()
            .map(|m| {
                let (_, r, t) = m.to_scale_rotation_translation();
                Rigid {
                    r: r.as_dquat(),
                    t: t.as_dvec3(),
                }
            })
            .collect();
        // Free bones drift apart at the joints; connected() puts them back together.
        let mut free = truth.clone();
        free[1].t += DVec3::new(0.05, -0.03, 0.02);
        free[2].t += DVec3::new(-0.04, 0.02, 0.01);
        let fitter = PoseFitter::new(&skeleton, &skin, &rest, &[false; 3]).unwrap();
        let joined = fitter.connected(&free);
        for (j, (a, b)) in joined.iter().zip(&truth).enumerate() {
            assert!((a.t - b.t).length() < 1e-5, "joint {j}: {:?} vs {:?}", a.t, b.t);
            assert!(a.r.abs_diff_eq(b.r, 1e-6) || a.r.abs_diff_eq(-b.r, 1e-6), "joint {j}");
        }
    }
}
