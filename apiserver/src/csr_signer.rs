//! The `kubernetes.io/kube-apiserver-client` CSR signer (upstream
//! kube-controller-manager's `csrsigning` for that signer name): signs an
//! approved CertificateSigningRequest with Skein's CA, which is also the CA
//! that verifies client certificates, so the issued certificate logs in as
//! the CSR's subject (CN the user, each O a group).
//!
//! Upstream's checks for this signer: the usages must include `client auth`
//! and may add only `digital signature` and `key encipherment`; otherwise
//! the CSR gets the `Failed` condition, reason `SignerValidationFailure`,
//! with upstream's message (`invalid usage for client certificate: …`,
//! `missing required usage for client certificate: client auth`).
//!
//! The certificate keeps the request's subject exactly (every O, in order:
//! the TBSCertificate is written here in DER with `yasna`, since rcgen's
//! distinguished names hold one value per attribute type) and its public
//! key; subject alternative names are not copied. It has exactly the
//! requested usages, basic constraints `CA:FALSE`, the CA's key id,
//! starts 5 minutes in the past (upstream's backdate) and lasts
//! `spec.expirationSeconds` (at least 600) bounded by
//! `--cluster-signing-duration` and by the CA's own expiry.

use rcgen::{KeyPair, SigningKey};
use serde_json::Value;
use time::{Duration, OffsetDateTime};
use x509_parser::prelude::FromDer;
use yasna::models::{GeneralizedTime, ObjectIdentifier, UTCTime};

/// The signer name this module serves.
pub const SIGNER_NAME: &str = "kubernetes.io/kube-apiserver-client";

/// Upstream's smallest `spec.expirationSeconds`.
pub const MIN_EXPIRATION_SECONDS: i64 = 600;

/// Signs client certificates with the cluster CA.
pub struct ClientSigner {
    key: KeyPair,
    /// The CA certificate's subject, DER: the issued certificates' issuer.
    ca_subject: Vec<u8>,
    /// The CA's subject key identifier, if it has one.
    ca_key_id: Option<Vec<u8>>,
    /// The signature algorithm OID for the CA key.
    sig_alg: &'static [u64],
    ca_not_after: OffsetDateTime,
    max: Duration,
}

impl std::fmt::Debug for ClientSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientSigner")
            .field("ca_not_after", &self.ca_not_after)
            .field("max", &self.max)
            .finish()
    }
}

/// Why a CSR is not signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignError {
    /// The request fails the signer's checks: the CSR gets `Failed` with
    /// this message.
    Failed(String),
    /// Signing itself failed (a server problem).
    Internal(String),
}

