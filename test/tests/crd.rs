//! CustomResourceDefinitions end to end (issue 10): kubectl 1.35 and 1.32
//! and raw HTTPS against `skein serve`, on the embedded store or on etcd
//! (`SKEIN_TEST_BACKEND=etcd`, as the kubectl suite).
//!
//! Every expected message is upstream's (kube-apiserver and
//! apiextensions-apiserver v1.33, kube-openapi, kubectl), taken from their
//! source and tests, never from Skein's output:
//! - schema errors: `kubeOpenAPIResultToFieldErrors` in
//!   apiextensions-apiserver `pkg/apiserver/validation/validation.go` over
//!   kube-openapi's `pkg/validation/errors/schema.go` texts (`<path> in body
//!   should ...`); its unit tests show the shapes;
//! - `hasBlockingErr` (`pkg/registry/customresource/strategy.go`): a type,
//!   required, enum, too-long or too-many error skips the CEL rules and adds
//!   `<nil>: Invalid value: "null": some validation rules were not checked ...`;
//! - CEL: `pkg/apiserver/schema/cel/validation.go` (`fieldErrorForReason`,
//!   `Invalid value: "object": <message>`), compile errors in
//!   `pkg/apis/apiextensions/validation/validation.go`;
//! - conditions: `pkg/controller/status/naming_controller.go` and
//!   `pkg/controller/establish/establishing_controller.go`;
//! - the deprecation warning: `defaultDeprecationWarning` in
//!   `pkg/apiserver/customresource_handler.go`;
//! - the annotation limit: `ValidateAnnotations` in apimachinery
//!   `pkg/api/validation/objectmeta.go` (`field.TooLong`, 262144 bytes);
//! - kubectl's rendering of an `Invalid` Status: `The <Kind> "<name>" is
//!   invalid: <field>: <detail>` (one cause), as `cmdutil.CheckErr`.
//!
//! Each kubectl binary works in its own API group (`stable<i>.example.com`)
//! and namespace (`crd-<i>`), so the binaries never see each other's types.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skein_tests::cli::*;
use skein_tests::http::{Api, Reply, items, message};
use skein_tests::kubectl::Background;

/// How long a condition may take to show (Established, a deleted CRD
/// gone, ...).
const SETTLE: Duration = Duration::from_secs(30);

/// The Argo CD CRDs vendored in `test/fixtures/argo-cd-crds/`.
fn argo_fixture(name: &str) -> String {
    skein_tests::repo_root()
        .join("test/fixtures/argo-cd-crds")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Polls `check` every 100 ms until it returns `Some`, or panics after
/// `timeout` quoting `what` and the last value `describe` gave.
async fn eventually<T>(
    what: &str,
    timeout: Duration,
    mut check: impl AsyncFnMut() -> Result<T, String>,
) -> T {
    let start = Instant::now();
    loop {
        match check().await {
            Ok(v) => return v,
            Err(last) => {
                assert!(
                    start.elapsed() < timeout,
                    "{what}: not within {timeout:?}; last seen:\n{last}"
                );
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The CronTab CRD of group `group`: served versions v1 (storage) and
/// v1beta1 (deprecated), conversion `None`; a schema with every kind of
/// validation, defaults, CEL rules (a messageExpression, a fieldPath with a
/// reason, a transition rule), printer columns (one of priority 1), and the
/// status and scale subresources.
fn crontab_crd(group: &str) -> Value {
    let schema = json!({
        "description": "A CronTab runs an image on a schedule.",
        "type": "object",
        "properties": {
            "spec": {
                "description": "The desired state of a CronTab.",
                "type": "object",
                "required": ["cronSpec", "image"],
                "properties": {
                    "cronSpec": {
                        "description": "When to run, in cron syntax.",
                        "type": "string",
                        "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"
                    },
                    "image": {
                        "description": "The container image to run.",
                        "type": "string",
                        "maxLength": 64
                    },
                    "replicas": {
                        "description": "How many copies run at once.",
                        "type": "integer",
                        "minimum": 0,
                        "maximum": 10,
                        "default": 1
                    },
                    "size": {
                        "description": "The size of each run.",
                        "type": "string",
                        "enum": ["small", "medium", "large"],
                        "default": "small",
                        "x-kubernetes-validations": [{
                            "rule": "oldSelf != 'large' || self == 'large'",
                            "message": "a large CronTab cannot be made smaller"
                        }]
                    },
                    "tags": {
                        "type": "array",
                        "maxItems": 3,
                        "items": {"type": "string"},
                        "x-kubernetes-list-type": "set"
                    },
                    "ports": {
                        "type": "array",
                        "minItems": 1,
                        "items": {"type": "integer"}
                    },
                    "command": {"type": "string", "minLength": 2},
                    "startTime": {"type": "string", "format": "date-time"},
                    "timeout": {"x-kubernetes-int-or-string": true},
                    "note": {"type": "string", "nullable": true},
                    "template": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": true,
                        "x-kubernetes-preserve-unknown-fields": true
                    },
                    "extra": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": true
                    }
                },
                "x-kubernetes-validations": [
                    {
                        "rule": "self.size != 'small' || self.replicas <= 5",
                        "messageExpression":
                            "'a small CronTab has at most 5 replicas, not ' + string(self.replicas)"
                    },
                    {
                        "rule": "self.image.contains(':')",
                        "message": "must be pinned to a tag",
                        "fieldPath": ".image",
                        "reason": "FieldValueForbidden"
                    }
                ]
            },
            "status": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer"},
                    "labelSelector": {"type": "string"},
                    "lastScheduleTime": {"type": "string", "format": "date-time"}
                }
            }
        }
    });
    let version = |name: &str, storage: bool, deprecated: bool| {
        json!({
            "name": name,
            "served": true,
            "storage": storage,
            "deprecated": deprecated,
            "schema": {"openAPIV3Schema": schema.clone()},
            "subresources": {
                "status": {},
                "scale": {
                    "specReplicasPath": ".spec.replicas",
                    "statusReplicasPath": ".status.replicas",
                    "labelSelectorPath": ".status.labelSelector"
                }
            },
            "additionalPrinterColumns": [
                {"name": "Image", "type": "string", "jsonPath": ".spec.image"},
                {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                {"name": "Schedule", "type": "string", "jsonPath": ".spec.cronSpec"},
                {"name": "Size", "type": "string", "priority": 1, "jsonPath": ".spec.size"},
                {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
            ]
        })
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("crontabs.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {
                "plural": "crontabs",
                "singular": "crontab",
                "kind": "CronTab",
                "listKind": "CronTabList",
                "shortNames": ["ct"]
            },
            "conversion": {"strategy": "None"},
            "versions": [version("v1", true, false), version("v1beta1", false, true)]
        }
    })
}

/// A CronTab `name` of `group`/`version` with `spec`.
fn crontab(group: &str, version: &str, name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": format!("{group}/{version}"),
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": spec,
    })
}

/// A spec that passes every rule.
fn valid_spec() -> Value {
    json!({"cronSpec": "*/5 * * * *", "image": "busybox:1.36"})
}

/// [`valid_spec`] with `changes` merged in (a `null` removes a field).
fn spec_with(changes: Value) -> Value {
    let mut spec = valid_spec();
    if let (Some(s), Some(c)) = (spec.as_object_mut(), changes.as_object()) {
        for (k, v) in c {
            if v.is_null() {
                s.remove(k);
            } else {
                s.insert(k.clone(), v.clone());
            }
        }
    }
    spec
}

