//! End-to-end tests of the `rigml` binary: run it as a user would and check files, stdout,
//! stderr and exit codes.

// The manifest reader the rigml-io integration tests use (one copy, shared by path).
#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;
mod run;

use run::{assert_clean_failure, assert_ok, rigml, stderr, stdout};

use rigml_geom::procedural::demo_humanoid;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A temporary directory holding a freshly written demo (`out/rigml-demo.glb` and `.png`).
fn demo_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let o = rigml(dir.path(), &["demo", "-o", "out"]);
    assert_ok(&o);
    let path = dir.path().join("out").join("rigml-demo.glb");
    assert!(stdout(&o).contains("rigml-demo.glb"), "{}", stdout(&o));
    (dir, path)
}

/// A temporary directory holding the procedural humanoid (its own skeleton, analytic weights
/// and walk) as `out/humanoid.glb`: a small skinned, animated fixture for the other commands.
fn humanoid_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let path = dir.path().join("out").join("humanoid.glb");
    rigml_io::save(&demo_humanoid().unwrap(), &path, rigml_io::SaveOptions::default()).unwrap();
    (dir, path)
}

fn inspect_json(cwd: &Path, file: &str) -> Value {
    let o = rigml(cwd, &["inspect", file, "--json"]);
    assert_ok(&o);
    serde_json::from_slice(&o.stdout).expect("inspect --json prints one JSON object")
}

/// The first README command: the procedural humanoid's bare mesh auto-rigged (a new,
/// Mixamo-named skeleton, every vertex weighted by the learned model) and the walk retargeted
/// onto it, feet on the ground; the picture beside it.
#[test]
fn demo_rigs_the_bare_mesh_and_retargets_the_walk_onto_it() {
    let (dir, path) = demo_dir();
    let source = demo_humanoid().unwrap();
    let loaded = rigml_io::load(&path).unwrap();
    loaded.validate().unwrap();
    assert_eq!(
        loaded.mesh.positions, source.mesh.positions,
        "the procedural mesh, vertex for vertex"
    );
    assert_eq!(loaded.mesh.triangles, source.mesh.triangles);
    assert_ne!(
        loaded.skeleton.names, source.skeleton.names,
        "a new skeleton, not the procedural one"
    );
    for name in [
        "root",
        "Hips",
        "Spine",
        "Head",
        "LeftArm",
        "RightHand",
        "LeftUpLeg",
        "RightFoot",
        "LeftToeBase",
    ] {
        assert!(
            loaded.skeleton.index_of(name).is_some(),
            "joint {name} in {:?}",
            loaded.skeleton.names
        );
    }
    let skin = loaded.skin.as_ref().expect("skinned");
    for v in 0..loaded.mesh.vertex_count() {
        let sum: f32 = skin.influences(v).iter().map(|i| i.weight).sum();
        assert!((sum - 1.0).abs() < 1e-3, "vertex {v}: weights sum to {sum}");
        assert!(skin.influences(v).len() <= 4, "vertex {v}");
    }

    // The walk plays on the new rig: the feet swing, and the mesh stays on the ground.
    assert_eq!(loaded.clips.len(), 1);
    let clip = &loaded.clips[0];
    assert_eq!(clip.name, "walk");
    let foot = loaded.skeleton.index_of("LeftFoot").unwrap();
    let height = 1.79f32;
    let (mut foot_z, mut lowest) = (Vec::new(), Vec::new());
    for k in 0..=24 {
        let pose = clip.sample(&loaded.skeleton, k as f32 / 24.0);
        foot_z.push(loaded.skeleton.world_matrices(&pose.local)[foot].w_axis.z);
        let m = rigml_core::skinning_matrices(&loaded.skeleton, &pose).unwrap();
        let posed = rigml_core::lbs(&loaded.mesh.positions, skin, &m);
        lowest.push(posed.iter().map(|p| p.y).fold(f32::MAX, f32::min) / height);
    }
    let stride = foot_z.iter().fold(f32::MIN, |a, &z| a.max(z)) - foot_z.iter().fold(f32::MAX, |a, &z| a.min(z));
    let mean_lowest = lowest.iter().sum::<f32>() / lowest.len() as f32;
    let deepest = lowest.iter().fold(f32::MAX, |a, &y| a.min(y));
    println!("left foot stride {stride:.3} m; lowest vertex mean {mean_lowest:.4} H, deepest {deepest:.4} H");
    assert!(stride > 0.2, "the left foot swings forward and back: {stride} m");
    assert!(
        mean_lowest.abs() < 0.02,
        "the feet stay on the ground: mean lowest vertex {mean_lowest} H"
    );
    assert!(deepest > -0.02, "no foot sinks into the ground: {deepest} H");

    // `rigml inspect`, the first command the demo suggests, finds no problem: the ground root
    // carries no weight by design and is listed as a control joint.
    let r = inspect_json(dir.path(), "out/rigml-demo.glb");
    assert_eq!(r["problems"], serde_json::json!([]), "{r}");
    assert_eq!(r["skeleton"]["controls"], serde_json::json!(["root"]), "{r}");

    // The picture: weights (3 panels of 384) above six 192-pixel frames of the walk.
    let png = std::fs::read(dir.path().join("out").join("rigml-demo.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let dimension = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    assert_eq!((dimension(16), dimension(20)), (1152, 384 + 192));
}

#[test]
fn demo_defaults_to_the_current_directory_and_refuses_to_clobber() {
    let dir = tempfile::tempdir().unwrap();
    let o = rigml(dir.path(), &["demo"]);
    assert_ok(&o);
    assert!(stdout(&o).contains("current directory"), "{}", stdout(&o));
    let path = dir.path().join("rigml-demo.glb");
    let first = std::fs::read(&path).unwrap();
    let first_png = std::fs::read(dir.path().join("rigml-demo.png")).ok();
    assert!(first_png.is_some(), "the demo writes its picture");
    std::fs::write(&path, b"keep me").unwrap();

    let o = rigml(dir.path(), &["demo"]);
    assert_clean_failure(&o, "rigml-demo.glb");
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&path).unwrap(), b"keep me");

    assert_eq!(
        std::fs::read(dir.path().join("rigml-demo.png")).ok(),
        first_png,
        "the picture is kept too"
    );

    assert_ok(&rigml(dir.path(), &["demo", "--force"]));
    assert_eq!(std::fs::read(&path).unwrap(), first, "the demo is deterministic");
}

