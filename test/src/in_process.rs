//! Servers in the test's own process: `skein::server::serve` spawned on
//! the caller's Tokio runtime, as a [`Server`] whose helpers (clients,
//! kubectl, URLs) work as for a child process. For tests that need no
//! process isolation (no SIGKILL, no restart): several servers then share
//! one process. A module of its own, so that test binaries that never
//! start one do not link the server.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::server::{START_TIMEOUT, Server};

/// The handle of a server running in the test's process.
pub(crate) struct InProcess {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Server {
    /// As [`Server::start`], but in this process: `skein::server::serve`
    /// spawned on the caller's Tokio runtime (use a multi-thread one), with
    /// the same flags. The server has no log file. Dropping it shuts it
    /// down; [`Server::stop_in_process`] waits for that.
    pub async fn start_in_process(data_dir: &Path, extra: &[&str]) -> Server {
        use clap::Parser;
        fs::create_dir_all(data_dir).expect("create the data dir");
        let dir = data_dir.to_string_lossy().into_owned();
        let mut args = vec!["skein", "serve", "--data-dir", &dir, "--secure-port=0"];
        args.extend_from_slice(extra);
        let config = match skein::config::Cli::try_parse_from(&args) {
            Ok(skein::config::Cli {
                command: skein::config::Command::Serve(config),
            }) => *config,
            Ok(other) => panic!("not `skein serve`: {other:?}"),
            Err(e) => panic!("skein serve {args:?}: {e}"),
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (bound, addr) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(skein::server::serve(
            config,
            async move {
                let _ = stopped.await;
            },
            move |local| {
                let _ = bound.send(local);
            },
        ));
        let addr = match tokio::time::timeout(START_TIMEOUT, addr).await {
            Ok(Ok(addr)) => addr,
            Ok(Err(_)) => match task.await {
                Ok(Err(e)) => panic!("skein serve (in process) failed to start: {e:#}"),
                other => panic!("skein serve (in process) ended before serving: {other:?}"),
            },
            Err(_) => {
                panic!("skein serve (in process) printed no address within {START_TIMEOUT:?}")
            }
        };
        let mut server = Server {
            child: None,
            in_process: Some(InProcess {
                stop: Some(stop),
                task: Some(task),
            }),
            etcd: None,
            addr,
            data_dir: data_dir.to_path_buf(),
            log: data_dir.join("skein.log"),
        };
        server.wait_ready(Instant::now() + START_TIMEOUT).await;
        server
    }

    /// Shuts an in-process server down as SIGTERM would (watches end,
    /// requests drain, the store closes) and returns what `serve` returned.
    pub async fn stop_in_process(&mut self) -> anyhow::Result<()> {
        let mut running = self.in_process.take().expect("an in-process server");
        if let Some(stop) = running.stop.take() {
            let _ = stop.send(());
        }
        let task = running.task.take().expect("its task");
        match tokio::time::timeout(Duration::from_secs(30), task).await {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => Err(anyhow::anyhow!("the server task failed: {e}")),
            Err(_) => Err(anyhow::anyhow!("did not stop within 30s")),
        }
    }
}
