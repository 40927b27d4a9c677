//! `rig-seq --template motion`: the skeleton read from how the sequence moves rather than from
//! the anchor's shape. The sequence is decomposed into `--bones` rigid bones with blended
//! weights (SSDR, `rigml decompose`), and those bones are joined into a tree where each pair
//! turns about a common point (Le & Deng 2014, `rigml_seq::rig`); that tree and its weights are
//! the rig `rig-seq` then fits frame by frame, with connected joints, as it fits a placed one.
//! The shape template, placed on the same frame, lends what an animator looks for: its ground
//! root and the names of its joints that lie near a motion joint.
//!
//! Why: a placer reads limbs from one frame, and in a fast gait (a gallop's airborne frames) the
//! legs it reads are not the parts that move; the decomposition sees every frame. Over the
//! train/val quadrupeds' walks, runs and gallops (`tools/rig-seq-truth.py`, 27 clips of 3
//! families) the recovered joint rotations were 7.00° from the artists' on average against 10.03°
//! for the shape template at about as many joints: see docs/experiments/2026-11-27-rig-seq.md,
//! section 2026-12-04.

use crate::rig::MOTION;
use glam::{Mat4, Vec3};
use rigml_core::{Character, Mesh, Skin, Transform};
use rigml_rig::{PlacedSkeleton, Rigged};
use rigml_seq::{FrameSource, SeqError};

/// Bones decomposed by default: about as many joints as the shape template gives a quadruped
/// (57 to 66 on the animals pack's husky), so the two are compared at equal joint counts; of 30,
/// 44 and 60 on the train/val protocol, 60 recovered the rotations best (docs as above).
pub const DEFAULT_BONES: u16 = 60;

/// A motion joint takes the name of the shape template's joint nearest to it when the two lie
/// within this share of the rest shape's longest side of each other (and no nearer pair claims
/// either).
const NAME_REACH: f32 = 0.05;

/// The rig of `mesh` (the sequence's largest-area frame, the decomposition's rest shape, with
/// its UVs and materials) from a decomposition of `source` into `bones` bones, each vertex
/// weighted by at most `max_influences`. Bones that end with no weight are dropped, so the
/// joints can be fewer than `bones`. `shape`, the shape template's skeleton on the same mesh
/// when it could be placed, lends its names and its ground root ([`adopt_names`]).
pub(super) fn rig(
    source: &dyn FrameSource,
    mesh: Mesh,
    bones: usize,
    max_influences: usize,
    name: &str,
    shape: Option<&PlacedSkeleton>,
) -> Result<Rigged, SeqError> {
    if mesh.vertex_count() != source.vertex_count() {
        return Err(SeqError::Options(format!(
            "the rest mesh has {} vertices, the frames {}",
            mesh.vertex_count(),
            source.vertex_count()
        )));
    }
    let options = rigml_seq::Options {
        bones,
        max_influences,
        ..rigml_seq::Options::default()
    };
    let decomposition = rigml_seq::decompose(source, &options, &|_, _| {})?;
    // The clip of the decomposition's free bones is not kept: rig-seq fits its own, connected.
    let mut character = rigml_seq::build_rig(&decomposition, name, 24.0)?.character;
    character.mesh = mesh;
    character.clips.clear();
    if let Some(shape) = shape {
        adopt_names(&mut character, shape);
        if let Some(at) = ground_root_of(shape) {
            add_ground_root(&mut character, at)?;
        }
    }
    Ok(Rigged {
        character,
        template: MOTION,
        library_rig: None,
    })
}

/// Names an animator recognises, from the shape template: each of its named joints (a
/// quadruped's `thigh_L`, the `body` root; not its numbered chain joints nor its ground root)
/// goes to the nearest motion joint within [`NAME_REACH`], nearest pairs first, one to one. The
/// other joints keep their `bone_NN` names; names stay unique (no template name starts with
/// `bone_`).
fn adopt_names(character: &mut Character, shape: &PlacedSkeleton) {
    let joints = character.skeleton.bind_positions();
    let (lo, hi) = character
        .mesh
        .positions
        .iter()
        .fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(lo, hi), p| {
            (lo.min(*p), hi.max(*p))
        });
    let reach = NAME_REACH * (hi - lo).max_element();
    let named = |t: usize| {
        let name = &shape.names[t];
        !name.starts_with("joint_")
            && !name.starts_with("bone_")
            && !rigml_rig::ground::is_ground_root(&shape.names, &shape.parents, t)
    };
    let mut pairs: Vec<(f32, usize, usize)> = (0..shape.len())
        .filter(|&t| named(t))
        .flat_map(|t| {
            joints
                .iter()
                .enumerate()
                .map(move |(j, p)| (p.distance(shape.heads[t]), t, j))
        })
        .filter(|(d, _, _)| *d <= reach)
        .collect();
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut taken_t, mut taken_j) = (vec![false; shape.len()], vec![false; joints.len()]);
    for (_, t, j) in pairs {
        if !taken_t[t] && !taken_j[j] {
            taken_t[t] = true;
            taken_j[j] = true;
            character.skeleton.names[j] = shape.names[t].clone();
        }
    }
}

/// Where the shape template put its ground root, if it has one.
fn ground_root_of(shape: &PlacedSkeleton) -> Option<Vec3> {
    (0..shape.len())
        .find(|&t| rigml_rig::ground::is_ground_root(&shape.names, &shape.parents, t))
        .map(|t| shape.heads[t])
}

