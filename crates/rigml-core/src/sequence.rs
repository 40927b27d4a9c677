//! Mesh sequences: frames of one fixed topology (simulation caches, 4D scans).

use crate::CoreError;
use glam::Vec3;

/// An animated mesh without a rig: every frame has the same triangles and vertex count.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sequence {
    pub name: String,
    /// Shared triangle list.
    pub triangles: Vec<[u32; 3]>,
    /// Vertex positions per frame, `frames[f][v]`.
    pub frames: Vec<Vec<Vec3>>,
    /// Frames per second, when the sequence is a time series (key poses have none).
    pub fps: Option<f32>,
}

/// Total triangle area of one frame, the anchor-frame criterion of METRICS.md §6 (triangles with a corner out of range are skipped).
pub fn total_area(frame: &[Vec3], triangles: &[[u32; 3]]) -> f64 {
    triangles
        .iter()
        .filter_map(|t| {
            let [a, b, c] = t.map(|i| frame.get(i as usize).copied());
            Some(f64::from((b? - a?).cross(c? - a?).length()) * 0.5)
        })
        .sum()
}

impl Sequence {
    /// Every frame has the first frame's vertex count; indices are in range.
    pub fn validate(&self) -> Result<(), CoreError> {
        let n = self.frames.first().map_or(0, |f| f.len());
        for (frame, f) in self.frames.iter().enumerate() {
            if f.len() != n {
                return Err(CoreError::FrameLength {
                    frame,
                    got: f.len(),
                    expected: n,
                });
            }
        }
        for (triangle, t) in self.triangles.iter().enumerate() {
            if let Some(&index) = t.iter().find(|&&i| i as usize >= n) {
                return Err(CoreError::TriangleIndexOutOfRange {
                    triangle,
                    index,
                    vertex_count: n,
                });
            }
        }
        Ok(())
    }
}
