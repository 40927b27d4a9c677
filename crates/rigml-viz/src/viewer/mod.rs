//! The local web viewer behind `rigml view`: a small HTTP server (std only, bound to
//! 127.0.0.1) serving our static page (`web/index.html`, `web/app.js`, `web/colormap.js`),
//! the three.js module files bundled at build time (see `build.rs`), the character as GLB
//! (`/model.glb`, and `/compare.glb` for a second weight set) and `/info.json` describing both.
//!
//! The page shows the mesh, the skeleton, the weights of the joint clicked (heat map) or the
//! dominant joint per vertex, plays the clips, and with a second file shows both side by side
//! or their difference. The caller turns characters into GLB bytes (rigml-viz does not depend
//! on rigml-io); joint and clip names come from the [`Character`] so the page shows the file's
//! names exactly (three.js rewrites some node names).

mod http;

pub use http::Server;

use rigml_core::Character;
use serde_json::json;

mod bundled {
    include!(concat!(env!("OUT_DIR"), "/three_files.rs"));
}

/// The viewer page.
const INDEX_HTML: &str = include_str!("../../web/index.html");
/// The viewer script (an ES module importing `three` through the page's import map).
const APP_JS: &str = include_str!("../../web/app.js");
/// The colour maps the script imports (the tables of [`crate::colormap`]).
const COLORMAP_JS: &str = include_str!("../../web/colormap.js");
/// Served instead of the page when this build has no three.js.
const NO_THREE_HTML: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<title>rigml view</title></head><body><h1>rigml view</h1><p id=\"status\">three.js was not bundled \
into this rigml build (npm was not available when it was built). Run <code>npm ci</code> in \
crates/rigml-viz/web and rebuild rigml.</p></body></html>";

/// Whether this build carries three.js (else the viewer serves only a page saying so).
pub fn three_bundled() -> bool {
    !bundled::THREE_FILES.is_empty()
}

/// The bundled three.js version, `None` when not bundled.
pub fn three_version() -> Option<&'static str> {
    three_bundled().then_some(bundled::THREE_VERSION)
}

/// One character as the viewer serves it.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// What the page calls it (usually the file name).
    pub label: String,
    /// The character as GLB (joint `j` is node `j`, as `rigml_io`'s writer lays it out).
    pub glb: Vec<u8>,
    /// Joint names in skeleton order (the skin's joint order).
    pub joints: Vec<String>,
    /// Parent of each joint.
    pub parents: Vec<Option<usize>>,
    pub clips: Vec<String>,
    pub vertices: usize,
    pub triangles: usize,
    pub skinned: bool,
}

impl Model {
    /// Describe `character`, whose GLB export is `glb`.
    pub fn new(label: &str, character: &Character, glb: Vec<u8>) -> Model {
        Model {
            label: label.to_string(),
            glb,
            joints: character.skeleton.names.clone(),
            parents: character.skeleton.parents.clone(),
            clips: character.clips.iter().map(|c| c.name.clone()).collect(),
            vertices: character.mesh.vertex_count(),
            triangles: character.mesh.triangles.len(),
            skinned: character.skin.is_some(),
        }
    }

    fn info(&self, url: &str) -> serde_json::Value {
        json!({
            "label": self.label,
            "url": url,
            "joints": self.joints,
            "parents": self.parents,
            "clips": self.clips,
            "vertices": self.vertices,
            "triangles": self.triangles,
            "skinned": self.skinned,
        })
    }
}

/// Everything the server answers with, built once.
#[derive(Debug, Clone)]
pub struct Site {
    model: Model,
    compare: Option<Model>,
    info: String,
}

impl Site {
    /// The site for `model`, and `compare` (a second weight set on the same mesh) if given.
    pub fn new(model: Model, compare: Option<Model>) -> Site {
        let info = json!({
            "model": model.info("/model.glb"),
            "compare": compare.as_ref().map(|c| c.info("/compare.glb")),
            "three": three_version(),
        })
        .to_string();
        Site { model, compare, info }
    }

    /// The body and content type for a request path (query string already removed), `None`
    /// for anything we do not serve.
    pub fn get(&self, path: &str) -> Option<(&[u8], &'static str)> {
        const HTML: &str = "text/html; charset=utf-8";
        const JS: &str = "text/javascript; charset=utf-8";
        match path {
            "/" | "/index.html" if three_bundled() => Some((INDEX_HTML.as_bytes(), HTML)),
            "/" | "/index.html" => Some((NO_THREE_HTML.as_bytes(), HTML)),
            "/app.js" => Some((APP_JS.as_bytes(), JS)),
            "/colormap.js" => Some((COLORMAP_JS.as_bytes(), JS)),
            "/info.json" => Some((self.info.as_bytes(), "application/json")),
            "/model.glb" => Some((self.model.glb.as_slice(), "model/gltf-binary")),
            "/compare.glb" => self.compare.as_ref().map(|c| (c.glb.as_slice(), "model/gltf-binary")),
            _ => {
                let file = path.strip_prefix("/three/")?;
                bundled::THREE_FILES
                    .iter()
                    .find(|(name, _)| *name == file)
                    .map(|(_, bytes)| (*bytes, JS))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rigml_core::{Mesh, Skeleton, Transform};

    fn character() -> Character {
        let skeleton = Skeleton {
            names: vec!["hips".into(), "spine \"1\"".into()],
            parents: vec![None, Some(0)],
            rest_local: vec![Transform::IDENTITY; 2],
            inverse_bind: vec![glam::Mat4::IDENTITY; 2],
        };
        Character {
            name: "c".into(),
            mesh: Mesh::default(),
            skeleton,
            skin: None,
            clips: vec![],
            attachments: Vec::new(),
        }
    }

    #[test]
    fn serves_page_models_and_info() {
        let c = character();
        let site = Site::new(Model::new("a.glb", &c, vec![1, 2, 3]), None);
        assert_eq!(site.get("/model.glb").unwrap().0, &[1, 2, 3]);
        assert!(site.get("/compare.glb").is_none());
        assert!(site.get("/../Cargo.toml").is_none());
        assert!(std::str::from_utf8(site.get("/colormap.js").unwrap().0)
            .unwrap()
            .contains("export function lookup"));
        assert!(site.get("/three/../../Cargo.toml").is_none());
        let info: serde_json::Value = serde_json::from_slice(site.get("/info.json").unwrap().0).unwrap();
        assert_eq!(info["model"]["joints"][1], "spine \"1\"");
        assert_eq!(info["model"]["parents"][1], 0);
        assert!(info["compare"].is_null());
        let page = std::str::from_utf8(site.get("/").unwrap().0).unwrap();
        if three_bundled() {
            assert!(page.contains("importmap"));
            assert!(site.get("/three/build/three.module.min.js").is_some());
            assert!(site.get("/three/examples/jsm/loaders/GLTFLoader.js").is_some());
        } else {
            assert!(page.contains("not bundled"));
        }
        let with = Site::new(Model::new("a", &c, vec![1]), Some(Model::new("b", &c, vec![2])));
        assert_eq!(with.get("/compare.glb").unwrap().0, &[2]);
    }
}
