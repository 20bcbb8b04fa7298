//! The etcd backend, through etcd-client.
//!
//! - Every key is stored under a configurable prefix, so several Skeins can
//!   share one etcd; the prefix never leaves this module.
//! - Compare-and-swap is one etcd transaction comparing `create_revision`
//!   (create) or `mod_revision` (update, delete); the else branch reads the
//!   key so a failure can say NotFound or Conflict with the current revision.
//! - Lists are pinned to one revision: a page read at the latest revision
//!   reports it, and the caller passes it back for the next page. Inside
//!   one `list`, a range is read from etcd in pages at that revision
//!   ([`pager`]), so no list is too big for one gRPC response.
//! - Responses may be as large as [`EtcdOptions::max_response_bytes`]
//!   (by default `i32::MAX`, as etcd's Go client that kube-apiserver uses;
//!   gRPC's own default of 4 MiB would fail any list over 4 MiB).
//! - Watches ask for previous values, progress notifications and
//!   fragmented responses (a catch-up batch of many large events arrives
//!   in pieces); etcd's compaction cancel becomes [`Error::Compacted`].
//! - With [`EtcdOptions::expiry`], creates and updates of the expiring
//!   prefix's keys attach a lease from [`leases`] (kube-apiserver's lease
//!   manager), so etcd deletes them a TTL after their last write.
//! - Several endpoints share one balanced channel, so the client keeps
//!   working while a minority of a cluster is down.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use etcd_client::{
    Client, Compare, CompareOp, ConnectOptions, EventType, GetOptions, PutOptions, Txn, TxnOp,
    TxnOpResponse, WatchOptions,
};
use futures::StreamExt;

use crate::{
    Error, EventKind, KeyValue, ListOptions, ListResult, Result, Revision, Store, WatchEvent,
    WatchMessage, WatchStream, prefix_end,
};

mod leases;
pub mod pager;
mod revision_reads;

/// The default receive limit: etcd's Go client default (`math.MaxInt32`),
/// which kube-apiserver runs with.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = i32::MAX as usize;

/// How often a list at the latest revision starts over when compaction
/// overtakes the revision its first page fixed.
const LATEST_READ_ATTEMPTS: usize = 3;

/// How to reach etcd.
#[derive(Clone, Debug)]
pub struct EtcdOptions {
    /// Client URLs, e.g. `http://127.0.0.1:2379`.
    pub endpoints: Vec<String>,
    /// Prepended to every key.
    pub prefix: String,
    /// Bound on each unary request.
    pub request_timeout: Duration,
    /// Bound on establishing a connection.
    pub connect_timeout: Duration,
    /// How often an idle watch asks etcd for a progress notification.
    pub progress_interval: Duration,
    /// Keep about this much history; `None` leaves compaction to others.
    pub retain_history: Option<Duration>,
    /// The largest gRPC response the client accepts (ranges, watches).
    /// Lists read in pages sized to a quarter of it (at most 8 MiB), so it
    /// bounds one response, not a list.
    pub max_response_bytes: usize,
    /// Keys that expire after their last write: every create and update
    /// of such a key attaches an etcd lease of the TTL (from
    /// [`leases`], shared by the writes of a short window), so etcd itself
    /// deletes the key and its watchers see the deletion; see
    /// [`crate::expiry`] for the contract. A key written before this was
    /// set (or by another client) keeps whatever lease it has.
    pub expiry: Option<crate::Expiry>,
}

impl Default for EtcdOptions {
    fn default() -> Self {
        EtcdOptions {
            endpoints: vec!["http://127.0.0.1:2379".into()],
            prefix: String::new(),
            request_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            progress_interval: Duration::from_secs(5),
            retain_history: Some(crate::compactor::DEFAULT_RETAIN),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            expiry: None,
        }
    }
}

/// A [`Store`] on etcd.
pub struct EtcdStore {
    client: Client,
    /// The KV client with the raised receive limit.
    kv_client: etcd_client::KvClient,
    opts: EtcdOptions,
    compactor: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Bumped by [`Store::request_progress`]: every watch task sends etcd a
    /// progress request.
    progress_requests: tokio::sync::watch::Sender<u64>,
    /// Concurrent [`Store::current_revision`] calls share reads.
    revision_reads: revision_reads::RevisionReads,
    /// Whether the server orders requested progress notifications after
    /// the events they cover (see [`progress_requests_are_ordered`]); when
    /// not, no progress is ever requested.
    progress_safe: bool,
    /// The version the server reported at connect (empty if it did not).
    server_version: String,
    /// Leases for [`EtcdOptions::expiry`], when set.
    leases: Option<leases::Leases>,
}

