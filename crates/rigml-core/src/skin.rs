//! Sparse skin weights: for every vertex, a few (joint, weight) influences.

use crate::CoreError;

/// The influence cap readers use unless told otherwise: enough for every format we read
/// (MakeHuman rigs reach 12), pruned to 4 only when an engine format asks for it.
pub const DEFAULT_MAX_INFLUENCES: usize = 16;

/// Weights below this (after normalisation) are dropped as numerical noise.
const WEIGHT_EPSILON: f32 = 1e-7;

/// Rows whose raw weights sum below this are unskinned (METRICS.md §1).
const UNSKINNED_SUM: f32 = 1e-8;

/// One joint's share of a vertex.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Influence {
    pub joint: u32,
    pub weight: f32,
}

/// Per-vertex influences in compressed-row form, validated on construction:
/// every row holds at most `max_influences` entries with distinct joints, positive weights
/// summing to 1 (to f32 rounding), sorted by weight descending (ties: lower joint first).
/// A row may be empty: the vertex is *unskinned* (its source weights summed to ~0).
#[derive(Debug, Clone, PartialEq)]
pub struct Skin {
    /// Row starts into `influences`, length = vertices + 1.
    offsets: Vec<u32>,
    influences: Vec<Influence>,
    max_influences: usize,
}

impl Skin {
    /// Build from raw per-vertex rows of `(joint, weight)`: duplicates are merged, zeros
    /// dropped, the `max_influences` largest kept, and the row normalised to sum 1.
    /// Errors name the vertex with a NaN/negative weight or an out-of-range joint.
    pub fn from_rows<'a, I>(rows: I, joint_count: usize, max_influences: usize) -> Result<Skin, CoreError>
    where
        I: IntoIterator<Item = &'a [(u32, f32)]>,
    {
        let mut builder = SkinBuilder::new(joint_count, max_influences)?;
        for row in rows {
            builder.push_row(row)?;
        }
        Ok(builder.finish())
    }

    /// Build from a dense row-major matrix `weights[v * joint_count + j]`.
    pub fn from_dense(weights: &[f32], joint_count: usize, max_influences: usize) -> Result<Skin, CoreError> {
        let mut builder = SkinBuilder::new(joint_count, max_influences)?;
        if joint_count == 0 {
            return Ok(builder.finish());
        }
        let mut row = Vec::new();
        for dense in weights.chunks(joint_count) {
            row.clear();
            row.extend(
                dense
                    .iter()
                    .enumerate()
                    .filter(|(_, &w)| w != 0.0)
                    .map(|(j, &w)| (j as u32, w)),
            );
            builder.push_row(&row)?;
        }
        Ok(builder.finish())
    }

    /// Every vertex fully bound to one joint.
    pub fn rigid(joint_of_vertex: &[u32], joint_count: usize) -> Result<Skin, CoreError> {
        let mut builder = SkinBuilder::new(joint_count, 1)?;
        for &j in joint_of_vertex {
            builder.push_row(&[(j, 1.0)])?;
        }
        Ok(builder.finish())
    }

