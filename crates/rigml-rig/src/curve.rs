//! The curve-skeleton placer (`--template curve`; `--template auto` is [`crate::Auto`], this
//! with the learned placer's pruning): a curve skeleton for any shape — quadrupeds, fish,
//! creatures, robots — with no template.
//!
//! Steps, each its own module:
//! 1. [`solid`]: voxelise the mesh, bridge islands (eyes, props, armour plates) to their nearest
//!    neighbour so the shape is one piece, and detect a mirror plane; a symmetric shape's solid
//!    is made exactly symmetric.
//! 2. [`reeb`]: geodesic distance inside the solid from a thick voxel near the middle; each
//!    connected piece of a distance band is a node at its centroid (a discrete Reeb graph,
//!    a tree by construction).
//! 3. [`simplify`]: prune short side branches, cut into chains between branch points, put
//!    joints at the chains' bends and evenly between them.
//! 4. Here: pair left/right joints across the mirror plane, make each pair exactly mirrored,
//!    and name the joints (`root`, `joint_001`, ..., `joint_007_L` / `joint_007_R`).
//! 5. With a [`Support`] (the learned placer's joints, see [`crate::Auto`]): [`support`]
//!    grafts on the end chains of a second, less pruned curve skeleton that the support backs
//!    and the first lacks (short limbs the pruning took for the rim of a thick body: a T-rex's
//!    arms), then removes the end chains no supporting bone comes near, when they are a large
//!    enough share of the joints, before naming.
//! 6. [`legs`]: a shape standing on two mirrored pairs of end chains gets the artists' quadruped
//!    legs (shoulder and hip up at the spine, elbow or stifle, carpus or hock, foot, toe) in
//!    place of those chains, named by their roles (`thigh_L`, ...), and an IK pole target in
//!    front of each leg, a control joint without weight, before naming.
//!
//! All lengths are fractions of the longest side of the mesh's bounding box, so the result
//! does not depend on the file's units.

pub mod legs;
pub mod reeb;
pub mod simplify;
pub mod solid;
pub mod support;

use crate::{check_mesh, PlacedSkeleton, RigError, SkeletonPlacer};
use glam::Vec3;
use rigml_core::Mesh;
use rigml_geom::Cell;
use simplify::Joints;
pub use simplify::Lengths;
use solid::{Mirror, Solid};
pub use support::Support;

/// Parameters of [`CurveSkeleton`]; lengths are fractions of the longest bounding-box side. The
/// defaults were chosen on the train and val splits (see the crate's tests and the report of
/// `rigml eval --methods rig-curve`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurveParams {
    /// Voxels along the longest side.
    pub resolution: usize,
    /// Width of a distance band, in voxels.
    pub band: f32,
    /// Branch pruning, joint spacing and bone lengths, as fractions of the longest side
    /// (except `thickness`, in local radii).
    pub chains: Lengths,
    /// Share of voxels whose mirror image must be solid for the shape to count as symmetric.
    pub symmetry: f32,
    /// Largest distance between a joint and its partner's mirror image for them to pair.
    pub pair: f32,
    /// On a symmetric shape, an unpaired joint of a central chain (its parent unpaired too)
    /// within this distance of the mirror plane is put on it.
    pub central: f32,
    /// With a [`Support`]: end chains whose joints are on average farther than this from the
    /// supporting skeleton's bones are removed.
    pub support_reach: f32,
    /// When chains were removed, supporting joints farther than this from every remaining bone
    /// are added (see [`support::prune_unsupported`]).
    pub support_fill: f32,
    /// The pruning applies only when it removes at least this share of the joints: a model
    /// that disagrees with a few chains only is more likely missing a thin part (a tail, ears)
    /// than seeing parts artists leave unrigged.
    pub support_share: f32,
    /// Replace the leg chains of a shape standing on four mirrored legs by the quadruped leg
    /// templates ([`legs`]).
    pub quadruped_legs: bool,
    /// With the quadruped legs, add an IK pole target in front of each leg
    /// ([`legs::add_poles`]): control joints that carry no weight. Off by default: placed where
    /// one family's artists put theirs (Quaternius' animals pack), they brought the placed
    /// skeleton closer to that family's rigs only and farther from every other family's
    /// (family means of CD-J2J, docs/experiments/2026-11-27-ik-poles-by-family.md).
    pub leg_poles: bool,
    /// Put a ground root ([`crate::ground`]) above the root: a weightless `root` at the model's
    /// origin (the first joint is then `body`).
    pub ground_root: bool,
    /// With a [`Support`], end chains of a second curve skeleton pruned with this `thickness`
    /// (0 = none) that the default one lacks but the support agrees with are grafted on
    /// ([`support::graft_supported`]).
    pub loose_thickness: f32,
    /// See `loose_thickness`: a chain the default skeleton lacks is on average farther than
    /// this from its bones.
    pub loose_apart: f32,
    /// See `loose_thickness`: a grafted chain is on average within this of the support's bones.
    pub loose_reach: f32,
}

