//! Keys for signed JWTs: PEM private and public keys, their key ids, and
//! their JSON Web Keys.
//!
//! Supported keys are RSA (RS256) and ECDSA P-256 / P-384 (ES256 / ES384),
//! as PKCS#8 private keys (`-----BEGIN PRIVATE KEY-----`, what `openssl
//! genpkey` writes), SubjectPublicKeyInfo public keys (`-----BEGIN PUBLIC
//! KEY-----`) or certificates. The key id is upstream's
//! (`keyIDFromPublicKey`): base64url (no padding) of the SHA-256 digest of
//! the public key's DER SubjectPublicKeyInfo.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use x509_parser::prelude::FromDer;
use x509_parser::public_key::PublicKey as ParsedKey;
use x509_parser::x509::SubjectPublicKeyInfo;

/// Why a key could not be loaded.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct KeyError {
    /// The file (or what the key came from).
    pub path: String,
    /// What is wrong.
    pub reason: String,
}

fn key_error(path: &Path, reason: impl ToString) -> KeyError {
    KeyError {
        path: path.display().to_string(),
        reason: reason.to_string(),
    }
}

/// A public key that verifies JWT signatures.
#[derive(Clone)]
pub struct PublicKey {
    /// The key id (see the [module docs](self)).
    pub kid: String,
    /// The one algorithm this key verifies.
    pub alg: Algorithm,
    /// The key as a JWK (`use: sig`), as `/openid/v1/jwks` serves it.
    pub jwk: Value,
    /// The verifying key.
    pub decoding: DecodingKey,
}

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PublicKey")
            .field("kid", &self.kid)
            .field("alg", &self.alg)
            .finish()
    }
}

/// A private key that signs JWTs, and its public half.
pub struct SigningKey {
    /// The signing key.
    pub encoding: EncodingKey,
    /// Its public key.
    pub public: PublicKey,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("public", &self.public)
            .finish()
    }
}

/// OID of the named curves (`id-ecPublicKey` parameters).
const P256: &str = "1.2.840.10045.3.1.7";
const P384: &str = "1.3.132.0.34";

/// The public key of a DER SubjectPublicKeyInfo.
pub fn public_from_spki(der: &[u8]) -> Result<PublicKey, String> {
    let (_, spki) = SubjectPublicKeyInfo::from_der(der).map_err(|e| e.to_string())?;
    let kid = URL_SAFE_NO_PAD.encode(Sha256::digest(der));
    match spki.parsed().map_err(|e| e.to_string())? {
        ParsedKey::RSA(rsa) => {
            let n = strip_zeros(rsa.modulus);
            let e = strip_zeros(rsa.exponent);
            let jwk = json!({
                "use": "sig", "kty": "RSA", "kid": kid, "alg": "RS256",
                "n": URL_SAFE_NO_PAD.encode(n), "e": URL_SAFE_NO_PAD.encode(e),
            });
            Ok(PublicKey {
                kid,
                alg: Algorithm::RS256,
                jwk,
                decoding: DecodingKey::from_rsa_raw_components(n, e),
            })
        }
        ParsedKey::EC(point) => {
            let curve = spki
                .algorithm
                .parameters
                .as_ref()
                .and_then(|p| p.as_oid().ok())
                .map(|o| o.to_id_string())
                .unwrap_or_default();
            let (crv, alg, len) = match curve.as_str() {
                P256 => ("P-256", Algorithm::ES256, 32),
                P384 => ("P-384", Algorithm::ES384, 48),
                other => return Err(format!("unsupported elliptic curve {other:?}")),
            };
            let data = point.data();
            if data.len() != 1 + 2 * len || data.first() != Some(&4) {
                return Err("the EC public key is not an uncompressed point".into());
            }
            let x = URL_SAFE_NO_PAD.encode(&data[1..=len]);
            let y = URL_SAFE_NO_PAD.encode(&data[1 + len..]);
            let decoding = DecodingKey::from_ec_components(&x, &y).map_err(|e| e.to_string())?;
            let alg_name = if alg == Algorithm::ES256 {
                "ES256"
            } else {
                "ES384"
            };
            let jwk = json!({
                "use": "sig", "kty": "EC", "kid": kid, "crv": crv, "alg": alg_name, "x": x, "y": y,
            });
            Ok(PublicKey {
                kid,
                alg,
                jwk,
                decoding,
            })
        }
        _ => Err("unsupported public key type (want RSA or ECDSA)".into()),
    }
}

fn strip_zeros(b: &[u8]) -> &[u8] {
    let start = b.iter().position(|x| *x != 0).unwrap_or(b.len());
    &b[start..]
}

/// A signing key from a PKCS#8 private key PEM.
pub fn signing_from_pem(pem: &str) -> Result<SigningKey, String> {
    let pair = rcgen::KeyPair::from_pem(pem).map_err(|e| e.to_string())?;
    let public = public_from_spki(&rcgen::PublicKeyData::subject_public_key_info(&pair))?;
    let pkcs8 = pair.serialize_pem();
    let encoding = match public.alg {
        Algorithm::RS256 => EncodingKey::from_rsa_pem(pkcs8.as_bytes()),
        _ => EncodingKey::from_ec_pem(pkcs8.as_bytes()),
    }
    .map_err(|e| e.to_string())?;
    Ok(SigningKey { encoding, public })
}

/// Reads the signing key in `path`.
pub fn load_signing_key(path: &Path) -> Result<SigningKey, KeyError> {
    let pem = std::fs::read_to_string(path).map_err(|e| key_error(path, e))?;
    signing_from_pem(&pem).map_err(|e| key_error(path, e))
}

