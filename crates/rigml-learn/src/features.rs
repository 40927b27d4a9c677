//! Per (vertex, candidate bone) features, in bone-relative, scale-normalised coordinates.
//!
//! Every welded vertex of a [`Prepared`] mesh gets the [`CANDIDATES`] nearest bones (by
//! point-to-segment distance; zero-length end-sites never qualify) and one row of
//! [`FEATURES`] numbers per candidate. Distances are in normalised units (longest AABB side = 1),
//! so scaling a character changes nothing. Besides the local geometry of the pair, three
//! *context* features carry the shape around the vertex: an inverse-distance prior diffused over
//! the welded surface (a short and a long range, a cheap stand-in for geodesic distance) and the
//! prior averaged over the vertex's connected piece (separate part meshes are usually rigid).
//! Three *piece* features say how the candidate bone sits in the vertex's connected piece: how
//! much of it runs through the piece's box, whether its joint lies in that box, and how far the
//! piece's centroid is from it next to the other candidates. Artists bind a separate part (a
//! helmet, a mech's plate, a boot) to the bone that runs through it, which is often not the bone
//! nearest to most of its vertices. The features hold no absolute size, so that the network
//! learns from the shape of the pair and not from how big a training character is.
//! Padded candidate slots (skeletons with fewer usable bones) have mask 0 and all-zero features.
//!
//! Four layouts exist ([`FEATURE_VERSIONS`]); a model names its own in its metadata and inference
//! extracts that one. Versions 3 and 4 differ in one slot, [`ROOT_OR_INSIDE`]: version 3 says
//! whether the candidate is a root joint, version 4 how much of the candidate's bone lies inside
//! the mesh's solid. Whether a root deforms is a rig's convention (a ground root under the feet
//! carries no weight; a fish's or a blob's root is its body), and the solid tells them apart where
//! the flag cannot. Versions 5 and 6 are 3 and 4 with geodesic voxel binding as a second
//! geometric prior beside bone heat ([`VOXEL_SHARE`], [`VOXEL_RELATIVE`]): voxel binding is the
//! best geometric solver on rigs of few joints, where the network loses most.
//!
//! Every vertex also gets a *patch*: [`PATCH_POINTS`] points of the surface around it (reached
//! over the welded surface within [`PATCH_RADIUS`]), in a frame of its normal and its nearest
//! bone, for a network with a point encoder ([`crate::model::NetConfig::patch`]) to read the
//! local shape from (a tube, a flat shell, a blob) rather than only the distances to bones.

use glam::Vec3;
use rayon::prelude::*;
use rigml_geom::voxel::{Cell, VoxelGrid};
use rigml_geom::{closest_on_segment, Adjacency};
use rigml_skin::bones::Bone;
use rigml_skin::post::Prepared;

/// Candidate bones per vertex.
pub const CANDIDATES: usize = 8;

/// Numbers per (vertex, candidate) pair.
pub const FEATURES: usize = 26;

/// Index of the candidate's share of the vertex's raw bone-heat row among a pair's features
/// (the base of a network with a heat prior, [`crate::model::NetConfig::prior`]).
pub const HEAT_SHARE: usize = 24;

/// Surface points per vertex patch.
pub const PATCH_POINTS: usize = 16;

/// Numbers per patch point: its offset from the vertex in the vertex's frame (normal = z,
/// nearest bone's direction in the tangent plane = x), in units of [`PATCH_RADIUS`], and the
/// cosine between its normal and the vertex's.
pub const PATCH_DIMS: usize = 4;

/// Reach of a patch, normalised units (6 % of the longest side: about a limb's width on a
/// standing humanoid).
pub const PATCH_RADIUS: f32 = 0.06;

/// Most vertices a patch search visits before choosing its points.
const PATCH_GATHER: usize = 512;

/// The feature layout `rigml train` uses unless told otherwise (the embedded model, since
/// 2026-12-02, uses layout 5 with the voxel prior; it names its layout). A new version is added
/// whenever the meaning of a feature changes (invalidates caches and models).
pub const FEATURE_VERSION: u32 = 3;

/// Every layout this build extracts (a model of another version is refused).
pub const FEATURE_VERSIONS: [u32; 4] = [3, 4, 5, 6];

/// The slot that differs between versions: 1 for a root joint (version 3), or the share of the
/// candidate bone's sample points inside the mesh's solid (version 4).
pub const ROOT_OR_INSIDE: usize = 11;

/// Voxels along the longest side of the solid that version 4's inside share is measured in.
const INSIDE_RESOLUTION: usize = 64;

