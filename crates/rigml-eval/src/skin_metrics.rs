//! Skin-weight metrics, METRICS.md §1–§2: ground-truth preparation, precision / recall /
//! average L1 per vertex (macro-averaged, raw and top-4 modes) and the Puppeteer-style pooled
//! precision / recall.
//!
//! Weights are handled as sparse rows `(joint, weight)` per vertex so that raw predictions
//! (unnormalised, more influences than a [`Skin`] keeps) can be scored exactly as emitted.

use rigml_core::Skin;

/// Influence threshold of the precision/recall sets (applied to normalised weights).
pub const TAU: f32 = 1e-4;
/// A ground-truth row summing below this is unskinned.
pub const UNSKINNED_SUM: f64 = 1e-8;
/// Influences kept by the top-4 preparation.
pub const TOP_K: usize = 4;
/// More than this share of unskinned GT vertices makes the asset a data issue.
pub const DATA_ISSUE_FRACTION: f64 = 0.01;
/// Puppeteer's default relative filter threshold (`filter_thre`).
pub const PUPPETEER_FILTER: f32 = 0.15;

/// Sparse weights of one vertex.
pub type Row = Vec<(u32, f32)>;

/// The rows of a skin, in vertex order.
pub fn rows_of(skin: &Skin) -> Vec<Row> {
    skin.rows()
        .map(|r| r.iter().map(|i| (i.joint, i.weight)).collect())
        .collect()
}

/// `row / sum(row)` with duplicate joints merged and non-positive or non-finite entries dropped,
/// sorted by joint; `None` when the sum is below [`UNSKINNED_SUM`].
pub fn normalise(row: &[(u32, f32)]) -> Option<Row> {
    let mut merged: Vec<(u32, f64)> = Vec::with_capacity(row.len());
    for &(j, w) in row {
        if !(w.is_finite() && w > 0.0) {
            continue;
        }
        match merged.iter_mut().find(|e| e.0 == j) {
            Some(e) => e.1 += f64::from(w),
            None => merged.push((j, f64::from(w))),
        }
    }
    let sum: f64 = merged.iter().map(|e| e.1).sum();
    if sum < UNSKINNED_SUM {
        return None;
    }
    merged.sort_by_key(|e| e.0);
    Some(merged.into_iter().map(|(j, w)| (j, (w / sum) as f32)).collect())
}

/// The `k` largest weights (ties to the lower joint), renormalised to sum 1, sorted by joint.
pub fn top_k(row: &[(u32, f32)], k: usize) -> Option<Row> {
    let mut r = normalise(row)?;
    r.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    r.truncate(k);
    normalise(&r)
}

/// Ground truth ready for scoring: normalised and top-4 rows (`None` = unskinned vertex).
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedGt {
    pub full: Vec<Option<Row>>,
    pub top4: Vec<Option<Row>>,
    /// Number of unskinned vertices (left out of every weight metric).
    pub unskinned: usize,
}

impl PreparedGt {
    /// Normalise every row and build the top-4 variant (METRICS.md §1).
    pub fn new(rows: &[Row]) -> PreparedGt {
        let full: Vec<Option<Row>> = rows.iter().map(|r| normalise(r)).collect();
        // From the raw rows, exactly as predictions are prepared, so that GT against itself is
        // bit-identical (normalising twice can move a weight by one ulp).
        let top4 = rows.iter().map(|r| top_k(r, TOP_K)).collect();
        let unskinned = full.iter().filter(|r| r.is_none()).count();
        PreparedGt { full, top4, unskinned }
    }

    pub fn vertex_count(&self) -> usize {
        self.full.len()
    }

    /// More than 1 % of the vertices are unskinned: listed as a data issue, left out of aggregates.
    pub fn is_data_issue(&self) -> bool {
        self.vertex_count() == 0 || self.unskinned as f64 > DATA_ISSUE_FRACTION * self.vertex_count() as f64
    }
}

/// Which side of METRICS.md §2 is scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Prediction renormalised only, against the normalised GT.
    Raw,
    /// Prediction cut to its 4 largest weights, against the top-4 GT.
    Top4,
}

/// Per-asset weight scores (means over the skinned GT vertices).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SkinScores {
    pub precision: f64,
    pub recall: f64,
    pub l1: f64,
    /// Skinned GT vertices scored.
    pub vertices: usize,
    /// Scored vertices whose predicted set `S_pr` is empty (a robustness failure, §4).
    pub empty_predictions: usize,
}

