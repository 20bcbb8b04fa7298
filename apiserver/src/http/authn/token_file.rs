//! The `--token-auth-file` authenticator: the CSV file (see the parent
//! module's documentation for the format and why tokens are kept as
//! digests) and its lookup.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::UserInfo;

/// The users of a `--token-auth-file`, keyed by the SHA-256 digest of their
/// token (see the [module docs](self) for why).
pub struct TokenAuthenticator {
    users: HashMap<[u8; 32], UserInfo>,
}

impl std::fmt::Debug for TokenAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenAuthenticator")
            .field("users", &self.users.len())
            .finish()
    }
}

pub(super) fn digest(token: &[u8]) -> [u8; 32] {
    Sha256::digest(token).into()
}

impl TokenAuthenticator {
    /// Reads and parses the token file at `path`, logging each
    /// [`TokenFileWarning`]. Any error is fatal for startup.
    pub fn load(path: &Path) -> Result<Self, TokenFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| TokenFileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let (tokens, warnings) = Self::parse(&text).map_err(|error| TokenFileError::Syntax {
            path: path.to_path_buf(),
            error,
        })?;
        for w in warnings {
            tracing::warn!(file = %path.display(), "token file: {w}");
        }
        tracing::info!(file = %path.display(), users = tokens.len(), "loaded static bearer tokens");
        Ok(tokens)
    }

    /// Parses a token file's contents (format in the [module docs](self)).
    /// Records that upstream skips or overrides come back as warnings.
    pub fn parse(text: &str) -> Result<(Self, Vec<TokenFileWarning>), SyntaxError> {
        let mut users = HashMap::new();
        let mut seen: HashMap<[u8; 32], usize> = HashMap::new();
        let mut warnings = Vec::new();
        for Record { line, fields } in read_csv(text)? {
            if fields.len() < 3 {
                return Err(SyntaxError {
                    line,
                    reason: format!(
                        "must have at least 3 columns (token, user name, user uid), found {}",
                        fields.len()
                    ),
                });
            }
            let groups = fields
                .get(3)
                .map(|g| g.split(',').map(str::to_string).collect())
                .unwrap_or_default();
            // At least 3 fields, so the defaults are never used.
            let mut fields = fields.into_iter();
            let token = fields.next().unwrap_or_default();
            let name = fields.next().unwrap_or_default();
            let uid = fields.next().unwrap_or_default();
            if token.is_empty() {
                warnings.push(TokenFileWarning::EmptyToken { line });
                continue;
            }
            let key = digest(token.as_bytes());
            if let Some(earlier) = seen.insert(key, line) {
                warnings.push(TokenFileWarning::DuplicateToken { line, earlier });
            }
            let uid = (!uid.is_empty()).then_some(uid);
            users.insert(key, UserInfo::authenticated(name, uid, groups));
        }
        Ok((TokenAuthenticator { users }, warnings))
    }

    /// The user whose token is `token`, if any.
    pub fn authenticate_token(&self, token: &[u8]) -> Option<&UserInfo> {
        self.users.get(&digest(token))
    }

    /// How many tokens there are.
    pub fn len(&self) -> usize {
        self.users.len()
    }

    /// Whether there are no tokens at all (every bearer token is then
    /// rejected, as upstream does with an empty file).
    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }
}

/// Why `--token-auth-file` could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// The file could not be read (missing, unreadable, not UTF-8).
    #[error("cannot read --token-auth-file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid token file.
    #[error("invalid --token-auth-file {}: {error}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// Where and what.
        error: SyntaxError,
    },
}

/// A malformed token file: the (1-based) line and what is wrong there.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct SyntaxError {
    /// The line.
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

/// A token-file record that is accepted but not used as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenFileWarning {
    /// The token column is empty; the record is skipped.
    EmptyToken {
        /// The record's line.
        line: usize,
    },
    /// The token was already used on `earlier`; this record replaces that.
    DuplicateToken {
        /// The record's line.
        line: usize,
        /// The line of the record it replaces.
        earlier: usize,
    },
}