/// Versions 5 and 6: the slot of the candidate's share of the vertex's geodesic voxel binding
/// row (normalised to sum 1). Versions 3 and 4 hold the candidate's rank there, which the
/// distance ratio in slot 1 mostly repeats.
pub const VOXEL_SHARE: usize = 2;

/// Versions 5 and 6: the slot of the candidate's voxel weight relative to the row's largest.
/// Versions 3 and 4 hold the "nearest candidate" flag there, which is slot 1 being zero.
pub const VOXEL_RELATIVE: usize = 13;

/// Voxels along the longest side for the voxel-binding features (the solver's own default is
/// 256; half of it costs an eighth of the voxels, and the features are shares, not final weights).
const VOXEL_RESOLUTION: usize = 128;

/// Whether layout `version` holds the inside share in [`ROOT_OR_INSIDE`] (else the root flag).
fn uses_inside_share(version: u32) -> bool {
    matches!(version, 4 | 6)
}

/// Whether layout `version` holds voxel-binding shares in [`VOXEL_SHARE`] and [`VOXEL_RELATIVE`]
/// (what a network with a voxel prior reads, [`crate::NetConfig::voxel_prior`]).
pub fn holds_voxel_binding(version: u32) -> bool {
    version >= 5
}

/// Distances are clamped below by this (normalised units).
const EPS: f32 = 1e-4;

/// Falloff of the inverse-distance prior `(d_min / d)^PRIOR_POWER`.
const PRIOR_POWER: f32 = 4.0;

/// Padding of a piece's box on each side, as a share of its extent (a bone along a flat plate
/// still runs through it).
const PIECE_BOX_PAD: f32 = 0.05;

/// Points sampled along a bone segment to measure how much of it lies in a piece's box.
const SEGMENT_SAMPLES: usize = 9;

/// Diffusion rounds of the short- and long-range surface priors.
const SHORT_ROUNDS: usize = 3;
const LONG_ROUNDS: usize = 12;

/// Features of every welded vertex of one mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct Features {
    /// Welded vertex count `n`.
    pub vertex_count: usize,
    /// `[n * CANDIDATES]` joint of each candidate slot (`u32::MAX` for padding).
    pub joints: Vec<u32>,
    /// `[n * CANDIDATES]` 1 for a real candidate, 0 for padding.
    pub mask: Vec<f32>,
    /// `[n * CANDIDATES * FEATURES]` row-major features.
    pub values: Vec<f32>,
    /// `[n]` connected piece of the welded surface each vertex lies on (labels `0..count`).
    pub pieces: Vec<u32>,
    /// Per piece: no joint lies in its padded box and exactly one bone runs through that box:
    /// the piece is a part that nothing bends inside (an arm shell, a plate, a visor), which
    /// artists bind to one bone.
    pub single_bone: Vec<bool>,
    /// `[n * PATCH_POINTS * PATCH_DIMS]` the surface patch of every vertex ([`extract_with_patches`];
    /// empty from [`extract`]).
    pub patch: Vec<f32>,
}

impl Features {
    /// Feature row of vertex `v`, slot `k`.
    pub fn pair(&self, v: usize, k: usize) -> &[f32] {
        let start = (v * CANDIDATES + k) * FEATURES;
        &self.values[start..start + FEATURES]
    }
}

/// Skeleton facts the features use, per joint.
struct JointFacts {
    parent: Vec<Option<u32>>,
    children: Vec<u32>,
    is_root: Vec<bool>,
    /// Segment indices owned by each joint.
    segments: Vec<Vec<usize>>,
}

impl JointFacts {
    fn new(prep: &Prepared, parents: &[Option<usize>]) -> JointFacts {
        let joint_count = prep.bones.joint_count;
        let mut children = vec![0u32; joint_count];
        let mut parent = vec![None; joint_count];
        let mut is_root = vec![true; joint_count];
        for (j, p) in parents.iter().enumerate().take(joint_count) {
            if let Some(p) = *p {
                if p < joint_count {
                    children[p] += 1;
                    parent[j] = Some(p as u32);
                    is_root[j] = false;
                }
            }
        }
        let mut segments = vec![Vec::new(); joint_count];
        for (s, b) in prep.bones.segments.iter().enumerate() {
            if let Some(list) = segments.get_mut(b.joint as usize) {
                list.push(s);
            }
        }
        JointFacts {
            parent,
            children,
            is_root,
            segments,
        }
    }

    /// 0 none, 1 parent of `of`, 2 child of `of`, 3 sibling of `of`, 4 grandparent/grandchild.
    fn relation(&self, j: u32, of: u32) -> usize {
        let parent = |x: u32| self.parent.get(x as usize).copied().flatten();
        if parent(of) == Some(j) {
            1
        } else if parent(j) == Some(of) {
            2
        } else if parent(j).is_some() && parent(j) == parent(of) {
            3
        } else if parent(of).and_then(parent) == Some(j) || parent(j).and_then(parent) == Some(of) {
            4
        } else {
            0
        }
    }
}

