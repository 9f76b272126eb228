//! House rules, checked as tests so `cargo test --workspace` enforces them.

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::{Path, PathBuf};

    use crate::util::root;

    /// Crates allowed to read clocks (they also carry a local `allow(clippy::disallowed_methods)`).
    const CLOCK_CRATES: &[&str] = &["dplay-runtime", "dplay-sim", "dplay-cli", "dplay-bench", "dplay-web"];
    /// Split a module before it passes this many lines (STYLE.md §6).
    const MAX_LINES: usize = 1000;

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    rust_files(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    fn is_test_file(path: &Path) -> bool {
        path.components().any(|c| c.as_os_str() == "tests")
            || path.file_name().is_some_and(|n| n == "tests.rs" || n == "testutil.rs")
    }

    fn crate_dirs() -> Vec<PathBuf> {
        let mut dirs: Vec<_> = fs::read_dir(root().join("crates"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        dirs
    }

    #[test]
    fn every_crate_says_what_it_does() {
        for dir in crate_dirs() {
            let lib = dir.join("src/lib.rs");
            let main = dir.join("src/main.rs");
            let file = if lib.exists() { lib } else { main };
            let text = fs::read_to_string(&file).unwrap();
            assert!(
                text.trim_start().starts_with("//!"),
                "{} must start with a //! crate doc",
                file.display()
            );
        }
    }

    #[test]
    fn only_io_crates_read_clocks() {
        for dir in crate_dirs() {
            let name = dir.file_name().unwrap().to_string_lossy().to_string();
            if CLOCK_CRATES.contains(&name.as_str()) {
                continue;
            }
            let mut files = Vec::new();
            rust_files(&dir.join("src"), &mut files);
            // Tests and doc examples may take one base instant to build `now` values from; the
            // rule is for the protocol code itself.
            for file in files.into_iter().filter(|f| !is_test_file(f)) {
                let text: String = fs::read_to_string(&file)
                    .unwrap()
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .collect::<Vec<_>>()
                    .join("\n");
                for needle in ["Instant::now", "SystemTime::now", "std::net::UdpSocket", "std::thread::spawn"]
                {
                    assert!(
                        !text.contains(needle),
                        "{} uses {needle}: protocol crates are sans-IO",
                        file.display()
                    );
                }
            }
        }
    }

    #[test]
    fn files_stay_small() {
        let mut files = Vec::new();
        for dir in crate_dirs() {
            rust_files(&dir, &mut files);
        }
        rust_files(&root().join("xtask"), &mut files);
        for file in files {
            let lines = fs::read_to_string(&file).unwrap().lines().count();
            assert!(lines <= MAX_LINES, "{} has {lines} lines; split it (limit {MAX_LINES})", file.display());
        }
    }

    #[test]
    fn no_bare_todo() {
        let mut files = Vec::new();
        for dir in crate_dirs() {
            rust_files(&dir, &mut files);
        }
        for file in files {
            let text = fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                let l = line.trim_start();
                assert!(
                    !(l.starts_with("// TODO") || l.starts_with("// FIXME") || l.starts_with("// XXX")),
                    "{}:{} has a TODO without an issue; file an issue and cite it",
                    file.display(),
                    n + 1
                );
            }
        }
    }

    #[test]
    fn ci_runs_the_readme_command() {
        let ci = fs::read_to_string(root().join(".ci/run")).unwrap();
        let readme = fs::read_to_string(root().join("README.md")).unwrap();
        assert!(ci.contains("cargo xtask ci"));
        assert!(readme.contains("cargo xtask ci"));
    }
}
