//! The bytes around the JSON: the GLB container (header, JSON chunk, BIN chunk) and buffer
//! URIs (`data:` base64 and files beside the `.gltf`).

use super::json::{fail, unsupported, Fail};
use std::path::Path;

const GLB_MAGIC: &[u8; 4] = b"glTF";
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

/// A file split into its JSON text and, for GLB, the BIN chunk.
pub(super) struct Container<'a> {
    pub json: &'a [u8],
    pub bin: Option<&'a [u8]>,
}

/// Split GLB bytes into chunks, or take the whole input as JSON text when it is not GLB.
pub(super) fn split(bytes: &[u8]) -> Result<Container<'_>, Fail> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(fail("empty file (0 bytes or only whitespace)"));
    }
    if !bytes.starts_with(GLB_MAGIC) {
        return Ok(Container { json: bytes, bin: None });
    }
    let version = u32_at(bytes, 4).ok_or_else(|| fail("GLB header: truncated (12 bytes needed)"))?;
    let length = u32_at(bytes, 8).ok_or_else(|| fail("GLB header: truncated (12 bytes needed)"))? as usize;
    if version != 2 {
        return Err(unsupported(format!(
            "GLB header: version {version} (only glTF 2.0 is read)"
        )));
    }
    if length > bytes.len() {
        return Err(fail(format!(
            "GLB header: declares {length} bytes but the file has {} (truncated?)",
            bytes.len()
        )));
    }
    let body = bytes.get(12..length).unwrap_or(&[]);
    let mut chunks = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let (Some(len), Some(kind)) = (u32_at(body, at), u32_at(body, at + 4)) else {
            return Err(fail(format!("GLB chunk {}: truncated chunk header", chunks.len())));
        };
        let start = at + 8;
        let data = start
            .checked_add(len as usize)
            .and_then(|end| body.get(start..end))
            .ok_or_else(|| {
                fail(format!(
                    "GLB chunk {}: declares {len} bytes but only {} remain (truncated?)",
                    chunks.len(),
                    body.len().saturating_sub(start)
                ))
            })?;
        chunks.push((kind, data));
        at = start + len as usize;
    }
    match chunks.as_slice() {
        [(CHUNK_JSON, json), rest @ ..] => Ok(Container {
            json,
            bin: rest.iter().find(|(kind, _)| *kind == CHUNK_BIN).map(|(_, d)| *d),
        }),
        [] => Err(fail("GLB: no JSON chunk")),
        _ => Err(fail("GLB: the first chunk is not JSON")),
    }
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The bytes of a buffer's `uri`: a base64 `data:` URI or a file relative to `base`.
pub(super) fn load_uri(uri: &str, base: &Path, path: &str) -> Result<Vec<u8>, Fail> {
    if let Some(rest) = uri.strip_prefix("data:") {
        let (_, payload) = rest
            .split_once(";base64,")
            .ok_or_else(|| unsupported(format!("{path}: data URI is not base64")))?;
        return base64_decode(payload).ok_or_else(|| fail(format!("{path}: data URI is not valid base64")));
    }
    if uri.contains("://") {
        return Err(unsupported(format!(
            "{path}: remote URI {uri:?} (only files and data: URIs)"
        )));
    }
    let file = base.join(percent_decode(uri));
    std::fs::read(&file).map_err(|e| fail(format!("{path}: cannot read {}: {e}", file.display())))
}

/// Undo `%XX` escapes (URIs name files with spaces as `%20`).
fn percent_decode(uri: &str) -> String {
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 (padding optional, whitespace ignored); `None` on a bad character.
pub(super) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' | b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Standard base64 with padding (tests build `data:` URIs with it).
#[cfg(test)]
pub(super) fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(BASE64[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Assemble a GLB file from JSON text and binary data (both padded to 4 bytes as the spec asks).
pub(super) fn glb(json: &[u8], bin: &[u8]) -> Vec<u8> {
    let json_len = json.len().next_multiple_of(4);
    let bin_len = bin.len().next_multiple_of(4);
    let total = 12 + 8 + json_len + if bin.is_empty() { 0 } else { 8 + bin_len };
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(GLB_MAGIC);
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json_len as u32).to_le_bytes());
    out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    out.extend_from_slice(json);
    out.resize(20 + json_len, b' ');
    if !bin.is_empty() {
        out.extend_from_slice(&(bin_len as u32).to_le_bytes());
        out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
        out.extend_from_slice(bin);
        out.resize(total, 0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for n in 0..10 {
            let bytes: Vec<u8> = (0..n).map(|i| (i * 37 + 5) as u8).collect();
            assert_eq!(base64_decode(&base64_encode(&bytes)).unwrap(), bytes);
        }
        assert_eq!(base64_encode(b"Man"), "TWFu");
        assert_eq!(base64_decode("TWE=").unwrap(), b"Ma");
        assert!(base64_decode("TW!=").is_none());
    }

    #[test]
    fn glb_splits_back_and_truncation_is_reported() {
        let file = glb(b"{}", &[1, 2, 3]);
        let c = split(&file).unwrap();
        assert_eq!(c.json, b"{}  ");
        assert_eq!(c.bin.unwrap(), &[1, 2, 3, 0]);
        let err = split(&file[..file.len() - 2]).err().unwrap();
        assert!(err.message.contains("truncated"), "{}", err.message);
        assert!(split(&file[..7]).is_err());
        assert_eq!(percent_decode("a%20b.bin"), "a b.bin");
    }
}
