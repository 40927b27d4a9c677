use super::detect::{side_and_stem, Side};
use super::*;
use glam::Vec3;
use rigml_core::Transform;

/// A skeleton from `(name, parent name, offset from parent)` rows, parents first.
pub(crate) fn skeleton(rows: &[(&str, &str, [f32; 3])]) -> Skeleton {
    let names: Vec<String> = rows.iter().map(|r| r.0.to_string()).collect();
    let parents = rows.iter().map(|r| names.iter().position(|n| n == r.1)).collect();
    let rest_local = rows
        .iter()
        .map(|r| Transform::from_translation(Vec3::from(r.2)))
        .collect();
    let mut s = Skeleton {
        names,
        parents,
        rest_local,
        inverse_bind: Vec::new(),
    };
    s.bind_to_rest();
    s
}

/// A T-posed humanoid with joint names built by `name(role-ish word, side)`; left is +X.
pub(crate) fn humanoid(name: impl Fn(&str, &str) -> String) -> Skeleton {
    let rows: Vec<(String, String, [f32; 3])> = vec![
        (name("Hips", ""), String::new(), [0.0, 1.0, 0.0]),
        (name("Spine", ""), name("Hips", ""), [0.0, 0.1, 0.0]),
        (name("Spine1", ""), name("Spine", ""), [0.0, 0.15, 0.0]),
        (name("Spine2", ""), name("Spine1", ""), [0.0, 0.15, 0.0]),
        (name("Neck", ""), name("Spine2", ""), [0.0, 0.15, 0.0]),
        (name("Head", ""), name("Neck", ""), [0.0, 0.1, 0.0]),
        (name("Shoulder", "L"), name("Spine2", ""), [0.05, 0.1, 0.0]),
        (name("Arm", "L"), name("Shoulder", "L"), [0.1, 0.0, 0.0]),
        (name("ForeArm", "L"), name("Arm", "L"), [0.25, 0.0, 0.0]),
        (name("Hand", "L"), name("ForeArm", "L"), [0.25, 0.0, 0.0]),
        (name("HandIndex1", "L"), name("Hand", "L"), [0.05, 0.0, 0.0]),
        (name("Shoulder", "R"), name("Spine2", ""), [-0.05, 0.1, 0.0]),
        (name("Arm", "R"), name("Shoulder", "R"), [-0.1, 0.0, 0.0]),
        (name("ForeArm", "R"), name("Arm", "R"), [-0.25, 0.0, 0.0]),
        (name("Hand", "R"), name("ForeArm", "R"), [-0.25, 0.0, 0.0]),
        (name("UpLeg", "L"), name("Hips", ""), [0.1, -0.05, 0.0]),
        (name("Leg", "L"), name("UpLeg", "L"), [0.0, -0.45, 0.0]),
        (name("Foot", "L"), name("Leg", "L"), [0.0, -0.42, 0.0]),
        (name("ToeBase", "L"), name("Foot", "L"), [0.0, -0.06, 0.12]),
        (name("UpLeg", "R"), name("Hips", ""), [-0.1, -0.05, 0.0]),
        (name("Leg", "R"), name("UpLeg", "R"), [0.0, -0.45, 0.0]),
        (name("Foot", "R"), name("Leg", "R"), [0.0, -0.42, 0.0]),
        (name("ToeBase", "R"), name("Foot", "R"), [0.0, -0.06, 0.12]),
    ];
    let rows: Vec<(&str, &str, [f32; 3])> = rows.iter().map(|r| (r.0.as_str(), r.1.as_str(), r.2)).collect();
    skeleton(&rows)
}

pub(crate) fn mixamo(word: &str, side: &str) -> String {
    let side = match side {
        "L" => "Left",
        "R" => "Right",
        _ => "",
    };
    format!("mixamorig:{side}{word}")
}

