//! Materials, textures, samplers and images: read into [`rigml_core::Material`] and
//! [`rigml_core::Image`] so that a character written back out looks as it came in.
//!
//! Malformed material JSON is an error like any other (the path is named). A texture rigml
//! cannot carry (an image that cannot be loaded, a format other than PNG or JPEG, a second UV
//! set) is left out of its material with a warning: the character's geometry and rig are
//! still whole, and the material keeps its colours.
//!
//! Repaired with a warning: a colour factor, metalness, roughness or occlusion strength outside
//! 0..=1 (magnum's `baseColorFactor` 1.1) is clamped into it, a negative `alphaCutoff` becomes
//! 0. `KHR_texture_transform` is read for its `texCoord` override only: the offset, rotation
//! and scale are not kept, and one warning says how many texture references carried one.

use super::accessor::Doc;
use super::container;
use super::json::{self, fail, Fail, Obj, Value};
use rigml_core::{AlphaMode, Image, Material, Sampler, TextureSlot};
use std::collections::HashMap;

/// The texture-transform extension, whose transforms rigml does not keep.
pub(super) const TEXTURE_TRANSFORM: &str = "KHR_texture_transform";

/// The document's materials (all of them, in file order, so primitive `material` indices
/// carry over) and the images their textures use.
pub(super) struct Looks {
    pub materials: Vec<Material>,
    pub images: Vec<Image>,
    pub warnings: Vec<String>,
}

pub(super) fn read(doc: &Doc) -> Result<Looks, Fail> {
    let mut reader = Reader {
        doc,
        textures: json::array(doc.root, "textures", "")?,
        samplers: json::array(doc.root, "samplers", "")?,
        images: json::array(doc.root, "images", "")?,
        loaded: HashMap::new(),
        transformed: 0,
        looks: Looks {
            materials: Vec::new(),
            images: Vec::new(),
            warnings: Vec::new(),
        },
    };
    for (m, value) in json::array(doc.root, "materials", "")?.iter().enumerate() {
        let here = format!("materials[{m}]");
        let material = reader.material(json::object(value, &here)?, &here)?;
        reader.looks.materials.push(material);
    }
    if reader.transformed > 0 {
        let n = reader.transformed;
        reader.warn(format!(
            "materials: {n} texture reference(s) carry {TEXTURE_TRANSFORM}; its offset, rotation and scale \
             are not kept, so {} drawn untransformed",
            if n == 1 {
                "that texture is"
            } else {
                "those textures are"
            }
        ));
    }
    Ok(reader.looks)
}

struct Reader<'d, 'a> {
    doc: &'d Doc<'a>,
    textures: &'d [Value<'a>],
    samplers: &'d [Value<'a>],
    images: &'d [Value<'a>],
    /// glTF image index → index into `looks.images` (`None`: could not be carried).
    loaded: HashMap<usize, Option<usize>>,
    /// Texture references kept whose `KHR_texture_transform` is not the identity.
    transformed: usize,
    looks: Looks,
}

impl Reader<'_, '_> {
    fn material(&mut self, obj: &Obj, here: &str) -> Result<Material, Fail> {
        let mut m = Material {
            name: json::opt_str(obj, "name", here)?.unwrap_or("").to_string(),
            ..Material::default()
        };
        if let Some(pbr) = obj.get("pbrMetallicRoughness") {
            let path = format!("{here}.pbrMetallicRoughness");
            let pbr = json::object(pbr, &path)?;
            m.base_color = self
                .fractions::<4>(pbr, "baseColorFactor", &path)?
                .unwrap_or(m.base_color);
            m.metallic = self
                .fractions::<1>(pbr, "metallicFactor", &path)?
                .map_or(m.metallic, |[x]| x);
            m.roughness = self
                .fractions::<1>(pbr, "roughnessFactor", &path)?
                .map_or(m.roughness, |[x]| x);
            m.base_color_texture = self.slot(pbr, "baseColorTexture", SlotScale::None, &path)?;
            m.metallic_roughness_texture = self.slot(pbr, "metallicRoughnessTexture", SlotScale::None, &path)?;
        }
        m.normal_texture = self.slot(obj, "normalTexture", SlotScale::Any("scale"), here)?;
        m.occlusion_texture = self.slot(obj, "occlusionTexture", SlotScale::Fraction("strength"), here)?;
        m.emissive = self.fractions::<3>(obj, "emissiveFactor", here)?.unwrap_or(m.emissive);
        m.emissive_texture = self.slot(obj, "emissiveTexture", SlotScale::None, here)?;
        m.alpha = match json::opt_str(obj, "alphaMode", here)? {
            None | Some("OPAQUE") => AlphaMode::Opaque,
            Some("MASK") => match json::opt_float(obj, "alphaCutoff", here)? {
                Some(c) if c < 0.0 => {
                    self.warn(format!("{here}.alphaCutoff: {c} is negative; clamped to 0"));
                    AlphaMode::Mask(0.0)
                }
                c => AlphaMode::Mask(c.unwrap_or(0.5)),
            },
            Some("BLEND") => AlphaMode::Blend,
            Some(other) => return Err(fail(format!("{here}.alphaMode: {other:?} (OPAQUE, MASK or BLEND)"))),
        };
        m.double_sided = json::flag(obj, "doubleSided", here)?;
        m.unlit = obj
            .get("extensions")
            .and_then(|e| e.get("KHR_materials_unlit"))
            .is_some();
        Ok(m)
    }