/// `kubectl wait --for condition=established crd/<name>`; asserts it
/// says `condition met`.
fn wait_established(k: &Path, env: &Env, crd: &str) {
    let out = ok(
        k,
        &env.server,
        &[
            "wait",
            "--for",
            "condition=established",
            &format!("crd/{crd}"),
            "--timeout=30s",
        ],
    );
    assert_eq!(
        out,
        format!("customresourcedefinition.apiextensions.k8s.io/{crd} condition met\n")
    );
}

/// The condition `type_` of a CRD object, or `Null`.
fn condition(crd: &Value, type_: &str) -> Value {
    crd["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .cloned()
        .unwrap_or(Value::Null)
}

/// Waits (raw API) until CRD `name` has condition `type_` with `status`;
/// returns the CRD.
async fn wait_condition(api: &Api, name: &str, type_: &str, status: &str) -> Value {
    let path = format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}");
    eventually(
        &format!("CRD {name} condition {type_}={status}"),
        SETTLE,
        async || {
            let r = api.get(&path).await;
            if r.status != 200 {
                return Err(format!("{}: {}", r.status, r.text()));
            }
            let crd = r.json();
            if condition(&crd, type_)["status"] == status {
                Ok(crd)
            } else {
                Err(crd["status"].to_string())
            }
        },
    )
    .await
}

/// Waits until `GET path` answers 404.
async fn wait_not_found(api: &Api, path: &str) {
    eventually(&format!("GET {path} is 404"), SETTLE, async || {
        let r = api.get(path).await;
        if r.status == 404 {
            Ok(())
        } else {
            Err(format!("{}: {}", r.status, r.text()))
        }
    })
    .await;
}

/// The `Warning` headers of a reply, their texts unquoted as kubectl
/// prints them.
fn warnings(reply: &Reply) -> Vec<String> {
    reply
        .headers
        .get_all("warning")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(|v| {
            // `299 - "<text>"`, the text with Go's quoting.
            let text = v.splitn(3, ' ').nth(2).unwrap_or(v);
            serde_json::from_str::<String>(text).unwrap_or_else(|_| text.to_string())
        })
        .collect()
}

/// Asserts a 422 `Invalid` whose message is exactly `expected`.
fn assert_invalid(what: &str, reply: &Reply, expected: &str) {
    assert_eq!(
        reply.status.as_u16(),
        422,
        "{what}: expected 422 Invalid with {expected:?}, got {}: {}",
        reply.status,
        reply.text()
    );
    let status = reply.expect_status(422, "Invalid");
    assert_eq!(message(&status), expected, "{what}: {status}");
}