#[test]
fn sides_and_stems_of_common_conventions() {
    let cases = [
        ("mixamorig:LeftUpLeg", Some(Side::Left), "upleg"),
        ("RightHand", Some(Side::Right), "hand"),
        ("hand.l", Some(Side::Left), "hand"),
        ("UpperArm.R", Some(Side::Right), "upperarm"),
        ("lThigh", Some(Side::Left), "thigh"),
        ("rShldr", Some(Side::Right), "shldr"),
        ("LHipJoint", Some(Side::Left), "hipjoint"),
        ("arm_joint_L_1", Some(Side::Left), "armjoint1"),
        ("thigh_r", Some(Side::Right), "thigh"),
        ("lhand", None, "lhand"),
        ("Hips", None, "hips"),
        ("lowerback", None, "lowerback"),
    ];
    for (name, side, stem) in cases {
        assert_eq!(side_and_stem(name), (side, stem.to_string()), "{name}");
    }
}

#[test]
fn maps_a_mixamo_skeleton_by_name() {
    let s = humanoid(mixamo);
    let m = map_humanoid(&s).unwrap();
    let at = |r: Role| s.names[m.joint(r).unwrap()].as_str();
    assert_eq!(at(Role::Hips), "mixamorig:Hips");
    assert_eq!(at(Role::LeftUpperArm), "mixamorig:LeftArm");
    assert_eq!(at(Role::LeftShoulder), "mixamorig:LeftShoulder");
    assert_eq!(at(Role::RightLowerLeg), "mixamorig:RightLeg");
    assert_eq!(at(Role::LeftToes), "mixamorig:LeftToeBase");
    assert_eq!(at(Role::LeftHand), "mixamorig:LeftHand");
    assert_eq!(at(Role::Neck), "mixamorig:Neck");
    assert_eq!(
        m.joint(Role::RightToes),
        Some(s.index_of("mixamorig:RightToeBase").unwrap())
    );
    let spine: Vec<&str> = m.chain(ChainKind::Spine).iter().map(|&j| s.names[j].as_str()).collect();
    assert_eq!(
        spine,
        [
            "mixamorig:Hips",
            "mixamorig:Spine",
            "mixamorig:Spine1",
            "mixamorig:Spine2"
        ]
    );
    assert_eq!(m.chain(ChainKind::Neck).len(), 3);
    assert_eq!(m.chain(ChainKind::LeftLeg).len(), 3);
}

#[test]
fn falls_back_to_topology_without_names() {
    // Same shape, anonymous joint names: only positions and hierarchy are left.
    let rot13 = |w: &str| -> String {
        w.chars()
            .map(|c| match c {
                'a'..='z' => (((c as u8 - b'a' + 13) % 26) + b'a') as char,
                'A'..='Z' => (((c as u8 - b'A' + 13) % 26) + b'A') as char,
                _ => c,
            })
            .collect()
    };
    let s = humanoid(|word, side| format!("{}{}", rot13(word), rot13(side)));
    let m = map_humanoid(&s).unwrap();
    let named = humanoid(mixamo);
    let reference = map_humanoid(&named).unwrap();
    for r in [
        Role::Hips,
        Role::LeftHand,
        Role::RightHand,
        Role::LeftFoot,
        Role::RightFoot,
        Role::LeftUpperLeg,
        Role::RightUpperArm,
        Role::Head,
    ] {
        assert_eq!(m.joint(r), reference.joint(r), "{}", r.name());
    }
}

#[test]
fn missing_limbs_are_listed() {
    let s = skeleton(&[
        ("Hips", "", [0.0, 1.0, 0.0]),
        ("Spine", "Hips", [0.0, 0.2, 0.0]),
        ("Head", "Spine", [0.0, 0.3, 0.0]),
    ]);
    let err = map_humanoid(&s).unwrap_err().to_string();
    for role in ["leftHand", "rightFoot", "leftUpperLeg"] {
        assert!(err.contains(role), "{err}");
    }
}