    /// The texture slot `obj[key]` (a glTF textureInfo), its scale read as `scale` says; `None`
    /// when absent or when its image cannot be carried (with a warning).
    fn slot(&mut self, obj: &Obj, key: &str, scale: SlotScale, here: &str) -> Result<Option<TextureSlot>, Fail> {
        let Some(info) = obj.get(key) else {
            return Ok(None);
        };
        let path = format!("{here}.{key}");
        let info = json::object(info, &path)?;
        let texture = json::req_index(info, "index", &path)?;
        let scale = match scale {
            SlotScale::Fraction(k) => self.fractions::<1>(info, k, &path)?.map_or(1.0, |[x]| x),
            SlotScale::Any(k) => json::opt_float(info, k, &path)?.unwrap_or(1.0),
            SlotScale::None => 1.0,
        };
        let set = json::opt_index(info, "texCoord", &path)?.unwrap_or(0);
        let transform = info.get("extensions").and_then(|e| e.get(TEXTURE_TRANSFORM));
        // The extension's own `texCoord` overrides the textureInfo's.
        let set = transform
            .and_then(|t| t.get("texCoord"))
            .and_then(Value::as_u64)
            .map_or(set, |s| usize::try_from(s).unwrap_or(usize::MAX));
        if set != 0 {
            self.warn(format!(
                "{path}: uses TEXCOORD_{set}; rigml keeps only TEXCOORD_0, so the texture was left out"
            ));
            return Ok(None);
        }
        let tpath = format!("textures[{texture}]");
        let tex = json::item(self.textures, texture, "texture", &path)?;
        let sampler = match json::opt_index(tex, "sampler", &tpath)? {
            Some(s) => sampler(
                json::item(self.samplers, s, "sampler", &tpath)?,
                &format!("samplers[{s}]"),
            )?,
            None => Sampler::default(),
        };
        let Some(source) = json::opt_index(tex, "source", &tpath)? else {
            self.warn(format!(
                "{tpath}: no PNG or JPEG source (an image format of an extension), left out"
            ));
            return Ok(None);
        };
        let image = self.image(source, &tpath)?;
        if image.is_some() && transform.is_some_and(|t| !is_identity_transform(t)) {
            self.transformed += 1;
        }
        Ok(image.map(|image| TextureSlot { image, sampler, scale }))
    }

    /// Optional `obj[key]`: `N` numbers in 0..=1 (colour factors, metalness, roughness,
    /// occlusion strength: glTF 2.0 §5.19), one number when `N` is 1. Numbers outside the range
    /// are clamped into it with a warning.
    fn fractions<const N: usize>(&mut self, obj: &Obj, key: &str, here: &str) -> Result<Option<[f32; N]>, Fail> {
        let values = if N == 1 {
            json::opt_float(obj, key, here)?.map(|x| [x; N])
        } else {
            json::opt_floats::<N>(obj, key, here)?
        };
        let Some(mut values) = values else {
            return Ok(None);
        };
        if values.iter().any(|x| x.is_nan()) {
            return Err(fail(format!("{here}.{key}: expected numbers, found NaN")));
        }
        let outside: Vec<String> = values
            .iter()
            .filter(|x| !(0.0..=1.0).contains(*x))
            .map(f32::to_string)
            .collect();
        if !outside.is_empty() {
            values.iter_mut().for_each(|x| *x = x.clamp(0.0, 1.0));
            self.warn(format!(
                "{here}.{key}: {} outside 0..=1; clamped",
                match outside.as_slice() {
                    [one] => format!("{one} is"),
                    many => format!("{} are", many.join(", ")),
                }
            ));
        }
        Ok(Some(values))
    }

