//! The audit log backend: one JSON line per event, written by a dedicated
//! thread so a request only pays a channel send.
//!
//! Mode: *blocking*, as upstream's default for the log backend, but
//! buffered: the channel holds [`QUEUE`] events; a request waits only when
//! that many are pending (the disk is far behind), so no event is ever
//! dropped. The thread writes through a `BufWriter` and flushes after each
//! batch; under load it gathers a batch for [`LINGER`] (2 ms) rather than
//! being woken per event, so the file is current within a few
//! milliseconds.
//!
//! Rotation is lumberjack's (kube-apiserver's): before a write that would
//! take the file past `max_size` MB (0 means lumberjack's 100 MB), the file
//! is renamed to `<name>-<UTC time 2006-01-02T15-04-05.000><ext>` and a new
//! one is opened; then backups beyond `max_backups` (0: keep all) and older
//! than `max_age` days (0: keep) are removed. `-` writes to stdout without
//! rotation.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use tokio::sync::mpsc::{Receiver, Sender, channel, error::TrySendError};

/// Events the channel holds before a request waits.
pub const QUEUE: usize = 10_000;

/// How long the writer gathers events after a write while they keep
/// coming (the file lags the requests by at most about this much).
const LINGER: Duration = Duration::from_millis(2);

/// Rotation settings (`--audit-log-maxsize`, `-maxbackup`, `-maxage`).
#[derive(Clone, Debug, Default)]
pub struct Rotation {
    /// Megabytes; 0 is 100.
    pub max_size_mb: u64,
    /// Backups kept; 0 keeps all.
    pub max_backups: usize,
    /// Days a backup is kept; 0 keeps them.
    pub max_age_days: u64,
}

/// The sending side; cheap to clone.
#[derive(Clone)]
pub struct Sink {
    tx: Sender<Vec<u8>>,
}

impl Sink {
    /// Opens `path` (`-` is stdout) and starts the writer thread.
    pub fn open(path: &Path, rotation: Rotation) -> std::io::Result<Sink> {
        let out: Box<dyn Output> = if path == Path::new("-") {
            Box::new(Stdout)
        } else {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)?;
            }
            Box::new(Rotating::open(path.to_path_buf(), rotation)?)
        };
        let (tx, rx) = channel(QUEUE);
        std::thread::Builder::new()
            .name("audit-log".into())
            .spawn(move || run(rx, out))?;
        Ok(Sink { tx })
    }

    /// Queues one line (without its newline); waits only while the queue
    /// is full (upstream's blocking mode, never losing an event).
    pub async fn send(&self, line: Vec<u8>) {
        match self.tx.try_send(line) {
            Ok(()) => {}
            Err(TrySendError::Full(line)) => {
                if self.tx.send(line).await.is_err() {
                    tracing::error!("audit log writer is gone; event lost");
                }
            }
            Err(TrySendError::Closed(_)) => {
                tracing::error!("audit log writer is gone; event lost");
            }
        }
    }
}

trait Output: Send {
    fn write_line(&mut self, line: &[u8]) -> std::io::Result<()>;
    fn flush(&mut self) -> std::io::Result<()>;
}

struct Stdout;

impl Output for Stdout {
    fn write_line(&mut self, line: &[u8]) -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        out.write_all(line)?;
        out.write_all(b"\n")
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stdout().flush()
    }
}

fn run(mut rx: Receiver<Vec<u8>>, mut out: Box<dyn Output>) {
    let mut batch = Vec::new();
    while let Some(line) = rx.blocking_recv() {
        batch.push(line);
        // While events keep coming, gather them for [`LINGER`] between
        // writes instead of parking: a request's send then rarely has a
        // sleeping thread to wake, and one write and flush cover a batch.
        loop {
            while let Ok(more) = rx.try_recv() {
                batch.push(more);
            }
            for line in batch.drain(..) {
                if let Err(e) = out.write_line(&line) {
                    tracing::error!(error = %e, "writing the audit log failed");
                }
            }
            if let Err(e) = out.flush() {
                tracing::error!(error = %e, "flushing the audit log failed");
            }
            std::thread::sleep(LINGER);
            match rx.try_recv() {
                Ok(more) => batch.push(more),
                Err(_) => break,
            }
        }
    }
}

/// A file rotated by size.
pub struct Rotating {
    path: PathBuf,
    rotation: Rotation,
    file: BufWriter<File>,
    size: u64,
}

impl Rotating {
    /// Opens (appending to) `path`.
    pub fn open(path: PathBuf, rotation: Rotation) -> std::io::Result<Rotating> {
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        let size = file.metadata()?.len();
        Ok(Rotating {
            path,
            rotation,
            file: BufWriter::new(file),
            size,
        })
    }

