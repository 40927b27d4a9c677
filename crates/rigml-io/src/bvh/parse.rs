//! BVH text → joints, channel layout and frame values (no interpretation yet).

use crate::IoError;
use glam::Vec3;
use std::path::Path;

/// One channel of a joint, as listed after `CHANNELS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChannelKind {
    /// Position along axis 0 (X), 1 (Y) or 2 (Z).
    Position(usize),
    /// Rotation in degrees about axis 0, 1 or 2.
    Rotation(usize),
}

/// A `ROOT`, `JOINT` or `End Site` block.
#[derive(Debug, Clone)]
pub(crate) struct RawJoint {
    pub name: String,
    pub parent: Option<usize>,
    pub offset: Option<Vec3>,
    pub channels: Vec<ChannelKind>,
    pub end_site: bool,
    /// Line of the block's keyword, for messages.
    pub line: usize,
}

/// The whole file before conversion.
pub(crate) struct RawBvh {
    pub joints: Vec<RawJoint>,
    /// Seconds per frame.
    pub frame_time: f64,
    /// `frames × channels` values, row-major, in file order.
    pub values: Vec<f32>,
    pub frame_count: usize,
    pub channel_count: usize,
    /// What was repaired (one line each, `line N: ...`).
    pub warnings: Vec<String>,
}

/// Tokens of the hierarchy section with their 1-based line numbers.
struct Tokens<'a> {
    items: Vec<(&'a str, usize)>,
    next: usize,
    /// Line to blame when the tokens run out.
    end_line: usize,
}

impl<'a> Tokens<'a> {
    fn next(&mut self) -> Option<(&'a str, usize)> {
        let t = self.items.get(self.next).copied();
        self.next += 1;
        t
    }

    fn expect_any(&mut self, what: &str) -> Result<(&'a str, usize), String> {
        self.next()
            .ok_or_else(|| format!("line {}: unexpected end of HIERARCHY, expected {what}", self.end_line))
    }

    fn expect(&mut self, word: &str) -> Result<usize, String> {
        let (t, line) = self.expect_any(&format!("'{word}'"))?;
        if t.eq_ignore_ascii_case(word) {
            Ok(line)
        } else {
            Err(format!("line {line}: expected '{word}', found '{t}'"))
        }
    }

    fn float(&mut self, what: &str) -> Result<f32, String> {
        let (t, line) = self.expect_any(what)?;
        parse_finite(t).map_err(|e| format!("line {line}: {what}: {e}"))
    }
}

fn parse_finite(t: &str) -> Result<f32, String> {
    match t.parse::<f32>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(_) => Err(format!("'{t}' is not finite")),
        Err(_) => Err(format!("'{t}' is not a number")),
    }
}

fn channel_kind(word: &str) -> Option<ChannelKind> {
    let lower = word.to_ascii_lowercase();
    let (axis, rest) = lower.split_at_checked(1)?;
    let axis = match axis {
        "x" => 0,
        "y" => 1,
        "z" => 2,
        _ => return None,
    };
    match rest {
        "position" => Some(ChannelKind::Position(axis)),
        "rotation" => Some(ChannelKind::Rotation(axis)),
        _ => None,
    }
}

/// Parse BVH text. Errors carry `line N: ...` (the caller adds the file name).
pub(crate) fn parse(text: &str, path: &Path) -> Result<RawBvh, IoError> {
    parse_inner(text).map_err(|m| IoError::parse(path, m))
}

fn parse_inner(text: &str) -> Result<RawBvh, String> {
    if text.trim().is_empty() {
        return Err("empty file (no HIERARCHY, no MOTION)".to_string());
    }
    let lines: Vec<&str> = text.lines().collect();
    let motion = lines
        .iter()
        .position(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.eq_ignore_ascii_case("MOTION"))
        })
        .ok_or_else(|| "no MOTION section".to_string())?;
    let mut tokens = Tokens {
        items: lines[..motion]
            .iter()
            .enumerate()
            .flat_map(|(i, l)| l.split_whitespace().map(move |w| (w, i + 1)))
            .collect(),
        next: 0,
        end_line: motion + 1,
    };
    let joints = parse_hierarchy(&mut tokens)?;
    let channel_count = joints.iter().map(|j| j.channels.len()).sum();
    let (frame_count, frame_time, values, warnings) = parse_motion(&lines, motion, channel_count)?;
    Ok(RawBvh {
        joints,
        frame_time,
        values,
        frame_count,
        channel_count,
        warnings,
    })
}

