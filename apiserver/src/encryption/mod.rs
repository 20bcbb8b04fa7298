//! Encryption at rest (`--encryption-provider-config`), as kube-apiserver's
//! `EncryptionConfiguration`.
//!
//! - `config.rs`: the file, validated with upstream's messages.
//! - `provider.rs`: the aesgcm, aescbc, secretbox and identity transformers
//!   in upstream's byte layouts.
//! - `store.rs`: [`EncryptingStore`], a [`skein_storage::Store`] decorator
//!   that seals values on the way in and opens them on the way out for the
//!   configured resources. It sits between the backend and everything
//!   else (registry, watch cache, collector), so every reader and the
//!   watch path see plaintext and every byte on disk or in etcd is sealed;
//!   the storage crate stays ignorant of it.
//!
//! Writes use the first provider's first key; reads pick the transformer
//! whose prefix the value carries (`k8s:enc:<provider>:v1:<key>:`), in file
//! order, identity last resort. A value read with any other than the first
//! transformer is *stale*: the registry then writes it again even when an
//! update changes nothing (upstream's GuaranteedUpdate), which is what
//! `kubectl get secrets -A -o json | kubectl replace -f -` and
//! `skein storage rewrite` rely on to re-encrypt with a new key.

pub mod config;
pub mod provider;
pub mod store;

use std::path::Path;

pub use config::{Algorithm, Provider, Rule};
pub use provider::Transformer;
pub use store::EncryptingStore;

/// The transformers of one `resources[]` entry, flattened in file order.
pub struct Chain {
    transformers: Vec<Transformer>,
}

/// What a read found.
pub struct Opened {
    /// The plaintext.
    pub data: Vec<u8>,
    /// Read with another transformer than the one writes use.
    pub stale: bool,
}

impl Chain {
    /// Seals with the first transformer.
    pub fn seal(&self, key: &str, data: &[u8]) -> Result<Vec<u8>, String> {
        match self.transformers.first() {
            Some(t) => t.seal(key, data),
            None => Err("no providers configured".into()),
        }
    }

    /// Opens with the transformer whose prefix `data` carries (upstream's
    /// prefixTransformers: an identity that fails is skipped, other
    /// failures are collected).
    pub fn open(&self, key: &str, data: &[u8]) -> Result<Opened, String> {
        let mut errs = Vec::new();
        for (i, t) in self.transformers.iter().enumerate() {
            if !data.starts_with(t.prefix()) {
                continue;
            }
            match t.open(key, data) {
                Ok(plain) => {
                    return Ok(Opened {
                        data: plain,
                        stale: i != 0,
                    });
                }
                Err(_) if t.prefix().is_empty() => continue,
                Err(e) => errs.push(e),
            }
        }
        match skein_admission::selector::go::aggregate(errs) {
            Some(e) => Err(e),
            None => Err("no matching prefix found".into()),
        }
    }
}

/// The loaded configuration: which chain applies to which storage key.
pub struct Encryption {
    /// `(group, resource)` patterns of each rule, with their chain.
    rules: Vec<(Vec<(String, String)>, Chain)>,
}

impl Encryption {
    /// Loads `--encryption-provider-config`; the error is the startup
    /// message.
    pub fn load(path: &Path) -> Result<Encryption, String> {
        Encryption::from_rules(&config::load(path)?)
    }

    /// Builds the transformers of validated rules.
    pub fn from_rules(rules: &[Rule]) -> Result<Encryption, String> {
        let mut out = Vec::new();
        for rule in rules {
            let mut transformers = Vec::new();
            for p in &rule.providers {
                transformers.extend(Transformer::from_provider(p)?);
            }
            out.push((rule.resources.clone(), Chain { transformers }));
        }
        Ok(Encryption { rules: out })
    }

    /// The chain for a group and resource: an exact entry first, then
    /// `*.<group>`, then `*.*`; the first rule naming it wins (upstream's
    /// override resolution).
    pub fn chain_for(&self, group: &str, resource: &str) -> Option<&Chain> {
        let find = |g: &str, r: &str| {
            self.rules
                .iter()
                .find(|(res, _)| res.iter().any(|(rg, rr)| rg == g && rr == r))
                .map(|(_, c)| c)
        };
        find(group, resource)
            .or_else(|| find(group, "*"))
            .or_else(|| find("*", "*"))
    }

