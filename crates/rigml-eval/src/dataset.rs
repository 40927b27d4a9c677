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
    /// The asset's family (see [`family_of`]): the unit generalisation is measured over.
    pub family: String,
}

impl AssetRow {
    /// A character row for a file outside any manifest: no split, no counts, the format from
    /// the extension and the family from the path ([`family_of`]).
    pub fn character(id: &str, path: &Path) -> AssetRow {
        AssetRow {
            id: id.to_string(),
            kind: "character".into(),
            split: String::new(),
            path: path.to_path_buf(),
            format: path
                .extension()
                .map_or(String::new(), |e| e.to_string_lossy().to_lowercase()),
            vertices: None,
            triangles: None,
            joints: None,
            clips: None,
            frames: None,
            notes: String::new(),
            family: family_of(&path.to_string_lossy()),
        }
    }
}

/// The family of a manifest path: the first two folders below `characters/` (the last folder of
/// that name, so an absolute path works too), e.g. `quaternius/ultimate_monsters` or
/// `kaykit/adventurers2`; a file one level down belongs to that folder, e.g. `khronos`. Other
/// paths take the two folders below their top folder. Near relatives (one artist's pack, one rig
/// shared by many meshes) share a family, so a model is judged on families it has never seen by
/// holding whole families out.
pub fn family_of(manifest_path: &str) -> String {
    let folders: Vec<&str> = manifest_path.split(['/', '\\']).filter(|s| !s.is_empty()).collect();
    let folders = &folders[..folders.len().saturating_sub(1)];
    let start = folders.iter().rposition(|f| *f == "characters").map_or(1, |i| i + 1);
    let below_top = folders.get(start..).unwrap_or_default();
    if below_top.is_empty() {
        return folders.join("/");
    }
    below_top[..below_top.len().min(2)].join("/")
}

/// A fold of a family-grouped cross-validation: `index` of `count` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fold {
    pub index: usize,
    pub count: usize,
}

impl std::str::FromStr for Fold {
    type Err = String;

    /// `I/K`, 1-based as a user writes it (`1/5` .. `5/5`).
    fn from_str(s: &str) -> Result<Fold, String> {
        let (i, k) = s
            .split_once('/')
            .ok_or_else(|| format!("fold {s:?}: write it as I/K, e.g. 2/5"))?;
        let parse = |t: &str| {
            t.trim()
                .parse::<usize>()
                .map_err(|_| format!("fold {s:?}: {t:?} is not a whole number"))
        };
        let (i, k) = (parse(i)?, parse(k)?);
        if k < 2 || i == 0 || i > k {
            return Err(format!("fold {s:?}: need 1 <= I <= K and K >= 2"));
        }
        Ok(Fold { index: i - 1, count: k })
    }
}

impl std::fmt::Display for Fold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index + 1, self.count)
    }
}

