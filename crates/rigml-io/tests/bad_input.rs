//! No input makes `rigml_io::load` panic, hang or overflow its stack, and every error names the
//! file and the problem.
//!
//! The corpus is made at test time by our own code, nothing binary is committed:
//! - real files picked from `manifest.tsv` (small GLBs, one FBX, one BVH, a MakeHuman rig),
//!   truncated at several cut points and bit-flipped (seeded, 200 variants per file);
//! - hand-made semantic breakage per format (NaNs, indices out of range, cycles, unknown names,
//!   empty meshes, accessors beyond their buffers...), each with the words its error must say;
//! - deeply nested input, run in a child process so a stack overflow is reported, not fatal.
//!
//! Damage that may be harmless (most bit flips) may load; the character must then validate.
//! `RIGML_BAD_INPUT_VERBOSE=1 cargo test -p rigml-io --test bad_input -- --nocapture` prints
//! every case with its outcome.

#[path = "bad_input/cases_gltf.rs"]
mod cases_gltf;
#[path = "bad_input/cases_text.rs"]
mod cases_text;
#[path = "bad_input/glb.rs"]
mod glb;
#[path = "bad_input/harness.rs"]
mod harness;
#[path = "bad_input/manifest.rs"]
mod manifest;
#[path = "bad_input/mutate.rs"]
mod mutate;
#[path = "bad_input/words.rs"]
mod words;

use harness::{Case, Expect, Report, Source};
use manifest::Row;
use rigml_core::Problem;
use std::path::{Path, PathBuf};

/// Bit-flipped variants per real file.
const FLIPS_PER_FILE: usize = 200;

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temporary folder")
}

fn run_all(test: &str, cases: Vec<Case>) {
    let dir = temp_dir();
    let mut report = Report::default();
    for case in &cases {
        report.run(dir.path(), case);
    }
    report.finish(test);
}

// ---- the hand-made files are valid before we break them ----

#[test]
fn hand_made_files_load_when_intact() {
    let dir = temp_dir();
    let mut report = Report::default();

    let case = Case::new("intact GLB rig", "rig.glb", glb::Rig::default().glb(), Expect::Ok);
    if let Some(c) = report.run(dir.path(), &case) {
        let ok = c.mesh.vertex_count() == 4
            && c.mesh.triangle_count() == 2
            && c.skeleton.index_of("hip").is_some()
            && c.skeleton.index_of("spine").is_some()
            && c.skin.as_ref().is_some_and(|s| s.influences(2).len() == 2)
            && c.clips.len() == 1;
        if !ok {
            report.fail(&case, &format!("unexpected content: {c:?}"));
        }
    }

    let case = Case::new("intact OBJ", "mesh.obj", cases_text::OBJ, Expect::Ok);
    if let Some(c) = report.run(dir.path(), &case) {
        if c.mesh.vertex_count() != 4 || c.mesh.triangle_count() != 2 {
            report.fail(&case, &format!("expected 4 vertices, 2 triangles: {:?}", c.mesh));
        }
    }

    let case = Case::new("intact BVH", "walk.bvh", cases_text::BVH, Expect::Ok);
    if let Some(c) = report.run(dir.path(), &case) {
        let ok = c.skeleton.index_of("Hips").is_some() && c.skeleton.index_of("Spine").is_some() && c.clips.len() == 1;
        if !ok {
            report.fail(
                &case,
                &format!("expected joints Hips, Spine and one clip: {:?}", c.skeleton.names),
            );
        }
    }

    let case = cases_text::rignet("intact RigNet rig", cases_text::RIG, Expect::Ok);
    if let Some(c) = report.run(dir.path(), &case) {
        let ok = c.mesh.vertex_count() == 4
            && c.skeleton.names == ["hip", "spine", "head"]
            && c.skin
                .as_ref()
                .is_some_and(|s| s.vertex_count() == 4 && s.influences(2).len() == 2);
        if !ok {
            report.fail(&case, &format!("expected 4 vertices, hip/spine/head and a skin: {c:?}"));
        }
    }
    report.finish("hand_made_files_load_when_intact");
}

// ---- semantic breakage, per format ----

#[test]
fn gltf_semantic_breakage() {
    let mut cases = cases_gltf::data_cases();
    cases.extend(cases_gltf::document_cases());
    cases.extend(cases_gltf::container_cases());
    cases.extend(cases_gltf::separate_cases());
    run_all("gltf_semantic_breakage", cases);
}

#[test]
fn obj_semantic_breakage() {
    run_all("obj_semantic_breakage", cases_text::obj_cases());
}

#[test]
fn bvh_semantic_breakage() {
    run_all("bvh_semantic_breakage", cases_text::bvh_cases());
}

