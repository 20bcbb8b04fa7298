//! The workload simulator's batch and stateful controllers on a real
//! member (`skein serve --role=member --simulate-workloads`): Jobs,
//! DaemonSets, StatefulSets and CronJobs as kube-controller-manager runs
//! them, checked through kubectl 1.35 and 1.32 (`wait`, `rollout status`,
//! `rollout history`) and the stored objects.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skein_tests::cli::{self, get_json};
use skein_tests::http::Api;
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

/// A simulated member: 3 Nodes, Pods Ready after 200 ms, Job Pods done
/// after 500 ms.
async fn member(dir: &Path) -> Server {
    Server::start(
        dir,
        &[
            "--role=member",
            "--simulate-workloads",
            "--sim-nodes=3",
            "--sim-pod-ready-delay=200ms",
            "--sim-job-duration=500ms",
        ],
    )
    .await
}

/// Creates namespace `ns` and `object` in it with kubectl.
fn create(k: &Path, server: &Server, dir: &Path, ns: &str, object: &Value) {
    let name = object["metadata"]["name"].as_str().unwrap_or("object");
    let file = dir.join(format!("{ns}-{name}.json"));
    std::fs::write(&file, object.to_string()).expect("write manifest");
    let out = cli::ok(
        k,
        server,
        &["create", "-f", &file.to_string_lossy(), "-n", ns],
    );
    assert!(out.ends_with(" created\n"), "{out}");
}

fn namespace(k: &Path, server: &Server, ns: &str) {
    cli::ok(k, server, &["create", "namespace", ns]);
}

/// Waits up to `timeout` for `done` on the object at `path`, returning it.
async fn wait_for(
    api: &Api,
    path: &str,
    timeout: Duration,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let start = Instant::now();
    loop {
        let reply = api.get(path).await;
        let obj = reply.json();
        if reply.status == 200 && done(&obj) {
            return obj;
        }
        assert!(
            start.elapsed() < timeout,
            "{path} not {what} within {timeout:?}: {obj:#}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn container() -> Value {
    json!([{"name": "main", "image": "busybox:1.36", "command": ["true"]}])
}

fn job(name: &str, spec: Value, annotations: Value) -> Value {
    let mut j = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {"template": {"metadata": {"annotations": annotations},
            "spec": {"restartPolicy": "Never", "containers": container()}}}});
    if let (Some(s), Value::Object(extra)) = (j["spec"].as_object_mut(), spec) {
        s.extend(extra);
    }
    j
}