// ---------------------------------------------------------------------------
// The lifecycle of one CRD with kubectl
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_crd_with_two_versions_is_served_like_a_built_in() {
    let env = start().await;
    let api = Api::new(&env.server);
    for (i, k) in env.each() {
        let group = format!("stable{i}.example.com");
        let crd_name = format!("crontabs.{group}");
        let ns = format!("crd-{i}");
        // Both kubectls' groups have a CronTab: name the group.
        let one = format!("crontab.{group}");
        let all = format!("crontabs.{group}");
        let version = format!("--api-version={group}/v1");
        env.namespace(k, &ns);

        // Create, wait for Established, check the status upstream writes.
        let out = ok(
            k,
            &env.server,
            &["create", "-f", &env.manifest(&crontab_crd(&group))],
        );
        assert_eq!(
            out,
            format!("customresourcedefinition.apiextensions.k8s.io/{crd_name} created\n")
        );
        wait_established(k, &env, &crd_name);
        let crd = get_json(k, &env.server, &["get", "crd", &crd_name]);
        let names = condition(&crd, "NamesAccepted");
        assert_eq!(names["status"], "True", "{crd}");
        assert_eq!(names["reason"], "NoConflicts", "{crd}");
        assert_eq!(names["message"], "no conflicts found", "{crd}");
        let established = condition(&crd, "Established");
        assert_eq!(established["reason"], "InitialNamesAccepted", "{crd}");
        assert_eq!(
            established["message"], "the initial names have been accepted",
            "{crd}"
        );
        assert_eq!(crd["status"]["storedVersions"], json!(["v1"]), "{crd}");
        assert_eq!(crd["status"]["acceptedNames"]["kind"], "CronTab", "{crd}");
        assert_eq!(
            crd["status"]["acceptedNames"]["shortNames"],
            json!(["ct"]),
            "{crd}"
        );

        // Discovery: kubectl sees the resource, its short name and kind.
        let out = ok(k, &env.server, &["api-resources", "--api-group", &group]);
        let rows = cells(&out);
        assert_eq!(
            rows.get(1).cloned().unwrap_or_default(),
            vec!["crontabs", "ct", &format!("{group}/v1"), "true", "CronTab"],
            "api-resources:\n{out}"
        );

        // Create; defaults are applied.
        let out = ok(
            k,
            &env.server,
            &[
                "create",
                "-n",
                &ns,
                "-f",
                &env.manifest(&crontab(&group, "v1", "nightly", valid_spec())),
            ],
        );
        assert_eq!(out, format!("crontab.{group}/nightly created\n"));
        let cr = get_json(k, &env.server, &["get", &one, "nightly", "-n", &ns]);
        assert_eq!(cr["spec"]["replicas"], 1, "default replicas: {cr}");
        assert_eq!(cr["spec"]["size"], "small", "default size: {cr}");
        assert_eq!(cr["metadata"]["generation"], 1, "{cr}");

        // Printer columns, by short name, then -o wide with the priority-1
        // column.
        let table = ok(
            k,
            &env.server,
            &["get", if i == 0 { "ct" } else { &all }, "-n", &ns],
        );
        assert_eq!(
            header(&table),
            vec!["NAME", "IMAGE", "REPLICAS", "SCHEDULE", "AGE"],
            "{table}"
        );
        let row = cells(&table)[1].clone();
        assert_eq!(&row[..3], &["nightly", "busybox:1.36", "1"], "{table}");
        assert_eq!(&row[3..8], &["*/5", "*", "*", "*", "*"], "{table}");
        assert!(is_age(row[8]), "{table}");
        let wide = ok(k, &env.server, &["get", &all, "-n", &ns, "-o", "wide"]);
        assert_eq!(
            header(&wide),
            vec!["NAME", "IMAGE", "REPLICAS", "SCHEDULE", "SIZE", "AGE"],
            "{wide}"
        );
        assert_eq!(cells(&wide)[1][8], "small", "{wide}");

        // explain reads the CRD's schema from OpenAPI v3.
        let out = ok(k, &env.server, &["explain", "crontabs.spec", &version]);
        assert!(out.contains(&format!("GROUP:      {group}")), "{out}");
        assert!(out.contains("KIND:       CronTab"), "{out}");
        assert!(out.contains("VERSION:    v1\n"), "{out}");
        assert!(out.contains("FIELD: spec <Object>"), "{out}");
        assert!(out.contains("The desired state of a CronTab."), "{out}");
        assert!(
            out.lines().any(|l| l.contains("cronSpec")
                && l.contains("<string>")
                && l.contains("-required-")),
            "{out}"
        );
        let out = ok(
            k,
            &env.server,
            &["explain", "crontabs.spec.replicas", &version],
        );
        assert!(out.contains("FIELD: replicas <integer>"), "{out}");
        assert!(out.contains("How many copies run at once."), "{out}");

        // The deprecated version: apiVersion rewritten, upstream's warning.
        let out = kubectl(
            k,
            &env.server,
            &[
                "get",
                &format!("crontabs.v1beta1.{group}"),
                "nightly",
                "-n",
                &ns,
                "-o",
                "json",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            failure("succeed", k, &env.server, &[], &out)
        );
        let beta: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(beta["apiVersion"], format!("{group}/v1beta1"), "{beta}");
        assert_eq!(beta["spec"], cr["spec"], "{beta}");
        assert_eq!(
            stderr(&out),
            format!("Warning: {group}/v1beta1 CronTab is deprecated; use {group}/v1 CronTab\n")
        );

        // Client-side apply: created, then configured.
        let mut applied = crontab(&group, "v1", "applied", valid_spec());
        let file = env.manifest(&applied);
        let out = ok(k, &env.server, &["apply", "-n", &ns, "-f", &file]);
        assert_eq!(out, format!("crontab.{group}/applied created\n"));
        applied["spec"]["image"] = json!("busybox:1.37");
        let file = env.manifest(&applied);
        let out = ok(k, &env.server, &["apply", "-n", &ns, "-f", &file]);
        assert_eq!(out, format!("crontab.{group}/applied configured\n"));
        let cr = get_json(k, &env.server, &["get", &one, "applied", "-n", &ns]);
        assert_eq!(cr["spec"]["image"], "busybox:1.37", "{cr}");
        assert_eq!(cr["metadata"]["generation"], 2, "{cr}");
        assert!(
            cr["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
                .is_string(),
            "{cr}"
        );

        // Server-side apply: serverside-applied, managed by kubectl; a
        // second apply with a change updates it.
        let mut ssa = crontab(&group, "v1", "ssa", spec_with(json!({"tags": ["a", "b"]})));
        let file = env.manifest(&ssa);
        let out = ok(
            k,
            &env.server,
            &["apply", "--server-side", "-n", &ns, "-f", &file],
        );
        assert_eq!(out, format!("crontab.{group}/ssa serverside-applied\n"));
        ssa["spec"]["tags"] = json!(["a", "b", "c"]);
        let file = env.manifest(&ssa);
        let out = ok(
            k,
            &env.server,
            &["apply", "--server-side", "-n", &ns, "-f", &file],
        );
        assert_eq!(out, format!("crontab.{group}/ssa serverside-applied\n"));
        let cr = get_json(
            k,
            &env.server,
            &["get", &one, "ssa", "-n", &ns, "--show-managed-fields"],
        );
        assert_eq!(cr["spec"]["tags"], json!(["a", "b", "c"]), "{cr}");
        let managers: Vec<&str> = cr["metadata"]["managedFields"]
            .as_array()
            .map(|m| m.iter().filter_map(|e| e["manager"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(managers, vec!["kubectl"], "{cr}");
        assert_eq!(
            cr["metadata"]["managedFields"][0]["operation"], "Apply",
            "{cr}"
        );

        // scale, then the scale subresource and the status subresource.
        let out = ok(
            k,
            &env.server,
            &["scale", &one, "nightly", "-n", &ns, "--replicas=3"],
        );
        assert_eq!(out, format!("crontab.{group}/nightly scaled\n"));
        let cr = get_json(k, &env.server, &["get", &one, "nightly", "-n", &ns]);
        assert_eq!(cr["spec"]["replicas"], 3, "{cr}");
        assert_eq!(cr["metadata"]["generation"], 2, "{cr}");
        let out = ok(
            k,
            &env.server,
            &[
                "patch",
                &one,
                "nightly",
                "-n",
                &ns,
                "--subresource=status",
                "--type=merge",
                "-p",
                r#"{"status":{"replicas":3,"labelSelector":"app=nightly"},"spec":{"replicas":9}}"#,
            ],
        );
        assert_eq!(out, format!("crontab.{group}/nightly patched\n"));
        let cr = get_json(k, &env.server, &["get", &one, "nightly", "-n", &ns]);
        assert_eq!(cr["status"]["replicas"], 3, "{cr}");
        assert_eq!(
            cr["spec"]["replicas"], 3,
            "a status write keeps the spec: {cr}"
        );
        assert_eq!(
            cr["metadata"]["generation"], 2,
            "a status write is no new generation: {cr}"
        );
        let scale = get_json(
            k,
            &env.server,
            &["get", &one, "nightly", "-n", &ns, "--subresource=scale"],
        );
        assert_eq!(scale["kind"], "Scale", "{scale}");
        assert_eq!(scale["apiVersion"], "autoscaling/v1", "{scale}");
        assert_eq!(scale["spec"]["replicas"], 3, "{scale}");
        assert_eq!(scale["status"]["replicas"], 3, "{scale}");
        assert_eq!(scale["status"]["selector"], "app=nightly", "{scale}");

        // A status write is validated against the status schema: upstream
        // validates the status alone, so the path in the detail is relative.
        let out = err(
            k,
            &env.server,
            &[
                "patch",
                &one,
                "nightly",
                "-n",
                &ns,
                "--subresource=status",
                "--type=merge",
                "-p",
                r#"{"status":{"lastScheduleTime":"yesterday"}}"#,
            ],
        );
        // A type error is blocking: the CEL rules are skipped, which adds a
        // second cause, so kubectl prints a list.
        assert_eq!(
            out,
            format!(
                "The CronTab \"nightly\" is invalid: \n* status.lastScheduleTime: Invalid value: \
                 \"yesterday\": lastScheduleTime in body must be of type date-time: \
                 \"yesterday\"\n* {CEL_SKIPPED}\n"
            )
        );

        // Watch with kubectl: a new object shows up.
        let mut watch = Background::spawn(k, &env.server, &["get", &all, "-n", &ns, "-w"]);
        watch.wait_for_stdout("the existing objects", WATCH_TIMEOUT, |s| {
            s.contains("nightly")
        });
        env.create(k, &ns, &crontab(&group, "v1", "watched", valid_spec()));
        watch.wait_for_stdout("the new CronTab", WATCH_TIMEOUT, |s| {
            s.lines().any(|l| l.starts_with("watched "))
        });
        drop(watch.stop());

        // Raw HTTPS: list and a watch of the custom resources.
        let base = format!("/apis/{group}/v1/namespaces/{ns}/crontabs");
        let list = api.get(&base).await.expect(200);
        assert_eq!(list["kind"], "CronTabList", "{list}");
        assert_eq!(list["apiVersion"], format!("{group}/v1"), "{list}");
        let mut names: Vec<String> = items(&list)
            .iter()
            .map(|o| {
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        names.sort();
        assert_eq!(names, ["applied", "nightly", "ssa", "watched"], "{list}");
        let rv = list["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let mut w = api
            .watch(&format!("{base}?watch=1&resourceVersion={rv}"))
            .await;
        let posted = api
            .post(&base, &crontab(&group, "v1", "raw", valid_spec()))
            .await
            .expect(201);
        assert_eq!(
            posted["spec"]["replicas"], 1,
            "defaults on a raw create: {posted}"
        );
        let e = w.change().await;
        assert_eq!(e["type"], "ADDED", "{e}");
        assert_eq!(e["object"]["metadata"]["name"], "raw", "{e}");
        assert_eq!(e["object"]["kind"], "CronTab", "{e}");
        // A protobuf body is 415 for custom resources, as upstream.
        let r = api
            .raw(
                reqwest::Method::POST,
                &base,
                "application/vnd.kubernetes.protobuf",
                b"k8s\x00".to_vec(),
            )
            .await;
        r.expect_status(415, "UnsupportedMediaType");
        // So is a strategic merge patch.
        let r = api
            .raw(
                reqwest::Method::PATCH,
                &format!("{base}/raw"),
                "application/strategic-merge-patch+json",
                br#"{"spec":{"replicas":2}}"#.to_vec(),
            )
            .await;
        r.expect_status(415, "UnsupportedMediaType");

        // Delete one.
        let out = ok(k, &env.server, &["delete", &one, "watched", "-n", &ns]);
        assert_deleted(k, &out, &format!("crontab.{group} \"watched\""), Some(&ns));
        let e = w.change().await;
        assert_eq!(
            (e["type"].as_str(), e["object"]["metadata"]["name"].as_str()),
            (Some("DELETED"), Some("watched")),
            "{e}"
        );
    }
}

// ---------------------------------------------------------------------------
// Validation of custom resources
// ---------------------------------------------------------------------------

/// The detail upstream adds when a blocking error skips the CEL rules.
const CEL_SKIPPED: &str = "<nil>: Invalid value: \"null\": some validation rules were not \
                           checked because the object was invalid; correct the existing errors \
                           to complete validation";

#[tokio::test]
async fn invalid_custom_resources_get_upstream_messages_and_nothing_is_stored() {
    let env = start().await;
    let api = Api::new(&env.server);
    let (_, k) = env.each().next().expect("a kubectl");
    let group = "valid.example.com";
    ok(
        k,
        &env.server,
        &["create", "-f", &env.manifest(&crontab_crd(group))],
    );
    wait_established(k, &env, &format!("crontabs.{group}"));
    let base = format!("/apis/{group}/v1/namespaces/default/crontabs");

    // (what, spec, the error list; a blocking error adds CEL_SKIPPED).
    let long_image = format!("{}:1", "r".repeat(63));
    let cases: Vec<(&str, Value, Vec<String>)> = vec![
        (
            "type",
            spec_with(json!({"replicas": "three"})),
            vec![
                r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#.into(),
                CEL_SKIPPED.into(),
            ],
        ),
        (
            "required",
            spec_with(json!({"image": null})),
            vec!["spec.image: Required value".into(), CEL_SKIPPED.into()],
        ),
        (
            "enum",
            spec_with(json!({"size": "huge"})),
            vec![
                r#"spec.size: Unsupported value: "huge": supported values: "small", "medium", "large""#.into(),
                CEL_SKIPPED.into(),
            ],
        ),
        (
            "pattern",
            spec_with(json!({"cronSpec": "every minute"})),
            vec![r#"spec.cronSpec: Invalid value: "every minute": spec.cronSpec in body should match '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'"#.into()],
        ),
        (
            "format",
            spec_with(json!({"startTime": "yesterday"})),
            vec![
                r#"spec.startTime: Invalid value: "yesterday": spec.startTime in body must be of type date-time: "yesterday""#.into(),
                CEL_SKIPPED.into(),
            ],
        ),
        (
            "maximum",
            spec_with(json!({"replicas": 11, "size": "large"})),
            vec!["spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10".into()],
        ),
        (
            "minimum",
            spec_with(json!({"replicas": -1})),
            vec!["spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0".into()],
        ),
        (
            "maxLength",
            spec_with(json!({"image": long_image})),
            vec![
                "spec.image: Too long: may not be more than 64 bytes".into(),
                CEL_SKIPPED.into(),
            ],
        ),
        (
            "minLength",
            spec_with(json!({"command": "x"})),
            vec![r#"spec.command: Invalid value: "x": spec.command in body should be at least 2 chars long"#.into()],
        ),
        (
            "maxItems",
            spec_with(json!({"tags": ["a", "b", "c", "d"]})),
            vec![
                "spec.tags: Too many: 4: must have at most 3 items".into(),
                CEL_SKIPPED.into(),
            ],
        ),
        (
            "minItems",
            spec_with(json!({"ports": []})),
            vec!["spec.ports: Invalid value: 0: spec.ports in body should have at least 1 items".into()],
        ),
        (
            "x-kubernetes-list-type: set",
            spec_with(json!({"tags": ["a", "a"]})),
            vec![r#"spec.tags[1]: Duplicate value: "a""#.into()],
        ),
        (
            "null in a list of integers",
            spec_with(json!({"ports": [80, null]})),
            vec![
                r#"spec.ports[1]: Invalid value: "null": spec.ports[1] in body must be of type integer: "null""#.into(),
                CEL_SKIPPED.into(),
            ],
        ),
        (
            "x-kubernetes-int-or-string",
            spec_with(json!({"timeout": true})),
            vec![
                r#"spec.timeout: Invalid value: "boolean": spec.timeout in body must be of type integer,string: "boolean""#.into(),
                CEL_SKIPPED.into(),
            ],
        ),
        (
            "x-kubernetes-embedded-resource",
            spec_with(json!({"template": {"apiVersion": "v1", "metadata": {"name": "t"}}})),
            vec![
                "spec.template.kind: Required value: must not be empty".into(),
                CEL_SKIPPED.into(),
            ],
        ),
        (
            "CEL messageExpression",
            spec_with(json!({"replicas": 7})),
            vec![r#"spec: Invalid value: "object": a small CronTab has at most 5 replicas, not 7"#.into()],
        ),
        (
            "CEL fieldPath and reason",
            spec_with(json!({"image": "busybox"})),
            vec!["spec.image: Forbidden: must be pinned to a tag".into()],
        ),
    ];
    for (what, spec, errors) in &cases {
        let reply = api
            .post(&base, &crontab(group, "v1", "bad", spec.clone()))
            .await;
        let list = if errors.len() == 1 {
            errors[0].clone()
        } else {
            format!("[{}]", errors.join(", "))
        };
        assert_invalid(
            what,
            &reply,
            &format!("CronTab.{group} \"bad\" is invalid: {list}"),
        );
    }
    // The same through kubectl, as every kubectl prints an Invalid error.
    for (_, k) in env.each() {
        let file = env.manifest(&crontab(
            group,
            "v1",
            "bad",
            spec_with(json!({"replicas": 7})),
        ));
        let out = err(k, &env.server, &["create", "-f", &file]);
        assert_eq!(
            out,
            "The CronTab \"bad\" is invalid: spec: Invalid value: \"object\": a small CronTab has \
             at most 5 replicas, not 7\n"
        );
    }
    // Nothing was stored.
    let list = api.get(&base).await.expect(200);
    assert!(
        items(&list).is_empty(),
        "invalid objects were stored: {list}"
    );

    // A transition rule: a large CronTab cannot be made small.
    let large = api
        .post(
            &base,
            &crontab(group, "v1", "big", spec_with(json!({"size": "large"}))),
        )
        .await
        .expect(201);
    let mut smaller = large.clone();
    smaller["spec"]["size"] = json!("small");
    let reply = api.put(&format!("{base}/big"), &smaller).await;
    assert_invalid(
        "transition rule",
        &reply,
        &format!(
            "CronTab.{group} \"big\" is invalid: spec.size: Invalid value: \"string\": a large \
             CronTab cannot be made smaller"
        ),
    );
    let stored = api.get(&format!("{base}/big")).await.expect(200);
    assert_eq!(stored["spec"]["size"], "large", "{stored}");
    assert_eq!(
        stored["metadata"]["resourceVersion"], large["metadata"]["resourceVersion"],
        "a rejected update changed the object: {stored}"
    );

    // nullable keeps a null; a null in a field that is not nullable (and
    // has no default) is dropped, as upstream prunes it.
    let mut body = crontab(group, "v1", "nulls", valid_spec());
    body["spec"]["note"] = Value::Null;
    body["spec"]["command"] = Value::Null;
    let cr = api.post(&base, &body).await.expect(201);
    assert!(
        cr["spec"]
            .as_object()
            .is_some_and(|s| s.contains_key("note") && s["note"].is_null()),
        "a nullable field keeps its null: {cr}"
    );
    assert!(
        cr["spec"]
            .as_object()
            .is_some_and(|s| !s.contains_key("command")),
        "a null in a field that is not nullable is dropped: {cr}"
    );
}

#[tokio::test]
async fn unknown_fields_are_pruned_warned_about_or_rejected() {
    let env = start().await;
    let api = Api::new(&env.server);
    let (_, k) = env.each().next().expect("a kubectl");
    let group = "prune.example.com";
    ok(
        k,
        &env.server,
        &["create", "-f", &env.manifest(&crontab_crd(group))],
    );
    wait_established(k, &env, &format!("crontabs.{group}"));
    let base = format!("/apis/{group}/v1/namespaces/default/crontabs");
    let with_unknown = |name: &str| {
        let mut cr = crontab(group, "v1", name, valid_spec());
        cr["spec"]["colour"] = json!("red");
        cr["spec"]["extra"] = json!({"anything": {"goes": [1, 2]}});
        cr["spec"]["template"] = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "t", "labels": {"a": "b"}}, "data": {"k": "v"}
        });
        cr
    };

    // Strict (kubectl's default): 400 naming the field.
    let reply = api
        .post(
            &format!("{base}?fieldValidation=Strict"),
            &with_unknown("strict"),
        )
        .await;
    let status = reply.expect_status(400, "BadRequest");
    assert_eq!(
        message(&status),
        "CronTab in version \"v1\" cannot be handled as a CronTab: strict decoding error: \
         unknown field \"spec.colour\"",
        "{status}"
    );
    // kubectl says the same.
    for (_, k) in env.each() {
        let file = env.manifest(&with_unknown("strict"));
        let out = err(k, &env.server, &["create", "-f", &file]);
        assert_eq!(
            out,
            format!(
                "Error from server (BadRequest): error when creating \"{file}\": CronTab in \
                 version \"v1\" cannot be handled as a CronTab: strict decoding error: unknown \
                 field \"spec.colour\"\n"
            )
        );
    }
    // Warn: created, pruned, one warning.
    let reply = api
        .post(
            &format!("{base}?fieldValidation=Warn"),
            &with_unknown("warn"),
        )
        .await;
    let cr = reply.expect(201);
    assert_eq!(
        warnings(&reply),
        vec!["unknown field \"spec.colour\""],
        "{cr}"
    );
    assert!(cr["spec"].get("colour").is_none(), "pruned: {cr}");
    // Preserved and embedded objects keep what they hold.
    assert_eq!(
        cr["spec"]["extra"],
        json!({"anything": {"goes": [1, 2]}}),
        "{cr}"
    );
    assert_eq!(cr["spec"]["template"]["data"], json!({"k": "v"}), "{cr}");
    // Ignore: created, pruned, silent.
    let reply = api
        .post(
            &format!("{base}?fieldValidation=Ignore"),
            &with_unknown("ignore"),
        )
        .await;
    let cr = reply.expect(201);
    assert!(warnings(&reply).is_empty(), "{:?}", reply.headers);
    assert!(cr["spec"].get("colour").is_none(), "pruned: {cr}");
    let stored = api.get(&format!("{base}/ignore")).await.expect(200);
    assert!(
        stored["spec"].get("colour").is_none(),
        "pruned in storage: {stored}"
    );
}

// ---------------------------------------------------------------------------
// Validation of CRDs
// ---------------------------------------------------------------------------

#[tokio::test]
async fn invalid_crds_get_upstream_422_and_nothing_is_served() {
    let env = start().await;
    let api = Api::new(&env.server);
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let group = "bad.example.com";
    // Every CRD here has one version: upstream's conversion to the internal
    // form moves a schema that all versions share to spec.validation, so
    // that is where the errors point (apiextensions v1 conversion.go).
    let prefix = "spec.validation.openAPIV3Schema";

    // A property without a type: not structural.
    let mut crd = crontab_crd(group);
    crd["spec"]["versions"] = json!([crd["spec"]["versions"][0].clone()]);
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["loose"] =
        json!({"description": "no type"});
    let reply = api.post(crds, &crd).await;
    assert_invalid(
        "non-structural",
        &reply,
        &format!(
            "CustomResourceDefinition.apiextensions.k8s.io \"crontabs.{group}\" is invalid: \
             {prefix}.properties[spec].properties[loose].type: Required value: must not be empty \
             for specified object fields"
        ),
    );
    // uniqueItems is forbidden.
    let mut crd = crontab_crd(group);
    crd["spec"]["versions"] = json!([crd["spec"]["versions"][0].clone()]);
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["tags"]
        ["uniqueItems"] = json!(true);
    let reply = api.post(crds, &crd).await;
    assert_invalid(
        "uniqueItems",
        &reply,
        &format!(
            "CustomResourceDefinition.apiextensions.k8s.io \"crontabs.{group}\" is invalid: \
             {prefix}.properties[spec].properties[tags].uniqueItems: Forbidden: uniqueItems cannot \
             be set to true since the runtime complexity becomes quadratic"
        ),
    );
    // A CEL rule that does not compile.
    let mut crd = crontab_crd(group);
    crd["spec"]["versions"] = json!([crd["spec"]["versions"][0].clone()]);
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"] =
        json!([{"rule": "self.nosuchfield > 0"}]);
    let reply = api.post(crds, &crd).await;
    assert_eq!(reply.status, 422, "bad CEL: {}", reply.text());
    let status = reply.expect_status(422, "Invalid");
    let text = message(&status);
    assert!(
        text.starts_with(&format!(
            "CustomResourceDefinition.apiextensions.k8s.io \"crontabs.{group}\" is invalid: \
             {prefix}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: "
        )),
        "{text}"
    );
    assert!(
        text.contains("compilation failed: ERROR: <input>:1:5: undefined field 'nosuchfield'"),
        "{text}"
    );
    // None of them was stored or is served.
    api.get(&format!("{crds}/crontabs.{group}"))
        .await
        .expect_status(404, "NotFound");
    let r = api.get(&format!("/apis/{group}/v1")).await;
    assert_eq!(r.status, 404, "{}", r.text());
}

#[tokio::test]
async fn a_second_crd_with_the_same_names_reports_the_conflict() {
    let env = start().await;
    let api = Api::new(&env.server);
    let (_, k) = env.each().next().expect("a kubectl");
    let group = "conflict.example.com";
    let crd = |plural: &str, list_kind: &str| {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": plural, "singular": plural.trim_end_matches('s'),
                          "kind": "Widget", "listKind": list_kind},
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object",
                        "x-kubernetes-preserve-unknown-fields": true}}
                }]
            }
        })
    };
    ok(
        k,
        &env.server,
        &["create", "-f", &env.manifest(&crd("widgets", "WidgetList"))],
    );
    wait_established(k, &env, &format!("widgets.{group}"));
    ok(
        k,
        &env.server,
        &["create", "-f", &env.manifest(&crd("gizmos", "GizmoList"))],
    );
    let second = wait_condition(&api, &format!("gizmos.{group}"), "NamesAccepted", "False").await;
    let names = condition(&second, "NamesAccepted");
    assert_eq!(names["reason"], "KindConflict", "{second}");
    assert_eq!(names["message"], "\"Widget\" is already in use", "{second}");
    let established = condition(&second, "Established");
    assert_eq!(established["status"], "False", "{second}");
    assert_eq!(established["reason"], "NotAccepted", "{second}");
    assert_eq!(
        established["message"], "not all names are accepted",
        "{second}"
    );
    // It is not served.
    let r = api.get(&format!("/apis/{group}/v1/gizmos")).await;
    assert_eq!(r.status, 404, "{}", r.text());

    // Once the first is gone, the second is accepted and served.
    ok(
        k,
        &env.server,
        &["delete", "crd", &format!("widgets.{group}")],
    );
    wait_condition(&api, &format!("gizmos.{group}"), "Established", "True").await;
    api.get(&format!("/apis/{group}/v1/gizmos"))
        .await
        .expect(200);
}

// ---------------------------------------------------------------------------
// Updating a CRD
// ---------------------------------------------------------------------------

#[tokio::test]
async fn updating_a_crd_takes_effect_at_once() {
    let env = start().await;
    let api = Api::new(&env.server);
    let (_, k) = env.each().next().expect("a kubectl");
    let group = "update.example.com";
    let crd_name = format!("crontabs.{group}");
    let crd_path = format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd_name}");
    ok(
        k,
        &env.server,
        &["create", "-f", &env.manifest(&crontab_crd(group))],
    );
    wait_established(k, &env, &crd_name);

    // Created through the deprecated version, read through the storage
    // version: conversion None rewrites the apiVersion only.
    let beta = format!("/apis/{group}/v1beta1/namespaces/default/crontabs");
    let reply = api
        .post(&beta, &crontab(group, "v1beta1", "via-beta", valid_spec()))
        .await;
    let created = reply.expect(201);
    assert_eq!(
        created["apiVersion"],
        format!("{group}/v1beta1"),
        "{created}"
    );
    assert_eq!(
        warnings(&reply),
        vec![format!(
            "{group}/v1beta1 CronTab is deprecated; use {group}/v1 CronTab"
        )]
    );
    let v1 = api
        .get(&format!(
            "/apis/{group}/v1/namespaces/default/crontabs/via-beta"
        ))
        .await
        .expect(200);
    assert_eq!(v1["apiVersion"], format!("{group}/v1"), "{v1}");
    assert_eq!(v1["spec"], created["spec"], "{v1}");

    // A new printer column and v1beta1 no longer served.
    let mut crd = api.get(&crd_path).await.expect(200);
    crd["spec"]["versions"][0]["additionalPrinterColumns"]
        .as_array_mut()
        .expect("columns")
        .insert(
            0,
            json!({"name": "Command", "type": "string", "jsonPath": ".spec.command"}),
        );
    crd["spec"]["versions"][1]["served"] = json!(false);
    api.put(&crd_path, &crd).await.expect(200);
    let table = eventually("the new printer column", SETTLE, async || {
        let out = kubectl(k, &env.server, &["get", "crontabs", "-n", "default"]);
        let text = stdout(&out);
        if header(&text).get(1) == Some(&"COMMAND") {
            Ok(text)
        } else {
            Err(format!("{text}{}", stderr(&out)))
        }
    })
    .await;
    assert_eq!(
        header(&table),
        vec!["NAME", "COMMAND", "IMAGE", "REPLICAS", "SCHEDULE", "AGE"],
        "{table}"
    );
    wait_not_found(&api, &format!("{beta}/via-beta")).await;
    api.get(&format!(
        "/apis/{group}/v1/namespaces/default/crontabs/via-beta"
    ))
    .await
    .expect(200);
}

