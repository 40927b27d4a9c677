//! Where frames come from, and the anchor frame and normalisation of METRICS.md §6.
//!
//! The decomposition reads frames only through [`FrameSource`], one frame per call, so a source
//! may hold every frame in memory ([`rigml_core::Sequence`]) or re-read each frame from disk on
//! every pass (memory: one frame per worker thread). Which one to use is the caller's choice: the
//! decomposition reads every frame `2 × (iterations + init_iterations) + 2` times (82 with the
//! defaults), so in-memory is faster whenever it fits (streaming the 24-frame horse from its OBJ
//! files took 4.5× the wall time of holding it).

use crate::SeqError;
use glam::Vec3;
use rigml_core::Sequence;

/// Frames of one topology, readable in any order (also from several threads at once).
pub trait FrameSource: Sync {
    fn frame_count(&self) -> usize;
    fn vertex_count(&self) -> usize;
    fn triangles(&self) -> &[[u32; 3]];
    /// Write frame `f`'s positions into `out` (resized to [`Self::vertex_count`]).
    fn read_frame(&self, f: usize, out: &mut Vec<Vec3>) -> Result<(), SeqError>;
}

impl FrameSource for Sequence {
    fn frame_count(&self) -> usize {
        self.frames.len()
    }

    fn vertex_count(&self) -> usize {
        self.frames.first().map_or(0, Vec::len)
    }

    fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    fn read_frame(&self, f: usize, out: &mut Vec<Vec3>) -> Result<(), SeqError> {
        let frame = self.frames.get(f).ok_or_else(|| SeqError::Source {
            frame: f,
            message: format!("the sequence has {} frames", self.frames.len()),
        })?;
        if frame.len() != self.vertex_count() {
            return Err(SeqError::Source {
                frame: f,
                message: format!("{} vertices, frame 0 has {}", frame.len(), self.vertex_count()),
            });
        }
        out.clear();
        out.extend_from_slice(frame);
        Ok(())
    }
}

/// The similarity that maps a sequence into normalised units: `x_n = scale · (x − centre)`,
/// with the anchor frame's AABB centre and `scale = 1 / longest side` (METRICS.md §6).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Normalisation {
    pub centre: Vec3,
    pub scale: f32,
}

impl Normalisation {
    /// From one frame's bounding box; `None` for an empty or flat-to-a-point frame.
    pub fn of_frame(frame: &[Vec3]) -> Option<Normalisation> {
        let (lo, hi) = frame.iter().fold(
            (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY)),
            |(lo, hi), p| (lo.min(*p), hi.max(*p)),
        );
        let side = (hi - lo).max_element();
        (side.is_finite() && side > 0.0).then(|| Normalisation {
            centre: (lo + hi) * 0.5,
            scale: 1.0 / side,
        })
    }

    pub fn apply(&self, p: Vec3) -> Vec3 {
        (p - self.centre) * self.scale
    }

    pub fn undo(&self, p: Vec3) -> Vec3 {
        p / self.scale + self.centre
    }
}

/// The anchor frame (largest total triangle area, ties to the lowest index; METRICS.md §6)
/// found in one streaming pass, with its positions.
pub fn anchor(source: &dyn FrameSource) -> Result<(usize, Vec<Vec3>), SeqError> {
    let mut best: Option<(usize, f64, Vec<Vec3>)> = None;
    let mut frame = Vec::new();
    for f in 0..source.frame_count() {
        source.read_frame(f, &mut frame)?;
        if frame.len() != source.vertex_count() {
            return Err(SeqError::Source {
                frame: f,
                message: format!("{} vertices, expected {}", frame.len(), source.vertex_count()),
            });
        }
        if let Some(v) = frame.iter().position(|p| !p.is_finite()) {
            return Err(SeqError::Source {
                frame: f,
                message: format!("vertex {v} is not finite"),
            });
        }
        let area = total_area(&frame, source.triangles());
        if best.as_ref().is_none_or(|b| area > b.1) {
            best = Some((f, area, frame.clone()));
        }
    }
    best.map(|(f, _, p)| (f, p)).ok_or(SeqError::Empty)
}