fn pods(k: &Path, server: &Server, ns: &str, selector: &str) -> Vec<Value> {
    get_json(
        k,
        server,
        &["get", "pods", "-n", ns, "-l", selector, "-o", "json"],
    )["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn jobs_complete_two_at_a_time_and_failing_jobs_fail() {
    let kubectls = kubectl_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = member(&dir.path().join("data")).await;
    let api = Api::new(&server);
    // The failing Jobs first: they wait out a 10 s backoff meanwhile.
    for (i, k) in kubectls.iter().enumerate() {
        let ns = format!("jobs-{i}");
        namespace(k, &server, &ns);
        create(
            k,
            &server,
            dir.path(),
            &ns,
            &job(
                "broken",
                json!({"backoffLimit": 1}),
                json!({"sim.skein.io/fail": "true"}),
            ),
        );
    }
    for (i, k) in kubectls.iter().enumerate() {
        let ns = format!("jobs-{i}");
        let spec = json!({"completions": 4, "parallelism": 2});
        create(k, &server, dir.path(), &ns, &job("pi", spec, json!({})));
        // Watch the Job's Pods until it completes: never more than 2 run.
        let path = format!("/apis/batch/v1/namespaces/{ns}/jobs/pi");
        let pods_path =
            format!("/api/v1/namespaces/{ns}/pods?labelSelector=batch.kubernetes.io/job-name%3Dpi");
        let start = Instant::now();
        let mut most = 0;
        loop {
            let list = api.get(&pods_path).await.expect(200);
            let running = list["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| !matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed")))
                .count();
            most = most.max(running);
            let j = api.get(&path).await.expect(200);
            most =
                most.max(usize::try_from(j["status"]["active"].as_i64().unwrap_or(0)).unwrap_or(0));
            if j["status"]["succeeded"] == 4 {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "job pi not done: {j:#}\n{list:#}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            most <= 2 && most > 0,
            "{most} Pods ran at once (parallelism 2)"
        );
        let out = cli::ok(
            k,
            &server,
            &[
                "wait",
                "--for=condition=complete",
                "job/pi",
                "-n",
                &ns,
                "--timeout=30s",
            ],
        );
        assert_eq!(out, "job.batch/pi condition met\n");
        let j = get_json(k, &server, &["get", "job", "pi", "-n", &ns, "-o", "json"]);
        let types: Vec<&str> = j["status"]["conditions"]
            .as_array()
            .expect("conditions")
            .iter()
            .filter_map(|c| c["type"].as_str())
            .collect();
        assert_eq!(types, ["SuccessCriteriaMet", "Complete"], "{j:#}");
        assert_eq!(j["status"]["conditions"][1]["reason"], "CompletionsReached");
        assert!(j["status"]["completionTime"].is_string(), "{j:#}");
        assert!(j["status"]["startTime"].is_string(), "{j:#}");
        assert_eq!(j["status"].get("active"), None, "{j:#}");
        let done = pods(k, &server, &ns, "batch.kubernetes.io/job-name=pi");
        assert_eq!(done.len(), 4);
        let uid = j["metadata"]["uid"].as_str().expect("uid");
        for p in &done {
            assert_eq!(p["status"]["phase"], "Succeeded", "{p:#}");
            assert_eq!(
                p["metadata"]["labels"]["batch.kubernetes.io/controller-uid"],
                uid
            );
            assert_eq!(p["metadata"]["ownerReferences"][0]["kind"], "Job");
            assert_eq!(p["metadata"]["ownerReferences"][0]["controller"], true);
        }
        let described = cli::ok(k, &server, &["describe", "job", "pi", "-n", &ns]);
        for line in [
            "SuccessfulCreate",
            "Created pod: pi-",
            "Completed",
            "Job completed",
        ] {
            assert!(
                described.contains(line),
                "describe job shows {line:?}:\n{described}"
            );
        }
        let table = cli::ok(k, &server, &["get", "job", "pi", "-n", &ns]);
        assert!(
            table.lines().nth(1).is_some_and(|r| r.contains("4/4")),
            "{table}"
        );
    }
    for (i, k) in kubectls.iter().enumerate() {
        let ns = format!("jobs-{i}");
        // One failure, a 10 s backoff (upstream's), a second failure.
        let out = cli::ok(
            k,
            &server,
            &[
                "wait",
                "--for=condition=failed",
                "job/broken",
                "-n",
                &ns,
                "--timeout=35s",
            ],
        );
        assert_eq!(out, "job.batch/broken condition met\n");
        let j = get_json(
            k,
            &server,
            &["get", "job", "broken", "-n", &ns, "-o", "json"],
        );
        assert_eq!(j["status"]["failed"], 2, "{j:#}");
        let failed = j["status"]["conditions"]
            .as_array()
            .expect("conditions")
            .iter()
            .find(|c| c["type"] == "Failed")
            .cloned()
            .unwrap_or_default();
        assert_eq!(failed["reason"], "BackoffLimitExceeded", "{j:#}");
        assert_eq!(
            failed["message"],
            "Job has reached the specified backoff limit"
        );
        let failed_pods = pods(k, &server, &ns, "batch.kubernetes.io/job-name=broken");
        assert_eq!(failed_pods.len(), 2);
        assert!(failed_pods.iter().all(|p| p["status"]["phase"] == "Failed"));
    }
}

