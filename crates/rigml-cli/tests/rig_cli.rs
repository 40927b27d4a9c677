//! End-to-end tests of `rigml rig` on a bare OBJ exported from a real character, and of
//! `rigml eval --methods rig-auto`.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;
mod run;

use run::{assert_clean_failure, assert_ok, rigml, stderr};
use serde_json::Value;
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn rig_a_bare_obj_into_a_skinned_glb_and_refuse_to_clobber() {
    let dir = tempfile::tempdir().unwrap();
    // A bare mesh: the T-rex of the val split exported to OBJ (mesh only).
    let source = common::asset("quaternius-dinosaurs-trex");
    assert_ok(&rigml(dir.path(), &["convert", s(&source), "trex.obj"]));
    let args = ["rig", "trex.obj", "-o", "trex.glb", "--max-influences", "3", "--json"];
    let o = rigml(dir.path(), &args);
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["template"], "auto");
    assert_eq!(v["skin"], "learned");
    assert_eq!(v["placement"], Value::Null, "an OBJ is stored where it is shown");
    assert!(v["seconds"]["place"].as_f64().unwrap() > 0.0);
    let rigged = rigml_io::load(&dir.path().join("trex.glb")).unwrap();
    let joints = rigged.skeleton.joint_count();
    assert_eq!(v["joints"].as_u64(), Some(joints as u64));
    assert!(joints >= 10, "a T-rex needs legs, arms, tail and head: {joints} joints");
    assert_eq!(rigged.skeleton.names[0], "root");
    // Symmetric: left/right pairs.
    assert!(rigged.skeleton.names.iter().any(|n| n.ends_with("_L")));
    let skin = rigged.skin.as_ref().expect("the GLB carries the skin");
    assert_eq!(skin.vertex_count(), rigged.mesh.vertex_count());
    assert!(skin.influences_max() <= 3);
    for (v, row) in skin.rows().enumerate() {
        let sum: f32 = row.iter().map(|i| i.weight).sum();
        assert!((sum - 1.0).abs() < 1e-3, "vertex {v}: weights sum to {sum}");
    }
    // Again without --force: refused before any work, the file named, the file kept.
    let before = std::fs::read(dir.path().join("trex.glb")).unwrap();
    let o = rigml(dir.path(), &args);
    assert_clean_failure(&o, "trex.glb");
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read(dir.path().join("trex.glb")).unwrap(), before);
    // With --force and another solver it is replaced.
    let o = rigml(
        dir.path(),
        &["rig", "trex.obj", "-o", "trex.glb", "--skin", "nearest", "--force"],
    );
    assert_ok(&o);
    assert!(run::stdout(&o).contains("joints placed (auto)"), "{}", run::stdout(&o));
}

/// The mesh as the file shows it: skinned by its rest pose.
fn shown(c: &rigml_core::Character) -> Vec<glam::Vec3> {
    let m = rigml_core::skinning_matrices(&c.skeleton, &rigml_core::Pose::rest(&c.skeleton)).unwrap();
    rigml_core::lbs(&c.mesh.positions, c.skin.as_ref().unwrap(), &m)
}

#[test]
fn rig_shows_the_mesh_where_the_input_file_did() {
    // Blender's export of a Quaternius character: Z-up vertices under an armature turned -90°
    // about X and scaled 100x. The rigged file must not come out 1/100 the size, on its back.
    let dir = tempfile::tempdir().unwrap();
    let source = common::asset("quaternius-modular-men-king");
    let o = rigml(dir.path(), &["rig", s(&source), "-o", "king.glb", "--json"]);
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let scale = v["placement"]["scale"].as_f64().expect("a placement is reported");
    assert!((scale - 100.0).abs() < 0.01, "{v}");
    let artist = rigml_io::load(&source).unwrap();
    let rigged = rigml_io::load(&dir.path().join("king.glb")).unwrap();
    let (a, b) = (shown(&artist), shown(&rigged));
    let size = artist.size() * scale as f32;
    let worst = a.iter().zip(&b).map(|(p, q)| p.distance(*q)).fold(0.0f32, f32::max);
    assert!(worst < 1e-4 * size, "shown {worst} away (size {size})");
    // The vertices themselves are written as they were stored.
    assert_eq!(rigged.mesh.positions.len(), artist.mesh.positions.len());
    let stored = artist.mesh.positions.iter().zip(&rigged.mesh.positions);
    assert!(stored.map(|(p, q)| p.distance(*q)).fold(0.0f32, f32::max) < 1e-6 * artist.size());
}

/// Where each attachment's vertices show, on average, in the rest pose.
fn attachment_middles(c: &rigml_core::Character) -> Vec<(String, glam::Vec3)> {
    let rest = c.skeleton.rest_world();
    c.attachments
        .iter()
        .map(|a| {
            let m = rest[a.joint] * a.local;
            let sum: glam::Vec3 = a.mesh.positions.iter().map(|p| m.transform_point3(*p)).sum();
            (a.name.clone(), sum / a.mesh.positions.len() as f32)
        })
        .collect()
}

