//! The member's kubeconfig as `skein join` stores it: one context, its
//! cluster and its user, with every file the kubeconfig names read and
//! inlined — what `kubectl config view --flatten --minify` prints, plus a
//! `tokenFile` turned into `token` (the federation never reads its own file
//! system for a member's credentials).
//!
//! [`flatten_minify`] is pure: the caller hands in how to read a file.

use base64::Engine;
use serde_json::{Map, Value};

/// Why a kubeconfig cannot be stored for a member.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KubeconfigError {
    /// A context, cluster or user is missing, or there is no context to use.
    #[error("{0}")]
    Malformed(String),
    /// The user needs something the federation will not do (run a program).
    #[error("{0}")]
    Unsupported(String),
    /// A file the kubeconfig names cannot be read.
    #[error("cannot read {field} file {path:?}: {why}")]
    File {
        /// The kubeconfig field (`client-certificate`).
        field: String,
        /// The path it names.
        path: String,
        /// The reader's error.
        why: String,
    },
}

/// The fields that name a file, with the field the data goes into and
/// whether the data is base64-encoded there (`*-data`) or inlined as text
/// (`token`).
const CLUSTER_FILES: &[(&str, &str)] = &[("certificate-authority", "certificate-authority-data")];
const USER_FILES: &[(&str, &str)] = &[
    ("client-certificate", "client-certificate-data"),
    ("client-key", "client-key-data"),
];

/// `config` (a kubeconfig as JSON, paths already absolute) reduced to
/// `context` (else its current-context) with the files it names inlined;
/// the result's current-context is that context, so it needs no
/// `spec.context`. `read` reads a file's bytes.
///
/// # Errors
///
/// [`KubeconfigError::Malformed`] when the context, its cluster or its user
/// is missing; [`KubeconfigError::Unsupported`] for `exec` plugins and
/// `auth-provider`s; [`KubeconfigError::File`] when a file cannot be read.
pub fn flatten_minify(
    config: &Value,
    context: Option<&str>,
    read: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
) -> Result<Value, KubeconfigError> {
    let context_name = match context.filter(|c| !c.is_empty()) {
        Some(c) => c.to_owned(),
        None => config
            .get("current-context")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| {
                KubeconfigError::Malformed(
                    "the kubeconfig has no current-context; name one with --context".into(),
                )
            })?,
    };
    let ctx = named(config, "contexts", &context_name)
        .and_then(|c| c.get("context"))
        .ok_or_else(|| {
            KubeconfigError::Malformed(format!(
                "context {context_name:?} not found in the kubeconfig"
            ))
        })?;
    let cluster_name = ctx.get("cluster").and_then(Value::as_str).unwrap_or("");
    let mut cluster = named(config, "clusters", cluster_name)
        .and_then(|c| c.get("cluster"))
        .cloned()
        .ok_or_else(|| {
            KubeconfigError::Malformed(format!(
                "cluster {cluster_name:?} (of context {context_name:?}) not found in the kubeconfig"
            ))
        })?;
    inline(&mut cluster, CLUSTER_FILES, read)?;
    let mut out_ctx = Map::new();
    out_ctx.insert("cluster".into(), Value::from(cluster_name));
    if let Some(ns) = ctx.get("namespace").filter(|v| v.is_string()) {
        out_ctx.insert("namespace".into(), ns.clone());
    }
    let mut users = Vec::new();
    if let Some(user_name) = ctx
        .get("user")
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty())
    {
        let mut user = named(config, "users", user_name)
            .and_then(|u| u.get("user"))
            .cloned()
            .ok_or_else(|| {
                KubeconfigError::Malformed(format!(
                    "user {user_name:?} (of context {context_name:?}) not found in the kubeconfig"
                ))
            })?;
        if let Some(exec) = user.get("exec").filter(|v| !v.is_null()) {
            let command = exec.get("command").and_then(Value::as_str).unwrap_or("");
            return Err(KubeconfigError::Unsupported(format!(
                "user {user_name:?} authenticates with an exec plugin ({command}), which the federation cannot run; use a kubeconfig with a client certificate or a token"
            )));
        }
        if let Some(provider) = user.get("auth-provider").filter(|v| !v.is_null()) {
            let name = provider.get("name").and_then(Value::as_str).unwrap_or("");
            return Err(KubeconfigError::Unsupported(format!(
                "user {user_name:?} authenticates with the {name:?} auth-provider, which the federation cannot run; use a kubeconfig with a client certificate or a token"
            )));
        }
        inline(&mut user, USER_FILES, read)?;
        if let Some(obj) = user.as_object_mut()
            && let Some(path) = obj.remove("tokenFile")
            && let Some(path) = path.as_str()
            && !obj.contains_key("token")
        {
            let bytes = read(path).map_err(|why| KubeconfigError::File {
                field: "tokenFile".into(),
                path: path.to_owned(),
                why,
            })?;
            // client-go trims the file's whitespace.
            let token = String::from_utf8_lossy(&bytes).trim().to_owned();
            obj.insert("token".into(), Value::from(token));
        }
        out_ctx.insert("user".into(), Value::from(user_name));
        users.push(serde_json::json!({"name": user_name, "user": user}));
    }
    Ok(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": cluster}],
        "users": users,
        "contexts": [{"name": context_name, "context": out_ctx}],
        "current-context": context_name,
        "preferences": {},
    }))
}