impl Default for CurveParams {
    fn default() -> Self {
        CurveParams {
            resolution: 128,
            band: 2.0,
            chains: Lengths {
                min_branch: 0.1,
                thickness: 2.5,
                spacing: 0.07,
                bend: 0.015,
                min_bone: 0.02,
                tip_trim: 0.0,
            },
            symmetry: 0.85,
            pair: 0.03,
            central: 0.06,
            support_reach: 0.08,
            support_fill: 0.05,
            support_share: 0.25,
            quadruped_legs: true,
            leg_poles: false,
            ground_root: true,
            loose_thickness: 1.5,
            loose_apart: 0.04,
            loose_reach: 0.045,
        }
    }
}

/// The general placer: a curve skeleton from a Reeb graph of geodesic distance in the voxel
/// solid. See the module documentation.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CurveSkeleton {
    pub params: CurveParams,
}

/// What the placer found besides the joints (for reports and tests).
#[derive(Debug, Clone, PartialEq)]
pub struct CurveDetail {
    pub skeleton: PlacedSkeleton,
    /// Mirror axis (0 = x, 2 = z) and plane coordinate when the shape is symmetric.
    pub mirror: Option<(usize, f32)>,
    /// Best mirror score found (share of voxels whose image is solid).
    pub symmetry_score: f32,
    /// Islands bridged into the main piece.
    pub bridges: usize,
    /// Nodes of the Reeb tree before simplification.
    pub reeb_nodes: usize,
    /// Joints removed because no supporting bone came near their end chain.
    pub unsupported: usize,
    /// Supporting joints added where the removed chains left no bone near.
    pub filled: usize,
    /// The four legs of a shape found standing on them (empty otherwise); their chains were
    /// replaced by the leg templates when [`CurveParams::quadruped_legs`] is set.
    pub legs: Vec<legs::LegFrame>,
}

impl SkeletonPlacer for CurveSkeleton {
    fn name(&self) -> &'static str {
        "curve"
    }

    fn place(&self, mesh: &Mesh) -> Result<PlacedSkeleton, RigError> {
        self.place_detail(mesh).map(|d| d.skeleton)
    }
}

impl CurveSkeleton {
    fn error(message: impl Into<String>) -> RigError {
        RigError::Placement {
            placer: "curve".into(),
            message: message.into(),
        }
    }

    /// [`SkeletonPlacer::place`] with what was found on the way. Without a support nothing is
    /// grafted, so the loose curve skeleton is not built.
    pub fn place_detail(&self, mesh: &Mesh) -> Result<CurveDetail, RigError> {
        let alone = CurveSkeleton {
            params: CurveParams {
                loose_thickness: 0.0,
                ..self.params
            },
        };
        self.finish(alone.curve(mesh)?, None)
    }

