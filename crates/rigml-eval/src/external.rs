//! External weight sets (results of other tools) and their alignment to the ground truth's
//! joints by name. Two inputs are read:
//! - a character file with the GT's vertex order (`.glb`, `.fbx`, ... through [`rigml_io::load`]):
//!   its skin and joint names;
//! - a NumPy `.npz` with `weights` (N×J, float32 or float64, C or Fortran order) and
//!   `joint_names` (J strings, `U` or `S` dtype).

use crate::skin_metrics::Row;
use crate::EvalError;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

/// Weights as another tool emitted them, over its own joint list.
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalWeights {
    pub path: PathBuf,
    pub joint_names: Vec<String>,
    /// Raw rows `(column in joint_names, weight)`, zeros dropped, otherwise as stored.
    pub rows: Vec<Row>,
}

/// Read an external weight set, by extension: `.npz`, else any character format.
pub fn read(path: &Path) -> Result<ExternalWeights, EvalError> {
    let is_npz = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("npz"));
    if is_npz {
        read_npz(path)
    } else {
        read_character(path)
    }
}

/// The skin and joint names of a character file.
pub fn read_character(path: &Path) -> Result<ExternalWeights, EvalError> {
    let c = rigml_io::load(path)?;
    let skin = c.skin.as_ref().ok_or_else(|| EvalError::weights(path, "has no skin"))?;
    Ok(ExternalWeights {
        path: path.to_path_buf(),
        joint_names: c.skeleton.names.clone(),
        rows: crate::skin_metrics::rows_of(skin),
    })
}

fn npz_entry(path: &Path, archive: &mut zip::ZipArchive<std::fs::File>, name: &str) -> Result<Vec<u8>, EvalError> {
    let mut file = archive
        .by_name(&format!("{name}.npy"))
        .map_err(|e| EvalError::weights(path, format!("array `{name}`: {e}")))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| EvalError::weights(path, format!("array `{name}`: {e}")))?;
    Ok(bytes)
}

/// Read `weights` and `joint_names` from an `.npz`.
pub fn read_npz(path: &Path) -> Result<ExternalWeights, EvalError> {
    let file = std::fs::File::open(path).map_err(|source| EvalError::File {
        path: path.to_path_buf(),
        source,
    })?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| EvalError::weights(path, format!("not an npz: {e}")))?;
    let bad = |what: &str, e: &dyn std::fmt::Display| EvalError::weights(path, format!("{what}: {e}"));

    let names_bytes = npz_entry(path, &mut archive, "joint_names")?;
    let names_npy = npyz::NpyFile::new(Cursor::new(&names_bytes)).map_err(|e| bad("joint_names", &e))?;
    let joint_names: Vec<String> = match names_npy.into_vec::<String>() {
        Ok(v) => v,
        Err(_) => {
            let npy = npyz::NpyFile::new(Cursor::new(&names_bytes)).map_err(|e| bad("joint_names", &e))?;
            let raw: Vec<Vec<u8>> = npy
                .into_vec()
                .map_err(|e| bad("joint_names (expected a string array)", &e))?;
            raw.into_iter()
                .map(|b| String::from_utf8(b).map_err(|e| bad("joint_names", &e)))
                .collect::<Result<_, _>>()?
        }
    };

    let w_bytes = npz_entry(path, &mut archive, "weights")?;
    let npy = npyz::NpyFile::new(Cursor::new(&w_bytes)).map_err(|e| bad("weights", &e))?;
    let shape = npy.shape().to_vec();
    let fortran = npy.order() == npyz::Order::Fortran;
    let [n, j] = shape[..] else {
        return Err(EvalError::weights(
            path,
            format!("weights: shape {shape:?}, expected 2-D (N, J)"),
        ));
    };
    let (n, j) = (n as usize, j as usize);
    if j != joint_names.len() {
        return Err(EvalError::weights(
            path,
            format!(
                "weights has {j} columns but joint_names has {} names",
                joint_names.len()
            ),
        ));
    }
    let values: Vec<f32> = match npy.into_vec::<f32>() {
        Ok(v) => v,
        Err(_) => {
            let npy = npyz::NpyFile::new(Cursor::new(&w_bytes)).map_err(|e| bad("weights", &e))?;
            let v: Vec<f64> = npy
                .into_vec()
                .map_err(|e| bad("weights (expected float32 or float64)", &e))?;
            v.into_iter().map(|x| x as f32).collect()
        }
    };
    if values.len() != n * j {
        return Err(EvalError::weights(
            path,
            format!("weights: {} values for shape ({n}, {j})", values.len()),
        ));
    }
    let at = |v: usize, c: usize| if fortran { values[c * n + v] } else { values[v * j + c] };
    let rows = (0..n)
        .map(|v| (0..j).map(|c| (c as u32, at(v, c))).filter(|e| e.1 != 0.0).collect())
        .collect();
    Ok(ExternalWeights {
        path: path.to_path_buf(),
        joint_names,
        rows,
    })
}