/// `(P_v, R_v, L1_v)` of one vertex; both rows normalised and sorted by joint.
/// An empty `S_pr` gives `P = R = 0`; an empty `S_gt` (only possible with > 10 000 joints) gives `R = 0`.
pub fn vertex_scores(pr: &[(u32, f32)], gt: &[(u32, f32)]) -> (f64, f64, f64) {
    let s_pr = pr.iter().filter(|e| e.1 > TAU).count();
    let s_gt = gt.iter().filter(|e| e.1 > TAU).count();
    let both = pr
        .iter()
        .filter(|e| e.1 > TAU && gt.iter().any(|g| g.0 == e.0 && g.1 > TAU))
        .count();
    let mut l1 = 0.0f64;
    for &(j, w) in pr {
        let g = gt.iter().find(|g| g.0 == j).map_or(0.0, |g| g.1);
        l1 += f64::from((w - g).abs());
    }
    for &(j, g) in gt {
        if !pr.iter().any(|e| e.0 == j) {
            l1 += f64::from(g);
        }
    }
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    if s_pr == 0 {
        return (0.0, 0.0, l1);
    }
    (ratio(both, s_pr), ratio(both, s_gt), l1)
}

/// Macro per-asset precision, recall and average L1 of `pred` (one row per vertex, as emitted).
pub fn score(pred: &[Row], gt: &PreparedGt, mode: Mode) -> Result<SkinScores, String> {
    if pred.len() != gt.vertex_count() {
        return Err(format!(
            "prediction has {} vertices, ground truth {}",
            pred.len(),
            gt.vertex_count()
        ));
    }
    let gt_rows = match mode {
        Mode::Raw => &gt.full,
        Mode::Top4 => &gt.top4,
    };
    let (mut p, mut r, mut l1) = (0.0, 0.0, 0.0);
    let (mut vertices, mut empty) = (0, 0);
    for (row, g) in pred.iter().zip(gt_rows) {
        let Some(g) = g else { continue };
        let prepared = match mode {
            Mode::Raw => normalise(row),
            Mode::Top4 => top_k(row, TOP_K),
        }
        .unwrap_or_default();
        if !prepared.iter().any(|e| e.1 > TAU) {
            empty += 1;
        }
        let (pv, rv, lv) = vertex_scores(&prepared, g);
        p += pv;
        r += rv;
        l1 += lv;
        vertices += 1;
    }
    let n = vertices.max(1) as f64;
    Ok(SkinScores {
        precision: p / n,
        recall: r / n,
        l1: l1 / n,
        vertices,
        empty_predictions: empty,
    })
}

/// Puppeteer's prediction filter: zero weights `< 1e-3` and `< filter · row max`, renormalise.
pub fn puppeteer_filter(row: &[(u32, f32)], filter: f32) -> Row {
    let Some(r) = normalise(row) else {
        return Vec::new();
    };
    let max = r.iter().map(|e| e.1).fold(0.0f32, f32::max);
    let kept: Row = r.into_iter().filter(|e| e.1 >= 1e-3 && e.1 >= filter * max).collect();
    normalise(&kept).unwrap_or_default()
}

