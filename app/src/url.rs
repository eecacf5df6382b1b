//! The site's own paths: where sign-in sends a visitor back to, and query values built for it.
//! Pure functions, shared by the server functions and the pages (no dependency on either).

/// A path of this site (`/x`), not another site's address: one leading `/` and no second one
/// or `\` after it (`//host`, `/\host` and `/<TAB>/host` are other sites to a browser), no
/// whitespace or control characters (a line break in a `Location` header would end it). The
/// only kind of `next` the sign-in page follows, on the server and in the browser.
fn is_local_path(next: &str) -> bool {
    let mut chars = next.chars();
    chars.next() == Some('/')
        && !matches!(chars.next(), Some('/' | '\\'))
        && !next
            .chars()
            .any(|c| c == '\\' || c.is_whitespace() || c.is_control())
}

/// `/login?next=<here>`: where a page sends an anonymous visitor.
pub fn sign_in_path(next: &str) -> String {
    if is_local_path(next) && next != "/" && next != "/login" {
        format!("/login?next={}", encode_query(next))
    } else {
        "/login".to_owned()
    }
}

/// Where to go after signing in: `next` when it is a path of this site, else the home page.
pub fn safe_next(next: Option<String>) -> String {
    next.filter(|n| is_local_path(n))
        .unwrap_or_else(|| "/".to_owned())
}

/// Percent-encodes what a path may hold that a query value may not.
pub fn encode_query(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '/' | '-' | '_' | '.' | '~' => c.to_string(),
            other => {
                let mut buf = [0_u8; 4];
                other
                    .encode_utf8(&mut buf)
                    .bytes()
                    .map(|b| format!("%{b:02X}"))
                    .collect()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_in_comes_back_only_to_local_paths() {
        assert_eq!(sign_in_path("/admin"), "/login?next=/admin");
        assert_eq!(sign_in_path("/orders/12"), "/login?next=/orders/12");
        assert_eq!(sign_in_path("//evil.example"), "/login");
        assert_eq!(sign_in_path("https://evil.example"), "/login");
        assert_eq!(sign_in_path("/"), "/login");
        assert_eq!(sign_in_path("/a&c"), "/login?next=/a%26c");
    }

    #[test]
    fn next_is_a_path_of_this_site_or_home() {
        let next = |s: &str| safe_next(Some(s.to_owned()));
        assert_eq!(next("/orders/12?x=1"), "/orders/12?x=1");
        for hostile in [
            "//evil.example",
            "/\\evil.example",
            "/\tx/evil.example",
            "/\t/evil.example",
            "https://evil.example",
            "evil.example",
            "/a\r\nSet-Cookie: x=1",
            "/a\0b",
            "/a b",
            "",
        ] {
            assert_eq!(next(hostile), "/", "{hostile:?}");
        }
        assert_eq!(safe_next(None), "/");
    }
}
