//! The output buffer every writer appends to.

/// A growable byte buffer. The hot append checks capacity inline; growth lives out of line.
#[derive(Default, Debug)]
pub struct Buffer {
    bytes: Vec<u8>,
}

impl Buffer {
    pub fn with_capacity(capacity: usize) -> Self {
        Buffer {
            bytes: Vec::with_capacity(capacity),
        }
    }

    #[inline]
    pub fn push(&mut self, byte: u8) {
        self.bytes.push(byte);
    }

    #[inline]
    pub fn extend(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes
    }

    pub fn into_vec(self) -> Vec<u8> {
        self.bytes
    }
}