fn parse_hierarchy(tokens: &mut Tokens) -> Result<Vec<RawJoint>, String> {
    tokens.expect("HIERARCHY")?;
    let mut joints: Vec<RawJoint> = Vec::new();
    // Open blocks, innermost last: an explicit stack, so deep nesting cannot overflow.
    let mut stack: Vec<usize> = Vec::new();
    while let Some((word, line)) = tokens.next() {
        let upper = word.to_ascii_uppercase();
        match upper.as_str() {
            "ROOT" | "JOINT" => {
                if upper == "ROOT" && !stack.is_empty() {
                    return Err(format!("line {line}: ROOT inside another joint (use JOINT)"));
                }
                if upper == "JOINT" && stack.is_empty() {
                    return Err(format!("line {line}: JOINT outside any ROOT"));
                }
                if let Some(&top) = stack.last() {
                    if joints.get(top).is_some_and(|j| j.end_site) {
                        return Err(format!("line {line}: an End Site cannot have children"));
                    }
                }
                let (name, _) = tokens.expect_any("a joint name")?;
                if name == "{" {
                    return Err(format!("line {line}: {upper} has no name"));
                }
                tokens.expect("{")?;
                stack.push(joints.len());
                joints.push(RawJoint {
                    name: name.to_string(),
                    parent: stack.iter().rev().nth(1).copied(),
                    offset: None,
                    channels: Vec::new(),
                    end_site: false,
                    line,
                });
            }
            "END" => {
                tokens.expect("Site")?;
                tokens.expect("{")?;
                let Some(&parent) = stack.last() else {
                    return Err(format!("line {line}: End Site outside any joint"));
                };
                if joints.get(parent).is_some_and(|j| j.end_site) {
                    return Err(format!("line {line}: an End Site cannot have children"));
                }
                stack.push(joints.len());
                joints.push(RawJoint {
                    name: String::new(),
                    parent: Some(parent),
                    offset: None,
                    channels: Vec::new(),
                    end_site: true,
                    line,
                });
            }
            "OFFSET" => {
                let joint = current(&mut joints, &stack, line, "OFFSET")?;
                if joint.offset.is_some() {
                    return Err(format!("line {line}: second OFFSET for joint '{}'", joint.name));
                }
                let offset = Vec3::new(
                    tokens.float("OFFSET x")?,
                    tokens.float("OFFSET y")?,
                    tokens.float("OFFSET z")?,
                );
                current(&mut joints, &stack, line, "OFFSET")?.offset = Some(offset);
            }
            "CHANNELS" => {
                let (count, _) = tokens.expect_any("a channel count")?;
                let count: usize = count
                    .parse()
                    .map_err(|_| format!("line {line}: channel count '{count}' is not a whole number"))?;
                let mut channels = Vec::with_capacity(count.min(16));
                for _ in 0..count {
                    let (w, l) = tokens.expect_any("a channel name")?;
                    let kind = channel_kind(w).ok_or_else(|| {
                        format!("line {l}: unknown channel '{w}' (expected X/Y/Z position or rotation)")
                    })?;
                    if matches!(kind, ChannelKind::Position(_)) && channels.contains(&kind) {
                        return Err(format!("line {l}: channel '{w}' listed twice"));
                    }
                    channels.push(kind);
                }
                let joint = current(&mut joints, &stack, line, "CHANNELS")?;
                if joint.end_site {
                    return Err(format!("line {line}: an End Site cannot have CHANNELS"));
                }
                if !joint.channels.is_empty() {
                    return Err(format!("line {line}: second CHANNELS for joint '{}'", joint.name));
                }
                joint.channels = channels;
            }
            "}" => {
                let Some(j) = stack.pop() else {
                    return Err(format!("line {line}: '}}' without an open joint"));
                };
                if let Some(joint) = joints.get(j) {
                    if joint.offset.is_none() {
                        let what = if joint.end_site { "End Site" } else { "joint" };
                        return Err(format!("line {}: {what} '{}' has no OFFSET", joint.line, joint.name));
                    }
                }
            }
            _ => return Err(format!("line {line}: unexpected '{word}' in HIERARCHY")),
        }
    }
    if let Some(&open) = stack.last() {
        let name = joints.get(open).map_or("", |j| j.name.as_str());
        return Err(format!(
            "line {}: HIERARCHY ends with joint '{name}' still open (missing '}}')",
            tokens.end_line
        ));
    }
    if joints.is_empty() {
        return Err(format!("line {}: HIERARCHY has no joints", tokens.end_line));
    }
    Ok(joints)
}