    /// The first part of placing, which needs no support: the curve skeleton's joints, paired
    /// across the mirror plane, not yet named (so that a caller can compute a [`Support`] at
    /// the same time and pass it to [`CurveSkeleton::finish`]).
    pub fn curve(&self, mesh: &Mesh) -> Result<Curve, RigError> {
        check_mesh(mesh)?;
        let p = &self.params;
        let (lo, hi) = mesh
            .positions
            .iter()
            .fold((Vec3::MAX, Vec3::MIN), |(lo, hi), q| (lo.min(*q), hi.max(*q)));
        let size = (hi - lo).max_element();
        let mut solid = Solid::new(&mesh.positions, &mesh.triangles, p.resolution)
            .ok_or_else(|| Self::error("the mesh gives no solid voxels"))?;
        // Characters stand on Y; left/right is X (glTF) or, for a shape turned sideways, Z.
        let (found, symmetry_score) = solid.best_mirror(&[0, 2]).map_or((None, 0.0), |(m, s)| (Some(m), s));
        let mirror = found.filter(|_| symmetry_score >= p.symmetry);
        if let Some(m) = mirror {
            solid.symmetrise(m);
        }
        let bridges = solid.bridge_islands();
        if let Some(m) = mirror {
            solid.symmetrise(m);
        }
        let depth = solid.depth();
        let coords = |v: usize| solid.grid.coords(solid.voxels[v] as usize);
        let on_plane = |v: usize| mirror.is_none_or(|m| m.on_plane(coords(v)));
        let source = reeb::source_voxel(&solid, &depth, &on_plane);
        let mut sources = vec![source];
        // With the plane between two voxel layers the source's image is the other half of it.
        if let Some(image) = mirror
            .and_then(|m| m.apply(solid.grid.dims, coords(source)))
            .map(|c| solid.compact[solid.grid.index(c)])
            .filter(|&c| c != solid::NONE && c as usize != source)
        {
            sources.push(image as usize);
        }
        let nodes = reeb::reeb_tree(&solid, &sources, p.band, &depth);
        let lengths = p.chains.scaled(size);
        // The curve skeleton pruned with `thickness`: joints pulled inside, mirror pairs made.
        let skeleton = |thickness: f32| {
            let mut joints = simplify::joints(&nodes, &Lengths { thickness, ..lengths });
            pull_inside(&mut joints.positions, &solid);
            let pairs = match mirror {
                Some(m) => {
                    let tolerances = Tolerances {
                        pair: p.pair * size,
                        on_plane: 0.5 * lengths.min_bone,
                        central: p.central * size,
                    };
                    enforce_symmetry(&mut joints, m, &solid, &tolerances)
                }
                None => vec![None; joints.positions.len()],
            };
            (joints, pairs)
        };
        let (joints, pairs) = skeleton(lengths.thickness);
        let loose = (p.loose_thickness > 0.0).then(|| skeleton(p.loose_thickness));
        Ok(Curve {
            loose,
            surface: surface_of(mesh),
            solid,
            size,
            bounds: (lo, hi),
            joints,
            pairs,
            mirror,
            symmetry_score,
            bridges,
            reeb_nodes: nodes.len(),
        })
    }

