//! Who a request comes from: the connection's peer, or, when the peer is a proxy the operator
//! trusts (`SECKILL_TRUSTED_PROXIES`), the client that proxy names in `X-Forwarded-For`. The
//! per-client limits (sign-in, sale streams, draw entries) count by this address (decision
//! 26), an IPv6 one by its /64 network.
//!
//! `X-Forwarded-For` is read from its right end: each proxy appends the address it got the
//! request from, so the last entry is what the nearest proxy saw, and anything to its left is
//! whatever the client wrote. Entries added by trusted proxies are skipped; the first other
//! one is the client. A header from an untrusted peer is ignored whole.

use std::{
    net::{IpAddr, Ipv6Addr},
    sync::Arc,
};

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

    /// The client of a request that arrived from `peer` with `headers`, as the limits count
    /// clients: an IPv4 address, or an IPv6 address's /64 network.
    pub fn client_of(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        network(self.named_by(peer, headers))
    }

    /// The address that sent the request: the peer, or the client a trusted proxy names.
    fn named_by(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
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

/// One client as the limits count them: an IPv6 address's /64, the network a subscriber is
/// given whole (RFC 6177), so that one subscriber's 2^64 addresses are one client, not 2^64
/// fresh ones each with its own sign-in codes and sale streams.
fn network(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !u128::from(u64::MAX))),
        v4 => v4,
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
            trusted.client_of(ip("::ffff:127.0.0.1"), &headers(&["203.0.113.9"])),
            ip("203.0.113.9")
        );
    }

    #[test]
    fn an_ipv6_client_is_its_slash_64_network() {
        let trusted = TrustedProxies::new(vec![ip("127.0.0.1"), ip("2001:db8:ffff::2")]);
        let none = TrustedProxies::default();
        // Two addresses of one subscriber are one client; the next /64 is another.
        let a = none.client_of(ip("2001:db8:1:2:aaaa::1"), &HeaderMap::new());
        let b = none.client_of(ip("2001:db8:1:2:ffff:1:2:3"), &HeaderMap::new());
        assert_eq!(a, ip("2001:db8:1:2::"));
        assert_eq!(a, b);
        assert_ne!(a, none.client_of(ip("2001:db8:1:3::1"), &HeaderMap::new()));
        // Named by a proxy of ours, likewise; the proxy itself is trusted by its full address.
        assert_eq!(
            trusted.client_of(ip("::ffff:127.0.0.1"), &headers(&["2001:db8::1"])),
            ip("2001:db8::")
        );
        assert_eq!(
            trusted.client_of(ip("2001:db8:ffff::2"), &headers(&["2001:db8:5::9"])),
            ip("2001:db8:5::")
        );
        // An IPv4 client stays itself.
        assert_eq!(
            none.client_of(ip("198.51.100.7"), &HeaderMap::new()),
            ip("198.51.100.7")
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
