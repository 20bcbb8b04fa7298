//! Pieces of the printed reports that every benchmark shares: machine
//! facts, table cells and verdicts against targets.

use std::fmt::Write as _;

use crate::measure::{Cell, command_line};

/// Ops/s of a cell, with its error count if any, and † when other
/// processes disturbed it.
pub fn ops(cell: &Cell) -> String {
    let mut s = format!("{:.0}", cell.rate());
    if cell.errors > 0 {
        let _ = write!(s, " ({} errors)", cell.errors);
    }
    if cell.others.disturbing() {
        s.push_str(" †");
    }
    s
}

/// `p50 / p99` in milliseconds.
pub fn lat(cell: &Cell) -> String {
    format!(
        "{:.3} / {:.3}",
        cell.quantile_ms(0.5),
        cell.quantile_ms(0.99)
    )
}

/// `PASS`/`MISS` of `measured` against a lower bound `target`, with † when
/// any of `cells` was disturbed.
pub fn verdict(measured: f64, target: f64, cells: &[&Cell]) -> String {
    let mut v = if measured >= target { "PASS" } else { "MISS" }.to_owned();
    if cells.iter().any(|c| c.others.disturbing()) {
        v.push_str(" †");
    }
    v
}

/// The CPU model from /proc/cpuinfo.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// The 1, 5 and 15 minute load averages (what `uptime` prints).
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The machine facts every report starts with: date, nproc, CPU, kernel.
pub fn machine_facts() -> Vec<(&'static str, String)> {
    vec![
        ("date", command_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"])),
        ("nproc", command_line("nproc", &[])),
        ("cpu", cpu_model()),
        ("kernel", command_line("uname", &["-sr"])),
    ]
}

/// Writes a two-column `fact | value` table.
pub fn facts_table(w: &mut String, facts: &[(&str, String)]) {
    let _ = writeln!(w, "| fact | value |\n| --- | --- |");
    for (k, v) in facts {
        let _ = writeln!(w, "| {k} | {v} |");
    }
}

/// One line per cell with errors (`label: N errors, first: …`).
pub fn error_lines<'a>(cells: impl IntoIterator<Item = (String, &'a Cell)>) -> Vec<String> {
    cells
        .into_iter()
        .filter(|(_, cell)| cell.errors > 0)
        .map(|(label, cell)| {
            format!(
                "{label}: {} errors, first: {}",
                cell.errors,
                cell.first_error.as_deref().unwrap_or("?")
            )
        })
        .collect()
}

/// A sentence on what other processes did over the run and how many cells
/// they disturbed (see `measure::Others`).
pub fn noise_line<'a>(
    over_run: crate::measure::Others,
    cells: impl IntoIterator<Item = &'a Cell> + Clone,
) -> String {
    let disturbed = cells
        .clone()
        .into_iter()
        .filter(|c| c.others.disturbing())
        .count();
    let worst_cpu = cells
        .clone()
        .into_iter()
        .map(|c| c.others.cpu)
        .fold(0.0, f64::max);
    let worst_read = cells
        .into_iter()
        .map(|c| c.others.disk_read_mb_s)
        .fold(0.0, f64::max);
    format!(
        "Other processes over the run: {:.0}% of the CPUs, {:.1} MB/s of disk reads \
         (worst cell: {:.0}%, {:.1} MB/s). † marks the {disturbed} cells during which they \
         used more than 10% of the CPUs or read more than 2 MB/s: those numbers are suspect.",
        over_run.cpu * 100.0,
        over_run.disk_read_mb_s,
        worst_cpu * 100.0,
        worst_read,
    )
}
