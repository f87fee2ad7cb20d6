//! Times the locator alone (`get`'s walk, its skim over what no path enters) reading `/meta/total` past a ~10 MB
//! array: `cargo run --release --example locate_time -- FILE...`. Each file's largest array is
//! repeated to ~10 MB as `{"data": [...], "meta": {"total": n}}`, as `bench/pointer.exs` builds its documents
//! (`RAW=1`: each file is such a document already).
use rustyjson_core::parser::locate::{LocateOptions, Located, Locator};
use std::time::Instant;

/// The largest array in `v`.
fn largest(v: &serde_json::Value) -> Option<&Vec<serde_json::Value>> {
    let mut best: Option<&Vec<serde_json::Value>> = None;
    match v {
        serde_json::Value::Array(a) => best = Some(a),
        serde_json::Value::Object(m) => {
            for x in m.values() {
                if let Some(a) = largest(x) {
                    let size = |a| serde_json::to_string(a).unwrap().len();
                    if best.is_none_or(|b| size(a) > size(b)) {
                        best = Some(a);
                    }
                }
            }
        }
        _ => {}
    }
    best
}

fn best_of(rounds: usize, mut f: impl FnMut()) -> f64 {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::MAX, f64::min)
}

fn main() {
    let rounds: usize = std::env::var("ROUNDS").map_or(20, |r| r.parse().unwrap());
    for path in std::env::args().skip(1) {
        let text = std::fs::read(&path).unwrap();
        let doc = if std::env::var("RAW").is_ok() {
            String::from_utf8(text).unwrap()
        } else {
            let value: serde_json::Value = serde_json::from_slice(&text).unwrap();
            let items = largest(&value).expect("an array");
            let one = serde_json::to_string(items).unwrap();
            let copies = (10_000_000 / one.len()).max(1);
            let body = vec![&one[1..one.len() - 1]; copies].join(",");
            format!(
                "{{\"data\":[{body}],\"meta\":{{\"total\":{}}}}}",
                items.len() * copies
            )
        };
        let locate_ms = best_of(rounds, || {
            let mut l = Locator::new(
                &[vec![b"meta".to_vec(), b"total".to_vec()]],
                LocateOptions::default(),
            );
            let mut pos = 0;
            assert_eq!(
                l.run(doc.as_bytes(), &mut pos, usize::MAX, None, true),
                Ok(Located::Done)
            );
            assert!(l.found()[0].is_some());
        });
        println!(
            "{path}: {:.1} MB, locate /meta/total {locate_ms:.2} ms ({:.2} GB/s)",
            doc.len() as f64 / 1e6,
            doc.len() as f64 / locate_ms / 1e6
        );
    }
}
