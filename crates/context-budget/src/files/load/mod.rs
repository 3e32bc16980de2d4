//! `load-files`: the files a query reaches, packed into a budget, and proven to fit.
//! [`load_files`] runs the steps in order; [`super::FileStore::load_files`] only hands
//! it the store's cache and limits (a [`Measurer`]).
//!
//! The steps live by idea, each module importing only those listed before it:
//! `attribution` (one count of the packed text, every token to the piece it starts
//! in), `answer` (the answer measured as the model receives it, without building it),
//! `budget` (the budget, the `Reserve` the report around the text takes, and whether
//! every file fits by its bytes alone), `packing` (which files to count and in what
//! order; files read again batch by batch, cut, kept or omitted; then pieces dropped
//! from the end while the whole answer is over); `rank` (a leaf: the orders, and
//! which files others mention) and `auto` (`detail: "auto"`: every file at the
//! detail the budget allows, in order, proven by `packing`; its scan also ranks
//! `order: "mentioned"` at the other details).

mod answer;
mod attribution;
mod auto;
mod budget;
mod packing;
mod rank;

pub use budget::default_budget;

use budget::{Reserve, all_fit_by_bytes, budget};
use packing::{Packing, order, reading};

use super::error::FilesError;
use super::measure::{Measurer, walk_while_loading};
use super::output::LoadedFiles;
use super::pack::{Detail, PackOrder};
use super::query::{FileQuery, LoadRequest};
use super::walk::walk_query;
use crate::ResolvedModel;

/// `load-files`: the files `query` reaches, packed into `request.budget` tokens;
/// `measurer` holds the store's cache and limits and this call's roots and control.
pub(super) fn load_files(
    measurer: &Measurer<'_>,
    query: &FileQuery,
    request: &LoadRequest,
    model: &ResolvedModel<'_>,
) -> Result<LoadedFiles, FilesError> {
    let budget = budget(request, model)?;
    let tokenizer = model.tokenizer();
    let (roots, limits, control) = (measurer.roots, measurer.limits, measurer.control);
    let walked = walk_while_loading(tokenizer, || walk_query(roots, query, limits, control))?;
    let (mut measured, mut skipped) =
        measurer.measure(walked.candidates, reading(request), walked.entries)?;
    skipped.splice(0..0, walked.skipped);
    let reserve = Reserve::of(
        request,
        model,
        roots,
        budget,
        &measured,
        &skipped,
        &walked.excluded,
    )?;
    if request.detail == Detail::Auto {
        let budget = (budget.0, budget.1);
        let (excluded, measured) = (walked.excluded, measured);
        return auto::load_auto(
            measurer, request, model, budget, reserve, &measured, skipped, excluded,
        );
    }
    // A path line is not bounded by its file's bytes: each one is counted.
    let fit_by_bytes = match request.detail {
        Detail::Path | Detail::Auto => (0, false),
        Detail::Full | Detail::Outline => all_fit_by_bytes(&measured, request, tokenizer, &reserve),
    };
    if !fit_by_bytes.1 {
        measurer.count_missing(&mut measured)?;
    }
    // `mentioned` needs every file read for its rank: auto's scan does it.
    let degree = match request.order() {
        PackOrder::Mentioned => auto::mentioned(measurer, &mut measured, &mut skipped)?,
        _ => Vec::new(),
    };
    order(&mut measured, request.order(), &degree);
    let mut packing = Packing::new(request, measurer, (budget.0, reserve), fit_by_bytes);
    packing.pack(measurer, &mut measured, walked.entries, &mut skipped)?;
    packing.finish(model, budget.1, skipped, walked.excluded)
}