/// Area-weighted vertex normals of the welded surface (zero for isolated vertices).
pub fn vertex_normals(positions: &[Vec3], triangles: &[[u32; 3]]) -> Vec<Vec3> {
    let mut normals = vec![Vec3::ZERO; positions.len()];
    for t in triangles {
        let [a, b, c] = t.map(|i| i as usize);
        let (Some(&pa), Some(&pb), Some(&pc)) = (positions.get(a), positions.get(b), positions.get(c)) else {
            continue;
        };
        let n = (pb - pa).cross(pc - pa);
        for i in [a, b, c] {
            normals[i] += n;
        }
    }
    normals.iter().map(|n| n.normalize_or_zero()).collect()
}

/// One candidate before featurisation.
#[derive(Clone, Copy)]
struct Candidate {
    joint: u32,
    distance: f32,
    segment: usize,
}

/// The nearest [`CANDIDATES`] usable joints of `p`, nearest first.
fn candidates(prep: &Prepared, facts: &JointFacts, p: Vec3) -> Vec<Candidate> {
    let mut all: Vec<Candidate> = facts
        .segments
        .iter()
        .enumerate()
        .filter(|(j, segs)| !segs.is_empty() && !prep.bones.ignored.get(*j).copied().unwrap_or(true))
        .filter_map(|(j, segs)| {
            segs.iter()
                .map(|&s| {
                    let b = &prep.bones.segments[s];
                    Candidate {
                        joint: j as u32,
                        distance: (p - closest_on_segment(p, b.a, b.b)).length(),
                        segment: s,
                    }
                })
                .min_by(|a, b| a.distance.total_cmp(&b.distance))
        })
        .collect();
    let keep = CANDIDATES.min(all.len());
    if keep < all.len() {
        all.select_nth_unstable_by(keep, |a, b| {
            a.distance.total_cmp(&b.distance).then(a.joint.cmp(&b.joint))
        });
        all.truncate(keep);
    }
    all.sort_by(|a, b| a.distance.total_cmp(&b.distance).then(a.joint.cmp(&b.joint)));
    all
}

/// Dense per-joint prior `[n * J]` diffused `rounds` times over the one-ring (`w <- (w + mean
/// of neighbours) / 2`).
fn diffuse(prior: &[f32], joint_count: usize, adjacency: &Adjacency, rounds: usize) -> Vec<f32> {
    let mut current = prior.to_vec();
    let mut next = vec![0.0f32; prior.len()];
    for _ in 0..rounds {
        next.par_chunks_mut(joint_count).enumerate().for_each(|(v, out)| {
            let own = &current[v * joint_count..(v + 1) * joint_count];
            let ring = adjacency.neighbors(v);
            if ring.is_empty() {
                out.copy_from_slice(own);
                return;
            }
            out.iter_mut().zip(own).for_each(|(o, &w)| *o = 0.5 * w);
            let share = 0.5 / ring.len() as f32;
            for &u in ring {
                let row = &current[u as usize * joint_count..(u as usize + 1) * joint_count];
                out.iter_mut().zip(row).for_each(|(o, &w)| *o += share * w);
            }
        });
        std::mem::swap(&mut current, &mut next);
    }
    current
}

/// Mean of the dense prior over each connected piece of the welded surface (`label` of each
/// vertex, `pieces` of them), per vertex.
fn piece_means(prior: &[f32], joint_count: usize, label: &[u32], pieces: usize) -> Vec<f32> {
    let n = label.len();
    let mut sums = vec![0.0f32; pieces * joint_count];
    let mut counts = vec![0.0f32; pieces];
    for v in 0..n {
        let l = label[v] as usize;
        counts[l] += 1.0;
        let row = &prior[v * joint_count..(v + 1) * joint_count];
        sums[l * joint_count..(l + 1) * joint_count]
            .iter_mut()
            .zip(row)
            .for_each(|(s, &w)| *s += w);
    }
    let mut out = vec![0.0f32; n * joint_count];
    out.par_chunks_mut(joint_count).enumerate().for_each(|(v, row)| {
        let l = label[v] as usize;
        let c = counts[l].max(1.0);
        row.iter_mut()
            .zip(&sums[l * joint_count..(l + 1) * joint_count])
            .for_each(|(o, &s)| *o = s / c);
    });
    out
}

