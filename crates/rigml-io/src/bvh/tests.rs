use super::*;
use glam::{Mat4, Quat};

const TWO_BONES: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 2 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 3 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.5
1 2 3 0 0 0 0 0 0
1 2 3 90 0 0 0 0 90
";

fn p() -> &'static Path {
    Path::new("walk.bvh")
}

fn world_positions(c: &Character, t: f32) -> Vec<Vec3> {
    let pose = c.clips[0].sample(&c.skeleton, t);
    c.skeleton
        .world_matrices(&pose.local)
        .iter()
        .map(|m: &Mat4| m.w_axis.truncate())
        .collect()
}

#[test]
fn reads_hierarchy_end_sites_and_motion() {
    let f = parse(TWO_BONES.as_bytes(), p()).unwrap();
    let c = &f.character;
    c.validate().unwrap();
    assert_eq!(c.skeleton.names, vec!["Hips", "Spine", "Spine_end"]);
    assert_eq!(c.skeleton.parents, vec![None, Some(0), Some(1)]);
    assert_eq!(f.end_site, vec![false, false, true]);
    assert_eq!(f.bvh_joint_count(), 2);
    assert_eq!((f.frame_count, f.fps()), (2, 2.0));
    assert_eq!(c.clips[0].channels.len(), 3, "root T+R, spine R");
    assert_eq!(c.clips[0].duration(), 0.5);
    // Frame 0: root moved to (1,2,3), straight up chain.
    let w = world_positions(c, 0.0);
    assert!((w[2] - Vec3::new(1.0, 7.0, 3.0)).length() < 1e-5, "{w:?}");
    // Frame 1: root turned 90° about Z (Y axis → -X); spine turned 90° about Y, which keeps
    // its +Y bone direction: end = root + 5 * (-X).
    let w = world_positions(c, 0.5);
    assert!((w[1] - Vec3::new(-1.0, 2.0, 3.0)).length() < 1e-5, "{w:?}");
    assert!((w[2] - Vec3::new(-4.0, 2.0, 3.0)).length() < 1e-5, "{w:?}");
}

#[test]
fn rotations_compose_in_channel_order() {
    // Zrotation 90 then Xrotation 90: R = Rz * Rx, so local +Y maps to Rz(Rx(Y)) = Rz(Z) = Z.
    let text = TWO_BONES.replace("1 2 3 90 0 0 0 0 90", "0 0 0 90 90 0 0 0 0");
    let f = parse(text.as_bytes(), p()).unwrap();
    let w = world_positions(&f.character, 0.5);
    assert!((w[1] - Vec3::new(0.0, 0.0, 2.0)).length() < 1e-5, "{w:?}");
}

#[test]
fn crlf_tabs_and_duplicate_names() {
    let text = TWO_BONES
        .replace("JOINT Spine", "JOINT Hips")
        .replace('\n', "\r\n")
        .replace("  ", "\t");
    let f = parse(text.as_bytes(), p()).unwrap();
    assert_eq!(f.character.skeleton.names, vec!["Hips", "Hips_2", "Hips_2_end"]);
}

#[test]
fn one_frame_line_more_than_declared_is_read_with_a_warning() {
    let f = parse(TWO_BONES.replace("Frames: 2", "Frames: 1").as_bytes(), p()).unwrap();
    assert_eq!(f.frame_count, 2, "both frame lines are kept");
    assert_eq!(f.character.clips[0].key_count(), 2);
    assert_eq!(f.warnings.len(), 1, "{:?}", f.warnings);
    assert!(
        f.warnings[0].starts_with("line 20: 'Frames:' declares 1"),
        "{:?}",
        f.warnings
    );
    assert!(parse(TWO_BONES.as_bytes(), p()).unwrap().warnings.is_empty());
}

