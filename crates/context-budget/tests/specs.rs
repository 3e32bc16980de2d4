//! The spec store against real folders on disk: discovery, broken specs that must
//! not break a listing, the safety rules (nothing outside the root is read), the
//! cache, and the listing's filters and sums.

use context_budget::spec::{
    SortOrder, SpecError, SpecListing, SpecQuery, SpecReport, SpecStore, SpecTokens,
};
use context_budget::{Catalog, Tokenizer};
use context_budget::{ScanControl, Unobserved};
use test_support::TempTree;

const README: &str = "---\nstatus: planned\n---\n# Token engine\n\nCount tokens exactly.\n\n```rust\nfn count() {}\n```\n";
const DESIGN: &str = "# Design\n\n| part | job |\n|---|---|\n| bpe | merge |\n\nMore prose here.\n";

fn fixture(tag: &str) -> TempTree {
    let dir = TempTree::new(&format!("cb-specs-{tag}"));
    dir.write("specs/059-token-engine/README.md", README);
    dir.write("specs/059-token-engine/DESIGN.md", DESIGN);
    dir.write(
        "specs/059-token-engine/TESTING.md",
        "# Testing\n\nDifferential tests.\n",
    );
    dir.write(
        "specs/059-token-engine/diagram.png",
        b"\x89PNG\r\n\x1a\n\0\0",
    );
    dir.write(
        "specs/1593-large/README.md",
        "# Large\n\n".to_string() + &"A sentence of prose. ".repeat(400),
    );
    dir.write(
        "specs/archived/012-old-plan/README.md",
        "---\nstatus: archived\n---\n# Old\n",
    );
    dir.write(
        "specs/070-no-frontmatter/README.md",
        "# No frontmatter\n\nStill a spec.\n",
    );
    dir.write(
        "specs/071-bad-yaml/README.md",
        "---\nstatus: [unclosed\n---\n# Bad YAML\n",
    );
    dir.write("specs/072-latin1/README.md", b"# Caf\xe9\n");
    dir.write("specs/073-binary-readme/README.md", b"\0\0\0\0");
    dir.write("specs/074-no-readme/NOTES.md", "# Only notes\n");
    dir.write("specs/notes.txt", "not a spec");
    dir
}

fn gpt4() -> context_budget::ResolvedModel<'static> {
    Catalog::builtin().resolve("gpt-4").expect("gpt-4")
}

fn query(spec: Option<&str>) -> SpecQuery {
    SpecQuery {
        spec_path: spec.map(str::to_string),
        ..SpecQuery::default()
    }
}

fn report(store: &SpecStore, q: &SpecQuery) -> Result<SpecReport, SpecError> {
    match store.spec_tokens(q, &gpt4(), &Unobserved)? {
        SpecTokens::Spec(r) => Ok(*r),
        SpecTokens::Listing(_) => panic!("expected one spec"),
    }
}

fn listing(store: &SpecStore, q: &SpecQuery) -> SpecListing {
    match store.spec_tokens(q, &gpt4(), &Unobserved).expect("listing") {
        SpecTokens::Listing(l) => *l,
        SpecTokens::Spec(_) => panic!("expected a listing"),
    }
}

#[test]
fn one_spec_readme_only_then_with_sub_specs() {
    let dir = fixture("one");
    let store = SpecStore::new(dir.join("specs"));
    let readme = report(&store, &query(Some("59"))).expect("spec 59");
    assert_eq!(readme.spec, "059-token-engine");
    assert_eq!(readme.scope, "readme");
    assert_eq!(readme.title.as_deref(), Some("Token engine"));
    assert_eq!(readme.status.as_deref(), Some("planned"));
    assert_eq!(readme.total, Tokenizer::Cl100kBase.count(README) as u64);
    assert_eq!(readme.files.len(), 1);
    let excluded: Vec<&str> = readme
        .excluded_sub_specs
        .iter()
        .map(|f| f.path.as_str())
        .collect();
    assert_eq!(
        excluded,
        ["DESIGN.md", "TESTING.md"],
        "paths are relative to the spec folder, as LeanSpec answers"
    );
    assert!(
        readme
            .notes
            .iter()
            .any(|n| n.contains("diagram.png") && n.contains("not Markdown"))
    );

    let full = report(
        &store,
        &SpecQuery {
            include_sub_specs: true,
            detailed: true,
            ..query(Some("059-token-engine"))
        },
    )
    .expect("full");
    assert_eq!(full.scope, "readme_and_sub_specs");
    assert_eq!(full.files.len(), 3);
    assert_eq!(full.total, full.files.iter().map(|f| f.tokens).sum::<u64>());
    let breakdown = full.breakdown.expect("detailed");
    assert_eq!(
        breakdown.total(),
        full.total,
        "the breakdown adds up exactly"
    );
    assert!(breakdown.code > 0 && breakdown.tables > 0 && breakdown.frontmatter > 0);
    let performance = full.performance.expect("detailed");
    assert_eq!(performance.effectiveness, 100);
    assert_eq!(full.context_window, Some(8192));
}

