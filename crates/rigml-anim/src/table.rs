//! IK-Rig encodings as tables: one row per frame, one column per number, written as CSV (with
//! a header naming the columns) or as a NumPy `.npy` array of `f32` (same column order, see
//! [`columns`]). CSV can be read back for decoding.

use crate::encode::{ChainGoal, RigClip, RigFrame};
use crate::humanoid::ChainKind;
use crate::AnimError;
use glam::{Quat, Vec2, Vec3};
use std::fmt::Write;

/// Column names, in order: `time`, the ground frame, the hips, then for each chain its root,
/// offset, pole and rotation, then shoulders, toes, the four contact flags (0 or 1) and the
/// two ankle heights.
pub fn columns() -> Vec<String> {
    let mut c: Vec<String> = ["time", "origin_x", "origin_z", "forward_x", "forward_z"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let vec3 = |c: &mut Vec<String>, p: &str| c.extend(["x", "y", "z"].map(|a| format!("{p}_{a}")));
    let quat = |c: &mut Vec<String>, p: &str| c.extend(["qx", "qy", "qz", "qw"].map(|a| format!("{p}_{a}")));
    vec3(&mut c, "hips");
    quat(&mut c, "hips");
    for kind in ChainKind::ALL {
        let n = kind.name();
        vec3(&mut c, &format!("{n}_root"));
        vec3(&mut c, &format!("{n}_offset"));
        vec3(&mut c, &format!("{n}_pole"));
        quat(&mut c, &format!("{n}_effector"));
    }
    for p in ["left_shoulder", "right_shoulder", "left_toes", "right_toes"] {
        quat(&mut c, p);
    }
    c.extend(
        [
            "contact_left_ankle",
            "contact_left_toes",
            "contact_right_ankle",
            "contact_right_toes",
        ]
        .map(String::from),
    );
    c.extend(["left_foot_height", "right_foot_height"].map(String::from));
    c
}

/// One frame as numbers in [`columns`] order.
pub fn row(time: f32, f: &RigFrame) -> Vec<f32> {
    let mut r = vec![time, f.origin.x, f.origin.y, f.forward.x, f.forward.y];
    r.extend(f.hips.to_array());
    r.extend(f.hips_rotation.to_array());
    for g in &f.chains {
        r.extend(g.root.to_array());
        r.extend(g.offset.to_array());
        r.extend(g.pole.to_array());
        r.extend(g.rotation.to_array());
    }
    for q in f.shoulders.iter().chain(&f.toes) {
        r.extend(q.to_array());
    }
    r.extend(f.contacts.map(|c| if c { 1.0 } else { 0.0 }));
    r.extend(f.foot_heights);
    r
}

/// The frame in a row of [`columns`] order (the row must have the right length).
fn frame_of(r: &[f32]) -> RigFrame {
    let mut at = 1;
    let mut take = |n: usize| {
        let s = &r[at..at + n];
        at += n;
        s
    };
    let origin = Vec2::from_slice(take(2));
    let forward = Vec2::from_slice(take(2));
    let hips = Vec3::from_slice(take(3));
    let hips_rotation = Quat::from_slice(take(4)).normalize();
    let mut chains = [ChainGoal::NEUTRAL; 6];
    for g in &mut chains {
        g.root = Vec3::from_slice(take(3));
        g.offset = Vec3::from_slice(take(3));
        g.pole = Vec3::from_slice(take(3));
        g.rotation = Quat::from_slice(take(4)).normalize();
    }
    let mut q = [Quat::IDENTITY; 4];
    for x in &mut q {
        *x = Quat::from_slice(take(4)).normalize();
    }
    let c = take(4);
    let heights = take(2);
    RigFrame {
        origin,
        forward,
        hips,
        hips_rotation,
        chains,
        shoulders: [q[0], q[1]],
        toes: [q[2], q[3]],
        contacts: [c[0] > 0.5, c[1] > 0.5, c[2] > 0.5, c[3] > 0.5],
        foot_heights: [heights[0], heights[1]],
    }
}

/// The clip as CSV text: a header line of [`columns`], then one line per frame.
pub fn to_csv(clip: &RigClip) -> String {
    let mut out = columns().join(",");
    out.push('\n');
    for (t, f) in clip.times.iter().zip(&clip.frames) {
        let cells: Vec<String> = row(*t, f).iter().map(|v| format!("{v}")).collect();
        let _ = writeln!(out, "{}", cells.join(","));
    }
    out
}

/// The clip as a `.npy` file (format 1.0, little-endian `f32`, C order, shape `(frames,
/// columns)`), columns as in [`columns`].
pub fn to_npy(clip: &RigClip) -> Vec<u8> {
    let width = columns().len();
    let mut header = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {width}), }}",
        clip.frames.len()
    );
    // Pad so that magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + 4 * width * clip.frames.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for (t, f) in clip.times.iter().zip(&clip.frames) {
        for v in row(*t, f) {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// Read a CSV written by [`to_csv`]; `file` names it in errors (line numbers are 1-based).
pub fn from_csv(text: &str, file: &str, name: &str) -> Result<RigClip, AnimError> {
    let err = |line: usize, message: String| AnimError::Encoding {
        asset: file.to_string(),
        place: format!("line {line}"),
        message,
    };
    let expected = columns();
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines.next().ok_or_else(|| err(1, "empty file".into()))?;
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    if names != expected {
        return Err(err(
            1,
            format!(
                "header does not match the IK-Rig columns ({} columns, expected {} starting {:?})",
                names.len(),
                expected.len(),
                &expected[..3]
            ),
        ));
    }
    let (mut times, mut frames) = (Vec::new(), Vec::new());
    for (k, line) in lines {
        let values: Result<Vec<f32>, _> = line.split(',').map(|c| c.trim().parse::<f32>()).collect();
        let values = values.map_err(|e| err(k + 1, format!("not a number: {e}")))?;
        if values.len() != expected.len() {
            return Err(err(
                k + 1,
                format!("{} values, expected {}", values.len(), expected.len()),
            ));
        }
        if let Some(c) = values.iter().position(|v| !v.is_finite()) {
            return Err(err(k + 1, format!("column {} is not finite", expected[c])));
        }
        if times.last().is_some_and(|&t| values[0] <= t) {
            return Err(err(k + 1, "times must increase".into()));
        }
        times.push(values[0]);
        frames.push(frame_of(&values));
    }
    if times.len() < 2 {
        return Err(err(1, "fewer than two frames".into()));
    }
    let fps = (times.len() - 1) as f32 / (times[times.len() - 1] - times[0]);
    Ok(RigClip {
        name: name.to_string(),
        fps,
        times,
        frames,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clip() -> RigClip {
        let mut f = RigFrame {
            origin: Vec2::new(0.5, -1.0),
            forward: Vec2::new(0.0, 1.0),
            hips: Vec3::new(0.0, 1.0, 0.0),
            hips_rotation: Quat::from_rotation_y(0.3),
            chains: [ChainGoal {
                root: Vec3::X,
                offset: Vec3::new(0.1, -0.9, 0.2),
                pole: Vec3::Z,
                rotation: Quat::from_rotation_x(0.2),
            }; 6],
            shoulders: [Quat::IDENTITY; 2],
            toes: [Quat::from_rotation_z(0.1); 2],
            contacts: [true, false, false, true],
            foot_heights: [0.0, 0.25],
        };
        let g = f;
        f.origin.x = 0.75;
        RigClip {
            name: "c".into(),
            fps: 30.0,
            times: vec![0.0, 1.0 / 30.0],
            frames: vec![g, f],
        }
    }

    #[test]
    fn csv_round_trips() {
        let c = clip();
        let back = from_csv(&to_csv(&c), "c.csv", "c").unwrap();
        assert_eq!(back.frames.len(), 2);
        assert!((back.fps - 30.0).abs() < 1e-3);
        assert_eq!(back.frames[1].contacts, c.frames[1].contacts);
        assert!((back.frames[1].origin - c.frames[1].origin).length() < 1e-6);
        assert!(back.frames[0].toes[0].angle_between(c.frames[0].toes[0]) < 1e-5);
        assert_eq!(row(0.0, &c.frames[0]).len(), columns().len());
    }

    #[test]
    fn bad_csv_names_the_line() {
        let text = to_csv(&clip()).replace("0.75", "abc");
        let e = from_csv(&text, "c.csv", "c").unwrap_err().to_string();
        assert!(e.contains("c.csv: line 3") && e.contains("not a number"), "{e}");
        let e = from_csv("a,b\n1,2\n", "c.csv", "c").unwrap_err().to_string();
        assert!(e.contains("header"), "{e}");
    }

    #[test]
    fn npy_header_is_aligned_and_sized() {
        let c = clip();
        let bytes = to_npy(&c);
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        assert_eq!(bytes.len(), 10 + header_len + 4 * 2 * columns().len());
        let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
        assert!(header.contains(&format!("'shape': (2, {})", columns().len())));
    }
}