/// Pooled (micro) precision and recall over `(v, j)` pairs of one asset (`P_pool/R_pool`),
/// after [`puppeteer_filter`], against the full normalised GT of the skinned vertices.
pub fn score_pool(pred: &[Row], gt: &PreparedGt, filter: f32) -> Result<(f64, f64), String> {
    if pred.len() != gt.vertex_count() {
        return Err(format!(
            "prediction has {} vertices, ground truth {}",
            pred.len(),
            gt.vertex_count()
        ));
    }
    let (mut n_pr, mut n_gt, mut n_both) = (0usize, 0usize, 0usize);
    for (row, g) in pred.iter().zip(&gt.full) {
        let Some(g) = g else { continue };
        let pr = puppeteer_filter(row, filter);
        n_pr += pr.iter().filter(|e| e.1 > 0.0).count();
        n_gt += g.iter().filter(|e| e.1 > 0.0).count();
        n_both += pr
            .iter()
            .filter(|e| e.1 > 0.0 && g.iter().any(|x| x.0 == e.0 && x.1 > 0.0))
            .count();
    }
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    Ok((ratio(n_both, n_pr), ratio(n_both, n_gt)))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Chain 0 → 1 → 2. GT rows of four vertices.
    pub(crate) fn gt_rows() -> Vec<Row> {
        vec![
            vec![(0, 1.0)],
            vec![(0, 0.5), (1, 0.5)],
            vec![(1, 0.75), (2, 0.25)],
            vec![(2, 1.0)],
        ]
    }

    /// GT with joint 2's weights moved to its parent 1.
    pub(crate) fn moved_rows() -> Vec<Row> {
        vec![vec![(0, 1.0)], vec![(0, 0.5), (1, 0.5)], vec![(1, 1.0)], vec![(1, 1.0)]]
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-6, "{a} != {b}");
    }

    #[test]
    fn gt_against_itself_is_perfect() {
        let gt = PreparedGt::new(&gt_rows());
        for mode in [Mode::Raw, Mode::Top4] {
            let s = score(&gt_rows(), &gt, mode).unwrap();
            assert_eq!((s.precision, s.recall, s.l1, s.vertices), (1.0, 1.0, 0.0, 4));
        }
        assert_eq!(score_pool(&gt_rows(), &gt, PUPPETEER_FILTER).unwrap(), (1.0, 1.0));
    }

    #[test]
    fn weights_moved_to_parent_hand_computed() {
        // v0, v1 unchanged: P = R = 1, L1 = 0.
        // v2: S_pr = {1}, S_gt = {1,2}: P = 1, R = 1/2, L1 = |1 - .75| + |0 - .25| = .5.
        // v3: S_pr = {1}, S_gt = {2}:   P = 0, R = 0,   L1 = 1 + 1 = 2.
        // Means over 4 vertices: P = 3/4, R = 2.5/4 = .625, L1 = 2.5/4 = .625.
        let gt = PreparedGt::new(&gt_rows());
        let s = score(&moved_rows(), &gt, Mode::Raw).unwrap();
        close(s.precision, 0.75);
        close(s.recall, 0.625);
        close(s.l1, 0.625);
        // Pooled: pred pairs 1+2+1+1 = 5, GT pairs 1+2+2+1 = 6, shared 1+2+1+0 = 4.
        let (p, r) = score_pool(&moved_rows(), &gt, PUPPETEER_FILTER).unwrap();
        close(p, 0.8);
        close(r, 4.0 / 6.0);
    }

    #[test]
    fn normalisation_unskinned_and_top4_ties() {
        // Raw GT (2, 2) sums to 4 -> (.5, .5); a zero row is unskinned.
        let gt = PreparedGt::new(&[vec![(0, 2.0), (1, 2.0)], vec![(0, 0.0)], vec![(1, 5e-9)]]);
        assert_eq!(gt.full[0], Some(vec![(0, 0.5), (1, 0.5)]));
        assert_eq!(gt.unskinned, 2);
        assert!(gt.is_data_issue());
        // Five equal weights: top-4 keeps joints 0..=3 (ties to the lower index), each 1/4.
        let row: Row = (0..5).rev().map(|j| (j, 0.2)).collect();
        assert_eq!(
            top_k(&row, 4).unwrap(),
            vec![(0, 0.25), (1, 0.25), (2, 0.25), (3, 0.25)]
        );
    }

    #[test]
    fn raw_versus_top4_and_empty_prediction() {
        // GT (.4,.3,.2,.1) on joints 0..3 plus (.0 on 4); prediction spreads .2 on each of 5 joints.
        let gt = PreparedGt::new(&[vec![(0, 0.4), (1, 0.3), (2, 0.2), (3, 0.1)]]);
        let pred = vec![(0..5).map(|j| (j, 0.2)).collect::<Row>()];
        // Raw: S_pr = {0..4}, S_gt = {0..3}: P = 4/5, R = 1,
        // L1 = .2 + .1 + 0 + .1 + .2 = .6.
        let s = score(&pred, &gt, Mode::Raw).unwrap();
        close(s.precision, 0.8);
        close(s.recall, 1.0);
        close(s.l1, 0.6);
        // Top-4: prediction keeps joints 0..3 at .25 each: P = R = 1,
        // L1 = .15 + .05 + .05 + .15 = .4.
        let s = score(&pred, &gt, Mode::Top4).unwrap();
        close(s.precision, 1.0);
        close(s.l1, 0.4);
        // Empty prediction: P = R = 0, L1 = 1, counted.
        let s = score(&[vec![]], &gt, Mode::Raw).unwrap();
        assert_eq!((s.precision, s.recall, s.empty_predictions), (0.0, 0.0, 1));
        close(s.l1, 1.0);
        assert!(score(&[], &gt, Mode::Raw).is_err());
    }

    #[test]
    fn puppeteer_filter_drops_small_weights() {
        // max .8: .1 < .15 * .8 = .12 is dropped, .0005 < 1e-3 dropped; (.8) renormalised to 1.
        assert_eq!(
            puppeteer_filter(&[(0, 0.8), (1, 0.1), (2, 0.0005)], 0.15),
            vec![(0, 1.0)]
        );
    }
}
