//! Shared by integration tests: the data folder and the rows of `manifest.tsv`.
//! (Other test files may copy this module; keep it dependency-free.)
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// `$RIGML_DATA`, else the first `shared/data` holding `manifest.tsv` above this crate (in CI:
/// `../shared/data` beside the checkout).
pub fn data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("RIGML_DATA") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/data"))
        .find(|d| d.join("manifest.tsv").is_file())
        .expect("data set not found: set RIGML_DATA to the folder holding manifest.tsv")
}

/// One manifest row, by column name.
#[derive(Debug, Clone)]
pub struct Row {
    pub fields: HashMap<String, String>,
}

impl Row {
    /// A column's text ("" when blank or absent).
    pub fn get(&self, column: &str) -> &str {
        self.fields.get(column).map(String::as_str).unwrap_or("")
    }

    /// A numeric column, `None` when blank.
    pub fn count(&self, column: &str) -> Option<usize> {
        self.get(column).trim().parse().ok()
    }

    pub fn id(&self) -> &str {
        self.get("id")
    }

    /// The asset's absolute path.
    pub fn path(&self) -> PathBuf {
        data_dir().join(self.get("path"))
    }
}

/// All rows of `manifest.tsv`; panics with a clear message when it cannot be read (the tests
/// need the data).
pub fn manifest() -> Vec<Row> {
    let file = data_dir().join("manifest.tsv");
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e} (set RIGML_DATA to the data folder)", file.display()));
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap_or_default()
        .split('\t')
        .map(str::to_string)
        .collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| Row {
            fields: header.iter().cloned().zip(l.split('\t').map(str::to_string)).collect(),
        })
        .collect()
}

impl std::ops::Index<&str> for Row {
    type Output = String;

    /// A column's text; panics on a column the manifest does not have.
    fn index(&self, column: &str) -> &String {
        self.fields
            .get(column)
            .unwrap_or_else(|| panic!("manifest has no column {column}"))
    }
}

/// Rows whose `column` equals `value`.
pub fn rows_where(column: &str, value: &str) -> Vec<Row> {
    manifest().into_iter().filter(|r| r.get(column) == value).collect()
}

/// Rows whose `format` column is one of `formats`.
pub fn rows_with_format(formats: &[&str]) -> Vec<Row> {
    manifest()
        .into_iter()
        .filter(|r| formats.contains(&r.get("format")))
        .collect()
}

/// The file of the manifest row `id`; panics when the manifest has no such row.
pub fn asset(id: &str) -> PathBuf {
    manifest()
        .into_iter()
        .find(|r| r.id() == id)
        .unwrap_or_else(|| panic!("manifest has no row {id}"))
        .path()
}

/// Every file under `dir` (recursively) whose extension is `ext` (case-insensitive): the data
/// set's own count of a kind of file, against which the manifest's rows are checked.
pub fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for entry in entries {
            let path = entry.unwrap_or_else(|e| panic!("{}: {e}", d.display())).path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| x.eq_ignore_ascii_case(ext))
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}
