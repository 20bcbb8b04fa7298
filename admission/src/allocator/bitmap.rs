//! In-memory allocators for Service cluster IPs (an IPv4 CIDR) and node
//! ports (a port range): bitmaps, as upstream's
//! `pkg/registry/core/service/ipallocator` and `portallocator`.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::sync::Mutex;

use super::{AllocError, ServiceAllocator};

/// A fixed-size set of offsets `0..size` with random-start allocation in
/// the upper band first (upstream's static/dynamic split: the lower band is
/// preferred for addresses users pick themselves).
#[derive(Debug)]
struct Bitmap {
    bits: Vec<u64>,
    size: u32,
    /// Offsets below this are the "static" band.
    band: u32,
    /// Offsets below this are never handed out dynamically (the first
    /// service IP is the `kubernetes` Service's).
    reserved: u32,
    /// Allocated but not seen in storage at the last repair.
    suspects: BTreeSet<u32>,
}

impl Bitmap {
    fn new(size: u32, band: u32, reserved: u32) -> Self {
        Self {
            bits: vec![0; (size as usize).div_ceil(64)],
            size,
            band,
            reserved,
            suspects: BTreeSet::new(),
        }
    }

    fn has(&self, i: u32) -> bool {
        self.bits[(i / 64) as usize] & (1 << (i % 64)) != 0
    }

    fn set(&mut self, i: u32, on: bool) {
        let w = &mut self.bits[(i / 64) as usize];
        if on {
            *w |= 1 << (i % 64);
        } else {
            *w &= !(1 << (i % 64));
        }
    }

    /// A free offset: a random start in the upper band scanning forward,
    /// then the lower band. `None` when full.
    fn pick(&self, random: u64) -> Option<u32> {
        let scan = |lo: u32, hi: u32| -> Option<u32> {
            if hi <= lo {
                return None;
            }
            let n = hi - lo;
            let start = (random % u64::from(n)) as u32;
            (0..n).map(|k| lo + (start + k) % n).find(|&i| !self.has(i))
        };
        let lo = self.band.max(self.reserved);
        scan(lo, self.size).or_else(|| scan(self.reserved, lo))
    }

    fn count(&self) -> u32 {
        self.bits.iter().map(|w| w.count_ones()).sum()
    }
}

/// Both allocators behind mutexes: the [`ServiceAllocator`] Skein runs.
#[derive(Debug)]
pub struct InMemoryAllocator {
    cidr: String,
    /// First usable address (network + 1).
    base: u32,
    ips: Mutex<Bitmap>,
    port_lo: u16,
    port_hi: u16,
    ports: Mutex<Bitmap>,
    rng: Mutex<u64>,
}

