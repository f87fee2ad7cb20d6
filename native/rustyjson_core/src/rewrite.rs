//! Rewrites JSON text that RustyJson did not write (what a `Jason.Encoder` or `JSON.Encoder` fallback returned)
//! so that it obeys the call's options, as if RustyJson had written it: every string, keys included, unescaped
//! and written again by [`crate::escape`] in the call's mode; with `sort`, every object's members in byte order of
//! their unescaped keys (a stable sort, as `sort_keys` elsewhere: equal keys keep their order); with `strict`, an
//! object with a repeated key is an error. Numbers keep their text (an integer is written from its value, which
//! is the same text but for `-0`, written `0`); whitespace is dropped.
//!
//! The text is parsed by [`crate::parser`] into a tree (the parser builds bottom-up, and a container's opening
//! bracket must be written before its members), which is then written out top-down, each string once. Both
//! passes are loops over explicit stacks: nesting depth is bounded by memory, not by the machine stack.

use crate::buffer::Buffer;
use crate::escape::{self, Mode};
use crate::parser::{self, Builder, Limits, ParseError, Str};
use std::collections::HashSet;

/// What to do to the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// The escape mode every string is written in.
    pub mode: Mode,
    /// Members of every object in byte order of their unescaped keys.
    pub sort: bool,
    /// An object with two equal keys (after unescaping) is an error.
    pub strict: bool,
}

/// Why the text could not be rewritten.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// Not one valid JSON value: the parser's error, with its positions in the text.
    Parse(ParseError),
    /// With [`Options::strict`]: the first object to close with a repeated key, and that key (unescaped).
    DuplicateKey(Vec<u8>),
}

/// `input`, one JSON value, written again with `options`.
pub fn rewrite(input: &[u8], options: Options) -> Result<Vec<u8>, Error> {
    let mut tree = Tree {
        nodes: Vec::new(),
        children: Vec::new(),
        bytes: Vec::new(),
        pairs: Vec::new(),
        options,
        duplicate: None,
    };
    let root = parser::parse(input, &mut tree).map_err(|e| match e {
        ParseError::DuplicateKey { .. } => {
            Error::DuplicateKey(tree.duplicate.take().unwrap_or_default())
        }
        e => Error::Parse(e),
    })?;
    let mut out = Buffer::with_capacity(input.len() + input.len() / 8 + 16);
    tree.write(root, &mut out);
    Ok(out.into_vec())
}

/// A parsed value. Text (number tokens, unescaped strings) is a range of [`Tree::bytes`]; a container's members
/// are a range of [`Tree::children`] (an object's as key, value, key, value...).
#[derive(Clone, Copy)]
enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Number { start: usize, end: usize },
    Str { start: usize, end: usize },
    Array { start: usize, end: usize },
    Object { start: usize, end: usize },
}

struct Tree {
    nodes: Vec<Node>,
    children: Vec<usize>,
    bytes: Vec<u8>,
    /// An object's (key, value) pairs while it is sorted (kept to reuse its memory).
    pairs: Vec<(usize, usize)>,
    options: Options,
    /// The repeated key [`Builder::first_duplicate`] found.
    duplicate: Option<Vec<u8>>,
}

