//! Running the `rigml` binary from integration tests, and what a user must see when it fails.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Run `rigml` with `args` in `cwd`.
pub fn rigml(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rigml"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the rigml binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn assert_ok(o: &Output) {
    assert!(o.status.success(), "rigml failed: {}\n{}", stderr(o), stdout(o));
}

/// A failure the way users should see it: exit status 1, one `error: <file>: …` message that
/// names `file`, and no panic.
pub fn assert_clean_failure(o: &Output, file: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    assert!(err.starts_with("error: "), "stderr: {err}");
    assert!(err.contains(file), "stderr does not name {file}: {err}");
    assert!(!err.contains("panicked"), "stderr: {err}");
}