    pub fn vertex_count(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The cap this skin was built with.
    pub fn max_influences(&self) -> usize {
        self.max_influences
    }

    /// Influences of vertex `v`, heaviest first. Panics if `v` is out of range.
    pub fn influences(&self, v: usize) -> &[Influence] {
        &self.influences[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }

    /// The raw compressed rows: row starts (`vertex_count + 1` entries, non-decreasing, the
    /// last equal to `influences.len()`) and the influences. For hot loops (skinning) that walk
    /// rows in blocks without re-slicing per vertex.
    pub(crate) fn csr(&self) -> (&[u32], &[Influence]) {
        (&self.offsets, &self.influences)
    }

    /// Iterator over all rows.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = &[Influence]> + '_ {
        self.offsets
            .windows(2)
            .map(|w| &self.influences[w[0] as usize..w[1] as usize])
    }

    /// The largest row length actually present.
    pub fn influences_max(&self) -> usize {
        self.rows().map(|r| r.len()).max().unwrap_or(0)
    }

    /// For each of `joint_count` joints, whether any vertex has an influence on it (joints the
    /// skin does not know of count as unused).
    pub fn joints_used(&self, joint_count: usize) -> Vec<bool> {
        let mut used = vec![false; joint_count];
        for i in &self.influences {
            if let Some(u) = used.get_mut(i.joint as usize) {
                *u = true;
            }
        }
        used
    }

    /// Number of vertices with no influence.
    pub fn unskinned_count(&self) -> usize {
        self.rows().filter(|r| r.is_empty()).count()
    }

    /// `histogram[k]` = number of vertices with exactly `k` influences.
    pub fn influence_histogram(&self) -> Vec<usize> {
        let mut histogram = vec![0; self.influences_max() + 1];
        for r in self.rows() {
            histogram[r.len()] += 1;
        }
        histogram
    }

    /// Dense row-major weights `[v * joint_count + j]`.
    pub fn to_dense(&self, joint_count: usize) -> Vec<f32> {
        let mut dense = vec![0.0; self.vertex_count() * joint_count];
        for (v, row) in self.rows().enumerate() {
            for i in row {
                dense[v * joint_count + i.joint as usize] = i.weight;
            }
        }
        dense
    }

    /// A copy keeping at most `cap` influences per vertex, renormalised.
    pub fn pruned(&self, cap: usize) -> Result<Skin, CoreError> {
        let mut builder = SkinBuilder::new(usize::MAX, cap)?;
        let mut row = Vec::new();
        for r in self.rows() {
            row.clear();
            row.extend(r.iter().map(|i| (i.joint, i.weight)));
            builder.push_row(&row)?;
        }
        Ok(builder.finish())
    }

    /// The same weights on re-indexed joints: `joint_map[old] = new`.
    pub fn remap_joints(&self, joint_map: &[usize]) -> Skin {
        let mut skin = self.clone();
        for i in &mut skin.influences {
            i.joint = joint_map[i.joint as usize] as u32;
        }
        skin
    }

    /// Check against a mesh and skeleton: one row per vertex, joints in range.
    pub fn validate(&self, vertex_count: usize, joint_count: usize) -> Result<(), CoreError> {
        if self.vertex_count() != vertex_count {
            return Err(CoreError::SkinLength {
                got: self.vertex_count(),
                expected: vertex_count,
            });
        }
        for (vertex, row) in self.rows().enumerate() {
            for i in row {
                if i.joint as usize >= joint_count {
                    return Err(CoreError::JointIndexOutOfRange {
                        vertex,
                        joint: i.joint,
                        joint_count,
                    });
                }
                if !i.weight.is_finite() || i.weight <= 0.0 {
                    return Err(CoreError::BadWeight {
                        vertex,
                        weight: i.weight,
                    });
                }
            }
        }
        Ok(())
    }
}

/// Incremental construction of a [`Skin`], one raw row at a time (used by readers to avoid a
/// `Vec` per vertex).
pub struct SkinBuilder {
    joint_count: usize,
    max_influences: usize,
    offsets: Vec<u32>,
    influences: Vec<Influence>,
    scratch: Vec<(u32, f32)>,
}

impl SkinBuilder {
    pub fn new(joint_count: usize, max_influences: usize) -> Result<Self, CoreError> {
        if max_influences == 0 {
            return Err(CoreError::ZeroInfluenceCap);
        }
        Ok(Self {
            joint_count,
            max_influences,
            offsets: vec![0],
            influences: Vec::new(),
            scratch: Vec::new(),
        })
    }