#[test]
fn a_sub_spec_file_by_number_and_name() {
    let dir = fixture("file");
    let store = SpecStore::new(dir.join("specs"));
    for q in [
        "059/DESIGN.md",
        "token-engine/DESIGN.md",
        "059-token-engine/DESIGN.md",
    ] {
        let r = report(&store, &query(Some(q))).expect(q);
        assert_eq!(r.scope, "file");
        assert_eq!(r.total, Tokenizer::Cl100kBase.count(DESIGN) as u64, "{q}");
        assert_eq!(r.files[0].path, "DESIGN.md");
    }
}

#[test]
fn listing_survives_broken_specs_and_reports_each_on_its_row() {
    let dir = fixture("broken");
    let store = SpecStore::new(dir.join("specs"));
    let all = listing(
        &store,
        &SpecQuery {
            sort: SortOrder::Name,
            ..query(None)
        },
    );
    let ids: Vec<&str> = all.specs.iter().map(|r| r.spec.as_str()).collect();
    assert_eq!(
        ids,
        [
            "059-token-engine",
            "070-no-frontmatter",
            "071-bad-yaml",
            "072-latin1",
            "073-binary-readme",
            "074-no-readme",
            "1593-large",
            "archived/012-old-plan"
        ]
    );
    let row = |id: &str| all.specs.iter().find(|r| r.spec == id).expect(id);
    assert!(row("059-token-engine").error.is_none());
    assert!(
        row("070-no-frontmatter").error.is_none(),
        "frontmatter is optional"
    );
    assert!(
        row("070-no-frontmatter")
            .notes
            .iter()
            .any(|n| n.contains("no frontmatter"))
    );
    assert!(
        row("071-bad-yaml")
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("not valid YAML")
    );
    assert!(
        row("071-bad-yaml").total > 0,
        "a spec with bad YAML is still counted"
    );
    assert!(
        row("072-latin1")
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("UTF-8")
    );
    assert!(
        row("073-binary-readme")
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("binary")
    );
    assert!(
        row("074-no-readme")
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("no README.md")
    );
    assert_eq!(all.summary.with_errors, 4);
    assert_eq!(all.summary.specs, 8);
    // A row with an error has no grade, and the summary's levels skip it.
    for broken in [
        "071-bad-yaml",
        "072-latin1",
        "073-binary-readme",
        "074-no-readme",
    ] {
        assert_eq!(row(broken).level, None, "{broken}");
    }
    assert!(row("059-token-engine").level.is_some());
    let graded = all.summary.levels;
    assert_eq!(
        graded.excellent + graded.good + graded.warning + graded.problem,
        4
    );
    assert_eq!(
        all.summary.total_tokens,
        all.specs.iter().map(|r| r.total).sum::<u64>()
    );
    assert_eq!(
        all.summary.largest.as_ref().map(|l| l.spec.as_str()),
        Some("1593-large")
    );
}

#[test]
fn listing_sorts_filters_and_limits() {
    let dir = fixture("filters");
    let store = SpecStore::new(dir.join("specs"));
    let by_tokens = listing(&store, &query(None));
    assert_eq!(by_tokens.specs[0].spec, "1593-large");
    assert!(by_tokens.specs.windows(2).all(|w| w[0].total >= w[1].total));

    let small = listing(
        &store,
        &SpecQuery {
            max_tokens: Some(20),
            ..query(None)
        },
    );
    assert!(small.specs.iter().all(|r| r.total <= 20));
    assert!(!small.specs.iter().any(|r| r.spec == "1593-large"));
    let large = listing(
        &store,
        &SpecQuery {
            min_tokens: Some(1000),
            ..query(None)
        },
    );
    let ids: Vec<&str> = large.specs.iter().map(|r| r.spec.as_str()).collect();
    assert_eq!(ids, ["1593-large"]);
    assert_eq!(large.scanned, 8);

    let limited = listing(
        &store,
        &SpecQuery {
            limit: Some(2),
            ..query(None)
        },
    );
    assert_eq!((limited.shown, limited.page.truncated), (2, true));
    assert_eq!(limited.summary.specs, 8, "the summary covers every match");

    let with_subs = listing(
        &store,
        &SpecQuery {
            include_sub_specs: true,
            detailed: true,
            ..query(None)
        },
    );
    let engine = with_subs
        .specs
        .iter()
        .find(|r| r.spec == "059-token-engine")
        .expect("row");
    assert_eq!(engine.files, 3);
    let b = engine.breakdown.expect("detailed rows carry a breakdown");
    assert_eq!(b.total(), engine.total);
    assert_eq!(
        with_subs.summary.breakdown.map(|b| b.total()),
        Some(with_subs.summary.total_tokens)
    );
}