/// How every bone sits in every connected piece of the welded surface, `[pieces * J]` each.
struct PieceBones {
    joint_count: usize,
    /// Largest share of the joint's segments' sample points inside the piece's padded box.
    through: Vec<f32>,
    /// 1 when the joint itself (the start of its segments) lies in the piece's padded box.
    holds_joint: Vec<f32>,
    /// Distance from the piece's centroid to the nearest of the joint's segments.
    centroid_distance: Vec<f32>,
}

impl PieceBones {
    /// `label` gives each welded vertex's piece (`pieces` of them).
    fn new(positions: &[Vec3], label: &[u32], pieces: usize, bones: &[Bone], joint_count: usize) -> PieceBones {
        let mut low = vec![Vec3::splat(f32::INFINITY); pieces];
        let mut high = vec![Vec3::splat(f32::NEG_INFINITY); pieces];
        let mut sum = vec![Vec3::ZERO; pieces];
        let mut count = vec![0usize; pieces];
        for (p, &l) in positions.iter().zip(label) {
            let l = l as usize;
            low[l] = low[l].min(*p);
            high[l] = high[l].max(*p);
            sum[l] += *p;
            count[l] += 1;
        }
        let cells = pieces * joint_count;
        let mut out = PieceBones {
            joint_count,
            through: vec![0.0; cells],
            holds_joint: vec![0.0; cells],
            centroid_distance: vec![f32::INFINITY; cells],
        };
        let last = (SEGMENT_SAMPLES - 1) as f32;
        for l in (0..pieces).filter(|&l| count[l] > 0) {
            let pad = (high[l] - low[l]) * PIECE_BOX_PAD;
            let (lo, hi) = (low[l] - pad, high[l] + pad);
            let inside = |p: Vec3| p.cmpge(lo).all() && p.cmple(hi).all();
            let centroid = sum[l] / count[l] as f32;
            for b in bones.iter().filter(|b| (b.joint as usize) < joint_count) {
                let at = l * joint_count + b.joint as usize;
                let hits = (0..SEGMENT_SAMPLES)
                    .filter(|&k| inside(b.a.lerp(b.b, k as f32 / last)))
                    .count();
                out.through[at] = out.through[at].max(hits as f32 / SEGMENT_SAMPLES as f32);
                if inside(b.a) {
                    out.holds_joint[at] = 1.0;
                }
                let d = (centroid - closest_on_segment(centroid, b.a, b.b)).length();
                out.centroid_distance[at] = out.centroid_distance[at].min(d);
            }
        }
        out
    }

    /// Per piece: no joint in its padded box, and exactly one bone runs through that box.
    fn single_bone(&self) -> Vec<bool> {
        self.holds_joint
            .chunks_exact(self.joint_count)
            .zip(self.through.chunks_exact(self.joint_count))
            .map(|(holds, through)| {
                holds.iter().all(|&h| h == 0.0) && through.iter().filter(|&&t| t > 0.0).count() == 1
            })
            .collect()
    }

    fn at(&self, piece: u32, joint: u32) -> usize {
        piece as usize * self.joint_count + joint as usize
    }
}

/// Bone-heat rows of every welded vertex, each normalised to sum 1 (empty rows stay empty; an
/// empty list when the heat solve fails, so that the heat features are all zero).
fn heat_shares(prep: &Prepared) -> Vec<Vec<(u32, f32)>> {
    let Ok(mut rows) = rigml_skin::heat::raw_rows(prep, true) else {
        return Vec::new();
    };
    rows.par_iter_mut().for_each(normalise_row);
    rows
}

/// Geodesic voxel binding rows of every welded vertex (at most [`CANDIDATES`] joints each),
/// normalised to sum 1 (an empty list when the solve fails, so that the voxel features are all
/// zero, as for heat).
fn voxel_shares(prep: &Prepared) -> Vec<Vec<(u32, f32)>> {
    let solver = rigml_skin::Voxel {
        resolution: VOXEL_RESOLUTION,
        ..Default::default()
    };
    let options = rigml_skin::SolveOptions {
        max_influences: CANDIDATES,
        ..Default::default()
    };
    let Ok(mut rows) = solver.raw_rows(prep, &options) else {
        return Vec::new();
    };
    rows.par_iter_mut().for_each(normalise_row);
    rows
}

/// Scales a row to sum 1, or empties it when its sum is not positive and finite.
fn normalise_row(row: &mut Vec<(u32, f32)>) {
    let sum: f32 = row.iter().map(|e| e.1).sum();
    if sum > 0.0 && sum.is_finite() {
        row.iter_mut().for_each(|e| e.1 /= sum);
    } else {
        row.clear();
    }
}

