//! The rendering entry points: weights, pose sheets, comparisons. Each checks its inputs,
//! colours the vertices, fits one camera per view over everything shown in that view (so
//! panels of a sheet share a scale), rasterises the panels in parallel and lays them out in a
//! grid (columns left to right, rows top to bottom).

use crate::colormap::{difference, heat, joint_colour, UNSKINNED};
use crate::raster::{rasterize, Camera, Frame, RgbaImage, View};
use crate::VizError;
use glam::Vec3;
use rayon::prelude::*;
use rigml_core::{lbs, skinning_matrices, Character, Pose, Skin};

/// Smallest panel side in pixels.
pub const MIN_SIZE: u32 = 16;
/// Largest panel side in pixels.
pub const MAX_SIZE: u32 = 4096;
/// Most panels in one image (views × poses, or views × 3 for comparisons).
pub const MAX_PANELS: usize = 256;
/// Most pixels in one image (about 400 MB of buffers while rendering).
pub const MAX_PIXELS: u64 = 1 << 26;

/// What the vertex colours show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightMode {
    /// One joint's weight as a heat map (0 = dark purple, 1 = yellow).
    Joint(usize),
    /// Each vertex in the colour of its strongest joint (grey when unskinned).
    Dominant,
    /// Joint colours blended by weight: soft borders show where influences mix.
    All,
}

/// How to render. `Default`: dominant joints, 512 px panels, front/side/back.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderOptions {
    pub mode: WeightMode,
    /// Side of each square panel in pixels, [`MIN_SIZE`]..=[`MAX_SIZE`].
    pub size: u32,
    /// Views shown, left to right (or top to bottom in pose sheets).
    pub views: Vec<View>,
    /// Weight difference drawn full red in comparisons (smaller differences are grey to
    /// yellow to orange). Default 0.5.
    pub difference_scale: f32,
    /// Weight renders and comparisons draw the mesh skinned by the skeleton's rest pose (how
    /// viewers show the file; some files, e.g. Khronos RiggedFigure, keep their bind-space
    /// mesh lying down and stand it up with the root's rest rotation). `false` draws the raw
    /// bind-space positions. Default true. Pose sheets draw the poses they are given.
    pub rest_pose: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            mode: WeightMode::Dominant,
            size: 512,
            views: vec![View::Front, View::Side, View::Back],
            difference_scale: 0.5,
            rest_pose: true,
        }
    }
}

/// A comparison render and the numbers behind its difference row.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Row 1: weight set A; row 2: weight set B; row 3: their difference. One column per view.
    pub image: RgbaImage,
    /// Per vertex: `|a_j − b_j|` for `WeightMode::Joint(j)`, else half the L1 distance of the
    /// two rows (0 = identical, 1 = disjoint).
    pub difference: Vec<f32>,
    pub max_difference: f32,
    pub mean_difference: f32,
}

/// Render the character's weights, one panel per view side by side.
pub fn render_weights(character: &Character, options: &RenderOptions) -> Result<RgbaImage, VizError> {
    Ok(render_weights_frame(character, options)?.image)
}

/// [`render_weights`] plus the triangle drawn at each pixel (for statistics over the image).
pub fn render_weights_frame(character: &Character, options: &RenderOptions) -> Result<Frame, VizError> {
    let skin = checked(character, options, options.views.len())?;
    let colours = vertex_colours(character, skin, options.mode)?;
    let positions = display_positions(character, skin, options)?;
    let positions = positions.as_slice();
    let cells = options
        .views
        .iter()
        .map(|&view| {
            Ok((
                positions,
                colours.as_slice(),
                camera(character, view, &[positions], options)?,
            ))
        })
        .collect::<Result<Vec<_>, VizError>>()?;
    Ok(grid(character, &cells, options.views.len(), options.size))
}

/// Render the character deformed by each pose (linear blend skinning): one column per pose,
/// one row per view, all panels of a view at the same scale so motion reads as motion.
pub fn render_pose_sheet(
    character: &Character,
    poses: &[Pose],
    options: &RenderOptions,
) -> Result<RgbaImage, VizError> {
    if poses.is_empty() {
        return Err(VizError::BadRequest {
            name: character.name.clone(),
            what: "a pose sheet needs at least one pose".into(),
        });
    }
    let skin = checked(character, options, options.views.len().saturating_mul(poses.len()))?;
    let colours = vertex_colours(character, skin, options.mode)?;
    let deformed = poses
        .iter()
        .enumerate()
        .map(|(index, pose)| deform(character, skin, pose, index))
        .collect::<Result<Vec<Vec<Vec3>>, VizError>>()?;
    let sets: Vec<&[Vec3]> = deformed.iter().map(Vec::as_slice).collect();
    let mut cells = Vec::with_capacity(sets.len() * options.views.len());
    for &view in &options.views {
        let cam = camera(character, view, &sets, options)?;
        cells.extend(sets.iter().map(|&p| (p, colours.as_slice(), cam)));
    }
    Ok(grid(character, &cells, poses.len(), options.size).image)
}

