//! The asset list: rows of `shared/data/manifest.tsv`, the only source of split membership
//! (METRICS.md §1). Columns are found by header name, so added columns do not break reading.

use crate::EvalError;
use std::path::{Path, PathBuf};

/// One manifest row. Counts are `None` where the manifest leaves them empty.
#[derive(Debug, Clone, PartialEq)]
pub struct AssetRow {
    /// Stable asset id (also the seed of the random poses, METRICS.md §3).
    pub id: String,
    /// `character`, `motion` or `sequence`.
    pub kind: String,
    /// `train`, `val` or `test`.
    pub split: String,
    /// The asset's file, resolved against the manifest's folder.
    pub path: PathBuf,
    /// Format label as written in the manifest (`glb`, `fbx`, `bvh`, ...).
    pub format: String,
    pub vertices: Option<usize>,
    pub triangles: Option<usize>,
    pub joints: Option<usize>,
    pub clips: Option<usize>,
    pub frames: Option<usize>,
    pub notes: String,
}

/// A parsed manifest.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Folder the manifest's relative paths start from.
    pub root: PathBuf,
    pub rows: Vec<AssetRow>,
}

const REQUIRED: [&str; 5] = ["id", "kind", "split", "path", "format"];

impl Dataset {
    /// Read the manifest at `path`, or `path/manifest.tsv` when `path` is a folder.
    pub fn open(path: &Path) -> Result<Dataset, EvalError> {
        let manifest = if path.is_dir() {
            path.join("manifest.tsv")
        } else {
            path.to_path_buf()
        };
        let text = std::fs::read_to_string(&manifest).map_err(|source| EvalError::File {
            path: manifest.clone(),
            source,
        })?;
        let root = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
        Dataset::parse(&text, &manifest, &root)
    }

    /// Parse manifest text; `manifest` names the file in errors, `root` resolves paths.
    pub fn parse(text: &str, manifest: &Path, root: &Path) -> Result<Dataset, EvalError> {
        let err = |line: usize, message: String| EvalError::Manifest {
            path: manifest.to_path_buf(),
            line,
            message,
        };
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let Some((_, header)) = lines.next() else {
            return Err(err(1, "empty manifest (no header line)".into()));
        };
        let columns: Vec<&str> = header.split('\t').map(str::trim).collect();
        let find = |name: &str| columns.iter().position(|c| *c == name);
        for name in REQUIRED {
            if find(name).is_none() {
                return Err(err(1, format!("header has no `{name}` column")));
            }
        }
        let mut rows = Vec::new();
        for (i, line) in lines {
            let line_no = i + 1;
            let fields: Vec<&str> = line.split('\t').collect();
            if fields.len() != columns.len() {
                return Err(err(
                    line_no,
                    format!("{} fields, but the header has {}", fields.len(), columns.len()),
                ));
            }
            let get = |name: &str| find(name).and_then(|c| fields.get(c)).map_or("", |s| s.trim());
            let count = |name: &str| -> Result<Option<usize>, EvalError> {
                let s = get(name);
                // The manifest writes `n/a(not parsed)` where its builder could not count.
                if s.is_empty() || s.starts_with("n/a") {
                    return Ok(None);
                }
                s.parse()
                    .map(Some)
                    .map_err(|_| err(line_no, format!("column `{name}`: `{s}` is not a count")))
            };
            let id = get("id");
            if id.is_empty() {
                return Err(err(line_no, "empty id".into()));
            }
            if rows.iter().any(|r: &AssetRow| r.id == id) {
                return Err(err(line_no, format!("duplicate id `{id}`")));
            }
            rows.push(AssetRow {
                id: id.to_string(),
                kind: get("kind").to_string(),
                split: get("split").to_string(),
                path: root.join(get("path")),
                format: get("format").to_string(),
                vertices: count("vertices")?,
                triangles: count("triangles")?,
                joints: count("joints")?,
                clips: count("clips")?,
                frames: count("frames")?,
                notes: get("notes").to_string(),
            });
        }
        Ok(Dataset {
            root: root.to_path_buf(),
            rows,
        })
    }

    /// Rows of the given kind and split (`None` = any), in manifest order.
    pub fn select(&self, kind: Option<&str>, split: Option<&str>) -> Vec<&AssetRow> {
        self.rows
            .iter()
            .filter(|r| kind.is_none_or(|k| r.kind == k) && split.is_none_or(|s| r.split == s))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "id\tkind\tsplit\tpath\tformat\tvertices\tnotes\n\
        a\tcharacter\tval\tc/a.glb\tglb\t12\tx\n\
        b\tmotion\ttest\tm/b.bvh\tbvh\t\t\n";

    #[test]
    fn parses_and_filters() {
        let d = Dataset::parse(TEXT, Path::new("m.tsv"), Path::new("/data")).unwrap();
        assert_eq!(d.rows.len(), 2);
        assert_eq!(d.rows[0].path, PathBuf::from("/data/c/a.glb"));
        assert_eq!(d.rows[0].vertices, Some(12));
        assert_eq!(d.rows[1].vertices, None);
        let na = "id\tkind\tsplit\tpath\tformat\tvertices\nx\tsequence\ttrain\tp\tabc\tn/a(not parsed)\n";
        assert_eq!(
            Dataset::parse(na, Path::new("m.tsv"), Path::new("")).unwrap().rows[0].vertices,
            None
        );
        assert_eq!(d.select(Some("character"), Some("val")).len(), 1);
        assert_eq!(d.select(None, Some("train")).len(), 0);
    }

    #[test]
    fn bad_lines_name_the_line() {
        let bad = "id\tkind\tsplit\tpath\tformat\tvertices\nx\tcharacter\tval\tp\tglb\tmany\n";
        let e = Dataset::parse(bad, Path::new("m.tsv"), Path::new("")).unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        let short = "id\tkind\tsplit\tpath\tformat\nx\tcharacter\n";
        assert!(Dataset::parse(short, Path::new("m.tsv"), Path::new("")).is_err());
        assert!(Dataset::parse("id\tkind\n", Path::new("m.tsv"), Path::new("")).is_err());
    }
}