/// The server URL of a (minified) kubeconfig's current context, for
/// messages.
pub fn server(config: &Value) -> &str {
    config
        .pointer("/clusters/0/cluster/server")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The entry named `name` of list `list` (`contexts`, `clusters`, `users`).
fn named<'a>(config: &'a Value, list: &str, name: &str) -> Option<&'a Value> {
    config
        .get(list)?
        .as_array()?
        .iter()
        .find(|e| e.get("name").and_then(Value::as_str) == Some(name))
}

/// Replaces each `(file field, data field)` of `entry` by the file's
/// base64-encoded bytes (a `*-data` already there wins, as in client-go).
fn inline(
    entry: &mut Value,
    fields: &[(&str, &str)],
    read: &mut dyn FnMut(&str) -> Result<Vec<u8>, String>,
) -> Result<(), KubeconfigError> {
    let Some(obj) = entry.as_object_mut() else {
        return Ok(());
    };
    for (file_field, data_field) in fields {
        let Some(path) = obj.remove(*file_field) else {
            continue;
        };
        let Some(path) = path.as_str().filter(|p| !p.is_empty()) else {
            continue;
        };
        if obj.get(*data_field).is_some_and(|d| !d.is_null()) {
            continue;
        }
        let bytes = read(path).map_err(|why| KubeconfigError::File {
            field: (*file_field).to_owned(),
            path: path.to_owned(),
            why,
        })?;
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        obj.insert((*data_field).to_owned(), Value::from(data));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn config() -> Value {
        json!({
            "apiVersion": "v1", "kind": "Config",
            "current-context": "a",
            "clusters": [
                {"name": "ca", "cluster": {"server": "https://a:6443", "certificate-authority": "/pki/ca.crt"}},
                {"name": "cb", "cluster": {"server": "https://b:6443", "insecure-skip-tls-verify": true}},
            ],
            "users": [
                {"name": "ua", "user": {"client-certificate": "/pki/a.crt", "client-key": "/pki/a.key"}},
                {"name": "ub", "user": {"tokenFile": "/pki/token"}},
                {"name": "ux", "user": {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "aws"}}},
            ],
            "contexts": [
                {"name": "a", "context": {"cluster": "ca", "user": "ua", "namespace": "team"}},
                {"name": "b", "context": {"cluster": "cb", "user": "ub"}},
                {"name": "x", "context": {"cluster": "cb", "user": "ux"}},
                {"name": "y", "context": {"cluster": "gone", "user": "ub"}},
            ],
        })
    }

    fn files(path: &str) -> Result<Vec<u8>, String> {
        match path {
            "/pki/ca.crt" => Ok(b"CA".to_vec()),
            "/pki/a.crt" => Ok(b"CERT".to_vec()),
            "/pki/a.key" => Ok(b"KEY".to_vec()),
            "/pki/token" => Ok(b"  s3cret\n".to_vec()),
            _ => Err("No such file or directory (os error 2)".into()),
        }
    }

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    #[test]
    fn the_current_context_is_kept_with_its_files_inlined() {
        let out = flatten_minify(&config(), None, &mut files).expect("flattens");
        assert_eq!(
            out,
            json!({
                "apiVersion": "v1", "kind": "Config",
                "clusters": [{"name": "ca", "cluster": {"server": "https://a:6443", "certificate-authority-data": b64("CA")}}],
                "users": [{"name": "ua", "user": {"client-certificate-data": b64("CERT"), "client-key-data": b64("KEY")}}],
                "contexts": [{"name": "a", "context": {"cluster": "ca", "user": "ua", "namespace": "team"}}],
                "current-context": "a",
                "preferences": {},
            })
        );
        assert_eq!(server(&out), "https://a:6443");
        // What the federation will accept.
        let text = out.to_string();
        assert!(skein_apiserver::member_client::credentials::parse(&text, None).is_ok());
    }

    #[test]
    fn a_named_context_becomes_current_and_token_files_are_read() {
        let out = flatten_minify(&config(), Some("b"), &mut files).expect("flattens");
        assert_eq!(out["current-context"], "b");
        assert_eq!(
            out["users"],
            json!([{"name": "ub", "user": {"token": "s3cret"}}])
        );
        assert_eq!(out["clusters"][0]["name"], "cb");
        let text = out.to_string();
        assert!(skein_apiserver::member_client::credentials::parse(&text, None).is_ok());
    }

    #[test]
    fn exec_plugins_missing_entries_and_unreadable_files_are_errors() {
        assert_eq!(
            flatten_minify(&config(), Some("x"), &mut files),
            Err(KubeconfigError::Unsupported(
                "user \"ux\" authenticates with an exec plugin (aws), which the federation cannot run; use a kubeconfig with a client certificate or a token".into()
            ))
        );
        assert_eq!(
            flatten_minify(&config(), Some("nope"), &mut files),
            Err(KubeconfigError::Malformed(
                "context \"nope\" not found in the kubeconfig".into()
            ))
        );
        assert!(matches!(
            flatten_minify(&config(), Some("y"), &mut files),
            Err(KubeconfigError::Malformed(m)) if m.starts_with("cluster \"gone\"")
        ));
        let mut none = |_: &str| -> Result<Vec<u8>, String> { Err("denied".into()) };
        assert_eq!(
            flatten_minify(&config(), None, &mut none)
                .err()
                .map(|e| e.to_string()),
            Some("cannot read certificate-authority file \"/pki/ca.crt\": denied".into())
        );
        let mut no_current = config();
        no_current["current-context"] = json!("");
        assert!(matches!(
            flatten_minify(&no_current, None, &mut files),
            Err(KubeconfigError::Malformed(m)) if m.contains("--context")
        ));
    }

    /// Kubeconfigs over a few names, each field present or not.
    fn arb_config() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let name = || prop::sample::select(vec!["a", "b", "c"]);
        let file = || {
            prop::option::of(prop::sample::select(vec![
                "/pki/ca.crt",
                "/pki/a.crt",
                "/pki/a.key",
                "/pki/token",
                "/missing",
            ]))
        };
        let cluster = (name(), file(), any::<bool>()).prop_map(|(n, ca, data)| {
            let mut c = json!({"server": "https://m:6443"});
            if let Some(ca) = ca {
                c["certificate-authority"] = json!(ca);
            }
            if data {
                c["certificate-authority-data"] = json!("Q0E=");
            }
            json!({"name": n, "cluster": c})
        });
        let user = (name(), file(), file(), file(), any::<bool>()).prop_map(
            |(n, cert, key, token, exec)| {
                let mut u = json!({});
                for (k, v) in [
                    ("client-certificate", cert),
                    ("client-key", key),
                    ("tokenFile", token),
                ] {
                    if let Some(v) = v {
                        u[k] = json!(v);
                    }
                }
                if exec {
                    u["exec"] = json!({"command": "aws"});
                }
                json!({"name": n, "user": u})
            },
        );
        let context = (name(), name(), prop::option::of(name()))
            .prop_map(|(n, c, u)| json!({"name": n, "context": {"cluster": c, "user": u}}));
        (
            prop::collection::vec(cluster, 0..3),
            prop::collection::vec(user, 0..3),
            prop::collection::vec(context, 0..3),
            prop::option::of(name()),
        )
            .prop_map(|(clusters, users, contexts, current)| {
                json!({"clusters": clusters, "users": users, "contexts": contexts, "current-context": current})
            })
    }

    proptest::proptest! {
        #[test]
        fn what_is_stored_names_no_file_and_one_context(
            config in arb_config(),
            ctx in proptest::option::of(proptest::sample::select(vec!["a", "b", "x"])),
        ) {
            if let Ok(out) = flatten_minify(&config, ctx, &mut files) {
                let text = out.to_string();
                for field in ["certificate-authority\"", "client-certificate\"", "client-key\"", "tokenFile", "exec"] {
                    proptest::prop_assert!(!text.contains(field), "{field} in {text}");
                }
                proptest::prop_assert_eq!(out["contexts"].as_array().map(Vec::len), Some(1));
                proptest::prop_assert_eq!(&out["current-context"], &out["contexts"][0]["name"]);
                proptest::prop_assert!(skein_apiserver::member_client::credentials::parse(&text, None).is_ok(), "{text}");
            }
        }
    }
}
