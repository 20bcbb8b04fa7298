//! Admission (placeholder).
