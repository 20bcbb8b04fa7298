//! `--tls-min-version` and `--tls-cipher-suites`: kube-apiserver's flag
//! values (Go's `crypto/tls` names) mapped onto rustls.
//!
//! Only TLS 1.2 and 1.3 exist (rustls implements nothing older), and only
//! AEAD suites with forward secrecy: Go names of the CBC, RSA key
//! exchange, RC4 and 3DES suites, which kube-apiserver still accepts, are a
//! startup error here. TLS 1.3 suites are always enabled (Go does not let
//! them be configured either); the list picks the TLS 1.2 suites.

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::crypto::ring::{cipher_suite, default_provider};
use rustls::{SupportedCipherSuite, SupportedProtocolVersion};

/// The validated policy.
#[derive(Debug, Clone)]
pub struct TlsPolicy {
    /// Protocol versions offered.
    pub versions: Vec<&'static SupportedProtocolVersion>,
    /// The crypto provider with the chosen suites.
    pub provider: Arc<CryptoProvider>,
}

/// Go's name → the rustls suite, for the suites Skein accepts.
const SECURE: &[(&str, SupportedCipherSuite)] = &[
    (
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        cipher_suite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        cipher_suite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        cipher_suite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
    (
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305",
        cipher_suite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
    (
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        cipher_suite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    ),
    (
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        cipher_suite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    ),
    (
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        cipher_suite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
    (
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305",
        cipher_suite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
];

/// TLS 1.3 suite names Go knows; accepted and ignored (always on).
const TLS13: &[&str] = &[
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
];

/// Go's insecure or CBC suite names, which kube-apiserver takes and Skein
/// refuses.
const INSECURE: &[&str] = &[
    "TLS_RSA_WITH_RC4_128_SHA",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
];

impl TlsPolicy {
    /// Validates the two flags; the error is the startup message.
    pub fn from_flags(min_version: &str, suites: &[String]) -> Result<TlsPolicy, String> {
        let versions: Vec<&'static SupportedProtocolVersion> = match min_version {
            "" | "VersionTLS12" => vec![&rustls::version::TLS13, &rustls::version::TLS12],
            "VersionTLS13" => vec![&rustls::version::TLS13],
            "VersionTLS10" | "VersionTLS11" => {
                return Err(format!(
                    "--tls-min-version {min_version} is insecure and not supported: use VersionTLS12 or VersionTLS13"
                ));
            }
            other => {
                return Err(format!(
                    "--tls-min-version: unknown tls version {other:?} (use VersionTLS12 or VersionTLS13)"
                ));
            }
        };
        let base = default_provider();
        let mut chosen: Vec<SupportedCipherSuite> = Vec::new();
        for name in suites.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
            if let Some((_, suite)) = SECURE.iter().find(|(n, _)| *n == name) {
                if !chosen.contains(suite) {
                    chosen.push(*suite);
                }
            } else if TLS13.contains(&name) {
                continue;
            } else if INSECURE.contains(&name) {
                return Err(format!(
                    "--tls-cipher-suites: cipher suite {name} is insecure and not supported by skein (supported: {})",
                    supported()
                ));
            } else {
                return Err(format!(
                    "--tls-cipher-suites: Cipher suite {name} not supported or doesn't exist (supported: {})",
                    supported()
                ));
            }
        }
        let provider = if chosen.is_empty() {
            base
        } else {
            let mut cipher_suites: Vec<SupportedCipherSuite> = base
                .cipher_suites
                .iter()
                .filter(|s| s.version() == &rustls::version::TLS13)
                .copied()
                .collect();
            cipher_suites.extend(chosen);
            CryptoProvider {
                cipher_suites,
                ..base
            }
        };
        Ok(TlsPolicy {
            versions,
            provider: Arc::new(provider),
        })
    }
}

impl Default for TlsPolicy {
    fn default() -> Self {
        TlsPolicy {
            versions: vec![&rustls::version::TLS13, &rustls::version::TLS12],
            provider: Arc::new(default_provider()),
        }
    }
}

fn supported() -> String {
    let mut names: Vec<&str> = SECURE.iter().map(|(n, _)| *n).collect();
    names.extend(TLS13);
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_tls12_and_up() {
        let p = TlsPolicy::from_flags("VersionTLS12", &[]).expect("default");
        assert_eq!(p.versions.len(), 2);
        let p = TlsPolicy::from_flags("VersionTLS13", &[]).expect("1.3");
        assert_eq!(p.versions, [&rustls::version::TLS13]);
    }

    #[test]
    fn suites_are_mapped_and_insecure_ones_refused() {
        let p = TlsPolicy::from_flags(
            "VersionTLS12",
            &[
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".into(),
                "TLS_AES_128_GCM_SHA256".into(),
            ],
        )
        .expect("valid");
        let tls12: Vec<_> = p
            .provider
            .cipher_suites
            .iter()
            .filter(|s| s.version() == &rustls::version::TLS12)
            .collect();
        assert_eq!(
            tls12,
            [&cipher_suite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]
        );
        let err = TlsPolicy::from_flags("VersionTLS12", &["TLS_RSA_WITH_AES_128_CBC_SHA".into()])
            .expect_err("insecure");
        assert!(
            err.starts_with(
                "--tls-cipher-suites: cipher suite TLS_RSA_WITH_AES_128_CBC_SHA is insecure"
            ),
            "{err}"
        );
        let err = TlsPolicy::from_flags("VersionTLS12", &["NOPE".into()]).expect_err("unknown");
        assert!(
            err.contains("Cipher suite NOPE not supported or doesn't exist"),
            "{err}"
        );
        assert!(TlsPolicy::from_flags("VersionTLS11", &[]).is_err());
        assert!(TlsPolicy::from_flags("VersionTLS14", &[]).is_err());
    }
}
