//! The humanoid placer on real characters: METRICS.md §5 scores against the artists' joints,
//! rigml-anim's mapping, symmetry, invariance to the file's axes and units, refusal of other
//! shapes and of bad input. The full table over train and val is the ignored test at the end.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use glam::{Quat, Vec3};
use rigml_anim::humanoid::{map_humanoid, ChainKind};
use rigml_core::Mesh;
use rigml_eval::deformation::normalisation;
use rigml_eval::skeleton_metrics::{score, JointSet, SkeletonScores};
use rigml_rig::{looks_humanoid, Humanoid, PlacedSkeleton, RigError, SkeletonPlacer};

fn load(id: &str) -> rigml_core::Character {
    rigml_io::load(&common::asset(id)).unwrap_or_else(|e| panic!("{id}: {e}"))
}

/// Placed joints in §1 units of `mesh`.
fn normalised(placed: &PlacedSkeleton, mesh: &Mesh) -> JointSet {
    let (centre, scale) = normalisation(&mesh.positions).expect("mesh has extent");
    JointSet {
        positions: placed.heads.iter().map(|p| (*p - centre) * scale).collect(),
        parents: placed.parents.clone(),
    }
}

/// Place on the bare mesh of `id` and score against its artist's bind joints.
fn place_and_score(id: &str) -> (PlacedSkeleton, SkeletonScores) {
    let character = load(id);
    let placed = Humanoid::default()
        .place(&character.mesh)
        .unwrap_or_else(|e| panic!("{id}: {e}"));
    let (centre, scale) = normalisation(&character.mesh.positions).expect("mesh has extent");
    let gt = JointSet::from_skeleton(&character.skeleton, centre, scale);
    let scores = score(&normalised(&placed, &character.mesh), &gt).expect("non-empty skeletons");
    (placed, scores)
}

#[test]
fn val_and_train_humanoids_are_placed_close_to_the_artists_joints() {
    // Bounds: the measured CD-J2J (humanoid_table example: 0.0202, 0.0247, 0.0242, 0.0527;
    // with the ground root 0.0215, 0.0254, 0.0217, 0.0522) with about 12 % margin over the
    // first. Joint counts: the ground root and 22 body joints, plus a thumb and a fused-finger
    // chain (3 joints each) on each hand where the hand has a separate thumb (Mannequiny), no
    // fingers on mitten hands. Mech-Stan (val) has blade legs without feet and no armpits; its
    // artist rig also has two IK pole targets 0.7 in front of the knees, which alone add 0.016
    // to its CD-J2J.
    for (id, bound, joints) in [
        ("godot-mannequiny", 0.0226, 35),
        ("khronos-riggedfigure", 0.0277, 23),
        ("kaykit2-rogue-fbx", 0.0271, 23),
        ("quaternius-mech-stan", 0.059, 23),
    ] {
        let (placed, s) = place_and_score(id);
        assert!(s.cd_j2j <= bound, "{id}: CD-J2J {} above {bound}", s.cd_j2j);
        if id != "quaternius-mech-stan" {
            // (The mech's hands have 20 finger joints in the artist's rig, whose bones raise its
            // CD-B2B to 0.077.)
            assert!(
                s.cd_j2b.is_some_and(|v| v <= bound) && s.cd_b2b.is_some_and(|v| v <= bound),
                "{id}: {s:?}"
            );
        }
        assert_eq!(placed.len(), joints, "{id}: {:?}", placed.names);
    }
}

/// The side a joint name says it is on (`LeftArm`, `upperarm.l`, `Thigh_L`, `L_Foot`, ...):
/// `Some(true)` for left, `Some(false)` for right.
fn named_side(name: &str) -> Option<bool> {
    let n = name.to_lowercase();
    let n = n.rsplit(':').next().unwrap_or(&n);
    for (side, word, suffixes, prefix) in [(true, "left", [".l", "_l"], "l_"), (false, "right", [".r", "_r"], "r_")] {
        if n.contains(word) || suffixes.iter().any(|s| n.ends_with(s)) || n.starts_with(prefix) {
            return Some(side);
        }
    }
    None
}

