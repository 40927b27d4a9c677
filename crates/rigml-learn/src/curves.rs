//! PNG of the training curves (plotters, bitmap backend): training loss (smoothed over
//! [`SMOOTH`] steps) and validation loss against the step, log-scaled.
//!
//! Text needs a TrueType font: the first of `$RIGML_FONT`, DejaVu Sans or Liberation Sans that
//! exists. Without one the curves are drawn without labels (blue = train, red = val).

use crate::train::History;
use crate::LearnError;
use plotters::prelude::*;
use std::sync::OnceLock;

/// Steps averaged per plotted training point.
pub const SMOOTH: usize = 25;

const SIZE: (u32, u32) = (900, 540);
const FONT_PATHS: [&str; 3] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

fn fonts() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        let env = std::env::var("RIGML_FONT").ok();
        for path in env.iter().map(String::as_str).chain(FONT_PATHS) {
            if let Ok(bytes) = std::fs::read(path) {
                let leaked: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, leaked).is_ok() {
                    return true;
                }
            }
        }
        false
    })
}

/// Smoothed training total loss: means of consecutive blocks of [`SMOOTH`] steps.
pub fn smoothed(history: &History) -> Vec<(f64, f64)> {
    history
        .train
        .chunks(SMOOTH)
        .filter(|c| !c.is_empty())
        .map(|c| {
            let step = c.last().map_or(0, |e| e.0) as f64;
            let mean = c.iter().map(|e| f64::from(e.1.total)).sum::<f64>() / c.len() as f64;
            (step, mean)
        })
        .collect()
}

/// The PNG bytes of the curves of one training run, or of every member of an ensemble (one pair
/// of lines per member, in the same colours).
pub fn png(histories: &[History]) -> Result<Vec<u8>, LearnError> {
    let train: Vec<Vec<(f64, f64)>> = histories.iter().map(smoothed).collect();
    let val: Vec<Vec<(f64, f64)>> = histories
        .iter()
        .map(|h| h.val.iter().map(|(s, l)| (*s as f64, f64::from(l.total))).collect())
        .collect();
    encode(&train, &val, "KL + λ·deform")
}

/// Means of consecutive blocks of [`SMOOTH`] values of a per-step series.
pub fn smooth_series(series: &[(usize, f32)]) -> Vec<(f64, f64)> {
    series
        .chunks(SMOOTH)
        .filter(|c| !c.is_empty())
        .map(|c| {
            let step = c.last().map_or(0, |e| e.0) as f64;
            (step, c.iter().map(|e| f64::from(e.1)).sum::<f64>() / c.len() as f64)
        })
        .collect()
}

/// The PNG bytes of a (smoothed) training curve and a validation curve of any loss, labelled
/// `loss` on the y axis.
pub fn png_series(train: &[(f64, f64)], val: &[(f64, f64)], loss: &str) -> Result<Vec<u8>, LearnError> {
    encode(&[train.to_vec()], &[val.to_vec()], loss)
}

/// The PNG bytes of several training and validation curves on one chart.
fn encode(train: &[Vec<(f64, f64)>], val: &[Vec<(f64, f64)>], loss: &str) -> Result<Vec<u8>, LearnError> {
    let (w, h) = SIZE;
    let mut pixels = vec![0u8; (w * h * 3) as usize];
    draw(train, val, loss, &mut pixels).map_err(|e| LearnError::Train(format!("plotting the curves: {e}")))?;
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, w, h);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder
            .write_header()
            .map_err(|e| LearnError::Train(format!("encoding the curves: {e}")))?;
        writer
            .write_image_data(&pixels)
            .map_err(|e| LearnError::Train(format!("encoding the curves: {e}")))?;
    }
    Ok(out)
}

/// `v` with three significant digits (`0.3`, `0.0123`, `12.3`), trailing zeros dropped.
fn significant(v: f64) -> String {
    if !(v.is_finite() && v > 0.0) {
        return format!("{v}");
    }
    let decimals = (2 - v.log10().floor() as i32).max(0) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

fn draw(train: &[Vec<(f64, f64)>], val: &[Vec<(f64, f64)>], loss: &str, pixels: &mut [u8]) -> Result<(), String> {
    let e = |err: &dyn std::fmt::Debug| format!("{err:?}");
    let text = fonts();
    let root = BitMapBackend::with_buffer(pixels, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let points = || train.iter().chain(val).flatten();
    let all = points().map(|p| p.1).filter(|v| v.is_finite() && *v > 0.0);
    let (lo, hi) = all.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (lo, hi) = if lo < hi { (lo * 0.9, hi * 1.1) } else { (1e-3, 1.0) };
    let last = points().map(|p| p.0).fold(1.0, f64::max);
    let mut builder = ChartBuilder::on(&root);
    builder.margin(20);
    if text {
        builder
            .caption("training loss (blue: train, red: val)", ("sans-serif", 24))
            .x_label_area_size(35)
            .y_label_area_size(60);
    }
    let mut chart = builder
        .build_cartesian_2d(0.0..last, (lo..hi).log_scale())
        .map_err(|x| e(&x))?;
    if text {
        chart
            .configure_mesh()
            .x_desc("step")
            .y_desc(loss)
            // Log-scale ticks such as 0.3 come out of the axis as 0.30000000000000004.
            .y_label_formatter(&|v| significant(*v))
            .x_label_formatter(&|v| format!("{v:.0}"))
            .draw()
            .map_err(|x| e(&x))?;
    }
    let keep = |p: &&(f64, f64)| p.1.is_finite() && p.1 > 0.0;
    for train in train {
        chart
            .draw_series(LineSeries::new(
                train.iter().filter(keep).copied(),
                BLUE.stroke_width(2),
            ))
            .map_err(|x| e(&x))?;
    }
    for val in val {
        chart
            .draw_series(LineSeries::new(val.iter().filter(keep).copied(), RED.stroke_width(2)))
            .map_err(|x| e(&x))?;
        chart
            .draw_series(val.iter().filter(keep).map(|p| Circle::new(*p, 4, RED.filled())))
            .map_err(|x| e(&x))?;
    }
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_have_three_significant_digits() {
        assert_eq!(significant(0.30000000000000004), "0.3");
        assert_eq!(significant(0.0123456), "0.0123");
        assert_eq!(significant(12.345), "12.3");
        assert_eq!(significant(500.0), "500");
    }
}