    /// The second part of placing: with `support`, remove the end chains farther than
    /// [`CurveParams::support_reach`] from its bones and add its joints where they left a gap
    /// ([`support::prune_unsupported`]); then name the joints.
    pub fn finish(&self, curve: Curve, support: Option<&Support>) -> Result<CurveDetail, RigError> {
        let p = &self.params;
        let Curve {
            loose,
            surface,
            solid,
            size,
            bounds: (lo, hi),
            mut joints,
            mut pairs,
            mirror,
            symmetry_score,
            bridges,
            reeb_nodes,
        } = curve;
        if let (Some(support), Some((loose, loose_pairs))) = (support, &loose) {
            support::graft_supported(
                &mut joints,
                &mut pairs,
                loose,
                loose_pairs,
                support,
                p.loose_reach * size,
                p.loose_apart * size,
            );
        }
        let (unsupported, filled) = support.map_or((0, 0), |support| {
            let (reach, fill) = (p.support_reach * size, p.support_fill * size);
            support::prune_unsupported(&mut joints, &mut pairs, support, reach, fill, p.support_share)
        });
        if filled > 0 {
            // The supporting joints come from another placer: make sure they are inside too.
            pull_inside(&mut joints.positions, &solid);
        }
        let plane = mirror.map(|m| (m.axis, m.plane(&solid.grid)));
        let found = plane
            .and_then(|m| legs::find(&joints, &pairs, &surface, m, lo, hi, size))
            .unwrap_or_default();
        let mut roles = Vec::new();
        if p.quadruped_legs && !found.is_empty() {
            roles = legs::apply(&mut joints, &mut pairs, &found);
            pull_inside(&mut joints.positions, &solid);
            if p.leg_poles {
                legs::add_poles(&mut joints, &mut pairs, &mut roles, &found);
            }
        }
        // The head end of a four-legged shape; otherwise the axis across the mirror axis that
        // glTF characters face.
        let forward = found.first().map_or(
            match mirror.map(|m| m.axis) {
                Some(2) => Vec3::X,
                _ => Vec3::Z,
            },
            |leg| leg.frame.ahead,
        );
        let mut skeleton = name_joints(&joints, &pairs, &roles, plane, forward);
        if p.ground_root {
            // Up is where the legs stand, else Y (see `curve`); it only matters when the
            // origin lies outside the bounds. The floor: the lowest corner of the bounds.
            let up = found.first().map_or(Vec3::Y, |leg| leg.frame.up);
            let floor = Vec3::select(up.cmpgt(Vec3::ZERO), lo, hi).dot(up);
            let mut at = crate::ground::ground_point_in(lo, hi, up, floor);
            // A four-legged shape's root stands at the artists' height above its feet.
            if let Some(leg) = found.iter().find(|leg| leg.frame.front) {
                let frame = &leg.frame;
                at += frame.up * ((legs::ROOT_HEIGHT - frame.coordinates(at).up) * frame.height());
            }
            crate::ground::add_ground_root(&mut skeleton, at);
            // IK pole targets hang from it, as in the artists' rigs: they stay put when the
            // body moves.
            for j in 0..skeleton.len() {
                if legs::is_pole(&skeleton.names[j]) {
                    skeleton.parents[j] = Some(0);
                }
            }
        }
        skeleton.validate()?;
        Ok(CurveDetail {
            skeleton,
            mirror: mirror.map(|m| (m.axis, m.plane(&solid.grid))),
            symmetry_score,
            bridges,
            reeb_nodes,
            unsupported,
            filled,
            legs: found.iter().map(|leg| leg.frame).collect(),
        })
    }
}

/// The curve skeleton of a mesh before pruning and naming ([`CurveSkeleton::curve`]).
#[derive(Debug)]
pub struct Curve {
    /// The curve skeleton pruned with [`CurveParams::loose_thickness`], with its mirror pairs.
    loose: Option<(Joints, Vec<Option<usize>>)>,
    /// The mesh's triangles as (centroid, area): where its surface is, for telling a
    /// four-legged shape's head end from its tail end ([`legs::find`]).
    surface: Vec<(Vec3, f32)>,
    solid: Solid,
    /// Longest side of the mesh's bounding box.
    size: f32,
    /// The mesh's bounding box (lowest and highest corner).
    bounds: (Vec3, Vec3),
    joints: Joints,
    pairs: Vec<Option<usize>>,
    mirror: Option<Mirror>,
    symmetry_score: f32,
    bridges: usize,
    reeb_nodes: usize,
}

/// Every triangle of `mesh` as (centroid, area); degenerate ones weigh nothing.
fn surface_of(mesh: &Mesh) -> Vec<(Vec3, f32)> {
    mesh.triangles
        .iter()
        .filter_map(|t| {
            let [a, b, c] = [0, 1, 2].map(|k| mesh.positions.get(t[k] as usize).copied());
            let (a, b, c) = (a?, b?, c?);
            Some(((a + b + c) / 3.0, 0.5 * (b - a).cross(c - a).length()))
        })
        .collect()
}

/// Move joints that are not in an interior voxel (chain points on the surface layer, e.g. at
/// the rim of a thick part) to the nearest interior voxel centre within two voxels. Joints of
/// parts thinner than that have no interior voxel near and stay.
fn pull_inside(positions: &mut [Vec3], solid: &Solid) {
    let grid = &solid.grid;
    for p in positions.iter_mut() {
        let Some(c) = grid.cell_of(*p) else { continue };
        if grid.cells[grid.index(c)] == Cell::Interior {
            continue;
        }
        let mut best: Option<(f32, Vec3)> = None;
        for dz in -2i32..=2 {
            for dy in -2i32..=2 {
                for dx in -2i32..=2 {
                    let n = [
                        c[0] as i64 + dx as i64,
                        c[1] as i64 + dy as i64,
                        c[2] as i64 + dz as i64,
                    ];
                    if (0..3).any(|a| n[a] < 0 || n[a] >= grid.dims[a] as i64) {
                        continue;
                    }
                    let n = n.map(|x| x as usize);
                    if grid.cells[grid.index(n)] != Cell::Interior {
                        continue;
                    }
                    let q = grid.center(n);
                    let d = q.distance_squared(*p);
                    if best.is_none_or(|b| d < b.0) {
                        best = Some((d, q));
                    }
                }
            }
        }
        if let Some((_, q)) = best {
            *p = q;
        }
    }
}