// ---------------------------------------------------------------------------
// Deleting a CRD
// ---------------------------------------------------------------------------

#[tokio::test]
async fn deleting_a_crd_removes_its_custom_resources_and_discovery_entry() {
    let env = start().await;
    let api = Api::new(&env.server);
    for (i, k) in env.each() {
        let group = format!("gone{i}.example.com");
        let crd_name = format!("crontabs.{group}");
        let ns = format!("gone-{i}");
        env.namespace(k, &ns);
        ok(
            k,
            &env.server,
            &["create", "-f", &env.manifest(&crontab_crd(&group))],
        );
        wait_established(k, &env, &crd_name);
        for name in ["a", "b", "c"] {
            env.create(k, &ns, &crontab(&group, "v1", name, valid_spec()));
        }
        // One with a finalizer nobody removes would block the deletion
        // forever upstream too; these have none.
        let groups = api.get("/apis").await.expect(200);
        assert!(groups.to_string().contains(&group), "{groups}");

        let out = ok(
            k,
            &env.server,
            &["delete", "crd", &crd_name, "--timeout=30s"],
        );
        assert_eq!(
            out,
            format!("customresourcedefinition.apiextensions.k8s.io \"{crd_name}\" deleted\n")
        );
        wait_not_found(
            &api,
            &format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd_name}"),
        )
        .await;
        // Not served, not discovered.
        let r = api
            .get(&format!("/apis/{group}/v1/namespaces/{ns}/crontabs"))
            .await;
        assert_eq!(r.status, 404, "{}", r.text());
        let groups = api.get("/apis").await.expect(200);
        assert!(!groups.to_string().contains(&group), "{groups}");
        // With fresh discovery (a cached one would still list crontabs and
        // get the 404 of the list, on a real cluster too).
        let fresh = env.dir.path().join(format!("fresh-cache-{i}"));
        let fresh = fresh.to_string_lossy();
        let out = kubectl(
            k,
            &env.server,
            &["get", "crontabs", "-n", &ns, "--cache-dir", &fresh],
        );
        assert!(!out.status.success(), "{}", stdout(&out));
        assert_eq!(
            stderr(&out),
            "error: the server doesn't have a resource type \"crontabs\"\n"
        );

        // Recreated, it is empty: its custom resources went with it.
        ok(
            k,
            &env.server,
            &["create", "-f", &env.manifest(&crontab_crd(&group))],
        );
        wait_established(k, &env, &crd_name);
        let list = api
            .get(&format!("/apis/{group}/v1/namespaces/{ns}/crontabs"))
            .await
            .expect(200);
        assert!(items(&list).is_empty(), "{list}");
        ok(
            k,
            &env.server,
            &["delete", "crd", &crd_name, "--timeout=30s"],
        );
    }
}

