//! Smooth skinning decomposition with rigid bones (SSDR, Le & Deng 2012; docs/ALGORITHMS.md §5):
//! a mesh sequence → rest mesh (the anchor frame), sparse per-vertex weights and per-frame rigid
//! bone transforms such that linear blend skinning reproduces the frames.
//!
//! Steps: normalise by the anchor frame (METRICS.md §6); cluster the rest vertices into `B`
//! groups (farthest-point seeds + k-means on positions, deterministic for a seed), then refine the
//! clusters by motion (fit one rigid transform per cluster and frame, re-label every vertex with
//! the bone that moves it best, split the worst cluster when one empties). Then alternate the
//! weight update (per vertex: a simplex-constrained least squares over a few candidate bones with
//! a Laplacian smoothness pull, at most `K` non-zeros) and the transform update (per frame:
//! weighted Procrustes per bone with the others held fixed).
//!
//! Memory: the rest mesh, `K` weights per vertex, `B` sums per vertex and `B` transforms per
//! frame; frames are read from the [`FrameSource`] once per pass, never all at once.

use crate::math::simplex_qp;
use crate::passes::{stats_pass, transform_pass, FrameFit, Rigid, Stats, Weights};
use crate::source::{anchor, FrameSource, Normalisation};
use crate::SeqError;
use glam::Vec3;
use rayon::prelude::*;
use rigml_geom::adjacency::Adjacency;

/// Clusters smaller than this are split off a larger one during initialisation (a rigid fit
/// needs three points; Dem Bones prunes clusters below the same size).
const MIN_CLUSTER: usize = 3;

/// Settings of [`decompose`]; the defaults follow Dem Bones where it has one.
#[derive(Debug, Clone)]
pub struct Options {
    /// Number of bones `B` (capped by the vertex count).
    pub bones: usize,
    /// Non-zero weights per vertex `K` (Dem Bones `nnz`, default 8; 4 for game engines).
    pub max_influences: usize,
    /// Alternations of weight and transform updates (Dem Bones `nIters` = 30).
    pub iterations: usize,
    /// Motion-clustering rounds of the initialisation (Dem Bones `nInitIters` = 10).
    pub init_iterations: usize,
    /// Gauss–Seidel sweeps over the bones per transform update (Dem Bones `nTransIters` = 5).
    pub transform_iterations: usize,
    /// Laplacian smoothness of the weights, in normalised units per frame (Dem Bones
    /// `weightsSmooth` = 1e-4, which it also scales by model size² and frame count).
    pub smoothness: f64,
    /// Picks the first clustering seed: 0 = the vertex nearest the rest centroid.
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            bones: 30,
            max_influences: 8,
            iterations: 30,
            init_iterations: 10,
            transform_iterations: 5,
            smoothness: 1e-4,
            seed: 0,
        }
    }
}

/// A decomposition, in normalised units (see [`Decomposition::normalisation`]).
#[derive(Debug, Clone)]
pub struct Decomposition {
    /// Index of the anchor frame, whose shape is the rest mesh.
    pub anchor: usize,
    pub normalisation: Normalisation,
    /// Rest positions (the anchor frame, normalised).
    pub rest: Vec<Vec3>,
    pub triangles: Vec<[u32; 3]>,
    pub weights: Weights,
    /// `transforms[f][b]`: rest → frame `f` for bone `b`, normalised units.
    pub transforms: Vec<Vec<Rigid>>,
    /// LBS RMSE over all frames and vertices (METRICS.md §6, normalised units).
    pub rmse: f64,
    /// Largest single-vertex error over all frames (normalised units).
    pub max_error: f64,
    /// RMSE after the initialisation and after every iteration.
    pub history: Vec<f64>,
}

impl Decomposition {
    pub fn bone_count(&self) -> usize {
        self.transforms.first().map_or(0, Vec::len)
    }