/// Compare two weight sets on the character's mesh (in the rest pose skinned by A when
/// `options.rest_pose`, else in bind space): A in the first row, B in the second, their
/// per-vertex difference (see [`Comparison::difference`]) in the third.
pub fn render_compare(
    character: &Character,
    a: &Skin,
    b: &Skin,
    options: &RenderOptions,
) -> Result<Comparison, VizError> {
    checked_shape(character, options, options.views.len().saturating_mul(3))?;
    let (vertex_count, joint_count) = (character.mesh.vertex_count(), character.skeleton.joint_count());
    for (which, skin) in [("A", a), ("B", b)] {
        skin.validate(vertex_count, joint_count)
            .map_err(|source| VizError::BadSkin {
                name: character.name.clone(),
                which,
                source,
            })?;
    }
    let colours_a = vertex_colours(character, a, options.mode)?;
    let colours_b = vertex_colours(character, b, options.mode)?;
    let diff: Vec<f32> = (0..vertex_count)
        .map(|v| row_difference(a.influences(v), b.influences(v), options.mode))
        .collect();
    let colours_d: Vec<Vec3> = diff.iter().map(|&d| difference(d, options.difference_scale)).collect();
    let positions = display_positions(character, a, options)?;
    let positions = positions.as_slice();
    let cameras = options
        .views
        .iter()
        .map(|&view| camera(character, view, &[positions], options))
        .collect::<Result<Vec<_>, VizError>>()?;
    let mut cells = Vec::with_capacity(cameras.len() * 3);
    for colours in [&colours_a, &colours_b, &colours_d] {
        cells.extend(cameras.iter().map(|&cam| (positions, colours.as_slice(), cam)));
    }
    let image = grid(character, &cells, options.views.len(), options.size).image;
    let max_difference = diff.iter().copied().fold(0.0, f32::max);
    let mean_difference = if diff.is_empty() {
        0.0
    } else {
        diff.iter().map(|&d| d as f64).sum::<f64>() as f32 / diff.len() as f32
    };
    Ok(Comparison {
        image,
        difference: diff,
        max_difference,
        mean_difference,
    })
}

/// `count` poses sampled evenly from the first to the last key of clip `clip` (one pose: the
/// first key).
pub fn poses_from_clip(character: &Character, clip: usize, count: usize) -> Result<Vec<Pose>, VizError> {
    let bad = |what: String| VizError::BadRequest {
        name: character.name.clone(),
        what,
    };
    let Some(c) = character.clips.get(clip) else {
        return Err(bad(format!(
            "clip {clip} does not exist ({} clips)",
            character.clips.len()
        )));
    };
    if count == 0 || count > MAX_PANELS {
        return Err(bad(format!("pose count {count} is outside 1..={MAX_PANELS}")));
    }
    let (start, end) = (c.start(), c.duration().max(c.start()));
    Ok((0..count)
        .map(|f| {
            let t = if count == 1 {
                start
            } else {
                start + (end - start) * f as f32 / (count - 1) as f32
            };
            c.sample(&character.skeleton, t)
        })
        .collect())
}

/// Per-vertex colours of `skin` on `character` in `mode` (linear RGB in [0, 1]).
pub fn vertex_colours(character: &Character, skin: &Skin, mode: WeightMode) -> Result<Vec<Vec3>, VizError> {
    let joint_count = character.skeleton.joint_count();
    if let WeightMode::Joint(j) = mode {
        if j >= joint_count {
            return Err(VizError::NoJoint {
                name: character.name.clone(),
                joint: j,
                joint_count,
            });
        }
    }
    Ok(skin
        .rows()
        .map(|row| match mode {
            WeightMode::Joint(j) => heat(row.iter().find(|i| i.joint as usize == j).map_or(0.0, |i| i.weight)),
            WeightMode::Dominant => row
                .iter()
                .fold(None, |best: Option<&rigml_core::Influence>, i| match best {
                    Some(b) if b.weight >= i.weight => Some(b),
                    _ => Some(i),
                })
                .map_or(UNSKINNED, |i| joint_colour(i.joint as usize)),
            WeightMode::All => {
                let total: f32 = row.iter().map(|i| i.weight).sum();
                let mixed: Vec3 = row.iter().map(|i| joint_colour(i.joint as usize) * i.weight).sum();
                mixed + UNSKINNED * (1.0 - total).clamp(0.0, 1.0)
            }
        })
        .collect())
}

