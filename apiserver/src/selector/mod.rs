//! Label and field selectors (kubectl `-l` / `--field-selector` syntax).