#[test]
fn rignet_semantic_breakage() {
    run_all("rignet_semantic_breakage", cases_text::rignet_cases());
}

// ---- zero-length bones are data, not errors ----

fn expect_zero_length(report: &mut Report, case: &Case, c: &rigml_core::Character, joint: &str) {
    let listed = c.problems().iter().any(|p| match p {
        Problem::ZeroLengthBones { joints } => joints.iter().any(|j| j == joint),
        _ => false,
    });
    if !listed {
        report.fail(
            case,
            &format!(
                "problems() does not list {joint} as a zero-length bone: {:?}",
                c.problems()
            ),
        );
    }
}

#[test]
fn zero_length_bones_load_and_are_reported() {
    let dir = temp_dir();
    let mut report = Report::default();
    let rig = glb::Rig {
        spine_offset: [0.0; 3],
        inverse_bind: vec![glb::translation_inverse([0.0; 3]); 2],
        ..Default::default()
    };
    let case = Case::new("glTF joint on its parent", "rig.glb", rig.glb(), Expect::Ok);
    if let Some(c) = report.run(dir.path(), &case) {
        expect_zero_length(&mut report, &case, &c, "spine");
    }
    let text = cases_text::BVH.replacen("OFFSET 0 1 0\n    CHANNELS", "OFFSET 0 0 0\n    CHANNELS", 1);
    let case = Case::new("BVH joint with zero OFFSET", "walk.bvh", text, Expect::Ok);
    if let Some(c) = report.run(dir.path(), &case) {
        expect_zero_length(&mut report, &case, &c, "Spine");
    }
    report.finish("zero_length_bones_load_and_are_reported");
}

// ---- nothing at all, and noise ----

#[test]
fn empty_and_garbage_files_in_every_format() {
    let mut cases = Vec::new();
    let mut rng = mutate::Rng::new(0x5EED);
    let noise: Vec<u8> = (0..1024).map(|_| rng.next_u64() as u8).collect();
    for ext in ["glb", "gltf", "vrm", "fbx", "obj", "bvh", "txt", "json"] {
        // An OBJ or RigNet file of noise has no line that means anything: it may read as empty.
        let lenient = matches!(ext, "obj" | "txt");
        let expect = if lenient { Expect::Either } else { Expect::Error(&[]) };
        // A stem per extension, so no case finds another's file beside it (RigNet looks for .obj).
        let name = format!("noise_{ext}.{ext}");
        // RigNet and MakeHuman look for files beside (or named like) the rig before reading it.
        let empty = match ext {
            "txt" | "json" => expect,
            _ => Expect::Error(words::EMPTY),
        };
        cases.push(Case::new(format!("0 bytes .{ext}"), &name, Vec::new(), empty));
        cases.push(Case::new(
            format!("1 KiB of noise .{ext}"),
            &name,
            noise.clone(),
            expect,
        ));
    }
    run_all("empty_and_garbage_files_in_every_format", cases);
}

// ---- real files from the manifest, damaged ----

/// Rows passing `keep`, smallest file first.
fn smallest(data: &Path, rows: &[Row], keep: impl Fn(&Row) -> bool) -> Vec<PathBuf> {
    let mut files: Vec<(u64, PathBuf)> = rows
        .iter()
        .filter(|r| keep(r))
        .map(|r| data.join(r.get("path")))
        .filter_map(|p| std::fs::metadata(&p).ok().map(|m| (m.len(), p)))
        .collect();
    files.sort();
    files.into_iter().map(|(_, p)| p).collect()
}

