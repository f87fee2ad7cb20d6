//! Resuming a walk: the stack rebuilt from a checkpoint's frames (`budget::Checkpoint`).

use rustler::sys::{
    enif_get_map_size, enif_map_iterator_destroy, enif_term_type, ErlNifTerm, ErlNifTermType,
};

use super::budget::Resume;
use super::templates::template;
use super::values::step_map_iterator;
use super::walker::{Frame, Walker};

impl<'o> Walker<'o> {
    /// Rebuilds the frames of a checkpoint (`Checkpoint::frames`), without writing. Returns false when a term
    /// does not fit its frame (then the caller starts over).
    pub(super) fn resume_from(&mut self, frames: &[(Resume, usize, ErlNifTerm)]) -> bool {
        for &(how, count, term) in frames {
            match how {
                Resume::List => self.stack.push(Frame::List { tail: term, count }),
                Resume::Pairs => {
                    let seen = self.seen_set();
                    self.stack.push(Frame::Pairs {
                        tail: term,
                        count,
                        seen,
                    });
                }
                Resume::Map => {
                    if self.rebuild_map_frame(term, count).is_none() {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Pushes the frame for the map `container` positioned after `count` started pairs.
    fn rebuild_map_frame(&mut self, container: ErlNifTerm, count: usize) -> Option<()> {
        let env = self.env;
        match unsafe { enif_term_type(env, container) } {
            ErlNifTermType::ERL_NIF_TERM_TYPE_MAP => {
                if let Some(module) = self.struct_module(container) {
                    let template = template(module)?.for_walk(self.sort);
                    if count > template.fields.len() {
                        return None;
                    }
                    let (keys, vals) = self.struct_values(container, &template);
                    self.stack.push(Frame::Struct {
                        map: container,
                        template,
                        keys,
                        vals,
                        count,
                    });
                    return Some(());
                }
                if let Some((keys, vals, len)) = self.reads.flatmap(container) {
                    if count > len {
                        return None;
                    }
                    let seen = self.seen_set();
                    self.stack.push(Frame::Flat {
                        map: container,
                        keys,
                        vals,
                        len,
                        count,
                        seen,
                    });
                    return Some(());
                }
                let mut size = 0;
                unsafe { enif_get_map_size(env, container, &mut size) };
                if let Some(pairs) = self.trie_pairs(container, size) {
                    if count > pairs.len() {
                        return None;
                    }
                    self.push_listed(pairs, Some(container), count);
                    return Some(());
                }
                let (mut iter, backwards) = self.map_iterator(container, size)?;
                for _ in 1..count {
                    if !unsafe { step_map_iterator(env, &mut iter, backwards) } {
                        unsafe { enif_map_iterator_destroy(env, &mut iter) };
                        return None;
                    }
                }
                let seen = self.seen_set();
                self.stack.push(Frame::Map {
                    map: container,
                    iter,
                    count,
                    backwards,
                    seen,
                });
                Some(())
            }
            _ => None,
        }
    }
}