impl Tree {
    fn push(&mut self, node: Node) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn text(&mut self, bytes: &[u8]) -> (usize, usize) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(bytes);
        (start, self.bytes.len())
    }

    /// The unescaped bytes of a [`Node::Str`] (a string or a key).
    fn str_bytes(&self, node: usize) -> &[u8] {
        match self.nodes[node] {
            Node::Str { start, end } => &self.bytes[start..end],
            _ => unreachable!("a string node"),
        }
    }

    /// Writes the value at `root` compactly into `out`.
    fn write(&self, root: usize, out: &mut Buffer) {
        // Open containers: their first member, the member to write next, the end of their members, and whether
        // an object.
        let mut open: Vec<(usize, usize, usize, bool)> = Vec::new();
        let mut node = root;
        loop {
            match self.nodes[node] {
                Node::Null => out.extend(b"null"),
                Node::Bool(true) => out.extend(b"true"),
                Node::Bool(false) => out.extend(b"false"),
                Node::Int(i) => crate::number::write_i64(out, i),
                Node::Number { start, end } => out.extend(&self.bytes[start..end]),
                Node::Str { .. } => self.write_str(node, out),
                Node::Array { start, end } => {
                    out.push(b'[');
                    open.push((start, start, end, false));
                }
                Node::Object { start, end } => {
                    out.push(b'{');
                    open.push((start, start, end, true));
                }
            }
            // The next member to write, closing the containers that are done.
            node = loop {
                let Some((first, next, end, object)) = open.last_mut() else {
                    return;
                };
                if next == end {
                    out.push(if *object { b'}' } else { b']' });
                    open.pop();
                    continue;
                }
                if next != first {
                    out.push(b',');
                }
                let member = *next;
                if *object {
                    self.write_str(self.children[member], out);
                    out.push(b':');
                    *next += 2;
                    break self.children[member + 1];
                }
                *next += 1;
                break self.children[member];
            };
        }
    }

    /// Writes a [`Node::Str`] in the call's mode.
    fn write_str(&self, node: usize, out: &mut Buffer) {
        // The parser took only valid UTF-8 (and `\u` escapes make valid UTF-8), so the writer cannot fail.
        let written = escape::write_string(out, self.str_bytes(node), self.options.mode);
        debug_assert!(written.is_ok());
    }
}

impl Builder for Tree {
    type V = usize;
    type K = usize;

    fn null(&mut self) -> usize {
        self.push(Node::Null)
    }

    fn boolean(&mut self, value: bool) -> usize {
        self.push(Node::Bool(value))
    }

    fn int(&mut self, value: i64) -> usize {
        self.push(Node::Int(value))
    }

    fn big_int(&mut self, text: &[u8]) -> usize {
        let (start, end) = self.text(text);
        self.push(Node::Number { start, end })
    }

    fn float(&mut self, text: &[u8], _value: f64) -> usize {
        self.big_int(text)
    }

    // `1e400` is valid JSON, only beyond what a float holds: its text is kept like any other number's.
    fn float_out_of_range(&mut self, text: &[u8]) -> Option<usize> {
        Some(self.big_int(text))
    }

    fn string(&mut self, s: Str) -> usize {
        let (start, end) = self.text(s.bytes());
        self.push(Node::Str { start, end })
    }

    fn key(&mut self, s: Str) -> Result<usize, ()> {
        Ok(Builder::string(self, s))
    }

    fn array(&mut self, items: &[usize]) -> usize {
        let start = self.children.len();
        self.children.extend_from_slice(items);
        let end = self.children.len();
        self.push(Node::Array { start, end })
    }

    fn object(&mut self, keys: &[usize], values: &[usize]) -> usize {
        let start = self.children.len();
        if self.options.sort && keys.len() > 1 {
            let mut pairs = std::mem::take(&mut self.pairs);
            pairs.clear();
            pairs.extend(keys.iter().copied().zip(values.iter().copied()));
            // `sort_by` is stable: equal keys keep their order.
            pairs.sort_by(|a, b| self.str_bytes(a.0).cmp(self.str_bytes(b.0)));
            for &(key, value) in &pairs {
                self.children.extend_from_slice(&[key, value]);
            }
            self.pairs = pairs;
        } else {
            for (&key, &value) in keys.iter().zip(values) {
                self.children.extend_from_slice(&[key, value]);
            }
        }
        let end = self.children.len();
        self.push(Node::Object { start, end })
    }

    fn limits(&self) -> Limits {
        Limits {
            max_depth: usize::MAX,
            // RustyJson writes integers of any size; Jason's limit on reading them does not apply to writing.
            integer_bytes: usize::MAX,
            duplicate_keys_error: self.options.strict,
            ..Limits::default()
        }
    }

    fn first_duplicate(&mut self, keys: &[usize]) -> Option<usize> {
        let found = if keys.len() <= 8 {
            (1..keys.len()).find(|&i| {
                let key = self.str_bytes(keys[i]);
                keys[..i].iter().any(|&k| self.str_bytes(k) == key)
            })
        } else {
            let mut seen = HashSet::with_capacity(keys.len());
            keys.iter().position(|&k| !seen.insert(self.str_bytes(k)))
        };
        let i = found?;
        self.duplicate = Some(self.str_bytes(keys[i]).to_vec());
        Some(i)
    }
}

#[cfg(test)]
mod tests;
