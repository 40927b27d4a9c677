//! In-betweens by retrieval from a motion library: for every gap between two keys, the stretches
//! of captured motion whose first and last frames look most like the two keys (and whose frames
//! one key further out look like the keys further out, and whose root travels as far and turns
//! as much as the keys' does) are taken, each bent by a linear ramp so that it starts on the first
//! key and ends on the second, and averaged. Stretches are also tried played faster and slower
//! than captured ([`TEMPOS`]); where even the best match is poor, the result leans toward the
//! keys' interpolation ([`Library::match_scale`]). This is the search half of motion matching,
//! run in the IK-Rig code (proportion-invariant, so a library captured on one skeleton serves any
//! humanoid), and a [`crate::inbetween::Predictor`] like the learned model.

use crate::data::Prepared;
use crate::features::{CONTACTS, FEATURES};
use crate::model::Prediction;
use glam::Vec2;
use rayon::prelude::*;

/// Features compared between a key and a library frame: everything but the root velocity.
const POSE: std::ops::Range<usize> = 3..FEATURES;

/// The speeds library stretches are tried at by default: captured motion played from 0.8 to 1.25
/// times as fast, in steps of about an eighth. Leaving one train subject out at a time, against
/// the captured speed alone: keys 15 / 30 frames apart 9.78 → 9.37 and 15.21 → 14.97 % of leg;
/// 0.67–1.5 in seven steps scores the same (docs/experiments/2026-12-07-inbetween-retrieval.md).
pub const TEMPOS: [f32; 5] = [0.8, 0.9, 1.0, 1.12, 1.25];

/// Distances of one key to every library frame, clip by clip.
type Distances = Vec<Vec<f32>>;

/// The frames filled between two keys and their contact probabilities.
type Filled = (Vec<[f32; FEATURES]>, Vec<[f32; CONTACTS]>);

