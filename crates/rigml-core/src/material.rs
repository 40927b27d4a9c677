//! How a character's surfaces look: materials in the metallic-roughness model that glTF,
//! Blender's Principled BSDF and FBX's PBR maps share, and the texture images they use.
//!
//! rigml computes nothing from materials; it carries them so that converting, skinning or
//! rigging a character hands back one that looks as it did (a file that came in textured must
//! not come out grey). Images are kept as the file's encoded bytes (PNG, JPEG), never decoded.

use crate::CoreError;

/// A surface material (glTF 2.0 `material`, core properties plus `KHR_materials_unlit`).
#[derive(Debug, Clone, PartialEq)]
pub struct Material {
    pub name: String,
    /// Linear RGBA multiplier of the base colour texture (or the colour itself).
    pub base_color: [f32; 4],
    pub base_color_texture: Option<TextureSlot>,
    pub metallic: f32,
    pub roughness: f32,
    /// Metalness in B, roughness in G.
    pub metallic_roughness_texture: Option<TextureSlot>,
    /// Tangent-space normal map; the slot's `scale` scales X and Y.
    pub normal_texture: Option<TextureSlot>,
    /// Ambient occlusion in R; the slot's `scale` is the strength.
    pub occlusion_texture: Option<TextureSlot>,
    pub emissive: [f32; 3],
    pub emissive_texture: Option<TextureSlot>,
    pub alpha: AlphaMode,
    pub double_sided: bool,
    /// Shadeless (glTF `KHR_materials_unlit`): the base colour is shown as it is.
    pub unlit: bool,
}

impl Default for Material {
    /// glTF's default material: white, fully metallic and rough, opaque, single-sided.
    fn default() -> Self {
        Material {
            name: String::new(),
            base_color: [1.0; 4],
            base_color_texture: None,
            metallic: 1.0,
            roughness: 1.0,
            metallic_roughness_texture: None,
            normal_texture: None,
            occlusion_texture: None,
            emissive: [0.0; 3],
            emissive_texture: None,
            alpha: AlphaMode::Opaque,
            double_sided: false,
            unlit: false,
        }
    }
}

impl Material {
    /// Every texture slot that is set.
    pub fn textures(&self) -> impl Iterator<Item = &TextureSlot> {
        [
            &self.base_color_texture,
            &self.metallic_roughness_texture,
            &self.normal_texture,
            &self.occlusion_texture,
            &self.emissive_texture,
        ]
        .into_iter()
        .flatten()
    }
}

/// How a material's alpha is used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AlphaMode {
    Opaque,
    /// Cut out below this alpha.
    Mask(f32),
    Blend,
}

/// A texture as a material uses it: which image, how it is sampled, and a scale (normal-map
/// scale or occlusion strength; 1 for the other slots). The mesh's one UV set is the texture
/// coordinate set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextureSlot {
    /// Index into [`crate::Mesh::images`].
    pub image: usize,
    pub sampler: Sampler,
    pub scale: f32,
}

/// Texture filtering and wrapping, as glTF's (OpenGL) enumeration codes: filters `None` mean
/// "the viewer chooses"; wrap 10497 repeats, 33071 clamps, 33648 mirrors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sampler {
    pub mag_filter: Option<u32>,
    pub min_filter: Option<u32>,
    pub wrap_s: u32,
    pub wrap_t: u32,
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler {
            mag_filter: None,
            min_filter: None,
            wrap_s: 10497,
            wrap_t: 10497,
        }
    }
}

/// An encoded texture image, kept as the file's bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    pub name: String,
    /// `image/png` or `image/jpeg`.
    pub mime_type: String,
    pub bytes: Vec<u8>,
}

/// Check that every texture slot of `materials` names one of `images`.
pub(crate) fn validate(materials: &[Material], images: &[Image]) -> Result<(), CoreError> {
    for (material, m) in materials.iter().enumerate() {
        if let Some(slot) = m.textures().find(|s| s.image >= images.len()) {
            return Err(CoreError::ImageOutOfRange {
                material,
                image: slot.image,
                image_count: images.len(),
            });
        }
    }
    Ok(())
}