/// Assign the families of `rows` to `count` folds, balanced by asset count: families from the
/// largest down (ties by name) each go to the fold with the fewest assets so far (ties to the
/// lowest fold). Deterministic, and a family is never split between folds.
pub fn family_folds(rows: &[&AssetRow], count: usize) -> std::collections::BTreeMap<String, usize> {
    let mut sizes: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for r in rows {
        *sizes.entry(r.family.as_str()).or_default() += 1;
    }
    let mut families: Vec<(&str, usize)> = sizes.into_iter().collect();
    families.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut load = vec![0usize; count.max(1)];
    let mut folds = std::collections::BTreeMap::new();
    for (family, size) in families {
        let fold = (0..load.len()).min_by_key(|&f| (load[f], f)).unwrap_or(0);
        load[fold] += size;
        folds.insert(family.to_string(), fold);
    }
    folds
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
        let mut seen = std::collections::HashSet::new();
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
            if !seen.insert(id.to_string()) {
                return Err(err(line_no, format!("duplicate id `{id}`")));
            }
            rows.push(AssetRow {
                family: family_of(get("path")),
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

    /// [`Dataset::select`], then only the rows of the families that [`family_folds`] (over the
    /// selected rows) puts in `fold` (`held_out`), or only the others (`!held_out`): the
    /// training and scoring sets of one fold of a family-grouped cross-validation. A fold that
    /// holds no family (the selection has fewer families than folds) is an error, since holding
    /// out nothing or scoring nothing is never what was meant.
    pub fn select_fold(
        &self,
        kind: Option<&str>,
        split: Option<&str>,
        fold: Fold,
        held_out: bool,
    ) -> Result<Vec<&AssetRow>, EvalError> {
        let rows = self.select(kind, split);
        let folds = family_folds(&rows, fold.count);
        if !folds.values().any(|&f| f == fold.index) {
            return Err(EvalError::Fold {
                fold: fold.to_string(),
                message: format!(
                    "holds no family: the {} rows selected hold only {} families",
                    split.unwrap_or("all"),
                    folds.len()
                ),
            });
        }
        Ok(rows
            .into_iter()
            .filter(|r| (folds.get(&r.family) == Some(&fold.index)) == held_out)
            .collect())
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
    fn families_are_the_two_folders_under_the_top_one() {
        assert_eq!(
            family_of("characters/quaternius/ultimate_monsters/Bunny.glb"),
            "quaternius/ultimate_monsters"
        );
        assert_eq!(
            family_of("characters/kaykit/adventurers2/fbx/Barbarian.fbx"),
            "kaykit/adventurers2"
        );
        assert_eq!(family_of("characters/khronos/Fox.glb"), "khronos");
        assert_eq!(family_of("motion/cmu_131_01_walk.bvh"), "motion");
        assert_eq!(family_of("a.glb"), "");
        assert_eq!(
            family_of("/work/shared/data/characters/quaternius/fish_pack/Whale.glb"),
            "quaternius/fish_pack"
        );
    }

    #[test]
    fn folds_keep_families_whole_and_balance_assets() {
        let mut text = String::from("id\tkind\tsplit\tpath\tformat\n");
        // Family sizes 5, 3, 2, 2, 1, largest first to the lighter fold: f5 -> 0, f3 -> 1,
        // f2a -> 1 (3 < 5), f2b -> 0 (a tie goes to the lower fold), f1 -> 1: 7 and 6 assets.
        for (family, n) in [("f5", 5), ("f3", 3), ("f2a", 2), ("f2b", 2), ("f1", 1)] {
            for i in 0..n {
                text += &format!("{family}-{i}\tcharacter\ttrain\tcharacters/a/{family}/{i}.glb\tglb\n");
            }
        }
        let d = Dataset::parse(&text, Path::new("m.tsv"), Path::new("")).unwrap();
        let rows = d.select(Some("character"), Some("train"));
        let folds = family_folds(&rows, 2);
        assert_eq!(folds.len(), 5);
        let load = |f: usize| rows.iter().filter(|r| folds[&r.family] == f).count();
        assert_eq!((load(0), load(1)), (7, 6));
        let fold: Fold = "2/2".parse().unwrap();
        let held = d.select_fold(Some("character"), Some("train"), fold, true).unwrap();
        let kept = d.select_fold(Some("character"), Some("train"), fold, false).unwrap();
        assert_eq!(held.len() + kept.len(), 13);
        assert!(held.iter().all(|h| kept.iter().all(|k| k.family != h.family)));
        assert_eq!(fold.to_string(), "2/2");
        for bad in ["0/5", "6/5", "1/1", "x/5", "3"] {
            assert!(bad.parse::<Fold>().is_err(), "{bad}");
        }
        // Five families cannot fill six folds: the sixth is refused, not empty.
        let sixth: Fold = "6/6".parse().unwrap();
        let e = d
            .select_fold(Some("character"), Some("train"), sixth, true)
            .unwrap_err();
        assert!(e.to_string().contains("fold 6/6: holds no family"), "{e}");
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
