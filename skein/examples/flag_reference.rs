//! Prints the Markdown reference of every `skein` flag (`docs/flags.md`);
//! run through `bash hack/flags.sh`.

fn main() {
    print!("{}", skein::config::flag_reference());
}
