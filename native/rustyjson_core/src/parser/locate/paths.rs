//! The JSON Pointers a [`Locator`](super::Locator) looks for, as a trie of their reference tokens.

use std::collections::HashMap;

/// A node of the trie: one path from the document's root.
#[derive(Default, Debug)]
struct Node {
    /// Children by the token's bytes (an object member's key, unescaped).
    keys: HashMap<Vec<u8>, u32>,
    /// The same children by array index, for the tokens that are one (`0`, or digits without a leading zero).
    indices: HashMap<usize, u32>,
    /// The pointers that end at this node.
    targets: Vec<usize>,
    /// The pointers that end at this node or below it (cleared when a repeated key is followed again).
    below: Vec<usize>,
}

/// The pointers, each a list of reference tokens already unescaped (`~1` is `/`, `~0` is `~`).
#[derive(Debug)]
pub struct Paths {
    nodes: Vec<Node>,
}

/// A node of [`Paths`]: the root is [`Paths::ROOT`].
pub type NodeId = u32;

impl Paths {
    /// The document's root (the pointer `""`).
    pub const ROOT: NodeId = 0;

    /// The trie of `pointers` (pointer `i` is the list of its tokens).
    pub fn new<T: AsRef<[u8]>>(pointers: &[Vec<T>]) -> Self {
        let mut nodes = vec![Node::default()];
        for (i, tokens) in pointers.iter().enumerate() {
            let mut at = Self::ROOT as usize;
            nodes[at].below.push(i);
            for token in tokens {
                let token = token.as_ref();
                let next = match nodes[at].keys.get(token) {
                    Some(&next) => next,
                    None => {
                        let next = nodes.len() as NodeId;
                        nodes.push(Node::default());
                        nodes[at].keys.insert(token.to_vec(), next);
                        if let Some(index) = array_index(token) {
                            nodes[at].indices.insert(index, next);
                        }
                        next
                    }
                };
                at = next as usize;
                nodes[at].below.push(i);
            }
            nodes[at].targets.push(i);
        }
        Paths { nodes }
    }

    /// The child of `node` for the object member `key`.
    #[inline]
    pub fn member(&self, node: NodeId, key: &[u8]) -> Option<NodeId> {
        let node = &self.nodes[node as usize];
        if node.keys.is_empty() {
            return None;
        }
        node.keys.get(key).copied()
    }

    /// The child of `node` for the array item `index`.
    #[inline]
    pub fn item(&self, node: NodeId, index: usize) -> Option<NodeId> {
        let node = &self.nodes[node as usize];
        if node.indices.is_empty() {
            return None;
        }
        node.indices.get(&index).copied()
    }

    /// Whether `node` has children (a container there must be walked with its members looked up).
    #[inline]
    pub fn has_children(&self, node: NodeId) -> bool {
        !self.nodes[node as usize].keys.is_empty()
    }

    /// The pointers that end at `node`.
    #[inline]
    pub fn targets(&self, node: NodeId) -> &[usize] {
        &self.nodes[node as usize].targets
    }

    /// The pointers that end at `node` or below it.
    pub fn below(&self, node: NodeId) -> &[usize] {
        &self.nodes[node as usize].below
    }
}

/// The array index a reference token names (RFC 6901: `0`, or digits without a leading zero); `-` (the item after
/// the last) and anything else name none.
pub fn array_index(token: &[u8]) -> Option<usize> {
    match token {
        [b'0'] => Some(0),
        [b'1'..=b'9', rest @ ..] if rest.iter().all(u8::is_ascii_digit) => {
            std::str::from_utf8(token).ok()?.parse().ok()
        }
        _ => None,
    }
}
