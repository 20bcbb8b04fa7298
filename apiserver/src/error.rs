//! The crate's error type: everything that can stop `skein serve` from
//! starting. Request-time errors are [`crate::status::ApiError`].

use std::path::PathBuf;

/// Why the server could not start or keep running.
///
/// None of these are retryable by the server itself; `main` reports them
/// and exits non-zero.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading, writing or creating a file or directory failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done ("read", "write", "create directory", ...).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A certificate or key on disk could not be understood.
    #[error("invalid certificate material in {}: {reason}", path.display())]
    BadCertificate {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Generating or signing a certificate failed.
    #[error("certificate generation failed: {0}")]
    CertGen(#[from] rcgen::Error),
    /// The TLS configuration was rejected by rustls.
    #[error("TLS configuration: {0}")]
    Tls(#[from] rustls::Error),
    /// The client-certificate verifier could not be built.
    #[error("client certificate verifier: {0}")]
    ClientVerifier(#[from] rustls::server::VerifierBuilderError),
    /// Binding the listening socket failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: std::net::SocketAddr,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A configuration file or flag value is invalid; the message is the
    /// whole text (upstream's where kube-apiserver has one).
    #[error("{0}")]
    Config(String),
    /// The store could not be opened.
    #[error("storage: {0}")]
    Storage(#[from] skein_storage::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An [`Error::Io`] for `path`.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
