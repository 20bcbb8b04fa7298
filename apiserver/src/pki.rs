//! The server's PKI in `<data-dir>/pki/`: a CA, the serving certificate and
//! the admin client certificate.
//!
//! Created on first start, reused afterwards. On every start:
//! - the CA is loaded if both `ca.crt` and `ca.key` exist, and created
//!   otherwise (a CA that exists but does not parse is an error, never
//!   silently replaced: clients may trust it);
//! - a leaf certificate is (re)issued when it is missing, when the CA was
//!   just created, when it expires within [`RENEW_BEFORE`], and (serving
//!   only) when its SANs do not cover every name the server must answer to.
//!
//! Key files are written with mode 0600; every file is written to a
//! temporary name and renamed, so a crash never leaves half a key.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::net::IpAddr;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use time::{Duration, OffsetDateTime};
use x509_parser::extensions::GeneralName;

use crate::{Error, Result};

/// The admin client certificate's common name (the user name).
pub const ADMIN_USER: &str = "skein-admin";
/// The admin client certificate's organization (the group).
pub const ADMIN_GROUP: &str = "system:masters";
/// How long a new CA is valid.
pub const CA_VALIDITY: Duration = Duration::days(3650);
/// How long a new leaf certificate is valid.
pub const LEAF_VALIDITY: Duration = Duration::days(365);
/// A leaf that expires sooner than this is re-issued at start.
pub const RENEW_BEFORE: Duration = Duration::days(30);

/// A certificate and its private key, both PEM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertKey {
    /// The certificate, PEM.
    pub cert_pem: String,
    /// The private key, PKCS#8 PEM.
    pub key_pem: String,
}

/// The loaded PKI.
#[derive(Clone, Debug)]
pub struct Pki {
    /// The certificate authority that signs the other two and verifies
    /// client certificates.
    pub ca: CertKey,
    /// The HTTPS serving certificate.
    pub serving: CertKey,
    /// The admin client certificate (`skein-admin`, `system:masters`).
    pub admin: CertKey,
}

/// The names the serving certificate must cover for a server bound to
/// `bind`: `localhost`, the machine's host name, `127.0.0.1`, `::1` and the
/// bind address itself (unless it is the unspecified address).
pub fn serving_names(bind: IpAddr) -> Vec<String> {
    let mut names = vec!["localhost".to_string()];
    if let Some(host) = hostname() {
        names.push(host);
    }
    names.push("127.0.0.1".to_string());
    names.push("::1".to_string());
    if !bind.is_unspecified() {
        names.push(bind.to_string());
    }
    let mut seen = BTreeSet::new();
    names.retain(|n| seen.insert(n.clone()));
    names
}

/// The machine's host name, if it has a usable one.
fn hostname() -> Option<String> {
    let raw = fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())?;
    let name = raw.trim().to_ascii_lowercase();
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    valid.then_some(name)
}

impl Pki {
    /// Loads the PKI from `dir`, creating or re-issuing what is missing or
    /// stale (see the module docs). `serving_names` are DNS names and IP
    /// addresses (as text) the serving certificate must cover.
    pub fn load_or_create(dir: &Path, serving_names: &[String]) -> Result<Pki> {
        create_private_dir(dir)?;
        let files = Files::new(dir);
        let now = OffsetDateTime::now_utc();

        let (ca, issuer, ca_is_new) = if files.ca_cert.exists() && files.ca_key.exists() {
            let ca = read_pair(&files.ca_cert, &files.ca_key)?;
            let key = KeyPair::from_pem(&ca.key_pem).map_err(|e| bad(&files.ca_key, e))?;
            let issuer =
                Issuer::from_ca_cert_pem(&ca.cert_pem, key).map_err(|e| bad(&files.ca_cert, e))?;
            (ca, issuer, false)
        } else {
            tracing::info!(dir = %dir.display(), "generating a new certificate authority");
            let (ca, issuer) = new_ca(now)?;
            write_pair(&files.ca_cert, &files.ca_key, &ca)?;
            (ca, issuer, true)
        };

        let serving =
            match read_leaf_if_fresh(&files.serving_cert, &files.serving_key, now, ca_is_new)? {
                Some((pair, names)) if covers(&names, serving_names) => pair,
                _ => {
                    tracing::info!(names = ?serving_names, "issuing the serving certificate");
                    let pair = new_serving(&issuer, serving_names, now)?;
                    write_pair(&files.serving_cert, &files.serving_key, &pair)?;
                    pair
                }
            };

        let admin = match read_leaf_if_fresh(&files.admin_cert, &files.admin_key, now, ca_is_new)? {
            Some((pair, _)) => pair,
            None => {
                tracing::info!(user = ADMIN_USER, "issuing the admin client certificate");
                let pair = new_admin(&issuer, now)?;
                write_pair(&files.admin_cert, &files.admin_key, &pair)?;
                pair
            }
        };

        Ok(Pki { ca, serving, admin })
    }
}