    fn max_bytes(&self) -> u64 {
        let mb = if self.rotation.max_size_mb == 0 {
            100
        } else {
            self.rotation.max_size_mb
        };
        mb * 1024 * 1024
    }

    fn rotate(&mut self) -> std::io::Result<()> {
        self.file.flush()?;
        let backup = backup_name(&self.path, SystemTime::now());
        std::fs::rename(&self.path, &backup)?;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        self.file = BufWriter::new(file);
        self.size = 0;
        self.remove_old();
        Ok(())
    }

    /// lumberjack's millRunOnce: newest first, drop beyond max_backups,
    /// then anything older than max_age.
    fn remove_old(&self) {
        let mut backups = backups(&self.path);
        backups.sort_by(|a, b| b.0.cmp(&a.0));
        let mut remove = Vec::new();
        if self.rotation.max_backups > 0 && backups.len() > self.rotation.max_backups {
            remove.extend(backups.split_off(self.rotation.max_backups));
        }
        if self.rotation.max_age_days > 0 {
            let cutoff = SystemTime::now()
                .checked_sub(Duration::from_secs(self.rotation.max_age_days * 86_400))
                .unwrap_or(SystemTime::UNIX_EPOCH);
            let cutoff = format_time(cutoff);
            remove.extend(backups.into_iter().filter(|(t, _)| *t < cutoff));
        }
        for (_, path) in remove {
            if let Err(e) = std::fs::remove_file(&path) {
                tracing::warn!(path = %path.display(), error = %e, "removing an old audit log failed");
            }
        }
    }
}

impl Output for Rotating {
    fn write_line(&mut self, line: &[u8]) -> std::io::Result<()> {
        let n = line.len() as u64 + 1;
        if self.size > 0 && self.size + n > self.max_bytes() {
            self.rotate()?;
        }
        self.file.write_all(line)?;
        self.file.write_all(b"\n")?;
        self.size += n;
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// `audit.log` → (`audit`, `.log`).
fn split(path: &Path) -> (String, String) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match name.rfind('.') {
        Some(i) if i > 0 => (name[..i].to_string(), name[i..].to_string()),
        _ => (name, String::new()),
    }
}

/// lumberjack's backup name: `<dir>/<stem>-2006-01-02T15-04-05.000<ext>`
/// in UTC.
pub fn backup_name(path: &Path, at: SystemTime) -> PathBuf {
    let (stem, ext) = split(path);
    let name = format!("{stem}-{}{ext}", format_time(at));
    path.with_file_name(name)
}

/// `2006-01-02T15-04-05.000` in UTC (sorts as time).
fn format_time(at: SystemTime) -> String {
    let t = time::OffsetDateTime::from(at);
    format!(
        "{:04}-{:02}-{:02}T{:02}-{:02}-{:02}.{:03}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

/// The backups of `path` as (timestamp text, path).
fn backups(path: &Path) -> Vec<(String, PathBuf)> {
    let (stem, ext) = split(path);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let prefix = format!("{stem}-");
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let ts = name.strip_prefix(&prefix)?.strip_suffix(ext.as_str())?;
            (ts.len() == 23 && ts.as_bytes().get(10) == Some(&b'T'))
                .then(|| (ts.to_string(), e.path()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_names_are_lumberjacks() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_136_214_245_123);
        assert_eq!(
            backup_name(Path::new("/var/log/audit.log"), at),
            PathBuf::from("/var/log/audit-2006-01-02T15-04-05.123.log")
        );
        assert_eq!(
            backup_name(Path::new("audit"), at),
            PathBuf::from("audit-2006-01-02T15-04-05.123")
        );
    }

    #[test]
    fn rotates_at_size_and_keeps_max_backups() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("audit.log");
        let mut r = Rotating::open(
            path.clone(),
            Rotation {
                max_size_mb: 1,
                max_backups: 2,
                max_age_days: 0,
            },
        )
        .expect("open");
        let line = vec![b'x'; 300 * 1024];
        for _ in 0..12 {
            r.write_line(&line).expect("write");
            r.flush().expect("flush");
            // Distinct backup timestamps.
            std::thread::sleep(Duration::from_millis(3));
        }
        let size = std::fs::metadata(&path).expect("current").len();
        assert!(size <= 1024 * 1024, "{size}");
        let kept = backups(&path);
        assert_eq!(kept.len(), 2, "{kept:?}");
        for (_, p) in kept {
            let len = std::fs::metadata(&p).expect("backup").len();
            assert!(len <= 1024 * 1024 && len > 0, "{len}");
        }
    }
}