impl ClientSigner {
    /// A signer with the CA in PEM; certificates last at most `max`.
    pub fn new(
        ca_cert_pem: &str,
        ca_key_pem: &str,
        max: std::time::Duration,
    ) -> Result<Self, String> {
        let key = KeyPair::from_pem(ca_key_pem).map_err(|e| e.to_string())?;
        let sig_alg: &'static [u64] = if key.algorithm() == &rcgen::PKCS_ECDSA_P256_SHA256 {
            &[1, 2, 840, 10045, 4, 3, 2]
        } else if key.algorithm() == &rcgen::PKCS_ECDSA_P384_SHA384 {
            &[1, 2, 840, 10045, 4, 3, 3]
        } else {
            return Err("the CA key must be ECDSA P-256 or P-384".into());
        };
        let der = x509_parser::pem::parse_x509_pem(ca_cert_pem.as_bytes())
            .map_err(|e| e.to_string())?
            .1
            .contents;
        let (_, cert) = x509_parser::parse_x509_certificate(&der).map_err(|e| e.to_string())?;
        let ca_not_after = cert.validity().not_after.to_datetime();
        let ca_subject = cert.subject().as_raw().to_vec();
        let ca_key_id = cert
            .extensions()
            .iter()
            .find_map(|e| match e.parsed_extension() {
                x509_parser::extensions::ParsedExtension::SubjectKeyIdentifier(id) => {
                    Some(id.0.to_vec())
                }
                _ => None,
            });
        let max = Duration::try_from(max).map_err(|e| e.to_string())?;
        Ok(ClientSigner {
            key,
            ca_subject,
            ca_key_id,
            sig_alg,
            ca_not_after,
            max,
        })
    }

    /// Signs the CSR object `csr` at `now`: the PEM certificate for
    /// `status.certificate`.
    pub fn sign(&self, csr: &Value, now: OffsetDateTime) -> Result<String, SignError> {
        let usages: Vec<&str> = csr
            .pointer("/spec/usages")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        check_usages(&usages).map_err(SignError::Failed)?;
        let request = csr
            .pointer("/spec/request")
            .and_then(Value::as_str)
            .unwrap_or("");
        let unparsable = |why: String| SignError::Failed(format!("unable to parse csr: {why}"));
        let pem = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, request)
            .map_err(|e| unparsable(e.to_string()))?;
        let der = x509_parser::pem::parse_x509_pem(&pem)
            .map_err(|e| unparsable(e.to_string()))?
            .1
            .contents;
        let (_, req) = x509_parser::certification_request::X509CertificationRequest::from_der(&der)
            .map_err(|e| unparsable(e.to_string()))?;
        req.verify_signature()
            .map_err(|e| unparsable(format!("bad signature: {e}")))?;
        let info = &req.certification_request_info;

        let requested = csr
            .pointer("/spec/expirationSeconds")
            .and_then(Value::as_i64)
            .map(|s| Duration::seconds(s.max(MIN_EXPIRATION_SECONDS)));
        let ttl = requested.map_or(self.max, |r| r.min(self.max));
        let not_before = now - Duration::minutes(5);
        let not_after = (now + ttl).min(self.ca_not_after);
        let mut serial = *uuid::Uuid::new_v4().as_bytes();
        serial[0] &= 0x7f;
        serial[0] |= 0x01;

        let tbs = yasna::construct_der(|w| {
            w.write_sequence(|w| {
                w.next()
                    .write_tagged(yasna::Tag::context(0), |w| w.write_u8(2));
                w.next().write_bigint_bytes(&serial, true);
                self.write_sig_alg(w.next());
                w.next().write_der(&self.ca_subject);
                w.next().write_sequence(|w| {
                    write_time(w.next(), not_before);
                    write_time(w.next(), not_after);
                });
                w.next().write_der(info.subject.as_raw());
                w.next().write_der(info.subject_pki.raw);
                w.next().write_tagged(yasna::Tag::context(3), |w| {
                    w.write_sequence(|w| self.write_extensions(w, &usages));
                });
            })
        });
        let signature = self
            .key
            .sign(&tbs)
            .map_err(|e| SignError::Internal(e.to_string()))?;
        let cert = yasna::construct_der(|w| {
            w.write_sequence(|w| {
                w.next().write_der(&tbs);
                self.write_sig_alg(w.next());
                w.next().write_bitvec_bytes(&signature, signature.len() * 8);
            })
        });
        Ok(pem_certificate(&cert))
    }

    fn write_sig_alg(&self, w: yasna::DERWriter<'_>) {
        w.write_sequence(|w| {
            w.next()
                .write_oid(&ObjectIdentifier::from_slice(self.sig_alg));
        });
    }

    fn write_extensions(&self, w: &mut yasna::DERWriterSeq<'_>, usages: &[&str]) {
        let ext = |w: yasna::DERWriter<'_>, oid: &[u64], critical: bool, value: Vec<u8>| {
            w.write_sequence(|w| {
                w.next().write_oid(&ObjectIdentifier::from_slice(oid));
                if critical {
                    w.next().write_bool(true);
                }
                w.next().write_bytes(&value);
            });
        };
        // keyUsage: digitalSignature (bit 0), keyEncipherment (bit 2).
        let mut bits = 0u8;
        if usages.contains(&"digital signature") {
            bits |= 0x80;
        }
        if usages.contains(&"key encipherment") {
            bits |= 0x20;
        }
        if bits != 0 {
            let len = 8 - bits.trailing_zeros() as usize;
            let value = yasna::construct_der(|w| w.write_bitvec_bytes(&[bits], len));
            ext(w.next(), &[2, 5, 29, 15], true, value);
        }
        // extKeyUsage: clientAuth (always requested, see check_usages).
        let value = yasna::construct_der(|w| {
            w.write_sequence(|w| {
                w.next()
                    .write_oid(&ObjectIdentifier::from_slice(&[1, 3, 6, 1, 5, 5, 7, 3, 2]));
            })
        });
        ext(w.next(), &[2, 5, 29, 37], false, value);
        // basicConstraints: CA:FALSE.
        let value = yasna::construct_der(|w| w.write_sequence(|_| {}));
        ext(w.next(), &[2, 5, 29, 19], true, value);
        if let Some(id) = &self.ca_key_id {
            let value = yasna::construct_der(|w| {
                w.write_sequence(|w| {
                    w.next()
                        .write_tagged_implicit(yasna::Tag::context(0), |w| w.write_bytes(id));
                })
            });
            ext(w.next(), &[2, 5, 29, 35], false, value);
        }
    }
}

/// UTCTime through 2049, GeneralizedTime after (RFC 5280).
fn write_time(w: yasna::DERWriter<'_>, t: OffsetDateTime) {
    let t = t.replace_nanosecond(0).unwrap_or(t);
    if t.year() < 2050 {
        w.write_utctime(&UTCTime::from_datetime(t));
    } else {
        w.write_generalized_time(&GeneralizedTime::from_datetime(t));
    }
}

