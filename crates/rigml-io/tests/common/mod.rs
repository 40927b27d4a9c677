//! Shared by integration tests: the data folder and the rows of `manifest.tsv`.
//! (Other test files may copy this module; keep it dependency-free.)
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;

/// `$RIGML_DATA`, else `<workspace>/../shared/data`.
pub fn data_dir() -> PathBuf {
    match std::env::var_os("RIGML_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    }
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

/// Rows whose `format` column is one of `formats`.
pub fn rows_with_format(formats: &[&str]) -> Vec<Row> {
    manifest()
        .into_iter()
        .filter(|r| formats.contains(&r.get("format")))
        .collect()
}