impl std::fmt::Display for TokenFileWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenFileWarning::EmptyToken { line } => {
                write!(f, "line {line}: empty token; the record is skipped")
            }
            TokenFileWarning::DuplicateToken { line, earlier } => write!(
                f,
                "line {line}: duplicate token (also on line {earlier}); line {line} wins"
            ),
        }
    }
}

/// One CSV record and the (1-based) line it starts on.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Record {
    line: usize,
    fields: Vec<String>,
}

/// One physical line as Go's `csv.Reader.readLine` returns it: the text
/// without its line end (a `\r\n` end, or a `\r` before end of file, is
/// dropped), and whether a `\n` ended it.
pub(super) struct Line<'a> {
    text: &'a str,
    newline: bool,
}

pub(super) fn lines(text: &str) -> Vec<Line<'_>> {
    text.split_inclusive('\n')
        .map(|seg| match seg.strip_suffix('\n') {
            Some(body) => Line {
                text: body.strip_suffix('\r').unwrap_or(body),
                newline: true,
            },
            None => Line {
                text: seg.strip_suffix('\r').unwrap_or(seg),
                newline: false,
            },
        })
        .collect()
}

pub(super) const BARE_QUOTE: &str = "bare \" in non-quoted-field";
pub(super) const BAD_QUOTE: &str = "extraneous or missing \" in quoted-field";

pub(super) fn parse_error(record: usize, line: usize, column: usize, what: &str) -> SyntaxError {
    let reason = if record == line {
        format!("column {column}: {what}")
    } else {
        format!("column {column}: {what} (in the record that starts on line {record})")
    };
    SyntaxError { line, reason }
}

/// Go's `encoding/csv` reader with its defaults (comma `,`, no comment
/// character, no space trimming, strict quotes) and any number of fields
/// per record; a port of its `readRecord`, column numbers included (1-based
/// bytes).
pub(super) fn read_csv(text: &str) -> Result<Vec<Record>, SyntaxError> {
    let lines = lines(text);
    let mut next = 0;
    let mut records = Vec::new();
    while let Some(first) = lines.get(next) {
        next += 1;
        if first.text.is_empty() {
            continue; // Empty lines are skipped.
        }
        let record_line = next;
        let (mut line, mut newline, mut line_no) = (first.text, first.newline, next);
        let mut column = 1;
        let mut fields = Vec::new();
        'fields: loop {
            if !line.starts_with('"') {
                let (field, rest) = match line.split_once(',') {
                    Some((field, rest)) => (field, Some(rest)),
                    None => (line, None),
                };
                if let Some(q) = field.find('"') {
                    return Err(parse_error(record_line, line_no, column + q, BARE_QUOTE));
                }
                fields.push(field.to_string());
                match rest {
                    Some(rest) => {
                        column += field.len() + 1;
                        line = rest;
                    }
                    None => break 'fields,
                }
                continue;
            }
            // A quoted field: `""` is a quote; it may span lines.
            line = &line[1..];
            column += 1;
            let mut field = String::new();
            loop {
                if let Some(q) = line.find('"') {
                    field.push_str(&line[..q]);
                    line = &line[q + 1..];
                    column += q + 1;
                    if let Some(rest) = line.strip_prefix('"') {
                        field.push('"');
                        line = rest;
                        column += 1;
                    } else if let Some(rest) = line.strip_prefix(',') {
                        fields.push(field);
                        line = rest;
                        column += 1;
                        continue 'fields;
                    } else if line.is_empty() {
                        fields.push(field);
                        break 'fields;
                    } else {
                        return Err(parse_error(record_line, line_no, column - 1, BAD_QUOTE));
                    }
                } else if !line.is_empty() || newline {
                    field.push_str(line);
                    if newline {
                        field.push('\n');
                    }
                    column += line.len() + usize::from(newline);
                    match lines.get(next) {
                        Some(l) => {
                            next += 1;
                            (line, newline) = (l.text, l.newline);
                            if !line.is_empty() || newline {
                                line_no += 1;
                                column = 1;
                            }
                        }
                        None => (line, newline) = ("", false),
                    }
                } else {
                    // End of file inside the quotes.
                    return Err(parse_error(record_line, line_no, column, BAD_QUOTE));
                }
            }
        }
        records.push(Record {
            line: record_line,
            fields,
        });
    }
    Ok(records)
}
