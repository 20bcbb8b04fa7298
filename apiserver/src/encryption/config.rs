//! `apiserver.config.k8s.io/v1` `EncryptionConfiguration`: the file behind
//! `--encryption-provider-config`, parsed (YAML or JSON) and validated with
//! upstream's field paths and messages, so a bad file stops the server with
//! the text kube-apiserver prints:
//! `error while parsing encryption provider configuration file "F": error
//! while parsing file: resources[0].providers[0].aescbc.keys[0].secret:
//! Invalid value: "REDACTED": secret is not of the expected length, got 8,
//! expected one of [16 24 32]`.

use std::path::Path;

use base64::Engine;
use serde::Deserialize;
use skein_admission::selector::go::{aggregate, go_quote, invalid_string, invalid_strings};

/// The file as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EncryptionConfiguration {
    /// Must be `apiserver.config.k8s.io/v1`.
    #[serde(default)]
    pub api_version: String,
    /// Must be `EncryptionConfiguration`.
    #[serde(default)]
    pub kind: String,
    /// Resource lists with their providers, first match wins.
    #[serde(default)]
    pub resources: Vec<ResourceConfiguration>,
}

/// One `resources[]` entry.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ResourceConfiguration {
    /// `secrets`, `deployments.apps`, `*.` (core), `*.apps`, `*.*`.
    #[serde(default)]
    pub resources: Vec<String>,
    /// Writes use the first; reads try them all.
    #[serde(default)]
    pub providers: Vec<ProviderConfiguration>,
}

/// One provider: exactly one field set.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ProviderConfiguration {
    /// AES-GCM keys.
    pub aesgcm: Option<KeysConfiguration>,
    /// AES-CBC keys.
    pub aescbc: Option<KeysConfiguration>,
    /// NaCl secretbox keys.
    pub secretbox: Option<KeysConfiguration>,
    /// Plaintext.
    pub identity: Option<serde_json::Value>,
    /// KMS plugins: recognised, refused (Skein has no KMS client).
    pub kms: Option<serde_json::Value>,
}

/// The keys of one keyed provider.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct KeysConfiguration {
    /// Named keys, first used for writes.
    #[serde(default)]
    pub keys: Vec<Key>,
}

/// One named key; `secret` is base64.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Key {
    /// The name in the stored prefix.
    #[serde(default)]
    pub name: String,
    /// Base64 of the key bytes.
    #[serde(default)]
    pub secret: String,
}

/// Which algorithm a validated provider uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// `aesgcm`.
    AesGcm,
    /// `aescbc`.
    AesCbc,
    /// `secretbox`.
    Secretbox,
}

impl Algorithm {
    /// The name in `k8s:enc:<name>:v1:`.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::AesGcm => "aesgcm",
            Algorithm::AesCbc => "aescbc",
            Algorithm::Secretbox => "secretbox",
        }
    }
}

/// A validated provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provider {
    /// Keyed encryption: `(name, key bytes)` in file order.
    Keyed(Algorithm, Vec<(String, Vec<u8>)>),
    /// Plaintext.
    Identity,
}

/// A validated `resources[]` entry: group/resource pairs (`*` wildcards
/// kept) and providers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// `(group, resource)`, core group as `""`.
    pub resources: Vec<(String, String)>,
    /// Providers in file order.
    pub providers: Vec<Provider>,
}

/// Reads and validates the file. The error is the whole message
/// kube-apiserver prints for it.
pub fn load(path: &Path) -> Result<Vec<Rule>, String> {
    let wrap = |m: String| {
        format!(
            "error while parsing encryption provider configuration file {}: {m}",
            go_quote(&path.display().to_string())
        )
    };
    let text = std::fs::read_to_string(path).map_err(|e| wrap(e.to_string()))?;
    parse(&text).map_err(wrap)
}

/// Parses and validates the file's text (see [`load`]).
pub fn parse(text: &str) -> Result<Vec<Rule>, String> {
    let config: EncryptionConfiguration = serde_saphyr::from_str(text)
        .map_err(|e| format!("error decoding encryption provider configuration: {e}"))?;
    if config.kind != "EncryptionConfiguration"
        || config.api_version != "apiserver.config.k8s.io/v1"
    {
        return Err(format!(
            "no kind {} is registered for version {}",
            go_quote(&config.kind),
            go_quote(&config.api_version)
        ));
    }
    validate(&config).map_err(|e| format!("error while parsing file: {e}"))
}

const AES_KEY_SIZES: &[usize] = &[16, 24, 32];
const SECRETBOX_KEY_SIZES: &[usize] = &[32];

fn required(path: &str, detail: &str) -> String {
    format!("{path}: Required value: {detail}")
}

fn redacted(path: &str, detail: &str) -> String {
    format!("{path}: Invalid value: \"REDACTED\": {detail}")
}

