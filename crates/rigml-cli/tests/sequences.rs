//! End-to-end tests of `rigml decompose`, `rigml rig-seq` and `rigml skin-seq`: run as a user
//! would, check the written file, the JSON summary and the failures.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;
mod run;

use run::{assert_clean_failure, assert_ok, rigml, stderr};

use serde_json::Value;

#[test]
fn decompose_fox_walk_writes_a_rig_and_refuses_to_clobber() {
    let row = common::rows_where("id", "fox_walk")
        .into_iter()
        .next()
        .expect("fox_walk row");
    let input = row.path();
    let input = input.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "decompose",
        input,
        "--bones",
        "12",
        "--iterations",
        "5",
        "-o",
        "fox.glb",
        "--json",
    ];
    let o = rigml(dir.path(), &args);
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["frames"], 18);
    assert_eq!(v["vertices"], 290);
    let rmse = v["rmse"].as_f64().unwrap();
    // The fox is itself linear blend skinned with 24 joints; 12 bones leave a small error.
    assert!(rmse > 0.0 && rmse < 0.02, "{v}");
    assert!(v["bones"].as_u64().unwrap() <= 12);
    let back = rigml_io::load(&dir.path().join("fox.glb")).unwrap();
    assert_eq!(back.mesh.vertex_count(), 290);
    assert_eq!(back.clips[0].key_count(), 18);
    // Again without --force: refused, file named.
    let o = rigml(dir.path(), &args);
    assert_clean_failure(&o, "fox.glb");
}

/// A folder `seq` of two OBJ frames whose second has a vertex fewer than the first.
fn broken_sequence() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let seq = dir.path().join("seq");
    std::fs::create_dir(&seq).unwrap();
    let tri = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 3 4\n";
    std::fs::write(seq.join("frame_000.obj"), tri).unwrap();
    std::fs::write(seq.join("frame_001.obj"), "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").unwrap();
    dir
}

#[test]
fn decompose_reports_bad_sequences_by_file() {
    let dir = broken_sequence();
    let o = rigml(dir.path(), &["decompose", "seq", "--bones", "2", "-o", "out.glb"]);
    assert_clean_failure(&o, "frame_001.obj");
    let o = rigml(dir.path(), &["decompose", "missing", "--bones", "2", "-o", "out.glb"]);
    assert_clean_failure(&o, "missing");
    let o = rigml(dir.path(), &["decompose", "seq", "--truth", "-o", "out.glb"]);
    assert_clean_failure(&o, "seq");
    // Alembic: a damaged cache, an HDF5 one, and --truth (a cache has no rig to compare with).
    std::fs::write(
        dir.path().join("bad.abc"),
        b"Ogawa\xff\x00\x01\x10\0\0\0\0\0\0\0garbage",
    )
    .unwrap();
    let o = rigml(dir.path(), &["decompose", "bad.abc", "--bones", "2", "-o", "out.glb"]);
    assert_clean_failure(&o, "bad.abc");
    std::fs::write(dir.path().join("old.abc"), b"\x89HDF\r\n\x1a\n\0\0\0\0\0\0\0\0").unwrap();
    let o = rigml(dir.path(), &["decompose", "old.abc", "--bones", "2", "-o", "out.glb"]);
    assert_clean_failure(&o, "HDF5 Alembic is not supported; re-export as Ogawa");
    let o = rigml(dir.path(), &["decompose", "bad.abc", "--truth", "-o", "out.glb"]);
    assert_clean_failure(&o, "not a mesh cache");
    assert!(!dir.path().join("out.glb").exists());
}

/// The Khronos validator's report on `path`; `None` (with a notice) when it is not installed
/// and `CI` is not set.
fn khronos_report(path: &std::path::Path) -> Option<Value> {
    let ci = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci");
    if !ci.join("node_modules/gltf-validator").is_dir() {
        let notice = format!("gltf-validator is not installed in {}", ci.display());
        assert!(std::env::var_os("CI").is_none(), "{notice}");
        eprintln!("SKIPPED validation: {notice}");
        return None;
    }
    let o = std::process::Command::new("node")
        .arg(ci.join("validate-gltf.mjs"))
        .arg(path)
        .output()
        .expect("node runs the glTF validator");
    Some(serde_json::from_slice(&o.stdout).expect("the validator's JSON report"))
}

