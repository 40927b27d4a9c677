//! PNG output, written atomically (temporary file beside the target, then rename) and never
//! over an existing file unless asked. rigml-viz depends on rigml-core only, so this is its
//! own small copy of the rule `rigml_io::atomic::write` follows.

use crate::{RgbaImage, VizError};
use std::io::Write;
use std::path::Path;

/// Encode `image` as an 8-bit RGBA PNG in memory.
pub fn encode_png(path: &Path, image: &RgbaImage) -> Result<Vec<u8>, VizError> {
    let encode_error = |e: png::EncodingError| VizError::Encode {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, image.width(), image.height());
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(encode_error)?;
    writer.write_image_data(image.as_bytes()).map_err(encode_error)?;
    writer.finish().map_err(encode_error)?;
    Ok(bytes)
}

/// Write `image` to `path` as PNG. Refuses to replace an existing file unless `force`; a
/// failure leaves no partial file under `path`.
pub fn save_png(path: &Path, image: &RgbaImage, force: bool) -> Result<(), VizError> {
    if !force && path.exists() {
        return Err(VizError::Exists {
            path: path.to_path_buf(),
        });
    }
    let bytes = encode_png(path, image)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(source) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(VizError::Write {
            path: path.to_path_buf(),
            source,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_decodable_png_and_refuses_to_clobber() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.png");
        let mut image = RgbaImage::new(3, 2);
        image.blit(&RgbaImage::new(1, 1), 0, 0);
        save_png(&path, &image, false).unwrap();
        let decoder = png::Decoder::new(std::fs::File::open(&path).unwrap());
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (3, 2));
        assert_eq!(&buf[..info.buffer_size()], image.as_bytes());
        let before = std::fs::read(&path).unwrap();
        assert!(matches!(save_png(&path, &image, false), Err(VizError::Exists { .. })));
        assert_eq!(std::fs::read(&path).unwrap(), before);
        save_png(&path, &image, true).unwrap();
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
        let missing = dir.path().join("no/such/dir/out.png");
        let err = save_png(&missing, &image, false).unwrap_err().to_string();
        assert!(err.contains("out.png"), "{err}");
    }
}