#[test]
fn inspect_json_describes_the_procedural_humanoid() {
    let (dir, _) = humanoid_dir();
    let expected = demo_humanoid().unwrap();
    let r = inspect_json(dir.path(), "out/humanoid.glb");
    assert_eq!(r["format"], "glb");
    assert_eq!(r["mesh"]["vertices"], expected.mesh.vertex_count());
    assert_eq!(r["mesh"]["triangles"], expected.mesh.triangle_count());
    assert_eq!(r["mesh"]["parts"].as_array().unwrap().len(), 7);
    assert_eq!(r["skeleton"]["joints"], 21);
    assert_eq!(r["skeleton"]["roots"], serde_json::json!(["hips"]));
    assert_eq!(r["skeleton"]["depth"], 7);
    let histogram: Vec<u64> = r["skin"]["influence_histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect();
    assert_eq!(histogram.iter().sum::<u64>(), expected.mesh.vertex_count() as u64);
    assert_eq!(histogram.len(), 3, "at most two influences: {histogram:?}");
    assert_eq!(r["skin"]["unskinned"], 0);
    assert_eq!(r["clips"][0]["name"], "walk");
    assert_eq!(r["clips"][0]["keys"], 25);
    let height = r["bounds"]["extent"][1].as_f64().unwrap();
    assert!((1.7..1.9).contains(&height), "height {height}");
    assert_eq!(r["problems"], serde_json::json!([]));

    let o = rigml(dir.path(), &["inspect", "out/humanoid.glb"]);
    assert_ok(&o);
    let text = stdout(&o);
    for expected in [
        "21 joints, depth 7, 1 root: hips",
        "walk: 1.000 s",
        "problems   none found",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
}

#[test]
fn convert_prunes_and_refuses_to_clobber() {
    let (dir, _) = humanoid_dir();
    let args = ["convert", "out/humanoid.glb", "one.glb", "--max-influences", "1"];
    let o = rigml(dir.path(), &args);
    assert_ok(&o);
    assert!(stdout(&o).contains("wrote one.glb"), "{}", stdout(&o));
    let r = inspect_json(dir.path(), "one.glb");
    assert_eq!(r["skin"]["influences_max"], 1);
    assert_eq!(r["mesh"]["vertices"], demo_humanoid().unwrap().mesh.vertex_count());

    let before = std::fs::read(dir.path().join("one.glb")).unwrap();
    let o = rigml(dir.path(), &["convert", "out/humanoid.glb", "one.glb"]);
    assert_clean_failure(&o, "one.glb");
    assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));
    assert_eq!(std::fs::read(dir.path().join("one.glb")).unwrap(), before);

    assert_ok(&rigml(
        dir.path(),
        &["convert", "out/humanoid.glb", "one.glb", "--force"],
    ));
    assert_eq!(inspect_json(dir.path(), "one.glb")["skin"]["influences_max"], 2);

    // -o as the other commands take it; the output given twice, or not at all, is a usage error.
    assert_ok(&rigml(dir.path(), &["convert", "out/humanoid.glb", "-o", "two.glb"]));
    assert_eq!(
        inspect_json(dir.path(), "two.glb")["mesh"]["vertices"],
        r["mesh"]["vertices"]
    );
    for args in [
        &["convert", "out/humanoid.glb", "three.glb", "-o", "four.glb"][..],
        &["convert", "out/humanoid.glb"][..],
    ] {
        let o = rigml(dir.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
    assert!(!dir.path().join("three.glb").exists() && !dir.path().join("four.glb").exists());
}

#[test]
fn bad_paths_and_files_fail_with_the_file_name() {
    let dir = tempfile::tempdir().unwrap();
    assert_clean_failure(&rigml(dir.path(), &["inspect", "missing.glb"]), "missing.glb");
    assert_clean_failure(&rigml(dir.path(), &["inspect", "notes.xyz"]), "notes.xyz");
    std::fs::write(dir.path().join("cut.glb"), b"glTF\x02\x00\x00\x00").unwrap();
    assert_clean_failure(&rigml(dir.path(), &["inspect", "cut.glb"]), "cut.glb");
    assert_clean_failure(&rigml(dir.path(), &["convert", "missing.glb", "x.glb"]), "missing.glb");
    assert!(!dir.path().join("x.glb").exists());
    // Usage errors are clap's (exit 2), still without a panic.
    let o = rigml(dir.path(), &["convert", "a.glb", "b.glb", "--max-influences", "0"]);
    assert_eq!(o.status.code(), Some(2));
}

/// `inspect --json` on every GLB character of the manifest succeeds and reports the
/// manifest's counts; files with NaN weights load with their repairs listed.
#[test]
fn inspect_matches_the_manifest_on_every_glb_character() {
    let rows = common::rows_with_format(&["glb"]);
    assert!(
        rows.len() >= 70,
        "expected the ~72 GLB characters, found {}",
        rows.len()
    );
    let cwd = common::data_dir();
    let (mut mismatches, mut repaired) = (Vec::new(), Vec::new());
    for row in &rows {
        let r = inspect_json(&cwd, row.get("path"));
        if !r["repairs"].as_array().unwrap().is_empty() {
            assert!(
                r["repairs"][0].as_str().unwrap().contains("NaN"),
                "{}: {}",
                row.id(),
                r["repairs"]
            );
            assert!(r["skin"]["unskinned"].as_u64().unwrap() > 0, "{}", row.id());
            repaired.push(row.id().to_string());
        }
        let ours = [
            &r["mesh"]["vertices"],
            &r["mesh"]["triangles"],
            &r["skeleton"]["joints"],
            &r["skin"]["influences_max"],
        ];
        let columns = ["vertices", "triangles", "joints", "influences_max"];
        for (value, column) in ours.iter().zip(columns) {
            if let Some(expected) = row.count(column) {
                if value.as_u64() != Some(expected as u64) {
                    mismatches.push(format!("{} {column}: inspect {value}, manifest {expected}", row.id()));
                }
            }
        }
        if let Some(clips) = row.count("clips") {
            if r["clips"].as_array().map(Vec::len) != Some(clips) {
                mismatches.push(format!("{} clips: manifest {clips}", row.id()));
            }
        }
    }
    assert!(mismatches.is_empty(), "{mismatches:#?}");
    // The data README documents NaN weights in the Bee; the survey found them in two more.
    assert!(
        repaired.contains(&"quaternius-platformer-game-bee".to_string()),
        "{repaired:?}"
    );
    println!("{} files were repaired: {repaired:?}", repaired.len());
}

#[test]
fn demo_glb_passes_the_khronos_validator() {
    let ci = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci");
    if !ci.join("node_modules/gltf-validator").is_dir() {
        let notice = format!(
            "gltf-validator is not installed in {} (run `cd .ci && npm install`)",
            ci.display()
        );
        assert!(std::env::var_os("CI").is_none(), "{notice}");
        eprintln!("SKIPPED: {notice}");
        return;
    }
    let (_dir, path) = demo_dir();
    let o = Command::new("node")
        .arg(ci.join("validate-gltf.mjs"))
        .arg(&path)
        .output()
        .expect("node runs the glTF validator");
    let report: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    assert_eq!(report["errors"], 0, "{report}");
    assert_eq!(report["warnings"], 0, "{report}");
}

/// The Bee (data README: NaN skin weights) converts with each repair reported, and the file
/// written needs no repair.
#[test]
fn convert_reports_repairs_and_writes_clean_files() {
    let row = common::manifest()
        .into_iter()
        .find(|r| r.id() == "quaternius-platformer-game-bee")
        .expect("the manifest lists the Bee");
    let input = row.path();
    let dir = tempfile::tempdir().unwrap();
    let o = rigml(dir.path(), &["convert", input.to_str().unwrap(), "bee.glb"]);
    assert_ok(&o);
    assert!(
        stdout(&o).contains("repaired: ") && stdout(&o).contains("NaN"),
        "{}",
        stdout(&o)
    );
    let r = inspect_json(dir.path(), "bee.glb");
    assert_eq!(r["repairs"], serde_json::json!([]), "the written file needs no repair");
    assert!(r["skin"]["unskinned"].as_u64().unwrap() > 0);
}

/// An FBX character converts to GLB with the manifest's counts (FBX vertices are control
/// points, and the GLB keeps them one to one).
#[test]
fn convert_fbx_to_glb_keeps_the_character() {
    let row = common::rows_with_format(&["fbx"])
        .into_iter()
        .next()
        .expect("the manifest lists FBX characters");
    let dir = tempfile::tempdir().unwrap();
    let o = rigml(
        dir.path(),
        &[
            "convert",
            row.path().to_str().unwrap(),
            "out.glb",
            "--max-influences",
            "4",
        ],
    );
    assert_ok(&o);
    let r = inspect_json(dir.path(), "out.glb");
    assert_eq!(
        r["mesh"]["vertices"].as_u64(),
        row.count("vertices").map(|n| n as u64),
        "{}",
        row.id()
    );
    assert_eq!(
        r["skeleton"]["joints"].as_u64(),
        row.count("joints").map(|n| n as u64),
        "{}",
        row.id()
    );
    assert!(r["skin"]["influences_max"].as_u64().unwrap() <= 4);
}

#[test]
fn render_draws_a_joint_a_pose_sheet_and_a_comparison() {
    let (dir, _) = humanoid_dir();
    let cwd = dir.path();
    let out = rigml(
        cwd,
        &[
            "render",
            "out/humanoid.glb",
            "--joint",
            "leftUpperLeg",
            "--size",
            "128",
            "-o",
            "leg.png",
        ],
    );
    assert_ok(&out);
    assert!(stdout(&out).contains("384x128"), "{}", stdout(&out));
    let out = rigml(
        cwd,
        &[
            "render",
            "out/humanoid.glb",
            "--poses",
            "3",
            "--size",
            "64",
            "-o",
            "sheet.png",
        ],
    );
    assert_ok(&out);
    let out = rigml(
        cwd,
        &[
            "render",
            "out/humanoid.glb",
            "--compare",
            "out/humanoid.glb",
            "--size",
            "64",
            "-o",
            "cmp.png",
        ],
    );
    assert_ok(&out);
    assert!(
        stdout(&out).contains("max 0.0000"),
        "identical weights differ: {}",
        stdout(&out)
    );
    for png in ["leg.png", "sheet.png", "cmp.png"] {
        assert!(std::fs::read(cwd.join(png)).unwrap().starts_with(b"\x89PNG"), "{png}");
    }
    assert_clean_failure(&rigml(cwd, &["render", "out/humanoid.glb", "-o", "leg.png"]), "leg.png");
    assert_clean_failure(
        &rigml(cwd, &["render", "out/humanoid.glb", "--joint", "tail", "-o", "x.png"]),
        "out/humanoid.glb",
    );
}

#[test]
fn skin_replaces_the_weights_with_a_solver_result() {
    let (dir, _) = humanoid_dir();
    let cwd = dir.path();
    for method in ["nearest", "heat"] {
        let out = format!("{method}.glb");
        let o = rigml(
            cwd,
            &[
                "skin",
                "out/humanoid.glb",
                "--method",
                method,
                "--max-influences",
                "3",
                "-o",
                &out,
            ],
        );
        assert_ok(&o);
        let c = rigml_io::load(&cwd.join(&out)).unwrap();
        let skin = c.skin.unwrap();
        assert!(skin.influences_max() <= 3 && skin.unskinned_count() == 0, "{method}");
    }
    assert_clean_failure(&rigml(cwd, &["skin", "out/humanoid.glb", "-o", "heat.glb"]), "heat.glb");
}

#[test]
fn eval_scores_the_val_split_and_writes_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let data = common::data_dir();
    let args = [
        "eval",
        "--data",
        data.to_str().unwrap(),
        "--split",
        "val",
        "--methods",
        "nearest",
        "--no-deformation",
    ];
    let o = rigml(dir.path(), &[&args[..], &["-o", "report"]].concat());
    assert_ok(&o);
    let val_characters = common::manifest()
        .iter()
        .filter(|r| r.get("kind") == "character" && r.get("split") == "val")
        .count();
    assert!(val_characters > 0, "the manifest has no val characters");
    let assets = format!("| assets | {val_characters} |");
    assert!(stdout(&o).contains(&assets), "{assets} not in {}", stdout(&o));
    let csv = std::fs::read(dir.path().join("report/per_asset.csv")).unwrap();
    let o = rigml(dir.path(), &[&args[..], &["-o", "again"]].concat());
    assert_ok(&o);
    assert_eq!(
        std::fs::read(dir.path().join("again/per_asset.csv")).unwrap(),
        csv,
        "CSV is deterministic"
    );
    // --subdivide scores denser copies of the same assets: more vertices each, the same rows.
    let o = rigml(dir.path(), &[&args[..], &["--subdivide", "1", "-o", "dense"]].concat());
    assert_ok(&o);
    assert!(stdout(&o).contains("subdivided 1 time"), "{}", stdout(&o));
    let vertices = |path: &str| -> Vec<(String, usize)> {
        std::fs::read_to_string(dir.path().join(path))
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| {
                let cells: Vec<&str> = l.split(',').collect();
                (cells[0].to_string(), cells[2].parse().unwrap())
            })
            .collect()
    };
    let (stored, dense) = (vertices("report/per_asset.csv"), vertices("dense/per_asset.csv"));
    assert_eq!(stored.len(), dense.len());
    for ((a, n), (b, m)) in stored.iter().zip(&dense) {
        assert_eq!(a, b);
        // At least one new vertex per old one (a flat-shaded mesh, every triangle its own corners,
        // gets exactly that many; a shared surface about three).
        assert!(*m >= 2 * *n, "{a}: {n} vertices stored, {m} subdivided");
    }
    assert!(!dir.path().join("dense/pictures_nearest_worst.png").exists());
    let summary = std::fs::read_to_string(dir.path().join("report/summary.md")).unwrap();
    // Pictures of the worst and best asset, linked from the summary.
    for which in ["worst", "best"] {
        let name = format!("pictures_nearest_{which}.png");
        assert!(summary.contains(&format!("]({name})")), "{summary}");
        assert!(std::fs::read(dir.path().join("report").join(&name))
            .unwrap()
            .starts_with(b"\x89PNG"));
    }
}