/// Whether an etcd server of `version` answers `RequestProgress` only
/// after every event up to the revision it reports has been sent on the
/// stream. Older servers send the answer on a side channel that can
/// overtake pending events (etcd issue 15220, fixed in 3.4.25 and 3.5.8),
/// and until 3.4.31 and 3.5.13 may never answer on a new watch (etcd issue
/// 17507): a watch cache trusting such an answer skips events. The
/// thresholds are the ones kube-apiserver requires before it uses
/// progress requests. Unparsable versions count as old.
pub fn progress_requests_are_ordered(version: &str) -> bool {
    let mut parts = version
        .trim()
        .trim_start_matches('v')
        .split(['.', '-', '+'])
        .map(|p| p.parse::<u64>().ok());
    let (Some(Some(major)), Some(Some(minor)), Some(Some(patch))) =
        (parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    match (major, minor) {
        (3, 4) => patch >= 31,
        (3, 5) => patch >= 13,
        (3, m) => m > 5,
        (m, _) => m > 3,
    }
}

impl EtcdStore {
    /// Connects to `opts.endpoints` and checks that etcd answers.
    ///
    /// Errors with [`Error::Unavailable`] if no endpoint answers within
    /// `connect_timeout`.
    pub async fn connect(opts: EtcdOptions) -> Result<Arc<EtcdStore>> {
        let connect = ConnectOptions::new()
            .with_connect_timeout(opts.connect_timeout)
            .with_keep_alive(Duration::from_secs(10), Duration::from_secs(5))
            .with_keep_alive_while_idle(true);
        let endpoints = opts.endpoints.clone();
        let client = tokio::time::timeout(
            opts.connect_timeout,
            Client::connect(&endpoints, Some(connect)),
        )
        .await
        .map_err(|_| unreachable_etcd(&endpoints, "connect timed out"))?
        .map_err(|e| unreachable_etcd(&endpoints, &e.to_string()))?;
        let kv_client = client
            .kv_client()
            .max_decoding_message_size(opts.max_response_bytes);
        let version =
            match tokio::time::timeout(opts.connect_timeout, client.clone().status()).await {
                Ok(Ok(status)) => status.version().to_string(),
                _ => String::new(),
            };
        let progress_safe = progress_requests_are_ordered(&version);
        if !progress_safe {
            tracing::info!(
                etcd_version = %version,
                "etcd answers progress requests out of order with events (needs 3.4.31+ or \
                 3.5.13+); watch caches serve consistent reads from etcd"
            );
        }
        let leases = opts.expiry.as_ref().map(|e| leases::Leases::new(e.ttl));
        let store = Arc::new(EtcdStore {
            leases,
            client,
            kv_client,
            opts,
            compactor: std::sync::Mutex::new(None),
            progress_requests: tokio::sync::watch::Sender::new(0),
            revision_reads: revision_reads::RevisionReads::default(),
            progress_safe,
            server_version: version,
        });
        // Fail fast if no endpoint answers.
        store.current_revision().await?;
        if let Some(retain) = store.opts.retain_history {
            let handle = crate::compactor::spawn(Arc::downgrade(&store), retain);
            if let Ok(mut slot) = store.compactor.lock() {
                *slot = Some(handle);
            }
        }
        Ok(store)
    }

    /// The etcd version the server reported at connect; empty if it did
    /// not answer the status call.
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// The put options of a write of `key`: with a lease when the key
    /// expires. Errors if etcd grants no lease.
    async fn put_options(&self, key: &str) -> Result<Option<PutOptions>> {
        let (Some(expiry), Some(leases)) = (&self.opts.expiry, &self.leases) else {
            return Ok(None);
        };
        if !expiry.covers(key) {
            return Ok(None);
        }
        let id = leases
            .lease(|ttl| async move {
                let mut client = self.client.lease_client();
                let granted = self.call(client.grant(ttl, None)).await?;
                Ok(granted.id())
            })
            .await?;
        Ok(Some(PutOptions::new().with_lease(id)))
    }

    fn full(&self, key: &str) -> String {
        format!("{}{}", self.opts.prefix, key)
    }

    /// A key as etcd returned it, without the store's prefix.
    fn strip<'k>(&self, key: &'k [u8]) -> Result<&'k str> {
        let key = std::str::from_utf8(key)
            .map_err(|_| Error::Unavailable("etcd returned a non-UTF-8 key".into()))?;
        Ok(key.strip_prefix(self.opts.prefix.as_str()).unwrap_or(key))
    }

    /// A watch client with the raised receive limit.
    fn watch_client(&self) -> etcd_client::WatchClient {
        self.client
            .watch_client()
            .max_decoding_message_size(self.opts.max_response_bytes)
    }

    fn kv(&self, kv: &etcd_client::KeyValue) -> Result<KeyValue> {
        Ok(KeyValue {
            key: self.strip(kv.key())?.to_owned(),
            value: Bytes::copy_from_slice(kv.value()),
            create_revision: kv.create_revision(),
            mod_revision: kv.mod_revision(),
            version: kv.version(),
        })
    }

    /// Runs one unary call with the request timeout.
    async fn call<T>(
        &self,
        fut: impl std::future::Future<Output = std::result::Result<T, etcd_client::Error>>,
    ) -> Result<T> {
        match tokio::time::timeout(self.opts.request_timeout, fut).await {
            Ok(r) => r.map_err(map_err),
            Err(_) => Err(Error::Unavailable("etcd request timed out".into())),
        }
    }

    /// Runs a KV call, retrying on another endpoint while the request could
    /// not have reached etcd (`Retry::Unsent`, for writes) or on any
    /// transport failure (`Retry::Read`, for reads), within the request
    /// timeout. This is what lets the client ride out a dead member: the
    /// balanced channel may still pick its endpoint for a while.
    async fn kv_call<T, F, Fut>(&self, retry: Retry, f: F) -> Result<T>
    where
        F: Fn(etcd_client::KvClient) -> Fut,
        Fut: std::future::Future<Output = std::result::Result<T, etcd_client::Error>>,
    {
        self.kv_try(retry, f).await.map_err(Failure::into_error)
    }

    /// [`EtcdStore::kv_call`], keeping etcd's error for callers that act on
    /// it.
    async fn kv_try<T, F, Fut>(&self, retry: Retry, f: F) -> std::result::Result<T, Failure>
    where
        F: Fn(etcd_client::KvClient) -> Fut,
        Fut: std::future::Future<Output = std::result::Result<T, etcd_client::Error>>,
    {
        let deadline = tokio::time::Instant::now() + self.opts.request_timeout;
        let mut backoff = Duration::from_millis(5);
        loop {
            let attempt = tokio::time::timeout_at(deadline, f(self.kv_client.clone())).await;
            match attempt {
                Err(_) => return Err(Failure::TimedOut),
                Ok(Ok(v)) => return Ok(v),
                Ok(Err(e))
                    if retry.allows(&e) && tokio::time::Instant::now() + backoff < deadline =>
                {
                    tracing::debug!(error = %e, "etcd: retrying on another endpoint");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_millis(200));
                }
                Ok(Err(e)) => return Err(Failure::Etcd(e)),
            }
        }
    }

    /// The else branch of a compare-and-swap: why did it fail?
    fn explain(&self, key: &str, expected: Revision, resp: &etcd_client::TxnResponse) -> Error {
        let current = resp.op_responses().into_iter().find_map(|r| match r {
            TxnOpResponse::Get(g) => Some(g.kvs().first().map(|kv| kv.mod_revision())),
            _ => None,
        });
        match current.flatten() {
            None => Error::NotFound { key: key.into() },
            Some(current) => Error::Conflict {
                key: key.into(),
                expected,
                current,
            },
        }
    }
}