#[tokio::test]
async fn a_crd_being_deleted_is_terminating_until_its_custom_resources_are_gone() {
    let env = start().await;
    let api = Api::new(&env.server);
    let (_, k) = env.each().next().expect("a kubectl");
    let group = "slow.example.com";
    let crd_name = format!("crontabs.{group}");
    ok(
        k,
        &env.server,
        &["create", "-f", &env.manifest(&crontab_crd(group))],
    );
    wait_established(k, &env, &crd_name);
    // A custom resource with a finalizer keeps the CRD Terminating.
    let mut cr = crontab(group, "v1", "held", valid_spec());
    cr["metadata"]["finalizers"] = json!(["example.com/hold"]);
    let base = format!("/apis/{group}/v1/namespaces/default/crontabs");
    api.post(&base, &cr).await.expect(201);
    let crd_path = format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd_name}");
    let deleted = api.delete(&crd_path).await;
    assert!(
        deleted.status.is_success(),
        "{}: {}",
        deleted.status,
        deleted.text()
    );
    let crd = wait_condition(&api, &crd_name, "Terminating", "True").await;
    assert_eq!(
        crd["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"]),
        "{crd}"
    );
    // Upstream's DELETE marks it InstanceDeletionPending, then its
    // finalizer controller InstanceDeletionInProgress while it waits for
    // the custom resources to go.
    let terminating = condition(&crd, "Terminating");
    let expected = [
        (
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        ),
        (
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
        ),
    ];
    assert!(
        expected
            .iter()
            .any(|(r, m)| terminating["reason"] == *r && terminating["message"] == *m),
        "{crd}"
    );
    // Releasing the custom resource lets the CRD go.
    api.merge_patch(
        &format!("{base}/held"),
        &json!({"metadata": {"finalizers": null}}),
    )
    .await
    .expect(200);
    wait_not_found(&api, &crd_path).await;
}