#[test]
fn map_file_overrides_and_errors() {
    let s = humanoid(mixamo);
    let overrides = parse_map_file("# test\nleftHand = mixamorig:LeftHandIndex1\n", "m.txt").unwrap();
    let m = map_humanoid_with(&s, &overrides, "test").unwrap();
    assert_eq!(m.joint(Role::LeftHand), s.index_of("mixamorig:LeftHandIndex1"));
    // The named segments above the overridden hand stay as they were.
    assert_eq!(m.joint(Role::LeftLowerArm), s.index_of("mixamorig:LeftForeArm"));
    let overrides = parse_map_file(
        "leftHand mixamorig:LeftHandIndex1\nleftLowerArm\tmixamorig:LeftHand\nleftUpperArm: mixamorig:LeftForeArm",
        "m",
    )
    .unwrap();
    let m = map_humanoid_with(&s, &overrides, "test").unwrap();
    assert_eq!(m.chain(ChainKind::LeftArm).len(), 3);
    assert_eq!(m.joint(Role::LeftUpperArm), s.index_of("mixamorig:LeftForeArm"));
    let err = parse_map_file("leftHandd: x\n", "m.txt").unwrap_err().to_string();
    assert!(err.contains("m.txt: line 1") && err.contains("unknown role"), "{err}");
    let bad = [(Role::Head, "nope".to_string())];
    let err = map_humanoid_with(&s, &bad, "test").unwrap_err().to_string();
    assert!(err.contains("\"nope\""), "{err}");
}

/// A Quaternius-style rig: the feet are IK targets parented to the root beside the body, the
/// legs hang from `Body`, and pole targets sit in front of the knees.
fn ik_feet_rig(foot_l: [f32; 3]) -> Skeleton {
    skeleton(&[
        ("Root", "", [0.0, 0.0, 0.0]),
        ("Foot.L", "Root", foot_l),
        ("Foot.R", "Root", [-0.1, 0.08, 0.0]),
        ("PoleTarget.L", "Root", [0.1, 0.5, 0.8]),
        ("PoleTarget.R", "Root", [-0.1, 0.5, 0.8]),
        ("Body", "Root", [0.0, 0.95, 0.0]),
        ("Hips", "Body", [0.0, 0.0, 0.0]),
        ("Abdomen", "Hips", [0.0, 0.15, 0.0]),
        ("Torso", "Abdomen", [0.0, 0.2, 0.0]),
        ("Neck", "Torso", [0.0, 0.2, 0.0]),
        ("Head", "Neck", [0.0, 0.1, 0.0]),
        ("UpperArm.L", "Torso", [0.15, 0.15, 0.0]),
        ("LowerArm.L", "UpperArm.L", [0.25, 0.0, 0.0]),
        ("Hand.L", "LowerArm.L", [0.25, 0.0, 0.0]),
        ("UpperArm.R", "Torso", [-0.15, 0.15, 0.0]),
        ("LowerArm.R", "UpperArm.R", [-0.25, 0.0, 0.0]),
        ("Hand.R", "LowerArm.R", [-0.25, 0.0, 0.0]),
        ("UpperLeg.L", "Body", [0.1, -0.05, 0.0]),
        ("LowerLeg.L", "UpperLeg.L", [0.0, -0.42, 0.0]),
        ("UpperLeg.R", "Body", [-0.1, -0.05, 0.0]),
        ("LowerLeg.R", "UpperLeg.R", [0.0, -0.42, 0.0]),
    ])
}

#[test]
fn feet_parented_to_the_root_as_ik_targets_still_end_the_legs() {
    let s = ik_feet_rig([0.1, 0.08, 0.0]);
    let map = map_humanoid(&s).unwrap_or_else(|e| panic!("{e}"));
    let name = |kind: ChainKind| -> Vec<&str> { map.chain(kind).iter().map(|&j| s.names[j].as_str()).collect() };
    assert_eq!(name(ChainKind::LeftLeg), ["UpperLeg.L", "LowerLeg.L", "Foot.L"]);
    assert_eq!(name(ChainKind::RightLeg), ["UpperLeg.R", "LowerLeg.R", "Foot.R"]);
    assert!(limb_end_detached(&s, map.chain(ChainKind::LeftLeg)));
    assert!(!limb_end_detached(&s, map.chain(ChainKind::LeftArm)));
    assert_eq!(s.names[map.motion_root()], "Body");
    // A "foot" that does not continue the leg at rest (here as far in front of the knee as a
    // pole target) is not taken for one: the map is refused rather than wrong.
    let off = ik_feet_rig([0.1, 0.5, 0.9]);
    let error = map_humanoid(&off).unwrap_err().to_string();
    assert!(error.contains("leftUpperLeg"), "{error}");
}

