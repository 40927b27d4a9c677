//! Which frame `rig-seq` rigs. `--anchor` names one; the humanoid template wants a standing
//! humanoid; otherwise a few frames spread over the sequence's poses are each rigged and fitted
//! once, and the frame whose rig replays the sequence clearly best replaces the largest-area
//! frame.
//!
//! Why not simply the largest-area frame (METRICS.md §6's anchor, still the one that sets the
//! units): the placer reads limbs from the shape, and a crouching cat whose front legs touch
//! gives a skeleton with one joint for both (19 joints, RMSE 0.0279 against 0.0049 to 0.0068
//! from its standing frames): see docs/experiments/2026-11-27-rig-seq.md, section 2026-11-28
//! (third).

use super::{fit_frames, placed_at_pivots, rmse_of, Args};
use anyhow::{bail, Result};
use glam::Vec3;
use indicatif::ProgressBar;
use rayon::prelude::*;
use rigml_core::{Mesh, Sequence};
use rigml_seq::pose_fit::{FitOptions, PoseFitter};
use rigml_seq::{FrameSource, SeqError};
use rigml_skin::SolveOptions;

/// Frames tried, by area, for a standing humanoid when the largest is not one.
const HUMANOID_TRIES: usize = 32;

/// Frames of the sequence a trial fits (the candidates among them; more only when more
/// candidates are tried): a trial ranks candidates, it need not replay every frame of a long
/// capture.
const TRIAL_FRAMES: usize = 16;

/// Most sweeps per frame in a trial's fits: on the cat's and the lion's 8 trials, 10 sweeps
/// rank the frames as 50 do at the top (the same frame chosen) in half the time.
const TRIAL_SWEEPS: usize = 10;

/// Another frame replaces the largest-area one only when its first fit's RMSE is below this
/// share of the largest's. A trial (first placing, 10 sweeps) predicts which of two anchors
/// ends lower only when their trials differ clearly: over the cat's and the lion's 9 frames
/// each (72 pairs, full runs), it did for 50 of 52 pairs whose trials differ by more than 1.5x
/// and for 12 of 20 of the others; on the horse and the fox, trials within 15 % of the largest
/// frame's picked frames that ended 15 to 30 % worse.
const CLEARLY_BETTER: f64 = 2.0 / 3.0;

/// Vertices sampled per frame to tell poses apart when spreading the candidates.
const POSE_SAMPLES: usize = 512;

/// One frame tried as the anchor: the RMSE (normalised, METRICS.md §6) of its rig's first fit
/// on the trial frames, or why it could not be rigged.
#[derive(Debug, Clone)]
pub(super) struct Trial {
    pub frame: usize,
    pub joints: usize,
    pub rmse: Result<f64, String>,
}

/// What a trial needs to rig a frame and fit the others as `rig-seq`'s first placing does.
pub(super) struct TrialTools<'a> {
    pub placer: &'a dyn rigml::SkeletonPlacer,
    pub solver: &'a dyn rigml_skin::SkinSolver,
    pub solve_options: &'a SolveOptions,
    pub fit_options: &'a FitOptions,
    /// METRICS.md §6's scale (from the largest-area frame): every trial in the same units.
    pub scale: f32,
}