/// The common name of the front-proxy client certificate, the one name
/// the `extension-apiserver-authentication` ConfigMap allows.
pub const FRONT_PROXY_CLIENT: &str = "front-proxy-client";

/// What Skein, as a host, proxies to aggregated API servers with: its own
/// front-proxy CA (which they trust for `X-Remote-*` headers, as a
/// kube-apiserver's `--requestheader-client-ca-file`) and the client
/// certificate it signs (`--proxy-client-cert-file`).
#[derive(Clone, Debug)]
pub struct FrontProxyPki {
    /// The front-proxy CA.
    pub ca: CertKey,
    /// The client certificate, CN [`FRONT_PROXY_CLIENT`].
    pub client: CertKey,
}

impl FrontProxyPki {
    /// Loads `front-proxy-ca.*` and `front-proxy-client.*` from `dir`,
    /// creating or re-issuing them as [`Pki::load_or_create`] does.
    pub fn load_or_create(dir: &Path) -> Result<FrontProxyPki> {
        create_private_dir(dir)?;
        let (ca_cert, ca_key) = (
            dir.join("front-proxy-ca.crt"),
            dir.join("front-proxy-ca.key"),
        );
        let (cert, key) = (
            dir.join("front-proxy-client.crt"),
            dir.join("front-proxy-client.key"),
        );
        let now = OffsetDateTime::now_utc();
        let (ca, issuer, ca_is_new) = if ca_cert.exists() && ca_key.exists() {
            let ca = read_pair(&ca_cert, &ca_key)?;
            let k = KeyPair::from_pem(&ca.key_pem).map_err(|e| bad(&ca_key, e))?;
            let issuer = Issuer::from_ca_cert_pem(&ca.cert_pem, k).map_err(|e| bad(&ca_cert, e))?;
            (ca, issuer, false)
        } else {
            tracing::info!(dir = %dir.display(), "generating the front-proxy certificate authority");
            let (ca, issuer) = new_named_ca(now, "skein-front-proxy-ca")?;
            write_pair(&ca_cert, &ca_key, &ca)?;
            (ca, issuer, true)
        };
        let client = match read_leaf_if_fresh(&cert, &key, now, ca_is_new)? {
            Some((pair, _)) => pair,
            None => {
                let mut params = CertificateParams::default();
                params.distinguished_name = rcgen::DistinguishedName::new();
                params
                    .distinguished_name
                    .push(DnType::CommonName, FRONT_PROXY_CLIENT);
                let pair = new_leaf(&issuer, params, ExtendedKeyUsagePurpose::ClientAuth, now)?;
                write_pair(&cert, &key, &pair)?;
                pair
            }
        };
        Ok(FrontProxyPki { ca, client })
    }
}

/// The file names under the PKI directory.
struct Files {
    ca_cert: PathBuf,
    ca_key: PathBuf,
    serving_cert: PathBuf,
    serving_key: PathBuf,
    admin_cert: PathBuf,
    admin_key: PathBuf,
}

impl Files {
    fn new(dir: &Path) -> Self {
        Files {
            ca_cert: dir.join("ca.crt"),
            ca_key: dir.join("ca.key"),
            serving_cert: dir.join("serving.crt"),
            serving_key: dir.join("serving.key"),
            admin_cert: dir.join("admin.crt"),
            admin_key: dir.join("admin.key"),
        }
    }
}

