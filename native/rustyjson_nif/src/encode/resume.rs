//! Resuming a walk: the stack rebuilt from a checkpoint's positions over the same term.

use rustler::sys::{
    enif_get_map_size, enif_get_map_value, enif_map_iterator_destroy, enif_map_iterator_get_pair,
    enif_term_type, ErlNifTerm, ErlNifTermType,
};

use super::templates::template;
use super::values::step_map_iterator;
use super::walker::{Frame, Walker};

impl<'o> Walker<'o> {
    /// Rebuilds the frames of a checkpoint (`path`: each frame's count) over `root`, without writing. Returns
    /// false when the term does not fit the path (then the caller starts over).
    pub(super) fn resume_from(&mut self, root: ErlNifTerm, path: &[usize]) -> bool {
        let mut container = root;
        for (level, &count) in path.iter().enumerate() {
            let last = level + 1 == path.len();
            // The element the next level lives in: index count - 1 (the one in progress).
            let in_progress = if last { None } else { count.checked_sub(1) };
            if !last && in_progress.is_none() {
                return false;
            }
            let child = match self.rebuild_frame(container, count, in_progress) {
                Some(child) => child,
                None => return false,
            };
            if let Some(child) = child {
                container = child;
            }
        }
        true
    }

    /// Pushes the frame for `container` positioned after `count` started elements; returns the value of element
    /// `in_progress` when asked.
    fn rebuild_frame(
        &mut self,
        container: ErlNifTerm,
        count: usize,
        in_progress: Option<usize>,
    ) -> Option<Option<ErlNifTerm>> {
        let env = self.env;
        match unsafe { enif_term_type(env, container) } {
            ErlNifTermType::ERL_NIF_TERM_TYPE_LIST => {
                let mut tail = container;
                let mut child = None;
                for i in 0..count {
                    let (head, rest) = self.list_cell(tail)?;
                    if Some(i) == in_progress {
                        child = Some(head);
                    }
                    tail = rest;
                }
                self.stack.push(Frame::List { tail, count });
                Some(child)
            }
            ErlNifTermType::ERL_NIF_TERM_TYPE_MAP => {
                if let Some(pairs) = self.ordered_pairs(container) {
                    let mut tail = pairs;
                    let mut child = None;
                    for i in 0..count {
                        let (pair, rest) = self.list_cell(tail)?;
                        if Some(i) == in_progress {
                            child = Some(self.pair(pair)?.1);
                        }
                        tail = rest;
                    }
                    let seen = self.seen_set();
                    self.stack.push(Frame::Pairs { tail, count, seen });
                    return Some(child);
                }
                if let Some(module) = self.struct_module(container) {
                    let template = template(module)?.for_walk(self.sort);
                    if count > template.fields.len() {
                        return None;
                    }
                    let (keys, vals) = self.struct_values(container, &template);
                    let child = match in_progress {
                        Some(i) => {
                            let mut v = ErlNifTerm::default();
                            if unsafe {
                                enif_get_map_value(env, container, template.fields[i], &mut v)
                            } == 0
                            {
                                return None;
                            }
                            Some(v)
                        }
                        None => None,
                    };
                    self.stack.push(Frame::Struct {
                        map: container,
                        template,
                        keys,
                        vals,
                        count,
                    });
                    return Some(child);
                }
                if let Some((keys, vals, len)) = self.reads.flatmap(container) {
                    if count > len {
                        return None;
                    }
                    // SAFETY: count - 1 < len.
                    let child = in_progress.map(|i| unsafe { *vals.add(i) });
                    let seen = self.seen_set();
                    self.stack.push(Frame::Flat {
                        map: container,
                        keys,
                        vals,
                        len,
                        count,
                        seen,
                    });
                    return Some(child);
                }
                let mut size = 0;
                unsafe { enif_get_map_size(env, container, &mut size) };
                let (mut iter, backwards) = self.map_iterator(container, size)?;
                let mut child = None;
                for _ in 1..count {
                    if !unsafe { step_map_iterator(env, &mut iter, backwards) } {
                        unsafe { enif_map_iterator_destroy(env, &mut iter) };
                        return None;
                    }
                }
                if in_progress.is_some() {
                    let (mut key, mut val) = (ErlNifTerm::default(), ErlNifTerm::default());
                    unsafe { enif_map_iterator_get_pair(env, &mut iter, &mut key, &mut val) };
                    child = Some(val);
                }
                let seen = self.seen_set();
                self.stack.push(Frame::Map {
                    map: container,
                    iter,
                    count,
                    backwards,
                    seen,
                });
                Some(child)
            }
            _ => None,
        }
    }
}
