//! The Ogawa container under Alembic: a tree of groups and data blocks, addressed by byte offset.
//!
//! Layout (little-endian):
//! - a 16-byte header: the magic `Ogawa`, a frozen byte (`0xff` once the writer closed the file;
//!   `0x00` while it was writing), a 2-byte version (`0, 1`), then the u64 offset of the root group;
//! - a group: a u64 child count, then one u64 per child: the top bit set marks a data block, the
//!   other 63 bits are its offset; offset 0 is the empty group (or, with the top bit, empty data);
//! - a data block: a u64 size, then that many bytes.
//!
//! Every count, size and offset is checked against the file before it is used, so a truncated
//! or garbage file gives an error naming the offset, and no size from the file is allocated
//! before it is known to fit in the file. Errors are plain strings here; the Alembic layer above
//! prefixes the object and property they belong to.

/// The bytes `Ogawa` that open every Ogawa file.
pub(crate) const MAGIC: &[u8; 5] = b"Ogawa";
/// The signature of an HDF5 file, the container of Alembic before Ogawa.
pub(crate) const HDF5_MAGIC: &[u8; 8] = b"\x89HDF\r\n\x1a\n";
/// The top bit of a child entry: the child is a data block.
const DATA_BIT: u64 = 1 << 63;

/// One entry of a group: another group or a data block, by offset (0: empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Child {
    Group(u64),
    Data(u64),
}

impl Child {
    fn decode(raw: u64) -> Child {
        if raw & DATA_BIT != 0 {
            Child::Data(raw & !DATA_BIT)
        } else {
            Child::Group(raw)
        }
    }

    /// The offset of a group child; an error saying what was expected when it is data.
    pub(crate) fn group(self, what: &str) -> Result<u64, String> {
        match self {
            Child::Group(offset) => Ok(offset),
            Child::Data(offset) => Err(format!("{what}: expected a group, found data at byte {offset}")),
        }
    }

    /// The offset of a data child; an error saying what was expected when it is a group.
    pub(crate) fn data(self, what: &str) -> Result<u64, String> {
        match self {
            Child::Data(offset) => Ok(offset),
            Child::Group(offset) => Err(format!("{what}: expected data, found a group at byte {offset}")),
        }
    }
}

/// An Ogawa file held in memory, its header checked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ogawa<'a> {
    bytes: &'a [u8],
    /// Offset of the root group.
    pub root: u64,
}

impl<'a> Ogawa<'a> {
    /// Check the header: magic, frozen byte, version 1, and a root group offset inside the file.
    /// HDF5 files (older Alembic) are recognised and refused by name.
    pub(crate) fn open(bytes: &'a [u8]) -> Result<Ogawa<'a>, String> {
        if is_hdf5(bytes) {
            return Err("HDF5 Alembic is not supported; re-export as Ogawa (the Alembic default since 1.5)".into());
        }
        if bytes.len() < 16 || &bytes[..5] != MAGIC {
            return Err(if bytes.starts_with(&MAGIC[..bytes.len().min(5)]) {
                format!("{} bytes: too short for the 16-byte Ogawa header", bytes.len())
            } else {
                "not an Alembic file: no Ogawa (or HDF5) signature at the start".into()
            });
        }
        if bytes[5] != 0xff {
            return Err(format!(
                "Ogawa frozen byte is {:#04x}, not 0xff: the writer did not finish the file",
                bytes[5]
            ));
        }
        let version = u16::from_be_bytes([bytes[6], bytes[7]]);
        if version != 1 {
            return Err(format!("Ogawa version {version}; this reader knows version 1"));
        }
        let ogawa = Ogawa { bytes, root: 0 };
        let root = ogawa.u64_at(8, "root group offset")?;
        if root == 0 || root & DATA_BIT != 0 {
            return Err(format!("root group offset {root:#x} is not a group"));
        }
        ogawa.u64_at(root, "root group")?;
        Ok(Ogawa { root, ..ogawa })
    }

    /// File length in bytes.
    pub(crate) fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// The children of the group at `offset` (offset 0: the empty group).
    pub(crate) fn group(&self, offset: u64) -> Result<Vec<Child>, String> {
        if offset == 0 {
            return Ok(Vec::new());
        }
        let count = self.u64_at(offset, "group")?;
        // Bytes left after the count: the child table must fit in them.
        let room = (self.len() - offset - 8) / 8;
        if count > room {
            return Err(format!(
                "group at byte {offset}: {count} children run past the end of the file ({} bytes)",
                self.len()
            ));
        }
        let start = (offset + 8) as usize;
        Ok(self.bytes[start..start + count as usize * 8]
            .chunks_exact(8)
            .map(|c| Child::decode(u64::from_le_bytes(c.try_into().unwrap_or_default())))
            .collect())
    }

    /// The bytes of the data block at `offset` (offset 0: empty data).
    pub(crate) fn data(&self, offset: u64) -> Result<&'a [u8], String> {
        if offset == 0 {
            return Ok(&[]);
        }
        let size = self.u64_at(offset, "data")?;
        let start = offset + 8;
        if size > self.len() - start {
            return Err(format!(
                "data at byte {offset} ({size} bytes) runs past the end of the file ({} bytes)",
                self.len()
            ));
        }
        Ok(&self.bytes[start as usize..(start + size) as usize])
    }

