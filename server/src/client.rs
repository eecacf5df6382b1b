//! Who a request comes from: the connection's peer, or, when the peer is a proxy the operator
//! trusts (`SECKILL_TRUSTED_PROXIES`), the client that proxy names in `X-Forwarded-For`. The
//! per-client limits (sign-in, sale streams) count by this address (decision 26).
//!
//! `X-Forwarded-For` is read from its right end: each proxy appends the address it got the
//! request from, so the last entry is what the nearest proxy saw, and anything to its left is
//! whatever the client wrote. Entries added by trusted proxies are skipped; the first other
//! one is the client. A header from an untrusted peer is ignored whole.

use std::{net::IpAddr, sync::Arc};

use http::HeaderMap;

/// `X-Forwarded-For`.
const FORWARDED_FOR: &str = "x-forwarded-for";

/// The proxies whose `X-Forwarded-For` is believed.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Arc<[IpAddr]>);

impl TrustedProxies {
    pub fn new(proxies: Vec<IpAddr>) -> Self {
        Self(proxies.into())
    }

    fn trusts(&self, addr: IpAddr) -> bool {
        self.0.contains(&canonical(addr))
    }

    /// The client of a request that arrived from `peer` with `headers`.
    pub fn client_of(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = canonical(peer);
        if !self.trusts(peer) {
            return peer;
        }
        let mut entries = headers
            .get_all(FORWARDED_FOR)
            .iter()
            .map(|v| v.to_str().unwrap_or(""))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .flat_map(|v| v.rsplit(','));
        // The first entry from the right that no trusted proxy added; one that does not parse
        // was not written by a proxy of ours, so the request is counted as the proxy's own.
        entries
            .find_map(|entry| match entry.trim().parse::<IpAddr>() {
                Ok(addr) if self.trusts(addr) => None,
                Ok(addr) => Some(Some(canonical(addr))),
                Err(_) => Some(None),
            })
            .flatten()
            .unwrap_or(peer)
    }
}

/// An IPv4 address mapped into IPv6 (`::ffff:a.b.c.d`) is that IPv4 address.
fn canonical(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    fn headers(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(FORWARDED_FOR, HeaderValue::from_str(v).expect("value"));
        }
        h
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_claims() {
        let trusted = TrustedProxies::new(vec![ip("127.0.0.1")]);
        let h = headers(&["203.0.113.9"]);
        assert_eq!(
            trusted.client_of(ip("198.51.100.7"), &h),
            ip("198.51.100.7")
        );
        let none = TrustedProxies::default();
        assert_eq!(none.client_of(ip("127.0.0.1"), &h), ip("127.0.0.1"));
    }

    #[test]
    fn a_trusted_proxy_names_the_client_at_the_right_end() {
        let trusted = TrustedProxies::new(vec![ip("127.0.0.1"), ip("10.0.0.2")]);
        // The client forged the first entry; the proxy appended the real one.
        let h = headers(&["1.2.3.4, 203.0.113.9"]);
        assert_eq!(trusted.client_of(ip("127.0.0.1"), &h), ip("203.0.113.9"));
        // Two proxies of ours: the outer one's entry is skipped.
        let h = headers(&["1.2.3.4", "203.0.113.9, 10.0.0.2"]);
        assert_eq!(trusted.client_of(ip("127.0.0.1"), &h), ip("203.0.113.9"));
        // IPv4-mapped peers are their IPv4 address.
        assert_eq!(
            trusted.client_of(ip("::ffff:127.0.0.1"), &headers(&["2001:db8::1"])),
            ip("2001:db8::1")
        );
    }

    #[test]
    fn a_missing_or_garbled_header_counts_as_the_proxy() {
        let trusted = TrustedProxies::new(vec![ip("127.0.0.1")]);
        assert_eq!(
            trusted.client_of(ip("127.0.0.1"), &HeaderMap::new()),
            ip("127.0.0.1")
        );
        assert_eq!(
            trusted.client_of(ip("127.0.0.1"), &headers(&["203.0.113.9, not-an-ip"])),
            ip("127.0.0.1")
        );
    }
}