#[test]
fn the_detected_frame_agrees_with_the_artists_rig_on_train_and_val_humanoids() {
    // Up: the artist's head joints above the foot joints. Left: toward the joints the
    // artist named left. Known failures, all found facing backward (so left is flipped): the
    // Quaternius mech pack's humanoids (Stan in val, Mike in train), whose legs end in blades
    // that curve backward (no feet, so the toe test reads the blades); the 2019 goblin (small
    // feet in a T-pose) and Ultimate Monsters' ninja (a sword held forward, swords on its back),
    // whose causes are not yet pinned down. Any other humanoid found wrong fails the test.
    const KNOWN_BACKWARD: [&str; 4] = [
        "quaternius-mech-stan",
        "quaternius-mech-mike",
        "quaternius-goblin-animated-goblin",
        "quaternius-ultimate-monsters-ninja2",
    ];
    let (mut checked, mut skipped, mut wrong, mut known) = (0, Vec::new(), Vec::new(), Vec::new());
    for row in common::manifest() {
        let humanoid = row
            .get("notes")
            .rsplit("cat=")
            .next()
            .is_some_and(|c| c.contains("humanoid"));
        if row.get("kind") != "character" || !humanoid || !["train", "val"].contains(&row.get("split")) {
            continue;
        }
        let id = row.id().to_string();
        let character = load(&id);
        let o = rigml_rig::orient::detect(&character.mesh.positions, &character.mesh.triangles).unwrap();
        let bind = character.skeleton.bind_positions();
        let (mut left, mut right) = ((Vec3::ZERO, 0.0f32), (Vec3::ZERO, 0.0f32));
        for (name, p) in character.skeleton.names.iter().zip(&bind) {
            match named_side(name) {
                Some(true) => left = (left.0 + *p, left.1 + 1.0),
                Some(false) => right = (right.0 + *p, right.1 + 1.0),
                None => {}
            }
        }
        if left.1 == 0.0 || right.1 == 0.0 {
            skipped.push(id); // No sided names (KayKit's 6-joint AnimatedCharacter, ...).
            continue;
        }
        let gt_left = left.0 / left.1 - right.0 / right.1;
        let mean_height = |pick: &dyn Fn(&str) -> bool| {
            let hs: Vec<f32> = character
                .skeleton
                .names
                .iter()
                .zip(&bind)
                .filter(|(n, _)| pick(&n.to_lowercase()))
                .map(|(_, p)| p.dot(o.up))
                .collect();
            (!hs.is_empty()).then(|| hs.iter().sum::<f32>() / hs.len() as f32)
        };
        let head = mean_height(&|n| n.contains("head") || n.contains("neck"));
        let feet = mean_height(&|n| n.contains("foot") || n.contains("toe") || n.contains("ankle"));
        let (Some(head), Some(feet)) = (head, feet) else {
            skipped.push(id);
            continue;
        };
        if head <= feet {
            wrong.push(format!("{id}: up {:?} puts the head below the feet", o.up));
        } else if o.left.dot(gt_left) <= 0.0 {
            if KNOWN_BACKWARD.contains(&id.as_str()) {
                known.push(id);
            } else {
                wrong.push(format!("{id}: left {:?} but the artist's left is {gt_left}", o.left));
            }
        }
        checked += 1;
    }
    println!("known to be found facing backward: {known:?}");
    assert!(wrong.is_empty(), "{} of {checked} humanoids: {wrong:#?}", wrong.len());
    assert!(
        checked >= 27,
        "only {checked} humanoids checked; no head/foot/side names: {skipped:?}"
    );
    println!("frame checked on {checked}; no head/foot/side names: {skipped:?}");
}

#[test]
fn the_rig_maps_to_every_humanoid_chain_and_is_symmetric() {
    let character = load("godot-mannequiny");
    let placed = Humanoid::default().place(&character.mesh).unwrap();
    let skeleton = placed.to_skeleton().unwrap();
    let map = map_humanoid(&skeleton).unwrap_or_else(|e| panic!("{e}"));
    for kind in ChainKind::ALL {
        assert!(map.chain(kind).len() >= 2, "{kind:?}");
    }
    // Left joints mirror right ones across the detected mirror plane.
    let o = looks_humanoid(&character.mesh).unwrap().orientation;
    assert!(
        o.symmetry > 0.9 && o.left == Vec3::X && o.up == Vec3::Y && o.forward == Vec3::Z,
        "{o:?}"
    );
    let mut pairs = 0;
    for (j, name) in placed.names.iter().enumerate() {
        let Some(stem) = name.strip_prefix("Left") else {
            continue;
        };
        let r = placed.names.iter().position(|n| *n == format!("Right{stem}")).unwrap();
        let (a, b) = (o.to_local(placed.heads[j]), o.to_local(placed.heads[r]));
        assert!((a - Vec3::new(-b.x, b.y, b.z)).length() < 1e-4, "{name}: {a} vs {b}");
        assert!(a.x > 0.0, "{name} is on the left");
        pairs += 1;
    }
    assert_eq!(pairs, 14, "8 body pairs and two 3-joint fingers per hand");
}

