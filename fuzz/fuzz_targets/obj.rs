//! Fuzz `rigml_io::obj::from_bytes`: no input may panic, hang or abort; whatever loads must
//! also survive validation and the problem report.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok(character) = rigml_io::obj::from_bytes(data, Path::new("fuzz.obj")) {
        let _ = character.validate();
        let _ = character.problems();
    }
});