/// The real files to damage: the two smallest character GLBs, the smallest GLB with clips, the
/// smallest FBX and the smallest BVH.
fn real_files(data: &Path) -> Vec<PathBuf> {
    let rows = manifest::rows(data);
    let glb = |r: &Row| r.get("kind") == "character" && r.get("format") == "glb";
    let mut files: Vec<PathBuf> = smallest(data, &rows, glb).into_iter().take(2).collect();
    let animated = smallest(data, &rows, |r| {
        glb(r) && r.get("clips").parse::<u32>().is_ok_and(|n| n > 0)
    });
    files.extend(animated.into_iter().find(|p| !files.contains(p)));
    files.extend(smallest(data, &rows, |r| r.get("format") == "fbx").into_iter().take(1));
    files.extend(smallest(data, &rows, |r| r.get("format") == "bvh").into_iter().take(1));
    assert_eq!(
        files.len(),
        5,
        "manifest lacks the expected small GLB/FBX/BVH files: {files:?}"
    );
    files
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[test]
fn truncated_real_files() {
    let Some(data) = manifest::data_or_skip("truncated_real_files") else {
        return;
    };
    let dir = temp_dir();
    let mut report = Report::default();
    for path in real_files(&data) {
        let bytes = read(&path);
        let name = file_name(&path);
        let is_glb = name.to_lowercase().ends_with(".glb");
        // The intact file must load, or the damage below proves nothing.
        report.run(dir.path(), &Case::new("intact", &name, bytes.clone(), Expect::Ok));
        for cut in mutate::cut_points(&bytes) {
            // GLB declares its length: any cut is detectable. Text may end cleanly mid-file.
            let expect = if cut == 0 || is_glb {
                Expect::Error(&[])
            } else {
                Expect::Either
            };
            let case = Case::new(format!("cut at {cut} of {}", bytes.len()), &name, &bytes[..cut], expect);
            report.run(dir.path(), &case);
        }
    }
    report.finish("truncated_real_files");
}

#[test]
fn bit_flipped_real_files() {
    let Some(data) = manifest::data_or_skip("bit_flipped_real_files") else {
        return;
    };
    let dir = temp_dir();
    let mut report = Report::default();
    for (i, path) in real_files(&data).into_iter().enumerate() {
        let bytes = read(&path);
        let name = file_name(&path);
        for (k, variant) in mutate::bit_flips(&bytes, 1000 + i as u64, FLIPS_PER_FILE)
            .into_iter()
            .enumerate()
        {
            report.run(
                dir.path(),
                &Case::new(format!("flip variant {k}"), &name, variant, Expect::Either),
            );
        }
    }
    report.finish("bit_flipped_real_files");
}

/// MakeHuman files are large: truncate the rig, the weights and the mesh once each.
#[test]
fn truncated_makehuman_files() {
    let Some(data) = manifest::data_or_skip("truncated_makehuman_files") else {
        return;
    };
    let rows = manifest::rows(&data);
    let row = rows
        .iter()
        .filter(|r| r.get("format") == "makehuman")
        .min_by_key(|r| std::fs::metadata(data.join(r.get("path"))).map_or(u64::MAX, |m| m.len()))
        .expect("manifest has MakeHuman rows");
    let rig = data.join(row.get("path"));
    let (Some(mesh), Some(weights)) = (row.note("mesh"), row.note("weights")) else {
        panic!("{}: notes lack mesh= / weights=", row.get("id"));
    };
    let (mesh, weights) = (data.join(mesh), data.join(weights));
    let (rig_name, mesh_name, weights_name) = (file_name(&rig), file_name(&mesh), file_name(&weights));
    let rig_bytes = read(&rig);
    let half = |path: &Path| {
        let b = read(path);
        b[..b.len() / 2].to_vec()
    };
    let with = |label: &str, rig: Vec<u8>, mesh: Source, weights: Source, expect| {
        Case::new(label, &rig_name, rig, expect)
            .beside(&mesh_name, mesh)
            .beside(&weights_name, weights)
    };
    let cases = [
        with(
            "intact",
            rig_bytes.clone(),
            Source::File(mesh.clone()),
            Source::File(weights.clone()),
            Expect::Ok,
        ),
        with(
            "rig 0 bytes",
            Vec::new(),
            Source::File(mesh.clone()),
            Source::File(weights.clone()),
            Expect::Error(&[]),
        ),
        with(
            "rig cut in half",
            half(&rig),
            Source::File(mesh.clone()),
            Source::File(weights.clone()),
            Expect::Error(&[]),
        ),
        with(
            "weights cut in half",
            rig_bytes.clone(),
            Source::File(mesh.clone()),
            Source::Bytes(half(&weights)),
            Expect::Error(&[]),
        ),
        with(
            "mesh cut in half",
            rig_bytes,
            Source::Bytes(half(&mesh)),
            Source::File(weights),
            Expect::Error(&[]),
        ),
    ];
    let dir = temp_dir();
    let mut report = Report::default();
    for (i, case) in cases.iter().enumerate() {
        // Each case in its own folder: companions differ between cases.
        report.run(&dir.path().join(i.to_string()), case);
    }
    report.finish("truncated_makehuman_files");
}

// ---- deep nesting, in a child process ----

/// Depth of the nested cases: far beyond what a recursive reader survives on an 8 MiB stack.
const DEPTH: usize = 100_000;

fn deep_case(name: &str) -> Option<Case> {
    match name {
        "bvh" => {
            let channels = "CHANNELS 3 Zrotation Xrotation Yrotation\n";
            let mut text = format!("HIERARCHY\nROOT j0\n{{\nOFFSET 0 0 0\n{channels}");
            for j in 1..DEPTH {
                text.push_str(&format!("JOINT j{j}\n{{\nOFFSET 0 1 0\n{channels}"));
            }
            text.push_str(&"}\n".repeat(DEPTH));
            text.push_str("MOTION\nFrames: 1\nFrame Time: 0.1\n");
            text.push_str(&"0 ".repeat(3 * DEPTH));
            text.push('\n');
            Some(Case::new("100k nested BVH joints", "deep.bvh", text, Expect::Either))
        }
        "gltf-nodes" => {
            let bytes = glb::edited(&glb::Rig::default(), |j, _| {
                j["nodes"][2]["children"] = serde_json::json!([3]);
                if let Some(nodes) = j["nodes"].as_array_mut() {
                    for k in 3..3 + DEPTH {
                        let children = if k + 1 < 3 + DEPTH { vec![k + 1] } else { vec![] };
                        nodes.push(serde_json::json!({ "children": children }));
                    }
                }
            });
            Some(Case::new("100k nested glTF nodes", "deep.glb", bytes, Expect::Either))
        }
        "gltf-json" => {
            let mut text = String::from("{\"asset\":{\"version\":\"2.0\"},\"extras\":");
            text.push_str(&"[".repeat(DEPTH));
            text.push_str(&"]".repeat(DEPTH));
            text.push('}');
            Some(Case::new("100k nested JSON arrays", "deep.gltf", text, Expect::Either))
        }
        _ => None,
    }
}

const DEEP_CASES: [&str; 3] = ["bvh", "gltf-nodes", "gltf-json"];
const DEEP_ENV: &str = "RIGML_BAD_INPUT_DEEP_CASE";
/// A 100k-node chain once took 34 s in the glTF cycle check (O(depth²)); linear code takes ~1 s.
const DEEP_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(20);

/// Child half of [`deeply_nested_input_does_not_overflow_the_stack`]: does nothing unless the
/// parent set `RIGML_BAD_INPUT_DEEP_CASE`, then loads that one case.
#[test]
fn deep_case_child() {
    let Ok(name) = std::env::var(DEEP_ENV) else {
        return;
    };
    let case = deep_case(&name).unwrap_or_else(|| panic!("unknown deep case {name}"));
    let dir = temp_dir();
    let mut report = Report::default();
    report.run(dir.path(), &case);
    report.finish(&format!("deep case {name}"));
}

#[test]
fn deeply_nested_input_does_not_overflow_the_stack() {
    let exe = std::env::current_exe().expect("test binary path");
    let mut failures = Vec::new();
    for name in DEEP_CASES {
        let started = std::time::Instant::now();
        let out = std::process::Command::new(&exe)
            .args(["deep_case_child", "--exact", "--nocapture", "--test-threads=1"])
            .env(DEEP_ENV, name)
            .output()
            .expect("run the test binary as a child");
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let tail: String = stderr
                .chars()
                .rev()
                .take(1500)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            failures.push(format!("[{name}] child exited with {}: …{tail}", out.status));
        }
        // Each case is a few MB; a reader linear in its input takes a second or two here.
        let took = started.elapsed();
        if took > DEEP_TIME_LIMIT {
            failures.push(format!("[{name}] took {took:?}: work grows faster than the input?"));
        }
    }
    assert!(failures.is_empty(), "deep cases failed:\n{}", failures.join("\n"));
}