/// Write `rows` as an `.npz` that [`read_npz`] (and NumPy) reads: `weights` float32 `(N, J)`
/// and `joint_names` `<U` strings. Used to hand the ground truth (or any skin) to external tools
/// and to round-trip their results. Atomic; an existing file is replaced only with `force`.
pub fn write_npz(path: &Path, joint_names: &[String], rows: &[Row], force: bool) -> Result<(), EvalError> {
    use npyz::WriterBuilder;
    use std::io::Write;
    let j = joint_names.len();
    let mut dense = vec![0.0f32; rows.len() * j];
    for (v, row) in rows.iter().enumerate() {
        for &(c, w) in row {
            let slot = dense
                .get_mut(v * j + c as usize)
                .filter(|_| (c as usize) < j)
                .ok_or_else(|| EvalError::weights(path, format!("vertex {v}: joint {c} of {j}")))?;
            *slot += w;
        }
    }
    let bad = |e: &dyn std::fmt::Display| EvalError::weights(path, format!("writing npz: {e}"));
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let mut npy = Vec::new();
    {
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&[rows.len() as u64, j as u64])
            .writer(&mut npy)
            .begin_nd()
            .map_err(|e| bad(&e))?;
        w.extend(dense).map_err(|e| bad(&e))?;
        w.finish().map_err(|e| bad(&e))?;
    }
    zip.start_file("weights.npy", opts).map_err(|e| bad(&e))?;
    zip.write_all(&npy).map_err(|e| bad(&e))?;
    let width = joint_names.iter().map(|n| n.chars().count()).max().unwrap_or(0).max(1);
    let dtype = npyz::DType::Plain(format!("<U{width}").parse().map_err(|e| bad(&e))?);
    let mut npy = Vec::new();
    {
        let mut w = npyz::WriteOptions::<String>::new()
            .dtype(dtype)
            .shape(&[j as u64])
            .writer(&mut npy)
            .begin_nd()
            .map_err(|e| bad(&e))?;
        w.extend(joint_names.iter().cloned()).map_err(|e| bad(&e))?;
        w.finish().map_err(|e| bad(&e))?;
    }
    zip.start_file("joint_names.npy", opts).map_err(|e| bad(&e))?;
    zip.write_all(&npy).map_err(|e| bad(&e))?;
    let bytes = zip.finish().map_err(|e| bad(&e))?.into_inner();
    rigml_io::atomic::write(path, &bytes, force)?;
    Ok(())
}

