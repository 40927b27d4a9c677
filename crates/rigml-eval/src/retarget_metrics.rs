//! Retargeting and cleanup metrics, METRICS.md §7, on joint position tracks in glTF Y-up space
//! (ground plane `y = 0`). Tracks are `frames[t][joint]` or one joint's `track[t]`.
//! Every function returns `None` when its input is too short or a reference length is not
//! positive, rather than dividing by zero.

use glam::Vec3;

/// Contact height threshold, in hip heights.
pub const CONTACT_HEIGHT: f32 = 0.05;
/// Contact horizontal speed threshold, in hip heights per second.
pub const CONTACT_SPEED: f32 = 0.5;
/// Penetration depth counted in the frame share, in hip heights.
pub const PENETRATION_DEPTH: f32 = 0.01;

fn horizontal(v: Vec3) -> f32 {
    (v.x * v.x + v.z * v.z).sqrt()
}

/// Leg length `L`: thigh + shin, averaged over the given legs `(hip, knee, ankle)` at rest.
pub fn leg_length(legs: &[(Vec3, Vec3, Vec3)]) -> Option<f32> {
    if legs.is_empty() {
        return None;
    }
    let sum: f32 = legs.iter().map(|(h, k, a)| h.distance(*k) + k.distance(*a)).sum();
    Some(sum / legs.len() as f32)
}

/// Bone-length drift: `max_{b,t} |ℓ_b(t) - ℓ_b^rest| / ℓ_b^rest`. Bones with a rest length of
/// zero (end-sites) are skipped, as their relative change is undefined.
pub fn bone_length_drift(frames: &[Vec<Vec3>], parents: &[Option<usize>], rest: &[Vec3]) -> Option<f64> {
    let mut worst: Option<f64> = None;
    for (j, p) in parents.iter().enumerate() {
        let Some(p) = *p else { continue };
        let (Some(a), Some(b)) = (rest.get(j), rest.get(p)) else {
            continue;
        };
        let l_rest = f64::from(a.distance(*b));
        if l_rest <= 1e-12 {
            continue;
        }
        for f in frames {
            if let (Some(a), Some(b)) = (f.get(j), f.get(p)) {
                let d = (f64::from(a.distance(*b)) - l_rest).abs() / l_rest;
                worst = Some(worst.map_or(d, |w| w.max(d)));
            }
        }
    }
    worst
}

/// Contact flags of one foot joint: `y < 0.05 H` and horizontal speed `< 0.5 H/s` (central
/// difference, one-sided at the ends; a single frame has speed 0).
pub fn contacts(track: &[Vec3], hip_height: f32, fps: f32) -> Vec<bool> {
    let n = track.len();
    (0..n)
        .map(|t| {
            let speed = match (t.checked_sub(1), (t + 1 < n).then_some(t + 1)) {
                (Some(a), Some(b)) => horizontal(track[b] - track[a]) * fps / 2.0,
                (None, Some(b)) => horizontal(track[b] - track[t]) * fps,
                (Some(a), None) => horizontal(track[t] - track[a]) * fps,
                (None, None) => 0.0,
            };
            track[t].y < CONTACT_HEIGHT * hip_height && speed < CONTACT_SPEED * hip_height
        })
        .collect()
}

/// Foot skate in `H/s`: horizontal travel between consecutive contact frames, summed over feet,
/// divided by the clip duration `(F-1)/fps` and by `H`.
pub fn foot_skate(feet: &[Vec<Vec3>], hip_height: f32, fps: f32) -> Option<f64> {
    let frames = feet.iter().map(Vec::len).max()?;
    if frames < 2 || hip_height <= 0.0 || fps <= 0.0 {
        return None;
    }
    let duration = (frames - 1) as f64 / f64::from(fps);
    let mut travel = 0.0f64;
    for track in feet {
        let c = contacts(track, hip_height, fps);
        for t in 1..track.len() {
            if c[t - 1] && c[t] {
                travel += f64::from(horizontal(track[t] - track[t - 1]));
            }
        }
    }
    Some(travel / duration / f64::from(hip_height))
}

/// End-effector error in leg lengths: `mean_{t,e} |(p_e^tgt - p_hips^tgt)/L_tgt - (p_e^src - p_hips^src)/L_src|`.
/// Each frame is `(hips, effectors)`; source and target must have the same frame and effector counts.
pub fn end_effector_error(src: &[(Vec3, Vec<Vec3>)], tgt: &[(Vec3, Vec<Vec3>)], l_src: f32, l_tgt: f32) -> Option<f64> {
    if src.len() != tgt.len() || src.is_empty() || l_src <= 0.0 || l_tgt <= 0.0 {
        return None;
    }
    let (mut sum, mut count) = (0.0f64, 0usize);
    for ((hs, es), (ht, et)) in src.iter().zip(tgt) {
        if es.len() != et.len() {
            return None;
        }
        for (s, t) in es.iter().zip(et) {
            let d = (*t - *ht) / l_tgt - (*s - *hs) / l_src;
            sum += f64::from(d.length());
            count += 1;
        }
    }
    (count > 0).then(|| sum / count as f64)
}

