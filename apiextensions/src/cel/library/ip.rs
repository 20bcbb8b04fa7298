//! The Kubernetes IP and CIDR libraries: `ip(s)`, `isIP(s)`,
//! `ip.isCanonical(s)`, and on an IP `family()`, `isUnspecified()`,
//! `isLoopback()`, `isLinkLocalMulticast()`, `isLinkLocalUnicast()`,
//! `isGlobalUnicast()`, `string(ip)`; `cidr(s)`, `isCIDR(s)`, and on a
//! CIDR `containsIP(ip|s)`, `containsCIDR(cidr|s)`, `ip()`, `masked()`,
//! `prefixLength()`, `string(cidr)`. As upstream, IPv4-mapped IPv6
//! addresses and zones are refused.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use cel::common::types::{STRING_TYPE, Type};
use cel::common::value::CowVal;
use cel::objects::Opaque;
use cel::{DeclarationError, Env, ExecutionError};

use super::{Ret, boolean, fail, int, opaque, opaque_arg, str_arg, string};

const IP_TYPE_NAME: &str = "net.IP";
const CIDR_TYPE_NAME: &str = "net.IPNet";

/// An IP address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ip(IpAddr);

/// A CIDR: an address and a prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cidr(IpAddr, u8);

impl Opaque for Ip {
    fn runtime_type_name(&self) -> &str {
        IP_TYPE_NAME
    }
}

impl Opaque for Cidr {
    fn runtime_type_name(&self) -> &str {
        CIDR_TYPE_NAME
    }
}

/// `s` as an address the library accepts, or upstream's reason.
fn parse_ip(s: &str) -> Result<IpAddr, String> {
    if s.contains('%') {
        return Err("IP address with zone value is not allowed".to_owned());
    }
    let ip: IpAddr = s.parse().map_err(|_| {
        format!(
            "ParseAddr({}): unable to parse IP",
            skein_admission::quote(s)
        )
    })?;
    if let IpAddr::V6(v6) = ip
        && v6.to_ipv4_mapped().is_some()
    {
        return Err("IPv4-mapped IPv6 address is not allowed".to_owned());
    }
    Ok(ip)
}

/// `s` as a CIDR the library accepts, or upstream's reason.
fn parse_cidr(s: &str) -> Result<Cidr, String> {
    let (addr, len) = s
        .split_once('/')
        .ok_or_else(|| format!("netip.ParsePrefix({}): no '/'", skein_admission::quote(s)))?;
    let ip = parse_ip(addr)?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let len: u8 = len
        .parse()
        .ok()
        .filter(|l| *l <= max && !len.starts_with('+') && (len == "0" || !len.starts_with('0')))
        .ok_or_else(|| {
            format!(
                "netip.ParsePrefix({}): bad bits after slash: {}",
                skein_admission::quote(s),
                skein_admission::quote(len)
            )
        })?;
    Ok(Cidr(ip, len))
}

/// Both parsers over `s`, for the never-panics test.
#[cfg(test)]
pub(crate) fn parse_any(s: &str) -> (bool, bool) {
    (parse_ip(s).is_ok(), parse_cidr(s).is_ok())
}

fn masked(ip: IpAddr, len: u8) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(v4) & mask))
        }
        IpAddr::V6(v6) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask))
        }
    }
}

fn contains(cidr: Cidr, ip: IpAddr) -> bool {
    ip.is_ipv4() == cidr.0.is_ipv4() && masked(ip, cidr.1) == masked(cidr.0, cidr.1)
}

fn ip_type() -> Type {
    Type::new_opaque_type(IP_TYPE_NAME)
}

fn cidr_type() -> Type {
    Type::new_opaque_type(CIDR_TYPE_NAME)
}

pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let (i, c) = (ip_type, cidr_type);
    env.add_overload("ip", "string_to_ip", vec![STRING_TYPE], to_ip)?;
    env.add_overload("isIP", "is_ip", vec![STRING_TYPE], is_ip)?;
    env.add_overload(
        "ip.isCanonical",
        "ip_is_canonical",
        vec![STRING_TYPE],
        is_canonical,
    )?;
    env.add_overload("string", "ip_to_string", vec![i()], ip_string)?;
    env.add_member_overload("family", "ip_family", i(), vec![], family)?;
    env.add_member_overload(
        "isUnspecified",
        "ip_is_unspecified",
        i(),
        vec![],
        unspecified,
    )?;
    env.add_member_overload("isLoopback", "ip_is_loopback", i(), vec![], loopback)?;
    env.add_member_overload(
        "isLinkLocalMulticast",
        "ip_is_link_local_multicast",
        i(),
        vec![],
        link_local_multicast,
    )?;
    env.add_member_overload(
        "isLinkLocalUnicast",
        "ip_is_link_local_unicast",
        i(),
        vec![],
        link_local_unicast,
    )?;
    env.add_member_overload(
        "isGlobalUnicast",
        "ip_is_global_unicast",
        i(),
        vec![],
        global_unicast,
    )?;
    env.add_overload("cidr", "string_to_cidr", vec![STRING_TYPE], to_cidr)?;
    env.add_overload("isCIDR", "is_cidr", vec![STRING_TYPE], is_cidr)?;
    env.add_overload("string", "cidr_to_string", vec![c()], cidr_string)?;
    env.add_member_overload(
        "containsIP",
        "cidr_contains_ip_ip",
        c(),
        vec![i()],
        contains_ip,
    )?;
    env.add_member_overload(
        "containsIP",
        "cidr_contains_ip_string",
        c(),
        vec![STRING_TYPE],
        contains_ip_string,
    )?;
    env.add_member_overload(
        "containsCIDR",
        "cidr_contains_cidr",
        c(),
        vec![c()],
        contains_cidr,
    )?;
    env.add_member_overload(
        "containsCIDR",
        "cidr_contains_cidr_string",
        c(),
        vec![STRING_TYPE],
        contains_cidr_string,
    )?;
    env.add_member_overload("ip", "cidr_ip", c(), vec![], cidr_ip)?;
    env.add_member_overload("masked", "cidr_masked", c(), vec![], cidr_masked)?;
    env.add_member_overload(
        "prefixLength",
        "cidr_prefix_length",
        c(),
        vec![],
        prefix_length,
    )?;
    Ok(())
}