// ---------------------------------------------------------------------------
// A real operator's CRDs: Argo CD
// ---------------------------------------------------------------------------

#[tokio::test]
async fn argo_cd_crds_are_established_and_accept_a_resource_of_each_kind() {
    let env = start().await;
    let (_, first) = env.each().next().expect("a kubectl");
    // Server-side apply, as Argo CD's install guide asks (the ApplicationSet
    // CRD is too big for client-side apply, see the next test).
    for file in [
        "appproject-crd.yaml",
        "application-crd.yaml",
        "applicationset-crd.yaml",
    ] {
        let out = ok(
            first,
            &env.server,
            &["apply", "--server-side", "-f", &argo_fixture(file)],
        );
        assert!(out.ends_with(" serverside-applied\n"), "{file}: {out}");
    }
    for crd in [
        "appprojects.argoproj.io",
        "applications.argoproj.io",
        "applicationsets.argoproj.io",
    ] {
        wait_established(first, &env, crd);
    }
    for (i, k) in env.each() {
        let ns = format!("argocd-{i}");
        env.namespace(k, &ns);
        for (file, what) in [
            ("appproject.yaml", "appproject.argoproj.io/team-a"),
            ("application.yaml", "application.argoproj.io/guestbook"),
            (
                "applicationset.yaml",
                "applicationset.argoproj.io/guestbook",
            ),
        ] {
            let out = ok(
                k,
                &env.server,
                &[
                    "create",
                    "-n",
                    &ns,
                    "-f",
                    &argo_fixture(&format!("examples/{file}")),
                ],
            );
            assert_eq!(out, format!("{what} created\n"));
        }
        // Their printer columns (Revision and Project have priority 10);
        // no status yet, so the cells are empty.
        let table = ok(k, &env.server, &["get", "applications", "-n", &ns]);
        assert_eq!(
            header(&table),
            ["NAME", "SYNC", "STATUS", "HEALTH", "STATUS"],
            "{table}"
        );
        assert_eq!(cells(&table)[1], ["guestbook"], "{table}");
        let app = get_json(k, &env.server, &["get", "app", "guestbook", "-n", &ns]);
        assert_eq!(app["spec"]["project"], "team-a", "{app}");
        assert_eq!(
            app["spec"]["source"]["helm"]["valuesObject"]["image"]["tag"], "0.2",
            "a preserved object keeps its content: {app}"
        );
        let appset = get_json(k, &env.server, &["get", "appset", "guestbook", "-n", &ns]);
        assert_eq!(
            appset["spec"]["generators"][0]["list"]["elements"][1]["cluster"], "engineering-prod",
            "{appset}"
        );
        let proj = get_json(k, &env.server, &["get", "appproj", "team-a", "-n", &ns]);
        assert_eq!(proj["spec"]["syncWindows"][0]["duration"], "1h", "{proj}");
    }
}

