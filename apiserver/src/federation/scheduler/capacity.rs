//! V1's capacity estimate: how many more replicas of a pod template a
//! cluster can hold, from its available CPU and memory. Pure: no I/O.

use super::snapshot::ClusterSnapshot;

/// Replicas that fit in `cluster`'s available CPU and memory when each
/// replica requests `cpu_millis` and `memory_bytes` (0 = not requested).
/// `None` (unbounded) when nothing is requested or the cluster reports no
/// figure for a requested resource; never negative.
pub fn replicas_fitting(
    cluster: &ClusterSnapshot,
    cpu_millis: i64,
    memory_bytes: i64,
) -> Option<i64> {
    let by = |available: Option<i64>, per_replica: i64| {
        (per_replica > 0)
            .then_some(available)
            .flatten()
            .map(|a| a.max(0) / per_replica)
    };
    match (
        by(cluster.available_cpu_millis, cpu_millis),
        by(cluster.available_memory_bytes, memory_bytes),
    ) {
        (Some(c), Some(m)) => Some(c.min(m)),
        (one, other) => one.or(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scarcer_resource_bounds() {
        let c = ClusterSnapshot {
            available_cpu_millis: Some(3500),
            available_memory_bytes: Some(1 << 30),
            ..ClusterSnapshot::default()
        };
        assert_eq!(replicas_fitting(&c, 500, 0), Some(7));
        assert_eq!(replicas_fitting(&c, 500, 256 << 20), Some(4));
        assert_eq!(replicas_fitting(&c, 0, 0), None);
        let unknown = ClusterSnapshot::default();
        assert_eq!(replicas_fitting(&unknown, 500, 1), None);
        let negative = ClusterSnapshot {
            available_cpu_millis: Some(-10),
            ..ClusterSnapshot::default()
        };
        assert_eq!(replicas_fitting(&negative, 100, 0), Some(0));
    }
}