#[test]
fn rotated_and_rescaled_copies_give_the_same_normalised_joints() {
    // RiggedFigure is stored Z-up facing -Y; turn it Y-up and change its units.
    let mesh = load("khronos-riggedfigure").mesh;
    let base = normalised(&Humanoid::default().place(&mesh).unwrap(), &mesh);
    let turn = Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
    for scale in [100.0f32, 0.01] {
        let mut copy = mesh.clone();
        for p in &mut copy.positions {
            *p = turn * *p * scale;
        }
        let placed = Humanoid::default().place(&copy).unwrap();
        let joints = normalised(&placed, &copy);
        for (a, b) in base.positions.iter().zip(&joints.positions) {
            // Undo the turn (normalisation only translates and scales).
            let b = turn.inverse() * *b;
            assert!(a.distance(b) < 0.01, "x{scale}: {a} vs {b}");
        }
    }
}

#[test]
fn non_humanoids_are_refused() {
    for id in ["quaternius-animals-wolf", "quaternius-dinosaurs-trex"] {
        let mesh = load(id).mesh;
        let check = looks_humanoid(&mesh).unwrap();
        assert!(!check.is_humanoid(), "{id} taken for a humanoid");
        match Humanoid::default().place(&mesh) {
            Err(RigError::Placement { placer, message }) => {
                assert_eq!(placer, "humanoid");
                assert!(message.contains("not a standing humanoid"), "{message}");
            }
            other => panic!("{id}: {other:?}"),
        }
    }
}

/// A four-legged body mid-stride is not a standing humanoid, however its legs fall: the
/// humanoid frame reads it across the body (its thinnest side is its width), where it mirrors
/// itself far worse than across its own left and right. Before that test the animals-pack cow
/// was taken for a humanoid on every frame of its walk and the farm-animals cow in bind pose.
#[test]
fn quadrupeds_mid_stride_are_not_taken_for_humanoids() {
    let cow = load("quaternius-animals-cow");
    let walk = cow
        .clips
        .iter()
        .position(|c| c.name.ends_with("Walk"))
        .expect("the cow's walk");
    let options = rigml_io::sequence::SequenceOptions {
        clip: walk,
        frames: Some(6),
    };
    let baked = rigml_io::sequence::bake(&cow, &options, std::path::Path::new("Cow.glb")).unwrap();
    for (f, frame) in baked.sequence.frames.iter().enumerate() {
        let mut mesh = cow.mesh.clone();
        mesh.positions.clone_from(frame);
        let check = looks_humanoid(&mesh).unwrap();
        assert!(!check.is_humanoid(), "walk frame {f} taken for a humanoid");
        let o = check.orientation;
        assert!(
            o.depth_symmetry > o.symmetry,
            "frame {f}: {} vs {}",
            o.depth_symmetry,
            o.symmetry
        );
    }
    let mesh = load("quaternius-farm-animals-2018-cow").mesh;
    match Humanoid::default().place(&mesh) {
        Err(RigError::Placement { message, .. }) => assert!(message.contains("front to back"), "{message}"),
        other => panic!("the farm cow: {other:?}"),
    }
}

#[test]
fn bad_meshes_are_errors_not_panics() {
    let placer = Humanoid::default();
    assert!(matches!(placer.place(&Mesh::default()), Err(RigError::EmptyMesh)));
    let mut mesh = load("khronos-riggedfigure").mesh;
    mesh.positions[7] = Vec3::new(f32::NAN, 0.0, 0.0);
    assert!(matches!(placer.place(&mesh), Err(RigError::NonFinite { vertex: 7 })));
    let flat = Mesh {
        positions: vec![Vec3::ZERO, Vec3::X, Vec3::Y],
        triangles: vec![[0, 1, 2]],
        ..Mesh::default()
    };
    assert!(placer.place(&flat).is_err());
    assert!(looks_humanoid(&flat).is_ok_and(|c| !c.is_humanoid()) || looks_humanoid(&flat).is_err());
}