impl InMemoryAllocator {
    /// An allocator over the IPv4 `service_cidr` (e.g. `"10.96.0.0/12"`)
    /// and the inclusive node port range (e.g. `30000..=32767`). The
    /// network and broadcast addresses are never used; the first address
    /// is only given to whoever asks for it by name.
    ///
    /// # Errors
    ///
    /// A message when the CIDR is not an IPv4 CIDR with a prefix of /8 to
    /// /30, or the port range is empty.
    pub fn new(
        service_cidr: &str,
        node_ports: std::ops::RangeInclusive<u16>,
    ) -> Result<Self, String> {
        let (addr, prefix) = service_cidr
            .split_once('/')
            .ok_or_else(|| format!("service CIDR {service_cidr:?} must be address/prefix"))?;
        let addr: Ipv4Addr = addr
            .parse()
            .map_err(|_| format!("service CIDR {service_cidr:?}: not an IPv4 address"))?;
        let prefix: u32 = prefix
            .parse()
            .ok()
            .filter(|p| (8..=30).contains(p))
            .ok_or_else(|| format!("service CIDR {service_cidr:?}: prefix must be 8 to 30"))?;
        let mask = u32::MAX << (32 - prefix);
        let network = u32::from(addr) & mask;
        let size = (1u32 << (32 - prefix)) - 2;
        let ip_band = (size / 16).clamp(16, 256).min(size);
        let (lo, hi) = (*node_ports.start(), *node_ports.end());
        if hi < lo {
            return Err("node port range is empty".into());
        }
        let port_size = u32::from(hi - lo) + 1;
        let port_band = (port_size / 32).clamp(16, 128).min(port_size);
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9e37_79b9_7f4a_7c15);
        Ok(Self {
            cidr: format!("{}/{prefix}", Ipv4Addr::from(network)),
            base: network + 1,
            ips: Mutex::new(Bitmap::new(size, ip_band, 1)),
            port_lo: lo,
            port_hi: hi,
            ports: Mutex::new(Bitmap::new(port_size, port_band, 0)),
            rng: Mutex::new(seed | 1),
        })
    }

    /// Fixes the random sequence (for tests).
    #[must_use]
    pub fn with_seed(self, seed: u64) -> Self {
        if let Ok(mut r) = self.rng.lock() {
            *r = seed | 1;
        }
        self
    }

    /// The service CIDR, normalized (`10.96.0.0/12`).
    pub fn cidr(&self) -> &str {
        &self.cidr
    }

    /// How many IPs and node ports are allocated.
    pub fn used(&self) -> (u32, u32) {
        let ips = self.ips.lock().map(|b| b.count()).unwrap_or(0);
        let ports = self.ports.lock().map(|b| b.count()).unwrap_or(0);
        (ips, ports)
    }

    /// Reconciles the bitmaps with what stored Services hold (upstream's
    /// repair controllers): everything in `ips`/`ports` is marked; an
    /// allocation found in neither for two repairs in a row is freed (one
    /// repair of grace, so an allocation made by a request that has not
    /// reached storage yet survives). Values outside the ranges are
    /// ignored.
    pub fn repair<'a>(
        &self,
        ips: impl IntoIterator<Item = &'a str>,
        ports: impl IntoIterator<Item = u16>,
    ) {
        let ip_offsets: BTreeSet<u32> = ips
            .into_iter()
            .filter_map(|ip| self.ip_offset(ip).ok())
            .collect();
        let port_offsets: BTreeSet<u32> = ports
            .into_iter()
            .filter_map(|p| self.port_offset(p).ok())
            .collect();
        for (bitmap, seen) in [(&self.ips, ip_offsets), (&self.ports, port_offsets)] {
            let Ok(mut b) = bitmap.lock() else { continue };
            for &i in &seen {
                b.set(i, true);
            }
            let leaked: BTreeSet<u32> = (0..b.size)
                .filter(|&i| b.has(i) && !seen.contains(&i))
                .collect();
            let expired: Vec<u32> = leaked.intersection(&b.suspects).copied().collect();
            for i in expired {
                b.set(i, false);
            }
            b.suspects = leaked.into_iter().filter(|&i| b.has(i)).collect();
        }
    }

    fn random(&self) -> u64 {
        let Ok(mut s) = self.rng.lock() else { return 0 };
        // xorshift64
        let mut x = *s;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *s = x;
        x
    }

    fn ip_offset(&self, ip: &str) -> Result<u32, AllocError> {
        let addr: Ipv4Addr = ip.parse().map_err(|_| AllocError::NotAnIp)?;
        let n = u32::from(addr);
        let size = self.ips.lock().map(|b| b.size).unwrap_or(0);
        if n < self.base || n - self.base >= size {
            return Err(AllocError::IpNotInRange {
                ip: ip.to_owned(),
                range: self.cidr.clone(),
            });
        }
        Ok(n - self.base)
    }

    fn port_offset(&self, port: u16) -> Result<u32, AllocError> {
        if port < self.port_lo || port > self.port_hi {
            return Err(AllocError::PortNotInRange {
                range: format!("{}-{}", self.port_lo, self.port_hi),
            });
        }
        Ok(u32::from(port - self.port_lo))
    }
}

fn lock_err() -> AllocError {
    AllocError::Internal("allocator lock poisoned".into())
}

impl ServiceAllocator for InMemoryAllocator {
    fn allocate_cluster_ip(&self, dry_run: bool) -> Result<String, AllocError> {
        let r = self.random();
        let mut b = self.ips.lock().map_err(|_| lock_err())?;
        let i = b.pick(r).ok_or(AllocError::IpRangeFull)?;
        if !dry_run {
            b.set(i, true);
            b.suspects.remove(&i);
        }
        Ok(Ipv4Addr::from(self.base + i).to_string())
    }

    fn reserve_cluster_ip(&self, ip: &str, dry_run: bool) -> Result<(), AllocError> {
        let i = self.ip_offset(ip)?;
        let mut b = self.ips.lock().map_err(|_| lock_err())?;
        if b.has(i) {
            return Err(AllocError::IpAllocated);
        }
        if !dry_run {
            b.set(i, true);
        }
        Ok(())
    }

    fn release_cluster_ip(&self, ip: &str) {
        if let Ok(i) = self.ip_offset(ip)
            && let Ok(mut b) = self.ips.lock()
        {
            b.set(i, false);
            b.suspects.remove(&i);
        }
    }

    fn allocate_node_port(&self, dry_run: bool) -> Result<u16, AllocError> {
        let r = self.random();
        let mut b = self.ports.lock().map_err(|_| lock_err())?;
        let i = b.pick(r).ok_or(AllocError::PortRangeFull)?;
        if !dry_run {
            b.set(i, true);
            b.suspects.remove(&i);
        }
        u16::try_from(u32::from(self.port_lo) + i).map_err(|_| AllocError::PortRangeFull)
    }