#[test]
fn nonsense_flag_values_are_refused() {
    let (dir, _) = humanoid_dir();
    let cwd = dir.path();
    // Exit 2: refused by the argument parser; exit 1: refused by the command.
    let cases: [(&[&str], i32); 4] = [
        (
            &[
                "skin",
                "out/humanoid.glb",
                "--method",
                "voxel",
                "--resolution",
                "0",
                "-o",
                "v.glb",
            ],
            2,
        ),
        (
            &[
                "skin",
                "out/humanoid.glb",
                "--method",
                "voxel",
                "--resolution",
                "100000",
                "-o",
                "v.glb",
            ],
            2,
        ),
        (
            &["eval", "--split", "nonsense", "--methods", "nearest", "-o", "report"],
            2,
        ),
        (&["render", "out/humanoid.glb", "--size", "3", "-o", "s.png"], 1),
    ];
    for (args, code) in cases {
        let o = rigml(cwd, args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).is_empty(), "{args:?}");
    }
    assert!(!cwd.join("v.glb").exists() && !cwd.join("report").exists() && !cwd.join("s.png").exists());
}

#[test]
fn inspect_gives_the_world_size_of_a_character_whose_armature_is_scaled() {
    // Quaternius' robot: CharacterArmature is scaled ×100 above the root joint, so the stored
    // (bind-pose) mesh is 1/100 of what stands in the scene.
    let path = common::asset("quaternius-cyberpunk-enemy-2legs");
    let cwd = path.parent().unwrap();
    let file = path.file_name().unwrap().to_str().unwrap();
    let r = inspect_json(cwd, file);
    let world = r["world_size"].as_f64().unwrap();
    let bind = r["size"].as_f64().unwrap();
    assert!((1.0..2.0).contains(&world), "{r}");
    assert!(bind < 0.02, "{r}");
    let o = rigml(cwd, &["inspect", file]);
    assert!(stdout(&o).contains("bind-pose size 0.0130"), "{}", stdout(&o));
}

