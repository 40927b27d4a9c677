//! The robustness failures of METRICS.md §4 (items 2–6) that can be read off a skin, shared by
//! the tests and the whole-manifest run.

use crate::Bones;
use rigml_core::Skin;

/// Every §4 failure found in `skin` for a mesh of `vertex_count` vertices, at most one message
/// per kind (with the first vertex at fault). Empty means the skin passes.
pub fn failures(skin: &Skin, vertex_count: usize, cap: usize, bones: &Bones) -> Vec<String> {
    let mut out = Vec::new();
    if skin.vertex_count() != vertex_count {
        out.push(format!(
            "skin has {} rows for {vertex_count} vertices",
            skin.vertex_count()
        ));
        return out;
    }
    let mut first = |kind: usize, v: usize, msg: String| {
        if !out.iter().any(|m: &String| m.starts_with(&format!("§4.{kind}"))) {
            out.push(format!("§4.{kind}: vertex {v}: {msg}"));
        }
    };
    for (v, row) in skin.rows().enumerate() {
        if row.iter().any(|i| !i.weight.is_finite()) {
            first(2, v, "non-finite weight".into());
        }
        let sum: f32 = row.iter().map(|i| i.weight).sum();
        if sum < 1e-8 {
            first(3, v, "zero total weight".into());
        } else if (sum - 1.0).abs() > 1e-4 {
            first(4, v, format!("weights sum to {sum}"));
        }
        if row.len() > cap {
            first(5, v, format!("{} influences, cap {cap}", row.len()));
        }
        if let Some(i) = row
            .iter()
            .find(|i| bones.ignored.get(i.joint as usize).copied().unwrap_or(true))
        {
            first(6, v, format!("weight on ignored or unknown joint {}", i.joint));
        }
    }
    out
}