    fn reserve_node_port(&self, port: u16, dry_run: bool) -> Result<(), AllocError> {
        let i = self.port_offset(port)?;
        let mut b = self.ports.lock().map_err(|_| lock_err())?;
        if b.has(i) {
            return Err(AllocError::PortAllocated);
        }
        if !dry_run {
            b.set(i, true);
        }
        Ok(())
    }

    fn release_node_port(&self, port: u16) {
        if let Ok(i) = self.port_offset(port)
            && let Ok(mut b) = self.ports.lock()
        {
            b.set(i, false);
            b.suspects.remove(&i);
        }
    }

    fn service_cidr(&self) -> &str {
        &self.cidr
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> InMemoryAllocator {
        // 10.0.0.0/29: usable .1-.6; .1 reserved for the kubernetes Service.
        InMemoryAllocator::new("10.0.0.3/29", 30000..=30002)
            .unwrap()
            .with_seed(7)
    }

    #[test]
    fn allocates_every_ip_but_the_first_then_is_full() {
        let a = small();
        assert_eq!(a.cidr(), "10.0.0.0/29");
        let mut got: Vec<String> = (0..5)
            .map(|_| a.allocate_cluster_ip(false).unwrap())
            .collect();
        got.sort();
        assert_eq!(
            got,
            ["10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"]
        );
        assert_eq!(a.allocate_cluster_ip(false), Err(AllocError::IpRangeFull));
        a.reserve_cluster_ip("10.0.0.1", false).unwrap();
        assert_eq!(
            a.reserve_cluster_ip("10.0.0.1", false),
            Err(AllocError::IpAllocated)
        );
        a.release_cluster_ip("10.0.0.4");
        assert_eq!(a.allocate_cluster_ip(false).unwrap(), "10.0.0.4");
    }

    #[test]
    fn reserve_errors() {
        let a = small();
        assert_eq!(
            a.reserve_cluster_ip("10.0.0.7", false)
                .unwrap_err()
                .to_string(),
            "the provided IP (10.0.0.7) is not in the valid range. The range of valid IPs is 10.0.0.0/29"
        );
        assert_eq!(
            a.reserve_cluster_ip("nope", false),
            Err(AllocError::NotAnIp)
        );
        assert_eq!(
            a.reserve_node_port(80, false).unwrap_err().to_string(),
            "provided port is not in the valid range. The range of valid ports is 30000-30002"
        );
    }

    #[test]
    fn dry_run_consumes_nothing() {
        let a = small();
        a.allocate_cluster_ip(true).unwrap();
        a.reserve_cluster_ip("10.0.0.2", true).unwrap();
        a.allocate_node_port(true).unwrap();
        a.reserve_node_port(30001, true).unwrap();
        assert_eq!(a.used(), (0, 0));
    }

    #[test]
    fn node_ports() {
        let a = small();
        let mut got: Vec<u16> = (0..3)
            .map(|_| a.allocate_node_port(false).unwrap())
            .collect();
        got.sort_unstable();
        assert_eq!(got, [30000, 30001, 30002]);
        assert_eq!(a.allocate_node_port(false), Err(AllocError::PortRangeFull));
        assert_eq!(
            a.reserve_node_port(30001, false).unwrap_err().to_string(),
            "provided port is already allocated"
        );
    }

    #[test]
    fn default_range_prefers_the_upper_band() {
        let a = InMemoryAllocator::new("10.96.0.0/12", 30000..=32767)
            .unwrap()
            .with_seed(1);
        for _ in 0..50 {
            let ip: Ipv4Addr = a.allocate_cluster_ip(false).unwrap().parse().unwrap();
            assert!(
                u32::from(ip) >= u32::from(Ipv4Addr::new(10, 96, 1, 1)),
                "{ip}"
            );
            let port = a.allocate_node_port(false).unwrap();
            assert!((30086..=32767).contains(&port), "{port}");
        }
    }

    #[test]
    fn repair_marks_stored_and_frees_leaks_after_grace() {
        let a = small();
        let leaked = a.allocate_cluster_ip(false).unwrap();
        a.repair(["10.0.0.5"], [30000]);
        assert_eq!(a.used(), (2, 1));
        assert_eq!(
            a.reserve_cluster_ip("10.0.0.5", false),
            Err(AllocError::IpAllocated)
        );
        // Second repair: the leaked IP is still unused, so it is freed.
        a.repair(["10.0.0.5"], [30000]);
        assert_eq!(a.used(), (1, 1));
        a.reserve_cluster_ip(&leaked, false).unwrap();
    }
}