/// Distances of [`enforce_symmetry`], in model units (see [`CurveParams`]).
struct Tolerances {
    pair: f32,
    /// Unpaired joints this near the plane are put on it.
    on_plane: f32,
    central: f32,
}

/// Pair joints with the joint nearest their mirror image (mutually nearest, within `pair`),
/// make each pair exactly mirrored and put unpaired joints within `on_plane` of the plane on
/// it, or within `central` when their parent is unpaired too. Returns each joint's partner.
fn enforce_symmetry(joints: &mut Joints, mirror: Mirror, solid: &Solid, tolerances: &Tolerances) -> Vec<Option<usize>> {
    let n = joints.positions.len();
    let plane = mirror.plane(&solid.grid);
    let axis = mirror.axis;
    let on_plane = tolerances.on_plane;
    let nearest_to_image = |j: usize, positions: &[Vec3]| -> Option<(usize, f32)> {
        let image = mirror.reflect(&solid.grid, positions[j]);
        (0..n)
            .filter(|&k| k != j)
            .map(|k| (k, positions[k].distance(image)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    };
    let mut partner = vec![None; n];
    for (j, slot) in partner.iter_mut().enumerate() {
        if (joints.positions[j][axis] - plane).abs() <= on_plane {
            continue;
        }
        if let Some((k, d)) = nearest_to_image(j, &joints.positions) {
            if d <= tolerances.pair && nearest_to_image(k, &joints.positions).is_some_and(|(back, _)| back == j) {
                *slot = Some(k);
            }
        }
    }
    let original = joints.positions.clone();
    for j in 0..n {
        match partner[j] {
            Some(k) if partner[k] == Some(j) => {
                let image = mirror.reflect(&solid.grid, original[k]);
                joints.positions[j] = (original[j] + image) * 0.5;
            }
            _ => {
                partner[j] = None;
                let central = joints.parents[j].is_none_or(|p| partner[p].is_none());
                let reach = if central {
                    tolerances.central.max(on_plane)
                } else {
                    on_plane
                };
                if (original[j][axis] - plane).abs() <= reach {
                    joints.positions[j][axis] = plane;
                }
            }
        }
    }
    partner
}

/// Names: `body` for joint 0 (the ground root put above it is `root`), a joint with a role
/// (`roles`, e.g. a quadruped's `thigh`) its role's name, the others `joint_NNN` numbered in
/// order; a mirrored pair shares its name with `_L` on the +axis side (the character's left in
/// glTF) and `_R` on the other.
fn name_joints(
    joints: &Joints,
    pairs: &[Option<usize>],
    roles: &[Option<&str>],
    mirror: Option<(usize, f32)>,
    forward: Vec3,
) -> PlacedSkeleton {
    let n = joints.positions.len();
    let mut names = vec![String::new(); n];
    let mut number = 0;
    for j in 0..n {
        if !names[j].is_empty() {
            continue;
        }
        if j == 0 {
            names[j] = "body".into();
            continue;
        }
        let base = match roles.get(j).copied().flatten() {
            Some(role) => role.to_string(),
            None => {
                number += 1;
                format!("joint_{number:03}")
            }
        };
        match (pairs.get(j).copied().flatten(), mirror) {
            (Some(k), Some((axis, plane))) if k < n && names[k].is_empty() => {
                let left = |i: usize| joints.positions[i][axis] > plane;
                names[j] = format!("{base}_{}", if left(j) { "L" } else { "R" });
                names[k] = format!("{base}_{}", if left(j) { "R" } else { "L" });
            }
            _ => names[j] = base,
        }
    }
    PlacedSkeleton {
        names,
        parents: joints.parents.clone(),
        heads: joints.positions.clone(),
        forward,
    }
}