/// A weightless ground root at `at` above the motion skeleton's root, as joint 0, as the shape
/// templates give (`rigml_rig::ground`): game engines read root motion from it; `rig-seq` keeps
/// it still and moves the body root under it.
fn add_ground_root(character: &mut Character, at: Vec3) -> Result<(), SeqError> {
    let skeleton = &mut character.skeleton;
    let name = rigml_rig::ground::GROUND_ROOT;
    if let Some(clash) = skeleton.names.iter_mut().find(|n| n.as_str() == name) {
        *clash = "body".into();
    }
    for (j, parent) in skeleton.parents.iter().enumerate() {
        if parent.is_none() {
            let t = &mut skeleton.rest_local[j];
            t.translation -= at;
        }
    }
    skeleton.parents = std::iter::once(None)
        .chain(skeleton.parents.iter().map(|p| Some(p.map_or(0, |p| p + 1))))
        .collect();
    skeleton.names.insert(0, name.into());
    skeleton.rest_local.insert(0, Transform::from_translation(at));
    skeleton.inverse_bind.insert(0, Mat4::from_translation(-at));
    let joints = skeleton.joint_count();
    if let Some(skin) = &character.skin {
        let rows: Vec<Vec<(u32, f32)>> = skin
            .rows()
            .map(|row| row.iter().map(|i| (i.joint + 1, i.weight)).collect())
            .collect();
        let k = skin.rows().map(<[_]>::len).max().unwrap_or(1).max(1);
        character.skin = Some(Skin::from_rows(rows.iter().map(Vec::as_slice), joints, k)?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigml_core::Skeleton;

    /// Two joints (a root at the origin, a child at x = 1) over a unit-long mesh, each vertex
    /// weighted to one of them.
    fn two_joints() -> Character {
        let skeleton = Skeleton {
            names: vec!["bone_00".into(), "bone_01".into()],
            parents: vec![None, Some(0)],
            rest_local: vec![Transform::IDENTITY, Transform::from_translation(Vec3::X)],
            inverse_bind: vec![Mat4::IDENTITY, Mat4::from_translation(-Vec3::X)],
        };
        let rows: [&[(u32, f32)]; 3] = [&[(0, 1.0)], &[(1, 1.0)], &[(0, 0.5), (1, 0.5)]];
        Character {
            name: "t".into(),
            mesh: Mesh {
                positions: vec![Vec3::ZERO, Vec3::X, Vec3::new(0.5, 0.1, 0.0)],
                triangles: vec![[0, 1, 2]],
                ..Mesh::default()
            },
            skeleton,
            skin: Some(Skin::from_rows(rows, 2, 2).unwrap()),
            clips: Vec::new(),
            attachments: Vec::new(),
        }
    }

    fn shape(names: &[&str], parents: Vec<Option<usize>>, heads: Vec<Vec3>) -> PlacedSkeleton {
        PlacedSkeleton {
            names: names.iter().map(|n| n.to_string()).collect(),
            parents,
            heads,
            forward: Vec3::Z,
        }
    }

    #[test]
    fn named_template_joints_go_to_the_nearest_motion_joint_within_reach() {
        let mut c = two_joints();
        // `thigh_L` sits 0.01 from joint 1 (within 5 % of the unit mesh), `foot_L` 0.2 from
        // joint 0 (beyond it), `joint_004` beside joint 0 (a numbered chain joint: no name to
        // lend), `root` the ground root.
        let s = shape(
            &["root", "thigh_L", "foot_L", "joint_004"],
            vec![None, Some(0), Some(1), Some(0)],
            vec![
                Vec3::NEG_Y,
                Vec3::new(1.01, 0.0, 0.0),
                Vec3::new(0.0, 0.2, 0.0),
                Vec3::ZERO,
            ],
        );
        adopt_names(&mut c, &s);
        assert_eq!(c.skeleton.names, ["bone_00", "thigh_L"]);
        assert_eq!(ground_root_of(&s), Some(Vec3::NEG_Y));
    }

    #[test]
    fn the_help_states_the_default_bone_count() {
        // `--bones` is optional (refused without --template motion), so its help text, not clap,
        // states the default.
        let mut command = <crate::rig_seq::Args as clap::Args>::augment_args(clap::Command::new("rig-seq"));
        let help = command.render_long_help().to_string();
        assert!(help.contains(&format!("[default: {DEFAULT_BONES}]")), "{help}");
    }

    #[test]
    fn a_ground_root_goes_above_the_root_and_moves_nothing() {
        let mut c = two_joints();
        let before = c.skeleton.bind_positions();
        add_ground_root(&mut c, Vec3::NEG_Y).unwrap();
        let s = &c.skeleton;
        assert_eq!(s.names, ["root", "bone_00", "bone_01"]);
        assert_eq!(s.parents, [None, Some(0), Some(1)]);
        let after = s.bind_positions();
        assert!(after[0].distance(Vec3::NEG_Y) < 1e-6);
        for (a, b) in after[1..].iter().zip(&before) {
            assert!(a.distance(*b) < 1e-6, "{a} vs {b}");
        }
        let skin = c.skin.as_ref().unwrap();
        let joints: Vec<Vec<u32>> = skin.rows().map(|r| r.iter().map(|i| i.joint).collect()).collect();
        assert_eq!(
            joints,
            [vec![1], vec![2], vec![1, 2]],
            "weights follow their joints; the root has none"
        );
        c.validate().unwrap();
    }
}