    /// The little-endian u64 at `offset`, or an error naming `what` when it is not in the file.
    fn u64_at(&self, offset: u64, what: &str) -> Result<u64, String> {
        let end = offset.checked_add(8).filter(|&e| e <= self.len());
        match end {
            Some(end) => {
                let b = &self.bytes[offset as usize..end as usize];
                Ok(u64::from_le_bytes(b.try_into().unwrap_or_default()))
            }
            None => Err(format!(
                "{what} at byte {offset} runs past the end of the file ({} bytes)",
                self.len()
            )),
        }
    }
}

/// An HDF5 signature at the start or at one of the offsets HDF5 allows for a user block
/// (512, 1024, 2048, ... bytes).
fn is_hdf5(bytes: &[u8]) -> bool {
    let at = |o: usize| bytes.get(o..o + 8) == Some(&HDF5_MAGIC[..]);
    at(0) || (9..=20).map(|p| 1usize << p).take_while(|&o| o < bytes.len()).any(at)
}

#[cfg(test)]
pub(crate) mod build {
    //! A writer of Ogawa trees for tests: nodes are laid out children first, so every offset
    //! points backwards, as the Alembic writer does.

    /// A node of the tree to write.
    #[derive(Debug, Clone)]
    pub enum Node {
        Group(Vec<Node>),
        Data(Vec<u8>),
        EmptyGroup,
        EmptyData,
    }

    /// The whole file: header, then the nodes, then the root group.
    pub fn file(root: &Node) -> Vec<u8> {
        let mut out = b"Ogawa\xff\x00\x01".to_vec();
        out.extend_from_slice(&0u64.to_le_bytes());
        let root_offset = write(&mut out, root) & !(1 << 63);
        out[8..16].copy_from_slice(&root_offset.to_le_bytes());
        out
    }

