//! A pure reference model of the [`crate::Store`] semantics.
//!
//! The model keeps every past state, so it can answer reads at any revision
//! without cleverness. It exists to be obviously right; property tests run
//! random operation sequences against it and against each backend and
//! demand identical answers.
//!
//! Worked example, starting at revision 1 (an empty etcd):
//! `create(a)` → rev 2; `update(a, expected 2)` → rev 3, version 2;
//! `delete(a)` → rev 4; `create(a)` → rev 5, create_revision 5, version 1.
//! `compact(4)` then makes `list(at 3)` fail with `Compacted`, while
//! `list(at 4)` still answers (the compaction point stays readable).

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::{Error, EventKind, KeyValue, ListOptions, ListResult, Result, Revision, WatchEvent};

/// One operation, as the property tests generate them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// [`crate::Store::get`].
    Get(String),
    /// [`crate::Store::list`].
    List(String, ListOptions),
    /// [`crate::Store::create`].
    Create(String, Vec<u8>),
    /// [`crate::Store::update`].
    Update(String, Vec<u8>, Revision),
    /// [`crate::Store::delete`].
    Delete(String, Option<Revision>),
    /// [`crate::Store::compact`].
    Compact(Revision),
}

/// The answer to one [`Op`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Get, Create, Update.
    Kv(KeyValue),
    /// List.
    List(ListResult),
    /// Delete: the deleted pair and the deletion's revision.
    Deleted(KeyValue, Revision),
    /// Compact.
    Compacted,
}

/// The model state.
#[derive(Clone, Debug)]
pub struct Model {
    rev: Revision,
    compacted: Revision,
    /// Every state, keyed by the revision that produced it.
    states: BTreeMap<Revision, BTreeMap<String, KeyValue>>,
    events: Vec<WatchEvent>,
}

impl Model {
    /// An empty store whose current revision is `start` (1 for a new etcd).
    pub fn new(start: Revision) -> Self {
        let mut states = BTreeMap::new();
        states.insert(start, BTreeMap::new());
        Model {
            rev: start,
            compacted: 0,
            states,
            events: Vec::new(),
        }
    }

    /// The same store, already compacted to `compacted` (for a backend that
    /// earlier work compacted).
    pub fn with_compaction(mut self, compacted: Revision) -> Self {
        self.compacted = compacted;
        self
    }

    /// The compaction point (0 if never compacted).
    pub fn compacted(&self) -> Revision {
        self.compacted
    }

    /// The current revision.
    pub fn revision(&self) -> Revision {
        self.rev
    }

    /// Every event with revision > `after` under `prefix`, in order.
    pub fn events_after(&self, prefix: &str, after: Revision) -> Vec<WatchEvent> {
        self.events
            .iter()
            .filter(|e| e.revision() > after && e.kv.key.starts_with(prefix))
            .cloned()
            .collect()
    }

    fn current(&self) -> &BTreeMap<String, KeyValue> {
        // `states` always holds the current revision.
        &self.states[&self.rev]
    }

    fn commit(&mut self, next: BTreeMap<String, KeyValue>, event: WatchEvent) {
        self.rev += 1;
        self.states.insert(self.rev, next);
        self.events.push(event);
    }

    /// Applies `op` and returns what a store must answer.
    pub fn step(&mut self, op: &Op) -> Result<Outcome> {
        match op {
            Op::Get(key) => self
                .current()
                .get(key)
                .cloned()
                .map(Outcome::Kv)
                .ok_or_else(|| Error::NotFound { key: key.clone() }),
            Op::List(prefix, opts) => self.list(prefix, opts).map(Outcome::List),
            Op::Create(key, value) => {
                crate::error::check_size(value)?;
                if self.current().contains_key(key) {
                    return Err(Error::AlreadyExists { key: key.clone() });
                }
                let kv = KeyValue {
                    key: key.clone(),
                    value: Bytes::from(value.clone()),
                    create_revision: self.rev + 1,
                    mod_revision: self.rev + 1,
                    version: 1,
                };
                self.put(kv.clone(), None);
                Ok(Outcome::Kv(kv))
            }
            Op::Update(key, value, expected) => {
                crate::error::check_size(value)?;
                let old = self
                    .current()
                    .get(key)
                    .cloned()
                    .ok_or_else(|| Error::NotFound { key: key.clone() })?;
                if old.mod_revision != *expected {
                    return Err(Error::Conflict {
                        key: key.clone(),
                        expected: *expected,
                        current: old.mod_revision,
                    });
                }
                let kv = KeyValue {
                    key: key.clone(),
                    value: Bytes::from(value.clone()),
                    create_revision: old.create_revision,
                    mod_revision: self.rev + 1,
                    version: old.version + 1,
                };
                self.put(kv.clone(), Some(old));
                Ok(Outcome::Kv(kv))
            }
            Op::Delete(key, expected) => {
                let old = self
                    .current()
                    .get(key)
                    .cloned()
                    .ok_or_else(|| Error::NotFound { key: key.clone() })?;
                if let Some(expected) = expected
                    && old.mod_revision != *expected
                {
                    return Err(Error::Conflict {
                        key: key.clone(),
                        expected: *expected,
                        current: old.mod_revision,
                    });
                }
                let mut next = self.current().clone();
                next.remove(key);
                let rev = self.rev + 1;
                let event = WatchEvent {
                    kind: EventKind::Delete,
                    kv: KeyValue {
                        key: key.clone(),
                        value: Bytes::new(),
                        create_revision: 0,
                        mod_revision: rev,
                        version: 0,
                    },
                    prev: Some(old.clone()),
                };
                self.commit(next, event);
                Ok(Outcome::Deleted(old, rev))
            }
            Op::Compact(rev) => {
                if *rev <= self.compacted {
                    return Err(Error::Compacted {
                        requested: *rev,
                        compacted: self.compacted,
                    });
                }
                if *rev > self.rev {
                    return Err(Error::FutureRevision {
                        requested: *rev,
                        current: self.rev,
                    });
                }
                self.compacted = *rev;
                Ok(Outcome::Compacted)
            }
        }
    }

    fn put(&mut self, kv: KeyValue, prev: Option<KeyValue>) {
        let mut next = self.current().clone();
        next.insert(kv.key.clone(), kv.clone());
        self.commit(
            next,
            WatchEvent {
                kind: EventKind::Put,
                kv,
                prev,
            },
        );
    }

    fn list(&self, prefix: &str, opts: &ListOptions) -> Result<ListResult> {
        let at = if opts.at_revision == 0 {
            self.rev
        } else {
            opts.at_revision
        };
        if at > self.rev {
            return Err(Error::FutureRevision {
                requested: at,
                current: self.rev,
            });
        }
        if at < self.compacted {
            return Err(Error::Compacted {
                requested: at,
                compacted: self.compacted,
            });
        }
        // The state at `at` is the newest state at or before it.
        let state =
            self.states
                .range(..=at)
                .next_back()
                .map(|(_, s)| s)
                .ok_or(Error::Compacted {
                    requested: at,
                    compacted: self.compacted,
                })?;
        let mut items: Vec<KeyValue> = state
            .values()
            .filter(|kv| kv.key.starts_with(prefix))
            .filter(|kv| opts.start_after.as_ref().is_none_or(|s| kv.key > *s))
            .cloned()
            .collect();
        let more = opts.limit > 0 && items.len() > opts.limit;
        if more {
            items.truncate(opts.limit);
        }
        Ok(ListResult {
            items,
            revision: at,
            more,
        })
    }
}
