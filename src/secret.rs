//! [`Secret`]: a setting that must never reach a log line. Its own module, so that the
//! configuration and the parts that use a secret (the SMS webhook, the payment provider) import
//! it from one place and not from each other.

use std::fmt;

/// A string that must not reach logs: `Debug` prints `Secret(…)`, and only [`Secret::expose`]
/// gives the value, where it is used.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(…)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_does_not_print() {
        let s = Secret::new("whsec_hunter2");
        assert_eq!(format!("{s:?}"), "Secret(…)");
        assert_eq!(s.expose(), "whsec_hunter2");
    }
}
