//! Damaged versions of real GLB files never make the reader panic: truncations, flipped bytes,
//! and JSON edits (numbers replaced by out-of-range, huge or negative values, keys removed).
//! A cheap, deterministic stand-in for the fuzz target.

mod common;

use rigml_io::gltf;
use serde_json::Value;

/// xorshift32: deterministic, no dependency.
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        self.next() as usize % n.max(1)
    }
}

/// Split a GLB into its JSON value and BIN chunk.
fn split(bytes: &[u8]) -> (Value, Vec<u8>) {
    let json_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let json = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
    let bin = bytes.get(20 + json_len + 8..).unwrap_or(&[]).to_vec();
    (json, bin)
}

fn glb(json: &Value, bin: &[u8]) -> Vec<u8> {
    let mut text = json.to_string().into_bytes();
    text.resize(text.len().next_multiple_of(4), b' ');
    let total = 12 + 8 + text.len() + 8 + bin.len();
    let mut out = b"glTF".to_vec();
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(bin);
    out
}

/// Every number and object member of the document, as JSON pointers.
fn places(v: &Value, here: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            let p = format!("{here}/{k}");
            out.push(p.clone());
            places(x, p, out)
        }),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| places(x, format!("{here}/{i}"), out)),
        _ => out.push(here),
    }
}

fn mutate(doc: &mut Value, rng: &mut Rng, all: &[String]) {
    let at = &all[rng.below(all.len())];
    let replacement = match rng.below(8) {
        0 => Value::from(-1),
        1 => Value::from(u32::MAX),
        2 => Value::from(rng.below(100)),
        3 => Value::from(1e30),
        4 => Value::from("x"),
        5 => Value::Null,
        6 => Value::from(0),
        _ => {
            // Remove the member instead.
            if let Some((parent, key)) = at.rsplit_once('/') {
                if let Some(Value::Object(m)) = doc.pointer_mut(parent) {
                    m.remove(key);
                }
            }
            return;
        }
    };
    if let Some(slot) = doc.pointer_mut(at) {
        *slot = replacement;
    }
}

#[test]
fn damaged_real_files_give_errors_not_panics() {
    let ids = [
        "khronos-fox",
        "quaternius-cute-fish-puffer",
        "khronos-riggedfigure",
        "godot-platformer-enemy",
    ];
    let rows: Vec<_> = common::rows_with_format(&["glb"])
        .into_iter()
        .filter(|r| ids.contains(&r.id()))
        .collect();
    assert_eq!(rows.len(), ids.len(), "test assets missing from the manifest");
    let mut rng = Rng(0x9e37_79b9);
    let (mut tried, mut refused) = (0, 0);
    for row in rows {
        let path = row.path();
        let bytes = std::fs::read(&path).unwrap();
        let mut outcome = |b: &[u8]| {
            tried += 1;
            if gltf::from_bytes(b, &path).is_err() {
                refused += 1;
            }
        };
        for k in 0..200 {
            outcome(&bytes[..bytes.len() * k / 200]);
        }
        for _ in 0..300 {
            let mut b = bytes.clone();
            for _ in 0..4 {
                let at = rng.below(b.len());
                b[at] = rng.next() as u8;
            }
            outcome(&b);
        }
        let (json, bin) = split(&bytes);
        let mut all = Vec::new();
        places(&json, String::new(), &mut all);
        for _ in 0..800 {
            let mut doc = json.clone();
            for _ in 0..1 + rng.below(3) {
                mutate(&mut doc, &mut rng, &all);
            }
            outcome(&glb(&doc, &bin));
        }
    }
    println!("{tried} damaged files read, {refused} refused with an error, no panic");
    assert!(
        refused > tried / 4,
        "most damage should be detected ({refused} of {tried})"
    );
}
