//! One question's card: its prompt, options and the free-text answer with
//! its rune counter (W4, W4a).

use clarify_core::{MAX_TEXT_RUNES, Question, rune_count};
use leptos::prelude::*;

use super::Edit;
use super::draft::Draft;
use crate::html;

/// The server's rendering of the bundle's texts, by key.
pub(super) type Html = StoredValue<std::collections::BTreeMap<String, String>>;

/// One question: prompt, options and the free-text answer.
#[component]
pub(super) fn Card(
    question: Question,
    html: Html,
    index: usize,
    count: usize,
    draft: Memo<Draft>,
    edit: Callback<Edit>,
    pick: Callback<String>,
    over: Memo<bool>,
) -> impl IntoView {
    let text = move || draft.with(|d| d.text.get(index).cloned().unwrap_or_default());
    let runes = move || draft.with(|d| d.text.get(index).map_or(0, |t| rune_count(t)));
    let this_over = move || runes() > MAX_TEXT_RUNES;
    let Question {
        question_id,
        title,
        prompt,
        options,
        multi_select,
        default_option_id,
        ..
    } = question;
    let rendered = |key: &str, text: &str| html.with_value(|h| html::of(h, key, text));
    let heading = if title.is_empty() {
        format!("Question {} of {count}", index + 1)
    } else {
        rendered(&format!("{question_id}.title"), &title)
    };
    let prompt = rendered(&format!("{question_id}.prompt"), &prompt);
    let options = options
        .iter()
        .enumerate()
        .map(|(n, o)| {
            let id = o.option_id.clone();
            let label = rendered(&id, &o.label);
            let description = (!o.description.is_empty())
                .then(|| rendered(&format!("{id}.description"), &o.description));
            let id_click = id.clone();
            let pressed =
                Memo::new(move |_| draft.with(|d| d.selected.get(index).is_some_and(|s| s.contains(&id))));
            let state = move || if pressed.get() { "true" } else { "false" };
            // A multi-select question's options are checkboxes (several may
            // be on); any other's are toggle buttons (one at a time).
            view! {
                <button
                    type="button"
                    class="option"
                    class:checkbox=multi_select
                    role=multi_select.then_some("checkbox")
                    data-testid=if multi_select { "clarification-checkbox" } else { "clarification-option" }
                    aria-checked=move || multi_select.then(state)
                    aria-pressed=move || (!multi_select).then(state)
                    on:click=move |_| pick.run(id_click.clone())
                >
                    <span class="badge" aria-hidden="true">{n + 1}</span>
                    <span class="label" inner_html=label></span>
                    {(o.option_id == default_option_id)
                        .then(|| {
                            view! {
                                <span class="default-tag" data-testid="clarification-default">
                                    "chosen if nobody answers"
                                </span>
                            }
                        })}
                    {description
                        .map(|d| view! { <span class="description" inner_html=d></span> })}
                </button>
            }
        })
        .collect_view();
    let input_id = format!("clarification-input-{index}");
    let prompt_id = format!("clarification-prompt-{index}");
    view! {
        <div class="card" data-testid="clarification-card">
            <h3 class="question-title" inner_html=heading></h3>
            <div
                class="prompt markdown"
                id=prompt_id.clone()
                data-testid="clarification-prompt"
                inner_html=prompt
            ></div>
            {multi_select
                .then(|| view! { <p class="hint" data-testid="clarification-multi-hint">"Choose all that apply."</p> })}
            <div class="options" role="group" aria-labelledby=prompt_id>{options}</div>
            <label for=input_id.clone()>"Or answer in your own words"</label>
            // No maxLength: the rune count below is the guard (W4a).
            <textarea
                id=input_id
                data-testid="clarification-input"
                rows="3"
                aria-describedby="clarification-rune-counter clarification-rune-status"
                aria-invalid=move || if this_over() { "true" } else { "false" }
                prop:value=text
                on:input=move |ev| {
                    let value = event_target_value(&ev);
                    edit.run(Box::new(move |d| d.type_text(index, value)));
                }
            ></textarea>
            // Not a live region: announcing every keystroke would drown the
            // typing; the status below speaks when the limit is crossed.
            <span
                id="clarification-rune-counter"
                data-testid="clarification-rune-counter"
                class="counter"
                class:over=this_over
            >
                {move || format!("{} / {MAX_TEXT_RUNES}", runes())}
            </span>
            <div id="clarification-rune-status" aria-live="polite">
                <Show when=move || over.get()>
                    <p class="error" data-testid="clarification-rune-error">
                        {move || {
                            // Name the questions, since the one over the limit
                            // may not be the card on screen.
                            let which = draft
                                .with(Draft::over_questions)
                                .iter()
                                .map(|i| (i + 1).to_string())
                                .collect::<Vec<_>>()
                                .join(", ");
                            let subject = if count > 1 {
                                format!("Answer {which} is too long")
                            } else {
                                "Too long".to_owned()
                            };
                            format!("{subject}: at most {MAX_TEXT_RUNES} characters.")
                        }}
                    </p>
                </Show>
            </div>
        </div>
    }
}