#[test]
fn nothing_outside_the_root_is_read() {
    let dir = fixture("safety");
    dir.write(
        "outside/999-escape/README.md",
        "# Outside\n\nsecret words\n",
    );
    dir.write("outside/secret.md", "# Secret\n");
    let specs = dir.join("specs");
    #[cfg(unix)]
    {
        dir.symlink(dir.join("outside/999-escape"), "specs/999-escape");
        dir.symlink(
            dir.join("outside/secret.md"),
            "specs/059-token-engine/LEAK.md",
        );
        // A link that stays inside the root is followed.
        dir.symlink(specs.join("059-token-engine"), "specs/060-alias");
    }
    let store = SpecStore::new(&specs);
    let all = listing(
        &store,
        &SpecQuery {
            include_sub_specs: true,
            ..query(None)
        },
    );
    assert!(
        !all.specs.iter().any(|r| r.spec == "999-escape"),
        "escaping dir link is skipped"
    );
    assert!(
        all.notes
            .iter()
            .any(|n| n.contains("999-escape") && n.contains("outside")),
        "{:?}",
        all.notes
    );
    let engine = report(
        &store,
        &SpecQuery {
            include_sub_specs: true,
            ..query(Some("59"))
        },
    )
    .expect("59");
    assert!(
        !engine.files.iter().any(|f| f.path.contains("LEAK")),
        "escaping file link is not read"
    );
    assert!(
        engine
            .notes
            .iter()
            .any(|n| n.contains("LEAK.md") && n.contains("outside"))
    );
    assert!(
        all.specs.iter().any(|r| r.spec == "060-alias"),
        "inner links are followed"
    );

    for q in [
        "../outside/secret.md".to_string(),
        "059/../../outside/secret.md".to_string(),
        dir.join("outside/secret.md").display().to_string(),
        "/etc/passwd".to_string(),
    ] {
        assert!(
            matches!(
                report(&store, &query(Some(&q))),
                Err(SpecError::OutsideRoot { .. })
            ),
            "{q}"
        );
    }
    // An absolute path inside the root is fine.
    let inside = specs
        .join("059-token-engine/DESIGN.md")
        .display()
        .to_string();
    assert_eq!(
        report(&store, &query(Some(&inside))).map(|r| r.scope),
        Ok("file")
    );
}

/// Names and the number of specs are bounded by the store itself, before its root
/// is even opened (here it does not exist), whoever calls it.
#[test]
fn over_long_names_and_too_many_specs_are_refused_before_reading() {
    use context_budget::limits::{LimitError, MAX_SPECS_PER_PLAN};
    let store = SpecStore::new("/nonexistent/specs").with_name_limit(8);
    let long = "059-token-engine";
    assert!(matches!(
        report(&store, &query(Some(long))),
        Err(SpecError::Limit(LimitError::NameTooLong {
            field: "specPath",
            ..
        }))
    ));
    let budget = |specs: Vec<String>| store.spec_budget(&specs, 100, &gpt4(), &Unobserved);
    assert!(matches!(
        budget(vec![long.into()]),
        Err(SpecError::Limit(LimitError::NameTooLong {
            field: "specs",
            ..
        }))
    ));
    for count in [0, MAX_SPECS_PER_PLAN + 1] {
        assert!(matches!(
            budget(vec!["59".into(); count]),
            Err(SpecError::Limit(LimitError::SpecCount { .. }))
        ));
    }
    // Within the bounds, the call goes on to the (missing) root.
    assert!(matches!(
        budget(vec!["59".into()]),
        Err(SpecError::RootNotFound { .. })
    ));
}

