//! Signed JWT bearer tokens: verification against a key set with an
//! injectable clock, and the OIDC authenticator (`--oidc-*` flags).
//!
//! # OIDC
//!
//! kube-apiserver's `--oidc-*` flags with the same meaning, except that the
//! issuer's keys come from a local JWKS file (`--oidc-jwks-file`): Skein
//! never fetches the issuer's discovery document. A token is *for* this
//! authenticator when its (unverified) `iss` is `--oidc-issuer-url`;
//! otherwise the next authenticator is tried. A token for it must then:
//!
//! - have a header `alg` among `--oidc-signing-algs` (default `RS256`;
//!   `none` is never accepted) and a signature from a key of the JWKS with
//!   that algorithm (and the header's `kid`, when it names one);
//! - name `--oidc-client-id` in `aud` (a string or a list);
//! - have `exp` in the future and `nbf` (if any) in the past, each with
//!   [`SKEW`] of leeway;
//! - carry every `--oidc-required-claim` `key=value` as a string claim.
//!
//! The user name is the `--oidc-username-claim` (default `sub`) with
//! upstream's prefix rules: `--oidc-username-prefix` when given (`-` means
//! none); otherwise `<issuer-url>#` unless the claim is `email`. An `email`
//! claim is refused when `email_verified` is present and not `true`.
//! Groups come from `--oidc-groups-claim` (a string or a list of strings),
//! each with `--oidc-groups-prefix`.

use std::collections::HashSet;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use super::UserInfo;
use super::keys::PublicKey;

/// Clock skew tolerated for `exp` and `nbf`, in seconds.
pub const SKEW: u64 = 10;

/// The claims of a verified token.
pub type Claims = Map<String, Value>;

/// Why a token was rejected (logged; clients only see 401).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JwtError(pub String);

fn err(s: impl Into<String>) -> JwtError {
    JwtError(s.into())
}

/// The `iss` of a token's payload, read without verifying anything; `None`
/// when the token is not a JWT with a string `iss`.
pub fn unverified_issuer(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let bytes = URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims.get("iss")?.as_str().map(str::to_string)
}

/// Verifies `token`'s signature with one of `keys` (an algorithm in
/// `algs`) and its `exp` / `nbf` against `now` (seconds since the epoch);
/// `exp` is required. Issuer and audience are the caller's to check.
pub fn verify(
    token: &str,
    keys: &[PublicKey],
    algs: &[Algorithm],
    now: u64,
) -> Result<Claims, JwtError> {
    // `alg: none` (and any name jsonwebtoken does not know) fails here.
    let header =
        jsonwebtoken::decode_header(token).map_err(|e| err(format!("malformed token: {e}")))?;
    if !algs.contains(&header.alg) {
        return Err(err(format!(
            "unsupported signing algorithm {:?}",
            header.alg
        )));
    }
    let mut validation = Validation::new(header.alg);
    validation.validate_exp = false;
    validation.validate_nbf = false;
    validation.validate_aud = false;
    validation.required_spec_claims = HashSet::new();
    let mut last = err("no key for the token's algorithm and key id");
    let candidates = keys.iter().filter(|k| {
        k.alg == header.alg
            && header
                .kid
                .as_deref()
                .is_none_or(|kid| k.kid.is_empty() || k.kid == kid)
    });
    for key in candidates {
        match jsonwebtoken::decode::<Claims>(token, &key.decoding, &validation) {
            Ok(data) => {
                check_times(&data.claims, now)?;
                return Ok(data.claims);
            }
            Err(e) => last = err(format!("invalid signature: {e}")),
        }
    }
    Err(last)
}

fn check_times(claims: &Claims, now: u64) -> Result<(), JwtError> {
    let number = |name: &str| claims.get(name).and_then(Value::as_f64);
    let Some(exp) = number("exp") else {
        return Err(err("the token has no exp claim"));
    };
    if (now as f64) > exp + SKEW as f64 {
        return Err(err("the token has expired"));
    }
    if let Some(nbf) = number("nbf")
        && ((now + SKEW) as f64) < nbf
    {
        return Err(err("the token is not valid yet (nbf)"));
    }
    Ok(())
}