fn this_ip(args: &[CowVal<'_, '_>]) -> Result<IpAddr, ExecutionError> {
    opaque_arg::<Ip>(args, 0).map(|i| i.0)
}

fn this_cidr(args: &[CowVal<'_, '_>]) -> Result<Cidr, ExecutionError> {
    opaque_arg::<Cidr>(args, 0)
}

fn to_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let s = str_arg(&args, 0)?;
    match parse_ip(s) {
        Ok(ip) => opaque(Ip(ip)),
        Err(e) => Err(fail(
            "ip",
            format!(
                "IP Address {} parse error during conversion from string: {e}",
                skein_admission::quote(s)
            ),
        )),
    }
}

fn is_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    boolean(parse_ip(str_arg(&args, 0)?).is_ok())
}

fn is_canonical<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let s = str_arg(&args, 0)?;
    match parse_ip(s) {
        Ok(ip) => boolean(ip.to_string() == s),
        Err(e) => Err(fail(
            "ip.isCanonical",
            format!(
                "IP Address {} parse error during conversion from string: {e}",
                skein_admission::quote(s)
            ),
        )),
    }
}

fn ip_string<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    string(this_ip(&args)?.to_string())
}

fn family<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    int(if this_ip(&args)?.is_ipv4() { 4 } else { 6 })
}

fn unspecified<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    boolean(this_ip(&args)?.is_unspecified())
}

fn loopback<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    boolean(this_ip(&args)?.is_loopback())
}

fn is_link_local_multicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            o[0] == 224 && o[1] == 0 && o[2] == 0
        }
        IpAddr::V6(v6) => {
            let o = v6.octets();
            o[0] == 0xff && o[1] & 0x0f == 0x02
        }
    }
}

fn is_link_local_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            o[0] == 169 && o[1] == 254
        }
        IpAddr::V6(v6) => {
            let o = v6.octets();
            o[0] == 0xfe && o[1] & 0xc0 == 0x80
        }
    }
}

fn link_local_multicast<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    boolean(is_link_local_multicast(this_ip(&args)?))
}

fn link_local_unicast<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    boolean(is_link_local_unicast(this_ip(&args)?))
}

fn global_unicast<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let ip = this_ip(&args)?;
    let broadcast = ip == IpAddr::V4(Ipv4Addr::BROADCAST);
    boolean(
        !(ip.is_unspecified()
            || ip.is_loopback()
            || ip.is_multicast()
            || is_link_local_unicast(ip)
            || broadcast),
    )
}

fn to_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let s = str_arg(&args, 0)?;
    match parse_cidr(s) {
        Ok(c) => opaque(c),
        Err(e) => Err(fail(
            "cidr",
            format!(
                "network address {} parse error during conversion from string: {e}",
                skein_admission::quote(s)
            ),
        )),
    }
}

fn is_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    boolean(parse_cidr(str_arg(&args, 0)?).is_ok())
}

fn cidr_string<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let c = this_cidr(&args)?;
    string(format!("{}/{}", c.0, c.1))
}

fn contains_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let ip = opaque_arg::<Ip>(&args, 1)?.0;
    boolean(contains(this_cidr(&args)?, ip))
}

fn contains_ip_string<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let s = str_arg(&args, 1)?;
    let ip = parse_ip(s).map_err(|e| fail("containsIP", e))?;
    boolean(contains(this_cidr(&args)?, ip))
}

fn cidr_in(outer: Cidr, inner: Cidr) -> bool {
    inner.1 >= outer.1 && contains(outer, inner.0)
}

fn contains_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let inner = opaque_arg::<Cidr>(&args, 1)?;
    boolean(cidr_in(this_cidr(&args)?, inner))
}

fn contains_cidr_string<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let inner = parse_cidr(str_arg(&args, 1)?).map_err(|e| fail("containsCIDR", e))?;
    boolean(cidr_in(this_cidr(&args)?, inner))
}

fn cidr_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    opaque(Ip(this_cidr(&args)?.0))
}

fn cidr_masked<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    let c = this_cidr(&args)?;
    opaque(Cidr(masked(c.0, c.1), c.1))
}

fn prefix_length<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Ret<'b, 'v> {
    int(i64::from(this_cidr(&args)?.1))
}