    /// glTF image `index`, loaded once; `None` (with a warning) when it cannot be carried.
    fn image(&mut self, index: usize, referrer: &str) -> Result<Option<usize>, Fail> {
        if let Some(&done) = self.loaded.get(&index) {
            return Ok(done);
        }
        let here = format!("images[{index}]");
        let obj = json::item(self.images, index, "image", referrer)?;
        let declared = json::opt_str(obj, "mimeType", &here)?;
        let bytes = match (
            json::opt_index(obj, "bufferView", &here)?,
            json::opt_str(obj, "uri", &here)?,
        ) {
            (Some(view), _) => Ok(self.doc.view_bytes(view, &here)?.to_vec()),
            (None, Some(uri)) => container::load_uri(uri, self.doc.base_dir, &format!("{here}.uri")),
            (None, None) => Err(fail(format!("{here}: neither bufferView nor uri"))),
        };
        let carried = match bytes {
            Ok(bytes) => match sniff(&bytes) {
                Some(mime) => {
                    if declared.is_some_and(|d| d != mime) {
                        self.warn(format!("{here}: declared {declared:?} but the bytes are {mime}"));
                    }
                    self.looks.images.push(Image {
                        name: json::opt_str(obj, "name", &here)?.unwrap_or("").to_string(),
                        mime_type: mime.to_string(),
                        bytes,
                    });
                    Some(self.looks.images.len() - 1)
                }
                None => {
                    self.warn(format!(
                        "{here}: not a PNG or JPEG image ({}), textures using it were left out",
                        declared.unwrap_or("unknown type")
                    ));
                    None
                }
            },
            Err(e) => {
                self.warn(format!("{}; textures using it were left out", e.message));
                None
            }
        };
        self.loaded.insert(index, carried);
        Ok(carried)
    }

    fn warn(&mut self, message: String) {
        self.looks.warnings.push(message);
    }
}

/// The image type from its first bytes (glTF core allows PNG and JPEG only).
fn sniff(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else {
        None
    }
}

/// Where a texture slot's scale comes from (glTF 2.0 §5.19: only normal and occlusion
/// textures have one, under different names and ranges).
#[derive(Clone, Copy)]
enum SlotScale {
    /// No scale in this slot (1).
    None,
    /// Any finite number under this key (a normal texture's `scale`).
    Any(&'static str),
    /// A number in 0..=1 under this key (an occlusion texture's `strength`).
    Fraction(&'static str),
}

/// glTF 2.0's sampler enumerations (§5.26): magnification filters, minification filters
/// (the mag ones plus the four mipmap modes), wrap modes.
const MAG_FILTERS: &[u32] = &[9728, 9729];
const MIN_FILTERS: &[u32] = &[9728, 9729, 9984, 9985, 9986, 9987];
const WRAPS: &[u32] = &[33071, 33648, 10497];

fn sampler(obj: &Obj, here: &str) -> Result<Sampler, Fail> {
    let code = |key: &str, allowed: &[u32]| -> Result<Option<u32>, Fail> {
        json::opt_index(obj, key, here)?
            .map(|v| {
                u32::try_from(v)
                    .ok()
                    .filter(|c| allowed.contains(c))
                    .ok_or_else(|| fail(format!("{here}.{key}: {v} is not one of {allowed:?}")))
            })
            .transpose()
    };
    let defaults = Sampler::default();
    Ok(Sampler {
        mag_filter: code("magFilter", MAG_FILTERS)?,
        min_filter: code("minFilter", MIN_FILTERS)?,
        wrap_s: code("wrapS", WRAPS)?.unwrap_or(defaults.wrap_s),
        wrap_t: code("wrapT", WRAPS)?.unwrap_or(defaults.wrap_t),
    })
}

/// Whether a `KHR_texture_transform` object changes nothing: no offset, rotation or scale
/// other than the defaults (`[0, 0]`, `0`, `[1, 1]`). Anything unreadable counts as a change.
fn is_identity_transform(t: &Value) -> bool {
    let is = |key: &str, default: &[f64]| match t.get(key) {
        None => true,
        Some(Value::Array(items)) => {
            items.len() == default.len() && items.iter().zip(default).all(|(v, d)| v.as_f64() == Some(*d))
        }
        Some(v) => default.len() == 1 && v.as_f64() == Some(default[0]),
    };
    is("offset", &[0.0, 0.0]) && is("rotation", &[0.0]) && is("scale", &[1.0, 1.0])
}