fn pem_certificate(der: &[u8]) -> String {
    let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, der);
    let mut s = String::from("-----BEGIN CERTIFICATE-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        s.push_str(&String::from_utf8_lossy(chunk));
        s.push('\n');
    }
    s.push_str("-----END CERTIFICATE-----\n");
    s
}

/// Upstream `validAPIServerClientUsages`.
pub fn check_usages(usages: &[&str]) -> Result<(), String> {
    let mut client_auth = false;
    for u in usages {
        match *u {
            "digital signature" | "key encipherment" => {}
            "client auth" => client_auth = true,
            other => return Err(format!("invalid usage for client certificate: {other}")),
        }
    }
    if !client_auth {
        return Err("missing required usage for client certificate: client auth".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use base64::Engine;
    use serde_json::json;

    use super::*;

    use rcgen::{CertificateParams, IsCa};

    fn ca() -> (String, String) {
        let key = KeyPair::generate().expect("key");
        let mut p = CertificateParams::default();
        p.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let cert = p.self_signed(&key).expect("ca");
        (cert.pem(), key.serialize_pem())
    }

    fn parse(pem: &str) -> Vec<u8> {
        x509_parser::pem::parse_x509_pem(pem.as_bytes())
            .expect("pem")
            .1
            .contents
    }

    fn request(cn: &str, orgs: &[&str]) -> String {
        let key = KeyPair::generate().expect("key");
        let mut p = CertificateParams::default();
        p.distinguished_name = rcgen::DistinguishedName::new();
        p.distinguished_name.push(rcgen::DnType::CommonName, cn);
        for o in orgs {
            p.distinguished_name
                .push(rcgen::DnType::OrganizationName, *o);
        }
        let csr = p.serialize_request(&key).expect("csr");
        base64::engine::general_purpose::STANDARD.encode(csr.pem().expect("pem"))
    }

    #[test]
    fn usages_as_upstream() {
        assert!(check_usages(&["client auth"]).is_ok());
        assert!(check_usages(&["digital signature", "key encipherment", "client auth"]).is_ok());
        assert_eq!(
            check_usages(&["server auth", "client auth"]).unwrap_err(),
            "invalid usage for client certificate: server auth"
        );
        assert_eq!(
            check_usages(&["digital signature"]).unwrap_err(),
            "missing required usage for client certificate: client auth"
        );
    }

    #[test]
    fn signs_with_the_subject_usages_and_bounded_expiry() {
        let (cert, key) = ca();
        let signer = ClientSigner::new(&cert, &key, std::time::Duration::from_secs(86400)).unwrap();
        let now = OffsetDateTime::now_utc();
        let csr = json!({"spec": {"request": request("jane", &["dev"]),
            "usages": ["client auth", "digital signature"], "expirationSeconds": 100}});
        let pem = signer.sign(&csr, now).expect("signed");
        let der = parse(&pem);
        let (_, c) = x509_parser::parse_x509_certificate(&der).unwrap();
        let user = crate::http::authn::ClientCertUser::from_certificate(&c).unwrap();
        assert_eq!(user.name, "jane");
        assert_eq!(user.groups, ["dev"]);
        // Signed by the CA.
        let ca_der = parse(&cert);
        let (_, ca_cert) = x509_parser::parse_x509_certificate(&ca_der).unwrap();
        c.verify_signature(Some(ca_cert.public_key()))
            .expect("CA signature");
        assert_eq!(c.issuer(), ca_cert.subject());
        let ku = c.key_usage().unwrap().unwrap().value;
        assert!(ku.digital_signature() && !ku.key_encipherment());
        assert!(!c.basic_constraints().unwrap().unwrap().value.ca);
        let life = c.validity().not_after.timestamp() - now.unix_timestamp();
        assert!((595..=600).contains(&life), "{life}");
        let eku = c.extended_key_usage().unwrap().unwrap().value;
        assert!(eku.client_auth && !eku.server_auth);
        // No expirationSeconds: the flag's maximum.
        let csr = json!({"spec": {"request": request("jane", &[]), "usages": ["client auth"]}});
        let pem = signer.sign(&csr, now).expect("signed");
        let der = parse(&pem);
        let (_, c) = x509_parser::parse_x509_certificate(&der).unwrap();
        let life = c.validity().not_after.timestamp() - now.unix_timestamp();
        assert!((86395..=86400).contains(&life), "{life}");
        let bad = json!({"spec": {"request": request("x", &[]), "usages": ["server auth"]}});
        assert_eq!(
            signer.sign(&bad, now),
            Err(SignError::Failed(
                "invalid usage for client certificate: server auth".into()
            ))
        );
    }
}
