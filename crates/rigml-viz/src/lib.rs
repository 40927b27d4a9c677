//! CPU renders of skinned characters, for looking at weights without a 3D package or a GPU:
//! shaded front/side/back views coloured by one joint's weights (heat map), by dominant joint,
//! or by all joints blended; pose sheets of the character deformed by several poses; and
//! side-by-side comparisons of two weight sets with their difference as a heat map.
//!
//! [`viewer`] is the local web viewer behind `rigml view` (three.js in the browser).
//!
//! Deformation uses [`rigml_core::lbs`]; the rasteriser is [`raster`]. Outputs are
//! [`RgbaImage`]s with a transparent background, encoded with [`encode_png`] (the caller writes the file).

pub mod colormap;
pub mod error;
pub mod output;
pub mod raster;
pub mod render;
pub mod viewer;

pub use error::VizError;
pub use output::encode_png;
pub use raster::{Camera, Frame, RgbaImage, View, NO_TRIANGLE};
pub use render::{
    poses_from_clip, render_compare, render_pose_sheet, render_weights, render_weights_frame, vertex_colours,
    Comparison, RenderOptions, WeightMode, MAX_PANELS, MAX_PIXELS, MAX_SIZE, MIN_SIZE,
};