/// Why a KV call failed, before it becomes an [`Error`].
enum Failure {
    /// etcd or the transport answered with an error.
    Etcd(etcd_client::Error),
    /// No answer within the request timeout.
    TimedOut,
}

impl Failure {
    fn into_error(self) -> Error {
        match self {
            Failure::Etcd(e) => map_err(e),
            Failure::TimedOut => Error::Unavailable("etcd request timed out".into()),
        }
    }
}

/// Which failures a call may retry.
#[derive(Clone, Copy)]
enum Retry {
    /// Reads: any transport failure.
    Read,
    /// Writes: only failures that prove the request was never sent.
    Unsent,
}

impl Retry {
    fn allows(self, e: &etcd_client::Error) -> bool {
        let status = match e {
            etcd_client::Error::TransportError(_) => return matches!(self, Retry::Read),
            etcd_client::Error::GRpcStatus(status) => status,
            _ => return false,
        };
        let unsent =
            status.code() == tonic_code_unavailable() && status.message().contains("connect");
        match self {
            Retry::Unsent => unsent,
            Retry::Read => {
                unsent
                    || status.code() == tonic_code_unavailable()
                    || status.message().contains("transport error")
            }
        }
    }
}

fn tonic_code_unavailable() -> tonic::Code {
    tonic::Code::Unavailable
}

