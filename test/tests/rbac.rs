//! Authorization end to end (`--authorization-mode=RBAC`, the default): a
//! real server, token users bound through real RBAC objects, real kubectl
//! 1.35 (and 1.32 for the cases that differ by client): the acceptance
//! matrix of issue 14.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use skein_tests::cli;
use skein_tests::kubectl_binaries;
use skein_tests::server::Server;

/// `vera` views, `eddie` edits and `adam` administers namespace `a`;
/// `ivan` may impersonate users; `nobody` has nothing.
const TOKENS: &str = "vera-token,vera,2001\neddie-token,eddie,2002\nadam-token,adam,2003\n\
                      ivan-token,ivan,2004\nnobody-token,nobody,2005\n";

struct Setup {
    server: Server,
    _dir: tempfile::TempDir,
}

impl Setup {
    fn user(&self, name: &str) -> PathBuf {
        self.server.token_kubeconfig(name, &format!("{name}-token"))
    }
}

fn arg(p: &Path) -> String {
    p.display().to_string()
}

/// Asks the server (as admin) whether `user` may `verb` `resource` (named
/// `name`, "" for any) in `ns` until it says yes: the RBAC cache follows
/// writes by a watch.
async fn wait_for(
    s: &Server,
    user: &str,
    verb: &str,
    group: &str,
    resource: &str,
    ns: &str,
    name: &str,
) {
    let client = s.client(true);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let body = json!({
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": user, "groups": ["system:authenticated"],
                     "resourceAttributes": {"verb": verb, "group": group, "resource": resource, "namespace": ns, "name": name}},
        });
        let r = client
            .post(s.url("/apis/authorization.k8s.io/v1/subjectaccessreviews"))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .expect("request");
        assert_eq!(r.status(), StatusCode::CREATED);
        let v: Value = serde_json::from_slice(&r.bytes().await.expect("body")).expect("json");
        if v["status"]["allowed"] == true {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{user} {verb} {resource} in {ns}: {v}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("tempdir");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, TOKENS).expect("write tokens");
    let flag = format!("--token-auth-file={}", tokens.display());
    let server = Server::start(&dir.path().join("data"), &[&flag]).await;
    let k = &kubectl_binaries()[0];
    for args in [
        &["create", "namespace", "a"][..],
        &["create", "namespace", "b"],
        &[
            "create",
            "rolebinding",
            "vera-view",
            "--clusterrole=view",
            "--user=vera",
            "-n",
            "a",
        ],
        &[
            "create",
            "rolebinding",
            "eddie-edit",
            "--clusterrole=edit",
            "--user=eddie",
            "-n",
            "a",
        ],
        &[
            "create",
            "rolebinding",
            "adam-admin",
            "--clusterrole=admin",
            "--user=adam",
            "-n",
            "a",
        ],
        &[
            "create",
            "clusterrole",
            "impersonator",
            "--verb=impersonate",
            "--resource=users",
        ],
        &[
            "create",
            "clusterrolebinding",
            "ivan-impersonates",
            "--clusterrole=impersonator",
            "--user=ivan",
        ],
    ] {
        cli::ok(k, &server, args);
    }
    wait_for(&server, "vera", "list", "apps", "deployments", "a", "").await;
    wait_for(&server, "eddie", "create", "apps", "deployments", "a", "").await;
    // `admin` holds `edit` through aggregation (the controller fills it).
    wait_for(&server, "adam", "create", "apps", "deployments", "a", "").await;
    wait_for(&server, "ivan", "impersonate", "", "users", "", "").await;
    Setup { server, _dir: dir }
}

#[tokio::test]
async fn view_lists_where_bound_and_is_forbidden_elsewhere() {
    let s = setup().await;
    let vera = s.user("vera");
    for k in &kubectl_binaries() {
        let out = cli::ok(
            k,
            &s.server,
            &["--kubeconfig", &arg(&vera), "get", "deployments", "-n", "a"],
        );
        assert_eq!(out, "", "{out}");
        let err = cli::err(
            k,
            &s.server,
            &["--kubeconfig", &arg(&vera), "get", "deployments", "-n", "b"],
        );
        assert!(
            err.contains("Error from server (Forbidden): deployments.apps is forbidden: User \"vera\" cannot list resource \"deployments\" in API group \"apps\" in the namespace \"b\""),
            "{err}"
        );
        let err = cli::err(k, &s.server, &["--kubeconfig", &arg(&vera), "get", "nodes"]);
        assert!(
            err.contains("nodes is forbidden: User \"vera\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"),
            "{err}"
        );
        // view cannot write.
        let err = cli::err(
            k,
            &s.server,
            &[
                "--kubeconfig",
                &arg(&vera),
                "create",
                "configmap",
                "x",
                "-n",
                "a",
            ],
        );
        assert!(
            err.contains("configmaps is forbidden: User \"vera\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"a\""),
            "{err}"
        );
    }
    // The Status body, as upstream.
    let r = s
        .server
        .client(false)
        .get(s.server.url("/apis/apps/v1/namespaces/b/deployments/web"))
        .bearer_auth("vera-token")
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let body: Value = serde_json::from_slice(&r.bytes().await.expect("body")).expect("json");
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "deployments.apps \"web\" is forbidden: User \"vera\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"b\"",
               "reason": "Forbidden", "details": {"name": "web", "group": "apps", "kind": "deployments"}, "code": 403})
    );
}