    /// Frame `f` reconstructed by linear blend skinning, in the sequence's own units.
    pub fn reconstruct(&self, f: usize) -> Option<Vec<Vec3>> {
        let transforms = self.transforms.get(f)?;
        Some(
            self.rest
                .iter()
                .enumerate()
                .map(|(v, u)| {
                    let p = self
                        .weights
                        .row(v)
                        .filter_map(|(b, w)| transforms.get(b as usize).map(|m| w * m.apply(*u)))
                        .sum::<Vec3>();
                    self.normalisation.undo(p)
                })
                .collect(),
        )
    }
}

/// Decompose `source` into bones. `progress(done, total)` is called after each step.
pub fn decompose(
    source: &dyn FrameSource,
    options: &Options,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Decomposition, SeqError> {
    let (frames, n) = (source.frame_count(), source.vertex_count());
    if frames == 0 || n == 0 {
        return Err(SeqError::Empty);
    }
    if options.bones == 0 || options.max_influences == 0 {
        return Err(SeqError::Options(
            "--bones and --max-influences must be at least 1".into(),
        ));
    }
    if let Some((t, _)) = source
        .triangles()
        .iter()
        .enumerate()
        .find(|(_, t)| t.iter().any(|&i| i as usize >= n))
    {
        return Err(SeqError::Options(format!("triangle {t} names a vertex ≥ {n}")));
    }
    let (anchor_index, anchor_frame) = anchor(source)?;
    let norm = Normalisation::of_frame(&anchor_frame).ok_or(SeqError::Degenerate { frame: anchor_index })?;
    let rest: Vec<Vec3> = anchor_frame.iter().map(|p| norm.apply(*p)).collect();
    let bones = options.bones.min(n);
    let k = options.max_influences.min(bones);
    let total = options.init_iterations + options.iterations + 1;
    let adjacency = Adjacency::from_triangles(n, source.triangles());

    let mut labels = initial_labels(&rest, bones, options.seed);
    let mut transforms = vec![vec![Rigid::IDENTITY; bones]; frames];
    for step in 0..options.init_iterations {
        let fits = transform_pass(source, &norm, &rest, &Weights::one_hot(&labels, 1), &transforms, 1)?;
        transforms = fits.into_iter().map(|f| f.transforms).collect();
        let stats = stats_pass(source, &norm, &rest, &transforms)?;
        labels = relabel(&stats, &rest, bones);
        progress(step + 1, total);
    }
    let mut weights = Weights::one_hot(&labels, k);
    let fits = transform_pass(source, &norm, &rest, &weights, &transforms, 1)?;
    let (mut rmse, mut max_error) = errors(&fits, n);
    transforms = fits.into_iter().map(|f| f.transforms).collect();
    let mut history = vec![rmse];
    for step in 0..options.iterations {
        let stats = stats_pass(source, &norm, &rest, &transforms)?;
        weights = update_weights(&stats, &rest, &weights, &adjacency, options.smoothness);
        let fits = transform_pass(
            source,
            &norm,
            &rest,
            &weights,
            &transforms,
            options.transform_iterations.max(1),
        )?;
        (rmse, max_error) = errors(&fits, n);
        transforms = fits.into_iter().map(|f| f.transforms).collect();
        history.push(rmse);
        progress(options.init_iterations + step + 1, total);
    }
    progress(total, total);
    Ok(Decomposition {
        anchor: anchor_index,
        normalisation: norm,
        rest,
        triangles: source.triangles().to_vec(),
        weights,
        transforms,
        rmse,
        max_error,
        history,
    })
}

/// `(RMSE, max)` of a transform pass's residuals.
fn errors(fits: &[FrameFit], n: usize) -> (f64, f64) {
    let sse: f64 = fits.iter().map(|f| f.sse).sum();
    let max = fits.iter().map(|f| f.max).fold(0.0, f64::max);
    ((sse / (fits.len() * n).max(1) as f64).sqrt(), max)
}

/// SplitMix64: spreads a user seed over the vertex indices.
fn splitmix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Spatial clusters of the rest mesh: farthest-point seeds from a start vertex, then Lloyd
/// (k-means) iterations on positions. Deterministic for a seed.
pub fn initial_labels(rest: &[Vec3], bones: usize, seed: u64) -> Vec<u32> {
    let n = rest.len();
    if n == 0 || bones == 0 {
        return vec![0; n];
    }
    let centroid = rest.iter().copied().sum::<Vec3>() / n as f32;
    let start = if seed == 0 {
        argmin(rest.iter().map(|p| p.distance_squared(centroid)))
    } else {
        (splitmix(seed) % n as u64) as usize
    };
    let mut centres = vec![rest[start]];
    let mut dist: Vec<f32> = rest.iter().map(|p| p.distance_squared(rest[start])).collect();
    while centres.len() < bones {
        let far = argmax(dist.iter().copied());
        let c = rest[far];
        centres.push(c);
        dist.iter_mut()
            .zip(rest)
            .for_each(|(d, p)| *d = d.min(p.distance_squared(c)));
    }
    let mut labels = vec![0u32; n];
    for _ in 0..8 {
        labels.par_iter_mut().zip(rest).for_each(|(l, p)| {
            *l = argmin(centres.iter().map(|c| c.distance_squared(*p))) as u32;
        });
        let mut sums = vec![(Vec3::ZERO, 0usize); bones];
        for (l, p) in labels.iter().zip(rest) {
            if let Some(s) = sums.get_mut(*l as usize) {
                s.0 += *p;
                s.1 += 1;
            }
        }
        for (c, (s, count)) in centres.iter_mut().zip(sums) {
            if count > 0 {
                *c = s / count as f32;
            }
        }
    }
    labels
}

fn argmin(values: impl Iterator<Item = f32>) -> usize {
    values
        .enumerate()
        .fold(
            (0, f32::INFINITY),
            |best, (i, x)| if x < best.1 { (i, x) } else { best },
        )
        .0
}

fn argmax(values: impl Iterator<Item = f32>) -> usize {
    values
        .enumerate()
        .fold(
            (0, f32::NEG_INFINITY),
            |best, (i, x)| if x > best.1 { (i, x) } else { best },
        )
        .0
}

/// Give every vertex the bone that moves it best (lowest rigid-fit error over all frames), then
/// refill clusters below [`MIN_CLUSTER`] by splitting the cluster of largest total error: the
/// members nearer its worst vertex than its centroid move to the empty bone.
fn relabel(stats: &Stats, rest: &[Vec3], bones: usize) -> Vec<u32> {
    let best: Vec<(u32, f64)> = rest
        .par_iter()
        .enumerate()
        .map(|(v, u)| {
            (0..bones)
                .map(|b| (b as u32, stats.rigid_error(v, b, *u)))
                .fold((0, f64::INFINITY), |a, x| if x.1 < a.1 { x } else { a })
        })
        .collect();
    let mut labels: Vec<u32> = best.iter().map(|b| b.0).collect();
    let error: Vec<f64> = best.iter().map(|b| b.1).collect();
    for _ in 0..bones {
        let mut count = vec![0usize; bones];
        let mut total = vec![0.0f64; bones];
        for (l, e) in labels.iter().zip(&error) {
            count[*l as usize] += 1;
            total[*l as usize] += e;
        }
        let Some(empty) = (0..bones).find(|&b| count[b] < MIN_CLUSTER) else {
            break;
        };
        let Some(donor) = (0..bones)
            .filter(|&b| b != empty && count[b] >= 2 * MIN_CLUSTER)
            .max_by(|&a, &b| total[a].total_cmp(&total[b]))
        else {
            break;
        };
        let members: Vec<usize> = (0..rest.len()).filter(|&v| labels[v] == donor as u32).collect();
        let centre = members.iter().map(|&v| rest[v]).sum::<Vec3>() / members.len() as f32;
        let worst = members
            .iter()
            .copied()
            .max_by(|&a, &b| error[a].total_cmp(&error[b]))
            .unwrap_or(members[0]);
        let mut moved: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&v| rest[v].distance_squared(rest[worst]) < rest[v].distance_squared(centre))
            .collect();
        if moved.len() < MIN_CLUSTER || members.len() - moved.len() < MIN_CLUSTER {
            // Take the MIN_CLUSTER members nearest the worst vertex instead.
            let mut by_distance = members.clone();
            by_distance.sort_by(|&a, &b| {
                rest[a]
                    .distance_squared(rest[worst])
                    .total_cmp(&rest[b].distance_squared(rest[worst]))
            });
            moved = by_distance.into_iter().take(MIN_CLUSTER).collect();
        }
        for &v in &moved {
            labels[v] = empty as u32;
        }
        // Vertices of the empty bone that were left behind keep their label.
    }
    labels
}

