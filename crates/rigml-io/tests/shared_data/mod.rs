//! Finding the shared test data and reading its manifest (`shared/data/manifest.tsv`), for
//! integration tests and benches. Assets are always reached through the manifest, never by
//! hard-coded lists.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One manifest row: column name → value (blank columns are empty strings).
#[derive(Debug, Clone)]
pub struct Row {
    pub fields: HashMap<String, String>,
}

impl Row {
    /// The value of `column`, or "" when the column is absent.
    pub fn get(&self, column: &str) -> &str {
        self.fields.get(column).map_or("", String::as_str)
    }

    /// A numeric column (None when blank or not a number, e.g. `n/a(not parsed)`).
    pub fn number(&self, column: &str) -> Option<u64> {
        self.get(column).parse().ok()
    }
}

/// The folder holding `manifest.tsv`: `$RIGML_DATA` if set, else the first `shared/data`
/// found beside this crate or one of its ancestors (the checkout sits beside `shared/`).
/// Panics with a clear message when it cannot be found: these tests need the real data.
pub fn data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("RIGML_DATA") {
        return PathBuf::from(dir);
    }
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .map(|a| a.join("shared").join("data"))
        .find(|d| d.join("manifest.tsv").is_file())
        .unwrap_or_else(|| {
            panic!(
                "no shared/data/manifest.tsv beside {} or its ancestors; set RIGML_DATA to the data folder",
                here.display()
            )
        })
}

/// All manifest rows, with their `path` column resolved against the data folder.
pub fn manifest() -> Vec<Row> {
    let dir = data_dir();
    let path = dir.join("manifest.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut fields: HashMap<String, String> = header
                .iter()
                .zip(line.split('\t'))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            if let Some(p) = fields.get_mut("path") {
                *p = dir.join(&*p).to_string_lossy().into_owned();
            }
            Row { fields }
        })
        .collect()
}

/// Character rows (mesh + skeleton + skin) of the manifest.
pub fn characters() -> Vec<Row> {
    manifest()
        .into_iter()
        .filter(|r| r.get("kind") == "character")
        .collect()
}