/// Upstream's `ValidateEncryptionConfiguration` (no KMS), then the
/// conversion into [`Rule`]s.
pub fn validate(c: &EncryptionConfiguration) -> Result<Vec<Rule>, String> {
    let mut errs = Vec::new();
    if c.resources.is_empty() {
        errs.push(required("resources", "at least one resources is required"));
    }
    let mut rules = Vec::new();
    for (i, conf) in c.resources.iter().enumerate() {
        let r = format!("resources[{i}].resources");
        let p = format!("resources[{i}].providers");
        if conf.resources.is_empty() {
            errs.push(required(&r, &format!("at least one {r} is required")));
        }
        errs.extend(resource_overlap(&conf.resources, &r));
        errs.extend(resource_names(&conf.resources, &r));
        if conf.providers.is_empty() {
            errs.push(required(&p, &format!("at least one {p} is required")));
        }
        let mut providers = Vec::new();
        for (j, provider) in conf.providers.iter().enumerate() {
            let path = format!("{p}[{j}]");
            let set = [
                provider.kms.is_some(),
                provider.aesgcm.is_some(),
                provider.aescbc.is_some(),
                provider.secretbox.is_some(),
                provider.identity.is_some(),
            ]
            .iter()
            .filter(|b| **b)
            .count();
            if set == 0 {
                errs.push(format!("{path}: Invalid value: {}: provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity", provider_shown(provider)));
                continue;
            }
            if set > 1 {
                errs.push(format!("{path}: Invalid value: {}: more than one provider specified in a single element, should split into different list elements", provider_shown(provider)));
                continue;
            }
            let keyed = |alg: Algorithm,
                         keys: &KeysConfiguration,
                         sizes: &[usize],
                         errs: &mut Vec<String>| {
                let kp = format!("{path}.{}.keys", alg.name());
                validate_keys(&keys.keys, &kp, sizes, errs).map(|k| Provider::Keyed(alg, k))
            };
            let built = if let Some(k) = &provider.aesgcm {
                keyed(Algorithm::AesGcm, k, AES_KEY_SIZES, &mut errs)
            } else if let Some(k) = &provider.aescbc {
                keyed(Algorithm::AesCbc, k, AES_KEY_SIZES, &mut errs)
            } else if let Some(k) = &provider.secretbox {
                keyed(Algorithm::Secretbox, k, SECRETBOX_KEY_SIZES, &mut errs)
            } else if provider.identity.is_some() {
                Some(Provider::Identity)
            } else {
                errs.push(format!(
                    "{path}.kms: Invalid value: \"kms\": KMS providers are not supported by skein"
                ));
                None
            };
            providers.extend(built);
        }
        rules.push(Rule {
            resources: conf
                .resources
                .iter()
                .map(|s| parse_group_resource(s))
                .collect(),
            providers,
        });
    }
    match aggregate(errs) {
        Some(e) => Err(e),
        None => Ok(rules),
    }
}

/// Go's `%#v` of a provider is long and unhelpful; upstream prints the
/// struct. We print the keys that were set.
fn provider_shown(p: &ProviderConfiguration) -> String {
    let mut set = Vec::new();
    for (name, on) in [
        ("KMS", p.kms.is_some()),
        ("AESGCM", p.aesgcm.is_some()),
        ("AESCBC", p.aescbc.is_some()),
        ("Secretbox", p.secretbox.is_some()),
        ("Identity", p.identity.is_some()),
    ] {
        if on {
            set.push(name);
        }
    }
    format!("apiserver.ProviderConfiguration{{{}}}", set.join(", "))
}

fn validate_keys(
    keys: &[Key],
    path: &str,
    sizes: &[usize],
    errs: &mut Vec<String>,
) -> Option<Vec<(String, Vec<u8>)>> {
    if keys.is_empty() {
        errs.push(required(path, "at least one keys is required"));
        return None;
    }
    let before = errs.len();
    let mut out = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let kp = format!("{path}[{i}]");
        if key.name.is_empty() {
            errs.push(required(
                &format!("{kp}.name"),
                "name is a mandatory field for a key",
            ));
        }
        if key.secret.is_empty() {
            errs.push(required(
                &format!("{kp}.secret"),
                "secret is a mandatory field for a key",
            ));
            continue;
        }
        let Ok(secret) = base64::engine::general_purpose::STANDARD.decode(&key.secret) else {
            errs.push(redacted(
                &format!("{kp}.secret"),
                "secrets must be base64 encoded",
            ));
            continue;
        };
        if !sizes.contains(&secret.len()) {
            let shown: Vec<String> = sizes.iter().map(usize::to_string).collect();
            errs.push(redacted(
                &format!("{kp}.secret"),
                &format!(
                    "secret is not of the expected length, got {}, expected one of [{}]",
                    secret.len(),
                    shown.join(" ")
                ),
            ));
            continue;
        }
        out.push((key.name.clone(), secret));
    }
    (errs.len() == before).then_some(out)
}

