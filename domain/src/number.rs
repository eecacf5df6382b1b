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
pub fn count(n: i64, one: &str, many: &str) -> String {
    format!("{} {}", grouped(n), if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

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