/// The weight update: per vertex, choose candidate bones (current non-zeros and the `2K` bones
/// with the lowest rigid-fit error), solve `min Σ_f |x_fv − Σ_b w_b M_fb u_v|² + λF |w − w̃|²`
/// over the simplex (w̃ = neighbour average of the current weights), and keep the `K` largest
/// (re-solving on them when the solution had more).
fn update_weights(stats: &Stats, rest: &[Vec3], current: &Weights, adjacency: &Adjacency, smoothness: f64) -> Weights {
    let k = current.k;
    let bones = stats.bones;
    let lambda = smoothness.max(0.0) * stats.frames as f64;
    let ridge = 1e-9 * stats.frames.max(1) as f64;
    let rows: Vec<Vec<(u32, f32)>> = rest
        .par_iter()
        .enumerate()
        .map_init(
            || vec![0.0f64; bones],
            |smooth, (v, u)| {
                // w̃: the average of the neighbours' current weights (own weights if isolated).
                smooth.iter_mut().for_each(|x| *x = 0.0);
                let neighbours = adjacency.neighbors(v);
                if neighbours.is_empty() {
                    current.row(v).for_each(|(b, w)| smooth[b as usize] += f64::from(w));
                } else {
                    for &nb in neighbours {
                        current
                            .row(nb as usize)
                            .for_each(|(b, w)| smooth[b as usize] += f64::from(w) / neighbours.len() as f64);
                    }
                }
                let mut ranked: Vec<(usize, f64)> = (0..bones).map(|b| (b, stats.rigid_error(v, b, *u))).collect();
                ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
                let mut candidates: Vec<usize> = current.row(v).map(|(b, _)| b as usize).collect();
                for (b, _) in ranked.iter().take(2 * k) {
                    if !candidates.contains(b) {
                        candidates.push(*b);
                    }
                }
                let solve = |set: &[usize]| -> Vec<f64> {
                    let m = set.len();
                    let mut a = vec![0.0; m * m];
                    let mut rhs = vec![0.0; m];
                    for (i, &bi) in set.iter().enumerate() {
                        for (j, &bj) in set.iter().enumerate().skip(i) {
                            let g = stats.gram(bi, bj, *u);
                            a[i * m + j] = g;
                            a[j * m + i] = g;
                        }
                        a[i * m + i] += lambda + ridge;
                        rhs[i] = stats.h.get(v * bones + bi).copied().unwrap_or(0.0) + lambda * smooth[bi];
                    }
                    simplex_qp(&a, &rhs, m)
                };
                let mut w = solve(&candidates);
                if w.iter().filter(|&&x| x > 0.0).count() > k {
                    let mut order: Vec<usize> = (0..candidates.len()).collect();
                    order.sort_by(|&a, &b| w[b].total_cmp(&w[a]));
                    candidates = order.iter().take(k).map(|&i| candidates[i]).collect();
                    w = solve(&candidates);
                }
                candidates
                    .iter()
                    .zip(&w)
                    .filter(|(_, &x)| x > 0.0)
                    .map(|(&b, &x)| (b as u32, x as f32))
                    .collect()
            },
        )
        .collect();
    let mut out = Weights {
        k,
        bone: vec![0; rest.len() * k],
        weight: vec![0.0; rest.len() * k],
    };
    for (v, mut row) in rows.into_iter().enumerate() {
        row.sort_by(|a, b| b.1.total_cmp(&a.1));
        let sum: f32 = row.iter().take(k).map(|e| e.1).sum();
        for (slot, (b, w)) in row.into_iter().take(k).enumerate() {
            out.bone[v * k + slot] = b;
            out.weight[v * k + slot] = if sum > 0.0 { w / sum } else { 0.0 };
        }
        if sum <= 0.0 {
            // Cannot happen (the QP returns a point of the simplex); keep the vertex skinned.
            out.bone[v * k] = current.row(v).next().map_or(0, |e| e.0);
            out.weight[v * k] = 1.0;
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use glam::Quat;
    use rigml_core::Sequence;

    /// A bar along x from 0 to 2, as a strip of quads; the half x > 1 swings about the ball
    /// joint (1, 0, 0) by a different rotation in every frame (exactly two rigid parts).
    pub(crate) fn two_part_bar(frames: usize) -> Sequence {
        let (nx, ny) = (21usize, 3usize);
        let rest: Vec<Vec3> = (0..nx)
            .flat_map(|i| (0..ny).map(move |j| Vec3::new(i as f32 * 0.1, j as f32 * 0.05, 0.02 * (i % 2) as f32)))
            .collect();
        let mut triangles = Vec::new();
        for i in 0..nx - 1 {
            for j in 0..ny - 1 {
                let a = (i * ny + j) as u32;
                let (b, c, d) = (a + ny as u32, a + 1, a + ny as u32 + 1);
                triangles.push([a, b, c]);
                triangles.push([c, b, d]);
            }
        }
        let pivot = Vec3::new(1.0, 0.0, 0.0);
        let frames = (0..frames)
            .map(|f| {
                let q = Quat::from_euler(
                    glam::EulerRot::XYZ,
                    0.1 * f as f32,
                    0.3 * (f as f32).sin(),
                    0.05 * f as f32,
                );
                rest.iter()
                    .map(|p| if p.x > 1.05 { pivot + q * (*p - pivot) } else { *p })
                    .collect()
            })
            .collect();
        Sequence {
            name: "bar".into(),
            triangles,
            frames,
            fps: Some(24.0),
        }
    }

    #[test]
    fn two_rigid_parts_are_recovered_exactly() {
        let seq = two_part_bar(6);
        let options = Options {
            bones: 2,
            max_influences: 2,
            iterations: 5,
            // No smoothness pull: it would blend the weights across the cut on purpose.
            smoothness: 0.0,
            ..Options::default()
        };
        let d = decompose(&seq, &options, &|_, _| {}).unwrap();
        assert!(d.rmse < 1e-5, "rmse {}", d.rmse);
        assert!(d.history.iter().all(|r| r.is_finite()));
        // Reconstruction in the sequence's units matches every frame.
        for (f, frame) in seq.frames.iter().enumerate() {
            let r = d.reconstruct(f).unwrap();
            let worst = r.iter().zip(frame).map(|(a, b)| a.distance(*b)).fold(0.0, f32::max);
            assert!(worst < 1e-4, "frame {f}: {worst}");
        }
        // The same input gives the same output (deterministic initialisation).
        let again = decompose(&seq, &options, &|_, _| {}).unwrap();
        assert_eq!(again.weights, d.weights);
    }

    #[test]
    fn too_few_bones_leave_an_error_and_bad_input_is_refused() {
        let seq = two_part_bar(6);
        let one = Options {
            bones: 1,
            max_influences: 1,
            iterations: 2,
            ..Options::default()
        };
        let d = decompose(&seq, &one, &|_, _| {}).unwrap();
        assert!(d.rmse > 1e-3, "one bone cannot explain two parts: {}", d.rmse);
        let bad = Options {
            bones: 0,
            ..one.clone()
        };
        assert!(matches!(decompose(&seq, &bad, &|_, _| {}), Err(SeqError::Options(_))));
        assert!(matches!(
            decompose(&Sequence::default(), &one, &|_, _| {}),
            Err(SeqError::Empty)
        ));
        let mut nan = seq.clone();
        nan.frames[3][5].x = f32::NAN;
        let e = decompose(&nan, &one, &|_, _| {}).unwrap_err().to_string();
        assert!(e.contains("frame 3") && e.contains("vertex 5"), "{e}");
        let mut short = seq;
        short.frames[2].pop();
        assert!(matches!(
            decompose(&short, &one, &|_, _| {}),
            Err(SeqError::Source { frame: 2, .. })
        ));
    }
}
