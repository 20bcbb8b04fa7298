//! One cached event and what its watchers work out once and share.
//!
//! A cache hands the same `Arc<CachedEvent>` to every watcher it concerns
//! (and keeps it in the ring for later ones). The first watcher that needs
//! the selector attributes of the object (before or after the change), or
//! the event encoded as a response line, computes them; the others reuse
//! them. So N watchers of one change cost one decode and one encoding per
//! (event type, API version), not N of each. Decoded objects are not kept:
//! they are several times the size of their bytes, and the ring holds
//! thousands of events.
//!
//! Pure: no I/O. The memo cells never go stale: an event never changes.

use std::sync::{Mutex, OnceLock};

use bytes::Bytes;
use skein_storage::{Revision, WatchEvent};

use crate::registry::filter::Attrs;

/// A change to one key, shared by every watcher of a cache.
#[derive(Debug)]
pub struct CachedEvent {
    /// The change as the store reported it (with its previous pair).
    pub event: WatchEvent,
    attrs: OnceLock<Option<Attrs>>,
    previous_attrs: OnceLock<Option<Attrs>>,
    /// Encoded response lines: (event type, API version, bytes).
    lines: Mutex<Vec<(&'static str, &'static str, Bytes)>>,
}

impl CachedEvent {
    /// An event with nothing computed yet.
    pub fn new(event: WatchEvent) -> CachedEvent {
        CachedEvent {
            event,
            attrs: OnceLock::new(),
            previous_attrs: OnceLock::new(),
            lines: Mutex::new(Vec::new()),
        }
    }

    /// The event's revision.
    pub fn revision(&self) -> Revision {
        self.event.revision()
    }

    /// The selector attributes of the object after the change, parsed
    /// once by `parse` (`None`: it could not; every caller gets the same
    /// answer).
    pub fn attrs(&self, parse: impl FnOnce() -> Option<Attrs>) -> Option<&Attrs> {
        self.attrs.get_or_init(parse).as_ref()
    }

    /// The selector attributes of the object before the change, parsed
    /// once by `parse`.
    pub fn previous_attrs(&self, parse: impl FnOnce() -> Option<Attrs>) -> Option<&Attrs> {
        self.previous_attrs.get_or_init(parse).as_ref()
    }

    /// The event's response line of `event_type` for `api_version`: the
    /// one made before, or `encode`'s (kept; `None` is not kept). `encode`
    /// runs outside any lock; two watchers racing may both encode, and one
    /// result is kept.
    pub fn line(
        &self,
        event_type: &'static str,
        api_version: &'static str,
        encode: impl FnOnce() -> Option<Vec<u8>>,
    ) -> Option<Bytes> {
        let find = |lines: &[(&'static str, &'static str, Bytes)]| {
            lines
                .iter()
                .find(|(t, v, _)| *t == event_type && *v == api_version)
                .map(|(_, _, b)| b.clone())
        };
        if let Some(b) = find(&super::lock(&self.lines)) {
            return Some(b);
        }
        let bytes = Bytes::from(encode()?);
        let mut lines = super::lock(&self.lines);
        if let Some(b) = find(&lines) {
            return Some(b);
        }
        lines.push((event_type, api_version, bytes.clone()));
        Some(bytes)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use skein_storage::{EventKind, KeyValue};

    use super::*;

    #[test]
    fn each_memo_is_computed_once_and_keyed_by_type_and_version() {
        let e = CachedEvent::new(WatchEvent {
            kind: EventKind::Put,
            kv: KeyValue {
                key: "/k".into(),
                value: Bytes::from_static(b"{}"),
                create_revision: 3,
                mod_revision: 3,
                version: 1,
            },
            prev: None,
        });
        let calls = AtomicUsize::new(0);
        let parse = || {
            calls.fetch_add(1, Ordering::Relaxed);
            Some(Attrs::default())
        };
        assert!(e.attrs(parse).is_some());
        assert!(e.attrs(parse).is_some());
        assert_eq!(calls.load(Ordering::Relaxed), 1);
        assert!(e.previous_attrs(|| None).is_none());
        assert!(
            e.previous_attrs(parse).is_none(),
            "a failed parse is kept too"
        );
        let encodes = AtomicUsize::new(0);
        let enc = |s: &'static str| {
            encodes.fetch_add(1, Ordering::Relaxed);
            Some(s.as_bytes().to_vec())
        };
        let line = |t, v, s| e.line(t, v, || enc(s)).expect("encoded");
        assert_eq!(&line("ADDED", "v1", "a1")[..], b"a1");
        assert_eq!(&line("ADDED", "v1", "x")[..], b"a1");
        assert_eq!(&line("DELETED", "v1", "d1")[..], b"d1");
        assert_eq!(&line("ADDED", "v2", "a2")[..], b"a2");
        assert_eq!(encodes.load(Ordering::Relaxed), 3);
        assert!(e.line("MODIFIED", "v1", || None).is_none());
        assert_eq!(
            &line("MODIFIED", "v1", "m1")[..],
            b"m1",
            "a failed encoding is not kept"
        );
        assert_eq!(e.revision(), 3);
    }
}