#[test]
fn rig_keeps_the_props_a_skeleton_carried() {
    // KayKit's mage: a hat, a cape, a wand, a staff and two spellbooks hang from its bones.
    let dir = tempfile::tempdir().unwrap();
    let source = common::asset("kaykit1-mage");
    let o = rigml(dir.path(), &["rig", s(&source), "-o", "mage.glb", "--json"]);
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let hung: Vec<(&str, &str)> = v["attachments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].as_str().unwrap(), a["joint"].as_str().unwrap()))
        .collect();
    assert!(hung.contains(&("Mage_Hat", "Head")), "{hung:?}");
    assert!(hung.contains(&("1H_Wand", "RightHand")), "{hung:?}");
    let artist = rigml_io::load(&source).unwrap();
    let rigged = rigml_io::load(&dir.path().join("mage.glb")).unwrap();
    assert_eq!(rigged.attachments.len(), 6);
    // The mage's rest pose is its bind pose: every prop shows where it did.
    let after = attachment_middles(&rigged);
    for (name, a) in attachment_middles(&artist) {
        let b = after.iter().find(|x| x.0 == name).map(|x| x.1).expect("kept");
        assert!(a.distance(b) < 1e-4 * artist.size(), "{name}: {a} vs {b}");
    }
}

#[test]
fn rig_gives_a_quadruped_a_ground_root_and_weightless_pole_targets_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let source = common::asset("quaternius-animals-stag");
    let poles = [
        "front_leg_pole_L",
        "front_leg_pole_R",
        "back_leg_pole_L",
        "back_leg_pole_R",
    ];
    let o = rigml(dir.path(), &["rig", s(&source), "-o", "stag.glb", "--poles", "--json"]);
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v["joint_names"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let rigged = rigml_io::load(&dir.path().join("stag.glb")).unwrap();
    let skin = rigged.skin.as_ref().unwrap();
    for pole in poles {
        assert!(names.contains(&pole), "no {pole}: {names:?}");
        let j = rigged.skeleton.index_of(pole).unwrap();
        assert_eq!(rigged.skeleton.parents[j], Some(0), "{pole} hangs from the ground root");
        assert!(
            skin.rows().flatten().all(|i| i.joint as usize != j),
            "{pole} carries weight"
        );
    }
    // The ground root: weightless, at the model's origin (on the floor between the feet),
    // above the body.
    assert_eq!(rigged.skeleton.names[0], "root");
    assert_eq!(rigged.skeleton.names[1], "body");
    assert_eq!(rigged.skeleton.parents[1], Some(0));
    assert!(
        skin.rows().flatten().all(|i| i.joint != 0),
        "the ground root carries weight"
    );
    // The antlers hang from a joint of the head, not from a control joint.
    for a in v["attachments"].as_array().unwrap() {
        let joint = a["joint"].as_str().unwrap();
        assert!(!joint.contains("pole") && joint != "root", "{a}");
    }
    let o = rigml(
        dir.path(),
        &["rig", s(&source), "-o", "bare.glb", "--no-ground-root", "--json"],
    );
    assert_ok(&o);
    let w: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(w["joints"].as_u64().unwrap() + 5, v["joints"].as_u64().unwrap());
    let bare: Vec<&str> = w["joint_names"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(bare[0], "body");
    assert!(!bare.iter().any(|n| n.contains("pole") || *n == "root"), "{bare:?}");
}

#[test]
fn rig_bad_input_fails_cleanly_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.obj"), "v 0 0 0\nv 1 0 0\nf 1 2 7\n").unwrap();
    assert_clean_failure(&rigml(dir.path(), &["rig", "broken.obj", "-o", "a.glb"]), "broken.obj");
    assert_clean_failure(
        &rigml(dir.path(), &["rig", "missing.obj", "-o", "a.glb"]),
        "missing.obj",
    );
    // A mesh without extent (every vertex at one point) cannot be rigged.
    std::fs::write(dir.path().join("point.obj"), "v 1 1 1\nv 1 1 1\nv 1 1 1\nf 1 2 3\n").unwrap();
    let o = rigml(
        dir.path(),
        &["rig", "point.obj", "-o", "point.glb", "--skin", "nearest"],
    );
    assert_clean_failure(&o, "point.obj");
    assert!(stderr(&o).contains("extent"), "{}", stderr(&o));
    assert!(!dir.path().join("point.glb").exists());
    // A shape that is no humanoid, rigged with the humanoid template: a clear refusal naming the
    // file, not a panic and no output.
    let cube = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n\
                f 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\n\
                f 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n";
    std::fs::write(dir.path().join("box.obj"), cube).unwrap();
    let o = rigml(
        dir.path(),
        &[
            "rig",
            "box.obj",
            "-o",
            "y.glb",
            "--template",
            "humanoid",
            "--skin",
            "nearest",
        ],
    );
    assert_clean_failure(&o, "box.obj");
    assert!(stderr(&o).contains("humanoid"), "{}", stderr(&o));
    assert!(!dir.path().join("y.glb").exists());
    // Only glTF output.
    let o = rigml(dir.path(), &["rig", "point.obj", "-o", "y.obj"]);
    assert_clean_failure(&o, "y.obj");
}

/// CSV fields of one line (quoted fields may hold commas).
fn fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

#[test]
fn eval_scores_rig_auto_with_skeleton_metrics() {
    let dir = tempfile::tempdir().unwrap();
    // A one-row manifest: the small val figure.
    let rows = common::manifest();
    let row = rows.iter().find(|r| r.id() == "khronos-riggedfigure").unwrap();
    let header: Vec<&str> = row.fields.keys().map(String::as_str).collect();
    let line: Vec<String> = header
        .iter()
        .map(|h| {
            if *h == "path" {
                s(&row.path()).to_string()
            } else {
                row.get(h).to_string()
            }
        })
        .collect();
    let manifest = format!("{}\n{}\n", header.join("\t"), line.join("\t"));
    std::fs::write(dir.path().join("manifest.tsv"), manifest).unwrap();
    let o = rigml(
        dir.path(),
        &[
            "eval",
            "--data",
            "manifest.tsv",
            "--split",
            "val",
            "--methods",
            "rig-auto",
            "-o",
            "report",
        ],
    );
    assert_ok(&o);
    let csv = std::fs::read_to_string(dir.path().join("report/per_asset.csv")).unwrap();
    let mut lines = csv.lines();
    let header = fields(lines.next().unwrap());
    let values = fields(lines.next().unwrap());
    let col = |name: &str| values[header.iter().position(|h| h == name).unwrap()].as_str();
    assert_eq!(col("method"), "rig-auto");
    assert_eq!(col("failed"), "false");
    let cd: f64 = col("cd_j2j").parse().unwrap();
    assert!(cd > 0.0 && cd < 0.1, "CD-J2J {cd}");
    let summary = std::fs::read_to_string(dir.path().join("report/summary.md")).unwrap();
    assert!(summary.contains("## cd_j2j"), "{summary}");
    let o = rigml(
        dir.path(),
        &["eval", "--data", "manifest.tsv", "--methods", "rig-nothing"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("rig-nothing"), "{}", stderr(&o));
}

#[test]
fn a_studio_rig_library_rigs_a_mesh_shaped_like_one_of_its_characters() {
    let dir = tempfile::tempdir().unwrap();
    // A studio's rigs: two train characters, written as a manifest of its own.
    let mut manifest = "id\tkind\tsplit\tpath\tformat\n".to_string();
    for id in ["quaternius-cute-fish-goldfish", "quaternius-animals-fox"] {
        let row = common::rows_where("id", id);
        let row = row.first().unwrap_or_else(|| panic!("{id} in the manifest"));
        manifest += &format!(
            "{id}\tcharacter\ttrain\t{}\t{}\n",
            row.path().display(),
            row.get("format")
        );
    }
    std::fs::write(dir.path().join("manifest.tsv"), manifest).unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/skeleton-default.safetensors");
    let into = [
        "train-skeleton",
        "--data",
        "manifest.tsv",
        "--library-into",
        s(&shipped),
        "-o",
        "studio.safetensors",
        "--json",
    ];
    let o = rigml(dir.path(), &into);
    assert_ok(&o);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rigs"], 2, "{v}");
    // Not clobbered without --force.
    let o = rigml(dir.path(), &into);
    assert!(!o.status.success() && stderr(&o).contains("exists"), "{}", stderr(&o));

    // The val koi, a bare mesh, takes the goldfish's rig with its artist's joint names.
    let koi = common::asset("quaternius-cute-fish-koi");
    assert_ok(&rigml(dir.path(), &["convert", s(&koi), "koi.obj"]));
    let rig = |template: &str, out: &str| {
        let args = [
            "rig",
            "koi.obj",
            "--template",
            template,
            "--skeleton-model",
            "studio.safetensors",
            "-o",
            out,
            "--json",
        ];
        let o = rigml(dir.path(), &args);
        assert_ok(&o);
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let goldfish = rigml_io::load(&common::asset("quaternius-cute-fish-goldfish")).unwrap();
    for template in ["library", "detect"] {
        let v = rig(template, &format!("koi-{template}.glb"));
        assert_eq!(v["template"], "library", "{template}: {v}");
        assert_eq!(v["library_rig"]["id"], "quaternius-cute-fish-goldfish", "{v}");
        assert!(v["library_rig"]["similarity"].as_f64().unwrap() >= 0.6, "{v}");
        let mut names: Vec<&str> = v["joint_names"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let mut artist: Vec<&str> = goldfish.skeleton.names.iter().map(String::as_str).collect();
        names.sort();
        artist.sort();
        assert_eq!(names, artist, "{template}");
        let rigged = rigml_io::load(&dir.path().join(format!("koi-{template}.glb"))).unwrap();
        rigged.validate().unwrap();
        assert!(rigged.skin.is_some());
    }
    // A file that is no skeleton model is refused, naming it.
    let o = rigml(
        dir.path(),
        &[
            "rig",
            "koi.obj",
            "--template",
            "library",
            "-o",
            "x.glb",
            "--skeleton-model",
            "koi.obj",
        ],
    );
    assert_clean_failure(&o, "koi.obj");
}
