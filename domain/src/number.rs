//! Numbers as people read them: thousands separators, and a count with its noun's plural.

/// `n` with a comma every three digits: `100000000` → `"100,000,000"`.
pub fn grouped(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `n` and the noun that goes with it: `count(1, "order", "orders")` → `"1 order"`,
/// `count(2000, …)` → `"2,000 orders"`.
/// An amount of money typed in yuan (`9.90`, `9.9`, `9`, `¥12.50`) in fen (cents); `None` for
/// anything else (a sign, a third decimal, letters, an amount past `i64`).
pub fn cents_from_yuan(text: &str) -> Option<i64> {
    let text = text.trim();
    let text = text
        .strip_prefix('¥')
        .or_else(|| text.strip_prefix('￥'))
        .unwrap_or(text)
        .trim();
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || fraction.len() > 2 {
        return None;
    }
    let fen: i64 = format!("{fraction:0<2}").parse().ok()?;
    whole
        .parse::<i64>()
        .ok()?
        .checked_mul(100)?
        .checked_add(fen)
}

pub fn count(n: i64, one: &str, many: &str) -> String {
    format!("{} {}", grouped(n), if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yuan_are_read_into_fen() {
        assert_eq!(cents_from_yuan("9.90"), Some(990));
        assert_eq!(cents_from_yuan(" 9.9 "), Some(990));
        assert_eq!(cents_from_yuan("9"), Some(900));
        assert_eq!(cents_from_yuan("¥12.05"), Some(1205));
        assert_eq!(cents_from_yuan("0"), Some(0));
        for bad in [
            "",
            "-1",
            "9.999",
            "9,90",
            "abc",
            "1e3",
            ".5",
            "9.",
            "99999999999999999999",
        ] {
            let expected = if bad == "9." { Some(900) } else { None };
            assert_eq!(cents_from_yuan(bad), expected, "{bad:?}");
        }
    }

    #[test]
    fn groups_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(100_000_000), "100,000,000");
        assert_eq!(grouped(-12_345), "-12,345");
    }

    #[test]
    fn counts_take_the_right_noun() {
        assert_eq!(count(1, "order", "orders"), "1 order");
        assert_eq!(count(0, "order", "orders"), "0 orders");
        assert_eq!(count(2_000, "order", "orders"), "2,000 orders");
    }
}