fn unreachable_etcd(endpoints: &[String], why: &str) -> Error {
    Error::Unavailable(format!(
        "etcd at {} is unreachable: {why}",
        endpoints.join(",")
    ))
}

/// Maps etcd's gRPC errors onto the closed storage error set.
fn map_err(e: etcd_client::Error) -> Error {
    if let etcd_client::Error::GRpcStatus(status) = &e {
        let msg = status.message();
        if msg.contains("required revision has been compacted") {
            return Error::Compacted {
                requested: 0,
                compacted: 0,
            };
        }
        if msg.contains("required revision is a future revision") {
            return Error::FutureRevision {
                requested: 0,
                current: 0,
            };
        }
        if msg.contains("request is too large") {
            return Error::TooLarge {
                size: 0,
                limit: crate::MAX_VALUE_BYTES,
            };
        }
    }
    Error::Unavailable(format!("etcd: {e}"))
}

fn header_revision(h: Option<&etcd_client::ResponseHeader>) -> Result<Revision> {
    h.map(|h| h.revision())
        .ok_or_else(|| Error::Unavailable("etcd response without header".into()))
}

#[async_trait]
impl Store for EtcdStore {
    async fn get(&self, key: &str) -> Result<KeyValue> {
        let full = self.full(key);
        let resp = self
            .kv_call(Retry::Read, |mut kv| {
                let full = full.clone();
                async move { kv.get(full, None).await }
            })
            .await?;
        match resp.kvs().first() {
            Some(found) => self.kv(found),
            None => Err(Error::NotFound { key: key.into() }),
        }
    }

    async fn list(&self, prefix: &str, opts: ListOptions) -> Result<ListResult> {
        // A read at the latest revision is free to pick another one: if
        // compaction overtakes the revision its first page fixed (only
        // possible when history is kept for less than the read takes, or
        // someone compacts at the head), it starts over at the new head.
        let mut attempt = 1;
        loop {
            let read = pager::RangeRead::new(self, prefix, &opts);
            match read.run(self).await {
                Err(Error::Compacted { .. })
                    if opts.at_revision == 0 && attempt < LATEST_READ_ATTEMPTS =>
                {
                    attempt += 1;
                }
                result => return result,
            }
        }
    }

    async fn create(&self, key: &str, value: &[u8]) -> Result<KeyValue> {
        crate::error::check_size(value)?;
        let full = self.full(key);
        let put = self.put_options(key).await?;
        let txn = Txn::new()
            .when([Compare::create_revision(full.clone(), CompareOp::Equal, 0)])
            .and_then([TxnOp::put(full.clone(), value, put)])
            .or_else([TxnOp::get(full, None)]);
        let resp = self.txn(txn).await?;
        if !resp.succeeded() {
            return Err(Error::AlreadyExists { key: key.into() });
        }
        let rev = header_revision(resp.header())?;
        Ok(KeyValue {
            key: key.into(),
            value: Bytes::copy_from_slice(value),
            create_revision: rev,
            mod_revision: rev,
            version: 1,
        })
    }

