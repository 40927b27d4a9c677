//! End to end: `rigml view` on real assets (and on a `rigml rig-seq` result), driven in headless
//! Chromium by `crates/rigml-viz/web/test/drive.mjs` (playwright-core). The driver clicks a
//! joint's dot and the test checks the page then names that joint, the heat map changed, a clip
//! plays, the model was drawn and nothing was logged as an error. Screenshots go to
//! `target/test-artefacts/viewer.png` (and `viewer-compare.png`, `viewer-rig-seq.png`,
//! `viewer-rig-seq-motion.png`).
//!
//! Needs node, the driver's `npm ci` (crates/rigml-viz/web/test) and Debian's `chromium`
//! (`.ci/run` installs them): skipped with a message when they are missing, failed when `CI` is
//! set.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn web_test_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../rigml-viz/web/test")
}

fn artefacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-artefacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Why the browser test cannot run here, if it cannot.
fn missing_tools() -> Option<String> {
    if !rigml_viz::viewer::three_bundled() {
        return Some("three.js was not bundled (npm ci in crates/rigml-viz/web failed at build time)".into());
    }
    if Command::new("node")
        .arg("--version")
        .output()
        .map_or(true, |o| !o.status.success())
    {
        return Some("node not found".into());
    }
    if !web_test_dir().join("node_modules/playwright-core").is_dir() {
        return Some("playwright-core not installed (npm ci in crates/rigml-viz/web/test)".into());
    }
    let chromium = std::env::var_os("RIGML_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(
            [
                "/usr/lib/chromium/chromium",
                "/usr/bin/chromium",
                "/usr/bin/chromium-browser",
            ]
            .map(PathBuf::from),
        )
        .any(|p| p.is_file());
    (!chromium).then(|| "chromium not found (apt-get install chromium, or set RIGML_CHROMIUM)".into())
}

/// Skip (or fail under CI) when the tools are missing; `true` when the test can run.
fn tools_present(test: &str) -> bool {
    match missing_tools() {
        None => true,
        Some(why) => {
            let notice = format!("{test}: skipped: {why}");
            assert!(std::env::var_os("CI").is_none(), "{notice}");
            eprintln!("{notice}");
            false
        }
    }
}

