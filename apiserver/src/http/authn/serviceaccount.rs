//! ServiceAccount tokens that Skein issues (TokenRequest) and verifies, and
//! the OIDC discovery documents that publish their keys.
//!
//! Tokens carry upstream's claims: `iss` (the first
//! `--service-account-issuer`), `sub` (`system:serviceaccount:<ns>:<name>`),
//! `aud`, `exp`, `iat`, `nbf`, `jti`, and the private `kubernetes.io` claim
//! with `namespace`, `serviceaccount {name, uid}` and the bound `pod` or
//! `secret` (`{name, uid}`). They are signed with the
//! `--service-account-signing-key-file` key (ES256 or RS256, header `kid`
//! as upstream's key id).
//!
//! A token verifies when its `iss` is one of the `--service-account-issuer`
//! values, its signature is from one of the verification keys (the signing
//! key and every `--service-account-key-file`), it is within its lifetime
//! ([`super::jwt::SKEW`] of leeway), it names one of the accepted audiences,
//! and — checked against the store by [`super::Authenticator`] — the
//! ServiceAccount and the bound object still exist with the uids in the
//! token and are not being deleted.

use jsonwebtoken::{Algorithm, Header};
use serde_json::{Value, json};

use super::jwt::{self, Claims, JwtError};
use super::keys::{PublicKey, SigningKey};

/// `authentication.kubernetes.io/credential-id`, `pod-name`, `pod-uid`:
/// the user extra keys upstream sets for these tokens.
pub const EXTRA_CREDENTIAL_ID: &str = "authentication.kubernetes.io/credential-id";
/// The bound Pod's name in the user's extra.
pub const EXTRA_POD_NAME: &str = "authentication.kubernetes.io/pod-name";
/// The bound Pod's uid in the user's extra.
pub const EXTRA_POD_UID: &str = "authentication.kubernetes.io/pod-uid";
/// The bound Pod's node name in the user's extra.
pub const EXTRA_NODE_NAME: &str = "authentication.kubernetes.io/node-name";

/// The default issuer (kubeadm's and kind's).
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// A `{name, uid}` reference in the `kubernetes.io` claim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ref {
    /// The object's name.
    pub name: String,
    /// The object's uid.
    pub uid: String,
}

impl Ref {
    fn json(&self) -> Value {
        json!({"name": self.name, "uid": self.uid})
    }

    fn from_claim(v: Option<&Value>) -> Option<Ref> {
        let v = v?;
        Some(Ref {
            name: v.get("name")?.as_str()?.to_string(),
            uid: v.get("uid")?.as_str()?.to_string(),
        })
    }
}

/// What a token says, issued or verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaToken {
    /// The ServiceAccount's namespace.
    pub namespace: String,
    /// The ServiceAccount.
    pub account: Ref,
    /// The bound Pod.
    pub pod: Option<Ref>,
    /// The node of the bound Pod (when it was scheduled at issue time).
    pub node: Option<String>,
    /// The bound Secret.
    pub secret: Option<Ref>,
    /// The audiences.
    pub audiences: Vec<String>,
    /// The token's id (`jti`).
    pub jti: String,
}

/// The ServiceAccount token signer and verifier.
pub struct ServiceAccountTokens {
    issuers: Vec<String>,
    signing: SigningKey,
    keys: Vec<PublicKey>,
    api_audiences: Vec<String>,
    max_expiration: Option<u64>,
}

impl std::fmt::Debug for ServiceAccountTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceAccountTokens")
            .field("issuers", &self.issuers)
            .field("keys", &self.keys)
            .finish()
    }
}

impl ServiceAccountTokens {
    /// A signer for `issuers` (the first one issues; at least one) with
    /// `signing`, verifying with it and `extra_keys`. `api_audiences` are
    /// the audiences of tokens for this server (the issuers when empty).
    pub fn new(
        issuers: Vec<String>,
        signing: SigningKey,
        extra_keys: Vec<PublicKey>,
        api_audiences: Vec<String>,
        max_expiration: Option<u64>,
    ) -> Self {
        let issuers = if issuers.is_empty() {
            vec![DEFAULT_ISSUER.to_string()]
        } else {
            issuers
        };
        let mut keys = vec![signing.public.clone()];
        for k in extra_keys {
            if !keys.iter().any(|have| have.kid == k.kid) {
                keys.push(k);
            }
        }
        let api_audiences = if api_audiences.is_empty() {
            issuers.clone()
        } else {
            api_audiences
        };
        ServiceAccountTokens {
            issuers,
            signing,
            keys,
            api_audiences,
            max_expiration,
        }
    }

    /// The audiences a token for this server may name.
    pub fn api_audiences(&self) -> &[String] {
        &self.api_audiences
    }

    /// `--service-account-max-token-expiration`, if set.
    pub fn max_expiration(&self) -> Option<u64> {
        self.max_expiration
    }

    /// Signs a token for `t` valid from `now` for `seconds`.
    pub fn issue(&self, t: &SaToken, now: u64, seconds: u64) -> Result<String, String> {
        let mut k8s = json!({
            "namespace": t.namespace,
            "serviceaccount": t.account.json(),
        });
        if let Some(p) = &t.pod {
            k8s["pod"] = p.json();
        }
        if let Some(s) = &t.secret {
            k8s["secret"] = s.json();
        }
        if let Some(n) = &t.node {
            k8s["node"] = json!({"name": n});
        }
        let claims = json!({
            "aud": t.audiences,
            "exp": now + seconds,
            "iat": now,
            "iss": self.issuers[0],
            "jti": t.jti,
            "kubernetes.io": k8s,
            "nbf": now,
            "sub": format!("system:serviceaccount:{}:{}", t.namespace, t.account.name),
        });
        let mut header = Header::new(self.signing.public.alg);
        header.typ = None;
        header.kid = Some(self.signing.public.kid.clone());
        jsonwebtoken::encode(&header, &claims, &self.signing.encoding).map_err(|e| e.to_string())
    }