/// The candidate `joint`'s share in `row` and that share relative to the row's largest (both 0
/// when the row is missing or does not hold it).
fn share_and_relative(row: Option<&Vec<(u32, f32)>>, joint: u32) -> (f32, f32) {
    row.map_or((0.0, 0.0), |row| {
        let top = row.iter().map(|e| e.1).fold(0.0f32, f32::max);
        let share = row.iter().find(|e| e.0 == joint).map_or(0.0, |e| e.1);
        (share, if top > 0.0 { share / top } else { 0.0 })
    })
}

/// The surface patch of every welded vertex: the vertices reached from it over the welded
/// surface without leaving the ball of [`PATCH_RADIUS`] (at most [`PATCH_GATHER`], nearest
/// rings first), sorted by distance and thinned to [`PATCH_POINTS`] spread from the nearest to
/// the farthest (repeated when fewer are reachable: the encoder's max-pool ignores repeats).
/// `axes` is the direction of each vertex's nearest bone.
fn patches(positions: &[Vec3], normals: &[Vec3], adjacency: &Adjacency, axes: &[Vec3]) -> Vec<f32> {
    let n = positions.len();
    let mut out = vec![0.0f32; n * PATCH_POINTS * PATCH_DIMS];
    out.par_chunks_mut(PATCH_POINTS * PATCH_DIMS).enumerate().for_each_init(
        || (vec![u32::MAX; n], Vec::new()),
        |(seen, reached), (v, patch)| {
            let origin = positions[v];
            reached.clear();
            reached.push(v as u32);
            seen[v] = v as u32;
            let mut next = 0;
            while next < reached.len() && reached.len() < PATCH_GATHER {
                let u = reached[next] as usize;
                next += 1;
                for &w in adjacency.neighbors(u) {
                    let wi = w as usize;
                    if seen[wi] != v as u32 && (positions[wi] - origin).length() <= PATCH_RADIUS {
                        seen[wi] = v as u32;
                        reached.push(w);
                    }
                }
            }
            reached.sort_by(|&a, &b| {
                (positions[a as usize] - origin)
                    .length_squared()
                    .total_cmp(&(positions[b as usize] - origin).length_squared())
            });
            let z = normals[v].try_normalize().unwrap_or(Vec3::Z);
            let x = (axes[v] - z * axes[v].dot(z))
                .try_normalize()
                .unwrap_or_else(|| z.any_orthonormal_vector());
            let y = z.cross(x);
            for (i, point) in patch.chunks_exact_mut(PATCH_DIMS).enumerate() {
                let u = reached[i * reached.len() / PATCH_POINTS] as usize;
                let offset = (positions[u] - origin) / PATCH_RADIUS;
                point[0] = offset.dot(x);
                point[1] = offset.dot(y);
                point[2] = offset.dot(z);
                point[3] = normals[u].dot(z);
            }
        },
    );
    out
}

/// Per joint, the share of its segments' sample points that lie inside the solid of the welded
/// mesh (interior or boundary voxels; each closed piece is filled, the gaps between pieces and
/// around them are outside). A ground root, whose bone runs from the floor up between the legs,
/// scores low; a root inside a fish's body scores 1. An open mesh lets the flood in, so only
/// points on its shell count; a mesh that gives no voxels scores 0 everywhere.
fn inside_shares(positions: &[Vec3], triangles: &[[u32; 3]], bones: &[Bone], joint_count: usize) -> Vec<f32> {
    let mut hits = vec![0usize; joint_count];
    let mut total = vec![0usize; joint_count];
    let Some(solid) = VoxelGrid::new(positions, triangles, INSIDE_RESOLUTION) else {
        return vec![0.0; joint_count];
    };
    let inside = |p: Vec3| {
        solid
            .cell_of(p)
            .and_then(|c| solid.cells.get(solid.index(c)))
            .is_some_and(|&c| c != Cell::Exterior)
    };
    let last = (SEGMENT_SAMPLES - 1) as f32;
    for b in bones {
        let j = b.joint as usize;
        if j >= joint_count {
            continue;
        }
        for k in 0..SEGMENT_SAMPLES {
            total[j] += 1;
            hits[j] += usize::from(inside(b.a.lerp(b.b, k as f32 / last)));
        }
    }
    hits.iter()
        .zip(&total)
        .map(|(&h, &t)| if t > 0 { h as f32 / t as f32 } else { 0.0 })
        .collect()
}

/// Features of every welded vertex of `prep` in layout `version` (one of [`FEATURE_VERSIONS`]),
/// without the surface patches (all a network without a point encoder reads); `parents` is the
/// skeleton's parent list.
pub fn extract(prep: &Prepared, parents: &[Option<usize>], version: u32) -> Features {
    extract_inner(prep, parents, version, false)
}