#[tokio::test]
async fn indexed_suspended_and_deadline_jobs() {
    let kubectls = kubectl_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = member(&dir.path().join("data")).await;
    for (i, k) in kubectls.iter().enumerate() {
        let ns = format!("indexed-{i}");
        namespace(k, &server, &ns);
        let spec = json!({"completions": 3, "parallelism": 3, "completionMode": "Indexed"});
        create(k, &server, dir.path(), &ns, &job("idx", spec, json!({})));
        let out = cli::ok(
            k,
            &server,
            &[
                "wait",
                "--for=condition=complete",
                "job/idx",
                "-n",
                &ns,
                "--timeout=30s",
            ],
        );
        assert_eq!(out, "job.batch/idx condition met\n");
        let j = get_json(k, &server, &["get", "job", "idx", "-n", &ns, "-o", "json"]);
        assert_eq!(j["status"]["completedIndexes"], "0-2", "{j:#}");
        let mut indexes: Vec<String> = pods(k, &server, &ns, "batch.kubernetes.io/job-name=idx")
            .iter()
            .map(|p| {
                assert_eq!(
                    p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"],
                    p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"]
                );
                p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect();
        indexes.sort();
        assert_eq!(indexes, ["0", "1", "2"]);

        // A suspended Job starts no Pod until resumed.
        create(
            k,
            &server,
            dir.path(),
            &ns,
            &job("later", json!({"suspend": true}), json!({})),
        );
        let out = cli::ok(
            k,
            &server,
            &[
                "wait",
                "--for=condition=suspended",
                "job/later",
                "-n",
                &ns,
                "--timeout=30s",
            ],
        );
        assert_eq!(out, "job.batch/later condition met\n");
        let j = get_json(
            k,
            &server,
            &["get", "job", "later", "-n", &ns, "-o", "json"],
        );
        assert_eq!(j["status"].get("startTime"), None, "{j:#}");
        assert!(pods(k, &server, &ns, "batch.kubernetes.io/job-name=later").is_empty());
        cli::ok(
            k,
            &server,
            &[
                "patch",
                "job",
                "later",
                "-n",
                &ns,
                "--type=merge",
                "-p",
                r#"{"spec":{"suspend":false}}"#,
            ],
        );
        let out = cli::ok(
            k,
            &server,
            &[
                "wait",
                "--for=condition=complete",
                "job/later",
                "-n",
                &ns,
                "--timeout=30s",
            ],
        );
        assert_eq!(out, "job.batch/later condition met\n");
        let j = get_json(
            k,
            &server,
            &["get", "job", "later", "-n", &ns, "-o", "json"],
        );
        let suspended = j["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == "Suspended"))
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            (&suspended["status"], &suspended["reason"]),
            (&json!("False"), &json!("JobResumed")),
            "{j:#}"
        );

        // Ten Pods one at a time take 5 s: a 1 s deadline fails the Job.
        let spec = json!({"completions": 10, "parallelism": 1, "activeDeadlineSeconds": 1});
        create(k, &server, dir.path(), &ns, &job("slow", spec, json!({})));
        let out = cli::ok(
            k,
            &server,
            &[
                "wait",
                "--for=condition=failed",
                "job/slow",
                "-n",
                &ns,
                "--timeout=30s",
            ],
        );
        assert_eq!(out, "job.batch/slow condition met\n");
        let j = get_json(k, &server, &["get", "job", "slow", "-n", &ns, "-o", "json"]);
        let reasons: Vec<(&str, &str)> = j["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| Some((c["type"].as_str()?, c["reason"].as_str()?)))
            .collect();
        assert_eq!(
            reasons,
            [
                ("FailureTarget", "DeadlineExceeded"),
                ("Failed", "DeadlineExceeded")
            ],
            "{j:#}"
        );
        let left = pods(k, &server, &ns, "batch.kubernetes.io/job-name=slow");
        assert!(
            left.iter()
                .all(|p| matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed"))),
            "active Pods of a failed Job are deleted: {left:#?}"
        );
    }
}

#[tokio::test]
async fn daemonsets_run_one_pod_per_node_and_roll() {
    let kubectls = kubectl_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = member(&dir.path().join("data")).await;
    for (i, k) in kubectls.iter().enumerate() {
        let ns = format!("ds-{i}");
        namespace(k, &server, &ns);
        let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                "template": {"metadata": {"labels": {"app": "agent"}},
                    "spec": {"containers": [{"name": "agent", "image": "fluentd:1"}]}}}});
        create(k, &server, dir.path(), &ns, &ds);
        let out = cli::ok(
            k,
            &server,
            &["rollout", "status", "ds/agent", "-n", &ns, "--timeout=30s"],
        );
        assert!(
            out.ends_with("daemon set \"agent\" successfully rolled out\n"),
            "{out}"
        );
        let list = pods(k, &server, &ns, "app=agent");
        let mut nodes: Vec<&str> = list
            .iter()
            .filter_map(|p| p["spec"]["nodeName"].as_str())
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        assert_eq!(
            (list.len(), nodes.len()),
            (3, 3),
            "one Pod per Node: {nodes:?}"
        );
        let p = &list[0];
        let node = p["spec"]["nodeName"].as_str().unwrap_or_default();
        assert_eq!(
            p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                ["nodeSelectorTerms"][0]["matchFields"][0],
            json!({"key": "metadata.name", "operator": "In", "values": [node]})
        );
        let tolerations = p["spec"]["tolerations"].to_string();
        assert!(
            tolerations.contains("node.kubernetes.io/not-ready"),
            "{tolerations}"
        );
        assert!(
            tolerations.contains("node.kubernetes.io/unschedulable"),
            "{tolerations}"
        );
        let first_hash = p["metadata"]["labels"]["controller-revision-hash"].clone();
        assert!(first_hash.is_string(), "{p:#}");
        let d = get_json(k, &server, &["get", "ds", "agent", "-n", &ns, "-o", "json"]);
        let s = &d["status"];
        assert_eq!(
            (
                &s["desiredNumberScheduled"],
                &s["currentNumberScheduled"],
                &s["numberReady"],
                &s["updatedNumberScheduled"],
                &s["numberAvailable"],
                &s["numberMisscheduled"]
            ),
            (
                &json!(3),
                &json!(3),
                &json!(3),
                &json!(3),
                &json!(3),
                &json!(0)
            ),
            "{d:#}"
        );
        // A new image rolls out; two revisions in the history.
        cli::ok(
            k,
            &server,
            &["set", "image", "ds/agent", "agent=fluentd:2", "-n", &ns],
        );
        let out = cli::ok(
            k,
            &server,
            &["rollout", "status", "ds/agent", "-n", &ns, "--timeout=30s"],
        );
        assert!(
            out.ends_with("daemon set \"agent\" successfully rolled out\n"),
            "{out}"
        );
        let list = pods(k, &server, &ns, "app=agent");
        assert_eq!(list.len(), 3);
        for p in &list {
            assert_eq!(p["spec"]["containers"][0]["image"], "fluentd:2");
            assert_ne!(
                p["metadata"]["labels"]["controller-revision-hash"],
                first_hash
            );
        }
        let history = cli::ok(k, &server, &["rollout", "history", "ds/agent", "-n", &ns]);
        let revisions: Vec<&str> = history
            .lines()
            .skip(2)
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert_eq!(revisions, ["1", "2"], "{history}");
    }
}

#[tokio::test]
async fn statefulsets_roll_out_in_order() {
    let kubectls = kubectl_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = member(&dir.path().join("data")).await;
    let api = Api::new(&server);
    for (i, k) in kubectls.iter().enumerate() {
        let ns = format!("sts-{i}");
        namespace(k, &server, &ns);
        let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
            "spec": {"replicas": 3, "serviceName": "nginx",
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27",
                        "volumeMounts": [{"name": "www", "mountPath": "/usr/share/nginx/html"}]}]}},
                "volumeClaimTemplates": [{"metadata": {"name": "www"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}});
        create(k, &server, dir.path(), &ns, &sts);
        let out = cli::ok(
            k,
            &server,
            &["rollout", "status", "sts/web", "-n", &ns, "--timeout=30s"],
        );
        assert!(
            out.ends_with("partitioned roll out complete: 3 new pods have been updated...\n"),
            "{out}"
        );
        let list = pods(k, &server, &ns, "app=web");
        let names: Vec<&str> = list
            .iter()
            .filter_map(|p| p["metadata"]["name"].as_str())
            .collect();
        assert_eq!(names, ["web-0", "web-1", "web-2"]);
        // OrderedReady: each Pod was created once the previous was Ready.
        for pair in list.windows(2) {
            let ready = pair[0]["status"]["conditions"]
                .as_array()
                .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
                .and_then(|c| c["lastTransitionTime"].as_str())
                .unwrap_or_default()
                .to_owned();
            let created = pair[1]["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or_default();
            assert!(
                created >= ready.as_str(),
                "{} created at {created}, before the previous was Ready at {ready}",
                pair[1]["metadata"]["name"]
            );
        }
        for (ord, p) in list.iter().enumerate() {
            let labels = &p["metadata"]["labels"];
            assert_eq!(
                labels["statefulset.kubernetes.io/pod-name"],
                format!("web-{ord}")
            );
            assert_eq!(labels["apps.kubernetes.io/pod-index"], ord.to_string());
            assert_eq!(p["spec"]["hostname"], format!("web-{ord}"));
            assert_eq!(p["spec"]["subdomain"], "nginx");
            assert_eq!(
                p["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"],
                format!("www-web-{ord}")
            );
        }
        let described = cli::ok(k, &server, &["describe", "sts", "web", "-n", &ns]);
        for line in [
            "create Claim www-web-0 Pod web-0 in StatefulSet web success",
            "create Pod web-2 in StatefulSet web successful",
        ] {
            assert!(
                described.contains(line),
                "describe sts shows {line:?}:\n{described}"
            );
        }
        let claims = cli::ok(k, &server, &["get", "pvc", "-n", &ns, "-o", "name"]);
        assert_eq!(
            claims,
            "persistentvolumeclaim/www-web-0\npersistentvolumeclaim/www-web-1\npersistentvolumeclaim/www-web-2\n"
        );
        let s = get_json(k, &server, &["get", "sts", "web", "-n", &ns, "-o", "json"]);
        let st = &s["status"];
        assert_eq!(
            (
                &st["replicas"],
                &st["readyReplicas"],
                &st["currentReplicas"],
                &st["updatedReplicas"],
                &st["availableReplicas"]
            ),
            (&json!(3), &json!(3), &json!(3), &json!(3), &json!(3)),
            "{s:#}"
        );
        assert_eq!(st["currentRevision"], st["updateRevision"], "{s:#}");
        assert_eq!(st["observedGeneration"], s["metadata"]["generation"]);
        let first = st["updateRevision"].as_str().unwrap_or_default().to_owned();
        // Rolling update: back to front; the update revision becomes current.
        cli::ok(
            k,
            &server,
            &["set", "image", "sts/web", "nginx=nginx:1.28", "-n", &ns],
        );
        let out = cli::ok(
            k,
            &server,
            &["rollout", "status", "sts/web", "-n", &ns, "--timeout=30s"],
        );
        assert!(
            out.ends_with("partitioned roll out complete: 3 new pods have been updated...\n"),
            "{out}"
        );
        let s = get_json(k, &server, &["get", "sts", "web", "-n", &ns, "-o", "json"]);
        assert_ne!(s["status"]["updateRevision"], first.as_str(), "{s:#}");
        assert_eq!(
            s["status"]["currentRevision"], s["status"]["updateRevision"],
            "{s:#}"
        );
        let list = pods(k, &server, &ns, "app=web");
        for p in &list {
            assert_eq!(p["spec"]["containers"][0]["image"], "nginx:1.28");
            assert_eq!(
                p["metadata"]["labels"]["controller-revision-hash"],
                s["status"]["updateRevision"]
            );
        }
        let history = cli::ok(k, &server, &["rollout", "history", "sts/web", "-n", &ns]);
        let revisions: Vec<&str> = history
            .lines()
            .skip(2)
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert_eq!(revisions, ["1", "2"], "{history}");
        let revs = cli::ok(
            k,
            &server,
            &["get", "controllerrevisions", "-n", &ns, "-o", "name"],
        );
        assert_eq!(revs.lines().count(), 2, "{revs}");
        // Undo: the first revision is renumbered as the newest.
        let out = cli::ok(
            k,
            &server,
            &["rollout", "undo", "sts/web", "--to-revision=1", "-n", &ns],
        );
        assert_eq!(out, "statefulset.apps/web rolled back\n");
        cli::ok(
            k,
            &server,
            &["rollout", "status", "sts/web", "-n", &ns, "--timeout=30s"],
        );
        let history = cli::ok(k, &server, &["rollout", "history", "sts/web", "-n", &ns]);
        let revisions: Vec<&str> = history
            .lines()
            .skip(2)
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert_eq!(revisions, ["2", "3"], "{history}");
        let s = get_json(k, &server, &["get", "sts", "web", "-n", &ns, "-o", "json"]);
        assert_eq!(s["status"]["updateRevision"], first.as_str(), "{s:#}");
        let s = wait_for(
            &api,
            &format!("/apis/apps/v1/namespaces/{ns}/statefulsets/web"),
            Duration::from_secs(20),
            "rolled back",
            |s| {
                s["status"]["currentRevision"] == first.as_str()
                    && s["status"]["updatedReplicas"] == 3
            },
        )
        .await;
        assert_eq!(
            s["spec"]["template"]["spec"]["containers"][0]["image"],
            "nginx:1.27"
        );
        // Scale down: the highest ordinal goes first; claims stay (Retain).
        cli::ok(k, &server, &["scale", "sts/web", "--replicas=1", "-n", &ns]);
        wait_for(
            &api,
            &format!("/apis/apps/v1/namespaces/{ns}/statefulsets/web"),
            Duration::from_secs(20),
            "scaled down",
            |s| s["status"]["replicas"] == 1 && s["status"]["readyReplicas"] == 1,
        )
        .await;
        let names = cli::ok(
            k,
            &server,
            &["get", "pods", "-n", &ns, "-l", "app=web", "-o", "name"],
        );
        assert_eq!(names, "pod/web-0\n");
        let claims = cli::ok(k, &server, &["get", "pvc", "-n", &ns, "-o", "name"]);
        assert_eq!(claims.lines().count(), 3, "{claims}");
    }
}

