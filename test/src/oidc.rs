//! A test OIDC issuer: an ES256 key, its JWKS, and tokens it signs.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

/// The issuer URL the tests configure (`--oidc-issuer-url`).
pub const ISSUER: &str = "https://issuer.test";

/// An ES256 signing key and its public JWK.
pub struct Issuer {
    key: jsonwebtoken::EncodingKey,
    /// The public key as a JWK (`kid` as given).
    pub jwk: Value,
}

impl Issuer {
    /// A new key with key id `kid`.
    pub fn new(kid: &str) -> Issuer {
        let pair = rcgen::KeyPair::generate().expect("key");
        let raw = pair.public_key_raw();
        let jwk = json!({"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": kid,
            "x": URL_SAFE_NO_PAD.encode(&raw[1..33]), "y": URL_SAFE_NO_PAD.encode(&raw[33..65])});
        let key = jsonwebtoken::EncodingKey::from_ec_pem(pair.serialize_pem().as_bytes())
            .expect("encoding key");
        Issuer { key, jwk }
    }

    /// A JWT of `claims` signed by this key.
    pub fn sign(&self, claims: &Value) -> String {
        let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        h.kid = self.jwk["kid"].as_str().map(str::to_string);
        jsonwebtoken::encode(&h, claims, &self.key).expect("sign")
    }
}

/// Seconds since the Unix epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
