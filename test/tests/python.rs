//! The official Python `kubernetes` client (installed by `hack/test.sh`)
//! against `skein serve`, with the admin kubeconfig: the scripts in
//! `test/python/`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use skein_tests::http::{python, python_scripts};
use skein_tests::server::Server;

/// Runs `test/python/<script> <kubeconfig>`; panics with its output unless
/// it exits 0 and prints `PASS`, or if it runs longer than `limit`.
fn run_script(server: &Server, script: &str, limit: Duration) {
    let python = python();
    let path = python_scripts().join(script);
    assert!(path.is_file(), "{} is missing", path.display());
    let log = server.data_dir.join(format!("{script}.log"));
    let out_file = std::fs::File::create(&log).expect("create the script log");
    let mut child = Command::new(&python)
        .arg(&path)
        .arg(server.kubeconfig())
        .env_remove("KUBECONFIG")
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .stdout(out_file.try_clone().expect("clone the log handle"))
        .stderr(out_file)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll python") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{script} ran longer than {limit:?}; its output:\n{}\nserver log:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default(),
                server.logs()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        status.success() && output.lines().any(|l| l == "PASS"),
        "{script} failed ({status}):\n{output}"
    );
}

#[tokio::test]
async fn python_client_crud_and_watch_resume_from_bookmark() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start_on_backend(dir.path(), &[]).await;
    // The bookmark wait is ~5 s (the store's idle progress interval); the
    // rest takes a few seconds. The server is another process, so blocking
    // this thread is fine.
    run_script(&server, "crud_watch.py", Duration::from_secs(90));
}

#[tokio::test]
async fn python_client_typed_deletes_versions_and_events() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start_on_backend(dir.path(), &[]).await;
    run_script(&server, "typed.py", Duration::from_secs(60));
}
