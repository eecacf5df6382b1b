//! Money's unit: an ISO 4217 currency code. Amounts stay integer minor units (`price_cents`:
//! fen for `cny`), as the payment providers count them.

use std::{fmt, str::FromStr};

/// A currency as payment providers name it: three lower-case ASCII letters (`cny`, `eur`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Currency(String);

/// Why a value is not a currency code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a currency is a three-letter ISO 4217 code such as cny or eur")]
pub struct CurrencyError;

impl Currency {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for Currency {
    type Err = CurrencyError;

    /// Letters in either case; kept in lower case, as Stripe writes them.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.len() == 3 && s.bytes().all(|b| b.is_ascii_alphabetic()) {
            Ok(Self(s.to_ascii_lowercase()))
        } else {
            Err(CurrencyError)
        }
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_currency_is_three_letters_kept_in_lower_case() {
        assert_eq!(
            "CNY".parse::<Currency>().map(|c| c.to_string()),
            Ok("cny".into())
        );
        assert_eq!(
            " eur ".parse::<Currency>().map(|c| c.to_string()),
            Ok("eur".into())
        );
        for bad in ["", "yuan", "c1y", "cn", "¥¥¥"] {
            assert_eq!(bad.parse::<Currency>(), Err(CurrencyError), "{bad:?}");
        }
    }
}
