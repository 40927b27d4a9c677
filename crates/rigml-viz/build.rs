//! Bundles the three.js module files the local web viewer (`rigml view`) serves into the
//! library, so the binary needs no files beside it at run time.
//!
//! three.js comes from npm (`web/package.json`, pinned, with its lock file). When
//! `web/node_modules/three` is missing and `npm` is on the PATH, this runs `npm ci` in `web/`
//! (set `RIGML_NO_NPM=1` to skip). When three.js still cannot be found the build succeeds
//! without it: the generated list is empty and the viewer says that three.js was not bundled.

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Files of the `three` package the viewer page imports, relative to the package root.
const FILES: &[&str] = &[
    "build/three.module.min.js",
    "build/three.core.min.js",
    "examples/jsm/loaders/GLTFLoader.js",
    "examples/jsm/controls/OrbitControls.js",
    "examples/jsm/utils/BufferGeometryUtils.js",
];

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let web = manifest.join("web");
    let three = web.join("node_modules").join("three");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=web/package.json");
    println!("cargo:rerun-if-changed=web/package-lock.json");
    println!("cargo:rerun-if-env-changed=RIGML_NO_NPM");
    if !complete(&three) && env::var_os("RIGML_NO_NPM").is_none() {
        npm_ci(&web);
    }
    let mut code =
        String::from("/// `(path under /three/, bytes)` of each bundled three.js file; empty when not bundled.\n");
    code.push_str("pub(crate) const THREE_FILES: &[(&str, &[u8])] = &[\n");
    let mut version = String::new();
    if complete(&three) {
        println!("cargo:rerun-if-changed=web/node_modules/three/package.json");
        for file in FILES {
            let path = three.join(file);
            println!("cargo:rerun-if-changed={}", path.display());
            let _ = writeln!(
                code,
                "    ({file:?}, include_bytes!({:?})),",
                path.display().to_string()
            );
        }
        version = package_version(&three.join("package.json")).unwrap_or_default();
    } else {
        // Watch the folder so that a later `npm ci` there is noticed.
        println!("cargo:rerun-if-changed=web");
        println!(
            "cargo:warning=three.js not found in {}; `rigml view` will report that it was not bundled \
             (run `npm ci` there and rebuild)",
            three.display()
        );
    }
    code.push_str("];\n");
    let _ = writeln!(code, "/// The bundled three.js version (empty when not bundled).");
    let _ = writeln!(code, "pub(crate) const THREE_VERSION: &str = {version:?};");
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("three_files.rs");
    if let Err(e) = std::fs::write(&out, code) {
        panic!("cannot write {}: {e}", out.display());
    }
}

/// Every file the viewer needs is there.
fn complete(three: &Path) -> bool {
    FILES.iter().all(|f| three.join(f).is_file())
}

/// `npm ci` in `web/`; any failure (no npm, no network) is only a warning.
fn npm_ci(web: &Path) {
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--ignore-scripts"])
        .current_dir(web)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => println!("cargo:warning=`npm ci` in {} failed ({s})", web.display()),
        Err(e) => println!("cargo:warning=could not run npm in {}: {e}", web.display()),
    }
}

/// The `"version"` of a package.json, read without a JSON parser (a build dependency for one
/// field is not worth it): the first `"version": "..."` string.
fn package_version(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let rest = &text[text.find("\"version\"")? + "\"version\"".len()..];
    let rest = &rest[rest.find('"')? + 1..];
    Some(rest[..rest.find('"')?].to_string())
}
