//! What an address is, however it is spelt, and which addresses are special: IANA's
//! special-purpose address registries for both families (and the multicast ranges), the ranges a
//! command never reaches unless `[sandbox.network] allow` lists them as addresses (DESIGN §5.2).
//!
//! Rules: one reader takes every spelling a client may use for an address (inet_aton's `127.1`,
//! `2130706433`, `0177.0.0.1`, `0x7f.1`; IPv6 with or without brackets or a zone), so an
//! address is never judged as a name; an IPv6 address that carries an IPv4 address (mapped,
//! compatible, translated, NAT64 `64:ff9b::/96`, 6to4) is judged by the IPv4 address it
//! carries; a range not known to be global (IPv6 outside `2000::/3`, Teredo, local-use NAT64) is
//! special.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The address `host` spells, when it spells one (a name does not): IPv4 in any form inet_aton
/// reads (one to four parts, each decimal, octal with a leading `0` or hex with `0x`; one
/// trailing dot), IPv6 with or without brackets and a `%zone`.
pub fn literal(host: &str) -> Option<IpAddr> {
    let host = host.trim();
    let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    let unzoned = bare.split_once('%').map_or(bare, |(addr, _)| addr);
    if let Ok(v6) = unzoned.parse::<Ipv6Addr>() {
        return Some(IpAddr::V6(v6));
    }
    legacy_v4(bare.strip_suffix('.').unwrap_or(bare)).map(IpAddr::V4)
}

/// inet_aton's forms: `a.b.c.d`, `a.b.c` (c fills 16 bits), `a.b` (b fills 24), `a` (32 bits).
fn legacy_v4(text: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = text.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let values: Vec<u64> = parts.iter().map(|p| number(p)).collect::<Option<_>>()?;
    let (last, head) = values.split_last()?;
    if head.iter().any(|v| *v > 255) {
        return None;
    }
    let rest_bits = 32 - 8 * head.len() as u32;
    if *last >= 1u64 << rest_bits {
        return None;
    }
    let high = head.iter().enumerate().fold(0u64, |acc, (i, v)| acc | (v << (24 - 8 * i as u32)));
    Some(Ipv4Addr::from((high | last) as u32))
}

/// One part: `0x` hex, leading-`0` octal, or decimal (never empty, never signed).
fn number(part: &str) -> Option<u64> {
    let (digits, radix) = if let Some(hex) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
        (hex, 16)
    } else if part.len() > 1 && part.starts_with('0') {
        (&part[1..], 8)
    } else {
        (part, 10)
    };
    if (digits.is_empty() && radix != 16) || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    // Leading zeros change nothing (`0x00007f000001`); what is left must fit.
    let significant = digits.trim_start_matches('0');
    if significant.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(significant, radix).ok()
}

/// An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) is that IPv4 address: what a socket
/// reaches by it.
pub fn canonical(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(addr),
        v4 => v4,
    }
}

/// The IPv4 address an IPv6 address carries, and what form carries it: mapped `::ffff:0:0/96`, translated
/// `::ffff:0:0:0/96`, compatible `::/96` (not `::` nor `::1`), NAT64 `64:ff9b::/96`, 6to4
/// `2002::/16`.
pub fn carried(addr: IpAddr) -> Option<(Ipv4Addr, &'static str)> {
    let IpAddr::V6(v6) = addr else { return None };
    let bits = u128::from(v6);
    let low = Ipv4Addr::from(bits as u32);
    let s = v6.segments();
    if bits >> 32 == 0xffff {
        Some((low, "an IPv4-mapped"))
    } else if bits >> 32 == 0xffff_0000 {
        Some((low, "an IPv4-translated"))
    } else if bits >> 32 == 0 && bits > 1 {
        Some((low, "an IPv4-compatible"))
    } else if bits >> 32 == 0x0064_ff9b_u128 << 64 {
        Some((low, "a NAT64"))
    } else if s[0] == 0x2002 {
        Some((Ipv4Addr::from((u32::from(s[1]) << 16) | u32::from(s[2])), "a 6to4"))
    } else {
        None
    }
}

