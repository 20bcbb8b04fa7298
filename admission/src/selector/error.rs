//! The one error type of the selector module.

/// A selector that could not be parsed, or that names a field the kind does
/// not support.
///
/// Every variant carries the exact message kube-apiserver v1.33 produces for
/// the same input, so clients see identical text. The HTTP layer renders any
/// variant as `400 BadRequest`: a `metav1.Status` with `status: Failure`,
/// `reason: BadRequest`, `code: 400` and `message` set to [`Self::message`]
/// (upstream wraps all of these in `errors.NewBadRequest(err.Error())`).
/// kubectl then prints `Error from server (BadRequest): Unable to find
/// "pods" that match label selector "…", field selector "…": <message>`.
///
/// None of these is worth logging: they are bad user input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// The `labelSelector` string does not parse (upstream `labels.Parse`),
    /// e.g. `unable to parse requirement: found '', expected: identifier`.
    #[error("{0}")]
    Label(String),
    /// A `metav1.LabelSelector` (a Deployment's `spec.selector`) is not a
    /// valid selector (upstream `metav1.LabelSelectorAsSelector`).
    #[error("{0}")]
    LabelSelector(String),
    /// The `fieldSelector` string does not parse (upstream
    /// `fields.ParseSelector`), e.g. `invalid selector: 'a'; can't understand 'a'`.
    #[error("{0}")]
    Field(String),
    /// The field selector names a field that the kind does not support
    /// (upstream field label conversion), e.g. `field label not supported: x`.
    #[error("{0}")]
    UnsupportedField(String),
}

impl SelectorError {
    /// The message as kube-apiserver words it; goes into `Status.message`.
    pub fn message(&self) -> &str {
        match self {
            Self::Label(m)
            | Self::LabelSelector(m)
            | Self::Field(m)
            | Self::UnsupportedField(m) => m,
        }
    }

    /// The HTTP status code: always 400.
    pub fn code(&self) -> u16 {
        400
    }

    /// The `metav1.Status` reason: always `BadRequest`.
    pub fn reason(&self) -> &'static str {
        "BadRequest"
    }
}

/// `Result` with [`SelectorError`] as the default error.
pub type Result<T, E = SelectorError> = std::result::Result<T, E>;
