//! The rig library's placer (`--template library`, and what `detect` tries for shapes that are
//! not standing humanoids): the rig of the most alike training character, moved onto the mesh
//! by the two bounding boxes ([`rigml_learn::skeleton::library`]).
//!
//! `detect` takes the library's rig only when the shapes are alike enough (the library's
//! threshold, 0.6 in the shipped model): a new mesh of a family the library holds gets that
//! family's rig, joint names and conventions included; any other shape gets the general
//! template as before. `--template library` takes the best rig whatever its similarity.
//!
//! A standing humanoid keeps the humanoid template's landmarks, and the library may still give
//! it its artists' conventions ([`humanoid_match`]): a library rig stored with the humanoid
//! template's joints on its own mesh ([`Anchors`]) is carried joint by joint, each artist joint
//! keeping its place relative to the nearest template bone, onto the template's joints on the
//! new mesh. Of the five most alike such rigs at or above the threshold, the one the others
//! agree with most (the least summed chamfer distance to them) is taken, so that one odd rig
//! among a family's does not decide (docs/experiments/2026-12-07-humanoid-conventions.md).

use crate::{check_mesh, LearnedPlacer, PlacedSkeleton, Placement, RigError, SkeletonPlacer};
use glam::Vec3;
use rigml_core::Mesh;
use rigml_geom::{chamfer, segment_parameter};
use rigml_learn::skeleton::library::{Anchors, Descriptor, LibraryRig, RigLibrary};

/// How many of the most alike anchored rigs vote on a humanoid's conventions
/// ([`humanoid_match`]); chosen leaving families out on the train split.
pub const CONSENSUS: usize = 5;

/// The library's best rig for one mesh.
#[derive(Debug, Clone)]
pub struct LibraryMatch {
    /// The library rig's id (the training character it came from).
    pub id: String,
    /// How alike the two shapes are (0 to 1, [`Descriptor::similarity`]).
    pub similarity: f32,
    /// Its joints moved onto the mesh.
    pub skeleton: PlacedSkeleton,
}

impl LibraryMatch {
    /// As a placement by the `library` template, naming the rig.
    pub fn into_placement(self) -> Placement {
        Placement {
            template: "library",
            library_rig: Some((self.id, self.similarity)),
            skeleton: self.skeleton,
        }
    }
}

/// The best rig of `library` for `mesh`, moved onto it; `None` for an empty library.
pub fn best_match(library: &RigLibrary, mesh: &Mesh) -> Result<Option<LibraryMatch>, RigError> {
    check_mesh(mesh)?;
    let Some(target) = Descriptor::of(&mesh.positions, &mesh.triangles) else {
        return Err(RigError::Degenerate);
    };
    let Some((similarity, rig)) = library.best(&target) else {
        return Ok(None);
    };
    let skeleton = PlacedSkeleton {
        names: rig.names.clone(),
        parents: rig.parents.clone(),
        heads: rig.joints.iter().map(|p| rig.descriptor.move_to(*p, &target)).collect(),
        // The library's rigs and the meshes it is used on follow glTF: +Z forward.
        forward: Vec3::Z,
    };
    skeleton.validate()?;
    Ok(Some(LibraryMatch {
        id: rig.id.clone(),
        similarity,
        skeleton,
    }))
}

/// `rig`'s joints carried from its own humanoid template joints (`anchors`) onto `template`, the
/// humanoid template placed on the new mesh: each joint keeps its place along, and its offset
/// from, the nearest bone of `anchors` whose two joints `template` also has, the offset scaled
/// by the two meshes' sizes (the longest side of the box). Not turned with the bone: turning it
/// by the rotation between the two bones was no better leaving families out (CD-J2J over
/// characters 0.0478 against 0.0477, 0.0464 over families either way). `None` when the two
/// templates share no bone.
fn carry(rig: &LibraryRig, anchors: &Anchors, template: &PlacedSkeleton, target: &Descriptor) -> Option<Vec<Vec3>> {
    let index = |name: &str| template.names.iter().position(|n| n == name);
    // (parent, child) in anchors, then in template.
    let shared: Vec<(usize, usize, usize, usize)> = anchors
        .parents
        .iter()
        .enumerate()
        .filter_map(|(c, p)| {
            let p = (*p)?;
            Some((p, c, index(&anchors.names[p])?, index(&anchors.names[c])?))
        })
        .collect();
    if shared.is_empty() {
        return None;
    }
    let size = target.extent.max_element() / rig.descriptor.extent.max_element();
    let h = &anchors.heads;
    let carried = rig
        .joints
        .iter()
        .map(|&a| {
            let (t, p, c, tp, tc) = shared
                .iter()
                .map(|&(p, c, tp, tc)| {
                    let t = segment_parameter(a, h[p], h[c]);
                    (a.distance(h[p] + t * (h[c] - h[p])), t, p, c, tp, tc)
                })
                .min_by(|x, y| x.0.total_cmp(&y.0))
                .map(|(_, t, p, c, tp, tc)| (t, p, c, tp, tc))?;
            let on = h[p] + t * (h[c] - h[p]);
            let (s2, e2) = (template.heads[tp], template.heads[tc]);
            Some(s2 + t * (e2 - s2) + (a - on) * size)
        })
        .collect::<Option<Vec<Vec3>>>()?;
    carried.iter().all(|p| p.is_finite()).then_some(carried)
}

