//! Walks a BEAM term into the core writer, with an explicit stack (no native recursion).

use rustler::types::map::MapIterator;
use rustler::{Encoder, Env, ListIterator, NewBinary, Term, TermType};
use rustyjson_core::buffer::Buffer;
use rustyjson_core::{escape, number};

mod atoms {
    rustler::atoms! { error, nil, true_ = "true", false_ = "false", unsupported, invalid_byte }
}

enum Work<'a> {
    Value(Term<'a>),
    Byte(u8),
    List(ListIterator<'a>, bool),
    Map(Box<MapIterator<'a>>, bool),
}

pub fn encode<'a>(env: Env<'a>, term: Term<'a>) -> Term<'a> {
    let mut out = Buffer::with_capacity(64);
    match walk(term, &mut out) {
        Ok(()) => {
            let bytes = out.as_slice();
            let mut bin = NewBinary::new(env, bytes.len());
            bin.as_mut_slice().copy_from_slice(bytes);
            Term::from(bin)
        }
        Err(reason) => (atoms::error(), reason).encode(env),
    }
}

fn walk<'a>(root: Term<'a>, out: &mut Buffer) -> Result<(), Term<'a>> {
    let env = root.get_env();
    let mut stack = vec![Work::Value(root)];
    while let Some(work) = stack.pop() {
        match work {
            Work::Byte(b) => out.push(b),
            Work::List(mut iter, first) => {
                if let Some(item) = iter.next() {
                    if !first {
                        out.push(b',');
                    }
                    stack.push(Work::List(iter, false));
                    stack.push(Work::Value(item));
                }
            }
            Work::Map(mut iter, first) => {
                if let Some((key, value)) = iter.next() {
                    if !first {
                        out.push(b',');
                    }
                    write_string(key, out)?;
                    out.push(b':');
                    stack.push(Work::Map(iter, false));
                    stack.push(Work::Value(value));
                }
            }
            Work::Value(term) => match term.get_type() {
                TermType::Atom => {
                    if term == atoms::nil().encode(env) {
                        out.extend(b"null");
                    } else if term == atoms::true_().encode(env) {
                        out.extend(b"true");
                    } else if term == atoms::false_().encode(env) {
                        out.extend(b"false");
                    } else {
                        let name = term.atom_to_string().map_err(|_| unsupported(term))?;
                        escape::write_json_string(out, name.as_bytes());
                    }
                }
                TermType::Integer => match term.decode::<i64>() {
                    Ok(n) => number::write_i64(out, n),
                    Err(_) => return Err(unsupported(term)),
                },
                TermType::Float => number::write_f64(out, term.decode::<f64>().unwrap()),
                TermType::Binary => write_string(term, out)?,
                TermType::List => {
                    out.push(b'[');
                    stack.push(Work::Byte(b']'));
                    stack.push(Work::List(term.decode().unwrap(), true));
                }
                TermType::Map => {
                    out.push(b'{');
                    stack.push(Work::Byte(b'}'));
                    stack.push(Work::Map(Box::new(MapIterator::new(term).unwrap()), true));
                }
                _ => return Err(unsupported(term)),
            },
        }
    }
    Ok(())
}

fn write_string<'a>(term: Term<'a>, out: &mut Buffer) -> Result<(), Term<'a>> {
    let bytes = match term.get_type() {
        TermType::Binary => term.decode_as_binary().map_err(|_| unsupported(term))?,
        _ => return Err(unsupported(term)),
    };
    let bytes = bytes.as_slice();
    if let Err(e) = std::str::from_utf8(bytes) {
        let env = term.get_env();
        let bad = bytes[e.valid_up_to()];
        return Err((atoms::invalid_byte(), bad, term).encode(env));
    }
    escape::write_json_string(out, bytes);
    Ok(())
}

fn unsupported(term: Term) -> Term {
    (atoms::unsupported(), term).encode(term.get_env())
}