/// How far two vertex sets disagree about the lengths of the sequence's edges: the median over
/// the triangles' edges of |ln(length in `a` / length in `b`) − m|, m the median log ratio (so
/// a uniform scale between the two costs nothing). Two poses of one articulated surface keep
/// most edges' lengths: at most 0.006 between two frames of the horse gallop, 0.034 of the cat's
/// poses, 0.071 of the lion's, 0.053 between the lion's reference mesh and a pose; the same
/// vertices listed in a random order give edges between unrelated points: 0.59 to 0.79 on those
/// sequences. `rigml rig-seq` checks `--rest` meshes with it. None when no edge has a length in
/// both.
pub fn edge_length_spread(a: &[Vec3], b: &[Vec3], triangles: &[[u32; 3]]) -> Option<f64> {
    let mut logs: Vec<f64> = triangles
        .iter()
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .filter_map(|(i, j)| {
            let (i, j) = (i as usize, j as usize);
            let la = f64::from(a.get(i)?.distance(*a.get(j)?));
            let lb = f64::from(b.get(i)?.distance(*b.get(j)?));
            (la > 0.0 && lb > 0.0 && la.is_finite() && lb.is_finite()).then(|| (la / lb).ln())
        })
        .collect();
    let m = median(&mut logs)?;
    let mut spread: Vec<f64> = logs.iter().map(|l| (l - m).abs()).collect();
    median(&mut spread)
}

fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mid = values.len() / 2;
    let (_, m, _) = values.select_nth_unstable_by(mid, f64::total_cmp);
    Some(*m)
}

/// Total triangle area of one frame; the one definition lives in `rigml-core`.
pub use rigml_core::sequence::total_area;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchor_is_the_largest_frame_and_normalises_to_unit_side() {
        let tri = vec![[0u32, 1, 2]];
        let f0 = vec![Vec3::ZERO, Vec3::X, Vec3::Y];
        let f1: Vec<Vec3> = f0.iter().map(|p| *p * 4.0 + Vec3::Z).collect();
        let seq = Sequence {
            triangles: tri,
            frames: vec![f0.clone(), f1.clone(), f0],
            ..Default::default()
        };
        let (a, frame) = anchor(&seq).unwrap();
        assert_eq!((a, frame), (1, f1.clone()));
        let n = Normalisation::of_frame(&f1).unwrap();
        assert_eq!(n.scale, 0.25);
        assert!((n.apply(Vec3::new(4.0, 0.0, 1.0)) - Vec3::new(0.5, -0.5, 0.0)).length() < 1e-6);
        assert!((n.undo(n.apply(Vec3::ONE)) - Vec3::ONE).length() < 1e-6);
        assert!(Normalisation::of_frame(&[Vec3::ONE]).is_none());
        assert!(matches!(anchor(&Sequence::default()), Err(SeqError::Empty)));
    }

    #[test]
    fn edge_length_spread_tells_a_pose_from_a_reordering() {
        // A strip of 20 quads along x, and the same strip bent 90° in the middle and scaled 3x.
        let mut flat = Vec::new();
        for i in 0..21 {
            flat.push(Vec3::new(i as f32, 0.0, 0.0));
            flat.push(Vec3::new(i as f32, 1.0, 0.0));
        }
        let triangles: Vec<[u32; 3]> = (0..20u32)
            .flat_map(|i| [[2 * i, 2 * i + 2, 2 * i + 1], [2 * i + 1, 2 * i + 2, 2 * i + 3]])
            .collect();
        let bent: Vec<Vec3> = flat
            .iter()
            .map(|p| if p.x <= 10.0 { *p } else { Vec3::new(10.0, p.y, p.x - 10.0) } * 3.0)
            .collect();
        let posed = edge_length_spread(&bent, &flat, &triangles).unwrap();
        assert!(posed < 1e-6, "{posed}");
        // The same vertices in another order.
        let shuffled: Vec<Vec3> = (0..bent.len()).map(|k| bent[k * 17 % bent.len()]).collect();
        let reordered = edge_length_spread(&shuffled, &flat, &triangles).unwrap();
        assert!(reordered > 0.3, "{reordered}");
        assert_eq!(edge_length_spread(&flat, &flat, &[]), None);
    }
}
