use super::*;

/// A quad strip of 6 vertices with a joint cube group "joint-mid" (vertices 2 and 3).
fn base() -> ObjFile {
    let text = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nv 0 2 0\nv 1 2 0\ng body\nf 1 2 4 3\nf 3 4 6 5\n\
                g joint-mid\nf 3 4 3\n";
    obj::parse(text.as_bytes(), Path::new("base.obj")).unwrap()
}

fn build(rig: &str, weights: &str) -> Result<Character, IoError> {
    from_parts(
        rig.as_bytes(),
        Path::new("rig_t.json"),
        weights.as_bytes(),
        Path::new("weights_t.json"),
        base(),
        Path::new("base.obj"),
    )
}

const WEIGHTS: &str = r#"{"weights":{"root":[[0,2],[1,2],[2,1]],"mid":[[2,1],[3,0.5]],"top":[[4,1],[5,3]]}}"#;

#[test]
fn mhskel_joints_are_vertex_means_in_file_order() {
    let rig = r#"{"bones":{"top":{"head":"top_h","parent":"mid"},"root":{"head":"root_h","parent":null},
        "mid":{"head":"mid_h","parent":"root"}},
        "joints":{"top_h":[4,5],"root_h":[0,1],"mid_h":[2,3]}}"#;
    let c = build(rig, WEIGHTS).unwrap();
    c.validate().unwrap();
    assert_eq!(
        c.skeleton.names,
        vec!["root", "mid", "top"],
        "file order, parents first"
    );
    let p = c.skeleton.bind_positions();
    assert!((p[1] - Vec3::new(0.5, 1.0, 0.0)).length() < 1e-6);
    assert!((p[2] - Vec3::new(0.5, 2.0, 0.0)).length() < 1e-6);
    let skin = c.skin.unwrap();
    assert_eq!(skin.influences(2).len(), 2);
    assert!((skin.influences(2)[0].weight - 0.5).abs() < 1e-6, "normalised");
    assert_eq!(skin.influences(5)[0].joint, 2);
    assert_eq!(skin.unskinned_count(), 0);
}

#[test]
fn mpfb_strategies_place_heads() {
    let rig = r#"{"root":{"head":{"strategy":"VERTEX","vertex_index":1,"default_position":[9,9,9]},"parent":""},
        "mid":{"head":{"strategy":"CUBE","cube_name":"joint-mid"},"parent":"root"},
        "top":{"head":{"strategy":"MEAN","vertex_indices":[4,5]},"parent":"mid"}}"#;
    let c = build(rig, WEIGHTS).unwrap();
    let p = c.skeleton.bind_positions();
    assert_eq!(p[0], Vec3::X);
    assert!((p[1] - Vec3::new(0.5, 1.0, 0.0)).length() < 1e-6);
    assert!((p[2] - Vec3::new(0.5, 2.0, 0.0)).length() < 1e-6);
    // The same rig wrapped as {"bones": ...} (MPFB sub-rig layout).
    let wrapped = format!(r#"{{"scale_factor":0.1,"bones":{rig}}}"#);
    assert_eq!(build(&wrapped, WEIGHTS).unwrap().skeleton, c.skeleton);
}