#[test]
fn errors_for_missing_roots_and_specs() {
    let dir = fixture("errors");
    let missing = SpecStore::new(dir.join("nope"));
    assert!(matches!(
        missing.spec_tokens(&query(None), &gpt4(), &Unobserved),
        Err(SpecError::RootNotFound { .. })
    ));
    let store = SpecStore::new(dir.join("specs"));
    let Err(SpecError::NotFound { closest, .. }) = report(&store, &query(Some("token-engin")))
    else {
        panic!("not found expected");
    };
    assert_eq!(
        closest.first().map(String::as_str),
        Some("059-token-engine")
    );
    assert!(matches!(
        report(&store, &query(Some("59/NOPE.md"))),
        Err(SpecError::FileNotFound { .. })
    ));
    assert!(matches!(
        report(&store, &query(Some("072/README.md"))),
        Err(SpecError::FileUnreadable { .. })
    ));
    // Asked for whole, a spec whose README is not UTF-8, binary or missing fails
    // naming the file, rather than answering "0 tokens".
    for (spec, path, why) in [
        ("72", "072-latin1/README.md", "UTF-8"),
        ("73", "073-binary-readme/README.md", "binary"),
        ("74", "074-no-readme/README.md", "missing"),
        ("073/README.md", "073-binary-readme/README.md", "binary"),
    ] {
        match report(&store, &query(Some(spec))) {
            Err(SpecError::FileUnreadable { path: p, reason }) => {
                assert_eq!(p, path);
                assert!(reason.contains(why), "{spec}: {reason}");
            }
            other => panic!("{spec}: {other:?}"),
        }
    }
}

#[test]
fn unchanged_files_come_from_the_cache_and_changed_ones_are_remeasured() {
    let dir = fixture("cache");
    let store = SpecStore::new(dir.join("specs"));
    let first = listing(&store, &query(None));
    let cached = store.cached_files();
    assert!(cached >= 7, "{cached}");
    let again = listing(&store, &query(None));
    assert_eq!(first, again);
    assert_eq!(store.cached_files(), cached, "a repeat adds nothing");

    // Rewrite with a different size: the key (path, size, mtime) changes.
    let path = dir.write(
        "specs/070-no-frontmatter/README.md",
        "# Now longer\n\n".to_string() + &"word ".repeat(100),
    );
    let changed = listing(&store, &query(None));
    let row = changed
        .specs
        .iter()
        .find(|r| r.spec == "070-no-frontmatter")
        .expect("row");
    assert_eq!(
        row.total,
        Tokenizer::Cl100kBase.count(&std::fs::read_to_string(path).expect("read")) as u64
    );
}

#[test]
fn cancellation_stops_the_scan() {
    struct CancelAtOnce;
    impl ScanControl for CancelAtOnce {
        fn is_cancelled(&self) -> bool {
            true
        }
    }
    let dir = fixture("cancel");
    let store = SpecStore::new(dir.join("specs"));
    assert_eq!(
        store
            .spec_tokens(&query(None), &gpt4(), &CancelAtOnce)
            .err(),
        Some(SpecError::Cancelled)
    );
    assert_eq!(store.cached_files(), 0, "nothing was measured");
}

#[test]
fn progress_reaches_the_total() {
    use std::sync::Mutex;
    struct Record(Mutex<Vec<(usize, usize)>>);
    impl ScanControl for Record {
        fn progress(&self, done: usize, total: usize) {
            self.0.lock().expect("lock").push((done, total));
        }
    }
    let dir = fixture("progress");
    let store = SpecStore::new(dir.join("specs"));
    let record = Record(Mutex::new(Vec::new()));
    store
        .spec_tokens(
            &SpecQuery {
                include_sub_specs: true,
                ..query(None)
            },
            &gpt4(),
            &record,
        )
        .expect("listing");
    let seen = record.0.into_inner().expect("lock");
    let total = seen.last().map(|p| p.1).unwrap_or_default();
    assert!(total >= 9, "{seen:?}");
    assert!(seen.iter().any(|&(done, t)| done == t), "{seen:?}");
}

#[test]
fn budget_over_several_specs() {
    let dir = fixture("budget");
    let store = SpecStore::new(dir.join("specs"));
    let specs: Vec<String> = ["59", "12", "1593", "059"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let readme59 = Tokenizer::Cl100kBase.count(README) as u64;
    let plan = store
        .spec_budget(&specs, readme59 + 20, &gpt4(), &Unobserved)
        .expect("plan");
    assert_eq!(plan.specs.len(), 3, "059 named twice is counted once");
    assert!(plan.notes.iter().any(|n| n.contains("again")));
    assert!(!plan.all_fit);
    assert!(plan.plan.tokens <= plan.budget);
    assert_eq!(plan.specs[0].readme_tokens, readme59);
    assert!(plan.specs[0].full_tokens > readme59);
    assert_eq!(
        plan.total_full,
        plan.specs.iter().map(|s| s.full_tokens).sum::<u64>()
    );
    let generous = store
        .spec_budget(&specs, 1_000_000, &gpt4(), &Unobserved)
        .expect("plan");
    assert!(generous.all_fit && generous.all_fit_readme_only);
    assert_eq!(generous.plan.tokens, generous.total_full);
    assert!(matches!(
        store.spec_budget(&["404".to_string()], 10, &gpt4(), &Unobserved),
        Err(SpecError::NotFound { .. })
    ));
}