#[test]
fn rig_seq_turns_the_fox_walk_into_a_named_rig_that_replays_it() {
    let row = common::rows_where("id", "fox_walk")
        .into_iter()
        .next()
        .expect("fox_walk row");
    let frames = row.count("frames").expect("the manifest counts fox_walk's frames");
    let vertices = row.count("vertices").expect("the manifest counts fox_walk's vertices");
    let input = row.path();
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "rig-seq",
        input.to_str().unwrap(),
        "--pivot-rounds",
        "2",
        "--refine",
        "2",
        "--splits",
        "0",
        "-o",
        "fox.glb",
        "--json",
    ];
    let o = rigml(dir.path(), &args);
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["frames"].as_u64(), Some(frames as u64), "{v}");
    assert_eq!(v["vertices"].as_u64(), Some(vertices as u64), "{v}");
    // Refining the weights lowers the error every round of the first placing of the joints; the
    // written rig is the best of all rounds, and reproduces the walk to well under 1 % of the
    // fox's length (measured 1.5e-3 after two placings of two rounds each).
    let rounds: Vec<f64> = v["rmse_per_round"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let placings = v["pivot_rounds"].as_u64().unwrap() as usize;
    assert!((1..=2).contains(&placings), "{v}");
    assert_eq!(rounds.len(), 3 * placings, "{v}");
    assert!(rounds[..3].windows(2).all(|w| w[1] < w[0]), "{v}");
    let rmse = v["rmse"].as_f64().unwrap();
    let lowest = rounds.iter().copied().fold(f64::INFINITY, f64::min);
    assert!((rmse - lowest).abs() <= 1e-12 * lowest, "{v}");
    assert!(rmse > 0.0 && rmse < 0.004, "{v}");
    assert_eq!(v["pjdd"], 0.0);
    let back = rigml_io::load(&dir.path().join("fox.glb")).unwrap();
    assert_eq!(back.mesh.vertex_count(), vertices);
    let skin = back.skin.as_ref().expect("a skin");
    assert_eq!(skin.unskinned_count(), 0, "every vertex weighted");
    let names = &back.skeleton.names;
    assert!(names.iter().all(|n| !n.is_empty()));
    let unique: std::collections::HashSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "joint names are unique: {names:?}");
    assert_eq!(back.clips.len(), 1);
    assert_eq!(back.clips[0].key_count(), frames);
    // One skeleton for the whole sequence: every bone keeps its length in every frame (the body
    // root alone translates, under the weightless ground root).
    let translated = translated_keeping_bone_lengths(&back, frames);
    assert_eq!(translated.len(), 1, "one body root moves: {translated:?}");
    if let Some(report) = khronos_report(&dir.path().join("fox.glb")) {
        assert_eq!(report["errors"], 0, "{report}");
    }
    let o = rigml(dir.path(), &args);
    assert_clean_failure(&o, "fox.glb");
}

/// The joints that `character`'s first clip translates, after checking at `frames` evenly
/// spaced times that every other joint keeps its bind distance from its parent (one skeleton
/// for the whole sequence).
fn translated_keeping_bone_lengths(character: &rigml_core::Character, frames: usize) -> Vec<usize> {
    let rest = character.skeleton.bind_positions();
    let clip = &character.clips[0];
    let translated: Vec<usize> = clip
        .channels
        .iter()
        .filter(|c| matches!(c.values, rigml_core::ChannelValues::Translation(_)))
        .map(|c| c.joint)
        .collect();
    for k in 0..frames {
        let t = k as f32 * clip.duration() / (frames - 1).max(1) as f32;
        let world = clip
            .sample(&character.skeleton, t)
            .world_matrices(&character.skeleton)
            .unwrap();
        for (j, parent) in character.skeleton.parents.iter().enumerate() {
            let Some(p) = *parent else { continue };
            if translated.contains(&j) {
                continue;
            }
            let posed = world[j].w_axis.truncate().distance(world[p].w_axis.truncate());
            let bound = rest[j].distance(rest[p]);
            assert!(
                (posed - bound).abs() <= 1e-3 * bound.max(1.0),
                "joint {j} frame {k}: {posed} vs {bound}"
            );
        }
    }
    translated
}

