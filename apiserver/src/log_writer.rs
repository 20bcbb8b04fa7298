//! The server's log writer: stderr behind a background thread and a 64 KiB
//! buffer, so a log line (one access-log line per request, under load tens
//! of thousands a second) costs the request path a channel send instead of
//! a `write(2)` to stderr.
//!
//! Lines keep their order (one channel, one writer thread). The thread
//! writes as soon as lines arrive and flushes whenever the channel is
//! empty, so an idle server's log is up to date; under load, lines are
//! written in 64 KiB batches. Nothing is dropped: when 128 Ki lines are
//! queued, loggers wait (backpressure) rather than lose lines.
//! [`FlushOnDrop`] flushes and stops the thread at the end of `run`.

use std::io::BufWriter;
use std::sync::{Mutex, OnceLock};

use tracing_appender::non_blocking::{NonBlocking, NonBlockingBuilder, WorkerGuard};

static GUARD: OnceLock<Mutex<Option<WorkerGuard>>> = OnceLock::new();

/// The writer for the `tracing` subscriber. Call once; a second call
/// returns a writer whose thread is stopped only at process exit.
pub fn stderr() -> NonBlocking {
    let (writer, guard) = NonBlockingBuilder::default()
        .lossy(false)
        .thread_name("skein-log")
        .finish(BufWriter::with_capacity(64 * 1024, std::io::stderr()));
    if GUARD.set(Mutex::new(Some(guard))).is_err() {
        tracing::warn!("log writer initialized twice");
    }
    writer
}

/// Flushes what is queued and stops the writer thread.
pub fn flush() {
    if let Some(m) = GUARD.get()
        && let Ok(mut g) = m.lock()
    {
        // Dropping the guard flushes and joins the writer thread.
        drop(g.take());
    }
}

/// Calls [`flush`] when dropped (held by `server::run`, so every way out
/// of it, errors included, leaves a complete log).
#[derive(Debug)]
pub struct FlushOnDrop;

impl Drop for FlushOnDrop {
    fn drop(&mut self) {
        flush();
    }
}
