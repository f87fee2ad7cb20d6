//! The order in which `maps:to_list/1` lists a hash map (a map of more than 32 keys): Jason writes maps in that
//! order, and so does RustyJson. It is a fact of the running VM relative to the NIF map iterator (OTP 25-28 list
//! a hash map from the iterator's tail back, OTP 29 from its head on), so it is learned at load from a map and its
//! `maps:to_list/1` keys. Until learned, if neither direction matches, or with every fast path switched off, maps
//! of more than 32 keys are left to Elixir, which lists them with `Map.to_list/1`.

use rustler::sys::{
    enif_compare, enif_get_list_cell, enif_is_empty_list, enif_map_iterator_create,
    enif_map_iterator_destroy, enif_map_iterator_get_pair, enif_map_iterator_next, ErlNifEnv,
    ErlNifMapIterator, ErlNifMapIteratorEntry, ErlNifTerm,
};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU8, Ordering};

/// How to walk a hash map with the NIF iterator to list it as `maps:to_list/1` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Not learned (or no direction matched): leave hash maps to Elixir.
    Unknown = 0,
    /// From the head, with `enif_map_iterator_next`.
    FromHead = 1,
    /// From the tail, with `enif_map_iterator_prev`.
    FromTail = 2,
}

static ORDER: AtomicU8 = AtomicU8::new(Order::Unknown as u8);

/// The learned order.
#[inline]
pub fn get() -> Order {
    match ORDER.load(Ordering::Relaxed) {
        1 => Order::FromHead,
        2 => Order::FromTail,
        _ => Order::Unknown,
    }
}

/// Learns the order from `map` (a hash map) and `keys`, its keys as `maps:to_list/1` lists them; returns it.
pub fn learn(env: *mut ErlNifEnv, map: ErlNifTerm, keys: ErlNifTerm) -> Order {
    let listed = unsafe { list_terms(env, keys) };
    let walked = unsafe { iterator_keys(env, map) };
    let same = |a: &[ErlNifTerm], b: &mut dyn Iterator<Item = &ErlNifTerm>| {
        a.iter()
            .zip(b)
            .all(|(&x, &y)| unsafe { enif_compare(x, y) } == 0)
    };
    let order = match (listed, walked) {
        _ if super::word::forced_off() => Order::Unknown,
        (Some(listed), Some(walked)) if listed.len() > 32 && listed.len() == walked.len() => {
            if same(&listed, &mut walked.iter()) {
                Order::FromHead
            } else if same(&listed, &mut walked.iter().rev()) {
                Order::FromTail
            } else {
                Order::Unknown
            }
        }
        _ => Order::Unknown,
    };
    ORDER.store(order as u8, Ordering::Relaxed);
    order
}

/// The elements of a proper list.
unsafe fn list_terms(env: *mut ErlNifEnv, mut list: ErlNifTerm) -> Option<Vec<ErlNifTerm>> {
    let mut terms = Vec::new();
    let (mut head, mut tail) = (ErlNifTerm::default(), ErlNifTerm::default());
    while enif_get_list_cell(env, list, &mut head, &mut tail) != 0 {
        terms.push(head);
        list = tail;
    }
    (enif_is_empty_list(env, list) != 0).then_some(terms)
}

/// The keys of `map` from the NIF iterator's head on.
unsafe fn iterator_keys(env: *mut ErlNifEnv, map: ErlNifTerm) -> Option<Vec<ErlNifTerm>> {
    let mut iter = MaybeUninit::<ErlNifMapIterator>::zeroed().assume_init();
    let head = ErlNifMapIteratorEntry::ERL_NIF_MAP_ITERATOR_HEAD;
    if enif_map_iterator_create(env, map, &mut iter, head) == 0 {
        return None;
    }
    let mut keys = Vec::new();
    let (mut key, mut value) = (ErlNifTerm::default(), ErlNifTerm::default());
    while enif_map_iterator_get_pair(env, &mut iter, &mut key, &mut value) != 0 {
        keys.push(key);
        enif_map_iterator_next(env, &mut iter);
    }
    enif_map_iterator_destroy(env, &mut iter);
    Some(keys)
}
