//! The Python package: the wheel that `.ci/run` builds from `crates/rigml-py` (maturin) and
//! installs into a fresh venv, tested by `crates/rigml-py/tests` with pytest against this
//! build's `rigml` binary (its weights must equal `rigml skin`'s to 1e-6) and real characters
//! read through the manifest.
//!
//! `RIGML_PYTHON` names the venv's interpreter. Without it the test is skipped with a note,
//! except under CI, where it fails: CI must test the wheel.

#[path = "../../rigml-io/tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Command;

#[test]
fn the_python_package_passes_its_tests() {
    let Some(python) = std::env::var_os("RIGML_PYTHON") else {
        let notice =
            "RIGML_PYTHON is not set (a venv with the rigml wheel installed; see .ci/run): Python tests skipped";
        assert!(std::env::var_os("CI").is_none(), "{notice}");
        eprintln!("NOTE: {notice}");
        return;
    };
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rigml-py/tests");
    let out = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(&tests)
        .env("RIGML_BIN", env!("CARGO_BIN_EXE_rigml"))
        .env("RIGML_DATA", common::data_dir())
        .output()
        .expect("RIGML_PYTHON runs");
    let report = String::from_utf8_lossy(&out.stdout);
    println!("{report}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the Python package's tests failed:\n{report}");
    assert!(!report.contains("skipped"), "a Python test was skipped:\n{report}");
}
