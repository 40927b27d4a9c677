//! The binary FBX node-tree encoding (version 7400), for the writer.
//!
//! An FBX file is a tree of named nodes, each with a list of typed properties (integers, floats,
//! strings, arrays) and child nodes. The 7.4 layout: a 27-byte header, the top-level nodes, a
//! 13-byte null record, and a footer. Each node record is `end offset (u32), property count
//! (u32), property bytes (u32), name length (u8), name, properties, children`, and a node with
//! children ends with a 13-byte null record. Arrays are written uncompressed (encoding 0), which
//! every reader accepts.
//!
//! Written by hand: the one Rust crate with an FBX writer (fbxcel) is a low-level binary writer
//! that could not be fetched here, and the encoding is this small.

/// FBX version written (7.4, the version Maya 2014–2020, 3ds Max and Blender exchange; 32-bit
/// offsets, so a file holds at most 4 GiB).
pub const VERSION: u32 = 7400;

/// One property of a node.
#[derive(Debug, Clone, PartialEq)]
pub enum Prop {
    Bool(bool),
    I32(i32),
    I64(i64),
    F64(f64),
    Str(String),
    /// A string with raw bytes (object names with the `\0\x01Class` separator).
    Bytes(Vec<u8>),
    I32s(Vec<i32>),
    I64s(Vec<i64>),
    F32s(Vec<f32>),
    F64s(Vec<f64>),
}

/// A node: name, properties, children.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Node {
    pub name: &'static str,
    pub props: Vec<Prop>,
    pub children: Vec<Node>,
}

impl Node {
    pub fn new(name: &'static str) -> Node {
        Node {
            name,
            ..Node::default()
        }
    }

    /// Add a property (builder style).
    pub fn p(mut self, prop: Prop) -> Node {
        self.props.push(prop);
        self
    }

    /// Add a child (builder style).
    pub fn c(mut self, child: Node) -> Node {
        self.children.push(child);
        self
    }

    /// Add a child in place.
    pub fn push(&mut self, child: Node) {
        self.children.push(child);
    }
}

/// Why a tree cannot be encoded.
#[derive(Debug, Clone, PartialEq)]
pub enum EncodeError {
    /// Over the 4 GiB that 32-bit offsets address.
    TooLarge,
}

/// Encode top-level nodes as a complete binary FBX file.
pub fn encode(nodes: &[Node]) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    out.extend_from_slice(b"Kaydara FBX Binary  \0\x1a\0");
    out.extend_from_slice(&VERSION.to_le_bytes());
    for node in nodes {
        write_node(&mut out, node)?;
    }
    out.extend_from_slice(&[0u8; NULL_RECORD]);
    footer(&mut out);
    Ok(out)
}

/// Bytes of a null record (end offset, property count and bytes, name length, all zero).
const NULL_RECORD: usize = 13;

fn write_node(out: &mut Vec<u8>, node: &Node) -> Result<(), EncodeError> {
    let start = out.len();
    out.extend_from_slice(&[0u8; 12]); // end offset, property count, property bytes: patched below
    let name = node.name.as_bytes();
    out.push(name.len().min(255) as u8);
    out.extend_from_slice(&name[..name.len().min(255)]);
    let props_start = out.len();
    for prop in &node.props {
        write_prop(out, prop);
    }
    let props_len = out.len() - props_start;
    for child in &node.children {
        write_node(out, child)?;
    }
    if !node.children.is_empty() {
        out.extend_from_slice(&[0u8; NULL_RECORD]);
    }
    let end = u32::try_from(out.len()).map_err(|_| EncodeError::TooLarge)?;
    let count = u32::try_from(node.props.len()).map_err(|_| EncodeError::TooLarge)?;
    let props_len = u32::try_from(props_len).map_err(|_| EncodeError::TooLarge)?;
    out[start..start + 4].copy_from_slice(&end.to_le_bytes());
    out[start + 4..start + 8].copy_from_slice(&count.to_le_bytes());
    out[start + 8..start + 12].copy_from_slice(&props_len.to_le_bytes());
    Ok(())
}