fn bad(path: &Path, reason: impl ToString) -> Error {
    Error::BadCertificate {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

fn validity(params: &mut CertificateParams, now: OffsetDateTime, lifetime: Duration) {
    // Tolerate clocks that are a little behind ours.
    params.not_before = now - Duration::hours(1);
    params.not_after = now + lifetime;
}

fn new_ca(now: OffsetDateTime) -> Result<(CertKey, Issuer<'static, KeyPair>)> {
    new_named_ca(now, "skein-ca")
}

fn new_named_ca(now: OffsetDateTime, name: &str) -> Result<(CertKey, Issuer<'static, KeyPair>)> {
    let mut params = CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    validity(&mut params, now, CA_VALIDITY);
    let key = KeyPair::generate()?;
    let cert = params.self_signed(&key)?;
    let pair = CertKey {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    };
    Ok((pair, Issuer::new(params, key)))
}

fn new_leaf(
    issuer: &Issuer<'_, KeyPair>,
    mut params: CertificateParams,
    eku: ExtendedKeyUsagePurpose,
    now: OffsetDateTime,
) -> Result<CertKey> {
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![eku];
    params.use_authority_key_identifier_extension = true;
    validity(&mut params, now, LEAF_VALIDITY);
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, issuer)?;
    Ok(CertKey {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

fn new_serving(
    issuer: &Issuer<'_, KeyPair>,
    names: &[String],
    now: OffsetDateTime,
) -> Result<CertKey> {
    let mut params = CertificateParams::new(names.to_vec())?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, "skein-apiserver");
    new_leaf(issuer, params, ExtendedKeyUsagePurpose::ServerAuth, now)
}

fn new_admin(issuer: &Issuer<'_, KeyPair>, now: OffsetDateTime) -> Result<CertKey> {
    let mut params = CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, ADMIN_USER);
    params
        .distinguished_name
        .push(DnType::OrganizationName, ADMIN_GROUP);
    new_leaf(issuer, params, ExtendedKeyUsagePurpose::ClientAuth, now)
}

/// Reads a leaf certificate and key, returning them with the certificate's
/// SANs, or `None` when they must be re-issued: missing, the CA is new, or
/// expiring within [`RENEW_BEFORE`].
fn read_leaf_if_fresh(
    cert: &Path,
    key: &Path,
    now: OffsetDateTime,
    ca_is_new: bool,
) -> Result<Option<(CertKey, Vec<String>)>> {
    if ca_is_new || !cert.exists() || !key.exists() {
        return Ok(None);
    }
    let pair = read_pair(cert, key)?;
    let (_, pem) =
        x509_parser::pem::parse_x509_pem(pair.cert_pem.as_bytes()).map_err(|e| bad(cert, e))?;
    let x509 = pem.parse_x509().map_err(|e| bad(cert, e))?;
    let not_after = x509.validity().not_after.timestamp();
    if not_after < (now + RENEW_BEFORE).unix_timestamp() {
        tracing::info!(cert = %cert.display(), "certificate expires soon; re-issuing");
        return Ok(None);
    }
    let mut names = Vec::new();
    if let Ok(Some(san)) = x509.subject_alternative_name() {
        for name in &san.value.general_names {
            match name {
                GeneralName::DNSName(dns) => names.push((*dns).to_string()),
                GeneralName::IPAddress(bytes) => {
                    if let Some(ip) = ip_from_bytes(bytes) {
                        names.push(ip.to_string());
                    }
                }
                _ => {}
            }
        }
    }
    Ok(Some((pair, names)))
}

fn ip_from_bytes(bytes: &[u8]) -> Option<IpAddr> {
    match bytes.len() {
        4 => <[u8; 4]>::try_from(bytes).ok().map(IpAddr::from),
        16 => <[u8; 16]>::try_from(bytes).ok().map(IpAddr::from),
        _ => None,
    }
}

/// Whether the certificate names `have` include every name in `want`.
/// IP addresses are compared as addresses, DNS names case-insensitively.
fn covers(have: &[String], want: &[String]) -> bool {
    let norm = |n: &String| match n.parse::<IpAddr>() {
        Ok(ip) => ip.to_string(),
        Err(_) => n.to_ascii_lowercase(),
    };
    let have: BTreeSet<String> = have.iter().map(norm).collect();
    want.iter().all(|n| have.contains(&norm(n)))
}

fn read_pair(cert: &Path, key: &Path) -> Result<CertKey> {
    let read = |p: &Path| fs::read_to_string(p).map_err(|e| Error::io("read", p, e));
    Ok(CertKey {
        cert_pem: read(cert)?,
        key_pem: read(key)?,
    })
}

fn write_pair(cert: &Path, key: &Path, pair: &CertKey) -> Result<()> {
    // Key first: a certificate on disk always has its key.
    write_atomic(key, pair.key_pem.as_bytes(), 0o600)?;
    write_atomic(cert, pair.cert_pem.as_bytes(), 0o644)
}

/// Creates `dir` (and parents) and restricts it to the owner.
fn create_private_dir(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
        .map_err(|e| Error::io("set permissions of", dir, e))
}

/// Writes `path` through a temporary file in the same directory, created
/// with `mode`, and renames it into place.
pub(crate) fn write_atomic(path: &Path, data: &[u8], mode: u32) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    // A stale temporary file may have a wider mode; start afresh.
    let _ = fs::remove_file(&tmp);
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&tmp)
        .map_err(|e| Error::io("create", &tmp, e))?;
    file.write_all(data)
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io("write", &tmp, e))?;
    fs::rename(&tmp, path).map_err(|e| Error::io("rename into", path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use x509_parser::prelude::X509Certificate;

    fn names() -> Vec<String> {
        serving_names("127.0.0.1".parse().expect("ip"))
    }

    fn with_cert<T>(pem: &str, f: impl FnOnce(&X509Certificate<'_>) -> T) -> T {
        let (_, pem) = x509_parser::pem::parse_x509_pem(pem.as_bytes()).expect("pem");
        let cert = pem.parse_x509().expect("x509");
        f(&cert)
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).expect("stat").permissions().mode() & 0o777
    }

    #[test]
    fn first_start_generates_everything() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pki = Pki::load_or_create(dir.path(), &names()).expect("pki");
        for f in ["ca", "serving", "admin"] {
            assert!(dir.path().join(format!("{f}.crt")).exists(), "{f}.crt");
            assert_eq!(
                mode(&dir.path().join(format!("{f}.key"))),
                0o600,
                "{f}.key mode"
            );
        }
        assert_eq!(mode(dir.path()), 0o700);

        with_cert(&pki.ca.cert_pem, |ca| {
            assert!(ca.is_ca());
            assert_eq!(ca.subject().to_string(), "CN=skein-ca");
        });
        with_cert(&pki.admin.cert_pem, |admin| {
            let cn: Vec<_> = admin.subject().iter_common_name().collect();
            let org: Vec<_> = admin.subject().iter_organization().collect();
            assert_eq!(cn[0].as_str().expect("cn"), ADMIN_USER);
            assert_eq!(org[0].as_str().expect("o"), ADMIN_GROUP);
            assert_eq!(admin.issuer().to_string(), "CN=skein-ca");
        });
        with_cert(&pki.serving.cert_pem, |serving| {
            let san = serving
                .subject_alternative_name()
                .expect("san ext")
                .expect("san present");
            let text = format!("{:?}", san.value.general_names);
            assert!(text.contains("DNSName(\"localhost\")"), "{text}");
            assert!(text.contains("IPAddress([127, 0, 0, 1])"), "{text}");
            assert!(
                text.contains("IPAddress([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])"),
                "{text}"
            );
        });
    }

    #[test]
    fn second_start_reuses_everything() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = Pki::load_or_create(dir.path(), &names()).expect("pki");
        let second = Pki::load_or_create(dir.path(), &names()).expect("pki");
        assert_eq!(first.ca, second.ca);
        assert_eq!(first.serving, second.serving);
        assert_eq!(first.admin, second.admin);
    }

    #[test]
    fn new_bind_address_reissues_only_the_serving_cert() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = Pki::load_or_create(dir.path(), &names()).expect("pki");
        let wider = serving_names("10.1.2.3".parse().expect("ip"));
        let second = Pki::load_or_create(dir.path(), &wider).expect("pki");
        assert_eq!(first.ca, second.ca);
        assert_eq!(first.admin, second.admin);
        assert_ne!(first.serving, second.serving);
        with_cert(&second.serving.cert_pem, |s| {
            let text = format!("{:?}", s.subject_alternative_name().expect("ext"));
            assert!(text.contains("IPAddress([10, 1, 2, 3])"), "{text}");
        });
        // And it then stays.
        let third = Pki::load_or_create(dir.path(), &wider).expect("pki");
        assert_eq!(second.serving, third.serving);
    }

    #[test]
    fn lost_ca_reissues_the_leaves() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = Pki::load_or_create(dir.path(), &names()).expect("pki");
        fs::remove_file(dir.path().join("ca.key")).expect("rm");
        let second = Pki::load_or_create(dir.path(), &names()).expect("pki");
        assert_ne!(first.ca, second.ca);
        assert_ne!(first.serving, second.serving);
        assert_ne!(first.admin, second.admin);
    }

    #[test]
    fn corrupt_ca_is_an_error_not_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        Pki::load_or_create(dir.path(), &names()).expect("pki");
        fs::write(dir.path().join("ca.crt"), "garbage").expect("write");
        let err = Pki::load_or_create(dir.path(), &names()).expect_err("must fail");
        assert!(matches!(err, Error::BadCertificate { .. }), "{err}");
        assert_eq!(
            fs::read_to_string(dir.path().join("ca.crt")).expect("read"),
            "garbage"
        );
    }

    #[test]
    fn covers_compares_addresses_and_case() {
        let have = vec!["LocalHost".to_string(), "0:0:0:0:0:0:0:1".to_string()];
        assert!(covers(&have, &["localhost".to_string(), "::1".to_string()]));
        assert!(!covers(&have, &["127.0.0.1".to_string()]));
    }
}