#[test]
fn bad_input_names_file_and_line() {
    let cases: Vec<(String, &str)> = vec![
        (
            TWO_BONES.replace("1 2 3 0 0 0 0 0 0", "1 2 3 0 0 0 0 0"),
            "walk.bvh: line 19: expected 9 channel values, found 8",
        ),
        (
            TWO_BONES.replace("Frames: 2", "Frames: 3"),
            "declares 3 frames but the file has 2",
        ),
        (
            TWO_BONES.replace("0 0 0 0 0 0\n1", "0 0 0 0 0 nan\n1"),
            "line 19: frame 0: 'nan' is not finite",
        ),
        (
            TWO_BONES.replace(
                "Zrotation Xrotation Yrotation\n    End",
                "Zrotation Xrot Yrotation\n    End",
            ),
            "line 9: unknown channel 'Xrot'",
        ),
        (
            TWO_BONES.replace("OFFSET 0 2 0", "OFFSET 0 2"),
            "line 9: OFFSET z: 'CHANNELS' is not a number",
        ),
        (TWO_BONES.replace("    }\n  }\n}", "    }\n  }"), "still open"),
        (TWO_BONES.replace("MOTION", "MOTON"), "no MOTION section"),
        (
            TWO_BONES.replace("Frame Time: 0.5", "Frame Time: 0"),
            "line 18: frame time 0 must be a positive",
        ),
        (
            TWO_BONES.replace("    OFFSET 0 2 0\n", ""),
            "line 6: joint 'Spine' has no OFFSET",
        ),
        (
            TWO_BONES.replace("CHANNELS 3", "CHANNELS 4"),
            "line 10: unknown channel 'End'",
        ),
        (
            TWO_BONES.replace("CHANNELS 3", "CHANNELS -1"),
            "line 9: channel count '-1'",
        ),
        (
            "HIERARCHY\nMOTION\nFrames: 0\nFrame Time: 1\n".into(),
            "line 2: HIERARCHY has no joints",
        ),
        ("".into(), "empty file"),
        (" \r\n\n".into(), "empty file"),
    ];
    for (text, expected) in cases {
        let e = parse(text.as_bytes(), p()).unwrap_err().to_string();
        assert!(
            e.starts_with("walk.bvh: ") && e.contains(expected),
            "got: {e}\nwanted: {expected}"
        );
    }
}

#[test]
fn deep_nesting_does_not_overflow() {
    let depth = 100_000;
    let mut text = String::from("HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\n");
    for i in 0..depth {
        text.push_str(&format!("JOINT j{i}\n{{\nOFFSET 0 1 0\n"));
    }
    text.push_str(&"}\n".repeat(depth + 1));
    text.push_str("MOTION\nFrames: 0\nFrame Time: 0.1\n");
    let f = parse(text.as_bytes(), p()).unwrap();
    assert_eq!(f.character.skeleton.joint_count(), depth + 1);
    let written = to_bvh(&f.character, p()).unwrap();
    assert_eq!(
        parse(written.as_bytes(), p()).unwrap().character.skeleton.joint_count(),
        depth + 1
    );
}

#[test]
fn zyx_euler_matches_reader_composition() {
    for (z, y, x) in [(10.0f64, 20.0f64, 30.0f64), (-170.0, 80.0, 45.0), (0.0, -89.0, 179.0)] {
        let mine = glam::DQuat::from_axis_angle(DVec3::Z, z.to_radians())
            * glam::DQuat::from_axis_angle(DVec3::Y, y.to_radians())
            * glam::DQuat::from_axis_angle(DVec3::X, x.to_radians());
        let (a, b, c) = mine.to_euler(glam::EulerRot::ZYX);
        assert!((a.to_degrees() - z).abs() < 1e-9 && (b.to_degrees() - y).abs() < 1e-9);
        assert!((c.to_degrees() - x).abs() < 1e-9);
    }
}

#[test]
fn write_read_round_trip_keeps_world_positions() {
    // Animated translation on a non-root joint too, and a non-ZYX order.
    let text = TWO_BONES
        .replace(
            "CHANNELS 3 Zrotation",
            "CHANNELS 6 Yposition Xposition Zposition Zrotation",
        )
        .replace("0 0 0 0 0 0\n", "0 0 0 0 0 0 0 2 0\n")
        .replace("90 0 0 0 0 90\n", "90 0 0 1 3 -1 10 20 30\n")
        .replace(
            "Zrotation Xrotation Yrotation\n  JOINT",
            "Yrotation Xrotation Zrotation\n  JOINT",
        );
    let f = parse(text.as_bytes(), p()).unwrap();
    let written = to_bvh(&f.character, p()).unwrap();
    let back = parse(written.as_bytes(), p()).unwrap();
    assert_eq!(back.character.skeleton.names, f.character.skeleton.names);
    assert_eq!(back.frame_count, 2);
    for t in [0.0, 0.25, 0.5] {
        let (a, b) = (world_positions(&f.character, t), world_positions(&back.character, t));
        for (x, y) in a.iter().zip(&b) {
            assert!((*x - *y).length() < 1e-4, "t={t}: {a:?} vs {b:?}");
        }
    }
}