    /// The chain for a storage key `/registry/<group>/<resource>/…`
    /// (`core` is the legacy group); `None` stores the value as it is.
    pub fn chain_for_key(&self, key: &str) -> Option<&Chain> {
        let rest = key.strip_prefix("/registry/")?;
        let mut parts = rest.splitn(3, '/');
        let (group, resource, _) = (parts.next()?, parts.next()?, parts.next()?);
        let group = if group == "core" { "" } else { group };
        self.chain_for(group, resource)
    }

    /// The `(group, resource)` patterns of every rule (what
    /// `skein storage rewrite` walks).
    pub fn resources(&self) -> impl Iterator<Item = &(String, String)> {
        self.rules.iter().flat_map(|(r, _)| r.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyed(alg: Algorithm, name: &str, byte: u8) -> Provider {
        Provider::Keyed(alg, vec![(name.into(), vec![byte; 32])])
    }

    #[test]
    fn lookup_prefers_exact_then_group_then_all() {
        let enc = Encryption::from_rules(&[
            Rule {
                resources: vec![("".into(), "*".into())],
                providers: vec![Provider::Identity],
            },
            Rule {
                resources: vec![("".into(), "secrets".into())],
                providers: vec![keyed(Algorithm::AesGcm, "a", 1)],
            },
            Rule {
                resources: vec![("*".into(), "*".into())],
                providers: vec![keyed(Algorithm::Secretbox, "b", 2)],
            },
        ])
        .expect("rules");
        let k = "/registry/core/secrets/ns/x";
        let sealed = enc
            .chain_for_key(k)
            .expect("secrets")
            .seal(k, b"v")
            .expect("seal");
        assert!(sealed.starts_with(b"k8s:enc:aesgcm:v1:a:"));
        let k = "/registry/core/configmaps/ns/x";
        let sealed = enc
            .chain_for_key(k)
            .expect("core")
            .seal(k, b"v")
            .expect("seal");
        assert_eq!(sealed, b"v");
        let k = "/registry/apps/deployments/ns/x";
        let sealed = enc
            .chain_for_key(k)
            .expect("all")
            .seal(k, b"v")
            .expect("seal");
        assert!(sealed.starts_with(b"k8s:enc:secretbox:v1:b:"));
        assert!(enc.chain_for_key("/elsewhere/x").is_none());
    }

    #[test]
    fn reads_every_key_and_marks_old_ones_stale() {
        let old = Encryption::from_rules(&[Rule {
            resources: vec![("".into(), "secrets".into())],
            providers: vec![keyed(Algorithm::AesGcm, "old", 1)],
        }])
        .expect("old");
        let rotated = Encryption::from_rules(&[Rule {
            resources: vec![("".into(), "secrets".into())],
            providers: vec![
                keyed(Algorithm::AesCbc, "new", 3),
                keyed(Algorithm::AesGcm, "old", 1),
                Provider::Identity,
            ],
        }])
        .expect("rotated");
        let k = "/registry/core/secrets/ns/x";
        let chain = rotated.chain_for_key(k).expect("chain");
        let by_old = old
            .chain_for_key(k)
            .expect("chain")
            .seal(k, b"v")
            .expect("seal");
        let opened = chain.open(k, &by_old).expect("old key reads");
        assert_eq!(
            (opened.data.as_slice(), opened.stale),
            (b"v".as_slice(), true)
        );
        let by_new = chain.seal(k, b"v").expect("seal");
        assert!(by_new.starts_with(b"k8s:enc:aescbc:v1:new:"));
        assert!(!chain.open(k, &by_new).expect("new").stale);
        let plain = chain.open(k, b"{}").expect("identity reads plaintext");
        assert!(plain.stale);
        // Without identity, plaintext is an error; so is an unknown key.
        let strict = old.chain_for_key(k).expect("chain");
        assert_eq!(
            strict.open(k, b"{}").err().as_deref(),
            Some("no matching prefix found")
        );
        assert_eq!(
            strict.open(k, &by_new).err().as_deref(),
            Some("no matching prefix found")
        );
    }
}