/// Difference of two weight rows: one joint's absolute difference, or half the L1 distance.
fn row_difference(a: &[rigml_core::Influence], b: &[rigml_core::Influence], mode: WeightMode) -> f32 {
    let weight = |row: &[rigml_core::Influence], j: u32| row.iter().find(|i| i.joint == j).map_or(0.0, |i| i.weight);
    match mode {
        WeightMode::Joint(j) => (weight(a, j as u32) - weight(b, j as u32)).abs(),
        WeightMode::Dominant | WeightMode::All => {
            let in_a: f32 = a.iter().map(|i| (i.weight - weight(b, i.joint)).abs()).sum();
            let only_b: f32 = b
                .iter()
                .filter(|i| !a.iter().any(|x| x.joint == i.joint))
                .map(|i| i.weight)
                .sum();
            0.5 * (in_a + only_b)
        }
    }
}

/// The mesh deformed by `pose` (linear blend skinning); `index` names the pose in errors.
fn deform(character: &Character, skin: &Skin, pose: &Pose, index: usize) -> Result<Vec<Vec3>, VizError> {
    let matrices = skinning_matrices(&character.skeleton, pose).map_err(|source| VizError::BadPose {
        name: character.name.clone(),
        index,
        source,
    })?;
    Ok(lbs(&character.mesh.positions, skin, &matrices))
}

/// The positions weight renders show: rest-pose skinned, or bind space (see
/// [`RenderOptions::rest_pose`]).
fn display_positions(character: &Character, skin: &Skin, options: &RenderOptions) -> Result<Vec<Vec3>, VizError> {
    if options.rest_pose {
        deform(character, skin, &Pose::rest(&character.skeleton), 0)
    } else {
        Ok(character.mesh.positions.clone())
    }
}

/// Validate the character and the request shape; return its skin.
fn checked<'a>(character: &'a Character, options: &RenderOptions, panels: usize) -> Result<&'a Skin, VizError> {
    checked_shape(character, options, panels)?;
    character.skin.as_ref().ok_or_else(|| VizError::NoSkin {
        name: character.name.clone(),
    })
}

fn checked_shape(character: &Character, options: &RenderOptions, panels: usize) -> Result<(), VizError> {
    if !(MIN_SIZE..=MAX_SIZE).contains(&options.size) {
        return Err(VizError::BadSize {
            what: format!("panel size {} px is outside {MIN_SIZE}..={MAX_SIZE}", options.size),
        });
    }
    if options.views.is_empty() || panels > MAX_PANELS {
        return Err(VizError::BadSize {
            what: format!("{panels} panels requested; 1..={MAX_PANELS} allowed (and at least one view)"),
        });
    }
    let pixels = panels as u64 * options.size as u64 * options.size as u64;
    if pixels > MAX_PIXELS {
        return Err(VizError::BadSize {
            what: format!(
                "{panels} panels of {0}x{0} px make {pixels} pixels; at most {MAX_PIXELS} allowed",
                options.size
            ),
        });
    }
    character.validate().map_err(|source| VizError::Invalid {
        name: character.name.clone(),
        source,
    })?;
    if character.mesh.triangles.is_empty() {
        return Err(VizError::Empty {
            name: character.name.clone(),
            what: "the mesh has no triangles".into(),
        });
    }
    Ok(())
}

fn camera(character: &Character, view: View, sets: &[&[Vec3]], options: &RenderOptions) -> Result<Camera, VizError> {
    Camera::fit(view, sets, options.size).ok_or_else(|| VizError::Empty {
        name: character.name.clone(),
        what: "no vertex position is finite".into(),
    })
}

/// Rasterise every cell in parallel and lay them out `columns` wide, row by row. The triangle
/// map of the result covers the whole image.
fn grid(character: &Character, cells: &[(&[Vec3], &[Vec3], Camera)], columns: usize, size: u32) -> Frame {
    let frames: Vec<Frame> = cells
        .par_iter()
        .map(|(positions, colours, cam)| rasterize(positions, &character.mesh.triangles, colours, cam))
        .collect();
    let columns = columns.max(1);
    let rows = frames.len().div_ceil(columns);
    let (width, height) = (columns as u32 * size, rows as u32 * size);
    let mut image = RgbaImage::new(width, height);
    let mut triangle = vec![crate::NO_TRIANGLE; width as usize * height as usize];
    for (k, frame) in frames.iter().enumerate() {
        let (x0, y0) = ((k % columns) as u32 * size, (k / columns) as u32 * size);
        image.blit(&frame.image, x0, y0);
        for (row, ids) in frame.triangle.chunks(size as usize).enumerate() {
            let start = (y0 as usize + row) * width as usize + x0 as usize;
            if let Some(dst) = triangle.get_mut(start..start + ids.len()) {
                dst.copy_from_slice(ids);
            }
        }
    }
    Frame { image, triangle }
}