/// Arms with no hand joint: the finger chains (and maybe a palm) hang from the forearm, as in
/// Quaternius' Ultimate Monsters (`Middle1.L`) and cowboy (`Palm.L`).
fn fingers_on_the_forearm(left_fingers: &[&str]) -> Skeleton {
    let mut rows: Vec<(String, String, [f32; 3])> = vec![
        ("Root".into(), String::new(), [0.0, 0.0, 0.0]),
        ("Hips".into(), "Root".into(), [0.0, 1.0, 0.0]),
        ("Torso".into(), "Hips".into(), [0.0, 0.3, 0.0]),
        ("Neck".into(), "Torso".into(), [0.0, 0.2, 0.0]),
        ("Head".into(), "Neck".into(), [0.0, 0.1, 0.0]),
    ];
    for (side, x) in [("L", 1.0f32), ("R", -1.0)] {
        let n = |s: &str| format!("{s}.{side}");
        rows.push((n("Shoulder"), "Torso".into(), [0.05 * x, 0.15, 0.0]));
        rows.push((n("UpperArm"), n("Shoulder"), [0.1 * x, 0.0, 0.0]));
        rows.push((n("LowerArm"), n("UpperArm"), [0.25 * x, 0.0, 0.0]));
        for (k, finger) in left_fingers.iter().enumerate() {
            let z = 0.03 * (k as f32 - 1.0);
            rows.push((n(finger), n("LowerArm"), [0.3 * x, 0.0, z]));
        }
        rows.push((n("UpperLeg"), "Hips".into(), [0.1 * x, -0.05, 0.0]));
        rows.push((n("LowerLeg"), n("UpperLeg"), [0.0, -0.45, 0.0]));
        rows.push((n("Foot"), n("LowerLeg"), [0.0, -0.42, 0.0]));
    }
    let rows: Vec<(&str, &str, [f32; 3])> = rows.iter().map(|r| (r.0.as_str(), r.1.as_str(), r.2)).collect();
    skeleton(&rows)
}

#[test]
fn fingers_hanging_from_the_forearm_stand_for_the_hand() {
    for (fingers, hand) in [
        (&["Index1", "Middle1", "Pinky1", "Thumb1"][..], "Middle1"),
        (&["Thumb", "Palm", "Index1"][..], "Palm"),
        (&["Thumb1", "Index1", "Pinky1"][..], "Index1"),
    ] {
        let s = fingers_on_the_forearm(fingers);
        let map = map_humanoid(&s).unwrap_or_else(|e| panic!("{e}"));
        let names = |joints: &[usize]| -> Vec<String> { joints.iter().map(|&j| s.names[j].clone()).collect() };
        let arm = map.chain(ChainKind::LeftArm);
        assert_eq!(
            names(arm),
            ["UpperArm.L", "LowerArm.L", &format!("{hand}.L")],
            "{fingers:?}"
        );
        assert_eq!(
            map.joint(Role::LeftShoulder).map(|j| s.names[j].as_str()),
            Some("Shoulder.L")
        );
        let mut companions = names(&hand_companions(&s, arm));
        companions.sort();
        let mut others: Vec<String> = fingers
            .iter()
            .filter(|&&f| f != hand)
            .map(|f| format!("{f}.L"))
            .collect();
        others.sort();
        assert_eq!(companions, others, "{fingers:?}");
        // A rig with a hand joint has no companions.
        let mixamo_rig = humanoid(mixamo);
        let m = map_humanoid(&mixamo_rig).unwrap();
        assert!(hand_companions(&mixamo_rig, m.chain(ChainKind::LeftArm)).is_empty());
    }
}