/// The `aud` claim as a list (a string is a list of one).
pub fn audiences(claims: &Claims) -> Vec<String> {
    match claims.get("aud") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// The `--oidc-*` settings.
#[derive(Debug, Clone)]
pub struct OidcConfig {
    /// `--oidc-issuer-url`.
    pub issuer_url: String,
    /// `--oidc-client-id`: the audience tokens must carry.
    pub client_id: String,
    /// `--oidc-username-claim`.
    pub username_claim: String,
    /// `--oidc-username-prefix` as given.
    pub username_prefix: Option<String>,
    /// `--oidc-groups-claim`.
    pub groups_claim: Option<String>,
    /// `--oidc-groups-prefix`.
    pub groups_prefix: String,
    /// `--oidc-required-claim` pairs.
    pub required_claims: Vec<(String, String)>,
    /// `--oidc-signing-algs`.
    pub signing_algs: Vec<Algorithm>,
}

/// The OIDC bearer-token authenticator.
#[derive(Debug)]
pub struct OidcAuthenticator {
    config: OidcConfig,
    username_prefix: String,
    keys: Vec<PublicKey>,
}

impl OidcAuthenticator {
    /// An authenticator for `config` verifying with `keys`.
    pub fn new(config: OidcConfig, keys: Vec<PublicKey>) -> Self {
        // Upstream's legacy flag rule.
        let username_prefix = match config.username_prefix.as_deref() {
            Some("-") => String::new(),
            Some(p) if !p.is_empty() => p.to_string(),
            _ if config.username_claim != "email" => format!("{}#", config.issuer_url),
            _ => String::new(),
        };
        OidcAuthenticator {
            config,
            username_prefix,
            keys,
        }
    }

    /// The user of `token` at time `now`: `Ok(None)` when the token is not
    /// from this issuer, an error when it is and does not verify.
    pub fn authenticate(&self, token: &str, now: u64) -> Result<Option<UserInfo>, JwtError> {
        if unverified_issuer(token).as_deref() != Some(self.config.issuer_url.as_str()) {
            return Ok(None);
        }
        let claims = verify(token, &self.keys, &self.config.signing_algs, now)?;
        if claims.get("iss").and_then(Value::as_str) != Some(self.config.issuer_url.as_str()) {
            return Err(err("wrong issuer"));
        }
        if !audiences(&claims).contains(&self.config.client_id) {
            return Err(err(format!(
                "expected audience {:?}",
                self.config.client_id
            )));
        }
        let claim = &self.config.username_claim;
        let Some(name) = claims.get(claim).and_then(Value::as_str) else {
            return Err(err(format!("claim {claim:?} not present")));
        };
        if claim == "email"
            && let Some(verified) = claims.get("email_verified")
            && verified != &Value::Bool(true)
        {
            return Err(err("email not verified"));
        }
        for (key, want) in &self.config.required_claims {
            match claims.get(key).and_then(Value::as_str) {
                None => return Err(err(format!("required claim {key} not present in ID token"))),
                Some(got) if got != want => {
                    return Err(err(format!(
                        "required claim {key} value does not match. Got = {got}, want = {want}"
                    )));
                }
                Some(_) => {}
            }
        }
        let mut groups = Vec::new();
        if let Some(gc) = &self.config.groups_claim {
            match claims.get(gc) {
                None => {}
                Some(Value::String(g)) => groups.push(g.clone()),
                Some(Value::Array(list)) => {
                    for g in list {
                        let Some(g) = g.as_str() else {
                            return Err(err(format!("claim {gc:?} is not a list of strings")));
                        };
                        groups.push(g.to_string());
                    }
                }
                Some(_) => return Err(err(format!("claim {gc:?} is not a string or a list"))),
            }
        }
        let groups = groups
            .into_iter()
            .map(|g| format!("{}{g}", self.config.groups_prefix))
            .collect();
        Ok(Some(UserInfo::authenticated(
            format!("{}{name}", self.username_prefix),
            None,
            groups,
        )))
    }
}

/// Parses `--oidc-signing-algs` names (upstream's list, less ES512).
pub fn parse_algs(names: &[String]) -> Result<Vec<Algorithm>, String> {
    names
        .iter()
        .map(|n| match n.as_str() {
            "RS256" => Ok(Algorithm::RS256),
            "RS384" => Ok(Algorithm::RS384),
            "RS512" => Ok(Algorithm::RS512),
            "ES256" => Ok(Algorithm::ES256),
            "ES384" => Ok(Algorithm::ES384),
            "PS256" => Ok(Algorithm::PS256),
            "PS384" => Ok(Algorithm::PS384),
            "PS512" => Ok(Algorithm::PS512),
            other => Err(format!(
                "oidc: unsupported signing alg {other:?} (want RS256, RS384, RS512, ES256, ES384, PS256, PS384 or PS512)"
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::json;

    use super::super::keys::{SigningKey, generate_signing_key};
    use super::*;

    const ISS: &str = "https://issuer.example";
    const NOW: u64 = 1_800_000_000;

    fn key() -> SigningKey {
        generate_signing_key().expect("key").0
    }

    fn sign(key: &SigningKey, claims: Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(key.public.kid.clone());
        jsonwebtoken::encode(&header, &claims, &key.encoding).expect("sign")
    }

    fn oidc(key: &SigningKey, f: impl FnOnce(&mut OidcConfig)) -> OidcAuthenticator {
        let mut c = OidcConfig {
            issuer_url: ISS.into(),
            client_id: "skein".into(),
            username_claim: "sub".into(),
            username_prefix: None,
            groups_claim: None,
            groups_prefix: String::new(),
            required_claims: Vec::new(),
            signing_algs: vec![Algorithm::ES256],
        };
        f(&mut c);
        OidcAuthenticator::new(c, vec![key.public.clone()])
    }

    fn claims() -> Value {
        json!({"iss": ISS, "aud": "skein", "sub": "alice", "exp": NOW + 600, "iat": NOW,
               "email": "a@x.io", "groups": ["dev", "ops"], "hd": "x.io"})
    }

    #[test]
    fn valid_token_and_username_prefix_rules() {
        let k = key();
        let t = sign(&k, claims());
        let user = oidc(&k, |_| {}).authenticate(&t, NOW).unwrap().unwrap();
        assert_eq!(user.name, "https://issuer.example#alice");
        assert_eq!(user.groups, ["system:authenticated"]);
        let user = oidc(&k, |c| c.username_prefix = Some("-".into()))
            .authenticate(&t, NOW)
            .unwrap()
            .unwrap();
        assert_eq!(user.name, "alice");
        let user = oidc(&k, |c| {
            c.username_claim = "email".into();
            c.groups_claim = Some("groups".into());
            c.groups_prefix = "oidc:".into();
        })
        .authenticate(&t, NOW)
        .unwrap()
        .unwrap();
        assert_eq!(user.name, "a@x.io");
        assert_eq!(
            user.groups,
            ["oidc:dev", "oidc:ops", "system:authenticated"]
        );
        let user = oidc(&k, |c| c.username_prefix = Some("corp:".into()))
            .authenticate(&t, NOW)
            .unwrap()
            .unwrap();
        assert_eq!(user.name, "corp:alice");
    }

    #[test]
    fn time_bounds_use_the_skew() {
        let k = key();
        let a = oidc(&k, |_| {});
        let t = sign(&k, claims());
        assert!(a.authenticate(&t, NOW + 600 + SKEW).is_ok());
        assert_eq!(
            a.authenticate(&t, NOW + 601 + SKEW).unwrap_err().0,
            "the token has expired"
        );
        let mut c = claims();
        c["nbf"] = json!(NOW + 100);
        let t = sign(&k, c);
        assert!(a.authenticate(&t, NOW).is_err());
        assert!(a.authenticate(&t, NOW + 100 - SKEW).is_ok());
        let mut c = claims();
        c.as_object_mut().unwrap().remove("exp");
        assert!(a.authenticate(&sign(&k, c), NOW).is_err());
    }

    #[test]
    fn bad_tokens_are_errors_and_other_issuers_are_not_ours() {
        let k = key();
        let a = oidc(&k, |_| {});
        let mut c = claims();
        c["aud"] = json!(["other"]);
        assert!(a.authenticate(&sign(&k, c), NOW).is_err(), "audience");
        let other = key();
        assert!(
            a.authenticate(&sign(&other, claims()), NOW).is_err(),
            "wrong key"
        );
        let mut c = claims();
        c["iss"] = json!("https://elsewhere");
        assert_eq!(a.authenticate(&sign(&k, c), NOW), Ok(None));
        // alg none: header {"alg":"none"}, no signature.
        let none = format!(
            "{}.{}.",
            URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#),
            URL_SAFE_NO_PAD.encode(claims().to_string())
        );
        assert!(a.authenticate(&none, NOW).is_err(), "alg none");
        // HS256 with the public JWK as a secret is not an allowed algorithm.
        let hs = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims(),
            &EncodingKey::from_secret(b"x"),
        )
        .unwrap();
        assert!(a.authenticate(&hs, NOW).is_err(), "HS256");
        let a = oidc(&k, |c| {
            c.required_claims = vec![("hd".into(), "y.io".into())]
        });
        assert_eq!(
            a.authenticate(&sign(&k, claims()), NOW).unwrap_err().0,
            "required claim hd value does not match. Got = x.io, want = y.io"
        );
        let a = oidc(&k, |c| c.username_claim = "email".into());
        let mut c = claims();
        c["email_verified"] = json!(false);
        assert!(a.authenticate(&sign(&k, c), NOW).is_err(), "unverified");
    }
}