#[test]
fn rig_seq_writes_a_valid_rig_for_every_sequence_of_the_manifest() {
    // OBJ frame folders and the Alembic cache alike: a GLB the Khronos validator accepts, every
    // vertex weighted, named joints, one clip with one key per frame. The largest frame rigged
    // (no other tried: `rig_seq_rigs_the_frame_whose_rig_replays_the_sequence_best` tries them), one placing of the joints and one weight
    // round (the defaults' tries and rounds change the numbers, not the file).
    let rows = common::rows_where("kind", "sequence");
    assert!(!rows.is_empty(), "the manifest lists sequences");
    let dir = tempfile::tempdir().unwrap();
    for row in rows {
        let out = format!("{}.glb", row.id());
        let input = row.path();
        let o = rigml(
            dir.path(),
            &[
                "rig-seq",
                input.to_str().unwrap(),
                "--anchor-tries",
                "1",
                "--pivot-rounds",
                "1",
                "--refine",
                "1",
                "-o",
                &out,
                "--json",
            ],
        );
        assert_ok(&o);
        let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
        let frames = v["frames"].as_u64().unwrap() as usize;
        if let Some(listed) = row.count("frames") {
            assert_eq!(frames, listed, "{}: {v}", row.id());
        }
        let path = dir.path().join(&out);
        let back = rigml_io::load(&path).unwrap_or_else(|e| panic!("{}: {e}", row.id()));
        assert_eq!(back.skin.as_ref().unwrap().unskinned_count(), 0, "{}", row.id());
        let names: std::collections::HashSet<&String> = back.skeleton.names.iter().collect();
        assert_eq!(names.len(), back.skeleton.joint_count(), "{}: unique names", row.id());
        assert_eq!(back.clips.len(), 1, "{}", row.id());
        assert_eq!(back.clips[0].key_count(), frames, "{}", row.id());
        if let Some(report) = khronos_report(&path) {
            assert_eq!(report["errors"], 0, "{}: {report}", row.id());
        }
        println!(
            "{}: {frames} frames, {} joints, RMSE {}",
            row.id(),
            back.skeleton.joint_count(),
            v["rmse"]
        );
    }
}

/// `rigml rig-seq` on the cat's poses with short rounds (one placing of one weight round) and
/// `extra` arguments, writing `out` in `dir`; its JSON report.
fn cat_rig_seq(dir: &std::path::Path, extra: &[&str], out: &str) -> Value {
    let row = common::rows_where("id", "cat_poses")
        .into_iter()
        .next()
        .expect("cat_poses row");
    let input = row.path();
    let mut args = vec![
        "rig-seq",
        input.to_str().unwrap(),
        "--pivot-rounds",
        "1",
        "--refine",
        "1",
    ];
    args.extend_from_slice(extra);
    args.extend(["-o", out, "--json"]);
    let o = rigml(dir, &args);
    assert_ok(&o);
    serde_json::from_slice(&o.stdout).expect("one JSON object")
}

#[test]
fn rig_seq_rigs_the_frame_whose_rig_replays_the_sequence_best() {
    // The cat lies curled in its largest-area frame, front legs together: rigged there, its
    // skeleton has 19 joints and one for both front legs. The frames tried as the anchor are the
    // largest first, then each the farthest in pose from those tried; the one kept is the one
    // whose first fit is clearly closest (measured 4.2e-2 against the largest's 9.2e-2), and
    // the rig from it replays the poses better than the largest frame's (one placing of one
    // round: 2.2e-2 against 4.5e-2).
    let dir = tempfile::tempdir().unwrap();
    let run = |tries: &str, out: &str| cat_rig_seq(dir.path(), &["--anchor-tries", tries], out);
    let tried = run("4", "tried.glb");
    let trials = tried["anchor_trials"].as_array().unwrap();
    assert_eq!(trials.len(), 4, "{tried}");
    let largest = tried["largest_area_frame"].as_u64().unwrap();
    assert_eq!(
        trials[0]["frame"].as_u64(),
        Some(largest),
        "the largest frame first: {tried}"
    );
    let frames: std::collections::HashSet<u64> = trials.iter().map(|t| t["frame"].as_u64().unwrap()).collect();
    assert_eq!(frames.len(), 4, "four different frames: {tried}");
    let (best, lowest) = trials
        .iter()
        .map(|t| (t["frame"].as_u64().unwrap(), t["rmse"].as_f64().unwrap()))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    assert_eq!(tried["anchor_frame"].as_u64(), Some(best), "{tried}");
    assert_ne!(best, largest, "{tried}");
    let of_largest = trials[0]["rmse"].as_f64().unwrap();
    assert!(lowest < 2.0 / 3.0 * of_largest, "{tried}");
    let plain = run("1", "plain.glb");
    assert_eq!(plain["anchor_frame"].as_u64(), Some(largest), "{plain}");
    assert!(plain["anchor_trials"].as_array().unwrap().is_empty(), "{plain}");
    let (with_trials, without) = (tried["rmse"].as_f64().unwrap(), plain["rmse"].as_f64().unwrap());
    assert!(with_trials < 0.75 * without, "{with_trials} vs {without}");
}

