//! Bearer-token authentication for the MCP endpoint.
//!
//! Tokens are compared in constant time (per configured token, no early exit on the
//! first differing byte), so response timing does not reveal how much of a guess
//! was right. Only the length of a token can leak, which tells an attacker little
//! about a long random token.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// The accepted tokens; empty means authentication is off.
#[derive(Clone, Default)]
pub struct BearerTokens(Arc<Vec<Vec<u8>>>);

impl std::fmt::Debug for BearerTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print secrets, only how many there are.
        write!(f, "BearerTokens({} configured)", self.0.len())
    }
}

impl BearerTokens {
    pub fn new(tokens: impl IntoIterator<Item = String>) -> Self {
        BearerTokens(Arc::new(
            tokens
                .into_iter()
                .map(|t| t.trim().as_bytes().to_vec())
                .filter(|t| !t.is_empty())
                .collect(),
        ))
    }

    /// Tokens from a file: one per line; blank lines and `#` comments are skipped.
    pub fn parse_file(contents: &str) -> Vec<String> {
        contents
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(String::from)
            .collect()
    }

    pub fn is_enabled(&self) -> bool {
        !self.0.is_empty()
    }

    /// Whether an `Authorization` header value carries one of the tokens.
    pub fn accepts(&self, authorization: Option<&[u8]>) -> bool {
        let Some(presented) = authorization.and_then(bearer_credentials) else {
            return false;
        };
        // Check every token (no short-circuit) so timing does not tell which matched.
        self.0.iter().fold(false, |found, token| {
            found | constant_time_eq(token, presented)
        })
    }
}

/// `Bearer <token>` → the token (scheme is case-insensitive, RFC 7235).
fn bearer_credentials(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    let token = rest.trim_ascii();
    (!token.is_empty()).then_some(token)
}

/// Equal bytes, in time that depends only on the lengths.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    // black_box keeps the optimizer from turning the fold into an early-exit compare.
    std::hint::black_box(diff) == 0
}

/// axum middleware: 401 with `WWW-Authenticate: Bearer` unless a valid token is sent.
pub async fn require_bearer(
    State(tokens): State<BearerTokens>,
    request: Request,
    next: Next,
) -> Response {
    if !tokens.is_enabled() {
        return next.run(request).await;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    if tokens.accepts(presented) {
        return next.run(request).await;
    }
    let challenge = if presented.is_some() {
        r#"Bearer error="invalid_token""#
    } else {
        "Bearer"
    };
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, challenge)],
        "a valid bearer token is required (Authorization: Bearer <token>)\n",
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_eq_is_equality() {
        assert!(constant_time_eq(b"secret-token", b"secret-token"));
        assert!(!constant_time_eq(b"secret-token", b"secret-tokeN"));
        assert!(!constant_time_eq(b"secret-token", b"Secret-token"));
        assert!(!constant_time_eq(b"secret", b"secret-token"));
        assert!(constant_time_eq(b"", b""));
    }

    #[test]
    fn accepts_only_configured_bearer_tokens() {
        let tokens = BearerTokens::new(["alpha-1".to_string(), "beta-2".to_string()]);
        assert!(tokens.is_enabled());
        assert!(tokens.accepts(Some(b"Bearer alpha-1")));
        assert!(tokens.accepts(Some(b"bearer beta-2")));
        assert!(tokens.accepts(Some(b"Bearer  beta-2 ")));
        assert!(!tokens.accepts(Some(b"Bearer alpha-2")));
        assert!(!tokens.accepts(Some(b"Basic alpha-1")));
        assert!(!tokens.accepts(Some(b"alpha-1")));
        assert!(!tokens.accepts(Some(b"Bearer ")));
        assert!(!tokens.accepts(None));
    }

    #[test]
    fn token_file_skips_blanks_and_comments() {
        let parsed = BearerTokens::parse_file("# ops team\nalpha-1\n\n  beta-2  \n");
        assert_eq!(parsed, ["alpha-1", "beta-2"]);
        assert!(!BearerTokens::new(["  ".to_string()]).is_enabled());
    }
}