    async fn update(&self, key: &str, value: &[u8], expected: Revision) -> Result<KeyValue> {
        crate::error::check_size(value)?;
        let full = self.full(key);
        // A put without a lease detaches the key's old one: every update of
        // an expiring key attaches a fresh lease, so its TTL counts from
        // this write.
        let put = self
            .put_options(key)
            .await?
            .unwrap_or_default()
            .with_prev_key();
        let txn = Txn::new()
            .when([
                Compare::create_revision(full.clone(), CompareOp::NotEqual, 0),
                Compare::mod_revision(full.clone(), CompareOp::Equal, expected),
            ])
            .and_then([TxnOp::put(full.clone(), value, Some(put))])
            .or_else([TxnOp::get(full, None)]);
        let resp = self.txn(txn).await?;
        if !resp.succeeded() {
            return Err(self.explain(key, expected, &resp));
        }
        let rev = header_revision(resp.header())?;
        let prev = resp.op_responses().into_iter().find_map(|r| match r {
            TxnOpResponse::Put(p) => p.prev_key().cloned(),
            _ => None,
        });
        let prev = prev.ok_or_else(|| Error::Unavailable("etcd put returned no prev_kv".into()))?;
        Ok(KeyValue {
            key: key.into(),
            value: Bytes::copy_from_slice(value),
            create_revision: prev.create_revision(),
            mod_revision: rev,
            version: prev.version() + 1,
        })
    }

    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<(KeyValue, Revision)> {
        let full = self.full(key);
        let compare = match expected {
            Some(rev) => Compare::mod_revision(full.clone(), CompareOp::Equal, rev),
            None => Compare::create_revision(full.clone(), CompareOp::NotEqual, 0),
        };
        let txn = Txn::new()
            .when([
                Compare::create_revision(full.clone(), CompareOp::NotEqual, 0),
                compare,
            ])
            .and_then([TxnOp::delete(
                full.clone(),
                Some(etcd_client::DeleteOptions::new().with_prev_key()),
            )])
            .or_else([TxnOp::get(full, None)]);
        let resp = self.txn(txn).await?;
        if !resp.succeeded() {
            return Err(self.explain(key, expected.unwrap_or(0), &resp));
        }
        let rev = header_revision(resp.header())?;
        let prev = resp.op_responses().into_iter().find_map(|r| match r {
            TxnOpResponse::Delete(d) => d.prev_kvs().first().cloned(),
            _ => None,
        });
        let prev =
            prev.ok_or_else(|| Error::Unavailable("etcd delete returned no prev_kv".into()))?;
        Ok((self.kv(&prev)?, rev))
    }

    async fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream> {
        let full_prefix = self.full(prefix);
        let end = prefix_end(&full_prefix).unwrap_or_else(|| vec![0]);
        let options = WatchOptions::new()
            .with_range(end)
            .with_start_revision(after.saturating_add(1).max(1))
            .with_prev_key()
            .with_progress_notify()
            .with_fragment();
        let mut client = self.watch_client();
        let stream = self.call(client.watch(full_prefix, Some(options))).await?;
        let (mut sender, mut responses) = stream.split();
        // The first response confirms the watch, or says it was compacted.
        let first = self
            .call(responses.message())
            .await?
            .ok_or_else(|| Error::Unavailable("etcd closed the watch".into()))?;
        if first.canceled() {
            return Err(cancel_error(&first, after));
        }
        let prefix = self.opts.prefix.clone();
        let interval = self.opts.progress_interval;
        let ask = self.progress_safe;
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<WatchMessage>>(256);
        let mut asked = self.progress_requests.subscribe();
        asked.mark_unchanged();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(interval);
            tick.tick().await;
            loop {
                tokio::select! {
                    _ = tx.closed() => return,
                    // The store (its sender) is gone: the periodic tick remains.
                    Ok(()) = asked.changed(), if ask => {
                        if sender.request_progress().await.is_err() {
                            let _ = tx.send(Err(Error::Unavailable("etcd watch ended".into()))).await;
                            return;
                        }
                    }
                    _ = tick.tick(), if ask => {
                        if sender.request_progress().await.is_err() {
                            let _ = tx.send(Err(Error::Unavailable("etcd watch ended".into()))).await;
                            return;
                        }
                    }
                    msg = responses.message() => {
                        let items = match msg {
                            Ok(Some(resp)) => translate(&prefix, after, resp),
                            Ok(None) => vec![Err(Error::Unavailable("etcd closed the watch".into()))],
                            Err(e) => vec![Err(map_err(e))],
                        };
                        for item in items {
                            let stop = item.is_err();
                            if tx.send(item).await.is_err() || stop {
                                return;
                            }
                        }
                    }
                }
            }
        });
        Ok(tokio_stream_from(rx))
    }

    async fn compact(&self, revision: Revision) -> Result<()> {
        let compact =
            |mut kv: etcd_client::KvClient| async move { kv.compact(revision, None).await };
        match self.kv_call(Retry::Unsent, compact).await {
            Ok(_) => Ok(()),
            Err(Error::Compacted { .. }) => {
                let compacted = self.compacted_revision().await.unwrap_or(revision);
                Err(Error::Compacted {
                    requested: revision,
                    compacted,
                })
            }
            Err(Error::FutureRevision { .. }) => {
                let current = self.current_revision().await.unwrap_or(0);
                Err(Error::FutureRevision {
                    requested: revision,
                    current,
                })
            }
            Err(e) => Err(e),
        }
    }

    fn request_progress(&self) -> bool {
        if self.progress_safe {
            self.progress_requests
                .send_modify(|n| *n = n.wrapping_add(1));
        }
        self.progress_safe
    }

    async fn current_revision(&self) -> Result<Revision> {
        self.revision_reads
            .current(|| async {
                // A keys-only read of one key: cheap, linearizable.
                let probe = self.full("\u{0}");
                let resp = self
                    .kv_call(Retry::Read, |mut kv| {
                        let probe = probe.clone();
                        async move {
                            kv.get(probe, Some(GetOptions::new().with_keys_only()))
                                .await
                        }
                    })
                    .await?;
                header_revision(resp.header())
            })
            .await
    }

    async fn close(&self) {
        if let Some(handle) = self.compactor.lock().ok().and_then(|mut c| c.take()) {
            handle.abort();
        }
    }
}

