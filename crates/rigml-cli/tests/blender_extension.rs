//! The Blender extension (`blender/rigml_extension` with the rigml wheel bundled), tested in
//! headless Blender (the `bpy` package 5.0.1) by `blender/tests/extension_check.py`: the zip
//! built by `blender/build_extension.py` installs into a fresh user folder; Auto Weights on a
//! val character imported with Blender's glTF importer gives the weights `rigml skin` gives for
//! the same mesh and bones (1e-5), keeps locked groups untouched and gives non-deforming bones
//! no weight; a mesh under a turned, scaled armature gets the weights of `rigml skin` on the
//! world-space data and of the same scene with its transforms applied; bad selections are
//! cancelled with a report; Rig Mesh makes an armature that weights every vertex.
//!
//! Needs `RIGML_BPY` (a Python with bpy) and the wheel (`RIGML_WHEEL`, else the newest
//! `target/wheels/rigml-*.whl`; `.ci/run` builds it). Without them the test fails under CI and
//! otherwise says so and passes without checking anything.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn wheel(root: &Path) -> Option<PathBuf> {
    if let Some(w) = std::env::var_os("RIGML_WHEEL") {
        return Some(PathBuf::from(w));
    }
    let dir = root.join("target/wheels");
    let mut wheels: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("rigml-"))
                && p.extension().is_some_and(|e| e == "whl")
        })
        .collect();
    wheels.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
    wheels.pop()
}

#[test]
fn the_extension_weights_like_rigml_skin_in_blender() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (Some(bpy), Some(wheel)) = (std::env::var_os("RIGML_BPY"), wheel(&root)) else {
        let notice = "RIGML_BPY (a Python with bpy) or the rigml wheel (target/wheels) is missing: the Blender extension is not tested";
        assert!(std::env::var_os("CI").is_none(), "{notice}");
        eprintln!("NOTE: {notice}");
        return;
    };
    let work = tempfile::tempdir().expect("a temporary folder");
    let built = Command::new(&bpy)
        .arg(root.join("blender/build_extension.py"))
        .arg("--wheel")
        .arg(&wheel)
        .arg("--out")
        .arg(work.path())
        .output()
        .expect("RIGML_BPY runs build_extension.py");
    assert!(
        built.status.success(),
        "building the extension failed: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let zip = String::from_utf8_lossy(&built.stdout).trim().to_string();
    assert!(Path::new(&zip).is_file(), "no zip at {zip:?}");

    let character = common::manifest()
        .into_iter()
        .find(|r| r.get("kind") == "character" && r.get("split") == "val" && r.get("format") == "glb")
        .expect("a val GLB character in the manifest");
    let user = work.path().join("blender-user");
    std::fs::create_dir_all(&user).expect("a Blender user folder");
    let out = Command::new(&bpy)
        .arg(root.join("blender/tests/extension_check.py"))
        .arg("--zip")
        .arg(&zip)
        .arg("--character")
        .arg(character.path())
        .arg("--rigml")
        .arg(env!("CARGO_BIN_EXE_rigml"))
        .env("BLENDER_USER_RESOURCES", &user)
        .output()
        .expect("RIGML_BPY runs extension_check.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report = stdout.find("\n{").map_or(&stdout[..], |i| &stdout[i + 1..]);
    println!("{report}");
    assert!(
        out.status.success(),
        "the extension failed a check on {}:\n{report}\n{}",
        character.id(),
        String::from_utf8_lossy(&out.stderr)
    );
}