/// Go's `schema.ParseGroupResource`: split at the first dot.
fn parse_group_resource(s: &str) -> (String, String) {
    match s.split_once('.') {
        Some((resource, group)) => (group.to_string(), resource.to_string()),
        None => (String::new(), s.to_string()),
    }
}

fn resource_overlap(resources: &[String], path: &str) -> Vec<String> {
    if resources.len() < 2 {
        return Vec::new();
    }
    let parsed: Vec<(String, String)> = resources.iter().map(|s| parse_group_resource(s)).collect();
    let (mut duplicate, mut overlap) = (false, false);
    for (i, r1) in parsed.iter().enumerate() {
        for (j, r2) in parsed.iter().enumerate() {
            if i == j {
                continue;
            }
            if r1 == r2 && !duplicate {
                duplicate = true;
                continue;
            }
            if overlap {
                continue;
            }
            if r1.0 == "*" && r1.1 == "*" {
                overlap = true;
                continue;
            }
            if r1.0 != r2.0 {
                continue;
            }
            if r1.1 == "*" || r2.1 == "*" {
                overlap = true;
            }
        }
    }
    let mut errs = Vec::new();
    if duplicate {
        errs.push(invalid_strings(
            path,
            resources,
            "the same resource cannot be specified multiple times",
        ));
    }
    if overlap {
        errs.push(invalid_strings(path, resources, "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"));
    }
    errs
}

fn resource_names(resources: &[String], path: &str) -> Vec<String> {
    let mut errs = Vec::new();
    for (j, res) in resources.iter().enumerate() {
        let jj = format!("{path}[{j}]");
        let (group, resource) = parse_group_resource(res);
        let detail = if res.to_lowercase() != *res {
            "resource name should not contain capital letters"
        } else if res == "*" {
            "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"
        } else if matches!(
            res.as_str(),
            "apiserveripinfo" | "serviceipallocations" | "servicenodeportallocations"
        ) {
            "resources which do not have REST API/s cannot be encrypted"
        } else if group == "events.k8s.io" {
            "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file"
        } else if group == "extensions" {
            "'extensions' group has been removed and cannot be used for encryption"
        } else if group == "*" && resource != "*" {
            "encrypting the same resource across groups is not supported"
        } else {
            continue;
        };
        errs.push(invalid_string(&jj, res, detail));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets, configmaps]
    providers:
      - aesgcm:
          keys:
            - name: key1
              secret: c2VjcmV0IGlzIHNlY3VyZQ==
      - identity: {}
"#;

    #[test]
    fn parses_a_good_file() {
        let rules = parse(GOOD).expect("valid");
        assert_eq!(rules.len(), 1);
        assert_eq!(
            rules[0].resources,
            [
                (String::new(), "secrets".to_string()),
                (String::new(), "configmaps".to_string())
            ]
        );
        assert_eq!(
            rules[0].providers,
            [
                Provider::Keyed(
                    Algorithm::AesGcm,
                    vec![("key1".into(), b"secret is secure".to_vec())]
                ),
                Provider::Identity
            ]
        );
    }

    #[test]
    fn short_key_is_upstreams_message() {
        let text = GOOD.replace("c2VjcmV0IGlzIHNlY3VyZQ==", "cGFzc3dvcmQ=");
        assert_eq!(
            parse(&text).expect_err("short key"),
            "error while parsing file: resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: \"REDACTED\": secret is not of the expected length, got 8, expected one of [16 24 32]"
        );
    }

    #[test]
    fn several_errors_aggregate() {
        let text = r#"
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: ["*", Secrets]
    providers:
      - {}
      - secretbox:
          keys:
            - name: ""
              secret: "!!"
"#;
        assert_eq!(
            parse(text).expect_err("bad"),
            "error while parsing file: [resources[0].resources: Invalid value: []string{\"*\", \"Secrets\"}: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked, resources[0].resources[0]: Invalid value: \"*\": use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources, resources[0].resources[1]: Invalid value: \"Secrets\": resource name should not contain capital letters, resources[0].providers[0]: Invalid value: apiserver.ProviderConfiguration{}: provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity, resources[0].providers[1].secretbox.keys[0].name: Required value: name is a mandatory field for a key, resources[0].providers[1].secretbox.keys[0].secret: Invalid value: \"REDACTED\": secrets must be base64 encoded]"
        );
    }

    #[test]
    fn overlap_and_empty() {
        let text = r#"
apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets, "*."]
    providers: []
"#;
        assert_eq!(
            parse(text).expect_err("bad"),
            "error while parsing file: [resources[0].resources: Invalid value: []string{\"secrets\", \"*.\"}: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked, resources[0].providers: Required value: at least one resources[0].providers is required]"
        );
        assert!(parse("apiVersion: v1\nkind: Foo\n").is_err());
    }
}