#[tokio::test]
async fn a_crd_over_256_kib_applies_server_side_and_fails_client_side_as_upstream() {
    let env = start().await;
    let api = Api::new(&env.server);
    let file = argo_fixture("applicationset-crd.yaml");
    let name = "applicationsets.argoproj.io";
    // Client-side apply stores the whole object in an annotation: upstream's
    // 256 KiB limit on annotations rejects it, and nothing is stored.
    for (_, k) in env.each() {
        let out = err(k, &env.server, &["apply", "-f", &file]);
        assert_eq!(
            out,
            format!(
                "The CustomResourceDefinition \"{name}\" is invalid: metadata.annotations: Too \
                 long: may not be more than 262144 bytes\n"
            )
        );
    }
    api.get(&format!(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
    ))
    .await
    .expect_status(404, "NotFound");
    // Server-side apply works (and again, unchanged).
    for (_, k) in env.each() {
        let out = ok(k, &env.server, &["apply", "--server-side", "-f", &file]);
        assert_eq!(
            out,
            format!("customresourcedefinition.apiextensions.k8s.io/{name} serverside-applied\n")
        );
        wait_established(k, &env, name);
    }
    // kubectl create works too (no annotation).
    let (_, k) = env.each().next().expect("a kubectl");
    ok(k, &env.server, &["delete", "crd", name, "--timeout=30s"]);
    let out = ok(k, &env.server, &["create", "-f", &file]);
    assert_eq!(
        out,
        format!("customresourcedefinition.apiextensions.k8s.io/{name} created\n")
    );
    wait_established(k, &env, name);
}

// ---------------------------------------------------------------------------
// Skein's own API: federation.skein.io
// ---------------------------------------------------------------------------

const FEDERATION_CRDS: [&str; 4] = [
    "clusters.federation.skein.io",
    "placements.federation.skein.io",
    "clusterplacements.federation.skein.io",
    "federations.federation.skein.io",
];

