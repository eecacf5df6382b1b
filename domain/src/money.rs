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

    /// An amount as an admin types it (`9.90`, `9.9`, `¥12.05`, `990` for yen), in minor
    /// units: the inverse of [`Currency::amount`], read with this currency's own decimals, so a
    /// yen price is not taken for hundredths. `None` for anything else (a sign, a comma, more
    /// decimals than the currency has, an amount past `i64`).
    pub fn minor_from(&self, text: &str) -> Option<i64> {
        let (symbol, digits) = self.style();
        let text = text.trim();
        let code = self.0.to_ascii_uppercase();
        let text = [symbol, "\u{ffe5}", code.as_str()]
            .into_iter()
            .filter(|prefix| !prefix.is_empty() && (*prefix != "\u{ffe5}" || symbol == "¥"))
            .find_map(|prefix| text.strip_prefix(prefix))
            .unwrap_or(text)
            .trim();
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() || !all_digits(whole) || !all_digits(fraction) {
            return None;
        }
        let width = digits as usize;
        if fraction.len() > width {
            return None;
        }
        let minor: i64 = match width {
            0 => 0,
            _ => format!("{fraction:0<width$}").parse().ok()?,
        };
        whole
            .parse::<i64>()
            .ok()?
            .checked_mul(10i64.pow(digits))?
            .checked_add(minor)
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

#[cfg(test)]
mod minor_tests {
    use super::Currency;

    fn currency(code: &str) -> Currency {
        code.parse().expect("a currency")
    }

    #[test]
    fn amounts_are_read_with_the_currencys_own_decimals() {
        let cny = currency("cny");
        assert_eq!(cny.minor_from("9.90"), Some(990));
        assert_eq!(cny.minor_from(" 9.9 "), Some(990));
        assert_eq!(cny.minor_from("9"), Some(900));
        assert_eq!(cny.minor_from("¥12.05"), Some(1205));
        assert_eq!(cny.minor_from("\u{ffe5}12.05"), Some(1205));
        assert_eq!(cny.minor_from("0"), Some(0));
        assert_eq!(cny.minor_from("9."), Some(900));
        for bad in [
            "",
            "-1",
            "9.999",
            "9,90",
            "abc",
            "1e3",
            ".5",
            "99999999999999999999",
        ] {
            assert_eq!(cny.minor_from(bad), None, "{bad:?}");
        }
        // Yen have no minor unit: 990 is ¥990, not ¥99,000, and the form's value reads back
        // as itself.
        let jpy = currency("jpy");
        assert_eq!(jpy.minor_from("990"), Some(990));
        assert_eq!(jpy.minor_from("¥990"), Some(990));
        assert_eq!(jpy.minor_from("9.90"), None);
        for minor in [0, 5, 990, 123_456] {
            assert_eq!(jpy.minor_from(&jpy.amount(minor)), Some(minor));
            assert_eq!(cny.minor_from(&cny.amount(minor)), Some(minor));
            let chf = currency("chf");
            assert_eq!(chf.minor_from(&chf.amount(minor)), Some(minor));
        }
        assert_eq!(currency("chf").minor_from("CHF 9.90"), Some(990));
    }
}