#[test]
fn rig_seq_splits_the_bone_that_replays_the_sequence_worst() {
    // The cat's trunk curls and stretches between its poses where the template left one long
    // bone: a joint inserted midway along the bone whose vertices carry the most residual lowers
    // the error by far more than one joint's share (with the defaults: 5.3e-3 at 40 weighted
    // joints, 4.0e-3 at 44 after four splits). Short runs here: frame 5 (the anchor the trials
    // choose), one placing of one weight round, two splits tried (measured 9.8e-3 at 40 weighted
    // joints, 7.0e-3 at 42).
    let dir = tempfile::tempdir().unwrap();
    let run = |splits: &str, out: &str| cat_rig_seq(dir.path(), &["--anchor", "5", "--splits", splits], out);
    let plain = run("0", "plain.glb");
    assert!(plain["split_tries"].as_array().unwrap().is_empty(), "{plain}");
    let split = run("2", "split.glb");
    let tries = split["split_tries"].as_array().unwrap();
    assert!((1..=2).contains(&tries.len()), "{split}");
    let kept: Vec<&str> = split["bones_split"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(!kept.is_empty(), "the first split pays: {split}");
    let (before, after) = (plain["rmse"].as_f64().unwrap(), split["rmse"].as_f64().unwrap());
    let weighted = |v: &Value| v["weighted_joints"].as_f64().unwrap();
    assert_eq!(weighted(&split), weighted(&plain) + kept.len() as f64, "{split}");
    // Kept only where each joint pays its share: error × weighted joints falls.
    assert!(
        after * weighted(&split) < before * weighted(&plain),
        "{after} vs {before}"
    );
    let back = rigml_io::load(&dir.path().join("split.glb")).unwrap();
    let names = &back.skeleton.names;
    for joint in &kept {
        let mid = format!("{joint}_mid");
        assert!(names.iter().any(|n| n.starts_with(&mid)), "{mid} in {names:?}");
    }
    let unique: std::collections::HashSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    assert_eq!(back.skin.as_ref().unwrap().unskinned_count(), 0);
    if let Some(report) = khronos_report(&dir.path().join("split.glb")) {
        assert_eq!(report["errors"], 0, "{report}");
    }
}

#[test]
fn rig_seq_recovers_the_fox_walks_joint_rotations() {
    // The Fox's own skinned walk baked to frames: the fitted joints' rotations against the
    // file's joints (measured 8.7° mean with the defaults, 12.6° with the two placings of two
    // weight rounds each here; a loose bar), and each matched pair by name, worst first, whose
    // errors average to the mean.
    let fox = common::asset("khronos-fox");
    let dir = tempfile::tempdir().unwrap();
    let o = rigml(
        dir.path(),
        &[
            "rig-seq",
            fox.to_str().unwrap(),
            "--clip",
            "1",
            "--pivot-rounds",
            "2",
            "--refine",
            "2",
            "--truth",
            "-o",
            "fox.glb",
            "--json",
        ],
    );
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    let truth = &v["truth"];
    assert!(truth["matched"].as_u64().unwrap() >= 20, "{v}");
    let degrees = truth["rotation_deg_mean"].as_f64().unwrap();
    assert!(degrees > 0.0 && degrees < 20.0, "{truth}");
    let pairs = truth["per_joint"].as_array().unwrap();
    assert_eq!(pairs.len() as u64, truth["matched"].as_u64().unwrap());
    let per: Vec<f64> = pairs.iter().map(|p| p["rotation_deg"].as_f64().unwrap()).collect();
    assert!(per.windows(2).all(|w| w[0] >= w[1]), "{truth}");
    assert!(
        (per.iter().sum::<f64>() / per.len() as f64 - degrees).abs() < 1e-9,
        "{truth}"
    );
    assert!(pairs[0]["joint"].as_str().unwrap().starts_with("b_"), "{truth}");
    assert!(!pairs[0]["fitted"].as_str().unwrap().is_empty(), "{truth}");
    // The same with joints matched by the vertices they weight (measured 10.8° with the
    // defaults).
    let by_skin = &truth["by_skin"];
    assert_eq!(by_skin["matched"], truth["matched"], "{truth}");
    let skin_degrees = by_skin["rotation_deg_mean"].as_f64().unwrap();
    assert!(skin_degrees > 0.0 && skin_degrees < 20.0, "{truth}");
    assert_eq!(by_skin["per_joint"].as_array().unwrap().len(), pairs.len());
}

#[test]
fn rig_seq_template_motion_reads_the_skeleton_from_the_fox_walks_motion() {
    // The Fox's own walk, 16 frames: the skeleton from a decomposition of the motion into 30
    // bones (short rounds), fitted with connected joints. A valid rig (every vertex weighted,
    // one key per frame, bones that keep their length), its rotations near the file's (measured
    // 4.39° mean at the default 60 bones and full rounds, 6.96° at 30; the shape template gives
    // 6.49°), and a reconstruction within 2x of `rigml decompose`'s free bones at as many bones.
    let fox = common::asset("khronos-fox");
    let fox = fox.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = rigml(
        dir.path(),
        &[
            "rig-seq",
            fox,
            "--clip",
            "1",
            "--frames",
            "16",
            "--template",
            "motion",
            "--bones",
            "30",
            "--pivot-rounds",
            "2",
            "--splits",
            "0",
            "--truth",
            "-o",
            "fox.glb",
            "--json",
        ],
    );
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["template"], "motion", "{v}");
    assert_eq!(v["skin"], "decomposition", "{v}");
    assert_eq!(v["anchor_frame"], v["largest_area_frame"], "{v}");
    // At most one joint a bone, and the shape template's ground root above them.
    let joints = v["joints"].as_u64().unwrap();
    assert!((10..=31).contains(&joints), "{v}");
    assert_eq!(v["joint_names"][0], "root", "{v}");
    let degrees = v["truth"]["rotation_deg_mean"].as_f64().unwrap();
    assert!(degrees > 0.0 && degrees < 10.0, "{}", v["truth"]);
    let back = rigml_io::load(&dir.path().join("fox.glb")).unwrap();
    assert_eq!(
        back.skin.as_ref().unwrap().unskinned_count(),
        0,
        "every vertex weighted"
    );
    assert_eq!(back.skeleton.joint_count() as u64, joints);
    assert_eq!(back.clips.len(), 1);
    assert_eq!(back.clips[0].key_count(), 16);
    let translated = translated_keeping_bone_lengths(&back, 16);
    assert_eq!(translated, [1], "the body root alone moves, under the ground root");
    if let Some(report) = khronos_report(&dir.path().join("fox.glb")) {
        assert_eq!(report["errors"], 0, "{report}");
    }
    let bones = joints.to_string();
    let o = rigml(
        dir.path(),
        &[
            "decompose",
            fox,
            "--clip",
            "1",
            "--frames",
            "16",
            "--bones",
            &bones,
            "-o",
            "free.glb",
            "--json",
        ],
    );
    assert_ok(&o);
    let free: Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    let (rmse, free_rmse) = (v["rmse"].as_f64().unwrap(), free["rmse"].as_f64().unwrap());
    assert!(
        rmse > 0.0 && rmse <= 2.0 * free_rmse,
        "rig-seq {rmse} against decompose {free_rmse}"
    );
    // It reads no anchor and no rest mesh, --bones is for it alone, and a single mesh has no
    // motion to read.
    let o = rigml(
        dir.path(),
        &["rig-seq", fox, "--template", "motion", "--anchor", "2", "-o", "a.glb"],
    );
    assert_clean_failure(&o, "Fox.glb");
    assert!(stderr(&o).contains("--anchor"), "{}", stderr(&o));
    let o = rigml(dir.path(), &["rig-seq", fox, "--bones", "20", "-o", "c.glb"]);
    assert_clean_failure(&o, "Fox.glb");
    assert!(stderr(&o).contains("--bones"), "{}", stderr(&o));
    let o = rigml(dir.path(), &["rig", fox, "--template", "motion", "-o", "b.glb"]);
    assert_clean_failure(&o, "Fox.glb");
    assert!(stderr(&o).contains("rig-seq"), "{}", stderr(&o));
}

