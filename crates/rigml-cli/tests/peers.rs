//! The peers' corpus (`../shared/data/peers`): 252 files from other readers' own test suites
//! (ufbx, the Khronos validator and samples, glTF-Blender-IO, magnum, assimp, tinygltf,
//! tinyobjloader, BVH parsers), each with what a careful reader must do: `load`, `load-warn`
//! (load and list what was repaired or left out) or `refuse` (exit 1 with one
//! `error: FILE: place: problem` line). The corpus's own `check.py` runs this binary over every
//! row — `inspect --json`, then `convert` to GLB and the Khronos validator for every file that
//! loads — with a 60 s limit per command, and exits 1 listing each row that misses.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Command;

#[test]
fn every_peers_row_meets_its_expectation() {
    let check = common::data_dir().join("peers").join("check.py");
    assert!(check.is_file(), "{} is missing", check.display());
    let ci = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci");
    let mut command = Command::new("python3");
    command.arg(&check).arg(env!("CARGO_BIN_EXE_rigml"));
    if ci.join("node_modules/gltf-validator").is_dir() {
        command.arg("--validator").arg(&ci);
    } else {
        let notice = format!(
            "gltf-validator is not installed in {} (run `cd .ci && npm install`): GLBs not validated",
            ci.display()
        );
        assert!(std::env::var_os("CI").is_none(), "{notice}");
        eprintln!("NOTE: {notice}");
    }
    let out = command.output().expect("python3 runs the peers' check.py");
    let report = String::from_utf8_lossy(&out.stdout);
    println!("{report}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "rows of peers.tsv that rigml does not meet:\n{report}"
    );
    let tsv = std::fs::read_to_string(check.with_file_name("peers.tsv")).expect("peers.tsv beside check.py");
    let rows = tsv.lines().skip(1).filter(|l| !l.trim().is_empty()).count();
    assert!(rows > 0, "peers.tsv has no rows");
    assert!(report.contains(&format!("{rows} of {rows} rows")), "{report}");
}