    /// Append `node`; its child entry (offset, with the data bit for data).
    fn write(out: &mut Vec<u8>, node: &Node) -> u64 {
        match node {
            Node::EmptyGroup => 0,
            Node::EmptyData => 1 << 63,
            Node::Data(bytes) => {
                let at = out.len() as u64;
                out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
                out.extend_from_slice(bytes);
                at | 1 << 63
            }
            Node::Group(children) => {
                let entries: Vec<u64> = children.iter().map(|c| write(out, c)).collect();
                let at = out.len() as u64;
                out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
                for e in entries {
                    out.extend_from_slice(&e.to_le_bytes());
                }
                at
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::build::{file, Node};
    use super::*;

    fn sample() -> Vec<u8> {
        file(&Node::Group(vec![
            Node::Data(vec![1, 2, 3]),
            Node::Group(vec![Node::Data(vec![9; 20]), Node::EmptyData]),
            Node::EmptyGroup,
        ]))
    }

    #[test]
    fn reads_groups_and_data() {
        let bytes = sample();
        let o = Ogawa::open(&bytes).unwrap();
        let root = o.group(o.root).unwrap();
        assert_eq!(root.len(), 3);
        assert_eq!(o.data(root[0].data("x").unwrap()).unwrap(), &[1, 2, 3]);
        let inner = o.group(root[1].group("x").unwrap()).unwrap();
        assert_eq!(o.data(inner[0].data("x").unwrap()).unwrap(), &[9; 20]);
        assert_eq!(inner[1], Child::Data(0));
        assert!(o.data(0).unwrap().is_empty());
        assert_eq!(root[2], Child::Group(0));
        assert!(o.group(0).unwrap().is_empty());
        assert!(root[0].group("root child 0").unwrap_err().contains("expected a group"));
        assert!(root[1].data("root child 1").unwrap_err().contains("expected data"));
    }

    #[test]
    fn broken_headers_are_errors() {
        let good = sample();
        let e = Ogawa::open(b"").unwrap_err();
        assert!(e.contains("too short"), "{e}");
        let e = Ogawa::open(b"# not Alembic, some text file").unwrap_err();
        assert!(e.contains("not an Alembic file"), "{e}");
        let e = Ogawa::open(b"Ogaw").unwrap_err();
        assert!(e.contains("too short"), "{e}");
        let e = Ogawa::open(b"\x89HDF\r\n\x1a\n\0\0\0\0\0\0\0\0").unwrap_err();
        assert!(e.contains("HDF5 Alembic is not supported; re-export as Ogawa"), "{e}");
        let mut user_block = vec![0u8; 512];
        user_block.extend_from_slice(HDF5_MAGIC);
        assert!(Ogawa::open(&user_block).unwrap_err().contains("HDF5"));
        let mut b = good.clone();
        b[5] = 0;
        assert!(Ogawa::open(&b).unwrap_err().contains("did not finish"));
        let mut b = good.clone();
        b[7] = 2;
        assert!(Ogawa::open(&b).unwrap_err().contains("version 2"));
        let mut b = good.clone();
        b[8..16].copy_from_slice(&(good.len() as u64).to_le_bytes());
        assert!(Ogawa::open(&b).unwrap_err().contains("past the end"));
        let mut b = good;
        b[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(Ogawa::open(&b).unwrap_err().contains("not a group"));
    }

    #[test]
    fn bad_counts_sizes_and_offsets_are_errors() {
        // A group claiming 2^40 children and a data block claiming 2^40 bytes: refused before
        // any allocation.
        let mut bytes = file(&Node::Group(vec![Node::Data(vec![7; 4])]));
        let o = Ogawa::open(&bytes).unwrap();
        let root = o.root as usize;
        let data = o.group(o.root).unwrap()[0].data("x").unwrap() as usize;
        bytes[root..root + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let e = Ogawa::open(&bytes).unwrap().group(root as u64).unwrap_err();
        assert!(e.contains("children run past the end"), "{e}");
        bytes[root..root + 8].copy_from_slice(&1u64.to_le_bytes());
        bytes[data..data + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let e = Ogawa::open(&bytes).unwrap().data(data as u64).unwrap_err();
        assert!(e.contains("runs past the end"), "{e}");
        // Offsets beyond the file and next to u64::MAX.
        let o = Ogawa::open(&bytes).unwrap();
        for offset in [bytes.len() as u64 - 4, bytes.len() as u64, u64::MAX >> 1, (1 << 63) - 3] {
            assert!(o.group(offset).is_err());
            assert!(o.data(offset).is_err());
        }
    }

    #[test]
    fn every_truncation_is_an_error_or_a_consistent_read() {
        let good = sample();
        for n in 0..good.len() {
            let cut = &good[..n];
            // The header may still parse (the root offset is at the end): then reading the tree
            // must fail somewhere, never panic.
            if let Ok(o) = Ogawa::open(cut) {
                let r = o.group(o.root);
                assert!(r.is_err(), "prefix of {n} bytes read as a whole tree");
            }
        }
    }
}