/// Number flags outside their meaning (a negative pull, a zero cutoff or frame rate, a share
/// above 1, NaN, zero placings of the joints, thousands of joint steps), and anchor trials asked
/// for with the anchor or a rest mesh given, are refused by the argument parser: exit status 2,
/// the flag named, nothing read or written. The input paths need not exist: parsing comes first.
#[test]
fn float_flags_outside_their_range_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[&[&str]] = &[
        &["rig-seq", "seq", "-o", "out.glb", "--weight-prior=-1"],
        &["rig-seq", "seq", "-o", "out.glb", "--pivot-pull", "nan"],
        &["rig-seq", "seq", "-o", "out.glb", "--fps", "0"],
        &["rig-seq", "seq", "-o", "out.glb", "--pivot-rounds", "0"],
        &["rig-seq", "seq", "-o", "out.glb", "--joint-steps", "5000"],
        &["rig-seq", "seq", "-o", "out.glb", "--sweeps", "0"],
        // Frames to try as the anchor when the anchor, or a rest mesh, is given.
        &[
            "rig-seq",
            "seq",
            "-o",
            "out.glb",
            "--anchor",
            "3",
            "--anchor-tries",
            "4",
        ],
        &[
            "rig-seq",
            "seq",
            "-o",
            "out.glb",
            "--rest",
            "t.obj",
            "--anchor-tries",
            "4",
        ],
        &["decompose", "seq", "-o", "out.glb", "--fps=-24"],
        &["decompose", "seq", "-o", "out.glb", "--smoothness", "inf"],
        &["eval-motion", "--split", "val", "--root-cutoff", "0"],
        &["clean", "walk.bvh", "-o", "out.bvh", "--cutoff=-3"],
        &["clean", "walk.bvh", "-o", "out.bvh", "--beta", "NaN"],
        &["clean", "walk.bvh", "-o", "out.bvh", "--max-step", "0"],
        &[
            "train",
            "--split",
            "train",
            "-o",
            "m.safetensors",
            "--learning-rate",
            "0",
        ],
        &["train", "--split", "train", "-o", "m.safetensors", "--relative", "1.5"],
        &["train", "--split", "train", "-o", "m.safetensors", "--min-recall=-0.1"],
        &[
            "train-motion",
            "--split",
            "train",
            "-o",
            "m.safetensors",
            "--infill",
            "2",
        ],
        &[
            "train-skeleton",
            "--split",
            "train",
            "-o",
            "m.safetensors",
            "--pose-degrees=-5",
        ],
    ];
    for args in cases {
        let o = rigml(dir.path(), args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        let flag = args.iter().rev().find(|a| a.starts_with("--")).unwrap();
        let flag = flag.split('=').next().unwrap();
        assert!(err.contains(flag), "{args:?}: stderr does not name {flag}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written");
}