#[tokio::test]
async fn edit_creates_deployments_but_not_roles() {
    let s = setup().await;
    let eddie = s.user("eddie");
    let k = &kubectl_binaries()[0];
    let out = cli::ok(
        k,
        &s.server,
        &[
            "--kubeconfig",
            &arg(&eddie),
            "create",
            "deployment",
            "web",
            "--image=nginx",
            "-n",
            "a",
        ],
    );
    assert_eq!(out.trim(), "deployment.apps/web created");
    let err = cli::err(
        k,
        &s.server,
        &[
            "--kubeconfig",
            &arg(&eddie),
            "create",
            "role",
            "r",
            "--verb=get",
            "--resource=pods",
            "-n",
            "a",
        ],
    );
    assert!(
        err.contains("roles.rbac.authorization.k8s.io is forbidden: User \"eddie\" cannot create resource \"roles\" in API group \"rbac.authorization.k8s.io\" in the namespace \"a\""),
        "{err}"
    );
    for k in &kubectl_binaries() {
        let out = cli::ok(
            k,
            &s.server,
            &[
                "--kubeconfig",
                &arg(&eddie),
                "auth",
                "can-i",
                "create",
                "deployments",
                "-n",
                "a",
            ],
        );
        assert_eq!(out.trim(), "yes");
        let out = cli::kubectl(
            k,
            &s.server,
            &[
                "--kubeconfig",
                &arg(&eddie),
                "auth",
                "can-i",
                "create",
                "roles",
                "-n",
                "a",
            ],
        );
        assert_eq!(cli::stdout(&out).trim(), "no", "{}", cli::stderr(&out));
        assert_eq!(out.status.code(), Some(1));
    }
}

#[tokio::test]
async fn can_i_list_agrees_with_the_bindings() {
    let s = setup().await;
    let vera = s.user("vera");
    for k in &kubectl_binaries() {
        let table = cli::ok(
            k,
            &s.server,
            &[
                "--kubeconfig",
                &arg(&vera),
                "auth",
                "can-i",
                "--list",
                "-n",
                "a",
            ],
        );
        let row = |resource: &str| {
            table
                .lines()
                .find(|l| l.split_whitespace().next() == Some(resource))
                .unwrap_or_else(|| panic!("no {resource} row:\n{table}"))
                .trim_end()
                .to_string()
        };
        assert!(
            row("deployments.apps").ends_with("[get list watch]"),
            "{table}"
        );
        assert!(
            row("selfsubjectaccessreviews.authorization.k8s.io").ends_with("[create]"),
            "{table}"
        );
        assert!(table.contains("[/api/*]"), "{table}");
        // Nothing that view does not grant.
        assert!(!table.contains("secrets"), "{table}");
        // In another namespace, only what every user has.
        let table = cli::ok(
            k,
            &s.server,
            &[
                "--kubeconfig",
                &arg(&vera),
                "auth",
                "can-i",
                "--list",
                "-n",
                "b",
            ],
        );
        assert!(!table.contains("deployments.apps"), "{table}");
        assert!(
            table.contains("selfsubjectreviews.authentication.k8s.io"),
            "{table}"
        );
    }
}