/// Re-index `ext` to the GT skeleton's joints by exact name. A joint missing from the GT is an
/// error if any vertex gives it weight (the weight cannot be compared), otherwise ignored;
/// a vertex-count mismatch is an error.
pub fn align_by_name(ext: &ExternalWeights, gt_names: &[String], vertex_count: usize) -> Result<Vec<Row>, EvalError> {
    if ext.rows.len() != vertex_count {
        return Err(EvalError::weights(
            &ext.path,
            format!("{} vertices, the ground truth has {vertex_count}", ext.rows.len()),
        ));
    }
    let map: Vec<Option<u32>> = ext
        .joint_names
        .iter()
        .map(|n| gt_names.iter().position(|g| g == n).map(|g| g as u32))
        .collect();
    let mut out = Vec::with_capacity(ext.rows.len());
    for (v, row) in ext.rows.iter().enumerate() {
        let mut aligned = Row::with_capacity(row.len());
        for &(c, w) in row {
            match map.get(c as usize) {
                Some(Some(g)) => aligned.push((*g, w)),
                Some(None) if w == 0.0 => {}
                Some(None) => {
                    return Err(EvalError::weights(
                        &ext.path,
                        format!(
                            "vertex {v}: joint `{}` carries weight but is not in the ground-truth skeleton",
                            ext.joint_names[c as usize]
                        ),
                    ))
                }
                None => {
                    return Err(EvalError::weights(
                        &ext.path,
                        format!("vertex {v}: joint column {c} of {}", ext.joint_names.len()),
                    ))
                }
            }
        }
        out.push(aligned);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use npyz::WriterBuilder;
    use std::io::Write;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn aligns_by_name() {
        let ext = ExternalWeights {
            path: "x.npz".into(),
            joint_names: names(&["tip", "root", "unused"]),
            rows: vec![vec![(0, 1.0)], vec![(1, 0.5), (0, 0.5)]],
        };
        let gt = names(&["root", "mid", "tip"]);
        let rows = align_by_name(&ext, &gt, 2).unwrap();
        assert_eq!(rows, vec![vec![(2, 1.0)], vec![(0, 0.5), (2, 0.5)]]);
        assert!(align_by_name(&ext, &gt, 3).is_err());
        let mut bad = ext.clone();
        bad.rows[0] = vec![(2, 1.0)];
        let e = align_by_name(&bad, &gt, 2).unwrap_err();
        assert!(e.to_string().contains("`unused`"), "{e}");
    }

    #[test]
    fn reads_npz_written_by_npyz() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("asset.npz");
        let file = std::fs::File::create(&path).unwrap();
        let mut zip = zip::ZipWriter::new(file);
        let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        zip.start_file("weights.npy", opts).unwrap();
        let mut buf = Vec::new();
        {
            let mut w = npyz::WriteOptions::new()
                .default_dtype()
                .shape(&[2, 2])
                .writer(&mut buf)
                .begin_nd()
                .unwrap();
            w.extend([1.0f64, 0.0, 0.25, 0.75]).unwrap();
            w.finish().unwrap();
        }
        zip.write_all(&buf).unwrap();
        zip.start_file("joint_names.npy", opts).unwrap();
        let mut buf = Vec::new();
        {
            let dtype = npyz::DType::Plain("<U4".parse().unwrap());
            let mut w = npyz::WriteOptions::<String>::new()
                .dtype(dtype)
                .shape(&[2])
                .writer(&mut buf)
                .begin_nd()
                .unwrap();
            w.extend(["root".to_string(), "tip".to_string()]).unwrap();
            w.finish().unwrap();
        }
        zip.write_all(&buf).unwrap();
        zip.finish().unwrap();
        let ext = read(&path).unwrap();
        assert_eq!(ext.joint_names, names(&["root", "tip"]));
        assert_eq!(ext.rows, vec![vec![(0, 1.0)], vec![(0, 0.25), (1, 0.75)]]);
        std::fs::write(dir.path().join("bad.npz"), b"not a zip").unwrap();
        // write_npz round trip, and no clobbering without force.
        let out = dir.path().join("rt.npz");
        let rows = vec![vec![(1, 0.5), (0, 0.5)], vec![]];
        write_npz(&out, &names(&["a", "bone.001"]), &rows, false).unwrap();
        let back = read(&out).unwrap();
        assert_eq!(back.joint_names, names(&["a", "bone.001"]));
        assert_eq!(back.rows, vec![vec![(0, 0.5), (1, 0.5)], vec![]]);
        assert!(write_npz(&out, &names(&["a"]), &[], false).is_err());
        assert!(write_npz(&out, &names(&["a"]), &[vec![(3, 1.0)]], true).is_err());
        assert!(read(&dir.path().join("bad.npz")).is_err());
    }
}