/// The frame to rig, why, and the frames tried (empty when none were).
///
/// `--anchor` wins; the humanoid template takes the largest frame that is a standing humanoid
/// among the [`HUMANOID_TRIES`] largest (a walk's stride is not one, a capture's T-pose is);
/// `--anchor-tries 1`, and `detect` when the largest frame is a standing humanoid, take the
/// largest-area frame; otherwise the frames [`try_anchors`] tries, the largest-area frame
/// unless another's first fit is [`CLEARLY_BETTER`].
pub(super) fn choose_anchor(
    args: &Args,
    source: &dyn FrameSource,
    largest: usize,
    tools: &TrialTools,
) -> Result<(usize, &'static str, Vec<Trial>)> {
    let frames = source.frame_count();
    if let Some(f) = args.anchor {
        if f >= frames {
            bail!(
                "--anchor {f}: the sequence has {frames} frames (0 to {})",
                frames.saturating_sub(1)
            );
        }
        return Ok((f, "given by --anchor", Vec::new()));
    }
    let mesh_of = |f: usize| -> Result<Mesh> {
        let mut positions = Vec::new();
        source.read_frame(f, &mut positions)?;
        Ok(Mesh {
            positions,
            triangles: source.triangles().to_vec(),
            ..Mesh::default()
        })
    };
    let standing =
        |f: usize| -> Result<bool> { Ok(rigml_rig::looks_humanoid(&mesh_of(f)?).is_ok_and(|c| c.is_humanoid())) };
    if args.choice.template != "humanoid" {
        let tries = usize::from(args.anchor_tries).min(frames);
        // `detect` on a largest frame that stands as a humanoid rigs it so (named, retargetable):
        // a frame tried elsewhere could replay the sequence a little closer with a rig that
        // cannot be retargeted.
        if tries <= 1 || (args.choice.template == "detect" && standing(largest)?) {
            return Ok((largest, "largest area", Vec::new()));
        }
        let trials = try_anchors(source, largest, tries, !args.keep_joints, args.pivot_pull, tools)?;
        let best = trials
            .iter()
            .filter_map(|t| t.rmse.as_ref().ok().map(|e| (t.frame, *e)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let of_largest = trials
            .iter()
            .find(|t| t.frame == largest)
            .and_then(|t| t.rmse.clone().ok());
        return Ok(match (best, of_largest) {
            (Some((f, e)), Some(l)) if f != largest && e < CLEARLY_BETTER * l => {
                (f, "first fit clearly closer than the largest frame's", trials)
            }
            (_, Some(_)) => (largest, "largest area (no frame tried clearly closer)", trials),
            (Some((f, _)), None) => (
                f,
                "lowest first-fit error (the largest frame could not be rigged)",
                trials,
            ),
            // Not one frame could be rigged: the largest fails again, with its own message.
            (None, None) => (largest, "largest area (no frame tried could be rigged)", trials),
        });
    }
    // Only when asked for (the humanoid template): the detector, tried on many frames of a
    // quadruped's run, finds a "standing humanoid" in some (measured on the fox's walk and
    // survey).
    if standing(largest)? {
        return Ok((largest, "largest area", Vec::new()));
    }
    let mut by_area: Vec<(usize, f64)> = Vec::with_capacity(frames);
    let mut frame = Vec::new();
    for f in 0..frames {
        source.read_frame(f, &mut frame)?;
        by_area.push((f, rigml_seq::source::total_area(&frame, source.triangles())));
    }
    by_area.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    for &(f, _) in by_area.iter().filter(|(f, _)| *f != largest).take(HUMANOID_TRIES - 1) {
        if standing(f)? {
            return Ok((f, "largest area that is a standing humanoid", Vec::new()));
        }
    }
    bail!(
        "none of the {} largest frames is a standing humanoid (feet down, arms out); give the frame \
         to rig with --anchor or a rest mesh with --rest, or use --template auto",
        HUMANOID_TRIES.min(frames)
    )
}

/// Rig each of `tries` frames (the largest-area frame, then each frame farthest in pose from
/// those already chosen) and fit the trial frames with it as `rig-seq`'s first placing does
/// (joints moved to their pivots unless `move_joints` is false or the rig is a humanoid): the
/// trials, in the order tried.
pub(super) fn try_anchors(
    source: &dyn FrameSource,
    largest: usize,
    tries: usize,
    move_joints: bool,
    pivot_pull: f64,
    tools: &TrialTools,
) -> Result<Vec<Trial>, SeqError> {
    let candidates = spread_frames(source, largest, tries)?;
    let kept = trial_frames(source.frame_count(), &candidates);
    let mut sequence = Sequence {
        triangles: source.triangles().to_vec(),
        ..Sequence::default()
    };
    for &f in &kept {
        let mut frame = Vec::new();
        source.read_frame(f, &mut frame)?;
        sequence.frames.push(frame);
    }
    let bar = ProgressBar::new_spinner();
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar.set_message(format!("trying {} frames as the anchor", candidates.len()));
    let quiet = ProgressBar::hidden();
    // Trials are independent: in parallel (each one's first fit is sequential over frames).
    let trials: Vec<Trial> = candidates
        .par_iter()
        .map(|&frame| {
            let at = kept.binary_search(&frame).unwrap_or(0);
            let result = trial(&sequence, at, move_joints, pivot_pull, tools, &quiet);
            Trial {
                frame,
                joints: result.as_ref().map_or(0, |r| r.0),
                rmse: result.map(|r| r.1),
            }
        })
        .collect();
    bar.finish_and_clear();
    Ok(trials)
}

/// Rig trial frame `at` of `sequence` and fit every trial frame: (joints, RMSE), or why not.
fn trial(
    sequence: &Sequence,
    at: usize,
    move_joints: bool,
    pivot_pull: f64,
    tools: &TrialTools,
    quiet: &ProgressBar,
) -> Result<(usize, f64), String> {
    let positions = sequence.frames[at].clone();
    let mesh = Mesh {
        positions: positions.clone(),
        triangles: sequence.triangles.clone(),
        ..Mesh::default()
    };
    let rigged = rigml_rig::rig_with_progress(
        "trial",
        mesh,
        tools.placer,
        tools.solver,
        tools.solve_options,
        &mut |_| {},
    )
    .map_err(|e| e.to_string())?;
    let character = &rigged.character;
    let skin = character.skin.as_ref().ok_or("the rig has no skin")?;
    let fixed = rigml_rig::controls(&character.skeleton);
    let fitter = PoseFitter::new(&character.skeleton, skin, &positions, &fixed).map_err(|e| e.to_string())?;
    let options = FitOptions {
        sweeps: tools.fit_options.sweeps.min(TRIAL_SWEEPS),
        ..*tools.fit_options
    };
    let (fitter, starts) = if move_joints && rigged.template != "humanoid" {
        placed_at_pivots(&fitter, sequence, at, None, &options, pivot_pull, quiet).map_err(|e| e.to_string())?
    } else {
        (fitter, Vec::new())
    };
    let fitted = fit_frames(&fitter, sequence, at, None, &starts, &options, quiet).map_err(|e| e.to_string())?;
    let (rmse, _, _) = rmse_of(&fitter, sequence, &fitted, tools.scale).map_err(|e| e.to_string())?;
    Ok((character.skeleton.joint_count(), rmse))
}

/// `count` frames spread over the sequence's poses: `first`, then each time the frame farthest
/// (RMS distance of [`POSE_SAMPLES`] vertices, each frame centred on their mean) from every
/// frame already chosen. One pass over the frames, `count` distances per frame.
pub(super) fn spread_frames(source: &dyn FrameSource, first: usize, count: usize) -> Result<Vec<usize>, SeqError> {
    let frames = source.frame_count();
    let stride = source.vertex_count().div_ceil(POSE_SAMPLES).max(1);
    let mut poses: Vec<Vec<Vec3>> = Vec::with_capacity(frames);
    let mut frame = Vec::new();
    for f in 0..frames {
        source.read_frame(f, &mut frame)?;
        let sample: Vec<Vec3> = frame.iter().step_by(stride).copied().collect();
        let centre = sample.iter().copied().sum::<Vec3>() / sample.len().max(1) as f32;
        poses.push(sample.into_iter().map(|p| p - centre).collect());
    }
    let distance = |a: usize, b: usize| -> f32 {
        poses[a]
            .iter()
            .zip(&poses[b])
            .map(|(p, q)| p.distance_squared(*q))
            .sum::<f32>()
    };
    let mut chosen = vec![first];
    let mut nearest: Vec<f32> = (0..frames).map(|f| distance(first, f)).collect();
    while chosen.len() < count.min(frames) {
        let Some((next, _)) = nearest
            .iter()
            .enumerate()
            .filter(|(f, _)| !chosen.contains(f))
            .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(&a.0)))
        else {
            break;
        };
        chosen.push(next);
        for (f, d) in nearest.iter_mut().enumerate() {
            *d = d.min(distance(next, f));
        }
    }
    Ok(chosen)
}