fn current<'j>(
    joints: &'j mut [RawJoint],
    stack: &[usize],
    line: usize,
    what: &str,
) -> Result<&'j mut RawJoint, String> {
    stack
        .last()
        .and_then(|&j| joints.get_mut(j))
        .ok_or_else(|| format!("line {line}: {what} outside any joint"))
}

/// Parse `Frames:`, `Frame Time:` and the frame lines after the MOTION line. Complete frame
/// lines beyond the declared count (an exporter's off-by-one, which assimp and Blender read)
/// are kept, with a warning; fewer lines than declared is a cut file and an error.
#[allow(clippy::type_complexity)]
fn parse_motion(
    lines: &[&str],
    motion: usize,
    channel_count: usize,
) -> Result<(usize, f64, Vec<f32>, Vec<String>), String> {
    let mut rest = lines.iter().enumerate().skip(motion + 1).map(|(i, l)| (i + 1, *l));
    let mut header = |label: &str| -> Result<(usize, String), String> {
        for (line, l) in rest.by_ref() {
            let l = l.trim();
            if l.is_empty() {
                continue;
            }
            let Some(value) = strip_prefix_ci(l, label) else {
                return Err(format!("line {line}: expected '{label}', found '{l}'"));
            };
            return Ok((line, value.trim().to_string()));
        }
        Err(format!("line {}: file ends before '{label}'", lines.len()))
    };
    let (line, frames) = header("Frames:")?;
    let frame_count: usize = frames
        .parse()
        .map_err(|_| format!("line {line}: frame count '{frames}' is not a whole number"))?;
    let (line, time) = header("Frame Time:")?;
    let frame_time: f64 = time
        .parse()
        .map_err(|_| format!("line {line}: frame time '{time}' is not a number"))?;
    if frame_count > 0 && !(frame_time.is_finite() && frame_time > 0.0) {
        return Err(format!("line {line}: frame time {time} must be a positive number"));
    }
    let mut values = Vec::new();
    let mut frames_seen = 0usize;
    let mut first_extra = None;
    for (line, l) in rest {
        if l.trim().is_empty() {
            continue;
        }
        if frames_seen == frame_count && first_extra.is_none() {
            first_extra = Some(line);
        }
        let start = values.len();
        for w in l.split_whitespace() {
            values.push(parse_finite(w).map_err(|e| format!("line {line}: frame {frames_seen}: {e}"))?);
        }
        let found = values.len() - start;
        if found != channel_count {
            return Err(format!(
                "line {line}: expected {channel_count} channel values, found {found}"
            ));
        }
        frames_seen += 1;
    }
    let mut warnings = Vec::new();
    if let Some(line) = first_extra {
        warnings.push(format!(
            "line {line}: 'Frames:' declares {frame_count} frames but the file has {frames_seen} complete frame lines; all {frames_seen} were read"
        ));
    } else if frames_seen != frame_count {
        return Err(format!(
            "line {}: 'Frames:' declares {frame_count} frames but the file has {frames_seen} frame lines",
            lines.len()
        ));
    }
    Ok((frames_seen, frame_time, values, warnings))
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    // Labels may use any spacing: "Frame Time:", "Frame  Time:" or "Frames :".
    let mut rest = s;
    for word in prefix.trim_end_matches(':').split(' ') {
        rest = rest.trim_start();
        let head = rest.get(..word.len())?;
        if !head.eq_ignore_ascii_case(word) {
            return None;
        }
        rest = &rest[word.len()..];
    }
    rest.trim_start().strip_prefix(':')
}