// ---- seeds for the fuzz targets ----

/// Writes every hand-made case into `$RIGML_FUZZ_SEEDS/<target>/` for `fuzz/seed_corpus.sh`
/// (targets `gltf`, `bvh`, `obj`); does nothing when that variable is unset.
#[test]
fn export_fuzz_seeds() {
    let Some(root) = std::env::var_os("RIGML_FUZZ_SEEDS").map(PathBuf::from) else {
        return;
    };
    let mut cases = vec![
        Case::new("intact rig", "rig.glb", glb::Rig::default().glb(), Expect::Ok),
        Case::new("intact obj", "mesh.obj", cases_text::OBJ, Expect::Ok),
        Case::new("intact bvh", "walk.bvh", cases_text::BVH, Expect::Ok),
    ];
    cases.extend(cases_gltf::data_cases());
    cases.extend(cases_gltf::document_cases());
    cases.extend(cases_gltf::container_cases());
    cases.extend(cases_text::obj_cases());
    cases.extend(cases_text::bvh_cases());
    for case in cases {
        let target = match case.file_name.rsplit('.').next() {
            Some("glb") => "gltf",
            Some("obj") => "obj",
            Some("bvh") => "bvh",
            _ => continue,
        };
        let name: String = case
            .label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let dir = root.join(target);
        std::fs::create_dir_all(&dir).expect("seed folder");
        std::fs::write(dir.join(name), &case.bytes).expect("write seed");
    }
}
