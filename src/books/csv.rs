//! Rows of CSV as RFC 4180 writes them (fields separated by commas, a field holding a comma, a
//! quote or a line break quoted with its quotes doubled, CRLF after each row), with one guard
//! for the spreadsheets that open it: free text that starts like a formula (`=`, `+`, `-`,
//! `@`, a tab or a carriage return) is written after a `'`, so an admin's title such as
//! `=HYPERLINK(…)` reads as text and never runs (OWASP's CSV injection advice).

/// One row being written into `out`.
pub struct Row<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Row<'a> {
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        Self { out, first: true }
    }

    /// A field the shop wrote itself: a number, a code, a time.
    pub fn plain(&mut self, value: &str) -> &mut Self {
        self.field(value, false)
    }

    /// A field someone typed (a title, a provider's message): guarded against formulas.
    pub fn text(&mut self, value: &str) -> &mut Self {
        self.field(value, true)
    }

    /// An optional field: empty when absent.
    pub fn maybe(&mut self, value: Option<&str>) -> &mut Self {
        self.field(value.unwrap_or(""), true)
    }

    /// Ends the row.
    pub fn end(&mut self) {
        self.out.extend_from_slice(b"\r\n");
    }

    fn field(&mut self, value: &str, typed: bool) -> &mut Self {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        let guard = typed && value.starts_with(['=', '+', '-', '@', '\t', '\r']);
        let quoted = guard || value.contains([',', '"', '\r', '\n']);
        if quoted {
            self.out.push(b'"');
        }
        if guard {
            self.out.push(b'\'');
        }
        for b in value.bytes() {
            if b == b'"' {
                self.out.push(b'"');
            }
            self.out.push(b);
        }
        if quoted {
            self.out.push(b'"');
        }
        self
    }
}

/// The header row of `names`.
pub fn header(out: &mut Vec<u8>, names: &[&str]) {
    let mut row = Row::new(out);
    for name in names {
        row.plain(name);
    }
    row.end();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(fields: &[(&str, bool)]) -> String {
        let mut out = Vec::new();
        let mut r = Row::new(&mut out);
        for (value, typed) in fields {
            if *typed {
                r.text(value);
            } else {
                r.plain(value);
            }
        }
        r.end();
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn fields_are_quoted_only_when_they_must_be() {
        assert_eq!(
            row(&[("1", false), ("a b", true), ("", true)]),
            "1,a b,\r\n"
        );
        assert_eq!(
            row(&[("a,b", true), ("say \"hi\"", true), ("two\nlines", true)]),
            "\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\"\r\n"
        );
        assert_eq!(row(&[("秒杀, 9.9 元", true)]), "\"秒杀, 9.9 元\"\r\n");
    }

    #[test]
    fn typed_text_never_reads_as_a_formula_but_numbers_stay_numbers() {
        assert_eq!(
            row(&[
                ("=HYPERLINK(\"http://x\")", true),
                ("+1", true),
                ("@a", true)
            ]),
            "\"'=HYPERLINK(\"\"http://x\"\")\",\"'+1\",\"'@a\"\r\n"
        );
        assert_eq!(row(&[("-0.05", false)]), "-0.05\r\n");
    }
}