/// One gap between keys `a` and `b` and what its match reads: the two keys' distances to every
/// library frame, and those of the keys one further out with how far out they are.
struct Gap<'d> {
    a: usize,
    b: usize,
    ends: (&'d Distances, &'d Distances),
    before: Option<(usize, &'d Distances)>,
    after: Option<(usize, &'d Distances)>,
}

/// A motion library: clean model-rate vectors of captured clips.
#[derive(Debug, Clone)]
pub struct Library {
    /// Vectors of every clip, each feature divided by its spread.
    scaled: Vec<Vec<[f32; FEATURES]>>,
    /// The vectors as they are.
    clips: Vec<Vec<[f32; FEATURES]>>,
    contacts: Vec<Vec<[bool; CONTACTS]>>,
    /// The capture subject of every clip ([`subject_of`] its name).
    subjects: Vec<String>,
    /// Root position and heading of every frame, integrated from the clip's first.
    paths: Vec<Vec<(Vec2, f32)>>,
    /// 1 / spread of every feature.
    inverse_spread: [f32; FEATURES],
    /// Spread of the per-frame root velocity (ground distance, heading).
    root_spread: (f32, f32),
    /// How many stretches are averaged per gap.
    pub neighbours: usize,
    /// Weight of the root's travel against the keys' poses in the match.
    pub root_weight: f32,
    /// Weight of the keys one further out (the motion's direction) in the match.
    pub context_weight: f32,
    /// How far the library's stretches are trusted: a gap whose best match costs `c` takes
    /// `exp(-c / match_scale)` of the retrieved motion and the rest from the keys'
    /// interpolation. 4, chosen by leaving one capture subject of the train clips out at a time
    /// (docs/experiments/2026-12-07-inbetween-retrieval.md).
    pub match_scale: f32,
    /// Speeds at which library stretches are tried ([`TEMPOS`] by default): a gap of `n` frames
    /// is matched against stretches of `round(n · tempo)` captured frames, played over the
    /// gap's `n` (the keys one further out likewise `round(distance · tempo)` frames out).
    pub tempos: Vec<f32>,
}

/// The root path of `vectors`: position and heading of every frame, the first at the origin
/// facing heading 0, integrated as [`crate::features::from_vector`] integrates them.
pub fn root_path(vectors: &[[f32; FEATURES]]) -> Vec<(Vec2, f32)> {
    let mut out = Vec::with_capacity(vectors.len());
    let (mut p, mut h) = (Vec2::ZERO, 0.0f32);
    for (f, v) in vectors.iter().enumerate() {
        if f > 0 {
            h += v[2];
            let (s, c) = h.sin_cos();
            p += Vec2::new(c * v[0] + s * v[1], -s * v[0] + c * v[1]);
        }
        out.push((p, h));
    }
    out
}

/// The capture subject a clip's name tells: `cmu_13_10_reach_grab` (and its mirror) → `cmu_13`;
/// a name of fewer than two `_`-separated parts is its own subject. Clips of one subject move
/// alike, so a clip is never filled from its own subject's ([`Library::predict_for`]).
pub fn subject_of(name: &str) -> &str {
    let name = name.strip_suffix(" (mirrored)").unwrap_or(name);
    match name.match_indices('_').nth(1) {
        Some((i, _)) => &name[..i],
        None => name,
    }
}

/// Where `to` lies seen from `from` (in `from`'s own ground axes), and how far it has turned.
fn travel(from: (Vec2, f32), to: (Vec2, f32)) -> (Vec2, f32) {
    let d = to.0 - from.0;
    let (s, c) = from.1.sin_cos();
    (Vec2::new(c * d.x - s * d.y, s * d.x + c * d.y), to.1 - from.1)
}

impl Library {
    /// A library of the clean clips of `prepared` (their damaged copies are not used).
    pub fn new(prepared: &[Prepared]) -> Library {
        let (_, spread) = crate::data::statistics(prepared, crate::data::MIN_SPREAD);
        let mut inverse_spread = [0.0f32; FEATURES];
        for (i, s) in inverse_spread.iter_mut().zip(&spread) {
            *i = 1.0 / s;
        }
        let clips: Vec<Vec<[f32; FEATURES]>> = prepared.iter().map(|p| p.clean.clone()).collect();
        let scaled = clips
            .iter()
            .map(|c| {
                c.iter()
                    .map(|v| std::array::from_fn(|k| v[k] * inverse_spread[k]))
                    .collect()
            })
            .collect();
        let mut speed = (0.0f64, 0.0f64, 0.0f64);
        for v in clips.iter().flatten() {
            speed.0 += f64::from(v[0] * v[0] + v[1] * v[1]);
            speed.1 += f64::from(v[2] * v[2]);
            speed.2 += 1.0;
        }
        let n = speed.2.max(1.0);
        Library {
            paths: clips.iter().map(|c| root_path(c)).collect(),
            scaled,
            contacts: prepared.iter().map(|p| p.contacts.clone()).collect(),
            subjects: prepared.iter().map(|p| subject_of(&p.name).to_string()).collect(),
            clips,
            inverse_spread,
            root_spread: (
                ((speed.0 / n).sqrt() as f32).max(1e-4),
                ((speed.1 / n).sqrt() as f32).max(1e-4),
            ),
            neighbours: 4,
            root_weight: 1.0,
            context_weight: 1.0,
            match_scale: 4.0,
            tempos: TEMPOS.to_vec(),
        }
    }

    /// Frames in the library.
    pub fn frames(&self) -> usize {
        self.clips.iter().map(Vec::len).sum()
    }

    /// Mean squared scaled difference of the pose features of `query` (already scaled) and
    /// every library frame, clip by clip (empty for the clips of subject `exclude`).
    fn distances(&self, query: &[f32; FEATURES], exclude: Option<&str>) -> Distances {
        self.scaled
            .iter()
            .zip(&self.subjects)
            .map(|(clip, subject)| {
                if exclude == Some(subject.as_str()) {
                    return Vec::new();
                }
                clip.iter()
                    .map(|v| {
                        let mut d = 0.0f32;
                        for k in POSE {
                            let e = v[k] - query[k];
                            d += e * e;
                        }
                        d / POSE.len() as f32
                    })
                    .collect()
            })
            .collect()
    }

    /// The frames between the keys of `vectors` (`known` marks them; the frames between are not
    /// read) filled from the library: a [`crate::inbetween::Predictor`].
    pub fn predict(&self, vectors: &[[f32; FEATURES]], known: &[bool]) -> Prediction {
        self.predict_for(vectors, known, None)
    }

    /// [`Library::predict`] without the library's clips of subject `exclude` ([`subject_of`]):
    /// how a library is scored on its own clips.
    pub fn predict_for(&self, vectors: &[[f32; FEATURES]], known: &[bool], exclude: Option<&str>) -> Prediction {
        let mut out = vectors.to_vec();
        let mut contacts = vec![[0.0f32; CONTACTS]; vectors.len()];
        let keys: Vec<usize> = (0..vectors.len()).filter(|&f| known[f]).collect();
        let path = root_path(vectors);
        // Gaps in chunks: each key's distance to every library frame is computed once (a gap
        // reads its two keys and the keys either side), in parallel, and the chunk's gaps are
        // then filled in parallel; chunks keep memory bounded when keys are dense.
        const CHUNK: usize = 64;
        let gaps = keys.len().saturating_sub(1);
        for g0 in (0..gaps).step_by(CHUNK) {
            let g1 = (g0 + CHUNK).min(gaps);
            let first_key = g0.saturating_sub(1);
            let last_key = (g1 + 1).min(keys.len() - 1);
            let table: Vec<Distances> = (first_key..=last_key)
                .into_par_iter()
                .map(|i| {
                    let v = &vectors[keys[i]];
                    let scaled: [f32; FEATURES] = std::array::from_fn(|k| v[k] * self.inverse_spread[k]);
                    self.distances(&scaled, exclude)
                })
                .collect();
            let at = |key: usize| &table[key - first_key];
            let filled: Vec<Option<Filled>> = (g0..g1)
                .into_par_iter()
                .map(|w| {
                    let gap = Gap {
                        a: keys[w],
                        b: keys[w + 1],
                        ends: (at(w), at(w + 1)),
                        before: w.checked_sub(1).map(|p| (keys[w] - keys[p], at(p))),
                        after: keys.get(w + 2).map(|&q| (q - keys[w + 1], at(w + 2))),
                    };
                    self.fill_gap(vectors, &path, &gap)
                })
                .collect();
            for (w, fill) in (g0..g1).zip(filled) {
                if let Some((v, c)) = fill {
                    let a = keys[w] + 1;
                    out[a..a + v.len()].copy_from_slice(&v);
                    contacts[a..a + c.len()].copy_from_slice(&c);
                }
            }
        }
        Prediction { vectors: out, contacts }
    }

    /// The frames strictly between the keys of `gap` in `vectors` (whose root path is `path`)
    /// and their contacts, from the library stretches that best match the keys; `None` for a gap
    /// with no frame between its keys or no stretch long enough.
    fn fill_gap(&self, vectors: &[[f32; FEATURES]], path: &[(Vec2, f32)], gap: &Gap) -> Option<Filled> {
        let Gap {
            a,
            b,
            ends,
            before,
            after,
        } = *gap;
        let n = b - a;
        if n < 2 {
            return None;
        }
        let (q_move, q_turn) = travel(path[a], path[b]);
        let lead = before.map_or(0, |b| b.0);
        let tail = after.map_or(0, |a| a.0);
        // (cost, clip, start, library frames the gap's n frames play).
        let mut found: Vec<(f32, usize, usize, usize)> = Vec::new();
        for &tempo in &self.tempos {
            let scaled = |x: usize| (x as f32 * tempo).round() as usize;
            let (m, lead, tail) = (scaled(n).max(1), scaled(lead), scaled(tail));
            for (c, clip) in self.clips.iter().enumerate() {
                // Excluded clips have no distances.
                if ends.0[c].is_empty() || clip.len() < lead + m + tail + 1 {
                    continue;
                }
                for s in lead..clip.len() - m - tail {
                    let mut cost = ends.0[c][s] + ends.1[c][s + m];
                    if let Some((_, d)) = before {
                        cost += self.context_weight * d[c][s - lead];
                    }
                    if let Some((_, d)) = after {
                        cost += self.context_weight * d[c][s + m + tail];
                    }
                    let (l_move, l_turn) = travel(self.paths[c][s], self.paths[c][s + m]);
                    let dm = (l_move - q_move).length() / (self.root_spread.0 * n as f32);
                    let dt = (l_turn - q_turn) / (self.root_spread.1 * n as f32);
                    cost += self.root_weight * (dm * dm + dt * dt);
                    found.push((cost, c, s, m));
                }
            }
        }
        // The best few hundred candidates in order (enough for several separate stretches).
        let pool = found.len().min(256);
        if pool == 0 {
            return None;
        }
        if pool < found.len() {
            found.select_nth_unstable_by(pool - 1, |x, y| x.0.total_cmp(&y.0));
            found.truncate(pool);
        }
        found.sort_by(|x, y| x.0.total_cmp(&y.0));
        // The best stretches, not overlapping copies of one stretch.
        let apart = (n / 2).max(2);
        let mut chosen: Vec<(usize, usize, usize)> = Vec::new();
        for &(_, c, s, m) in &found {
            if chosen.len() == self.neighbours.max(1) {
                break;
            }
            if chosen.iter().all(|&(c2, s2, _)| c2 != c || s2.abs_diff(s) >= apart) {
                chosen.push((c, s, m));
            }
        }
        // Where even the best match is poor the library does not hold this motion: lean toward
        // the keys' interpolation.
        let trust = (-found[0].0 / self.match_scale).exp();
        let k = chosen.len() as f32;
        let mut frames = Vec::with_capacity(n - 1);
        let mut contacts = Vec::with_capacity(n - 1);
        for f in a + 1..b {
            let t = (f - a) as f32 / n as f32;
            let mut v = [0.0f32; FEATURES];
            let mut contact = [0.0f32; CONTACTS];
            for &(c, s, m) in &chosen {
                let clip = &self.clips[c];
                // The library frame the output frame plays (between two frames when the
                // stretch is played faster or slower than captured).
                let x = s as f32 + t * m as f32;
                let (i0, u) = (x.floor() as usize, x.fract());
                let i1 = (i0 + 1).min(s + m);
                let here: [f32; FEATURES] = std::array::from_fn(|i| clip[i0][i] + u * (clip[i1][i] - clip[i0][i]));
                let (start, end) = (&clip[s], &clip[s + m]);
                // Root motion per output frame: the library's per-frame motion times the
                // library frames each output frame covers.
                let pace = m as f32 / n as f32;
                for i in 0..3 {
                    v[i] += here[i] * pace / k;
                }
                for i in POSE {
                    let offset = (1.0 - t) * (vectors[a][i] - start[i]) + t * (vectors[b][i] - end[i]);
                    v[i] += (here[i] + offset) / k;
                }
                let nearest = if u < 0.5 { i0 } else { i1 };
                for (x, &on) in contact.iter_mut().zip(&self.contacts[c][nearest]) {
                    *x += f32::from(u8::from(on)) / k;
                }
            }
            for (x, given) in v.iter_mut().zip(&vectors[f]) {
                *x = given + trust * (*x - given);
            }
            frames.push(v);
            contacts.push(contact);
        }
        Some((frames, contacts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clip whose every pose feature follows `phase` and whose root walks forward.
    fn clip(len: usize, speed: f32, phase: impl Fn(usize) -> f32) -> Vec<[f32; FEATURES]> {
        (0..len)
            .map(|f| {
                let mut v = [0.0f32; FEATURES];
                v[1] = if f == 0 { 0.0 } else { speed };
                for (k, x) in v.iter_mut().enumerate().skip(3) {
                    *x = phase(f) * (1.0 + k as f32 / FEATURES as f32);
                }
                v
            })
            .collect()
    }

    fn prepared(name: &str, clean: Vec<[f32; FEATURES]>) -> Prepared {
        Prepared {
            name: name.into(),
            contacts: vec![[false; CONTACTS]; clean.len()],
            clean,
            noisy: Vec::new(),
            evidence: Vec::new(),
            blend: Vec::new(),
        }
    }

    #[test]
    fn a_gap_is_filled_from_the_stretch_that_matches_its_keys_and_meets_them() {
        let wave = |f: usize| (f as f32 * 0.3).sin();
        let library = Library::new(&[
            prepared("wave", clip(200, 0.05, wave)),
            prepared("still", clip(200, 0.0, |_| 0.2)),
        ]);
        assert_eq!(library.frames(), 400);
        assert_eq!(subject_of("cmu_13_10_reach_grab (mirrored)"), "cmu_13");
        assert_eq!(subject_of("walk"), "walk");
        // The query: the wave from frame 40, keys every 10 frames, a slightly different pose offset.
        let truth: Vec<[f32; FEATURES]> = clip(41, 0.05, |f| wave(f + 40) + 0.01);
        let known: Vec<bool> = (0..41).map(|f| f % 10 == 0).collect();
        let filled = crate::train::fill_between_keys(&truth, &known);
        let p = library.predict(&filled, &known);
        // The largest difference of the pose features of two clips.
        let gap = |x: &[[f32; FEATURES]], y: &[[f32; FEATURES]]| {
            x.iter()
                .zip(y)
                .flat_map(|(a, b)| a[3..].iter().zip(&b[3..]).map(|(p, q)| (p - q).abs()))
                .fold(0.0f32, f32::max)
        };
        for (f, v) in p.vectors.iter().enumerate().filter(|(f, _)| known[*f]) {
            assert_eq!(*v, filled[f]);
        }
        assert!(gap(&p.vectors, &truth) < 0.05, "{}", gap(&p.vectors, &truth));
        // Without the wave's subject only the still clip is left, and a still stretch bent onto
        // the keys is their linear interpolation.
        let without = library.predict_for(&filled, &known, Some("wave"));
        assert!(gap(&without.vectors, &filled) < 1e-5);
        // A library of nothing like the keys (a faster wave about poses far from theirs) is not
        // trusted: the result stays at the interpolation.
        let far = Library::new(&[prepared("far", clip(200, 0.05, |f| 30.0 + wave(2 * f)))]);
        let p_far = far.predict(&filled, &known);
        assert!(gap(&p_far.vectors, &filled) < 1e-3, "{}", gap(&p_far.vectors, &filled));
        // A library that holds the wave only at 0.8 of its speed is played faster to match.
        let slow = |f: usize| (f as f32 * 0.24).sin();
        let mut at_one_speed = Library::new(&[prepared("slow", clip(250, 0.04, slow))]);
        let played = at_one_speed.predict(&filled, &known);
        at_one_speed.tempos = vec![1.0];
        let captured = at_one_speed.predict(&filled, &known);
        assert!(
            gap(&played.vectors, &truth) < 0.5 * gap(&captured.vectors, &truth),
            "{} against {}",
            gap(&played.vectors, &truth),
            gap(&captured.vectors, &truth)
        );
        // Linear interpolation misses the wave between keys.
        let lerp_error: f32 = (0..41).map(|f| (filled[f][3] - truth[f][3]).abs()).sum();
        let error: f32 = (0..41).map(|f| (p.vectors[f][3] - truth[f][3]).abs()).sum();
        assert!(error < 0.2 * lerp_error, "{error} against {lerp_error}");
    }
}