#[test]
fn writer_rejects_what_bvh_cannot_hold() {
    let mut c = parse(TWO_BONES.as_bytes(), p()).unwrap().character;
    c.skeleton.rest_local[1].scale = Vec3::splat(2.0);
    let e = to_bvh(&c, p()).unwrap_err().to_string();
    assert!(e.contains("joint 1 (Spine) has scale"), "{e}");
    let e = to_bvh(&Character::default(), p()).unwrap_err().to_string();
    assert!(e.contains("no skeleton") || e.contains("has none"), "{e}");
}

#[test]
fn writer_without_clip_writes_rest_frame() {
    let mut c = parse(TWO_BONES.as_bytes(), p()).unwrap().character;
    c.clips.clear();
    c.skeleton.rest_local[1].rotation = Quat::from_rotation_x(0.5);
    let back = parse(to_bvh(&c, p()).unwrap().as_bytes(), p()).unwrap();
    assert_eq!(back.frame_count, 1);
    let rest: Vec<Vec3> = c.skeleton.rest_world().iter().map(|m| m.w_axis.truncate()).collect();
    let w = world_positions(&back.character, 0.0);
    for (x, y) in rest.iter().zip(&w) {
        assert!((*x - *y).length() < 1e-5);
    }
}

#[test]
fn no_prefix_or_corruption_panics() {
    for end in 0..=TWO_BONES.len() {
        let _ = parse(&TWO_BONES.as_bytes()[..end], p());
    }
    let mut bytes = TWO_BONES.as_bytes().to_vec();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..5000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let i = (seed % bytes.len() as u64) as usize;
        bytes[i] = b" {}0-9.e\nXEJ"[(seed >> 32) as usize % b" {}0-9.e\nXEJ".len()];
        if let Ok(f) = parse(&bytes, p()) {
            let _ = to_bvh(&f.character, p());
        }
    }
}

#[test]
fn every_rotation_order_round_trips_in_its_own_order() {
    for order in ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"] {
        let [a, b, c]: [char; 3] = order.chars().collect::<Vec<_>>().try_into().unwrap();
        let text = TWO_BONES
            .replace(
                "Zrotation Xrotation Yrotation",
                &format!("{a}rotation {b}rotation {c}rotation"),
            )
            .replace("1 2 3 90 0 0 0 0 90", "1 2 3 30 -60 75 10 -100 45");
        let f = parse(text.as_bytes(), p()).unwrap();
        assert_eq!(f.rotation_order, vec![order, order, ""]);
        let written = to_bvh_with_orders(&f.character, p(), &f.rotation_order).unwrap();
        assert!(written.contains(&format!("CHANNELS 3 {a}rotation {b}rotation {c}rotation")));
        let back = parse(written.as_bytes(), p()).unwrap();
        assert_eq!(back.rotation_order, f.rotation_order);
        let (x, y) = (
            world_positions(&f.character, 0.5),
            world_positions(&back.character, 0.5),
        );
        for (u, w) in x.iter().zip(&y) {
            assert!((*u - *w).length() < 1e-4, "{order}: {x:?} vs {y:?}");
        }
        // The same file written in the default Z-Y-X order moves nothing either.
        let zyx = parse(to_bvh(&f.character, p()).unwrap().as_bytes(), p()).unwrap();
        assert_eq!(zyx.rotation_order, vec!["ZYX", "ZYX", ""]);
        for (u, w) in x.iter().zip(&world_positions(&zyx.character, 0.5)) {
            assert!((*u - *w).length() < 1e-4, "{order} as ZYX");
        }
    }
}
