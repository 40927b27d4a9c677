//! PNG plots with `plotters` (bitmap backend only): one bar chart per metric (mean per method),
//! deformation error vs vertex count, wall time vs vertex count.
//!
//! Text needs a TrueType font. None is bundled: the first of `$RIGML_FONT`, DejaVu Sans or
//! Liberation Sans that exists is used. Without one the charts are drawn without any text
//! (bars, points and colours only; the numbers are in `summary.md`), so plotting never fails
//! on a headless machine for lack of fonts.

use crate::report::{stats, Report, METRICS};
use crate::EvalError;
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const SIZE: (u32, u32) = (900, 540);
const FONT_PATHS: [&str; 3] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

/// Register a sans-serif font once; `true` when text can be drawn.
fn fonts() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        let env = std::env::var("RIGML_FONT").ok();
        let candidates = env.iter().map(String::as_str).chain(FONT_PATHS);
        for path in candidates {
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

fn plot_err(path: &Path) -> impl Fn(String) -> EvalError + '_ {
    move |message| EvalError::Plot {
        path: path.to_path_buf(),
        message,
    }
}

/// Draw into a temporary PNG beside `path`, then rename it over `path` (atomic, no clobbering
/// without `force`).
fn atomic_png(path: &Path, force: bool, draw: impl FnOnce(&Path) -> Result<(), String>) -> Result<PathBuf, EvalError> {
    if path.exists() && !force {
        return Err(plot_err(path)("exists (use force to replace it)".into()));
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("plot.png");
    let tmp = path.with_file_name(format!(".{name}.{}.tmp.png", std::process::id()));
    let result = draw(&tmp).and_then(|_| std::fs::rename(&tmp, path).map_err(|e| e.to_string()));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(plot_err(path))?;
    Ok(path.to_path_buf())
}

fn e<E: std::fmt::Debug>(err: E) -> String {
    format!("{err:?}")
}

/// Bars of `values` (one per method, `None` skipped), each its own colour with a legend.
fn bar_chart(path: &Path, text: bool, title: &str, methods: &[String], values: &[Option<f64>]) -> Result<(), String> {
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(e)?;
    let top = values.iter().flatten().copied().fold(0.0f64, f64::max);
    let top = if top > 0.0 && top.is_finite() { top * 1.15 } else { 1.0 };
    let mut builder = ChartBuilder::on(&root);
    builder.margin(20);
    if text {
        builder
            .caption(title, ("sans-serif", 26))
            .y_label_area_size(70)
            .x_label_area_size(20);
    }
    let mut chart = builder
        .build_cartesian_2d(0f64..methods.len().max(1) as f64, 0f64..top)
        .map_err(e)?;
    if text {
        chart
            .configure_mesh()
            .disable_x_mesh()
            .disable_x_axis()
            .y_desc("mean over assets")
            .draw()
            .map_err(e)?;
    }
    for (i, (name, v)) in methods.iter().zip(values).enumerate() {
        let Some(v) = v else { continue };
        let colour = Palette99::pick(i).to_rgba();
        let series = chart
            .draw_series(std::iter::once(Rectangle::new(
                [(i as f64 + 0.15, 0.0), (i as f64 + 0.85, *v)],
                colour.filled(),
            )))
            .map_err(e)?;
        if text {
            series
                .label(format!("{name}: {v:.4}"))
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
        }
    }
    if text {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(e)?;
    }
    root.present().map_err(e)
}

/// Points per method (`x`, `y`), one colour each.
fn scatter(
    path: &Path,
    text: bool,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<(), String> {
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(e)?;
    let all = series
        .iter()
        .flat_map(|s| s.1.iter())
        .filter(|p| p.0.is_finite() && p.1.is_finite());
    let (xmax, ymax) = all.fold((0.0f64, 0.0f64), |(a, b), p| (a.max(p.0), b.max(p.1)));
    let xmax = if xmax > 0.0 { xmax * 1.05 } else { 1.0 };
    let ymax = if ymax > 0.0 { ymax * 1.1 } else { 1.0 };
    let mut builder = ChartBuilder::on(&root);
    builder.margin(20);
    if text {
        builder
            .caption(title, ("sans-serif", 26))
            .x_label_area_size(45)
            .y_label_area_size(70);
    }
    let mut chart = builder.build_cartesian_2d(0f64..xmax, 0f64..ymax).map_err(e)?;
    if text {
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .draw()
            .map_err(e)?;
    }
    for (i, (name, points)) in series.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let drawn = chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 4, colour.filled())))
            .map_err(e)?;
        if text {
            drawn
                .label(name.as_str())
                .legend(move |(x, y)| Circle::new((x + 6, y), 4, colour.filled()));
        }
    }
    if text {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(e)?;
    }
    root.present().map_err(e)
}

/// Write every plot into `dir`; returns the files written.
pub fn write_plots(report: &Report, dir: &Path, force: bool) -> Result<Vec<PathBuf>, EvalError> {
    let mut written = Vec::new();
    let methods = &report.methods;
    let text = fonts();
    for metric in METRICS {
        let values: Vec<Option<f64>> = methods
            .iter()
            .map(|m| stats(&report.values(m, metric)).map(|s| s.mean))
            .collect();
        if values.iter().all(Option::is_none) {
            continue;
        }
        let path = dir.join(format!("{}.png", metric.name));
        let title = format!("{} ({} is better)", metric.name, metric.better);
        written.push(atomic_png(&path, force, |p| {
            bar_chart(p, text, &title, methods, &values)
        })?);
    }
    let per_method = |f: &dyn Fn(&crate::report::AssetResult) -> Option<f64>| -> Vec<(String, Vec<(f64, f64)>)> {
        methods
            .iter()
            .map(|m| {
                let pts = report
                    .of(m)
                    .filter(|r| r.counts())
                    .filter_map(|r| f(r).map(|y| (r.vertices as f64, y)))
                    .collect();
                (m.clone(), pts)
            })
            .collect()
    };
    let deform = per_method(&|r| r.deform_random.map(|d| d.p95));
    let path = dir.join("deform_p95_vs_vertices.png");
    written.push(atomic_png(&path, force, |p| {
        scatter(
            p,
            text,
            "Deform p95 (pose set a) vs vertex count",
            "vertices",
            "Deform p95 (normalised)",
            &deform,
        )
    })?);
    let time = per_method(&|r| r.wall_s);
    let path = dir.join("time_vs_vertices.png");
    written.push(atomic_png(&path, force, |p| {
        scatter(p, text, "Wall time vs vertex count", "vertices", "wall time (s)", &time)
    })?);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_draw_with_and_without_text() {
        let dir = tempfile::tempdir().unwrap();
        let methods = vec!["a".to_string(), "b".to_string()];
        let series = vec![("a".to_string(), vec![(10.0, 0.5), (2000.0, 0.25)])];
        let texts: &[bool] = if fonts() { &[false, true] } else { &[false] };
        for &text in texts {
            let bar = dir.path().join(format!("bar{text}.png"));
            bar_chart(&bar, text, "t", &methods, &[Some(0.5), None]).unwrap();
            let pts = dir.path().join(format!("pts{text}.png"));
            scatter(&pts, text, "t", "x", "y", &series).unwrap();
            for p in [bar, pts] {
                let bytes = std::fs::read(&p).unwrap();
                assert_eq!(&bytes[1..4], b"PNG", "{}", p.display());
            }
        }
        // No clobbering without force.
        let p = dir.path().join("barfalse.png");
        assert!(atomic_png(&p, false, |_| Ok(())).is_err());
    }
}
