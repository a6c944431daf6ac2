//! `report`: pages made from JSON reports (`check` or `client --format json`) after the run.

use dsh_conformance::suite::html::{page, PageOptions, CONTRACT_URL};
use std::path::PathBuf;

/// Make one HTML page from one or more JSON reports of `check --format json` or `client --format
/// json`: the root causes per runtime (or client), then a checks × runtimes matrix whose failing
/// cells open the failure and its wire log.
#[derive(clap::Args)]
pub(crate) struct ReportArgs {
    /// The page to write (self-contained: no network, no external assets); `-o/--output` is
    /// another spelling, as in the other subcommands.
    #[arg(long, short = 'o', visible_alias = "output", value_name = "OUT.html")]
    html: PathBuf,
    #[command(flatten)]
    contract: ContractArg,
    /// The JSON reports, one column each, in this order.
    #[arg(required = true, value_name = "REPORT.json")]
    reports: Vec<PathBuf>,
}

/// `--contract URL`, of every command that writes the HTML page.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ContractArg {
    /// Where the page's section links (`URL#sN.M`) find docs/CONTRACT.md. The default is
    /// absolute, this version's copy on docs.rs, so that a page downloaded from CI still links;
    /// give a rendered copy (your repository's) to land on the section, or a path relative to the
    /// page.
    #[arg(long, visible_alias = "contract-url", value_name = "URL", default_value = CONTRACT_URL)]
    contract: String,
}

impl ContractArg {
    /// The page options the command line's flags give.
    pub(crate) fn options(&self) -> PageOptions {
        PageOptions {
            contract: self.contract.clone(),
            ..PageOptions::default()
        }
    }
}

impl ReportArgs {
    pub(crate) fn run(self) -> i32 {
        let mut reports = Vec::new();
        for p in &self.reports {
            let v: serde_json::Value = match std::fs::read_to_string(p)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
            {
                Ok(v) => v,
                Err(e) => {
                    eprintln!("dsh-conformance report: {}: {e}", p.display());
                    return 2;
                }
            };
            if v["schema"] != "dsh-conformance/report/v2" {
                eprintln!(
                    "dsh-conformance report: {}: not a report of `check` or `client --format json` (schema {})",
                    p.display(),
                    v["schema"]
                );
                return 2;
            }
            reports.push(v);
        }
        let html = page(&reports, &self.contract.options());
        if let Err(e) = std::fs::write(&self.html, html) {
            eprintln!(
                "dsh-conformance report: --html {}: {e}",
                self.html.display()
            );
            return 2;
        }
        eprintln!(
            "dsh-conformance report: wrote {} ({} column{})",
            self.html.display(),
            reports.len(),
            if reports.len() == 1 { "" } else { "s" }
        );
        0
    }
}
