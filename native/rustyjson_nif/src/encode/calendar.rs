//! Calendar.ISO dates, times, naive datetimes and datetimes, written as their `to_iso8601/1` strings.

use std::ptr;

use rustler::sys::{enif_get_int64, enif_get_map_value, enif_get_tuple, ErlNifTerm};

use super::atoms;
use super::output::Out;
use super::walker::Walker;

/// Writes `v` in decimal with at least `width` digits (zero-padded), as Calendar.ISO's `zero_pad`: a negative
/// value is `-` and its padded absolute value.
fn pad(out: &mut Out, v: i64, width: usize) {
    let mut digits = [0u8; 20];
    let mut n = v.unsigned_abs();
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.push(b'-');
    }
    for _ in (digits.len() - i)..width {
        out.push(b'0');
    }
    out.extend(&digits[i..]);
}

/// The calendar types written natively.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Calendar {
    Date,
    Time,
    Naive,
    DateTime,
}

impl<'o> Walker<'o> {
    /// Which calendar type `module` is (Date, Time, NaiveDateTime, DateTime), if any.
    #[inline]
    pub(super) fn calendar_kind(&self, module: ErlNifTerm) -> Option<Calendar> {
        let a = |atom: rustler::Atom| atom.as_c_arg();
        let kinds = [
            (atoms::date(), Calendar::Date),
            (atoms::time(), Calendar::Time),
            (atoms::naive_date_time(), Calendar::Naive),
            (atoms::date_time(), Calendar::DateTime),
        ];
        kinds.iter().find(|(m, _)| a(*m) == module).map(|(_, k)| *k)
    }

    /// Writes a Calendar.ISO date/time as its `to_iso8601/1` string; None (nothing written) when the struct is
    /// not one the NIF can vouch for (another calendar, odd field values): then the protocol path writes it.
    pub(super) fn write_calendar(
        &self,
        term: ErlNifTerm,
        kind: Calendar,
        out: &mut Out,
    ) -> Option<()> {
        let start = out.len();
        let written = self.write_calendar_text(term, kind, out);
        if written.is_none() {
            out.truncate(start);
        }
        written
    }

    fn write_calendar_text(&self, term: ErlNifTerm, kind: Calendar, out: &mut Out) -> Option<()> {
        let env = self.env;
        let flat = self.reads.flatmap(term);
        let get = |key: rustler::Atom| {
            let key = key.as_c_arg();
            if let Some((keys, vals, len)) = flat {
                // SAFETY: i < len; the map lives for the call.
                return (0..len)
                    .find(|&i| unsafe { *keys.add(i) } == key)
                    .map(|i| unsafe { *vals.add(i) });
            }
            let mut v = ErlNifTerm::default();
            (unsafe { enif_get_map_value(env, term, key, &mut v) } != 0).then_some(v)
        };
        let int_of = |v: ErlNifTerm| {
            self.reads.small(v).or_else(|| {
                let mut i: i64 = 0;
                (unsafe { enif_get_int64(env, v, &mut i) } != 0).then_some(i)
            })
        };
        let int = |key: rustler::Atom| int_of(get(key)?);
        let nonneg = |key: rustler::Atom| int(key).filter(|v| *v >= 0);
        if get(atoms::calendar())? != atoms::calendar_iso().as_c_arg() {
            return None;
        }
        out.push(b'"');
        if kind != Calendar::Time {
            let (y, m, d) = (
                int(atoms::year())?,
                nonneg(atoms::month())?,
                nonneg(atoms::day())?,
            );
            pad(out, y, 4);
            out.push(b'-');
            pad(out, m, 2);
            out.push(b'-');
            pad(out, d, 2);
        }
        if kind != Calendar::Date {
            if kind != Calendar::Time {
                out.push(b'T');
            }
            let (h, mi, sec) = (
                nonneg(atoms::hour())?,
                nonneg(atoms::minute())?,
                nonneg(atoms::second())?,
            );
            pad(out, h, 2);
            out.push(b':');
            pad(out, mi, 2);
            out.push(b':');
            pad(out, sec, 2);
            let micro = get(atoms::microsecond())?;
            let mut arity = 0;
            let mut elems: *const ErlNifTerm = ptr::null();
            if unsafe { enif_get_tuple(env, micro, &mut arity, &mut elems) } == 0 || arity != 2 {
                return None;
            }
            let (us, precision) = unsafe { (int_of(*elems)?, int_of(*elems.add(1))?) };
            if !(0..=999_999).contains(&us) || !(0..=6).contains(&precision) {
                return None;
            }
            if precision > 0 {
                out.push(b'.');
                let at = out.len();
                pad(out, us, 6);
                out.truncate(at + precision as usize);
            }
        }
        if kind == Calendar::DateTime {
            let (utc, std) = (int(atoms::utc_offset())?, int(atoms::std_offset())?);
            let zone = self.binary(get(atoms::time_zone())?)?;
            if utc == 0 && std == 0 && zone == b"Etc/UTC" {
                out.push(b'Z');
            } else {
                let total = utc.checked_add(std)?;
                let seconds = total.checked_abs()?;
                out.push(if total < 0 { b'-' } else { b'+' });
                pad(out, seconds / 3600, 2);
                out.push(b':');
                pad(out, (seconds % 3600) / 60, 2);
            }
        }
        out.push(b'"');
        Some(())
    }
}