impl EtcdStore {
    /// Runs a compare-and-swap transaction (retried only if never sent).
    async fn txn(&self, txn: Txn) -> Result<etcd_client::TxnResponse> {
        self.kv_call(Retry::Unsent, |mut kv| {
            let txn = txn.clone();
            async move { kv.txn(txn).await }
        })
        .await
    }

    /// The compaction point, found the way etcd reports it: a watch from
    /// revision 1 is cancelled with the compact revision.
    async fn compacted_revision(&self) -> Result<Revision> {
        let mut client = self.watch_client();
        let options = WatchOptions::new().with_start_revision(1);
        let stream = self
            .call(client.watch(self.full("\u{0}compaction-probe"), Some(options)))
            .await?;
        let (_sender, mut responses) = stream.split();
        // etcd first confirms the watch, then cancels it with the compact
        // revision. Only called after etcd said "compacted", so the cancel
        // comes promptly.
        for _ in 0..4 {
            match self.call(responses.message()).await? {
                Some(r) if r.compact_revision() > 0 => return Ok(r.compact_revision()),
                Some(r) if r.canceled() => return Ok(0),
                Some(_) => {}
                None => return Ok(0),
            }
        }
        Ok(0)
    }
}

impl Drop for EtcdStore {
    fn drop(&mut self) {
        if let Some(handle) = self.compactor.get_mut().ok().and_then(|c| c.take()) {
            handle.abort();
        }
    }
}

fn cancel_error(resp: &etcd_client::WatchResponse, after: Revision) -> Error {
    if resp.compact_revision() > 0 {
        Error::Compacted {
            requested: after + 1,
            compacted: resp.compact_revision(),
        }
    } else {
        Error::Unavailable(format!(
            "etcd cancelled the watch: {}",
            resp.cancel_reason()
        ))
    }
}

/// Turns one etcd watch response into stream items.
fn translate(
    prefix: &str,
    after: Revision,
    resp: etcd_client::WatchResponse,
) -> Vec<Result<WatchMessage>> {
    if resp.canceled() {
        return vec![Err(cancel_error(&resp, after))];
    }
    let strip = |kv: &etcd_client::KeyValue| -> Result<KeyValue> {
        let key = std::str::from_utf8(kv.key())
            .map_err(|_| Error::Unavailable("etcd returned a non-UTF-8 key".into()))?;
        Ok(KeyValue {
            key: key.strip_prefix(prefix).unwrap_or(key).to_owned(),
            value: Bytes::copy_from_slice(kv.value()),
            create_revision: kv.create_revision(),
            mod_revision: kv.mod_revision(),
            version: kv.version(),
        })
    };
    if resp.events().is_empty() {
        return match resp.header() {
            Some(h) if !resp.created() => vec![Ok(WatchMessage::Progress(h.revision()))],
            _ => vec![],
        };
    }
    resp.events()
        .iter()
        .map(|event| {
            let kv = event
                .kv()
                .ok_or_else(|| Error::Unavailable("etcd event without kv".into()))?;
            let kind = match event.event_type() {
                EventType::Put => EventKind::Put,
                EventType::Delete => EventKind::Delete,
            };
            let mut kv = strip(kv)?;
            if kind == EventKind::Delete {
                kv.value = Bytes::new();
            }
            let prev = event.prev_kv().map(strip).transpose()?;
            Ok(WatchMessage::Event(WatchEvent { kind, kv, prev }))
        })
        .collect()
}

fn tokio_stream_from(mut rx: tokio::sync::mpsc::Receiver<Result<WatchMessage>>) -> WatchStream {
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx)).boxed()
}
