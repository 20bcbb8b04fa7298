//! The Skein under test of `bench api` and `bench patch`: a real `skein
//! serve` (the release binary in `$SKEIN_BIN`, which `hack/bench.sh` builds
//! and sets) on a free loopback port with a temp data dir, on its embedded
//! store or on a real etcd started for the run.

use std::path::PathBuf;

use anyhow::Context as _;
use skein_tests::etcd::{Etcd, etcd_binary};
use skein_tests::server::Server;

use crate::client::{Credentials, Https, Protocol};
use crate::measure::command_line;

/// A running Skein (and its etcd). Dropping it stops both, Skein first.
pub struct Skein {
    /// The `skein serve` process.
    pub server: Server,
    _dir: tempfile::TempDir,
    /// The etcd Skein stores in, if not the embedded store.
    pub etcd: Option<Etcd>,
    /// Admin credentials from `admin.kubeconfig`.
    pub credentials: Credentials,
}

impl Skein {
    /// Starts Skein on a temp data dir; on etcd when `etcd`.
    pub async fn start(etcd: bool) -> anyhow::Result<Skein> {
        Self::start_with(etcd, &[]).await
    }

    /// [`Skein::start`] with `flags` added to `skein serve`.
    pub async fn start_with(etcd: bool, flags: &[String]) -> anyhow::Result<Skein> {
        let bin = skein_binary()?;
        eprintln!("  skein binary: {}", bin.display());
        let etcd = if etcd {
            Some(
                tokio::task::spawn_blocking(Etcd::start)
                    .await
                    .context("starting etcd")?,
            )
        } else {
            None
        };
        let dir = tempfile::tempdir().context("temp data dir")?;
        let mut extra = Vec::new();
        if let Some(etcd) = &etcd {
            extra.push(format!("--etcd-servers={}", etcd.endpoint()));
        }
        extra.extend(flags.iter().cloned());
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let server = Server::start(&dir.path().join("skein"), &extra).await;
        let credentials = Credentials::from_kubeconfig(&server.kubeconfig())?;
        Ok(Skein {
            server,
            _dir: dir,
            etcd,
            credentials,
        })
    }

    /// An admin client of this Skein.
    pub fn client(&self, protocol: Protocol) -> anyhow::Result<Https> {
        Https::new(self.server.addr, &self.credentials, protocol)
    }

    /// `<data-dir>/pki`.
    pub fn pki_dir(&self) -> PathBuf {
        self.server.data_dir.join("pki")
    }

    /// What the report calls the store.
    pub fn backend(&self) -> String {
        match &self.etcd {
            None => "embedded (redb, fsync per group commit)".into(),
            Some(_) => format!(
                "etcd: {} single member, default fsync",
                command_line(&etcd_binary().to_string_lossy(), &["--version"])
            ),
        }
    }
}

/// `$SKEIN_BIN`, which must name an existing file.
pub fn skein_binary() -> anyhow::Result<PathBuf> {
    let bin = std::env::var_os("SKEIN_BIN").map(PathBuf::from).context(
        "SKEIN_BIN is not set: run through hack/bench.sh, which builds a release skein and \
         sets it",
    )?;
    anyhow::ensure!(
        bin.is_file(),
        "SKEIN_BIN={} does not exist (build it with `cargo build --release -p skein \
         --bin skein`)",
        bin.display()
    );
    Ok(bin)
}

/// The facts that say which Skein was measured: the binary and the commit.
pub fn skein_facts() -> Vec<(&'static str, String)> {
    let bin = skein_binary().map_or_else(|e| e.to_string(), |p| p.display().to_string());
    let commit = command_line("git", &["rev-parse", "--short", "HEAD"]);
    let dirty = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false);
    vec![(
        "skein",
        format!(
            "{bin} (release), commit {commit}{}",
            if dirty {
                " with uncommitted changes in the tree"
            } else {
                ""
            }
        ),
    )]
}