#[tokio::test]
async fn nobody_binds_what_they_do_not_hold() {
    let s = setup().await;
    let adam = s.user("adam");
    let k = &kubectl_binaries()[0];
    // admin in `a` may hand out view there...
    let out = cli::ok(
        k,
        &s.server,
        &[
            "--kubeconfig",
            &arg(&adam),
            "create",
            "rolebinding",
            "zed-view",
            "--clusterrole=view",
            "--user=zed",
            "-n",
            "a",
        ],
    );
    assert_eq!(
        out.trim(),
        "rolebinding.rbac.authorization.k8s.io/zed-view created"
    );
    // ...but not cluster-admin, which it does not hold.
    let err = cli::err(
        k,
        &s.server,
        &[
            "--kubeconfig",
            &arg(&adam),
            "create",
            "rolebinding",
            "me-admin",
            "--clusterrole=cluster-admin",
            "--user=adam",
            "-n",
            "a",
        ],
    );
    assert!(
        err.contains("rolebindings.rbac.authorization.k8s.io \"me-admin\" is forbidden: user \"adam\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}"),
        "{err}"
    );
    // Nor a Role with more than it holds.
    let err = cli::err(
        k,
        &s.server,
        &[
            "--kubeconfig",
            &arg(&adam),
            "create",
            "role",
            "nodes",
            "--verb=list",
            "--resource=nodes",
            "-n",
            "a",
        ],
    );
    assert!(
        err.contains("roles.rbac.authorization.k8s.io \"nodes\" is forbidden: user \"adam\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"nodes\"], Verbs:[\"list\"]}"),
        "{err}"
    );
    // A cluster-wide binding is not adam's to make at all.
    let err = cli::err(
        k,
        &s.server,
        &[
            "--kubeconfig",
            &arg(&adam),
            "create",
            "clusterrolebinding",
            "me",
            "--clusterrole=cluster-admin",
            "--user=adam",
        ],
    );
    assert!(
        err.contains("clusterrolebindings.rbac.authorization.k8s.io is forbidden: User \"adam\" cannot create resource \"clusterrolebindings\""),
        "{err}"
    );
    // The `bind` verb on cluster-admin lifts the check.
    cli::ok(
        k,
        &s.server,
        &[
            "create",
            "role",
            "binder",
            "--verb=bind",
            "--resource=clusterroles",
            "--resource-name=cluster-admin",
            "-n",
            "a",
        ],
    );
    cli::ok(
        k,
        &s.server,
        &[
            "create",
            "rolebinding",
            "adam-binder",
            "--role=binder",
            "--user=adam",
            "-n",
            "a",
        ],
    );
    wait_for(
        &s.server,
        "adam",
        "bind",
        "rbac.authorization.k8s.io",
        "clusterroles",
        "a",
        "cluster-admin",
    )
    .await;
    cli::ok(
        k,
        &s.server,
        &[
            "--kubeconfig",
            &arg(&adam),
            "create",
            "rolebinding",
            "me-admin",
            "--clusterrole=cluster-admin",
            "--user=adam",
            "-n",
            "a",
        ],
    );
}

#[tokio::test]
async fn impersonation_needs_the_verb() {
    let s = setup().await;
    let vera = s.user("vera");
    let ivan = s.user("ivan");
    for k in &kubectl_binaries() {
        let err = cli::err(
            k,
            &s.server,
            &[
                "--kubeconfig",
                &arg(&vera),
                "get",
                "pods",
                "-n",
                "a",
                "--as=carol",
            ],
        );
        assert!(
            err.contains("users \"carol\" is forbidden: User \"vera\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"),
            "{err}"
        );
        let out = cli::ok(
            k,
            &s.server,
            &[
                "--kubeconfig",
                &arg(&ivan),
                "auth",
                "whoami",
                "-o",
                "json",
                "--as=carol",
            ],
        );
        let review: Value = serde_json::from_str(&out).expect("json");
        assert_eq!(
            review["status"]["userInfo"]["username"], "carol",
            "{review}"
        );
        assert_eq!(
            review["status"]["userInfo"]["groups"],
            json!(["system:authenticated"]),
            "{review}"
        );
        // Groups need their own grant.
        let err = cli::err(
            k,
            &s.server,
            &[
                "--kubeconfig",
                &arg(&ivan),
                "get",
                "pods",
                "-n",
                "a",
                "--as=carol",
                "--as-group=admins",
            ],
        );
        assert!(
            err.contains("groups \"admins\" is forbidden: User \"ivan\" cannot impersonate resource \"groups\" in API group \"\" at the cluster scope"),
            "{err}"
        );
        // The impersonated user gets carol's rights, not ivan's.
        let err = cli::err(
            k,
            &s.server,
            &[
                "--kubeconfig",
                &arg(&ivan),
                "get",
                "pods",
                "-n",
                "a",
                "--as=carol",
            ],
        );
        assert!(
            err.contains("User \"carol\" cannot list resource \"pods\""),
            "{err}"
        );
    }
    // The raw 403.
    let r = s
        .server
        .client(false)
        .get(s.server.url("/api/v1/namespaces/a/pods"))
        .bearer_auth("nobody-token")
        .header("Impersonate-User", "system:serviceaccount:a:default")
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let body: Value = serde_json::from_slice(&r.bytes().await.expect("body")).expect("json");
    assert_eq!(
        body["message"],
        "serviceaccounts \"default\" is forbidden: User \"nobody\" cannot impersonate resource \"serviceaccounts\" in API group \"\" in the namespace \"a\""
    );
    assert_eq!(
        body["details"],
        json!({"name": "default", "kind": "serviceaccounts"})
    );
}

#[tokio::test]
async fn always_allow_mode_lets_everyone_in() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, TOKENS).expect("write tokens");
    let flag = format!("--token-auth-file={}", tokens.display());
    let server = Server::start(
        &dir.path().join("data"),
        &[&flag, "--authorization-mode=AlwaysAllow"],
    )
    .await;
    let r = server
        .client(false)
        .get(server.url("/api/v1/nodes"))
        .bearer_auth("nobody-token")
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), StatusCode::OK);
}
