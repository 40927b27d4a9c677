//! A minimal reader of numpy `.npz` archives (zip of `.npy` arrays) for ground-truth files:
//! little-endian `f4`/`f8`/`i4`/`i8`/`u1`, C order, every array converted to f64.

#![allow(dead_code)]

use std::io::Read;
use std::path::Path;

/// One array: its shape and its values in C (row-major) order.
#[derive(Debug)]
pub struct Array {
    pub shape: Vec<usize>,
    pub data: Vec<f64>,
}

/// Read array `name` (without `.npy`) from the archive at `path`.
pub fn read(path: &Path, name: &str) -> Result<Array, String> {
    let at = |m: String| format!("{}: {name}: {m}", path.display());
    let file = std::fs::File::open(path).map_err(|e| at(e.to_string()))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| at(e.to_string()))?;
    let mut entry = zip.by_name(&format!("{name}.npy")).map_err(|e| at(e.to_string()))?;
    let mut bytes = Vec::new();
    entry.read_to_end(&mut bytes).map_err(|e| at(e.to_string()))?;
    parse_npy(&bytes).map_err(at)
}

/// Parse `.npy` bytes (format versions 1–3).
pub fn parse_npy(bytes: &[u8]) -> Result<Array, String> {
    if bytes.get(..6) != Some(b"\x93NUMPY".as_slice()) {
        return Err("not a .npy array (bad magic)".into());
    }
    let major = *bytes.get(6).ok_or("truncated header")?;
    let (len, start) = match major {
        1 => {
            let b = bytes.get(8..10).ok_or("truncated header")?;
            (u16::from_le_bytes([b[0], b[1]]) as usize, 10)
        }
        2 | 3 => {
            let b = bytes.get(8..12).ok_or("truncated header")?;
            (u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize, 12)
        }
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = std::str::from_utf8(bytes.get(start..start + len).ok_or("truncated header")?)
        .map_err(|_| "header is not text")?;
    let field = |key: &str| -> Result<&str, String> {
        let i = header.find(key).ok_or(format!("header lacks {key}"))? + key.len();
        Ok(header[i..].trim_start_matches([':', ' ']))
    };
    if field("'fortran_order'")?.starts_with("True") {
        return Err("Fortran-order arrays are not supported".into());
    }
    let descr = field("'descr'")?.trim_start_matches('\'');
    let descr = &descr[..descr.find('\'').ok_or("bad descr")?];
    let shape_text = field("'shape'")?;
    let shape_text = &shape_text[1..shape_text.find(')').ok_or("bad shape")?];
    let shape: Vec<usize> = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| format!("bad shape entry {s:?}")))
        .collect::<Result<_, _>>()?;
    let count: usize = shape.iter().product();
    let body = &bytes[start + len..];
    let size = match descr {
        "<f8" | "<i8" => 8,
        "<f4" | "<i4" => 4,
        "|u1" => 1,
        d => return Err(format!("unsupported dtype {d}")),
    };
    if body.len() < count * size {
        return Err(format!(
            "{count} × {descr} values need {} bytes, {} present",
            count * size,
            body.len()
        ));
    }
    let data = body[..count * size]
        .chunks_exact(size)
        .map(|c| match descr {
            "<f8" => f64::from_le_bytes(c.try_into().unwrap_or([0; 8])),
            "<i8" => i64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f64,
            "<f4" => f32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as f64,
            "<i4" => i32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as f64,
            _ => c[0] as f64,
        })
        .collect();
    Ok(Array { shape, data })
}

#[test]
fn parses_a_hand_made_array() {
    let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    bytes.extend(1.5f32.to_le_bytes());
    bytes.extend((-2.0f32).to_le_bytes());
    let a = parse_npy(&bytes).unwrap();
    assert_eq!(a.shape, vec![2, 1]);
    assert_eq!(a.data, vec![1.5, -2.0]);
    assert!(parse_npy(&bytes[..bytes.len() - 1]).is_err());
}