/// [`extract`] plus every vertex's surface patch (for training samples, and for networks with a
/// point encoder).
pub fn extract_with_patches(prep: &Prepared, parents: &[Option<usize>], version: u32) -> Features {
    extract_inner(prep, parents, version, true)
}

fn extract_inner(prep: &Prepared, parents: &[Option<usize>], version: u32, with_patches: bool) -> Features {
    let n = prep.welded.vertex_count();
    let joint_count = prep.bones.joint_count.max(1);
    let facts = JointFacts::new(prep, parents);
    let inside = uses_inside_share(version).then(|| {
        inside_shares(
            &prep.welded.positions,
            &prep.welded.triangles,
            &prep.bones.segments,
            joint_count,
        )
    });
    let positions = &prep.welded.positions;
    let normals = vertex_normals(positions, &prep.welded.triangles);
    let cands: Vec<Vec<Candidate>> = positions.par_iter().map(|&p| candidates(prep, &facts, p)).collect();

    // Inverse-distance prior over the candidates, dense per joint for diffusion.
    let mut prior = vec![0.0f32; n * joint_count];
    prior.par_chunks_mut(joint_count).zip(&cands).for_each(|(row, cs)| {
        let dmin = cs.first().map_or(1.0, |c| c.distance.max(EPS));
        let total: f32 = cs.iter().map(|c| (dmin / c.distance.max(EPS)).powf(PRIOR_POWER)).sum();
        for c in cs {
            if let Some(w) = row.get_mut(c.joint as usize) {
                *w = (dmin / c.distance.max(EPS)).powf(PRIOR_POWER) / total.max(EPS);
            }
        }
    });
    let short = diffuse(&prior, joint_count, &prep.adjacency, SHORT_ROUNDS);
    let long = diffuse(&short, joint_count, &prep.adjacency, LONG_ROUNDS - SHORT_ROUNDS);
    let (pieces, piece_count) = prep.adjacency.components();
    let piece = piece_means(&prior, joint_count, &pieces, piece_count);
    let heat = heat_shares(prep);
    let voxel = if holds_voxel_binding(version) {
        voxel_shares(prep)
    } else {
        Vec::new()
    };
    let piece_bones = PieceBones::new(positions, &pieces, piece_count, &prep.bones.segments, joint_count);
    let patch = if with_patches {
        let axes: Vec<Vec3> = cands
            .iter()
            .map(|cs| {
                cs.first().map_or(Vec3::ZERO, |c| {
                    let b = &prep.bones.segments[c.segment];
                    b.b - b.a
                })
            })
            .collect();
        patches(positions, &normals, &prep.adjacency, &axes)
    } else {
        Vec::new()
    };

    let mut joints = vec![u32::MAX; n * CANDIDATES];
    let mut mask = vec![0.0f32; n * CANDIDATES];
    let mut values = vec![0.0f32; n * CANDIDATES * FEATURES];
    joints
        .par_chunks_mut(CANDIDATES)
        .zip(mask.par_chunks_mut(CANDIDATES))
        .zip(values.par_chunks_mut(CANDIDATES * FEATURES))
        .enumerate()
        .for_each(|(v, ((js, ms), xs))| {
            let cs = &cands[v];
            let Some(nearest) = cs.first() else {
                return;
            };
            let dmin = nearest.distance.max(EPS);
            let p = positions[v];
            let own_piece = pieces[v];
            let nearest_centroid = cs
                .iter()
                .map(|c| piece_bones.centroid_distance[piece_bones.at(own_piece, c.joint)])
                .fold(f32::INFINITY, f32::min)
                .max(EPS);
            let at = |field: &[f32], j: u32| field.get(v * joint_count + j as usize).copied().unwrap_or(0.0);
            for (k, c) in cs.iter().enumerate() {
                js[k] = c.joint;
                ms[k] = 1.0;
                let b = &prep.bones.segments[c.segment];
                let axis = b.b - b.a;
                let length = axis.length();
                let t = if length > EPS {
                    (p - b.a).dot(axis) / (length * length)
                } else {
                    0.0
                };
                let closest = closest_on_segment(p, b.a, b.b);
                let away = p - closest;
                let d = c.distance.max(EPS);
                let dir = away.normalize_or_zero();
                let along = if length > EPS { dir.dot(axis / length) } else { 0.0 };
                let j = c.joint as usize;
                let children = facts.children.get(j).copied().unwrap_or(0);
                let relation = facts.relation(c.joint, nearest.joint);
                let in_piece = piece_bones.at(own_piece, c.joint);
                let x = &mut xs[k * FEATURES..(k + 1) * FEATURES];
                x[0] = piece_bones.through[in_piece];
                x[1] = (d / dmin).ln().min(8.0);
                x[2] = k as f32 / CANDIDATES as f32;
                x[3] = t.clamp(0.0, 1.0);
                x[4] = (t - t.clamp(0.0, 1.0)).clamp(-3.0, 3.0);
                x[5] = piece_bones.holds_joint[in_piece];
                x[6] = (d / length.max(EPS)).min(10.0).ln_1p();
                x[7] = normals[v].dot(dir);
                x[8] = (piece_bones.centroid_distance[in_piece].max(EPS) / nearest_centroid)
                    .ln()
                    .min(8.0);
                x[9] = along;
                x[10] = f32::from(u8::from(children == 0));
                x[ROOT_OR_INSIDE] = match &inside {
                    Some(share) => share.get(j).copied().unwrap_or(0.0),
                    None => f32::from(u8::from(facts.is_root.get(j).copied().unwrap_or(false))),
                };
                x[12] = (children as f32 / 4.0).min(1.0);
                x[13] = f32::from(u8::from(k == 0));
                for r in 1..=4 {
                    x[13 + r] = f32::from(u8::from(relation == r));
                }
                x[18] = (dmin / d).powf(PRIOR_POWER);
                x[19] = at(&prior, c.joint);
                x[20] = at(&short, c.joint);
                x[21] = at(&long, c.joint);
                x[22] = at(&piece, c.joint);
                x[23] = (facts.segments.get(j).map_or(0, Vec::len) as f32 / 4.0).min(1.0);
                (x[HEAT_SHARE], x[25]) = share_and_relative(heat.get(v), c.joint);
                if holds_voxel_binding(version) {
                    (x[VOXEL_SHARE], x[VOXEL_RELATIVE]) = share_and_relative(voxel.get(v), c.joint);
                }
            }
        });
    Features {
        vertex_count: n,
        joints,
        mask,
        values,
        pieces,
        single_bone: piece_bones.single_bone(),
        patch,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The eight corners of the box `[lo, hi]`.
    fn corners(lo: Vec3, hi: Vec3) -> Vec<Vec3> {
        (0..8)
            .map(|i| {
                Vec3::new(
                    if i & 1 == 0 { lo.x } else { hi.x },
                    if i & 2 == 0 { lo.y } else { hi.y },
                    if i & 4 == 0 { lo.z } else { hi.z },
                )
            })
            .collect()
    }

    #[test]
    fn piece_bones_say_which_bone_runs_through_which_piece() {
        // Piece 0: a box around y in [0, 1]; piece 1: a box around y in [1, 2]. Bone 0 runs
        // from y = 0.1 to 0.9 (inside piece 0), bone 1 from y = 0.9 to 1.9 (its joint inside
        // piece 0, most of it inside piece 1).
        let mut positions = corners(Vec3::new(-0.2, 0.0, -0.2), Vec3::new(0.2, 1.0, 0.2));
        positions.extend(corners(Vec3::new(-0.2, 1.0, -0.2), Vec3::new(0.2, 2.0, 0.2)));
        let label: Vec<u32> = (0..16).map(|i| u32::from(i >= 8)).collect();
        let bones = [
            Bone {
                joint: 0,
                a: Vec3::new(0.0, 0.1, 0.0),
                b: Vec3::new(0.0, 0.9, 0.0),
            },
            Bone {
                joint: 1,
                a: Vec3::new(0.0, 0.9, 0.0),
                b: Vec3::new(0.0, 1.9, 0.0),
            },
        ];
        let pb = PieceBones::new(&positions, &label, 2, &bones, 2);
        let at = |piece, joint| pb.at(piece, joint);
        assert_eq!(pb.through[at(0, 0)], 1.0);
        assert_eq!(pb.holds_joint[at(0, 0)], 1.0);
        assert_eq!(pb.through[at(1, 0)], 0.0);
        assert_eq!(pb.holds_joint[at(1, 0)], 0.0);
        // Bone 1's samples at y = 0.9, 1.025, ..., 1.9: the first lies outside piece 1's padded
        // box (y >= 0.95), the rest inside; the first two lie in piece 0's box (y <= 1.05).
        assert!((pb.through[at(1, 1)] - 8.0 / 9.0).abs() < 1e-6);
        assert_eq!(pb.holds_joint[at(1, 1)], 0.0);
        assert_eq!(pb.holds_joint[at(0, 1)], 1.0);
        assert!(
            (pb.through[at(0, 1)] - 2.0 / 9.0).abs() < 1e-6,
            "{}",
            pb.through[at(0, 1)]
        );
        // Piece 0 holds both joints; piece 1 holds none and only bone 1 runs through it.
        assert_eq!(pb.single_bone(), vec![false, true]);
        // The centroid of piece 1 (y = 1.5) lies on bone 1 and 0.6 from bone 0's end.
        assert!(pb.centroid_distance[at(1, 1)] < 1e-6);
        assert!((pb.centroid_distance[at(1, 0)] - 0.6).abs() < 1e-5);
    }

    #[test]
    fn versions_5_and_6_add_voxel_binding_in_two_slots_and_change_nothing_else() {
        // A closed tube around a four-bone chain: mid-segment vertices belong to their segment's
        // bone by voxel binding (the solver's own test), so their voxel share is largest there.
        let (mesh, skeleton) = rigml_skin::synthetic::closed_tube_chain(4, 8, 16, 0.3, 1.0);
        let prep = Prepared::new(&mesh, &skeleton).unwrap();
        let extract_v = |version| extract(&prep, &skeleton.parents, version);
        let (v3, v4, v5, v6) = (extract_v(3), extract_v(4), extract_v(5), extract_v(6));
        let voxel_slots = [VOXEL_SHARE, VOXEL_RELATIVE];
        for v in 0..v3.vertex_count {
            for k in 0..CANDIDATES {
                for f in (0..FEATURES).filter(|f| !voxel_slots.contains(f)) {
                    assert_eq!(v3.pair(v, k)[f], v5.pair(v, k)[f], "vertex {v} slot {k} feature {f}");
                    assert_eq!(v4.pair(v, k)[f], v6.pair(v, k)[f], "vertex {v} slot {k} feature {f}");
                }
                for f in voxel_slots {
                    assert_eq!(v5.pair(v, k)[f], v6.pair(v, k)[f]);
                }
            }
            let shares: f32 = (0..CANDIDATES).map(|k| v5.pair(v, k)[VOXEL_SHARE]).sum();
            assert!((shares - 1.0).abs() < 1e-4, "vertex {v}: shares sum to {shares}");
        }
        // The welded surface is normalised; the rule reads the tube's own units.
        let mut source = vec![Vec3::ZERO; v5.vertex_count];
        for (s, &w) in prep.welded.map.iter().enumerate() {
            source[w as usize] = mesh.positions[s];
        }
        let mut checked = 0;
        for (v, p) in source.iter().enumerate() {
            let frac = p.y.fract();
            if !(0.3..0.7).contains(&frac) || p.y >= 4.0 {
                continue;
            }
            let best = (0..CANDIDATES)
                .max_by(|&a, &b| v5.pair(v, a)[VOXEL_SHARE].total_cmp(&v5.pair(v, b)[VOXEL_SHARE]))
                .unwrap();
            assert_eq!(
                v5.joints[v * CANDIDATES + best],
                p.y.floor() as u32,
                "vertex {v} at {p}"
            );
            assert_eq!(v5.pair(v, best)[VOXEL_RELATIVE], 1.0);
            checked += 1;
        }
        assert!(checked > 0);
    }

    #[test]
    fn inside_shares_tell_a_bone_in_the_solid_from_one_outside_it() {
        // A closed box over y in [0, 1]. Bone 0 starts half a unit below it (a ground root),
        // bone 1 runs inside it, bone 2 lies above it, joint 3 has no segment.
        let positions = corners(Vec3::new(-0.3, 0.0, -0.3), Vec3::new(0.3, 1.0, 0.3));
        let triangles = [
            [0, 2, 1],
            [1, 2, 3],
            [4, 5, 6],
            [5, 7, 6],
            [0, 1, 4],
            [1, 5, 4],
            [2, 6, 3],
            [3, 6, 7],
            [0, 4, 2],
            [2, 4, 6],
            [1, 3, 5],
            [3, 7, 5],
        ];
        let bone = |joint, a: f32, b: f32| Bone {
            joint,
            a: Vec3::new(0.0, a, 0.0),
            b: Vec3::new(0.0, b, 0.0),
        };
        let bones = [bone(0, -0.5, 0.5), bone(1, 0.5, 0.9), bone(2, 1.5, 2.0)];
        let share = inside_shares(&positions, &triangles, &bones, 4);
        // Bone 0's samples at y = -0.5, -0.375, ..., 0.5: those from y = 0 up (5 of 9) are in.
        assert!((share[0] - 5.0 / 9.0).abs() < 1.5 / 9.0, "{share:?}");
        assert_eq!(share[1], 1.0);
        assert_eq!(share[2], 0.0);
        assert_eq!(share[3], 0.0);
        // No voxels: nothing is inside.
        assert_eq!(inside_shares(&[], &[], &bones, 4), vec![0.0; 4]);
    }
}