/// Generates an ECDSA P-256 signing key; returns it and its PKCS#8 PEM.
pub fn generate_signing_key() -> Result<(SigningKey, String), String> {
    let pair = rcgen::KeyPair::generate().map_err(|e| e.to_string())?;
    let pem = pair.serialize_pem();
    Ok((signing_from_pem(&pem)?, pem))
}

/// Every public key in a PEM file: public keys, certificates and the public
/// halves of private keys (as `--service-account-key-file` takes them).
pub fn load_public_keys(path: &Path) -> Result<Vec<PublicKey>, KeyError> {
    let data = std::fs::read(path).map_err(|e| key_error(path, e))?;
    let mut out = Vec::new();
    for block in x509_parser::pem::Pem::iter_from_buffer(&data) {
        let block = block.map_err(|e| key_error(path, e))?;
        let key = match block.label.as_str() {
            "PUBLIC KEY" => public_from_spki(&block.contents),
            "CERTIFICATE" => x509_parser::parse_x509_certificate(&block.contents)
                .map_err(|e| e.to_string())
                .and_then(|(_, c)| public_from_spki(c.public_key().raw)),
            "PRIVATE KEY" => {
                let pem = pem_text("PRIVATE KEY", &block.contents);
                signing_from_pem(&pem).map(|s| s.public)
            }
            other => Err(format!("unsupported PEM block {other:?}")),
        }
        .map_err(|e| key_error(path, e))?;
        out.push(key);
    }
    if out.is_empty() {
        return Err(key_error(path, "no public keys found"));
    }
    Ok(out)
}

fn pem_text(label: &str, der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut s = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        s.push_str(&String::from_utf8_lossy(chunk));
        s.push('\n');
    }
    s.push_str(&format!("-----END {label}-----\n"));
    s
}

/// The keys of a JWKS document (`{"keys": [...]}`); keys whose algorithm
/// cannot be told (no `alg`, not RSA or EC) are skipped.
pub fn public_from_jwks(text: &str) -> Result<Vec<PublicKey>, String> {
    let set: jsonwebtoken::jwk::JwkSet =
        serde_json::from_str(text).map_err(|e| format!("not a JWKS document: {e}"))?;
    let raw: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for (i, jwk) in set.keys.iter().enumerate() {
        let alg = match (&jwk.common.key_algorithm, &jwk.algorithm) {
            (Some(a), _) => match format!("{a:?}").parse::<Algorithm>() {
                Ok(Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) | Err(_) => continue,
                Ok(alg) => alg,
            },
            (None, jsonwebtoken::jwk::AlgorithmParameters::RSA(_)) => Algorithm::RS256,
            (None, jsonwebtoken::jwk::AlgorithmParameters::EllipticCurve(ec)) => match ec.curve {
                jsonwebtoken::jwk::EllipticCurve::P256 => Algorithm::ES256,
                jsonwebtoken::jwk::EllipticCurve::P384 => Algorithm::ES384,
                _ => continue,
            },
            _ => continue,
        };
        let decoding = DecodingKey::from_jwk(jwk).map_err(|e| format!("keys[{i}]: {e}"))?;
        out.push(PublicKey {
            kid: jwk.common.key_id.clone().unwrap_or_default(),
            alg,
            jwk: raw["keys"][i].clone(),
            decoding,
        });
    }
    Ok(out)
}

/// Reads a JWKS file.
pub fn load_jwks(path: &Path) -> Result<Vec<PublicKey>, KeyError> {
    let text = std::fs::read_to_string(path).map_err(|e| key_error(path, e))?;
    let keys = public_from_jwks(&text).map_err(|e| key_error(path, e))?;
    if keys.is_empty() {
        return Err(key_error(path, "no usable keys"));
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_key_has_upstreams_kid_and_a_jwk() {
        let (key, pem) = generate_signing_key().expect("key");
        let pair = rcgen::KeyPair::from_pem(&pem).expect("pem");
        let want = URL_SAFE_NO_PAD.encode(Sha256::digest(
            rcgen::PublicKeyData::subject_public_key_info(&pair),
        ));
        assert_eq!(key.public.kid, want);
        assert_eq!(key.public.alg, Algorithm::ES256);
        assert_eq!(key.public.jwk["kty"], "EC");
        assert_eq!(key.public.jwk["crv"], "P-256");
        // The JWK round-trips through the JWKS reader.
        let jwks = json!({"keys": [key.public.jwk]}).to_string();
        let keys = public_from_jwks(&jwks).expect("jwks");
        assert_eq!(keys[0].kid, key.public.kid);
        assert_eq!(keys[0].alg, Algorithm::ES256);
    }

    #[test]
    fn public_key_file_takes_private_keys_and_certificates() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (key, pem) = generate_signing_key().expect("key");
        let pair = rcgen::KeyPair::from_pem(&pem).expect("pem");
        let cert = rcgen::CertificateParams::default()
            .self_signed(&pair)
            .expect("cert");
        let path = dir.path().join("keys.pem");
        std::fs::write(
            &path,
            format!("{pem}{}{}", cert.pem(), pair.public_key_pem()),
        )
        .expect("write");
        let keys = load_public_keys(&path).expect("keys");
        assert_eq!(keys.len(), 3);
        assert!(keys.iter().all(|k| k.kid == key.public.kid));
        std::fs::write(&path, "nothing").expect("write");
        assert!(load_public_keys(&path).is_err());
    }
}