#[tokio::test]
async fn federation_types_are_served_on_a_fresh_server() {
    let env = start().await;
    let api = Api::new(&env.server);
    for (_, k) in env.each() {
        for crd in FEDERATION_CRDS {
            wait_established(k, &env, crd);
        }
        // Empty lists, with the printer columns of the manifests.
        let out = kubectl(k, &env.server, &["get", "clusters"]);
        assert!(
            out.status.success(),
            "{}",
            failure("succeed", k, &env.server, &[], &out)
        );
        assert_eq!(stderr(&out), "No resources found\n");
        let out = kubectl(k, &env.server, &["get", "placements", "-A"]);
        assert!(
            out.status.success(),
            "{}",
            failure("succeed", k, &env.server, &[], &out)
        );
        assert_eq!(stderr(&out), "No resources found\n");

        let out = ok(k, &env.server, &["explain", "cluster.spec"]);
        assert!(out.contains("GROUP:      federation.skein.io"), "{out}");
        assert!(out.contains("KIND:       Cluster"), "{out}");
        assert!(out.contains("VERSION:    v1alpha1"), "{out}");
        assert!(out.contains("FIELD: spec <Object>"), "{out}");
        for field in ["kubeconfigSecretRef", "taints", "region", "zones"] {
            assert!(
                out.lines().any(|l| l.trim_start().starts_with(field)),
                "{field}: {out}"
            );
        }
        let out = ok(
            k,
            &env.server,
            &["api-resources", "--api-group", "federation.skein.io"],
        );
        for (plural, short, namespaced, kind) in [
            ("clusterplacements", "fcpl", "false", "ClusterPlacement"),
            ("clusters", "fc", "false", "Cluster"),
            ("federations", "fed", "false", "Federation"),
            ("placements", "fpl", "true", "Placement"),
        ] {
            assert!(
                cells(&out).iter().any(|r| r
                    == &vec![
                        plural,
                        short,
                        "federation.skein.io/v1alpha1",
                        namespaced,
                        kind
                    ]),
                "{plural}: {out}"
            );
        }
    }

    // A Cluster is shown with NAME READY VERSION REGION NODES AGE.
    let (_, k) = env.each().next().expect("a kubectl");
    let cluster = json!({
        "apiVersion": "federation.skein.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "eu-1"},
        "spec": {"kubeconfigSecretRef": {"namespace": "kube-system", "name": "eu-1"}}
    });
    let created = api
        .post("/apis/federation.skein.io/v1alpha1/clusters", &cluster)
        .await
        .expect(201);
    assert_eq!(
        created["spec"]["kubeconfigSecretRef"]["key"], "kubeconfig",
        "the default key: {created}"
    );
    api.merge_patch(
        "/apis/federation.skein.io/v1alpha1/clusters/eu-1/status",
        &json!({"status": {
            "conditions": [{"type": "Ready", "status": "True", "reason": "Ready",
                            "lastTransitionTime": "2026-01-01T00:00:00Z"}],
            "kubernetesVersion": "v1.33.1", "region": "eu", "zones": ["eu-a"], "nodes": 3
        }}),
    )
    .await
    .expect(200);
    // The Cluster controller probes it: its Secret does not exist, so the
    // controller's verdict (Ready False) replaces the one written above
    // within a probe period; the inventory written above stays.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let table = loop {
        let table = ok(k, &env.server, &["get", "clusters"]);
        if cells(&table).get(1).and_then(|r| r.get(1)) == Some(&"False")
            || std::time::Instant::now() > deadline
        {
            break table;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert_eq!(
        header(&table),
        vec!["NAME", "READY", "VERSION", "REGION", "NODES", "AGE"],
        "{table}"
    );
    assert_eq!(
        &cells(&table)[1][..5],
        &["eu-1", "False", "v1.33.1", "eu", "3"],
        "{table}"
    );
    let reason = api
        .get("/apis/federation.skein.io/v1alpha1/clusters/eu-1")
        .await
        .expect(200)["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
        .map(|c| c["reason"].clone());
    assert_eq!(reason, Some(json!("InvalidCredentials")), "{table}");
    // The Federation is a singleton named default (a CEL rule).
    let reply = api
        .post(
            "/apis/federation.skein.io/v1alpha1/federations",
            &json!({"apiVersion": "federation.skein.io/v1alpha1", "kind": "Federation",
                    "metadata": {"name": "other"}}),
        )
        .await;
    assert_invalid(
        "a second Federation",
        &reply,
        "Federation.federation.skein.io \"other\" is invalid: <nil>: Invalid value: \"object\": \
         the Federation is a singleton named 'default'",
    );
}

#[tokio::test]
async fn federation_crds_cannot_be_changed_or_deleted() {
    let env = start().await;
    let api = Api::new(&env.server);
    let (_, k) = env.each().next().expect("a kubectl");
    for crd in FEDERATION_CRDS {
        wait_established(k, &env, crd);
        let path = format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}");
        let before = api.get(&path).await.expect(200);

        let reply = api.delete(&path).await;
        let status = reply.expect_status(403, "Forbidden");
        assert!(
            message(&status).contains(crd),
            "a 403 names the CRD: {status}"
        );
        let reply = api
            .merge_patch(&path, &json!({"spec": {"names": {"shortNames": ["x"]}}}))
            .await;
        let status = reply.expect_status(403, "Forbidden");
        assert!(
            message(&status).contains(crd),
            "a 403 names the CRD: {status}"
        );
        let mut changed = before.clone();
        changed["metadata"]["labels"] = json!({"mine": "now"});
        let reply = api.put(&path, &changed).await;
        reply.expect_status(403, "Forbidden");

        let after = api.get(&path).await.expect(200);
        assert_eq!(after["spec"], before["spec"], "{crd} changed");
        assert_eq!(
            after["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"],
            "{crd} was written"
        );
    }
    // kubectl shows the 403.
    let out = err(
        k,
        &env.server,
        &["delete", "crd", "clusters.federation.skein.io"],
    );
    assert!(
        out.starts_with("Error from server (Forbidden): "),
        "kubectl delete of a federation CRD: {out}"
    );
    // The types are still served.
    api.get("/apis/federation.skein.io/v1alpha1/clusters")
        .await
        .expect(200);
}

// ---------------------------------------------------------------------------
// Hostile custom resources
// ---------------------------------------------------------------------------

#[tokio::test]
async fn oversized_and_deeply_nested_custom_resources_get_a_clean_4xx() {
    let env = start().await;
    let api = Api::new(&env.server);
    let (_, k) = env.each().next().expect("a kubectl");
    let group = "hostile.example.com";
    ok(
        k,
        &env.server,
        &["create", "-f", &env.manifest(&crontab_crd(group))],
    );
    wait_established(k, &env, &format!("crontabs.{group}"));
    let base = format!("/apis/{group}/v1/namespaces/default/crontabs");

    // Nested 100,000 levels deep inside a preserved field.
    let depth = 100_000;
    let mut body = String::from(
        r#"{"apiVersion":"hostile.example.com/v1","kind":"CronTab","metadata":{"name":"deep"},"spec":{"cronSpec":"* * * * *","image":"a:1","extra":{"x":"#,
    );
    body.push_str(&"[".repeat(depth));
    body.push_str(&"]".repeat(depth));
    body.push_str("}}}");
    let reply = api
        .raw(
            reqwest::Method::POST,
            &base,
            "application/json",
            body.into_bytes(),
        )
        .await;
    assert!(
        reply.status.is_client_error(),
        "a deeply nested body: {}: {}",
        reply.status,
        reply.text()
    );
    reply.expect_client_error();

    // Over the storage limit (but under the request limit).
    let mut big = crontab(group, "v1", "big", valid_spec());
    big["spec"]["extra"] = json!({"blob": "x".repeat(2 * 1024 * 1024)});
    let reply = api.post(&base, &big).await;
    assert!(
        reply.status.is_client_error(),
        "a 2 MiB custom resource: {}: {}",
        reply.status,
        reply.text()
    );
    reply.expect_client_error();
    // Over the request limit.
    big["spec"]["extra"] = json!({"blob": "x".repeat(4 * 1024 * 1024)});
    let reply = api.post(&base, &big).await;
    assert_eq!(reply.status, 413, "a 4 MiB body: {}", reply.text());

    // Nothing stored; the server still answers.
    let list = api.get(&base).await.expect(200);
    assert!(items(&list).is_empty(), "{list}");
    let ready = api.get("/readyz").await;
    assert_eq!(ready.status, 200, "{}", ready.text());
}
