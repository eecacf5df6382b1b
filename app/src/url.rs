//! The site's own paths: where sign-in sends a visitor back to, and query values built for it.
//! Pure functions, shared by the server functions and the pages (no dependency on either).

use domain::VoucherId;

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

/// The switch to `lang` that comes back to `next` (a local path and query).
pub fn language_switch(lang: i18n::Lang, next: &str) -> String {
    format!("/lang?to={}&next={}", lang.tag(), encode_query(next))
}

/// The path and query of the page being rendered (server; the path alone in an island).
pub fn current_path_and_query() -> String {
    #[cfg(feature = "ssr")]
    if let Some(parts) = leptos::prelude::use_context::<http::request::Parts>() {
        return parts
            .uri
            .path_and_query()
            .map_or_else(|| "/".to_owned(), |pq| pq.as_str().to_owned());
    }
    crate::components::current_path()
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

/// What happened in the console's manage panel, said back to a browser without JavaScript.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ManageDone {
    Ended,
    Added,
    Edited,
}

impl ManageDone {
    fn as_str(self) -> &'static str {
        match self {
            Self::Ended => "ended",
            Self::Added => "added",
            Self::Edited => "edited",
        }
    }
}

/// A part of a title to look for, as typed: trimmed, without control characters, at most
/// [`domain::MAX_TITLE_CHARS`] characters; `None` when nothing is left.
pub fn title_part(raw: &str) -> Option<String> {
    let clean: String = raw
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .trim()
        .chars()
        .take(domain::MAX_TITLE_CHARS)
        .collect();
    (!clean.is_empty()).then_some(clean)
}

/// The console's address and what its query says
/// (`/admin?q=…&status=…&cursor=…&chart=…&created=…&manage=…&done=…`): read by the console
/// page, written by its links and by the server functions that send a plain form back to it.
/// Unknown or malformed values read as absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConsoleQuery {
    /// The voucher whose sales the chart shows (else the newest that sold).
    pub chart: Option<VoucherId>,
    /// A voucher just created, to confirm.
    pub created: Option<VoucherId>,
    /// The sale the manage panel is open on.
    pub manage: Option<VoucherId>,
    /// What the manage panel just did.
    pub done: Option<ManageDone>,
    /// A part of the title the rows' sales have.
    pub q: Option<String>,
    /// Where the rows' sales stand.
    pub status: Option<domain::SaleStage>,
    /// The rows start after this place (else the newest, or the row of `created` or `manage`).
    pub cursor: Option<domain::SaleCursor>,
}

impl ConsoleQuery {
    pub fn chart(id: VoucherId) -> Self {
        Self {
            chart: Some(id),
            ..Self::default()
        }
    }

    pub fn created(id: VoucherId) -> Self {
        Self {
            created: Some(id),
            ..Self::default()
        }
    }

    pub fn manage(id: VoucherId, done: Option<ManageDone>) -> Self {
        Self {
            manage: Some(id),
            done,
            ..Self::default()
        }
    }

    /// Reads the query through `get` (a query map's lookup).
    pub fn parse(get: impl Fn(&str) -> Option<String>) -> Self {
        let id = |k: &str| {
            get(k)
                .and_then(|s| s.parse::<i64>().ok())
                .and_then(|n| VoucherId::try_from(n).ok())
        };
        Self {
            chart: id("chart"),
            created: id("created"),
            manage: id("manage"),
            done: match get("done").as_deref() {
                Some("ended") => Some(ManageDone::Ended),
                Some("added") => Some(ManageDone::Added),
                Some("edited") => Some(ManageDone::Edited),
                _ => None,
            },
            q: get("q").as_deref().and_then(title_part),
            status: get("status").as_deref().and_then(domain::SaleStage::parse),
            cursor: get("cursor").as_deref().and_then(domain::SaleCursor::parse),
        }
    }

    /// The same sales (search and chart) from `cursor` on (`None`: the newest).
    pub fn at(&self, cursor: Option<domain::SaleCursor>) -> Self {
        Self {
            chart: self.chart,
            q: self.q.clone(),
            status: self.status,
            cursor,
            ..Self::default()
        }
    }

    /// The same rows charting `chart`.
    pub fn charting(&self, chart: VoucherId) -> Self {
        Self {
            chart: Some(chart),
            ..self.at(self.cursor)
        }
    }

    /// The voucher whose row must be on screen when no search or page is asked for.
    pub fn focus(&self) -> Option<VoucherId> {
        self.created.or(self.manage)
    }

    /// The console's path with this query.
    pub fn href(&self) -> String {
        let pairs: Vec<String> = [
            ("q", self.q.as_deref().map(encode_query)),
            ("status", self.status.map(|s| s.as_str().to_owned())),
            ("cursor", self.cursor.map(|c| c.to_string())),
            ("chart", self.chart.map(|v| v.to_string())),
            ("created", self.created.map(|v| v.to_string())),
            ("manage", self.manage.map(|v| v.to_string())),
            ("done", self.done.map(|d| d.as_str().to_owned())),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
        .collect();
        if pairs.is_empty() {
            "/admin".to_owned()
        } else {
            format!("/admin?{}", pairs.join("&"))
        }
    }
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

    #[test]
    fn the_console_query_reads_back_what_it_writes() {
        let v = VoucherId::try_from(42).expect("id");
        let cursor = domain::SaleCursor::parse("1790000000000_7").expect("cursor");
        let found = ConsoleQuery {
            q: Some("茉莉 50% & tea".into()),
            status: Some(domain::SaleStage::Ended),
            cursor: Some(cursor),
            ..ConsoleQuery::chart(v)
        };
        for q in [
            ConsoleQuery::default(),
            ConsoleQuery::chart(v),
            ConsoleQuery::created(v),
            ConsoleQuery::manage(v, Some(ManageDone::Ended)),
            ConsoleQuery::manage(v, Some(ManageDone::Edited)),
            ConsoleQuery::manage(v, None),
            found.clone(),
        ] {
            let href = q.href();
            let query = href.split_once('?').map_or("", |(_, q)| q).to_owned();
            let get = |k: &str| {
                query
                    .split('&')
                    .filter_map(|p| p.split_once('='))
                    .find(|(name, _)| *name == k)
                    .map(|(_, v)| decode(v))
            };
            assert_eq!(ConsoleQuery::parse(get), q, "{href}");
        }
        assert_eq!(
            ConsoleQuery::manage(v, Some(ManageDone::Ended)).href(),
            "/admin?manage=42&done=ended"
        );
        assert_eq!(
            found.at(None).href(),
            "/admin?q=%E8%8C%89%E8%8E%89%2050%25%20%26%20tea&status=ended&chart=42"
        );
        let junk = ConsoleQuery::parse(|k| (k != "done").then(|| "x".to_owned()));
        assert_eq!(
            junk,
            ConsoleQuery {
                q: Some("x".into()),
                ..ConsoleQuery::default()
            }
        );
        assert_eq!(title_part(" \u{0}\t "), None);
    }

    /// A query value as a browser decodes it (`%XX` escapes, UTF-8).
    fn decode(v: &str) -> String {
        let bytes = v.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' {
                out.push(u8::from_str_radix(&v[i + 1..i + 3], 16).expect("hex"));
                i += 3;
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        String::from_utf8(out).expect("utf-8")
    }
}