#[test]
fn a_bare_humanoid_mesh_becomes_a_skinned_character() {
    let mesh = load("khronos-riggedfigure").mesh;
    let placed = Humanoid::default().place(&mesh).unwrap();
    let character = rigml_rig::rig(
        "riggedfigure",
        mesh,
        &Humanoid::default(),
        &rigml_skin::Nearest::default(),
        &rigml_skin::SolveOptions::default(),
    )
    .unwrap();
    character.validate().unwrap();
    let skin = character.skin.as_ref().unwrap();
    assert_eq!(skin.vertex_count(), character.mesh.positions.len());
    // Bind pose: every joint sits at its placed head, under its placed name.
    assert_eq!(character.skeleton.names, placed.names);
    for (a, b) in character.skeleton.bind_positions().iter().zip(&placed.heads) {
        assert!(a.distance(*b) < 1e-4, "{a} vs {b}");
    }
}

#[test]
fn the_ground_root_sits_on_the_artists_root_and_carries_no_weight() {
    // KayKit rigs have a `root` on the floor at the model's origin, above the hips.
    let character = load("kaykit2-knight");
    let mesh = &character.mesh;
    let bare = Humanoid {
        ground_root: false,
        ..Humanoid::default()
    };
    let with = Humanoid::default().place(mesh).unwrap();
    let without = bare.place(mesh).unwrap();
    assert_eq!(with.len(), without.len() + 1);
    assert_eq!(with.names[0], "root");
    assert_eq!(with.parents[0], None);
    assert_eq!(with.parents[1], Some(0));
    assert_eq!(&with.heads[1..], &without.heads[..]);
    let (centre, scale) = normalisation(&mesh.positions).unwrap();
    let artist = character.skeleton.bind_positions()[character.skeleton.index_of("root").unwrap()];
    let d = with.heads[0].distance(artist) * scale;
    assert!(d < 0.01, "ground root {d} from the artist's");
    // Measured: CD-J2J 0.0242 -> 0.0217.
    let gt = JointSet::from_skeleton(&character.skeleton, centre, scale);
    let cd = |p: &PlacedSkeleton| score(&normalised(p, mesh), &gt).unwrap().cd_j2j;
    assert!(cd(&with) < cd(&without) - 0.001, "{} vs {}", cd(&with), cd(&without));
    // Skinned as `rigml rig` skins: the ground root gets no weight, the other joints what the
    // skeleton without it gets.
    let skeleton = with.to_skeleton().unwrap();
    assert!(rigml_rig::controls(&skeleton)[0]);
    let solver = rigml_learn::Learned::embedded().unwrap();
    let options = rigml_skin::SolveOptions::default();
    let skin = rigml_rig::skin_placed(mesh, &skeleton, &solver, &options).unwrap();
    let plain = rigml_rig::skin_placed(mesh, &without.to_skeleton().unwrap(), &solver, &options).unwrap();
    let shifted: Vec<usize> = (1..with.len()).collect();
    let expected = plain.remap_joints(&shifted);
    assert!(skin.rows().flatten().all(|i| i.joint != 0));
    let mut worst = 0.0f32;
    for (a, b) in skin.rows().zip(expected.rows()) {
        for i in a {
            let w = b.iter().find(|k| k.joint == i.joint).map_or(0.0, |k| k.weight);
            worst = worst.max((w - i.weight).abs());
        }
    }
    assert!(worst < 1e-4, "weights differ by {worst}");
}

#[test]
fn a_mesh_far_from_its_origin_gets_its_ground_root_on_the_floor_under_it() {
    // The knight moved 50 units away (a part cut out of a scene): its origin is no pivot of it.
    let mesh = load("kaykit2-knight").mesh;
    let shift = Vec3::new(50.0, 3.0, -20.0);
    let mut far = mesh.clone();
    for p in &mut far.positions {
        *p += shift;
    }
    let here = Humanoid::default().place(&mesh).unwrap();
    let there = Humanoid::default().place(&far).unwrap();
    // Every other joint moves with the mesh.
    for (a, b) in here.heads[1..].iter().zip(&there.heads[1..]) {
        assert!((*a + shift).distance(*b) < 1e-3, "{a} + {shift} vs {b}");
    }
    // The root: on the floor (the knight stands on Y), under the middle of its bounds.
    let (lo, hi) = far.bounds().unwrap();
    let root = there.heads[0];
    assert!((root.y - lo.y).abs() < 1e-4, "{root} vs floor {}", lo.y);
    let centre = (lo + hi) * 0.5;
    assert!(
        (root.x - centre.x).abs() < 1e-4 && (root.z - centre.z).abs() < 1e-4,
        "{root} vs {centre}"
    );
}
