//! The command line as a person meets it: each tool command's `--help` shows its own
//! options first, the few global flags a tool uses, no server flags, and examples
//! that run as shown from a clone of this repository.

use std::path::Path;

use test_support::Binary;

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

/// Every tool's command, from the one list of tools.
fn commands() -> Vec<&'static str> {
    context_loader::tools::commands()
        .into_iter()
        .map(|(_, command)| command)
        .collect()
}

fn help(command: &str) -> String {
    let (code, stdout, stderr) = BIN.run_cli(&[command, "--help"], None);
    assert_eq!(code, 0, "{stderr}");
    stdout
}

#[test]
fn tool_help_shows_its_own_options_first_and_no_server_flags() {
    for command in commands() {
        let text = help(command);
        let options = text.find("\nOptions:").expect("own options");
        let configuration = text.find("\nConfiguration:").expect("tool flags");
        assert!(options < configuration, "{command}: {text}");
        for server_flag in ["--max-input-bytes", "--log-format", "--walk-timeout-ms"] {
            assert!(!text.contains(server_flag), "{command} shows {server_flag}");
        }
        // No empty `[env: X=]` when the variable is unset.
        assert!(!text.contains("=]"), "{command}: {text}");
    }
    // The server flags are where servers are started.
    assert!(help("stdio").contains("--max-input-bytes"));
    assert!(help("http").contains("--walk-timeout-ms"));
    // Hidden from a tool's help, still accepted there.
    let (code, _, stderr) = BIN.run_cli(&["count", "--max-input-bytes", "3", "hello"], None);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("INPUT_TOO_LARGE"), "{stderr}");
}

#[test]
fn every_tool_command_shows_examples_that_run_here() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let bin_dir = Path::new(BIN.path()).parent().expect("bin dir");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for command in commands() {
        let text = help(command);
        let examples: Vec<&str> = text
            .split("Examples (from a clone of this repository):\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{command}: no examples\n{text}"))
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .collect();
        assert!(!examples.is_empty(), "{command}");
        for example in examples {
            let out = std::process::Command::new("sh")
                .args(["-c", example])
                .current_dir(&workspace)
                .env("PATH", &path)
                .output()
                .expect("sh");
            assert!(
                out.status.success(),
                "`{example}` failed:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// `--budget -5` names the flag and its bad value, instead of clap's advice to pass
/// `-- -5` (which does not work either).
#[test]
fn a_negative_number_is_a_bad_value_not_an_unknown_flag() {
    let (code, _, stderr) = BIN.run_cli(&["load", "--budget", "-5"], None);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("invalid value '-5' for '--budget"),
        "{stderr}"
    );
    assert!(!stderr.contains("-- -5"), "{stderr}");
}

/// One exit-code convention, whatever the command: 2 for anything wrong with the
/// flags or the files they name (clap's usage errors, a models file, an auth token
/// file, a bad stdio limit), 1 for a tool's error.
#[test]
fn exit_codes_follow_one_convention() {
    let cases: [(&[&str], i32); 6] = [
        (&["count", "--bogus"], 2),
        (
            &["--models-file", "/nonexistent/models.json", "count", "hi"],
            2,
        ),
        (&["http", "--auth-token-file", "/nonexistent/token"], 2),
        (&["stdio", "--max-json-values", "0"], 2),
        (&["count", "--model", "gpt4o", "hi"], 1),
        (&["count", "hi"], 0),
    ];
    for (args, expected) in cases {
        let (code, _, stderr) = BIN.run_cli(args, Some(""));
        assert_eq!(code, expected, "{args:?}: {stderr}");
    }
    assert!(
        help("count").contains("") && {
            let (_, stdout, _) = BIN.run_cli(&["--help"], None);
            stdout.contains("Exit codes: 0 success; 1 a tool's error")
        }
    );
}

/// A tool error on the command line says what to do in command-line words: commands
/// and flags, not MCP tool and argument names; fit-messages and assemble, which take
/// no text argument, do not suggest one.
#[test]
fn errors_suggest_commands_and_flags() {
    let (code, _, stderr) =
        BIN.run_cli(&["--specs-dir", "/nonexistent/specs", "spec-tokens"], None);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("suggestion: Pass --specs-dir DIR"),
        "{stderr}"
    );
    let (code, _, stderr) = BIN.run_cli(&["files", "no/such/folder"], None);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("Run context-loader files with a parent folder"),
        "{stderr}"
    );
    assert!(!stderr.contains("Call file-tokens"), "{stderr}");
    for command in ["fit-messages", "assemble"] {
        let (code, _, stderr) = BIN.run_cli(&[command, "/nonexistent/input.json"], None);
        assert_eq!(code, 1, "{stderr}");
        assert!(!stderr.contains("as an argument"), "{command}: {stderr}");
    }
}

/// `files latin1.txt` used to say "0 files" and exit 0 without naming the file or why.
#[test]
fn a_named_file_that_is_not_read_is_named_with_the_reason() {
    let dir = test_support::TempTree::new("cl-cli-latin1");
    dir.write("latin1.txt", b"caf\xe9\n");
    let root = dir.arg().to_string();
    for command in ["files", "load"] {
        let (code, _, stderr_or_out) = {
            let (code, stdout, stderr) =
                BIN.run_cli(&["--root", &root, command, "latin1.txt"], None);
            (code, stdout.clone(), stdout + &stderr)
        };
        assert_eq!(code, 0, "{stderr_or_out}");
        assert!(
            stderr_or_out.contains("latin1.txt: not valid UTF-8"),
            "{command}: {stderr_or_out}"
        );
    }
}