/// Jitter in `H/s³`: `mean_{t,joints} |p_{t+3} - 3p_{t+2} + 3p_{t+1} - p_t| / Δt³`, positions / H.
pub fn jitter(frames: &[Vec<Vec3>], hip_height: f32, fps: f32) -> Option<f64> {
    if frames.len() < 4 || hip_height <= 0.0 || fps <= 0.0 {
        return None;
    }
    let joints = frames.iter().map(Vec::len).min()?;
    if joints == 0 {
        return None;
    }
    let dt3 = (1.0 / f64::from(fps)).powi(3);
    let (mut sum, mut count) = (0.0f64, 0usize);
    for w in frames.windows(4) {
        for (((a, b), c), d) in w[0].iter().zip(&w[1]).zip(&w[2]).zip(&w[3]) {
            let d = *d - 3.0 * *c + 3.0 * *b - *a;
            sum += f64::from(d.length()) / f64::from(hip_height) / dt3;
            count += 1;
        }
    }
    Some(sum / count as f64)
}

/// Foot penetration: `(mean_t max_feet max(0, -y)/H, share of frames deeper than 0.01 H)`.
pub fn penetration(feet: &[Vec<Vec3>], hip_height: f32) -> Option<(f64, f64)> {
    let frames = feet.iter().map(Vec::len).max()?;
    if frames == 0 || hip_height <= 0.0 {
        return None;
    }
    let (mut sum, mut deep) = (0.0f64, 0usize);
    for t in 0..frames {
        let depth = feet
            .iter()
            .filter_map(|f| f.get(t))
            .map(|p| (-p.y).max(0.0))
            .fold(0.0f32, f32::max);
        sum += f64::from(depth / hip_height);
        if depth > PENETRATION_DEPTH * hip_height {
            deep += 1;
        }
    }
    Some((sum / frames as f64, deep as f64 / frames as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-6, "{a} != {b}");
    }

    #[test]
    fn drift_hand_computed() {
        // Rest bone length 1; frames 1.1 and 0.8 -> worst |0.8 - 1| / 1 = 0.2.
        let rest = vec![Vec3::ZERO, Vec3::Y];
        let frames = vec![vec![Vec3::ZERO, Vec3::Y * 1.1], vec![Vec3::ZERO, Vec3::Y * 0.8]];
        close(bone_length_drift(&frames, &[None, Some(0)], &rest).unwrap(), 0.2);
        assert!(bone_length_drift(&frames, &[None, None], &rest).is_none());
    }

    #[test]
    fn skate_hand_computed() {
        // H = 1, fps = 10, foot on the ground moving 0.01 per frame over 5 frames: speed
        // 0.1 H/s < 0.5 -> contact everywhere; travel 4·0.01 = 0.04 over (5-1)/10 s -> 0.1 H/s.
        let track: Vec<Vec3> = (0..5).map(|t| Vec3::new(0.01 * t as f32, 0.0, 0.0)).collect();
        assert!(contacts(&track, 1.0, 10.0).iter().all(|&c| c));
        close(foot_skate(&[track], 1.0, 10.0).unwrap(), 0.1);
        // Moving 0.1 per frame = 1 H/s: no contact, no skate.
        let fast: Vec<Vec3> = (0..5).map(|t| Vec3::new(0.1 * t as f32, 0.0, 0.0)).collect();
        close(foot_skate(&[fast], 1.0, 10.0).unwrap(), 0.0);
    }

    #[test]
    fn end_effector_hand_computed() {
        // Source hand 1 leg length right of the hips; target the same -> 0.
        // Target hand at 1.5 leg lengths -> 0.5.
        let src = vec![(Vec3::Y, vec![Vec3::new(1.0, 1.0, 0.0)])];
        let same = vec![(Vec3::Y * 2.0, vec![Vec3::new(2.0, 2.0, 0.0)])];
        let off = vec![(Vec3::Y * 2.0, vec![Vec3::new(3.0, 2.0, 0.0)])];
        close(end_effector_error(&src, &same, 1.0, 2.0).unwrap(), 0.0);
        close(end_effector_error(&src, &off, 1.0, 2.0).unwrap(), 0.5);
    }

    #[test]
    fn jitter_hand_computed() {
        // x = t²: third difference 0. x = t³ at fps 1: third difference 6 -> 6 H/s³ (H = 1);
        // with H = 2 it halves.
        let quad: Vec<Vec<Vec3>> = (0..6).map(|t| vec![Vec3::X * (t * t) as f32]).collect();
        close(jitter(&quad, 1.0, 1.0).unwrap(), 0.0);
        let cubic: Vec<Vec<Vec3>> = (0..6).map(|t| vec![Vec3::X * (t * t * t) as f32]).collect();
        close(jitter(&cubic, 1.0, 1.0).unwrap(), 6.0);
        close(jitter(&cubic, 2.0, 1.0).unwrap(), 3.0);
        assert!(jitter(&cubic[..3], 1.0, 1.0).is_none());
    }

    #[test]
    fn penetration_hand_computed() {
        // Depths .02, 0, 0 (H = 1): mean .02/3; one frame of three deeper than .01.
        let foot = vec![Vec3::new(0.0, -0.02, 0.0), Vec3::ZERO, Vec3::Y * 0.1];
        let (mean, share) = penetration(&[foot], 1.0).unwrap();
        close(mean, 0.02 / 3.0);
        close(share, 1.0 / 3.0);
        close(
            f64::from(leg_length(&[(Vec3::Y * 2.0, Vec3::Y, Vec3::ZERO)]).unwrap()),
            2.0,
        );
    }
}