fn write_prop(out: &mut Vec<u8>, prop: &Prop) {
    fn array<T: Copy>(out: &mut Vec<u8>, code: u8, values: &[T], bytes: impl Fn(T) -> Vec<u8>) {
        out.push(code);
        let data: Vec<u8> = values.iter().flat_map(|&v| bytes(v)).collect();
        out.extend_from_slice(&(values.len() as u32).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes()); // encoding: raw
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&data);
    }
    match prop {
        Prop::Bool(b) => {
            out.push(b'C');
            out.push(if *b { b'T' } else { b'F' });
        }
        Prop::I32(v) => {
            out.push(b'I');
            out.extend_from_slice(&v.to_le_bytes());
        }
        Prop::I64(v) => {
            out.push(b'L');
            out.extend_from_slice(&v.to_le_bytes());
        }
        Prop::F64(v) => {
            out.push(b'D');
            out.extend_from_slice(&v.to_le_bytes());
        }
        Prop::Str(s) => {
            out.push(b'S');
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        Prop::Bytes(s) => {
            out.push(b'S');
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s);
        }
        Prop::I32s(v) => array(out, b'i', v, |x| x.to_le_bytes().to_vec()),
        Prop::I64s(v) => array(out, b'l', v, |x| x.to_le_bytes().to_vec()),
        Prop::F32s(v) => array(out, b'f', v, |x| x.to_le_bytes().to_vec()),
        Prop::F64s(v) => array(out, b'd', v, |x| x.to_le_bytes().to_vec()),
    }
}

/// The footer FBX SDK files end with: padding to 16 bytes, a zero word, the version, 120 zero
/// bytes and a fixed 16-byte tag.
fn footer(out: &mut Vec<u8>) {
    const TAG: [u8; 16] = [
        0xf8, 0x5a, 0x8c, 0x6a, 0xde, 0xf5, 0xd9, 0x7e, 0xec, 0xe9, 0x0c, 0xe3, 0x75, 0x8f, 0x29, 0x0b,
    ];
    let pad = (16 - out.len() % 16) % 16;
    out.extend(std::iter::repeat_n(0u8, if pad == 0 { 16 } else { pad }));
    out.extend_from_slice(&[0u8; 4]);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&[0u8; 120]);
    out.extend_from_slice(&TAG);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_records_its_end_and_property_sizes() {
        let bytes = encode(&[Node::new("A").p(Prop::I32(7)).c(Node::new("B"))]).unwrap();
        assert_eq!(&bytes[..21], b"Kaydara FBX Binary  \0");
        assert_eq!(u32::from_le_bytes(bytes[23..27].try_into().unwrap()), 7400);
        let a = 27;
        let end = u32::from_le_bytes(bytes[a..a + 4].try_into().unwrap()) as usize;
        assert_eq!(u32::from_le_bytes(bytes[a + 4..a + 8].try_into().unwrap()), 1);
        assert_eq!(
            u32::from_le_bytes(bytes[a + 8..a + 12].try_into().unwrap()),
            5,
            "'I' + 4 bytes"
        );
        assert_eq!(&bytes[a + 12..a + 14], b"\x01A");
        // A's children end with a null record right before A's end offset.
        assert!(bytes[end - NULL_RECORD..end].iter().all(|&b| b == 0));
        // Then the top-level null record.
        assert!(bytes[end..end + NULL_RECORD].iter().all(|&b| b == 0));
        assert_eq!((bytes.len()) % 16, 0, "footer ends 16-aligned");
    }

    #[test]
    fn ufbx_reads_what_is_encoded() {
        // The smallest scene ufbx loads: one empty top-level node.
        let bytes = encode(&[Node::new("FBXHeaderExtension").c(Node::new("FBXVersion").p(Prop::I32(7400)))]).unwrap();
        assert!(ufbx::load_memory(&bytes, ufbx::LoadOpts::default()).is_ok());
    }
}