#[test]
fn bad_input_names_file_and_place() {
    let ok = r#"{"root":{"head":{"strategy":"MEAN","vertex_indices":[0]},"parent":""},
        "mid":{"head":{"strategy":"MEAN","vertex_indices":[1]},"parent":"root"},
        "top":{"head":{"strategy":"MEAN","vertex_indices":[2]},"parent":"mid"}}"#;
    let cases = [
        (
            ok.replace("[2]", "[99]"),
            WEIGHTS.to_string(),
            "rig_t.json: bones[\"top\"].head.vertex_indices[0]: vertex 99 does not exist",
        ),
        (
            ok.replace("[2]", "[]"),
            WEIGHTS.to_string(),
            "bones[\"top\"].head.vertex_indices: no vertices",
        ),
        (
            ok.replace("\"mid\"}}", "\"arm\"}}"),
            WEIGHTS.to_string(),
            "bones[\"top\"].parent: bone \"arm\" does not exist",
        ),
        (
            ok.replace("\"parent\":\"\"", "\"parent\":\"top\""),
            WEIGHTS.to_string(),
            "hierarchy has a cycle",
        ),
        (
            ok.replace("MEAN\",\"vertex_indices\":[0]", "CUBE\",\"cube_name\":\"joint-x\""),
            WEIGHTS.to_string(),
            "vertex group \"joint-x\" is not in base.obj",
        ),
        (
            ok.replace("MEAN\",\"vertex_indices\":[0]", "GUESS\""),
            WEIGHTS.to_string(),
            "unknown strategy \"GUESS\"",
        ),
        (
            ok.to_string(),
            WEIGHTS.replace("[5,3]", "[6,3]"),
            "weights_t.json: weights[\"top\"][1]: vertex 6 does not exist",
        ),
        (
            ok.to_string(),
            WEIGHTS.replace("\"top\"", "\"tip\""),
            "weights[\"tip\"]: bone \"tip\" is not in the rig",
        ),
        (
            ok.to_string(),
            WEIGHTS.replace("[5,3]", "[5,-3]"),
            "weights_t.json: skin: vertex 5 has a non-finite or negative weight",
        ),
        (
            ok.to_string(),
            WEIGHTS.replace("[5,3]", "[5]"),
            "weights[\"top\"][1]: expected [vertex, weight]",
        ),
        (
            "[1,2]".to_string(),
            WEIGHTS.to_string(),
            "rig_t.json: not a JSON object",
        ),
        (
            ok[..40].to_string(),
            WEIGHTS.to_string(),
            "rig_t.json: not a JSON object",
        ),
    ];
    for (rig, weights, expected) in cases {
        let e = build(&rig, &weights).unwrap_err().to_string();
        assert!(e.contains(expected), "got {e}\nwanted {expected}");
    }
}

#[test]
fn companion_paths_follow_the_naming() {
    let (w, m) = companion_paths(Path::new("d/rig_default.json")).unwrap();
    assert_eq!(
        (w, m),
        (PathBuf::from("d/weights_default.json"), PathBuf::from("d/base.obj"))
    );
    let (w, _) = companion_paths(Path::new("rig.game_engine.json")).unwrap();
    assert_eq!(w, PathBuf::from("weights.game_engine.json"));
    assert!(companion_paths(Path::new("skeleton.json")).is_err());
}

#[test]
fn reads_makehuman_own_layout() {
    let dir = tempfile::tempdir().unwrap();
    let (rigs, objs) = (dir.path().join("rigs"), dir.path().join("3dobjs"));
    std::fs::create_dir_all(&rigs).unwrap();
    std::fs::create_dir_all(&objs).unwrap();
    let base = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nv 0 2 0\nv 1 2 0\nf 1 2 4 3\nf 3 4 6 5\n";
    std::fs::write(objs.join("base.obj"), base).unwrap();
    let rig = r#"{"weights_file":"tiny_weights.mhw","bones":{"root":{"head":"r","parent":null},
        "top":{"head":"t","parent":"root"}},"joints":{"r":[0,1],"t":[4,5]}}"#;
    std::fs::write(rigs.join("tiny.mhskel"), rig).unwrap();
    std::fs::write(
        rigs.join("tiny_weights.mhw"),
        r#"{"weights":{"root":[[0,1]],"top":[[5,1]]}}"#,
    )
    .unwrap();
    let c = crate::load(&rigs.join("tiny.mhskel")).unwrap();
    assert_eq!(c.skeleton.names, vec!["root", "top"]);
    assert_eq!(c.mesh.vertex_count(), 6);
    assert_eq!(c.skin.unwrap().unskinned_count(), 4);
}