    /// Add the next vertex's raw influences (any order, duplicates allowed, not normalised).
    pub fn push_row(&mut self, row: &[(u32, f32)]) -> Result<(), CoreError> {
        let vertex = self.offsets.len() - 1;
        self.scratch.clear();
        for &(joint, weight) in row {
            if !weight.is_finite() || weight < -1e-6 {
                return Err(CoreError::BadWeight { vertex, weight });
            }
            if weight <= 0.0 {
                continue;
            }
            if joint as usize >= self.joint_count {
                return Err(CoreError::JointIndexOutOfRange {
                    vertex,
                    joint,
                    joint_count: self.joint_count,
                });
            }
            match self.scratch.iter_mut().find(|(j, _)| *j == joint) {
                Some(entry) => entry.1 += weight,
                None => self.scratch.push((joint, weight)),
            }
        }
        self.scratch.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        self.scratch.truncate(self.max_influences);
        let sum: f32 = self.scratch.iter().map(|e| e.1).sum();
        if sum >= UNSKINNED_SUM {
            let kept = self.scratch.iter().filter(|e| e.1 / sum >= WEIGHT_EPSILON);
            let kept_sum: f32 = kept.clone().map(|e| e.1).sum();
            self.influences.extend(kept.map(|&(joint, w)| Influence {
                joint,
                weight: w / kept_sum,
            }));
        }
        self.offsets.push(self.influences.len() as u32);
        Ok(())
    }

    pub fn finish(self) -> Skin {
        Skin {
            offsets: self.offsets,
            influences: self.influences,
            max_influences: self.max_influences,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_merged_sorted_capped_and_normalised() {
        let rows: Vec<Vec<(u32, f32)>> = vec![
            vec![(2, 0.2), (0, 0.5), (2, 0.3), (1, 0.0)],
            vec![(0, 1.0), (1, 1.0), (2, 1.0), (3, 0.5)],
            vec![],
        ];
        let skin = Skin::from_rows(rows.iter().map(|r| r.as_slice()), 4, 2).unwrap();
        // Row 0: joint 2 has 0.5 merged, tie with joint 0 goes to the lower index.
        assert_eq!(
            skin.influences(0),
            &[Influence { joint: 0, weight: 0.5 }, Influence { joint: 2, weight: 0.5 }]
        );
        // Row 1: three equal weights, cap 2 keeps joints 0 and 1.
        assert_eq!(
            skin.influences(1).iter().map(|i| i.joint).collect::<Vec<_>>(),
            vec![0, 1]
        );
        assert!((skin.influences(1).iter().map(|i| i.weight).sum::<f32>() - 1.0).abs() < 1e-6);
        assert_eq!(skin.unskinned_count(), 1);
        assert_eq!(skin.influence_histogram(), vec![1, 0, 2]);
        skin.validate(3, 4).unwrap();
    }

    #[test]
    fn bad_rows_name_the_vertex() {
        let rows: Vec<Vec<(u32, f32)>> = vec![vec![(0, 1.0)], vec![(9, 1.0)]];
        let err = Skin::from_rows(rows.iter().map(|r| r.as_slice()), 4, 4).unwrap_err();
        assert_eq!(
            err,
            CoreError::JointIndexOutOfRange {
                vertex: 1,
                joint: 9,
                joint_count: 4
            }
        );
        let rows: Vec<Vec<(u32, f32)>> = vec![vec![(0, f32::NAN)]];
        assert!(matches!(
            Skin::from_rows(rows.iter().map(|r| r.as_slice()), 4, 4),
            Err(CoreError::BadWeight { vertex: 0, .. })
        ));
    }

    #[test]
    fn dense_round_trip() {
        let dense = vec![0.25, 0.75, 0.0, 1.0, 0.0, 0.0];
        let skin = Skin::from_dense(&dense, 3, 4).unwrap();
        assert_eq!(skin.to_dense(3), dense);
        assert_eq!(
            skin.pruned(1).unwrap().influences(0),
            &[Influence { joint: 1, weight: 1.0 }]
        );
    }
}
