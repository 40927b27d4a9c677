//! The shared data set, read through `manifest.tsv` (never through hard-coded file lists).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One manifest row, by column name.
pub struct Row {
    fields: HashMap<String, String>,
}

impl Row {
    /// The value of a column ("" when the column is missing or empty).
    pub fn get(&self, column: &str) -> &str {
        self.fields.get(column).map(String::as_str).unwrap_or("")
    }

    /// A `key=value` item of the `notes` column (items are separated by `;`).
    pub fn note(&self, key: &str) -> Option<&str> {
        self.get("notes")
            .split(';')
            .filter_map(|item| item.trim().split_once('='))
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }
}

/// The data folder: env `RIGML_DATA`, else the first `shared/data` holding a manifest beside the
/// workspace or one of its ancestors (`<workspace>/../shared/data` in CI, a worktree's parents
/// locally). `None` when there is no data; the caller decides whether that is a failure.
pub fn data_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("RIGML_DATA") {
        return Some(PathBuf::from(dir));
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared").join("data"))
        .find(|d| d.join("manifest.tsv").is_file())
}

/// All rows of `manifest.tsv` in `dir`.
pub fn rows(dir: &Path) -> Vec<Row> {
    let path = dir.join("manifest.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|line| Row {
            fields: header
                .iter()
                .zip(line.split('\t'))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        })
        .collect()
}

/// The data folder, or `None` after printing a skip notice. In CI (env `CI` set) missing data is
/// a failure, because CI promises the data beside the checkout.
pub fn data_or_skip(test: &str) -> Option<PathBuf> {
    match data_dir() {
        Some(dir) => Some(dir),
        None if std::env::var_os("CI").is_some() => {
            panic!("{test}: shared data not found (set RIGML_DATA)")
        }
        None => {
            eprintln!("{test}: SKIPPED, shared data not found (set RIGML_DATA)");
            None
        }
    }
}
