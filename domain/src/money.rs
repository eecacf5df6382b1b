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

    /// The symbol people read before an amount of this currency, and its minor units' digits
    /// (ISO 4217's exponent): `¥` and 2 for `cny`, `€` and 2 for `eur`, `¥` and 0 for `jpy`.
    /// A currency without a symbol here is written with its code (`CHF 9.90`).
    fn style(&self) -> (&str, u32) {
        match self.0.as_str() {
            "cny" => ("¥", 2),
            "eur" => ("€", 2),
            "usd" => ("$", 2),
            "gbp" => ("£", 2),
            "hkd" => ("HK$", 2),
            "twd" => ("NT$", 2),
            "sgd" => ("S$", 2),
            "jpy" => ("¥", 0),
            "krw" => ("₩", 0),
            _ => ("", 2),
        }
    }

    /// The symbol before an amount (the code and a space where there is no symbol).
    pub fn symbol(&self) -> String {
        match self.style() {
            ("", _) => format!("{} ", self.0.to_ascii_uppercase()),
            (symbol, _) => symbol.to_owned(),
        }
    }

    /// `minor` units as people read the amount: `¥9.90`, `€1200.00`, `¥990` (yen have no minor
    /// unit), `CHF 9.90`, `-¥0.05`. The one formatter of every price the shop shows.
    pub fn format(&self, minor: i64) -> String {
        let sign = if minor < 0 { "-" } else { "" };
        format!(
            "{sign}{}{}",
            self.symbol(),
            self.decimal(minor.unsigned_abs())
        )
    }

    /// `minor` units as a plain decimal number in the currency's major unit, for a spreadsheet
    /// to add up: `9.90`, `-0.05`, `990` (yen).
    pub fn amount(&self, minor: i64) -> String {
        let sign = if minor < 0 { "-" } else { "" };
        format!("{sign}{}", self.decimal(minor.unsigned_abs()))
    }

    fn decimal(&self, abs: u64) -> String {
        let (_, digits) = self.style();
        if digits == 0 {
            return abs.to_string();
        }
        let unit = 10u64.pow(digits);
        let width = digits as usize;
        format!("{}.{:0width$}", abs / unit, abs % unit)
    }
}

impl Default for Currency {
    /// The shop's default currency (`SECKILL_CURRENCY`): Chinese yuan.
    fn default() -> Self {
        Self("cny".to_owned())
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

    #[test]
    fn an_amount_reads_in_its_own_currency() {
        let of = |code: &str, minor| code.parse::<Currency>().expect("code").format(minor);
        assert_eq!(of("cny", 990), "¥9.90");
        assert_eq!(of("cny", 5), "¥0.05");
        assert_eq!(of("cny", 120_000), "¥1200.00");
        assert_eq!(of("cny", -5), "-¥0.05");
        assert_eq!(of("EUR", 990), "€9.90");
        assert_eq!(of("usd", 1), "$0.01");
        assert_eq!(of("jpy", 990), "¥990");
        assert_eq!(of("chf", 990), "CHF 9.90");
        assert_eq!(Currency::default().format(0), "¥0.00");
    }

    #[test]
    fn an_amount_for_a_spreadsheet_is_a_plain_number() {
        let of = |code: &str, minor| code.parse::<Currency>().expect("code").amount(minor);
        assert_eq!(of("cny", 990), "9.90");
        assert_eq!(of("cny", -5), "-0.05");
        assert_eq!(of("jpy", 990), "990");
        assert_eq!(of("chf", 120_000), "1200.00");
    }
}