/// A running `rigml view`, killed when dropped.
struct Viewer {
    child: Child,
    url: String,
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_viewer(args: &[&Path]) -> Viewer {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rigml"));
    command.arg("view").arg(args[0]);
    if let Some(other) = args.get(1) {
        command.arg("--compare").arg(other);
    }
    let mut child = command
        .args(["--port", "0", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn rigml view");
    let stdout = child.stdout.take().unwrap();
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = send.send(line);
    });
    let mut viewer = Viewer {
        child,
        url: String::new(),
    };
    let line = receive
        .recv_timeout(Duration::from_secs(120))
        .expect("rigml view printed no address");
    let json: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    viewer.url = json["url"].as_str().unwrap().to_string();
    assert!(viewer.url.starts_with("http://127.0.0.1:"), "{line}");
    viewer
}

fn drive(url: &str, screenshot: &Path, compare: bool) -> Value {
    let mut command = Command::new("node");
    command
        .current_dir(web_test_dir())
        .arg("drive.mjs")
        .arg(url)
        .arg(screenshot);
    if compare {
        command.arg("--compare");
    }
    let out = command.output().expect("run node drive.mjs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "drive.mjs failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn khronos_fox() -> PathBuf {
    common::asset("khronos-fox")
}

/// The page read every influence of every skinned vertex: rows sum to 1 and the widest row is
/// as wide as rigml's.
fn assert_all_influences_read(seen: &Value, character: &rigml_core::Character) {
    let skin = character.skin.as_ref().unwrap();
    let w = &seen["weights"];
    assert_eq!(w["influencesMax"].as_u64(), Some(skin.influences_max() as u64), "{w}");
    let skinned = skin.vertex_count() - skin.unskinned_count();
    assert_eq!(w["vertices"].as_u64(), Some(skinned as u64), "{w}");
    for bound in ["min", "max"] {
        assert!((w[bound].as_f64().unwrap() - 1.0).abs() < 1e-3, "{w}");
    }
}

fn assert_picked_and_clean(seen: &Value, expected_joints: &[String]) {
    assert_eq!(seen["errors"], Value::Array(vec![]), "{seen:#}");
    assert_eq!(seen["pageErrors"], Value::Array(vec![]), "{seen:#}");
    let joints: Vec<String> = serde_json::from_value(seen["joints"].clone()).unwrap();
    assert_eq!(joints, expected_joints, "the page lists the file's joints in order");
    let clicked = seen["clicked"]["name"].as_str().unwrap();
    assert!(expected_joints.iter().any(|j| j == clicked));
    assert_eq!(seen["before"]["shown"], "none", "{seen:#}");
    assert_eq!(
        seen["after"]["shown"], clicked,
        "the page names the joint clicked: {seen:#}"
    );
    assert_eq!(seen["after"]["selected"], clicked);
    let (before, after) = (
        seen["before"]["checksum"].as_f64().unwrap(),
        seen["after"]["checksum"].as_f64().unwrap(),
    );
    assert!(
        (before - after).abs() > 1e-3 * before.abs(),
        "heat map unchanged: {seen:#}"
    );
    assert!(seen["drawn"].as_f64().unwrap() > 0.01, "nothing drawn: {seen:#}");
}

#[test]
fn viewer_shows_a_real_character_and_picks_the_clicked_bone() {
    if !tools_present("viewer_shows_a_real_character_and_picks_the_clicked_bone") {
        return;
    }
    let path = khronos_fox();
    let character = rigml_io::load(&path).unwrap();
    let viewer = start_viewer(&[&path]);
    let screenshot = artefacts().join("viewer.png");
    let seen = drive(&viewer.url, &screenshot, false);
    assert_picked_and_clean(&seen, &character.skeleton.names);
    assert_eq!(seen["vertices"].as_u64(), Some(character.mesh.vertex_count() as u64));
    assert_all_influences_read(&seen, &character);
    assert!(
        seen["clipTime"].as_f64().unwrap() > 0.0,
        "the first clip did not play: {seen:#}"
    );
    assert!(std::fs::read(&screenshot).unwrap().starts_with(b"\x89PNG"));
}

#[test]
fn viewer_plays_a_mesh_sequence_rigged_by_rig_seq() {
    if !tools_present("viewer_plays_a_mesh_sequence_rigged_by_rig_seq") {
        return;
    }
    // three.js as a client of `rigml rig-seq`'s GLB: the fox's walk (OBJ frames, no rig),
    // rigged by the shape template and with the skeleton read from its motion.
    let walk = common::rows_where("id", "fox_walk")
        .into_iter()
        .next()
        .expect("fox_walk row")
        .path();
    let dir = tempfile::tempdir().unwrap();
    let runs: [(&str, &[&str]); 2] = [
        ("", &["--refine", "1"]),
        ("-motion", &["--template", "motion", "--pivot-rounds", "2"]),
    ];
    for (suffix, args) in runs {
        let path = dir.path().join(format!("fox-walk-rig{suffix}.glb"));
        let o = Command::new(env!("CARGO_BIN_EXE_rigml"))
            .arg("rig-seq")
            .arg(&walk)
            .args(args)
            .arg("-o")
            .arg(&path)
            .output()
            .expect("rigml rig-seq runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let character = rigml_io::load(&path).unwrap();
        let viewer = start_viewer(&[&path]);
        let seen = drive(
            &viewer.url,
            &artefacts().join(format!("viewer-rig-seq{suffix}.png")),
            false,
        );
        assert_picked_and_clean(&seen, &character.skeleton.names);
        assert_eq!(seen["vertices"].as_u64(), Some(character.mesh.vertex_count() as u64));
        assert_all_influences_read(&seen, &character);
        assert!(
            seen["clipTime"].as_f64().unwrap() > 0.0,
            "the clip did not play ({suffix}): {seen:#}"
        );
    }
}

#[test]
fn viewer_reads_fbx_with_more_than_four_influences() {
    if !tools_present("viewer_reads_fbx_with_more_than_four_influences") {
        return;
    }
    // Mage.fbx: up to 5 influences per vertex, so the GLB carries JOINTS_1/WEIGHTS_1.
    let path = common::asset("kaykit2-mage-fbx");
    let character = rigml_io::load(&path).unwrap();
    assert!(character.skin.as_ref().unwrap().influences_max() > 4);
    let viewer = start_viewer(&[&path]);
    let seen = drive(&viewer.url, &artefacts().join("viewer-fbx.png"), false);
    assert_picked_and_clean(&seen, &character.skeleton.names);
    assert_all_influences_read(&seen, &character);
}

#[test]
fn viewer_compares_two_weight_sets() {
    if !tools_present("viewer_compares_two_weight_sets") {
        return;
    }
    let path = khronos_fox();
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("fox-nearest.glb");
    let out = Command::new(env!("CARGO_BIN_EXE_rigml"))
        .args([
            "skin",
            path.to_str().unwrap(),
            "--method",
            "nearest",
            "-o",
            other.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let character = rigml_io::load(&path).unwrap();
    let viewer = start_viewer(&[&path, &other]);
    let seen = drive(&viewer.url, &artefacts().join("viewer-compare.png"), true);
    assert_picked_and_clean(&seen, &character.skeleton.names);
    let difference = seen["difference"].as_str().unwrap();
    let clicked = seen["clicked"]["name"].as_str().unwrap();
    assert!(
        difference.starts_with(&format!("difference (joint {clicked}): max ")),
        "{seen:#}"
    );
    let number = |label: &str| -> f64 {
        difference
            .split(label)
            .nth(1)
            .and_then(|s| s.split(',').next())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| panic!("{label} in {difference}"))
    };
    // The page's |A - B| for the clicked joint, against the same numbers from rigml's own reading
    // of both files.
    let j = character.skeleton.index_of(clicked).unwrap() as u32;
    let predicted = rigml_io::load(&other).unwrap();
    let weight = |skin: &rigml_core::Skin, v: usize| -> f64 {
        skin.influences(v)
            .iter()
            .filter(|i| i.joint == j)
            .map(|i| f64::from(i.weight))
            .sum()
    };
    let (a, b) = (character.skin.as_ref().unwrap(), predicted.skin.as_ref().unwrap());
    let diffs: Vec<f64> = (0..a.vertex_count())
        .map(|v| (weight(a, v) - weight(b, v)).abs())
        .collect();
    let max = diffs.iter().copied().fold(0.0, f64::max);
    let mean = diffs.iter().sum::<f64>() / diffs.len() as f64;
    assert!(max > 0.0, "nearest-bone weights equal the artist's on {clicked}?");
    assert!((number("max ") - max).abs() < 1e-3, "{difference} vs max {max}");
    assert!((number("mean ") - mean).abs() < 1e-3, "{difference} vs mean {mean}");
    assert_ne!(seen["diffChecksum"], seen["after"]["checksum"]);
}

#[test]
fn view_refuses_a_bad_file_and_a_busy_port() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.glb");
    let out = Command::new(env!("CARGO_BIN_EXE_rigml"))
        .arg("view")
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: ") && err.contains("missing.glb"), "{err}");
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_rigml"))
        .arg("view")
        .arg(khronos_fox())
        .args(["--port", &port])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("cannot listen on 127.0.0.1:{port}")), "{err}");
    assert!(out.stdout.is_empty(), "no address printed when nothing listens");
}
