//! Writing a report directory: `per_asset.csv`, `per_family.csv`, `timing.csv`, `summary.md`
//! (with its per-family tables and, when drawn, the pictures' section) and the plots. The one
//! place that puts an evaluation on disk; every file is replaced atomically, and an existing
//! report only with `force`.

use crate::families::per_family_csv;
use crate::pictures::{markdown, Picture};
use crate::plots::write_plots;
use crate::report::Report;
use crate::summary::summary_md;
use crate::EvalError;
use std::path::{Path, PathBuf};

/// Write `per_asset.csv`, `per_family.csv`, `timing.csv`, `summary.md` and the plots of
/// `report` into `dir` (created if missing). Returns the files written.
pub fn write_report(report: &Report, dir: &Path, force: bool) -> Result<Vec<PathBuf>, EvalError> {
    write_report_with_pictures(report, dir, force, &[])
}

/// [`write_report`], with `summary.md` ending in a section that links `pictures` (drawn into
/// `dir` by [`crate::pictures::write_pictures`]).
pub fn write_report_with_pictures(
    report: &Report,
    dir: &Path,
    force: bool,
    pictures: &[Picture],
) -> Result<Vec<PathBuf>, EvalError> {
    std::fs::create_dir_all(dir).map_err(|source| EvalError::File {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    for (name, text) in [
        ("per_asset.csv", report.per_asset_csv()),
        ("per_family.csv", per_family_csv(report)),
        ("timing.csv", report.timing_csv()),
        ("summary.md", summary_md(report) + &markdown(pictures)),
    ] {
        let path = dir.join(name);
        rigml_io::atomic::write(&path, text.as_bytes(), force)?;
        written.push(path);
    }
    written.extend(write_plots(report, dir, force)?);
    Ok(written)
}
