//! Builds the server's [`Authenticator`] from its flags: reads keys and
//! JWKS files, generates the ServiceAccount signing key on first start,
//! and checks the `--oidc-*` flags as kube-apiserver's options validation
//! does. Every error is fatal at startup.

use std::path::Path;
use std::sync::Arc;

use super::jwt::{OidcAuthenticator, OidcConfig, parse_algs};
use super::keys;
use super::serviceaccount::ServiceAccountTokens;
use super::{Authenticator, TokenAuthenticator};
use crate::config::AuthnConfig;
use crate::registry::Registry;

/// The generated signing key's file name in the PKI directory.
pub const GENERATED_KEY: &str = "sa.key";

/// The authenticator for `cfg`. `pki_dir` holds a generated signing key;
/// `registry` is where ServiceAccounts and bound objects are checked.
pub fn build(
    cfg: &AuthnConfig,
    pki_dir: &Path,
    tokens: Option<TokenAuthenticator>,
    registry: Registry,
) -> Result<Authenticator, String> {
    let signing = match &cfg.service_account_signing_key_file {
        Some(path) => keys::load_signing_key(path)
            .map_err(|e| format!("--service-account-signing-key-file: {e}"))?,
        None => generated_key(pki_dir)?,
    };
    let mut extra = Vec::new();
    for path in &cfg.service_account_key_files {
        extra.extend(
            keys::load_public_keys(path).map_err(|e| format!("--service-account-key-file: {e}"))?,
        );
    }
    let max = cfg.service_account_max_token_expiration.as_secs();
    if max != 0 && max < 3600 {
        return Err("--service-account-max-token-expiration: must be at least 1h (3600s)".into());
    }
    let sa = ServiceAccountTokens::new(
        cfg.service_account_issuers.clone(),
        signing,
        extra,
        cfg.api_audiences.clone(),
        (max != 0).then_some(max),
    );
    Ok(Authenticator {
        tokens,
        service_accounts: Some((Arc::new(sa), registry)),
        oidc: oidc(cfg)?,
        anonymous: cfg.anonymous_auth,
    })
}

/// `<pki>/sa.key`, generated (ECDSA P-256, mode 0600) when missing.
fn generated_key(pki_dir: &Path) -> Result<keys::SigningKey, String> {
    let path = pki_dir.join(GENERATED_KEY);
    if path.exists() {
        return keys::load_signing_key(&path).map_err(|e| e.to_string());
    }
    tracing::info!(file = %path.display(), "generating the service account signing key");
    let (key, pem) = keys::generate_signing_key()?;
    crate::pki::write_atomic(&path, pem.as_bytes(), 0o600).map_err(|e| e.to_string())?;
    Ok(key)
}

/// The OIDC authenticator, when `--oidc-issuer-url` is set.
fn oidc(cfg: &AuthnConfig) -> Result<Option<OidcAuthenticator>, String> {
    let (issuer, client) = match (&cfg.oidc_issuer_url, &cfg.oidc_client_id) {
        (None, None) => return Ok(None),
        (Some(i), Some(c)) if !i.is_empty() && !c.is_empty() => (i, c),
        _ => {
            return Err("oidc-issuer-url and oidc-client-id must be specified together".into());
        }
    };
    if !issuer.starts_with("https://") {
        return Err(format!(
            "--oidc-issuer-url: {issuer:?} must use the https scheme"
        ));
    }
    let Some(jwks) = &cfg.oidc_jwks_file else {
        return Err("--oidc-jwks-file is required with --oidc-issuer-url (Skein does not fetch the issuer's keys)".into());
    };
    let keys = keys::load_jwks(jwks).map_err(|e| format!("--oidc-jwks-file: {e}"))?;
    let mut required = Vec::new();
    for pair in &cfg.oidc_required_claims {
        let Some((k, v)) = pair.split_once('=') else {
            return Err(format!("--oidc-required-claim: {pair:?} is not key=value"));
        };
        required.push((k.trim().to_string(), v.trim().to_string()));
    }
    let config = OidcConfig {
        issuer_url: issuer.clone(),
        client_id: client.clone(),
        username_claim: cfg.oidc_username_claim.clone(),
        username_prefix: cfg.oidc_username_prefix.clone(),
        groups_claim: cfg.oidc_groups_claim.clone().filter(|g| !g.is_empty()),
        groups_prefix: cfg.oidc_groups_prefix.clone(),
        required_claims: required,
        signing_algs: parse_algs(&cfg.oidc_signing_algs)?,
    };
    Ok(Some(OidcAuthenticator::new(config, keys)))
}