#[tokio::test]
async fn cronjobs_create_jobs_on_schedule() {
    let kubectls = kubectl_binaries();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = member(&dir.path().join("data")).await;
    let api = Api::new(&server);
    for (i, k) in kubectls.iter().enumerate() {
        let ns = format!("cron-{i}");
        namespace(k, &server, &ns);
        let cj = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick"},
            "spec": {"schedule": "*/1 * * * *",
                "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": container()}}}}}});
        create(k, &server, dir.path(), &ns, &cj);
        // kubectl's own Job from the CronJob runs as any Job.
        let out = cli::ok(
            k,
            &server,
            &["create", "job", "--from=cronjob/tick", "manual", "-n", &ns],
        );
        assert_eq!(out, "job.batch/manual created\n");
    }
    for (i, k) in kubectls.iter().enumerate() {
        let ns = format!("cron-{i}");
        let cj = wait_for(
            &api,
            &format!("/apis/batch/v1/namespaces/{ns}/cronjobs/tick"),
            Duration::from_secs(75),
            "scheduled",
            |c| c["status"]["lastScheduleTime"].is_string(),
        )
        .await;
        let scheduled = cj["status"]["lastScheduleTime"]
            .as_str()
            .unwrap_or_default();
        assert!(
            scheduled.ends_with(":00Z"),
            "activations are on the minute: {scheduled}"
        );
        let jobs = get_json(k, &server, &["get", "jobs", "-n", &ns, "-o", "json"]);
        let ours: Vec<&Value> = jobs["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|j| j["metadata"]["name"] != "manual")
            .collect();
        assert_eq!(ours.len(), 1, "{jobs:#}");
        let j = ours[0];
        let name = j["metadata"]["name"].as_str().unwrap_or_default();
        let minutes: i64 = name
            .strip_prefix("tick-")
            .and_then(|m| m.parse().ok())
            .unwrap_or_else(|| panic!("job name {name}"));
        assert_eq!(
            j["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"],
            scheduled
        );
        let secs = time_of(scheduled);
        assert_eq!(
            minutes,
            secs / 60,
            "{name} is named by the activation's minute"
        );
        assert_eq!(j["metadata"]["ownerReferences"][0]["kind"], "CronJob");
        let out = cli::ok(
            k,
            &server,
            &[
                "wait",
                "--for=condition=complete",
                &format!("job/{name}"),
                "job/manual",
                "-n",
                &ns,
                "--timeout=30s",
            ],
        );
        assert_eq!(out.lines().count(), 2, "{out}");
        let cj = wait_for(
            &api,
            &format!("/apis/batch/v1/namespaces/{ns}/cronjobs/tick"),
            Duration::from_secs(10),
            "without active Jobs and with a last success",
            |c| {
                c["status"].get("active").is_none() && c["status"]["lastSuccessfulTime"].is_string()
            },
        )
        .await;
        assert!(
            cj["status"]["lastSuccessfulTime"].as_str() >= Some(scheduled),
            "{cj:#}"
        );
    }
}

/// Seconds since the epoch of an RFC 3339 UTC timestamp
/// (`2026-01-02T03:04:00Z`).
fn time_of(s: &str) -> i64 {
    let n = |a: usize, b: usize| {
        s.get(a..b)
            .and_then(|x| x.parse::<i64>().ok())
            .unwrap_or_else(|| panic!("timestamp {s}"))
    };
    let (y, m, d) = (n(0, 4), n(5, 7), n(8, 10));
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    days * 86_400 + n(11, 13) * 3600 + n(14, 16) * 60 + n(17, 19)
}