/// A range of the registries: its first address, its prefix length, and what it is.
type Range<T> = (T, u8, &'static str);

const V4: &[Range<[u8; 4]>] = &[
    ([0, 0, 0, 0], 8, "not a host's address (\"this network\")"),
    ([10, 0, 0, 0], 8, "a private address"),
    ([100, 64, 0, 0], 10, "a shared address (carrier-grade NAT)"),
    ([127, 0, 0, 0], 8, "a loopback address"),
    ([169, 254, 0, 0], 16, "a link-local address (cloud metadata lives there)"),
    ([172, 16, 0, 0], 12, "a private address"),
    ([192, 0, 0, 0], 24, "an IETF protocol assignment"),
    ([192, 0, 2, 0], 24, "a documentation address"),
    ([192, 88, 99, 0], 24, "a 6to4 relay anycast address (deprecated)"),
    ([192, 168, 0, 0], 16, "a private address"),
    ([198, 18, 0, 0], 15, "a benchmarking address"),
    ([198, 51, 100, 0], 24, "a documentation address"),
    ([203, 0, 113, 0], 24, "a documentation address"),
    ([224, 0, 0, 0], 4, "a multicast address"),
    ([255, 255, 255, 255], 32, "the broadcast address"),
    ([240, 0, 0, 0], 4, "a reserved address"),
];

/// IPv6 ranges judged as themselves (those that carry IPv4 are judged by it first).
const V6: &[Range<[u16; 8]>] = &[
    ([0, 0, 0, 0, 0, 0, 0, 0], 128, "not a host's address"),
    ([0, 0, 0, 0, 0, 0, 0, 1], 128, "a loopback address"),
    ([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48, "a local-use NAT64 address"),
    ([0x100, 0, 0, 0, 0, 0, 0, 0], 64, "a discard-only address"),
    ([0x100, 0, 0, 1, 0, 0, 0, 0], 64, "a dummy address"),
    ([0x2001, 0, 0, 0, 0, 0, 0, 0], 32, "a Teredo address (the IPv4 addresses it carries are not judged)"),
    ([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32, "a documentation address"),
    ([0x2001, 0, 0, 0, 0, 0, 0, 0], 23, "an IETF protocol assignment"),
    ([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20, "a documentation address"),
    ([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16, "a segment-routing (SRv6) address"),
    ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, "a private address (unique local)"),
    ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, "a link-local address"),
    ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, "a site-local address (deprecated)"),
    ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, "a multicast address"),
];

/// Whether `addr` is in the `bits`-long prefix of `net`, both `width` bits wide.
pub(crate) fn within(net: u128, addr: u128, width: u8, bits: u8) -> bool {
    bits == 0 || (net >> u32::from(width - bits)) == (addr >> u32::from(width - bits))
}

/// What `addr` is when it is special (never reached unless listed), or `None` for a global one.
pub fn special(addr: IpAddr) -> Option<String> {
    match canonical(addr) {
        IpAddr::V4(v4) => special_v4(v4).map(String::from),
        IpAddr::V6(v6) => {
            if let Some((v4, how)) = carried(IpAddr::V6(v6)) {
                // `::` and `::1` are not carriers; every other special IPv6 range is apart from these.
                return special_v4(v4).map(|kind| format!("{how} form of {v4}, {kind}"));
            }
            let bits = u128::from(v6);
            let listed = V6.iter().find(|(net, len, _)| within(u128::from(Ipv6Addr::from(*net)), bits, 128, *len));
            match listed {
                Some((_, _, kind)) => Some((*kind).to_string()),
                None if !within(0x2000 << 112, bits, 128, 3) => Some("a reserved address (not global unicast)".into()),
                None => None,
            }
        }
    }
}

fn special_v4(v4: Ipv4Addr) -> Option<&'static str> {
    let bits = u128::from(u32::from(v4));
    V4.iter()
        .find(|(net, len, _)| within(u128::from(u32::from(Ipv4Addr::from(*net))), bits, 32, *len))
        .map(|(_, _, kind)| *kind)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn every_spelling_of_an_address_is_read_as_that_address() {
        let loopback = ip("127.0.0.1");
        for spelling in [
            "127.0.0.1",
            "127.1",
            "127.0.1",
            "2130706433",
            "0177.0.0.1",
            "0177.1",
            "0x7f.1",
            "0x7F.0.0.1",
            "0x7f000001",
            "0x00000000007f000001",
            "017700000001",
            "127.0.0.1.",
            " 127.0.0.1 ",
        ] {
            assert_eq!(literal(spelling), Some(loopback), "{spelling}");
        }
        assert_eq!(literal("169.254.43518"), Some(ip("169.254.169.254")));
        assert_eq!(literal("2852039166"), Some(ip("169.254.169.254")));
        assert_eq!(literal("0xa9.0xfe.0xa9.0xfe"), Some(ip("169.254.169.254")));
        for (spelling, addr) in
            [("::1", "::1"), ("[::1]", "::1"), ("[fe80::1%eth0]", "fe80::1"), ("::ffff:127.0.0.1", "::ffff:7f00:1")]
        {
            assert_eq!(literal(spelling), Some(ip(addr)), "{spelling}");
        }
        for name in ["localhost", "ok.test", "127.0.0.1.nip.io", "1.2.3.4.5", "256.0.0.1", "08.0.0.1", "", "1..1"] {
            assert_eq!(literal(name), None, "{name}");
        }
        assert_eq!(literal("4294967296"), None);
        assert_eq!(literal("1.16777216"), None);
        assert_eq!(literal("1.2.65536"), None);
    }

    #[test]
    fn the_ipv4_ranges_of_the_registries_are_special_and_public_ones_are_not() {
        for (addr, kind) in [
            ("0.0.0.0", "this network"),
            ("0.1.2.3", "this network"),
            ("10.1.2.3", "private"),
            ("100.64.0.1", "shared"),
            ("100.127.255.254", "shared"),
            ("127.0.0.1", "loopback"),
            ("127.255.255.254", "loopback"),
            ("169.254.169.254", "link-local"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.0.0.1", "IETF"),
            ("192.0.0.170", "IETF"),
            ("192.0.2.1", "documentation"),
            ("192.88.99.1", "6to4 relay"),
            ("192.168.0.1", "private"),
            ("198.18.0.1", "benchmarking"),
            ("198.19.255.255", "benchmarking"),
            ("198.51.100.7", "documentation"),
            ("203.0.113.7", "documentation"),
            ("224.0.0.1", "multicast"),
            ("239.255.255.250", "multicast"),
            ("240.0.0.1", "reserved"),
            ("255.255.255.254", "reserved"),
            ("255.255.255.255", "broadcast"),
        ] {
            let said = special(ip(addr)).unwrap_or_else(|| panic!("{addr} passed"));
            assert!(said.contains(kind), "{addr}: {said}");
        }
        for public in
            ["1.1.1.1", "8.8.8.8", "93.184.215.14", "100.63.255.255", "100.128.0.1", "172.32.0.1", "198.20.0.1"]
        {
            assert_eq!(special(ip(public)), None, "{public}");
        }
    }

    #[test]
    fn an_ipv6_address_carrying_ipv4_is_judged_by_the_ipv4_it_carries() {
        for (addr, carries, how) in [
            ("::ffff:127.0.0.1", "127.0.0.1", "an IPv4-mapped"),
            ("::ffff:0:127.0.0.1", "127.0.0.1", "an IPv4-translated"),
            ("::127.0.0.1", "127.0.0.1", "an IPv4-compatible"),
            ("::a9fe:a9fe", "169.254.169.254", "an IPv4-compatible"),
            ("64:ff9b::7f00:1", "127.0.0.1", "a NAT64"),
            ("64:ff9b::169.254.169.254", "169.254.169.254", "a NAT64"),
            ("2002:7f00:1::1", "127.0.0.1", "a 6to4"),
            ("2002:a9fe:a9fe::", "169.254.169.254", "a 6to4"),
        ] {
            assert_eq!(carried(ip(addr)), Some((carries.parse().unwrap(), how)), "{addr}");
            let said = special(ip(addr)).unwrap_or_else(|| panic!("{addr} passed"));
            // A mapped address is the IPv4 address itself (what a socket reaches by it).
            let named = if how == "an IPv4-mapped" { said == "a loopback address" } else { said.contains(how) };
            assert!(named && (how == "an IPv4-mapped" || said.contains(carries)), "{addr}: {said}");
        }
        // What carries a public address is judged as that address.
        for public in ["::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "::8.8.8.8"] {
            assert_eq!(special(ip(public)), None, "{public}");
        }
        assert_eq!(carried(ip("::1")), None);
        assert_eq!(carried(ip("::")), None);
        assert_eq!(carried(ip("2001:db8::1")), None);
    }

    #[test]
    fn the_ipv6_ranges_of_the_registries_are_special_and_global_unicast_is_not() {
        for (addr, kind) in [
            ("::", "not a host's"),
            ("::1", "loopback"),
            ("64:ff9b:1::7f00:1", "local-use NAT64"),
            ("64:ff9b:1:ffff::1", "local-use NAT64"),
            ("100::1", "discard"),
            ("100:0:0:1::1", "dummy"),
            ("2001::1", "Teredo"),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
            ("2001:2::1", "IETF"),
            ("2001:1ff::1", "IETF"),
            ("2001:db8::1", "documentation"),
            ("3fff::1", "documentation"),
            ("5f00::1", "segment-routing"),
            ("fc00::1", "unique local"),
            ("fd12:3456::1", "unique local"),
            ("fe80::1", "link-local"),
            ("febf::1", "link-local"),
            ("fec0::1", "site-local"),
            ("ff02::1", "multicast"),
            ("ff05::2", "multicast"),
            ("4000::1", "not global unicast"),
            ("1::1", "not global unicast"),
            ("::ffff:ffff", "broadcast"),
        ] {
            let said = special(ip(addr)).unwrap_or_else(|| panic!("{addr} passed"));
            assert!(said.contains(kind), "{addr}: {said}");
        }
        for global in ["2606:4700::1111", "2001:4860:4860::8888", "2a00:1450::1", "2001:200::1", "3ffe::1"] {
            assert_eq!(special(ip(global)), None, "{global}");
        }
    }
}
