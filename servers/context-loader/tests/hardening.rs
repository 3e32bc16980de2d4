//! Issue 40 (hardening, round 3) rows that have no other home: what a client of the
//! file tools can never be handed.

use serde_json::{Value, json};
use test_support::{ALL, Binary, call, structured};

const BIN: Binary = Binary::new(env!("CARGO_BIN_EXE_context-loader"));

/// M5: credentials the denylist missed, each with a marker that must never reach an
/// answer: walked (with `hidden`), named, or loaded on the CLI.
const CREDENTIALS: &[&str] = &[
    ".claude/.credentials.json",
    ".claude.json",
    ".config/containers/auth.json",
    ".config/gcloud/access_tokens.db",
    ".config/rclone/rclone.conf",
    ".m2/settings.xml",
    "gradle.properties",
    ".my.cnf",
    ".yarnrc.yml",
    "client_secret_1234.apps.googleusercontent.com.json",
    "token.json",
    ".bash_history",
    ".zsh_history",
    ".local/share/fish/fish_history",
    ".password-store/github.gpg",
];

#[tokio::test]
async fn the_credentials_round_2_missed_are_never_loaded_named_or_walked() {
    let tree = tempfile::tempdir().expect("temp dir");
    let root = tree.path();
    for (i, path) in CREDENTIALS.iter().enumerate() {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(file, format!("token = sk-leak-{i}\n")).expect("write");
    }
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").expect("write");
    let root_arg = root.display().to_string();
    let named: Vec<&str> = CREDENTIALS.to_vec();
    for transport in ALL {
        let conn = BIN.connect(transport, &["--root", &root_arg]).await;
        for arguments in [json!({"hidden": true}), json!({"paths": named})] {
            let loaded = call(&conn.client, "load-files", arguments.clone()).await;
            let answer: &Value = structured(&loaded);
            assert!(
                !answer.to_string().contains("sk-leak"),
                "{transport:?} {arguments}: {answer}"
            );
        }
        let measured = call(&conn.client, "file-tokens", json!({"hidden": true})).await;
        let files: Vec<&str> = structured(&measured)["files"]
            .as_array()
            .expect("files")
            .iter()
            .filter_map(|f| f["path"].as_str())
            .collect();
        assert_eq!(files, ["src/main.rs"], "{transport:?}");
    }
    let mut args = vec!["--root", root_arg.as_str(), "load", "--hidden", "."];
    args.extend(CREDENTIALS);
    let (code, stdout, stderr) = BIN.run_cli(&args, None);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !stdout.contains("sk-leak") && !stderr.contains("sk-leak"),
        "{stdout}"
    );
}