    /// Verifies `token` at `now` for one of `audiences` (the API audiences
    /// when `None`): `Ok(None)` when it is not from one of our issuers.
    /// The store checks are the caller's.
    pub fn verify(
        &self,
        token: &str,
        now: u64,
        audiences: Option<&[String]>,
    ) -> Result<Option<SaToken>, JwtError> {
        let Some(iss) = jwt::unverified_issuer(token) else {
            return Ok(None);
        };
        if !self.issuers.contains(&iss) {
            return Ok(None);
        }
        let algs = [
            Algorithm::RS256,
            Algorithm::ES256,
            Algorithm::ES384,
            Algorithm::RS384,
            Algorithm::RS512,
        ];
        let claims = jwt::verify(token, &self.keys, &algs, now)?;
        let wanted = audiences.unwrap_or(&self.api_audiences);
        let auds: Vec<String> = jwt::audiences(&claims)
            .into_iter()
            .filter(|a| wanted.contains(a))
            .collect();
        if auds.is_empty() {
            return Err(JwtError("token audiences are not accepted".into()));
        }
        let mut t = parse(&claims)?;
        t.audiences = auds;
        Ok(Some(t))
    }

    /// `/.well-known/openid-configuration`.
    pub fn openid_configuration(&self) -> Value {
        let issuer = &self.issuers[0];
        let mut algs: Vec<String> = Vec::new();
        for k in &self.keys {
            let a = format!("{:?}", k.alg);
            if !algs.contains(&a) {
                algs.push(a);
            }
        }
        json!({
            "issuer": issuer,
            "jwks_uri": format!("{}/openid/v1/jwks", issuer.trim_end_matches('/')),
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": algs,
        })
    }

    /// `/openid/v1/jwks`: every verification key.
    pub fn jwks(&self) -> Value {
        json!({"keys": self.keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()})
    }
}

fn parse(claims: &Claims) -> Result<SaToken, JwtError> {
    let bad = || JwtError("the token's kubernetes.io claim is malformed".into());
    let k8s = claims.get("kubernetes.io").ok_or_else(bad)?;
    let namespace = k8s
        .get("namespace")
        .and_then(Value::as_str)
        .ok_or_else(bad)?
        .to_string();
    let account = Ref::from_claim(k8s.get("serviceaccount")).ok_or_else(bad)?;
    let sub = claims.get("sub").and_then(Value::as_str).unwrap_or("");
    if sub != format!("system:serviceaccount:{namespace}:{}", account.name) {
        return Err(JwtError(
            "sub does not match the kubernetes.io claim".into(),
        ));
    }
    Ok(SaToken {
        namespace,
        account,
        pod: Ref::from_claim(k8s.get("pod")),
        node: k8s
            .pointer("/node/name")
            .and_then(Value::as_str)
            .map(str::to_string),
        secret: Ref::from_claim(k8s.get("secret")),
        audiences: Vec::new(),
        jti: claims
            .get("jti")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::keys::generate_signing_key;
    use super::*;

    const NOW: u64 = 1_800_000_000;

    fn tokens() -> ServiceAccountTokens {
        ServiceAccountTokens::new(
            Vec::new(),
            generate_signing_key().expect("key").0,
            Vec::new(),
            Vec::new(),
            None,
        )
    }

    fn token() -> SaToken {
        SaToken {
            namespace: "ns".into(),
            account: Ref {
                name: "sa".into(),
                uid: "u1".into(),
            },
            pod: None,
            node: None,
            secret: Some(Ref {
                name: "s".into(),
                uid: "u2".into(),
            }),
            audiences: vec![DEFAULT_ISSUER.into()],
            jti: "j".into(),
        }
    }

    #[test]
    fn issued_tokens_verify_until_they_expire() {
        let t = tokens();
        let jwt = t.issue(&token(), NOW, 600).expect("issue");
        assert_eq!(t.verify(&jwt, NOW + 1, None), Ok(Some(token())));
        assert_eq!(
            t.verify(&jwt, NOW + 600 + jwt::SKEW, None),
            Ok(Some(token()))
        );
        assert_eq!(
            t.verify(&jwt, NOW + 601 + jwt::SKEW, None),
            Err(JwtError("the token has expired".into()))
        );
        // Another audience is not accepted; the right one narrows the list.
        let other = ["https://vault".to_string()];
        assert!(t.verify(&jwt, NOW, Some(&other)).is_err());
        // Another signer's token with the same issuer fails.
        let forged = tokens().issue(&token(), NOW, 600).expect("issue");
        assert!(t.verify(&forged, NOW, None).is_err());
        // A token from elsewhere is not ours.
        assert_eq!(t.verify("a.b.c", NOW, None), Ok(None));
    }

    #[test]
    fn discovery_documents() {
        let t = tokens();
        let c = t.openid_configuration();
        assert_eq!(c["issuer"], DEFAULT_ISSUER);
        assert_eq!(
            c["jwks_uri"],
            "https://kubernetes.default.svc.cluster.local/openid/v1/jwks"
        );
        assert_eq!(c["id_token_signing_alg_values_supported"], json!(["ES256"]));
        assert_eq!(t.jwks()["keys"][0]["kid"], t.signing.public.kid);
    }
}
