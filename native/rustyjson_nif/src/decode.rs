//! Builds BEAM terms from the core parser's events.

use rustler::types::binary::Binary;
use rustler::{Encoder, Env, Term};
use rustyjson_core::parser::{self, Builder, ParseError, Str};

mod atoms {
    rustler::atoms! { error, nil, true_ = "true", false_ = "false", badarg }
}

/// One open container: its collected values (and keys, for objects).
struct Frame<'a> {
    keys: Vec<Term<'a>>,
    values: Vec<Term<'a>>,
}

struct TermBuilder<'a> {
    env: Env<'a>,
    input: Binary<'a>,
    stack: Vec<Frame<'a>>,
    result: Option<Term<'a>>,
}

impl<'a> TermBuilder<'a> {
    fn push(&mut self, term: Term<'a>) {
        match self.stack.last_mut() {
            Some(frame) => frame.values.push(term),
            None => self.result = Some(term),
        }
    }

    fn string_term(&self, s: Str) -> Term<'a> {
        match s {
            Str::Input { start, end } => self
                .input
                .make_subbinary(start, end - start)
                .expect("span lies inside the input")
                .to_term(self.env),
            Str::Unescaped(bytes) => {
                let mut bin = rustler::NewBinary::new(self.env, bytes.len());
                bin.as_mut_slice().copy_from_slice(bytes);
                bin.into()
            }
        }
    }
}

impl<'a> Builder for TermBuilder<'a> {
    fn null(&mut self) {
        self.push(atoms::nil().encode(self.env));
    }
    fn boolean(&mut self, value: bool) {
        self.push(value.encode(self.env));
    }
    fn integer(&mut self, text: &[u8]) {
        // The token is ASCII digits with an optional sign.
        let text = std::str::from_utf8(text).unwrap();
        let term = match text.parse::<i64>() {
            Ok(n) => n.encode(self.env),
            Err(_) => text
                .parse::<rustler::BigInt>()
                .expect("digits")
                .encode(self.env),
        };
        self.push(term);
    }
    fn float(&mut self, _text: &[u8], value: f64) {
        self.push(value.encode(self.env));
    }
    fn string(&mut self, _input: &[u8], s: Str) {
        let term = self.string_term(s);
        self.push(term);
    }
    fn key(&mut self, _input: &[u8], s: Str) {
        let term = self.string_term(s);
        self.stack
            .last_mut()
            .expect("key inside object")
            .keys
            .push(term);
    }
    fn start_array(&mut self) {
        self.stack.push(Frame {
            keys: Vec::new(),
            values: Vec::new(),
        });
    }
    fn end_array(&mut self) {
        let frame = self.stack.pop().expect("open array");
        let list = frame.values.encode(self.env);
        self.push(list);
    }
    fn start_object(&mut self) {
        self.start_array();
    }
    fn end_object(&mut self) {
        let frame = self.stack.pop().expect("open object");
        let mut map = Term::map_new(self.env);
        // The first occurrence of a key wins, as in Jason: insert from the end.
        for (k, v) in frame.keys.into_iter().zip(frame.values).rev() {
            map = map.map_put(k, v).expect("map");
        }
        self.push(map);
    }
}

pub fn decode<'a>(env: Env<'a>, input: Term<'a>) -> Term<'a> {
    let Ok(binary) = Binary::from_term(input) else {
        return (atoms::error(), atoms::badarg()).encode(env);
    };
    let mut builder = TermBuilder {
        env,
        input: binary,
        stack: Vec::new(),
        result: None,
    };
    match parser::parse(binary.as_slice(), &mut builder) {
        Ok(()) => builder.result.expect("a parsed document has a value"),
        Err(ParseError::UnexpectedByte(pos)) => (atoms::error(), pos).encode(env),
        Err(ParseError::UnexpectedEnd(pos)) => (atoms::error(), pos).encode(env),
        Err(ParseError::Token { start, end }) => {
            let token = std::str::from_utf8(&binary.as_slice()[start..end]).unwrap_or("");
            (atoms::error(), (start, token)).encode(env)
        }
    }
}
