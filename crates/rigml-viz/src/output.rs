//! PNG encoding. rigml-viz writes no files: callers save the bytes with
//! `rigml_io::atomic::write` (temporary file + rename, no clobbering without force).

use crate::{RgbaImage, VizError};
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_a_decodable_png() {
        let mut image = RgbaImage::new(3, 2);
        image.blit(&RgbaImage::new(1, 1), 0, 0);
        let bytes = encode_png(Path::new("out.png"), &image).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (3, 2));
        assert_eq!(&buf[..info.buffer_size()], image.as_bytes());
    }
}