#[test]
fn rig_seq_refuses_bad_requests_by_file() {
    let dir = broken_sequence();
    let o = rigml(dir.path(), &["rig-seq", "seq", "-o", "out.glb"]);
    assert_clean_failure(&o, "seq");
    let o = rigml(dir.path(), &["rig-seq", "seq", "--truth", "-o", "out.glb"]);
    assert_clean_failure(&o, "seq");
    let o = rigml(dir.path(), &["rig-seq", "seq", "-o", "out.obj"]);
    assert_clean_failure(&o, "out.obj");
    let o = rigml(dir.path(), &["rig-seq", "missing", "-o", "out.glb"]);
    assert_clean_failure(&o, "missing");
    // A rest mesh of another vertex count, and a frame past the end.
    let fox = common::rows_where("id", "fox_walk")
        .into_iter()
        .next()
        .expect("fox_walk row")
        .path();
    let fox = fox.to_str().unwrap();
    std::fs::write(dir.path().join("rest.obj"), "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").unwrap();
    let o = rigml(dir.path(), &["rig-seq", fox, "--rest", "rest.obj", "-o", "out.glb"]);
    assert_clean_failure(&o, "rest.obj");
    let o = rigml(dir.path(), &["rig-seq", fox, "--anchor", "1000", "-o", "out.glb"]);
    assert_clean_failure(&o, "fox_walk");
    // A rest mesh with the frames' vertex count in another order: one of the fox's own frames
    // with its vertex lines permuted (faces kept). Its vertices would be fitted to the wrong
    // points of every frame; it is refused, naming the order.
    let mut frames: Vec<_> = std::fs::read_dir(fox)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "obj"))
        .collect();
    frames.sort();
    let text = std::fs::read_to_string(&frames[0]).unwrap();
    let vertices: Vec<&str> = text.lines().filter(|l| l.starts_with("v ")).collect();
    let n = vertices.len();
    assert!(n > 100 && !n.is_multiple_of(17), "{n} vertices");
    let mut permuted = (0..n).map(|k| vertices[k * 17 % n]).collect::<Vec<_>>().join("\n");
    for line in text.lines().filter(|l| !l.starts_with("v ")) {
        permuted.push('\n');
        permuted.push_str(line);
    }
    std::fs::write(dir.path().join("reordered.obj"), permuted + "\n").unwrap();
    let o = rigml(
        dir.path(),
        &["rig-seq", fox, "--rest", "reordered.obj", "-o", "out.glb"],
    );
    assert_clean_failure(&o, "reordered.obj");
    assert!(stderr(&o).contains("order"), "{}", stderr(&o));
    assert!(!dir.path().join("out.glb").exists());
}

#[test]
fn skin_seq_per_frame_and_consistent_on_the_demo() {
    let dir = tempfile::tempdir().unwrap();
    assert_ok(&rigml(dir.path(), &["demo", "-o", "."]));
    let base = [
        "skin-seq",
        "rigml-demo.glb",
        "--frames",
        "4",
        "--method",
        "nearest",
        "--json",
    ];
    let o = rigml(dir.path(), &base);
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["mode"].as_str(), v["frames"].as_u64()), (Some("per-frame"), Some(4)));
    // Nearest-bone weights change with the pose (measured 161.4 summed over 4822 vertices).
    assert!(v["tse"].as_f64().unwrap() > 1.0, "{v}");
    let mut consistent = base.to_vec();
    consistent.push("--consistent");
    let o = rigml(dir.path(), &consistent);
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["tse"].as_f64(), Some(0.0));
    let rmse = v["lbs_rmse"].as_f64().unwrap();
    assert!(rmse.is_finite() && rmse < 0.1, "{v}");
}