/// The frames a trial fits, in order: every frame of a short sequence, else the candidates and
/// evenly spaced frames, [`TRIAL_FRAMES`] in all while the candidates are fewer than
/// `TRIAL_FRAMES - 1`, else the candidates and two more (first and last frame at least).
fn trial_frames(frames: usize, candidates: &[usize]) -> Vec<usize> {
    if frames <= TRIAL_FRAMES {
        return (0..frames).collect();
    }
    let spaced = TRIAL_FRAMES.saturating_sub(candidates.len()).max(2);
    let mut kept: Vec<usize> = candidates
        .iter()
        .copied()
        .chain((0..spaced).map(|i| i * (frames - 1) / (spaced - 1)))
        .collect();
    kept.sort_unstable();
    kept.dedup();
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sequence(frames: Vec<Vec<Vec3>>) -> Sequence {
        Sequence {
            triangles: vec![[0, 1, 2]],
            frames,
            ..Sequence::default()
        }
    }

    #[test]
    fn spread_frames_start_at_the_given_frame_and_take_the_farthest_next() {
        // Frames 0..5 are a triangle opened by 0, 1, 1.1, 5, 5.1 units (centring removes none of it).
        let frame = |x: f32| vec![Vec3::ZERO, Vec3::new(x, 0.0, 0.0), Vec3::new(0.0, 1.0, 0.0)];
        let s = sequence([0.0, 1.0, 1.1, 5.0, 5.1].into_iter().map(frame).collect());
        assert_eq!(spread_frames(&s, 1, 1).unwrap(), vec![1]);
        let three = spread_frames(&s, 1, 3).unwrap();
        assert_eq!(three[0], 1);
        assert_eq!(three[1], 4, "farthest from frame 1: {three:?}");
        assert_eq!(three[2], 0, "farthest from both: {three:?}");
        assert_eq!(spread_frames(&s, 0, 9).unwrap().len(), 5, "no more than the frames");
    }

    #[test]
    fn trial_frames_keep_every_candidate_and_stay_near_the_cap() {
        assert_eq!(trial_frames(9, &[4, 0]), (0..9).collect::<Vec<_>>());
        let kept = trial_frames(400, &[17, 250, 399, 3]);
        for c in [17, 250, 399, 3] {
            assert!(kept.contains(&c), "{kept:?}");
        }
        assert!(kept.windows(2).all(|w| w[0] < w[1]), "{kept:?}");
        assert!(kept.len() <= TRIAL_FRAMES && kept.len() >= TRIAL_FRAMES - 2, "{kept:?}");
        assert!(kept.contains(&0) && kept.contains(&399));
    }
}