/// Whether a joint named `name` is an IK pole target by the usual naming (`PoleTarget.L`,
/// `knee_pole`): a control joint that carries no skin weight when it is a leaf
/// ([`crate::controls`]).
pub fn is_pole_name(name: &str) -> bool {
    name.to_ascii_lowercase().contains("pole")
}

/// Template joints whose landmarks the carried rig keeps (the template's Mixamo names): the
/// ankles and toes, which retargeting plants on the ground. Carried by the library's offsets the
/// KayKit ranger's ankles sat 3 % of its height off and a retargeted run sank into the floor.
const KEPT_LANDMARKS: [&str; 4] = ["LeftFoot", "RightFoot", "LeftToeBase", "RightToeBase"];
/// How near (a fraction of the mesh's size) a carried joint must be to a kept landmark to take
/// its place.
const KEEP_WITHIN: f32 = 0.06;

/// The carried joints that play a kept landmark's part (mutually nearest, within
/// [`KEEP_WITHIN`] of the size) move onto it; the artist's root (when the rig has one root with
/// children), if it lies where the template put its ground root, is renamed `root`, rigml's
/// ground root, which skinning leaves without weight ([`crate::controls`]; the 2019 animated
/// men's root, `Bone`, took the feet's weight and left them behind when a clip walked).
fn keep_landmarks(skeleton: &mut PlacedSkeleton, template: &PlacedSkeleton, size: f32) {
    let nearest = |p: Vec3, set: &[Vec3]| {
        set.iter()
            .enumerate()
            .map(|(i, q)| (i, q.distance(p)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    };
    let mut moves = Vec::new();
    for (k, name) in template.names.iter().enumerate() {
        if !KEPT_LANDMARKS.contains(&name.as_str()) {
            continue;
        }
        let t = template.heads[k];
        let Some((i, d)) = nearest(t, &skeleton.heads) else {
            continue;
        };
        if d < KEEP_WITHIN * size && nearest(skeleton.heads[i], &template.heads).is_some_and(|(kk, _)| kk == k) {
            moves.push((i, t));
        }
    }
    for (i, t) in moves {
        skeleton.heads[i] = t;
    }
    let ground = (0..template.len()).find(|&j| crate::ground::is_ground_root(&template.names, &template.parents, j));
    if let Some(g) = ground {
        let at = template.heads[g];
        let has_root = skeleton.names.iter().any(|n| n == crate::ground::GROUND_ROOT);
        let roots: Vec<usize> = (0..skeleton.len())
            .filter(|&j| skeleton.parents[j].is_none() && skeleton.parents.contains(&Some(j)))
            .collect();
        if let (false, [r]) = (has_root, roots.as_slice()) {
            if skeleton.heads[*r].distance(at) < KEEP_WITHIN * size {
                skeleton.names[*r] = crate::ground::GROUND_ROOT.to_string();
            }
        }
    }
}

/// For a mesh the humanoid template placed (`template`): the artists' rig of the library that
/// the most alike anchored rigs agree on, carried onto the template's joints. Of the
/// [`CONSENSUS`] most alike rigs with anchors and a similarity at or above the library's
/// threshold, the one with the least summed chamfer distance to the others. `None` when no
/// anchored rig is alike enough.
pub fn humanoid_match(
    library: &RigLibrary,
    mesh: &Mesh,
    template: &PlacedSkeleton,
) -> Result<Option<LibraryMatch>, RigError> {
    check_mesh(mesh)?;
    let Some(target) = Descriptor::of(&mesh.positions, &mesh.triangles) else {
        return Err(RigError::Degenerate);
    };
    let found: Vec<(f32, &LibraryRig, Vec<Vec3>)> = library
        .ranked(&target)
        .into_iter()
        .filter(|(s, r)| *s >= library.threshold && r.anchors.is_some())
        .take(CONSENSUS)
        .filter_map(|(s, r)| Some((s, r, carry(r, r.anchors.as_ref()?, template, &target)?)))
        .collect();
    // Each rig's summed distance to the others (a rig's distance to itself is 0).
    let costs: Vec<f64> = found
        .iter()
        .map(|(_, _, mine)| {
            found
                .iter()
                .map(|(_, _, other)| chamfer(mine, other).unwrap_or(f64::INFINITY))
                .sum()
        })
        .collect();
    let Some(best) = (0..found.len()).min_by(|&a, &b| costs[a].total_cmp(&costs[b])) else {
        return Ok(None);
    };
    let (similarity, rig, heads) = &found[best];
    let mut skeleton = PlacedSkeleton {
        names: rig.names.clone(),
        parents: rig.parents.clone(),
        heads: heads.clone(),
        forward: template.forward,
    };
    keep_landmarks(&mut skeleton, template, target.extent.max_element());
    skeleton.validate()?;
    Ok(Some(LibraryMatch {
        id: rig.id.clone(),
        similarity: *similarity,
        skeleton,
    }))
}

/// `--template library`: the library's best rig whatever its similarity. Refuses meshes when
/// the skeleton model holds no library.
#[derive(Debug, Clone)]
pub struct LibraryPlacer {
    pub learned: LearnedPlacer,
}

impl LibraryPlacer {
    /// The best match for `mesh`, or a placement error naming why there is none.
    pub fn best(&self, mesh: &Mesh) -> Result<LibraryMatch, RigError> {
        let none = |message: &str| RigError::Placement {
            placer: "library".into(),
            message: message.into(),
        };
        let library = self.learned.predictor().library().ok_or_else(|| {
            none("the skeleton model holds no rig library (train it again with `rigml train-skeleton`)")
        })?;
        best_match(library, mesh)?.ok_or_else(|| none("the skeleton model's rig library is empty"))
    }
}

impl SkeletonPlacer for LibraryPlacer {
    fn name(&self) -> &'static str {
        "library"
    }

    fn place(&self, mesh: &Mesh) -> Result<PlacedSkeleton, RigError> {
        Ok(self.best(mesh)?.skeleton)
    }

    fn place_reported(&self, mesh: &Mesh) -> Result<Placement, RigError> {
        Ok(self.best(mesh)?.into_placement())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skeleton(names: &[&str], parents: &[Option<usize>], heads: &[Vec3]) -> PlacedSkeleton {
        PlacedSkeleton {
            names: names.iter().map(|n| n.to_string()).collect(),
            parents: parents.to_vec(),
            heads: heads.to_vec(),
            forward: Vec3::Z,
        }
    }

    /// A library rig whose mesh is the unit box, with a two-bone template (hips to head) as
    /// anchors, and its artist's rig: a root on the floor, hips, a pole in front of the hips.
    fn rig() -> LibraryRig {
        let descriptor = Descriptor {
            lo: Vec3::new(-0.5, 0.0, -0.5),
            extent: Vec3::ONE,
            histogram: vec![1.0 / HIST as f32; HIST],
        };
        LibraryRig {
            id: "box".into(),
            descriptor,
            names: ["Bone", "Pelvis", "Knee.Pole"].map(String::from).to_vec(),
            parents: vec![None, Some(0), Some(0)],
            joints: vec![Vec3::ZERO, Vec3::new(0.0, 0.45, 0.0), Vec3::new(0.0, 0.3, 0.4)],
            anchors: Some(
                Anchors::new(
                    ["root", "Hips", "Head"].map(String::from).to_vec(),
                    vec![None, Some(0), Some(1)],
                    vec![Vec3::ZERO, Vec3::new(0.0, 0.5, 0.0), Vec3::new(0.0, 0.9, 0.0)],
                )
                .unwrap(),
            ),
        }
    }
    const HIST: usize = rigml_learn::skeleton::library::HISTOGRAM;

    #[test]
    fn joints_keep_their_place_by_the_nearest_template_bone_and_the_root_becomes_the_ground_root() {
        let rig = rig();
        // The same template on a mesh twice as big, with the hips a little higher.
        let target = Descriptor {
            lo: Vec3::new(-1.0, 0.0, -1.0),
            extent: Vec3::splat(2.0),
            histogram: rig.descriptor.histogram.clone(),
        };
        let template = skeleton(
            &["root", "Hips", "Head"],
            &[None, Some(0), Some(1)],
            &[Vec3::ZERO, Vec3::new(0.0, 1.2, 0.0), Vec3::new(0.0, 1.8, 0.0)],
        );
        let carried = carry(&rig, rig.anchors.as_ref().unwrap(), &template, &target).unwrap();
        // The pelvis sat 90 % of the way up the root's bone to the hips: it still does.
        assert!(
            carried[1].distance(Vec3::new(0.0, 1.08, 0.0)) < 1e-5,
            "{:?}",
            carried[1]
        );
        // The pole keeps its offset in front of its bone, twice as far on the bigger mesh.
        assert!((carried[2].z - 0.8).abs() < 1e-5, "{:?}", carried[2]);
        let mut placed = skeleton(&["Bone", "Pelvis", "Knee.Pole"], &rig.parents, &carried);
        keep_landmarks(&mut placed, &template, 2.0);
        assert_eq!(placed.names[0], "root");
        assert!(is_pole_name(&placed.names[2]));
        // Templates that share no bone carry nothing.
        let other = skeleton(&["a", "b"], &[None, Some(0)], &[Vec3::ZERO, Vec3::Y]);
        assert!(carry(&rig, rig.anchors.as_ref().unwrap(), &other, &target).is_none());
    }
}
